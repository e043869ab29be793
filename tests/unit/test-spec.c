/*
 * test-spec.c: the spec loader and validator (core/spec*.c) against docs/spec.md.
 *
 * Every rule gets a spec that breaks exactly it, checked for the one diagnostic with its
 * line, column and wording; then the pipeline around the rules: the documented example,
 * defaults, several problems at once in position order, ${VAR} expansion, the file
 * limits (size, UTF-8, NUL, depth, alias and node bombs, documents), YAML typing and
 * syntax errors, and the small helpers (durations, names).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/provider.h"
#include "core/fabric.h"
#include "core/gpupick.h"
#include "core/spec.h"

/* Loading. */

struct kv {
	const char *name;
	const char *value;
};

static const char *kv_lookup(void *ctx, const char *name)
{
	for (const struct kv *p = ctx; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p->value;
	return NULL;
}

struct load {
	struct gc_spec *spec;
	struct gc_diags diags;
	struct gc_error err;
	int r;
};

static void load_env(struct load *l, const char *text, size_t len, const struct gc_spec_env *env)
{
	l->spec = NULL;
	gc_diags_init(&l->diags, "t.yaml");
	gc_error_init(&l->err);
	l->r = gc_spec_load_buffer(&l->spec, "t.yaml", text, len, env, &l->diags, &l->err);
	if (l->r == 0) {
		assert_non_null(l->spec);
		assert_int_equal(l->diags.nr, 0);
	} else {
		assert_int_equal(l->r, -1);
		assert_null(l->spec);
		assert_true(l->diags.nr > 0);
		assert_int_equal(l->err.code, GC_EINVALID);
	}
}

static void load(struct load *l, const char *text)
{
	load_env(l, text, strlen(text), NULL);
}

static void release(struct load *l)
{
	gc_spec_free(l->spec);
	gc_diags_release(&l->diags);
}

static void dump_diags(const struct load *l)
{
	for (size_t i = 0; i < l->diags.nr; i++)
		print_message("  got %u:%u: %s\n", l->diags.items[i].line, l->diags.items[i].col,
			      l->diags.items[i].message);
}

/* Asserts that text loads with exactly one problem: msg at line:col. */
static void expect1_env(const char *text, const struct gc_spec_env *env, unsigned line,
			unsigned col, const char *msg)
{
	struct load l;

	load_env(&l, text, strlen(text), env);
	if (l.diags.nr != 1 || strcmp(l.diags.items[0].message, msg) != 0 ||
	    l.diags.items[0].line != line || l.diags.items[0].col != col) {
		print_message("spec:\n%s\nwanted %u:%u: %s\n", text, line, col, msg);
		dump_diags(&l);
		release(&l);
		fail();
	}
	release(&l);
}

static void expect1(const char *text, unsigned line, unsigned col, const char *msg)
{
	expect1_env(text, NULL, line, col, msg);
}

/* Asserts that text loads cleanly and returns the spec (the caller releases l). */
static const struct gc_spec *expect_ok(struct load *l, const char *text)
{
	load(l, text);
	if (l->r != 0) {
		print_message("spec:\n%s\n", text);
		dump_diags(l);
		fail();
	}
	return l->spec;
}

/*
 * The specs below are a valid base plus one change. Lines 1-6 of HEAD_G are fixed, so
 * a key added to the group lands on line 7 at column 5.
 */
#define HEAD   "name: t\nprovider: {name: aws, region: us-east-1}\n"
#define HEAD_G HEAD "node_groups:\n  - name: g\n    count: 1\n    instance_types: [a1]\n"

/* provider.network: the ids in the cloud's shapes, a subnet per zone, the groups' zones. */
static void test_rules_network(void **state)
{
	struct load l;
	const struct gc_spec *spec;

	(void)state;
	spec = expect_ok(&l,
			 "name: t\n"
			 "provider:\n"
			 "  name: aws\n"
			 "  region: us-east-1\n"
			 "  network:\n"
			 "    vpc: vpc-0a1b2c3d\n"
			 "    subnets: {us-east-1b: subnet-0a1b2c3d, us-east-1a: subnet-1a1b2c3d}\n"
			 "node_groups:\n"
			 "  - {name: g, count: 1, instance_types: [a1]}\n"
			 "  - {name: h, count: 1, instance_types: [a1], zones: [us-east-1a]}\n");
	assert_string_equal(spec->provider.network.vpc, "vpc-0a1b2c3d");
	assert_int_equal(spec->provider.network.vpc_pos.line, 6);
	assert_int_equal(spec->provider.network.vpc_pos.col, 10);
	assert_int_equal(spec->provider.network.n_subnets, 2);
	assert_string_equal(spec->provider.network.subnets[0].zone, "us-east-1b");
	assert_string_equal(spec->provider.network.subnets[0].id, "subnet-0a1b2c3d");
	assert_int_equal(spec->provider.network.subnets[1].pos.line, 7);
	/* a group without zones gets the subnets' zones, in their order; a listed one stays */
	assert_int_equal(spec->groups[0].n_zones, 2);
	assert_string_equal(spec->groups[0].zones[0], "us-east-1b");
	assert_string_equal(spec->groups[0].zones[1], "us-east-1a");
	assert_int_equal(spec->groups[1].n_zones, 1);
	assert_string_equal(gc_spec_subnet(spec, "us-east-1a")->id, "subnet-1a1b2c3d");
	assert_null(gc_spec_subnet(spec, "us-east-1c"));
	assert_null(gc_spec_subnet(spec, NULL));
	release(&l);

	/* without it: no VPC, no subnets, the groups' zones as written */
	spec = expect_ok(&l, HEAD_G);
	assert_null(spec->provider.network.vpc);
	assert_int_equal(spec->provider.network.n_subnets, 0);
	assert_int_equal(spec->groups[0].n_zones, 0);
	release(&l);

#define NET(x)                                                                            \
	"name: t\nprovider:\n  name: tencent\n  region: ap-guangzhou\n  network: " x "\n" \
	"node_groups: [{name: g, count: 1, instance_types: [a1]}]\n"
	expect1(NET("{vpc: vpc-0a1b2c3d}"), 5, 12,
		"missing required key 'subnets' in provider.network");
	expect1(NET("{vpc: vpc-2at5y1pn, subnets: {ap-guangzhou-6: vsw-abcdefgh12}}"), 5, 58,
		"provider.network.subnets.ap-guangzhou-6: 'vsw-abcdefgh12' is not a valid subnet id: "
		"expected subnet- and 8 of a-z and 0-9");
	expect1(NET("{vpc: vpc-0a1b2c3d4e5f60718, subnets: {ap-guangzhou-6: subnet-7a8b9c0d}}"), 5,
		18,
		"provider.network.vpc: 'vpc-0a1b2c3d4e5f60718' is not a valid VPC id: expected "
		"vpc- and 8 of a-z and 0-9");
	expect1(NET("[vpc-2at5y1pn]"), 5, 12, "provider.network: expected a mapping, got a list");
#undef NET
}

/* The documented example. */

static char *read_doc_example(void)
{
	const char *dir = getenv("GC_TEST_DATA");
	struct gc_buf b = GC_BUF_INIT(1 << 20);
	char line[512], *path, *start, *end;
	FILE *f;

	assert_non_null(dir);
	path = gc_xasprintf("%s/../docs/spec.md", dir);
	f = fopen(path, "r");
	free(path);
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		assert_int_equal(gc_buf_addstr(&b, line), 0);
	fclose(f);
	/* the first ```yaml block is the example */
	start = strstr(b.data, "```yaml\n");
	assert_non_null(start);
	start += strlen("```yaml\n");
	end = strstr(start, "```\n");
	assert_non_null(end);
	path = gc_xstrndup(start, (size_t)(end - start));
	gc_buf_release(&b);
	return path;
}

static void test_doc_example(void **state)
{
	char *text = read_doc_example();
	const struct gc_spec *s;
	const struct gc_spec_group *g;
	struct load l;

	(void)state;
	s = expect_ok(&l, text);
	assert_string_equal(s->file, "t.yaml");
	assert_string_equal(s->name, "llm-train");
	assert_ptr_equal(s->provider.ops, gc_provider_by_name("aws"));
	assert_string_equal(s->provider.name, "aws");
	assert_string_equal(s->provider.region, "us-east-1");
	assert_null(s->provider.profile);
	assert_null(s->provider.endpoint);
	assert_string_equal(s->ssh.user, "ubuntu");
	assert_int_equal(s->ssh.port, 22);
	assert_int_equal(s->ssh.n_allow_from, 0);
	assert_int_equal(s->n_groups, 1);
	g = &s->groups[0];
	assert_string_equal(g->name, "workers");
	assert_int_equal(g->count, 4);
	assert_int_equal(g->n_instance_types, 2);
	assert_string_equal(g->instance_types[0], "p4d.24xlarge");
	assert_string_equal(g->instance_types[1], "p4de.24xlarge");
	assert_int_equal(g->n_zones, 2);
	assert_string_equal(g->zones[0], "us-east-1a");
	assert_string_equal(g->zones[1], "us-east-1b");
	assert_int_equal(g->market, GC_MARKET_SPOT_THEN_ON_DEMAND);
	assert_true(g->max_spot_price == 0);
	assert_string_equal(g->image, "ubuntu-22.04");
	assert_true(g->image_is_alias);
	assert_int_equal(g->disk_gb, 500);
	assert_int_equal(g->placement, GC_PLACEMENT_SAME_ZONE);
	assert_int_equal(g->pos.line, 8);
	assert_int_equal(g->pos.col, 5);
	assert_int_equal(g->count_pos.line, 9);
	assert_int_equal(g->count_pos.col, 12);
	assert_string_equal(s->bootstrap.driver, "570");
	assert_string_equal(s->bootstrap.cuda, "12.8");
	assert_string_equal(s->bootstrap.cudnn, "9");
	assert_int_equal(s->bootstrap.container, GC_CONTAINER_DOCKER);
	assert_int_equal(s->bootstrap.n_steps, 1);
	assert_string_equal(s->bootstrap.steps[0].name, "pull-image");
	assert_string_equal(s->bootstrap.steps[0].run,
			    "docker pull nvcr.io/nvidia/pytorch:25.01-py3");
	assert_int_equal(s->bootstrap.steps[0].timeout_s, 1800);
	assert_int_equal(s->bootstrap.smoke, GC_SMOKE_DRIVER | GC_SMOKE_CUDA | GC_SMOKE_CONTAINER);
	assert_int_equal(s->lifecycle.ttl_s, 12 * 3600);
	assert_true(s->lifecycle.max_hourly_cost == 200);
	assert_int_equal(s->lifecycle.max_hourly_cost_pos.line, 27);
	assert_int_equal(s->lifecycle.max_hourly_cost_pos.col, 20);
	assert_int_equal(s->n_tags, 1);
	assert_string_equal(s->tags[0].key, "team");
	assert_string_equal(s->tags[0].value, "research");
	assert_int_equal(gc_spec_node_count(s), 4);
	release(&l);
	free(text);
}

/* lifecycle.currency (USD unless CNY) and lifecycle.cny_per_usd; a bid's place is kept. */
static void test_currency(void **state)
{
	const struct gc_spec *s;
	struct load l;

	(void)state;
	s = expect_ok(&l, HEAD_G);
	assert_string_equal(s->lifecycle.currency, "USD");
	assert_true(s->lifecycle.cny_per_usd == 0);
	release(&l);
	s = expect_ok(&l,
		      HEAD_G "    market: spot\n    max_spot_price: 2\n"
			     "lifecycle:\n  currency: CNY\n  cny_per_usd: 7.15\n");
	assert_string_equal(s->lifecycle.currency, "CNY");
	assert_true(s->lifecycle.cny_per_usd == 7.15);
	assert_int_equal(s->groups[0].max_spot_price_pos.line, 8);
	assert_int_equal(s->groups[0].max_spot_price_pos.col, 21);
	release(&l);
	expect1(HEAD_G "lifecycle:\n  currency: EUR\n", 8, 13,
		"lifecycle.currency: unknown value 'EUR'; expected one of USD, CNY");
	expect1(HEAD_G "lifecycle:\n  cny_per_usd: -7\n", 8, 16,
		"lifecycle.cny_per_usd: -7 is out of range: must be more than 0 and at most 1000");
	expect1(HEAD_G "lifecycle:\n  cny_per_usd: seven\n", 8, 16,
		"lifecycle.cny_per_usd: expected a number, got a string");
}

static void test_defaults(void **state)
{
	const struct gc_spec *s;
	const struct gc_spec_group *g;
	struct load l;

	(void)state;
	s = expect_ok(&l, HEAD_G);
	assert_null(s->provider.profile);
	assert_null(s->provider.endpoint);
	assert_string_equal(s->ssh.user, "ubuntu");
	assert_int_equal(s->ssh.port, 22);
	assert_int_equal(s->ssh.n_allow_from, 0);
	g = &s->groups[0];
	assert_int_equal(g->n_zones, 0);
	assert_int_equal(g->market, GC_MARKET_ON_DEMAND);
	assert_true(g->max_spot_price == 0);
	assert_string_equal(g->image, "ubuntu-22.04");
	assert_true(g->image_is_alias);
	assert_int_equal(g->disk_gb, 100);
	assert_int_equal(g->placement, GC_PLACEMENT_ANY);
	assert_string_equal(s->bootstrap.driver, "570");
	assert_string_equal(s->bootstrap.cuda, "12.8");
	assert_string_equal(s->bootstrap.cudnn, "9");
	assert_int_equal(s->bootstrap.container, GC_CONTAINER_DOCKER);
	assert_int_equal(s->bootstrap.n_steps, 0);
	assert_int_equal(s->bootstrap.smoke, GC_SMOKE_DRIVER | GC_SMOKE_CUDA | GC_SMOKE_CONTAINER);
	assert_int_equal(s->lifecycle.ttl_s, 0);
	assert_true(s->lifecycle.max_hourly_cost == 0);
	assert_int_equal(s->lifecycle.max_hourly_cost_pos.line, 0);
	assert_int_equal(s->n_tags, 0);
	release(&l);

	/* null and empty values are the same as leaving the key out */
	s = expect_ok(&l,
		      HEAD_G "    zones:\n    image: ~\n    market: null\n"
			     "ssh:\nbootstrap: {}\nlifecycle:\ntags: {}\n");
	assert_int_equal(s->groups[0].n_zones, 0);
	assert_string_equal(s->groups[0].image, "ubuntu-22.04");
	assert_int_equal(s->groups[0].market, GC_MARKET_ON_DEMAND);
	assert_string_equal(s->ssh.user, "ubuntu");
	release(&l);

	/* the defaults that depend on other keys: cudnn and smoke follow cuda and container */
	s = expect_ok(&l, HEAD_G "bootstrap: {cuda: none, container: none}\n");
	assert_string_equal(s->bootstrap.cudnn, "none");
	assert_int_equal(s->bootstrap.smoke, GC_SMOKE_DRIVER);
	release(&l);
	s = expect_ok(&l, HEAD_G "bootstrap: {container: none}\n");
	assert_int_equal(s->bootstrap.smoke, GC_SMOKE_DRIVER | GC_SMOKE_CUDA);
	release(&l);
}

static void test_full_spec(void **state)
{
	const struct gc_spec *s;
	struct load l;

	(void)state;
	s = expect_ok(&l,
		      "name: ali-1\n"
		      "provider:\n"
		      "  name: alibaba\n"
		      "  region: cn-hangzhou\n"
		      "  profile: Research_1.x-y\n"
		      "  endpoint: http://127.0.0.1:4566/ecs?x=1\n"
		      "ssh:\n"
		      "  user: _deploy-1\n"
		      "  port: 65535\n"
		      "  allow_from: [203.0.113.7/32, \"2001:DB8::/48\", 0.0.0.0/0]\n"
		      "node_groups:\n"
		      "  - name: a\n"
		      "    count: 1000\n"
		      "    instance_types: [ecs.gn7i-c8g1.2xlarge, ecs.gn6v-c8g1.2xlarge]\n"
		      "    zones: [cn-hangzhou-h, cn-hangzhou-i]\n"
		      "    market: spot\n"
		      "    max_spot_price: 1000\n"
		      "    image: m-bp1g7004ksh0oeuc1c3c\n"
		      "    disk_gb: 20\n"
		      "    placement: any\n"
		      "  - name: b\n"
		      "    count: 0\n"
		      "    instance_types: [A.b_c-9]\n"
		      "    market: spot-then-on-demand\n"
		      "    max_spot_price: 0.01\n"
		      "    image: ubuntu_22_04_x64_20G_alibase_20240101.vhd\n"
		      "    disk_gb: 16384\n"
		      "bootstrap:\n"
		      "  driver: 535\n"
		      "  cuda: \"11.0\"\n"
		      "  cudnn: \"8.9\"\n"
		      "  container: docker\n"
		      "  steps:\n"
		      "    - {name: a, run: x, timeout: 1s}\n"
		      "    - {name: b-2, run: \"y\", timeout: 24h}\n"
		      "  smoke: [nccl, container, cuda, driver]\n"
		      "lifecycle: {ttl: 10m, max_hourly_cost: 1000000}\n"
		      "tags:\n"
		      "  team: research\n"
		      "  n: 1234\n"
		      "  flag: true\n"
		      "  empty:\n"
		      "  \"with space\": \"a b/c:d=e+f-g@h_i.j\"\n");
	assert_ptr_equal(s->provider.ops, gc_provider_by_name("alibaba"));
	assert_string_equal(s->provider.profile, "Research_1.x-y");
	assert_string_equal(s->provider.endpoint, "http://127.0.0.1:4566/ecs?x=1");
	assert_string_equal(s->ssh.user, "_deploy-1");
	assert_int_equal(s->ssh.port, 65535);
	assert_int_equal(s->ssh.n_allow_from, 3);
	assert_string_equal(s->ssh.allow_from[0], "203.0.113.7/32");
	assert_string_equal(s->ssh.allow_from[1], "2001:db8::/48"); /* canonical */
	assert_string_equal(s->ssh.allow_from[2], "0.0.0.0/0");
	assert_int_equal(s->groups[0].count, 1000);
	assert_int_equal(s->groups[0].market, GC_MARKET_SPOT);
	assert_true(s->groups[0].max_spot_price == 1000);
	assert_false(s->groups[0].image_is_alias);
	assert_int_equal(s->groups[0].disk_gb, 20);
	assert_int_equal(s->groups[1].count, 0);
	assert_true(s->groups[1].max_spot_price > 0.0099 && s->groups[1].max_spot_price < 0.0101);
	assert_string_equal(s->groups[1].image, "ubuntu_22_04_x64_20G_alibase_20240101.vhd");
	assert_string_equal(s->bootstrap.driver, "535");
	assert_string_equal(s->bootstrap.cuda, "11.0");
	assert_string_equal(s->bootstrap.cudnn, "8.9");
	assert_int_equal(s->bootstrap.n_steps, 2);
	assert_int_equal(s->bootstrap.steps[0].timeout_s, 1);
	assert_int_equal(s->bootstrap.steps[1].timeout_s, 86400);
	assert_int_equal(s->bootstrap.smoke,
			 GC_SMOKE_DRIVER | GC_SMOKE_CUDA | GC_SMOKE_CONTAINER | GC_SMOKE_NCCL);
	assert_int_equal(s->lifecycle.ttl_s, 600);
	assert_int_equal(s->n_tags, 5);
	assert_string_equal(s->tags[1].value, "1234");
	assert_string_equal(s->tags[2].value, "true");
	assert_string_equal(s->tags[3].value, "");
	assert_string_equal(s->tags[4].key, "with space");
	assert_int_equal(gc_spec_node_count(s), 1000);
	release(&l);

	s = expect_ok(&l,
		      "name: tc\nprovider: {name: tencent, region: ap-guangzhou, "
		      "endpoint: \"https://[::1]:9443\"}\n"
		      "node_groups: [{name: g, count: 2, instance_types: [GN7.5XLARGE80], "
		      "image: img-abcd1234, placement: same-zone}, "
		      "{name: h, count: 3, instance_types: [x], image: gpu-ready}]\n"
		      "bootstrap: {driver: preinstalled, cuda: none, cudnn: none, smoke: []}\n");
	assert_ptr_equal(s->provider.ops, gc_provider_by_name("tencent"));
	assert_string_equal(s->groups[0].image, "img-abcd1234");
	assert_int_equal(s->groups[0].placement, GC_PLACEMENT_SAME_ZONE);
	assert_true(s->groups[1].image_is_alias);
	assert_int_equal(s->bootstrap.smoke, 0);
	assert_int_equal(gc_spec_node_count(s), 5);
	release(&l);

	s = expect_ok(&l,
		      "name: a\nprovider: {name: aws, region: us-east-1}\n"
		      "node_groups: [{name: g, count: 1, instance_types: [a], "
		      "image: ami-0123456789abcdef0}, {name: h, count: 1, instance_types: [a], "
		      "image: ami-01234567}]\n");
	assert_string_equal(s->groups[0].image, "ami-0123456789abcdef0");
	assert_false(s->groups[1].image_is_alias);
	release(&l);
}

/* Rules: top level and provider. */

static void test_rules_top(void **state)
{
	/* the cluster's name: refused values, and values of the wrong type */
	static const char *const bad_names[] = {
		"LLM_train",
		"a23456789012345678901234567890123",
		"train-",
		"1train",
	};
	static const struct {
		const char *value, *got;
		unsigned col;
	} wrong_type[] = {
		{ "", "null", 6 },
		{ " true", "a boolean", 7 },
		{ " 123", "an integer", 7 },
		{ " {a: b}", "a mapping", 7 },
	};
	const char *rest = "provider: {name: aws, region: us-east-1}\n"
			   "node_groups: [{name: g, count: 1, instance_types: [a]}]\n";
	char in[256], msg[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		snprintf(in, sizeof(in), "name: %s\n%s", bad_names[i], rest);
		snprintf(msg, sizeof(msg),
			 "name: '%s' is not a valid name: use 1-32 characters of a-z, 0-9 and '-', "
			 "starting with a letter and not ending with '-'",
			 bad_names[i]);
		expect1(in, 1, 7, msg);
	}
	expect1(rest, 1, 1, "missing required key 'name'");
	for (size_t i = 0; i < sizeof(wrong_type) / sizeof(wrong_type[0]); i++) {
		snprintf(in, sizeof(in), "name:%s\n%s", wrong_type[i].value, rest);
		snprintf(msg, sizeof(msg), "name: expected a string, got %s", wrong_type[i].got);
		expect1(in, 1, wrong_type[i].col, msg);
	}
	expect1(HEAD_G "nmae: x\n", 7, 1, "unknown key 'nmae'; did you mean 'name'?");
	expect1(HEAD_G "colour: x\n", 7, 1, "unknown key 'colour'");
	expect1(HEAD_G "<<: {a: b}\n", 7, 1, "unknown key '<<'");
	expect1(HEAD_G "? [a]\n: b\n", 7, 3, "expected a string key, got a list");
	expect1("name: t\nnode_groups: [{name: g, count: 1, instance_types: [a]}]\n", 1, 1,
		"missing required key 'provider'");
	expect1("name: t\nprovider: {name: aws, region: us-east-1}\n", 1, 1,
		"missing required key 'node_groups'");
	expect1("- a\n- b\n", 1, 1, "expected a mapping, got a list");
	expect1("just text\n", 1, 1, "expected a mapping, got a string");
	expect1("---\n", 2, 1, "expected a mapping, got null");
}

static void test_rules_provider(void **state)
{
	const char *groups = "node_groups: [{name: g, count: 1, instance_types: [a]}]\n";
	char buf[512];

	(void)state;
#define PROV(x) (snprintf(buf, sizeof(buf), "name: t\nprovider: %s\n%s", (x), groups), buf)
	expect1(PROV("{name: awz, region: us-east-1}"), 2, 18,
		"provider.name: unknown value 'awz'; expected one of aws, alibaba, tencent; "
		"did you mean 'aws'?");
	expect1(PROV("{name: AWS, region: us-east-1}"), 2, 18,
		"provider.name: unknown value 'AWS'; expected one of aws, alibaba, tencent; "
		"did you mean 'aws'?");
	expect1(PROV("{name: gcp, region: us-east-1}"), 2, 18,
		"provider.name: unknown value 'gcp'; expected one of aws, alibaba, tencent");
	expect1(PROV("{name: 1, region: us-east-1}"), 2, 18,
		"provider.name: expected a string, got an integer");
	expect1(PROV("{region: us-east-1}"), 2, 11, "missing required key 'name' in provider");
	expect1(PROV("{name: aws}"), 2, 11, "missing required key 'region' in provider");
	expect1(PROV("aws"), 2, 11, "provider: expected a mapping, got a string");
	expect1(PROV("~"), 2, 11, "provider: expected a mapping, got null");
	expect1(PROV("{name: aws, region: us-east-1, regoin: x}"), 2, 42,
		"unknown key 'regoin' in provider; did you mean 'region'?");
	static const char *const bad_regions[] = { "us_east",
						   "useast",
						   "u",
						   "-us-east",
						   "us-east-",
						   "Us-east",
						   "a2345678901234567890123456789-123" };
	for (size_t i = 0; i < sizeof(bad_regions) / sizeof(bad_regions[0]); i++) {
		char in[128], msg[512];

		snprintf(in, sizeof(in), "{name: aws, region: %s}", bad_regions[i]);
		snprintf(msg, sizeof(msg),
			 "provider.region: '%s' is not a valid region: use 2-32 "
			 "characters of a-z, 0-9 and '-' with at least one '-', starting with a "
			 "letter and not ending with '-'",
			 bad_regions[i]);
		expect1(PROV(in), 2, 31, msg);
	}
	expect1(PROV("{name: aws, region: us-east-1, profile: \"a b\"}"), 2, 51,
		"provider.profile: 'a b' is not a valid profile: use 1-64 characters of A-Z, a-z, "
		"0-9, '_', '.' and '-'");
	static const char *const bad_endpoints[] = {
		"ftp://x",
		"http://",
		"https://",
		"http:///x",
		"https://host:0",
		"https://host:65536",
		"https://host:",
		"https://host:x",
		"http://[]:80",
		"http://ho st",
		"https://h\\x01",
		"http://[::1",
		"x",
	};
	for (size_t i = 0; i < sizeof(bad_endpoints) / sizeof(bad_endpoints[0]); i++) {
		char in[128], msg[512];

		snprintf(in, sizeof(in), "{name: aws, region: us-east-1, endpoint: \"%s\"}",
			 bad_endpoints[i]);
		snprintf(msg, sizeof(msg),
			 "provider.endpoint: '%s' is not a valid endpoint: "
			 "expected an http:// or https:// URL with a host, at most 256 characters",
			 bad_endpoints[i]);
		expect1(PROV(in), 2, 52, msg);
	}
	/* userinfo is refused, and what it holds is never shown (a token as the user name,
	 * a password) */
	expect1(PROV("{name: aws, region: us-east-1, endpoint: \"http://user@host\"}"), 2, 52,
		"provider.endpoint: 'http://***@host' is not a valid endpoint: credentials do "
		"not belong in a URL");
	expect1(PROV("{name: aws, region: us-east-1, endpoint: \"http://u:hunter2@h:1/x\"}"), 2, 52,
		"provider.endpoint: 'http://u:***@h:1/x' is not a valid endpoint: credentials do "
		"not belong in a URL");
#undef PROV
	/* an endpoint at the length limit passes, one byte more does not */
	{
		struct gc_buf b = GC_BUF_INIT(0);
		struct load l;
		size_t host = 256 - strlen("https://");

		gc_buf_addstr(&b,
			      "name: t\nprovider: {name: aws, region: us-east-1, endpoint: "
			      "https://");
		for (size_t i = 0; i < host; i++)
			gc_buf_addch(&b, 'h');
		gc_buf_addf(&b, "}\n%s", groups);
		load(&l, b.data);
		assert_int_equal(l.r, 0);
		release(&l);
		gc_buf_reset(&b);
		gc_buf_addstr(&b,
			      "name: t\nprovider: {name: aws, region: us-east-1, endpoint: "
			      "https://");
		for (size_t i = 0; i < host + 1; i++)
			gc_buf_addch(&b, 'h');
		gc_buf_addf(&b, "}\n%s", groups);
		load(&l, b.data);
		assert_int_equal(l.r, -1);
		assert_int_equal(l.diags.nr, 1);
		assert_non_null(strstr(l.diags.items[0].message, "is not a valid endpoint"));
		/* long values are shortened in messages */
		assert_non_null(strstr(l.diags.items[0].message, "...'"));
		release(&l);
		gc_buf_release(&b);
	}
}

/* Rules: provider.oidc, per cloud. */

static void test_rules_provider_oidc(void **state)
{
	const char *groups = "node_groups: [{name: g, count: 1, instance_types: [a]}]\n";
	const struct gc_spec *s;
	struct load l;
	char buf[1024];

	(void)state;
#define OIDC(cloud, region, x)                                                             \
	(snprintf(buf, sizeof(buf),                                                        \
		  "name: t\nprovider:\n  name: %s\n  region: %s\n  oidc: %s\n%s", (cloud), \
		  (region), (x), groups),                                                  \
	 buf)
	/* what each cloud needs, and the defaults left to the drivers */
	s = expect_ok(&l,
		      OIDC("aws", "us-east-1", "{role: arn:aws:iam::111122223333:role/ci/train}"));
	assert_string_equal(s->provider.oidc.role, "arn:aws:iam::111122223333:role/ci/train");
	assert_null(s->provider.oidc.provider);
	assert_null(s->provider.oidc.audience);
	assert_null(s->provider.oidc.session_name);
	release(&l);
	s = expect_ok(&l,
		      OIDC("alibaba", "cn-hangzhou",
			   "{role: \"acs:ram::5123456789012345:role/ci\", provider: "
			   "\"acs:ram::5123456789012345:oidc-provider/github\", audience: "
			   "sts.aliyuncs.com, session_name: run-42.a@b_c}"));
	assert_string_equal(s->provider.oidc.provider,
			    "acs:ram::5123456789012345:oidc-provider/github");
	assert_string_equal(s->provider.oidc.audience, "sts.aliyuncs.com");
	assert_string_equal(s->provider.oidc.session_name, "run-42.a@b_c");
	release(&l);
	s = expect_ok(&l,
		      OIDC("tencent", "ap-guangzhou",
			   "{role: \"qcs::cam::uin/100000000001:role/4611686018427397919\", "
			   "provider: github.actions_1}"));
	assert_string_equal(s->provider.oidc.provider, "github.actions_1");
	release(&l);
	/* null is no block at all */
	s = expect_ok(&l, OIDC("aws", "us-east-1", "~"));
	assert_null(s->provider.oidc.role);
	release(&l);

	expect1(OIDC("aws", "us-east-1", "{audience: x}"), 5, 9,
		"missing required key 'role' in provider.oidc");
	expect1(OIDC("alibaba", "cn-hangzhou", "{role: \"acs:ram::1:role/ci\"}"), 5, 9,
		"missing required key 'provider' in provider.oidc");
	expect1(OIDC("aws", "us-east-1",
		     "{role: \"arn:aws:iam::111122223333:role/ci\", provider: x}"),
		5, 63,
		"provider.oidc.provider: AWS finds the identity provider by the token's issuer; "
		"leave this key out");
	expect1(OIDC("aws", "us-east-1", "[]"), 5, 9,
		"provider.oidc: expected a mapping, got a list");
	/* role shapes: another cloud's ARN, a short account, a trailing '/', a bad role id */
	expect1(OIDC("aws", "us-east-1", "{role: \"acs:ram::1:role/ci\"}"), 5, 16,
		"provider.oidc.role: 'acs:ram::1:role/ci' is not a valid role: expected "
		"arn:aws:iam::ACCOUNT:role/NAME");
	expect1(OIDC("aws", "us-east-1", "{role: \"arn:aws:iam::11112222333:role/ci\"}"), 5, 16,
		"provider.oidc.role: 'arn:aws:iam::11112222333:role/ci' is not a valid role: "
		"expected arn:aws:iam::ACCOUNT:role/NAME");
	expect1(OIDC("aws", "us-east-1", "{role: \"arn:aws:iam::111122223333:role/ci/\"}"), 5, 16,
		"provider.oidc.role: 'arn:aws:iam::111122223333:role/ci/' is not a valid role: "
		"expected arn:aws:iam::ACCOUNT:role/NAME");
	expect1(OIDC("tencent", "ap-guangzhou",
		     "{role: \"qcs::cam::uin/1:role/abc\", provider: p}"),
		5, 16,
		"provider.oidc.role: 'qcs::cam::uin/1:role/abc' is not a valid role: expected "
		"qcs::cam::uin/ACCOUNT:roleName/NAME");
	expect1(OIDC("alibaba", "cn-hangzhou",
		     "{role: \"acs:ram::1:role/ci\", provider: \"acs:ram::1:role/ci\"}"),
		5, 48,
		"provider.oidc.provider: 'acs:ram::1:role/ci' is not a valid OIDC provider: "
		"expected acs:ram::ACCOUNT:oidc-provider/NAME");
	/* lengths at the limits */
	{
		char name[70], aud[300], in[700], msg[900];

		memset(name, 'n', 64);
		name[64] = '\0';
		memset(aud, 'a', 256);
		aud[256] = '\0';
		snprintf(in, sizeof(in),
			 "{role: \"arn:aws:iam::111122223333:role/ci\", session_name: %s, "
			 "audience: %s}",
			 name, aud);
		s = expect_ok(&l, OIDC("aws", "us-east-1", in));
		assert_int_equal(strlen(s->provider.oidc.audience), 256);
		release(&l);
		name[64] = 'n';
		name[65] = '\0';
		snprintf(in, sizeof(in),
			 "{role: \"arn:aws:iam::111122223333:role/ci\", session_name: %s}", name);
		snprintf(msg, sizeof(msg),
			 "provider.oidc.session_name: '%s' is not a valid session name: use 2-64 "
			 "characters of A-Z, a-z, 0-9, '_', '.', '@' and '-'",
			 name);
		expect1(OIDC("aws", "us-east-1", in), 5, 67, msg);
		aud[256] = 'a';
		aud[257] = '\0';
		snprintf(in, sizeof(in),
			 "{role: \"arn:aws:iam::111122223333:role/ci\", audience: %s}", aud);
		load(&l, OIDC("aws", "us-east-1", in));
		assert_int_equal(l.r, -1);
		assert_int_equal(l.diags.nr, 1);
		assert_non_null(strstr(l.diags.items[0].message, "is not a valid audience"));
		release(&l);
	}
#undef OIDC
}

/* Rules: ssh. */

static void test_rules_ssh(void **state)
{
	(void)state;
	expect1(HEAD_G "ssh: {user: Root}\n", 7, 13,
		"ssh.user: 'Root' is not a valid user: use 1-32 characters of a-z, 0-9, '_' and "
		"'-', starting with a letter or '_'");
	expect1(HEAD_G "ssh: {user: 1abc}\n", 7, 13,
		"ssh.user: '1abc' is not a valid user: use 1-32 characters of a-z, 0-9, '_' and "
		"'-', starting with a letter or '_'");
	expect1(HEAD_G "ssh: {port: 0}\n", 7, 13, "ssh.port: 0 is out of range 1..65535");
	expect1(HEAD_G "ssh: {port: 65536}\n", 7, 13, "ssh.port: 65536 is out of range 1..65535");
	expect1(HEAD_G "ssh: {port: 99999999999999999999999}\n", 7, 13,
		"ssh.port: 99999999999999999999999 is out of range 1..65535");
	expect1(HEAD_G "ssh: {port: \"22\"}\n", 7, 13,
		"ssh.port: expected an integer, got a string");
	expect1(HEAD_G "ssh: {allow_from: []}\n", 7, 19, "ssh.allow_from: must not be empty");
	expect1(HEAD_G "ssh: {allow_from: 10.0.0.0/8}\n", 7, 19,
		"ssh.allow_from: expected a list, got a string");
	expect1(HEAD_G "ssh: {allow_from: [10.0.0.1/33]}\n", 7, 20,
		"ssh.allow_from[0]: '10.0.0.1/33' is not a valid CIDR");
	expect1(HEAD_G "ssh: {allow_from: [10.0.0.1]}\n", 7, 20,
		"ssh.allow_from[0]: '10.0.0.1' is not a valid CIDR");
	expect1(HEAD_G "ssh: {allow_from: [10.0.0.0/8, 10.0.0.1/24]}\n", 7, 32,
		"ssh.allow_from[1]: '10.0.0.1/24' has host bits set; did you mean '10.0.0.0/24'?");
	expect1(HEAD_G "ssh: {allow_from: [\"2001:db8::1/48\"]}\n", 7, 20,
		"ssh.allow_from[0]: '2001:db8::1/48' has host bits set; did you mean "
		"'2001:db8::/48'?");
	/* duplicates are the same network, however written */
	expect1(HEAD_G "ssh:\n  allow_from:\n    - 2001:db8::/48\n    - 2001:DB8:0::/48\n", 10, 7,
		"ssh.allow_from: duplicate entry '2001:DB8:0::/48' (first at line 9)");
	expect1(HEAD_G "ssh: {allow_from: [[1]]}\n", 7, 20,
		"ssh.allow_from[0]: expected a string, got a list");
	{
		struct gc_buf b = GC_BUF_INIT(0);

		gc_buf_addstr(&b, HEAD_G "ssh:\n  allow_from:\n");
		for (int i = 0; i < 33; i++)
			gc_buf_addf(&b, "    - 10.0.%d.0/24\n", i);
		expect1(b.data, 9, 5, "ssh.allow_from: 33 entries, at most 32 are allowed");
		gc_buf_release(&b);
	}
	expect1(HEAD_G "ssh: {prot: 22}\n", 7, 7,
		"unknown key 'prot' in ssh; did you mean 'port'?");
}

/* Rules: node groups. */

static void test_rules_groups(void **state)
{
	(void)state;
	expect1(HEAD "node_groups: []\n", 3, 14, "node_groups: must not be empty");
	expect1(HEAD "node_groups: {name: g}\n", 3, 14,
		"node_groups: expected a list, got a mapping");
	expect1(HEAD "node_groups:\n", 3, 13, "node_groups: expected a list, got null");
	expect1(HEAD "node_groups: [x]\n", 3, 15,
		"node_groups[0]: expected a mapping, got a string");
	{
		struct gc_buf b = GC_BUF_INIT(0);

		gc_buf_addstr(&b, HEAD "node_groups:\n");
		for (int i = 0; i < 33; i++)
			gc_buf_addf(&b, "  - {name: g%d, count: 1, instance_types: [a]}\n", i);
		expect1(b.data, 4, 3, "node_groups: 33 entries, at most 32 are allowed");
		gc_buf_release(&b);
	}
	expect1(HEAD "node_groups:\n  - name: g\n    instance_types: [a]\n", 4, 5,
		"missing required key 'count' in node_groups[0]");
	expect1(HEAD "node_groups:\n  - name: g\n    cuont: 4\n    instance_types: [a]\n"
		     "    count: 1\n",
		5, 5, "unknown key 'cuont' in node_groups[0]; did you mean 'count'?");
	expect1(HEAD "node_groups:\n  - count: 1\n    instance_types: [a]\n", 4, 5,
		"missing required key 'name' in node_groups[0]");
	expect1(HEAD "node_groups:\n  - {name: Workers, count: 1, instance_types: [a]}\n", 4, 12,
		"node_groups[0].name: 'Workers' is not a valid name: use 1-24 characters of a-z, "
		"0-9 and '-', starting with a letter and not ending with '-'");
	expect1(HEAD "node_groups:\n  - {name: a234567890123456789012345, count: 1, "
		     "instance_types: [a]}\n",
		4, 12,
		"node_groups[0].name: 'a234567890123456789012345' is not a valid name: use 1-24 "
		"characters of a-z, 0-9 and '-', starting with a letter and not ending with '-'");
	expect1(HEAD "node_groups:\n  - name: workers\n    count: 1\n    instance_types: [a]\n"
		     "  - name: workers\n    count: 2\n    instance_types: [a]\n",
		7, 11,
		"node_groups[1].name: duplicate node group name 'workers' (first at line 4)");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 1001\n    instance_types: [a]\n", 5, 12,
		"node_groups[0].count: 1001 is out of range 0..1000");
	expect1(HEAD "node_groups:\n  - name: g\n    count: -1\n    instance_types: [a]\n", 5, 12,
		"node_groups[0].count: -1 is out of range 0..1000");
	expect1(HEAD "node_groups:\n  - name: g\n    count: \"4\"\n    instance_types: [a]\n", 5,
		12, "node_groups[0].count: expected an integer, got a string");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 4.0\n    instance_types: [a]\n", 5, 12,
		"node_groups[0].count: expected an integer, got a number");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 0x4\n    instance_types: [a]\n", 5, 12,
		"node_groups[0].count: expected an integer, got a string");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 4e2\n    instance_types: [a]\n", 5, 12,
		"node_groups[0].count: expected an integer, got a number");
	expect1(HEAD "node_groups:\n  - name: g\n    count:\n    instance_types: [a]\n", 5, 11,
		"node_groups[0].count: expected an integer, got null");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 1\n", 4, 5,
		"missing required key 'instance_types' in node_groups[0]");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 1\n    instance_types: []\n", 6, 21,
		"node_groups[0].instance_types: must not be empty");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 1\n    instance_types: a\n", 6, 21,
		"node_groups[0].instance_types: expected a list, got a string");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 1\n"
		     "    instance_types: [a, b, c, d, e, f, g, h, i]\n",
		6, 21, "node_groups[0].instance_types: 9 entries, at most 8 are allowed");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 1\n    instance_types: [a, b, a]\n", 6,
		28, "node_groups[0].instance_types: duplicate entry 'a' (first at line 6)");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 1\n    instance_types: [a, -x]\n", 6,
		25,
		"node_groups[0].instance_types[1]: '-x' is not a valid instance type: use 1-64 "
		"characters of A-Z, a-z, 0-9, '.', '_' and '-', starting with a letter or digit");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 1\n    instance_types: [\"a b\"]\n", 6,
		22,
		"node_groups[0].instance_types[0]: 'a b' is not a valid instance type: use "
		"1-64 "
		"characters of A-Z, a-z, 0-9, '.', '_' and '-', starting with a letter or digit");
	expect1(HEAD "node_groups:\n  - name: g\n    count: 1\n    instance_types: [123]\n", 6, 22,
		"node_groups[0].instance_types[0]: expected a string, got an integer");
	expect1(HEAD_G "    zones: []\n", 7, 12, "node_groups[0].zones: must not be empty");
	expect1(HEAD_G "    zones: [a, b, c, d, e, f, g, h, i]\n", 7, 12,
		"node_groups[0].zones: 9 entries, at most 8 are allowed");
	expect1(HEAD_G "    zones:\n      - us-east-1a\n      - us-east-1b\n      - us-east-1a\n",
		10, 9, "node_groups[0].zones: duplicate entry 'us-east-1a' (first at line 8)");
	expect1(HEAD_G "    zones: [US-EAST-1A]\n", 7, 13,
		"node_groups[0].zones[0]: 'US-EAST-1A' is not a valid zone: use 1-64 characters of "
		"a-z, 0-9 and '-'");
	expect1(HEAD_G "    market: spto\n", 7, 13,
		"node_groups[0].market: unknown value 'spto'; expected one of on-demand, spot, "
		"spot-then-on-demand; did you mean 'spot'?");
	expect1(HEAD_G "    max_spot_price: 3\n", 7, 21,
		"node_groups[0].max_spot_price: only allowed with market spot or "
		"spot-then-on-demand");
	expect1(HEAD_G "    market: on-demand\n    max_spot_price: 3\n", 8, 21,
		"node_groups[0].max_spot_price: only allowed with market spot or "
		"spot-then-on-demand");
	expect1(HEAD_G "    market: spot\n    max_spot_price: 0\n", 8, 21,
		"node_groups[0].max_spot_price: 0 is out of range: must be more than 0 and at "
		"most 1000");
	expect1(HEAD_G "    market: spot\n    max_spot_price: 1000.5\n", 8, 21,
		"node_groups[0].max_spot_price: 1000.5 is out of range: must be more than 0 and "
		"at most 1000");
	expect1(HEAD_G "    market: spot\n    max_spot_price: \"1\"\n", 8, 21,
		"node_groups[0].max_spot_price: expected a number, got a string");
	expect1(HEAD_G "    image: ubuntu-2204\n", 7, 12,
		"node_groups[0].image: unknown image 'ubuntu-2204'; did you mean 'ubuntu-22.04'?");
	expect1(HEAD_G "    image: windows\n", 7, 12,
		"node_groups[0].image: unknown image 'windows'; expected an alias (ubuntu-22.04, "
		"ubuntu-24.04, gpu-ready) or ami-...");
	expect1(HEAD_G "    image: img-12345678\n", 7, 12,
		"node_groups[0].image: 'img-12345678' is not an image id for aws; expected an "
		"alias (ubuntu-22.04, ubuntu-24.04, gpu-ready) or ami-...");
	expect1(HEAD_G "    image: ami-123\n", 7, 12,
		"node_groups[0].image: 'ami-123' is not an image id for aws; expected an "
		"alias (ubuntu-22.04, ubuntu-24.04, gpu-ready) or ami-...");
	expect1(HEAD_G "    image: ami-0123456789ABCDEF0\n", 7, 12,
		"node_groups[0].image: 'ami-0123456789ABCDEF0' is not an image id for aws; "
		"expected an alias (ubuntu-22.04, ubuntu-24.04, gpu-ready) or ami-...");
	expect1("name: t\nprovider: {name: alibaba, region: cn-beijing}\nnode_groups:\n"
		"  - {name: g, count: 1, instance_types: [a], image: ami-01234567}\n",
		4, 53,
		"node_groups[0].image: 'ami-01234567' is not an image id for alibaba; expected an "
		"alias (ubuntu-22.04, ubuntu-24.04, gpu-ready) or m-... or an image name ending in "
		".vhd");
	expect1("name: t\nprovider: {name: tencent, region: ap-beijing}\nnode_groups:\n"
		"  - {name: g, count: 1, instance_types: [a], image: m-abcdefghij}\n",
		4, 53,
		"node_groups[0].image: 'm-abcdefghij' is not an image id for tencent; expected an "
		"alias (ubuntu-22.04, ubuntu-24.04, gpu-ready) or img-...");
	expect1(HEAD_G "    disk_gb: 19\n", 7, 14,
		"node_groups[0].disk_gb: 19 is out of range "
		"20..16384");
	expect1(HEAD_G "    disk_gb: 16385\n", 7, 14,
		"node_groups[0].disk_gb: 16385 is out of "
		"range 20..16384");
	expect1(HEAD_G "    placement: same_zone\n", 7, 16,
		"node_groups[0].placement: unknown value 'same_zone'; expected one of any, "
		"same-zone, cluster; did you mean 'same-zone'?");
}

