/*
 * ec2-resources.c: EC2's tags (CreateTags, DeleteTags on instances, key pairs and
 * security groups), key pairs (ImportKeyPair, DescribeKeyPairs, DeleteKeyPair) and
 * security groups (create, authorize and revoke ingress, describe, delete). Called by ec2.c with
 * the world locked.
 */
#include <libxml/xmlwriter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/cidr.h"
#include "core/hash.h"
#include "core/str.h"
#include "sim/aws/aws.h"
#include "sim/aws/ec2.h"
#include "sim/catalog.h"

/* --- tags ----------------------------------------------------------------------------- */

/* The tags of a resource of this region by id, or NULL with the error set. */
static struct sim_tags *resource_tags(struct ec2 *c, const char *id)
{
	struct sim_world *w = c->sim->world;

	if (gc_starts_with(id, "i-")) {
		struct sim_instance *in = ec2_id_ok(id, "i-") ? ec2_find_instance(c, id) : NULL;
		if (in)
			return &in->tags;
		EC2_FAIL400(c, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist",
			    id);
	} else if (gc_starts_with(id, "sg-")) {
		struct sim_secgroup *g = sim_world_sg(w, SIM_AWS, c->region, id);
		if (g)
			return &g->tags;
		EC2_FAIL400(c, "InvalidGroup.NotFound", "The security group '%s' does not exist",
			    id);
	} else if (gc_starts_with(id, "key-")) {
		struct sim_keypair *k = sim_world_keypair(w, SIM_AWS, c->region, id);
		if (k && strcmp(k->id, id) == 0)
			return &k->tags;
		EC2_FAIL400(c, "InvalidKeyPair.NotFound", "The key pair '%s' does not exist", id);
	} else {
		EC2_FAIL400(c, "InvalidID", "The ID '%s' is not valid", id);
	}
	return NULL;
}

static int tags_action(struct ec2 *c, bool create)
{
	const char **ids = NULL;
	size_t n = ec2_list(c, "Resource", &ids);
	struct sim_tags **targets = NULL;
	struct sim_tags tags = { 0 };
	unsigned *idx = NULL;
	size_t n_tags;
	int ret = -1;

	if (!n) {
		EC2_FAIL400(c, "MissingParameter",
			    "The request must contain the parameter ResourceId");
		goto out;
	}
	n_tags = ec2_indexes(c, "Tag", &idx);
	if (create && !n_tags) {
		EC2_FAIL400(c, "MissingParameter", "The request must contain the parameter Tag");
		goto out;
	}
	targets = gc_xcalloc(n, sizeof(*targets));
	for (size_t i = 0; i < n; i++)
		if (!(targets[i] = resource_tags(c, ids[i])))
			goto out;
	if (create) {
		if (ec2_read_tags(c, "Tag", &tags) != 0)
			goto out;
		for (size_t i = 0; i < n; i++) {
			size_t fresh = 0;
			for (size_t k = 0; k < tags.n; k++)
				fresh += sim_tags_get(targets[i], tags.items[k].key) == NULL;
			if (targets[i]->n + fresh > EC2_MAX_TAGS) {
				EC2_FAIL400(c, "TagLimitExceeded",
					    "The maximum number of tags (%d) for resource '%s' has "
					    "been exceeded",
					    EC2_MAX_TAGS, ids[i]);
				goto out;
			}
		}
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < tags.n; k++)
				sim_tags_set(targets[i], tags.items[k].key, tags.items[k].value);
	} else {
		for (size_t i = 0; i < n; i++) {
			if (!n_tags) {
				while (targets[i]->n)
					sim_tags_remove(targets[i], targets[i]->items[0].key);
				continue;
			}
			for (size_t k = 0; k < n_tags; k++) {
				const char *key = ec2_paramf(c, "Tag.%u.Key", idx[k]);
				const char *val = ec2_paramf(c, "Tag.%u.Value", idx[k]);
				const char *cur = key ? sim_tags_get(targets[i], key) : NULL;
				/* with a value given, only a tag holding that value goes */
				if (cur && (!val || strcmp(cur, val) == 0))
					sim_tags_remove(targets[i], key);
			}
		}
	}
	ec2_begin(c);
	ec2_el(c, "return", "true");
	ret = ec2_finish(c);
out:
	free(ids);
	free(idx);
	free(targets);
	sim_tags_release(&tags);
	return ret;
}

static int create_tags(struct ec2 *c)
{
	return tags_action(c, true);
}

static int delete_tags(struct ec2 *c)
{
	return tags_action(c, false);
}

/* --- key pairs ------------------------------------------------------------------------ */

static void write_key(struct ec2 *c, const struct sim_keypair *k, bool with_public)
{
	char t[32];

	ec2_iso_time(k->created_wall, t);
	ec2_el(c, "keyPairId", k->id);
	ec2_el(c, "keyType", gc_starts_with(k->public_key, "ssh-rsa") ? "rsa" : "ed25519");
	ec2_write_tags(c, &k->tags);
	ec2_el(c, "keyName", k->name);
	ec2_el(c, "keyFingerprint", k->fingerprint);
	ec2_el(c, "createTime", t);
	if (with_public)
		ec2_el(c, "publicKey", k->public_key);
}

