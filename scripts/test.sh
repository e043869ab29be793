#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls exactly this): installs what is
# missing, builds with ASan+UBSan and -Werror, builds the fuzzers with clang, and
# runs every test through ctest — unit, spec corpus, schema, CLI, style check and a
# bounded fuzzing run. Tests that need a real GPU or cloud carry the labels "gpu" or
# "cloud" and are left out. Environment: GC_FUZZ_SECONDS (default 60: the whole fuzzing
# run, shared among the fuzzers as tests/fuzz/CMakeLists.txt says), GC_JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh

jobs=${GC_JOBS:-$(nproc)}
fuzz_seconds=${GC_FUZZ_SECONDS:-60}

mkdir -p build
fuzzers="fuzz-spec fuzz-ec2 fuzz-ecs fuzz-cvm" # the spec loader, then each cloud's parsers
echo "== building the fuzzers (clang, libFuzzer)"
cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang -DGC_FUZZ=ON >build/fuzz.log 2>&1 ||
	{ cat build/fuzz.log; exit 1; }
fuzz_list=
for f in $fuzzers; do fuzz_list+="${fuzz_list:+;}$PWD/build/fuzz/tests/fuzz/$f"; done
# shellcheck disable=SC2086 # the list splits into targets
cmake --build build/fuzz --target $fuzzers -j "$jobs" >>build/fuzz.log 2>&1 ||
	{ cat build/fuzz.log; exit 1; }

echo "== building with -Werror and ASan+UBSan"
cmake -S . -B build/test -DGC_WERROR=ON -DGC_SANITIZE=address,undefined \
	-DGC_FUZZER="$fuzz_list" -DGC_FUZZ_SECONDS="$fuzz_seconds" >/dev/null
cmake --build build/test -j "$jobs"

echo "== running the tests"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir build/test --output-on-failure -j "$jobs" -LE 'gpu|cloud'
