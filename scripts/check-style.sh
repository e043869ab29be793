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

# 1. formatting: the tree must be what clang-format makes of it
for f in "${c_files[@]}"; do
	if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
		problem "$f: not clang-formatted (run: clang-format -i $f)"
	fi
done

# 2. banned functions: unbounded or unchecked string and number handling
banned='\b(sprintf|vsprintf|strcpy|strcat|strtok|atoi|atol|atoll|gets|strncpy|tmpnam|mktemp)[[:space:]]*\('
report "$(for f in "${c_files[@]}"; do
	grep -nE "$banned" "$f" | grep -vE '^\s*[0-9]+:\s*(\*|//)' | sed "s|^|$f:|; s|$|: banned function|"
done)"

# 3. below cmd/ nothing prints or exits (tests, the emulator and benches are programs)
report "$(for f in "${c_files[@]}"; do
	case "$f" in
	core/* | providers/* | bootstrap/*) ;;
	*) continue ;;
	esac
	grep -nE '\b(printf|puts|putchar|perror|exit|_exit)[[:space:]]*\(|\bstd(out|err)\b' "$f" |
		grep -vE '^\s*[0-9]+:\s*(\*|//)' | sed "s|^|$f:|; s|$|: prints or exits below cmd/|"
done)"

# 4. only core's wrappers call through a provider's ops table (reading its name and facts is
#    fine: that is how cmd/ learns about a cloud without naming it)
report "$(for f in "${c_files[@]}"; do
	case "$f" in
	core/*) continue ;;
	esac
	grep -nE '\bops->[a-z_]+[[:space:]]*\(' "$f" |
		sed "s|^|$f:|; s|$|: provider ops called outside core/|"
done)"

# 5. no cloud is named in core/, cmd/ or bootstrap/, in code or in comments: what differs
#    between clouds is in providers/ (the ops table and its facts, core/provider.h) and
#    the registry, and a comment that needs a cloud's figure points at its page in
#    docs/internals/ instead. Words are matched case-insensitively between
#    non-alphanumerics, so GC_X_AWS and "EC2-style" count and "laws" does not.
clouds='(^|[^[:alnum:]])(aws|alibaba|aliyun|tencent|qcloud|ec2|ecs|cvm)([^[:alnum:]]|$)'
report "$(for f in "${c_files[@]}"; do
	case "$f" in
	core/* | cmd/* | bootstrap/*) ;;
	*) continue ;;
	esac
	grep -niE "$clouds" "$f" | sed "s|^|$f:|; s|$|: names a cloud outside providers/|"
done)"

# 6. shell scripts are shellcheck-clean, the emulator's simulated node tools included
mapfile -t sh_files < <(git ls-files --cached --others --exclude-standard -- '*.sh' .ci/run \
	'sim/node/tools/*' | grep -v '/\.shellcheckrc$' |
	while read -r f; do [ -f "$f" ] && echo "$f"; done)
if [ ${#sh_files[@]} -gt 0 ] && ! shellcheck -x "${sh_files[@]}"; then
	problem "shellcheck found problems (above)"
fi

if [ $fail -eq 0 ]; then
	echo "style: ${#c_files[@]} C files, ${#sh_files[@]} shell scripts clean"
fi
exit $fail
