#!/usr/bin/env bash
# gpus.sh: a user who asks by GPU (issue 16). The spec says `gpus: A100:8` instead of an
# instance type: validate shows it, plan resolves it to the cloud's type for 8 x A100 that
# the zones offer and says which it picked, plan --hours 10 says what 10 hours cost
# on-demand and on spot, apply launches that type (the request log
# says so). A GPU that comes in two types shows the cheaper picked and the other as the
# alternative. Wrong inputs fail with the key's LINE:COL: a misspelt model (did you
# mean), a GPU the cloud does not sell (what it sells), and a GPU the group's zones do not
# offer (the region's zones and the other regions that do). A type must be offered in
# every zone the group names, as plan's check of instance_types wants.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

case $CLOUD in
aws)
	A100=p4d.24xlarge CURRENCY=USD RES1=203.19 RES3=131.09 TERM="reservation, no upfront"
	TWO_GPU=A10G:1 TWO_PICK=g5.xlarge TWO_ALT=g5.2xlarge
	GAP_GPU=L4:4 GAP_TYPE=g6.12xlarge GAP_ZONE=us-east-1b GAP_OFFERED=us-east-1a
	;;
alibaba)
	A100=ecs.gn7e-c16g1.32xlarge CURRENCY=CNY RES1=1723.10 RES3=1111.68 TERM="subscription, paid upfront"
	TWO_GPU=T4:1 TWO_PICK=ecs.gn6i-c4g1.xlarge TWO_ALT=ecs.gn6i-c16g1.4xlarge
	GAP_GPU=L20:2 GAP_TYPE=ecs.gn8is-2x.8xlarge GAP_ZONE=cn-hangzhou-j
	GAP_OFFERED=cn-hangzhou-h
	;;
tencent)
	A100=GT4.41XLARGE948 CURRENCY=CNY A100_ZONE=ap-guangzhou-6 # ap-guangzhou-7 does not sell it
	RES1=1646.72 RES3=1062.40 TERM="subscription, paid upfront"
	TWO_GPU= # Tencent's catalogue has one type per GPU and count
	GAP_GPU=A100:8 GAP_TYPE=GT4.41XLARGE948 GAP_ZONE=ap-guangzhou-7
	GAP_OFFERED=ap-guangzhou-3
	;;
esac

sim_start --no-rate-limits
spec "$work/base.yaml" e2e-gpus workers 1
f=$work/gpus.yaml
# with_gpus GPUS [ZONE]: the base spec with gpus instead of instance_types (line 11, col 11)
with_gpus() {
	sed "s/^    instance_types: .*/    gpus: $1/" "$work/base.yaml" >"$f"
	if [ -n "${2:-}" ]; then
		sed -i "s/^    zones: .*/    zones: [$2]/" "$f"
	fi
}

with_gpus A100:8 "${A100_ZONE:-}"
gc_ok validate "$f"
grep -qF "1 × gpus A100:8 (plan picks the type)" "$work/out" || fail "validate does not show gpus"

gc_ok plan "$f"
grep -qF "Group workers: gpus A100:8 (on-demand) -> $A100 (" "$work/out" ||
	fail "plan does not show the pick $A100"
grep -qF "picked; no alternative" "$work/out" || fail "plan does not say there is no alternative"
grep -qF "1 × $A100" "$work/out" || fail "the plan does not create $A100"
# the same pick in plan -o json
gc_ok -o json plan "$f"
jq -e --arg t "$A100" --arg cur "$CURRENCY" '.gpu_picks == [.gpu_picks[0]] and
	.gpu_picks[0].group == "workers" and .gpu_picks[0].gpus == "A100:8" and
	.gpu_picks[0].market == "on-demand" and .gpu_picks[0].picked.type == $t and
	.gpu_picks[0].picked.price_hourly > 0 and .gpu_picks[0].currency == $cur and
	.gpu_picks[0].alternatives == [] and .hours == null' "$work/out" >/dev/null ||
	fail "plan -o json does not show the pick: $(jq -c .gpu_picks "$work/out")"
