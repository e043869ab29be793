/*
 * test-monitoring.c: bootstrap.monitoring's step row (core/steps.c) and the Prometheus
 * scrape config `gpucluster monitoring` writes (bootstrap/scrape.c), as exact text.
 *
 * The cluster: a GPU node with a public and a private address, one with only a private
 * address, a node whose type has no GPU (no exporter: left out), one whose type is unknown
 * and whose only address is IPv6 (kept, bracketed), and one without any address (left
 * out). Then names that need escaping, text that is not UTF-8, and a cluster without GPU
 * nodes. Last, the security group rules bootstrap.monitoring_allow_from asks for
 * (core/rules.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bootstrap/hosts.h"
#include "bootstrap/scrape.h"
#include "core/buf.h"
#include "core/rules.h"
#include "core/spec.h"
#include "core/steps.h"

static void add(struct gc_hosts *h, const char *label, const char *id, const char *group,
		const char *pub, const char *priv, const char *type, bool facts, unsigned gpus)
{
	struct gc_hosts_node_in n = { .label = label,
				      .id = id,
				      .group = group,
				      .public_ip = pub,
				      .private_ip = priv,
				      .type = type,
				      .have_facts = facts,
				      .gpus = gpus };

	gc_hosts_add_node(h, &n);
}

static void cluster(struct gc_hosts *h)
{
	gc_hosts_init(h, "llm", "ubuntu", 22, NULL, NULL);
	add(h, "gpu/0", "i-0aaa", "gpu", "203.0.113.10", "10.0.0.10", "g5.12xlarge", true, 4);
	add(h, "gpu/1", "i-0bbb", "gpu", NULL, "10.0.0.11", "g5.12xlarge", true, 4);
	add(h, "cpu/0", "i-0ccc", "cpu", "203.0.113.12", "10.0.0.12", "t3.medium", true, 0);
	add(h, "new/0", "i-0ddd", "new", "2001:db8::5", NULL, "x9.huge", false, 0);
	add(h, "gpu/2", "i-0eee", "gpu", NULL, NULL, "g5.12xlarge", true, 4);
}

static void expect(const struct gc_hosts *h, enum gc_scrape_format f, bool private_addrs,
		   size_t want_n, const char *want)
{
	struct gc_buf b = GC_BUF_INIT(0);
	struct gc_error err;
	size_t n = 99;

	gc_error_init(&err);
	if (gc_scrape_format(&b, h, f, private_addrs, &n, &err) < 0)
		fail_msg("%s: %s", gc_scrape_format_names[f], err.message);
	if (strcmp(b.data, want) != 0)
		print_message("--- got\n%s--- want\n%s", b.data, want);
	assert_string_equal(b.data, want);
	assert_int_equal(n, want_n);
	gc_buf_release(&b);
}

#define LABELS(node, group, type, id)                                                 \
	"        labels:\n          cluster: \"llm\"\n          node: \"" node "\"\n" \
	"          group: \"" group "\"\n          instance_type: \"" type "\"\n"     \
	"          instance_id: \"" id "\"\n"

static void test_prometheus(void **state)
{
	struct gc_hosts h;

	(void)state;
	cluster(&h);
	expect(&h, GC_SCRAPE_PROMETHEUS, false, 3,
	       "scrape_configs:\n"
	       "  - job_name: \"gpucluster-llm\"\n"
	       "    static_configs:\n"
	       "      - targets: [\"203.0.113.10:9400\"]\n" LABELS("gpu/0", "gpu", "g5.12xlarge", "i-0aaa") "      - targets: [\"10.0.0.11:9400\"]\n" LABELS(
		       "gpu/1", "gpu", "g5.12xlarge",
		       "i-0bbb") "      - targets: [\"[2001:db8::5]:9400\"]\n" LABELS("new/0",
										      "new",
										      "x9.huge",
										      "i-0ddd"));
	/* --private: the private addresses; a node without one is left out */
	expect(&h, GC_SCRAPE_PROMETHEUS, true, 2,
	       "scrape_configs:\n"
	       "  - job_name: \"gpucluster-llm\"\n"
	       "    static_configs:\n"
	       "      - targets: [\"10.0.0.10:9400\"]\n" LABELS(
		       "gpu/0", "gpu", "g5.12xlarge",
		       "i-0aaa") "      - targets: [\"10.0.0.11:9400\"]\n" LABELS("gpu/1", "gpu",
										  "g5.12xlarge",
										  "i-0bbb"));
	gc_hosts_release(&h);
}

static void test_file_sd(void **state)
{
	struct gc_hosts h;

	(void)state;
	gc_hosts_init(&h, "llm", "ubuntu", 22, NULL, NULL);
	add(&h, "gpu/0", "i-0aaa", "gpu", "203.0.113.10", "10.0.0.10", "g5.12xlarge", true, 4);
	expect(&h, GC_SCRAPE_FILE_SD, false, 1,
	       "[\n"
	       "  {\n"
	       "    \"targets\": [\n"
	       "      \"203.0.113.10:9400\"\n"
	       "    ],\n"
	       "    \"labels\": {\n"
	       "      \"cluster\": \"llm\",\n"
	       "      \"node\": \"gpu/0\",\n"
	       "      \"group\": \"gpu\",\n"
	       "      \"instance_type\": \"g5.12xlarge\",\n"
	       "      \"instance_id\": \"i-0aaa\"\n"
	       "    }\n"
	       "  }\n"
	       "]\n");
	gc_hosts_release(&h);
}

/* Cloud text is quoted as a JSON string (a YAML double-quoted scalar): a quote or a
 * backslash cannot end the value (a line break is '?' already, hosts.h). */
