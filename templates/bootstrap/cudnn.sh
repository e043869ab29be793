#!/usr/bin/env bash
# cudnn.sh: cuDNN for the node's CUDA major version, from NVIDIA's network repository:
# cudnn9-cuda-MAJOR for cuDNN 9 (the package NVIDIA's cuDNN guide names), libcudnn8 and its
# development package for cuDNN 8. A MAJOR.MINOR (9.8) pins the minor version. Idempotent.
#
# Environment:
#   CUDNN=9       MAJOR (8 or 9), MAJOR.MINOR (9.8), or "none" to skip this step
#   CUDA=12.8     the CUDA toolkit the cuDNN build must match (its major is what counts);
#                 CUDA=none requires CUDNN=none
#
# Exit status: 0 installed (or skipped); 1 failure.
set -euo pipefail
GC_STEP=cudnn
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi

CUDNN=${CUDNN:-9}
CUDA=${CUDA:-12.8}
if [ "$CUDNN" = none ]; then
	info "skipped (CUDNN=none)"
	exit 0
fi
[ "$CUDA" != none ] || die "CUDNN=$CUDNN needs a CUDA toolkit, but CUDA=none"
[[ $CUDNN =~ ^[89](\.[0-9]{1,2})?$ ]] || die "CUDNN='$CUDNN' is not 8, 9, MAJOR.MINOR (9.8) or 'none'"
[[ $CUDA =~ ^[0-9]{2}\.[0-9]{1,2}$ ]] || die "CUDA='$CUDA' is not MAJOR.MINOR (12.8)"
major=${CUDNN%%.*}
minor=""
[ "$CUDNN" = "$major" ] || minor=$CUDNN
cuda_major=${CUDA%%.*}

os_detect
os_require_supported
# shellcheck disable=SC2119 # an interrupted dpkg only: the version check below finds the rest
pkg_repair
if [ "$major" = 9 ]; then
	pkgs=("cudnn9-cuda-$cuda_major")
	lib=libcudnn9-cuda-$cuda_major
elif [ "$PKG" = apt ]; then
	pkgs=(libcudnn8 libcudnn8-dev)
	lib=libcudnn8
else
	pkgs=(libcudnn8 libcudnn8-devel)
	lib=libcudnn8
fi

# version_ok: the installed library is the wanted major (and minor)
version_ok() {
	local v
	v=$(pkg_version "$lib")
	case "$v" in
	"${minor:-$major}".*) return 0 ;;
	*) return 1 ;;
	esac
}

if pkg_installed "${pkgs[0]}" && pkg_installed "$lib" && version_ok; then
	info "cuDNN $(pkg_version "$lib" | sed 's/[-+].*//') already installed"
	exit 0
fi

need_root
cuda_repo_setup
if [ -n "$minor" ]; then
	case "$PKG" in
	apt) apt_pin cudnn '*cudnn*' "$minor." ;;
	dnf) pkgs=("${pkgs[0]}-$minor.*" "${pkgs[@]:1}") ;;
	esac
fi
if pkg_installed "$lib" && ! version_ok; then
	# another minor is installed: replace it (the pin allows a downgrade)
	pkg_update
	info "replacing cuDNN $(pkg_version "$lib") with $CUDNN"
	case "$PKG" in
	apt) apt_get install --allow-downgrades "${pkgs[@]}" "$lib" ;;
	dnf) dnf_ install "${pkgs[@]}" && { version_ok || dnf_ downgrade "${pkgs[@]}"; } ;;
	esac || die "cannot install cuDNN $CUDNN"
else
	pkg_install "${pkgs[@]}" || die "cannot install '${pkgs[*]}' from NVIDIA's repository ($CUDA_DISTRO)"
fi
pkg_installed "$lib" || die "'${pkgs[0]}' is installed but '$lib' is not"
version_ok || die "cuDNN $(pkg_version "$lib") is installed, not the requested $CUDNN"
info "installed cuDNN $(pkg_version "$lib" | sed 's/[-+].*//') for CUDA $cuda_major"
