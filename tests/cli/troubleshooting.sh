#!/usr/bin/env bash
# troubleshooting.sh ROOT: docs/troubleshooting.md has a section for every class of the
# error taxonomy (the words gc_strerror gives in core/error.c), so a class added there
# cannot be left out of the page.
set -euo pipefail
root=$1
page=$root/docs/troubleshooting.md
mapfile -t classes < <(sed -n 's/^\tcase GC_E[A-Z]*: return "\([a-z-]*\)";$/\1/p' "$root/core/error.c")
[ "${#classes[@]}" -ge 10 ] || { echo "troubleshooting.sh: found only ${#classes[@]} classes" >&2; exit 1; }
for c in "${classes[@]}"; do
	grep -q "^### \`$c\`\$" "$page" || { echo "troubleshooting.sh: no section for '$c'" >&2; exit 1; }
done
echo "troubleshooting.sh: ok (${#classes[@]} classes)"
