"""HAMR's "Hello World! w/ Python", with numpy and locus.

Two codes are coupled without knowing where each other's data lives: `add` and `write`
declare that they work on the host; locus serves them in place where the host can reach
the memory, or through a replica where it cannot (WebGPU). The sum comes back into locus
zero-copy from numpy.

    python python/examples/hello.py [LOCATION]     # default: the last available one
"""

import sys

import numpy as np

import locus


def add(buf_0, buf_1):
    """Add two arrays on the host."""
    handle_0 = buf_0.access("host")
    print(f"buf_0 at {buf_0.location}, seen from the host: {handle_0.route}")
    arr_0 = np.asarray(handle_0)  # share data with numpy on the host
    arr_1 = np.asarray(buf_1.access("host"))  # share data with numpy on the host
    arr_2 = arr_0 + arr_1  # add on the host
    return locus.Buffer.from_dlpack(arr_2)  # zero-copy from numpy


def write(fh, buf):
    """Print the array on the host."""
    arr = np.asarray(buf.access("host"))  # share data with numpy on the host
    fh.write(f"{arr}\n")


device = sys.argv[1] if len(sys.argv) > 1 else locus.available()[-1]
n_vals = 400
buf_0 = locus.Buffer(device, n_vals, dtype="float32", fill=1.0)  # allocate on the device
buf_1 = locus.Buffer("host", n_vals, dtype="float32", fill=1.0)  # allocate on the host

buf_2 = add(buf_0, buf_1)  # add the arrays

write(sys.stdout, buf_2)  # write the result
if buf_2.to_list() != [2.0] * n_vals:
    sys.exit("wrong sum")
