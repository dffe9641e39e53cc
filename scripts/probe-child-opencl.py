#!/usr/bin/env python3
"""Why a child process of a locus process may not see NVIDIA's OpenCL device (seen on an
H200: `tests/exit_pending.rs`'s children and `locus bench` started by the CLI's tests
found PoCL only). Starts `locus info` as a child of this process after this process
opened each technology in turn (`LOCUS_BACKENDS`), and prints the OpenCL locations the
child found and the ICD loader's account of it (`OCL_ICD_DEBUG`), with the parent's descriptors closed (Python's default) and inherited
(Rust's `Command`'s).

    python3 scripts/probe-child-opencl.py path/to/locus
"""
import os
import subprocess
import sys

cli = sys.argv[1]
backends = os.environ.get("PROBE_PARENT_BACKENDS")


def child(tag, close_fds=True):
    env = {k: v for k, v in os.environ.items() if k != "LOCUS_BACKENDS"}
    env["OCL_ICD_DEBUG"] = "15"
    r = subprocess.run(
        [cli, "info"], capture_output=True, text=True, env=env, timeout=60, close_fds=close_fds
    )
    listed = r.stdout.split("\nPhysical devices")[0]
    found = [l.split()[0] for l in listed.splitlines() if l.startswith("  opencl:")]
    nv = [l for l in r.stderr.splitlines() if "nvidia" in l.lower() or "error" in l.lower()]
    fds = "closed" if close_fds else "inherited"
    print(f"| {tag} | {fds} | {', '.join(found) or 'none'} | {' / '.join(nv[:4])[:300]} |")


if backends is None:
    print("| parent had opened | parent's descriptors | child's OpenCL | ICD loader on NVIDIA |")
    print("|---|---|---|---|")
    child("nothing")
    for b in ["opencl", "cuda", "webgpu", "cuda,opencl,webgpu,openmp"]:
        subprocess.run([sys.executable, __file__, cli], env=dict(os.environ, PROBE_PARENT_BACKENDS=b), timeout=120)
else:
    os.environ["LOCUS_BACKENDS"] = backends
    import locus

    locus.available()
    # The C environment a child of Rust's Command inherits (os.environ is Python's copy
    # from its start): what the runtimes changed in it while they opened.
    import ctypes

    environ = ctypes.POINTER(ctypes.c_char_p).in_dll(ctypes.CDLL(None), "environ")
    live = {}
    for i in range(100000):
        if environ[i] is None:
            break
        k, _, v = environ[i].decode(errors="replace").partition("=")
        live[k] = v
    changed = {k: (os.environ.get(k), live.get(k)) for k in set(live) | set(os.environ)
               if os.environ.get(k) != live.get(k)}
    print(f"environment changed while {backends} opened: {changed or 'nothing'}")
    child(backends)
    # Rust's Command, like fork and exec, passes on every descriptor not marked
    # close-on-exec; Python's subprocess closes them by default.
    child(backends, close_fds=False)
    if backends == "opencl":
        r = subprocess.run(["ls", "-l", "/proc/self/fd"], capture_output=True, text=True, close_fds=False)
        print("descriptors a child inherits after OpenCL opened:", " ; ".join(
            l.split(" ", 8)[-1] for l in r.stdout.splitlines()[1:]))
