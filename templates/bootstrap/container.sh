#!/usr/bin/env bash
# container.sh: Docker and the NVIDIA Container Toolkit, so that `docker run --gpus all`
# works: Docker (unless one is installed already), NVIDIA's container toolkit repository and
# package, `nvidia-ctk runtime configure --runtime=docker`, a docker restart, and the SSH user
# in the docker group. Idempotent: the runtime is configured only when daemon.json lacks it
# (the previous daemon.json is kept as daemon.json.gpucluster-backup), docker is restarted
# only when the running daemon lacks it.
#
# Where Docker comes from (DOCKER_SOURCE):
#   distro (default)  the distribution's own package: docker.io on Ubuntu and Debian, docker
#                     on Amazon Linux 2023; no third repository to trust and keep working.
#                     Rocky Linux 9 has none (it ships podman), so Docker's repository.
#   docker            Docker's repository (docker-ce, the newest Docker), as docs.docker.com
#                     describes it.
#
# Environment:
#   CONTAINER=docker      docker, or "none" to skip this step
#   DOCKER_SOURCE=distro  distro | docker (above)
#   DOCKER_USER=          the user to add to the docker group (default: the user running the
#                         step; SUDO_USER when that is root; nobody when both are root)
#
# Exit status: 0 done (or skipped); 1 failure.
set -euo pipefail
GC_STEP=container
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi

CONTAINER=${CONTAINER:-docker}
DOCKER_SOURCE=${DOCKER_SOURCE:-distro}
case "$CONTAINER" in
none)
	info "skipped (CONTAINER=none)"
	exit 0
	;;
docker) ;;
*) die "CONTAINER='$CONTAINER': expected docker or none" ;;
esac
case "$DOCKER_SOURCE" in distro | docker) ;; *) die "DOCKER_SOURCE='$DOCKER_SOURCE': expected distro or docker" ;; esac
user=${DOCKER_USER:-$(id -un)}
[ "$user" != root ] || user=${SUDO_USER:-root}

os_detect
os_require_supported
need_root
pkg_repair docker "docker.io docker-ce-cli docker moby-engine" \
	nvidia-ctk "nvidia-container-toolkit-base nvidia-container-toolkit"

docker_repo() {
	local tmp url
	case "$PKG" in
	apt)
		url=$(mirror docker || echo https://download.docker.com)/linux/$OS_ID
		grep -qF " $url " /etc/apt/sources.list.d/docker.list 2>/dev/null && return 0
		tmp=$(mktemp "${TMPDIR:-/tmp}/gc-docker.XXXXXX")
		fetch "$url/gpg" "$tmp" || die "cannot download Docker's key from '$url/gpg'"
		put_file /etc/apt/keyrings/docker.asc 0644 <"$tmp"
		rm -f "$tmp"
		printf 'deb [arch=%s signed-by=/etc/apt/keyrings/docker.asc] %s %s stable\n' \
			"$(dpkg --print-architecture)" "$url" "$OS_CODENAME" | put_file /etc/apt/sources.list.d/docker.list 0644
		;;
	dnf)
		[ -s /etc/yum.repos.d/docker-ce.repo ] && return 0
		tmp=$(mktemp "${TMPDIR:-/tmp}/gc-docker.XXXXXX")
		url=$(mirror docker || echo https://download.docker.com)
		fetch "$url/linux/rhel/docker-ce.repo" "$tmp" || die "cannot download Docker's repository file"
		# the file names Docker's host; a mirror carries the same tree
		[ "$url" = https://download.docker.com ] || sed -i "s#https://download.docker.com#$url#g" "$tmp"
		put_file /etc/yum.repos.d/docker-ce.repo 0644 <"$tmp"
		rm -f "$tmp"
		;;
	esac
	GC_PKG_UPDATED=0
}

install_docker() {
	local pkgs
	# a docker mirror (bootstrap.mirrors) is a choice of Docker's repository
	if [ "$DOCKER_SOURCE" = docker ] || mirror docker >/dev/null ||
		[ "$OS_ID" = rocky ] || [ "$OS_ID" = rhel ] || [ "$OS_ID" = almalinux ]; then
		docker_repo
		pkgs=(docker-ce docker-ce-cli containerd.io docker-buildx-plugin docker-compose-plugin)
	elif [ "$PKG" = apt ]; then
		pkgs=(docker.io)
	else
		pkgs=(docker)
	fi
	pkg_install "${pkgs[@]}" || die "cannot install Docker (${pkgs[*]})"
	info "installed Docker (${pkgs[0]})"
}

ctk_repo() {
	local tmp up=https://nvidia.github.io/libnvidia-container base list
	base=$(mirror nvidia_container || echo "$up")
	list=$base/stable
	case "$PKG" in
	apt)
		grep -qF "$base/" /etc/apt/sources.list.d/nvidia-container-toolkit.list 2>/dev/null &&
			[ -s /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg ] && return 0
		info "adding NVIDIA's container toolkit repository"
		tmp=$(mktemp -d "${TMPDIR:-/tmp}/gc-ctk.XXXXXX")
		fetch "$base/gpgkey" "$tmp/gpgkey" ||
			die "cannot download the NVIDIA container toolkit's key"
		gpg --batch --yes --dearmor -o "$tmp/keyring.gpg" <"$tmp/gpgkey" 2>"$tmp/gpg.err" ||
			die "cannot read the NVIDIA container toolkit's key: $(head -n 1 "$tmp/gpg.err")"
		put_file /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg 0644 <"$tmp/keyring.gpg"
		fetch "$list/deb/nvidia-container-toolkit.list" "$tmp/list" ||
			die "cannot download the NVIDIA container toolkit's repository list"
		# the list names NVIDIA's host; a mirror carries the same tree
		sed -e "s#$up/#$base/#g" \
			-e 's#deb https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://#' "$tmp/list" |
			put_file /etc/apt/sources.list.d/nvidia-container-toolkit.list 0644
		rm -rf "$tmp"
		;;
	dnf)
		[ -s /etc/yum.repos.d/nvidia-container-toolkit.repo ] && return 0
		info "adding NVIDIA's container toolkit repository"
		tmp=$(mktemp "${TMPDIR:-/tmp}/gc-ctk.XXXXXX")
		fetch "$list/rpm/nvidia-container-toolkit.repo" "$tmp" ||
			die "cannot download the NVIDIA container toolkit's repository file"
		[ "$base" = "$up" ] || sed -i "s#$up/#$base/#g" "$tmp"
		put_file /etc/yum.repos.d/nvidia-container-toolkit.repo 0644 <"$tmp"
		rm -f "$tmp"
		;;
	esac
	GC_PKG_UPDATED=0
}

