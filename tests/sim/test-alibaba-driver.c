/*
 * test-alibaba-driver.c: the Alibaba Cloud ECS driver (providers/alibaba) through the
 * provider wrappers, against the emulator served in-process on 127.0.0.1 (its ECS, VPC
 * and STS frontends behind libmicrohttpd, a world on the fake clock), and against a small
 * scripted server for answers the emulator does not give: retry hints, clock and nonce
 * complaints, garbage and oversized bodies.
 *
 * Covered: discover with tag filters over pages (1200 instances, twelve pages of 100
 * seen in the request log), launches tagged at creation in the default VPC's vSwitch of
 * the zone, spot with and without a bid, the AutoReleaseTime the emulator honours and the
 * 30-minute minimum, client-token replay and mismatch, a lost answer retried without a
 * duplicate, terminate with ids already gone, key pairs and security groups found by tag,
 * image aliases, type facts, prices (and the currency warning), zones, regions, console
 * output, credentials from a RamRoleArn profile through STS and their renewal, our token
 * buckets and a cancel while waiting on them, and the error taxonomy under injected
 * faults. Every test ends by checking that the emulator refused none of the driver's
 * requests as malformed: the real API would not have taken them either.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/alloc.h"
#include "core/keygen.h"
#include "core/provider.h"
#include "core/str.h"
#include "driver-fixture.h"
#include "ssh-test-keys.h"
#include "providers/alibaba/ecs.h"
#include "sim/catalog.h"
#include "sim/sim.h"

#define AKID	"LTAIgpuclustersim001"
#define SECRET	"gpucluster-sim-alibaba-secret-000000"
#define REGION	"cn-hangzhou"
#define UBUNTU	"ubuntu_22_04_x64_20G_alibase_20261015.vhd"
#define NOBLE	"ubuntu_24_04_x64_20G_alibase_20261015.vhd"
#define GPU_IMG "m-bp1gpu2204cuda128drv570"
#define TYPE	"ecs.gn7i-c8g1.2xlarge"
#define VSW(z)	"vsw-gpuclustersim-" z

/* The console a node would print: the host keys block. */
static void ali_console(struct sim_instance *inst)
{
	snprintf(inst->console, sizeof(inst->console),
		 "-----BEGIN SSH HOST KEY KEYS-----\n%s root@iZ%sZ\n"
		 "-----END SSH HOST KEY KEYS-----\n",
		 inst->host_key_line, inst->id + 2);
}

/* A VPC security group of the emulator's, as the engine would make one. */
static char *make_sg(const char *name, struct gc_tag *tags, size_t n_tags)
{
	const char *cidrs[] = { "203.0.113.7/32" };
	struct gc_secgroup_request sr;
	struct gc_error err;
	char *id = NULL;

	memset(&sr, 0, sizeof(sr));
	sr.name = name;
	sr.description = "gpucluster drv";
	sr.ssh_port = 22;
	sr.allow_from = cidrs;
	sr.n_allow_from = 1;
	sr.tags = tags;
	sr.n_tags = n_tags;
	gc_error_init(&err);
	if (gc_provider_create_secgroup(prov, &sr, &id, &err) != 0)
		fail_msg("create_secgroup: %s", err.message);
	return id;
}

/* RunInstances needs a security group: one of the cluster's, made once per test
 * (test_sg, freed by the teardown) */
static char *test_sg;

static void sg_for_launch(struct gc_create_request *r)
{
	if (!r->security_group_id) {
		if (!test_sg)
			test_sg = make_sg("gpucluster-drv", base_tags, 1);
		r->security_group_id = test_sg;
	}
}

static const char *param(json_t *line, const char *name)
{
	return json_string_value(json_object_get(json_object_get(line, "params"), name));
}

/* The codes the emulator answers a request the real API would refuse as malformed. */
static void requests_valid(void)
{
	static const char *const bad[] = { "InvalidParameter",
					   "MissingParameter",
					   "InvalidAction",
					   "InvalidVersion",
					   "IncompleteSignature",
					   "InvalidTagCount",
					   NULL };
	json_t *lines, *l;
	size_t i;

	if (access(logpath, R_OK) != 0)
		return;
	lines = logged(NULL);
	json_array_foreach(lines, i, l)
	{
		const char *code = json_string_value(json_object_get(l, "error_code"));

		for (const char *const *b = bad; code && *b; b++)
			if (gc_starts_with(code, *b))
				fail_msg("the emulator refused %s: %s",
					 json_string_value(json_object_get(l, "action")), code);
	}
	json_decref(lines);
}

static void after_test(void)
{
	free(test_sg);
	test_sg = NULL;
	requests_valid();
}

static const struct drv_cloud alibaba = {
	.cloud = "alibaba",
	.frontend = SIM_ALIBABA,
	.region = REGION,
	.tmp_template = "/tmp/gc-test-alidrv.XXXXXX",
	.key_id_var = "ALIBABA_CLOUD_ACCESS_KEY_ID",
	.secret_var = "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
	.metadata_off_var = "ALIBABA_CLOUD_ECS_METADATA_DISABLED",
	.key_id = AKID,
	.secret = SECRET,
	.file_vars = { "ALIBABA_CLOUD_CONFIG_FILE", NULL },
	.file_name = "config.json",
	.type = TYPE,
	.image = UBUNTU,
	.zone = "cn-hangzhou-i",
	.console = ali_console,
	.before_launch = sg_for_launch,
	.after = after_test,
};

static int test_setup(void **state)
{
	return drv_setup(state, &alibaba);
}

/* ---- discover -------------------------------------------------------------------------- */

