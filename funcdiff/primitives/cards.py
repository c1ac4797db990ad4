"""Helpers every card uses: operations, eager validation, costs, shapes, linearity.

``make_op`` gives a primitive its operation; ``checked_impl`` reports an impl's
failure with the shape rule's error; ``deflinear`` makes a primitive's jvp apply
the primitive to the tangents and records its transpose rule; ``bilinear_vjp``
is the tape rule of a product. This module imports no primitive: every family
module builds on it (the elementwise card helpers, which need structural
operations, are in ``elementwise_cards``).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from funcdiff.core import Primitive, ShapedArray, bind, binder, get_aval, instantiate
from funcdiff.errors import DTypeError, FunctionalDiffError, ShapeError
from funcdiff.interpreters.transpose import UndefinedPrimal


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
# Card declarations


class OutputFactor:
    """A tape factor computed when the backward pass needs it: ``output_deriv(y)``
    of a unary primitive whose derivative is a function of its output ``y``."""

    __slots__ = ("output_deriv", "y")

    def __init__(self, output_deriv: Callable, y: Any):
        self.output_deriv = output_deriv
        self.y = y

    def value(self) -> Any:
        return self.output_deriv(self.y)


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
