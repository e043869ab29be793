#!/usr/bin/env bash
# driver.sh: the NVIDIA driver from NVIDIA's network repository, as NVIDIA's driver
# installation guide describes it: the cuda-keyring package on Ubuntu 22.04/24.04 and
# Debian 12, dnf module streams on Amazon Linux 2023 and Rocky Linux 9. Open kernel modules
# for Turing and newer GPUs, proprietary ones when any GPU is Volta or older (lib.sh,
# gpu_open_supported). Checks the kernel headers first, blacklists nouveau, holds the kernel
# and driver packages so an upgrade cannot pull them apart, installs and enables Fabric
# Manager on NVSwitch machines and turns persistence mode on. Idempotent: a node that has
# the driver working skips to the checks.
#
# Environment:
#   DRIVER=570            a branch (3 digits), a full version (570.124.06), or "preinstalled":
#                         install nothing, check that nvidia-smi works and print its version
#   DRIVER_FLAVOR=auto    auto | open | proprietary (auto: by the GPUs' PCI ids)
#   FABRIC_MANAGER=auto   auto (when NVSwitches are on the PCI bus) | yes | no
#   PERSISTENCE=yes       yes | no: nvidia-persistenced / nvidia-smi -pm 1
#   HOLD_PACKAGES=yes     yes | no: apt-mark hold (dnf versionlock) the kernel and driver
#
# Exit status: 0 the driver works; 1 failure; 100 reboot needed (nouveau holds the GPUs or the
# new module cannot load before a reboot): reboot, then run this step again. A second reboot
# request for the same install is an error, not a loop.
set -euo pipefail
GC_STEP=driver
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi

DRIVER=${DRIVER:-570}
DRIVER_FLAVOR=${DRIVER_FLAVOR:-auto}
FABRIC_MANAGER=${FABRIC_MANAGER:-auto}
PERSISTENCE=${PERSISTENCE:-yes}
HOLD_PACKAGES=${HOLD_PACKAGES:-yes}
reboot_file=$GC_STATE_DIR/driver-reboot

# verify_preinstalled: the image's driver must answer; nothing is installed or changed.
verify_preinstalled() {
	if ! nvidia_smi_ok; then
		if module_loaded nouveau; then
			die "DRIVER=preinstalled, but nouveau drives the GPUs: this image has no working NVIDIA driver (use a GPU image, or a driver branch such as DRIVER=570)"
		fi
		die "DRIVER=preinstalled, but nvidia-smi fails: $(printf '%s' "$GC_OUT" | sed -n '1,2p' | tr '\n' ' ')"
	fi
	info "preinstalled driver $(driver_version) (CUDA $(driver_cuda_version)) drives $(printf '%s\n' "$GC_OUT" | grep -c '^GPU ') GPU(s)"
}

if [ "$DRIVER" = preinstalled ]; then
	verify_preinstalled
	exit 0
fi

[[ $DRIVER =~ ^[0-9]{3}(\.[0-9]{1,3}){0,2}$ ]] ||
	die "DRIVER='$DRIVER' is neither a branch (570), a full version (570.124.06) nor 'preinstalled'"
branch=${DRIVER%%.*}
full=""
[ "$DRIVER" = "$branch" ] || full=$DRIVER
case "$DRIVER_FLAVOR" in auto | open | proprietary) ;; *) die "DRIVER_FLAVOR='$DRIVER_FLAVOR': expected auto, open or proprietary" ;; esac
case "$FABRIC_MANAGER" in auto | yes | no) ;; *) die "FABRIC_MANAGER='$FABRIC_MANAGER': expected auto, yes or no" ;; esac

os_detect
os_require_supported
need_root
gpu_scan
[ "$GPU_COUNT" -gt 0 ] || die "no NVIDIA GPU on the PCI bus (lspci -nn -d 10de: lists none): nothing to install a driver for"

flavor=$DRIVER_FLAVOR
if [ "$flavor" = auto ]; then
	flavor=proprietary
	! gpu_open_supported || flavor=open
fi
if [ "$flavor" = open ] && ! gpu_open_supported; then
	die "DRIVER_FLAVOR=open, but a GPU here is Volta or older (PCI id 10de:${GPU_IDS[0]}), which only the proprietary modules drive"
fi
fm=0
if [ "$FABRIC_MANAGER" = yes ] || { [ "$FABRIC_MANAGER" = auto ] && [ "$NVSWITCH_COUNT" -gt 0 ]; }; then
	fm=1
fi

# The packages of NVIDIA's own tables: on Ubuntu and Debian a branch's open or proprietary
# meta-package, with dnf the branch's module stream and its meta-package.
case "$PKG" in
apt)
	if [ "$flavor" = open ]; then main=nvidia-open-$branch; else main=cuda-drivers-$branch; fi
	fm_pkg=nvidia-fabricmanager-$branch
	;;
dnf)
	if [ "$flavor" = open ]; then main=nvidia-open stream=$branch-open; else main=cuda-drivers stream=$branch-dkms; fi
	fm_pkg=nvidia-fabric-manager
	;;