/* Rules: bootstrap. */

static void test_rules_bootstrap(void **state)
{
	const struct gc_spec *s;
	struct load l;

	(void)state;
	s = expect_ok(&l, HEAD_G "bootstrap: {driver: 570}\n");
	assert_string_equal(s->bootstrap.driver, "570");
	release(&l);
	s = expect_ok(&l, HEAD_G "bootstrap: {driver: \"570.124.06\"}\n");
	assert_string_equal(s->bootstrap.driver, "570.124.06");
	release(&l);
	expect1(HEAD_G "bootstrap: {driver: 57}\n", 7, 21,
		"bootstrap.driver: '57' is not a valid driver: expected preinstalled or a 3-digit "
		"branch, optionally with its full version, like 570 or 570.124.06");
	expect1(HEAD_G "bootstrap: {driver: \"5700\"}\n", 7, 21,
		"bootstrap.driver: '5700' is not a valid driver: expected preinstalled or a "
		"3-digit branch, optionally with its full version, like 570 or 570.124.06");
	expect1(HEAD_G "bootstrap: {driver: \"570.\"}\n", 7, 21,
		"bootstrap.driver: '570.' is not a valid driver: expected preinstalled or a "
		"3-digit branch, optionally with its full version, like 570 or 570.124.06");
	expect1(HEAD_G "bootstrap: {driver: 570.124}\n", 7, 21,
		"bootstrap.driver: expected a string, got a number");
	expect1(HEAD_G "bootstrap: {cuda: 12.8}\n", 7, 19,
		"bootstrap.cuda: expected a string, got a number");
	expect1(HEAD_G "bootstrap: {cuda: \"10.2\"}\n", 7, 19,
		"bootstrap.cuda: '10.2' is not a valid CUDA version: expected none or MAJOR.MINOR "
		"with MAJOR 11 to 13, like 12.8");
	expect1(HEAD_G "bootstrap: {cuda: \"12\"}\n", 7, 19,
		"bootstrap.cuda: '12' is not a valid CUDA version: expected none or MAJOR.MINOR "
		"with MAJOR 11 to 13, like 12.8");
	s = expect_ok(&l, HEAD_G "bootstrap: {cuda: \"12.10\", cudnn: \"9.8\"}\n");
	assert_string_equal(s->bootstrap.cuda, "12.10");
	assert_string_equal(s->bootstrap.cudnn, "9.8");
	release(&l);
	expect1(HEAD_G "bootstrap: {cudnn: \"7\"}\n", 7, 20,
		"bootstrap.cudnn: '7' is not a valid cuDNN version: expected none, or 8 or 9 "
		"optionally with .MINOR, like 9 or 9.8");
	expect1(HEAD_G "bootstrap: {cudnn: 9}\n", 7, 20,
		"bootstrap.cudnn: expected a string, got an integer");
	expect1(HEAD_G "bootstrap: {cuda: none, cudnn: \"9\"}\n", 7, 32,
		"bootstrap.cudnn: must be none when cuda is none");
	expect1(HEAD_G "bootstrap: {container: podman}\n", 7, 24,
		"bootstrap.container: unknown value 'podman'; expected one of docker, none");
	expect1(HEAD_G "bootstrap: {smoke: [drivr]}\n", 7, 21,
		"bootstrap.smoke[0]: unknown value 'drivr'; expected one of driver, cuda, "
		"container, nccl; did you mean 'driver'?");
	expect1(HEAD_G "bootstrap: {smoke: [driver, nccl, driver]}\n", 7, 35,
		"bootstrap.smoke: duplicate entry 'driver' (first at line 7)");
	expect1(HEAD_G "bootstrap: {container: none, smoke: [driver, container]}\n", 7, 46,
		"bootstrap.smoke[1]: 'container' only allowed with container docker");
	expect1(HEAD_G "bootstrap: {cuda: none, smoke: [cuda]}\n", 7, 33,
		"bootstrap.smoke[0]: 'cuda' only allowed when cuda is not none");
	expect1(HEAD_G "bootstrap: docker\n", 7, 12, "bootstrap: expected a mapping, got a string");
	expect1(HEAD_G "bootstrap: {drvier: x}\n", 7, 13,
		"unknown key 'drvier' in bootstrap; did you mean 'driver'?");
}

