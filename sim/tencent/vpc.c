/*
 * vpc.c: the Tencent VPC actions (API 2017-03-12) that the emulator serves on the CVM
 * port: CreateSecurityGroup, CreateSecurityGroupPolicies, DescribeSecurityGroups,
 * DescribeSecurityGroupPolicies, DeleteSecurityGroupPolicies and DeleteSecurityGroup, and DescribeVpcs and
 * DescribeSubnets for the network every region has.
 *
 * Only ACCEPT ingress rules are modelled (the world's struct sim_rule), from a CIDR block
 * or from a security group (its members; the group must exist); egress entries are
 * accepted and not kept. The network is fixed, not world state: each
 * region has one default VPC (TC_DEFAULT_VPC, 10.0.0.0/16) with one default subnet per
 * zone (a /20 each, ids derived from the zone name), as an account that has used the
 * console's quick set-up has, unless --no-default-vpc; beside it the user's own VPC with a
 * subnet per zone (sim/network.h). Runs with the world lock held (see cvm.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/cidr.h"
#include "core/hash.h"
#include "core/str.h"
#include "sim/network.h"
#include "sim/tencent/cvm.h"

static const struct tc_field f_template[] = {
	{ "ServiceId", TC_STR, NULL },
	{ "ServiceGroupId", TC_STR, NULL },
	{ "AddressId", TC_STR, NULL },
	{ "AddressGroupId", TC_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field f_policy[] = {
	{ "PolicyIndex", TC_INT, NULL },
	{ "Protocol", TC_STR, NULL },
	{ "Port", TC_STR, NULL },
	{ "ServiceTemplate", TC_OBJ, f_template },
	{ "CidrBlock", TC_STR, NULL },
	{ "Ipv6CidrBlock", TC_STR, NULL },
	{ "SecurityGroupId", TC_STR, NULL },
	{ "AddressTemplate", TC_OBJ, f_template },
	{ "Action", TC_STR, NULL },
	{ "PolicyDescription", TC_STR, NULL },
	{ "ModifyTime", TC_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field f_policy_set[] = {
	{ "Version", TC_STR, NULL },
	{ "Egress", TC_ARR_OBJ, f_policy },
	{ "Ingress", TC_ARR_OBJ, f_policy },
	{ NULL, 0, NULL },
};
static const struct tc_field s_create[] = {
	{ "GroupName", TC_STR, NULL },
	{ "GroupDescription", TC_STR, NULL },
	{ "ProjectId", TC_STR, NULL },
	{ "Tags", TC_ARR_OBJ, tc_tag_schema },
	{ NULL, 0, NULL },
};
static const struct tc_field s_policies[] = {
	{ "SecurityGroupId", TC_STR, NULL },
	{ "SecurityGroupPolicySet", TC_OBJ, f_policy_set },
	{ NULL, 0, NULL },
};
static const struct tc_field s_describe[] = {
	{ "SecurityGroupIds", TC_ARR_STR, NULL },
	{ "Filters", TC_ARR_OBJ, tc_filter_schema },
	{ "Offset", TC_INTSTR, NULL },
	{ "Limit", TC_INTSTR, NULL },
	{ "OrderField", TC_STR, NULL },
	{ "OrderDirection", TC_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field s_one[] = {
	{ "SecurityGroupId", TC_STR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field s_describe_policies[] = {
	{ "SecurityGroupId", TC_STR, NULL },
	{ "Filters", TC_ARR_OBJ, tc_filter_schema },
	{ NULL, 0, NULL },
};

static const struct tc_field s_describe_vpcs[] = {
	{ "VpcIds", TC_ARR_STR, NULL },
	{ "Filters", TC_ARR_OBJ, tc_filter_schema },
	{ "Offset", TC_INTSTR, NULL },
	{ "Limit", TC_INTSTR, NULL },
	{ NULL, 0, NULL },
};
static const struct tc_field s_describe_subnets[] = {
	{ "SubnetIds", TC_ARR_STR, NULL },
	{ "Filters", TC_ARR_OBJ, tc_filter_schema },
	{ "Offset", TC_INTSTR, NULL },
	{ "Limit", TC_INTSTR, NULL },
	{ NULL, 0, NULL },
};

static struct sim_secgroup *find_sg(struct tc_call *c, const char *id)
{
	struct sim_secgroup *sg;

	if (!gc_starts_with(id, "sg-")) {
		tc_fail(c, "InvalidParameterValue.Malformed",
			"The security group id `%s` is malformed.", id);
		return NULL;
	}
	sg = sim_world_sg(c->sim->world, SIM_TENCENT, c->region, id);
	if (!sg)
		tc_fail(c, "ResourceNotFound", "The security group `%s` does not exist.", id);
	return sg;
}

static json_t *sg_json(const struct sim_secgroup *sg)
{
	char created[32];
	json_t *tags = tc_tags_json(&sg->tags);

	tc_format_time(sg->created_wall, false, created);
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:o}", "SecurityGroupId", sg->id,
			 "SecurityGroupName", sg->name, "SecurityGroupDesc", sg->description,
			 "ProjectId", "0", "IsDefault", 0, "CreatedTime", created, "UpdateTime",
			 created, "TagSet", tags);
}

static int create_security_group(struct tc_call *c)
{
	const char *name, *desc;
	json_t *tags = tc_get(c, "Tags"), *t;
	struct sim_tags st = { 0 };
	struct sim_secgroup *sg;
	size_t i;

	if (tc_need_str(c, "GroupName", &name) || tc_need_str(c, "GroupDescription", &desc))
		return -1;
	if (strlen(name) > 60)
		return tc_fail(c, "InvalidParameterValue.TooLong",
			       "GroupName exceeds 60 characters.");
	if (strlen(desc) > 100)
		return tc_fail(c, "InvalidParameterValue.TooLong",
			       "GroupDescription exceeds 100 characters.");
	json_array_foreach(tags, i, t)
	{
		const char *k = json_string_value(json_object_get(t, "Key"));
		const char *v = json_string_value(json_object_get(t, "Value"));
		if (!k || !*k) {
			sim_tags_release(&st);
			return tc_fail(c, "InvalidParameterValue.Empty", "Tags.%zu.Key is empty.",
				       i);
		}
		sim_tags_set(&st, k, v ? v : "");
	}
	sg = sim_world_create_sg(c->sim->world, SIM_TENCENT, c->region, name, desc, "", &st);
	sim_tags_release(&st);
	c->out = json_pack("{s:o}", "SecurityGroup", sg_json(sg));
	return 0;
}

enum ingress_mode { INGRESS_ADD, INGRESS_CHECK, INGRESS_REMOVE };

/* One rule of an Ingress entry: added, or (DeleteSecurityGroupPolicies, by content)
 * checked to exist and then removed. */