static int import_key_pair(struct ec2 *c)
{
	static const char *const types[] = { "key-pair", NULL };
	const char *name, *material;
	struct gc_buf line = GC_BUF_INIT(16384);
	struct sim_tags tags = { 0 };
	struct sim_keypair *k;
	struct gc_error err;
	int ret = -1;

	gc_error_init(&err);
	if (ec2_require(c, "KeyName", &name) || ec2_require(c, "PublicKeyMaterial", &material))
		goto out;
	if (strlen(name) > 255) {
		ec2_bad_value(c, "KeyName", name);
		goto out;
	}
	if (ec2_tag_specs(c, types, "key-pair", &tags) != 0)
		goto out;
	if (gc_base64_decode(&line, material, strlen(material)) != 0 ||
	    memchr(line.data, '\0', line.len)) {
		EC2_FAIL400(c, "InvalidKey.Format",
			    "Key is not in valid OpenSSH public key format");
		goto out;
	}
	while (line.len && (line.data[line.len - 1] == '\n' || line.data[line.len - 1] == '\r'))
		gc_buf_truncate(&line, line.len - 1);
	k = sim_world_keypair(c->sim->world, SIM_AWS, c->region, name);
	if (k && strcmp(k->name, name) == 0) {
		EC2_FAIL400(c, "InvalidKeyPair.Duplicate", "The keypair '%s' already exists.",
			    name);
		goto out;
	}
	k = sim_world_import_key(c->sim->world, SIM_AWS, c->region, name, line.data, &tags, &err);
	if (!k) {
		EC2_FAIL400(c, "InvalidKey.Format",
			    "Key is not in valid OpenSSH public key format");
		goto out;
	}
	k->ec_launch = c->sim->world->eventual; /* docs/sim.md */
	ec2_begin(c);
	ec2_el(c, "keyFingerprint", k->fingerprint);
	ec2_el(c, "keyName", k->name);
	ec2_el(c, "keyPairId", k->id);
	ec2_write_tags(c, &k->tags);
	ret = ec2_finish(c);
out:
	gc_buf_release(&line);
	sim_tags_release(&tags);
	return ret;
}

static const char *const key_filters[] = { "tag:",	  "tag-key",	 "tag-value", "key-name",
					   "key-pair-id", "fingerprint", "key-type",  NULL };

static bool key_matches(const struct sim_keypair *k, const struct ec2_filters *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct ec2_filter *f = &fs->f[i];
		bool m = false;

		if (ec2_is_tag_filter(f->name))
			m = ec2_tag_filter(f, &k->tags);
		else if (!strcmp(f->name, "key-name"))
			m = ec2_any_value(f, k->name);
		else if (!strcmp(f->name, "key-pair-id"))
			m = ec2_any_value(f, k->id);
		else if (!strcmp(f->name, "fingerprint"))
			m = ec2_any_value(f, k->fingerprint);
		else if (!strcmp(f->name, "key-type"))
			m = ec2_any_value(
				f, gc_starts_with(k->public_key, "ssh-rsa") ? "rsa" : "ed25519");
		if (!m)
			return false;
	}
	return true;
}

static int describe_key_pairs(struct ec2 *c)
{
	const char **names = NULL, **kids = NULL;
	size_t nn = ec2_list(c, "KeyName", &names), ni = ec2_list(c, "KeyPairId", &kids), n;
	struct sim_keypair **all = NULL;
	struct ec2_filters fs = { 0 };
	bool with_public;
	int ret = -1;

	if (ec2_bool(c, "IncludePublicKey", false, &with_public) ||
	    ec2_get_filters(c, key_filters, &fs))
		goto out;
	n = sim_world_list_keys(c->sim->world, SIM_AWS, c->region, &all);
	for (size_t i = 0; i < nn + ni; i++) {
		const char *want = i < nn ? names[i] : kids[i - nn];
		bool found = false;
		for (size_t k = 0; k < n && !found; k++)
			found = strcmp(i < nn ? all[k]->name : all[k]->id, want) == 0;
		if (!found) {
			if (i < nn)
				EC2_FAIL400(c, "InvalidKeyPair.NotFound",
					    "The key pair '%s' does not exist", want);
			else
				EC2_FAIL400(c, "InvalidKeyPair.NotFound",
					    "The key pair ID '%s' does not exist", want);
			goto out;
		}
	}
	ec2_begin(c);
	ec2_open(c, "keySet");
	for (size_t k = 0; k < n; k++) {
		bool wanted = nn + ni == 0;
		for (size_t i = 0; i < nn; i++)
			wanted = wanted || strcmp(all[k]->name, names[i]) == 0;
		for (size_t i = 0; i < ni; i++)
			wanted = wanted || strcmp(all[k]->id, kids[i]) == 0;
		if (!wanted || !key_matches(all[k], &fs))
			continue;
		ec2_open(c, "item");
		write_key(c, all[k], with_public);
		ec2_close(c);
	}
	ec2_close(c);
	ret = ec2_finish(c);
out:
	free(names);
	free(kids);
	free(all);
	ec2_filters_release(&fs);
	return ret;
}

