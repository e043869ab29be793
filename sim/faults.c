/*
 * faults.c: injected faults, rate limits and latency for the emulator (see faults.h).
 *
 * The rate-limit figures are each cloud's own (sim_frontend.rate, in the cloud's folder;
 * docs/sim.md lists them with their sources); here they become token buckets or
 * one-minute windows, made on first use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/ratelimit.h"
#include "core/str.h"
#include "sim/faults.h"

#define ANY		 "*"
#define MARKET_SPOT	 1
#define MARKET_ON_DEMAND 2

struct rule {
	char text[160];
	char cloud[16]; /* "*" or a cloud name */
	char action[64];
	enum sim_fault_kind kind;
	double p;
	uint64_t call;	/* 0: every call */
	uint64_t times; /* 0: unlimited */
	bool after;
	unsigned delay_ms;
	enum sim_hostile mode;
	unsigned status;
	uint64_t bytes;
	char zone[64];
	char type[64];
	int market; /* quota: 0 any call, MARKET_SPOT / MARKET_ON_DEMAND launches of it */
	uint64_t seen;
	uint64_t fired;
};

struct bucket {
	enum sim_cloud cloud;
	char action[64];
	enum sim_bucket kind;
	struct gc_ratelimit rl; /* token buckets */
	/* one-minute windows */
	bool windowed;
	uint64_t window_limit;
	uint64_t window_start;
	uint64_t window_used;
	char desc[96];
};

struct sim_faults {
	pthread_mutex_t lock;
	const struct gc_clock *clock;
	uint64_t rng;
	bool rate_limits;
	unsigned latency_ms;
	struct rule *rules;
	size_t n_rules;
	struct bucket **buckets;
	size_t n_buckets;
};

struct sim_faults *sim_faults_new(uint64_t seed, const struct gc_clock *clock)
{
	struct sim_faults *f = gc_xcalloc(1, sizeof(*f));

	pthread_mutex_init(&f->lock, NULL);
	f->clock = clock;
	f->rng = seed ? seed ^ 0xa0761d6478bd642full : 0xe7037ed1a0b428dbull;
	f->rate_limits = true;
	return f;
}

void sim_faults_free(struct sim_faults *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_buckets; i++) {
		if (!f->buckets[i]->windowed)
			gc_ratelimit_release(&f->buckets[i]->rl);
		free(f->buckets[i]);
	}
	free(f->buckets);
	free(f->rules);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

static const struct {
	const char *name;
	enum sim_fault_kind kind;
} kinds[] = {
	{ "throttle", SIM_FAULT_THROTTLE }, { "capacity", SIM_FAULT_CAPACITY },
	{ "quota", SIM_FAULT_QUOTA },	    { "5xx", SIM_FAULT_5XX },
	{ "drop", SIM_FAULT_DROP },	    { "slow", SIM_FAULT_SLOW },
	{ "hostile", SIM_FAULT_HOSTILE },   { "unsupported", SIM_FAULT_UNSUPPORTED },
};

static bool valid_cloud(const char *s)
{
	enum sim_cloud c;

	return !strcmp(s, ANY) || sim_cloud_parse(s, &c) == 0;
}

