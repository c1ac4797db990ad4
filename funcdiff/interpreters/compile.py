"""Compile a jaxpr to straight-line Python over numpy.

Each equation becomes one line calling the primitive's numpy ``impl`` with its
params already bound, so replaying a program costs one Python call per
equation and nothing else: no tracing, no dispatch through ``bind``. Every
intermediate is deleted right after its last use, so the peak memory of a
program (a backward pass in particular) is what the program needs.

The generated source only ever contains generated identifiers; parameters,
constants and functions are passed in through the namespace, never written
into the text, so nothing a user supplies is evaluated as code.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

from funcdiff.ir import ClosedJaxpr, Jaxpr, Literal, Var


class CompiledProgram:
    """A jaxpr compiled to a Python function of its inputs, with its source text."""

    __slots__ = ("fn", "source", "jaxpr")

    def __init__(self, fn: Callable, source: str, jaxpr: ClosedJaxpr):
        self.fn = fn
        self.source = source
        self.jaxpr = jaxpr

    def __call__(self, *args: Any) -> list[Any]:
        return self.fn(*args)


def _bound_impl(eqn) -> Callable:
    impl = eqn.primitive.impl
    if impl is None:
        from funcdiff.errors import FunctionalDiffError
        raise FunctionalDiffError(f"the primitive {eqn.primitive.name} has no impl rule")
    return functools.partial(impl, **eqn.params) if eqn.params else impl


def compile_jaxpr(closed: ClosedJaxpr, name: str = "program") -> CompiledProgram:
    """Generate, compile and return the Python function that runs ``closed``.

    The function takes the jaxpr's inputs positionally and returns a list of
    its outputs.
    """
    jaxpr = closed.jaxpr
    name = "fn_" + re.sub(r"\W", "_", name)  # a generated identifier, whatever the user's name
    names: dict[int, str] = {}
    namespace: dict[str, Any] = {}
    counter = [0]

    def fresh(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    def bind_name(v: Var) -> str:
        n = names[id(v)] = fresh("v")
        return n

    def ref(a) -> str:
        if type(a) is Literal:
            n = fresh("k")
            namespace[n] = a.val
            return n
        return names[id(a)]

    for v, c in zip(jaxpr.constvars, closed.consts):
        n = bind_name(v)
        namespace[n] = c
    const_names = set(names.values())
    params = [bind_name(v) for v in jaxpr.invars]

    # last use of every variable, to free it right after
    last_use: dict[int, int] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for a in eqn.invars:
            if type(a) is Var:
                last_use[id(a)] = i
    outputs = {id(a) for a in jaxpr.outvars if type(a) is Var}

    lines = [f"def {name}({', '.join(params)}):"]
    for i, eqn in enumerate(jaxpr.eqns):
        fn_name = fresh("f")
        namespace[fn_name] = _bound_impl(eqn)
        args = ", ".join(ref(a) for a in eqn.invars)
        if eqn.primitive.multiple_results:
            outs = [bind_name(v) for v in eqn.outvars]
            lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
            lines.append(f"    {lhs or '_'} = {fn_name}({args})")
        else:
            lines.append(f"    {bind_name(eqn.outvars[0])} = {fn_name}({args})")
        dead = [names[id(a)] for a in dict.fromkeys(eqn.invars)
                if type(a) is Var and last_use.get(id(a)) == i and id(a) not in outputs
                and names[id(a)] not in const_names]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    lines.append(f"    return [{', '.join(ref(a) for a in jaxpr.outvars)}]")
    source = "\n".join(lines) + "\n"
    code = compile(source, f"<funcdiff:{name}>", "exec")
    exec(code, namespace)  # the source holds generated identifiers only
    return CompiledProgram(namespace[name], source, closed)
