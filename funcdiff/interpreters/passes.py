"""Optimisation passes over jaxprs: each is a function ClosedJaxpr -> ClosedJaxpr.

Differentiation leaves redundant work behind: multiplications by one,
additions of zeros, reshapes to the same shape, transposes of transposes,
sums of broadcasts, values computed twice, values computed and never used.
Each pass removes one kind, preserves the program's meaning (values and,
since rewrites only use primitives, derivatives too), never mutates its input
and returns its input unchanged when it finds nothing to do; ``optimize``
runs them to a fixed point.

- ``inline_calls``: splice nested call programs (inner jit) into the caller.
- ``forward_identities``: drop reshape/transpose/convert/broadcast/... that do nothing.
- ``simplify_algebra``: x*1, x+0, x-0, 0-x, neg(neg x), a+neg(b), transpose of
  transpose, reshape of reshape, broadcast of broadcast, reduce_sum of a
  broadcast (a multiply by the element count and a smaller broadcast), and
  broadcasts whose only users broadcast implicitly anyway (numpy rules).
- ``eliminate_zeros``: propagate arrays known to be zero (broadcast zeros,
  zero constants): x+0 -> x, x*0 -> 0 (finite x), f(0) -> 0 for f(0) = 0.
- ``fold_constants``: evaluate equations whose inputs are all known now.
- ``eliminate_common_subexpressions``: reuse an equal equation's result.
- ``drop_softmax_shift_cotangents`` (in ``idioms.py``, with the passes that
  know a numerical idiom as a whole): drop the cotangent of the max that
  stabilises a softmax, which cancels to zero up to rounding.
- ``orient_matmuls`` (in ``matmul_layout.py``): compute ``transpose(a @ b)`` as
  ``b^T @ a^T`` when that puts the longer output axis last, where BLAS is fastest.
- ``eliminate_dead_code``: drop equations whose results are unused.

The passes share ``rewriter.Rewriter``, which rebuilds a program equation by
equation. IEEE semantics are kept except for the sign of zero (``x + 0`` becomes ``x``,
so -0.0 + 0.0 gives -0.0): ``x * 0`` is rewritten to 0 only when ``x`` is
certainly finite, since inf * 0 is nan; ``safe_mul``, whose meaning is that
0 times anything is 0, always vanishes with a zero factor.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcdiff.errors import FunctionalDiffError
from funcdiff.interpreters.idioms import drop_softmax_shift_cotangents
from funcdiff.interpreters.matmul_layout import orient_matmuls
from funcdiff.interpreters.rewriter import (MAX_FILL_SCAN, Rewriter, aval_size, is_concrete,
                                            scalar_literal)
from funcdiff.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var

_MAX_FOLD_ELEMENTS = 1 << 14   # fold constants up to this size, to keep programs small

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
_COMMUTATIVE = frozenset(("add", "mul", "safe_mul", "max", "min", "eq", "ne", "and", "or", "xor"))
# unary primitives with f(0) = 0 (and linear or odd), and structural ones that move zeros
_ZERO_PRESERVING_UNARY = frozenset((
    "neg", "sin", "tan", "tanh", "sinh", "asin", "atan", "asinh", "atanh", "sqrt", "cbrt",
    "expm1", "log1p", "abs", "sign", "floor", "ceil", "round", "erf", "erf_inv",
    "stop_gradient", "convert_element_type", "reshape", "squeeze", "expand_dims",
    "transpose", "broadcast_in_dim", "rev", "slice", "reduce_sum", "reduce_max",
    "reduce_min", "cumsum", "cummax", "cummin"))


# ---------------------------------------------------------------------------
# inline_calls


def inline_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Splice the programs of nested ``call`` equations (inner jits) into the caller.

    Every spliced equation gets fresh result variables, so a program called
    twice is inlined twice without defining a variable twice.
    """
    from funcdiff.interpreters.call import call_p
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


# ---------------------------------------------------------------------------
# eliminate_zeros


