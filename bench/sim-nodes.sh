#!/usr/bin/env bash
# Memory per SSH node of gpucluster-sim (bench/README.md): starts the emulator with SSH
# nodes, launches N instances (default 64) through the EC2 API with an imported key,
# opens one SSH session to each (ssh ... sleep) and sums the resident memory of every
# process under the emulator (bubblewrap, sshd, the session's shell). Prints KiB per node,
# as RSS (shared pages counted in every process) and as PSS (shared pages split), plus the
# emulator's own RSS before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-64}

cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/bench -j"$(nproc)" --target gpucluster-sim >/dev/null

dir=$(mktemp -d)
sim_pid=
ssh_pids=()
cleanup() {
	for p in "${ssh_pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	if [ -n "$sim_pid" ]; then
		kill "$sim_pid" 2>/dev/null || true
		wait "$sim_pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT

build/bench/sim/gpucluster-sim --no-rate-limits --pending-ms 0 --state-dir "$dir/state" \
	--ready-file "$dir/ready.json" >"$dir/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do
	[ -s "$dir/ready.json" ] && break
	sleep 0.1
done
aws=$(jq -r .aws "$dir/ready.json")
control=$(jq -r .control "$dir/ready.json")
[ -n "$aws" ] || { echo "sim-nodes.sh: the emulator did not start" >&2; cat "$dir/sim.log" >&2; exit 1; }

# every process under pid $1, $1 excluded
descendants() {
	local kids
	kids=$(cat /proc/"$1"/task/*/children 2>/dev/null || true)
	for k in $kids; do
		echo "$k"
		descendants "$k"
	done
}
sum_kib() { # field (VmRSS from status, Pss from smaps_rollup) over the emulator's tree
	local total=0 v p
	for p in $(descendants "$sim_pid"); do
		if [ "$1" = Pss ]; then
			v=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
		else
			v=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)
		fi
		total=$((total + ${v:-0}))
	done
	echo "$total"
}
sim_rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$sim_pid/status"; }

rss_empty=$(sim_rss)
ssh-keygen -q -t ed25519 -N '' -f "$dir/key"
creds=AKIAGPUCLUSTERSIM001:gpucluster-sim-aws-secret-key-0000000000
ec2() {
	curl -sS --fail-with-body --aws-sigv4 "aws:amz:us-east-1:ec2" --user "$creds" \
		-H 'Content-Type: application/x-www-form-urlencoded' --data "$1" "$aws/" >"$dir/out.xml" ||
		{ echo "sim-nodes.sh: EC2 call failed: $(cat "$dir/out.xml")" >&2; exit 1; }
}
material=$(base64 -w0 "$dir/key.pub" | sed 's/+/%2B/g; s/\//%2F/g; s/=/%3D/g')
ec2 "Action=ImportKeyPair&Version=2016-11-15&KeyName=bench&PublicKeyMaterial=$material"
left=$nodes
while [ "$left" -gt 0 ]; do
	batch=$((left > 16 ? 16 : left))
	ec2 "Action=RunInstances&Version=2016-11-15&ImageId=ami-0d1e5f7a9b3c5e570&InstanceType=g5.xlarge&MinCount=$batch&MaxCount=$batch&KeyName=bench"
	left=$((left - batch))
done
sleep 0.5
curl -sSf "$control/state" | jq -r '.instances[] | "\(.public_ip) \(.ssh_port)"' >"$dir/nodes"
[ "$(wc -l <"$dir/nodes")" = "$nodes" ] || { echo "sim-nodes.sh: expected $nodes instances" >&2; exit 1; }

rss_idle=$(sim_rss)
mkdir "$dir/sessions"
n=0
while read -r ip port; do
	n=$((n + 1))
	ssh -F /dev/null -i "$dir/key" -o IdentitiesOnly=yes -o BatchMode=yes \
		-o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o LogLevel=ERROR \
		-o ConnectionAttempts=20 -p "$port" "ubuntu@$ip" 'echo up; exec sleep 600' \
		>"$dir/sessions/$n" 2>&1 </dev/null &
	ssh_pids+=($!)
done <"$dir/nodes"
for _ in $(seq 300); do
	up=$(cat "$dir"/sessions/* | grep -c '^up$' || true)
	[ "$up" = "$nodes" ] && break
	sleep 0.1
done
[ "$up" = "$nodes" ] || { echo "sim-nodes.sh: only $up of $nodes sessions came up" >&2; exit 1; }
sleep 1

rss=$(sum_kib VmRSS)
pss=$(sum_kib Pss)
echo "nodes with a session:        $nodes"
echo "node processes, RSS sum:     $rss KiB ($((rss / nodes)) KiB per node)"
echo "node processes, PSS sum:     $pss KiB ($((pss / nodes)) KiB per node)"
echo "emulator RSS: empty $rss_empty KiB, with $nodes idle nodes $rss_idle KiB, with sessions $(sim_rss) KiB"
