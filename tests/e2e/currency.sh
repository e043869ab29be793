#!/usr/bin/env bash
# currency.sh: money has a currency. A user of a China-site account (Alibaba, Tencent:
# prices in CNY) writes a cap in USD: plan refuses, naming both currencies and the key to
# set; with the rate the plan shows CNY and compares the cap converted; -o json says CNY;
# a spot bid goes to the cloud converted. An international-site account prices in USD
# with no rate at all. On AWS (USD prices) a cap written in CNY needs the rate too.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

RATE=7.1
case $CLOUD in
aws) PRICE=1.006 ACCOUNT=USD ;;        # g5.xlarge, AWS Price List
alibaba) PRICE=13.80 ACCOUNT=CNY ;;    # ecs.gn7i-c8g1.2xlarge, China site
tencent) PRICE=8.68 ACCOUNT=CNY ;;     # GN7.2XLARGE32, China site
esac
# awk FORMAT EXPR...: arithmetic for the expected figures
calc() { awk "BEGIN { printf \"$1\", ${*:2} }"; }

sim_start --seed 7 \
	--cred alibaba:LTAIgpuclusterintl01:gpucluster-sim-alibaba-intl-secret:intl \
	--cred tencent:AKIDgpuclusterintl01:gpucluster-sim-tencent-intl-secret:intl

# lifecycle YAML for a spec: cap CURRENCY [RATE]
life() {
	printf 'lifecycle:\n  max_hourly_cost: %s\n' "$1"
	[ -z "${2:-}" ] || printf '  currency: %s\n' "$2"
	[ -z "${3:-}" ] || printf '  cny_per_usd: %s\n' "$3"
}

if [ "$ACCOUNT" = CNY ]; then
	# 1. a cap in USD (the default) against CNY prices, no rate: refused, with where
	low=$(calc %.2f "$PRICE / $RATE - 0.10")
	high=$(calc %.2f "$PRICE / $RATE + 0.10")
	spec "$work/c.yaml" e2e-money workers 1 "$TYPE1" on-demand "$(life "$high")"
	line=$(grep -n 'max_hourly_cost' "$work/c.yaml" | cut -d: -f1)
	gc plan "$work/c.yaml"
	[ "$rc" = 1 ] || fail "plan with a USD cap on a CNY account exited $rc"
	grep -q "prices on this account are in CNY but lifecycle.max_hourly_cost ($work/c.yaml:$line:20) is in USD" "$work/err" ||
		fail "the refusal does not name both currencies and the cap's place"
	grep -q 'set lifecycle.cny_per_usd (yuan per US dollar) or lifecycle.currency: CNY' "$work/err" ||
		fail "the refusal does not name the key to set"
	[ "$(calls RunInstances)" = 0 ] || fail "a refused plan launched"
	gc apply -y "$work/c.yaml"
	[ "$rc" = 1 ] || fail "apply with a USD cap on a CNY account exited $rc"
	[ "$(alive e2e-money)" = 0 ] || fail "a refused apply launched"

	# 2. with the rate, a cap below the price in CNY is refused in CNY, with the figures
	spec "$work/c.yaml" e2e-money workers 1 "$TYPE1" on-demand "$(life "$low" "" "$RATE")"
	gc plan "$work/c.yaml"
	[ "$rc" = 1 ] || fail "plan over the converted cap exited $rc"
	grep -q "max_hourly_cost $(calc %.2f "$low * $RATE") CNY/h exceeded: the plan costs $(calc %.2f "$PRICE") CNY/h" "$work/err" ||
		fail "the over-cap refusal does not compare in CNY"

	# 3. a cap above it: the plan shows CNY prices and the cap in CNY and as written
	spec "$work/c.yaml" e2e-money workers 1 "$TYPE1" on-demand "$(life "$high" "" "$RATE")"
	gc_ok plan "$work/c.yaml"
	grep -q "at $(calc %.2f "$PRICE") CNY/h each" "$work/out" || fail "plan does not price in CNY"
	grep -q "limit $(calc %.2f "$high * $RATE") CNY/h ($high USD/h at $RATE CNY per USD)" "$work/out" ||
		fail "plan does not show the converted cap"
	grep -q 'USD/h each\|\$' "$work/out" && fail "plan shows a CNY price as USD"
	gc_ok plan -o json "$work/c.yaml"
	jq -e --argjson p "$PRICE" --argjson cap "$(calc %.4f "$high * $RATE")" \
		'.cost.currency == "CNY" and (.cost.after - $p | fabs) < 0.001
		and (.cost.max_hourly_cost - $cap | fabs) < 0.001' "$work/out" >/dev/null ||
		fail "plan -o json does not carry the CNY figures: $(jq -c .cost "$work/out")"

	# 4. apply, then status in CNY
	gc_ok apply -y "$work/c.yaml"
	[ "$(alive e2e-money)" = 1 ] || fail "apply did not launch the node"
	gc_ok status -o json "$work/c.yaml"
	jq -e '.cost.currency == "CNY" and .nodes[0].currency == "CNY"' "$work/out" >/dev/null ||
		fail "status -o json does not say CNY: $(cat "$work/out")"
	gc_ok status "$work/c.yaml"
	grep -q "CNY/h now" "$work/out" || fail "status does not show CNY"
	gc_ok destroy -y "$work/c.yaml"

	# 5. a spot bid in USD goes to the cloud in CNY, at the rate, rounded down
	: >"$work/requests.log"
	spec "$work/s.yaml" e2e-bid workers 1 "$TYPE1" spot "$(life 100 "" "$RATE")
    "
	sed -i 's/^    market: spot$/    market: spot\n    max_spot_price: 2.5/' "$work/s.yaml"
	gc_ok apply -y "$work/s.yaml"
	bid=$(jq -s -r '[.[] | select(.action == "RunInstances") | .params | .. | objects
		| to_entries[] | select(.key | test("SpotPriceLimit|MaxPrice$")) | .value][0]
		// empty' \
		"$work/requests.log")
	[ "$bid" = 17.75 ] || fail "the bid of 2.5 USD went out as '$bid', not 17.75 CNY"
	gc_ok destroy -y "$work/s.yaml"

	# 6. the cap written in CNY needs no rate
	spec "$work/c.yaml" e2e-money workers 1 "$TYPE1" on-demand "$(life 100 CNY)"
	gc_ok plan "$work/c.yaml"
	grep -q "limit 100.00 CNY/h\.$" "$work/out" || fail "a CNY cap is not shown as written"

	# 7. an international-site account: USD prices, a USD cap, no rate needed
	case $CLOUD in
	alibaba) cloud_export() {
		export ALIBABA_CLOUD_ACCESS_KEY_ID=LTAIgpuclusterintl01
		export ALIBABA_CLOUD_ACCESS_KEY_SECRET=gpucluster-sim-alibaba-intl-secret
		export ALIBABA_CLOUD_ECS_METADATA_DISABLED=true
	} ;;
	tencent) cloud_export() {
		export TENCENTCLOUD_SECRET_ID=AKIDgpuclusterintl01
		export TENCENTCLOUD_SECRET_KEY=gpucluster-sim-tencent-intl-secret
		export TENCENTCLOUD_CVM_ROLE_DISABLED=true
		export GPUCLUSTER_TENCENT_SITE=intl
	} ;;
	esac
	usd=$(calc %.2f "int($PRICE / 7.2 * 10000 + 0.5) / 10000")
	spec "$work/c.yaml" e2e-intl workers 1 "$TYPE1" on-demand "$(life 10)"
	gc_ok plan "$work/c.yaml"
	grep -q "at $usd USD/h each" "$work/out" || fail "an international account is not priced in USD"
	grep -q "limit 10.00 USD/h\.$" "$work/out" || fail "the USD cap is not shown as written"
	gc_ok plan -o json "$work/c.yaml"
	jq -e '.cost.currency == "USD"' "$work/out" >/dev/null || fail "plan -o json does not say USD"
	if [ "$CLOUD" = tencent ]; then
		# a site gpucluster does not know is refused, not guessed
		set +e
		cloud_env env GPUCLUSTER_TENCENT_SITE=abroad "$GC_BIN" --no-color plan "$work/c.yaml" \
			>"$work/out" 2>"$work/err"
		rc=$?
		set -e
		[ "$rc" = 1 ] || fail "plan with GPUCLUSTER_TENCENT_SITE=abroad exited $rc"
		grep -q "GPUCLUSTER_TENCENT_SITE 'abroad' is not china or intl" "$work/err" ||
			fail "the unknown site is not named"
	fi