def _zeros_one(rw: Rewriter, eqn: Eqn, zero: Callable[[Any], bool]) -> bool:
    name = eqn.primitive.name
    if len(eqn.outvars) != 1:
        return False
    out = eqn.outvars[0]
    ins = [rw.read(a) for a in eqn.invars]
    z = [zero(a) for a in ins]
    if not any(z) or (name == "broadcast_in_dim" and type(ins[0]) is Literal):
        return False  # (a broadcast literal zero is already the canonical zero)
    if name in ("add", "sub"):
        x, y = ins
        if z[0] and z[1]:
            rw.replace(out, rw.zeros(out.aval))
            return True
        if z[1]:
            new = rw.broadcast(x, out.aval)
        else:
            new = rw.broadcast(y, out.aval)
            if new is not None and name == "sub":
                new = rw.add("neg", new)
        if new is None:
            return False
        rw.replace(out, new)
        return True
    if name in ("safe_mul", "and") or (
            name in ("mul", "dot_general") and all(zi or _finite(rw, a) for zi, a in zip(z, ins))):
        rw.replace(out, rw.zeros(out.aval))  # (inf * 0 is nan: only finite factors vanish)
        return True
    if name in _ZERO_PRESERVING_UNARY and z[0]:
        rw.replace(out, rw.zeros(out.aval))
        return True
    if name == "integer_pow" and z[0] and eqn.params["y"] > 0:
        rw.replace(out, rw.zeros(out.aval))
        return True
    if (name in ("concatenate", "pad") and all(z)) or (name == "select" and z[1] and z[2]):
        rw.replace(out, rw.zeros(out.aval))
        return True
    if name == "dynamic_slice" and z[0]:
        rw.replace(out, rw.zeros(out.aval))
        return True
    if name in ("scatter_add", "scatter", "dynamic_update_slice"):
        update = 2 if name != "dynamic_update_slice" else 1
        if z[update] and name == "scatter_add":
            rw.replace(out, ins[0])  # adding zeros to an operand
            return True
        if z[0] and z[update]:
            rw.replace(out, rw.zeros(out.aval))
            return True
    return False


_FINITE_PRESERVING = frozenset(("broadcast_in_dim", "reshape", "squeeze", "expand_dims",
                                "transpose", "rev", "slice", "neg", "abs", "sign"))


def _finite(rw: Rewriter, a, depth: int = 0) -> bool:
    """Whether atom ``a`` is certainly finite: integers, finite constants, floats
    converted from integers, and moves of those (values from inputs may be inf)."""
    a = rw.read(a)
    if a.aval.dtype.kind in "biu":
        return True
    value = rw.value(a)
    if value is not None:
        arr = np.asarray(value)
        return arr.size <= MAX_FILL_SCAN and bool(np.all(np.isfinite(arr)))
    eqn = rw.producer.get(a) if type(a) is Var else None
    if eqn is None or depth > 8:
        return False
    name = eqn.primitive.name
    if name == "convert_element_type":
        return eqn.invars[0].aval.dtype.kind in "biu"
    if name == "is_finite" or name in ("iota",):
        return True
    return name in _FINITE_PRESERVING and _finite(rw, eqn.invars[0], depth + 1)


def eliminate_zeros(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Propagate values known to be zero and drop the work they make useless.

    A value is known zero when it is a zero literal or constant or a broadcast
    of one, or is computed from zeros by a rule below. ``x + 0`` and ``x - 0``
    become ``x`` (broadcast if the zero was larger), ``0 - x`` becomes
    ``neg x``, products with a zero factor become zeros (``safe_mul`` always;
    ``mul`` and ``dot_general`` when the other factor is certainly finite, as
    inf * 0 is nan), zero-preserving unary and structural primitives of zeros become
    zeros, and scatter-adding zeros returns the operand. Every zero that
    remains is one broadcast of a scalar literal: a view, never a filled array.
    """
    rw = Rewriter(closed)

    def zero(a) -> bool:
        return aval_size(a.aval) > 0 and rw.is_fill(a, 0)
    for eqn in closed.jaxpr.eqns:
        if not _zeros_one(rw, eqn, zero):
            rw.emit(eqn)
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
    from funcdiff.interpreters.call import call_p
    rw = Rewriter(closed)
    for eqn in closed.jaxpr.eqns:
        values = [rw.value(a) for a in eqn.invars]
        small = all(aval_size(v.aval) <= _MAX_FOLD_ELEMENTS for v in eqn.outvars)
        if (small and eqn.primitive.impl is not None and eqn.primitive is not call_p
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
        keys = [_atom_key(a) for a in ins]
        if eqn.primitive.name in _COMMUTATIVE and len(keys) == 2:
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
        if any(v in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(a for a in eqn.invars if type(a) is Var)
    if len(kept) == len(j.eqns) and all(v in live for v in j.constvars):
        return closed
    kept.reverse()
    pairs = [(v, c) for v, c in zip(j.constvars, closed.consts) if v in live]
    jaxpr = Jaxpr([v for v, _ in pairs], list(j.invars), kept, list(j.outvars))
    return ClosedJaxpr(jaxpr, [c for _, c in pairs], closed.in_tree, closed.out_tree)


# ---------------------------------------------------------------------------

PASSES: list[Callable[[ClosedJaxpr], ClosedJaxpr]] = [
    forward_identities, simplify_algebra, eliminate_zeros, fold_constants,
    eliminate_common_subexpressions, drop_softmax_shift_cotangents, orient_matmuls,
    eliminate_dead_code,
]


def optimize(closed: ClosedJaxpr, max_rounds: int = 6) -> ClosedJaxpr:
    """Inline nested calls, then run every pass until none changes the program.

    The result computes the same values (within floating-point rounding where
    a rewrite reassociates, e.g. a sum of n equal terms becomes a product).
    """
    closed = inline_calls(closed)
    for _ in range(max_rounds):
        before = closed
        for p in PASSES:
            closed = p(closed)
        if closed is before:
            break
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
