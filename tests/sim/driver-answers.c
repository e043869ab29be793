/*
 * driver-answers.c: answers of the wrong shape on every action the drivers read, on the
 * three clouds (issue 19, "bad data is an error, not an empty answer"). The emulator's
 * hostile mode (sim/hostile.h) bends one action's answer; the driver must refuse it as
 * GC_EBADRESPONSE naming the action, send it at most GC_RETRY_BADRESPONSE_MAX_ATTEMPTS
 * times, never read it as "nothing there", and work again once the cloud answers
 * normally. One executable on the driver suite's fixture (driver-fixture.h), run once
 * per cloud: sim.answers.aws, sim.answers.alibaba, sim.answers.tencent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/alloc.h"
#include "core/provider.h"
#include "core/retry.h"
#include "core/str.h"
#include "driver-alibaba.h"
#include "driver-aws.h"
#include "driver-fixture.h"
#include "driver-tencent.h"
#include "sim/sim.h"
#include "ssh-test-keys.h"

static const struct drv_cloud *const clouds[] = { &drv_aws, &drv_alibaba, &drv_tencent };
static const struct drv_cloud *cloud;

static int test_setup(void **state)
{
	return drv_setup(state, cloud);
}

static void warm(void)
{
	if (drv->hooks && drv->hooks->warm)
		drv->hooks->warm();
}

/* What a case calls: one provider operation whose answer is bent. */
enum op {
	OP_DISCOVER,
	OP_KEYPAIRS,
	OP_IMAGE,
	OP_TYPE,
	OP_ZONES,
	OP_CREATE,
	OP_TERMINATE,
	OP_GPU_TYPES, /* show-gpus' listing: the types action, unfiltered */
};

static const char *op_action(enum op op)
{
	switch (op) {
	case OP_DISCOVER: return "DescribeInstances";
	case OP_KEYPAIRS: return "DescribeKeyPairs";
	case OP_IMAGE: return "DescribeImages";
	case OP_TYPE: return drv->types_action;
	case OP_ZONES: return drv->zones_action;
	case OP_CREATE: return "RunInstances";
	case OP_TERMINATE: return drv->terminate_action;
	case OP_GPU_TYPES: return drv->types_action;
	}
	return "?";
}

/* The modes that bend a whole answer, and the one that strips the fields items rely on
 * (meaningful where the answer lists items with ids: not for zones, types or launches,
 * whose items the emulator's stripping leaves alone on some clouds). */
#define SHAPES	"empty-envelope", "wrong-document", "html"
#define LISTING SHAPES, "missing-fields"

struct answer_case {
	enum op op;
	const char *modes[6]; /* NULL ends */
};

static const struct answer_case cases[] = {
	{ OP_DISCOVER, { LISTING, "duplicate-ids" } },
	{ OP_KEYPAIRS, { LISTING } },
	{ OP_IMAGE, { LISTING } },
	{ OP_TYPE, { SHAPES } },
	{ OP_ZONES, { SHAPES } },
	{ OP_CREATE, { SHAPES } },
	/* a termination's answer may carry nothing but its request id: only a page that is
	 * not the cloud's, or no document at all, can be told apart */
	{ OP_TERMINATE, { "empty-envelope", "html" } },
	{ OP_GPU_TYPES, { SHAPES } },
};

/* The instances of the cluster in the world, one launched per call. */
static struct gc_instance_list world;

static void launch_one(const char *token)
{
	struct gc_create_request r = launch_req(1, token);
	struct gc_instance_list got;

	gc_instance_list_init(&got);
	launch_ok(&r, &got);
	gc_instance_list_take(&world, &got);
}

/* Runs op once; 0 or -1 with err. */
static int call(enum op op, struct gc_error *err)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_instance_list got;
	struct gc_resource_list found;
	struct gc_type_facts facts;
	struct gc_create_request r;
	const char *ids[2];
	char **zones = NULL, *id = NULL;
	size_t n = 0;
	int rc = -1;

	gc_error_init(err);
	gc_instance_list_init(&got);
	switch (op) {
	case OP_DISCOVER:
		rc = gc_provider_discover(prov, &q, &got, err);
		if (rc == 0)
			assert_int_equal(got.n, world.n);
		break;
	case OP_KEYPAIRS:
		memset(&found, 0, sizeof(found));
		rc = gc_provider_list_resources(prov, GC_RESOURCE_KEYPAIR, mine, 1, &found, err);
		gc_resource_list_release(&found);
		break;
	case OP_IMAGE:
		rc = gc_provider_resolve_image(prov, drv->images[0].image, true, &id, err);
		if (rc == 0)
			assert_string_equal(id, drv->images[0].want);
		break;
	case OP_TYPE: rc = gc_provider_instance_type(prov, drv->types[0].name, &facts, err); break;
	case OP_ZONES:
		rc = gc_provider_zones(prov, &zones, &n, err);
		if (rc == 0)
			assert_int_equal(n, drv->n_zones);
		break;
	case OP_CREATE:
		r = launch_req(1, "gc-answers");
		launch_prep(&r);
		rc = gc_provider_create(prov, &r, &got, err);
		if (rc == 0) {
			assert_int_equal(got.n, 1);
			assert_non_null(got.items[0].id);
		}
		break;
	case OP_TERMINATE:
		ids[0] = world.items[0].id;
		rc = gc_provider_terminate(prov, ids, 1, err);
		break;
	case OP_GPU_TYPES: {
		struct gc_gpu_type *types = NULL;
		size_t n_types = 0;

		rc = gc_provider_gpu_types(prov, &types, &n_types, err);
		if (rc == 0)
			assert_true(n_types > 0);
		gc_gpu_types_free(types, n_types);
		break;
	}
	}
	gc_instance_list_release(&got);
	for (size_t i = 0; i < n; i++)
		free(zones[i]);
	free(zones);
	free(id);
	return rc;
}

