"""Rewrite rules as data: what a card declares in ``prim.rewrites`` and how a pass runs it.

A ``Rewrite`` is a row of a rewrite table: the pass that runs it (its
``Stage``), a pattern per operand, an optional guard and a builder of the
replacement. ``x * 1 -> x`` on mul's card reads

    rewrite("x * 1 -> x", (SAME_AS_RESULT, fill(1)), lambda rw, eqn, x, one: x)

- Operand patterns match the leading operands (operands beyond the patterns
  are not looked at; of two, the cheaper pattern is tried first) and each
  captures something for the builder, in operand order: ``ANY`` and
  ``SAME_AS_RESULT`` the atom, ``fill(v)`` the atom uniformly equal to ``v``,
  ``EYE`` a constant identity matrix, ``defined_by(...)`` the *equation*
  defining the operand. ``each=`` gives one pattern for every operand of a
  variadic primitive. Patterns of one pass live in its module
  (``zero_propagation.ZERO``, ``idioms.SHIFT_COTANGENT``).
- ``kinds`` restricts the rule to results of those dtype kinds; ``when(eqn,
  *captures)`` is a further guard; ``build(rw, eqn, *captures)`` returns the
  atom that replaces the result (adding equations with ``rw.add``), or None
  when the rule does not apply after all (before adding anything).
- Rules run in the order the card lists them; the first that applies wins.

A pass runs its own stage's rules (``stage.table()[prim]``, cached per card)
on equations with one result, together with the rules it keys by trait
(``passes.traits``; each pass says in which order).
"""

from __future__ import annotations

from typing import Any, Callable

from funcdiff.core import Primitive, Trait
from funcdiff.ir import Eqn, Var
from funcdiff.roles import Role

NO_MATCH = object()  # what a pattern returns when the operand does not fit


class Stage:
    """The pass that runs a rule: forward_identities, simplify_algebra, ..."""

    __slots__ = ("pass_name", "_rules")

    def __init__(self, pass_name: str):
        self.pass_name = pass_name
        self._rules: dict[Primitive, tuple] = {}  # a cache: prim -> (prim.rewrites, ours)

    def rules_of(self, prim: Primitive) -> tuple:
        """``prim``'s rules of this stage, in its card's order."""
        cached = self._rules.get(prim)
        if cached is not None and cached[0] is prim.rewrites:
            return cached[1]
        rules = tuple(r for r in prim.rewrites if r.stage is self)
        self._rules[prim] = (prim.rewrites, rules)
        return rules

    def table(self) -> "RuleTable":
        """A fresh ``{prim: rules}`` for one run of the pass (a plain dict lookup per equation)."""
        return RuleTable(self)


class RuleTable(dict):
    """``table[prim]`` is ``stage.rules_of(prim)``, looked up once per primitive."""

    __slots__ = ("stage",)

    def __init__(self, stage: Stage):
        super().__init__()
        self.stage = stage

    def __missing__(self, prim: Primitive) -> tuple:
        rules = self[prim] = self.stage.rules_of(prim)
        return rules

    def __repr__(self) -> str:
        return f"Stage({self.pass_name})"


IDENTITIES = Stage("forward_identities")    # an equation that returns its one operand
ALGEBRA = Stage("simplify_algebra")          # algebraic identities
ZEROS = Stage("eliminate_zeros")             # equations with an operand known to be zero
IDIOMS = Stage("drop_softmax_shift_cotangents")  # work a numerical idiom makes useless


class Pattern:
    """What one operand must be: ``match(rw, atom, out)`` returns the capture, or NO_MATCH.

    ``cost`` ranks how much matching takes (0: nothing, 1: a lookup, 2: comparing
    types, higher: analysing the program): of a rule's two operands, the cheaper
    pattern is tried first, so the dearer one runs only when it can decide.
    """

    __slots__ = ("doc", "match", "cost")

    def __init__(self, doc: str, match: Callable[[Any, Any, Var], Any], *, cost: int = 1):
        self.doc = doc
        self.match = match
        self.cost = cost

    def __repr__(self) -> str:
        return f"Pattern({self.doc})"


ANY = Pattern("any operand", lambda rw, a, out: a, cost=0)
SAME_AS_RESULT = Pattern("an operand of the result's shape and dtype",
                         lambda rw, a, out: a if a.aval == out.aval else NO_MATCH, cost=2)
EYE = Pattern("a constant identity matrix", lambda rw, a, out: a if rw.is_eye(a) else NO_MATCH,
              cost=2)


def fill(value) -> Pattern:
    """An operand known to be ``value`` everywhere (a literal, a uniform constant, a broadcast)."""
    return Pattern(f"a uniform fill equal to {value}",
                   lambda rw, a, out: a if rw.is_fill(a, value) else NO_MATCH)


