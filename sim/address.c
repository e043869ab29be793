/*
 * address.c: the world's Elastic IP addresses, for the nodes of an EC2 group launched with
 * several network interfaces (docs/internals/fabric.md, "A reachable address"). The
 * frontend (sim/aws/ec2-address.c) keeps the cloud's rules; this keeps the records. World
 * locked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "sim/world.h"

struct sim_address *sim_world_create_address(struct sim_world *w, enum sim_cloud c,
					     const char *region, const struct sim_tags *tags)
{
	struct sim_address *a = gc_xcalloc(1, sizeof(*a));
	uint64_t seq = ++w->next_seq;

	a->cloud = c;
	snprintf(a->region, sizeof(a->region), "%s", region ? region : "");
	sim_world_new_id(w, c, "eipalloc-", a->id);
	/* a loopback address like the instances' own, so nothing ever points off the host */
	snprintf(a->public_ip, sizeof(a->public_ip), "127.78.%u.%u", (unsigned)(seq >> 8) & 255,
		 (unsigned)(seq & 255));
	if (tags)
		sim_tags_copy(&a->tags, tags);
	a->created_wall = sim_world_wall(w);
	GC_ALLOC_GROW(w->addresses, w->n_addresses + 1, w->alloc_addresses);
	w->addresses[w->n_addresses++] = a;
	return a;
}

struct sim_address *sim_world_address(struct sim_world *w, enum sim_cloud c, const char *region,
				      const char *id)
{
	for (size_t i = 0; id && i < w->n_addresses; i++) {
		struct sim_address *a = w->addresses[i];

		if (a->cloud == c && (!region || !strcmp(a->region, region)) && !strcmp(a->id, id))
			return a;
	}
	return NULL;
}

struct sim_instance *sim_world_address_on(struct sim_world *w, struct sim_address *a)
{
	struct sim_instance *in;

	if (!a->instance[0])
		return NULL;
	in = sim_world_instance(w, a->cloud, a->instance);
	if (!in || in->state == SIM_TERMINATED) {
		/* EC2 disassociates the address of an instance that terminates */
		a->instance[0] = a->association[0] = a->interface[0] = '\0';
		return NULL;
	}
	return in;
}

struct sim_address *sim_world_address_of(struct sim_world *w, const struct sim_instance *in)
{
	for (size_t i = 0; i < w->n_addresses; i++) {
		struct sim_address *a = w->addresses[i];

		if (a->cloud == in->cloud && !strcmp(a->instance, in->id) &&
		    sim_world_address_on(w, a))
			return a;
	}
	return NULL;
}

static void address_free(struct sim_address *a)
{
	sim_tags_release(&a->tags);
	free(a);
}

void sim_world_delete_address(struct sim_world *w, struct sim_address *a)
{
	for (size_t i = 0; i < w->n_addresses; i++)
		if (w->addresses[i] == a) {
			memmove(&w->addresses[i], &w->addresses[i + 1],
				(w->n_addresses - i - 1) * sizeof(*w->addresses));
			w->n_addresses--;
			break;
		}
	address_free(a);
}

size_t sim_world_list_addresses(struct sim_world *w, enum sim_cloud c, const char *region,
				struct sim_address ***out)
{
	size_t n = 0;

	*out = gc_xcalloc(w->n_addresses ? w->n_addresses : 1, sizeof(**out));
	for (size_t i = 0; i < w->n_addresses; i++)
		if (w->addresses[i]->cloud == c &&
		    (!region || !strcmp(w->addresses[i]->region, region)))
			(*out)[n++] = w->addresses[i];
	return n;
}

void sim_world_clear_addresses(struct sim_world *w)
{
	for (size_t i = 0; i < w->n_addresses; i++)
		address_free(w->addresses[i]);
	w->n_addresses = 0;
}
