#!/usr/bin/env bash
# reqlog-diff.sh BEFORE_DIR AFTER_DIR: whether two sets of e2e request logs (kept with
# GC_E2E_KEEP_LOGS=DIR, see lib.sh) send the same actions with the same parameters. Each
# log is reduced to its distinct requests (action, parameters, status, error code) with
# what differs from run to run masked: times, ids, tokens, keys, the key pair's random
# suffix. Prints the differences per case; exits 1 if there are any. For refactors that
# must not change what goes on the wire (docs/internals/EXTENDING.md).
set -euo pipefail
before=${1:?usage: reqlog-diff.sh BEFORE_DIR AFTER_DIR} after=${2:?usage: reqlog-diff.sh BEFORE_DIR AFTER_DIR}

norm() {
	jq -c '{a: .action, s: .status, e: .error_code, p: (.params | walk(if type == "string" then
	  (gsub("[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+Z?"; "<T>")
	   | gsub("[A-Za-z0-9+/=]{40,}"; "<B>")
	   | gsub("gpucluster-(?<c>[a-z0-9-]+)-[a-z0-9]{8}$"; "gpucluster-\(.c)-<K>")
	   | gsub("[0-9a-f]{8,}"; "<H>") | gsub("[0-9]{9,}"; "<N>")) else . end))}' "$1" | sort -u
}

rc=0
for f in "$before"/*.log; do
	name=${f##*/}
	if [ ! -f "$after/$name" ]; then
		echo "$name: no log after"
		rc=1
		continue
	fi
	if ! d=$(diff <(norm "$f") <(norm "$after/$name")); then
		printf '== %s\n%s\n' "$name" "$d"
		rc=1
	fi
done
exit $rc
