"""Transpose: run a linear jaxpr backwards, from output cotangents to input ones.

Equations that do not depend on the linear inputs are evaluated forward first.
The rest are visited in reverse; each linear primitive's transpose rule maps
the cotangent of its output to cotangents of its linear inputs, which are
accumulated with ``add`` (a variable used twice receives the sum). Zero
cotangents stay symbolic and skip their equation entirely.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcdiff import core, roles
from funcdiff.core import ShapedArray, Zero, bind
from funcdiff.errors import NonlinearTransposeError
from funcdiff.ir import Jaxpr, Literal, Var, enter_source, leave_source


# Accumulating cotangents is the one operation the backward pass emits by itself;
# the card of addition fills the role.

class UndefinedPrimal:
    """Marks a linear input of a primitive being transposed."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x: Any) -> bool:
    return type(x) is UndefinedPrimal


def add_cotangents(a: Any, b: Any) -> Any:
    """Sum two cotangents of the same aval; Zero is the identity."""
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    if type(a) is np.ndarray and type(b) is np.ndarray and core.impls_run_directly():
        return a + b  # add's impl for two arrays of one dtype (a tape's cotangents)
    return roles.ADD.primitive.bind(a, b)


def backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], linear_args: Sequence[Any],
                  cts_out: Sequence[Any]) -> list[Any]:
    """Cotangents of the jaxpr's inputs given cotangents of its outputs.

    ``linear_args`` holds, per input, an ``UndefinedPrimal`` (linear input) or
    a value (a non-linear input that only scales linear ones).
    """
    env: dict[Var, Any] = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    linear_vars: set[Var] = set()
    for v, a in zip(jaxpr.invars, linear_args):
        if is_undefined(a):
            linear_vars.add(v)
        else:
            env[v] = a

    def read(atom):
        if type(atom) is Literal:
            return atom.val
        return UndefinedPrimal(atom.aval) if atom in linear_vars else env[atom]

    check = core.float_checks
    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(type(a) is Var and a in linear_vars for a in eqn.invars):
            linear_eqns.append(eqn)
            linear_vars.update(eqn.outvars)
        else:
            outs = bind(eqn.primitive, *[read(a) for a in eqn.invars], **eqn.params)
            if eqn.primitive.multiple_results:
                env.update(zip(eqn.outvars, outs))
            else:
                env[eqn.outvars[0]] = outs

    ct_env: dict[Var, Any] = {}

    def write_ct(atom, ct):
        if type(atom) is Var and atom in linear_vars and ct is not None and type(ct) is not Zero:
            prev = ct_env.get(atom)
            ct_env[atom] = ct if prev is None else add_cotangents(prev, ct)

    for atom, ct in zip(jaxpr.outvars, cts_out):
        write_ct(atom, ct)

    for eqn in reversed(linear_eqns):
        prim = eqn.primitive
        if prim.multiple_results:
            cts = [ct_env.pop(v, None) for v in eqn.outvars]
            if all(c is None for c in cts):
                continue
            cts = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outvars, cts)]
        else:
            cts = ct_env.pop(eqn.outvars[0], None)
            if cts is None:
                continue
        rule = prim.transpose
        if rule is None:
            raise NonlinearTransposeError(
                f"reverse mode reached the primitive {prim.name}, which has no transpose "
                "rule: it is not linear in its tangent inputs")
        line = eqn.source if check else None
        if line is not None:  # staged transposed equations, and checks now, name the operation
            enter_source(line, True)
        try:
            cts_in = rule(cts, *[read(a) for a in eqn.invars], **eqn.params)
        finally:
            if line is not None:
                leave_source(True)
        for atom, ct in zip(eqn.invars, cts_in):
            write_ct(atom, ct)

    return [ct_env.pop(v, None) if v in linear_vars else None for v in jaxpr.invars]
