/*
 * vpc.c: the Alibaba VPC API (2016-04-28) that the emulator serves on the ECS port,
 * read only: DescribeVpcs and DescribeVSwitches. A real ECS instance lives in a vSwitch
 * and a VPC security group in a VPC, so a client finds the region's default VPC and a
 * vSwitch in the zone it launches in; RunInstances (ecs-instances.c) and
 * CreateSecurityGroup (ecs-resources.c) check what they are given against this.
 *
 * Every catalogue region has one default VPC, ECS_DEFAULT_VPC (172.16.0.0/12, as a real
 * default VPC), and one default vSwitch per zone, "vsw-gpuclustersim-ZONE" (a /20 of it
 * per zone). They are fixed facts, not world state: nothing creates or deletes them, so
 * these actions need no lock of their own. Field names and JSON types follow the
 * @alicloud/vpc20160428 response models.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/str.h"
#include "sim/alibaba/ecs.h"
#include "sim/catalog.h"

#define VSW_PREFIX    "vsw-gpuclustersim-"
#define VPC_CIDR      "172.16.0.0/12"
#define VPC_CREATED   "2026-01-01T00:00:00Z"
#define VSW_ADDRESSES 4092 /* a /20 less the five addresses a vSwitch reserves */

bool ecs_vpc_exists(const char *region, const char *id)
{
	return region && id && sim_catalog_region(SIM_ALIBABA, region) &&
		strcmp(id, ECS_DEFAULT_VPC) == 0;
}

const char *ecs_vswitch_zone(const char *region, const char *id)
{
	const struct sim_region *reg = region ? sim_catalog_region(SIM_ALIBABA, region) : NULL;

	if (!reg || !id || !gc_starts_with(id, VSW_PREFIX))
		return NULL;
	for (const char *const *z = reg->zones; *z; z++)
		if (strcmp(id + strlen(VSW_PREFIX), *z) == 0)
			return *z;
	return NULL;
}

const char *ecs_vswitch_vpc(const char *id)
{
	(void)id;
	return ECS_DEFAULT_VPC;
}

/* Whether an optional boolean filter (IsDefault) lets a default resource through. */
static int default_filter(struct ecs_call *c, bool *show_default, bool *show_other)
{
	const char *v = ecs_get(c, "IsDefault");
	bool want;

	*show_default = *show_other = true;
	if (!v)
		return 0;
	if (ecs_bool(c, "IsDefault", true, &want))
		return -1;
	*show_default = want;
	*show_other = !want;
	return 0;
}

static int dry_run(struct ecs_call *c)
{
	bool dry;

	if (ecs_bool(c, "DryRun", false, &dry))
		return -1;
	if (dry)
		return ecs_fail(c, 400, "DryRunOperation",
				"Request validation has been passed with DryRun flag set.");
	return 0;
}

/* Whether list (a comma-separated list of ids, as VPC's VpcId takes them) names id. */
static bool in_comma_list(const char *list, const char *id)
{
	size_t n = strlen(id);

	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == n && strncmp(p, id, n) == 0)
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

static int describe_vpcs(struct ecs_call *c)
{
	const char *ids = ecs_get(c, "VpcId"), *name = ecs_get(c, "VpcName");
	const struct sim_region *reg = sim_catalog_region(SIM_ALIBABA, c->region);
	uint64_t page, size;
	bool show_default, show_other;
	json_t *list = json_array(), *vsws = json_array();
	size_t total = 0;

	if (ecs_uint(c, "PageNumber", 1, UINT32_MAX, 1, &page) ||
	    ecs_uint(c, "PageSize", 1, 50, 10, &size) ||
	    default_filter(c, &show_default, &show_other) || dry_run(c))
		goto fail;
	/* a tag filter matches nothing: the default VPC carries no tags */
	if (show_default && (!ids || in_comma_list(ids, ECS_DEFAULT_VPC)) &&
	    (!name || strcmp(name, "default") == 0) && !ecs_get(c, "Tag.1.Key") &&
	    !ecs_get(c, "ResourceGroupId"))
		total = 1;
	if (total && page == 1) {
		char vsw[SIM_NAME_MAX + 32];

		for (const char *const *z = reg->zones; *z; z++) {
			snprintf(vsw, sizeof(vsw), VSW_PREFIX "%s", *z);
			json_array_append_new(vsws, json_string(vsw));
		}
		json_array_append_new(
			list,
			json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:{s:o}, "
				  "s:{s:[]}, s:{s:[]}, s:{s:[]}, s:{s:[s]}, s:{s:[]}, s:b, s:s, "
				  "s:s, s:I}",
				  "VpcId", ECS_DEFAULT_VPC, "VpcName", "default", "RegionId",
				  c->region, "Status", "Available", "CidrBlock", VPC_CIDR,
				  "CreationTime", VPC_CREATED, "IsDefault", 1, "Description", "",
				  "VRouterId", "vrt-gpuclustersim", "VSwitchIds", "VSwitchId", vsws,
				  "SecondaryCidrBlocks", "SecondaryCidrBlock", "UserCidrs",
				  "UserCidr", "NatGatewayIds", "NatGatewayIds", "RouterTableIds",
				  "RouterTableIds", "vtb-gpuclustersim", "Tags", "Tag",
				  "EnabledIpv6", 0, "ResourceGroupId", "rg-gpuclustersim",
				  "DhcpOptionsSetStatus", "", "OwnerId", (json_int_t)1));
		vsws = NULL;
	}
	(void)show_other;
	c->out = json_pack("{s:{s:o}, s:i, s:i, s:i}", "Vpcs", "Vpc", list, "TotalCount",
			   (int)total, "PageNumber", (int)page, "PageSize", (int)size);
	json_decref(vsws);
	return 0;
