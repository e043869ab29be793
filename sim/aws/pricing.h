/*
 * pricing.h: the AWS Price List Query API (GetProducts) on the emulator's AWS port.
 *
 * sim_ec2_handle hands a request over when sim_pricing_wants it (an X-Amz-Target of
 * AWSPriceListService.*). A pure function of (sim, request), like the other frontends;
 * prices come from the catalogue (sim/catalog.c), so they are static and need no lock.
 */
#ifndef GC_SIM_AWS_PRICING_H
#define GC_SIM_AWS_PRICING_H

#include <stdbool.h>

#include "sim/sim.h"

bool sim_pricing_wants(const struct sim_req *req);
void sim_pricing_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp);

#endif
