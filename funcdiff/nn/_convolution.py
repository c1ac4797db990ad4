"""The convolution layers of funcdiff.nn, with PyTorch's conventions.

``conv`` and ``conv_transpose`` take a channels-first input ``(N, C, *spatial)``
and a kernel in PyTorch's layout (``(out, in / groups, *k)`` for ``conv``,
``(in, out / groups, *k)`` for ``conv_transpose``), 1 to 3 spatial dimensions
given by the kernel's rank; ``max_pool`` and ``avg_pool`` pool the trailing
spatial axes. All are ``fd.lax.conv_general_dilated`` or ``fd.lax.reduce_window``
underneath, so every transform and every order of derivative applies.
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.lax_operations import (conv_general_dilated, reduce_window_max,
                                     reduce_window_sum)
from funcdiff.nn._support import _float
from funcdiff.numpy import _util
import funcdiff.numpy as fnp


def _per_dim(name: str, what: str, value, nd: int) -> tuple[int, ...]:
    if isinstance(value, (int, np.integer)):
        return (int(value),) * nd
    value = tuple(int(v) for v in value)
    if len(value) != nd:
        raise ShapeError(f"funcdiff.nn.{name}: {what}={value} needs one entry per spatial "
                         f"dimension ({nd}), or one int for all.")
    return value


def _channels_first(name: str, x, nd: int):
    shape = _util.shape_of(x)
    if len(shape) != nd + 2:
        raise ShapeError(
            f"funcdiff.nn.{name}: the input of shape {shape} needs rank {nd + 2} (batch, "
            f"channels and {nd} spatial dimensions) for a kernel with {nd} spatial "
            "dimensions; add a batch axis with x[None] for a single example.")
    return shape


def _add_bias(name: str, out, bias, channels: int):
    if bias is None:
        return out
    if _util.shape_of(bias) != (channels,):
        raise ShapeError(f"funcdiff.nn.{name}: bias of shape {_util.shape_of(bias)} must have "
                         f"shape ({channels},), one entry per output channel.")
    nd = len(_util.shape_of(out)) - 2
    return fnp.add(out, fnp.reshape(bias, (channels,) + (1,) * nd))


def conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """A convolution layer (cross-correlation), as PyTorch's ``conv1d/2d/3d``.

    Args:
      x: the input, ``(N, C_in, *spatial)``.
      weight: ``(C_out, C_in / groups, *kernel)``; its rank sets the number of
        spatial dimensions.
      bias: None or ``(C_out,)``.
      stride, dilation: an int or one per spatial dimension.
      padding: an int, one per spatial dimension (both sides), explicit
        ``(low, high)`` pairs, or "same" / "valid".
      groups: input channels split into groups, each with its own kernels.

    Returns:
      ``(N, C_out, *out_spatial)``.

    Raises:
      ShapeError: the channels do not match ``weight`` and ``groups``, or a
        kernel is larger than the padded input.

    >>> import funcdiff as fd, numpy as np
    >>> fd.nn.conv(np.ones((1, 2, 5, 5)), np.ones((3, 2, 3, 3)), padding=1).shape
    (1, 3, 5, 5)
    """
    x, weight = _float("conv", x), _float("conv", weight)
    nd = len(_util.shape_of(weight)) - 2
    _channels_first("conv", x, nd)
    if isinstance(padding, str):
        if padding.lower() not in ("same", "valid"):
            raise InvalidArgumentError(f"funcdiff.nn.conv: padding={padding!r} must be an int, "
                                       "pairs, 'same' or 'valid'.")
        pads = padding.upper()
    elif isinstance(padding, (int, np.integer)) or all(
            isinstance(p, (int, np.integer)) for p in padding):
        pads = tuple((p, p) for p in _per_dim("conv", "padding", padding, nd))
    else:
        pads = tuple(tuple(p) for p in padding)
    out = conv_general_dilated(x, weight, _per_dim("conv", "stride", stride, nd), pads,
                               rhs_dilation=_per_dim("conv", "dilation", dilation, nd),
                               feature_group_count=groups)
    return _add_bias("conv", out, bias, _util.shape_of(weight)[0])


def conv_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                   dilation=1):
    """A transposed convolution, as PyTorch's ``conv_transpose1d/2d/3d``: the
    adjoint of ``conv`` with the same weight (its gradient with respect to the input).

    Args:
      x: ``(N, C_in, *spatial)``.
      weight: ``(C_in, C_out / groups, *kernel)`` (PyTorch's layout).
      bias: None or ``(C_out,)``.
      stride, padding, output_padding, dilation: an int or one per spatial
        dimension; the output size is ``(n - 1) * stride - 2 * padding +
        dilation * (k - 1) + output_padding + 1``.
      groups: as for ``conv``.

    Returns:
      ``(N, C_out, *out_spatial)``.

    >>> import funcdiff as fd, numpy as np
    >>> fd.nn.conv_transpose(np.ones((1, 2, 4, 4)), np.ones((2, 3, 3, 3)), stride=2,
    ...                      padding=1, output_padding=1).shape
    (1, 3, 8, 8)
    """
    x, weight = _float("conv_transpose", x), _float("conv_transpose", weight)
    w_shape = _util.shape_of(weight)
    nd = len(w_shape) - 2
    x_shape = _channels_first("conv_transpose", x, nd)
    c_in, c_out_group, kernel = w_shape[0], w_shape[1], w_shape[2:]
    if x_shape[1] != c_in or c_in % groups:
        raise ShapeError(
            f"funcdiff.nn.conv_transpose: the input has {x_shape[1]} channels, but the weight "
            f"of shape {w_shape} expects {c_in} (its first axis), divisible by groups={groups}.")
    stride = _per_dim("conv_transpose", "stride", stride, nd)
    padding = _per_dim("conv_transpose", "padding", padding, nd)
    output_padding = _per_dim("conv_transpose", "output_padding", output_padding, nd)
    dilation = _per_dim("conv_transpose", "dilation", dilation, nd)
    # the kernel of the equivalent convolution: flipped, in and out swapped per group
    w = fnp.flip(weight, axis=tuple(range(2, 2 + nd)))
    w = fnp.reshape(w, (groups, c_in // groups, c_out_group) + kernel)
    w = fnp.swapaxes(w, 1, 2)
    w = fnp.reshape(w, (groups * c_out_group, c_in // groups) + kernel)
    pads = tuple((d * (k - 1) - p, d * (k - 1) - p + op)
                 for k, p, op, d in zip(kernel, padding, output_padding, dilation))
    out = conv_general_dilated(x, w, (1,) * nd, pads, lhs_dilation=stride,
                               rhs_dilation=dilation, feature_group_count=groups)
    return _add_bias("conv_transpose", out, bias, groups * c_out_group)


def _pool_params(name: str, x, kernel_size, stride, padding):
    shape = _util.shape_of(x)
    nd = 1 if isinstance(kernel_size, (int, np.integer)) else len(kernel_size)
    if len(shape) < nd:
        raise ShapeError(f"funcdiff.nn.{name}: the input of shape {shape} has fewer axes than "
                         f"the {nd} pooled ones.")
    kernel = _per_dim(name, "kernel_size", kernel_size, nd)
    stride = kernel if stride is None else _per_dim(name, "stride", stride, nd)
    padding = _per_dim(name, "padding", padding, nd)
    lead = len(shape) - nd
    return ((1,) * lead + kernel, (1,) * lead + stride,
            ((0, 0),) * lead + tuple((p, p) for p in padding))


def max_pool(x, kernel_size, stride=None, padding=0):
    """Max pooling over the trailing ``len(kernel_size)`` axes (PyTorch's ``max_pool*d``).

    Padding holds -inf; ties within a window share the derivative evenly.

    Args:
      x: ``(..., *spatial)``, e.g. ``(N, C, H, W)``.
      kernel_size: an int (one pooled axis) or one int per pooled axis.
      stride: defaults to ``kernel_size``; padding: an int or one per axis.

    Returns:
      The maximum of each window.

    >>> import funcdiff as fd, numpy as np
    >>> fd.nn.max_pool(np.arange(16.0).reshape(1, 1, 4, 4), (2, 2))[0, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    """
    x = _float("max_pool", x)
    window, strides, pads = _pool_params("max_pool", x, kernel_size, stride, padding)
    return reduce_window_max(x, window, strides, pads)


def avg_pool(x, kernel_size, stride=None, padding=0, count_include_pad=True):
    """Average pooling over the trailing ``len(kernel_size)`` axes (PyTorch's ``avg_pool*d``).

    Args:
      x: ``(..., *spatial)``, e.g. ``(N, C, H, W)``.
      kernel_size: an int (one pooled axis) or one int per pooled axis.
      stride: defaults to ``kernel_size``; padding: an int or one per axis (zeros).
      count_include_pad: divide by the window size (True) or by the number of
        input elements in the window (False).

    Returns:
      The mean of each window.

    >>> import funcdiff as fd, numpy as np
    >>> fd.nn.avg_pool(np.arange(16.0).reshape(1, 1, 4, 4), (2, 2))[0, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    """
    x = _float("avg_pool", x)
    window, strides, pads = _pool_params("avg_pool", x, kernel_size, stride, padding)
    total = reduce_window_sum(x, window, strides, pads)
    if count_include_pad or all(p == (0, 0) for p in pads):
        return fnp.divide(total, math.prod(window))
    counts = reduce_window_sum(np.ones(_util.shape_of(x), _util.dtype_of(x)), window, strides,
                               pads)  # a constant: the input's shape is static
    return fnp.divide(total, counts)
