"""Basic linear algebra of funcdiff.numpy: products, einsum, trace, cross, convolution.

Every product is a contraction of labelled axes, so one helper,
``_contract_pair``, serves dot, vdot, inner, matmul, tensordot and einsum: it
gives each operand's axes labels, sums labels that only one operand has and
nobody needs, and maps the rest onto ONE ``dot_general`` (shared labels that
are kept become batch axes, shared labels that are not kept are contracted),
whose impl reaches BLAS. Products with nothing to contract are a broadcasting
``mul``. Size-1 axes that numpy would broadcast are squeezed away first, so
``matmul``'s broadcasting of leading dimensions never materialises a copy.

Diagonals (einsum's repeated labels, ``trace``) are strided slices of the two
axes flattened into one: the diagonal of an ``n x m`` block is every
``(m+1)``-th element. That is one reshape and one ``slice``, linear, batchable
and differentiable without index arrays. ``convolve``/``correlate`` gather
sliding windows and contract them with the kernel in one ``dot_general``
(in a few row chunks when the window matrix would be large).

Python scalars are converted like numpy converts them here (``np.asarray``),
so ``dot(float32_array, 2.0)`` is float64, as in numpy.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

from funcdiff.core import get_aval
from funcdiff.errors import (AxisError, DTypeError, FunctionalDiffError, InvalidArgumentError,
                             ShapeError)
from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import indexing, reductions, structural
from funcdiff.primitives.cards import broadcast_shapes
from funcdiff.primitives.dot import dot_general


class EinsumSubscriptError(FunctionalDiffError, ValueError):
    """einsum subscripts are malformed or disagree with the operands."""


# ---------------------------------------------------------------------------
# Shared helpers


def _shape(x) -> tuple[int, ...]:
    return x.shape  # arrays, numpy scalars and tracers (Python scalars are converted first)


def _prepare(name: str, *args: Any) -> list[Any]:
    """Arrays of one promoted dtype; Python scalars become strong 0-d arrays
    (numpy's products call ``asarray`` on them)."""
    dtype = getattr(args[0], "dtype", None)
    if (dtype is not None and dtype.kind in "biuf"  # fast path: arrays of one dtype
            and all(type(a) is np.ndarray and a.dtype == dtype for a in args)):
        return list(args)
    arrays = [_util.asarray(a, name) for a in args]
    return _util.promote(name, *arrays)


def _reshape(x, shape):
    shape = tuple(shape)
    return x if _shape(x) == shape else structural.reshape(x, new_sizes=shape)


def _transpose(x, perm):
    perm = tuple(perm)
    return x if perm == tuple(range(len(perm))) else structural.transpose(x, permutation=perm)


def _bool_in(arrays: list) -> tuple[list, bool]:
    """Boolean products are computed in int64 and compared with 0 afterwards
    (numpy's boolean dot is an OR of ANDs); dot_general multiplies numbers."""
    if arrays and _util.dtype_of(arrays[0]) == np.bool_:
        return [ew.convert_element_type(a, new_dtype=np.dtype(np.int64)) for a in arrays], True
    return arrays, False


def _bool_out(x, was_bool: bool):
    return ew.ne(x, np.zeros((), np.int64)) if was_bool else x


def _sum_labels(x, labels: tuple, drop) -> tuple[Any, tuple]:
    axes = tuple(i for i, l in enumerate(labels) if l in drop)
    if not axes:
        return x, labels
    return reductions.reduce_sum(x, axes=axes), tuple(l for l in labels if l not in drop)


def _squeeze_labels(x, labels: tuple, sizes: dict) -> tuple[Any, tuple]:
    """Drop size-1 axes whose label is larger elsewhere: numpy broadcasts them,
    and a size-1 axis contributes one factor, so dropping it is exact."""
    shape = _shape(x)
    keep = [i for i, l in enumerate(labels) if not (shape[i] == 1 and sizes[l] != 1)]
    if len(keep) == len(labels):
        return x, labels
    return (_reshape(x, [shape[i] for i in keep]), tuple(labels[i] for i in keep))


def _label_sizes(name: str, pairs) -> dict:
    """Size of each label over (shape, labels) pairs; size 1 broadcasts."""
    sizes: dict = {}
    for shape, labels in pairs:
        for size, label in zip(shape, labels):
            old = sizes.get(label, 1)
            if size != 1 and old != 1 and size != old:
                shapes = " and ".join(str(tuple(s)) for s, _ in pairs)
                raise ShapeError(
                    f"{name}: operands of shapes {shapes} disagree on the size of a "
                    f"contracted or aligned axis ({old} vs {size}). Those axes must have "
                    "equal sizes (or size 1 to broadcast).")
            if size != 1 or label not in sizes:
                sizes[label] = size if size != 1 else old
    return sizes


def _contract_pair(x, x_labels: tuple, y, y_labels: tuple, keep: Sequence) -> tuple[Any, tuple]:
    """The product of ``x`` and ``y`` whose axes carry the given (distinct) labels,
    summed over every label not in ``keep``.

    Returns the result and its axis labels: batch labels (in ``keep`` order),
    then ``x``'s free labels, then ``y``'s, as ``dot_general`` lays them out.
    """
    keep_pos = {l: i for i, l in enumerate(keep)}
    sizes = _label_sizes("contraction", [(_shape(x), x_labels), (_shape(y), y_labels)])
    x, x_labels = _squeeze_labels(x, x_labels, sizes)
    y, y_labels = _squeeze_labels(y, y_labels, sizes)
    x_set, y_set = set(x_labels), set(y_labels)
    x, x_labels = _sum_labels(x, x_labels, {l for l in x_labels
                                             if l not in y_set and l not in keep_pos})
    y, y_labels = _sum_labels(y, y_labels, {l for l in y_labels
                                             if l not in x_set and l not in keep_pos})
    shared = [l for l in x_labels if l in y_set]
    batch = sorted((l for l in shared if l in keep_pos), key=keep_pos.get)
    contract = [l for l in shared if l not in keep_pos]
    x_free = [l for l in x_labels if l not in y_set]
    y_free = [l for l in y_labels if l not in x_set]
    out_labels = tuple(batch + x_free + y_free)
    if not contract:  # nothing to sum: a broadcasting elementwise product
        x_shape, y_shape = _shape(x), _shape(y)
        x = _transpose(x, [x_labels.index(l) for l in batch + x_free])
        x = _reshape(x, [x_shape[x_labels.index(l)] for l in batch + x_free] + [1] * len(y_free))
        y = _transpose(y, [y_labels.index(l) for l in batch + y_free])
        y = _reshape(y, [y_shape[y_labels.index(l)] for l in batch] + [1] * len(x_free)
                     + [y_shape[y_labels.index(l)] for l in y_free])
        return ew.mul(x, y), out_labels
    numbers = ((tuple(x_labels.index(l) for l in contract),
                tuple(y_labels.index(l) for l in contract)),
               (tuple(x_labels.index(l) for l in batch),
                tuple(y_labels.index(l) for l in batch)))
    return dot_general(x, y, dimension_numbers=numbers), out_labels


def _arrange(x, labels: tuple, out_labels: Sequence, out_shape: Sequence[int]):
    """``x`` (axes labelled ``labels``, a subset of ``out_labels``) transposed into
    ``out_labels`` order and broadcast to ``out_shape`` (labels it lacks)."""
    present = [l for l in out_labels if l in labels]
    x = _transpose(x, [labels.index(l) for l in present])
    out_shape = tuple(out_shape)
    if len(present) == len(out_labels):
        return _reshape(x, out_shape)
    x_shape = _shape(x)
    dims = tuple(i for i, l in enumerate(out_labels) if l in labels)
    if x_shape == tuple(out_shape[d] for d in dims):
        return structural.broadcast_in_dim(x, shape=out_shape, broadcast_dimensions=dims)
    x = _reshape(x, [x_shape[present.index(l)] if l in labels else 1 for l in out_labels])
    return structural.broadcast_to(x, out_shape)


def _diagonal_last(x, offset: int, axis1: int, axis2: int):
    """numpy.diagonal: the (offset) diagonal of axes ``axis1``/``axis2``, as the last axis.

    The two axes are moved to the end and flattened; the diagonal is then every
    ``(m+1)``-th element starting at the offset: one strided slice.
    """
    shape = _shape(x)
    ndim = len(shape)
    rest = [i for i in range(ndim) if i not in (axis1, axis2)]
    x = _transpose(x, rest + [axis1, axis2])
    n, m = shape[axis1], shape[axis2]
    lead = [shape[i] for i in rest]
    x = _reshape(x, lead + [n * m])
    if offset >= 0:
        start, count = offset, max(0, min(n, m - offset))
    else:
        start, count = -offset * m, max(0, min(n + offset, m))
    if count == 0:
        start, limit = 0, 0
    else:
        limit = start + (count - 1) * (m + 1) + 1
    starts = (0,) * len(lead) + (start,)
    limits = tuple(lead) + (limit,)
    strides = (1,) * len(lead) + (m + 1,)
    return structural.slice(x, start_indices=starts, limit_indices=limits, strides=strides)


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
    _util.reject("dot", out=out)
    a, b = _prepare("dot", a, b)
    (a, b), was_bool = _bool_in([a, b])
    a_shape, b_shape = _shape(a), _shape(b)
    if not a_shape or not b_shape:
        return _bool_out(ew.mul(a, b), was_bool)
    b_axis = max(len(b_shape) - 2, 0)
    if a_shape[-1] != b_shape[b_axis]:
        raise ShapeError(
            f"dot: shapes {a_shape} and {b_shape} are not aligned: dimension "
            f"{len(a_shape) - 1} of the first ({a_shape[-1]}) != dimension {b_axis} of the "
            f"second ({b_shape[b_axis]}).")
    out = dot_general(a, b, dimension_numbers=(((len(a_shape) - 1,), (b_axis,)), ((), ())))
    return _bool_out(out, was_bool)


def vdot(a, b):
    """Dot product of two arrays flattened to vectors (numpy.vdot; reals need no conjugate).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.vdot(np.array([[1., 2.], [3., 4.]]), np.array([[1., 1.], [1., 1.]])))
    10.0
    """
    a, b = _prepare("vdot", a, b)
    if get_aval(a).size != get_aval(b).size:
        raise ShapeError(f"vdot needs inputs with the same number of elements, but got shapes "
                         f"{_shape(a)} and {_shape(b)}.")
    (a, b), was_bool = _bool_in([a, b])
    size = get_aval(a).size
    a, b = _reshape(a, (size,)), _reshape(b, (size,))
    return _bool_out(dot_general(a, b, dimension_numbers=(((0,), (0,)), ((), ()))), was_bool)


def inner(a, b):
    """Inner product over the last axes of ``a`` and ``b`` (numpy.inner).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.inner(np.array([[1., 2.], [3., 4.]]), np.array([1., 10.]))
    array([21., 43.])
    """
    a, b = _prepare("inner", a, b)
    (a, b), was_bool = _bool_in([a, b])
    a_shape, b_shape = _shape(a), _shape(b)
    if not a_shape or not b_shape:
        return _bool_out(ew.mul(a, b), was_bool)
    if a_shape[-1] != b_shape[-1]:
        raise ShapeError(f"inner: shapes {a_shape} and {b_shape} differ in their last "
                         f"dimension ({a_shape[-1]} vs {b_shape[-1]}).")
    numbers = (((len(a_shape) - 1,), (len(b_shape) - 1,)), ((), ()))
    return _bool_out(dot_general(a, b, dimension_numbers=numbers), was_bool)


def outer(a, b, out=None):
    """Outer product of two arrays flattened to vectors (numpy.outer).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.outer(np.array([1., 2.]), np.array([1., 10., 100.]))
    array([[  1.,  10., 100.],
           [  2.,  20., 200.]])
    """
    _util.reject("outer", out=out)
    a, b = _prepare("outer", a, b)
    a = _reshape(a, (get_aval(a).size, 1))
    b = _reshape(b, (get_aval(b).size,))
    if _util.dtype_of(a) == np.bool_:
        return ew.and_(a, b)
    return ew.mul(a, b)


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
    _util.reject("matmul", out=out)
    a, b = _prepare("matmul", a, b)
    a_shape, b_shape = _shape(a), _shape(b)
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
    (a, b), was_bool = _bool_in([a, b])
    if len(b_shape) <= 2:  # a's free axes, then b's: exactly dot_general's layout
        numbers = ((a_k,), (b_k,)), ((), ())
        return _bool_out(dot_general(a, b, dimension_numbers=numbers), was_bool)
    if len(a_shape) == len(b_shape) and a_shape[:-2] == b_shape[:-2]:  # aligned batches
        batch = tuple(range(len(a_shape) - 2))
        numbers = ((a_k,), (b_k,)), (batch, batch)
        return _bool_out(dot_general(a, b, dimension_numbers=numbers), was_bool)
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
    result, labels = _contract_pair(a, a_labels, b, b_labels, out_labels)
    return _bool_out(_arrange(result, labels, out_labels, out_shape), was_bool)


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
    a_shape, b_shape = _shape(a), _shape(b)
    a_axes, b_axes = _tensordot_axes(axes, len(a_shape), len(b_shape))
    for i, j in zip(a_axes, b_axes):
        if a_shape[i] != b_shape[j]:
            raise ShapeError(f"tensordot: shape-mismatch for sum: axis {i} of {a_shape} has "
                             f"size {a_shape[i]} but axis {j} of {b_shape} has size {b_shape[j]}")
    (a, b), was_bool = _bool_in([a, b])
    a_labels = tuple(("a", i) if i not in a_axes else ("c", a_axes.index(i))
                     for i in range(len(a_shape)))
    b_labels = tuple(("b", j) if j not in b_axes else ("c", b_axes.index(j))
                     for j in range(len(b_shape)))
    out_labels = ([l for l in a_labels if l[0] == "a"] + [l for l in b_labels if l[0] == "b"])
    out_shape = ([a_shape[i] for i in range(len(a_shape)) if i not in a_axes]
                 + [b_shape[j] for j in range(len(b_shape)) if j not in b_axes])
    if not a_axes:  # an outer product
        result, labels = _contract_pair(a, a_labels, b, b_labels, out_labels)
        return _bool_out(_arrange(result, labels, out_labels, out_shape), was_bool)
    numbers = ((a_axes, b_axes), ((), ()))
    return _bool_out(dot_general(a, b, dimension_numbers=numbers), was_bool)


# ---------------------------------------------------------------------------
# einsum

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _sublist_to_term(sublist) -> str:
    term = []
    for s in sublist:
        if s is Ellipsis:
            term.append("...")
        elif isinstance(s, (int, np.integer)) and 0 <= s < 52:
            term.append(_LETTERS[int(s)])
        else:
            raise EinsumSubscriptError(
                f"einsum: subscript lists may hold ints in [0, 52) and Ellipsis, got {s!r}")
    return "".join(term)


def _einsum_operands(args) -> tuple[str, list]:
    """Subscripts and operands from either calling convention of numpy.einsum."""
    if not args:
        raise EinsumSubscriptError("einsum needs subscripts and at least one operand")
    if isinstance(args[0], str):
        return args[0], list(args[1:])
    rest = list(args)
    out = _sublist_to_term(rest.pop()) if len(rest) % 2 == 1 else None  # trailing output
    operands, terms = rest[0::2], [_sublist_to_term(s) for s in rest[1::2]]
    subscripts = ",".join(terms) + ("->" + out if out is not None else "")
    return subscripts, operands


def _parse_term(term: str, ndim: int, where: str) -> tuple[list, int]:
    """Labels (ord of letters; Ellipsis placeholder) of one input term and its
    number of ellipsis axes."""
    if term.count("...") > 1 or term.replace("...", "").count(".") > 0:
        raise EinsumSubscriptError(f"einsum: {where} '{term}' has a malformed ellipsis")
    letters = term.replace("...", "")
    for c in letters:
        if c not in _LETTERS:
            raise EinsumSubscriptError(
                f"einsum: {where} '{term}' contains {c!r}; subscripts are letters a-z, A-Z "
                "and '...'")
    if "..." in term:
        n_ellipsis = ndim - len(letters)
        if n_ellipsis < 0:
            raise EinsumSubscriptError(
                f"einsum: {where} '{term}' has more subscripts than the operand has "
                f"dimensions ({ndim})")
        before, after = term.split("...")
        labels = [ord(c) for c in before] + [Ellipsis] + [ord(c) for c in after]
        return labels, n_ellipsis
    if len(letters) != ndim:
        raise EinsumSubscriptError(
            f"einsum: {where} '{term}' has {len(letters)} subscripts but the operand has "
            f"{ndim} dimensions")
    return [ord(c) for c in letters], 0


def _expand_ellipsis(labels: list, n: int) -> tuple:
    """Replace the Ellipsis placeholder by ``n`` labels -n..-1 (right-aligned, so
    ellipsis axes of different operands broadcast against each other)."""
    out = []
    for l in labels:
        out.extend(range(-n, 0) if l is Ellipsis else [l])
    return tuple(out)


@functools.lru_cache(maxsize=256)
def _parse_einsum(subscripts: str, ndims: tuple[int, ...]) -> tuple[list[tuple], tuple]:
    subscripts = subscripts.replace(" ", "")
    if subscripts.count("->") > 1:
        raise EinsumSubscriptError(f"einsum: subscripts {subscripts!r} contain '->' twice")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise EinsumSubscriptError(
            f"einsum: subscripts {subscripts!r} describe {len(terms)} operands but "
            f"{len(ndims)} were given")
    parsed = [_parse_term(t, n, f"operand {i} subscripts") for i, (t, n) in
              enumerate(zip(terms, ndims))]
    n_ellipsis = max((n for _, n in parsed), default=0)
    in_labels = [_expand_ellipsis(labels, n) for labels, n in parsed]
    counts: dict = {}
    for labels in in_labels:
        for l in labels:
            counts[l] = counts.get(l, 0) + 1
    if not arrow:  # implicit mode: ellipsis axes, then letters seen once, sorted
        out = tuple(range(-n_ellipsis, 0)) + tuple(
            sorted(l for l, c in counts.items() if c == 1 and l > 0))
        return tuple(in_labels), out
    if "..." in output:
        out_raw, _ = _parse_term(output, len(output.replace("...", "")) + n_ellipsis,
                                 "output subscripts")
        out = _expand_ellipsis(out_raw, n_ellipsis)
    else:
        out, _ = _parse_term(output, len(output), "output subscripts")
        out = tuple(out)
        if n_ellipsis and any(l < 0 for l in counts):
            raise EinsumSubscriptError(
                "einsum: the operands have '...' axes but the output subscripts "
                f"{output!r} have no '...' to place them")
    if len(set(out)) != len(out):
        raise EinsumSubscriptError(f"einsum: output subscripts {output!r} repeat a label")
    for l in out:
        if l not in counts:
            raise EinsumSubscriptError(
                f"einsum: output subscript {chr(l)!r} does not appear in any operand")
    return tuple(in_labels), out


def _take_diagonals(x, labels: tuple) -> tuple[Any, tuple]:
    """Collapse repeated labels of one operand onto their diagonal (``ii`` -> ``i``)."""
    while len(set(labels)) != len(labels):
        p = next(i for i, l in enumerate(labels) if labels.index(l) != i)
        q = labels.index(labels[p])  # first occurrence: q < p
        shape = _shape(x)
        if shape[p] != shape[q]:
            raise ShapeError(f"einsum: the repeated subscript {chr(labels[p])!r} labels axes of "
                             f"sizes {shape[q]} and {shape[p]} in an operand of shape {shape}; "
                             "a diagonal needs equal sizes")
        x = _diagonal_last(x, 0, q, p)
        labels = tuple(l for i, l in enumerate(labels) if i not in (p, q)) + (labels[p],)
    return x, labels


def _pick_pair(ops: list, out_labels: tuple, sizes: dict) -> tuple[int, int]:
    """Greedy order: the pair whose product is smallest relative to its inputs,
    preferring pairs that share a label (as opt_einsum's greedy path does)."""
    if len(ops) == 2:
        return 0, 1

    def size(labels):
        return math.prod(sizes[l] for l in labels)

    best = None
    for i in range(len(ops)):
        for j in range(i + 1, len(ops)):
            li, lj = set(ops[i][1]), set(ops[j][1])
            others = set(out_labels).union(*[set(o[1]) for k, o in enumerate(ops)
                                             if k not in (i, j)])
            key = (not (li & lj), size((li | lj) & others) - size(li) - size(lj), i, j)
            if best is None or key < best:
                best = key
    return best[2], best[3]


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """Einstein summation (numpy.einsum).

    Supports explicit (``'ij,jk->ik'``) and implicit (``'ij,jk'``) output,
    ``'...'`` with broadcasting, repeated subscripts in one operand (diagonals
    and traces, ``'ii->i'``, ``'ii'``), subscripts summed within one operand,
    any number of operands (contracted pairwise in a greedy order, each pair one
    ``dot_general``) and numpy's interleaved form ``einsum(x, [0, 1], y, [1, 2])``.
    ``optimize`` is accepted and ignored; ``order`` is irrelevant (funcdiff
    returns fresh arrays); ``casting`` governs ``dtype=`` as in numpy.

    Args:
      *operands: the subscripts string followed by the arrays (or the
        interleaved form).
      dtype: compute and return in this dtype.
      casting: how operands may be cast to ``dtype`` (numpy's rules; default 'safe').

    Returns:
      The contracted array.

    Raises:
      EinsumSubscriptError: malformed subscripts or a count mismatch.
      DTypeError: an operand that ``casting`` does not allow to become ``dtype``.
      ShapeError: axes with one label but different sizes.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.einsum('ij,j->i', np.array([[1., 2.], [3., 4.]]), np.array([1., 1.]))
    array([3., 7.])
    >>> float(fnp.einsum('ii', np.array([[1., 2.], [3., 4.]])))
    5.0
    """
    _util.reject("einsum", out=out)
    subscripts, arrays = _einsum_operands(operands)
    arrays = [_util.asarray(a, "einsum") for a in arrays]
    if dtype is not None:
        dtype = np.dtype(dtype)
        for a in arrays:
            if not np.can_cast(_util.dtype_of(a), dtype, casting=casting):
                raise DTypeError(f"einsum cannot cast an operand of dtype {_util.dtype_of(a)} "
                                 f"to dtype={dtype} under casting={casting!r}; pass "
                                 "casting='same_kind' (or 'unsafe') to allow it.")
        arrays = [_util.cast(a, dtype) for a in arrays]
    else:
        arrays = _util.promote("einsum", *arrays)
    in_labels, out_labels = _parse_einsum(subscripts, tuple(len(_shape(a)) for a in arrays))
    sizes = _label_sizes(f"einsum {subscripts!r}",
                         [(_shape(a), l) for a, l in zip(arrays, in_labels)])
    out_shape = tuple(sizes[l] for l in out_labels)
    arrays, was_bool = _bool_in(arrays)
    ops = []
    for x, labels in zip(arrays, in_labels):
        x, labels = _take_diagonals(x, labels)
        ops.append((x, labels))
    # Squeeze broadcast size-1 axes, then sum labels nobody else needs.
    ops = [_squeeze_labels(x, labels, sizes) for x, labels in ops]
    for k, (x, labels) in enumerate(ops):
        elsewhere = set(out_labels).union(*[set(o[1]) for i, o in enumerate(ops) if i != k])
        ops[k] = _sum_labels(x, labels, {l for l in labels if l not in elsewhere})
    while len(ops) > 1:
        i, j = _pick_pair(ops, out_labels, sizes)
        rest = [o for k, o in enumerate(ops) if k not in (i, j)]
        keep = list(out_labels) + [l for o in rest for l in o[1] if l not in out_labels]
        product = _contract_pair(ops[i][0], ops[i][1], ops[j][0], ops[j][1], keep)
        ops = rest + [product]
    x, labels = ops[0]
    x, labels = _sum_labels(x, labels, {l for l in labels if l not in out_labels})
    return _bool_out(_arrange(x, labels, out_labels, out_shape), was_bool)


# ---------------------------------------------------------------------------
# kron, trace, cross


def kron(a, b):
    """Kronecker product (numpy.kron): blocks ``a[i, j] * b``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.kron(np.array([1., 2.]), np.array([1., 10.]))
    array([ 1., 10.,  2., 20.])
    """
    a, b = _prepare("kron", a, b)
    a_shape, b_shape = _shape(a), _shape(b)
    ndim = max(len(a_shape), len(b_shape))
    a_shape = (1,) * (ndim - len(a_shape)) + a_shape
    b_shape = (1,) * (ndim - len(b_shape)) + b_shape
    a = _reshape(a, [d for s in a_shape for d in (s, 1)])
    b = _reshape(b, [d for s in b_shape for d in (1, s)])
    product = ew.and_(a, b) if _util.dtype_of(a) == np.bool_ else ew.mul(a, b)
    return _reshape(product, [p * q for p, q in zip(a_shape, b_shape)])


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal (numpy.trace), over axes ``axis1``/``axis2`` at ``offset``.

    Integer inputs sum in numpy's accumulator dtype (int64 for small ints).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.trace(np.array([[1., 2.], [3., 4.]])))
    5.0
    >>> fnp.trace(np.arange(8.).reshape(2, 2, 2), axis1=1, axis2=2)
    array([ 3., 11.])
    """
    _util.reject("trace", out=out)
    a = _util.asarray(a, "trace")
    ndim = len(_shape(a))
    if ndim < 2:
        raise ShapeError(f"trace needs an array of at least 2 dimensions, got shape {_shape(a)}")
    axis1 = _util.normalize_axis(axis1, ndim, "trace")
    axis2 = _util.normalize_axis(axis2, ndim, "trace")
    if axis1 == axis2:
        raise AxisError(f"trace: axis1 and axis2 cannot be the same axis ({axis1})")
    a = _util.cast(a, np.dtype(dtype) if dtype is not None else _sum_dtype(_util.dtype_of(a)))
    diagonal = _diagonal_last(a, int(offset), axis1, axis2)
    return reductions.reduce_sum(diagonal, axes=(ndim - 2,))


def _component(x, i: int):
    """``x[..., i]``: one static slice of the last axis, then a reshape drops it."""
    shape = _shape(x)
    part = structural.slice(x, start_indices=(0,) * (len(shape) - 1) + (i,),
                            limit_indices=shape[:-1] + (i + 1,))
    return _reshape(part, shape[:-1])


def _stack_last(parts: list, shape: tuple):
    parts = [structural.broadcast_to(p, shape) for p in parts]
    parts = [_reshape(p, shape + (1,)) for p in parts]
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
    a_shape, b_shape = _shape(a), _shape(b)
    if not a_shape or not b_shape:
        raise ShapeError(f"cross needs vectors, got shapes {a_shape} and {b_shape}")
    a = structural.moveaxis(a, _util.normalize_axis(axisa, len(a_shape), "cross (axisa)"), -1)
    b = structural.moveaxis(b, _util.normalize_axis(axisb, len(b_shape), "cross (axisb)"), -1)
    na, nb = _shape(a)[-1], _shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ShapeError(f"cross: incompatible dimensions for cross product (dimension must "
                         f"be 2 or 3), got vectors of length {na} and {nb} (shapes "
                         f"{a_shape} and {b_shape})")
    shape = broadcast_shapes("cross", _shape(a)[:-1], _shape(b)[:-1])
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
    shape = _shape(x)
    if len(shape) == 0:
        return _reshape(x, (1,))
    if len(shape) != 1:
        raise ShapeError(f"{name} needs 1-D inputs, got shape {shape}")
    return x


def _correlate_longer(a, v, mode: str):
    """``correlate(a, v, mode)`` for ``len(a) >= len(v)``.

    With ``a`` zero-padded to ``a_pad`` (``length + m - 1`` long), output ``k`` is
    ``sum_j a_pad[k + j] * v[j]``; the mode chooses the padding and the length.
    """
    n, m = _shape(a)[0], _shape(v)[0]
    start, length = {"full": (0, n + m - 1), "same": ((m - 1) // 2, n),
                     "valid": (m - 1, n - m + 1)}[mode]
    pad_lo = m - 1 - start
    pad_hi = max(0, length + m - 1 - pad_lo - n)
    if pad_lo or pad_hi:
        a = structural.pad(a, np.zeros((), _util.dtype_of(a)),
                           padding_config=((pad_lo, pad_hi, 0),))
    # Windows w[k, j] = a[k + j] contracted with v: one gather and one dot_general per
    # chunk of rows, chunks bounding the window matrix at _WINDOW_LIMIT elements. All
    # chunks share one index constant; a is exactly length + m - 1 long here.
    rows = max(1, min(length, _WINDOW_LIMIT // m))
    windows = np.arange(rows)[:, None] + np.arange(m)[None, :]
    outs = []
    for start in range(0, length, rows):
        r = min(rows, length - start)
        segment = a if r == length else structural.slice(
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

    ``out[k] = sum_n a[n + k] * v[n]`` over the overlap chosen by ``mode``
    ('valid', 'same' or 'full'). If ``v`` is longer than ``a`` the roles swap
    and the result is reversed, as in numpy.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.correlate(np.array([1., 2., 3.]), np.array([0., 1., 0.5]), 'full')
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    mode = _check_mode("correlate", mode)
    a, v = _prepare("correlate", a, v)
    a, v = _as_1d("correlate", a), _as_1d("correlate", v)
    if _shape(a)[0] == 0 or _shape(v)[0] == 0:
        raise ShapeError(f"correlate: inputs cannot be empty (shapes {_shape(a)} and {_shape(v)})")
    (a, v), was_bool = _bool_in([a, v])
    if _shape(a)[0] < _shape(v)[0]:
        out = structural.rev(_correlate_longer(v, a, mode), dimensions=(0,))
    else:
        out = _correlate_longer(a, v, mode)
    return _bool_out(out, was_bool)


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
    if _shape(a)[0] == 0 or _shape(v)[0] == 0:
        raise ShapeError(f"convolve: inputs cannot be empty (shapes {_shape(a)} and {_shape(v)})")
    if _shape(v)[0] > _shape(a)[0]:
        a, v = v, a
    (a, v), was_bool = _bool_in([a, v])
    out = _correlate_longer(a, structural.rev(v, dimensions=(0,)), mode)
    return _bool_out(out, was_bool)


__all__ = ["dot", "vdot", "inner", "outer", "matmul", "tensordot", "einsum", "kron", "trace",
           "cross", "convolve", "correlate"]
