# libfuzzer.sh: sourced by the fuzz runners (tests/*/fuzz/run_fuzzer.sh),
# which write their seeds into WORK_DIR/corpus. With `set -o pipefail` in
# the runner, fuzz_run fails on any crash or sanitizer report.

# fuzz_build CLANGXX OUTPUT SOURCES/FLAGS...: a libFuzzer target with
# AddressSanitizer and UBSan (any UB report ends the run).
fuzz_build() {
    local cxx="$1" out="$2"
    shift 2
    "$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined "$@" -o "$out"
}

# fuzz_run BINARY WORK_DIR SECONDS: runs from WORK_DIR/corpus for a bounded
# time. A crash leaves its input in WORK_DIR (crash-*) to replay:
#   BINARY WORK_DIR/crash-...
fuzz_run() {
    "$1" -max_total_time="$3" -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$2/" \
        -print_final_stats=1 "$2/corpus" 2>&1 | grep -v '^"' | tail -40
}
