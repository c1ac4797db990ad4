"""Optimisation passes over jaxprs: each is a function ClosedJaxpr -> ClosedJaxpr.

Differentiation leaves redundant work behind: multiplications by one,
additions of zeros, reshapes to the same shape, transposes of transposes,
values computed twice, values computed and never used. Each pass removes one
kind and preserves the program's meaning; ``optimize`` runs them in order.
Passes never mutate their input.

- ``inline_calls``: splice nested call programs into the caller.
- ``forward_identities``: drop reshape/transpose/convert/broadcast that do nothing.
- ``simplify_algebra``: x*1, 1*x, x+0, 0+x, x-0, neg(neg x), transpose of transpose.
- ``fold_constants``: evaluate equations whose inputs are all known now.
- ``eliminate_common_subexpressions``: reuse an equal equation's result.
- ``eliminate_dead_code``: drop equations whose results are unused.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcdiff.core import get_aval
from funcdiff.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var

_MAX_FOLD_ELEMENTS = 1 << 16  # fold constants up to this size, to keep programs small


class _Rewriter:
    """Rebuilds a jaxpr equation by equation with variables substituted."""

    def __init__(self, closed: ClosedJaxpr):
        self.closed = closed
        self.subst: dict[int, Any] = {}
        self.eqns: list[Eqn] = []
        self.constvars = list(closed.jaxpr.constvars)
        self.consts = list(closed.consts)
        self.const_of = {id(v): c for v, c in zip(self.constvars, self.consts)}

    def read(self, a):
        if type(a) is Literal:
            return a
        return self.subst.get(id(a), a)

    def value(self, a):
        """The known value of atom ``a`` (literal or constant), or None."""
        a = self.read(a)
        if type(a) is Literal:
            return a.val
        c = self.const_of.get(id(a))
        return c

    def replace(self, var: Var, atom) -> None:
        self.subst[id(var)] = self.read(atom)

    def emit(self, eqn: Eqn, invars=None) -> None:
        ins = [self.read(a) for a in (eqn.invars if invars is None else invars)]
        self.eqns.append(Eqn(eqn.primitive, ins, eqn.params, eqn.outvars))

    def add_const(self, value) -> Any:
        aval = get_aval(value)
        if aval.shape == ():
            return Literal(value, aval)
        v = Var(aval)
        self.constvars.append(v)
        self.consts.append(value)
        self.const_of[id(v)] = value
        return v

    def finish(self) -> ClosedJaxpr:
        j = self.closed.jaxpr
        out = Jaxpr(self.constvars, list(j.invars), self.eqns, [self.read(a) for a in j.outvars])
        return ClosedJaxpr(out, self.consts, self.closed.in_tree, self.closed.out_tree)


def _is_concrete(x: Any) -> bool:
    from funcdiff.core import Tracer
    return x is not None and not isinstance(x, Tracer)


# ---------------------------------------------------------------------------


def inline_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Splice the programs of nested ``call`` equations into the caller."""
    from funcdiff.interpreters.call import call_p
    if not any(e.primitive is call_p for e in closed.jaxpr.eqns):
        return closed
    rw = _Rewriter(closed)
    for eqn in closed.jaxpr.eqns:
        if eqn.primitive is not call_p:
            rw.emit(eqn)
            continue
        inner = inline_calls(eqn.params["jaxpr"])
        ij = inner.jaxpr
        for v, c in zip(ij.constvars, inner.consts):
            rw.subst[id(v)] = rw.add_const(c) if get_aval(c).shape != () else Literal(c, get_aval(c))
        for v, a in zip(ij.invars, eqn.invars):
            rw.subst[id(v)] = rw.read(a)
        for ie in ij.eqns:
            rw.emit(ie)
        for v, a in zip(eqn.outvars, ij.outvars):
            rw.replace(v, a)
    return rw.finish()


