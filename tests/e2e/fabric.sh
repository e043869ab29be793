#!/usr/bin/env bash
# fabric.sh: a user's journey with a fast network between the nodes of a group (issue 13,
# item 1; docs/internals/fabric.md). API-only emulator. A 2 x 8-GPU group whose type has
# RDMA interfaces (EFA, ERI, an HCC type's RDMA network) asks for interconnect rdma and
# placement cluster. First the wrong specs a user writes: rdma on a type without it, more
# interfaces than the type takes, a cluster placement over two zones; plan and apply fail
# with the key's LINE:COL and create nothing. Then the fixed spec applies and destroys.
# Last, on SSH nodes, the bootstrap's fabric step (its installer, check and failure).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# CREATE/DELETE/LAUNCH: the placement resource's actions and RunInstances' parameter
# (docs/internals/fabric.md); empty where the driver makes none yet
case $CLOUD in
aws)
	FAST=p4d.24xlarge MAX=4 WORD=EFA
	CREATE=CreatePlacementGroup DELETE=DeletePlacementGroup LAUNCH=Placement.GroupName
	;;
alibaba)
	FAST=ecs.ebmgn7ex.32xlarge MAX=2 WORD=ERI
	CREATE=CreateDeploymentSet DELETE=DeleteDeploymentSet LAUNCH=DeploymentSetId
	;;
tencent)
	FAST=HCCPNV4h.48XLARGE1152 MAX=1 WORD=RDMA
	CREATE=CreateHpcCluster DELETE=DeleteHpcClusters LAUNCH=HpcClusterId
	;;
esac

# addresses CLUSTER [ATTACHED]: the emulator's public addresses tagged with CLUSTER (only
# those attached to a live instance of it with ATTACHED=1)
addresses() {
	state
	jq --arg c "$1" --arg cloud "$CLOUD" --arg a "${2:-0}" '[.instances[]
		| select(.tags["gpucluster:cluster"] == $c) | .id] as $live
		| [.addresses[] | select(.cloud == $cloud) | select(.tags["gpucluster:cluster"] == $c)
		| select($a == "0" or (.instance as $i | $live | index($i)))] | length' \
		"$work/state.json"
}

