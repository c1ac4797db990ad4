"""x[idx] = v on traced values: numpy's meaning under every transform, or an error.

A write rebinds the tracer to ``x.at[idx].set(v)``. Where numpy's answer would
differ (a view and its base both alive, a transform's argument), the write
raises. funcdiff.numpy never returns one of its arguments where numpy returns
a copy, and marks what numpy returns as a view: both are checked against
numpy, function by function.
"""

import warnings

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.core import Tracer
from funcdiff.errors import InvalidArgumentError
from test_numpy_against_numpy import INPUTS, _pairs

X = np.array([1.0, 2.0, 3.0, 0.5])


def fill_in_place(x):
    y = x * 1.0
    y[1:] += 1.0
    y[0] = x[2] ** 2
    z = fnp.zeros_like(x)
    z[::2] = fnp.sin(x[::2])
    w = y.copy()
    w[-1] = 7.0
    return fnp.sum(y * y) + fnp.sum(z * x) + fnp.sum(w)


def fill_functionally(x):
    y = fnp.concatenate([x[2:3] ** 2, x[1:] + 1.0])
    z = fnp.where(np.arange(4) % 2 == 0, fnp.sin(x), 0.0)
    w = fnp.concatenate([y[:-1], np.array([7.0])])
    return fnp.sum(y * y) + fnp.sum(z * x) + fnp.sum(w)


def numeric_grad(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


TRANSFORMS = {
    "grad": lambda f: fd.grad(f)(X),
    "jit-grad": lambda f: fd.jit(fd.grad(f))(X),
    "jacfwd": lambda f: fd.jacfwd(f)(X),
    "jacrev": lambda f: fd.jacrev(f)(X),
    "jvp": lambda f: np.array([fd.jvp(f, (X,), (e,))[1] for e in np.eye(4)]),
    "hessian": lambda f: fd.hessian(f)(X),
    "vmap": lambda f: fd.vmap(f)(np.stack([X, 2 * X])),
    "checkpoint": lambda f: fd.grad(fd.checkpoint(f))(X),
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_writes_mean_the_functional_update(transform):
    got = TRANSFORMS[transform](fill_in_place)
    want = TRANSFORMS[transform](fill_functionally)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_writes_match_numpy_and_finite_differences():
    assert fill_in_place(X) == pytest.approx(fill_functionally(X))
    np.testing.assert_allclose(fd.grad(fill_in_place)(X), numeric_grad(fill_in_place, X),
                               rtol=1e-7, atol=1e-7)


def _raises_write(f, match):
    with pytest.raises(InvalidArgumentError, match=match):
        fd.grad(f)(X)
    with pytest.raises(InvalidArgumentError, match=match):
        fd.jit(f)(X)


def test_a_live_view_and_its_base_refuse_writes():
    def write_base(x):
        y = x * 1.0
        v = y[1:]
        y[1] = 5.0  # numpy: v[0] would be 5 too
        return v.sum()

    def write_view(x):
        y = x * 1.0
        v = y.reshape(2, 2)
        v[0, 0] = 5.0  # numpy: y[0] would be 5 too
        return y.sum()
    _raises_write(write_base, r"a view of it \(x\[...\]\) is still in use")
    _raises_write(write_view, r"it is a view \(reshape\(\)\)")


def test_a_transform_argument_refuses_writes():
    def write_argument(x):
        x[0] = 0.0
        return x.sum()
    _raises_write(write_argument, "argument of")


def test_views_that_died_do_not_lock():
    def f(x):
        y = x * 1.0
        y[1:] += 1.0  # the view y[1:] is gone before the write
        y.T  # an unused view, gone at once
        y[0] = 0.0
        return fnp.sum(y * x)
    np.testing.assert_allclose(fd.grad(f)(X), [0.0, 5.0, 7.0, 2.0])


def test_copies_and_integer_elements_do_not_lock():
    def f(x):
        y = x * 2.0
        first = y[0]  # an element: numpy copies it
        picked = y[[0, 1]]  # integer-array indexing copies
        y[0] = 0.0
        return first + picked.sum() + y.sum()
    np.testing.assert_allclose(fd.grad(f)(X), [4.0, 4.0, 2.0, 2.0])


def test_a_value_from_an_inner_transform_cannot_be_stored_outside():
    def outer(x):
        y = x * 1.0

        def inner(s):
            y[0] = s
            return s
        fd.grad(inner)(1.0)
        return y.sum()
    with pytest.raises(InvalidArgumentError, match="began after x was made"):
        fd.grad(outer)(X)


@pytest.mark.parametrize("dtype", ["float64", "int64", "complex128", "bool"])
def test_no_function_aliases_where_numpy_copies_or_hides_a_view(dtype):
    """Every funcdiff.numpy function, on tracers: a result that is one of the
    arguments must be one where numpy's result shares the argument's memory, and
    a result numpy makes a view must be locked against writes."""
    vector, matrix = INPUTS[dtype]
    wrong, checked = [], 0
    for name, ours, theirs in _pairs():
        for args in ((vector,), (matrix,), (vector, vector[::-1]), (matrix, vector[:2]),
                     (matrix[:1, :1],), (np.stack([matrix, matrix[::-1]]),)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                refs = [np.copy(a) for a in args]
                try:
                    want = theirs(*refs)
                except Exception:
                    continue
                seen = {}

                def traced(*xs):
                    if dtype == "complex128":  # transforms take real arguments (for now)
                        xs = [xs[2 * i] + 1j * xs[2 * i + 1] for i in range(len(xs) // 2)]
                    out = ours(*xs)
                    outs = list(out) if isinstance(out, (tuple, list)) else [out]
                    seen["alias"] = any(o is x for o in outs for x in xs)
                    tracers = [o for o in outs if isinstance(o, Tracer)]
                    seen["locked"] = bool(tracers) and all(
                        getattr(o, "write_lock", None) is not None for o in tracers)
                    return out
                parts = [part for a in args for part in ((a.real, a.imag) if dtype == "complex128"
                                                         else (np.copy(a),))]
                try:
                    fd.make_jaxpr(traced)(*parts)
                except Exception:
                    continue
            wants = list(want) if isinstance(want, (tuple, list)) else [want]
            shares = any(isinstance(w, np.ndarray) and np.shares_memory(w, r)
                         for w in wants for r in refs)
            if seen["alias"] and not shares:
                wrong.append(f"{name}: returns its argument, numpy a copy")
            if shares and not seen["alias"] and not seen["locked"]:
                wrong.append(f"{name}: numpy returns a view, funcdiff an unlocked copy")
            checked += 1
    assert checked > 100
    assert not wrong, sorted(set(wrong))
