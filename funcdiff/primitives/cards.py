"""Helpers that declare whole primitive cards in a few lines.

``unary_elementwise`` needs only the numpy impl and the derivative;
``binary_elementwise`` the impl and one partial derivative per argument;
``deflinear`` makes a primitive's jvp apply the primitive to the tangents and
records its transpose rule. Batch rules and cost rules of elementwise
primitives are shared here, so each family module states only what differs.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Primitive, ShapedArray, Zero, bind, binder, get_aval, instantiate
from funcdiff.errors import DTypeError, ShapeError
from funcdiff.interpreters.transpose import UndefinedPrimal
from funcdiff.primitives import structural  # a cycle: used at call time only


def make_op(prim: Primitive, doc: str = "") -> Callable:
    """The operation ``name(*args, **params)`` that binds ``prim``."""
    op = binder(prim)
    op.__name__ = op.__qualname__ = prim.name
    op.__doc__ = doc or f"Apply the primitive ``{prim.name}``."
    return op


# ---------------------------------------------------------------------------
# Eager validation


def checked_impl(impl: Callable, validator: "Callable | Primitive") -> Callable:
    """``impl`` whose failures are reported with the funcdiff error of a shape rule.

    The eager path calls impl without abstract evaluation, so on bad input
    numpy would raise its own, less helpful error. When ``impl`` raises
    (numpy's error, or a cheap check of the impl's own for input numpy would
    silently accept), ``validator`` (an abstract_eval rule, or a primitive
    whose rule is looked up then) runs on the arguments' avals to raise the
    funcdiff error naming the primitive; valid calls pay nothing.
    """
    from funcdiff.errors import FunctionalDiffError

    def checked(*args, **params):
        try:
            return impl(*args, **params)
        except FunctionalDiffError:
            raise
        except Exception:
            rule = validator.abstract_eval if isinstance(validator, Primitive) else validator
            rule(*[get_aval(a) for a in args], **params)
            raise
    checked.__name__ = getattr(impl, "__name__", "impl")
    return checked


# ---------------------------------------------------------------------------
# Costs


def nbytes(aval: ShapedArray) -> int:
    return aval.size * aval.dtype.itemsize


def elementwise_cost(flops_per_element: int) -> Callable:
    def cost(*avals_in, **params):
        shape = broadcast_shapes("cost", *[a.shape for a in avals_in]) if avals_in else ()
        size = math.prod(shape)
        out_bytes = size * avals_in[0].dtype.itemsize if avals_in else 0
        return {"flops": flops_per_element * size,
                "bytes": sum(nbytes(a) for a in avals_in) + out_bytes}
    return cost


def movement_cost(*avals_in, **params):
    """Cost of a primitive that only moves data: no flops, read and write once."""
    total = sum(nbytes(a) for a in avals_in)
    return {"flops": 0, "bytes": 2 * total}


# ---------------------------------------------------------------------------
# Shapes


def broadcast_shapes(name: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy broadcasting of ``shapes``; ShapeError naming ``name`` if impossible."""
    if len(shapes) == 1 or all(s == shapes[0] for s in shapes):
        return shapes[0]
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        size = 1
        for s in shapes:
            d = s[i - ndim + len(s)] if i >= ndim - len(s) else 1
            if d != 1:
                if size != 1 and d != size:
                    raise ShapeError(
                        f"{name} cannot broadcast shapes "
                        f"{' and '.join(str(tuple(s)) for s in shapes)}: dimension "
                        f"{i - ndim} has sizes {size} and {d}. Reshape or transpose one "
                        "operand so the sizes agree or one of them is 1.")
                size = d
        out.append(size)
    return tuple(out)


def same_dtype(name: str, *avals: ShapedArray) -> np.dtype:
    dtype = avals[0].dtype
    for a in avals[1:]:
        if a.dtype != dtype:
            raise DTypeError(
                f"the primitive {name} needs operands of one dtype, but got "
                f"{', '.join(a.dtype.name for a in avals)}. funcdiff.numpy promotes "
                "automatically; at the primitive level use convert_element_type.")
    return dtype


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
        from funcdiff.primitives import elementwise

        scale = elementwise.safe_mul if singular else elementwise.mul

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
            prim.vjp_factor = lambda i, y, x: OutputFactor(output_deriv, y)
        elif not singular:
            prim.vjp_factor = lambda i, y, x: deriv(x, y)
    prim.batch = lambda vals, dims: (bind(prim, vals[0]), dims[0])
    prim.cost = elementwise_cost(flops)
    return prim


class OutputFactor:
    """A tape factor computed when the backward pass needs it: ``output_deriv(y)``
    of a unary primitive whose derivative is a function of its output ``y``."""

    __slots__ = ("output_deriv", "y")

    def __init__(self, output_deriv: Callable, y: Any):
        self.output_deriv = output_deriv
        self.y = y

    def value(self) -> Any:
        return self.output_deriv(self.y)


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
        if not singular:
            prim.vjp_factor = binary_vjp_factor(partials)
    prim.batch = elementwise_batch(prim)
    prim.cost = elementwise_cost(flops)
    return prim


