#!/usr/bin/env bash
# cap.sh: a user's journey with lifecycle.max_hourly_cost (issue 18, item 1). Two GPU
# types of very different price and a cap between 2 x the cheap and 2 x the dear one:
# plan shows the worst case and warns that apply skips the dear fallback; with no
# capacity for the cheap type apply skips the dear one, says why and fails without
# launching it; when capacity comes back apply succeeds; then the cap is lowered under
# what the cluster costs and plan --detailed-exitcode exits 2 saying so.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

case $CLOUD in
aws) CHEAP=p4d.24xlarge DEAR=p5.48xlarge ;;
alibaba) CHEAP=ecs.gn7i-c8g1.2xlarge DEAR=ecs.gn7e-c16g1.32xlarge ;;
tencent) CHEAP=GN7.2XLARGE32 DEAR=GN10Xp.20XLARGE320 ;;
esac

sim_start --no-rate-limits
spec "$work/c.yaml" e2e-cap gpu 2 "$CHEAP,$DEAR"
# the prices as plan sees them (in whatever the cloud bills), before any cap
gc_ok plan -o json "$work/c.yaml"
cheap=$(jq '.groups[0].create_price' "$work/out")
dear=$(jq '.groups[0].worst_price' "$work/out")
[ "$(jq -r '.groups[0].worst_type' "$work/out")" = "$DEAR" ] ||
	fail "plan's worst case is not $DEAR: $(jq -c '.groups[0]' "$work/out")"
cur=$(jq -r '.cost.currency' "$work/out")
cap=$(jq -n --argjson c "$cheap" --argjson d "$dear" '$c + $d | . * 100 | floor / 100')
# the cap in the cloud's own currency (CNY on the emulator's China-site accounts)
printf 'lifecycle:\n  max_hourly_cost: %s\n  currency: %s\n' "$cap" "$cur" >>"$work/c.yaml"
note "cap $cap between 2 x $cheap ($CHEAP) and 2 x $dear ($DEAR)"

# plan: the likely case fits, the worst does not: a warning naming the skipped candidate
gc_ok plan "$work/c.yaml"
grep -q "^Worst case after: " "$work/out" || fail "plan shows no worst case: $(cat "$work/out")"
grep -q "warning: the worst case, .* is over max_hourly_cost .*apply skips these fallback candidates: $DEAR on-demand in group 'gpu'" \
	"$work/err" || fail "plan does not warn about $DEAR: $(cat "$work/err")"
gc_ok plan -o json "$work/c.yaml"
jq -e --arg t "$DEAR" '.cost.worst_after > .cost.max_hourly_cost
	and .cost.after <= .cost.max_hourly_cost and .cost.over_cap == false
	and [.cost.skipped_candidates[] | .type] == [$t]' "$work/out" >/dev/null ||
	fail "plan -o json: $(jq -c .cost "$work/out")"

# no capacity for the cheap type: apply skips the dear one and fails, launching nothing
fault "$CLOUD:RunInstances:capacity,type=$CHEAP"
gc apply -y "$work/c.yaml"
[ "$rc" = 1 ] || fail "apply over the cap exited $rc"
grep -q "skipped $DEAR on-demand in ${ZONES[0]}: 2 × .* $cur/h would take the cluster to .* $cur/h, over max_hourly_cost" \
	"$work/err" || fail "apply does not say it skipped $DEAR: $(cat "$work/err")"
grep -q "error: 0 of 2 instances created in group 'gpu': skipped $DEAR on-demand: 2 × .*; the other candidates are out of capacity\$" "$work/err" ||
	fail "apply's error does not name the cap: $(cat "$work/err")"
if grep -q "again" "$work/err"; then
	fail "apply over the cap advises a re-run: $(cat "$work/err")"
fi
[ "$(alive_type e2e-cap "$DEAR")" = 0 ] || fail "apply launched $DEAR over the cap"
expect_alive e2e-cap 0 "after an apply over the cap"

# capacity is back: apply launches the cheap type
faults_clear
gc_ok apply -y "$work/c.yaml"
[ "$(alive_type e2e-cap "$CHEAP")" = 2 ] || fail "apply did not launch 2 x $CHEAP"
gc plan --detailed-exitcode "$work/c.yaml"
[ "$rc" = 0 ] || fail "plan after a converged apply exited $rc"

# the cap lowered under what runs: plan says so and exits 2; apply creates nothing
low=$(jq -n --argjson c "$cheap" '$c | . * 100 | floor / 100')
sed -i "s/max_hourly_cost: .*/max_hourly_cost: $low/" "$work/c.yaml"
gc plan --detailed-exitcode "$work/c.yaml"
[ "$rc" = 2 ] || fail "plan of a cluster over its cap exited $rc"
grep -q "^Over the limit: the cluster costs .* $cur/h, above max_hourly_cost $low" "$work/out" ||
	fail "plan does not say the cluster is over its cap: $(cat "$work/out")"
gc_ok plan -o json "$work/c.yaml"
jq -e '.cost.over_cap == true' "$work/out" >/dev/null || fail "plan -o json: over_cap"
gc_ok apply -y "$work/c.yaml"
grep -q "apply creates nothing more" "$work/out" || fail "apply does not say: $(cat "$work/out")"
expect_alive e2e-cap 2 "after an apply over the cap"

# the cloud gives no price: unknown, never 0
case $CLOUD in
aws) fault "aws:GetProducts:5xx" ;; # the Price List API's emulator has no quota error
alibaba) fault "alibaba:DescribePrice:quota" ;;
tencent) fault "tencent:InquiryPriceRunInstances:quota" ;;
esac
gc_ok status "$work/c.yaml"
grep -q "^gpu .* unknown *unknown  *-$" "$work/out" || fail "status: $(cat "$work/out")"
grep -q "2 nodes; cost unknown" "$work/out" || fail "status total: $(cat "$work/out")"
grep -q "0\.00" "$work/out" && fail "status prints 0.00 for an unknown price: $(cat "$work/out")"
gc_ok status -o json "$work/c.yaml"
jq -e '.cost.usd_per_hour == null and .cost.known == false
	and ([.nodes[].usd_per_hour] == [null, null])' "$work/out" >/dev/null ||
	fail "status -o json: $(cat "$work/out")"
gc_ok plan "$work/c.yaml"
grep -q "^Hourly cost: unknown (no price for $CHEAP (on-demand))" "$work/out" ||
	fail "plan with unknown prices: $(cat "$work/out")"
gc_ok plan -o json "$work/c.yaml"
jq -e '.cost.now == null and .cost.over_cap == false' "$work/out" >/dev/null ||
	fail "plan -o json with unknown prices: $(jq -c .cost "$work/out")"
faults_clear

gc_ok destroy -y "$work/c.yaml"
requests_valid
note ok
