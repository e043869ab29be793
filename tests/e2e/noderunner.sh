#!/usr/bin/env bash
# noderunner.sh: the node as a runner (docs/ci.md, "The node as a runner") against the
# emulator's GitHub (sim/github.h). scripts/node-runner.sh register asks the emulator for a
# registration token with the workflow's token, then configures node 0 through `gpucluster
# exec` with the simulated runner (config.sh --ephemeral, run.sh); the emulator lists it
# online with the labels self-hosted and gpucluster-RUN_ID. Teardown is runner-remove then
# destroy by run id, and leaves no runner and no instance, whether the training job was
# cancelled before it reached the runner (the runner is still there: remove deletes it) or
# ran on one of every node's runners (register all; the ephemeral runner deregistered
# itself after its job, remove deletes the other).
# A token that GitHub refuses, and a registration token that is not one, are errors that
# say so.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start_nodes --seed 7
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work/bin"
ln -sf "$GC_BIN" "$work/bin/gpucluster"
export GITHUB_ACTIONS=true GITHUB_REPOSITORY=acme/train GITHUB_RUN_ATTEMPT=1
export GITHUB_API_URL=$CONTROL GITHUB_SERVER_URL=https://github.com
token=ghp_gpuclustersim0000000000000000000000

# nr MODE SPEC: scripts/node-runner.sh as the action runs it; output in $work/nr.out, $nrc
nr() {
	set +e
	GPUCLUSTER_GITHUB_TOKEN=${NR_TOKEN-$token} PATH="$work/bin:$PATH" \
		cloud_env bash "$root/scripts/node-runner.sh" "$@" >"$work/nr.out" 2>&1 </dev/null
	nrc=$?
	set -e
}
# runners: the repository's runners, as the REST API lists them
runners() {
	curl -sS -H "Authorization: Bearer $token" "$CONTROL/repos/acme/train/actions/runners"
}
nr_spec() {
	{
		printf 'name: %s\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' "$1" \
			"$CLOUD" "$REGION" "$ENDPOINT"
		printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
		printf '  - name: workers\n    count: %s\n    instance_types: [%s]\n' "${2:-1}" \
			"$TYPE_READY"
		printf '    image: gpu-ready\n'
	} >"$work/$1.yaml"
}

# ---- run 401: up, register node 0 ------------------------------------------------------
export GITHUB_RUN_ID=401
nr_spec nr-a
gc_ok apply -y --no-bootstrap "$work/nr-a.yaml"
# a token GitHub refuses: nothing reaches the node, and the error says why
NR_TOKEN=not-a-token nr register "$work/nr-a.yaml"
[ "$nrc" != 0 ] || fail "node-runner.sh registered with a bad token"
grep -q 'GitHub refused .*Bad credentials.*GPUCLUSTER_GITHUB_TOKEN' "$work/nr.out" ||
	fail "no clear error for a bad token: $(cat "$work/nr.out")"
NR_TOKEN=ghp_readonly0000 nr register "$work/nr-a.yaml"
[ "$nrc" != 0 ] || fail "node-runner.sh registered with a token without the permission"
grep -q 'GitHub refused .*Resource not accessible' "$work/nr.out" ||
	fail "no clear error for a read-only token: $(cat "$work/nr.out")"
[ "$(runners | jq .total_count)" = 0 ] || fail "a refused token registered a runner"

nr register "$work/nr-a.yaml"
[ "$nrc" = 0 ] || fail "node-runner.sh register exited $nrc: $(cat "$work/nr.out")"
grep -q 'Runner successfully added' "$work/nr.out" ||
	fail "config.sh did not register: $(cat "$work/nr.out")"
for _ in $(seq 1 50); do
	[ "$(runners | jq -r '.runners[0].status')" = online ] && break
	sleep 0.1
done
runners >"$work/runners.json"
jq -e '.total_count == 1 and .runners[0].name == "gpucluster-401-0"
	and .runners[0].status == "online"
	and ([.runners[0].labels[].name] == ["self-hosted", "gpucluster-401"])' \
	"$work/runners.json" >/dev/null || fail "the emulator lists $(cat "$work/runners.json")"
# a registration token that is not one: config.sh says GitHub answered NotFound
# shellcheck disable=SC2016 # the node's HOME
gc exec --node workers/0 "$work/nr-a.yaml" -- \
	'"$HOME"/actions-runner/config.sh --unattended --url https://github.com/acme/train --token BOGUS --name x'
[ "$rc" != 0 ] || fail "config.sh registered with a bogus registration token"
grep -q "NotFound from 'POST https://api.github.com/actions/runner-registration'" \
	"$work/out" "$work/err" || fail "config.sh's bad-token error: $(cat "$work/out" "$work/err")"

# ---- run 401 cancelled before the job reached the runner: teardown -----------------------
nr remove "$work/nr-a.yaml"
[ "$nrc" = 0 ] || fail "node-runner.sh remove exited $nrc: $(cat "$work/nr.out")"
grep -q 'removed runner [0-9]* (gpucluster-401)' "$work/nr.out" || fail "remove: $(cat "$work/nr.out")"
gc_ok destroy -y --selector run-id=401 "$work/nr-a.yaml"
[ "$(runners | jq .total_count)" = 0 ] || fail "a runner is left after teardown: $(runners)"
expect_alive nr-a 0 "after the cancelled run's teardown"

# ---- run 402: every node a runner; the job ran (and failed) on one of them --------------
export GITHUB_RUN_ID=402
nr_spec nr-b 2
gc_ok apply -y --no-bootstrap "$work/nr-b.yaml"
nr register "$work/nr-b.yaml" all
[ "$nrc" = 0 ] || fail "node-runner.sh register all (run 402) exited $nrc: $(cat "$work/nr.out")"
[ "$(runners | jq -c '[.runners[].name] | sort')" = '["gpucluster-402-0","gpucluster-402-1"]' ] ||
	fail "register all did not make both nodes runners: $(runners)"
id=$(runners | jq -r '.runners[] | select(.name == "gpucluster-402-0") | .id')
control POST "/actions/runners/$id/job" >/dev/null
[ "$(runners | jq -c '[.runners[].name]')" = '["gpucluster-402-1"]' ] ||
	fail "the ephemeral runner stayed after its job: $(runners)"
nr remove "$work/nr-b.yaml"
[ "$nrc" = 0 ] || fail "remove after the job exited $nrc: $(cat "$work/nr.out")"
[ "$(runners | jq .total_count)" = 0 ] || fail "a runner is left after teardown: $(runners)"
gc_ok destroy -y --selector run-id=402 "$work/nr-b.yaml"
expect_alive nr-b 0 "after the failed run's teardown"
# an unknown runner is GitHub's 404
[ "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $token" \
	"$CONTROL/repos/acme/train/actions/runners/$id")" = 404 ] || fail "DELETE of a gone runner is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$CONTROL/repos/acme/train/actions/runners")" = 401 ] ||
	fail "the runner list without a token is not 401"
