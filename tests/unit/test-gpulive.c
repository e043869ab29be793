/*
 * test-gpulive.c: show-gpus' listings: the shipped catalogue as a listing, the drivers'
 * folding of (type, zone) rows, and the cache of live listings (a round trip, expiry,
 * another endpoint or region, a broken file, the folder made on save).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/error.h"
#include "core/gpulive.h"
#include "core/provider.h"

static void test_catalogue(void **state)
{
	struct gc_gpu_listing l;

	(void)state;
	gc_gpu_listing_init(&l);
	for (size_t i = 0; gc_provider_at(i); i++) {
		const struct gc_provider_ops *ops = gc_provider_at(i);

		gc_gpulive_catalogue(&l, ops);
		assert_false(l.live);
		assert_string_equal(l.cloud, ops->name);
		assert_string_equal(l.region, ops->facts->home_region);
		assert_true(l.n > 0);
		for (size_t k = 0; k < l.n; k++) {
			assert_true(l.rows[k].on_demand > 0);
			assert_true(l.rows[k].spot < 0); /* the catalogue has no spot price */
			assert_int_equal(strlen(l.rows[k].currency), 3);
		}
	}
	gc_gpu_listing_release(&l);
}

/* The drivers' folding of (type, zone) rows: a type once, in first-seen order, each zone
 * once. */
static void test_types_add(void **state)
{
	struct gc_type_facts a = { .name = "a", .gpus = 1 }, b = { .name = "b", .gpus = 8 };
	struct gc_gpu_type *v = NULL;
	size_t n = 0;

	(void)state;
	gc_gpu_types_add(&v, &n, &a, "z1");
	gc_gpu_types_add(&v, &n, &b, "z1");
	gc_gpu_types_add(&v, &n, &a, "z2");
	gc_gpu_types_add(&v, &n, &a, "z1");
	assert_int_equal(n, 2);
	assert_string_equal(v[0].facts.name, "a");
	assert_int_equal(v[0].n_zones, 2);
	assert_string_equal(v[0].zones[0], "z1");
	assert_string_equal(v[0].zones[1], "z2");
	assert_string_equal(v[1].facts.name, "b");
	assert_int_equal(v[1].facts.gpus, 8);
	assert_int_equal(v[1].n_zones, 1);
	gc_gpu_types_free(v, n);
	gc_gpu_types_free(NULL, 0);
}

static char *tmpdir(void)
{
	char tmpl[] = "/tmp/gc-gpulive.XXXXXX";
	char *d = mkdtemp(tmpl);

	assert_non_null(d);
	return strdup(d);
}

static void test_cache(void **state)
{
	char *dir = tmpdir(), *sub, *path;
	struct gc_gpu_listing l, got;
	struct gc_error err = { 0 };
	struct gc_gpu_row *r;
	FILE *f;

	(void)state;
	gc_gpu_listing_init(&l);
	gc_gpu_listing_init(&got);
	snprintf(l.cloud, sizeof(l.cloud), "aws");
	snprintf(l.region, sizeof(l.region), "us-west-2");
	l.live = true;
	l.fetched_at = 1000000;
	l.rows = calloc(2, sizeof(*l.rows));
	l.n = l.alloc = 2;
	r = &l.rows[0];
	snprintf(r->type, sizeof(r->type), "p4d.24xlarge");
	snprintf(r->model, sizeof(r->model), "A100");
	snprintf(r->interconnect, sizeof(r->interconnect), "NVSwitch, EFA");
	snprintf(r->currency, sizeof(r->currency), "USD");
	r->gpus = 8;
	r->gpu_memory_mib = 40960;
	r->vcpus = 96;
	r->memory_gib = 1152;
	r->n_zones = 3;
	r->on_demand = 32.7726;
	r->spot = 11.47;
	r = &l.rows[1];
	snprintf(r->type, sizeof(r->type), "g6.xlarge");
	snprintf(r->model, sizeof(r->model), "L4");
	r->gpus = 1;
	r->on_demand = r->spot = -1; /* unpriced */

	/* the folder is made on save */
	sub = malloc(strlen(dir) + 32);
	snprintf(sub, strlen(dir) + 32, "%s/a/gpucluster", dir);
	path = gc_gpulive_cache_path(sub, "aws", "us-west-2");
	assert_string_equal(strrchr(path, '/'), "/gpus-aws-us-west-2.json");
	assert_int_equal(gc_gpulive_save(&l, path, "http://127.0.0.1:1 ", &err), 0);

	/* a round trip within the age */
	assert_int_equal(gc_gpulive_load(&got, path, "aws", "us-west-2", "http://127.0.0.1:1 ",
					 1000000 + 60, GC_GPULIVE_MAX_AGE_S),
			 0);
	assert_true(got.live);
	assert_int_equal(got.fetched_at, 1000000);
	assert_int_equal(got.n, 2);
	assert_string_equal(got.rows[0].type, "p4d.24xlarge");
	assert_string_equal(got.rows[0].interconnect, "NVSwitch, EFA");
	assert_string_equal(got.rows[0].currency, "USD");
	assert_int_equal(got.rows[0].gpu_memory_mib, 40960);
	assert_int_equal(got.rows[0].n_zones, 3);
	assert_true(got.rows[0].on_demand > 32.77 && got.rows[0].on_demand < 32.78);
	assert_true(got.rows[0].spot > 11.46 && got.rows[0].spot < 11.48);
	assert_true(got.rows[1].on_demand < 0 && got.rows[1].spot < 0);
	gc_gpu_listing_release(&got);

	/* misses: expired, from the future, another endpoint, region or cloud */
	assert_int_equal(gc_gpulive_load(&got, path, "aws", "us-west-2", "http://127.0.0.1:1 ",
					 1000000 + GC_GPULIVE_MAX_AGE_S + 1, GC_GPULIVE_MAX_AGE_S),
			 1);
	assert_int_equal(gc_gpulive_load(&got, path, "aws", "us-west-2", "http://127.0.0.1:1 ",
					 999999, GC_GPULIVE_MAX_AGE_S),
			 1);
	assert_int_equal(
		gc_gpulive_load(&got, path, "aws", "us-west-2", " ", 1000001, GC_GPULIVE_MAX_AGE_S),
		1);
	assert_int_equal(gc_gpulive_load(&got, path, "aws", "us-east-1", "http://127.0.0.1:1 ",
					 1000001, GC_GPULIVE_MAX_AGE_S),
			 1);
	assert_int_equal(gc_gpulive_load(&got, path, "alibaba", "us-west-2", "http://127.0.0.1:1 ",
					 1000001, GC_GPULIVE_MAX_AGE_S),
			 1);
	assert_int_equal(got.n, 0);

	/* a broken file and a missing one are misses, not errors */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"version\": 1, \"offers\": [", f);
	fclose(f);
	assert_int_equal(gc_gpulive_load(&got, path, "aws", "us-west-2", "http://127.0.0.1:1 ",
					 1000001, GC_GPULIVE_MAX_AGE_S),
			 1);
	unlink(path);
	assert_int_equal(gc_gpulive_load(&got, path, "aws", "us-west-2", "http://127.0.0.1:1 ",
					 1000001, GC_GPULIVE_MAX_AGE_S),
			 1);

	gc_gpu_listing_release(&l);
	rmdir(sub);
	snprintf(sub, strlen(dir) + 32, "%s/a", dir);
	rmdir(sub);
	rmdir(dir);
	free(sub);
	free(path);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalogue),
		cmocka_unit_test(test_types_add),
		cmocka_unit_test(test_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
