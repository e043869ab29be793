#!/usr/bin/env bash
# lib.sh: the cloud-parameterised end-to-end harness, sourced by every case in this folder.
#
# A case runs the real gpucluster binary against a real gpucluster-sim process for the
# cloud named by $GC_E2E_CLOUD (aws, alibaba or tencent: the cases are the same, the
# per-cloud facts are in the one `case` below), and checks the outcome through the emulator's control API (/state), never
# through gpucluster's own view. Everything lives in one temporary folder: HOME, the
# state dir, the spec, the emulator's request log. Nothing outside it is touched.
set -euo pipefail

GC_BIN=${GC_BIN:?GC_BIN must point at gpucluster}
GC_SIM_BIN=${GC_SIM_BIN:?GC_SIM_BIN must point at gpucluster-sim}
CLOUD=${GC_E2E_CLOUD:-aws}

work=$(mktemp -d)
sim_pid=
SSH_PORT= # set by sim_start_nodes: the emulator's nodes answer SSH on this port
export HOME=$work/home GPUCLUSTER_STATE_DIR=$work/state XDG_STATE_HOME=$work/xdg
mkdir -p "$HOME"

e2e_cleanup() {
	if [ -n "$sim_pid" ] && kill -0 "$sim_pid" 2>/dev/null; then
		kill -TERM "$sim_pid" 2>/dev/null || true
		wait "$sim_pid" 2>/dev/null || true
	fi
	# GC_E2E_KEEP_LOGS=DIR keeps each case's request log (DIR/CASE.CLOUD.log), so a
	# refactor can show that it sends the same actions with the same parameters
	# (reqlog-diff.sh BEFORE AFTER compares two such folders)
	if [ -n "${GC_E2E_KEEP_LOGS:-}" ] && [ -s "$work/requests.log" ]; then
		cp "$work/requests.log" "$GC_E2E_KEEP_LOGS/${0##*/}.$CLOUD.log" || true
	fi
	rm -rf "$work"
}
trap e2e_cleanup EXIT

fail() {
	printf '%s: FAIL: %s\n' "${0##*/}" "$*" >&2
	if [ -s "$work/out" ]; then
		printf -- '--- last stdout\n' >&2
		tail -n 40 "$work/out" >&2
	fi
	if [ -s "$work/err" ]; then
		printf -- '--- last stderr\n' >&2
		tail -n 40 "$work/err" >&2
	fi
	exit 1
}

note() {
	printf '%s: %s\n' "${0##*/}" "$*"
}

# The cloud's defaults for this harness: region, zones, two GPU types and one for the
# GPU-ready image, the credentials' variable names, the auth error codes. The emulator's
# default credentials are in docs/sim.md.
# shellcheck disable=SC2034 # used by the cases that source this file
case $CLOUD in
aws)
	REGION=us-east-1
	ZONES=(us-east-1a us-east-1b)
	TYPE1=g5.xlarge
	TYPE2=g6.xlarge
	# exports the credentials into this shell (for a process that must be this shell's
	# own child, e.g. one the test kills)
	cloud_export() {
		export AWS_ACCESS_KEY_ID=AKIAGPUCLUSTERSIM001
		export AWS_SECRET_ACCESS_KEY=gpucluster-sim-aws-secret-key-0000000000
		export AWS_EC2_METADATA_DISABLED=true
	}
	# the environment without any credentials (the chain's other sources are empty)
	CRED_VARS=(AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE)
	NO_METADATA=(AWS_EC2_METADATA_DISABLED=true)
	ID_VAR=AWS_ACCESS_KEY_ID SECRET_VAR=AWS_SECRET_ACCESS_KEY
	AUTH_CODES='AuthFailure|SignatureDoesNotMatch'
	TYPE_READY=g4dn.xlarge
	ID_RE='i-[0-9a-f]*' # an instance id, in basic regex
	HAS_CONSOLE=1       # the cloud has console output (a failed wait shows it)
	KEYPAIRS=1          # our Ed25519 login key is imported as a key pair
	TTL_SHORT=10m       # the shortest lifecycle.ttl plan accepts here (the spec's own floor)
	;;
