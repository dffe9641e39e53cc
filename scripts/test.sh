#!/usr/bin/env bash
# The test command: installs the runtimes that run on a CPU-only machine, then runs
# fmt, clippy, doc, the whole test suite with LOCUS_REQUIRE (a required backend that
# is missing FAILS the run), the examples, and the "no vendor library linked" check.
#
#   scripts/test.sh                       # what CI runs (installs with apt and pip)
#   LOCUS_REQUIRE=host,cuda scripts/test.sh   # on a GPU machine: require CUDA too
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step prints the seconds since the start, so that a CI log shows where the time goes.
step() { printf '\n==> [%ss] %s\n' "$SECONDS" "$*"; }
trap 'printf "\n==> [%ss] end (exit %s)\n" "$SECONDS" "$?"' EXIT

# 1. Runtimes (Debian/Ubuntu). Skipped when already installed.
# libamdhip64-5 is the HIP runtime (it loads and answers "no device" here);
# libamdhip64-dev has the headers the HIP bindings are checked against. Open MPI is for
# the `mpi` feature (tests/mpi.rs starts its jobs with mpirun; loopback only). hipcc
# compiles HAMR's HIP tests and the guide's hello_hip (run-hamr.sh; nothing runs them
# here).
packages=(pocl-opencl-icd ocl-icd-opencl-dev clinfo mesa-vulkan-drivers libvulkan1 bindgen libclang-dev
          libamdhip64-5 libamdhip64-dev valgrind openmpi-bin libopenmpi-dev cmake hipcc)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 2. SYCL: dpctl and Intel's CPU OpenCL runtime in a cached venv (PyPI), made visible
#    beside PoCL.
step "SYCL runtime (dpctl, intel-opencl-rt)"
# shellcheck source=scripts/sycl-env.sh
. scripts/sycl-env.sh
echo "LOCUS_SYCL_VENV=$LOCUS_SYCL_VENV"

step "compilers for code nothing runs here: clang 19 over NVIDIA's CUDA 11.8 wheels, ROCm 5.7's hiprtc"
# HAMR's CUDA tests (capi/tests/run-hamr.sh) are compiled by clang in CUDA mode; every
# HIP kernel for gfx942 / gfx1100 by Debian 13's ROCm 5.7 hiprtc, unpacked with its C
# library (src/backends/hip/real_compiler_tests.rs). Both are cached under ~/.cache/locus.
# shellcheck source=scripts/cuda-clang-env.sh
. scripts/cuda-clang-env.sh
# shellcheck source=scripts/hiprtc-5.7-env.sh
. scripts/hiprtc-5.7-env.sh
echo "LOCUS_CUDA_CLANG=$LOCUS_CUDA_CLANG LOCUS_CUDA_PATH=$LOCUS_CUDA_PATH LOCUS_HIPRTC_ROOT=$LOCUS_HIPRTC_ROOT"

export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
export LOCUS_REQUIRE="${LOCUS_REQUIRE:-host,openmp,opencl,sycl,webgpu}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
echo "LOCUS_REQUIRE=$LOCUS_REQUIRE"

step "SYCL bindings are what bindgen makes from the installed headers"
scripts/gen-sycl-bindings.sh "" "${TMPDIR:-/tmp}/locus-sycl-bindings.rs" >/dev/null 2>&1
diff -u src/backends/sycl/sys.rs "${TMPDIR:-/tmp}/locus-sycl-bindings.rs"
echo "ok: src/backends/sycl/sys.rs is up to date"

step "HIP bindings are what bindgen makes from the installed headers"
scripts/gen-hip-bindings.sh /usr/include "${TMPDIR:-/tmp}/locus-hip-bindings.rs" "${TMPDIR:-/tmp}/locus-hiprtc-bindings.rs" "${TMPDIR:-/tmp}/locus-hippool-bindings.rs" >/dev/null
diff -u src/backends/hip/sys.rs "${TMPDIR:-/tmp}/locus-hip-bindings.rs"
diff -u src/backends/hip/rtc_sys.rs "${TMPDIR:-/tmp}/locus-hiprtc-bindings.rs"
diff -u src/backends/hip/pool_sys.rs "${TMPDIR:-/tmp}/locus-hippool-bindings.rs"
# The entry-point traits the HIP and CUDA call layers go through, from the bindings and
# from cudarc's sys layer (the version Cargo.lock names, fetched here).
python3 scripts/gen-hip-traits.py "${TMPDIR:-/tmp}/locus-hip-traits.rs" >/dev/null
diff -u src/backends/hip/entry_points.rs "${TMPDIR:-/tmp}/locus-hip-traits.rs"
cargo fetch --quiet
python3 scripts/gen-cuda-driver-trait.py "" "${TMPDIR:-/tmp}/locus-cuda-driver.rs" >/dev/null
diff -u src/backends/cuda/entry_points.rs "${TMPDIR:-/tmp}/locus-cuda-driver.rs"
echo "ok: src/backends/hip/sys.rs, rtc_sys.rs and pool_sys.rs are up to date"

