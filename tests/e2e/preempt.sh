#!/usr/bin/env bash
# preempt.sh: a spot node reclaimed by the cloud (docs/internals/spot.md). The bootstrap
# installs the spot watcher; the cloud gives the interruption notice on the node's metadata
# service (AWS IMDSv2 with its token, Alibaba's and Tencent's termination-time, UTC+8 on
# Tencent) and reclaims the instance when the notice runs out; the watcher runs
# lifecycle.on_preempt inside the window (its output is on the node); apply replaces the
# node. A hook that hangs is stopped at its bound and the event says so. Nothing leaks.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start_nodes --seed 11
t0=$SECONDS
lap() { note "$1 ($((SECONDS - t0)) s)"; }

# preempt_spec HOOK [TIMEOUT]: one spot node on the GPU-ready image, the hook in lifecycle
preempt_spec() {
	{
		printf 'name: e2e-spot\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' \
			"$CLOUD" "$REGION" "$ENDPOINT"
		printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
		printf '  - name: workers\n    count: 1\n    instance_types: [%s]\n' "$TYPE_READY"
		printf '    image: gpu-ready\n    market: spot\n'
		printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  container: none\n'
		printf 'lifecycle:\n  on_preempt: %s\n' "$1"
		[ -z "${2:-}" ] || printf '  on_preempt_timeout: %s\n' "$2"
	} >"$work/s.yaml"
}

# the running node's instance id
node_id() {
	state
	jq -r '[.instances[] | select(.tags["gpucluster:cluster"] == "e2e-spot")
		| select((.state | ascii_downcase) == "running")] | .[0].id // empty' \
		"$work/state.json"
}

# event_has ID PATTERN: within the notice window, the node's event record matches PATTERN
event_has() {
	for _ in $(seq 1 40); do
		gc exec "$work/s.yaml" -- 'cat ~/.gpucluster/preempt/event 2>/dev/null'
		grep -q -- "$2" "$work/out" && return 0
		gone "$1" && fail "node $1 was reclaimed before its event showed '$2': $(cat "$work/out")"
		sleep 0.25
	done
	fail "the event of node $1 never showed '$2': $(cat "$work/out")"
}

# wait_gone ID: the cloud reclaims the instance once the notice runs out (15 s at most)
wait_gone() {
	for _ in $(seq 1 60); do
		st=$(instance_state "$1")
		case "$st" in '' | shutting-down | terminated | stopping) return 0 ;; esac
		sleep 0.25
	done
	fail "instance $1 is still $(instance_state "$1") after its notice ran out"
}

# status_reason ID: the reason and preempted flag status -o json gives node ID ("" when the
# node is not listed)
status_reason() {
	gc_ok status -o json "$work/s.yaml"
	jq -r --arg id "$1" '.nodes[] | select(.id == $id) | "\(.reason) \(.preempted)"' \
		"$work/out"
}

# status_shows ID REASON: status lists node ID with the cloud's reason, a spot reclaim, in
# JSON and under its row in the text
status_shows() {
	for _ in $(seq 1 40); do
		[ "$(status_reason "$1")" = "$2 true" ] && break
		sleep 0.25
	done
	[ "$(status_reason "$1")" = "$2 true" ] ||
		fail "status does not show node $1 reclaimed ($2): $(cat "$work/out")"
	gc_ok status "$work/s.yaml"
	grep -q "reason: $2 (spot capacity reclaimed by the cloud)" "$work/out" ||
		fail "status's text does not give node $1's reason: $(cat "$work/out")"
}

# a bad hook: a newline is refused with its place
preempt_spec '"echo a\nb"'
gc validate "$work/s.yaml"
[ "$rc" != 0 ] || fail "validate took a two-line on_preempt"
grep -Eq ':[0-9]+:[0-9]+: .*lifecycle.on_preempt' "$work/err" ||
	fail "the bad on_preempt is not named with its place: $(cat "$work/err")"

# the hook saves a checkpoint and says when
preempt_spec "'echo step-41 >ckpt; date +%s >ckpt.at; echo checkpoint saved'"
gc_ok apply -y "$work/s.yaml"
lap "applied"
gc_ok exec "$work/s.yaml" -- 'systemctl is-active gpucluster-preempt'
grep -q active "$work/out" || fail "the spot watcher is not running: $(cat "$work/out")"
id=$(node_id)
[ -n "$id" ] || fail "no running node"