[ "$(calls RunInstances)" = 0 ] || fail "plan launched something"

# what 10 hours of it cost, on-demand and on spot, with spot's caveat
gc_ok plan --hours 10 "$f"
grep -qE "^On-demand, 10 hours: [0-9]+\.[0-9]{2} (USD|CNY)$" "$work/out" ||
	fail "plan --hours 10 does not say the on-demand cost"
grep -qE "^On spot, 10 hours: [0-9]+\.[0-9]{2} (USD|CNY) \(at today's spot price, which changes; the cloud may interrupt a spot node at any time\)$" "$work/out" ||
	fail "plan --hours 10 does not say the spot cost with its caveat"
[ "$CLOUD" != aws ] || grep -qF "On-demand, 10 hours: 327.73 USD" "$work/out" ||
	fail "10 hours of p4d.24xlarge are not 327.73 USD"
# reserved: AWS's price list's Reserved terms, which the emulator prices at 62% and 40%
# of on-demand; ECS's and CVM's 1- and 3-year subscriptions (paid upfront), which the
# emulator prices at the same shares, spread over the hours of the term
if [ "$CLOUD" = aws ]; then
	grep -qF "Reserved 1 year, no upfront, 10 hours: $RES1 USD (the effective hourly price; a reservation bills every hour of its term, used or not)" \
		"$work/out" || fail "plan --hours does not say the 1-year reserved cost"
	grep -qF "Reserved 3 years, no upfront, 10 hours: $RES3 USD" "$work/out" ||
		fail "plan --hours does not say the 3-year reserved cost"
else
	grep -qF "Subscription 1 year, paid upfront, 10 hours: $RES1 CNY (the effective hourly price; a subscription bills every hour of its term, used or not)" \
		"$work/out" || fail "plan --hours does not say the 1-year subscription cost: $(cat "$work/out")"
	grep -qF "Subscription 3 years, paid upfront, 10 hours: $RES3 CNY" "$work/out" ||
		fail "plan --hours does not say the 3-year subscription cost"
fi
# the same figures in plan -o json --hours
od=$(sed -n 's/^On-demand, 10 hours: \([0-9.]*\) .*/\1/p' "$work/out")
sp=$(sed -n 's/^On spot, 10 hours: \([0-9.]*\) .*/\1/p' "$work/out")
gc_ok -o json plan --hours 10 "$f"
jq -e --arg cur "$CURRENCY" --argjson od "$od" --argjson sp "$sp" --argjson r1 "$RES1" \
	--argjson r3 "$RES3" --arg term "$TERM" '.hours == {hours: 10, reserved_term: $term,
	on_demand: {cost: $od, currency: $cur}, spot: {cost: $sp, currency: $cur},
	reserved_1y: {cost: $r1, currency: $cur}, reserved_3y: {cost: $r3, currency: $cur}}
	and .gpu_picks[0].picked.type != null' "$work/out" >/dev/null ||
	fail "plan -o json --hours 10 does not give the text's figures: $(jq -c .hours "$work/out")"

gc_ok apply -y "$f"
expect_alive e2e-gpus 1 "apply with gpus"
[ "$(alive_type e2e-gpus "$A100")" = 1 ] || fail "apply did not launch $A100"
jq -s -e --arg t "$A100" '[.[] | select(.action == "RunInstances") | tostring
	| select(contains($t))] | length > 0' "$work/requests.log" >/dev/null ||
	fail "no RunInstances for $A100 in the request log"
gc_ok plan "$f" # the same pick again: nothing to do
grep -qF "No changes." "$work/out" || fail "a second plan wants changes"
gc_ok status "$f"
gc_ok destroy -y "$f"
expect_alive e2e-gpus 0 "destroy"

