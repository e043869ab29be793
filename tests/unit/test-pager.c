/*
 * test-pager.c: the bounds of the one page loop (gc_driver_pages, core/driver.c) against a
 * fake listing that answers what each test scripts: a token seen before (the previous
 * one, or alternating), empty pages that carry a token (past the allowance, and within
 * it), pages of unknown size without end, a huge total, the cap on items, and discover's
 * ids listed twice and its memory held at the cap. Issue 19, item 1.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/driver.h"

/* ---- the fake listing --------------------------------------------------------------- */

struct script {
	const char *const *tokens; /* each page's NextToken; past the end: fresh ones */
	size_t n_tokens;
	bool fresh;   /* past tokens: "fresh-N" for ever, else no token (the end) */
	bool counted; /* say how many items a page has */
	size_t items; /* each page's */
	int64_t total;
	unsigned sent; /* pages asked for */
};

static int fake_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
		     struct gc_buf *body, struct gc_error *err)
{
	struct script *s = ctx;

	(void)p;
	(void)body;
	(void)err;
	assert_int_equal(pg->number, s->sent);
	s->sent++;
	return 0;
}

static int fake_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
		      struct gc_page *pg, struct gc_error *err)
{
	struct script *s = ctx;
	char fresh[32];

	(void)p;
	(void)body;
	(void)err;
	if (pg->number < s->n_tokens) {
		pg->next = s->tokens[pg->number] ? gc_xstrdup(s->tokens[pg->number]) : NULL;
	} else if (s->fresh) {
		snprintf(fresh, sizeof(fresh), "fresh-%u", pg->number);
		pg->next = gc_xstrdup(fresh);
	}
	pg->items = s->items;
	pg->counted = s->counted;
	pg->total = s->total;
	return 0;
}

static const struct gc_pager pager = { "DescribeThings", NULL, fake_send, fake_parse };

/* A provider whose driver state holds the bounds (0: the defaults). */
static struct gc_driver drv;
static struct gc_provider prov = { .impl = &drv };

static int setup(void **state)
{
	(void)state;
	memset(&drv, 0, sizeof(drv));
	return 0;
}

static int run(struct script *s, struct gc_error *err)
{
	s->total = s->total ? s->total : -1;
	gc_error_init(err);
	return gc_driver_pages(&prov, &pager, s, err);
}

/* ---- tokens ----------------------------------------------------------------------- */

static void test_tokens_to_the_end(void **state)
{
	static const char *const t[] = { "a", "b", NULL };
	struct script s = { t, 3, false, false, 0, 0, 0 };
	struct gc_error err;

	(void)state;
	assert_int_equal(run(&s, &err), 0);
	assert_int_equal(s.sent, 3);
}

