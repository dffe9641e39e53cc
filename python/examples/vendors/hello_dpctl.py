"""Hello, SYCL from Python: dpctl's and dpnp's own objects around locus memory.

SYCL's model: a device runs work submitted to a queue (in order here) within a context;
memory is USM, a pointer of one of three kinds (device, shared, host); `queue.memcpy`
copies between any of them. dpctl is Python's SYCL runtime (the same C library locus
loads), dpnp is numpy on SYCL. Both take locus's USM in place through the
`__sycl_usm_array_interface__` of an access. This program: one upload dpctl's way beside
locus's, `c = a + b` by dpnp on locus's memory in place, the result read both ways.

    . scripts/sycl-env.sh && python python/examples/vendors/hello_dpctl.py [sycl:N]
"""

import sys

import dpctl
import dpctl.memory
import dpnp
import numpy as np

import locus

N = 1 << 16


def main():
    at = sys.argv[1] if len(sys.argv) > 1 else "sycl:0"
    if at not in locus.available():
        sys.exit(f"sycl unavailable: {at} is not among {locus.available()}")

    a = locus.Buffer(at, N, dtype="float32")
    c = locus.Buffer(at, N, dtype="float32")
    with a.access_mut(at) as h:
        # 1. The objects: locus's queue as a dpctl.SyclQueue, its device and context;
        #    the memory as a dpctl USM object (no copy), and its kind.
        queue = h.sycl_queue
        usm = dpctl.memory.as_usm_memory(h)
        print(f"{at}: {queue.sycl_device.name!r} ({queue.sycl_device.backend}), "
              f"{usm.get_usm_type()} USM at {usm._pointer:#x}")

        # 2. One upload, dpctl's way: `queue.memcpy` from host memory, waited.
        queue.memcpy(usm, np.ones(N, dtype=np.float32), usm.nbytes)

    # ... and locus's: an array made on the host, used at the device.
    b = locus.Buffer.from_array(np.arange(N, dtype=np.float32))
    with a.access(at) as ha, b.access(at) as hb, c.access_mut(at) as hc:
        print(f"b at {at}: {hb.route}")
        # 3. The kernel: dpnp's, over locus's USM in place, on locus's queue (dpnp runs
        #    where its arrays' queue is: `to_device` puts each view there, no copy within
        #    one context). No wait: locus's reads below are ordered after it.
        x, y, z = (dpnp.asarray(v).to_device(queue) for v in (ha, hb, hc))
        dpnp.add(x, y, out=z)

        # 4. The result, dpctl's way: `queue.memcpy` to host memory.
        raw = np.empty(N, dtype=np.float32)
        queue.memcpy(raw, dpctl.memory.as_usm_memory(hc), raw.nbytes)

    # ... and locus's.
    with c.access("host") as hh:
        print(f"c on the host: {hh.route}")
        through_locus = np.array(hh)
    want = np.arange(N, dtype=np.float32) + 1
    assert np.array_equal(raw, want) and np.array_equal(through_locus, want)
    print(f"c = a + b: {raw[:4]} ... (both reads agree)")


if __name__ == "__main__":
    main()
