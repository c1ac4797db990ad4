"""Convolution: the ``conv_general_dilated`` primitive and its operations.

``conv_general_dilated`` is XLA's and JAX's general convolution (really a
cross-correlation, as in every deep-learning library): n spatial dimensions,
window strides, explicit low/high padding (negative crops), lhs dilation
(transposed convolution), rhs dilation (atrous), feature groups and batch
groups, and any layout of the three operands through ``dimension_numbers``.

- It is bilinear: the jvp is ``conv(tx, w) + conv(x, tw)``, and both
  transposes are again convolutions, so every derivative of every order is
  this primitive. With respect to the input: the cotangent lhs-dilated by
  the strides, convolved with the flipped kernel whose in- and out-features
  are swapped (window strides become the lhs dilation). With respect to the
  kernel: the input convolved with the cotangent as kernel, batch and
  feature dimensions swapped (strides and rhs dilation trade places, and
  feature groups become batch groups and back).
- vmap folds the batched axis into the batch dimension (input batched), the
  out-features (kernel batched) or the groups (both).
- The impl is planned once per signature (``convolution_plan``): im2col and
  one BLAS matmul per group, or the col2im form for transposed convolutions.
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff.core import Primitive, ShapedArray, Zero, bind, get_aval
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.interpreters.transpose import UndefinedPrimal
from funcdiff.primitives import elementwise, structural
from funcdiff.primitives.cards import bilinear_vjp, checked_impl, nbytes, same_dtype
from funcdiff.primitives.convolution_plan import output_spatial, plan, run

conv_general_dilated_p = Primitive("conv_general_dilated")

_NAME = "conv_general_dilated"


def _describe(dimension_numbers) -> str:
    lhs, rhs, out = dimension_numbers
    return f"dimension_numbers=(lhs {lhs}, rhs {rhs}, out {out})"


def _conv_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count):
    dtype = same_dtype(_NAME, lhs, rhs)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    where = f"{_NAME} of lhs {lhs.str_short()} and rhs {rhs.str_short()}"
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ShapeError(f"{where}: lhs and rhs need the same rank (2 + the number of spatial "
                         "dimensions); reshape one of them.")
    nd = lhs.ndim - 2
    for name, value in (("window_strides", window_strides), ("padding", padding),
                        ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(value) != nd:
            raise ShapeError(f"{where}: {name}={value} needs one entry per spatial dimension "
                             f"({nd}).")
    for name, value in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                        ("rhs_dilation", rhs_dilation)):
        if any(v < 1 for v in value):
            raise InvalidArgumentError(f"{where}: {name}={value} must be positive integers.")
    g, bg = feature_group_count, batch_group_count
    if g < 1 or bg < 1 or (g > 1 and bg > 1):
        raise InvalidArgumentError(
            f"{where}: feature_group_count={g} and batch_group_count={bg} must be positive "
            "and at most one of them larger than 1.")
    n, c = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    o, i = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    if c % g:
        raise ShapeError(
            f"{where}: feature_group_count={g} does not divide the lhs feature dimension "
            f"(axis {lhs_spec[1]}, size {c}). Choose a feature_group_count dividing {c}.")
    if c != i * g:
        raise ShapeError(
            f"{where}, {_describe(dimension_numbers)}: the lhs feature dimension (axis "
            f"{lhs_spec[1]}) has size {c}, but the rhs in-feature dimension (axis {rhs_spec[1]}) "
            f"has size {i} and feature_group_count={g}: expected {c} == {i} * {g}. Check the "
            "layouts in dimension_numbers, or the kernel's shape.")
    for name, count in (("feature_group_count", g), ("batch_group_count", bg)):
        if o % count:
            raise ShapeError(
                f"{where}: {name}={count} does not divide the rhs out-feature dimension "
                f"(axis {rhs_spec[0]}, size {o}).")
    if n % bg:
        raise ShapeError(
            f"{where}: batch_group_count={bg} does not divide the lhs batch dimension "
            f"(axis {lhs_spec[0]}, size {n}).")
    spatial = tuple(lhs.shape[a] for a in lhs_spec[2:])
    kernel = tuple(rhs.shape[a] for a in rhs_spec[2:])
    out_sp = output_spatial(spatial, kernel, window_strides, padding, lhs_dilation, rhs_dilation)
    for d, size in enumerate(out_sp):
        if size < 1 and kernel[d] > 0:
            (lo, hi), ld, rd = padding[d], lhs_dilation[d], rhs_dilation[d]
            length = (spatial[d] - 1) * ld + 1 + lo + hi
            raise ShapeError(
                f"{where}: in spatial dimension {d} the kernel (size {kernel[d]}, dilated "
                f"{(kernel[d] - 1) * rd + 1}) is larger than the padded input (size "
                f"{spatial[d]}, dilated and padded {length}). Pad the input (padding='SAME' "
                "or larger explicit pairs) or use a smaller kernel.")
    canonical = (n // bg, o) + out_sp
    shape = [0] * len(canonical)
    for k, axis in enumerate(out_spec):
        shape[axis] = canonical[k]
    return ShapedArray(tuple(shape), dtype)


def _conv_impl(lhs, rhs, **params):
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    if lhs.dtype != rhs.dtype or lhs.ndim != rhs.ndim:
        raise TypeError("operands differ")  # reported by the shape rule
    p = plan(lhs.shape, rhs.shape, lhs.dtype, **params)
    if min(p.out_spatial, default=1) < 1 or p.c != p.i * p.groups:
        raise ValueError("bad shapes")  # reported by the shape rule
    return run(p, lhs, rhs)


def _conv_jvp(primals, tangents, **params):
    (x, w), (tx, tw) = primals, tangents
    out = conv_general_dilated_p.bind(x, w, **params)
    if type(tx) is Zero and type(tw) is Zero:
        return out, Zero(get_aval(out))
    parts = []
    if type(tx) is not Zero:
        parts.append(conv_general_dilated_p.bind(tx, w, **params))
    if type(tw) is not Zero:
        parts.append(conv_general_dilated_p.bind(x, tw, **params))
    return out, parts[0] if len(parts) == 1 else elementwise.add(*parts)


def _inverse(perm) -> tuple:
    return tuple(int(a) for a in np.argsort(perm))


def _permuted(x, permutation):
    """``x`` with its axes permuted (itself for the identity)."""
    if tuple(permutation) == tuple(range(len(permutation))):
        return x
    return structural.transpose(x, permutation=tuple(permutation))


def _transpose_lhs(ct, w, x_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count):
    """The cotangent of the input: ct (lhs-dilated by the strides) convolved with
    the flipped kernel, in- and out-features swapped per group."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nd = len(window_strides)
    spatial = tuple(range(2, 2 + nd))
    w = _permuted(w, rhs_spec)  # (O, I, *K)
    o, i, *kernel = get_aval(w).shape
    groups = max(feature_group_count, batch_group_count)
    w = structural.rev(w, dimensions=spatial)
    w = structural.reshape(w, new_sizes=(groups, o // groups, i, *kernel))
    w = _permuted(w, (0, 2, 1) + tuple(range(3, 3 + nd)))
    w = structural.reshape(w, new_sizes=(groups * i, o // groups, *kernel))
    x_spatial = tuple(x_aval.shape[a] for a in lhs_spec[2:])
    y_spatial = tuple(get_aval(ct).shape[a] for a in out_spec[2:])
    pads = tuple(((k - 1) * rd - lo, (s - 1) * ld + lo - (y - 1) * st)
                 for k, s, y, st, (lo, _), ld, rd in zip(kernel, x_spatial, y_spatial,
                                                         window_strides, padding, lhs_dilation,
                                                         rhs_dilation))
    canonical = tuple(range(2 + nd))
    if batch_group_count == 1:
        return conv_general_dilated_p.bind(
            ct, w, window_strides=lhs_dilation, padding=pads, lhs_dilation=window_strides,
            rhs_dilation=rhs_dilation, dimension_numbers=(out_spec, canonical, lhs_spec),
            feature_group_count=feature_group_count, batch_group_count=1)
    out = conv_general_dilated_p.bind(  # (n, groups * C, *S): group b is batch group b's input
        ct, w, window_strides=lhs_dilation, padding=pads, lhs_dilation=window_strides,
        rhs_dilation=rhs_dilation, dimension_numbers=(out_spec, canonical, canonical),
        feature_group_count=groups, batch_group_count=1)
    n = get_aval(out).shape[0]
    out = structural.reshape(out, new_sizes=(n, groups, i) + x_spatial)
    out = _permuted(out, (1, 0) + tuple(range(2, 3 + nd)))
    out = structural.reshape(out, new_sizes=(n * groups, i) + x_spatial)
    return _permuted(out, _inverse(lhs_spec))


def _transpose_rhs(ct, x, w_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count):
    """The cotangent of the kernel: the input convolved with ct as the kernel,
    batch and feature dimensions swapped in both."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    x_aval = get_aval(x)
    x_spatial = tuple(x_aval.shape[a] for a in lhs_spec[2:])
    y_spatial = tuple(get_aval(ct).shape[a] for a in out_spec[2:])
    kernel = tuple(w_aval.shape[a] for a in rhs_spec[2:])
    pads = tuple((lo, (k - 1) * rd + (y - 1) * st - (s - 1) * ld - lo)
                 for k, s, y, st, (lo, _), ld, rd in zip(kernel, x_spatial, y_spatial,
                                                         window_strides, padding, lhs_dilation,
                                                         rhs_dilation))
    swap = lambda spec: (spec[1], spec[0]) + tuple(spec[2:])  # noqa: E731
    return conv_general_dilated_p.bind(
        x, ct, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides,
        dimension_numbers=(swap(lhs_spec), swap(out_spec), swap(rhs_spec)),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count)


def _conv_transpose(ct, x, w, **params):
    if type(x) is UndefinedPrimal:
        return [_transpose_lhs(ct, w, x.aval, **params), None]
    return [None, _transpose_rhs(ct, x, w.aval, **params)]


def _canonical(v, spec, bdim):
    """``v`` with its batch axis first, then the operand's canonical axes."""
    if bdim is None:
        return None
    v = structural.moveaxis(v, bdim, 0) if bdim else v
    return _permuted(v, (0,) + tuple(a + 1 for a in spec))


def _conv_batch(vals, dims, *, dimension_numbers, feature_group_count, batch_group_count,
                **params):
    (x, w), (dx, dw) = vals, dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nd = len(lhs_spec) - 2
    canonical = tuple(range(2 + nd))
    g, bg = feature_group_count, batch_group_count
    size = get_aval(x).shape[dx] if dx is not None else get_aval(w).shape[dw]
    xc, wc = _canonical(x, lhs_spec, dx), _canonical(w, rhs_spec, dw)

    def conv(a, b, a_spec, b_spec, groups, batch_groups):
        return conv_general_dilated_p.bind(a, b, dimension_numbers=(a_spec, b_spec, canonical),
                                           feature_group_count=groups,
                                           batch_group_count=batch_groups, **params)
    if wc is None:  # fold the batch into the input's batch, inside each batch group
        _, n, c, *spatial = get_aval(xc).shape
        xc = structural.reshape(xc, new_sizes=(size, bg, n // bg, c, *spatial))
        xc = _permuted(xc, (1, 0) + tuple(range(2, 4 + nd)))
        xc = structural.reshape(xc, new_sizes=(size * n, c, *spatial))
        out = conv(xc, w, canonical, rhs_spec, g, bg)  # (size * n', O, *Y)
        n_out, o, *y = get_aval(out).shape
        out = structural.reshape(out, new_sizes=(size, n_out // size, o, *y))
    elif xc is None:  # fold the batch into the out-features, inside each group
        _, o, i, *kernel = get_aval(wc).shape
        groups = max(g, bg)
        wc = structural.reshape(wc, new_sizes=(size, groups, o // groups, i, *kernel))
        wc = _permuted(wc, (1, 0) + tuple(range(2, 4 + nd)))
        wc = structural.reshape(wc, new_sizes=(size * o, i, *kernel))
        out = conv(x, wc, lhs_spec, canonical, g, bg)  # (n', groups * size * oq, *Y)
        n_out, _, *y = get_aval(out).shape
        out = structural.reshape(out, new_sizes=(n_out, groups, size, o // groups, *y))
        out = _permuted(out, (2, 0, 1) + tuple(range(3, 4 + nd)))
        out = structural.reshape(out, new_sizes=(size, n_out, o, *y))
    else:
        _, n, c, *spatial = get_aval(xc).shape
        _, o, i, *kernel = get_aval(wc).shape
        wc = structural.reshape(wc, new_sizes=(size * o, i, *kernel))
        if bg == 1:  # each batch member is a group of features
            xc = _permuted(xc, (1, 0) + tuple(range(2, 3 + nd)))
            xc = structural.reshape(xc, new_sizes=(n, size * c, *spatial))
            out = conv(xc, wc, canonical, canonical, size * g, 1)  # (n, size * O, *Y)
        else:  # each batch member is batch_group_count batch groups
            xc = structural.reshape(xc, new_sizes=(size * n, c, *spatial))
            out = conv(xc, wc, canonical, canonical, 1, size * bg)  # (n', size * O, *Y)
        n_out, _, *y = get_aval(out).shape
        out = structural.reshape(out, new_sizes=(n_out, size, o, *y))
        out = _permuted(out, (1, 0) + tuple(range(2, 3 + nd)))
    # (size, canonical output) -> (size, the output's layout)
    return _permuted(out, (0,) + tuple(1 + a for a in _inverse(out_spec))), 0


def _conv_cost(lhs, rhs, **params):
    out = _conv_abstract_eval(lhs, rhs, **params)
    lhs_spec, rhs_spec, _ = params["dimension_numbers"]
    per_output = rhs.shape[rhs_spec[1]] * math.prod(rhs.shape[a] for a in rhs_spec[2:])
    return {"flops": 2 * out.size * per_output,
            "bytes": nbytes(lhs) + nbytes(rhs) + nbytes(out)}


conv_general_dilated_p.impl = checked_impl(_conv_impl, _conv_abstract_eval)
conv_general_dilated_p.abstract_eval = _conv_abstract_eval
conv_general_dilated_p.jvp = _conv_jvp
conv_general_dilated_p.vjp = bilinear_vjp(conv_general_dilated_p)
conv_general_dilated_p.transpose = _conv_transpose
conv_general_dilated_p.batch = _conv_batch
conv_general_dilated_p.cost = _conv_cost


# --- the operations ----------------------------------------------------------------


def _ints(name: str, value, nd: int, default: int = 1) -> tuple[int, ...]:
    if value is None:
        return (default,) * nd
    if isinstance(value, (int, np.integer)):
        return (int(value),) * nd
    try:
        value = tuple(int(v) for v in value)
    except TypeError:
        raise InvalidArgumentError(f"{_NAME}: {name} must be a sequence of {nd} ints, got "
                                   f"{value!r}") from None
    if len(value) != nd:
        raise ShapeError(f"{_NAME}: {name}={value} needs one entry per spatial dimension "
                         f"({nd}).")
    return value


def _spec_from_string(name: str, spec: str, letters: tuple[str, str], ndim: int,
                      order: str | None) -> tuple[int, ...]:
    first, second = letters
    if len(spec) != ndim or len(set(spec)) != ndim or first not in spec or second not in spec:
        raise InvalidArgumentError(
            f"{_NAME}: the {name} dimension numbers {spec!r} must name each of the {ndim} "
            f"axes once, with {first!r} and {second!r} among them (e.g. 'NCHW', 'OIHW', "
            "'NHWC', 'HWIO').")
    spatial = [k for k, ch in enumerate(spec) if ch not in letters]
    if order is not None:
        if sorted(spec[k] for k in spatial) != sorted(order):
            raise InvalidArgumentError(
                f"{_NAME}: the {name} dimension numbers {spec!r} have the spatial letters "
                f"{''.join(spec[k] for k in spatial)!r}, but the kernel's are {order!r}: each "
                "spatial letter must appear in all three.")
        spatial.sort(key=lambda k: order.index(spec[k]))
    return (spec.index(first), spec.index(second)) + tuple(spatial)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """``lax.conv_dimension_numbers``: ``dimension_numbers`` as three tuples of axes.

    Args:
      lhs_shape, rhs_shape: the operands' shapes (only their rank is used).
      dimension_numbers: None (``NCH..``, ``OIH..``, ``NCH..``), three strings
        such as ``("NHWC", "HWIO", "NHWC")``, or three tuples of axes
        ``(batch, feature, *spatial)``, ``(out, in, *spatial)``, ``(batch, feature, *spatial)``.

    Returns:
      ``(lhs_spec, rhs_spec, out_spec)``, each ``(batch or out-feature axis,
      feature or in-feature axis, spatial axes...)``; the spatial axes of all
      three follow the order of the kernel's spatial letters.

    Raises:
      InvalidArgumentError: unknown or repeated letters, or mismatched spatial letters.

    >>> conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    ndim = len(lhs_shape)
    if len(rhs_shape) != ndim:
        raise ShapeError(f"{_NAME}: lhs {tuple(lhs_shape)} and rhs {tuple(rhs_shape)} need the "
                         "same rank (2 + the number of spatial dimensions).")
    if dimension_numbers is None:
        default = tuple(range(ndim))
        return default, default, default
    try:
        lhs, rhs, out = dimension_numbers
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"{_NAME}: dimension_numbers must be None or three specs (lhs, rhs, out), got "
            f"{dimension_numbers!r}") from None
    if all(isinstance(s, str) for s in (lhs, rhs, out)):
        rhs_spec = _spec_from_string("rhs", rhs, ("O", "I"), ndim, None)
        order = "".join(rhs[k] for k in rhs_spec[2:])
        return (_spec_from_string("lhs", lhs, ("N", "C"), ndim, order), rhs_spec,
                _spec_from_string("out", out, ("N", "C"), ndim, order))
    specs = []
    for name, spec in (("lhs", lhs), ("rhs", rhs), ("out", out)):
        try:
            spec = tuple(int(a) for a in spec)
        except (TypeError, ValueError):
            raise InvalidArgumentError(
                f"{_NAME}: the {name} dimension numbers {spec!r} must be a string such as "
                "'NCHW' or a tuple of axes") from None
        if sorted(spec) != list(range(ndim)):
            raise InvalidArgumentError(
                f"{_NAME}: the {name} dimension numbers {spec} must be a permutation of "
                f"0..{ndim - 1}")
        specs.append(spec)
    return tuple(specs)


def padding_pairs(padding, in_spatial, window, window_strides):
    """``padding`` ("VALID", "SAME", "SAME_LOWER" or (low, high) pairs) as pairs,
    for inputs of size ``in_spatial`` (already lhs-dilated) and windows of size
    ``window`` (already rhs-dilated): "SAME" gives ``ceil(size / stride)`` outputs,
    the odd element of padding at the end ("SAME_LOWER": at the start)."""
    nd = len(in_spatial)
    if isinstance(padding, str):
        kind = padding.upper()
        if kind == "VALID":
            return ((0, 0),) * nd
        if kind in ("SAME", "SAME_LOWER"):
            pairs = []
            for size, k, st in zip(in_spatial, window, window_strides):
                total = max((-(-size // st) - 1) * st + k - size, 0)
                small, large = total // 2, total - total // 2
                pairs.append((small, large) if kind == "SAME" else (large, small))
            return tuple(pairs)
        raise InvalidArgumentError(f"{_NAME}: padding={padding!r} must be 'VALID', 'SAME', "
                                   "'SAME_LOWER' or a sequence of (low, high) pairs.")
    try:
        pairs = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{_NAME}: padding={padding!r} must be 'VALID', 'SAME', "
                                   "'SAME_LOWER' or a sequence of (low, high) pairs.") from None
    if len(pairs) != nd:
        raise ShapeError(f"{_NAME}: padding={padding!r} needs one (low, high) pair per spatial "
                         f"dimension ({nd}).")
    return pairs


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """General n-d convolution (cross-correlation), as ``lax.conv_general_dilated``.

    Args:
      lhs: the input, rank ``n + 2`` (batch, feature and n spatial axes in the
        layout ``dimension_numbers`` gives; ``NCH..`` by default).
      rhs: the kernel, rank ``n + 2`` (out-feature, in-feature, spatial; ``OIH..``).
      window_strides: n ints, the step between windows.
      padding: "VALID", "SAME", "SAME_LOWER" or n ``(low, high)`` pairs (negative crops).
      lhs_dilation: n ints, zeros inserted between input elements (a transposed
        convolution); rhs_dilation: n ints, the kernel's dilation (atrous).
      dimension_numbers: None, three strings (``("NHWC", "HWIO", "NHWC")``) or
        three tuples of axes; see ``conv_dimension_numbers``.
      feature_group_count: the input features split into groups, each
        convolved with its share of the kernel's out-features (depthwise when
        it equals the number of input features).
      batch_group_count: the input batch split into groups, each producing its
        share of the out-features (the kernel gradient of grouped convolutions).
      precision: accepted and ignored (numpy computes exactly);
        preferred_element_type: casts the result.

    Returns:
      The output, in the layout of the out spec: batch ``N / batch_group_count``,
      features ``O``, spatial ``(padded dilated size - dilated kernel) // stride + 1``.

    Raises:
      ShapeError: feature counts that do not match (``C != I * feature_group_count``),
        a group count that does not divide, or a kernel larger than the padded input.
      InvalidArgumentError: unknown dimension-number letters or bad padding.

    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> w = np.ones((1, 1, 2, 2))
    >>> conv_general_dilated(x, w, (2, 2), "VALID")[0, 0]
    array([[10., 18.],
           [42., 50.]])
    """
    lhs_aval, rhs_aval = get_aval(lhs), get_aval(rhs)
    numbers = conv_dimension_numbers(lhs_aval.shape, rhs_aval.shape, dimension_numbers)
    nd = lhs_aval.ndim - 2
    strides = _ints("window_strides", window_strides, nd)
    lhs_dilation = _ints("lhs_dilation", lhs_dilation, nd)
    rhs_dilation = _ints("rhs_dilation", rhs_dilation, nd)
    lhs_spec, rhs_spec, _ = numbers
    dilated_in = tuple((lhs_aval.shape[a] - 1) * d + 1 if lhs_aval.shape[a] else 0
                       for a, d in zip(lhs_spec[2:], lhs_dilation))
    window = tuple((rhs_aval.shape[a] - 1) * d + 1 for a, d in zip(rhs_spec[2:], rhs_dilation))
    pads = padding_pairs(padding, dilated_in, window, strides)
    out = bind(conv_general_dilated_p, lhs, rhs, window_strides=strides, padding=pads,
               lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
               dimension_numbers=numbers, feature_group_count=int(feature_group_count),
               batch_group_count=int(batch_group_count))
    if preferred_element_type is not None and get_aval(out).dtype != np.dtype(
            preferred_element_type):
        out = elementwise.convert_element_type(out, new_dtype=np.dtype(preferred_element_type))
    return out


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``lax.conv_with_general_padding``: ``conv_general_dilated`` in the NCH../OIH.. layout.

    >>> conv_with_general_padding(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,), [(1, 1)],
    ...                           None, None)[0, 0]
    array([1., 2., 2., 1.])
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                preferred_element_type=preferred_element_type)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``lax.conv``: ``conv_general_dilated`` in the NCH../OIH.. layout, no dilation.

    >>> conv(np.ones((1, 2, 3, 3)), np.ones((4, 2, 3, 3)), (1, 1), "SAME").shape
    (1, 4, 3, 3)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding,
                                preferred_element_type=preferred_element_type)