esac
pkg_repair nvidia-smi "$main nvidia-utils-$branch nvidia-driver-cuda"

# running_flavor: open or proprietary, for the loaded module (/proc/driver/nvidia/version
# names the open one "Open Kernel Module"), else for the installed packages.
running_flavor() {
	if [ -r /proc/driver/nvidia/version ]; then
		if grep -q 'Open Kernel Module' /proc/driver/nvidia/version; then echo open; else echo proprietary; fi
	elif pkg_list | grep -qE '^(nvidia-open(-[0-9]+)?|nvidia-kernel-open-[0-9]+|nvidia-(dkms|driver)-[0-9]+(-server)?-open|kmod-nvidia-open-dkms)$'; then
		echo open
	else
		echo proprietary
	fi
}

# driver_ready: nvidia-smi answers with the wanted branch (and version) and flavour. A driver
# installed some other way (Ubuntu's nvidia-driver-570-server-open, an image's) counts.
driver_ready() {
	local v
	nvidia_smi_ok || return 1
	v=$(driver_version)
	case "$v" in "$branch".*) ;; *) return 1 ;; esac
	[ -z "$full" ] || [ "$v" = "$full" ] || return 1
	[ "$(running_flavor)" = "$flavor" ]
}

headers_preflight() {
	local k
	k=$(uname -r)
	case "$PKG" in
	apt)
		pkg_installed "linux-headers-$k" && return 0
		pkg_install "linux-headers-$k" && return 0
		;;
	dnf)
		local want=("kernel-devel-$k" "kernel-headers-$k")
		[ "$OS_ID" != amzn ] || want+=("kernel-modules-extra-$k")
		pkg_install "${want[@]}" && return 0
		;;
	esac
	die "the headers of the running kernel '$k' are not installed and the repositories do not have them; DKMS cannot build the NVIDIA module without them. Usually a newer kernel is installed but not running: reboot into it (or install the headers for '$k') and run this step again"
}

blacklist_nouveau() {
	printf 'blacklist nouveau\noptions nouveau modeset=0\n' | put_file /etc/modprobe.d/blacklist-nouveau.conf 0644
	[ "$GC_CHANGED" = 1 ] || return 0
	info "blacklisted nouveau; rebuilding the initramfs"
	if have update-initramfs; then
		gc_run as_root update-initramfs -u || warn "update-initramfs failed: nouveau may load again at boot"
	elif have dracut; then
		gc_run as_root dracut -f || warn "dracut failed: nouveau may load again at boot"
	fi
}

install_driver() {
	cuda_repo_setup
	headers_preflight
	blacklist_nouveau
	case "$PKG" in
	apt)
		# a full version: NVIDIA's driver packages all carry it, nothing else does
		if [ -n "$full" ]; then
			apt_pin nvidia-driver '*' "$full-"
		else
			as_root rm -f /etc/apt/preferences.d/gpucluster-nvidia-driver
		fi
		local pkgs=("$main") same=()
		[ "$fm" = 0 ] || pkgs+=("$fm_pkg")
		pkg_install --allow-held "${pkgs[@]}" || die "cannot install '$main'"
		if [ -n "$full" ]; then
			# the branch's packages already installed at another version: reinstalling
			# them lets the pin move them (up or down) to the requested one
			local p v
			while IFS= read -r p; do
				v=$(pkg_version "$p")
				if [[ $v == "$branch".* && $v != "$full"-* ]]; then
					same+=("$p")
				fi
			done < <(pkg_list | grep -E '^(nvidia-|libnvidia-|cuda-drivers|libcuda1|libxnvctrl)' |
				grep -vE '^(nvidia|libnvidia)-container' || true)
			if [ ${#same[@]} -gt 0 ]; then
				info "moving ${#same[@]} driver packages to $full"
				pkg_update
				apt_get install --allow-downgrades --allow-change-held-packages "${same[@]}" ||
					die "cannot install driver $full"
			fi
		fi
		info "the $flavor NVIDIA driver $branch is installed ($main $(pkg_version "$main"))"
		;;
	dnf)
		local cur
		cur=$(dnf -q module list --enabled nvidia-driver 2>/dev/null | awk '$1 == "nvidia-driver" { print $2 }' | sed -n '1p' || true)
		if [ -n "$cur" ] && [ "$cur" != "$stream" ]; then
			info "switching the nvidia-driver module stream from $cur to $stream"
			dnf_ module switch-to --allowerasing "nvidia-driver:$stream" || die "cannot switch to nvidia-driver:$stream"
		else
			dnf_ module enable "nvidia-driver:$stream" || die "cannot enable the module stream nvidia-driver:$stream"
		fi
		local pkgs=("$main${full:+-$full}")
		[ "$fm" = 0 ] || pkgs+=("$fm_pkg")
		pkg_install "${pkgs[@]}" || die "cannot install '$main'"
		info "the $flavor NVIDIA driver $branch is installed (nvidia-driver:$stream, $main $(pkg_version "$main"))"
		;;
	esac
}

