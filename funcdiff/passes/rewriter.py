"""The rewriter the optimisation passes share: rebuild a jaxpr equation by equation.

A pass walks the equations of a ``ClosedJaxpr`` once, in order, and for each
either copies it (``emit``), replaces its result by an existing atom
(``replace``), or appends new equations (``add``, given the primitive object:
a rule on a card names its primitives, a pass reaches the ones it emits by
itself through ``funcdiff.roles``, ``roles.BROADCAST`` for zeros). The rewriter keeps the
substitution, the equation that defines each new variable (so a rule can
look at an operand's definition), use counts, what is known about constants
(uniform fills, identity matrices) and a ``memo`` for what patterns work out
about the program; ``finish`` returns the input object itself when nothing
changed, which is how ``optimize`` sees a fixed point.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcdiff import roles
from funcdiff.backends import backend_of
from funcdiff.core import Primitive, ShapedArray, Tracer, get_aval
from funcdiff.errors import JaxprTypeError
from funcdiff.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var

MAX_FILL_SCAN = 1 << 14       # constants up to this size are checked for being uniform
MAX_EYE_SCAN = 1 << 22        # constants up to this size are checked for being identities


def aval_size(aval: ShapedArray) -> int:
    return math.prod(aval.shape)  # (cheaper than aval.size, which goes through numpy)


def scalar_literal(value: Any, dtype: np.dtype) -> Literal:
    """A 0-d literal of ``dtype``."""
    val = np.asarray(value, dtype)[()]
    return Literal(val, ShapedArray((), np.dtype(dtype)))


class Rewriter:
    """Rebuilds a jaxpr equation by equation with variables substituted.

    ``read`` maps an atom of the input program to its atom in the output;
    ``producer`` maps a variable of the output program to the equation that
    defines it, so rewrites can look at an operand's definition.
    """

    def __init__(self, closed: ClosedJaxpr):
        self.closed = closed
        self.env: dict[Var, Any] = {}
        self.eqns: list[Eqn] = []
        self.constvars = list(closed.jaxpr.constvars)
        self.consts = list(closed.consts)
        # the constants whose values the rewrites may read: numpy's (a closed-over
        # dask array is not looked into, that would compute it)
        self.const_of: dict[Var, Any] = {v: c for v, c in zip(self.constvars, self.consts)
                                         if backend_of(c) is None}
        self.producer: dict[Var, Eqn] = {}
        self.changed = False
        self._fills: dict[Var, Any] = {}
        self._uses: dict[Var, int] | None = None
        self.memo: dict[Any, Any] = {}  # what a pattern worked out about this program, by its key

    def read(self, a):
        if type(a) is Literal:
            return a
        return self.env.get(a, a)

    def value(self, a):
        """The known value of atom ``a`` (literal or constant), or None."""
        a = self.read(a)
        if type(a) is Literal:
            return a.val
        return self.const_of.get(a)

    def fill(self, a):
        """The scalar that fills atom ``a`` entirely, if known (literal, uniform
        constant, broadcast of either), else None."""
        a = self.read(a)
        if type(a) is Literal:
            return a.val
        if a in self._fills:
            return self._fills[a]
        result = None
        c = self.const_of.get(a)
        if c is not None:
            if not isinstance(c, Tracer):
                arr = np.asarray(c)
                if 0 < arr.size <= MAX_FILL_SCAN and arr.dtype.kind in "biufc":
                    first = arr.flat[0]
                    if np.all(arr == first):
                        result = first
        else:
            eqn = self.producer.get(a)
            if (eqn is not None and eqn.primitive is roles.BROADCAST.primitive
                    and aval_size(a.aval)):
                result = self.fill(eqn.invars[0])
        self._fills[a] = result
        return result

    def is_eye(self, a) -> bool:
        """Whether atom ``a`` is a constant identity matrix (jacfwd/jacrev bases)."""
        c = self.const_of.get(self.read(a)) if type(a) is Var else None
        if c is None or isinstance(c, Tracer):
            return False
        key = ("eye", id(c))
        if key not in self._fills:
            arr = np.asarray(c)
            self._fills[key] = bool(arr.ndim == 2 and arr.shape[0] == arr.shape[1]
                                    and arr.size <= MAX_EYE_SCAN
                                    and np.array_equal(arr, np.eye(arr.shape[0])))
        return self._fills[key]

    def is_fill(self, a, target: float) -> bool:
        v = self.fill(a)
        if v is None:
            return False
        try:
            return bool(v == target)
        except (TypeError, ValueError):
            return False

    def replace(self, var: Var, atom) -> None:
        atom = self.read(atom)
        if atom.aval != var.aval:
            raise JaxprTypeError(f"internal error in an optimisation pass: replacing "
                                 f"{var.aval.str_short()} by {atom.aval.str_short()}")
        self.env[var] = atom
        self.changed = True
        if type(atom) is Var and self.uses(atom) == 0:  # a new variable takes var's uses
            self._uses[atom] = self._uses.get(var, 0)

    def uses(self, a) -> int:
        """How many times the program uses variable ``a`` (in equations and outputs)."""
        if self._uses is None:
            self._uses = use_counts(self.closed.jaxpr)
        return self._uses.get(a, 0)

    def emit(self, eqn: Eqn, invars=None) -> Eqn:
        """Copy ``eqn`` into the output with its inputs substituted."""
        ins = [self.read(a) for a in (eqn.invars if invars is None else invars)]
        new = eqn if ins == eqn.invars else Eqn(eqn.primitive, ins, eqn.params, eqn.outvars)
        self.eqns.append(new)
        for v in new.outvars:
            self.producer[v] = new
        return new

    def add(self, prim: Primitive, *ins, **params) -> Var:
        """Append a new equation ``prim[params](*ins)`` and return its result."""
        ins = [self.read(a) for a in ins]
        aval = prim.abstract_eval(*[a.aval for a in ins], **params)
        out = Var(aval)
        eqn = Eqn(prim, ins, params, [out])
        self.eqns.append(eqn)
        self.producer[out] = eqn
        self.changed = True
        return out

    def zeros(self, aval: ShapedArray):
        """An atom that is zero of ``aval``: a literal or a broadcast literal."""
        lit = scalar_literal(0, aval.dtype)
        if aval.shape == ():
            return lit
        return self.add(roles.BROADCAST.primitive, lit, shape=aval.shape, broadcast_dimensions=())

    def broadcast(self, x, aval: ShapedArray):
        """``x`` broadcast (numpy rules) to ``aval``'s shape, or None if impossible."""
        x = self.read(x)
        if x.aval.dtype != aval.dtype:
            return None
        if x.aval.shape == aval.shape:
            return x
        lead = len(aval.shape) - len(x.aval.shape)
        if lead < 0 or any(s not in (1, t) for s, t in zip(x.aval.shape, aval.shape[lead:])):
            return None
        return self.add(roles.BROADCAST.primitive, x, shape=aval.shape,
                        broadcast_dimensions=tuple(range(lead, len(aval.shape))))

    def add_const(self, value) -> Any:
        aval = get_aval(value)
        if aval.shape == ():
            return Literal(value, aval)
        v = Var(aval)
        self.constvars.append(v)
        self.consts.append(value)
        self.const_of[v] = value
        return v

    def finish(self) -> ClosedJaxpr:
        if not self.changed:
            return self.closed
        j = self.closed.jaxpr
        out = Jaxpr(self.constvars, list(j.invars), self.eqns, [self.read(a) for a in j.outvars])
        return ClosedJaxpr(out, self.consts, self.closed.in_tree, self.closed.out_tree)


def is_concrete(x: Any) -> bool:
    return x is not None and not isinstance(x, Tracer)


def use_counts(jaxpr: Jaxpr) -> dict[Var, int]:
    """How many times each variable is used, by equations and as an output."""
    counts: dict[Var, int] = {}
    for eqn in jaxpr.eqns:
        for x in eqn.invars:
            if type(x) is Var:
                counts[x] = counts.get(x, 0) + 1
    for x in jaxpr.outvars:
        if type(x) is Var:
            counts[x] = counts.get(x, 0) + 1
    return counts
