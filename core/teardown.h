/*
 * teardown.h: the one teardown, shared by destroy (core/engine.c) and gc (core/sweep.c):
 * terminate in the cloud's batch size, wait until none of the instances is left in any
 * state but terminated, then delete the key pairs and (unless no_wait) the security
 * groups. The two callers differ by cluster (destroy's) or resources (gc's), and what
 * each does with an outcome is a hook; docs/internals/executor.md ("One teardown") has
 * the table. A cancel or an auth error (fatal) stops every later call.
 *
 * Life cycle: gc_teardown_init -> set the configuration fields -> gc_teardown_add per
 * instance -> gc_teardown_run (or gc_teardown_terminate and gc_teardown_wait) ->
 * gc_teardown_release.
 */
#ifndef GC_TEARDOWN_H
#define GC_TEARDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/log.h"
#include "core/provider.h"
#include "core/wait.h"

enum gc_teardown_fate {
	GC_TEARDOWN_TODO,    /* an instance not tried yet (never a hook's) */
	GC_TEARDOWN_ASKED,   /* an instance the cloud agreed to terminate, or one waited for */
	GC_TEARDOWN_DONE,    /* an instance terminated or no longer listed; a resource deleted */
	GC_TEARDOWN_KEPT,    /* a resource whose cluster has live instances again (err says) */
	GC_TEARDOWN_REFUSED, /* the cloud refused the call: err is the cloud's own error */
	GC_TEARDOWN_FAILED,  /* the wait gave up, or a look failed: err is worded */
	GC_TEARDOWN_STOPPED, /* never tried or no longer waited for: cancelled, or fatal */
};

struct gc_teardown_node {
	char *id;
	size_t tag;		      /* the caller's: a report group, a sweep item */
	enum gc_instance_state state; /* as the last look saw it */
	enum gc_teardown_fate fate;   /* TODO, ASKED (waited for), DONE (gone), or its end */
	/* A NotFound from terminate is no proof (eventual consistency, executor.md): */
	bool sent;	  /* the cloud took our terminate for it (the caller's, if it sent) */
	unsigned resends; /* terminates sent again while Describe showed it alive */
	unsigned since;	  /* looks since the last terminate */
	unsigned absent;  /* looks in a row that did not list it */
};

/* A key pair or security group to delete. Strings are borrowed. */
struct gc_teardown_resource {
	enum gc_resource_kind kind;
	const char *id;
	const char *name;    /* may be NULL */
	const char *cluster; /* whose live instances keep it (gc) */
	size_t tag;	     /* the caller's */
	/* a public address's instance (GC_TAG_INSTANCE): only that one alive keeps it (gc);
	 * NULL: any of the cluster's */
	const char *instance;
};

struct gc_teardown;

struct gc_teardown_hooks {
	/* An instance's fate; err is the cloud's own for REFUSED, worded for FAILED, else
	 * NULL (each caller words its own messages from these). */
	void (*instance)(void *ctx, const struct gc_teardown *t, const struct gc_teardown_node *n,
			 enum gc_teardown_fate fate, const struct gc_error *err);
	/* After each look of the wait (gone ones already marked), with the listing: may
	 * terminate more and gc_teardown_add them (not to terminate). -1 ends the wait. */
	int (*look)(void *ctx, struct gc_teardown *t, const struct gc_instance_list *now,
		    struct gc_error *err);
	/* Before any deletion: false leaves every key pair and security group alone. */
	bool (*may_delete)(void *ctx, struct gc_teardown *t);
	/* A resource's fate. r is NULL when listing them failed (FAILED, err worded). */
	void (*resource)(void *ctx, const struct gc_teardown *t,
			 const struct gc_teardown_resource *r, enum gc_teardown_fate fate,
			 const struct gc_error *err);
};

