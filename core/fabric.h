/*
 * fabric.h: a group's fast network between its nodes (interconnect, interfaces) and its
 * cluster placement, resolved against what the instance type offers
 * (docs/internals/fabric.md). Pure functions and one plan-time check; no state.
 */
#ifndef GC_FABRIC_H
#define GC_FABRIC_H

#include "core/error.h"
#include "core/provider.h"
#include "core/spec.h"

/* The interconnect g gets on type f: auto is rdma for 2+ nodes of a type with RDMA
 * interfaces, else standard. Never GC_INTERCONNECT_AUTO. */
enum gc_interconnect gc_fabric_interconnect(const struct gc_spec_group *g,
					    const struct gc_type_facts *f);
/* RDMA interfaces per node of g on type f: 0 on the standard network, else the spec's
 * interfaces or, without it, every one the type has. */
unsigned gc_fabric_interfaces(const struct gc_spec_group *g, const struct gc_type_facts *f);

/* The RDMA interfaces to launch each node of g on type with: gc_fabric_interfaces with the
 * driver's facts of type (cached by the driver); 0 when they cannot be had. */
unsigned gc_fabric_launch_interfaces(struct gc_provider *p, const struct gc_spec_group *g,
				     const char *type);

/* Plan's check of each group's interconnect and interfaces against each of its types:
 * GC_EINVALID with the spec's FILE:LINE:COL of the key at fault. A driver without
 * instance_type (GC_EUNSUPPORTED) skips it. */
int gc_fabric_check_spec(struct gc_provider *p, const struct gc_spec *spec, struct gc_error *err);

#endif
