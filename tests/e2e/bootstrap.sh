#!/usr/bin/env bash
# bootstrap.sh: apply -> bootstrap -> smoke on the emulator's real SSH nodes.
#
# Two fresh Ubuntu 22.04 nodes get the whole bootstrap, the driver's reboot included, and a
# smoke test labelled simulated; a second apply skips every step in seconds; a changed
# bootstrap.cuda reruns cuda and what follows, nothing before; a cluster on the GPU-ready
# image with `driver: preinstalled` is bootstrapped with nothing installed (its package
# list unchanged); exec prints one block per node; ssh logs in with the pinned key; an ECC
# fault fails `smoke` naming the check and `apply --replace-unhealthy` replaces that node;
# a changed host key is refused; a node that never answers SSH fails after the --ssh-wait
# bound with a clear error.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# Instances in launch order: 1-2 workers, 3 the GPU-ready node, 4 the replacement of an
# unhealthy worker, 5 the worker of the last case, which never listens on SSH.
sim_start_nodes --node-fault 'no-ssh,call=5'
t0=$SECONDS
lap() { note "$1 ($((SECONDS - t0)) s)"; }

# boot_spec FILE NAME IMAGE DRIVER CUDA: a cluster of 2 nodes
boot_spec() {
	{
		printf 'name: %s\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' "$2" \
			"$CLOUD" "$REGION" "$ENDPOINT"
		printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
		if [ "$3" = gpu-ready ]; then
			printf '  - name: ready\n    count: 1\n    instance_types: [%s]\n' "$TYPE_READY"
		else
			printf '  - name: workers\n    count: 2\n    instance_types: [%s]\n' "$TYPE1"
		fi
		printf '    image: %s\nbootstrap:\n  driver: "%s"\n  cuda: "%s"\n' "$3" "$4" "$5"
	} >"$1"
}

boot_spec "$work/c.yaml" e2e-boot ubuntu-22.04 570 12.8
gc_ok apply -y "$work/c.yaml"
for n in 0 1; do
	for s in detect driver cuda cudnn container smoke; do
		grep -q "workers/$n $ID_RE: $s ok" "$work/err" ||
			fail "apply: step '$s' did not run on workers/$n"
	done
	grep -q "workers/$n .*: driver ok (.*1 reboot)" "$work/err" ||
		fail "apply: the driver did not reboot workers/$n"
	grep -q "^workers/$n .* ok (simulated)$" "$work/out" ||
		fail "apply: no smoke row for workers/$n labelled simulated"
done
grep -q '(simulated): figures from' "$work/out" || fail "apply: simulated figures not explained"
# nothing was trusted on first use: every pin came from the console or the key given at
# launch, and on a cloud without console output the pinned keys are the tagged ones
grep -qi 'first use' "$work/err" && fail "apply trusted a host key on first use"
kh=$GPUCLUSTER_STATE_DIR/clusters/$CLOUD/$REGION/e2e-boot/known_hosts
if [ "$HAS_CONSOLE" = 0 ]; then
	state
	jq -r '.instances[] | select(.tags["gpucluster:cluster"] == "e2e-boot")
		| .tags["gpucluster:host-key"] | split(" ")[1]' "$work/state.json" | sort >"$work/tagged"
	awk '/gpucluster:instance=/ { print $3 }' "$kh" | sort >"$work/pinned"
	if [ ! -s "$work/tagged" ] || ! cmp -s "$work/tagged" "$work/pinned"; then
		fail "the pinned host keys are not the ones given at launch"
	fi
fi
lap "two fresh nodes bootstrapped, reboots included; smoke ok"

# a second apply: no changes, every step skipped, smoke too (it passed since the last boot
# and nothing before it changed), in seconds
t=$SECONDS
gc_ok apply -y -o json "$work/c.yaml"
[ $((SECONDS - t)) -le 10 ] || fail "the second apply took $((SECONDS - t)) s"
jq -e '.created == [] and (.bootstrap.nodes | length) == 2 and .bootstrap.failed == 0
	and all(.bootstrap.nodes[]; [.steps[] | .state]
		== ["skipped", "skipped", "skipped", "skipped", "skipped", "skipped"]
		and .smoke.ok and .smoke.earlier and (.smoke.ran | not) and .host_key == "pinned")' \
	"$work/out" >/dev/null || fail "second apply: $(cat "$work/out")"