def forward_identities(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drop reshapes, transposes, converts and broadcasts that change nothing."""
    rw = _Rewriter(closed)
    for eqn in closed.jaxpr.eqns:
        name, p = eqn.primitive.name, eqn.params
        if len(eqn.invars) == 1 and len(eqn.outvars) == 1:
            x = rw.read(eqn.invars[0])
            same = x.aval == eqn.outvars[0].aval
            if same and (name in ("reshape", "convert_element_type", "stop_gradient")
                         or (name == "transpose" and tuple(p["permutation"]) == tuple(range(len(p["permutation"]))))
                         or (name == "broadcast_in_dim"
                             and tuple(p["broadcast_dimensions"]) == tuple(range(x.aval.ndim)))):
                rw.replace(eqn.outvars[0], x)
                continue
        rw.emit(eqn)
    return rw.finish()


def _is_scalar_value(v: Any, target: float) -> bool:
    if v is None:
        return False
    try:
        arr = np.asarray(v)
    except Exception:
        return False
    return arr.dtype.kind in "biuf" and arr.size > 0 and bool(np.all(arr == target))


def simplify_algebra(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Remove x*1, 1*x, x+0, 0+x, x-0, neg(neg x) and transpose(transpose x)."""
    rw = _Rewriter(closed)
    producer: dict[int, Eqn] = {}
    for eqn in closed.jaxpr.eqns:
        name = eqn.primitive.name
        ins = [rw.read(a) for a in eqn.invars]
        out = eqn.outvars[0] if eqn.outvars else None
        if name in ("mul", "add", "sub") and len(ins) == 2:
            unit = 1.0 if name == "mul" else 0.0
            for keep, other in ((0, 1), (1, 0)):
                if name == "sub" and keep == 1:
                    continue
                if _is_scalar_value(rw.value(ins[other]), unit) and ins[keep].aval == out.aval:
                    rw.replace(out, ins[keep])
                    break
            else:
                rw.emit(eqn)
                producer[id(out)] = Eqn(eqn.primitive, ins, eqn.params, eqn.outvars)
            continue
        if name in ("neg", "transpose") and type(ins[0]) is Var:
            prev = producer.get(id(ins[0]))
            if prev is not None and prev.primitive.name == name:
                if name == "neg":
                    rw.replace(out, prev.invars[0])
                    continue
                perm1, perm2 = prev.params["permutation"], eqn.params["permutation"]
                combined = tuple(perm1[i] for i in perm2)
                if combined == tuple(range(len(combined))):
                    rw.replace(out, prev.invars[0])
                    continue
                new = Eqn(eqn.primitive, [prev.invars[0]], {"permutation": combined}, eqn.outvars)
                rw.eqns.append(new)
                producer[id(out)] = new
                continue
        rw.emit(eqn)
        if out is not None:
            producer[id(out)] = rw.eqns[-1]
    return rw.finish()


def fold_constants(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Evaluate equations whose inputs are all literals or constants, now."""
    rw = _Rewriter(closed)
    for eqn in closed.jaxpr.eqns:
        values = [rw.value(a) for a in eqn.invars]
        small = all(v.aval.size <= _MAX_FOLD_ELEMENTS for v in eqn.outvars)
        if values and all(_is_concrete(v) for v in values) and small and eqn.primitive.impl \
                and eqn.primitive.name not in ("call",):
            outs = eqn.primitive.impl(*values, **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            for v, o in zip(eqn.outvars, outs):
                rw.subst[id(v)] = rw.add_const(np.asarray(o, dtype=v.aval.dtype)
                                               if np.ndim(o) == 0 else o)
            continue
        rw.emit(eqn)
    return rw.finish()


def _atom_key(a):
    if type(a) is Literal:
        v = a.val
        return ("lit", type(v).__name__, v.item() if hasattr(v, "item") else v, a.aval)
    return ("var", id(a))


def eliminate_common_subexpressions(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Reuse the result of an earlier equation with the same primitive, inputs and params."""
    rw = _Rewriter(closed)
    seen: dict[Any, Eqn] = {}
    for eqn in closed.jaxpr.eqns:
        ins = [rw.read(a) for a in eqn.invars]
        try:
            key = (eqn.primitive, tuple(_atom_key(a) for a in ins),
                   tuple(sorted(eqn.params.items())))
            hash(key)
        except TypeError:
            rw.emit(eqn)
            continue
        prev = seen.get(key)
        if prev is not None:
            for v, pv in zip(eqn.outvars, prev.outvars):
                rw.replace(v, pv)
            continue
        seen[key] = eqn
        rw.emit(eqn)
    return rw.finish()


def eliminate_dead_code(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drop equations none of whose results are used, and unused constants."""
    j = closed.jaxpr
    live = {id(a) for a in j.outvars if type(a) is Var}
    kept = []
    for eqn in reversed(j.eqns):
        if any(id(v) in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(id(a) for a in eqn.invars if type(a) is Var)
    kept.reverse()
    pairs = [(v, c) for v, c in zip(j.constvars, closed.consts) if id(v) in live]
    jaxpr = Jaxpr([v for v, _ in pairs], list(j.invars), kept, list(j.outvars))
    return ClosedJaxpr(jaxpr, [c for _, c in pairs], closed.in_tree, closed.out_tree)


PASSES: list[Callable[[ClosedJaxpr], ClosedJaxpr]] = [
    inline_calls, forward_identities, simplify_algebra, fold_constants,
    eliminate_common_subexpressions, forward_identities, simplify_algebra,
    eliminate_dead_code,
]


def optimize(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Run every pass in order; the result computes the same values."""
    for p in PASSES:
        closed = p(closed)
    return closed


def program_cost(closed: ClosedJaxpr) -> dict:
    """Total flops and bytes of a program, from each primitive's cost rule."""
    flops = nbytes = 0
    for eqn in closed.jaxpr.eqns:
        rule = eqn.primitive.cost
        if rule is None:
            continue
        c = rule(*[a.aval for a in eqn.invars], **eqn.params)
        flops += c.get("flops", 0)
        nbytes += c.get("bytes", 0)
    return {"flops": flops, "bytes": nbytes}
