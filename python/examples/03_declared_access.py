"""03 in Python: declared access, in place where the consumer can reach the data,
otherwise a cached replica. The transfer counters show what moved.

    python python/examples/03_declared_access.py [LOCATION ...]   # default: every device
"""

import sys

import numpy as np

import locus


def main():
    devices = sys.argv[1:] or [l for l in locus.available() if l != "host"]
    for device in devices:
        print(f"== a buffer made at {device}, read on the host")
        b = locus.Buffer.from_array(np.array([1.0, 2.0, 3.0], dtype=np.float32)).copy(device)
        moved = b.bytes_moved
        with b.access("host") as h:
            how = "in place" if h.in_place else "replica made"
            print(f"  first read:  {how} ({h.route}) -> {np.asarray(h)}")
        print(f"  bytes moved: {b.bytes_moved - moved}")
        moved = b.bytes_moved
        with b.access("host"):
            pass
        print(f"  second read, served from the cache: {b.bytes_moved - moved} bytes moved")
        # A write on the host makes the host copy the only valid one...
        with b.access_mut("host") as h:
            np.asarray(h)[0] = 100.0
        print(f"  after a host write, replicas (location, valid): {b.replicas()}")
        # ...and the device sees it the next time it reads.
        with b.access(device) as h:
            print(f"  read at {device}: {'in place' if h.in_place else 'copied'} ({h.route})")
        assert b.to_list()[0] == 100.0
        print()


if __name__ == "__main__":
    main()
