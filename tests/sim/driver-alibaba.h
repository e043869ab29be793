/*
 * driver-alibaba.h: the Alibaba Cloud ECS driver as the driver tests see it
 * (driver-fixture.h): its region, zones, types and images in the emulator, its
 * credentials, what its answers and errors look like, and the checks only ECS has (RPC
 * parameters on the wire, the default VPC and its vSwitches, a basic group's inner
 * access policy, prices in CNY). A launch needs a security group: one of the cluster's
 * is made once per test. Every test ends by checking that the emulator refused none of
 * the driver's requests as malformed: the real API would not have taken them either.
 * Header-only, after driver-fixture.h.
 */
#ifndef GC_TEST_DRIVER_ALIBABA_H
#define GC_TEST_DRIVER_ALIBABA_H

#include "core/str.h"
#include "driver-fixture.h"
#include "providers/alibaba/alibaba.h"
#include "providers/alibaba/ecs.h"
#include "sim/catalog.h"

#define DRV_ALI_AKID	"LTAIgpuclustersim001"
#define DRV_ALI_SECRET	"gpucluster-sim-alibaba-secret-000000"
#define DRV_ALI_REGION	"cn-hangzhou"
#define DRV_ALI_UBUNTU	"ubuntu_22_04_x64_20G_alibase_20261015.vhd"
#define DRV_ALI_NOBLE	"ubuntu_24_04_x64_20G_alibase_20261015.vhd"
#define DRV_ALI_GPU_IMG "m-bp1gpu2204cuda128drv570"
#define DRV_ALI_TYPE	"ecs.gn7i-c8g1.2xlarge"

/* The console a node would print: the host keys block. */
static void drv_ali_console(struct sim_instance *inst)
{
	snprintf(inst->console, sizeof(inst->console),
		 "-----BEGIN SSH HOST KEY KEYS-----\n%s root@iZ%sZ\n"
		 "-----END SSH HOST KEY KEYS-----\n",
		 inst->host_key_line, inst->id + 2);
}

/* A VPC security group of the emulator's, as the engine would make one. */
static char *drv_ali_make_sg(const char *name, struct gc_tag *tags, size_t n_tags)
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
 * (drv_ali_sg, freed by the teardown) */
static char *drv_ali_sg;

static void drv_ali_sg_for_launch(struct gc_create_request *r)
{
	if (!r->security_group_id) {
		if (!drv_ali_sg)
			drv_ali_sg = drv_ali_make_sg("gpucluster-drv", base_tags, 1);
		r->security_group_id = drv_ali_sg;
	}
}

/* The codes the emulator answers a request the real API would refuse as malformed. */
static void drv_ali_requests_valid(void)
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

static void drv_ali_after(void)
{
	free(drv_ali_sg);
	drv_ali_sg = NULL;
	drv_ali_requests_valid();
}

/*
 * The network and the group first, so a test's call counts are the launches alone, and
 * nothing launched: a launch whose release time is too near is refused by the driver
 * after it resolved the vSwitch and before any RunInstances (driver-answers counts them).
 */
static void drv_ali_warm(void)
{
	struct gc_create_request r = launch_req(1, "gc-warm");
	struct gc_instance_list got;
	struct gc_error err;

	gc_instance_list_init(&got);
	gc_error_init(&err);
	launch_prep(&r);
	r.expires_at = 1;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "expires_at"));
	gc_instance_list_release(&got);
}

