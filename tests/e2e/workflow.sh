#!/usr/bin/env bash
# workflow.sh: gpucluster as a GitHub Actions workflow runs it (GITHUB_ACTIONS=true, the
# runner's output and summary files, a run id). A scale-up step must leave its outputs
# and summary, tag what it made with the run, announce the credentials as masks before
# anything else, and turn spec errors into annotations. Then a start job is cancelled the
# hard way (SIGKILL) while its instances are still pending and nothing has been recorded
# anywhere: the teardown job, `destroy -y --selector run-id=N`, must leave nothing of that
# run (no instance, key pair or security group), while another run's cluster, and another
# run's nodes in a shared cluster, survive.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# instances stay pending for 2 s, so the killed start job dies with launches in flight
sim_start --pending-ms 2000
export GITHUB_ACTIONS=true GITHUB_REPOSITORY=acme/train GITHUB_RUN_ATTEMPT=1
export GITHUB_OUTPUT=$work/gh-output GITHUB_STEP_SUMMARY=$work/gh-summary
: >"$GITHUB_OUTPUT"
: >"$GITHUB_STEP_SUMMARY"
secret=$(
	cloud_export
	printenv "$SECRET_VAR"
)

# run_tags CLUSTER RUN: every instance, key pair and security group of CLUSTER in the
# emulator carries the run's tags (and the resources their creation time)
run_tags_ok() {
	state
	jq -e --arg c "$1" --arg r "$2" --arg cloud "$CLOUD" '
		[.instances[], .key_pairs[], .security_groups[]] | map(select(.cloud == $cloud))
		| map(select(.tags["gpucluster:cluster"] == $c)) as $all
		| ($all | length) > 0 and ($all | all(
			.tags["gpucluster:run-id"] == $r
			and .tags["gpucluster:run-attempt"] == "1"
			and .tags["gpucluster:repository"] == "acme/train"))' \
		"$work/state.json" >/dev/null || fail "resources of '$1' lack the tags of run $2"
	jq -e --arg c "$1" --arg cloud "$CLOUD" '[.key_pairs[], .security_groups[]]
		| map(select(.cloud == $cloud and .tags["gpucluster:cluster"] == $c))
		| all(.tags["gpucluster:created-at"] | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"))' \
		"$work/state.json" >/dev/null || fail "resources of '$1' lack gpucluster:created-at"
	jq -e --arg c "$1" --arg cloud "$CLOUD" '[.instances[]
		| select(.cloud == $cloud and .tags["gpucluster:cluster"] == $c)]
		| all(.tags["gpucluster:created-at"] == null)' "$work/state.json" >/dev/null ||
		fail "instances of '$1' carry gpucluster:created-at (it would change their launch request)"
}

# ---- run 101: the scale-up step -------------------------------------------------------
export GITHUB_RUN_ID=101
spec "$work/a.yaml" wf-a workers 2
gc_ok apply -y "$work/a.yaml"
expect_alive wf-a 2 "after the scale-up step"
run_tags_ok wf-a 101

# the credentials are masked before any other line
head -n 1 "$work/err" | grep -q '^::add-mask::' || fail "the first line on stderr is not a mask"
grep -qxF "::add-mask::$secret" "$work/err" || fail "the secret key was not masked"
if grep -v '^::add-mask::' "$work/err" | grep -qF "$secret"; then
	fail "the secret key was printed"
fi

# outputs: exactly these, once each
grep -qx 'cluster=wf-a' "$GITHUB_OUTPUT" || fail "no cluster output: $(cat "$GITHUB_OUTPUT")"
grep -qx 'node-count=2' "$GITHUB_OUTPUT" || fail "no node-count=2 output: $(cat "$GITHUB_OUTPUT")"
state
want_ips=$(jq -r --arg cloud "$CLOUD" '[.instances[] | select(.cloud == $cloud)
	| select(.tags["gpucluster:cluster"] == "wf-a") | .public_ip] | sort | join(",")' \
	"$work/state.json")
got_ips=$(sed -n 's/^ips=//p' "$GITHUB_OUTPUT" | tr ',' '\n' | sort | paste -sd, -)
if [ -z "$want_ips" ] || [ "$got_ips" != "$want_ips" ]; then
	fail "ips output '$got_ips', the nodes' public addresses are '$want_ips'"
fi
grep -Eqx 'hourly-cost=[0-9]+\.[0-9]{4}' "$GITHUB_OUTPUT" ||
	fail "no numeric hourly-cost output: $(cat "$GITHUB_OUTPUT")"
[ "$(grep -c '=' "$GITHUB_OUTPUT")" = 4 ] || fail "expected 4 outputs: $(cat "$GITHUB_OUTPUT")"

# the summary: the command, the plan, one row per node, the cost
grep -qF "### gpucluster apply: \`wf-a\`" "$GITHUB_STEP_SUMMARY" || fail "no summary heading"
grep -qF -- '- **Plan:** 2 to create, 0 to terminate, 0 kept' "$GITHUB_STEP_SUMMARY" ||
	fail "the summary has no plan line"
