"""fd.lax's operations under JAX's names and signatures: the primitives, strictly typed.

Ports of JAX programs call ``lax.add``, ``lax.dot_general``, ``lax.slice`` and
friends. These are funcdiff's primitives with JAX's positional signatures
and JAX's strictness:

- Elementwise operations neither broadcast nor promote: array operands share
  one shape and one dtype (a Python scalar takes the other operand's dtype),
  else a funcdiff error points to the funcdiff.numpy function, which does both.
- ``div`` of integers rounds toward zero and ``rem`` takes the dividend's
  sign, as C and lax do (numpy's ``//`` and ``%`` round down).
- ``top_k`` gives the k largest along the last axis, the earlier index first
  among ties, with int32 indices; ``sort`` sorts one array or several by
  their first ``num_keys``; ``associative_scan`` is a parallel prefix of
  ``log2(n)`` steps of ``fn`` on shifted slices.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from funcdiff import dtypes
from funcdiff.core import get_aval
from funcdiff.errors import DTypeError, InvalidArgumentError, ShapeError
from funcdiff.primitives import (convolution, cumulative, elementwise as el, reductions, slicing,
                                 sorting, structural, windowed)
from funcdiff.primitives.convolution import (conv, conv_dimension_numbers,  # noqa: F401
                                             conv_general_dilated, conv_with_general_padding)
from funcdiff.primitives.dot import dot_general as _dot_general
from funcdiff.primitives.dot import dot as _dot
from funcdiff.tree_util import tree_flatten, tree_unflatten

_SCALARS = (bool, int, float, complex)


def _operands(name: str, *xs: Any) -> list:
    """``xs`` checked for one shape and dtype; Python scalars take the arrays' dtype."""
    arrays = [x for x in xs if type(x) not in _SCALARS]
    if not arrays:
        return [np.asarray(x) for x in xs]
    avals = [get_aval(x) for x in arrays]
    first = avals[0]
    for a in avals[1:]:
        if a.shape != first.shape:
            raise ShapeError(
                f"lax.{name} needs operands of one shape (lax does not broadcast), got "
                f"{', '.join(v.str_short() for v in avals)}. Broadcast first "
                f"(lax.broadcast_in_dim), or use funcdiff.numpy.{_NUMPY.get(name, name)}, "
                "which broadcasts.")
        if a.dtype != first.dtype:
            raise DTypeError(
                f"lax.{name} needs operands of one dtype (lax does not promote), got "
                f"{', '.join(v.str_short() for v in avals)}. Cast first "
                f"(lax.convert_element_type), or use funcdiff.numpy.{_NUMPY.get(name, name)}, "
                "which promotes.")
    return [np.asarray(x, first.dtype) if type(x) in _SCALARS else x for x in xs]


_NUMPY = {"sub": "subtract", "mul": "multiply", "div": "divide", "neg": "negative",
          "max": "maximum", "min": "minimum"}


