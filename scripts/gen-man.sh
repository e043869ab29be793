#!/usr/bin/env bash
# gen-man.sh [GPUCLUSTER]: rewrites docs/gpucluster.1 from the command table
# (`gpucluster help --man`). The cli.man-page test fails until this is run after a
# command or option changes.
set -euo pipefail
cd "$(dirname "$0")/.."
gc=${1:-build/dev/cmd/gpucluster}
[ -x "$gc" ] || { echo "gen-man.sh: no gpucluster at '$gc' (build first, or name it)" >&2; exit 1; }
"$gc" help --man >docs/gpucluster.1.tmp
mv docs/gpucluster.1.tmp docs/gpucluster.1
echo "gen-man.sh: wrote docs/gpucluster.1"
