"""umem's two C++ examples, line by line, in Python (``cuda`` stands for any location):
``calloc`` as a ``malloc`` replacement, then a device allocation aligned to 128 bytes,
connected to host memory aligned to 64, initialised on the host, ``sync``ed to the
device, changed there, and ``update``d back.

    python python/examples/umem.py [LOCATION]     # default: the last available one

umem's directions: ``host_adr.sync(n)`` pushes the host's bytes to the device;
``host_adr.update(n)`` brings the device's back.

Then the same connection to a location that cannot use the device memory in place, so
that the mirror is a separate buffer and each direction moves bytes.
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

# --- Beyond umem's examples: a mirror that is a separate buffer. The host uses most
# locations in place (the mirror above may be the device memory itself, and then sync and
# update move nothing); here the device is connected to a location that cannot use it in
# place, so sync and update move bytes, each in its own direction.
cuda_adr = locus.Memory(cuda, 10 * SIZEOF_DOUBLE)
peers = [l for l in locus.available() if l != cuda and not cuda_adr.is_accessible_from(l)]
if not peers:
    print(f"SKIPPED: every location here uses {cuda} memory in place: no separate mirror to show")
    sys.exit(0)
peer = peers[0]
cuda_adr.write(np.full(10, -1.0))
peer_adr = cuda_adr.connect(10 * SIZEOF_DOUBLE, peer, 64)
assert not peer_adr.in_place, f"{peer} does not use {cuda} in place"
rng = np.arange(10, dtype=np.float64)
peer_adr.memory.write(rng)
assert np.frombuffer(cuda_adr.read(), np.float64).tolist() == [-1.0] * 10, "unchanged before sync"
peer_adr.sync(10 * SIZEOF_DOUBLE)  # the mirror's bytes to the device
assert np.frombuffer(cuda_adr.read(), np.float64).tolist() == rng.tolist(), f"{cuda} after sync"
cuda_adr.write(rng**2)
assert np.frombuffer(peer_adr.memory.read(), np.float64).tolist() == rng.tolist(), "unchanged before update"
peer_adr.update(10 * SIZEOF_DOUBLE)  # the device's bytes to the mirror
assert np.frombuffer(peer_adr.memory.read(), np.float64).tolist() == (rng**2).tolist(), f"{peer} after update"
print(f"{cuda} mirrored at {peer} (a separate buffer): sync and update each moved 80 bytes their way")
peer_adr.disconnect()
