#!/usr/bin/env bash
# The test command: installs the runtimes that run on a CPU-only machine, then runs
# fmt, clippy, doc, the whole test suite with LOCUS_REQUIRE (a required backend that
# is missing FAILS the run), the examples, and the "no vendor library linked" check.
#
#   scripts/test.sh                       # what CI runs
#   LOCUS_REQUIRE=host,cuda scripts/test.sh   # on a GPU machine: require CUDA too
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# 1. Runtimes (Debian/Ubuntu). Skipped when already installed.
packages=(pocl-opencl-icd ocl-icd-opencl-dev clinfo mesa-vulkan-drivers libvulkan1)
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

export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
export LOCUS_REQUIRE="${LOCUS_REQUIRE:-host,openmp,opencl,webgpu}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
echo "LOCUS_REQUIRE=$LOCUS_REQUIRE"

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --all-targets --all-features -- -D warnings

step "cargo doc"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features

step "locus info (fails if a required backend is missing)"
cargo build --release --bins --examples
target/release/locus info

step "no vendor library is linked at load time"
for bin in target/release/locus target/release/examples/hello_opencl target/release/examples/hello_webgpu target/release/examples/hello_openmp target/release/examples/choose_backend; do
  if ldd "$bin" | grep -E 'libOpenCL|libvulkan|libcuda|libamdhip64|libsycl|libgomp'; then
    echo "FAIL: $bin links a vendor runtime at load time" >&2
    exit 1
  fi
done
echo "ok: none of libOpenCL, libvulkan, libcuda, libamdhip64, libsycl, libgomp"

step "examples"
for ex in hello_host hello_openmp hello_opencl hello_webgpu; do
  target/release/examples/$ex
done
for loc in host openmp:0 opencl:0 webgpu:0; do
  LOCUS_LOCATION=$loc target/release/examples/choose_backend
done

step "tests"
# PoCL can expose two CPU devices, each of which locus opens in its own context: the
# OpenCL tests then cover copies between two OpenCL devices for real (opencl:1).
export POCL_DEVICES="${POCL_DEVICES:-pthread pthread}"
case ",$LOCUS_REQUIRE," in
  *,opencl,*) export LOCUS_REQUIRE="$LOCUS_REQUIRE,opencl:1" ;;
esac
echo "POCL_DEVICES=$POCL_DEVICES LOCUS_REQUIRE=$LOCUS_REQUIRE"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --all-features --no-fail-fast
else
  cargo test --all-features --no-fail-fast
fi
cargo test --doc --all-features
