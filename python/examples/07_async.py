"""07 in Python: asynchronous calls. ``advanced_load`` moves inputs ahead of time, the
call returns at once, the host works meanwhile, ``synchronize`` waits, and
``delegated_store`` brings the output back only when it is wanted.

    python python/examples/07_async.py [LOCATION]     # default: the last available one
"""

import math
import sys

import numpy as np

import locus


def main():
    target = sys.argv[1] if len(sys.argv) > 1 else locus.available()[-1]
    n = 1 << 20
    codelet = locus.Codelet(locus.kernels.saxpy(), [target, "host"])
    x = locus.Buffer.from_array(np.full(n, 1.0, dtype=np.float32))
    y = locus.Buffer.from_array(np.full(n, 2.0, dtype=np.float32))

    # advancedload: move the inputs now, while nothing waits for them.
    codelet.advanced_load(x)
    codelet.advanced_load(y)
    print(f"advancedload to {codelet.target}: x {x.transfers}, y {y.transfers}")

    # The call returns at once; the host is free meanwhile.
    pending = codelet.call_async([3.0, x, y, n], launch=n)
    host_work = sum(math.sqrt(i) for i in range(1_000_000))
    print(f"host computed {host_work:.0f} while the kernel ran")
    report = pending.synchronize()
    print(
        f"synchronize: done at {report['target']}, "
        f"the call itself moved: {report['bytes_moved']} bytes"
    )

    # delegatedstore: the result is still at the target; bring it back when wanted.
    codelet.delegated_store(y)
    values = y.to_numpy()
    print(f"y[:3] = {values[:3]} (expected 5.0); y's transfers: {y.transfers}")
    if not np.all(values == 5.0):
        sys.exit("wrong result")


if __name__ == "__main__":
    main()
