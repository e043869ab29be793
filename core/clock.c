/*
 * clock.c: CLOCK_MONOTONIC and nanosleep behind struct gc_clock (see clock.h).
 */
#include <errno.h>
#include <time.h>

#include "core/clock.h"

#define NS_PER_MS GC_NS_PER_MS
#define NS_PER_S  GC_NS_PER_S

static uint64_t mono_now_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	/* CLOCK_MONOTONIC cannot fail with a valid pointer on Linux */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void mono_sleep_ns(void *ctx, uint64_t ns)
{
	struct timespec req, rem;

	(void)ctx;
	req.tv_sec = (time_t)(ns / NS_PER_S);
	req.tv_nsec = (long)(ns % NS_PER_S);
	/* a signal handler (SIGINT for cancellation) must not cut a backoff short silently:
	 * the caller checks for cancellation itself after the sleep */
	while (nanosleep(&req, &rem) < 0 && errno == EINTR)
		req = rem;
}

const struct gc_clock gc_clock_monotonic = {
	.now_ns = mono_now_ns,
	.sleep_ns = mono_sleep_ns,
	.ctx = NULL,
};

uint64_t gc_clock_now_ns(const struct gc_clock *clock)
{
	if (!clock)
		clock = &gc_clock_monotonic;
	return clock->now_ns(clock->ctx);
}

void gc_clock_sleep_ms(const struct gc_clock *clock, uint64_t ms)
{
	if (!clock)
		clock = &gc_clock_monotonic;
	if (ms)
		clock->sleep_ns(clock->ctx,
				ms > UINT64_MAX / NS_PER_MS ? UINT64_MAX : ms * NS_PER_MS);
}
