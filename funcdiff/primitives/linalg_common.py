"""What the linear-algebra primitive modules share: errors, checks and matrix helpers.

``LinAlgError`` and ``SquareMatrixError`` are the errors of numerically
unsuitable and misshapen matrices; ``check_matrix`` and ``check_rhs`` check
operands in the shape rules, and ``numerical`` wraps an impl so that numpy's
``LinAlgError`` becomes ours. The jvp rules build on the small matrix
operations here, written in funcdiff operations so that the rules stay
traceable (transpose and conjugate transpose of the last two axes, batched
matrix product, Hermitian part, diagonal, trace, triangle masks). Matrices are
real or complex (float32/64, complex64/128); ``mH`` is the plain transpose for
real ones, so one rule serves both. Every primitive is batched over its
leading axes, so the batch and cost rules are shared too. The primitives live
in ``linalg_solve``, ``linalg_factor``, ``linalg_lu`` and ``linalg_expm``;
``linalg`` re-exports them.
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff.bridge import NamespaceArray
from funcdiff.core import Primitive, ShapedArray, Zero, get_aval, tangent_aval
from funcdiff.errors import DTypeError, FunctionalDiffError, ShapeError
from funcdiff.primitives import complex_ops
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import reductions, slicing, structural
from funcdiff.primitives.cards import checked_impl, nbytes
from funcdiff.primitives.dot import dot_general


class LinAlgError(FunctionalDiffError, np.linalg.LinAlgError):
    """A matrix is numerically unsuitable: not positive definite, singular, no convergence.

    Also a ``numpy.linalg.LinAlgError`` (hence a ``ValueError``), so code written
    against numpy's exceptions keeps working.
    """


class SquareMatrixError(ShapeError, LinAlgError):
    """A function that needs square matrices (or matrices at all) got another shape."""


# ---------------------------------------------------------------------------
# Shared helpers: checks, and matrix operations in funcdiff ops for the rules

REAL = (np.dtype(np.float32), np.dtype(np.float64))
INEXACT = REAL + (np.dtype(np.complex64), np.dtype(np.complex128))


def check_matrix(name: str, aval: ShapedArray, square: bool = True) -> None:
    """Raise the errors of ``name`` for a non-inexact or non-(square-)matrix operand."""
    if aval.dtype not in INEXACT:
        raise DTypeError(
            f"{name} needs float32, float64, complex64 or complex128 matrices, but got "
            f"{aval.str_short()}. Convert integers with astype(float); float16 is not "
            "supported by funcdiff's linear algebra (numpy's linalg rejects it as well).")
    if aval.ndim < 2:
        raise SquareMatrixError(
            f"{name} needs an array of at least 2 dimensions (a matrix, or a stack of them "
            f"in the leading axes), but got shape {aval.shape}.")
    if square and aval.shape[-1] != aval.shape[-2]:
        raise SquareMatrixError(
            f"{name} needs square matrices in the last two axes, but got shape {aval.shape} "
            f"({aval.shape[-2]} x {aval.shape[-1]}).")


def check_rhs(name: str, a: ShapedArray, b: ShapedArray, left_side: bool = True) -> None:
    check_matrix(name, a)
    check_matrix(name, b, square=False)
    if a.dtype != b.dtype or a.shape[:-2] != b.shape[:-2]:
        raise ShapeError(
            f"the primitive {name} needs a matrix and a right-hand side of one dtype with "
            f"equal leading (batch) axes, but got {a.str_short()} and {b.str_short()}. "
            "funcdiff.numpy.linalg broadcasts and promotes them for you.")
    n, m = a.shape[-1], b.shape[-2 if left_side else -1]
    if n != m:
        side = "rows" if left_side else "columns"
        raise ShapeError(f"the primitive {name} needs a right-hand side with {n} {side} for a "
                         f"{n} x {n} matrix, but got {b.str_short()}.")


def operand(a):
    """An impl's operand: a numpy array, or another library's array as the bridge wraps it
    (numpy.linalg's functions dispatch to that library's linalg extension)."""
    return a if type(a) is NamespaceArray else np.asarray(a)


def numerical(name: str, fn, abstract_eval, message: str):
    """An impl calling ``fn``; numpy's LinAlgError becomes ours (after the shape checks)."""
    def impl(*args, **params):
        try:
            return fn(*[operand(a) for a in args], **params)
        except np.linalg.LinAlgError as e:
            if isinstance(e, FunctionalDiffError):
                raise
            abstract_eval(*[get_aval(a) for a in args], **params)
            raise LinAlgError(f"{name}: {message} (numpy: {e}).") from None
    impl.__name__ = f"{name}_impl"
    return checked_impl(impl, abstract_eval)


SINGULAR = ("the matrix (or one matrix of the stack) is exactly singular, so it has no "
             "inverse. Check the input's rank; regularise it (add a small multiple of the "
             "identity) or use pinv / lstsq for rank-deficient systems")


