/*
 * test-tencent-driver.c: what only the Tencent Cloud CVM driver (providers/tencent) does,
 * through the provider wrappers, against the emulator served in-process on 127.0.0.1
 * (its CVM and VPC frontend behind libmicrohttpd, a world on the fake clock), and against
 * a small fake server for answers no cloud gives. What every driver does is in the
 * conformance suite (driver-conformance.c, sim.driver.tencent), with CVM's description in
 * driver-tencent.h.
 *
 * Covered: CVM's states (the recycle bin's SHUTDOWN, TERMINATING, gone at once); a spot
 * launch with its ActionTimer, the default VPC's subnet in the zone, the batch's SSH host
 * key in the cloud-init user-data the emulator received, and every RunInstances parameter
 * on the wire; a timer too close refused; the recycle bin emptied by a second call;
 * credentials renewed before they expire; the emulator's DescribeVpcs / DescribeSubnets
 * and its subnet checks on launch; an answer that is not a Response document; the error
 * classification table.
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
#include "core/retry.h"
#include "core/str.h"
#include "driver-fixture.h"
#include "driver-tencent.h"
#include "providers/tencent/cvm.h"
#include "sim/catalog.h"
#include "sim/network.h"
#include "sim/sim.h"
#include "sim/tencent/cvm.h"
#include "ssh-test-keys.h"

static int test_setup(void **state)
{
	return drv_setup(state, &drv_tencent);
}

/* ---- discover -------------------------------------------------------------------------- */

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
		assert_string_equal(got.items[i].zone, DRV_TC_ZONE);
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
	assert_int_equal(json_integer_value(jparam(run, "Placement.ProjectId")), 0);
	assert_int_equal(json_integer_value(jparam(run, "InstanceCount")), 2);
	assert_int_equal(json_integer_value(jparam(run, "MinCount")), 2);
	assert_string_equal(pstr(run, "SystemDisk.DiskType"), "CLOUD_PREMIUM");
	assert_int_equal(json_integer_value(jparam(run, "SystemDisk.DiskSize")), 200);
	assert_true(json_is_true(jparam(run, "SystemDisk.Encrypt")));
	assert_string_equal(pstr(run, "VirtualPrivateCloud.VpcId"), TC_DEFAULT_VPC);
	assert_string_equal(pstr(run, "VirtualPrivateCloud.SubnetId"), subnet);
	assert_string_equal(pstr(run, "InternetAccessible.InternetChargeType"),
			    "TRAFFIC_POSTPAID_BY_HOUR");
	assert_true(json_integer_value(jparam(run, "InternetAccessible.InternetMaxBandwidthOut")) >
		    0);
	assert_true(json_is_true(jparam(run, "InternetAccessible.PublicIpAssigned")));
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

/* ---- terminate --------------------------------------------------------------------------- */

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

/* ---- credentials ----------------------------------------------------------------------- */

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
	envv.key_id = DRV_TC_SECRET_ID;
	envv.secret = DRV_TC_SECRET_KEY;
}

/* ---- the emulator's default VPC, subnets and launch checks ---------------------------- */

static void test_vpc_frontend(void **state)
{
	json_t *resp = NULL, *params, *set;
	struct gc_error err;
	char subnet[SIM_ID_MAX], other[SIM_ID_MAX];

	(void)state;
	gc_error_init(&err);
	tc_default_subnet(DRV_TC_ZONE, subnet);
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
	/* the one that is not default is the user's own (sim/network.h) */
	assert_int_equal(json_integer_value(json_object_get(resp, "TotalCount")), 1);
	assert_true(sim_user_vpc_is(
		sim_catalog_region(SIM_TENCENT, "ap-guangzhou"),
		json_string_value(json_object_get(
			json_array_get(json_object_get(resp, "VpcSet"), 0), "VpcId"))));
	json_decref(resp);

	/* one default subnet per zone, and one of the user's VPC; filtered by zone */
	assert_int_equal(tc_call(prov, TC_VPC, "DescribeSubnets", NULL, false, &resp, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(resp, "TotalCount")), 8);
	json_decref(resp);
	params = json_pack("{s:[{s:s, s:[s]}, {s:s, s:[s]}], s:s, s:s}", "Filters", "Name",
			   "vpc-id", "Values", TC_DEFAULT_VPC, "Name", "zone", "Values",
			   DRV_TC_ZONE, "Offset", "0", "Limit", "100");
	assert_int_equal(tc_call(prov, TC_VPC, "DescribeSubnets", params, false, &resp, &err), 0);
	json_decref(params);
	set = json_object_get(resp, "SubnetSet");
	assert_int_equal(json_array_size(set), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(set, 0), "SubnetId")),
			    subnet);
	assert_string_equal(json_string_value(json_object_get(json_array_get(set, 0), "Zone")),
			    DRV_TC_ZONE);
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
					   "Zone", DRV_TC_ZONE, "ImageId", DRV_TC_UBUNTU,
					   "InstanceType", DRV_TC_TYPE, "VirtualPrivateCloud",
					   "VpcId", cases[i].vpc, "SubnetId",
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
	params = json_pack("{s:{s:s}, s:s, s:s, s:{s:s, s:s}, s:s}", "Placement", "Zone",
			   DRV_TC_ZONE, "ImageId", DRV_TC_UBUNTU, "InstanceType", DRV_TC_TYPE,
			   "VirtualPrivateCloud", "VpcId", "DEFAULT", "SubnetId", "DEFAULT",
			   "ClientToken", "gc-default-vpc");
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