/* Parses one key=value option of a rule into r. */
static int parse_option(struct rule *r, const char *opt, struct gc_error *err)
{
	const char *eq = strchr(opt, '=');
	char key[32];
	const char *val;
	uint64_t u;

	if (!eq || eq == opt || (size_t)(eq - opt) >= sizeof(key))
		return gc_error_set(err, GC_EINVALID, "fault rule '%s': '%s' is not key=value",
				    r->text, opt);
	memcpy(key, opt, (size_t)(eq - opt));
	key[eq - opt] = '\0';
	val = eq + 1;
	if (!strcmp(key, "p")) {
		if (gc_parse_double(val, &r->p) < 0 || r->p < 0 || r->p > 1)
			return gc_error_set(err, GC_EINVALID,
					    "fault rule '%s': p must be between 0 and 1, not '%s'",
					    r->text, val);
	} else if (!strcmp(key, "call") || !strcmp(key, "times")) {
		if (gc_parse_u64(val, UINT32_MAX, &u) < 0 || u == 0)
			return gc_error_set(
				err, GC_EINVALID,
				"fault rule '%s': %s must be a positive integer, not '%s'", r->text,
				key, val);
		if (key[0] == 'c')
			r->call = u;
		else
			r->times = u;
	} else if (!strcmp(key, "delay_ms")) {
		if (gc_parse_u64(val, 600000, &u) < 0)
			return gc_error_set(err, GC_EINVALID,
					    "fault rule '%s': delay_ms must be 0..600000, not '%s'",
					    r->text, val);
		r->delay_ms = (unsigned)u;
	} else if (!strcmp(key, "after")) {
		if (strcmp(val, "1") && strcmp(val, "0") && strcmp(val, "true") &&
		    strcmp(val, "false"))
			return gc_error_set(err, GC_EINVALID,
					    "fault rule '%s': after must be 1 or 0, not '%s'",
					    r->text, val);
		r->after = !strcmp(val, "1") || !strcmp(val, "true");
	} else if (!strcmp(key, "mode")) {
		if (sim_hostile_parse(val, &r->mode) < 0)
			return gc_error_set(err, GC_EINVALID,
					    "fault rule '%s': unknown hostile mode '%s' (%s)",
					    r->text, val, sim_hostile_names());
	} else if (!strcmp(key, "status")) {
		if (gc_parse_u64(val, 599, &u) < 0 || u < 200)
			return gc_error_set(err, GC_EINVALID,
					    "fault rule '%s': status must be 200..599, not '%s'",
					    r->text, val);
		r->status = (unsigned)u;
	} else if (!strcmp(key, "bytes")) {
		if (gc_parse_u64(val, (uint64_t)1 << 32, &u) < 0 || u == 0)
			return gc_error_set(
				err, GC_EINVALID,
				"fault rule '%s': bytes must be 1..4294967296, not '%s'", r->text,
				val);
		r->bytes = u;
	} else if (!strcmp(key, "zone") || !strcmp(key, "type")) {
		char *dst = key[0] == 'z' ? r->zone : r->type;

		if (!*val || strlen(val) >= sizeof(r->zone))
			return gc_error_set(err, GC_EINVALID, "fault rule '%s': bad %s '%s'",
					    r->text, key, val);
		snprintf(dst, sizeof(r->zone), "%s", val);
	} else if (!strcmp(key, "market")) {
		if (strcmp(val, "spot") && strcmp(val, "on-demand"))
			return gc_error_set(
				err, GC_EINVALID,
				"fault rule '%s': market must be spot or on-demand, not "
				"'%s'",
				r->text, val);
		r->market = !strcmp(val, "spot") ? MARKET_SPOT : MARKET_ON_DEMAND;
	} else {
		return gc_error_set(err, GC_EINVALID,
				    "fault rule '%s': unknown option '%s' (expected p, call, "
				    "times, after, zone, type, market, delay_ms, mode, status or "
				    "bytes)",
				    r->text, key);
	}
	return 0;
}

int sim_faults_add(struct sim_faults *f, const char *text, struct gc_error *err)
{
	struct rule r;
	char buf[160];
	char *fields[3];
	char *p, *opts;
	size_t i;

	memset(&r, 0, sizeof(r));
	if (strlen(text) >= sizeof(buf))
		return gc_error_set(err, GC_EINVALID, "fault rule too long (max %zu bytes)",
				    sizeof(buf) - 1);
	snprintf(r.text, sizeof(r.text), "%s", text);
	snprintf(buf, sizeof(buf), "%s", text);
	p = buf;
	for (i = 0; i < 3; i++) {
		fields[i] = p;
		if (i < 2) {
			p = strchr(p, ':');
			if (!p)
				return gc_error_set(err, GC_EINVALID,
						    "fault rule '%s': expected CLOUD:ACTION:KIND[,"
						    "key=value...]",
						    text);
			*p++ = '\0';
		}
	}
	opts = strchr(fields[2], ',');
	if (opts)
		*opts++ = '\0';
	if (!valid_cloud(fields[0])) {
		char names[SIM_CLOUD_NAMES_MAX];

		sim_cloud_names(names, sizeof(names));
		return gc_error_set(err, GC_EINVALID,
				    "fault rule '%s': unknown cloud '%s' (%s or *)", text,
				    fields[0], names);
	}
	if (!*fields[1] || strlen(fields[1]) >= sizeof(r.action))
		return gc_error_set(err, GC_EINVALID, "fault rule '%s': bad action '%s'", text,
				    fields[1]);
	snprintf(r.cloud, sizeof(r.cloud), "%.*s", (int)sizeof(r.cloud) - 1, fields[0]);
	snprintf(r.action, sizeof(r.action), "%s", fields[1]);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(fields[2], kinds[i].name))
			r.kind = kinds[i].kind;
	if (r.kind == SIM_FAULT_NONE)
		return gc_error_set(
			err, GC_EINVALID,
			"fault rule '%s': unknown kind '%s' (throttle, capacity, quota, "
			"5xx, drop, slow, hostile or unsupported)",
			text, fields[2]);
	r.p = 1.0;
	r.delay_ms = r.kind == SIM_FAULT_SLOW ? 2000 : 0;
	while (opts && *opts) {
		char *next = strchr(opts, ',');

		if (next)
			*next++ = '\0';
		if (parse_option(&r, opts, err) < 0)
			return -1;
		opts = next;
	}
	if ((r.kind == SIM_FAULT_HOSTILE) != (r.mode != SIM_HOSTILE_NONE) ||
	    ((r.status || r.bytes) && r.kind != SIM_FAULT_HOSTILE))
		return gc_error_set(err, GC_EINVALID,
				    "fault rule '%s': mode= (with status= or bytes=) goes with "
				    "hostile, and hostile needs it",
				    text);
	if (r.market && r.kind != SIM_FAULT_QUOTA)
		return gc_error_set(err, GC_EINVALID,
				    "fault rule '%s': market= applies to quota faults only", text);
	if ((r.zone[0] || r.type[0]) && r.kind != SIM_FAULT_CAPACITY &&
	    r.kind != SIM_FAULT_UNSUPPORTED)
		return gc_error_set(err, GC_EINVALID,
				    "fault rule '%s': zone= and type= apply to capacity and "
				    "unsupported faults only",
				    text);
	pthread_mutex_lock(&f->lock);
	f->rules = gc_xreallocarray(f->rules, f->n_rules + 1, sizeof(*f->rules));
	f->rules[f->n_rules++] = r;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

