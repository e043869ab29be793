/*
 * cloudcheck.h: what plan checks against the cloud before anything is created: the
 * spec's region, the zones of each group, each instance type's offering in the zones the
 * group may use, and each image (alias or literal id). A spec that fails here would only
 * fail later, at a launch, after the key pair and security group were made.
 *
 * Errors are GC_EINVALID (or the driver's GC_ENOTFOUND for an image) and start with the
 * spec's FILE:LINE:COL of the value at fault; an operation the cloud's driver lacks
 * (GC_EUNSUPPORTED) skips its check. Life cycle: none, one call per plan
 * (docs/internals/plan.md, "Checks against the cloud").
 */
#ifndef GC_CLOUDCHECK_H
#define GC_CLOUDCHECK_H

#include "core/error.h"
#include "core/provider.h"
#include "core/spec.h"

int gc_cloudcheck_spec(struct gc_provider *p, const struct gc_spec *spec, struct gc_error *err);

#endif
