/*
 * test-tencent-driver.c: the Tencent Cloud CVM driver (providers/tencent) through the
 * provider wrappers, against the emulator served in-process on 127.0.0.1 (its CVM and VPC
 * frontend behind libmicrohttpd, a world on the fake clock), and against a small fake
 * server for answers no cloud gives: garbage and oversized bodies.
 *
 * Covered: discover with tag filters over pages (1200 instances, twelve pages of 100 in
 * the request log) with the emulator's own rate limits on and never met; launches with
 * every tag, spot with a bid, the ActionTimer the emulator honours, the default VPC's
 * subnet in the zone, and the batch's SSH host key in the cloud-init user-data the
 * emulator received; client-token replay and mismatch; a lost answer retried without a
 * duplicate; terminate with ids already gone; the recycle bin emptied by a second call;
 * key pairs and security groups found by tag, adopted on a re-run or after a lost answer,
 * refused when foreign; image aliases, type facts, prices, zones and regions; the error
 * taxonomy under injected faults (throttle, capacity, quota, 5xx, drop, auth, a stale
 * signature); credentials renewed before they expire; a cancel during our own rate wait;
 * and the emulator's DescribeVpcs / DescribeSubnets and its subnet checks on launch.
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
#include "core/cloudinit.h"
#include "core/keygen.h"
#include "core/provider.h"
#include "core/str.h"
#include "driver-fixture.h"
#include "ssh-test-keys.h"
#include "providers/tencent/cvm.h"
#include "sim/catalog.h"
#include "sim/sim.h"
#include "sim/tencent/cvm.h"

#define SECRET_ID  "AKIDgpuclustersim001"
#define SECRET_KEY "gpucluster-sim-tencent-secret-000000"
#define REGION	   "ap-guangzhou"
#define ZONE	   "ap-guangzhou-6"
#define UBUNTU	   "img-487zeit5"
#define NOBLE	   "img-mmytdhbn"
#define GPU_READY  "img-9qrfy1xt"
#define TYPE	   "GN7.2XLARGE32"

static const struct drv_cloud tencent = {
	.cloud = "tencent",
	.frontend = SIM_TENCENT,
	.region = REGION,
	.tmp_template = "/tmp/gc-test-tcdrv.XXXXXX",
	.key_id_var = "TENCENTCLOUD_SECRET_ID",
	.secret_var = "TENCENTCLOUD_SECRET_KEY",
	.metadata_off_var = "TENCENTCLOUD_CVM_ROLE_DISABLED",
	.key_id = SECRET_ID,
	.secret = SECRET_KEY,
	.type = TYPE,
	.image = UBUNTU,
	.zone = ZONE,
};

static int test_setup(void **state)
{
	return drv_setup(state, &tencent);
}

/* A parameter of a logged call by dotted path ("Placement.Zone", "Filters.0.Name"). */
static json_t *param(json_t *line, const char *path)
{
	json_t *cur = json_object_get(line, "params");
	char key[128];

	while (cur && *path) {
		size_t n = strcspn(path, ".");

		assert_true(n < sizeof(key));
		memcpy(key, path, n);
		key[n] = '\0';
		if (json_is_array(cur))
			cur = json_array_get(cur, strtoul(key, NULL, 10));
		else
			cur = json_object_get(cur, key);
		path += n + (path[n] == '.');
	}
	return cur;
}

static const char *pstr(json_t *line, const char *path)
{
	return json_string_value(param(line, path));
}

/* Resolves the launch image and subnet once, so a test's call counts are the launches. */
static void warm(void)
{
	struct gc_create_request r = launch_req(1, "gc-warm");
	struct gc_instance_list got;

	gc_instance_list_init(&got);
	launch_ok(&r, &got);
	gc_instance_list_release(&got);
}

static enum sim_state world_state(const char *id)
{
	enum sim_state s;

	sim_world_lock(sim.world);
	s = sim_world_instance(sim.world, SIM_TENCENT, id)->state;
	sim_world_unlock(sim.world);
	return s;
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
	/* 13 RunInstances against a bucket of 10 a second: the last ones waited */
	assert_true(prov->stats.ratelimit_wait_ms >= 200);
	gc_instance_list_init(&got);

	calls = prov->stats.calls;
	gc_error_init(&err);
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(got.n, 1200);
	assert_int_equal(prov->stats.calls - calls, 1200 / TC_PAGE_SIZE);
	for (size_t i = 0; i < got.n; i++) {
		assert_string_equal(got.items[i].cluster, CLUSTER);
		assert_string_equal(got.items[i].group, "workers");
		assert_string_equal(got.items[i].spec_hash, "h4sh");
		assert_string_equal(got.items[i].type, TYPE);
		assert_string_equal(got.items[i].image, UBUNTU);
		assert_string_equal(got.items[i].zone, ZONE);
		assert_true(got.items[i].state == GC_STATE_PENDING ||
			    got.items[i].state == GC_STATE_RUNNING);
		assert_true(got.items[i].launch_time > 0);
		assert_non_null(got.items[i].private_ip);
		assert_false(got.items[i].spot);
	}
	gc_instance_list_release(&got);

	pages = logged("DescribeInstances");
	assert_int_equal(json_array_size(pages), 1200 / TC_PAGE_SIZE);
	assert_int_equal(json_integer_value(param(json_array_get(pages, 0), "Limit")),
			 TC_PAGE_SIZE);
	assert_int_equal(json_integer_value(param(json_array_get(pages, 0), "Offset")), 0);
	assert_int_equal(json_integer_value(param(json_array_get(pages, 1), "Offset")),
			 TC_PAGE_SIZE);
	assert_string_equal(pstr(json_array_get(pages, 0), "Filters.0.Name"),
			    "tag:" GC_TAG_CLUSTER);
	assert_string_equal(pstr(json_array_get(pages, 0), "Filters.0.Values.0"), CLUSTER);
	assert_null(param(json_array_get(pages, 0), "Filters.1"));
	json_decref(pages);

	/* a key-only filter: the 1200 carry "team", the other three do not */
	q.tags = by_key;
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(got.n, 1200);
	gc_instance_list_release(&got);
	pages = logged("DescribeInstances");
	assert_string_equal(pstr(json_array_get(pages, 12), "Filters.0.Name"), "tag-key");
	assert_string_equal(pstr(json_array_get(pages, 12), "Filters.0.Values.0"), "team");
	json_decref(pages);
	assert_int_equal(prov->stats.throttled, 0);
}

