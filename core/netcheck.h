/*
 * netcheck.h: plan's check of provider.network against the cloud, before anything is
 * created: the VPC exists, and each subnet exists, belongs to that VPC and lies in the zone
 * the spec gives it for. One lookup (ops->network) for the whole spec; a spec without
 * provider.network sends nothing. docs/internals/plan.md, "The network".
 */
#ifndef GC_NETCHECK_H
#define GC_NETCHECK_H

#include "core/error.h"
#include "core/provider.h"
#include "core/spec.h"

/* 0, or -1 with GC_EINVALID and every problem, one a line, each with the spec's
 * FILE:LINE:COL ("c.yaml:9:18: provider.network.subnets.us-east-1a: subnet-0abc is in
 * us-east-1b, not us-east-1a"); a failed lookup passes its error on. */
int gc_netcheck_spec(struct gc_provider *p, const struct gc_spec *spec, struct gc_error *err);

#endif
