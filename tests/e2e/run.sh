#!/usr/bin/env bash
# run.sh: `gpucluster run`, a job's life cycle, on a real emulator cluster with SSH nodes.
#
# run --down applies, runs the command on every node with its rank (one line per node,
# distinct ranks, behind the node's label) and destroys everything; a failing command
# still tears down and exits 1; SIGINT while the command sleeps stops it, tears down and
# exits 130; without --down, SIGINT kills the command on the nodes (it never finishes)
# and leaves the cluster up; a teardown that fails is exit 1, loudly; a second SIGINT
# aborts a teardown, loudly, and a single one during a teardown that followed a normal end
# only warns.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start_nodes --seed 7
t0=$SECONDS
lap() { note "$1 ($((SECONDS - t0)) s)"; }

# run_spec NAME: two nodes on the GPU-ready image, the quickest bootstrap there is
run_spec() {
	{
		printf 'name: %s\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' "$1" \
			"$CLOUD" "$REGION" "$ENDPOINT"
		printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
		printf '  - name: workers\n    count: 2\n    instance_types: [%s]\n' "$TYPE_READY"
		printf '    image: gpu-ready\n'
		printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  container: none\n'
	} >"$work/$1.yaml"
}

# run_bg ARGS...: gpucluster in the background, itself the job (so signals reach it)
run_bg() {
	(
		cloud_export
		exec "$GC_BIN" --no-color "$@" >"$work/out" 2>"$work/err" </dev/null
	) &
	bg=$!
}

# wait_lines FILE PATTERN N: until FILE has N lines matching PATTERN (30 s at most)
wait_lines() {
	for _ in $(seq 1 600); do
		[ "$(grep -c -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		kill -0 "$bg" 2>/dev/null || fail "gpucluster exited before '$2' showed in $1"
		sleep 0.05
	done
	fail "no $3 lines '$2' in $1 after 30 s"
}

# usage errors, before anything is created
run_spec e2e-run
gc run -o json "$work/e2e-run.yaml" -- true
[ "$rc" = 64 ] || fail "run -o json exited $rc"
gc run --no-wait "$work/e2e-run.yaml" -- true
[ "$rc" = 64 ] || fail "run --no-wait exited $rc"
gc run "$work/e2e-run.yaml"
[ "$rc" = 64 ] || fail "run without a command exited $rc"
expect_alive e2e-run 0 "after usage errors"

# one line per node, distinct ranks, every rank variable; then nothing left. The cloud's
# view of the nodes is taken while the command still sleeps: Alibaba and Tencent forget
# released instances at once, so after the teardown there is nothing left to compare with.
# shellcheck disable=SC2016 # expanded by the nodes' shell
run_bg run --down "$work/e2e-run.yaml" -- \
	'echo "$NODE_RANK/$NNODES $NPROC_PER_NODE $MASTER_ADDR:$MASTER_PORT $GPUCLUSTER_NODE"; sleep 2'
wait_lines "$work/out" ' workers/[01]$' 2
state
set +e
wait "$bg"
rc=$?
set -e
[ "$rc" = 0 ] || fail "run --down exited $rc"
jq -e '[.instances[] | select(.tags["gpucluster:cluster"] == "e2e-run")
	| select((.state | ascii_downcase) == "running")] | length == 2' "$work/state.json" \
	>/dev/null || fail "the nodes were not both running while the command ran"
