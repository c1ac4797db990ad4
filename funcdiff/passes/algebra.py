"""Algebraic simplification: rewrite rules that know what particular primitives compute.

Differentiation leaves algebraic redundancy behind: multiplications by one,
additions of zeros, negations of negations, reshapes to the same shape,
transposes of transposes, sums of broadcasts. Two optimisation passes remove
it; each is a function ClosedJaxpr -> ClosedJaxpr that preserves the
program's meaning (values and, since rewrites only use primitives,
derivatives too), never mutates its input and returns its input unchanged
when it finds nothing to do:

- ``forward_identities``: drop reshape/transpose/convert/broadcast/... that do nothing.
- ``simplify_algebra``: x*1, x+0, x-0, 0-x, neg(neg x), a+neg(b), transpose of
  transpose, reshape of reshape, broadcast of broadcast, reduce_sum of a
  broadcast (a multiply by the element count and a smaller broadcast), and
  broadcasts whose only users broadcast implicitly anyway (numpy rules).

Both rebuild the program with ``rewriter.Rewriter``. IEEE semantics are kept
except for the sign of zero (``x + 0`` becomes ``x``, so -0.0 + 0.0 gives
-0.0). Work on values known to be zero is ``zero_propagation.py``'s; the
pipeline that runs every pass to a fixed point is ``optimize`` in ``passes.py``.
"""

from __future__ import annotations

import numpy as np

from funcdiff.errors import FunctionalDiffError
from funcdiff.passes.rewriter import Rewriter, scalar_literal
from funcdiff.ir import ClosedJaxpr, Eqn, Literal, Var

# primitives whose result is a pure reshaping of their single operand
_RESHAPES = ("reshape", "squeeze", "expand_dims")
# numpy-broadcasting elementwise primitives with two (select: three) operands
_BROADCASTING = frozenset(("add", "sub", "mul", "safe_mul", "div", "rem", "pow", "max", "min",
                           "atan2", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor",
                           "select"))
# primitives with f(..., -a, ...) = -f(..., a, ...) exactly, for the operand rules below
_NEG_COMMUTING = frozenset(("reduce_sum", "reshape", "squeeze", "expand_dims", "transpose",
                            "broadcast_in_dim", "rev", "slice", "mul", "safe_mul", "div",
                            "dot_general", "cumsum"))


# ---------------------------------------------------------------------------
# forward_identities


def _is_identity(eqn: Eqn, x) -> bool:
    """Whether ``eqn`` (one operand ``x``, one result) returns ``x`` unchanged."""
    if len(eqn.outvars) != 1 or x.aval != eqn.outvars[0].aval:
        return False
    name, p = eqn.primitive.name, eqn.params
    if name in ("reshape", "squeeze", "expand_dims", "convert_element_type"):
        return True  # same shape and dtype: nothing moves
    if name == "broadcast_in_dim":
        return tuple(p["broadcast_dimensions"]) == tuple(range(x.aval.ndim))
    if name == "transpose":
        return tuple(p["permutation"]) == tuple(range(len(p["permutation"])))
    if name == "rev":
        return all(x.aval.shape[d] <= 1 for d in p["dimensions"])
    if name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
                "reduce_or"):
        return tuple(p["axes"]) == ()
    if name == "slice":
        return (all(s == 0 for s in p["start_indices"])
                and all(s in (None, 1) for s in (p["strides"] or ())))
    return False


