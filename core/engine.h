/*
 * engine.h: discover, plan, apply and destroy a cluster through a provider. How apply
 * never launches twice (deterministic client tokens, replayed by a re-run), the capacity
 * fallback order, cancellation and the one teardown: docs/internals/executor.md.
 *
 * Cancellation: the engine polls opts->cancelled between calls and while waiting; then it
 * stops launching, still records what exists, and returns GC_ECANCELLED. Nothing below
 * cmd/ installs signal handlers. Local state (gc_engine_state_dir: the SSH key, the lock
 * file) can be lost without losing anything in the cloud.
 *
 * Life cycle: gc_engine_init -> gc_engine_plan / gc_engine_apply / gc_engine_destroy
 * (under gc_lock_acquire for the ones that change anything) -> gc_engine_release. The
 * clock and wall fields may be replaced between init and the first call (tests do).
 */
#ifndef GC_ENGINE_H
#define GC_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/keygen.h"
#include "core/plan.h"
#include "core/provider.h"
#include "core/spec.h"

/* Events for live progress; cmd/ turns them into lines or a TTY display. */
enum gc_engine_event_kind {
	GC_EV_INFO,	     /* a plain message */
	GC_EV_CREATE_START,  /* group, zone, type, market, count */
	GC_EV_CREATED,	     /* group, count, ids in batch */
	GC_EV_CREATE_FAILED, /* group, zone, type, market, err: falling back or giving up */
	GC_EV_WAITING,	     /* running / total, elapsed_ms */
	GC_EV_TERMINATING,   /* count */
	GC_EV_TERMINATED,    /* count */
};

struct gc_engine_event {
	enum gc_engine_event_kind kind;
	const char *group;
	const char *zone;
	const char *type;
	bool spot;
	unsigned count;
	unsigned done, total;
	uint64_t elapsed_ms;
	const struct gc_error *err;
	const char *message;
};

struct gc_engine_opts {
	/* Polled between calls and while waiting; NULL: never cancelled. */
	bool (*cancelled)(void *ctx);
	void *cancel_ctx;
	void (*progress)(void *ctx, const struct gc_engine_event *ev);
	void *progress_ctx;
	uint64_t wait_timeout_ms; /* each running / terminated wait; 0: 15 minutes */
	uint64_t poll_ms;	  /* between Describe polls; 0: 2000 */
	bool no_wait;		  /* return once the create calls succeeded */
};

struct gc_engine {
	const struct gc_spec *spec;
	struct gc_provider *provider;
	struct gc_log *log;
	const struct gc_clock *clock; /* NULL: monotonic */
	int64_t (*wall)(void *ctx);   /* unix seconds; NULL: time() */
	void *wall_ctx;
	char *state_dir;	       /* per-cluster local state (key pair, lock) */
	const struct gc_spec_env *env; /* NULL: the process environment */
};

/* Where a cluster's local state lives:
 * $GPUCLUSTER_STATE_DIR, else $XDG_STATE_HOME/gpucluster, else ~/.local/state/gpucluster,
 * then /clusters/<cloud>/<region>/<name>. Allocated. */
char *gc_engine_state_dir(const struct gc_spec *spec, const struct gc_spec_env *env,
			  struct gc_error *err);

/* e is caller memory; provider and spec stay the caller's. Creates the state directory
 * (mode 0700, parents included); touches nothing in the cloud. */
int gc_engine_init(struct gc_engine *e, const struct gc_spec *spec, struct gc_provider *p,
		   const struct gc_spec_env *env, struct gc_log *log, struct gc_error *err);
void gc_engine_release(struct gc_engine *e);

/* The cluster's instances (terminated ones left out), all groups. */
int gc_engine_discover(struct gc_engine *e, struct gc_instance_list *out, struct gc_error *err);

/* Discovers, looks up prices, builds the plan into out (out and live are caller memory and
 * live must outlive out). On GC_EQUOTA (over max_hourly_cost) the plan is still filled. */
int gc_engine_plan(struct gc_engine *e, struct gc_plan *out, struct gc_instance_list *live,
		   const char *const *override_names, const unsigned *override_counts,
		   size_t n_overrides, struct gc_error *err);

