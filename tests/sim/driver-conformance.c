/*
 * driver-conformance.c: what every cloud driver must do, through the provider wrappers
 * only, against the emulator served in-process (driver-fixture.h). One executable for
 * the three clouds; its argument picks the cloud's description (driver-aws.h,
 * driver-alibaba.h, driver-tencent.h) and ctest runs it once per cloud (sim.driver.aws,
 * sim.driver.alibaba, sim.driver.tencent). What only one cloud does is in that cloud's
 * description (data and hooks) or in its own test-CLOUD-driver.c.
 *
 * Covered: discover with tag filters over pages (1200 instances, with the emulator's own
 * rate limits on and never met); client-token replay and mismatch; a lost answer retried
 * without a duplicate, and not retried without a token; terminate with ids already gone
 * or malformed; an expiry moved and cleared in place (tag and timer); key pairs and security groups found by tag, adopted on a re-run, refused
 * when foreign, a group in use waited on, a group's rules reconciled (missing added,
 * ours unwanted revoked, foreign kept); image aliases and literal ids; type facts and
 * prices, cached; zones, regions, the console output capability and its host key block;
 * the error taxonomy under injected faults (throttle, capacity, quota, 5xx, drop);
 * authentication failures and missing credentials; a cancel during our own rate wait;
 * answers no cloud should give (garbage, a gateway's 500, an oversized body); and
 * listings that page for ever (the emulator's hostile modes: fresh tokens, the same
 * token, empty pages with a token, a huge total, an id twice), each stopped within a
 * few pages with an error naming DescribeInstances and what looked wrong (issue 19).
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
#include "core/driver.h"
#include "core/keygen.h"
#include "core/provider.h"
#include "core/retry.h"
#include "core/str.h"
#include "driver-alibaba.h"
#include "driver-aws.h"
#include "driver-fixture.h"
#include "driver-tencent.h"
#include "sim/sim.h"
#include "ssh-test-keys.h"

/* The clouds the suite runs on: one row each. */
static const struct drv_cloud *const clouds[] = { &drv_aws, &drv_alibaba, &drv_tencent };

static const struct drv_cloud *cloud; /* the one this run tests */

static int test_setup(void **state)
{
	return drv_setup(state, cloud);
}

/* Calls the cloud's hook, when it has one. */
#define HOOK(name, ...)                                \
	do {                                           \
		if (drv->hooks && drv->hooks->name)    \
			drv->hooks->name(__VA_ARGS__); \
	} while (0)
#define HOOK0(name)                                 \
	do {                                        \
		if (drv->hooks && drv->hooks->name) \
			drv->hooks->name();         \
	} while (0)

static void warm(void)
{
	HOOK0(warm);
}

/* ---- discover -------------------------------------------------------------------------- */

static void test_discover_pages(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_tag_filter by_key[] = { { "team", NULL } };
	struct gc_discover_query q = { mine, 1, false };
	size_t pages_of_1200 = (1200 + drv->page_size - 1) / drv->page_size;
	struct gc_instance_list got;
	struct gc_error err;
	unsigned long calls;
	json_t *pages;

	(void)state;
	launch_pages();
	if (drv->pages_wait_ms)
		assert_true(prov->stats.ratelimit_wait_ms >= drv->pages_wait_ms);
	gc_instance_list_init(&got);

	calls = prov->stats.calls;
	gc_error_init(&err);
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(got.n, 1200);
	assert_int_equal(prov->stats.calls - calls, pages_of_1200);
	for (size_t i = 0; i < got.n; i++) {
		assert_string_equal(got.items[i].cluster, CLUSTER);
		assert_string_equal(got.items[i].group, "workers");
		assert_string_equal(got.items[i].spec_hash, "h4sh");
		assert_string_equal(got.items[i].type, drv->type);
		assert_string_equal(got.items[i].image, drv->image);
		assert_string_equal(got.items[i].zone, drv->launch_zone);
		assert_true(got.items[i].state == GC_STATE_PENDING ||
			    got.items[i].state == GC_STATE_RUNNING);
		if (drv->lists_client_token)
			assert_true(gc_starts_with(got.items[i].client_token, "gc-page-"));
		assert_true(got.items[i].launch_time > 0);
		assert_non_null(got.items[i].private_ip);
		assert_false(got.items[i].spot);
	}
	gc_instance_list_release(&got);

	pages = logged("DescribeInstances");
	assert_int_equal(json_array_size(pages), pages_of_1200);
	HOOK(discover_wire, pages);
	json_decref(pages);

	/* a key-only filter: the 1200 carry "team", the other three do not */
	q.tags = by_key;
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(got.n, 1200);
	gc_instance_list_release(&got);
	pages = logged("DescribeInstances");
	HOOK(discover_by_key_wire, pages);
	json_decref(pages);
	assert_int_equal(prov->stats.throttled, 0);
}

/* ---- create ------------------------------------------------------------------------------ */

static void test_client_token(void **state)
{
	struct gc_create_request r = launch_req(2, "gc-token-1");
	struct gc_instance_list a, b;
	struct gc_error err;
	char want[128];

	(void)state;
	gc_instance_list_init(&a);
	gc_instance_list_init(&b);
	launch_ok(&r, &a);
	launch_ok(&r, &b);
	assert_int_equal(a.n, 2);
	assert_int_equal(b.n, 2);
	for (size_t i = 0; i < 2; i++)
		assert_string_equal(a.items[i].id, b.items[i].id);
	assert_int_equal(world_count(0, true), 2);

	/* the same token with another type */
	r.type = drv->other_type;
	gc_error_init(&err);
	assert_int_equal(gc_provider_create(prov, &r, &b, &err), -1);
	assert_int_equal(err.code, GC_EIDEMPOTENCY);
	assert_string_equal(err.cloud_code, drv->mismatch_code);
	assert_int_equal(err.http_status, drv->mismatch_status);
	snprintf(want, sizeof(want), "cannot launch 2 '%s' instances", drv->other_type);
	assert_non_null(strstr(err.message, want));
	assert_int_equal(b.n, 2);
	assert_int_equal(world_count(0, true), 2);
	gc_instance_list_release(&a);
	gc_instance_list_release(&b);
}

