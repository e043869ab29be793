#!/usr/bin/env bash
# jobs.sh: what a job gets besides its command (issue 15), on SSH nodes of the emulator.
#
# envs in the spec and run --env reach the job (a later --env wins over the spec); a
# secret named in the spec reaches the job from the user's environment, and is nowhere
# else afterwards: not in gpucluster's output, its state and logs, the request log, the
# GitHub Actions outputs (masked there), nor on the node's disk (the nodes' roots are in
# $work too). Bad input fails before anything is created: a secret whose variable is
# unset, a malformed --env, an --env that names a secret. Then a detached job (run
# --detach) outlives the run that started it: jobs shows it running, logs shows each rank's
# output so far, logs --follow streams until it ends (beside an exec on the same nodes),
# jobs has each rank's exit code, logs without an id shows the latest job; an unknown or
# malformed job id is an error (run --down --detach: idle.sh). Then a
# workdir synced twice (the second time only the change), honouring .gpuclusterignore.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start_nodes --seed 7
t0=$SECONDS
lap() { note "$1 ($((SECONDS - t0)) s)"; }

# job_spec NAME [EXTRA_YAML]: N nodes on the GPU-ready image (the quickest bootstrap)
job_spec() {
	{
		printf 'name: %s\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' "$1" \
			"$CLOUD" "$REGION" "$ENDPOINT"
		printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
		printf '  - name: workers\n    count: %s\n    instance_types: [%s]\n' "${3:-2}" "$TYPE_READY"
		printf '    image: gpu-ready\n'
		printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  container: none\n'
		printf '%s\n' "${2:-}"
	} >"$work/$1.yaml"
}

secret="s3cr3t-$RANDOM-$RANDOM-value"
job_spec e2e-jobs "$(printf 'envs:\n  STAGE: train\n  EPOCHS: 3\nsecrets: [WANDB_API_KEY]')"

# bad input: nothing is created, nothing is asked of the cloud
before=$(wc -l <"$work/requests.log" 2>/dev/null || echo 0)
gc run "$work/e2e-jobs.yaml" -- true
[ "$rc" = 1 ] || fail "run with an unset secret exited $rc"
grep -q "secret 'WANDB_API_KEY' (.*e2e-jobs.yaml: secrets) is not set in your environment" \
	"$work/err" || fail "an unset secret is not reported"
export WANDB_API_KEY=$secret
gc run --env 'BAD NAME=1' "$work/e2e-jobs.yaml" -- true
[ "$rc" = 64 ] || fail "run --env with a bad name exited $rc"
gc run --env "WANDB_API_KEY=$secret" "$work/e2e-jobs.yaml" -- true
[ "$rc" = 64 ] || fail "run --env naming a secret exited $rc"
grep -q "'WANDB_API_KEY' is a secret of the spec" "$work/err" || fail "--env of a secret is not refused"
after=$(wc -l <"$work/requests.log" 2>/dev/null || echo 0)
[ "$before" = "$after" ] || fail "bad input sent $((after - before)) requests to the cloud"
expect_alive e2e-jobs 0 "after bad input"
lap "bad input: refused before anything was created"

# the job sees envs, --env (winning over the spec) and the secret; in GitHub Actions mode
export GITHUB_ACTIONS=true GITHUB_REPOSITORY=acme/train GITHUB_RUN_ID=7 GITHUB_RUN_ATTEMPT=1
export GITHUB_OUTPUT=$work/gh-output GITHUB_STEP_SUMMARY=$work/gh-summary
: >"$GITHUB_OUTPUT"
: >"$GITHUB_STEP_SUMMARY"
want=$(printf %s "$secret" | sha256sum | cut -c1-64)
# shellcheck disable=SC2016 # expanded by the nodes' shell
gc run --env EPOCHS=5 --env 'NOTE=a b' "$work/e2e-jobs.yaml" -- \
	'echo "$STAGE/$EPOCHS/$NOTE/$(printf %s "$WANDB_API_KEY" | sha256sum | cut -c1-64)";' \
	'ps -eo args >/tmp/ps.txt 2>&1; ls ~/.gpucluster/bootstrap/ >/tmp/ls.txt 2>&1; true'
unset GITHUB_ACTIONS
[ "$rc" = 0 ] || fail "run with envs and a secret exited $rc"
for r in 0 1; do
	grep -qx "\[workers/$r\] train/5/a b/$want" "$work/out" ||
		fail "workers/$r did not see the envs and the secret"