fail:
	json_decref(list);
	json_decref(vsws);
	return -1;
}

static int describe_vswitches(struct ecs_call *c)
{
	const char *vpc = ecs_get(c, "VpcId"), *one = ecs_get(c, "VSwitchId");
	const char *zone = ecs_get(c, "ZoneId"), *name = ecs_get(c, "VSwitchName");
	const struct sim_region *reg = sim_catalog_region(SIM_ALIBABA, c->region);
	uint64_t page, size;
	bool show_default, show_other;
	json_t *list = json_array();
	size_t total = 0, i = 0;

	if (ecs_uint(c, "PageNumber", 1, UINT32_MAX, 1, &page) ||
	    ecs_uint(c, "PageSize", 1, 50, 10, &size) ||
	    default_filter(c, &show_default, &show_other) || dry_run(c)) {
		json_decref(list);
		return -1;
	}
	(void)show_other;
	if (zone && !sim_catalog_zone_ok(reg, zone)) {
		json_decref(list);
		return ecs_fail(c, 404, "InvalidZoneId.NotFound",
				"The specified zone '%s' does not exist in %s.", zone, c->region);
	}
	for (const char *const *z = reg->zones; *z; z++, i++) {
		char id[SIM_NAME_MAX + 32], cidr[32];

		snprintf(id, sizeof(id), VSW_PREFIX "%s", *z);
		if (!show_default || (vpc && strcmp(vpc, ECS_DEFAULT_VPC)) ||
		    (one && strcmp(one, id)) || (zone && strcmp(zone, *z)) ||
		    (name && strcmp(name, "default")) || ecs_get(c, "Tag.1.Key") ||
		    ecs_get(c, "ResourceGroupId") || ecs_get(c, "RouteTableId"))
			continue;
		if (total++ / size != page - 1)
			continue;
		snprintf(cidr, sizeof(cidr), "172.16.%zu.0/20", (i * 16) % 256);
		json_array_append_new(
			list,
			json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:I, s:s, s:s, s:s, s:s, "
				  "s:{s:s, s:s}, s:{s:[]}, s:s, s:I, s:b}",
				  "VSwitchId", id, "VpcId", ECS_DEFAULT_VPC, "ZoneId", *z,
				  "VSwitchName", "default", "Status", "Available", "CidrBlock",
				  cidr, "IsDefault", 1, "AvailableIpAddressCount",
				  (json_int_t)VSW_ADDRESSES, "Description", "", "CreationTime",
				  VPC_CREATED, "ResourceGroupId", "rg-gpuclustersim",
				  "NetworkAclId", "", "RouteTable", "RouteTableId",
				  "vtb-gpuclustersim", "RouteTableType", "System", "Tags", "Tag",
				  "ShareType", "", "OwnerId", (json_int_t)1, "EnabledIpv6", 0));
	}
	c->out = json_pack("{s:{s:o}, s:i, s:i, s:i}", "VSwitches", "VSwitch", list, "TotalCount",
			   (int)total, "PageNumber", (int)page, "PageSize", (int)size);
	return 0;
}

static const struct ecs_param vpcs_params[] = {
	{ "RegionId", 0 },	   { "VpcId", 0 },
	{ "VpcName", 0 },	   { "IsDefault", 0 },
	{ "DhcpOptionsSetId", 0 }, { "EnableIpv6", 0 },
	{ "ResourceGroupId", 0 },  { "VpcOwnerId", 0 },
	{ "Tag.N.Key", 20 },	   { "Tag.N.Value", 20 },
	{ "PageNumber", 0 },	   { "PageSize", 0 },
	{ "DryRun", 0 },	   { NULL, 0 },
};

static const struct ecs_param vswitches_params[] = {
	{ "RegionId", 0 },	  { "VpcId", 0 },
	{ "VSwitchId", 0 },	  { "ZoneId", 0 },
	{ "VSwitchName", 0 },	  { "IsDefault", 0 },
	{ "EnableIpv6", 0 },	  { "RouteTableId", 0 },
	{ "ResourceGroupId", 0 }, { "VSwitchOwnerId", 0 },
	{ "Tag.N.Key", 20 },	  { "Tag.N.Value", 20 },
	{ "PageNumber", 0 },	  { "PageSize", 0 },
	{ "DryRun", 0 },	  { NULL, 0 },
};

const struct ecs_action ecs_vpc_actions[] = {
	{ "DescribeVpcs", describe_vpcs, vpcs_params, true },
	{ "DescribeVSwitches", describe_vswitches, vswitches_params, true },
	{ NULL, NULL, NULL, false },
};
