/*
 * ecs-catalog.c: the ECS actions that only read the catalogue: DescribeImages,
 * DescribeInstanceTypes, DescribePrice, DescribeSpotPriceHistory, DescribeRegions and
 * DescribeZones.
 *
 * Prices are the catalogue's CNY figures per hour; the spot price is the catalogue's
 * fixed share of on-demand, so history is flat. Memory and GPU memory are GiB in ECS
 * responses (the catalogue keeps MiB).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/str.h"
#include "sim/alibaba/ecs.h"
#include "sim/catalog.h"
#include "sim/quota.h"

/* --- DescribeImages ------------------------------------------------------------------- */

static bool in_comma_list(const char *list, const char *s)
{
	size_t n = strlen(s);

	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && !strncmp(p, s, n))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

static int describe_images(struct ecs_call *c)
{
	const struct sim_image *imgs;
	size_t n = sim_catalog_images(SIM_ALIBABA, &imgs), total = 0;
	const char *ids = ecs_get(c, "ImageId"), *owner = ecs_get(c, "ImageOwnerAlias");
	const char *name = ecs_get(c, "ImageName"), *os = ecs_get(c, "OSType");
	const char *arch = ecs_get(c, "Architecture"), *type = ecs_get(c, "InstanceType");
	json_t *list = json_array();
	uint64_t page, size;

	if (ecs_uint(c, "PageNumber", 1, UINT32_MAX, 1, &page) ||
	    ecs_uint(c, "PageSize", 1, 100, 10, &size)) {
		json_decref(list);
		return -1;
	}
	if (type && !sim_catalog_itype(SIM_ALIBABA, type)) {
		json_decref(list);
		return ecs_fail(c, 400, "InvalidInstanceType.ValueNotSupported",
				"The specified InstanceType does not exist: '%s'.", type);
	}
	for (size_t i = 0; i < n; i++) {
		const struct sim_image *img = &imgs[i];
		if (ids && !in_comma_list(ids, img->id))
			continue;
		if (owner && strcmp(owner, img->owner))
			continue;
		/* "fuzzy search is supported": '*' wildcards, else a part of the name */
		if (name && strchr(name, '*') && !ecs_wildcard(name, img->name))
			continue;
		if (name && !strchr(name, '*') && !strstr(img->name, name))
			continue;
		if (os && strcmp(os, "linux"))
			continue;
		if (arch && strcmp(arch, "x86_64"))
			continue;
		size_t pos = total++;
		if (pos < (page - 1) * size || pos >= page * size)
			continue;
		char os_name[96];
		snprintf(os_name, sizeof(os_name), "%s %s 64位", img->os, img->version);
		json_array_append_new(
			list,
			json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, "
				  "s:b, s:b, s:b, s:s, s:s, s:s, s:{s:[]}}",
				  "ImageId", img->id, "ImageName", img->name, "Description",
				  img->description, "OSName", os_name, "OSNameEn", img->name,
				  "OSType", "linux", "Platform", "Ubuntu", "Architecture", "x86_64",
				  "ImageOwnerAlias", img->owner, "CreationTime", img->created,
				  "Status", "Available", "Size", 20, "IsSupportCloudinit", 1,
				  "IsPublic", 1, "Usable", 1, "ImageVersion", img->version, "Usage",
				  "instance", "BootMode", "BIOS", "Tags", "Tag"));
	}
	c->out = json_pack("{s:{s:o}, s:s, s:i, s:i, s:i}", "Images", "Image", list, "RegionId",
			   c->region, "TotalCount", (int)total, "PageNumber", (int)page, "PageSize",
			   (int)size);
	return 0;
}

/* --- DescribeInstanceTypes ------------------------------------------------------------- */