static void test_discover_states(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_create_request r = launch_req(3, "gc-states");
	struct gc_instance_list got, now;
	struct gc_error err;

	(void)state;
	gc_instance_list_init(&got);
	gc_instance_list_init(&now);
	gc_error_init(&err);
	launch_ok(&r, &got);
	for (size_t i = 0; i < got.n; i++) {
		assert_int_equal(got.items[i].state, GC_STATE_PENDING);
		assert_string_equal(got.items[i].client_token, "gc-states");
		assert_string_equal(got.items[i].zone, ZONE);
		assert_string_equal(gc_instance_tag(&got.items[i], "team"), "research");
	}
	advance_ms(2000);
	/* one in the recycle bin, one terminating, one running */
	sim_world_lock(sim.world);
	sim.world->tencent_recycle = true;
	sim_world_terminate(sim.world, sim_world_instance(sim.world, SIM_TENCENT, got.items[0].id));
	sim.world->tencent_recycle = false;
	sim_world_terminate(sim.world, sim_world_instance(sim.world, SIM_TENCENT, got.items[1].id));
	sim_world_unlock(sim.world);

	assert_int_equal(gc_provider_discover(prov, &q, &now, &err), 0);
	assert_int_equal(now.n, 3);
	for (size_t i = 0; i < now.n; i++) {
		const struct gc_instance *in = &now.items[i];

		if (!strcmp(in->id, got.items[0].id)) {
			assert_int_equal(in->state, GC_STATE_STOPPED);
			assert_string_equal(in->state_name, "SHUTDOWN");
		} else if (!strcmp(in->id, got.items[1].id)) {
			assert_int_equal(in->state, GC_STATE_TERMINATING);
			assert_string_equal(in->state_name, "TERMINATING");
		} else {
			assert_int_equal(in->state, GC_STATE_RUNNING);
			assert_string_equal(in->state_name, "RUNNING");
			assert_non_null(in->public_ip);
		}
	}
	gc_instance_list_release(&now);
	/* terminated ones vanish from CVM's listings */
	advance_ms(1500);
	assert_int_equal(gc_provider_discover(prov, &q, &now, &err), 0);
	assert_int_equal(now.n, 2);
	gc_instance_list_release(&now);
	gc_instance_list_release(&got);

	assert_int_equal(tc_state("LAUNCH_FAILED"), GC_STATE_STOPPED);
	assert_int_equal(tc_state("STARTING"), GC_STATE_PENDING);
	assert_int_equal(tc_state("STOPPING"), GC_STATE_STOPPING);
	assert_int_equal(tc_state("RESCUE_MODE"), GC_STATE_UNKNOWN);
}

/* ---- create ------------------------------------------------------------------------------ */

/* The batch host key as the engine makes it: a fixed seed here. */
static void host_key(struct gc_buf *pem, struct gc_buf *pub)
{
	unsigned char seed[GC_ED25519_LEN];
	struct gc_keypair kp;

	memset(seed, 7, sizeof(seed));
	gc_keypair_init(&kp);
	assert_int_equal(gc_keypair_from_seed(&kp, seed, "", NULL), 0);
	assert_int_equal(gc_keypair_private_pem(pem, &kp, NULL), 0);
	assert_int_equal(gc_keypair_public_line(pub, &kp), 0);
	gc_keypair_release(&kp);
}

