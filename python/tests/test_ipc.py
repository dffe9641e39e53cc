"""Memory shared between processes on one node (issue 45, item 4), as two Python
programs use it: the first makes shared memory and writes it with numpy, starts a
second interpreter with the handle's text, which opens it, checks the bytes in place and
writes its answer; the first sees the answer with no copy between them."""

import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import locus

CHILD = """
import sys, numpy as np, locus
m = locus.Memory.open_ipc(sys.argv[1])
got = np.frombuffer(m.read(m.nbytes), dtype=np.uint8)
assert (got == np.arange(m.nbytes) % 251).all(), "the maker's bytes"
m.set(7)
print("child answered")
"""

IN_PLACE = {"host", "openmp:0", "sycl:0", "opencl:0", "opencl:1", "opencl:2"}


def test_a_second_process_uses_shared_memory_in_place(location):
    if location not in IN_PLACE:
        with pytest.raises(ValueError, match=f"{location} does not"):
            locus.Memory.shared(location, 64)
        return
    n = 1 << 20
    m = locus.Memory.shared(location, n)
    m.write((np.arange(n) % 251).astype(np.uint8), 0)
    text = m.ipc_handle()
    assert text.startswith("locus-ipc ")
    # From a neutral folder, importing the `locus` this process imported: the source
    # tree's `locus` folder (no compiled part when the wheel is installed) must not
    # shadow it.
    where = os.path.dirname(os.path.dirname(os.path.abspath(locus.__file__)))
    env = {**os.environ, "PYTHONPATH": where}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, text],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        env=env,
    )
    assert out.returncode == 0 and "child answered" in out.stdout, out.stderr
    back = np.frombuffer(m.read(n), dtype=np.uint8)
    assert (back == 7).all(), f"{location}: the second process's answer is not in place"


def test_unshared_memory_and_bad_handles_are_value_errors():
    with pytest.raises(ValueError, match="new_shared"):
        locus.Memory("host", 64).ipc_handle()
    with pytest.raises(ValueError, match="not a locus IPC handle"):
        locus.Memory.open_ipc("hello")
    m = locus.Memory.shared("host", 64)
    text = m.ipc_handle()
    del m
    with pytest.raises(ValueError, match="freed it or ended"):
        locus.Memory.open_ipc(text)
