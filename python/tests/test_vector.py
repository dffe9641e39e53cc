"""HAMR's vector operations on `locus.Buffer` from Python, on every location: `resize`
(with a fill), `reserve` / `capacity`, `assign` and `append` from buffers at every
location, `swap`; random sequences of them against a plain list; the refusals."""

import random

import numpy as np
import pytest

import locus


def test_resize_keeps_the_data_and_fills_the_new_elements(location):
    b = locus.Buffer(location, 5, dtype="int32", fill=7)
    b.resize(8, fill=-1)
    assert b.shape == (8,) and len(b) == 8 and b.nbytes == 32
    assert b.to_list() == [7] * 5 + [-1] * 3
    b.resize(3)
    assert b.to_list() == [7, 7, 7]
    b.resize(6)
    assert b.to_list() == [7, 7, 7, 0, 0, 0], "new elements are zero without a fill"
    assert b.location == location


def test_reserve_then_append_copies_nothing_already_there(location):
    b = locus.Buffer(location, 4, dtype="float64", fill=1.5)
    b.reserve(100)
    assert b.capacity >= 100
    for other in locus.available():
        src = locus.Buffer(other, 3, dtype="float64", fill=2.5)
        b.append(src)
    n = 4 + 3 * len(locus.available())
    assert b.to_list() == [1.5] * 4 + [2.5] * (n - 4)
    assert b.capacity >= 100 and len(b) == n


def test_assign_and_swap_between_locations(location):
    for other in locus.available():
        a = locus.Buffer(location, 10, dtype="uint16", fill=3)
        src = locus.Buffer.from_array(np.arange(25, dtype=np.uint16)).copy(other)
        a.assign(src)
        assert a.to_list() == list(range(25)), f"{other} -> {location}"
        s = locus.Buffer(other, 2, dtype="uint16", fill=9)
        a.swap(s)
        assert (a.to_list(), a.location) == ([9, 9], other)
        assert (s.to_list(), s.location) == (list(range(25)), location)


def write_at(b, i, value):
    """Writes one element through a host handle. The handle goes with this frame: a
    WebGPU buffer's host view must be gone before GPU work on it (a handle kept alive
    after its `with` block keeps its mapping; see docs/guide/python.md)."""
    with b.access_mut("host") as h:
        np.asarray(h)[i] = value


def test_random_sequences_match_a_list(location):
    rng = random.Random(f"vector {location}")
    others = locus.available()
    b, model = locus.Buffer(location, 0, dtype="int64"), []
    spare, spare_model = locus.Buffer(rng.choice(others), 1, dtype="int64", fill=-5), [-5]
    for step in range(40):
        op = rng.choice(["resize", "append", "assign", "reserve", "swap", "write"])
        if op == "resize":
            n, fill = rng.randrange(0, 50), rng.randrange(-9, 9)
            b.resize(n, fill=fill)
            model = model[:n] + [fill] * (n - len(model))
        elif op in ("append", "assign"):
            values = [rng.randrange(-1000, 1000) for _ in range(rng.randrange(0, 20))]
            src = locus.Buffer.from_array(np.array(values, dtype=np.int64)).copy(rng.choice(others))
            getattr(b, op)(src)
            model = model + values if op == "append" else values
        elif op == "reserve":
            b.reserve(rng.randrange(0, 80))
        elif op == "swap":
            b.swap(spare)
            model, spare_model = spare_model, model
        elif model:
            i = rng.randrange(len(model))
            write_at(b, i, step)
            model[i] = step
        assert b.to_list() == model, f"step {step}: {op}"
        assert len(b) == len(model) and b.capacity >= len(model)
    assert spare.to_list() == spare_model


def test_vector_operations_refuse_what_they_cannot_do(location):
    b = locus.Buffer(location, 4, dtype="float32")
    with pytest.raises(ValueError, match="dtypes must match"):
        b.append(locus.Buffer(location, 2, dtype="float64"))
    with pytest.raises(ValueError, match="itself"):
        b.append(b)
    with pytest.raises(ValueError, match="1-D"):
        locus.Buffer(location, (2, 3), dtype="float32").resize(4)
    h = b.access_mut("host")
    with pytest.raises(ValueError, match="write handle"):
        b.resize(10)
    h.close()
    b.resize(10)
    assert len(b) == 10
    frozen = np.arange(3.0)
    frozen.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        locus.Buffer.from_array(frozen).resize(5)
