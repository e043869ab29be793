#!/usr/bin/env bash
# The README's demo: installs what is missing, builds gpucluster, and walks through what
# it does today: validating cluster specs, then a whole cluster life cycle on the local
# cloud (gpucluster-sim): plan, apply (with a zone out of capacity, so the fallback shows,
# then the bootstrap of every node, the driver's reboot included, and the smoke test),
# status, ssh into a node, exec on every node, scale, a no-change plan, destroy. It needs
# no cloud account and spends no money.
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
# us-east-1a has no g5.xlarge today: watch apply fall back to the next zone
"$sim" --ready-file "$tmp/ready.json" --request-log "$tmp/requests.jsonl" \
	--pending-ms 800 --reboot-ms 1000 --fault 'aws:RunInstances:capacity,zone=us-east-1a' \
	>"$tmp/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/ready.json" ] && break
	sleep 0.1
done
cat "$tmp/ready.json"
aws=$(jq -r .aws "$tmp/ready.json")
control=$(jq -r .control "$tmp/ready.json")

# the emulator's documented fake credentials, found the way the AWS CLI finds them
export AWS_ACCESS_KEY_ID=AKIAGPUCLUSTERSIM001
export AWS_SECRET_ACCESS_KEY=gpucluster-sim-aws-secret-key-0000000000
export AWS_EC2_METADATA_DISABLED=true
# local state (the cluster's SSH key, its lock) and "what is my address" stay in $tmp
export GPUCLUSTER_STATE_DIR=$tmp/state GPUCLUSTER_CHECKIP_URL=$control/checkip

cat >"$tmp/cluster.yaml" <<YAML
name: demo
provider:
  name: aws
  region: us-east-1
  endpoint: $aws        # the emulator; drop this line for the real EC2
ssh:
  port: 2222               # the emulator's nodes; 22 (the default) on a real cloud
node_groups:
  - name: workers
    count: 2
    instance_types: [g5.xlarge, g6.xlarge]
    zones: [us-east-1a, us-east-1b]
    market: spot-then-on-demand
    image: ubuntu-22.04
bootstrap:                 # apply installs this on every node, then smoke-tests it
  driver: "570"
  cuda: "12.8"
  container: docker
lifecycle:
  ttl: 4h                  # the cloud itself terminates the nodes after 4 hours
  max_hourly_cost: 10
YAML
echo
cat -n "$tmp/cluster.yaml"
run() {
	echo
	echo "\$ gpucluster $*"
	(cd "$tmp" && "$OLDPWD/$gc" "$@") || echo "(exit code $?)"
}
run plan
run apply --auto-approve
run status

# the cluster's key, and the node's host key as pinned from its console output
run ssh workers/0 -- 'grep PRETTY /etc/os-release; nvidia-smi --query-gpu=name,driver_version --format=csv'
run exec -- nvidia-smi -L

run scale workers=3 --auto-approve
echo
echo "# scale does not edit the file, which still says 2: plan shows that drift (exit 2)"
run plan --detailed-exitcode
run destroy --auto-approve
run status

echo
echo "== the emulator's request log: API calls per action"
jq -r '[.action, (.error_code // "ok")] | join(" ")' "$tmp/requests.jsonl" | sort | uniq -c |
	sort -k2
