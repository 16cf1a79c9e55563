/*
 * progress.h - a layer being written, as a step of the build's progress
 * sink (util/progress.h): the sources call begin before a layer and end
 * after it, and the layer writer's byte counts go to the sink between
 * (what a live display shows); build.c then says what became of each.
 *
 * Ownership: a struct eb_layer_step lives on the caller's stack from
 * begin to end; the sink is borrowed (NULL: every call does nothing).
 *
 * Layering (sources floor): assemble/ may use registry/, python/, lock/,
 * oci/, net/ and the ground floor; it emits events and never prints.
 */
#ifndef EB_ASSEMBLE_PROGRESS_H
#define EB_ASSEMBLE_PROGRESS_H

#include <stdint.h>

#include "oci/layer.h"
#include "util/progress.h"

struct eb_layer_step {
	struct eb_progress *p;
	char key[32];
	char *name;
	uint64_t last; /* bytes at the last event sent */
};

/* Start the step "TARGET: WHAT" and point lo's byte counter at it. */
void eb_layer_step_begin(struct eb_layer_step *s, struct eb_progress *p, const char *target,
			 const char *what, struct eb_layer_options *lo);
/* End it, however it went: build.c reports every layer's verdict once a
 * source has written them (eb_build_progress_layers), so that a source
 * which takes layers from its records without a step is counted too. */
void eb_layer_step_end(struct eb_layer_step *s);

#endif
