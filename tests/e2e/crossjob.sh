#!/usr/bin/env bash
# crossjob.sh: a workflow's jobs on different runners (docs/ci.md, "Access from any
# runner"). Each job gets a fresh HOME and state directory, as a GitHub-hosted runner
# does. The up job applies with the cluster key from the GPUCLUSTER_SSH_KEY secret (no
# bootstrap: what matters here is the key, and the nodes answer SSH without one); the
# train job, on another runner with nothing from the first but that secret, runs a command
# on the nodes (arguments with spaces and quotes arrive whole); the down job tears down by
# run id. A runner without the secret, or with another key, is refused with advice that
# names the secret; a state directory holding another key than the secret is an error
# before anything is touched; the spec's ssh.key_env names another variable for the key.
# Two branches' clusters (concurrency keyed by the cluster's
# name) run at once and neither touches the other's nodes.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start_nodes --seed 7
export GITHUB_ACTIONS=true GITHUB_REPOSITORY=acme/train GITHUB_RUN_ATTEMPT=1
t0=$SECONDS
lap() { note "$1 ($((SECONDS - t0)) s)"; }

# runner NAME: a fresh runner: its own HOME, state directory and output files
runner() {
	export HOME=$work/$1/home GPUCLUSTER_STATE_DIR=$work/$1/state XDG_STATE_HOME=$work/$1/xdg
	export GITHUB_OUTPUT=$work/$1/gh-output GITHUB_STEP_SUMMARY=$work/$1/gh-summary
	mkdir -p "$HOME"
	: >"$GITHUB_OUTPUT"
	: >"$GITHUB_STEP_SUMMARY"
}

# cj_spec NAME: one node on the GPU-ready image, the quickest bootstrap there is
cj_spec() {
	{
		printf 'name: %s\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' "$1" \
			"$CLOUD" "$REGION" "$ENDPOINT"
		printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
		printf '  - name: workers\n    count: 1\n    instance_types: [%s]\n' "$TYPE_READY"
		printf '    image: gpu-ready\n'
		printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  container: none\n'
	} >"$work/$1.yaml"
}

# the repository secret: a key made once, before any workflow ran
ssh-keygen -q -t ed25519 -N '' -C ci -f "$work/secret-key"
secret=$(cat "$work/secret-key")
ssh-keygen -q -t ed25519 -N '' -C other -f "$work/other-key"

# ---- run 301, job up (runner 1) -------------------------------------------------------
export GITHUB_RUN_ID=301
runner up
cj_spec cj-main
GPUCLUSTER_SSH_KEY=$secret gc_ok apply -y --no-bootstrap "$work/cj-main.yaml"
expect_alive cj-main 1 "after the up job"
grep -qx 'cluster=cj-main' "$GITHUB_OUTPUT" || fail "no cluster output: $(cat "$GITHUB_OUTPUT")"
pub=$GPUCLUSTER_STATE_DIR/clusters/$CLOUD/$REGION/cj-main/id_ed25519.pub
[ "$(cut -d' ' -f1-2 "$pub")" = "$(ssh-keygen -y -f "$work/secret-key" | cut -d' ' -f1-2)" ] ||
	fail "the up job did not make the secret the cluster's key"
# the secret is masked before anything could print it
grep -qF "::add-mask::$(sed -n 2p "$work/secret-key")" "$work/err" ||
	fail "the secret key's lines were not masked"
lap "up: applied with the secret's key"

# ---- job train, runner 2: nothing but the secret ---------------------------------------
runner train
# shellcheck disable=SC2016 # expanded by the nodes' shell
GPUCLUSTER_SSH_KEY=$secret gc run --no-apply "$work/cj-main.yaml" -- \
	'printf "<%s>" "$NODE_RANK" "a  b" "it'"'"'s" "\"q\""; echo'
[ "$rc" = 0 ] || fail "train on a fresh runner with the secret exited $rc"
grep -qxF "[workers/0] <0><a  b><it's><\"q\">" "$work/out" ||
	fail "the command's words did not arrive whole: $(cat "$work/out")"
lap "train: a fresh runner reached the node with the secret"

