"""02 in Python: buffers, typed arrays made at a location, copied and moved anywhere.

    python python/examples/02_buffers.py [LOCATION]     # default: the last available one
"""

import sys

import numpy as np

import locus


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else locus.available()[-1]
    print(f"using {device}")
    # Four ways to make a buffer.
    zeros = locus.Buffer(device, 4, dtype="float32")
    sevens = locus.Buffer(device, 4, dtype="uint32", fill=7)
    from_numpy = locus.Buffer.from_array(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)).copy(device)
    adopted = locus.Buffer.from_dlpack(np.array([10.0, 20.0, 30.0, 40.0], dtype=np.float32))  # host, zero-copy
    print(f"zeroed:     {zeros.to_list()} at {zeros.location}")
    print(f"filled:     {sevens.to_list()} at {sevens.location}")
    print(f"from numpy: {from_numpy.to_list()} at {from_numpy.location}")
    print(f"adopted:    {adopted.to_list()} at {adopted.location} (numpy's own memory)")
    # Copy a sub-range between two locations: bounds-checked, on the planner's route.
    target = locus.Buffer(device, 6, dtype="float32")
    route = target.copy_from(adopted, src_start=1, count=3, dst_start=1)
    print(f"copy_from:  {target.to_list()} via {route}")
    assert target.to_list() == [0.0, 20.0, 30.0, 40.0, 0.0, 0.0]
    try:
        target.copy_from(adopted, src_start=0, count=4, dst_start=5)
    except ValueError as e:
        print(f"out of range is an error, nothing written: {e}")
    # move_to relocates the data and frees the old copy.
    target.move_to("host")
    print(f"moved to:   {target.location} {target.replicas()}")


if __name__ == "__main__":
    main()
