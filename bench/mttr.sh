#!/usr/bin/env bash
# mttr.sh [CLOUD] [NOTICE_S]: MTTR on the emulator (issue 14), from a spot interruption
# notice to the job running again on a replaced node, with its breakdown:
#   notice -> hook (the watcher ran lifecycle.on_preempt) -> reclaim (the instance left
#   running) -> detect (apply starts; here at once, the bench is the detector) -> launch (a
#   new instance is running) -> bootstrap (apply returns) -> resume (the job's first output)
# Writes {"mttr_seconds": N, "breakdown": {...}} to mttr.json in the cluster's state
# directory, which `gpucluster report` reads, checks that report shows it, and prints it.
# MTTR_OUT=FILE keeps a copy. Needs build/cmd/gpucluster and build/sim/gpucluster-sim (or
# GC_BIN/GC_SIM_BIN), bwrap and sshd (the emulator's SSH nodes). See bench/README.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export GC_BIN=${GC_BIN:-$root/build/cmd/gpucluster}
export GC_SIM_BIN=${GC_SIM_BIN:-$root/build/sim/gpucluster-sim}
export GC_E2E_CLOUD=${1:-${GC_E2E_CLOUD:-aws}}
notice=${2:-10}
# shellcheck source=tests/e2e/lib.sh
. "$root/tests/e2e/lib.sh"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

sim_start_nodes --seed 11
{
	printf 'name: bench-mttr\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' \
		"$CLOUD" "$REGION" "$ENDPOINT"
	printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
	printf '  - name: workers\n    count: 1\n    instance_types: [%s]\n' "$TYPE_READY"
	printf '    image: gpu-ready\n    market: spot\n'
	printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  container: none\n'
	printf 'lifecycle:\n  on_preempt: %s\n' "'date +%s.%N >hook.at; echo saved >ckpt'"
} >"$work/s.yaml"

running_id() {
	state
	jq -r '[.instances[] | select(.tags["gpucluster:cluster"] == "bench-mttr")
		| select((.state | ascii_downcase) == "running")] | .[0].id // empty' \
		"$work/state.json"
}

gc_ok apply -y "$work/s.yaml"
id=$(running_id)
[ -n "$id" ] || fail "no running node"

t_notice=$(now)
control POST "/nodes/$id/preempt" "$notice" >/dev/null
# the hook's own clock, read while the node is still there
t_hook=
for _ in $(seq 1 $((notice * 8))); do
	gc exec "$work/s.yaml" -- 'cat hook.at 2>/dev/null'
	t_hook=$(grep -E '^[0-9]+\.[0-9]+$' "$work/out" | head -1 || true)
	[ -z "$t_hook" ] || break
	sleep 0.1
done
[ -n "$t_hook" ] || fail "the hook did not run inside the notice"
while [ "$(running_id)" = "$id" ]; do sleep 0.05; done
t_reclaim=$(now)

t_detect=$(now)
(
	cloud_export
	exec "$GC_BIN" --no-color apply -y "$work/s.yaml" >"$work/apply.out" 2>"$work/apply.err"
) &
bg=$!
t_launch=
while kill -0 "$bg" 2>/dev/null; do
	if [ -z "$t_launch" ] && [ -n "$(running_id)" ]; then t_launch=$(now); fi
	sleep 0.05
done
wait "$bg" || fail "apply failed: $(cat "$work/apply.err")"
t_boot=$(now)
[ -n "$t_launch" ] || t_launch=$t_boot

gc_ok run "$work/s.yaml" -- 'cat ckpt; echo resumed'
grep -q resumed "$work/out" || fail "the job did not resume: $(cat "$work/out")"
t_resume=$(now)

dir=$GPUCLUSTER_STATE_DIR/clusters/$CLOUD/$REGION/bench-mttr
mkdir -p "$dir"
jq -n --argjson total "$(since "$t_notice" "$t_resume")" \
	--argjson hook "$(since "$t_notice" "$t_hook")" \
	--argjson reclaim "$(since "$t_hook" "$t_reclaim")" \
	--argjson detect "$(since "$t_reclaim" "$t_detect")" \
	--argjson launch "$(since "$t_detect" "$t_launch")" \
	--argjson bootstrap "$(since "$t_launch" "$t_boot")" \
	--argjson resume "$(since "$t_boot" "$t_resume")" \
	--arg cloud "$CLOUD" --argjson notice "$notice" \
	'{mttr_seconds: $total, cloud: $cloud, notice_s: $notice, simulated: true,
	  breakdown: {notice_to_hook: $hook, hook_to_reclaim: $reclaim,
	  reclaim_to_detect: $detect, detect_to_launch: $launch,
	  launch_to_bootstrapped: $bootstrap, bootstrapped_to_resumed: $resume}}' \
	>"$dir/mttr.json"
[ -z "${MTTR_OUT:-}" ] || cp "$dir/mttr.json" "$MTTR_OUT"
# report reads it (its probe may fail on a bench node; the MTTR line is what counts here)
gc report "$work/s.yaml"
grep -q "^  $(jq -r '.mttr_seconds | round' "$dir/mttr.json") s$" "$work/out" ||
	echo "mttr.sh: note: report did not show the MTTR: $(tail -3 "$work/out")" >&2
cat "$dir/mttr.json"
gc_ok destroy -y "$work/s.yaml"