static void test_lost_answer(void **state)
{
	struct gc_create_request r = launch_req(3, "gc-lost-1");
	struct gc_instance_list got;
	struct gc_error err;
	unsigned long calls, retries;
	size_t before;

	(void)state;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	warm();
	before = world_count(0, true);
	calls = prov->stats.calls;
	retries = prov->stats.retries;
	/* the launch happens, the answer is an InternalError: the retry with the token gets
	 * the same instances */
	add_fault("RunInstances:5xx,after=1,times=1");
	launch_ok(&r, &got);
	assert_int_equal(got.n, 3);
	assert_int_equal(world_count(0, true), before + 3);
	assert_int_equal(prov->stats.calls - calls, 2);
	assert_int_equal(prov->stats.retries - retries, 1);

	/* without a token a repeat could launch twice: not retried */
	r.client_token = NULL;
	add_fault("RunInstances:5xx,after=1,times=1");
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_string_equal(err.cloud_code, "InternalError");
	assert_int_equal(err.http_status, drv->internal_status);
	assert_int_equal(prov->stats.calls - calls, 1);
	assert_int_equal(world_count(0, true), before + 6);
	gc_instance_list_release(&got);
}

/* ---- terminate --------------------------------------------------------------------------- */

static void test_terminate_gone(void **state)
{
	struct gc_create_request r = launch_req(3, "gc-gone");
	struct gc_instance_list got;
	const char *ids[4];
	struct gc_error err;
	unsigned long calls;

	(void)state;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	launch_ok(&r, &got);
	advance_ms(2000);
	ids[0] = got.items[0].id;
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	/* terminated, then gone from the listings (at once, or after a while) */
	advance_ms(1500);
	if (drv->forget_ms)
		advance_ms(drv->forget_ms);
	sim_world_lock(sim.world);
	assert_null(sim_world_instance(sim.world, drv->frontend, ids[0]));
	sim_world_unlock(sim.world);

	ids[1] = got.items[1].id;
	ids[2] = drv->unknown_id; /* never existed */
	ids[3] = got.items[2].id;
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_terminate(prov, ids, 4, &err), 0);
	assert_int_equal(prov->stats.calls - calls, drv->gone_calls);
	assert_int_equal(world_state(ids[1]), SIM_SHUTTING_DOWN);
	assert_int_equal(world_state(ids[3]), SIM_SHUTTING_DOWN);
	HOOK(terminate_wire, ids);

	/* only gone ones: done; terminating ones a second time: done too */
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	assert_int_equal(gc_provider_terminate(prov, &ids[2], 1, &err), 0);
	assert_int_equal(gc_provider_terminate(prov, &ids[1], 1, &err), 0);

	/* a malformed id is our bug, not "gone" */
	if (drv->malformed_id) {
		ids[0] = drv->malformed_id;
		assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), -1);
		assert_int_equal(err.code, GC_EINVALID);
		assert_string_equal(err.cloud_code, drv->malformed_code);
	}
	gc_instance_list_release(&got);
}

/* ---- spot reclaim (issue 14) ------------------------------------------------------------- */

/* The one instance of the listing with id, or NULL. */
static const struct gc_instance *listed(const struct gc_instance_list *l, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].id, id))
			return &l->items[i];
	return NULL;
}

/* A spot instance reclaimed by the cloud: the driver reads the cloud's reason as Describe
 * gives it (docs/internals/spot.md). During the notice ECS locks it for Recycling; after,
 * EC2 lists it terminated with Server.SpotInstanceTermination, ECS and CVM release it. */
static void test_reclaim_reason(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, true };
	struct gc_create_request r = launch_req(1, "gc-reclaim");
	struct gc_instance_list got, now;
	const struct gc_instance *in;
	struct sim_instance *si;
	struct gc_error err;
	char id[64];

	(void)state;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	r.spot = true;
	launch_ok(&r, &got);
	snprintf(id, sizeof(id), "%s", got.items[0].id);
	advance_ms(60000);
	sim_world_lock(sim.world);
	si = sim_world_instance(sim.world, drv->frontend, id);
	assert_int_equal(sim_world_reclaim(sim.world, si, 60), 0);
	sim_world_unlock(sim.world);

	gc_instance_list_init(&now);
	assert_int_equal(gc_provider_discover(prov, &q, &now, &err), 0);
	in = listed(&now, id);
	assert_non_null(in);
	assert_int_equal(in->state, GC_STATE_RUNNING);
	if (!strcmp(cloud->name, "alibaba")) {
		assert_string_equal(in->reason, "Recycling");
		assert_true(in->preempted);
	} else {
		assert_null(in->reason);
		assert_false(in->preempted);
	}
	gc_instance_list_release(&now);

	/* the notice runs out: the cloud takes it */
	sim_world_lock(sim.world);
	si->reclaim_at_wall = sim_world_wall(sim.world);
	sim_world_unlock(sim.world);
	advance_ms(1000);
	advance_ms(60000);
	assert_int_equal(gc_provider_discover(prov, &q, &now, &err), 0);
	in = listed(&now, id);
	if (!strcmp(cloud->name, "aws")) {
		assert_non_null(in);
		assert_int_equal(in->state, GC_STATE_TERMINATED);
		assert_string_equal(in->reason, "Server.SpotInstanceTermination");
		assert_true(in->preempted);
	} else {
		assert_null(in);
	}
	gc_instance_list_release(&now);
	gc_instance_list_release(&got);
}

/* ---- expiry --------------------------------------------------------------------------------- */

/* The expires-at tag and the cloud's timer of one instance, as the emulator holds them. */
static void world_expiry(const char *id, char tag[32], int64_t *timer)
{
	const struct sim_instance *inst;
	const char *v;

	sim_world_lock(sim.world);
	inst = sim_world_instance(sim.world, drv->frontend, id);
	v = sim_tags_get(&inst->tags, GC_TAG_EXPIRES_AT);
	snprintf(tag, 32, "%s", v ? v : "");
	*timer = inst->release_at_wall;
	sim_world_unlock(sim.world);
}

/* set_expiry moves the tag of running instances in place, and the cloud's timer where it
 * moves (GC_CAP_TTL_MOVES); 0 clears both. */
