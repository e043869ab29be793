#!/usr/bin/env bash
# Installs every Debian package that building, the demo and the test suite need.
# Idempotent: packages already present are left alone, so a second run is quick and
# needs no network. Uses sudo when not run as root. --bench also installs what only
# the benchmarks compare against: Ansible and parallel-ssh (bench/bootstrap.sh). --build
# installs only what building the binary needs (the GitHub Action, action.yml).
set -euo pipefail

# what building the gpucluster binary needs (--build: only these, for the GitHub Action)
build_packages=(
	gcc make cmake pkg-config
	# libraries the build links (configure checks every one)
	libcurl4-openssl-dev libssl-dev libyaml-dev libssh2-1-dev libjansson-dev
	libcmocka-dev libxml2-dev libmicrohttpd-dev
	# the action reads its outputs with jq
	jq
)
packages=(
	"${build_packages[@]}"
	# the rest of the toolchain: sanitizers, the fuzzers and the style check
	git clang clang-format libclang-rt-14-dev
	# the emulator's SSH nodes and the bootstrap tests
	openssh-server openssh-client bubblewrap
	# script lint, vendor-SDK and schema tests; curl and python3 drive the emulator in the
	# shell tests, the demo and the benches
	shellcheck nodejs curl python3
	# benchmarks (bench/): GNU time for peak memory
	time
	# the manual page test renders docs/gpucluster.1
	groff-base
	# e2e hosts: the generated Ansible inventory is used for real (ansible -m raw)
	ansible-core
)

build_only=0
case ${1:-} in
--bench) packages+=(ansible pssh) ;;
--build) packages=("${build_packages[@]}") build_only=1 ;;
esac

# nodejs from NodeSource ships its own npm; Debian's npm package conflicts with it.
if [ "$build_only" = 0 ] && ! command -v npm >/dev/null 2>&1; then
	packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#packages[@]} Debian packages present"
else
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages the tests use, pinned by each folder's package-lock.json. Installed here,
# never by a test, so the test suite itself needs no network. A folder is reinstalled only
# when its lock file changed since the last install.
cd "$(dirname "$0")/.."
if [ "$build_only" = 1 ]; then
	echo "install-deps: done (build only)"
	exit 0
fi
for dir in tests/schema tests/sdk tests/actions; do
	[ -f "$dir/package-lock.json" ] || continue
	stamp="$dir/node_modules/.gc-lock-stamp"
	if [ -f "$stamp" ] && cmp -s "$stamp" "$dir/package-lock.json"; then
		continue
	fi
	echo "install-deps: npm ci in $dir"
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
	cp "$dir/package-lock.json" "$stamp"
done
echo "install-deps: done"
