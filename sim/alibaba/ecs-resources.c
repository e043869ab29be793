/*
 * ecs-resources.c: the ECS actions on key pairs, security groups and tags:
 * ImportKeyPair, DescribeKeyPairs, DeleteKeyPairs, CreateSecurityGroup,
 * AuthorizeSecurityGroup (the flat form and Permissions.N.*), RevokeSecurityGroup,
 * DescribeSecurityGroups,
 * DescribeSecurityGroupAttribute, DeleteSecurityGroup, TagResources, UntagResources and
 * ListTagResources.
 *
 * Runs with the world lock held (see ecs.c). Alibaba key pairs are known by name, so a
 * key pair's id in the world is its name.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/cidr.h"
#include "core/str.h"
#include "sim/alibaba/ecs.h"

static int dry_run(struct ecs_call *c, bool *out)
{
	if (ecs_bool(c, "DryRun", false, out))
		return -1;
	if (*out)
		return ecs_fail(c, 400, "DryRunOperation",
				"Request validation has been passed with DryRun flag set.");
	return 0;
}

/* --- key pairs ----------------------------------------------------------------------- */

static int import_key_pair(struct ecs_call *c)
{
	const char *name, *body;
	struct sim_tags tags = { 0 };
	struct gc_error err;
	struct sim_keypair *kp;
	enum sim_key_kind kind;
	int rc = -1;

	if (ecs_need(c, "KeyPairName", &name) || ecs_need(c, "PublicKeyBody", &body) ||
	    ecs_tags(c, "Tag", &tags))
		goto out;
	if (!ecs_name_ok(name, "._:-")) {
		ecs_fail(c, 400, "InvalidKeyPairName.Malformed",
			 "The specified KeyPairName is not valid: 2 to 128 characters, starting "
			 "with a letter; letters, digits, '.', '_', ':' and '-'.");
		goto out;
	}
	if (sim_world_keypair(c->sim->world, SIM_ALIBABA, c->region, name)) {
		ecs_fail(c, 400, "KeyPair.AlreadyExist", "The key pair already exist: '%s'.", name);
		goto out;
	}
	gc_error_init(&err);
	if (sim_ssh_key_kind(body, &kind, &err) < 0) {
		ecs_fail(c, 400, "InvalidPublicKeyBody.Malformed",
			 "The specified PublicKeyBody is not a valid OpenSSH public key: %s.",
			 err.message);
		goto out;
	}
	/* ECS takes RSA, DSA and ECDSA keys only; Ed25519 is refused like a bad body. */
	if (kind != SIM_KEY_RSA && kind != SIM_KEY_DSA && kind != SIM_KEY_ECDSA) {
		ecs_fail(c, 400, "InvalidPublicKeyBody.Malformed",
			 "The specified PublicKeyBody is not valid: the key type is not supported, "
			 "use an rsa, dsa or ecdsa key.");
		goto out;
	}
	kp = sim_world_import_key(c->sim->world, SIM_ALIBABA, c->region, name, body, &tags, &err);
	if (!kp) {
		ecs_fail(c, 400, "InvalidPublicKeyBody.Malformed",
			 "The specified PublicKeyBody is not a valid OpenSSH public key: %s.",
			 err.message);
		goto out;
	}
	c->out = json_pack("{s:s, s:s}", "KeyPairName", kp->name, "KeyPairFingerPrint",
			   kp->fingerprint);
	rc = 0;
out:
	sim_tags_release(&tags);
	return rc;
}

static bool in_json_list(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
	{
		if (!strcmp(json_string_value(v), s))
			return true;
	}
	return false;
}

static int describe_key_pairs(struct ecs_call *c)
{
	struct sim_keypair **all = NULL;
	json_t *names = NULL, *list = json_array();
	uint64_t page, size;
	bool with_key;
	size_t n, total = 0;
	const char *name = ecs_get(c, "KeyPairName"), *fpr = ecs_get(c, "KeyPairFingerPrint");
	int rc = -1;

	if (ecs_json_ids(c, "KeyPairNames", 100, &names) ||
	    ecs_uint(c, "PageNumber", 1, UINT32_MAX, 1, &page) ||
	    ecs_uint(c, "PageSize", 1, 50, 10, &size) ||
	    ecs_bool(c, "IncludePublicKey", false, &with_key))
		goto out;
	n = sim_world_list_keys(c->sim->world, SIM_ALIBABA, c->region, &all);
	for (size_t i = 0; i < n; i++) {
		struct sim_keypair *kp = all[i];
		if (name && !ecs_wildcard(name, kp->name))
			continue;
		if (names && !in_json_list(names, kp->name))
			continue;
		if (fpr && strcmp(fpr, kp->fingerprint))
			continue;
		if (!ecs_tags_match(c, &kp->tags))
			continue;
		size_t pos = total++;
		if (pos < (page - 1) * size || pos >= page * size)
			continue;
		char created[32];
		ecs_format_time(kp->created_wall, false, created);
		json_t *o =
			json_pack("{s:s, s:s, s:s, s:s, s:o}", "KeyPairName", kp->name,
				  "KeyPairFingerPrint", kp->fingerprint, "CreationTime", created,
				  "ResourceGroupId", "", "Tags", ecs_tags_json(&kp->tags));
		if (with_key)
			json_object_set_new(o, "PublicKey", json_string(kp->public_key));
		json_array_append_new(list, o);
	}
	c->out = json_pack("{s:{s:o}, s:i, s:i, s:i}", "KeyPairs", "KeyPair", list, "TotalCount",
			   (int)total, "PageNumber", (int)page, "PageSize", (int)size);
	list = NULL;
	rc = 0;
out:
	json_decref(list);
	json_decref(names);
	free(all);
	return rc;
}