static void test_rules_steps(void **state)
{
	(void)state;
	expect1(HEAD_G "bootstrap:\n  steps:\n    - run: x\n", 9, 7,
		"missing required key 'name' in bootstrap.steps[0]");
	expect1(HEAD_G "bootstrap:\n  steps:\n    - name: a\n", 9, 7,
		"missing required key 'run' in bootstrap.steps[0]");
	expect1(HEAD_G "bootstrap:\n  steps:\n    - name: Pull\n      run: x\n", 9, 13,
		"bootstrap.steps[0].name: 'Pull' is not a valid name: use 1-32 characters of a-z, "
		"0-9 and '-', starting with a letter");
	expect1(HEAD_G "bootstrap:\n  steps:\n    - name: a\n      run: x\n    - name: a\n"
		       "      run: y\n",
		11, 13, "bootstrap.steps[1].name: duplicate step name 'a' (first at line 9)");
	expect1(HEAD_G "bootstrap:\n  steps:\n    - name: a\n      run: \"\"\n", 10, 12,
		"bootstrap.steps[0].run: must not be empty");
	expect1(HEAD_G "bootstrap:\n  steps:\n    - name: a\n      run: 42\n", 10, 12,
		"bootstrap.steps[0].run: expected a string, got an integer");
	expect1(HEAD_G "bootstrap:\n  steps:\n    - name: a\n      run: x\n      timeout: 0s\n", 11,
		16, "bootstrap.steps[0].timeout: 0s is out of range 1s..24h");
	expect1(HEAD_G "bootstrap:\n  steps:\n    - name: a\n      run: x\n      timeout: 25h\n",
		11, 16, "bootstrap.steps[0].timeout: 25h is out of range 1s..24h");
	expect1(HEAD_G "bootstrap:\n  steps:\n    - name: a\n      run: x\n      timeout: 30\n", 11,
		16, "bootstrap.steps[0].timeout: expected a duration, got an integer");
	expect1(HEAD_G "bootstrap:\n  steps:\n    - name: a\n      run: x\n      timeout: 1h30m\n",
		11, 16,
		"bootstrap.steps[0].timeout: '1h30m' is not a duration; expected an "
		"integer and a unit s, m, h or d, like 30m or 12h");
	expect1(HEAD_G "bootstrap:\n  steps: [x]\n", 8, 11,
		"bootstrap.steps[0]: expected a mapping, got a string");
	{
		struct gc_buf b = GC_BUF_INIT(0);
		struct load l;

		/* run: exactly 64 KiB is fine, one byte more is not */
		gc_buf_addstr(&b, HEAD_G "bootstrap:\n  steps:\n    - name: a\n      run: ");
		for (int i = 0; i < 65536; i++)
			gc_buf_addch(&b, 'x');
		gc_buf_addch(&b, '\n');
		load(&l, b.data);
		assert_int_equal(l.r, 0);
		assert_int_equal(strlen(l.spec->bootstrap.steps[0].run), 65536);
		release(&l);
		gc_buf_truncate(&b, b.len - 1);
		gc_buf_addstr(&b, "x\n");
		expect1(b.data, 10, 12,
			"bootstrap.steps[0].run: 65537 bytes, at most 65536 are "
			"allowed");
		gc_buf_reset(&b);
		gc_buf_addstr(&b, HEAD_G "bootstrap:\n  steps:\n");
		for (int i = 0; i < 33; i++)
			gc_buf_addf(&b, "    - {name: s%d, run: x}\n", i);
		expect1(b.data, 9, 5, "bootstrap.steps: 33 entries, at most 32 are allowed");
		gc_buf_release(&b);
	}
}

