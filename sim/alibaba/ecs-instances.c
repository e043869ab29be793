/*
 * ecs-instances.c: the ECS instance actions: RunInstances, DescribeInstances,
 * DeleteInstances, DeleteInstance and GetInstanceConsoleOutput.
 *
 * Each runs with the world lock held (see ecs.c) and answers with the field names of
 * the @alicloud/ecs20140526 response models, including their types: the SDK casts the
 * body into typed models, so a number must be a JSON number and a list must come
 * wrapped ({"InstanceIdSet":[...]}). Released instances are not listed at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/str.h"
#include "sim/alibaba/ecs.h"
#include "sim/network.h"
#include "sim/catalog.h"
#include "sim/quota.h"

#define THREE_YEARS_S (3 * 365 * 86400LL)

/* An instance of this region that is still listed, or NULL. */
static struct sim_instance *find_instance(struct ecs_call *c, const char *id)
{
	struct sim_instance *inst = sim_world_instance(c->sim->world, SIM_ALIBABA, id);

	if (!inst || inst->state == SIM_TERMINATED ||
	    (c->region && strcmp(inst->region, c->region)))
		return NULL;
	return inst;
}

static int not_found(struct ecs_call *c, const char *id)
{
	return ecs_fail(c, 404, "InvalidInstanceId.NotFound",
			"The specified InstanceId does not exist: '%s'.", id);
}

static int dry_run_ok(struct ecs_call *c)
{
	return ecs_fail(c, 400, "DryRunOperation",
			"Request validation has been passed with DryRun flag set.");
}

/* --- RunInstances ------------------------------------------------------------------------ */

struct run_args {
	const char *zone, *image, *type, *key_name, *vswitch, *name, *token, *charge;
	char vpc[SIM_ID_MAX]; /* the vSwitch's */
	const char *spot_strategy, *spot_limit, *user_data_b64, *release;
	const struct sim_itype *itype;
	unsigned eris; /* NetworkInterface.N in HighPerformance mode */
	struct sim_keypair *kp;
	char **sgs;
	size_t n_sgs;
	struct sim_tags tags;
	struct gc_buf user_data;
	uint64_t amount, min_amount, disk_gb, spot_duration;
	bool unique_suffix, dry_run, spot, disk_encrypted;
	int64_t release_at;
};

static void run_args_release(struct run_args *r)
{
	for (size_t i = 0; i < r->n_sgs; i++)
		free(r->sgs[i]);
	free(r->sgs);
	sim_tags_release(&r->tags);
	gc_buf_release(&r->user_data);
}

static int run_security_groups(struct ecs_call *c, struct run_args *r)
{
	json_t *ids = ecs_list(c, "SecurityGroupIds", 16);
	const char *one = ecs_get(c, "SecurityGroupId");
	size_t i;
	json_t *v;
	int rc = 0;

	if (one && json_array_size(ids)) {
		json_decref(ids);
		return ecs_fail(c, 400, "InvalidParameter.Conflict",
				"SecurityGroupId and SecurityGroupIds.N cannot be used together.");
	}
	if (one)
		json_array_append_new(ids, json_string(one));
	if (!json_array_size(ids)) {
		json_decref(ids);
		return ecs_fail(c, 400, "MissingParameter",
				"The input parameter \"SecurityGroupId\" that is mandatory for "
				"processing this request is not supplied.");
	}
	r->sgs = gc_xcalloc(json_array_size(ids), sizeof(*r->sgs));
	json_array_foreach(ids, i, v)
	{
		const char *id = json_string_value(v);
		struct sim_secgroup *sg = sim_world_sg(c->sim->world, SIM_ALIBABA, c->region, id);
		if (!sg || sim_ec_miss(&sg->ec_launch)) {
			rc = ecs_fail(c, 404, "InvalidSecurityGroupId.NotFound",
				      "The specified SecurityGroupId does not exist: '%s'.", id);
			break;
		}
		/* a VPC group goes with a vSwitch of its own VPC (a classic one, made without
		 * VpcId, is not checked: the emulator does not model the classic network) */
		if (sg->vpc[0] && strcmp(sg->vpc, r->vpc)) {
			rc = ecs_fail(c, 400, "InvalidParameter.Mismatch",
				      "Specified security group and virtual switch are not in the "
				      "same VPC: '%s' is in '%s'.",
				      id, sg->vpc);
			break;
		}
		r->sgs[r->n_sgs++] = gc_xstrdup(id);
	}
	json_decref(ids);
	return rc;
}