static int delete_key_pairs(struct ecs_call *c)
{
	json_t *names;
	size_t i;
	json_t *v;

	if (ecs_json_ids(c, "KeyPairNames", 100, &names))
		return -1;
	if (!names || !json_array_size(names)) {
		json_decref(names);
		return ecs_fail(c, 400, "MissingParameter",
				"The input parameter \"KeyPairNames\" that is mandatory for "
				"processing this request is not supplied.");
	}
	/* names that do not exist are skipped, as ECS does */
	json_array_foreach(names, i, v)
	{
		struct sim_keypair *kp = sim_world_keypair(c->sim->world, SIM_ALIBABA, c->region,
							   json_string_value(v));
		if (kp)
			sim_world_delete_key(c->sim->world, kp);
	}
	json_decref(names);
	c->out = json_object();
	return 0;
}

/* --- security groups ------------------------------------------------------------------- */

static struct sim_secgroup *find_sg(struct ecs_call *c, const char *id)
{
	struct sim_secgroup *sg = sim_world_sg(c->sim->world, SIM_ALIBABA, c->region, id);

	if (!sg)
		ecs_fail(c, 404, "InvalidSecurityGroupId.NotFound",
			 "The specified SecurityGroupId does not exist: '%s'.", id);
	return sg;
}

static int create_security_group(struct ecs_call *c)
{
	const char *name = ecs_get(c, "SecurityGroupName"), *desc = ecs_get(c, "Description");
	const char *vpc = ecs_get(c, "VpcId"), *type = ecs_get(c, "SecurityGroupType");
	struct sim_tags tags = { 0 };
	struct sim_secgroup *sg;
	bool dry;
	int rc = -1;

	if (ecs_tags(c, "Tag", &tags))
		goto out;
	if (name &&
	    (strlen(name) < 2 || strlen(name) > 128 || gc_starts_with(name, "http://") ||
	     gc_starts_with(name, "https://"))) {
		ecs_fail(c, 400, "InvalidSecurityGroupName.Malformed",
			 "The specified SecurityGroupName is not valid: 2 to 128 characters.");
		goto out;
	}
	if (desc && strlen(desc) > 256) {
		ecs_fail(c, 400, "InvalidDescription.Malformed",
			 "The specified Description is not valid: at most 256 characters.");
		goto out;
	}
	if (vpc && !ecs_vpc_exists(c, vpc)) {
		ecs_fail(c, 404, "InvalidVpcId.NotFound", "Specified VPC does not exist: '%s'.",
			 vpc);
		goto out;
	}
	if (type && strcmp(type, "normal") && strcmp(type, "enterprise")) {
		ecs_fail(c, 400, "InvalidSecurityGroupType.NotSupported",
			 "The specified SecurityGroupType is not valid: '%s'.", type);
		goto out;
	}
	if (dry_run(c, &dry))
		goto out;
	sg = sim_world_create_sg(c->sim->world, SIM_ALIBABA, c->region, name ? name : "",
				 desc ? desc : "", vpc ? vpc : "", &tags);
	/* a basic ("normal", the default) group lets its members talk over every protocol
	 * and port (InnerAccessPolicy Accept); an advanced one isolates them (Drop) */
	snprintf(sg->type, sizeof(sg->type), "%s", type ? type : "normal");
	sg->inner_accept = strcmp(sg->type, "enterprise") != 0;
	sg->ec_authorize = sg->ec_launch = c->sim->world->eventual; /* docs/sim.md */
	c->out = json_pack("{s:s}", "SecurityGroupId", sg->id);
	rc = 0;
out:
	sim_tags_release(&tags);
	return rc;
}