static void test_token_repeated(void **state)
{
	static const char *const t[] = { "a", "a" };
	struct script s = { t, 2, true, false, 0, 0, 0 };
	struct gc_error err;

	(void)state;
	assert_int_equal(run(&s, &err), -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_string_equal(err.message,
			    "DescribeThings: the NextToken of page 1 came back on page 2");
	assert_int_equal(s.sent, 2);
}

static void test_tokens_alternating(void **state)
{
	static const char *const t[] = { "a", "b", "c", "b", "a" };
	struct script s = { t, 5, true, false, 0, 0, 0 };
	struct gc_error err;

	(void)state;
	assert_int_equal(run(&s, &err), -1);
	assert_string_equal(err.message,
			    "DescribeThings: the NextToken of page 2 came back on page 4");
	assert_int_equal(s.sent, 4);
}

/* ---- empty pages ------------------------------------------------------------------ */

static void test_empty_pages_with_token(void **state)
{
	struct script s = { NULL, 0, true, true, 0, 0, 0 };
	struct gc_error err;

	(void)state;
	assert_int_equal(run(&s, &err), -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_string_equal(err.message, "DescribeThings: page 4 is empty but carries a NextToken");
	assert_int_equal(s.sent, GC_DRIVER_EMPTY_PAGES + 1);
}

/* within the allowance (EC2 sends empty pages under filters), the listing goes on */
static void test_empty_pages_allowed(void **state)
{
	static const char *const t[] = { "a", "b", "c", NULL };
	struct script s = { t, 4, false, true, 0, 0, 0 };
	struct gc_error err;

	(void)state;
	assert_int_equal(run(&s, &err), 0);
	assert_int_equal(s.sent, 4);
}

/* pages whose size the listing does not say: only the page cap ends fresh tokens */
static void test_pages_capped(void **state)
{
	struct script s = { NULL, 0, true, false, 0, 0, 0 };
	struct gc_error err;

	(void)state;
	drv.max_pages = 20;
	assert_int_equal(run(&s, &err), -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_string_equal(err.message, "DescribeThings: more than 20 pages");
	assert_int_equal(s.sent, 20);
}

static void test_default_page_cap(void **state)
{
	struct script s = { NULL, 0, true, false, 0, 0, 0 };
	struct gc_error err;

	(void)state;
	assert_int_equal(run(&s, &err), -1);
	assert_int_equal(s.sent, GC_DRIVER_MAX_PAGES);
	assert_non_null(strstr(err.message, "more than 1000 pages"));
}

/* ---- totals and items ------------------------------------------------------------- */

static void test_huge_total(void **state)
{
	struct script s = { NULL, 0, false, false, 2, 1000000000, 0 };
	struct gc_error err;

	(void)state;
	assert_int_equal(run(&s, &err), -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_string_equal(err.message,
			    "DescribeThings: a TotalCount of 1000000000 on page 1, more than "
			    "this cluster can have (64000)");
	assert_int_equal(s.sent, 1);
}

static void test_total_reached(void **state)
{
	struct script s = { NULL, 0, false, false, 100, 250, 0 };
	struct gc_error err;

	(void)state;
	assert_int_equal(run(&s, &err), 0);
	assert_int_equal(s.sent, 3);
}

static void test_item_cap(void **state)
{
	struct script s = { NULL, 0, true, true, 1000, 0, 0 };
	struct gc_error err;

	(void)state;
	assert_int_equal(GC_DRIVER_MAX_ITEMS, 64000);
	assert_int_equal(run(&s, &err), -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_string_equal(err.message,
			    "DescribeThings: more than 64000 items by page 65, "
			    "more than this cluster can have");
	assert_int_equal(s.sent, 65);
}

/* ---- discover ------------------------------------------------------------------------ */

/* discover's fake: each page's instances, handed as the clouds' parse hooks do */
static struct {
	unsigned pages; /* then no token */
	unsigned per_page;
	bool same_ids;	  /* every page lists i-0.. again (a listing that starts over) */
	bool same_token;  /* every page's NextToken is the same */
	size_t most_kept; /* the most instances held at once */
} F;

static int disc_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
		     struct gc_buf *body, struct gc_error *err)
{
	(void)p;
	(void)ctx;
	(void)pg;
	(void)body;
	(void)err;
	return 0;
}

static int disc_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
		      struct gc_page *pg, struct gc_error *err)
{
	struct gc_driver_discover *d = ctx;
	char id[32];

	(void)p;
	(void)body;
	(void)err;
	for (unsigned i = 0; i < F.per_page; i++) {
		struct gc_instance inst = { 0 };

		snprintf(id, sizeof(id), "i-%u", F.same_ids ? i : pg->number * F.per_page + i);
		inst.id = gc_xstrdup(id);
		inst.state = GC_STATE_RUNNING;
		gc_driver_discover_keep(d, &inst);
	}
	if (d->found.n > F.most_kept)
		F.most_kept = d->found.n;
	if (pg->number + 1 < F.pages) {
		snprintf(id, sizeof(id), "t-%u", F.same_token ? 0 : pg->number);
		pg->next = gc_xstrdup(id);
	}
	return 0;
}

static const struct gc_pager disc_hooks = { NULL, NULL, disc_send, disc_parse };

static int discover(unsigned pages, unsigned per_page, bool same_ids, struct gc_instance_list *out,
		    struct gc_error *err)
{
	static const struct gc_discover_query q = { NULL, 0, false };

	F.pages = pages;
	F.per_page = per_page;
	F.same_ids = same_ids;
	F.same_token = false;
	F.most_kept = 0;
	gc_instance_list_init(out);
	gc_error_init(err);
	return gc_driver_discover(&prov, &disc_hooks, &q, out, err);
}

static void test_discover_all(void **state)
{
	struct gc_instance_list out;
	struct gc_error err;

	(void)state;
	assert_int_equal(discover(3, 4, false, &out, &err), 0);
	assert_int_equal(out.n, 12);
	gc_instance_list_release(&out);
}

/* an endless listing that starts over on every page (the emulator's endless-token) */
static void test_discover_listed_twice(void **state)
{
	struct gc_instance_list out;
	struct gc_error err;

	(void)state;
	assert_int_equal(discover(1000000, 2, true, &out, &err), -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_string_equal(err.message,
			    "DescribeInstances: instance 'i-0' is listed twice (page 2)");
	assert_int_equal(out.n, 0); /* all or nothing */
	gc_instance_list_release(&out);
}

/* the emulator's repeat-token: the same page again; the token is the clearer error */
static void test_discover_token_before_ids(void **state)
{
	struct gc_instance_list out;
	struct gc_error err;

	(void)state;
	F.same_token = true;
	F.pages = 1000000;
	F.per_page = 2;
	F.same_ids = true;
	gc_instance_list_init(&out);
	gc_error_init(&err);
	{
		static const struct gc_discover_query q = { NULL, 0, false };

		assert_int_equal(gc_driver_discover(&prov, &disc_hooks, &q, &out, &err), -1);
	}
	assert_string_equal(err.message,
			    "DescribeInstances: the NextToken of page 1 came back on page 2");
	gc_instance_list_release(&out);
}

/* one page that lists an instance twice */
static void test_discover_twice_in_a_page(void **state)
{
	struct gc_instance_list out;
	struct gc_error err;

	(void)state;
	/* 3 per page, ids i-0 i-1 i-2 on every page: with one page, none twice; the
	 * same ids again on page 2 */
	assert_int_equal(discover(2, 3, true, &out, &err), -1);
	assert_string_equal(err.message,
			    "DescribeInstances: instance 'i-0' is listed twice (page 2)");
	gc_instance_list_release(&out);
	assert_int_equal(discover(1, 3, true, &out, &err), 0);
	assert_int_equal(out.n, 3);
	gc_instance_list_release(&out);
}

/* fresh instances for ever: nothing is held past the cap, and the loop stops on it */
static void test_discover_item_cap(void **state)
{
	struct gc_instance_list out;
	struct gc_error err;

	(void)state;
	drv.max_items = 50;
	assert_int_equal(discover(1000000, 7, false, &out, &err), -1);
	assert_string_equal(err.message,
			    "DescribeInstances: more than 50 items by page 8, more "
			    "than this cluster can have");
	assert_int_equal(F.most_kept, 50);
	assert_int_equal(out.n, 0);
	gc_instance_list_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_tokens_to_the_end, setup),
		cmocka_unit_test_setup(test_token_repeated, setup),
		cmocka_unit_test_setup(test_tokens_alternating, setup),
		cmocka_unit_test_setup(test_empty_pages_with_token, setup),
		cmocka_unit_test_setup(test_empty_pages_allowed, setup),
		cmocka_unit_test_setup(test_pages_capped, setup),
		cmocka_unit_test_setup(test_default_page_cap, setup),
		cmocka_unit_test_setup(test_huge_total, setup),
		cmocka_unit_test_setup(test_total_reached, setup),
		cmocka_unit_test_setup(test_item_cap, setup),
		cmocka_unit_test_setup(test_discover_all, setup),
		cmocka_unit_test_setup(test_discover_listed_twice, setup),
		cmocka_unit_test_setup(test_discover_token_before_ids, setup),
		cmocka_unit_test_setup(test_discover_twice_in_a_page, setup),
		cmocka_unit_test_setup(test_discover_item_cap, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
