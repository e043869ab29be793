#!/usr/bin/env bash
# glance.sh: every cluster at a glance and what it cost (issue 15, items 5 and 6). A user
# with clusters in two regions runs `list` and sees both with their nodes, GPUs and hourly
# price; a region that cannot be read is reported while the others are still listed; a
# cloud without credentials is skipped and said. `status` shows the cost so far, and
# `destroy` ends with what the nodes cost: node-hours per type and market and the total in
# the account's currency (CNY on a China-site account), within what the clock allows.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

case $CLOUD in
# PRICE: TYPE1's; MIN_S: the shortest time billed; SLACK: how much earlier than the launch
# the cloud's launch time may be (ECS's CreationTime is to the minute)
aws) R2=us-west-2 Z2=us-west-2a PRICE=1.006 GPUS=1 CUR=USD MIN_S=60 SLACK=0 ;;
alibaba) R2=cn-beijing Z2=cn-beijing-f PRICE=13.80 GPUS=1 CUR=CNY MIN_S=0 SLACK=60 ;;
tencent) R2=ap-shanghai Z2=ap-shanghai-2 PRICE=8.68 GPUS=1 CUR=CNY MIN_S=0 SLACK=0 ;;
esac
calc() { awk "BEGIN { printf \"$1\", ${*:2} }"; }

sim_start --no-rate-limits
where=(--cloud "$CLOUD" --endpoint "$ENDPOINT")

# 1. nothing yet: an empty list, in every region
gc_ok list "${where[@]}"
grep -qx 'No clusters found.' "$work/out" || fail "an empty account: $(cat "$work/out")"

# 2. a 2-node cluster here and a 1-node one in a second region, with a TTL
spec "$work/a.yaml" e2e-list-a workers 2 "$TYPE1" on-demand 'lifecycle:
  ttl: 2h'
spec "$work/b.yaml" e2e-list-b workers 1 "$TYPE1" on-demand
sed -i "s/^  region: .*/  region: $R2/; s/^    zones: .*/    zones: [$Z2]/" "$work/b.yaml"
t0=$(date +%s)
gc_ok apply -y "$work/a.yaml"
gc_ok apply -y "$work/b.yaml"

gc_ok list -o json "${where[@]}"
jq -e --arg r "$REGION" --arg r2 "$R2" --arg cur "$CUR" --argjson p "$PRICE" \
	--argjson g "$GPUS" '
	(.clusters | length) == 2 and .problems == []
	and (.clusters[] | select(.name == "e2e-list-a") | .region == $r and .nodes == 2
		and .gpus == 2 * $g and .currency == $cur
		and ((.cost_per_hour - 2 * $p) | fabs) < 1e-6 and .expires_at != null
		and .age_s >= 0 and .idle_after_s == null and .stopped == 0)
	and (.clusters[] | select(.name == "e2e-list-b") | .region == $r2 and .nodes == 1
		and .expires_at == null)' "$work/out" >/dev/null ||
	fail "list -o json: $(cat "$work/out")"
gc_ok list "${where[@]}"
head -n 1 "$work/out" | grep -Eq '^CLOUD +REGION +CLUSTER +NODES +GPUS +COST/H +AGE +EXPIRES +IDLE$' ||
	fail "list's header: $(head -n 1 "$work/out")"
grep -Eq "^$CLOUD +$REGION +e2e-list-a +2 +$((2 * GPUS)) +$(calc %.2f "2 * $PRICE") $CUR .* in 1h5[0-9]m +-$" "$work/out" ||
	fail "list's line for e2e-list-a: $(cat "$work/out")"
grep -Eq "^$CLOUD +$R2 +e2e-list-b +1 +$GPUS .* - +-$" "$work/out" ||
	fail "list's line for e2e-list-b: $(cat "$work/out")"

# 3. --region narrows it; a region the cloud does not answer for is reported, the
# others still listed, and the exit status says something is missing
gc_ok list -o json "${where[@]}" --region "$R2"
jq -e '[.clusters[].name] == ["e2e-list-b"]' "$work/out" >/dev/null ||
	fail "list --region $R2: $(cat "$work/out")"
