"""Helpers that declare whole elementwise cards: a unary one from its impl and derivative.

``unary_elementwise`` needs only the numpy impl and the derivative;
``binary_elementwise`` the impl and one partial derivative per argument; both
derive the jvp, the tape's ``vjp`` and ``vjp_factor``, the batch rule
(``elementwise_batch``, numpy broadcasting with a batch axis) and the cost.
The derivatives scale tangents by a product and add the terms, which are
primitives declared with these very helpers (in ``elementwise_arithmetic``):
the rules reach them through the roles ``roles.MUL``, ``roles.SAFE_MUL`` and
``roles.ADD``, which those cards fill.
"""

from __future__ import annotations

import cmath
import math
from typing import Any, Callable

import numpy as np

from funcdiff import roles
from funcdiff import dtypes
from funcdiff.compiler.concrete import on_concrete, unary_factor
from funcdiff.core import Primitive, ShapedArray, Zero, bind, get_aval
from funcdiff.errors import DTypeError
from funcdiff.interpreters.tape_nodes import OutputFactor
from funcdiff.primitives import structural
from funcdiff.primitives.cards import broadcast_shapes, elementwise_cost, same_dtype


# ---------------------------------------------------------------------------
# Batching of elementwise primitives


def _bdim_to_front(x: Any, bdim: int | None, out_ndim: int) -> Any:
    """Move the batch axis of ``x`` to 0 and pad its rank to ``out_ndim`` + 1."""
    if bdim is None:
        return x
    if bdim != 0:
        x = structural.moveaxis(x, bdim, 0)
    shape = get_aval(x).shape
    missing = out_ndim + 1 - len(shape)
    if missing > 0:
        x = structural.reshape(x, new_sizes=(shape[0],) + (1,) * missing + shape[1:])
    return x


def elementwise_batch(prim: Primitive) -> Callable:
    """Batch rule for elementwise primitives with numpy broadcasting."""
    def rule(vals, dims, **params):
        # Batched operands of one rank with one batch axis k keep it there: an
        # unbatched operand broadcasts as it is against the axes after k (scalars
        # always), or with a unit axis inserted where k falls among its own axes.
        k = None
        for v, d in zip(vals, dims):
            if d is not None:
                if k is None:
                    k, limit = d, v.ndim - d
                elif d != k or v.ndim - d != limit:
                    break
        else:
            rank, fitted = k + limit, None
            for i, (v, d) in enumerate(zip(vals, dims)):
                if d is None and getattr(v, "ndim", 0) >= limit:
                    shape = get_aval(v).shape
                    if len(shape) >= rank:
                        break  # more axes than the batched operands: the general case
                    p = k - (rank - 1 - len(shape))
                    fitted = fitted or list(vals)
                    fitted[i] = structural.reshape(v, new_sizes=shape[:p] + (1,) + shape[p:])
            else:
                return bind(prim, *(fitted or vals), **params), k
        out_ndim = max(get_aval(v).ndim - (d is not None) for v, d in zip(vals, dims))
        moved = [_bdim_to_front(v, d, out_ndim) for v, d in zip(vals, dims)]
        return bind(prim, *moved, **params), 0
    return rule


def multi_output_elementwise_batch(prim: Primitive) -> Callable:
    single = elementwise_batch(prim)

    def rule(vals, dims, **params):
        outs, d = single(vals, dims, **params)
        return outs, [d] * len(outs)
    return rule


# ---------------------------------------------------------------------------
# Card declarations


def unary_elementwise(name: str, impl: Callable, deriv: Callable | None = None, *,
                      output_deriv: Callable | None = None,
                      nondifferentiable: bool = False, float_only: bool = False,
                      flops: int = 1, singular: bool = False) -> Primitive:
    """Declare an elementwise unary primitive.

    ``deriv(x, y)`` returns dy/dx in funcdiff operations, given the input ``x``
    and the output ``y`` (so rules like exp's can reuse ``y``). A derivative
    that is a new function of the output alone (tanh's 1 - y*y) is given as
    ``output_deriv(y)`` instead: the tape then keeps ``y``, which the next
    operation usually keeps anyway, and computes the factor in the backward
    pass (``OutputFactor``), rather than keeping a second array of its size.
    A ``singular`` primitive's derivative can be infinite (sqrt at 0): its
    tangent is formed with ``safe_mul`` so a zero tangent or cotangent stays
    exactly zero there.
    """
    if output_deriv is not None:
        deriv = lambda x, y: output_deriv(y)  # noqa: E731
    prim = Primitive(name)
    prim.impl = impl

    def abstract_eval(aval: ShapedArray) -> ShapedArray:
        if float_only and not dtypes.is_float(aval.dtype):
            raise DTypeError(f"the primitive {name} needs a floating input, but got "
                             f"{aval.dtype}; convert it with astype(float)")
        return aval
    prim.abstract_eval = abstract_eval
    if nondifferentiable:
        prim.nondifferentiable = True
    elif deriv is not None:
        scale = (roles.SAFE_MUL if singular else roles.MUL).primitive.bind

        def jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            y = bind(prim, x)
            return y, scale(t, deriv(x, y))

        def vjp(needed, y, x):
            d = deriv(x, y)
            return lambda ct: (scale(ct, d),)
        prim.jvp = jvp
        prim.vjp = vjp
        if output_deriv is not None and not singular:
            factor_value = on_concrete(output_deriv)
            prim.vjp_factor = lambda i, y, x: OutputFactor(factor_value, y)
        elif not singular:
            prim.vjp_factor = unary_factor(deriv)
        else:
            prim.vjp_factor = lambda i, y, x: finite_factor(deriv(x, y))
    prim.batch = lambda vals, dims: (bind(prim, vals[0]), dims[0])
    prim.cost = elementwise_cost(flops)
    return prim


