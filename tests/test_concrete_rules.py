"""Derivative rules run on numpy scalars as compiled programs (compiler/concrete.py).

The tape's factor of a unary card and an OutputFactor's value take the
compiled program on numpy scalars; these tests check that it gives what the
rule gives through bind, bit for bit and of the same type, for every card,
and that the rule itself runs wherever the shortcut would be wrong: float
checks on, a transform staging, a rule that looks at values.
"""
import math

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff import core
from funcdiff.compiler.compile import compile_jaxpr
from funcdiff.compiler.concrete import on_concrete, unary_factor
from funcdiff.interpreters import tape
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.interpreters.tape_nodes import OutputFactor
from funcdiff.primitives import elementwise as ew

SCALARS = [np.float64, np.float32, np.float16]
POINTS = [0.3, 0.75, -0.4, 1.6, 0.0]


def _unary_cards():
    """(primitive, factor) for every card whose tape factor is a unary_factor."""
    return [(p, p.vjp_factor) for _, p in sorted(core.registry.items())
            if getattr(p.vjp_factor, "programs", None) is not None]


def _output_factor_cards():
    out = []
    for _, p in sorted(core.registry.items()):
        if p.vjp_factor is None or getattr(p.vjp_factor, "programs", None) is not None:
            continue
        try:
            d = p.vjp_factor(0, np.float64(0.5), np.float64(0.5))
        except Exception:  # noqa: BLE001  a binary card's factor
            continue
        if type(d) is OutputFactor:
            out.append(p)
    return out


def _bits(v):
    return type(v), np.asarray(v).tobytes()


def _samples(prim, scalar):
    """(x, y) pairs of ``scalar`` type the primitive accepts, y = impl(x)."""
    pairs = []
    for point in POINTS:
        x = scalar(point)
        try:
            prim.abstract_eval(core.get_aval(x))
            with np.errstate(all="ignore"):
                y = prim.impl(x)
        except Exception:  # noqa: BLE001  dtypes the card refuses
            return []
        if type(y) is scalar:
            pairs.append((x, y))
    return pairs


def test_the_unary_and_output_factor_cards_are_covered():
    names = {p.name for p, _ in _unary_cards()}
    assert {"sin", "cos", "exp", "sinh", "cosh", "abs", "atan"} <= names
    assert {"tanh", "logistic"} <= {p.name for p in _output_factor_cards()}


@pytest.mark.parametrize("scalar", SCALARS, ids=lambda t: t.__name__)
def test_every_unary_factor_gives_the_rules_value_bit_for_bit(scalar):
    compiled = 0
    for prim, factor in _unary_cards():
        for x, y in _samples(prim, scalar):
            with np.errstate(all="ignore"):
                fast = factor(0, y, x)
                slow = factor.programs.rule(x, y)
            assert _bits(fast) == _bits(slow), (prim.name, x)
        compiled += factor.programs.by_key.get(scalar) is not None
    assert compiled >= 8  # the shortcut was taken, not only the rule


@pytest.mark.parametrize("scalar", SCALARS, ids=lambda t: t.__name__)
def test_every_output_factor_gives_the_rules_value_bit_for_bit(scalar):
    compiled = 0
    for prim in _output_factor_cards():
        for x, y in _samples(prim, scalar):
            factor = prim.vjp_factor(0, y, x)
            with np.errstate(all="ignore"):
                fast = factor.value()
                slow = factor.output_deriv.programs.rule(y)
            assert _bits(fast) == _bits(slow), (prim.name, y)
        compiled += factor.output_deriv.programs.by_key.get(scalar) is not None
    assert compiled >= 3


def test_scalar_gradients_match_linearize_exactly_and_keep_their_dtype():
    def f(x):
        for _ in range(3):
            x = fnp.tanh(fnp.sin(x) * 1.5) + fnp.cos(x) ** 2 + fnp.exp(-x) * fnp.log1p(x * x)
        return x
    for scalar in (np.float64, np.float32):
        x = scalar(0.7)
        g = fd.grad(f)(x)
        with tape.disabled():
            expected = fd.grad(f)(x)
        assert type(g) is scalar
        assert _bits(g) == _bits(expected)


