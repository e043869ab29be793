# shellcheck shell=bash
# apt.sh: the simulated package archive of a gpucluster-sim node, shared by apt-get, apt,
# dpkg and the boot hook. Sourced after gcsim.sh, never run.
#
# Four archives exist: Ubuntu's own (always configured), NVIDIA's CUDA repository (added
# by the cuda-keyring package), NVIDIA's container toolkit repository and Docker's (added
# by a list file). As on a real machine a repository is usable only after apt-get update
# has seen it, and a list line with signed-by= needs that keyring file to exist.

# shellcheck source=net.sh
. /usr/local/lib/gpucluster-sim/net.sh

# Prints the repositories the sources lists configure ("ubuntu", "cuda", "nvidia-container",
# "docker"), one per line; complains about unsigned ones on stderr and leaves them out.
gcsim_repos_configured() {
	echo ubuntu
	local f line key kind
	for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		while IFS= read -r line; do
			case "$(gcsim_unmirror_line "$line")" in
			*developer.download.nvidia.com/compute/cuda/repos*) kind=cuda ;;
			*nvidia.github.io/libnvidia-container*) kind=nvidia-container ;;
			*download.docker.com/linux/ubuntu*) kind=docker ;;
			*) continue ;;
			esac
			case "$line" in
			'#'*) continue ;;
			esac
			key=$(printf '%s\n' "$line" | sed -n 's/.*signed-by=\([^] ]*\).*/\1/p')
			if [ -n "$key" ] && [ ! -s "$key" ]; then
				echo "W: GPG error: $(gcsim_repo_url "$kind") InRelease: The following signatures couldn't be verified because the public key is not available: NO_PUBKEY $(gcsim_repo_key "$kind")" >&2
				echo "E: The repository '$(gcsim_repo_url "$kind") InRelease' is not signed." >&2
				continue
			fi
			echo "$kind"
		done <"$f"
	done
}

# gcsim_unmirror_line LINE: a sources line with a known mirror's URL on the upstream host
gcsim_unmirror_line() {
	local w out="" words
	read -r -a words <<<"$1"
	for w in "${words[@]}"; do
		out="${out:+$out }$(gcsim_unmirror "$w")"
	done
	printf '%s\n' "$out"
}

gcsim_repo_url() {
	case "$1" in
	ubuntu) echo "http://archive.ubuntu.com/ubuntu" ;;
	cuda) echo "https://developer.download.nvidia.com/compute/cuda/repos/$(gcsim_distro)/x86_64" ;;
	nvidia-container) echo "https://nvidia.github.io/libnvidia-container/stable/deb/amd64" ;;
	docker) echo "https://download.docker.com/linux/ubuntu" ;;
	esac
}

gcsim_repo_key() {
	case "$1" in
	cuda) echo A4B469963BF863CC ;;
	nvidia-container) echo DDCAE044F796ECB0 ;;
	*) echo 7EA0A9C3F273FCD8 ;;
	esac
}

gcsim_apt_update() {
	local repos n=1 r errs rc=0
	errs=$(mktemp)
	repos=$(gcsim_repos_configured 2>"$errs" | sort -u)
	mkdir -p "$S/apt"
	for r in $repos; do
		if [ "$r" = ubuntu ]; then
			echo "Hit:$n http://archive.ubuntu.com/ubuntu $GCSIM_CODENAME InRelease"
			n=$((n + 1))
			echo "Get:$n http://archive.ubuntu.com/ubuntu $GCSIM_CODENAME-updates InRelease [128 kB]"
			n=$((n + 1))
			echo "Get:$n http://security.ubuntu.com/ubuntu $GCSIM_CODENAME-security InRelease [129 kB]"
		else
			echo "Get:$n $(gcsim_repo_url "$r")  InRelease [1581 B]"
		fi
		n=$((n + 1))
	done
	echo "Fetched 1024 kB in 1s (1024 kB/s)"
	echo "Reading package lists..."
	if [ -s "$errs" ]; then
		cat "$errs" >&2
		echo "W: Some index files failed to download. They have been ignored, or old ones used instead." >&2
		rc=100
	fi
	rm -f "$errs"
	printf '%s\n' "$repos" >"$S/apt/repos"
	return $rc
}

gcsim_repo_ready() { grep -qx "$1" "$S/apt/repos" 2>/dev/null; }

