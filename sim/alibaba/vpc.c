/*
 * vpc.c: the Alibaba VPC API (2016-04-28) that the emulator serves on the ECS port,
 * read only: DescribeVpcs and DescribeVSwitches. A real ECS instance lives in a vSwitch
 * and a VPC security group in a VPC, so a client finds the region's default VPC and a
 * vSwitch in the zone it launches in; RunInstances (ecs-instances.c) and
 * CreateSecurityGroup (ecs-resources.c) check what they are given against this.
 *
 * Every catalogue region has one default VPC, ECS_DEFAULT_VPC (172.16.0.0/12, as a real
 * default VPC), and one default vSwitch per zone, "vsw-gpuclustersim-ZONE" (a /20 of it
 * per zone), unless --no-default-vpc; beside it the user's own VPC and a vSwitch per zone
 * (sim/network.h). They are fixed facts, not world state: nothing creates or deletes them,
 * so these actions need no lock of their own. Field names and JSON types follow the
 * @alicloud/vpc20160428 response models.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/str.h"
#include "sim/alibaba/ecs.h"
#include "sim/catalog.h"
#include "sim/network.h"

#define VSW_PREFIX    "vsw-gpuclustersim-"
#define VPC_CIDR      "172.16.0.0/12"
#define USER_CIDR     "192.168.0.0/16" /* the user's VPC (sim/network.h) */
#define VPC_CREATED   "2026-01-01T00:00:00Z"
#define VSW_ADDRESSES 4092 /* a /20 less the five addresses a vSwitch reserves */

bool ecs_vpc_exists(const struct ecs_call *c, const char *id)
{
	const struct sim_region *reg = sim_catalog_region(SIM_ALIBABA, c->region);

	if (!reg || !id)
		return false;
	return (!c->sim->cfg.no_default_vpc && strcmp(id, ECS_DEFAULT_VPC) == 0) ||
		sim_user_vpc_is(reg, id);
}

