"""The array API conformance checker (tests/array_api_conformance.py) and the fixes it led to.

The checker compares funcdiff.numpy.array_api with array_api_strict eagerly,
under jit and under jvp. Every case must pass, be documented behaviour (needs
a concrete value), or be one of the checker's KNOWN_FAILURES; a known failure
that starts passing fails too, so the list stays honest. The generated page
docs/array-api-conformance.md must match the checker's output.

The regression tests below pin the bugs the checker found, each against
numpy or the standard's reference.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
import funcdiff.numpy.array_api as fxp
from funcdiff.errors import DTypeError
from funcdiff.primitives.complex_ops import complex as make_complex

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import array_api_conformance as conformance  # noqa: E402

xps = pytest.importorskip("array_api_strict")


@pytest.fixture(scope="module")
def outcomes():
    return conformance.run()


def test_every_case_passes_or_is_a_known_failure(outcomes):
    failing = {conformance.key(o): o.reason for o in outcomes if o.status == "fail"}
    new = {k: v for k, v in failing.items() if k not in conformance.KNOWN_FAILURES}
    fixed = sorted(set(conformance.KNOWN_FAILURES) - set(failing))
    assert not new, "new conformance failures:\n" + "\n".join(f"{k}: {v}" for k, v in new.items())
    assert not fixed, ("known failures that pass now (remove them from KNOWN_FAILURES): "
                       f"{fixed}")


def test_only_concrete_only_cases_are_documented(outcomes):
    documented = [o for o in outcomes if o.status == "documented"]
    by_name = {c.name: c for c in conformance.cases()}
    assert documented and all(by_name[o.case].concrete_only for o in documented)
    assert {o.mode for o in documented} <= {"jit", "traced"}


def test_every_standard_name_has_a_signature_case_and_value_cases_in_every_mode(outcomes):
    names = conformance.standard_names()
    assert len(names) > 180 and {"linalg.vecdot", "fft.rfftn", "unique_all"} <= set(names)
    assert {o.case for o in outcomes if o.mode == "signature"} == set(names)
    for mode in conformance.MODES:
        covered = {o.function for o in outcomes if o.mode == mode}
        assert set(names) - covered == set(), mode
        assert {"Array.__add__", "Array.__getitem__", "Array.__setitem__", "Array.mT",
                "Array.__index__"} <= covered


def test_the_checker_can_fail():
    # a wrong dtype, a wrong value and a wrong sign of zero are each caught
    want = conformance.normalize(np.array([0.0, -0.0, 1.0]))
    assert conformance.compare(conformance.normalize(np.array([0.0, -0.0, 1.0], "f4")), want)
    assert conformance.compare(conformance.normalize(np.array([0.0, -0.0, 1.5])), want)
    assert conformance.compare(conformance.normalize(np.array([0.0, 0.0, 1.0])), want,
                               signed_zeros=True)
    assert not conformance.compare(conformance.normalize(np.array([0.0, -0.0, 1.0])), want,
                                   signed_zeros=True)
    assert conformance.compare(conformance.normalize(3), conformance.normalize(np.array(3)))


def test_the_page_is_up_to_date(outcomes):
    with open(conformance.DOC_PATH) as f:
        page = f.read()
    assert page == conformance.report(outcomes), (
        "docs/array-api-conformance.md is out of date: run "
        "python tests/array_api_conformance.py --write")


# ---------------------------------------------------------------------------
# Regression tests of the fixes


def test_linalg_vecdot_conjugates_and_keeps_integer_dtypes():
    x = np.array([[1 + 2j, 3 - 1j]])
    y = np.array([2 - 1j, 0.5 + 1j])
    np.testing.assert_allclose(fnp.linalg.vecdot(x, y), np.linalg.vecdot(x, y))
    a = np.array([[1, 2, 3]], np.int32)
    assert fnp.linalg.vecdot(a, a).dtype == np.int32
    # inside a transform, with the complex value built from real arguments
    re, im = np.array([1.0, -2.0]), np.array([0.5, 3.0])
    got = fd.jit(lambda r, i: fnp.real(fnp.linalg.vecdot(r + 1j * i, r + 1j * i)))(re, im)
    np.testing.assert_allclose(got, np.sum(re ** 2 + im ** 2))


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_classification_of_complex_values_looks_at_both_parts(name):
    re = np.array([1.0, np.inf, np.nan, 0.0, -np.inf])
    im = np.array([2.0, 0.0, 1.0, -np.inf, np.nan])
    z = np.empty(5, complex)
    z.real, z.imag = re, im
    want = getattr(np, name)(z)
    np.testing.assert_array_equal(getattr(fnp, name)(z), want)
    f = lambda r, i: getattr(fnp, name)(make_complex(r, i))  # noqa: E731
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(f(re, im), want)
        np.testing.assert_array_equal(fd.jit(f)(re, im), want)
        out, _ = fd.jvp(f, (re, im), (np.zeros(5), np.zeros(5)))
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
def test_zero_results_of_floor_divide_and_remainder_have_numpy_signs(name):
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.0, -3.0, 2.5, 1e-8])
    a, b = v[:, None], v[None, :]
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
        for got in (getattr(fnp, name)(a, b), fd.jit(getattr(fnp, name))(a, b)):
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    # -0.0 // inf is -0.0 and 0.0 % -inf is -0.0, as numpy has them
    assert np.signbit(fnp.floor_divide(-0.0, np.inf)) and np.signbit(fnp.remainder(0.0, -np.inf))


def test_remainder_and_floor_divide_derivatives_are_unchanged():
    x = np.array([0.7, -2.3, 5.1])
    np.testing.assert_allclose(fd.grad(lambda x: fnp.sum(fnp.remainder(x, 2.0)))(x), 1.0)
    np.testing.assert_allclose(fd.grad(lambda y: fnp.sum(fnp.remainder(x, y)))(2.0),
                               -np.sum(np.floor(x / 2.0)))
    np.testing.assert_allclose(fd.grad(lambda x: fnp.sum(fnp.floor_divide(x, 2.0)))(x), 0.0)


def test_can_cast_follows_the_standard_lattice():
    xps.set_array_api_strict_flags(api_version="2024.12")
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "complex64", "complex128"]
    for a in names:
        for b in names:
            assert fxp.can_cast(getattr(fxp, a), getattr(fxp, b)) == \
                xps.can_cast(getattr(xps, a), getattr(xps, b)), (a, b)
    assert fxp.can_cast(np.zeros(2, np.int32), fxp.int64)
    assert not fxp.can_cast(np.zeros(2, np.int64), fxp.float64)  # numpy: True


def test_finfo_and_iinfo_give_python_numbers():
    info = fxp.finfo(fxp.float32)
    assert type(info.eps) is float and type(info.max) is float and info.bits == 32
    assert info.eps == float(np.finfo(np.float32).eps) and info.dtype == np.float32
    assert fxp.finfo(fxp.complex64).dtype == np.float32
    assert fd.jit(lambda x: x * fxp.finfo(x).eps)(np.float32(2.0)) == 2 * info.eps
    ii = fxp.iinfo(np.zeros(1, np.uint8))
    assert (type(ii.max), ii.max, ii.min, ii.bits) == (int, 255, 0, 8)


def test_count_nonzero_is_always_an_array():
    out = fxp.count_nonzero(np.array([0.0, 2.0, -1.0]))
    assert isinstance(out, (np.ndarray, np.generic)) and out.dtype == np.int64 and out == 2
    assert fxp.count_nonzero(np.eye(3), axis=0, keepdims=True).shape == (1, 3)
    assert fnp.count_nonzero(np.array([0, 1])) == 1  # funcdiff.numpy keeps numpy's int


def test_full_with_a_complex_fill_value_is_numpys():
    np.testing.assert_array_equal(fnp.full((2,), 1 + 2j), np.full((2,), 1 + 2j))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(fnp.full((2,), 3), np.full((2,), 3))
