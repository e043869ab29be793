/*
 * driver-tencent.h: the Tencent Cloud CVM driver as the driver tests see it
 * (driver-fixture.h): its region, zones, types and images in the emulator, its
 * credentials, what its answers and errors look like (errors inside a 200 answer), and
 * the checks only CVM has (JSON parameters on the wire, read by dotted path; policies
 * named by group; no console output). Header-only, after driver-fixture.h.
 */
#ifndef GC_TEST_DRIVER_TENCENT_H
#define GC_TEST_DRIVER_TENCENT_H

#include "core/str.h"
#include "driver-fixture.h"
#include "providers/tencent/cvm.h"
#include "providers/tencent/tencent.h"
#include "sim/catalog.h"

#define DRV_TC_SECRET_ID  "AKIDgpuclustersim001"
#define DRV_TC_SECRET_KEY "gpucluster-sim-tencent-secret-000000"
#define DRV_TC_REGION	  "ap-guangzhou"
#define DRV_TC_ZONE	  "ap-guangzhou-6"
#define DRV_TC_UBUNTU	  "img-487zeit5"
#define DRV_TC_NOBLE	  "img-mmytdhbn"
#define DRV_TC_GPU_READY  "img-9qrfy1xt"
#define DRV_TC_TYPE	  "GN7.2XLARGE32"

/* A parameter of a logged call by dotted path ("Placement.Zone", "Filters.0.Name"). */
static json_t *jparam(json_t *line, const char *path)
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
	return json_string_value(jparam(line, path));
}

/* Resolves the launch image and subnet once, so a test's call counts are the launches. */
/* A launch warms the image, the zones, the default VPC and its subnet; its instance is
 * then terminated in the world and the request log emptied, so that what a case counts
 * after (instances running, RunInstances sent) is its own launches alone. */
static void drv_tc_warm(void)
{
	struct gc_create_request r = launch_req(1, "gc-warm");
	struct gc_instance_list got;

	gc_instance_list_init(&got);
	launch_ok(&r, &got);
	sim_world_lock(sim.world);
	for (size_t i = 0; i < got.n; i++) {
		struct sim_instance *in =
			sim_world_instance(sim.world, SIM_TENCENT, got.items[i].id);

		if (in)
			sim_world_terminate(sim.world, in);
	}
	sim_world_unlock(sim.world);
	assert_int_equal(truncate(logpath, 0), 0);
	gc_instance_list_release(&got);
}

static void drv_tc_discover_wire(json_t *pages)
{
	assert_int_equal(json_integer_value(jparam(json_array_get(pages, 0), "Limit")),
			 TC_PAGE_SIZE);
	assert_int_equal(json_integer_value(jparam(json_array_get(pages, 0), "Offset")), 0);
	assert_int_equal(json_integer_value(jparam(json_array_get(pages, 1), "Offset")),
			 TC_PAGE_SIZE);
	assert_string_equal(pstr(json_array_get(pages, 0), "Filters.0.Name"),
			    "tag:" GC_TAG_CLUSTER);
	assert_string_equal(pstr(json_array_get(pages, 0), "Filters.0.Values.0"), CLUSTER);
	assert_null(jparam(json_array_get(pages, 0), "Filters.1"));
}

static void drv_tc_discover_by_key_wire(json_t *pages)
{
	assert_string_equal(pstr(json_array_get(pages, 12), "Filters.0.Name"), "tag-key");
	assert_string_equal(pstr(json_array_get(pages, 12), "Filters.0.Values.0"), "team");
}

/* NotFound naming the first gone one, then the other, then the rest, then a look. */
static void drv_tc_terminate_wire(const char *const *ids)
{
	json_t *terms = logged("TerminateInstances");

	assert_int_equal(json_array_size(terms), 4);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(terms, 1), "error_code")),
		"InvalidInstanceId.NotFound");
	assert_string_equal(pstr(json_array_get(terms, 3), "InstanceIds.0"), ids[1]);
	assert_string_equal(pstr(json_array_get(terms, 3), "InstanceIds.1"), ids[3]);
	assert_null(jparam(json_array_get(terms, 3), "InstanceIds.2"));
	json_decref(terms);
}

static void drv_tc_keypairs_wire(void)
{
	json_t *lines = logged("ImportKeyPair");

	assert_int_equal(json_integer_value(jparam(json_array_get(lines, 0), "ProjectId")), 0);
	assert_string_equal(pstr(json_array_get(lines, 0), "TagSpecification.0.ResourceType"),
			    "keypair");
	json_decref(lines);
}

static void drv_tc_secgroup_world(const struct sim_secgroup *g, const char *id)
{
	assert_int_equal(g->n_rules, 3);
	/* the members' rule: every protocol and port from the group itself */
	assert_string_equal(g->rules[2].protocol, "all");
	assert_string_equal(g->rules[2].source_group, id);
	assert_string_equal(g->rules[2].cidr, "");
}

static void drv_tc_secgroup_wire(const char *id)
{
	json_t *lines = logged("CreateSecurityGroup");

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
	assert_null(jparam(json_array_get(lines, 0), "SecurityGroupPolicySet.Ingress.2.CidrBlock"));
	json_decref(lines);
}

