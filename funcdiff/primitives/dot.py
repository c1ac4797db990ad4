"""Contraction: the ``dot_general`` primitive and the ``dot`` operation.

``dot_general`` contracts chosen axes of two arrays and keeps chosen batch
axes aligned, with JAX's output layout: batch axes, then the free axes of the
left operand, then those of the right one (each in their original order).
It is bilinear: its jvp is ``dot(tx, y) + dot(x, ty)``, its transpose for one
operand is another ``dot_general`` with the cotangent (plus an axis
permutation when the layout needs one), and batching folds the vmapped axis
into the batch or free axes, so every rule stays one BLAS call. The impl
routes every case to BLAS: ``np.dot`` for matrix and vector products (a
transposed operand is a view BLAS accepts), ``np.tensordot`` for other
contractions without batch axes, one stacked ``np.matmul`` with batch axes.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from funcdiff import core, roles
from funcdiff.backends import as_array
from funcdiff.compiler.lowerings import lower_dot_general
from funcdiff.core import Primitive, ShapedArray, Zero, bind, get_aval
from funcdiff.errors import AxisError, ShapeError
from funcdiff.interpreters import batching
from funcdiff.interpreters.tape_nodes import DiagonalBatch
from funcdiff.interpreters.transpose import UndefinedPrimal
from funcdiff.passes import traits as passes
from funcdiff.passes.rules import ANY, EYE, on_zeros, rewrite, zeros
from funcdiff.passes.zero_propagation import ZERO_OR_FINITE
from funcdiff.primitives import elementwise
from funcdiff.primitives.cards import bilinear_vjp, nbytes, same_dtype
from funcdiff.primitives.structural import _checked_impl, transpose, transpose_p


def _free_axes(ndim: int, contracting: tuple, batch: tuple) -> list[int]:
    return [i for i in range(ndim) if i not in contracting and i not in batch]


def _prod(shape) -> int:
    return math.prod(shape)


# --- dot_general ------------------------------------------------------------------

dot_general_p = Primitive("dot_general")


def dot_general_impl(x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    if type(x) is not np.ndarray:
        x = as_array(x)
    if type(y) is not np.ndarray:
        y = as_array(y)
    if not lb and len(lc) == 1 and len(rc) == 1 and x.ndim <= 2 and y.ndim <= 2:
        # Matrix and vector products (the common case, checked cheaply); a
        # transposed operand is a view BLAS accepts.
        i, j = lc[0], rc[0]
        if not (0 <= i < x.ndim and 0 <= j < y.ndim and x.shape[i] == y.shape[j]):
            raise ValueError("mismatched axes")  # numpy may broadcast silently
        return np.dot(x.T if i == 0 and x.ndim == 2 else x, y.T if j == 1 else y)
    if len(lc) != len(rc) or len(lb) != len(rb) or any(
            i < 0 or j < 0 or x.shape[i] != y.shape[j] for i, j in zip(lc + lb, rc + rb)):
        raise ValueError("mismatched axes")  # numpy may broadcast or reshape silently
    if not lb:
        if len(lc) == x.ndim and lc == rc == tuple(range(x.ndim)) and x.ndim == y.ndim:
            # a full contraction in matching order ('ij,ij->'): one dot of the flat
            # arrays (np.tensordot spends microseconds in Python to get there)
            return np.dot(x.ravel(), y.ravel())
        return np.tensordot(x, y, axes=(lc, rc))
    # Batch axes: one stacked matmul of (batch, free_x, contract) @ (batch, contract, free_y).
    x_free, y_free = _free_axes(x.ndim, lc, lb), _free_axes(y.ndim, rc, rb)
    batch_shape = tuple(x.shape[i] for i in lb)
    x_free_shape = tuple(x.shape[i] for i in x_free)
    y_free_shape = tuple(y.shape[i] for i in y_free)
    k = _prod([x.shape[i] for i in lc])
    xt = x.transpose(lb + tuple(x_free) + lc).reshape(_prod(batch_shape), _prod(x_free_shape), k)
    yt = y.transpose(rb + rc + tuple(y_free)).reshape(_prod(batch_shape), k, _prod(y_free_shape))
    return np.matmul(xt, yt).reshape(batch_shape + x_free_shape + y_free_shape)


def _dot_general_abstract_eval(x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    dtype = same_dtype("dot_general", x, y)

    def where():  # built only when there is an error to report
        return (f"dot_general of {x.str_short()} and {y.str_short()} with "
                f"dimension_numbers={dimension_numbers}")
    for axes, a, side in ((lc + lb, x, "left"), (rc + rb, y, "right")):
        if any(not 0 <= i < a.ndim for i in axes) or len(set(axes)) != len(axes):
            raise AxisError(f"{where()}: the {side} operand's contracting and batch axes "
                            f"must be distinct axes in [0, {a.ndim})")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"{where()}: both operands need the same number of contracting "
                         "axes and of batch axes")
    for kind, left, right in (("contracting", lc, rc), ("batch", lb, rb)):
        for i, j in zip(left, right):
            if x.shape[i] != y.shape[j]:
                raise ShapeError(
                    f"{where()}: {kind} axis {i} of the left operand has size {x.shape[i]} "
                    f"but axis {j} of the right operand has size {y.shape[j]}. Transpose "
                    "an operand or fix dimension_numbers so the paired axes agree.")
    shape = (tuple(x.shape[i] for i in lb)
             + tuple(x.shape[i] for i in _free_axes(x.ndim, lc, lb))
             + tuple(y.shape[i] for i in _free_axes(y.ndim, rc, rb)))
    return ShapedArray(shape, dtype)


def _dot_general_jvp(primals, tangents, *, dimension_numbers):
    (x, y), (tx, ty) = primals, tangents
    bind_dot = dot_general_p.bind  # the numbers are canonical already
    out = bind_dot(x, y, dimension_numbers=dimension_numbers)
    if type(tx) is Zero:
        if type(ty) is Zero:
            return out, Zero(get_aval(out))
        return out, bind_dot(x, ty, dimension_numbers=dimension_numbers)
    t = bind_dot(tx, y, dimension_numbers=dimension_numbers)
    if type(ty) is not Zero:
        t = elementwise.add(t, bind_dot(x, ty, dimension_numbers=dimension_numbers))
    return out, t


def _permutation_to(positions) -> tuple | None:
    """The permutation putting axis i at ``positions[i]``, or None for the identity."""
    permutation = tuple(sorted(range(len(positions)), key=positions.__getitem__))
    return None if permutation == tuple(range(len(positions))) else permutation


@functools.lru_cache(maxsize=1024)
def _transpose_plan(dimension_numbers, x_ndim: int, y_ndim: int, wrt_x: bool):
    """How to transpose dot_general for one operand: the dimension numbers of the
    contraction with the cotangent and the permutation of its result (or None)."""
    # ct has the layout (batch, x's free axes, y's free axes). Contracting it with
    # the known operand over that operand's free axes leaves the other operand's
    # axes grouped as (batch, ..., contracting in the known operand's order); the
    # operand order below makes plain matmuls come out in place, with no transpose.
    (lc, rc), (lb, rb) = dimension_numbers
    nbatch, batch = len(lb), tuple(range(len(lb)))
    x_free = _free_axes(x_ndim, lc, lb)
    y_free = _free_axes(y_ndim, rc, rb)
    if wrt_x:
        ct_y_free = tuple(range(nbatch + len(x_free), nbatch + len(x_free) + len(y_free)))
        numbers = ((ct_y_free, tuple(y_free)), (batch, rb))
        # result: (batch, x's free axes, y's contracting axes in increasing order)
        positions = list(lb) + x_free + [lc[rc.index(a)] for a in sorted(rc)]
    else:
        ct_x_free = tuple(range(nbatch, nbatch + len(x_free)))
        numbers = ((tuple(x_free), ct_x_free), (lb, batch))
        # result: (batch, x's contracting axes in increasing order, y's free axes)
        positions = list(rb) + [rc[lc.index(a)] for a in sorted(lc)] + y_free
    return numbers, _permutation_to(positions)


_MATRIX_PRODUCT = (((1,), (0,)), ((), ()))  # the dimension numbers of x @ y


def _dot_general_transpose(ct, x, y, *, dimension_numbers):
    x_undefined = type(x) is UndefinedPrimal
    if x_undefined == (type(y) is UndefinedPrimal):
        raise ValueError("dot_general is transposed with respect to exactly one operand")
    kept = y if x_undefined else x
    # the eager tape's backward pass: the impl, as bind would call it, without its
    # dispatch (a third of a small layer's pullback)
    direct = type(ct) is np.ndarray and type(kept) is np.ndarray and core.impls_run_directly()
    if direct and dimension_numbers == _MATRIX_PRODUCT and ct.ndim == 2 and kept.ndim == 2:
        # a layer's x @ W (both operands matrices): ct @ W.T and x.T @ ct, no plan
        return [np.dot(ct, y.T), None] if x_undefined else [None, np.dot(x.T, ct)]
    if x_undefined:
        numbers, permutation = _transpose_plan(dimension_numbers, len(x.aval.shape),
                                               get_aval(y).ndim, True)
        operands = (ct, y)
    else:
        numbers, permutation = _transpose_plan(dimension_numbers, get_aval(x).ndim,
                                               len(y.aval.shape), False)
        operands = (x, ct)
    if direct:
        result = dot_general_impl(*operands, dimension_numbers=numbers)
        if permutation is not None:
            result = result.transpose(permutation)
    else:
        result = dot_general_p.bind(*operands, dimension_numbers=numbers)
        if permutation is not None:
            result = transpose(result, permutation=permutation)
    return [result, None] if x_undefined else [None, result]


def _dot_general_batched_transpose(ct, x, y, *, dimension_numbers):
    """The transpose for a batch of cotangents (leading axis 0, concrete arrays):
    the batched product the batch rule would run, computed directly. For a
    ``DiagonalBatch`` of a matrix-vector product, the scaled rows of the matrix
    (None for other products)."""
    wrt_x = type(x) is UndefinedPrimal
    undefined, kept = (x, y) if wrt_x else (y, x)
    if type(ct) is DiagonalBatch:
        rows = _diagonal_rows(ct.d, kept, wrt_x, len(undefined.aval.shape), dimension_numbers)
        if rows is None:
            return None
        return [rows, None] if wrt_x else [None, rows]
    ct_first, numbers, permutation = _batched_transpose_plan(
        dimension_numbers, wrt_x, ct.shape, np.shape(kept), len(undefined.aval.shape))
    result = dot_general_impl(ct, kept, dimension_numbers=numbers) if ct_first else \
        dot_general_impl(kept, ct, dimension_numbers=numbers)
    if permutation is not None:
        result = result.transpose(permutation)
    return [result, None] if wrt_x else [None, result]


def _diagonal_rows(d, kept, wrt_x: bool, undefined_ndim: int, dimension_numbers):
    """The transpose for the cotangents ``diag(d)`` of a matrix-vector product
    with the vector undefined: row b is ``d[b]`` times the matrix's slice of
    output element b, with no product computed. None for other products."""
    (lc, rc), (lb, _) = dimension_numbers
    if lb or undefined_ndim != 1 or np.ndim(kept) != 2:
        return None
    contracted = rc[0] if wrt_x else lc[0]  # the matrix's contracted axis
    matrix = kept if contracted == 1 else kept.T  # (output, contracted)
    return matrix * d[:, None]


@functools.lru_cache(maxsize=1024)
def _batched_transpose_plan(dimension_numbers, wrt_x: bool, ct_shape: tuple, kept_shape: tuple,
                            undefined_ndim: int):
    """How ``_dot_general_batched_transpose`` runs: (the batched cotangent is the
    first operand?, dimension numbers, the one permutation bringing the batch
    axis to the front and the cotangent's axes in order, or None)."""
    if wrt_x:
        numbers, permutation = _transpose_plan(dimension_numbers, undefined_ndim,
                                               len(kept_shape), True)
        swap, numbers, out_dim = _batch_plan(numbers, 0, None, ct_shape, kept_shape)
    else:
        numbers, permutation = _transpose_plan(dimension_numbers, len(kept_shape),
                                               undefined_ndim, False)
        swap, numbers, out_dim = _batch_plan(numbers, None, 0, kept_shape, ct_shape)
    ndim = undefined_ndim + 1
    to_front = [out_dim] + [i for i in range(ndim) if i != out_dim]
    if permutation is not None:
        to_front = [to_front[0]] + [to_front[p + 1] for p in permutation]
    identity = to_front == list(range(ndim))
    return wrt_x != swap, numbers, None if identity else tuple(to_front)


def _shift(axes: tuple, bdim: int) -> tuple:
    """Axes of the unbatched operand, renumbered for the operand with ``bdim`` inserted."""
    return tuple(a + (a >= bdim) for a in axes)


def _dot_general_batch(vals, dims, *, dimension_numbers):
    (x, y), (dx, dy) = vals, dims
    swap, numbers, out_dim = _batch_plan(dimension_numbers, dx, dy, get_aval(x).shape,
                                         get_aval(y).shape)
    if swap:
        return dot_general_p.bind(y, x, dimension_numbers=numbers), out_dim
    return dot_general_p.bind(x, y, dimension_numbers=numbers), out_dim


@functools.lru_cache(maxsize=1024)
def _batch_plan(dimension_numbers, dx, dy, x_shape, y_shape):
    """How to batch dot_general: (swap the operands?, dimension numbers, output batch axis)."""
    (lc, rc), (lb, rb) = dimension_numbers
    if dx is not None and dy is not None:  # a new leading batch axis of the contraction
        numbers = ((_shift(lc, dx), _shift(rc, dy)),
                   ((dx,) + _shift(lb, dx), (dy,) + _shift(rb, dy)))
        return False, numbers, 0
    if not lb:
        # One batched operand b whose only free axis is the batch axis (a batch of
        # vectors, as in a Jacobian's basis or cotangents) against a matrix w: the
        # result is a plain matrix product, and either order of the operands is
        # valid. With one BLAS thread, putting the longer side of the result last is
        # the faster layout (a (1000, 10) product costs about 1.6x a (10, 1000) one).
        b_is_x = dx is not None
        db, bc, wc = (dx, lc, rc) if b_is_x else (dy, rc, lc)
        b_shape, w_shape = (x_shape, y_shape) if b_is_x else (y_shape, x_shape)
        bc = _shift(bc, db)
        if len(bc) + 1 == len(b_shape):
            w_free = _prod([w_shape[i] for i in range(len(w_shape)) if i not in wc])
            batch = b_shape[db]
            # Measured exception (OpenBLAS, one thread): a batch of at most 16 vectors
            # stored batch-last against a matrix of at most 98304 elements (768 KiB
            # in float64: it stays in cache) is fastest as the plain product w @ b,
            # no operand transposed (0.035 ms against 0.051-0.064 for the (batch,
            # 300) result at 300 x 300, batch 10; larger matrices or batches favour
            # the longer side last).
            small = (db == len(b_shape) - 1 and batch <= 16
                     and w_free * _prod([w_shape[i] for i in wc]) <= 98304)
            if small or batch >= w_free:  # w first: the result is (w's free axes, batch)
                n_w_free = len(w_shape) - len(wc)
                return b_is_x, ((wc, bc), ((), ())), n_w_free
            return not b_is_x, ((bc, wc), ((), ())), 0
    if dx is not None:  # a free axis of x: it lands among x's free output axes
        lc, lb = _shift(lc, dx), _shift(lb, dx)
        out_dim = len(lb) + sum(1 for a in _free_axes(len(x_shape), lc, lb) if a < dx)
        return False, ((lc, rc), (lb, rb)), out_dim
    rc, rb = _shift(rc, dy), _shift(rb, dy)
    n_x_free = len(_free_axes(len(x_shape), lc, lb))
    out_dim = len(lb) + n_x_free + sum(1 for a in _free_axes(len(y_shape), rc, rb) if a < dy)
    return False, ((lc, rc), (lb, rb)), out_dim


def _dot_general_cost(x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    out = _dot_general_abstract_eval(x, y, dimension_numbers=dimension_numbers)
    flops = (2 * _prod([x.shape[i] for i in lb])
             * _prod([x.shape[i] for i in _free_axes(x.ndim, lc, lb)])
             * _prod([y.shape[i] for i in _free_axes(y.ndim, rc, rb)])
             * _prod([x.shape[i] for i in lc]))
    return {"flops": flops, "bytes": nbytes(x) + nbytes(y) + nbytes(out)}


dot_general_p.impl = _checked_impl(dot_general_p, dot_general_impl)
dot_general_p.abstract_eval = _dot_general_abstract_eval
dot_general_p.jvp = _dot_general_jvp
dot_general_p.vjp = bilinear_vjp(dot_general_p)
dot_general_p.transpose = _dot_general_transpose
dot_general_p.batched_transpose = _dot_general_batched_transpose
dot_general_p.batch = _dot_general_batch
dot_general_p.cost = _dot_general_cost
dot_general_p.lowering = lower_dot_general
roles.CONTRACTION.fill(dot_general_p)
dot_general_p.traits |= {passes.NEG_COMMUTING}


def _one_contracted_axis(eqn, *operands) -> bool:
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    return not lb and len(lc) == 1


def _moved_axes(rw, x, perm):
    return x if perm == tuple(range(len(perm))) else rw.add(transpose_p, x, permutation=perm)


def _times_identity(rw, eqn, x, eye):
    """x . I is x with its contracted axis moved last."""
    (lc, rc), _ = eqn.params["dimension_numbers"]
    return _moved_axes(rw, x, tuple(i for i in range(x.aval.ndim) if i != lc[0]) + (lc[0],))


def _identity_times(rw, eqn, eye, y):
    """I . y is y with its contracted axis moved first."""
    (lc, rc), _ = eqn.params["dimension_numbers"]
    return _moved_axes(rw, y, (rc[0],) + tuple(i for i in range(y.aval.ndim) if i != rc[0]))


dot_general_p.rewrites = (  # (an identity matrix is the basis of jacfwd and jacrev)
    rewrite("x . I -> transpose x", (ANY, EYE), _times_identity, when=_one_contracted_axis),
    rewrite("I . y -> transpose y", (EYE, ANY), _identity_times, when=_one_contracted_axis),
    on_zeros("x . 0 -> 0 for x certainly finite (inf * 0 is nan)",
             (ZERO_OR_FINITE, ZERO_OR_FINITE), zeros),
)


_canonical: dict = {}  # dimension_numbers as given -> as tuples of ints (few distinct ones)


def _canonical_dimension_numbers(dimension_numbers):
    try:
        return _canonical[dimension_numbers]
    except (KeyError, TypeError):  # new, or unhashable (lists)
        pass
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        result = tuple(tuple(tuple(int(a) for a in axes) for axes in pair)
                       for pair in ((lc, rc), (lb, rb)))
    except (TypeError, ValueError):
        raise ShapeError(
            "dot_general needs dimension_numbers=((lhs_contracting, rhs_contracting), "
            f"(lhs_batch, rhs_batch)) with tuples of axes, but got {dimension_numbers!r}"
        ) from None
    try:
        if len(_canonical) < 4096:
            _canonical[dimension_numbers] = result
    except TypeError:
        pass
    return result


def dot_general(x, y, *, dimension_numbers):
    """General tensor contraction with batch axes, like ``lax.dot_general``.

    Args:
      x, y: arrays of one dtype.
      dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch,
        rhs_batch))``, tuples of non-negative axes paired position by position.

    Returns:
      An array with the batch axes first, then x's free axes, then y's free
      axes (each in their original order).

    Raises:
      ShapeError: paired axes differ in size or the tuples differ in length.
      AxisError: an axis is out of range or repeated. DTypeError: dtypes differ.

    >>> x, y = np.ones((5, 2, 3)), np.ones((5, 3, 4))
    >>> dot_general(x, y, dimension_numbers=(((2,), (1,)), ((0,), (0,)))).shape
    (5, 2, 4)
    """
    return bind(dot_general_p, x, y,
                dimension_numbers=_canonical_dimension_numbers(dimension_numbers))


def dot(x, y):
    """``numpy.dot``: contract the last axis of x with the second-to-last of y.

    For vectors and matrices this is the inner, matrix-vector or matrix
    product; a 0-d operand multiplies elementwise.

    >>> dot(np.array([[1., 2.], [3., 4.]]), np.array([1., 1.]))
    array([3., 7.])
    """
    x_ndim, y_ndim = get_aval(x).ndim, get_aval(y).ndim
    if x_ndim == 0 or y_ndim == 0:
        return elementwise.mul(x, y)
    return bind(dot_general_p, x, y,
                dimension_numbers=(((x_ndim - 1,), (max(y_ndim - 2, 0),)), ((), ())))
