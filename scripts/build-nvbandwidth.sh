#!/usr/bin/env bash
# Builds NVIDIA's nvbandwidth (the transfer benchmark `locus bench` is read against) on a
# machine without a GPU or a CUDA toolkit, for scripts/run-offline.sh's `nvbandwidth`
# phase on a lent GPU machine (which may lack Boost or network): nvcc, cicc and the CUDA
# headers from PyPI's wheels (CUDA 13), Boost.Program_options from apt, libcuda and
# libnvidia-ml as link-time stubs (the driver's own are loaded there). Writes
# .dev/tools/nvbandwidth-dyn (the system's libstdc++) and .dev/tools/nvbandwidth
# (libstdc++ linked in: needs glibc 2.36), cubins for sm_90 and sm_100 only (no PTX:
# a driver older than the toolkit cannot JIT newer PTX).
#
#   scripts/build-nvbandwidth.sh [SOURCE]   SOURCE: NVIDIA/nvbandwidth's sources (a
#                                           checkout, or `git archive` of a snapshot);
#                                           default: a git clone of it into .dev/
set -euo pipefail
cd "$(dirname "$0")/.."
out=.dev/tools
work=.dev/nvbandwidth-build
mkdir -p "$out" "$work"
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >> .git/info/exclude
src=${1:-$work/src}
[ -d "$src" ] || git clone -q --depth 1 https://github.com/NVIDIA/nvbandwidth "$src"
[ -f /usr/include/boost/program_options.hpp ] || apt-get install -y -q libboost-program-options-dev
python3 -m venv "$work/venv"
"$work/venv/bin/pip" download -q --no-deps -d "$work/wheels" nvidia-cuda-nvcc nvidia-nvvm \
  nvidia-cuda-crt nvidia-cuda-runtime nvidia-cuda-cccl nvidia-nvml-dev
rm -rf "$work/x"
for w in "$work"/wheels/*.whl; do python3 -m zipfile -e "$w" "$work/x/"; done
cuda=$(pwd)/$work/x/nvidia/cu13
chmod +x "$cuda"/bin/* "$cuda"/nvvm/bin/*
flags=(-std=c++17 -O3 '-DGIT_VERSION="'"$(git -C "$src" describe --always --tags 2>/dev/null || echo unknown)"'"'
       -I"$src" -I"$cuda/include" -isystem "$cuda/include/cccl")
objs=$work/o
mkdir -p "$objs"
"$cuda/bin/nvcc" "${flags[@]}" -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100 \
  -c "$src/kernels.cu" -o "$objs/kernels.o"
for f in testcase testcases_ce testcases_sm memcpy nvbandwidth multinode_memcpy multinode_testcases \
         output json_output json/jsoncpp; do
  g++ "${flags[@]}" -c "$src/$f.cpp" -o "$objs/$(basename "$f").o"
done
# Link-time stubs of the driver's libraries: every cu* / nvml* symbol the objects use.
stubs=$work/stubs
mkdir -p "$stubs"
nm -u "$objs"/*.o | awk '{print $2}' | grep -E '^cu[A-Z]' | grep -v '^cuda' | sort -u \
  | sed 's/.*/void &(void){}/' > "$stubs/cuda.c"
nm -u "$objs"/*.o | awk '{print $2}' | grep -E '^nvml' | sort -u | sed 's/.*/void &(void){}/' > "$stubs/nvml.c"
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 "$stubs/cuda.c" -o "$stubs/libcuda.so"
gcc -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 "$stubs/nvml.c" -o "$stubs/libnvidia-ml.so"
link=("$objs"/*.o -L"$cuda/lib" -l:libcudart_static.a -Wl,-Bstatic -lboost_program_options
      -Wl,-Bdynamic -L"$stubs" -lnvidia-ml -lcuda -lpthread -ldl -lrt)
g++ "${link[@]}" -o "$out/nvbandwidth-dyn"
g++ -static-libstdc++ -static-libgcc "${link[@]}" -o "$out/nvbandwidth"
strip "$out/nvbandwidth-dyn" "$out/nvbandwidth"
echo "NVIDIA/nvbandwidth $(git -C "$src" rev-parse HEAD 2>/dev/null || grep -m1 -o 'v[0-9.]*' "$src/CHANGELOG.md"), nvcc $(ls "$work"/wheels | grep -o 'nvcc-[0-9.]*')" \
  > "$out/nvbandwidth.txt"
ls -la "$out"