for id in $(jq -r --arg cloud "$CLOUD" '.instances[] | select(.cloud == $cloud)
	| select(.tags["gpucluster:cluster"] == "wf-a") | .id' "$work/state.json"); do
	grep -qE "^\| workers/[01] \| $id \| " "$GITHUB_STEP_SUMMARY" ||
		fail "the summary has no row for $id"
done
# in the currency the cloud prices the account in (the emulator's default keys: China site)
cur=$([ "$CLOUD" = aws ] && echo USD || echo CNY)
grep -qE -- "- \*\*Cost:\*\* [0-9]+\.[0-9]{2} $cur/h for 2 nodes" "$GITHUB_STEP_SUMMARY" ||
	fail "the summary has no cost line in $cur"

# a spec error is an annotation on the file, at its line and column
printf 'name: wf-bad\nprovider:\n  name: %s\n  region: %s\nnode_groups:\n  - name: w\n    cuont: 1\n' \
	"$CLOUD" "$REGION" >"$work/bad.yaml"
gc validate "$work/bad.yaml"
[ "$rc" = 1 ] || fail "validate of a bad spec exited $rc"
grep -Eq "^::error file=$work/bad\.yaml,line=7,col=5::unknown key 'cuont'" "$work/err" ||
	fail "no annotation for the bad key"

# ---- run 303 grows run 101's cluster: a shared cluster, nodes of two runs ------------
export GITHUB_RUN_ID=303
gc_ok scale -y -f "$work/a.yaml" workers=3
expect_alive wf-a 3 "after run 303's scale-up"
state
[ "$(jq --arg cloud "$CLOUD" '[.instances[] | select(.cloud == $cloud)
	| select(.tags["gpucluster:cluster"] == "wf-a" and .tags["gpucluster:run-id"] == "303")
	| select((.state | ascii_downcase) != "terminated")] | length' "$work/state.json")" = 1 ] ||
	fail "run 303's node is not tagged with its run"
# its teardown takes its own node only, and leaves the security group (and key pair, where
# there is one) that run 101's nodes still use
gc_ok destroy -y --selector run-id=303 "$work/a.yaml"
expect_alive wf-a 2 "after run 303's teardown"
expect_owned wf-a "run 303's teardown took resources run 101 uses"
grep -q "outside the selection" "$work/err" || fail "destroy did not say why it kept them"

# ---- run 202: the start job is cancelled mid-apply -----------------------------------
export GITHUB_RUN_ID=202
: >"$GITHUB_OUTPUT"
spec "$work/b.yaml" wf-b workers 3
(
	cloud_export
	exec "$GC_BIN" --no-color apply -y --no-bootstrap "$work/b.yaml" >"$work/out" 2>"$work/err" \
		</dev/null
) &
apid=$!
killed=
for _ in $(seq 1 500); do
	kill -0 "$apid" 2>/dev/null || break
	if [ "$(alive wf-b)" -ge 1 ]; then
		kill -KILL "$apid" 2>/dev/null && killed=1
		break
	fi
	sleep 0.01
done
wait "$apid" 2>/dev/null || true
[ -n "$killed" ] || fail "the start job finished before it could be killed"
n=$(alive wf-b)
[ "$n" -ge 1 ] || fail "the killed start job left no instance to clean up"
state
pending=$(jq --arg cloud "$CLOUD" '[.instances[] | select(.cloud == $cloud)
	| select(.tags["gpucluster:cluster"] == "wf-b")
	| select((.state | ascii_downcase) == "pending")] | length' "$work/state.json")
[ -s "$GITHUB_OUTPUT" ] && fail "the killed start job recorded outputs"
note "start job killed with $n instances of wf-b alive ($pending pending)"

# the teardown job: `if: always()`, from the spec and the run id alone
gc_ok destroy -y --selector run-id=202 "$work/b.yaml"
expect_alive wf-b 0 "after the teardown"
[ "$(owned_resources wf-b)" = 0 ] || fail "the teardown left key pairs or security groups"
state
jq -e --arg cloud "$CLOUD" '[.instances[], .key_pairs[], .security_groups[]]
	| map(select(.cloud == $cloud and .tags["gpucluster:run-id"] == "202"))
	| all(has("state") and (.state | ascii_downcase) == "terminated")' \
	"$work/state.json" >/dev/null || fail "something of run 202 is left"
grep -qF "### gpucluster destroy: \`wf-b\`" "$GITHUB_STEP_SUMMARY" ||
	fail "the teardown wrote no summary"
# the other run's cluster is untouched
expect_alive wf-a 2 "after run 202's teardown"
expect_owned wf-a "run 202's teardown touched wf-a's resources"

# a teardown that finds nothing of its run succeeds
gc_ok destroy -y --selector run-id=202 "$work/b.yaml"

unset GITHUB_ACTIONS
gc_ok destroy -y "$work/a.yaml"
expect_alive wf-a 0 "after the final destroy"
requests_valid
note ok