static int describe_instance_types(struct ecs_call *c)
{
	const struct sim_itype *types;
	size_t n = sim_catalog_itypes(SIM_ALIBABA, &types);
	json_t *want = ecs_list(c, "InstanceTypes", 10), *list = json_array();
	const char *family = ecs_get(c, "InstanceTypeFamily"), *spec = ecs_get(c, "GPUSpec");
	uint64_t min_gpu, max_gpu, max, after;
	char next[40] = "";

	if (ecs_uint(c, "MinimumGPUAmount", 0, 1000, 0, &min_gpu) ||
	    ecs_uint(c, "MaximumGPUAmount", 0, 1000, 1000, &max_gpu) ||
	    ecs_uint(c, "MaxResults", 1, 1600, 1600, &max) || ecs_parse_next_token(c, &after)) {
		json_decref(want);
		json_decref(list);
		return -1;
	}
	for (size_t i = after; i < n; i++) {
		const struct sim_itype *t = &types[i];
		if (json_array_size(want)) {
			bool found = false;
			for (size_t k = 0; k < json_array_size(want); k++)
				if (!strcmp(json_string_value(json_array_get(want, k)), t->name))
					found = true;
			if (!found)
				continue;
		}
		if (family && strcmp(family, t->family))
			continue;
		if (t->gpus < min_gpu || t->gpus > max_gpu)
			continue;
		if (spec && (!t->gpus || strcmp(spec, t->gpu_model)))
			continue;
		if (json_array_size(list) == max) {
			ecs_next_token(i, next);
			break;
		}
		json_array_append_new(
			list,
			json_pack(
				"{s:s, s:s, s:i, s:f, s:i, s:s, s:f, s:s, s:s, s:s, s:i, s:i, s:i}",
				"InstanceTypeId", t->name, "InstanceTypeFamily", t->family,
				"CpuCoreCount", (int)t->vcpu, "MemorySize", t->memory_mib / 1024.0,
				"GPUAmount", (int)t->gpus, "GPUSpec", t->gpus ? t->gpu_model : "",
				"GPUMemorySize", t->gpu_memory_mib / 1024.0, "CpuArchitecture",
				"X86", "InstanceCategory",
				t->gpus ? "GPU-accelerated" : "General-purpose",
				"InstanceFamilyLevel", "EnterpriseLevel", "EniQuantity", 4,
				"EniPrivateIpAddressQuantity", 10, "EriQuantity",
				(int)t->rdma_interfaces));
	}
	json_decref(want);
	c->out = json_pack("{s:{s:o}, s:s}", "InstanceTypes", "InstanceType", list, "NextToken",
			   next);
	return 0;
}

/* --- prices ------------------------------------------------------------------------------- */

static int spot_strategy(struct ecs_call *c, bool *spot)
{
	const char *s = ecs_get(c, "SpotStrategy");

	*spot = false;
	if (!s || !strcmp(s, "NoSpot"))
		return 0;
	if (strcmp(s, "SpotAsPriceGo") && strcmp(s, "SpotWithPriceLimit"))
		return ecs_fail(c, 400, "InvalidSpotStrategy",
				"The specified SpotStrategy is not valid: '%s'.", s);
	*spot = true;
	return 0;
}

/*
 * DescribePrice's term: PriceUnit (Hour, the default; Week, Month, Year) and Period in the
 * ranges the API reference gives (Hour 1, Week 1-4, Month 1-9, Year 1-5). A subscription
 * (any unit but Hour) costs a share of the pay-as-you-go price for the hours of its term
 * (168 a week, 730 a month, 8760 a year) that falls with the term (docs/sim.md).
 */
static int price_term(struct ecs_call *c, const char *unit, uint64_t *period, double *hours,
		      double *share)
{
	static const struct {
		const char *unit;
		uint64_t max;
		double hours, share;
	} units[] = { { "Hour", 1, 1, 1 },
		      { "Week", 4, 168, 0.85 },
		      { "Month", 9, 730, 0.85 },
		      { "Year", 5, 8760, 0.62 } };

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit ? unit : "Hour", units[i].unit))
			continue;
		if (ecs_uint(c, "Period", 1, units[i].max, 1, period))
			return -1;
		*hours = units[i].hours * (double)*period;
		*share = units[i].hours < 8760 ? units[i].share
			: *period >= 3	       ? 0.40
			: *period == 2	       ? 0.50
					       : units[i].share;
		return 0;
	}
	return ecs_fail(c, 400, "InvalidPriceUnit.ValueNotSupported",
			"The specified PriceUnit is not valid: '%s'.", unit);
}