def test_scalar_gradient_matches_central_differences():
    def f(x):
        return fnp.tanh(fnp.sin(x)) * fnp.cos(x) + fnp.exp(fnp.sinh(x))
    x, h = 0.45, 1e-6
    numeric = (f(x + h) - f(x - h)) / (2 * h)
    assert abs(fd.grad(f)(np.float64(x)) - numeric) < 1e-8


def _counting(rule):
    calls = []

    def counted(*values):
        calls.append(1)
        return rule(*values)
    return counted, calls


def test_the_compiled_program_replaces_the_rule_after_its_first_call():
    rule, calls = _counting(lambda x, y: ew.neg(ew.sin(x)))
    factor = unary_factor(rule)
    x = np.float64(0.5)
    for _ in range(5):
        assert factor(0, x, x) == -np.sin(x)
    assert len(calls) == 1  # staged once, then the program ran
    assert factor.programs.by_key[np.float64] is not None


def test_float_checks_run_the_rule_itself():
    rule, calls = _counting(lambda x, y: ew.cos(x))
    factor = unary_factor(rule)
    x = np.float64(0.5)
    factor(0, x, x)
    with fd.debug_nans():
        factor(0, x, x)
        factor(0, x, x)
    assert len(calls) == 3
    value, value_calls = _counting(lambda y: ew.sub(np.float64(1), ew.mul(y, y)))
    run = on_concrete(value)
    run(x)
    with fd.debug_nans():
        run(x)
    assert len(value_calls) == 2


def test_an_inf_made_inside_a_derivative_is_still_reported_under_debug_infs():
    f = fnp.arctan  # its derivative 1 / (1 + x*x): x*x overflows at 1e200, the factor is 0
    x = np.float64(1e200)
    with np.errstate(over="ignore"):
        assert fd.grad(f)(x) == 0.0  # the compiled program, no checks
        with fd.debug_infs():
            with pytest.raises(fd.errors.FloatingPointCheckError,
                               match="derivative of atan.*mul produced inf"):
                fd.grad(f)(x)


def test_a_staging_transform_sees_the_operations_of_an_output_derivative():
    run = on_concrete(lambda y: ew.sub(np.float64(1), ew.mul(y, y)))
    y = np.float64(0.5)
    run(y)  # compiled for float64
    jaxpr = fd.make_jaxpr(lambda x: x * run(y))(np.float64(2.0))
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert "sub" in names and names.count("mul") == 2
    assert fd.jit(lambda x: x * run(y))(np.float64(2.0)) == 2.0 * (1 - 0.25)


def test_a_jitted_pullback_of_the_tape_gives_the_eager_cotangent():
    _, pullback = fd.vjp(lambda x: fnp.tanh(fnp.tanh(x)), np.float64(0.3))
    ct = np.float64(1.0)
    assert _bits(fd.jit(pullback)(ct)[0]) == _bits(pullback(ct)[0])


def test_a_rule_that_reads_values_runs_as_written():
    def rule(x, y):
        return ew.cos(x) if float(x) > 0 else ew.sin(x)  # cannot be staged
    factor = unary_factor(rule)
    assert factor(0, np.float64(1.0), np.float64(0.5)) == np.cos(0.5)
    assert factor(0, np.float64(1.0), np.float64(-0.5)) == np.sin(-0.5)
    assert factor.programs.by_key[np.float64] is None


def test_complex_scalars_run_the_rule():
    # numpy's complex scalar product (the impl) and its ufunc loop (the compiled
    # program's) can round differently: complex values keep bind's route
    factor = ew.tanh_p.vjp_factor
    y = np.complex128(0.65 + 0.12j)
    d = factor(0, y, y)
    assert d.value() == d.output_deriv.programs.rule(y)
    assert np.complex128 not in d.output_deriv.programs.by_key or \
        d.output_deriv.programs.by_key[np.complex128] is None