static void test_set_expiry(void **state)
{
	struct gc_create_request r = launch_req(2, "gc-expiry");
	struct gc_instance_list got;
	const char *ids[2];
	struct gc_error err;
	int64_t when = ((int64_t)time(NULL) / 60 + 3 * 60) * 60, timer;
	char want[21], tag[32];
	bool moves = prov->ops->caps & GC_CAP_TTL_MOVES;

	(void)state;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	launch_ok(&r, &got);
	advance_ms(2000);
	ids[0] = got.items[0].id;
	ids[1] = got.items[1].id;
	gc_format_rfc3339(when, want);
	assert_int_equal(gc_provider_set_expiry(prov, ids, 2, when, &err), 0);
	for (size_t i = 0; i < 2; i++) {
		world_expiry(ids[i], tag, &timer);
		assert_string_equal(tag, want);
		if (moves)
			assert_int_equal(timer, when);
		assert_int_equal(world_state(ids[i]), SIM_RUNNING);
	}
	/* moved again (a timer already there is replaced), then cleared */
	when += 3600;
	gc_format_rfc3339(when, want);
	assert_int_equal(gc_provider_set_expiry(prov, ids, 2, when, &err), 0);
	world_expiry(ids[1], tag, &timer);
	assert_string_equal(tag, want);
	if (moves)
		assert_int_equal(timer, when);
	assert_int_equal(gc_provider_set_expiry(prov, ids, 2, 0, &err), 0);
	for (size_t i = 0; i < 2; i++) {
		world_expiry(ids[i], tag, &timer);
		assert_string_equal(tag, "");
		if (moves)
			assert_int_equal(timer, 0);
	}
	gc_instance_list_release(&got);
}

/* set_tag sets a tag of running instances in place (the idle stop: lifecycle.idle changed),
 * Describe reads it back, and a NULL value removes it; the instances keep running. */
static void test_set_tag(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_create_request r = launch_req(2, "gc-retag");
	struct gc_instance_list got, now;
	const struct gc_instance *in;
	const char *ids[2];
	struct gc_error err;

	(void)state;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	launch_ok(&r, &got);
	advance_ms(2000);
	ids[0] = got.items[0].id;
	ids[1] = got.items[1].id;
	for (int round = 0; round < 3; round++) {
		const char *value = round == 0 ? "1800" : round == 1 ? "2700" : NULL;
		int64_t secs = round == 0 ? 1800 : round == 1 ? 2700 : 0;

		assert_int_equal(gc_provider_set_tag(prov, ids, 2, GC_TAG_IDLE, value, &err), 0);
		gc_instance_list_init(&now);
		assert_int_equal(gc_provider_discover(prov, &q, &now, &err), 0);
		for (size_t i = 0; i < 2; i++) {
			in = listed(&now, ids[i]);
			assert_non_null(in);
			assert_int_equal(in->state, GC_STATE_RUNNING);
			if (value) {
				assert_string_equal(gc_instance_tag(in, GC_TAG_IDLE), value);
			} else {
				assert_null(gc_instance_tag(in, GC_TAG_IDLE));
			}
			assert_int_equal(in->idle_s, secs);
			assert_string_equal(gc_instance_tag(in, "team"), "research"); /* kept */
		}
		gc_instance_list_release(&now);
	}
	gc_instance_list_release(&got);
}

/* ---- key pairs and security groups ------------------------------------------------------- */

static void test_keypairs(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_buf pub = GC_BUF_INIT(4096), other = GC_BUF_INIT(4096), ed = GC_BUF_INIT(4096);
	bool ed25519; /* the cloud takes Ed25519 keys */
	struct gc_keypair_request kr;
	struct gc_resource_list found;
	struct gc_error err;
	char *id = NULL, *again = NULL, *foreign = NULL, fpr[GC_SSH_FINGERPRINT_SIZE];

	(void)state;
	gc_error_init(&err);
	gc_resource_list_init(&found);
	ed25519 = !drv->ed25519_code;
	/* the engine's own Ed25519 key where the cloud takes one, else fixed RSA keys */
	if (ed25519) {
		public_line(&pub, "drv@test");
		public_line(&other, "someone@else");
	} else {
		assert_int_equal(gc_buf_addstr(&pub, TEST_RSA_A " drv@test"), 0);
		assert_int_equal(gc_buf_addstr(&other, TEST_RSA_B " someone@else"), 0);
	}

	memset(&kr, 0, sizeof(kr));
	kr.name = drv->key_name;
	kr.public_key_line = pub.data;
	kr.tags = base_tags;
	kr.n_tags = 2;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &id, &err), 0);
	if (drv->key_id_prefix)
		assert_true(gc_starts_with(id, drv->key_id_prefix));
	else
		assert_string_equal(id, drv->key_name); /* known by name */

	/* someone's untagged key with a name like ours */
	kr.name = drv->foreign_key_name;
	kr.public_key_line = other.data;
	kr.tags = NULL;
	kr.n_tags = 0;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &foreign, &err), 0);

	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_KEYPAIR, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 1);
	assert_string_equal(found.items[0].id, id);
	assert_string_equal(found.items[0].name, drv->key_name);
	assert_non_null(found.items[0].fingerprint);
	if (drv->sha256_fingerprint) {
		assert_int_equal(gc_ssh_fingerprint(fpr, pub.data, NULL), 0);
		assert_string_equal(found.items[0].fingerprint, fpr);
	}
	assert_int_equal(found.items[0].n_tags, 2);
	gc_resource_list_release(&found);

	/* importing our key again (a re-run, or a retry after a lost answer) adopts it */
	kr.name = drv->key_name;
	kr.public_key_line = pub.data;
	kr.tags = base_tags;
	kr.n_tags = 2;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &again, &err), 0);
	assert_string_equal(again, id);
	/* the same name with another key is not ours */
	kr.public_key_line = other.data;
	free(again);
	again = NULL;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &again, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.cloud_code, drv->key_duplicate_code);
	assert_null(again);
	/* a cloud that takes no Ed25519 key (gpucluster hands its own to cloud-init instead) */
	if (!ed25519) {
		public_line(&ed, "drv@test");
		kr.name = drv->ed_key_name;
		kr.public_key_line = ed.data;
		gc_error_init(&err);
		assert_int_equal(gc_provider_import_keypair(prov, &kr, &again, &err), -1);
		assert_string_equal(err.cloud_code, drv->ed25519_code);
		assert_null(again);
	}

	assert_int_equal(gc_provider_delete_keypair(prov, id, &err), 0);
	assert_int_equal(gc_provider_delete_keypair(prov, id, &err), 0); /* gone: done */
	HOOK0(keypairs_wire);
	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_KEYPAIR, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 0);
	gc_resource_list_release(&found);
	free(id);
	free(foreign);
	gc_buf_release(&pub);
	gc_buf_release(&other);
	gc_buf_release(&ed);
}

