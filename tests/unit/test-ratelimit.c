/*
 * test-ratelimit.c: the token bucket, on a fake clock: bursts up to the capacity, exact
 * refill, computed waits, oversize requests, the sleeping form, and sharing a bucket
 * between threads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "core/ratelimit.h"
#include "fake-clock.h"

static int setup(void **state)
{
	(void)state;
	fc.now = 1000 * MS; /* not zero: nothing may assume the clock starts there */
	fc.slept = 0;
	fc.sleeps = 0;
	return 0;
}

static uint64_t take(struct gc_ratelimit *rl, uint64_t n)
{
	uint64_t wait = 12345;

	assert_int_equal(gc_ratelimit_take(rl, n, &wait, NULL), 0);
	return wait;
}

/* EC2's RunInstances resource bucket: 1000 tokens, 2 a second. */
static void test_burst_up_to_capacity(void **state)
{
	struct gc_ratelimit rl;
	struct gc_error err;
	unsigned i;

	(void)state;
	assert_int_equal(gc_ratelimit_init(&rl, 1000, 2, 1000, &fake, &err), 0);
	assert_int_equal(gc_ratelimit_available(&rl), 1000);
	for (i = 0; i < 600; i++)
		assert_int_equal(take(&rl, 1), 0);
	assert_int_equal(take(&rl, 400), 0);
	assert_int_equal(gc_ratelimit_available(&rl), 0);
	/* the next token is half a second away, and asking again does not change that */
	assert_int_equal(take(&rl, 1), 500);
	assert_int_equal(take(&rl, 1), 500);
	assert_int_equal(gc_ratelimit_available(&rl), 0);
	gc_ratelimit_release(&rl);
}

static void test_exact_refill(void **state)
{
	struct gc_ratelimit rl;
	unsigned i;

	(void)state;
	assert_int_equal(gc_ratelimit_init(&rl, 1000, 2, 1000, &fake, NULL), 0);
	assert_int_equal(take(&rl, 1000), 0);
	fc.now += 499 * MS;
	assert_int_equal(take(&rl, 1), 1);
	fc.now += 1 * MS;
	assert_int_equal(take(&rl, 1), 0);
	assert_int_equal(take(&rl, 1), 500);

	/* a thousand 1 ms steps, each asking, make exactly one second: 2 tokens, no drift */
	for (i = 0; i < 1000; i++) {
		fc.now += 1 * MS;
		(void)gc_ratelimit_available(&rl);
	}
	assert_int_equal(gc_ratelimit_available(&rl), 2);
	assert_int_equal(take(&rl, 2), 0);
	assert_int_equal(take(&rl, 1), 500);

	/* ten seconds of nothing: 20 tokens */
	fc.now += 10000 * MS;
	assert_int_equal(gc_ratelimit_available(&rl), 20);

	/* an hour idle fills the bucket and never past its capacity */
	fc.now += 3600ull * 1000 * MS;
	assert_int_equal(gc_ratelimit_available(&rl), 1000);
	fc.now += 3600ull * 1000 * MS;
	assert_int_equal(gc_ratelimit_available(&rl), 1000);

	/* a fake clock going back is no time, not a huge one */
	assert_int_equal(take(&rl, 1000), 0);
	fc.now -= 5000 * MS;
	assert_int_equal(gc_ratelimit_available(&rl), 0);
	gc_ratelimit_release(&rl);
}

