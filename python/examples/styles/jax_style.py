"""The same program in jax style (docs/python.md): a[i] = a[i] * 3 + i on 1M floats made at opencl:0."""

import jax.numpy as jnp
import locus

b = locus.Buffer("opencl:0", 1_000_000, dtype="float32", fill=2.0)
x = jnp.from_dlpack(b.access("host"))     # JAX reads locus's memory, no copy
y = x * 3.0 + jnp.arange(x.size, dtype=jnp.float32)   # JAX computes (a new array)
out = locus.Buffer.from_dlpack(y)         # and locus adopts JAX's result, no copy
print(out.to_numpy()[:4], float(out.to_numpy().sum()))