static int delete_key_pair(struct ec2 *c)
{
	const char *name = ec2_param(c, "KeyName"), *id = ec2_param(c, "KeyPairId");
	struct sim_keypair *k = NULL;
	char kid[SIM_ID_MAX] = "";

	if (!name && !id)
		return EC2_FAIL400(c, "MissingParameter",
				   "The request must contain the parameter KeyName or KeyPairId");
	if (id) {
		k = sim_world_keypair(c->sim->world, SIM_AWS, c->region, id);
		if (k && strcmp(k->id, id) != 0)
			k = NULL;
		if (!k)
			return EC2_FAIL400(c, "InvalidKeyPair.NotFound",
					   "The key pair ID '%s' does not exist", id);
	} else {
		k = sim_world_keypair(c->sim->world, SIM_AWS, c->region, name);
		if (k && strcmp(k->name, name) != 0)
			k = NULL;
	}
	/* deleting an absent key by name succeeds: EC2 treats it as done */
	if (k) {
		snprintf(kid, sizeof(kid), "%s", k->id);
		sim_world_delete_key(c->sim->world, k);
	}
	ec2_begin(c);
	ec2_el(c, "return", "true");
	if (kid[0])
		ec2_el(c, "keyPairId", kid);
	return ec2_finish(c);
}

/* --- security groups ------------------------------------------------------------------ */

static struct sim_secgroup *sg_by_name(struct ec2 *c, const char *name, const char *vpc)
{
	struct sim_secgroup **all, *g = NULL;
	size_t n = sim_world_list_sgs(c->sim->world, SIM_AWS, c->region, &all);

	for (size_t i = 0; i < n && !g; i++)
		if (strcmp(all[i]->name, name) == 0 && (!vpc || strcmp(all[i]->vpc, vpc) == 0))
			g = all[i];
	free(all);
	return g;
}

static int create_security_group(struct ec2 *c)
{
	static const char *const types[] = { "security-group", NULL };
	const char *name, *desc, *vpc = ec2_param(c, "VpcId");
	struct sim_tags tags = { 0 };
	struct sim_secgroup *g;
	int ret = -1;

	if (ec2_require(c, "GroupName", &name) || ec2_require(c, "GroupDescription", &desc))
		goto out;
	if (strlen(name) > 255 || gc_starts_with(name, "sg-")) {
		EC2_FAIL400(
			c, "InvalidParameterValue",
			"Invalid value '%s' for GroupName: it must be at most 255 characters and "
			"must not start with sg-",
			name);
		goto out;
	}
	if (strlen(desc) > 255) {
		ec2_bad_value(c, "GroupDescription", desc);
		goto out;
	}
	if (vpc && !ec2_vpc_exists(c, vpc)) {
		EC2_FAIL400(c, "InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", vpc);
		goto out;
	}
	/* without a default VPC, as users of such accounts report it (emulator.md) */
	if (!vpc && c->sim->cfg.no_default_vpc) {
		EC2_FAIL400(c, "VPCIdNotSpecified", "No default VPC for this user");
		goto out;
	}
	if (!vpc)
		vpc = EC2_DEFAULT_VPC;
	if (ec2_tag_specs(c, types, "security-group", &tags) != 0)
		goto out;
	if (sg_by_name(c, name, vpc)) {
		EC2_FAIL400(c, "InvalidGroup.Duplicate",
			    "The security group '%s' already exists for VPC '%s'", name, vpc);
		goto out;
	}
	g = sim_world_create_sg(c->sim->world, SIM_AWS, c->region, name, desc, vpc, &tags);
	g->ec_authorize = g->ec_launch = c->sim->world->eventual; /* docs/sim.md */
	ec2_begin(c);
	ec2_el(c, "return", "true");
	ec2_el(c, "groupId", g->id);
	ec2_write_tags(c, &g->tags);
	ret = ec2_finish(c);
out:
	sim_tags_release(&tags);
	return ret;
}

static struct sim_secgroup *sg_from_params(struct ec2 *c)
{
	const char *id = ec2_param(c, "GroupId"), *name = ec2_param(c, "GroupName");
	struct sim_secgroup *g;

	if (!id && !name) {
		EC2_FAIL400(c, "MissingParameter",
			    "The request must contain the parameter GroupId");
		return NULL;
	}
	g = id ? sim_world_sg(c->sim->world, SIM_AWS, c->region, id) : sg_by_name(c, name, NULL);
	if (!g) {
		if (id)
			EC2_FAIL400(c, "InvalidGroup.NotFound",
				    "The security group '%s' does not exist", id);
		else
			EC2_FAIL400(c, "InvalidGroup.NotFound",
				    "The security group '%s' does not exist in default VPC '%s'",
				    name, EC2_DEFAULT_VPC);
	}
	return g;
}