static int ingress_rule(struct tc_call *c, struct sim_secgroup *sg, const struct sim_rule *r,
			enum ingress_mode mode, size_t index)
{
	if (mode == INGRESS_ADD)
		(void)sim_world_add_rule(sg, r);
	else if (mode == INGRESS_REMOVE)
		(void)sim_world_remove_rule(sg, r);
	else if (!sim_world_has_rule(sg, r))
		return tc_fail(c, "ResourceNotFound",
			       "Ingress.%zu: the security group policy does not exist.", index);
	return 0;
}

/* The rules of one Ingress entry (a Port list "80,443" gives one rule each), by mode. */
static int add_ingress(struct tc_call *c, struct sim_secgroup *sg, json_t *p, size_t index,
		       enum ingress_mode mode)
{
	const char *proto = json_string_value(json_object_get(p, "Protocol"));
	const char *port = json_string_value(json_object_get(p, "Port"));
	const char *cidr = json_string_value(json_object_get(p, "CidrBlock"));
	const char *cidr6 = json_string_value(json_object_get(p, "Ipv6CidrBlock"));
	const char *group = json_string_value(json_object_get(p, "SecurityGroupId"));
	const char *action = json_string_value(json_object_get(p, "Action"));
	const char *desc = json_string_value(json_object_get(p, "PolicyDescription"));
	const struct sim_secgroup *source = NULL;
	struct sim_rule r;
	struct gc_cidr block;

