"""Zero propagation: the pass ``eliminate_zeros``, and when a factor is certainly finite.

Differentiation leaves computations with arrays known to be zero behind
(broadcast zeros, zero constants). ``eliminate_zeros`` propagates them,
x+0 -> x, x*0 -> 0 (finite x), f(0) -> 0 for f(0) = 0, so that every zero
that remains is one broadcast of a scalar literal. Like every optimisation
pass it is a function ClosedJaxpr -> ClosedJaxpr that preserves the
program's meaning, never mutates its input and returns its input unchanged
when it finds nothing to do; it rebuilds the program with
``rewriter.Rewriter``, and ``pipeline.optimize`` runs it with the other
passes to a fixed point.

- The rules are the ``rules.on_zeros`` rows on each primitive's card (x + 0 on
  add's, a scatter-add of zeros on scatter_add's, ...), written with the
  patterns ``ZERO`` and ``ZERO_OR_FINITE`` defined here, then f(0) -> 0 for
  every ``ZERO_PRESERVING`` primitive.
- ``finite`` decides that a factor is certainly finite from the traits
  ``FINITE_PRESERVING``, ``ALWAYS_FINITE`` and ``FINITE_FROM_INTEGERS``.

IEEE semantics are kept except for the sign of zero (``x + 0`` becomes ``x``,
so -0.0 + 0.0 gives -0.0): ``x * 0`` is rewritten to 0 only when ``x`` is
certainly finite, since inf * 0 is nan; ``safe_mul``, whose meaning is that
0 times anything is 0, always vanishes with a zero factor.
"""

from __future__ import annotations

import numpy as np

from funcdiff import roles
from funcdiff.ir import ClosedJaxpr, Eqn, Literal, Var
from funcdiff.passes.rewriter import MAX_FILL_SCAN, Rewriter, aval_size
from funcdiff.passes.rules import NO_MATCH, ZEROS, Pattern, run
from funcdiff.passes.traits import (ALWAYS_FINITE, FINITE_FROM_INTEGERS, FINITE_PRESERVING,
                                    ZERO_PRESERVING)


def is_zero(rw: Rewriter, a) -> bool:
    """Whether atom ``a`` (already read) is known to be zero and not empty."""
    return aval_size(a.aval) > 0 and rw.is_fill(a, 0)


def finite(rw: Rewriter, a, depth: int = 0) -> bool:
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
    traits = eqn.primitive.traits
    if FINITE_FROM_INTEGERS in traits:
        return eqn.invars[0].aval.dtype.kind in "biu"
    if ALWAYS_FINITE in traits:
        return True
    return FINITE_PRESERVING in traits and finite(rw, eqn.invars[0], depth + 1)


ZERO = Pattern("an operand known to be zero",
               lambda rw, a, out: a if is_zero(rw, a) else NO_MATCH)
ZERO_OR_FINITE = Pattern("an operand known to be zero or certainly finite",
                         lambda rw, a, out: a if is_zero(rw, a) or finite(rw, a) else NO_MATCH,
                         cost=3)


def _zeros_one(rw: Rewriter, eqn: Eqn, rules_of) -> bool:
    if len(eqn.outvars) != 1:
        return False
    prim = eqn.primitive
    rules = rules_of[prim]
    zero_preserving = ZERO_PRESERVING in prim.traits
    if not (rules or zero_preserving):
        return False
    ins = [rw.read(a) for a in eqn.invars]
    z = [is_zero(rw, a) for a in ins]
    if not any(z) or (prim is roles.BROADCAST.primitive and type(ins[0]) is Literal):
        return False  # (a broadcast literal zero is already the canonical zero)
    if run(rules, rw, eqn, ins):
        return True
    if zero_preserving and z[0]:
        rw.replace(eqn.outvars[0], rw.zeros(eqn.outvars[0].aval))
        return True
    return False


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
    rules_of = ZEROS.table()
    for eqn in closed.jaxpr.eqns:
        if not _zeros_one(rw, eqn, rules_of):
            rw.emit(eqn)
    return rw.finish()
