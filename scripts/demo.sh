#!/usr/bin/env bash
# The README's demo: installs what is missing, builds gpucluster, and walks through what
# it does today: validating cluster specs, then the local cloud (gpucluster-sim) that the
# drivers will provision against: an EC2 launch, SSH into the node it became, and a
# terminate. As the cloud drivers land, this grows into apply -> bootstrap -> smoke ->
# destroy against the emulator, which needs no cloud account and spends no money.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh >/dev/null

echo "== building gpucluster"
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "$(nproc)" --target gpucluster gpucluster-sim >/dev/null
gc=build/release/cmd/gpucluster
"$gc" version

for spec in templates/specs/aws-training.yaml templates/specs/ci-ephemeral.yaml; do
	echo
	echo "\$ gpucluster validate $spec"
	"$gc" validate "$spec"
done

echo
echo "== a spec with mistakes: every problem is reported at once, with its line and column"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/cluster.yaml" <<'YAML'
name: LLM_train
provider:
  name: awz
  region: us-east-1
node_groups:
  - name: workers
    cuont: 4
    instance_types: [g5.xlarge]
    market: spot-then-on-demand
    max_spot_price: 2.5
lifecycle:
  ttl: 12 hours
YAML
cat -n "$tmp/cluster.yaml"
echo
echo "\$ gpucluster validate cluster.yaml"
(cd "$tmp" && "$OLDPWD/$gc" validate cluster.yaml) || echo "(exit code $?)"

echo
echo "== gpucluster-sim: a local cloud speaking the real EC2, ECS and CVM APIs"
sim=build/release/sim/gpucluster-sim
sim_pid=
cleanup() {
	if [ -n "$sim_pid" ]; then
		kill "$sim_pid" 2>/dev/null || true
		wait "$sim_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
"$sim" --ready-file "$tmp/ready.json" --request-log "$tmp/requests.jsonl" \
	--pending-ms 500 >"$tmp/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/ready.json" ] && break
	sleep 0.1
done
cat "$tmp/ready.json"
echo
aws=$(jq -r .aws "$tmp/ready.json")
ec2() {
	# any SigV4 client works; curl signs with the emulator's documented fake key
	curl -sS --aws-sigv4 "aws:amz:us-east-1:ec2" \
		--user "AKIAGPUCLUSTERSIM001:gpucluster-sim-aws-secret-key-0000000000" \
		-H "Content-Type: application/x-www-form-urlencoded" \
		--data "Action=$1&Version=2016-11-15${2:+&$2}" "$aws/"
}
# the first <TAG>value</TAG> of an XML answer
xml() { grep -o "<$1>[^<]*</$1>" | sed -n "1s|<[^>]*>||gp"; }

ssh-keygen -q -t ed25519 -N '' -C demo -f "$tmp/key"
echo "\$ EC2 ImportKeyPair, then RunInstances: 1 x g5.xlarge (1 NVIDIA A10G), Ubuntu 22.04"
ec2 ImportKeyPair "KeyName=demo&PublicKeyMaterial=$(base64 -w0 "$tmp/key.pub" | jq -sRr @uri)" |
	xml keyFingerprint
id=$(ec2 RunInstances "ImageId=ami-0e8d2a5e1c4f22040&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&KeyName=demo&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=gpucluster%3Acluster&TagSpecification.1.Tag.1.Value=demo" |
	xml instanceId)
echo "launched $id"
state=pending
for _ in $(seq 50); do
	state=$(ec2 DescribeInstances "InstanceId.1=$id" | xml name)
	[ "$state" = running ] && break
	sleep 0.2
done
ip=$(ec2 DescribeInstances "InstanceId.1=$id" | xml ipAddress)
echo "$id is $state at $ip"
echo
echo "\$ EC2 GetConsoleOutput: the host key cloud-init printed, to pin before connecting"
ec2 GetConsoleOutput "InstanceId=$id" | xml output | base64 -d |
	sed -n '/BEGIN SSH HOST KEY KEYS/,/END SSH HOST KEY KEYS/p' | sed "s/^/  /"
ec2 GetConsoleOutput "InstanceId=$id" | xml output | base64 -d |
	sed -n '/BEGIN SSH HOST KEY KEYS/,/END SSH HOST KEY KEYS/{/^ssh-/p}' |
	sed "s/^/[$ip]:2222 /" >"$tmp/known_hosts"
ssh_node() {
	ssh -q -i "$tmp/key" -p 2222 -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$tmp/known_hosts" "ubuntu@$ip" "$@"
}
# like a real instance, the node boots for a moment after it reports running
for _ in $(seq 100); do
	ssh_node true 2>/dev/null && break
	sleep 0.2
done
echo
echo "\$ ssh ubuntu@$ip (a sandboxed node: its own root, no network, simulated GPU tools)"
ssh_node 'grep PRETTY /etc/os-release; lspci | grep -i nvidia; nvidia-smi 2>&1 || echo "(no NVIDIA driver yet: installing it is the bootstrapper'"'"'s job)"'
echo
echo "\$ EC2 TerminateInstances"
ec2 TerminateInstances "InstanceId.1=$id" | xml name
echo
echo "== the emulator's request log: one JSON line per API call"
jq -c '{action, status, error_code}' "$tmp/requests.jsonl"