	memset(&r, 0, sizeof(r));
	if (cidr && !*cidr)
		cidr = NULL;
	if (cidr6 && !*cidr6)
		cidr6 = NULL;
	if (group && !*group)
		group = NULL;
	if (!proto || !action || (!cidr && !cidr6 && !group))
		return tc_fail(
			c, "MissingParameter",
			"Ingress.%zu needs Protocol, Action and a CidrBlock, Ipv6CidrBlock or "
			"SecurityGroupId (templates are not modelled).",
			index);
	/* CidrBlock, Ipv6CidrBlock and SecurityGroupId are mutually exclusive */
	if ((cidr != NULL) + (cidr6 != NULL) + (group != NULL) > 1)
		return tc_fail(
			c, "InvalidParameter.Coexist",
			"Ingress.%zu: CidrBlock, Ipv6CidrBlock and SecurityGroupId cannot be "
			"specified at the same time.",
			index);
	/* a group source means its members, whatever their addresses; it must exist */
	if (group && !(source = find_sg(c, group)))
		return -1;
	if (strcasecmp(action, "ACCEPT"))
		return tc_fail(c, "InvalidParameterValue",
			       "Ingress.%zu.Action `%s`: gpucluster-sim models ACCEPT rules only.",
			       index, action);
	if (strcasecmp(proto, "TCP") && strcasecmp(proto, "UDP") && strcasecmp(proto, "ICMP") &&
	    strcasecmp(proto, "ALL"))
		return tc_fail(c, "InvalidParameterValue",
			       "Ingress.%zu.Protocol `%s` is not valid.", index, proto);
	for (size_t i = 0; proto[i] && i + 1 < sizeof(r.protocol); i++)
		r.protocol[i] = (char)tolower((unsigned char)proto[i]);
	/* each family in its own field: an IPv6 block in CidrBlock is malformed */
	if (cidr && (gc_cidr_parse(&block, cidr) < 0 || block.family != GC_CIDR_IPV4))
		return tc_fail(c, "InvalidParameterValue.Malformed",
			       "Ingress.%zu.CidrBlock `%s` is not valid.", index, cidr);
	if (cidr6 && (gc_cidr_parse(&block, cidr6) < 0 || block.family != GC_CIDR_IPV6))
		return tc_fail(c, "InvalidParameterValue.Malformed",
			       "Ingress.%zu.Ipv6CidrBlock `%s` is not valid.", index, cidr6);
	snprintf(r.cidr, sizeof(r.cidr), "%s", cidr ? cidr : "");
	snprintf(r.cidr_ipv6, sizeof(r.cidr_ipv6), "%s", cidr6 ? cidr6 : "");
	snprintf(r.source_group, sizeof(r.source_group), "%s", source ? source->id : "");
	snprintf(r.description, sizeof(r.description), "%s", desc ? desc : "");
	bool ports = !strcmp(r.protocol, "tcp") || !strcmp(r.protocol, "udp");
	if (!port || !strcasecmp(port, "ALL") || !ports) {
		if (port && ports == false && strcasecmp(port, "ALL"))
			return tc_fail(c, "InvalidParameterValue",
				       "Ingress.%zu.Port must be ALL for protocol %s.", index,
				       proto);
		r.from_port = ports ? 1 : -1;
		r.to_port = ports ? 65535 : -1;
		return ingress_rule(c, sg, &r, mode, index);
	}
	/* "22", "80,443" or "3000-4000" */
	for (const char *s = port; *s;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		char piece[32], *dash;
		int64_t from, to;
		if (!len || len >= sizeof(piece))
			goto bad;
		memcpy(piece, s, len);
		piece[len] = '\0';
		dash = strchr(piece, '-');
		if (dash)
			*dash = '\0';
		if (gc_parse_i64(piece, 1, 65535, &from) ||
		    gc_parse_i64(dash ? dash + 1 : piece, 1, 65535, &to) || to < from)
			goto bad;
		r.from_port = (int)from;
		r.to_port = (int)to;
		if (ingress_rule(c, sg, &r, mode, index))
			return -1;
		s = comma ? comma + 1 : s + len;
	}
	return 0;
bad:
	return tc_fail(c, "InvalidParameterValue.Range", "Ingress.%zu.Port `%s` is not valid.",
		       index, port);
}