alibaba)
	REGION=cn-hangzhou
	ZONES=(cn-hangzhou-i cn-hangzhou-j)
	TYPE1=ecs.gn7i-c8g1.2xlarge
	TYPE2=ecs.gn6i-c4g1.xlarge
	IMAGE=ubuntu_22_04_x64_20G_alibase_20261015.vhd
	cloud_export() {
		export ALIBABA_CLOUD_ACCESS_KEY_ID=LTAIgpuclustersim001
		export ALIBABA_CLOUD_ACCESS_KEY_SECRET=gpucluster-sim-alibaba-secret-000000
		export ALIBABA_CLOUD_ECS_METADATA_DISABLED=true
	}
	CRED_VARS=(ALIBABA_CLOUD_ACCESS_KEY_ID ALIBABA_CLOUD_ACCESS_KEY_SECRET
		ALIBABA_CLOUD_SECURITY_TOKEN ALIBABA_CLOUD_PROFILE ALICLOUD_ACCESS_KEY
		ALICLOUD_SECRET_KEY)
	NO_METADATA=(ALIBABA_CLOUD_ECS_METADATA_DISABLED=true)
	ID_VAR=ALIBABA_CLOUD_ACCESS_KEY_ID SECRET_VAR=ALIBABA_CLOUD_ACCESS_KEY_SECRET
	AUTH_CODES='SignatureDoesNotMatch|InvalidAccessKeyId'
	TYPE_READY=ecs.gn7i-c8g1.2xlarge
	ID_RE='i-[0-9a-z]*'
	HAS_CONSOLE=1
	KEYPAIRS=0 # ImportKeyPair takes RSA, DSA and ECDSA keys only: cloud-init gets ours
	TTL_SHORT=35m # AutoReleaseTime must be 30 minutes ahead; plan asks for 35 or more
	;;
tencent)
	REGION=ap-guangzhou
	ZONES=(ap-guangzhou-6 ap-guangzhou-7)
	TYPE1=GN7.2XLARGE32
	TYPE2=GN10Xp.2XLARGE40
	IMAGE=img-487zeit5
	cloud_export() {
		export TENCENTCLOUD_SECRET_ID=AKIDgpuclustersim001
		export TENCENTCLOUD_SECRET_KEY=gpucluster-sim-tencent-secret-000000
		export TENCENTCLOUD_CVM_ROLE_DISABLED=true
	}
	CRED_VARS=(TENCENTCLOUD_SECRET_ID TENCENTCLOUD_SECRET_KEY TENCENTCLOUD_SESSION_TOKEN
		TENCENTCLOUD_PROFILE)
	NO_METADATA=(TENCENTCLOUD_CVM_ROLE_DISABLED=true)
	ID_VAR=TENCENTCLOUD_SECRET_ID SECRET_VAR=TENCENTCLOUD_SECRET_KEY
	AUTH_CODES='AuthFailure'
	TYPE_READY=GN7.2XLARGE32
	ID_RE='ins-[0-9a-z]*'
	HAS_CONSOLE=0
	KEYPAIRS=0 # ImportKeyPair takes "OpenSSH RSA" keys: cloud-init gets ours
	TTL_SHORT=10m
	;;
*)
	fail "unknown cloud '$CLOUD'"
	;;
esac

# no_creds_env CMD...: runs CMD with none of the cloud's credential variables and the
# instance metadata source off (it would leave the loopback).
no_creds_env() {
	local unset=()
	for v in "${CRED_VARS[@]}"; do
		unset+=(-u "$v")
	done
	env "${unset[@]}" "${NO_METADATA[@]}" "$@"
}

# bad_secret_env CMD...: runs CMD with the right key id and a wrong secret.
bad_secret_env() {
	(
		cloud_export
		export "$SECRET_VAR=not-the-secret"
		exec "$@"
	)
}

# cloud_env CMD...: runs CMD with the cloud's credentials.
cloud_env() {
	(
		cloud_export
		exec "$@"
	)
}

# sim_launch [FLAGS...]: starts the emulator (fast life cycle) and waits for it.
sim_launch() {
	rm -f "$work/ready.json"
	TMPDIR=$work "$GC_SIM_BIN" --ready-file "$work/ready.json" \
		--request-log "$work/requests.log" --pending-ms 150 --terminate-ms 150 --seed 7 \
		"$@" 2>"$work/sim.err" &
	sim_pid=$!
	for _ in $(seq 1 200); do
		[ -s "$work/ready.json" ] && break
		kill -0 "$sim_pid" 2>/dev/null || fail "the emulator exited: $(cat "$work/sim.err")"
		sleep 0.05
	done
	[ -s "$work/ready.json" ] || fail "the emulator wrote no ready file"
	ENDPOINT=$(jq -r ".$CLOUD" "$work/ready.json")
	CONTROL=$(jq -r .control "$work/ready.json")
	export GPUCLUSTER_CHECKIP_URL=$CONTROL/checkip
}

