/*
 * test-nccl.c: reading nccl-tests' all_reduce_perf output (bootstrap/nccl.h): a real
 * two-node run's shape, the simulated marker, the figure of the largest size, #wrong,
 * output that is not a result (an error, a cut table, garbage), and the fabrics' floors;
 * the across-nodes judgement of groups of 2, 3 and 4 nodes from node 0's probe output in
 * the simulated tools' format (which link is slow, which node is named, which set fails).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bootstrap/nccl.h"
#include "core/buf.h"

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

/* The floors the tests use: standard 1.5625 GB/s, rdma 12.5 GB/s. The simulated figures
 * (sim/node/tools/lib/nccl.sh): 85 % of the line rate, a tenth of that with slow-net. */
#define STD_OK	 2.66 /* 25 Gbit/s * 0.85 / 8 */
#define STD_SLOW 0.27
#define RDMA_OK	 21.25

/* all_reduce_perf's output as the simulated tool prints it (sim/node/tools/bin/
 * all_reduce_perf): the marker, the header, a Rank row per GPU, the table from min to
 * 256 MiB by doubling (busbw the given figure at the largest size, lower before it),
 * the bounds and average lines. */
static void add_arp(struct gc_buf *b, const char *host, unsigned ranks, size_t min, double busbw,
		    unsigned wrong)
{
	size_t rows = 0;
	double sum = 0;

	gc_buf_addf(b,
		    "# gpucluster-sim: simulated figures (no GPU, no network was measured)\n"
		    "# nThread 1 nGpus 1 minBytes %zu maxBytes 268435456 step: 2(factor) "
		    "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
		    "#\n# Using devices\n",
		    min);
	for (unsigned r = 0; r < ranks; r++)
		gc_buf_addf(b,
			    "#  Rank %2u Group  0 Pid %6u on %10s-%u device  0 [0x00] NVIDIA "
			    "H100 80GB HBM3\n",
			    r, 4000 + r, host, r);
	gc_buf_addf(b,
		    "#\n#                                                              "
		    "out-of-place                       in-place          \n"
		    "#       size         count      type   redop    root     time   algbw "
		    "  busbw #wrong     time   algbw   busbw #wrong\n"
		    "#        (B)    (elements)                               (us)  (GB/s)  "
		    "(GB/s)            (us)  (GB/s)  (GB/s)       \n");
	for (size_t s = min; s <= 268435456; s *= 2) {
		double bw = busbw * (double)s / ((double)s + 4 * 1024 * 1024) *
			(268435456.0 + 4 * 1024 * 1024) / 268435456.0;
		double alg = bw / (2.0 * (ranks - 1) / ranks);

		gc_buf_addf(b,
			    "%12zu  %12zu     float     sum      -1  %7.2f  %6.2f  %6.2f  %5u  "
			    "%7.2f  %6.2f  %6.2f      0\n",
			    s, s / 4, (double)s / (alg * 1000) + 20, alg, bw,
			    s == 268435456 ? wrong : 0, (double)s / (alg * 1000) + 20, alg, bw);
		sum += bw;
		rows++;
	}
	gc_buf_addf(b, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g \n#\n",
		    sum / (double)rows);
}

/* Node 0's probe output for a group of n nodes at ips (1 GPU each): @@simulated, the ring
 * over all of them at ring_bw, and with three or more nodes a @@pair section per other
 * node k at pair_bw[k] (< 0: no section, as when a run was cut off). */
static void probe_out(struct gc_buf *b, const char *const *ips, size_t n, double ring_bw,
		      const double *pair_bw)
{
	gc_buf_addf(b, "@@simulated\n@@allreduce 1\n");
	add_arp(b, "node", 1, 8388608, 0, 0);
	gc_buf_addf(b, "@@cluster\n");
	add_arp(b, "node", (unsigned)n, 8388608, ring_bw, 0);
	for (size_t k = 1; n >= 3 && k < n; k++) {
		if (pair_bw[k] < 0)
			continue;
		gc_buf_addf(b, "@@pair %s\n", ips[k]);
		add_arp(b, "node", 2, 268435456, pair_bw[k], 0);
	}
}

static const char *const ips4[] = { "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.10" };

/* Judges a group of n of ips4 with the figures given; out is the caller's to release. */
static void judge(struct gc_nccl_group *out, size_t n, double ring, const double *pairs,
		  double floor)
{
	struct gc_buf b = GC_BUF_INIT(1 << 20);

	probe_out(&b, ips4, n, ring, pairs);
	gc_nccl_group_judge(out, b.data, b.len, ips4, n, floor);
	gc_buf_release(&b);
}

/* The sections of a probe's output, by exact name: "pair 10.0.0.1" is not "pair
 * 10.0.0.10"'s, and the last section runs to the end. */
