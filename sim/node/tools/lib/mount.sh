# shellcheck shell=bash
# mount.sh: the bucket mount tools of a gpucluster-sim node (tools/mount-s3, tools/ossfs,
# tools/cosfs, linked into /usr/local/bin when their simulated .deb is installed; see
# docs/sim.md, "SSH nodes"). Sourced by them, never run.
#
# A "mount" is the mount point left as a plain directory holding .gcsim-bucket (the
# bucket's name), read-only (0555) with ro, and a line "PATH BUCKET MODE TOOL" in
# $S/mounts, which mountpoint and umount read and a reboot clears. The tool fails, as the
# real one would, when: not root (FUSE); the mount point is missing or already mounted;
# the node has the `mount` fault; the credentials do not come from the node's role
# (mount-s3: the node has a role on its metadata service; ossfs: -oram_role is the
# metadata URL of the node's role; cosfs: -ocam_role=sts with a -opasswd_file holding the
# role's current temporary key); the bucket does not exist (its name starts with no-such-).
# shellcheck source=gcsim.sh
. /usr/local/lib/gpucluster-sim/gcsim.sh
# shellcheck source=net.sh
. /usr/local/lib/gpucluster-sim/net.sh
# shellcheck source=metadata.sh
. /usr/local/lib/gpucluster-sim/metadata.sh

# gcsim_mount TOOL ARGS...
gcsim_mount() {
	local tool=$1 bucket="" dir="" mode=rw o opt opts=() ram_role="" cam_role="" passwd=""
	shift
	while [ $# -gt 0 ]; do
		case "$1" in
		--version | -V) echo "$tool 0.0 (gpucluster-sim)"; return 0 ;;
		--read-only) mode=ro ;;
		--region | --prefix | --cache | --endpoint-url | --uid | --gid | --log-directory) shift ;;
		--*) ;;
		-o) opts+=("$2"); shift ;;
		-o*) opts+=("${1#-o}") ;;
		-f | -d | -s) ;;
		*)
			if [ -z "$bucket" ]; then
				bucket=$1
			elif [ -z "$dir" ]; then
				dir=$1
			else
				echo "$tool: too many arguments: '$1'" >&2
				return 1
			fi
			;;
		esac
		shift
	done
	for o in "${opts[@]}"; do
		IFS=, read -ra o <<<"$o"
		for opt in "${o[@]}"; do
			case "$opt" in
			ro) mode=ro ;;
			rw) mode=rw ;;
			ram_role=*) ram_role=${opt#ram_role=} ;;
			cam_role=*) cam_role=${opt#cam_role=} ;;
			passwd_file=*) passwd=${opt#passwd_file=} ;;
			esac
		done
	done
	if [ -z "$bucket" ] || [ -z "$dir" ]; then
		echo "$tool: missing BUCKET or MOUNTPOINT argument" >&2
		return 1
	fi
	if ! gcsim_is_root; then
		echo "fuse: failed to open /dev/fuse: Permission denied" >&2
		return 1
	fi
	if [ ! -d "$dir" ]; then
		echo "$tool: bad mount point '$dir': No such file or directory" >&2
		return 1
	fi
	dir=$(cd "$dir" && pwd -P)
	if ! gcsim_fault mount && grep -q "^$dir " "$S/mounts" 2>/dev/null; then
		echo "$tool: mount point '$dir' is already mounted" >&2
		return 1
	fi
	if gcsim_fault mount; then
		rm -f "$S/mounts"
		echo "fuse: device not found, try 'modprobe fuse' first" >&2
		return 1
	fi
	gcsim_mount_creds "$tool" "$ram_role" "$cam_role" "$passwd" || return 1
	case "$bucket" in no-such-*)
		case "$tool" in
		mount-s3) echo "Error: Failed to create S3 client: initial ListObjectsV2 failed for bucket $bucket: NoSuchBucket: The specified bucket does not exist" >&2 ;;
		*) echo "$tool: unable to access bucket '$bucket': NoSuchBucket: The specified bucket does not exist" >&2 ;;
		esac
		return 1
		;;
	esac
	printf '%s\n' "$bucket" >"$dir/.gcsim-bucket"
	if [ "$mode" = ro ]; then chmod 0555 "$dir"; else chmod 0755 "$dir"; fi
	printf '%s %s %s %s\n' "$dir" "$bucket" "$mode" "$tool" >>"$S/mounts"
}

# gcsim_mount_creds TOOL RAM-ROLE CAM-ROLE PASSWD-FILE: the credentials come from the
# node's role, as the tool takes them; else its error.
gcsim_mount_creds() {
	local role want got exp
	role=$(gcsim_role)
	case "$1" in
	mount-s3)
		if [ -z "$role" ]; then
			echo "Error: Failed to create S3 client: no credentials: the instance profile has no role (IMDS security-credentials: 404)" >&2
			return 1
		fi
		;;
	ossfs)
		want=http://100.100.100.200/latest/meta-data/ram/security-credentials/$role
		if [ -z "$2" ] || [ -z "$role" ] || [ "$2" != "$want" ]; then
			echo "ossfs: cannot get the credentials of ram_role '${2:-}' from the metadata service" >&2
			return 1
		fi
		;;
	cosfs)
		if [ "$3" != sts ] || [ -z "$4" ] || [ ! -r "$4" ]; then
			echo "cosfs: no temporary key: -ocam_role=sts and a readable -opasswd_file are needed" >&2
			return 1
		fi
		want=AKID$(gcsim_role_key id)
		got=$(sed -n 's/^COSAccessKeyId=//p' "$4")
		exp=$(sed -n 's/^COSAccessTokenExpire=//p' "$4")
		if [ -z "$role" ] || [ "$got" != "$want" ] ||
			! grep -qx "COSAccessToken=$(gcsim_role_key token)" "$4"; then
			echo "cosfs: the temporary key in $4 is not the instance role's (AccessDenied)" >&2
			return 1
		fi
		if [ -z "$exp" ] || [ "$(date -u -d "$exp" +%s 2>/dev/null || echo 0)" -le "$(date +%s)" ]; then
			echo "cosfs: the temporary key in $4 has expired (COSAccessTokenExpire=$exp)" >&2
			return 1
		fi
		;;
	esac
}