/* One rule from the parameters under prefix ("" for the flat form, "Permissions.N."). */
static int parse_rule(struct ecs_call *c, const char *prefix, struct sim_rule *rule)
{
	char name[96];
	const char *proto, *range, *cidr, *cidr6, *policy, *desc;
	struct gc_cidr block;

	memset(rule, 0, sizeof(*rule));
#define P(field) (snprintf(name, sizeof(name), "%s%s", prefix, field), ecs_get(c, name))
	proto = P("IpProtocol");
	range = P("PortRange");
	cidr = P("SourceCidrIp");
	cidr6 = P("Ipv6SourceCidrIp");
	policy = P("Policy");
	desc = P("Description");
#undef P
	if (!proto) {
		snprintf(name, sizeof(name), "%sIpProtocol", prefix);
		return ecs_fail(c, 400, "MissingParameter",
				"The input parameter \"%s\" that is mandatory for processing this "
				"request is not supplied.",
				name);
	}
	if (strcasecmp(proto, "tcp") && strcasecmp(proto, "udp") && strcasecmp(proto, "icmp") &&
	    strcasecmp(proto, "gre") && strcasecmp(proto, "all"))
		return ecs_fail(c, 400, "InvalidIpProtocol.Malformed",
				"The specified IpProtocol is not valid: '%s'.", proto);
	for (size_t i = 0; proto[i] && i + 1 < sizeof(rule->protocol); i++)
		rule->protocol[i] = (char)tolower((unsigned char)proto[i]);
	bool ports = !strcmp(rule->protocol, "tcp") || !strcmp(rule->protocol, "udp");
	if (!range)
		range = ports ? NULL : "-1/-1";
	if (!range)
		return ecs_fail(
			c, 400, "MissingParameter",
			"The input parameter \"PortRange\" that is mandatory for processing "
			"this request is not supplied.");
	const char *slash = strchr(range, '/');
	int64_t from, to;
	char left[16];
	if (!slash || (size_t)(slash - range) >= sizeof(left))
		goto bad_range;
	snprintf(left, sizeof(left), "%.*s", (int)(slash - range), range);
	if (gc_parse_i64(left, -1, 65535, &from) || gc_parse_i64(slash + 1, -1, 65535, &to))
		goto bad_range;
	if (ports ? (from < 1 || to < from) : (from != -1 || to != -1))
		goto bad_range;
	rule->from_port = (int)from;
	rule->to_port = (int)to;
	if (policy && strcasecmp(policy, "accept"))
		return ecs_fail(
			c, 400, "InvalidPolicy.Malformed",
			"The specified Policy is not supported by gpucluster-sim: only accept "
			"rules are modelled.");
	if (cidr && !*cidr)
		cidr = NULL;
	if (cidr6 && !*cidr6)
		cidr6 = NULL;
	if (!cidr && !cidr6)
		return ecs_fail(
			c, 400, "MissingParameter",
			"The input parameter \"SourceCidrIp\" that is mandatory for processing "
			"this request is not supplied (source groups are not modelled).");
	if (cidr && cidr6)
		return ecs_fail(
			c, 400, "InvalidParamter.Conflict",
			"SourceCidrIp and Ipv6SourceCidrIp cannot be set at the same time.");
	/* each family in its own field: an IPv6 block in SourceCidrIp is malformed */
	if (cidr && (gc_cidr_parse(&block, cidr) < 0 || block.family != GC_CIDR_IPV4))
		return ecs_fail(c, 400, "InvalidSourceCidrIp.Malformed",
				"The specified parameter \"SourceCidrIp\" is not valid.");
	if (cidr6 && (gc_cidr_parse(&block, cidr6) < 0 || block.family != GC_CIDR_IPV6))
		return ecs_fail(c, 400, "InvalidIpv6SourceCidrIp.Malformed",
				"The specified parameter \"Ipv6SourceCidrIp\" is not valid.");
	snprintf(rule->cidr, sizeof(rule->cidr), "%s", cidr ? cidr : "");
	snprintf(rule->cidr_ipv6, sizeof(rule->cidr_ipv6), "%s", cidr6 ? cidr6 : "");
	snprintf(rule->description, sizeof(rule->description), "%s", desc ? desc : "");
	return 0;
bad_range:
	return ecs_fail(c, 400, "InvalidPortRange.Malformed",
			"The specified PortRange is not valid: '%s'.", range);
}

