#!/usr/bin/env bash
# gc.sh: `gpucluster gc` against the emulator, with no spec. Four clusters: one with a TTL
# (expired once its deadline passes), one scaled to zero (its security group, and its key
# pair where the cloud takes ours, are orphans once older than the grace period), one that
# stays (a live node, no TTL), and one made by a CI run (selected by its run id); plus an
# instance and a key pair without our tags, named like ours. A dry run changes nothing, a
# fresh orphan is left alone, --yes removes exactly what was shown, and the untagged
# resources are never even listed. Time is moved with --as-of (gc's own clock), since the
# shortest TTL a cloud takes ($TTL_SHORT) is minutes away. Where gpucluster makes no key
# pairs (KEYPAIRS=0), gc must not show or delete one of ours either.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start --seed 7
where=(--cloud "$CLOUD" --region "$REGION" --endpoint "$ENDPOINT")

foreign=$(foreign_instance gc-keep-workers)
[ -n "$foreign" ] || fail "could not launch the foreign instance"
fkey=$(keypair_like gc-orph)
foreign_keypair "$fkey"

spec "$work/exp.yaml" gc-exp workers 2 "$TYPE1" on-demand "$(printf 'lifecycle:\n  ttl: %s' "$TTL_SHORT")"
spec "$work/orph.yaml" gc-orph workers 1
spec "$work/keep.yaml" gc-keep workers 1
spec "$work/sel.yaml" gc-sel workers 2
gc_ok apply -y "$work/exp.yaml"
gc_ok apply -y "$work/orph.yaml"
gc_ok scale -y -f "$work/orph.yaml" workers=0
gc_ok apply -y "$work/keep.yaml"
(
	export GITHUB_ACTIONS=true GITHUB_RUN_ID=77
	gc_ok apply -y "$work/sel.yaml"
)
expect_alive gc-exp 2 "setup"
expect_alive gc-orph 0 "setup"
expect_owned gc-orph "setup"
state
cp "$work/state.json" "$work/before.json"

# snapshot: ids of live instances, key pairs and security groups, to compare after a dry run
snapshot() {
	state
	jq -c --arg cloud "$CLOUD" '{i: [.instances[] | select(.cloud == $cloud)
		| select((.state | ascii_downcase) != "terminated") | .id] | sort,
		r: [(.key_pairs[], .security_groups[]) | select(.cloud == $cloud) | .id] | sort}' \
		"$work/state.json"
}
# rows KIND CLUSTER WHY: how many rows of the dry-run table say so
rows() {
	awk -v k="$1" -v c="$2" -v w="$3" 'NR > 1 && $3 == k && $6 == c && $7 == w' "$work/out" |
		wc -l
}

# 1. now: nothing has expired and the orphans are younger than the grace period
before=$(snapshot)
gc_ok gc "${where[@]}"
grep -q 'nothing to do' "$work/err" || fail "gc found something to collect now: $(cat "$work/out")"
[ ! -s "$work/out" ] || fail "gc printed a table with nothing to collect"

# 2. as of two hours on: a dry run shows the expired instances, the orphans, and gc-exp's
# own security group and key pair (nothing of gc-exp stays); nothing else. Where there
# are no key pairs, a cluster's lone security group is still an orphan, and no key-pair
# row is made up.
later=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
listed=$((2 + 2 * OWNED)) # gc-exp's 2 instances, then gc-orph's and gc-exp's own
gc_ok gc "${where[@]}" --as-of "$later"
[ "$(rows instance gc-exp expired)" = 2 ] || fail "not 2 expired instances: $(cat "$work/out")"
[ "$(rows key-pair gc-orph orphaned)" = "$KEYPAIRS" ] ||
	fail "not $KEYPAIRS key pair(s) of gc-orph orphaned: $(cat "$work/out")"
[ "$(rows security-group gc-orph orphaned)" = 1 ] || fail "gc-orph's security group is not an orphan"
[ "$(rows key-pair gc-exp orphaned)" = "$KEYPAIRS" ] ||
	fail "not $KEYPAIRS key pair(s) of gc-exp orphaned: $(cat "$work/out")"
[ "$(rows security-group gc-exp orphaned)" = 1 ] || fail "gc-exp's security group would stay"
[ "$(($(wc -l <"$work/out") - 1))" = "$listed" ] ||
	fail "the dry run lists other than $listed: $(cat "$work/out")"
head -n 1 "$work/out" | grep -Eq '^CLOUD +REGION +KIND +ID +NAME +CLUSTER +WHY +AGE$' ||
	fail "no table header: $(head -n 1 "$work/out")"
grep -q 'dry run' "$work/err" || fail "the dry run does not say so"
if awk -v i="$foreign" -v k="$fkey" 'NR > 1 && ($4 == i || ($3 == "key-pair" && $5 == k) ||
	$6 == "gc-keep" || $6 == "gc-sel")' "$work/out" | grep -q .; then
	fail "the dry run lists what is not to collect: $(cat "$work/out")"
