#!/usr/bin/env bash
# kill.sh: apply killed with SIGKILL at several points (after the k-th API call), then run
# again: the client tokens must make the re-run land on the instances the killed run
# launched, so there is never a duplicate, and the cluster converges, its security group
# with exactly the rules the spec wants (a kill right after CreateSecurityGroup left a
# group without rules that no re-run completed: issue 19).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# 250 nodes are three launch batches (100, 100, 50): kills land between batches too
want=250
# 100 ms per call gives the killer time to strike between calls
sim_start --no-rate-limits --latency-ms 100
spec "$work/c.yaml" e2e-kill workers "$want" "$TYPE1"

# Members reach each other by a rule whose source is the group itself, except on Alibaba,
# whose basic group lets them in by itself (docs/internals/security-groups.md).
members=1
[ "$CLOUD" != alibaba ] || members=0

# expect_rules WHEN: the cluster has one security group, and its rules are exactly SSH
# (port 22) from one address range and, where the cloud needs it, everything from the
# group's own members, each marked as ours.
expect_rules() {
	state
	jq -e --arg cloud "$CLOUD" --argjson members "$members" '
		[.security_groups[] | select(.cloud == $cloud)
			| select(.tags["gpucluster:cluster"] == "e2e-kill")] as $g
		| ($g | length) == 1 and ($g[0] as $sg | $sg.rules as $r
			| ([$r[] | select(.protocol == "tcp" and .from_port == 22 and .to_port == 22
				and .cidr != "" and .description == "gpucluster ssh")] | length) == 1
			and ([$r[] | select(.source_group == $sg.id
				and (.protocol == "-1" or .protocol == "all")
				and .description == "gpucluster members")] | length) == $members
			and ($r | length) == 1 + $members)' "$work/state.json" >/dev/null ||
		fail "$1: the security group's rules are not the wanted ones: $(jq -c --arg cloud \
			"$CLOUD" '[.security_groups[] | select(.cloud == $cloud)
			| select(.tags["gpucluster:cluster"] == "e2e-kill") | .rules]' \
			"$work/state.json")"
}

# a clean run first, to learn where its launches fall in its sequence of calls
: >"$work/requests.log"
gc_ok apply -y "$work/c.yaml"
mapfile -t launches < <(jq -s -r 'to_entries[] | select(.value.action == "RunInstances")
	| .key + 1' "$work/requests.log")
[ "${#launches[@]}" = 3 ] || fail "the clean run made ${#launches[@]} launch calls, not 3"
sg=$(jq -s -r '[to_entries[] | select(.value.action == "CreateSecurityGroup") | .key + 1]
	| first // empty' "$work/requests.log")
[ -n "$sg" ] || fail "the clean run made no CreateSecurityGroup call"
expect_rules "the clean run"
n=$(wc -l <"$work/requests.log")
gc_ok destroy -y "$work/c.yaml"

# killed: before any launch, right after the security group was made (before its rules),
# right after each launch was answered (the instances exist, the client may not have read
# the answer), and while waiting for them to run
for k in 1 "$sg" "${launches[@]}" $((launches[2] + 1)) $((n - 1)); do
	control POST /reset >/dev/null
	: >"$work/requests.log"
	# the binary itself must be the background job, so the kill reaches it
	(
		cloud_export
		exec "$GC_BIN" --no-color apply -y --no-bootstrap "$work/c.yaml" >"$work/out" \
			2>"$work/err" </dev/null
	) &
	apid=$!
	while kill -0 "$apid" 2>/dev/null; do
		if [ "$(wc -l <"$work/requests.log")" -ge "$k" ]; then
			kill -KILL "$apid" 2>/dev/null || true
			break
		fi
		sleep 0.01
	done
	wait "$apid" 2>/dev/null || true
	cp "$work/requests.log" "$work/killed.log" # the calls of the killed run alone
	got=$(alive e2e-kill)
	[ "$got" -le "$want" ] || fail "killed after call $k: $got instances"
	# the rules the killed run left (none: the group was made, its rules not yet)
	left=$(jq --arg cloud "$CLOUD" '[.security_groups[] | select(.cloud == $cloud)
		| select(.tags["gpucluster:cluster"] == "e2e-kill") | .rules | length]
		| map(tostring) | join(",")' -r "$work/state.json")
	gc_ok apply -y "$work/c.yaml"
	expect_alive e2e-kill "$want" "killed after call $k, then re-run"
	expect_rules "killed after call $k, then re-run"
	state
	# three batches, 100 + 100 + 50, each under one client token, whatever the killed run
	# had sent before it died
	batches=$(jq -c '[.instances[] | select(.tags["gpucluster:cluster"] == "e2e-kill")
		| select((.state | ascii_downcase) != "terminated") | .client_token]
		| group_by(.) | map(length) | sort' "$work/state.json")
	[ "$batches" = "[50,100,100]" ] || fail "killed after call $k: instances per client token: $batches"
	tokens=$(jq -c '[.instances[] | select(.tags["gpucluster:cluster"] == "e2e-kill")
		| select((.state | ascii_downcase) != "terminated") | .client_token] | unique' \
		"$work/state.json")
	# every token the killed run sent is one the live instances hold: the re-run landed
	# on what the killed run launched instead of launching again under a new token
	jq -e -s --argjson live "$tokens" '[.[] | select(.action == "RunInstances")
		| .params.ClientToken] | unique | all(. as $t | $live | index($t))' \
		"$work/killed.log" >/dev/null ||
		fail "killed after call $k: the killed run's tokens are not the live ones ($tokens)"
	note "killed after call $k: $got instances and a group with [$left] rules then, $want after the re-run"
done
gc_ok destroy -y "$work/c.yaml"
expect_alive e2e-kill 0 "after destroy"
requests_valid
note ok
