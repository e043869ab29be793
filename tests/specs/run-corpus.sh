#!/usr/bin/env bash
# The spec corpus, run through the real binary: `gpucluster validate` must accept every
# example spec (templates/specs/*.yaml) and every extra valid case (tests/specs/good/*.yaml),
# and reject every bad spec (tests/specs/bad/*.yaml) with exactly the diagnostics that the
# file's leading comment lines expect. A few runs are repeated with `-o json`, which must
# say the same as the text.
#
# Usage: run-corpus.sh GPUCLUSTER [REPO_ROOT]
#        run-corpus.sh --check-corpus [REPO_ROOT]
# The second form needs no binary: it checks that the corpus has at least 40 bad specs,
# that each says what it expects, and that every header line is well formed.
#
# The leading comment lines of a spec say what to expect:
#   # expect: LINE:COL: TEXT        a diagnostic at LINE:COL whose message contains TEXT
#   # expect-exact: LINE:COL: TEXT  the same, but the message must be exactly TEXT
#   # expect-more                   further diagnostics beyond those expected are fine
#   # env: NAME=value               set for this file (the run starts from an empty
#                                   environment, so ${NAME} references are predictable)
#   # pad-to: BYTES                 run a copy padded with comment lines to BYTES bytes
#                                   (so that no oversize file has to be committed)
#   # schema: skip REASON           read by tests/schema, not here
# Every expected line must match a different reported diagnostic; without expect-more,
# a reported diagnostic that no line expects is a failure too. Order does not matter:
# diagnostics at the same position may come in any order.
#
# Prints one line per file and ends with "N passed, M failed"; exits 1 if any failed.
set -uo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 GPUCLUSTER|--check-corpus [REPO_ROOT]" >&2
	exit 2