done
grep -qxF "::add-mask::$secret" "$work/err" || fail "the secret is not masked in GitHub Actions"
cp "$work/out" "$work/run.out"
grep -vxF "::add-mask::$secret" "$work/err" >"$work/run.err" || true
lap "envs, --env and a secret reach the job"

# nowhere else: stdout/stderr (but the mask), the request log, GitHub's outputs, the
# state and log files, HOME, the nodes' disks (ps and ls as the job saw them included)
rm -f "$work/out" "$work/err"
if grep -rlF -- "$secret" "$work" >"$work/leaks" 2>/dev/null; then
	fail "the secret leaked into: $(tr '\n' ' ' <"$work/leaks")"
fi
grep -rqE '^exec' "$work" --include=ls.txt && fail "the job's script stayed on the node's disk"
lap "the secret is in no log, output or file"

# a detached job: run returns at once with the job's id, the job outlives it; jobs shows
# it running, then logs --follow streams each rank's output until it ends, and jobs has
# each rank's exit code. The job's id goes to stdout, last.
# shellcheck disable=SC2016 # expanded by the nodes' shell
gc_ok run --detach --no-apply "$work/e2e-jobs.yaml" -- \
	'echo "start $NODE_RANK $STAGE"; while [ ! -e ~/go ]; do sleep 0.1; done;' \
	'echo "end $NODE_RANK"; exit $NODE_RANK'
job=$(tail -n 1 "$work/out")
[[ $job =~ ^[0-9]+-[0-9]+$ ]] || fail "run --detach printed no job id: $(cat "$work/out")"
grep -q "run: job $job runs on its own" "$work/err" || fail "run --detach did not say where the job is"
gc_ok jobs "$work/e2e-jobs.yaml"
for r in 0 1; do
	grep -Eq "^$job +workers/$r +running$" "$work/out" || fail "jobs does not show workers/$r running"
done
gc_ok logs -f "$work/e2e-jobs.yaml" "$job"
for r in 0 1; do
	grep -qx "\[workers/$r\] start $r train" "$work/out" || fail "logs lacks the start of rank $r"
done
grep -q ' end ' "$work/out" && fail "the job ended before it was told to"
lap "run --detach: the job runs on after run returned"

# logs --follow in the background streams until the job ends on every node
(
	cloud_export
	exec "$GC_BIN" --no-color logs --follow -f "$work/e2e-jobs.yaml" "$job" >"$work/follow.out" \
		2>"$work/follow.err" </dev/null
) &
follow=$!
gc_ok exec "$work/e2e-jobs.yaml" -- 'touch ~/go' # beside logs --follow: no lock
set +e
wait "$follow"
frc=$?
set -e
[ "$frc" = 0 ] || fail "logs --follow exited $frc: $(cat "$work/follow.err")"
for r in 0 1; do
	grep -qx "\[workers/$r\] end $r" "$work/follow.out" || fail "logs --follow lacks the end of rank $r"
done
gc_ok jobs -o json "$work/e2e-jobs.yaml"
jq -e --arg j "$job" '[.jobs[] | select(.job == $j) | "\(.node)=\(.state)/\(.exit_code)"]
	== ["workers/0=exited/0", "workers/1=exited/1"]' "$work/out" >/dev/null ||
	fail "jobs -o json: $(cat "$work/out")"
gc_ok logs -f "$work/e2e-jobs.yaml"
grep -qx '\[workers/1\] end 1' "$work/out" || fail "logs without a job id did not show the latest job"
gc logs -f "$work/e2e-jobs.yaml" 1-1
[ "$rc" = 1 ] || fail "logs of an unknown job exited $rc"
grep -q 'no job 1-1 on this node' "$work/err" || fail "an unknown job is not reported"
gc logs -f "$work/e2e-jobs.yaml" 'x;y'
[ "$rc" = 64 ] || fail "logs of a malformed job id exited $rc"
rm -f "$work/out" "$work/err" "$work/follow.out" "$work/follow.err"
if grep -rlF -- "$secret" "$work" >"$work/leaks" 2>/dev/null; then
	fail "the detached job's secret leaked into: $(tr '\n' ' ' <"$work/leaks")"
fi
lap "logs --follow until the end, jobs with exit codes, no secret left on disk"