static int run_spot(struct ecs_call *c, struct run_args *r)
{
	r->spot_strategy = ecs_get(c, "SpotStrategy");
	r->spot_limit = ecs_get(c, "SpotPriceLimit");
	const char *behavior = ecs_get(c, "SpotInterruptionBehavior");

	if (r->spot_strategy && strcmp(r->spot_strategy, "NoSpot") &&
	    strcmp(r->spot_strategy, "SpotAsPriceGo") &&
	    strcmp(r->spot_strategy, "SpotWithPriceLimit"))
		return ecs_fail(c, 400, "InvalidSpotStrategy",
				"The specified SpotStrategy is not valid: '%s'.", r->spot_strategy);
	r->spot = r->spot_strategy && strcmp(r->spot_strategy, "NoSpot");
	if (r->spot && strcmp(r->charge, "PostPaid"))
		return ecs_fail(c, 400, "InvalidSpotStrategy",
				"Spot instances need InstanceChargeType PostPaid.");
	if (ecs_uint(c, "SpotDuration", 0, 1, 1, &r->spot_duration))
		return -1;
	if (behavior && strcmp(behavior, "Terminate") && strcmp(behavior, "Stop"))
		return ecs_fail(c, 400, "InvalidSpotInterruptionBehavior",
				"The specified SpotInterruptionBehavior is not valid: '%s'.",
				behavior);
	if (r->spot_strategy && !strcmp(r->spot_strategy, "SpotWithPriceLimit")) {
		double limit;
		if (!r->spot_limit)
			return ecs_fail(c, 400, "InvalidSpotPriceLimit",
					"SpotWithPriceLimit needs SpotPriceLimit.");
		if (gc_parse_double(r->spot_limit, &limit) || limit <= 0)
			return ecs_fail(c, 400, "InvalidSpotPriceLimit",
					"The specified SpotPriceLimit is not valid: '%s'.",
					r->spot_limit);
		if (limit < sim_catalog_price(r->itype, true))
			return ecs_fail(
				c, 400, "InvalidSpotPriceLimit.LowerThanPublicPrice",
				"The specified SpotPriceLimit %s is lower than the current spot "
				"price %.4f of %s.",
				r->spot_limit, sim_catalog_price(r->itype, true), r->type);
	} else if (r->spot_limit) {
		return ecs_fail(
			c, 400, "InvalidParameter.Conflict",
			"SpotPriceLimit is only valid with SpotStrategy SpotWithPriceLimit.");
	}
	return 0;
}

/* AutoReleaseTime (RunInstances, ModifyInstanceAutoReleaseTime): *out 0 when absent. */
static int release_time(struct ecs_call *c, const char **text, int64_t *out)
{
	int64_t t, now = sim_world_wall(c->sim->world);

	*out = 0;
	*text = ecs_get(c, "AutoReleaseTime");
	if (!*text)
		return 0;
	if (ecs_parse_time(*text, &t) || strlen(*text) != 20)
		return ecs_fail(
			c, 400, "InvalidAutoReleaseTime.Malformed",
			"The specified parameter AutoReleaseTime is not valid: '%s' (expected "
			"yyyy-MM-ddTHH:mm:ssZ in UTC).",
			*text);
	t -= t % 60; /* ECS takes the start of the minute when ss is not 00 */
	if (t < now + 30 * 60 || t > now + THREE_YEARS_S)
		return ecs_fail(
			c, 400, "InvalidAutoReleaseTime.Malformed",
			"The specified parameter AutoReleaseTime is not valid: it must be at "
			"least 30 minutes and at most three years after the current time.");
	*out = t;
	return 0;
}

static int run_release_time(struct ecs_call *c, struct run_args *r)
{
	return release_time(c, &r->release, &r->release_at);
}

/*
 * The vSwitch and the zone. An instance lives in a VPC, so ECS needs a vSwitch (the
 * classic network is gone for new accounts); the instance is made in the vSwitch's zone,
 * and a ZoneId given as well must be that zone.
 */
static int run_network(struct ecs_call *c, struct run_args *r)
{
	const struct sim_region *reg = sim_catalog_region(SIM_ALIBABA, c->region);
	const char *vsw_zone;

	r->zone = ecs_get(c, "ZoneId");
	if (r->zone && !sim_catalog_zone_ok(reg, r->zone))
		return ecs_fail(c, 404, "InvalidZoneId.NotFound",
				"The specified ZoneId does not exist in %s: '%s'.", c->region,
				r->zone);
	if (ecs_need(c, "VSwitchId", &r->vswitch))
		return -1;
	vsw_zone = ecs_vswitch_zone(c, r->vswitch, r->vpc);
	if (!vsw_zone)
		return ecs_fail(c, 404, "InvalidVSwitchId.NotFound",
				"Specified virtual switch does not exist: '%s'.", r->vswitch);
	if (r->zone && strcmp(r->zone, vsw_zone))
		return ecs_fail(c, 400, "InvalidParameter.Mismatch",
				"Specified virtual switch is not in the specified zone: '%s' is in "
				"'%s', not '%s'.",
				r->vswitch, vsw_zone, r->zone);
	r->zone = vsw_zone;
	return 0;
}

/* NetworkInterface.N (N 2..8: secondary ENIs): an ERI is one in HighPerformance mode, at
 * most the type's EriQuantity of them (docs/internals/fabric.md). */
