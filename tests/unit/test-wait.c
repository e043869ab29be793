/*
 * test-wait.c: the cancellable sleep and the poll-until-deadline loop on a fake clock:
 * slices, a cancel noticed between slices, the first look immediate, the deadline (no look
 * past it, the last sleep cut to it), a poll's own error kept, and the messages.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/wait.h"
#include "fake-clock.h"

static int setup(void **state)
{
	(void)state;
	fc.now = 1000 * MS;
	fc.slept = 0;
	fc.sleeps = 0;
	return 0;
}

/* cancels once the fake clock has slept *ctx nanoseconds */
static bool cancel_after(void *ctx)
{
	return fc.slept >= *(uint64_t *)ctx;
}

static void test_sleep_slices(void **state)
{
	(void)state;
	assert_int_equal(gc_wait_sleep(&fake, NULL, 1000), 0);
	assert_int_equal(fc.slept, 1000 * MS);
	assert_int_equal(fc.sleeps, 5); /* 200 ms slices */
	assert_int_equal(gc_wait_sleep(&fake, NULL, 0), 0);
	assert_int_equal(fc.sleeps, 5);
}

static void test_sleep_cancelled(void **state)
{
	uint64_t after = 400 * MS;
	struct gc_cancel c = { cancel_after, &after };

	(void)state;
	assert_int_equal(gc_wait_sleep(&fake, &c, 10000), -1);
	assert_int_equal(fc.slept, 400 * MS); /* noticed at the next slice */
}

struct poller {
	unsigned looks;
	unsigned done_at; /* 0: never */
	bool fail;
	uint64_t last_look;
};

static int poll_fn(void *ctx, struct gc_error *err)
{
	struct poller *p = ctx;

	p->looks++;
	p->last_look = fc.now;
	if (p->fail)
		return gc_error_set(err, GC_EAUTH, "denied");
	return p->done_at && p->looks >= p->done_at ? 0 : 1;
}

static void test_until_done(void **state)
{
	struct poller p = { .done_at = 3 };
	struct gc_wait w = { .clock = &fake, .interval_ms = 5000, .timeout_ms = 60000 };
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_wait_until(&w, poll_fn, &p, &err), 0);
	assert_int_equal(p.looks, 3);
	assert_int_equal(fc.slept, 10000 * MS); /* the first look is immediate */

	p = (struct poller){ .done_at = 1 };
	fc.slept = 0;
	assert_int_equal(gc_wait_until(&w, poll_fn, &p, &err), 0);
	assert_int_equal(fc.slept, 0);
}

static void test_until_deadline(void **state)
{
	struct poller p = { 0 };
	struct gc_wait w = {
		.clock = &fake, .interval_ms = 7000, .timeout_ms = 20000, .what = "instances to run"
	};
	struct gc_error err;
	uint64_t start = fc.now;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_wait_until(&w, poll_fn, &p, &err), -1);
	assert_int_equal(err.code, GC_ETIMEOUT);
	assert_string_equal(err.message, "timed out after 20 s waiting for instances to run");
	/* looks at 0, 7, 14 and 20 s: the last sleep is cut to the deadline, none past it */
	assert_int_equal(p.looks, 4);
	assert_int_equal(p.last_look - start, 20000 * MS);
	assert_int_equal(fc.slept, 20000 * MS);
}

static void test_until_error_kept(void **state)
{
	struct poller p = { .fail = true };
	struct gc_wait w = { .clock = &fake, .timeout_ms = 1000 };
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_wait_until(&w, poll_fn, &p, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.message, "denied");
	assert_int_equal(p.looks, 1);
}

static void test_until_cancelled(void **state)
{
	uint64_t after = 3000 * MS;
	struct gc_cancel c = { cancel_after, &after };
	struct poller p = { 0 };
	struct gc_wait w = { .clock = &fake, .cancel = &c, .interval_ms = 2000, .what = "x" };
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_wait_until(&w, poll_fn, &p, &err), -1);
	assert_int_equal(err.code, GC_ECANCELLED);
	assert_string_equal(err.message, "cancelled while waiting for x");
	assert_int_equal(p.looks, 2); /* at 0 and 2 s; cancelled inside the second sleep */
	assert_int_equal(fc.slept, 3000 * MS);

	/* already cancelled: not even one look */
	after = 0;
	p = (struct poller){ 0 };
	assert_int_equal(gc_wait_until(&w, poll_fn, &p, &err), -1);
	assert_int_equal(p.looks, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_sleep_slices, setup),
		cmocka_unit_test_setup(test_sleep_cancelled, setup),
		cmocka_unit_test_setup(test_until_done, setup),
		cmocka_unit_test_setup(test_until_deadline, setup),
		cmocka_unit_test_setup(test_until_error_kept, setup),
		cmocka_unit_test_setup(test_until_cancelled, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