static void test_create_spot_ttl_host_key(void **state)
{
	struct gc_keypair_request kr;
	struct gc_secgroup_request sr;
	const char *cidrs[] = { "203.0.113.7/32" };
	struct gc_create_request r = launch_req(2, "gc-spot-1");
	struct gc_instance_list got;
	struct gc_buf pub = GC_BUF_INIT(4096), hk_pem = GC_BUF_INIT(8192),
		      hk_pub = GC_BUF_INIT(512);
	struct gc_error err;
	char *key_id = NULL, *sg_id = NULL, *ud, *ud2, subnet[SIM_ID_MAX], when[32];
	int64_t expires = (int64_t)time(NULL) + 3600;
	json_t *runs, *run;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	assert_int_equal(gc_buf_addstr(&pub, TEST_RSA_A " drv@test"), 0);
	memset(&kr, 0, sizeof(kr));
	kr.name = "gc_drv_key";
	kr.public_key_line = pub.data;
	kr.tags = base_tags;
	kr.n_tags = 1;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &key_id, &err), 0);
	assert_true(gc_starts_with(key_id, "skey-"));
	memset(&sr, 0, sizeof(sr));
	sr.name = "gpucluster-drv";
	sr.description = "gpucluster drv";
	sr.ssh_port = 22;
	sr.allow_from = cidrs;
	sr.n_allow_from = 1;
	sr.tags = base_tags;
	sr.n_tags = 1;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &sg_id, &err), 0);
	host_key(&hk_pem, &hk_pub);

	r.zone = "ap-guangzhou-7";
	r.spot = true;
	r.spot_max_price = 4.5; /* above the emulator's spot price, 35% of 8.68 */
	r.key_name = kr.name;
	r.key_id = key_id;
	r.security_group_id = sg_id;
	r.expires_at = expires;
	r.host_key_private = hk_pem.data;
	r.host_key_public = hk_pub.data;
	launch_ok(&r, &got);
	assert_int_equal(got.n, 2);
	for (size_t i = 0; i < got.n; i++) {
		assert_true(got.items[i].spot);
		assert_string_equal(got.items[i].zone, "ap-guangzhou-7");
		assert_string_equal(got.items[i].cluster, CLUSTER);
		assert_true(gc_starts_with(got.items[i].id, "ins-"));
	}

	/* what went on the wire */
	tc_default_subnet("ap-guangzhou-7", subnet);
	gc_format_rfc3339(expires, when);
	runs = logged("RunInstances");
	assert_int_equal(json_array_size(runs), 1);
	run = json_array_get(runs, 0);
	assert_string_equal(pstr(run, "InstanceChargeType"), "SPOTPAID");
	assert_string_equal(pstr(run, "InstanceMarketOptions.MarketType"), "spot");
	assert_string_equal(pstr(run, "InstanceMarketOptions.SpotOptions.MaxPrice"), "4.5");
	assert_string_equal(pstr(run, "InstanceMarketOptions.SpotOptions.SpotInstanceType"),
			    "one-time");
	assert_string_equal(pstr(run, "Placement.Zone"), "ap-guangzhou-7");
	assert_int_equal(json_integer_value(param(run, "Placement.ProjectId")), 0);
	assert_int_equal(json_integer_value(param(run, "InstanceCount")), 2);
	assert_int_equal(json_integer_value(param(run, "MinCount")), 2);
	assert_string_equal(pstr(run, "SystemDisk.DiskType"), "CLOUD_PREMIUM");
	assert_int_equal(json_integer_value(param(run, "SystemDisk.DiskSize")), 200);
	assert_string_equal(pstr(run, "VirtualPrivateCloud.VpcId"), TC_DEFAULT_VPC);
	assert_string_equal(pstr(run, "VirtualPrivateCloud.SubnetId"), subnet);
	assert_string_equal(pstr(run, "InternetAccessible.InternetChargeType"),
			    "TRAFFIC_POSTPAID_BY_HOUR");
	assert_true(json_integer_value(param(run, "InternetAccessible.InternetMaxBandwidthOut")) >
		    0);
	assert_true(json_is_true(param(run, "InternetAccessible.PublicIpAssigned")));
	assert_string_equal(pstr(run, "LoginSettings.KeyIds.0"), key_id);
	assert_string_equal(pstr(run, "SecurityGroupIds.0"), sg_id);
	assert_string_equal(pstr(run, "ClientToken"), "gc-spot-1");
	assert_string_equal(pstr(run, "TagSpecification.0.ResourceType"), "instance");
	assert_string_equal(pstr(run, "TagSpecification.0.Tags.0.Key"), GC_TAG_CLUSTER);
	assert_string_equal(pstr(run, "TagSpecification.0.Tags.3.Value"), "research");
	assert_string_equal(pstr(run, "ActionTimer.TimerAction"), "TerminateInstances");
	assert_string_equal(pstr(run, "ActionTimer.ActionTime"), when);
	assert_true(gc_starts_with(pstr(run, "UserData"), "<redacted"));
	json_decref(runs);

	/* what the emulator made of it: the timer, the disk, the bid, the subnet, the
	 * cloud-config with the host key */
	sim_world_lock(sim.world);
	for (size_t i = 0; i < got.n; i++) {
		struct sim_instance *in =
			sim_world_instance(sim.world, SIM_TENCENT, got.items[i].id);
		char *block;

		assert_non_null(in);
		assert_int_equal(in->release_at_wall, expires);
		assert_int_equal(in->disk_gb, 200);
		assert_true(in->spot);
		assert_string_equal(in->spot_max_price, "4.5");
		assert_string_equal(in->key_name, key_id);
		assert_string_equal(in->subnet, subnet);
		assert_non_null(in->user_data);
		assert_true(gc_starts_with(in->user_data, "#cloud-config\n"));
		assert_non_null(strstr(in->user_data, "\nssh_deletekeys: true\n"));
		assert_non_null(strstr(in->user_data, "\nssh_genkeytypes: []\n"));
		assert_non_null(strstr(in->user_data,
				       "\nssh_keys:\n  ed25519_private: |\n    "
				       "-----BEGIN OPENSSH PRIVATE KEY-----\n"));
		block = gc_xasprintf("\n  ed25519_public: %s\n", hk_pub.data);
		assert_non_null(strstr(in->user_data, block));
		free(block);
		/* every line of the PEM, indented under the block */
		for (const char *l = hk_pem.data; *l;) {
			size_t len = strcspn(l, "\n");
			char *want = gc_xasprintf("\n    %.*s\n", (int)len, l);

			assert_non_null(strstr(in->user_data, want));
			free(want);
			l += len + (l[len] == '\n');
		}
	}
	sim_world_unlock(sim.world);

	/* the same request gives the same bytes, so a replayed token stays the same call */
	ud = gc_cloud_config(&r);
	ud2 = gc_cloud_config(&r);
	assert_non_null(ud);
	assert_string_equal(ud, ud2);
	gc_cloud_config_free(ud);
	gc_cloud_config_free(ud2);
	{
		struct gc_create_request plain = launch_req(1, NULL);
		assert_null(gc_cloud_config(&plain));
	}

	/* the cloud's timer fires once the wall clock passes expires-at */
	advance_ms(2000);
	sim_world_lock(sim.world);
	sim.world->wall_offset_s = expires - (int64_t)time(NULL) + 5;
	sim_world_tick(sim.world);
	for (size_t i = 0; i < got.n; i++)
		assert_int_equal(sim_world_instance(sim.world, SIM_TENCENT, got.items[i].id)->state,
				 SIM_SHUTTING_DOWN);
	sim.world->wall_offset_s = 0;
	sim_world_unlock(sim.world);

	/* a timer less than five minutes away is refused before anything is sent */
	{
		struct gc_create_request soon = launch_req(1, "gc-soon");
		unsigned long calls = prov->stats.calls;

		soon.expires_at = (int64_t)time(NULL) + 60;
		assert_int_equal(gc_provider_create(prov, &soon, &got, &err), -1);
		assert_int_equal(err.code, GC_EINVALID);
		assert_non_null(strstr(err.message, "5 minutes"));
		assert_int_equal(prov->stats.calls, calls);
	}

	gc_instance_list_release(&got);
	free(key_id);
	free(sg_id);
	gc_buf_release(&pub);
	gc_keypair_wipe_buf(&hk_pem);
	gc_buf_release(&hk_pub);
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
	r.type = "GN10Xp.2XLARGE40";
	gc_error_init(&err);
	assert_int_equal(gc_provider_create(prov, &r, &b, &err), -1);
	assert_int_equal(err.code, GC_EIDEMPOTENCY);
	assert_string_equal(err.cloud_code, "InvalidParameter");
	assert_non_null(strstr(err.message, "cannot launch 2 'GN10Xp.2XLARGE40' instances"));
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
	unsigned long calls;

	(void)state;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	warm();
	calls = prov->stats.calls;
	/* the launch happens, the answer is an InternalError: the retry with the token gets
	 * the same instances */
	assert_int_equal(
		sim_faults_add(sim.faults, "tencent:RunInstances:5xx,after=1,times=1", &err), 0);
	launch_ok(&r, &got);
	assert_int_equal(got.n, 3);
	assert_int_equal(world_count(0, true), 4);
	assert_int_equal(prov->stats.calls - calls, 2);
	assert_int_equal(prov->stats.retries, 1);

	/* without a token a repeat could launch twice: not retried */
	r.client_token = NULL;
	assert_int_equal(
		sim_faults_add(sim.faults, "tencent:RunInstances:5xx,after=1,times=1", &err), 0);
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_string_equal(err.cloud_code, "InternalError");
	assert_int_equal(err.http_status, 200);
	assert_int_equal(prov->stats.calls - calls, 1);
	assert_int_equal(world_count(0, true), 7);
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
	json_t *terms;

	(void)state;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	launch_ok(&r, &got);
	advance_ms(2000);
	ids[0] = got.items[0].id;
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	/* terminated, then gone from CVM's listings at once */
	advance_ms(1500);
	sim_world_lock(sim.world);
	assert_null(sim_world_instance(sim.world, SIM_TENCENT, ids[0]));
	sim_world_unlock(sim.world);

	ids[1] = got.items[1].id;
	ids[2] = "ins-0n0tth3r"; /* never existed */
	ids[3] = got.items[2].id;
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_terminate(prov, ids, 4, &err), 0);
	/* NotFound naming the first gone one, then the other, then the rest, then a look */
	assert_int_equal(prov->stats.calls - calls, 4);
	assert_int_equal(world_state(ids[1]), SIM_SHUTTING_DOWN);
	assert_int_equal(world_state(ids[3]), SIM_SHUTTING_DOWN);
	terms = logged("TerminateInstances");
	assert_int_equal(json_array_size(terms), 4);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(terms, 1), "error_code")),
		"InvalidInstanceId.NotFound");
	assert_string_equal(pstr(json_array_get(terms, 3), "InstanceIds.0"), ids[1]);
	assert_string_equal(pstr(json_array_get(terms, 3), "InstanceIds.1"), ids[3]);
	assert_null(param(json_array_get(terms, 3), "InstanceIds.2"));
	json_decref(terms);

	/* only gone ones: done; terminating ones a second time: done too */
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	assert_int_equal(gc_provider_terminate(prov, &ids[2], 1, &err), 0);
	assert_int_equal(gc_provider_terminate(prov, &ids[1], 1, &err), 0);

	/* a malformed id is our bug, not "gone" */
	ids[0] = "i-0123456789abcdef0";
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.cloud_code, "InvalidInstanceId.Malformed");
	gc_instance_list_release(&got);
}