/* Instances running or on their way (a cloud's warm-up may have launched one). */
static size_t alive(void)
{
	return world_count(SIM_RUNNING, false) + world_count(SIM_PENDING, false);
}

/* Every case of op: refused under each mode, then fine once the cloud is healthy. */
static void refuse_each(const struct answer_case *c)
{
	const char *action = op_action(c->op);
	struct gc_error err;
	char rule[160];

	for (const char *const *m = c->modes; *m; m++) {
		size_t before = logged_count(action), sent;
		size_t running = alive();

		sim_faults_clear(sim.faults);
		snprintf(rule, sizeof(rule), "%s:hostile,mode=%s", action, *m);
		add_fault(rule);
		if (call(c->op, &err) == 0)
			fail_msg("%s under %s: read as a good answer", action, *m);
		sent = logged_count(action) - before;
		print_message("%s under %s: %s (%zu sent)\n", action, *m, err.message, sent);
		if (err.code != GC_EBADRESPONSE)
			fail_msg("%s under %s: %s, not invalid-response: %s", action, *m,
				 gc_strerror(err.code), err.message);
		assert_non_null(strstr(err.message, action));
		assert_true(sent >= 1 && sent <= GC_RETRY_BADRESPONSE_MAX_ATTEMPTS);
		/* a termination not confirmed leaves the node where it was: nothing to count */
		if (c->op == OP_TERMINATE)
			assert_int_equal(alive(), running);
	}
	sim_faults_clear(sim.faults);
	if (call(c->op, &err) != 0)
		fail_msg("%s, healthy again: %s", action, err.message);
}

static void run_op(enum op op)
{
	size_t before = alive();

	gc_instance_list_init(&world);
	if (op != OP_CREATE)
		launch_one("gc-world-1"); /* a listing with an item in it */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (cases[i].op == op)
			refuse_each(&cases[i]);
	if (op == OP_CREATE) /* the launch that went through once healthy: one, no more */
		assert_int_equal(alive(), before + 1);
	gc_instance_list_release(&world);
}

static void test_discover(void **state)
{
	(void)state;
	run_op(OP_DISCOVER);
}

static void test_keypairs(void **state)
{
	struct gc_buf pub = GC_BUF_INIT(4096);
	struct gc_keypair_request kr;
	struct gc_error err;
	char *id = NULL;

	(void)state;
	/* a key pair of ours, so that the listing has an item */
	if (!drv->ed25519_code)
		public_line(&pub, "answers");
	else
		assert_int_equal(gc_buf_addstr(&pub, TEST_RSA_A " answers"), 0);
	memset(&kr, 0, sizeof(kr));
	kr.name = drv->key_name;
	kr.public_key_line = pub.data;
	kr.tags = base_tags;
	kr.n_tags = 2;
	gc_error_init(&err);
	if (gc_provider_import_keypair(prov, &kr, &id, &err) != 0)
		fail_msg("import: %s", err.message);
	free(id);
	gc_buf_release(&pub);
	run_op(OP_KEYPAIRS);
}

static void test_image(void **state)
{
	(void)state;
	run_op(OP_IMAGE);
}

static void test_type(void **state)
{
	(void)state;
	run_op(OP_TYPE);
}

static void test_zones(void **state)
{
	(void)state;
	run_op(OP_ZONES);
}

static void test_create(void **state)
{
	(void)state;
	warm();
	run_op(OP_CREATE);
}

static void test_terminate(void **state)
{
	(void)state;
	run_op(OP_TERMINATE);
}

static void test_gpu_types(void **state)
{
	(void)state;
	run_op(OP_GPU_TYPES);
}

/* A lost answer, once: the launch is sent again with its token and makes no second node. */
static void test_create_html_once(void **state)
{
	struct gc_error err;
	size_t before, sent;

	(void)state;
	warm();
	before = alive();
	sent = logged_count("RunInstances");
	gc_instance_list_init(&world);
	add_fault("RunInstances:hostile,mode=html,times=1");
	if (call(OP_CREATE, &err) != 0)
		fail_msg("create after one HTML page: %s", err.message);
	assert_int_equal(logged_count("RunInstances"), sent + 2);
	assert_int_equal(alive(), before + 1);
	gc_instance_list_release(&world);
}

#define CASE(fn) cmocka_unit_test_setup_teardown(fn, test_setup, test_teardown)

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		CASE(test_discover),  CASE(test_keypairs),
		CASE(test_image),     CASE(test_type),
		CASE(test_zones),     CASE(test_create),
		CASE(test_terminate), CASE(test_create_html_once),
		CASE(test_gpu_types),
	};
	char group[64];

	for (size_t i = 0; argc == 2 && i < sizeof(clouds) / sizeof(clouds[0]); i++)
		if (!strcmp(argv[1], clouds[i]->name))
			cloud = clouds[i];
	if (!cloud) {
		fprintf(stderr, "usage: driver-answers aws|alibaba|tencent\n");
		return 2;
	}
	snprintf(group, sizeof(group), "sim.answers.%s", cloud->name);
	return _cmocka_run_group_tests(group, tests, sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
