"""autograd's ``fixed_point``: iterate to a fixed point, differentiate it implicitly.

``fixed_point(f, a, x0, distance, tol)`` iterates ``x = f(a, x)`` from ``x0``
until ``distance(x, previous) < tol``. Its derivative with respect to ``a``
does not go through the iterations: at the fixed point x* = f(a, x*), the
implicit function theorem gives the cotangent of ``a`` for a cotangent ``g``
of x* as ``vjp_a(v)`` with ``v`` the fixed point of ``v = g + vjp_x(v)``
(the vjps of f at (a, x*)), found by the same iteration.
"""

from __future__ import annotations

from typing import Any, Callable

from funcdiff import api
from funcdiff.custom_derivatives import custom_vjp
from funcdiff.primitives.gradient_control import stop_gradient


def _iterate(step: Callable, x: Any, distance: Callable, tol: float) -> Any:
    while True:
        new = step(x)
        # the stopping test is a decision, not part of the function: no derivative
        if distance(stop_gradient(new), stop_gradient(x)) < tol:
            return new
        x = new


def fixed_point(f: Callable, a: Any, x0: Any, distance: Callable, tol: float) -> Any:
    """The fixed point of ``x -> f(a, x)`` from ``x0``, differentiable in ``a``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp
    >>> newton_sqrt = lambda a, x: 0.5 * (x + a / x)
    >>> dist = lambda x, y: float(fnp.abs(x - y))
    >>> root = lambda a: fixed_point(newton_sqrt, a, 1.0, dist, 1e-12)
    >>> round(float(root(4.0)), 9), round(float(fd.grad(root)(4.0)), 9)
    (2.0, 0.25)
    """
    @custom_vjp
    def solve(a):
        return _iterate(lambda x: f(a, x), x0, distance, tol)

    def solve_fwd(a):
        x_star = solve(a)
        return x_star, (a, x_star)

    def solve_bwd(res, g):
        a, x_star = res
        _, vjp_x = api.vjp(lambda x: f(a, x), x_star)
        v = _iterate(lambda v: g + vjp_x(v)[0], g, distance, tol)
        _, vjp_a = api.vjp(lambda p: f(p, x_star), a)
        return vjp_a(v)
    solve.defvjp(solve_fwd, solve_bwd)
    return solve(a)


__all__ = ["fixed_point"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
