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
 */
#ifndef GC_SIM_QUOTA_H
#define GC_SIM_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "sim/frontend.h"

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

#endif
