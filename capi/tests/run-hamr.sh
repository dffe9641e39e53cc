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

echo "--- HAMR's CUDA and HIP tests and the guide's hello_cuda / hello_hip, compiled unchanged"
# Where no GPU is present they are compiled only, and say SKIPPED-RUN (never passed).
read -r -a cflags <<<"$(pkg-config --cflags locus | tr '\n' ' ')"
read -r -a libs <<<"$(pkg-config --libs locus | tr '\n' ' ')"
upstream=capi/tests/hamr-upstream
cuda_programs=(test_hamr_pipeline_cuda test_hamr_stream_cuda test_hamr_multi_gpu_cuda
  "test_hamr_pipeline_cuda_openmp test_hamr_pipeline_cuda_openmp_cu test_hamr_pipeline_cuda_openmp_mp")
if command -v nvcc >/dev/null; then
  # NVIDIA's toolkit: whole programs, as HAMR's CMake builds them (.cpp as CUDA).
  for program in "${cuda_programs[@]}"; do
    read -r -a files <<<"$program"; name=${files[0]}
    nvcc -x cu -std=c++17 -Xcompiler -fopenmp -DHAMR_ENABLE_CUDA "${files[@]/#/$upstream/}" \
      "${cflags[@]}" "${libs[@]}" -o "$out/$name"
    if present cuda; then run "$out/$name" "$name"; echo "$name: ran"; else echo "$name: built by nvcc; SKIPPED-RUN (no CUDA device)"; fi
  done
  (cd examples/cpp/hamr/hello_cuda && make >/dev/null) && echo "hello_cuda: built with nvcc"
elif [ -n "${LOCUS_CUDA_CLANG:-}" ]; then
  # clang in CUDA mode (scripts/cuda-clang-env.sh): each side on its own, no fat binary.
  cuda=("$LOCUS_CUDA_CLANG" -x cuda --cuda-path="$LOCUS_CUDA_PATH" -std=c++17 -DHAMR_ENABLE_CUDA "${cflags[@]}")
  cuda_programs+=("hello_cuda")
  for program in "${cuda_programs[@]}"; do
    read -r -a files <<<"$program"; name=${files[0]}; objects=()
    for f in "${files[@]}"; do
      src=$upstream/$f.cpp; [ "$f" = hello_cuda ] && src=examples/cpp/hamr/hello_cuda/hello_cuda.cu
      for arch in sm_70 sm_80 sm_90; do
        "${cuda[@]}" --cuda-gpu-arch=$arch --cuda-device-only -c "$src" -o "$out/$f-$arch.cubin"
      done
      "${cuda[@]}" --cuda-host-only -c "$src" -o "$out/$f.o"; objects+=("$out/$f.o")
    done
    "$LOCUS_CUDA_CLANG" "${objects[@]}" "${libs[@]}" -L"$LOCUS_CUDA_PATH/lib64" -lcudart -o "$out/$name"
    echo "$name: device code compiled for sm_70, sm_80, sm_90 by clang and NVIDIA's ptxas, host code compiled and linked; SKIPPED-RUN (no fat binary without nvcc)"
  done
else
  echo "SKIPPED: HAMR's CUDA tests and hello_cuda (no nvcc, no clang CUDA set: . scripts/cuda-clang-env.sh)"
fi
if command -v hipcc >/dev/null; then
  for name in test_hamr_pipeline_hip test_hamr_multi_gpu_hip; do
    hipcc --offload-arch=gfx90a --offload-arch=gfx1030 -std=c++17 -DHAMR_ENABLE_HIP \
      "$upstream/$name.cpp" "${cflags[@]}" "${libs[@]}" -o "$out/$name" 2>"$out/$name.build.log"
    if present hip; then run "$out/$name" "$name"; echo "$name: ran"; else echo "$name: built by hipcc for gfx90a and gfx1030; SKIPPED-RUN (no HIP device)"; fi
  done
  cp -r examples/cpp/hamr/hello_hip "$out/hello_hip"
  (cd "$out/hello_hip" && make >/dev/null 2>"$out/hello_hip.build.log") && echo "hello_hip: built with hipcc by its Makefile; $(present hip && echo ran || echo SKIPPED-RUN)"
  present hip && run "$out/hello_hip/hello_hip" hello_hip
else
  echo "SKIPPED: HAMR's HIP tests and hello_hip (no hipcc here)"
fi

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