static void test_recycle_bin(void **state)
{
	struct gc_create_request r = launch_req(2, "gc-bin");
	struct gc_instance_list got;
	const char *ids[2];
	struct gc_error err;
	json_t *terms;

	(void)state;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	sim.world->tencent_recycle = true;
	launch_ok(&r, &got);
	advance_ms(2000);
	ids[0] = got.items[0].id;
	ids[1] = got.items[1].id;
	/* the first call puts them in the bin; the driver sees that and sends the second */
	assert_int_equal(gc_provider_terminate(prov, ids, 2, &err), 0);
	assert_int_equal(world_state(ids[0]), SIM_SHUTTING_DOWN);
	assert_int_equal(world_state(ids[1]), SIM_SHUTTING_DOWN);
	terms = logged("TerminateInstances");
	assert_int_equal(json_array_size(terms), 2);
	json_decref(terms);
	advance_ms(1500);
	assert_int_equal(world_count(0, true), 0);

	/* one already in the bin (a run killed between the calls): the call destroys it */
	gc_instance_list_release(&got);
	r.client_token = "gc-bin-2";
	r.count = 1;
	launch_ok(&r, &got);
	advance_ms(2000);
	sim_world_lock(sim.world);
	sim_world_terminate(sim.world, sim_world_instance(sim.world, SIM_TENCENT, got.items[0].id));
	sim_world_unlock(sim.world);
	assert_int_equal(world_state(got.items[0].id), SIM_RECYCLED);
	ids[0] = got.items[0].id;
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	assert_int_equal(world_state(ids[0]), SIM_SHUTTING_DOWN);
	sim.world->tencent_recycle = false;
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
	char *id = NULL, *again = NULL, *foreign = NULL, fpr[GC_SSH_FINGERPRINT_SIZE];
	json_t *lines;

	(void)state;
	gc_error_init(&err);
	gc_resource_list_init(&found);
	assert_int_equal(gc_buf_addstr(&pub, TEST_RSA_A " drv@test"), 0);
	assert_int_equal(gc_buf_addstr(&other, TEST_RSA_B " someone@else"), 0);
	public_line(&ed, "drv@test");

	memset(&kr, 0, sizeof(kr));
	kr.name = "gc_drv_key";
	kr.public_key_line = pub.data;
	kr.tags = base_tags;
	kr.n_tags = 2;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &id, &err), 0);
	assert_true(gc_starts_with(id, "skey-"));
	lines = logged("ImportKeyPair");
	assert_int_equal(json_integer_value(param(json_array_get(lines, 0), "ProjectId")), 0);
	assert_string_equal(pstr(json_array_get(lines, 0), "TagSpecification.0.ResourceType"),
			    "keypair");
	json_decref(lines);

	/* someone's untagged key with a name like ours */
	kr.name = "gc_drv_key_2";
	kr.public_key_line = other.data;
	kr.tags = NULL;
	kr.n_tags = 0;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &foreign, &err), 0);

	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_KEYPAIR, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 1);
	assert_string_equal(found.items[0].id, id);
	assert_string_equal(found.items[0].name, "gc_drv_key");
	assert_int_equal(gc_ssh_fingerprint(fpr, pub.data, NULL), 0);
	assert_string_equal(found.items[0].fingerprint, fpr);
	assert_int_equal(found.items[0].n_tags, 2);
	gc_resource_list_release(&found);

	/* importing our key again (a re-run, or a retry after a lost answer) adopts it */
	kr.name = "gc_drv_key";
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
	assert_string_equal(err.cloud_code, "InvalidKeyPairName.Duplicate");
	assert_null(again);
	/* the cloud takes no Ed25519 key (gpucluster hands its own to cloud-init instead) */
	kr.name = "gc_drv_ed";
	kr.public_key_line = ed.data;
	gc_error_init(&err);
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &again, &err), -1);
	assert_string_equal(err.cloud_code, "InvalidPublicKey.Malformed");
	assert_null(again);

	assert_int_equal(gc_provider_delete_keypair(prov, id, &err), 0);
	assert_int_equal(gc_provider_delete_keypair(prov, id, &err), 0); /* gone: done */
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

