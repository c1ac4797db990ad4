"""Basic linear algebra of funcdiff.numpy: products, trace, kron, cross, convolution.

Every product is a contraction of labelled axes by ``contract_pair`` (see
``_contraction``): one ``dot_general``, whose impl reaches BLAS, or a
broadcasting ``mul`` when nothing is contracted. ``trace`` takes its diagonal
as a strided slice of the two axes flattened into one: linear, batchable and
differentiable without index arrays. ``convolve``/``correlate`` gather sliding
windows and contract them with the kernel in one ``dot_general`` (in a few row
chunks when the window matrix would be large). ``einsum`` lives in ``_einsum``.

Python scalars are converted like numpy converts them here (``np.asarray``),
so ``dot(float32_array, 2.0)`` is float64, as in numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff.core import Tracer, get_aval
from funcdiff.errors import AxisError, InvalidArgumentError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy._contraction import (arrange, bool_in, bool_out, contract_pair,
                                         diagonal_last, reshape, shape_of)
from funcdiff.numpy._diagonals import strided_diagonal
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import complex_ops, indexing, reductions, slicing, structural
from funcdiff.primitives.cards import broadcast_shapes
from funcdiff.primitives.dot import dot_general, dot_general_p


# ---------------------------------------------------------------------------
# Shared helpers


def _prepare(name: str, *args: Any) -> list[Any]:
    """Arrays of one promoted dtype; Python scalars become strong 0-d arrays
    (numpy's products call ``asarray`` on them)."""
    dtype = getattr(args[0], "dtype", None)
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":  # fast path: one numpy dtype
        for a in args:
            if not (type(a) is np.ndarray or isinstance(a, Tracer)) or a.dtype != dtype:
                break
        else:
            return list(args)
    arrays = [_util.asarray(a, name) for a in args]
    return _util.promote(name, *arrays)


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """numpy's accumulator dtype of sum/trace/cumsum: small ints widen to the platform int."""
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return np.dtype(np.int64)
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


# ---------------------------------------------------------------------------
# Products


def dot(a, b, out=None):
    """Dot product of two arrays (numpy.dot).

    Contracts the last axis of ``a`` with the second-to-last axis of ``b`` (the
    only axis when ``b`` is 1-D); a 0-d operand multiplies elementwise. One
    ``dot_general``.

    Args:
      a, b: arrays or array-likes.

    Returns:
      Array of shape ``a.shape[:-1] + b.shape[:-2] + b.shape[-1:]``.

    Raises:
      ShapeError: if the contracted axes differ in size (both shapes are shown).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.dot(np.array([[1., 2.], [3., 4.]]), np.array([1., 1.]))
    array([3., 7.])
    """
    if out is None:
        product = _plain_product(a, b)
        if product is not None:
            return product
    _util.reject("dot", out=out)
    a, b = _prepare("dot", a, b)
    (a, b), was_bool = bool_in([a, b])
    a_shape, b_shape = shape_of(a), shape_of(b)
    if not a_shape or not b_shape:
        return bool_out(ew.mul(a, b), was_bool)
    b_axis = max(len(b_shape) - 2, 0)
    if a_shape[-1] != b_shape[b_axis]:
        raise ShapeError(
            f"dot: shapes {a_shape} and {b_shape} are not aligned: dimension "
            f"{len(a_shape) - 1} of the first ({a_shape[-1]}) != dimension {b_axis} of the "
            f"second ({b_shape[b_axis]}).")
    out = dot_general(a, b, dimension_numbers=(((len(a_shape) - 1,), (b_axis,)), ((), ())))
    return bool_out(out, was_bool)


def vdot(a, b):
    """Dot product of two arrays flattened to vectors, a complex ``a`` conjugated (numpy.vdot).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.vdot(np.array([[1., 2.], [3., 4.]]), np.array([[1., 1.], [1., 1.]])))
    10.0
    """
    a, b = _prepare("vdot", a, b)
    if get_aval(a).size != get_aval(b).size:
        raise ShapeError(f"vdot needs inputs with the same number of elements, but got shapes "
                         f"{shape_of(a)} and {shape_of(b)}.")
    (a, b), was_bool = bool_in([a, b])
    size = get_aval(a).size
    a, b = reshape(_conj_if_complex(a), (size,)), reshape(b, (size,))
    return bool_out(dot_general(a, b, dimension_numbers=(((0,), (0,)), ((), ()))), was_bool)


def _conj_if_complex(x):
    """The complex conjugate of a complex ``x`` (vdot's first operand, correlate's
    second, as numpy conjugates them), else ``x``."""
    return complex_ops.conj(x) if get_aval(x).dtype.kind == "c" else x


def inner(a, b):
    """Inner product over the last axes of ``a`` and ``b`` (numpy.inner).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.inner(np.array([[1., 2.], [3., 4.]]), np.array([1., 10.]))
    array([21., 43.])
    """
    a, b = _prepare("inner", a, b)
    (a, b), was_bool = bool_in([a, b])
    a_shape, b_shape = shape_of(a), shape_of(b)
    if not a_shape or not b_shape:
        return bool_out(ew.mul(a, b), was_bool)
    if a_shape[-1] != b_shape[-1]:
        raise ShapeError(f"inner: shapes {a_shape} and {b_shape} differ in their last "
                         f"dimension ({a_shape[-1]} vs {b_shape[-1]}).")
    numbers = (((len(a_shape) - 1,), (len(b_shape) - 1,)), ((), ()))
    return bool_out(dot_general(a, b, dimension_numbers=numbers), was_bool)


def outer(a, b, out=None):
    """Outer product of two arrays flattened to vectors (numpy.outer).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.outer(np.array([1., 2.]), np.array([1., 10., 100.]))
    array([[  1.,  10., 100.],
           [  2.,  20., 200.]])
    """
    if out is not None:
        _util.reject("outer", out=out)
    a, b = _prepare("outer", a, b)  # numpy arrays or tracers, which know their size
    a = reshape(a, (a.size, 1))
    if b.ndim != 1:
        b = structural.reshape(b, new_sizes=(b.size,))
    if a.dtype.kind == "b":
        return ew.and_(a, b)
    return ew.mul(a, b)


# matmul's dimension numbers when b has at most two axes, by (a's, b's contracted axis)
_MATMUL_NUMBERS = {(a_k, 0): (((a_k,), (0,)), ((), ())) for a_k in range(64)}


def _plain_product(a, b):
    """The common case of matmul and dot, where they agree: float operands of one
    dtype, ``b`` a matrix or vector whose first axis matches ``a``'s last. One
    dot_general bound directly, or None for the general path."""
    dtype = getattr(a, "dtype", None)
    # (b's dtype is compared only when it has one: np.dtype(None) is float64, so
    # None == float64 dtype holds)
    b_dtype = getattr(b, "dtype", None)
    if (isinstance(dtype, np.dtype) and dtype.kind == "f" and b_dtype is not None
            and b_dtype == dtype):  # (a foreign library's dtype takes the general path)
        a_shape, b_shape = a.shape, b.shape
        if a_shape and 0 < len(b_shape) <= 2 and a_shape[-1] == b_shape[0]:
            return dot_general_p.bind(a, b,
                                      dimension_numbers=_MATMUL_NUMBERS[len(a_shape) - 1, 0])
    return None


def matmul(a, b, out=None):
    """Matrix product with numpy's broadcasting of leading dimensions (numpy.matmul, ``@``).

    1-D operands are promoted to matrices (a row for ``a``, a column for ``b``)
    and the added axis is removed from the result. Leading (batch) dimensions
    broadcast; size-1 batch dimensions are not copied. One ``dot_general``.

    Args:
      a, b: arrays of rank >= 1.

    Returns:
      The product, of shape ``broadcast(a.shape[:-2], b.shape[:-2]) + (n, m)``
      (without ``n``/``m`` for 1-D inputs).

    Raises:
      ShapeError: a 0-d operand, mismatched inner sizes or batch shapes that do
        not broadcast; the message shows both shapes.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.matmul(np.ones((4, 2, 3)), np.ones((3, 5))).shape
    (4, 2, 5)
    """
    if out is None:
        product = _plain_product(a, b)
        if product is not None:
            return product
    _util.reject("matmul", out=out)
    a, b = _prepare("matmul", a, b)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if not a_shape or not b_shape:
        raise ShapeError(f"matmul: operands must have at least one dimension, but got shapes "
                         f"{a_shape} and {b_shape}. Use multiply (or *) for scalars.")
    a_k = len(a_shape) - 1
    b_k = max(len(b_shape) - 2, 0)
    if a_shape[a_k] != b_shape[b_k]:
        raise ShapeError(
            f"matmul: shapes {a_shape} and {b_shape} do not match in the contracted "
            f"dimension ({a_shape[a_k]} vs {b_shape[b_k]}): the last axis of the first "
            "must equal the second-to-last axis of the second.")
    if len(b_shape) <= 2 and a.dtype != np.bool_:
        # a's free axes, then b's: exactly dot_general's layout (the common case)
        return dot_general_p.bind(a, b, dimension_numbers=_MATMUL_NUMBERS[a_k, b_k])
    (a, b), was_bool = bool_in([a, b])
    if len(b_shape) <= 2:
        numbers = ((a_k,), (b_k,)), ((), ())
        return bool_out(dot_general(a, b, dimension_numbers=numbers), was_bool)
    if len(a_shape) == len(b_shape) and a_shape[:-2] == b_shape[:-2]:  # aligned batches
        batch = tuple(range(len(a_shape) - 2))
        numbers = ((a_k,), (b_k,)), (batch, batch)
        return bool_out(dot_general(a, b, dimension_numbers=numbers), was_bool)
    a_batch, b_batch = a_shape[:-2], b_shape[:-2]
    try:
        batch_shape = broadcast_shapes("matmul", a_batch, b_batch)
    except ShapeError:
        raise ShapeError(f"matmul: the batch dimensions of shapes {a_shape} and {b_shape} "
                         f"({a_batch} and {b_batch}) do not broadcast.") from None
    nb = len(batch_shape)
    batch = tuple(("batch", i) for i in range(nb))
    a_labels = batch[nb - len(a_batch):] + (("i",) if len(a_shape) > 1 else ()) + ("k",)
    b_labels = batch[nb - len(b_batch):] + ("k",) + (("j",) if len(b_shape) > 1 else ())
    out_labels = batch + (("i",) if len(a_shape) > 1 else ()) + (("j",) if len(b_shape) > 1 else ())
    out_shape = (batch_shape + ((a_shape[-2],) if len(a_shape) > 1 else ())
                 + ((b_shape[-1],) if len(b_shape) > 1 else ()))
    result, labels = contract_pair(a, a_labels, b, b_labels, out_labels)
    return bool_out(arrange(result, labels, out_labels, out_shape), was_bool)


def _tensordot_axes(axes, a_ndim: int, b_ndim: int) -> tuple[tuple, tuple]:
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(a_ndim, b_ndim):
            raise AxisError(f"tensordot: axes={n} needs 0 <= axes <= min(a.ndim, b.ndim) = "
                            f"{min(a_ndim, b_ndim)}")
        return tuple(range(a_ndim - n, a_ndim)), tuple(range(n))
    try:
        a_axes, b_axes = axes
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"tensordot: axes must be an int or a pair (axes_a, axes_b), got {axes!r}") from None
    a_axes = (a_axes,) if isinstance(a_axes, (int, np.integer)) else tuple(a_axes)
    b_axes = (b_axes,) if isinstance(b_axes, (int, np.integer)) else tuple(b_axes)
    if len(a_axes) != len(b_axes):
        raise ShapeError(f"tensordot: axes_a {a_axes} and axes_b {b_axes} need the same length")
    a_axes = tuple(_util.normalize_axis(i, a_ndim, "tensordot") for i in a_axes)
    b_axes = tuple(_util.normalize_axis(i, b_ndim, "tensordot") for i in b_axes)
    if len(set(a_axes)) != len(a_axes) or len(set(b_axes)) != len(b_axes):
        raise AxisError(f"tensordot: repeated axis in {axes!r}")
    return a_axes, b_axes