[ "$(grep -c 'skipped: done before' "$work/err")" = 12 ] || fail "second apply: not 2 x 6 steps skipped"
lap "second apply skipped every step in $((SECONDS - t)) s"

# the smoke command always tests again, with figures
gc_ok smoke -o json "$work/c.yaml"
jq -e '(.nodes | length) == 2 and all(.nodes[]; .smoke.ran and .smoke.ok and .smoke.simulated)' \
	"$work/out" >/dev/null || fail "smoke after the second apply: $(cat "$work/out")"

# a changed CUDA version: cuda and every later step again, nothing before
boot_spec "$work/c.yaml" e2e-boot ubuntu-22.04 570 12.4
gc_ok bootstrap -o json "$work/c.yaml"
jq -e '(.nodes | length) == 2 and .failed == 0 and all(.nodes[];
	[.steps[] | .state] == ["skipped", "skipped", "ok", "ok", "ok", "ok"]
	and .smoke.ok and .smoke.cuda_runtime == "12.4")' "$work/out" >/dev/null ||
	fail "bootstrap after the CUDA change: $(cat "$work/out")"
gc bootstrap --from drvier "$work/c.yaml"
[ "$rc" = 64 ] || fail "bootstrap --from an unknown step exited $rc"
grep -q "did you mean 'driver'" "$work/err" || fail "no suggestion for a misspelt step"
lap "the CUDA change reran cuda, cudnn, container and smoke only"

# the GPU-ready image with driver: preinstalled: verified, nothing installed
boot_spec "$work/r.yaml" e2e-ready gpu-ready preinstalled 12.8
gc_ok apply -y --no-bootstrap "$work/r.yaml"
grep -q '^bootstrap:' "$work/err" && fail "apply --no-bootstrap bootstrapped"
gc_ok ssh "$work/r.yaml" ready/0 -- dpkg-query -W
cp "$work/out" "$work/packages.before"
grep -q '^nvidia-' "$work/packages.before" || fail "the GPU-ready image lists no NVIDIA package"
gc_ok bootstrap -o json "$work/r.yaml"
jq -e '(.nodes | length) == 1 and .nodes[0].node == "ready/0" and .nodes[0].ok
	and ([.nodes[0].steps[] | .state] | all(. == "ok"))
	and .nodes[0].smoke.ok and .nodes[0].smoke.simulated
	and (.nodes[0].smoke.gpus | length) == 1 and .nodes[0].host_key == "pinned"' \
	"$work/out" >/dev/null || fail "bootstrap of the GPU-ready node: $(cat "$work/out")"
gc_ok ssh "$work/r.yaml" ready/0 -- dpkg-query -W
cmp -s "$work/packages.before" "$work/out" ||
	fail "the bootstrap installed packages on the GPU-ready image: $(diff "$work/packages.before" "$work/out")"
gc_ok destroy -y "$work/r.yaml"
lap "GPU-ready node verified, nothing installed"

# exec: one block per node, in the cluster's order, never mixed
gc_ok exec "$work/c.yaml" -- uname -r
awk -v id="$ID_RE" 'NR % 2 == 1 && $0 !~ "^== " id " \\(workers/" (NR - 1) / 2 "\\) exit 0 ==$" { exit 1 }
	NR % 2 == 0 && !/^[0-9]+\.[0-9]+\.[0-9]+-/ { exit 1 }
	END { exit NR != 4 }' "$work/out" || fail "exec: not one header + output block per node"
gc exec "$work/c.yaml" -- exit 3
[ "$rc" = 1 ] || fail "exec of a failing command exited $rc"
[ "$(grep -c "^== $ID_RE (workers/[01]) exit 3 ==\$" "$work/out")" = 2 ] ||
	fail "exec: exit 3 not shown per node"

# ssh with the pinned key and the cluster's known_hosts only
gc_ok ssh "$work/c.yaml" workers/1 -- cat /proc/sys/kernel/random/boot_id
grep -Eq '^[0-9a-f-]{36}$' "$work/out" || fail "ssh printed no boot id"
lap "exec and ssh"

