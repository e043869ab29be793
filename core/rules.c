/* rules.c: which security group rules to add and which to revoke (core/rules.h). */
#include <string.h>

#include "core/alloc.h"
#include "core/cidr.h"
#include "core/rules.h"
#include "core/str.h"

bool gc_rule_is_ours(const char *description)
{
	return description && gc_starts_with(description, GC_RULE_MARK);
}

static bool same_str(const char *a, const char *b)
{
	return (!a || !*a) ? (!b || !*b) : (b && strcmp(a, b) == 0);
}

/* The same network however written: a cloud may echo an IPv6 block in another case or
 * compression than the spec's ("2001:DB8::/32" for "2001:db8::/32"). */
static bool same_cidr(const char *a, const char *b)
{
	struct gc_cidr ca, cb;

	if (a && b && gc_cidr_parse(&ca, a) == 0 && gc_cidr_parse(&cb, b) == 0)
		return gc_cidr_equal(&ca, &cb);
	return same_str(a, b);
}

static bool same_rule(const struct gc_rule *a, const struct gc_rule *b)
{
	return a->all == b->all && (a->all || a->port == b->port) && same_cidr(a->cidr, b->cidr) &&
		same_str(a->group, b->group);
}

size_t gc_rules_wanted(const struct gc_secgroup_request *req, const char *group_id,
		       bool members_rule, struct gc_rule **out)
{
	size_t n = 0;

	*out = gc_xcalloc(req->n_allow_from + req->n_monitoring_from + 1, sizeof(**out));
	for (size_t i = 0; i < req->n_allow_from; i++)
		(*out)[n++] = (struct gc_rule){ .port = req->ssh_port,
						.cidr = req->allow_from[i],
						.ours = true,
						.description = GC_RULE_SSH };
	for (size_t i = 0; i < req->n_monitoring_from; i++)
		(*out)[n++] = (struct gc_rule){ .port = req->monitoring_port,
						.cidr = req->monitoring_from[i],
						.ours = true,
						.description = GC_RULE_MONITORING };
	if (members_rule && req->allow_members)
		(*out)[n++] = (struct gc_rule){
			.all = true, .group = group_id, .ours = true, .description = GC_RULE_MEMBERS
		};
	return n;
}

size_t gc_rules_cidrs(const struct gc_rule *want, const bool *add, size_t n, unsigned port,
		      const char **out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (add[i] && !want[i].all && want[i].cidr && want[i].port == port)
			out[k++] = want[i].cidr;
	return k;
}

size_t gc_rules_diff(const struct gc_rule *want, size_t n_want, const struct gc_rule *have,
		     size_t n_have, bool *add, bool *drop)
{
	size_t n = 0;

	for (size_t i = 0; i < n_want; i++) {
		add[i] = true;
		for (size_t k = 0; k < n_have && add[i]; k++)
			add[i] = !same_rule(&want[i], &have[k]);
		/* a CIDR listed twice in the spec is one rule */
		for (size_t k = 0; k < i && add[i]; k++)
			add[i] = !(add[k] && same_rule(&want[i], &want[k]));
		n += add[i];
	}
	for (size_t k = 0; k < n_have; k++) {
		drop[k] = have[k].ours;
		for (size_t i = 0; i < n_want && drop[k]; i++)
			drop[k] = !same_rule(&want[i], &have[k]);
		n += drop[k];
	}
	return n;
}
