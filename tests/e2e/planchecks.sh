#!/usr/bin/env bash
# planchecks.sh: a user's journey with a spec the cloud would refuse (issue 18, item 5).
# The region is misspelt: plan says which one was meant. Then, one at a time, a zone of
# another region, an instance type that does not exist, a type the chosen zone does not
# sell and a literal image id the region lacks: plan fails with the spec's LINE:COL and the
# reason, `apply -y` fails the same way, nothing is created (no key pair, no security
# group, no instance, no create call at all) and no hint says to run apply again. The
# fixed spec applies. Then a first apply that the cloud refuses at the launch (a quota)
# takes back the key pair and security group it made, and says nothing of running again.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

case $CLOUD in
aws)
	TYPO=us-esat-1 OTHER_ZONE=us-west-2a
	GAP_TYPE=g6.12xlarge GAP_ZONE=us-east-1b GAP_OFFERED=us-east-1a
	NO_IMAGE=ami-0a1b2c3d4e5f60718
	;;
alibaba)
	TYPO=cn-hangzou OTHER_ZONE=cn-beijing-f
	GAP_TYPE=ecs.gn8is-2x.8xlarge GAP_ZONE=cn-hangzhou-j GAP_OFFERED=cn-hangzhou-h
	NO_IMAGE=m-bp1g7004ksh0oeuc0000
	;;
tencent)
	TYPO=ap-guangzou OTHER_ZONE=ap-shanghai-2
	GAP_TYPE=GT4.41XLARGE948 GAP_ZONE=ap-guangzhou-7 GAP_OFFERED=ap-guangzhou-3
	NO_IMAGE=img-2lr9q49h
	;;
esac

sim_start --no-rate-limits
spec "$work/good.yaml" e2e-pc workers 1 "$TYPE1"
f=$work/c.yaml

# refused WHAT POS MESSAGE: plan and apply -y exit 1 with FILE:POS: MESSAGE, once, with
# advice that is not "run again", nothing made
plan_error() {
	[ "$rc" = 1 ] || fail "$1 exited $rc"
	grep -qF "$f:$pos: $msg" "$work/err" || fail "$1 did not say '$f:$pos: $msg'"
	grep -q 'again' "$work/err" && fail "$1's hint says to run it again"
	return 0
}
refused() {
	pos=$2 msg=$3
	spec_refused e2e-pc "$f" "$@" plan_error
}

# a misspelt region: did you mean
sed "s/^  region: $REGION\$/  region: $TYPO/" "$work/good.yaml" >"$f"
refused "a misspelt region" 4:11 "unknown region '$TYPO' for $CLOUD; did you mean '$REGION'?"

# a zone of another region, named with the region's own
sed "s/^    zones: .*/    zones: [$OTHER_ZONE]/" "$work/good.yaml" >"$f"
refused "a zone of another region" 12:13 \
	"zone '$OTHER_ZONE' is not in region '$REGION'"
grep -qF "${ZONES[0]}" "$work/err" || fail "the region's zones are not named"

# an instance type that does not exist
sed "s/^    instance_types: .*/    instance_types: [$TYPE1, gpu.huge9]/" "$work/good.yaml" >"$f"
refused "an unknown type" "11:$((24 + ${#TYPE1}))" \
	"instance type 'gpu.huge9' does not exist in region '$REGION'"

# a type the chosen zone does not sell
sed "s/^    instance_types: .*/    instance_types: [$GAP_TYPE]/; s/^    zones: .*/    zones: [$GAP_ZONE]/" \
	"$work/good.yaml" >"$f"
refused "a type not sold in the zone" 11:22 \
	"instance type '$GAP_TYPE' is not offered in zone '$GAP_ZONE' of group 'workers'"
grep -qF "$GAP_OFFERED" "$work/err" || fail "the zones that sell $GAP_TYPE are not named"

# a literal image id the region does not have
sed "s/^    image: .*/    image: $NO_IMAGE/" "$work/good.yaml" >"$f"
refused "an image id the region lacks" 14:12 "image '$NO_IMAGE' not found in $REGION"

# fixed: it applies
gc_ok apply -y "$work/good.yaml"
expect_alive e2e-pc 1 "the fixed spec"
expect_owned e2e-pc "the fixed spec"
gc_ok destroy -y "$work/good.yaml"

# a first apply the cloud refuses at the launch (an account limit): what it made for the
# launch goes again, and the hint names the limit, not a re-run
sed 's/^name: e2e-pc$/name: e2e-pc2/' "$work/good.yaml" >"$f"
fault "$CLOUD:RunInstances:quota"
gc apply -y "$f"
[ "$rc" = 1 ] || fail "apply under a quota error exited $rc"
[ "$(owned_resources e2e-pc2)" = 0 ] || fail "a failed first apply left its key pair or group"
expect_alive e2e-pc2 0 "a failed first apply"
grep -q 'again' "$work/err" && fail "a quota error's hint says to run apply again"
grep -q 'ask for a higher limit' "$work/err" || fail "no quota hint"
grep -q 'no capacity' "$work/err" && fail "a quota error worded as capacity"
[ "$(grep -c 'error:' "$work/err")" = 1 ] || fail "the failure was printed more than once"

# no capacity anywhere is transient: run it again, it says
faults_clear
fault "$CLOUD:RunInstances:capacity"
gc apply -y "$f"
[ "$rc" = 1 ] || fail "apply with no capacity exited $rc"
grep -q "run 'gpucluster apply' again" "$work/err" || fail "no 're-run' hint for capacity"
[ "$(owned_resources e2e-pc2)" = 0 ] || fail "a failed first apply left its key pair or group"
faults_clear
gc_ok apply -y "$f"
expect_alive e2e-pc2 1 "after the capacity came back"
expect_owned e2e-pc2 "after the capacity came back"
requests_valid
note "ok ($CLOUD)"
