#!/usr/bin/env bash
# smoke-nvcc.sh: compiles templates/smoke/smoke.cu with the build machine's nvcc, the way
# smoke.sh compiles it on a node, with every warning an error; again with -DGC_SMOKE_NCCL
# when NCCL's header is installed. No GPU needed.
#   compile: smoke-nvcc.sh NVCC SRC OUTDIR   -> OUTDIR/smoke (and OUTDIR/smoke-nccl)
#   run:     smoke-nvcc.sh --run OUTDIR      -> runs OUTDIR/smoke on this machine's GPUs and
#            checks its JSON (the ctest labelled "gpu")
set -euo pipefail

fail() {
	printf 'smoke-nvcc.sh: FAIL: %s\n' "$*" >&2
	exit 1
}

if [ "${1:-}" = --run ]; then
	out=$2
	[ -x "$out/smoke" ] || fail "'$out/smoke' is missing: the compile test did not run"
	"$out/smoke" >"$out/smoke.json" || fail "the smoke program failed: $(cat "$out/smoke.json")"
	cat "$out/smoke.json"
	python3 - "$out/smoke.json" <<'PY' || fail "the smoke program's JSON: $(cat "$out/smoke.json")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, "one JSON line"
d = json.loads(lines[0])
assert d["simulated"] is False and "error" not in d, d
assert len(d["gpus"]) >= 1, d
for g in d["gpus"]:
    for k in ("h2d_gbps", "d2h_gbps", "d2d_gbps", "gemm_tflops", "sgemm_tflops", "hgemm_tflops"):
        assert g[k] > 0, (k, g)
    assert g["memory_mib"] > 0 and g["uuid"].startswith("GPU-") and g["name"], g
    assert g["ecc_uncorrected"] in (0, None), g
assert d["cuda_runtime"] and d["driver"] != "unknown", d
PY
	if [ -x "$out/smoke-nccl" ] && [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["gpus"]))' "$out/smoke.json")" -ge 2 ]; then
		"$out/smoke-nccl" | tee "$out/smoke-nccl.json" | grep -q '"nccl":{[^}]*"ok":true' ||
			fail "the NCCL all-reduce: $(cat "$out/smoke-nccl.json")"
	fi
	echo "smoke-nvcc.sh: the smoke program ran"
	exit 0
fi

nvcc=$1 src=$2 out=$3
mkdir -p "$out"
flags=(-O2 -std=c++17 -Werror all-warnings -Xcompiler '-Wall,-Wextra,-Werror')
"$nvcc" "${flags[@]}" -o "$out/smoke" "$src" -lcublas -ldl || fail "nvcc cannot compile $src"
inc=$(dirname "$nvcc")/../include
if [ -e /usr/include/nccl.h ] || [ -e "$inc/nccl.h" ]; then
	"$nvcc" "${flags[@]}" -DGC_SMOKE_NCCL -o "$out/smoke-nccl" "$src" -lcublas -ldl -lnccl ||
		fail "nvcc cannot compile $src with -DGC_SMOKE_NCCL"
	echo "smoke-nvcc.sh: compiled smoke and smoke-nccl with $nvcc"
else
	rm -f "$out/smoke-nccl"
	echo "smoke-nvcc.sh: compiled smoke with $nvcc (no nccl.h here: the NCCL variant was not compiled)"
fi