static void test_sections(void **state)
{
	static const char out[] = "@@simulated\n@@pair 10.0.0.10\nten\n@@pair 10.0.0.1\none\n"
				  "two\n@@cluster\nring";
	const char *t;
	size_t len;

	(void)state;
	t = gc_nccl_section(out, strlen(out), "pair 10.0.0.1", &len);
	assert_non_null(t);
	assert_int_equal(len, 8);
	assert_memory_equal(t, "one\ntwo\n", 8);
	t = gc_nccl_section(out, strlen(out), "pair 10.0.0.10", &len);
	assert_int_equal(len, 4);
	assert_memory_equal(t, "ten\n", 4);
	t = gc_nccl_section(out, strlen(out), "cluster", &len);
	assert_int_equal(len, 4);
	assert_memory_equal(t, "ring", 4);
	t = gc_nccl_section(out, strlen(out), "simulated", &len);
	assert_int_equal(len, 0);
	assert_null(gc_nccl_section(out, strlen(out), "pair 10.0.0", &len));
	assert_null(gc_nccl_section(out, strlen(out), "pair", &len));
	/* only len bytes are read */
	assert_null(gc_nccl_section(out, 20, "pair 10.0.0.1", &len));
}

/* Three nodes: one slow node makes the ring and its own link slow, and is named; the other
 * link passes. A slow node 0 makes both its links slow: node 0 is named, not the others. */
static void test_three_nodes(void **state)
{
	const double slow2[] = { 0, STD_OK, STD_SLOW }, slow0[] = { 0, STD_SLOW, STD_SLOW };
	const double slow1[] = { 0, STD_SLOW, STD_OK }, fine[] = { 0, STD_OK, STD_OK };
	struct gc_nccl_group g;
	double floor = gc_nccl_floor_gbps("standard");

	(void)state;
	judge(&g, 3, STD_SLOW, slow2, floor);
	assert_true(g.ring.ok && g.ring.simulated);
	assert_int_equal(g.ring.ranks, 3);
	assert_false(g.ring_ok);
	assert_false(g.links_ok);
	assert_int_equal(g.n_links, 2);
	assert_int_equal(g.links[0].node, 1);
	assert_true(g.links[0].ok);
	assert_true(g.links[0].r.busbw_gbps > 2.65 && g.links[0].r.busbw_gbps < 2.67);
	assert_int_equal(g.links[1].node, 2);
	assert_false(g.links[1].ok);
	assert_int_equal(g.links[1].slow, 2);
	assert_true(g.links[1].r.busbw_gbps > 0.26 && g.links[1].r.busbw_gbps < 0.28);
	gc_nccl_group_release(&g);

	judge(&g, 3, STD_SLOW, slow1, floor);
	assert_false(g.links[0].ok);
	assert_int_equal(g.links[0].slow, 1);
	assert_true(g.links[1].ok);
	gc_nccl_group_release(&g);

	/* node 0 is in both pairs */
	judge(&g, 3, STD_SLOW, slow0, floor);
	assert_int_equal(g.n_links, 2);
	assert_false(g.links[0].ok);
	assert_false(g.links[1].ok);
	assert_int_equal(g.links[0].slow, 0);
	assert_int_equal(g.links[1].slow, 0);
	gc_nccl_group_release(&g);

	judge(&g, 3, STD_OK, fine, floor);
	assert_true(g.ring_ok);
	assert_true(g.links_ok);
	assert_int_equal(g.n_links, 2);
	gc_nccl_group_release(&g);
}

/* Four nodes: a slow node anywhere is the one named; two slow nodes are each named while
 * node 0 has a good link; all three links slow name node 0. */
static void test_four_nodes(void **state)
{
	const double slow2[] = { 0, STD_OK, STD_SLOW, STD_OK };
	const double slow3[] = { 0, STD_OK, STD_OK, STD_SLOW };
	const double slow13[] = { 0, STD_SLOW, STD_OK, STD_SLOW };
	const double slow0[] = { 0, STD_SLOW, STD_SLOW, STD_SLOW };
	struct gc_nccl_group g;
	double floor = gc_nccl_floor_gbps("standard");

	(void)state;
	judge(&g, 4, STD_SLOW, slow2, floor);
	assert_int_equal(g.ring.ranks, 4);
	assert_false(g.ring_ok);
	assert_int_equal(g.n_links, 3);
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(g.links[k].node, k + 1);
		assert_int_equal(g.links[k].ok, k + 1 != 2);
	}
	assert_int_equal(g.links[1].slow, 2);
	gc_nccl_group_release(&g);

	/* 10.0.0.10's section is not 10.0.0.1's */
	judge(&g, 4, STD_SLOW, slow3, floor);
	assert_true(g.links[0].ok);
	assert_true(g.links[1].ok);
	assert_false(g.links[2].ok);
	assert_int_equal(g.links[2].slow, 3);
	gc_nccl_group_release(&g);

	judge(&g, 4, STD_SLOW, slow13, floor);
	assert_false(g.links[0].ok);
	assert_true(g.links[1].ok);
	assert_false(g.links[2].ok);
	assert_int_equal(g.links[0].slow, 1);
	assert_int_equal(g.links[2].slow, 3);
	gc_nccl_group_release(&g);

	judge(&g, 4, STD_SLOW, slow0, floor);
	for (size_t k = 0; k < 3; k++) {
		assert_false(g.links[k].ok);
		assert_int_equal(g.links[k].slow, 0);
	}
	gc_nccl_group_release(&g);

	/* a ring that reached its floor with one link under it: the link fails the set */
	judge(&g, 4, STD_OK, slow2, floor);
	assert_true(g.ring_ok);
	assert_false(g.links_ok);
	assert_int_equal(g.links[1].slow, 2);
	gc_nccl_group_release(&g);
}

