"""The tape's node for a primitive with no reverse rule of its own, planned once.

A primitive without ``vjp``, ``vjp_factor`` or a transpose (linear algebra
factorisations and solves, sort, cumulative products, ...) is recorded on the
tape through a linearization of that primitive alone. Staging that
linearization on every call costs more than the numpy work of a small matrix,
yet for given params, operand avals and differentiated operands it is always
the same program. So it is split once per such signature (``remat_split``
with no policy: every residual kept; installed here by ``remat.split``) into
a forward program (operands -> outputs + residuals) and, transposed once (``transposed_program``), a
backward program (residuals + operands it reads + output cotangents ->
operand cotangents; one per set of nonzero output cotangents, so that a zero
cotangent skips its equations as in ``backward_pass``). A call runs the
forward program on its concrete operands with the numpy impls; its node's
pullback runs the backward program with the impls too when the cotangents
are plain values, and with ``bind`` otherwise, so a pullback can still be
traced (vmap of a vjp function, jit, differentiation of a function that
calls grad), as with every tape node.

Primitives whose params hold functions (custom rules) or several programs
(control flow, which the tape runs by its definition instead: ``tape_control``)
are not planned, nor are
signatures whose linearization cannot be staged from avals alone (a rule
that reads values); they keep the per-call linearization. A primitive with
one program in its params (a jit call, checkpoint) is planned when the same
call, program included, comes a second time (checkpoint traces a new program
on each eager call; a jit call repeats its cached one), and the plan is kept
with the program, so it is freed with it.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from funcdiff import dtypes
from funcdiff.core import Tracer, Zero, trace_stack, get_aval
from funcdiff.errors import FunctionalDiffError
from funcdiff.interpreters.call import derived_cache, transposed_program
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.ir import ClosedJaxpr, Jaxpr, eval_jaxpr, run_impls

_plans: dict = {}  # signature -> _Plan, or None where the signature cannot be planned
_MAX_PLANS = 512
_split: Callable | None = None  # remat_split, handed down by funcdiff.remat.split


def install_split(split: Callable) -> None:
    """Hand this module ``split(program, mask, None)``, the split of a staged
    program into forward and linear programs keeping every residual
    (``remat.split.remat_split``: it sits above the interpreters, since it runs
    the optimisation passes, and installs itself when imported). Until then no
    signature is planned."""
    global _split
    _split = split


class _Plan:
    __slots__ = ("forward", "linear", "num_out", "used_inputs", "out_is_zero", "mask",
                 "_backward")

    def __init__(self, split, mask):
        self.forward = split.forward        # operands -> outputs + residuals
        self.linear = split.linear          # residuals + operands read + tangents -> tangents
        self.num_out = split.num_out
        self.used_inputs = split.used_inputs
        self.out_is_zero = list(split.out_is_zero)
        self.mask = mask                    # the operands that have cotangents
        self._backward: dict = {}

    def backward(self, ct_mask: tuple) -> ClosedJaxpr:
        """The transposed linear program for these nonzero output cotangents."""
        program = self._backward.get(ct_mask)
        if program is None:
            n_tangents = sum(self.mask)
            n_defined = len(self.linear.in_avals) - n_tangents
            program = self._backward[ct_mask] = transposed_program(
                self.linear, (False,) * n_defined + (True,) * n_tangents, ct_mask)
        return program


class PlannedCall(NamedTuple):
    """A planned call's outputs, which of them have no derivative, and its
    pullback: output cotangents (Zero where none) -> one cotangent per input
    (None where the input is not ``needed``)."""
    outs: list
    out_is_zero: list
    pullback: Callable


def planned_node(primitive, primals: Sequence[Any], needed: Sequence[int],
                 params: dict) -> PlannedCall | None:
    """The ``PlannedCall`` of ``primitive`` applied to concrete ``primals`` from its
    cached plan, or None when the signature is not planned (the caller
    linearizes the call instead)."""
    plan = _plan_for(primitive, primals, needed, params)
    if plan is None:
        return None
    results = run_impls(plan.forward, primals)
    outs, saved = results[:plan.num_out], results[plan.num_out:]
    defined = list(saved) + [primals[i] for i in plan.used_inputs]
    live = [not z for z in plan.out_is_zero]

    def pullback(cts):
        cts = [c for c, keep in zip(cts, live) if keep]
        ct_mask = tuple(type(c) is not Zero for c in cts)
        if not any(ct_mask):
            return [None] * len(plan.mask)
        backward = plan.backward(ct_mask)  # zero cotangents skip their equations
        cts = [c for c in cts if type(c) is not Zero]
        if len(trace_stack) == 1 and not any(isinstance(c, Tracer) for c in cts):
            cts_in = run_impls(backward, defined + cts)  # plain values: the numpy impls
        else:  # a traced pullback (vmap or jit of a vjp function, ...): bind
            cts_in = eval_jaxpr(backward.jaxpr, backward.consts, *defined, *cts)
        cts_in = iter(cts_in)
        return [next(cts_in) if m else None for m in plan.mask]
    return PlannedCall(outs, plan.out_is_zero, pullback)


def _plan_for(primitive, primals, needed, params) -> _Plan | None:
    program = None
    for name, v in params.items():
        if isinstance(v, ClosedJaxpr) and program is None:
            program = name
        elif _holds_program(v) or callable(v):
            return None  # several programs (control flow), or functions (custom rules)
    avals = tuple(get_aval(p) for p in primals)
    mask = tuple(bool(n) and dtypes.is_inexact(a.dtype) for n, a in zip(needed, avals))
    if program is None:
        plans = _plans
        settings = params
    else:
        # A program in the params (a jit call, checkpoint): the plan lives with the
        # program (freed with it) and is made when the same call comes a second time,
        # since checkpoint traces a new program on each eager call.
        plans = derived_cache(params[program])
        settings = {k: v for k, v in params.items() if k != program}
    try:
        key = ("tape plan", primitive, tuple(sorted(settings.items())), avals, mask)
        plan = plans.get(key, False)
    except TypeError:  # unhashable params
        return None
    if plan is False and program is not None and plans.get(key + ("seen",)) is None:
        plans[key + ("seen",)] = True
        return None
    if plan is False:
        plan = _make_plan(primitive, avals, mask, params)
        if plans is _plans and len(_plans) >= _MAX_PLANS:
            _plans.clear()
        plans[key] = plan
    return plan


def _holds_program(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_holds_program(v) for v in value)
    return isinstance(value, (ClosedJaxpr, Jaxpr))


def _make_plan(primitive, avals, mask, params) -> _Plan | None:
    if _split is None:
        return None

    def apply(*xs):
        out = primitive.bind(*xs, **params)
        return list(out) if primitive.multiple_results else [out]
    try:
        split = _split(trace_to_jaxpr(apply, list(avals)), mask, None)
    except FunctionalDiffError:  # a rule that needs concrete values: linearize per call
        return None
    return _Plan(split, mask)


__all__ = ["planned_node", "PlannedCall"]
