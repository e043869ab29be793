#!/usr/bin/env bash
# ttl.sh: a user's journey with lifecycle.ttl and the shape of a group (issue 18, item 9).
# Apply with ttl 2h; status shows each node's expiry; the ttl becomes 4h: plan shows the
# move (exit 2 under --detailed-exitcode) and apply moves the expires-at tag (and the
# cloud's own timer where it can move) on the same nodes; the ttl is removed: cleared.
# Then the group's shape: a group of 1 scaled to 3 keeps the type its node runs, even
# when instance_types lists another first; with no capacity for that type it refuses to
# mix (a clear message) until the spec says mixed_types: true, and plan warns that GPU
# models then mix.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start --no-rate-limits
spec "$work/c.yaml" e2e-ttl workers 1 "$TYPE2" on-demand $'lifecycle:\n  ttl: 2h'
ttl() { sed -i "s/^  ttl: .*/  ttl: $1/" "$work/c.yaml"; }
# node FIELD: a field of the cluster's one live instance, as the emulator holds it
node_field() {
	state
	jq -r --arg cloud "$CLOUD" --arg f "$1" '[.instances[] | select(.cloud == $cloud)
		| select(.tags["gpucluster:cluster"] == "e2e-ttl")
		| select((.state | ascii_downcase) != "terminated")][0] | (.[$f] // .tags[$f])
		| if . == null then "" else tostring end' "$work/state.json"
}
epoch() { date -u -d "$1" +%s; }
# near A B SLACK: |A - B| <= SLACK
near() { [ $(($1 > $2 ? $1 - $2 : $2 - $1)) -le "$3" ]; }

gc_ok apply -y "$work/c.yaml"
expect_alive e2e-ttl 1 "first apply"
id=$(node_field id)
launch=$(node_field launch_time)
tag=$(node_field gpucluster:expires-at)
[ -n "$tag" ] || fail "no expires-at tag after an apply with ttl 2h"
near "$(epoch "$tag")" $((launch + 7200)) 600 || fail "expires-at $tag is not launch + 2h"
release=$(node_field release_at)
[ -n "$release" ] || fail "no cloud timer after an apply with ttl 2h"

# status shows the expiry, in text and in JSON
gc_ok status "$work/c.yaml"
grep -qE 'EXPIRES' "$work/out" || fail "status has no EXPIRES column: $(cat "$work/out")"
grep -qE 'in (1h5[0-9]|2h00)m \([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC\)' \
	"$work/out" || fail "status shows no expiry: $(cat "$work/out")"
gc_ok status -o json "$work/c.yaml"
[ "$(jq -r '.nodes[0].expires_at' "$work/out")" = "$tag" ] ||
	fail "status -o json: expires_at is not $tag: $(cat "$work/out")"

# nothing changed: no changes
gc plan --detailed-exitcode "$work/c.yaml"
[ "$rc" = 0 ] || fail "plan right after apply exited $rc: $(cat "$work/out")"

# the ttl becomes 4h: a change, in place
ttl 4h
gc plan --detailed-exitcode "$work/c.yaml"
[ "$rc" = 2 ] || fail "plan after a ttl change exited $rc: $(cat "$work/out")"
grep -q "expiry $tag -> " "$work/out" || fail "plan does not show the expiry move: $(cat "$work/out")"
grep -q "1 node's expiry moved" "$work/out" || fail "no expiry count: $(cat "$work/out")"
gc_ok plan -o json "$work/c.yaml"
jq -e --arg id "$id" '.changes and .summary.expiry == 1 and .summary.create == 0
	and .summary.terminate == 0 and (.groups[0].nodes[] | select(.id == $id)
	| .expiry_moves and .new_expires_at != .expires_at)' "$work/out" >/dev/null ||
	fail "plan -o json does not show the expiry move: $(cat "$work/out")"
gc_ok apply -y "$work/c.yaml"
expect_alive e2e-ttl 1 "after the ttl change"
[ "$(node_field id)" = "$id" ] || fail "the node was replaced for a ttl change"
tag4=$(node_field gpucluster:expires-at)
near "$(epoch "$tag4")" $((launch + 14400)) 600 || fail "expires-at $tag4 is not launch + 4h"
if [ "$CLOUD" = aws ]; then
	# EC2's timer is the power-off the launch set up: it stays, and plan said so
	[ "$(node_field release_at)" = "$release" ] || fail "EC2's launch timer moved"
	grep -q "power-off timer each node got at launch on aws does not" "$work/err" ||
		fail "no warning that the launch timer stays: $(cat "$work/err")"