# Resolves a package name: sets R_REPO, R_VERSION, R_DEPS (names) and R_KIND (what
# installing it does); returns 1 when no archive has it.
gcsim_resolve() {
	local p=$1 b v
	R_DEPS="" R_KIND=plain R_REPO=ubuntu R_VERSION=""
	case "$p" in
	nvidia-driver-[0-9][0-9][0-9] | nvidia-driver-[0-9][0-9][0-9]-open | \
		nvidia-driver-[0-9][0-9][0-9]-server | nvidia-driver-[0-9][0-9][0-9]-server-open)
		b=${p#nvidia-driver-}
		b=${b:0:3}
		v=$(gcsim_driver_full "$b") || return 1
		R_VERSION="$v-0ubuntu1" R_KIND="driver:$b:proprietary"
		case "$p" in *-open) R_KIND="driver:$b:open" ;; esac
		R_DEPS="nvidia-utils-$b nvidia-kernel-common-$b libnvidia-compute-$b dkms"
		# the CUDA repository carries every branch; Ubuntu's only the long-lived ones
		case "$b" in
		535 | 550 | 570 | 575 | 580) ;;
		*) R_REPO=cuda ;;
		esac
		;;
	nvidia-utils-[0-9][0-9][0-9] | nvidia-kernel-common-[0-9][0-9][0-9] | libnvidia-compute-[0-9][0-9][0-9] | \
		nvidia-utils-[0-9][0-9][0-9]-server | nvidia-compute-utils-[0-9][0-9][0-9])
		b=$(printf '%s' "$p" | grep -oE '[0-9]{3}')
		v=$(gcsim_driver_full "$b") || return 1
		R_VERSION="$v-0ubuntu1"
		;;
	cuda-drivers | cuda-drivers-[0-9][0-9][0-9] | nvidia-open | nvidia-open-[0-9][0-9][0-9])
		b=${p##*-}
		case "$b" in drivers | open) b=570 ;; esac
		v=$(gcsim_driver_full "$b") || return 1
		R_REPO=cuda R_VERSION="$v-1"
		case "$p" in
		nvidia-open*) R_KIND="driver:$b:open" R_DEPS="nvidia-kernel-open-$b" ;;
		*) R_KIND="driver:$b:proprietary" R_DEPS="nvidia-driver-$b" ;;
		esac
		;;
	nvidia-kernel-open-[0-9][0-9][0-9])
		R_REPO=cuda R_VERSION="$(gcsim_driver_full "${p##*-}")-1" || return 1
		;;
	cuda-toolkit | cuda-toolkit-[0-9][0-9]-[0-9] | cuda-[0-9][0-9]-[0-9] | cuda)
		v=12-8
		case "$p" in
		cuda-toolkit-*) v=${p#cuda-toolkit-} ;;
		cuda-[0-9]*) v=${p#cuda-} ;;
		esac
		case "$v" in
		11-8 | 12-[0-9] | 13-0) ;;
		*) return 1 ;;
		esac
		R_REPO=cuda R_VERSION="${v/-/.}.1-1" R_KIND="toolkit:${v/-/.}"
		R_DEPS="cuda-compiler-$v cuda-libraries-$v cuda-nvcc-$v cuda-cudart-$v"
		case "$p" in
		cuda-[0-9]* | cuda) R_DEPS="$R_DEPS cuda-toolkit-$v cuda-drivers" ;;
		esac
		;;
	cuda-compiler-* | cuda-libraries-* | cuda-nvcc-* | cuda-cudart-* | cuda-compat-*)
		R_REPO=cuda R_VERSION="${p##*-}.1-1"
		;;
	cudnn9-cuda-12 | libcudnn9-cuda-12 | libcudnn9-dev-cuda-12 | cudnn | cudnn9 | \
		libnccl2 | libnccl-dev | datacenter-gpu-manager | libnvidia-nscq-*)
		R_REPO=cuda R_VERSION=9.8.0.87-1
		case "$p" in
		cudnn9-cuda-12) R_DEPS="libcudnn9-cuda-12 libcudnn9-dev-cuda-12" ;;
		libnccl*) R_VERSION=2.26.2-1+cuda12.8 ;;
		esac
		;;
	nvidia-fabricmanager-[0-9][0-9][0-9] | fabricmanager-[0-9][0-9][0-9] | cuda-drivers-fabricmanager-[0-9][0-9][0-9])
		b=${p##*-}
		v=$(gcsim_driver_full "$b") || return 1
		R_VERSION="$v-1" R_KIND="fm:$b"
		case "$p" in cuda-drivers-* | fabricmanager-*) R_REPO=cuda ;; esac
		;;
	cuda-keyring)
		R_REPO=cuda R_VERSION=1.1-1 R_KIND=keyring
		;;
	nvidia-container-toolkit)
		R_REPO=nvidia-container R_VERSION=1.17.5-1 R_KIND=ctk
		R_DEPS="nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1"
		;;
	nvidia-container-toolkit-base | libnvidia-container-tools | libnvidia-container1)
		R_REPO=nvidia-container R_VERSION=1.17.5-1
		;;
	docker.io)
		R_VERSION="26.1.3-0ubuntu1~$GCSIM_OS_VERSION.1" R_KIND=docker R_DEPS="containerd runc"
		;;
	docker-ce)
		R_REPO=docker R_VERSION="5:28.0.4-1~ubuntu.$GCSIM_OS_VERSION~$GCSIM_CODENAME"
		R_KIND=docker R_DEPS="docker-ce-cli containerd.io"
		;;
	docker-ce-cli | containerd.io | docker-buildx-plugin | docker-compose-plugin)
		R_REPO=docker R_VERSION="5:28.0.4-1~ubuntu.$GCSIM_OS_VERSION~$GCSIM_CODENAME"
		;;
	ibverbs-utils | libibverbs-utils)
		R_VERSION=50.0-2build2 R_KIND=ibverbs R_DEPS="rdma-core"
		;;
	linux-headers-*)
		case "${p#linux-headers-}" in
		"$GCSIM_KERNEL" | generic | aws | virtual) ;;
		*) return 1 ;;
		esac
		R_VERSION="${GCSIM_KERNEL%-*}.1"
		;;
	build-essential | gcc | g++ | make | dkms | curl | wget | gnupg | gpg | ca-certificates | jq | \
		pciutils | git | python3 | python3-pip | unzip | software-properties-common | \
		apt-transport-https | lsb-release | ubuntu-drivers-common | htop | tmux | vim | \
		containerd | runc | kmod | docker-compose-v2 | nvtop | rsync | numactl | ipmitool | \
		linux-modules-extra-* | libc6-dev | pkg-config | cmake | infiniband-diags | rdma-core)
		R_VERSION=1.0-1ubuntu1
		;;
	*) return 1 ;;
	esac
	return 0
}

