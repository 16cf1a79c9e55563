/*
 * pydist.c - releasing what a pinned distribution and a platform's set of
 * them own (assemble/pydist.h).
 */
#include "config.h"

#include <stdlib.h>

#include "assemble/pydist.h"

void eb_pydist_release(struct eb_pydist *d)
{
	free(d->name);
	free(d->display);
	free(d->version);
	free(d->filename);
	free(d->url);
	for (size_t i = 0; i < d->nextras; i++)
		free(d->extras[i]);
	free(d->extras);
	free(d->file);
	for (size_t i = 0; i < d->nremove; i++)
		free(d->remove[i]);
	free(d->remove);
	for (size_t i = 0; i < d->nskip; i++)
		free(d->skip[i]);
	free(d->skip);
	free(d->sdist_filename);
	free(d->sdist_url);
	eb_metadata_release(&d->md);
}

void eb_pyenv_release_dists(struct eb_pyenv *e)
{
	for (size_t i = 0; i < e->n; i++)
		eb_pydist_release(&e->dists[i]);
	free(e->dists);
	e->dists = NULL;
	e->n = 0;
}
