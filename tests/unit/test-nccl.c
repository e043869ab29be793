/*
 * test-nccl.c: reading nccl-tests' all_reduce_perf output (bootstrap/nccl.h): a real
 * two-node run's shape, the simulated marker, the figure of the largest size, #wrong,
 * output that is not a result (an error, a cut table, garbage), and the fabrics' floors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "bootstrap/nccl.h"

/* The shape of nccl-tests 2.x output (github.com/NVIDIA/nccl-tests), figures invented. */
static const char real[] =
	"# nThread 1 nGpus 1 minBytes 8388608 maxBytes 33554432 step: 2(factor) warmup iters: 5 "
	"iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	"#\n"
	"# Using devices\n"
	"#  Rank  0 Group  0 Pid   6899 on     node-a device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
	"#  Rank  1 Group  0 Pid   6733 on     node-b device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
	"#\n"
	"#                                                              out-of-place                "
	"       in-place          \n"
	"#       size         count      type   redop    root     time   algbw   busbw #wrong     "
	"time   algbw   busbw #wrong\n"
	"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
	"(us)  (GB/s)  (GB/s)       \n"
	"     8388608       2097152     float     sum      -1    412.5   20.34   20.34      0    "
	"410.1   20.45   20.45      0\n"
	"    33554432       8388608     float     sum      -1   1020.3   32.89   32.89      0   "
	"1019.8   32.90   32.90      0\n"
	"    16777216       4194304     float     sum      -1    640.0   26.21   26.21      0    "
	"641.0   26.17   26.17      0\n"
	"# Out of bounds values : 0 OK\n"
	"# Avg bus bandwidth    : 26.48 \n"
	"#\n";

static void test_real(void **state)
{
	struct gc_nccl_result r;

	(void)state;
	gc_nccl_parse(&r, real, strlen(real));
	assert_true(r.ok);
	assert_false(r.simulated);
	assert_int_equal(r.ranks, 2);
	assert_int_equal(r.rows, 3);
	assert_int_equal(r.wrong, 0);
	/* the largest size's out-of-place figures, not the last row's */
	assert_true(r.busbw_gbps > 32.88 && r.busbw_gbps < 32.9);
	assert_true(r.algbw_gbps > 32.88 && r.algbw_gbps < 32.9);
	assert_true(r.avg_busbw > 26.47 && r.avg_busbw < 26.49);
}

static void test_simulated_and_wrong(void **state)
{
	static const char sim[] = "# gpucluster-sim: simulated figures (no GPU)\n"
				  "    8388608       2097152     float     sum      -1    412.5   "
				  "20.34   20.34      3    410.1   20.45   20.45      0\n"
				  "# Avg bus bandwidth    : 20.34\n";
	struct gc_nccl_result r;

	(void)state;
	gc_nccl_parse(&r, sim, strlen(sim));
	assert_true(r.ok);
	assert_true(r.simulated);
	assert_int_equal(r.wrong, 3);
}

static void test_no_result(void **state)
{
	static const char *const bad[] = {
		"",
		"all_reduce_perf: Test CUDA failure common.cu:892 'no CUDA-capable device'\n",
		/* cut before the average */
		"    8388608       2097152     float     sum      -1    412.5   20.34   20.34      0\n",
		/* an average without a table */
		"# Avg bus bandwidth    : 20.34\n",
		/* words where numbers belong, a negative figure */
		"  big  2097152 float sum -1 412.5 fast 20.34 0\n# Avg bus bandwidth    : 1\n",
		"  8  2 float sum -1 412.5 -20.34 20.34 0\n# Avg bus bandwidth    : 1\n",
		"# Avg bus bandwidth    : lots\n  8 2 float sum -1 1 1 1 0\n",
	};
	struct gc_nccl_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gc_nccl_parse(&r, bad[i], strlen(bad[i]));
		assert_false(r.ok);
	}
	/* not NUL-terminated: only len bytes are read */
	gc_nccl_parse(&r, real, 40);
	assert_false(r.ok);
}

static void test_floors(void **state)
{
	(void)state;
	assert_string_equal(gc_nccl_fabric("workers"), "standard");
	assert_true(gc_nccl_line_gbit("efa") == 400);
	assert_true(gc_nccl_line_gbit("rdma") == 200);
	assert_true(gc_nccl_line_gbit("standard") == 25);
	assert_true(gc_nccl_floor_gbps("efa") == 25);
	assert_true(gc_nccl_floor_gbps("standard") == 1.5625);
}

/* A group's fabric is its interconnect on its type: auto is RDMA for several nodes of a
 * type with RDMA interfaces, so its NCCL floor is RDMA's. */
static void test_group_fabric(void **state)
{
	char name[] = "workers";
	struct gc_spec_group g = { .name = name, .count = 2 };
	struct gc_type_facts none = { .rdma_interfaces = 0 }, efa = { .rdma_interfaces = 4 };

	(void)state;
	g.interconnect = GC_INTERCONNECT_AUTO;
	assert_string_equal(gc_nccl_group_fabric(&g, &efa), "rdma");
	assert_string_equal(gc_nccl_group_fabric(&g, &none), "standard");
	g.count = 1;
	assert_string_equal(gc_nccl_group_fabric(&g, &efa), "standard");
	g.interconnect = GC_INTERCONNECT_STANDARD;
	g.count = 2;
	assert_string_equal(gc_nccl_group_fabric(&g, &efa), "standard");
	g.interconnect = GC_INTERCONNECT_RDMA;
	assert_string_equal(gc_nccl_group_fabric(&g, &efa), "rdma");
	assert_true(gc_nccl_floor_gbps(gc_nccl_group_fabric(&g, &efa)) == 12.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real),	     cmocka_unit_test(test_simulated_and_wrong),
		cmocka_unit_test(test_no_result),    cmocka_unit_test(test_floors),
		cmocka_unit_test(test_group_fabric),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
