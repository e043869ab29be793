/*
 * test-retry.c: the retry policy with an injected clock and RNG: jitter bounds for both
 * bases, the retry quota under a storm and its refill, the deadline, non-retryable codes,
 * max attempts, the server's retry-after hint, and the sleeping form; and the drivers'
 * retry of a NotFound for what the session just made (eventual consistency).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/driver.h"
#include "core/retry.h"
#include "fake-clock.h"

/* splitmix64: a deterministic stream that covers the 64-bit range */
static uint64_t split_rng(void *ctx)
{
	uint64_t *s = ctx, z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* returns whatever the test put there */
static uint64_t fixed_rng(void *ctx)
{
	return *(uint64_t *)ctx;
}

static int setup(void **state)
{
	(void)state;
	fc.now = 5000 * MS;
	fc.slept = 0;
	fc.sleeps = 0;
	return 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static void check_bounds(enum gc_errcode code, uint64_t base)
{
	struct gc_retry_policy p = { 0 };
	uint64_t seed = 42;
	unsigned i, k;

	for (i = 0; i < 40; i++) {
		uint64_t ceiling = i < 20 ? min_u64(20000, base << i) : 20000;
		uint64_t seen_max = 0;

		for (k = 0; k < 2000; k++) {
			uint64_t d = gc_retry_backoff_ms(&p, code, i, split_rng(&seed));

			assert_true(d <= ceiling);
			if (d > seen_max)
				seen_max = d;
		}
		/* the whole range is used: full jitter, not "half plus jitter" */
		assert_true(seen_max > ceiling / 2);
		assert_int_equal(gc_retry_backoff_ms(&p, code, i, 0), 0);
		assert_int_equal(gc_retry_backoff_ms(&p, code, i, ceiling), ceiling);
		assert_int_equal(gc_retry_backoff_ms(&p, code, i, UINT64_MAX) <= ceiling, 1);
	}
}

static void test_backoff_bounds_both_bases(void **state)
{
	(void)state;
	check_bounds(GC_ETRANSIENT, 50);
	check_bounds(GC_ETIMEOUT, 50);
	check_bounds(GC_ETHROTTLED, 1000);
}

static void test_backoff_custom_figures(void **state)
{
	struct gc_retry_policy p = { 0 };

	(void)state;
	p.base_transient_ms = 10;
	p.base_throttle_ms = 300;
	p.max_backoff_ms = 1000;
	assert_int_equal(gc_retry_backoff_ms(&p, GC_ETRANSIENT, 3, 80), 80);
	assert_int_equal(gc_retry_backoff_ms(&p, GC_ETRANSIENT, 3, 81), 0); /* 81 % 81 */
	assert_int_equal(gc_retry_backoff_ms(&p, GC_ETHROTTLED, 1, 600), 600);
	assert_int_equal(gc_retry_backoff_ms(&p, GC_ETHROTTLED, 2, 1000), 1000); /* capped */
	assert_int_equal(gc_retry_backoff_ms(&p, GC_ETHROTTLED, 2, 1001), 0);
	/* huge indexes do not overflow */
	assert_int_equal(gc_retry_backoff_ms(&p, GC_ETHROTTLED, 4000000000u, 1000), 1000);
}

static void test_decide_uses_bounds(void **state)
{
	struct gc_retry_policy p = { 0 };
	struct gc_retry r;
	struct gc_retry_decision d;
	uint64_t seed = 7;
	unsigned i;

	(void)state;
	p.clock = &fake;
	p.rng = split_rng;
	p.rng_ctx = &seed;
	p.max_attempts = 12;
	gc_retry_begin(&r, &p);
	for (i = 0; i < 11; i++) {
		d = gc_retry_decide(&r, GC_ETHROTTLED, -1);
		assert_int_equal(d.retry, 1);
		assert_int_equal(d.reason, GC_RETRY_RETRYABLE);
		assert_true(d.delay_ms <= min_u64(20000, 1000ull << i));
	}
	d = gc_retry_decide(&r, GC_ETHROTTLED, -1);
	assert_int_equal(d.retry, 0);
	assert_int_equal(d.reason, GC_RETRY_MAX_ATTEMPTS);
	assert_int_equal(d.delay_ms, 0);
}

static void test_default_rng_varies(void **state)
{
	struct gc_retry_policy p = { 0 };
	struct gc_retry r;
	uint64_t first = 0;
	int differ = 0;
	unsigned i;

	(void)state;
	p.max_attempts = 2;
	for (i = 0; i < 100; i++) {
		struct gc_retry_decision d;

		gc_retry_begin(&r, &p);
		d = gc_retry_decide(&r, GC_ETRANSIENT, -1);
		assert_int_equal(d.retry, 1);
		assert_true(d.delay_ms <= 50);
		if (i == 0)
			first = d.delay_ms;
		else if (d.delay_ms != first)
			differ = 1;
	}
	assert_true(differ);
}

static void test_quota_storm_and_refill(void **state)
{
	struct gc_retry_quota q;
	struct gc_retry_policy p = { 0 };
	struct gc_retry r;
	struct gc_retry_decision d;
	uint64_t zero = 0;
	unsigned i, retries = 0;

	(void)state;
	gc_retry_quota_init(&q, 0);
	assert_int_equal(gc_retry_quota_available(&q), 500);
	p.quota = &q;
	p.clock = &fake;
	p.rng = fixed_rng;
	p.rng_ctx = &zero;

	/* a storm of 5xx: each operation's retry pays 14, until 500 cannot pay */
	for (i = 0; i < 100; i++) {
		gc_retry_begin(&r, &p);
		d = gc_retry_decide(&r, GC_ETRANSIENT, -1);
		if (!d.retry) {
			assert_int_equal(d.reason, GC_RETRY_QUOTA_EMPTY);
			break;
		}
		retries++;
	}
	assert_int_equal(retries, 500 / 14);
	assert_int_equal(gc_retry_quota_available(&q), 500 % 14);
	/* timeouts cost the same as other transient errors */
	gc_retry_begin(&r, &p);
	d = gc_retry_decide(&r, GC_ETIMEOUT, -1);
	assert_int_equal(d.retry, 0);
	assert_int_equal(d.reason, GC_RETRY_QUOTA_EMPTY);
	/* throttling is cheaper: 10 left pays for two more */
	for (i = 0; i < 2; i++) {
		gc_retry_begin(&r, &p);
		assert_int_equal(gc_retry_decide(&r, GC_ETHROTTLED, -1).retry, 1);
	}
	assert_int_equal(gc_retry_quota_available(&q), 0);
	gc_retry_begin(&r, &p);
	d = gc_retry_decide(&r, GC_ETHROTTLED, -1);
	assert_int_equal(d.retry, 0);
	assert_int_equal(d.reason, GC_RETRY_QUOTA_EMPTY);

	/* a success after a retry gives back what that retry paid */
	gc_retry_quota_release(&q);
	gc_retry_quota_init(&q, 0);
	gc_retry_begin(&r, &p);
	assert_int_equal(gc_retry_decide(&r, GC_ETRANSIENT, -1).retry, 1);
	assert_int_equal(gc_retry_quota_available(&q), 486);
	assert_int_equal(gc_retry_decide(&r, GC_ETRANSIENT, -1).retry, 1);
	assert_int_equal(gc_retry_quota_available(&q), 472);
	gc_retry_succeeded(&r);
	assert_int_equal(gc_retry_quota_available(&q), 486);
	gc_retry_begin(&r, &p);
	assert_int_equal(gc_retry_decide(&r, GC_ETHROTTLED, -1).retry, 1);
	assert_int_equal(gc_retry_quota_available(&q), 481);
	gc_retry_succeeded(&r);
	assert_int_equal(gc_retry_quota_available(&q), 486);

	/* first-attempt successes refill one token each, up to the capacity and no further */
	for (i = 0; i < 20; i++) {
		gc_retry_begin(&r, &p);
		gc_retry_succeeded(&r);
	}
	assert_int_equal(gc_retry_quota_available(&q), 500);
	gc_retry_quota_release(&q);

	/* an emptied quota comes back through successes */
	gc_retry_quota_init(&q, 28);
	for (i = 0; i < 2; i++) {
		gc_retry_begin(&r, &p);
		assert_int_equal(gc_retry_decide(&r, GC_ETRANSIENT, -1).retry, 1);
	}
	gc_retry_begin(&r, &p);
	assert_int_equal(gc_retry_decide(&r, GC_ETRANSIENT, -1).reason, GC_RETRY_QUOTA_EMPTY);
	for (i = 0; i < 14; i++) {
		gc_retry_begin(&r, &p);
		gc_retry_succeeded(&r);
	}
	gc_retry_begin(&r, &p);
	assert_int_equal(gc_retry_decide(&r, GC_ETRANSIENT, -1).retry, 1);
	gc_retry_quota_release(&q);
}

static void test_deadline_stops_retries(void **state)
{
	struct gc_retry_quota q;
	struct gc_retry_policy p = { 0 };
	struct gc_retry r;
	struct gc_retry_decision d;
	uint64_t zero = 0;

	(void)state;
	gc_retry_quota_init(&q, 0);
	p.clock = &fake;
	p.rng = fixed_rng;
	p.rng_ctx = &zero;
	p.max_attempts = 100;
	p.deadline_ms = 1000;
	p.quota = &q;
	gc_retry_begin(&r, &p);
	d = gc_retry_decide(&r, GC_ETRANSIENT, -1);
	assert_int_equal(d.retry, 1);
	fc.now += 900 * MS;
	/* 100 ms left: a 99 ms wait fits, a 100 ms wait would end at the deadline */
	d = gc_retry_decide(&r, GC_ETHROTTLED, 99);
	assert_int_equal(d.retry, 1);
	assert_int_equal(d.delay_ms, 99);
	d = gc_retry_decide(&r, GC_ETHROTTLED, 100);
	assert_int_equal(d.retry, 0);
	assert_int_equal(d.reason, GC_RETRY_DEADLINE);
	/* a refused retry costs no quota */
	assert_int_equal(gc_retry_quota_available(&q), 500 - 14 - 5);
	fc.now += 100 * MS;
	d = gc_retry_decide(&r, GC_ETRANSIENT, -1); /* even a zero delay is too late now */
	assert_int_equal(d.retry, 0);
	assert_int_equal(d.reason, GC_RETRY_DEADLINE);
	gc_retry_quota_release(&q);
}

/* A wrong-shaped answer is retried, but only a few times, even under a generous policy. */
static void test_bad_response_retried_a_few_times(void **state)
{
	struct gc_retry_policy p = { 0 };
	struct gc_retry r;
	struct gc_retry_decision d;
	uint64_t zero = 0;
	unsigned n;

	(void)state;
	p.clock = &fake;
	p.rng = fixed_rng;
	p.rng_ctx = &zero;
	p.max_attempts = 10;
	gc_retry_begin(&r, &p);
	for (n = 1; n < GC_RETRY_BADRESPONSE_MAX_ATTEMPTS; n++) {
		d = gc_retry_decide(&r, GC_EBADRESPONSE, -1);
		assert_int_equal(d.retry, 1);
	}
	d = gc_retry_decide(&r, GC_EBADRESPONSE, -1);
	assert_int_equal(d.retry, 0);
	assert_int_equal(d.reason, GC_RETRY_MAX_ATTEMPTS);
	assert_int_equal(r.attempts, GC_RETRY_BADRESPONSE_MAX_ATTEMPTS);
	/* a transient error under the same policy still gets its ten */
	gc_retry_begin(&r, &p);
	for (n = 1; n < 10; n++)
		assert_int_equal(gc_retry_decide(&r, GC_ETRANSIENT, -1).retry, 1);
	assert_int_equal(gc_retry_decide(&r, GC_ETRANSIENT, -1).retry, 0);
	assert_string_equal(gc_strerror(GC_EBADRESPONSE), "invalid-response");
	assert_string_equal(gc_strerror(GC_ESPOTQUOTA), "spot-quota");
}

static void test_non_retryable_never_retry(void **state)
{
	static const enum gc_errcode codes[] = {
		GC_OK,	       GC_EGENERIC, GC_EINVALID,     GC_ENOTFOUND,    GC_ECAPACITY,
		GC_EQUOTA,     GC_EAUTH,    GC_EIDEMPOTENCY, GC_EUNSUPPORTED, GC_ETOOBIG,
		GC_ECANCELLED, GC_ELOCKED,  GC_EIO,	     GC_ESPOTQUOTA,
	};
	struct gc_retry_quota q;
	struct gc_retry_policy p = { 0 };
	struct gc_retry r;
	uint64_t zero = 0;
	size_t i;

	(void)state;
	gc_retry_quota_init(&q, 0);
	p.clock = &fake;
	p.rng = fixed_rng;
	p.rng_ctx = &zero;
	p.max_attempts = 10;
	p.quota = &q;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		struct gc_retry_decision d;

		gc_retry_begin(&r, &p);
		d = gc_retry_decide(&r, codes[i], 0);
		assert_int_equal(d.retry, 0);
		assert_int_equal(d.reason, GC_RETRY_NOT_RETRYABLE);
	}
	assert_int_equal(gc_retry_quota_available(&q), 500);
	gc_retry_quota_release(&q);
}

static void test_max_attempts(void **state)
{
	struct gc_retry_policy p = { 0 };
	struct gc_retry r;
	uint64_t zero = 0;

	(void)state;
	p.clock = &fake;
	p.rng = fixed_rng;
	p.rng_ctx = &zero;
	/* the default, 3 attempts: two retries */
	gc_retry_begin(&r, &p);
	assert_int_equal(gc_retry_decide(&r, GC_ETRANSIENT, -1).retry, 1);
	assert_int_equal(gc_retry_decide(&r, GC_ETRANSIENT, -1).retry, 1);
	assert_int_equal(gc_retry_decide(&r, GC_ETRANSIENT, -1).reason, GC_RETRY_MAX_ATTEMPTS);
	/* one attempt: never a retry */
	p.max_attempts = 1;
	gc_retry_begin(&r, &p);
	assert_int_equal(gc_retry_decide(&r, GC_ETHROTTLED, -1).reason, GC_RETRY_MAX_ATTEMPTS);
}

static void test_retry_after_honoured(void **state)
{
	struct gc_retry_policy p = { 0 };
	struct gc_retry r;
	struct gc_retry_decision d;
	uint64_t rnd = 0;

	(void)state;
	p.clock = &fake;
	p.rng = fixed_rng;
	p.rng_ctx = &rnd;
	p.max_attempts = 10;
	gc_retry_begin(&r, &p);
	/* jitter says 0 ms, the server says 1500: 1500 */
	d = gc_retry_decide(&r, GC_ETHROTTLED, 1500);
	assert_int_equal(d.retry, 1);
	assert_int_equal(d.delay_ms, 1500);
	/* a hint beyond the cap is bounded by it */
	d = gc_retry_decide(&r, GC_ETHROTTLED, 60000);
	assert_int_equal(d.delay_ms, 20000);
	/* a hint shorter than the backoff does not shorten it */
	rnd = 900;
	gc_retry_begin(&r, &p);
	d = gc_retry_decide(&r, GC_ETHROTTLED, 100);
	assert_int_equal(d.delay_ms, 900);
	/* no hint: the jitter alone */
	gc_retry_begin(&r, &p);
	d = gc_retry_decide(&r, GC_ETHROTTLED, -1);
	assert_int_equal(d.delay_ms, 900);
	/* a hint of zero is a hint, and harmless */
	rnd = 0;
	gc_retry_begin(&r, &p);
	d = gc_retry_decide(&r, GC_ETRANSIENT, 0);
	assert_int_equal(d.retry, 1);
	assert_int_equal(d.delay_ms, 0);
}

/* The synchronous form against an operation that always fails with throttling. */
static void test_pause_sleeps_and_gives_up(void **state)
{
	struct gc_retry_policy p = { 0 };
	struct gc_retry r;
	struct gc_error err;
	uint64_t seed = 3, deadline;
	unsigned attempts = 0;

	(void)state;
	p.clock = &fake;
	p.rng = split_rng;
	p.rng_ctx = &seed;
	p.max_attempts = 1000;
	p.deadline_ms = 30000;
	gc_retry_begin(&r, &p);
	deadline = fc.now + 30000 * MS;
	for (;;) {
		attempts++;
		/* no attempt starts at or past the deadline */
		assert_true(fc.now < deadline);
		gc_error_set(&err, GC_ETHROTTLED, "RequestLimitExceeded");
		if (gc_retry_pause(&r, &err, -1) < 0)
			break;
	}
	assert_true(attempts > 1);
	assert_true(fc.sleeps <= attempts - 1); /* a zero delay skips the sleep */
	assert_true(fc.slept > 0);
	assert_int_equal(err.code, GC_ETHROTTLED);
	assert_non_null(strstr(err.message, "(deadline): RequestLimitExceeded"));
	assert_non_null(strstr(err.message, "gave up after"));

	/* max attempts: the message says how many; a fixed 10 ms so that every retry sleeps */
	seed = 10;
	p.rng = fixed_rng;
	p.deadline_ms = 0;
	p.max_attempts = 3;
	setup(NULL);
	gc_retry_begin(&r, &p);
	gc_error_set(&err, GC_ETRANSIENT, "connection reset");
	assert_int_equal(gc_retry_pause(&r, &err, -1), 0);
	assert_int_equal(gc_retry_pause(&r, &err, -1), 0);
	assert_int_equal(gc_retry_pause(&r, &err, -1), -1);
	assert_string_equal(err.message,
			    "gave up after 3 attempts (max attempts): connection reset");
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_int_equal(fc.sleeps, 2);

	/* a hint is slept exactly */
	p.max_attempts = 3;
	setup(NULL);
	gc_retry_begin(&r, &p);
	gc_error_set(&err, GC_ETHROTTLED, "Throttling.User");
	assert_int_equal(gc_retry_pause(&r, &err, 20000), 0);
	assert_int_equal(fc.slept, 20000 * MS);

	/* not retryable: the error is left as it was */
	gc_retry_begin(&r, &p);
	gc_error_set(&err, GC_EQUOTA, "QuotaExceed.ElasticQuota");
	assert_int_equal(gc_retry_pause(&r, &err, -1), -1);
	assert_string_equal(err.message, "QuotaExceed.ElasticQuota");
	assert_int_equal(err.code, GC_EQUOTA);
}

static void test_real_clock(void **state)
{
	uint64_t a, b;

	(void)state;
	a = gc_clock_now_ns(NULL);
	gc_clock_sleep_ms(NULL, 5);
	b = gc_clock_now_ns(NULL);
	assert_true(b - a >= 5 * MS);
	assert_string_equal(gc_retry_reason_name(GC_RETRY_QUOTA_EMPTY), "retry quota empty");
}

/* ---- gc_driver_retry_unseen ------------------------------------------------------ */

static struct unseen_fake {
	unsigned calls, misses; /* the first `misses` calls answer code */
	const char *code;
} U;

static int unseen_call(struct gc_provider *p, void *ctx, struct gc_error *err)
{
	(void)p;
	(void)ctx;
	if (U.calls++ >= U.misses)
		return 0;
	gc_error_set(err, GC_ENOTFOUND, "The security group 'sg-1' does not exist");
	gc_error_set_cloud(err, U.code, NULL, 400);
	return -1;
}

static void test_unseen(void **state)
{
	static const char *const codes[] = { "InvalidGroup.NotFound", "InvalidKeyPair.NotFound",
					     NULL };
	static const struct gc_provider_ops ops = { .name = "fake" };
	const char *ids[] = { "sg-1", "key-1" };
	struct gc_provider p = { .ops = &ops, .clock = &fake };
	struct gc_error err;

	(void)state;
	p.impl = calloc(1, sizeof(struct gc_driver));
	assert_non_null(p.impl);

	/* nothing this session made: a NotFound is an answer, at once */
	U = (struct unseen_fake){ 0, 3, "InvalidGroup.NotFound" };
	gc_error_init(&err);
	assert_int_equal(gc_driver_retry_unseen(&p, unseen_call, NULL, ids, 2, codes, "w", &err),
			 -1);
	assert_int_equal(U.calls, 1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_int_equal(fc.slept, 0);

	/* the group just made: three misses, then it is known */
	gc_driver_made(&p, "sg-1");
	gc_driver_made(&p, "sg-1");
	assert_true(gc_driver_just_made(&p, "sg-1"));
	assert_false(gc_driver_just_made(&p, "sg-2"));
	U = (struct unseen_fake){ 0, 3, "InvalidGroup.NotFound" };
	gc_error_init(&err);
	assert_int_equal(gc_driver_retry_unseen(&p, unseen_call, NULL, ids, 2, codes, "w", &err),
			 0);
	assert_int_equal(U.calls, 4);

	/* another code is not waited out */
	U = (struct unseen_fake){ 0, 3, "InvalidAMIID.NotFound" };
	gc_error_init(&err);
	assert_int_equal(gc_driver_retry_unseen(&p, unseen_call, NULL, ids, 2, codes, "w", &err),
			 -1);
	assert_int_equal(U.calls, 1);

	/* never known: bounded, with the cloud's code and the count in the message */
	U = (struct unseen_fake){ 0, 100, "InvalidKeyPair.NotFound" };
	gc_error_init(&err);
	assert_int_equal(gc_driver_retry_unseen(&p, unseen_call, NULL, ids, 2, codes, "w", &err),
			 -1);
	assert_int_equal(U.calls, GC_DRIVER_UNSEEN_ATTEMPTS);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_string_equal(err.cloud_code, "InvalidKeyPair.NotFound");
	assert_non_null(strstr(err.message, "gave up after 8 attempts (max attempts)"));
	assert_true(fc.slept <= 90000 * MS);

	for (size_t i = 0; i < ((struct gc_driver *)p.impl)->n_made; i++)
		free(((struct gc_driver *)p.impl)->made[i]);
	free(((struct gc_driver *)p.impl)->made);
	free(p.impl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_backoff_bounds_both_bases, setup),
		cmocka_unit_test_setup(test_backoff_custom_figures, setup),
		cmocka_unit_test_setup(test_decide_uses_bounds, setup),
		cmocka_unit_test_setup(test_default_rng_varies, setup),
		cmocka_unit_test_setup(test_quota_storm_and_refill, setup),
		cmocka_unit_test_setup(test_deadline_stops_retries, setup),
		cmocka_unit_test_setup(test_non_retryable_never_retry, setup),
		cmocka_unit_test_setup(test_bad_response_retried_a_few_times, setup),
		cmocka_unit_test_setup(test_max_attempts, setup),
		cmocka_unit_test_setup(test_retry_after_honoured, setup),
		cmocka_unit_test_setup(test_pause_sleeps_and_gives_up, setup),
		cmocka_unit_test_setup(test_real_clock, setup),
		cmocka_unit_test_setup(test_unseen, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
