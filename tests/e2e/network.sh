#!/usr/bin/env bash
# network.sh: a user's journey on an account without a default VPC (issue 18). Apply
# without provider.network fails with a message that says to set it, and leaves nothing
# running; the user adds the VPC and a subnet per zone (the ids as the emulator's state
# shows them, as the console would), puts one in the wrong zone and plan says which, at its
# LINE:COL, before anything is created; the fixed spec applies, every instance is in the
# subnet of its zone, and destroy leaves nothing.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start --no-rate-limits --no-default-vpc
spec "$work/c.yaml" e2e-net workers 2 "$TYPE1"
word=subnet
[ "$CLOUD" != alibaba ] || word=vSwitch

# 1. the spec without provider.network: the account has no default VPC
gc apply -y "$work/c.yaml"
[ "$rc" != 0 ] || fail "apply without a default VPC succeeded"
grep -q 'provider.network' "$work/err" ||
	fail "the error does not say to set provider.network: $(cat "$work/err")"
expect_alive e2e-net 0 "after the refused apply"
# a failed first apply removes the key pair and security group it made (issue 18 item 5)
[ "$(owned_resources e2e-net)" = 0 ] ||
	fail "the refused first apply left a key pair or security group behind"

# 2. the user's VPC and subnets, as the emulator's state lists them
state
net=$(jq -c --arg cloud "$CLOUD" --arg r "$REGION" '.networks[]
	| select(.cloud == $cloud and .region == $r)' "$work/state.json")
[ "$(jq -r .default_vpc <<<"$net")" = false ] || fail "the emulator has a default VPC: $net"
vpc=$(jq -r .vpc <<<"$net")
s0=$(jq -r --arg z "${ZONES[0]}" '.subnets[$z]' <<<"$net")
s1=$(jq -r --arg z "${ZONES[1]}" '.subnets[$z]' <<<"$net")
if [ -z "$vpc" ] || [ "$s0" = null ] || [ "$s1" = null ]; then
	fail "no user network: $net"
fi
# network A B: provider.network with subnet A for the first zone and B for the second
network() {
	sed -i '/^  network:/,/^ssh:/{/^ssh:/!d}' "$work/c.yaml"
	sed -i "s|^ssh:\$|  network:\n    vpc: $vpc\n    subnets:\n      ${ZONES[0]}: $1\n      ${ZONES[1]}: $2\nssh:|" \
		"$work/c.yaml"
}

# 3. the two subnets swapped: plan names each, at its line and column, and makes nothing
network "$s1" "$s0"
line=$(grep -n "^      ${ZONES[0]}: " "$work/c.yaml" | cut -d: -f1)
col=$((6 + ${#ZONES[0]} + 3))
gc plan "$work/c.yaml"
[ "$rc" = 1 ] || fail "plan with a subnet in the wrong zone exited $rc"
grep -qF "c.yaml:$line:$col: provider.network.subnets.${ZONES[0]}: $word $s1 is in ${ZONES[1]}, not ${ZONES[0]}" \
	"$work/err" || fail "plan does not say which subnet is in the wrong zone: $(cat "$work/err")"
grep -qF "c.yaml:$((line + 1)):$((col)): provider.network.subnets.${ZONES[1]}: $word $s0 is in ${ZONES[0]}, not ${ZONES[1]}" \
	"$work/err" || fail "plan names only one of the two wrong subnets: $(cat "$work/err")"
# a VPC that is not there
sed "s|    vpc: $vpc|    vpc: ${vpc%?}0|" "$work/c.yaml" >"$work/novpc.yaml"
[ "${vpc%?}0" != "$vpc" ] || sed -i "s|    vpc: $vpc|    vpc: ${vpc%?}1|" "$work/novpc.yaml"
gc plan "$work/novpc.yaml"
[ "$rc" = 1 ] || fail "plan with a VPC that does not exist exited $rc"
grep -q "provider.network.vpc: VPC vpc-[0-9a-z]* does not exist in $REGION" "$work/err" ||
	fail "plan does not say the VPC does not exist: $(cat "$work/err")"
expect_alive e2e-net 0 "after the refused plans"

# 4. the right subnets: apply, each instance in the subnet of its zone
network "$s0" "$s1"
gc_ok plan "$work/c.yaml"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-net 2 "after the apply"
expect_owned e2e-net "after the apply"
state
bad=$(jq -r --arg cloud "$CLOUD" --argjson net "$net" '[.instances[]
	| select(.cloud == $cloud and .tags["gpucluster:cluster"] == "e2e-net")
	| select(.subnet != $net.subnets[.zone]) | "\(.id) in \(.zone): \(.subnet)"]
	| join(", ")' "$work/state.json")
[ -z "$bad" ] || fail "instances outside the subnet of their zone: $bad"
if [ "$CLOUD" != tencent ]; then # a CVM security group is not in a VPC
	sgvpc=$(jq -r --arg cloud "$CLOUD" '[.security_groups[] | select(.cloud == $cloud)
		| select(.tags["gpucluster:cluster"] == "e2e-net") | .vpc] | unique | join(",")' \
		"$work/state.json")
	[ "$sgvpc" = "$vpc" ] || fail "the security group is in VPC '$sgvpc', not $vpc"
fi
gc_ok plan "$work/c.yaml"
grep -q 'No changes' "$work/out" || fail "a second plan is not 'No changes': $(cat "$work/out")"
requests_valid

# 5. destroy leaves nothing
gc_ok destroy -y "$work/c.yaml"
expect_alive e2e-net 0 "after destroy"
[ "$(owned_resources e2e-net)" = 0 ] || fail "destroy left key pairs or security groups"
note "ok ($CLOUD)"
