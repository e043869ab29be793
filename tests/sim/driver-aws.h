/*
 * driver-aws.h: the AWS EC2 driver as the driver tests see it (driver-fixture.h): its
 * region, zones, types and images in the emulator, its credentials, what its answers and
 * errors look like, and the checks only EC2 has (the Query API's flat parameters on the
 * wire, rules named by group, the Price List API). Header-only, after driver-fixture.h.
 */
#ifndef GC_TEST_DRIVER_AWS_H
#define GC_TEST_DRIVER_AWS_H

#include "core/str.h"
#include "driver-fixture.h"
#include "providers/aws/aws.h"
#include "providers/aws/ec2.h"
#include "sim/catalog.h"

#define DRV_AWS_AKID   "AKIAGPUCLUSTERSIM001"
#define DRV_AWS_SECRET "gpucluster-sim-aws-secret-key-0000000000"
#define DRV_AWS_UBUNTU "ami-0e8d2a5e1c4f22040"
#define DRV_AWS_NOBLE  "ami-04b7c5d3f9a124040"
#define DRV_AWS_DLAMI  "ami-0d1e5f7a9b3c5e570"
#define DRV_AWS_TYPE   "g5.xlarge"

/* The console a node would print: cloud-init's host keys block. */
static void drv_aws_console(struct sim_instance *inst)
{
	snprintf(inst->console, sizeof(inst->console),
		 "ci-info: no authorized SSH keys fingerprints found for user ubuntu.\n"
		 "-----BEGIN SSH HOST KEY KEYS-----\n%s root@ip-10-0-0-1\n"
		 "-----END SSH HOST KEY KEYS-----\n",
		 inst->host_key_line);
}

/* Resolves the launch image once, so a test's call counts are the launches alone. */
static void drv_aws_warm(void)
{
	struct gc_error err;
	char *id = NULL;

	gc_error_init(&err);
	assert_int_equal(gc_provider_resolve_image(prov, DRV_AWS_UBUNTU, false, &id, &err), 0);
	free(id);
}

static void drv_aws_discover_wire(json_t *pages)
{
	char max[16];

	snprintf(max, sizeof(max), "%d", AWS_INSTANCE_PAGE_SIZE);
	assert_string_equal(param(json_array_get(pages, 0), "MaxResults"), max);
	assert_null(param(json_array_get(pages, 0), "NextToken"));
	assert_non_null(param(json_array_get(pages, 1), "NextToken"));
	assert_string_equal(param(json_array_get(pages, 0), "Filter.1.Name"),
			    "tag:" GC_TAG_CLUSTER);
	assert_string_equal(param(json_array_get(pages, 0), "Filter.1.Value.1"), CLUSTER);
	assert_string_equal(param(json_array_get(pages, 0), "Filter.2.Name"),
			    "instance-state-name");
}

/* NotFound naming both gone ones, then the rest in one call. */
static void drv_aws_terminate_wire(const char *const *ids)
{
	json_t *terms = logged("TerminateInstances");

	assert_int_equal(json_array_size(terms), 3);
	assert_string_equal(param(json_array_get(terms, 2), "InstanceId.1"), ids[1]);
	assert_string_equal(param(json_array_get(terms, 2), "InstanceId.2"), ids[3]);
	assert_null(param(json_array_get(terms, 2), "InstanceId.3"));
	json_decref(terms);
}

static void drv_aws_secgroup_world(const struct sim_secgroup *g, const char *id)
{
	assert_int_equal(g->n_rules, 3);
	assert_string_equal(g->rules[1].source_group, "");
	/* the members' rule: every protocol and port from the group itself */
	assert_string_equal(g->rules[2].protocol, "-1");
	assert_int_equal(g->rules[2].from_port, -1);
	assert_string_equal(g->rules[2].source_group, id);
	assert_string_equal(g->rules[2].cidr, "");
}

/* Both rules in one call, the group named by IpPermissions.N.Groups.M.GroupId. */
static void drv_aws_secgroup_wire(const char *id)
{
	json_t *auths = logged("AuthorizeSecurityGroupIngress");

	assert_int_equal(json_array_size(auths), 1);
	assert_string_equal(param(json_array_get(auths, 0), "IpPermissions.1.IpProtocol"), "tcp");
	assert_string_equal(param(json_array_get(auths, 0), "IpPermissions.2.IpProtocol"), "-1");
	assert_string_equal(param(json_array_get(auths, 0), "IpPermissions.2.Groups.1.GroupId"),
			    id);
	json_decref(auths);
}