def forward_identities(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drop reshapes, squeezes, transposes, converts, broadcasts, reverses, slices
    and empty reductions that return their operand unchanged."""
    rw = Rewriter(closed)
    for eqn in closed.jaxpr.eqns:
        if len(eqn.invars) == 1:
            x = rw.read(eqn.invars[0])
            if _is_identity(eqn, x):
                rw.replace(eqn.outvars[0], x)
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


def _reduce_sum_of_broadcast(rw: Rewriter, eqn: Eqn, bcast: Eqn) -> bool:
    """reduce_sum(broadcast_in_dim(x)) -> broadcast(reduce_sum(x) * count)."""
    x = bcast.invars[0]
    shape, dims = bcast.params["shape"], tuple(bcast.params["broadcast_dimensions"])
    axes = set(eqn.params["axes"])
    dtype = x.aval.dtype
    if dtype.kind not in "iuf" or list(dims) != sorted(set(dims)) \
            or any(shape[d] == 0 for d in axes):
        return False  # (an empty sum is 0 even of inf; count * inf would not be)
    count = 1
    for d in axes:  # summed axes x does not vary along: each adds shape[d] copies
        if d not in dims or x.aval.shape[dims.index(d)] != shape[d]:
            count *= shape[d]
    x_axes = tuple(k for k, d in enumerate(dims) if d in axes)
    y = rw.add("reduce_sum", x, axes=x_axes) if x_axes else x
    if count != 1:
        y = rw.add("mul", y, scalar_literal(count, dtype))
    kept = [d for d in range(len(shape)) if d not in axes]
    out_aval = eqn.outvars[0].aval
    new_dims = tuple(kept.index(d) for k, d in enumerate(dims) if d not in axes)
    if y.aval.shape != out_aval.shape or new_dims != tuple(range(len(new_dims))):
        y = rw.add("broadcast_in_dim", y, shape=out_aval.shape, broadcast_dimensions=new_dims)
    rw.replace(eqn.outvars[0], y)
    return True


def _simplify_one(rw: Rewriter, eqn: Eqn) -> bool:
    """Rewrite ``eqn`` if a rule applies; True when it was handled."""
    name = eqn.primitive.name
    if len(eqn.outvars) != 1:
        return False
    out = eqn.outvars[0]
    ins = [rw.read(a) for a in eqn.invars]
    producers = [rw.producer.get(a) if type(a) is Var else None for a in ins]
    pnames = [p.primitive.name if p is not None else None for p in producers]

    if name in ("mul", "safe_mul", "div") and len(ins) == 2:
        x, y = ins
        if rw.is_fill(y, 1) and x.aval == out.aval:
            rw.replace(out, x)
            return True
        if name != "div" and rw.is_fill(x, 1) and y.aval == out.aval:
            rw.replace(out, y)
            return True
        if out.aval.dtype.kind in "if":
            if rw.is_fill(y, -1) and x.aval == out.aval:
                rw.replace(out, rw.add("neg", x))
                return True
            if name != "div" and rw.is_fill(x, -1) and y.aval == out.aval:
                rw.replace(out, rw.add("neg", y))
                return True
    if name in ("add", "sub") and len(ins) == 2:
        x, y = ins
        if rw.is_fill(y, 0) and x.aval == out.aval:
            rw.replace(out, x)
            return True
        if rw.is_fill(x, 0) and y.aval == out.aval:
            rw.replace(out, y if name == "add" else rw.add("neg", y))
            return True
        # a + neg(b) -> a - b;  neg(a) + b -> b - a;  a - neg(b) -> a + b
        if pnames[1] == "neg":
            rw.replace(out, rw.add("sub" if name == "add" else "add", x, producers[1].invars[0]))
            return True
        if name == "add" and pnames[0] == "neg":
            rw.replace(out, rw.add("sub", y, producers[0].invars[0]))
            return True
    if name == "neg" and pnames[0] == "neg":
        rw.replace(out, producers[0].invars[0])
        return True
    if name == "neg" and pnames[0] in ("mul", "div") and rw.uses(ins[0]) == 1:
        # neg(x * c) -> x * -c and neg(x / c) -> x / -c for a literal c: exact
        x, c = producers[0].invars
        if type(c) is Literal and c.aval.dtype.kind in "fc":
            rw.replace(out, rw.add(pnames[0], x, scalar_literal(-np.asarray(c.val), c.aval.dtype)))
            return True
    if name in _NEG_COMMUTING and out.aval.dtype.kind in "fc":
        # f(neg a) -> neg f(a) for f linear in that operand (exact in IEEE arithmetic):
        # the neg moves towards an add, sub or neg that absorbs it
        negated = [k for k, p in enumerate(pnames) if p == "neg" and rw.uses(ins[k]) == 1
                   and (name != "div" or k == 0)]
        if name in ("mul", "safe_mul", "dot_general") and len(negated) == 2:
            rw.replace(out, rw.add(name, producers[0].invars[0], producers[1].invars[0],
                                   **eqn.params))
            return True
        if negated and (len(ins) == 1 or name in ("mul", "safe_mul", "div", "dot_general")):
            k = negated[0]
            new_ins = list(ins)
            new_ins[k] = producers[k].invars[0]
            rw.replace(out, rw.add("neg", rw.add(name, *new_ins, **eqn.params)))
            return True
    if name == "transpose" and pnames[0] == "transpose":
        perm1, perm2 = producers[0].params["permutation"], eqn.params["permutation"]
        combined = tuple(perm1[i] for i in perm2)
        inner = producers[0].invars[0]
        if combined == tuple(range(len(combined))):
            rw.replace(out, inner)
        else:
            rw.replace(out, rw.add("transpose", inner, permutation=combined))
        return True
    if name in _RESHAPES and (pnames[0] in _RESHAPES or name != "reshape"):
        # one canonical reshape, so that equal reshapes meet in CSE
        inner = producers[0].invars[0] if pnames[0] in _RESHAPES else ins[0]
        if inner.aval.shape == out.aval.shape:
            rw.replace(out, inner)
        else:
            rw.replace(out, rw.add("reshape", inner, new_sizes=out.aval.shape))
        return True
    if name == "broadcast_in_dim" and pnames[0] == "broadcast_in_dim":
        inner_eqn = producers[0]
        dims1 = tuple(inner_eqn.params["broadcast_dimensions"])
        dims2 = tuple(eqn.params["broadcast_dimensions"])
        if list(dims1) != sorted(set(dims1)) or list(dims2) != sorted(set(dims2)):
            return False
        rw.replace(out, rw.add("broadcast_in_dim", inner_eqn.invars[0], shape=out.aval.shape,
                               broadcast_dimensions=tuple(dims2[d] for d in dims1)))
        return True
    if name == "reduce_sum" and pnames[0] == "broadcast_in_dim":
        return _reduce_sum_of_broadcast(rw, eqn, producers[0])
    if name == "dot_general":
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        if not lb and len(lc) == 1:
            x, y = ins
            if rw.is_eye(y):  # x . I: x's contracted axis becomes the last one
                perm = tuple(i for i in range(x.aval.ndim) if i != lc[0]) + (lc[0],)
            elif rw.is_eye(x):  # I . y: y's contracted axis becomes the first one
                perm = (rc[0],) + tuple(i for i in range(y.aval.ndim) if i != rc[0])
                x = y
            else:
                return False
            new = x if perm == tuple(range(len(perm))) else \
                rw.add("transpose", x, permutation=perm)
            rw.replace(out, new)
            return True
    if name == "convert_element_type" and pnames[0] == "convert_element_type":
        inner = producers[0].invars[0]
        mid = ins[0].aval.dtype
        if (inner.aval.dtype == out.aval.dtype and inner.aval.dtype.kind == mid.kind == "f"
                and mid.itemsize >= inner.aval.dtype.itemsize):
            rw.replace(out, inner)  # a round trip through a wider float is exact
            return True
    return False


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
    from funcdiff.primitives.cards import broadcast_shapes
    replace: dict[Var, tuple] = {}
    for eqn in j.eqns:
        if eqn.primitive.name != "broadcast_in_dim":
            continue
        v, x = eqn.outvars[0], eqn.invars[0]
        users = uses.get(v, [])
        if v in outputs or not users or any(u.primitive.name not in _BROADCASTING for u in users):
            continue
        small = _expanded_shape(x.aval.shape, eqn.params["shape"],
                                eqn.params["broadcast_dimensions"])
        if small is None:
            continue
        try:
            ok = all(broadcast_shapes("check", *[small if a is v else replace.get(a, a.aval.shape)
                                                 for a in u.invars]) == u.outvars[0].aval.shape
                     for u in users)  # (with the operands already replaced, too)
        except FunctionalDiffError:
            ok = False
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
            new = x if x.aval.shape == small else rw.add("reshape", x, new_sizes=small)
            rw.env[v] = new  # avals differ on purpose: every user broadcasts
            rw.changed = True
            continue
        rw.emit(eqn)
    return rw.finish()


def simplify_algebra(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Remove the algebraic redundancy differentiation leaves behind.

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
    for eqn in closed.jaxpr.eqns:
        if not _simplify_one(rw, eqn):
            rw.emit(eqn)
    return rw.finish()
