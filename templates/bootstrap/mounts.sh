#!/usr/bin/env bash
# mounts.sh: mounts the spec's buckets (mounts[]) on the node with the node's own instance
# role (docs/spec.md "mounts", docs/internals/mounts.md). Checks that the metadata service
# names a role, installs the cloud's mount tool from its .deb when missing, and, for a tool
# that reads its credentials from a file, installs a refresher
# (/usr/local/lib/gpucluster/mount-creds, run by gpucluster-mount-creds.timer every 5
# minutes) that writes the file from the role's credentials. Then mounts each bucket at its
# path, read-only or read-write. Idempotent: a path already mounted with the same bucket
# and mode is left alone, one mounted otherwise is unmounted first. Runs again after every
# reboot (FUSE mounts do not survive one).
#
# Environment (from the spec and the cloud's facts, core/steps.c):
#   MOUNTS="BUCKET:PATH:ro|rw ..."      the buckets (empty: nothing to do)
#   MOUNT_TOOL="TOOL PACKAGE REGION ROLE-URL TOKEN-URL TOKEN-HEADER"   "-": none
#   MOUNT_COMMAND                       three lines: the command line ({bucket}, {path},
#                                       {region}, {role}, {creds}, {mode}), the options of
#                                       ro, those of rw
#   MOUNT_CREDS                         the credentials file's lines ({Field}, {Field@gmt});
#                                       empty: the tool asks the metadata service itself
#
# What a failed mount leaves: /var/lib/gpucluster/mounts/BUCKET.err (the tool's last line),
# which the smoke step's mount check shows until a mount succeeds.
#
# Exit status: 0 every bucket mounted; 1 otherwise, one line per failed mount naming the
# bucket and the path.
set -euo pipefail
GC_STEP=mounts
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi

MOUNTS=${MOUNTS:-}
MOUNT_TOOL=${MOUNT_TOOL:-}
MOUNT_COMMAND=${MOUNT_COMMAND:-}
MOUNT_CREDS=${MOUNT_CREDS:-}
if [ -z "$MOUNTS" ]; then
	info "skipped (no mounts)"
	exit 0
fi
read -r tool package region role_url token_url token_header <<<"$MOUNT_TOOL" || true
[ -n "${token_header:-}" ] || die "MOUNT_TOOL: expected 'TOOL PACKAGE REGION ROLE-URL TOKEN-URL TOKEN-HEADER'"
{
	IFS= read -r cmd_line || true
	IFS= read -r ro_opts || true
	IFS= read -r rw_opts || true
} <<<"$MOUNT_COMMAND"
[ -n "${cmd_line:-}" ] || die "MOUNT_COMMAND is empty"
GC_MOUNT_STATE=$GC_STATE_DIR/mounts
GC_MOUNT_CREDS_FILE=/etc/gpucluster/mount-creds
need_root

# metadata_get URL: the metadata service's answer (with an IMDSv2 token where the cloud
# asks for one).
metadata_get() {
	local hdr=() tok
	if [ "$token_url" != - ]; then
		tok=$(curl -sf -m 5 -X PUT -H "$token_header-ttl-seconds: 300" "$token_url") || return 1
		hdr=(-H "$token_header: $tok")
	fi
	curl -sf -m 5 "${hdr[@]}" "$1"
}

# the role: the metadata service names it, or the node has none
role=$(metadata_get "$role_url" </dev/null | sed -n '1p') || role=""
[ -n "$role" ] || die "the node has no instance role ($role_url answers none): give its node group a role (node_groups[].role)"

