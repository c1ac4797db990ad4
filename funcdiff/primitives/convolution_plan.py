"""How ``conv_general_dilated``'s impl runs on numpy: one plan per signature.

The impl works in the canonical layout (batch, feature, spatial...) of every
operand, reached by transposing views, and picks one of two routes:

- *gather* (im2col): the padded, dilated input's windows (a sliding-window
  view) are copied once into a patch matrix (a row per output position), and
  one BLAS matmul per group contracts it with the kernel. The patch matrix holds ``N * C * prod(K)``
  entries per output position: good when the output is not larger than the
  input.
- *scatter* (col2im): one BLAS matmul per group multiplies every real input
  position by the whole kernel, and each kernel offset's block of products is
  added into the output positions it reaches (``prod(K)`` strided adds). It
  never touches the zeros of an lhs dilation, so it is the route of transposed
  convolutions (the gradient of a strided one), and of convolutions with fewer
  output than input features.

``plan(x_shape, w_shape, params)`` returns a ``ConvPlan`` (cached per
signature) holding every index computation; ``run(plan, x, w)`` does the work.
Groups: the input's batch is split as (batch groups, n), its features as
(feature groups, i) and the kernel's out-features as (batch groups, feature
groups, o); at most one kind of group is larger than one.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

# A BLAS multiply-add costs about this many times less than moving one entry
# through memory; it weighs the routes' flops against their buffers.
_FLOPS_PER_ENTRY = 8
# The entries of a patch or product block worked on at once: 1 MiB of
# float64, so that it is still in cache when it is read back.
_CHUNK_ENTRIES = 2 ** 17
# Patches as columns take one matrix product per batch member, which pays for
# its call only with at least this many output positions.
_MIN_COLUMNS = 256


class ConvPlan:
    """Everything the impl computes from shapes and params, once per signature."""

    __slots__ = ("route", "lhs_spec", "rhs_spec", "out_inverse", "n", "c", "o", "i", "groups",
                 "batch_groups", "spatial", "kernel", "out_spatial", "pad_shape", "pad_src",
                 "pad_dst", "window", "window_index", "positions_last", "offsets", "chunk",
                 "dtype")


def output_spatial(in_spatial, kernel, window_strides, padding, lhs_dilation, rhs_dilation):
    """The output's spatial sizes (may be < 1 when the kernel does not fit)."""
    out = []
    for s, k, st, (lo, hi), ld, rd in zip(in_spatial, kernel, window_strides, padding,
                                          lhs_dilation, rhs_dilation):
        length = (s - 1) * ld + 1 + lo + hi if s > 0 else lo + hi
        out.append((length - ((k - 1) * rd + 1)) // st + 1)
    return tuple(out)


@functools.lru_cache(maxsize=512)
def plan(x_shape, w_shape, dtype, window_strides, padding, lhs_dilation, rhs_dilation,
         dimension_numbers, feature_group_count, batch_group_count) -> ConvPlan:
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    p = ConvPlan()
    p.dtype = dtype
    p.lhs_spec, p.rhs_spec = lhs_spec, rhs_spec
    p.out_inverse = tuple(int(a) for a in np.argsort(out_spec))
    p.n, p.c = x_shape[lhs_spec[0]], x_shape[lhs_spec[1]]
    p.o, p.i = w_shape[rhs_spec[0]], w_shape[rhs_spec[1]]
    p.groups, p.batch_groups = feature_group_count, batch_group_count
    p.spatial = tuple(x_shape[a] for a in lhs_spec[2:])
    p.kernel = tuple(w_shape[a] for a in rhs_spec[2:])
    p.out_spatial = output_spatial(p.spatial, p.kernel, window_strides, padding,
                                   lhs_dilation, rhs_dilation)
    n_out, kp = p.n // p.batch_groups, math.prod(p.kernel)
    p_in, p_out = math.prod(p.spatial), math.prod(p.out_spatial)
    o_per_batch_group = p.o // p.batch_groups
    gather_cost = 2 * p.n * p.c * kp * p_out + 2 * n_out * p.o * p.i * kp * p_out // _FLOPS_PER_ENTRY
    scatter_cost = (3 * p.n * o_per_batch_group * kp * p_in
                    + 2 * p.n * o_per_batch_group * p.i * kp * p_in // _FLOPS_PER_ENTRY)
    p.route = "scatter" if scatter_cost < gather_cost else "gather"
    if p.route == "gather":
        _plan_gather(p, window_strides, padding, lhs_dilation, rhs_dilation)
    else:
        _plan_scatter(p, window_strides, padding, lhs_dilation, rhs_dilation)
    return p


def placement(spatial, padding, dilation):
    """Where the input lands in its padded, dilated form (negative padding crops):
    ``(padded spatial shape, source index, destination index)``, the indices
    over (batch, feature, *spatial); the shape is None when nothing changes."""
    pad_shape, src, dst = [], [], []
    for s, (lo, hi), d in zip(spatial, padding, dilation):
        length = (s - 1) * d + 1 + lo + hi if s > 0 else max(lo + hi, 0)
        first = 0
        while first < s and lo + first * d < 0:
            first += 1
        last = s
        while last > first and lo + (last - 1) * d >= length:
            last -= 1
        pad_shape.append(length)
        src.append(slice(first, last))
        start = lo + first * d
        dst.append(slice(start, start + (last - first - 1) * d + 1 if last > first else start, d))
    trivial = all(lo == 0 and hi == 0 for lo, hi in padding) and all(d == 1 for d in dilation)
    everything = (slice(None), slice(None))
    return None if trivial else tuple(pad_shape), everything + tuple(src), everything + tuple(dst)


def _plan_gather(p, window_strides, padding, lhs_dilation, rhs_dilation):
    p.pad_shape, p.pad_src, p.pad_dst = placement(p.spatial, padding, lhs_dilation)
    p.positions_last = math.prod(p.out_spatial) >= max(math.prod(p.kernel), _MIN_COLUMNS)
    # Chunks of batch members (patches as columns) or of features (as rows).
    block = p.batch_groups * p.c if p.positions_last else p.n
    p.chunk = max(1, _CHUNK_ENTRIES // max(block * math.prod(p.kernel)
                                           * math.prod(p.out_spatial), 1))
    p.window = tuple((k - 1) * rd + 1 for k, rd in zip(p.kernel, rhs_dilation))
    p.window_index = ((slice(None), slice(None))
                      + tuple(slice(0, (y - 1) * st + 1, st) for y, st in zip(p.out_spatial,
                                                                             window_strides))
                      + tuple(slice(None, None, rd) for rd in rhs_dilation))


def _plan_scatter(p, window_strides, padding, lhs_dilation, rhs_dilation):
    # For each kernel offset: the output positions it reaches and the input
    # positions read there, per dimension, as slices (arithmetic progressions).
    per_dim = []
    for s, y_size, k_size, st, (lo, _), ld, rd in zip(
            p.spatial, p.out_spatial, p.kernel, window_strides, padding, lhs_dilation,
            rhs_dilation):
        options = []
        for k in range(k_size):
            pairs = [(y, (y * st + k * rd - lo) // ld) for y in range(y_size)
                     if (y * st + k * rd - lo) % ld == 0
                     and 0 <= (y * st + k * rd - lo) // ld < s]
            options.append(_as_slices(pairs))
        per_dim.append(options)
    offsets = []
    for k in itertools.product(*[range(k) for k in p.kernel]):
        chosen = [per_dim[d][kd] for d, kd in enumerate(k)]
        if any(c is None for c in chosen):
            continue  # this offset reaches no output position
        offsets.append((k, tuple(c[0] for c in chosen), tuple(c[1] for c in chosen)))
    p.offsets = tuple(offsets)
    per_member = p.o * math.prod(p.kernel) * math.prod(p.spatial)
    p.chunk = max(1, _CHUNK_ENTRIES // max(per_member, 1))


def _as_slices(pairs):
    if not pairs:
        return None
    (y0, i0) = pairs[0]
    if len(pairs) == 1:
        return slice(y0, y0 + 1), slice(i0, i0 + 1)
    dy, di = pairs[1][0] - y0, pairs[1][1] - i0
    n = len(pairs)
    return slice(y0, y0 + (n - 1) * dy + 1, dy), slice(i0, i0 + (n - 1) * di + 1, di)


def run(p: ConvPlan, x, w):
    """The convolution of ``x`` and ``w`` by plan ``p``, in the output's layout."""
    x = np.asarray(x).transpose(p.lhs_spec)
    w = np.asarray(w).transpose(p.rhs_spec)
    out = _gather(p, x, w) if p.route == "gather" else _scatter(p, x, w)
    return out.transpose(p.out_inverse)


def _gather(p, x, w):
    nd = len(p.spatial)
    if p.pad_shape is not None:
        padded = np.zeros(x.shape[:2] + p.pad_shape, p.dtype)
        padded[p.pad_dst] = x[p.pad_src]
        x = padded
    windows = sliding_window_view(x, p.window, axis=tuple(range(2, 2 + nd)))[p.window_index]
    bg, g = p.batch_groups, p.groups
    n_out, oq = p.n // bg, p.o // (bg * g)
    kp, p_out = math.prod(p.kernel), math.prod(p.out_spatial)
    # windows: (N, C, *Y, *K) -> (bg, n, g, i, *Y, *K)
    windows = windows.reshape((bg, n_out, g, p.i) + p.out_spatial + p.kernel)
    ys, ks = tuple(range(4, 4 + nd)), tuple(range(4 + nd, 4 + 2 * nd))
    if p.positions_last:
        w = w.reshape(bg, g, oq, p.i * kp)
        # Patches as columns (feature x offset, position): each copied run is a
        # window's row of the input, and each group's product w @ cols lands in
        # the canonical (batch, feature, position) layout with no transpose.
        # Batch members go a cache-sized chunk at a time, so the patches a
        # product reads were just written.
        out = np.empty((n_out, bg, g, oq, p_out), p.dtype)
        for start in range(0, n_out, p.chunk):
            part = slice(start, start + p.chunk)
            cols = windows[:, part].transpose((0, 1, 2, 3) + ks + ys)
            cols = cols.reshape(bg, -1, g, p.i * kp, p_out)
            if bg == 1 and g == 1:
                np.matmul(w[0, 0], cols[0, :, 0], out=out[part, 0, 0])
            else:
                out[part] = np.matmul(w[:, None], cols).transpose(1, 0, 2, 3, 4)
        return out.reshape((n_out, p.o) + p.out_spatial)
    # Few positions, large windows (a kernel gradient): patches as rows
    # (position, feature x offset), the long contraction running along the input's rows.
    ys_first = (0, 1, 2) + ys + (3,) + ks
    if bg == 1 and g == 1:  # one matrix product, accumulated over chunks of features
        out = np.zeros((n_out * p_out, p.o), p.dtype)
        for start in range(0, p.i, p.chunk):
            part = slice(start, start + p.chunk)
            cols = windows[:, :, :, part].transpose(ys_first).reshape(n_out * p_out, -1)
            out += cols @ w[:, part].reshape(p.o, -1).T
        return out.reshape((n_out,) + p.out_spatial + (p.o,)).transpose(
            (0, nd + 1) + tuple(range(1, nd + 1)))
    cols = windows.transpose(ys_first).reshape(bg, n_out, g, p_out, p.i * kp)
    w = w.reshape(bg, g, oq, p.i * kp)
    out = np.matmul(cols, w.transpose(0, 1, 3, 2)[:, None])  # (bg, n, g, P, oq)
    out = out.transpose(1, 0, 2, 4, 3)
    return out.reshape((n_out, p.o) + p.out_spatial)


def _scatter(p, x, w):
    nd = len(p.spatial)
    bg, g = p.batch_groups, p.groups
    n_out, oq = p.n // bg, p.o // (bg * g)
    kp, p_in = math.prod(p.kernel), math.prod(p.spatial)
    x = x.reshape(bg, n_out, g, p.i, p_in)
    w = w.reshape((bg, g, oq, p.i, kp)).transpose(0, 1, 2, 4, 3).reshape(bg, 1, g, oq * kp, p.i)
    out = np.zeros((bg, n_out, g, oq) + p.out_spatial, p.dtype)
    lead = (slice(None),) * 4
    # A cache-sized chunk of batch members at a time: the block of products is
    # added into the output while it is still in cache.
    for start in range(0, n_out, p.chunk):
        part = slice(start, start + p.chunk)
        products = np.matmul(w, x[:, part]).reshape((bg, -1, g, oq) + p.kernel + p.spatial)
        chunk_out = out[:, part]
        for k, ys, xs in p.offsets:
            chunk_out[lead + ys] += products[lead + k + xs]
    out = out.transpose(1, 0, 2, 3, *range(4, 4 + nd)) if bg > 1 else out[0]
    return out.reshape((n_out, p.o) + p.out_spatial)