def binary_elementwise(name: str, impl: Callable,
                       partials: tuple[Callable | None, Callable | None] | None = None,
                       *, nondifferentiable: bool = False, result_dtype: Any = None,
                       flops: int = 1, singular: bool = False) -> Primitive:
    """Declare an elementwise binary primitive with numpy broadcasting.

    ``partials`` are ``(d_dx(x, y, out), d_dy(x, y, out))``: each returns the
    partial derivative in funcdiff operations; the jvp is
    ``t_x * d_dx + t_y * d_dy``, broadcast to the output shape. ``None`` marks a
    partial that is identically zero. ``result_dtype`` fixes the output dtype
    (bool for comparisons). ``singular`` is as for ``unary_elementwise``.
    """
    prim = Primitive(name)
    prim.impl = impl

    def abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        dtype = same_dtype(name, x, y)
        shape = broadcast_shapes(name, x.shape, y.shape)
        return ShapedArray(shape, np.dtype(result_dtype) if result_dtype else dtype)
    prim.abstract_eval = abstract_eval
    if nondifferentiable:
        prim.nondifferentiable = True
    elif partials is not None:
        prim.jvp = binary_jvp(prim, partials, singular)
        prim.vjp = binary_vjp(partials, singular)
        prim.vjp_factor = binary_vjp_factor(partials, singular)
    prim.batch = elementwise_batch(prim)
    prim.cost = elementwise_cost(flops)
    return prim


def binary_jvp(prim: Primitive, partials, singular: bool = False) -> Callable:
    scale_role = roles.SAFE_MUL if singular else roles.MUL

    def jvp(primals, tangents, **params):
        x, y = primals
        out = bind(prim, x, y, **params)
        out_shape = get_aval(out).shape
        scale = scale_role.primitive.bind
        total = None
        for t, partial in zip(tangents, partials):
            if type(t) is Zero or partial is None:
                continue
            term = scale(t, partial(x, y, out))
            if get_aval(term).shape != out_shape:
                term = structural.broadcast_to(term, out_shape)
            total = term if total is None else roles.ADD.primitive.bind(total, term)
        if total is None:
            total = Zero(get_aval(out))
        return out, total
    return jvp


def binary_vjp(partials, singular: bool = False) -> Callable:
    """The eager reverse rule matching ``binary_jvp``: ``ct * partial``, summed
    down to each operand's shape."""
    partial_x, partial_y = partials
    scale_role = roles.SAFE_MUL if singular else roles.MUL

    def vjp(needed, out, x, y, **params):
        scale = scale_role.primitive.bind
        unbroadcast = structural.unbroadcast
        # The partials are the residuals; each operand whose shape differs from the
        # output's gets its cotangent summed down to its shape.
        out_shape = get_aval(out).shape
        d_x = d_y = shape_x = shape_y = None
        if needed[0] and partial_x is not None:
            d_x = partial_x(x, y, out)
            shape_x = get_aval(x).shape
            shape_x = None if shape_x == out_shape else shape_x
        if needed[1] and partial_y is not None:
            d_y = partial_y(x, y, out)
            shape_y = get_aval(y).shape
            shape_y = None if shape_y == out_shape else shape_y

        def pullback(ct):
            ct_x = ct_y = None
            if d_x is not None:
                ct_x = scale(ct, d_x)
                if shape_x is not None:
                    ct_x = unbroadcast(ct_x, shape_x)
            if d_y is not None:
                ct_y = scale(ct, d_y)
                if shape_y is not None:
                    ct_y = unbroadcast(ct_y, shape_y)
            return ct_x, ct_y
        return pullback
    return vjp


def binary_vjp_factor(partials, singular: bool = False) -> Callable:
    """The tape's ``vjp_factor`` matching ``binary_vjp``: operand ``i``'s partial
    (the tape asks only when that operand has the output's shape); for a
    ``singular`` primitive only where it is finite (``finite_factor``)."""
    def factor(i, out, x, y):
        partial = partials[i]
        return False if partial is None else partial(x, y, out)

    def finite(i, out, x, y):
        partial = partials[i]
        return False if partial is None else finite_factor(partial(x, y, out))
    return finite if singular else factor


def finite_factor(d: Any) -> Any:
    """The factor ``d`` of a singular primitive (its derivative can be infinite) when
    it is a concrete numpy value finite everywhere, else False. The tape scales a
    cotangent by a factor with a plain product, which is exact where ``d`` is
    finite; elsewhere its general path scales with ``safe_mul``, so that a zero
    cotangent stays zero where the derivative is infinite (x / 0 of an unused x)."""
    if type(d) is np.ndarray:
        return d if np.isfinite(d).all() else False
    if isinstance(d, np.floating) or type(d) is float:
        return d if math.isfinite(d) else False
    if isinstance(d, np.complexfloating):
        return d if cmath.isfinite(d) else False
    return False