/* What Create- and DeleteSecurityGroupPolicies both take: the group, and a policy set of
 * one direction (verb: "created", "deleted", for the refusal). 0, or -1 answered. */
static int policy_set(struct tc_call *c, const char *verb, struct sim_secgroup **sg,
		      json_t **ingress, json_t **egress)
{
	const char *id;

	*ingress = tc_get(c, "SecurityGroupPolicySet.Ingress");
	*egress = tc_get(c, "SecurityGroupPolicySet.Egress");
	if (tc_need_str(c, "SecurityGroupId", &id) || !(*sg = find_sg(c, id)))
		return -1;
	if (!tc_get(c, "SecurityGroupPolicySet"))
		return tc_fail(
			c, "MissingParameter",
			"The request is missing a required parameter `SecurityGroupPolicySet`.");
	if (json_array_size(*ingress) && json_array_size(*egress))
		return tc_fail(c, "InvalidParameter",
			       "Ingress and Egress cannot be %s in one request.", verb);
	if (!json_array_size(*ingress) && !json_array_size(*egress))
		return tc_fail(c, "MissingParameter",
			       "SecurityGroupPolicySet needs Ingress or Egress entries.");
	return 0;
}

static int create_policies(struct tc_call *c)
{
	struct sim_secgroup *sg;
	json_t *ingress, *egress, *p;
	size_t i;

	if (policy_set(c, "created", &sg, &ingress, &egress))
		return -1;
	json_array_foreach(ingress, i, p)
	{
		if (add_ingress(c, sg, p, i, INGRESS_ADD))
			return -1;
	}
	c->out = json_object();
	return 0;
}

/*
 * DeleteSecurityGroupPolicies by content (Protocol, Port, CidrBlock or SecurityGroupId,
 * Action; the description need not match) or by PolicyIndex, one direction a request,
 * all or nothing: an entry that matches no policy fails the whole request.
 */
static int delete_policies(struct tc_call *c)
{
	struct sim_secgroup *sg;
	json_t *ingress, *egress, *p;
	bool *gone;
	size_t i;

	if (policy_set(c, "deleted", &sg, &ingress, &egress))
		return -1;
	if (json_array_size(egress)) {
		c->out = json_object(); /* egress entries are not kept (see the top) */
		return 0;
	}
	gone = gc_xcalloc(sg->n_rules + 1, sizeof(*gone));
	json_array_foreach(ingress, i, p)
	{
		json_t *index = json_object_get(p, "PolicyIndex");

		if (index && json_object_size(p) > 1) {
			free(gone);
			return tc_fail(c, "InvalidParameter.Coexist",
				       "Ingress.%zu: PolicyIndex and policy content cannot be "
				       "specified at the same time.",
				       i);
		}
		if (index &&
		    (!json_is_integer(index) || json_integer_value(index) < 0 ||
		     (size_t)json_integer_value(index) >= sg->n_rules)) {
			free(gone);
			return tc_fail(c, "ResourceNotFound",
				       "Ingress.%zu: the security group policy does not exist.", i);
		}
		if (index)
			gone[json_integer_value(index)] = true;
		else if (add_ingress(c, sg, p, i, INGRESS_CHECK)) {
			free(gone);
			return -1;
		}
	}
	/* indexes name the policies as they were before this request */
	for (size_t k = sg->n_rules; k-- > 0;)
		if (gone[k]) {
			memmove(&sg->rules[k], &sg->rules[k + 1],
				(sg->n_rules - k - 1) * sizeof(*sg->rules));
			sg->n_rules--;
		}
	free(gone);
	json_array_foreach(ingress, i, p)
	{
		if (!json_object_get(p, "PolicyIndex"))
			(void)add_ingress(c, sg, p, i, INGRESS_REMOVE);
	}
	c->out = json_object();
	return 0;
}