static int authorize_security_group(struct ecs_call *c)
{
	const char *id;
	struct sim_secgroup *sg;
	struct sim_rule *rules = NULL;
	size_t n = 0;
	char prefix[32], name[64];
	bool dry;
	int rc = -1;

	if (ecs_need(c, "SecurityGroupId", &id) || !(sg = find_sg(c, id)))
		return -1;
	if (sim_ec_miss(&sg->ec_authorize)) /* eventual consistency: not known here yet */
		return ecs_fail(c, 404, "InvalidSecurityGroupId.NotFound",
				"The specified SecurityGroupId does not exist: '%s'.", id);
	rules = gc_xcalloc(101, sizeof(*rules));
	for (unsigned i = 1; i <= 100; i++) {
		snprintf(prefix, sizeof(prefix), "Permissions.%u.", i);
		bool any = false;
		for (size_t k = 0; k < c->params.n; k++)
			if (gc_starts_with(c->params.items[k].name, prefix))
				any = true;
		if (!any)
			continue;
		if (parse_rule(c, prefix, &rules[n++]))
			goto out;
	}
	snprintf(name, sizeof(name), "IpProtocol");
	if (ecs_get(c, name) || !n) {
		if (parse_rule(c, "", &rules[n++]))
			goto out;
	}
	if (dry_run(c, &dry))
		goto out;
	/* an identical rule is accepted again without a second copy */
	for (size_t i = 0; i < n; i++)
		(void)sim_world_add_rule(sg, &rules[i]);
	c->out = json_object();
	rc = 0;
out:
	free(rules);
	return rc;
}

/*
 * RevokeSecurityGroup, by SecurityGroupRuleId.N (an id that does not exist fails the
 * call: InvalidParam.SecurityGroupRuleId) or by Permissions.N (protocol, port range,
 * source and policy: a permission that matches no rule is no error, and nothing goes for
 * it), never both (ECS API reference, RevokeSecurityGroup, since July 2024).
 */
static int revoke_security_group(struct ecs_call *c)
{
	const char *id;
	struct sim_secgroup *sg;
	json_t *ids = NULL, *v;
	struct sim_rule *rules = NULL;
	bool *gone = NULL, dry;
	size_t n = 0, i;
	char prefix[32];
	int rc = -1;

	if (ecs_need(c, "SecurityGroupId", &id) || !(sg = find_sg(c, id)))
		return -1;
	ids = ecs_list(c, "SecurityGroupRuleId", 100);
	rules = gc_xcalloc(101, sizeof(*rules));
	for (unsigned k = 1; k <= 100; k++) {
		bool any = false;

		snprintf(prefix, sizeof(prefix), "Permissions.%u.", k);
		for (size_t p = 0; p < c->params.n; p++)
			any |= gc_starts_with(c->params.items[p].name, prefix);
		if (any && parse_rule(c, prefix, &rules[n++]))
			goto out;
	}
	if (json_array_size(ids) && n) {
		ecs_fail(c, 400, "InvalidParam.Conflict",
			 "SecurityGroupRuleId and Permissions cannot be specified at the same "
			 "time.");
		goto out;
	}
	if (!json_array_size(ids) && !n && parse_rule(c, "", &rules[n++]))
		goto out;
	gone = gc_xcalloc(sg->n_rules + 1, sizeof(*gone));
	json_array_foreach(ids, i, v)
	{
		bool found = false;

		for (size_t k = 0; k < sg->n_rules && !found; k++) {
			char rule_id[48];

			snprintf(rule_id, sizeof(rule_id), "sgr-%s-%zu", sg->id + 3, k + 1);
			if (!strcmp(rule_id, json_string_value(v)))
				found = gone[k] = true;
		}
		if (!found) {
			ecs_fail(c, 400, "InvalidParam.SecurityGroupRuleId",
				 "The specified SecurityGroupRuleId does not exist: '%s'.",
				 json_string_value(v));
			goto out;
		}
	}
	if (dry_run(c, &dry))
		goto out;
	for (size_t k = sg->n_rules; k-- > 0;)
		if (gone[k]) {
			memmove(&sg->rules[k], &sg->rules[k + 1],
				(sg->n_rules - k - 1) * sizeof(*sg->rules));
			sg->n_rules--;
		}
	for (i = 0; i < n; i++)
		(void)sim_world_remove_rule(sg, &rules[i]);
	c->out = json_object();
	rc = 0;
out:
	free(gone);
	free(rules);
	json_decref(ids);
	return rc;
}

static size_t ecs_count(struct ecs_call *c, const struct sim_secgroup *sg)
{
	struct sim_instance **all = NULL;
	size_t n = sim_world_list(c->sim->world, SIM_ALIBABA, sg->region, &all), count = 0;

	for (size_t i = 0; i < n; i++) {
		if (all[i]->state == SIM_TERMINATED)
			continue;
		for (size_t k = 0; k < all[i]->n_security_groups; k++)
			if (!strcmp(all[i]->security_groups[k], sg->id))
				count++;
	}
	free(all);
	return count;
}

