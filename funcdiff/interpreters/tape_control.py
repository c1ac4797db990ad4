"""Control flow and checkpoints on the eager tape: run as what they stand for.

The tape meets ``scan``, ``while`` and ``cond`` with concrete operands, so it can
run each as the Python loop or branch it describes: the body program is
evaluated with ``eval_jaxpr``, every equation binding its primitive on the tape
like any other operation, and reverse mode walks the recorded iterations back
as it walks an unrolled Python loop. The alternative, linearizing the loop as
a whole, cannot be planned once per signature (``tape_programs``): the body is
traced anew on each call, so its programs are new each time, and staging,
optimising and transposing them every call cost several times the loop itself.
The derivatives are the same; the residuals kept are the body's, per iteration,
as a linearized scan stacks them.

This module owns the hook; the cards fill it:

- a primitive's ``tape_rule(trace, args, **params)`` returns its outputs run
  on ``trace`` by its definition, or None to decline (then the tape linearizes
  the call, as for any primitive without a reverse rule of its own);
- a rule reads its operands with ``value`` and ``slot``, runs sub-programs
  with ``programs.run`` (binding each equation, so on the tape) and records
  nodes of its own with ``trace.record``; ``run_on_tape`` puts what it
  returns on the tape.

The rules live with their primitives: ``primitives.scan`` (slicing xs and
stacking ys through one node each), ``primitives.while_loop``,
``primitives.cond`` and ``remat.checkpoint`` (its default policy recomputes
the body in its node's pullback).
"""

from __future__ import annotations

from typing import Any

from funcdiff.core import Tracer


def run_on_tape(trace, primitive, args, params) -> list | None:
    """The outputs of ``primitive`` run on ``trace`` by its definition (its card's
    ``tape_rule``), or None when it has no such rule or its rule declines."""
    rule = primitive.tape_rule
    outs = None if rule is None else rule(trace, args, **params)
    return None if outs is None else [on_tape(trace, o) for o in outs]


def _own(trace, x: Any) -> bool:
    return isinstance(x, Tracer) and x._trace is trace


def value(trace, x: Any) -> Any:
    """The concrete value of an operand or result (a tape tracer's primal)."""
    return x.primal if _own(trace, x) else x


def slot(trace, x: Any) -> int:
    """The cotangent slot of ``x`` on ``trace`` (0: not on the tape)."""
    return x.slot if _own(trace, x) else 0


def on_tape(trace, x: Any) -> Any:
    """``x`` as a tracer of ``trace`` (a plain value, such as a literal output of a
    branch, becomes a constant of the tape)."""
    return x if _own(trace, x) else trace.constant(x)


__all__ = ["run_on_tape", "value", "slot", "on_tape"]