/* Rules: lifecycle and tags. */

static void test_rules_lifecycle(void **state)
{
	const struct gc_spec *s;
	struct load l;

	(void)state;
	expect1(HEAD_G "lifecycle: {ttl: 9m}\n", 7, 18,
		"lifecycle.ttl: 9m is out of range 10m..30d");
	expect1(HEAD_G "lifecycle: {ttl: 31d}\n", 7, 18,
		"lifecycle.ttl: 31d is out of range 10m..30d");
	expect1(HEAD_G "lifecycle: {ttl: 12 hours}\n", 7, 18,
		"lifecycle.ttl: '12 hours' is not a duration; expected an integer and a unit s, m, "
		"h or d, like 30m or 12h");
	expect1(HEAD_G "lifecycle: {ttl: 1.5h}\n", 7, 18,
		"lifecycle.ttl: '1.5h' is not a duration; expected an integer and a unit s, m, "
		"h or d, like 30m or 12h");
	expect1(HEAD_G "lifecycle: {ttl: true}\n", 7, 18,
		"lifecycle.ttl: expected a duration, got a boolean");
	expect1(HEAD_G "lifecycle: {max_hourly_cost: 0}\n", 7, 30,
		"lifecycle.max_hourly_cost: 0 is out of range: must be more than 0 and at most "
		"1000000");
	expect1(HEAD_G "lifecycle: {max_hourly_cost: -5}\n", 7, 30,
		"lifecycle.max_hourly_cost: -5 is out of range: must be more than 0 and at most "
		"1000000");
	expect1(HEAD_G "lifecycle: {max_hourly_cost: 1000001}\n", 7, 30,
		"lifecycle.max_hourly_cost: 1000001 is out of range: must be more than 0 and at "
		"most 1000000");
	expect1(HEAD_G "lifecycle: {max_hourly_cost: 1e999}\n", 7, 30,
		"lifecycle.max_hourly_cost: 1e999 is out of range: must be more than 0 and at "
		"most 1000000");
	expect1(HEAD_G "lifecycle: {max_hourly_cost: cheap}\n", 7, 30,
		"lifecycle.max_hourly_cost: expected a number, got a string");
	s = expect_ok(&l, HEAD_G "lifecycle: {ttl: 30d, max_hourly_cost: 2.5e2}\n");
	assert_int_equal(s->lifecycle.ttl_s, 30 * 86400);
	assert_true(s->lifecycle.max_hourly_cost == 250);
	release(&l);
}