static int describe_price(struct ecs_call *c)
{
	const char *rtype = ecs_get(c, "ResourceType"), *type, *unit = ecs_get(c, "PriceUnit");
	const char *zone = ecs_get(c, "ZoneId");
	const struct sim_itype *t;
	uint64_t amount, period, spot_duration;
	bool spot;
	double hours, share;

	if (rtype && strcmp(rtype, "instance"))
		return ecs_fail(c, 400, "InvalidResourceType.NotSupported",
				"gpucluster-sim prices ResourceType instance only, not '%s'.",
				rtype);
	if (ecs_need(c, "InstanceType", &type) || ecs_uint(c, "Amount", 1, 1000, 1, &amount) ||
	    ecs_uint(c, "SpotDuration", 0, 6, 1, &spot_duration) || spot_strategy(c, &spot) ||
	    price_term(c, unit, &period, &hours, &share))
		return -1;
	t = sim_catalog_itype(SIM_ALIBABA, type);
	if (!t)
		return ecs_fail(c, 400, "InvalidInstanceType.ValueNotSupported",
				"The specified InstanceType does not exist: '%s'.", type);
	if (zone && !sim_catalog_zone_ok(sim_catalog_region(SIM_ALIBABA, c->region), zone))
		return ecs_fail(c, 404, "InvalidZoneId.NotFound",
				"The specified ZoneId does not exist in %s: '%s'.", c->region,
				zone);
	bool intl = sim_cred_intl(c->sim, SIM_ALIBABA, c->caller);
	double original = sim_catalog_site_price(t, false, intl) * hours * (double)amount;
	double trade =
		sim_catalog_site_price(t, spot, intl) * hours * (double)amount * (spot ? 1 : share);
	c->out = json_pack("{s:{s:{s:f, s:f, s:f, s:s, s:{s:[{s:s, s:f, s:f, s:f}]}}, s:{s:[]}}}",
			   "PriceInfo", "Price", "OriginalPrice", original, "DiscountPrice",
			   original - trade, "TradePrice", trade, "Currency", intl ? "USD" : "CNY",
			   "DetailInfos", "DetailInfo", "Resource", "instanceType", "OriginalPrice",
			   original, "DiscountPrice", original - trade, "TradePrice", trade,
			   "Rules", "Rule");
	return 0;
}

static int describe_spot_price_history(struct ecs_call *c)
{
	const char *net, *type, *zone = ecs_get(c, "ZoneId");
	const struct sim_region *reg = sim_catalog_region(SIM_ALIBABA, c->region);
	const struct sim_itype *t;
	uint64_t offset;
	json_t *list = json_array();
	char stamp[32];
	int64_t now = sim_world_wall(c->sim->world);
	bool intl = sim_cred_intl(c->sim, SIM_ALIBABA, c->caller);

	if (ecs_need(c, "NetworkType", &net) || ecs_need(c, "InstanceType", &type) ||
	    ecs_uint(c, "Offset", 0, UINT32_MAX, 0, &offset))
		goto fail;
	if (strcmp(net, "vpc") && strcmp(net, "classic")) {
		ecs_fail(c, 400, "InvalidNetworkType.ValueNotSupported",
			 "The specified NetworkType is not valid: '%s'.", net);
		goto fail;
	}
	t = sim_catalog_itype(SIM_ALIBABA, type);
	if (!t) {
		ecs_fail(c, 400, "InvalidInstanceType.ValueNotSupported",
			 "The specified InstanceType does not exist: '%s'.", type);
		goto fail;
	}
	if (zone && !sim_catalog_zone_ok(reg, zone)) {
		ecs_fail(c, 404, "InvalidZoneId.NotFound",
			 "The specified ZoneId does not exist in %s: '%s'.", c->region, zone);
		goto fail;
	}
	/* the price does not move: one point per zone, at the start of the current hour */
	ecs_format_time(now - now % 3600, true, stamp);
	for (const char *const *z = reg->zones; *z && !offset; z++) {
		if (zone && strcmp(zone, *z))
			continue;
		json_array_append_new(list,
				      json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:s}", "ZoneId", *z,
						"InstanceType", type, "IoOptimized", "optimized",
						"NetworkType", net, "OriginPrice",
						sim_catalog_site_price(t, false, intl), "SpotPrice",
						sim_catalog_site_price(t, true, intl), "Timestamp",
						stamp));
	}
	c->out = json_pack("{s:{s:o}, s:i, s:s}", "SpotPrices", "SpotPriceType", list, "NextOffset",
			   0, "Currency", intl ? "USD" : "CNY");
	return 0;
fail:
	json_decref(list);
	return -1;
}

/* --- regions and zones ---------------------------------------------------------------------- */

static const char *local_name(const char *region)
{
	static const char *const names[][2] = {
		{ "cn-hangzhou", "华东1（杭州）" },
		{ "cn-beijing", "华北2（北京）" },
		{ "ap-southeast-1", "新加坡" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i][0], region))
			return names[i][1];
	return region;
}

