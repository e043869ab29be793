# shellcheck shell=bash
# gcsim.sh: what every simulated tool of a gpucluster-sim node shares. Sourced, never run.
#
# The node's simulated machine lives in /var/lib/gpucluster-sim ($S):
#   node.env        facts written by the emulator at create (GPUs, image, kernel)
#   faults          node faults, one name per line (missing-gpu, ecc, ...), rewritten live
#   boot_id         this boot's id (also /proc/sys/kernel/random/boot_id)
#   dpkg/status     installed packages: "name version" per line
#   dpkg/pending    what an interrupted install left: "name version unpacked|half-installed"
#   apt-kill        "unpack PKG" or "configure PKG": the next apt-get install stops there
#                   as if killed (lib/apt.sh; for tests)
#   apt/repos       repositories apt knows since the last apt-get update
#   driver          "BRANCH VERSION FLAVOR" of the installed NVIDIA driver
#   modules         loaded kernel modules: "name version" per line
#   services/NAME   "active" or "inactive"; NAME.enabled when enabled; NAME.unit: exists
#   docker/loaded   the daemon.json docker read when it last (re)started
#   reboot-request  written by reboot; the emulator reboots the node and removes it
#   poweroff-request written by poweroff / shutdown -h; the cloud stops or terminates it
#   gpu-util        what nvidia-smi says every GPU's utilization.gpu is (default 0); tests
#                   write it to make the GPUs busy (lifecycle.idle)
# Tools run as the login user; "root" means inside sudo (a user namespace mapping uid 0).

S=/var/lib/gpucluster-sim
# shellcheck disable=SC2034 # used by the tools that source this
T=/usr/local/lib/gpucluster-sim/tools
# shellcheck source=/dev/null
. "$S/node.env"
# apt-get -y and quiet installs (the boot hook) set these
GCSIM_YES=${GCSIM_YES:-0}
GCSIM_QUIET=${GCSIM_QUIET:-0}

gcsim_is_root() { [ "$(id -u)" = 0 ]; }
gcsim_fault() { grep -qx "$1" "$S/faults" 2>/dev/null; }

# --- GPUs ---------------------------------------------------------------------------------

# Sets GPU_NAME, GPU_PCI_DEV, GPU_PCI_DESC, GPU_H2D, GPU_D2D, GPU_TFLOPS, GPU_POWER, GPU_CC,
# GPU_NVSWITCH_DEV from the catalogue's model: the names and PCI ids real boards report,
# and round simulated performance figures.
# shellcheck disable=SC2034 # outputs for the caller
gcsim_gpu_facts() {
	local m
	m=$(printf '%s' "${GCSIM_GPU_MODEL:-}" | tr '[:upper:]' '[:lower:]' | sed 's/^nvidia //; s/^tesla //')
	GPU_NVSWITCH_DEV=1af1
	case "$m" in
	a10g) set -- "NVIDIA A10G" 2237 "GA102GL [A10G]" 24.5 480 70 300 8.6 ;;
	a10) set -- "NVIDIA A10" 2236 "GA102GL [A10]" 24.5 480 90 150 8.6 ;;
	t4) set -- "Tesla T4" 1eb8 "TU104GL [Tesla T4]" 12.3 250 40 70 7.5 ;;
	v100*)
		if [ "${GCSIM_GPU_MEMORY_MIB:-0}" -gt 20000 ]; then
			set -- "Tesla V100-SXM2-32GB" 1db5 "GV100GL [Tesla V100 SXM2 32GB]" 12.1 780 95 300 7.0
		else
			set -- "Tesla V100-SXM2-16GB" 1db1 "GV100GL [Tesla V100 SXM2 16GB]" 12.1 780 95 300 7.0
		fi
		;;
	a100*)
		if [ "${GCSIM_GPU_MEMORY_MIB:-0}" -gt 50000 ]; then
			set -- "NVIDIA A100-SXM4-80GB" 20b2 "GA100 [A100 SXM4 80GB]" 24.8 1750 250 400 8.0
		else
			set -- "NVIDIA A100-SXM4-40GB" 20b0 "GA100 [A100 SXM4 40GB]" 24.8 1330 250 400 8.0
		fi
		;;
	h100*)
		set -- "NVIDIA H100 80GB HBM3" 2330 "GH100 [H100 SXM5 80GB]" 50.2 2800 600 700 9.0
		GPU_NVSWITCH_DEV=22a3
		;;
	l4) set -- "NVIDIA L4" 27b8 "AD104GL [L4]" 24.5 240 90 72 8.9 ;;
	l40s) set -- "NVIDIA L40S" 26b9 "AD102GL [L40S]" 24.5 700 250 350 8.9 ;;
	*) set -- "NVIDIA ${GCSIM_GPU_MODEL:-GPU}" 20b5 "Device 20b5" 20.0 500 50 250 8.0 ;;
	esac
	GPU_NAME=$1 GPU_PCI_DEV=$2 GPU_PCI_DESC=$3 GPU_H2D=$4 GPU_D2D=$5 GPU_TFLOPS=$6
	GPU_POWER=$7 GPU_CC=$8
}

# GPUs the machine shows on its PCI bus (one fewer with the missing-gpu fault).
gcsim_gpu_count() {
	local n=${GCSIM_GPU_COUNT:-0}
	if gcsim_fault missing-gpu && [ "$n" -gt 0 ]; then
		n=$((n - 1))
	fi
	echo "$n"
}

