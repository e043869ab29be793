#!/usr/bin/env bash
# tokens.sh: client tokens never wedge the cluster (issue 18). A user's 2-node group with
# lifecycle.ttl loses a node from outside (terminated through the cloud's own API), applies,
# loses the other original node, applies: back to 2 each time, no error (the replacement's
# slot token comes back with another expires-at: it is retired, never "run apply again"
# forever). Then `scale workers=0` and `scale workers=2`: back to 2 within one apply (on
# Alibaba and Tencent the replayed token answers the released ids: they are seen gone and
# the next generation launches). A changed TTL and tag and one more lost node, then
# destroy: nothing left.
# `apply --replace-unhealthy` needs SSH nodes (bootstrap.sh); it terminates through the same
# engine path, which the property test (sim.property.<cloud>) drives at random.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start --no-rate-limits
spec "$work/c.yaml" e2e-tok workers 2 "$TYPE1" on-demand "lifecycle:
  ttl: 2h"

# oldest: the id of the cluster's oldest live instance (the emulator lists in launch order)
oldest() {
	state
	jq -r --arg cloud "$CLOUD" '[.instances[] | select(.cloud == $cloud)
		| select(.tags["gpucluster:cluster"] == "e2e-tok")
		| select((.state | ascii_downcase) != "terminated")] | first | .id' "$work/state.json"
}

# lose ID: the node is terminated from outside, through the cloud's own API
lose() {
	case $CLOUD in
	aws)
		curl -sS --aws-sigv4 "aws:amz:$REGION:ec2" \
			--user AKIAGPUCLUSTERSIM001:gpucluster-sim-aws-secret-key-0000000000 \
			-H 'Content-Type: application/x-www-form-urlencoded' \
			--data "Action=TerminateInstances&Version=2016-11-15&InstanceId.1=$1" \
			"$ENDPOINT/" >/dev/null
		;;
	*)
		node "$(dirname "$0")/foreign.js" "$CLOUD" "${ENDPOINT#http://}" "$REGION" \
			terminate "$1" >/dev/null
		;;
	esac
	for _ in $(seq 1 100); do
		gone "$1" && return 0
		sleep 0.05
	done
	fail "$1 was not terminated from outside: $(instance_state "$1")"
}

gc_ok apply -y "$work/c.yaml"
expect_alive e2e-tok 2 "first apply"

# lose one, apply; lose the other original, apply (the defect: slot 1's token again)
for round in 1 2; do
	victim=$(oldest)
	if [ -z "$victim" ] || [ "$victim" = null ]; then
		fail "round $round: no live node to lose"
	fi
	lose "$victim"
	expect_alive e2e-tok 1 "round $round: after losing $victim"
	gc apply -y "$work/c.yaml"
	[ "$rc" = 0 ] || fail "round $round: apply after losing $victim exited $rc"
	grep -q "used with other parameters" "$work/err" && fail "round $round: a token mismatch"
	expect_alive e2e-tok 2 "round $round: after the apply"
done

# scale to zero and back: one apply
gc_ok scale -y -f "$work/c.yaml" workers=0
expect_alive e2e-tok 0 "scaled to 0"
gc_ok scale -y -f "$work/c.yaml" workers=2
expect_alive e2e-tok 2 "scaled back to 2"
gc_ok plan "$work/c.yaml"
grep -q "No changes" "$work/out" || fail "a plan after scaling back is not 'No changes'"

# another TTL and a tag, and a node lost again: the same
sed -i 's/ttl: 2h/ttl: 3h/' "$work/c.yaml"
printf 'tags:\n  team: tokens\n' >>"$work/c.yaml"
lose "$(oldest)"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-tok 2 "a node lost after the TTL change"

gc_ok destroy -y "$work/c.yaml"
expect_alive e2e-tok 0 "after destroy"
[ "$(owned_resources e2e-tok)" = 0 ] || fail "destroy left key pairs or security groups"
# every request well-formed; on Tencent a token replayed with another expires-at gets
# CVM's InvalidParameter naming the ClientToken (docs/internals/emulator.md), which is
# the engine's cue to retire it, not a malformed request
if [ "$CLOUD" = tencent ]; then
	bad=$(jq -r -s '[.[] | select(.error_code != null)
		| select(.action != "RunInstances" or .error_code != "InvalidParameter")
		| select(.error_code | test("^(Invalid|Missing|Unknown|Unsupported|Malformed)"))
		| "\(.action) -> \(.error_code)"] | unique | join(", ")' "$work/requests.log")
	[ -z "$bad" ] || fail "requests the real API would refuse: $bad"
else
	requests_valid
fi
note "ok"
