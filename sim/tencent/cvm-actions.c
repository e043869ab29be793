/*
 * cvm-actions.c: the CVM actions: RunInstances, DescribeInstances, TerminateInstances,
 * ImportKeyPair, DescribeKeyPairs, DeleteKeyPairs, DescribeImages,
 * DescribeInstanceTypeConfigs, DescribeZoneInstanceConfigInfos,
 * InquiryPriceRunInstances, DescribeZones and DescribeRegions, with their request
 * schemas (the key names and JSON types of tencentcloud-sdk-nodejs-cvm's models).
 *
 * Each runs with the world lock held (see cvm.c). Terminated instances are not listed;
 * with the world's recycle bin on, the first TerminateInstances moves an instance to
 * SHUTDOWN and the second destroys it (sim_world_terminate).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/str.h"
#include "sim/catalog.h"
#include "sim/network.h"
#include "sim/quota.h"
#include "sim/tencent/cvm.h"

/* --- schemas ---------------------------------------------------------------------------- */

static const struct tc_field f_tag_spec[] = {
	{ "ResourceType", TC_STR, NULL },
	{ "Tags", TC_ARR_OBJ, tc_tag_schema },
	{ NULL, 0, NULL },
};
static const struct tc_field f_placement[] = {
	{ "Zone", TC_STR, NULL },
	{ "ProjectId", TC_INT, NULL },
	{ "HostIds", TC_ARR_STR, NULL },
	{ "HostId", TC_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field f_system_disk[] = {
	{ "DiskType", TC_STR, NULL }, { "DiskId", TC_STR, NULL },   { "DiskSize", TC_INT, NULL },
	{ "DiskName", TC_STR, NULL }, { "Encrypt", TC_BOOL, NULL }, { NULL, 0, NULL },
};
static const struct tc_field f_data_disk[] = {
	{ "DiskSize", TC_INT, NULL },
	{ "DiskType", TC_STR, NULL },
	{ "DiskId", TC_STR, NULL },
	{ "DeleteWithInstance", TC_BOOL, NULL },
	{ "SnapshotId", TC_STR, NULL },
	{ "Encrypt", TC_BOOL, NULL },
	{ "DiskName", TC_STR, NULL },
	{ "ThroughputPerformance", TC_INT, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field f_vpc[] = {
	{ "VpcId", TC_STR, NULL },
	{ "SubnetId", TC_STR, NULL },
	{ "AsVpcGateway", TC_BOOL, NULL },
	{ "PrivateIpAddresses", TC_ARR_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field f_internet[] = {
	{ "InternetChargeType", TC_STR, NULL },
	{ "InternetMaxBandwidthOut", TC_INT, NULL },
	{ "PublicIpAssigned", TC_BOOL, NULL },
	{ "BandwidthPackageId", TC_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field f_login[] = {
	{ "Password", TC_STR, NULL },
	{ "KeyIds", TC_ARR_STR, NULL },
	{ "KeepImageLogin", TC_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field f_enabled[] = {
	{ "Enabled", TC_BOOL, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field f_enhanced[] = {
	{ "SecurityService", TC_OBJ, f_enabled },
	{ "MonitorService", TC_OBJ, f_enabled },
	{ "AutomationService", TC_OBJ, f_enabled },
	{ NULL, 0, NULL },
};
static const struct tc_field f_externals[] = {
	{ "ReleaseAddress", TC_BOOL, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field f_timer[] = {
	{ "TimerAction", TC_STR, NULL },
	{ "ActionTime", TC_STR, NULL },
	{ "Externals", TC_OBJ, f_externals },
	{ NULL, 0, NULL },
};
static const struct tc_field f_spot_options[] = {
	{ "MaxPrice", TC_STR, NULL },
	{ "SpotInstanceType", TC_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field f_market[] = {
	{ "MarketType", TC_STR, NULL },
	{ "SpotOptions", TC_OBJ, f_spot_options },
	{ NULL, 0, NULL },
};
static const struct tc_field f_prepaid[] = {
	{ "Period", TC_INT, NULL },
	{ "RenewFlag", TC_STR, NULL },
	{ NULL, 0, NULL },
};

#define LAUNCH_FIELDS                                                                            \
	{ "InstanceChargeType", TC_STR, NULL }, { "InstanceChargePrepaid", TC_OBJ, f_prepaid },  \
		{ "Placement", TC_OBJ, f_placement }, { "InstanceType", TC_STR, NULL },          \
		{ "ImageId", TC_STR, NULL }, { "SystemDisk", TC_OBJ, f_system_disk },            \
		{ "DataDisks", TC_ARR_OBJ, f_data_disk },                                        \
		{ "VirtualPrivateCloud", TC_OBJ, f_vpc },                                        \
		{ "InternetAccessible", TC_OBJ, f_internet }, { "InstanceCount", TC_INT, NULL }, \
		{ "InstanceName", TC_STR, NULL }, { "LoginSettings", TC_OBJ, f_login },          \
		{ "SecurityGroupIds", TC_ARR_STR, NULL },                                        \
		{ "EnhancedService", TC_OBJ, f_enhanced }, { "ClientToken", TC_STR, NULL },      \
		{ "HostName", TC_STR, NULL }, { "TagSpecification", TC_ARR_OBJ, f_tag_spec },    \
		{ "CamRoleName", TC_STR, NULL },                                                 \
	{                                                                                        \
		"InstanceMarketOptions", TC_OBJ, f_market                                        \
	}

static const struct tc_field s_run[] = {
	LAUNCH_FIELDS,
	{ "MinCount", TC_INT, NULL },
	{ "ActionTimer", TC_OBJ, f_timer },
	{ "UserData", TC_STR, NULL },
	{ "DryRun", TC_BOOL, NULL },
	{ "CamRoleName", TC_STR, NULL },
	{ "DisableApiTermination", TC_BOOL, NULL },
	{ "DisasterRecoverGroupIds", TC_ARR_STR, NULL },
	{ "HpcClusterId", TC_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field s_inquiry[] = {
	LAUNCH_FIELDS,
	{ NULL, 0, NULL },
};
static const struct tc_field s_describe[] = {
	{ "InstanceIds", TC_ARR_STR, NULL },
	{ "Filters", TC_ARR_OBJ, tc_filter_schema },
	{ "Offset", TC_INT, NULL },
	{ "Limit", TC_INT, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field s_timers[] = {
	{ "InstanceIds", TC_ARR_STR, NULL }, { "ActionTimerIds", TC_ARR_STR, NULL },
	{ "TimerAction", TC_STR, NULL },     { "StatusList", TC_ARR_STR, NULL },
	{ "StartActionTime", TC_STR, NULL }, { "EndActionTime", TC_STR, NULL },
	{ "ActionTimer", TC_OBJ, f_timer },  { NULL, 0, NULL },
};
static const struct tc_field s_resources_tag[] = {
	{ "ServiceType", TC_STR, NULL },
	{ "ResourceIds", TC_ARR_STR, NULL },
	{ "TagKey", TC_STR, NULL },
	{ "TagValue", TC_STR, NULL },
	{ "ResourceRegion", TC_STR, NULL },
	{ "ResourcePrefix", TC_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field s_terminate[] = {
	{ "InstanceIds", TC_ARR_STR, NULL },
	{ "ReleaseAddress", TC_BOOL, NULL },
	{ "ReleasePrepaidDataDisks", TC_BOOL, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field s_import[] = {
	{ "KeyName", TC_STR, NULL },
	{ "ProjectId", TC_INT, NULL },
	{ "PublicKey", TC_STR, NULL },
	{ "TagSpecification", TC_ARR_OBJ, f_tag_spec },
	{ NULL, 0, NULL },
};
static const struct tc_field s_describe_keys[] = {
	{ "KeyIds", TC_ARR_STR, NULL },
	{ "Filters", TC_ARR_OBJ, tc_filter_schema },
	{ "Offset", TC_INT, NULL },
	{ "Limit", TC_INT, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field s_delete_keys[] = {
	{ "KeyIds", TC_ARR_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field s_images[] = {
	{ "ImageIds", TC_ARR_STR, NULL }, { "Filters", TC_ARR_OBJ, tc_filter_schema },
	{ "Offset", TC_INT, NULL },	  { "Limit", TC_INT, NULL },
	{ "InstanceType", TC_STR, NULL }, { NULL, 0, NULL },
};
static const struct tc_field s_filters_only[] = {
	{ "Filters", TC_ARR_OBJ, tc_filter_schema },
	{ NULL, 0, NULL },
};
static const struct tc_field s_empty[] = {
	{ NULL, 0, NULL },
};

/* --- helpers ------------------------------------------------------------------------------- */

static struct sim_instance *find_instance(struct tc_call *c, const char *id)
{
	struct sim_instance *inst = sim_world_instance(c->sim->world, SIM_TENCENT, id);

	if (!inst || inst->state == SIM_TERMINATED || strcmp(inst->region, c->region))
		return NULL;
	return inst;
}

static int dry_run_ok(struct tc_call *c)
{
	return tc_fail(c, "DryRunOperation",
		       "DryRun Operation. It means that the request would have succeeded, but the "
		       "DryRun parameter was used.");
}

/* Every leaf of a JSON value as name=value pairs with 0-based dotted names: the
 * parameter set a client token is fingerprinted over. */
static void flatten(struct gc_params *out, const char *prefix, json_t *v)
{
	char name[256];

	if (json_is_object(v)) {
		const char *key;
		json_t *child;
		json_object_foreach(v, key, child)
		{
			snprintf(name, sizeof(name), "%s%s%s", prefix, *prefix ? "." : "", key);
			flatten(out, name, child);
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *child;
		json_array_foreach(v, i, child)
		{
			snprintf(name, sizeof(name), "%s.%zu", prefix, i);
			flatten(out, name, child);
		}
	} else {
		char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		gc_params_add(out, prefix, text ? text : "");
		free(text);
	}
}

/* --- RunInstances / InquiryPriceRunInstances ------------------------------------------------ */

struct launch {
	const char *zone, *image, *type, *name, *token, *charge, *max_price, *subnet, *key_id;
	const struct sim_itype *itype;
	struct sim_keypair *kp;
	char **sgs;
	size_t n_sgs;
	int64_t count, min_count, disk_gb, release_at;
	int64_t months; /* InstanceChargePrepaid.Period of a PREPAID price inquiry */
	bool spot;
	struct sim_tags tags;
	struct gc_buf user_data;
	char subnet_id[SIM_ID_MAX];
};

static void launch_release(struct launch *l)
{
	for (size_t i = 0; i < l->n_sgs; i++)
		free(l->sgs[i]);
	free(l->sgs);
	sim_tags_release(&l->tags);
	gc_buf_release(&l->user_data);
}

/* A PREPAID price inquiry's term: InstanceChargePrepaid.Period, in months, one of those
 * the InstanceChargePrepaid data structure lists (docs/sim.md). */
static int parse_prepaid(struct tc_call *c, struct launch *l)
{
	static const int64_t months[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 24, 36, 48, 60 };

	if (!tc_get(c, "InstanceChargePrepaid.Period"))
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter "
			       "`InstanceChargePrepaid.Period`.");
	if (tc_int(c, "InstanceChargePrepaid.Period", INT32_MIN, INT32_MAX, 1, &l->months))
		return -1;
	for (size_t i = 0; i < sizeof(months) / sizeof(months[0]); i++)
		if (months[i] == l->months)
			return 0;
	return tc_fail(c, "InvalidPeriod",
		       "Invalid period `%lld`: only 1-12, 24, 36, 48 and 60 months are supported.",
		       (long long)l->months);
}

static int parse_market(struct tc_call *c, struct launch *l, bool run)
{
	json_t *market = tc_get(c, "InstanceMarketOptions");

	l->charge = tc_str(c, "InstanceChargeType");
	if (!l->charge)
		l->charge = "POSTPAID_BY_HOUR";
	if (!strcmp(l->charge, "PREPAID") && run)
		return tc_fail(c, "UnsupportedOperation.InstanceChargeType",
			       "gpucluster-sim does not model PREPAID instances.");
	if (!strcmp(l->charge, "PREPAID"))
		return market ? tc_fail(c, "InvalidParameterCombination",
					"InstanceMarketOptions needs InstanceChargeType "
					"SPOTPAID.")
			      : parse_prepaid(c, l);
	if (strcmp(l->charge, "POSTPAID_BY_HOUR") && strcmp(l->charge, "SPOTPAID"))
		return tc_fail(c, "InvalidParameterValue",
			       "The value `%s` of parameter `InstanceChargeType` is not valid.",
			       l->charge);
	l->spot = !strcmp(l->charge, "SPOTPAID");
	if (market && !l->spot)
		return tc_fail(c, "InvalidParameterCombination",
			       "InstanceMarketOptions needs InstanceChargeType SPOTPAID.");
	if (!market)
		return 0;
	const char *mt = tc_str(c, "InstanceMarketOptions.MarketType");
	if (mt && strcmp(mt, "spot"))
		return tc_fail(
			c, "InvalidParameterValue",
			"The value `%s` of parameter `InstanceMarketOptions.MarketType` is not "
			"valid.",
			mt);
	const char *st = tc_str(c, "InstanceMarketOptions.SpotOptions.SpotInstanceType");
	if (st && strcmp(st, "one-time"))
		return tc_fail(c, "InvalidParameterValue",
			       "SpotInstanceType supports only `one-time`.");
	l->max_price = tc_str(c, "InstanceMarketOptions.SpotOptions.MaxPrice");
	if (l->max_price) {
		double p;
		if (gc_parse_double(l->max_price, &p) || p <= 0)
			return tc_fail(c, "InvalidParameterValue",
				       "The value `%s` of parameter `MaxPrice` is not valid.",
				       l->max_price);
		if (p < sim_catalog_price(l->itype, true))
			return tc_fail(c, "InvalidParameterValue.InsufficientPrice",
				       "The bid %s is below the current spot price %.4f.",
				       l->max_price, sim_catalog_price(l->itype, true));
	}
	return 0;
}

static int parse_sgs_and_key(struct tc_call *c, struct launch *l)
{
	json_t *sgs = tc_get(c, "SecurityGroupIds"), *keys = tc_get(c, "LoginSettings.KeyIds");
	size_t i;
	json_t *v;

	if (json_array_size(sgs) > 5)
		return tc_fail(c, "LimitExceeded.AssociateUSGLimitExceeded",
			       "An instance can be bound to at most 5 security groups.");
	l->sgs = gc_xcalloc(json_array_size(sgs) + 1, sizeof(*l->sgs));
	json_array_foreach(sgs, i, v)
	{
		const char *id = json_string_value(v);
		if (!sim_world_sg(c->sim->world, SIM_TENCENT, c->region, id))
			return tc_fail(c, "InvalidSecurityGroupId.NotFound",
				       "The security group `%s` does not exist.", id);
		l->sgs[l->n_sgs++] = gc_xstrdup(id);
	}
	if (json_array_size(keys) > 1)
		return tc_fail(c, "InvalidParameterValue.LimitExceeded",
			       "Only one key can be bound when creating an instance.");
	if (json_array_size(keys)) {
		l->key_id = json_string_value(json_array_get(keys, 0));
		if (!gc_starts_with(l->key_id, "skey-"))
			return tc_fail(c, "InvalidKeyPairId.Malformed",
				       "The key pair id `%s` is malformed.", l->key_id);
		l->kp = sim_world_keypair(c->sim->world, SIM_TENCENT, c->region, l->key_id);
		if (!l->kp)
			return tc_fail(c, "InvalidKeyPairId.NotFound",
				       "The key pair `%s` does not exist.", l->key_id);
	}
	return 0;
}

/*
 * VirtualPrivateCloud: both ids, the subnet one of the VPC's in the launch's zone (the
 * API's VpcIdNotExist, SubnetNotExist, SubnetIdZoneIdNotMatch); VpcId and SubnetId both
 * "DEFAULT" mean the default VPC's subnet in that zone, as the model documents. Without it
 * the launch is on the classic network, which the emulated account has: the instance has
 * no subnet.
 */
static int parse_vpc(struct tc_call *c, struct launch *l)
{
	const struct sim_region *reg = sim_catalog_region(SIM_TENCENT, c->region);
	const char *vpc = tc_str(c, "VirtualPrivateCloud.VpcId");
	const char *subnet = tc_str(c, "VirtualPrivateCloud.SubnetId");
	const char *zone;

	bool dflt;

	/* a price inquiry needs no network; a launch without one uses the default VPC */
	if (!tc_get(c, "VirtualPrivateCloud") &&
	    (!c->sim->cfg.no_default_vpc || strcmp(c->action, "RunInstances") != 0))
		return 0;
	if (!tc_get(c, "VirtualPrivateCloud")) /* and no default VPC to launch into */
		return tc_fail(c, "InvalidParameterValue.VpcIdNotExist",
			       "The default VPC does not exist: give VirtualPrivateCloud.");
	if (tc_need_str(c, "VirtualPrivateCloud.VpcId", &vpc) ||
	    tc_need_str(c, "VirtualPrivateCloud.SubnetId", &subnet))
		return -1;
	dflt = !strcmp(vpc, "DEFAULT") && !strcmp(subnet, "DEFAULT");
	if (dflt && c->sim->cfg.no_default_vpc)
		return tc_fail(c, "InvalidParameterValue.VpcIdNotExist",
			       "The default VPC does not exist.");
	if (dflt) {
		tc_default_subnet(l->zone, l->subnet_id);
		l->subnet = l->subnet_id;
		return 0;
	}
	if (!gc_starts_with(vpc, "vpc-"))
		return tc_fail(c, "InvalidParameterValue.VpcIdMalformed",
			       "The VPC id `%s` is malformed.", vpc);
	if (!gc_starts_with(subnet, "subnet-"))
		return tc_fail(c, "InvalidParameterValue.SubnetIdMalformed",
			       "The subnet id `%s` is malformed.", subnet);
	if (!tc_vpc_exists(c, vpc))
		return tc_fail(c, "InvalidParameterValue.VpcIdNotExist",
			       "The VPC `%s` does not exist.", vpc);
	zone = sim_user_vpc_is(reg, vpc) ? sim_user_subnet_zone(reg, subnet)
					 : tc_subnet_zone(reg, subnet);
	if (!zone)
		return tc_fail(c, "InvalidParameterValue.SubnetNotExist",
			       "The subnet `%s` does not exist in VPC `%s`.", subnet, vpc);
	if (strcmp(zone, l->zone))
		return tc_fail(c, "InvalidParameterValue.SubnetIdZoneIdNotMatch",
			       "The subnet `%s` is in zone `%s`, not `%s`.", subnet, zone, l->zone);
	snprintf(l->subnet_id, sizeof(l->subnet_id), "%s", subnet);
	l->subnet = l->subnet_id;
	return 0;
}

static int parse_timer(struct tc_call *c, struct launch *l)
{
	const char *action = tc_str(c, "ActionTimer.TimerAction");
	const char *when = tc_str(c, "ActionTimer.ActionTime");
	int64_t t;

	if (!tc_get(c, "ActionTimer"))
		return 0;
	if (!action || strcmp(action, "TerminateInstances"))
		return tc_fail(c, "InvalidParameterValue",
			       "ActionTimer.TimerAction supports only `TerminateInstances`.");
	if (!when || tc_parse_time(when, &t))
		return tc_fail(c, "InvalidParameterValue.InvalidTimeFormat",
			       "ActionTimer.ActionTime `%s` is not valid: use YYYY-MM-DDThh:mm:ssZ "
			       "(UTC) or YYYY-MM-DD hh:mm:ss (Beijing time).",
			       when ? when : "");
	if (t < sim_world_wall(c->sim->world) + 5 * 60)
		return tc_fail(
			c, "InvalidParameterValue",
			"ActionTimer.ActionTime must be at least 5 minutes after the current "
			"time.");
	l->release_at = t;
	return 0;
}

/* CamRoleName: 1-128 of letters, digits and _+=,.@- (CAM's role name rule); the emulator
 * has no CAM, so any name of that shape exists. */
static int cam_role(struct tc_call *c)
{
	const char *n = tc_str(c, "CamRoleName");
	size_t len = n ? strlen(n) : 0;

	if (n &&
	    (len < 1 || len > 128 ||
	     strspn(n,
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		    "_+=,.@-") != len))
		return tc_fail(c, "InvalidParameterValue",
			       "The CamRoleName `%s` is not a valid role name.", n);
	return 0;
}

static int parse_launch(struct tc_call *c, struct launch *l, bool run)
{
	const struct sim_region *reg = sim_catalog_region(SIM_TENCENT, c->region);

	if (tc_need_str(c, "Placement.Zone", &l->zone) || tc_need_str(c, "ImageId", &l->image) ||
	    tc_need_str(c, "InstanceType", &l->type))
		return -1;
	if (!sim_catalog_zone_ok(reg, l->zone))
		return tc_fail(c, "InvalidZone.MismatchRegion",
			       "The zone `%s` does not exist in region `%s`.", l->zone, c->region);
	if (!gc_starts_with(l->image, "img-"))
		return tc_fail(c, "InvalidImageId.Malformed", "The image id `%s` is malformed.",
			       l->image);
	if (!sim_catalog_image(SIM_TENCENT, l->image))
		return tc_fail(c, "InvalidImageId.NotFound", "The image `%s` does not exist.",
			       l->image);
	l->itype = sim_catalog_itype(SIM_TENCENT, l->type);
	if (!l->itype)
		return tc_fail(c, "InvalidParameterValue.InstanceTypeNotFound",
			       "The instance type `%s` does not exist.", l->type);
	if (tc_int(c, "InstanceCount", 1, 500, 1, &l->count) ||
	    tc_int(c, "MinCount", 1, 500, l->count, &l->min_count) ||
	    tc_int(c, "SystemDisk.DiskSize", 20, 16384, 50, &l->disk_gb))
		return -1;
	if (l->min_count > l->count)
		return tc_fail(c, "InvalidParameterValue.Range",
			       "MinCount must not be larger than InstanceCount.");
	if (cam_role(c))
		return -1;
	l->token = tc_str(c, "ClientToken");
	if (l->token && strlen(l->token) > SIM_TOKEN_MAX)
		return tc_fail(c, "InvalidClientToken.TooLong",
			       "The ClientToken exceeds 64 bytes.");
	l->name = tc_str(c, "InstanceName");
	if (l->name && strlen(l->name) > 60)
		return tc_fail(c, "InvalidInstanceName.TooLong",
			       "The InstanceName exceeds 60 characters.");
	if (parse_vpc(c, l) || parse_market(c, l, run) || parse_sgs_and_key(c, l))
		return -1;
	tc_tag_spec(c, "instance", &l->tags);
	if (!run)
		return 0;
	const char *ud = tc_str(c, "UserData");
	if (ud && (gc_base64_decode(&l->user_data, ud, strlen(ud)) || strlen(ud) > 16384))
		return tc_fail(c, "InvalidParameterValue.InvalidUserDataFormat",
			       "UserData must be base64 and at most 16 KB.");
	return parse_timer(c, l);
}

static int launch_run(struct tc_call *c, struct launch *l, struct sim_instance ***insts, size_t *n)
{
	static const char *const skip[] = { "ClientToken", NULL };
	struct sim_world *w = c->sim->world;
	struct gc_params flat = GC_PARAMS_INIT;
	struct sim_fault_hit hit;
	const struct sim_placement *pl;
	char fp[65], reservation[SIM_ID_MAX];
	json_t *ids;

	if (tc_bool(c, "DryRun"))
		return dry_run_ok(c);
	flatten(&flat, "", c->body);
	sim_params_fingerprint(&flat, skip, fp);
	gc_params_release(&flat);
	if (l->token) {
		struct sim_token *t = sim_world_token(w, SIM_TENCENT, c->region, l->token);
		/* CVM documents no code for a reused token with other parameters; see docs/sim.md */
		if (t && strcmp(t->fingerprint, fp))
			return tc_fail(c, "InvalidParameter",
				       "The ClientToken `%s` was already used with different "
				       "parameters.",
				       l->token);
		if (t) {
			ids = json_array();
			for (size_t i = 0; i < t->n_ids; i++)
				json_array_append_new(ids, json_string(t->ids[i]));
			c->out = json_pack("{s:o}", "InstanceIdSet", ids);
			return 0;
		}
	}
	sim_faults_launch(c->sim->faults, SIM_TENCENT, "RunInstances", l->zone, l->type, l->spot,
			  (unsigned)l->count, &hit);
	sim_quota_launch(w, SIM_TENCENT, c->region, l->zone, l->type, l->spot, (unsigned)l->count,
			 &hit);
	/* spot and pay-as-you-go quotas are apart (cvm/v20170312/errors.go) */
	if (hit.kind == SIM_FAULT_QUOTA && hit.spot)
		return tc_fail(c, "LimitExceeded.UserSpotQuota",
			       "You are short of the spot instance quota.");
	if (hit.kind == SIM_FAULT_QUOTA)
		return tc_fail(c, "LimitExceeded.InstanceQuota",
			       "The remaining quota is insufficient to create the instances.");
	if (hit.kind == SIM_FAULT_UNSUPPORTED)
		return tc_fail(c, "InvalidParameterValue.InstanceTypeNotSupportHpcCluster",
			       "The instance type `%s` cannot join an HPC cluster.", l->type);
	if (hit.kind == SIM_FAULT_CAPACITY)
		return tc_fail(c, "ResourceInsufficient.SpecifiedInstanceType",
			       "The specified instance type `%s` is sold out in `%s`.", l->type,
			       l->zone);
	if (hit.kind == SIM_FAULT_THROTTLE)
		return tc_fail(c, "RequestLimitExceeded",
			       "The request exceeds the frequency limit for RunInstances.");

	if (tc_run_placement(c, l->zone, l->itype, (unsigned)l->count, &pl))
		return -1;
	struct sim_launch sl = {
		.cloud = SIM_TENCENT,
		.region = c->region,
		.zone = l->zone,
		.type = l->type,
		.image = l->image,
		.key_name = l->key_id,
		.authorized_key = l->kp ? l->kp->public_key : NULL,
		.security_groups = (const char *const *)l->sgs,
		.n_security_groups = l->n_sgs,
		.subnet = l->subnet,
		.name = l->name,
		.tags = &l->tags,
		.spot = l->spot,
		.spot_max_price = l->max_price,
		.client_token = l->token,
		.user_data = tc_get(c, "UserData") ? l->user_data.data : NULL,
		.disk_gb = (unsigned)l->disk_gb,
		.release_at_wall = l->release_at,
		.count = (unsigned)l->count,
		.role = tc_str(c, "CamRoleName"),
	};
	sim_world_launch(w, &sl, insts, n, reservation);
	for (size_t i = 0; pl && i < *n; i++)
		snprintf((*insts)[i]->placement, sizeof((*insts)[i]->placement), "%s", pl->id);
	if (l->token)
		sim_world_remember_token(w, SIM_TENCENT, c->region, l->token, fp, reservation,
					 *insts, *n);
	ids = json_array();
	for (size_t i = 0; i < *n; i++)
		json_array_append_new(ids, json_string((*insts)[i]->id));
	c->out = json_pack("{s:o}", "InstanceIdSet", ids);
	return 0;
}

static int run_instances(struct tc_call *c)
{
	struct launch l;
	struct sim_instance **insts = NULL;
	size_t n = 0;
	int rc;

	memset(&l, 0, sizeof(l));
	gc_buf_init(&l.user_data, 16 * 1024);
	rc = parse_launch(c, &l, true);
	if (!rc)
		rc = launch_run(c, &l, &insts, &n);
	free(insts);
	launch_release(&l);
	return rc;
}

static json_t *item_price(double unit, double discount_unit)
{
	return json_pack("{s:f, s:s, s:f, s:f}", "UnitPrice", unit, "ChargeUnit", "HOUR",
			 "UnitPriceDiscount", discount_unit, "Discount",
			 unit > 0 ? discount_unit * 100.0 / unit : 100.0);
}

static int inquiry_price(struct tc_call *c)
{
	struct launch l;
	int rc;

	memset(&l, 0, sizeof(l));
	gc_buf_init(&l.user_data, 16 * 1024);
	rc = parse_launch(c, &l, false);
	if (!rc && l.months) {
		/* a subscription: the total of its term, 730 hours a month, at a share of the
		 * pay-as-you-go price that falls with the term (docs/sim.md) */
		double list = sim_catalog_site_price(l.itype, false, c->intl) * (double)l.count *
			730.0 * (double)l.months;
		double share = l.months >= 36 ? 0.40
			: l.months >= 24      ? 0.50
			: l.months >= 12      ? 0.62
					      : 0.85;

		c->out = json_pack("{s:{s:{s:f, s:f, s:f}, s:o}}", "Price", "InstancePrice",
				   "OriginalPrice", list, "DiscountPrice", list * share, "Discount",
				   share * 100.0, "BandwidthPrice", item_price(0.8, 0.8));
	} else if (!rc) {
		/* a bare number, in the currency of the key's site */
		double unit = sim_catalog_site_price(l.itype, false, c->intl) * (double)l.count;
		double disc = sim_catalog_site_price(l.itype, l.spot, c->intl) * (double)l.count;
		c->out = json_pack("{s:{s:o, s:o}}", "Price", "InstancePrice",
				   item_price(unit, disc), "BandwidthPrice", item_price(0.8, 0.8));
	}
	launch_release(&l);
	return rc;
}

/* --- DescribeInstances ---------------------------------------------------------------------- */

static json_t *instance_json(const struct sim_instance *inst)
{
	const struct sim_itype *t = sim_catalog_itype(SIM_TENCENT, inst->type);
	const struct sim_image *img = sim_catalog_image(SIM_TENCENT, inst->image);
	char created[32], uuid[40];
	unsigned char h[GC_SHA256_LEN];
	char hex[GC_SHA256_HEX_LEN];
	json_t *sgs = json_array(), *keys = json_array(), *priv = json_array(), *pub = json_null();

	tc_format_time(inst->launch_wall, true, created);
	gc_sha256(inst->id, strlen(inst->id), h);
	gc_hex(h, 16, hex);
	snprintf(uuid, sizeof(uuid), "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
		 hex + 20);
	for (size_t i = 0; i < inst->n_security_groups; i++)
		json_array_append_new(sgs, json_string(inst->security_groups[i]));
	if (inst->key_name[0])
		json_array_append_new(keys, json_string(inst->key_name));
	if (inst->private_ip[0])
		json_array_append_new(priv, json_string(inst->private_ip));
	if (inst->public_ip[0])
		pub = json_pack("[s]", inst->public_ip);

	bool operating = inst->state == SIM_PENDING || inst->state == SIM_SHUTTING_DOWN;
	const char *latest = inst->state == SIM_PENDING || inst->state == SIM_RUNNING ||
			inst->state == SIM_LAUNCH_FAILED
		? "RunInstances"
		: "TerminateInstances";
	json_t *o = json_object();
	json_object_set_new(o, "InstanceId", json_string(inst->id));
	json_object_set_new(o, "InstanceName", json_string(inst->name));
	json_object_set_new(o, "InstanceState",
			    json_string(sim_state_name(SIM_TENCENT, inst->state)));
	json_object_set_new(o, "InstanceType", json_string(inst->type));
	json_object_set_new(o, "CPU", json_integer(t ? t->vcpu : 0));
	json_object_set_new(o, "Memory", json_integer(t ? t->memory_mib / 1024 : 0));
	json_object_set_new(o, "InstanceChargeType",
			    json_string(inst->spot ? "SPOTPAID" : "POSTPAID_BY_HOUR"));
	json_object_set_new(o, "Placement",
			    json_pack("{s:s, s:i}", "Zone", inst->zone, "ProjectId", 0));
	json_object_set_new(o, "HpcClusterId", json_string(inst->placement));
	json_object_set_new(o, "SystemDisk",
			    json_pack("{s:s, s:s, s:i}", "DiskType", "CLOUD_PREMIUM", "DiskId",
				      "disk-gpucsim0", "DiskSize", (int)inst->disk_gb));
	json_object_set_new(o, "DataDisks", json_array());
	json_object_set_new(o, "PrivateIpAddresses", priv);
	json_object_set_new(o, "PublicIpAddresses", pub);
	json_object_set_new(o, "InternetAccessible",
			    json_pack("{s:s, s:i, s:b}", "InternetChargeType",
				      "TRAFFIC_POSTPAID_BY_HOUR", "InternetMaxBandwidthOut",
				      inst->public_ip[0] ? 1 : 0, "PublicIpAssigned",
				      inst->public_ip[0] != 0));
	{
		const struct sim_region *reg = sim_catalog_region(SIM_TENCENT, inst->region);
		char vpc[SIM_ID_MAX] = TC_DEFAULT_VPC;

		if (sim_user_subnet_zone(reg, inst->subnet))
			sim_user_vpc(SIM_TENCENT, inst->region, vpc);
		json_object_set_new(o, "VirtualPrivateCloud",
				    json_pack("{s:s, s:s, s:b}", "VpcId", vpc, "SubnetId",
					      inst->subnet, "AsVpcGateway", 0));
	}
	json_object_set_new(o, "ImageId", json_string(inst->image));
	json_object_set_new(o, "OsName", json_string(img ? img->name : ""));
	json_object_set_new(o, "CreatedTime", json_string(created));
	json_object_set_new(o, "ExpiredTime", json_null());
	json_object_set_new(o, "RenewFlag", json_null());
	json_object_set_new(o, "SecurityGroupIds", sgs);
	json_object_set_new(o, "LoginSettings", json_pack("{s:o}", "KeyIds", keys));
	json_object_set_new(o, "Tags", tc_tags_json(&inst->tags));
	json_object_set_new(o, "RestrictState", json_string("NORMAL"));
	/* a node powered off from inside keeps charging: STOP_CHARGING is a StopInstances
	 * mode, the default is KEEP_CHARGING (docs/internals/idle.md) */
	json_object_set_new(
		o, "StopChargingMode",
		json_string(inst->state == SIM_STOPPED ? "KEEP_CHARGING" : "NOT_APPLICABLE"));
	json_object_set_new(
		o, "IsolatedSource",
		json_string(inst->state == SIM_RECYCLED ? "MANUAL_ISOLATE" : "NOTISOLATED"));
	json_object_set_new(o, "Uuid", json_string(uuid));
	json_object_set_new(o, "LatestOperation", json_string(latest));
	json_object_set_new(o, "LatestOperationState",
			    json_string(inst->state == SIM_LAUNCH_FAILED ? "FAILED"
						: operating		 ? "OPERATING"
									 : "SUCCESS"));
	json_object_set_new(o, "LatestOperationRequestId", json_string(""));
	json_object_set_new(o, "LatestOperationErrorMsg", json_string(inst->state_reason));
	json_object_set_new(o, "GPUInfo",
			    json_pack("{s:f, s:s, s:[]}", "GPUCount", t ? (double)t->gpus : 0.0,
				      "GPUType", t && t->gpus ? t->gpu_model : "", "GPUId"));
	json_object_set_new(o, "HostName", json_string(inst->name[0] ? inst->name : inst->id));
	json_object_set_new(o, "DefaultLoginUser", json_string("ubuntu"));
	json_object_set_new(o, "DefaultLoginPort", json_integer(22));
	json_object_set_new(o, "DisableApiTermination", json_false());
	json_object_set_new(o, "LicenseType", json_string("TencentCloud"));
	return o;
}

static bool instance_matches(struct tc_call *c, const struct sim_instance *inst, json_t *ids)
{
	if (inst->state == SIM_TERMINATED)
		return false;
	if (ids) {
		bool found = false;
		size_t i;
		json_t *v;
		json_array_foreach(ids, i, v)
		{
			found |= !strcmp(json_string_value(v), inst->id);
		}
		return found;
	}
	return tc_filter_ok(c, "zone", inst->zone) && tc_filter_ok(c, "instance-id", inst->id) &&
		tc_filter_ok(c, "instance-name", inst->name) &&
		tc_filter_ok(c, "instance-state", sim_state_name(SIM_TENCENT, inst->state)) &&
		tc_filter_ok(c, "instance-charge-type",
			     inst->spot ? "SPOTPAID" : "POSTPAID_BY_HOUR") &&
		tc_filter_ok(c, "instance-type", inst->type) &&
		tc_filter_ok(c, "image-id", inst->image) &&
		tc_filter_ok(c, "private-ip-address", inst->private_ip) &&
		tc_filter_ok(c, "public-ip-address", inst->public_ip) &&
		tc_filter_ok(c, "subnet-id", inst->subnet) && tc_filter_ok(c, "project-id", "0") &&
		tc_filter_tags(c, &inst->tags);
}

static int describe_instances(struct tc_call *c)
{
	static const char *const names[] = {
		"zone",
		"project-id",
		"instance-id",
		"instance-name",
		"instance-state",
		"instance-charge-type",
		"instance-type",
		"image-id",
		"private-ip-address",
		"public-ip-address",
		"subnet-id",
		"tag-key",
		"tag-value",
		"tag:",
		NULL,
	};
	json_t *ids = tc_get(c, "InstanceIds"), *list;
	struct sim_instance **all = NULL;
	int64_t offset, limit;
	size_t n, total = 0;

	if (ids && tc_get(c, "Filters"))
		return tc_fail(c, "InvalidParameterCombination",
			       "InstanceIds and Filters cannot be specified at the same time.");
	if (json_array_size(ids) > 100)
		return tc_fail(c, "InvalidParameterValue.LimitExceeded",
			       "At most 100 InstanceIds are allowed.");
	for (size_t i = 0; i < json_array_size(ids); i++)
		if (!gc_starts_with(json_string_value(json_array_get(ids, i)), "ins-"))
			return tc_fail(c, "InvalidInstanceId.Malformed",
				       "The instance id `%s` is malformed.",
				       json_string_value(json_array_get(ids, i)));
	if (tc_check_filters(c, names, 10, 5) || tc_paging(c, 20, 100, &offset, &limit))
		return -1;
	list = json_array();
	n = sim_world_list(c->sim->world, SIM_TENCENT, c->region, &all);
	for (size_t i = 0; i < n; i++) {
		if (!instance_matches(c, all[i], ids))
			continue;
		size_t pos = total++;
		if (pos >= (size_t)offset && pos < (size_t)(offset + limit))
			json_array_append_new(list, instance_json(all[i]));
	}
	free(all);
	c->out = json_pack("{s:i, s:o}", "TotalCount", (int)total, "InstanceSet", list);
	return 0;
}

static int terminate_instances(struct tc_call *c)
{
	json_t *ids = tc_get(c, "InstanceIds");
	struct sim_instance **insts;
	size_t n = json_array_size(ids);

	if (!n)
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `InstanceIds`.");
	if (n > 100)
		return tc_fail(c, "InvalidParameterValue.LimitExceeded",
			       "At most 100 InstanceIds are allowed.");
	insts = gc_xcalloc(n, sizeof(*insts));
	for (size_t i = 0; i < n; i++) {
		const char *id = json_string_value(json_array_get(ids, i));
		if (!gc_starts_with(id, "ins-")) {
			free(insts);
			return tc_fail(c, "InvalidInstanceId.Malformed",
				       "The instance id `%s` is malformed.", id);
		}
		insts[i] = find_instance(c, id);
		if (!insts[i]) {
			free(insts);
			return tc_fail(c, "InvalidInstanceId.NotFound",
				       "The instance `%s` does not exist.", id);
		}
		if (insts[i]->state == SIM_SHUTTING_DOWN) {
			free(insts);
			return tc_fail(c, "UnsupportedOperation.InstanceStateTerminating",
				       "The instance `%s` is already being terminated.", id);
		}
	}
	for (size_t i = 0; i < n; i++)
		sim_world_terminate(c->sim->world, insts[i]);
	free(insts);
	c->out = json_object();
	return 0;
}

/* --- timers (DescribeInstancesActionTimer, DeleteInstancesActionTimer, ImportInstancesActionTimer)
 *
 * An instance holds at most one timer here (the launch's, or one imported since): its id is
 * derived from the instance's, and it is UNDO until it fires. */

static void timer_id(const struct sim_instance *inst, char out[64])
{
	snprintf(out, 64, "tmr-%s", inst->id + (gc_starts_with(inst->id, "ins-") ? 4 : 0));
}

/* The instances named by key (an array of ids), each existing; *out is allocated. */
static int named_instances(struct tc_call *c, const char *key, size_t max,
			   struct sim_instance ***out, size_t *n_out)
{
	json_t *ids = tc_get(c, key);
	size_t n = json_array_size(ids);

	*out = NULL;
	*n_out = 0;
	if (!n)
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `%s`.", key);
	if (n > max)
		return tc_fail(c, "InvalidParameterValue.LimitExceeded",
			       "At most %zu %s are allowed.", max, key);
	*out = gc_xcalloc(n, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		const char *id = json_string_value(json_array_get(ids, i));

		if (!((*out)[i] = find_instance(c, id))) {
			free(*out);
			*out = NULL;
			return tc_fail(c, "InvalidInstanceId.NotFound",
				       "The instance `%s` does not exist.", id ? id : "");
		}
	}
	*n_out = n;
	return 0;
}

static int describe_timers(struct tc_call *c)
{
	struct sim_instance **insts;
	json_t *list = json_array();
	size_t n;

	if (named_instances(c, "InstanceIds", 100, &insts, &n)) {
		json_decref(list);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char id[64], when[32];

		if (!insts[i]->release_at_wall)
			continue;
		timer_id(insts[i], id);
		tc_format_time(insts[i]->release_at_wall, true, when);
		json_array_append_new(list,
				      json_pack("{s:s, s:s, s:s, s:s, s:s}", "TimerAction",
						"TerminateInstances", "ActionTime", when,
						"ActionTimerId", id, "Status", "UNDO", "InstanceId",
						insts[i]->id));
	}
	free(insts);
	c->out = json_pack("{s:o}", "ActionTimers", list);
	return 0;
}

static int delete_timers(struct tc_call *c)
{
	json_t *ids = tc_get(c, "ActionTimerIds"), *v;
	size_t i;

	if (!json_array_size(ids))
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `ActionTimerIds`.");
	json_array_foreach(ids, i, v)
	{
		const char *tid = json_string_value(v);
		struct sim_instance *inst = NULL;
		char want[64];

		if (tid && gc_starts_with(tid, "tmr-")) {
			char *iid = gc_xasprintf("ins-%s", tid + 4);

			inst = find_instance(c, iid);
			free(iid);
		}
		if (inst)
			timer_id(inst, want);
		if (!inst || !inst->release_at_wall || strcmp(want, tid))
			return tc_fail(c, "InvalidParameterValue.InvalidActionTimerId",
				       "The action timer `%s` does not exist or has run.",
				       tid ? tid : "");
	}
	json_array_foreach(ids, i, v)
	{
		char *iid = gc_xasprintf("ins-%s", json_string_value(v) + 4);

		find_instance(c, iid)->release_at_wall = 0;
		free(iid);
	}
	c->out = json_object();
	return 0;
}

static int import_timers(struct tc_call *c)
{
	struct sim_instance **insts;
	struct launch l;
	json_t *list;
	size_t n;

	memset(&l, 0, sizeof(l));
	if (!tc_get(c, "ActionTimer"))
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `ActionTimer`.");
	if (parse_timer(c, &l) || named_instances(c, "InstanceIds", 100, &insts, &n))
		return -1;
	list = json_array();
	for (size_t i = 0; i < n; i++) {
		char id[64];

		insts[i]->release_at_wall = l.release_at;
		timer_id(insts[i], id);
		json_array_append_new(list, json_string(id));
	}
	free(insts);
	c->out = json_pack("{s:o}", "ActionTimerIds", list);
	return 0;
}

/* --- the Tag service (2018-08-13): AttachResourcesTag, DetachResourcesTag on CVM instances */

static int resources_tag(struct tc_call *c, bool attach)
{
	const char *svc, *prefix, *region, *key, *value = NULL;
	json_t *ids = tc_get(c, "ResourceIds");
	struct sim_instance **insts;
	size_t n = json_array_size(ids);

	if (tc_need_str(c, "ServiceType", &svc) || tc_need_str(c, "TagKey", &key) ||
	    tc_need_str(c, "ResourceRegion", &region) ||
	    tc_need_str(c, "ResourcePrefix", &prefix) ||
	    (attach && tc_need_str(c, "TagValue", &value)))
		return -1;
	if (strcmp(svc, "cvm") || strcmp(prefix, "instance"))
		return tc_fail(
			c, "InvalidParameterValue.ResourceDescriptionError",
			"Only ServiceType `cvm` with ResourcePrefix `instance` is modelled.");
	if (!n)
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `ResourceIds`.");
	if (n > 50)
		return tc_fail(c, "InvalidParameterValue.ResourceIdsLimitExceeded",
			       "At most 50 ResourceIds are allowed.");
	insts = gc_xcalloc(n, sizeof(*insts));
	for (size_t i = 0; i < n; i++) {
		const char *id = json_string_value(json_array_get(ids, i));

		insts[i] = sim_world_instance(c->sim->world, SIM_TENCENT, id ? id : "");
		if (!insts[i] || insts[i]->state == SIM_TERMINATED ||
		    strcmp(insts[i]->region, region)) {
			free(insts);
			return tc_fail(c, "ResourceNotFound", "The resource `%s` does not exist.",
				       id ? id : "");
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (attach)
			sim_tags_set(&insts[i]->tags, key, value);
		else
			sim_tags_remove(&insts[i]->tags, key);
	}
	free(insts);
	c->out = json_object();
	return 0;
}

static int attach_tag(struct tc_call *c)
{
	return resources_tag(c, true);
}

static int detach_tag(struct tc_call *c)
{
	return resources_tag(c, false);
}

/* --- key pairs -------------------------------------------------------------------------------- */

/* The "type base64" part of an OpenSSH public-key line, for duplicate detection. */
static size_t key_body_len(const char *line)
{
	const char *sp = strchr(line, ' ');
	if (!sp)
		return strlen(line);
	const char *sp2 = strchr(sp + 1, ' ');
	return sp2 ? (size_t)(sp2 - line) : strlen(line);
}

static int import_key_pair(struct tc_call *c)
{
	const char *name, *key;
	struct sim_keypair **all = NULL;
	struct sim_tags tags = { 0 };
	struct gc_error err;
	struct sim_keypair *kp;
	enum sim_key_kind kind;
	size_t n;

	if (tc_need_str(c, "KeyName", &name) || tc_need_str(c, "PublicKey", &key))
		return -1;
	if (!tc_get(c, "ProjectId"))
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `ProjectId`.");
	if (strlen(name) > 25)
		return tc_fail(c, "InvalidKeyPairNameTooLong",
			       "The key name exceeds 25 characters.");
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return tc_fail(c, "InvalidKeyPairNameIncludeIllegalChar",
				       "The key name may contain only letters, digits and "
				       "underscores.");
	n = sim_world_list_keys(c->sim->world, SIM_TENCENT, c->region, &all);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(all[i]->name, name)) {
			free(all);
			return tc_fail(c, "InvalidKeyPairName.Duplicate",
				       "The key name `%s` already exists.", name);
		}
		size_t len = key_body_len(all[i]->public_key);
		if (len == key_body_len(key) && !strncmp(all[i]->public_key, key, len)) {
			tc_fail(c, "InvalidPublicKey.Duplicate",
				"The public key already exists as `%s`.", all[i]->id);
			free(all);
			return -1;
		}
	}
	free(all);
	gc_error_init(&err);
	if (sim_ssh_key_kind(key, &kind, &err) < 0)
		return tc_fail(c, "InvalidPublicKey.Malformed", "The public key is malformed: %s.",
			       err.message);
	/* CVM takes the OpenSSH RSA format only. */
	if (kind != SIM_KEY_RSA)
		return tc_fail(c, "InvalidPublicKey.Malformed",
			       "The public key is malformed: only ssh-rsa keys are supported.");
	tc_tag_spec(c, "keypair", &tags);
	kp = sim_world_import_key(c->sim->world, SIM_TENCENT, c->region, name, key, &tags, &err);
	sim_tags_release(&tags);
	if (!kp)
		return tc_fail(c, "InvalidPublicKey.Malformed", "The public key is malformed: %s.",
			       err.message);
	c->out = json_pack("{s:s}", "KeyId", kp->id);
	return 0;
}

static int describe_key_pairs(struct tc_call *c)
{
	static const char *const names[] = { "project-id", "key-name", "tag-key",
					     "tag-value",  "tag:",     NULL };
	json_t *ids = tc_get(c, "KeyIds"), *list;
	struct sim_keypair **all = NULL;
	int64_t offset, limit;
	size_t n, total = 0;

	if (ids && tc_get(c, "Filters"))
		return tc_fail(c, "InvalidParameterCombination",
			       "KeyIds and Filters cannot be specified at the same time.");
	if (json_array_size(ids) > 100)
		return tc_fail(c, "InvalidParameterValue.LimitExceeded",
			       "At most 100 KeyIds are allowed.");
	if (tc_check_filters(c, names, 10, 5) || tc_paging(c, 20, 100, &offset, &limit))
		return -1;
	list = json_array();
	n = sim_world_list_keys(c->sim->world, SIM_TENCENT, c->region, &all);
	for (size_t i = 0; i < n; i++) {
		struct sim_keypair *kp = all[i];
		if (ids) {
			bool found = false;
			for (size_t k = 0; k < json_array_size(ids); k++)
				found |= !strcmp(json_string_value(json_array_get(ids, k)), kp->id);
			if (!found)
				continue;
		}
		if (!tc_filter_ok(c, "key-name", kp->name) || !tc_filter_ok(c, "project-id", "0") ||
		    !tc_filter_tags(c, &kp->tags))
			continue;
		size_t pos = total++;
		if (pos < (size_t)offset || pos >= (size_t)(offset + limit))
			continue;
		char created[32];
		tc_format_time(kp->created_wall, true, created);
		json_array_append_new(list,
				      json_pack("{s:s, s:s, s:i, s:s, s:s, s:[], s:s, s:o}",
						"KeyId", kp->id, "KeyName", kp->name, "ProjectId",
						0, "Description", "", "PublicKey", kp->public_key,
						"AssociatedInstanceIds", "CreatedTime", created,
						"Tags", tc_tags_json(&kp->tags)));
	}
	free(all);
	c->out = json_pack("{s:i, s:o}", "TotalCount", (int)total, "KeyPairSet", list);
	return 0;
}

static int delete_key_pairs(struct tc_call *c)
{
	json_t *ids = tc_get(c, "KeyIds");
	size_t n = json_array_size(ids);

	if (!n)
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `KeyIds`.");
	if (n > 100)
		return tc_fail(c, "InvalidParameterValue.LimitExceeded",
			       "At most 100 KeyIds are allowed.");
	for (size_t i = 0; i < n; i++) {
		const char *id = json_string_value(json_array_get(ids, i));
		if (!sim_world_keypair(c->sim->world, SIM_TENCENT, c->region, id) ||
		    !gc_starts_with(id, "skey-"))
			return tc_fail(c, "InvalidKeyPairId.NotFound",
				       "The key pair `%s` does not exist.", id);
	}
	for (size_t i = 0; i < n; i++)
		sim_world_delete_key(c->sim->world,
				     sim_world_keypair(c->sim->world, SIM_TENCENT, c->region,
						       json_string_value(json_array_get(ids, i))));
	c->out = json_object();
	return 0;
}

/* --- catalogue ------------------------------------------------------------------------------- */

static int describe_images(struct tc_call *c)
{
	static const char *const names[] = { "image-id",    "image-type", "image-name", "platform",
					     "image-state", "tag-key",	  "tag:",	NULL };
	const struct sim_image *imgs;
	size_t n = sim_catalog_images(SIM_TENCENT, &imgs), total = 0;
	json_t *ids = tc_get(c, "ImageIds"), *list;
	const char *type = tc_str(c, "InstanceType");
	int64_t offset, limit;

	if (ids && tc_get(c, "Filters"))
		return tc_fail(c, "InvalidParameter.InvalidParameterCoexistImageIdsFilters",
			       "ImageIds and Filters cannot be specified at the same time.");
	if (type && !sim_catalog_itype(SIM_TENCENT, type))
		return tc_fail(c, "InvalidParameterValue.InstanceTypeNotFound",
			       "The instance type `%s` does not exist.", type);
	if (tc_check_filters(c, names, 10, 5) || tc_paging(c, 20, 100, &offset, &limit))
		return -1;
	list = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct sim_image *img = &imgs[i];
		if (ids) {
			bool found = false;
			for (size_t k = 0; k < json_array_size(ids); k++)
				found |=
					!strcmp(json_string_value(json_array_get(ids, k)), img->id);
			if (!found)
				continue;
		}
		bool name_ok = true;
		json_t *filters = tc_get(c, "Filters"), *f;
		size_t k;
		json_array_foreach(filters, k, f)
		{
			/* image-name is a fuzzy match */
			if (!strcmp(json_string_value(json_object_get(f, "Name")), "image-name")) {
				bool any = false;
				json_t *vals = json_object_get(f, "Values");
				for (size_t j = 0; j < json_array_size(vals); j++)
					any |= strstr(img->name,
						      json_string_value(json_array_get(vals, j))) !=
						NULL;
				name_ok &= any;
			}
		}
		if (!name_ok || !tc_filter_ok(c, "image-id", img->id) ||
		    !tc_filter_ok(c, "image-type", img->owner) ||
		    !tc_filter_ok(c, "platform", "Ubuntu") ||
		    !tc_filter_ok(c, "image-state", "NORMAL"))
			continue;
		size_t pos = total++;
		if (pos < (size_t)offset || pos >= (size_t)(offset + limit))
			continue;
		json_array_append_new(
			list,
			json_pack(
				"{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:i, "
				"s:b, s:[], s:[], s:s, s:s, s:b}",
				"ImageId", img->id, "OsName", img->name, "ImageType", img->owner,
				"CreatedTime", img->created, "ImageName", img->name,
				"ImageDescription", img->description, "ImageSize", 20,
				"Architecture", "x86_64", "ImageState", "NORMAL", "Platform",
				"Ubuntu", "ImageCreator", "", "ImageSource", "OFFICIAL",
				"SyncPercent", 100, "IsSupportCloudinit", 1, "SnapshotSet", "Tags",
				"LicenseType", "TencentCloud", "ImageFamily", "", "ImageDeprecated",
				0));
	}
	c->out = json_pack("{s:i, s:o}", "TotalCount", (int)total, "ImageSet", list);
	return 0;
}

static bool type_filters_ok(struct tc_call *c, const char *zone, const struct sim_itype *t)
{
	return tc_filter_ok(c, "zone", zone) && tc_filter_ok(c, "instance-family", t->family) &&
		tc_filter_ok(c, "instance-type", t->name);
}

static int describe_instance_type_configs(struct tc_call *c)
{
	static const char *const names[] = { "zone", "instance-family", "instance-type", NULL };
	const struct sim_region *reg = sim_catalog_region(SIM_TENCENT, c->region);
	const struct sim_itype *types;
	size_t nt = sim_catalog_itypes(SIM_TENCENT, &types);
	json_t *list;

	if (tc_check_filters(c, names, 10, 100))
		return -1;
	list = json_array();
	for (const char *const *z = reg->zones; *z; z++) {
		for (size_t i = 0; i < nt; i++) {
			const struct sim_itype *t = &types[i];
			if (!type_filters_ok(c, *z, t) ||
			    !sim_catalog_offered(SIM_TENCENT, *z, t->name))
				continue;
			json_array_append_new(
				list,
				json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:f, s:s, s:i}",
					  "Zone", *z, "InstanceType", t->name, "InstanceFamily",
					  t->family, "GPU", (int)t->gpus, "CPU", (int)t->vcpu,
					  "Memory", (int)(t->memory_mib / 1024), "FPGA", 0,
					  "GpuCount", (double)t->gpus, "GpuType",
					  t->gpus ? t->gpu_model : "", "GpuMemory",
					  (int)(t->gpu_memory_mib / 1024)));
		}
	}
	c->out = json_pack("{s:o}", "InstanceTypeConfigSet", list);
	return 0;
}

static int describe_zone_instance_config_infos(struct tc_call *c)
{
	static const char *const names[] = { "zone",	      "instance-family",
					     "instance-type", "instance-charge-type",
					     "sort-keys",     NULL };
	static const char *const charges[] = { "POSTPAID_BY_HOUR", "SPOTPAID" };
	const struct sim_region *reg = sim_catalog_region(SIM_TENCENT, c->region);
	const struct sim_itype *types;
	size_t nt = sim_catalog_itypes(SIM_TENCENT, &types);
	json_t *list;

	if (tc_check_filters(c, names, 10, 100))
		return -1;
	list = json_array();
	for (const char *const *z = reg->zones; *z; z++) {
		for (size_t i = 0; i < nt; i++) {
			const struct sim_itype *t = &types[i];
			if (!type_filters_ok(c, *z, t) ||
			    !sim_catalog_offered(SIM_TENCENT, *z, t->name))
				continue;
			for (size_t k = 0; k < 2; k++) {
				if (!tc_filter_ok(c, "instance-charge-type", charges[k]))
					continue;
				double od = sim_catalog_price(t, false);
				double price = sim_catalog_price(t, k == 1);
				bool sold = sim_quota_sold_out(SIM_TENCENT, *z, t->name);
				json_array_append_new(
					list,
					json_pack("{s:s, s:s, s:s, s:i, s:{}, s:i, s:i, s:s, s:s, "
						  "s:[], s:s, s:o, s:s, s:i, s:i, s:i, s:s, s:i, "
						  "s:i, s:s, s:f, s:s, s:s}",
						  "Zone", *z, "InstanceType", t->name,
						  "InstanceChargeType", charges[k], "NetworkCard",
						  25, "Externals", "Cpu", (int)t->vcpu, "Memory",
						  (int)(t->memory_mib / 1024), "InstanceFamily",
						  t->family, "TypeName", t->family,
						  "LocalDiskTypeList", "Status",
						  sold ? "SOLD_OUT" : "SELL", "Price",
						  item_price(od, price), "SoldOutReason", "",
						  "InstanceBandwidth", 10, "InstancePps", 100,
						  "StorageBlockAmount", 0, "CpuType", "Intel Xeon",
						  "Gpu", (int)t->gpus, "Fpga", 0, "Remark", "",
						  "GpuCount", (double)t->gpus, "Frequency",
						  "2.5GHz", "StatusCategory",
						  sold ? "WithoutStock" : "EnoughStock"));
			}
		}
	}
	c->out = json_pack("{s:o}", "InstanceTypeQuotaSet", list);
	return 0;
}

static const char *region_name(const char *region)
{
	static const char *const names[][2] = {
		{ "ap-guangzhou", "华南地区(广州)" },
		{ "ap-shanghai", "华东地区(上海)" },
		{ "ap-singapore", "亚太东南(新加坡)" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i][0], region))
			return names[i][1];
	return region;
}

static int describe_zones(struct tc_call *c)
{
	const struct sim_region *reg = sim_catalog_region(SIM_TENCENT, c->region);
	json_t *list = json_array();
	size_t n = 0;

	const struct sim_region *regs;
	size_t nr = sim_catalog_regions(SIM_TENCENT, &regs), ordinal = 1;

	for (size_t i = 0; i < nr; i++)
		if (!strcmp(regs[i].name, reg->name))
			ordinal = i + 1;
	for (const char *const *z = reg->zones; *z; z++, n++) {
		char zone_id[48], name[160];
		const char *dash = strrchr(*z, '-');
		/* CVM zone ids are numeric, the region's number then the zone's: 100003 */
		snprintf(zone_id, sizeof(zone_id), "%zu%05ld", ordinal,
			 dash ? strtol(dash + 1, NULL, 10) : 0L);
		snprintf(name, sizeof(name), "%s%s", region_name(reg->name), dash ? dash : "");
		json_array_append_new(list,
				      json_pack("{s:s, s:s, s:s, s:s}", "Zone", *z, "ZoneName",
						name, "ZoneId", zone_id, "ZoneState", "AVAILABLE"));
	}
	c->out = json_pack("{s:i, s:o}", "TotalCount", (int)n, "ZoneSet", list);
	return 0;
}

/*
 * DescribeAccountQuota: the account's instance-count quotas per zone, post-paid and spot
 * (AccountQuotaOverview.AccountQuota.PostPaidQuotaSet / SpotPaidQuotaSet, each row
 * {Zone, TotalQuota, UsedQuota, RemainingQuota}); use is the account's instances of the
 * market in the zone that are not terminated. sim/quota.h sets the limits (the same in
 * every zone) and the permission refusal.
 */
static int describe_account_quota(struct tc_call *c)
{
	static const char *const names[] = { "zone", "quota-type", NULL };
	static const char *const sets[] = { "PostPaidQuotaSet", "SpotPaidQuotaSet" };
	const struct sim_region *reg = sim_catalog_region(SIM_TENCENT, c->region);
	struct sim_instance **all = NULL;
	size_t n;
	json_t *quota;

	if (sim_quota_denied(SIM_TENCENT))
		return tc_fail(c, "UnauthorizedOperation",
			       "The current user does not have permission to perform "
			       "cvm:DescribeAccountQuota.");
	if (tc_check_filters(c, names, 10, 10))
		return -1;
	n = sim_world_list(c->sim->world, SIM_TENCENT, c->region, &all);
	quota = json_object();
	for (size_t k = 0; k < 2; k++) {
		json_t *rows = json_array();
		int64_t limit = sim_quota_limit(SIM_TENCENT, k == 1);

		for (const char *const *z = reg->zones; *z; z++) {
			int64_t used = 0;

			if (!tc_filter_ok(c, "zone", *z))
				continue;
			for (size_t i = 0; i < n; i++)
				if (all[i]->spot == (k == 1) && !strcmp(all[i]->zone, *z) &&
				    all[i]->state != SIM_TERMINATED &&
				    all[i]->state != SIM_LAUNCH_FAILED)
					used++;
			json_array_append_new(
				rows,
				json_pack("{s:s, s:I, s:I, s:I}", "Zone", *z, "TotalQuota",
					  (json_int_t)limit, "UsedQuota", (json_int_t)used,
					  "RemainingQuota",
					  (json_int_t)(used < limit ? limit - used : 0)));
		}
		if (tc_filter_ok(c, "quota-type", sets[k]))
			json_object_set_new(quota, sets[k], rows);
		else
			json_decref(rows);
	}
	free(all);
	c->out = json_pack("{s:I, s:{s:s, s:o}}", "AppId", (json_int_t)1251000000,
			   "AccountQuotaOverview", "Region", c->region, "AccountQuota", quota);
	return 0;
}

static int describe_regions(struct tc_call *c)
{
	const struct sim_region *regs;
	size_t n = sim_catalog_regions(SIM_TENCENT, &regs);
	json_t *list = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(list,
				      json_pack("{s:s, s:s, s:s}", "Region", regs[i].name,
						"RegionName", region_name(regs[i].name),
						"RegionState", "AVAILABLE"));
	c->out = json_pack("{s:i, s:o}", "TotalCount", (int)n, "RegionSet", list);
	return 0;
}

const struct tc_action tc_cvm_actions[] = {
	{ "RunInstances", run_instances, s_run, true },
	{ "InquiryPriceRunInstances", inquiry_price, s_inquiry, true },
	{ "DescribeInstances", describe_instances, s_describe, true },
	{ "TerminateInstances", terminate_instances, s_terminate, true },
	{ "ImportKeyPair", import_key_pair, s_import, true },
	{ "DescribeKeyPairs", describe_key_pairs, s_describe_keys, true },
	{ "DeleteKeyPairs", delete_key_pairs, s_delete_keys, true },
	{ "DescribeImages", describe_images, s_images, true },
	{ "DescribeInstanceTypeConfigs", describe_instance_type_configs, s_filters_only, true },
	{ "DescribeZoneInstanceConfigInfos", describe_zone_instance_config_infos, s_filters_only,
	  true },
	{ "DescribeZones", describe_zones, s_empty, true },
	{ "DescribeAccountQuota", describe_account_quota, s_filters_only, true },
	{ "DescribeRegions", describe_regions, s_empty, false },
	{ "DescribeInstancesActionTimer", describe_timers, s_timers, true },
	{ "DeleteInstancesActionTimer", delete_timers, s_timers, true },
	{ "ImportInstancesActionTimer", import_timers, s_timers, true },
	{ NULL, NULL, NULL, false },
};

/* The Tag service shares STS's version (2018-08-13); cvm.c looks both tables up. */
const struct tc_action tc_tag_actions[] = {
	{ "AttachResourcesTag", attach_tag, s_resources_tag, false },
	{ "DetachResourcesTag", detach_tag, s_resources_tag, false },
	{ NULL, NULL, NULL, false },
};