static void test_secgroups(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	const char *cidrs[] = { "203.0.113.7/32", "198.51.100.0/24" };
	static char k_owner[] = "owner", v_owner[] = "someone";
	struct gc_tag foreign_tags[] = { { k_owner, v_owner } };
	struct gc_secgroup_request sr;
	struct gc_resource_list found;
	struct gc_error err;
	char *id = NULL, *foreign = NULL;

	(void)state;
	gc_error_init(&err);
	gc_resource_list_init(&found);
	memset(&sr, 0, sizeof(sr));
	sr.name = "gpucluster-drv";
	sr.description = "gpucluster drv ssh";
	sr.ssh_port = 2222;
	sr.allow_from = cidrs;
	sr.n_allow_from = 2;
	sr.tags = base_tags;
	sr.n_tags = 2;
	sr.allow_members = true;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &id, &err), 0);
	assert_true(gc_starts_with(id, "sg-"));
	sim_world_lock(sim.world);
	{
		struct sim_secgroup *g = sim_world_sg(sim.world, drv->frontend, drv->region, id);
		assert_non_null(g);
		assert_string_equal(g->rules[0].protocol, "tcp");
		assert_int_equal(g->rules[0].from_port, 2222);
		assert_int_equal(g->rules[1].to_port, 2222);
		assert_string_equal(g->rules[1].cidr, "198.51.100.0/24");
		assert_string_equal(sim_tags_get(&g->tags, GC_TAG_CLUSTER), CLUSTER);
		HOOK(secgroup_world, g, id);
	}
	sim_world_unlock(sim.world);
	HOOK(secgroup_wire, id);

	/* someone else's group with a name like ours is not listed */
	sr.name = drv->foreign_sg_name;
	sr.tags = foreign_tags;
	sr.n_tags = 1;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &foreign, &err), 0);
	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_SECGROUP, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 1);
	assert_string_equal(found.items[0].id, id);
	assert_string_equal(found.items[0].name, "gpucluster-drv");
	assert_null(found.items[0].fingerprint);
	gc_resource_list_release(&found);
	HOOK(secgroups_more, &sr, id);

	/* in use by a running instance, then going */
	secgroup_in_use(id, drv->sg_in_use_code);
	free(id);
	free(foreign);
}

/* ---- security group rules, reconciled on every apply (issue 19) ------------------------------ */

/* How many of g's rules are TCP on port from cidr, whatever their description. */
static size_t count_rules(const struct sim_secgroup *g, int port, const char *cidr)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n_rules; i++)
		n += !strcmp(g->rules[i].protocol, "tcp") && g->rules[i].from_port == port &&
			g->rules[i].to_port == port && !strcmp(g->rules[i].cidr, cidr);
	return n;
}

static size_t count_members(const struct sim_secgroup *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n_rules; i++)
		n += !strcmp(g->rules[i].source_group, g->id);
	return n;
}

static void add_world_rule(struct sim_secgroup *g, int port, const char *cidr, const char *desc)
{
	struct sim_rule r;

	memset(&r, 0, sizeof(r));
	snprintf(r.protocol, sizeof(r.protocol), "tcp");
	r.from_port = r.to_port = port;
	snprintf(r.cidr, sizeof(r.cidr), "%s", cidr);
	snprintf(r.description, sizeof(r.description), "%s", desc);
	assert_true(sim_world_add_rule(g, &r));
}

/*
 * Asserts g's rules are exactly SSH from ssh_cidr, the members' rule (not on Alibaba,
 * whose basic group needs none) and the n_foreign rules a user added by hand.
 */
static void assert_rules(const char *id, const char *ssh_cidr, size_t n_foreign)
{
	size_t members = strcmp(drv->name, "alibaba") != 0;
	struct sim_secgroup *g;

	sim_world_lock(sim.world);
	g = sim_world_sg(sim.world, drv->frontend, drv->region, id);
	assert_non_null(g);
	assert_int_equal(count_rules(g, 2222, ssh_cidr), 1);
	assert_int_equal(count_members(g), members);
	assert_int_equal(g->n_rules, 1 + members + n_foreign);
	sim_world_unlock(sim.world);
}

