# shellcheck shell=bash disable=SC2034 # its variables are read by the steps that source it
# lib.sh: what every gpucluster bootstrap step shares. Sourced, never run.
#
# How steps run (docs/bootstrap.md): the runner copies this directory (templates/bootstrap/*.sh
# and templates/smoke/smoke.cu, embedded in gpucluster) into one directory on the node and
# runs `bash DIR/STEP.sh` as the SSH user, the step's inputs in its environment. Each step
# sources lib.sh from its own directory. `cat lib.sh STEP.sh | bash -s` works as well: a
# step does not source lib.sh again once GC_LIB_LOADED is set. Steps that need root use
# sudo -n (passwordless sudo, as cloud images give their default user) unless run as root.
#
# Environment every step reads:
#   GC_VERBOSE=1        show what package managers and tools print (default: only the last
#                       lines of a command that fails)
#   GC_LOCK_TIMEOUT=S   seconds to wait for another apt/dpkg/dnf to finish (default 600)
#   MIRRORS="apt=URL cuda=URL docker=URL nvidia_container=URL"  bootstrap.mirrors: base
#                       URLs standing in for the distribution's archive, NVIDIA's CUDA
#                       repository, Docker's and NVIDIA's container toolkit's (any subset)
#   GC_RETRIES=N        attempts per download (default 4; waits 2, 4, 8 s between)
#
# Exit codes of every step: 0 done; 1 failed, with the reason on stderr; 100 (GC_EXIT_REBOOT)
# the step needs a reboot, after which the runner runs it again.

GC_LIB_LOADED=1
GC_EXIT_REBOOT=100
# each step sets its own name before sourcing this; a step run by hand falls back to its file
GC_STEP=${GC_STEP:-$(basename "${0%.sh}")}
# progress goes to stdout, except in steps whose stdout is a document (detect, smoke)
GC_PROGRESS_FD=${GC_PROGRESS_FD:-1}
# state that must survive a reboot (the driver step's reboot request)
GC_STATE_DIR=/var/lib/gpucluster
GC_CUDA_UPSTREAM=https://developer.download.nvidia.com/compute/cuda/repos

# mirror NAME: the base URL bootstrap.mirrors gives for NAME (apt, cuda, docker,
# nvidia_container), or fails when there is none.
mirror() {
	local m
	for m in ${MIRRORS:-}; do
		case "$m" in "$1="?*)
			printf '%s\n' "${m#*=}"
			return 0
			;;
		esac
	done
	return 1
}
GC_CUDA_URL=$(mirror cuda || echo "$GC_CUDA_UPSTREAM")
GC_PKG_UPDATED=0
GC_CHANGED=0
GC_OUT=""

# --- messages ------------------------------------------------------------------------------

info() { printf '%s: %s\n' "$GC_STEP" "$*" >&"$GC_PROGRESS_FD"; }
warn() { printf '%s: warning: %s\n' "$GC_STEP" "$*" >&2; }
die() {
	printf '%s: error: %s\n' "$GC_STEP" "$*" >&2
	exit 1
}

have() { command -v "$1" >/dev/null 2>&1; }

# --- running commands ----------------------------------------------------------------------

# gc_capture CMD...: runs CMD with stdin closed (a step piped into `bash -s` must not lose its
# own text to a command reading stdin) and its output in GC_OUT (the last 200 lines).
gc_capture() {
	local tmp rc=0
	tmp=$(mktemp "${TMPDIR:-/tmp}/gc-out.XXXXXX")
	if [ "${GC_VERBOSE:-0}" = 1 ]; then
		"$@" </dev/null 2>&1 | tee "$tmp" >&2 || rc=$?
	else
		"$@" </dev/null >"$tmp" 2>&1 || rc=$?
	fi
	GC_OUT=$(tail -n 200 "$tmp")
	rm -f "$tmp"
	return "$rc"
}