static void test_rules_tags(void **state)
{
	static const char *const reserved[] = { "gpucluster:x", "aws:x",       "AWS:x",	   "acs:x",
						"aliyunx",	"Aliyun",      "qcloud-x", "QCLOUD",
						"tencent",	"TencentCloud" };
	char key128[129], val129[130], buf[512], msg[512];

	(void)state;
	memset(key128, 'k', 128);
	key128[128] = '\0';
	memset(val129, 'v', 129);
	val129[129] = '\0';
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		snprintf(buf, sizeof(buf), HEAD_G "tags:\n  %s: v\n", reserved[i]);
		snprintf(msg, sizeof(msg),
			 "tags: '%s' is a reserved tag key: keys may not start "
			 "with gpucluster:, aws:, acs:, aliyun, qcloud or tencent",
			 reserved[i]);
		expect1(buf, 8, 3, msg);
	}
	snprintf(buf, sizeof(buf), HEAD_G "tags:\n  %s: v\n", key128);
	snprintf(msg, sizeof(msg),
		 "tags: '%.80s...' is not a valid tag key: use 1-127 characters "
		 "of A-Z, a-z, 0-9, space and _ . : / = + - @",
		 key128);
	expect1(buf, 8, 3, msg);
	expect1(HEAD_G "tags:\n  \"bad#\": v\n", 8, 3,
		"tags: 'bad#' is not a valid tag key: use "
		"1-127 characters of A-Z, a-z, 0-9, space and _ . : / = + - @");
	expect1(HEAD_G "tags:\n  \"\": v\n", 8, 3,
		"tags: '' is not a valid tag key: use "
		"1-127 characters of A-Z, a-z, 0-9, space and _ . : / = + - @");
	snprintf(buf, sizeof(buf), HEAD_G "tags:\n  team: %s\n", val129);
	snprintf(msg, sizeof(msg),
		 "tags.team: '%.80s...' is not a valid tag value: use up to 128 "
		 "characters of A-Z, a-z, 0-9, space and _ . : / = + - @",
		 val129);
	expect1(buf, 8, 9, msg);
	expect1(HEAD_G "tags:\n  team: \"a;b\"\n", 8, 9,
		"tags.team: 'a;b' is not a valid tag "
		"value: use up to 128 characters of A-Z, a-z, 0-9, space and _ . : / = + - @");
	expect1(HEAD_G "tags:\n  team: [a]\n", 8, 9, "tags.team: expected a string, got a list");
	expect1(HEAD_G "tags:\n  team: a\n  team: b\n", 9, 3,
		"duplicate key 'team' in tags (first at line 8)");
	expect1(HEAD_G "tags: [a]\n", 7, 7, "tags: expected a mapping, got a list");
	{
		struct gc_buf b = GC_BUF_INIT(0);
		struct load l;

		gc_buf_addstr(&b, HEAD_G "tags:\n");
		for (int i = 0; i < 12; i++)
			gc_buf_addf(&b, "  k%d: v\n", i);
		load(&l, b.data);
		assert_int_equal(l.r, 0);
		assert_int_equal(l.spec->n_tags, 12);
		assert_string_equal(l.spec->tags[11].key, "k11");
		release(&l);
		gc_buf_addstr(&b, "  k12: v\n");
		expect1(b.data, 8, 3, "tags: 13 tags, at most 12 are allowed");
		gc_buf_release(&b);
	}
	/* a key at the limit: 127 characters */
	key128[127] = '\0';
	snprintf(buf, sizeof(buf), HEAD_G "tags:\n  %s: \"\"\n", key128);
	{
		struct load l;

		load(&l, buf);
		assert_int_equal(l.r, 0);
		assert_string_equal(l.spec->tags[0].value, "");
		release(&l);
	}
}

/* Duplicate keys, everywhere. */

static void test_duplicate_keys(void **state)
{
	struct load l;

	(void)state;
	expect1(HEAD_G "name: u\n", 7, 1, "duplicate key 'name' (first at line 1)");
	expect1("name: t\nprovider: {name: aws, region: us-east-1, name: aws}\n"
		"node_groups: [{name: g, count: 1, instance_types: [a]}]\n",
		2, 42, "duplicate key 'name' in provider (first at line 2)");
	expect1(HEAD_G "    count: 2\n", 7, 5,
		"duplicate key 'count' in node_groups[0] (first at line 5)");
	/* quoted and plain spellings are the same key */
	expect1(HEAD_G "\"name\": u\n", 7, 1, "duplicate key 'name' (first at line 1)");
	/* three times: each repeat is reported against the first */
	load(&l, HEAD_G "    count: 2\n    count: 3\n");
	assert_int_equal(l.diags.nr, 2);
	assert_string_equal(l.diags.items[0].message,
			    "duplicate key 'count' in node_groups[0] (first at line 5)");
	assert_int_equal(l.diags.items[1].line, 8);
	assert_string_equal(l.diags.items[1].message,
			    "duplicate key 'count' in node_groups[0] (first at line 5)");
	assert_string_equal(l.diags.items[1].path, "node_groups[0]");
	release(&l);
}

/* Several problems at once, sorted by position. */

static void test_many_errors_in_order(void **state)
{
	struct load l;
	static const struct {
		unsigned line, col;
		const char *path, *msg;
	} want[] = {
		{ 1, 1, "", "missing required key 'name'" },
		{ 2, 13, "node_groups[0].count",
		  "node_groups[0].count: 1001 is out of range 0..1000" },
		{ 2, 49, "node_groups[0]",
		  "unknown key 'cuont' in node_groups[0]; did you mean "
		  "'count'?" },
		{ 3, 13, "ssh.port", "ssh.port: 0 is out of range 1..65535" },
		{ 4, 1, "", "unknown key 'nmae'; did you mean 'name'?" },
		{ 6, 9, "provider.name",
		  "provider.name: unknown value 'awz'; expected one of aws, "
		  "alibaba, tencent; did you mean 'aws'?" },
	};

	(void)state;
	/* provider is checked before the groups but comes later in the file */
	load(&l,
	     "node_groups:\n  - {count: 1001, name: g, instance_types: [a], cuont: 1}\n"
	     "ssh: {port: 0}\nnmae: t\nprovider:\n  name: awz\n  region: us-east-1\n");
	assert_int_equal(l.r, -1);
	assert_int_equal(l.diags.nr, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(l.diags.items[i].message, want[i].msg);
		assert_string_equal(l.diags.items[i].path, want[i].path);
		assert_int_equal(l.diags.items[i].line, want[i].line);
		assert_int_equal(l.diags.items[i].col, want[i].col);
	}
	/* the error summary names the first problem and counts the rest */
	assert_string_equal(l.err.message, "t.yaml:1:1: missing required key 'name' (and 5 more)");
	release(&l);
}

static void test_too_many_problems(void **state)
{
	struct gc_buf b = GC_BUF_INIT(0);
	struct load l;

	(void)state;
	gc_buf_addstr(&b, HEAD_G);
	for (int i = 0; i < 150; i++)
		gc_buf_addf(&b, "unknown%d: x\n", i);
	load(&l, b.data);
	assert_int_equal(l.r, -1);
	assert_int_equal(l.diags.nr, GC_SPEC_MAX_DIAGS + 1);
	assert_int_equal(l.diags.items[0].line, 0);
	assert_string_equal(l.diags.items[0].message,
			    "too many problems: showing the first 100 "
			    "of 150");
	assert_string_equal(l.diags.items[1].message, "unknown key 'unknown0'");
	assert_string_equal(l.diags.items[100].message, "unknown key 'unknown99'");
	release(&l);
	gc_buf_release(&b);
}

/* Environment variables. */