static void test_secgroup_rules(void **state)
{
	const char *first[] = { "203.0.113.7/32" }, *second[] = { "198.51.100.0/24" };
	struct gc_secgroup_request sr;
	struct gc_error err;
	char *id = NULL, *again = NULL;

	(void)state;
	gc_error_init(&err);
	memset(&sr, 0, sizeof(sr));
	sr.name = "gpucluster-drv-rules";
	sr.description = "gpucluster drv rules";
	sr.ssh_port = 2222;
	sr.allow_from = first;
	sr.n_allow_from = 1;
	sr.tags = base_tags;
	sr.n_tags = 2;
	sr.allow_members = true;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &id, &err), 0);
	assert_rules(id, first[0], 0);

	/* a kill between the group's creation and its rules: the next apply adds them */
	sim_world_lock(sim.world);
	sim_world_sg(sim.world, drv->frontend, drv->region, id)->n_rules = 0;
	sim_world_unlock(sim.world);
	sr.id = id;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), 0);
	assert_string_equal(again, id);
	free(again);
	assert_rules(id, first[0], 0);

	/* rules a user added by hand stay, even one on our port; ours that the spec no
	 * longer wants go */
	sim_world_lock(sim.world);
	{
		struct sim_secgroup *g = sim_world_sg(sim.world, drv->frontend, drv->region, id);

		add_world_rule(g, 80, "192.0.2.0/24", "web, by hand");
		add_world_rule(g, 2222, "10.9.0.0/16", "");
	}
	sim_world_unlock(sim.world);
	sr.allow_from = second;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), 0);
	free(again);
	assert_rules(id, second[0], 2);
	sim_world_lock(sim.world);
	{
		struct sim_secgroup *g = sim_world_sg(sim.world, drv->frontend, drv->region, id);

		assert_int_equal(count_rules(g, 2222, first[0]), 0);
		assert_int_equal(count_rules(g, 80, "192.0.2.0/24"), 1);
		assert_int_equal(count_rules(g, 2222, "10.9.0.0/16"), 1);
	}
	sim_world_unlock(sim.world);

	/* nothing to change: the same rules again */
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), 0);
	free(again);
	assert_rules(id, second[0], 2);

	/* a wanted rule that a user made by hand (no marker) is not made twice */
	sr.allow_from = first;
	sim_world_lock(sim.world);
	add_world_rule(sim_world_sg(sim.world, drv->frontend, drv->region, id), 2222, first[0],
		       "mine");
	sim_world_unlock(sim.world);
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), 0);
	free(again);
	assert_rules(id, first[0], 2);

	/* a revoke that fails fails the call, naming the group; the next call finishes */
	sr.allow_from = second;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), 0);
	free(again);
	again = NULL;
	sr.allow_from = first;
	add_fault(!strcmp(drv->name, "aws") ? "RevokeSecurityGroupIngress:quota,times=1"
			  : !strcmp(drv->name, "alibaba")
			  ? "RevokeSecurityGroup:quota,times=1"
			  : "DeleteSecurityGroupPolicies:quota,times=1");
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), -1);
	assert_null(again);
	assert_non_null(strstr(err.message,
			       "cannot update the rules of security group 'gpucluster-drv-rules'"));
	sim_faults_clear(sim.faults);
	gc_error_init(&err);
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), 0);
	free(again);
	assert_rules(id, first[0], 2);

	assert_int_equal(gc_provider_delete_secgroup(prov, id, &err), 0);
	free(id);
}

/* ---- catalogue ------------------------------------------------------------------------------- */

static void test_images(void **state)
{
	struct gc_error err;
	char *id = NULL;
	unsigned long calls;

	(void)state;
	gc_error_init(&err);
	for (const struct drv_image *im = drv->images; im->image; im++)
		expect_image(im->image, im->is_alias, im->want);
	HOOK0(images_wire);

	/* cached: neither an alias nor a literal id (or one seen on the way) asks again */
	calls = prov->stats.calls;
	expect_image(drv->images[0].image, true, drv->images[0].want);
	for (const char *const *lit = drv->literal_images; *lit; lit++)
		expect_image(*lit, false, *lit);
	assert_int_equal(prov->stats.calls, calls);

	assert_int_equal(gc_provider_resolve_image(prov, "centos-7", true, &id, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "unknown image alias 'centos-7'"));
	for (const struct drv_image *im = drv->bad_images; im->image; im++) {
		gc_error_init(&err);
		assert_int_equal(
			gc_provider_resolve_image(prov, im->image, im->is_alias, &id, &err), -1);
		assert_int_equal(err.code, im->code);
		if (im->message && im->whole_message)
			assert_string_equal(err.message, im->message);
		else if (im->message)
			assert_non_null(strstr(err.message, im->message));
		if (im->cloud_code)
			assert_string_equal(err.cloud_code, im->cloud_code);
	}
	assert_null(id);
}

