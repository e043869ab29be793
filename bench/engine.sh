#!/usr/bin/env bash
# The engine at 1000 nodes against gpucluster-sim with EC2's documented rate limits on
# (bench/README.md, "Engine at 1000 nodes"). On one emulator: `gpucluster apply -y` of
# NODES in one group, `gpucluster plan` against them (best of 5), `gpucluster destroy -y`;
# then on a fresh emulator the same NODES launched one RunInstances call per instance
# (bench/engine-naive.c, the real engine and driver with max_create_batch 1). API calls
# come from the emulator's request log, wall time and peak memory from GNU time.
#
# Usage: bench/engine.sh [NODES [LATENCY_MS [PENDING_MS]]]   (default 1000 50 2000;
# PENDING_MS is also the emulator's --terminate-ms)
# GC_BENCH_CLOUD: aws (default), alibaba or tencent: the same runs on that cloud's API,
# with its documented limits (the naive run is AWS only).
# GC_BENCH_BUILD: the Release tree to build and use (default build/bench).
# GC_BENCH_NAIVE=0 skips the naive run, which takes minutes by design: the RunInstances
# request bucket allows only a few calls a second.
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-1000}
latency_ms=${2:-50}
pending_ms=${3:-2000}
build=${GC_BENCH_BUILD:-build/bench}
naive=${GC_BENCH_NAIVE:-1}
cloud=${GC_BENCH_CLOUD:-aws}

# Per cloud: the spec's region and type, the credentials, how a RunInstances call in the
# request log says how many it launched, the throttling code, and the buckets the
# shortest schedule is computed from: the documented RunInstances request bucket
# (docs/sim.md, what the emulator enforces), the driver's own, and the instance bucket.
#   aws: request (mutating) 50 tokens +5/s; resource 1000 instances +2/s; the driver's
#     RunInstances bucket (providers/aws/ec2.c, bucket_figures) 5 +2/s.
#   alibaba: per API 600 calls a minute (the emulator's choice: Alibaba publishes none),
#     5000 instances a minute; the driver keeps to the same.
#   tencent: RunInstances 10/s (CVM API overview); no instance bucket.
case $cloud in
aws)
	region=us-east-1 type=g5.xlarge
	export AWS_ACCESS_KEY_ID=AKIAGPUCLUSTERSIM001
	export AWS_SECRET_ACCESS_KEY=gpucluster-sim-aws-secret-key-0000000000
	export AWS_EC2_METADATA_DISABLED=true
	count='.params.MinCount | tonumber' throttle_re='^RequestLimitExceeded'
	doc_run_cap=50 doc_run_rate=5 drv_run_cap=5 drv_run_rate=2 res_cap=1000 res_rate=2
	;;
alibaba)
	region=cn-hangzhou type=ecs.gn7i-c8g1.2xlarge naive=0
	export ALIBABA_CLOUD_ACCESS_KEY_ID=LTAIgpuclustersim001
	export ALIBABA_CLOUD_ACCESS_KEY_SECRET=gpucluster-sim-alibaba-secret-000000
	export ALIBABA_CLOUD_ECS_METADATA_DISABLED=true
	count='.params.Amount | tonumber' throttle_re='^Throttling'
	doc_run_cap=600 doc_run_rate=10 drv_run_cap=600 drv_run_rate=10
	res_cap=5000 res_rate=83.33
	;;
tencent)
	region=ap-guangzhou type=GN7.2XLARGE32 naive=0
	export TENCENTCLOUD_SECRET_ID=AKIDgpuclustersim001
	export TENCENTCLOUD_SECRET_KEY=gpucluster-sim-tencent-secret-000000
	export TENCENTCLOUD_CVM_ROLE_DISABLED=true
	count='.params.InstanceCount' throttle_re='^RequestLimitExceeded'
	doc_run_cap=10 doc_run_rate=10 drv_run_cap=10 drv_run_rate=10 res_cap=1000000 res_rate=1
	;;
*)
	echo "engine.sh: unknown cloud '$cloud'" >&2
	exit 2
	;;
esac

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGC_SANITIZE= >/dev/null
cmake --build "$build" -j"$(nproc)" --target gpucluster gpucluster-sim engine-naive >/dev/null
gc="$build/cmd/gpucluster"

dir=$(mktemp -d)
sim_pid=
stop_sim() {
	if [ -n "$sim_pid" ]; then
		kill "$sim_pid" 2>/dev/null || true
		wait "$sim_pid" 2>/dev/null || true
	fi
	sim_pid=
}
cleanup() {
	stop_sim
	rm -rf "$dir"
}
trap cleanup EXIT

export HOME="$dir/home" GPUCLUSTER_STATE_DIR="$dir/state" XDG_STATE_HOME="$dir/xdg"
mkdir -p "$HOME"