/* What an apply or destroy did, for the truthful report after a partial failure. */
struct gc_engine_group_report {
	char group[GC_SPEC_GROUP_NAME_MAX + 1];
	unsigned wanted;     /* new instances the plan asked for */
	unsigned created;    /* launched (or found again by client token) */
	unsigned running;    /* of created, running when the wait ended */
	unsigned failed;     /* of created, gone (terminated, stopped) before running */
	unsigned terminated; /* surplus / replaced / destroyed */
	struct gc_error err; /* GC_OK, or why this group fell short */
};

struct gc_engine_report {
	struct gc_engine_group_report *groups;
	size_t n_groups;
	struct gc_instance_list created; /* every instance launched, final state */
	char **terminated_ids;
	size_t n_terminated;
	/* destroy: the instances it terminated, as listed before (launch time, type, market),
	 * for what they cost */
	struct gc_instance_list ended;
	unsigned long api_calls; /* provider stats delta */
	unsigned long throttled;
	uint64_t wall_ms;
};

void gc_engine_report_init(struct gc_engine_report *r);
void gc_engine_report_release(struct gc_engine_report *r);

/* Executes plan. Returns 0 when every group reached its count and every terminate
 * finished; -1 otherwise, with err summarising and report saying what happened per
 * group. */
int gc_engine_apply(struct gc_engine *e, const struct gc_plan *plan,
		    const struct gc_engine_opts *opts, struct gc_engine_report *report,
		    struct gc_error *err);

/* For an apply with no changes: the rules of the security group that the plan's kept
 * instances use, reconciled with the spec (gc_engine_apply does it as it goes). */
int gc_engine_reconcile(struct gc_engine *e, const struct gc_plan *plan, struct gc_error *err);

/* Terminates every instance of the cluster, waits until terminated, then deletes the key
 * pairs and security groups tagged with the cluster. */
int gc_engine_destroy(struct gc_engine *e, const struct gc_engine_opts *opts,
		      struct gc_engine_report *report, struct gc_error *err);

/*
 * `destroy --selector`: gc_engine_destroy limited to the cluster's instances that carry
 * every tag of sel (a NULL value: the key with any value), including any that shows up
 * while waiting (a launch of a cancelled apply that Describe shows late). The key pairs
 * and security groups carrying the cluster tag and every tag of sel are deleted only when
 * no instance of the cluster is left at all, selected or not: the others still use them.
 * n_sel 0 is gc_engine_destroy.
 */
int gc_engine_destroy_selected(struct gc_engine *e, const struct gc_tag_filter *sel, size_t n_sel,
			       const struct gc_engine_opts *opts, struct gc_engine_report *report,
			       struct gc_error *err);

/* Terminates the instances of ids that carry this cluster's tag (any other id is left
 * alone and counted as an error), then waits until the cloud says terminated. For
 * `apply --replace-unhealthy`: only nodes the bootstrapper found unhealthy are named. */
int gc_engine_terminate(struct gc_engine *e, const char *const *ids, size_t n,
			const struct gc_engine_opts *opts, struct gc_engine_report *report,
			struct gc_error *err);

/* The cluster's SSH key pair: <state_dir>/id_ed25519, generated (mode 0600, comment
 * "gpucluster:<cluster>") when the file does not exist. out is filled on success. */
int gc_engine_keypair(struct gc_engine *e, struct gc_keypair *out, struct gc_error *err);

/* The cloud name of the key pair, by the cloud's rule (gc_provider_facts.keypair): for
 * most, "gpucluster-<cluster>-<8 characters of the fingerprint>", lowercase letters and
 * digits only in the fingerprint part, so a new local key never reuses the name of an old
 * one. */
void gc_engine_keypair_name(char *out, size_t size, const struct gc_provider_ops *cloud,
			    const char *cluster, const struct gc_keypair *kp);

/* The deterministic client token of one batch (executor.md, "Client tokens"); out has room
 * for 64 + 1. context may be NULL (none); zone NULL stands for "any zone". max_len 0 or
 * above 64 means 64. */
void gc_engine_client_token(char out[65], size_t max_len, const char *cluster, const char *group,
			    const char *spec_hash, const char *context, unsigned first_slot,
			    unsigned count, const char *zone, const char *type, bool spot,
			    unsigned generation);

/* The local lock: one apply/scale/destroy per cluster at a time on this machine; a second
 * acquire fails at once with GC_ELOCKED naming the holder (executor.md, "Lock"). */
struct gc_lock {
	int fd;
	char *path;
};
int gc_lock_acquire(struct gc_lock *out, const char *state_dir, const char *what,
		    struct gc_error *err);
void gc_lock_release(struct gc_lock *lock);

#endif