fi
[ "$(snapshot)" = "$before" ] || fail "the dry run changed something"

# the same as JSON; the untagged instance and key pair are not even scanned
gc_ok gc -o json "${where[@]}" --as-of "$later"
jq -e --argjson n "$listed" --argjson k "$KEYPAIRS" '.dry_run == true and (.resources | length) == $n
	and ([.resources[] | select(.kind == "key-pair")] | length) == 2 * $k
	and ([.resources[] | select(.kind == "instance")] | all(.why == ["expired"]
		and .result == "listed" and .state == "running" and (.expires_at | type) == "string"))
	and .reasons == ["expired", "orphaned"] and .grace_s == 3600' "$work/out" >/dev/null ||
	fail "gc -o json: $(cat "$work/out")"
state
tagged=$(jq --arg cloud "$CLOUD" '[(.instances[] | select((.state | ascii_downcase) != "terminated")),
	.key_pairs[], .security_groups[]] | map(select(.cloud == $cloud))
	| map(select(.tags["gpucluster:cluster"] != null)) | length' "$work/state.json")
jq -e --argjson n "$tagged" '.scanned == $n' "$work/out" >/dev/null ||
	fail "gc scanned $(jq .scanned "$work/out") resources, $tagged carry our tag"

# 3. --orphaned alone, with a grace period longer than their age: nothing
gc_ok gc "${where[@]}" --orphaned --as-of "$later" --grace 3h
grep -q 'nothing to do' "$work/err" || fail "--grace 3h still found orphans: $(cat "$work/out")"

# 4. --yes removes exactly what the dry run showed
gc_ok gc "${where[@]}" --as-of "$later" --yes
expect_alive gc-exp 0 "after gc --yes"
[ "$(owned_resources gc-exp)" = 0 ] || fail "gc left gc-exp's key pair or security group"
[ "$(owned_resources gc-orph)" = 0 ] || fail "gc left gc-orph's orphans"
grep -q 'terminated instance' "$work/err" || fail "gc did not report the terminations"
grep -q "deleted security-group '[^']*' ([^,]*, cluster 'gc-orph'" "$work/err" ||
	fail "gc did not report the security group it deleted"
if [ "$KEYPAIRS" = 1 ]; then
	grep -q "deleted key-pair '$(keypair_like gc-orph)" "$work/err" ||
		fail "gc did not report the key pair it deleted"
elif grep -q 'key-pair' "$work/err"; then
	fail "gc reported a key pair where gpucluster makes none: $(cat "$work/err")"
fi
expect_alive gc-keep 1 "after gc --yes"
expect_owned gc-keep "gc touched gc-keep's resources"
expect_alive gc-sel 2 "after gc --yes"
[ "$(instance_state "$foreign")" = running ] || fail "gc touched the untagged instance"
state
jq -e --arg k "$fkey" --arg cloud "$CLOUD" '[.key_pairs[] | select(.cloud == $cloud)
	| select(.name == $k)] | length == 1' "$work/state.json" >/dev/null ||
	fail "gc deleted the untagged key pair '$fkey'"

# 5. selected: everything of run 77, and nothing of anyone else; a second run finds nothing
gc_ok gc "${where[@]}" --selector run-id=77
[ "$(rows instance gc-sel selected)" = 2 ] || fail "the selector found $(cat "$work/out")"
[ "$(rows key-pair gc-sel selected)" = "$KEYPAIRS" ] ||
	fail "not $KEYPAIRS key pair(s) of run 77 selected: $(cat "$work/out")"
[ "$(rows security-group gc-sel selected)" = 1 ] || fail "run 77's security group is not selected"
gc_ok gc "${where[@]}" --selector run-id=77 -y
expect_alive gc-sel 0 "after gc --selector run-id=77 --yes"
[ "$(owned_resources gc-sel)" = 0 ] || fail "gc left run 77's key pair or security group"
expect_alive gc-keep 1 "after the selected gc"
gc_ok gc "${where[@]}" --selector run-id=77 -y
grep -q 'nothing to do' "$work/err" || fail "a second gc found more of run 77"

# 6. every region the account can use; a bad selector is a usage error
gc_ok gc -o json --cloud "$CLOUD" --all-regions --endpoint "$ENDPOINT"
jq -e --arg r "$REGION" '(.regions | index($r)) != null and (.regions | length) > 1
	and .errors == []' "$work/out" >/dev/null || fail "gc --all-regions: $(cat "$work/out")"
# a region that does not answer at all: an error naming it, nothing found, nothing deleted
gc gc --cloud "$CLOUD" --region "$REGION" --endpoint http://127.0.0.1:9 --yes
[ "$rc" = 1 ] || fail "gc against a closed port exited $rc: $(cat "$work/err")"
grep -q "$REGION" "$work/err" || fail "gc's error does not name the region: $(cat "$work/err")"
gc gc "${where[@]}" --selector 'no-value='
[ "$rc" = 64 ] || fail "a selector without a value exited $rc"

gc_ok destroy -y "$work/keep.yaml"
requests_valid
note ok