static int describe_security_groups(struct ecs_call *c)
{
	struct sim_secgroup **all = NULL;
	json_t *ids = NULL, *list = json_array();
	const char *one = ecs_get(c, "SecurityGroupId"), *name = ecs_get(c, "SecurityGroupName");
	const char *vpc = ecs_get(c, "VpcId");
	bool token_mode = ecs_get(c, "MaxResults") || ecs_get(c, "NextToken"), dry;
	uint64_t max, page, size, after;
	size_t n, total = 0;
	char next[40] = "";
	int rc = -1;

	if (ecs_json_ids(c, "SecurityGroupIds", 100, &ids) ||
	    ecs_uint(c, "MaxResults", 1, 100, 10, &max) ||
	    ecs_uint(c, "PageNumber", 1, UINT32_MAX, 1, &page) ||
	    ecs_uint(c, "PageSize", 1, 50, 10, &size) || ecs_parse_next_token(c, &after) ||
	    dry_run(c, &dry))
		goto out;
	n = sim_world_list_sgs(c->sim->world, SIM_ALIBABA, c->region, &all);
	for (size_t i = 0; i < n; i++) {
		struct sim_secgroup *sg = all[i];
		if (one && strcmp(one, sg->id))
			continue;
		if (ids && !in_json_list(ids, sg->id))
			continue;
		if (name && !ecs_wildcard(name, sg->name))
			continue;
		if (vpc && strcmp(vpc, sg->vpc))
			continue;
		if (!ecs_tags_match(c, &sg->tags))
			continue;
		size_t pos = total++;
		if (token_mode) {
			/* the listing position (creation order) is the token */
			if (i < after)
				continue;
			if (json_array_size(list) == max) {
				if (!next[0])
					ecs_next_token(i, next);
				continue;
			}
		} else if (pos < (page - 1) * size || pos >= page * size) {
			continue;
		}
		char created[32];
		ecs_format_time(sg->created_wall, true, created);
		size_t ecs = ecs_count(c, sg);
		json_array_append_new(
			list,
			json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:s, s:b, s:o}",
				  "SecurityGroupId", sg->id, "SecurityGroupName", sg->name,
				  "Description", sg->description, "VpcId", sg->vpc, "CreationTime",
				  created, "SecurityGroupType", sg->type, "EcsCount", (int)ecs,
				  "AvailableInstanceAmount", (int)(2000 - ecs), "RuleCount",
				  (int)sg->n_rules, "ResourceGroupId", "", "ServiceManaged", 0,
				  "Tags", ecs_tags_json(&sg->tags)));
	}
	c->out = json_pack("{s:{s:o}, s:s, s:i}", "SecurityGroups", "SecurityGroup", list,
			   "RegionId", c->region, "TotalCount", (int)total);
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

static int describe_security_group_attribute(struct ecs_call *c)
{
	const char *id, *dir = ecs_get(c, "Direction");
	struct sim_secgroup *sg;
	json_t *perms;
	char created[32], next[40] = "";
	uint64_t max, after;

	/* pages of MaxResults (10..1000, 500 by default), the rule's position the token */
	if (ecs_need(c, "SecurityGroupId", &id) || !(sg = find_sg(c, id)) ||
	    ecs_uint(c, "MaxResults", 10, 1000, 500, &max) || ecs_parse_next_token(c, &after))
		return -1;
	perms = json_array();
	ecs_format_time(sg->created_wall, true, created);
	for (size_t i = after;
	     i < sg->n_rules && (!dir || !strcmp(dir, "all") || !strcmp(dir, "ingress")); i++) {
		if (json_array_size(perms) == max) {
			ecs_next_token(i, next);
			break;
		}
		const struct sim_rule *r = &sg->rules[i];
		char range[32], rule_id[48];
		snprintf(range, sizeof(range), "%d/%d", r->from_port, r->to_port);
		snprintf(rule_id, sizeof(rule_id), "sgr-%s-%zu", sg->id + 3, i + 1);
		json_array_append_new(
			perms,
			json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
				  "SecurityGroupRuleId", rule_id, "Direction", "ingress",
				  "IpProtocol", strcmp(r->protocol, "-1") ? r->protocol : "all",
				  "PortRange", range, "SourceCidrIp", r->cidr, "Ipv6SourceCidrIp",
				  r->cidr_ipv6, "DestCidrIp", "", "Policy", "Accept", "Priority",
				  "1", "NicType", "intranet", "Description", r->description,
				  "CreateTime", created));
	}
	c->out =
		json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:{s:o}}", "RegionId", c->region,
			  "SecurityGroupId", sg->id, "SecurityGroupName", sg->name, "Description",
			  sg->description, "VpcId", sg->vpc, "InnerAccessPolicy",
			  sg->inner_accept ? "Accept" : "Drop", "Permissions", "Permission", perms);
	if (next[0])
		json_object_set_new(c->out, "NextToken", json_string(next));
	return 0;
}

