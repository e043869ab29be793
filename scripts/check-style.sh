#!/usr/bin/env bash
# The style check CI runs (through ctest's style.check): clang-format conformance, banned
# unsafe functions, printing/exiting below cmd/, provider ops called outside core/, cloud
# names outside providers/, and shellcheck on every shell script. Prints one line per problem; exits 1 if any.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

fail=0
problem() {
	printf '%s\n' "$*"
	fail=1
}
# report TEXT: any non-empty text is a list of problems, one per line
report() {
	if [ -n "$1" ]; then
		printf '%s\n' "$1"
		fail=1
	fi
}

mapfile -t c_files < <(git ls-files --cached --others --exclude-standard -- '*.c' '*.h' |
	grep -v '^tests/fuzz/corpus/' | while read -r f; do [ -f "$f" ] && echo "$f"; done)

# The slow parts run in batches over the CPUs (a process per file cost more than the checks,
# and shellcheck -x parses every sourced file again for each script that sources it).
jobs=$(nproc 2>/dev/null || echo 2)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 6. (started first, the longest) shell scripts are shellcheck-clean, the emulator's
#    simulated node tools included; reported at the end
mapfile -t sh_files < <(git ls-files --cached --others --exclude-standard -- '*.sh' .ci/run \
	'sim/node/tools/*' | grep -v '/\.shellcheckrc$' |
	while read -r f; do [ -f "$f" ] && echo "$f"; done)
if [ ${#sh_files[@]} -gt 0 ]; then
	printf '%s\0' "${sh_files[@]}" | xargs -0 -P "$jobs" -n 8 shellcheck -x >"$tmp/shellcheck" 2>&1 &
	sc_pid=$!
fi

# 1. formatting: the tree must be what clang-format makes of it. A batch names each file it
#    would change in its diagnostics; a batch that failed without naming one is reported whole.
# shellcheck disable=SC2016 # the batch's own shell expands it
printf '%s\0' "${c_files[@]}" | xargs -0 -P "$jobs" -n 40 sh -c \
	'out=$(clang-format --dry-run --Werror "$@" 2>&1) && exit 0
	names=$(printf "%s\n" "$out" | sed -n "s/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p" | sort -u)
	[ -n "$names" ] && printf "%s\n" "$names" || printf "clang-format failed on: %s\n%s\n" "$*" "$out" >&2' \
	sh >"$tmp/unformatted" 2>"$tmp/format-errors"
while read -r f; do
	problem "$f: not clang-formatted (run: clang-format -i $f)"
done < <(sort -u "$tmp/unformatted")
report "$(cat "$tmp/format-errors")"

# 2. banned functions: unbounded or unchecked string and number handling
banned='\b(sprintf|vsprintf|strcpy|strcat|strtok|atoi|atol|atoll|gets|strncpy|tmpnam|mktemp)[[:space:]]*\('
report "$(grep -HnE "$banned" -- "${c_files[@]}" | grep -vE '^[^:]*:[0-9]+:\s*(\*|//)' |
	sed 's|$|: banned function|')"

# 3. below cmd/ nothing prints or exits (tests, the emulator and benches are programs)
# files FOLDER-PATTERN...: the C files under those folders (an empty list greps nothing)
files() {
	local f p
	for f in "${c_files[@]}"; do
		for p in "$@"; do
			# shellcheck disable=SC2254 # p is a pattern
			case "$f" in $p) printf '%s\0' "$f" ;; esac
		done
	done
}
report "$(files 'core/*' 'providers/*' 'bootstrap/*' | xargs -0 -r grep -HnE \
	'\b(printf|puts|putchar|perror|exit|_exit)[[:space:]]*\(|\bstd(out|err)\b' |
	grep -vE '^[^:]*:[0-9]+:\s*(\*|//)' | sed 's|$|: prints or exits below cmd/|')"

# 4. only core's wrappers call through a provider's ops table (reading its name and facts is
#    fine: that is how cmd/ learns about a cloud without naming it)
report "$(for f in "${c_files[@]}"; do
	case "$f" in core/*) ;; *) printf '%s\0' "$f" ;; esac
done | xargs -0 -r grep -HnE '\bops->[a-z_]+[[:space:]]*\(' |
	sed 's|$|: provider ops called outside core/|')"

# 5. no cloud is named in core/, cmd/ or bootstrap/, in code or in comments: what differs
#    between clouds is in providers/ (the ops table and its facts, core/provider.h) and
#    the registry, and a comment that needs a cloud's figure points at its page in
#    docs/internals/ instead. Words are matched case-insensitively between
#    non-alphanumerics, so GC_X_AWS and "EC2-style" count and "laws" does not.
clouds='(^|[^[:alnum:]])(aws|alibaba|aliyun|tencent|qcloud|ec2|ecs|cvm)([^[:alnum:]]|$)'
report "$(files 'core/*' 'cmd/*' 'bootstrap/*' | xargs -0 -r grep -HniE "$clouds" |
	sed 's|$|: names a cloud outside providers/|')"

# 6. (started above) shellcheck's findings
if [ -n "${sc_pid:-}" ] && ! wait "$sc_pid"; then
	cat "$tmp/shellcheck"
	problem "shellcheck found problems (above)"
fi

if [ $fail -eq 0 ]; then
	echo "style: ${#c_files[@]} C files, ${#sh_files[@]} shell scripts clean"
fi
exit $fail