# placements CLUSTER: the emulator's placement resources tagged with CLUSTER (an ECS
# deployment set takes no tags: its description carries them as key=value words)
placements() {
	state
	jq --arg c "$1" --arg cloud "$CLOUD" '[.placements[] | select(.cloud == $cloud)
		| select(.tags["gpucluster:cluster"] == $c or
			((.description // "") | split(" ") | index("gpucluster:cluster=" + $c)))]
		| length' "$work/state.json"
}

sim_start --no-rate-limits
f=$work/c.yaml
# SPEC TYPE ZONES KEYS...: the journey's spec, with these group keys after disk_gb (line 16)
fabric_spec() {
	local out=$1 type=$2 zones=$3
	shift 3
	spec "$out.base" e2e-fab workers "${COUNT:-2}" "$type"
	{
		sed -n '1,11p' "$out.base"
		printf '    zones: [%s]\n' "$zones"
		sed -n '13,15p' "$out.base"
		printf '    %s\n' "$@"
		sed -n '16,$p' "$out.base"
	} >"$out"
}


# refused WHAT POS MESSAGE: plan and apply -y fail with FILE:POS: MESSAGE, once, nothing
# made, no placement group left
no_placement() { [ "$(placements e2e-fab)" = 0 ] || fail "$1 left a placement group"; }
refused() { spec_refused e2e-fab "$f" "$@" no_placement; }

Z=${ZONES[0]}
# a fast network on a type without one
fabric_spec "$f" "$TYPE1" "$Z" "interconnect: rdma" "placement: cluster"
refused "rdma on $TYPE1" 16:19 "instance type '$TYPE1' has no $WORD interfaces"

# more interfaces than the type takes
fabric_spec "$f" "$FAST" "$Z" "interconnect: rdma" "interfaces: 64" "placement: cluster"
refused "64 interfaces" 17:17 "interfaces 64: instance type '$FAST' takes at most $MAX $WORD"

# a cluster placement over two zones
fabric_spec "$f" "$FAST" "$Z,${ZONES[1]}" "interconnect: rdma" "placement: cluster"
refused "a cluster over two zones" "12:$((14 + ${#Z}))" "placement cluster keeps the group in one zone"

# an HCC type outside an HPC cluster, which CVM refuses (InstanceTypeRequiredHpcCluster)
if [ "$CLOUD" = tencent ]; then
	fabric_spec "$f" "$FAST" "$Z" "interconnect: rdma"
	refused "an HCC type without placement cluster" 11:22 \
		"instance type '$FAST' runs only in an HPC cluster; set placement: cluster"
fi

# interfaces with the standard network: a spec error
fabric_spec "$f" "$FAST" "$Z" "interconnect: standard" "interfaces: 1"
refused "interfaces on the standard network" 17:17 "only allowed with interconnect rdma or auto"

if [ -n "$CREATE" ]; then
	# more nodes than the emulator's placement group holds (8): the launch fails inside the
	# group, and the first apply removes the placement group it made with the rest
	COUNT=9 fabric_spec "$f" "$FAST" "$Z" "interconnect: rdma" "placement: cluster"
	gc apply -y "$f"
	[ "$rc" != 0 ] || fail "9 nodes in one placement group applied"
	# classified as the placement group's capacity, not the zone's
	grep -qF "capacity exhausted in placement group 'gpucluster-e2e-fab-workers' in $Z/$FAST/" \
		"$work/err" || fail "the error does not name the full placement group: $(cat "$work/err")"
	if [ "$(calls "$CREATE")" != 1 ] || [ "$(calls "$DELETE")" != 1 ]; then
		fail "the failed first apply did not make and remove one placement group: $(cat "$work/err")"
	fi
	[ "$(placements e2e-fab)" = 0 ] || fail "the failed first apply left its placement group"
	[ "$(owned_resources e2e-fab)" = 0 ] || fail "the failed first apply left its key pair or group"
	# a type the placement group does not take (the emulator's unsupported fault answers the
	# cloud's code, fabric.md): said in one line, classified as the placement group's, not
	# a refusal that stops the apply, and the first apply removes the placement group
	fault "$CLOUD:RunInstances:unsupported,type=$FAST"
	fabric_spec "$f" "$FAST" "$Z" "interconnect: rdma" "placement: cluster"
	gc apply -y "$f"
	[ "$rc" != 0 ] || fail "a type the placement group does not take applied"
	grep -qF "$FAST cannot launch in placement group 'gpucluster-e2e-fab-workers': " \
		"$work/err" || fail "apply does not say the type cannot go in: $(cat "$work/err")"
	grep -qF "capacity exhausted in placement group 'gpucluster-e2e-fab-workers' in $Z/$FAST/" \
		"$work/err" || fail "the error does not name the placement group: $(cat "$work/err")"
	[ "$(placements e2e-fab)" = 0 ] || fail "the failed first apply left its placement group"
	faults_clear
fi
made0=$(calls "$CREATE") gone0=$(calls "$DELETE")

# fixed: it applies, in one zone. On AWS the placement group has no room for the first type
# (a capacity fault on it: InsufficientInstanceCapacity with a group), so the next of
# instance_types launches in the same group, and apply says why (fabric.md)
types=$FAST
if [ "$CLOUD" = aws ]; then
	fault "aws:RunInstances:capacity,type=$FAST"
	types="$FAST, p5.48xlarge"
fi
fabric_spec "$f" "$types" "$Z" "interconnect: rdma" "interfaces: $MAX" "placement: cluster"
gc_ok plan "$f"
if [ "$CLOUD" = aws ]; then
	# EC2 gives a node launched with several interfaces no public address: each gets an
	# Elastic IP, tagged at allocation. The apply stops between allocating and attaching
	# them: it fails saying so, and what it allocated carries the cluster's tag.
	fault "aws:AssociateAddress:quota"
	gc apply -y "$f"
	[ "$rc" != 0 ] || fail "an apply whose addresses could not be attached succeeded"
	grep -q "cannot attach public address 127\.78\..* to instance 'i-" "$work/err" ||
		fail "the apply does not say which address it could not attach: $(cat "$work/err")"
	[ "$(addresses e2e-fab) $(addresses e2e-fab 1)" = "2 0" ] ||
		fail "not 2 tagged, unattached addresses after the failed attach"
	# the same apply met the full placement group first, and fell back
	grep -qF "no capacity in $Z/$FAST/on-demand: no room in placement group 'gpucluster-e2e-fab-workers'" \
		"$work/err" || fail "apply does not say the placement group is full: $(cat "$work/err")"
	grep -qF "no room for $FAST in placement group 'gpucluster-e2e-fab-workers'; trying p5.48xlarge" \
		"$work/err" || fail "apply does not say it falls back to p5.48xlarge: $(cat "$work/err")"
	faults_clear
fi
gc_ok apply -y "$f"
expect_alive e2e-fab 2 "the fixed spec"
expect_owned e2e-fab "the fixed spec"
if [ "$CLOUD" = aws ]; then
	[ "$(alive_type e2e-fab p5.48xlarge)" = 2 ] || fail "the fallback did not launch 2 p5.48xlarge"
fi
# the launch carries the interfaces as the cloud's API model has them
run=$(jq -s -c '[.[] | select(.action == "RunInstances" and .error_code == null)][0].params' \
	"$work/requests.log")
case $CLOUD in
aws)
	# card 0 an EFA with ENA, cards 1..3 EFA-only; groups per interface, none at the top
	[ "$(jq -r '."NetworkInterface.1.InterfaceType"' <<<"$run")" = efa ] ||
		fail "card 0 is not an EFA: $run"
	for i in 2 3 4; do
		jq -e --arg i "$i" '.["NetworkInterface.\($i).InterfaceType"] == "efa-only" and
			.["NetworkInterface.\($i).NetworkCardIndex"] == (($i | tonumber) - 1 | tostring) and
			.["NetworkInterface.\($i).DeviceIndex"] == "0"' <<<"$run" >/dev/null ||
			fail "interface $i is not an EFA-only interface on card $((i - 1)): $run"
	done
	jq -e 'has("NetworkInterface.5.InterfaceType") or has("SecurityGroupId.1") or
		has("NetworkInterface.1.AssociatePublicIpAddress") | not' <<<"$run" >/dev/null ||
		fail "more than 4 interfaces, or groups or a public address beside them: $run"
	;;
alibaba)
	jq -e '.["NetworkInterface.2.NetworkInterfaceTrafficMode"] == "HighPerformance" and
		.["NetworkInterface.3.NetworkInterfaceTrafficMode"] == "HighPerformance" and
		.["NetworkInterface.2.InstanceType"] == "Secondary" and
		(has("NetworkInterface.4.NetworkInterfaceTrafficMode") | not)' <<<"$run" >/dev/null ||
		fail "the launch does not carry 2 ERIs: $run"
	;;
tencent)
	# an HCC type's RDMA network comes with the type: no interface parameters
	jq -e 'keys | map(select(startswith("NetworkInterface"))) | length == 0' <<<"$run" \
		>/dev/null || fail "interfaces sent to CVM: $run"
	;;
