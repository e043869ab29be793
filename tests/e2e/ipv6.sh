#!/usr/bin/env bash
# ipv6.sh: a user's journey with an IPv6 range in ssh.allow_from (issue 18, item 8). The
# spec allows an IPv4 and an IPv6 range: apply succeeds and the cloud holds the v6 rule in
# its IPv6 field (EC2 Ipv6Ranges, ECS Ipv6SourceCidrIp, CVM Ipv6CidrBlock), the v4 one in
# the IPv4 field; a second apply changes nothing; removing the v6 range removes its rule
# and only it. The emulator refuses an IPv6 block in an IPv4 field, as the clouds do, so a
# driver that sent it there fails the first apply.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start --no-rate-limits
spec "$work/c.yaml" e2e-v6 workers 1 "$TYPE1"
allow() { sed -i "/^  allow_from:/d; s|^ssh:\$|ssh:\n  allow_from: [$1]|" "$work/c.yaml"; }
# the SSH rules of the cluster's group, as the emulator holds them: [cidr, cidr_ipv6]
ssh_rules() {
	state
	jq -c '[.security_groups[] | select(.tags["gpucluster:cluster"] == "e2e-v6")
		| .rules[] | select(.description == "gpucluster ssh")
		| [.cidr, .cidr_ipv6]] | sort' "$work/state.json"
}
changes() {
	local n=0 a
	for a in AuthorizeSecurityGroupIngress RevokeSecurityGroupIngress AuthorizeSecurityGroup \
		RevokeSecurityGroup CreateSecurityGroupPolicies DeleteSecurityGroupPolicies; do
		n=$((n + $(calls "$a")))
	done
	echo "$n"
}

# a v4 and a v6 range (the v6 one written as users do: upper case, not compressed)
allow "203.0.113.0/24, 2001:DB8:0:0::/32"
gc_ok plan "$work/c.yaml"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-v6 1 "with an IPv6 range"
[ "$(ssh_rules)" = '[["","2001:db8::/32"],["203.0.113.0/24",""]]' ] ||
	fail "the SSH rules are not one per family field: $(ssh_rules)"

# a second apply: the rules are right, nothing is authorized or revoked
: >"$work/requests.log"
gc_ok apply -y "$work/c.yaml"
grep -q 'No changes' "$work/out" || fail "the second apply had changes: $(cat "$work/out")"
[ "$(changes)" = 0 ] || fail "a second apply changed rules that were right"
[ "$(ssh_rules)" = '[["","2001:db8::/32"],["203.0.113.0/24",""]]' ] ||
	fail "the SSH rules changed: $(ssh_rules)"

# the v6 range goes from the spec: its rule goes, the v4 one stays
allow 203.0.113.0/24
gc_ok apply -y "$work/c.yaml"
[ "$(ssh_rules)" = '[["203.0.113.0/24",""]]' ] ||
	fail "the v6 rule outlived its range: $(ssh_rules)"

# and only a v6 range (no IPv4 at all) works too
allow "2001:db8:1::/48"
gc_ok apply -y "$work/c.yaml"
[ "$(ssh_rules)" = '[["","2001:db8:1::/48"]]' ] || fail "v6 only: $(ssh_rules)"
requests_valid

gc_ok destroy -y "$work/c.yaml"
note ok
