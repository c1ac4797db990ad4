"""fd.config's debug_nans and debug_infs: the first operation that makes a NaN (an inf)
raises FloatingPointCheckError naming it and the user's line, eagerly, in the backward
pass (naming the forward operation whose derivative made it) and under jit (by a re-run
of the unoptimised program). Off by default, when NaNs flow as in numpy."""

import warnings

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff import core
from funcdiff.interpreters import tape

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

with open(__file__) as _f:
    _LINES = _f.read().splitlines()


def line(marker):
    """``test_debug_nans.py:n`` of the line ending in the comment ``# marker``."""
    (n,) = [i + 1 for i, text in enumerate(_LINES) if text.endswith("# " + marker)]
    return f"test_debug_nans.py:{n}"


def log_of_shifted(x):
    y = fnp.exp(x) - 2.0
    return fnp.log(y) * 3.0  # LOG


def norm(x):
    return fnp.sqrt(fnp.sum(x * x))  # NORM


def test_off_by_default_nans_flow_as_in_numpy():
    assert fd.config.debug_nans is False and fd.config.debug_infs is False
    assert core.float_checks is False
    x = np.array([0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.log(np.exp(x) - 2.0) * 3.0
    np.testing.assert_array_equal(log_of_shifted(x), expected)
    np.testing.assert_array_equal(fd.jit(log_of_shifted)(x), expected)
    assert np.isnan(fd.grad(norm)(np.zeros(3))).all()
    assert np.isinf(fnp.exp(np.array(1000.0)))


def test_eager_forward_names_the_primitive_operands_and_line():
    with fd.debug_nans():
        with pytest.raises(fd.FloatingPointCheckError) as info:
            log_of_shifted(np.array([0.0, 1.0, 2.0]))
    message = str(info.value)
    assert message.startswith("debug_nans: log produced NaN at ")
    assert line("LOG") in message and "(f64[3])" in message
    assert isinstance(info.value, FloatingPointError) and isinstance(
        info.value, fd.FunctionalDiffError)


def test_a_nan_passed_through_is_not_blamed():
    with fd.debug_nans():
        out = fnp.sin(np.array([np.nan, 1.0])) * 2.0  # the NaN came in
        assert np.isnan(out[0]) and out[1] == 2 * np.sin(1.0)
        out = fd.jit(log_of_shifted)(np.array([np.nan, 3.0]))
        assert np.isnan(out[0])


def test_under_grad_the_forward_nan_names_its_line():
    with fd.debug_nans(), pytest.raises(fd.FloatingPointCheckError, match="log produced NaN") as info:
        fd.grad(lambda x: fnp.sum(log_of_shifted(x)))(np.zeros(2))
    assert line("LOG") in str(info.value)


def test_backward_nan_names_the_forward_operation_and_its_line():
    # sqrt's derivative at 0 is inf; x * x's derivative 2x = 0 meets it: 0 * inf
    with fd.debug_nans(), pytest.raises(fd.FloatingPointCheckError) as info:
        fd.grad(norm)(np.zeros(3))
    message = str(info.value)
    assert "in the backward pass, the derivative of mul (applied at" in message
    assert line("NORM") in message and "given a cotangent f64[3] holding inf" in message
    # with debug_infs the inf itself is reported, where sqrt's derivative makes it
    with fd.debug_infs(), pytest.raises(fd.FloatingPointCheckError) as info:
        fd.grad(norm)(np.zeros(3))
    message = str(info.value)
    assert message.startswith("debug_infs: computing the derivative of sqrt (applied at")
    assert line("NORM") in message


def test_checked_gradients_equal_unchecked_ones():
    rng = np.random.default_rng(0)
    w, b, x = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(5, 3))

    def loss(w, b):
        h = fnp.tanh(x @ w + b)
        return fnp.sum(fnp.log1p(h * h)) + fnp.max(h) * fnp.sum(w[0])
    expected = fd.grad(loss, argnums=(0, 1))(w, b)
    with fd.debug_nans(), fd.debug_infs():
        got = fd.grad(loss, argnums=(0, 1))(w, b)
        hessian = fd.hessian(lambda v: fnp.sum(fnp.sin(v) ** 3))(b)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    np.testing.assert_allclose(hessian, fd.hessian(lambda v: fnp.sum(fnp.sin(v) ** 3))(b))


def test_jit_reruns_unoptimised_to_name_the_line():
    f = fd.jit(log_of_shifted)
    x = np.array([0.0, 3.0])
    with fd.debug_nans():
        np.testing.assert_allclose(f(np.array([3.0])), np.log(np.exp(3.0) - 2.0) * 3.0)
        with pytest.raises(fd.FloatingPointCheckError) as info:
            f(x)
    message = str(info.value)
    assert message.startswith("debug_nans: log produced NaN at ") and line("LOG") in message
    assert np.isnan(f(x)[0])  # off again: the compiled program's NaN returns


def test_infs_are_reported_with_debug_infs_only():
    big = np.array([1.0, 1000.0])
    with fd.debug_nans():
        assert np.isinf(fnp.exp(big)[1])
    with fd.debug_infs(), pytest.raises(fd.FloatingPointCheckError,
                                        match="debug_infs: exp produced inf"):
        fnp.exp(big)
    with fd.debug_infs():  # NaNs are debug_nans' business
        assert np.isnan(fnp.log(np.array(-1.0)))


def test_the_context_managers_restore_the_setting():
    with fd.debug_nans():
        assert fd.config.debug_nans and core.float_checks
        with fd.debug_nans(False):
            assert not fd.config.debug_nans and not core.float_checks
            assert np.isnan(fnp.log(np.array(-1.0)))
        assert fd.config.debug_nans
    assert not fd.config.debug_nans and not core.float_checks
    with pytest.raises(fd.FloatingPointCheckError), fd.debug_infs():
        fnp.log(np.array(0.0))
    assert not fd.config.debug_infs and not core.float_checks
    fd.config.update("jax_debug_nans", True)
    try:
        assert core.float_checks and core.nans_checked and not core.infs_checked
    finally:
        fd.config.update("debug_nans", False)
    assert not core.float_checks
    with pytest.raises(fd.FunctionalDiffError, match="takes True or False"):
        fd.config.update("debug_nans", 1)


def test_in_a_scan_under_grad_the_body_operation_is_named():
    def body(carry, x):
        return carry + fnp.log(x), carry
    with fd.debug_nans(), pytest.raises(fd.FloatingPointCheckError,
                                        match="^debug_nans: log produced NaN at .*test_debug_nans"):
        fd.grad(lambda xs: fd.lax.scan(body, 0.0, xs)[0])(np.array([1.0, -1.0]))


def _scan_body(carry, x):
    return carry + fnp.log(x - 1.0), carry  # SCAN_BODY


def _branch(v):
    return fnp.log(v - 1.0)  # BRANCH


def _while_body(c):
    return c[0] + 1, c[1] + fnp.log(c[1] - 5.0)  # WHILE_BODY


def _inner(y):
    return fnp.log(y - 1.0)  # INNER_JIT


BODY_CASES = [  # (name, function of x, marker of the line that makes the NaN)
    ("scan", lambda x: fd.lax.scan(_scan_body, 0.0, x)[0], "SCAN_BODY"),
    ("cond", lambda x: fd.lax.cond(True, _branch, lambda v: v, x), "BRANCH"),
    ("while_loop", lambda x: fd.lax.while_loop(lambda c: c[0] < 3, _while_body,
                                               (0, fnp.sum(x)))[1], "WHILE_BODY"),
    ("nested jit", lambda x: fd.jit(_inner)(x) * 2.0, "INNER_JIT"),
]


@pytest.mark.parametrize("name, f, marker", BODY_CASES, ids=[c[0] for c in BODY_CASES])
@pytest.mark.parametrize("how", ["eager", "jit", "vmap", "jvp", "jacfwd", "grad", "hvp"])
def test_a_nan_inside_a_body_names_the_body_operation_and_line(name, f, marker, how):
    if name == "while_loop" and how in ("grad", "hvp"):
        pytest.skip("a while_loop has no reverse mode")
    x, ones = np.zeros(3), np.ones(3)

    def total(x):
        return fnp.sum(f(x))
    run = {"eager": lambda: f(x), "jit": lambda: fd.jit(f)(x),
           "vmap": lambda: fd.vmap(f)(np.zeros((2, 3))),
           "jvp": lambda: fd.jvp(f, (x,), (ones,)), "jacfwd": lambda: fd.jacfwd(total)(x),
           "grad": lambda: fd.grad(total)(x), "hvp": lambda: fd.hvp(total, (x,), (ones,))}[how]
    with fd.debug_nans(), pytest.raises(fd.FloatingPointCheckError) as info:
        run()
    message = str(info.value)
    assert message.startswith("debug_nans: log produced NaN at "), message
    assert line(marker) in message


@pytest.mark.parametrize("how", ["jit", "vmap"])
def test_a_backward_nan_under_jit_and_vmap_names_the_forward_operation(how):
    grad = fd.grad(norm)
    run = {"jit": lambda: fd.jit(grad)(np.zeros(3)),
           "vmap": lambda: fd.vmap(grad)(np.zeros((2, 3)))}[how]
    with fd.debug_nans(), pytest.raises(fd.FloatingPointCheckError) as info:
        run()
    message = str(info.value)
    assert message.startswith("debug_nans: computing the derivative of mul (applied at "), message
    assert line("NORM") in message


def _scan_norm_body(carry, x):
    return carry + fnp.sqrt(x * x), carry  # SCAN_NORM


@pytest.mark.parametrize("how", ["grad", "jit", "vmap"])
def test_a_backward_nan_inside_a_scan_body_names_the_body_operation(how):
    grad = fd.grad(lambda xs: fd.lax.scan(_scan_norm_body, 0.0, xs)[0])
    run = {"grad": lambda: grad(np.zeros(3)), "jit": lambda: fd.jit(grad)(np.zeros(3)),
           "vmap": lambda: fd.vmap(grad)(np.zeros((2, 3)))}[how]
    with fd.debug_nans(), pytest.raises(fd.FloatingPointCheckError) as info:
        run()
    message = str(info.value)
    assert "the derivative of mul (applied at " in message, message
    assert line("SCAN_NORM") in message
    assert np.isnan(grad(np.zeros(3))).all()  # off: the NaN flows as in numpy


@fd.custom_vjp
def _guarded_sin(x):
    return fnp.sin(x)


def _guarded_sin_fwd(x):
    return fnp.sin(x), x


def _guarded_sin_bwd(x, g):
    return (g * fnp.log(x - 1.0),)  # CUSTOM_BWD


_guarded_sin.defvjp(_guarded_sin_fwd, _guarded_sin_bwd)


def test_a_nan_in_a_custom_vjp_rule_names_the_rule_or_its_use():
    def loss(x):
        return fnp.sum(_guarded_sin(x))  # CUSTOM_USE
    with fd.debug_nans(), pytest.raises(fd.FloatingPointCheckError) as info:
        fd.grad(loss)(np.zeros(2))
    assert "log produced NaN" in str(info.value) and line("CUSTOM_BWD") in str(info.value)
    with fd.debug_nans(), pytest.raises(fd.FloatingPointCheckError) as info:
        fd.jit(fd.grad(loss))(np.zeros(2))
    message = str(info.value)
    assert "log produced NaN" in message and "custom_vjp_call" in message
    assert line("CUSTOM_USE") in message


def test_with_the_checks_off_nothing_records_source_lines():
    programs = [fd.make_jaxpr(lambda x: fd.lax.scan(_scan_body, 0.0, x)[0])(np.ones(3)),
                fd.make_jaxpr(fd.grad(lambda x: fd.lax.scan(_scan_body, 0.0, x)[0]))(np.ones(3))]
    eqns = [e for p in programs for e in p.eqns]
    eqns += [e for e in eqns if e.primitive.name == "scan" for e in e.params["jaxpr"].eqns]
    assert eqns and all(e.source is None for e in eqns)
    with fd.debug_nans():
        checked = fd.make_jaxpr(lambda x: fd.lax.scan(_scan_body, 0.0, x)[0])(np.ones(3))
    body = next(e for e in checked.eqns if e.primitive.name == "scan").params["jaxpr"]
    assert all(e.source is not None for e in body.eqns)