# What installing a package does beyond recording it.
gcsim_effect() {
	local kind=$1 b flavor v cuda
	case "$kind" in
	driver:*)
		b=$(echo "$kind" | cut -d: -f2)
		flavor=$(echo "$kind" | cut -d: -f3)
		v=$(gcsim_driver_full "$b")
		if gcsim_driver && [ "$DRV_BRANCH" != "$b" ]; then
			# another branch: apt replaces its packages
			awk -v b="$DRV_BRANCH" '$1 !~ ("-" b "(-|$)")' "$S/dpkg/status" >"$S/dpkg/status.new"
			mv "$S/dpkg/status.new" "$S/dpkg/status"
		fi
		echo "$b $v $flavor" >"$S/driver"
		[ "$GCSIM_QUIET" = 1 ] || {
			echo "Loading new nvidia-$v DKMS files..."
			echo "Building for $GCSIM_KERNEL"
			echo "Building initial module for $GCSIM_KERNEL"
			echo "Done."
		}
		for t in nvidia-smi nvidia-persistenced nvidia-debugdump nvidia-modprobe; do
			[ -x "$T/$t" ] && ln -sf "$T/$t" "/usr/local/bin/$t"
		done
		printf 'blacklist nouveau\noptions nouveau modeset=0\n' >/etc/modprobe.d/blacklist-nvidia-nouveau.conf
		gcsim_add_unit nvidia-persistenced
		# a loaded nouveau, or an older nvidia module, stays until the next boot
		if gcsim_module_loaded nouveau ||
			{ gcsim_module_loaded nvidia && [ "$(gcsim_module_version nvidia)" != "$v" ]; }; then
			echo "*** System restart required ***" >/run/reboot-required
			echo "nvidia-dkms-$b" >>/run/reboot-required.pkgs
		fi
		;;
	toolkit:*)
		cuda=${kind#toolkit:}
		mkdir -p "/usr/local/cuda-$cuda/bin" "/usr/local/cuda-$cuda/lib64" "/usr/local/cuda-$cuda/include"
		printf '#!/bin/bash\nexec %s/nvcc --gcsim-cuda %s "$@"\n' "$T" "$cuda" >"/usr/local/cuda-$cuda/bin/nvcc"
		chmod 755 "/usr/local/cuda-$cuda/bin/nvcc"
		printf '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "%s.1"\n   }\n}\n' "$cuda" \
			>"/usr/local/cuda-$cuda/version.json"
		ln -sfn "cuda-$cuda" /usr/local/cuda
		;;
	docker)
		ln -sf "$T/docker" /usr/local/bin/docker
		mkdir -p /etc/docker
		gcsim_add_unit docker
		gcsim_add_unit containerd
		touch "$S/services/docker.enabled" "$S/services/containerd.enabled"
		gcsim_service_start docker
		gcsim_service_start containerd
		;;
	ctk)
		for t in nvidia-ctk nvidia-container-cli nvidia-container-runtime; do
			ln -sf "$T/$t" "/usr/local/bin/$t"
		done
		;;
	fm:*)
		echo "${kind#fm:}" >"$S/fm-branch"
		gcsim_add_unit nvidia-fabricmanager
		;;
	keyring)
		gcsim_install_keyring
		;;
	ibverbs)
		# the verbs tools; on a node with RDMA devices NCCL now uses them
		ln -sf "$T/ibv_devinfo" /usr/local/bin/ibv_devinfo
		[ "${GCSIM_RDMA_DEVICES:-0}" = 0 ] || echo rdma >"$S/fabric"
		;;
	esac
}

