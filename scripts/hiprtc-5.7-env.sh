# A newer hiprtc for the real-compiler tests: ROCm 5.7's HIP runtime from Debian 13
# (trixie), with the C library and the other libraries it needs from there, unpacked
# (not installed) into ~/.cache/locus/rocm-5.7 (made once). Debian 12's ROCm 5.2 comgr
# aborts on gfx942 (MI300) and gfx1100 (RDNA3); 5.7's compiles for them. Its libraries
# need glibc 2.38, so a program uses them through trixie's own loader:
#
#   $LOCUS_HIPRTC_ROOT/usr/lib64/ld-linux-x86-64.so.2 --library-path \
#     $LOCUS_HIPRTC_ROOT/usr/lib/x86_64-linux-gnu:$LOCUS_HIPRTC_ROOT/lib/x86_64-linux-gnu PROGRAM
#
# which `src/backends/hip/real_compiler_tests.rs` does for its gfx942 / gfx1100 test.
# Sourced; sets LOCUS_HIPRTC_ROOT.
LOCUS_HIPRTC_ROOT=${LOCUS_HIPRTC_ROOT:-$HOME/.cache/locus/rocm-5.7}
if [ ! -e "$LOCUS_HIPRTC_ROOT/usr/lib/x86_64-linux-gnu/libamdhip64.so" ]; then
  (
    set -e
    part="$LOCUS_HIPRTC_ROOT.part"
    rm -rf "$part" && mkdir -p "$part/debs"
    mirror=http://deb.debian.org/debian
    curl -sfL "$mirror/dists/trixie/main/binary-amd64/Packages.xz" -o "$part/Packages.xz"
    # The packages libamdhip64-5 (and the hiprtc built-ins) need, from trixie's index.
    python3 - "$part/Packages.xz" libamdhip64-5 libhiprtc-builtins5 > "$part/files" <<'PY'
import lzma, sys
index, cur = {}, {}
for line in lzma.open(sys.argv[1], "rt", encoding="utf-8", errors="replace"):
    line = line.rstrip("\n")
    if not line:
        index.setdefault(cur.get("Package"), cur)
        cur = {}
    elif line[0] not in " \t":
        key, _, value = line.partition(":")
        cur[key] = value.strip()
provides = {}
for name, p in index.items():
    for alias in p.get("Provides", "").split(","):
        provides.setdefault(alias.strip().split(" ")[0], name)
# Essential packages the unpacked tree does not need.
todo, seen = list(sys.argv[2:]), {"debconf", "perl-base", "dpkg", None}
while todo:
    name = todo.pop()
    p = index.get(name) or index.get(provides.get(name))
    if p is None or p["Package"] in seen:
        continue
    seen.add(p["Package"])
    print(p["Filename"])
    for dep in (p.get("Depends", "") + "," + p.get("Pre-Depends", "")).split(","):
        name = dep.split("|")[0].strip().split(" ")[0].split(":")[0]
        if name:
            todo.append(name)
PY
    while read -r file; do
      curl -sfL "$mirror/$file" -o "$part/debs/$(basename "$file")"
      dpkg-deb -x "$part/debs/$(basename "$file")" "$part"
    done < "$part/files"
    # The unversioned name locus opens first, here rather than the system's ROCm 5.2.
    ln -sf libamdhip64.so.5 "$part/usr/lib/x86_64-linux-gnu/libamdhip64.so"
    rm -rf "$part/debs" "$part/Packages.xz" "$LOCUS_HIPRTC_ROOT"
    mv "$part" "$LOCUS_HIPRTC_ROOT"
  )
fi
export LOCUS_HIPRTC_ROOT
