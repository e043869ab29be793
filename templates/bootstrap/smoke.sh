#!/usr/bin/env bash
# smoke.sh: proves a node's GPUs healthy and usable, and prints ONE JSON document on stdout
# (progress and tool output go to stderr):
#
#   {"ok":true,"simulated":false,
#    "checks":[{"name":"nvidia-smi","ok":true,"detail":"driver 570.133.20, 1 GPU"}, ...],
#    "gpus":[{"index":0,"name":"NVIDIA A10G","uuid":"GPU-...","pci_bus_id":"00000000:00:1E.0",
#             "memory_mib":24576,"h2d_gbps":24.5,"d2h_gbps":25.5,"d2d_gbps":480,
#             "gemm_tflops":70,"ecc_uncorrected":0}],
#    "cuda_runtime":"12.8","driver":"570.133.20"}
#
# "gpus", "cuda_runtime" and "driver" are the smoke program's own (templates/smoke/smoke.cu;
# it adds sgemm_tflops, hgemm_tflops and, with nccl, an "nccl" object); without the cuda
# check "gpus" holds what nvidia-smi reports. "simulated" is true when the figures come from
# gpucluster-sim's simulated GPUs (the program says so, or the node is an emulator node).
#
# Checks, by SMOKE item:
#   driver     nvidia-smi: it answers; gpu-count: it sees EXPECT_GPUS GPUs (else as many as
#              the PCI bus shows); gpu-model: every GPU's name matches EXPECT_GPU_MODEL (when
#              set); ecc: no uncorrectable ECC errors (volatile), no pending or failed row
#              remaps, no pages pending retirement; xid: no critical Xid in the kernel log
#   cuda       cuda: smoke.cu compiles with the toolkit's nvcc and runs on every GPU (copy
#              bandwidth, cuBLAS GEMM; its copies and a small GEMM are verified)
#   container  container: `docker run --rm --gpus all IMAGE nvidia-smi -L` lists every GPU
#   nccl       nccl: on 2 or more GPUs, an all-reduce across them whose bus bandwidth reaches
#              SMOKE_NCCL_MIN_BUSBW (libnccl2 and its headers are installed if missing); on
#              one GPU the check passes as not applicable
#
# Critical Xids (NVIDIA's Xid catalogue): 48 double-bit ECC error, 61 and 62 internal
# micro-controller breakpoint or halt, 63 and 64 ECC page retirement or row remapping
# event and failure, 74 NVLink error, 79 GPU fallen off the bus, 92 high single-bit ECC
# rate, 94 and 95 contained and uncontained ECC errors, 119 and 120 GSP timeout and error,
# 140 unrecovered ECC error. Application faults (13, 31, 43, 45) are not node faults.
#
# Environment:
#   SMOKE=driver,cuda,container   the checks to run (comma or space separated)
#   EXPECT_GPUS=                  the GPU count of the instance type (default: the PCI count)
#   EXPECT_GPU_MODEL=             the instance type's GPU model ("A10G", "NVIDIA A100 80G"):
#                                 case-insensitive, "NVIDIA"/"Tesla" ignored; its first word
#                                 must be a word of the GPU's name, the others must start one
#   CUDA=                         the toolkit to compile with (/usr/local/cuda-CUDA/bin/nvcc;
#                                 default /usr/local/cuda/bin/nvcc); NVCC=path overrides
#   SMOKE_SRC=GC_DIR/smoke.cu     the smoke program's source; GC_DIR defaults to this
#                                 script's directory, where the runner puts smoke.cu
#   SMOKE_DOCKER_IMAGE=ubuntu:24.04   the image the container check runs
#   SMOKE_XID="48 61 ..."         the critical Xid list (above)
#   SMOKE_NCCL_MIN_BUSBW=0        all-reduce bus bandwidth floor in GB/s (0: any result)
#   SMOKE_TIMEOUT=600             seconds the smoke program and docker may run
#   MOUNTS="BUCKET:PATH:MODE ..." the spec's buckets (mounts.sh): a "mount" check each, that
#                                 PATH is mounted (else the mounts step's last error)
#
# Exit status: 0 when every check passes, 1 otherwise; the JSON is printed either way.
set -euo pipefail
GC_STEP=smoke
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi
GC_PROGRESS_FD=2

