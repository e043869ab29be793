/*
 * plan-render.h: a built plan (core/plan.h) as text or JSON, for `plan` and `apply`.
 *
 * The plan is pure data; showing it is cmd/'s business, with cmd/'s palette
 * (cmd/output.h). Both renderers append to a buffer the caller prints, and escape what
 * came from the cloud.
 */
#ifndef GC_PLAN_RENDER_H
#define GC_PLAN_RENDER_H

#include <stdbool.h>

#include <jansson.h>

#include "core/buf.h"
#include "core/plan.h"
#include "core/spec.h"

/* Text in Terraform's manner (+ create, - terminate, -/+ replace, ~ ignored, with reasons)
 * and a cost line; colour escapes when color is set. Both renderers append to out and
 * return 0, or -1 at out's cap. */
int gc_plan_render_text(struct gc_buf *out, const struct gc_plan *plan, const struct gc_spec *spec,
			bool color);
/* JSON: {"cluster","cloud","region","changes","summary","groups":[...],"cost":{...},
 * "expires_at",...,"hours"}, indented; documented in docs/cli.md. hours (taken; NULL:
 * null) is plan --hours' object, which cmd-plan.c prices. */
int gc_plan_render_json(struct gc_buf *out, const struct gc_plan *plan, const struct gc_spec *spec,
			json_t *hours);

#endif
