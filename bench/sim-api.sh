#!/usr/bin/env bash
# API-only throughput of gpucluster-sim at 1000 instances (bench/README.md).
# Builds a Release tree in build/bench, starts the emulator without SSH nodes and rate
# limits, runs bench/sim-api.c against its EC2 endpoint, and reports the emulator's
# resident memory with the instances in it.
set -euo pipefail
cd "$(dirname "$0")/.."
instances=${1:-1000}
requests=${2:-2000}
in_flight=${3:-8}

cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/bench -j"$(nproc)" --target gpucluster-sim sim-api >/dev/null

dir=$(mktemp -d)
sim_pid=
cleanup() {
	[ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

build/bench/sim/gpucluster-sim --no-ssh --no-rate-limits --pending-ms 0 \
	--ready-file "$dir/ready.json" >"$dir/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do
	[ -s "$dir/ready.json" ] && break
	sleep 0.1
done
aws=$(sed -n 's/.*"aws": *"\([^"]*\)".*/\1/p' "$dir/ready.json")
[ -n "$aws" ] || { echo "sim-api.sh: the emulator did not start" >&2; cat "$dir/sim.log" >&2; exit 1; }

build/bench/bench/sim-api "$aws/" "$instances" "$requests" "$in_flight"
echo "emulator RSS with $instances instances: $(awk '/VmRSS/ {print $2, $3}' "/proc/$sim_pid/status")"
echo "emulator peak RSS: $(awk '/VmHWM/ {print $2, $3}' "/proc/$sim_pid/status")"
