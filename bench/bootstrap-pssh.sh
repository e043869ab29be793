#!/usr/bin/env bash
# The bootstrap with parallel-ssh, for bench/bootstrap.sh: what a pssh user writes to do
# what `gpucluster bootstrap` does. Usage: bootstrap-pssh.sh DIR SCRIPTS_DIR
#
# DIR holds `hosts` (user@address:port per line) and `ssh_config` (the key, the pinned
# known_hosts, strict checking); SCRIPTS_DIR the files to copy (templates/bootstrap/*.sh
# and smoke.cu, flat). parallel-scp uploads them, then every step runs on every node with
# parallel-ssh -p 32, in the order and with the inputs of bench/bootstrap-runner.c, each
# node's output captured in DIR/pssh/{out,err}/STEP/. The driver step's exit 100 asks for
# a reboot: those nodes get `sudo -n reboot`, a wait loop until each answers with a new
# boot id, and the driver step again. Any other failure stops the run (exit 1).
set -euo pipefail
dir=$1
src=$2
par=32
ssh_opts="-F $dir/ssh_config"
remote=.gpucluster/bootstrap
work=$dir/pssh
mkdir -p "$work"

# elapsed T0: seconds since T0 (microseconds from EPOCHREALTIME), as N.NN
elapsed() {
	local us=$((${EPOCHREALTIME/./} - $1))
	printf '%d.%02d' $((us / 1000000)) $((us % 1000000 / 10000))
}

# pssh HOSTS_FILE TIMEOUT NAME CMD: run CMD; output in $work/{out,err}/NAME, status lines
# in $work/NAME.status; prints how long it took; returns parallel-ssh's status
pssh() {
	local rc=0 t0=${EPOCHREALTIME/./}
	parallel-ssh -p "$par" -t "$2" -x "$ssh_opts" -h "$1" -o "$work/out/$3" -e "$work/err/$3" \
		"$4" >"$work/$3.status" || rc=$?
	echo "bootstrap-pssh.sh: $3: $(elapsed "$t0") s (exit $rc)"
	return "$rc"
}

fail() {
	echo "bootstrap-pssh.sh: $*" >&2
	exit 1
}

# step NAME [VAR=value...]: every node must exit 0
step() {
	local name=$1
	shift
	pssh "$dir/hosts" 0 "$name" "env $* bash $remote/$name.sh" ||
		fail "step '$name' failed: $(grep -v SUCCESS "$work/$name.status" | head -n 3)"
}

pssh "$dir/hosts" 0 mkdir "mkdir -p $remote" || fail "mkdir failed"
t0=${EPOCHREALTIME/./}
parallel-scp -p "$par" -t 0 -x "$ssh_opts" -h "$dir/hosts" "$src"/* "$remote/" >"$work/scp.status" ||
	fail "parallel-scp failed: $(grep -v SUCCESS "$work/scp.status" | head -n 3)"
echo "bootstrap-pssh.sh: upload: $(elapsed "$t0") s"

step detect

# the driver: exit 100 means "reboot, then run me again"; anything else but 0 is fatal
rc=0
pssh "$dir/hosts" 0 driver "env DRIVER=570 bash $remote/driver.sh" || rc=$?
: >"$dir/reboot-hosts"
if [ "$rc" != 0 ]; then
	while read -r _ _ status host rest; do
		[ "$status" = "[FAILURE]" ] || continue
		[ "$rest" = "Exited with error code 100" ] || fail "driver on $host: $rest"
		echo "$host" >>"$dir/reboot-hosts"
	done <"$work/driver.status"
fi

if [ -s "$dir/reboot-hosts" ]; then
	pssh "$dir/reboot-hosts" 0 boot-before 'cat /proc/sys/kernel/random/boot_id' ||
		fail "cannot read the boot ids"
	# the session dies under the reboot: a non-zero status is expected
	pssh "$dir/reboot-hosts" 30 reboot 'sudo -n reboot' || true
	t0=${EPOCHREALTIME/./}
	cp "$dir/reboot-hosts" "$dir/pending"
	deadline=$((SECONDS + 600))
	while [ -s "$dir/pending" ]; do
		[ "$SECONDS" -lt "$deadline" ] || fail "nodes did not come back: $(tr '\n' ' ' <"$dir/pending")"
		sleep 1
		rm -rf "$work/out/boot-now"
		pssh "$dir/pending" 5 boot-now 'cat /proc/sys/kernel/random/boot_id' || true
		: >"$dir/pending.next"
		while read -r host; do
			now=$(cat "$work/out/boot-now/$host" 2>/dev/null || true)
			if [ -z "$now" ] || [ "$now" = "$(cat "$work/out/boot-before/$host")" ]; then
				echo "$host" >>"$dir/pending.next"
			fi
		done <"$dir/pending"
		mv "$dir/pending.next" "$dir/pending"
	done
	echo "bootstrap-pssh.sh: $(wc -l <"$dir/reboot-hosts") nodes back from the reboot: $(elapsed "$t0") s"
	pssh "$dir/reboot-hosts" 0 driver-again "env DRIVER=570 bash $remote/driver.sh" ||
		fail "driver after the reboot failed: $(grep -v SUCCESS "$work/driver-again.status" | head -n 3)"
fi

step cuda CUDA=12.8
step cudnn CUDNN=9 CUDA=12.8
step container CONTAINER=docker
step smoke SMOKE=driver,cuda,container CUDA=12.8 EXPECT_GPUS=1 EXPECT_GPU_MODEL=A10G