void sim_faults_clear(struct sim_faults *f)
{
	pthread_mutex_lock(&f->lock);
	free(f->rules);
	f->rules = NULL;
	f->n_rules = 0;
	pthread_mutex_unlock(&f->lock);
}

char *sim_faults_describe(struct sim_faults *f)
{
	struct gc_buf b = GC_BUF_INIT(1 << 20);
	char *out;

	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < f->n_rules; i++)
		gc_buf_addf(&b, "%s\tseen=%llu fired=%llu\n", f->rules[i].text,
			    (unsigned long long)f->rules[i].seen,
			    (unsigned long long)f->rules[i].fired);
	pthread_mutex_unlock(&f->lock);
	out = gc_buf_detach(&b, NULL);
	return out ? out : gc_xstrdup("");
}

void sim_faults_set_rate_limits(struct sim_faults *f, bool on)
{
	pthread_mutex_lock(&f->lock);
	f->rate_limits = on;
	pthread_mutex_unlock(&f->lock);
}

void sim_faults_set_latency(struct sim_faults *f, unsigned ms)
{
	pthread_mutex_lock(&f->lock);
	f->latency_ms = ms;
	pthread_mutex_unlock(&f->lock);
}

unsigned sim_faults_latency(struct sim_faults *f)
{
	unsigned ms;

	pthread_mutex_lock(&f->lock);
	ms = f->latency_ms;
	pthread_mutex_unlock(&f->lock);
	return ms;
}

static double dice(struct sim_faults *f)
{
	uint64_t x = f->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	f->rng = x;
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11) / (double)(1ull << 53);
}

static bool rule_applies(const struct rule *r, enum sim_cloud cloud, const char *action)
{
	return (!strcmp(r->cloud, ANY) || !strcmp(r->cloud, sim_cloud_name(cloud))) &&
		(!strcmp(r->action, ANY) || !strcmp(r->action, action));
}

/* Counts a matching call against r and says whether it fires now. */
static bool rule_fires(struct sim_faults *f, struct rule *r)
{
	r->seen++;
	if (r->times && r->fired >= r->times)
		return false;
	if (r->call && r->seen != r->call)
		return false;
	if (r->p < 1.0 && dice(f) >= r->p)
		return false;
	r->fired++;
	return true;
}

static void hit_from_rule(struct sim_fault_hit *hit, const struct rule *r)
{
	hit->kind = r->kind;
	hit->after = r->after;
	hit->delay_ms = r->delay_ms;
	hit->hostile = r->mode;
	hit->status = r->status;
	hit->bytes = r->bytes;
	snprintf(hit->rule, sizeof(hit->rule), "%s", r->text);
}

/* The bucket for (cloud, action, kind), made on first use with the cloud's figures. */
static struct bucket *bucket_for(struct sim_faults *f, enum sim_cloud cloud, const char *action,
				 enum sim_bucket kind)
{
	struct sim_rate rate;
	struct bucket *b;

	for (size_t i = 0; i < f->n_buckets; i++) {
		b = f->buckets[i];
		if (b->cloud == cloud && b->kind == kind && !strcmp(b->action, action))
			return b;
	}
	b = gc_xcalloc(1, sizeof(*b));
	b->cloud = cloud;
	b->kind = kind;
	snprintf(b->action, sizeof(b->action), "%s", action);
	memset(&rate, 0, sizeof(rate));
	sim_frontend(cloud)->rate(action, kind, &rate);
	snprintf(b->desc, sizeof(b->desc), "%s", rate.desc);
	b->windowed = rate.per_minute != 0;
	b->window_limit = rate.per_minute;
	if (!b->windowed)
		gc_ratelimit_init(&b->rl, rate.cap, rate.refill, 1000, f->clock, NULL);
	f->buckets = gc_xreallocarray(f->buckets, f->n_buckets + 1, sizeof(*f->buckets));
	f->buckets[f->n_buckets++] = b;
	return b;
}

