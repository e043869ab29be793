/*
 * retry.h: the one retry policy: backoff with full jitter, a retry quota and a deadline.
 * The rules and figures, and their sources: docs/internals/retry.md.
 *
 * Two ways to use it. Async code that cannot sleep calls gc_retry_decide() after each
 * failure and schedules the retry itself; synchronous code calls gc_retry_pause(), which
 * decides and sleeps. Both must call gc_retry_succeeded() after a success, so the quota
 * is refilled. Time and randomness are injectable (NULL: the real ones) so tests are
 * deterministic.
 *
 * Life cycle: a struct gc_retry_policy is plain configuration (zero fields mean the
 * defaults below) and may be shared read-only. A struct gc_retry_quota is shared between
 * threads (it has its own mutex): gc_retry_quota_init -> ... -> gc_retry_quota_release.
 * A struct gc_retry is the state of ONE logical operation and belongs to one thread:
 * gc_retry_begin -> (decide | pause)... -> succeeded; it holds no resources.
 */
#ifndef GC_RETRY_H
#define GC_RETRY_H

#include <pthread.h>
#include <stdint.h>

#include "core/clock.h"
#include "core/error.h"

#define GC_RETRY_DEFAULT_MAX_ATTEMPTS 3
/* a wrong-shaped answer is retried at most this many times in all, whatever the policy */
#define GC_RETRY_BADRESPONSE_MAX_ATTEMPTS 3
#define GC_RETRY_BASE_TRANSIENT_MS	  50
#define GC_RETRY_BASE_THROTTLE_MS	  1000
#define GC_RETRY_MAX_BACKOFF_MS		  20000
#define GC_RETRY_QUOTA_INITIAL		  500
#define GC_RETRY_COST			  14 /* a retry after a transient error or timeout */
#define GC_RETRY_COST_THROTTLED		  5  /* a retry after throttling: the server asked */
#define GC_RETRY_SUCCESS_INCREMENT	  1  /* a first-attempt success */

/* Returns a uniformly distributed 64-bit value. Must be thread-safe if shared. */
typedef uint64_t (*gc_rng_fn)(void *ctx);

struct gc_retry_quota {
	pthread_mutex_t lock;
	unsigned tokens;
	unsigned capacity;
};

/* capacity 0 means GC_RETRY_QUOTA_INITIAL. The bucket starts full. */
void gc_retry_quota_init(struct gc_retry_quota *q, unsigned capacity);
void gc_retry_quota_release(struct gc_retry_quota *q);
unsigned gc_retry_quota_available(struct gc_retry_quota *q);

struct gc_retry_policy {
	unsigned max_attempts;	      /* 0: GC_RETRY_DEFAULT_MAX_ATTEMPTS; 1: never retry */
	uint64_t base_transient_ms;   /* 0: GC_RETRY_BASE_TRANSIENT_MS */
	uint64_t base_throttle_ms;    /* 0: GC_RETRY_BASE_THROTTLE_MS */
	uint64_t max_backoff_ms;      /* 0: GC_RETRY_MAX_BACKOFF_MS */
	uint64_t deadline_ms;	      /* budget from gc_retry_begin; 0: no deadline */
	struct gc_retry_quota *quota; /* NULL: no quota */
	const struct gc_clock *clock; /* NULL: gc_clock_monotonic */
	gc_rng_fn rng;		      /* NULL: OpenSSL's RNG */
	void *rng_ctx;
};

enum gc_retry_reason {
	GC_RETRY_RETRYABLE = 0, /* retrying: the error is retryable and budgets allow */
	GC_RETRY_NOT_RETRYABLE, /* giving up: the error does not go away by retrying */
	GC_RETRY_MAX_ATTEMPTS,	/* giving up: max_attempts made */
	GC_RETRY_QUOTA_EMPTY,	/* giving up: the shared retry quota cannot pay */
	GC_RETRY_DEADLINE,	/* giving up: the retry would start at or past the deadline */
};

struct gc_retry_decision {
	int retry;		     /* 1: retry after delay_ms; 0: give up */
	uint64_t delay_ms;	     /* 0 when giving up */
	enum gc_retry_reason reason; /* why */
};

struct gc_retry {
	const struct gc_retry_policy *policy;
	unsigned attempts; /* attempts that have failed so far */
	uint64_t start_ns;
	unsigned held_cost; /* quota tokens paid for the retry now in flight */
};

/* The name of a reason: "retryable", "not retryable", "max attempts", ... */
const char *gc_retry_reason_name(enum gc_retry_reason reason);

/*
 * The pure backoff: the jittered delay before retry `retry_index` (0 for the first retry)
 * after an error of `code`, given a random value. Result in
 * [0, min(max_backoff, base * 2^retry_index)], base chosen by the code.
 */
uint64_t gc_retry_backoff_ms(const struct gc_retry_policy *policy, enum gc_errcode code,
			     unsigned retry_index, uint64_t random);

/* Starts one logical operation: records the start time for the deadline. */
void gc_retry_begin(struct gc_retry *r, const struct gc_retry_policy *policy);

/*
 * After a failed attempt with `code`: whether to retry and after how long. Never sleeps.
 * retry_after_ms is the server's hint, or a negative value when there is none. A
 * decision to retry has already paid its quota tokens.
 */
struct gc_retry_decision gc_retry_decide(struct gc_retry *r, enum gc_errcode code,
					 int64_t retry_after_ms);

/*
 * Synchronous form: decides from err->code, and either sleeps the delay (on the policy's
 * clock) and returns 0, or leaves the error's code as it was, prefixes its message with
 * why we gave up, and returns -1. err must not be NULL.
 */
int gc_retry_pause(struct gc_retry *r, struct gc_error *err, int64_t retry_after_ms);

/* After a successful attempt: refunds the quota (see retry.md). */
void gc_retry_succeeded(struct gc_retry *r);

#endif
