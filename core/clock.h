/*
 * clock.h: the monotonic clock every wait goes through.
 *
 * Code that waits (retry backoff, rate limiting, polling until instances run) takes a
 * const struct gc_clock *, NULL meaning the real clock. Tests pass a fake whose sleep
 * advances the fake time, so waiting code is tested without waiting. Stateless: the
 * real clock needs no set-up or release.
 */
#ifndef GC_CLOCK_H
#define GC_CLOCK_H

#include <stdint.h>

#define GC_NS_PER_MS 1000000ull
#define GC_NS_PER_S  1000000000ull

/* A monotonic clock with a matching sleep. */
struct gc_clock {
	uint64_t (*now_ns)(void *ctx);
	void (*sleep_ns)(void *ctx, uint64_t ns);
	void *ctx;
};

/* CLOCK_MONOTONIC and nanosleep (restarted on EINTR). */
extern const struct gc_clock gc_clock_monotonic;

/* Helpers that accept NULL for the real clock. */
uint64_t gc_clock_now_ns(const struct gc_clock *clock);
void gc_clock_sleep_ms(const struct gc_clock *clock, uint64_t ms);

#endif
