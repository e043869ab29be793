/*
 * rules.h: the ingress rules of a cluster's security group, as the drivers reconcile them
 * on every apply (docs/internals/security-groups.md).
 *
 * A driver lists the group's rules, turns each into a struct gc_rule, and asks
 * gc_rules_diff which wanted rules to add and which present ones to revoke; only the wire
 * parts (list, authorize, revoke) are its own. A rule is ours when its description starts
 * with GC_RULE_MARK: those the spec no longer wants go, every other (foreign) rule stays.
 */
#ifndef GC_RULES_H
#define GC_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/provider.h"

#define GC_RULE_MARK	   "gpucluster "
#define GC_RULE_SSH	   "gpucluster ssh"
#define GC_RULE_MEMBERS	   "gpucluster members"
#define GC_RULE_MONITORING "gpucluster monitoring"

/* One ingress rule: TCP on port (all = false) or every protocol and port (all = true),
 * from an address range (cidr) or from the members of a security group (group). */
struct gc_rule {
	bool all;
	unsigned port;
	const char *cidr;
	const char *group;
	bool ours;		 /* carries our marker; only ours are ever revoked */
	const char *description; /* a wanted rule's: GC_RULE_SSH, ...; NULL in a listing */
};

/* Whether a rule's description carries our marker. */
bool gc_rule_is_ours(const char *description);

/* The rules req wants on group_id: its SSH port from each allow_from CIDR, its
 * monitoring port from each monitoring_from CIDR and, with members_rule, everything from
 * the group itself. *out is the caller's to free (the strings are req's and group_id's). */
size_t gc_rules_wanted(const struct gc_secgroup_request *req, const char *group_id,
		       bool members_rule, struct gc_rule **out);

/* The CIDRs of the wanted rules to add (add[i]) that open TCP port: out (n entries at
 * most) holds them, borrowed from want; returns how many. */
size_t gc_rules_cidrs(const struct gc_rule *want, const bool *add, size_t n, unsigned port,
		      const char **out);

/*
 * add[i]: want[i] is not among have (whoever made the present one: a foreign rule of the
 * same shape already lets the same traffic in, and the cloud refuses a duplicate).
 * drop[j]: have[j] is ours and no longer wanted. Returns how many of either.
 */
size_t gc_rules_diff(const struct gc_rule *want, size_t n_want, const struct gc_rule *have,
		     size_t n_have, bool *add, bool *drop);

#endif
