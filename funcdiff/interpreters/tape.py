"""Eager reverse mode on a tape: the fast path of grad, value_and_grad and vjp.

``linearize`` stages every tangent operation into a jaxpr, which costs
abstract evaluation, variables and equations for each primitive. When
``grad`` or ``vjp`` is called with no transform active and concrete inputs,
nothing will ever transform that jaxpr except the backward pass, so the tape
records less: each primitive applied to a ``TapeTracer`` runs its numpy
``impl`` and then its rule, ``rule(needed, out, *primals, **params)``, which
returns a pullback ``ct -> one cotangent per primal`` (None where there is
none) holding only the residuals it needs, as linearize would keep them.
``needed[i]`` is truthy when primal ``i`` is on the tape (it is the slot of
that input's cotangent, 0 otherwise); rules skip what nobody needs (the data
operand of a matmul, say). The backward pass visits the nodes (one small
class per kind: ``tape_nodes``) in reverse and calls each pullback with the
cotangent of the node's output. Elementwise primitives with one operand on
the tape skip the pullback: their node keeps the
factor ``d`` of the cotangent ``ct * d`` (``prim.vjp_factor``), or, when ``d`` is
a new function of the output alone (tanh's 1 - y*y), an ``OutputFactor`` that
keeps the output and computes ``d`` in the backward pass.

The rules are derived from the rules primitives already have, never written
twice: ``prim.vjp`` when a card declares one (elementwise cards build it from
the same derivative as their jvp), the transpose rule for linear primitives,
and for every other primitive a linearization of that single primitive: planned
once per signature and replayed where it can be (``tape_programs``: linear
algebra, sort, cumulative products, repeated jit calls), else run when the
node is recorded (checkpoint with a policy that saves some values, whose
program is new on each call); either way they behave exactly as under
``linearize``. Loops and branches (``scan``, ``while``, ``cond``) are not
linearized at all: they run on the tape by their definition, their bodies
recorded operation by operation, and a checkpoint that saves nothing keeps its
inputs and recomputes its body on a tape of its own in the backward pass
(``tape_control``).
Calls of
``custom_vjp`` and ``custom_jvp`` functions record their own node
(``TapeTrace.record``, ``TapeTrace.record_linearized``) without staging the
function. Rules are written in
funcdiff operations, so a pullback can itself be traced (``vmap`` of a vjp
function, ``jit`` of it, or differentiation of a function that calls grad).

A node is recorded only when one of its inputs depends on the differentiated
inputs and its output is a float or complex array. Other results (integer and
boolean values, outputs of nondifferentiable primitives, values computed from
non-differentiated inputs) are still tracers, so numpy code meets the same
tracer under every transform, but they sit at slot 0: constants, no node.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from funcdiff import core, dtypes
from funcdiff.core import (Tracer, Trace, Zero, array_avals, dynamic, scalar_avals,
                           trace_stack, get_aval)
from funcdiff.interpreters.linearize import linearize_flat
from funcdiff.ir import current_source
from funcdiff.roles import MUL
from funcdiff.interpreters.tape_control import run_on_tape
from funcdiff.interpreters.tape_nodes import (BilinearRule, FactorNode, LinearNode,
                                              MultiOutputNode, OutputFactor, ProductNode,
                                              PullbackNode, SumNode, SumRule, broadcast_axes)
from funcdiff.interpreters.tape_programs import planned_node
from funcdiff.interpreters.transpose import UndefinedPrimal, backward_pass


_enabled = True

# numpy's floating and complex scalar types: an output of one of them has the shape
# and dtype of an operand of that type (other libraries' arrays broadcast)
_INEXACT_SCALARS = frozenset(t for t in set(np.sctypeDict.values()) if issubclass(t, np.inexact))


def usable() -> bool:
    """Whether the tape may replace linearize: no transform or staging is active."""
    return _enabled and len(trace_stack) == 1 and len(dynamic) == 1


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """Run eager reverse mode through linearize + transpose instead of the tape
    (to cross-check the two, or to compare their speed).

    >>> import funcdiff as fd
    >>> from funcdiff.interpreters import tape
    >>> with tape.disabled():
    ...     float(fd.grad(lambda x: x * x)(3.0))
    6.0
    """
    global _enabled
    previous, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = previous


class TapeTracer(Tracer):
    """A value on the tape: its concrete primal and the slot of its cotangent.

    ``shape`` and ``dtype`` are plain attributes rather than properties: the
    numpy layer reads them on every operation."""

    __slots__ = ("primal", "slot", "_aval", "shape", "dtype")

    def __init__(self, trace: "TapeTrace", primal: Any, slot: int, aval):
        self._trace = trace
        self.primal = primal
        self.slot = slot
        self._aval = aval
        self.shape = aval.shape
        self.dtype = aval.dtype

    @property
    def aval(self):
        return self._aval

    def to_concrete(self, operation: str) -> Any:
        return self.primal

    def carries_derivative(self) -> bool:
        return self.slot != 0  # slot 0: a constant, off the tape (no cotangent reaches it)


class TapeTrace(Trace):
    """Runs primitives on concrete values and records a node per differentiable one.

    ``nodes`` holds the nodes (``interpreters.tape_nodes``) in the order the
    primitives ran: a ``FactorNode`` for a primitive with one operand on the
    tape whose cotangent is the output's times its ``vjp_factor`` (asked only
    when that operand has the output's shape), a ``ProductNode`` for a
    product, a ``SumNode`` for a sum or difference that broadcasts or has both
    operands on the tape, a ``LinearNode`` for another linear primitive of one
    value on the tape, else a ``PullbackNode`` (one output) or
    ``MultiOutputNode``.
    ``next_slot`` is the next free cotangent slot. ``bind`` hands this trace
    its arguments unraised (``raw_args``): constants stay plain values.
    """

    __slots__ = ("nodes", "next_slot")
    raw_args = True

    def __init__(self, main):
        super().__init__(main)
        self.nodes: list = []
        self.next_slot = 1  # slot 0 is never used, so a slot number is always truthy

    def pure(self, val: Any) -> Any:
        return val

    lift = pure

    def constant_tracer(self, val: Any) -> TapeTracer:
        return TapeTracer(self, val, 0, get_aval(val))  # slot 0: off the tape

    def process_primitive(self, primitive, args, params):
        factor = primitive.vjp_factor
        if factor is None:
            rule = primitive.vjp
            if type(rule) is BilinearRule:
                return self._two_operands(primitive, args, params, None)
            if (rule is None and primitive.linear and primitive.transpose is not None
                    and not primitive.multiple_results):
                return self._linear(primitive, args, params)
            return self._process(primitive, args, params, None)
        # An elementwise primitive of one value on the tape, the bulk of scalar code:
        # when its cotangent is ct * d, the node keeps d (no pullback), and this path
        # stays inline, without the general one's lists.
        a = args[0]
        if len(args) == 1:
            if type(a) is not TapeTracer or a._trace is not self or not a.slot:
                return self._process(primitive, args, params, None)  # slot 0: a constant
            x = a.primal
            # (an empty ``**params`` still costs a dict per call: most operations have none)
            out = primitive.impl(x, **params) if params else primitive.impl(x)
            if type(out) is type(x) and (type(out) is not np.ndarray or out.dtype is x.dtype):
                # an elementwise output has its operand's shape, and its dtype, which
                # is floating or complex (the operand is on the tape)
                aval = a._aval
            else:
                aval = (array_avals.get((out.shape, out.dtype)) if type(out) is np.ndarray
                        else scalar_avals.get(type(out))) or get_aval(out)
                if aval.dtype.kind not in "fc":
                    return TapeTracer(self, out, 0, aval)
            d = factor(0, out, x, **params) if params else factor(0, out, x)
            if d is False:
                return self._process(primitive, args, params, out)
            slot = self.next_slot
            self.next_slot = slot + 1
            self.nodes.append((slot, a.slot, d))  # a FactorNode
            return TapeTracer(self, out, slot, aval)
        b = args[1]
        slot_a = slot_b = 0
        if type(a) is TapeTracer and a._trace is self:
            slot_a, on, a = a.slot, a, a.primal
        if type(b) is TapeTracer and b._trace is self:
            slot_b, on_b, b = b.slot, b, b.primal
        if slot_a and not slot_b:
            if isinstance(b, Tracer):
                return self._process(primitive, args, params, None)
            i, slot = 0, slot_a
        elif slot_b and not slot_a:
            if isinstance(a, Tracer):
                return self._process(primitive, args, params, None)
            i, slot, on = 1, slot_b, on_b
        elif slot_a and slot_a == slot_b:  # x * x: both partials
            i, slot = None, slot_a
        elif slot_a and slot_b and type(primitive.vjp) is SumRule:
            return self._two_operands(primitive, args, params, None)  # both on the tape
        else:
            return self._process(primitive, args, params, None)
        out = primitive.impl(a, b, **params) if params else primitive.impl(a, b)
        x = on.primal  # the operand on the tape
        t = type(x)
        if type(out) is t and (out.dtype is x.dtype and out.shape == x.shape
                               if t is np.ndarray else t in _INEXACT_SCALARS):
            aval = on._aval  # its shape and its (floating or complex) dtype
        else:
            aval = (array_avals.get((out.shape, out.dtype)) if type(out) is np.ndarray
                    else scalar_avals.get(type(out))) or get_aval(out)
            if aval.dtype.kind not in "fc":
                return TapeTracer(self, out, 0, aval)
            if on._aval.shape != aval.shape:
                # a broadcast operand: its cotangent is summed down to its shape
                if type(primitive.vjp) is SumRule:
                    return self._two_operands(primitive, args, params, out)
                return self._process(primitive, args, params, out)
        if i is None:
            d = _both_factors(factor, out, a, b, params)
        else:
            d = factor(i, out, a, b, **params) if params else factor(i, out, a, b)
        if d is False:
            return self._process(primitive, args, params, out)
        slot_out = self.next_slot
        self.next_slot = slot_out + 1
        self.nodes.append((slot_out, slot, d))  # a FactorNode
        return TapeTracer(self, out, slot_out, aval)

    def _two_operands(self, primitive, args, params, out):
        """A product (its card declares ``BilinearRule``: a layer's ``x @ W``) or a sum
        or difference (``SumRule``: a layer's bias, broadcast) of two operands,
        either or both on the tape: the ``ProductNode`` or ``SumNode`` the rule
        stands for, made without the general path's lists (``out`` as for
        ``_process``)."""
        x, y = args
        x_slot = y_slot = 0
        x_value, y_value = x, y
        if type(x) is TapeTracer and x._trace is self:
            x_slot, x_value = x.slot, x.primal
        if type(y) is TapeTracer and y._trace is self:
            y_slot, y_value = y.slot, y.primal
        if (not x_slot and isinstance(x_value, Tracer)) or (
                not y_slot and isinstance(y_value, Tracer)):
            return self._process(primitive, args, params, out)  # raises: escaped
        if out is None:
            try:
                out = primitive.raw_impl(x_value, y_value, **params)
            except Exception:
                core.impl_failed(primitive, (x_value, y_value), params)
                raise
        aval = array_avals.get((out.shape, out.dtype)) if type(out) is np.ndarray else None
        if aval is None:
            aval = get_aval(out)
        if not (x_slot or y_slot) or aval.dtype.kind not in "fc":
            return TapeTracer(self, out, 0, aval)
        slot = self.next_slot
        self.next_slot = slot + 1
        rule = primitive.vjp
        if type(rule) is SumRule:
            shape = aval.shape
            self.nodes.append(SumNode(
                slot, [x_slot, y_slot], broadcast_axes(x._aval.shape, shape) if x_slot else None,
                broadcast_axes(y._aval.shape, shape) if y_slot else None, rule.negate))
        else:  # keep only the operand each needed cotangent is made from
            self.nodes.append(ProductNode(
                slot, x_slot, y_slot, primitive, params,
                UndefinedPrimal(x._aval) if x_slot else None, y_value if x_slot else None,
                x_value if y_slot else None, UndefinedPrimal(y._aval) if y_slot else None))
        return TapeTracer(self, out, slot, aval)

    def _linear(self, primitive, args, params):
        """A linear primitive (a reshape, a sum over axes) whose first operand is on
        the tape and whose others are constants: the ``LinearNode`` its transpose
        pulls back, made without the general path's lists and closure."""
        a = args[0]
        if type(a) is not TapeTracer or a._trace is not self or not a.slot:
            return self._process(primitive, args, params, None)
        if len(args) == 1:
            primals = (a.primal,)
            undefined = (UndefinedPrimal(a._aval),)
        else:
            for b in args[1:]:
                if isinstance(b, Tracer):  # on the tape too, or of another transform
                    return self._process(primitive, args, params, None)
            primals = (a.primal,) + tuple(args[1:])
            undefined = (UndefinedPrimal(a._aval),) + primals[1:]
        try:
            out = primitive.raw_impl(*primals, **params)
        except Exception:
            core.impl_failed(primitive, primals, params)
            raise
        aval = array_avals.get((out.shape, out.dtype)) if type(out) is np.ndarray else None
        if aval is None:
            aval = get_aval(out)
        if aval.dtype.kind not in "fc":
            return TapeTracer(self, out, 0, aval)
        slot = self.next_slot
        self.next_slot = slot + 1
        needed = [a.slot] if len(args) == 1 else [a.slot] + [0] * (len(args) - 1)
        self.nodes.append(LinearNode(slot, needed, primitive, undefined, params))
        return TapeTracer(self, out, slot, aval)

    def _process(self, primitive, args, params, out):
        """The general case (``out`` is the result when already computed, else None)."""
        primals = []
        needed = []
        live = 0
        for a in args:
            if type(a) is TapeTracer and a._trace is self:
                primals.append(a.primal)
                slot = a.slot
                needed.append(slot)
                live |= slot
            else:
                if isinstance(a, Tracer):
                    self.full_raise(a)  # raises: a tracer that escaped an earlier transform
                primals.append(a)
                needed.append(0)
        if not live or primitive.nondifferentiable:
            try:
                out = primitive.raw_impl(*primals, **params)
            except Exception:
                core.impl_failed(primitive, primals, params)
                raise
            if primitive.multiple_results:
                return [TapeTracer(self, o, 0, get_aval(o)) for o in out]
            return TapeTracer(self, out, 0, get_aval(out))
        rule = primitive.vjp
        if rule is None:
            rule = _derived_rule(primitive)
            if rule is None:
                outs = run_on_tape(self, primitive, args, params)  # loops and branches
                if outs is not None:
                    return outs
                return _linearized_node(self, primitive, primals, needed, params)
        if out is None:
            try:
                out = primitive.raw_impl(*primals, **params)
            except Exception:
                core.impl_failed(primitive, primals, params)
                raise
        # a node whose pullback ``rule`` makes
        if primitive.multiple_results:
            return self.record(out, rule(needed, out, *primals, **params), needed)
        aval = get_aval(out)
        if aval.dtype.kind not in "fc":
            return TapeTracer(self, out, 0, aval)
        slot = self.next_slot
        self.next_slot = slot + 1
        self.nodes.append(PullbackNode(slot, needed, rule(needed, out, *primals, **params)))
        return TapeTracer(self, out, slot, aval)

    def record(self, outs: Sequence[Any], pullback: Callable, needed: Sequence[int]) -> list:
        """Put concrete results ``outs`` on the tape with a node whose ``pullback``
        maps their cotangents (a list, Zero where none) to one cotangent per
        input (None where none), for the inputs at slots ``needed``."""
        slot = self.next_slot
        self.next_slot = slot + len(outs)
        wrapped = [_wrap(self, o, slot + i) for i, o in enumerate(outs)]
        self.nodes.append(MultiOutputNode(slot, needed, pullback, [w.aval for w in wrapped]))
        return wrapped

    def unwrap(self, values: Sequence[Any]) -> tuple[list, list] | None:
        """The concrete values of ``values`` and the slots of those on the tape (0
        for the others), or None when one is a tracer of another transform."""
        primals, slots = [], []
        for x in values:
            if type(x) is TapeTracer and x._trace is self:
                primals.append(x.primal)
                slots.append(x.slot)
            elif isinstance(x, Tracer):
                return None
            else:
                primals.append(x)
                slots.append(0)
        return primals, slots

    def constant(self, value: Any) -> TapeTracer:
        """``value`` on the tape as a constant (no cotangent slot)."""
        return TapeTracer(self, value, 0, get_aval(value))

    def record_linearized(self, primitive, primals: Sequence[Any], needed: Sequence[int],
                          params: dict, own_values_only: bool = True) -> list | None:
        """Put ``primitive`` applied to concrete ``primals`` on the tape through a
        linearization of it alone; its outputs (a list). With
        ``own_values_only``, None, with nothing recorded, when linearizing it
        used values on the tape other than its operands (a custom rule that
        closes over them, unstaged): the caller must then take a route that
        sees them."""
        if primitive.multiple_results:
            def fun(*xs):
                return list(primitive.bind(*xs, **params))
        else:
            def fun(*xs):
                return [primitive.bind(*xs, **params)]
        n_nodes = len(self.nodes)
        outs, lin = linearize_flat(fun, primals, in_mask=needed)
        if own_values_only and (len(self.nodes) != n_nodes
                                or any(isinstance(o, Tracer) for o in outs)):
            del self.nodes[n_nodes:]
            return None
        slot = self.next_slot
        wrapped = [_wrap(self, o, 0 if z else slot + i)
                   for i, (o, z) in enumerate(zip(outs, lin.out_is_zero))]
        if not all(lin.out_is_zero):
            self.next_slot = slot + len(outs)
            self.nodes.append(MultiOutputNode(slot, needed,
                                              lambda cts: pull_back_linear(cts, needed, lin),
                                              [w.aval for w in wrapped]))
        return wrapped


class CheckedTapeTrace(TapeTrace):
    """The tape while ``fd.config`` debug_nans or debug_infs is on (chosen when the tape
    starts, so the ordinary tape pays nothing for the checks).

    Each primitive's output is checked before it is recorded (its impl runs
    once more for that; loops and branches are checked operation by operation
    in their bodies instead), and what it records (its derivative's factors and
    residuals) is computed in a ``FloatContext`` naming it and the user's line.
    Its nodes become ``PullbackNode``s (``MultiOutputNode``s) whose pullbacks run
    in that context and check the cotangents they give, so a NaN made in the
    backward pass names the forward operation whose derivative made it."""

    __slots__ = ()

    def process_primitive(self, primitive, args, params):
        if primitive.tape_rule is not None:  # a loop or branch: its body's operations check
            return super().process_primitive(primitive, args, params)
        primals = [a.primal if type(a) is TapeTracer and a._trace is self else a
                   for a in args]
        line = current_source() or core.user_frame()  # a loop body's line, when replayed
        if not any(isinstance(p, Tracer) for p in primals):
            core.float_context.append(core.FloatContext(None, line))  # a forward NaN
            try:
                core.checked_impl(primitive, primals, params)
            finally:
                core.float_context.pop()
        n_nodes = len(self.nodes)
        core.float_context.append(core.FloatContext(primitive.name, line))
        try:
            out = super().process_primitive(primitive, args, params)
        finally:
            core.float_context.pop()
        nodes = self.nodes
        for i in range(n_nodes, len(nodes)):
            nodes[i] = checked_node(nodes[i], primitive.name, line)
        return out


def checked_node(node, operation: str, line: str):
    """``node`` as a node whose pullback runs in a ``FloatContext`` for ``operation``
    applied at ``line`` and checks the cotangents it gives."""
    kind = type(node)
    if kind is FactorNode:
        _, input_slot, factor = node

        def pullback(ct):
            d = factor.value() if type(factor) is OutputFactor else factor
            return [ct if d is None else MUL.primitive.bind(ct, d)]
        needed = [input_slot]
    elif kind is ProductNode:
        pullback, needed = node.pull_back, [node.x_slot, node.y_slot]
    else:
        pullback, needed = node.pullback, node.needed

    def checked(ct):
        cts = ct if type(ct) is list else [ct]
        core.float_context.append(core.FloatContext(operation, line, ", ".join(
            c.aval.str_short() if type(c) is Zero else core.describe_value(c)
            + (" holding inf" if core.holds_inf(c) else "") for c in cts)))
        try:
            results = pullback(ct)
            core.check_floats(None, cts, [c for c in results if c is not None])
        finally:
            core.float_context.pop()
        return results
    slot = node[0] if kind is FactorNode else node.slot
    if kind is MultiOutputNode:
        return MultiOutputNode(slot, needed, checked, node.out_avals)
    return PullbackNode(slot, needed, checked)


def recording() -> TapeTrace | None:
    """The tape when it is the only transform active, else None: a call of a
    custom rule (``custom_vjp``, ``custom_jvp``) can then record its node
    directly, without staging its function."""
    if len(trace_stack) == 2 and len(dynamic) == 1:
        main = trace_stack[-1]
        if main.trace_type is TapeTrace or main.trace_type is CheckedTapeTrace:
            return main.trace
    return None


def _both_factors(factor, out, x, y, params):
    """The factor of ``f(x, x)``: the sum of both partials (1 where a factor is None)."""
    if params:
        d_x, d_y = factor(0, out, x, y, **params), factor(1, out, x, y, **params)
    else:  # (an empty ``**params`` costs a dict per call)
        d_x, d_y = factor(0, out, x, y), factor(1, out, x, y)
    if d_x is False or d_y is False:
        return False
    if d_x is None and d_y is None:
        return get_aval(out).dtype.type(2)
    return (1 if d_x is None else d_x) + (1 if d_y is None else d_y)


def _wrap(trace: TapeTrace, value: Any, slot: int) -> TapeTracer:
    """``value`` on the tape at ``slot``; integer and boolean values are constants (slot 0)."""
    aval = get_aval(value)
    if not dtypes.is_inexact(aval.dtype):
        slot = 0
    return TapeTracer(trace, value, slot, aval)


# ---------------------------------------------------------------------------
# Rules


def _linear_rule(primitive) -> Callable:
    """The vjp of a linear primitive: its transpose, with the needed inputs undefined.

    Only the avals of the needed inputs are kept, not their values."""
    transpose = primitive.transpose

    def rule(needed, out, *primals, **params):
        if len(primals) == 1:
            arg = UndefinedPrimal(get_aval(primals[0]))
            return lambda ct: transpose(ct, arg, **params)
        args = list(primals)
        for i, n in enumerate(needed):
            if n:
                args[i] = UndefinedPrimal(get_aval(args[i]))
        return lambda ct: transpose(ct, *args, **params)
    return rule


_derived: dict = {}


def _derived_rule(primitive) -> Callable | None:
    """A rule made from the primitive's own transpose, or None (linearize it)."""
    rule = _derived.get(primitive, False)
    if rule is False:
        rule = None
        if primitive.linear and primitive.transpose is not None:
            rule = _linear_rule(primitive)
        _derived[primitive] = rule
    return rule


def _linearized_node(trace: TapeTrace, primitive, primals, needed, params):
    """Record ``primitive`` through a linearization of it alone (the general rule):
    planned once per signature where it can be (``tape_programs``), else per call."""
    planned = planned_node(primitive, primals, needed, params)
    if planned is None:
        outs = trace.record_linearized(primitive, primals, needed, params,
                                       own_values_only=False)
        return outs if primitive.multiple_results else outs[0]
    slot = trace.next_slot
    wrapped = [_wrap(trace, o, 0 if z else slot + i)
               for i, (o, z) in enumerate(zip(planned.outs, planned.out_is_zero))]
    if not all(planned.out_is_zero):
        trace.next_slot = slot + len(wrapped)
        trace.nodes.append(MultiOutputNode(slot, needed, planned.pullback,
                                           [w.aval for w in wrapped]))
    return wrapped if primitive.multiple_results else wrapped[0]


def pull_back_linear(cts, needed, lin):
    """The pullback of a linearized node: transpose its linear jaxpr."""
    staged = [ct for ct, z in zip(cts, lin.out_is_zero) if not z]
    if all(type(c) is Zero for c in staged):
        return [None] * len(needed)
    jaxpr = lin.jaxpr
    undefined = [UndefinedPrimal(v.aval) for v in jaxpr.jaxpr.invars]
    cts_in = iter(backward_pass(jaxpr.jaxpr, jaxpr.consts, undefined, staged))
    return [next(cts_in) if n else None for n in needed]


__all__ = ["usable", "disabled", "recording", "pull_back_linear", "TapeTracer", "TapeTrace",
           "CheckedTapeTrace"]
