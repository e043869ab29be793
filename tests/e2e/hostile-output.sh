#!/usr/bin/env bash
# hostile-output.sh: what a cloud says reaches the user sanitised (issue 19, items 4 and
# 5). A cloud whose error message, tags and instance names carry ANSI escapes, CR/LF and
# GitHub Actions workflow commands (the emulator's hostile escape modes): stderr, stdout,
# `-o json`, the step summary and the step outputs get no raw control character and no
# line that starts with "::" from that text. And a spec whose endpoint holds a password is
# refused at its LINE:COL without ever showing the password.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

ESC=$'\033'
BEL=$'\007'
CR=$'\r'

# clean FILE WHAT: no raw ESC, BEL or CR, and no line a runner would read as a command
# made from the hostile text (our own ::add-mask::, ::group:: lines are not from it)
clean() {
	if grep -q "[$ESC$BEL$CR]" "$1"; then
		fail "$2 carries a raw control character"
	fi
	if grep -Eq '^[[:space:]]*::(error::forged|add-mask::gpucluster\r?$|stop-commands|warning::after)' "$1"; then
		fail "$2 carries a workflow command forged by the cloud"
	fi
}

sim_start --seed 7
spec "$work/c.yaml" e2e-hostile workers 1

# an error message full of escapes: plan fails, and says so in one escaped line
fault "$CLOUD:DescribeInstances:hostile,mode=escape-sequences"
gc plan "$work/c.yaml"
[ "$rc" = 1 ] || fail "plan against a hostile error message exited $rc"
clean "$work/err" "plan's stderr"
# (EC2's XML with raw control characters does not parse: its message is HTTP 400 only)
if grep -q 'forged' "$work/err"; then
	grep -qF '\x1b[31mred' "$work/err" || fail "the escape is not shown escaped"
	grep -qF '\x0a::error::forged' "$work/err" || fail "the line break is not shown escaped"
fi
gc -o json plan "$work/c.yaml"
[ "$rc" = 1 ] || fail "plan -o json against a hostile error message exited $rc"
clean "$work/err" "plan -o json's stderr"
clean "$work/out" "plan -o json's stdout"
if [ -s "$work/out" ]; then
	jq -e . "$work/out" >/dev/null || fail "plan -o json wrote no valid JSON"
fi
faults_clear

# tags and names full of escapes: status in text and JSON
gc_ok apply -y "$work/c.yaml"
fault "$CLOUD:DescribeInstances:hostile,mode=escape-tags"
gc status "$work/c.yaml"
clean "$work/out" "status's stdout"
clean "$work/err" "status's stderr"
gc -o json status "$work/c.yaml"
clean "$work/out" "status -o json's stdout"
jq -e . "$work/out" >/dev/null || fail "status -o json wrote no valid JSON"
faults_clear

# GitHub Actions: a launch refused with the hostile message
export GITHUB_ACTIONS=true GITHUB_REPOSITORY=acme/train GITHUB_RUN_ATTEMPT=1
export GITHUB_OUTPUT=$work/gh-output GITHUB_STEP_SUMMARY=$work/gh-summary
: >"$GITHUB_OUTPUT"
: >"$GITHUB_STEP_SUMMARY"
spec "$work/g.yaml" e2e-hostile-gha workers 1
fault "$CLOUD:RunInstances:hostile,mode=escape-sequences"
gc apply -y "$work/g.yaml"
[ "$rc" = 1 ] || fail "apply against a hostile launch error exited $rc"
clean "$work/err" "apply's stderr in GitHub Actions"
clean "$work/out" "apply's stdout in GitHub Actions"
clean "$GITHUB_STEP_SUMMARY" "the step summary"
clean "$GITHUB_OUTPUT" "the step outputs"
grep -q '^- \*\*Result:\*\* failed: ' "$GITHUB_STEP_SUMMARY" || fail "the summary has no failure"
if grep -q '^[[:space:]]*::' "$GITHUB_STEP_SUMMARY" "$GITHUB_OUTPUT"; then
	fail "a line of the summary or the outputs starts with '::'"
fi
faults_clear

# an endpoint with a password: refused where it stands, the password never shown
sed "s|endpoint: .*|endpoint: http://user:hunter2@127.0.0.1:1/|" "$work/c.yaml" >"$work/pw.yaml"
line=$(grep -n 'endpoint:' "$work/pw.yaml" | cut -d: -f1)
for cmd in validate plan; do
	gc "$cmd" "$work/pw.yaml"
	[ "$rc" = 1 ] || fail "$cmd with a password in the endpoint exited $rc"
	grep -q "pw.yaml:$line:[0-9]*: error: provider.endpoint: " "$work/err" ||
		fail "$cmd does not name provider.endpoint at its line and column"
	if grep -q hunter2 "$work/err" "$work/out"; then
		fail "$cmd shows the endpoint's password"
	fi
	grep -q "^::error file=.*pw.yaml,line=$line,col=[0-9]*::provider.endpoint: " "$work/err" ||
		fail "$cmd makes no annotation of the endpoint in GitHub Actions"
done
gc -o json validate "$work/pw.yaml"
if grep -q hunter2 "$work/err" "$work/out"; then
	fail "validate -o json shows the endpoint's password"
fi
unset GITHUB_ACTIONS GITHUB_OUTPUT GITHUB_STEP_SUMMARY
gc_ok destroy -y "$work/c.yaml"
note ok
