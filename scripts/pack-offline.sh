#!/usr/bin/env bash
# Builds what scripts/run-offline.sh runs on a machine that has the accelerator but no
# Rust toolchain and no network (an air-gapped GPU node; the GPU machines lent to this
# project's sessions): the test binaries (debug, default features: no `mpi`), the
# `locus` CLI, a few release examples and the bench binaries, stripped, in one
# `.dev/pack.tar.xz`; the Python wheel in `.dev/wheels/`; the Vulkan loader's .debs in
# `.dev/gl/`. Copy `.dev/` (about 35 MB with every test binary, the wheel and the
# Vulkan loader: the device tool carries 64 MiB at most) and the
# repository there, then `bash scripts/run-offline.sh`.
#
#   scripts/pack-offline.sh                 # everything
#   scripts/pack-offline.sh conformance vector   # only these test binaries (smaller)
#
# The Python wheel needs maturin (`pip install maturin`); without it the wheel is
# skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.dev
mkdir -p "$out"
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >> .git/info/exclude
stage=$(mktemp -d)
mkdir -p "$stage/tests" "$stage/examples" "$stage/benches"

# Test binaries; those that need what such a node lacks (MPI, the fuzz corpus's path,
# the CLI at its build path) are left out.
log=$(mktemp)
cargo test --no-run --tests 2>&1 | tee "$log" | grep -E '^error' || true
wanted=" $* "
sed -n 's/.*Executable tests\/\([a-z_]*\)\.rs (\(.*\))/\1 \2/p' "$log" | while read -r name path; do
  case $name in mpi|fuzz|bench_cli) continue ;; esac
  if [ $# -gt 0 ] && [[ $wanted != *" $name "* ]]; then continue; fi
  cp "$path" "$stage/tests/$name"
done

examples=(hello_cuda hello_hip 17_foreign_queues 02_buffers 05_codelet_vec_add 07_async 10_umem 11_conversions 12_transfer_modes 13_openhmpp_sgemm)
args=()
for e in "${examples[@]}"; do args+=(--example "$e"); done
cargo build --release --bin locus "${args[@]}"
cp target/release/locus "$stage/"
for e in "${examples[@]}"; do cp "target/release/examples/$e" "$stage/examples/"; done
cargo bench --no-run --bench conversions --bench pipeline --bench cuda_copies 2>&1 | tee "$log" >/dev/null
sed -n 's/.*Executable benches\/\([a-z_]*\)\.rs (\(.*\))/\1 \2/p' "$log" | while read -r name path; do
  cp "$path" "$stage/benches/$name"
done
# tests/resources.rs runs the CLI at its build path (CARGO_BIN_EXE_locus): recorded so
# that run-offline.sh can put one there.
echo "$(pwd)/target/debug/locus" > "$stage/cli-path"
strip "$stage"/tests/* "$stage"/examples/* "$stage"/benches/* "$stage/locus"
# One LZMA dictionary over the whole tar: the binaries share most of their code, which a
# window this size finds (about a third of the multi-threaded -6 size; a few minutes).
tar -C "$stage" -cf - . | xz -T1 -9e --lzma2=preset=9e,dict=192MiB > "$out/pack.tar.xz"
rm -rf "$stage" "$log"

# WebGPU on an NVIDIA machine needs a Vulkan loader, which CUDA images often lack:
# Debian's, and libglvnd for NVIDIA's ICD, unpacked there by run-offline.sh (0.4 MB).
mkdir -p "$out/gl"
(cd "$out/gl" && apt-get download -q libvulkan1 libglvnd0 libgl1 libegl1 libgles2 libglx0 libopengl0 \
  >/dev/null 2>&1) || echo "note: apt-get download failed: no Vulkan loader packed (WebGPU may not start there)"

rm -rf "$out/wheels"
if command -v maturin >/dev/null 2>&1; then
  (cd python && maturin build --release -o "../$out/wheels" >/dev/null)
else
  echo "note: maturin not found: no Python wheel (pip install maturin)"
fi
du -sh "$out"/pack.tar.xz "$out"/wheels 2>/dev/null || true
