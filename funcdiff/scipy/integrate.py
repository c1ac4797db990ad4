"""funcdiff.scipy.integrate: scipy.integrate's odeint and solve_ivp, differentiable in every mode.

``odeint(func, y0, t, *args)`` solves ``dy/dt = func(y, t, *args)`` and returns
``y`` at every time in ``t``; ``solve_ivp`` is scipy's other calling convention
on the same solver.

- The integrator is Dormand–Prince 5(4) with adaptive steps (scipy's RK45, JAX's
  odeint), written in funcdiff operations: a ``lax.scan`` over the output
  times, a ``lax.while_loop`` of steps inside each interval, and the method's
  4th-order dense output at the output time. So it traces, and runs under
  ``jit`` and ``vmap``.
- Reverse mode is the adjoint method (a ``custom_vjp``): the backward pass
  integrates ``y``, its adjoint ``a`` (``da/dt = -aᵀ ∂f/∂y``) and the
  arguments' cotangents (``∫ aᵀ ∂f/∂args dt``) back in time in one while loop
  over all intervals, one vjp of ``func`` per stage, so memory does not grow
  with the number of steps. Each ``t[i]`` gets ``cotangent[i] · f(y[i], t[i])``
  and ``t[0]`` minus the adjoint's.
- Forward mode transposes that backward pass (funcdiff differentiates a
  ``custom_vjp`` forward that way), which needs it to be a linear program of
  the cotangent: so when the cotangent is traced by anything but the innermost
  ``jit``, the pass is linearized at a probe cotangent (all ones), whose run
  chooses the steps, and its transpose carries the tangents forward through
  them (recording those steps: forward mode costs a few reverse passes). A
  concrete cotangent steers its own steps, as in JAX.
- Values that ``func`` closes over are differentiated too: they become
  arguments of the rule (closure conversion), as in JAX.
- Too many steps (``mxstep``) between two output times raise
  ``IntegrationError`` when the values are concrete; under ``jit`` (and
  ``vmap``), where no Python error can be raised, the outputs from the first
  unreached time on are NaN.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from funcdiff import core, dtypes, lax
from funcdiff.core import Zero, get_aval
from funcdiff.custom_derivatives import closure_convert, custom_vjp
from funcdiff.errors import (ConcretizationError, DTypeError, FunctionalDiffError,
                             InvalidArgumentError, ShapeError, UnsupportedNumpyError)
from funcdiff.interpreters.linearize import linearize_flat
from funcdiff.interpreters.programs import concrete_or_none
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.interpreters.transpose import UndefinedPrimal, backward_pass
from funcdiff.ir import eval_jaxpr
import funcdiff.numpy as fnp
from funcdiff.scipy._dopri import Settings, Stepper, can_step, solve, start, step, value_at
from funcdiff.tree_util import tree_flatten, tree_unflatten


class IntegrationError(FunctionalDiffError, RuntimeError):
    """The solver could not reach an output time: ``mxstep`` steps were not enough,
    or the step size collapsed (``func`` not finite, or the problem too stiff)."""


# ---------------------------------------------------------------------------
# The solve as a custom_vjp of the flat state, the times and the operands


class _Problem:
    """One ODE: ``rhs(y, t, operands)`` on the flat state (func after closure
    conversion), which operands are floating, and the solver settings."""

    __slots__ = ("rhs", "floating", "settings", "size")

    def __init__(self, rhs: Callable, floating: tuple, settings: Settings, size: int):
        self.rhs, self.floating, self.settings, self.size = rhs, floating, settings, size

    def with_floats(self, operands: tuple, floats: list) -> list:
        """``operands`` with the floating ones replaced by ``floats``."""
        it = iter(floats)
        return [next(it) if f else o for o, f in zip(operands, self.floating)]


def _solve(problem: _Problem, y0, t, *operands) -> tuple:
    ys, reached, steps = solve(lambda y, s: problem.rhs(y, s, operands), y0, t,
                               problem.settings)
    missed = fnp.cumsum(fnp.where(reached >= t[1:], 0, 1)) > 0  # this interval or an earlier
    unreached = fnp.concatenate([fnp.zeros(1, bool), missed])[:, None]
    ys = ys * fnp.where(unreached, np.nan, 1.0).astype(get_aval(ys).dtype)
    return ys, reached, steps


def _solve_fwd(problem: _Problem, y0, t, *operands) -> tuple:
    out = _solve(problem, y0, t, *operands)
    return out, (out[0], t, operands)


def _vjp(fun: Callable, primals: list, cotangents: list) -> tuple:
    """``fun(*primals)`` (a list) and the cotangents of ``primals`` for ``cotangents``."""
    outs, lin = linearize_flat(fun, primals)
    cts = [c for c, z in zip(cotangents, lin.out_is_zero) if not z]
    staged = iter(backward_pass(lin.jaxpr.jaxpr, lin.jaxpr.consts,
                                [UndefinedPrimal(v.aval) for v in lin.jaxpr.jaxpr.invars], cts))
    pulled = []
    for p, m in zip(primals, lin.in_mask):
        ct = next(staged) if m else None
        pulled.append(fnp.zeros_like(p) if ct is None or type(ct) is Zero else ct)
    return outs, pulled


def _backward_flow(problem: _Problem, ys, t, operands: tuple, g) -> list:
    """The adjoint sweep for the cotangent ``g`` of ``ys``: ``[ȳ0, t̄, ∂args, done]``,
    ``done`` saying whether the backward integration reached ``t[0]``.

    One while loop over all intervals, last first: each iteration either takes a
    step of the augmented system or, past the interval's start, reads the state
    there, adds that time's cotangent to the adjoint and restarts at ``t[i-1]``
    from the stored ``y``. (One loop rather than a loop per interval inside a
    scan: eager reverse mode then records it as a scan, which differentiates
    to any order, so the forward mode that transposes this sweep does too.)"""
    n, s = problem.size, problem.settings
    floats = [o for o, f in zip(operands, problem.floating) if f]
    n_args = sum(int(np.prod(get_aval(x).shape)) for x in floats)

    def augmented(z, time):  # d/ds of (y, a, ∂args) in reversed time s = -t
        y, a = z[:n], z[n:2 * n]

        def f(y, *p):
            return [problem.rhs(y, -time, problem.with_floats(operands, list(p)))]
        (dy,), (a_y, *a_p) = _vjp(f, [y, *floats], [a])
        return fnp.concatenate([-dy, a_y] + [fnp.ravel(c) for c in a_p])

    def begin(i, a, p_bar) -> Stepper:  # the interval from t[i] back to t[i - 1]
        return start(augmented, fnp.concatenate([fnp.take(ys, i, axis=0), a, p_bar]),
                      -fnp.take(t, i), s)

    def going(carry):
        i, steps, st = carry
        return (i >= 1) & ((st.t >= -fnp.take(t, i - 1)) | can_step(st, steps, s))

    def stepping(carry):
        i, steps, st = carry
        return i, steps + 1, step(augmented, st, s)

    def cross(carry):
        i, _, st = carry
        z = value_at(st, -fnp.take(t, i - 1))
        return i - 1, np.int64(0), begin(i - 1, z[n:2 * n] + fnp.take(g, i - 1, axis=0),
                                         z[2 * n:])

    def body(carry):
        i, _, st = carry
        return lax.cond(st.t >= -fnp.take(t, i - 1), cross, stepping, carry)

    last = get_aval(t).shape[0] - 1
    first = begin(last, g[last], fnp.zeros(n_args, dtype=get_aval(g).dtype))
    i, _, st = lax.while_loop(going, body, (np.int64(last), np.int64(0), first))
    a = st.y[n:2 * n]
    # moving t[i] moves y[i] along f; moving t[0] moves the whole solution back
    t_bar = -fnp.vdot(a - g[0], problem.rhs(ys[0], t[0], operands))[None]
    if last:
        later = lax.map(lambda x: fnp.vdot(x[2], problem.rhs(x[0], x[1], operands)),
                        (ys[1:], t[1:], g[1:]))
        t_bar = fnp.concatenate([t_bar, later])
    return [a, t_bar, st.y[2 * n:], i == 0]


def _sweep(flow: Callable, probe, g) -> tuple:
    """``flow``'s outputs for the cotangent ``g``: the flag ``done`` and the cotangents.

    Eager reverse mode (a concrete ``g``) and jit (``g`` staged by the innermost
    jit) run the flow on ``g`` directly: its own adjoint steers the step sizes,
    as in JAX. Any other trace of ``g`` may be about to transpose bwd (forward
    mode does) or batch it first, so there the flow must be a linear program of
    ``g``: it is linearized at the probe cotangent, whose run fixes the steps,
    and the linear program is applied to ``g``."""
    if core.find_top_trace([g]) is core.dynamic[-1].trace:
        outs = flow(g)
        return outs[-1], outs[:-1]
    outs, lin = linearize_flat(flow, [probe])
    applied = iter(eval_jaxpr(lin.jaxpr.jaxpr, lin.jaxpr.consts, g))
    tangents = [fnp.zeros(a.shape, a.dtype) if zero else next(applied)
                for a, zero in zip(lin.out_avals, lin.out_is_zero)]
    return outs[-1], tangents[:-1]


def _solve_bwd(problem: _Problem, res: tuple, cts: tuple) -> tuple:
    ys, t, operands = res
    g = cts[0]  # the reached times and step counts have no derivative
    probe = np.ones(get_aval(g).shape, get_aval(g).dtype)
    done, (y0_bar, t_bar, p_bar) = _sweep(
        lambda g: _backward_flow(problem, ys, t, operands, g), probe, g)
    if concrete_or_none(done) is not None and not bool(np.all(concrete_or_none(done))):
        raise IntegrationError(
            f"odeint: the adjoint (backward) pass did not get back to t={t[0]} within "
            f"mxstep={problem.settings.mxstep} steps per interval; raise mxstep or loosen "
            "rtol/atol (the cotangents would be NaN).")
    failed = fnp.where(done, 1.0, np.nan)  # a factor, so that bwd stays linear
    y0_bar, t_bar, p_bar = (x * failed for x in (y0_bar, t_bar, p_bar))
    out, offset = [], 0
    for o, floating in zip(operands, problem.floating):
        if not floating:
            out.append(None)
            continue
        shape = get_aval(o).shape
        size = int(np.prod(shape))
        out.append(fnp.reshape(p_bar[offset:offset + size], shape))
        offset += size
    return (y0_bar, t_bar, *out)


_solve_core = custom_vjp(_solve, nondiff_argnums=(0,))
_solve_core.defvjp(_solve_fwd, _solve_bwd)


# ---------------------------------------------------------------------------
# The public functions


def _floating(x: Any, name: str, what: str) -> Any:
    x = fnp.asarray(x)
    dtype = get_aval(x).dtype
    if dtypes.is_complex(dtype):
        raise DTypeError(f"{name}: {what} is complex ({dtype}); the solver integrates real "
                         "states only (split real and imaginary parts).")
    return x if dtypes.is_inexact(dtype) else x.astype(np.float64)


def _converted(name: str, func: Callable, y0, t0, args: tuple) -> tuple:
    """``func`` as ``rhs(y_flat, t, operands)``, with the values it closes over lifted
    into the operands (closure conversion), and the operands."""
    leaves, tree = tree_flatten(tuple(args))
    for i, leaf in enumerate(leaves):
        if not (hasattr(leaf, "dtype") or type(leaf) in (bool, int, float)):
            raise InvalidArgumentError(
                f"{name}: args must hold arrays or numbers, but leaf {i} is a "
                f"{type(leaf).__name__}; close over other values in func instead.")
    shape, dtype = get_aval(y0).shape, get_aval(y0).dtype

    def flat(y, t, *leaves):
        out = fnp.asarray(func(fnp.reshape(y, shape), t, *tree_unflatten(tree, list(leaves))))
        if get_aval(out).shape != shape:
            raise ShapeError(f"{name}: func returned {get_aval(out).str_short()} for y of shape "
                             f"{shape}; it must return dy/dt, shaped like y.")
        return [fnp.ravel(out).astype(dtype)]
    avals = [get_aval(fnp.ravel(y0)), get_aval(t0)] + [get_aval(fnp.asarray(x)) for x in leaves]
    try:
        closed, lifted = closure_convert(trace_to_jaxpr(flat, avals, dynamic=False))
    except ConcretizationError as e:
        raise ConcretizationError(f"{name} traces func to integrate it: {e}") from None
    n_lifted = len(lifted)

    def rhs(y, t, operands):
        ops = list(operands)
        return eval_jaxpr(closed.jaxpr, closed.consts, *ops[:n_lifted], y, t,
                          *ops[n_lifted:])[0]
    return rhs, tuple(lifted) + tuple(leaves)


def _times(name: str, t: Any) -> tuple:
    """``t`` as a 1-d float array, and -1 when it decreases (known only for concrete
    times; traced ones must increase), else 1."""
    t = _floating(t, name, "t")
    if get_aval(t).ndim != 1 or get_aval(t).shape[0] == 0:
        raise ShapeError(f"{name}: t must be a 1-d array of output times, got "
                         f"{get_aval(t).str_short()}.")
    values = concrete_or_none(t)
    if values is None:
        return t, 1
    steps = np.diff(np.asarray(values))
    if np.all(steps >= 0):
        return t, 1
    if np.all(steps <= 0):
        return t, -1
    raise InvalidArgumentError(f"{name}: the times t must be monotonic, got {values}.")


def _run(name: str, func: Callable, y0, t, args: tuple, rtol, atol, mxstep, hmax) -> tuple:
    """The solution at ``t`` (shape ``(len(t),) + y0.shape``), and the interval
    report: the solver's times (``direction * t``, increasing), the time reached
    in each interval, the steps each took and the direction."""
    if not callable(func):
        raise InvalidArgumentError(f"{name}: func must be callable, got {type(func).__name__}.")
    y0 = _floating(y0, name, "y0")
    t, direction = _times(name, t)
    t = t.astype(get_aval(y0).dtype)
    if direction < 0:  # integrate y(-s) forward in s = -t
        t, forward = -t, func
        func = lambda y, s, *a: -forward(y, -s, *a)  # noqa: E731
    rhs, operands = _converted(name, func, y0, t[0], args)
    floating = tuple(dtypes.is_inexact(get_aval(fnp.asarray(o)).dtype) for o in operands)
    settings = Settings(1.4e-8 if rtol is None else float(rtol),
                        1.4e-8 if atol is None else float(atol),
                        float(mxstep) or np.inf, float(hmax) or np.inf)  # 0: scipy's "no limit"
    problem = _Problem(rhs, floating, settings, int(np.prod(get_aval(y0).shape)))
    ys, reached, steps = _solve_core(problem, fnp.ravel(y0), t, *operands)
    ys = fnp.reshape(ys, get_aval(t).shape + get_aval(y0).shape)
    return ys, _Report(t, reached, steps, direction, settings.mxstep)


class _Report(NamedTuple):
    """How each interval between output times went: the solver's (increasing)
    times, the time its steps reached, how many it took; the sign of time and
    the step limit."""
    t: Any
    reached: Any
    steps: Any
    direction: int
    mxstep: float

    def ok(self) -> Any:
        return self.reached >= self.t[1:]

    def first_unreached(self) -> int | None:
        """The first interval that was not finished, when the values are concrete."""
        ok = concrete_or_none(self.ok())
        if ok is None or np.shape(ok) != np.shape(self.t[1:]):  # vmap: the NaN outputs say it
            return None
        missed = np.flatnonzero(~np.asarray(ok))
        return int(missed[0]) if missed.size else None

    def failure(self, name: str, i: int) -> str:
        t, reached = (self.direction * np.asarray(concrete_or_none(x))
                      for x in (self.t, self.reached))
        steps = int(np.asarray(concrete_or_none(self.steps))[i])
        if steps >= self.mxstep:
            return (f"{name}: {steps} steps from t={t[i]:.6g} reached t={reached[i]:.6g}, "
                    f"short of the output time t={t[i + 1]:.6g} (mxstep={int(self.mxstep)}); raise "
                    "mxstep or loosen rtol/atol.")
        return (f"{name}: the step size collapsed at t={reached[i]:.6g}, after {steps} steps "
                f"from t={t[i]:.6g} towards the output time t={t[i + 1]:.6g}: func is not "
                "finite there, or the problem is too stiff for an explicit method at this "
                "rtol/atol.")


def odeint(func: Callable, y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = np.inf, hmax: float = np.inf) -> Any:
    """Solve ``dy/dt = func(y, t, *args)`` from ``y0`` at ``t[0]`` (scipy.integrate.odeint).

    Dormand–Prince 5(4) with adaptive steps, differentiable in ``y0``, ``t``
    and every floating argument (and values ``func`` closes over) in both
    modes: reverse mode by the adjoint method, forward mode by its transpose.

    Args:
      func: ``func(y, t, *args) -> dy/dt`` (shaped like ``y``), written in
        funcdiff operations (it is traced).
      y0: the initial state, an array of any shape.
      t: 1-d array of output times, ``t[0]`` the start: increasing, or
        decreasing to integrate backwards (concrete times only).
      *args: arrays (or pytrees of arrays) passed to ``func``.
      rtol, atol: relative and absolute tolerance of each step's error
        (None: the default, as scipy's).
      mxstep: the most steps between two output times (default, or 0 as in
        scipy: no limit).
      hmax: the largest step (default, or 0 as in scipy: no limit).

    Returns:
      ``y`` at every time of ``t``: shape ``(len(t),) + y0.shape``.

    Raises:
      IntegrationError: an output time was not reached (more than ``mxstep``
        steps, or the step size collapsed), when the values are concrete; so
        does a backward (adjoint) pass that falls short of ``t[0]``. Under
        ``jit`` and ``vmap`` the outputs from that time on are NaN, and so are
        the cotangents when the backward pass fails the same way.
      ShapeError: ``func`` returned a value not shaped like ``y``.

    >>> import numpy as np
    >>> ys = odeint(lambda y, t, k: -k * y, np.array([1.0, 2.0]), np.array([0.0, 1.0]), 0.5)
    >>> np.round(ys, 6)
    array([[1.      , 2.      ],
           [0.606531, 1.213061]])
    """
    ys, report = _run("odeint", func, y0, t, args, rtol, atol, mxstep, hmax)
    i = report.first_unreached()
    if i is not None:
        raise IntegrationError(report.failure("odeint", i))
    return ys


class OdeResult(NamedTuple):
    """What ``solve_ivp`` returns, with scipy's fields; a pytree, so jit and vmap
    return it too.

    Attributes:
      t: the output times, shape ``(n_points,)``.
      y: the solution, shape ``(n, n_points)``.
      status: 0 when the end of the interval was reached, -1 when a step failed.
      nfev: evaluations of ``fun`` (6 per step tried, 2 for the first step).
      success: ``status == 0``.
      message: what ``status`` means.
    """

    t: Any
    y: Any
    status: Any
    nfev: Any

    @property
    def success(self) -> Any:
        return self.status == 0

    @property
    def message(self) -> str:
        known = concrete_or_none(self.status)
        if known is None or np.ndim(known):  # traced, or batched by vmap
            return "the status is known only per run: see .status (0 success, -1 failure)"
        return _MESSAGES[int(known)]

    def __repr__(self) -> str:
        return "\n".join(f"{name}: {getattr(self, name)!r}" for name in
                         ("message", "success", "status", "t", "y", "nfev"))


_MESSAGES = {0: "The solver successfully reached the end of the integration interval.",
             -1: "Integration step failed: the step size collapsed (fun is not finite, or the "
                 "problem is too stiff for RK45)."}


def solve_ivp(fun: Callable, t_span: Any, y0: Any, method: str = "RK45", t_eval: Any = None,
              args: tuple = (), rtol: float = 1e-3, atol: float = 1e-6,
              max_step: float = np.inf) -> OdeResult:
    """Solve ``dy/dt = fun(t, y, *args)`` over ``t_span`` (scipy.integrate.solve_ivp).

    The same Dormand–Prince 5(4) solver as ``odeint``, so ``result.y`` and
    ``result.t`` are differentiable in ``y0``, ``t_span``, ``t_eval`` and
    ``args`` in both modes (its steps are chosen a little differently from
    scipy's, so values agree to the tolerances, not digit for digit).

    Args:
      fun: ``fun(t, y, *args) -> dy/dt``, in funcdiff operations.
      t_span: ``(t0, t1)``; ``t1 < t0`` integrates backwards (concrete values only).
      y0: the initial state, 1-d.
      method: only ``"RK45"``.
      t_eval: times in ``t_span`` to report, in its direction (default: ``t0`` and
        ``t1`` only, where scipy reports every step).
      args: a tuple of extra arguments of ``fun``.
      rtol, atol: relative and absolute tolerance of each step's error.
      max_step: the largest step.

    Returns:
      An ``OdeResult``: ``t``, ``y`` (shape ``(len(y0), len(t))``), ``status``,
      ``success``, ``message`` and ``nfev``.

    Raises:
      UnsupportedNumpyError: a method other than RK45.

    >>> import numpy as np
    >>> r = solve_ivp(lambda t, y: -0.5 * y, (0.0, 1.0), np.array([1.0, 2.0]), rtol=1e-8)
    >>> r.success, np.round(r.y[:, -1], 6)
    (True, array([0.606531, 1.213061]))
    """
    if method != "RK45":
        shown = method if isinstance(method, str) else getattr(method, "__name__", method)
        raise UnsupportedNumpyError(
            f"solve_ivp: method {shown!r} is not supported; funcdiff.scipy.integrate "
            "implements only 'RK45' (Dormand–Prince 5(4), scipy's default). Leave method out "
            "or pass method='RK45'.")
    if not isinstance(args, (tuple, list)):
        raise InvalidArgumentError(f"solve_ivp: args must be a tuple of fun's extra "
                                   f"arguments, got a {type(args).__name__} (write args=(k,)).")
    y0 = fnp.asarray(y0)
    if get_aval(y0).ndim != 1:
        raise ShapeError(f"solve_ivp: y0 must be 1-d, got {get_aval(y0).str_short()}.")
    if len(t_span) != 2:
        raise InvalidArgumentError(f"solve_ivp: t_span must be (t0, t1), got {t_span!r}.")
    t0, t1 = (fnp.asarray(x) for x in t_span)
    if t_eval is None:
        times = fnp.stack([t0, t1])
    else:
        _check_span(t_span, t_eval)
        times = fnp.concatenate([fnp.reshape(t0, (1,)), fnp.ravel(fnp.asarray(t_eval))])
    ys, report = _run("solve_ivp", lambda y, t, *a: fun(t, y, *a), y0, times, tuple(args),
                      rtol, atol, np.inf, max_step)
    status = fnp.where(fnp.all(report.ok()), 0, -1)
    nfev = 2 + 6 * fnp.sum(report.steps)
    if t_eval is not None:  # t0 was only the start
        ys, times = ys[1:], times[1:]
    known = [concrete_or_none(x) for x in (status, nfev)]
    if all(k is not None for k in known):  # scipy's Python numbers when there are values
        status, nfev = (int(k) for k in known)
    return OdeResult(times, fnp.transpose(ys), status, nfev)


def _check_span(t_span: Any, t_eval: Any) -> None:
    values = [concrete_or_none(fnp.asarray(x)) for x in (*t_span, t_eval)]
    if any(v is None for v in values):
        return
    t0, t1, t_eval = (np.asarray(v) for v in values)
    if np.any(t_eval < min(t0, t1)) or np.any(t_eval > max(t0, t1)):
        raise InvalidArgumentError(f"solve_ivp: the values of t_eval must lie within t_span "
                                   f"({float(t0):g}, {float(t1):g}), got {t_eval}.")


__all__ = ["odeint", "solve_ivp", "OdeResult", "IntegrationError"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
