#!/usr/bin/env bash
# Records the seed corpora of the cloud fuzzers (corpus/ec2, corpus/ecs, corpus/cvm) from
# the emulator: starts gpucluster-sim, then runs each operation of fuzz-cloud.c once per
# cloud against it through the replay binaries (GC_FUZZ_RECORD), creating before listing
# and deleting last, so every seed holds real answers. Run by hand, not by CI:
#   tests/fuzz/record-seeds.sh BUILD_DIR    (BUILD_DIR has gpucluster-sim and the replays)
set -euo pipefail
build=$(cd "${1:?usage: record-seeds.sh BUILD_DIR}" && pwd)
cd "$(dirname "$0")"
work=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

TMPDIR=$work "$build/sim/gpucluster-sim" --no-ssh --ready-file "$work/ready.json" \
	--pending-ms 0 --no-rate-limits 2>"$work/sim.err" &
pid=$!
for _ in $(seq 1 100); do
	[ -s "$work/ready.json" ] && break
	sleep 0.05
done
[ -s "$work/ready.json" ] || { cat "$work/sim.err"; exit 1; }

# operation numbers and names: op_names in fuzz-cloud.c
order="16:create-secgroup 14:import-keypair 4:image-alias 5:image-id 6:instance-type 7:price
8:spot-price 9:zones 10:regions 12:create 0:discover 1:discover-all 2:list-keypairs
3:list-secgroups 11:console 13:terminate 15:delete-keypair 17:delete-secgroup"
for pair in ec2:aws ecs:alibaba cvm:tencent; do
	name=${pair%%:*} cloud=${pair#*:}
	endpoint=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
		"$work/ready.json" "$cloud")
	mkdir -p "corpus/$name" "$work/$name"
	inputs=()
	for op in $order; do # one process: later operations use what earlier ones made
		printf '%b' "\\x$(printf %02x "${op%%:*}")" >"$work/$name/${op#*:}"
		inputs+=("$work/$name/${op#*:}")
	done
	GC_FUZZ_RECORD=$endpoint GC_FUZZ_RECORD_OUT="corpus/$name" \
		"$build/tests/fuzz/fuzz-$name-replay" "${inputs[@]}"
done