static int run_eris(struct ecs_call *c, const struct sim_itype *t, unsigned *out)
{
	unsigned eris = 0;

	for (unsigned n = 1; n <= 8; n++) {
		char key[64];
		const char *mode, *kind;

		snprintf(key, sizeof(key), "NetworkInterface.%u.NetworkInterfaceTrafficMode", n);
		mode = ecs_get(c, key);
		snprintf(key, sizeof(key), "NetworkInterface.%u.InstanceType", n);
		kind = ecs_get(c, key);
		if (kind && strcmp(kind, "Primary") && strcmp(kind, "Secondary"))
			return ecs_fail(c, 400, "InvalidParameter",
					"The specified parameter %s is not valid: '%s'.", key,
					kind);
		if (!mode)
			continue;
		if (strcmp(mode, "Standard") && strcmp(mode, "HighPerformance"))
			return ecs_fail(c, 400, "InvalidParameter",
					"The specified parameter "
					"NetworkInterface.%u.NetworkInterfaceTrafficMode is not "
					"valid: '%s'.",
					n, mode);
		eris += !strcmp(mode, "HighPerformance");
	}
	if (eris && !t->rdma_interfaces)
		return ecs_fail(c, 400, "InvalidParameter.EriNotSupported",
				"The specified instance type '%s' does not support ERI.", t->name);
	if (eris > t->rdma_interfaces)
		return ecs_fail(c, 400, "InvalidParameter.EriQuantityExceeded",
				"The number of ERIs (%u) exceeds the limit of instance type '%s' "
				"(%u).",
				eris, t->name, t->rdma_interfaces);
	*out = eris;
	return 0;
}

/* RamRoleName: 1-64 of letters, digits, '.' and '-' (RAM's role name rule); the emulator
 * has no RAM, so any name of that shape exists. */
