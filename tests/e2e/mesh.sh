#!/usr/bin/env bash
# mesh.sh: a cluster that reaches itself, and `run` for distributed jobs (issue 13).
#
# Two SSH nodes on the GPU-ready image. `run` gives every rank torchrun's PET_* variables
# next to the rank variables, with the first node's private address as the master; it is
# fail-fast (rank 1 exits 1 at once: rank 0, which would sleep on, is stopped and its
# command killed on the node, and the exit names rank 1); `--on node0` launches on the
# first node only, with the whole cluster's variables.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start_nodes --seed 7
t0=$SECONDS
lap() { note "$1 ($((SECONDS - t0)) s)"; }

{
	printf 'name: e2e-mesh\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' \
		"$CLOUD" "$REGION" "$ENDPOINT"
	printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
	printf '  - name: workers\n    count: 2\n    instance_types: [%s]\n' "$TYPE_READY"
	printf '    image: gpu-ready\n'
	printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  container: none\n'
} >"$work/m.yaml"
gc_ok apply -y "$work/m.yaml"
lap "applied"

state
jq -r '[.instances[] | select(.tags["gpucluster:cluster"] == "e2e-mesh")
	| select((.state | ascii_downcase) == "running")] | sort_by(.launch_time, .id)
	| .[] | "\(.id) \(.public_ip) \(.private_ip)"' "$work/state.json" >"$work/nodes"
[ "$(wc -l <"$work/nodes")" = 2 ] || fail "expected 2 running nodes: $(cat "$work/nodes")"
mapfile -t priv < <(cut -d' ' -f3 "$work/nodes")

# the mesh: the launchers' files with private addresses, on every node
gc_ok exec "$work/m.yaml" -- 'cat /etc/gpucluster/hostfile /etc/gpucluster/deepspeed_hostfile /etc/gpucluster/hosts'
for ip in "${priv[@]}"; do
	[ "$(grep -c "^$ip slots=1\$" "$work/out")" = 4 ] ||
		fail "$ip is not in both hostfiles of both nodes: $(cat "$work/out")"
	[ "$(grep -c "^$ip\$" "$work/out")" = 2 ] || fail "$ip is not in both plain lists"
done
# node 0 reaches node 1 by private address and by name, with the internal key and pins
# shellcheck disable=SC2016 # expanded by the node's shell
gc_ok run --no-apply --on node0 "$work/m.yaml" -- "ssh ${priv[1]} 'echo via-ip \$(hostname)'; ssh workers-1 echo via-name"
grep -q '^\[workers/0\] via-ip ' "$work/out" || fail "ssh from node 0 to ${priv[1]}: $(cat "$work/out" "$work/err")"
grep -q '^\[workers/0\] via-name$' "$work/out" || fail "ssh from node 0 to workers-1: $(cat "$work/out" "$work/err")"
# mpirun over the hostfile: one rank on each node, started over ssh
# shellcheck disable=SC2016 # expanded by the nodes' shell
gc_ok run --no-apply --on node0 "$work/m.yaml" -- \
	'mpirun --hostfile /etc/gpucluster/hostfile sh -c "echo rank \$OMPI_COMM_WORLD_RANK of \$OMPI_COMM_WORLD_SIZE on \$(cat /etc/hostname 2>/dev/null || hostname)"'
[ "$(grep -c '^\[workers/0\] rank [01] of 2 on ' "$work/out")" = 2 ] || fail "mpirun: $(cat "$work/out" "$work/err")"
[ "$(grep '^\[workers/0\] rank' "$work/out" | awk '{print $NF}' | sort -u | wc -l)" = 2 ] ||
	fail "mpirun's ranks ran on one node: $(cat "$work/out")"
# the internal key is not the user's: the user's private key is nowhere on the nodes
ukey=$(find "$GPUCLUSTER_STATE_DIR" -name id_ed25519.pub | head -1)
[ -n "$ukey" ] || fail "no user key in the state directory"
gc_ok exec "$work/m.yaml" -- 'cut -d" " -f2 ~/.ssh/gpucluster_mesh.pub; ls ~/.ssh'
grep -q "$(cut -d' ' -f2 "$ukey")" "$work/out" && fail "the internal key is the user's key"
grep -q 'id_' "$work/out" && fail "a private key other than the internal one is on a node: $(cat "$work/out")"
[ "$(grep -c '^gpucluster_mesh$' "$work/out")" = 2 ] || fail "the internal key is not on every node"
lap "the mesh: hostfiles, ssh by private address and name, mpirun, with the internal key"

