"""Source lines of staged equations, so a checkpoint can say where a kept value came from.

Staging records the user's source line of every equation, so
``funcdiff.inspect.saved_residuals`` can say where a kept value came from;
while a staged program is replayed the recorded line is the *current source*
(a context stack like the trace stack).
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Sequence

from funcdiff import core
from funcdiff.core import bind, new_main
from funcdiff.interpreters.staging import JaxprBuilder, JaxprTrace
from funcdiff.ir import ClosedJaxpr, Eqn, Literal, eval_jaxpr

_sources: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()
_source_stack: list[str] = []  # the user line of the staged equation being replayed


def current_source() -> str | None:
    """The user source line of the staged equation being replayed now, if any."""
    return _source_stack[-1] if _source_stack else None


def source_of(closed: ClosedJaxpr, eqn: Eqn) -> str | None:
    return _sources.get(closed, {}).get(id(eqn))


class _SourceTrace(JaxprTrace):
    """Staging that notes, for each equation, the user line that produced it."""

    __slots__ = ()

    def process_primitive(self, primitive, tracers, params):
        out = super().process_primitive(primitive, tracers, params)
        lines = self.main.global_data.lines
        lines[id(self.builder.eqns[-1])] = current_source() or core.user_frame()
        return out


def stage_with_sources(fun: Callable, avals: Sequence) -> ClosedJaxpr:
    """``trace_to_jaxpr(fun, avals)``, recording each equation's source line."""
    builder = JaxprBuilder()
    builder.lines = {}
    with new_main(_SourceTrace, builder, dynamic=True) as main:
        trace = main.trace
        in_tracers = [trace.new_arg(a) for a in avals]
        closed = trace.to_jaxpr(in_tracers, fun(*in_tracers))
    _sources[closed] = builder.lines
    return closed


def with_sources(closed: ClosedJaxpr, like: ClosedJaxpr) -> ClosedJaxpr:
    """Register for ``closed`` (sharing equations with ``like``) the lines of ``like``."""
    if like in _sources:
        _sources[closed] = _sources[like]
    return closed


def eval_with_sources(closed: ClosedJaxpr, args: Sequence[Any],
                      check_floats: bool = False) -> list[Any]:
    """``eval_jaxpr`` that makes each equation's recorded line the current source.

    With ``check_floats`` (jit's re-run under ``fd.config`` debug_nans), the line
    is also the one a ``FloatingPointCheckError`` from that equation names."""
    lines = _sources.get(closed)
    if not lines:
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    jaxpr = closed.jaxpr
    env: dict = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, args))

    def read(a):
        return a.val if type(a) is Literal else env[a]
    for eqn in jaxpr.eqns:
        line = lines.get(id(eqn))
        if line is not None:
            _source_stack.append(line)
            if check_floats:
                core.float_context.append(core.FloatContext(None, line))
        try:
            outs = bind(eqn.primitive, *[read(a) for a in eqn.invars], **eqn.params)
        finally:
            if line is not None:
                _source_stack.pop()
                if check_floats:
                    core.float_context.pop()
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outvars, outs))
        else:
            env[eqn.outvars[0]] = outs
    return [read(a) for a in jaxpr.outvars]
