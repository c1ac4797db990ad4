"""Zero propagation: the pass ``eliminate_zeros``, and when a factor is certainly finite.

Differentiation leaves computations with arrays known to be zero behind
(broadcast zeros, zero constants). ``eliminate_zeros`` propagates them,
x+0 -> x, x*0 -> 0 (finite x), f(0) -> 0 for f(0) = 0, so that every zero
that remains is one broadcast of a scalar literal. Like every optimisation
pass it is a function ClosedJaxpr -> ClosedJaxpr that preserves the
program's meaning, never mutates its input and returns its input unchanged
when it finds nothing to do; it rebuilds the program with
``rewriter.Rewriter``, and ``optimize`` in ``passes.py`` runs it with the
other passes to a fixed point.

IEEE semantics are kept except for the sign of zero (``x + 0`` becomes ``x``,
so -0.0 + 0.0 gives -0.0): ``x * 0`` is rewritten to 0 only when ``x`` is
certainly finite, since inf * 0 is nan; ``safe_mul``, whose meaning is that
0 times anything is 0, always vanishes with a zero factor.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcdiff.passes.rewriter import MAX_FILL_SCAN, Rewriter, aval_size
from funcdiff.ir import ClosedJaxpr, Eqn, Literal, Var

# unary primitives with f(0) = 0 (and linear or odd), and structural ones that move zeros
_ZERO_PRESERVING_UNARY = frozenset((
    "neg", "sin", "tan", "tanh", "sinh", "asin", "atan", "asinh", "atanh", "sqrt", "cbrt",
    "expm1", "log1p", "abs", "sign", "floor", "ceil", "round", "erf", "erf_inv",
    "stop_gradient", "convert_element_type", "reshape", "squeeze", "expand_dims",
    "transpose", "broadcast_in_dim", "rev", "slice", "reduce_sum", "reduce_max",
    "reduce_min", "cumsum", "cummax", "cummin"))


# ---------------------------------------------------------------------------
# eliminate_zeros


def _zeros_one(rw: Rewriter, eqn: Eqn, zero: Callable[[Any], bool]) -> bool:
    name = eqn.primitive.name
    if len(eqn.outvars) != 1:
        return False
    out = eqn.outvars[0]
    ins = [rw.read(a) for a in eqn.invars]
    z = [zero(a) for a in ins]
    if not any(z) or (name == "broadcast_in_dim" and type(ins[0]) is Literal):
        return False  # (a broadcast literal zero is already the canonical zero)
    if name in ("add", "sub"):
        x, y = ins
        if z[0] and z[1]:
            rw.replace(out, rw.zeros(out.aval))
            return True
        if z[1]:
            new = rw.broadcast(x, out.aval)
        else:
            new = rw.broadcast(y, out.aval)
            if new is not None and name == "sub":
                new = rw.add("neg", new)
        if new is None:
            return False
        rw.replace(out, new)
        return True
    if name in ("safe_mul", "and") or (
            name in ("mul", "dot_general") and all(zi or _finite(rw, a) for zi, a in zip(z, ins))):
        rw.replace(out, rw.zeros(out.aval))  # (inf * 0 is nan: only finite factors vanish)
        return True
    if name in _ZERO_PRESERVING_UNARY and z[0]:
        rw.replace(out, rw.zeros(out.aval))
        return True
    if name == "integer_pow" and z[0] and eqn.params["y"] > 0:
        rw.replace(out, rw.zeros(out.aval))
        return True
    if (name in ("concatenate", "pad") and all(z)) or (name == "select" and z[1] and z[2]):
        rw.replace(out, rw.zeros(out.aval))
        return True
    if name == "dynamic_slice" and z[0]:
        rw.replace(out, rw.zeros(out.aval))
        return True
    if name in ("scatter_add", "scatter", "dynamic_update_slice"):
        update = 2 if name != "dynamic_update_slice" else 1
        if z[update] and name == "scatter_add":
            rw.replace(out, ins[0])  # adding zeros to an operand
            return True
        if z[0] and z[update]:
            rw.replace(out, rw.zeros(out.aval))
            return True
    return False


_FINITE_PRESERVING = frozenset(("broadcast_in_dim", "reshape", "squeeze", "expand_dims",
                                "transpose", "rev", "slice", "neg", "abs", "sign"))


def _finite(rw: Rewriter, a, depth: int = 0) -> bool:
    """Whether atom ``a`` is certainly finite: integers, finite constants, floats
    converted from integers, and moves of those (values from inputs may be inf)."""
    a = rw.read(a)
    if a.aval.dtype.kind in "biu":
        return True
    value = rw.value(a)
    if value is not None:
        arr = np.asarray(value)
        return arr.size <= MAX_FILL_SCAN and bool(np.all(np.isfinite(arr)))
    eqn = rw.producer.get(a) if type(a) is Var else None
    if eqn is None or depth > 8:
        return False
    name = eqn.primitive.name
    if name == "convert_element_type":
        return eqn.invars[0].aval.dtype.kind in "biu"
    if name == "is_finite" or name in ("iota",):
        return True
    return name in _FINITE_PRESERVING and _finite(rw, eqn.invars[0], depth + 1)


def eliminate_zeros(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Propagate values known to be zero and drop the work they make useless.

    A value is known zero when it is a zero literal or constant or a broadcast
    of one, or is computed from zeros by a rule below. ``x + 0`` and ``x - 0``
    become ``x`` (broadcast if the zero was larger), ``0 - x`` becomes
    ``neg x``, products with a zero factor become zeros (``safe_mul`` always;
    ``mul`` and ``dot_general`` when the other factor is certainly finite, as
    inf * 0 is nan), zero-preserving unary and structural primitives of zeros become
    zeros, and scatter-adding zeros returns the operand. Every zero that
    remains is one broadcast of a scalar literal: a view, never a filled array.
    """
    rw = Rewriter(closed)

    def zero(a) -> bool:
        return aval_size(a.aval) > 0 and rw.is_fill(a, 0)
    for eqn in closed.jaxpr.eqns:
        if not _zeros_one(rw, eqn, zero):
            rw.emit(eqn)
    return rw.finish()
