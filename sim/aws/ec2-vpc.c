/*
 * ec2-vpc.c: the network a launch lands in, read only: DescribeVpcs and DescribeSubnets.
 * Each region has the default VPC (EC2_DEFAULT_VPC, 172.31.0.0/16, one default subnet per
 * zone) unless --no-default-vpc, and the user's own VPC (sim/network.h, 10.0.0.0/16, one
 * subnet per zone). An id that DescribeVpcs' VpcId.N or DescribeSubnets' SubnetId.N names
 * and that does not exist fails the call (InvalidVpcID.NotFound, InvalidSubnetID.NotFound),
 * as EC2 does; a filter that matches nothing is an empty set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/aws/ec2.h"
#include "sim/catalog.h"
#include "sim/network.h"

/* The default subnet of the zone with index i: the first is the id instances without a
 * subnet have always shown. */
static void default_subnet(size_t i, char out[SIM_ID_MAX])
{
	snprintf(out, SIM_ID_MAX, "subnet-0a1b2c3d4e5f6%04zx", i + 1);
}

const char *ec2_subnet_zone(struct ec2 *c, const char *id, char vpc[SIM_ID_MAX])
{
	const struct sim_region *reg = sim_catalog_region(SIM_AWS, c->region);
	const char *z;
	char mine[SIM_ID_MAX];

	if ((z = sim_user_subnet_zone(reg, id))) {
		sim_user_vpc(SIM_AWS, c->region, vpc);
		return z;
	}
	for (size_t i = 0; reg && id && !c->sim->cfg.no_default_vpc && reg->zones[i]; i++) {
		default_subnet(i, mine);
		if (strcmp(mine, id) == 0) {
			snprintf(vpc, SIM_ID_MAX, "%s", EC2_DEFAULT_VPC);
			return reg->zones[i];
		}
	}
	return NULL;
}

bool ec2_vpc_exists(struct ec2 *c, const char *id)
{
	if (!id)
		return false;
	if (!c->sim->cfg.no_default_vpc && strcmp(id, EC2_DEFAULT_VPC) == 0)
		return true;
	return sim_user_vpc_is(sim_catalog_region(SIM_AWS, c->region), id);
}

static const char *const vpc_filters[] = { "vpc-id",   "is-default", "state",	"cidr",
					   "owner-id", "tag:",	     "tag-key", NULL };

static int describe_vpcs(struct ec2 *c)
{
	const char **ids = NULL;
	size_t ni = ec2_list(c, "VpcId", &ids);
	struct ec2_filters fs = { 0 };
	char user[SIM_ID_MAX];
	struct vpc {
		const char *id, *cidr;
		bool dflt;
	} vpcs[2];
	size_t n = 0;
	struct sim_tags none = { 0 };
	int ret = -1;

	if (ec2_get_filters(c, vpc_filters, &fs))
		goto out;
	sim_user_vpc(SIM_AWS, c->region, user);
	if (!c->sim->cfg.no_default_vpc)
		vpcs[n++] = (struct vpc){ EC2_DEFAULT_VPC, "172.31.0.0/16", true };
	vpcs[n++] = (struct vpc){ user, "10.0.0.0/16", false };
	for (size_t i = 0; i < ni; i++) {
		bool known = false;

		for (size_t k = 0; k < n; k++)
			known |= strcmp(ids[i], vpcs[k].id) == 0;
		if (!known) {
			EC2_FAIL400(c, "InvalidVpcID.NotFound", "The vpc ID '%s' does not exist",
				    ids[i]);
			goto out;
		}
	}
	ec2_begin(c);
	ec2_open(c, "vpcSet");
	for (size_t k = 0; k < n; k++) {
		bool wanted = ni == 0, m = true;

		for (size_t i = 0; i < ni; i++)
			wanted |= strcmp(ids[i], vpcs[k].id) == 0;
		for (size_t f = 0; f < fs.n && m; f++) {
			const char *fn = fs.f[f].name;

			m = !strcmp(fn, "vpc-id") ? ec2_any_value(&fs.f[f], vpcs[k].id)
				: !strcmp(fn, "is-default")
				? ec2_any_value(&fs.f[f], vpcs[k].dflt ? "true" : "false")
				: !strcmp(fn, "state") ? ec2_any_value(&fs.f[f], "available")
				: !strcmp(fn, "cidr")  ? ec2_any_value(&fs.f[f], vpcs[k].cidr)
				: !strcmp(fn, "owner-id")
				? ec2_any_value(&fs.f[f], c->sim->cfg.aws_account)
				: ec2_tag_filter(&fs.f[f], &none);
		}
		if (!wanted || !m)
			continue;
		ec2_open(c, "item");
		ec2_el(c, "vpcId", vpcs[k].id);
		ec2_el(c, "ownerId", c->sim->cfg.aws_account);
		ec2_el(c, "state", "available");
		ec2_el(c, "cidrBlock", vpcs[k].cidr);
		ec2_el(c, "dhcpOptionsId", "dopt-0a1b2c3d");
		ec2_el(c, "instanceTenancy", "default");
		ec2_el(c, "isDefault", vpcs[k].dflt ? "true" : "false");
		ec2_close(c);
	}
	ec2_close(c);
	ret = ec2_finish(c);
out:
	free(ids);
	ec2_filters_release(&fs);
	return ret;
}

