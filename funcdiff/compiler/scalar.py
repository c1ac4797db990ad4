"""Python-float code for programs whose values are all 0-d float64 (or bool).

Numpy pays a ufunc call per operation on 0-d values; Python floats and the
``math`` module are roughly ten times cheaper. Where Python's float semantics
differ from numpy's (math errors, overflow, division by zero) the generated
function raises internally and the numpy version of the program runs instead,
so results always match it.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from funcdiff.core import ShapedArray
from funcdiff.compiler.codegen import Namespace, Program
from funcdiff.ir import Literal, Var


def _scalar_safe_mul(a, b, t):
    # numpy's safe_mul: 0 * anything is 0, even 0 * inf; other products as they are
    return f"({t} if ({t} := {a} * {b}) - {t} == 0.0 or ({a} != 0.0 and {b} != 0.0) else 0.0)"


_SCALAR_OPS: dict[str, Callable[..., str]] = {
    "add": lambda a, b: f"({a} + {b})",
    "sub": lambda a, b: f"({a} - {b})",
    "mul": lambda a, b: f"({a} * {b})",
    "div": lambda a, b: f"({a} / {b})",
    "neg": lambda a: f"(-{a})",
    "max": lambda a, b: f"({a} if {a} > {b} or {a} != {a} else {b})",
    "min": lambda a, b: f"({a} if {a} < {b} or {a} != {a} else {b})",
    "eq": lambda a, b: f"({a} == {b})",
    "ne": lambda a, b: f"({a} != {b})",
    "lt": lambda a, b: f"({a} < {b})",
    "le": lambda a, b: f"({a} <= {b})",
    "gt": lambda a, b: f"({a} > {b})",
    "ge": lambda a, b: f"({a} >= {b})",
    "select": lambda p, t, f: f"({t} if {p} else {f})",
}
_SCALAR_MATH = {
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "exp": math.exp, "log": math.log,
    "sqrt": math.sqrt, "tanh": math.tanh, "sinh": math.sinh, "cosh": math.cosh,
    "asin": math.asin, "acos": math.acos, "atan": math.atan, "asinh": math.asinh,
    "acosh": math.acosh, "atanh": math.atanh, "log1p": math.log1p, "expm1": math.expm1,
    "abs": math.fabs, "pow": math.pow, "atan2": math.atan2, "rem": math.fmod,
}
_F64, _BOOL = np.dtype(np.float64), np.dtype(np.bool_)


def _is_scalar_aval(aval: ShapedArray) -> bool:
    return aval.shape == () and aval.dtype in (_F64, _BOOL)


def _scalar_supported(program: Program) -> bool:
    jaxpr = program.closed.jaxpr
    atoms = list(jaxpr.constvars) + list(jaxpr.invars) + list(jaxpr.outvars)
    for _, eqn in program.eqns:
        name = eqn.primitive.name
        if name not in _SCALAR_OPS and name not in _SCALAR_MATH and name not in (
                "safe_mul", "integer_pow", "convert_element_type"):
            return False
        if name in ("add", "sub", "mul", "div", "neg", "max", "min") + tuple(_SCALAR_MATH) \
                and eqn.outvars[0].aval.dtype != _F64:
            return False
        atoms += list(eqn.invars) + list(eqn.outvars)
    return bool(program.eqns) and all(_is_scalar_aval(a.aval) for a in atoms)


def scalar_source(program: Program, fn_name: str,
                   fallback: Callable) -> tuple[str, dict] | None:
    """A Python-float version of an all-scalar program, or None."""
    if not _scalar_supported(program):
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
        name, args = eqn.primitive.name, [ref(a) for a in eqn.invars]
        counter += 1
        out = names[eqn.outvars[0]] = f"v{counter}"
        if name in _SCALAR_OPS:
            expr = _SCALAR_OPS[name](*args)
        elif name in _SCALAR_MATH:
            expr = f"{ns.add('f', _SCALAR_MATH[name])}({', '.join(args)})"
        elif name == "safe_mul":
            expr = _scalar_safe_mul(args[0], args[1], f"t{counter}")
        elif name == "integer_pow":  # Python's float ** int is C pow, as numpy's
            expr = f"({args[0]} ** {ns.add('k', float(eqn.params['y']), False)})"
        else:  # convert_element_type between float64 and bool
            expr = (f"({args[0]} != 0.0)" if eqn.outvars[0].aval.dtype == _BOOL
                    else f"{convert[_F64]}({args[0]})")
        lines.append(f"        {out} = {expr}")
    box = {_F64: ns.add("f", np.float64), _BOOL: ns.add("f", np.bool_)}
    outs = ", ".join(f"{box[a.aval.dtype]}({ref(a)})" for a in program.outputs)
    errors = ns.add("f", (ArithmeticError, ValueError))
    lines += [f"        return [{outs}]",
              f"    except {errors}:",  # Python raises where numpy gives inf/nan
              f"        return {ns.add('f', fallback)}({', '.join(params)})"]
    return "\n".join(lines) + "\n", ns.values