static void test_types_and_prices(void **state)
{
	struct gc_type_facts f;
	struct gc_error err;
	double usd = 0;
	char cur[GC_CURRENCY_SIZE] = "";
	unsigned long calls;
	char want[160];

	(void)state;
	gc_error_init(&err);
	for (const struct drv_type *t = drv->types; t->name; t++) {
		assert_int_equal(gc_provider_instance_type(prov, t->name, &f, &err), 0);
		assert_string_equal(f.name, t->name);
		if (t->vcpus >= 0)
			assert_int_equal(f.vcpus, t->vcpus);
		if (t->memory_mib >= 0)
			assert_int_equal(f.memory_mib, t->memory_mib);
		if (t->gpus >= 0)
			assert_int_equal(f.gpus, t->gpus);
		if (t->gpu_model)
			assert_string_equal(f.gpu_model, t->gpu_model);
		if (t->gpu_memory_mib >= 0)
			assert_int_equal(f.gpu_memory_mib, t->gpu_memory_mib);
	}
	assert_int_equal(gc_provider_instance_type(prov, drv->unknown_type, &f, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	snprintf(want, sizeof(want), "instance type '%s' is not offered in %s", drv->unknown_type,
		 drv->region);
	assert_non_null(strstr(err.message, want));

	HOOK0(prices);

	/* all of it cached */
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_instance_type(prov, drv->type, &f, &err), 0);
	assert_int_equal(gc_provider_price(prov, drv->type, NULL, false, &usd, cur, &err), 0);
	assert_int_equal(gc_provider_price(prov, drv->type, drv->price_zone, true, &usd, cur, &err),
			 0);
	assert_int_equal(prov->stats.calls, calls);

	assert_int_equal(gc_provider_price(prov, drv->unknown_type, NULL, false, &usd, cur, &err),
			 -1);
	assert_int_equal(err.code, GC_ENOTFOUND);

	/* reserved (a reservation or a subscription, docs/internals/gpus.md): per hour, in the
	 * on-demand price's currency, 3 years cheaper than 1, both cheaper than on demand */
	if (prov->ops->reserved_price) {
		double rs[2] = { -1, -1 };
		char rcur[GC_CURRENCY_SIZE] = "";

		assert_int_equal(gc_provider_price(prov, drv->type, NULL, false, &usd, cur, &err),
				 0);
		assert_int_equal(gc_provider_reserved_price(prov, drv->type, rs, rcur, &err), 0);
		assert_string_equal(rcur, cur);
		assert_true(rs[1] > 0 && rs[1] < rs[0] && rs[0] < usd);
	}
}

static void test_zones_regions_console(void **state)
{
	struct gc_create_request r = launch_req(1, "gc-console");
	struct gc_instance_list got;
	struct gc_error err;
	char **zones = NULL, *text = NULL;
	size_t n = 0;
	unsigned long calls;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	assert_int_equal(gc_provider_zones(prov, &zones, &n, &err), 0);
	assert_int_equal(n, drv->n_zones);
	assert_string_equal(zones[0], drv->first_zone);
	assert_string_equal(zones[n - 1], drv->last_zone);
	gc_strv_free(zones, n);
	if (drv->zones_cached) { /* asked once per driver */
		calls = prov->stats.calls;
		assert_int_equal(gc_provider_zones(prov, &zones, &n, &err), 0);
		gc_strv_free(zones, n);
		assert_int_equal(prov->stats.calls, calls);
	}
	if (drv->n_regions) {
		assert_int_equal(gc_provider_regions(prov, &zones, &n, &err), 0);
		assert_int_equal(n, drv->n_regions);
		assert_string_equal(zones[0], drv->first_region);
		if (drv->last_region)
			assert_string_equal(zones[n - 1], drv->last_region);
		gc_strv_free(zones, n);
	}

	/* what plan can count on before money is spent */
	assert_int_equal(gc_provider_check_caps(prov,
						GC_CAP_SPOT | GC_CAP_SPOT_MAX_PRICE |
							GC_CAP_CLOUD_TTL | GC_CAP_CLIENT_TOKEN |
							GC_CAP_PRICE,
						&err),
			 0);
	if (!drv->console) {
		/* no console output: the capability is absent and plan can refuse it */
		assert_int_equal(gc_provider_check_caps(prov, GC_CAP_CONSOLE_OUTPUT, &err), -1);
		assert_int_equal(err.code, GC_EUNSUPPORTED);
		gc_instance_list_release(&got);
		return;
	}
	assert_int_equal(gc_provider_check_caps(prov, GC_CAP_CONSOLE_OUTPUT, &err), 0);
	launch_ok(&r, &got);
	if (drv->console_empty_before_boot) { /* nothing printed before the node boots */
		assert_int_equal(gc_provider_console_output(prov, got.items[0].id, &text, &err), 0);
		assert_string_equal(text, "");
		free(text);
	}
	advance_ms(2000);
	assert_int_equal(gc_provider_console_output(prov, got.items[0].id, &text, &err), 0);
	assert_non_null(strstr(text, "-----BEGIN SSH HOST KEY KEYS-----\nssh-ed25519 "));
	assert_non_null(strstr(text, "-----END SSH HOST KEY KEYS-----"));
	free(text);
	text = NULL;
	assert_int_equal(gc_provider_console_output(prov, drv->unknown_id, &text, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	if (drv->console_missing_code)
		assert_string_equal(err.cloud_code, drv->console_missing_code);
	assert_null(text);
	gc_instance_list_release(&got);
}

/* ---- faults and errors -------------------------------------------------------------------- */

/* The zones, or the regions: what a 5xx and a drop are injected into. */
static int retried_call(char ***out, size_t *n, struct gc_error *err)
{
	return drv->retry_regions ? gc_provider_regions(prov, out, n, err)
				  : gc_provider_zones(prov, out, n, err);
}

static void test_faults(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_create_request r = launch_req(2, "gc-faults");
	struct gc_instance_list got;
	struct gc_error err;
	struct gc_provider_stats s0;
	char **names = NULL, rule[128], want[160];
	size_t n = 0;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	warm();
	launch_prep(&r);

	/* throttling: retried and counted */
	add_fault("DescribeInstances:throttle,times=2");
	s0 = prov->stats;
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(prov->stats.throttled - s0.throttled, 2);
	assert_int_equal(prov->stats.retries - s0.retries, 2);
	assert_int_equal(prov->stats.calls - s0.calls, 3);
	gc_instance_list_release(&got);

	/* capacity: no retry, the engine falls back */
	snprintf(rule, sizeof(rule), "RunInstances:capacity,zone=%s", drv->capacity_zone);
	add_fault(rule);
	s0 = prov->stats;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_ECAPACITY);
	assert_string_equal(err.cloud_code, drv->capacity_code);
	assert_int_equal(err.http_status, drv->capacity_status);
	assert_int_equal(strlen(err.request_id), 36);
	snprintf(want, sizeof(want), "cannot launch 2 '%s' instances in '%s'", drv->type,
		 drv->capacity_where);
	assert_non_null(strstr(err.message, want));
	assert_int_equal(prov->stats.calls - s0.calls, 1);
	r.zone = drv->fallback_zone;
	launch_ok(&r, &got);

	/* quota: no retry */
	sim_faults_clear(sim.faults);
	add_fault("RunInstances:quota,times=1");
	r.client_token = "gc-faults-2";
	s0 = prov->stats;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_EQUOTA);
	assert_string_equal(err.cloud_code, drv->quota_code);
	assert_int_equal(prov->stats.calls - s0.calls, 1);

	/* quotas per market: the spot one is told apart (the engine falls back to on-demand
	 * on it), and each is named with what to ask for */
	add_fault("RunInstances:quota,market=on-demand,times=1");
	add_fault("RunInstances:quota,market=spot,times=1");
	r.client_token = "gc-faults-q1";
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_EQUOTA);
	assert_non_null(strstr(err.message, "quota"));
	assert_non_null(strstr(err.message, "ask for more"));
	assert_null(strstr(err.message, "spot"));
	r.spot = true;
	r.client_token = "gc-faults-q2";
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_ESPOTQUOTA);
	assert_non_null(strstr(err.message, "spot"));
	assert_non_null(strstr(err.message, "ask for more"));
	r.spot = false;

	/* an InternalError and a dropped connection: retried */
	snprintf(rule, sizeof(rule), "%s:5xx,times=1", drv->retry_action);
	add_fault(rule);
	snprintf(rule, sizeof(rule), "%s:drop,times=1", drv->retry_action);
	add_fault(rule);
	s0 = prov->stats;
	assert_int_equal(retried_call(&names, &n, &err), 0);
	assert_int_equal(n, drv->retry_regions ? drv->n_regions : drv->n_zones);
	gc_strv_free(names, n);
	assert_true(prov->stats.retries - s0.retries >= 1);
	assert_int_equal(prov->stats.throttled - s0.throttled, 0);
	/* the server saw three calls: the error, the drop, the answer. libcurl itself resends
	 * a request whose reused connection died before any answer, so the drop may never
	 * reach the driver as an error: only the error is certain to be a retry of ours. On a
	 * cloud with nonces, libcurl's resend is refused as a nonce seen before and signed
	 * again: one more call. */
	{
		json_t *lines = logged(drv->retry_action);
		size_t k = json_array_size(lines), j = k;

		assert_true(k >= 3);
		for (size_t i = 0; i + 1 < k; i++) {
			const char *code = json_string_value(
				json_object_get(json_array_get(lines, i), "error_code"));

			if (code && !strcmp(code, "InternalError"))
				j = i;
		}
		assert_true(j + 3 <= k);
		assert_true(k - (j + 3) <= (drv->nonce_resend ? 1u : 0u));
		assert_int_equal(
			json_integer_value(json_object_get(json_array_get(lines, j), "status")),
			drv->internal_status);
		assert_int_equal(
			json_integer_value(json_object_get(json_array_get(lines, j + 1), "status")),
			0);
		for (size_t i = j + 2; i + 1 < k; i++)
			assert_string_equal(json_string_value(json_object_get(
						    json_array_get(lines, i), "error_code")),
					    "SignatureNonceUsed");
		assert_int_equal(
			json_integer_value(json_object_get(json_array_get(lines, k - 1), "status")),
			200);
		assert_true(
			json_is_null(json_object_get(json_array_get(lines, k - 1), "error_code")));
		json_decref(lines);
	}

	/* an InternalError that does not stop: given up after the policy's attempts */
	snprintf(rule, sizeof(rule), "%s:5xx", drv->retry_action);
	add_fault(rule);
	s0 = prov->stats;
	names = NULL;
	assert_int_equal(retried_call(&names, &n, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_non_null(strstr(err.message, "gave up after 5 attempts"));
	assert_int_equal(prov->stats.calls - s0.calls, 5);
	assert_null(names);
	sim_faults_clear(sim.faults);

	HOOK(faults_more, &r, &got);
	gc_instance_list_release(&got);
}

static void test_auth(void **state)
{
	struct gc_provider *bad = NULL;
	struct gc_error err;
	char **zones = NULL;
	size_t n = 0;

	(void)state;
	gc_error_init(&err);
	envv.secret = drv->bad_secret;
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), 0);
	assert_int_equal(gc_provider_zones(bad, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, drv->bad_secret_code);
	if (drv->bad_secret_status)
		assert_int_equal(err.http_status, drv->bad_secret_status);
	assert_int_equal(bad->stats.calls, 1);
	HOOK(auth_bad, bad, 0);
	gc_provider_close(bad);

	envv.key_id = drv->bad_key_id;
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), 0);
	assert_int_equal(gc_provider_zones(bad, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, drv->bad_key_code);
	HOOK(auth_bad, bad, 1);
	gc_provider_close(bad);

	/* no credentials at all: open fails and says where it looked */
	envv.key_id = NULL;
	envv.secret = NULL;
	bad = NULL;
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	for (const char *const *name = drv->no_creds_names; *name; name++)
		assert_non_null(strstr(err.message, *name));
	assert_null(bad);
	envv.key_id = drv->key_id;
	envv.secret = drv->secret;
	HOOK0(auth_more);
}

