#!/usr/bin/env bash
# show-gpus.sh BINARY: `gpucluster show-gpus` as a user runs it, without credentials (an
# environment with none, and no metadata services to ask): the
# shipped catalogue filtered by MODEL[:COUNT] and --cloud, sorted by price per GPU-hour
# within a currency (USD first), the currency on each row, --hours N's cost, JSON, and
# the wrong inputs (unknown model with did-you-mean, an impossible count, a count nobody
# sells, listing where the model is sold).
set -euo pipefail

bin=${1:?usage: show-gpus.sh PATH-TO-GPUCLUSTER}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gc-gpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

run() {
	set +e
	env -i PATH="$PATH" HOME="$tmp" AWS_EC2_METADATA_DISABLED=true \
		ALIBABA_CLOUD_ECS_METADATA_DISABLED=true TENCENTCLOUD_CVM_ROLE_DISABLED=true \
		"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	set -e
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
	last="gpucluster $*"
}

expect_rc() {
	[ "$rc" -eq "$1" ] || fail "$last: exit $rc, expected $1; stderr: $err"
}

expect_in() {
	local where=$1 text=$2 got
	if [ "$where" = out ]; then got=$out; else got=$err; fi
	case "$got" in
	*"$text"*) ;;
	*) fail "$last: $where lacks '$text': $got" ;;
	esac
}

# 8 x A100 on every cloud: the USD row first, then CNY rows cheapest GPU-hour first
run show-gpus A100:8
expect_rc 0
rows=$(printf '%s\n' "$out" | awk '$1 ~ /^(aws|alibaba|tencent)$/ { print $1 " " $3 " " $NF }')
want='aws p4d.24xlarge USD
tencent GT4.41XLARGE948 CNY
alibaba ecs.gn7e-c16g1.32xlarge CNY'
[ "$rows" = "$want" ] || fail "$last: rows $rows, expected $want"
expect_in out "NVSwitch, EFA"
expect_in out "aws: catalogue of 20"
expect_in out "(no credentials for aws): on-demand list prices in us-east-1"
expect_in out "spot is not shown"
# --offline: the same rows, no credentials looked for
run show-gpus --offline A100:8
expect_rc 0
[ "$(printf '%s\n' "$out" | awk '$1 ~ /^(aws|alibaba|tencent)$/ { print $1 " " $3 " " $NF }')" = "$want" ] ||
	fail "$last: rows differ from the catalogue's"
expect_in out "aws: catalogue of 20"
run show-gpus --offline --cloud aws --region us-east-1
expect_rc 64
expect_in err "--offline lists the shipped catalogue"
run show-gpus --cloud aws --region 'us-east-1/../x'
expect_rc 64
expect_in err "is not a region name"
run show-gpus --region us-east-1
expect_rc 64
expect_in err "--region, --profile and --endpoint name one cloud's: give --cloud"
# --all-regions lists the clouds with credentials live; the others (all, here) are shipped
run show-gpus --all-regions A100:8
expect_rc 0
expect_in out "aws: catalogue of 20"
# a region asked for, without credentials: an error naming the cloud
run show-gpus --cloud aws --region us-west-2
expect_rc 1
expect_in err "aws us-west-2: "

# memory narrows: only Alibaba sells the 80 GB A100 in eights
run show-gpus A100-80GB:8
expect_rc 0
[ "$(printf '%s\n' "$out" | grep -c 'A100')" -eq 1 ] || fail "$last: $out"
expect_in out "ecs.gn7e-c16g1.32xlarge"

# every row of one cloud, sorted by price per GPU-hour (PER-GPU-H, before COST, SPOT-COST,
# RES-1Y-COST and RES-3Y-COST), with the cost of 10 hours
run show-gpus --cloud aws --hours 10
expect_rc 0
per=$(printf '%s\n' "$out" | awk '$1 == "aws" { print $(NF - 5) }')
[ "$per" = "$(printf '%s\n' "$per" | sort -g)" ] || fail "$last: not sorted: $per"
expect_in out "COST"
run show-gpus --cloud aws --hours 10 T4:1
[ "$(printf '%s\n' "$out" | awk '$3 == "g4dn.xlarge" { print $(NF - 4) " " $NF }')" = "5.26 USD" ] ||
	fail "$last: 10 hours of g4dn.xlarge are not 5.26 USD: $out"
[ "$(printf '%s\n' "$out" | grep -c '^alibaba\|^tencent')" -eq 0 ] || fail "$last: other clouds"

# JSON: currency and cost per offer
run -o json show-gpus --hours 2 H100:8
expect_rc 0
node -e '
const d = JSON.parse(process.argv[1]);
const o = d.offers;
if (o.length !== 1 || o[0].type !== "p5.48xlarge" || o[0].currency !== "USD" ||
    o[0].gpus !== 8 || o[0].gpu_memory_gib !== 80 || Math.abs(o[0].on_demand_cost - 196.64) > 1e-6 ||
    !d.catalogue_date) { console.error(JSON.stringify(d)); process.exit(1); }
' "$out" || fail "$last: JSON"

# wrong inputs
run show-gpus A1000:8
expect_rc 64
expect_in err "unknown GPU model 'A1000' (did you mean 'A100'?)"
run show-gpus A100:32
expect_rc 64
expect_in err "'32' is not a GPU count: an instance has 1 to 16 GPUs"
run show-gpus A100:3
expect_rc 1
expect_in err "no GPU type of the catalogue matches 'A100:3'"
expect_in err "tencent sells A100:8 as GT4.41XLARGE948 (40 GB per GPU)"
run show-gpus --cloud aws A10:1
expect_rc 1
expect_in err "alibaba sells A10:1 as ecs.gn7i-c8g1.2xlarge"

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "show-gpus: all checks passed"