static int describe_regions(struct ecs_call *c)
{
	const struct sim_region *regs;
	size_t n = sim_catalog_regions(SIM_ALIBABA, &regs);
	json_t *list = json_array();
	char endpoint[160];

	for (size_t i = 0; i < n; i++) {
		snprintf(endpoint, sizeof(endpoint), "ecs.%s.aliyuncs.com", regs[i].name);
		json_array_append_new(list,
				      json_pack("{s:s, s:s, s:s, s:s}", "RegionId", regs[i].name,
						"LocalName", local_name(regs[i].name),
						"RegionEndpoint", endpoint, "Status", "available"));
	}
	c->out = json_pack("{s:{s:o}}", "Regions", "Region", list);
	return 0;
}

static int describe_zones(struct ecs_call *c)
{
	const struct sim_region *reg = sim_catalog_region(SIM_ALIBABA, c->region);
	const struct sim_itype *types;
	size_t nt = sim_catalog_itypes(SIM_ALIBABA, &types);
	json_t *list = json_array();
	bool spot;

	if (spot_strategy(c, &spot)) {
		json_decref(list);
		return -1;
	}
	for (const char *const *z = reg->zones; *z; z++) {
		json_t *tl = json_array();
		for (size_t i = 0; i < nt; i++)
			if (sim_catalog_offered(SIM_ALIBABA, *z, types[i].name))
				json_array_append_new(tl, json_string(types[i].name));
		char local[160];
		snprintf(local, sizeof(local), "%s %s", local_name(reg->name),
			 *z + strlen(reg->name) + 1);
		json_array_append_new(
			list,
			json_pack("{s:s, s:s, s:s, s:{s:o}, s:{s:[sss]}, s:{s:[sss]}, s:{s:[sss]}, "
				  "s:{s:[]}, s:{s:[]}}",
				  "ZoneId", *z, "LocalName", local, "ZoneType", "AvailabilityZone",
				  "AvailableInstanceTypes", "InstanceTypes", tl,
				  "AvailableResourceCreation", "ResourceTypes", "Instance", "Disk",
				  "VSwitch", "AvailableDiskCategories", "DiskCategories",
				  "cloud_efficiency", "cloud_ssd", "cloud_essd",
				  "AvailableVolumeCategories", "VolumeCategories",
				  "cloud_efficiency", "cloud_ssd", "cloud_essd",
				  "AvailableDedicatedHostTypes", "DedicatedHostType",
				  "AvailableResources", "ResourcesInfo"));
	}
	c->out = json_pack("{s:{s:o}}", "Zones", "Zone", list);
	return 0;
}

/*
 * DescribeAvailableResource for DestinationResource InstanceType or Zone: per zone of the
 * region (or ZoneId), the types it sells (InstanceType narrows them), a zone's gaps
 * (sim/catalog.h) left out, and zones selling none left out. Stock is always there.
 */
static int describe_available_resource(struct ecs_call *c)
{
	const struct sim_region *reg = sim_catalog_region(SIM_ALIBABA, c->region);
	const char *dest = ecs_get(c, "DestinationResource"), *want = ecs_get(c, "InstanceType");
	const char *zone = ecs_get(c, "ZoneId");
	const struct sim_itype *types;
	size_t nt = sim_catalog_itypes(SIM_ALIBABA, &types);
	json_t *list;
	bool spot, by_type;

	if (!dest)
		return ecs_fail(c, 400, "MissingParameter",
				"The input parameter \"DestinationResource\" that is mandatory for "
				"processing this request is not supplied.");
	by_type = strcmp(dest, "InstanceType") == 0;
	if (!by_type && strcmp(dest, "Zone") != 0)
		return ecs_fail(
			c, 400, "InvalidParameter",
			"The specified DestinationResource '%s' is not emulated (InstanceType "
			"and Zone are).",
			dest);
	if (spot_strategy(c, &spot))
		return -1;
	if (zone && !sim_catalog_zone_ok(reg, zone))
		return ecs_fail(c, 404, "InvalidZoneId.NotFound",
				"The specified ZoneId does not exist in %s: '%s'.", c->region,
				zone);
	list = json_array();
	for (const char *const *z = reg->zones; *z; z++) {
		json_t *res;

		if (zone && strcmp(zone, *z) != 0)
			continue;
		res = json_array();
		for (size_t i = 0; i < nt; i++) {
			if ((want && strcmp(want, types[i].name) != 0) ||
			    !sim_catalog_offered(SIM_ALIBABA, *z, types[i].name))
				continue;
			bool sold = by_type && sim_quota_sold_out(SIM_ALIBABA, *z, types[i].name);

			json_array_append_new(
				res,
				json_pack("{s:s, s:s, s:s}", "Value", by_type ? types[i].name : *z,
					  "Status", sold ? "SoldOut" : "Available",
					  "StatusCategory", sold ? "WithoutStock" : "WithStock"));
			if (!by_type)
				break;
		}
		if (!json_array_size(res)) {
			json_decref(res);
			continue;
		}
		json_array_append_new(
			list,
			json_pack("{s:s, s:s, s:s, s:s, s:{s:[{s:s, s:{s:o}}]}}", "ZoneId", *z,
				  "RegionId", c->region, "Status", "Available", "StatusCategory",
				  "WithStock", "AvailableResources", "AvailableResource", "Type",
				  dest, "SupportedResources", "SupportedResource", res));
	}
	if (!json_array_size(list)) { /* ECS leaves the list out when nothing matches */
		json_decref(list);
		c->out = json_object();
		return 0;
	}
	c->out = json_pack("{s:{s:o}}", "AvailableZones", "AvailableZone", list);
	return 0;
}