static int run_role(struct ecs_call *c)
{
	const char *n = ecs_get(c, "RamRoleName");
	size_t len = n ? strlen(n) : 0;

	if (n &&
	    (len < 1 || len > 64 ||
	     strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-") != len))
		return ecs_fail(c, 400, "InvalidRamRole.NotFound",
				"The specified RAM role does not exist: '%s'.", n);
	return 0;
}

static int run_parse(struct ecs_call *c, struct run_args *r)
{
	if (ecs_need(c, "ImageId", &r->image) || ecs_need(c, "InstanceType", &r->type) ||
	    run_network(c, r))
		return -1;
	if (!sim_catalog_image(SIM_ALIBABA, r->image))
		return ecs_fail(c, 404, "InvalidImageId.NotFound",
				"The specified ImageId does not exist: '%s'.", r->image);
	r->itype = sim_catalog_itype(SIM_ALIBABA, r->type);
	if (!r->itype)
		return ecs_fail(
			c, 400, "InvalidInstanceType.ValueNotSupported",
			"The specified InstanceType does not exist or is not supported: '%s'.",
			r->type);
	if (run_role(c) || run_eris(c, r->itype, &r->eris) ||
	    ecs_uint(c, "Amount", 1, 100, 1, &r->amount) ||
	    ecs_uint(c, "MinAmount", 1, 100, r->amount, &r->min_amount))
		return -1;
	if (r->min_amount > r->amount)
		return ecs_fail(c, 400, "InvalidParameter.Conflict",
				"MinAmount (%llu) must not be larger than Amount (%llu).",
				(unsigned long long)r->min_amount, (unsigned long long)r->amount);
	r->token = ecs_get(c, "ClientToken");
	if (r->token) {
		size_t n = strlen(r->token);
		bool ascii = n > 0 && n <= SIM_TOKEN_MAX;
		for (const char *p = r->token; ascii && *p; p++)
			ascii = *p > 0x20 && *p < 0x7f;
		if (!ascii)
			return ecs_fail(c, 400, "InvalidClientToken.ValueNotSupported",
					"The ClientToken provided is invalid: at most 64 ASCII "
					"characters.");
	}
	r->charge = ecs_get(c, "InstanceChargeType");
	if (!r->charge)
		r->charge = "PostPaid";
	if (strcmp(r->charge, "PostPaid") && strcmp(r->charge, "PrePaid"))
		return ecs_fail(c, 400, "InvalidInstanceChargeType.ValueNotSupported",
				"The specified InstanceChargeType is not valid: '%s'.", r->charge);
	if (run_spot(c, r) || run_security_groups(c, r))
		return -1;
	r->key_name = ecs_get(c, "KeyPairName");
	if (r->key_name) {
		r->kp = sim_world_keypair(c->sim->world, SIM_ALIBABA, c->region, r->key_name);
		if (!r->kp)
			return ecs_fail(c, 404, "InvalidKeyPairName.NotFound",
					"The specified KeyPairName does not exist: '%s'.",
					r->key_name);
	}
	r->name = ecs_get(c, "InstanceName");
	if (r->name && (strlen(r->name) < 2 || strlen(r->name) > 128))
		return ecs_fail(c, 400, "InvalidInstanceName.Malformed",
				"The specified InstanceName is not valid: 2 to 128 characters.");
	if (ecs_bool(c, "UniqueSuffix", false, &r->unique_suffix) ||
	    ecs_bool(c, "DryRun", false, &r->dry_run) ||
	    ecs_bool(c, "SystemDisk.Encrypted", false, &r->disk_encrypted))
		return -1;
	uint64_t bw;
	if (ecs_uint(c, "InternetMaxBandwidthOut", 0, 100, 0, &bw) ||
	    ecs_uint(c, "SystemDisk.Size", 20, 2048, 40, &r->disk_gb))
		return -1;
	const char *cat = ecs_get(c, "SystemDisk.Category");
	if (cat && strcmp(cat, "cloud") && strcmp(cat, "cloud_efficiency") &&
	    strcmp(cat, "cloud_ssd") && strcmp(cat, "cloud_essd") && strcmp(cat, "cloud_auto") &&
	    strcmp(cat, "cloud_essd_entry"))
		return ecs_fail(c, 400, "InvalidSystemDiskCategory.ValueNotSupported",
				"The specified SystemDisk.Category is not valid: '%s'.", cat);
	r->user_data_b64 = ecs_get(c, "UserData");
	if (r->user_data_b64 &&
	    gc_base64_decode(&r->user_data, r->user_data_b64, strlen(r->user_data_b64)))
		return ecs_fail(
			c, 400, "InvalidUserData.Base64FormatInvalid",
			"The specified UserData is not valid base64 or is larger than 32 KB "
			"decoded.");
	if (ecs_tags(c, "Tag", &r->tags) || run_release_time(c, r))
		return -1;
	return 0;
}

static double order_price(const struct run_args *r)
{
	return sim_catalog_price(r->itype, r->spot) * (double)r->amount;
}

static json_t *run_answer(struct sim_instance *const *insts, size_t n, double price)
{
	json_t *ids = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(ids, json_string(insts[i]->id));
	return json_pack("{s:{s:o}, s:f, s:s}", "InstanceIdSets", "InstanceIdSet", ids,
			 "TradePrice", price, "OrderId", "");
}

/* Everything after the parameters are known good: dry run, token, capacity, launch. */
static int run_launch(struct ecs_call *c, struct run_args *r, struct sim_instance ***insts,
		      size_t *n)
{
	static const char *const skip[] = { "ClientToken", NULL };
	struct sim_world *w = c->sim->world;
	struct sim_fault_hit hit;
	const struct sim_placement *pl;
	char fp[65], reservation[SIM_ID_MAX];

	if (r->dry_run)
		return dry_run_ok(c);
	sim_params_fingerprint(&c->params, skip, fp);
	if (r->token) {
		struct sim_token *t = sim_world_token(w, SIM_ALIBABA, c->region, r->token);
		if (t && strcmp(t->fingerprint, fp))
			return ecs_fail(c, 400, "IdempotentParameterMismatch",
					"The specified ClientToken was used with different "
					"parameters.");
		if (t) {
			json_t *ids = json_array();
			for (size_t i = 0; i < t->n_ids; i++)
				json_array_append_new(ids, json_string(t->ids[i]));
			c->out = json_pack("{s:{s:o}, s:f, s:s}", "InstanceIdSets", "InstanceIdSet",
					   ids, "TradePrice", order_price(r), "OrderId", "");
			return 0;
		}
	}

	sim_faults_launch(c->sim->faults, SIM_ALIBABA, "RunInstances", r->zone, r->type, r->spot,
			  (unsigned)r->amount, &hit);
	sim_quota_launch(w, SIM_ALIBABA, c->region, r->zone, r->type, r->spot, (unsigned)r->amount,
			 &hit);
	/* ECS answers either market's quota with this one code (RunInstances' reference) */
	if (hit.kind == SIM_FAULT_QUOTA)
		return ecs_fail(
			c, 403, "QuotaExceed.ElasticQuota",
			"The number of vCPUs assigned to the ECS instances has exceeded the "
			"quota in the zone.");
	if (hit.kind == SIM_FAULT_UNSUPPORTED) /* fabric.md: no code of its own */
		return ecs_fail(c, 400, "InvalidResourceType.NotSupported",
				"The specified InstanceType is not supported here.");
	if (hit.kind == SIM_FAULT_CAPACITY)
		return ecs_fail(
			c, 403, "OperationDenied.NoStock",
			"The requested resource is sold out in the specified zone; try other "
			"types of resources or other regions and zones.");
	if (hit.kind == SIM_FAULT_THROTTLE)
		return ecs_fail(c, 400, "Throttling.User",
				"Request was denied due to user flow control.");

	if (ecs_run_placement(c, (unsigned)r->amount, &pl))
		return -1;
	struct sim_launch l = {
		.cloud = SIM_ALIBABA,
		.region = c->region,
		.zone = r->zone,
		.type = r->type,
		.image = r->image,
		.key_name = r->key_name,
		.authorized_key = r->kp ? r->kp->public_key : NULL,
		.security_groups = (const char *const *)r->sgs,
		.n_security_groups = r->n_sgs,
		.subnet = r->vswitch,
		.name = r->name,
		.tags = &r->tags,
		.spot = r->spot,
		.spot_max_price = r->spot_limit,
		.client_token = r->token,
		.user_data = r->user_data_b64 ? r->user_data.data : NULL,
		.disk_gb = (unsigned)r->disk_gb,
		.release_at_wall = r->release_at,
		.count = (unsigned)r->amount,
		.role = ecs_get(c, "RamRoleName"),
		/* an instance has the ERIs it was launched with, none otherwise */
		.rdma_by_launch = true,
		.rdma_devices = r->eris,
	};
	sim_world_launch(w, &l, insts, n, reservation);
	for (size_t i = 0; i < *n; i++) /* eventual consistency (docs/sim.md) */
		(*insts)[i]->ec_list = (*insts)[i]->ec_terminate = w->eventual;
	for (size_t i = 0; pl && i < *n; i++)
		snprintf((*insts)[i]->placement, sizeof((*insts)[i]->placement), "%s", pl->id);
	if (r->name && r->unique_suffix && *n > 1) {
		/* ECS appends a three-digit sequence number to each name */
		for (size_t i = 0; i < *n; i++)
			snprintf((*insts)[i]->name, sizeof((*insts)[i]->name), "%.120s%03u",
				 r->name, (unsigned)(i + 1) % 1000);
	}
	if (r->token)
		sim_world_remember_token(w, SIM_ALIBABA, c->region, r->token, fp, reservation,
					 *insts, *n);
	c->out = run_answer(*insts, *n, order_price(r));
	return 0;
}

static int run_instances(struct ecs_call *c)
{
	struct run_args r;
	struct sim_instance **insts = NULL;
	size_t n = 0;
	int rc;

	memset(&r, 0, sizeof(r));
	gc_buf_init(&r.user_data, 32 * 1024);
	rc = run_parse(c, &r);
	if (!rc)
		rc = run_launch(c, &r, &insts, &n);
	free(insts);
	run_args_release(&r);
	return rc;
}

/* --- DescribeInstances ------------------------------------------------------------------- */

static json_t *ip_list(const char *ip)
{
	json_t *arr = json_array();

	if (ip && *ip)
		json_array_append_new(arr, json_string(ip));
	return json_pack("{s:o}", "IpAddress", arr);
}

static json_t *instance_json(const struct sim_instance *inst)
{
	const struct sim_itype *t = sim_catalog_itype(SIM_ALIBABA, inst->type);
	const struct sim_image *img = sim_catalog_image(SIM_ALIBABA, inst->image);
	char created[32], started[32], release[32] = "";
	json_t *sgs = json_array();
	char host[SIM_NAME_MAX + 8];

	ecs_format_time(inst->launch_wall, false, created);
	ecs_format_time(inst->launch_wall, false, started);
	if (inst->release_at_wall)
		ecs_format_time(inst->release_at_wall, true, release);
	for (size_t i = 0; i < inst->n_security_groups; i++)
		json_array_append_new(sgs, json_string(inst->security_groups[i]));
	/* ECS's default host name is the instance id wrapped in iZ...Z */
	if (inst->name[0])
		snprintf(host, sizeof(host), "%s", inst->name);
	else
		snprintf(host, sizeof(host), "iZ%sZ", inst->id + 2);

	json_t *o = json_object();
	json_object_set_new(o, "InstanceId", json_string(inst->id));
	json_object_set_new(o, "InstanceName", json_string(inst->name));
	json_object_set_new(o, "HostName", json_string(host));
	json_object_set_new(o, "Description", json_string(""));
	json_object_set_new(o, "Status", json_string(sim_state_name(SIM_ALIBABA, inst->state)));
	json_object_set_new(o, "InstanceType", json_string(inst->type));
	json_object_set_new(o, "InstanceTypeFamily", json_string(t ? t->family : ""));
	json_object_set_new(o, "Cpu", json_integer(t ? t->vcpu : 0));
	json_object_set_new(o, "Memory", json_integer(t ? t->memory_mib : 0));
	json_object_set_new(o, "GPUAmount", json_integer(t ? t->gpus : 0));
	json_object_set_new(o, "GPUSpec", json_string(t && t->gpus ? t->gpu_model : ""));
	json_object_set_new(o, "RegionId", json_string(inst->region));
	json_object_set_new(o, "ZoneId", json_string(inst->zone));
	json_object_set_new(o, "ImageId", json_string(inst->image));
	json_object_set_new(o, "OSName", json_string(img ? img->name : ""));
	json_object_set_new(o, "OSNameEn", json_string(img ? img->name : ""));
	json_object_set_new(o, "OSType", json_string("linux"));
	json_object_set_new(o, "KeyPairName", json_string(inst->key_name));
	json_object_set_new(o, "DeploymentSetId", json_string(inst->placement));
	json_object_set_new(o, "CreationTime", json_string(created));
	json_object_set_new(o, "StartTime", json_string(started));
	json_object_set_new(o, "ExpiredTime", json_string("2099-12-31T15:59Z"));
	json_object_set_new(o, "AutoReleaseTime", json_string(release));
	json_object_set_new(o, "InstanceChargeType", json_string("PostPaid"));
	json_object_set_new(o, "InternetChargeType", json_string("PayByTraffic"));
	json_object_set_new(o, "InstanceNetworkType", json_string("vpc"));
	json_object_set_new(o, "InternetMaxBandwidthOut",
			    json_integer(inst->public_ip[0] ? 100 : 0));
	json_object_set_new(o, "InternetMaxBandwidthIn", json_integer(100));
	json_object_set_new(o, "IoOptimized", json_true());
	json_object_set_new(o, "DeletionProtection", json_false());
	json_object_set_new(o, "DeviceAvailable", json_true());
	json_object_set_new(o, "SpotStrategy",
			    json_string(!inst->spot			  ? "NoSpot"
						: inst->spot_max_price[0] ? "SpotWithPriceLimit"
									  : "SpotAsPriceGo"));
	if (inst->spot) {
		double limit = 0;
		if (inst->spot_max_price[0])
			(void)gc_parse_double(inst->spot_max_price, &limit);
		json_object_set_new(o, "SpotPriceLimit", json_real(limit));
		json_object_set_new(o, "SpotDuration", json_integer(1));
		json_object_set_new(o, "SpotInterruptionBehavior", json_string("Terminate"));
	}
	char vpc[SIM_ID_MAX] = ECS_DEFAULT_VPC;

	if (sim_user_subnet_zone(sim_catalog_region(SIM_ALIBABA, inst->region), inst->subnet))
		sim_user_vpc(SIM_ALIBABA, inst->region, vpc);
	json_object_set_new(o, "VpcAttributes",
			    json_pack("{s:s, s:s, s:o, s:s}", "VpcId", vpc, "VSwitchId",
				      inst->subnet, "PrivateIpAddress", ip_list(inst->private_ip),
				      "NatIpAddress", ""));
	json_object_set_new(o, "InnerIpAddress", ip_list(NULL));
	json_object_set_new(o, "PublicIpAddress", ip_list(inst->public_ip));
	json_object_set_new(
		o, "EipAddress",
		json_pack("{s:s, s:s, s:i}", "IpAddress", "", "AllocationId", "", "Bandwidth", 0));
	json_object_set_new(o, "SecurityGroupIds", json_pack("{s:o}", "SecurityGroupId", sgs));
	/* a preemptible instance inside its notice: locked for Recycling (docs/internals/spot.md) */
	json_object_set_new(o, "OperationLocks",
			    inst->reclaim_at_wall ? json_pack("{s:[{s:s}]}", "LockReason",
							      "LockReason", "Recycling")
						  : json_pack("{s:[]}", "LockReason"));
	json_object_set_new(o, "Tags", ecs_tags_json(&inst->tags));
	/* stopped from inside: billed as a standard stop (docs/internals/idle.md) */
	json_object_set_new(
		o, "StoppedMode",
		json_string(inst->state == SIM_STOPPED ? "KeepCharging" : "Not-applicable"));
	return o;
}

static bool instance_matches(struct ecs_call *c, const struct sim_instance *inst, json_t *ids)
{
	const char *v;
	const struct sim_itype *t;

	if (inst->state == SIM_TERMINATED)
		return false;
	if (ids) {
		bool found = false;
		size_t i;
		json_t *id;
		json_array_foreach(ids, i, id)
		{
			if (!strcmp(json_string_value(id), inst->id))
				found = true;
		}
		if (!found)
			return false;
	}
	if ((v = ecs_get(c, "Status")) && strcmp(v, sim_state_name(SIM_ALIBABA, inst->state)))
		return false;
	if ((v = ecs_get(c, "ZoneId")) && strcmp(v, inst->zone))
		return false;
	if ((v = ecs_get(c, "InstanceType")) && strcmp(v, inst->type))
		return false;
	if ((v = ecs_get(c, "InstanceTypeFamily")) &&
	    (!(t = sim_catalog_itype(SIM_ALIBABA, inst->type)) || strcmp(v, t->family)))
		return false;
	if ((v = ecs_get(c, "InstanceName")) && !ecs_wildcard(v, inst->name))
		return false;
	if ((v = ecs_get(c, "ImageId")) && strcmp(v, inst->image))
		return false;
	if ((v = ecs_get(c, "KeyPairName")) && strcmp(v, inst->key_name))
		return false;
	if ((v = ecs_get(c, "VSwitchId")) && strcmp(v, inst->subnet))
		return false;
	if ((v = ecs_get(c, "SecurityGroupId"))) {
		bool found = false;
		for (size_t i = 0; i < inst->n_security_groups; i++)
			if (!strcmp(v, inst->security_groups[i]))
				found = true;
		if (!found)
			return false;
	}
	return ecs_tags_match(c, &inst->tags);
}

static int describe_instances(struct ecs_call *c)
{
	struct sim_instance **all = NULL;
	json_t *ids = NULL, *list = json_array();
	uint64_t max, page, size, after;
	size_t n, total = 0;
	const char *status = ecs_get(c, "Status");
	bool token_mode = ecs_get(c, "MaxResults") || ecs_get(c, "NextToken");
	char next[40] = "";
	int rc = -1;

	if (ecs_json_ids(c, "InstanceIds", 100, &ids) ||
	    ecs_uint(c, "MaxResults", 1, 100, 10, &max) ||
	    ecs_uint(c, "PageNumber", 1, UINT32_MAX, 1, &page) ||
	    ecs_uint(c, "PageSize", 1, 100, 10, &size) || ecs_parse_next_token(c, &after))
		goto out;
	if (status && strcmp(status, "Pending") && strcmp(status, "Running") &&
	    strcmp(status, "Starting") && strcmp(status, "Stopping") && strcmp(status, "Stopped")) {
		ecs_fail(c, 400, "InvalidStatus.ValueNotSupported",
			 "The specified Status is not valid: '%s'.", status);
		goto out;
	}
	bool dry;
	if (ecs_bool(c, "DryRun", false, &dry))
		goto out;
	if (dry) {
		dry_run_ok(c);
		goto out;
	}
	n = sim_world_list(c->sim->world, SIM_ALIBABA, c->region, &all);
	for (size_t i = 0; i < n; i++) {
		if (!instance_matches(c, all[i], ids) ||
		    (!json_array_size(ids) && sim_ec_miss(&all[i]->ec_list)))
			continue;
		size_t pos = total++;
		if (token_mode) {
			if (all[i]->seq < after)
				continue;
			if (json_array_size(list) == max) {
				if (!next[0])
					ecs_next_token(all[i]->seq, next);
				continue;
			}
			json_array_append_new(list, instance_json(all[i]));
		} else if (pos >= (page - 1) * size && pos < page * size) {
			json_array_append_new(list, instance_json(all[i]));
		}
	}
	c->out = json_pack("{s:{s:o}, s:i}", "Instances", "Instance", list, "TotalCount",
			   (int)total);
	list = NULL;
	if (token_mode) {
		json_object_set_new(c->out, "NextToken", json_string(next));
	} else {
		json_object_set_new(c->out, "PageNumber", json_integer((int)page));
		json_object_set_new(c->out, "PageSize", json_integer((int)size));
	}
	rc = 0;
out:
	json_decref(list);
	json_decref(ids);
	free(all);
	return rc;
}

/* --- DeleteInstances / DeleteInstance ---------------------------------------------------- */

static int delete_ids(struct ecs_call *c, json_t *ids)
{
	struct sim_instance **insts = NULL;
	size_t i;
	json_t *id;
	bool force, dry;
	int rc = -1;

	if (ecs_bool(c, "Force", false, &force) || ecs_bool(c, "DryRun", false, &dry))
		return -1;
	insts = gc_xcalloc(json_array_size(ids) + 1, sizeof(*insts));
	json_array_foreach(ids, i, id)
	{
		insts[i] = find_instance(c, json_string_value(id));
		if (!insts[i] || sim_ec_miss(&insts[i]->ec_terminate)) {
			not_found(c, json_string_value(id));
			goto out;
		}
		if (!force && (insts[i]->state == SIM_PENDING || insts[i]->state == SIM_RUNNING)) {
			ecs_fail(
				c, 403, "IncorrectInstanceStatus",
				"The current status of the resource does not support this operation: "
				"'%s' is %s; stop it first or pass Force=true.",
				insts[i]->id, sim_state_name(SIM_ALIBABA, insts[i]->state));
			goto out;
		}
	}
	if (dry) {
		dry_run_ok(c);
		goto out;
	}
	for (i = 0; i < json_array_size(ids); i++)
		sim_world_terminate(c->sim->world, insts[i]);
	c->out = json_object();
	rc = 0;
out:
	free(insts);
	return rc;
}

static int delete_instances(struct ecs_call *c)
{
	json_t *ids = ecs_list(c, "InstanceId", 100);
	int rc;

	if (!json_array_size(ids)) {
		json_decref(ids);
		return ecs_fail(
			c, 400, "MissingParameter",
			"The input parameter \"InstanceId.N\" that is mandatory for processing "
			"this request is not supplied.");
	}
	rc = delete_ids(c, ids);
	json_decref(ids);
	return rc;
}

static int delete_instance(struct ecs_call *c)
{
	const char *id;
	json_t *ids;
	int rc;

	if (ecs_need(c, "InstanceId", &id))
		return -1;
	ids = json_pack("[s]", id);
	rc = delete_ids(c, ids);
	json_decref(ids);
	return rc;
}

/* --- ModifyInstanceAutoReleaseTime ----------------------------------------------------------- */

/* Sets, moves or (without AutoReleaseTime) cancels one instance's release timer
 * (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-modifyinstanceautoreleasetime). */
static int modify_release_time(struct ecs_call *c)
{
	const char *id, *text;
	struct sim_instance *inst;
	int64_t at;

	if (ecs_need(c, "InstanceId", &id))
		return -1;
	if (!(inst = find_instance(c, id)))
		return not_found(c, id);
	if (release_time(c, &text, &at))
		return -1;
	inst->release_at_wall = at;
	c->out = json_object();
	return 0;
}

/* --- GetInstanceConsoleOutput ------------------------------------------------------------ */

static int console_output(struct ecs_call *c)
{
	const char *id;
	struct sim_instance *inst;
	struct gc_buf b64 = GC_BUF_INIT(64 * 1024);
	char now[32];

	if (ecs_need(c, "InstanceId", &id))
		return -1;
	inst = find_instance(c, id);
	if (!inst)
		return not_found(c, id);
	(void)gc_base64_encode(&b64, inst->console, strlen(inst->console));
	ecs_format_time(sim_world_wall(c->sim->world), true, now);
	c->out = json_pack("{s:s, s:s, s:s}", "InstanceId", inst->id, "ConsoleOutput", b64.data,
			   "LastUpdateTime", now);
	gc_buf_release(&b64);
	return 0;
}

/* --- the table ---------------------------------------------------------------------------- */

static const struct ecs_param run_params[] = {
	{ "RegionId", 0 },
	{ "ZoneId", 0 },
	{ "ImageId", 0 },
	{ "InstanceType", 0 },
	{ "SecurityGroupId", 0 },
	{ "SecurityGroupIds.N", 16 },
	{ "VSwitchId", 0 },
	{ "NetworkInterface.N.InstanceType", 8 },
	{ "NetworkInterface.N.VSwitchId", 8 },
	{ "NetworkInterface.N.SecurityGroupId", 8 },
	{ "NetworkInterface.N.NetworkInterfaceTrafficMode", 8 },
	{ "NetworkInterface.N.NetworkCardIndex", 8 },
	{ "PrivateIpAddress", 0 },
	{ "KeyPairName", 0 },
	{ "RamRoleName", 0 },
	{ "DeploymentSetId", 0 },
	{ "Password", 0 },
	{ "PasswordInherit", 0 },
	{ "Amount", 0 },
	{ "MinAmount", 0 },
	{ "ClientToken", 0 },
	{ "InstanceChargeType", 0 },
	{ "Period", 0 },
	{ "PeriodUnit", 0 },
	{ "AutoRenew", 0 },
	{ "AutoRenewPeriod", 0 },
	{ "InstanceName", 0 },
	{ "HostName", 0 },
	{ "UniqueSuffix", 0 },
	{ "Description", 0 },
	{ "InternetChargeType", 0 },
	{ "InternetMaxBandwidthOut", 0 },
	{ "InternetMaxBandwidthIn", 0 },
	{ "IoOptimized", 0 },
	{ "SystemDisk.Category", 0 },
	{ "SystemDisk.Size", 0 },
	{ "SystemDisk.PerformanceLevel", 0 },
	{ "SystemDisk.DiskName", 0 },
	{ "SystemDisk.Description", 0 },
	{ "SystemDisk.Encrypted", 0 },
	{ "DataDisk.N.Size", 16 },
	{ "DataDisk.N.Category", 16 },
	{ "DataDisk.N.PerformanceLevel", 16 },
	{ "DataDisk.N.DeleteWithInstance", 16 },
	{ "DataDisk.N.DiskName", 16 },
	{ "UserData", 0 },
	{ "Tag.N.Key", 20 },
	{ "Tag.N.Value", 20 },
	{ "AutoReleaseTime", 0 },
	{ "SpotStrategy", 0 },
	{ "SpotPriceLimit", 0 },
	{ "SpotDuration", 0 },
	{ "SpotInterruptionBehavior", 0 },
	{ "SecurityEnhancementStrategy", 0 },
	{ "DeletionProtection", 0 },
	{ "ResourceGroupId", 0 },
	{ "RamRoleName", 0 },
	{ "DryRun", 0 },
	{ NULL, 0 },
};

static const struct ecs_param describe_params[] = {
	{ "RegionId", 0 },
	{ "InstanceIds", 0 },
	{ "Tag.N.Key", 20 },
	{ "Tag.N.Value", 20 },
	{ "Status", 0 },
	{ "ZoneId", 0 },
	{ "InstanceType", 0 },
	{ "InstanceTypeFamily", 0 },
	{ "InstanceName", 0 },
	{ "ImageId", 0 },
	{ "KeyPairName", 0 },
	{ "VpcId", 0 },
	{ "VSwitchId", 0 },
	{ "SecurityGroupId", 0 },
	{ "InstanceChargeType", 0 },
	{ "InstanceNetworkType", 0 },
	{ "ResourceGroupId", 0 },
	{ "MaxResults", 0 },
	{ "NextToken", 0 },
	{ "PageNumber", 0 },
	{ "PageSize", 0 },
	{ "DryRun", 0 },
	{ NULL, 0 },
};

static const struct ecs_param delete_params[] = {
	{ "RegionId", 0 },
	{ "InstanceId.N", 100 },
	{ "Force", 0 },
	{ "ForceStop", 0 },
	{ "TerminateSubscription", 0 },
	{ "ClientToken", 0 },
	{ "DryRun", 0 },
	{ NULL, 0 },
};

static const struct ecs_param delete_one_params[] = {
	{ "RegionId", 0 },
	{ "InstanceId", 0 },
	{ "Force", 0 },
	{ "ForceStop", 0 },
	{ "TerminateSubscription", 0 },
	{ "DryRun", 0 },
	{ NULL, 0 },
};

static const struct ecs_param release_params[] = {
	{ "RegionId", 0 },
	{ "InstanceId", 0 },
	{ "AutoReleaseTime", 0 },
	{ NULL, 0 },
};

static const struct ecs_param console_params[] = {
	{ "RegionId", 0 },
	{ "InstanceId", 0 },
	{ "RemoveSymbols", 0 },
	{ NULL, 0 },
};

const struct ecs_action ecs_instance_actions[] = {
	{ "RunInstances", run_instances, run_params, true },
	{ "DescribeInstances", describe_instances, describe_params, true },
	{ "DeleteInstances", delete_instances, delete_params, true },
	{ "DeleteInstance", delete_instance, delete_one_params, false },
	{ "GetInstanceConsoleOutput", console_output, console_params, true },
	{ "ModifyInstanceAutoReleaseTime", modify_release_time, release_params, false },
	{ NULL, NULL, NULL, false },
};