# sim_start: a fresh emulator (full buckets, empty request log) and a spec for it.
sim_start() {
	rm -f "$dir/ready.json"
	: >"$dir/requests.log"
	"$build/sim/gpucluster-sim" --no-ssh --seed 1 --latency-ms "$latency_ms" \
		--pending-ms "$pending_ms" --terminate-ms "$pending_ms" \
		--ready-file "$dir/ready.json" --request-log "$dir/requests.log" \
		2>"$dir/sim.err" &
	sim_pid=$!
	for _ in $(seq 100); do
		[ -s "$dir/ready.json" ] && break
		sleep 0.1
	done
	[ -s "$dir/ready.json" ] || {
		echo "engine.sh: the emulator did not start" >&2
		cat "$dir/sim.err" >&2
		exit 1
	}
	export GPUCLUSTER_CHECKIP_URL
	GPUCLUSTER_CHECKIP_URL="$(jq -r .control "$dir/ready.json")/checkip"
	cat >"$dir/c.yaml" <<-EOF
		name: bench-$1
		provider:
		  name: $cloud
		  region: $region
		  endpoint: $(jq -r ".$cloud" "$dir/ready.json")
		node_groups:
		  - name: workers
		    count: $nodes
		    instance_types: [$type]
		    market: on-demand
	EOF
}

# timed NAME CMD...: runs CMD under GNU time; its output in $dir/NAME.out/.err, its
# request-log lines in $dir/NAME.log; sets $wall (s) and $rss (KiB). Fails on exit != 0.
timed() {
	local name=$1 mark
	shift
	mark=$(wc -l <"$dir/requests.log")
	if ! /usr/bin/time -o "$dir/time" -f '%e %M' "$@" >"$dir/$name.out" 2>"$dir/$name.err"; then
		echo "engine.sh: $name failed:" >&2
		tail -n 20 "$dir/$name.err" >&2
		exit 1
	fi
	tail -n +"$((mark + 1))" "$dir/requests.log" >"$dir/$name.log"
	read -r wall rss <"$dir/time"
}

# calls LOG: "N (Action n, ...)", actions in the order of their first call.
calls() {
	jq -r -s '"\(length) (" + (reduce .[].action as $a ({}; .[$a] += 1) | to_entries
		| map("\(.key) \(.value)") | join(", ")) + ")"' "$1"
}

# throttles LOG: the cloud's throttling answers.
throttles() {
	jq -s --arg re "$throttle_re" '[.[] | select(.error_code != null)
		| select(.error_code | test($re))] | length' "$1"
}

# launched LOG: instances the successful RunInstances calls of LOG launched.
launched() {
	jq -s "[.[] | select(.action == \"RunInstances\" and .status == 200
		and .error_code == null) | $count] | add // 0" "$1"
}

# shortest LOG CAP RATE: the shortest schedule (seconds) the limits allow for the calls in
# LOG, with a RunInstances request bucket of CAP tokens refilling RATE a second (see
# bench/README.md for the derivation):
#   L*(C - k) + max((k-1)*L, (k-CAP)/RATE, (N-1000)/2) + P + L
# C: calls up to and including the last RunInstances; k: RunInstances calls; N: instances.
shortest() {
	jq -r -s '(map(.action) | rindex("RunInstances")) as $last
		| [($last + 1), ([.[] | select(.action == "RunInstances")] | length),
		   ([.[] | select(.action == "RunInstances" and .status == 200
		     and .error_code == null) | '"$count"'] | add)] | @tsv' "$1" |
		awk -v L="$latency_ms" -v P="$pending_ms" -v cap="$2" -v rate="$3" \
			-v rcap="$res_cap" -v rrate="$res_rate" '{
			L /= 1000; P /= 1000; c = $1; k = $2; n = $3
			s = (k - 1) * L
			if ((k - cap) / rate > s) s = (k - cap) / rate
			if ((n - rcap) / rrate > s) s = (n - rcap) / rrate
			printf "%.2f\n", L * (c - k) + s + P + L
		}'
}

# span LOG FROM first|last TO first|last: seconds between two calls (log times), e.g.
# span LOG RunInstances first RunInstances last.
span() {
	jq -r -s --arg f "$2" --arg fw "$3" --arg t "$4" --arg tw "$5" '
		def s: (.ts[0:19] + "Z" | fromdate) + (.ts[20:23] | tonumber) / 1000;
		def pick($a; $w): [.[] | select(.action == $a)] | if $w == "first" then first
			else last end | s;
		pick($t; $tw) - pick($f; $fw) | . * 100 | round / 100' "$1"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", a / b }'; }

echo "engine.sh: $cloud, $nodes nodes, latency ${latency_ms} ms, pending ${pending_ms} ms," \
	"rate limits on; $(nproc) CPUs" >&2

