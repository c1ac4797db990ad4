"""Python-float code for programs whose values are all 0-d float64 (or bool).

Numpy pays a ufunc call per operation on 0-d values; Python floats and the
``math`` module are roughly ten times cheaper. Where Python's float semantics
differ from numpy's (math errors, overflow, division by zero) the generated
function raises internally and the numpy version of the program runs instead,
so results always match it.

Each primitive's card declares its Python-float form (``prim.scalar_lowering``),
a rule ``rule(ns, eqn, args, temp) -> str | None``: the expression computing
the equation from its operands' names ``args``, with ``ns`` the namespace of
the generated function (functions and constants are added there, never
written into the text) and ``temp`` a local the expression may assign; None
when the equation has no such form (its dtypes), and then the program keeps
its numpy version only. ``scalar_operator`` and ``scalar_function`` make the
common rules. A program gets a Python-float version when every equation's
primitive declares one.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from funcdiff.core import ShapedArray
from funcdiff.compiler.codegen import Namespace, Program
from funcdiff.ir import Literal, Var

_F64, _BOOL = np.dtype(np.float64), np.dtype(np.bool_)


def scalar_operator(template: str, *, float_only: bool = True) -> Callable:
    """The rule writing an equation as ``template`` formatted with its operands'
    names (``{0}``, ``{1}``, ...) and ``{t}``, a local of its own that the
    expression may assign with ``:=``; with ``float_only``, for float64 results
    only (Python's bool arithmetic is integer arithmetic)."""
    def lower(ns: Namespace, eqn, args: list[str], temp: str) -> str | None:
        if float_only and eqn.outvars[0].aval.dtype != _F64:
            return None
        return template.format(*args, t=temp)
    return lower


def scalar_function(fn: Callable) -> Callable:
    """The rule calling the Python-float function ``fn`` (``math.sin``) on the
    operands, for float64 results."""
    def lower(ns: Namespace, eqn, args: list[str], temp: str) -> str | None:
        if eqn.outvars[0].aval.dtype != _F64:
            return None
        return f"{ns.add('f', fn)}({', '.join(args)})"
    return lower


def _is_scalar_aval(aval: ShapedArray) -> bool:
    return aval.shape == () and aval.dtype in (_F64, _BOOL)


def _all_scalar(program: Program) -> bool:
    jaxpr = program.closed.jaxpr
    atoms = list(jaxpr.constvars) + list(jaxpr.invars) + list(jaxpr.outvars)
    for _, eqn in program.eqns:
        if eqn.primitive.scalar_lowering is None:
            return False
        atoms += list(eqn.invars) + list(eqn.outvars)
    return bool(program.eqns) and all(_is_scalar_aval(a.aval) for a in atoms)


def scalar_source(program: Program, fn_name: str,
                   fallback: Callable) -> tuple[str, dict] | None:
    """A Python-float version of an all-scalar program, or None."""
    if not _all_scalar(program):
        return None
    ns = Namespace()
    jaxpr = program.closed.jaxpr
    names: dict[Var, str] = {}
    params = [f"a{i}" for i in range(len(jaxpr.invars))]
    lines = [f"def {fn_name}({', '.join(params)}):", "    try:"]
    convert = {_F64: ns.add("f", float), _BOOL: ns.add("f", bool)}
    for i, v in enumerate(jaxpr.invars):
        names[v] = f"x{i}"
        lines.append(f"        x{i} = {convert[v.aval.dtype]}(a{i})")
    for v, c in zip(jaxpr.constvars, program.closed.consts):
        names[v] = ns.add("c", float(c) if v.aval.dtype == _F64 else bool(c), False)

    def ref(a):
        a = program.resolve(a)
        if type(a) is Literal:
            py = float(a.val) if a.aval.dtype == _F64 else bool(a.val)
            return ns.add("k", py, share=False)
        return names[a]

    counter = 0
    for _, eqn in program.eqns:
        args = [ref(a) for a in eqn.invars]
        counter += 1
        out = names[eqn.outvars[0]] = f"v{counter}"
        expr = eqn.primitive.scalar_lowering(ns, eqn, args, f"t{counter}")
        if expr is None:  # no Python-float form for these dtypes
            return None
        lines.append(f"        {out} = {expr}")
    box = {_F64: ns.add("f", np.float64), _BOOL: ns.add("f", np.bool_)}
    outs = ", ".join(f"{box[a.aval.dtype]}({ref(a)})" for a in program.outputs)
    errors = ns.add("f", (ArithmeticError, ValueError))
    lines += [f"        return [{outs}]",
              f"    except {errors}:",  # Python raises where numpy gives inf/nan
              f"        return {ns.add('f', fallback)}({', '.join(params)})"]
    return "\n".join(lines) + "\n", ns.values