static void test_waits(void **state)
{
	struct gc_ratelimit rl;

	(void)state;
	/* Tencent RunInstances: 10 a second */
	assert_int_equal(gc_ratelimit_init(&rl, 10, 10, 1000, &fake, NULL), 0);
	assert_int_equal(take(&rl, 10), 0);
	assert_int_equal(take(&rl, 1), 100);
	assert_int_equal(take(&rl, 5), 500);
	assert_int_equal(take(&rl, 10), 1000);
	fc.now += 250 * MS; /* 2.5 tokens */
	assert_int_equal(take(&rl, 3), 50);
	assert_int_equal(take(&rl, 2), 0);
	/* half a token left, so the next one is 50 ms off */
	assert_int_equal(take(&rl, 1), 50);
	gc_ratelimit_release(&rl);

	/* a per-minute limit, 10 per 60 s: one token every 6 s, waits rounded up to the ms */
	assert_int_equal(gc_ratelimit_init(&rl, 10, 10, 60000, &fake, NULL), 0);
	assert_int_equal(take(&rl, 10), 0);
	assert_int_equal(take(&rl, 1), 6000);
	fc.now += 5999 * MS + 1;
	assert_int_equal(take(&rl, 1), 1);
	fc.now += MS - 2;
	assert_int_equal(take(&rl, 1), 1);
	fc.now += 1;
	assert_int_equal(take(&rl, 1), 0);
	gc_ratelimit_release(&rl);

	/* a rate that does not divide a millisecond: 3 per second, 333.33 ms a token */
	assert_int_equal(gc_ratelimit_init(&rl, 3, 3, 1000, &fake, NULL), 0);
	assert_int_equal(take(&rl, 3), 0);
	assert_int_equal(take(&rl, 1), 334);
	assert_int_equal(take(&rl, 3), 1000);
	fc.now += 334 * MS;
	assert_int_equal(take(&rl, 1), 0);
	gc_ratelimit_release(&rl);

	/* 3.000001 ms of refill missing: the nanoseconds round up before the milliseconds do,
	 * or a caller waiting 1 ms would come back 1 unit short */
	assert_int_equal(gc_ratelimit_init(&rl, 3, 3, 1000, &fake, NULL), 0);
	assert_int_equal(take(&rl, 3), 0);
	fc.now += 332333333; /* 996999999 units: 3000001 short of a token */
	assert_int_equal(take(&rl, 1), 2);
	fc.now += 2 * MS;
	assert_int_equal(take(&rl, 1), 0);
	gc_ratelimit_release(&rl);
}

/* Whatever the rate and the moment, waiting the answer finds the tokens there, and
 * waiting one millisecond less does not (the answer is not padded). */
static void test_waiting_the_answer_is_enough(void **state)
{
	static const struct {
		uint64_t capacity, tokens, period_ms;
	} rates[] = {
		{ 1000, 2, 1000 }, { 10, 10, 1000 }, { 3, 3, 1000 },	{ 7, 1, 60000 },
		{ 100, 7, 999 },   { 5, 13, 17 },    { 1, 1, 3600000 },
	};
	uint64_t step = 12345679;
	size_t i;
	unsigned k;

	(void)state;
	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		struct gc_ratelimit rl;

		assert_int_equal(gc_ratelimit_init(&rl, rates[i].capacity, rates[i].tokens,
						   rates[i].period_ms, &fake, NULL),
				 0);
		for (k = 0; k < 200; k++) {
			uint64_t n = 1 + (step % rates[i].capacity), w, again;

			step = step * 6364136223846793005ull + 1442695040888963407ull;
			fc.now += (step >> 40) % (rates[i].period_ms * MS);
			w = take(&rl, n);
			if (w == 0)
				continue;
			fc.now += (w - 1) * MS;
			again = take(&rl, n);
			assert_true(again >= 1);
			fc.now += again * MS;
			assert_int_equal(take(&rl, n), 0);
		}
		gc_ratelimit_release(&rl);
	}
}

