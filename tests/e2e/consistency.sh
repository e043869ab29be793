#!/usr/bin/env bash
# consistency.sh: a user's journey on a cloud that is eventually consistent (issue 18,
# item 4), with the emulator in --eventual-consistency mode: where the cloud's own guide
# documents it (EC2, ECS; docs/sim.md), a security group or key pair just made is
# NotFound to the first rule change and RunInstances naming it, a new instance is missing
# from the first listing, and the first terminate of it answers NotFound while it runs
# on. Elsewhere the same journey runs
# and the normal outcome is asserted. The user applies a fresh cluster (it must come up),
# destroys it at once (nothing may be left running, and the summary counts exactly what
# went), then destroys a second cluster whose instances take longer to go than destroy
# waits: the summary must not claim them.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# the clouds whose guides document eventual consistency, and their codes (docs/sim.md)
EC=1
case $CLOUD in
aws)
	AUTHORIZE=AuthorizeSecurityGroupIngress GROUP_NF=InvalidGroup.NotFound
	TERMINATE=TerminateInstances INSTANCE_NF=InvalidInstanceID.NotFound
	;;
alibaba)
	AUTHORIZE=AuthorizeSecurityGroup GROUP_NF=InvalidSecurityGroupId.NotFound
	TERMINATE=DeleteInstances INSTANCE_NF=InvalidInstanceId.NotFound
	;;
*) EC=0 ;; # Tencent documents none: the journey's normal outcome
esac

# errors ACTION CODE: how many calls of ACTION the emulator answered with CODE
errors() {
	jq -s --arg a "$1" --arg c "$2" '[.[] | select(.action == $a and .error_code == $c)]
		| length' "$work/requests.log"
}

sim_start --no-rate-limits --eventual-consistency
spec "$work/c.yaml" e2e-ec workers 2 "$TYPE1"

# a fresh cluster: a new security group (and key pair) the cloud does not know everywhere
gc_ok plan "$work/c.yaml"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-ec 2 "after the first apply"
expect_owned e2e-ec "after the first apply"
if [ "$EC" = 1 ]; then
	[ "$(errors "$AUTHORIZE" "$GROUP_NF")" = 1 ] ||
		fail "the new group was never NotFound to $AUTHORIZE"
	[ "$(errors RunInstances "$GROUP_NF")" = 1 ] ||
		fail "the new group was not NotFound once to RunInstances"
	[ "$KEYPAIRS" = 0 ] || [ "$(errors RunInstances InvalidKeyPair.NotFound)" = 1 ] ||
		fail "the new key pair was not NotFound once to RunInstances"
fi
requests_valid

# destroy right away: the first terminate is answered NotFound, the instances run on
gc_ok destroy -y "$work/c.yaml"
expect_alive e2e-ec 0 "after destroy"
[ "$(owned_resources e2e-ec)" = 0 ] || fail "destroy left the key pair or security group"
grep -q '^destroy: 0 created, 2 terminated' "$work/err" ||
	fail "the summary does not count the 2 instances terminated: $(cat "$work/err")"
if [ "$EC" = 1 ]; then
	[ "$(errors "$TERMINATE" "$INSTANCE_NF")" -ge 1 ] ||
		fail "$TERMINATE was never answered NotFound"
	ok=$(jq -s --arg a "$TERMINATE" '[.[] | select(.action == $a and .error_code == null)]
		| length' "$work/requests.log")
	[ "$ok" -ge 1 ] || fail "the terminate was never sent again after its NotFound"
fi

# a destroy that cannot wait long enough: instances still shutting down are not counted
sim_stop
sim_start --no-rate-limits --eventual-consistency --terminate-ms 600000
spec "$work/c.yaml" e2e-ec2 workers 2 "$TYPE1"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-ec2 2 "after the second apply"
gc destroy -y --wait-timeout 3 "$work/c.yaml"
[ "$rc" != 0 ] || fail "destroy claimed success with instances still going"
grep -q '^destroy: 0 created, 0 terminated' "$work/err" ||
	fail "the summary claims instances it did not see terminated: $(cat "$work/err")"
grep -q 'terminated 2 instances' "$work/err" &&
	fail "progress claims 2 terminated: $(cat "$work/err")"
state
going=$(jq --arg cloud "$CLOUD" '[.instances[] | select(.cloud == $cloud)
	| select(.tags["gpucluster:cluster"] == "e2e-ec2")
	| select((.state | ascii_downcase) as $s | $s != "terminated" and $s != "running"
		and $s != "pending")] | length' "$work/state.json")
[ "$going" = 2 ] || fail "expected 2 instances on their way out: $(jq -c .instances "$work/state.json")"
requests_valid
note "ok"
