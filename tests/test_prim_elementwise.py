"""Tests of the elementwise primitives, driven by one table.

Each row of ROWS is one primitive with one setting of its params: a numpy (or,
for special functions, scipy) reference, one input sampler per operand, the
dtypes it accepts and the tolerance of its impl. The table drives: impl against
the reference on 0-d, empty, plain and broadcasting shapes (float64, float32,
integers, booleans where meaningful); abstract_eval and staging against the
impl; derivatives to order 2 in both modes against finite differences; float32
derivatives staying float32; vmap over each operand against a Python loop.
Special-function accuracy, kinks, NaN-safety, casts, iota, errors and costs
have their own tests below.
"""
import doctest
import warnings
from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
from funcdiff import dtypes
from funcdiff.core import Primitive, ShapedArray, bind, get_aval
from funcdiff.errors import DifferentiationError, DTypeError, InvalidArgumentError, ShapeError
from funcdiff.interpreters.transpose import UndefinedPrimal
from funcdiff.ir import check_jaxpr
from funcdiff.primitives import elementwise as E
from funcdiff.primitives import special_math
from funcdiff.test_util import check_grads

F64, F32 = np.dtype(np.float64), np.dtype(np.float32)
I64, I32, B = np.dtype(np.int64), np.dtype(np.int32), np.dtype(np.bool_)
FLOATS, NUMERIC, ALL, INTEGRAL = (F64, F32), (F64, F32, I64, I32), (F64, F32, I64, B), (B, I64, I32)
INTEGERS = (I64, I32)


# --- samplers: (rng, shape, dtype) -> array -------------------------------------------


def U(lo, hi):
    """Uniform reals in [lo, hi]; integers in that range; random booleans."""
    def sample(rng, shape, dtype):
        if dtype.kind == "f":
            return rng.uniform(lo, hi, shape).astype(dtype)
        if dtype.kind == "b":
            return rng.random(shape) < 0.5
        return rng.integers(int(np.ceil(lo)), int(np.floor(hi)) + 1, shape).astype(dtype)
    return sample


def AWAY(lo, hi):
    """Magnitudes in [lo, hi] with random signs: keeps clear of a kink or pole at 0."""
    def sample(rng, shape, dtype):
        mag = U(lo, hi)(rng, shape, dtype)
        return (mag * rng.choice(np.array([-1, 1], dtype), shape)).astype(dtype)
    return sample


def AT(points, sampler):
    """``sampler``'s values with its first entries (in C order) replaced by ``points``:
    the kinks of an implementation (zeros, ties), where a smooth function's derivatives
    must still be right. Every operand of a row that uses the same points ties there."""
    def sample(rng, shape, dtype):
        x = np.array(sampler(rng, shape, dtype))
        flat = x.reshape(-1)
        k = min(len(points), flat.size)
        flat[:k] = np.asarray(points[:k], dtype)
        return flat.reshape(x.shape)
    return sample


def sinc_d1(x):
    # (cos(pi x) - sinc(x)) / x, 0 at 0 (the reference needs no series: AWAY and 0 only)
    safe = np.where(x == 0, 1, x)
    return np.where(x == 0, 0, (np.cos(np.pi * x) - np.sinc(x)) / safe).astype(x.dtype)


def sinc_d2(x):
    # -(pi sin(pi x) + 2 sinc'(x)) / x, -pi**2 / 3 at 0
    safe = np.where(x == 0, 1, x)
    out = -(np.pi * np.sin(np.pi * x) + 2 * sinc_d1(x)) / safe
    return np.where(x == 0, -np.pi ** 2 / 3, out).astype(x.dtype)


def TIES(rng, shape, dtype):
    """Small integers (as any dtype), so comparisons see many ties."""
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(-2, 3, shape).astype(dtype)


def BINADES(rng, shape, dtype):
    """Signed values m * 2**k, 0.55 <= m <= 0.95, k in [-4, 4]: several binades of frexp,
    away from the powers of two where its mantissa jumps."""
    m = rng.uniform(0.55, 0.95, shape) * rng.choice([-1.0, 1.0], shape)
    return np.ldexp(m, rng.integers(-4, 5, shape)).astype(dtype)


def SHIFTS(rng, shape, dtype):
    """Shift counts, including negative ones and ones past the bit width."""
    return rng.integers(-3, 8 * dtype.itemsize + 3, shape).astype(dtype)


def EXPONENTS(rng, shape, dtype):
    """int32 exponents for ldexp, whatever the dtype of the row."""
    return rng.integers(-6, 7, shape).astype(np.int32)


def PRED(rng, shape, dtype):
    return rng.random(shape) < 0.5


def NONFINITE(rng, shape, dtype):
    x = U(-3, 3)(rng, shape, dtype)
    if dtype.kind == "f" and x.size:
        flat = x.reshape(-1)
        flat[rng.integers(0, 3, flat.size) == 0] = np.inf
        flat[rng.integers(0, 4, flat.size) == 0] = -np.inf
        flat[rng.integers(0, 5, flat.size) == 0] = np.nan
    return x


# --- references ----------------------------------------------------------------------


def scipy_ref(name, *lead):
    """A scipy.special reference, cast to the operand dtype (scipy is test-only)."""
    def ref(x):
        sps = pytest.importorskip("scipy.special")
        return np.asarray(getattr(sps, name)(*lead, x)).astype(x.dtype)
    return ref


def div_ref(x, y):
    if x.dtype.kind in "fc":
        return x / y
    return np.trunc(x.astype(np.float64) / y).astype(x.dtype)


class Row(NamedTuple):
    prim: Primitive
    ref: Callable
    domain: tuple              # one sampler per operand
    dtypes: tuple              # operand dtypes to run (select: its value operands)
    params: dict = {}
    rtol: float = 0.0          # impl vs reference in float64; 0 means bit-identical
    atol: float = 0.0
    diff: bool = True          # differentiable: run check_grads
    name: str = ""
    out: int | None = None     # the output checked, for primitives with several

    @property
    def id(self):
        return self.name or self.prim.name


def unary(prim, ref, domain, dtypes=FLOATS, **kw):
    return Row(prim, ref, (domain,), dtypes, **kw)


def binary(prim, ref, dx, dy, dtypes=FLOATS, **kw):
    return Row(prim, ref, (dx, dy), dtypes, **kw)


