#!/usr/bin/env bash
# quota.sh: a user's journeys with account quotas (issue 18, item 7). Spot and on-demand
# quotas are apart on every cloud: a spot-then-on-demand group whose spot quota is used up
# launches on-demand and says why; an on-demand group whose on-demand quota is used up
# stops, naming the quota to ask more of, never with "no capacity" or "run again"; once
# the quota is raised, apply converges. A spot-only group stops on the spot quota and is
# told it may allow on-demand. Then the account's own quota and stock, enforced at launch.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# instances run at once: an apply's wait ends at its first look
sim_start --no-rate-limits --pending-ms 0
case $CLOUD in
aws) od_quota="'Running On-Demand G and VT instances'" spot_quota="'All G and VT Spot Instance Requests'" ;;
alibaba) od_quota="max-postpaid-instance-vcpu-count" spot_quota="max-spot-instance-vcpu-count" ;;
tencent) od_quota="PostPaidQuotaSet" spot_quota="SpotPaidQuotaSet" ;;
esac
# spot COUNT: how many live instances of cluster e2e-quota are spot ones
spot() {
	state
	jq --argjson s "$1" '[.instances[] | select(.tags["gpucluster:cluster"] == "e2e-quota")
		| select((.state | ascii_downcase) != "terminated") | select(.spot == $s)] | length' \
		"$work/state.json"
}
# no_wrong_words: a quota is neither a stock-out nor fixed by running again (EC2's own
# VcpuLimitExceeded message speaks of "vCPU capacity": that sentence is the cloud's)
no_wrong_words() {
	sed 's/requested more vCPU capacity than/requested more vCPUs than/' "$work/err" \
		"$work/out" | grep -qi 'capacity' &&
		fail "$1: capacity wording for a quota: $(cat "$work/err")"
	grep -qiE 'run .* again|again to finish' "$work/err" "$work/out" &&
		fail "$1: told to run again for a quota: $(cat "$work/err")"
	return 0
}

# 1. spot-then-on-demand, the spot quota used up: on-demand instead, and why
spec "$work/c.yaml" e2e-quota workers 2 "$TYPE1" spot-then-on-demand
fault "$CLOUD:RunInstances:quota,market=spot"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-quota 2 "after the spot quota"
[ "$(spot false)" = 2 ] || fail "not 2 on-demand instances: $(spot false)"
grep -q "group 'workers': the spot quota is used up, launching on-demand instead" "$work/err" ||
	fail "apply did not say why it went on-demand: $(cat "$work/err")"
grep -qF "$spot_quota" "$work/err" || fail "the spot quota is not named: $(cat "$work/err")"
# one spot try in all: the quota is the account's, not the zone's or the type's
[ "$(jq -s '[.[] | select(.action == "RunInstances" and .error_code != null)] | length' \
	"$work/requests.log")" = 1 ] || fail "more than one launch hit the spot quota"
faults_clear
gc_ok destroy -y "$work/c.yaml"

# 2. on-demand, the on-demand quota used up: a stop that names the quota (not a walk over
# the other types and zones as if it were a stock-out)
spec "$work/c.yaml" e2e-quota workers 2 "$TYPE1,$TYPE2" on-demand
fault "$CLOUD:RunInstances:quota,market=on-demand"
: >"$work/requests.log"
gc apply -y "$work/c.yaml"
[ "$(calls RunInstances)" = 1 ] || fail "$(calls RunInstances) launches tried over the quota"
[ "$rc" = 1 ] || fail "apply over the on-demand quota exited $rc"
grep -qF "$od_quota" "$work/err" || fail "the on-demand quota is not named: $(cat "$work/err")"
grep -q 'ask for more' "$work/err" || fail "not told what to ask for: $(cat "$work/err")"
grep -q 'hint: ask for a higher limit' "$work/err" || fail "no quota hint: $(cat "$work/err")"
no_wrong_words "the on-demand quota"
expect_alive e2e-quota 0 "over the on-demand quota"
# the quota raised: the same apply converges
faults_clear
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-quota 2 "once the quota was raised"
[ "$(spot false)" = 2 ] || fail "not 2 on-demand instances"
gc_ok destroy -y "$work/c.yaml"

# 3. spot only, the spot quota used up: a stop that names it and offers on-demand
spec "$work/c.yaml" e2e-quota workers 1 "$TYPE1" spot
fault "$CLOUD:RunInstances:quota,market=spot"
gc apply -y "$work/c.yaml"
[ "$rc" = 1 ] || fail "a spot-only apply over the spot quota exited $rc"
grep -qF "$spot_quota" "$work/err" || fail "the spot quota is not named: $(cat "$work/err")"
grep -q 'market: spot-then-on-demand' "$work/err" || fail "on-demand not offered: $(cat "$work/err")"
no_wrong_words "the spot quota"
expect_alive e2e-quota 0 "over the spot quota"
faults_clear

# The emulator enforces the account's quota and stock at launch, as the cloud does (the
# cases above inject the refusal). Here the quota API refuses the caller, so plan cannot
# check the quota and says so: the launch meets it.
quotas() { control POST /quotas "$1" >/dev/null; }
case $CLOUD in
aws) per=4 nostock=InsufficientInstanceCapacity ;;
alibaba) per=8 nostock=OperationDenied.NoStock ;;
tencent) per=1 nostock=ResourceInsufficient.SpecifiedInstanceType ;;
esac
# 4. a quota of one node's worth, two nodes: one launch, refused; a stop that names the
# quota and where to raise it, nothing left
spec "$work/c.yaml" e2e-quota workers 2 "$TYPE1,$TYPE2" on-demand
quotas "$CLOUD:denied"
quotas "$CLOUD:on-demand=$per"
: >"$work/requests.log"
gc apply -y "$work/c.yaml"
[ "$rc" = 1 ] || fail "apply over the account's quota exited $rc"
[ "$(calls RunInstances)" = 1 ] || fail "$(calls RunInstances) launches tried over the quota"
grep -qF "$od_quota" "$work/err" || fail "the enforced quota is not named: $(cat "$work/err")"
grep -q 'ask for more' "$work/err" || fail "not told where to raise it: $(cat "$work/err")"
grep -q 'hint: ask for a higher limit' "$work/err" || fail "no quota hint: $(cat "$work/err")"
no_wrong_words "the enforced quota"
expect_alive e2e-quota 0 "over the enforced quota"
# 5. the quota raised, the first type sold out in the first zone: that launch is refused
# as a stock-out and the next candidate launches
control DELETE /quotas >/dev/null
quotas "$CLOUD:denied"
quotas "$CLOUD:sold-out=${ZONES[0]}/$TYPE1"
: >"$work/requests.log"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-quota 2 "past a sold-out candidate"
[ "$(jq -r -s '[.[] | select(.action == "RunInstances") | .error_code // "ok"] | join(" ")' \
	"$work/requests.log")" = "$nostock ok" ] ||
	fail "not one stock-out, then a launch: $(jq -c -s 'map(select(.action == "RunInstances") | .error_code)' "$work/requests.log")"
state
[ "$(jq --arg z "${ZONES[0]}" --arg t "$TYPE1" '[.instances[] | select(.tags["gpucluster:cluster"]
	== "e2e-quota") | select((.state | ascii_downcase) != "terminated")
	| select(.zone == $z and .type == $t)] | length' "$work/state.json")" = 0 ] ||
	fail "an instance of the sold-out $TYPE1 in ${ZONES[0]}"
control DELETE /quotas >/dev/null
requests_valid
gc_ok destroy -y "$work/c.yaml"
note ok
