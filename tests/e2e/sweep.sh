#!/usr/bin/env bash
# sweep.sh: the fault sweep. Run the e2e apply once and record its API calls; then, for
# every call k of that run, start from an empty cloud, fail exactly call k (as its action's
# n-th call) and apply again. Two kinds of failure:
#   5xx,after=1  the call took effect but the answer was an error (retried: must succeed)
#   quota        a refusal that retrying does not fix (may fail, must fail cleanly)
# After each faulty run: never more instances than wanted; a clean re-run converges to
# exactly the wanted count with nothing left to plan; destroy leaves nothing of ours.
# Two shells sweep at once, each against an emulator of its own, one the odd calls and the
# other the even ones: the sweep waits on the engine's polls and retries more than it
# computes.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

want=3
# Instances start and end at once: a wait then ends at its first Describe, not after the
# engine's 2 s poll interval, which was nine tenths of this case's time (the baseline loses
# only the poll that saw them pending). Alibaba keeps a short termination: a released
# instance leaves its Describe at once, and one not listed right after the delete costs
# the engine's 2 s grace twice.
# start_cloud: this shell's emulator and the spec for it
start_cloud() {
	case $CLOUD in
	alibaba) sim_start --no-rate-limits --pending-ms 0 ;;
	*) sim_start --no-rate-limits --pending-ms 0 --terminate-ms 0 ;;
	esac
	spec "$work/c.yaml" e2e-sweep workers "$want" "$TYPE1,$TYPE2" spot-then-on-demand \
		"lifecycle:
  ttl: 6h"
}

# Actions whose APIs document no quota error, so the emulator answers the quota kind with
# none: not swept with it (the check that each fault fires found them passing untouched).
no_quota=' '
[ "$CLOUD" != aws ] || no_quota=' GetProducts GetServiceQuota ' # Pricing, Service Quotas

reset_cloud() {
	control POST /reset >/dev/null
	faults_clear
}

start_cloud
# the baseline: every call of a clean apply, in order
reset_cloud
: >"$work/requests.log"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-sweep "$want" "baseline"
mapfile -t baseline < <(jq -r .action "$work/requests.log")
n=${#baseline[@]}
[ "$n" -ge 6 ] || fail "the baseline apply made only $n calls"
note "baseline apply: $n API calls (${baseline[*]})"

# sweep KIND FIRST: calls FIRST, FIRST + 2, ... of the baseline failed with KIND, on this
# shell's emulator
sweep() {
	local kind=$1 k j action nth what first got seen
	for ((k = $2; k < n; k += 2)); do
		action=${baseline[$k]}
		nth=0
		for ((j = 0; j <= k; j++)); do
			[ "${baseline[$j]}" = "$action" ] && nth=$((nth + 1))
		done
		what="$kind on call $((k + 1)) ($action #$nth)"
		if [ "$kind" = quota ] && [[ $no_quota == *" $action "* ]]; then
			note "$what: not swept ($action has no quota error)"
			continue
		fi
		reset_cloud
		fault "$CLOUD:$action:$kind,call=$nth,times=1"
		seen=$(wc -l <"$work/requests.log")
		gc apply -y "$work/c.yaml"
		first=$rc
		# the fault fired: this shell's emulator made the same calls as the baseline's
		[ "$(tail -n +$((seen + 1)) "$work/requests.log" | jq -s --arg a "$action" \
			'[.[] | select(.action == $a and .error_code != null)] | length')" -ge 1 ] ||
			fail "$what: the fault never fired (the calls differ from the baseline's)"
		case $kind in
		5xx*) [ "$first" = 0 ] || fail "$what: apply exited $first (a retryable error)" ;;
		*) [ "$first" = 0 ] || [ "$first" = 1 ] || fail "$what: apply exited $first" ;;
		esac
		if [ "$first" = 1 ] && ! grep -q 'error' "$work/err"; then
			fail "$what: failed without an error message"
		fi
		got=$(alive e2e-sweep)
		[ "$got" -le "$want" ] || fail "$what: $got instances after the faulty run (duplicates)"
		faults_clear
		gc_ok apply -y "$work/c.yaml"
		expect_alive e2e-sweep "$want" "$what, after the re-run"
		gc plan --detailed-exitcode "$work/c.yaml"
		[ "$rc" = 0 ] || fail "$what: plan after the re-run exited $rc"
		gc_ok destroy -y "$work/c.yaml"
		expect_alive e2e-sweep 0 "$what, after destroy"
		[ "$(owned_resources e2e-sweep)" = 0 ] || fail "$what: destroy left resources"
	done
	note "$kind: calls $(($2 + 1)), $(($2 + 3)), ... of $n swept"
}

# the even calls on a second emulator, with its own folder (HOME, state, request log), in
# the background; its failure is said by its own fail
(
	work=$work/even
	sim_pid=
	export HOME=$work/home GPUCLUSTER_STATE_DIR=$work/state XDG_STATE_HOME=$work/xdg
	mkdir -p "$HOME"
	trap e2e_cleanup EXIT
	trap 'exit 1' TERM
	start_cloud
	sweep '5xx,after=1' 1
	sweep quota 1
	requests_valid
) &
half_pid=$!
# a failure here ends it (and its emulator) too
trap 'kill "$half_pid" 2>/dev/null || true; wait "$half_pid" 2>/dev/null || true; e2e_cleanup' EXIT
sweep '5xx,after=1' 0
sweep quota 0
requests_valid
wait "$half_pid" || fail "the other half of the sweep failed (its error is above)"
note ok