def defined_by(*what: Primitive | Role | Trait, once: bool = False) -> Pattern:
    """An operand defined by an equation of one of ``what`` (primitives, roles whose
    primitive, or traits of the defining primitive); captures that equation. With
    ``once``, the operand must have no other use (so the rewrite does not duplicate work)."""
    prims = tuple(w for w in what if isinstance(w, Primitive))
    roles = tuple(w for w in what if isinstance(w, Role))
    traits = frozenset(w for w in what if isinstance(w, Trait))

    def match(rw, a, out):
        eqn = rw.producer.get(a) if type(a) is Var else None
        if eqn is None:
            return NO_MATCH
        p = eqn.primitive
        if not (p in prims or any(p is r.primitive for r in roles) or traits & p.traits):
            return NO_MATCH
        if once and rw.uses(a) != 1:
            return NO_MATCH
        return eqn
    names = ", ".join(w.name for w in what)
    return Pattern(f"defined by {names}" + (", used once" if once else ""), match)


class Rewrite:
    """One rewrite of an equation of the primitive whose card lists it (see the module doc)."""

    __slots__ = ("stage", "doc", "operands", "each", "kinds", "when", "build", "_first")

    def __init__(self, stage: Stage, doc: str, operands: tuple, build: Callable, *,
                 each: Pattern | None = None, kinds: str | None = None,
                 when: Callable | None = None):
        self.stage = stage
        self.doc = doc
        self.operands = operands
        self.each = each
        self.kinds = kinds
        self.when = when
        self.build = build
        # of two operands, the one matched first: the cheaper (the first on a tie)
        self._first = int(len(operands) == 2 and operands[1].cost < operands[0].cost)

    def __repr__(self) -> str:
        return f"Rewrite({self.stage.pass_name}: {self.doc})"

    def apply(self, rw, eqn: Eqn, ins: list) -> bool:
        """Rewrite ``eqn`` (operands ``ins``, already read) in ``rw`` if the rule fits."""
        out = eqn.outvars[0]
        if self.kinds is not None and out.aval.dtype.kind not in self.kinds:
            return False
        operands = self.operands
        if self.each is not None:
            match = self.each.match
            for a in ins:
                if match(rw, a, out) is NO_MATCH:
                    return False
            captures = ()
        elif len(operands) == 2 and len(ins) >= 2:  # most rules: unrolled, for speed
            k = self._first
            first = operands[k].match(rw, ins[k], out)
            if first is NO_MATCH:
                return False
            second = operands[1 - k].match(rw, ins[1 - k], out)
            if second is NO_MATCH:
                return False
            captures = (second, first) if k else (first, second)
        else:
            captures = []
            for pattern, a in zip(operands, ins):
                c = pattern.match(rw, a, out)
                if c is NO_MATCH:
                    return False
                captures.append(c)
        if self.when is not None and not self.when(eqn, *captures):
            return False
        new = self.build(rw, eqn, *captures)
        if new is None:
            return False
        rw.replace(out, new)
        return True


def rewrite(doc: str, operands: tuple, build: Callable, **options) -> Rewrite:
    """A rule of ``simplify_algebra``."""
    return Rewrite(ALGEBRA, doc, operands, build, **options)


def identity(doc: str, when: Callable | None = None) -> Rewrite:
    """A rule of ``forward_identities``: the equation returns its one operand ``x``
    unchanged when the result has ``x``'s shape and dtype and ``when(eqn, x)`` holds."""
    return Rewrite(IDENTITIES, doc, (SAME_AS_RESULT,), lambda rw, eqn, x: x, when=when)


def on_zeros(doc: str, operands: tuple, build: Callable, **options) -> Rewrite:
    """A rule of ``eliminate_zeros``, tried only when some operand is known to be zero."""
    return Rewrite(ZEROS, doc, operands, build, **options)


def idiom(doc: str, operands: tuple, build: Callable, **options) -> Rewrite:
    """A rule of ``drop_softmax_shift_cotangents``."""
    return Rewrite(IDIOMS, doc, operands, build, **options)


def zeros(rw, eqn: Eqn, *captures):
    """The builder of a zero result: one broadcast of a zero literal."""
    return rw.zeros(eqn.outvars[0].aval)


def run(rules: tuple, rw, eqn: Eqn, ins: list) -> bool:
    """Apply the first of ``rules`` (``Stage.rules_of``) that fits ``eqn``; True if one did."""
    for rule in rules:
        if rule.apply(rw, eqn, ins):
            return True
    return False