# sim_start [FLAGS...]: the emulator with the cloud APIs only: instances have addresses
# but nothing answers SSH there, so apply and scale get --no-bootstrap from gc().
sim_start() {
	SSH_PORT=
	sim_launch --no-ssh "$@"
}

# sim_start_nodes [FLAGS...]: the emulator with SSH nodes (a real sshd per instance, in
# bubblewrap) and 0.5 s reboots, for cases that bootstrap. Exits 77 (skipped) where the
# machine cannot run the nodes.
sim_start_nodes() {
	local t
	for t in bwrap ssh ssh-keygen; do
		command -v "$t" >/dev/null || skip "'$t' is not installed"
	done
	[ -x /usr/sbin/sshd ] || skip "/usr/sbin/sshd (openssh-server) is not installed"
	bwrap --unshare-user --ro-bind / / true 2>/dev/null ||
		skip "bwrap cannot create a user namespace here"
	sim_launch --reboot-ms 500 "$@"
	SSH_PORT=$(jq -r .ssh_port "$work/ready.json")
}

skip() {
	printf '%s: SKIP: %s\n' "${0##*/}" "$*" >&2
	exit 77
}

sim_stop() {
	kill -TERM "$sim_pid" 2>/dev/null || true
	wait "$sim_pid" 2>/dev/null || true
	sim_pid=
}

# control METHOD PATH [BODY]
control() {
	if [ $# -ge 3 ]; then
		curl -sS -X "$1" --data-binary "$3" "$CONTROL$2"
	else
		curl -sS -X "$1" "$CONTROL$2"
	fi
}

fault() { control POST /faults "$1" >/dev/null; }
faults_clear() { control DELETE /faults >/dev/null; }

# spec FILE NAME [GROUP COUNT TYPES_CSV [MARKET [EXTRA_YAML]]]
# Writes a spec for this cloud. TYPES_CSV is "g5.xlarge,g6.xlarge".
spec() {
	local file=$1 name=$2 group=${3:-workers} count=${4:-2} types=${5:-$TYPE1}
	local market=${6:-on-demand} extra=${7:-}
	{
		printf 'name: %s\n' "$name"
		printf 'provider:\n  name: %s\n  region: %s\n  endpoint: %s\n' "$CLOUD" "$REGION" \
			"$ENDPOINT"
		printf 'ssh:\n  user: ubuntu\n'
		if [ -n "$SSH_PORT" ]; then
			printf '  port: %s\n' "$SSH_PORT"
		fi
		printf 'node_groups:\n  - name: %s\n    count: %s\n' "$group" "$count"
		printf '    instance_types: [%s]\n' "$types"
		printf '    zones: [%s]\n' "$(
			IFS=,
			echo "${ZONES[*]}"
		)"
		printf '    market: %s\n    image: ubuntu-22.04\n    disk_gb: 100\n' "$market"
		printf 'bootstrap:\n  driver: "570"\n  cuda: "12.8"\n'
		if [ -n "$extra" ]; then
			printf '%s\n' "$extra"
		fi
	} >"$file"
}

# gc ARGS...: runs gpucluster with the cloud's credentials; stdout in $work/out, stderr
# in $work/err; sets $rc. Without SSH nodes (sim_start), apply and scale run with
# --no-bootstrap.
gc() {
	local extra=()
	if [ -z "$SSH_PORT" ] && { [ "$1" = apply ] || [ "$1" = scale ]; }; then
		extra=(--no-bootstrap)
	fi
	set +e
	cloud_env "$GC_BIN" --no-color "$@" "${extra[@]}" >"$work/out" 2>"$work/err" </dev/null
	rc=$?
	set -e
	# a sanitizer's report exits 1 like an ordinary error: never let it pass as one
	if grep -qE 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$work/err"; then
		fail "gpucluster $* tripped a sanitizer: $(head -c 2000 "$work/err")"
	fi
}

# gc_ok ARGS...: gc, and the run must succeed.
gc_ok() {
	gc "$@"
	[ "$rc" = 0 ] || fail "gpucluster $* exited $rc"
}

state() { control GET /state >"$work/state.json"; }

# alive CLUSTER: instances of CLUSTER (by tag) the cloud has not terminated.
alive() {
	state
	jq --arg c "$1" --arg cloud "$CLOUD" '[.instances[] | select(.cloud == $cloud)
		| select(.tags["gpucluster:cluster"] == $c)
		| select((.state | ascii_downcase) != "terminated")] | length' "$work/state.json"
}