/* The floor is the group's fabric's: the same standard-network figures pass a standard
 * group and fail an RDMA one (nodes on TCP instead of their fabric); an RDMA group at the
 * fabric's figures passes. Two nodes: the ring is the one link, named by node 1. */
static void test_floor_per_set(void **state)
{
	const double std3[] = { 0, STD_OK, STD_OK }, rdma4[] = { 0, RDMA_OK, RDMA_OK, RDMA_OK };
	const double none[] = { 0, 0 };
	struct gc_nccl_group g;

	(void)state;
	judge(&g, 3, STD_OK, std3, gc_nccl_floor_gbps("standard"));
	assert_true(g.ring_ok && g.links_ok);
	gc_nccl_group_release(&g);
	judge(&g, 3, STD_OK, std3, gc_nccl_floor_gbps("rdma"));
	assert_false(g.ring_ok);
	assert_false(g.links_ok);
	/* every link of node 0 under: node 0 named */
	assert_int_equal(g.links[0].slow, 0);
	gc_nccl_group_release(&g);
	judge(&g, 4, RDMA_OK, rdma4, gc_nccl_floor_gbps("rdma"));
	assert_true(g.ring_ok && g.links_ok);
	assert_int_equal(g.n_links, 3);
	gc_nccl_group_release(&g);

	judge(&g, 2, STD_SLOW, none, gc_nccl_floor_gbps("standard"));
	assert_false(g.ring_ok);
	assert_int_equal(g.n_links, 1);
	assert_int_equal(g.links[0].node, 1);
	assert_false(g.links[0].ok);
	assert_int_equal(g.links[0].slow, 1);
	assert_true(g.links[0].r.busbw_gbps == g.ring.busbw_gbps);
	gc_nccl_group_release(&g);
	judge(&g, 2, STD_OK, none, gc_nccl_floor_gbps("standard"));
	assert_true(g.ring_ok && g.links_ok);
	gc_nccl_group_release(&g);
}

/* A link with #wrong fails above the floor; one without a result fails; a link not run (no
 * section: no mpirun) and a node without a private address are not links. */
static void test_links_odd(void **state)
{
	const double cut[] = { 0, STD_OK, -1, STD_OK };
	const char *const noip[] = { "10.0.0.1", NULL, "10.0.0.3" };
	struct gc_buf b = GC_BUF_INIT(1 << 20);
	struct gc_nccl_group g;
	double floor = gc_nccl_floor_gbps("standard");

	(void)state;
	judge(&g, 4, STD_OK, cut, floor);
	assert_int_equal(g.n_links, 2);
	assert_int_equal(g.links[0].node, 1);
	assert_int_equal(g.links[1].node, 3);
	assert_true(g.links_ok);
	gc_nccl_group_release(&g);

	gc_buf_addf(&b, "@@cluster\n");
	add_arp(&b, "node", 3, 8388608, STD_OK, 0);
	gc_buf_addf(&b, "@@pair 10.0.0.3\n");
	add_arp(&b, "node", 2, 268435456, STD_OK, 2);
	gc_nccl_group_judge(&g, b.data, b.len, noip, 3, floor);
	assert_int_equal(g.n_links, 1);
	assert_int_equal(g.links[0].node, 2);
	assert_true(g.links[0].r.ok);
	assert_int_equal(g.links[0].r.wrong, 2);
	assert_false(g.links[0].ok);
	assert_int_equal(g.links[0].slow, 2);
	gc_nccl_group_release(&g);

	gc_buf_reset(&b);
	gc_buf_addf(&b,
		    "@@cluster\nmpirun: a process on 10.0.0.2 exited with status 255\n"
		    "@@pair 10.0.0.2\n@@pair 10.0.0.3\n");
	add_arp(&b, "node", 2, 268435456, STD_OK, 0);
	gc_nccl_group_judge(&g, b.data, b.len, ips4, 3, floor);
	assert_false(g.ring.ok);
	assert_false(g.ring_ok);
	assert_int_equal(g.n_links, 2);
	assert_false(g.links[0].r.ok);
	assert_false(g.links[0].ok);
	assert_int_equal(g.links[0].slow, 1);
	assert_true(g.links[1].ok);
	gc_nccl_group_release(&g);
	gc_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real),	      cmocka_unit_test(test_simulated_and_wrong),
		cmocka_unit_test(test_no_result),     cmocka_unit_test(test_floors),
		cmocka_unit_test(test_group_fabric),  cmocka_unit_test(test_sections),
		cmocka_unit_test(test_three_nodes),   cmocka_unit_test(test_four_nodes),
		cmocka_unit_test(test_floor_per_set), cmocka_unit_test(test_links_odd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
