/*
 * ownproject_name.c - the project's own name and version (see
 * ownproject.h); apart from the sdist writer so that the check front
 * (which links no libarchive or libgit2) can use it.
 */
#include "assemble/ownproject.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pin/requirement.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/toml.h"

int eb_ownproject_is(const char *url)
{
	char *norm;
	int is;

	if (!url)
		return 0;
	if (strncmp(url, "file:", 5) == 0)
		url += 5;
	norm = eb_path_normalize(url);
	is = norm && (!*norm || strcmp(norm, ".") == 0);
	free(norm);
	return is;
}

int eb_ownproject_name(const char *spec_dir, char **name, char **version, struct eb_error **err)
{
	char *path = eb_path_join(spec_dir, "pyproject.toml");
	struct eb_buf b = EB_BUF_INIT;
	struct eb_toml_doc *doc = NULL;
	json_t *proj, *n, *v, *dyn;
	int r;

	*name = *version = NULL;
	if ((r = eb_fs_read_confined(&b, path, spec_dir, 1 << 20, err)) < 0 ||
	    (r = eb_toml_load(&doc, "pyproject.toml", b.ptr, b.len, err)) < 0) {
		eb_error_wrap(err, "the project's own pyproject.toml");
		goto out;
	}
	proj = json_object_get(eb_toml_root(doc), "project");
	n = json_object_get(proj, "name");
	v = json_object_get(proj, "version");
	dyn = json_object_get(proj, "dynamic");
	for (size_t i = 0; json_is_array(dyn) && i < json_array_size(dyn); i++)
		if (json_is_string(json_array_get(dyn, i)) &&
		    strcmp(json_string_value(json_array_get(dyn, i)), "version") == 0)
			v = NULL;
	if (!json_is_string(n) || !json_is_string(v)) {
		r = eb_error_set(err, EB_EINVALID,
				 "the project's pyproject.toml has no static [project] name and "
				 "version [EB255]");
		eb_error_hint(err, "installing the project itself needs [project] name = \"...\" "
				   "and version = \"...\" (not dynamic): the lock pins that version");
		goto out;
	}
	*name = eb_pep503_normalize(json_string_value(n), strlen(json_string_value(n)));
	*version = eb_xstrdup(json_string_value(v));
out:
	eb_toml_free(doc);
	eb_buf_release(&b);
	free(path);
	return r;
}