static int describe_security_groups(struct tc_call *c)
{
	static const char *const names[] = {
		"security-group-id", "security-group-name", "project-id", "tag-key", "tag:", NULL
	};
	json_t *ids = tc_get(c, "SecurityGroupIds"), *list;
	struct sim_secgroup **all = NULL;
	int64_t offset, limit;
	size_t n, total = 0;

	if (ids && tc_get(c, "Filters"))
		return tc_fail(
			c, "InvalidParameter.Coexist",
			"SecurityGroupIds and Filters cannot be specified at the same time.");
	for (size_t i = 0; i < json_array_size(ids); i++)
		if (!find_sg(c, json_string_value(json_array_get(ids, i))))
			return -1;
	if (tc_check_filters(c, names, 10, 5) || tc_paging(c, 20, 100, &offset, &limit))
		return -1;
	list = json_array();
	n = sim_world_list_sgs(c->sim->world, SIM_TENCENT, c->region, &all);
	for (size_t i = 0; i < n; i++) {
		struct sim_secgroup *sg = all[i];
		if (ids) {
			bool found = false;
			for (size_t k = 0; k < json_array_size(ids); k++)
				found |= !strcmp(json_string_value(json_array_get(ids, k)), sg->id);
			if (!found)
				continue;
		}
		if (!tc_filter_ok(c, "security-group-id", sg->id) ||
		    !tc_filter_ok(c, "security-group-name", sg->name) ||
		    !tc_filter_ok(c, "project-id", "0") || !tc_filter_tags(c, &sg->tags))
			continue;
		size_t pos = total++;
		if (pos >= (size_t)offset && pos < (size_t)(offset + limit))
			json_array_append_new(list, sg_json(sg));
	}
	free(all);
	c->out = json_pack("{s:i, s:o}", "TotalCount", (int)total, "SecurityGroupSet", list);
	return 0;
}

static int describe_policies(struct tc_call *c)
{
	const char *id;
	struct sim_secgroup *sg;
	json_t *ingress;
	char modified[32];

	if (tc_need_str(c, "SecurityGroupId", &id) || !(sg = find_sg(c, id)))
		return -1;
	tc_format_time(sg->created_wall, false, modified);
	ingress = json_array();
	for (size_t i = 0; i < sg->n_rules; i++) {
		const struct sim_rule *r = &sg->rules[i];
		char port[32], proto[16];
		if (r->from_port < 0 || (r->from_port == 1 && r->to_port == 65535))
			snprintf(port, sizeof(port), "ALL");
		else if (r->from_port == r->to_port)
			snprintf(port, sizeof(port), "%d", r->from_port);
		else
			snprintf(port, sizeof(port), "%d-%d", r->from_port, r->to_port);
		for (size_t k = 0; k < sizeof(proto); k++) {
			proto[k] = (char)toupper((unsigned char)r->protocol[k]);
			if (!proto[k])
				break;
		}
		proto[sizeof(proto) - 1] = '\0';
		json_array_append_new(
			ingress,
			json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{}, s:{}}",
				  "PolicyIndex", (int)i, "Protocol",
				  strcmp(proto, "-1") ? proto : "ALL", "Port", port, "CidrBlock",
				  r->cidr, "Ipv6CidrBlock", r->cidr_ipv6, "SecurityGroupId",
				  r->source_group, "Action", "ACCEPT", "PolicyDescription",
				  r->description, "ModifyTime", modified, "ServiceTemplate",
				  "AddressTemplate"));
	}
	c->out = json_pack("{s:{s:s, s:o, s:[], s:{s:i, s:i}}}", "SecurityGroupPolicySet",
			   "Version", "1", "Ingress", ingress, "Egress", "PolicyStatistics",
			   "IngressPolicyCount", (int)sg->n_rules, "EgressPolicyCount", 0);
	return 0;
}

static int delete_security_group(struct tc_call *c)
{
	const char *id;
	struct sim_secgroup *sg;

	if (tc_need_str(c, "SecurityGroupId", &id) || !(sg = find_sg(c, id)))
		return -1;
	if (sim_world_sg_in_use(c->sim->world, sg))
		return tc_fail(c, "ResourceInUse",
			       "The security group `%s` is still bound to instances.", id);
	sim_world_delete_sg(c->sim->world, sg);
	c->out = json_object();
	return 0;
}

