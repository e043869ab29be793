#!/usr/bin/env bash
# idle.sh: nodes that end themselves (docs/internals/idle.md). lifecycle.idle: the idle
# watcher runs, status shows the time to the idle stop, busy GPUs or a running job keep the
# node, and once idle for the time it says the node powers itself off (shutdown -h): EC2,
# launched with InstanceInitiatedShutdownBehavior terminate, terminates it; Alibaba and
# Tencent stop it. status and apply see it gone (apply replaces it) and gc deletes a
# stopped node. list shows the idle stop (the gpucluster:idle tag) and the stopped nodes,
# which bill no node-hours. run --down --detach: the node powers itself off after its job.
# Nothing leaks.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start_nodes --seed 13
t0=$SECONDS
lap() { note "$1 ($((SECONDS - t0)) s)"; }

# idle_spec [LIFECYCLE_YAML]: one on-demand node on the GPU-ready image
idle_spec() {
	{
		printf 'name: e2e-idle\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' \
			"$CLOUD" "$REGION" "$ENDPOINT"
		printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
		printf '  - name: workers\n    count: 1\n    instance_types: [%s]\n' "$TYPE_READY"
		printf '    image: gpu-ready\n'
		printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  container: none\n'
		[ -z "${1:-}" ] || printf '%s\n' "$1"
	} >"$work/s.yaml"
}

# the running node's instance id
node_id() {
	state
	jq -r '[.instances[] | select(.tags["gpucluster:cluster"] == "e2e-idle")
		| select((.state | ascii_downcase) == "running")] | .[0].id // empty' \
		"$work/state.json"
}

# wait_state ID STATE...: the instance reaches one of the states (lowercase; "" for gone)
wait_state() {
	local id=$1 st
	shift
	for _ in $(seq 1 80); do
		st=$(instance_state "$id")
		for want in "$@"; do
			[ "$st" != "$want" ] || return 0
		done
		sleep 0.25
	done
	fail "instance $id is '$st', not one of: $*"
}

# the cloud's word for a node powered off from inside
case "$CLOUD" in
aws) after_shutdown=(shutting-down terminated) ;;
*) after_shutdown=(stopped) ;;
esac

# idle_state KEY: a value of the idle watcher's state on the node
idle_state() {
	gc_ok exec "$work/s.yaml" -- 'cat ~/.gpucluster/idle/state 2>/dev/null'
	sed -n "s/^$1=//p" "$work/out" | head -n 1
}
# wait_busy WHY AFTER: the watcher says the node is busy for WHY, on a poll at AFTER (epoch
# seconds) or later
wait_busy() {
	local at
	for _ in $(seq 1 60); do
		at=$(idle_state checked_at)
		if [ -n "$at" ] && [ "$at" -ge "$2" ] && grep -q "busy=$1" "$work/out"; then
			return 0
		fi
		sleep 0.25
	done
	fail "the watcher never said busy=$1 after $2: $(cat "$work/out")"
}

# list_idle NODES STOPPED [IDLE SECONDS]: `list` (this region) shows e2e-idle with NODES live
# nodes, its idle stop (30m, 1800 s; "-" and null for none) and STOPPED stopped nodes, in
# text and JSON; the cost is the live nodes'
list_idle() {
	local idle=${3:-30m} secs=${4:-1800} line
	[ "$2" = 0 ] || idle="$idle, $2 stopped"
	gc_ok list --cloud "$CLOUD" --endpoint "$ENDPOINT" --region "$REGION"
	head -n 1 "$work/out" | grep -Eq ' +EXPIRES +IDLE$' || fail "list's header: $(cat "$work/out")"
	line=$(grep -E "^$CLOUD +$REGION +e2e-idle " "$work/out") || fail "list: $(cat "$work/out")"
	if [ "$1" = 0 ]; then
		grep -Eq "^[^ ]+ +[^ ]+ +e2e-idle +0 +0 +- +[^ ]+ +in [0-9hm]+ +$idle\$" <<<"$line"
	else
		grep -Eq "^[^ ]+ +[^ ]+ +e2e-idle +$1 +[0-9]+ +[0-9.]+ [A-Z]+ +[^ ]+ +in [0-9hm]+ +$idle\$" \
			<<<"$line"
	fi || fail "list's line is not $1 node(s), $idle: $line"
	gc_ok list -o json --cloud "$CLOUD" --endpoint "$ENDPOINT" --region "$REGION"
	jq -e --argjson n "$1" --argjson s "$2" --argjson i "$secs" '[.clusters[]
		| select(.name == "e2e-idle")] | length == 1 and .[0].nodes == $n
		and .[0].stopped == $s and .[0].idle_after_s == $i
		and (if $n == 0 then .[0].cost_per_hour == 0 and .[0].currency == null
			else .[0].cost_per_hour > 0 end)' "$work/out" >/dev/null ||
		fail "list -o json is not $1 node(s), $secs s, $2 stopped: $(cat "$work/out")"
}