static void drv_ali_discover_wire(json_t *pages)
{
	assert_string_equal(param(json_array_get(pages, 0), "MaxResults"), "100");
	assert_string_equal(param(json_array_get(pages, 0), "RegionId"), DRV_ALI_REGION);
	assert_null(param(json_array_get(pages, 0), "NextToken"));
	assert_non_null(param(json_array_get(pages, 1), "NextToken"));
	assert_string_equal(param(json_array_get(pages, 0), "Tag.1.Key"), GC_TAG_CLUSTER);
	assert_string_equal(param(json_array_get(pages, 0), "Tag.1.Value"), CLUSTER);
	assert_string_equal(json_string_value(json_object_get(json_array_get(pages, 0), "version")),
			    "2014-05-26");

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

static void drv_ali_discover_by_key_wire(json_t *pages)
{
	assert_string_equal(param(json_array_get(pages, 12), "Tag.1.Key"), "team");
	assert_null(param(json_array_get(pages, 12), "Tag.1.Value"));
}

/* ECS names the first unknown id: each round drops it, until the rest goes. */
static void drv_ali_terminate_wire(const char *const *ids)
{
	json_t *dels = logged("DeleteInstances");

	assert_int_equal(json_array_size(dels), 4);
	assert_string_equal(param(json_array_get(dels, 0), "Force"), "true");
	assert_string_equal(param(json_array_get(dels, 1), "InstanceId.4"), ids[3]);
	assert_string_equal(param(json_array_get(dels, 3), "InstanceId.1"), ids[1]);
	assert_string_equal(param(json_array_get(dels, 3), "InstanceId.2"), ids[3]);
	assert_null(param(json_array_get(dels, 3), "InstanceId.3"));
	json_decref(dels);
}

static void drv_ali_keypairs_wire(void)
{
	json_t *lines = logged("DescribeKeyPairs");

	assert_string_equal(param(json_array_get(lines, 0), "Tag.1.Key"), GC_TAG_CLUSTER);
	assert_string_equal(param(json_array_get(lines, 0), "PageSize"), "50");
	json_decref(lines);
	lines = logged("DeleteKeyPairs");
	assert_string_equal(param(json_array_get(lines, 0), "KeyPairNames"),
			    "[\"gpucluster-drv-key\"]");
	json_decref(lines);
}

/* The members: a basic group's InnerAccessPolicy Accept, no rule of ours. */
static void drv_ali_secgroup_world(const struct sim_secgroup *g, const char *id)
{
	(void)id;
	assert_string_equal(g->vpc, "vpc-gpuclustersim");
	assert_string_equal(g->type, "normal");
	assert_true(g->inner_accept);
	assert_int_equal(g->n_rules, 2);
}

static void drv_ali_secgroup_wire(const char *id)
{
	json_t *lines = logged("CreateSecurityGroup");

	(void)id;
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
}

static void drv_ali_images_wire(void)
{
	json_t *lines = logged("DescribeImages");

	assert_int_equal(json_array_size(lines), 3);
	assert_string_equal(param(json_array_get(lines, 0), "ImageOwnerAlias"), "system");
	assert_string_equal(param(json_array_get(lines, 0), "ImageName"), "ubuntu_22_04_x64");
	assert_string_equal(param(json_array_get(lines, 0), "OSType"), "linux");
	assert_string_equal(param(json_array_get(lines, 0), "Architecture"), "x86_64");
	assert_string_equal(param(json_array_get(lines, 2), "ImageOwnerAlias"), "marketplace");
	json_decref(lines);
}

/* The emulator's default key is a China-site account's: DescribePrice answers in CNY. */
static void drv_ali_prices(void)
{
	struct gc_error err;
	double price = 0, want;
	char cur[GC_CURRENCY_SIZE] = "";
	json_t *lines;

	gc_error_init(&err);
	want = sim_catalog_price(sim_catalog_itype(SIM_ALIBABA, DRV_ALI_TYPE), false);
	assert_int_equal(gc_provider_price(prov, DRV_ALI_TYPE, NULL, false, &price, cur, &err), 0);
	assert_true(price > want - 1e-6 && price < want + 1e-6);
	assert_string_equal(cur, "CNY");
	want = sim_catalog_price(sim_catalog_itype(SIM_ALIBABA, DRV_ALI_TYPE), true);
	assert_int_equal(
		gc_provider_price(prov, DRV_ALI_TYPE, "cn-hangzhou-j", true, &price, cur, &err), 0);
	assert_true(price > want - 1e-6 && price < want + 1e-6);
	assert_string_equal(cur, "CNY");
	lines = logged("DescribePrice");
	assert_int_equal(json_array_size(lines), 2);
	assert_string_equal(param(json_array_get(lines, 0), "ResourceType"), "instance");
	assert_string_equal(param(json_array_get(lines, 0), "PriceUnit"), "Hour");
	assert_null(param(json_array_get(lines, 0), "SpotStrategy"));
	assert_string_equal(param(json_array_get(lines, 1), "SpotStrategy"), "SpotAsPriceGo");
	assert_string_equal(param(json_array_get(lines, 1), "ZoneId"), "cn-hangzhou-j");
	json_decref(lines);
}

/* The VPC API's faults are Alibaba's too. */
static void drv_ali_faults_more(struct gc_create_request *r, struct gc_instance_list *got)
{
	struct gc_provider_stats s0;

	add_fault("DescribeVSwitches:throttle,times=1");
	r->zone = "cn-hangzhou-j";
	r->client_token = "gc-faults-3";
	s0 = prov->stats;
	launch_ok(r, got);
	assert_int_equal(prov->stats.throttled - s0.throttled, 1);
	sim_faults_clear(sim.faults);
}

/* An endpoint that is not a URL. */
static void drv_ali_auth_more(void)
{
	struct gc_provider *bad = NULL;
	struct gc_error err;

	gc_error_init(&err);
	assert_int_equal(open_with(&bad, "ftp://127.0.0.1:1", NULL, false, NULL, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_null(bad);
}

static const struct drv_hooks drv_ali_hooks = {
	.warm = drv_ali_warm,
	.discover_wire = drv_ali_discover_wire,
	.discover_by_key_wire = drv_ali_discover_by_key_wire,
	.terminate_wire = drv_ali_terminate_wire,
	.keypairs_wire = drv_ali_keypairs_wire,
	.secgroup_world = drv_ali_secgroup_world,
	.secgroup_wire = drv_ali_secgroup_wire,
	.images_wire = drv_ali_images_wire,
	.prices = drv_ali_prices,
	.faults_more = drv_ali_faults_more,
	.auth_more = drv_ali_auth_more,
};

static const struct drv_image drv_ali_images[] = {
	{ .image = "ubuntu-22.04", .is_alias = true, .want = DRV_ALI_UBUNTU },
	{ .image = "ubuntu-24.04", .is_alias = true, .want = DRV_ALI_NOBLE },
	{ .image = "gpu-ready", .is_alias = true, .want = DRV_ALI_GPU_IMG },
	{ 0 },
};

static const struct drv_image drv_ali_bad_images[] = {
	{ .image = "ami-0123456789abcdef0",
	  .code = GC_EINVALID,
	  .message = "not an Alibaba image id" },
	/* a literal id is looked up (DescribeImages ImageId): one the region lacks */
	{ .image = "m-bp1custom0001",
	  .code = GC_ENOTFOUND,
	  .message = "image 'm-bp1custom0001' not found in cn-hangzhou",
	  .whole_message = true },
	{ 0 },
};

static const char *const drv_ali_literal_images[] = { "m-bp1gpu2204cuda128drv570", DRV_ALI_NOBLE,
						      NULL };

static const struct drv_type drv_ali_types[] = {
	{ DRV_ALI_TYPE, 8, 30 * 1024, 1, "A10", 24 * 1024 },
	{ "ecs.gn7e-c16g1.32xlarge", -1, -1, 8, "A100", 80 * 1024 },
	{ "ecs.gn6i-c4g1.xlarge", -1, -1, -1, "T4", -1 },
	{ "ecs.g7.large", -1, -1, 0, "", -1 },
	{ 0 },
};

static const char *const drv_ali_no_creds[] = { "ALIBABA_CLOUD_ACCESS_KEY_ID", "config.json",
						NULL };

static const struct drv_cloud drv_alibaba = {
	.name = "alibaba",
	.ops = &gc_provider_alibaba,
	.frontend = SIM_ALIBABA,
	.region = DRV_ALI_REGION,
	.tmp_template = "/tmp/gc-test-alidrv.XXXXXX",
	.key_id_var = "ALIBABA_CLOUD_ACCESS_KEY_ID",
	.secret_var = "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
	.metadata_off_var = "ALIBABA_CLOUD_ECS_METADATA_DISABLED",
	.key_id = DRV_ALI_AKID,
	.secret = DRV_ALI_SECRET,
	.file_vars = { "ALIBABA_CLOUD_CONFIG_FILE", NULL },
	.file_name = "config.json",
	.type = DRV_ALI_TYPE,
	.image = DRV_ALI_UBUNTU,
	.zone = "cn-hangzhou-i",
	.launch_zone = "cn-hangzhou-i",
	.console = drv_ali_console,
	.before_launch = drv_ali_sg_for_launch,
	.after = drv_ali_after,

	.page_size = ALI_PAGE_SIZE,
	.lists_client_token = true,
	.other_type = "ecs.gn6i-c4g1.xlarge",
	.mismatch_code = "IdempotentParameterMismatch",
	.mismatch_status = 400,
	.internal_status = 500,
	.unknown_id = "i-bp1neverexisted0000",
	.gone_calls = 3, /* ECS names the first unknown id: each round drops it */
	.key_name = "gpucluster-drv-key",
	.foreign_key_name = "gpucluster-drv-key-2",
	.ed_key_name = "gpucluster-drv-ed",
	.key_duplicate_code = "KeyPair.AlreadyExist",
	.ed25519_code = "InvalidPublicKeyBody.Malformed",
	.foreign_sg_name = "gpucluster-drv", /* names are not unique on ECS */
	.sg_in_use_code = "DependencyViolation",
	.images = drv_ali_images,
	.bad_images = drv_ali_bad_images,
	.literal_images = drv_ali_literal_images,
	.types = drv_ali_types,
	.unknown_type = "ecs.z9.huge",
	.price_zone = "cn-hangzhou-j",
	.n_zones = 4,
	.first_zone = "cn-hangzhou-h",
	.last_zone = "cn-hangzhou-k",
	.n_regions = 3,
	.first_region = "cn-hangzhou",
	.last_region = "ap-southeast-1",
	.console_missing_code = "InvalidInstanceId.NotFound",
	.capacity_zone = "cn-hangzhou-i",
	.capacity_code = "OperationDenied.NoStock",
	.capacity_where = "cn-hangzhou-i",
	.fallback_zone = "cn-hangzhou-k",
	.capacity_status = 403,
	.quota_code = "QuotaExceed.ElasticQuota",
	.retry_action = "DescribeZones",
	.nonce_resend = true,
	.bad_secret = "not-the-secret-of-this-key-00000000",
	.bad_key_id = "LTAInobodyhasthiskey",
	.bad_secret_code = "SignatureDoesNotMatch",
	.bad_key_code = "InvalidAccessKeyId.NotFound",
	.bad_secret_status = 400,
	.no_creds_names = drv_ali_no_creds,
	.zones_action = "DescribeZones",
	.terminate_action = "DeleteInstances",
	.types_action = "DescribeInstanceTypes",
	.hooks = &drv_ali_hooks,
};

#endif