step "documents: every relative link and anchor resolves; the README at most 300 lines"
python3 scripts/check-links.py
readme_lines=$(wc -l < README.md)
[ "$readme_lines" -le 300 ] || { echo "FAIL: README.md has $readme_lines lines (at most 300: move detail into docs/guide/)"; exit 1; }
if grep -nE '20[0-9]{2}-[0-9]{2}-[0-9]{2}|[Ss]ession' README.md; then
  echo "FAIL: README.md carries dates or work notes (they go into the records under docs/)"; exit 1
fi

step "the guide: mdbook build docs, then every link of the built book resolves"
# mdBook from crates.io, built once into a cache of its own (search on, no server).
mdbook_root="$HOME/.cache/locus/tools/mdbook-0.5.4"
if [ ! -x "$mdbook_root/bin/mdbook" ]; then
  cargo install mdbook --locked --quiet --version 0.5.4 --no-default-features --features search \
    --root "$mdbook_root"
fi
"$mdbook_root/bin/mdbook" build docs 2>&1 | grep -v '^ INFO' || true
[ -f target/book/index.html ] || { echo "FAIL: mdbook build docs wrote no book"; exit 1; }
python3 scripts/check-book.py

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --all-targets --all-features -- -D warnings

step "every backend feature on its own, and none: the library and the locus tool build and pass clippy"
# A user may depend on locus with one backend (`default-features = false, features =
# ["opencl"]`); a backend never names another backend's types. The library's unit tests
# run with none of them too (the leaks step below, beside valgrind); running them with
# each backend alone would rebuild the dependency tree per feature set (each unifies the
# shared crates' features differently), minutes apiece.
for features in "" openmp opencl sycl webgpu cuda hip; do
  echo "--- features: ${features:-none}"
  cargo clippy --lib --bins --no-default-features ${features:+--features "$features"} -- -D warnings
done

step "cargo doc"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features

step "locus info (fails if a required backend is missing)"
cargo build --release --bins --examples
target/release/locus info

step "locus calibrate (the planner measures this machine; its own run time is printed)"
# Into a cache of its own, so that the tests below see the fixed order, as a fresh
# machine does (tests/planner.rs installs and checks a calibration itself).
calibration_cache=$(mktemp -d)
LOCUS_CACHE_DIR="$calibration_cache" target/release/locus calibrate | cut -c1-240
rm -rf "$calibration_cache"

step "no vendor library is linked at load time"
for bin in target/release/locus target/release/examples/hello_* target/release/examples/[01][0-9]_* target/release/examples/choose_backend; do
  case "$bin" in *.d) continue ;; esac
  if ldd "$bin" | grep -E 'libOpenCL|libvulkan|libcuda|libnvrtc|libamdhip64|libsycl|libDPCTL|libgomp'; then
    echo "FAIL: $bin links a vendor runtime at load time" >&2
    exit 1
  fi
done
echo "ok: none of libOpenCL, libvulkan, libcuda, libnvrtc, libamdhip64, libsycl, libDPCTLSyclInterface, libgomp"

step "examples"
# The teaching examples, one per technology (docs/guide/tech/), at every device here.
for ex in hello_host hello_openmp hello_opencl hello_sycl hello_webgpu; do
  echo "--- $ex"
  target/release/examples/$ex
done
for loc in opencl:1 opencl:2; do
  echo "--- hello_opencl $loc"
  POCL_DEVICES="pthread pthread" target/release/examples/hello_opencl "$loc"
done
for loc in host openmp:0 opencl:0 opencl:1 sycl:0 webgpu:0; do
  LOCUS_LOCATION=$loc target/release/examples/choose_backend
done
# CUDA and HIP: here there is no GPU, so the examples must say why and exit non-zero
# (on a GPU machine that names them in LOCUS_REQUIRE, they must run and check).
for t in cuda hip; do
  case ",$LOCUS_REQUIRE," in
    *,$t,*|*,$t:*) target/release/examples/hello_$t ;;
    *)
      if out=$(target/release/examples/hello_$t 2>&1); then
        echo "FAIL: hello_$t succeeded on a machine where $t is not required: $out" >&2
        exit 1
      fi
      echo "$out" | grep -q "^$t unavailable: " || { echo "FAIL: hello_$t: $out" >&2; exit 1; }
      echo "ok: hello_$t exits non-zero: $out"
      ;;
  esac
