#!/usr/bin/env bash
# lifecycle.sh: apply -> no-change plan -> scale up -> scale down -> replace on a changed
# instance type -> destroy, against the emulator, with a foreign instance and key pair
# named like ours that must survive every step.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start --seed 7
spec "$work/c.yaml" e2e-life workers 2

foreign=$(foreign_instance e2e-life-workers-0)
[ -n "$foreign" ] || fail "could not launch the foreign instance"
fkey=$(keypair_like e2e-life)
foreign_keypair "$fkey"

# plan on an empty cluster: changes, exit 2 with --detailed-exitcode
gc plan --detailed-exitcode "$work/c.yaml"
[ "$rc" = 2 ] || fail "plan on an empty cluster exited $rc, want 2"
grep -q '2 to create' "$work/out" || fail "plan does not say '2 to create'"

# apply without a terminal and without --auto-approve must refuse, changing nothing
gc apply "$work/c.yaml"
[ "$rc" = 1 ] || fail "apply without confirmation exited $rc"
grep -q -- '--auto-approve' "$work/err" || fail "no hint about --auto-approve"
expect_alive e2e-life 0 "after a refused apply"

gc_ok apply --auto-approve "$work/c.yaml"
expect_alive e2e-life 2 "after apply"
# our security group, and our key pair where the cloud takes Ed25519 key pairs (else the
# login key went to cloud-init and no ImportKeyPair was sent)
[ "$(owned_resources e2e-life)" = $((1 + KEYPAIRS)) ] ||
	fail "expected our security group and $KEYPAIRS key pair(s)"
if [ "$KEYPAIRS" = 0 ] && [ "$(calls ImportKeyPair)" != 1 ]; then # 1: the foreign key
	fail "gpucluster called ImportKeyPair on a cloud that takes no Ed25519 key pairs"
fi
state
jq -e --arg c e2e-life '[.instances[] | select(.tags["gpucluster:cluster"] == $c)]
	| all(.tags["gpucluster:group"] == "workers" and (.tags["gpucluster:spec-hash"] | length) == 12)' \
	"$work/state.json" >/dev/null || fail "instances lack group or spec-hash tags"
jq -e --arg c e2e-life '[.security_groups[] | select(.tags["gpucluster:cluster"] == $c)
	| .rules[] | select(.from_port == 22 and .cidr == "127.0.0.1/32")] | length == 1' \
	"$work/state.json" >/dev/null || fail "the SSH rule is not the caller's address /32"
# the nodes reach each other (torchrun, NCCL, MPI): a rule for every protocol whose source
# is the group itself (EC2, Tencent), or a group whose members talk by default (Alibaba)
jq -e --arg c e2e-life '[.security_groups[] | select(.tags["gpucluster:cluster"] == $c)
	| . as $g | select(.inner_access == "accept" or any(.rules[];
		.source_group == $g.id and (.protocol == "-1" or .protocol == "all")))]
	| length == 1' "$work/state.json" >/dev/null || fail "our security group does not let its members in"

# converged: plan shows nothing to do
gc plan --detailed-exitcode "$work/c.yaml"
[ "$rc" = 0 ] || fail "plan after apply exited $rc, want 0"
grep -q 'No changes' "$work/out" || fail "plan after apply does not say 'No changes'"

# JSON plan as data
gc plan -o json "$work/c.yaml"
jq -e '.changes == false and .summary.keep == 2' "$work/out" >/dev/null ||
	fail "plan -o json: $(cat "$work/out")"

# status lists both nodes
gc_ok status -o json "$work/c.yaml"
jq -e '(.nodes | length) == 2 and all(.nodes[]; .group == "workers" and .state == "running")' \
	"$work/out" >/dev/null || fail "status -o json: $(cat "$work/out")"
gc_ok status "$work/c.yaml"
grep -q 'GROUP' "$work/out" || fail "status has no header"

# scale up and down without editing the file
gc_ok scale -y -f "$work/c.yaml" workers=4
expect_alive e2e-life 4 "after scale up"
gc_ok scale -y -f "$work/c.yaml" workers=1
expect_alive e2e-life 1 "after scale down"
gc scale -y -f "$work/c.yaml" wrokers=3
[ "$rc" = 1 ] || fail "scale of an unknown group exited $rc"
grep -q "did you mean 'workers'" "$work/err" || fail "no suggestion for a misspelt group"

# change the instance type: the node is replaced, new one first
spec "$work/c.yaml" e2e-life workers 1 "$TYPE2"
gc plan --detailed-exitcode "$work/c.yaml"
[ "$rc" = 2 ] || fail "plan after a type change exited $rc"
grep -q -- '-/+' "$work/out" || fail "plan does not show a replacement"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-life 1 "after replace"
[ "$(alive_type e2e-life "$TYPE2")" = 1 ] || fail "the replacement is not a $TYPE2"

# the foreign instance and key pair were never touched
[ "$(instance_state "$foreign")" = running ] || fail "the foreign instance was touched"

gc_ok destroy -y "$work/c.yaml"
expect_alive e2e-life 0 "after destroy"
[ "$(owned_resources e2e-life)" = 0 ] || fail "destroy left our key pair or security group"
[ "$(instance_state "$foreign")" = running ] || fail "destroy touched the foreign instance"
state
jq -e --arg k "$fkey" '[.key_pairs[] | select(.name == $k)] | length == 1' \
	"$work/state.json" >/dev/null || fail "destroy deleted the foreign key pair"

# destroy again: nothing to do, still fine
gc_ok destroy -y "$work/c.yaml"
requests_valid
note ok
