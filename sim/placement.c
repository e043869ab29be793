/*
 * placement.c: the world's placement resources, for placement: cluster
 * (docs/internals/fabric.md): EC2 placement groups, ECS deployment sets and CVM HPC
 * clusters. The frontends keep the cloud's rules; this keeps the records. World locked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "sim/world.h"

struct sim_placement *sim_world_create_placement(struct sim_world *w, enum sim_cloud c,
						 const char *region, const char *zone,
						 const char *id_prefix, const char *name,
						 const char *strategy, const struct sim_tags *tags)
{
	struct sim_placement *pl = gc_xcalloc(1, sizeof(*pl));

	pl->cloud = c;
	snprintf(pl->region, sizeof(pl->region), "%s", region ? region : "");
	snprintf(pl->zone, sizeof(pl->zone), "%s", zone ? zone : "");
	sim_world_new_id(w, c, id_prefix, pl->id);
	snprintf(pl->name, sizeof(pl->name), "%s", name ? name : "");
	snprintf(pl->strategy, sizeof(pl->strategy), "%s", strategy ? strategy : "");
	if (tags)
		sim_tags_copy(&pl->tags, tags);
	pl->created_wall = sim_world_wall(w);
	GC_ALLOC_GROW(w->placements, w->n_placements + 1, w->alloc_placements);
	w->placements[w->n_placements++] = pl;
	return pl;
}

struct sim_placement *sim_world_placement(struct sim_world *w, enum sim_cloud c, const char *region,
					  const char *id_or_name)
{
	for (size_t i = 0; id_or_name && i < w->n_placements; i++) {
		struct sim_placement *pl = w->placements[i];

		if (pl->cloud == c && (!region || !strcmp(pl->region, region)) &&
		    (!strcmp(pl->id, id_or_name) || !strcmp(pl->name, id_or_name)))
			return pl;
	}
	return NULL;
}

size_t sim_world_placement_members(struct sim_world *w, const struct sim_placement *pl)
{
	size_t n = 0;

	for (size_t i = 0; i < w->n_instances; i++) {
		const struct sim_instance *in = w->instances[i];

		n += in->cloud == pl->cloud && in->state != SIM_TERMINATED &&
			!strcmp(in->placement, pl->id);
	}
	return n;
}

static void placement_free(struct sim_placement *pl)
{
	sim_tags_release(&pl->tags);
	free(pl);
}

void sim_world_delete_placement(struct sim_world *w, struct sim_placement *pl)
{
	for (size_t i = 0; i < w->n_placements; i++)
		if (w->placements[i] == pl) {
			memmove(&w->placements[i], &w->placements[i + 1],
				(w->n_placements - i - 1) * sizeof(*w->placements));
			w->n_placements--;
			break;
		}
	placement_free(pl);
}

size_t sim_world_list_placements(struct sim_world *w, enum sim_cloud c, const char *region,
				 struct sim_placement ***out)
{
	size_t n = 0;

	*out = gc_xcalloc(w->n_placements ? w->n_placements : 1, sizeof(**out));
	for (size_t i = 0; i < w->n_placements; i++)
		if (w->placements[i]->cloud == c &&
		    (!region || !strcmp(w->placements[i]->region, region)))
			(*out)[n++] = w->placements[i];
	return n;
}

void sim_world_clear_placements(struct sim_world *w)
{
	for (size_t i = 0; i < w->n_placements; i++)
		placement_free(w->placements[i]);
	w->n_placements = 0;
}