/* An answer in JSON but not CVM's Response envelope (the shared cases are in the
 * conformance suite). */
static void test_not_a_response(void **state)
{
	static const struct scripted no_response[] = {
		{ 200, "{\"Answer\":{\"ZoneSet\":[]}}", NULL },
	};
	struct MHD_Daemon *d;
	struct gc_provider *p = NULL;
	struct gc_error err;
	char **zones = NULL;
	size_t n = 0;

	(void)state;
	d = scripted_start(&p);
	gc_error_init(&err);
	run_script(p, no_response, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_non_null(strstr(err.message, "DescribeZones"));
	assert_non_null(strstr(err.message, "not a Response document"));
	assert_null(zones);
	scripted_stop(d, p);
}

/* The actions the shared answers suite (driver-answers.c) does not bend: a price, the
 * regions, a group's rules. Each wrong answer is invalid-response naming the action, sent
 * at most GC_RETRY_BADRESPONSE_MAX_ATTEMPTS times; the cloud healthy again, it works. */
enum more_op { MORE_PRICE, MORE_REGIONS, MORE_POLICIES };

static int more_call(enum more_op op, struct gc_error *err)
{
	static const char *const cidrs[] = { "203.0.113.7/32" };
	struct gc_secgroup_request sr;
	char **names = NULL, *id = NULL;
	size_t n = 0;
	double usd = 0;
	char cur[GC_CURRENCY_SIZE];
	int rc = -1;

	gc_error_init(err);
	switch (op) {
	case MORE_PRICE:
		rc = gc_provider_price(prov, DRV_TC_TYPE, NULL, false, &usd, cur, err);
		break;
	case MORE_REGIONS:
		rc = gc_provider_regions(prov, &names, &n, err);
		if (rc == 0)
			assert_true(n > 0);
		gc_strv_free(names, n);
		break;
	case MORE_POLICIES:
		memset(&sr, 0, sizeof(sr));
		sr.name = "gpucluster-answers";
		sr.description = "gpucluster answers";
		sr.ssh_port = 22;
		sr.allow_from = cidrs;
		sr.n_allow_from = 1;
		sr.tags = base_tags;
		sr.n_tags = 2;
		rc = gc_provider_create_secgroup(prov, &sr, &id, err);
		free(id);
		break;
	}
	return rc;
}

static void test_more_answers(void **state)
{
	static const struct {
		enum more_op op;
		const char *action;
	} ops[] = {
		{ MORE_PRICE, "InquiryPriceRunInstances" },
		{ MORE_REGIONS, "DescribeRegions" },
		{ MORE_POLICIES, "DescribeSecurityGroupPolicies" },
	};
	static const char *const modes[] = { "empty-envelope", "wrong-document", "html" };
	struct gc_error err;
	char rule[160];

	(void)state;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
			size_t before = logged_count(ops[i].action), sent;

			sim_faults_clear(sim.faults);
			snprintf(rule, sizeof(rule), "%s:hostile,mode=%s", ops[i].action, modes[m]);
			add_fault(rule);
			if (more_call(ops[i].op, &err) == 0)
				fail_msg("%s under %s: read as a good answer", ops[i].action,
					 modes[m]);
			sent = logged_count(ops[i].action) - before;
			if (err.code != GC_EBADRESPONSE)
				fail_msg("%s under %s: %s: %s", ops[i].action, modes[m],
					 gc_strerror(err.code), err.message);
			assert_non_null(strstr(err.message, ops[i].action));
			assert_true(sent >= 1 && sent <= GC_RETRY_BADRESPONSE_MAX_ATTEMPTS);
		}
		sim_faults_clear(sim.faults);
		if (more_call(ops[i].op, &err) != 0)
			fail_msg("%s, healthy again: %s", ops[i].action, err.message);
	}
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
		/* the type cannot launch there (fabric.md, "Type not supported here") */
		{ "InvalidParameterValue.InstanceTypeNotSupportHpcCluster", GC_ENOTHERE },
		{ "ResourceNotFound.InvalidZoneInstanceType", GC_ENOTHERE },
		{ "LimitExceeded.SpotQuota", GC_ESPOTQUOTA },
		{ "LimitExceeded.InstanceQuota", GC_EQUOTA },
		{ "LimitExceeded.UserSpotQuota", GC_ESPOTQUOTA },
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
		cmocka_unit_test_setup_teardown(test_discover_states, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_create_spot_ttl_host_key, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_recycle_bin, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_refresh, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_vpc_frontend, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_not_a_response, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_more_answers, test_setup, test_teardown),
		cmocka_unit_test(test_classify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
