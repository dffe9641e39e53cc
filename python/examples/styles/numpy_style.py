"""The same program in numpy style (docs/python.md): a[i] = a[i] * 3 + i on 1M floats made at opencl:0."""

import numpy as np
import locus

# A buffer made at a device; numpy works on it where the host can see it.
b = locus.Buffer("opencl:0", 1_000_000, dtype="float32", fill=2.0)
with b.access_mut("host") as h:          # in place where the host reaches the memory
    a = np.asarray(h)                     # zero-copy view
    a *= 3.0                              # numpy's own code, on locus's memory
    a += np.arange(a.size, dtype=np.float32)
print(b.to_numpy()[:4], float(b.to_numpy().sum()))
