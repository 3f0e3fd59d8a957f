#!/usr/bin/env bash
# Builds the request-parser fuzz target with Debian's clang (libFuzzer +
# AddressSanitizer + UBSan) and runs it for a bounded time from a small seed
# corpus. Exits non-zero on any crash or sanitizer report.
# Usage: run_fuzzer.sh SOURCE_DIR WORK_DIR [SECONDS [CLANGXX]]
set -euo pipefail
src="$1"
work="$2"
seconds="${3:-30}"
cxx="${4:-clang++}"
source "$src/tests/fuzz/libfuzzer.sh"
mkdir -p "$work/corpus"
# The keys' CRC-32 as the CMake build picks it: ISA-L where it is, else zlib.
if pkg-config --exists libisal 2>/dev/null; then crc=(-DKVEXEC_KEYS_CRC_ISAL -lisal); else crc=(-lz); fi
fuzz_build "$cxx" "$work/request_parser_fuzzer" -I"$src/src" -I"$src/include" \
    "$src/tests/protocol/fuzz/request_parser_fuzzer.cc" \
    "$src"/src/protocol/*.cc "$src"/src/protocol/auth/*.cc -lcrypto "${crc[@]}"
# Seeds: a binary GET, an alt-magic SET with a durability frame, text lines.
printf '\x80\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00foo' \
    >"$work/corpus/get"
printf '\x08\x01\x04\x01\x08\x00\x00\x00\x00\x00\x00\x0e\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x13\x03\x00\x64\x00\x00\x00\x00\x00\x00\x00\x00kv' \
    >"$work/corpus/durable_set"
printf 'set k 0 0 3 noreply\r\nabc\r\nget k j\r\nincr k 5\r\n' >"$work/corpus/text"
printf 'ms a2V5 3 b T10 F5 c k O1 q\r\nabc\r\nmg a2V5 b v k t s f\r\nma n N0 J5 MD v\r\nmn\r\ngat 1 k\r\n' \
    >"$work/corpus/meta"
printf 'n,,n=user,r=abcdefc=biws,r=abcdef,p=AAAA' >"$work/corpus/scram"
# DCP: a mutation (key "k", value "v"), a v1 snapshot marker, and a stream
# request's answer with a one-entry failover log.
printf '\x80\x57\x00\x01\x1f\x00\x00\x00\x00\x00\x00\x21\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00kv' \
    >"$work/corpus/dcp_mutation"
printf '\x80\x56\x00\x00\x14\x00\x00\x00\x00\x00\x00\x14\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x08\x00\x00\x00\x01' \
    >"$work/corpus/dcp_snapshot_marker"
printf '\x81\x53\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xfe\xed\xde\xca\x00\x00\x00\x00\x00\x00\x00\x05' \
    >"$work/corpus/dcp_stream_request_response"
fuzz_run "$work/request_parser_fuzzer" "$work" "$seconds"
