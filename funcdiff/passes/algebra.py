"""Algebraic simplification: the rewrite rules the cards declare, and the ones keyed by trait.

Differentiation leaves algebraic redundancy behind: multiplications by one,
additions of zeros, negations of negations, reshapes to the same shape,
transposes of transposes, sums of broadcasts. Two optimisation passes remove
it; each is a function ClosedJaxpr -> ClosedJaxpr that preserves the
program's meaning (values and, since rewrites only use primitives,
derivatives too), never mutates its input and returns its input unchanged
when it finds nothing to do:

- ``forward_identities``: drop equations that return their operand unchanged
  (a reshape to the same shape, a transpose by the identity, ...): the
  ``rules.identity`` rules on each primitive's card say when.
- ``simplify_algebra``: the ``rules.rewrite`` rules on each primitive's card
  (x*1 on mul's, x+0 and a+neg(b) on add's, transpose of transpose on
  transpose's, ...), then the rules keyed by trait: f(neg a) -> neg f(a) for
  ``NEG_COMMUTING`` primitives, and broadcasts whose only users broadcast
  implicitly anyway (``BROADCASTING``) become reshapes.

Both rebuild the program with ``rewriter.Rewriter``. IEEE semantics are kept
except for the sign of zero (``x + 0`` becomes ``x``, so -0.0 + 0.0 gives
-0.0). Work on values known to be zero is ``zero_propagation.py``'s; the
pipeline that runs every pass to a fixed point is ``pipeline.optimize``.
"""

from __future__ import annotations

from funcdiff import roles
from funcdiff.core import broadcast_shape
from funcdiff.ir import ClosedJaxpr, Eqn, Var
from funcdiff.passes.rewriter import Rewriter
from funcdiff.passes.rules import ALGEBRA, IDENTITIES, run
from funcdiff.passes.traits import BROADCASTING, NEG_COMMUTING


# ---------------------------------------------------------------------------
# forward_identities


