#!/usr/bin/env bash
# e2e-sim.sh: the bootstrap scripts (templates/bootstrap) end to end on gpucluster-sim's SSH
# nodes, driven the way the runner will drive them: launch through the EC2 API (curl signs
# with --aws-sigv4), pin each host key from GetConsoleOutput, copy the scripts and smoke.cu
# over ssh, run each step with its inputs in the environment.
#
# A fresh Ubuntu 22.04 g5.xlarge: detect -> driver (100: nouveau is loaded) -> sudo reboot,
# wait for SSH with a new boot id -> driver (0) -> driver again (0, nothing to do) -> cuda ->
# cudnn -> container -> smoke, whose JSON must be ok and simulated. The driver step also on
# a p4d.24xlarge (NVSwitches: Fabric Manager) and an Ubuntu 24.04 p3.2xlarge (V100: the
# proprietary modules). Then a kill inside each installing step (the simulated apt-get stops
# half way), and a re-run repairs the node. A GPU-ready image on a g4dn.12xlarge (4 T4): verify passes and
# installs nothing; smoke passes; the missing-gpu and ecc node faults make smoke fail,
# naming the reason; the mounts step on a node without an instance role fails saying so;
# the monitoring step starts dcgm-exporter there, keeps it on a second
# run, starts it again once removed, refuses a GPU count it does not see, and the exporter
# answers after a reboot (its restart policy). Exits 77 (skipped) when the machine cannot run the emulator's nodes
# (no bwrap, sshd or user namespaces).
set -euo pipefail

bin=${GC_SIM_BIN:?GC_SIM_BIN must point at gpucluster-sim}
src=$(cd "$(dirname "$0")/../.." && pwd)

skip() {
	printf 'e2e-sim.sh: SKIP: %s\n' "$*" >&2
	exit 77
}
for t in bwrap ssh ssh-keygen curl python3 tar; do
	command -v "$t" >/dev/null || skip "'$t' is not installed"
done
[ -x /usr/sbin/sshd ] || skip "/usr/sbin/sshd (openssh-server) is not installed"
bwrap --unshare-user --ro-bind / / true 2>/dev/null || skip "bwrap cannot create a user namespace here"

work=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
export HOME=$work/home XDG_CONFIG_HOME=$work/config XDG_CACHE_HOME=$work/cache
mkdir -p "$HOME"

fail() {
	printf 'e2e-sim.sh: FAIL: %s\n' "$*" >&2
	[ ! -s "$work/last.err" ] || sed 's/^/    stderr| /' "$work/last.err" >&2
	exit 1
}
t0=$SECONDS
note() { printf '[%3ds] %s\n' $((SECONDS - t0)) "$*"; }

TMPDIR=$work "$bin" --ready-file "$work/ready.json" --pending-ms 100 --reboot-ms 1000 \
	--no-rate-limits 2>"$work/sim.err" &
pid=$!
for _ in $(seq 1 100); do
	[ -s "$work/ready.json" ] && break
	kill -0 "$pid" 2>/dev/null || fail "the emulator exited early: $(cat "$work/sim.err")"
	sleep 0.05
done
[ -s "$work/ready.json" ] || fail "no ready file after 5 s"
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
aws=$(json "$work/ready.json" 'd["aws"]')
control=$(json "$work/ready.json" 'd["control"]')

ec2() {
	curl -sS --aws-sigv4 "aws:amz:us-east-1:ec2" \
		--user "AKIAGPUCLUSTERSIM001:gpucluster-sim-aws-secret-key-0000000000" \
		-H "Content-Type: application/x-www-form-urlencoded" \
		--data "Action=$1&Version=2016-11-15${2:+&$2}" "$aws/"
}
xml() { grep -o "<$1>[^<]*</$1>" | sed -n "1s|<[^>]*>||gp"; }

ssh-keygen -q -t ed25519 -N '' -C e2e -f "$work/key"
pub=$(python3 -c 'import base64,sys,urllib.parse; print(urllib.parse.quote(base64.b64encode(open(sys.argv[1],"rb").read()).decode(), safe=""))' "$work/key.pub")
ec2 ImportKeyPair "KeyName=e2e&PublicKeyMaterial=$pub" | grep -q keyFingerprint || fail "ImportKeyPair"

