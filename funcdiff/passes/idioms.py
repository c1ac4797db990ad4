"""Optimisation passes that recognise what differentiation leaves behind for
common numerical idioms, where the generic rules (``algebra.py``,
``zero_propagation.py``) cannot see that work is useless because it depends on
an identity of the idiom as a whole.

- ``drop_softmax_shift_cotangents``: in a numerically stable (log-)softmax,
  ``z = x - max(x)`` then ``exp(z) / sum(exp(z))`` (or ``z - log(sum(exp(z)))``),
  the result does not depend on the shift, so the cotangent that reverse mode
  sends to ``max(x)`` is zero. Differentiation computes it anyway, as the sum
  of the softmax cotangent (which cancels to zero up to rounding) spread over
  the positions of the maximum by a one-hot mask. JAX avoids this work by
  putting a stop_gradient on the max; this pass removes it from programs that
  were written (or traced) without one.

The pass runs the ``rules.idiom`` rows on the cards of add and sub, written
with the pattern ``SHIFT_COTANGENT`` defined here; it recognises the idiom
through the roles and traits of ``passes.traits`` (``roles.EXP``, ``roles.EQ``,
``EXTREMUM_REDUCTION``, ...). Like every pass ``pipeline.optimize`` runs, it is
a function ClosedJaxpr -> ClosedJaxpr that returns its input unchanged when it
finds nothing to do.
"""

from __future__ import annotations

import math

from funcdiff import roles
from funcdiff.core import Primitive, Trait
from funcdiff.ir import ClosedJaxpr, Eqn, Var
from funcdiff.passes.rewriter import Rewriter
from funcdiff.passes.rules import IDIOMS, NO_MATCH, Pattern, run
from funcdiff.passes.traits import EXTREMUM_REDUCTION, KEEPDIMS_MOVE, PRODUCT, RESHAPING


def _defining(rw: Rewriter, a, prim: Primitive) -> Eqn | None:
    """The equation defining atom ``a`` if it is one of ``prim``."""
    a = rw.read(a)
    eqn = rw.producer.get(a) if type(a) is Var else None
    return eqn if eqn is not None and eqn.primitive is prim and len(eqn.outvars) == 1 else None


def _defining_like(rw: Rewriter, a, trait: Trait) -> Eqn | None:
    """The equation defining atom ``a`` if its primitive has ``trait``."""
    a = rw.read(a)
    eqn = rw.producer.get(a) if type(a) is Var else None
    return (eqn if eqn is not None and trait in eqn.primitive.traits and len(eqn.outvars) == 1
            else None)


def _without_negs(rw: Rewriter, a):
    """``a`` with any negations around it removed (the sign of a zero does not matter)."""
    while (eqn := _defining(rw, a, roles.NEG.primitive)) is not None:
        a = eqn.invars[0]
    return rw.read(a)


def _keepdims_inner(rw: Rewriter, a, shape: tuple, axes: tuple):
    """The atom of the reduced shape (``shape`` without ``axes``) that ``a`` is
    with the reduced axes kept as size 1, so that it broadcasts against an array of
    ``shape`` as numpy's ``keepdims=True`` result does; None if ``a`` is not that."""
    a = rw.read(a)
    reduced = tuple(s for k, s in enumerate(shape) if k not in axes)
    keep = tuple(1 if k in axes else s for k, s in enumerate(shape))

    def aligned(out_shape):  # right-aligned with keep, missing leading axes are size 1
        lead = len(keep) - len(out_shape)
        return lead >= 0 and out_shape == keep[lead:] and all(s == 1 for s in keep[:lead])
    move = _defining_like(rw, a, KEEPDIMS_MOVE)
    if move is not None:
        inner = rw.read(move.invars[0])
        if inner.aval.shape == reduced:
            if move.primitive is not roles.BROADCAST.primitive:
                return inner if aligned(a.aval.shape) else None
            kept_dims = tuple(k for k in range(len(shape)) if k not in axes)
            if (a.aval.shape == shape
                    and tuple(move.params["broadcast_dimensions"]) == kept_dims):
                return inner
            return None
    return a if a.aval.shape == reduced and aligned(reduced) else None