ROWS = [
    unary(E.neg_p, np.negative, U(-3, 3), NUMERIC),
    unary(E.sign_p, np.sign, TIES, NUMERIC, diff=False),
    unary(E.floor_p, np.floor, U(-5, 5), diff=False),
    unary(E.ceil_p, np.ceil, U(-5, 5), diff=False),
    unary(E.round_p, np.round, U(-5, 5), diff=False),
    unary(E.abs_p, np.abs, AWAY(0.2, 3), NUMERIC),
    unary(E.exp_p, np.exp, U(-3, 3)),
    unary(E.exp2_p, np.exp2, U(-3, 3)),
    unary(E.log_p, np.log, U(0.1, 5)),
    unary(E.log2_p, np.log2, U(0.1, 5)),
    unary(E.log10_p, np.log10, U(0.1, 5)),
    unary(E.log1p_p, np.log1p, U(-0.9, 5)),
    unary(E.expm1_p, np.expm1, U(-3, 3)),
    unary(E.sqrt_p, np.sqrt, U(0.1, 5)),
    unary(E.rsqrt_p, lambda x: 1 / np.sqrt(x), U(0.1, 5)),
    unary(E.cbrt_p, np.cbrt, AWAY(0.2, 5)),
    unary(E.sin_p, np.sin, U(-3, 3)),
    unary(E.cos_p, np.cos, U(-3, 3)),
    unary(E.tan_p, np.tan, U(-1.2, 1.2)),
    unary(E.asin_p, np.arcsin, U(-0.9, 0.9)),
    unary(E.acos_p, np.arccos, U(-0.9, 0.9)),
    unary(E.atan_p, np.arctan, U(-3, 3)),
    unary(E.sinh_p, np.sinh, U(-3, 3)),
    unary(E.cosh_p, np.cosh, U(-3, 3)),
    unary(E.tanh_p, np.tanh, U(-3, 3)),
    unary(E.asinh_p, np.arcsinh, U(-3, 3)),
    unary(E.acosh_p, np.arccosh, U(1.1, 5)),
    unary(E.atanh_p, np.arctanh, U(-0.9, 0.9)),
    unary(E.logistic_p, lambda x: 1 / (1 + np.exp(-x)), U(-5, 5), rtol=1e-15),
    unary(E.erf_p, scipy_ref("erf"), U(-3, 3), rtol=1e-15),
    unary(E.erfc_p, scipy_ref("erfc"), U(-3, 3), rtol=1e-15),
    unary(E.erf_inv_p, scipy_ref("erfinv"), U(-0.95, 0.95), rtol=1e-15),
    unary(E.lgamma_p, scipy_ref("gammaln"), U(0.1, 6), rtol=1e-14, atol=1e-15),
    unary(E.digamma_p, scipy_ref("digamma"), U(0.2, 6), rtol=1e-14, atol=1e-15),
    unary(E.polygamma_p, scipy_ref("polygamma", 1), U(0.2, 6), params={"order": 1},
          rtol=1e-14, name="polygamma-1"),
    unary(E.polygamma_p, scipy_ref("polygamma", 2), U(0.2, 6), params={"order": 2},
          rtol=1e-14, name="polygamma-2"),
    unary(E.is_finite_p, np.isfinite, NONFINITE, ALL, diff=False),
    unary(E.not_p, np.invert, U(-3, 3), INTEGRAL, diff=False),
    *[unary(E.integer_pow_p, lambda x, y=y: np.power(x, y), AWAY(0.3, 2),
            NUMERIC if y >= 0 else FLOATS, params={"y": y}, rtol=1e-15,
            name=f"integer_pow-{y}") for y in (0, 1, 2, 3, -2)],
    *[unary(E.convert_element_type_p, lambda x, d=new: x.astype(d), U(-3, 3), (old,),
            params={"new_dtype": new}, diff=old.kind == new.kind == "f",
            name=f"convert-{old}-{new}")
      for old, new in [(F64, F32), (F32, F64), (F64, I64), (I64, F64), (B, F64), (F64, B),
                       (I64, I32)]],
    binary(E.add_p, np.add, U(-3, 3), U(-3, 3), NUMERIC),
    binary(E.sub_p, np.subtract, U(-3, 3), U(-3, 3), NUMERIC),
    binary(E.mul_p, np.multiply, U(-3, 3), U(-3, 3), NUMERIC),
    binary(E.safe_mul_p, np.multiply, U(-3, 3), U(-3, 3), NUMERIC),
    binary(E.div_p, div_ref, U(-5, 5), AWAY(0.5, 3), NUMERIC),
    binary(E.rem_p, np.fmod, U(-5, 5), AWAY(0.5, 3), NUMERIC),
    binary(E.pow_p, np.power, U(0.2, 3), U(-2, 2)),
    binary(E.max_p, np.maximum, U(-3, 3), U(-3, 3), ALL),
    binary(E.min_p, np.minimum, U(-3, 3), U(-3, 3), ALL),
    binary(E.atan2_p, np.arctan2, AWAY(0.2, 3), AWAY(0.2, 3)),
    binary(E.logaddexp_p, np.logaddexp, AT((0.0, 1.5), U(-3, 3)), AT((0.0, 1.5), U(-3, 3))),
    binary(E.logaddexp2_p, np.logaddexp2, AT((0.0, -1.0), U(-3, 3)), AT((0.0, -1.0), U(-3, 3))),
    binary(E.hypot_p, np.hypot, AT((0.0,), AWAY(0.2, 3)), AWAY(0.2, 3)),
    *[binary(p, ref, TIES, TIES, ALL, diff=False) for p, ref in [
        (E.eq_p, np.equal), (E.ne_p, np.not_equal), (E.lt_p, np.less),
        (E.le_p, np.less_equal), (E.gt_p, np.greater), (E.ge_p, np.greater_equal)]],
    *[binary(p, ref, U(-8, 8), U(-8, 8), INTEGRAL, diff=False) for p, ref in [
        (E.and_p, np.bitwise_and), (E.or_p, np.bitwise_or), (E.xor_p, np.bitwise_xor)]],
    Row(E.select_p, np.where, (PRED, U(-3, 3), U(-3, 3)), ALL),
    unary(E.bessel_i0_p, np.i0, AT((0.0,), U(-12, 12))),  # numpy's ranges |x| <= 8 and beyond
    unary(E.bessel_i1_p, scipy_ref("i1"), AT((0.0,), U(-30, 30)), rtol=1e-14),
    *[unary(E.bessel_i_p, scipy_ref("iv", n), AT((0.0,), U(-30, 30)), params={"order": n},
            rtol=3e-15, atol=1e-300, name=f"bessel_i-{n}") for n in (2, 3)],
    unary(E.sinc_p, np.sinc, AT((0.0, 1e-3), U(-3, 3)), params={"order": 0}, name="sinc-0"),
    unary(E.sinc_p, sinc_d1, AT((0.0,), AWAY(0.2, 3)), params={"order": 1}, rtol=1e-13,
          atol=1e-15, name="sinc-1"),
    unary(E.sinc_p, sinc_d2, AT((0.0,), AWAY(0.2, 3)), params={"order": 2}, rtol=1e-13,
          atol=1e-15, name="sinc-2"),
    unary(E.spacing_p, np.spacing, NONFINITE, diff=False),
    unary(E.frexp_p, lambda x: np.frexp(x)[0], BINADES, out=0, name="frexp-mantissa"),
    unary(E.frexp_p, lambda x: np.frexp(x)[1], NONFINITE, diff=False, out=1,
          name="frexp-exponent"),
    binary(E.nextafter_p, np.nextafter, NONFINITE, TIES, diff=False),
    binary(E.ldexp_p, np.ldexp, U(-3, 3), EXPONENTS),
    binary(E.gcd_p, np.gcd, U(-20, 20), TIES, INTEGERS, diff=False),
    binary(E.lcm_p, np.lcm, U(-20, 20), TIES, INTEGERS, diff=False),
    binary(E.shift_left_p, np.left_shift, U(-20, 20), SHIFTS, INTEGERS, diff=False),
    binary(E.shift_right_p, np.right_shift, U(-20, 20), SHIFTS, INTEGERS, diff=False),
]
ids = [r.id for r in ROWS]