/* --- the table ------------------------------------------------------------------------------ */

static const struct ecs_param images_params[] = {
	{ "RegionId", 0 },
	{ "ImageId", 0 },
	{ "ImageOwnerAlias", 0 },
	{ "ImageName", 0 },
	{ "ImageFamily", 0 },
	{ "OSType", 0 },
	{ "Architecture", 0 },
	{ "InstanceType", 0 },
	{ "Status", 0 },
	{ "Usage", 0 },
	{ "IsSupportCloudinit", 0 },
	{ "IsSupportIoOptimized", 0 },
	{ "ShowExpired", 0 },
	{ "ActionType", 0 },
	{ "ImageOwnerId", 0 },
	{ "IsPublic", 0 },
	{ "SnapshotId", 0 },
	{ "ResourceGroupId", 0 },
	{ "Filter.N.Key", 2 },
	{ "Filter.N.Value", 2 },
	{ "Tag.N.Key", 20 },
	{ "Tag.N.Value", 20 },
	{ "PageNumber", 0 },
	{ "PageSize", 0 },
	{ "DryRun", 0 },
	{ NULL, 0 },
};

/* DescribeInstanceTypes and DescribeRegions are not per region: their SDK models have no
 * RegionId, so it is refused like any unknown parameter */
static const struct ecs_param types_params[] = {
	{ "InstanceTypes.N", 10 },    { "InstanceTypeFamily", 0 }, { "InstanceCategory", 0 },
	{ "InstanceFamilyLevel", 0 }, { "CpuArchitecture", 0 },	   { "GPUSpec", 0 },
	{ "MinimumGPUAmount", 0 },    { "MaximumGPUAmount", 0 },   { "MinimumCpuCoreCount", 0 },
	{ "MaximumCpuCoreCount", 0 }, { "MinimumMemorySize", 0 },  { "MaximumMemorySize", 0 },
	{ "MaxResults", 0 },	      { "NextToken", 0 },	   { NULL, 0 },
};

static const struct ecs_param price_params[] = {
	{ "RegionId", 0 },
	{ "ResourceType", 0 },
	{ "InstanceType", 0 },
	{ "ZoneId", 0 },
	{ "ImageId", 0 },
	{ "Amount", 0 },
	{ "InstanceAmount", 0 },
	{ "Period", 0 },
	{ "PriceUnit", 0 },
	{ "SpotStrategy", 0 },
	{ "SpotDuration", 0 },
	{ "InternetChargeType", 0 },
	{ "InternetMaxBandwidthOut", 0 },
	{ "InstanceNetworkType", 0 },
	{ "IoOptimized", 0 },
	{ "Platform", 0 },
	{ "SystemDisk.Category", 0 },
	{ "SystemDisk.Size", 0 },
	{ "SystemDisk.PerformanceLevel", 0 },
	{ "DataDisk.N.Category", 16 },
	{ "DataDisk.N.Size", 16 },
	{ "DataDisk.N.PerformanceLevel", 16 },
	{ NULL, 0 },
};

static const struct ecs_param spot_params[] = {
	{ "RegionId", 0 },    { "NetworkType", 0 },  { "InstanceType", 0 }, { "ZoneId", 0 },
	{ "IoOptimized", 0 }, { "StartTime", 0 },    { "EndTime", 0 },	    { "OSType", 0 },
	{ "Offset", 0 },      { "SpotDuration", 0 }, { NULL, 0 },
};

