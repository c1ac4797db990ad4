"""Converting traced values to numbers: never a silently dropped derivative.

One row per way third-party numpy code turns a value into a Python or numpy
number (storing into a numpy array, float(), math functions, item(), ...).
Under every differentiating transform a value that carries a derivative
raises a funcdiff error naming the user's line (the line marked ``# converts``);
under jit and vmap, where the value is abstract or differs across the batch,
a funcdiff error names the line too. Values that carry no derivative (integer
indices, constants) convert, and the derivative of what they feed is right.
"""

from __future__ import annotations

import cmath
import inspect
import math

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import FunctionalDiffError, TracerConversionError


def store_into_numpy_array(x):
    g = np.zeros(2)
    g[0] = x[0]  # converts
    return g.sum()


def python_float(x):
    return x[0] * float(x[0])  # converts


def python_int(x):
    return x[0] * int(x[1])  # converts


def python_complex(x):
    return abs(complex(x[0]))  # converts


def math_function(x):
    return math.exp(x[0])  # converts


def cmath_function(x):
    return cmath.exp(x[0]).real  # converts


def numpy_scalar(x):
    return np.float64(x[0]) * 2.0  # converts


def item(x):
    return x[0].item() * x[1]  # converts


def tolist(x):
    return sum(x.tolist())  # converts


def fromiter(x):
    return np.fromiter(x, float).sum()  # converts


def asarray(x):
    return np.asarray(x).sum()  # converts


CONVERSIONS = [store_into_numpy_array, python_float, python_int, python_complex, math_function,
               cmath_function, numpy_scalar, item, tolist, fromiter, asarray]
X = np.array([0.7, 2.0])

DIFFERENTIATING = {
    "grad": lambda f: fd.grad(f)(X),
    "value_and_grad": lambda f: fd.value_and_grad(f)(X),
    "jvp": lambda f: fd.jvp(f, (X,), (np.ones(2),)),
    "vjp": lambda f: fd.vjp(f, X)[1](1.0),
    "linearize": lambda f: fd.linearize(f, X),
    "jacfwd": lambda f: fd.jacfwd(f)(X),
    "jacrev": lambda f: fd.jacrev(f)(X),
    "hessian": lambda f: fd.hessian(f)(X),
    "grad under jit": lambda f: fd.jit(fd.grad(f))(X),
}
STAGING = {
    "jit": lambda f: fd.jit(f)(X),
    "vmap": lambda f: fd.vmap(f)(np.stack([X, X + 1])),
    "make_jaxpr": lambda f: fd.make_jaxpr(f)(X),
}


def marked_line(f) -> str:
    lines, first = inspect.getsourcelines(f)
    offset = next(i for i, line in enumerate(lines) if "# converts" in line)
    return f"test_conversions.py:{first + offset}"


@pytest.mark.parametrize("transform", DIFFERENTIATING, ids=str)
@pytest.mark.parametrize("f", CONVERSIONS, ids=lambda f: f.__name__)
def test_a_value_carrying_a_derivative_never_converts(f, transform):
    f(X)  # the function itself runs on numpy arrays
    with pytest.raises(TracerConversionError) as info:
        DIFFERENTIATING[transform](f)
    message = str(info.value)
    assert marked_line(f) in message, message
    assert "derivative" in message and "stop_gradient" in message, message


@pytest.mark.parametrize("transform", STAGING, ids=str)
@pytest.mark.parametrize("f", CONVERSIONS, ids=lambda f: f.__name__)
def test_an_abstract_value_never_converts_and_the_error_names_the_line(f, transform):
    with pytest.raises(FunctionalDiffError) as info:
        STAGING[transform](f)
    message = str(info.value)
    assert marked_line(f) in message, message
    assert "setting an array element" not in message


# --- what carries no derivative converts -------------------------------------------------

FIELD = np.arange(10.0) ** 2


def index_a_numpy_array(v):
    return (FIELD[fnp.floor(v).astype(int)] * v).sum()


def index_a_numpy_array_expected_grad(v):
    return FIELD[np.floor(v).astype(int)]


def int_of_an_integer_value(v):
    return v[int(fnp.argmax(v))] * 3.0


def int_of_an_integer_value_expected_grad(v):
    g = np.zeros_like(v)
    g[np.argmax(v)] = 3.0
    return g


def float_of_a_constant(v):
    return v.sum() * float(fd.stop_gradient(v)[0])


def float_of_a_constant_expected_grad(v):
    return np.full_like(v, v[0])


def numpy_routine_on_a_constant(v):
    return (v * np.cumsum(np.asarray(fd.stop_gradient(v)))).sum()


def numpy_routine_on_a_constant_expected_grad(v):
    return np.cumsum(v)


CONSTANTS = [index_a_numpy_array, int_of_an_integer_value, float_of_a_constant,
             numpy_routine_on_a_constant]
V = np.array([1.5, 2.5, 0.25, 3.75])


@pytest.mark.parametrize("f", CONSTANTS, ids=lambda f: f.__name__)
def test_values_without_a_derivative_convert_and_the_gradient_is_right(f):
    expected = globals()[f.__name__ + "_expected_grad"](V)
    np.testing.assert_allclose(fd.grad(f)(V), expected, rtol=1e-12)
    np.testing.assert_allclose(fd.jacrev(f)(V), expected, rtol=1e-12)
    np.testing.assert_allclose(fd.jacfwd(f)(V), expected, rtol=1e-12)
    _, tangent = fd.jvp(f, (V,), (np.ones_like(V),))
    np.testing.assert_allclose(tangent, expected.sum(), rtol=1e-12)
    if "stop_gradient" in inspect.getsource(f):
        return  # a declared constant: its derivative is zero by definition, not by differences
    # and by central differences (the rows are piecewise smooth; V is away from the kinks)
    h = 1e-6
    numeric = [(f(V + h * e) - f(V - h * e)) / (2 * h) for e in np.eye(len(V))]
    np.testing.assert_allclose(fd.grad(f)(V), numeric, rtol=1e-6, atol=1e-6)


def test_an_abstract_integer_index_of_a_numpy_array_names_the_line_and_the_fix():
    with pytest.raises(FunctionalDiffError, match=r"test_conversions.py:\d+.*fnp.take"):
        fd.jit(index_a_numpy_array)(V)


def test_branching_on_a_value_still_works_under_grad():
    f = lambda x: x * x if x > 0 else -x  # noqa: E731
    assert fd.grad(f)(3.0) == 6.0 and fd.grad(f)(-2.0) == -1.0


def test_integer_inputs_get_float0_from_vjp_and_an_error_from_grad():
    """What the README says of integer inputs: float0 from vjp, an error from grad."""
    _, pullback = fd.vjp(lambda x, n: x * n, 2.0, np.int64(3))
    ct_x, ct_n = pullback(1.0)
    assert ct_x == 3.0 and ct_n.dtype == fd.dtypes.float0
    with pytest.raises(fd.errors.DifferentiationError, match="argument 1"):
        fd.grad(lambda x, n: x * n, argnums=1)(2.0, np.int64(3))


def test_the_line_named_is_the_users_even_in_a_package_named_like_numpy(tmp_path, monkeypatch):
    """Frames are skipped by folder (funcdiff/, numpy/), not by name prefix."""
    package = tmp_path / "numpy_lookalike"
    package.mkdir()
    (package / "__init__.py").write_text("def f(x):\n    return float(x) * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import numpy_lookalike
    with pytest.raises(TracerConversionError, match=r"numpy_lookalike.__init__\.py:2"):
        fd.grad(numpy_lookalike.f)(2.0)