done
# The numbered teaching sequence; 06 to 15 on every location.
for ex in 01_locations 02_buffers 03_declared_access 04_transfer_matrix 05_codelet_vec_add; do
  echo "--- $ex"
  target/release/examples/$ex
done
for loc in host openmp:0 opencl:0 opencl:1 sycl:0 webgpu:0; do
  echo "--- 06_jacobi $loc, 07_async $loc, 08_memory_resources $loc, 09_queues_and_events $loc, 10_umem $loc, 11_conversions $loc, 12_transfer_modes $loc, 13_openhmpp_sgemm $loc, 14_openhmpp_resident $loc, 15_openhmpp_cond $loc"
  target/release/examples/06_jacobi "$loc"
  target/release/examples/07_async "$loc"
  target/release/examples/08_memory_resources "$loc"
  target/release/examples/09_queues_and_events "$loc"
  target/release/examples/10_umem "$loc"
  target/release/examples/11_conversions "$loc"
  target/release/examples/12_transfer_modes "$loc"
  target/release/examples/13_openhmpp_sgemm "$loc"
  target/release/examples/14_openhmpp_resident "$loc"
  target/release/examples/15_openhmpp_cond "$loc"
done

# Your own queue and kernel around locus's copies (OpenCL, SYCL, WebGPU; CUDA on a GPU).
for loc in opencl:0 opencl:1 sycl:0 webgpu:0; do
  target/release/examples/17_foreign_queues "$loc"
done

# The pipeline traced across four technologies, then summed up and drawn by the tool.
trace_dir=$(mktemp -d)
target/release/examples/19_trace "$trace_dir/pipeline.json" host,opencl:1,sycl:0,webgpu:0
target/release/locus trace summary "$trace_dir/pipeline.json" | head -12
target/release/locus trace svg "$trace_dir/pipeline.json" -o "$trace_dir/pipeline.svg"
rm -rf "$trace_dir"

step "leaks, in the background: the asynchrony tests under valgrind (no memory definitely lost)"
# Events, queues, worker threads and the memory async work keeps: about three minutes
# on one core, so it runs beside the Python and C steps (mostly one core each); the
# "leaks" step below waits for it.
exe=$(cargo test --all-features --test asynchrony --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\))/\1/p' | tail -1)
valgrind_log=$(mktemp)
LOCUS_BACKENDS=host valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=3 \
  "$exe" --test-threads=1 > "$valgrind_log" 2>&1 &
valgrind_pid=$!
echo "valgrind runs tests/asynchrony.rs in the background (pid $valgrind_pid)"

step "python: the wheel built once (maturin, abi3), installed into a fresh venv with no Rust on the path, then pytest on every location"
# The release a Python user installs: one abi3 wheel, built here with maturin, installed
# with pip into a new virtual environment whose PATH has no cargo or rustc (so nothing can
# be compiled at install time), and every Python test and example run from there.
# The other libraries the tests use (numpy, pyopencl, JAX, dpctl / dpnp, mpi4py) come
# from the cached SYCL venv through a .pth file, after the fresh venv's own packages.
# pytest fails (exit 1, or 5 when it collects nothing) on any error, and when
# LOCUS_REQUIRE names a missing location. pyopencl is a client nobody here wrote:
# python/tests/test_pyopencl.py runs its kernels on locus buffers in place at every
# OpenCL location; JAX (CPU) takes and gives DLPack zero-copy at every location
# (python/tests/test_jax.py). dpnp (Intel's numpy on SYCL) views locus's USM in place and
# locus adopts dpnp's (python/tests/test_dpnp.py). mpi4py (a binary wheel that loads the
# Open MPI installed above) carries locus buffers between ranks: python/tests/test_mpi.py
# starts its own mpirun jobs.
"$LOCUS_SYCL_VENV/bin/pip" install -q --disable-pip-version-check "numpy>=2.1" pytest pyopencl jax dpnp mpi4py "maturin>=1.5,<2"
"$LOCUS_SYCL_VENV/bin/pip" uninstall -q -y locus 2>/dev/null || true
wheels=$(mktemp -d)
(cd python && "$LOCUS_SYCL_VENV/bin/maturin" build --release --quiet -o "$wheels")
ls "$wheels"
fresh=$(mktemp -d)/venv
"$LOCUS_SYCL_VENV/bin/python" -m venv "$fresh"
"$LOCUS_SYCL_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
  > "$("$fresh/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/ci-clients.pth"
no_rust_path=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -e '\.cargo' -e 'rustup' | paste -sd: -)
if PATH="$no_rust_path" bash -c 'command -v cargo || command -v rustc'; then
  echo "FAIL: a Rust toolchain is still on the path for the wheel's install" >&2
  exit 1