static const struct ecs_param regions_params[] = {
	{ "InstanceChargeType", 0 },
	{ "ResourceType", 0 },
	{ "AcceptLanguage", 0 },
	{ NULL, 0 },
};

static const struct ecs_param available_params[] = {
	{ "RegionId", 0 },
	{ "DestinationResource", 0 },
	{ "InstanceChargeType", 0 },
	{ "SpotStrategy", 0 },
	{ "SpotDuration", 0 },
	{ "ZoneId", 0 },
	{ "IoOptimized", 0 },
	{ "DedicatedHostId", 0 },
	{ "InstanceType", 0 },
	{ "SystemDiskCategory", 0 },
	{ "DataDiskCategory", 0 },
	{ "NetworkCategory", 0 },
	{ "Cores", 0 },
	{ "Memory", 0 },
	{ "ResourceType", 0 },
	{ "Scope", 0 },
	{ NULL, 0 },
};

static const struct ecs_param zones_params[] = {
	{ "RegionId", 0 }, { "InstanceChargeType", 0 }, { "SpotStrategy", 0 },
	{ "Verbose", 0 },  { "AcceptLanguage", 0 },	{ NULL, 0 },
};

/*
 * DescribeAccountAttributes: the account's vCPU quotas, max- and used-
 * postpaid-instance-vcpu-count and spot-instance-vcpu-count (values are strings); use is
 * the vCPUs of the account's instances of the market that are not terminated. sim/quota.h
 * sets the limits and the permission refusal.
 */
static int describe_account_attributes(struct ecs_call *c)
{
	static const char *const names[] = {
		"max-postpaid-instance-vcpu-count",
		"used-postpaid-instance-vcpu-count",
		"max-spot-instance-vcpu-count",
		"used-spot-instance-vcpu-count",
	};
	json_t *want = ecs_list(c, "AttributeName", 8), *items = json_array();
	struct sim_instance **all = NULL;
	int64_t used[2] = { 0, 0 };
	size_t n;

	if (sim_quota_denied(SIM_ALIBABA)) {
		json_decref(want);
		json_decref(items);
		return ecs_fail(c, 403, "Forbidden.RAM",
				"User not authorized to operate on the specified resource, or this "
				"API doesn't support RAM.");
	}
	n = sim_world_list(c->sim->world, SIM_ALIBABA, c->region, &all);
	for (size_t i = 0; i < n; i++) {
		const struct sim_itype *t = sim_catalog_itype(SIM_ALIBABA, all[i]->type);

		if (t && all[i]->state != SIM_TERMINATED)
			used[all[i]->spot] += t->vcpu;
	}
	free(all);
	for (size_t k = 0; k < 4; k++) {
		bool spot = k >= 2, is_max = k % 2 == 0, asked = !json_array_size(want);
		char value[32];

		for (size_t i = 0; i < json_array_size(want); i++)
			asked |= !strcmp(json_string_value(json_array_get(want, i)), names[k]);
		if (!asked)
			continue;
		snprintf(value, sizeof(value), "%lld",
			 (long long)(is_max ? sim_quota_limit(SIM_ALIBABA, spot) : used[spot]));
		json_array_append_new(items,
				      json_pack("{s:s, s:{s:[{s:s, s:i, s:s, s:s}]}}",
						"AttributeName", names[k], "AttributeValues",
						"ValueItem", "Value", value, "Count", 1, "ZoneId",
						"", "InstanceChargeType", "PostPaid"));
	}
	json_decref(want);
	c->out = json_pack("{s:{s:o}}", "AccountAttributeItems", "AccountAttributeItem", items);
	return 0;
}

static const struct ecs_param attributes_params[] = {
	{ "RegionId", 0 },
	{ "ZoneId", 0 },
	{ "AttributeName.N", 8 },
	{ NULL, 0 },
};

const struct ecs_action ecs_catalog_actions[] = {
	{ "DescribeAccountAttributes", describe_account_attributes, attributes_params, true },
	{ "DescribeAvailableResource", describe_available_resource, available_params, true },
	{ "DescribeImages", describe_images, images_params, true },
	{ "DescribeInstanceTypes", describe_instance_types, types_params, false },
	{ "DescribePrice", describe_price, price_params, true },
	{ "DescribeSpotPriceHistory", describe_spot_price_history, spot_params, true },
	{ "DescribeRegions", describe_regions, regions_params, false },
	{ "DescribeZones", describe_zones, zones_params, true },
	{ NULL, NULL, NULL, false },
};
