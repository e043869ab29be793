#!/usr/bin/env bash
# verify.sh: checks, without installing or changing anything, that a node already has the
# GPU stack the spec asks for: for images that come with it (deep-learning / GPU-ready
# images, `driver: preinstalled`). One line per component; the reasons for a failure on
# stderr. Root (sudo) is used only to ask docker which runtimes it has.
#
# Environment (the same inputs as the steps it stands in for):
#   DRIVER=preinstalled  preinstalled (any working driver), a branch (570) or a full version
#   CUDA=12.8            the toolkit that must be installed (/usr/local/cuda-X.Y), or none
#   CUDNN=9              the cuDNN major (or MAJOR.MINOR) that must be installed, or none
#   CONTAINER=docker     docker: Docker with the nvidia runtime and nvidia-ctk; or none
#
# Exit status: 0 everything asked for is there and works; 1 something is missing or broken.
set -euo pipefail
GC_STEP=verify
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi

DRIVER=${DRIVER:-preinstalled}
CUDA=${CUDA:-12.8}
CUDNN=${CUDNN:-9}
CONTAINER=${CONTAINER:-docker}

problems=()
problem() {
	problems+=("$*")
	printf '%s: MISSING: %s\n' "$GC_STEP" "$*" >&2
}

os_detect
gpu_scan

# the driver
if nvidia_smi_ok; then
	v=$(driver_version)
	n=$(printf '%s\n' "$GC_OUT" | grep -c '^GPU ' || true)
	case "$DRIVER" in
	preinstalled) info "driver $v (CUDA $(driver_cuda_version)) drives $n GPU(s)" ;;
	"$v" | "${v%%.*}") info "driver $v drives $n GPU(s), as DRIVER=$DRIVER asks" ;;
	*) problem "driver $v is installed, DRIVER=$DRIVER asks for another" ;;
	esac
	[ "$n" = "$GPU_COUNT" ] || problem "nvidia-smi sees $n GPU(s), the PCI bus shows $GPU_COUNT"
else
	problem "no working NVIDIA driver: $(printf '%s' "$GC_OUT" | sed -n '1p')"
fi
if [ "$NVSWITCH_COUNT" -gt 0 ] && ! systemctl is-active --quiet nvidia-fabricmanager 2>/dev/null; then
	problem "this machine has $NVSWITCH_COUNT NVSwitches but nvidia-fabricmanager is not running"
fi

# the CUDA toolkit
if [ "$CUDA" != none ]; then
	nvcc=/usr/local/cuda-$CUDA/bin/nvcc
	if [ -x "$nvcc" ] && gc_capture "$nvcc" --version && [[ $GC_OUT == *"release $CUDA,"* ]]; then
		info "CUDA $CUDA toolkit ($nvcc)"
	else
		have_ones=$(find /usr/local -maxdepth 1 -name 'cuda-*' -printf '%f\n' 2>/dev/null | sort | paste -sd, - || true)
		problem "no CUDA $CUDA toolkit at $nvcc (found: ${have_ones:-none})"
	fi
fi

# cuDNN
if [ "$CUDNN" != none ]; then
	found=""
	while IFS= read -r p; do
		v=$(pkg_version "$p" | sed 's/[-+].*//')
		case "$v" in
		"$CUDNN" | "$CUDNN".*) found="$p $v" ;;
		esac
	done < <(pkg_list | grep -E '^libcudnn[0-9]+(-cuda-[0-9]+)?$' || true)
	if [ -n "$found" ]; then
		info "cuDNN ${found#* } (${found%% *})"
	else
		problem "no cuDNN $CUDNN package (libcudnn*) is installed"
	fi
fi

# Docker with the NVIDIA runtime
if [ "$CONTAINER" = docker ]; then
	if ! have docker; then
		problem "docker is not installed"
	elif ! have nvidia-ctk; then
		problem "the NVIDIA Container Toolkit (nvidia-ctk) is not installed"
	else
		rc=0
		if [ "$GC_IS_ROOT" = 1 ] || ! docker info >/dev/null 2>&1 </dev/null; then
			gc_capture as_root docker info || rc=$?
		else
			gc_capture docker info || rc=$?
		fi
		if [ "$rc" != 0 ]; then
			problem "docker does not answer: $(printf '%s' "$GC_OUT" | sed -n '1p')"
		elif ! printf '%s\n' "$GC_OUT" | grep -q 'Runtimes:.*nvidia'; then
			problem "docker runs without the nvidia runtime (nvidia-ctk runtime configure --runtime=docker, then restart docker)"
		else
			info "docker with the nvidia runtime ($(nvidia-ctk --version 2>/dev/null | sed -n '1p'))"
		fi
	fi
fi

if [ ${#problems[@]} -gt 0 ]; then
	printf '%s: error: the image lacks %d of what the spec asks for: %s\n' "$GC_STEP" "${#problems[@]}" \
		"$(printf '%s; ' "${problems[@]}" | sed 's/; $//')" >&2
	exit 1
fi
info "the image has everything the spec asks for"
