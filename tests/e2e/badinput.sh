#!/usr/bin/env bash
# badinput.sh: what a user sees when credentials, region or image are wrong. Every case
# must fail with exit 1, a message that names the problem, and nothing created.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start --seed 7
spec "$work/c.yaml" e2e-bad workers 1

# no credentials anywhere: the message lists the chain that was tried
set +e
no_creds_env "$GC_BIN" --no-color plan "$work/c.yaml" >"$work/out" 2>"$work/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "plan without credentials exited $rc"
grep -q 'environment' "$work/err" || fail "the error does not name the environment source"
grep -q 'profile' "$work/err" || fail "the error does not name the profile source"

# a wrong secret: the cloud's auth error, with its code
set +e
bad_secret_env "$GC_BIN" --no-color plan "$work/c.yaml" >"$work/out" 2>"$work/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "plan with a wrong secret exited $rc"
grep -Eq "$AUTH_CODES" "$work/err" || fail "no cloud auth code ($AUTH_CODES) in the error"

# a region the cloud does not have
sed "s/region: $REGION/region: xx-nowhere-9/" "$work/c.yaml" >"$work/region.yaml"
gc plan "$work/region.yaml"
[ "$rc" = 1 ] || fail "plan in an unknown region exited $rc"
grep -q 'xx-nowhere-9' "$work/err" || fail "the error does not name the region"

# an unknown image alias
sed 's/image: ubuntu-22.04/image: ubuntu-18.04/' "$work/c.yaml" >"$work/image.yaml"
gc apply -y "$work/image.yaml"
[ "$rc" = 1 ] || fail "apply with an unknown image exited $rc"
grep -q 'ubuntu-18.04' "$work/err" || fail "the error does not name the image"
expect_alive e2e-bad 0 "after a bad image"

# over budget: refused at plan time, nothing created
spec "$work/cost.yaml" e2e-bad workers 50 "$TYPE1" on-demand "lifecycle:
  max_hourly_cost: 5"
gc apply -y "$work/cost.yaml"
[ "$rc" = 1 ] || fail "apply over max_hourly_cost exited $rc"
grep -q 'max_hourly_cost' "$work/err" || fail "the error does not name max_hourly_cost"
expect_alive e2e-bad 0 "over budget"

# the lock: an apply while another process holds the cluster's lock is refused at once
lockfile=$GPUCLUSTER_STATE_DIR/clusters/$CLOUD/$REGION/e2e-bad/lock
mkdir -p "$(dirname "$lockfile")"
# the holder is the sleep itself (holding the locked descriptor), so killing it ends it: a
# `flock FILE sleep 30` left its sleep running with this case's output open, and ctest
# waited the 30 s for it
(
	exec 9>"$lockfile"
	flock 9
	exec sleep 30
) >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1 100); do
	flock -n "$lockfile" true 2>/dev/null || break
	sleep 0.02
done
gc apply -y "$work/c.yaml"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
[ "$rc" = 1 ] || fail "apply under a held lock exited $rc"
grep -q 'locked' "$work/err" || fail "the error does not say the cluster is locked"
expect_alive e2e-bad 0 "under a held lock"
note ok