static int delete_security_group(struct ecs_call *c)
{
	const char *id;
	struct sim_secgroup *sg;

	if (ecs_need(c, "SecurityGroupId", &id) || !(sg = find_sg(c, id)))
		return -1;
	if (sim_world_sg_in_use(c->sim->world, sg))
		return ecs_fail(c, 403, "DependencyViolation",
				"There is still instance(s) in the specified security group: '%s'.",
				id);
	sim_world_delete_sg(c->sim->world, sg);
	c->out = json_object();
	return 0;
}

/* --- tags ------------------------------------------------------------------------------- */

/* The tags of a resource of the given ECS resource type, or NULL when there is none. */
static struct sim_tags *resource_tags(struct ecs_call *c, const char *type, const char *id)
{
	if (!strcmp(type, "instance")) {
		struct sim_instance *inst = sim_world_instance(c->sim->world, SIM_ALIBABA, id);
		if (inst && inst->state != SIM_TERMINATED && !strcmp(inst->region, c->region))
			return &inst->tags;
	} else if (!strcmp(type, "securitygroup")) {
		struct sim_secgroup *sg = sim_world_sg(c->sim->world, SIM_ALIBABA, c->region, id);
		if (sg)
			return &sg->tags;
	} else if (!strcmp(type, "keypair")) {
		struct sim_keypair *kp =
			sim_world_keypair(c->sim->world, SIM_ALIBABA, c->region, id);
		if (kp)
			return &kp->tags;
	}
	return NULL;
}

static int resource_type(struct ecs_call *c, const char **out)
{
	if (ecs_need(c, "ResourceType", out))
		return -1;
	if (strcmp(*out, "instance") && strcmp(*out, "securitygroup") && strcmp(*out, "keypair"))
		return ecs_fail(c, 400, "InvalidResourceType.NotFound",
				"The specified ResourceType is not supported: '%s' (instance, "
				"securitygroup and keypair are modelled).",
				*out);
	return 0;
}

/* The ResourceId.N list, each checked to exist. */
static int resource_ids(struct ecs_call *c, const char *type, bool required, json_t **out)
{
	json_t *ids = ecs_list(c, "ResourceId", 50);
	size_t i;
	json_t *v;

	*out = NULL;
	if (required && !json_array_size(ids)) {
		json_decref(ids);
		return ecs_fail(c, 400, "MissingParameter",
				"The input parameter \"ResourceId.N\" that is mandatory for "
				"processing this request is not supplied.");
	}
	json_array_foreach(ids, i, v)
	{
		if (!resource_tags(c, type, json_string_value(v))) {
			json_decref(ids);
			return ecs_fail(c, 404, "InvalidResourceId.NotFound",
					"The specified ResourceId does not exist: '%s'.",
					json_string_value(v));
		}
	}
	*out = ids;
	return 0;
}

static int tag_resources(struct ecs_call *c)
{
	const char *type;
	json_t *ids;
	struct sim_tags tags = { 0 };
	size_t i;
	json_t *v;

	if (resource_type(c, &type) || resource_ids(c, type, true, &ids))
		return -1;
	if (ecs_tags(c, "Tag", &tags)) {
		json_decref(ids);
		return -1;
	}
	if (!tags.n) {
		json_decref(ids);
		return ecs_fail(
			c, 400, "MissingParameter",
			"The input parameter \"Tag.N.Key\" that is mandatory for processing "
			"this request is not supplied.");
	}
	/* ECS counts the resource's total after the merge: check every one first */
	json_array_foreach(ids, i, v)
	{
		struct sim_tags *t = resource_tags(c, type, json_string_value(v));
		size_t total = t->n;
		for (size_t k = 0; k < tags.n; k++)
			total += !sim_tags_get(t, tags.items[k].key);
		if (total > 20) {
			sim_tags_release(&tags);
			json_decref(ids);
			return ecs_fail(
				c, 400, "InvalidTagCount",
				"The specified tags are beyond the permitted range: a resource "
				"has at most 20 tags.");
		}
	}
	json_array_foreach(ids, i, v)
	{
		struct sim_tags *t = resource_tags(c, type, json_string_value(v));
		for (size_t k = 0; k < tags.n; k++)
			sim_tags_set(t, tags.items[k].key, tags.items[k].value);
	}
	sim_tags_release(&tags);
	json_decref(ids);
	c->out = json_object();
	return 0;
}