# request_reboot WHY: exit 100, unless this install already rebooted once for it.
request_reboot() {
	local asked
	asked=$(as_root cat "$reboot_file" 2>/dev/null </dev/null || true)
	if [ -n "$asked" ] && [ "$asked" != "$(boot_id)" ]; then
		local sb=""
		if have mokutil && mokutil --sb-state 2>/dev/null | grep -q enabled; then
			sb=" Secure Boot is on: the DKMS-built module must be signed with an enrolled key."
		fi
		die "the NVIDIA driver still does not work after a reboot: $1.$sb"
	fi
	boot_id | put_file "$reboot_file" 0644
	info "reboot needed: $1"
	exit "$GC_EXIT_REBOOT"
}

if driver_ready; then
	info "NVIDIA driver $(driver_version) ($flavor) already works"
else
	install_driver
	if module_loaded nouveau; then
		request_reboot "nouveau drives the GPUs until the next boot"
	fi
	gc_capture as_root modprobe nvidia || true
	if nvidia_smi_ok && [ "$(running_flavor)" != "$flavor" ]; then
		request_reboot "the loaded nvidia module is the $(running_flavor) one"
	fi
	if ! nvidia_smi_ok; then
		case "$GC_OUT" in
		*"version mismatch"*) request_reboot "the loaded nvidia module is older than the installed driver" ;;
		esac
		[ -s /var/run/reboot-required ] && request_reboot "the nvidia module does not load yet ($(printf '%s' "$GC_OUT" | sed -n '1p'))"
		die "the NVIDIA driver is installed but nvidia-smi fails: $(printf '%s' "$GC_OUT" | sed -n '1,2p' | tr '\n' ' ')"
	fi
	if ! driver_ready; then
		hint=""
		[ -z "$full" ] || hint=" (does NVIDIA's repository carry $full?)"
		die "nvidia-smi reports driver $(driver_version), not the requested $DRIVER$hint"
	fi
	info "NVIDIA driver $(driver_version) ($flavor) works"
fi
as_root rm -f "$reboot_file"

if [ "$HOLD_PACKAGES" = yes ]; then
	k=$(uname -r)
	holds=()
	if [ "$PKG" = apt ]; then
		# the running kernel, its flavour's meta-packages (linux-aws, linux-image-generic,
		# Debian's linux-image-cloud-amd64, ...) and every driver package, not the container
		# toolkit's
		flavour=${k##*-}
		while IFS= read -r p; do
			case "$p" in
			nvidia-container* | libnvidia-container*) ;;
			nvidia-* | libnvidia-* | cuda-drivers* | libcuda1 | xserver-xorg-video-nvidia* | libxnvctrl*) holds+=("$p") ;;
			"linux-image-$k" | "linux-headers-$k" | "linux-modules-$k" | "linux-modules-extra-$k" | \
				"linux-$flavour" | "linux-image-$flavour" | "linux-headers-$flavour" | \
				linux-image-amd64 | linux-headers-amd64 | linux-image-cloud-amd64 | linux-headers-cloud-amd64 | \
				linux-image-arm64 | linux-headers-arm64 | linux-image-cloud-arm64 | linux-headers-cloud-arm64)
				holds+=("$p")
				;;
			esac
		done < <(pkg_list)
	else
		# the module stream keeps the driver on its branch; lock the kernel packages
		holds=(kernel kernel-core kernel-modules kernel-modules-extra kernel-devel kernel-headers)
	fi
	pkg_hold "${holds[@]}" || die "cannot hold the kernel and driver packages"
	info "kernel and driver packages held at their versions"
fi

if [ "$fm" = 1 ]; then
	pkg_install --allow-held "$fm_pkg" || die "cannot install '$fm_pkg'"
	gc_run as_root systemctl enable nvidia-fabricmanager || die "cannot enable nvidia-fabricmanager"
	if ! systemctl is-active --quiet nvidia-fabricmanager 2>/dev/null; then
		gc_run as_root systemctl start nvidia-fabricmanager ||
			die "nvidia-fabricmanager does not start (its branch must match the driver's $branch; see journalctl -u nvidia-fabricmanager)"
	fi
	info "Fabric Manager is running ($NVSWITCH_COUNT NVSwitches)"
fi

if [ "$PERSISTENCE" = yes ]; then
	if unit_exists nvidia-persistenced; then
		gc_run as_root systemctl enable nvidia-persistenced || warn "cannot enable nvidia-persistenced"
		systemctl is-active --quiet nvidia-persistenced 2>/dev/null ||
			gc_run as_root systemctl start nvidia-persistenced || warn "nvidia-persistenced does not start"
	fi
	if nvidia-smi --query-gpu=persistence_mode --format=csv,noheader 2>/dev/null </dev/null | grep -q Disabled; then
		gc_run as_root nvidia-smi -pm 1 || die "cannot turn persistence mode on"
	fi
	info "persistence mode is on"
fi
