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

``scan`` hands its body one slice of each ``xs`` and stacks the per-iteration
outputs through one node each (``_unstacked``, ``_stacked``), whose pullbacks
stack or slice the cotangents: O(size) in the backward pass, where a slicing
node per iteration would pad a full-size cotangent each time.

``checkpoint`` with its default policy (nothing saveable) computes its outputs
with the impls, keeping nothing but its inputs, and records one node whose
pullback runs the body again on a tape of its own and pulls that back (or,
when the pullback itself is being transformed, linearizes the body then);
with ``everything_saveable`` the body simply runs on the tape. Other policies
keep the linearization that applies them.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Tracer, get_aval, instantiate
from funcdiff.interpreters.programs import groups
from funcdiff.ir import eval_jaxpr, run_impls


def run_on_tape(trace, primitive, args, params) -> list | None:
    """The outputs of a control-flow or checkpoint ``primitive`` run on ``trace``
    by its definition, or None for any other primitive (or a checkpoint policy
    that only a linearization applies)."""
    rule = _RULES.get(primitive.name)
    outs = None if rule is None else rule(trace, args, **params)
    return None if outs is None else [_on_tape(trace, o) for o in outs]


def _value(x: Any) -> Any:
    """The concrete value of an operand or result (a tape tracer's primal)."""
    from funcdiff.interpreters.tape import TapeTracer
    return x.primal if type(x) is TapeTracer else x


def _slot(trace, x: Any) -> int:
    from funcdiff.interpreters.tape import TapeTracer
    return x.slot if type(x) is TapeTracer and x._trace is trace else 0


def _on_tape(trace, x: Any) -> Any:
    """``x`` as a tracer of ``trace`` (a plain value, such as a literal output of a
    branch, becomes a constant of the tape)."""
    from funcdiff.interpreters.tape import TapeTracer
    if type(x) is TapeTracer and x._trace is trace:
        return x
    value = _value(x)
    return TapeTracer(trace, value, 0, get_aval(value))


def _run(closed, *args) -> list:
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


# ---------------------------------------------------------------------------
# The primitives


def _scan(trace, args, *, jaxpr, num_consts, num_carry, length, reverse):
    consts, carry, xs = groups(args, num_consts, num_carry)
    slices = [_unstacked(trace, x, length) for x in xs]
    y_avals = jaxpr.out_avals[num_carry:]
    ys: list[list] = [[None] * length for _ in y_avals]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = _run(jaxpr, *consts, *carry, *[s[i] for s in slices])
        carry = outs[:num_carry]
        for y, out in zip(ys, outs[num_carry:]):
            y[i] = out
    return list(carry) + [_stacked(trace, y, a) for y, a in zip(ys, y_avals)]


def _while(trace, args, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, carry = groups(args, cond_nconsts, body_nconsts)
    while bool(_value(_run(cond_jaxpr, *cconsts, *carry)[0])):
        carry = _run(body_jaxpr, *bconsts, *carry)
    return list(carry)


def _cond(trace, args, *, branches):
    index, *operands = args
    i = min(max(int(_value(index)), 0), len(branches) - 1)  # clamped, as cond's impl
    return _run(branches[i], *operands)


def _checkpoint(trace, args, *, jaxpr, policy, name):
    from funcdiff.remat.policies import checkpoint_policies
    if policy is checkpoint_policies.everything_saveable:  # no recomputation
        return _run(jaxpr, *args)
    if policy is not checkpoint_policies.nothing_saveable:
        return None
    # Keep the inputs only: the outputs are computed now with the impls, and the
    # node's pullback runs the body again, on a tape of its own.
    primals = [_value(a) for a in args]
    slots = [_slot(trace, a) for a in args]
    outs = run_impls(jaxpr, primals)
    return trace.record(outs, lambda cts: _recomputed(jaxpr, primals, slots, cts), slots)


def _recomputed(jaxpr, primals: list, slots: list, cts: list) -> list:
    """The cotangents of a checkpoint's inputs (None where not needed), its body
    recomputed from ``primals``: on a tape when nothing else is tracing and the
    cotangents are plain values, else linearized (a transformed pullback)."""
    from funcdiff.remat.sources import eval_with_sources
    from funcdiff.interpreters import tape
    from funcdiff.interpreters.linearize import linearize_flat
    mask = [bool(s) for s in slots]

    def body(*args):
        return eval_with_sources(jaxpr, args)
    if tape.usable() and not any(isinstance(c, Tracer) for c in cts):
        _, fn = tape.tape_vjp_flat(body, primals, in_mask=mask)
        cts_in = fn.pull_back(cts, release=True)
    else:
        _, lin = linearize_flat(body, primals, in_mask=mask)
        cts_in = tape._pull_back_linear(cts, mask, lin)
    return [c if m else None for c, m in zip(cts_in, mask)]


_RULES: dict[str, Callable] = {"scan": _scan, "while": _while, "cond": _cond,
                               "checkpoint": _checkpoint}


# ---------------------------------------------------------------------------
# Slicing xs and stacking ys, one node each


def _unstacked(trace, x: Any, length: int) -> list:
    """The ``length`` slices of ``x`` along axis 0, through one node whose
    pullback stacks their cotangents."""
    value = _value(x)
    pieces = [value[i] for i in range(length)]
    slot = _slot(trace, x)
    if not slot or not pieces:
        return pieces

    def pullback(cts):
        from funcdiff.primitives import structural
        rows = [structural.expand_dims(instantiate(ct), dimensions=(0,)) for ct in cts]
        return [structural.concatenate(*rows, dimension=0)]
    return trace.record(pieces, pullback, [slot])


def _stacked(trace, pieces: list, aval) -> Any:
    """The per-iteration outputs ``pieces`` stacked along a new axis 0, through one
    node whose pullback hands each piece its slice of the cotangent."""
    values = [_value(p) for p in pieces]
    out = np.stack(values) if values else np.zeros((0,) + aval.shape, aval.dtype)
    slots = [_slot(trace, p) for p in pieces]
    if not any(slots) or not dtypes.is_inexact(aval.dtype):
        return out

    def pullback(cts):
        from funcdiff.primitives.indexing import gather
        (ct,) = cts
        return [gather(ct, np.asarray(i), axis=0) if s else None
                for i, s in enumerate(slots)]
    return trace.record([out], pullback, slots)[0]


__all__ = ["run_on_tape"]
