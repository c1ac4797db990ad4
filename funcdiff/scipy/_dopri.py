"""The Dormand–Prince 5(4) integrator of funcdiff.scipy.integrate, in funcdiff operations.

The method of scipy's RK45 and JAX's odeint, on a flat state vector ``y`` with
``rhs(y, t) -> dy/dt``; everything is traced, so it runs under jit and vmap
and is differentiable (funcdiff.scipy.integrate gives it an adjoint rule).

- ``start`` evaluates the slope and picks the first step (Hairer, Nørsett and
  Wanner's rule); ``step`` attempts one step and keeps it when its error ratio
  (the RMS of the error over ``atol + rtol * |y|``) is at most 1, choosing the
  next step size either way.
- ``advance`` steps, in a ``lax.while_loop``, until the time passes a target,
  and reads y there from the step's quartic dense output (``value_at``);
  ``solve`` runs it over each interval of the output times, in a ``lax.scan``.
- The loop ends early after ``mxstep`` steps or when the step size collapses
  (0 or NaN); the time reached says so to the caller.
- The error ratio, which chooses the steps, carries no derivative: whatever
  differentiates the integrator follows the steps it took.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from funcdiff import lax
from funcdiff.core import get_aval
import funcdiff.numpy as fnp
from funcdiff.tree_util import tree_map

# Dormand–Prince 5(4): nodes, stage weights, the 5th-order weights (the last
# stage is f at the new point: first same as last), the error weights (5th
# minus 4th order) and Shampine's weights for y at the middle of the step.

_NODES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0)
_STAGES = ((1 / 5,),
           (3 / 40, 9 / 40),
           (44 / 45, -56 / 15, 32 / 9),
           (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
           (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656))
_SOLUTION = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84)
_ERROR = (71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40)
_MIDDLE = tuple(w / 2 for w in (6025192743 / 30085553152, 0.0, 51252292925 / 65400821598,
                                -2691868925 / 45128329728, 187940372067 / 1594534317056,
                                -1776094331 / 19743644256, 11237099 / 235043384))


class Settings(NamedTuple):
    """The tolerances, the most steps between two output times (inf: no limit) and
    the largest step."""
    rtol: float
    atol: float
    mxstep: float
    hmax: float


class Stepper(NamedTuple):
    """The integrator between steps: the state, its derivative, the time, the next
    step size, and the last step's start and dense-output quartic (lowest
    coefficient first, in the fraction of that step)."""
    y: Any
    f: Any
    t: Any
    h: Any
    t_prev: Any
    quartic: tuple


def _combine(weights: tuple, ks: list) -> Any:
    return sum(w * k for w, k in zip(weights, ks) if w != 0.0)


def _dopri_step(rhs: Callable, y, f, t, h) -> tuple:
    """One step of size h: the new state and derivative, the error estimate, y at mid-step."""
    ks = [f]
    for node, weights in zip(_NODES, _STAGES):
        ks.append(rhs(y + h * _combine(weights, ks), t + node * h))
    y_new = y + h * _combine(_SOLUTION, ks)
    f_new = rhs(y_new, t + h)
    ks.append(f_new)
    return y_new, f_new, h * _combine(_ERROR, ks), y + h * _combine(_MIDDLE, ks)


def _quartic(y0, y1, y_mid, f0, f1, h) -> tuple:
    """The quartic p(θ) on a step (θ from 0 to 1) through y0, y_mid, y1 with slopes
    h·f0 and h·f1 at the ends: its coefficients, lowest first."""
    d = h * f0
    end, slope, middle = y1 - y0 - d, h * f1 - d, y_mid - y0 - 0.5 * d
    return (y0, d, slope - 5.0 * end + 16.0 * middle, 14.0 * end - 3.0 * slope - 32.0 * middle,
            2.0 * slope - 8.0 * end + 16.0 * middle)


def _evaluate(quartic: tuple, theta) -> Any:
    out = quartic[-1]
    for c in quartic[-2::-1]:
        out = out * theta + c
    return out


def _rms(x) -> Any:
    return fnp.sqrt(fnp.mean(x * x))


def _error_ratio(err, y, y_new, s: Settings) -> Any:
    return _rms(err / (s.atol + s.rtol * fnp.maximum(fnp.abs(y), fnp.abs(y_new))))


def _next_step(h, ratio) -> Any:
    """The step after one with error ratio ``ratio``: never smaller after an accepted
    step, between a fifth and ten times the last."""
    factor = 0.9 * fnp.maximum(ratio, 1e-10) ** -0.2
    lowest = fnp.where(ratio <= 1.0, 1.0, 0.2).astype(get_aval(h).dtype)
    return h * fnp.clip(factor, lowest, 10.0)


def _first_step(rhs: Callable, y0, f0, t0, s: Settings) -> Any:
    """Hairer, Nørsett and Wanner's starting step (Solving ODEs I, II.4)."""
    scale = s.atol + s.rtol * fnp.abs(y0)
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    small = (d0 < 1e-5) | (d1 < 1e-5)
    h0 = fnp.where(small, 1e-6, 0.01 * d0 / fnp.where(small, 1.0, d1))
    f1 = rhs(y0 + h0 * f0, t0 + h0)
    d2 = _rms((f1 - f0) / scale) / h0
    top = fnp.maximum(d1, d2)
    flat = top <= 1e-15
    h1 = fnp.where(flat, fnp.maximum(1e-6, 1e-3 * h0),
                   (0.01 / fnp.where(flat, 1.0, top)) ** 0.2)
    return fnp.minimum(fnp.minimum(100.0 * h0, h1), s.hmax).astype(get_aval(y0).dtype)