static size_t drv_tc_groups_named(const char *name)
{
	struct sim_secgroup **all;
	size_t n, k = 0;

	sim_world_lock(sim.world);
	n = sim_world_list_sgs(sim.world, SIM_TENCENT, DRV_TC_REGION, &all);
	for (size_t i = 0; i < n; i++)
		k += !strcmp(all[i]->name, name);
	sim_world_unlock(sim.world);
	free(all);
	return k;
}

/* The VPC API's paging, and a lost answer: the group was made; found by name and tags,
 * not made twice. */
static void drv_tc_secgroups_more(struct gc_secgroup_request *sr, const char *id)
{
	struct gc_error err;
	char *lost = NULL;
	json_t *lines = logged("DescribeSecurityGroups");

	(void)id;
	/* the VPC API's Offset and Limit are strings */
	assert_string_equal(pstr(json_array_get(lines, 0), "Limit"), "100");
	json_decref(lines);

	gc_error_init(&err);
	sr->name = "gpucluster-drv-lost";
	sr->tags = base_tags;
	sr->n_tags = 2;
	add_fault("CreateSecurityGroup:5xx,after=1,times=1");
	assert_int_equal(gc_provider_create_secgroup(prov, sr, &lost, &err), 0);
	assert_int_equal(drv_tc_groups_named("gpucluster-drv-lost"), 1);
	sim_world_lock(sim.world);
	{
		struct sim_secgroup *g = sim_world_sg(sim.world, SIM_TENCENT, DRV_TC_REGION, lost);
		assert_int_equal(g->n_rules, 3);
		assert_string_equal(g->rules[2].source_group, lost);
	}
	sim_world_unlock(sim.world);
	assert_int_equal(gc_provider_delete_secgroup(prov, lost, &err), 0);
	free(lost);
}

static void drv_tc_images_wire(void)
{
	json_t *lines = logged("DescribeImages");

	assert_int_equal(json_array_size(lines), 3);
	assert_string_equal(pstr(json_array_get(lines, 0), "Filters.0.Name"), "image-type");
	assert_string_equal(pstr(json_array_get(lines, 0), "Filters.0.Values.0"), "PUBLIC_IMAGE");
	assert_string_equal(pstr(json_array_get(lines, 0), "Filters.2.Name"), "image-name");
	assert_string_equal(pstr(json_array_get(lines, 0), "Filters.2.Values.0"),
			    "Ubuntu Server 22.04 LTS 64bit");
	json_decref(lines);
}

/* Prices from InquiryPriceRunInstances, asked in the region's first zone unless named. */
static void drv_tc_prices(void)
{
	struct gc_error err;
	double usd = 0;
	char cur[GC_CURRENCY_SIZE] = "";
	json_t *lines;

	gc_error_init(&err);
	assert_int_equal(gc_provider_price(prov, DRV_TC_TYPE, NULL, false, &usd, cur, &err), 0);
	assert_true(usd > 8.679 && usd < 8.681);
	assert_string_equal(cur, "CNY"); /* the emulator's endpoint is not the intl domain */
	assert_int_equal(
		gc_provider_price(prov, DRV_TC_TYPE, "ap-guangzhou-4", true, &usd, cur, &err), 0);
	assert_true(usd > 8.68 * SIM_SPOT_SHARE - 1e-3 && usd < 8.68 * SIM_SPOT_SHARE + 1e-3);
	lines = logged("InquiryPriceRunInstances");
	assert_int_equal(json_array_size(lines), 2);
	assert_string_equal(pstr(json_array_get(lines, 0), "Placement.Zone"), "ap-guangzhou-3");
	assert_string_equal(pstr(json_array_get(lines, 0), "InstanceChargeType"),
			    "POSTPAID_BY_HOUR");
	assert_int_equal(json_integer_value(jparam(json_array_get(lines, 0), "InstanceCount")), 1);
	assert_string_equal(pstr(json_array_get(lines, 1), "InstanceChargeType"), "SPOTPAID");
	json_decref(lines);
}

/* A clock an hour off: signed again once, then reported. */
static void drv_tc_auth_more(void)
{
	struct gc_provider *bad = NULL;
	struct gc_error err;
	char **zones = NULL;
	size_t n = 0;

	gc_error_init(&err);
	sim.cfg.clock_offset_s = 3600;
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), 0);
	assert_int_equal(gc_provider_zones(bad, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "AuthFailure.SignatureExpire");
	assert_int_equal(bad->stats.calls, 2);
	gc_provider_close(bad);
	sim.cfg.clock_offset_s = 0;
}

static const struct drv_hooks drv_tc_hooks = {
	.warm = drv_tc_warm,
	.discover_wire = drv_tc_discover_wire,
	.discover_by_key_wire = drv_tc_discover_by_key_wire,
	.terminate_wire = drv_tc_terminate_wire,
	.keypairs_wire = drv_tc_keypairs_wire,
	.secgroup_world = drv_tc_secgroup_world,
	.secgroup_wire = drv_tc_secgroup_wire,
	.secgroups_more = drv_tc_secgroups_more,
	.images_wire = drv_tc_images_wire,
	.prices = drv_tc_prices,
	.auth_more = drv_tc_auth_more,
};

