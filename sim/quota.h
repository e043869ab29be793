/*
 * quota.h: the emulator's account quotas and stock, for plan's quota preflight (issue 14):
 * what each cloud's quota API answers (limits per market; use is counted from the world),
 * which (zone, type) is sold out, and whether the quota API refuses the caller. Set through
 * the control API, one setting a line:
 *
 *   POST   /quotas   CLOUD:on-demand=N | CLOUD:spot=N   the market's limit (the cloud's unit)
 *                    CLOUD:sold-out=ZONE/TYPE            the stock API says sold out
 *                    CLOUD:denied                        the quota API answers its
 *                                                        permission error
 *   DELETE /quotas   back to the defaults (generous limits, everything in stock)
 *
 * One store per process, behind its own mutex (the settings are read by every frontend).
 * The quota APIs answer them, and RunInstances enforces them (sim_quota_launch).
 */
#ifndef GC_SIM_QUOTA_H
#define GC_SIM_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "sim/faults.h"
#include "sim/frontend.h"
#include "sim/world.h"

/* The limit a cloud's quota API answers when none is set, in its unit: generous, so that
 * only the tests that set a quota meet one (the 250-node kill test needs 2000 vCPUs). */
#define SIM_QUOTA_DEFAULT 100000

/* Applies one setting line; GC_EINVALID names what is wrong. */
int sim_quota_set(const char *line, struct gc_error *err);
void sim_quota_clear(void);
/* The market's limit on cloud c. */
int64_t sim_quota_limit(enum sim_cloud c, bool spot);
bool sim_quota_denied(enum sim_cloud c);
bool sim_quota_sold_out(enum sim_cloud c, const char *zone, const char *type);

/*
 * The account at launch, as the cloud enforces it: count more instances of type (in zone,
 * of the market) must be in stock and fit the market's quota, in the unit the cloud's quota
 * API counts (instances of the zone on Tencent, vCPUs of the region on Alibaba, vCPUs of the
 * type's family group on AWS), beside the world's instances. A refusal fills hit as the
 * matching fault rule would (SIM_FAULT_CAPACITY, or SIM_FAULT_QUOTA with hit->spot), so
 * the frontend answers its cloud's code; a hit already there stands. World lock held.
 */
void sim_quota_launch(struct sim_world *w, enum sim_cloud c, const char *region, const char *zone,
		      const char *type, bool spot, unsigned count, struct sim_fault_hit *hit);

#endif