struct gc_teardown {
	/* configuration, set by the caller after gc_teardown_init */
	struct gc_provider *p;
	struct gc_log *log;  /* may be NULL */
	struct gc_wait wait; /* clock, cancel, poll interval (0: 2 s), timeout (0: 15 min) */
	/* destroy's: the wait and the listing of what to delete go by its tag (and sel), what
	 * comes back is checked again, a refused batch stops the rest, and nothing is deleted
	 * unless every instance was asked and gone. NULL (gc): any cluster, every batch is
	 * tried, and each of the resources goes only if its cluster has no live instance now. */
	const char *cluster;
	const char *label;		 /* prefix of the log lines ("us-east-1"), or NULL */
	const struct gc_tag_filter *sel; /* destroy --selector, with cluster */
	size_t n_sel;
	const struct gc_teardown_resource *resources; /* gc's, without cluster */
	size_t n_resources;
	bool no_wait; /* no wait, and no security group deleted (they refuse while in use) */
	const struct gc_teardown_hooks *hooks; /* may be NULL */
	void *ctx;

	/* state */
	struct gc_teardown_node *nodes;
	size_t n, alloc;
	bool fatal; /* an auth error: nothing more is attempted */
	struct gc_error fatal_err;
	uint64_t since_ns;   /* when the wait began */
	uint64_t elapsed_ms; /* of the wait, at its last look */
	size_t total, left;  /* gc_teardown_counts at the last look */
	unsigned poll_errors;
	bool look_failed; /* the wait ended on a failed look, not on its deadline or a cancel */
	/* a listing failed (the wait's last look, a resource listing, gc's check of a
	 * cluster): no key pair or security group is deleted after it */
	bool doubt;
	struct gc_error doubt_err; /* what later deletions fail with (gc) */
};

/* "key pair" or "security group", as messages name them. */
const char *gc_teardown_kind_text(enum gc_resource_kind kind);

/* After a listing failed: err prefixed "not deleting the key pair and security group"
 * (the security group alone on a cloud without key pairs), or with instances "not
 * terminating instances or deleting ...". Returns -1. */
int gc_teardown_doubt(const struct gc_provider *p, bool instances, struct gc_error *err);

void gc_teardown_init(struct gc_teardown *t);
void gc_teardown_release(struct gc_teardown *t);

/* Adds an instance: to terminate, or (terminate false) only to wait for. */
void gc_teardown_add(struct gc_teardown *t, const char *id, size_t tag,
		     enum gc_instance_state state, bool terminate);

/* Instances waited for, and of them those not gone yet. */
void gc_teardown_counts(const struct gc_teardown *t, size_t *total, size_t *left);

/* Step 1. Returns how many the cloud agreed to terminate; err (may be NULL) gets the
 * cloud's error for the first refused batch. */
size_t gc_teardown_terminate(struct gc_teardown *t, struct gc_error *err);

/* Step 2. An instance is gone when Describe says terminated, or when it is missing after
 * it was seen on its way out (terminating, stopping), or from more looks in a row than the
 * cloud's listing_lag_looks; one still listed pending, running or stopped after our
 * terminate is sent it again, after 1, 2, 4, 8, then every 16 looks. Returns 0 when every instance waited for is gone or the caller cancelled (the
 * rest are STOPPED), -1 with err when the wait failed or timed out (the rest FAILED). */
int gc_teardown_wait(struct gc_teardown *t, struct gc_error *err);

/* The three steps, gated as cluster says, by may_delete and by no_wait; every outcome goes
 * to the hooks, and err (may be NULL) gets the cloud's error for the first refused batch.
 * The wait happens when something is waited for, or when a look hook may find more.
 * Nothing is deleted after a failed listing (doubt), for destroy and gc alike: the
 * wait's error says so, and gc's resources fail with it. */
void gc_teardown_run(struct gc_teardown *t, struct gc_error *err);

/*
 * The instances of cluster (terminated ones only with include_terminated), by its tag
 * and nothing else; what comes back without it is dropped with a warning. cluster NULL:
 * every instance carrying the tag, whatever its value, taken as it comes.
 */
int gc_teardown_discover(struct gc_provider *p, struct gc_log *log, const char *cluster,
			 bool include_terminated, struct gc_instance_list *out,
			 struct gc_error *err);

#endif