/* Adopting ours again, and one made before the members' rule existed. */
static void drv_aws_secgroups_more(struct gc_secgroup_request *sr, const char *id)
{
	struct gc_error err;
	char *again = NULL;

	gc_error_init(&err);
	/* creating ours again adopts it, without duplicating its rules */
	sr->name = "gpucluster-drv";
	sr->tags = base_tags;
	sr->n_tags = 2;
	assert_int_equal(gc_provider_create_secgroup(prov, sr, &again, &err), 0);
	assert_string_equal(again, id);
	sim_world_lock(sim.world);
	assert_int_equal(sim_world_sg(sim.world, SIM_AWS, "us-east-1", id)->n_rules, 3);
	sim_world_unlock(sim.world);
	/* one of ours made without the members' rule gets it when adopted, SSH kept as is */
	free(again);
	again = NULL;
	sr->name = "gpucluster-drv-old";
	sr->allow_members = false;
	assert_int_equal(gc_provider_create_secgroup(prov, sr, &again, &err), 0);
	sr->allow_members = true;
	{
		char *old = again;
		again = NULL;
		assert_int_equal(gc_provider_create_secgroup(prov, sr, &again, &err), 0);
		assert_string_equal(again, old);
		free(old);
	}
	sim_world_lock(sim.world);
	{
		struct sim_secgroup *g = sim_world_sg(sim.world, SIM_AWS, "us-east-1", again);
		assert_int_equal(g->n_rules, 3);
		assert_string_equal(g->rules[2].source_group, again);
	}
	sim_world_unlock(sim.world);
	assert_int_equal(gc_provider_delete_secgroup(prov, again, &err), 0);
	/* someone else's group of that name is not adopted */
	free(again);
	again = NULL;
	sr->name = "gpucluster-drv-other";
	assert_int_equal(gc_provider_create_secgroup(prov, sr, &again, &err), -1);
	assert_string_equal(err.cloud_code, "InvalidGroup.Duplicate");
	assert_null(again);
}

static void drv_aws_images_wire(void)
{
	json_t *lines = logged("DescribeImages");

	assert_string_equal(param(json_array_get(lines, 0), "Owner.1"), "099720109477");
	assert_string_equal(param(json_array_get(lines, 0), "Filter.1.Value.1"),
			    "ubuntu/images/hvm-ssd*/ubuntu-jammy-22.04-amd64-server-*");
	assert_string_equal(param(json_array_get(lines, 2), "Owner.1"), "amazon");
	json_decref(lines);
}

/* On-demand from the Price List API, spot from the spot price history. */
static void drv_aws_prices(void)
{
	struct gc_error err;
	double usd = 0;
	char cur[GC_CURRENCY_SIZE] = "";
	json_t *lines;

	gc_error_init(&err);
	assert_int_equal(gc_provider_price(prov, DRV_AWS_TYPE, NULL, false, &usd, cur, &err), 0);
	assert_true(usd > 1.0059 && usd < 1.0061);
	assert_string_equal(cur, "USD");
	assert_int_equal(
		gc_provider_price(prov, "p5.48xlarge", "us-east-1c", false, &usd, cur, &err), 0);
	assert_true(usd > 98.319 && usd < 98.321);
	lines = logged("GetProducts");
	assert_int_equal(json_array_size(lines), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(lines, 0), "version")),
			    "2017-10-15");
	json_decref(lines);

	assert_int_equal(gc_provider_price(prov, DRV_AWS_TYPE, NULL, true, &usd, cur, &err), 0);
	assert_true(usd > 1.006 * SIM_SPOT_SHARE - 1e-6 && usd < 1.006 * SIM_SPOT_SHARE + 1e-6);
	assert_int_equal(gc_provider_price(prov, DRV_AWS_TYPE, "us-east-1d", true, &usd, cur, &err),
			 0);
	assert_true(usd > 1.006 * SIM_SPOT_SHARE - 1e-6 && usd < 1.006 * SIM_SPOT_SHARE + 1e-6);
	assert_int_equal(gc_provider_price(prov, DRV_AWS_TYPE, "eu-west-1a", true, &usd, cur, &err),
			 -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	lines = logged("DescribeSpotPriceHistory");
	assert_int_equal(json_array_size(lines), 1);
	assert_string_equal(param(json_array_get(lines, 0), "ProductDescription.1"), "Linux/UNIX");
	json_decref(lines);
}

/* The Price List API's throttling, in its JSON protocol. */
static void drv_aws_faults_more(struct gc_create_request *r, struct gc_instance_list *got)
{
	struct gc_provider_stats s0;
	struct gc_error err;
	double usd;
	char cur[GC_CURRENCY_SIZE];

	(void)r;
	(void)got;
	gc_error_init(&err);
	add_fault("GetProducts:throttle,times=1");
	s0 = prov->stats;
	assert_int_equal(gc_provider_price(prov, "g6.xlarge", NULL, false, &usd, cur, &err), 0);
	assert_true(usd > 0.8047 && usd < 0.8049);
	assert_int_equal(prov->stats.throttled - s0.throttled, 1);
}

