/*
 * test-alibaba-driver.c: what only the Alibaba Cloud ECS driver (providers/alibaba) does,
 * through the provider wrappers, against the emulator served in-process on 127.0.0.1
 * (its ECS, VPC and STS frontends behind libmicrohttpd, a world on the fake clock), and
 * against a small scripted server for answers the emulator does not give. What every
 * driver does is in the conformance suite (driver-conformance.c, sim.driver.alibaba),
 * with ECS's description in driver-alibaba.h (which also checks, after every test, that
 * the emulator refused none of the driver's requests as malformed).
 *
 * Covered: instances being released (Stopping, then gone); a spot launch with and
 * without a bid in the default VPC's vSwitch of the zone, its AutoReleaseTime (floored
 * to the minute, at least 30 minutes away) and every RunInstances parameter on the wire;
 * a disk ECS cannot make; a launch in no zone; credentials from a RamRoleArn profile
 * through STS and their renewal; our per-minute window and a cancel while waiting on it;
 * retry hints, clock and nonce complaints, a token still processing, an account in
 * arrears; answers of the wrong shape on DescribePrice, GetInstanceConsoleOutput and
 * DescribeSecurityGroupAttribute (issue 19; the other actions: driver-answers.c).
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
#include "driver-alibaba.h"
#include "driver-fixture.h"
#include "providers/alibaba/ecs.h"
#include "sim/catalog.h"
#include "sim/sim.h"
#include "ssh-test-keys.h"

#define VSW(z) "vsw-gpuclustersim-" z

static int test_setup(void **state)
{
	return drv_setup(state, &drv_alibaba);
}

/* ---- discover -------------------------------------------------------------------------- */

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
	sg_id = drv_ali_make_sg("gpucluster-drv", base_tags, 1);

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
	assert_string_equal(param(run, "RegionId"), DRV_ALI_REGION);
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
	assert_string_equal(param(run, "SystemDisk.Encrypted"), "true");
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

/* ---- credentials and our own window ------------------------------------------------- */

/* A RamRoleArn profile: the driver assumes the role at the emulator's STS, works with the
 * temporary key, and assumes it again before it expires. */
static void test_sts_profile(void **state)
{
	static const char cfg[] =
		"{\"current\":\"default\",\"profiles\":[{\"name\":\"default\",\"mode\":\"AK\","
		"\"access_key_id\":\"LTAIwrong\",\"access_key_secret\":\"wrong\"},"
		"{\"name\":\"ci\",\"mode\":\"RamRoleArn\",\"access_key_id\":\"" DRV_ALI_AKID
		"\",\"access_key_secret\":\"" DRV_ALI_SECRET
		"\",\"ram_role_arn\":\"acs:ram::5123456789012345:role/gpucluster\","
		"\"ram_session_name\":\"drv-test\",\"expired_seconds\":900,"
		"\"region_id\":\"" DRV_ALI_REGION "\"}]}";
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

/* ---- answers of the wrong shape on the actions the shared suite does not bend ---------- */

enum bent { BENT_PRICE, BENT_CONSOLE, BENT_RULES };

static int bent_call(enum bent what, const char *id, const char *sg, struct gc_error *err)
{
	const char *cidrs[] = { "203.0.113.7/32" };
	struct gc_secgroup_request sr;
	char *out = NULL;
	double price = -1;
	char cur[GC_CURRENCY_SIZE];
	int rc = -1;

	gc_error_init(err);
	switch (what) {
	case BENT_PRICE:
		rc = gc_provider_price(prov, drv->types[0].name, drv->price_zone, false, &price,
				       cur, err);
		if (rc == 0)
			assert_true(price > 0);
		break;
	case BENT_CONSOLE: rc = gc_provider_console_output(prov, id, &out, err); break;
	case BENT_RULES:
		memset(&sr, 0, sizeof(sr));
		sr.id = sg;
		sr.name = "gpucluster-drv";
		sr.ssh_port = 22;
		sr.allow_from = cidrs;
		sr.n_allow_from = 1;
		sr.tags = base_tags;
		sr.n_tags = 1;
		rc = gc_provider_create_secgroup(prov, &sr, &out, err);
		break;
	}
	free(out);
	return rc;
}

/* DescribePrice, GetInstanceConsoleOutput and DescribeSecurityGroupAttribute refuse an
 * HTML page, an empty document or another action's answer as invalid-response, naming
 * the action, sent at most three times; and read the healthy answer after. */
static void test_bad_answers_more(void **state)
{
	static const char *const modes[] = { "empty-envelope", "wrong-document", "html" };
	static const struct {
		enum bent what;
		const char *action;
	} bends[] = {
		{ BENT_PRICE, "DescribePrice" },
		{ BENT_CONSOLE, "GetInstanceConsoleOutput" },
		{ BENT_RULES, "DescribeSecurityGroupAttribute" },
	};
	struct gc_create_request r = launch_req(1, "gc-bent");
	struct gc_instance_list got;
	struct gc_error err;
	char rule[160];

	(void)state;
	gc_instance_list_init(&got);
	launch_ok(&r, &got);
	assert_int_equal(got.n, 1);
	for (size_t b = 0; b < sizeof(bends) / sizeof(bends[0]); b++) {
		for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
			size_t before = logged_count(bends[b].action), sent;

			sim_faults_clear(sim.faults);
			snprintf(rule, sizeof(rule), "%s:hostile,mode=%s", bends[b].action,
				 modes[m]);
			add_fault(rule);
			if (bent_call(bends[b].what, got.items[0].id, drv_ali_sg, &err) == 0)
				fail_msg("%s under %s: read as a good answer", bends[b].action,
					 modes[m]);
			sent = logged_count(bends[b].action) - before;
			if (err.code != GC_EBADRESPONSE)
				fail_msg("%s under %s: %s: %s", bends[b].action, modes[m],
					 gc_strerror(err.code), err.message);
			assert_non_null(strstr(err.message, bends[b].action));
			assert_true(sent >= 1 && sent <= 3);
		}
		sim_faults_clear(sim.faults);
		if (bent_call(bends[b].what, got.items[0].id, drv_ali_sg, &err) != 0)
			fail_msg("%s, healthy again: %s", bends[b].action, err.message);
	}
	gc_instance_list_release(&got);
}

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

	scripted_stop(d, p);
}

/* A type that cannot launch there is not-here, not a stock-out (fabric.md, "Type not
 * supported here"); the engine turns it back into one outside a placement group. */
static void test_classify_not_here(void **state)
{
	(void)state;
	assert_int_equal(ali_classify("InvalidResourceType.NotSupported", 400), GC_ENOTHERE);
	assert_int_equal(ali_classify("InvalidInstanceType.ZoneNotSupported", 400), GC_ENOTHERE);
	assert_int_equal(ali_classify("OperationDenied.NoStock", 403), GC_ECAPACITY);
	assert_int_equal(ali_classify("DeploymentSet.InstanceLimitExceeded", 403), GC_ECAPACITY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_not_here),
		cmocka_unit_test_setup_teardown(test_discover_states, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_create_spot_ttl, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_any_zone, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_sts_profile, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_rate_limit_and_cancel, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_bad_answers_more, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_scripted, test_setup, test_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