fi
PATH="$no_rust_path" "$fresh/bin/pip" install -q --disable-pip-version-check --no-index "$wheels"/locus-*.whl
echo "installed: $("$fresh/bin/python" -c 'import locus, os; print(locus.__file__)')"
py="$fresh/bin/python"
# On a GPU machine: CuPy, a client nobody here wrote, for python/tests/test_gpu_clients.py
# (its tests skip, saying why, where it is missing).
case ",$LOCUS_REQUIRE," in
  *,cuda,*|*,cuda:*)
    "$LOCUS_SYCL_VENV/bin/pip" install -q --disable-pip-version-check cupy-cuda12x \
      || echo "note: CuPy could not be installed; its tests will skip" ;;
esac
cargo clippy -p locus-python -- -D warnings
# -P: the working directory (python/, with the package's sources but not its compiled
# module) stays off sys.path, so the tests import the installed wheel.
(cd python && "$py" -P -c 'import locus, sys; assert "site-packages" in locus.__file__, locus.__file__' \
  && PATH="$no_rust_path" "$py" -P -m pytest -q -rs -p no:cacheprovider)
for style in numpy_style pyopencl_style jax_style dpnp_style locus_style; do
  echo "--- python/examples/styles/$style.py (docs/python.md)"
  "$py" -W ignore python/examples/styles/$style.py
done
echo "--- python/examples/04_transfer_matrix.py"
"$py" python/examples/04_transfer_matrix.py
echo "--- python/examples/01_locations.py"
"$py" python/examples/01_locations.py
echo "--- python/examples/05_codelet_vec_add.py (every available target)"
"$py" python/examples/05_codelet_vec_add.py
for loc in opencl:0 opencl:1 sycl:0; do
  echo "--- python/examples/17_foreign_queues.py $loc (pyopencl / dpnp on their own queue)"
  "$py" -W ignore python/examples/17_foreign_queues.py "$loc"
done
for loc in host openmp:0 opencl:0 opencl:1 sycl:0 webgpu:0; do
  for ex in 02_buffers 03_declared_access 06_jacobi 07_async 08_memory_resources 09_queues_and_events; do
    echo "--- python/examples/$ex.py $loc"
    "$py" python/examples/$ex.py "$loc"
  done
  echo "--- python/examples/hello.py $loc"
  "$py" python/examples/hello.py "$loc" | sed -n "1p;\$p"
  echo "--- python/examples/umem.py $loc"
  "$py" python/examples/umem.py "$loc"
  echo "--- python/examples/codelet.py $loc"
  "$py" python/examples/codelet.py "$loc"
done
# A minute of random operations at every location (scripts/soak.py): resident memory,
# descriptors, threads and /dev/shm must stay flat (the 10-minute run is in
# docs/soak-cpu-vm.md).
echo "--- scripts/soak.py 1"
"$py" scripts/soak.py 1 | tail -3
# The teaching examples with each vendor's own Python library (docs/guide/tech/).
for loc in opencl:0 opencl:1 opencl:2; do
  echo "--- python/examples/vendors/hello_pyopencl.py $loc"
  POCL_DEVICES="pthread pthread" "$py" -W ignore python/examples/vendors/hello_pyopencl.py "$loc"
done
echo "--- python/examples/vendors/hello_dpctl.py sycl:0"
"$py" -W ignore python/examples/vendors/hello_dpctl.py sycl:0
# The MPI teaching example in Python (mpi4py + locus.mpi), checked against numpy.
echo "--- mpirun -np 2 python/examples/16_mpi_jacobi.py opencl:0 webgpu:0"
LOCUS_MPI_TIMEOUT_S=120 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 2 \
  "$py" python/examples/16_mpi_jacobi.py opencl:0 webgpu:0
echo "--- mpirun -np 3 python/examples/16_mpi_jacobi.py host openmp:0 sycl:0"
LOCUS_MPI_TIMEOUT_S=120 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 3 \
  "$py" python/examples/16_mpi_jacobi.py host openmp:0 sycl:0
echo "--- mpirun -np 4 python/examples/18_mpi_halo_2d.py host openmp:0 opencl:0 webgpu:0"
LOCUS_MPI_TIMEOUT_S=120 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 4 \
  "$py" python/examples/18_mpi_halo_2d.py host openmp:0 opencl:0 webgpu:0