# gc_show_failure WHAT: the tail of the last captured output, on stderr.
gc_show_failure() {
	printf '%s: %s failed; its last lines:\n' "$GC_STEP" "$1" >&2
	printf '%s\n' "$GC_OUT" | tail -n 25 | sed 's/^/    | /' >&2
}

# gc_run CMD...: gc_capture, showing the output's tail when CMD fails.
gc_run() {
	local rc=0
	gc_capture "$@" || rc=$?
	[ "$rc" = 0 ] || gc_show_failure "'$*' (exit $rc)"
	return "$rc"
}

# retry CMD...: up to GC_RETRIES attempts, 2 s after the first failure, doubling.
retry() {
	local n=${GC_RETRIES:-4} i=1 delay=2
	while :; do
		"$@" && return 0
		[ "$i" -lt "$n" ] || return 1
		warn "'$1' failed (attempt $i of $n); retrying in ${delay}s"
		sleep "$delay"
		i=$((i + 1))
		delay=$((delay * 2))
	done
}

# fetch URL FILE: downloads with bounded retries.
fetch() {
	if have curl; then
		retry gc_run curl -fsSL --connect-timeout 20 --max-time 300 -o "$2" "$1"
	elif have wget; then
		retry gc_run wget -q -T 60 -O "$2" "$1"
	else
		die "cannot download '$1': neither curl nor wget is installed"
	fi
}

# --- privileges ----------------------------------------------------------------------------

GC_IS_ROOT=0
[ "$(id -u)" != 0 ] || GC_IS_ROOT=1

# need_root: fails unless the step can act as root (it is root, or sudo works without a
# password).
need_root() {
	[ "$GC_IS_ROOT" = 1 ] && return 0
	if have sudo && sudo -n true </dev/null >/dev/null 2>&1; then
		return 0
	fi
	die "this step needs root: run it as root or give '$(id -un)' passwordless sudo"
}

as_root() {
	if [ "$GC_IS_ROOT" = 1 ]; then
		"$@"
	else
		sudo -n -- "$@"
	fi
}

# put_file PATH MODE: installs stdin as PATH (as root) unless PATH holds that text already;
# GC_CHANGED says whether it wrote.
put_file() {
	local path=$1 mode=$2 tmp
	tmp=$(mktemp "${TMPDIR:-/tmp}/gc-file.XXXXXX")
	cat >"$tmp"
	GC_CHANGED=0
	if [ "$(cat "$tmp")" = "$(as_root cat "$path" 2>/dev/null </dev/null)" ]; then
		rm -f "$tmp"
		return 0
	fi
	if ! as_root mkdir -p "$(dirname "$path")" </dev/null ||
		! as_root install -m "$mode" "$tmp" "$path" </dev/null; then
		rm -f "$tmp"
		die "cannot write '$path'"
	fi
	rm -f "$tmp"
	GC_CHANGED=1
}

# install_watcher NAME DESCRIPTION EXEC USER DIR CHANGED: a watcher's systemd service
# (preempt, idle) running EXEC as USER in DIR, restarted when CHANGED is 1 or its unit
# changed, enabled and started; dies naming the unit when it cannot start.
install_watcher() {
	local name=$1 description=$2 exec=$3 user=$4 dir=$5 changed=$6
	put_file "/etc/systemd/system/$name.service" 0644 <<EOF
[Unit]
Description=$description
After=network-online.target

[Service]
Type=simple
User=$user
WorkingDirectory=$dir
ExecStart=$exec
Restart=on-failure

[Install]
WantedBy=multi-user.target
EOF
	changed=$((changed | GC_CHANGED))
	as_root systemctl daemon-reload </dev/null
	if [ "$changed" = 1 ]; then
		as_root systemctl stop "$name" </dev/null >/dev/null 2>&1 || true
	fi
	as_root systemctl enable --now "$name" </dev/null >/dev/null 2>&1 ||
		die "cannot start $name.service"
}

