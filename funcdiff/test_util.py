"""Checking derivatives against central finite differences.

``check_grads`` compares forward mode (jvp) and reverse mode (vjp) of a
function with central differences along random directions, checks the adjoint
identity ``<u, J v> == <J^T u, v>`` that ties the two modes together, and
recurses to check higher orders: the derivative functions are themselves
differentiated.

Complex arguments and outputs follow JAX's convention: a tangent direction is
a random complex array (so the finite differences step in the real and the
imaginary part at once), and a cotangent ``u`` pairs with a value ``y`` as
``Re(sum(u * y))``, unconjugated, which is the pairing reverse mode transposes
under.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import api, dtypes
from funcdiff.interpreters import tape
from funcdiff.errors import FunctionalDiffError
from funcdiff.tree_util import tree_flatten, tree_unflatten

_DEFAULT_EPS = {np.dtype(np.float64): 1e-4, np.dtype(np.float32): 3e-2}
_DEFAULT_TOL = {np.dtype(np.float64): 1e-5, np.dtype(np.float32): 2e-2}


class GradientCheckError(FunctionalDiffError, AssertionError):
    """A derivative disagrees with finite differences or with the other mode."""


def _random_like(x: Any, rng: np.random.Generator) -> Any:
    a = np.asarray(x)
    if dtypes.is_complex(a.dtype):
        return (rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)).astype(a.dtype)
    if not dtypes.is_float(a.dtype):
        return np.zeros(a.shape, dtypes.float0)
    return rng.standard_normal(a.shape).astype(a.dtype)


def _wide(x: np.ndarray) -> np.ndarray:
    """``x`` in float64, or complex128 for complex values (never dropping a part)."""
    return x.astype(np.complex128 if dtypes.is_complex(x.dtype) else np.float64)


def _flat_float(tree: Any) -> list[np.ndarray]:
    return [np.asarray(l) for l in tree_flatten(tree)[0]]


def _vdot(a: Any, b: Any) -> float:
    """``Re(sum(a * b))`` over the leaves: the unconjugated pairing of JAX's convention."""
    total = 0.0
    for x, y in zip(_flat_float(a), _flat_float(b)):
        if dtypes.is_inexact(x.dtype) and dtypes.is_inexact(y.dtype):
            total += float(np.real(np.sum(_wide(x) * _wide(y))))
    return total


def _axpy(alpha: float, v: Any, x: Any) -> Any:
    """``x + alpha * v`` on pytrees, leaving integer leaves alone."""
    leaves, tree = tree_flatten(x)
    v_leaves = tree_flatten(v)[0]
    out = []
    for xl, vl in zip(leaves, v_leaves):
        xa = np.asarray(xl)
        if dtypes.is_inexact(xa.dtype):
            out.append((xa + alpha * np.asarray(vl)).astype(xa.dtype))
        else:
            out.append(xl)
    return tree_unflatten(tree, out)


def _sub_scaled(a: Any, b: Any, scale: float) -> Any:
    la, tree = tree_flatten(a)
    lb = tree_flatten(b)[0]
    return tree_unflatten(tree, [(_wide(np.asarray(x)) - _wide(np.asarray(y))) * scale
                                 for x, y in zip(la, lb)])


def _assert_close(name: str, expected: Any, actual: Any, atol: float, rtol: float) -> None:
    le, tree_e = tree_flatten(expected)
    la, tree_a = tree_flatten(actual)
    if tree_e != tree_a:
        raise GradientCheckError(f"{name}: structures differ: {tree_e} vs {tree_a}")
    for i, (e, a) in enumerate(zip(le, la)):
        e, a = np.asarray(e), np.asarray(a)
        if a.dtype == dtypes.float0 or e.dtype == dtypes.float0:
            continue
        if e.shape != a.shape:
            raise GradientCheckError(f"{name}: leaf {i} has shape {a.shape}, expected {e.shape}")
        if dtypes.is_complex(a.dtype) != dtypes.is_complex(e.dtype) and (
                np.any(np.imag(a)) or np.any(np.imag(e))):
            raise GradientCheckError(f"{name}: leaf {i} is {a.dtype}, expected {e.dtype}")
        if not np.allclose(_wide(a), _wide(e), atol=atol, rtol=rtol, equal_nan=True):
            err = np.max(np.abs(_wide(a) - _wide(e)))
            raise GradientCheckError(
                f"{name}: leaf {i} differs (max abs error {err:.3g}, atol={atol}, "
                f"rtol={rtol}).\nexpected:\n{e}\nactual:\n{a}")


def _numerical_jvp(f: Callable, args: Sequence[Any], tangents: Sequence[Any], eps: float) -> Any:
    plus = f(*_axpy(eps, tangents, tuple(args)))
    minus = f(*_axpy(-eps, tangents, tuple(args)))
    return _sub_scaled(plus, minus, 0.5 / eps)


def _default(table: dict, args: Sequence[Any], given: float | None) -> float:
    if given is not None:
        return given
    float_dtypes = [dtypes.real_dtype(np.asarray(l).dtype) for l in tree_flatten(tuple(args))[0]
                    if dtypes.is_inexact(np.asarray(l).dtype)]
    return max((table.get(d, table[np.dtype(np.float32)]) for d in float_dtypes),
               default=table[np.dtype(np.float64)])