step "C API: installed into a prefix; C and C++ programs (locus.h, umem, HAMR) compiled against it with pkg-config at every location"
# The header is what cbindgen makes of capi/src (capi/tests/header.rs); the library is
# installed as a user installs it; the conformance program runs every pair of
# locations and bad input, linked shared and static, then under valgrind (no memory
# definitely lost) and built with AddressSanitizer and UndefinedBehaviorSanitizer.
cargo clippy -p locus-capi --all-targets -- -D warnings
cargo test -p locus-capi
capi_prefix=$(mktemp -d)
scripts/install-capi.sh "$capi_prefix"
export PKG_CONFIG_PATH="$capi_prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
echo "pkg-config --cflags --libs locus: $(pkg-config --cflags --libs locus)"
# One version for every way in: the crates, the C library, the Python wheel.
version=$(cargo metadata --no-deps --format-version 1 | python3 -c \
  'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "locus"))')
for got in "$(pkg-config --modversion locus)" "$("$py" -c 'import locus; print(locus.__version__)')"; do
  [ "$got" = "$version" ] || { echo "FAIL: version $got where the workspace says $version" >&2; exit 1; }
done
echo "ok: version $version (crates, liblocus, the wheel)"
for bin in "$capi_prefix/lib/liblocus.so"; do
  if ldd "$bin" | grep -E 'libOpenCL|libvulkan|libcuda|libnvrtc|libamdhip64|libsycl|libDPCTL|libgomp'; then
    echo "FAIL: $bin links a vendor runtime at load time" >&2
    exit 1
  fi
done
echo '#include <locus.h>' | c++ -x c++ -std=c++17 -Wall -Werror -fsyntax-only $(pkg-config --cflags locus) -
cc -std=c11 -Wall -Wextra -Werror capi/tests/c/conformance.c $(pkg-config --cflags --libs locus) \
  -o "$capi_prefix/conformance"
cc -std=c11 capi/tests/c/conformance.c $(pkg-config --cflags locus) "$capi_prefix/lib/liblocus.a" \
  $(pkg-config --libs-only-l --static locus | sed 's/-llocus//') -o "$capi_prefix/conformance-static"
cc -std=c11 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
  capi/tests/c/conformance.c $(pkg-config --cflags --libs locus) -o "$capi_prefix/conformance-asan"
POCL_DEVICES="pthread pthread" "$capi_prefix/conformance"
cc -std=c11 -Wall -Wextra -Werror examples/c/hello.c $(pkg-config --cflags --libs locus) -o "$capi_prefix/hello"
POCL_DEVICES="pthread pthread" "$capi_prefix/hello"
# The guide's Python and C snippets (its Rust ones are doctests, in the tests step).
POCL_DEVICES="pthread pthread" LOCUS_MPI_TIMEOUT_S=120 \
  python3 scripts/run-guide-snippets.py "$py"
# Threads: copies at every location at once, and handles freed while others use them.
cc -std=c11 -Wall -Wextra -Werror -pthread capi/tests/c/threads.c $(pkg-config --cflags --libs locus) \
  -o "$capi_prefix/threads"
POCL_DEVICES="pthread pthread" "$capi_prefix/threads"
cc -std=c11 -g -pthread -fsanitize=address,undefined -fno-sanitize-recover=undefined \
  capi/tests/c/threads.c $(pkg-config --cflags --libs locus) -o "$capi_prefix/threads-asan"
LOCUS_BACKENDS=host,openmp "$capi_prefix/threads-asan"
POCL_DEVICES="pthread pthread" "$capi_prefix/conformance-static" | tail -1
# A C program's own OpenCL queue adopted by locus, its kernel and read ordered with locus's
# copies on the device (the example links libOpenCL itself: it is the program's code).
cc -std=c11 -Wall -Wextra -Werror examples/c/opencl_queue.c $(pkg-config --cflags --libs locus) -lOpenCL \
  -o "$capi_prefix/opencl_queue"
for loc in opencl:0 opencl:1 opencl:2; do POCL_DEVICES="pthread pthread" "$capi_prefix/opencl_queue" "$loc"; done
# A C program's own OpenCL context, queue and buffer adopted (a location of their own),
# the buffer copied to every location after the program's kernel.
cc -std=c11 -Wall -Wextra -Werror examples/c/opencl_context.c $(pkg-config --cflags --libs locus) -lOpenCL \
  -o "$capi_prefix/opencl_context"
for loc in opencl:0 opencl:1 opencl:2; do POCL_DEVICES="pthread pthread" "$capi_prefix/opencl_context" "$loc"; done
# A C program's OpenMP target region after locus's upload, through a detached task that
# locus_event_on_complete fulfils.
cc -std=c11 -Wall -Wextra -Werror -fopenmp examples/c/openmp_target.c $(pkg-config --cflags --libs locus) \
  -o "$capi_prefix/openmp_target"
