# shellcheck shell=bash
# net.sh: the node has no network; a few well-known NVIDIA URLs that the documented install
# flows fetch are answered with simulated files. Sourced by curl and wget, never run.

# Prints the simulated body for a URL; fails when the URL is not one of the known ones.
# gcsim_unmirror URL: URL on the upstream host when it is on a package mirror the emulator
# knows (the ones docs/bootstrap.md lists for bootstrap.mirrors: a mirror carries the
# upstream tree under its own base), else URL as it is.
gcsim_unmirror() {
	local url=$1 m
	for m in \
		"https://mirrors.aliyun.com/nvidia-cuda https://developer.download.nvidia.com/compute/cuda/repos" \
		"https://mirrors.aliyun.com/docker-ce https://download.docker.com" \
		"https://mirrors.cloud.tencent.com/docker-ce https://download.docker.com" \
		"https://mirrors.tuna.tsinghua.edu.cn/docker-ce https://download.docker.com" \
		"https://mirrors.ustc.edu.cn/docker-ce https://download.docker.com" \
		"https://mirrors.ustc.edu.cn/libnvidia-container https://nvidia.github.io/libnvidia-container"; do
		case "$url" in "${m%% *}"/*)
			printf '%s\n' "${m#* }${url#"${m%% *}"}"
			return 0
			;;
		esac
	done
	printf '%s\n' "$url"
}

gcsim_fetch() {
	local url
	url=$(gcsim_unmirror "$1")
	case "$url" in
	https://developer.download.nvidia.com/compute/cuda/repos/ubuntu[0-9][0-9][0-9][0-9]/x86_64/cuda-keyring_1.1-1_all.deb)
		local d=${url#https://developer.download.nvidia.com/compute/cuda/repos/}
		printf 'GCSIM-DEB cuda-keyring 1.1-1 %s\nsimulated Debian package (gpucluster-sim)\n' "${d%%/*}"
		;;
	https://developer.download.nvidia.com/compute/cuda/repos/ubuntu[0-9][0-9][0-9][0-9]/x86_64/cuda-ubuntu[0-9][0-9][0-9][0-9].pin)
		printf 'Package: nsight-compute\nPin: origin *ubuntu.com*\nPin-Priority: -1\n\nPackage: *\nPin: release l=NVIDIA CUDA\nPin-Priority: 600\n'
		;;
	https://developer.download.nvidia.com/compute/cuda/repos/ubuntu[0-9][0-9][0-9][0-9]/x86_64/*.pub | \
		https://nvidia.github.io/libnvidia-container/gpgkey | https://download.docker.com/linux/ubuntu/gpg)
		printf -- '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nsimulated by gpucluster-sim\n-----END PGP PUBLIC KEY BLOCK-----\n'
		;;
	https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list | \
		https://nvidia.github.io/libnvidia-container/ubuntu[0-9][0-9].[0-9][0-9]/libnvidia-container.list | \
		https://nvidia.github.io/libnvidia-container/ubuntu[0-9][0-9].[0-9][0-9]/nvidia-container-toolkit.list)
		# shellcheck disable=SC2016
		printf 'deb https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /\n#deb https://nvidia.github.io/libnvidia-container/experimental/deb/$(ARCH) /\n'
		;;
	# the bucket mount tools' packages (docs/internals/mounts.md; lib/mount.sh)
	https://s3.amazonaws.com/mountpoint-s3-release/latest/x86_64/mount-s3.deb)
		printf 'GCSIM-DEB mount-s3 1.21.0 any\nsimulated Debian package (gpucluster-sim)\n'
		;;
	https://gosspublic.alicdn.com/ossfs/ossfs_1.91.5_ubuntu[0-9][0-9].[0-9][0-9]_amd64.deb)
		printf 'GCSIM-DEB ossfs 1.91.5 any\nsimulated Debian package (gpucluster-sim)\n'
		;;
	https://github.com/tencentyun/cosfs/releases/download/v1.0.24/cosfs_1.0.24-ubuntu[0-9][0-9].[0-9][0-9]_amd64.deb)
		printf 'GCSIM-DEB cosfs 1.0.24 any\nsimulated Debian package (gpucluster-sim)\n'
		;;
	http://mirrors.cloud.aliyuncs.com/erdma/env_setup.sh)
		# Alibaba's eRDMA install script, on its mirror inside Alibaba's network
		# (lib/rdma/env_setup.sh)
		# shellcheck source=/dev/null
		(. /var/lib/gpucluster-sim/node.env && [ "$GCSIM_CLOUD" = alibaba ]) || return 1
		cat /usr/local/lib/gpucluster-sim/rdma/env_setup.sh
		;;
	*) return 1 ;;
	esac
}

gcsim_url_host() {
	local h=${1#*://}
	h=${h%%/*}
	echo "${h%%:*}"
}

# gcsim_runner_tar: the GitHub Actions runner's release tarball as the emulator has it (the
# simulated config.sh and run.sh of lib/actions-runner), gzipped tar on standard output.
gcsim_runner_tar() {
	local d rc
	d=$(mktemp -d) || return 1
	install -m 0755 /usr/local/lib/gpucluster-sim/actions-runner/config "$d/config.sh" &&
		install -m 0755 /usr/local/lib/gpucluster-sim/actions-runner/run "$d/run.sh" &&
		tar czf - -C "$d" config.sh run.sh
	rc=$?
	rm -rf "$d"
	return $rc
}

# gcsim_efa_tar: the EFA installer's tarball (aws-efa-installer/efa_installer.sh, the
# simulated one of lib/rdma/efa_installer), gzipped tar on standard output.
gcsim_efa_tar() {
	local d rc
	d=$(mktemp -d) || return 1
	mkdir "$d/aws-efa-installer" &&
		install -m 0755 /usr/local/lib/gpucluster-sim/rdma/efa_installer \
			"$d/aws-efa-installer/efa_installer.sh" &&
		tar czf - -C "$d" aws-efa-installer
	rc=$?
	rm -rf "$d"
	return $rc
}
