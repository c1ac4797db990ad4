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
from typing import Callable

import numpy as np

from funcdiff.core import (Primitive, ShapedArray, bind, binder, broadcast_shape, instantiate,
                           report_failure)
from funcdiff.errors import DTypeError, ShapeError
from funcdiff.interpreters.tape_nodes import BilinearRule


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
        except Exception:
            report_failure(validator, args, params)
            raise
    checked.__name__ = getattr(impl, "__name__", "impl")
    # what Primitive keeps as raw_impl and impl_validator for its hot paths
    checked.unchecked, checked.validator = impl, validator
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
    out = broadcast_shape(*shapes)
    if out is None:
        ndim = max(len(s) for s in shapes)
        for i in range(-1, -ndim - 1, -1):
            sizes = {s[i] for s in shapes if len(s) >= -i} - {1}
            if len(sizes) > 1:
                break
        raise ShapeError(
            f"{name} cannot broadcast shapes "
            f"{' and '.join(str(tuple(s)) for s in shapes)}: dimension "
            f"{i} has sizes {' and '.join(map(str, sorted(sizes)))}. Reshape or transpose "
            "one operand so the sizes agree or one of them is 1.")
    return out


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


def bilinear_vjp(prim: Primitive) -> BilinearRule:
    """The eager reverse rule of a primitive linear in each operand separately
    (a product): the tape records a product node, transposed once per needed
    operand."""
    return BilinearRule(prim)


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
