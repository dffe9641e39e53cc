"""umem's two C++ examples, line by line, in Python (``cuda`` stands for any location):
``calloc`` as a ``malloc`` replacement, then a device allocation aligned to 128 bytes,
connected to host memory aligned to 64, initialised on the host, ``sync``ed to the
device, changed there, and ``update``d back.

    python python/examples/umem.py [LOCATION]     # default: the last available one

umem's directions: ``host_adr.sync(n)`` pushes the host's bytes to the device;
``host_adr.update(n)`` brings the device's back.
"""

import sys

import numpy as np

import locus

cuda_location = sys.argv[1] if len(sys.argv) > 1 else locus.available()[-1]
SIZEOF_DOUBLE = 8

# umem::Host host;
host = "host"
# umem::Cuda cuda(0);   (any location here)
cuda = cuda_location

# --- The first program: libumem as a replacement of malloc/free.
# allocate a length 10 array of doubles
adr = locus.Memory.calloc(host, SIZEOF_DOUBLE, 10)
# application specific code follows, for instance, initialize the array as range(10):
ptr = np.asarray(adr).view(np.float64)  # double * ptr = (double*)adr;
for i in range(10):
    ptr[i] = float(i)
print("host calloc'd array:", ptr.tolist())
assert ptr.tolist() == [float(i) for i in range(10)]
del ptr, adr  # leaving the scope frees the adr memory

# --- The second program: keeping host and device memory in sync.
# allocate a length 10 array of doubles in GPU device aligned in 128 byte boundaries
cuda_alignment = 128
cuda_adr = locus.Memory(cuda, 10 * SIZEOF_DOUBLE, cuda_alignment)
# establish a connection between host and GPU memories.
# for allocated host buffer, we'll use alignment 64
host_alignment = 64
host_adr = cuda_adr.connect(10 * SIZEOF_DOUBLE, host, host_alignment)
print(
    f"{cuda} memory at {cuda_adr.address:#x} (aligned to {cuda_alignment}, origin "
    f"{cuda_adr.aligned_origin:#x}) connected to {host}:",
    "the host uses it in place (umem returns the same address)"
    if host_adr.in_place
    else "a separate host buffer, aligned to 64",
)
assert host_adr.memory.address % host_alignment == 0
# application specific code, for instance, initialize the array as range(10):
ptr = np.asarray(host_adr.memory).view(np.float64)  # double * ptr = (double*)host_adr;
for i in range(10):
    ptr[i] = float(i)
host_adr.sync(10 * SIZEOF_DOUBLE)
# now the GPU device memory is initialized as range(10)
on_device = np.frombuffer(cuda_adr.read(), dtype=np.float64)
print(f"after sync, {cuda} holds:", on_device.tolist())
assert on_device.tolist() == [float(i) for i in range(10)]
# say, the GPU device changed the allocated data (here: every value squared) ...
cuda_adr.write(np.arange(10, dtype=np.float64) ** 2)
# ... so we sync the data to host buffer:
host_adr.update(10 * SIZEOF_DOUBLE)
print("after update, the host holds:", ptr.tolist())
assert ptr.tolist() == [float(i * i) for i in range(10)]
# leaving the scope frees host_adr and cuda_adr
del ptr
host_adr.disconnect()
