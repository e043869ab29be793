/*
 * test-gpustat.c: nvidia-smi's CSV (noheader, nounits) and the Xid line, as `status --gpus`
 * reads them from a node: values, "[N/A]", unknown Xid, and lines that are not what was
 * asked for.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/gpustat.h"

static void test_two_gpus(void **state)
{
	struct gc_gpustat_node n;
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_gpustat_parse("0, NVIDIA A100-SXM4-80GB, 87, 60512, 81920, 64, 0\n"
					  "1, NVIDIA A100-SXM4-80GB, 3, 1, 81920, 31, 2\n"
					  "xid,1\n",
					  &n, &err),
			 0);
	assert_int_equal(n.n, 2);
	assert_int_equal(n.gpus[0].index, 0);
	assert_string_equal(n.gpus[0].name, "NVIDIA A100-SXM4-80GB");
	assert_int_equal(n.gpus[0].util_pct, 87);
	assert_int_equal(n.gpus[0].mem_used_mib, 60512);
	assert_int_equal(n.gpus[0].mem_total_mib, 81920);
	assert_int_equal(n.gpus[0].temp_c, 64);
	assert_int_equal(n.gpus[1].ecc_uncorrected, 2);
	assert_int_equal(n.xid_events, 1);
	gc_gpustat_node_release(&n);
	assert_null(n.gpus);
}

static void test_not_available(void **state)
{
	struct gc_gpustat_node n;
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	/* a T4 in a VM without ECC reporting, a kernel log root may not read */
	assert_int_equal(
		gc_gpustat_parse("0, Tesla T4, 0, 0, 15360, 30, [N/A]\r\nxid,?\n", &n, &err), 0);
	assert_int_equal(n.n, 1);
	assert_int_equal(n.gpus[0].ecc_uncorrected, GC_GPUSTAT_NA);
	assert_int_equal(n.xid_events, GC_GPUSTAT_NA);
	gc_gpustat_node_release(&n);

	/* no Xid line at all: unknown, not 0 */
	assert_int_equal(gc_gpustat_parse("0, L4, 0, 0, 23034, 30, [Not Supported]", &n, &err), 0);
	assert_int_equal(n.xid_events, GC_GPUSTAT_NA);
	gc_gpustat_node_release(&n);
}

static void test_wrong_lines(void **state)
{
	struct gc_gpustat_node n;
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_gpustat_parse("0, A10G, 1, 2\n", &n, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "line 1 has 4 fields"));
	assert_null(n.gpus);

	gc_error_init(&err);
	assert_int_equal(
		gc_gpustat_parse("0, A10G, 1, 2, 3, 4, 0\n0, A10G, lots, 2, 3, 4, 0\n", &n, &err),
		-1);
	assert_non_null(strstr(err.message, "line 2: 'lots' is not a number"));
	assert_null(n.gpus);

	gc_error_init(&err);
	assert_int_equal(gc_gpustat_parse("NVIDIA-SMI has failed because it couldn't "
					  "communicate with the NVIDIA driver.\n",
					  &n, &err),
			 -1);
	gc_error_init(&err);
	assert_int_equal(gc_gpustat_parse("0, A10G, 1, 2, 3, 4, 0\nxid,many\n", &n, &err), -1);
	assert_non_null(strstr(err.message, "'many' is no Xid count"));
	assert_null(n.gpus);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_gpus),
		cmocka_unit_test(test_not_available),
		cmocka_unit_test(test_wrong_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