static const struct drv_image drv_tc_images[] = {
	{ .image = "ubuntu-22.04", .is_alias = true, .want = DRV_TC_UBUNTU },
	{ .image = "ubuntu-24.04", .is_alias = true, .want = DRV_TC_NOBLE },
	{ .image = "gpu-ready", .is_alias = true, .want = DRV_TC_GPU_READY },
	{ 0 },
};

static const struct drv_image drv_tc_bad_images[] = {
	{ .image = "img-0n0tth3r",
	  .code = GC_ENOTFOUND,
	  .message = "image 'img-0n0tth3r' not found in ap-guangzhou",
	  .whole_message = true },
	{ .image = "debian", .code = GC_EINVALID },
	{ 0 },
};

/* an image seen on the way asks nothing again */
static const char *const drv_tc_literal_images[] = { DRV_TC_NOBLE, NULL };

static const struct drv_type drv_tc_types[] = {
	{ DRV_TC_TYPE, 8, 32768, 1, "T4", 16384 },
	{ "GT4.41XLARGE948", -1, -1, 8, "A100", 40960 },
	{ "S5.MEDIUM4", -1, -1, 0, "", -1 },
	{ 0 },
};

static const char *const drv_tc_no_creds[] = { "TENCENTCLOUD_SECRET_ID",
					       "~/.tccli/default.credential",
					       "TENCENTCLOUD_CVM_ROLE_DISABLED", NULL };

static const struct drv_cloud drv_tencent = {
	.name = "tencent",
	.ops = &gc_provider_tencent,
	.frontend = SIM_TENCENT,
	.region = DRV_TC_REGION,
	.tmp_template = "/tmp/gc-test-tcdrv.XXXXXX",
	.key_id_var = "TENCENTCLOUD_SECRET_ID",
	.secret_var = "TENCENTCLOUD_SECRET_KEY",
	.metadata_off_var = "TENCENTCLOUD_CVM_ROLE_DISABLED",
	.key_id = DRV_TC_SECRET_ID,
	.secret = DRV_TC_SECRET_KEY,
	.type = DRV_TC_TYPE,
	.image = DRV_TC_UBUNTU,
	.zone = DRV_TC_ZONE,
	.launch_zone = DRV_TC_ZONE,

	/* 13 RunInstances against a bucket of 10 a second: the last ones waited */
	.page_size = TC_PAGE_SIZE,
	.pages_by_offset = true,
	.pages_wait_ms = 200,
	.other_type = "GN10Xp.2XLARGE40",
	.mismatch_code = "InvalidParameter",
	.mismatch_status = 200, /* CVM's errors come in a 200 answer */
	.internal_status = 200,
	.unknown_id = "ins-0n0tth3r",
	.gone_calls = 4, /* NotFound for each gone one, then the rest, then a look */
	.malformed_id = "i-0123456789abcdef0",
	.malformed_code = "InvalidInstanceId.Malformed",
	.key_name = "gc_drv_key",
	.foreign_key_name = "gc_drv_key_2",
	.ed_key_name = "gc_drv_ed",
	.key_id_prefix = "skey-",
	.key_duplicate_code = "InvalidKeyPairName.Duplicate",
	.ed25519_code = "InvalidPublicKey.Malformed",
	.sha256_fingerprint = true,
	.foreign_sg_name = "gpucluster-drv-other",
	.sg_in_use_code = "ResourceInUse",
	.images = drv_tc_images,
	.bad_images = drv_tc_bad_images,
	.literal_images = drv_tc_literal_images,
	.types = drv_tc_types,
	.unknown_type = "GN99.HUGE",
	.price_zone = "ap-guangzhou-4",
	.n_zones = 4,
	.first_zone = "ap-guangzhou-3",
	.last_zone = "ap-guangzhou-7",
	.n_regions = 3,
	.first_region = "ap-guangzhou",
	.zones_cached = true,
	.capacity_zone = DRV_TC_ZONE,
	.capacity_code = "ResourceInsufficient.SpecifiedInstanceType",
	.capacity_where = DRV_TC_ZONE,
	.fallback_zone = "ap-guangzhou-7",
	.capacity_status = 200,
	.quota_code = "LimitExceeded.InstanceQuota",
	.retry_action = "DescribeRegions",
	.retry_regions = true,
	.bad_secret = "not-the-secret-of-this-key-000000",
	.bad_key_id = "AKIDunknownkey000000",
	.bad_secret_code = "AuthFailure.SignatureFailure",
	.bad_key_code = "AuthFailure.SecretIdNotFound",
	.no_creds_names = drv_tc_no_creds,
	.run_burst = 10,
	.zones_action = "DescribeZones",
	.terminate_action = "TerminateInstances",
	.types_action = "DescribeInstanceTypeConfigs",
	.hooks = &drv_tc_hooks,
};

#endif