static void test_env_expansion(void **state)
{
	static struct kv vars[] = {
		{ "RUN_ID", "1234" }, { "N", "4" },    { "EMPTY", "" }, { "REF", "${RUN_ID}" },
		{ "T", "true" },      { "SP", "a b" }, { NULL, NULL },
	};
	const struct gc_spec_env env = { kv_lookup, vars };
	const struct gc_spec *s;
	struct load l;
	const char *text =
		"name: train-${RUN_ID:-local}\n"
		"provider:\n  name: \"${CLOUD:-aws}\"\n  region: us-east-${N}\n"
		"node_groups:\n"
		"  - name: w${EMPTY}\n"
		"    count: ${N}\n"
		"    instance_types:\n      - \"${TYPE:-p4d.24xlarge}\"\n      - x${EMPTY:-y}z\n"
		"bootstrap:\n"
		"  steps:\n"
		"    - name: s\n"
		"      run: x\n"
		"tags:\n"
		"  ${N}: key\n";

	(void)state;
	load_env(&l, text, strlen(text), &env);
	/* keys are not expanded: "${N}" is not a valid tag key */
	assert_int_equal(l.diags.nr, 1);
	assert_string_equal(l.diags.items[0].message,
			    "tags: '${N}' is not a valid tag key: use "
			    "1-127 characters of A-Z, a-z, 0-9, space and _ . : / = + - @");
	release(&l);

	text = "name: train-${RUN_ID:-local}\n"
	       "provider:\n  name: \"${CLOUD:-aws}\"\n  region: us-east-${N}\n"
	       "node_groups:\n"
	       "  - name: w${EMPTY}\n"
	       "    count: ${N}\n"
	       "    instance_types:\n      - \"${TYPE:-p4d.24xlarge}\"\n      - x${EMPTY:-y}z\n"
	       "bootstrap:\n"
	       "  steps:\n"
	       "    - name: s\n"
	       "      run: echo $$HOME $HOME ${REF} ${REF:-x} $$${N} $${N} $ $1 $$$$ ${N}$\n"
	       "tags:\n"
	       "  n: ${N}\n"
	       "  t: ${T}\n"
	       "  e: ${EMPTY:-}\n";
	load_env(&l, text, strlen(text), &env);
	if (l.r != 0)
		dump_diags(&l);
	assert_int_equal(l.r, 0);
	s = l.spec;
	assert_string_equal(s->name, "train-1234");
	assert_ptr_equal(s->provider.ops, gc_provider_by_name("aws"));
	assert_string_equal(s->provider.name, "aws");
	assert_string_equal(s->provider.region, "us-east-4");
	assert_string_equal(s->groups[0].name, "w");
	/* a plain ${N} keeps plain typing: an integer */
	assert_int_equal(s->groups[0].count, 4);
	assert_string_equal(s->groups[0].instance_types[0], "p4d.24xlarge");
	assert_string_equal(s->groups[0].instance_types[1], "xyz");
	/* $$ is $, a $ that starts no reference stays, a value is never expanded again */
	assert_string_equal(s->bootstrap.steps[0].run,
			    "echo $HOME $HOME ${RUN_ID} ${RUN_ID} $4 ${N} $ $1 $$ 4$");
	assert_string_equal(s->tags[0].value, "4");
	assert_string_equal(s->tags[1].value, "true");
	assert_string_equal(s->tags[2].value, "");
	release(&l);

	/* plain typing after expansion: a quoted reference is a string */
	expect1_env(HEAD "node_groups:\n  - name: g\n    count: \"${N}\"\n"
			 "    instance_types: [a]\n",
		    &env, 5, 12, "node_groups[0].count: expected an integer, got a string");
	/* an empty plain value is null */
	expect1_env("name: ${EMPTY}\nprovider: {name: aws, region: us-east-1}\n"
		    "node_groups: [{name: g, count: 1, instance_types: [a]}]\n",
		    &env, 1, 7, "name: expected a string, got null");
	expect1_env("name: ${T}\nprovider: {name: aws, region: us-east-1}\n"
		    "node_groups: [{name: g, count: 1, instance_types: [a]}]\n",
		    &env, 1, 7, "name: expected a string, got a boolean");
	/* an empty value is used as it is; only :- falls back on it */
	expect1_env("name: x${EMPTY}-\nprovider: {name: aws, region: us-east-1}\n"
		    "node_groups: [{name: g, count: 1, instance_types: [a]}]\n",
		    &env, 1, 7,
		    "name: 'x-' is not a valid name: use 1-32 characters of a-z, 0-9 and '-', "
		    "starting with a letter and not ending with '-'");
}

static void test_env_errors(void **state)
{
	static struct kv vars[] = { { "BAD", "\xff" }, { NULL, NULL } };
	const struct gc_spec_env env = { kv_lookup, vars };
	static const struct {
		const char *value, *msg;
	} cases[] = {
		{ "${RUN_ID}", "name: environment variable 'RUN_ID' is not set" },
		{ "a-${1X}", "name: bad variable reference '${1X}'" },
		{ "a-${}", "name: bad variable reference '${}'" },
		{ "a-${X", "name: bad variable reference '${X'" },
		{ "a-${X:-y", "name: bad variable reference '${X:-y'" },
		{ "a-${X-y}", "name: bad variable reference '${X-y}'" },
		{ "a-${X:=y}", "name: bad variable reference '${X:=y}'" },
		{ "a-${X Y}", "name: bad variable reference '${X Y}'" },
		{ "a-${BAD}", "name: environment variable 'BAD' is not valid UTF-8" },
	};
	char buf[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(buf, sizeof(buf),
			 "name: \"%s\"\n"
			 "provider: {name: aws, region: us-east-1}\n"
			 "node_groups: [{name: g, count: 1, instance_types: [a]}]\n",
			 cases[i].value);
		expect1_env(buf, &env, 1, 7, cases[i].msg);
	}
	/* with no environment at all, nothing is set */
	expect1("name: \"${HOME}\"\nprovider: {name: aws, region: us-east-1}\n"
		"node_groups: [{name: g, count: 1, instance_types: [a]}]\n",
		1, 7, "name: environment variable 'HOME' is not set");
	/* an unused key's value is not looked at; its key is still reported */
	expect1(HEAD_G "extra: ${NOPE}\n", 7, 1, "unknown key 'extra'");
}

static void test_env_process(void **state)
{
	struct load l;
	const char *text = "name: p-${GC_TEST_SPEC_NAME}\n"
			   "provider: {name: aws, region: us-east-1}\n"
			   "node_groups: [{name: g, count: 1, instance_types: [a]}]\n";

	(void)state;
	assert_int_equal(setenv("GC_TEST_SPEC_NAME", "x1", 1), 0);
	load_env(&l, text, strlen(text), &gc_spec_env_process);
	assert_int_equal(l.r, 0);
	assert_string_equal(l.spec->name, "p-x1");
	release(&l);
	assert_int_equal(unsetenv("GC_TEST_SPEC_NAME"), 0);
	load_env(&l, text, strlen(text), &gc_spec_env_process);
	assert_int_equal(l.r, -1);
	assert_string_equal(l.diags.items[0].message,
			    "name: environment variable 'GC_TEST_SPEC_NAME' is not set");
	release(&l);
}

static void test_env_budget(void **state)
{
	static char big[600001];
	static struct kv vars[] = { { "BIG", big }, { NULL, NULL } };
	const struct gc_spec_env env = { kv_lookup, vars };
	struct load l;
	const char *text = HEAD_G "tags: {a: \"${BIG}\", b: \"${BIG}\"}\n";

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	/* 1.2 MB of variable values: past the 1 MiB that expansion may add */
	load_env(&l, text, strlen(text), &env);
	assert_int_equal(l.diags.nr, 1);
	assert_int_equal(l.diags.items[0].line, 7);
	assert_int_equal(l.diags.items[0].col, 24);
	assert_string_equal(l.diags.items[0].message,
			    "environment variables expand to more than 1048576 bytes");
	release(&l);
}

/* The file limits. */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void test_depth(void **state)
{
	struct gc_buf b = GC_BUF_INIT(0);
	struct load l;

	(void)state;
	/* the top-level mapping is level 1: 31 lists inside it make 32 levels */
	gc_buf_addstr(&b, HEAD_G "tags: ");
	for (int i = 0; i < 31; i++)
		gc_buf_addch(&b, '[');
	for (int i = 0; i < 31; i++)
		gc_buf_addch(&b, ']');
	gc_buf_addch(&b, '\n');
	expect1(b.data, 7, 7, "tags: expected a mapping, got a list");
	gc_buf_reset(&b);
	gc_buf_addstr(&b, HEAD_G "tags: ");
	for (int i = 0; i < 100000; i++)
		gc_buf_addch(&b, '[');
	expect1(b.data, 7, 38, "nesting deeper than 32 levels");
	gc_buf_reset(&b);
	/* block mappings nest the same way */
	gc_buf_addstr(&b, "a:\n");
	for (int i = 1; i < 40; i++) {
		for (int k = 0; k < i; k++)
			gc_buf_addch(&b, ' ');
		gc_buf_addstr(&b, "a:\n");
	}
	load(&l, b.data);
	assert_int_equal(l.diags.nr, 1);
	assert_int_equal(l.diags.items[0].line, 33);
	assert_string_equal(l.diags.items[0].message, "nesting deeper than 32 levels");
	release(&l);
	gc_buf_release(&b);
}

static void test_billion_laughs(void **state)
{
	struct gc_buf b = GC_BUF_INIT(0);
	double t0;
	long rss0;
	struct load l;

	(void)state;
	/* 10^9 nodes if expanded; each level is 9 alias references, 9 levels deep */
	gc_buf_addstr(&b, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int i = 1; i < 8; i++) {
		gc_buf_addf(&b, "a%d: &a%d [", i, i);
		for (int k = 0; k < 9; k++)
			gc_buf_addf(&b, "%s*a%d", k ? ", " : "", i - 1);
		gc_buf_addstr(&b, "]\n");
	}
	rss0 = max_rss_kb();
	t0 = now_s();
	load(&l, b.data);
	assert_true(now_s() - t0 < 1.0);
	assert_true(max_rss_kb() - rss0 < 64 * 1024);
	assert_int_equal(l.diags.nr, 1);
	assert_string_equal(l.diags.items[0].message, "document expands to more than 20000 nodes");
	/* a0 is 11 nodes, a1 is 1 + 9 * 11 = 100, a2 901, a3 8110: with the mapping and its
	 * keys, 9129 nodes come before a4's aliases, and its 2nd alias passes the cap */
	assert_int_equal(l.diags.items[0].line, 5);
	assert_int_equal(l.diags.items[0].col, 15);
	release(&l);

	/* many cheap references: the alias count is its own limit */
	gc_buf_reset(&b);
	gc_buf_addstr(&b, "a: &a x\nb: [");
	for (int k = 0; k < 65; k++)
		gc_buf_addstr(&b, k ? ", *a" : "*a");
	gc_buf_addstr(&b, "]\n");
	load(&l, b.data);
	assert_int_equal(l.diags.nr, 1);
	assert_string_equal(l.diags.items[0].message, "more than 64 alias references");
	assert_int_equal(l.diags.items[0].col, 5 + 64 * 4);
	release(&l);

	/* a wide bomb aimed at the validator: 64 references to a group are within the
	 * limits, and only the first 32 groups are looked at */
	gc_buf_reset(&b);
	gc_buf_addstr(&b,
		      HEAD "x: &g {name: g, count: 1, instance_types: [a, b, c, d, e, f]}\n"
			   "node_groups: [");
	for (int k = 0; k < 64; k++)
		gc_buf_addstr(&b, k ? ", *g" : "*g");
	gc_buf_addstr(&b, "]\n");
	t0 = now_s();
	load(&l, b.data);
	assert_true(now_s() - t0 < 1.0);
	assert_string_equal(l.diags.items[0].message, "unknown key 'x'");
	/* every other group repeats the name of the first; an alias is where its anchor is */
	assert_int_equal(l.diags.nr, 2 + 31);
	assert_string_equal(l.diags.items[1].message,
			    "node_groups[1].name: duplicate node group name 'g' (first at line 3)");
	assert_string_equal(l.diags.items[32].message,
			    "node_groups: 64 entries, at most 32 are allowed");
	release(&l);
	gc_buf_release(&b);
}

static void test_aliases(void **state)
{
	const struct gc_spec *s;
	struct load l;

	(void)state;
	/* anchors share settings between groups */
	s = expect_ok(&l,
		      HEAD "node_groups:\n"
			   "  - name: a\n    count: 1\n"
			   "    instance_types: &types [g5.xlarge, g5.2xlarge]\n"
			   "  - name: b\n    count: &n 2\n    instance_types: *types\n"
			   "  - {name: c, count: *n, instance_types: *types}\n");
	assert_int_equal(s->n_groups, 3);
	assert_int_equal(s->groups[2].count, 2);
	assert_string_equal(s->groups[2].instance_types[1], "g5.2xlarge");
	release(&l);
	expect1(HEAD_G "tags: *nope\n", 7, 7, "yaml: undefined alias '*nope'");
	expect1(HEAD_G "tags: &t {a: *t}\n", 7, 14, "yaml: recursive alias '*t'");
	/* merge keys are not supported */
	load(&l,
	     HEAD
	     "x: &base {count: 1, instance_types: [a]}\n"
	     "node_groups:\n  - <<: *base\n    name: g\n    count: 1\n    instance_types: [a]\n");
	assert_int_equal(l.diags.nr, 2);
	assert_string_equal(l.diags.items[0].message, "unknown key 'x'");
	assert_int_equal(l.diags.items[1].line, 5);
	assert_int_equal(l.diags.items[1].col, 5);
	assert_string_equal(l.diags.items[1].message, "unknown key '<<' in node_groups[0]");
	release(&l);
}