/* --- the default VPC and its subnets ------------------------------------------------------ */

void tc_default_subnet(const char *zone, char out[SIM_ID_MAX])
{
	char h[GC_SHORTHASH_LEN + 1];

	gc_shorthash(zone, strlen(zone), h);
	snprintf(out, SIM_ID_MAX, "subnet-%.8s", h);
}

const char *tc_subnet_zone(const struct sim_region *reg, const char *subnet)
{
	char id[SIM_ID_MAX];

	for (const char *const *z = reg->zones; subnet && *z; z++) {
		tc_default_subnet(*z, id);
		if (!strcmp(id, subnet))
			return *z;
	}
	return NULL;
}

static bool id_listed(json_t *ids, const char *id)
{
	size_t i;
	json_t *v;

	json_array_foreach(ids, i, v)
	{
		if (!strcmp(json_string_value(v), id))
			return true;
	}
	return false;
}

bool tc_vpc_exists(const struct tc_call *c, const char *vpc)
{
	return (!c->sim->cfg.no_default_vpc && strcmp(vpc, TC_DEFAULT_VPC) == 0) ||
		sim_user_vpc_is(sim_catalog_region(SIM_TENCENT, c->region), vpc);
}

static int describe_vpcs(struct tc_call *c)
{
	static const char *const names[] = { "vpc-name", "is-default", "vpc-id", "cidr-block",
					     "tag-key",	 "tag:",       NULL };
	json_t *ids = tc_get(c, "VpcIds"), *list = json_array();
	struct sim_tags none = { 0 };
	int64_t offset, limit;
	size_t total = 0;
	char user[SIM_ID_MAX];

	if (ids && tc_get(c, "Filters")) {
		json_decref(list);
		return tc_fail(c, "InvalidParameter.Coexist",
			       "VpcIds and Filters cannot be specified at the same time.");
	}
	for (size_t i = 0; i < json_array_size(ids); i++)
		if (!gc_starts_with(json_string_value(json_array_get(ids, i)), "vpc-")) {
			json_decref(list);
			return tc_fail(c, "InvalidParameterValue.Malformed",
				       "The VPC id `%s` is malformed.",
				       json_string_value(json_array_get(ids, i)));
		}
	if (tc_check_filters(c, names, 10, 5) || tc_paging(c, 20, 100, &offset, &limit)) {
		json_decref(list);
		return -1;
	}
	sim_user_vpc(SIM_TENCENT, c->region, user);
	for (int k = 0; k < 2; k++) {
		bool dflt = k == 0;
		const char *id = dflt ? TC_DEFAULT_VPC : user,
			   *name = dflt ? "Default-VPC" : "user";
		const char *cidr = dflt ? "10.0.0.0/16" : "172.20.0.0/16";

		if ((dflt && c->sim->cfg.no_default_vpc) || (ids && !id_listed(ids, id)) ||
		    !tc_filter_ok(c, "vpc-id", id) || !tc_filter_ok(c, "vpc-name", name) ||
		    !tc_filter_ok(c, "is-default", dflt ? "true" : "false") ||
		    !tc_filter_ok(c, "cidr-block", cidr) || !tc_filter_tags(c, &none))
			continue;
		size_t pos = total++;
		if (pos < (size_t)offset || pos >= (size_t)(offset + limit))
			continue;
		json_array_append_new(
			list,
			json_pack("{s:s, s:s, s:s, s:b, s:b, s:s, s:b, s:[], s:s, s:s, "
				  "s:[], s:[]}",
				  "VpcName", name, "VpcId", id, "CidrBlock", cidr, "IsDefault",
				  dflt, "EnableMulticast", 0, "CreatedTime", "2026-01-01 00:00:00",
				  "EnableDhcp", 1, "DnsServerSet", "DomainName", "",
				  "DhcpOptionsId", "", "TagSet", "AssistantCidrSet"));
	}
	c->out = json_pack("{s:i, s:o}", "TotalCount", (int)total, "VpcSet", list);
	return 0;
}

