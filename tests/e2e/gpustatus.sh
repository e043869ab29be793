#!/usr/bin/env bash
# gpustatus.sh: `status --gpus` on a real emulator node (issue 15, item 5). A user with a
# 4-GPU node asks how its GPUs are doing: one line per GPU with its name, utilisation,
# memory, temperature and uncorrected ECC errors, and the node's Xid events from the kernel
# log, the same in JSON; once a GPU has a double-bit ECC error, both show it. Without
# --gpus, status is the cloud's view as before. Then the user who watches GPUs in Grafana
# turns on bootstrap.monitoring: dcgm (refused with its place while container is none), the
# next apply starts dcgm-exporter on the node, whose /metrics shows every GPU (and the ECC
# error), a third apply leaves it alone, and `monitoring` writes the Prometheus scrape
# config (YAML, file_sd JSON) for the cluster's nodes.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start_nodes --seed 7
case $CLOUD in
aws) TYPE4=g5.12xlarge ;;
alibaba) TYPE4=ecs.gn7i-c32g1.32xlarge ;;
tencent) TYPE4=GN7.20XLARGE320 ;;
esac
# gpus_spec FILE CONTAINER [MONITORING [MONITORING_ALLOW_FROM]]
gpus_spec() {
	{
		printf 'name: e2e-gpus\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' \
			"$CLOUD" "$REGION" "$ENDPOINT"
		printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
		printf '  - name: gpu\n    count: 1\n    instance_types: [%s]\n    image: gpu-ready\n' "$TYPE4"
		printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  container: %s\n' "$2"
		[ -z "${3:-}" ] || printf '  monitoring: %s\n' "$3"
		[ -z "${4:-}" ] || printf '  monitoring_allow_from: [%s]\n' "$4"
	} >"$1"
}
gpus_spec "$work/c.yaml" none
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

# 4. dcgm-exporter: refused without Docker, with its place; nothing runs
gpus_spec "$work/m.yaml" none dcgm
gc apply -y "$work/m.yaml"
[ "$rc" = 1 ] || fail "monitoring: dcgm with container: none exited $rc"
grep -q "m.yaml:18:15: error: bootstrap.monitoring: 'dcgm' needs container docker" "$work/err" ||
	fail "the monitoring error has no place: $(cat "$work/err")"
# the ECC fault repaired (a new GPU), then dcgm-exporter with Docker, scraped from the
# user's Prometheus at 198.51.100.7: the apply starts it and opens port 9400 to that range
control POST "/nodes/$id/faults" "" >/dev/null
gpus_spec "$work/m.yaml" docker dcgm 198.51.100.0/24
gc_ok apply -y "$work/m.yaml"
grep -q "gpu/0 $ID_RE: monitoring ok" "$work/err" || fail "apply: no monitoring step: $(cat "$work/err")"
# monitoring_rules: the group's TCP 9400 rules, as "CIDR DESCRIPTION" lines
monitoring_rules() {
	state
	jq -r --arg cloud "$CLOUD" '.security_groups[] | select(.cloud == $cloud)
		| select(.tags["gpucluster:cluster"] == "e2e-gpus") | .rules[]
		| select(.protocol == "tcp" and .from_port == 9400 and .to_port == 9400)
		| "\(.cidr) \(.description)"' "$work/state.json"
}
[ "$(monitoring_rules)" = "198.51.100.0/24 gpucluster monitoring" ] ||
	fail "port 9400's rules: $(monitoring_rules)"
gc_ok exec "$work/m.yaml" -- curl -sf http://127.0.0.1:9400/metrics
[ "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{gpu="[0-3]",UUID="GPU-' "$work/out")" = 4 ] ||
	fail "the exporter's metrics: $(head -c 2000 "$work/out")"
gc_ok exec "$work/m.yaml" -- \
	"sudo docker inspect -f '{{.HostConfig.RestartPolicy.Name}}' gpucluster-dcgm-exporter"
grep -qx 'unless-stopped' "$work/out" || fail "the exporter's restart policy: $(cat "$work/out")"
gc_ok apply -y "$work/m.yaml"
grep -q "monitoring ok" "$work/err" && fail "a third apply ran the monitoring step again"
[ "$(monitoring_rules)" = "198.51.100.0/24 gpucluster monitoring" ] ||
	fail "port 9400's rules after a third apply: $(monitoring_rules)"
# the exporter reads the GPUs live: a new ECC error shows on GPU 0 only
control POST "/nodes/$id/faults" ecc >/dev/null
gc_ok exec "$work/m.yaml" -- curl -sf http://127.0.0.1:9400/metrics
if ! grep -q '^DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="0",.*} [1-9]' "$work/out" ||
	! grep -q '^DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="1",.*} 0$' "$work/out"; then
	fail "the exporter does not show the ECC error: $(grep ECC "$work/out")"
fi

# 5. the scrape config for Prometheus: the node's exporter with its labels, in YAML and as
# a file_sd file, public or private addresses as hosts gives them
gc_ok hosts -o json "$work/m.yaml"
addr=$(jq -r '.nodes[0].address' "$work/out")
priv=$(jq -r '.nodes[0].private_address' "$work/out")
nid=$(jq -r '.nodes[0].id' "$work/out")
gc_ok monitoring "$work/m.yaml"
cat >"$work/want.yaml" <<EOF
scrape_configs:
  - job_name: "gpucluster-e2e-gpus"
    static_configs:
      - targets: ["$addr:9400"]
        labels:
          cluster: "e2e-gpus"
          node: "gpu/0"
          group: "gpu"
          instance_type: "$TYPE4"
          instance_id: "$nid"
EOF
diff "$work/want.yaml" "$work/out" >&2 || fail "monitoring: not the scrape config above"
gc_ok monitoring --format file-sd --private "$work/m.yaml"
jq -e --arg t "$priv:9400" --arg id "$nid" --arg type "$TYPE4" 'length == 1
	and .[0].targets == [$t] and .[0].labels == {cluster: "e2e-gpus", node: "gpu/0",
	group: "gpu", instance_type: $type, instance_id: $id}' "$work/out" >/dev/null ||
	fail "monitoring --format file-sd --private: $(cat "$work/out")"
gc monitoring -o json --format prometheus "$work/m.yaml"
[ "$rc" = 64 ] || fail "monitoring with -o json and --format prometheus exited $rc"

# 6. the Prometheus moved inside: without monitoring_allow_from the rule goes, nothing reruns
gpus_spec "$work/m.yaml" docker dcgm
gc_ok apply -y "$work/m.yaml"
[ -z "$(monitoring_rules)" ] || fail "port 9400's rule stayed: $(monitoring_rules)"
grep -q "monitoring ok" "$work/err" && fail "dropping the range ran the monitoring step again"

gc_ok destroy -y "$work/c.yaml"
note "ok"
