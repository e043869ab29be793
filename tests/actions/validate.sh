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
known=$(grep -E '^        [a-z |-]+\)' "$root/action.yml" | cut -d')' -f1 | tr -d ' ' | tr '|' '\n')
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
# GitHub's documented limits (docs/ci.md): a GitHub-hosted job runs 6 hours at most, a
# self-hosted one 5 days; the concurrency group is the cluster's, not the branch's
for wf in "$root"/examples/workflows/*.yml; do
	awk -v wf="$wf" '
		/^    runs-on:/ { hosted = ($0 !~ /self-hosted/) }
		/^    timeout-minutes:/ { t = $2 + 0
			if ((hosted && t > 360) || t > 7200) { print wf ": timeout-minutes " t " is past GitHub'"'"'s limit"; bad = 1 } }
		END { exit bad }' "$wf" >&2 || fail "$wf: a timeout past GitHub's limits"
	if grep -q 'group:.*github\.ref' "$wf"; then
		fail "$wf: the concurrency group is per branch, the cluster is not"
	fi
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
	PATH="$tmp/bin:$PATH" GITHUB_ACTION_PATH=${GITHUB_ACTION_PATH:-$root} GC_COMMAND=$1 GC_SPEC=c.yaml GC_ARGS=$2 bash "$tmp/step.sh"
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

# the node as a runner (scripts/node-runner.sh), with a stand-in GitHub API (curl) and
# gpucluster: the registration token comes from the documented call, reaches config.sh
# whole, and the run's runners (and only those) are deleted at the end
mkdir "$tmp/nr" "$tmp/nr/home"
cat >"$tmp/nr/curl" <<'CURL'
#!/usr/bin/env bash
m=GET url= auth=
while [ $# -gt 0 ]; do
	case $1 in
	-X) m=$2; shift ;;
	-H) [[ $2 == Authorization:* ]] && auth=$2; shift ;;
	-fsSL) cat "$NR/runner.tar.gz"; exit ;;
	-*) ;;
	*) url=$1 ;;
	esac
	shift
done
echo "$m $url $auth" >>"$NR/calls"
case "$m $url" in
"POST http://gh/repos/acme/train/actions/runners/registration-token")
	echo '{"token":"AB CD'"'"'x","expires_at":"2026-11-27T03:00:00Z"}' ;;
"GET http://gh/repos/acme/train/actions/runners?per_page=100")
	echo '{"total_count":3,"runners":[
	{"id":1,"labels":[{"id":1,"name":"self-hosted","type":"read-only"},{"id":2,"name":"gpucluster-42","type":"custom"}]},
	{"id":2,"labels":[{"id":1,"name":"self-hosted","type":"read-only"},{"id":3,"name":"gpucluster-43","type":"custom"}]},
	{"id":3,"labels":[{"id":2,"name":"gpucluster-42","type":"custom"}]}]}' ;;
"DELETE http://gh/repos/acme/train/actions/runners/"*) ;;
*) exit 22 ;;
esac
CURL
# the runner's package: config.sh records its arguments, run.sh that it ran
mkdir "$tmp/nr/pkg"
# shellcheck disable=SC2016 # the stand-ins' own variables
printf '#!/bin/sh\nprintf "%%s|" "$@" >"$NR/config-args"\n' >"$tmp/nr/pkg/config.sh"
# shellcheck disable=SC2016 # the stand-ins' own variables
printf '#!/bin/sh\necho ran >"$NR/run-ran"\n' >"$tmp/nr/pkg/run.sh"
chmod +x "$tmp/nr/curl" "$tmp/nr/pkg/config.sh" "$tmp/nr/pkg/run.sh"
tar -C "$tmp/nr/pkg" -czf "$tmp/nr/runner.tar.gz" config.sh run.sh
# sudo and systemd-run as the node has them: run.sh starts in the background
printf '#!/bin/sh\nexec "$@"\n' >"$tmp/nr/sudo"
cat >"$tmp/nr/systemd-run" <<'UNIT'
#!/usr/bin/env bash
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	--unit | --uid | --gid | --setenv) shift ;;
	esac
	shift
done
"$@" >/dev/null 2>&1 </dev/null &
UNIT
chmod +x "$tmp/nr/sudo" "$tmp/nr/systemd-run"
# gpucluster exec --node N SPEC -- SCRIPT: record, then run SCRIPT as the node would
cat >"$tmp/nr/gpucluster" <<'GC'
#!/usr/bin/env bash
printf '%s|' "${@:1:5}" >"$NR/gc-args"
HOME=$NR/home bash -c "$6"
GC
chmod +x "$tmp/nr/gpucluster"
nr() { # MODE: the script with the stand-ins
	NR=$tmp/nr PATH="$tmp/nr:$PATH" GITHUB_API_URL=http://gh GITHUB_SERVER_URL=https://github.com \
		GITHUB_REPOSITORY=acme/train GITHUB_RUN_ID=42 GPUCLUSTER_GITHUB_TOKEN=ghp_t \
		bash "$root/scripts/node-runner.sh" "$1" c.yaml "${@:2}"
}
nr register >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "node-runner.sh register failed"; }
grep -qx 'POST http://gh/repos/acme/train/actions/runners/registration-token Authorization: Bearer ghp_t' \
	"$tmp/nr/calls" || fail "node-runner.sh: no registration-token call: $(cat "$tmp/nr/calls")"
[ "$(cat "$tmp/nr/gc-args")" = 'exec|--node|workers/0|c.yaml|--|' ] ||
	fail "node-runner.sh ran gpucluster $(cat "$tmp/nr/gc-args")"
want="--unattended|--ephemeral|--replace|--url|https://github.com/acme/train|--token|AB CD'x|--name|gpucluster-42-0|--labels|gpucluster-42|"
[ "$(cat "$tmp/nr/config-args")" = "$want" ] ||
	fail "node-runner.sh: config.sh got $(cat "$tmp/nr/config-args"), want $want"
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$tmp/nr/run-ran" ] && break; sleep 0.1; done
[ -s "$tmp/nr/run-ran" ] || fail "node-runner.sh did not start run.sh"
grep -qxF "::add-mask::AB CD'x" "$tmp/out" || fail "node-runner.sh did not mask the registration token"
: >"$tmp/nr/calls"
nr remove >"$tmp/out" 2>&1 || fail "node-runner.sh remove failed"
deleted=$(sed -n 's|^DELETE http://gh/repos/acme/train/actions/runners/\([0-9]*\) .*|\1|p' \
	"$tmp/nr/calls" | paste -sd, -)
[ "$deleted" = 1,3 ] || fail "node-runner.sh remove deleted runners '$deleted', want 1,3"
if GPUCLUSTER_GITHUB_TOKEN='' NR=$tmp/nr PATH="$tmp/nr:$PATH" GITHUB_REPOSITORY=acme/train \
	GITHUB_RUN_ID=42 bash "$root/scripts/node-runner.sh" register c.yaml >"$tmp/out" 2>&1; then
	fail "node-runner.sh registered without a token"
fi
grep -q 'GPUCLUSTER_GITHUB_TOKEN is not set' "$tmp/out" || fail "no clear error without a token"
# the action's runner commands call the script with the spec (and the node)
mkdir -p "$tmp/ap/scripts"
printf '#!/bin/sh\nprintf "node-runner|"; printf "%%s|" "$@"; echo\n' >"$tmp/ap/scripts/node-runner.sh"
chmod +x "$tmp/ap/scripts/node-runner.sh"
GITHUB_ACTION_PATH=$tmp/ap expect runner-register 'gpu/1' 'node-runner|register|c.yaml|gpu/1|'
GITHUB_ACTION_PATH=$tmp/ap expect runner-remove '' 'node-runner|remove|c.yaml|'

if step frobnicate '' >"$tmp/out" 2>&1; then
	fail "action.yml accepted an unknown command"
fi
grep -q "unknown command 'frobnicate'" "$tmp/out" || fail "no clear error for an unknown command"
echo "validate.sh: ok (action.yml and $n workflows)"
