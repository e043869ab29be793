/*
 * test-aws-quota.c: the pure parts of the AWS quota preflight (providers/aws/quota.c):
 * which vCPU quota an instance type draws on, and reading a GetServiceQuota answer.
 * tests/e2e/preflight.sh covers the journey against the emulator.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "providers/aws/ec2.h"

static void test_groups(void **state)
{
	const struct aws_quota_group *g = aws_quota_group_of("g5.xlarge");

	(void)state;
	assert_non_null(g);
	assert_ptr_equal(aws_quota_group_of("g6.xlarge"), g);
	assert_ptr_equal(aws_quota_group_of("g4dn.12xlarge"), g);
	assert_ptr_equal(aws_quota_group_of("vt1.3xlarge"), g);
	assert_non_null(aws_quota_group_of("p4d.24xlarge"));
	assert_ptr_equal(aws_quota_group_of("p5.48xlarge"), aws_quota_group_of("p3.2xlarge"));
	assert_ptr_not_equal(aws_quota_group_of("p5.48xlarge"), g);
	/* standard: one family letter, whatever follows the generation */
	assert_non_null(aws_quota_group_of("m5.large"));
	assert_ptr_equal(aws_quota_group_of("c6i.large"), aws_quota_group_of("m5.large"));
	assert_ptr_equal(aws_quota_group_of("z1d.large"), aws_quota_group_of("t3.micro"));
	assert_ptr_not_equal(aws_quota_group_of("m5.large"), g);
	/* families with quotas of their own, and names that are not types */
	assert_null(aws_quota_group_of("inf2.xlarge"));
	assert_null(aws_quota_group_of("trn1.32xlarge"));
	assert_null(aws_quota_group_of("dl1.24xlarge"));
	assert_null(aws_quota_group_of("x2idn.16xlarge"));
	assert_null(aws_quota_group_of("f1.2xlarge"));
	assert_null(aws_quota_group_of("gpu"));
	assert_null(aws_quota_group_of(""));
}

static void expect_bad(const char *body, const char *msg)
{
	struct gc_error err;
	int64_t limit = -1;

	gc_error_init(&err);
	assert_int_equal(aws_quota_parse(body, strlen(body), "L-DB2E81BA", &limit, NULL, 0, &err),
			 -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_string_equal(err.message, msg);
}

static void test_parse(void **state)
{
	static const char ok[] = "{\"Quota\":{\"ServiceCode\":\"ec2\",\"QuotaCode\":\"L-DB2E81BA\","
				 "\"QuotaName\":\"Running On-Demand G and VT instances\","
				 "\"Value\":64.0,\"Unit\":\"None\"}}";
	struct gc_error err;
	int64_t limit = -1;
	char name[96] = "";

	(void)state;
	gc_error_init(&err);
	assert_int_equal(
		aws_quota_parse(ok, strlen(ok), "L-DB2E81BA", &limit, name, sizeof(name), &err), 0);
	assert_int_equal(limit, 64);
	assert_string_equal(name, "Running On-Demand G and VT instances");
	/* an integer Value, and a fraction rounded down (never more than the limit) */
	assert_int_equal(aws_quota_parse("{\"Quota\":{\"Value\":0}}", 21, "L-DB2E81BA", &limit,
					 NULL, 0, &err),
			 0);
	assert_int_equal(limit, 0);
	assert_int_equal(aws_quota_parse("{\"Quota\":{\"Value\":7.9}}", 23, "L-DB2E81BA", &limit,
					 NULL, 0, &err),
			 0);
	assert_int_equal(limit, 7);

	expect_bad("<html>", "cannot read the GetServiceQuota answer: not a JSON object");
	expect_bad("{}", "cannot read the GetServiceQuota answer: no Quota.Value for L-DB2E81BA");
	expect_bad("{\"Quota\":{\"Value\":\"64\"}}",
		   "cannot read the GetServiceQuota answer: no Quota.Value for L-DB2E81BA");
	expect_bad("{\"Quota\":{\"QuotaCode\":\"L-1216C47A\",\"Value\":64}}",
		   "cannot read the GetServiceQuota answer: no Quota.Value for L-DB2E81BA");
	expect_bad("{\"Quota\":{\"Value\":-1}}",
		   "cannot read the GetServiceQuota answer: Quota.Value is not a count");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
