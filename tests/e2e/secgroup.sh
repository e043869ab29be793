#!/usr/bin/env bash
# secgroup.sh: a user's journey with the cluster's security group (issue 19). Apply with
# ssh.allow_from one range; a rule is added by hand through the cloud's own API; the
# spec's range changes (with a scale-down), apply again: the old SSH rule is gone, the new
# one is there, the hand-made rule is untouched; a third apply changes nothing; the range
# changes back alone and an apply with "No changes" still fixes the rules. (A group left
# without its rules by a kill is kill.sh's.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start --no-rate-limits
spec "$work/c.yaml" e2e-sg workers 2 "$TYPE1"
allow() { sed -i "/^  allow_from:/d; s|^ssh:\$|ssh:\n  allow_from: [$1]|" "$work/c.yaml"; }
# the cluster's group, as the emulator holds it
group() {
	state
	jq -c --arg cloud "$CLOUD" '[.security_groups[] | select(.cloud == $cloud)
		| select(.tags["gpucluster:cluster"] == "e2e-sg")]' "$work/state.json"
}
# has_rule PORT CIDR DESCRIPTION: the group has that TCP rule exactly once
has_rule() {
	[ "$(group | jq --argjson p "$1" --arg c "$2" --arg d "$3" '[.[0].rules[]
		| select(.protocol == "tcp" and .from_port == $p and .to_port == $p
			and .cidr == $c and .description == $d)] | length')" = 1 ]
}
members=1
[ "$CLOUD" != alibaba ] || members=0 # a basic ECS group lets its members in by itself
# expect_rules N WHEN: the group holds N rules besides the members' rule
expect_rules() {
	local got
	got=$(group | jq --argjson m "$members" '.[0] as $g | [$g.rules[]
		| select(.source_group == $g.id and .description == "gpucluster members")]
		| length == $m and ($g.rules | length) - $m == '"$1")
	[ "$got" = true ] || fail "$2: the group's rules: $(group | jq -c '.[0].rules')"
}

# SSH open to the world is allowed, with a warning in the plan (issue 18); a range, none
allow 0.0.0.0/0
gc_ok plan "$work/c.yaml"
grep -q "warning: ssh.allow_from '0.0.0.0/0' opens SSH (port 22) of every node to the whole internet" \
	"$work/err" || fail "no warning for SSH open to the world: $(cat "$work/err")"
allow 203.0.113.0/24
gc_ok plan "$work/c.yaml"
grep -q 'whole internet' "$work/err" && fail "a warning for a narrow range: $(cat "$work/err")"
gc_ok apply -y "$work/c.yaml"
[ "$(group | jq length)" = 1 ] || fail "not one security group: $(group)"
id=$(group | jq -r '.[0].id')
has_rule 22 203.0.113.0/24 "gpucluster ssh" || fail "no SSH rule from 203.0.113.0/24"
expect_rules 1 "first apply"

# a rule the user adds by hand, on another port
case $CLOUD in
aws)
	curl -sS --fail --aws-sigv4 "aws:amz:$REGION:ec2" \
		--user AKIAGPUCLUSTERSIM001:gpucluster-sim-aws-secret-key-0000000000 \
		-H 'Content-Type: application/x-www-form-urlencoded' \
		--data-urlencode "Action=AuthorizeSecurityGroupIngress" \
		--data-urlencode "Version=2016-11-15" --data-urlencode "GroupId=$id" \
		--data-urlencode "IpPermissions.1.IpProtocol=tcp" \
		--data-urlencode "IpPermissions.1.FromPort=8888" \
		--data-urlencode "IpPermissions.1.ToPort=8888" \
		--data-urlencode "IpPermissions.1.IpRanges.1.CidrIp=192.0.2.0/24" \
		--data-urlencode "IpPermissions.1.IpRanges.1.Description=added by hand" \
		"$ENDPOINT/" >/dev/null || fail "cannot add a rule by hand"
	;;
*)
	node "$(dirname "$0")/foreign.js" "$CLOUD" "${ENDPOINT#http://}" "$REGION" rule "$id" \
		192.0.2.0/24 8888 || fail "cannot add a rule by hand"
	;;
esac
has_rule 8888 192.0.2.0/24 "added by hand" || fail "the hand-made rule is not there"

# the spec's range changes, with one node fewer (an apply that only terminates)
allow 198.51.100.0/24
sed -i 's/^    count: 2$/    count: 1/' "$work/c.yaml"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-sg 1 "after the scale-down"
[ "$(group | jq -r '.[0].id')" = "$id" ] || fail "the group was replaced: $(group)"
has_rule 22 198.51.100.0/24 "gpucluster ssh" || fail "no SSH rule from 198.51.100.0/24"
has_rule 8888 192.0.2.0/24 "added by hand" || fail "the hand-made rule went"
expect_rules 2 "after the range changed"
grep -q 'created security group' "$work/err" "$work/out" &&
	fail "a second apply says it created the group"

# nothing to change: no rule is added or revoked
: >"$work/requests.log"
gc_ok apply -y "$work/c.yaml"
expect_rules 2 "a third apply"
for a in AuthorizeSecurityGroupIngress RevokeSecurityGroupIngress AuthorizeSecurityGroup \
	RevokeSecurityGroup CreateSecurityGroupPolicies DeleteSecurityGroupPolicies; do
	[ "$(calls "$a")" = 0 ] || fail "a third apply called $a on rules that were right"
done

# the range changes back and nothing else does: an apply with no changes still fixes it
allow 203.0.113.0/24
gc_ok apply -y "$work/c.yaml"
grep -q 'No changes' "$work/out" || fail "the last apply had changes besides the rules"
has_rule 22 203.0.113.0/24 "gpucluster ssh" || fail "no SSH rule from 203.0.113.0/24 again"
has_rule 8888 192.0.2.0/24 "added by hand" || fail "the hand-made rule went"
expect_rules 2 "after the range changed back"
requests_valid

gc_ok destroy -y "$work/c.yaml"
[ "$(group | jq length)" = 0 ] || fail "the group outlived destroy: $(group)"
note ok
