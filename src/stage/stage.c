/*
 * stage.c - the build and lock workflows: one read of the spec feeds the
 * check, the lock's checksum and the build, so what is checked, locked and
 * built is the same file contents.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "envspec/spec.h"
#include "stage/check.h"
#include "stage/stage.h"

int eb_stage_begin(struct eb_stage *s, int tolerate_unparsable, struct eb_diag_list *diags,
		   struct eb_error **err)
{
	struct eb_spec *spec = NULL;
	int r;

	r = eb_check_spec_inputs(s->spec_path, &spec, diags, err);
	if (r < 0)
		return r;
	if (!spec && !tolerate_unparsable) {
		/* what cannot be parsed is the error; findings come from check */
		eb_diag_list_release(diags);
		return eb_error_set(err, EB_EINVALID, "'%s' cannot be parsed", s->spec_path);
	}
	if (spec && (r = eb_lockflow_begin(&s->lf, spec, s->mode, &s->build, err)) < 0) {
		/* the lock's verdict comes first, as it is about the inputs */
		eb_diag_list_release(diags);
		return r;
	}
	return 0;
}

int eb_stage_run_build(struct eb_stage *s, struct eb_diag_list *diags, struct eb_error **err)
{
	size_t nerr = eb_diag_list_count(diags, EB_SEV_ERROR);

	if (nerr || !s->lf.spec)
		return eb_error_set(err, EB_EINVALID, "'%s' has %zu problem%s; nothing was built",
				    s->spec_path, nerr, nerr == 1 ? "" : "s");
	eb_lockflow_labels(&s->lf, &s->build, s->label_revision);
	return eb_build_run(&s->build, &s->rep, diags, err);
}

int eb_stage_record(struct eb_stage *s, struct eb_error **err)
{
	/* the lock records what was built; a partial build (one target)
	 * updates only that target */
	char comp[48];

	eb_layer_compressor_id(&s->build.layer, comp);
	return eb_lockflow_record(&s->lf, &s->rep,
				  eb_layer_compression_name(s->build.layer.compression), comp,
				  &s->written, err);
}

static int build_and_record(struct eb_stage *s, struct eb_diag_list *diags,
			    struct eb_error **err)
{
	int r = eb_stage_run_build(s, diags, err);

	return r < 0 ? r : eb_stage_record(s, err);
}

int eb_stage_build(struct eb_stage *s, struct eb_diag_list *diags, struct eb_error **err)
{
	/* a spec that does not parse is reported by its own findings */
	int r = eb_stage_begin(s, s->mode == EB_LOCK_AUTO, diags, err);

	return r < 0 ? r : build_and_record(s, diags, err);
}

int eb_stage_lock(struct eb_stage *s, struct eb_diag_list *diags, struct eb_error **err)
{
	int r = eb_stage_begin(s, 0, diags, err);

	if (r < 0)
		return r;
	s->before = json_deep_copy(s->lf.lock);
	s->build.output_type = EB_OUTPUT_NONE;
	return build_and_record(s, diags, err);
}

int eb_stage_lock_check(struct eb_stage *s, struct eb_error **err)
{
	struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = NULL;
	int r;

	/* offline: nothing but the files on disk */
	r = eb_spec_load(&spec, s->spec_path, &ignore, err);
	eb_diag_list_release(&ignore);
	if (r < 0)
		return r;
	if (!spec)
		return eb_error_set(err, EB_EINVALID, "'%s' cannot be parsed", s->spec_path);
	if ((r = eb_lockflow_begin(&s->lf, spec, EB_LOCK_INSPECT, NULL, err)) < 0)
		return r;
	return s->lf.existed && s->lf.fresh ? 0 : 1;
}

void eb_stage_end(struct eb_stage *s)
{
	eb_lockflow_end(&s->lf);
	eb_build_report_release(&s->rep);
	json_decref(s->before);
	s->before = NULL;
}