gcsim_install_keyring() {
	local d
	d=$(gcsim_distro)
	printf 'simulated cuda archive keyring\n' >/usr/share/keyrings/cuda-archive-keyring.gpg
	echo "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://developer.download.nvidia.com/compute/cuda/repos/$d/x86_64/ /" \
		>"/etc/apt/sources.list.d/cuda-$d-x86_64.list"
}

# --- half-made installs -------------------------------------------------------------------
#
# As dpkg does, an install first unpacks every package, then configures each. A package
# unpacked but not configured yet is "unpacked" (dpkg-query: iU; its effect not applied), one
# whose unpacking stopped half way "half-installed" (iH; its files incomplete); both live in
# dpkg/pending ("name version state"), not in dpkg/status. A test makes the next apt-get
# install stop like a SIGKILL (exit 137) with a line "unpack PKG" or "configure PKG" in
# $S/apt-kill (removed when it fires): at PKG's unpacking (PKG half-installed, the ones
# before it unpacked) or at PKG's configuration (the ones before it configured, PKG and the
# rest unpacked).

gcsim_pending_state() { awk -v p="$1" '$1 == p { print $3 }' "$S/dpkg/pending" 2>/dev/null; }

gcsim_pending_set() { # NAME VERSION STATE; STATE "" removes NAME
	local tmp="$S/dpkg/pending.new"
	mkdir -p "$S/dpkg"
	touch "$S/dpkg/pending"
	awk -v p="$1" '$1 != p' "$S/dpkg/pending" >"$tmp"
	[ -z "$3" ] || printf '%s %s %s\n' "$1" "$2" "$3" >>"$tmp"
	mv "$tmp" "$S/dpkg/pending"
}

gcsim_killed() {
	rm -f "$S/apt-kill"
	echo "Killed" >&2
	exit 137
}

# Configures NAME VERSION: recorded as installed, its effect applied.
gcsim_configure() {
	[ "$GCSIM_QUIET" = 1 ] || echo "Setting up $1 ($2) ..."
	gcsim_pending_set "$1" "" ""
	gcsim_record "$1" "$2"
	gcsim_resolve "$1" || return 0
	[ "$R_KIND" = plain ] || gcsim_effect "$R_KIND"
}

# dpkg --configure -a: configures every unpacked package (half-installed ones need a
# reinstall, which apt-get does).
gcsim_configure_pending() {
	local name version state
	[ -s "$S/dpkg/pending" ] || return 0
	while read -r name version state; do
		[ "$state" = unpacked ] && gcsim_configure "$name" "$version"
	done < <(cat "$S/dpkg/pending")
	return 0
}