else
	near "$(node_field release_at)" "$(epoch "$tag4")" 60 ||
		fail "the cloud's timer did not move with the tag: $(node_field release_at)"
fi
gc plan --detailed-exitcode "$work/c.yaml"
[ "$rc" = 0 ] || fail "plan after the ttl apply exited $rc: $(cat "$work/out")"

# the ttl is removed: the tag and the timer go
sed -i '/^lifecycle:$/d; /^  ttl: /d' "$work/c.yaml"
gc plan --detailed-exitcode "$work/c.yaml"
[ "$rc" = 2 ] || fail "plan after the ttl went exited $rc: $(cat "$work/out")"
grep -q "expiry $tag4 -> none" "$work/out" || fail "plan does not show the clearing: $(cat "$work/out")"
gc_ok apply -y "$work/c.yaml"
[ "$(node_field id)" = "$id" ] || fail "the node was replaced for a ttl removal"
[ -z "$(node_field gpucluster:expires-at)" ] || fail "the expires-at tag outlived the ttl"
[ "$CLOUD" = aws ] || [ -z "$(node_field release_at)" ] || fail "the cloud's timer outlived the ttl"
gc_ok status -o json "$work/c.yaml"
[ "$(jq -r '.nodes[0].expires_at' "$work/out")" = null ] || fail "status still shows an expiry"
gc plan --detailed-exitcode "$work/c.yaml"
[ "$rc" = 0 ] || fail "plan after the clearing exited $rc: $(cat "$work/out")"

# scale-up: TYPE1 listed first, but the group runs TYPE2, which has capacity: all TYPE2
sed -i "s/^    count: 1\$/    count: 3/; s/^    instance_types: .*/    instance_types: [$TYPE1, $TYPE2]/" \
	"$work/c.yaml"
gc_ok plan "$work/c.yaml"
grep -q "+ 2 new instances (count 1 -> 3), $TYPE2" "$work/out" ||
	fail "plan does not launch the group's type: $(cat "$work/out")"
gc_ok plan -o json "$work/c.yaml"
[ "$(jq -r '.groups[0].create_type' "$work/out")" = "$TYPE2" ] ||
	fail "plan -o json: create_type is not $TYPE2: $(cat "$work/out")"
gc_ok apply -y "$work/c.yaml"
[ "$(alive_type e2e-ttl "$TYPE2")" = 3 ] || fail "a scale-up mixed types: $(alive_type e2e-ttl "$TYPE1") of $TYPE1"

# no capacity for TYPE2: without mixed_types, apply refuses to mix in TYPE1
fault "$CLOUD:RunInstances:capacity,type=$TYPE2"
sed -i 's/^    count: 3$/    count: 4/' "$work/c.yaml"
gc apply -y "$work/c.yaml"
[ "$rc" = 1 ] || fail "apply mixing types without mixed_types exited $rc"
grep -q 'does not mix in the others of instance_types (set mixed_types: true' "$work/err" ||
	fail "no clear message about mixing: $(cat "$work/err")"
[ "$(alive_type e2e-ttl "$TYPE1")" = 0 ] || fail "$TYPE1 was launched without mixed_types"

# mixed_types: true lets it, and plan warns first that GPU models mix
sed -i 's/^    market: on-demand$/    market: on-demand\n    mixed_types: true/' "$work/c.yaml"
gc_ok plan "$work/c.yaml"
grep -q "warning: group 'workers' may mix GPU models (mixed_types: true)" "$work/err" ||
	fail "plan does not warn about mixed GPU models: $(cat "$work/err")"
gc_ok apply -y "$work/c.yaml"
[ "$(alive_type e2e-ttl "$TYPE1")" = 1 ] || fail "mixed_types: no $TYPE1 node"
[ "$(alive_type e2e-ttl "$TYPE2")" = 3 ] || fail "mixed_types: the $TYPE2 nodes changed"
faults_clear
requests_valid

gc_ok destroy -y "$work/c.yaml"
expect_alive e2e-ttl 0 "after destroy"
note ok