def tensordot(a, b, axes=2):
    """Sum products over chosen axes of ``a`` and ``b`` (numpy.tensordot).

    ``axes`` is an int ``N`` (the last ``N`` axes of ``a`` with the first ``N``
    of ``b``) or a pair ``(axes_a, axes_b)``. The result has ``a``'s free axes
    then ``b``'s. One ``dot_general``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.tensordot(np.ones((2, 3, 4)), np.ones((4, 3, 5)), axes=([1, 2], [1, 0])).shape
    (2, 5)
    """
    a, b = _prepare("tensordot", a, b)
    a_shape, b_shape = shape_of(a), shape_of(b)
    a_axes, b_axes = _tensordot_axes(axes, len(a_shape), len(b_shape))
    for i, j in zip(a_axes, b_axes):
        if a_shape[i] != b_shape[j]:
            raise ShapeError(f"tensordot: shape-mismatch for sum: axis {i} of {a_shape} has "
                             f"size {a_shape[i]} but axis {j} of {b_shape} has size {b_shape[j]}")
    (a, b), was_bool = bool_in([a, b])
    a_labels = tuple(("a", i) if i not in a_axes else ("c", a_axes.index(i))
                     for i in range(len(a_shape)))
    b_labels = tuple(("b", j) if j not in b_axes else ("c", b_axes.index(j))
                     for j in range(len(b_shape)))
    out_labels = ([l for l in a_labels if l[0] == "a"] + [l for l in b_labels if l[0] == "b"])
    out_shape = ([a_shape[i] for i in range(len(a_shape)) if i not in a_axes]
                 + [b_shape[j] for j in range(len(b_shape)) if j not in b_axes])
    if not a_axes:  # an outer product
        result, labels = contract_pair(a, a_labels, b, b_labels, out_labels)
        return bool_out(arrange(result, labels, out_labels, out_shape), was_bool)
    numbers = ((a_axes, b_axes), ((), ()))
    return bool_out(dot_general(a, b, dimension_numbers=numbers), was_bool)