static bool cidr_ok(const char *s)
{
	unsigned a, b, cc, d, n;
	char tail;

	if (sscanf(s, "%3u.%3u.%3u.%3u/%2u%c", &a, &b, &cc, &d, &n, &tail) != 5)
		return false;
	return a < 256 && b < 256 && cc < 256 && d < 256 && n <= 32;
}

/* An IPv6 block as EC2's Ipv6Ranges take it (an IPv4 one there is malformed too). */
static bool cidr6_ok(const char *s)
{
	struct gc_cidr c;

	return gc_cidr_parse(&c, s) == 0 && c.family == GC_CIDR_IPV6;
}

static const char *norm_protocol(const char *p)
{
	if (!strcmp(p, "tcp") || !strcmp(p, "6"))
		return "tcp";
	if (!strcmp(p, "udp") || !strcmp(p, "17"))
		return "udp";
	if (!strcmp(p, "icmp") || !strcmp(p, "1"))
		return "icmp";
	if (!strcmp(p, "-1") || !strcmp(p, "all"))
		return "-1";
	return NULL;
}

static bool same_rule(const struct sim_rule *a, const struct sim_rule *b)
{
	return !strcmp(a->protocol, b->protocol) && a->from_port == b->from_port &&
		a->to_port == b->to_port && !strcmp(a->cidr, b->cidr) &&
		!strcmp(a->cidr_ipv6, b->cidr_ipv6) && !strcmp(a->source_group, b->source_group);
}

/*
 * The security group that IpPermissions.N.Groups.M names as a source, or NULL with the
 * error answered. EC2 finds it by GroupId (or, in the default VPC, GroupName); the
 * emulator has one account, so a UserId other than it names nothing that exists.
 */
static const struct sim_secgroup *source_group(struct ec2 *c, const struct sim_secgroup *target,
					       const char *pre, unsigned m)
{
	const char *id = ec2_paramf(c, "%sGroups.%u.GroupId", pre, m);
	const char *name = ec2_paramf(c, "%sGroups.%u.GroupName", pre, m);
	const char *user = ec2_paramf(c, "%sGroups.%u.UserId", pre, m);
	const struct sim_secgroup *g;

	if (!id && !name) {
		EC2_FAIL400(c, "MissingParameter",
			    "The request must contain the parameter %sGroups.%u.GroupId", pre, m);
		return NULL;
	}
	g = id ? sim_world_sg(c->sim->world, SIM_AWS, c->region, id)
	       : sg_by_name(c, name, EC2_DEFAULT_VPC);
	if (!g || (user && strcmp(user, c->sim->cfg.aws_account) != 0)) {
		if (id)
			EC2_FAIL400(c, "InvalidGroup.NotFound",
				    "The security group '%s' does not exist", id);
		else
			EC2_FAIL400(c, "InvalidGroup.NotFound",
				    "The security group '%s' does not exist in default VPC '%s'",
				    name, EC2_DEFAULT_VPC);
		return NULL;
	}
	if (target && strcmp(g->vpc, target->vpc) != 0) {
		EC2_FAIL400(c, "InvalidGroup.NotFound",
			    "You have specified two resources that belong to different networks.");
		return NULL;
	}
	return g;
}

static void push_rule(struct sim_rule **rules, size_t *n, const char *proto, int64_t from,
		      int64_t to, const char *cidr, const char *group, const char *desc)
{
	struct sim_rule r;

	memset(&r, 0, sizeof(r));
	snprintf(r.protocol, sizeof(r.protocol), "%s", proto);
	r.from_port = (int)from;
	r.to_port = (int)to;
	/* read_permissions checked each range against its list: a ':' is an IPv6 one */
	if (cidr && strchr(cidr, ':'))
		snprintf(r.cidr_ipv6, sizeof(r.cidr_ipv6), "%s", cidr);
	else
		snprintf(r.cidr, sizeof(r.cidr), "%s", cidr ? cidr : "");
	snprintf(r.source_group, sizeof(r.source_group), "%s", group ? group : "");
	snprintf(r.description, sizeof(r.description), "%s", desc ? desc : "");
	*rules = gc_xreallocarray(*rules, *n + 1, sizeof(**rules));
	(*rules)[(*n)++] = r;
}

/*
 * IpPermissions.N (or, for ingress, the flat legacy IpProtocol/FromPort/ToPort/CidrIp)
 * into rules, one per source: each IpRanges.M.CidrIp and each Groups.M (a security group,
 * whose members are the source; target is the group being changed).
 */