# the tool
if ! have "$tool"; then
	os_detect
	[ "$PKG" = apt ] || die "cannot install $tool on '$OS_PRETTY': gpucluster installs it from its .deb (Ubuntu, Debian)"
	url=${package//\{os_version\}/$OS_VERSION}
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/gc-mount.XXXXXX")
	fetch "$url" "$tmp/$tool.deb" || die "cannot download $tool from '$url'"
	chmod 0755 "$tmp"
	chmod 0644 "$tmp/$tool.deb"
	pkg_update
	info "installing $tool ($url)"
	apt_get install "$tmp/$tool.deb" || die "cannot install $tool from '$url'"
	rm -rf "$tmp"
	have "$tool" || die "$tool is installed but not on PATH"
fi

# the credentials file and its refresher, for a tool that reads them from a file
if [ -n "$MOUNT_CREDS" ]; then
	put_file /etc/gpucluster/mount-creds.env 0600 <<EOF
ROLE_URL=$(printf '%q' "$role_url")
TOKEN_URL=$(printf '%q' "$token_url")
TOKEN_HEADER=$(printf '%q' "$token_header")
TEMPLATE=$(printf '%q' "$MOUNT_CREDS")
FILE=$GC_MOUNT_CREDS_FILE
EOF
	changed=$GC_CHANGED
	put_file /usr/local/lib/gpucluster/mount-creds 0755 <<'EOF'
#!/usr/bin/env bash
# gpucluster's credentials refresher for the bucket mounts (installed by the bootstrap's
# mounts step): writes FILE from the instance role's credentials on the metadata service.
set -euo pipefail
# shellcheck source=/dev/null
. /etc/gpucluster/mount-creds.env
hdr=()
if [ "$TOKEN_URL" != - ]; then
	tok=$(curl -sf -m 5 -X PUT -H "$TOKEN_HEADER-ttl-seconds: 300" "$TOKEN_URL")
	hdr=(-H "$TOKEN_HEADER: $tok")
fi
role=$(curl -sf -m 5 "${hdr[@]}" "$ROLE_URL" | sed -n '1p')
[ -n "$role" ] || { echo "mount-creds: the node has no instance role" >&2; exit 1; }
body=$(curl -sf -m 5 "${hdr[@]}" "$ROLE_URL$role") ||
	{ echo "mount-creds: no credentials for role '$role'" >&2; exit 1; }
out=$TEMPLATE
re='\{([A-Za-z]+)(@gmt)?\}'
while [[ $out =~ $re ]]; do
	v=$(printf '%s' "$body" | tr -d '\n' |
		sed -n "s/.*\"${BASH_REMATCH[1]}\" *: *\"\{0,1\}\([^\",}]*\).*/\1/p")
	[ -n "$v" ] || { echo "mount-creds: the credentials have no ${BASH_REMATCH[1]}" >&2; exit 1; }
	if [ -n "${BASH_REMATCH[2]}" ]; then
		v=$(date -u -d "$v" +%Y-%m-%dT%H:%M:%S)
	fi
	out=${out//"${BASH_REMATCH[0]}"/$v}
done
umask 077
printf '%s' "$out" >"$FILE.new"
mv -f "$FILE.new" "$FILE"
EOF
	changed=$((changed | GC_CHANGED))
	put_file /etc/systemd/system/gpucluster-mount-creds.service 0644 <<'EOF'
[Unit]
Description=gpucluster bucket mounts: credentials from the instance role
After=network-online.target

[Service]
Type=oneshot
ExecStart=/usr/local/lib/gpucluster/mount-creds
EOF
	changed=$((changed | GC_CHANGED))
	put_file /etc/systemd/system/gpucluster-mount-creds.timer 0644 <<'EOF'
[Unit]
Description=gpucluster bucket mounts: refresh the credentials every 5 minutes

[Timer]
OnBootSec=30s
OnUnitActiveSec=5min

[Install]
WantedBy=timers.target
EOF
	changed=$((changed | GC_CHANGED))
	gc_run as_root /usr/local/lib/gpucluster/mount-creds ||
		die "cannot write the credentials file of role '$role' ($GC_MOUNT_CREDS_FILE)"
	as_root systemctl daemon-reload </dev/null
	as_root systemctl enable --now gpucluster-mount-creds.timer </dev/null >/dev/null 2>&1 ||
		die "cannot start gpucluster-mount-creds.timer"
	[ "$changed" = 0 ] || info "the credentials file of role '$role' is refreshed every 5 minutes"
fi

# mount_one BUCKET PATH MODE: mounted, or the reason in GC_OUT
mount_one() {
	local bucket=$1 path=$2 mode=$3 line argv
	line=$cmd_line
	line=${line//\{mode\}/$([ "$mode" = rw ] && echo "$rw_opts" || echo "$ro_opts")}
	line=${line//\{bucket\}/$bucket}
	line=${line//\{path\}/$path}
	line=${line//\{region\}/$region}
	line=${line//\{role\}/$role}
	line=${line//\{creds\}/$GC_MOUNT_CREDS_FILE}
	read -ra argv <<<"$line"
	as_root mkdir -p "$path" </dev/null || {
		GC_OUT="cannot create the directory"
		return 1
	}
	gc_capture as_root "${argv[@]}"
}

as_root mkdir -p "$GC_MOUNT_STATE" </dev/null
failed=0
for m in $MOUNTS; do
	bucket=${m%%:*} rest=${m#*:}
	path=${rest%:*} mode=${rest##*:}
	key=$GC_MOUNT_STATE/$(printf '%s' "$path" | tr / _)
	if mountpoint -q "$path" </dev/null 2>/dev/null; then
		if [ "$(as_root cat "$key" 2>/dev/null </dev/null)" = "$bucket $mode" ]; then
			info "bucket '$bucket' is mounted at $path ($mode)"
			continue
		fi
		info "unmounting $path (it now mounts '$bucket' $mode)"
		gc_run as_root umount "$path" || die "cannot unmount '$path' to mount bucket '$bucket' there"
	fi
	if mount_one "$bucket" "$path" "$mode"; then
		printf '%s %s\n' "$bucket" "$mode" | as_root tee "$key" >/dev/null
		as_root rm -f "$GC_MOUNT_STATE/$bucket.err" </dev/null
		info "mounted bucket '$bucket' at $path ($mode, $tool)"
		continue
	fi
	reason=$(printf '%s\n' "$GC_OUT" | sed '/^[[:space:]]*$/d' | tail -n 1)
	printf '%s\n' "${reason:-$tool failed}" | as_root tee "$GC_MOUNT_STATE/$bucket.err" >/dev/null
	as_root rm -f "$key" </dev/null
	printf '%s: error: cannot mount bucket '\''%s'\'' at '\''%s'\'' with %s: %s\n' \
		"$GC_STEP" "$bucket" "$path" "$tool" "${reason:-$tool failed}" >&2
	failed=1
done
exit "$failed"
