#!/usr/bin/env bash
# The README's demo: installs what is missing, builds gpucluster, and walks through what
# it does today. Today that is validating and explaining cluster specs; as the emulator
# and cloud drivers land, this grows into apply -> bootstrap -> smoke -> destroy against
# the local emulator (gpucluster-sim), which needs no cloud account and spends no money.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh >/dev/null

echo "== building gpucluster"
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "$(nproc)" --target gpucluster >/dev/null
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