def binary_jvp(prim: Primitive, partials, singular: bool = False) -> Callable:
    from funcdiff.primitives import elementwise, structural

    def jvp(primals, tangents, **params):
        x, y = primals
        out = bind(prim, x, y, **params)
        out_shape = get_aval(out).shape
        scale = elementwise.safe_mul if singular else elementwise.mul
        total = None
        for t, partial in zip(tangents, partials):
            if type(t) is Zero or partial is None:
                continue
            term = scale(t, partial(x, y, out))
            if get_aval(term).shape != out_shape:
                term = structural.broadcast_to(term, out_shape)
            total = term if total is None else elementwise.add(total, term)
        if total is None:
            total = Zero(get_aval(out))
        return out, total
    return jvp


def binary_vjp(partials, singular: bool = False) -> Callable:
    """The eager reverse rule matching ``binary_jvp``: ``ct * partial``, summed
    down to each operand's shape."""
    from funcdiff.primitives import elementwise, structural

    partial_x, partial_y = partials

    def vjp(needed, out, x, y, **params):
        scale = elementwise.safe_mul if singular else elementwise.mul
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


def binary_vjp_factor(partials) -> Callable:
    """The tape's ``vjp_factor`` matching ``binary_vjp``: operand ``i``'s partial
    (the tape asks only when that operand has the output's shape)."""
    def factor(i, out, x, y):
        partial = partials[i]
        return False if partial is None else partial(x, y, out)
    return factor


def bilinear_vjp(prim: Primitive) -> "BilinearRule":
    """The eager reverse rule of a primitive linear in each operand separately
    (a product): its transpose, taken once per needed operand."""
    return BilinearRule(prim)


class BilinearRule:
    """``bilinear_vjp``'s rule: ``(needed, out, x, y, **params) -> BilinearPullback``,
    keeping only the operand each needed cotangent is made from. The tape
    recognises it by type and makes the same pullback inline."""

    __slots__ = ("prim",)

    def __init__(self, prim: Primitive):
        self.prim = prim

    def __call__(self, needed, out, x, y, **params):
        return BilinearPullback(
            self.prim, params,
            UndefinedPrimal(get_aval(x)) if needed[0] else None, y if needed[0] else None,
            x if needed[1] else None, UndefinedPrimal(get_aval(y)) if needed[1] else None)


class BilinearPullback:
    """The pullback of a bilinear node: ``ct -> (ct_x, ct_y)`` by the primitive's
    transpose (``x_undefined``/``y_undefined`` mark the needed operands, each
    paired with the other operand's value). ``batched`` takes a batch of
    cotangents at once when the primitive has a ``batched_transpose``."""

    __slots__ = ("prim", "params", "x_undefined", "y_kept", "x_kept", "y_undefined")

    def __init__(self, prim, params, x_undefined, y_kept, x_kept, y_undefined):
        self.prim = prim
        self.params = params
        self.x_undefined = x_undefined
        self.y_kept = y_kept
        self.x_kept = x_kept
        self.y_undefined = y_undefined

    def __call__(self, ct):
        return self._apply(self.prim.transpose, ct)

    def batched(self, ct):
        """The cotangents for ``ct`` with a leading batch axis (concrete, or a
        ``DiagonalBatch``), or None when the primitive has no
        ``batched_transpose`` or no shortcut for a ``DiagonalBatch``."""
        transpose = self.prim.batched_transpose
        return None if transpose is None else self._apply(transpose, ct)

    def _apply(self, transpose, ct):
        ct_x = ct_y = None
        if self.x_undefined is not None:
            ct_x = transpose(ct, self.x_undefined, self.y_kept, **self.params)
            if ct_x is None:
                return None
            ct_x = ct_x[0]
        if self.y_undefined is not None:
            ct_y = transpose(ct, self.x_kept, self.y_undefined, **self.params)
            if ct_y is None:
                return None
            ct_y = ct_y[1]
        return ct_x, ct_y


class DiagonalBatch:
    """The batch of cotangents ``diag(d)`` of a 1-D output: cotangent ``b`` is
    ``d[b]`` times the unit vector ``e_b`` (jacrev's basis, scaled by the
    derivatives met on the way back). A ``batched_transpose`` may take it and
    return the cotangents directly, or return None to be given the dense batch."""

    __slots__ = ("d",)

    def __init__(self, d: np.ndarray):
        self.d = d


def deflinear(prim: Primitive, transpose: Callable, num_linear: int | None = None) -> None:
    """Mark ``prim`` linear in its array arguments with the given transpose.

    The jvp applies the primitive itself to the tangents (zeros materialised).
    With ``num_linear``, only the first ``num_linear`` operands are linear; the
    rest (integer indices) are passed through as they are.
    """
    prim.linear = True

    def jvp(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        n = len(primals) if num_linear is None else num_linear
        tangent_out = bind(prim, *[instantiate(t) for t in tangents[:n]], *primals[n:], **params)
        return out, tangent_out
    prim.jvp = jvp
    prim.transpose = transpose