# dpkg --audit: what an interrupted dpkg left, in dpkg's words.
gcsim_audit() {
	local list
	list=$(awk '$3 == "unpacked" { print " " $1 "    simulated package" }' "$S/dpkg/pending" 2>/dev/null)
	if [ -n "$list" ]; then
		printf '%s\n' "The following packages have been unpacked but not yet configured." \
			"They must be configured using dpkg --configure or the configure" \
			"menu option in dselect for them to work:" "$list" ""
	fi
	list=$(awk '$3 == "half-installed" { print " " $1 "    simulated package" }' "$S/dpkg/pending" 2>/dev/null)
	if [ -n "$list" ]; then
		printf '%s\n' "The following packages are only half installed, due to problems" \
			"during installation.  The installation can probably be completed by retrying it;" \
			"the packages can be removed using dselect or dpkg --remove:" "$list" ""
	fi
	return 0
}

# apt-get install: resolves every name (and its dependencies), then installs. GCSIM_QUIET=1
# prints nothing (the boot hook preparing a GPU-ready image). Refuses while dpkg was
# interrupted (unpacked packages); reinstalls half-installed ones; GCSIM_REINSTALL=1
# (--reinstall) installs the named packages again even when installed.
gcsim_apt_install() {
	local p new=() missing=0 queue=("$@") seen=" " d named=" "
	if grep -q ' unpacked$' "$S/dpkg/pending" 2>/dev/null; then
		echo "E: dpkg was interrupted, you must manually run 'sudo dpkg --configure -a' to correct the problem." >&2
		return 100
	fi
	for p in "$@"; do named="$named${p%%=*} "; done
	[ ! -s "$S/dpkg/pending" ] || mapfile -t -O ${#queue[@]} queue < <(awk '{ print $1 }' "$S/dpkg/pending")
	while [ ${#queue[@]} -gt 0 ]; do
		p=${queue[0]}
		queue=("${queue[@]:1}")
		case "$seen" in *" $p "*) continue ;; esac
		seen="$seen$p "
		p=${p%%=*}
		if ! gcsim_resolve "$p" || ! gcsim_repo_ready "$R_REPO"; then
			echo "E: Unable to locate package $p" >&2
			missing=1
			continue
		fi
		if gcsim_installed "$p" && { [ "${GCSIM_REINSTALL:-0}" != 1 ] || [[ $named != *" $p "* ]]; }; then
			[ "$GCSIM_QUIET" = 1 ] || echo "$p is already the newest version ($(gcsim_pkg_version "$p"))."
		else
			new+=("$p=$R_VERSION")
		fi
		for d in $R_DEPS; do
			queue+=("$d")
		done
	done
	[ "$missing" = 0 ] || return 100
	if [ ${#new[@]} -eq 0 ]; then
		[ "$GCSIM_QUIET" = 1 ] || echo "0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded."
		return 0
	fi
	if [ "$GCSIM_QUIET" != 1 ]; then
		echo "The following NEW packages will be installed:"
		printf '%s\n' "${new[@]}" | sed 's/=.*//' | tr '\n' ' ' | fold -w 76 | sed 's/^/  /'
		echo
		echo "0 upgraded, ${#new[@]} newly installed, 0 to remove and 0 not upgraded."
		if [ "$GCSIM_YES" != 1 ]; then
			echo "Do you want to continue? [Y/n] Abort."
			return 1
		fi
	fi
	local item kill_mode="" kill_pkg=""
	if [ -s "$S/apt-kill" ]; then
		read -r kill_mode kill_pkg <"$S/apt-kill" || true
	fi
	for item in "${new[@]}"; do
		if [ "$kill_mode $kill_pkg" = "unpack ${item%%=*}" ]; then
			gcsim_pending_set "${item%%=*}" "${item#*=}" half-installed
			gcsim_killed
		fi
		[ "$GCSIM_QUIET" = 1 ] || echo "Unpacking ${item%%=*} (${item#*=}) ..."
		gcsim_pending_set "${item%%=*}" "${item#*=}" unpacked
	done
	for item in "${new[@]}"; do
		[ "$kill_mode $kill_pkg" != "configure ${item%%=*}" ] || gcsim_killed
		gcsim_configure "${item%%=*}" "${item#*=}"
	done
	return 0
}
