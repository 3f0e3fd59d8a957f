#!/usr/bin/env bash
# Builds the sub-document fuzz target with Debian's clang (libFuzzer +
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
fuzz_build "$cxx" "$work/subdoc_fuzzer" -I"$src/src" "$src/tests/subdoc/fuzz/subdoc_fuzzer.cc" \
    "$src"/src/subdoc/*.cc "$src/src/storage/crc32c.cc" "$src/src/protocol/auth/crypto.cc" -lcrypto
# Seeds (see the layout in subdoc_fuzzer.cc): a JSON document with a
# multi-lookup, a multi-mutation, and a document with an xattr blob.
printf '\x01\x00\x11{"a":[1,2],"b":{}}\xc5\x00\x00\x04a[-1]\xd2\x00\x00\x01b\x00\x00\x00\x00' \
    >"$work/corpus/lookup"
printf '\x01\x00\x11{"a":[1,2],"b":{}}\xc8\x01\x00\x03\x00\x00\x00\x01b.c7\xcf\x00\x00\x01\x00\x00\x00\x02n5\xcb\x00\x00\x01\x00\x00\x00\x03a"x"' \
    >"$work/corpus/mutation"
printf '\x05\x00\x1a\x00\x00\x00\x0e\x00\x00\x00\x0a_sync\x00{"r":1}\x00{"a":1}\xc8\x14\x00\x07\x00\x00\x00\x11_sync.c"${Mutation.CAS}"\xc9\x00\x00\x01\x00\x00\x00\x00a' \
    >"$work/corpus/xattr"
# A stored xattr key that is not valid (a client's SET with the XATTR bit can
# store one): a mutation keeps it as it was (found by this fuzzer).
printf '\x05\x00\x1a\x00\x00\x00\x0e\x00\x00\x00\x0a_\xff\xffsync\xa2\x00\x00\x00\x00\x00\x00\x00\x0f\x00\x00\x01\x00\x00\x00\x00\x00\x00\x05":1}\x14' \
    >"$work/corpus/xattr-invalid-key"
fuzz_run "$work/subdoc_fuzzer" "$work" "$seconds"
