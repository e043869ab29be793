/*
 * fabric.c: a group's interconnect and interfaces against its types (fabric.h).
 */
#include <stdio.h>

#include "core/fabric.h"
#include "core/log.h"

enum gc_interconnect gc_fabric_interconnect(const struct gc_spec_group *g,
					    const struct gc_type_facts *f)
{
	if (g->interconnect != GC_INTERCONNECT_AUTO)
		return g->interconnect;
	return g->count >= 2 && f->rdma_interfaces ? GC_INTERCONNECT_RDMA
						   : GC_INTERCONNECT_STANDARD;
}

unsigned gc_fabric_interfaces(const struct gc_spec_group *g, const struct gc_type_facts *f)
{
	if (gc_fabric_interconnect(g, f) != GC_INTERCONNECT_RDMA)
		return 0;
	return g->interfaces ? g->interfaces : f->rdma_interfaces;
}

unsigned gc_fabric_launch_interfaces(struct gc_provider *p, const struct gc_spec_group *g,
				     const char *type)
{
	struct gc_type_facts f;
	struct gc_error err;

	if (g->interconnect == GC_INTERCONNECT_STANDARD ||
	    (g->count < 2 && !g->interfaces && g->interconnect == GC_INTERCONNECT_AUTO))
		return 0;
	gc_error_init(&err);
	if (gc_provider_instance_type(p, type, &f, &err) < 0) {
		if (err.code != GC_EUNSUPPORTED)
			gc_log_warn(p->log, "%s; group '%s' launches without RDMA interfaces",
				    err.message, g->name);
		return 0;
	}
	return gc_fabric_interfaces(g, &f);
}

/* "FILE:LINE:COL" of pos, else of the group. */
static void where(char *out, size_t size, const struct gc_spec *spec, const struct gc_spec_group *g,
		  const struct gc_spec_pos *pos)
{
	const struct gc_spec_pos *at = pos->line ? pos : &g->pos;

	snprintf(out, size, "%.256s:%u:%u", spec->file ? spec->file : "spec", at->line, at->col);
}

static int check_type(const struct gc_spec *spec, const struct gc_spec_group *g,
		      const struct gc_type_facts *f, struct gc_error *err)
{
	const char *word = spec->provider.ops && spec->provider.ops->facts &&
			spec->provider.ops->facts->rdma_word
		? spec->provider.ops->facts->rdma_word
		: "RDMA";
	char at[300];

	if (g->interconnect == GC_INTERCONNECT_RDMA && !f->rdma_interfaces) {
		where(at, sizeof(at), spec, g, &g->interconnect_pos);
		return gc_error_set(err, GC_EINVALID,
				    "%s: node_groups '%s': interconnect rdma: instance type '%s' "
				    "has no %s interfaces; choose a type that has them, or "
				    "interconnect standard",
				    at, g->name, f->name, word);
	}
	if (g->interfaces && f->rdma_interfaces && g->interfaces > f->rdma_interfaces) {
		where(at, sizeof(at), spec, g, &g->interfaces_pos);
		return gc_error_set(err, GC_EINVALID,
				    "%s: node_groups '%s': interfaces %u: instance type '%s' takes "
				    "at most %u %s interface%s",
				    at, g->name, g->interfaces, f->name, f->rdma_interfaces, word,
				    f->rdma_interfaces == 1 ? "" : "s");
	}
	if (g->interfaces && !f->rdma_interfaces && g->interconnect == GC_INTERCONNECT_AUTO) {
		where(at, sizeof(at), spec, g, &g->interfaces_pos);
		return gc_error_set(err, GC_EINVALID,
				    "%s: node_groups '%s': interfaces %u: instance type '%s' has "
				    "no %s interfaces",
				    at, g->name, g->interfaces, f->name, word);
	}
	return 0;
}

/* A type with RDMA interfaces that the cloud launches only inside its placement resource
 * (facts->rdma_placement), in a group without placement: cluster. */
static int check_placement(const struct gc_spec *spec, const struct gc_spec_group *g, size_t t,
			   const struct gc_type_facts *f, struct gc_error *err)
{
	const struct gc_provider_facts *pf = spec->provider.ops ? spec->provider.ops->facts : NULL;
	char at[300];

	if (!pf || !pf->rdma_placement || !f->rdma_interfaces ||
	    g->placement == GC_PLACEMENT_CLUSTER)
		return 0;
	where(at, sizeof(at), spec, g, &g->instance_types_pos[t]);
	return gc_error_set(err, GC_EINVALID,
			    "%s: node_groups '%s': instance type '%s' runs only in %s; set "
			    "placement: cluster",
			    at, g->name, f->name, pf->rdma_placement);
}

int gc_fabric_check_spec(struct gc_provider *p, const struct gc_spec *spec, struct gc_error *err)
{
	const struct gc_provider_facts *pf = spec->provider.ops ? spec->provider.ops->facts : NULL;

	for (size_t i = 0; i < spec->n_groups; i++) {
		const struct gc_spec_group *g = &spec->groups[i];
		bool placed = pf && pf->rdma_placement && g->placement != GC_PLACEMENT_CLUSTER;

		if (!placed &&
		    (g->interconnect == GC_INTERCONNECT_STANDARD ||
		     (g->interconnect == GC_INTERCONNECT_AUTO && !g->interfaces)))
			continue;
		for (size_t t = 0; t < g->n_instance_types; t++) {
			struct gc_type_facts f;
			struct gc_error lerr;

			gc_error_init(&lerr);
			if (gc_provider_instance_type(p, g->instance_types[t], &f, &lerr) < 0) {
				if (lerr.code == GC_EUNSUPPORTED)
					return 0;
				if (lerr.code == GC_ECANCELLED) {
					if (err)
						*err = lerr;
					return -1;
				}
				/* an unknown type is check_types' error; others leave it to apply */
				gc_log_warn(p->log,
					    "%s; the interconnect of group '%s' not checked",
					    lerr.message, g->name);
				continue;
			}
			if (check_type(spec, g, &f, err) < 0 ||
			    check_placement(spec, g, t, &f, err) < 0)
				return -1;
		}
	}
	return 0;
}