# the notice, 8 s ahead: no event before it
gc_ok exec "$work/s.yaml" -- 'test ! -e ~/.gpucluster/preempt/event && echo none'
grep -qx none "$work/out" || fail "an event before any notice: $(cat "$work/out")"
[ "$(status_reason "$id")" = "null false" ] ||
	fail "status gives a reason before any notice: $(cat "$work/out")"
control POST "/nodes/$id/preempt" 8 >/dev/null
# Alibaba locks the instance for Recycling during the notice (Describe's OperationLocks)
[ "$CLOUD" != alibaba ] || status_shows "$id" Recycling
event_has "$id" '^hook_rc=0$'
gc_ok exec "$work/s.yaml" -- 'cat ckpt ~/.gpucluster/preempt/hook.log ~/.gpucluster/preempt/event'
grep -qx step-41 "$work/out" || fail "the hook left no checkpoint: $(cat "$work/out")"
grep -qx 'checkpoint saved' "$work/out" || fail "the hook's output is not on the node"
at=$(sed -n 's/^reclaim_at=//p' "$work/out")
ended=$(sed -n 's/^hook_ended_at=//p' "$work/out")
[ -n "$at" ] || fail "the event has no reclaim time: $(cat "$work/out")"
[ -n "$ended" ] || fail "the event has no hook end time: $(cat "$work/out")"
[ "$ended" -le "$at" ] ||
	fail "the hook did not end inside the notice window: $(cat "$work/out")"
lap "hook ran inside the window"
wait_gone "$id"
lap "reclaimed"
# EC2 keeps the terminated instance in Describe with its StateReason; Alibaba and Tencent
# release a reclaimed instance, so it leaves the list
case "$CLOUD" in
aws) status_shows "$id" Server.SpotInstanceTermination ;;
*)
	for _ in $(seq 1 40); do
		[ -z "$(status_reason "$id")" ] && break
		sleep 0.25
	done
	[ -z "$(status_reason "$id")" ] || fail "status still lists released node $id: $(cat "$work/out")"
	;;
esac

# apply replaces the reclaimed node, with the watcher again; the user changed the hook to
# one that hangs (one apply for both)
preempt_spec "'sleep 600'" 2s
gc_ok apply -y "$work/s.yaml"
id2=$(node_id)
[ -n "$id2" ] || fail "apply left no running node"
[ "$id2" != "$id" ] || fail "apply did not replace node $id (now: '$id2')"
lap "replaced"

# a hook that hangs is stopped at its bound, inside the window, and recorded
control POST "/nodes/$id2/preempt" 10 >/dev/null
event_has "$id2" '^hook_timed_out=1$'
gc_ok exec "$work/s.yaml" -- 'cat ~/.gpucluster/preempt/event'
grep -qx 'hook_bound_s=2' "$work/out" || fail "the hook's bound is not 2 s: $(cat "$work/out")"
lap "a hanging hook was bounded"
wait_gone "$id2"

# run --recover: the job's node is reclaimed mid-run; run applies again (a new node) and
# re-runs the job, which finishes
preempt_spec "'echo saved'"
(
	cloud_export
	exec "$GC_BIN" --no-color run --recover 1 "$work/s.yaml" -- \
		'echo started; sleep 6; echo finished' >"$work/run.out" 2>"$work/run.err" </dev/null
) &
bg=$!
for _ in $(seq 1 600); do
	grep -q started "$work/run.out" 2>/dev/null && break
	kill -0 "$bg" 2>/dev/null || fail "run exited before the job started: $(cat "$work/run.err")"
	sleep 0.1
done
id3=$(node_id)
control POST "/nodes/$id3/preempt" 1 >/dev/null
set +e
wait "$bg"
rc=$?
set -e
[ "$rc" = 0 ] || fail "run --recover 1 exited $rc: $(cat "$work/run.err")"
grep -q 'recovering (1 of 1)' "$work/run.err" || fail "run did not say it recovered: $(cat "$work/run.err")"
[ "$(grep -c started "$work/run.out")" = 2 ] ||
	fail "the job did not start again: $(cat "$work/run.out")"
grep -q finished "$work/run.out" || fail "the job did not run to its end: $(cat "$work/run.out")"
id4=$(node_id)
[ -n "$id4" ] || fail "run --recover left no running node"
[ "$id4" != "$id3" ] || fail "run --recover did not replace node $id3"
lap "run --recover finished on a new node"

gc_ok destroy -y "$work/s.yaml"
expect_alive e2e-spot 0 "after destroy"
lap "destroyed"
