/*
 * gpupick.h: a group's `gpus:` ("A100:8") resolved to the instance types of the spec's
 * cloud and region (docs/internals/gpus.md "gpus: in a spec"). The candidates are the
 * cloud's catalogue (facts->gpu_offers) that match; asking the cloud keeps those its
 * instance_type op confirms and its type_zones op offers in the group's zones, priced by
 * the price op for the group's market, cheapest first. The result becomes the group's
 * instance_types (its ordered fallback list): after the types the spec wrote, if any.
 */
#ifndef GC_GPUPICK_H
#define GC_GPUPICK_H

#include <stdbool.h>

struct gc_error;
struct gc_provider;
struct gc_spec;

/* Resolves every group of spec that has gpus. ask_cloud false: the catalogue's matches in
 * its list-price order, no API call (for commands that only need the names). A gpus the
 * region does not offer fails with GC_EINVALID naming FILE:LINE:COL and where it is
 * offered (the cloud's regions that do, when ask_cloud). Idempotent. */
int gc_gpupick_resolve(struct gc_provider *p, struct gc_spec *spec, bool ask_cloud,
		       struct gc_error *err);

#endif
