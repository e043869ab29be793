#!/usr/bin/env bash
# hostile.sh: a DescribeInstances that pages for ever (fresh tokens, the same token, empty
# pages with a token; on Tencent a TotalCount of 1e9), or names an instance twice, under
# plan and destroy (issue 19):
# each exits 1 within seconds with a message naming the action and what looked wrong,
# sends no destructive call after the bad listing, and stays small in memory; once the
# cloud answers well again, destroy converges. GC_E2E_RSS_OUT=FILE appends the worst max
# RSS (KiB, GNU time) of the hostile runs, where /usr/bin/time is there.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

MAX_S=20 # seconds a hostile run may take (the sanitiser build is slow; a loop is minutes)
TIME=
if [ -x /usr/bin/time ] && /usr/bin/time -f %M true 2>/dev/null; then
	TIME=/usr/bin/time
fi
worst_rss=0

# destructive: the destructive calls in the request log so far
destructive() {
	echo $(($(calls TerminateInstances) + $(calls DeleteSecurityGroup) + $(calls DeleteKeyPair) + $(calls DeleteKeyPairs)))
}

# hostile_run WHAT ARGS...: gpucluster ARGS must fail (1) within MAX_S seconds
hostile_run() {
	local what=$1 t0 t1 rss
	shift
	t0=$(date +%s%N)
	set +e
	if [ -n "$TIME" ]; then
		cloud_env "$TIME" -f '%M' -o "$work/rss" "$GC_BIN" --no-color "$@" \
			>"$work/out" 2>"$work/err" </dev/null
	else
		cloud_env "$GC_BIN" --no-color "$@" >"$work/out" 2>"$work/err" </dev/null
	fi
	rc=$?
	set -e
	t1=$(date +%s%N)
	[ "$rc" = 1 ] || fail "$what: gpucluster $1 exited $rc, expected 1"
	[ $(((t1 - t0) / 1000000000)) -lt "$MAX_S" ] ||
		fail "$what: gpucluster $1 took $(((t1 - t0) / 1000000)) ms"
	if [ -n "$TIME" ]; then
		rss=$(tail -n 1 "$work/rss")
		[ "$rss" -gt "$worst_rss" ] && worst_rss=$rss
	fi
	note "$what: $1 exited 1 after $(((t1 - t0) / 1000000)) ms${TIME:+, max RSS $rss KiB}"
}

sim_start --seed 7
spec "$work/c.yaml" e2e-hostile workers 2
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-hostile 2 "after apply"

# what each mode must be called, per cloud (Tencent pages by Offset and TotalCount: every
# mode answers a count of 1e9, refused on the first page)
expect_for() {
	if [ "$1" = duplicate-ids ]; then
		# the page loop's words, or (Tencent) the parser's, which reads the whole answer
		echo "DescribeInstances.*: instance '$ID_RE' is listed twice"
		return
	fi
	if [ "$CLOUD" = tencent ]; then
		echo 'DescribeInstances: a TotalCount of 1000000000 on page 1, more than this cluster can have'
		return
	fi
	case $1 in
	endless-token) echo "DescribeInstances: instance '$ID_RE' is listed twice (page 2)" ;;
	repeat-token) echo 'DescribeInstances: the NextToken of page 1 came back on page 2' ;;
	empty-page-token) echo 'DescribeInstances: page 4 is empty but carries a NextToken' ;;
	esac
}

for mode in endless-token repeat-token empty-page-token duplicate-ids; do
	want=$(expect_for "$mode")
	before=$(destructive)
	fault "$CLOUD:DescribeInstances:hostile,mode=$mode"
	hostile_run "$mode" plan "$work/c.yaml"
	grep -q "$want" "$work/err" || fail "$mode: plan does not say: $want"
	hostile_run "$mode" destroy -y "$work/c.yaml"
	grep -q "$want" "$work/err" || fail "$mode: destroy does not say: $want"
	grep -q 'not terminating instances or deleting the' "$work/err" ||
		fail "$mode: destroy does not say that it deletes nothing"
	[ "$(destructive)" = "$before" ] ||
		fail "$mode: destructive calls after the bad listing ($before before, $(destructive) after)"
	faults_clear
	expect_alive e2e-hostile 2 "after $mode"
	expect_owned e2e-hostile "after $mode"
done

# a healthy cloud again: destroy converges, nothing left
gc_ok destroy -y "$work/c.yaml"
expect_alive e2e-hostile 0 "after destroy"
[ "$(owned_resources e2e-hostile)" = 0 ] || fail "resources left after destroy"
requests_valid
if [ -n "$TIME" ]; then
	note "worst max RSS of the hostile runs: $worst_rss KiB"
	if [ -n "${GC_E2E_RSS_OUT:-}" ]; then
		echo "$CLOUD $worst_rss" >>"$GC_E2E_RSS_OUT"
	fi
else
	note "no /usr/bin/time: max RSS not measured"
fi
note ok