esac
if [ "$CLOUD" = aws ]; then
	# the re-run attached the addresses it had allocated, to each node's primary interface
	[ "$(calls AllocateAddress)" = 2 ] || fail "not 2 AllocateAddress: $(calls AllocateAddress)"
	[ "$(addresses e2e-fab 1)" = 2 ] || fail "the nodes do not have their addresses"
	jq -s -e '[.[] | select(.action == "AssociateAddress" and .error_code == null)]
		| length == 2 and all(.params.NetworkInterfaceId != null and
		.params.InstanceId == null)' "$work/requests.log" >/dev/null ||
		fail "the addresses were not attached to the primary interfaces"
	gc_ok hosts "$f"
	[ "$(grep -c '127\.78\.' "$work/out")" = 2 ] ||
		fail "hosts does not list the nodes' addresses: $(cat "$work/out")"
	# the group has both all-traffic self rules EFA requires: the members' ingress rule and
	# its egress twin, beside EC2's default egress rule (fabric.md)
	state
	jq -e '[.security_groups[] | select(.tags["gpucluster:cluster"] == "e2e-fab")]
		| length == 1 and all(.id as $g
		| (.egress | any(.protocol == "-1" and .destination_group == $g)) and
		(.rules | any(.protocol == "-1" and .source_group == $g)))' "$work/state.json" \
		>/dev/null || fail "the group lacks the all-traffic self rules EFA requires"
	egress0=$(calls AuthorizeSecurityGroupEgress)
else
	# ECS with ERIs and CVM's HCC types keep the public address of the launch
	gc_ok hosts "$f"
	[ "$(grep -c '127\.77\.' "$work/out")" = 2 ] ||
		fail "the nodes have no public address: $(cat "$work/out")"