# --- lifecycle.idle ------------------------------------------------------------------------
# a bad duration is refused with its place, before anything is created
idle_spec $'lifecycle:\n  idle: 90s'
gc validate "$work/s.yaml"
[ "$rc" != 0 ] || fail "validate took lifecycle.idle: 90s"
grep -Eq ':[0-9]+:[0-9]+: error: lifecycle.idle: 90s is out of range 5m..7d' "$work/err" ||
	fail "the bad idle is not named with its place: $(cat "$work/err")"
idle_spec $'lifecycle:\n  ttl: 1h\n  idle: 30m'
gc_ok apply -y "$work/s.yaml"
id=$(node_id)
[ -n "$id" ] || fail "no running node"
gc_ok exec "$work/s.yaml" -- 'systemctl is-active gpucluster-idle; cat /etc/gpucluster/idle.env'
grep -qx active "$work/out" || fail "the idle watcher is not running: $(cat "$work/out")"
grep -q 'IDLE_S=1800' "$work/out" || fail "the watcher's idle time is not 30m: $(cat "$work/out")"
lap "applied: the idle watcher runs"
# list: the idle stop from the node's gpucluster:idle tag, nothing stopped
list_idle 1 0

# lifecycle.idle changed mid-life: plan shows the kept node retagged in place, apply does it
# (no node created or replaced, the watcher rerun with the new time), list shows it; then
# dropped (the tag goes: "-"), and back to 30m for what follows
idle_tag() {
	state
	jq -r --arg id "$id" '.instances[] | select(.id == $id) | .tags["gpucluster:idle"] // "-"' \
		"$work/state.json"
}
made=$(creates)
idle_spec $'lifecycle:\n  ttl: 1h\n  idle: 45m'
gc_ok plan "$work/s.yaml"
grep -Eq "~ $id .* idle stop 30m -> 45m \(lifecycle.idle, in place\)" "$work/out" ||
	fail "plan does not retag the kept node: $(cat "$work/out")"
grep -q ', idle stop of 1 node set to 45m.' "$work/out" || fail "plan's summary: $(cat "$work/out")"
gc_ok apply -y "$work/s.yaml"
[ "$(node_id)" = "$id" ] || fail "apply replaced node $id"
[ "$(alive e2e-idle)" = 1 ] || fail "apply launched a node"
[ "$(idle_tag)" = 2700 ] || fail "node $id's idle tag is $(idle_tag), not 2700"
list_idle 1 0 45m 2700
gc_ok exec "$work/s.yaml" -- 'cat /etc/gpucluster/idle.env'
grep -q 'IDLE_S=2700' "$work/out" || fail "the watcher's idle time is not 45m: $(cat "$work/out")"
idle_spec $'lifecycle:\n  ttl: 1h'
gc_ok apply -y "$work/s.yaml"
# the bootstrap undoes the idle step (idle-undo): the watcher stopped, disabled and gone,
# the step's marker removed, and apply says so; no warning, no command to run by hand
grep -q "idle removed: the spec no longer wants it" "$work/err" ||
	fail "apply does not say the watcher is removed: $(cat "$work/err")"