static const char *const subnet_filters[] = {
	"subnet-id", "vpc-id",	   "availability-zone", "default-for-az",
	"state",     "cidr-block", "owner-id",		"tag:",
	"tag-key",   NULL
};

static int describe_subnets(struct ec2 *c)
{
	const struct sim_region *reg = sim_catalog_region(SIM_AWS, c->region);
	const char **ids = NULL;
	size_t ni = ec2_list(c, "SubnetId", &ids);
	struct ec2_filters fs = { 0 };
	struct sim_tags none = { 0 };
	char vpc[SIM_ID_MAX];
	int ret = -1;

	if (ec2_get_filters(c, subnet_filters, &fs))
		goto out;
	for (size_t i = 0; i < ni; i++)
		if (!ec2_subnet_zone(c, ids[i], vpc)) {
			EC2_FAIL400(c, "InvalidSubnetID.NotFound",
				    "The subnet ID '%s' does not exist", ids[i]);
			goto out;
		}
	ec2_begin(c);
	ec2_open(c, "subnetSet");
	for (int pass = c->sim->cfg.no_default_vpc; pass < 2; pass++) {
		for (size_t z = 0; reg->zones[z]; z++) {
			char id[SIM_ID_MAX], cidr[32];
			bool dflt = pass == 0, wanted = ni == 0, m = true;

			if (dflt)
				default_subnet(z, id);
			else
				sim_user_subnet(SIM_AWS, c->region, reg->zones[z], id);
			snprintf(vpc, sizeof(vpc), "%s", EC2_DEFAULT_VPC);
			if (!dflt)
				sim_user_vpc(SIM_AWS, c->region, vpc);
			snprintf(cidr, sizeof(cidr), "%s.%zu.0/20", dflt ? "172.31" : "10.0",
				 (z * 16) % 256);
			for (size_t i = 0; i < ni; i++)
				wanted |= strcmp(ids[i], id) == 0;
			for (size_t f = 0; f < fs.n && m; f++) {
				const char *fn = fs.f[f].name;

				m = !strcmp(fn, "subnet-id")	? ec2_any_value(&fs.f[f], id)
					: !strcmp(fn, "vpc-id") ? ec2_any_value(&fs.f[f], vpc)
					: !strcmp(fn, "availability-zone")
					? ec2_any_value(&fs.f[f], reg->zones[z])
					: !strcmp(fn, "default-for-az")
					? ec2_any_value(&fs.f[f], dflt ? "true" : "false")
					: !strcmp(fn, "state")
					? ec2_any_value(&fs.f[f], "available")
					: !strcmp(fn, "cidr-block") ? ec2_any_value(&fs.f[f], cidr)
					: !strcmp(fn, "owner-id")
					? ec2_any_value(&fs.f[f], c->sim->cfg.aws_account)
					: ec2_tag_filter(&fs.f[f], &none);
			}
			if (!wanted || !m)
				continue;
			ec2_open(c, "item");
			ec2_el(c, "subnetId", id);
			ec2_el(c, "state", "available");
			ec2_el(c, "vpcId", vpc);
			ec2_el(c, "cidrBlock", cidr);
			ec2_el(c, "availableIpAddressCount", "4091");
			ec2_el(c, "availabilityZone", reg->zones[z]);
			ec2_el(c, "defaultForAz", dflt ? "true" : "false");
			ec2_el(c, "mapPublicIpOnLaunch", dflt ? "true" : "false");
			ec2_el(c, "ownerId", c->sim->cfg.aws_account);
			ec2_close(c);
		}
	}
	ec2_close(c);
	ret = ec2_finish(c);
out:
	free(ids);
	ec2_filters_release(&fs);
	return ret;
}

static const char *const p_vpcs[] = { "VpcId.N", EC2_FILTERS, EC2_PAGING, NULL };
static const char *const p_subnets[] = { "SubnetId.N", EC2_FILTERS, EC2_PAGING, NULL };

const struct ec2_action ec2_vpc_actions[] = {
	{ "DescribeVpcs", describe_vpcs, true, p_vpcs, false },
	{ "DescribeSubnets", describe_subnets, true, p_subnets, false },
	{ NULL, NULL, false, NULL, false },
};
