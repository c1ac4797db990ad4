"""The generic optimisation passes: inlining, constant folding, CSE and dead-code elimination.

These passes treat every primitive alike (at most they run its impl, or read
the trait ``COMMUTATIVE``), unlike the rewrite rules of ``algebra.py`` and
``zero_propagation.py``; the call primitive they inline is ``interpreters.call``'s
``call_p``:

- ``inline_calls``: splice nested call programs (inner jit) into the caller.
- ``fold_constants``: evaluate equations whose inputs are all known now.
- ``eliminate_common_subexpressions``: reuse an equal equation's result.
- ``eliminate_dead_code``: drop equations whose results are unused.

Each is a function ClosedJaxpr -> ClosedJaxpr that preserves the program's
meaning, never mutates its input and returns its input unchanged when it
finds nothing to do; all but ``eliminate_dead_code`` rebuild the program
with ``rewriter.Rewriter``. ``pipeline.optimize`` runs
``inline_calls`` first, then the others with the rest of the passes to a
fixed point.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff.interpreters.call import call_p
from funcdiff.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from funcdiff.passes.rewriter import Rewriter, aval_size, is_concrete
from funcdiff.passes.traits import COMMUTATIVE, EFFECTFUL

_MAX_FOLD_ELEMENTS = 1 << 14   # fold constants up to this size, to keep programs small


# ---------------------------------------------------------------------------
# inline_calls


def inline_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Splice the programs of nested ``call`` equations (inner jits) into the caller.

    Every spliced equation gets fresh result variables, so a program called
    twice is inlined twice without defining a variable twice.
    """
    if not any(e.primitive is call_p for e in closed.jaxpr.eqns):
        return closed
    rw = Rewriter(closed)
    rw.changed = True
    for eqn in closed.jaxpr.eqns:
        if eqn.primitive is not call_p:
            rw.emit(eqn)
            continue
        inner = inline_calls(eqn.params["jaxpr"])
        ij = inner.jaxpr
        local: dict[Var, Any] = {}
        for v, c in zip(ij.constvars, inner.consts):
            local[v] = rw.add_const(c)
        for v, a in zip(ij.invars, eqn.invars):
            local[v] = rw.read(a)

        def read(a):
            return a if type(a) is Literal else local[a]
        for ie in ij.eqns:
            outs = [Var(v.aval) for v in ie.outvars]
            local.update(zip(ie.outvars, outs))
            new = Eqn(ie.primitive, [read(a) for a in ie.invars], ie.params, outs)
            rw.eqns.append(new)
            for v in outs:
                rw.producer[v] = new
        for v, a in zip(eqn.outvars, ij.outvars):
            rw.replace(v, read(a))
    return rw.finish()


# ---------------------------------------------------------------------------
# fold_constants


def fold_constants(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Evaluate equations whose inputs are all literals or constants, now.

    Results up to ``_MAX_FOLD_ELEMENTS`` elements become constants (read-only,
    so no caller can change a program by writing into its output); a
    broadcast of a scalar stays a broadcast when larger than that. An
    equation whose evaluation fails is kept, so it fails when the program runs.
    """
    rw = Rewriter(closed)
    for eqn in closed.jaxpr.eqns:
        values = [rw.value(a) for a in eqn.invars]
        small = all(aval_size(v.aval) <= _MAX_FOLD_ELEMENTS for v in eqn.outvars)
        if (small and eqn.primitive.impl is not None and eqn.primitive is not call_p
                and EFFECTFUL not in eqn.primitive.traits
                and all(is_concrete(v) for v in values)):
            try:
                with np.errstate(all="ignore"):
                    outs = eqn.primitive.impl(*values, **eqn.params)
            except Exception:  # noqa: BLE001 - the program raises it when it runs
                rw.emit(eqn)
                continue
            outs = outs if eqn.primitive.multiple_results else [outs]
            for v, o in zip(eqn.outvars, outs):
                arr = np.array(o, dtype=v.aval.dtype)  # a private copy
                arr.flags.writeable = False
                rw.env[v] = rw.add_const(arr[()] if arr.ndim == 0 else arr)
            rw.changed = True
            continue
        rw.emit(eqn)
    return rw.finish()


# ---------------------------------------------------------------------------
# eliminate_common_subexpressions


def _atom_key(a):
    if type(a) is Literal:
        v = np.asarray(a.val)
        return ("lit", v.dtype.str, v.tobytes())  # bytes: 0.0 and -0.0 differ, nan == nan
    return a


def _order(key):
    return (0, key[1], key[2]) if type(key) is tuple else (1, id(key), b"")


def eliminate_common_subexpressions(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Reuse the result of an earlier equation with the same primitive, inputs
    and params (inputs in either order for commutative primitives)."""
    rw = Rewriter(closed)
    seen: dict[Any, Eqn] = {}
    for eqn in closed.jaxpr.eqns:
        ins = [rw.read(a) for a in eqn.invars]
        if EFFECTFUL in eqn.primitive.traits:  # each one runs
            rw.emit(eqn)
            continue
        keys = [_atom_key(a) for a in ins]
        if COMMUTATIVE in eqn.primitive.traits and len(keys) == 2:
            keys.sort(key=_order)
        try:
            key = (eqn.primitive, tuple(keys), tuple(sorted(eqn.params.items())))
            prev = seen.get(key)
        except TypeError:  # unhashable params: never shared
            rw.emit(eqn)
            continue
        if prev is not None:
            for v, pv in zip(eqn.outvars, prev.outvars):
                rw.replace(v, pv)
            continue
        seen[key] = rw.emit(eqn)
    return rw.finish()


# ---------------------------------------------------------------------------
# eliminate_dead_code


def eliminate_dead_code(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drop equations none of whose results are used, and unused constants."""
    j = closed.jaxpr
    live = {a for a in j.outvars if type(a) is Var}
    kept = []
    for eqn in reversed(j.eqns):
        if any(v in live for v in eqn.outvars) or EFFECTFUL in eqn.primitive.traits:
            kept.append(eqn)
            live.update(a for a in eqn.invars if type(a) is Var)
    if len(kept) == len(j.eqns) and all(v in live for v in j.constvars):
        return closed
    kept.reverse()
    pairs = [(v, c) for v, c in zip(j.constvars, closed.consts) if v in live]
    jaxpr = Jaxpr([v for v, _ in pairs], list(j.invars), kept, list(j.outvars))
    return ClosedJaxpr(jaxpr, [c for _, c in pairs], closed.in_tree, closed.out_tree)