# ---------------------------------------------------------------------------
# kron, trace, cross


def kron(a, b):
    """Kronecker product (numpy.kron): blocks ``a[i, j] * b``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.kron(np.array([1., 2.]), np.array([1., 10.]))
    array([ 1., 10.,  2., 20.])
    """
    a, b = _prepare("kron", a, b)
    a_shape, b_shape = shape_of(a), shape_of(b)
    ndim = max(len(a_shape), len(b_shape))
    a_shape = (1,) * (ndim - len(a_shape)) + a_shape
    b_shape = (1,) * (ndim - len(b_shape)) + b_shape
    a = reshape(a, [d for s in a_shape for d in (s, 1)])
    b = reshape(b, [d for s in b_shape for d in (1, s)])
    product = ew.and_(a, b) if _util.dtype_of(a) == np.bool_ else ew.mul(a, b)
    return reshape(product, [p * q for p, q in zip(a_shape, b_shape)])


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal (numpy.trace), over axes ``axis1``/``axis2`` at ``offset``.

    Integer inputs sum in numpy's accumulator dtype (int64 for small ints).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.trace(np.array([[1., 2.], [3., 4.]])))
    5.0
    >>> fnp.trace(np.arange(8.).reshape(2, 2, 2), axis1=1, axis2=2)
    array([ 3., 11.])
    """
    if (dtype is None and out is None and type(offset) is int and type(axis1) is int
            and type(axis2) is int and axis1 == 0 and axis2 == 1
            and (isinstance(a, Tracer) or type(a) is np.ndarray and a.dtype.kind in "iuf")
            and len(a.shape) == 2 and _sum_dtype(a.dtype) is a.dtype):
        # the common case, a matrix summed in its own dtype: diagonal's cached plan
        return reductions.reduce_sum(strided_diagonal(a, a.shape, offset, 0, 1), axes=(0,))
    _util.reject("trace", out=out)
    a = _util.asarray(a, "trace")
    ndim = len(shape_of(a))
    if ndim < 2:
        raise ShapeError(f"trace needs an array of at least 2 dimensions, got shape {shape_of(a)}")
    axis1 = _util.normalize_axis(axis1, ndim, "trace")
    axis2 = _util.normalize_axis(axis2, ndim, "trace")
    if axis1 == axis2:
        raise AxisError(f"trace: axis1 and axis2 cannot be the same axis ({axis1})")
    a = _util.cast(a, np.dtype(dtype) if dtype is not None else _sum_dtype(_util.dtype_of(a)))
    diagonal = diagonal_last(a, int(offset), axis1, axis2)
    return reductions.reduce_sum(diagonal, axes=(ndim - 2,))


def _component(x, i: int):
    """``x[..., i]``: one static slice of the last axis, then a reshape drops it."""
    shape = shape_of(x)
    part = slicing.slice(x, start_indices=(0,) * (len(shape) - 1) + (i,),
                            limit_indices=shape[:-1] + (i + 1,))
    return reshape(part, shape[:-1])


def _stack_last(parts: list, shape: tuple):
    parts = [structural.broadcast_to(p, shape) for p in parts]
    parts = [reshape(p, shape + (1,)) for p in parts]
    return structural.concatenate(*parts, dimension=len(shape))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors) along the given axes (numpy.cross).

    Two 2-vectors give the scalar z component; a 2-vector with a 3-vector is
    treated as having z = 0. ``axis`` overrides ``axisa``, ``axisb`` and ``axisc``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.cross(np.array([1., 0., 0.]), np.array([0., 1., 0.]))
    array([0., 0., 1.])
    """
    a, b = _prepare("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a_shape, b_shape = shape_of(a), shape_of(b)
    if not a_shape or not b_shape:
        raise ShapeError(f"cross needs vectors, got shapes {a_shape} and {b_shape}")
    a = structural.moveaxis(a, _util.normalize_axis(axisa, len(a_shape), "cross (axisa)"), -1)
    b = structural.moveaxis(b, _util.normalize_axis(axisb, len(b_shape), "cross (axisb)"), -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ShapeError(f"cross: incompatible dimensions for cross product (dimension must "
                         f"be 2 or 3), got vectors of length {na} and {nb} (shapes "
                         f"{a_shape} and {b_shape})")
    shape = broadcast_shapes("cross", shape_of(a)[:-1], shape_of(b)[:-1])
    ax = [_component(a, i) for i in range(na)]
    bx = [_component(b, i) for i in range(nb)]
    mul, sub = ew.mul, ew.sub
    z = sub(mul(ax[0], bx[1]), mul(ax[1], bx[0]))
    if na == 2 and nb == 2:
        return structural.broadcast_to(z, shape)
    if na == 2:
        x, y = mul(ax[1], bx[2]), ew.neg(mul(ax[0], bx[2]))
    elif nb == 2:
        x, y = ew.neg(mul(ax[2], bx[1])), mul(ax[2], bx[0])
    else:
        x = sub(mul(ax[1], bx[2]), mul(ax[2], bx[1]))
        y = sub(mul(ax[2], bx[0]), mul(ax[0], bx[2]))
    result = _stack_last([x, y, z], shape)
    axisc = _util.normalize_axis(axisc, len(shape) + 1, "cross (axisc)")
    return structural.moveaxis(result, -1, axisc)


# ---------------------------------------------------------------------------
# convolve, correlate

_WINDOW_LIMIT = 1 << 22  # elements of one chunk of the sliding-window matrix
_MODES = ("valid", "same", "full")


def _as_1d(name: str, x):
    shape = shape_of(x)
    if len(shape) == 0:
        return reshape(x, (1,))
    if len(shape) != 1:
        raise ShapeError(f"{name} needs 1-D inputs, got shape {shape}")
    return x


def _correlate_longer(a, v, mode: str):
    """``correlate(a, v, mode)`` for ``len(a) >= len(v)``.

    With ``a`` zero-padded to ``a_pad`` (``length + m - 1`` long), output ``k`` is
    ``sum_j a_pad[k + j] * v[j]``; the mode chooses the padding and the length.
    """
    n, m = shape_of(a)[0], shape_of(v)[0]
    start, length = {"full": (0, n + m - 1), "same": ((m - 1) // 2, n),
                     "valid": (m - 1, n - m + 1)}[mode]
    pad_lo = m - 1 - start
    pad_hi = max(0, length + m - 1 - pad_lo - n)
    if pad_lo or pad_hi:
        a = slicing.pad(a, np.zeros((), _util.dtype_of(a)),
                           padding_config=((pad_lo, pad_hi, 0),))
    # Windows w[k, j] = a[k + j] contracted with v: one gather and one dot_general per
    # chunk of rows, chunks bounding the window matrix at _WINDOW_LIMIT elements. All
    # chunks share one index constant; a is exactly length + m - 1 long here.
    rows = max(1, min(length, _WINDOW_LIMIT // m))
    windows = np.arange(rows)[:, None] + np.arange(m)[None, :]
    outs = []
    for start in range(0, length, rows):
        r = min(rows, length - start)
        segment = a if r == length else slicing.slice(
            a, start_indices=(start,), limit_indices=(start + r + m - 1,))
        gathered = indexing.gather(segment, windows if r == rows else windows[:r], axis=0)
        outs.append(dot_general(gathered, v, dimension_numbers=(((1,), (0,)), ((), ()))))
    return outs[0] if len(outs) == 1 else structural.concatenate(*outs, dimension=0)


def _check_mode(name: str, mode) -> str:
    if mode not in _MODES:
        raise InvalidArgumentError(f"{name}: mode must be one of 'valid', 'same' or 'full', "
                                   f"got {mode!r}")
    return mode


def correlate(a, v, mode="valid"):
    """Cross-correlation of two 1-D sequences (numpy.correlate; reals, so no conjugate).

    ``out[k] = sum_n a[n + k] * conj(v[n])`` over the overlap chosen by ``mode``
    ('valid', 'same' or 'full'). If ``v`` is longer than ``a`` the roles swap
    and the result is reversed, as in numpy.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.correlate(np.array([1., 2., 3.]), np.array([0., 1., 0.5]), 'full')
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    mode = _check_mode("correlate", mode)
    a, v = _prepare("correlate", a, v)
    a, v = _as_1d("correlate", a), _as_1d("correlate", v)
    if shape_of(a)[0] == 0 or shape_of(v)[0] == 0:
        raise ShapeError(f"correlate: inputs cannot be empty (shapes {shape_of(a)} and "
                         f"{shape_of(v)})")
    (a, v), was_bool = bool_in([a, v])
    v = _conj_if_complex(v)
    if shape_of(a)[0] < shape_of(v)[0]:
        out = structural.rev(_correlate_longer(v, a, mode), dimensions=(0,))
    else:
        out = _correlate_longer(a, v, mode)
    return bool_out(out, was_bool)


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-D sequences (numpy.convolve).

    ``out[k] = sum_n a[n] * v[k - n]`` over the overlap chosen by ``mode``
    ('full', 'same' or 'valid'); the longer input plays ``a``'s role, as in numpy.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.convolve(np.array([1., 2., 3.]), np.array([0., 1., 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    mode = _check_mode("convolve", mode)
    a, v = _prepare("convolve", a, v)
    a, v = _as_1d("convolve", a), _as_1d("convolve", v)
    if shape_of(a)[0] == 0 or shape_of(v)[0] == 0:
        raise ShapeError(f"convolve: inputs cannot be empty (shapes {shape_of(a)} and "
                         f"{shape_of(v)})")
    if shape_of(v)[0] > shape_of(a)[0]:
        a, v = v, a
    (a, v), was_bool = bool_in([a, v])
    out = _correlate_longer(a, structural.rev(v, dimensions=(0,)), mode)
    return bool_out(out, was_bool)


__all__ = ["dot", "vdot", "inner", "outer", "matmul", "tensordot", "kron", "trace",
           "cross", "convolve", "correlate"]