static void test_file_size(void **state)
{
	char dir[] = "/tmp/gc-test-spec-XXXXXX", *path;
	struct gc_buf b = GC_BUF_INIT(4 << 20);
	struct gc_spec *spec = NULL;
	struct gc_diags diags;
	struct gc_error err;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = gc_xasprintf("%s/big.yaml", dir);

	/* exactly 1 MiB is allowed */
	gc_buf_addstr(&b, HEAD_G "#");
	while (b.len < GC_SPEC_MAX_FILE_BYTES - 1)
		gc_buf_addch(&b, 'x');
	gc_buf_addch(&b, '\n');
	assert_int_equal(b.len, GC_SPEC_MAX_FILE_BYTES);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
	fclose(f);
	gc_diags_init(&diags, path);
	assert_int_equal(gc_spec_load_file(&spec, path, NULL, &diags, &err), 0);
	assert_string_equal(spec->file, path);
	gc_spec_free(spec);
	spec = NULL;
	gc_diags_release(&diags);

	/* 2 MiB is not: refused from its size, in a file and in a buffer */
	while (b.len < 2 * GC_SPEC_MAX_FILE_BYTES)
		gc_buf_addch(&b, 'x');
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
	fclose(f);
	gc_diags_init(&diags, path);
	assert_int_equal(gc_spec_load_file(&spec, path, NULL, &diags, &err), -1);
	assert_null(spec);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(diags.nr, 1);
	assert_int_equal(diags.items[0].line, 0);
	assert_string_equal(diags.items[0].message,
			    "file is 2097152 bytes, larger than the 1048576-byte limit");
	gc_diags_release(&diags);
	gc_diags_init(&diags, "b");
	assert_int_equal(gc_spec_load_buffer(&spec, "b", b.data, b.len, NULL, &diags, &err), -1);
	assert_string_equal(diags.items[0].message,
			    "file is 2097152 bytes, larger than the 1048576-byte limit");
	assert_string_equal(err.message,
			    "b: file is 2097152 bytes, larger than the 1048576-byte limit");
	gc_diags_release(&diags);

	/* a file whose size is not known up front: read up to the cap, then refused */
	gc_diags_init(&diags, "/dev/zero");
	assert_int_equal(gc_spec_load_file(&spec, "/dev/zero", NULL, &diags, &err), -1);
	assert_int_equal(diags.nr, 1);
	assert_string_equal(diags.items[0].message, "file is larger than the 1048576-byte limit");
	gc_diags_release(&diags);

	/* unreadable: an error, not a diagnostic; diags may be NULL */
	assert_int_equal(gc_spec_load_file(&spec, dir, NULL, NULL, &err), -1);
	assert_int_equal(err.code, GC_EIO);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(gc_spec_load_file(&spec, path, NULL, NULL, &err), -1);
	assert_int_equal(err.code, GC_EIO);
	assert_non_null(strstr(err.message, "big.yaml"));
	assert_null(spec);
	assert_int_equal(rmdir(dir), 0);
	free(path);
	gc_buf_release(&b);
}

static void test_bytes(void **state)
{
	static const struct {
		const char *text;
		size_t len;
		unsigned line, col;
		const char *msg;
	} cases[] = {
		{ "name: \"caf\xc3\xa9\xff\"\n", 13, 1, 12, "invalid UTF-8" },
		{ "a: 1\nb: \x80\n", 10, 2, 4, "invalid UTF-8" },
		{ "a: 1\r\nb: \xc0\xaf\n", 11, 2, 4, "invalid UTF-8" }, /* overlong */
		{ "a: \xed\xa0\x80\n", 7, 1, 4, "invalid UTF-8" },	/* surrogate */
		{ "a: \xe2\x82\xac\xe2\x82\xac \xe2\x82", 13, 1, 7,
		  "invalid UTF-8" },				       /* truncated */
		{ "a: \xf4\x90\x80\x80\n", 8, 1, 4, "invalid UTF-8" }, /* above U+10FFFF */
		{ "name: a\n  x\0y\n", 14, 2, 4, "NUL byte not allowed" },
		{ "\0", 1, 1, 1, "NUL byte not allowed" },
		{ "a: \"x\\0y\"\n", 10, 1, 4, "NUL byte not allowed" }, /* an escape */
		{ "a: \"x\\u0000\"\n", 13, 1, 4, "NUL byte not allowed" },
		{ "a: b\x01\n", 6, 1, 5, "yaml: control characters are not allowed" },
	};
	struct load l;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		load_env(&l, cases[i].text, cases[i].len, NULL);
		if (l.diags.nr != 1 || l.diags.items[0].line != cases[i].line ||
		    l.diags.items[0].col != cases[i].col ||
		    strcmp(l.diags.items[0].message, cases[i].msg) != 0) {
			print_message("case %zu: wanted %u:%u: %s\n", i, cases[i].line,
				      cases[i].col, cases[i].msg);
			dump_diags(&l);
			release(&l);
			fail();
		}
		release(&l);
	}
	/* a UTF-8 byte order mark and CRLF line ends are fine */
	load(&l,
	     "\xef\xbb\xbfname: bom\r\nprovider: {name: aws, region: us-east-1}\r\n"
	     "node_groups: [{name: g, count: 1, instance_types: [a]}]\r\n");
	assert_int_equal(l.r, 0);
	assert_string_equal(l.spec->name, "bom");
	release(&l);
	/* non-ASCII text is fine where the rules allow it, and shown escaped where not */
	expect1(HEAD_G "bootstrap: {steps: [{name: a, run: \"echo caf\xc3\xa9\"}]}\n"
		       "ssh: {user: \"\\x1b[31m\"}\n",
		8, 13,
		"ssh.user: '\\x1b[31m' is not a valid user: use 1-32 characters of a-z, 0-9, '_' "
		"and '-', starting with a letter or '_'");
}

static void test_documents(void **state)
{
	(void)state;
	expect1(HEAD_G "---\nname: b\n", 7, 1, "expected exactly one YAML document");
	expect1(HEAD_G "...\n---\n", 8, 1, "expected exactly one YAML document");
	expect1("", 0, 0, "expected exactly one YAML document");
	expect1("# only a comment\n", 0, 0, "expected exactly one YAML document");
	{
		/* explicit markers around one document are fine */
		struct load l;

		load(&l, "---\n" HEAD_G "...\n");
		assert_int_equal(l.r, 0);
		release(&l);
	}
}

static void test_typing(void **state)
{
	static const struct {
		const char *value, *got;
	} not_int[] = {
		{ "TRUE", "a boolean" },     { ".inf", "a string" },  { "1_000", "a string" },
		{ "!!str 100", "a string" }, { "! 100", "a string" },
	};
	const struct gc_spec *s;
	struct load l;

	(void)state;
	/* YAML 1.1 booleans are strings here */
	s = expect_ok(&l,
		      "name: no\nprovider: {name: aws, region: us-east-1}\n"
		      "node_groups: [{name: \"y\", count: +1, instance_types: [on, off, yes]}]\n"
		      "tags: {a: 1.50, b: FALSE, c: ~, d: 007}\n");
	assert_string_equal(s->name, "no");
	assert_string_equal(s->groups[0].name, "y");
	assert_int_equal(s->groups[0].count, 1);
	assert_string_equal(s->groups[0].instance_types[0], "on");
	assert_string_equal(s->tags[0].value, "1.50");
	assert_string_equal(s->tags[1].value, "FALSE");
	assert_string_equal(s->tags[2].value, "");
	assert_string_equal(s->tags[3].value, "007");
	release(&l);
	/* not integers; explicit tags: !!str and ! make strings, others are refused */
	for (size_t i = 0; i < sizeof(not_int) / sizeof(not_int[0]); i++) {
		char in[256], msg[128];

		snprintf(in, sizeof(in), HEAD_G "    disk_gb: %s\n", not_int[i].value);
		snprintf(msg, sizeof(msg), "node_groups[0].disk_gb: expected an integer, got %s",
			 not_int[i].got);
		expect1(in, 7, 14, msg);
	}
	s = expect_ok(&l,
		      "name: !!str t\nprovider: !!map {name: aws, region: us-east-1}\n"
		      "node_groups: !!seq [{name: g, count: 1, instance_types: [a]}]\n"
		      "bootstrap: {cudnn: !!str 9}\n");
	assert_string_equal(s->bootstrap.cudnn, "9");
	release(&l);
	expect1(HEAD_G "    disk_gb: !!int \"100\"\n", 7, 14, "unsupported tag '!!int'");
	expect1(HEAD_G "    disk_gb: !custom 100\n", 7, 14, "unsupported tag '!custom'");
	expect1(HEAD_G "tags: !!seq {a: b}\n", 7, 7, "unsupported tag '!!seq'");
}

static void test_yaml_syntax(void **state)
{
	(void)state;
	expect1("name: a\nprovider:\n  name: [aws\n  region: x\n", 4, 9,
		"yaml: did not find expected ',' or ']'");
	expect1("name: a\n  bad: indent\n", 2, 6,
		"yaml: mapping values are not allowed in this "
		"context");
	expect1("name: \"unterminated\n", 2, 1, "yaml: found unexpected end of stream");
	expect1("a: b\n\tc: d\n", 2, 1, "yaml: found a tab character that violates indentation");
	expect1("a: b\nc: @d\n", 2, 4, "yaml: found character that cannot start any token");
	expect1("a: &x\n  - *\n", 2, 6,
		"yaml: did not find expected alphabetic or numeric "
		"character");
}

/* Helpers. */

static void test_durations(void **state)
{
	static const struct {
		const char *s;
		uint64_t secs;
	} good[] = {
		{ "90s", 90 },
		{ "30m", 1800 },
		{ "12h", 43200 },
		{ "7d", 604800 },
		{ "0s", 0 },
		{ "007m", 420 },
		{ "213503982334601d", 213503982334601ull * 86400 },
	};
	static const char *const bad[] = {
		"",
		"s",
		"12",
		"12 h",
		" 12h",
		"12h ",
		"1h30m",
		"1.5h",
		"-1h",
		"+1h",
		"12H",
		"12w",
		"213503982334602d",
		"99999999999999999999s",
		"0x1s",
	};
	static const struct {
		uint64_t secs;
		const char *s;
	} formatted[] = {
		{ 0, "0s" },	       { 90, "90s" },	 { 5400, "90m" },   { 7200, "2h" },
		{ 86400 * 30, "30d" }, { 90000, "25h" }, { 3601, "3601s" },
	};
	char buf[32];
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(gc_parse_duration(good[i].s, &v), 0);
		assert_int_equal(v, good[i].secs);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 777;
		if (gc_parse_duration(bad[i], &v) != -1)
			fail_msg("'%s' was accepted", bad[i]);
		assert_int_equal(v, 777);
	}
	assert_int_equal(gc_parse_duration(NULL, &v), -1);
	for (size_t i = 0; i < sizeof(formatted) / sizeof(formatted[0]); i++) {
		gc_format_duration(formatted[i].secs, buf, sizeof(buf));
		assert_string_equal(buf, formatted[i].s);
	}
	/* it round-trips */
	assert_int_equal(gc_parse_duration("25h", &v), 0);
	assert_int_equal(v, 90000);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(gc_market_name(GC_MARKET_ON_DEMAND), "on-demand");
	assert_string_equal(gc_market_name(GC_MARKET_SPOT), "spot");
	assert_string_equal(gc_market_name(GC_MARKET_SPOT_THEN_ON_DEMAND), "spot-then-on-demand");
	assert_string_equal(gc_placement_name(GC_PLACEMENT_ANY), "any");
	assert_string_equal(gc_placement_name(GC_PLACEMENT_SAME_ZONE), "same-zone");
	assert_string_equal(gc_placement_name(GC_PLACEMENT_CLUSTER), "cluster");
	assert_string_equal(gc_interconnect_name(GC_INTERCONNECT_AUTO), "auto");
	assert_string_equal(gc_interconnect_name(GC_INTERCONNECT_RDMA), "rdma");
	assert_string_equal(gc_interconnect_name(GC_INTERCONNECT_STANDARD), "standard");
	assert_int_equal(gc_spec_node_count(NULL), 0);
	gc_spec_free(NULL);
}

/* interconnect, interfaces and placement cluster load; auto resolves by count and type
 * (core/fabric.h) */
static bool bucket_ok(const char *cloud, const char *s)
{
	return gc_provider_by_name(cloud)->facts->bucket(s, strlen(s));
}

static bool role_ok(const char *cloud, const char *s)
{
	return gc_provider_by_name(cloud)->facts->instance_role(s, strlen(s));
}

/* mounts and node_groups[].role: each cloud's bucket and role name rules
 * (docs/internals/mounts.md), and what the spec keeps */
