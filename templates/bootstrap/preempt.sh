#!/usr/bin/env bash
# preempt.sh: the spot watcher, on clusters with a spot group (docs/bootstrap.md,
# docs/internals/spot.md). Installs /usr/local/lib/gpucluster/preempt-watch and the unit
# gpucluster-preempt.service, which polls the cloud's interruption notice on the instance
# metadata service every 2 s; when a notice comes, the watcher records it, runs the spec's
# lifecycle.on_preempt as HOOK_USER in its home directory, bounded by ON_PREEMPT_TIMEOUT and
# by the notice window, records how the hook ended, and exits. Nothing runs on the user's
# machine. Idempotent: files are rewritten only when they change, the unit restarted then.
#
# Environment:
#   NOTICE="FORMAT URL TOKEN-URL TOKEN-HEADER REBALANCE-URL"  the cloud's facts ("-": none)
#   ON_PREEMPT=CMD          the hook (empty: the event is only recorded)
#   ON_PREEMPT_TIMEOUT=S    its bound in seconds (default 90)
#   HOOK_USER=USER          who runs it (default: the user running the step)
#   UNDO=1                  remove the watcher instead (no spot group any more; the runner
#                           runs it as preempt-undo only where this step ran)
#
# What a notice leaves in ~HOOK_USER/.gpucluster/preempt/: event (key=value lines: notice,
# notice_at, reclaim_at, hook_rc, hook_timed_out, hook_ended_at) and hook.log (its output).
#
# Exit status: 0 done; 1 failure.
set -euo pipefail
GC_STEP=preempt
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi

NOTICE=${NOTICE:-}
ON_PREEMPT=${ON_PREEMPT:-}
ON_PREEMPT_TIMEOUT=${ON_PREEMPT_TIMEOUT:-90}
HOOK_USER=${HOOK_USER:-$(id -un)}
[ "$HOOK_USER" != root ] || HOOK_USER=${SUDO_USER:-root}
if [ "${UNDO:-}" = 1 ]; then
	need_root
	remove_watcher gpucluster-preempt /usr/local/lib/gpucluster/preempt-watch \
		/etc/gpucluster/preempt.env
	info "removed (the cluster has no spot group any more)"
	exit 0
fi
if [ -z "$NOTICE" ]; then
	info "skipped (the cloud has no interruption notice)"
	exit 0
fi
read -r format url token_url token_header rebalance_url <<<"$NOTICE"
case "$format" in action-json | utc-iso8601 | utc8-datetime) ;; *) die "NOTICE: unknown format '$format'" ;; esac
case "$ON_PREEMPT_TIMEOUT" in '' | *[!0-9]*) die "ON_PREEMPT_TIMEOUT='$ON_PREEMPT_TIMEOUT': expected seconds" ;; esac
home=$(getent passwd "$HOOK_USER" 2>/dev/null | cut -d: -f6 || true)
[ -n "$home" ] || home=$HOME
need_root

put_file /etc/gpucluster/preempt.env 0644 <<EOF
FORMAT=$(printf '%q' "$format")
NOTICE_URL=$(printf '%q' "$url")
TOKEN_URL=$(printf '%q' "$token_url")
TOKEN_HEADER=$(printf '%q' "$token_header")
REBALANCE_URL=$(printf '%q' "$rebalance_url")
HOOK=$(printf '%q' "$ON_PREEMPT")
HOOK_TIMEOUT=$ON_PREEMPT_TIMEOUT
HOOK_DIR=$(printf '%q' "$home")
INTERVAL=2
EOF
changed=$GC_CHANGED

put_file /usr/local/lib/gpucluster/preempt-watch 0755 <<'EOF'
#!/usr/bin/env bash
# gpucluster's spot watcher (installed by the bootstrap's preempt step; see its header).
set -u
# shellcheck source=/dev/null
. /etc/gpucluster/preempt.env
dir=$HOOK_DIR/.gpucluster/preempt
mkdir -p "$dir"
cd "$HOOK_DIR" || exit 1
hdr=()
get() { curl -sf -m 2 "${hdr[@]}" "$1"; }
while :; do
	hdr=()
	if [ "$TOKEN_URL" != - ]; then
		tok=$(curl -sf -m 2 -X PUT -H "$TOKEN_HEADER-ttl-seconds: 300" "$TOKEN_URL") || tok=""
		hdr=(-H "$TOKEN_HEADER: $tok")
	fi
	if [ "$REBALANCE_URL" != - ] && [ ! -e "$dir/rebalance" ] && body=$(get "$REBALANCE_URL"); then
		printf 'rebalance=%s\nseen_at=%s\n' "$body" "$(date +%s)" >"$dir/rebalance"
		echo "rebalance recommendation: $body"
	fi
	body=$(get "$NOTICE_URL") && break
	sleep "$INTERVAL"
done
now=$(date +%s)
case "$FORMAT" in
action-json) t=$(printf '%s' "$body" | sed -n 's/.*"time" *: *"\([^"]*\)".*/\1/p') ;;
utc-iso8601) t=$body ;;
utc8-datetime) t="$body +0800" ;;
esac
at=$(date -u -d "$t" +%s 2>/dev/null) || at=$((now + 30))
# the hook ends 5 s before the reclaim at the latest, and within its own bound
bound=$((at - now - 5))
[ "$bound" -le "$HOOK_TIMEOUT" ] || bound=$HOOK_TIMEOUT
[ "$bound" -ge 1 ] || bound=1
printf 'notice=%s\nnotice_at=%s\nreclaim_at=%s\nhook_bound_s=%s\n' "$body" "$now" "$at" "$bound" >"$dir/event"
echo "interruption notice: $body (reclaim in $((at - now)) s)"
if [ -n "$HOOK" ]; then
	timeout -k 2 "$bound" bash -c "$HOOK" >"$dir/hook.log" 2>&1 </dev/null
	rc=$?
	to=0
	[ "$rc" != 124 ] && [ "$rc" != 137 ] || to=1
	printf 'hook_rc=%s\nhook_timed_out=%s\nhook_ended_at=%s\n' "$rc" "$to" "$(date +%s)" >>"$dir/event"
	echo "lifecycle.on_preempt ended: exit $rc$([ "$to" = 0 ] || echo ", stopped after $bound s")"
fi
exit 0
EOF
changed=$((changed | GC_CHANGED))

install_watcher gpucluster-preempt "gpucluster spot interruption watcher" \
	/usr/local/lib/gpucluster/preempt-watch "$HOOK_USER" "$home" "$changed"
info "watching the spot interruption notice (${ON_PREEMPT:+hook: $ON_PREEMPT, }bound ${ON_PREEMPT_TIMEOUT}s)"
