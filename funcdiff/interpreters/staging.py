"""Staging: trace a function at abstract values into a Jaxpr.

A ``JaxprTrace`` records each primitive applied to its tracers as an equation
instead of computing it. Values from outside the trace (numpy arrays, Python
scalars, tracers of outer transforms) become constants of the jaxpr: scalars
are inlined as literals, everything else becomes a constant variable.

The same trace serves ``make_jaxpr`` and ``jit`` (where the main is *dynamic*,
so even operations on constants are staged) and the tangent side of
``linearize`` (not dynamic: only operations touching tangents are staged, and
the primal values they use become the jaxpr's constants, the residuals).

Source lines: a builder with ``sources`` notes on each equation
(``Eqn.source``) the user's source line that produced it (``current_source()`` while a staged
program is replayed, else the innermost frame outside funcdiff).
``trace_to_jaxpr`` records them while ``fd.config``'s debug_nans or
debug_infs is on (a loop or branch body traced then can name its own lines
when it produces a NaN) or when asked (``sources=True``); ``ir.eval_jaxpr``
replays them. With the checks off, nothing is recorded and staging costs what
it did.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import core
from funcdiff.core import (ShapedArray, Trace, Tracer, concretization_error,
                           get_aval, new_main)
from funcdiff.errors import FunctionalDiffError
from funcdiff.ir import (ClosedJaxpr, DerivativeSource, Eqn, Jaxpr, Literal, Var, current_source,
                         record_source)


class JaxprTracer(Tracer):
    """A staged value: an abstract value and the variable that will hold it."""

    __slots__ = ("_aval", "_var")

    def __init__(self, trace: "JaxprTrace", aval: ShapedArray, var: Var):
        self._trace = trace
        self._aval = aval
        self._var = var

    @property
    def aval(self) -> ShapedArray:
        return self._aval


class JaxprBuilder:
    """The equations, constants and tracers recorded by one staging main (and, when
    ``sources``, each equation's source line)."""

    def __init__(self, sources: bool = False):
        self.sources = sources
        self.eqns: list[Eqn] = []
        self.const_vars: dict[int, Var] = {}
        self.const_vals: list[Any] = []
        self.const_var_list: list[Var] = []

    def const_atom(self, val: Any):
        """The atom standing for the outside value ``val`` in this jaxpr."""
        if type(val) in (float, int, bool):
            return Literal(val)
        if isinstance(val, np.generic) or (isinstance(val, np.ndarray) and val.ndim == 0
                                           and not isinstance(val, Tracer)):
            if not isinstance(val, Tracer):
                return Literal(val, get_aval(val))
        var = self.const_vars.get(id(val))
        if var is None:
            var = Var(get_aval(val))
            self.const_vars[id(val)] = var
            self.const_vals.append(val)
            self.const_var_list.append(var)
        return var


class JaxprTrace(Trace):
    """Records primitives as equations of a jaxpr under construction."""

    __slots__ = ()
    stages = True

    @property
    def builder(self) -> JaxprBuilder:
        return self.main.global_data

    def new_arg(self, aval: ShapedArray) -> JaxprTracer:
        return JaxprTracer(self, aval, Var(aval))

    def pure(self, val: Any) -> JaxprTracer:
        atom = self.builder.const_atom(val)
        return JaxprTracer(self, atom.aval, atom)

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        avals_in = [t._aval for t in tracers]
        if primitive.abstract_eval is None:
            raise FunctionalDiffError(
                f"the primitive {primitive.name} has no abstract_eval rule, so it cannot be "
                "staged by make_jaxpr or jit; give its card a shape rule.")
        out = primitive.abstract_eval(*avals_in, **params)
        invars = [t._var for t in tracers]
        if primitive.multiple_results:
            outs = [JaxprTracer(self, a, Var(a)) for a in out]
            self._record(Eqn(primitive, invars, params, [t._var for t in outs]), tracers)
            return outs
        result = JaxprTracer(self, out, Var(out))
        self._record(Eqn(primitive, invars, params, [result._var]), tracers)
        return result

    def _record(self, eqn: Eqn, tracers: Sequence[JaxprTracer]) -> None:
        b = self.builder
        b.eqns.append(eqn)
        if b.sources:
            line = current_source()
            if type(line) is DerivativeSource:
                line = line.line_of(eqn.primitive, tracers)
            record_source(eqn, line or core.user_frame())

    def to_jaxpr(self, in_tracers: Sequence[JaxprTracer], outs: Sequence[Any]) -> ClosedJaxpr:
        """Close the recorded equations over ``in_tracers`` with outputs ``outs``."""
        outvars = [self.full_raise(o)._var for o in outs]
        b = self.builder
        jaxpr = Jaxpr(list(b.const_var_list), [t._var for t in in_tracers], list(b.eqns), outvars)
        return ClosedJaxpr(jaxpr, list(b.const_vals))


def _abstract_to_concrete(self: JaxprTracer, operation: str):
    raise concretization_error(self, operation)


JaxprTracer.to_concrete = _abstract_to_concrete


def trace_to_jaxpr(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray],
                   *, dynamic: bool = True, sources: bool | None = None) -> ClosedJaxpr:
    """Stage ``fun`` (flat list of arrays in, flat list out) at ``in_avals``.

    ``sources`` records each equation's source line (see the module docstring);
    by default while the floating-point checks are on."""
    builder = JaxprBuilder(core.float_checks if sources is None else sources)
    with new_main(JaxprTrace, builder, dynamic=dynamic) as main:
        trace = main.trace
        in_tracers = [trace.new_arg(a) for a in in_avals]
        outs = fun(*in_tracers)
        return trace.to_jaxpr(in_tracers, outs)