# remove_watcher NAME FILE...: undoes install_watcher: stops and disables NAME.service,
# removes its unit and FILEs (what would act on its own); nothing to do is not an error.
remove_watcher() {
	local name=$1
	shift
	# stop, then disable: a stop is also what a service manager that runs the unit until
	# told otherwise (the emulator's) acts on
	as_root systemctl stop "$name" </dev/null >/dev/null 2>&1 || true
	as_root systemctl disable "$name" </dev/null >/dev/null 2>&1 || true
	as_root rm -f "/etc/systemd/system/$name.service" "$@"
	as_root systemctl daemon-reload </dev/null
	! as_root systemctl is-active --quiet "$name" </dev/null ||
		die "cannot stop $name.service"
}

boot_id() { cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown; }

# --- the operating system ------------------------------------------------------------------

# os_detect: sets OS_ID, OS_VERSION, OS_CODENAME, OS_PRETTY, PKG (apt or dnf), CUDA_DISTRO
# (the directory of NVIDIA's repositories: ubuntu2204, debian12, amzn2023, rhel9, ...),
# ARCH (uname -m), CUDA_ARCH (x86_64 or sbsa) and OS_SUPPORTED (1 or 0).
os_detect() {
	local ID="" VERSION_ID="" VERSION_CODENAME="" PRETTY_NAME="" ID_LIKE=""
	[ -r /etc/os-release ] || die "cannot tell the operating system: /etc/os-release is missing"
	# shellcheck source=/dev/null
	. /etc/os-release
	OS_ID=$ID OS_VERSION=$VERSION_ID OS_CODENAME=$VERSION_CODENAME
	OS_PRETTY=${PRETTY_NAME:-$ID $VERSION_ID}
	ARCH=$(uname -m)
	CUDA_ARCH=$ARCH
	[ "$ARCH" != aarch64 ] || CUDA_ARCH=sbsa
	OS_SUPPORTED=1
	case "$ID:$VERSION_ID" in
	ubuntu:22.04 | ubuntu:24.04) PKG=apt CUDA_DISTRO=ubuntu${VERSION_ID//./} ;;
	debian:12*) PKG=apt CUDA_DISTRO=debian12 ;;
	amzn:2023*) PKG=dnf CUDA_DISTRO=amzn2023 ;;
	rocky:9* | rhel:9* | almalinux:9*) PKG=dnf CUDA_DISTRO=rhel9 ;;
	*)
		OS_SUPPORTED=0 CUDA_DISTRO=""
		case " $ID $ID_LIKE " in
		*" debian "* | *" ubuntu "*) PKG=apt ;;
		*" rhel "* | *" fedora "* | *" centos "*) PKG=dnf ;;
		*) PKG="" ;;
		esac
		;;
	esac
	case "$ARCH" in
	x86_64 | aarch64) ;;
	*) OS_SUPPORTED=0 ;;
	esac
}

os_require_supported() {
	[ "$OS_SUPPORTED" = 1 ] ||
		die "unsupported system '$OS_PRETTY' ($ARCH): gpucluster bootstraps Ubuntu 22.04 and 24.04, Debian 12, Amazon Linux 2023 and Rocky Linux 9 on x86_64 or aarch64"
}

# --- packages ------------------------------------------------------------------------------

pkg_installed() {
	case "$PKG" in
	apt) dpkg-query -W --showformat='${db:Status-Abbrev}' "$1" 2>/dev/null | grep -q '^ii' ;;
	dnf) rpm -q "$1" >/dev/null 2>&1 ;;
	*) return 1 ;;
	esac
}

pkg_version() {
	case "$PKG" in
	apt) dpkg-query -W --showformat='${Version}' "$1" 2>/dev/null ;;
	dnf) rpm -q --qf '%{VERSION}-%{RELEASE}' "$1" 2>/dev/null ;;
	esac
}

