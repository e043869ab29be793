/*
 * quota.c: the emulator's account quotas and stock (quota.h).
 */
#include "sim/quota.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/str.h"
#include "sim/catalog.h"

#define N_CLOUDS   3
#define MAX_SOLD   32
#define SOLD_MAX_S 128

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int64_t limit[2]; /* [spot] */
	bool set[2];
	bool denied;
	char sold[MAX_SOLD][SOLD_MAX_S]; /* "ZONE/TYPE" */
	size_t n_sold;
} store[N_CLOUDS];

int sim_quota_set(const char *line, struct gc_error *err)
{
	const char *colon = strchr(line, ':'), *rest;
	char cloud[16];
	enum sim_cloud c;
	int ret = 0;

	if (!colon || (size_t)(colon - line) >= sizeof(cloud))
		return gc_error_set(err, GC_EINVALID, "quota setting '%s': CLOUD:SETTING", line);
	memcpy(cloud, line, (size_t)(colon - line));
	cloud[colon - line] = '\0';
	if (sim_cloud_parse(cloud, &c) != 0 || (unsigned)c >= N_CLOUDS)
		return gc_error_set(err, GC_EINVALID, "quota setting '%s': unknown cloud '%s'",
				    line, cloud);
	rest = colon + 1;
	pthread_mutex_lock(&mu);
	if (!strcmp(rest, "denied")) {
		store[c].denied = true;
	} else if (gc_starts_with(rest, "sold-out=") && strchr(rest, '/')) {
		if (store[c].n_sold < MAX_SOLD && strlen(rest + 9) < SOLD_MAX_S)
			snprintf(store[c].sold[store[c].n_sold++], SOLD_MAX_S, "%s", rest + 9);
		else
			ret = gc_error_set(err, GC_EINVALID, "quota setting '%s': too many", line);
	} else if (gc_starts_with(rest, "on-demand=") || gc_starts_with(rest, "spot=")) {
		bool spot = rest[0] == 's';
		const char *num = strchr(rest, '=') + 1;
		char *end;
		long long v = strtoll(num, &end, 10);

		if (!*num || *end || v < 0)
			ret = gc_error_set(err, GC_EINVALID, "quota setting '%s': not a count",
					   line);
		else {
			store[c].limit[spot] = v;
			store[c].set[spot] = true;
		}
	} else {
		ret = gc_error_set(err, GC_EINVALID,
				   "quota setting '%s': on-demand=N, spot=N, sold-out=ZONE/TYPE "
				   "or denied",
				   line);
	}
	pthread_mutex_unlock(&mu);
	return ret;
}

void sim_quota_clear(void)
{
	pthread_mutex_lock(&mu);
	memset(store, 0, sizeof(store));
	pthread_mutex_unlock(&mu);
}

int64_t sim_quota_limit(enum sim_cloud c, bool spot)
{
	int64_t v;

	pthread_mutex_lock(&mu);
	v = store[c].set[spot] ? store[c].limit[spot] : SIM_QUOTA_DEFAULT;
	pthread_mutex_unlock(&mu);
	return v;
}

bool sim_quota_denied(enum sim_cloud c)
{
	bool v;

	pthread_mutex_lock(&mu);
	v = store[c].denied;
	pthread_mutex_unlock(&mu);
	return v;
}

bool sim_quota_sold_out(enum sim_cloud c, const char *zone, const char *type)
{
	bool v = false;
	char key[SOLD_MAX_S];

	snprintf(key, sizeof(key), "%s/%s", zone ? zone : "", type ? type : "");
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < store[c].n_sold && !v; i++)
		v = !strcmp(store[c].sold[i], key);
	pthread_mutex_unlock(&mu);
	return v;
}

/* EC2's vCPU quota group of a type (the letters before the generation's digit), as
 * providers/aws/quota.c reads them: 'P', 'G' (G and VT), 'S' (standard) or 0 for a family
 * with quotas of its own, not modelled. */
static char aws_group(const char *type)
{
	char fam[8] = "";
	size_t n = 0;

	while (n + 1 < sizeof(fam) && type[n] >= 'a' && type[n] <= 'z') {
		fam[n] = type[n];
		n++;
	}
	fam[n] = '\0';
	if (!strcmp(fam, "p"))
		return 'P';
	if (!strcmp(fam, "g") || !strcmp(fam, "vt"))
		return 'G';
	if (n == 1 && strchr("acdhimrtz", fam[0]))
		return 'S';
	return 0;
}

/* What one instance of type takes of its quota on cloud c (0: not counted). */
static int64_t per_node(enum sim_cloud c, const char *type)
{
	const struct sim_itype *t;

	if (c == SIM_TENCENT)
		return 1;
	t = sim_catalog_itype(c, type);
	return t ? (int64_t)t->vcpu : 0;
}

/* Whether inst counts against the quota of a launch of type in zone, of the market. */
static bool same_quota(enum sim_cloud c, const struct sim_instance *inst, const char *zone,
		       const char *type, bool spot)
{
	if (inst->spot != spot || inst->state == SIM_TERMINATED || inst->state == SIM_LAUNCH_FAILED)
		return false;
	switch (c) {
	case SIM_TENCENT: return zone && !strcmp(inst->zone, zone);
	case SIM_AWS:
		/* EC2 counts the vCPUs of running instances (pending ones are on their way) */
		return (inst->state == SIM_PENDING || inst->state == SIM_RUNNING) &&
			aws_group(inst->type) == aws_group(type);
	default: return true;
	}
}

void sim_quota_launch(struct sim_world *w, enum sim_cloud c, const char *region, const char *zone,
		      const char *type, bool spot, unsigned count, struct sim_fault_hit *hit)
{
	struct sim_instance **all = NULL;
	int64_t used = 0, limit, each = per_node(c, type);
	size_t n;

	if (hit->kind != SIM_FAULT_NONE || !type)
		return;
	if (zone && sim_quota_sold_out(c, zone, type)) {
		hit->kind = SIM_FAULT_CAPACITY;
		snprintf(hit->rule, sizeof(hit->rule), "stock: %s/%s sold out", zone, type);
		return;
	}
	if (!each || (c == SIM_AWS && !aws_group(type)))
		return;
	limit = sim_quota_limit(c, spot);
	n = sim_world_list(w, c, region, &all);
	for (size_t i = 0; i < n; i++)
		if (same_quota(c, all[i], zone, type, spot))
			used += per_node(c, all[i]->type);
	free(all);
	if (used + (int64_t)count * each <= limit)
		return;
	hit->kind = SIM_FAULT_QUOTA;
	hit->spot = spot;
	snprintf(hit->rule, sizeof(hit->rule), "quota: %s %lld of %lld in use, %u more asked",
		 spot ? "spot" : "on-demand", (long long)used, (long long)limit, count);
}