static int read_permissions(struct ec2 *c, const struct sim_secgroup *target, struct sim_rule **out,
			    size_t *n_out)
{
	unsigned *idx;
	size_t n = ec2_indexes(c, "IpPermissions", &idx);
	struct sim_rule *rules = NULL;
	size_t nr = 0;
	bool legacy = n == 0 && ec2_param(c, "IpProtocol");
	int ret = -1;

	for (size_t i = 0; i < (legacy ? 1 : n); i++) {
		char pre[64], name[128];
		const char *proto_raw, *proto;
		int64_t from = -1, to = -1;
		bool has_from, has_to;
		unsigned *mi;
		size_t nm;

		if (legacy)
			pre[0] = '\0';
		else
			snprintf(pre, sizeof(pre), "IpPermissions.%u.", idx[i]);
		snprintf(name, sizeof(name), "%sIpProtocol", pre);
		proto_raw = ec2_param(c, name);
		if (!proto_raw) {
			EC2_FAIL400(c, "MissingParameter",
				    "The request must contain the parameter %s", name);
			goto out;
		}
		proto = norm_protocol(proto_raw);
		if (!proto) {
			EC2_FAIL400(c, "InvalidParameterValue",
				    "Invalid value '%s' for IP protocol. Unknown protocol.",
				    proto_raw);
			goto out;
		}
		snprintf(name, sizeof(name), "%sFromPort", pre);
		if (ec2_int(c, name, -1, 65535, &from, &has_from))
			goto out;
		snprintf(name, sizeof(name), "%sToPort", pre);
		if (ec2_int(c, name, -1, 65535, &to, &has_to))
			goto out;
		if ((!strcmp(proto, "tcp") || !strcmp(proto, "udp")) &&
		    (!has_from || !has_to || from < 0 || to < from)) {
			EC2_FAIL400(c, "InvalidParameterValue",
				    "Invalid port range (%lld..%lld) for protocol %s",
				    (long long)from, (long long)to, proto);
			goto out;
		}
		/* -1 is every protocol on every port, whatever range was given */
		if (!strcmp(proto, "-1"))
			from = to = -1;
		if (legacy) {
			const char *one = ec2_param(c, "CidrIp");
			if (one && !cidr_ok(one)) {
				EC2_FAIL400(c, "InvalidParameterValue",
					    "CIDR block %s is malformed", one);
				goto out;
			}
			if (one)
				push_rule(&rules, &nr, proto, from, to, one, NULL, NULL);
			continue;
		}
		/* IpRanges.N.CidrIp takes IPv4 only, Ipv6Ranges.N.CidrIpv6 IPv6 only */
		for (int six = 0; six < 2; six++) {
			const char *ranges = six ? "Ipv6Ranges" : "IpRanges";

			snprintf(name, sizeof(name), "%s%s", pre, ranges);
			nm = ec2_indexes(c, name, &mi);
			for (size_t k = 0; k < nm; k++) {
				const char *cidr = ec2_paramf(c, "%s%s.%u.%s", pre, ranges, mi[k],
							      six ? "CidrIpv6" : "CidrIp");
				if (!cidr || !(six ? cidr6_ok(cidr) : cidr_ok(cidr))) {
					EC2_FAIL400(c, "InvalidParameterValue",
						    "CIDR block %s is malformed",
						    cidr ? cidr : "(missing)");
					free(mi);
					goto out;
				}
				push_rule(&rules, &nr, proto, from, to, cidr, NULL,
					  ec2_paramf(c, "%s%s.%u.Description", pre, ranges, mi[k]));
			}
			free(mi);
		}
		snprintf(name, sizeof(name), "%sGroups", pre);
		nm = ec2_indexes(c, name, &mi);
		for (size_t k = 0; k < nm; k++) {
			const struct sim_secgroup *g = source_group(c, target, pre, mi[k]);
			if (!g) {
				free(mi);
				goto out;
			}
			push_rule(&rules, &nr, proto, from, to, NULL, g->id,
				  ec2_paramf(c, "%sGroups.%u.Description", pre, mi[k]));
		}
		free(mi);
	}
	if (!nr) {
		EC2_FAIL400(c, "MissingParameter",
			    "The request must contain the parameter IpPermissions");
		goto out;
	}
	*out = rules;
	*n_out = nr;
	rules = NULL;
	ret = 0;
out:
	free(idx);
	free(rules);
	return ret;
}