launch() { # IMAGE TYPE -> instance id
	ec2 RunInstances "ImageId=$1&InstanceType=$2&MinCount=1&MaxCount=1&KeyName=e2e" | xml instanceId
}
plain=$(launch ami-0e8d2a5e1c4f22040 g5.xlarge)
ready=$(launch ami-0d1e5f7a9b3c5e570 g4dn.12xlarge)
nvswitch=$(launch ami-0e8d2a5e1c4f22040 p4d.24xlarge)
volta=$(launch ami-04b7c5d3f9a124040 p3.2xlarge)
if [ -z "$plain" ] || [ -z "$ready" ] || [ -z "$nvswitch" ] || [ -z "$volta" ]; then
	fail "RunInstances gave no instance ids"
fi
nodes=("$plain" "$ready" "$nvswitch" "$volta")

# address and pinned host key of a running instance
declare -A ip
for id in "${nodes[@]}"; do
	for _ in $(seq 1 50); do
		[ "$(ec2 DescribeInstances "InstanceId.1=$id" | xml name)" = running ] && break
		sleep 0.1
	done
	ip[$id]=$(ec2 DescribeInstances "InstanceId.1=$id" | xml ipAddress)
	ec2 GetConsoleOutput "InstanceId=$id" | xml output | base64 -d |
		sed -n '/BEGIN SSH HOST KEY KEYS/,/END SSH HOST KEY KEYS/{/^ssh-/p}' |
		sed "s/^/[${ip[$id]}]:2222 /" >>"$work/known_hosts"
done

node() { # ID CMD...: ssh with the pinned key only
	local id=$1
	shift
	ssh -q -i "$work/key" -p 2222 -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$work/known_hosts" -o ConnectTimeout=5 "ubuntu@${ip[$id]}" "$@"
}
wait_ssh() { # ID
	for _ in $(seq 1 100); do
		node "$1" true 2>/dev/null && return 0
		sleep 0.1
	done
	fail "no SSH to $1 after 10 s"
}

