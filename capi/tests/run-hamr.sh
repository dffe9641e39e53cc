#!/usr/bin/env bash
# HAMR's C++ API over the locus library installed in PREFIX, built the way a HAMR user
# builds (pkg-config; a CMake project): HAMR's own tests and its guide's OpenMP example as
# written, then with their producers' allocators at every other technology present; the
# C++ conformance test at every allocator present; it again under AddressSanitizer /
# UndefinedBehaviorSanitizer and valgrind (host and OpenMP allocators).
#   capi/tests/run-hamr.sh PREFIX
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix="${1:?usage: capi/tests/run-hamr.sh PREFIX}"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
read -r -a locus <<<"$(pkg-config --cflags --libs locus | tr '\n' ' ')"
cxx=(c++ -std=c++17 -fopenmp -Wall -Wextra)

cc -std=c11 capi/tests/c/locations.c "${locus[@]}" -o "$out/locations"
mapfile -t here < <("$out/locations")
present() { printf '%s\n' "${here[@]}" | grep -q "^$1:"; }
others=()
for t in opencl sycl webgpu; do present "$t" && others+=("$t"); done

# Replaces the allocators named after `int main` (the producers) with $2.
substitute() { # file allocator
  awk -v to="$2" '/int main/ { m = 1 } m { gsub(/allocator::(openmp|malloc)/, "allocator::" to) } { print }' "$1"
}
run() { # binary label -> output in $1.log
  if ! "$1" >"$1.log" 2>&1; then echo "FAILED: $2"; tail -20 "$1.log"; exit 1; fi
}

echo "--- HAMR's own tests, as written"
for t in test_hamr_pipeline_host test_hamr_pipeline_openmp test_hamr_openmp_allocator; do
  "${cxx[@]}" "capi/tests/hamr-upstream/$t.cpp" "${locus[@]}" -o "$out/$t"
  run "$out/$t" "$t"
  echo "$t: $(tail -1 "$out/$t.log" | cut -c1-60)"
done
for t in test_hamr_pipeline_host test_hamr_pipeline_openmp; do
  for to in "${others[@]}"; do
    substitute "capi/tests/hamr-upstream/$t.cpp" "$to" >"$out/$t-$to.cpp"
    "${cxx[@]}" -Icapi/tests/hamr-upstream "$out/$t-$to.cpp" "${locus[@]}" -o "$out/$t-$to"
    run "$out/$t-$to" "$t with $to producers"
    grep -q "all elements are equal to 4300" "$out/$t-$to.log"
    echo "$t with $to producers: $(tail -1 "$out/$t-$to.log")"
  done
done

echo "--- the guide's Hello World! w/ C++ and OpenMP"
hello=examples/cpp/hamr/hello_openmp
"${cxx[@]}" "$hello/hello_openmp.cpp" "${locus[@]}" -o "$out/hello"
run "$out/hello" "hello_openmp"
expected="$(printf '2 %.0s' $(seq 400))"
[ "$(cat "$out/hello.log")" = "$expected" ] || { echo "FAILED: hello_openmp printed $(head -c 200 "$out/hello.log")"; exit 1; }
for to in "${others[@]}"; do
  mkdir -p "$out/hello-$to"
  cp "$hello/add.h" "$hello/write.h" "$out/hello-$to/"
  substitute "$hello/hello_openmp.cpp" "$to" >"$out/hello-$to/hello_openmp.cpp"
  "${cxx[@]}" "$out/hello-$to/hello_openmp.cpp" "${locus[@]}" -o "$out/hello-$to/hello"
  run "$out/hello-$to/hello" "hello_openmp with $to producers"
  cmp -s "$out/hello.log" "$out/hello-$to/hello.log" || { echo "FAILED: hello_openmp with $to differs"; exit 1; }
done
echo "hello_openmp: 400 values of 2, the same with producers at: ${others[*]:-(none)}"
cmake -S examples/cpp/hamr -B "$out/cmake" >/dev/null && cmake --build "$out/cmake" >/dev/null
"$out/cmake/hello_openmp" 2>&1 | cmp -s - "$out/hello.log"
echo "the CMake project builds and runs it"

echo "--- the guide's CUDA and HIP examples, where their compilers are"
for ex in hello_cuda:nvcc hello_hip:hipcc; do
  dir="examples/cpp/hamr/${ex%%:*}"
  if command -v "${ex##*:}" >/dev/null; then
    (cd "$dir" && make >/dev/null) && echo "${ex%%:*}: built with ${ex##*:}"
  else
    echo "SKIPPED: ${ex%%:*} (no ${ex##*:} here)"
  fi
done

echo "--- conformance at every allocator present"
allocators=(cpp malloc openmp "${others[@]}")
present cuda && allocators+=(cuda cuda_uva cuda_host)
present hip && allocators+=(hip)
"${cxx[@]}" capi/tests/cpp/hamr_conformance.cc "${locus[@]}" -o "$out/conformance"
"$out/conformance" "${allocators[@]}" | tail -1
"${cxx[@]}" -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
  capi/tests/cpp/hamr_conformance.cc "${locus[@]}" -o "$out/conformance-asan"
LOCUS_BACKENDS=host,openmp ASAN_OPTIONS=detect_leaks=1 "$out/conformance-asan" cpp malloc openmp | tail -1
LOCUS_BACKENDS=host,openmp valgrind --quiet --leak-check=full --show-possibly-lost=no \
  --errors-for-leak-kinds=definite --error-exitcode=3 "$out/conformance" cpp malloc openmp | tail -1