static void write_rule_text(char *out, size_t size, const struct sim_rule *r)
{
	char proto[16];

	snprintf(proto, sizeof(proto), "%s", r->protocol);
	for (char *p = proto; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	snprintf(out, size, "peer: %s, %s, from port: %d, to port: %d, ALLOW",
		 r->source_group[0]	   ? r->source_group
			 : r->cidr_ipv6[0] ? r->cidr_ipv6
					   : r->cidr,
		 proto, r->from_port, r->to_port);
}

/* EC2's default egress rule: every group has it from its creation (EC2 User Guide,
 * "Security group rules": "a default outbound rule that allows all outbound traffic"). */
static const struct sim_rule default_egress = {
	.protocol = "-1", .from_port = -1, .to_port = -1, .cidr = "0.0.0.0/0"
};

/*
 * AuthorizeSecurityGroupIngress, or with egress AuthorizeSecurityGroupEgress (GroupId and
 * IpPermissions only: its parameter list refuses GroupName and the flat legacy form): a
 * rule the group has, or one given twice, is InvalidPermission.Duplicate and nothing is
 * added.
 */
static int authorize_rules(struct ec2 *c, bool egress)
{
	struct sim_secgroup *g = sg_from_params(c);
	struct sim_rule *rules = NULL;
	size_t n = 0;

	if (!g || read_permissions(c, g, &rules, &n) != 0)
		return -1;
	if (sim_ec_miss(&g->ec_authorize)) { /* eventual consistency: not known here yet */
		free(rules);
		return EC2_FAIL400(c, "InvalidGroup.NotFound",
				   "The security group '%s' does not exist", g->id);
	}
	for (size_t i = 0; i < n; i++) {
		bool dup = egress && same_rule(&default_egress, &rules[i]);
		const struct sim_rule *have = egress ? g->egress : g->rules;
		for (size_t k = 0; k < (egress ? g->n_egress : g->n_rules) && !dup; k++)
			dup = same_rule(&have[k], &rules[i]);
		for (size_t k = 0; k < i && !dup; k++)
			dup = same_rule(&rules[k], &rules[i]);
		if (dup) {
			char text[256];
			write_rule_text(text, sizeof(text), &rules[i]);
			free(rules);
			return EC2_FAIL400(c, "InvalidPermission.Duplicate",
					   "the specified rule \"%s\" already exists", text);
		}
	}
	ec2_begin(c);
	ec2_el(c, "return", "true");
	ec2_open(c, "securityGroupRuleSet");
	for (size_t i = 0; i < n; i++) {
		char rid[SIM_ID_MAX];
		if (!egress) {
			sim_world_add_rule(g, &rules[i]);
		} else {
			g->egress =
				gc_xreallocarray(g->egress, g->n_egress + 1, sizeof(*g->egress));
			g->egress[g->n_egress++] = rules[i];
		}
		sim_world_new_id(c->sim->world, SIM_AWS, "sgr-", rid);
		ec2_open(c, "item");
		ec2_el(c, "securityGroupRuleId", rid);
		ec2_el(c, "groupId", g->id);
		ec2_el(c, "groupOwnerId", c->sim->cfg.aws_account);
		ec2_el(c, "isEgress", egress ? "true" : "false");
		ec2_el(c, "ipProtocol", rules[i].protocol);
		ec2_elf(c, "fromPort", "%d", rules[i].from_port);
		ec2_elf(c, "toPort", "%d", rules[i].to_port);
		if (rules[i].source_group[0]) {
			ec2_open(c, "referencedGroupInfo");
			ec2_el(c, "groupId", rules[i].source_group);
			ec2_el(c, "userId", c->sim->cfg.aws_account);
			ec2_close(c);
		} else if (rules[i].cidr_ipv6[0]) {
			ec2_el(c, "cidrIpv6", rules[i].cidr_ipv6);
		} else {
			ec2_el(c, "cidrIpv4", rules[i].cidr);
		}
		if (rules[i].description[0])
			ec2_el(c, "description", rules[i].description);
		ec2_close(c);
	}
	ec2_close(c);
	free(rules);
	return ec2_finish(c);
}

static int authorize_ingress(struct ec2 *c)
{
	return authorize_rules(c, false);
}

static int authorize_egress(struct ec2 *c)
{
	if (!ec2_param(c, "GroupId"))
		return EC2_FAIL400(c, "MissingParameter",
				   "The request must contain the parameter groupId");
	return authorize_rules(c, true);
}

static void write_rule_items(struct ec2 *c, const struct sim_rule *r)
{
	ec2_open(c, "item");
	ec2_el(c, "ipProtocol", r->protocol);
	if (strcmp(r->protocol, "-1") != 0) {
		ec2_elf(c, "fromPort", "%d", r->from_port);
		ec2_elf(c, "toPort", "%d", r->to_port);
	}
	ec2_open(c, r->source_group[0] ? "groups" : r->cidr_ipv6[0] ? "ipv6Ranges" : "ipRanges");
	ec2_open(c, "item");
	if (r->source_group[0])
		ec2_el(c, "groupId", r->source_group);
	else if (r->cidr_ipv6[0])
		ec2_el(c, "cidrIpv6", r->cidr_ipv6);
	else
		ec2_el(c, "cidrIp", r->cidr);
	ec2_close(c);
	ec2_close(c);
	ec2_close(c);
}

/*
 * RevokeSecurityGroupIngress by rule properties (protocol, ports, source; a description
 * need not be given, nor match). In the default VPC a rule that matches nothing is no
 * error: the answer lists it in unknownIpPermissionSet and the others go; in another
 * VPC it is InvalidPermission.NotFound and nothing goes (EC2 API reference).
 */
static int revoke_ingress(struct ec2 *c)
{
	struct sim_secgroup *g = sg_from_params(c);
	struct sim_rule *rules = NULL;
	bool *unknown;
	size_t n = 0;

	if (!g || read_permissions(c, g, &rules, &n) != 0)
		return -1;
	unknown = gc_xcalloc(n, sizeof(*unknown));
	for (size_t i = 0; i < n; i++) {
		unknown[i] = !sim_world_has_rule(g, &rules[i]);
		if (unknown[i] && strcmp(g->vpc, EC2_DEFAULT_VPC) != 0) {
			char text[256];
			write_rule_text(text, sizeof(text), &rules[i]);
			free(unknown);
			free(rules);
			return EC2_FAIL400(c, "InvalidPermission.NotFound",
					   "The specified rule \"%s\" does not exist in this "
					   "security group.",
					   text);
		}
	}
	ec2_begin(c);
	ec2_el(c, "return", "true");
	ec2_open(c, "unknownIpPermissionSet");
	for (size_t i = 0; i < n; i++)
		if (unknown[i])
			write_rule_items(c, &rules[i]);
		else
			(void)sim_world_remove_rule(g, &rules[i]);
	ec2_close(c);
	free(unknown);
	free(rules);
	return ec2_finish(c);
}

static const char *const sg_filters[] = { "tag:",	 "tag-key",  "tag-value",
					  "group-name",	 "group-id", "vpc-id",
					  "description", "owner-id", NULL };

static bool sg_matches(struct ec2 *c, const struct sim_secgroup *g, const struct ec2_filters *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct ec2_filter *f = &fs->f[i];
		bool m = false;

		if (ec2_is_tag_filter(f->name))
			m = ec2_tag_filter(f, &g->tags);
		else if (!strcmp(f->name, "group-name"))
			m = ec2_any_value(f, g->name);
		else if (!strcmp(f->name, "group-id"))
			m = ec2_any_value(f, g->id);
		else if (!strcmp(f->name, "vpc-id"))
			m = ec2_any_value(f, g->vpc);
		else if (!strcmp(f->name, "description"))
			m = ec2_any_value(f, g->description);
		else if (!strcmp(f->name, "owner-id"))
			m = ec2_any_value(f, c->sim->cfg.aws_account);
		if (!m)
			return false;
	}
	return true;
}