SMOKE=${SMOKE:-driver,cuda,container}
EXPECT_GPUS=${EXPECT_GPUS:-}
EXPECT_GPU_MODEL=${EXPECT_GPU_MODEL:-}
CUDA=${CUDA:-}
GC_DIR=${GC_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
SMOKE_SRC=${SMOKE_SRC:-$GC_DIR/smoke.cu}
SMOKE_DOCKER_IMAGE=${SMOKE_DOCKER_IMAGE:-ubuntu:24.04}
SMOKE_XID=${SMOKE_XID:-48 61 62 63 64 74 79 92 94 95 119 120 140}
SMOKE_NCCL_MIN_BUSBW=${SMOKE_NCCL_MIN_BUSBW:-0}
SMOKE_TIMEOUT=${SMOKE_TIMEOUT:-600}

checks=()
all_ok=true
simulated=false
[ ! -e /var/lib/gpucluster-sim/node.env ] || simulated=true
gpus_json=""
extra_json=""

json_str() {
	local s
	s=$(printf '%s' "$1" | tr '\n\t\r' '   ' | tr -d '\000-\037')
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

# check NAME OK DETAIL
check() {
	checks+=("{\"name\":$(json_str "$1"),\"ok\":$2,\"detail\":$(json_str "$3")}")
	[ "$2" = true ] || all_ok=false
	if [ "$2" = true ]; then info "ok: $1: $3"; else info "FAILED: $1: $3"; fi
}

finish() {
	local IFS=,
	printf '{"ok":%s,"simulated":%s,"checks":[%s],"gpus":[%s]%s}\n' \
		"$all_ok" "$simulated" "${checks[*]}" "$gpus_json" "$extra_json"
	[ "$all_ok" = true ] && exit 0
	exit 1
}

wants() { case " ${SMOKE//,/ } " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

plural() { if [ "$1" = 1 ]; then echo "$1 $2"; else echo "$1 ${2}s"; fi; }

for item in ${SMOKE//,/ }; do
	case "$item" in
	driver | cuda | container | nccl) ;;
	*)
		check arguments false "SMOKE has '$item': expected driver, cuda, container or nccl"
		finish
		;;
	esac
done
if [ -n "$EXPECT_GPUS" ] && ! [[ $EXPECT_GPUS =~ ^[0-9]+$ ]]; then
	check arguments false "EXPECT_GPUS='$EXPECT_GPUS' is not a number"
	finish
fi

# model_words NAME: a GPU name's words, lowercase, without "NVIDIA" and "Tesla"
model_words() {
	printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | tr -- '-_/,()' '      ' | tr -s ' ' '\n' |
		grep -vxE 'nvidia|tesla|' || true
}

# model_matches EXPECTED ACTUAL (see EXPECT_GPU_MODEL above)
model_matches() {
	local e a first=1 w found
	a=$(model_words "$2")
	for e in $(model_words "$1"); do
		found=0
		for w in $a; do
			if [ "$first" = 1 ] && [ "$w" = "$e" ]; then found=1; fi
			if [ "$first" = 0 ] && [ "${w#"$e"}" != "$w" ]; then found=1; fi
		done
		[ "$found" = 1 ] || return 1
		first=0
	done
	[ "$first" = 0 ]
}

# --- driver --------------------------------------------------------------------------------

smi_names=() smi_count=0 driver=""
smi_ok=0
os_detect
gpu_scan
GC_OUT="not installed (no NVIDIA driver)"
if have nvidia-smi && gc_capture nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,memory.total,driver_version \
	--format=csv,noheader,nounits; then
	smi_ok=1
	smi_rows=$GC_OUT
	while IFS=, read -r idx name uuid bus mem drv; do
		[ -n "$idx" ] || continue
		name=${name# } uuid=${uuid# } bus=${bus# } mem=${mem# } drv=${drv# }
		smi_names+=("$name")
		driver=$drv
		gpus_json="${gpus_json:+$gpus_json,}{\"index\":$idx,\"name\":$(json_str "$name"),\"uuid\":$(json_str "$uuid"),\"pci_bus_id\":$(json_str "$bus"),\"memory_mib\":${mem:-0}}"
	done <<<"$smi_rows"
	smi_count=${#smi_names[@]}
fi

if wants driver; then
	if [ "$smi_ok" = 1 ] && [ "$smi_count" -gt 0 ]; then
		check nvidia-smi true "driver $driver, $(plural "$smi_count" GPU)"
	else
		check nvidia-smi false "nvidia-smi: $(printf '%s' "$GC_OUT" | sed -n '1,2p')"
	fi

	expected=${EXPECT_GPUS:-$GPU_COUNT}
	if [ "$smi_count" = "$expected" ] && [ "$smi_count" -gt 0 ]; then
		check gpu-count true "$(plural "$smi_count" GPU), as expected"
	elif [ "$smi_count" = 0 ] && [ "$GPU_COUNT" = 0 ] && [ -z "$EXPECT_GPUS" ]; then
		check gpu-count false "no GPU: neither nvidia-smi nor the PCI bus shows one"
	elif [ -n "$EXPECT_GPUS" ]; then
		check gpu-count false "nvidia-smi sees $(plural "$smi_count" GPU) and the PCI bus shows $GPU_COUNT; the instance type has $EXPECT_GPUS"
	else
		check gpu-count false "nvidia-smi sees $(plural "$smi_count" GPU) but the PCI bus shows $GPU_COUNT"
	fi

	if [ -n "$EXPECT_GPU_MODEL" ]; then
		bad=""
		for ((i = 0; i < smi_count; i++)); do
			model_matches "$EXPECT_GPU_MODEL" "${smi_names[i]}" || bad="${bad:+$bad, }GPU $i is '${smi_names[i]}'"
		done
		if [ "$smi_count" = 0 ]; then
			check gpu-model false "not checked: nvidia-smi lists no GPU"
		elif [ -n "$bad" ]; then
			check gpu-model false "expected '$EXPECT_GPU_MODEL': $bad"
		else
			check gpu-model true "every GPU is '${smi_names[0]}' ($EXPECT_GPU_MODEL)"
		fi
	fi

	# one field at a time: an old driver that does not know a field fails only that one
	field() { nvidia-smi --query-gpu="$1" --format=csv,noheader,nounits 2>/dev/null </dev/null || true; }
	if [ "$smi_count" -gt 0 ]; then
		mapfile -t ecc < <(field ecc.errors.uncorrected.volatile.total)
		mapfile -t remap < <(field remapped_rows.pending)
		mapfile -t remapfail < <(field remapped_rows.failure)
		mapfile -t retire < <(field retired_pages.pending)
		bad=""
		for ((i = 0; i < smi_count; i++)); do
			e=${ecc[i]:-} r=${remap[i]:-} f=${remapfail[i]:-} p=${retire[i]:-}
			if [[ $e =~ ^[0-9]+$ ]] && [ "$e" -gt 0 ]; then
				bad="${bad:+$bad; }GPU $i: $e uncorrectable ECC errors"
			fi
			[ "$r" != Yes ] || bad="${bad:+$bad; }GPU $i: a row remap is pending (reset the GPU or reboot)"
			[ "$f" != Yes ] || bad="${bad:+$bad; }GPU $i: row remapping failed (the GPU needs service)"
			[ "$p" != Yes ] || bad="${bad:+$bad; }GPU $i: pages are pending retirement"
		done
		if [ -n "$bad" ]; then
			check ecc false "$bad"
		else
			check ecc true "no uncorrectable ECC errors, no pending row remaps or page retirements"
		fi
	else
		check ecc false "not checked: nvidia-smi lists no GPU"
	fi

	xid_name() {
		case "$1" in
		48) echo "double-bit ECC error" ;;
		61 | 62) echo "internal micro-controller fault" ;;
		63) echo "ECC page retirement or row remapping event" ;;
		64) echo "ECC page retirement or row remapping failure" ;;
		74) echo "NVLink error" ;;
		79) echo "GPU has fallen off the bus" ;;
		92) echo "high single-bit ECC error rate" ;;
		94) echo "contained ECC error" ;;
		95) echo "uncontained ECC error" ;;
		119 | 120) echo "GSP error" ;;
		140) echo "unrecovered ECC error" ;;
		*) echo "critical" ;;
		esac
	}
	if gc_capture as_root dmesg; then
		found=""
		re='NVRM: Xid \(PCI:([^)]*)\): ([0-9]+)'
		while IFS= read -r line; do
			[[ $line =~ $re ]] || continue
			x=${BASH_REMATCH[2]}
			case " $SMOKE_XID " in *" $x "*) ;; *) continue ;; esac
			entry="Xid $x on ${BASH_REMATCH[1]} ($(xid_name "$x"))"
			case "; $found; " in *"; $entry; "*) continue ;; esac
			found="${found:+$found; }$entry"
		done <<<"$GC_OUT"
		if [ -n "$found" ]; then
			check xid false "$found"
		else
			check xid true "no critical Xid in the kernel log"
		fi
	else
		check xid false "cannot read the kernel log: $(printf '%s' "$GC_OUT" | sed -n '1p') (dmesg needs root or sudo)"
	fi