static void test_discover_pages(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_tag_filter by_key[] = { { "team", NULL } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_instance_list got;
	struct gc_error err;
	unsigned long calls;
	json_t *pages;

	(void)state;
	launch_pages();
	gc_instance_list_init(&got);

	calls = prov->stats.calls;
	gc_error_init(&err);
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(got.n, 1200);
	assert_int_equal(prov->stats.calls - calls, 1200 / ALI_PAGE_SIZE);
	for (size_t i = 0; i < got.n; i++) {
		assert_string_equal(got.items[i].cluster, CLUSTER);
		assert_string_equal(got.items[i].group, "workers");
		assert_string_equal(got.items[i].spec_hash, "h4sh");
		assert_string_equal(got.items[i].type, TYPE);
		assert_string_equal(got.items[i].image, UBUNTU);
		assert_string_equal(got.items[i].zone, "cn-hangzhou-i");
		assert_true(got.items[i].state == GC_STATE_PENDING ||
			    got.items[i].state == GC_STATE_RUNNING);
		assert_true(gc_starts_with(got.items[i].client_token, "gc-page-"));
		assert_true(got.items[i].launch_time > 0);
		assert_non_null(got.items[i].private_ip);
		assert_false(got.items[i].spot);
	}
	gc_instance_list_release(&got);

	pages = logged("DescribeInstances");
	assert_int_equal(json_array_size(pages), 1200 / ALI_PAGE_SIZE);
	assert_string_equal(param(json_array_get(pages, 0), "MaxResults"), "100");
	assert_string_equal(param(json_array_get(pages, 0), "RegionId"), REGION);
	assert_null(param(json_array_get(pages, 0), "NextToken"));
	assert_non_null(param(json_array_get(pages, 1), "NextToken"));
	assert_string_equal(param(json_array_get(pages, 0), "Tag.1.Key"), GC_TAG_CLUSTER);
	assert_string_equal(param(json_array_get(pages, 0), "Tag.1.Value"), CLUSTER);
	assert_string_equal(json_string_value(json_object_get(json_array_get(pages, 0), "version")),
			    "2014-05-26");
	json_decref(pages);

	/* a key-only filter: the 1200 carry "team", the other three do not */
	q.tags = by_key;
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(got.n, 1200);
	gc_instance_list_release(&got);
	pages = logged("DescribeInstances");
	assert_string_equal(param(json_array_get(pages, 12), "Tag.1.Key"), "team");
	assert_null(param(json_array_get(pages, 12), "Tag.1.Value"));
	json_decref(pages);
	assert_int_equal(prov->stats.throttled, 0);

	/* the network was looked up once for all twelve launches */
	pages = logged("DescribeVpcs");
	assert_int_equal(json_array_size(pages), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(pages, 0), "version")),
			    "2016-04-28");
	assert_string_equal(param(json_array_get(pages, 0), "IsDefault"), "true");
	json_decref(pages);
	pages = logged("DescribeVSwitches");
	assert_int_equal(json_array_size(pages), 1);
	assert_string_equal(param(json_array_get(pages, 0), "VpcId"), "vpc-gpuclustersim");
	assert_string_equal(param(json_array_get(pages, 0), "ZoneId"), "cn-hangzhou-i");
	json_decref(pages);
}

static void test_discover_states(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_create_request r = launch_req(3, "gc-states");
	struct gc_instance_list got, now;
	const char *ids[1];
	struct gc_error err;

	(void)state;
	gc_instance_list_init(&got);
	gc_instance_list_init(&now);
	gc_error_init(&err);
	launch_ok(&r, &got);
	advance_ms(2000);
	ids[0] = got.items[0].id;
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);

	/* being released: shown as Stopping, then gone */
	assert_int_equal(gc_provider_discover(prov, &q, &now, &err), 0);
	assert_int_equal(now.n, 3);
	for (size_t i = 0; i < now.n; i++) {
		if (!strcmp(now.items[i].id, ids[0])) {
			assert_int_equal(now.items[i].state, GC_STATE_STOPPING);
			assert_string_equal(now.items[i].state_name, "Stopping");
		} else {
			assert_int_equal(now.items[i].state, GC_STATE_RUNNING);
			assert_string_equal(now.items[i].state_name, "Running");
			assert_non_null(now.items[i].public_ip);
		}
	}
	gc_instance_list_release(&now);
	advance_ms(1500);
	q.include_terminated = true;
	assert_int_equal(gc_provider_discover(prov, &q, &now, &err), 0);
	assert_int_equal(now.n, 2);
	gc_instance_list_release(&now);
	gc_instance_list_release(&got);
}

/* ---- create ------------------------------------------------------------------------------ */