fi
if [ -n "$CREATE" ]; then
	# one placement resource, tagged, made before the launch, which names it
	[ "$(calls "$CREATE")" = $((made0 + 1)) ] || fail "not one $CREATE: $(calls "$CREATE")"
	[ "$(placements e2e-fab)" = 1 ] || fail "the placement group is not tagged with the cluster"
	jq -s -e --arg a "$CREATE" 'map(.action) | index($a) < index("RunInstances")' \
		"$work/requests.log" >/dev/null || fail "$CREATE came after the launch"
	[ -n "$(jq -r --arg k "$LAUNCH" '.[$k] // empty' <<<"$run")" ] ||
		fail "the launch does not name the placement group ($LAUNCH): $run"
	jq -e --arg c "$CLOUD" '[.instances[] | select(.cloud == $c and
		.tags["gpucluster:cluster"] == "e2e-fab") | .placement] | all(. != "")' \
		"$work/state.json" >/dev/null || fail "a node runs outside the placement group"
	# a second apply finds it: nothing more is made
	gc_ok apply -y "$f"
	[ "$(calls "$CREATE")" = $((made0 + 1)) ] || fail "the second apply made another placement group"
	if [ "$CLOUD" = aws ] && [ "$(calls AuthorizeSecurityGroupEgress)" != "$egress0" ]; then
		fail "the second apply added the egress rule the group has"
	fi
fi
gc_ok destroy -y "$f"
expect_alive e2e-fab 0 "after destroy"
if [ "$CLOUD" = aws ]; then
	[ "$(addresses e2e-fab)" = 0 ] || fail "destroy left the nodes' addresses"
	[ "$(calls ReleaseAddress)" = 2 ] || fail "destroy did not release 2 addresses"
fi
[ "$(placements e2e-fab)" = 0 ] || fail "destroy left the placement group"
if [ -n "$DELETE" ]; then
	[ "$(calls "$DELETE")" = $((gone0 + 1)) ] || fail "destroy did not ask $DELETE once"
	# scaled to zero, the cluster's placement group is an orphan: gc removes it
	gc_ok apply -y "$f"
	if [ "$CLOUD" = aws ]; then
		# scaled down, the terminated node's address goes; one leaked by a crash (its
		# instance gone) is found by gc while the cluster's other node keeps its own
		gc_ok scale -y -f "$f" workers=1
		[ "$(addresses e2e-fab) $(addresses e2e-fab 1)" = "1 1" ] ||
			fail "scaling down did not release the terminated node's address"
		now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
		curl -sS --aws-sigv4 "aws:amz:$REGION:ec2" \
			--user AKIAGPUCLUSTERSIM001:gpucluster-sim-aws-secret-key-0000000000 \
			-H 'Content-Type: application/x-www-form-urlencoded' \
			--data "Action=AllocateAddress&Version=2016-11-15&Domain=vpc&TagSpecification.1.ResourceType=elastic-ip&TagSpecification.1.Tag.1.Key=gpucluster:cluster&TagSpecification.1.Tag.1.Value=e2e-fab&TagSpecification.1.Tag.2.Key=gpucluster:instance&TagSpecification.1.Tag.2.Value=i-0123456789abcdef0&TagSpecification.1.Tag.3.Key=gpucluster:created-at&TagSpecification.1.Tag.3.Value=$now" \
			"$ENDPOINT/" >/dev/null
		[ "$(addresses e2e-fab)" = 2 ] || fail "the leaked address was not made"
		later=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
		gc_ok gc --cloud "$CLOUD" --region "$REGION" --endpoint "$ENDPOINT" --as-of "$later" --yes
		cat "$work/out" "$work/err" | grep -q "deleted address '127\.78\..*' (eipalloc-" ||
			fail "gc does not say it released the address: $(cat "$work/out")"
		[ "$(addresses e2e-fab) $(addresses e2e-fab 1)" = "1 1" ] ||
			fail "gc did not release just the leaked address: $(cat "$work/err")"
		expect_alive e2e-fab 1 "after gc of a leaked address"
		# a scale-up that stops before attaching: the scale-down after it releases the
		# unattached address with its node
		fault "aws:AssociateAddress:quota"
		gc scale -y -f "$f" workers=2
		[ "$rc" != 0 ] || fail "a scale-up whose address could not be attached succeeded"
		faults_clear
		[ "$(addresses e2e-fab) $(addresses e2e-fab 1)" = "2 1" ] ||
			fail "the scale-up did not leave its node's address allocated and unattached"
	fi
	gc_ok scale -y -f "$f" workers=0
	[ "$(placements e2e-fab)" = 1 ] || fail "scaling to zero removed the placement group"
	if [ "$CLOUD" = aws ] && [ "$(addresses e2e-fab)" != 0 ]; then
		fail "scaling to zero left addresses, the unattached one included"
	fi
	later=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
	gc_ok gc --cloud "$CLOUD" --region "$REGION" --endpoint "$ENDPOINT" --as-of "$later"
	grep -q "placement-group" "$work/out" || fail "gc does not list the placement group: $(cat "$work/out")"
	gc_ok gc --cloud "$CLOUD" --region "$REGION" --endpoint "$ENDPOINT" --as-of "$later" --yes
	[ "$(placements e2e-fab)" = 0 ] || fail "gc left the placement group: $(cat "$work/err")"
	[ "$(addresses e2e-fab)" = 0 ] || fail "an address outlived its cluster"
