/*
 * wait.h: the one way to wait: a cancellable sleep and a poll-until-deadline loop.
 *
 * Every wait in the product (instances to run or to go, a security group still in use,
 * host keys to appear in the console, a bucket to refill) is one of these two shapes. Both
 * sleep on a struct gc_clock (NULL: the real one), so tests wait on a fake clock without
 * waiting, and both notice a cancel (Ctrl-C, a CI cancellation) within GC_WAIT_SLICE_MS.
 * Retries of a failed request are not waits (core/retry.h): a wait here is for a state
 * the cloud reaches in its own time.
 *
 * Stateless: nothing to set up or release. A struct gc_wait is plain configuration.
 */
#ifndef GC_WAIT_H
#define GC_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/clock.h"
#include "core/error.h"

/* The longest single sleep: a cancel is noticed this fast. */
#define GC_WAIT_SLICE_MS 200u

/* Whether the caller asked to stop; NULL never does. */
struct gc_cancel {
	bool (*fn)(void *ctx);
	void *ctx;
};

bool gc_cancelled(const struct gc_cancel *c);

/*
 * Sleeps ms on clock in slices of at most GC_WAIT_SLICE_MS, checking c before each slice.
 * Returns 0 after the whole sleep, -1 as soon as c says stop (the rest is not slept).
 */
int gc_wait_sleep(const struct gc_clock *clock, const struct gc_cancel *c, uint64_t ms);

/* One look at what is awaited: 0 done, 1 not yet, -1 failed (err filled). */
typedef int (*gc_wait_poll_fn)(void *ctx, struct gc_error *err);

struct gc_wait {
	const struct gc_clock *clock;	/* NULL: the real clock */
	const struct gc_cancel *cancel; /* NULL: never cancelled */
	uint64_t interval_ms;		/* between looks; 0: GC_WAIT_SLICE_MS */
	uint64_t timeout_ms;		/* from the first look; 0: no deadline */
	const char *what;		/* "instances to run": names the wait in its errors */
};

/*
 * Looks with poll until it says done (0) or failed (-1, its error kept), the deadline
 * passes (GC_ETIMEOUT, "timed out after N s waiting for WHAT") or the caller cancels
 * (GC_ECANCELLED, "cancelled while waiting for WHAT"). The first look is immediate; a
 * look is never started past the deadline, and the last sleep is cut to end at it.
 * Returns 0 when done, -1 otherwise.
 */
int gc_wait_until(const struct gc_wait *w, gc_wait_poll_fn poll, void *ctx, struct gc_error *err);

#endif