def test_small_float_arrays_run_compiled_and_other_values_run_the_rule():
    rule, calls = _counting(lambda x, y: ew.cos(x))
    factor = unary_factor(rule)
    a = np.array([0.1, 0.2])
    for _ in range(3):
        np.testing.assert_array_equal(factor(0, a, a), np.cos(a))
    assert factor.programs.by_key[a.shape, a.dtype, a.shape, a.dtype] is not None
    assert len(calls) == 1  # staged once for this shape and dtype
    big = np.linspace(0.0, 1.0, 4096)  # 32 KiB: the rule, whose dispatch is small next to it
    np.testing.assert_array_equal(factor(0, big, big), np.cos(big))
    assert factor.programs.by_key[big.shape, big.dtype, big.shape, big.dtype] is None
    assert factor(0, np.float32(0.5), np.float64(0.5)) == np.cos(0.5)  # mixed: this call
    assert np.float64 not in factor.programs.by_key
    assert len(calls) == 3
    np.testing.assert_allclose(fd.grad(lambda x: fnp.sum(fnp.sin(x)))(a), np.cos(a))


def test_the_number_of_array_shapes_compiled_per_rule_is_bounded():
    rule, calls = _counting(lambda y: ew.mul(y, y))
    run = on_concrete(rule)
    for n in range(1, 80):
        y = np.ones(n)
        np.testing.assert_array_equal(run(y), y)
    assert run.programs.arrays == 64
    assert sum(v is not None for v in run.programs.by_key.values()) == 64


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=str)
def test_every_factor_on_small_arrays_gives_the_rules_value_bit_for_bit(dtype):
    compiled = 0
    for prim, factor in _unary_cards():
        pairs = _samples(prim, dtype)
        if not pairs:
            continue
        x = np.array([p[0] for p in pairs], dtype)
        with np.errstate(all="ignore"):
            y = prim.impl(x)
            fast, slow = factor(0, y, x), factor.programs.rule(x, y)
        assert _bits(fast) == _bits(slow), prim.name
        compiled += factor.programs.by_key.get((x.shape, x.dtype, y.shape, y.dtype)) is not None
    for prim in _output_factor_cards():
        x = np.array(POINTS, dtype)
        with np.errstate(all="ignore"):
            y = prim.impl(x)
            d = prim.vjp_factor(0, y, x)
            assert _bits(d.value()) == _bits(d.output_deriv.programs.rule(y)), prim.name
    assert compiled >= 8


def test_compile_jaxpr_options_for_concrete_rules():
    def rule(x, y):
        return ew.sub(ew.mul(x, y), x)
    x = np.float64(0.5)
    closed = trace_to_jaxpr(lambda *xs: [rule(*xs)], [core.get_aval(x)] * 2)
    default = compile_jaxpr(closed)
    assert default.scalar_source is not None and default.fn(x, x) == [-0.25]
    numpy_only = compile_jaxpr(closed, python_floats=False, numpy_inputs=True, bare=True)
    assert numpy_only.scalar_source is None
    assert "(a0 * a1)" in numpy_only.source  # operators on the inputs: numpy scalars
    assert numpy_only.fn(x, x) == -0.25 and type(numpy_only.fn(x, x)) is np.float64
    unpromised = compile_jaxpr(closed, python_floats=False)
    assert "(a0 * a1)" not in unpromised.source  # an input may be a Python float
    assert unpromised.fn(0.5, 0.5) == [-0.25]
    with pytest.raises(ValueError, match="one output"):
        compile_jaxpr(trace_to_jaxpr(lambda a: [a, a], [core.get_aval(x)]), bare=True)


def test_on_concrete_takes_the_math_of_the_card():
    # a card's derivative and math's agree where both are exact
    factor = ew.exp_p.vjp_factor
    assert factor(0, np.float64(math.e), np.float64(1.0)) == np.float64(math.e)