def forward_identities(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drop equations of one operand that return it unchanged (their cards'
    ``identity`` rules: reshapes, squeezes, transposes, converts, broadcasts,
    reverses, slices and reductions that move nothing)."""
    rw = Rewriter(closed)
    rules_of = IDENTITIES.table()
    for eqn in closed.jaxpr.eqns:
        if len(eqn.invars) == 1 and len(eqn.outvars) == 1:
            rules = rules_of[eqn.primitive]
            if rules:
                x = rw.read(eqn.invars[0])  # (every identity rule needs x's type for the result)
                if x.aval == eqn.outvars[0].aval and run(rules, rw, eqn, [x]):
                    continue
        rw.emit(eqn)
    return rw.finish()


# ---------------------------------------------------------------------------
# simplify_algebra


def _expanded_shape(x_shape, shape, dims):
    """The shape that puts ``x``'s axes at ``dims`` of ``shape`` with 1 elsewhere,
    without leading 1s: numpy broadcasting then does what broadcast_in_dim does."""
    if list(dims) != sorted(dims):
        return None
    full = [1] * len(shape)
    for k, d in enumerate(dims):
        full[d] = x_shape[k]
    while full and full[0] == 1 and len(full) > len(x_shape):
        full.pop(0)
    return tuple(full)


def _move_negation_out(rw: Rewriter, eqn: Eqn, ins: list) -> bool:
    """f(neg a) -> neg f(a), f(neg a, neg b) -> f(a, b) for a ``NEG_COMMUTING`` f
    (exact in IEEE arithmetic), when each neg has no other use: the negation
    travels to the add, sub or neg that absorbs it."""
    out = eqn.outvars[0]
    if out.aval.dtype.kind not in "fc":
        return False
    neg = roles.NEG.primitive
    new_ins = list(ins)
    negated = 0
    for k, a in enumerate(ins):
        p = rw.producer.get(a) if type(a) is Var else None
        if p is not None and p.primitive is neg and rw.uses(a) == 1:
            new_ins[k] = p.invars[0]
            negated += 1
    if not negated:
        return False
    new = rw.add(eqn.primitive, *new_ins, **eqn.params)
    rw.replace(out, rw.add(neg, new) if negated % 2 else new)
    return True


def _simplify_one(rw: Rewriter, eqn: Eqn, rules_of) -> bool:
    """Rewrite ``eqn`` by its card's rules and its traits; True when one applied.

    A negation moves out of a one-operand primitive before the card's rules run
    (they tidy moves and sums, which a neg in between would hide from them), and
    out of a product after them (its identities, x * 1, drop the product whole).
    """
    prim = eqn.primitive
    rules = rules_of[prim]
    neg_commuting = NEG_COMMUTING in prim.traits
    if len(eqn.outvars) != 1 or not (rules or neg_commuting):
        return False
    ins = [rw.read(a) for a in eqn.invars]
    if neg_commuting and len(ins) == 1:
        return _move_negation_out(rw, eqn, ins) or run(rules, rw, eqn, ins)
    return (run(rules, rw, eqn, ins)
            or (neg_commuting and _move_negation_out(rw, eqn, ins)))


def _implicit_broadcasts(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Replace broadcast_in_dim by (at most) a reshape when every user is a
    numpy-broadcasting elementwise primitive whose result shape stays the same."""
    j = closed.jaxpr
    uses: dict[Var, list[Eqn]] = {}
    for eqn in j.eqns:
        for a in eqn.invars:
            if type(a) is Var:
                uses.setdefault(a, []).append(eqn)
    outputs = {a for a in j.outvars if type(a) is Var}
    broadcast = roles.BROADCAST.primitive
    replace: dict[Var, tuple] = {}
    for eqn in j.eqns:
        if eqn.primitive is not broadcast:
            continue
        v, x = eqn.outvars[0], eqn.invars[0]
        users = uses.get(v, [])
        if v in outputs or not users or any(BROADCASTING not in u.primitive.traits
                                            for u in users):
            continue
        small = _expanded_shape(x.aval.shape, eqn.params["shape"],
                                eqn.params["broadcast_dimensions"])
        if small is None:
            continue
        ok = all(broadcast_shape(*[small if a is v else replace.get(a, a.aval.shape)
                                   for a in u.invars]) == u.outvars[0].aval.shape
                 for u in users)  # (with the operands already replaced, too)
        if ok:
            replace[v] = small
    if not replace:
        return closed
    rw = Rewriter(closed)
    for eqn in j.eqns:
        v = eqn.outvars[0] if eqn.outvars else None
        if v in replace:
            x = rw.read(eqn.invars[0])
            small = replace[v]
            new = x if x.aval.shape == small else rw.add(roles.RESHAPE.primitive, x, new_sizes=small)
            rw.env[v] = new  # avals differ on purpose: every user broadcasts
            rw.changed = True
            continue
        rw.emit(eqn)
    return rw.finish()


def simplify_algebra(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Remove the algebraic redundancy differentiation leaves behind.

    The rules are declared on the cards (``prim.rewrites``) or keyed by trait:

    - identities: x*1, 1*x, x/1, x+0, 0+x, x-0 -> x; x*-1, 0-x -> neg x;
    - negations: neg(neg x) -> x; a+neg(b) -> a-b; a-neg(b) -> a+b;
      neg(x * c), neg(x / c) -> x * -c, x / -c for a literal c;
      f(neg a) -> neg f(a) for f linear in a (sums, moves, products), so a
      negation travels to the add or sub that absorbs it; neg a * neg b -> a*b;
    - moves: transpose(transpose x) -> one transpose (or x); squeeze,
      expand_dims and chains of them with reshape -> one reshape (or x);
      broadcast of a broadcast -> one broadcast; a broadcast whose users all
      broadcast implicitly (numpy rules) -> a reshape (or nothing);
    - reduce_sum of a broadcast -> the operand's sum times the element count,
      broadcast to what remains (a scalar's sum is one multiply);
    - a contraction with a constant identity matrix (the basis of jacfwd and
      jacrev) -> a transpose;
    - round trips through a wider float (f32 -> f64 -> f32) -> x.
    """
    closed = _implicit_broadcasts(closed)  # first: the reshapes it makes may collapse below
    rw = Rewriter(closed)
    rules_of = ALGEBRA.table()
    for eqn in closed.jaxpr.eqns:
        if not _simplify_one(rw, eqn, rules_of):
            rw.emit(eqn)
    return rw.finish()