# a boot clears the node's /run, but not the private network every node of the region shares
# there: after node 1 reboots (its boot runs once node 0 is up), node 0 still reaches itself
# and node 1 by private address (a boot used to delete the other nodes' sockets)
# shellcheck disable=SC2016 # expanded by the node's shell
gc run --no-apply "$work/m.yaml" -- '[ "$NODE_RANK" != 1 ] || sudo reboot'
for _ in $(seq 1 80); do
	gc run --no-apply --on node0 "$work/m.yaml" -- "ssh ${priv[0]} echo self-ok; ssh ${priv[1]} echo other-ok"
	grep -q '^\[workers/0\] other-ok$' "$work/out" && break
	sleep 0.25
done
grep -q '^\[workers/0\] other-ok$' "$work/out" || fail "node 1 did not come back: $(cat "$work/out" "$work/err")"
grep -q '^\[workers/0\] self-ok$' "$work/out" ||
	fail "after node 1's boot, node 0 cannot reach its own private address: $(cat "$work/out" "$work/err")"
lap "node 1 rebooted: the private network still reaches both nodes"

# hosts --private: the same private addresses here, and which file on the nodes is whose
gc_ok hosts --private --format deepspeed "$work/m.yaml"
printf '%s slots=1\n' "${priv[@]}" | diff - "$work/out" >&2 || fail "hosts --private is not as expected"
grep -q '/etc/gpucluster/hostfile  *mpirun --hostfile' "$work/err" || fail "hosts --private names no files: $(cat "$work/err")"
grep -q '/etc/gpucluster/deepspeed_hostfile  *deepspeed --hostfile' "$work/err" || fail "no DeepSpeed file named"
gc hosts --private --format torchrun "$work/m.yaml"
[ "$rc" = 64 ] || fail "hosts --private --format torchrun exited $rc"
lap "hosts --private"

# torchrun's PET_* variables, the master the first node's private address
# shellcheck disable=SC2016 # expanded by the nodes' shell
gc_ok run --no-apply "$work/m.yaml" -- \
	'echo "pet $PET_NNODES $PET_NODE_RANK $PET_MASTER_ADDR $PET_MASTER_PORT $PET_NPROC_PER_NODE $MASTER_ADDR"'
for r in 0 1; do
	grep -q "^\[workers/$r\] pet 2 $r ${priv[0]} 29500 [0-9]* ${priv[0]}\$" "$work/out" ||
		fail "rank $r has no PET_* variables: $(cat "$work/out")"
done
lap "PET_* variables, MASTER_ADDR the private address of rank 0"

# fail-fast: rank 1 fails at once, rank 0 would sleep 60 s: stopped, and the exit says rank 1
t1=$SECONDS
# shellcheck disable=SC2016 # expanded by the nodes' shell
gc run --no-apply "$work/m.yaml" -- \
	'if [ "$NODE_RANK" = 1 ]; then echo failing; exit 1; fi; sleep 60; touch ~/rank0-finished'
[ "$rc" = 1 ] || fail "a failing rank: run exited $rc"
[ $((SECONDS - t1)) -lt 40 ] || fail "rank 0 was not stopped: run took $((SECONDS - t1)) s"
grep -q "workers/1 ($ID_RE): exit 1" "$work/err" || fail "the failure of rank 1 is not reported"
grep -q "rank 1 (workers/1) failed: stopping the other 1 rank" "$work/err" ||
	fail "the exit does not name rank 1: $(cat "$work/err")"
grep -q "workers/0 ($ID_RE): exit" "$work/err" && fail "rank 0 is reported as failed on its own"
grep -q "may still run" "$work/err" && fail "rank 0 was not stopped on its node: $(cat "$work/err")"
gc_ok exec "$work/m.yaml" -- 'pgrep -f "sleep 60" >/dev/null && echo running || echo gone'
[ "$(grep -c 'gone$' "$work/out")" = 2 ] || fail "rank 0's command still runs: $(cat "$work/out")"
lap "fail-fast: rank 1 exits 1, rank 0 stopped"

# --on node0: the command runs once, on the first node, with the whole cluster's variables
# shellcheck disable=SC2016 # expanded by the nodes' shell
gc_ok run --no-apply --on node0 "$work/m.yaml" -- 'echo "once $NNODES $NODE_RANK $GPUCLUSTER_NODE"'
[ "$(grep -c once "$work/out")" = 1 ] || fail "--on node0 ran on more than one node: $(cat "$work/out")"
grep -qx '\[workers/0\] once 2 0 workers/0' "$work/out" || fail "--on node0: $(cat "$work/out")"
gc run --no-apply --on nowhere "$work/m.yaml" -- true
[ "$rc" = 64 ] || fail "--on nowhere exited $rc"
lap "--on node0"

gc_ok destroy -y "$work/m.yaml"
expect_alive e2e-mesh 0 "after destroy"
requests_valid
note "ok ($((SECONDS - t0)) s)"
