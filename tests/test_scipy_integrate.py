"""funcdiff.scipy.integrate against scipy.integrate, and its derivatives in every mode.

One table of problems (decay, a damped harmonic oscillator, Lotka–Volterra)
drives the value checks against scipy's odeint and solve_ivp and the
derivative checks (check_grads in both modes in y0, t and the arguments, the
adjoint identity between jvp and vjp, jacfwd against jacrev); then jit, vmap,
closed-over values, backward time, the mxstep error and the argument errors.
"""

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (FunctionalDiffError, InvalidArgumentError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.scipy import integrate
from funcdiff.scipy.integrate import IntegrationError, odeint, solve_ivp
from funcdiff.test_util import check_grads


def decay(y, t, k):
    return -k * y


def oscillator(y, t, w, c):  # y'' = -w² y - c y' + a forcing in t
    return fnp.stack([y[1], -w * w * y[0] - c * y[1] + 0.2 * fnp.sin(t)])


def lotka_volterra(y, t, p):
    prey, predator = y[0], y[1]
    return fnp.stack([p[0] * prey - p[1] * prey * predator,
                      -p[2] * predator + p[3] * prey * predator])


# name, func, y0, args, output times for values, (shorter) times for derivatives
PROBLEMS = [
    ("decay", decay, np.array([1.0, 2.0]), (0.7,), np.linspace(0.0, 3.0, 7),
     np.array([0.0, 0.4, 1.0])),
    ("oscillator", oscillator, np.array([1.0, 0.0]), (1.3, 0.1), np.linspace(0.0, 6.0, 9),
     np.array([0.0, 0.5, 1.2])),
    ("lotka_volterra", lotka_volterra, np.array([10.0, 5.0]),
     (np.array([1.5, 1.0, 3.0, 1.0]),), np.linspace(0.0, 10.0, 11), np.array([0.0, 0.3, 0.7])),
]
IDS = [p[0] for p in PROBLEMS]
TIGHT = dict(rtol=1e-10, atol=1e-10)
TIGHTEST = dict(rtol=1e-12, atol=1e-12)  # finite differences of the solver need smooth values


@pytest.mark.parametrize("name,func,y0,args,t,_", PROBLEMS, ids=IDS)
def test_odeint_equals_scipys(name, func, y0, args, t, _):
    si = pytest.importorskip("scipy.integrate")
    want = si.odeint(func, y0, t, args, **TIGHTEST)   # func runs on numpy arrays too
    got = odeint(func, y0, t, *args, **TIGHT)
    assert got.shape == (len(t),) + y0.shape
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("name,func,y0,args,t,_", PROBLEMS, ids=IDS)
def test_solve_ivp_equals_scipys(name, func, y0, args, t, _):
    si = pytest.importorskip("scipy.integrate")
    fun = lambda s, y, *a: func(y, s, *a)  # noqa: E731
    span = (t[0], t[-1])
    want = si.solve_ivp(fun, span, y0, t_eval=t[1:], args=args, **TIGHTEST)
    got = solve_ivp(fun, span, y0, t_eval=t[1:], args=args, **TIGHT)
    assert got.y.shape == want.y.shape == (len(y0), len(t) - 1)
    np.testing.assert_allclose(got.t, want.t)
    np.testing.assert_allclose(got.y, want.y, rtol=1e-8, atol=1e-9)
    assert got.success and got.status == 0 and got.message == want.message
    assert isinstance(got.nfev, int) and got.nfev > 0


@pytest.mark.parametrize("mode", ["fwd", "rev"])
@pytest.mark.parametrize("name,func,y0,args,_,t", PROBLEMS, ids=IDS)
def test_first_derivatives_in_y0_t_and_args(name, func, y0, args, _, t, mode):
    check_grads(lambda y0, t, *a: odeint(func, y0, t, *a, **TIGHTEST), (y0, t) + args,
                order=1, modes=(mode,))


def test_second_derivatives_of_decay():
    check_grads(lambda y0, t, k: odeint(decay, y0, t, k, **TIGHTEST),
                (np.array([1.0, 2.0]), np.array([0.0, 0.5]), 0.7), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name,func,y0,args,_,t", PROBLEMS, ids=IDS)
def test_jvp_and_vjp_satisfy_the_adjoint_identity(name, func, y0, args, _, t):
    rng = np.random.default_rng(1)
    primals = (y0, t) + args
    tangents = tuple(rng.standard_normal(np.shape(x)) for x in primals)
    solve = lambda *p: odeint(func, *p[:2], *p[2:], **TIGHT)  # noqa: E731
    ys, jv = fd.jvp(solve, primals, tangents)
    u = rng.standard_normal(ys.shape)
    cotangents = fd.vjp(solve, *primals)[1](u)
    lhs = np.vdot(u, jv)
    rhs = sum(np.vdot(c, v) for c, v in zip(cotangents, tangents))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-7)


def test_gradient_equals_the_closed_form():
    y0, t, k = np.array([1.0, 2.0]), np.array([0.0, 0.5, 2.0]), 0.7
    loss = lambda y0, t, k: fnp.sum(odeint(decay, y0, t, k, **TIGHT))  # noqa: E731
    d_y0, d_t, d_k = fd.grad(loss, argnums=(0, 1, 2))(y0, t, k)
    decayed = np.exp(-k * (t - t[0]))
    np.testing.assert_allclose(d_y0, np.full(2, decayed.sum()), rtol=1e-8)
    np.testing.assert_allclose(d_t[1:], -k * decayed[1:] * y0.sum(), rtol=1e-8)
    np.testing.assert_allclose(d_t[0], k * decayed[1:].sum() * y0.sum(), rtol=1e-8)
    np.testing.assert_allclose(d_k, -np.sum((t - t[0]) * decayed) * y0.sum(), rtol=1e-8)


def test_jacfwd_equals_jacrev():
    _, func, y0, args, _, t = PROBLEMS[2]
    solve = lambda y0, p: odeint(func, y0, t, p, **TIGHT)  # noqa: E731
    forward = fd.jacfwd(solve, argnums=(0, 1))(y0, *args)
    for got, want in zip(forward, fd.jacrev(solve, argnums=(0, 1))(y0, *args)):
        assert got.shape == want.shape == (len(t), 2, np.size(want) // (2 * len(t)))
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_values_closed_over_are_differentiated():
    y0, t = np.array([1.0, 2.0]), np.array([0.0, 1.0])

    def loss(k):
        return odeint(lambda y, t: -k * y, y0, t, **TIGHT)[-1].sum()
    want = -np.exp(-0.7) * y0.sum()
    np.testing.assert_allclose(fd.grad(loss)(0.7), want, rtol=1e-8)
    np.testing.assert_allclose(fd.jvp(loss, (0.7,), (1.0,))[1], want, rtol=1e-8)


def test_jit_equals_eager():
    _, func, y0, args, _, t = PROBLEMS[1]
    solve = lambda y0, w, c: odeint(func, y0, t, w, c, **TIGHT)  # noqa: E731
    np.testing.assert_allclose(fd.jit(solve)(y0, *args), solve(y0, *args), rtol=1e-13)
    loss = lambda *a: fnp.sum(solve(*a) ** 2)  # noqa: E731
    grad = fd.grad(loss, argnums=(0, 1, 2))
    for got, want in zip(fd.jit(grad)(y0, *args), grad(y0, *args)):
        np.testing.assert_allclose(got, want, rtol=1e-9)
    tangent = (np.ones(2), 0.5, -0.1)
    np.testing.assert_allclose(fd.jit(lambda *a: fd.jvp(solve, a, tangent)[1])(y0, *args),
                               fd.jvp(solve, (y0,) + args, tangent)[1], rtol=1e-9)


def test_vmap_over_y0_equals_a_loop():
    _, func, y0, args, _, t = PROBLEMS[2]
    starts = np.stack([y0, 0.5 * y0, y0 + 1.0])
    solve = lambda y0: odeint(func, y0, t, *args, **TIGHT)  # noqa: E731
    np.testing.assert_allclose(fd.vmap(solve)(starts), np.stack([solve(s) for s in starts]),
                               rtol=1e-12)
    grad = fd.grad(lambda y0: fnp.sum(solve(y0)))
    np.testing.assert_allclose(fd.vmap(grad)(starts), np.stack([grad(s) for s in starts]),
                               rtol=1e-7)


def test_decreasing_times_integrate_backwards():
    si = pytest.importorskip("scipy.integrate")
    _, func, y0, args, t, _ = PROBLEMS[1]
    back = t[::-1]
    np.testing.assert_allclose(odeint(func, y0, back, *args, **TIGHT),
                               si.odeint(func, y0, back, args, **TIGHTEST), rtol=1e-8, atol=1e-9)
    r = solve_ivp(lambda s, y: -y, (1.0, 0.0), np.array([1.0]), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(r.y[:, -1], [np.e], rtol=1e-9)


def test_shapes_and_dtypes():
    ys = odeint(lambda y, t: -y, np.ones((2, 3)), np.array([0.0, 1.0]))
    assert ys.shape == (2, 2, 3)
    assert odeint(lambda y, t: -y, 1, [0, 1]).dtype == np.float64   # integers become float64
    y32 = odeint(lambda y, t: -y, np.ones(2, np.float32), np.array([0.0, 1.0]), rtol=1e-5)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(odeint(decay, np.ones(2), np.array([0.0]), 0.7), [[1.0, 1.0]])
    tree = odeint(lambda y, t, p: -p["k"] * y, np.ones(1), np.array([0.0, 1.0]), {"k": 2.0})
    np.testing.assert_allclose(tree[-1], np.exp(-2.0), rtol=1e-7)


def test_scipys_zero_and_none_mean_the_defaults():
    t = np.array([0.0, 1.0])
    want = odeint(decay, np.ones(2), t, 0.7)
    np.testing.assert_array_equal(odeint(decay, np.ones(2), t, 0.7, rtol=None, atol=None,
                                         mxstep=0, hmax=0.0), want)
    capped = odeint(decay, np.ones(2), t, 0.7, hmax=0.01, mxstep=200)
    np.testing.assert_allclose(capped, want, rtol=1e-7)
    with pytest.raises(IntegrationError, match="mxstep=50"):   # 100 steps of 0.01 needed
        odeint(decay, np.ones(2), t, 0.7, hmax=0.01, mxstep=50)


STIFF = (lambda y, t: fnp.stack([y[1], -1e4 * y[0]]), np.array([1.0, 0.0]),
         np.array([0.0, 0.31, 1.0]))


def test_too_many_steps_raise_eagerly_and_say_where():
    func, y0, t = STIFF
    with pytest.raises(IntegrationError) as info:
        odeint(func, y0, t, mxstep=50)
    message = str(info.value)
    assert message.startswith("odeint: 50 steps from t=0 reached t=")
    assert "short of the output time t=0.31 (mxstep=50); raise mxstep or loosen rtol/atol" in \
        message
    assert isinstance(info.value, FunctionalDiffError)
    with pytest.raises(IntegrationError, match="mxstep=50"):   # under eager grad too
        fd.grad(lambda y0: odeint(func, y0, t, mxstep=50).sum())(y0)
    assert np.isfinite(odeint(func, y0, t, mxstep=10_000)).all()


def test_too_many_steps_under_jit_and_vmap_give_nan_from_that_time_on():
    func, y0, t = STIFF
    for ys in (fd.jit(lambda y0: odeint(func, y0, t, mxstep=50))(y0),
               fd.vmap(lambda y0: odeint(func, y0, t, mxstep=50))(y0[None])[0]):
        np.testing.assert_array_equal(ys[0], y0)
        assert np.isnan(ys[1:]).all()


def test_a_collapsing_step_size_is_reported():
    with pytest.raises(IntegrationError, match="step size collapsed at t=1"), \
            np.errstate(all="ignore"):
        odeint(lambda y, t: y * y, np.array(1.0), np.array([0.0, 2.0]))   # y = 1/(1-t)


def test_solve_ivp_reports_the_span_by_default_and_counts_evaluations():
    r = solve_ivp(lambda t, y, k: -k * y, (0.0, 2.0), np.array([1.0, 3.0]), args=(0.5,),
                  rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(r.t, [0.0, 2.0])
    np.testing.assert_allclose(r.y, np.outer([1.0, 3.0], [1.0, np.exp(-1.0)]), rtol=1e-8)
    assert r.success is True and r.status == 0 and r.nfev % 6 == 2
    assert "successfully" in repr(r)
    d_k = fd.grad(lambda k: solve_ivp(lambda t, y, k: -k * y, (0.0, 2.0), np.array([1.0]),
                                      args=(k,), rtol=1e-9, atol=1e-9).y[0, -1])(0.5)
    np.testing.assert_allclose(d_k, -2.0 * np.exp(-1.0), rtol=1e-7)


def test_solve_ivp_results_come_out_of_jit_and_vmap():
    def solve(y0):
        return solve_ivp(lambda t, y: -y, (0.0, 1.0), y0, rtol=1e-9, atol=1e-9)
    r = fd.jit(solve)(np.ones(1))
    assert r.success and r.status == 0 and "successfully" in r.message
    np.testing.assert_allclose(r.y[0, -1], np.exp(-1.0), rtol=1e-8)
    batched = fd.vmap(solve)(np.array([[1.0], [2.0]]))
    assert batched.y.shape == (2, 1, 2) and list(batched.status) == [0, 0]
    assert "known only per run" in batched.message


@pytest.mark.parametrize("call,error,words", [
    (lambda: solve_ivp(decay, (0, 1), np.ones(1), method="LSODA"), UnsupportedNumpyError,
     "method 'LSODA' is not supported; funcdiff.scipy.integrate implements only 'RK45'"),
    (lambda: solve_ivp(decay, (0, 1), np.ones(1), args=0.5), InvalidArgumentError,
     "args must be a tuple"),
    (lambda: solve_ivp(lambda t, y: -y, (0, 1), np.ones(1), t_eval=np.array([0.5, 2.0])),
     InvalidArgumentError, "t_eval must lie within t_span"),
    (lambda: solve_ivp(lambda t, y: -y, (0, 1), np.ones((1, 1))), ShapeError, "1-d"),
    (lambda: odeint(lambda y, t: y[:1], np.ones(2), np.array([0.0, 1.0])), ShapeError,
     "shaped like y"),
    (lambda: odeint(lambda y, t: -y, np.ones(2), np.array([0.0, 1.0, 0.5])),
     InvalidArgumentError, "monotonic"),
    (lambda: odeint(lambda y, t: -y, np.ones(2, complex), np.array([0.0, 1.0])),
     FunctionalDiffError, "real states only"),
    (lambda: odeint(lambda y, t, s: -y, np.ones(2), np.array([0.0, 1.0]), "fast"),
     InvalidArgumentError, "args must hold arrays or numbers"),
], ids=["method", "args", "t_eval", "y0", "func shape", "t order", "complex", "string arg"])
def test_errors_say_what_to_do(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_public_names():
    assert set(integrate.__all__) == {"odeint", "solve_ivp", "OdeResult", "IntegrationError"}
    assert "integrate" in dir(__import__("funcdiff.scipy", fromlist=["integrate"]))


def test_an_adjoint_pass_short_of_the_start_raises_instead_of_nan_cotangents(monkeypatch):
    from funcdiff.scipy import integrate
    real = integrate._sweep

    def short(flow, probe, g):  # the backward pass as if it ran out of steps
        done, bars = real(flow, probe, g)
        return done & False, bars
    monkeypatch.setattr(integrate, "_sweep", short)
    with pytest.raises(IntegrationError, match="adjoint \\(backward\\) pass did not get back"):
        fd.grad(lambda y0: odeint(decay, y0, np.array([0.0, 1.0]), 0.7).sum())(np.ones(2))