static void test_escaping(void **state)
{
	struct gc_hosts h;

	(void)state;
	gc_hosts_init(&h, "llm", "ubuntu", 22, NULL, NULL);
	add(&h, "a\"b/0", "i-0aaa", "a\"b", "203.0.113.10", NULL, "t\\y\npe", true, 1);
	expect(&h, GC_SCRAPE_PROMETHEUS, false, 1,
	       "scrape_configs:\n"
	       "  - job_name: \"gpucluster-llm\"\n"
	       "    static_configs:\n"
	       "      - targets: [\"203.0.113.10:9400\"]\n" LABELS("a\\\"b/0", "a\\\"b",
								   "t\\\\y?pe", "i-0aaa"));
	gc_hosts_release(&h);
}

static void test_not_utf8(void **state)
{
	struct gc_hosts h;
	struct gc_buf b = GC_BUF_INIT(0);
	struct gc_error err;

	(void)state;
	gc_hosts_init(&h, "llm", "ubuntu", 22, NULL, NULL);
	add(&h, "gpu/0", "i-0aaa", "gpu", "203.0.113.10", NULL, "g5\xff", true, 1);
	gc_error_init(&err);
	assert_int_equal(gc_scrape_format(&b, &h, GC_SCRAPE_FILE_SD, false, NULL, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "not UTF-8"));
	assert_int_equal(b.len, 0);
	gc_buf_release(&b);
	gc_hosts_release(&h);
}

/* No GPU node: a valid document with no targets. */
static void test_empty(void **state)
{
	struct gc_hosts h;

	(void)state;
	gc_hosts_init(&h, "llm", "ubuntu", 22, NULL, NULL);
	add(&h, "cpu/0", "i-0ccc", "cpu", "203.0.113.12", NULL, "t3.medium", true, 0);
	expect(&h, GC_SCRAPE_PROMETHEUS, false, 0,
	       "scrape_configs:\n  - job_name: \"gpucluster-llm\"\n    static_configs: []\n");
	expect(&h, GC_SCRAPE_FILE_SD, false, 0, "[]\n");
	gc_hosts_release(&h);
}

/* The step: only in a spec that asks for it, on GPU nodes, with the instance type's GPUs. */
static void test_step_row(void **state)
{
	const struct gc_step_def *d = gc_step_find("monitoring");
	struct gc_spec spec;
	char *v;

	(void)state;
	assert_non_null(d);
	assert_int_equal(d->guard, GC_STEP_GUARD_GPU);
	assert_true(d->node_facts);
	assert_false(d->after_user_steps);
	memset(&spec, 0, sizeof(spec));
	assert_false(d->wanted(&spec));
	spec.bootstrap.monitoring = GC_MONITORING_DCGM;
	assert_true(d->wanted(&spec));
	assert_string_equal(d->inputs[0].var, "MONITORING");
	v = d->inputs[0].value(&spec);
	assert_string_equal(v, "dcgm");
	free(v);
	assert_string_equal(gc_scrape_format_names[GC_SCRAPE_FILE_SD], "file-sd");
	assert_null(gc_scrape_format_names[GC_SCRAPE_FILE_SD + 1]);
}

/* Port 9400 from each monitoring_from CIDR, described as ours; the drivers authorize each
 * port's CIDRs apart (gc_rules_cidrs). */
static void test_rules(void **state)
{
	static const char *const ssh[] = { "203.0.113.7/32" };
	static const char *const mon[] = { "198.51.100.0/24", "2001:db8::/48" };
	const struct gc_secgroup_request req = { .ssh_port = 22,
						 .allow_from = ssh,
						 .n_allow_from = 1,
						 .allow_members = true,
						 .monitoring_port = GC_DCGM_PORT,
						 .monitoring_from = mon,
						 .n_monitoring_from = 2 };
	/* the group has the SSH rule and the first monitoring one already, and an old one */
	const struct gc_rule have[] = {
		{ .port = 22, .cidr = "203.0.113.7/32", .ours = true },
		{ .port = 9400, .cidr = "198.51.100.0/24", .ours = true },
		{ .port = 9400, .cidr = "192.0.2.0/24", .ours = true },
	};
	struct gc_rule *want = NULL;
	bool add[8], drop[3];
	const char *cidrs[8];
	size_t n;

	(void)state;
	n = gc_rules_wanted(&req, "sg-1", true, &want);
	assert_int_equal(n, 4);
	assert_string_equal(want[0].description, GC_RULE_SSH);
	assert_int_equal(want[1].port, 9400);
	assert_string_equal(want[1].cidr, "198.51.100.0/24");
	assert_string_equal(want[1].description, GC_RULE_MONITORING);
	assert_true(want[1].ours);
	assert_string_equal(want[2].cidr, "2001:db8::/48");
	assert_true(want[3].all);
	assert_string_equal(want[3].description, GC_RULE_MEMBERS);
	assert_int_equal(gc_rules_diff(want, n, have, 3, add, drop), 3);
	assert_false(add[0]);
	assert_false(add[1]);
	assert_true(add[2]);
	assert_true(add[3]);
	assert_true(drop[2]);
	assert_int_equal(gc_rules_cidrs(want, add, n, 22, cidrs), 0);
	assert_int_equal(gc_rules_cidrs(want, add, n, GC_DCGM_PORT, cidrs), 1);
	assert_string_equal(cidrs[0], "2001:db8::/48");
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prometheus), cmocka_unit_test(test_file_sd),
		cmocka_unit_test(test_escaping),   cmocka_unit_test(test_not_utf8),
		cmocka_unit_test(test_empty),	   cmocka_unit_test(test_step_row),
		cmocka_unit_test(test_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