# an ECC fault: smoke fails naming the check; --replace-unhealthy replaces the node
# workers/0 as gpucluster numbers it (launch order as the cloud reports it, then id)
gc_ok hosts --format json "$work/c.yaml"
bad=$(jq -r '.nodes[] | select(.label == "workers/0") | .id' "$work/out")
[ -n "$bad" ] || fail "hosts does not list workers/0"
control POST "/nodes/$bad/faults" ecc >/dev/null
gc smoke "$work/c.yaml"
[ "$rc" = 1 ] || fail "smoke on a node with ECC errors exited $rc"
grep -q "$bad (workers/0): smoke test failed: ecc: GPU 0: 2 uncorrectable ECC errors" "$work/err" ||
	fail "smoke does not name the ECC check"
grep -q "^workers/0 .*FAILED: ecc, xid (simulated)$" "$work/out" || fail "the smoke table does not show the failed checks"
grep -q "^workers/1 .*ok (simulated)$" "$work/out" || fail "the healthy node is not ok"
gc_ok apply -y --replace-unhealthy "$work/c.yaml"
grep -q "replacing 1 unhealthy node: $bad" "$work/err" || fail "apply did not replace $bad"
gone "$bad" || fail "the unhealthy node is $(instance_state "$bad")"
expect_alive e2e-boot 2 "after the replacement"
state
new=$(jq -r --arg bad "$bad" '[.instances[] | select(.tags["gpucluster:cluster"] == "e2e-boot")
	| select((.state | ascii_downcase) == "running") | select(.id != $bad)]
	| sort_by(.launch_time) | last | .id' "$work/state.json")
grep -q "workers/[01] $new: driver ok (.*1 reboot)" "$work/err" ||
	fail "the new node $new was not bootstrapped"
lap "ECC fault reported by smoke; the node replaced"

# a changed host key for a known instance is refused, by ssh and by the runner
cp "$kh" "$work/kh.good"
ssh-keygen -q -t ed25519 -N '' -C other -f "$work/other"
# every pinned host now has another (valid) key than the one its node shows
awk -v k="$(cut -d' ' -f2 "$work/other.pub")" '/gpucluster:instance=/ { $3 = k } { print }' \
	"$work/kh.good" >"$kh"
gc ssh "$work/c.yaml" workers/0 -- true
[ "$rc" = 255 ] || fail "ssh with a changed host key exited $rc"
grep -qi 'host key verification failed' "$work/err" || fail "ssh did not refuse the changed key"
gc smoke "$work/c.yaml"
[ "$rc" = 1 ] || fail "smoke with a changed host key exited $rc"
grep -q 'host key for .* changed (expected SHA256:.*, got SHA256:' "$work/err" ||
	fail "smoke does not say the host key changed"
cp "$work/kh.good" "$kh"
lap "changed host key refused"

# a node that never answers SSH: a bounded wait and a clear error
t=$SECONDS
gc scale -y --ssh-wait 5 -f "$work/c.yaml" workers=3
[ "$rc" = 1 ] || fail "scale onto a node without SSH exited $rc"
[ $((SECONDS - t)) -le 40 ] || fail "the wait for SSH took $((SECONDS - t)) s"
grep -Eq '\(workers/2\): no SSH on 127\.77\.[0-9.]+:[0-9]+ after [1-5] s \([0-9]+ attempts\)' \
	"$work/err" || fail "no clear error for the node without SSH"
grep -q '^workers/2 .* FAILED: did not run$' "$work/out" || fail "the smoke table lacks the failed node"
if [ "$HAS_CONSOLE" = 1 ]; then
	grep -q 'the end of its console output:' "$work/err" ||
		fail "no console output for the node without SSH"
fi
state
jq -e '[.instances[] | select(.node_faults == ["no-ssh"]) | select((.state | ascii_downcase) == "running")]
	| length == 1' "$work/state.json" >/dev/null || fail "the no-ssh node is not the new one"
lap "node without SSH: failed after the bound"

gc_ok destroy -y "$work/c.yaml"
expect_alive e2e-boot 0 "after destroy"
requests_valid
note "ok ($((SECONDS - t0)) s)"