if pkg_installed docker.io || pkg_installed docker-ce || pkg_installed docker ||
	pkg_installed moby-engine; then
	info "Docker already installed"
else
	install_docker
fi
if ! systemctl is-enabled --quiet docker 2>/dev/null; then
	gc_run as_root systemctl enable docker || die "cannot enable the docker service"
fi
if ! systemctl is-active --quiet docker 2>/dev/null; then
	gc_run as_root systemctl start docker || die "the docker service does not start (journalctl -u docker)"
fi

if pkg_installed nvidia-container-toolkit; then
	info "NVIDIA Container Toolkit already installed"
else
	ctk_repo
	pkg_install nvidia-container-toolkit || die "cannot install nvidia-container-toolkit"
	info "installed the NVIDIA Container Toolkit"
fi

daemon_json=/etc/docker/daemon.json
if ! as_root grep -qs '"nvidia"' "$daemon_json" </dev/null; then
	if as_root test -s "$daemon_json" </dev/null; then
		gc_run as_root cp -p "$daemon_json" "$daemon_json.gpucluster-backup" || die "cannot back up '$daemon_json'"
		info "kept the previous $daemon_json as $daemon_json.gpucluster-backup"
	fi
	gc_run as_root nvidia-ctk runtime configure --runtime=docker || die "nvidia-ctk cannot configure docker"
	info "configured the nvidia runtime in $daemon_json"
fi
# a daemon started before the configuration does not know the runtime until it restarts
gc_capture as_root docker info || die "docker does not answer: $(printf '%s' "$GC_OUT" | sed -n '1,2p' | tr '\n' ' ')"
if ! printf '%s\n' "$GC_OUT" | grep -q 'Runtimes:.*nvidia'; then
	info "restarting docker"
	gc_run as_root systemctl restart docker || die "docker does not restart (journalctl -u docker)"
	gc_capture as_root docker info || die "docker does not answer after a restart"
	printf '%s\n' "$GC_OUT" | grep -q 'Runtimes:.*nvidia' ||
		die "docker does not list the nvidia runtime after a restart (check $daemon_json)"
fi

if [ "$user" != root ]; then
	if ! getent group docker >/dev/null; then
		gc_run as_root groupadd --system docker || die "cannot create the docker group"
	fi
	if id -nG "$user" 2>/dev/null | tr ' ' '\n' | grep -qx docker; then
		info "'$user' is in the docker group"
	else
		gc_run as_root usermod -aG docker "$user" || die "cannot add '$user' to the docker group"
		info "added '$user' to the docker group (effective from its next login)"
	fi
fi
info "docker runs containers with --gpus"