static size_t groups_named(const char *name)
{
	struct sim_secgroup **all;
	size_t n, k = 0;

	sim_world_lock(sim.world);
	n = sim_world_list_sgs(sim.world, SIM_TENCENT, REGION, &all);
	for (size_t i = 0; i < n; i++)
		k += !strcmp(all[i]->name, name);
	sim_world_unlock(sim.world);
	free(all);
	return k;
}

static void test_secgroups(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	const char *cidrs[] = { "203.0.113.7/32", "198.51.100.0/24" };
	struct gc_tag foreign_tags[] = { { k_owner, v_owner } };
	struct gc_secgroup_request sr;
	struct gc_resource_list found;
	struct gc_error err;
	char *id = NULL, *foreign = NULL, *lost = NULL;
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
		struct sim_secgroup *g = sim_world_sg(sim.world, SIM_TENCENT, REGION, id);
		assert_non_null(g);
		assert_int_equal(g->n_rules, 3);
		assert_string_equal(g->rules[0].protocol, "tcp");
		assert_int_equal(g->rules[0].from_port, 2222);
		assert_int_equal(g->rules[1].to_port, 2222);
		assert_string_equal(g->rules[1].cidr, "198.51.100.0/24");
		/* the members' rule: every protocol and port from the group itself */
		assert_string_equal(g->rules[2].protocol, "all");
		assert_string_equal(g->rules[2].source_group, id);
		assert_string_equal(g->rules[2].cidr, "");
		assert_string_equal(sim_tags_get(&g->tags, GC_TAG_CLUSTER), CLUSTER);
	}
	sim_world_unlock(sim.world);
	lines = logged("CreateSecurityGroup");
	assert_string_equal(pstr(json_array_get(lines, 0), "ProjectId"), "0");
	assert_string_equal(pstr(json_array_get(lines, 0), "Tags.1.Key"), GC_TAG_GROUP);
	json_decref(lines);
	lines = logged("CreateSecurityGroupPolicies");
	assert_int_equal(json_array_size(lines), 1);
	assert_string_equal(
		pstr(json_array_get(lines, 0), "SecurityGroupPolicySet.Ingress.2.SecurityGroupId"),
		id);
	assert_string_equal(pstr(json_array_get(lines, 0), "SecurityGroupPolicySet.Ingress.2.Port"),
			    "ALL");
	assert_null(param(json_array_get(lines, 0), "SecurityGroupPolicySet.Ingress.2.CidrBlock"));
	json_decref(lines);

	/* a foreign group with a name like ours is not listed */
	sr.name = "gpucluster-drv-other";
	sr.tags = foreign_tags;
	sr.n_tags = 1;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &foreign, &err), 0);
	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_SECGROUP, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 1);
	assert_string_equal(found.items[0].id, id);
	assert_string_equal(found.items[0].name, "gpucluster-drv");
	gc_resource_list_release(&found);
	lines = logged("DescribeSecurityGroups");
	/* the VPC API's Offset and Limit are strings */
	assert_string_equal(pstr(json_array_get(lines, 0), "Limit"), "100");
	json_decref(lines);

	/* a lost answer: the group was made; found by name and tags, not made twice */
	sr.name = "gpucluster-drv-lost";
	sr.tags = base_tags;
	sr.n_tags = 2;
	assert_int_equal(
		sim_faults_add(sim.faults, "tencent:CreateSecurityGroup:5xx,after=1,times=1", &err),
		0);
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &lost, &err), 0);
	assert_int_equal(groups_named("gpucluster-drv-lost"), 1);
	sim_world_lock(sim.world);
	{
		struct sim_secgroup *g = sim_world_sg(sim.world, SIM_TENCENT, REGION, lost);
		assert_int_equal(g->n_rules, 3);
		assert_string_equal(g->rules[2].source_group, lost);
	}
	sim_world_unlock(sim.world);
	assert_int_equal(gc_provider_delete_secgroup(prov, lost, &err), 0);

	/* in use by a running instance, then going */
	secgroup_in_use(id, "ResourceInUse");
	free(id);
	free(foreign);
	free(lost);
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
	expect_image("gpu-ready", true, GPU_READY);
	lines = logged("DescribeImages");
	assert_int_equal(json_array_size(lines), 3);
	assert_string_equal(pstr(json_array_get(lines, 0), "Filters.0.Name"), "image-type");
	assert_string_equal(pstr(json_array_get(lines, 0), "Filters.0.Values.0"), "PUBLIC_IMAGE");
	assert_string_equal(pstr(json_array_get(lines, 0), "Filters.2.Name"), "image-name");
	assert_string_equal(pstr(json_array_get(lines, 0), "Filters.2.Values.0"),
			    "Ubuntu Server 22.04 LTS 64bit");
	json_decref(lines);

	/* cached: neither an alias nor an image seen on the way asks again */
	calls = prov->stats.calls;
	expect_image("ubuntu-22.04", true, UBUNTU);
	expect_image(NOBLE, false, NOBLE);
	assert_int_equal(prov->stats.calls, calls);
	assert_int_equal(gc_provider_resolve_image(prov, "centos-7", true, &id, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "unknown image alias 'centos-7'"));
	assert_int_equal(gc_provider_resolve_image(prov, "img-0n0tth3r", false, &id, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_string_equal(err.message, "image 'img-0n0tth3r' not found in ap-guangzhou");
	assert_int_equal(gc_provider_resolve_image(prov, "debian", false, &id, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_null(id);
}

static void test_types_prices_zones(void **state)
{
	struct gc_type_facts f;
	struct gc_error err;
	double usd = 0;
	unsigned long calls;
	char **zones = NULL;
	size_t n = 0;
	json_t *lines;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_provider_instance_type(prov, TYPE, &f, &err), 0);
	assert_string_equal(f.name, TYPE);
	assert_int_equal(f.vcpus, 8);
	assert_int_equal(f.memory_mib, 32768);
	assert_int_equal(f.gpus, 1);
	assert_string_equal(f.gpu_model, "T4");
	assert_int_equal(f.gpu_memory_mib, 16384);
	assert_int_equal(gc_provider_instance_type(prov, "GT4.41XLARGE948", &f, &err), 0);
	assert_int_equal(f.gpus, 8);
	assert_string_equal(f.gpu_model, "A100");
	assert_int_equal(f.gpu_memory_mib, 40960);
	assert_int_equal(gc_provider_instance_type(prov, "S5.MEDIUM4", &f, &err), 0);
	assert_int_equal(f.gpus, 0);
	assert_string_equal(f.gpu_model, "");
	assert_int_equal(gc_provider_instance_type(prov, "GN99.HUGE", &f, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_non_null(strstr(err.message,
			       "instance type 'GN99.HUGE' is not offered in "
			       "ap-guangzhou"));

	assert_int_equal(gc_provider_price(prov, TYPE, NULL, false, &usd, &err), 0);
	assert_true(usd > 8.679 && usd < 8.681);
	assert_int_equal(gc_provider_price(prov, TYPE, "ap-guangzhou-4", true, &usd, &err), 0);
	assert_true(usd > 8.68 * SIM_SPOT_SHARE - 1e-3 && usd < 8.68 * SIM_SPOT_SHARE + 1e-3);
	lines = logged("InquiryPriceRunInstances");
	assert_int_equal(json_array_size(lines), 2);
	assert_string_equal(pstr(json_array_get(lines, 0), "Placement.Zone"), "ap-guangzhou-3");
	assert_string_equal(pstr(json_array_get(lines, 0), "InstanceChargeType"),
			    "POSTPAID_BY_HOUR");
	assert_int_equal(json_integer_value(param(json_array_get(lines, 0), "InstanceCount")), 1);
	assert_string_equal(pstr(json_array_get(lines, 1), "InstanceChargeType"), "SPOTPAID");
	json_decref(lines);
	assert_int_equal(gc_provider_price(prov, "GN99.HUGE", NULL, false, &usd, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);

	assert_int_equal(gc_provider_zones(prov, &zones, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_string_equal(zones[0], "ap-guangzhou-3");
	assert_string_equal(zones[3], "ap-guangzhou-7");
	gc_strv_free(zones, n);
	assert_int_equal(gc_provider_regions(prov, &zones, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(zones[0], "ap-guangzhou");
	gc_strv_free(zones, n);

	/* all of it cached */
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_instance_type(prov, TYPE, &f, &err), 0);
	assert_int_equal(gc_provider_price(prov, TYPE, NULL, false, &usd, &err), 0);
	assert_int_equal(gc_provider_price(prov, TYPE, "ap-guangzhou-4", true, &usd, &err), 0);
	assert_int_equal(gc_provider_zones(prov, &zones, &n, &err), 0);
	gc_strv_free(zones, n);
	assert_int_equal(prov->stats.calls, calls);

	/* no console output on CVM: the capability is absent and plan can refuse it */
	assert_int_equal(gc_provider_check_caps(prov, GC_CAP_CONSOLE_OUTPUT, &err), -1);
	assert_int_equal(err.code, GC_EUNSUPPORTED);
	assert_int_equal(gc_provider_check_caps(prov,
						GC_CAP_SPOT | GC_CAP_SPOT_MAX_PRICE |
							GC_CAP_CLOUD_TTL | GC_CAP_CLIENT_TOKEN |
							GC_CAP_PRICE,
						&err),
			 0);
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
	char **regions = NULL;
	size_t n = 0;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	warm();
	/* throttling: retried and counted */
	assert_int_equal(
		sim_faults_add(sim.faults, "tencent:DescribeInstances:throttle,times=2", &err), 0);
	s0 = prov->stats;
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(prov->stats.throttled - s0.throttled, 2);
	assert_int_equal(prov->stats.retries - s0.retries, 2);
	assert_int_equal(prov->stats.calls - s0.calls, 3);
	gc_instance_list_release(&got);
	/* capacity: no retry, the engine falls back */
	assert_int_equal(sim_faults_add(sim.faults,
					"tencent:RunInstances:capacity,zone=ap-guangzhou-6", &err),
			 0);
	s0 = prov->stats;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_ECAPACITY);
	assert_string_equal(err.cloud_code, "ResourceInsufficient.SpecifiedInstanceType");
	assert_int_equal(err.http_status, 200);
	assert_int_equal(strlen(err.request_id), 36);
	assert_non_null(strstr(err.message,
			       "cannot launch 2 'GN7.2XLARGE32' instances in 'ap-guangzhou-6'"));
	assert_int_equal(prov->stats.calls - s0.calls, 1);
	r.zone = "ap-guangzhou-7";
	launch_ok(&r, &got);
	/* quota: no retry */
	sim_faults_clear(sim.faults);
	assert_int_equal(sim_faults_add(sim.faults, "tencent:RunInstances:quota,times=1", &err), 0);
	r.client_token = "gc-faults-2";
	s0 = prov->stats;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_EQUOTA);
	assert_string_equal(err.cloud_code, "LimitExceeded.InstanceQuota");
	assert_int_equal(prov->stats.calls - s0.calls, 1);
	/* an InternalError and a dropped connection: retried */
	assert_int_equal(sim_faults_add(sim.faults, "tencent:DescribeRegions:5xx,times=1", &err),
			 0);
	assert_int_equal(sim_faults_add(sim.faults, "tencent:DescribeRegions:drop,times=1", &err),
			 0);
	s0 = prov->stats;
	assert_int_equal(gc_provider_regions(prov, &regions, &n, &err), 0);
	assert_int_equal(n, 3);
	gc_strv_free(regions, n);
	assert_true(prov->stats.retries - s0.retries >= 1);
	assert_int_equal(prov->stats.throttled - s0.throttled, 0);
	{
		json_t *lines = logged("DescribeRegions");
		size_t k = json_array_size(lines);

		assert_true(k >= 3);
		assert_string_equal(json_string_value(json_object_get(json_array_get(lines, k - 3),
								      "error_code")),
				    "InternalError");
		assert_int_equal(
			json_integer_value(json_object_get(json_array_get(lines, k - 2), "status")),
			0);
		assert_true(
			json_is_null(json_object_get(json_array_get(lines, k - 1), "error_code")));
		json_decref(lines);
	}
	/* an InternalError that does not stop: given up after the policy's attempts */
	assert_int_equal(sim_faults_add(sim.faults, "tencent:DescribeRegions:5xx", &err), 0);
	s0 = prov->stats;
	regions = NULL;
	assert_int_equal(gc_provider_regions(prov, &regions, &n, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_non_null(strstr(err.message, "gave up after 5 attempts"));
	assert_int_equal(prov->stats.calls - s0.calls, 5);
	assert_null(regions);
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
	envv.secret = "not-the-secret-of-this-key-000000";
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), 0);
	assert_int_equal(gc_provider_zones(bad, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "AuthFailure.SignatureFailure");
	assert_int_equal(bad->stats.calls, 1);
	gc_provider_close(bad);
	envv.key_id = "AKIDunknownkey000000";
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), 0);
	assert_int_equal(gc_provider_zones(bad, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "AuthFailure.SecretIdNotFound");
	gc_provider_close(bad);
	envv.key_id = SECRET_ID;
	envv.secret = SECRET_KEY;

	/* a clock an hour off: signed again once, then reported */
	sim.cfg.clock_offset_s = 3600;
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), 0);
	assert_int_equal(gc_provider_zones(bad, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "AuthFailure.SignatureExpire");
	assert_int_equal(bad->stats.calls, 2);
	gc_provider_close(bad);
	sim.cfg.clock_offset_s = 0;

	/* no credentials at all: open fails and says where it looked */
	envv.key_id = NULL;
	envv.secret = NULL;
	bad = NULL;
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "TENCENTCLOUD_SECRET_ID"));
	assert_non_null(strstr(err.message, "~/.tccli/default.credential"));
	assert_non_null(strstr(err.message, "TENCENTCLOUD_CVM_ROLE_DISABLED"));
	assert_null(bad);
	envv.key_id = SECRET_ID;
	envv.secret = SECRET_KEY;
}

/* Temporary keys about to expire are resolved again before the next call. */
static void test_refresh(void **state)
{
	struct tc_driver *d = tc_driver(prov);
	struct gc_error err;
	char **zones = NULL;
	size_t n = 0;

	(void)state;
	gc_error_init(&err);
	free(d->creds.source);
	d->creds.source = gc_xstrdup("a test's role");
	d->creds.expiration = (int64_t)time(NULL) + 60; /* within the five minutes */
	assert_int_equal(gc_provider_zones(prov, &zones, &n, &err), 0);
	gc_strv_free(zones, n);
	assert_int_equal(d->creds.expiration, 0);
	assert_string_equal(d->creds.source, "environment");

	/* renewal fails but the keys still hold for a minute: carry on */
	d->creds.expiration = (int64_t)time(NULL) + 60;
	envv.key_id = NULL;
	envv.secret = NULL;
	assert_int_equal(gc_provider_regions(prov, &zones, &n, &err), 0);
	gc_strv_free(zones, n);
	/* and once they are gone, the call fails naming that */
	d->creds.expiration = (int64_t)time(NULL) - 1;
	assert_int_equal(gc_provider_regions(prov, &zones, &n, &err), -1);
	assert_non_null(strstr(err.message, "the Tencent Cloud credentials expired"));
	envv.key_id = SECRET_ID;
	envv.secret = SECRET_KEY;
}

/* The caller's cancel reaches a wait on our own buckets: the RunInstances bucket holds
 * ten launches. */
static void test_cancel_in_rate_wait(void **state)
{
	(void)state;
	launch_burst_then_cancel(10);
}

/* ---- the emulator's default VPC, subnets and launch checks ---------------------------- */

static void test_vpc_frontend(void **state)
{
	json_t *resp = NULL, *params, *set;
	struct gc_error err;
	char subnet[SIM_ID_MAX], other[SIM_ID_MAX];

	(void)state;
	gc_error_init(&err);
	tc_default_subnet(ZONE, subnet);
	tc_default_subnet("ap-guangzhou-3", other);
	assert_true(gc_starts_with(subnet, "subnet-"));
	assert_int_equal(strlen(subnet), 15);
	assert_string_not_equal(subnet, other);

	params = json_pack("{s:[{s:s, s:[s]}]}", "Filters", "Name", "is-default", "Values", "true");
	assert_int_equal(tc_call(prov, TC_VPC, "DescribeVpcs", params, false, &resp, &err), 0);
	json_decref(params);
	assert_int_equal(json_integer_value(json_object_get(resp, "TotalCount")), 1);
	set = json_object_get(resp, "VpcSet");
	assert_string_equal(json_string_value(json_object_get(json_array_get(set, 0), "VpcId")),
			    TC_DEFAULT_VPC);
	assert_true(json_is_true(json_object_get(json_array_get(set, 0), "IsDefault")));
	json_decref(resp);
	params =
		json_pack("{s:[{s:s, s:[s]}]}", "Filters", "Name", "is-default", "Values", "false");
	assert_int_equal(tc_call(prov, TC_VPC, "DescribeVpcs", params, false, &resp, &err), 0);
	json_decref(params);
	assert_int_equal(json_integer_value(json_object_get(resp, "TotalCount")), 0);
	json_decref(resp);

	/* one default subnet per zone; filtered by zone */
	assert_int_equal(tc_call(prov, TC_VPC, "DescribeSubnets", NULL, false, &resp, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(resp, "TotalCount")), 4);
	json_decref(resp);
	params = json_pack("{s:[{s:s, s:[s]}, {s:s, s:[s]}], s:s, s:s}", "Filters", "Name",
			   "vpc-id", "Values", TC_DEFAULT_VPC, "Name", "zone", "Values", ZONE,
			   "Offset", "0", "Limit", "100");
	assert_int_equal(tc_call(prov, TC_VPC, "DescribeSubnets", params, false, &resp, &err), 0);
	json_decref(params);
	set = json_object_get(resp, "SubnetSet");
	assert_int_equal(json_array_size(set), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(set, 0), "SubnetId")),
			    subnet);
	assert_string_equal(json_string_value(json_object_get(json_array_get(set, 0), "Zone")),
			    ZONE);
	json_decref(resp);
	params = json_pack("{s:[{s:s, s:[s]}]}", "Filters", "Name", "vpc-name", "Values", "x");
	assert_int_equal(tc_call(prov, TC_VPC, "DescribeSubnets", params, false, &resp, &err), -1);
	assert_string_equal(err.cloud_code, "InvalidFilter");
	json_decref(params);

	/* a launch names a subnet of the zone it goes to */
	{
		static const struct {
			const char *vpc, *subnet, *code;
		} cases[] = {
			{ TC_DEFAULT_VPC, NULL, "InvalidParameterValue.SubnetIdZoneIdNotMatch" },
			{ TC_DEFAULT_VPC, "subnet-0n0tth3r",
			  "InvalidParameterValue.SubnetNotExist" },
			{ "vpc-0n0tth3r", NULL, "InvalidParameterValue.VpcIdNotExist" },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			params = json_pack("{s:{s:s}, s:s, s:s, s:{s:s, s:s}, s:b}", "Placement",
					   "Zone", ZONE, "ImageId", UBUNTU, "InstanceType", TYPE,
					   "VirtualPrivateCloud", "VpcId", cases[i].vpc, "SubnetId",
					   cases[i].subnet ? cases[i].subnet : other, "DryRun", 1);
			gc_error_init(&err);
			assert_int_equal(
				tc_call(prov, TC_CVM, "RunInstances", params, false, &resp, &err),
				-1);
			assert_string_equal(err.cloud_code, cases[i].code);
			assert_int_equal(err.code, GC_EINVALID);
			json_decref(params);
		}
	}
	/* "DEFAULT" twice is the documented way to ask for the default VPC */
	params = json_pack("{s:{s:s}, s:s, s:s, s:{s:s, s:s}, s:s}", "Placement", "Zone", ZONE,
			   "ImageId", UBUNTU, "InstanceType", TYPE, "VirtualPrivateCloud", "VpcId",
			   "DEFAULT", "SubnetId", "DEFAULT", "ClientToken", "gc-default-vpc");
	assert_int_equal(tc_call(prov, TC_CVM, "RunInstances", params, false, &resp, &err), 0);
	json_decref(params);
	set = json_object_get(resp, "InstanceIdSet");
	sim_world_lock(sim.world);
	assert_string_equal(sim_world_instance(sim.world, SIM_TENCENT,
					       json_string_value(json_array_get(set, 0)))
				    ->subnet,
			    subnet);
	sim_world_unlock(sim.world);
	json_decref(resp);
}

/* ---- a server that answers what no cloud should ------------------------------------------- */

static void test_bad_answers(void **state)
{
	static const struct scripted garbage[] = { { 200, "{{{ this is not json", NULL } };
	static const struct scripted garbage500[] = { { 500, "{{{ this is not json", NULL } };
	static const struct scripted no_response[] = {
		{ 200, "{\"Answer\":{\"ZoneSet\":[]}}", NULL },
	};
	static const struct scripted huge[] = { { 200, NULL, NULL } };
	struct MHD_Daemon *d;
	struct gc_provider *p = NULL;
	struct gc_error err;
	char **zones = NULL;
	size_t n = 0;

	(void)state;
	d = scripted_start(&p);
	gc_error_init(&err);

	run_script(p, garbage, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "DescribeZones"));
	assert_int_equal(p->stats.calls, 1);
	run_script(p, no_response, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "not a Response document"));
	run_script(p, garbage500, 1); /* a gateway's 500: transient, retried */
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

