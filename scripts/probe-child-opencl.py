#!/usr/bin/env python3
"""Why a child process of a locus process may not see NVIDIA's OpenCL device (seen on an
H200: `tests/exit_pending.rs`'s children and `locus bench` started by the CLI's tests
found PoCL only). Starts `locus info` as a child of this process after this process
opened each technology in turn (`LOCUS_BACKENDS`), and prints the OpenCL locations the
child found and the ICD loader's account of it (`OCL_ICD_DEBUG`).

    python3 scripts/probe-child-opencl.py path/to/locus
"""
import os
import subprocess
import sys

cli = sys.argv[1]
backends = os.environ.get("PROBE_PARENT_BACKENDS")


def child(tag):
    env = {k: v for k, v in os.environ.items() if k != "LOCUS_BACKENDS"}
    env["OCL_ICD_DEBUG"] = "15"
    r = subprocess.run([cli, "info"], capture_output=True, text=True, env=env, timeout=60)
    listed = r.stdout.split("\nPhysical devices")[0]
    found = [l.split()[0] for l in listed.splitlines() if l.startswith("  opencl:")]
    nv = [l for l in r.stderr.splitlines() if "nvidia" in l.lower() or "error" in l.lower()]
    print(f"| {tag} | {', '.join(found) or 'none'} | {' / '.join(nv[:4])[:300]} |")


if backends is None:
    print("| parent had opened | child's OpenCL | ICD loader on NVIDIA |\n|---|---|---|")
    child("nothing")
    for b in ["opencl", "cuda", "webgpu", "cuda,opencl,webgpu,openmp"]:
        subprocess.run([sys.executable, __file__, cli], env=dict(os.environ, PROBE_PARENT_BACKENDS=b), timeout=120)
else:
    os.environ["LOCUS_BACKENDS"] = backends
    import locus

    locus.available()
    child(backends)
