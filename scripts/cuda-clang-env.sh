# A CUDA compiler on a machine without NVIDIA's toolkit, for compiling (not running)
# the CUDA sources locus's C++ users write: Debian's clang 19 in CUDA mode, over NVIDIA's
# CUDA 11.8 headers, libdevice, ptxas and libcudart from PyPI wheels
# (nvidia-cuda-nvcc-cu11, nvidia-cuda-runtime-cu11; the headers of nvidia-curand-cu11,
# which clang's CUDA wrapper includes), laid out as a CUDA path in
# ~/.cache/locus/cuda-11.8 (made once). Sourced; sets LOCUS_CUDA_PATH and
# LOCUS_CUDA_CLANG, and puts the CUDA path's bin (ptxas) on PATH.
#
#   . scripts/cuda-clang-env.sh
#   $LOCUS_CUDA_CLANG -x cuda --cuda-path=$LOCUS_CUDA_PATH --cuda-gpu-arch=sm_80 \
#       --cuda-device-only -c app.cu      # device code: a cubin, through NVIDIA's ptxas
#
# Why this set: the wheels carry no nvcc and no `fatbinary`, so clang compiles each side
# on its own (--cuda-device-only: cubins for each sm_XY; --cuda-host-only: the host
# object, which links against libcudart and locus) and no runnable binary is made: that
# waits for a GPU machine with nvcc. Debian's clang 15 fails on these headers (its
# `__noinline__` clashes with libstdc++ 12: LLVM issue 57544) and knows no sm_90; CUDA
# 12.x wheels need a clang newer than 12.x's texture templates allow in clang 15.
LOCUS_CUDA_PATH=${LOCUS_CUDA_PATH:-$HOME/.cache/locus/cuda-11.8}
if ! command -v clang++-19 >/dev/null; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends clang-19 >/dev/null
fi
LOCUS_CUDA_CLANG=$(command -v clang++-19)
if [ ! -x "$LOCUS_CUDA_PATH/bin/ptxas" ]; then
  (
    set -e
    pip=${LOCUS_SYCL_VENV:+$LOCUS_SYCL_VENV/bin/}pip
    wheels=$(mktemp -d)
    "$pip" download -q --no-deps -d "$wheels" "nvidia-cuda-nvcc-cu11==11.8.89" \
      "nvidia-cuda-runtime-cu11==11.8.89" "nvidia-curand-cu11==10.3.0.86"
    python3 - "$wheels" "$LOCUS_CUDA_PATH.part" <<'PY'
import glob, os, stat, sys, zipfile
wheels, to = sys.argv[1], sys.argv[2]
wanted = {"cuda_runtime/include/": "include/", "cuda_nvcc/include/": "include/",
          "curand/include/": "include/", "cuda_nvcc/bin/ptxas": "bin/ptxas",
          "cuda_nvcc/nvvm/libdevice/": "nvvm/libdevice/",
          "cuda_runtime/lib/libcudart.so.11.0": "lib64/libcudart.so.11.0"}
for wheel in glob.glob(os.path.join(wheels, "*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            inside = name.split("nvidia/", 1)[-1]
            for prefix, dest in wanted.items():
                if inside.startswith(prefix) and not name.endswith("/"):
                    path = os.path.join(to, dest + inside[len(prefix):])
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, "wb") as f:
                        f.write(z.read(name))
ptxas = os.path.join(to, "bin/ptxas")
os.chmod(ptxas, os.stat(ptxas).st_mode | stat.S_IEXEC)
os.symlink("libcudart.so.11.0", os.path.join(to, "lib64/libcudart.so"))
PY
    rm -rf "$wheels" "$LOCUS_CUDA_PATH"
    mv "$LOCUS_CUDA_PATH.part" "$LOCUS_CUDA_PATH"
  )
fi
export LOCUS_CUDA_PATH LOCUS_CUDA_CLANG
export PATH=$LOCUS_CUDA_PATH/bin:$PATH