static void test_mounts(void **state)
{
	struct load l;

	(void)state;
	assert_true(bucket_ok("aws", "my.data-set1"));
	assert_false(bucket_ok("aws", "ab"));
	assert_false(bucket_ok("aws", "My-bucket"));
	assert_false(bucket_ok("aws", "a..b"));
	assert_false(bucket_ok("aws", "-ab"));
	assert_false(bucket_ok("aws", "192.168.5.4"));
	assert_true(bucket_ok("aws", "192.168.5.4a"));
	assert_false(bucket_ok("aws", "xn--abc"));
	assert_false(bucket_ok("aws", "data-s3alias"));
	assert_true(bucket_ok("alibaba", "test-bucket-2021"));
	assert_false(bucket_ok("alibaba", "a.b.c"));
	assert_false(bucket_ok("alibaba", "bucket-"));
	assert_true(bucket_ok("tencent", "examplebucket-1250000000"));
	assert_true(bucket_ok("tencent", "1-newproject-1250000000"));
	assert_false(bucket_ok("tencent", "examplebucket"));
	assert_false(bucket_ok("tencent", "example-bucket-12a"));
	assert_false(bucket_ok("tencent", "-x-1250000000"));
	assert_false(bucket_ok("tencent", "x--1250000000"));
	assert_true(role_ok("aws", "gpu+data=reader,x.y@z_w-1"));
	assert_false(role_ok("aws", "a b"));
	assert_true(role_ok("alibaba", "gpu-data.reader"));
	assert_false(role_ok("alibaba", "gpu_data"));
	assert_true(role_ok("tencent", "gpu_data@reader"));
	assert_false(role_ok("tencent", ""));

	load(&l,
	     "name: a\nprovider:\n  name: aws\n  region: us-east-1\nnode_groups:\n"
	     "  - name: t\n    count: 1\n    instance_types: [g5.xlarge]\n"
	     "    role: reader\nmounts:\n  - bucket: my-data\n    path: /data\n"
	     "  - bucket: my-out\n    path: /mnt/out\n    mode: rw\n");
	assert_int_equal(l.r, 0);
	assert_string_equal(l.spec->groups[0].role, "reader");
	assert_int_equal(l.spec->groups[0].role_pos.line, 9);
	assert_int_equal(l.spec->n_mounts, 2);
	assert_string_equal(l.spec->mounts[0].bucket, "my-data");
	assert_string_equal(l.spec->mounts[0].path, "/data");
	assert_false(l.spec->mounts[0].rw);
	assert_true(l.spec->mounts[1].rw);
	release(&l);
}

static void test_fabric(void **state)
{
	struct gc_type_facts p4d = { .name = "p4d.24xlarge", .gpus = 8, .rdma_interfaces = 4 };
	struct gc_type_facts g5 = { .name = "g5.xlarge", .gpus = 1 };
	struct gc_spec_group *g;
	struct load l;

	(void)state;
	load(&l,
	     "name: a\nprovider:\n  name: aws\n  region: us-east-1\nnode_groups:\n"
	     "  - name: t\n    count: 2\n    instance_types: [p4d.24xlarge]\n"
	     "    zones: [us-east-1a]\n    placement: cluster\n    interconnect: rdma\n"
	     "    interfaces: 2\n  - name: u\n    count: 2\n"
	     "    instance_types: [p4d.24xlarge]\n");
	assert_int_equal(l.r, 0);
	g = &l.spec->groups[0];
	assert_int_equal(g->placement, GC_PLACEMENT_CLUSTER);
	assert_int_equal(g->interconnect, GC_INTERCONNECT_RDMA);
	assert_int_equal(g->interfaces, 2);
	assert_int_equal(g->interconnect_pos.line, 11);
	assert_int_equal(g->interconnect_pos.col, 19);
	assert_int_equal(g->interfaces_pos.line, 12);
	assert_int_equal(gc_fabric_interfaces(g, &p4d), 2);
	g = &l.spec->groups[1];
	assert_int_equal(g->interconnect, GC_INTERCONNECT_AUTO);
	assert_int_equal(gc_fabric_interconnect(g, &p4d), GC_INTERCONNECT_RDMA);
	assert_int_equal(gc_fabric_interfaces(g, &p4d), 4);
	assert_int_equal(gc_fabric_interconnect(g, &g5), GC_INTERCONNECT_STANDARD);
	assert_int_equal(gc_fabric_interfaces(g, &g5), 0);
	g->count = 1; /* one node needs no fabric */
	assert_int_equal(gc_fabric_interconnect(g, &p4d), GC_INTERCONNECT_STANDARD);
	g->interconnect = GC_INTERCONNECT_STANDARD;
	g->count = 2;
	assert_int_equal(gc_fabric_interfaces(g, &p4d), 0);
	release(&l);

	expect1_env("name: a\nprovider:\n  name: aws\n  region: us-east-1\nnode_groups:\n"
		    "  - name: t\n    count: 2\n    instance_types: [p4d.24xlarge]\n"
		    "    placement: cluster\n    zones: [us-east-1a, us-east-1b]\n",
		    NULL, 10, 25,
		    "node_groups[0].zones[1]: placement cluster keeps the group in one zone (the "
		    "cloud's placement group lives in one): list one zone, not 2");
}

/* gpus: parsed with its position; without the cloud, resolved from the catalogue in its
 * list-price order, after the types the spec names; a GPU the cloud does not sell. */
static void test_gpus(void **state)
{
	char region[] = "us-east-1";
	struct gc_provider prov = { .region = region };
	struct gc_spec_group *g;
	struct gc_error err;
	struct load l;

	(void)state;
	load(&l,
	     "name: a\nprovider:\n  name: aws\n  region: us-east-1\nnode_groups:\n"
	     "  - name: t\n    count: 2\n    gpus: a10g:1\n"
	     "  - name: u\n    count: 1\n    instance_types: [g4dn.xlarge, g5.2xlarge]\n"
	     "    gpus: A10G-24GB:1,vcpus=8\n");
	assert_int_equal(l.r, 0);
	g = &l.spec->groups[0];
	assert_true(g->has_gpus);
	assert_false(g->gpu_types_given);
	assert_string_equal(g->gpus.model, "A10G");
	assert_int_equal(g->gpus.count, 1);
	assert_int_equal(g->gpus_pos.line, 8);
	assert_int_equal(g->gpus_pos.col, 11);
	assert_int_equal(g->n_instance_types, 0);
	prov.ops = l.spec->provider.ops;
	gc_error_init(&err);
	for (int round = 0; round < 2; round++) { /* a second call gives the same list */
		assert_int_equal(gc_gpupick_resolve(&prov, l.spec, false, &err), 0);
		g = &l.spec->groups[0];
		assert_int_equal(g->n_instance_types, 2);
		assert_string_equal(g->instance_types[0], "g5.xlarge");
		assert_string_equal(g->instance_types[1], "g5.2xlarge");
		assert_int_equal(g->gpus_first, 0);
		assert_int_equal(g->instance_types_pos[1].line, 8);
		g = &l.spec->groups[1]; /* its own types first, the pick not repeated */
		assert_true(g->gpu_types_given);
		assert_int_equal(g->n_instance_types, 2);
		assert_string_equal(g->instance_types[0], "g4dn.xlarge");
		assert_string_equal(g->instance_types[1], "g5.2xlarge");
		assert_int_equal(g->gpus_first, 2);
	}
	release(&l);

	load(&l,
	     "name: a\nprovider:\n  name: aws\n  region: us-east-1\nnode_groups:\n"
	     "  - name: t\n    count: 2\n    gpus: H200:8\n");
	assert_int_equal(l.r, 0);
	prov.ops = l.spec->provider.ops;
	gc_error_init(&err);
	assert_int_equal(gc_gpupick_resolve(&prov, l.spec, false, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message,
			       "t.yaml:8:11: gpus: aws sells no instance type with "
			       "H200:8 (it sells T4:1 (g4dn.xlarge), "));
	assert_non_null(strstr(err.message, "A100:8 (p4d.24xlarge)"));
	release(&l);
}

/* The registry's two lists agree, and every cloud's facts are complete. */
static void test_registry(void **state)
{
	const struct gc_provider_ops *p;
	size_t i;

	(void)state;
	for (i = 0; (p = gc_provider_at(i)); i++) {
		const struct gc_provider_facts *f = p->facts;

		assert_non_null(gc_provider_names[i]);
		assert_string_equal(gc_provider_names[i], p->name);
		assert_ptr_equal(gc_provider_by_name(p->name), p);
		assert_non_null(f);
		assert_non_null(f->home_region);
		assert_non_null(f->oidc_audience);
		assert_non_null(f->image_aliases);
		assert_non_null(f->image_aliases[0]);
		assert_non_null(f->image_id);
		assert_non_null(f->image_id_like);
		assert_non_null(f->image_id_hint);
		assert_non_null(f->role);
		assert_non_null(f->role_hint);
		assert_non_null(f->oidc_provider_hint);
		assert_non_null(f->keypair.prefix);
		assert_true(f->keypair.sep != '\0');
		assert_non_null(f->vpc_id);
		assert_non_null(f->vpc_id_hint);
		assert_non_null(f->subnet_id);
		assert_non_null(f->subnet_id_hint);
		assert_non_null(f->subnet_word);
	}
	assert_true(i >= 1);
	assert_null(gc_provider_names[i]);
	assert_null(gc_provider_by_name("nimbus"));
}

/* The alias words a driver resolves are exactly what the validator takes for its cloud. */
static void test_cloud_image_aliases(void **state)
{
	const struct gc_provider_ops *p;
	struct load l;
	char text[512];

	(void)state;
	for (size_t i = 0; (p = gc_provider_at(i)); i++) {
		for (const char *const *a = p->facts->image_aliases; *a; a++) {
			snprintf(text, sizeof(text),
				 "name: t\nprovider: {name: %s, region: xx-east-1}\nnode_groups:\n"
				 "  - {name: g, count: 1, instance_types: [a], image: %s}\n",
				 p->name, *a);
			expect_ok(&l, text);
			assert_true(l.spec->groups[0].image_is_alias);
			release(&l);
		}
	}
	/* an alias of one cloud only is that cloud's */
	expect1("name: t\nprovider: {name: tencent, region: ap-beijing}\nnode_groups:\n"
		"  - {name: g, count: 1, instance_types: [a], image: dlami}\n",
		4, 53,
		"node_groups[0].image: unknown image 'dlami'; expected an alias (ubuntu-22.04, "
		"ubuntu-24.04, gpu-ready) or img-...");
}

/* What else users call a cloud gets a "did you mean". */
static void test_cloud_nicknames(void **state)
{
	(void)state;
	expect1("name: t\nprovider: {name: Aliyun, region: cn-beijing}\nnode_groups:\n"
		"  - {name: g, count: 1, instance_types: [a]}\n",
		2, 18,
		"provider.name: unknown value 'Aliyun'; expected one of aws, alibaba, tencent; did "
		"you mean 'alibaba'?");
	expect1("name: t\nprovider: {name: qcloud, region: ap-beijing}\nnode_groups:\n"
		"  - {name: g, count: 1, instance_types: [a]}\n",
		2, 18,
		"provider.name: unknown value 'qcloud'; expected one of aws, alibaba, tencent; did "
		"you mean 'tencent'?");
}

static void test_null_diags(void **state)
{
	struct gc_spec *spec = NULL;
	const char *text = "name: x\n";

	(void)state;
	/* diags and err may be NULL: the result is still a refusal */
	assert_int_equal(gc_spec_load_buffer(&spec, NULL, text, strlen(text), NULL, NULL, NULL),
			 -1);
	assert_null(spec);
	assert_int_equal(gc_spec_load_buffer(&spec, "x", NULL, 0, NULL, NULL, NULL), -1);
	assert_int_equal(gc_spec_load_buffer(&spec, "x", HEAD_G, strlen(HEAD_G), NULL, NULL, NULL),
			 0);
	assert_non_null(spec);
	assert_string_equal(spec->file, "x");
	gc_spec_free(spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doc_example),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_currency),
		cmocka_unit_test(test_full_spec),
		cmocka_unit_test(test_rules_top),
		cmocka_unit_test(test_rules_provider),
		cmocka_unit_test(test_rules_provider_oidc),
		cmocka_unit_test(test_rules_network),
		cmocka_unit_test(test_rules_ssh),
		cmocka_unit_test(test_rules_groups),
		cmocka_unit_test(test_rules_bootstrap),
		cmocka_unit_test(test_rules_steps),
		cmocka_unit_test(test_rules_lifecycle),
		cmocka_unit_test(test_rules_tags),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_many_errors_in_order),
		cmocka_unit_test(test_too_many_problems),
		cmocka_unit_test(test_env_expansion),
		cmocka_unit_test(test_env_errors),
		cmocka_unit_test(test_env_process),
		cmocka_unit_test(test_env_budget),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_billion_laughs),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_file_size),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_documents),
		cmocka_unit_test(test_typing),
		cmocka_unit_test(test_yaml_syntax),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_fabric),
		cmocka_unit_test(test_gpus),
		cmocka_unit_test(test_mounts),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_cloud_image_aliases),
		cmocka_unit_test(test_cloud_nicknames),
		cmocka_unit_test(test_null_diags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