static int untag_resources(struct ecs_call *c)
{
	const char *type;
	json_t *ids, *keys = ecs_list(c, "TagKey", 20);
	bool all;
	size_t i;
	json_t *v;

	if (ecs_bool(c, "All", false, &all) || resource_type(c, &type) ||
	    resource_ids(c, type, true, &ids)) {
		json_decref(keys);
		return -1;
	}
	json_array_foreach(ids, i, v)
	{
		struct sim_tags *t = resource_tags(c, type, json_string_value(v));
		if (all && !json_array_size(keys)) {
			sim_tags_release(t);
			continue;
		}
		size_t k;
		json_t *key;
		json_array_foreach(keys, k, key)
		{
			sim_tags_remove(t, json_string_value(key));
		}
	}
	json_decref(keys);
	json_decref(ids);
	c->out = json_object();
	return 0;
}

static void add_tag_rows(struct ecs_call *c, json_t *rows, const char *type, const char *id,
			 const struct sim_tags *t)
{
	if (!ecs_tags_match(c, t))
		return;
	for (size_t i = 0; i < t->n; i++)
		json_array_append_new(rows,
				      json_pack("{s:s, s:s, s:s, s:s}", "ResourceId", id,
						"ResourceType", type, "TagKey", t->items[i].key,
						"TagValue", t->items[i].value));
}

static int list_tag_resources(struct ecs_call *c)
{
	const char *type;
	json_t *ids, *rows = json_array(), *page = json_array();
	uint64_t after;
	char next[40] = "";

	if (resource_type(c, &type) || resource_ids(c, type, false, &ids) ||
	    ecs_parse_next_token(c, &after)) {
		json_decref(rows);
		json_decref(page);
		return -1;
	}
	if (json_array_size(ids)) {
		size_t i;
		json_t *v;
		json_array_foreach(ids, i, v)
		{
			const char *id = json_string_value(v);
			add_tag_rows(c, rows, type, id, resource_tags(c, type, id));
		}
	} else if (!strcmp(type, "instance")) {
		struct sim_instance **all = NULL;
		size_t n = sim_world_list(c->sim->world, SIM_ALIBABA, c->region, &all);
		for (size_t i = 0; i < n; i++)
			if (all[i]->state != SIM_TERMINATED)
				add_tag_rows(c, rows, type, all[i]->id, &all[i]->tags);
		free(all);
	} else if (!strcmp(type, "securitygroup")) {
		struct sim_secgroup **all = NULL;
		size_t n = sim_world_list_sgs(c->sim->world, SIM_ALIBABA, c->region, &all);
		for (size_t i = 0; i < n; i++)
			add_tag_rows(c, rows, type, all[i]->id, &all[i]->tags);
		free(all);
	} else {
		struct sim_keypair **all = NULL;
		size_t n = sim_world_list_keys(c->sim->world, SIM_ALIBABA, c->region, &all);
		for (size_t i = 0; i < n; i++)
			add_tag_rows(c, rows, type, all[i]->name, &all[i]->tags);
		free(all);
	}
	/* 50 rows a page, as ECS; the token is the row position */
	for (size_t i = after; i < json_array_size(rows); i++) {
		if (json_array_size(page) == 50) {
			ecs_next_token(i, next);
			break;
		}
		json_array_append(page, json_array_get(rows, i));
	}
	json_decref(rows);
	json_decref(ids);
	c->out =
		json_pack("{s:{s:o}, s:s}", "TagResources", "TagResource", page, "NextToken", next);
	return 0;
}

/* --- the table ---------------------------------------------------------------------------- */

static const struct ecs_param import_params[] = {
	{ "RegionId", 0 },
	{ "KeyPairName", 0 },
	{ "PublicKeyBody", 0 },
	{ "ResourceGroupId", 0 },
	{ "Tag.N.Key", 20 },
	{ "Tag.N.Value", 20 },
	{ NULL, 0 },
};

static const struct ecs_param describe_keys_params[] = {
	{ "RegionId", 0 },	     { "KeyPairName", 0 }, { "KeyPairNames", 0 },
	{ "KeyPairFingerPrint", 0 }, { "Tag.N.Key", 20 },  { "Tag.N.Value", 20 },
	{ "PageNumber", 0 },	     { "PageSize", 0 },	   { "ResourceGroupId", 0 },
	{ "IncludePublicKey", 0 },   { NULL, 0 },
};

static const struct ecs_param delete_keys_params[] = {
	{ "RegionId", 0 },
	{ "KeyPairNames", 0 },
	{ NULL, 0 },
};

static const struct ecs_param create_sg_params[] = {
	{ "RegionId", 0 },
	{ "VpcId", 0 },
	{ "SecurityGroupName", 0 },
	{ "Description", 0 },
	{ "SecurityGroupType", 0 },
	{ "ClientToken", 0 },
	{ "Tag.N.Key", 20 },
	{ "Tag.N.Value", 20 },
	{ "ResourceGroupId", 0 },
	{ "ServiceManaged", 0 },
	{ "DryRun", 0 },
	{ NULL, 0 },
};

