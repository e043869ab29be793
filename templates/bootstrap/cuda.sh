#!/usr/bin/env bash
# cuda.sh: the CUDA toolkit, pinned to one MAJOR.MINOR, from NVIDIA's network repository:
# cuda-toolkit-X-Y only. Never the `cuda` or `cuda-X-Y` meta-packages nor `cuda-drivers`,
# which pull in a driver of their own choosing over the one the driver step installed.
# Puts /usr/local/cuda-X.Y/bin on PATH for login shells (/etc/profile.d/gpucluster-cuda.sh);
# nvcc is not on PATH otherwise, as on any CUDA install. Idempotent.
#
# Environment:
#   CUDA=12.8     MAJOR.MINOR, or "none" to skip this step
#
# Exit status: 0 installed (or skipped); 1 failure.
set -euo pipefail
GC_STEP=cuda
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi

CUDA=${CUDA:-12.8}
if [ "$CUDA" = none ]; then
	info "skipped (CUDA=none)"
	exit 0
fi
[[ $CUDA =~ ^[0-9]{2}\.[0-9]{1,2}$ ]] || die "CUDA='$CUDA' is not MAJOR.MINOR (12.8) or 'none'"
pkg=cuda-toolkit-${CUDA/./-}
nvcc=/usr/local/cuda-$CUDA/bin/nvcc

os_detect
os_require_supported
# nvcc itself comes from cuda-nvcc-X-Y, which the toolkit's meta-package pulls in
pkg_repair "$nvcc" "$pkg cuda-nvcc-${CUDA/./-}"
if pkg_installed "$pkg" && [ -x "$nvcc" ]; then
	info "CUDA $CUDA toolkit already installed"
else
	need_root
	cuda_repo_setup
	pkg_install "$pkg" || die "cannot install '$pkg' from NVIDIA's repository ($CUDA_DISTRO): is CUDA $CUDA published for it?"
	[ -x "$nvcc" ] || die "'$pkg' is installed but '$nvcc' is missing"
	info "installed the CUDA $CUDA toolkit ($pkg)"
fi

gc_capture "$nvcc" --version || die "'$nvcc --version' fails: $GC_OUT"
case "$GC_OUT" in
*"release $CUDA,"*) ;;
*) die "'$nvcc' is not CUDA $CUDA: $(printf '%s\n' "$GC_OUT" | grep release || true)" ;;
esac

# the guard keeps PATH from growing when a login shell sources it twice
need_root
put_file /etc/profile.d/gpucluster-cuda.sh 0644 <<EOF
# gpucluster: the CUDA $CUDA toolkit (cuda step)
case ":\${PATH}:" in
*:/usr/local/cuda-$CUDA/bin:*) ;;
*) PATH=/usr/local/cuda-$CUDA/bin:\$PATH ;;
esac
export PATH
EOF
[ "$GC_CHANGED" = 0 ] || info "/usr/local/cuda-$CUDA/bin is on PATH for login shells (/etc/profile.d/gpucluster-cuda.sh)"

# CUDA's minor version compatibility lets a newer 12.x toolkit run on an older 12.x driver
# for most programs, so this is a warning; the smoke test shows whether it works.
if nvidia_smi_ok; then
	dc=$(driver_cuda_version)
	if [ -n "$dc" ] && ! version_ge "$dc" "$CUDA"; then
		warn "the driver supports CUDA $dc, older than the toolkit's $CUDA: programs may fail with 'CUDA driver version is insufficient' (choose a newer driver branch)"
	fi
fi
