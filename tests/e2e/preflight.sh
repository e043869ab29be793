#!/usr/bin/env bash
# preflight.sh: a user's journeys with plan's quota preflight (issue 14, item 1). A plan
# that cannot fit the account's quota is refused before anything is created, naming the
# quota, its limit, the use, the shortfall and where to raise it; once the quota is raised
# plan and apply go through. A sold-out first candidate is skipped and said; a quota API
# that refuses the caller is said and the plan goes on; a garbage answer is classified.
# AWS reads Service Quotas (vCPUs of the family group) and has no stock API: no sold-out
# journey there.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

case $CLOUD in
tencent) od_quota="PostPaidQuotaSet in ${ZONES[0]}" unit=instances per=1 quota_action=DescribeAccountQuota ;;
alibaba) od_quota=max-postpaid-instance-vcpu-count unit=vCPUs per=8 quota_action=DescribeAccountAttributes ;;
aws) od_quota='Running On-Demand G and VT instances (L-DB2E81BA)' unit=vCPUs per=4 quota_action=GetServiceQuota ;;
*) skip "the quota preflight has no $CLOUD driver yet" ;;
esac
sim_start --no-rate-limits
quotas() { control POST /quotas "$1" >/dev/null; }
quotas_clear() { control DELETE /quotas >/dev/null; }

# 1. on-demand, 2 nodes, a quota of 1 node's worth: refused, nothing created
spec "$work/c.yaml" e2e-preflight workers 2 "$TYPE1" on-demand
quotas "$CLOUD:on-demand=$per"
gc plan "$work/c.yaml"
[ "$rc" = 1 ] || fail "plan over the quota exited $rc: $(cat "$work/err")"
grep -qF "group 'workers' does not fit the account's quota: quota '$od_quota' allows $per $unit, 0 are in use and 2 new nodes need $((2 * per)) more: $per short; raise it at" "$work/err" ||
	fail "the refusal does not name quota, limit, use and shortfall: $(cat "$work/err")"
grep -q 'hint: ask for a higher limit' "$work/err" || fail "no quota hint: $(cat "$work/err")"
gc apply -y "$work/c.yaml"
[ "$rc" = 1 ] || fail "apply over the quota exited $rc"
[ "$(calls RunInstances)" = 0 ] || fail "apply launched over the quota"
expect_alive e2e-preflight 0 "after a refused plan"

# 2. the quota raised: plan says it fits, apply converges
quotas "$CLOUD:on-demand=$((2 * per))"
gc_ok plan "$work/c.yaml"
grep -qF "Quota: group 'workers': 2 new $TYPE1 (on-demand) fit quota '$od_quota'" "$work/out" ||
	fail "plan does not say the quota fits: $(cat "$work/out")"
gc_ok plan -o json "$work/c.yaml"
jq -e '.quota | length == 1' "$work/out" >/dev/null || fail "no quota in plan -o json"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-preflight 2 "once the quota was raised"
# 3. scaling up past it: the 2 running count as use
spec "$work/c.yaml" e2e-preflight workers 3 "$TYPE1" on-demand
gc plan "$work/c.yaml"
[ "$rc" = 1 ] || fail "plan past the quota exited $rc"
grep -qF "allows $((2 * per)) $unit, $((2 * per)) are in use and 1 new node need $per more" "$work/err" ||
	fail "the use is not counted: $(cat "$work/err")"
spec "$work/c.yaml" e2e-preflight workers 2 "$TYPE1" on-demand
gc_ok destroy -y "$work/c.yaml"
quotas_clear
# 3b. AWS: spot draws on the family's spot quota, apart from the on-demand one
if [ "$CLOUD" = aws ]; then
	spec "$work/c.yaml" e2e-preflight workers 1 "$TYPE1" spot
	quotas "aws:spot=0"
	gc plan "$work/c.yaml"
	[ "$rc" = 1 ] || fail "a spot plan over the spot quota exited $rc"
	grep -qF "quota 'All G and VT Spot Instance Requests (L-3819A6DF)' allows 0 vCPUs" "$work/err" ||
		fail "the spot quota is not named: $(cat "$work/err")"
	quotas_clear
fi

# 4. the first type sold out in the first zone: skipped and said, the next candidate fits
# (EC2 has no stock API: on AWS the first candidate is checked)
spec "$work/c.yaml" e2e-preflight workers 1 "$TYPE1,$TYPE2" on-demand
if [ "$CLOUD" != aws ]; then
	quotas "$CLOUD:sold-out=${ZONES[0]}/$TYPE1"
	gc_ok plan "$work/c.yaml"
	grep -qF "Quota: group 'workers': $TYPE1 (on-demand) is sold out in ${ZONES[0]}: skipped" "$work/out" ||
		fail "the sold-out candidate is not said: $(cat "$work/out")"
	grep -qF "fit quota" "$work/out" || fail "no candidate after the sold-out one: $(cat "$work/out")"
	quotas_clear
fi

# 5. the quota API refuses the caller: said, the plan goes on, never a guess
quotas "$CLOUD:denied"
gc_ok plan "$work/c.yaml"
grep -qF "Quota: quota not checked: cannot read the quota for $TYPE1 (on-demand)" "$work/out" ||
	fail "the unreadable quota is not said: $(cat "$work/out")"
grep -q "fit quota\|does not fit" "$work/out" && fail "a guess about an unreadable quota"
quotas_clear

# 6. a garbage answer: classified as the cloud's bad answer, said, the plan goes on
fault "$CLOUD:$quota_action:hostile,mode=empty-envelope"
gc_ok plan "$work/c.yaml"
grep -qF "Quota: quota not checked" "$work/out" || fail "garbage not said: $(cat "$work/out")"
grep -qi "cannot read the $quota_action answer\|invalid\|answer" "$work/out" ||
	fail "garbage not classified: $(cat "$work/out")"
faults_clear
requests_valid
expect_alive e2e-preflight 0 "at the end"
note ok