fi
gc=$1
check_only=0
case $gc in
--check-corpus) check_only=1 ;;
/*) ;;
*) gc=$PWD/$gc ;;
esac
root=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2

min_bad=40
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gc-corpus.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0

pass() {
	printf 'ok   %s\n' "$1"
	passed=$((passed + 1))
}

fail() {
	local file=$1
	shift
	printf 'FAIL %s\n' "$file"
	printf '       %s\n' "$@"
	failed=$((failed + 1))
}

# The header of a spec: its leading lines that start with '#'. Sets expects (each
# "exact|LINE|COL|TEXT"), envs, expect_more, pad_to, and header_problems for directive
# lines that do not parse (a typo there would silently drop an expectation).
read_header() {
	local line kind
	expects=()
	envs=()
	expect_more=0
	pad_to=
	header_problems=()
	while IFS= read -r line; do
		case $line in
		'#'*) ;;
		*) break ;;
		esac
		if [[ $line =~ ^#\ expect(-exact)?:\ ([0-9]+):([0-9]+):\ (.+)$ ]]; then
			kind=${BASH_REMATCH[1]:+exact}
			expects+=("$kind|${BASH_REMATCH[2]}|${BASH_REMATCH[3]}|${BASH_REMATCH[4]}")
		elif [[ $line =~ ^#\ env:\ ([A-Za-z_][A-Za-z0-9_]*=.*)$ ]]; then
			envs+=("${BASH_REMATCH[1]}")
		elif [[ $line == '# expect-more' ]]; then
			expect_more=1
		elif [[ $line =~ ^#\ pad-to:\ ([0-9]+)$ ]]; then
			pad_to=${BASH_REMATCH[1]}
		elif [[ $line =~ ^#\ schema:\ skip\ [^\ ] ]]; then
			:
		elif [[ $line =~ ^#[[:space:]]*(expect|env|pad|schema)[a-z-]*[[:space:]]*: ]]; then
			header_problems+=("malformed header line: $line")
		fi
	done <"$1"
}

# Runs gpucluster validate ARGS... from an empty environment plus the file's env lines.
# Leaves stdout in $tmp/out, stderr in $tmp/err and the exit status in rc.
run_gc() {
	local keep=(PATH HOME TMPDIR ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS) child_env=() v
	for v in "${keep[@]}"; do
		if [ -n "${!v+set}" ]; then
			child_env+=("$v=${!v}")
		fi
	done
	env -i "${child_env[@]}" NO_COLOR=1 "${envs[@]}" "$gc" validate "$@" \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
}

# Reads "FILE:LINE:COL: error: MESSAGE" lines for SHOWN out of $tmp/err into the
# arrays d_line, d_col and d_msg. A diagnostic about the whole file (line 0) may also be
# written "FILE: error: MESSAGE", and one without a column "FILE:LINE: error: MESSAGE":
# both are read as 0 for what is left out, which is how the expect lines write them.
read_diags() {
	local shown=$1 line rest
	d_line=()
	d_col=()
	d_msg=()
	while IFS= read -r line; do
		[[ $line == "$shown:"* ]] || continue
		rest=${line#"$shown:"}
		if [[ $rest =~ ^(([0-9]+):)?(([0-9]+):)?\ error:\ (.*)$ ]]; then
			d_line+=("${BASH_REMATCH[2]:-0}")
			d_col+=("${BASH_REMATCH[4]:-0}")
			d_msg+=("${BASH_REMATCH[5]}")
		fi
	done <"$tmp/err"
}

stderr_tail() {
	tail -n 20 "$tmp/err" | sed 's/^/| /'
}

check_good() {
	local file=$1
	read_header "$file"
	if [ ${#header_problems[@]} -gt 0 ]; then
		fail "$file" "${header_problems[@]}"
		return
	fi
	if [ "$check_only" -eq 1 ]; then
		pass "$file"
		return
	fi
	run_gc "$file"
	if [ "$rc" -ne 0 ]; then
		mapfile -t out < <(stderr_tail)
		fail "$file" "exit status $rc, expected 0 (a valid spec)" "${out[@]}"
		return
	fi
	if grep -q ': error: ' "$tmp/err"; then
		mapfile -t out < <(stderr_tail)
		fail "$file" "exit status 0 but errors on stderr" "${out[@]}"
		return
	fi
	pass "$file"
}

check_bad() {
	local file=$1 shown=$1 e kind line col text i found problems=() size used=()
	read_header "$file"
	if [ ${#header_problems[@]} -gt 0 ]; then
		fail "$file" "${header_problems[@]}"
		return
	fi
	if [ ${#expects[@]} -eq 0 ]; then
		fail "$file" "no '# expect:' lines: a bad spec must say what it expects"
		return
	fi
	if [ "$check_only" -eq 1 ]; then
		pass "$file"
		return
	fi
	if [ -n "$pad_to" ]; then
		shown=$tmp/$(basename "$file")
		cp "$file" "$shown" || return
		size=$(wc -c <"$shown")
		if [ "$size" -ge "$pad_to" ]; then
			fail "$file" "already $size bytes, cannot pad it to $pad_to"
			return
		fi
		{
			yes '# padding, to test the limit on the size of a spec file' |
				head -c $((pad_to - size - 1))
			printf '\n'
		} >>"$shown"
	fi
	run_gc "$shown"
	if [ "$rc" -ne 1 ]; then
		mapfile -t out < <(stderr_tail)
		fail "$file" "exit status $rc, expected 1 (an invalid spec)" "${out[@]}"
		return
	fi
	read_diags "$shown"
	for i in "${!d_msg[@]}"; do
		used[i]=0
	done
	for e in "${expects[@]}"; do
		IFS='|' read -r kind line col text <<<"$e"
		found=0
		for i in "${!d_msg[@]}"; do
			[ "${used[i]}" -eq 0 ] || continue
			[ "${d_line[i]}:${d_col[i]}" = "$line:$col" ] || continue
			if [ "$kind" = exact ]; then
				[ "${d_msg[i]}" = "$text" ] || continue
			else
				[[ ${d_msg[i]} == *"$text"* ]] || continue
			fi
			used[i]=1
			found=1
			break
		done
		if [ "$found" -eq 0 ]; then
			problems+=("missing: $line:$col: $text")
		fi
	done
	if [ "$expect_more" -eq 0 ]; then
		for i in "${!d_msg[@]}"; do
			if [ "${used[i]}" -eq 0 ]; then
				problems+=("unexpected: ${d_line[i]}:${d_col[i]}: ${d_msg[i]}")
			fi
		done
	fi
	if [ ${#problems[@]} -gt 0 ]; then
		mapfile -t out < <(stderr_tail)
		fail "$file" "${problems[@]}" "stderr was:" "${out[@]}"
		return
	fi
	pass "$file"
}

# -o json must report the same diagnostics as the text output, file by file, in the
# documented shape: {"files":[{"file","valid","errors":[{"line","column","path","message"}]}]}.
check_json() {
	local label="-o json: $*" f text_rc=0 json_rc
	# One run checks several files in one environment: use files without env lines.
	envs=()
	if ! command -v node >/dev/null; then
		fail "$label" "node is needed to parse the JSON output"
		return
	fi
	: >"$tmp/text"
	for f in "$@"; do
		run_gc "$f"
		[ "$rc" -eq 0 ] || text_rc=1
		printf '%s\n' "$f" >>"$tmp/text"
		read_diags "$f"
		for i in "${!d_msg[@]}"; do
			printf '%s:%s: %s\n' "${d_line[i]}" "${d_col[i]}" "${d_msg[i]}" \
				>>"$tmp/text"
		done
	done
	run_gc -o json "$@"
	json_rc=$rc
	if [ "$json_rc" -ne "$text_rc" ]; then
		fail "$label" "exit status $json_rc, but $text_rc for the text output"
		return
	fi
	if ! node - "$tmp/out" "$tmp/text" "$@" >"$tmp/node" 2>&1 <<'EOF'; then
const fs = require("fs");
const [jsonFile, textFile, ...files] = process.argv.slice(2);
const fail = (msg) => { console.log(msg); process.exit(1); };
let doc;
try {
	doc = JSON.parse(fs.readFileSync(jsonFile, "utf8"));
} catch (e) {
	fail("stdout is not JSON: " + e.message);
}
// The text output, regrouped by file: a file name line, then "LINE:COL: MESSAGE" lines.
const text = {};
let cur = null;
for (const line of fs.readFileSync(textFile, "utf8").split("\n")) {
	if (line === "") continue;
	if (files.includes(line)) { cur = line; text[cur] = []; continue; }
	text[cur].push(line);
}
if (!doc || !Array.isArray(doc.files)) fail("no \"files\" array");
if (doc.files.length !== files.length)
	fail(`${doc.files.length} entries in "files", expected ${files.length}`);
doc.files.forEach((f, k) => {
	const at = `files[${k}]`;
	if (f.file !== files[k]) fail(`${at}.file is ${JSON.stringify(f.file)}, not ${files[k]}`);
	if (typeof f.valid !== "boolean") fail(`${at}.valid is not a boolean`);
	if (!Array.isArray(f.errors)) fail(`${at}.errors is not a list`);
	const got = f.errors.map((e, i) => {
		if (!Number.isInteger(e.line) || !Number.isInteger(e.column) ||
		    typeof e.path !== "string" || typeof e.message !== "string")
			fail(`${at}.errors[${i}] lacks an integer line or column, or a string ` +
				"path or message");
		return `${e.line}:${e.column}: ${e.message}`;
	});
	if (f.valid !== (got.length === 0))
		fail(`${at}.valid is ${f.valid} with ${got.length} errors`);
	const want = text[files[k]];
	if (JSON.stringify([...got].sort()) !== JSON.stringify([...want].sort()))
		fail(`${at} (${files[k]}): JSON errors\n  ${got.join("\n  ")}\n` +
			`differ from the text output\n  ${want.join("\n  ")}`);
	if (want.length === 0 && !f.valid)
		fail(`${at} is invalid but the text run reported nothing`);
});
EOF
		mapfile -t out <"$tmp/node"
		fail "$label" "${out[@]}"
		return
	fi
	pass "$label"
}

shopt -s nullglob
good=(templates/specs/*.yaml tests/specs/good/*.yaml)
bad=(tests/specs/bad/*.yaml)

if [ "$check_only" -eq 0 ] && [ ! -x "$gc" ]; then
	fail "$gc" "not an executable"
fi
if [ ${#good[@]} -eq 0 ]; then
	fail "templates/specs" "no example specs found"
fi
for f in "${good[@]}"; do
	check_good "$f"
done
if [ ${#bad[@]} -lt $min_bad ]; then
	fail "tests/specs/bad" "${#bad[@]} bad specs, the corpus needs at least $min_bad"
fi
for f in "${bad[@]}"; do
	check_bad "$f"
done
if [ "$check_only" -eq 0 ]; then
	check_json templates/specs/aws-training.yaml tests/specs/bad/multi-problem.yaml \
		tests/specs/bad/invalid-utf8.yaml
	check_json tests/specs/bad/missing-group-keys.yaml
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