static int describe_subnets(struct tc_call *c)
{
	static const char *const names[] = { "subnet-id",  "vpc-id",	  "cidr-block",
					     "is-default", "subnet-name", "zone",
					     "tag-key",	   "tag:",	  NULL };
	const struct sim_region *reg = sim_catalog_region(SIM_TENCENT, c->region);
	json_t *ids = tc_get(c, "SubnetIds"), *list;
	struct sim_tags none = { 0 };
	int64_t offset, limit;
	size_t total = 0;
	char user[SIM_ID_MAX];

	if (ids && tc_get(c, "Filters"))
		return tc_fail(c, "InvalidParameter.Coexist",
			       "SubnetIds and Filters cannot be specified at the same time.");
	for (size_t k = 0; k < json_array_size(ids); k++)
		if (!gc_starts_with(json_string_value(json_array_get(ids, k)), "subnet-"))
			return tc_fail(c, "InvalidParameterValue.Malformed",
				       "The subnet id `%s` is malformed.",
				       json_string_value(json_array_get(ids, k)));
	if (tc_check_filters(c, names, 10, 5) || tc_paging(c, 20, 100, &offset, &limit))
		return -1;
	list = json_array();
	sim_user_vpc(SIM_TENCENT, c->region, user);
	for (int k = c->sim->cfg.no_default_vpc; k < 2; k++) {
		bool dflt = k == 0;
		const char *vpc = dflt ? TC_DEFAULT_VPC : user;
		const char *name = dflt ? "Default-Subnet" : "user";
		size_t i = 0;

		for (const char *const *z = reg->zones; *z; z++, i++) {
			char id[SIM_ID_MAX], cidr[32];

			if (dflt)
				tc_default_subnet(*z, id);
			else
				sim_user_subnet(SIM_TENCENT, c->region, *z, id);
			snprintf(cidr, sizeof(cidr), "%s.%zu.0/20", dflt ? "10.0" : "172.20",
				 (i * 16) % 256);
			if ((ids && !id_listed(ids, id)) || !tc_filter_ok(c, "subnet-id", id) ||
			    !tc_filter_ok(c, "vpc-id", vpc) || !tc_filter_ok(c, "zone", *z) ||
			    !tc_filter_ok(c, "cidr-block", cidr) ||
			    !tc_filter_ok(c, "is-default", dflt ? "true" : "false") ||
			    !tc_filter_ok(c, "subnet-name", name) || !tc_filter_tags(c, &none))
				continue;
			size_t pos = total++;
			if (pos < (size_t)offset || pos >= (size_t)(offset + limit))
				continue;
			json_array_append_new(
				list,
				json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:s, s:s, s:s, s:i, s:s, "
					  "s:s, s:b, s:i, s:[]}",
					  "VpcId", vpc, "SubnetId", id, "SubnetName", name,
					  "CidrBlock", cidr, "IsDefault", dflt, "EnableBroadcast",
					  0, "Zone", *z, "RouteTableId", "rtb-gpucsim0",
					  "CreatedTime", "2026-01-01 00:00:00",
					  "AvailableIpAddressCount", 4093, "Ipv6CidrBlock", "",
					  "NetworkAclId", "", "IsRemoteVpcSnat", 0,
					  "TotalIpAddressCount", 4096, "TagSet"));
		}
	}
	c->out = json_pack("{s:i, s:o}", "TotalCount", (int)total, "SubnetSet", list);
	return 0;
}

const struct tc_action tc_vpc_actions[] = {
	{ "CreateSecurityGroup", create_security_group, s_create, true },
	{ "CreateSecurityGroupPolicies", create_policies, s_policies, true },
	{ "DescribeSecurityGroups", describe_security_groups, s_describe, true },
	{ "DescribeSecurityGroupPolicies", describe_policies, s_describe_policies, true },
	{ "DeleteSecurityGroupPolicies", delete_policies, s_policies, true },
	{ "DeleteSecurityGroup", delete_security_group, s_one, true },
	{ "DescribeVpcs", describe_vpcs, s_describe_vpcs, true },
	{ "DescribeSubnets", describe_subnets, s_describe_subnets, true },
	{ NULL, NULL, NULL, false },
};