static void test_request_over_capacity_is_an_error(void **state)
{
	struct gc_ratelimit rl;
	struct gc_error err;
	uint64_t wait = 77;

	(void)state;
	assert_int_equal(gc_ratelimit_init(&rl, 100, 1, 1000, &fake, NULL), 0);
	gc_error_init(&err);
	assert_int_equal(gc_ratelimit_take(&rl, 101, &wait, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "101"));
	assert_int_equal(wait, 77); /* untouched */
	/* nothing was taken */
	assert_int_equal(gc_ratelimit_available(&rl), 100);
	/* and the sleeping form does not sleep forever either */
	gc_error_init(&err);
	assert_int_equal(gc_ratelimit_acquire(&rl, 101, 1000000, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(fc.sleeps, 0);
	/* zero tokens is a no-op; exactly the capacity is fine */
	assert_int_equal(take(&rl, 0), 0);
	assert_int_equal(take(&rl, 100), 0);
	gc_ratelimit_release(&rl);
}

static void test_init_rejects_bad_figures(void **state)
{
	struct gc_ratelimit rl;
	struct gc_error err;

	(void)state;
	assert_int_equal(gc_ratelimit_init(&rl, 0, 1, 1000, &fake, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(gc_ratelimit_init(&rl, 1, 0, 1000, &fake, &err), -1);
	assert_int_equal(gc_ratelimit_init(&rl, 1, 1, 0, &fake, &err), -1);
	/* capacity * period would not fit in 64-bit nanoseconds */
	gc_error_init(&err);
	assert_int_equal(gc_ratelimit_init(&rl, UINT64_MAX / 1000, 1, 1000, &fake, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(gc_ratelimit_init(&rl, 1, 1, UINT64_MAX, &fake, &err), -1);
}

static void test_acquire_sleeps_on_the_clock(void **state)
{
	struct gc_ratelimit rl;
	struct gc_error err;

	(void)state;
	assert_int_equal(gc_ratelimit_init(&rl, 4, 2, 1000, &fake, NULL), 0);
	assert_int_equal(gc_ratelimit_acquire(&rl, 4, 0, NULL), 0);
	assert_int_equal(fc.sleeps, 0);
	assert_int_equal(gc_ratelimit_acquire(&rl, 1, 1000, NULL), 0);
	assert_int_equal(fc.slept, 500 * MS);
	/* 4 tokens need 2 s: more than the 1 s allowed, so it fails without sleeping */
	gc_error_init(&err);
	assert_int_equal(gc_ratelimit_acquire(&rl, 4, 1000, &err), -1);
	assert_int_equal(err.code, GC_ETIMEOUT);
	assert_int_equal(fc.slept, 500 * MS);
	assert_int_equal(gc_ratelimit_acquire(&rl, 4, 2000, NULL), 0);
	assert_int_equal(fc.slept, 2500 * MS);
	gc_ratelimit_release(&rl);
}

/* A bucket that practically does not refill, shared by threads: exactly its capacity
 * is handed out, whatever the interleaving. */
struct shared {
	struct gc_ratelimit rl;
	pthread_mutex_t lock;
	unsigned granted;
};

static void *grabber(void *p)
{
	struct shared *s = p;
	uint64_t wait;
	unsigned mine = 0;

	for (;;) {
		if (gc_ratelimit_take(&s->rl, 1, &wait, NULL) < 0 || wait)
			break;
		mine++;
	}
	pthread_mutex_lock(&s->lock);
	s->granted += mine;
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void test_shared_between_threads(void **state)
{
	struct shared s;
	pthread_t t[8];
	unsigned i;

	(void)state;
	/* the real clock: one token an hour will not arrive during the test */
	assert_int_equal(gc_ratelimit_init(&s.rl, 400000, 1, 3600 * 1000, NULL, NULL), 0);
	pthread_mutex_init(&s.lock, NULL);
	s.granted = 0;
	for (i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, grabber, &s), 0);
	for (i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(s.granted, 400000);
	pthread_mutex_destroy(&s.lock);
	gc_ratelimit_release(&s.rl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_burst_up_to_capacity, setup),
		cmocka_unit_test_setup(test_exact_refill, setup),
		cmocka_unit_test_setup(test_waits, setup),
		cmocka_unit_test_setup(test_waiting_the_answer_is_enough, setup),
		cmocka_unit_test_setup(test_request_over_capacity_is_an_error, setup),
		cmocka_unit_test_setup(test_init_rejects_bad_figures, setup),
		cmocka_unit_test_setup(test_acquire_sleeps_on_the_clock, setup),
		cmocka_unit_test_setup(test_shared_between_threads, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
