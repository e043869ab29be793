/*
 * network.h: the user's own VPC that every region of every cloud has in the emulator,
 * beside the cloud's default one, and the --no-default-vpc switch that takes the default
 * away (an account whose default VPC was deleted, or never made). Fixed facts, not world
 * state: nothing creates or deletes them, so no lock is needed.
 *
 * The user's VPC has one subnet (an Alibaba vSwitch) per zone of the region; ids are in
 * the cloud's own shape (EC2 vpc-/subnet- and 17 hex digits, ECS vpc-/vsw- and 24, CVM
 * vpc-/subnet- and 8), derived from the cloud, region and zone, so tests can predict
 * them; /state lists them under "networks" (docs/sim.md).
 */
#ifndef GC_SIM_NETWORK_H
#define GC_SIM_NETWORK_H

#include <jansson.h>
#include <stdbool.h>

#include "sim/catalog.h"
#include "sim/world.h"

/* The user's VPC in region. */
void sim_user_vpc(enum sim_cloud c, const char *region, char out[SIM_ID_MAX]);
/* The user's subnet in zone. */
void sim_user_subnet(enum sim_cloud c, const char *region, const char *zone, char out[SIM_ID_MAX]);
/* The zone of the user's subnet id in reg, or NULL when id is not one of them. */
const char *sim_user_subnet_zone(const struct sim_region *reg, const char *id);
/* Whether id is the user's VPC of reg. */
bool sim_user_vpc_is(const struct sim_region *reg, const char *id);
/* Every region's user VPC and subnets, and whether the default VPC exists, for /state:
 * [{cloud, region, vpc, default_vpc, subnets: {zone: id}}]. */
json_t *sim_networks_json(bool no_default_vpc);

#endif
