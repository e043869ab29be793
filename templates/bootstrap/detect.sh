#!/usr/bin/env bash
# detect.sh: what a node is and has, before anything is installed. Prints KEY=VALUE lines on
# stdout (the value is everything after the first '=', unquoted, one line); changes nothing
# and needs no root. Keys, in this order:
#   OS_ID, OS_VERSION, OS_PRETTY, OS_SUPPORTED (1/0), PKG (apt/dnf), ARCH, KERNEL,
#   KERNEL_HEADERS (1 when the running kernel's headers are installed), BOOT_ID,
#   GPU_COUNT, GPU_<i>_SLOT, GPU_<i>_PCI_ID (10de:XXXX), GPU_<i>_NAME (lspci's name),
#   GPU_OPEN_SUPPORTED (1 when every GPU is Turing or newer), NVSWITCH_COUNT,
#   NOUVEAU_LOADED, NVIDIA_LOADED, DRIVER_INSTALLED, DRIVER_VERSION, DRIVER_CUDA,
#   NVIDIA_SMI (1 when nvidia-smi answers), CUDA_INSTALLED, CUDA_VERSION (/usr/local/cuda),
#   CUDA_TOOLKITS (every /usr/local/cuda-X.Y, comma separated), CUDNN_VERSION,
#   DOCKER_INSTALLED, DOCKER_VERSION, NVIDIA_CTK, NVIDIA_CTK_VERSION, FABRICMANAGER
#   (active/inactive/absent), PERSISTENCED (active/inactive/absent), REBOOT_REQUIRED.
# Empty values mean "none" or "unknown". Exit status: 0, or 1 when /etc/os-release is missing.
#
# Environment: only lib.sh's (GC_VERBOSE).
set -euo pipefail
GC_STEP=detect
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi
GC_PROGRESS_FD=2

kv() { printf '%s=%s\n' "$1" "$(printf '%s' "$2" | tr '\n' ' ' | sed 's/ *$//')"; }
yes_no() { if "$@"; then echo 1; else echo 0; fi; }

os_detect
kernel=$(uname -r)
kv OS_ID "$OS_ID"
kv OS_VERSION "$OS_VERSION"
kv OS_PRETTY "$OS_PRETTY"
kv OS_SUPPORTED "$OS_SUPPORTED"
kv PKG "$PKG"
kv ARCH "$ARCH"
kv KERNEL "$kernel"
headers=0
if [ -e "/lib/modules/$kernel/build/Makefile" ] || pkg_installed "linux-headers-$kernel" ||
	pkg_installed "kernel-devel-$kernel"; then
	headers=1
fi
kv KERNEL_HEADERS "$headers"
kv BOOT_ID "$(boot_id)"

gpu_scan
kv GPU_COUNT "$GPU_COUNT"
for ((i = 0; i < GPU_COUNT; i++)); do
	kv "GPU_${i}_SLOT" "${GPU_SLOTS[i]}"
	kv "GPU_${i}_PCI_ID" "10de:${GPU_IDS[i]}"
	kv "GPU_${i}_NAME" "${GPU_NAMES[i]}"
done
kv GPU_OPEN_SUPPORTED "$(yes_no gpu_open_supported)"
kv NVSWITCH_COUNT "$NVSWITCH_COUNT"
kv NOUVEAU_LOADED "$(yes_no module_loaded nouveau)"
kv NVIDIA_LOADED "$(yes_no module_loaded nvidia)"

# the driver: what nvidia-smi says when it answers, else what the package database has
drv_version="" drv_cuda="" smi=0
if nvidia_smi_ok; then
	smi=1
	drv_version=$(driver_version)
	drv_cuda=$(driver_cuda_version)
fi
drv_installed=0
if [ -n "$drv_version" ]; then
	drv_installed=1
else
	pkgs=$(pkg_list | grep -E '^(nvidia-driver-[0-9]+(-server)?(-open)?|nvidia-open(-[0-9]+)?|cuda-drivers(-[0-9]+)?|nvidia-driver|kmod-nvidia.*)$' || true)
	if [ -n "$pkgs" ]; then
		drv_installed=1
		drv_version=$(pkg_version "$(printf '%s\n' "$pkgs" | sed -n '1p')" | sed 's/-.*//')
	fi
fi
kv DRIVER_INSTALLED "$drv_installed"
kv DRIVER_VERSION "$drv_version"
kv DRIVER_CUDA "$drv_cuda"
kv NVIDIA_SMI "$smi"

cuda_version="" toolkits=""
if [ -e /usr/local/cuda/bin/nvcc ]; then
	cuda_version=$(readlink -f /usr/local/cuda | sed -n 's|.*/cuda-\([0-9.]*\)$|\1|p')
fi
for d in /usr/local/cuda-*/bin/nvcc; do
	[ -e "$d" ] || continue
	d=${d%/bin/nvcc}
	toolkits="${toolkits:+$toolkits,}${d#/usr/local/cuda-}"
done
[ -n "$cuda_version" ] || cuda_version=${toolkits##*,}
kv CUDA_INSTALLED "$([ -n "$cuda_version" ] && echo 1 || echo 0)"
kv CUDA_VERSION "$cuda_version"
kv CUDA_TOOLKITS "$toolkits"
cudnn=$(pkg_list | grep -E '^(libcudnn[0-9]+(-cuda-[0-9]+)?)$' | sed -n '1p' || true)
kv CUDNN_VERSION "$([ -z "$cudnn" ] || pkg_version "$cudnn" | sed 's/[-+].*//')"

docker_version=""
if have docker; then
	docker_version=$(docker --version 2>/dev/null | sed -n 's/^Docker version \([^,]*\).*/\1/p' || true)
fi
kv DOCKER_INSTALLED "$(yes_no have docker)"
kv DOCKER_VERSION "$docker_version"
kv NVIDIA_CTK "$(yes_no have nvidia-ctk)"
kv NVIDIA_CTK_VERSION "$(! have nvidia-ctk || nvidia-ctk --version 2>/dev/null | sed -n 's/.*version \([0-9][0-9.]*\).*/\1/p' | sed -n '1p')"

unit_state() {
	if ! unit_exists "$1"; then
		echo absent
	elif systemctl is-active --quiet "$1" 2>/dev/null; then
		echo active
	else
		echo inactive
	fi
}
kv FABRICMANAGER "$(unit_state nvidia-fabricmanager)"
kv PERSISTENCED "$(unit_state nvidia-persistenced)"
kv REBOOT_REQUIRED "$(yes_no test -e /var/run/reboot-required)"
