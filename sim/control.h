/*
 * control.h: the emulator's control API, served on its own port (JSON):
 *
 *   GET    /healthz                  {"ok":true}
 *   GET    /state                    every instance, key pair, security group and client
 *                                    token of every cloud
 *   POST   /reset                    forget every resource (nodes are stopped)
 *   GET    /faults                   the fault rules, one per line (text/plain)
 *   POST   /faults                   add rules, one per line
 *   DELETE /faults                   remove every rule
 *   POST   /nodes/<instance-id>/faults   set a node's faults: "ecc,missing-gpu", "" clears
 *   POST   /quotas, DELETE /quotas   account quotas and stock (sim/quota.h)
 *   GET    /oidc/token, /.well-known/openid-configuration, /.well-known/jwks
 *                                    the OIDC issuer (sim/oidc.h)
 *
 * No authentication: it listens on loopback only, like the cloud ports. A pure function
 * of (sim, request), like a frontend; it locks the world itself.
 */
#ifndef GC_SIM_CONTROL_H
#define GC_SIM_CONTROL_H

#include "sim/sim.h"

void sim_control_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp);

/* The whole state as a JSON object (world lock NOT held by the caller). */
json_t *sim_control_state(struct sim *sim);

#endif