SHAPES = {  # per arity: operand shapes, including 0-d, empty and broadcasting
    1: [((),), ((0,),), ((4,),), ((2, 3),)],
    2: [((), ()), ((0,), ()), ((3,), (3,)), ((2, 3), (3,)), ((), (2, 3)), ((2, 1), (1, 3))],
    3: [((), (), ()), ((2, 3), (2, 3), (2, 3)), ((2, 3), (3,), ()), ((2, 1), (1, 3), (2, 3)),
        ((), (0,), ())],
}
GRAD_SHAPES = {1: ((3,),), 2: ((2, 3), (3,)), 3: ((2, 3), (3,), (2, 1))}


def make_args(row, dtype, shapes, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(d(rng, s, dtype) for d, s in zip(row.domain, shapes))


def apply(row):
    if row.out is not None:
        return lambda *args: bind(row.prim, *args, **row.params)[row.out]
    return lambda *args: bind(row.prim, *args, **row.params)


def assert_matches(out, expected, rtol=0.0, atol=0.0):
    out, expected = np.asarray(out), np.asarray(expected)
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    assert out.shape == expected.shape, (out.shape, expected.shape)
    if rtol == 0 and atol == 0:
        np.testing.assert_array_equal(out, expected)
    else:
        np.testing.assert_allclose(out, expected, rtol=rtol, atol=atol)


def impl_tolerance(row, dtype):
    if dtype == F32 and row.rtol:
        return 1e-6, 1e-6  # a few float32 ulps; scipy also computes in float32
    return row.rtol, row.atol


# --- impl, abstract_eval, staging ------------------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=ids)
def test_impl_matches_reference(row):
    for dtype in row.dtypes:
        for shapes in SHAPES[len(row.domain)]:
            args = make_args(row, dtype, shapes)
            out = apply(row)(*args)
            rtol, atol = impl_tolerance(row, dtype)
            assert_matches(out, row.ref(*args), rtol, atol)


@pytest.mark.parametrize("row", ROWS, ids=ids)
def test_abstract_eval_and_staging_match_impl(row):
    for dtype in row.dtypes:
        for shapes in SHAPES[len(row.domain)][::2]:
            args = make_args(row, dtype, shapes)
            out = apply(row)(*args)
            aval = row.prim.abstract_eval(*[get_aval(a) for a in args], **row.params)
            if row.out is not None:
                aval = aval[row.out]
            assert aval == get_aval(out), (dtype, shapes)
            closed = fd.make_jaxpr(apply(row))(*args)
            check_jaxpr(closed.jaxpr)
            (eqn,) = closed.eqns
            hash(tuple(eqn.params.items()))  # params are hashable
            (staged,) = closed(*args)
            assert_matches(staged, out)


# --- derivatives --------------------------------------------------------------------


def with_floats(row, args):
    """``row``'s operation as a function of its floating operands only, the others
    (select's predicate) closed over; and those floating operands."""
    floats = [i for i, a in enumerate(args) if a.dtype.kind == "f"]

    def f(*float_args):
        full = list(args)
        for i, a in zip(floats, float_args):
            full[i] = a
        return apply(row)(*full)
    return f, tuple(args[i] for i in floats)


DIFF_ROWS = [r for r in ROWS if r.diff]


@pytest.mark.parametrize("row", DIFF_ROWS, ids=[r.id for r in DIFF_ROWS])
def test_grads_order2_both_modes(row):
    dtype, tol = F64, {}
    if row.prim is E.convert_element_type_p:  # float <-> float: float32 rounding in play
        dtype, tol = row.dtypes[0], dict(eps=1e-2, atol=1e-4, rtol=1e-4)
    f, floats = with_floats(row, make_args(row, dtype, GRAD_SHAPES[len(row.domain)], seed=1))
    check_grads(f, floats, order=2, modes=("fwd", "rev"), **tol)


F32_ROWS = [r for r in DIFF_ROWS if F32 in r.dtypes and r.prim is not E.convert_element_type_p]


@pytest.mark.parametrize("row", F32_ROWS, ids=[r.id for r in F32_ROWS])
def test_float32_derivatives_stay_float32(row):
    f, floats = with_floats(row, make_args(row, F32, GRAD_SHAPES[len(row.domain)], seed=2))
    out, t_out = fd.jvp(f, floats, tuple(np.ones_like(a) for a in floats))
    assert np.asarray(out).dtype == np.asarray(t_out).dtype == F32
    out, pullback = fd.vjp(f, *floats)
    for a, ct in zip(floats, pullback(np.ones_like(out))):
        assert np.asarray(ct).dtype == F32 and np.shape(ct) == a.shape


# nextafter has no derivative at all (its jvp raises, as JAX's lack of a rule does)
NONDIFF_ROWS = [r for r in ROWS if not r.diff and any(d.kind == "f" for d in r.dtypes)
                and r.prim is not E.nextafter_p]


@pytest.mark.parametrize("row", NONDIFF_ROWS, ids=[r.id for r in NONDIFF_ROWS])
def test_nondifferentiable_rows_have_zero_tangents(row):
    dtype = next(d for d in row.dtypes if d.kind == "f")
    f, floats = with_floats(row, make_args(row, dtype, GRAD_SHAPES[len(row.domain)], seed=3))
    out, t_out = fd.jvp(f, floats, tuple(np.ones_like(a) for a in floats))
    if np.asarray(out).dtype.kind == "f":
        assert t_out.shape == np.shape(out) and not np.any(t_out)
    else:
        assert np.asarray(t_out).dtype == dtypes.float0


# --- vmap ---------------------------------------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=ids)
def test_vmap_matches_loop(row):
    n = len(row.domain)
    dtype = row.dtypes[0]
    shapes = GRAD_SHAPES[n]
    rng = np.random.default_rng(4)
    batch = 3
    stacked = [np.stack([d(rng, s, dtype) for _ in range(batch)])
               for d, s in zip(row.domain, shapes)]
    singles = make_args(row, dtype, shapes, seed=5)
    f = apply(row)
    for batched in [(i,) for i in range(n)] + [tuple(range(n))]:
        for axis in (0, -1):
            args = [np.moveaxis(stacked[i], 0, axis) if i in batched else singles[i]
                    for i in range(n)]
            in_axes = tuple(axis if i in batched else None for i in range(n))
            out = fd.vmap(f, in_axes=in_axes)(*args)
            loop = np.stack([f(*[stacked[i][k] if i in batched else singles[i]
                                 for i in range(n)]) for k in range(batch)])
            assert_matches(out, loop)


# --- complex rows -----------------------------------------------------------------------
# Every row whose shape rule accepts complex values runs on them too: its float operands
# become complex ones of magnitude 0.3 to 0.9, at least 0.08 from both axes (clear of
# every branch cut of numpy's functions), checked against the same reference, under jit,
# to order 2 in both modes and under vmap. Rows refusing complex values must raise.

C128 = np.dtype(np.complex128)


def COMPLEX(rng, shape, dtype):
    angle = (rng.integers(0, 4, shape) + 0.5) * (np.pi / 2) + rng.uniform(-0.5, 0.5, shape)
    return rng.uniform(0.3, 0.9, shape) * np.exp(1j * angle)


def complex_args(row, shapes, seed=0):
    """The row's operands with its float ones complex (other operands as they are)."""
    args = make_args(row, F64, shapes, seed)
    rng = np.random.default_rng(seed + 100)
    return tuple(COMPLEX(rng, np.shape(a), C128) if a.dtype.kind == "f" else a for a in args)


def takes_complex(row):
    if row.prim is E.convert_element_type_p or F64 not in row.dtypes:
        return False
    args = complex_args(row, GRAD_SHAPES[len(row.domain)])
    try:
        row.prim.abstract_eval(*[get_aval(a) for a in args], **row.params)
    except DTypeError:
        return False
    return True


COMPLEX_ROWS = [r for r in ROWS if takes_complex(r)]


def test_the_rows_numpy_defines_on_complex_values_take_them():
    names = {r.id for r in COMPLEX_ROWS}
    assert {"exp", "log", "sqrt", "rsqrt", "sin", "acosh", "atanh", "pow", "div",
            "integer_pow--2", "sinc-2", "select", "max", "erf"} <= names
    assert not names & {"cbrt", "floor", "atan2", "hypot", "logaddexp", "rem",
                        "lgamma", "bessel_i0", "logistic"}


@pytest.mark.parametrize("row", COMPLEX_ROWS, ids=[r.id for r in COMPLEX_ROWS])
def test_complex_rows(row):
    args = complex_args(row, GRAD_SHAPES[len(row.domain)], seed=6)
    f = apply(row)
    out = f(*args)
    assert_matches(out, row.ref(*args), rtol=1e-12, atol=1e-14)
    assert_matches(fd.jit(f)(*args), out, rtol=1e-14, atol=1e-15)
    if row.diff:
        g, values = with_complex(row, args)
        check_grads(g, values, order=2, modes=("fwd", "rev"))
    n = len(row.domain)
    in_axes = tuple(0 if a.dtype.kind == "c" else None for a in args)  # batch the complex
    batch = [tuple(b if ax == 0 else a for a, b, ax in
                   zip(args, complex_args(row, GRAD_SHAPES[n], seed=7 + k), in_axes))
             for k in range(2)]
    stacked = [np.stack(parts) if ax == 0 else a
               for parts, ax, a in zip(zip(*batch), in_axes, args)]
    assert_matches(fd.vmap(f, in_axes=in_axes)(*stacked), np.stack([f(*a) for a in batch]),
                   rtol=1e-14, atol=1e-15)


def with_complex(row, args):
    """``row``'s operation as a function of its complex operands only."""
    values = [i for i, a in enumerate(args) if a.dtype.kind == "c"]

    def g(*complex_args):
        full = list(args)
        for i, a in zip(values, complex_args):
            full[i] = a
        return apply(row)(*full)
    return g, tuple(args[i] for i in values)


# --- semantics of particular primitives ------------------------------------------------


def test_kinks_follow_jax():
    assert fd.grad(E.abs)(0.0) == 0.0
    assert fd.grad(E.max, argnums=(0, 1))(1.0, 1.0) == (0.5, 0.5)
    assert fd.grad(E.min, argnums=(0, 1))(2.0, 2.0) == (0.5, 0.5)
    assert fd.grad(E.max, argnums=(0, 1))(3.0, 1.0) == (1.0, 0.0)
    assert fd.grad(E.min, argnums=(0, 1))(3.0, 1.0) == (0.0, 1.0)
    assert fd.grad(lambda x: E.max(x, 0.0))(0.0) == 0.5  # relu
    with np.errstate(divide="ignore"):
        assert fd.grad(E.sqrt)(0.0) == np.inf


def test_pow_derivatives_at_zero_base_are_finite():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 2.0, 0.5])
    dx, dy = _pow_grads(x, y)
    np.testing.assert_array_equal(dy[:2], [0.0, 0.0])
    np.testing.assert_allclose(dy[2], np.log(2.0) * 2.0 ** 0.5)
    np.testing.assert_array_equal(dx[:2], [0.0, 0.0])  # y == 0: 0, not 0 * inf
    for tangents in [(np.zeros(3), np.ones(3)), (np.ones(3), np.zeros(3))]:
        out, t = fd.jvp(E.pow, (x, y), tangents)
        assert np.all(np.isfinite(t)), tangents
    check_grads(E.pow, (np.array([0.5, 2.0]), np.array([0.0, 3.0])), order=2)