class _Sums:
    """Expressions as polynomials, to decide that a sum cancels exactly in exact
    arithmetic: ``{monomial: coefficient}``, a monomial being a frozenset of
    ``(factor, power)``. A factor is an opaque variable or a sum over axes
    (``("sum", shape, axes, monomial)``), which is constant along those axes, so
    ``sum(a * s) = s * sum(a)`` for such a factor ``s``. Sums, differences,
    negations, products and quotients by single monomials are expanded; any
    other primitive is an opaque factor. Expansion stops (the variable stays
    opaque) beyond ``_MAX_TERMS`` terms or ``_MAX_DEPTH`` nested definitions."""

    _MAX_TERMS = 32
    _MAX_DEPTH = 24

    def __init__(self, rw: Rewriter):
        self.rw = rw
        self._memo: dict = {}

    @staticmethod
    def _opaque(a) -> dict:
        return {frozenset({(a, 1)}): 1.0}

    def expand(self, a, depth: int = 0) -> dict:
        a = self.rw.read(a)
        if type(a) is not Var:
            return {frozenset(): float(a.val)} if a.aval.dtype.kind in "iuf" else self._opaque(a)
        if a in self._memo:
            return self._memo[a]
        poly = None
        eqn = self.rw.producer.get(a)
        if eqn is not None and depth < self._MAX_DEPTH and len(eqn.outvars) == 1:
            poly = self._expand_eqn(eqn, a, depth + 1)
        if poly is None or len(poly) > self._MAX_TERMS:
            poly = self._opaque(a)
        self._memo[a] = poly
        return poly

    def _expand_eqn(self, eqn: Eqn, out: Var, depth: int) -> dict | None:
        prim, ins = eqn.primitive, eqn.invars
        if out.aval.dtype.kind != "f":
            return None
        if prim is roles.NEG.primitive:
            return _scaled(self.expand(ins[0], depth), -1.0)
        if prim is roles.ADD.primitive or prim is roles.SUB.primitive:
            return _added(self.expand(ins[0], depth), self.expand(ins[1], depth),
                          1.0 if prim is roles.ADD.primitive else -1.0)
        if PRODUCT in prim.traits:
            return _multiplied(self.expand(ins[0], depth), self.expand(ins[1], depth),
                               self._MAX_TERMS)
        if prim is roles.DIV.primitive:
            den = self.expand(ins[1], depth)
            if len(den) != 1:
                den = self._opaque(self.rw.read(ins[1]))
            (mono, coef), = den.items()
            if coef == 0:
                return None
            inverse = {frozenset((f, -p) for f, p in mono): 1.0 / coef}
            return _multiplied(self.expand(ins[0], depth), inverse, self._MAX_TERMS)
        summed = prim is roles.REDUCE_SUM.primitive
        if summed or KEEPDIMS_MOVE in prim.traits:
            red = eqn if summed else _defining(self.rw, ins[0], roles.REDUCE_SUM.primitive)
            if red is not None:
                x = self.rw.read(red.invars[0])
                axes = tuple(red.params["axes"])
                if _keepdims_inner(self.rw, out, x.aval.shape, axes) is not None:
                    return self.sum(self.expand(x, depth), x.aval.shape, axes)
        if RESHAPING in prim.traits and (
                _strip_ones(self.rw.read(ins[0]).aval.shape) == _strip_ones(out.aval.shape)):
            return self.expand(ins[0], depth)  # leading size-1 axes do not change broadcasting
        return None

    def sum(self, poly: dict, shape: tuple, axes: tuple) -> dict:
        """The polynomial of the sum over ``axes`` of ``poly`` (an array of ``shape``),
        with the factors constant along ``axes`` taken out of the sum."""
        out: dict = {}
        for mono, coef in poly.items():
            outside, inside = {}, []
            for f, p in mono:
                if _constant_along(f, shape, axes):
                    outside[f] = p
                else:
                    inside.append((f, p))
            if inside:
                f = ("sum", shape, axes, frozenset(inside))
                outside[f] = outside.get(f, 0) + 1
            else:  # a sum of equal terms
                coef *= math.prod(shape[k] for k in axes)
            _accumulate(out, frozenset(outside.items()), coef)
        return out