/* The caller's cancel reaches a wait on our own buckets: the RunInstances request bucket
 * holds run_burst launches. */
static void test_cancel_in_rate_wait(void **state)
{
	(void)state;
	launch_burst_then_cancel(drv->run_burst);
}

/* ---- listings that never end (issue 19) ------------------------------------------------- */

/*
 * One discover under `hostile,mode=MODE`: with want, it fails (GC_EBADRESPONSE) saying want,
 * hands out nothing, and stops within a few pages; without, it lists want_n. Either way
 * in bounded time, whatever the emulator would go on answering.
 */
static void hostile_discover(const char *mode, const char *want, size_t want_n)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_instance_list got;
	struct gc_error err;
	unsigned long calls = prov->stats.calls;
	time_t t0 = time(NULL);
	char rule[96];
	int rc;

	snprintf(rule, sizeof(rule), "DescribeInstances:hostile,mode=%s", mode);
	sim_faults_clear(sim.faults);
	add_fault(rule);
	gc_instance_list_init(&got);
	gc_error_init(&err);
	rc = gc_provider_discover(prov, &q, &got, &err);
	if (want) {
		if (rc != -1 || !strstr(err.message, want))
			fail_msg("%s: discover returned %d (%zu instances): '%s', expected '%s'",
				 mode, rc, got.n, err.message, want);
		assert_int_equal(err.code, GC_EBADRESPONSE);
		assert_int_equal(got.n, 0);
	} else {
		if (rc != 0)
			fail_msg("%s: %s", mode, err.message);
		assert_int_equal(got.n, want_n);
	}
	/* the longest: the empty pages allowed, and the one past them */
	assert_true(prov->stats.calls - calls <= GC_DRIVER_EMPTY_PAGES + 1);
	assert_true(time(NULL) - t0 < 10);
	gc_instance_list_release(&got);
	sim_faults_clear(sim.faults);
}

static void test_hostile_pages(void **state)
{
	static const char total[] = "DescribeInstances: a TotalCount of 1000000000 on page 1, "
				    "more than this cluster can have (64000)";
	struct gc_create_request r = launch_req(3, "gc-hostile");
	struct gc_instance_list got;
	char twice[96];
	bool offset = drv->pages_by_offset;

	(void)state;
	gc_instance_list_init(&got);
	launch_ok(&r, &got);
	snprintf(twice, sizeof(twice), "DescribeInstances: instance '%s' is listed twice",
		 got.items[0].id);
	/* a listing that starts over on every page: its first instance comes back */
	hostile_discover("endless-token", offset ? total : twice, 0);
	hostile_discover("repeat-token",
			 offset ? total
				: "DescribeInstances: the NextToken of page 1 came back on "
				  "page 2",
			 0);
	hostile_discover("empty-page-token",
			 offset ? total
				: "DescribeInstances: page 4 is empty but carries a "
				  "NextToken",
			 0);
	/* EC2 has no total: a fresh token; ECS's token listing does not read the total */
	if (!strcmp(drv->name, "alibaba"))
		hostile_discover("huge-total", NULL, 3);
	else
		hostile_discover("huge-total", offset ? total : twice, 0);
	/* the first instance twice in one page: refused by gc_driver_discover, or on
	 * Tencent (whose listing pages by offset) by the driver's own check of each page */
	snprintf(twice, sizeof(twice), "'%s' is listed twice", got.items[0].id);
	hostile_discover("duplicate-ids", twice, 0);
	/* and a healthy listing again */
	hostile_discover("slow-body", NULL, 3);
	gc_instance_list_release(&got);
}

