"""The optimisation pipeline: ``optimize`` runs the passes over a jaxpr to a fixed point.

Differentiation leaves redundant work behind: multiplications by one,
additions of zeros, reshapes to the same shape, transposes of transposes,
sums of broadcasts, values computed twice, values computed and never used.
Each pass is a function ClosedJaxpr -> ClosedJaxpr that removes one kind,
preserves the program's meaning (values and, since rewrites only use
primitives, derivatives too), never mutates its input and returns its input
unchanged when it finds nothing to do; ``optimize`` inlines nested calls,
then runs ``PASSES`` in order until a round changes nothing.

This module holds only ``PASSES`` and ``optimize``. The passes live next to
it, one concept per module, and are re-exported here:

- ``generic.py``, the passes that treat every primitive alike:
  ``inline_calls`` (splice nested call programs, inner jit, into the caller),
  ``fold_constants`` (evaluate equations whose inputs are all known now),
  ``eliminate_common_subexpressions`` (reuse an equal equation's result) and
  ``eliminate_dead_code`` (drop equations whose results are unused).
- ``algebra.py``, the algebraic rewrites: ``forward_identities`` (drop
  reshape/transpose/convert/broadcast/... that do nothing) and
  ``simplify_algebra`` (x*1, x+0, neg(neg x), transpose of transpose,
  reduce_sum of a broadcast, implicit broadcasts, ...).
- ``zero_propagation.py``: ``eliminate_zeros`` (x+0 -> x, x*0 -> 0 for
  finite x, f(0) -> 0 for f(0) = 0).
- ``idioms.py``, passes that know a numerical idiom as a whole:
  ``drop_softmax_shift_cotangents`` (drop the cotangent of the max that
  stabilises a softmax, which cancels to zero up to rounding).
- ``matmul_layout.py``: ``orient_matmuls`` (compute ``transpose(a @ b)`` as
  ``b^T @ a^T`` when that puts the longer output axis last, where BLAS is fastest).

What the passes know about particular primitives is on the primitives' cards:
rewrite rules as data (``prim.rewrites``, the rule type in ``rules.py``) and
the traits and roles of ``traits.py``; no pass names a primitive.
``program_cost`` (total flops and bytes of a program) is cost analysis, not a
pass: it lives in ``interpreters/cost.py`` and is re-exported here too. The
passes share ``rewriter.Rewriter``, which rebuilds a program equation by equation.
"""

from __future__ import annotations

from typing import Callable

from funcdiff.passes.algebra import forward_identities, simplify_algebra
from funcdiff.interpreters.cost import program_cost
from funcdiff.passes.generic import (eliminate_common_subexpressions,
                                                  eliminate_dead_code, fold_constants,
                                                  inline_calls)
from funcdiff.passes.idioms import drop_softmax_shift_cotangents
from funcdiff.passes.matmul_layout import orient_matmuls
from funcdiff.passes.zero_propagation import eliminate_zeros
from funcdiff.ir import ClosedJaxpr

PASSES: list[Callable[[ClosedJaxpr], ClosedJaxpr]] = [
    forward_identities, simplify_algebra, eliminate_zeros, fold_constants,
    eliminate_common_subexpressions, drop_softmax_shift_cotangents, orient_matmuls,
    eliminate_dead_code,
]


def optimize(closed: ClosedJaxpr, max_rounds: int = 6) -> ClosedJaxpr:
    """Inline nested calls, then run every pass until none changes the program.

    The result computes the same values (within floating-point rounding where
    a rewrite reassociates, e.g. a sum of n equal terms becomes a product).
    """
    closed = inline_calls(closed)
    for _ in range(max_rounds):
        before = closed
        for p in PASSES:
            closed = p(closed)
        if closed is before:
            break
    return closed


__all__ = ["PASSES", "optimize", "program_cost", "forward_identities", "simplify_algebra",
           "eliminate_zeros", "inline_calls", "fold_constants", "eliminate_common_subexpressions",
           "eliminate_dead_code", "drop_softmax_shift_cotangents", "orient_matmuls"]
