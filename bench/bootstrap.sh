#!/usr/bin/env bash
# The bootstrap at 32 nodes: gpucluster's runner vs Ansible vs parallel-ssh, on one
# gpucluster-sim with real sshd nodes (bench/README.md, "Bootstrap"). Each tool gets its
# own fresh plain Ubuntu 22.04 g5.xlarge instances (launched, host keys pinned from the
# console output, listening: bench/bootstrap-runner.c launch), so none benefits from
# another's installs, and runs the same files (templates/bootstrap/*.sh, smoke.cu) with
# the same steps and inputs: detect, driver (exit 100, reboot, driver again), cuda,
# cudnn, container, smoke. Then each runs again on its now ready nodes; Ansible also
# once more on fresh nodes with the files sent as one tar file. The tools take turns,
# ROUNDS times, each round on new nodes. Last, gpucluster alone on MEM_NODES fresh nodes,
# for its memory.
#
#   gpucluster  bench/bootstrap-runner.c run: gc_runner_run, the default options
#   ansible     ansible-playbook bench/bootstrap.yml: forks=32, pipelining, ControlPersist
#   pssh        bench/bootstrap-pssh.sh: parallel-scp, then parallel-ssh -p 32 per step
#
# Every run goes through `bootstrap-runner tree` (a child subreaper, so Ansible's
# detached ssh masters are counted and ended) under GNU time: wall, user+sys CPU of the
# whole process tree (less the tree wrapper's own sampling), max RSS (GNU time's: the
# largest process); the tree wrapper adds the peak sums of RSS and PSS over the tree's
# processes. "machine CPU" is the busy time of every CPU meanwhile (/proc/stat): the tool
# plus the emulator's nodes (sshd, the scripts, the simulated tools), which share the
# same cores, plus anything else running. Nothing outside a temporary directory is
# touched: HOME, TMPDIR, ANSIBLE_HOME, ANSIBLE_CONFIG, the ssh config, key and known_hosts
# all live there.
#
# Usage: bench/bootstrap.sh [NODES [MEM_NODES [ROUNDS]]]   (default 32 64 3)
# GC_BENCH_BUILD: the Release tree to build and use (default build/bootbench).
# GC_BENCH_KEEP=1 keeps the work directory (logs of every run) and says where.
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-32}
mem_nodes=${2:-64}
rounds=${3:-3}
build=${GC_BENCH_BUILD:-build/bootbench}

# bench-only dependencies (also: scripts/install-deps.sh --bench)
missing=()
command -v ansible-playbook >/dev/null 2>&1 || missing+=(ansible)
command -v parallel-ssh >/dev/null 2>&1 || missing+=(pssh)
[ -x /usr/bin/time ] || missing+=(time)
command -v jq >/dev/null 2>&1 || missing+=(jq)
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	echo "bootstrap.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGC_SANITIZE= >/dev/null
cmake --build "$build" -j"$(nproc)" --target gpucluster-sim bootstrap-runner >/dev/null
runner=$build/bench/bootstrap-runner

