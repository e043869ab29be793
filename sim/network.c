/*
 * network.c: the user's own VPC of every region (network.h). Ids are a hash of the cloud,
 * region and zone, in each cloud's alphabet, so that they look like real ones and never
 * collide with the default network's.
 */
#include <stdio.h>
#include <string.h>

#include "core/hash.h"
#include "sim/frontend.h"
#include "sim/network.h"

/* "vpc-" (or the subnet prefix) and n hex digits of a hash of what and region. */
static void make_id(char out[SIM_ID_MAX], const char *prefix, size_t n, enum sim_cloud c,
		    const char *region, const char *what)
{
	char in[256], hex[GC_SHA256_HEX_LEN];

	snprintf(in, sizeof(in), "user-network:%d:%s:%s", (int)c, region, what);
	gc_sha256_hex(in, strlen(in), hex);
	snprintf(out, SIM_ID_MAX, "%s%.*s", prefix, (int)n, hex);
}

static size_t id_len(enum sim_cloud c)
{
	return c == SIM_AWS ? 17 : c == SIM_ALIBABA ? 24 : 8;
}

void sim_user_vpc(enum sim_cloud c, const char *region, char out[SIM_ID_MAX])
{
	make_id(out, "vpc-", id_len(c), c, region, "vpc");
}

void sim_user_subnet(enum sim_cloud c, const char *region, const char *zone, char out[SIM_ID_MAX])
{
	make_id(out, c == SIM_ALIBABA ? "vsw-" : "subnet-", id_len(c), c, region, zone);
}

const char *sim_user_subnet_zone(const struct sim_region *reg, const char *id)
{
	char mine[SIM_ID_MAX];

	for (const char *const *z = reg && id ? reg->zones : NULL; z && *z; z++) {
		sim_user_subnet(reg->cloud, reg->name, *z, mine);
		if (strcmp(mine, id) == 0)
			return *z;
	}
	return NULL;
}

bool sim_user_vpc_is(const struct sim_region *reg, const char *id)
{
	char mine[SIM_ID_MAX];

	if (!reg || !id)
		return false;
	sim_user_vpc(reg->cloud, reg->name, mine);
	return strcmp(mine, id) == 0;
}

json_t *sim_networks_json(bool no_default_vpc)
{
	json_t *all = json_array();

	for (int c = 0; c < SIM_NCLOUDS; c++) {
		const struct sim_region *regs;
		size_t n = sim_catalog_regions((enum sim_cloud)c, &regs);

		for (size_t i = 0; i < n; i++) {
			json_t *subnets = json_object();
			char id[SIM_ID_MAX];

			for (const char *const *z = regs[i].zones; *z; z++) {
				sim_user_subnet((enum sim_cloud)c, regs[i].name, *z, id);
				json_object_set_new(subnets, *z, json_string(id));
			}
			sim_user_vpc((enum sim_cloud)c, regs[i].name, id);
			json_array_append_new(all,
					      json_pack("{s:s, s:s, s:s, s:b, s:o}", "cloud",
							sim_frontend((enum sim_cloud)c)->name,
							"region", regs[i].name, "vpc", id,
							"default_vpc", !no_default_vpc, "subnets",
							subnets));
		}
	}
	return all;
}
