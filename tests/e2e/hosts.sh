#!/usr/bin/env bash
# hosts.sh: `gpucluster hosts` on a real emulator cluster with SSH nodes.
#
# Two multi-GPU nodes on the GPU-ready image and one node of a type without GPUs: the MPI
# and DeepSpeed hostfiles give each node's address with slots = its type's GPUs (1 for
# none), in the order of `exec` (the spec's groups, then launch order); the generated
# ssh-config logs in with OpenSSH's own client, with strict host key checking against the
# cluster's pins, by label, by id and by address, and so does Ansible with the inventory
# (where it is installed); the torchrun variables of one node match the JSON document; a
# changed pin makes that same ssh refuse.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start_nodes --seed 7
t0=$SECONDS

# a type with 4 GPUs and one without any, in this cloud's catalogue
case $CLOUD in
aws) TYPE4=g5.12xlarge TYPE0=t3.medium ;;
alibaba) TYPE4=ecs.gn7i-c32g1.32xlarge TYPE0=ecs.g7.large ;;
tencent) TYPE4=GN7.20XLARGE320 TYPE0=S5.MEDIUM4 ;;
esac

# the quickest bootstrap there is: the image's driver verified, nothing installed
{
	printf 'name: e2e-hosts\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' \
		"$CLOUD" "$REGION" "$ENDPOINT"
	printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
	printf '  - name: gpu\n    count: 2\n    instance_types: [%s]\n    image: gpu-ready\n' "$TYPE4"
	printf '  - name: cpu\n    count: 1\n    instance_types: [%s]\n    image: gpu-ready\n' "$TYPE0"
	printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  container: none\n'
} >"$work/c.yaml"
gc_ok apply -y "$work/c.yaml"
note "applied and bootstrapped ($((SECONDS - t0)) s)"

# the nodes as the cloud has them, in the order gpucluster labels them
state
jq -r --arg c e2e-hosts '[.instances[] | select(.tags["gpucluster:cluster"] == $c)
	| select((.state | ascii_downcase) == "running")] | sort_by(.tags["gpucluster:group"] != "gpu", .launch_time, .id)
	| .[] | "\(.id) \(.public_ip) \(.private_ip)"' "$work/state.json" >"$work/nodes"
[ "$(wc -l <"$work/nodes")" = 3 ] || fail "expected 3 running nodes: $(cat "$work/nodes")"
mapfile -t ids < <(cut -d' ' -f1 "$work/nodes")
mapfile -t pub < <(cut -d' ' -f2 "$work/nodes")
mapfile -t priv < <(cut -d' ' -f3 "$work/nodes")

# MPI: a comment, then ADDRESS slots=GPUs; DeepSpeed: the same lines, no comment
gc_ok hosts "$work/c.yaml"
printf '%s slots=4\n%s slots=4\n%s slots=1\n' "${pub[0]}" "${pub[1]}" "${pub[2]}" >"$work/want"
grep -v '^#' "$work/out" | diff "$work/want" - >&2 || fail "the MPI hostfile is not as expected"
[ "$(grep -c '^#' "$work/out")" = 1 ] || fail "the MPI hostfile has no header comment"
gc_ok hosts --format deepspeed "$work/c.yaml"
diff "$work/want" "$work/out" >&2 || fail "the DeepSpeed hostfile is not as expected"

# ssh-config, written atomically with mode 0600; OpenSSH logs in with exactly our pins
gc_ok hosts --format ssh-config --output-file "$work/ssh_config" "$work/c.yaml"
[ "$(stat -c %a "$work/ssh_config")" = 600 ] || fail "ssh-config mode $(stat -c %a "$work/ssh_config")"
grep -q "^hosts: 3 nodes (ssh-config) in $work/ssh_config\$" "$work/err" || fail "no note of the file"
[ ! -s "$work/out" ] || fail "hosts --output-file printed on stdout"
for name in gpu/0 "${ids[1]}" "${pub[2]}"; do
	ssh -F "$work/ssh_config" -o BatchMode=yes -o ConnectTimeout=10 "$name" \
		cat /proc/sys/kernel/random/boot_id >"$work/boot" 2>"$work/ssh.err" ||
		fail "ssh -F ssh_config $name: $(cat "$work/ssh.err")"
	grep -Eq '^[0-9a-f-]{36}$' "$work/boot" || fail "ssh -F $name printed no boot id"
done
grep -q 'StrictHostKeyChecking yes' "$work/ssh_config" || fail "ssh-config is not strict"

# torchrun: one node's exports, the same figures as the JSON document
gc_ok hosts --format torchrun --node gpu/1 --master-port 29600 "$work/c.yaml"
printf 'export %s\n' "MASTER_ADDR=${priv[0]}" MASTER_PORT=29600 NNODES=3 NODE_RANK=1 \
	NPROC_PER_NODE=4 >"$work/want"
diff "$work/want" "$work/out" >&2 || fail "torchrun --node gpu/1 is not as expected"
gc_ok hosts -o json "$work/c.yaml"
jq -e --arg a "${ids[0]}" --arg m "${priv[0]}" '.cluster == "e2e-hosts" and .master_addr == $m
	and ([.nodes[] | .label] == ["gpu/0", "gpu/1", "cpu/0"])
	and ([.nodes[] | .slots] == [4, 4, 1]) and ([.nodes[] | .gpus] == [4, 4, 0])
	and .nodes[0].id == $a and all(.nodes[]; .host_key_pinned and .user == "ubuntu")' \
	"$work/out" >/dev/null || fail "hosts -o json: $(cat "$work/out")"
gc hosts --format mpi --node gpu/0 "$work/c.yaml"
[ "$rc" = 64 ] || fail "--node with the mpi format exited $rc"

# the Ansible inventory: a group per node group, the same trust
gc_ok hosts --format ansible --output-file "$work/inventory" "$work/c.yaml"
for g in gpu cpu; do
	grep -q "^\[$g\]\$" "$work/inventory" || fail "the inventory has no group '$g'"
done
command -v ansible >/dev/null || fail "ansible is not installed (scripts/install-deps.sh installs ansible-core)"
ANSIBLE_HOST_KEY_CHECKING=True ansible -i "$work/inventory" gpu -m raw \
	-a 'cat /proc/sys/kernel/random/boot_id' >"$work/ansible.out" 2>&1 ||
	fail "ansible -i inventory gpu: $(cat "$work/ansible.out")"
[ "$(grep -c '| CHANGED | rc=0' "$work/ansible.out")" = 2 ] ||
	fail "ansible did not reach both gpu nodes: $(cat "$work/ansible.out")"

# the same ssh refuses a node whose pin changed
kh=$GPUCLUSTER_STATE_DIR/clusters/$CLOUD/$REGION/e2e-hosts/known_hosts
ssh-keygen -q -t ed25519 -N '' -C other -f "$work/other"
awk -v k="$(cut -d' ' -f2 "$work/other.pub")" '/gpucluster:instance=/ { $3 = k } { print }' \
	"$kh" >"$work/kh.bad"
cp "$work/kh.bad" "$kh"
if ssh -F "$work/ssh_config" -o BatchMode=yes gpu/0 true 2>"$work/ssh.err"; then
	fail "ssh -F accepted a changed host key"
fi
grep -qi 'host key verification failed' "$work/ssh.err" || fail "ssh: $(cat "$work/ssh.err")"

gc_ok destroy -y "$work/c.yaml"
expect_alive e2e-hosts 0 "after destroy"
requests_valid
note "ok ($((SECONDS - t0)) s)"