/* A rule's list of sources (a list element with at most one item): value under key, with
 * the owner's userId first where owner is given. */
static void write_source(struct ec2 *c, const char *list, const char *owner, const char *key,
			 const char *value, const char *description)
{
	ec2_open(c, list);
	if (value[0]) {
		ec2_open(c, "item");
		if (owner)
			ec2_el(c, "userId", owner);
		ec2_el(c, key, value);
		if (description[0])
			ec2_el(c, "description", description);
		ec2_close(c);
	}
	ec2_close(c);
}

/* One item of ipPermissions or ipPermissionsEgress: one source (a group, its members, or
 * an address range) per rule. */
static void write_perm(struct ec2 *c, const struct sim_rule *r)
{
	ec2_open(c, "item");
	ec2_el(c, "ipProtocol", r->protocol);
	if (strcmp(r->protocol, "-1") != 0) {
		ec2_elf(c, "fromPort", "%d", r->from_port);
		ec2_elf(c, "toPort", "%d", r->to_port);
	}
	write_source(c, "groups", c->sim->cfg.aws_account, "groupId", r->source_group,
		     r->description);
	write_source(c, "ipRanges", NULL, "cidrIp", r->cidr, r->description);
	write_source(c, "ipv6Ranges", NULL, "cidrIpv6", r->cidr_ipv6, r->description);
	ec2_open(c, "prefixListIds");
	ec2_close(c);
	ec2_close(c);
}

static void write_sg(struct ec2 *c, const struct sim_secgroup *g)
{
	ec2_open(c, "item");
	ec2_el(c, "ownerId", c->sim->cfg.aws_account);
	ec2_el(c, "groupId", g->id);
	ec2_el(c, "groupName", g->name);
	ec2_el(c, "groupDescription", g->description);
	ec2_el(c, "vpcId", g->vpc);
	ec2_open(c, "ipPermissions");
	for (size_t i = 0; i < g->n_rules; i++)
		write_perm(c, &g->rules[i]);
	ec2_close(c);
	ec2_open(c, "ipPermissionsEgress");
	write_perm(c, &default_egress);
	for (size_t i = 0; i < g->n_egress; i++)
		write_perm(c, &g->egress[i]);
	ec2_close(c);
	ec2_write_tags(c, &g->tags);
	ec2_close(c);
}

static int describe_security_groups(struct ec2 *c)
{
	const char **ids = NULL, **names = NULL;
	size_t ni = ec2_list(c, "GroupId", &ids), nn = ec2_list(c, "GroupName", &names), n;
	struct sim_secgroup **all = NULL;
	struct ec2_filters fs = { 0 };
	int64_t max;
	bool has_max;
	int ret = -1;

	if (ec2_max_results(c, 5, 1000, &max, &has_max) || ec2_get_filters(c, sg_filters, &fs))
		goto out;
	n = sim_world_list_sgs(c->sim->world, SIM_AWS, c->region, &all);
	for (size_t i = 0; i < ni + nn; i++) {
		const char *want = i < ni ? ids[i] : names[i - ni];
		bool found = false;
		for (size_t k = 0; k < n && !found; k++)
			found = strcmp(i < ni ? all[k]->id : all[k]->name, want) == 0;
		if (!found) {
			if (i < ni)
				EC2_FAIL400(c, "InvalidGroup.NotFound",
					    "The security group '%s' does not exist", want);
			else
				EC2_FAIL400(c, "InvalidGroup.NotFound",
					    "The security group '%s' does not exist in default VPC "
					    "'%s'",
					    want, EC2_DEFAULT_VPC);
			goto out;
		}
	}
	ec2_begin(c);
	ec2_open(c, "securityGroupInfo");
	for (size_t k = 0; k < n; k++) {
		bool wanted = ni + nn == 0;
		for (size_t i = 0; i < ni; i++)
			wanted = wanted || strcmp(all[k]->id, ids[i]) == 0;
		for (size_t i = 0; i < nn; i++)
			wanted = wanted || strcmp(all[k]->name, names[i]) == 0;
		if (wanted && sg_matches(c, all[k], &fs))
			write_sg(c, all[k]);
	}
	ec2_close(c);
	ret = ec2_finish(c);
out:
	free(ids);
	free(names);
	free(all);
	ec2_filters_release(&fs);
	return ret;
}