# (a region name with a typo: the cloud refuses it)
gc list -o json "${where[@]}" --region "$REGION" --region nowhere-1
[ "$rc" = 1 ] || fail "list with an unreadable region exited $rc"
jq -e '[.clusters[].name] == ["e2e-list-a"]
	and (.problems | length) == 1 and .problems[0].region == "nowhere-1"
	and .problems[0].skipped == false' "$work/out" >/dev/null ||
	fail "list with an unreadable region: $(cat "$work/out")"
grep -q "error: $CLOUD nowhere-1: " "$work/err" ||
	fail "the unreadable region is not named: $(cat "$work/err")"

# 4. no cloud named and no credentials at all: every cloud skipped and said, not a failure
set +e
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE \
	-u ALIBABA_CLOUD_ACCESS_KEY_ID -u ALIBABA_CLOUD_ACCESS_KEY_SECRET \
	-u TENCENTCLOUD_SECRET_ID -u TENCENTCLOUD_SECRET_KEY AWS_EC2_METADATA_DISABLED=true \
	ALIBABA_CLOUD_ECS_METADATA_DISABLED=true TENCENTCLOUD_CVM_ROLE_DISABLED=true \
	"$GC_BIN" --no-color list >"$work/out" 2>"$work/err"
rc=$?
set -e
[ "$rc" = 0 ] || fail "list without credentials exited $rc: $(cat "$work/err")"
grep -q "^$CLOUD: skipped: .*no .* credentials found" "$work/err" ||
	fail "the cloud without credentials is not said: $(cat "$work/err")"
grep -qx 'No clusters found.' "$work/out" || fail "list without credentials: $(cat "$work/out")"
# a usage error: --endpoint without --cloud
gc list --endpoint "$ENDPOINT"
[ "$rc" = 64 ] || fail "list --endpoint without --cloud exited $rc"
grep -q "give --cloud" "$work/err" || fail "the usage error does not say what to do: $(cat "$work/err")"

# 5. the cost so far, per type and market
gc_ok status -o json "$work/a.yaml"
jq -e --arg cur "$CUR" '.cost.so_far.nodes == 2 and .cost.so_far.currency == $cur
	and .cost.so_far.by_type[0].market == "on-demand"
	and .cost.so_far.by_type[0].nodes == 2 and .cost.so_far.known' "$work/out" >/dev/null ||
	fail "status -o json's cost so far: $(cat "$work/out")"

# 6. destroy ends with what the nodes cost: 2 nodes from launch to now, at the price, with
# the cloud's minimum charge (EC2: 60 s), in the account's currency
gc_ok destroy -y "$work/a.yaml"
t1=$(date +%s)
line=$(grep '^What the terminated nodes cost: ' "$work/out") ||
	fail "destroy does not say what the nodes cost: $(cat "$work/out")"
total=$(sed -E "s/^What the terminated nodes cost: about ([0-9.]+) $CUR, ([0-9.]+) node-hours$/\1/" <<<"$line")
[ "$total" != "$line" ] || fail "the cost line's shape: $line"
lo=$(calc %.4f "2 * $PRICE * ($MIN_S > 0 ? $MIN_S : 0) / 3600 - 0.005")
hi=$(calc %.4f "2 * $PRICE * (($t1 - $t0 + 2 + $SLACK) > $MIN_S ? ($t1 - $t0 + 2 + $SLACK) : $MIN_S) / 3600 + 0.005")
awk -v t="$total" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(t >= lo && t <= hi) }' ||
	fail "destroy's cost $total $CUR is not within [$lo, $hi]"
grep -Eq "^  $TYPE1 +on-demand +2 nodes +[0-9.]+ node-hours  [0-9.]+ $CUR$" "$work/out" ||
	fail "destroy's line per type and market: $(cat "$work/out")"
gc_ok destroy -y -o json "$work/b.yaml"
jq -e --arg cur "$CUR" --arg t "$TYPE1" '.cost.nodes == 1 and .cost.currency == $cur
	and .cost.known and .cost.total >= 0 and .cost.by_type[0].type == $t' "$work/out" >/dev/null ||
	fail "destroy -o json's cost: $(cat "$work/out")"
gc_ok list "${where[@]}"
grep -qx 'No clusters found.' "$work/out" || fail "list after destroy: $(cat "$work/out")"
note "ok"
