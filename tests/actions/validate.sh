#!/usr/bin/env bash
# validate.sh ROOT GPUCLUSTER: action.yml and the example workflows against the GitHub
# Actions schemas (@action-validator/cli, pinned in package-lock.json and installed by
# scripts/install-deps.sh), then what a schema cannot see: every output of action.yml
# reads a step that exists, every input it reads is declared, every command an example
# passes to the action is one the action knows, and every spec an example names
# validates. Broken copies must be refused, so the checker itself is checked.
set -euo pipefail
root=$1 gc=$2
validator=$root/tests/actions/node_modules/.bin/action-validator
[ -x "$validator" ] || {
	echo "validate.sh: $validator is missing: run scripts/install-deps.sh" >&2
	exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "validate.sh: $*" >&2
	exit 1
}

# the schemas
"$validator" "$root/action.yml" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "action.yml"; }
n=0
for wf in "$root"/examples/workflows/*.yml; do
	"$validator" "$wf" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "$wf"; }
	n=$((n + 1))
done
[ "$n" -ge 2 ] || fail "only $n example workflows"

# the checker refuses a broken action and a broken workflow
mkdir "$tmp/bad"
sed 's/^    - name: Restore the build$/    - nam: Restore the build/' \
	"$root/action.yml" >"$tmp/bad/action.yml"
cmp -s "$root/action.yml" "$tmp/bad/action.yml" && fail "could not break action.yml"
"$validator" "$tmp/bad/action.yml" >/dev/null 2>&1 && fail "a broken action.yml passed"
sed 's/^    runs-on: ubuntu-24.04$/    runs-onn: ubuntu-24.04/' \
	"$root/examples/workflows/train.yml" >"$tmp/bad/train.yml"
"$validator" "$tmp/bad/train.yml" >/dev/null 2>&1 && fail "a broken workflow passed"

# outputs read steps that exist; inputs read are declared
steps=$(sed -n 's/^      id: \([a-z-]*\)$/\1/p' "$root/action.yml" | sort -u)
while read -r s; do
	grep -qx "$s" <<<"$steps" || fail "action.yml: an output reads step '$s', which has no id"
done < <(grep -o 'steps\.[a-z-]*\.outputs' "$root/action.yml" | cut -d. -f2 | sort -u)
inputs=$(awk '/^inputs:/ { on = 1; next } /^[a-z]/ { on = 0 } on && /^  [a-z-]*:$/ {
	sub(/^  /, ""); sub(/:$/, ""); print }' "$root/action.yml")
while read -r i; do
	grep -qx "$i" <<<"$inputs" || fail "action.yml reads input '$i', which is not declared"
done < <(grep -o 'inputs\.[a-z-]*' "$root/action.yml" | cut -d. -f2 | sort -u)

# the examples' commands and specs
# the case patterns of the run step: "        apply | destroy) ..."
known=$(grep -E '^        [a-z |]+\)' "$root/action.yml" | cut -d')' -f1 | tr -d ' ' | tr '|' '\n')
[ "$(wc -l <<<"$known")" -ge 8 ] || fail "found only these commands in action.yml: $known"
for wf in "$root"/examples/workflows/*.yml; do
	while read -r c; do
		grep -qx "$c" <<<"$known" || fail "$wf: the action has no command '$c'"
	done < <(sed -n 's/^ *command: *\([a-z-]*\)$/\1/p' "$wf")
	while read -r spec; do
		[ -f "$root/$spec" ] || fail "$wf: no spec '$spec'"
		"$gc" validate "$root/$spec" >/dev/null || fail "$wf: '$spec' does not validate"
	done < <(sed -n 's/^ *spec: *\(.*\)$/\1/p' "$wf" | sort -u)
done
# the run step itself: each command becomes the gpucluster command line it should, run
# with a stand-in gpucluster that prints its arguments
awk '/^      id: gpucluster$/ { on = 1 } on && /^      run: \|$/ { body = 1; next }
	body && /^    - / { exit } body { sub(/^        /, ""); print }' "$root/action.yml" >"$tmp/step.sh"
[ -s "$tmp/step.sh" ] || fail "no run script in the gpucluster step of action.yml"
mkdir "$tmp/bin"
printf '#!/bin/sh\nprintf "%%s|" "$@"; echo\n' >"$tmp/bin/gpucluster"
chmod +x "$tmp/bin/gpucluster"
step() { # COMMAND ARGS -> the stand-in's line
	PATH="$tmp/bin:$PATH" GC_COMMAND=$1 GC_SPEC=c.yaml GC_ARGS=$2 bash "$tmp/step.sh"
}
expect() { # COMMAND ARGS WANT
	local got
	got=$(step "$1" "$2") || fail "action.yml: '$1 $2' failed"
	[ "$got" = "$3" ] || fail "action.yml: '$1 $2' ran gpucluster $got, want $3"
}
expect apply '' 'apply|-y|c.yaml|'
expect destroy '--selector run-id=7' 'destroy|-y|--selector|run-id=7|c.yaml|'
expect scale 'workers=4' 'scale|-y|-f|c.yaml|workers=4|'
expect plan '--detailed-exitcode' 'plan|--detailed-exitcode|c.yaml|'
expect hosts '--format mpi' 'hosts|--format|mpi|c.yaml|'
# shellcheck disable=SC2016 # the variable is for the nodes, not this shell
expect run '--no-apply -- echo $NODE_RANK' 'run|c.yaml|--no-apply|--|echo|$NODE_RANK|'
expect gc '--cloud aws --yes' 'gc|--cloud|aws|--yes|'
# args on several lines: one argument per line, spaces and quotes kept, nothing globbed
nl=$'\n'
expect run "--no-apply$nl--$nl"'python train.py --name "my run" --tag it'"'"'s *' \
	'run|c.yaml|--no-apply|--|python train.py --name "my run" --tag it'"'"'s *|'
expect destroy "$nl--selector$nl${nl}run-id=7$nl" 'destroy|-y|--selector|run-id=7|c.yaml|'
# the run input: one word after --, whatever it holds
# shellcheck disable=SC2016 # for the nodes' shell
script='echo "rank $NODE_RANK" '"'"'a  b'"'"'
python -u train.py --out "/data/my run"'
got=$(PATH="$tmp/bin:$PATH" GC_COMMAND=run GC_SPEC=c.yaml GC_ARGS='--no-apply' GC_RUN=$script \
	bash "$tmp/step.sh") || fail "action.yml: the run input failed"
[ "$got" = "run|c.yaml|--no-apply|--|$script|" ] || fail "action.yml: the run input ran gpucluster $got"
if PATH="$tmp/bin:$PATH" GC_COMMAND=apply GC_SPEC=c.yaml GC_ARGS='' GC_RUN='echo hi' \
	bash "$tmp/step.sh" >"$tmp/out" 2>&1; then
	fail "action.yml accepted the run input with command apply"
fi
grep -q "the run input is for command run" "$tmp/out" || fail "no clear error for run with apply"

# the hosts step: the hostfile's content as a multi-line output another job can read
awk '/^      id: hosts$/ { on = 1 } on && /^      run: \|$/ { body = 1; next }
	body && /^    - / { exit } body { sub(/^        /, ""); print }' "$root/action.yml" >"$tmp/hosts.sh"
[ -s "$tmp/hosts.sh" ] || fail "no run script in the hosts step of action.yml"
# shellcheck disable=SC2016 # the stand-in's own variables
printf '#!/bin/sh\nwhile [ $# -gt 1 ]; do [ "$1" = --output-file ] && f=$2; shift; done\nprintf "10.0.0.1 slots=8\\n10.0.0.2 slots=8\\n" >"$f"\n' \
	>"$tmp/bin/gpucluster"
: >"$tmp/gh-output"
PATH="$tmp/bin:$PATH" RUNNER_TEMP=$tmp GITHUB_OUTPUT=$tmp/gh-output GC_SPEC=c.yaml GC_FORMAT=mpi \
	bash "$tmp/hosts.sh" || fail "action.yml: the hosts step failed"
grep -qx "hostfile=$tmp/gpucluster-hostfile" "$tmp/gh-output" || fail "no hostfile output"
# read it back the way the runner does: NAME<<DELIM ... DELIM
content=$(awk '/^hostfile-content<</ { d = substr($0, index($0, "<<") + 2); on = 1; next }
	on && $0 == d { exit } on { print }' "$tmp/gh-output")
[ "$content" = $'10.0.0.1 slots=8\n10.0.0.2 slots=8' ] || fail "hostfile-content output: $content"
printf '#!/bin/sh\nprintf "%%s|" "$@"; echo\n' >"$tmp/bin/gpucluster"

if step frobnicate '' >"$tmp/out" 2>&1; then
	fail "action.yml accepted an unknown command"
fi
grep -q "unknown command 'frobnicate'" "$tmp/out" || fail "no clear error for an unknown command"
echo "validate.sh: ok (action.yml and $n workflows)"
