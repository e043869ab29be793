#!/usr/bin/env bash
# man-page.sh GPUCLUSTER PAGE: PAGE is what `GPUCLUSTER help --man` prints (run
# scripts/gen-man.sh after changing a command), it names every command of the table, and
# groff renders it without a warning.
set -euo pipefail
gc=$1 page=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$gc" help --man >"$tmp/new.1"
if ! diff -u "$page" "$tmp/new.1" >"$tmp/diff"; then
	head -n 40 "$tmp/diff" >&2
	echo "man-page.sh: $page is stale: run scripts/gen-man.sh" >&2
	exit 1
fi
# every command of `help` has its section
"$gc" --no-color help | awk '/^Commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }' \
	>"$tmp/commands"
[ -s "$tmp/commands" ] || { echo "man-page.sh: no commands in 'help'" >&2; exit 1; }
while read -r c; do
	# troff writes a hyphen in a name as \- ("show\-gpus")
	grep -qFx ".SS \"${c//-/\\-}\"" "$page" ||
		{ echo "man-page.sh: no section for '$c'" >&2; exit 1; }
done <"$tmp/commands"
# renders cleanly (groff-base comes with scripts/install-deps.sh)
command -v groff >/dev/null || { echo "man-page.sh: groff is not installed" >&2; exit 1; }
groff -man -Tutf8 -ww -z "$page" 2>"$tmp/warn" || true
if [ -s "$tmp/warn" ]; then
	cat "$tmp/warn" >&2
	echo "man-page.sh: groff warns about $page" >&2
	exit 1
fi
# groff marks bold by overstriking (X backspace X): strip that before looking (not with
# grep -q: it stops reading at the match, and under pipefail sed's SIGPIPE fails the test
# once the page outgrows the pipe's buffer)
MANWIDTH=80 groff -man -Tutf8 "$page" 2>/dev/null | sed 's/.\x08//g' | grep 'EXIT STATUS' >/dev/null ||
	{ echo "man-page.sh: the rendered page has no EXIT STATUS" >&2; exit 1; }
echo "man-page.sh: ok ($(wc -l <"$tmp/commands") commands)"