fi

# --- the CUDA program ----------------------------------------------------------------------

# json_field NAME: a string or number of the program's one-line JSON ("error", "cuda_error")
json_field() {
	local v
	v=$(sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" <<<"$prog_out" | sed -n '1p')
	[ -n "$v" ] || v=$(sed -n "s/.*\"$1\":\\([-0-9.]*\\).*/\\1/p" <<<"$prog_out" | sed -n '1p')
	printf '%s' "$v"
}

prog_out="" prog_ok=0
nccl_wanted=0
if wants nccl && [ "${smi_count:-0}" -ge 2 ]; then
	nccl_wanted=1
fi
if wants cuda || [ "$nccl_wanted" = 1 ]; then
	if [ -n "${NVCC:-}" ]; then
		nvcc=$NVCC
	elif [ -n "$CUDA" ] && [ "$CUDA" != none ]; then
		nvcc=/usr/local/cuda-$CUDA/bin/nvcc
	else
		nvcc=/usr/local/cuda/bin/nvcc
	fi
	flags=(-O2 -std=c++17)
	libs=(-lcublas -ldl)
	if [ "$nccl_wanted" = 1 ]; then
		flags+=(-DGC_SMOKE_NCCL)
		libs+=(-lnccl)
		if [ ! -e /usr/include/nccl.h ] && [ ! -e "$(dirname "$nvcc")/../include/nccl.h" ]; then
			info "installing NCCL for the all-reduce test"
			nccl_pkgs=(libnccl2 libnccl-dev)
			[ "$PKG" = apt ] || nccl_pkgs=(libnccl libnccl-devel)
			(need_root && cuda_repo_setup && pkg_install "${nccl_pkgs[@]}") >&2 ||
				warn "cannot install ${nccl_pkgs[*]}"
		fi
	fi
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/gpucluster
	bin=""
	if [ ! -x "$nvcc" ]; then
		cuda_detail="no nvcc at '$nvcc' (is the CUDA toolkit installed? nvcc is not on PATH by default)"
	elif [ ! -r "$SMOKE_SRC" ]; then
		cuda_detail="the smoke program's source is missing: '$SMOKE_SRC' (set SMOKE_SRC or GC_DIR)"
	else
		key=$( (cat "$SMOKE_SRC" && echo "$nvcc ${flags[*]} ${libs[*]}") | sha256sum | cut -c1-16)
		bin=$cache/smoke-$key
		mkdir -p "$cache"
		if [ ! -x "$bin" ]; then
			info "compiling $SMOKE_SRC with $nvcc"
			rpath=$(dirname "$nvcc")/../lib64
			if ! gc_capture "$nvcc" "${flags[@]}" -o "$bin.tmp" "$SMOKE_SRC" "${libs[@]}" \
				-Xlinker -rpath -Xlinker "$rpath"; then
				cuda_detail="nvcc cannot compile the smoke program: $(printf '%s' "$GC_OUT" | grep -iE 'error|fatal' | sed -n '1,3p' | tr '\n' ' ')"
				rm -f "$bin.tmp"
				bin=""
			else
				mv "$bin.tmp" "$bin"
			fi
		fi
	fi
	if [ -n "$bin" ]; then
		info "running the smoke program on $(plural "$smi_count" GPU)"
		err=$(mktemp "${TMPDIR:-/tmp}/gc-smoke.XXXXXX")
		rc=0
		prog_out=$(timeout "$SMOKE_TIMEOUT" "$bin" 2>"$err" </dev/null | tail -n 1) || rc=$?
		msg=$(head -n 3 "$err" | tr '\n' ' ')
		rm -f "$err"
		[[ $prog_out == *'"simulated":true'* ]] && simulated=true
		if [ "$rc" = 0 ] && [[ $prog_out == '{'*'"gpus":['* ]] && [[ $prog_out != *'"error":'* ]]; then
			prog_ok=1
			gpus_json=$(sed -n 's/.*"gpus":\[\(.*\)\].*/\1/p' <<<"$prog_out")
			n=$(grep -o '"index":' <<<"$gpus_json" | wc -l)
			cuda_runtime=$(json_field cuda_runtime)
			driver=$(json_field driver)
			extra_json=",\"cuda_runtime\":$(json_str "$cuda_runtime"),\"driver\":$(json_str "$driver")"
			nccl_obj=$(sed -n 's/.*"nccl":\({[^}]*}\).*/\1/p' <<<"$prog_out")
			[ -z "$nccl_obj" ] || extra_json="$extra_json,\"nccl\":$nccl_obj"
			cuda_detail="CUDA $cuda_runtime ran on $(plural "$n" GPU)"
			if [ "$smi_ok" = 1 ] && [ "$n" != "$smi_count" ]; then
				prog_ok=0
				cuda_detail="$cuda_detail, but nvidia-smi lists $smi_count"
			fi
			[ "$simulated" = false ] || cuda_detail="$cuda_detail (simulated figures)"
		elif [ -n "$(json_field error)" ]; then
			cuda_detail="the smoke program failed: $(json_field error) (cudaError $(json_field cuda_error))"
		else
			cuda_detail="the smoke program failed (exit $rc): ${msg:-no output}"
		fi
	fi
	if wants cuda; then
		if [ "$prog_ok" = 1 ]; then check cuda true "$cuda_detail"; else check cuda false "$cuda_detail"; fi
	fi
fi

# --- the container runtime -----------------------------------------------------------------

if wants container; then
	# the docker group takes effect at the next login; sudo meanwhile
	docker_cmd=(docker)
	if [ "$GC_IS_ROOT" = 0 ] && ! docker info >/dev/null 2>&1 </dev/null; then
		docker_cmd=(sudo -n docker)
	fi
	info "docker run --gpus all $SMOKE_DOCKER_IMAGE nvidia-smi -L"
	if ! have docker; then
		check container false "docker is not installed"
	elif gc_capture timeout "$SMOKE_TIMEOUT" "${docker_cmd[@]}" run --rm --gpus all "$SMOKE_DOCKER_IMAGE" nvidia-smi -L; then
		n=$(grep -c '^GPU [0-9]' <<<"$GC_OUT" || true)
		if [ "$n" = "$smi_count" ] && [ "$n" -gt 0 ]; then
			check container true "a container sees all $(plural "$n" GPU)"
		else
			check container false "a container sees $(plural "$n" GPU), the node $smi_count"
		fi
	else
		check container false "docker run --gpus all fails: $(printf '%s' "$GC_OUT" | grep -v '^Unable to find image\|Pulling\|Digest\|Status' | sed -n '1,2p')"
	fi
fi

# --- NCCL ----------------------------------------------------------------------------------

if wants nccl; then
	if [ "${smi_count:-0}" -lt 2 ]; then
		check nccl true "not applicable: $(plural "${smi_count:-0}" GPU)"
	elif [ "$prog_ok" != 1 ]; then
		check nccl false "not run: the smoke program did not run (${cuda_detail:-})"
	else
		busbw=$(sed -n 's/.*"busbw_gbps":\([0-9.]*\).*/\1/p' <<<"$nccl_obj")
		if [ -z "$busbw" ]; then
			check nccl false "the smoke program reported no all-reduce result"
		elif [[ $nccl_obj != *'"ok":true'* ]]; then
			check nccl false "the all-reduce gave wrong sums"
		elif awk -v b="$busbw" -v m="$SMOKE_NCCL_MIN_BUSBW" 'BEGIN { exit !(b >= m && b > 0) }'; then
			check nccl true "all-reduce over $smi_count GPUs: bus bandwidth $busbw GB/s (floor $SMOKE_NCCL_MIN_BUSBW)"
		else
			check nccl false "all-reduce bus bandwidth $busbw GB/s is below the floor of $SMOKE_NCCL_MIN_BUSBW GB/s"
		fi
	fi
fi

# --- bucket mounts ---------------------------------------------------------------------------

# every bucket of MOUNTS is mounted at its path; else the mounts step's last error for it
for m in ${MOUNTS:-}; do
	bucket=${m%%:*} path=${m#*:}
	path=${path%:*}
	if mountpoint -q "$path" </dev/null 2>/dev/null; then
		check mount true "bucket '$bucket' at $path"
	else
		reason=$(cat "$GC_STATE_DIR/mounts/$bucket.err" 2>/dev/null </dev/null || true)
		check mount false "bucket '$bucket' is not mounted at $path: ${reason:-the mount is gone (gpucluster bootstrap --from mounts mounts it again)}"
	fi
done

[ -n "$extra_json" ] || extra_json=",\"driver\":$(json_str "$driver")"
finish