work=$(mktemp -d)
sim_pid=
cleanup() {
	if [ -n "$sim_pid" ]; then
		kill "$sim_pid" 2>/dev/null || true
		wait "$sim_pid" 2>/dev/null || true
	fi
	if [ -n "${GC_BENCH_KEEP:-}" ]; then
		echo "bootstrap.sh: kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
export HOME=$work/home XDG_CONFIG_HOME=$work/config XDG_CACHE_HOME=$work/cache TMPDIR=$work/tmp
export ANSIBLE_HOME=$work/ansible-home ANSIBLE_LOCAL_TEMP=$work/ansible-tmp
mkdir -p "$HOME" "$TMPDIR" "$ANSIBLE_HOME" "$ANSIBLE_LOCAL_TEMP"

"$build/sim/gpucluster-sim" --no-rate-limits --pending-ms 100 --state-dir "$work/state" \
	--ready-file "$work/ready.json" >"$work/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do
	[ -s "$work/ready.json" ] && break
	sleep 0.1
done
aws=$(jq -r .aws "$work/ready.json" 2>/dev/null || true)
port=$(jq -r .ssh_port "$work/ready.json" 2>/dev/null || true)
if [ -z "$aws" ] || [ "$port" = null ]; then
	echo "bootstrap.sh: the emulator did not start with SSH nodes" >&2
	cat "$work/sim.log" >&2
	exit 1
fi

# busy CPU seconds of the whole machine, every CPU (user nice system irq softirq steal)
hz=$(getconf CLK_TCK)
busy_cpu() { awk -v hz="$hz" '$1 == "cpu" { printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit }' /proc/stat; }

# prepare NAME COUNT: COUNT fresh nodes in $work/NAME, with every tool's configuration
prepare() {
	local d=$work/$1
	mkdir -p "$d/scripts" "$d/cp"
	"$runner" launch "$aws" "$2" "$d" --port "$port"
	cp templates/bootstrap/*.sh templates/smoke/smoke.cu "$d/scripts/"
	tar -C "$d/scripts" -cf "$d/scripts.tar" .
	cat >"$d/ssh_config" <<EOF
Host *
	User ubuntu
	IdentityFile $d/key
	IdentitiesOnly yes
	UserKnownHostsFile $d/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	BatchMode yes
	ConnectTimeout 10
	LogLevel ERROR
EOF
	awk '{ print "ubuntu@" $2 ":" $3 }' "$d/nodes" >"$d/hosts"
	{
		echo "[nodes]"
		awk '{ print $1, "ansible_host=" $2, "ansible_port=" $3 }' "$d/nodes"
		echo "[nodes:vars]"
		echo "ansible_user=ubuntu"
		echo "ansible_ssh_private_key_file=$d/key"
	} >"$d/inventory"
	cat >"$d/ansible.cfg" <<EOF
[defaults]
inventory = $d/inventory
forks = 32
host_key_checking = True
interpreter_python = /usr/bin/python3
gathering = explicit
retry_files_enabled = False
callbacks_enabled = ansible.posix.profile_tasks
local_tmp = $ANSIBLE_LOCAL_TEMP
[ssh_connection]
pipelining = True
ssh_args = -F $d/ssh_config -o ControlMaster=auto -o ControlPersist=60s
control_path_dir = $d/cp
EOF
}

# measure TOOL RUN NAME CMD...: runs CMD against the nodes of NAME; a result row into
# $pending (kept once every run of the tool's turn succeeded). Returns 1 when CMD failed.
results=$work/results
pending=$work/pending
measure() {
	local tool=$1 run=$2 name=$3 d=$work/$3 rc=0 busy0 busy1 tag
	shift 3
	tag=$(echo "$tool-$run" | tr -c 'a-z0-9\n' -)
	busy0=$(busy_cpu)
	ANSIBLE_CONFIG=$d/ansible.cfg /usr/bin/time -o "$d/$tag.time" -f '%e %U %S %M' \
		"$runner" tree "$d/$tag.tree" -- "$@" >"$d/$tag.log" 2>&1 || rc=$?
	busy1=$(busy_cpu)
	if [ "$rc" != 0 ]; then
		{
			echo "bootstrap.sh: $tool, $run on nodes '$name': exit $rc; the end of its output:"
			tail -n 20 "$d/$tag.log" | sed 's/^/    /'
		} | tee -a "$work/failures" >&2
		return 1
	fi
	local wall user sys maxrss sampler rss pss procs
	read -r wall user sys maxrss <"$d/$tag.time"
	sampler=$(grep -o 'sampler_cpu_s=[0-9.]*' "$d/$tag.tree" | cut -d= -f2)
	rss=$(grep -o 'peak_rss_sum_kib=[0-9]*' "$d/$tag.tree" | cut -d= -f2)
	pss=$(grep -o 'peak_pss_sum_kib=[0-9]*' "$d/$tag.tree" | cut -d= -f2)
	procs=$(grep -o 'peak_procs=[0-9]*' "$d/$tag.tree" | cut -d= -f2)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$run" "$(wc -l <"$d/nodes")" \
		"$wall" "$(echo "$user $sys $sampler" | awk '{ printf "%.2f", $1 + $2 - $3 }')" \
		"$maxrss" "$rss" "$pss" "$procs" "$(echo "$busy0 $busy1" | awk '{ printf "%.1f", $2 - $1 }')" |
		tee -a "$pending"
	# where the time went: the runner's per-step figures, Ansible's task times, pssh's steps
	case "$tool" in
	gpucluster) sed 's/^/    /' "$d/$tag.log" ;;
	ansible) sed -n '/^===/,$s/^/    /p' "$d/$tag.log" ;;
	pssh) sed 's/^bootstrap-pssh.sh: /    /' "$d/$tag.log" ;;
	esac
}

# median TOOL RUN NODES COLUMN: the median of a column over the rounds
median() {
	awk -F'\t' -v t="$1" -v r="$2" -v n="$3" -v c="$4" '$1 == t && $2 == r && $3 == n { print $c }' \
		"$results" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

echo "bootstrap.sh: $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p' | head -n 1)), $nodes nodes per tool, $rounds rounds"
printf 'tool\trun\tnodes\twall_s\tcpu_s\tmax_rss_kib\trss_sum_kib\tpss_sum_kib\tprocs\tmachine_cpu_s\n'

# turn TOOL NAME: the tool's runs on fresh nodes NAME; returns 1 when one failed
turn() {
	local d=$work/$2
	: >"$pending"
	prepare "$2" "$3" || return 1
	case "$1" in
	gpucluster)
		measure gpucluster full "$2" "$runner" run "$d" &&
			measure gpucluster re-run "$2" "$runner" run "$d" &&
			measure gpucluster "re-run, no smoke" "$2" "$runner" run "$d" --no-smoke
		;;
	gpucluster-mem)
		measure gpucluster full "$2" "$runner" run "$d" &&
			measure gpucluster re-run "$2" "$runner" run "$d"
		;;
	ansible)
		measure ansible full "$2" ansible-playbook bench/bootstrap.yml -e "scripts=$d/scripts" &&
			measure ansible re-run "$2" ansible-playbook bench/bootstrap.yml -e "scripts=$d/scripts"
		;;
	ansible-tar)
		# Ansible's copy module costs a stat, a transfer and a module run per file: the
		# same playbook sending one tar file instead
		measure ansible "full, tar upload" "$2" ansible-playbook bench/bootstrap.yml \
			-e "scripts=$d/scripts" -e upload=tarball
		;;
	pssh)
		measure pssh full "$2" bench/bootstrap-pssh.sh "$d" "$d/scripts" &&
			measure pssh re-run "$2" bench/bootstrap-pssh.sh "$d" "$d/scripts"
		;;
	esac || return 1
	cat "$pending" >>"$results"
}

# A failed run (a node's step failed) is no measurement: that turn is repeated once on
# fresh nodes, and the failure is listed at the end.
for round in $(seq "$rounds"); do
	for tool in gpucluster ansible ansible-tar pssh; do
		if ! turn "$tool" "$tool-$round" "$nodes"; then
			echo "bootstrap.sh: $tool failed in round $round; its turn again, on fresh nodes" >&2
			turn "$tool" "$tool-$round-again" "$nodes" || exit 1
		fi
	done
done
if ! turn gpucluster-mem mem "$mem_nodes"; then
	turn gpucluster-mem mem-again "$mem_nodes" || exit 1
fi

# kib N: "N KiB", or "-" for a run too short for the tree wrapper to sample (< 250 ms)
kib() {
	if [ "${1:-0}" = 0 ]; then echo "-"; else echo "$1 KiB"; fi
}
echo
echo "Medians over the rounds (wall: the range in brackets):"
echo
echo "| tool | run | nodes | wall | CPU (user+sys) | max RSS (largest process) | peak RSS sum | peak PSS sum | processes | machine CPU |"
echo "|---|---|---|---|---|---|---|---|---|---|"
cut -f1-3 "$results" | awk '!seen[$0]++' | while IFS=$'\t' read -r t r n; do
	lo=$(awk -F'\t' -v t="$t" -v r="$r" -v n="$n" '$1 == t && $2 == r && $3 == n { print $4 }' "$results" | sort -g | head -n 1)
	hi=$(awk -F'\t' -v t="$t" -v r="$r" -v n="$n" '$1 == t && $2 == r && $3 == n { print $4 }' "$results" | sort -g | tail -n 1)
	printf '| %s | %s | %s | %.1f s [%.1f-%.1f] | %.2f s | %s | %s | %s | %s | %.1f s |\n' \
		"$t" "$r" "$n" "$(median "$t" "$r" "$n" 4)" "$lo" "$hi" "$(median "$t" "$r" "$n" 5)" \
		"$(kib "$(median "$t" "$r" "$n" 6)")" "$(kib "$(median "$t" "$r" "$n" 7)")" \
		"$(kib "$(median "$t" "$r" "$n" 8)")" "$(median "$t" "$r" "$n" 9)" "$(median "$t" "$r" "$n" 10)"
done
echo
for r in full re-run; do
	g=$(median gpucluster "$r" "$nodes" 4)
	a=$(median ansible "$r" "$nodes" 4)
	p=$(median pssh "$r" "$nodes" 4)
	echo "$g $a $p" | awk -v r="$r" '{ printf "%s, median wall: gpucluster / ansible %.2fx (target <= 0.5), gpucluster / pssh %.2fx (target <= 1.2)\n", r, $1 / $2, $1 / $3 }'
done
echo "$(median gpucluster full "$nodes" 4) $(median ansible "full, tar upload" "$nodes" 4)" |
	awk '{ printf "full, median wall: gpucluster / ansible with the tar upload %.2fx (target <= 0.5)\n", $1 / $2 }'
echo "re-run on the ready $nodes nodes, median wall: $(median gpucluster re-run "$nodes" 4) s with smoke, $(median gpucluster "re-run, no smoke" "$nodes" 4) s without (target < 3 s)"
echo "gpucluster's max RSS at $mem_nodes nodes: $(median gpucluster full "$mem_nodes" 6) KiB (target <= 64 MB)"
if [ -s "$work/failures" ]; then
	echo
	echo "Failed runs, each repeated on fresh nodes (GC_BENCH_KEEP=1 keeps the nodes' state):"
	cat "$work/failures"
fi