else
	# AWS prices in USD: a cap written in CNY needs the rate
	spec "$work/c.yaml" e2e-money workers 1 "$TYPE1" on-demand "$(life 10 CNY)"
	line=$(grep -n 'max_hourly_cost' "$work/c.yaml" | cut -d: -f1)
	gc plan "$work/c.yaml"
	[ "$rc" = 1 ] || fail "plan with a CNY cap on AWS exited $rc"
	grep -q "prices on this account are in USD but lifecycle.max_hourly_cost ($work/c.yaml:$line:20) is in CNY: set lifecycle.cny_per_usd (yuan per US dollar) or lifecycle.currency: USD" "$work/err" ||
		fail "the refusal does not name both currencies and the key"
	spec "$work/c.yaml" e2e-money workers 1 "$TYPE1" on-demand "$(life 10 CNY "$RATE")"
	gc_ok plan "$work/c.yaml"
	grep -q "at $PRICE\\|at $(calc %.2f "$PRICE") USD/h each" "$work/out" || fail "AWS is not priced in USD"
	grep -q "limit $(calc %.2f "10 / $RATE") USD/h (10.00 CNY/h at $RATE CNY per USD)" "$work/out" ||
		fail "the CNY cap is not shown converted"
	gc_ok plan -o json "$work/c.yaml"
	jq -e '.cost.currency == "USD"' "$work/out" >/dev/null || fail "plan -o json does not say USD"
	# a bid in CNY goes to EC2 in USD, at the rate, rounded down (10 / 7.1 = 1.408450...)
	: >"$work/requests.log"
	spec "$work/s.yaml" e2e-bid workers 1 "$TYPE1" spot "$(life 100 CNY "$RATE")"
	sed -i 's/^    market: spot$/    market: spot\n    max_spot_price: 10/' "$work/s.yaml"
	gc_ok apply -y "$work/s.yaml"
	bid=$(jq -s -r '[.[] | select(.action == "RunInstances") | .params | .. | objects
		| to_entries[] | select(.key | test("MaxPrice$")) | .value][0] // empty' \
		"$work/requests.log")
	[ "$bid" = 1.40845 ] || fail "the bid of 10 CNY went out as '$bid', not 1.40845 USD"
	gc_ok destroy -y "$work/s.yaml"
	# the default: USD cap, USD prices, no rate
	spec "$work/c.yaml" e2e-money workers 1 "$TYPE1" on-demand "$(life 10)"
	gc_ok plan "$work/c.yaml"
	grep -q "limit 10.00 USD/h\.$" "$work/out" || fail "a USD cap on AWS is not shown as written"
fi
gc_ok validate -o json "$work/c.yaml"
jq -e '.files[0].spec.lifecycle.currency == "USD"' "$work/out" >/dev/null ||
	fail "validate -o json has no lifecycle.currency: $(head -c 400 "$work/out")"
requests_valid
note "ok"