def _pow_grads(x, y):
    out, pullback = fd.vjp(E.pow, x, y)
    return pullback(np.ones_like(out))


def test_select_transpose_gives_exact_zeros_to_the_unselected_side():
    pred = np.array([True, False, False])
    ct = np.array([1.0, np.inf, np.nan])
    aval = get_aval(np.zeros(3))
    _, ct_true, ct_false = E.select_p.transpose(ct, pred, UndefinedPrimal(aval),
                                               UndefinedPrimal(aval))
    np.testing.assert_array_equal(ct_true, [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(ct_false, [0.0, np.inf, np.nan])
    # broadcast operands receive summed cotangents
    _, ct_scalar, _ = E.select_p.transpose(np.ones((2, 3)), np.array([True, False, True]),
                                           UndefinedPrimal(get_aval(0.0)), np.zeros(3))
    assert ct_scalar == 4.0


def test_where_guards_sqrt_at_zero():
    def guarded(x):  # where(x > 0, sqrt(x), 0)
        return E.select(E.gt(x, 0.0), E.sqrt(x), 0.0)

    def double_where(x):  # the NaN-free idiom in reverse mode too
        safe = E.select(E.gt(x, 0.0), x, 1.0)
        return E.select(E.gt(x, 0.0), E.sqrt(safe), 0.0)

    with np.errstate(divide="ignore", invalid="ignore"):
        assert fd.jvp(guarded, (0.0,), (1.0,))[1] == 0.0
        assert fd.grad(guarded)(4.0) == 0.25
    assert fd.grad(double_where)(0.0) == 0.0
    assert fd.grad(fd.grad(double_where))(0.0) == 0.0
    assert fd.grad(double_where)(4.0) == 0.25


def test_select_with_symbolic_zero_tangent_broadcasts():
    f = lambda x, y: E.select(np.array([True, False, True]), x, y)
    out, t = fd.jvp(f, (1.0, np.arange(3.0)), (2.0, np.zeros(3)))
    np.testing.assert_array_equal(t, [2.0, 0.0, 2.0])
    g = lambda y: E.select(np.array([True, False]), 5.0, y)
    out, t = fd.jvp(g, (np.array([1.0, 2.0]),), (np.array([3.0, 4.0]),))
    np.testing.assert_array_equal(t, [0.0, 4.0])


def test_integer_semantics():
    x, y = np.array([-7, 7, -7, 7, 6]), np.array([2, 2, -2, -2, 3])
    np.testing.assert_array_equal(E.div(x, y), [-3, 3, 3, -3, 2])  # toward zero
    np.testing.assert_array_equal(E.rem(x, y), [-1, 1, -1, 1, 0])  # sign of x
    np.testing.assert_array_equal(E.rem(np.array([-7.5, 7.5]), 2.0), [-1.5, 1.5])
    np.testing.assert_array_equal(E.round(np.array([0.5, 1.5, 2.5, -0.5, -2.5])),
                                  [0.0, 2.0, 2.0, -0.0, -2.0])
    np.testing.assert_array_equal(E.not_(np.array([True, False])), [False, True])
    np.testing.assert_array_equal(E.not_(np.array([0, 5])), [-1, -6])
    np.testing.assert_array_equal(E.is_finite(np.array([1, 2])), [True, True])
    assert E.integer_pow(np.int64(3), y=3) == 27


def test_rem_gradient_matches_numpy_floor_mod_identity():
    check_grads(E.rem, (np.array([5.3, -5.3, 2.2]), np.array([2.0, 2.0, -0.7])), order=2)
    _, pullback = fd.vjp(E.rem, 5.3, 2.0)
    np.testing.assert_allclose(pullback(1.0), (1.0, -2.0))


def test_logistic_is_stable_at_the_extremes():
    x = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = E.logistic(x)
        g = fd.vjp(E.logistic, x)[1](np.ones(5))[0]
    np.testing.assert_allclose(y, [0.0, np.exp(-40.0) / (1 + np.exp(-40.0)), 0.5, 1.0, 1.0],
                               rtol=1e-15)
    assert y[1] > 0
    np.testing.assert_allclose(g, y * (1 - y), rtol=1e-15)
    assert E.logistic(np.float32(-100.0)).dtype == F32


def test_convert_element_type_derivatives():
    x = np.array([1.5, -2.5])
    out, t = fd.jvp(lambda x: E.convert_element_type(x, np.float32), (x,), (np.ones(2),))
    assert t.dtype == F32 and np.all(t == 1)
    out, t = fd.jvp(lambda x: E.convert_element_type(x, np.int64), (x,), (np.ones(2),))
    np.testing.assert_array_equal(out, [1, -2])
    assert t.dtype == dtypes.float0
    # int -> float carries no tangent, and round trips through ints have zero gradient
    f = lambda x: E.convert_element_type(E.convert_element_type(x, np.int64), np.float64)
    np.testing.assert_array_equal(fd.grad(lambda x: E.mul(f(x), x))(2.7), 2.0)
    # float64 -> float32 transposes back to float64
    ct = fd.vjp(lambda x: E.convert_element_type(x, np.float32), x)[1](np.ones(2, F32))[0]
    assert ct.dtype == F64
    f_t = fd.linear_transpose(lambda x: E.convert_element_type(x, np.float32), x)
    assert f_t(np.array([2.0, 3.0], F32))[0].dtype == F64
    assert E.convert_element_type(x, np.float64) is x
    (eqn,) = fd.make_jaxpr(lambda x: E.convert_element_type(x, "float32"))(x).eqns
    assert eqn.params["new_dtype"] == F32 and isinstance(eqn.params["new_dtype"], np.dtype)


def test_div_is_linear_in_its_numerator():
    f_t = fd.linear_transpose(lambda x: E.div(x, 4.0), 1.0)
    assert f_t(2.0) == (0.5,)
    f_t = fd.linear_transpose(lambda x: E.div(x, np.array([1.0, 2.0])), np.zeros((3, 2)))
    np.testing.assert_array_equal(f_t(np.ones((3, 2)))[0], np.tile([1.0, 0.5], (3, 1)))


def test_iota():
    np.testing.assert_array_equal(E.iota(np.int32, (2, 3), 0), [[0, 0, 0], [1, 1, 1]])
    assert E.iota(np.float32, (4,)).dtype == F32
    closed = fd.make_jaxpr(lambda: E.iota(np.int64, (2, 2), 1))()
    check_jaxpr(closed.jaxpr)
    np.testing.assert_array_equal(closed()[0], [[0, 1], [0, 1]])
    out = fd.vmap(lambda x: E.add(x, E.iota(np.float64, (3,))))(np.ones((2, 3)))
    np.testing.assert_array_equal(out, [[1, 2, 3], [1, 2, 3]])
    assert E.iota_p.batch([], [], dtype=I64, shape=(2,), dimension=0)[1] is None
    assert E.iota_p.abstract_eval(dtype=I64, shape=(2, 5), dimension=1) == ShapedArray((2, 5), I64)


def test_higher_order_special_function_chain():
    # lgamma' = digamma, digamma' = polygamma(1), polygamma(n)' = polygamma(n + 1)
    sps = pytest.importorskip("scipy.special")
    x = 2.7
    g = E.lgamma
    for n in range(4):
        g = fd.grad(g)
        want = sps.digamma(x) if n == 0 else sps.polygamma(n, x)
        np.testing.assert_allclose(g(x), want, rtol=1e-13)
    np.testing.assert_allclose(fd.grad(E.erf_inv)(0.3), np.sqrt(np.pi) / 2
                               * np.exp(sps.erfinv(0.3) ** 2), rtol=1e-14)


def test_perturbations_are_not_confused():
    # grad(x * grad(x + y)) with ops of this module: the inner derivative is 1
    f = lambda x: E.mul(x, fd.grad(lambda y: E.sin(E.add(x, y)))(0.0))
    np.testing.assert_allclose(fd.grad(f)(1.0), np.cos(1.0) - np.sin(1.0), rtol=1e-14)


# --- special functions against scipy ---------------------------------------------------


def _rel_err(got, want, floor=1e-300):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf])
    ok = np.isfinite(want) & (np.abs(want) > floor)
    return np.max(np.abs(got[ok] - want[ok]) / np.abs(want[ok]), initial=0.0)