# pkg_list: the names of the installed packages, one per line.
pkg_list() {
	case "$PKG" in
	apt) dpkg-query -W --showformat='${Package} ${db:Status-Abbrev}\n' 2>/dev/null | awk '$2 == "ii" { print $1 }' ;;
	dnf) rpm -qa --qf '%{NAME}\n' 2>/dev/null ;;
	esac
}

# locked WHAT CMD...: CMD as root, its output captured, waiting (bounded) while another apt
# or dpkg holds their locks (cloud-init and unattended-upgrades hold them at first boot).
locked() {
	local deadline=$((SECONDS + ${GC_LOCK_TIMEOUT:-600})) rc said=0 what=$1
	shift
	while :; do
		rc=0
		gc_capture as_root "$@" || rc=$?
		[ "$rc" != 0 ] || return 0
		case "$GC_OUT" in
		*"Could not get lock"* | *"Unable to lock directory"* | *"is another process using it"* | \
			*"locked by another process"*)
			if [ "$SECONDS" -lt "$deadline" ]; then
				[ "$said" = 1 ] || info "waiting for another package manager to finish"
				said=1
				sleep 5
				continue
			fi
			;;
		esac
		gc_show_failure "'$what' (exit $rc)"
		return "$rc"
	done
}

# apt_get ARGS...: apt-get as root, never prompting, waiting for the locks.
apt_get() {
	locked "apt-get $*" env DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=a \
		apt-get -y -q -o DPkg::Lock::Timeout=60 -o Acquire::Retries=3 \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"
}

dnf_() {
	gc_run as_root dnf -y -q --setopt=install_weak_deps=False "$@"
}

# pkg_update: refreshes the package lists once per step (and again after a repository is
# added: callers reset GC_PKG_UPDATED).
pkg_update() {
	[ "$GC_PKG_UPDATED" = 0 ] || return 0
	wait_cloud_init
	apt_mirrored
	info "refreshing the package lists"
	case "$PKG" in
	apt) retry apt_get update ;;
	dnf) retry dnf_ makecache ;;
	esac || die "cannot refresh the package lists (network, or a repository's key?)"
	GC_PKG_UPDATED=1
}

# pkg_install [--allow-held] NAME[=VERSION]...: installs what is not installed yet. Not
# retried here: apt (Acquire::Retries) and dnf retry their downloads themselves, and the
# other failures (an unknown package, a conflict) do not go away by trying again.
pkg_install() {
	local held=() want=() p
	if [ "${1:-}" = --allow-held ]; then
		held=(--allow-change-held-packages)
		shift
	fi
	for p in "$@"; do
		pkg_installed "${p%%=*}" || want+=("$p")
	done
	[ ${#want[@]} -gt 0 ] || return 0
	pkg_update
	info "installing ${want[*]}"
	case "$PKG" in
	apt) apt_get install "${held[@]}" "${want[@]}" ;;
	dnf) dnf_ install "${want[@]}" ;;
	esac
}

# pkg_hold NAME...: keeps the named (installed) packages at their versions: apt-mark hold,
# or dnf versionlock.
pkg_hold() {
	local p names=()
	for p in "$@"; do
		pkg_installed "$p" && names+=("$p")
	done
	[ ${#names[@]} -gt 0 ] || return 0
	case "$PKG" in
	apt) gc_run as_root apt-mark hold "${names[@]}" ;;
	dnf)
		if ! dnf versionlock list >/dev/null 2>&1; then
			pkg_install python3-dnf-plugin-versionlock || return 1
		fi
		gc_run as_root dnf -q versionlock add "${names[@]}"
		;;
	esac
}