# alive_type CLUSTER TYPE
alive_type() {
	state
	jq --arg c "$1" --arg t "$2" --arg cloud "$CLOUD" '[.instances[]
		| select(.cloud == $cloud) | select(.tags["gpucluster:cluster"] == $c)
		| select((.state | ascii_downcase) != "terminated") | select(.type == $t)]
		| length' "$work/state.json"
}

# creates: the calls that make something (instances, key pairs, security groups) so far.
creates() {
	echo $(($(calls RunInstances) + $(calls ImportKeyPair) + $(calls CreateKeyPair) + \
		$(calls CreateSecurityGroup)))
}

# spec_refused CLUSTER FILE WHAT POS MESSAGE [CHECK]: plan and apply -y both fail on FILE
# with FILE:POS: MESSAGE, said once, and make nothing for CLUSTER; CHECK, when given, is
# called with "WHAT: COMMAND" for a script's own checks of each.
spec_refused() {
	local cluster=$1 file=$2 what=$3 pos=$4 msg=$5 check=${6:-} cmd
	for cmd in plan "apply -y"; do
		# shellcheck disable=SC2086 # the command's words
		gc $cmd "$file"
		[ "$rc" != 0 ] || fail "$what: $cmd succeeded"
		grep -qF "$file:$pos: " "$work/err" ||
			fail "$what: $cmd did not say '$file:$pos:': $(cat "$work/err")"
		grep -qF "$msg" "$work/err" || fail "$what: $cmd did not say '$msg': $(cat "$work/err")"
		[ "$(grep -cF "$msg" "$work/err")" = 1 ] || fail "$what: $cmd said it more than once"
		[ "$(owned_resources "$cluster")" = 0 ] || fail "$what: $cmd left a key pair or group"
		expect_alive "$cluster" 0 "$what: $cmd"
		[ "$(creates)" = 0 ] || fail "$what: $cmd created something"
		[ -z "$check" ] || "$check" "$what: $cmd"
	done
}

# owned_resources CLUSTER: key pairs and security groups tagged with CLUSTER.
owned_resources() {
	state
	jq --arg c "$1" --arg cloud "$CLOUD" '[(.key_pairs[], .security_groups[])
		| select(.cloud == $cloud) | select(.tags["gpucluster:cluster"] == $c)] | length' \
		"$work/state.json"
}

# What a cluster owns besides its instances: its security group, and its key pair where
# gpucluster imports one.
OWNED=$((1 + KEYPAIRS))

# keypairs CLUSTER: key pairs tagged with CLUSTER.
keypairs() {
	state
	jq --arg c "$1" --arg cloud "$CLOUD" '[.key_pairs[] | select(.cloud == $cloud)
		| select(.tags["gpucluster:cluster"] == $c)] | length' "$work/state.json"
}

# expect_owned CLUSTER WHAT: CLUSTER has its security group, and its key pair where the
# cloud takes ours (KEYPAIRS=1); elsewhere it has no key pair and gpucluster never asked
# for one (the log's only key pair calls are the harness's own foreign_keypair imports).
expect_owned() {
	local n k made
	n=$(owned_resources "$1")
	k=$(keypairs "$1")
	if [ "$n" != "$OWNED" ] || [ "$k" != "$KEYPAIRS" ]; then
		fail "${2:-}: '$1' owns $n resources ($k key pairs), expected a security group and $KEYPAIRS key pair(s)"
	fi
	made=$(($(calls ImportKeyPair) + $(calls CreateKeyPair) - FOREIGN_KEYPAIRS))
	if [ "$KEYPAIRS" = 0 ] && [ "$made" != 0 ]; then
		fail "${2:-}: gpucluster asked for $made key pair(s) on a cloud that takes no Ed25519 key pairs"
	fi
}

# calls ACTION: how many calls of ACTION the request log holds.
calls() {
	if [ ! -s "$work/requests.log" ]; then
		echo 0
		return
	fi
	jq -s --arg a "$1" '[.[] | select(.action == $a)] | length' "$work/requests.log"
}