def _strip_ones(shape: tuple) -> tuple:
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return shape[k:]


def _constant_along(factor, shape: tuple, axes: tuple) -> bool:
    if type(factor) is tuple:
        return factor[1] == shape and factor[2] == axes
    fshape = factor.aval.shape
    lead = len(shape) - len(fshape)
    return lead >= 0 and all(k < lead or fshape[k - lead] == 1 for k in axes)


def _accumulate(poly: dict, mono: frozenset, coef: float) -> None:
    mono = frozenset((f, p) for f, p in mono if p != 0)
    total = poly.get(mono, 0.0) + coef
    if total == 0:
        poly.pop(mono, None)
    else:
        poly[mono] = total


def _scaled(poly: dict, c: float) -> dict:
    return {m: k * c for m, k in poly.items()}


def _added(x: dict, y: dict, sign: float) -> dict:
    out = dict(x)
    for m, k in y.items():
        _accumulate(out, m, sign * k)
    return out


def _multiplied(x: dict, y: dict, limit: int) -> dict | None:
    if len(x) * len(y) > limit:
        return None
    out: dict = {}
    for mx, kx in x.items():
        for my, ky in y.items():
            powers = dict(mx)
            for f, p in my:
                powers[f] = powers.get(f, 0) + p
            _accumulate(out, frozenset(powers.items()), kx * ky)
    return out


def _is_shift_cotangent(rw: Rewriter, sums: _Sums, t) -> bool:
    """Whether ``t`` is (up to sign) the cotangent reverse mode sends through the max
    of a softmax shift: ``sum(g) / count * hit`` where ``hit`` marks the maxima of
    ``x`` (``convert(x == max(x))``), ``count`` is their number and ``g`` is the
    softmax cotangent of ``x - max(x)``; ``sum(g)`` is zero up to rounding."""
    mul = _defining(rw, _without_negs(rw, t), roles.MUL.primitive)
    if mul is None:
        return False
    for scaled, hit in (mul.invars, mul.invars[::-1]):
        convert = _defining(rw, hit, roles.CONVERT.primitive)
        eq = _defining(rw, convert.invars[0], roles.EQ.primitive) if convert is not None else None
        if eq is None:
            continue
        for x, shift in (eq.invars, eq.invars[::-1]):
            x = rw.read(x)
            if type(x) is not Var or x.aval.shape != rw.read(hit).aval.shape:
                continue
            for axes in _reduction_axes(rw, shift, x):
                if _is_spread_sum(rw, sums, scaled, hit, x, shift, axes):
                    return True
    return False


def _reduction_axes(rw: Rewriter, shift, x) -> list[tuple]:
    """The axes over which ``shift`` is the keepdims maximum (or minimum) of ``x``."""
    shift = rw.read(shift)
    red = _defining_like(rw, _unmoved(rw, shift), EXTREMUM_REDUCTION)
    if red is None or rw.read(red.invars[0]) is not x:
        return []
    axes = tuple(red.params["axes"])
    return [axes] if _keepdims_inner(rw, shift, x.aval.shape, axes) is not None else []