def _unary(prim_op: Callable, name: str) -> Callable:
    def op(x, /):
        (x,) = _operands(name, x)
        return prim_op(x)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``lax.{name}``: elementwise, on one array (JAX's signature)."
    return op


def _binary(prim_op: Callable, name: str) -> Callable:
    def op(x, y, /):
        x, y = _operands(name, x, y)
        return prim_op(x, y)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``lax.{name}``: elementwise on operands of one shape and dtype (no "
                  "broadcasting or promotion, as in JAX).")
    return op


add, sub, mul = _binary(el.add, "add"), _binary(el.sub, "sub"), _binary(el.mul, "mul")
max, min = _binary(el.max, "max"), _binary(el.min, "min")  # noqa: A001  (JAX's names)
neg, sin, cos = _unary(el.neg, "neg"), _unary(el.sin, "sin"), _unary(el.cos, "cos")
exp, log, tanh = _unary(el.exp, "exp"), _unary(el.log, "log"), _unary(el.tanh, "tanh")


div = _binary(el.div, "div")  # integers: rounded toward zero, as in C and lax
rem = _binary(el.rem, "rem")  # the sign of the dividend (numpy.fmod), as in C and lax


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """``lax.dot_general``: contraction over ``((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch))``; ``precision`` is accepted and ignored (numpy's is
    exact), ``preferred_element_type`` casts the result.

    >>> dot_general(np.ones((2, 3)), np.ones((3, 4)), (((1,), (0,)), ((), ()))).shape
    (2, 4)
    """
    out = _dot_general(lhs, rhs, dimension_numbers=dimension_numbers)
    return _cast(out, preferred_element_type)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """``lax.dot``: vector and matrix products (``lhs @ rhs`` for ranks 1 and 2).

    >>> float(dot(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
    11.0
    """
    return _cast(_dot(lhs, rhs), preferred_element_type)


def _cast(x: Any, dtype: Any) -> Any:
    if dtype is None or get_aval(x).dtype == np.dtype(dtype):
        return x
    return el.convert_element_type(x, new_dtype=dtypes.check_dtype(dtype, allow_complex=True))


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """``lax.broadcast_in_dim``: ``operand`` broadcast to ``shape``, its axis ``i``
    becoming axis ``broadcast_dimensions[i]``.

    >>> broadcast_in_dim(np.array([1.0, 2.0]), (3, 2), (1,)).shape
    (3, 2)
    """
    return structural.broadcast_in_dim(operand, shape=tuple(shape),
                                       broadcast_dimensions=tuple(broadcast_dimensions))


def reshape(operand, new_sizes, dimensions=None):
    """``lax.reshape``: row-major reshape, after permuting axes by ``dimensions``.

    >>> reshape(np.arange(6.0), (2, 3)).shape
    (2, 3)
    """
    if dimensions is not None:
        operand = transpose(operand, dimensions)
    return structural.reshape(operand, new_sizes=tuple(new_sizes))


def transpose(operand, permutation):
    """``lax.transpose``: axes permuted.

    >>> transpose(np.ones((2, 3)), (1, 0)).shape
    (3, 2)
    """
    return structural.transpose(operand, permutation=tuple(permutation))


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001  (JAX's name)
    """``lax.slice``: the static slice from ``start_indices`` to ``limit_indices``.

    >>> slice(np.arange(10.0), (2,), (8,), (3,))
    array([2., 5.])
    """
    return slicing.slice(operand, start_indices=tuple(start_indices),
                         limit_indices=tuple(limit_indices),
                         strides=None if strides is None else tuple(strides))


def pad(operand, padding_value, padding_config):
    """``lax.pad``: ``(low, high, interior)`` padding per axis (negative low/high crop).

    >>> pad(np.array([1.0, 2.0]), 0.0, [(1, 2, 1)])
    array([0., 1., 0., 2., 0., 0.])
    """
    return slicing.pad(operand, padding_value,
                       padding_config=tuple(tuple(c) for c in padding_config))


def concatenate(operands, dimension):
    """``lax.concatenate``: the operands joined along ``dimension``.

    >>> concatenate([np.ones(2), np.zeros(1)], 0)
    array([1., 1., 0.])
    """
    return structural.concatenate(*operands, dimension=dimension)


def reduce_sum(operand, axes):
    """``lax.reduce_sum``: the sum over ``axes``.

    >>> reduce_sum(np.ones((2, 3)), (1,))
    array([3., 3.])
    """
    return reductions.reduce_sum(operand, axes=tuple(sorted(axes)))


def reduce_max(operand, axes):
    """``lax.reduce_max``: the maximum over ``axes`` (ties share the derivative).

    >>> reduce_max(np.array([[1.0, 5.0], [7.0, 2.0]]), (0,))
    array([7., 5.])
    """
    return reductions.reduce_max(operand, axes=tuple(sorted(axes)))


def cumsum(operand, axis=0, reverse=False):
    """``lax.cumsum``: the running sum along ``axis`` (from the end if ``reverse``).

    >>> cumsum(np.array([1.0, 2.0, 3.0]), reverse=True)
    array([6., 5., 3.])
    """
    return cumulative.cumsum(operand, axis=axis % get_aval(operand).ndim, reverse=reverse)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """``lax.sort``: one array sorted, or a sequence sorted together by the first
    ``num_keys`` (ascending, stable, NaN last).

    >>> sort([np.array([2.0, 1.0]), np.array([10, 20])])[1]
    array([20, 10])
    """
    if isinstance(operand, (tuple, list)):
        return type(operand)(sorting.sort_together(*operand, dimension=dimension,
                                                   num_keys=num_keys))
    return sorting.sort_together(operand, dimension=dimension, num_keys=1)[0]


def sort_key_val(keys, values, dimension=-1):
    """``lax.sort_key_val``: ``keys`` sorted, and ``values`` permuted with them.

    >>> sort_key_val(np.array([3.0, 1.0, 2.0]), np.array([30, 10, 20]))[1]
    array([10, 20, 30])
    """
    k, v = sorting.sort_together(keys, values, dimension=dimension, num_keys=1)
    return k, v


def top_k(operand, k):
    """``lax.top_k``: the ``k`` largest entries along the last axis, largest first
    (the earlier index first among equal values), and their int32 indices.

    >>> values, indices = top_k(np.array([1.0, 4.0, 2.0, 4.0]), 2)
    >>> values, indices
    (array([4., 4.]), array([1, 3], dtype=int32))
    """
    aval = get_aval(operand)
    if aval.ndim == 0 or not 0 <= k <= aval.shape[-1]:
        raise InvalidArgumentError(
            f"lax.top_k needs 0 <= k <= the size of the last axis, got k={k} for "
            f"{aval.str_short()}")
    n = aval.shape[-1]
    position = structural.broadcast_in_dim(np.arange(n, dtype=np.int32), shape=aval.shape,
                                           broadcast_dimensions=(aval.ndim - 1,))
    # descending by value, ascending by position: sort (-value, position) ascending
    neg_values, positions, values = sorting.sort_together(
        el.neg(operand), position, operand, dimension=aval.ndim - 1, num_keys=2)
    starts, limits = (0,) * aval.ndim, aval.shape[:-1] + (k,)
    return (slicing.slice(values, start_indices=starts, limit_indices=limits),
            slicing.slice(positions, start_indices=starts, limit_indices=limits))


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """``lax.associative_scan``: all prefix combinations ``fn(... fn(x0, x1) ..., xi)``
    along ``axis`` of the pytree ``elems``, for an associative ``fn`` that works
    elementwise on slices (``log2(n)`` rounds of ``fn`` on shifted slices).

    >>> associative_scan(lambda a, b: a * b, np.array([1.0, 2.0, 3.0, 4.0]))
    array([ 1.,  2.,  6., 24.])
    """
    leaves, tree = tree_flatten(elems)
    if not leaves:
        raise InvalidArgumentError("lax.associative_scan needs at least one array in elems")
    ndim = get_aval(leaves[0]).ndim
    axis = axis % ndim
    n = get_aval(leaves[0]).shape[axis]
    if any(get_aval(x).shape[axis] != n for x in leaves):
        raise ShapeError("lax.associative_scan needs the elements to share the size of axis "
                         f"{axis}, got {[get_aval(x).shape for x in leaves]}")
    if reverse:
        leaves = [structural.rev(x, dimensions=(axis,)) for x in leaves]

    def part(xs, start, stop):
        out = []
        for x in xs:
            shape = get_aval(x).shape
            starts = tuple(start if i == axis else 0 for i in range(len(shape)))
            limits = tuple(stop if i == axis else s for i, s in enumerate(shape))
            out.append(slicing.slice(x, start_indices=starts, limit_indices=limits))
        return out
    step = 1
    while step < n:
        earlier, later = part(leaves, 0, n - step), part(leaves, step, n)
        pair = (later, earlier) if reverse else (earlier, later)  # keep fn's operand order
        combined = tree_flatten(fn(tree_unflatten(tree, pair[0]),
                                   tree_unflatten(tree, pair[1])))[0]
        leaves = [structural.concatenate(head, c, dimension=axis)
                  for head, c in zip(part(leaves, 0, step), combined)]
        step *= 2
    if reverse:
        leaves = [structural.rev(x, dimensions=(axis,)) for x in leaves]
    return tree_unflatten(tree, leaves)


__all__ = ["add", "sub", "mul", "div", "rem", "neg", "max", "min", "sin", "cos", "exp", "log",
           "tanh", "dot_general", "dot", "broadcast_in_dim", "reshape", "transpose", "slice",
           "pad", "concatenate", "reduce_sum", "reduce_max", "cumsum", "sort", "sort_key_val",
           "top_k", "associative_scan", "conv_general_dilated", "conv",
           "conv_with_general_padding", "conv_dimension_numbers", "reduce_window",
           "reduce_window_sum", "reduce_window_max", "reduce_window_min"]


# ---------------------------------------------------------------------------
# Windowed reductions


def _window_params(operand, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation) -> dict:
    shape = get_aval(operand).shape
    nd = len(shape)
    params = {}
    for name, value in (("window_dimensions", window_dimensions),
                        ("window_strides", window_strides), ("base_dilation", base_dilation),
                        ("window_dilation", window_dilation)):
        value = (1,) * nd if value is None else tuple(int(v) for v in value)
        if len(value) != nd:
            raise ShapeError(f"lax.reduce_window: {name}={value} needs one entry per axis of "
                             f"the operand {get_aval(operand).str_short()}")
        params[name] = value
    dilated = tuple((s - 1) * b + 1 if s else 0 for s, b in zip(shape, params["base_dilation"]))
    window = tuple((k - 1) * d + 1 for k, d in zip(params["window_dimensions"],
                                                   params["window_dilation"]))
    params["padding"] = convolution.padding_pairs(padding, dilated, window,
                                                  params["window_strides"])
    return params


def _window_sum(operand, params):
    """The sum of each window: a convolution of one feature with a kernel of ones.
    Leading axes the window leaves alone become the convolution's batch."""
    aval = get_aval(operand)
    trivial = 0
    for d in range(aval.ndim):
        if (params["window_dimensions"][d], params["window_strides"][d], params["padding"][d],
                params["base_dilation"][d], params["window_dilation"][d]) != (1, 1, (0, 0), 1, 1):
            break
        trivial += 1
    lead, rest = aval.shape[:trivial], aval.shape[trivial:]
    x = structural.reshape(operand, new_sizes=(math.prod(lead), 1) + rest)
    ones = np.ones((1, 1) + params["window_dimensions"][trivial:], aval.dtype)
    out = convolution.conv_general_dilated(
        x, ones, params["window_strides"][trivial:], params["padding"][trivial:],
        params["base_dilation"][trivial:], params["window_dilation"][trivial:])
    return structural.reshape(out, new_sizes=lead + get_aval(out).shape[2:])


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """``lax.reduce_window`` for ``computation`` in ``lax.add``, ``lax.mul``, ``lax.max``, ``lax.min``.

    Args:
      operand: an array; every axis has a window (size 1 to leave it alone).
      init_value: the reduction's start, combined once with each window. For
        ``add`` and ``mul`` with padding or base dilation it must be the
        identity (0, 1), since funcdiff pads with the identity.
      computation: ``lax.add``, ``lax.mul``, ``lax.max`` or ``lax.min``.
      window_dimensions, window_strides: one int per axis (strides default to 1).
      padding: "VALID", "SAME", "SAME_LOWER" or one (low, high) pair per axis.
      base_dilation, window_dilation: one int per axis (default 1).

    Returns:
      The reduction of every window. Sums are convolutions, max and min their
      own primitives (ties share the derivative evenly), products ``reduce_prod``
      of the windows' elements: all differentiate to any order.

    Raises:
      InvalidArgumentError: another computation, or a non-identity init_value
        for add/mul where padding would count it.

    >>> x = np.arange(16.0).reshape(4, 4)
    >>> reduce_window(x, -np.inf, max, (2, 2), (2, 2), "VALID")
    array([[ 5.,  7.],
           [13., 15.]])
    """
    params = _window_params(operand, window_dimensions, window_strides, padding, base_dilation,
                            window_dilation)
    if computation in (max, el.max):
        out = windowed.reduce_window_max(operand, **params)
        combine = el.max
    elif computation in (min, el.min):
        out = windowed.reduce_window_min(operand, **params)
        combine = el.min
    elif computation in (add, el.add, mul, el.mul):
        is_sum = computation in (add, el.add)
        identity = 0 if is_sum else 1
        stretched = any(p != (0, 0) for p in params["padding"]) or any(
            b != 1 for b in params["base_dilation"])
        init_is_identity = type(init_value) in (int, float, bool) and init_value == identity
        if stretched and not init_is_identity:
            raise InvalidArgumentError(
                f"lax.reduce_window with {'add' if is_sum else 'mul'}: init_value must be "
                f"{identity} when there is padding or base dilation (funcdiff pads with the "
                "identity); add the initial value to the result instead.")
        if is_sum:
            out = _window_sum(operand, params)
        else:
            patches = windowed.window_patches(operand, 1, **params)
            out = reductions.reduce_prod(patches, axes=(get_aval(patches).ndim - 1,))
        combine = el.add if is_sum else el.mul
        if init_is_identity:
            return out
    else:
        raise InvalidArgumentError(
            f"lax.reduce_window supports computation = lax.add, lax.mul, lax.max or lax.min, "
            f"got {computation!r}")
    if type(init_value) in _SCALARS:
        if init_value == windowed.identity_of(get_aval(out).dtype, combine is el.max):
            return out
        init_value = np.asarray(init_value, get_aval(out).dtype)
    return combine(out, structural.broadcast_in_dim(init_value, shape=get_aval(out).shape,
                                                    broadcast_dimensions=()))


def reduce_window_sum(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """The sum of each window (``reduce_window`` with ``lax.add``).

    >>> reduce_window_sum(np.arange(5.0), (2,))
    array([1., 3., 5., 7.])
    """
    return reduce_window(operand, 0, add, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation)


def reduce_window_max(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """The maximum of each window (``reduce_window`` with ``lax.max``).

    >>> reduce_window_max(np.array([1.0, 3.0, 2.0, 0.0]), (2,), (2,))
    array([3., 2.])
    """
    return windowed.reduce_window_max(operand, **_window_params(
        operand, window_dimensions, window_strides, padding, base_dilation, window_dilation))


def reduce_window_min(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """The minimum of each window (``reduce_window`` with ``lax.min``).

    >>> reduce_window_min(np.array([1.0, 3.0, 2.0, 0.0]), (2,), (2,))
    array([1., 0.])
    """
    return windowed.reduce_window_min(operand, **_window_params(
        operand, window_dimensions, window_strides, padding, base_dilation, window_dilation))
