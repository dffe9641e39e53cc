"""05 in Python: one codelet, every available target. The same kernel in each
technology's own language (locus's shipped ``vec_add``), chosen by the location it runs
at; then a target list, where the first available target wins and the others say why
not. (``codelet.py`` adds a kernel of your own, given as source strings.)

    python python/examples/05_codelet_vec_add.py
"""

import sys

import numpy as np

import locus


def main():
    n = 1 << 16
    kernel = locus.kernels.vec_add()
    for target in locus.available():
        codelet = locus.Codelet(kernel, [target])
        a = locus.Buffer("host", n, dtype="float32", fill=1.0)
        b = locus.Buffer.from_array(np.arange(n, dtype=np.float32))
        c = locus.Buffer("host", n, dtype="float32")
        report = codelet.call([a, b, c, n], launch=n)
        result = c.to_numpy()
        correct = bool(np.array_equal(result, np.arange(n, dtype=np.float32) + 1.0))
        print(
            f"{report['target']:<9} c[:4] = {result[:4]}  all {n} correct: {correct}"
            f"  moved for the call: {report['bytes_moved']} bytes"
        )
        if not correct:
            sys.exit(1)

    # A target list: the first one available wins, and the others say why not.
    codelet = locus.Codelet(kernel, ["cuda:0", "hip:0", "webgpu:0", "host"])
    print(f"\ntarget list cuda:0, hip:0, webgpu:0, host -> runs at {codelet.target}")
    for location, why in codelet.skipped:
        print(f"  skipped {location}: {why}")


if __name__ == "__main__":
    main()