static void test_create_spot_ttl(void **state)
{
	struct gc_keypair_request kr;
	struct gc_create_request r = launch_req(2, "gc-spot-1");
	struct gc_instance_list got;
	struct gc_buf pub = GC_BUF_INIT(4096);
	struct gc_error err;
	char *key_id = NULL, *sg_id;
	int64_t expires = (int64_t)time(NULL) + 3600 + 17;
	char when[32];
	time_t floor_t = (time_t)(expires - expires % 60);
	struct tm tm;
	json_t *runs, *run;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	assert_int_equal(gc_buf_addstr(&pub, TEST_RSA_A " drv@test"), 0);
	memset(&kr, 0, sizeof(kr));
	kr.name = "gpucluster-drv";
	kr.public_key_line = pub.data;
	kr.tags = base_tags;
	kr.n_tags = 1;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &key_id, &err), 0);
	assert_string_equal(key_id, "gpucluster-drv");
	sg_id = make_sg("gpucluster-drv", base_tags, 1);

	r.zone = "cn-hangzhou-j";
	r.spot = true;
	r.spot_max_price = 9.87654;
	r.key_name = key_id;
	r.key_id = key_id;
	r.security_group_id = sg_id;
	r.expires_at = expires;
	launch_ok(&r, &got);
	assert_int_equal(got.n, 2);
	for (size_t i = 0; i < got.n; i++) {
		assert_true(got.items[i].spot);
		assert_int_equal(got.items[i].state, GC_STATE_PENDING);
		assert_string_equal(got.items[i].zone, "cn-hangzhou-j");
		assert_string_equal(got.items[i].client_token, "gc-spot-1");
		assert_string_equal(got.items[i].cluster, CLUSTER);
		assert_string_equal(gc_instance_tag(&got.items[i], "team"), "research");
	}

	/* what went on the wire */
	runs = logged("RunInstances");
	assert_int_equal(json_array_size(runs), 1);
	run = json_array_get(runs, 0);
	assert_string_equal(param(run, "RegionId"), REGION);
	assert_string_equal(param(run, "ZoneId"), "cn-hangzhou-j");
	assert_string_equal(param(run, "VSwitchId"), VSW("cn-hangzhou-j"));
	assert_string_equal(param(run, "Amount"), "2");
	assert_string_equal(param(run, "MinAmount"), "2");
	assert_string_equal(param(run, "ClientToken"), "gc-spot-1");
	assert_string_equal(param(run, "InstanceChargeType"), "PostPaid");
	assert_string_equal(param(run, "SpotStrategy"), "SpotWithPriceLimit");
	assert_string_equal(param(run, "SpotPriceLimit"), "9.876");
	assert_string_equal(param(run, "SpotInterruptionBehavior"), "Terminate");
	assert_string_equal(param(run, "SystemDisk.Category"), "cloud_essd");
	assert_string_equal(param(run, "SystemDisk.Size"), "200");
	assert_string_equal(param(run, "KeyPairName"), "gpucluster-drv");
	assert_string_equal(param(run, "SecurityGroupId"), sg_id);
	assert_string_equal(param(run, "InternetChargeType"), "PayByTraffic");
	assert_string_equal(param(run, "InternetMaxBandwidthOut"), "100");
	assert_string_equal(param(run, "InstanceName"), "gpucluster-drv-workers");
	assert_string_equal(param(run, "HostName"), "drv-workers");
	assert_string_equal(param(run, "UniqueSuffix"), "true");
	assert_string_equal(param(run, "Tag.1.Key"), GC_TAG_CLUSTER);
	assert_string_equal(param(run, "Tag.4.Value"), "research");
	assert_string_equal(param(run, "Tag.5.Key"), "gpucluster:client-token");
	assert_string_equal(param(run, "Tag.5.Value"), "gc-spot-1");
	gmtime_r(&floor_t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:00Z", &tm);
	assert_string_equal(param(run, "AutoReleaseTime"), when);
	json_decref(runs);

	/* what the emulator made of it: the timer, the disk, the spot bid, the names */
	sim_world_lock(sim.world);
	for (size_t i = 0; i < got.n; i++) {
		struct sim_instance *in =
			sim_world_instance(sim.world, SIM_ALIBABA, got.items[i].id);

		assert_non_null(in);
		assert_int_equal(in->release_at_wall, (int64_t)floor_t);
		assert_true(in->release_at_wall <= expires);
		assert_int_equal(in->disk_gb, 200);
		assert_true(in->spot);
		assert_string_equal(in->spot_max_price, "9.876");
		assert_string_equal(in->key_name, "gpucluster-drv");
		assert_string_equal(in->subnet, VSW("cn-hangzhou-j"));
		assert_true(gc_starts_with(in->name, "gpucluster-drv-workers0"));
	}
	sim_world_unlock(sim.world);

	/* the cloud releases them itself once the wall clock passes the time */
	advance_ms(2000);
	sim_world_lock(sim.world);
	sim.world->wall_offset_s = expires - (int64_t)time(NULL) + 5;
	sim_world_tick(sim.world);
	for (size_t i = 0; i < got.n; i++)
		assert_int_equal(sim_world_instance(sim.world, SIM_ALIBABA, got.items[i].id)->state,
				 SIM_SHUTTING_DOWN);
	sim.world->wall_offset_s = 0;
	sim_world_unlock(sim.world);

	/* spot at the market price */
	r.client_token = "gc-spot-2";
	r.spot_max_price = 0;
	r.expires_at = 0;
	launch_ok(&r, &got);
	runs = logged("RunInstances");
	run = json_array_get(runs, 1);
	assert_string_equal(param(run, "SpotStrategy"), "SpotAsPriceGo");
	assert_null(param(run, "SpotPriceLimit"));
	assert_null(param(run, "AutoReleaseTime"));
	json_decref(runs);

	/* a TTL too short for AutoReleaseTime's 30 minutes: refused before anything is sent */
	r.client_token = "gc-spot-3";
	r.expires_at = (int64_t)time(NULL) + 20 * 60;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "expires_at"));
	assert_non_null(strstr(err.message, "30 minutes"));
	runs = logged("RunInstances");
	assert_int_equal(json_array_size(runs), 2);
	json_decref(runs);

	/* a disk ECS cannot make, too many tags: refused here, named */
	r.expires_at = 0;
	r.disk_gb = 4096;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "2048"));
	assert_int_equal(got.n, 4);

	gc_instance_list_release(&got);
	free(key_id);
	free(sg_id);
	gc_buf_release(&pub);
}

static void test_any_zone(void **state)
{
	struct gc_create_request r = launch_req(1, "gc-any");
	struct gc_instance_list got;

	(void)state;
	gc_instance_list_init(&got);
	r.zone = NULL;
	launch_ok(&r, &got);
	/* the first default vSwitch the VPC lists: the region's first zone */
	assert_string_equal(got.items[0].zone, "cn-hangzhou-h");
	r.client_token = "gc-any-2";
	launch_ok(&r, &got);
	assert_string_equal(got.items[1].zone, "cn-hangzhou-h");
	{
		json_t *lines = logged("DescribeVSwitches");

		assert_int_equal(json_array_size(lines), 1);
		assert_null(param(json_array_get(lines, 0), "ZoneId"));
		json_decref(lines);
	}
	gc_instance_list_release(&got);
}