@pytest.fixture(scope="module")
def sps():
    return pytest.importorskip("scipy.special")


def test_erf_and_erfc_match_scipy(sps):
    rng = np.random.default_rng(6)
    x = np.concatenate([rng.uniform(-1, 1, 2000), rng.uniform(-7, 7, 2000),
                        rng.uniform(-27, 27, 500), np.logspace(-300, 1.4, 500),
                        -np.logspace(-300, 1.4, 500),
                        [0.0, -0.0, 0.46875, -0.46875, 4.0, -4.0, np.inf, -np.inf, np.nan]])
    assert _rel_err(special_math.erf(x), sps.erf(x)) < 2e-15
    assert _rel_err(special_math.erfc(x), sps.erfc(x)) < 1e-13  # scipy's own tail error
    tail = np.array([5.0, 10.0, 20.0, 26.5, -3.0])
    exact = [1.537459794428035e-12, 2.088487583762545e-45, 5.395865611607901e-176,
             2.2109076642637343e-307, 1.9999779095030015]  # mpmath, 40 digits
    np.testing.assert_allclose(special_math.erfc(tail), exact, rtol=1e-15)
    assert special_math.erfc(np.array(30.0)) == 0.0 and special_math.erfc(-30.0) == 2.0


def test_erf_inv_matches_scipy(sps):
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-1, 1, 2000), 1 - np.logspace(-16, -0.3, 1000),
                        -1 + np.logspace(-16, -0.3, 1000), np.logspace(-300, -1, 200),
                        [0.0, 1.0, -1.0, 1.5, -2.0, np.nan, 1 - 2.0 ** -53]])
    assert _rel_err(special_math.erf_inv(x), sps.erfinv(x)) < 4e-15
    some = np.array([1e-10, 0.5, 0.9, 0.999999, -0.999999999999])
    exact = [8.862269254527581e-11, 0.4769362762044699, 1.1630871536766743,
             3.458910737275499, -5.042031898572696]  # mpmath, 40 digits
    np.testing.assert_allclose(special_math.erf_inv(some), exact, rtol=1e-15)
    inner = x[np.abs(x) < 0.9]
    assert _rel_err(special_math.erf(special_math.erf_inv(inner)), inner) < 4e-16 * 8


