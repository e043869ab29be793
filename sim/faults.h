/*
 * faults.h: what the emulator does wrong on purpose. Injected faults, the clouds'
 * documented rate limits as token buckets, and per-call latency.
 *
 * A fault rule is one line of text, the same on the command line (--fault) and in the
 * control API (POST /faults):
 *
 *     CLOUD:ACTION:KIND[,key=value...]
 *
 * CLOUD is aws, alibaba, tencent or *; ACTION an API action name or *; KIND one of
 *   throttle   the cloud's throttling error (EC2 RequestLimitExceeded 503, Alibaba
 *              Throttling.User 400, Tencent RequestLimitExceeded in HTTP 200)
 *   capacity   the cloud's out-of-stock error (InsufficientInstanceCapacity,
 *              OperationDenied.NoStock, ResourceInsufficient.SpecifiedInstanceType);
 *              keys zone= and type= narrow it to launches there
 *   quota      the cloud's quota error (VcpuLimitExceeded, QuotaExceed.ElasticQuota,
 *              LimitExceeded.InstanceQuota); with market=spot or market=on-demand, only
 *              launches of that market fail, with that market's quota error
 *              (MaxSpotInstanceCountExceeded, LimitExceeded.UserSpotQuota, ...)
 *   5xx        InternalError with HTTP 500 (Tencent: InternalError in HTTP 200)
 *   drop       the connection is closed without a response
 *   slow       the response is held back delay_ms (default 2000) before it goes out
 *   hostile    a broken or malicious answer, mode=MODE (hostile.h, docs/sim.md): bad
 *              pagination, empty or wrong documents, HTML, huge or slow bodies, escape
 *              sequences, duplicated ids; keys status=N (html), bytes=N (huge-body),
 *              delay_ms=N (slow-body)
 * and the keys
 *   p=0.25     probability per matching call (default 1)
 *   call=N     only the Nth matching call, counting from 1 (default: every call)
 *   times=N    at most N firings, then the rule is spent (default: unlimited)
 *   after=1    drop/5xx after the action has taken effect instead of before it (the
 *              caller sees a failure for a call that actually succeeded)
 *   zone=Z type=T market=M delay_ms=N   as above
 *
 * Rules are checked in the order they were added; the first that fires wins.
 *
 * Rate limits (on unless --no-rate-limits): EC2's request buckets per action by
 * category (mutating, non-mutating, unfiltered non-mutating) and resource buckets for
 * RunInstances and TerminateInstances counted in instances; Tencent's per-action
 * buckets (RunInstances and TerminateInstances 10/s, DescribeInstances 40/s, others
 * 20/s); Alibaba's per-API one-minute windows. Figures and sources are in
 * docs/sim.md.
 *
 * Thread-safe: one mutex inside. Life cycle: sim_faults_new -> sim_faults_free.
 */
#ifndef GC_SIM_FAULTS_H
#define GC_SIM_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/clock.h"
#include "core/error.h"
#include "sim/hostile.h"
#include "sim/world.h"

enum sim_fault_kind {
	SIM_FAULT_NONE = 0,
	SIM_FAULT_THROTTLE,
	SIM_FAULT_CAPACITY,
	SIM_FAULT_QUOTA,
	SIM_FAULT_5XX,
	SIM_FAULT_DROP,
	SIM_FAULT_SLOW,
	SIM_FAULT_HOSTILE,
	SIM_FAULT_UNSUPPORTED, /* a launch's type refused where it goes (fabric.md) */
};

/* What a check decided for one call. */
struct sim_fault_hit {
	enum sim_fault_kind kind;
	bool after;		  /* take effect after the action ran (drop, 5xx) */
	unsigned delay_ms;	  /* slow, hostile slow-body */
	enum sim_hostile hostile; /* hostile: the mode */
	unsigned status;	  /* hostile html: the HTTP status, 0 for 200 */
	uint64_t bytes;		  /* hostile huge-body: the body's size, 0 for the default */
	bool spot;		  /* a market's quota (sim_faults_launch): the spot one */
	char rule[160];		  /* the rule's text, for the request log and messages */
};

struct sim_faults;

struct sim_faults *sim_faults_new(uint64_t seed, const struct gc_clock *clock);
void sim_faults_free(struct sim_faults *f);

/* Parses and appends a rule; GC_EINVALID with a message naming the bad part. */
int sim_faults_add(struct sim_faults *f, const char *rule, struct gc_error *err);
/* Removes every rule (rate limits stay). */
void sim_faults_clear(struct sim_faults *f);
/* The rules as text, one per line, into a string the caller frees. */
char *sim_faults_describe(struct sim_faults *f);

/* Turns the documented rate limits on or off (on by default). */
void sim_faults_set_rate_limits(struct sim_faults *f, bool on);
/* A fixed latency added to every call, in milliseconds. */
void sim_faults_set_latency(struct sim_faults *f, unsigned ms);
unsigned sim_faults_latency(struct sim_faults *f);

/*
 * Checks the rules that apply to any call of (cloud, action): throttle, quota, 5xx,
 * drop, slow. Capacity rules are left to sim_faults_capacity. Counts the call for
 * call=N. Also takes a token from the action's request bucket: an empty bucket is a
 * throttle hit. Fills *hit (kind SIM_FAULT_NONE when nothing fires).
 */
void sim_faults_check(struct sim_faults *f, enum sim_cloud cloud, const char *action,
		      unsigned flags, struct sim_fault_hit *hit);

/* flags for sim_faults_check */
#define SIM_CALL_UNFILTERED \
	1u /* an EC2 Describe without filters, ids or MaxResults: EC2
				* charges it to the smaller unfiltered bucket */

/*
 * For launches: whether a capacity rule fires for (cloud, action, zone, type) or a
 * quota rule for the launch's market (hit->spot says which), and takes `count` tokens from the resource bucket (EC2 RunInstances, Alibaba's
 * 5000-a-minute launch cap) or reports a throttle when they are not there.
 */
void sim_faults_launch(struct sim_faults *f, enum sim_cloud cloud, const char *action,
		       const char *zone, const char *type, bool spot, unsigned count,
		       struct sim_fault_hit *hit);

/* For terminations: the resource bucket counted in instances (EC2). */
void sim_faults_terminate(struct sim_faults *f, enum sim_cloud cloud, const char *action,
			  unsigned count, struct sim_fault_hit *hit);

#endif
