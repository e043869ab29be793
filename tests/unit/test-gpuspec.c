/*
 * test-gpuspec.c: "A100-80GB:8" parsing, did-you-mean for unknown models, impossible counts
 * and memory sizes, and matching against instance-type facts as the drivers report them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "core/gpuspec.h"
#include "core/provider.h"

static void test_parse(void **state)
{
	struct gc_gpu_request r;
	struct gc_error err = { 0 };
	char buf[32];

	(void)state;
	assert_int_equal(gc_gpu_request_parse(&r, "A100:8", &err), 0);
	assert_string_equal(r.model, "A100");
	assert_int_equal(r.count, 8);
	assert_int_equal(r.memory_gib, 0);
	assert_int_equal(gc_gpu_request_parse(&r, "a100-80GB:8", &err), 0);
	assert_string_equal(r.model, "A100");
	assert_int_equal(r.memory_gib, 80);
	gc_gpu_request_format(&r, buf, sizeof(buf));
	assert_string_equal(buf, "A100-80GB:8");
	assert_int_equal(gc_gpu_request_parse(&r, "T4", &err), 0);
	assert_int_equal(r.count, 1);
	assert_int_equal(gc_gpu_request_parse(&r, "H100:8,vcpus=96,memory=1024GB", &err), 0);
	assert_int_equal(r.min_vcpus, 96);
	assert_int_equal(r.min_memory_gib, 1024);
	assert_int_equal(gc_gpu_request_parse(&r, "V100-32:4", &err), 0);
	assert_int_equal(r.memory_gib, 32);
}

static void test_bad(void **state)
{
	struct gc_gpu_request r = { .count = 99 };
	struct gc_error err = { 0 };

	(void)state;
	assert_int_not_equal(gc_gpu_request_parse(&r, "A1000:8", &err), 0);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.message, "unknown GPU model 'A1000' (did you mean 'A100'?)");
	assert_int_equal(r.count, 99); /* untouched on failure */
	assert_int_not_equal(gc_gpu_request_parse(&r, "l4os:8", &err), 0);
	assert_non_null(strstr(err.message, "did you mean 'L40S'?"));
	assert_int_not_equal(gc_gpu_request_parse(&r, "Z99:8", &err), 0);
	assert_non_null(strstr(err.message, "known: A10"));
	assert_int_not_equal(gc_gpu_request_parse(&r, "A100:0", &err), 0);
	assert_string_equal(err.message, "'0' is not a GPU count: an instance has 1 to 16 GPUs");
	assert_int_not_equal(gc_gpu_request_parse(&r, "A100:17", &err), 0);
	assert_int_not_equal(gc_gpu_request_parse(&r, "A100:x", &err), 0);
	assert_int_not_equal(gc_gpu_request_parse(&r, "A100-48GB:8", &err), 0);
	assert_string_equal(err.message, "A100 is not made with 48 GB (it has 40 GB or more)");
	assert_int_not_equal(gc_gpu_request_parse(&r, ":8", &err), 0);
	assert_int_not_equal(gc_gpu_request_parse(&r, "A100:8,cores=4", &err), 0);
	assert_non_null(strstr(err.message, "unknown GPU option 'cores'"));
	assert_int_not_equal(gc_gpu_request_parse(&r, "A100:8,vcpus=", &err), 0);
}

static void test_match(void **state)
{
	struct gc_gpu_request r;
	struct gc_error err = { 0 };
	struct gc_type_facts p4d = { .name = "p4d.24xlarge",
				     .vcpus = 96,
				     .memory_mib = 1152 * 1024,
				     .gpus = 8,
				     .gpu_model = "A100",
				     .gpu_memory_mib = 40960 };
	struct gc_type_facts gn7e = { .name = "ecs.gn7e-c16g1.32xlarge",
				      .vcpus = 128,
				      .memory_mib = 1000 * 1024,
				      .gpus = 8,
				      .gpu_model = "NVIDIA A100 80G",
				      .gpu_memory_mib = 81920 };
	struct gc_type_facts g6 = { .name = "g6.xlarge",
				    .vcpus = 4,
				    .memory_mib = 16384,
				    .gpus = 1,
				    .gpu_model = "L4",
				    .gpu_memory_mib = 22888 };
	struct gc_type_facts cpu = { .name = "t3.medium", .vcpus = 2, .memory_mib = 4096 };

	(void)state;
	assert_int_equal(gc_gpu_request_parse(&r, "A100:8", &err), 0);
	assert_true(gc_gpu_request_matches(&r, &p4d));
	assert_true(gc_gpu_request_matches(&r, &gn7e));
	assert_false(gc_gpu_request_matches(&r, &cpu));
	assert_int_equal(gc_gpu_request_parse(&r, "A100-80GB:8", &err), 0);
	assert_false(gc_gpu_request_matches(&r, &p4d));
	assert_true(gc_gpu_request_matches(&r, &gn7e));
	assert_int_equal(gc_gpu_request_parse(&r, "A100:4", &err), 0);
	assert_false(gc_gpu_request_matches(&r, &p4d));
	assert_int_equal(gc_gpu_request_parse(&r, "A100:8,vcpus=100", &err), 0);
	assert_false(gc_gpu_request_matches(&r, &p4d));
	assert_true(gc_gpu_request_matches(&r, &gn7e));
	assert_int_equal(gc_gpu_request_parse(&r, "A100:8,memory=1100", &err), 0);
	assert_true(gc_gpu_request_matches(&r, &p4d));
	assert_false(gc_gpu_request_matches(&r, &gn7e));
	assert_int_equal(gc_gpu_request_parse(&r, "L4-24GB", &err), 0);
	assert_true(gc_gpu_request_matches(&r, &g6));
	assert_string_equal(gc_gpu_model_canonical("Tesla V100"), "V100");
	assert_string_equal(gc_gpu_model_canonical("NVIDIA A10"), "A10");
	assert_null(gc_gpu_model_canonical("Radeon"));
}

/* Every type of the shipped catalogue names a model of the table, in a memory size it is
 * made with, and a request written from the row matches the row. */
static void test_catalogue(void **state)
{
	size_t n = 0;

	(void)state;
	for (size_t i = 0; gc_provider_at(i); i++) {
		const struct gc_provider_ops *ops = gc_provider_at(i);

		for (const struct gc_gpu_offer *o = ops->facts->gpu_offers; o && o->type; o++) {
			struct gc_type_facts f = { .vcpus = o->vcpus,
						   .memory_mib = o->memory_gib * 1024,
						   .gpus = o->gpus,
						   .gpu_memory_mib = o->gpu_memory_gib * 1024 };
			struct gc_gpu_request r;
			struct gc_error err = { 0 };
			char want[48];

			snprintf(f.gpu_model, sizeof(f.gpu_model), "%s", o->model);
			snprintf(want, sizeof(want), "%s-%uGB:%u", o->model, o->gpu_memory_gib,
				 o->gpus);
			if (gc_gpu_request_parse(&r, want, &err) != 0)
				fail_msg("%s %s: %s", ops->name, o->type, err.message);
			assert_true(gc_gpu_request_matches(&r, &f));
			assert_true(o->price > 0);
			assert_int_equal(strlen(o->currency), 3);
			n++;
		}
	}
	assert_true(n >= 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_catalogue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