def test_lgamma_matches_scipy(sps):
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.uniform(0, 10, 2000), np.logspace(-300, 300, 500),
                        [0.5, 1.5, 2.5, 7.5, 1.0, 2.0, 0.0, -0.0, np.inf, np.nan]])
    assert _rel_err(special_math.lgamma(x), sps.gammaln(x)) < 5e-13  # scipy loses digits at 1, 2
    near_roots = np.array([1 - 1e-7, 1 + 1e-9, 2 - 1e-5, 2 + 1e-8])
    exact = np.array([5.772157468444193e-08, -5.772157118381039e-10,
                      -4.227811104241674e-06, 4.227843357536779e-09])  # mpmath, 40 digits
    np.testing.assert_allclose(special_math.lgamma(near_roots), exact, rtol=1e-14)
    neg = np.concatenate([rng.uniform(-10, 0, 2000), -np.logspace(-5, 5, 200)])
    np.testing.assert_allclose(special_math.lgamma(neg), sps.gammaln(neg), rtol=1e-13, atol=1e-13)
    assert np.all(np.isinf(special_math.lgamma(np.array([-1.0, -2.0, -1e20]))))


def test_digamma_matches_scipy(sps):
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.uniform(0, 10, 2000), np.logspace(-300, 300, 500),
                        [1.0, 1.4616321449683623, 0.0, -0.0, np.inf, np.nan]])
    assert _rel_err(special_math.digamma(x), sps.digamma(x)) < 5e-15
    neg = np.concatenate([rng.uniform(-10, 0, 2000), [-1.0, -2.0, -np.inf]])
    np.testing.assert_allclose(special_math.digamma(neg), sps.digamma(neg), rtol=1e-11, atol=1e-13)
    near = np.array([1.4616321449683623, 1.46163214, 1.5, -2.999889621144874])
    exact = [-9.241265521729427e-17, -4.807746276832806e-09, 0.03648997397857652,
             -9058.44976741675]  # mpmath, 40 digits: relative accuracy at the root
    np.testing.assert_allclose(special_math.digamma(near), exact, rtol=2e-15)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_polygamma_matches_scipy(sps, n):
    rng = np.random.default_rng(10 + n)
    x = np.concatenate([rng.uniform(0, 12, 1000), np.logspace(-100, 100, 300),
                        [1.0, 0.0, np.inf, np.nan]])
    with np.errstate(over="ignore"):  # scipy overflows to inf at tiny x, as we do
        want = sps.polygamma(n, x)
    assert _rel_err(special_math.polygamma(n, x), want) < 4e-15
    neg = np.concatenate([rng.uniform(-10, 0, 500), rng.uniform(-60, -20, 500)])
    with np.errstate(over="ignore"):  # scipy's n! * zeta overflows near poles
        want = sps.polygamma(n, neg)
    np.testing.assert_allclose(special_math.polygamma(n, neg), want, rtol=1e-11)
    with np.errstate(over="ignore"):
        want = sps.polygamma(n, np.array([-1.0, -3.0]))
    assert _rel_err(special_math.polygamma(n, np.array([-1.0, -3.0])), want) == 0.0


