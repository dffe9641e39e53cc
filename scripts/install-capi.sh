#!/usr/bin/env bash
# Builds locus's C library and installs it into PREFIX in the layout of Rust C-ABI
# libraries (cargo-c's): PREFIX/include/locus.h, PREFIX/lib/liblocus.{so,a},
# PREFIX/lib/pkgconfig/locus.pc. Then `pkg-config --cflags --libs locus` is all a C or
# C++ program needs (with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig for a private prefix).
#
#   scripts/install-capi.sh /usr/local
#   scripts/install-capi.sh "$HOME/.local"
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:?usage: scripts/install-capi.sh PREFIX}"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
# The workspace's one version (Cargo.toml's [workspace.package]), as cargo resolves it.
version=$(cargo metadata --no-deps --format-version 1 | python3 -c \
  'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "locus-capi"))')
[ -n "$version" ] || { echo "install-capi.sh: no version for locus-capi in cargo metadata" >&2; exit 1; }

cargo build --release -p locus-capi
target="${CARGO_TARGET_DIR:-target}/release"

install -d "$prefix/include" "$prefix/lib/pkgconfig"
install -m 644 capi/include/locus.h "$prefix/include/locus.h"
# C++17 polymorphic memory resources over locus's resources (header-only).
install -m 644 capi/include/locus_pmr.hpp "$prefix/include/locus_pmr.hpp"
# libumem's API: umem.h (C, with umem_utils.h and umem_config.h) and umem.hpp (C++).
install -m 644 capi/include/umem.h capi/include/umem_utils.h capi/include/umem_config.h \
  capi/include/umem.hpp "$prefix/include/"
install -d "$prefix/share/doc/locus"
install -m 644 capi/include/LICENSE-umem "$prefix/share/doc/locus/LICENSE-umem"
# HAMR's C++ API (hamr_buffer.h and the headers HAMR installs beside it), over locus.h.
install -m 644 capi/include/hamr_*.h "$prefix/include/"
install -m 644 capi/include/LICENSE-hamr "$prefix/share/doc/locus/LICENSE-hamr"
install -m 755 "$target/liblocus.so" "$prefix/lib/liblocus.so.$version"
ln -sf "liblocus.so.$version" "$prefix/lib/liblocus.so"
install -m 644 "$target/liblocus.a" "$prefix/lib/liblocus.a"
# The static library needs what the Rust standard library links (rustc's
# --print native-static-libs); the shared one needs nothing more.
cat > "$prefix/lib/pkgconfig/locus.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: locus
Description: One memory model across Host, CUDA, HIP, OpenMP, OpenCL, SYCL and WebGPU
Version: $version
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -llocus
Libs.private: -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
Cflags: -I\${includedir}
PC
echo "installed locus $version into $prefix (include/locus.h, locus_pmr.hpp, umem.h, umem.hpp, hamr_buffer.h, lib/liblocus.so, lib/liblocus.a, lib/pkgconfig/locus.pc)"