# two types for one GPU: the cheaper is picked, the other is the fallback
if [ -n "$TWO_GPU" ]; then
	with_gpus "$TWO_GPU"
	gc_ok plan "$f"
	grep -qF "gpus $TWO_GPU (on-demand) -> $TWO_PICK (" "$work/out" ||
		fail "plan did not pick $TWO_PICK"
	grep -qF "alternatives: $TWO_ALT (" "$work/out" || fail "plan does not show $TWO_ALT"
	gc_ok -o json plan "$f"
	jq -e --arg p "$TWO_PICK" --arg a "$TWO_ALT" '.gpu_picks[0].picked.type == $p and
		[.gpu_picks[0].alternatives[] | .type] == [$a] and
		.gpu_picks[0].alternatives[0].price_hourly > .gpu_picks[0].picked.price_hourly' \
		"$work/out" >/dev/null ||
		fail "plan -o json does not show $TWO_PICK and its alternative $TWO_ALT"
fi

# refused GPUS POS MESSAGE: plan and apply fail with FILE:POS: MESSAGE and launch nothing
refused() {
	local cmd
	for cmd in plan "apply -y"; do
		# shellcheck disable=SC2086 # the command's words
		gc $cmd "$f"
		[ "$rc" = 1 ] || fail "$1: $cmd exited $rc"
		grep -qF "$f:$2: $3" "$work/err" || fail "$1: $cmd did not say '$f:$2: $3'"
		[ "$(grep -cF "$3" "$work/err")" = 1 ] || fail "$1: $cmd said it more than once"
		[ "$(calls RunInstances)" = 1 ] || fail "$1: $cmd launched something"
	done
}

with_gpus A1000:8
gc validate "$f"
[ "$rc" = 1 ] || fail "validate took A1000"
grep -qF "$f:11:11: error: node_groups[0].gpus: unknown GPU model 'A1000' (did you mean 'A100'?)" \
	"$work/err" || fail "no did-you-mean for A1000"
with_gpus A100:17
gc plan "$f"
grep -qF "$f:11:11: error: node_groups[0].gpus: '17' is not a GPU count" "$work/err" ||
	fail "an impossible count was not refused"

with_gpus H200:8
refused "a GPU the cloud does not sell" 11:11 "gpus: $CLOUD sells no instance type with H200:8"
grep -qF "A100:8 ($A100)" "$work/err" || fail "what the cloud sells is not listed"

with_gpus "$GAP_GPU" "$GAP_ZONE"
refused "a GPU the zone does not offer" 11:11 \
	"gpus: $GAP_GPU is not offered in region '$REGION' in the group's zones"
grep -qF "$GAP_TYPE $GAP_OFFERED" "$work/err" || fail "the zones that offer it are not named"
grep -qF "in other regions: " "$work/err" || fail "the other regions are not named"
# show-gpus live (issue 16): with credentials it lists the region's GPU types from the
# cloud's API, with the zones offering each, on-demand and spot prices in the cloud's
# currency, sorted by price per GPU-hour, and says the source and its date; a second look
# reads the cache (no API request), --refresh asks again, --all-regions lists every region.
export XDG_CACHE_HOME=$work/cache
live=(show-gpus --cloud "$CLOUD" --endpoint "$ENDPOINT")
sent() { if [ -s "$work/requests.log" ]; then wc -l <"$work/requests.log"; else echo 0; fi; }
before=$(sent)
gc_ok "${live[@]}" --region "$REGION" --hours 10
grep -qE "^$CLOUD: live from the cloud's API in $REGION at 20[0-9-]+ [0-9:]+ UTC \(just now" \
	"$work/out" || fail "show-gpus does not say its listing is live, and of when"
grep -qF "spot: today's price, which changes; the cloud may interrupt" "$work/out" ||
	fail "show-gpus does not give spot's caveat"