static void test_client_token(void **state)
{
	struct gc_create_request r = launch_req(2, "gc-token-1");
	struct gc_instance_list a, b;
	struct gc_error err;

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
	r.type = "ecs.gn6i-c4g1.xlarge";
	gc_error_init(&err);
	assert_int_equal(gc_provider_create(prov, &r, &b, &err), -1);
	assert_int_equal(err.code, GC_EIDEMPOTENCY);
	assert_string_equal(err.cloud_code, "IdempotentParameterMismatch");
	assert_int_equal(err.http_status, 400);
	assert_non_null(strstr(err.message, "cannot launch 2 'ecs.gn6i-c4g1.xlarge' instances"));
	assert_int_equal(b.n, 2);
	assert_int_equal(world_count(0, true), 2);
	gc_instance_list_release(&a);
	gc_instance_list_release(&b);
}

static void test_lost_answer(void **state)
{
	struct gc_create_request r = launch_req(3, "gc-lost-1");
	struct gc_instance_list got, warm;
	struct gc_error err;
	unsigned long calls;

	(void)state;
	gc_instance_list_init(&got);
	gc_instance_list_init(&warm);
	gc_error_init(&err);
	/* the network and the group first, so the call counts are the launches alone */
	{
		struct gc_create_request w = launch_req(1, "gc-lost-warm");
		launch_ok(&w, &warm);
		r.security_group_id = w.security_group_id;
	}
	calls = prov->stats.calls;
	/* the launch happens, the answer is a 500: the retry with the token gets the same */
	assert_int_equal(
		sim_faults_add(sim.faults, "alibaba:RunInstances:5xx,after=1,times=1", &err), 0);
	launch_ok(&r, &got);
	assert_int_equal(got.n, 3);
	assert_int_equal(world_count(0, true), 4);
	assert_int_equal(prov->stats.calls - calls, 2);

	/* without a token a repeat could launch twice: not retried */
	r.client_token = NULL;
	assert_int_equal(
		sim_faults_add(sim.faults, "alibaba:RunInstances:5xx,after=1,times=1", &err), 0);
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_string_equal(err.cloud_code, "InternalError");
	assert_int_equal(prov->stats.calls - calls, 1);
	assert_int_equal(world_count(0, true), 7);
	gc_instance_list_release(&got);
	gc_instance_list_release(&warm);
}

/* ---- terminate --------------------------------------------------------------------------- */

static void test_terminate_gone(void **state)
{
	struct gc_create_request r = launch_req(3, "gc-gone");
	struct gc_instance_list got;
	const char *ids[4];
	struct gc_error err;
	unsigned long calls;
	json_t *dels;

	(void)state;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	launch_ok(&r, &got);
	advance_ms(2000);
	ids[0] = got.items[0].id;
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	advance_ms(1500); /* released: ECS no longer lists it */
	sim_world_lock(sim.world);
	assert_null(sim_world_instance(sim.world, SIM_ALIBABA, ids[0]));
	sim_world_unlock(sim.world);

	ids[1] = got.items[1].id;
	ids[2] = "i-bp1neverexisted0000"; /* never existed */
	ids[3] = got.items[2].id;
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_terminate(prov, ids, 4, &err), 0);
	/* ECS names the first unknown id: each round drops it, until the rest goes */
	assert_int_equal(prov->stats.calls - calls, 3);
	sim_world_lock(sim.world);
	assert_int_equal(sim_world_instance(sim.world, SIM_ALIBABA, ids[1])->state,
			 SIM_SHUTTING_DOWN);
	assert_int_equal(sim_world_instance(sim.world, SIM_ALIBABA, ids[3])->state,
			 SIM_SHUTTING_DOWN);
	sim_world_unlock(sim.world);
	dels = logged("DeleteInstances");
	assert_int_equal(json_array_size(dels), 4);
	assert_string_equal(param(json_array_get(dels, 0), "Force"), "true");
	assert_string_equal(param(json_array_get(dels, 1), "InstanceId.4"), ids[3]);
	assert_string_equal(param(json_array_get(dels, 3), "InstanceId.1"), ids[1]);
	assert_string_equal(param(json_array_get(dels, 3), "InstanceId.2"), ids[3]);
	assert_null(param(json_array_get(dels, 3), "InstanceId.3"));
	json_decref(dels);

	/* only gone ones: done; releasing twice is fine too */
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	assert_int_equal(gc_provider_terminate(prov, &ids[2], 1, &err), 0);
	assert_int_equal(gc_provider_terminate(prov, &ids[1], 1, &err), 0);
	gc_instance_list_release(&got);
}

/* ---- key pairs and security groups ------------------------------------------------------- */