def check_jvp(f: Callable, args: Sequence[Any], *, eps: float | None = None,
              atol: float | None = None, rtol: float | None = None, seed: int = 0) -> None:
    """Check ``jvp(f)`` against central differences along a random direction."""
    rng = np.random.default_rng(seed)
    eps = _default(_DEFAULT_EPS, args, eps)
    atol = _default(_DEFAULT_TOL, args, atol)
    rtol = _default(_DEFAULT_TOL, args, rtol)
    tangents = tuple(_random_like_tree(a, rng) for a in args)
    _, out_tangent = api.jvp(f, tuple(args), tangents)
    expected = _numerical_jvp(f, args, tangents, eps)
    _assert_close("jvp vs finite differences", expected, out_tangent, atol, rtol)


def _random_like_tree(tree: Any, rng: np.random.Generator) -> Any:
    leaves, t = tree_flatten(tree)
    return tree_unflatten(t, [_random_like(l, rng) for l in leaves])


def check_vjp(f: Callable, args: Sequence[Any], *, eps: float | None = None,
              atol: float | None = None, rtol: float | None = None, seed: int = 0) -> None:
    """Check ``vjp(f)`` through the adjoint identity with a numerical jvp.

    ``<u, J v>`` with ``J v`` from central differences must equal
    ``<J^T u, v>`` with ``J^T u`` from reverse mode.
    """
    rng = np.random.default_rng(seed + 1)
    eps = _default(_DEFAULT_EPS, args, eps)
    atol = _default(_DEFAULT_TOL, args, atol)
    rtol = _default(_DEFAULT_TOL, args, rtol)
    out, pullback = api.vjp(f, *args)
    u = _random_like_tree(out, rng)
    v = tuple(_random_like_tree(a, rng) for a in args)
    cts = pullback(u)
    if tape.usable():  # eager reverse mode ran on the tape: the staged route must agree
        with tape.disabled():
            staged = api.vjp(f, *args)[1](u)
        _assert_close("reverse mode on the eager tape vs by linearize + transpose",
                      staged, cts, atol, rtol)
    lhs = _vdot(u, _numerical_jvp(f, args, v, eps))
    rhs = _vdot(cts, v)
    scale = max(1.0, abs(lhs), abs(rhs))
    if abs(lhs - rhs) > atol * scale + rtol * abs(lhs):
        raise GradientCheckError(
            f"vjp fails the adjoint test: <u, J v> = {lhs!r} by finite differences but "
            f"<J^T u, v> = {rhs!r} by reverse mode.")


def check_grads(f: Callable, args: Sequence[Any], order: int = 2,
                modes: Sequence[str] = ("fwd", "rev"), eps: float | None = None,
                atol: float | None = None, rtol: float | None = None, seed: int = 0) -> None:
    """Check the derivatives of ``f`` at ``args`` up to ``order``, in each mode.

    Forward mode is compared with central differences; reverse mode through the
    adjoint identity. For ``order > 1`` the check recurses on the derivative
    functions ``x -> jvp(f, x, v)[1]`` and ``x -> vjp(f, x)[1](u)``.

    Args:
      f: function of ``args`` (pytrees of float or complex arrays) returning arrays.
      args: tuple of arguments.
      order: highest derivative order to check.
      modes: any of "fwd" and "rev".
      eps: finite-difference step (default 1e-4 in float64).
      atol, rtol: tolerances (default 1e-5 in float64).
      seed: seed of the random directions.

    Raises:
      GradientCheckError: naming the mode and order that failed.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> from funcdiff.test_util import check_grads
    >>> check_grads(lambda x: fnp.sin(x) * x, (np.array([0.3, 1.2]),), order=2)
    >>> check_grads(lambda z: fnp.exp(z) * fnp.conj(z), (np.array([0.3 + 1j, -1.2j]),), order=2)
    """
    args = tuple(args)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"check_grads modes must be 'fwd' or 'rev', not {mode!r}")
    rng = np.random.default_rng(seed + 7)
    kw = dict(eps=eps, atol=atol, rtol=rtol, seed=seed)
    if "fwd" in modes:
        try:
            check_jvp(f, args, **kw)
        except GradientCheckError as e:
            raise GradientCheckError(f"[fwd, order {order}] {e}") from None
        if order > 1:
            v = tuple(_random_like_tree(a, rng) for a in args)
            check_grads(lambda *x: api.jvp(f, x, v)[1], args, order - 1, modes,
                        eps, atol, rtol, seed + 11)
    if "rev" in modes:
        try:
            check_vjp(f, args, **kw)
        except GradientCheckError as e:
            raise GradientCheckError(f"[rev, order {order}] {e}") from None
        if order > 1:
            out = f(*args)
            u = _random_like_tree(out, rng)
            check_grads(lambda *x: api.vjp(f, *x)[1](u), args, order - 1, modes,
                        eps, atol, rtol, seed + 13)


__all__ = ["check_grads", "check_jvp", "check_vjp", "GradientCheckError"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