static int delete_security_group(struct ec2 *c)
{
	struct sim_secgroup *g = sg_from_params(c);
	char id[SIM_ID_MAX];

	if (!g)
		return -1;
	if (sim_world_sg_in_use(c->sim->world, g))
		return EC2_FAIL400(c, "DependencyViolation", "resource %s has a dependent object",
				   g->id);
	snprintf(id, sizeof(id), "%s", g->id);
	sim_world_delete_sg(c->sim->world, g);
	ec2_begin(c);
	ec2_el(c, "return", "true");
	ec2_el(c, "groupId", id);
	return ec2_finish(c);
}

/* --- the action table --------------------------------------------------------------*/

/* IpPermissions.N: the rule parameters of every security-group rule action */
#define P_PERMISSIONS                                                                           \
	"IpPermissions.N.IpProtocol", "IpPermissions.N.FromPort", "IpPermissions.N.ToPort",     \
		"IpPermissions.N.IpRanges.N.CidrIp", "IpPermissions.N.IpRanges.N.Description",  \
		"IpPermissions.N.Ipv6Ranges.N.CidrIpv6",                                        \
		"IpPermissions.N.Ipv6Ranges.N.Description", "IpPermissions.N.Groups.N.GroupId", \
		"IpPermissions.N.Groups.N.GroupName", "IpPermissions.N.Groups.N.UserId",        \
		"IpPermissions.N.Groups.N.Description"
/* the flat legacy form (IpProtocol, FromPort, ToPort, CidrIp) of the ingress actions */
#define P_RULES "GroupId", "GroupName", "IpProtocol", "FromPort", "ToPort", "CidrIp", P_PERMISSIONS
static const char *const p_authorize[] = { P_RULES, EC2_TAGSPEC, NULL };
static const char *const p_revoke[] = { P_RULES, NULL };
/* Egress takes IpPermissions only: EC2's API reference documents the top-level CidrIp,
 * FromPort, IpProtocol, ToPort and SourceSecurityGroup* as "Not supported. Use IP
 * permissions instead", and EC2 answers them UnknownParameter (docs/sim.md) */
static const char *const p_authorize_egress[] = { "GroupId", P_PERMISSIONS, EC2_TAGSPEC, NULL };
static const char *const p_create_sg[] = { "GroupName", "GroupDescription", "VpcId", EC2_TAGSPEC,
					   NULL };
static const char *const p_tags[] = { "ResourceId.N", "Resource.N", "Tag.N.Key", "Tag.N.Value",
				      NULL };
static const char *const p_delete_key[] = { "KeyName", "KeyPairId", NULL };
static const char *const p_delete_sg[] = { "GroupId", "GroupName", NULL };
static const char *const p_describe_keys[] = { "KeyName.N", "KeyPairId.N", "IncludePublicKey",
					       EC2_FILTERS, NULL };
static const char *const p_describe_sgs[] = { "GroupId.N", "GroupName.N", EC2_FILTERS, EC2_PAGING,
					      NULL };
static const char *const p_import_key[] = { "KeyName", "PublicKeyMaterial", EC2_TAGSPEC, NULL };

const struct ec2_action ec2_resource_actions[] = {
	{ "AuthorizeSecurityGroupEgress", authorize_egress, false, p_authorize_egress, false },
	{ "AuthorizeSecurityGroupIngress", authorize_ingress, false, p_authorize, false },
	{ "CreateSecurityGroup", create_security_group, false, p_create_sg, false },
	{ "CreateTags", create_tags, false, p_tags, false },
	{ "DeleteKeyPair", delete_key_pair, false, p_delete_key, false },
	{ "DeleteSecurityGroup", delete_security_group, false, p_delete_sg, false },
	{ "DeleteTags", delete_tags, false, p_tags, false },
	{ "DescribeKeyPairs", describe_key_pairs, true, p_describe_keys, false },
	{ "DescribeSecurityGroups", describe_security_groups, true, p_describe_sgs, false },
	{ "ImportKeyPair", import_key_pair, false, p_import_key, false },
	{ "RevokeSecurityGroupIngress", revoke_ingress, false, p_revoke, false },
	{ NULL, NULL, false, NULL, false },
};