static void test_keypairs(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_buf pub = GC_BUF_INIT(4096), other = GC_BUF_INIT(4096), ed = GC_BUF_INIT(4096);
	struct gc_keypair_request kr;
	struct gc_resource_list found;
	struct gc_error err;
	char *id = NULL, *again = NULL, *foreign = NULL;
	json_t *lines;

	(void)state;
	gc_error_init(&err);
	gc_resource_list_init(&found);
	assert_int_equal(gc_buf_addstr(&pub, TEST_RSA_A " drv@test"), 0);
	assert_int_equal(gc_buf_addstr(&other, TEST_RSA_B " someone@else"), 0);
	public_line(&ed, "drv@test");

	memset(&kr, 0, sizeof(kr));
	kr.name = "gpucluster-drv-key";
	kr.public_key_line = pub.data;
	kr.tags = base_tags;
	kr.n_tags = 2;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &id, &err), 0);
	assert_string_equal(id, "gpucluster-drv-key"); /* known by name on Alibaba */

	/* someone's untagged key with our name prefix */
	kr.name = "gpucluster-drv-key-2";
	kr.public_key_line = other.data;
	kr.tags = NULL;
	kr.n_tags = 0;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &foreign, &err), 0);

	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_KEYPAIR, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 1);
	assert_string_equal(found.items[0].id, id);
	assert_string_equal(found.items[0].name, "gpucluster-drv-key");
	assert_non_null(found.items[0].fingerprint);
	assert_int_equal(found.items[0].n_tags, 2);
	gc_resource_list_release(&found);
	lines = logged("DescribeKeyPairs");
	assert_string_equal(param(json_array_get(lines, 0), "Tag.1.Key"), GC_TAG_CLUSTER);
	assert_string_equal(param(json_array_get(lines, 0), "PageSize"), "50");
	json_decref(lines);

	/* importing our key again (a re-run, or a retry after a lost answer) adopts it */
	kr.name = "gpucluster-drv-key";
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
	assert_string_equal(err.cloud_code, "KeyPair.AlreadyExist");
	assert_null(again);
	/* the cloud takes no Ed25519 key (gpucluster hands its own to cloud-init instead) */
	kr.name = "gpucluster-drv-ed";
	kr.public_key_line = ed.data;
	gc_error_init(&err);
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &again, &err), -1);
	assert_string_equal(err.cloud_code, "InvalidPublicKeyBody.Malformed");
	assert_null(again);

	assert_int_equal(gc_provider_delete_keypair(prov, id, &err), 0);
	assert_int_equal(gc_provider_delete_keypair(prov, id, &err), 0); /* gone: done */
	lines = logged("DeleteKeyPairs");
	assert_string_equal(param(json_array_get(lines, 0), "KeyPairNames"),
			    "[\"gpucluster-drv-key\"]");
	json_decref(lines);
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
	struct gc_tag foreign_tags[] = { { k_owner, v_owner } };
	struct gc_secgroup_request sr;
	struct gc_resource_list found;
	struct gc_error err;
	char *id = NULL, *foreign;
	json_t *lines;

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
		struct sim_secgroup *g = sim_world_sg(sim.world, SIM_ALIBABA, REGION, id);
		assert_non_null(g);
		assert_string_equal(g->vpc, "vpc-gpuclustersim");
		/* the members: a basic group's InnerAccessPolicy Accept, no rule of ours */
		assert_string_equal(g->type, "normal");
		assert_true(g->inner_accept);
		assert_int_equal(g->n_rules, 2);
		assert_string_equal(g->rules[0].protocol, "tcp");
		assert_int_equal(g->rules[0].from_port, 2222);
		assert_int_equal(g->rules[1].to_port, 2222);
		assert_string_equal(g->rules[1].cidr, "198.51.100.0/24");
		assert_string_equal(sim_tags_get(&g->tags, GC_TAG_CLUSTER), CLUSTER);
	}
	sim_world_unlock(sim.world);
	lines = logged("CreateSecurityGroup");
	assert_string_equal(param(json_array_get(lines, 0), "VpcId"), "vpc-gpuclustersim");
	assert_string_equal(param(json_array_get(lines, 0), "SecurityGroupType"), "normal");
	assert_int_equal(strlen(param(json_array_get(lines, 0), "ClientToken")), 32);
	json_decref(lines);
	lines = logged("AuthorizeSecurityGroup");
	assert_int_equal(json_array_size(lines), 1);
	assert_string_equal(param(json_array_get(lines, 0), "Permissions.2.PortRange"),
			    "2222/2222");
	assert_string_equal(param(json_array_get(lines, 0), "Permissions.2.NicType"), "intranet");
	json_decref(lines);

	/* a foreign group with our name is not listed */
	foreign = make_sg("gpucluster-drv", foreign_tags, 1);
	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_SECGROUP, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 1);
	assert_string_equal(found.items[0].id, id);
	assert_string_equal(found.items[0].name, "gpucluster-drv");
	assert_null(found.items[0].fingerprint);
	gc_resource_list_release(&found);

	/* in use by a running instance, then going */
	secgroup_in_use(id, "DependencyViolation");
	free(id);
	free(foreign);
}

/* ---- catalogue ------------------------------------------------------------------------------- */

static void test_images(void **state)
{
	struct gc_error err;
	char *id = NULL;
	unsigned long calls;
	json_t *lines;

	(void)state;
	gc_error_init(&err);
	expect_image("ubuntu-22.04", true, UBUNTU);
	expect_image("ubuntu-24.04", true, NOBLE);
	expect_image("gpu-ready", true, GPU_IMG);
	lines = logged("DescribeImages");
	assert_int_equal(json_array_size(lines), 3);
	assert_string_equal(param(json_array_get(lines, 0), "ImageOwnerAlias"), "system");
	assert_string_equal(param(json_array_get(lines, 0), "ImageName"), "ubuntu_22_04_x64");
	assert_string_equal(param(json_array_get(lines, 0), "OSType"), "linux");
	assert_string_equal(param(json_array_get(lines, 0), "Architecture"), "x86_64");
	assert_string_equal(param(json_array_get(lines, 2), "ImageOwnerAlias"), "marketplace");
	json_decref(lines);

	/* cached aliases, and literal ids pass through without a call */
	calls = prov->stats.calls;
	expect_image("ubuntu-22.04", true, UBUNTU);
	expect_image("m-bp1custom0001", false, "m-bp1custom0001");
	expect_image(NOBLE, false, NOBLE);
	assert_int_equal(prov->stats.calls, calls);

	assert_int_equal(gc_provider_resolve_image(prov, "centos-7", true, &id, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "unknown image alias 'centos-7'"));
	assert_int_equal(gc_provider_resolve_image(prov, "ami-0123456789abcdef0", false, &id, &err),
			 -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "not an Alibaba image id"));
	assert_null(id);
}