# pkg_repair [FILE PACKAGES]...: run by every installing step before it decides what is
# done, it repairs what an interrupted run (a kill, a reboot, a lost connection) left half
# made. With apt: an interrupted dpkg (`dpkg --audit` lists packages unpacked but not
# configured, or half installed, and apt refuses to go on) is finished with `dpkg
# --configure -a` and `apt-get -f install`. Then, for each pair, when FILE (a path, or a
# command looked up on PATH) is missing although one of PACKAGES (space-separated) is
# installed, the installed ones among them are reinstalled.
pkg_repair() {
	local f p broken=() why=()
	if [ "$PKG" = apt ] && [ -n "$(dpkg --audit 2>/dev/null </dev/null)" ]; then
		need_root
		info "finishing an interrupted package installation (dpkg --configure -a, apt-get -f install)"
		locked "dpkg --configure -a" env DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=a \
			dpkg --force-confdef --force-confold --configure -a || die "cannot finish the interrupted package installation (dpkg --configure -a)"
		apt_get -f install || die "cannot repair the packages of an interrupted installation (apt-get -f install)"
	fi
	while [ $# -ge 2 ]; do
		f=$1
		if { [[ $f == /* ]] && [ ! -e "$f" ]; } || { [[ $f != /* ]] && ! have "$f"; }; then
			for p in $2; do
				if pkg_installed "$p" && [[ " ${broken[*]} " != *" $p "* ]]; then
					broken+=("$p")
					[[ " ${why[*]} " == *" $f "* ]] || why+=("$f")
				fi
			done
		fi
		shift 2
	done
	[ ${#broken[@]} -gt 0 ] || return 0
	need_root
	pkg_update
	info "reinstalling ${broken[*]}: installed, but ${why[*]} missing"
	case "$PKG" in
	apt) apt_get install --reinstall "${broken[@]}" ;;
	dnf) dnf_ reinstall "${broken[@]}" ;;
	esac || die "cannot reinstall ${broken[*]}"
}

# wait_cloud_init: on first boot cloud-init may still be installing packages (once a step).
GC_CLOUD_INIT_DONE=0
wait_cloud_init() {
	[ "$GC_CLOUD_INIT_DONE" = 0 ] || return 0
	GC_CLOUD_INIT_DONE=1
	have cloud-init || return 0
	timeout "${GC_LOCK_TIMEOUT:-600}" cloud-init status --wait </dev/null >/dev/null 2>&1 || true
}

# --- NVIDIA's CUDA repository --------------------------------------------------------------

# cuda_repo_setup: NVIDIA's network repository for this distribution, the documented way:
# the cuda-keyring package on Ubuntu and Debian, the .repo file with dnf.
cuda_repo_setup() {
	local base="$GC_CUDA_URL/$CUDA_DISTRO/$CUDA_ARCH" tmp
	case "$PKG" in
	apt)
		# an image may carry the repository without the keyring package (a second entry
		# with another Signed-By would break apt)
		if pkg_installed cuda-keyring ||
			grep -rqsF "developer.download.nvidia.com/compute/cuda/repos/$CUDA_DISTRO/" \
				/etc/apt/sources.list /etc/apt/sources.list.d/; then
			cuda_repo_mirrored
			return 0
		fi
		info "adding NVIDIA's CUDA repository ($CUDA_DISTRO)"
		if [ "$OS_ID" = debian ]; then
			debian_contrib
		fi
		tmp=$(mktemp -d "${TMPDIR:-/tmp}/gc-keyring.XXXXXX")
		fetch "$base/cuda-keyring_1.1-1_all.deb" "$tmp/cuda-keyring_1.1-1_all.deb" ||
			die "cannot download NVIDIA's cuda-keyring package from '$base'"
		gc_run as_root dpkg -i "$tmp/cuda-keyring_1.1-1_all.deb" ||
			die "cannot install the cuda-keyring package"
		rm -rf "$tmp"
		cuda_repo_mirrored
		GC_PKG_UPDATED=0
		;;
	dnf)
		if [ -s "/etc/yum.repos.d/cuda-$CUDA_DISTRO.repo" ]; then
			return 0
		fi
		info "adding NVIDIA's CUDA repository ($CUDA_DISTRO)"
		if [ "$OS_ID" != amzn ]; then
			# DKMS and some dependencies come from EPEL and CodeReady Builder on RHEL 9 clones
			gc_run as_root dnf -y -q config-manager --set-enabled crb || true
			pkg_install epel-release || die "cannot install epel-release"
		fi
		tmp=$(mktemp "${TMPDIR:-/tmp}/gc-repo.XXXXXX")
		fetch "$base/cuda-$CUDA_DISTRO.repo" "$tmp" || die "cannot download '$base/cuda-$CUDA_DISTRO.repo'"
		put_file "/etc/yum.repos.d/cuda-$CUDA_DISTRO.repo" 0644 <"$tmp"
		rm -f "$tmp"
		GC_PKG_UPDATED=0
		;;
	esac
}

# cuda_repo_mirrored: with a cuda mirror, the list the cuda-keyring package wrote (NVIDIA's
# own host) points at the mirror instead, as the mirrors document.
cuda_repo_mirrored() {
	local f
	[ "$GC_CUDA_URL" != "$GC_CUDA_UPSTREAM" ] || return 0
	for f in /etc/apt/sources.list.d/cuda-*.list; do
		if [ ! -f "$f" ] || ! grep -qF "$GC_CUDA_UPSTREAM/" "$f"; then
			continue
		fi
		sed "s#$GC_CUDA_UPSTREAM/#$GC_CUDA_URL/#g" "$f" | put_file "$f" 0644
		GC_PKG_UPDATED=0
		info "NVIDIA's CUDA repository comes from $GC_CUDA_URL"
	done
}

# apt_mirrored: with an apt mirror, the distribution's own archive lines (sources.list and
# deb822 .sources files, any host, path /ubuntu or /debian) point at it. Other repositories
# and the security archive of Debian (debian-security) are left as they are.
apt_mirrored() {
	local url f
	url=$(mirror apt) || return 0
	[ "$PKG" = apt ] || return 0
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources; do
		if [ ! -f "$f" ] || ! grep -qE "https?://[^ ]+/$OS_ID/?( |\$)" "$f"; then
			continue
		fi
		sed -E "s#https?://[^ ]+/$OS_ID/?( |\$)#$url\1#g" "$f" | put_file "$f" 0644
		[ "$GC_CHANGED" = 1 ] || continue
		GC_PKG_UPDATED=0
		info "the $OS_ID archive comes from $url"
	done
}

# debian_contrib: NVIDIA's Debian packages need the contrib component.
debian_contrib() {
	if grep -rqsE '^[^#]*\bcontrib\b|^Components:.*\bcontrib\b' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		return 0
	fi
	info "enabling Debian's contrib component"
	printf 'deb http://deb.debian.org/debian %s contrib\ndeb http://deb.debian.org/debian %s-updates contrib\n' \
		"$OS_CODENAME" "$OS_CODENAME" | put_file /etc/apt/sources.list.d/gpucluster-contrib.list 0644
	GC_PKG_UPDATED=0
}

# apt_pin NAME PACKAGES PREFIX: an apt preferences file that makes every version starting
# with PREFIX win for PACKAGES (an apt glob), for a full driver version or a cuDNN minor;
# priority 1001 lets it win over a newer installed version too. Packages that have no such
# version are not affected.
apt_pin() {
	printf 'Package: %s\nPin: version %s*\nPin-Priority: 1001\n' "$2" "$3" |
		put_file "/etc/apt/preferences.d/gpucluster-$1" 0644
}

# --- GPUs ----------------------------------------------------------------------------------

# gpu_scan: the NVIDIA GPUs and NVSwitches on the PCI bus. Sets GPU_COUNT, GPU_SLOTS[],
# GPU_IDS[] (device ids, 4 lowercase hex digits), GPU_NAMES[] and NVSWITCH_COUNT.
gpu_scan() {
	local line re_gpu re_sw d cls dev vendor
	GPU_COUNT=0 NVSWITCH_COUNT=0 GPU_SLOTS=() GPU_IDS=() GPU_NAMES=()
	re_gpu='^([0-9a-fA-F:.]+) .*\[03[0-9a-fA-F]{2}\]: (.*) \[10de:([0-9a-fA-F]{4})\]'
	re_sw='^[0-9a-fA-F:.]+ .*\[0680\]: .*\[10de:[0-9a-fA-F]{4}\]'
	if have lspci; then
		while IFS= read -r line; do
			if [[ $line =~ $re_gpu ]]; then
				GPU_SLOTS+=("${BASH_REMATCH[1]}")
				GPU_NAMES+=("${BASH_REMATCH[2]#NVIDIA Corporation }")
				GPU_IDS+=("$(printf '%s' "${BASH_REMATCH[3]}" | tr '[:upper:]' '[:lower:]')")
			elif [[ $line =~ $re_sw ]]; then
				NVSWITCH_COUNT=$((NVSWITCH_COUNT + 1))
			fi
		done < <(lspci -nn -d 10de: 2>/dev/null)
	else
		# no pciutils: the same facts from sysfs, without names
		for d in /sys/bus/pci/devices/*; do
			[ -r "$d/vendor" ] || continue
			read -r vendor <"$d/vendor"
			[ "$vendor" = 0x10de ] || continue
			read -r cls <"$d/class"
			read -r dev <"$d/device"
			case "$cls" in
			0x0300* | 0x0302*)
				GPU_SLOTS+=("${d##*/}")
				GPU_IDS+=("${dev#0x}")
				GPU_NAMES+=("NVIDIA device 10de:${dev#0x}")
				;;
			0x0680*) NVSWITCH_COUNT=$((NVSWITCH_COUNT + 1)) ;;
			esac
		done
	fi
	GPU_COUNT=${#GPU_IDS[@]}
}

# gpu_open_supported: whether every GPU can use NVIDIA's open kernel modules, which need
# Turing or newer. NVIDIA numbers PCI device ids by generation: every Turing and later part
# has an id of 0x1e00 or above (TU102 starts at 0x1e02), every Volta and older part one
# below (GV100 is 0x1db0-0x1dbf). A machine with any older GPU gets the proprietary modules.
gpu_open_supported() {
	local id
	[ "$GPU_COUNT" -gt 0 ] || return 1
	for id in "${GPU_IDS[@]}"; do
		[ $((16#$id)) -ge $((16#1e00)) ] || return 1
	done
	return 0
}

# unit_exists NAME: systemd knows the unit (status: 0 active, 3 inactive or failed, 4 unknown).
unit_exists() {
	local rc=0
	have systemctl || return 1
	systemctl status "$1" >/dev/null 2>&1 </dev/null || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 3 ]
}

module_loaded() { lsmod 2>/dev/null | awk -v m="$1" '$1 == m { f = 1 } END { exit !f }'; }

# nvidia_smi_ok: nvidia-smi answers (the driver is installed and loaded); its first lines
# are in GC_OUT either way.
nvidia_smi_ok() {
	have nvidia-smi || {
		GC_OUT="nvidia-smi: command not found"
		return 1
	}
	gc_capture nvidia-smi -L
}

# driver_version: the loaded driver's version, from nvidia-smi.
driver_version() {
	nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null </dev/null | sed -n '1p'
}

# driver_cuda_version: the newest CUDA version the loaded driver supports ("12.8").
driver_cuda_version() {
	nvidia-smi 2>/dev/null </dev/null | sed -n 's/.*CUDA Version: *\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | sed -n '1p'
}

# version_ge A B: A >= B for dotted versions.
#
# (Everywhere: never `producer | head`: with pipefail the producer's SIGPIPE fails the step
# when it writes more than head reads; sed -n '1p' reads everything.)
version_ge() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | sed -n '1p')" = "$2" ]; }