/* The Price List API refuses a bad signature or key in its own words. */
static void drv_aws_auth_bad(struct gc_provider *bad, int which)
{
	struct gc_error err;
	double usd;
	char cur[GC_CURRENCY_SIZE];

	gc_error_init(&err);
	assert_int_equal(gc_provider_price(bad, DRV_AWS_TYPE, NULL, false, &usd, cur, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code,
			    which == 0 ? "InvalidSignatureException"
				       : "UnrecognizedClientException");
}

static const struct drv_hooks drv_aws_hooks = {
	.warm = drv_aws_warm,
	.discover_wire = drv_aws_discover_wire,
	.terminate_wire = drv_aws_terminate_wire,
	.secgroup_world = drv_aws_secgroup_world,
	.secgroup_wire = drv_aws_secgroup_wire,
	.secgroups_more = drv_aws_secgroups_more,
	.images_wire = drv_aws_images_wire,
	.prices = drv_aws_prices,
	.faults_more = drv_aws_faults_more,
	.auth_bad = drv_aws_auth_bad,
};

static const struct drv_image drv_aws_images[] = {
	{ .image = "ubuntu-22.04", .is_alias = true, .want = DRV_AWS_UBUNTU },
	{ .image = "ubuntu-24.04", .is_alias = true, .want = DRV_AWS_NOBLE },
	{ .image = "gpu-ready", .is_alias = true, .want = DRV_AWS_DLAMI }, /* newer of two */
	{ .image = "dlami", .is_alias = true, .want = DRV_AWS_DLAMI },
	{ 0 },
};

static const struct drv_image drv_aws_bad_images[] = {
	{ .image = "ami-0123456789abcdef0",
	  .code = GC_ENOTFOUND,
	  .message = "image 'ami-0123456789abcdef0' not found in us-east-1",
	  .whole_message = true,
	  .cloud_code = "InvalidAMIID.NotFound" },
	{ .image = "debian", .code = GC_EINVALID },
	{ 0 },
};

/* the alias lookups saw both DLAMIs: the older one's id asks nothing either */
static const char *const drv_aws_literal_images[] = { "ami-0b7e2c4a6d8f05701", DRV_AWS_DLAMI,
						      NULL };

static const struct drv_type drv_aws_types[] = {
	{ DRV_AWS_TYPE, 4, 16384, 1, "A10G", 24576 },
	{ "p4d.24xlarge", -1, -1, 8, "A100", -1 },
	{ "t3.medium", -1, -1, 0, "", -1 },
	{ 0 },
};

static const char *const drv_aws_no_creds[] = { "AWS_ACCESS_KEY_ID", NULL };

static const struct drv_cloud drv_aws = {
	.name = "aws",
	.ops = &gc_provider_aws,
	.frontend = SIM_AWS,
	.region = "us-east-1",
	.tmp_template = "/tmp/gc-test-awsdrv.XXXXXX",
	.key_id_var = "AWS_ACCESS_KEY_ID",
	.secret_var = "AWS_SECRET_ACCESS_KEY",
	.metadata_off_var = "AWS_EC2_METADATA_DISABLED",
	.key_id = DRV_AWS_AKID,
	.secret = DRV_AWS_SECRET,
	.file_vars = { "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE" },
	.type = DRV_AWS_TYPE,
	.image = DRV_AWS_UBUNTU,
	.launch_zone = "us-east-1a",
	.console = drv_aws_console,

	/* RunInstances: 5 calls of burst, then 2/s; 1203 instances against 1000 tokens */
	.page_size = AWS_INSTANCE_PAGE_SIZE,
	.pages_wait_ms = 1000,
	.lists_client_token = true,
	.other_type = "g5.2xlarge",
	.mismatch_code = "IdempotentParameterMismatch",
	.mismatch_status = 400,
	.internal_status = 500,
	.unknown_id = "i-0123456789abcdef0",
	.forget_ms = 3600u * 1000 + 1000, /* EC2 lists a terminated instance for an hour */
	.gone_calls = 2,
	.malformed_id = "i-nothex",
	.malformed_code = "InvalidInstanceID.Malformed",
	.key_name = "gpucluster-drv-key",
	.foreign_key_name = "gpucluster-drv-key-2",
	.key_id_prefix = "key-",
	.key_duplicate_code = "InvalidKeyPair.Duplicate",
	.foreign_sg_name = "gpucluster-drv-other",
	.sg_in_use_code = "DependencyViolation",
	.images = drv_aws_images,
	.bad_images = drv_aws_bad_images,
	.literal_images = drv_aws_literal_images,
	.types = drv_aws_types,
	.unknown_type = "z9.huge",
	.price_zone = "us-east-1a",
	.n_zones = 5,
	.first_zone = "us-east-1a",
	.last_zone = "us-east-1f",
	.console_empty_before_boot = true,
	.capacity_zone = "us-east-1a",
	.capacity_code = "InsufficientInstanceCapacity",
	.capacity_where = "us-east-1", /* no zone asked: the region */
	.fallback_zone = "us-east-1b",
	.capacity_status = 500,
	.quota_code = "VcpuLimitExceeded",
	.retry_action = "DescribeAvailabilityZones",
	.bad_secret = "not-the-secret-of-this-key-000000000000",
	.bad_key_id = "AKIAUNKNOWNKEY000000",
	.bad_secret_code = "AuthFailure",
	.bad_key_code = "AuthFailure",
	.bad_secret_status = 401,
	.no_creds_names = drv_aws_no_creds,
	.run_burst = 5,
	.zones_action = "DescribeAvailabilityZones",
	.terminate_action = "TerminateInstances",
	.types_action = "DescribeInstanceTypes",
	.hooks = &drv_aws_hooks,
};

#endif