# PCI address of GPU $1: "00:1e.0" on one-GPU machines, else one bus per GPU.
gcsim_gpu_bus() {
	if [ "${GCSIM_GPU_COUNT:-0}" -le 1 ]; then
		echo "00:1e.0"
	else
		printf '%02x:00.0\n' $((16 + 16 * $1))
	fi
}

gcsim_gpu_uuid() {
	local h
	h=$(printf '%s/%s' "$GCSIM_INSTANCE_ID" "$1" | sha256sum)
	echo "GPU-${h:0:8}-${h:8:4}-${h:12:4}-${h:16:4}-${h:20:12}"
}

# --- packages -----------------------------------------------------------------------------

gcsim_installed() { grep -q "^$1 " "$S/dpkg/status" 2>/dev/null; }
gcsim_pkg_version() { awk -v p="$1" '$1 == p { print $2 }' "$S/dpkg/status" 2>/dev/null; }

gcsim_record() {
	mkdir -p "$S/dpkg"
	touch "$S/dpkg/status"
	if ! gcsim_installed "$1"; then
		printf '%s %s\n' "$1" "$2" >>"$S/dpkg/status"
	fi
}

gcsim_unrecord() {
	local tmp="$S/dpkg/status.new"
	awk -v p="$1" '$1 != p' "$S/dpkg/status" >"$tmp" && mv "$tmp" "$S/dpkg/status"
}

# Full driver version and the CUDA version it supports, per branch.
gcsim_driver_full() {
	case "$1" in
	535) echo 535.230.02 ;;
	550) echo 550.144.03 ;;
	560) echo 560.35.05 ;;
	565) echo 565.57.01 ;;
	570) echo 570.133.20 ;;
	575) echo 575.57.08 ;;
	580) echo 580.65.06 ;;
	*) return 1 ;;
	esac
}

gcsim_driver_cuda() {
	case "$1" in
	535) echo 12.2 ;;
	550) echo 12.4 ;;
	560) echo 12.6 ;;
	565) echo 12.7 ;;
	570) echo 12.8 ;;
	575) echo 12.9 ;;
	580) echo 13.0 ;;
	esac
}

# The installed driver: sets DRV_BRANCH, DRV_VERSION, DRV_FLAVOR; fails when none.
gcsim_driver() {
	[ -s "$S/driver" ] || return 1
	read -r DRV_BRANCH DRV_VERSION DRV_FLAVOR <"$S/driver"
}

# --- kernel modules -----------------------------------------------------------------------

gcsim_module_loaded() { grep -q "^$1 " "$S/modules" 2>/dev/null; }
gcsim_module_version() { awk -v m="$1" '$1 == m { print $2 }' "$S/modules" 2>/dev/null; }

gcsim_load_module() {
	gcsim_module_loaded "$1" || printf '%s %s\n' "$1" "${2:--}" >>"$S/modules"
}

gcsim_nouveau_blacklisted() {
	grep -qsE '^[[:space:]]*blacklist[[:space:]]+nouveau' /etc/modprobe.d/*.conf
}

# Loads the nvidia modules if the driver is installed and nouveau does not hold the GPUs
# (what nvidia-modprobe does when a CUDA program or nvidia-smi first opens the device).
gcsim_load_nvidia() {
	gcsim_module_loaded nvidia && return 0
	gcsim_driver || return 1
	gcsim_module_loaded nouveau && return 1
	local m
	for m in nvidia nvidia_uvm nvidia_modeset nvidia_drm; do
		gcsim_load_module "$m" "$DRV_VERSION"
	done
}

# Whether the open kernel modules leave this GPU unsupported (before Turing).
gcsim_open_unsupported() {
	gcsim_driver || return 1
	[ "$DRV_FLAVOR" = open ] || return 1
	case "${GCSIM_GPU_ARCH:-}" in
	volta | pascal | maxwell | kepler) return 0 ;;
	esac
	return 1
}

# --- services -----------------------------------------------------------------------------

gcsim_unit_exists() { [ -e "$S/services/$1.unit" ]; }
gcsim_service_active() { [ "$(cat "$S/services/$1" 2>/dev/null)" = active ]; }
gcsim_service_set() {
	mkdir -p "$S/services"
	echo "$2" >"$S/services/$1"
}
gcsim_add_unit() {
	mkdir -p "$S/services"
	touch "$S/services/$1.unit"
	[ -e "$S/services/$1" ] || echo inactive >"$S/services/$1"
}

# Starts a unit as systemd would; fails (with the reason on stderr) when it cannot run.
gcsim_service_start() {
	case "$1" in
	docker)
		mkdir -p "$S/docker"
		cat /etc/docker/daemon.json >"$S/docker/loaded" 2>/dev/null || : >"$S/docker/loaded"
		;;
	nvidia-persistenced)
		gcsim_load_nvidia || return 1
		;;
	nvidia-fabricmanager)
		# Fabric Manager exits at once without NVSwitches or with another driver branch
		gcsim_driver || return 1
		[ "${GCSIM_NVSWITCH:-0}" = 1 ] || return 1
		[ "$(cat "$S/fm-branch" 2>/dev/null)" = "$DRV_BRANCH" ] || return 1
		gcsim_module_loaded nvidia || return 1
		;;
	esac
	gcsim_service_set "$1" active
}

# --- misc ---------------------------------------------------------------------------------

gcsim_distro() { echo "ubuntu${GCSIM_OS_VERSION//./}"; }

gcsim_need_root_apt() {
	if ! gcsim_is_root; then
		echo "E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)" >&2
		echo "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), are you root?" >&2
		exit 100
	fi
}
