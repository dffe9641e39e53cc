"""The GIL is released during locus's copies, waits and kernels: while one thread is in a
single long call (a kernel over 16 Mi elements, a 64 MiB read-back, a 64 MiB range copy),
another Python thread keeps running. With the GIL held through the call, the other
thread could not run a single iteration until it returned. (Whether 8 threads then finish
sooner than 1 is measured, not asserted: python/benches/threads.py.)"""

import threading

import locus

N = 1 << 24


def test_other_threads_run_during_long_calls(location):
    count = [0]
    stop = [False]

    def spin():
        while not stop[0]:
            count[0] += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        x = locus.Buffer(location, N, dtype="float32", fill=1.0)
        y = locus.Buffer(location, N, dtype="float32", fill=2.0)
        z = locus.Buffer(location, N, dtype="float32")
        saxpy = locus.Codelet(locus.kernels.saxpy(), ["host"])
        calls = {
            "saxpy on the host": lambda: saxpy.call([2.0, x, y, N], launch=N),
            "to_numpy": lambda: y.to_numpy(),
            # In "async" mode (the default) copy_from returns once the move started;
            # synchronize() waits for it.
            "copy_from": lambda: (z.copy_from(y), z.synchronize()),
        }
        ran = {}
        for name, call in calls.items():
            call()  # warm: kernels built, replicas made
            # Another thread gets a core only when the scheduler gives it one (an OpenMP
            # copy may keep both of this machine's cores busy for a whole call): repeat
            # until it ran during a call. With the GIL held it never could.
            for attempt in range(50):
                before = count[0]
                call()
                ran[name] = count[0] - before
                if ran[name] > 0:
                    break
        print(f"{location}: iterations of another thread during each call: {ran}")
        assert all(v > 0 for v in ran.values()), ran
    finally:
        stop[0] = True
        spinner.join()