! grep -q "lifecycle.idle removed" "$work/err" || fail "apply still warns: $(cat "$work/err")"
[ "$(idle_tag)" = - ] || fail "node $id keeps its idle tag: $(idle_tag)"
list_idle 1 0 - null
watcher() {
	# shellcheck disable=SC2016 # expanded on the node
	gc_ok exec "$work/s.yaml" -- 'systemctl is-active gpucluster-idle || true
		systemctl is-enabled gpucluster-idle 2>/dev/null || true
		for f in /var/lib/gpucluster/steps/idle.done /usr/local/lib/gpucluster/idle-watch \
			/etc/gpucluster/idle.env; do [ ! -e "$f" ] || echo "has $f"; done'
}
watcher
grep -qx inactive "$work/out" || fail "the watcher still runs: $(cat "$work/out")"
! grep -qx enabled "$work/out" || fail "the watcher is still enabled: $(cat "$work/out")"
! grep -q '^has ' "$work/out" || fail "the idle step left files behind: $(cat "$work/out")"
# a second apply has nothing to undo: no idle line at all, every step skipped
gc_ok apply -y "$work/s.yaml"
! grep -Eq "idle(-undo)? (ok|removed|skipped)" "$work/err" ||
	fail "a second apply mentions idle: $(cat "$work/err")"
idle_spec $'lifecycle:\n  ttl: 1h\n  idle: 30m'
gc_ok apply -y "$work/s.yaml"
[ "$(idle_tag)" = 1800 ] || fail "node $id is not back to 30m: $(idle_tag)"
[ "$(node_id)" = "$id" ] || fail "apply replaced node $id"
[ "$(creates)" = "$made" ] || fail "changing lifecycle.idle created something"
grep -q "idle ok" "$work/err" || fail "the idle step did not run again: $(cat "$work/err")"
watcher
grep -qx active "$work/out" || fail "the restored watcher is not running: $(cat "$work/out")"
grep -qx enabled "$work/out" || fail "the restored watcher is not enabled: $(cat "$work/out")"
grep -qx 'has /var/lib/gpucluster/steps/idle.done' "$work/out" ||
	fail "the idle step left no marker: $(cat "$work/out")"
lap "lifecycle.idle changed, dropped, restored: node $id retagged in place"
# status: the time to the idle stop, beside the TTL, in text and JSON
gc_ok status "$work/s.yaml"
grep -Eq 'idle stop: in (29|30)m' "$work/out" || fail "status gives no idle stop: $(cat "$work/out")"
gc_ok status -o json "$work/s.yaml"
jq -e --arg id "$id" '.nodes[] | select(.id == $id) | .idle_stop.in_s > 1700 and
	.idle_stop.in_s <= 1800 and .idle_stop.busy == null and .expires_at != null' \
	"$work/out" >/dev/null || fail "status -o json gives no idle stop: $(cat "$work/out")"
# shutdown as the login user, without sudo, is refused as systemd refuses it
gc exec "$work/s.yaml" -- 'shutdown -h now'
[ "$rc" != 0 ] || fail "shutdown without root succeeded"
[ "$(instance_state "$id")" = running ] || fail "an unprivileged shutdown stopped the node"

# the GPUs busy (the emulator's utilisation), and a 2 s idle time polled every second (the
# watcher rereads its settings: the test shortens what a spec cannot)
gc_ok exec "$work/s.yaml" -- 'echo 90 | sudo tee /var/lib/gpucluster-sim/gpu-util >/dev/null &&
	sudo sed -i "s/^IDLE_S=.*/IDLE_S=2/; s/^POLL_S=.*/POLL_S=1/" /etc/gpucluster/idle.env &&
	sudo systemctl restart gpucluster-idle'
t=$(date +%s)
wait_busy 'gpu 90%' "$t"
wait_busy 'gpu 90%' $((t + 3))
[ "$(instance_state "$id")" = running ] || fail "node $id stopped while its GPUs were busy"
gc_ok status "$work/s.yaml"
grep -q 'idle stop: 2s after it goes idle (busy: gpu 90%)' "$work/out" ||
	fail "status does not say the node is busy: $(cat "$work/out")"
lap "busy GPUs keep the node"