/* the rule parameters AuthorizeSecurityGroup and RevokeSecurityGroup share */
#define RULE_PARAMS                                                                              \
	{ "RegionId", 0 }, { "SecurityGroupId", 0 }, { "IpProtocol", 0 }, { "PortRange", 0 },    \
		{ "SourceCidrIp", 0 }, { "Ipv6SourceCidrIp", 0 }, { "SourcePortRange", 0 },      \
		{ "DestCidrIp", 0 }, { "Policy", 0 }, { "Priority", 0 }, { "NicType", 0 },       \
		{ "Description", 0 }, { "ClientToken", 0 }, { "Permissions.N.IpProtocol", 100 }, \
		{ "Permissions.N.PortRange", 100 }, { "Permissions.N.SourceCidrIp", 100 },       \
		{ "Permissions.N.Ipv6SourceCidrIp", 100 },                                       \
		{ "Permissions.N.SourcePortRange", 100 }, { "Permissions.N.DestCidrIp", 100 },   \
		{ "Permissions.N.Policy", 100 }, { "Permissions.N.Priority", 100 },              \
		{ "Permissions.N.NicType", 100 }, { "Permissions.N.Description", 100 },          \
	{                                                                                        \
		"DryRun", 0                                                                      \
	}

static const struct ecs_param authorize_params[] = { RULE_PARAMS, { NULL, 0 } };
static const struct ecs_param revoke_params[] = { RULE_PARAMS,
						  { "SecurityGroupRuleId.N", 100 },
						  { NULL, 0 } };

static const struct ecs_param describe_sgs_params[] = {
	{ "RegionId", 0 },
	{ "SecurityGroupId", 0 },
	{ "SecurityGroupIds", 0 },
	{ "SecurityGroupName", 0 },
	{ "VpcId", 0 },
	{ "Tag.N.Key", 20 },
	{ "Tag.N.Value", 20 },
	{ "MaxResults", 0 },
	{ "NextToken", 0 },
	{ "PageNumber", 0 },
	{ "PageSize", 0 },
	{ "NetworkType", 0 },
	{ "SecurityGroupType", 0 },
	{ "ResourceGroupId", 0 },
	{ "FuzzyQuery", 0 },
	{ "IsQueryEcsCount", 0 },
	{ "ServiceManaged", 0 },
	{ "DryRun", 0 },
	{ NULL, 0 },
};

static const struct ecs_param sg_attr_params[] = {
	{ "RegionId", 0 },   { "SecurityGroupId", 0 }, { "Direction", 0 }, { "NicType", 0 },
	{ "MaxResults", 0 }, { "NextToken", 0 },       { NULL, 0 },
};

static const struct ecs_param delete_sg_params[] = {
	{ "RegionId", 0 },
	{ "SecurityGroupId", 0 },
	{ NULL, 0 },
};

static const struct ecs_param tag_params[] = {
	{ "RegionId", 0 },   { "ResourceType", 0 }, { "ResourceId.N", 50 },
	{ "Tag.N.Key", 20 }, { "Tag.N.Value", 20 }, { NULL, 0 },
};

static const struct ecs_param untag_params[] = {
	{ "RegionId", 0 },  { "ResourceType", 0 }, { "ResourceId.N", 50 },
	{ "TagKey.N", 20 }, { "All", 0 },	   { NULL, 0 },
};

static const struct ecs_param list_tags_params[] = {
	{ "RegionId", 0 },   { "ResourceType", 0 }, { "ResourceId.N", 50 },
	{ "Tag.N.Key", 20 }, { "Tag.N.Value", 20 }, { "NextToken", 0 },
	{ NULL, 0 },
};

const struct ecs_action ecs_resource_actions[] = {
	{ "ImportKeyPair", import_key_pair, import_params, true },
	{ "DescribeKeyPairs", describe_key_pairs, describe_keys_params, true },
	{ "DeleteKeyPairs", delete_key_pairs, delete_keys_params, true },
	{ "CreateSecurityGroup", create_security_group, create_sg_params, true },
	{ "AuthorizeSecurityGroup", authorize_security_group, authorize_params, true },
	{ "RevokeSecurityGroup", revoke_security_group, revoke_params, true },
	{ "DescribeSecurityGroups", describe_security_groups, describe_sgs_params, true },
	{ "DescribeSecurityGroupAttribute", describe_security_group_attribute, sg_attr_params,
	  true },
	{ "DeleteSecurityGroup", delete_security_group, delete_sg_params, true },
	{ "TagResources", tag_resources, tag_params, true },
	{ "UntagResources", untag_resources, untag_params, true },
	{ "ListTagResources", list_tag_resources, list_tags_params, true },
	{ NULL, NULL, NULL, false },
};