def _is_spread_sum(rw: Rewriter, sums: _Sums, scaled, hit, x, shift, axes: tuple) -> bool:
    """Whether ``scaled`` is ``sum(g) / sum(hit)`` (kept dims, any sign) where the sum
    of ``g`` over ``axes`` cancels exactly in exact arithmetic and ``g`` has the
    factor ``exp(x - shift)`` (so a NaN in ``x`` makes ``g`` NaN, as it makes
    the count of maxima zero)."""
    inner = _keepdims_inner(rw, _without_negs(rw, scaled), x.aval.shape, axes)
    div = _defining(rw, _without_negs(rw, inner), roles.DIV.primitive) if inner is not None else None
    if div is None:
        return False
    total, count = div.invars
    count_sum = _defining(rw, count, roles.REDUCE_SUM.primitive)
    if (count_sum is None or tuple(count_sum.params["axes"]) != axes
            or rw.read(count_sum.invars[0]) is not rw.read(hit)):
        return False
    total_sum = _defining(rw, _without_negs(rw, total), roles.REDUCE_SUM.primitive)
    if total_sum is None or tuple(total_sum.params["axes"]) != axes:
        return False
    g = rw.read(total_sum.invars[0])
    if g.aval.shape != x.aval.shape:
        return False
    poly = sums.expand(g)
    return (not sums.sum(poly, x.aval.shape, axes)
            and any(_is_exp_of_shift(rw, f, x, shift) for mono in poly for f, _ in mono))


def _is_exp_of_shift(rw: Rewriter, factor, x, shift) -> bool:
    """Whether ``factor`` is ``exp(x - shift)``, ``shift`` written with kept dims or not."""
    exp = _defining(rw, factor, roles.EXP.primitive) if type(factor) is Var else None
    shifted = _defining(rw, exp.invars[0], roles.SUB.primitive) if exp is not None else None
    return (shifted is not None and rw.read(shifted.invars[0]) is x
            and _unmoved(rw, shifted.invars[1]) is _unmoved(rw, shift))


def _unmoved(rw: Rewriter, a):
    """``a`` without a keepdims move (reshape, expand_dims, broadcast) around it."""
    move = _defining_like(rw, a, KEEPDIMS_MOVE)
    return rw.read(move.invars[0]) if move is not None else rw.read(a)


def _match_shift_cotangent(rw: Rewriter, a, out):
    sums = rw.memo.get(_Sums)
    if sums is None:
        sums = rw.memo[_Sums] = _Sums(rw)
    return a if _is_shift_cotangent(rw, sums, a) else NO_MATCH


SHIFT_COTANGENT = Pattern("the cotangent of the max that shifts a softmax, spread over the "
                          "maxima (zero up to rounding)", _match_shift_cotangent, cost=9)


def drop_softmax_shift_cotangents(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drop the cotangent of the max that stabilises a softmax or log-softmax.

    ``a + t``, ``a - t`` and ``t + a`` become ``a`` (the ``idiom`` rules of add
    and sub) when ``t`` is the cotangent of
    ``max(x)`` (or ``min(x)``) in ``z = x - max(x)``, spread over the maxima of
    ``x``, and the cotangent ``g`` of ``z`` sums to zero along the reduced axes
    in exact arithmetic, as it does when ``exp(z)`` feeds a softmax
    (``exp(z) / sum(exp(z))``) or a log-softmax (``z - log(sum(exp(z)))``).
    That is decided by expanding ``g`` as a polynomial in the program's values
    and sums, so any arrangement of the products, quotients and reciprocals
    differentiation produces is recognised. The dropped term is
    ``sum(g) / count`` at each maximum: zero but for rounding (a few ulps of
    the sum of the incoming cotangent). Rows holding a NaN are NaN either way,
    as ``g`` has the factor ``exp(z)``, NaN there.
    """
    rw = Rewriter(closed)
    rules_of = IDIOMS.table()
    for eqn in closed.jaxpr.eqns:
        rules = rules_of[eqn.primitive]
        if (rules and len(eqn.outvars) == 1
                and run(rules, rw, eqn, [rw.read(v) for v in eqn.invars])):
            continue
        rw.emit(eqn)
    return rw.finish()
