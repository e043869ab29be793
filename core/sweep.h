/*
 * sweep.h: selectors, and the garbage collector behind `gpucluster gc`.
 *
 * A selector is what a user types after --selector: "KEY=VALUE", meaning the tag
 * gpucluster:KEY=VALUE ("run-id=123"). `destroy --selector` and `gc --selector` keep
 * only what carries every selector given.
 *
 * The sweep works on one region at a time, with no spec and no cluster in mind: the scan
 * lists what carries the gpucluster:cluster tag (any value; nothing without it can ever
 * be deleted), a pure classification says why each item is collected (expired, orphaned
 * after a grace period, selected: the rules are in docs/internals/executor.md, "gc"), and
 * the execution is destroy's teardown (core/teardown.h) with one more look for live
 * instances of a cluster before its key pair or security group goes.
 *
 * Life cycle: gc_sweep_init -> gc_sweep_scan (per region) -> gc_sweep_classify ->
 * (gc_sweep_execute per region) -> gc_sweep_release. Items own their strings.
 */
#ifndef GC_SWEEP_H
#define GC_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/provider.h"

/* ---- selectors ------------------------------------------------------------------- */

#define GC_SELECTORS_MAX      16
#define GC_SELECTOR_KEY_MAX   64
#define GC_SELECTOR_VALUE_MAX 256

struct gc_selectors {
	struct gc_tag *tags;	       /* "gpucluster:KEY" and VALUE, owned */
	struct gc_tag_filter *filters; /* the same, as provider filters (point into tags) */
	size_t n;
};

void gc_selectors_init(struct gc_selectors *s);
void gc_selectors_release(struct gc_selectors *s);

/*
 * Adds one "KEY=VALUE". KEY is lowercase letters, digits and '-' (a leading
 * "gpucluster:" is accepted and dropped); VALUE is not empty and has no control
 * characters. The same selector twice counts once; the same key with another value is an
 * error (nothing could match both). Fails with GC_EINVALID naming the text.
 */
int gc_selectors_add(struct gc_selectors *s, const char *text, struct gc_error *err);

/* Whether tags carry every selector (true when there are none). */
bool gc_selectors_match(const struct gc_selectors *s, const struct gc_tag *tags, size_t n_tags);

/* "run-id=123 repository=org/repo", as the user wrote them, for messages. */
void gc_selectors_format(const struct gc_selectors *s, struct gc_buf *out);

/* ---- the sweep ------------------------------------------------------------------- */

enum gc_sweep_kind {
	GC_SWEEP_INSTANCE,
	GC_SWEEP_KEYPAIR,
	GC_SWEEP_SECGROUP,
	GC_SWEEP_PLACEMENT, /* placement: cluster (docs/internals/fabric.md) */
	GC_SWEEP_ADDRESS,   /* a node's public address (fabric.md): its own instance keeps it */
};

/* "instance", "key-pair", "security-group" */
const char *gc_sweep_kind_name(enum gc_sweep_kind k);

/* Why an item is collected: bits of gc_sweep_item.why and gc_sweep_opts.want. */
#define GC_SWEEP_EXPIRED  (1u << 0)
#define GC_SWEEP_ORPHANED (1u << 1)
#define GC_SWEEP_SELECTED (1u << 2)
/* a node that powered itself off (idle stop, run --down --detach) and stopped, on a cloud
 * where a shutdown stops: collected with the expired ones (docs/internals/idle.md) */
#define GC_SWEEP_STOPPED (1u << 3)

/* "expired,orphaned" for why's bits (out has room for 32). */
void gc_sweep_why_text(unsigned why, char out[32]);

enum gc_sweep_outcome {
	GC_SWEEP_LISTED = 0, /* not acted on (a dry run, or not collected) */
	GC_SWEEP_DONE,	     /* terminated / deleted */
	GC_SWEEP_KEPT,	     /* collected, then left alone: err.message says why */
	GC_SWEEP_FAILED,     /* err says why */
};

struct gc_sweep_item {
	enum gc_sweep_kind kind;
	char *region;
	char *id;
	char *name;    /* the Name tag of an instance, a resource's name; may be NULL */
	char *cluster; /* GC_TAG_CLUSTER, never NULL */
	enum gc_instance_state state; /* instances */
	int64_t created;	      /* launch time, or GC_TAG_CREATED_AT; 0 when unknown */
	int64_t expires_at;	      /* GC_TAG_EXPIRES_AT; 0 when none */
	struct gc_tag *tags;
	size_t n_tags;
	unsigned why; /* GC_SWEEP_* bits; 0: not collected */
	enum gc_sweep_outcome outcome;
	struct gc_error err;
};

struct gc_sweep {
	struct gc_sweep_item *items;
	size_t n, alloc;
};

struct gc_sweep_opts {
	unsigned want;			/* GC_SWEEP_* reasons to collect for */
	const struct gc_selectors *sel; /* NULL or empty: no narrowing */
	int64_t now;			/* unix seconds */
	int64_t grace_s;		/* orphans younger than this are left alone */
};

void gc_sweep_init(struct gc_sweep *s);
void gc_sweep_release(struct gc_sweep *s);

/* Appends everything of p's region carrying GC_TAG_CLUSTER (terminated instances left
 * out). All or nothing: on failure the region's items are dropped (nothing of a region
 * listed in doubt is deleted) and err says "not deleting anything in REGION: ...". */
int gc_sweep_scan(struct gc_sweep *s, struct gc_provider *p, struct gc_error *err);

/* Sets every item's why. Pure: calls nothing. Terminating instances are never collected
 * but count as their cluster's (they may still hold its security group); an orphan needs
 * its gpucluster:created-at at least grace_s old, so an apply that has made its key pair
 * and not launched yet keeps it. Selectors narrow the other reasons. */
void gc_sweep_classify(struct gc_sweep *s, const struct gc_sweep_opts *o);

/* Items with a why. */
size_t gc_sweep_count(const struct gc_sweep *s);

struct gc_sweep_exec_opts {
	const struct gc_clock *clock; /* NULL: monotonic */
	uint64_t wait_timeout_ms;     /* the wait for terminations; 0: 15 minutes */
	uint64_t poll_ms;	      /* 0: 2000 */
	bool (*cancelled)(void *ctx); /* polled between calls and while waiting; may be NULL */
	void *cancel_ctx;
	/* Called once per collected item, as its outcome is known. */
	void (*progress)(void *ctx, const struct gc_sweep_item *it);
	void *progress_ctx;
	struct gc_log *log; /* may be NULL */
};

/*
 * Acts on the collected items of p's region (see above) and sets their outcomes. Returns
 * 0 when every one ended DONE or KEPT, else -1 with err summarising (GC_ECANCELLED when
 * cancelled, GC_EAUTH when the credentials were refused: then nothing more is tried).
 */
int gc_sweep_execute(struct gc_sweep *s, struct gc_provider *p, const struct gc_sweep_exec_opts *o,
		     struct gc_error *err);

#endif