# rows: CLOUD REGION TYPE GPUS VCPUS MEMORY ZONES INTERCONNECT... PER-HOUR SPOT-HOUR
# PER-GPU-H COST SPOT-COST RES-1Y-COST RES-3Y-COST CURRENCY
awk -v c="$CLOUD" '$1 == c { print $(NF - 5) }' "$work/out" >"$work/per-gpu"
[ -s "$work/per-gpu" ] || fail "show-gpus listed no type"
sort -g -c "$work/per-gpu" || fail "show-gpus is not sorted by price per GPU-hour"
[ "$(awk -v c="$CLOUD" '$1 == c { print $NF }' "$work/out" | sort -u)" = "$CURRENCY" ] ||
	fail "show-gpus rows are not all in $CURRENCY"
row=$(awk -v t="$A100" '$3 == t' "$work/out")
[ -n "$row" ] || fail "show-gpus does not list $A100"
# spot is cheaper than on-demand and both are priced; 10 hours of each
echo "$row" | awk '{ od = $(NF - 7); sp = $(NF - 6); c = $(NF - 4); sc = $(NF - 3)
	exit !(sp > 0 && sp < od && (c - od * 10) ^ 2 < 0.0001 && (sc - sp * 10) ^ 2 < 0.0001) }' ||
	fail "the $A100 row has no spot price or wrong costs: $row"
[ "$(echo "$row" | awk '{ print $(NF - 2) " " $(NF - 1) }')" = "$RES1 $RES3" ] ||
	fail "the $A100 row does not give the reserved costs $RES1 $RES3: $row"
if [ "$CLOUD" = aws ]; then
	grep -qF "reserved: the effective hourly price of a standard reservation" "$work/out" ||
		fail "show-gpus does not say what the reserved price is"
else
	grep -qF "reserved, where the cloud sells subscriptions: a 1- or 3-year subscription paid upfront" \
		"$work/out" || fail "show-gpus does not say the reserved price is a subscription's"
fi
after=$(sent)
[ "$after" -gt "$before" ] || fail "a live show-gpus sent no request"
[ "$(calls DescribeInstanceTypes)$(calls DescribeInstanceTypeConfigs)" != 00 ] ||
	fail "show-gpus did not ask for the instance types"

gc_ok -o json "${live[@]}" --region "$REGION" --hours 10 A100:8
[ "$(sent)" = "$after" ] || fail "a second show-gpus asked the API instead of the cache"
jq -e --arg t "$A100" --arg cur "$CURRENCY" --arg r "$REGION" --arg term "$TERM" '
	.sources == [.sources[0]] and .sources[0].source == "live" and .sources[0].cached
	and .sources[0].region == $r and (.sources[0].fetched_at | test("^20.*Z$"))
	and .offers[0].type == $t and .offers[0].currency == $cur and .offers[0].zones > 0
	and .offers[0].spot_hourly < .offers[0].on_demand_hourly and .offers[0].spot_cost > 0
	and .offers[0].reserved_1y_cost > 0 and .offers[0].reserved_3y_cost > 0
	and .offers[0].reserved_term == $term
	and ([.offers[] | .gpus] | unique) == [8]' "$work/out" >/dev/null ||
	fail "show-gpus -o json from the cache: $(cat "$work/out")"
gc_ok "${live[@]}" --region "$REGION" A100:8
grep -qF "(cached, " "$work/out" || fail "show-gpus does not say its listing is cached"
gc_ok "${live[@]}" --region "$REGION" --refresh A100:8
[ "$(sent)" -gt "$after" ] || fail "show-gpus --refresh did not ask the API"
grep -qF "(just now" "$work/out" || fail "show-gpus --refresh does not say it asked now"

gc_ok -o json "${live[@]}" --all-regions A100:8
jq -e --arg r "$REGION" '([.sources[] | .region] | length) > 1 and any(.sources[]; .region == $r)
	and all(.sources[]; .source == "live") and
	([.offers[] | .region] | unique | length) > 1' "$work/out" >/dev/null ||
	fail "show-gpus --all-regions did not list every region: $(cat "$work/out")"
gc show-gpus --cloud "$CLOUD" --endpoint "$ENDPOINT" --region no-such-region-9
[ "$rc" = 1 ] || fail "show-gpus in a region that does not exist exited $rc"

requests_valid
note "ok ($CLOUD)"