fi
requests_valid

# The bootstrap's fabric step on an SSH node (docs/internals/fabric.md). The node starts
# without its RDMA devices (the no-rdma fault): apply's bootstrap fails in the fabric step,
# with the reason; with the devices back a bootstrap passes the step (the software the
# failed run installed now checks out) and the node's NCCL fabric is the cloud's. The
# step says it skips on a node of a standard group.
case $CLOUD in
aws) CHECK='/opt/amazon/efa/bin/fi_info -p efa -t FI_EP_RDM' WHAT='the EFA software' ;;
alibaba) CHECK='ibv_devinfo -d erdma_0' WHAT='the eRDMA driver' ;;
tencent) CHECK='ibv_devinfo' WHAT='the RDMA stack' ;;
esac
sim_stop
t0=$SECONDS
lap() { note "$1 ($((SECONDS - t0)) s)"; }
sim_start_nodes --no-rate-limits --node-fault no-rdma
{
	printf 'name: e2e-fabboot\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' \
		"$CLOUD" "$REGION" "$ENDPOINT"
	printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
	printf '  - name: fast\n    count: 1\n    instance_types: [%s]\n' "$FAST"
	printf '    image: gpu-ready\n    interconnect: rdma\n'
	# an HCC type launches only in an HPC cluster (plan says so)
	[ "$CLOUD" != tencent ] || printf '    placement: cluster\n'
	printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  cudnn: none\n'
	printf '  container: none\n  smoke: [driver]\n'
} >"$work/b.yaml"
gc apply -y "$work/b.yaml"
[ "$rc" != 0 ] || fail "apply with the RDMA devices missing succeeded"
grep -q "fabric: error: $WHAT.* is installed, but the node has no working RDMA device" "$work/err" ||
	fail "no clear message for the missing RDMA devices: $(cat "$work/err")"
grep -q "^  fast/0 $ID_RE: fabric FAILED" "$work/err" || fail "fast/0's fabric step did not fail"
state
id=$(jq -r '.instances[] | select(.tags["gpucluster:cluster"] == "e2e-fabboot") | .id' \
	"$work/state.json")
control POST "/nodes/$id/faults" "" >/dev/null
gc_ok bootstrap -o json "$work/b.yaml"
jq -e '.failed == 0 and (.nodes[0].steps | map(select(.name == "fabric")) | .[0].state == "ok")' \
	"$work/out" >/dev/null || fail "bootstrap with the RDMA devices back: $(cat "$work/out")"
gc_ok ssh "$work/b.yaml" fast/0 -- "$CHECK && cat /var/lib/gpucluster-sim/fabric &&
	FABRIC=standard bash ~/.gpucluster/bootstrap/fabric.sh"
grep -q 'PORT_ACTIVE\|provider: efa' "$work/out" || fail "fast/0: '$CHECK' shows no device: $(cat "$work/out")"
grep -qx 'efa\|rdma' "$work/out" || fail "fast/0: NCCL's fabric is not set: $(cat "$work/out")"
grep -q "^fabric: skipped: the group's interconnect is standard" "$work/out" ||
	fail "the step does not say it skips on the standard network: $(cat "$work/out")"
gc_ok destroy -y "$work/b.yaml"
lap "the fabric step"
note "ok ($CLOUD)"
