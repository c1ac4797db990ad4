"""Forward mode: dual numbers ``(primal, tangent)``.

A ``JVPTracer`` carries a primal value and its tangent. Tangents of values
that do not depend on the inputs, and of integer or boolean values, are the
symbolic ``Zero``: an equation whose inputs all have zero tangents runs on the
primals alone, and rules receive ``Zero`` objects they can skip.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from funcdiff import core, dtypes
from funcdiff.core import (Primitive, Trace, Tracer, Zero, get_aval, new_main,
                           tangent_aval)
from funcdiff.errors import DifferentiationError
from funcdiff.ir import DerivativeSource, current_source, source_stack


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent", "_aval")

    def __init__(self, trace: "JVPTrace", primal: Any, tangent: Any):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self._aval = None

    @property
    def aval(self):
        aval = self._aval
        if aval is None:
            aval = self._aval = get_aval(self.primal)
        return aval

    def to_concrete(self, operation: str) -> Any:
        p = self.primal
        return p.to_concrete(operation) if isinstance(p, Tracer) else p

    def carries_derivative(self) -> bool:
        p = self.primal
        return type(self.tangent) is not Zero or (isinstance(p, Tracer)
                                                  and p.carries_derivative())


class JVPTrace(Trace):
    """``bind`` hands this trace its arguments unraised (``raw_args``): values
    that are not this trace's tracers are constants, whose symbolic zero
    tangent is made only when a rule needs it."""

    __slots__ = ()
    raw_args = True

    def pure(self, val: Any) -> JVPTracer:
        return JVPTracer(self, val, Zero(tangent_aval(get_aval(val))))

    lift = pure

    def process_primitive(self, primitive: Primitive, args, params):
        primals = []
        tangents = []
        all_zero = True
        constants = False
        main = self.main
        for a in args:
            if isinstance(a, Tracer):
                if a._trace.main is main:
                    primals.append(a.primal)
                    t = a.tangent
                    tangents.append(t)
                    if all_zero and type(t) is not Zero:
                        all_zero = False
                    continue
                self.full_raise(a)  # raises for a tracer that escaped an inner transform
            primals.append(a)
            tangents.append(None)
            constants = True
        if all_zero or primitive.nondifferentiable:
            out = primitive.bind(*primals, **params)
            if primitive.multiple_results:
                return [JVPTracer(self, o, Zero(tangent_aval(get_aval(o)))) for o in out]
            return JVPTracer(self, out, Zero(tangent_aval(get_aval(out))))
        rule = primitive.jvp
        if rule is None:
            raise DifferentiationError(
                f"funcdiff has no forward-mode rule for the primitive {primitive.name}; "
                "it cannot be differentiated. Wrap the computation in "
                "fd.stop_gradient if its derivative is not needed.")
        if constants:
            tangents = [Zero(tangent_aval(get_aval(p))) if t is None else t
                        for p, t in zip(primals, tangents)]
        if core.float_checks:  # staged equations of the rule name this operation and line
            primal_out, tangent_out = _rule_with_source(rule, primitive, primals, tangents, params)
        else:
            primal_out, tangent_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return [JVPTracer(self, p, _checked_tangent(p, t))
                    for p, t in zip(primal_out, tangent_out)]
        return JVPTracer(self, primal_out, _checked_tangent(primal_out, tangent_out))


def _rule_with_source(rule, primitive, primals, tangents, params):
    """``rule(...)`` with the current source marked as computing ``primitive``'s
    derivative at the user's line (fd.config's floating-point checks are on)."""
    line = current_source()
    source_stack.append(DerivativeSource(line or core.user_frame(), primitive.name, primals)
                        if not isinstance(line, DerivativeSource)
                        else DerivativeSource(line, line.operation))
    try:
        return rule(primals, tangents, **params)
    finally:
        source_stack.pop()


def _checked_tangent(primal: Any, tangent: Any) -> Any:
    """Tangents of integer and boolean values are always the symbolic zero."""
    if type(tangent) is Zero:
        return tangent
    aval = get_aval(primal)
    if not dtypes.is_inexact(aval.dtype):
        return Zero(tangent_aval(aval))
    return tangent


def jvp_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any],
             tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Run ``fun`` on dual numbers; tangents may be ``Zero``. Returns flat lists."""
    with new_main(JVPTrace) as main:
        trace = main.trace
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs = fun(*ins)
        primals_out, tangents_out = [], []
        for o in outs:
            if isinstance(o, Tracer) and o._trace.main is main:
                primals_out.append(o.primal)
                tangents_out.append(o.tangent)
            else:
                primals_out.append(o)
                tangents_out.append(Zero(tangent_aval(get_aval(o))))
        return primals_out, tangents_out