/* The classification table on its own: every class of WIRE.md 3.5. */
static void test_classify(void **state)
{
	static const struct {
		const char *code;
		enum gc_errcode want;
	} cases[] = {
		{ "RequestLimitExceeded", GC_ETHROTTLED },
		{ "RequestLimitExceeded.UinLimitExceeded", GC_ETHROTTLED },
		{ "RequestLimitExceeded.GlobalRegionUinLimitExceeded", GC_ETHROTTLED },
		{ "ResourceInsufficient.SpecifiedInstanceType", GC_ECAPACITY },
		{ "ResourceInsufficient.AvailabilityZoneSoldOut", GC_ECAPACITY },
		{ "ResourcesSoldOut.SpecifiedInstanceType", GC_ECAPACITY },
		{ "ResourcesSoldOut.AvailableZone", GC_ECAPACITY },
		{ "ResourcesSoldOut.EipInsufficient", GC_ECAPACITY },
		{ "ResourceUnavailable.InstanceType", GC_ECAPACITY },
		{ "InvalidParameterValue.InsufficientOffering", GC_ECAPACITY },
		{ "InvalidParameterValue.InsufficientPrice", GC_ECAPACITY },
		{ "UnsupportedOperation.NoInstanceTypeSupportSpot", GC_ECAPACITY },
		{ "LimitExceeded.SpotQuota", GC_ECAPACITY },
		{ "LimitExceeded.InstanceQuota", GC_EQUOTA },
		{ "LimitExceeded.UserSpotQuota", GC_EQUOTA },
		{ "LimitExceeded.SingleUSGQuota", GC_EQUOTA },
		{ "InstancesQuotaLimitExceeded", GC_EQUOTA },
		{ "InvalidKeyPair.LimitExceeded", GC_EQUOTA },
		{ "ResourceInsufficient.InsufficientGroupQuota", GC_EQUOTA },
		{ "InvalidAccount.InsufficientBalance", GC_EQUOTA },
		{ "AuthFailure.SignatureFailure", GC_EAUTH },
		{ "AuthFailure.SecretIdNotFound", GC_EAUTH },
		{ "AuthFailure.SignatureExpire", GC_EAUTH },
		{ "AuthFailure.TokenFailure", GC_EAUTH },
		{ "UnauthorizedOperation", GC_EAUTH },
		{ "InvalidInstanceId.NotFound", GC_ENOTFOUND },
		{ "InvalidKeyPairId.NotFound", GC_ENOTFOUND },
		{ "ResourceNotFound", GC_ENOTFOUND },
		{ "InternalError", GC_ETRANSIENT },
		{ "InternalError.TradeUnknownError", GC_ETRANSIENT },
		{ "InternalServerError", GC_ETRANSIENT },
		{ "ServiceUnavailable", GC_ETRANSIENT },
		{ "InvalidParameter", GC_EINVALID },
		{ "InvalidParameterValue", GC_EINVALID },
		{ "UnknownParameter", GC_EINVALID },
		{ "InvalidClientToken.TooLong", GC_EINVALID },
		{ "InvalidInstanceId.Malformed", GC_EINVALID },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (tc_classify(cases[i].code, 200) != cases[i].want)
			fail_msg("'%s' is %s, not %s", cases[i].code,
				 gc_strerror(tc_classify(cases[i].code, 200)),
				 gc_strerror(cases[i].want));
	assert_int_equal(tc_classify(NULL, 502), GC_ETRANSIENT);
	assert_int_equal(tc_classify(NULL, 429), GC_ETHROTTLED);
	assert_int_equal(tc_classify(NULL, 403), GC_EAUTH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_discover_pages, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_discover_states, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_create_spot_ttl_host_key, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_client_token, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_lost_answer, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_terminate_gone, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_recycle_bin, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_keypairs, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_secgroups, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_images, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_types_prices_zones, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_faults, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_auth, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_refresh, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_cancel_in_rate_wait, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_vpc_frontend, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_bad_answers, test_setup, test_teardown),
		cmocka_unit_test(test_classify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