"$capi_prefix/openmp_target" openmp:0
# Memory kinds, native handles, asynchronous copies and events, resources and defaults,
# typed buffers with declared access: at every location, then under the sanitizers and
# valgrind (host, OpenMP).
cc -std=c11 -Wall -Wextra -Werror capi/tests/c/native_api.c $(pkg-config --cflags --libs locus) \
  -o "$capi_prefix/native_api"
cc -std=c11 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
  capi/tests/c/native_api.c $(pkg-config --cflags --libs locus) -o "$capi_prefix/native_api-asan"
POCL_DEVICES="pthread pthread" "$capi_prefix/native_api" | tail -1
LOCUS_BACKENDS=host,openmp ASAN_OPTIONS=detect_leaks=1 "$capi_prefix/native_api-asan" | tail -1
LOCUS_BACKENDS=host,openmp valgrind --quiet --leak-check=full --show-possibly-lost=no \
  --errors-for-leak-kinds=definite --error-exitcode=3 "$capi_prefix/native_api" | tail -1
# The trace from C: profiler callbacks (copies begun and ended, allocations and frees, a
# callback calling back into locus) at every location, and a trace file; under the
# sanitizers too. Run in the install folder, where it writes its trace file.
cc -std=c11 -Wall -Wextra -Werror capi/tests/c/trace.c $(pkg-config --cflags --libs locus) \
  -o "$capi_prefix/trace"
cc -std=c11 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
  capi/tests/c/trace.c $(pkg-config --cflags --libs locus) -o "$capi_prefix/trace-asan"
(cd "$capi_prefix" && POCL_DEVICES="pthread pthread" ./trace)
(cd "$capi_prefix" && LOCUS_BACKENDS=host,openmp ASAN_OPTIONS=detect_leaks=1 ./trace-asan)
# C++ standard containers allocating from locus's pools (locus_pmr.hpp): a pool over the
# host, counted; alignments above locus's own; many threads; a device resource refused;
# under AddressSanitizer too.
c++ -std=c++17 -Wall -Wextra -Werror -pthread capi/tests/cpp/pmr_conformance.cc \
  $(pkg-config --cflags --libs locus) -o "$capi_prefix/pmr"
c++ -std=c++17 -g -pthread -fsanitize=address,undefined -fno-sanitize-recover=undefined \
  capi/tests/cpp/pmr_conformance.cc $(pkg-config --cflags --libs locus) -o "$capi_prefix/pmr-asan"
POCL_DEVICES="pthread pthread" "$capi_prefix/pmr" opencl:0 sycl:0 webgpu:0
LOCUS_BACKENDS=host,openmp ASAN_OPTIONS=detect_leaks=1 "$capi_prefix/pmr-asan" | tail -1
# The vendor runtimes' own allocations are not locus's to answer for: the sanitizer and
# valgrind runs use the host and OpenMP (libgomp) only.
LOCUS_BACKENDS=host,openmp ASAN_OPTIONS=detect_leaks=1 "$capi_prefix/conformance-asan" | tail -1
LOCUS_BACKENDS=host,openmp valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite \
  --error-exitcode=3 "$capi_prefix/conformance" | tail -1
# libumem's API (umem.h, umem.hpp): umem's own tests, C and C++ conformance at every
# location, the document's examples (also as a CMake project), valgrind and sanitizers.
POCL_DEVICES="pthread pthread" capi/tests/run-umem.sh "$capi_prefix"
# HAMR's C++ API (hamr_buffer.h): HAMR's own tests and its guide's OpenMP example as
# written and with their producers at OpenCL, SYCL and WebGPU; HAMR's CUDA and HIP tests
# and the guide's hello_cuda / hello_hip compiled (clang 19 in CUDA mode over NVIDIA's
# wheels, hipcc), SKIPPED-RUN; conformance at every allocator, sanitizers and valgrind.
POCL_DEVICES="pthread pthread" capi/tests/run-hamr.sh "$capi_prefix"
rm -rf "$capi_prefix"

step "leaks: the host pool under valgrind, then the asynchrony run started before the Python step"
exe=$(cargo test --all-features --test resources --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\))/\1/p' | tail -1)
LOCUS_BACKENDS=host valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=3 \
  "$exe" threads_share_one_pool_and_balance_to_zero pool_reuses_coalesces_grows_releases_and_stops_at_its_maximum
# The library's unit tests without any backend feature (what applies there must pass
# without them), on one core while valgrind (started before the Python step) uses the other.
for features in ""; do
  echo "--- unit tests, features: ${features:-none}"
  if ! out=$(cargo test -j 1 --lib -p locus --no-default-features ${features:+--features "$features"} 2>&1); then
    echo "$out" | tail -60 >&2
    echo "FAIL: the unit tests with features '${features:-none}'" >&2
    exit 1
  fi
  echo "$out" | grep -E "^test result"