const char *ecs_vswitch_zone(const struct ecs_call *c, const char *id, char vpc[SIM_ID_MAX])
{
	const struct sim_region *reg = sim_catalog_region(SIM_ALIBABA, c->region);
	const char *z;

	if (!reg || !id)
		return NULL;
	if ((z = sim_user_subnet_zone(reg, id))) {
		sim_user_vpc(SIM_ALIBABA, c->region, vpc);
		return z;
	}
	if (c->sim->cfg.no_default_vpc || !gc_starts_with(id, VSW_PREFIX))
		return NULL;
	for (const char *const *zz = reg->zones; *zz; zz++)
		if (strcmp(id + strlen(VSW_PREFIX), *zz) == 0) {
			snprintf(vpc, SIM_ID_MAX, "%s", ECS_DEFAULT_VPC);
			return *zz;
		}
	return NULL;
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

/* One VPC of DescribeVpcs, with its vSwitches (the default one's or the user's). */
static json_t *vpc_json(const struct ecs_call *c, const char *id, bool dflt)
{
	const struct sim_region *reg = sim_catalog_region(SIM_ALIBABA, c->region);
	json_t *vsws = json_array();
	char vsw[SIM_NAME_MAX + 32];

	for (const char *const *z = reg->zones; *z; z++) {
		if (dflt)
			snprintf(vsw, sizeof(vsw), VSW_PREFIX "%s", *z);
		else
			sim_user_subnet(SIM_ALIBABA, c->region, *z, vsw);
		json_array_append_new(vsws, json_string(vsw));
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:{s:o}, "
			 "s:{s:[]}, s:{s:[]}, s:{s:[]}, s:{s:[s]}, s:{s:[]}, s:b, s:s, "
			 "s:s, s:I}",
			 "VpcId", id, "VpcName", dflt ? "default" : "user", "RegionId", c->region,
			 "Status", "Available", "CidrBlock", dflt ? VPC_CIDR : USER_CIDR,
			 "CreationTime", VPC_CREATED, "IsDefault", dflt, "Description", "",
			 "VRouterId", "vrt-gpuclustersim", "VSwitchIds", "VSwitchId", vsws,
			 "SecondaryCidrBlocks", "SecondaryCidrBlock", "UserCidrs", "UserCidr",
			 "NatGatewayIds", "NatGatewayIds", "RouterTableIds", "RouterTableIds",
			 "vtb-gpuclustersim", "Tags", "Tag", "EnabledIpv6", 0, "ResourceGroupId",
			 "rg-gpuclustersim", "DhcpOptionsSetStatus", "", "OwnerId", (json_int_t)1);
}

static int describe_vpcs(struct ecs_call *c)
{
	const char *ids = ecs_get(c, "VpcId"), *name = ecs_get(c, "VpcName");
	uint64_t page, size;
	bool show_default, show_other;
	json_t *list = json_array();
	char user[SIM_ID_MAX];
	size_t total = 0;

	if (ecs_uint(c, "PageNumber", 1, UINT32_MAX, 1, &page) ||
	    ecs_uint(c, "PageSize", 1, 50, 10, &size) ||
	    default_filter(c, &show_default, &show_other) || dry_run(c)) {
		json_decref(list);
		return -1;
	}
	sim_user_vpc(SIM_ALIBABA, c->region, user);
	for (int k = 0; k < 2; k++) {
		bool dflt = k == 0;
		const char *id = dflt ? ECS_DEFAULT_VPC : user;

		/* a tag filter matches nothing: neither VPC carries tags */
		if ((dflt && c->sim->cfg.no_default_vpc) || !(dflt ? show_default : show_other) ||
		    (ids && !in_comma_list(ids, id)) ||
		    (name && strcmp(name, dflt ? "default" : "user") != 0) ||
		    ecs_get(c, "Tag.1.Key") || ecs_get(c, "ResourceGroupId"))
			continue;
		if (total++ / size == page - 1)
			json_array_append_new(list, vpc_json(c, id, dflt));
	}
	c->out = json_pack("{s:{s:o}, s:i, s:i, s:i}", "Vpcs", "Vpc", list, "TotalCount",
			   (int)total, "PageNumber", (int)page, "PageSize", (int)size);
	return 0;
}

static int describe_vswitches(struct ecs_call *c)
{
	const char *vpc = ecs_get(c, "VpcId"), *one = ecs_get(c, "VSwitchId");
	const char *zone = ecs_get(c, "ZoneId"), *name = ecs_get(c, "VSwitchName");
	const struct sim_region *reg = sim_catalog_region(SIM_ALIBABA, c->region);
	uint64_t page, size;
	bool show_default, show_other;
	json_t *list = json_array();
	char user[SIM_ID_MAX];
	size_t total = 0;

	if (ecs_uint(c, "PageNumber", 1, UINT32_MAX, 1, &page) ||
	    ecs_uint(c, "PageSize", 1, 50, 10, &size) ||
	    default_filter(c, &show_default, &show_other) || dry_run(c)) {
		json_decref(list);
		return -1;
	}
	if (zone && !sim_catalog_zone_ok(reg, zone)) {
		json_decref(list);
		return ecs_fail(c, 404, "InvalidZoneId.NotFound",
				"The specified zone '%s' does not exist in %s.", zone, c->region);
	}
	sim_user_vpc(SIM_ALIBABA, c->region, user);
	for (int k = 0; k < 2; k++) {
		bool dflt = k == 0;
		const char *in_vpc = dflt ? ECS_DEFAULT_VPC : user;
		size_t i = 0;

		if ((dflt && c->sim->cfg.no_default_vpc) || !(dflt ? show_default : show_other))
			continue;
		for (const char *const *z = reg->zones; *z; z++, i++) {
			char id[SIM_NAME_MAX + 32], cidr[32];

			if (dflt)
				snprintf(id, sizeof(id), VSW_PREFIX "%s", *z);
			else
				sim_user_subnet(SIM_ALIBABA, c->region, *z, id);
			if ((vpc && strcmp(vpc, in_vpc)) || (one && strcmp(one, id)) ||
			    (zone && strcmp(zone, *z)) ||
			    (name && strcmp(name, dflt ? "default" : "user")) ||
			    ecs_get(c, "Tag.1.Key") || ecs_get(c, "ResourceGroupId") ||
			    ecs_get(c, "RouteTableId"))
				continue;
			if (total++ / size != page - 1)
				continue;
			snprintf(cidr, sizeof(cidr), "%s.%zu.0/20", dflt ? "172.16" : "192.168",
				 (i * 16) % 256);
			json_array_append_new(
				list,
				json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:I, s:s, s:s, s:s, "
					  "s:s, s:{s:s, s:s}, s:{s:[]}, s:s, s:I, s:b}",
					  "VSwitchId", id, "VpcId", in_vpc, "ZoneId", *z,
					  "VSwitchName", dflt ? "default" : "user", "Status",
					  "Available", "CidrBlock", cidr, "IsDefault", dflt,
					  "AvailableIpAddressCount", (json_int_t)VSW_ADDRESSES,
					  "Description", "", "CreationTime", VPC_CREATED,
					  "ResourceGroupId", "rg-gpuclustersim", "NetworkAclId", "",
					  "RouteTable", "RouteTableId", "vtb-gpuclustersim",
					  "RouteTableType", "System", "Tags", "Tag", "ShareType",
					  "", "OwnerId", (json_int_t)1, "EnabledIpv6", 0));
		}
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
