/*
 * fake-clock.h: a struct gc_clock for tests whose sleep advances time instantly and
 * counts what was slept. Header-only; include it in one test file at a time.
 */
#ifndef GC_TEST_FAKE_CLOCK_H
#define GC_TEST_FAKE_CLOCK_H

#include <stdint.h>

#include "core/clock.h"

#define MS 1000000ull

struct fake_clock {
	uint64_t now;
	uint64_t slept;
	unsigned sleeps;
};

static uint64_t fake_now(void *ctx)
{
	return ((struct fake_clock *)ctx)->now;
}

static void fake_sleep(void *ctx, uint64_t ns)
{
	struct fake_clock *c = ctx;

	c->now += ns;
	c->slept += ns;
	c->sleeps++;
}

static struct fake_clock fc;
static const struct gc_clock fake = { fake_now, fake_sleep, &fc };

#endif