done
wait "$valgrind_pid" || {
  status=$?
  echo "FAIL: the valgrind run of tests/asynchrony.rs exited with $status; its tests and errors:" >&2
  grep -E "^test |panicked|FAILED|definitely lost|Invalid (read|write)|uninitialised|ERROR SUMMARY" "$valgrind_log" >&2
  tail -60 "$valgrind_log" >&2
  exit 3
}
grep "test result" "$valgrind_log"
echo "ok: no leak"

step "tests"
# OpenCL sees Intel's CPU device (opencl:0) and PoCL; PoCL is asked for two CPU devices
# (opencl:1, opencl:2), each of which locus opens in its own context, so the OpenCL
# tests cover both runtimes and copies between OpenCL contexts for real.
export POCL_DEVICES="${POCL_DEVICES:-pthread pthread}"
case ",$LOCUS_REQUIRE," in
  *,opencl,*) export LOCUS_REQUIRE="$LOCUS_REQUIRE,opencl:1,opencl:2" ;;
esac
echo "POCL_DEVICES=$POCL_DEVICES LOCUS_REQUIRE=$LOCUS_REQUIRE"
# GPU conformance suites are #[ignore]d: reported as skipped (not run), unless
# LOCUS_REQUIRE names cuda or hip, which runs them. Without a GPU, the unavailability
# checks expect the answers of this machine: no libcuda, and HIP saying "no device".
ignored=()
case ",$LOCUS_REQUIRE," in
  *,cuda*|*,hip*) ignored=(--run-ignored all) ;;
  *)
    export LOCUS_EXPECT_NO_LIBCUDA=1
    export LOCUS_EXPECT_HIP_NO_DEVICE=1
    # The real compilers, with no GPU to run what they make: NVIDIA's NVRTC from PyPI
    # (cached in the SYCL venv) and the hiprtc of Debian's HIP runtime compile every
    # CUDA and HIP kernel locus ships (src/backends/{cuda,hip}/real_compiler_tests.rs);
    # required here, so that a missing compiler fails instead of skipping.
    nvrtc_lib() { ls -d "$LOCUS_SYCL_VENV"/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib 2>/dev/null | head -1; }
    if [ -z "$(nvrtc_lib)" ]; then
      "$LOCUS_SYCL_VENV/bin/pip" install -q --disable-pip-version-check "nvidia-cuda-nvrtc-cu12==12.9.*"
    fi
    export LD_LIBRARY_PATH="$(nvrtc_lib)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LOCUS_REQUIRE_COMPILERS=nvrtc,hiprtc,hiprtc-5.7
    ;;
esac
# The stress and fuzz tests run briefly here (debug build, overflow checks on) and at
# length in the release step below.
export LOCUS_STRESS_MS="${LOCUS_STRESS_MS:-400}" LOCUS_FUZZ_SECS="${LOCUS_FUZZ_SECS:-1}"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --all-features --no-fail-fast "${ignored[@]}"
else
  cargo test --all-features --no-fail-fast -- ${ignored:+--include-ignored}
fi
cargo test --doc --all-features
# The library's unit tests once more, all in one process as plain `cargo test` runs them
# (nextest gives each test a process of its own, which hid a test that failed only when
# others had run before it).
cargo test --lib --all-features

step "WebGPU through staging buffers (as on a discrete GPU)"
# lavapipe is unified memory, so the run above maps WebGPU storage buffers in place; the
# staging engine that discrete GPUs use is covered here with the mapping turned off.
if cargo nextest --version >/dev/null 2>&1; then
  LOCUS_WEBGPU_MAPPABLE=0 cargo nextest run --all-features --no-fail-fast \
    -E 'test(/webgpu/) | binary(webgpu) | binary(asynchrony) | binary(kernels)'
else
  LOCUS_WEBGPU_MAPPABLE=0 cargo test --all-features --no-fail-fast --test webgpu --test asynchrony --test kernels
fi
# The WGSL conversion kernels (a GPU adapter's way through staging; on lavapipe the host
# converts unless told): every pair of types on webgpu:0, and every location to and from
# it (the narrower type crossing, converted on webgpu:0), checked byte for byte against `as`.
LOCUS_WEBGPU_MAPPABLE=0 LOCUS_WEBGPU_CONVERT=device cargo test --all-features --no-fail-fast \
  --test vector

step "stress (three runs) and fuzz, release builds"
# Every location, 2x cores and 16 threads of random operations each checked against a
# per-thread model; the WebGPU concurrency tests; then each parser fuzzed for 10 s.
for run in 1 2 3; do
  echo "--- stress run $run"
  LOCUS_STRESS_MS=1500 cargo test --release --all-features --test stress --test webgpu -- \
    ${ignored:+--include-ignored} --nocapture 2>&1 | grep -E "STRESS|test result|panicked|FAILED|^thread"
