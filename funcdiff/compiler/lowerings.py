"""The numpy lowerings a primitive's card can declare for the compiler (``prim.lowering``).

A lowering rule is ``rule(em, eqn, args) -> (expr, fresh) | None``: ``em`` is
the ``compile.Emitter`` generating the program (``em.ns`` holds every value
the source refers to, under generated names; ``em.pool``, ``em.is_numpy``,
``em.program.resolve`` and ``em.ufunc_call`` are there for rules), ``args``
are the names of the equation's operands, ``expr`` the Python expression
computing its result, and ``fresh`` whether that result is certainly a new
array of the output's shape and dtype (so a later ufunc may write into it).
None means "no faster form for this equation": the compiler calls the impl.
A primitive without a lowering whose impl is a numpy ufunc is called as that
ufunc; others call their impl.

The cards choose from the rules and rule makers below (``lower_ufunc(np.add)``,
``lower_reduce(np.add, "iufc")``, ``lower_dot_general``, ...) and may declare
``CONSTANT_VIEW``, a trait the compiler reads.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from funcdiff.core import Trait

CONSTANT_VIEW = Trait(
    "constant_view", "on a literal or constant operand the result is a view of it, "
    "allocating nothing: the compiler computes it once, when it compiles the program, "
    "and every run shares it read-only (a broadcast)")


def take_buffer(pool: list) -> Any:
    """A recycled buffer from ``pool``, or None (the ufunc then allocates)."""
    try:
        return pool.pop()
    except IndexError:  # empty (pop, not a test first: another thread may share it)
        return None


# ---------------------------------------------------------------------------
# Elementwise


def lower_ufunc(ufunc: np.ufunc, *, kinds: str | None = None,
                last_operand: str | None = None) -> Callable:
    """The rule running an elementwise primitive as ``ufunc`` (with ``out=`` where
    safe): for a primitive whose impl is not that ufunc itself (a Python operator,
    a function also serving integers). With ``kinds`` only for results of those
    dtype kinds; ``last_operand`` names a param passed as the ufunc's last operand
    (integer_pow's exponent). Without it, only equations with no params."""
    def lower(em, eqn, args):
        if kinds is not None and eqn.outvars[0].aval.dtype.kind not in kinds:
            return None
        if last_operand is not None:
            return em.ufunc_call(eqn, ufunc, args + [em.ns.add("p", eqn.params[last_operand],
                                                               False)])
        if eqn.params:
            return None
        return em.ufunc_call(eqn, ufunc, args)
    # what the rule computes, for the fusion of elementwise chains (elementwise_fusion)
    lower.ufunc = ufunc if last_operand is None else None
    lower.kinds = kinds
    return lower


def _safe_mul_fast(impl: Callable) -> Callable:
    """safe_mul as its impl computes it, with a cheaper test for the common case:
    a finite sum of squares of the product (one BLAS dot) means every element
    is finite, so no zero factor met an inf; otherwise (also when the squares
    overflow) the impl itself recomputes the result."""
    multiply, squares = np.multiply, np.vdot

    def safe_mul(x, y):
        out = multiply(x, y)
        s = squares(out, out) if type(out) is np.ndarray else out
        if s - s == 0:
            return out
        return impl(x, y)
    return safe_mul


def lower_safe_mul(em, eqn, args):
    """The product in which 0 times anything is 0, checked by one BLAS dot (floats)."""
    if eqn.outvars[0].aval.dtype.kind != "f":
        return None
    f = em.ns.add("f", _safe_mul_fast(eqn.primitive.impl))
    return f"{f}({', '.join(args)})", eqn.outvars[0].aval.ndim > 0


def lower_convert(em, eqn, args):
    """A dtype conversion as ``x.astype(dtype)``."""
    x, out = em.program.resolve(eqn.invars[0]), eqn.outvars[0]
    if not em.is_numpy(x) or x.aval.dtype == out.aval.dtype:
        return None
    return f"{args[0]}.astype({em.ns.add('p', out.aval.dtype)})", out.aval.ndim > 0


# ---------------------------------------------------------------------------
# Reductions and products


def lower_reduce(ufunc: np.ufunc, kinds: str) -> Callable:
    """The rule reducing over the ``axes`` param with ``ufunc.reduce``, for operands
    of dtype ``kinds``."""
    def lower(em, eqn, args):
        x, axes = eqn.invars[0], tuple(eqn.params["axes"])
        if x.aval.dtype.kind not in kinds or not axes:
            return None
        f = em.ns.add("f", ufunc.reduce)
        axis = em.ns.add("p", axes[0] if len(axes) == 1 else axes, False)
        if x.aval.dtype.kind in "fc":  # (integer sums would widen without a dtype)
            return f"{f}({args[0]}, {axis})", eqn.outvars[0].aval.ndim > 0
        dtype = em.ns.add("p", x.aval.dtype)
        return f"{f}({args[0]}, {axis}, {dtype})", eqn.outvars[0].aval.ndim > 0
    return lower


def _dot_into(a, b, pool: list):
    """``np.dot(a, b)``, written into a recycled buffer when one is free (np.dot
    takes only a C-contiguous ``out`` of the exact result dtype; the pool's key
    guarantees shape and dtype)."""
    buf = take_buffer(pool)
    if buf is not None and buf.flags.c_contiguous:
        return np.dot(a, b, out=buf)
    return np.dot(a, b)


def lower_dot_general(em, eqn, args):
    """``np.dot`` for matrix and vector products (as the impl); other contractions
    without batch axes as ``np.tensordot`` does them, spelled out: transpose and
    reshape both operands to matrices, one ``np.dot``, reshape the result."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    x, y = (em.program.resolve(a).aval for a in eqn.invars)
    if lb or x.ndim == 0 or y.ndim == 0:
        return None
    dot = em.ns.add("f", np.dot)
    a, b = args
    if len(lc) == 1 and x.ndim <= 2 and y.ndim <= 2:
        out = eqn.outvars[0].aval
        pool = em.pool(out) if out.dtype.kind in "fc" else None
        plain = lc == (x.ndim - 1,) and rc == (0,)
        if not plain and x.ndim == 2 and y.ndim == 2:
            a = a if lc == (1,) else f"{a}.T"
            b = b if rc == (0,) else f"{b}.T"
            plain = True
        if plain:
            if pool is not None:
                return f"{em.ns.add('f', _dot_into)}({a}, {b}, {pool})", True
            return f"{dot}({a}, {b})", out.ndim > 0
    x_free = [i for i in range(x.ndim) if i not in lc]
    y_free = [i for i in range(y.ndim) if i not in rc]
    k = math.prod([x.shape[i] for i in lc])

    def as_matrix(name, aval, order, shape):
        if list(order) != list(range(aval.ndim)):
            name = f"{name}.transpose({em.ns.add('p', tuple(order), False)})"
        if tuple(aval.shape[i] for i in order) != shape:
            name = f"{name}.reshape({em.ns.add('p', shape, False)})"
        return name

    def size(aval, axes):
        return math.prod([aval.shape[i] for i in axes])
    xm = as_matrix(a, x, x_free + list(lc), (size(x, x_free), k))
    ym = as_matrix(b, y, list(rc) + y_free, (k, size(y, y_free)))
    out_shape = eqn.outvars[0].aval.shape
    expr = f"{dot}({xm}, {ym})"
    if len(x_free) != 1 or len(y_free) != 1:
        expr = f"{expr}.reshape({em.ns.add('p', tuple(out_shape), False)})"
    return expr, False


# ---------------------------------------------------------------------------
# Data movement


def lower_reshape(em, eqn, args):
    """Any change of shape keeping the elements' order, as ``x.reshape(shape)``."""
    shape = em.ns.add("p", tuple(eqn.outvars[0].aval.shape), False)
    if em.is_numpy(eqn.invars[0]):
        return f"{args[0]}.reshape({shape})", False
    return f"{em.ns.add('f', np.reshape)}({args[0]}, {shape})", False


def lower_transpose(em, eqn, args):
    """An axis permutation (the ``permutation`` param) as ``x.transpose(perm)``."""
    perm = em.ns.add("p", tuple(eqn.params["permutation"]), False)
    if em.is_numpy(eqn.invars[0]):
        return f"{args[0]}.transpose({perm})", False
    return None


def lower_slice(em, eqn, args):
    """A strided slice with static bounds as basic indexing ``x[a:b:s, ...]``."""
    p = eqn.params
    if not em.is_numpy(eqn.invars[0]):
        return None
    strides = p["strides"] or (None,) * len(p["start_indices"])
    index = tuple(slice(s, e, st) for s, e, st in zip(p["start_indices"], p["limit_indices"],
                                                      strides))
    return f"{args[0]}[{em.ns.add('p', index, False)}]", False


def _padded(x, value, shape: tuple, index: tuple, pool: list):
    """``x`` written at ``index`` into an array of ``shape`` filled with ``value``
    (a recycled buffer from ``pool`` when one is free; None: no pool)."""
    out = None if pool is None else take_buffer(pool)
    if out is None:
        out = np.full(shape, value, x.dtype)
    else:
        out.fill(value)
    out[index] = x
    return out


def pad_index(shape: tuple, padding_config: tuple) -> tuple:
    """Where a pad writes its operand of ``shape``: a strided basic index into the
    padded array (interior padding is the stride; negative sides count as 0, as
    the pad's impl crops them afterwards)."""
    return tuple(slice(max(lo, 0), max(lo, 0) + (n - 1) * (i + 1) + 1 if n else 0, i + 1)
                 for n, (lo, _, i) in zip(shape, padding_config))


def lower_pad(em, eqn, args):
    """A pad with no negative (cropping) sides as a filled array with the operand
    written into it at a strided basic index (interior padding is the stride)."""
    config = eqn.params["padding_config"]
    x = em.program.resolve(eqn.invars[0]).aval
    out = eqn.outvars[0].aval
    if not em.is_numpy(eqn.invars[0]) or any(lo < 0 or hi < 0 for lo, hi, _ in config):
        return None
    index = pad_index(x.shape, config)
    return (f"{em.ns.add('f', _padded)}({args[0]}, {args[1]}, "
            f"{em.ns.add('p', tuple(out.shape), False)}, {em.ns.add('p', index, False)}, "
            f"{em.pool(out) or None})"), True


def lower_concatenate(em, eqn, args):
    """Joining along the ``dimension`` param with ``np.concatenate``."""
    f = em.ns.add("f", np.concatenate)
    axis = em.ns.add("p", eqn.params["dimension"], False)
    return f"{f}(({', '.join(args)},), {axis})", True