# step ID NAME [VAR=value...]: runs a step as the runner does; stdout in $work/last.out
step() {
	local id=$1 name=$2 rc=0 vars=""
	shift 2
	[ $# -eq 0 ] || vars=$(printf '%q ' "$@")
	node "$id" "env $vars bash .gpucluster/bootstrap/$name.sh" \
		>"$work/last.out" 2>"$work/last.err" || rc=$?
	note "$name on $id: exit $rc"
	# E2E_VERBOSE=1 shows what each step printed
	[ -z "${E2E_VERBOSE:-}" ] || sed 's/^/      | /' "$work/last.out" "$work/last.err"
	return "$rc"
}
expect() { # WANT NAME ...: the step's exit status must be WANT
	local want=$1 rc=0
	shift
	step "$@" || rc=$?
	[ "$rc" = "$want" ] || fail "$2 exited $rc, expected $want: $(cat "$work/last.out")"
}

for id in "${nodes[@]}"; do
	wait_ssh "$id"
	tar -C "$src/templates" -cf - bootstrap smoke |
		node "$id" 'mkdir -p .gpucluster && tar -C .gpucluster -xf - && mv .gpucluster/smoke/smoke.cu .gpucluster/bootstrap/'
done
note "four nodes up, scripts copied"

# --- a fresh Ubuntu image: the whole bootstrap, with a reboot ---------------------------------

expect 0 "$plain" detect
for kv in OS_ID=ubuntu OS_VERSION=22.04 OS_SUPPORTED=1 PKG=apt GPU_COUNT=1 GPU_0_PCI_ID=10de:2237 \
	GPU_OPEN_SUPPORTED=1 NVSWITCH_COUNT=0 NOUVEAU_LOADED=1 DRIVER_INSTALLED=0 NVIDIA_SMI=0 \
	CUDA_INSTALLED=0 DOCKER_INSTALLED=0; do
	grep -qx "$kv" "$work/last.out" || fail "detect: no '$kv' in: $(cat "$work/last.out")"
done
grep -q '^GPU_0_NAME=GA102GL \[A10G\]$' "$work/last.out" || fail "detect: GPU name"

expect 1 "$plain" driver DRIVER=preinstalled
grep -q 'nouveau drives the GPUs' "$work/last.err" || fail "driver (preinstalled) on a plain image: $(cat "$work/last.err")"

# the driver step on three machines: open modules (g5), open modules and Fabric Manager
# (p4d, NVSwitches), proprietary modules (p3, Volta); each asks for a reboot
declare -A boot
for id in "$plain" "$nvswitch" "$volta"; do
	boot[$id]=$(node "$id" cat /proc/sys/kernel/random/boot_id)
	expect 100 "$id" driver DRIVER=570
	grep -q 'reboot needed: nouveau' "$work/last.out" || fail "driver: no reboot reason: $(cat "$work/last.out")"
	node "$id" 'grep -qx "blacklist nouveau" /etc/modprobe.d/blacklist-nouveau.conf' || fail "nouveau not blacklisted"
	node "$id" 'sudo reboot' >/dev/null 2>&1 || true
done
sleep 0.5
for id in "$plain" "$nvswitch" "$volta"; do
	wait_ssh "$id"
	[ "${boot[$id]}" != "$(node "$id" cat /proc/sys/kernel/random/boot_id)" ] ||
		fail "$id did not reboot (same boot id)"
done
note "rebooted"

expect 0 "$nvswitch" driver DRIVER=570
grep -q 'Fabric Manager is running (6 NVSwitches)' "$work/last.out" || fail "no Fabric Manager: $(cat "$work/last.out")"
node "$nvswitch" 'systemctl is-active --quiet nvidia-fabricmanager && systemctl is-enabled --quiet nvidia-fabricmanager' ||
	fail "nvidia-fabricmanager is not active and enabled"
node "$nvswitch" 'dpkg-query -W nvidia-open-570 nvidia-fabricmanager-570' >/dev/null || fail "p4d packages"
expect 0 "$volta" driver DRIVER=570
grep -q '(proprietary) already works' "$work/last.out" || fail "V100 driver: $(cat "$work/last.out")"
node "$volta" 'dpkg-query -W cuda-drivers-570 && ! dpkg-query -W nvidia-open-570' >/dev/null 2>&1 ||
	fail "the V100 did not get the proprietary modules (cuda-drivers-570)"
node "$volta" 'nvidia-smi -L' | grep -q 'Tesla V100' || fail "nvidia-smi on the V100"
expect 1 "$volta" driver DRIVER=570 DRIVER_FLAVOR=open
grep -q 'Volta or older' "$work/last.err" || fail "open modules on a V100 were not refused"

expect 0 "$plain" driver DRIVER=570
grep -q 'NVIDIA driver 570\.[0-9.]* (open) already works' "$work/last.out" ||
	fail "driver after the reboot: $(cat "$work/last.out")"
node "$plain" 'lsmod | grep -q "^nvidia " && ! lsmod | grep -q "^nouveau "' || fail "nvidia is not the loaded module"
holds=$(node "$plain" apt-mark showhold)
for p in nvidia-open-570 linux-image-5.15.0-1051-aws linux-headers-5.15.0-1051-aws; do
	grep -qx "$p" <<<"$holds" || fail "'$p' is not held: $holds"
done
node "$plain" 'systemctl is-active --quiet nvidia-persistenced' || fail "nvidia-persistenced is not running"
before=$(node "$plain" 'dpkg-query -W')
expect 0 "$plain" driver DRIVER=570
[ "$before" = "$(node "$plain" 'dpkg-query -W')" ] || fail "a second driver run changed the packages"

expect 0 "$plain" cuda CUDA=12.8
node "$plain" '/usr/local/cuda-12.8/bin/nvcc --version' | grep -q 'release 12.8,' || fail "no nvcc 12.8"
# the node has no /etc/profile to source profile.d, so source the step's file as one would
# shellcheck disable=SC2016 # expanded on the node
node "$plain" 'sh -c ". /etc/profile.d/gpucluster-cuda.sh; . /etc/profile.d/gpucluster-cuda.sh; command -v nvcc; echo \$PATH"' >"$work/path"
[ "$(head -n 1 "$work/path")" = /usr/local/cuda-12.8/bin/nvcc ] || fail "profile.d does not put nvcc on PATH"
[ "$(tail -n 1 "$work/path" | tr ':' '\n' | grep -c cuda)" = 1 ] || fail "profile.d adds CUDA to PATH twice"
node "$plain" '! dpkg-query -W cuda-drivers cuda 2>/dev/null' || fail "the cuda step installed a driver meta-package"
expect 0 "$plain" cudnn CUDNN=9 CUDA=12.8
node "$plain" 'dpkg-query -W libcudnn9-cuda-12' >/dev/null || fail "no libcudnn9-cuda-12"
expect 0 "$plain" container CONTAINER=docker
node "$plain" 'grep -q "^docker:.*ubuntu" /etc/group' || fail "ubuntu is not in the docker group"
node "$plain" 'grep -q "\"nvidia\"" /etc/docker/daemon.json' || fail "no nvidia runtime in daemon.json"
expect 0 "$plain" container CONTAINER=docker

expect 0 "$plain" smoke SMOKE=driver,cuda,container,nccl CUDA=12.8 EXPECT_GPUS=1 EXPECT_GPU_MODEL=A10G
cp "$work/last.out" "$work/smoke-plain.json"
python3 - "$work/smoke-plain.json" <<'EOF' || fail "smoke JSON: $(cat "$work/smoke-plain.json")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, "stdout must be one JSON document"
d = json.loads(lines[0])
assert d["ok"] is True and d["simulated"] is True, d
names = [c["name"] for c in d["checks"]]
assert names == ["nvidia-smi", "gpu-count", "gpu-model", "ecc", "xid", "cuda", "container", "nccl"], names
assert all(c["ok"] is True and c["detail"] for c in d["checks"]), d["checks"]
assert len(d["gpus"]) == 1, d["gpus"]
g = d["gpus"][0]
assert g["name"] == "NVIDIA A10G" and g["memory_mib"] == 24576, g
for k in ("h2d_gbps", "d2h_gbps", "d2d_gbps", "gemm_tflops"):
    assert g[k] > 0, (k, g)
assert g["ecc_uncorrected"] == 0 and g["uuid"].startswith("GPU-"), g
assert d["cuda_runtime"] == "12.8" and d["driver"].startswith("570."), d
assert d["checks"][-1]["detail"] == "not applicable: 1 GPU", d["checks"][-1]
EOF
note "fresh image bootstrapped; smoke ok"

# --- half-made installs: a kill inside each installing step, then a re-run -------------------
# The simulated apt-get stops as a SIGKILL would at the package named in the node's apt-kill
# file: unpacking it (dpkg: half-installed) or configuring it (unpacked, not configured, and
# apt refuses to go on until `dpkg --configure -a`). Each step is made to install its
# package again, killed there, then run again: it must repair the node and pass.
# killed ID "unpack|configure PKG" STEP VARS...: the step, its install killed at PKG
killed() {
	local id=$1 at=$2
	shift 2
	node "$id" "echo '$at' | sudo tee /var/lib/gpucluster-sim/apt-kill >/dev/null"
	expect 1 "$id" "$@"
	grep -q Killed "$work/last.err" || fail "$2 was not killed at '$at': $(cat "$work/last.err")"
}
repaired() { # ID STEP VARS...: the re-run repairs and passes
	expect 0 "$@"
	grep -q 'finishing an interrupted package installation' "$work/last.out" ||
		fail "$2 did not repair the interrupted install: $(cat "$work/last.out")"
}
uninstall() { node "$plain" "sudo apt-get remove -y $1 >/dev/null && sudo rm -rf $2"; }
status_of() { node "$plain" "dpkg-query -W -f='\${db:Status-Abbrev}' $1"; }

# the symptom found: cuda-toolkit installed, nvcc missing
node "$plain" 'sudo rm /usr/local/cuda-12.8/bin/nvcc'
expect 0 "$plain" cuda CUDA=12.8
grep -q 'reinstalling cuda-toolkit-12-8 .*: installed, but /usr/local/cuda-12.8/bin/nvcc missing' "$work/last.out" ||
	fail "cuda did not reinstall the toolkit: $(cat "$work/last.out")"

uninstall cuda-toolkit-12-8 /usr/local/cuda-12.8
killed "$plain" 'configure cuda-toolkit-12-8' cuda CUDA=12.8
node "$plain" 'dpkg --audit' | grep -q '^ cuda-toolkit-12-8 ' || fail "dpkg --audit does not list the unpacked toolkit"
status_of cuda-toolkit-12-8 | grep -q '^iU' || fail "the toolkit is not iU"
out=$(node "$plain" 'sudo apt-get install -y jq' 2>&1 || true)
grep -q "dpkg was interrupted.*dpkg --configure -a" <<<"$out" || fail "apt did not refuse after the kill: $out"
repaired "$plain" cuda CUDA=12.8

uninstall "cudnn9-cuda-12 libcudnn9-cuda-12" ""
killed "$plain" 'unpack libcudnn9-cuda-12' cudnn CUDNN=9 CUDA=12.8
status_of libcudnn9-cuda-12 | grep -q '^iH' || fail "libcudnn9 is not iH"
repaired "$plain" cudnn CUDNN=9 CUDA=12.8

uninstall nvidia-container-toolkit /usr/local/bin/nvidia-ctk
killed "$plain" 'unpack nvidia-container-toolkit' container CONTAINER=docker
repaired "$plain" container CONTAINER=docker
node "$plain" 'nvidia-ctk --version' >/dev/null || fail "no nvidia-ctk after the repair"

uninstall nvidia-open-570 /usr/local/bin/nvidia-smi
killed "$plain" 'configure nvidia-open-570' driver DRIVER=570
repaired "$plain" driver DRIVER=570
grep -q '(open) already works' "$work/last.out" || fail "driver after the repair: $(cat "$work/last.out")"

[ -z "$(node "$plain" 'dpkg --audit')" ] || fail "dpkg --audit still reports problems"
expect 0 "$plain" verify DRIVER=570 CUDA=12.8 CUDNN=9 CONTAINER=docker
expect 0 "$plain" smoke SMOKE=driver,cuda,container CUDA=12.8 EXPECT_GPUS=1 EXPECT_GPU_MODEL=A10G
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["ok"] is True' "$work/last.out" || fail "smoke after the repairs: $(cat "$work/last.out")"
note "interrupted installs repaired; smoke ok"

# --- a GPU-ready image: verified, nothing installed; faults fail smoke -----------------------

state() { node "$ready" 'dpkg-query -W; apt-mark showhold; cat /var/lib/gpucluster-sim/apt/repos; ls /etc/apt/sources.list.d'; }
before=$(state)
expect 0 "$ready" verify DRIVER=preinstalled CUDA=12.8 CUDNN=9 CONTAINER=docker
[ "$before" = "$(state)" ] || fail "verify changed the GPU-ready image"
expect 0 "$ready" driver DRIVER=preinstalled
grep -q 'preinstalled driver 570\.' "$work/last.out" || fail "driver (preinstalled): $(cat "$work/last.out")"
expect 1 "$ready" verify DRIVER=preinstalled CUDA=12.4 CUDNN=8 CONTAINER=docker
grep -q 'no CUDA 12.4 toolkit' "$work/last.err" || fail "verify names no missing CUDA 12.4"
grep -q 'no cuDNN 8' "$work/last.err" || fail "verify names no missing cuDNN"
[ "$before" = "$(state)" ] || fail "a failing verify changed the GPU-ready image"

smoke_ready() { # expected exit, then a python assertion on d
	local want=$1 code=$2
	expect "$want" "$ready" smoke SMOKE=driver,cuda,container CUDA=12.8 EXPECT_GPUS=4 EXPECT_GPU_MODEL=T4
	python3 -c "import json,sys; d=json.loads(open(sys.argv[1]).read()); $code" "$work/last.out" ||
		fail "smoke JSON: $(cat "$work/last.out")"
}
smoke_ready 0 'assert d["ok"] is True and d["simulated"] is True and len(d["gpus"]) == 4, d'

fault() { curl -sSf -X POST --data "$1" "$control/nodes/$ready/faults" >/dev/null || fail "setting fault '$1'"; }
fault missing-gpu
smoke_ready 1 '
c = {x["name"]: x for x in d["checks"]}
assert d["ok"] is False, d
assert c["gpu-count"]["ok"] is False and "sees 3 GPUs" in c["gpu-count"]["detail"] and "has 4" in c["gpu-count"]["detail"], c
assert c["ecc"]["ok"] and c["xid"]["ok"] and c["gpu-model"]["ok"], c'
fault ecc
smoke_ready 1 '
c = {x["name"]: x for x in d["checks"]}
assert d["ok"] is False and c["gpu-count"]["ok"], d
assert c["ecc"]["ok"] is False and "GPU 0: 2 uncorrectable ECC errors" in c["ecc"]["detail"], c
assert "row remap is pending" in c["ecc"]["detail"], c
assert c["xid"]["ok"] is False and "Xid 48" in c["xid"]["detail"], c
assert d["gpus"][0]["ecc_uncorrected"] == 2, d["gpus"]'
fault ''
smoke_ready 0 'assert d["ok"] is True, d'
note "GPU-ready image verified; faults reported"

# --- bucket mounts on a node launched without a role: the step says so; none: skipped ---------
mount_tool="mount-s3 https://s3.amazonaws.com/mountpoint-s3-release/latest/x86_64/mount-s3.deb us-east-1"
mount_tool+=" http://169.254.169.254/latest/meta-data/iam/security-credentials/"
mount_tool+=" http://169.254.169.254/latest/api/token X-aws-ec2-metadata-token"
expect 1 "$ready" mounts MOUNTS=my-data:/opt/data:ro "MOUNT_TOOL=$mount_tool" \
	"MOUNT_COMMAND=mount-s3 {mode} {bucket} {path}"$'\n--read-only\n'
grep -q 'mounts: error: the node has no instance role' "$work/last.err" ||
	fail "mounts without a role: $(cat "$work/last.err")"
node "$ready" 'command -v mount-s3' >/dev/null 2>&1 && fail "mounts installed its tool with no role"
expect 0 "$ready" mounts MOUNTS=
grep -q 'mounts: skipped (no mounts)' "$work/last.out" || fail "mounts with none: $(cat "$work/last.out")"
note "mounts: no role refused, none skipped"

# --- monitoring: dcgm-exporter on the GPU-ready node -------------------------------------------

metrics() { node "$ready" 'curl -sf http://127.0.0.1:9400/metrics' | grep -c '^DCGM_FI_DEV_GPU_UTIL{gpu="[0-3]"'; }
expect 0 "$ready" monitoring MONITORING=none
grep -q 'skipped' "$work/last.out" || fail "monitoring none: $(cat "$work/last.out")"
expect 0 "$ready" monitoring MONITORING=dcgm EXPECT_GPUS=4
if ! grep -q 'starting dcgm-exporter' "$work/last.out" ||
	! grep -q 'answers on port 9400 (4 GPUs)' "$work/last.out"; then
	fail "monitoring: $(cat "$work/last.out")"
fi
[ "$(metrics)" = 4 ] || fail "the exporter's metrics do not show 4 GPUs"
expect 0 "$ready" monitoring MONITORING=dcgm EXPECT_GPUS=4
grep -q 'starting' "$work/last.out" && fail "a second run started the exporter again"
expect 1 "$ready" monitoring MONITORING=dcgm EXPECT_GPUS=8
grep -q 'reports 4 GPUs, the instance type has 8' "$work/last.err" || fail "monitoring with 8 GPUs expected"
node "$ready" 'sudo docker rm -f gpucluster-dcgm-exporter' >/dev/null
expect 0 "$ready" monitoring MONITORING=dcgm EXPECT_GPUS=4
grep -q 'starting dcgm-exporter' "$work/last.out" || fail "a removed exporter was not started again"
b=$(node "$ready" cat /proc/sys/kernel/random/boot_id)
node "$ready" 'sudo reboot' >/dev/null 2>&1 || true
sleep 0.5
wait_ssh "$ready"
[ "$b" != "$(node "$ready" cat /proc/sys/kernel/random/boot_id)" ] || fail "$ready did not reboot"
[ "$(metrics)" = 4 ] || fail "the exporter does not answer after a reboot"
note "monitoring: dcgm-exporter started, kept, restarted, and up after a reboot"
# bootstrap.monitoring dropped: monitoring-undo (UNDO=1) removes the container
expect 0 "$ready" monitoring UNDO=1 MONITORING=none
grep -q 'monitoring: removed' "$work/last.out" || fail "monitoring undo: $(cat "$work/last.out")"
node "$ready" 'sudo docker inspect gpucluster-dcgm-exporter' >/dev/null 2>&1 &&
	fail "monitoring undo left the exporter's container"
# preempt-undo where nothing is installed: nothing to do is no error
expect 0 "$ready" preempt UNDO=1
grep -q 'preempt: removed' "$work/last.out" || fail "preempt undo: $(cat "$work/last.out")"
note "monitoring and preempt undone (UNDO=1)"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" = 0 ] || fail "the emulator exited $status: $(cat "$work/sim.err")"
echo "e2e-sim.sh: ok ($((SECONDS - t0)) s)"
