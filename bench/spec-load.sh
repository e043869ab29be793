#!/usr/bin/env bash
# Spec loader cost on ordinary and hostile inputs: wall time and peak memory (max RSS) of
# `gpucluster validate` per input, best of 5 runs. Usage: bench/spec-load.sh [GPUCLUSTER]
# (default: a Release build in build/release, made if missing). Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."

gc=${1:-build/release/cmd/gpucluster}
if [ ! -x "$gc" ]; then
	cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build/release -j "$(nproc)" --target gpucluster >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# inputs: the largest example; a maximal valid spec (32 groups, every list full, near the
# 1 MiB cap via long step scripts); the hostile ones the loader must bound
cp templates/specs/aws-training.yaml "$tmp/example.yaml"
{
	echo "name: bench"
	printf 'provider: {name: aws, region: us-east-1}\n'
	echo "node_groups:"
	for g in $(seq 1 32); do
		printf '  - {name: g%d, count: 1000, instance_types: [a1.x, a2.x, a3.x, a4.x, a5.x, a6.x, a7.x, a8.x], zones: [z-1, z-2, z-3, z-4, z-5, z-6, z-7, z-8]}\n' "$g"
	done
	echo "bootstrap:"
	echo "  steps:"
	for s in $(seq 1 15); do
		printf '    - name: s%d\n      run: |\n' "$s"
		for _ in $(seq 1 1000); do echo "        echo 0123456789012345678901234567890123456789012345678901234"; done
	done
} >"$tmp/max-valid.yaml"
python3 -c "print('a: ' + '[' * 500000)" >"$tmp/deep-nesting.yaml"
{
	echo 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'
	for i in b c d e f g h i j; do
		prev=$(printf '%s' "$i" | tr 'b-j' 'a-i')
		printf '%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n' "$i" "$i" "$prev" "$prev" "$prev" "$prev" "$prev" "$prev" "$prev" "$prev" "$prev"
	done
} >"$tmp/alias-bomb.yaml"
head -c $((64 << 20)) /dev/zero | tr '\0' 'a' >"$tmp/oversize-64MiB.yaml"
python3 -c "
import sys
sys.stdout.write('x: [' + ','.join(['1'] * 400000) + ']\n')" >"$tmp/wide-list.yaml"

echo "| input | bytes | exit | wall (best of 5) | max RSS |"
echo "|---|---|---|---|---|"
for f in example max-valid deep-nesting alias-bomb wide-list oversize-64MiB; do
	path="$tmp/$f.yaml"
	best_t=""
	best_m=""
	rc=0
	for _ in 1 2 3 4 5; do
		rc=0
		/usr/bin/time -o "$tmp/time" -f '%e %M' "$gc" validate -q "$path" >/dev/null 2>&1 || rc=$?
		out=$(tail -n 1 "$tmp/time")
		t=${out% *}
		m=${out#* }
		if [ -z "$best_t" ] || awk "BEGIN{exit !($t < $best_t)}"; then best_t=$t; fi
		if [ -z "$best_m" ] || [ "$m" -lt "$best_m" ]; then best_m=$m; fi
	done
	printf '| %s | %s | %s | %s s | %s KiB |\n' "$f" "$(stat -c %s "$path")" "$rc" "$best_t" "$best_m"
done