static void test_types_and_prices(void **state)
{
	struct gc_type_facts f;
	struct gc_error err;
	double price = 0, want;
	unsigned long calls;
	json_t *lines;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_provider_instance_type(prov, TYPE, &f, &err), 0);
	assert_string_equal(f.name, TYPE);
	assert_int_equal(f.vcpus, 8);
	assert_int_equal(f.memory_mib, 30 * 1024);
	assert_int_equal(f.gpus, 1);
	assert_string_equal(f.gpu_model, "A10");
	assert_int_equal(f.gpu_memory_mib, 24 * 1024);
	assert_int_equal(gc_provider_instance_type(prov, "ecs.gn7e-c16g1.32xlarge", &f, &err), 0);
	assert_int_equal(f.gpus, 8);
	assert_string_equal(f.gpu_model, "A100");
	assert_int_equal(f.gpu_memory_mib, 80 * 1024);
	assert_int_equal(gc_provider_instance_type(prov, "ecs.gn6i-c4g1.xlarge", &f, &err), 0);
	assert_string_equal(f.gpu_model, "T4");
	assert_int_equal(gc_provider_instance_type(prov, "ecs.g7.large", &f, &err), 0);
	assert_int_equal(f.gpus, 0);
	assert_string_equal(f.gpu_model, "");
	assert_int_equal(gc_provider_instance_type(prov, "ecs.z9.huge", &f, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_non_null(
		strstr(err.message, "instance type 'ecs.z9.huge' is not offered in " REGION));

	/* the emulator prices in CNY, as a China-site account is billed: said once */
	want = sim_catalog_price(sim_catalog_itype(SIM_ALIBABA, TYPE), false);
	assert_int_equal(gc_provider_price(prov, TYPE, NULL, false, &price, &err), 0);
	assert_true(price > want - 1e-6 && price < want + 1e-6);
	assert_non_null(strstr(warnings, "CNY, not USD"));
	want = sim_catalog_price(sim_catalog_itype(SIM_ALIBABA, TYPE), true);
	assert_int_equal(gc_provider_price(prov, TYPE, "cn-hangzhou-j", true, &price, &err), 0);
	assert_true(price > want - 1e-6 && price < want + 1e-6);
	assert_null(strstr(strstr(warnings, "not USD") + 1, "not USD")); /* once per driver */
	lines = logged("DescribePrice");
	assert_int_equal(json_array_size(lines), 2);
	assert_string_equal(param(json_array_get(lines, 0), "ResourceType"), "instance");
	assert_string_equal(param(json_array_get(lines, 0), "PriceUnit"), "Hour");
	assert_null(param(json_array_get(lines, 0), "SpotStrategy"));
	assert_string_equal(param(json_array_get(lines, 1), "SpotStrategy"), "SpotAsPriceGo");
	assert_string_equal(param(json_array_get(lines, 1), "ZoneId"), "cn-hangzhou-j");
	json_decref(lines);

	/* all of it cached */
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_instance_type(prov, TYPE, &f, &err), 0);
	assert_int_equal(gc_provider_price(prov, TYPE, NULL, false, &price, &err), 0);
	assert_int_equal(gc_provider_price(prov, TYPE, "cn-hangzhou-j", true, &price, &err), 0);
	assert_int_equal(prov->stats.calls, calls);

	assert_int_equal(gc_provider_price(prov, "ecs.z9.huge", NULL, false, &price, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
}

static void test_zones_regions_console(void **state)
{
	struct gc_create_request r = launch_req(1, "gc-console");
	struct gc_instance_list got;
	struct gc_error err;
	char **zones = NULL, *text = NULL;
	size_t n = 0;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	assert_int_equal(gc_provider_zones(prov, &zones, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_string_equal(zones[0], "cn-hangzhou-h");
	assert_string_equal(zones[3], "cn-hangzhou-k");
	gc_strv_free(zones, n);
	assert_int_equal(gc_provider_regions(prov, &zones, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(zones[0], "cn-hangzhou");
	assert_string_equal(zones[2], "ap-southeast-1");
	gc_strv_free(zones, n);

	launch_ok(&r, &got);
	advance_ms(2000);
	assert_int_equal(gc_provider_console_output(prov, got.items[0].id, &text, &err), 0);
	assert_non_null(strstr(text, "-----BEGIN SSH HOST KEY KEYS-----\nssh-ed25519 "));
	assert_non_null(strstr(text, "-----END SSH HOST KEY KEYS-----"));
	free(text);
	text = NULL;
	assert_int_equal(gc_provider_console_output(prov, "i-bp1neverexisted0000", &text, &err),
			 -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_string_equal(err.cloud_code, "InvalidInstanceId.NotFound");
	assert_null(text);
	gc_instance_list_release(&got);
}

/* ---- faults and errors -------------------------------------------------------------------- */

static void test_faults(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_create_request r = launch_req(2, "gc-faults");
	struct gc_instance_list got;
	struct gc_error err;
	struct gc_provider_stats s0;
	char **zones = NULL;
	size_t n = 0;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	{
		struct gc_create_request w = launch_req(1, "gc-faults-warm");
		launch_ok(&w, &got);
		r.security_group_id = w.security_group_id;
	}

	/* throttling: retried and counted */
	assert_int_equal(
		sim_faults_add(sim.faults, "alibaba:DescribeInstances:throttle,times=2", &err), 0);
	s0 = prov->stats;
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(prov->stats.throttled - s0.throttled, 2);
	assert_int_equal(prov->stats.retries - s0.retries, 2);
	assert_int_equal(prov->stats.calls - s0.calls, 3);

	/* capacity: no retry, the engine falls back */
	assert_int_equal(sim_faults_add(sim.faults,
					"alibaba:RunInstances:capacity,zone=cn-hangzhou-i", &err),
			 0);
	s0 = prov->stats;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_ECAPACITY);
	assert_string_equal(err.cloud_code, "OperationDenied.NoStock");
	assert_int_equal(err.http_status, 403);
	assert_int_equal(strlen(err.request_id), 36);
	assert_non_null(strstr(err.message,
			       "cannot launch 2 'ecs.gn7i-c8g1.2xlarge' instances in "
			       "'cn-hangzhou-i'"));
	assert_int_equal(prov->stats.calls - s0.calls, 1);
	r.zone = "cn-hangzhou-k";
	launch_ok(&r, &got);

	/* quota: no retry */
	sim_faults_clear(sim.faults);
	assert_int_equal(sim_faults_add(sim.faults, "alibaba:RunInstances:quota,times=1", &err), 0);
	r.client_token = "gc-faults-2";
	s0 = prov->stats;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_EQUOTA);
	assert_string_equal(err.cloud_code, "QuotaExceed.ElasticQuota");
	assert_int_equal(prov->stats.calls - s0.calls, 1);

	/* 5xx and a dropped connection: retried */
	assert_int_equal(sim_faults_add(sim.faults, "alibaba:DescribeZones:5xx,times=1", &err), 0);
	assert_int_equal(sim_faults_add(sim.faults, "alibaba:DescribeZones:drop,times=1", &err), 0);
	s0 = prov->stats;
	assert_int_equal(gc_provider_zones(prov, &zones, &n, &err), 0);
	assert_int_equal(n, 4);
	gc_strv_free(zones, n);
	assert_true(prov->stats.retries - s0.retries >= 1);

	/* a 5xx that does not stop: given up after the policy's attempts */
	assert_int_equal(sim_faults_add(sim.faults, "alibaba:DescribeZones:5xx", &err), 0);
	s0 = prov->stats;
	zones = NULL;
	assert_int_equal(gc_provider_zones(prov, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_non_null(strstr(err.message, "gave up after 5 attempts"));
	assert_int_equal(prov->stats.calls - s0.calls, 5);
	assert_null(zones);

	/* the VPC API's faults are Alibaba's too */
	sim_faults_clear(sim.faults);
	assert_int_equal(
		sim_faults_add(sim.faults, "alibaba:DescribeVSwitches:throttle,times=1", &err), 0);
	r.zone = "cn-hangzhou-j";
	r.client_token = "gc-faults-3";
	s0 = prov->stats;
	launch_ok(&r, &got);
	assert_int_equal(prov->stats.throttled - s0.throttled, 1);
	sim_faults_clear(sim.faults);
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
	envv.secret = "not-the-secret-of-this-key-00000000";
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), 0);
	assert_int_equal(gc_provider_zones(bad, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "SignatureDoesNotMatch");
	assert_int_equal(err.http_status, 400);
	assert_int_equal(bad->stats.calls, 1);
	gc_provider_close(bad);

	envv.key_id = "LTAInobodyhasthiskey";
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), 0);
	assert_int_equal(gc_provider_zones(bad, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "InvalidAccessKeyId.NotFound");
	gc_provider_close(bad);

	/* no credentials at all: open fails and says where it looked */
	envv.key_id = NULL;
	envv.secret = NULL;
	bad = NULL;
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "ALIBABA_CLOUD_ACCESS_KEY_ID"));
	assert_non_null(strstr(err.message, "config.json"));
	assert_null(bad);

	/* an endpoint that is not a URL */
	envv.key_id = AKID;
	envv.secret = SECRET;
	assert_int_equal(open_with(&bad, "ftp://127.0.0.1:1", NULL, false, NULL, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_null(bad);
}

/* A RamRoleArn profile: the driver assumes the role at the emulator's STS, works with the
 * temporary key, and assumes it again before it expires. */
static void test_sts_profile(void **state)
{
	static const char cfg[] =
		"{\"current\":\"default\",\"profiles\":[{\"name\":\"default\",\"mode\":\"AK\","
		"\"access_key_id\":\"LTAIwrong\",\"access_key_secret\":\"wrong\"},"
		"{\"name\":\"ci\",\"mode\":\"RamRoleArn\",\"access_key_id\":\"" AKID
		"\",\"access_key_secret\":\"" SECRET
		"\",\"ram_role_arn\":\"acs:ram::5123456789012345:role/gpucluster\","
		"\"ram_session_name\":\"drv-test\",\"expired_seconds\":900,"
		"\"region_id\":\"" REGION "\"}]}";
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_provider *p = NULL;
	struct gc_instance_list got;
	struct gc_error err;
	FILE *f;
	char first[64];
	json_t *lines;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	f = fopen(envv.file, "w");
	assert_non_null(f);
	fputs(cfg, f);
	fclose(f);
	assert_int_equal(open_with(&p, endpoint, "ci", false, NULL, &err), 0);
	assert_true(gc_starts_with(ali_driver(p)->creds.access_key_id, "STS."));
	assert_non_null(ali_driver(p)->creds.security_token);
	assert_non_null(strstr(ali_driver(p)->creds.source, "profile 'ci'"));
	snprintf(first, sizeof(first), "%s", ali_driver(p)->creds.access_key_id);
	lines = logged("AssumeRole");
	assert_int_equal(json_array_size(lines), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(lines, 0), "version")),
			    "2015-04-01");
	assert_string_equal(param(json_array_get(lines, 0), "RoleArn"),
			    "acs:ram::5123456789012345:role/gpucluster");
	assert_string_equal(param(json_array_get(lines, 0), "RoleSessionName"), "drv-test");
	assert_string_equal(param(json_array_get(lines, 0), "DurationSeconds"), "900");
	json_decref(lines);
	assert_int_equal(gc_provider_discover(p, &q, &got, &err), 0);

	/* five minutes before expiry the next call assumes the role again first */
	ali_driver(p)->creds.expiration = (int64_t)time(NULL) + 60;
	assert_int_equal(gc_provider_discover(p, &q, &got, &err), 0);
	lines = logged("AssumeRole");
	assert_int_equal(json_array_size(lines), 2);
	json_decref(lines);
	assert_string_not_equal(ali_driver(p)->creds.access_key_id, first);
	assert_true(ali_driver(p)->creds.expiration > (int64_t)time(NULL) + 800);
	lines = logged("DescribeInstances");
	assert_int_equal(json_array_size(lines), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(lines, 1), "status")),
			 200);
	json_decref(lines);
	gc_provider_close(p);
	gc_instance_list_release(&got);
}

/* Our own minute window: 300 calls of an API go at once, the next waits; a cancel ends the
 * wait at once with GC_ECANCELLED and the call is never sent. */
static void test_rate_limit_and_cancel(void **state)
{
	struct gc_provider *p = NULL;
	struct gc_error err;
	char **zones = NULL;
	size_t n = 0;
	unsigned long sent;

	(void)state;
	gc_error_init(&err);
	sim_faults_set_rate_limits(sim.faults, true);
	cancel_flag = false;
	assert_int_equal(open_with(&p, endpoint, NULL, false, test_cancelled, &err), 0);
	for (int i = 0; i < 300; i++) {
		assert_int_equal(gc_provider_zones(p, &zones, &n, &err), 0);
		gc_strv_free(zones, n);
	}
	assert_int_equal(p->stats.ratelimit_wait_ms, 0);
	/* the 301st waits for the refill (300 a minute: 200 ms a token) */
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), 0);
	gc_strv_free(zones, n);
	assert_true(p->stats.ratelimit_wait_ms >= 150);
	assert_int_equal(p->stats.throttled, 0);
	/* the bucket is empty again: the next call must wait, and a cancel ends the wait */
	cancel_flag = true;
	sent = p->stats.calls;
	zones = NULL;
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_ECANCELLED);
	assert_non_null(strstr(err.message, "cancelled while waiting on our own rate limit"));
	assert_int_equal(p->stats.calls, sent);
	assert_null(zones);
	cancel_flag = false;
	gc_provider_close(p);
}