master=$(jq -r '[.instances[] | select(.tags["gpucluster:cluster"] == "e2e-run")]
	| sort_by(.launch_time, .id) | .[0].private_ip' "$work/state.json")
[ "$(wc -l <"$work/out")" = 2 ] || fail "run printed $(wc -l <"$work/out") lines, not one per node"
for r in 0 1; do
	grep -qx "\[workers/$r\] $r/2 1 $master:29500 workers/$r" "$work/out" ||
		fail "no line of rank $r from workers/$r"
done
grep -q 'destroying cluster' "$work/err" || fail "run --down did not say it tears down"
expect_alive e2e-run 0 "after run --down"
[ "$(owned_resources e2e-run)" = 0 ] || fail "run --down left key pairs or security groups"
lap "run --down: ranks 0/2 and 1/2, nothing left"

# a failing command: still torn down, exit 1
run_spec e2e-fail
# shellcheck disable=SC2016 # expanded by the nodes' shell
gc run --down "$work/e2e-fail.yaml" -- 'echo "rank $NODE_RANK"; exit $((NODE_RANK + 3))'
[ "$rc" = 1 ] || fail "run --down of a failing command exited $rc"
grep -q "workers/0 ($ID_RE): exit 3" "$work/err" || fail "the failure of workers/0 is not reported"
grep -q "workers/1 ($ID_RE): exit 4" "$work/err" || fail "the failure of workers/1 is not reported"
grep -q 'the command failed; destroying' "$work/err" || fail "no teardown after the failure"
expect_alive e2e-fail 0 "after a failed run --down"
lap "failing command: exit 1, torn down"

# SIGINT while the command sleeps: stopped, torn down, 130
run_spec e2e-int
run_bg run --down "$work/e2e-int.yaml" -- 'echo started; sleep 60'
wait_lines "$work/out" '] started$' 2
kill -INT "$bg"
set +e
wait "$bg"
rc=$?
set -e
[ "$rc" = 130 ] || fail "run --down interrupted exited $rc"
grep -q 'interrupted; destroying cluster' "$work/err" || fail "no teardown after SIGINT"
grep -q 'press Ctrl-C again to abort the teardown' "$work/err" || fail "the teardown is not announced"
expect_alive e2e-int 0 "after an interrupted run --down"
lap "SIGINT: exit 130, torn down"

# without --down, SIGINT kills the command on the nodes and leaves the cluster up
run_spec e2e-stop
run_bg run "$work/e2e-stop.yaml" -- 'echo started; sleep 8; touch ~/finished; echo finished'
wait_lines "$work/out" '] started$' 2
kill -INT "$bg"
set +e
wait "$bg"
rc=$?
set -e
[ "$rc" = 130 ] || fail "run interrupted exited $rc"
grep -q 'stopping the command on 2 nodes' "$work/err" || fail "run did not stop the command"
grep -q finished "$work/out" && fail "the command finished after SIGINT"
sleep 8.5 # past the command's own end: it must not have come
gc_ok exec "$work/e2e-stop.yaml" -- 'test -e ~/finished && echo finished || echo stopped'
[ "$(grep -c '^stopped$' "$work/out")" = 2 ] || fail "the command ran on after SIGINT: $(cat "$work/out")"
expect_alive e2e-stop 2 "after an interrupted run without --down"
lap "SIGINT without --down: the command stopped on the nodes, the cluster kept"

# a teardown that fails: exit 1 even though the command succeeded, and loudly
case $CLOUD in
alibaba) terminate=DeleteInstances ;;
*) terminate=TerminateInstances ;;
esac
fault "$CLOUD:$terminate:quota"
gc run --down --no-apply "$work/e2e-stop.yaml" -- true
faults_clear
[ "$rc" = 1 ] || fail "run --down with a failing teardown exited $rc"
grep -q "TEARDOWN FAILED: cluster 'e2e-stop' may still be running" "$work/err" ||
	fail "a failed teardown is not reported"
grep -q "destroy -y .*e2e-stop.yaml' finishes it" "$work/err" || fail "no hint to finish the teardown"
expect_alive e2e-stop 2 "after a failed teardown"
lap "failed teardown: exit 1, loudly"

# a second SIGINT aborts the teardown, and says so (the teardown's terminate call is held
# back 4 s, so the second signal surely finds it running on a loaded machine)
fault "$CLOUD:$terminate:slow,delay_ms=4000,times=1"
run_bg run --down --no-apply "$work/e2e-stop.yaml" -- 'echo started; sleep 60'
wait_lines "$work/out" '] started$' 2
kill -INT "$bg"
wait_lines "$work/err" 'press Ctrl-C again' 1
kill -INT "$bg"
set +e
wait "$bg"
rc=$?
set -e
faults_clear
[ "$rc" = 130 ] || fail "run --down with its teardown aborted exited $rc"
grep -q "TEARDOWN ABORTED: cluster 'e2e-stop' may still be running" "$work/err" ||
	fail "an aborted teardown is not reported"
# the spec now says fewer nodes: run launches without asking, but never terminates so
gc_ok scale -y -f "$work/e2e-stop.yaml" workers=3
sed 's/count: 2/count: 1/' "$work/e2e-stop.yaml" >"$work/e2e-stop-1.yaml"
gc run "$work/e2e-stop-1.yaml" -- true
[ "$rc" = 1 ] || fail "run that would terminate nodes, without -y, exited $rc"
grep -q 'cannot ask for confirmation' "$work/err" || fail "run did not ask: $(cat "$work/err")"
expect_alive e2e-stop 3 "after a run that was not allowed to terminate"
gc_ok run -y "$work/e2e-stop-1.yaml" -- true
expect_alive e2e-stop 1 "after run -y on a smaller spec"
lap "run terminates nodes only with -y"

gc_ok destroy -y "$work/e2e-stop.yaml"
expect_alive e2e-stop 0 "after destroy"
lap "second SIGINT: teardown aborted, loudly"

# one Ctrl-C during a teardown that followed a normal end only warns: the teardown goes on
run_spec e2e-warn
fault "$CLOUD:$terminate:slow,delay_ms=4000,times=1" # the teardown outlasts the signal
run_bg run --down "$work/e2e-warn.yaml" -- 'echo done'
wait_lines "$work/err" 'press Ctrl-C twice' 1
kill -INT "$bg"
set +e
wait "$bg"
rc=$?
set -e
faults_clear
[ "$rc" = 0 ] || fail "run --down with one Ctrl-C in its teardown exited $rc"
grep -q 'the teardown goes on: press Ctrl-C again to abort it' "$work/err" ||
	fail "no warning about the Ctrl-C during the teardown"
expect_alive e2e-warn 0 "after a teardown that went on"
lap "one Ctrl-C in the teardown: a warning, the teardown finished"

requests_valid
note "ok ($((SECONDS - t0)) s)"