# 1. apply
sim_start batched
timed apply "$gc" --no-color apply -y --no-bootstrap "$dir/c.yaml"
apply_wall=$wall apply_rss=$rss
apply_calls=$(calls "$dir/apply.log")
apply_thr=$(throttles "$dir/apply.log")
apply_min=$(shortest "$dir/apply.log" "$doc_run_cap" "$doc_run_rate")
apply_drv=$(shortest "$dir/apply.log" "$drv_run_cap" "$drv_run_rate")
apply_runs=$(span "$dir/apply.log" RunInstances first RunInstances last)
apply_wait=$(span "$dir/apply.log" RunInstances last DescribeInstances last)
launched=$(launched "$dir/apply.log")
[ "$launched" = "$nodes" ] || {
	echo "engine.sh: apply launched $launched instances, not $nodes" >&2
	exit 1
}

# 2. plan, best of 5 (no changes: exit 0)
plan_wall='' plan_rss=''
for _ in 1 2 3 4 5; do
	timed plan "$gc" --no-color plan --detailed-exitcode "$dir/c.yaml"
	if [ -z "$plan_wall" ] || awk "BEGIN{exit !($wall < $plan_wall)}"; then plan_wall=$wall; fi
	if [ -z "$plan_rss" ] || [ "$rss" -gt "$plan_rss" ]; then plan_rss=$rss; fi
done
plan_calls=$(calls "$dir/plan.log")
plan_describe=$(jq -s '[.[] | select(.action | startswith("Describe"))] | length' \
	"$dir/plan.log")
grep -q 'No changes' "$dir/plan.out" || {
	echo "engine.sh: plan after apply shows changes" >&2
	exit 1
}

# 3. destroy
timed destroy "$gc" --no-color destroy -y "$dir/c.yaml"
destroy_wall=$wall destroy_rss=$rss
destroy_calls=$(calls "$dir/destroy.log")
destroy_thr=$(throttles "$dir/destroy.log")
stop_sim

echo "| measure | result |"
echo "|---|---|"
echo "| apply $nodes nodes: wall | $apply_wall s |"
echo "| apply: API calls | $apply_calls |"
echo "| apply: throttling errors received | $apply_thr |"
echo "| apply: first to last RunInstances | $apply_runs s |"
echo "| apply: last RunInstances to last DescribeInstances (the wait) | $apply_wait s |"
echo "| apply: shortest schedule, documented buckets | $apply_min s (ratio $(ratio "$apply_wall" "$apply_min")) |"
echo "| apply: shortest schedule, the driver's RunInstances bucket ($drv_run_cap, $drv_run_rate/s) | $apply_drv s (ratio $(ratio "$apply_wall" "$apply_drv")) |"
echo "| apply: max RSS | $apply_rss KiB |"
echo "| plan against $nodes nodes: wall (best of 5) | $plan_wall s |"
echo "| plan: API calls (Describe: $plan_describe) | $plan_calls |"
echo "| plan: max RSS (worst of 5) | $plan_rss KiB |"
echo "| destroy $nodes nodes: wall | $destroy_wall s |"
echo "| destroy: API calls | $destroy_calls |"
echo "| destroy: throttling errors received | $destroy_thr |"
echo "| destroy: max RSS | $destroy_rss KiB |"

[ "$naive" = 0 ] && exit 0

# 4. one instance per call, on a fresh emulator (full buckets)
sim_start naive
timed naive "$build/bench/engine-naive" "$dir/c.yaml" 1
naive_calls=$(calls "$dir/naive.log")
naive_thr=$(throttles "$dir/naive.log")
naive_min=$(shortest "$dir/naive.log" "$doc_run_cap" "$doc_run_rate")
naive_drv=$(shortest "$dir/naive.log" "$drv_run_cap" "$drv_run_rate")
naive_runs=$(span "$dir/naive.log" RunInstances first RunInstances last)
stop_sim
echo "| naive (1 instance per RunInstances): wall | $wall s |"
echo "| naive: API calls | $naive_calls |"
echo "| naive: throttling errors received | $naive_thr |"
echo "| naive: first to last RunInstances | $naive_runs s |"
echo "| naive: shortest schedule, documented buckets | $naive_min s (ratio $(ratio "$wall" "$naive_min")) |"
echo "| naive: shortest schedule, the driver's RunInstances bucket | $naive_drv s (ratio $(ratio "$wall" "$naive_drv")) |"
echo "| naive: max RSS | $rss KiB |"
echo "| naive / batched wall | $(ratio "$wall" "$apply_wall") (documented-bucket bounds: $(ratio "$naive_min" "$apply_min")) |"
echo "engine.sh: $(cat "$dir/naive.out")" >&2