/* Takes n tokens from b; false (taking nothing) when they are not there. */
static bool bucket_take(struct sim_faults *f, struct bucket *b, uint64_t n)
{
	uint64_t wait_ms = 0;

	if (b->windowed) {
		uint64_t minute = gc_clock_now_ns(f->clock) / (60 * GC_NS_PER_S);

		if (minute != b->window_start) {
			b->window_start = minute;
			b->window_used = 0;
		}
		if (b->window_used + n > b->window_limit)
			return false;
		b->window_used += n;
		return true;
	}
	/* asking for more than a bucket holds can never succeed: a throttle, as EC2 does */
	if (gc_ratelimit_take(&b->rl, n, &wait_ms, NULL) < 0)
		return false;
	return wait_ms == 0;
}

static void throttled_by(struct sim_fault_hit *hit, const struct bucket *b)
{
	hit->kind = SIM_FAULT_THROTTLE;
	hit->after = false;
	snprintf(hit->rule, sizeof(hit->rule), "rate limit: %s", b->desc);
}

void sim_faults_check(struct sim_faults *f, enum sim_cloud cloud, const char *action,
		      unsigned flags, struct sim_fault_hit *hit)
{
	unsigned slow_ms = 0;

	memset(hit, 0, sizeof(*hit));
	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < f->n_rules; i++) {
		struct rule *r = &f->rules[i];

		/* capacity and a market's quota are the launch's (sim_faults_launch) */
		if (r->kind == SIM_FAULT_CAPACITY || r->kind == SIM_FAULT_UNSUPPORTED ||
		    r->market || !rule_applies(r, cloud, action))
			continue;
		if (!rule_fires(f, r))
			continue;
		if (r->kind == SIM_FAULT_SLOW) {
			if (!slow_ms) {
				slow_ms = r->delay_ms;
				hit_from_rule(hit, r);
			}
			continue;
		}
		hit_from_rule(hit, r);
		goto out;
	}
	if (f->rate_limits) {
		enum sim_bucket k = ((sim_frontend(cloud)->buckets & SIM_RATE_UNFILTERED) &&
				     (flags & SIM_CALL_UNFILTERED))
			? SIM_BUCKET_UNFILTERED
			: SIM_BUCKET_REQUEST;
		struct bucket *b = bucket_for(f, cloud, action, k);

		if (!bucket_take(f, b, 1)) {
			throttled_by(hit, b);
			hit->delay_ms = slow_ms;
		}
	}
out:
	pthread_mutex_unlock(&f->lock);
}

void sim_faults_launch(struct sim_faults *f, enum sim_cloud cloud, const char *action,
		       const char *zone, const char *type, bool spot, unsigned count,
		       struct sim_fault_hit *hit)
{
	memset(hit, 0, sizeof(*hit));
	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < f->n_rules; i++) {
		struct rule *r = &f->rules[i];

		if (r->kind == SIM_FAULT_QUOTA && r->market &&
		    r->market == (spot ? MARKET_SPOT : MARKET_ON_DEMAND) &&
		    rule_applies(r, cloud, action) && rule_fires(f, r)) {
			hit_from_rule(hit, r);
			hit->spot = spot;
			goto out;
		}
		if ((r->kind != SIM_FAULT_CAPACITY && r->kind != SIM_FAULT_UNSUPPORTED) ||
		    !rule_applies(r, cloud, action))
			continue;
		if (r->zone[0] && (!zone || strcmp(r->zone, zone)))
			continue;
		if (r->type[0] && (!type || strcmp(r->type, type)))
			continue;
		if (rule_fires(f, r)) {
			hit_from_rule(hit, r);
			goto out;
		}
	}
	if (f->rate_limits && (sim_frontend(cloud)->buckets & SIM_RATE_LAUNCH)) {
		struct bucket *b = bucket_for(f, cloud, action, SIM_BUCKET_RESOURCE);

		if (!bucket_take(f, b, count))
			throttled_by(hit, b);
	}
out:
	pthread_mutex_unlock(&f->lock);
}

void sim_faults_terminate(struct sim_faults *f, enum sim_cloud cloud, const char *action,
			  unsigned count, struct sim_fault_hit *hit)
{
	memset(hit, 0, sizeof(*hit));
	if (!(sim_frontend(cloud)->buckets & SIM_RATE_TERMINATE))
		return;
	pthread_mutex_lock(&f->lock);
	if (f->rate_limits) {
		struct bucket *b = bucket_for(f, cloud, action, SIM_BUCKET_RESOURCE);

		if (!bucket_take(f, b, count))
			throttled_by(hit, b);
	}
	pthread_mutex_unlock(&f->lock);
}