# workdir: synced to every node before the job, honouring the ignore file (.git always);
# changed and synced again, only the change is sent; a file gone is removed; the job
# starts in it. A missing or too large workdir fails before anything is asked of the cloud.
code=$work/code
mkdir -p "$code/sub" "$code/.git" "$code/data"
printf 'print(1)\n' >"$code/train.py"
printf 'u\n' >"$code/sub/util.py"
printf 'ref\n' >"$code/.git/HEAD"
printf 'blob\n' >"$code/data/blob.bin"
printf 'log\n' >"$code/sub/run.log"
printf '# in a bucket\ndata/\n*.log\n' >"$code/.gpuclusterignore"
before=$(wc -l <"$work/requests.log")
gc run --no-apply --workdir "$work/nope" "$work/e2e-jobs.yaml" -- true
[ "$rc" = 64 ] || fail "run --workdir of a missing folder exited $rc"
grep -q -- "--workdir: '$work/nope' does not exist" "$work/err" || fail "a missing workdir is not reported"
mkdir -p "$work/huge"
truncate -s 33M "$work/huge/weights.bin"
gc run --no-apply --workdir "$work/huge" "$work/e2e-jobs.yaml" -- true
[ "$rc" = 64 ] || fail "run --workdir of a too large folder exited $rc"
grep -q "more than 32 MiB of files" "$work/err" || fail "a too large workdir is not reported"
rm -rf "$work/huge"
{ cat "$work/e2e-jobs.yaml" && echo 'workdir: missing'; } >"$work/e2e-jobs-wd.yaml"
gc run --no-apply "$work/e2e-jobs-wd.yaml" -- true
[ "$rc" = 1 ] || fail "a spec with a missing workdir exited $rc"
grep -q "e2e-jobs-wd.yaml:[0-9]*:[0-9]*: error: workdir: '$work/missing' does not exist" "$work/err" ||
	fail "a missing workdir of the spec is not reported with its place"
[ "$before" = "$(wc -l <"$work/requests.log")" ] || fail "a bad workdir sent requests to the cloud"
# shellcheck disable=SC2016 # expanded by the nodes' shell
gc_ok run --no-apply --workdir "$code" "$work/e2e-jobs.yaml" -- \
	'echo "$PWD $(find . -type f | sort | tr "\n" " ")"'
n=$(cat "$code/train.py" "$code/sub/util.py" "$code/.gpuclusterignore" | wc -c)
grep -q "workdir: 3 files, $n bytes sent, 0 removed, to 2 nodes (3 files in all, 3 ignored)" \
	"$work/err" || fail "the first sync: $(cat "$work/err")"
for r in 0 1; do
	grep -Eqx "\[workers/$r\] /.*/gpucluster/workdir ./.gpuclusterignore ./sub/util.py ./train.py " \
		"$work/out" || fail "workers/$r did not start in the workdir: $(cat "$work/out")"
done
printf 'print(2)\n' >"$code/train.py"
gc_ok run --no-apply --workdir "$code" "$work/e2e-jobs.yaml" -- 'cat train.py'
grep -q "workdir: 1 file, 9 bytes sent, 0 removed" "$work/err" || fail "the second sync: $(cat "$work/err")"
grep -qx '\[workers/1\] print(2)' "$work/out" || fail "the job did not see the change"
rm "$code/sub/util.py"
{ cat "$work/e2e-jobs.yaml" && echo 'workdir: code'; } >"$work/e2e-jobs-wd.yaml"
gc_ok run --no-apply "$work/e2e-jobs-wd.yaml" -- 'ls sub | wc -l'
grep -q "workdir: 0 files, 0 bytes sent, 1 removed" "$work/err" || fail "the spec's sync: $(cat "$work/err")"
grep -qx '\[workers/0\] 0' "$work/out" || fail "a file gone from the workdir stayed on the node"
gc_ok run --detach --no-apply "$work/e2e-jobs-wd.yaml" -- 'cat train.py'
grep -q "workdir: 0 files, 0 bytes sent, 0 removed" "$work/err" || fail "an unchanged workdir was sent again"
job=$(tail -n 1 "$work/out")
gc_ok logs --follow -f "$work/e2e-jobs-wd.yaml" "$job"
grep -qx '\[workers/1\] print(2)' "$work/out" || fail "a detached job did not start in the workdir"
lap "workdir: synced, only the change sent again, ignores honoured"

gc_ok destroy -y "$work/e2e-jobs.yaml"
expect_alive e2e-jobs 0 "after destroy"
requests_valid
note "ok ($((SECONDS - t0)) s)"
