/*
 * ratelimit.h: a token bucket rate limiter, to stay under a cloud's API rate limits
 * instead of discovering them through throttling errors. A bucket holds up to `capacity`
 * tokens and gains `refill_tokens` every `refill_period_ms`, continuously (not in steps).
 * It starts full, so a burst up to the capacity goes out at once, as the clouds' own
 * buckets allow. Each driver's figures are in its page of docs/internals/.
 *
 * Invariants: tokens never exceed capacity; refill is exact (integer arithmetic in
 * token-nanoseconds, no drift however often it is asked); a request for more than the
 * capacity is an error (it could never be served), not an endless wait. Asking does not
 * reserve: a caller told to wait N ms asks again after waiting.
 *
 * Thread-safe: one bucket may be shared by many threads (internal mutex). The clock is
 * injectable; NULL means CLOCK_MONOTONIC.
 *
 * Life cycle: gc_ratelimit_init -> gc_ratelimit_take / gc_ratelimit_acquire... ->
 * gc_ratelimit_release.
 */
#ifndef GC_RATELIMIT_H
#define GC_RATELIMIT_H

#include <pthread.h>
#include <stdint.h>

#include "core/error.h"
#include "core/retry.h"

struct gc_ratelimit {
	pthread_mutex_t lock;
	const struct gc_clock *clock;
	uint64_t capacity;	/* tokens */
	uint64_t refill_tokens; /* tokens gained per period */
	uint64_t period_ns;
	/* The level, in units of 1/period_ns of a token: each nanosecond adds exactly
	 * refill_tokens units and one token is period_ns units, so refill never rounds. */
	uint64_t units;
	uint64_t last_ns; /* clock reading the units were last brought up to date at */
};

/*
 * Sets up a full bucket. Fails with GC_EINVALID when a figure is zero or the bucket is so
 * large that its arithmetic would overflow (capacity * period beyond 2^64 ns).
 */
int gc_ratelimit_init(struct gc_ratelimit *rl, uint64_t capacity, uint64_t refill_tokens,
		      uint64_t refill_period_ms, const struct gc_clock *clock,
		      struct gc_error *err);
void gc_ratelimit_release(struct gc_ratelimit *rl);

/*
 * Asks for n tokens. If they are there, takes them and sets *wait_ms to 0 ("proceed
 * now"). If not, takes nothing and sets *wait_ms to how long until they will be (rounded
 * up, so a caller waiting that long finds them, absent competition). Returns 0, or -1
 * with GC_EINVALID (and *wait_ms untouched) when n exceeds the capacity.
 */
int gc_ratelimit_take(struct gc_ratelimit *rl, uint64_t n, uint64_t *wait_ms, struct gc_error *err);

/*
 * Synchronous form: takes n tokens, sleeping on the bucket's clock as long as needed but
 * no longer than max_wait_ms in all. Returns 0, or -1 with GC_ETIMEOUT if the tokens would
 * not come in time (it does not sleep in vain: it gives up as soon as it knows), or
 * GC_EINVALID as above.
 */
int gc_ratelimit_acquire(struct gc_ratelimit *rl, uint64_t n, uint64_t max_wait_ms,
			 struct gc_error *err);

/* Whole tokens available now (for logs and tests). */
uint64_t gc_ratelimit_available(struct gc_ratelimit *rl);

#endif
