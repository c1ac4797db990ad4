"""``lax.custom_root`` and ``lax.custom_linear_solve``: solvers differentiated implicitly.

A solver's iterations are not differentiated: the derivative comes from the
equation the solution satisfies, as in JAX.

- ``custom_root(f, x0, solve, tangent_solve)``: ``x = solve(f, x0)`` with
  ``f(x) = 0``. For a change ``dp`` of the values ``f`` closes over,
  ``dx = -tangent_solve(J, df/dp dp)`` with ``J`` the linearisation of ``f`` at
  ``x`` (the implicit function theorem).
- ``custom_linear_solve(matvec, b, solve)``: ``x = solve(matvec, b)`` with
  ``matvec(x) = b``; ``dx = solve(matvec, db - dmatvec(x))``. Given
  ``transpose_solve`` (or ``symmetric=True``), reverse mode solves the adjoint
  system instead, so ``solve`` may be any algorithm (conjugate gradients);
  forward mode then is not available (a ``custom_vjp``).

``f``'s and ``matvec``'s closed-over values (weights, traced parameters) are
found by tracing them once (closure conversion) and become the arguments of a
``custom_jvp``, so every mode and order works; reverse mode transposes the
tangent rule, so ``tangent_solve`` (and ``solve`` of a linear solve without
``transpose_solve``) must be linear in its right-hand side as a funcdiff
program (``fnp.linalg.solve`` is; conjugate gradients is not), and should
compute with the function it is given rather than close over traced values
(those are converted for ``f`` and ``matvec`` only).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Zero, get_aval
from funcdiff.custom_derivatives import closure_convert, custom_jvp, custom_vjp
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.linearize import linearize_flat
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.interpreters.transpose import UndefinedPrimal, backward_pass
from funcdiff.ir import eval_jaxpr
from funcdiff.primitives.gradient_control import stop_gradient
from funcdiff.tree_util import tree_flatten, tree_map, tree_unflatten


def _closure_convert(f: Callable, example: Any):
    """``f`` as ``g(x, constants)``: the traced values it closes over become explicit
    (``custom_derivatives.closure_convert``). Returns ``g`` and the floating ones
    (the others stay fixed)."""
    leaves, tree = tree_flatten(example)
    out_trees = []

    def flat(*xs):
        out_leaves, out_tree = tree_flatten(f(tree_unflatten(tree, list(xs))))
        out_trees.append(out_tree)
        return out_leaves
    converted, lifted = closure_convert(
        trace_to_jaxpr(flat, [get_aval(x) for x in leaves], dynamic=False))
    inexact = [i for i, c in enumerate(lifted) if dtypes.is_inexact(get_aval(c).dtype)]

    def g(x: Any, differentiable: Any) -> Any:
        full = list(lifted)
        for i, c in zip(inexact, differentiable):
            full[i] = c
        return tree_unflatten(out_trees[0], eval_jaxpr(converted.jaxpr, converted.consts,
                                                       *full, *tree_flatten(x)[0]))
    return g, [lifted[i] for i in inexact]


def _jvp_tree(fun: Callable, primals: list, tangents: list) -> Any:
    """The tangent of ``fun(*primals)`` (a pytree) along ``tangents``, zeros as arrays."""
    trees = []

    def flat(*args):
        out, tree = tree_flatten(fun(*args))
        trees.append(tree)
        return out
    _, out = jvp_flat(flat, primals, tangents)
    return tree_unflatten(trees[0], [np.zeros(t.aval.shape, t.aval.dtype) if type(t) is Zero
                                     else t for t in out])


def _linearized(g: Callable, x: Any, consts: list) -> Callable:
    """``v -> J v``, the derivative of ``g(., consts)`` at ``x``."""
    x_leaves, x_tree = tree_flatten(x)

    def apply(v: Any) -> Any:
        return _jvp_tree(lambda *xs: g(tree_unflatten(x_tree, list(xs)), consts), x_leaves,
                         tree_flatten(v)[0])
    return apply


def custom_root(f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False) -> Any:
    """``solve(f, initial_guess)``, a root of ``f``, differentiated implicitly (lax.custom_root).

    Args:
      f: the function whose root is sought (it may close over traced values).
      initial_guess: the starting point (a pytree of arrays).
      solve: ``solve(f, x0) -> x`` with ``f(x) = 0`` (any algorithm; not differentiated).
      tangent_solve: ``tangent_solve(g, y) -> x`` solving the linear ``g(x) = y``.
      has_aux: ``solve`` returns ``(x, aux)``; aux is returned with no derivative.

    Returns:
      The root (and aux, with ``has_aux``).

    >>> import funcdiff as fd
    >>> def newton(f, x):
    ...     for _ in range(30):
    ...         x = x - f(x) / fd.grad(f)(x)
    ...     return x
    >>> sqrt = lambda a: custom_root(lambda x: x * x - a, 1.0, newton, lambda g, y: y / g(1.0))
    >>> round(float(sqrt(2.0)), 12), round(float(fd.grad(sqrt)(4.0)), 12)
    (1.414213562373, 0.25)
    """
    g, consts = _closure_convert(f, initial_guess)
    x0_leaves, x0_tree = tree_flatten(initial_guess)
    n = len(consts)
    aux_box = []

    def solved(args: list) -> Any:
        # the starting point is an argument too (not a closed-over value), so that no
        # value of an enclosing transform is kept inside the rule; it has no derivative
        cs, x0 = args[:n], tree_unflatten(x0_tree, [stop_gradient(v) for v in args[n:]])
        out = solve(lambda x: g(x, cs), x0)
        if has_aux:
            out, aux = out
            aux_box.append(tree_map(stop_gradient, aux))
        return tree_map(stop_gradient, out)

    @custom_jvp
    def root(*args):
        return solved(list(args))

    def root_jvp(primals, tangents):
        args = list(primals)
        x = root(*args)  # itself, so that a higher derivative sees x's dependence too
        cs = args[:n]
        rhs = _jvp_tree(lambda *c: g(x, list(c)), cs, list(tangents[:n]))
        dx = tangent_solve(_linearized(g, x, cs), tree_map(lambda r: -r, rhs))
        return x, dx
    root.defjvp(root_jvp)
    x = root(*consts, *x0_leaves)
    return (x, aux_box[-1]) if has_aux else x


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable,
                        transpose_solve: Callable | None = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """``solve(matvec, b)``, the ``x`` with ``matvec(x) = b``, differentiated implicitly
    (lax.custom_linear_solve): ``dx = solve(matvec, db - dmatvec(x))``.

    Args:
      matvec: the linear map (it may close over traced values, e.g. a matrix).
      b: the right-hand side (a pytree of arrays).
      solve: ``solve(matvec, b) -> x`` (any algorithm; linear in ``b``).
      transpose_solve: ``transpose_solve(vecmat, b)`` solving the transposed
        system, for reverse mode through the adjoint equation.
      symmetric: ``matvec`` is symmetric, so ``solve`` solves the adjoint system.
      has_aux: ``solve`` returns ``(x, aux)``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> def dense_solve(matvec, r):  # the matrix of matvec, from its Jacobian
    ...     return fnp.linalg.solve(fd.jacfwd(matvec)(fnp.zeros_like(r)), r)
    >>> def x_of(a, b):
    ...     return custom_linear_solve(lambda v: a @ v, b, dense_solve)
    >>> a, b = np.array([[3.0, 1.0], [1.0, 2.0]]), np.array([1.0, 0.0])
    >>> np.allclose(fd.jacrev(x_of, argnums=1)(a, b), np.linalg.inv(a))
    True
    """
    mv, consts = _closure_convert(matvec, b)
    aux_box = []
    b_leaves, b_tree = tree_flatten(b)
    n = len(consts)

    def solved(cs: list, rhs: Any, inverse: Callable = solve) -> Any:
        out = inverse(lambda v: mv(v, cs), rhs)
        if has_aux:
            out, aux = out
            aux_box.append(tree_map(stop_gradient, aux))
        return out

    def split(args: tuple) -> tuple:
        return list(args[:n]), tree_unflatten(b_tree, list(args[n:]))

    if transpose_solve is not None or symmetric:
        # reverse mode by the adjoint equation, so that solve itself (conjugate
        # gradients, say) is never differentiated or transposed: a custom_vjp
        @custom_vjp
        def linear_solve(*args):
            cs, rhs = split(args)
            return tree_map(stop_gradient, solved(cs, rhs))

        def fwd(*args):
            x = linear_solve(*args)
            return x, (args, x)

        def bwd(res, ct):
            args, x = res
            cs, _ = split(args)
            # the adjoint system: matvec^T lam = ct (matvec itself when symmetric)
            lam = solved(cs, ct, solve if symmetric else
                         (lambda mvt, r: transpose_solve(mvt, r)))
            d_cs = _vjp_tree(lambda *c: mv(x, list(c)), cs, lam)
            return tuple(-d for d in d_cs) + tuple(tree_flatten(lam)[0])
        linear_solve.defvjp(fwd, bwd)
    else:
        @custom_jvp
        def linear_solve(*args):
            cs, rhs = split(args)
            return tree_map(stop_gradient, solved(cs, rhs))

        def linear_solve_jvp(primals, tangents):
            cs, _ = split(primals)
            x = linear_solve(*primals)
            d_matvec = _jvp_tree(lambda *c: mv(x, list(c)), cs, list(tangents[:n]))
            db = tree_unflatten(b_tree, list(tangents[n:]))
            return x, solved(cs, tree_map(lambda u, w: u - w, db, d_matvec))
        linear_solve.defjvp(linear_solve_jvp)
    x = linear_solve(*consts, *b_leaves)
    return (x, aux_box[-1]) if has_aux else x


def _vjp_tree(fun: Callable, primals: list, cotangent: Any) -> tuple:
    """The cotangents of ``primals`` for ``cotangent`` of ``fun(*primals)`` (a pytree):
    the transpose of its linearisation."""
    trees = []

    def flat(*args):
        out, tree = tree_flatten(fun(*args))
        trees.append(tree)
        return out
    _, lin = linearize_flat(flat, primals)
    cts = [c for c, z in zip(tree_flatten(cotangent)[0], lin.out_is_zero) if not z]
    undefined = [UndefinedPrimal(v.aval) for v in lin.jaxpr.jaxpr.invars]
    staged = iter(backward_pass(lin.jaxpr.jaxpr, lin.jaxpr.consts, undefined, cts))
    out = []
    for p, m in zip(primals, lin.in_mask):
        ct = next(staged) if m else None
        out.append(np.zeros(np.shape(p), get_aval(p).dtype) if ct is None or type(ct) is Zero
                   else ct)
    return tuple(out)


__all__ = ["custom_root", "custom_linear_solve"]