done
LOCUS_FUZZ_SECS=10 cargo test --release --all-features --test fuzz -- --nocapture --test-threads=1 2>&1 \
  | grep -E "FUZZ|test result|panicked"


step "release: cargo publish --dry-run of every crate"
# Packages locus, locus-cli, locus-capi and locus-python as crates.io would take them
# and builds each from its package alone (a file missing from an `include` list fails
# here). Python users install the wheel built above.
# --allow-dirty: the script also runs on a working tree with changes (CI's is clean).
# The packages of an earlier run go first: cargo unpacks the local registry it verifies
# against into CARGO_HOME (a folder named "-<hash>" per registry path) and keeps a crate
# of one name and version there, so a later run would verify against stale sources.
rm -rf "${CARGO_TARGET_DIR:-target}/package"
for unpacked in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-* "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/-*; do
  [ -d "$unpacked" ] && rm -rf "$unpacked"/locus-*
done
# Cargo takes a registry crate's sources as fixed by its name and version, so the build
# of an earlier run's package would be reused too: their fingerprints go (the workspace's
# own builds of these crates are remade, as any change to them remakes them).
rm -rf "${CARGO_TARGET_DIR:-target}"/debug/.fingerprint/locus-*
publish_log=$(mktemp)
if ! cargo publish --workspace --dry-run --allow-dirty > "$publish_log" 2>&1; then
  echo "FAIL: cargo publish --dry-run:" >&2
  tail -40 "$publish_log" >&2
  exit 1
fi
grep -E '^ +(Packaged|Verifying)|^error' "$publish_log"

step "MPI: locus bench --mpi between two ranks (loopback, Open MPI's shared-memory transport)"
# The MPI suite itself (tests/mpi.rs: every location pair between two ranks, three-rank
# collectives, mismatches, a silent peer, a missing location) ran with the tests above,
# each test starting its own mpirun. Here: the bandwidth and latency matrix against MPI's
# own host-to-host send / receive, then a staged device pair (WebGPU through staging
# buffers, as on a discrete GPU) against the device-to-host copy and MPI host-to-host.
cargo build --release --features mpi --bins --example 16_mpi_jacobi --example 18_mpi_halo_2d
mpirun_here=(mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 2)
# The teaching example: a Jacobi solve split across ranks at different locations, checked
# against one process (it fails if they differ).
LOCUS_MPI_TIMEOUT_S=120 "${mpirun_here[@]}" target/release/examples/16_mpi_jacobi opencl:0 webgpu:0
LOCUS_MPI_TIMEOUT_S=120 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 3 \
  target/release/examples/16_mpi_jacobi host openmp:0 sycl:0
# The same solve cut in both dimensions, halo rows and columns sent as regions of each
# rank's one grid: 2 x 2 tiles, then 4 x 2 over every location this machine has.
LOCUS_MPI_TIMEOUT_S=120 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 4 \
  target/release/examples/18_mpi_halo_2d host openmp:0 opencl:0 webgpu:0
LOCUS_MPI_TIMEOUT_S=120 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 8 \
  target/release/examples/18_mpi_halo_2d host openmp:0 opencl:0 opencl:1 opencl:2 sycl:0 webgpu:0 host
LOCUS_MPI_TIMEOUT_S=120 "${mpirun_here[@]}" target/release/locus bench --mpi \
  --locations host,openmp:0,opencl:0,sycl:0,webgpu:0 --sizes 4KiB,64MiB
LOCUS_MPI_TIMEOUT_S=120 LOCUS_WEBGPU_MAPPABLE=0 "${mpirun_here[@]}" target/release/locus bench --mpi \
  --locations host,webgpu:0 --sizes 64MiB
# Ranks of one node: messages staged through host chunks (as device memory is on a GPU
# machine), with locus's same-node path (a shared window: two copies) and without it
# (the no-IPC column: through MPI's transport, three copies), at 256 MiB.
LOCUS_MPI_ROUTE=staged LOCUS_MPI_TIMEOUT_S=120 "${mpirun_here[@]}" target/release/locus bench --mpi \
  --locations host,opencl:0 --sizes 256MiB

# On a GPU machine (LOCUS_REQUIRE names cuda or hip): the transfer matrix and the
# bandwidthTest shape (pageable / pinned / device-to-device / peer), for the README.
if [ ${#ignored[@]} -gt 0 ]; then
  step "GPU: locus bench --quick (the matrix and the bandwidthTest shape)"
  target/release/locus bench --quick
fi