/* ---- a server that answers what no cloud should ------------------------------------------ */

static void test_bad_answers(void **state)
{
	static const char garbage_body[] = "<<<{{{ neither xml nor json & never was";
	static const struct scripted garbage[] = { { 200, garbage_body, NULL } };
	static const struct scripted garbage500[] = { { 500, garbage_body, NULL } };
	static const struct scripted huge[] = { { 200, NULL, NULL } };
	struct MHD_Daemon *d;
	struct gc_provider *p = NULL;
	struct gc_error err;
	char **zones = NULL;
	size_t n = 0;

	(void)state;
	d = scripted_start(&p);
	gc_error_init(&err);

	run_script(p, garbage, 1); /* a proxy's page, perhaps: tried three times in all */
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_non_null(strstr(err.message, drv->zones_action));
	assert_int_equal(p->stats.calls, GC_RETRY_BADRESPONSE_MAX_ATTEMPTS);

	run_script(p, garbage500, 1); /* unreadable, but a 500: a gateway's, transient */
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_int_equal(err.http_status, 500);
	assert_int_equal(p->stats.calls, 5);

	run_script(p, huge, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_ETOOBIG);
	assert_int_equal(p->stats.calls, 1);
	assert_null(zones);

	scripted_stop(d, p);
}

/* ---- placement resources, for placement: cluster (docs/internals/fabric.md) -------------- */

/* Made tagged, found by the cluster's tag (not someone else's), deleted, and a second
 * deletion of one already gone is no error: EC2 placement groups, ECS deployment sets
 * (whose tags live in their description), CVM HPC clusters. */
static void test_placements(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } },
			     any[] = { { GC_TAG_CLUSTER, NULL } };
	static char k_owner[] = "owner", v_owner[] = "someone";
	struct gc_tag foreign_tags[] = { { k_owner, v_owner } };
	struct gc_placement_request pr = { "gpucluster-drv-workers", drv->launch_zone, base_tags,
					   sizeof(base_tags) / sizeof(base_tags[0]), NULL };
	struct gc_placement_request other = { "someones-group", drv->launch_zone, foreign_tags, 1,
					      NULL };
	struct gc_resource_list found;
	struct gc_error err;
	char *id = NULL, *foreign = NULL;

	(void)state;
	gc_error_init(&err);
	gc_resource_list_init(&found);
	if (!strcmp(drv->name, "tencent")) { /* an HPC cluster takes HCC types only */
		pr.type = drv->type;
		assert_int_equal(gc_provider_create_placement(prov, &pr, &id, &err), -1);
		assert_int_equal(err.code, GC_EUNSUPPORTED);
		assert_null(id);
		pr.type = NULL;
		gc_error_init(&err);
	}
	assert_int_equal(gc_provider_create_placement(prov, &pr, &id, &err), 0);
	assert_int_equal(gc_provider_create_placement(prov, &other, &foreign, &err), 0);
	sim_world_lock(sim.world);
	assert_non_null(sim_world_placement(sim.world, drv->frontend, drv->region, id));
	sim_world_unlock(sim.world);
	for (int pass = 0; pass < 2; pass++) { /* the engine's look-up, then gc's */
		assert_int_equal(gc_provider_list_resources(prov, GC_RESOURCE_PLACEMENT,
							    pass ? any : mine, 1, &found, &err),
				 0);
		assert_int_equal(found.n, 1);
		assert_string_equal(found.items[0].id, id);
		assert_string_equal(found.items[0].name, "gpucluster-drv-workers");
		gc_resource_list_release(&found);
		gc_resource_list_init(&found);
	}
	assert_int_equal(gc_provider_delete_placement(prov, id, &err), 0);
	assert_int_equal(gc_provider_delete_placement(prov, id, &err), 0);
	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_PLACEMENT, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 0);
	assert_int_equal(gc_provider_delete_placement(prov, foreign, &err), 0);
	gc_resource_list_release(&found);
	free(id);
	free(foreign);
}

#define CASE(fn) cmocka_unit_test_setup_teardown(fn, test_setup, test_teardown)

int main(int argc, char **argv)
{
	const struct CMUnitTest all[] = {
		CASE(test_discover_pages),
		CASE(test_client_token),
		CASE(test_lost_answer),
		CASE(test_terminate_gone),
		CASE(test_set_expiry), /* issue 18 */
		CASE(test_set_tag),    /* issue 14: lifecycle.idle changed */
		CASE(test_keypairs),
		CASE(test_secgroups),
		CASE(test_secgroup_rules), /* issue 19 */
		CASE(test_images),
		CASE(test_types_and_prices),
		CASE(test_zones_regions_console),
		CASE(test_faults),
		CASE(test_auth),
		CASE(test_bad_answers),
		CASE(test_hostile_pages),
		CASE(test_cancel_in_rate_wait),
		CASE(test_reclaim_reason), /* issue 14 */
		CASE(test_placements),	   /* issue 13 */
	};
	struct CMUnitTest tests[sizeof(all) / sizeof(all[0])];
	size_t n = 0;
	char group[64];

	for (size_t i = 0; argc == 2 && i < sizeof(clouds) / sizeof(clouds[0]); i++)
		if (!strcmp(argv[1], clouds[i]->name))
			cloud = clouds[i];
	if (!cloud) {
		fprintf(stderr, "usage: driver-conformance aws|alibaba|tencent\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i].test_func != test_cancel_in_rate_wait || cloud->run_burst)
			tests[n++] = all[i];
	snprintf(group, sizeof(group), "sim.driver.%s", cloud->name);
	return _cmocka_run_group_tests(group, tests, n, NULL, NULL);
}
