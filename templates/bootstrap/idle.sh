#!/usr/bin/env bash
# idle.sh: the idle watcher, on clusters with lifecycle.idle (docs/bootstrap.md,
# docs/internals/idle.md). Installs /usr/local/lib/gpucluster/idle-watch and the unit
# gpucluster-idle.service, which every POLL_S seconds decides whether the node is busy: a
# GPU over 5% (nvidia-smi utilization.gpu), a logged-in SSH session (who), a gpucluster job
# running (a detached job in ~/.gpucluster/jobs without its exit, or a run/exec command
# older than 10 s in ~/.gpucluster/bootstrap). A node idle for IDLE_S powers itself off
# (sudo -n shutdown -h now): the cloud terminates or stops it, as its launch said. Nothing
# runs on the user's machine. Idempotent: files are rewritten only when they change.
#
# Environment:
#   IDLE_S=S        the idle time in seconds (lifecycle.idle)
#   POLL_S=S        how often to look (default 60)
#   HOOK_USER=USER  whose home holds the jobs and the state (default: the user running it)
#   UNDO=1          remove the watcher instead (the spec no longer sets lifecycle.idle; the
#                   runner runs it as idle-undo only where this step ran)
#
# ~HOOK_USER/.gpucluster/idle/state (what status reads; key=value lines): since (when the
# node was last busy, epoch seconds), idle_s, checked_at, busy (why, or empty), and
# stopping_at once the node powers itself off. /etc/gpucluster/idle.env is read at every
# poll, so rewriting IDLE_S or POLL_S there takes effect at once (the e2e test does).
#
# Exit status: 0 done; 1 failure.
set -euo pipefail
GC_STEP=idle
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi

IDLE_S=${IDLE_S:-}
POLL_S=${POLL_S:-60}
HOOK_USER=${HOOK_USER:-$(id -un)}
[ "$HOOK_USER" != root ] || HOOK_USER=${SUDO_USER:-root}
if [ "${UNDO:-}" = 1 ]; then
	need_root
	remove_watcher gpucluster-idle /usr/local/lib/gpucluster/idle-watch /etc/gpucluster/idle.env
	home=$(getent passwd "$HOOK_USER" 2>/dev/null | cut -d: -f6 || true)
	# the state status reads: no idle stop to show any more
	[ -z "$home" ] || as_root rm -f "$home/.gpucluster/idle/state" </dev/null || true
	info "removed (lifecycle.idle no longer set)"
	exit 0
fi
case "$IDLE_S" in '' | *[!0-9]*) die "IDLE_S='$IDLE_S': expected seconds" ;; esac
case "$POLL_S" in '' | *[!0-9]* | 0) die "POLL_S='$POLL_S': expected seconds" ;; esac
home=$(getent passwd "$HOOK_USER" 2>/dev/null | cut -d: -f6 || true)
[ -n "$home" ] || home=$HOME
need_root

put_file /etc/gpucluster/idle.env 0644 <<EOF
IDLE_S=$IDLE_S
POLL_S=$POLL_S
HOME_DIR=$(printf '%q' "$home")
EOF
changed=$GC_CHANGED

put_file /usr/local/lib/gpucluster/idle-watch 0755 <<'EOF'
#!/usr/bin/env bash
# gpucluster's idle watcher (installed by the bootstrap's idle step; see its header).
set -u
# shellcheck source=/dev/null
. /etc/gpucluster/idle.env
dir=$HOME_DIR/.gpucluster/idle
mkdir -p "$dir"
boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
# why the node is busy now, or nothing
busy() {
	local u j d
	u=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>/dev/null |
		awk '$1 + 0 > 5 { print "gpu " $1 "%"; exit }')
	[ -z "$u" ] || { echo "$u"; return; }
	[ -z "$(who 2>/dev/null)" ] || { echo "ssh session"; return; }
	for j in "$HOME_DIR"/.gpucluster/jobs/*/; do
		[ -d "$j" ] && [ ! -f "$j/exit" ] || continue
		[ "$(cat "$j/boot_id" 2>/dev/null)" = "$boot" ] || continue
		if [ -f "$j/unit" ]; then
			systemctl is-active --quiet "$(cat "$j/unit")" || continue
		else
			kill -0 "$(cat "$j/pid" 2>/dev/null)" 2>/dev/null || continue
		fi
		echo "job $(basename "$j")"
		return
	done
	d=$(find "$HOME_DIR/.gpucluster/bootstrap" -maxdepth 1 -name 'exec.*' ! -newermt '-10 seconds' \
		2>/dev/null | head -n 1)
	[ -z "$d" ] || echo "command"
}
since=$(date +%s)
last=-
echo "watching (idle ${IDLE_S}s, every ${POLL_S}s)"
while :; do
	# shellcheck source=/dev/null
	. /etc/gpucluster/idle.env
	now=$(date +%s)
	why=$(busy)
	[ -z "$why" ] || since=$now
	[ "$why" = "$last" ] || echo "${why:-idle}"
	last=$why
	printf 'since=%s\nidle_s=%s\nchecked_at=%s\nbusy=%s\n' "$since" "$IDLE_S" "$now" "$why" \
		>"$dir/state.tmp" && mv -f "$dir/state.tmp" "$dir/state"
	if [ -z "$why" ] && [ $((now - since)) -ge "$IDLE_S" ]; then
		echo "stopping_at=$now" >>"$dir/state"
		echo "idle for $((now - since)) s (lifecycle.idle ${IDLE_S}s): powering off"
		sync
		sudo -n shutdown -h now || sudo -n poweroff
		exit 0
	fi
	# in the background, so that a stop (SIGTERM) ends the wait at once
	sleep "$POLL_S" &
	wait $!
done
EOF
changed=$((changed | GC_CHANGED))

install_watcher gpucluster-idle "gpucluster idle watcher (lifecycle.idle)" \
	/usr/local/lib/gpucluster/idle-watch "$HOOK_USER" "$home" "$changed"
# its first look writes the state status reads: wait for it, so that status right after
# the bootstrap knows the time to the idle stop
for _ in $(seq 1 300); do
	[ -s "$home/.gpucluster/idle/state" ] && break
	sleep 0.1
done
[ -s "$home/.gpucluster/idle/state" ] ||
	die "gpucluster-idle.service runs but wrote no state in 30 s (journalctl -u gpucluster-idle)"
info "powering off after ${IDLE_S}s idle (checked every ${POLL_S}s)"