def start(rhs: Callable, y0, t0, s: Settings) -> Stepper:
    """The integrator at ``t0``, before its first step."""
    f0 = rhs(y0, t0)
    zero = fnp.zeros_like(y0)
    return Stepper(y0, f0, t0, _first_step(rhs, y0, f0, t0, s), t0, (y0, zero, zero, zero, zero))


def step(rhs: Callable, st: Stepper, s: Settings) -> Stepper:
    """One attempted step: taken when its error ratio is at most 1, else retried smaller."""
    y_new, f_new, err, y_mid = _dopri_step(rhs, st.y, st.f, st.t, st.h)
    # the choice of steps has no derivative: a derivative follows the steps taken
    ratio = lax.stop_gradient(_error_ratio(err, st.y, y_new, s))
    h_next = fnp.minimum(_next_step(st.h, ratio), s.hmax)
    moved = Stepper(y_new, f_new, st.t + st.h, h_next, st.t,
                    _quartic(st.y, y_new, y_mid, st.f, f_new, st.h))
    kept = st._replace(h=h_next)
    accept = ratio <= 1.0
    return tree_map(lambda m, k: fnp.where(accept, m, k), moved, kept)


def can_step(st: Stepper, steps, s: Settings) -> Any:
    """Whether another step may follow ``steps`` steps."""
    more = st.h > 0.0  # false once the step size collapses to 0 or NaN
    return more if s.mxstep == np.inf else more & (steps < s.mxstep)


def value_at(st: Stepper, target) -> Any:
    """y at ``target`` (within the last step) from the last step's quartic."""
    width = st.t - st.t_prev
    theta = fnp.where(width > 0.0, (target - st.t_prev) / fnp.where(width > 0.0, width, 1.0), 1.0)
    return _evaluate(st.quartic, theta)


def advance(rhs: Callable, state: Stepper, target, s: Settings) -> tuple:
    """Step until ``state.t`` passes ``target`` (at most ``mxstep`` steps): the new
    state, y at ``target`` and the number of steps."""
    def going(carry):
        steps, st = carry
        return (st.t < target) & can_step(st, steps, s)

    def stepping(carry):
        steps, st = carry
        return steps + 1, step(rhs, st, s)

    steps, state = lax.while_loop(going, stepping, (np.int64(0), state))
    return state, value_at(state, target), steps


def solve(rhs: Callable, y0, ts, s: Settings) -> tuple:
    """y at every time of ``ts`` from ``y0`` at ``ts[0]``, the time each interval's
    steps reached, and how many steps each took."""
    def interval(state, target):
        state, y, steps = advance(rhs, state, target, s)
        return state, (y, state.t, steps)
    _, (ys, reached, steps) = lax.scan(interval, start(rhs, y0, ts[0], s), ts[1:])
    return fnp.concatenate([y0[None], ys]), reached, steps