# a detached job keeps it too, after the GPUs go quiet
gc_ok run --detach --no-apply "$work/s.yaml" -- 'while [ ! -e ~/go ]; do sleep 0.2; done'
gc_ok exec "$work/s.yaml" -- 'echo 0 | sudo tee /var/lib/gpucluster-sim/gpu-util >/dev/null'
t=$(date +%s)
wait_busy 'job ' "$t"
wait_busy 'job ' $((t + 3))
[ "$(instance_state "$id")" = running ] || fail "node $id stopped while a job ran"
lap "a running job keeps the node"

# the job ends: idle for 2 s, the node powers itself off (sudo -n shutdown -h now, from the
# watcher's unit): EC2 terminates it, the others stop it
gc_ok exec "$work/s.yaml" -- 'touch ~/go'
wait_state "$id" "${after_shutdown[@]}"
lap "idle: the node powered itself off: $(instance_state "$id")"
case "$CLOUD" in
aws)
	gc_ok status -o json "$work/s.yaml"
	jq -e --arg id "$id" '[.nodes[] | select(.id == $id)] | length == 0 or
		(.[0].reason // "" | startswith("Client.InstanceInitiatedShutdown"))' "$work/out" \
		>/dev/null || fail "status gives node $id another reason: $(cat "$work/out")"
	# list: the terminated (or shutting-down) node is gone, and with it the cluster's row
	gc_ok list -o json --cloud "$CLOUD" --endpoint "$ENDPOINT" --region "$REGION"
	jq -e '[.clusters[] | select(.name == "e2e-idle")] == []' "$work/out" >/dev/null ||
		fail "list shows the cluster of terminated node $id: $(cat "$work/out")"
	;;
*)
	# status lists no running node; gc finds the stopped one (dry run: nothing changes)
	gc_ok status -o json "$work/s.yaml"
	jq -e --arg id "$id" '[.nodes[] | select(.id == $id and .state == "running")]
		| length == 0' "$work/out" >/dev/null ||
		fail "status shows stopped node $id running: $(cat "$work/out")"
	gc_ok gc -o json "$work/s.yaml"
	jq -e --arg id "$id" '[.resources[] | select(.id == $id)] | .[0].why
		| any(.[]?; . == "stopped")' "$work/out" >/dev/null ||
		fail "gc does not collect stopped node $id: $(cat "$work/out")"
	[ "$(instance_state "$id")" = stopped ] || fail "a gc dry run changed node $id"
	# list: no live node, the stopped one counted apart, costing no node-hours
	list_idle 0 1
	;;
esac

# apply sees the node gone and launches a replacement
gc_ok apply -y "$work/s.yaml"
id2=$(node_id)
if [ -z "$id2" ] || [ "$id2" = "$id" ]; then
	fail "apply did not replace node $id (now: '$id2')"
fi
lap "replaced"
if [ "$CLOUD" = aws ]; then
	list_idle 1 0 # the terminated node is gone from list too
else
	list_idle 1 1
fi
if [ "$CLOUD" != aws ]; then
	# gc deletes the stopped node and leaves the cluster's running one and its resources
	gc_ok gc -y "$work/s.yaml"
	wait_state "$id" "" terminated
	[ "$(instance_state "$id2")" = running ] || fail "gc touched running node $id2"
	[ "$(owned_resources e2e-idle)" != 0 ] || fail "gc deleted the live cluster's resources"
	lap "gc deleted the stopped node"
fi

# run --down --detach: run returns once the job started; the node powers itself off when
# its rank's job ended, and the cloud terminates or stops it as above
# shellcheck disable=SC2016 # expanded by the node's shell
gc_ok run --down --detach "$work/s.yaml" -- 'sleep 1; echo "rank $NODE_RANK done"'
grep -q 'each node powers itself off when its rank ends' "$work/err" ||
	fail "run --down --detach does not say how the cluster ends: $(cat "$work/err")"
[ "$(instance_state "$id2")" = running ] || fail "node $id2 went before its job ended"
wait_state "$id2" "${after_shutdown[@]}"
lap "run --down --detach: the node powered itself off after its job"

gc_ok destroy -y "$work/s.yaml"
expect_alive e2e-idle 0 "after destroy"
lap "destroyed"
