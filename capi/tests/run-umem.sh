#!/usr/bin/env bash
# libumem's API from C and C++, against the locus library installed in PREFIX, the way a
# user builds (pkg-config; a CMake project): umem's own tests (umem-upstream/run.sh), the
# conformance programs in C and C++ at every location here, the examples of umem's
# document, and the conformance programs under valgrind and AddressSanitizer /
# UndefinedBehaviorSanitizer. Every location in LOCUS_REQUIRE must be present.
#   capi/tests/run-umem.sh PREFIX
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix="${1:?usage: capi/tests/run-umem.sh PREFIX}"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
read -r -a locus <<<"$(pkg-config --cflags --libs locus | tr '\n' ' ')"
strict=(-Wall -Wextra -Werror)
sanitize=(-g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)

echo "--- umem's own tests"
capi/tests/umem-upstream/run.sh "$prefix"

cc -std=c11 "${strict[@]}" capi/tests/c/locations.c "${locus[@]}" -o "$out/locations"
mapfile -t here < <("$out/locations")
echo "--- conformance at ${here[*]}"
cc -std=c11 "${strict[@]}" -D_DEFAULT_SOURCE capi/tests/c/umem_conformance.c "${locus[@]}" -o "$out/umem_c"
c++ -std=c++17 "${strict[@]}" capi/tests/cpp/umem_conformance.cc "${locus[@]}" -o "$out/umem_cxx"
"$out/umem_c" "${here[@]}" | tail -1
"$out/umem_cxx" "${here[@]}" | tail -1

echo "--- the examples of umem's document"
cc -std=c11 "${strict[@]}" examples/c/umem_hello.c "${locus[@]}" -o "$out/umem_hello" && "$out/umem_hello"
cc -std=c11 "${strict[@]}" examples/c/umem_sync.c "${locus[@]}" -o "$out/umem_sync"
c++ -std=c++17 "${strict[@]}" examples/cpp/umem/hello.cpp "${locus[@]}" -o "$out/umem_hello_cxx" && "$out/umem_hello_cxx"
for location in "${here[@]}"; do
  "$out/umem_sync" "$location"
  c++ -std=c++17 "${strict[@]}" -include capi/tests/umem-upstream/at_location.h \
    -DUMEM_LOCATION="\"$location\"" examples/cpp/umem/sync.cpp "${locus[@]}" -o "$out/umem_sync_cxx"
  "$out/umem_sync_cxx"
done
echo "umem's document examples ran at ${#here[@]} locations"

echo "--- the examples as a CMake project (pkg_check_modules)"
cmake -S examples/c -B "$out/cmake-c" >/dev/null && cmake --build "$out/cmake-c" >/dev/null
cmake -S examples/cpp -B "$out/cmake-cpp" -DUMEM_LOCATION="${here[-1]}" >/dev/null
cmake --build "$out/cmake-cpp" >/dev/null
"$out/cmake-c/umem_sync" "${here[-1]}" && "$out/cmake-cpp/umem_sync_at_location"

# The vendor runtimes' own allocations are not locus's to answer for: the sanitizer and
# valgrind runs use the host and OpenMP (libgomp) only.
echo "--- sanitizers and valgrind (host, openmp:0)"
cc -std=c11 "${sanitize[@]}" -D_DEFAULT_SOURCE capi/tests/c/umem_conformance.c "${locus[@]}" -o "$out/umem_c_asan"
c++ -std=c++17 "${sanitize[@]}" capi/tests/cpp/umem_conformance.cc "${locus[@]}" -o "$out/umem_cxx_asan"
LOCUS_BACKENDS=host,openmp ASAN_OPTIONS=detect_leaks=1 "$out/umem_c_asan" host openmp:0 | tail -1
LOCUS_BACKENDS=host,openmp ASAN_OPTIONS=detect_leaks=1 "$out/umem_cxx_asan" host openmp:0 | tail -1
for prog in umem_c umem_cxx; do
  LOCUS_BACKENDS=host,openmp valgrind --quiet --leak-check=full --show-possibly-lost=no \
    --errors-for-leak-kinds=definite --error-exitcode=3 "$out/$prog" host openmp:0 | tail -1
done