/* ---- the scripted server: what the emulator does not answer ------------------------------ */

#define ZONES_OK "{\"RequestId\":\"R-1\",\"Zones\":{\"Zone\":[{\"ZoneId\":\"cn-hangzhou-x\"}]}}"
#define ERR(code)                                                                 \
	"{\"RequestId\":\"R-2\",\"HostId\":\"ecs.aliyuncs.com\",\"Code\":\"" code \
	"\",\"Message\":\"m\"}"

static void test_scripted(void **state)
{
	static const struct scripted throttled[] = {
		{ 400, ERR("Throttling.User"), "1500" },
		{ 200, ZONES_OK, NULL },
	};
	static const struct scripted clock_off[] = {
		{ 400, ERR("InvalidTimeStamp.Expired"), NULL },
	};
	static const struct scripted nonce_once[] = {
		{ 400, ERR("SignatureNonceUsed"), NULL },
		{ 200, ZONES_OK, NULL },
	};
	static const struct scripted nonce_always[] = {
		{ 400, ERR("SignatureNonceUsed"), NULL },
	};
	static const struct scripted processing[] = {
		{ 400, ERR("IdempotentProcessing"), NULL },
		{ 200, ZONES_OK, NULL },
	};
	static const struct scripted garbage[] = { { 200, "<<<not json", NULL } };
	static const struct scripted garbage500[] = { { 500, "<<<not json", NULL } };
	static const struct scripted huge[] = { { 200, NULL, NULL } };
	static const struct scripted account[] = { { 403, ERR("Account.Arrearage"), NULL } };
	struct MHD_Daemon *d;
	struct gc_provider *p = NULL;
	struct gc_error err;
	char **zones = NULL;
	size_t n = 0;
	uint64_t t0;

	(void)state;
	d = scripted_start(&p);
	gc_error_init(&err);

	/* a throttle with the server's hint: waited at least that long, then answered */
	run_script(p, throttled, 2);
	t0 = fc.now;
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), 0);
	assert_int_equal(n, 1);
	gc_strv_free(zones, n);
	assert_true(fc.now - t0 >= 1500 * MS);
	assert_int_equal(p->stats.calls, 2);
	assert_int_equal(p->stats.throttled, 1);

	/* the clock: signed again once, then it is the clock */
	run_script(p, clock_off, 1);
	zones = NULL;
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "InvalidTimeStamp.Expired");
	assert_non_null(strstr(err.message, "clock"));
	assert_int_equal(p->stats.calls, 2);

	/* a nonce seen before (an attempt of ours that reached the server, resent by
	 * libcurl): signed again with a fresh one, as often as the retry policy allows */
	run_script(p, nonce_once, 2);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), 0);
	gc_strv_free(zones, n);
	assert_int_equal(p->stats.calls, 2);
	run_script(p, nonce_always, 1);
	zones = NULL;
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_string_equal(err.cloud_code, "SignatureNonceUsed");
	assert_int_equal(p->stats.calls, 5);

	/* the first call of a token still running: asked again a second later */
	run_script(p, processing, 2);
	t0 = fc.now;
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), 0);
	gc_strv_free(zones, n);
	assert_true(fc.now - t0 >= 1000 * MS);

	/* an account that cannot pay stops everything */
	run_script(p, account, 1);
	zones = NULL;
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_int_equal(p->stats.calls, 1);

	run_script(p, garbage, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "DescribeZones"));
	assert_int_equal(p->stats.calls, 1);

	run_script(p, garbage500, 1); /* unreadable, but a 500: transient, retried */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_discover_pages, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_discover_states, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_create_spot_ttl, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_any_zone, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_client_token, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_lost_answer, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_terminate_gone, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_keypairs, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_secgroups, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_images, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_types_and_prices, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_zones_regions_console, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_faults, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_auth, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_sts_profile, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_rate_limit_and_cancel, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_scripted, test_setup, test_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
