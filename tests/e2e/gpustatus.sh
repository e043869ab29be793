#!/usr/bin/env bash
# gpustatus.sh: `status --gpus` on a real emulator node (issue 15, item 5). A user with a
# 4-GPU node asks how its GPUs are doing: one line per GPU with its name, utilisation,
# memory, temperature and uncorrected ECC errors, and the node's Xid events from the kernel
# log, the same in JSON; once a GPU has a double-bit ECC error, both show it. Without
# --gpus, status is the cloud's view as before.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start_nodes --seed 7
case $CLOUD in
aws) TYPE4=g5.12xlarge ;;
alibaba) TYPE4=ecs.gn7i-c32g1.32xlarge ;;
tencent) TYPE4=GN7.20XLARGE320 ;;
esac
{
	printf 'name: e2e-gpus\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' \
		"$CLOUD" "$REGION" "$ENDPOINT"
	printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
	printf '  - name: gpu\n    count: 1\n    instance_types: [%s]\n    image: gpu-ready\n' "$TYPE4"
	printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  container: none\n'
} >"$work/c.yaml"
gc_ok apply -y "$work/c.yaml"

# 1. four healthy GPUs: the table and the JSON agree
gc_ok status --gpus "$work/c.yaml"
head -n 1 "$work/out" | grep -Eq '^NODE +GPU +NAME +UTIL +MEMORY \(MIB\) +TEMP +ECC +XID$' ||
	fail "status --gpus header: $(head -n 1 "$work/out")"
[ "$(grep -cE '^(gpu/0)? +[0-3] +[A-Z][A-Za-z0-9 -]+ +[0-9]+% ' "$work/out")" = 4 ] ||
	fail "not one line per GPU: $(cat "$work/out")"
grep -Eq '^gpu/0 +0 +[A-Z].* [0-9]+% +[0-9]+ / [0-9]+ +[0-9]+C +0 +0$' "$work/out" ||
	fail "the first GPU's line: $(cat "$work/out")"
gc_ok status --gpus -o json "$work/c.yaml"
jq -e '(.nodes | length) == 1 and .nodes[0].error == null and .nodes[0].xid_events == 0
	and (.nodes[0].gpus | length) == 4
	and ([.nodes[0].gpus[] | .memory_total_mib > 0 and .ecc_uncorrected == 0
		and .utilization_pct >= 0 and .temperature_c > 0] | all)' "$work/out" >/dev/null ||
	fail "status --gpus -o json: $(cat "$work/out")"

# 2. a double-bit ECC error on GPU 0: its count and the Xid event show
state
id=$(jq -r '[.instances[] | select(.tags["gpucluster:cluster"] == "e2e-gpus")
	| select((.state | ascii_downcase) == "running")][0].id' "$work/state.json")
control POST "/nodes/$id/faults" ecc >/dev/null
gc_ok status --gpus -o json "$work/c.yaml"
jq -e '.nodes[0].gpus[0].ecc_uncorrected > 0 and .nodes[0].gpus[1].ecc_uncorrected == 0
	and .nodes[0].xid_events >= 1' "$work/out" >/dev/null ||
	fail "the ECC error does not show: $(cat "$work/out")"

# 3. without --gpus: the cloud's view, no SSH needed
gc_ok status "$work/c.yaml"
grep -q "^gpu .*$TYPE4" "$work/out" || fail "plain status: $(cat "$work/out")"
gc_ok destroy -y "$work/c.yaml"
note "ok"