# ---- a runner without the secret: refused, and told why -------------------------------
runner nosecret
gc run --no-apply "$work/cj-main.yaml" -- true
[ "$rc" != 0 ] || fail "a runner without the key reached the node"
grep -q "public key authentication as 'ubuntu' refused" "$work/err" ||
	fail "no refusal message without the secret"
grep -q 'set GPUCLUSTER_SSH_KEY from a repository secret' "$work/err" ||
	fail "the refusal does not say what to do"
# ---- a runner with another key in the secret: refused, and told which ----------------
runner wrongsecret
GPUCLUSTER_SSH_KEY=$(cat "$work/other-key") gc run --no-apply "$work/cj-main.yaml" -- true
[ "$rc" != 0 ] || fail "a runner with another key reached the node"
grep -q 'GPUCLUSTER_SSH_KEY holds another' "$work/err" ||
	fail "the refusal does not say the secret holds another key"
# ---- a secret that is no key at all: an error that names the variable ----------------
GPUCLUSTER_SSH_KEY='not a key' gc status "$work/cj-main.yaml"
[ "$rc" != 0 ] || fail "a malformed secret was accepted"
grep -q 'GPUCLUSTER_SSH_KEY does not hold an unencrypted ed25519 OpenSSH private key' \
	"$work/err" || fail "no clear error for a malformed secret"
# ---- ssh.key_env: the spec names the variable that holds the key ----------------------
sed 's/^ssh:$/ssh:\n  key_env: CLUSTER_KEY/' "$work/cj-main.yaml" >"$work/cj-keyenv.yaml"
runner keyenv
CLUSTER_KEY=$secret gc run --no-apply "$work/cj-keyenv.yaml" -- true
[ "$rc" = 0 ] || fail "a fresh runner with the key in ssh.key_env's variable exited $rc"
runner keyenv2
GPUCLUSTER_SSH_KEY=$secret gc run --no-apply "$work/cj-keyenv.yaml" -- true
[ "$rc" != 0 ] || fail "the key in GPUCLUSTER_SSH_KEY was used although ssh.key_env names another"
grep -q 'set CLUSTER_KEY from a repository secret' "$work/err" ||
	fail "the refusal does not name ssh.key_env's variable"
# ---- the train runner's state holds the secret's key; another secret disagrees ------
runner train
GPUCLUSTER_SSH_KEY=$(cat "$work/other-key") gc run --no-apply "$work/cj-main.yaml" -- true
[ "$rc" != 0 ] || fail "a secret that disagrees with the local key was used"
grep -q 'GPUCLUSTER_SSH_KEY holds key SHA256:.*, but .* holds another one' "$work/err" ||
	fail "no clear error for a secret that disagrees with the local key"
expect_alive cj-main 1 "after the refused runners"
lap "refusals: no secret, another secret, a malformed one, a disagreeing one"

# ---- two branches at once: each its own cluster (the concurrency group's key) --------
export GITHUB_RUN_ID=302
runner feature
cj_spec cj-feature
(GPUCLUSTER_SSH_KEY=$secret cloud_env "$GC_BIN" --no-color apply -y --no-bootstrap "$work/cj-feature.yaml" \
	>"$work/feature.out" 2>"$work/feature.err" </dev/null) &
feature=$!
export GITHUB_RUN_ID=303
runner main2
GPUCLUSTER_SSH_KEY=$secret gc_ok apply -y --no-bootstrap "$work/cj-main.yaml"
wait "$feature" || fail "the feature branch's apply failed: $(tail -5 "$work/feature.err")"
expect_alive cj-main 1 "after both branches applied"
expect_alive cj-feature 1 "after both branches applied"

# ---- job down of run 301, runner 3: by run id, whatever the other branch does --------
export GITHUB_RUN_ID=301
runner down
gc_ok destroy -y --selector run-id=301 "$work/cj-main.yaml"
expect_alive cj-main 0 "after the down job"
expect_alive cj-feature 1 "after the main branch's down job"
runner down2
gc_ok destroy -y --selector run-id=302 "$work/cj-feature.yaml"
expect_alive cj-feature 0 "after the feature branch's down job"
lap "two branches: each down job took only its own nodes"
