#!/usr/bin/env bash
# basic.sh BINARY: runs the gpucluster binary through its command-line mechanics: the
# overview and usage exit code, --version, `version -o json`, help, --help on every
# command, did-you-mean, and `validate` on a missing file, a valid spec and an invalid
# one, in text and JSON. Everything it writes is under its own temporary directory.
set -euo pipefail

bin=${1:?usage: basic.sh PATH-TO-GPUCLUSTER}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gc-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0

# Colour must not depend on who runs the test.
unset NO_COLOR

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# run ARGS...: runs the binary; sets rc, out and err.
run() {
	set +e
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	set -e
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
	last="gpucluster $*"
}

expect_rc() {
	if [ "$rc" -ne "$1" ]; then
		fail "$last: exit $rc, expected $1; stderr: $err"
	fi
}

# expect_in WHICH TEXT: stdout or stderr of the last run contains TEXT.
expect_in() {
	local text
	if [ "$1" = out ]; then text=$out; else text=$err; fi
	if [[ "$text" != *"$2"* ]]; then
		fail "$last: std$1 lacks '$2'; it was: $text"
	fi
}

expect_empty() {
	local text
	if [ "$1" = out ]; then text=$out; else text=$err; fi
	if [ -n "$text" ]; then
		fail "$last: std$1 should be empty; it was: $text"
	fi
}

# json_check EXPR: the last stdout parses as JSON and the JavaScript expression EXPR,
# over the parsed document `d`, is true. node is one of the project's dependencies.
json_check() {
	if ! node -e 'const fs = require("fs");
const d = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
process.exit(new Function("d", "return (" + process.argv[2] + ");")(d) ? 0 : 1);' \
		"$tmp/out" "$1"; then
		fail "$last: JSON check failed: $1; stdout: $out"
	fi
}

# --- overview, version, help ---------------------------------------------------------

run
expect_rc 64
expect_in err "usage: gpucluster"
expect_in err "validate"
expect_in err "version"

run --version
expect_rc 0
if ! [[ "$out" =~ ^gpucluster\ [0-9]+\.[0-9]+\.[0-9]+ ]]; then
	fail "--version printed '$out'"
fi

run version -o json
expect_rc 0
json_check '["version", "libcurl", "openssl", "libyaml", "libssh2", "jansson"]
	.every((k) => typeof d[k] === "string" && d[k].length > 0)'

run -o json version
expect_rc 0
json_check 'typeof d.version === "string"'

run help validate
expect_rc 0
expect_in out "usage: gpucluster validate"
help_validate=$out

run validate --help
expect_rc 0
if [ "$out" != "$help_validate" ]; then
	fail "'validate --help' differs from 'help validate'"
fi

# Every command listed in the overview answers --help with exit 0.
run help
expect_rc 0
commands=$(sed -n '/^Commands:/,/^$/p' "$tmp/out" | awk 'NF >= 2 { print $1 }')
if [ -z "$commands" ]; then
	fail "no commands found in 'gpucluster help'"
fi
for c in $commands; do
	run "$c" --help
	expect_rc 0
	expect_in out "usage: gpucluster $c"
done

# --- usage errors --------------------------------------------------------------------

run valdate
expect_rc 64
expect_in err "did you mean 'validate'"

run validate --no-such-option
expect_rc 64
expect_in err "unknown option '--no-such-option'"

run -o yaml version
expect_rc 64
expect_in err "invalid value 'yaml'"

# --- validate --------------------------------------------------------------------------

missing="$tmp/missing.yaml"
run validate "$missing"
expect_rc 1
expect_in err "$missing"
expect_in err "$missing: 1 error"
expect_empty out

# Default file: cluster.yaml in the current directory.
(cd "$tmp" && set +e && "$bin" validate >out.default 2>err.default; echo $? >rc.default)
if [ "$(cat "$tmp/rc.default")" -ne 1 ] || ! grep -q "cluster.yaml" "$tmp/err.default"; then
	fail "validate with no file did not report cluster.yaml: $(cat "$tmp/err.default")"
fi

good="$tmp/good.yaml"
cat >"$good" <<'YAML'
name: llm-train
provider:
  name: aws
  region: us-east-1
  endpoint: http://127.0.0.1:4566
ssh:
  user: ubuntu
node_groups:
  - name: workers
    count: 4
    instance_types: [p4d.24xlarge, p4de.24xlarge]
    zones: [us-east-1a, us-east-1b]
    market: spot-then-on-demand
    image: ubuntu-22.04
    disk_gb: 500
    placement: same-zone
bootstrap:
  driver: "570"
  cuda: "12.8"
  cudnn: "9"
  container: docker
  steps:
    - name: pull-image
      run: docker pull nvcr.io/nvidia/pytorch:25.01-py3
lifecycle:
  ttl: 12h
  max_hourly_cost: 200
tags: {team: research}
YAML

# The unknown key on line 2 ("bad" in it) is an error under any reading of the spec.
bad="$tmp/bad.yaml"
cat >"$bad" <<'YAML'
name: llm-train
bad_key_nobody_knows: 1
provider:
  name: aws
  region: us-east-1
YAML

run validate "$good"
expect_rc 0
expect_empty err
expect_in out "llm-train"
expect_in out "aws"
expect_in out "us-east-1"
expect_in out "p4d.24xlarge"
expect_in out "workers"

run -q validate "$good"
expect_rc 0
expect_empty out
expect_empty err

run validate "$bad"
expect_rc 1
expect_empty out
if ! grep -Eq "^$bad:[0-9]+:[0-9]+: error: " "$tmp/err"; then
	fail "validate bad: no FILE:LINE:COL: error: line in: $err"
fi
if ! grep -Eq "^$bad: [0-9]+ errors?\$" "$tmp/err"; then
	fail "validate bad: no summary line in: $err"
fi

run validate "$good" "$bad"
expect_rc 1

run validate -o json "$good"
expect_rc 0
json_check 'd.files.length === 1 && d.files[0].valid === true &&
	d.files[0].errors.length === 0 && d.files[0].spec.name === "llm-train"'

run validate -o json "$good" "$bad" "$missing"
expect_rc 1
json_check 'd.files.length === 3 && d.files[0].valid === true &&
	d.files[1].valid === false && d.files[1].spec === null &&
	d.files[1].errors.length > 0 && d.files[1].errors[0].line > 0 &&
	["line", "column", "path", "message"].every((k) => k in d.files[1].errors[0]) &&
	d.files[2].valid === false && d.files[2].errors[0].message.length > 0'

if [ "$failures" -ne 0 ]; then
	echo "cli.basic: $failures failure(s)" >&2
	exit 1
fi
echo "cli.basic: ok"