# requests_valid: every request gpucluster sent in this case was well-formed for the real
# API: the emulator checks parameter names, types, ranges and combinations as the cloud
# documents them, and answers these codes when one is off. (Faults inject throttling,
# capacity, quota and 5xx codes, never these; and the unsupported fault CVM's refusal of
# the type in an HPC cluster, a well-formed request: fabric.md, "Type not supported here".)
requests_valid() {
	local bad
	[ -s "$work/requests.log" ] || fail "the request log is empty"
	bad=$(jq -r -s '[.[] | select(.error_code != null)
		| select(.error_code != "InvalidParameterValue.InstanceTypeNotSupportHpcCluster")
		| select(.error_code
		| test("^(InvalidParameter|MissingParameter|UnknownParameter|InvalidAction|InvalidFilter|MalformedQueryString|InvalidParameterCombination|InvalidParameterValue|UnsupportedParameter|InvalidQueryParameter|MissingAction|InvalidUserData|InvalidClientToken)"))
		| "\(.action) -> \(.error_code)"] | unique | join(", ")' "$work/requests.log")
	[ -z "$bad" ] || fail "requests the real API would refuse: $bad"
}

# keypair_like NAME: a key pair name like the ones gpucluster makes for cluster NAME (its
# own also carry a fingerprint part), in the cloud's alphabet.
keypair_like() {
	case $CLOUD in
	tencent) printf 'gc_%s\n' "${1//-/_}" ;;
	*) printf 'gpucluster-%s\n' "$1" ;;
	esac
}

# expect_alive CLUSTER N [WHAT]
expect_alive() {
	local n
	n=$(alive "$1")
	[ "$n" = "$2" ] || fail "${3:-}: expected $2 live instances of '$1', found $n"
}

# foreign_instance NAME: launches an instance WITHOUT our tags through the cloud's own
# API, named like one of ours, and prints its id.
foreign_instance() {
	case $CLOUD in
	aws)
		curl -sS --aws-sigv4 "aws:amz:$REGION:ec2" \
			--user AKIAGPUCLUSTERSIM001:gpucluster-sim-aws-secret-key-0000000000 \
			-H 'Content-Type: application/x-www-form-urlencoded' \
			--data "Action=RunInstances&Version=2016-11-15&ImageId=ami-0e8d2a5e1c4f22040&InstanceType=$TYPE1&MinCount=1&MaxCount=1&ClientToken=foreign-$1&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=Name&TagSpecification.1.Tag.1.Value=$1&TagSpecification.1.Tag.2.Key=gpucluster:group&TagSpecification.1.Tag.2.Value=workers" \
			"$ENDPOINT/" | sed -n 's:.*<instanceId>\(i-[0-9a-f]*\)</instanceId>.*:\1:p' | head -n 1
		;;
	*)
		node "$(dirname "${BASH_SOURCE[0]}")/foreign.js" "$CLOUD" "${ENDPOINT#http://}" \
			"$REGION" instance "$1" "$TYPE1" "${ZONES[0]}" "$IMAGE"
		;;
	esac
}

# foreign_keypair NAME: imports a key pair without our tags, under a name like ours.
# Call it in the case's own shell: FOREIGN_KEYPAIRS counts the imports.
FOREIGN_KEYPAIRS=0
foreign_keypair() {
	local pub
	FOREIGN_KEYPAIRS=$((FOREIGN_KEYPAIRS + 1))
	pub=$(printf 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBN0cmFuZ2VyLWtleS1mb3ItZTJlLXRlc3RzLTAx foreign' | base64 -w0)
	case $CLOUD in
	aws)
		curl -sS --aws-sigv4 "aws:amz:$REGION:ec2" \
			--user AKIAGPUCLUSTERSIM001:gpucluster-sim-aws-secret-key-0000000000 \
			-H 'Content-Type: application/x-www-form-urlencoded' \
			--data-urlencode "Action=ImportKeyPair" --data-urlencode "Version=2016-11-15" \
			--data-urlencode "KeyName=$1" --data-urlencode "PublicKeyMaterial=$pub" \
			"$ENDPOINT/" >/dev/null
		;;
	*)
		node "$(dirname "${BASH_SOURCE[0]}")/foreign.js" "$CLOUD" "${ENDPOINT#http://}" \
			"$REGION" keypair "$1"
		;;
	esac
}

# gone ID: the instance is terminated, or already forgotten (Alibaba and Tencent drop
# released instances from their answers; EC2 shows them as terminated for a while).
gone() {
	local st
	st=$(instance_state "$1")
	[ -z "$st" ] || [ "$st" = terminated ]
}

# instance_state ID: the cloud's state word for one instance, lowercased; empty when the
# cloud no longer knows it.
instance_state() {
	state
	jq -r --arg id "$1" '.instances[] | select(.id == $id) | .state | ascii_downcase' \
		"$work/state.json"
}