def test_bessel_i1_matches_scipy(sps):
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-30, 30, 4000), np.linspace(20.0, 22.0, 801),
                        np.logspace(-300, 2.85, 1000), -np.logspace(-300, 2.85, 1000)])
    assert _rel_err(special_math.bessel_i1(x), sps.i1(x)) < 3e-15
    # beyond x = 709.8, where e**x and scipy overflow, I1 is still finite (mpmath, 40 digits)
    np.testing.assert_allclose(special_math.bessel_i1(np.array([713.0, -713.0])),
                               [6.700424559186402e307, -6.700424559186402e307], rtol=2e-15)
    edge = special_math.bessel_i1(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 714.0]))
    np.testing.assert_array_equal(edge, [0.0, -0.0, np.inf, -np.inf, np.nan, np.inf])
    assert np.signbit(edge[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        special_math.bessel_i1(np.array([np.inf, np.nan, 800.0]))


def test_bessel_derivatives():
    # I0' = I1, I1' = I0 - I1 / x with the limit 1/2 at 0, I1'' (0) = 0 (I1 is odd)
    x = np.array([-25.0, -3.0, -0.5, 0.2, 2.0, 9.0, 30.0])
    np.testing.assert_array_equal(fd.vmap(fd.grad(E.bessel_i0))(x), E.bessel_i1(x))
    want = E.bessel_i0(x) - E.bessel_i1(x) / x
    np.testing.assert_allclose(fd.vmap(fd.grad(E.bessel_i1))(x), want, rtol=1e-15)
    with warnings.catch_warnings():  # no 0 / 0 is formed at x = 0, even unselected
        warnings.simplefilter("error")
        assert fd.grad(E.bessel_i1)(0.0) == 0.5
        assert fd.grad(fd.grad(E.bessel_i1))(0.0) == 0.0
        assert fd.grad(fd.grad(E.bessel_i0))(0.0) == 0.5
        assert fd.jit(fd.grad(fd.grad(E.bessel_i1)))(0.0) == 0.0
    check_grads(E.bessel_i1, (np.array([-4.0, 1e-3, 0.7, 22.0]),), order=2)
    h = 1e-6  # the derivative near 0 is continuous across the special case at 0
    np.testing.assert_allclose(fd.grad(E.bessel_i1)(h), 0.5, rtol=1e-11)


def test_frexp_mantissa_derivative_is_an_exact_power_of_two():
    tiny64, tiny32 = np.finfo(np.float64).tiny, np.finfo(np.float32).tiny
    for x in [np.array([3.0, -0.3, 1e300, 1.7e308, tiny64, tiny64 / 8, 5e-324, 0.0, -0.0]),
              np.array([3.0, -0.3, 1e30, tiny32, tiny32 / 8, 0.0], np.float32)]:
        _, exponent = np.frexp(x)
        with np.errstate(over="ignore"):
            want = np.ldexp(np.ones_like(x), -exponent)  # inf where 2**-e overflows
        _, t = fd.jvp(lambda v: E.frexp(v)[0], (x,), (np.ones_like(x),))
        assert t.dtype == x.dtype
        np.testing.assert_array_equal(t, want)
        ct = fd.vjp(lambda v: E.frexp(v)[0], x)[1](np.ones_like(x))[0]
        np.testing.assert_array_equal(ct, want)
    assert fd.grad(fd.grad(lambda v: E.frexp(v)[0]))(5.0) == 0.0
    # a zero tangent stays zero where the derivative overflows
    _, t = fd.jvp(lambda v: E.frexp(v)[0], (np.array([5e-324, 1.0]),), (np.array([0.0, 1.0]),))
    np.testing.assert_array_equal(t, [0.0, 0.5])
    # the exponent carries no tangent
    _, t = fd.jvp(lambda v: E.frexp(v)[1], (np.array([3.0]),), (np.ones(1),))
    assert t.dtype == dtypes.float0


def test_nextafter_is_not_differentiable():
    one, two = np.array([1.0, 2.0]), np.array([2.0, 1.0])
    for f in [lambda: fd.grad(lambda x: E.nextafter(x, two).sum())(one),
              lambda: fd.grad(lambda y: E.nextafter(one, y).sum())(two),
              lambda: fd.jvp(lambda x: E.nextafter(x, two), (one,), (one,)),
              lambda: fd.jit(fd.grad(lambda x: E.nextafter(x, two).sum()))(one)]:
        with pytest.raises(DifferentiationError,
                           match="nextafter has no derivative.*stop_gradient"):
            f()
    # constants and stopped gradients pass through transforms
    g = fd.grad(lambda x: (E.nextafter(fd.stop_gradient(x), two) * x).sum())(one)
    np.testing.assert_array_equal(g, np.nextafter(one, two))
    out, t = fd.jvp(lambda x: E.nextafter(one, two) * x, (one,), (np.ones(2),))
    np.testing.assert_array_equal(t, np.nextafter(one, two))


def test_ldexp_rounds_once_and_is_linear_in_x():
    x = np.array([0.75, 0.5, 3.0, 1.0, -0.6, 1.5])
    e = np.array([1024, 1024, -1075, -1074, -1070, 2000], np.int32)
    with np.errstate(over="ignore"):
        assert_matches(E.ldexp(x, e), np.ldexp(x, e))  # 2**1024 alone would overflow
        assert_matches(fd.jit(E.ldexp)(x, e), np.ldexp(x, e))
    x32 = np.array([1.0, 0.75, 1.5], np.float32)
    e32 = np.array([127, -149, -149], np.int32)
    assert_matches(E.ldexp(x32, e32), np.ldexp(x32, e32))
    f_t = fd.linear_transpose(lambda v: E.ldexp(v, np.array([[1], [-1]], np.int32)), np.ones(3))
    np.testing.assert_array_equal(f_t(np.ones((2, 3)))[0], np.full(3, 2.5))
    _, t = fd.jvp(lambda v: E.ldexp(v, np.int32(3)), (np.array([1.5, -2.0]),), (np.ones(2),))
    np.testing.assert_array_equal(t, [8.0, 8.0])


def test_integer_primitives_follow_numpy_at_the_edges():
    i8 = np.array([-128, -128, 127, -7, 0, 5], np.int8)
    j8 = np.array([0, -128, -1, 0, 0, 10], np.int8)
    for op, ref in [(E.gcd, np.gcd), (E.lcm, np.lcm), (E.shift_left, np.left_shift),
                    (E.shift_right, np.right_shift)]:
        for x, y in [(i8, j8), (i8.astype(np.uint8), j8.astype(np.uint8)),
                     (i8.astype(np.int64), np.array([64, 63, -1, 100, 0, 3]))]:
            assert_matches(op(x, y), ref(x, y))
            assert_matches(fd.jit(op)(x, y), ref(x, y))


def test_special_functions_keep_float32():
    x32 = np.linspace(0.1, 0.9, 5, dtype=F32)
    for f in (special_math.erf, special_math.erfc, special_math.erf_inv, special_math.lgamma,
              special_math.digamma, lambda x: special_math.polygamma(2, x)):
        out = f(x32)
        assert out.dtype == F32
        np.testing.assert_allclose(out, f(x32.astype(F64)), rtol=1e-6)
    assert special_math.erf(np.arange(3)).dtype == F64
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        special_math.lgamma(np.array([0.0, -1.0, np.inf, np.nan]))
        special_math.erf_inv(np.array([1.0, 2.0, -1.0]))


# --- errors -------------------------------------------------------------------------

f3, f4, f32_3, i3 = np.zeros(3), np.zeros(4), np.zeros(3, F32), np.arange(3)
BINARY_PRIMS = [r.prim for r in ROWS if len(r.domain) == 2]
ERRORS = [
    ("sin-int", E.sin, (i3,), DTypeError, ["sin", "i64[3]", "convert_element_type"]),
    ("erf-int", E.erf, (i3,), DTypeError, ["erf", "floating"]),
    ("pow-int", E.pow, (i3, i3), DTypeError, ["pow"]),
    ("neg-bool", E.neg, (np.array([True]),), DTypeError, ["neg", "bool"]),
    ("and-float", E.and_, (f3, f3), DTypeError, ["and", "f64[3]"]),
    ("select-pred", E.select, (f3, f3, f3), DTypeError, ["select", "boolean predicate"]),
    ("select-dtypes", E.select, (np.ones(3, bool), f3, f32_3), DTypeError, ["select", "float32"]),
    ("select-shapes", E.select, (np.ones(4, bool), f3, f3), ShapeError, ["select", "(4,)", "(3,)"]),
    ("integer_pow-float-y", lambda x: E.integer_pow(x, y=2.0), (f3,), InvalidArgumentError,
     ["integer_pow", "2.0"]),
    ("integer_pow-neg-int", lambda x: E.integer_pow(x, y=-1), (i3,), InvalidArgumentError,
     ["integer_pow", "negative"]),
    ("polygamma-order", lambda x: E.polygamma(x, order=-1), (f3,), InvalidArgumentError,
     ["polygamma", "-1"]),
    ("convert-complex-to-real", lambda x: E.convert_element_type(
        E.convert_element_type(x, np.complex128), np.float64), (f3,), DTypeError,
     ["c128", "imaginary", "real"]),
    ("gcd-float", E.gcd, (f3, f3), DTypeError, ["gcd", "integer", "f64[3]"]),
    ("shift_left-bool", E.shift_left, (np.ones(3, bool),) * 2, DTypeError,
     ["shift_left", "integer", "bool[3]", "convert_element_type"]),
    ("frexp-int", E.frexp, (i3,), DTypeError, ["frexp", "floating"]),
    ("nextafter-int", E.nextafter, (i3, i3), DTypeError, ["nextafter", "floating"]),
    ("spacing-int", E.spacing, (i3,), DTypeError, ["spacing", "floating"]),
    ("ldexp-float-exponent", E.ldexp, (f3, f3), DTypeError, ["ldexp", "int32 or int64", "float64"]),
    ("ldexp-int-x", E.ldexp, (i3, i3), DTypeError, ["ldexp", "floating x", "int64"]),
    ("bessel_i0-int", E.bessel_i0, (i3,), DTypeError, ["bessel_i0", "floating"]),
]


@pytest.mark.parametrize("name,f,args,exc,words", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_input_raises_funcdiff_error(name, f, args, exc, words):
    with pytest.raises(exc) as info:
        fd.make_jaxpr(f)(*args)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


@pytest.mark.parametrize("prim", BINARY_PRIMS, ids=[p.name for p in BINARY_PRIMS])
def test_binary_errors_name_both_operands(prim):
    kind = next(r for r in ROWS if r.prim is prim).dtypes[0]
    x, y = np.zeros(3, kind), np.zeros(4, kind)
    with pytest.raises(ShapeError) as info:
        prim.abstract_eval(get_aval(x), get_aval(y))
    assert all(s in str(info.value) for s in (prim.name, "(3,)", "(4,)"))
    with pytest.raises(ShapeError):
        fd.make_jaxpr(lambda x, y: bind(prim, x, y))(x, y)
    other = {F64: F32, F32: F64, I64: I32, I32: I64, B: I64}[kind]
    with pytest.raises(DTypeError) as info:
        prim.abstract_eval(get_aval(x), get_aval(x.astype(other)))
    assert prim.name in str(info.value) and other.name in str(info.value)


def test_iota_errors():
    with pytest.raises(ShapeError, match="dimension=2"):
        E.iota(np.int64, (2, 3), 2)
    with pytest.raises(DTypeError, match="iota"):
        fd.make_jaxpr(lambda: E.iota(np.bool_, (2,)))()


# --- coverage, costs, docs ----------------------------------------------------------------

MODULE_PRIMS = [v for v in vars(E).values() if isinstance(v, Primitive)]


def test_every_primitive_has_a_row_and_every_slot():
    assert {r.prim for r in ROWS} | {E.iota_p} == set(MODULE_PRIMS)
    registry = fd.core.all_primitives()
    assert MODULE_PRIMS and all(registry[p.name] is p for p in MODULE_PRIMS)
    for p in MODULE_PRIMS:
        for slot in ("impl", "abstract_eval", "batch", "cost"):
            assert getattr(p, slot) is not None, (p, slot)
        assert (p.jvp is not None) != p.nondifferentiable, p
        if p.linear:
            assert p.transpose is not None, p
        elif p.transpose is not None:
            assert p.name in ("mul", "safe_mul", "div"), p  # linear in one operand at a time


def test_every_operation_is_documented_and_named():
    for name, v in vars(E).items():
        if isinstance(v, Primitive):
            op = getattr(E, name[:-2], None) or getattr(E, name[:-2] + "_")
            assert callable(op) and op.__doc__, name


def test_costs():
    for row in ROWS:
        avals = [get_aval(a) for a in make_args(row, row.dtypes[0], SHAPES[len(row.domain)][-1])]
        c = row.prim.cost(*avals, **row.params)
        assert set(c) == {"flops", "bytes"} and all(type(v) is int and v >= 0 for v in c.values())
    f64 = get_aval(np.zeros((10, 10)))
    assert E.exp_p.cost(f64) == {"flops": 1000, "bytes": 1600}
    assert E.add_p.cost(f64, get_aval(np.zeros(10))) == {"flops": 100, "bytes": 800 + 80 + 800}
    assert E.iota_p.cost(dtype=I32, shape=(5, 2), dimension=0) == {"flops": 0, "bytes": 40}


def test_docstring_examples():
    result = doctest.testmod(E, extraglobs={"np": np}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# Smooth functions whose stable implementations pass through a kink (max, abs, a
# select) at ties and zeros: their derivatives there come from their own rules.
KINK_POINTS = [  # (function, point, derivative order, closed form)
    (lambda x: E.logaddexp(x, np.float64(0.0)), 0.0, 2, 0.25),
    (lambda x: E.logaddexp(x, np.float64(0.0)), 0.0, 3, 0.0),
    (lambda x: E.logaddexp(x, np.float64(0.0)), 1.0, 2, np.exp(1) / (1 + np.exp(1)) ** 2),
    (lambda x: E.logaddexp2(x, np.float64(0.0)), 0.0, 2, 0.25 * np.log(2)),
    (lambda x: E.hypot(x, np.float64(1.5)), 0.0, 2, 2 / 3),
    (lambda x: E.hypot(x, np.float64(1.5)), 0.0, 3, 0.0),
    (lambda x: E.hypot(np.float64(1.5), x), 0.0, 2, 2 / 3),
]


@pytest.mark.parametrize("f,x,order,expected", KINK_POINTS)
def test_derivatives_at_the_kinks_of_stable_implementations(f, x, order, expected):
    d = f
    for _ in range(order):
        d = fd.grad(d)
    np.testing.assert_allclose(d(x), expected, rtol=1e-12, atol=1e-15)
    h = fd.hessian(lambda v: E.logaddexp(v[0], v[1]))(np.array([0.7, 0.7]))
    np.testing.assert_allclose(h, [[0.25, -0.25], [-0.25, 0.25]], rtol=1e-12)


def test_logaddexp_at_infinities():
    assert fd.grad(lambda x: E.logaddexp(x, np.float64(np.inf)))(1.0) == 0.0
    assert fd.grad(lambda x: E.logaddexp(x, np.float64(-np.inf)))(1.0) == 1.0
    assert fd.grad(lambda x: E.hypot(x, np.float64(0.0)))(0.0) == 0.0  # the origin: 0