def const(x, value):
    return np.asarray(value, get_aval(x).dtype)


def mT(x):
    """Transpose of the last two axes."""
    nd = get_aval(x).ndim
    return structural.transpose(x, permutation=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def mm(x, y):
    """Matrix product of stacks with equal leading axes: one batched ``dot_general``."""
    nd = get_aval(x).ndim
    batch = tuple(range(nd - 2))
    return dot_general(x, y, dimension_numbers=(((nd - 1,), (nd - 2,)), (batch, batch)))


def is_complex(x) -> bool:
    return get_aval(x).dtype.kind == "c"


def conj(x):
    """The complex conjugate of a complex ``x``; a real ``x`` itself."""
    return complex_ops.conj(x) if is_complex(x) else x


def mH(x):
    """Conjugate transpose of the last two axes (``mT`` for real matrices)."""
    return conj(mT(x))


def real_part(x):
    """The real part of a complex ``x`` (a real array); a real ``x`` itself."""
    return complex_ops.real(x) if is_complex(x) else x


def as_dtype(x, dtype):
    """``x`` cast to ``dtype`` (a real tangent entering a complex formula)."""
    return x if get_aval(x).dtype == dtype else ew.convert_element_type(x, dtype)


def sym(x):
    """The Hermitian part ``(x + xᴴ)/2`` (the symmetric part of a real matrix)."""
    return ew.mul(ew.add(x, mH(x)), const(x, 0.5))


def diag(x):
    """The diagonal ``(..., n)`` of square matrices: a strided slice of the flattened pair."""
    shape = get_aval(x).shape
    lead, n = shape[:-2], shape[-1]
    flat = structural.reshape(x, new_sizes=lead + (n * n,))
    return slicing.slice(flat, start_indices=(0,) * (len(lead) + 1),
                            limit_indices=lead + (n * n,),
                            strides=(1,) * len(lead) + (n + 1,))


def trace(x):
    d = diag(x)
    return reductions.reduce_sum(d, axes=(get_aval(d).ndim - 1,))


def row(v):
    return structural.expand_dims(v, dimensions=(-2,))


def col(v):
    return structural.expand_dims(v, dimensions=(-1,))


def mask(x, shape, k, lower):
    """``x`` times the constant triangle mask of ``shape`` (diagonal offset ``k``)."""
    ones = np.ones(shape, get_aval(x).dtype)
    return ew.mul(x, np.tril(ones, k) if lower else np.triu(ones, k))


def cols(x, start, stop):
    shape = get_aval(x).shape
    return slicing.slice(x, start_indices=(0,) * (len(shape) - 1) + (start,),
                            limit_indices=shape[:-1] + (stop,))


def rows(x, stop):
    shape = get_aval(x).shape
    return slicing.slice(x, start_indices=(0,) * len(shape),
                            limit_indices=shape[:-2] + (stop, shape[-1]))


def _batch_size(vals, dims):
    return next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)


def _to_front(x, bdim, size):
    if bdim is None:
        shape = get_aval(x).shape
        return structural.broadcast_in_dim(x, shape=(size,) + shape,
                                           broadcast_dimensions=tuple(range(1, len(shape) + 1)))
    return structural.moveaxis(x, bdim, 0)


def leading_batch(prim: Primitive):
    """Batch rule of a primitive batched over leading axes: the batch axis goes first."""
    def rule(vals, dims, **params):
        size = _batch_size(vals, dims)
        out = prim.bind(*[_to_front(v, d, size) for v, d in zip(vals, dims)], **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    return rule


def solve_batch(prim: Primitive):
    """Batch rule of ``op(a, b)`` solves: an unbatched ``a`` is never copied per member;
    the batch joins b's independent columns (left side) or rows (right side)."""
    leading = leading_batch(prim)

    def rule(vals, dims, **params):
        (a, b), (da, db) = vals, dims
        if da is not None:
            return leading(vals, dims, **params)
        left = params.get("left_side", True)
        b = structural.moveaxis(b, db, -1 if left else -3)
        shape = get_aval(b).shape
        folded = (shape[:-2] + (shape[-2] * shape[-1],) if left
                  else shape[:-3] + (shape[-3] * shape[-2], shape[-1]))
        x = prim.bind(a, structural.reshape(b, new_sizes=folded), **params)
        return structural.reshape(x, new_sizes=shape), len(shape) - (1 if left else 3)
    return rule


def matrices(aval) -> int:
    return math.prod(aval.shape[:-2])


def cost(flops_per_matrix):
    """Cost rule: ``flops_per_matrix(m, n, *other_avals)`` per matrix of the first operand."""
    def cost(*avals, **params):
        a = avals[0]
        m, n = a.shape[-2:]
        flops = matrices(a) * int(flops_per_matrix(m, n, *avals[1:]))
        return {"flops": flops, "bytes": 2 * sum(nbytes(x) for x in avals)}
    return cost


def zero_like(x):
    return Zero(tangent_aval(get_aval(x)))
