/*
 * quotacheck.h: plan's quota preflight. Before anything is created, the account's quota
 * and current use for each group's first launch candidate (apply's order: market, then
 * type) are read through the driver's quota op, and a plan that cannot fit is refused
 * with the quota's name, limit, use, the shortfall and where to raise it. Sold-out
 * candidates are skipped and said; a quota that cannot be read is said and not guessed.
 * docs/internals/quota.md says why each rule is so.
 */
#ifndef GC_QUOTACHECK_H
#define GC_QUOTACHECK_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/plan.h"
#include "core/provider.h"

/*
 * Whether n more nodes fit q, with planned of it already taken by earlier groups of the
 * same plan. When they do not, why (room for len bytes) names the quota, its limit, the
 * use, the need, the shortfall and where to raise it. Pure.
 */
bool gc_quota_fits(const struct gc_quota *q, unsigned n, int64_t planned, char *why, size_t len);

/*
 * Checks plan (built for spec) against the account's quotas and appends what it found to
 * plan->preflight. Fails with GC_EQUOTA (the plan stays filled in, to be shown) when a
 * group cannot fit, and with GC_ECANCELLED; a quota that cannot be read is a line, not
 * an error.
 */
int gc_quotacheck_plan(struct gc_provider *p, const struct gc_spec *spec, struct gc_plan *plan,
		       struct gc_error *err);

#endif
