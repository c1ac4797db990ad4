"""funcdiff.nn: activations, normalisation, attention and losses for neural networks.

Every function is a composition of funcdiff primitives, so it is
differentiated to any order, batched by ``vmap`` and compiled by ``jit``. The
names and signatures follow ``jax.nn`` (``gelu(x, approximate=True)``,
``softmax(x, axis=-1)``, ``one_hot(x, num_classes)``); integer inputs are
converted to float64 and float32 stays float32.

Numerical care:

- ``softmax``, ``log_softmax``, ``logsumexp`` and ``cross_entropy`` shift by the
  maximum through ``stop_gradient`` (see ``funcdiff.scipy.special``): values
  and derivatives stay finite for logits of magnitude 1e3 and beyond.
- ``cross_entropy`` is fused: a ``custom_vjp`` rule returns ``softmax - targets``
  straight from the forward pass's exponentials (no one-hot array, no
  zero-filled cotangent), written in funcdiff operations so Hessians, forward
  mode, vmap and jit still work.
- ``softplus`` and ``log_sigmoid`` use two analytic branches, each evaluated at
  an input clamped to its own side, so nothing overflows and every derivative
  is exact, even at 0.
- Piecewise activations take JAX's derivatives at their kinks: ``relu'(0) = 0``,
  ``relu6'`` is 0 at 0 and 6, ``leaky_relu'(0) = 1``.

``funcdiff.nn.initializers`` holds the weight initialisers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcdiff.core import Tracer, concrete_value
from funcdiff.custom_derivatives import custom_vjp
from funcdiff.errors import (ConcretizationError, DTypeError, IndexOutOfBoundsError,
                             InvalidArgumentError, ShapeError)
from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import indexing
from funcdiff.scipy import special as _special
from funcdiff.scipy.special import _c, _floats, logsumexp
import funcdiff.numpy as fnp

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_REDUCTIONS = ("mean", "sum", "none")


def _float(name: str, x):
    return _floats(f"funcdiff.nn.{name}", x)[0]


# ---------------------------------------------------------------------------
# Activations


def relu(x):
    """The rectified linear unit ``max(x, 0)``; its derivative at 0 is 0 (as in JAX).

    >>> import numpy as np, funcdiff as fd, funcdiff.nn as nn
    >>> nn.relu(np.array([-1.0, 0.0, 2.0]))
    array([0., 0., 2.])
    >>> float(fd.grad(nn.relu)(0.0))
    0.0
    """
    x = _float("relu", x)
    return ew.select(ew.le(x, _c(x, 0)), _c(x, 0), x)  # NaN is not <= 0: it propagates


def relu6(x):
    """``min(max(x, 0), 6)``; its derivative is 0 at both kinks.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.relu6(np.array([-1.0, 3.0, 7.0]))
    array([0., 3., 6.])
    """
    x = _float("relu6", x)
    capped = ew.select(ew.ge(x, _c(x, 6)), _c(x, 6), x)
    return ew.select(ew.le(x, _c(x, 0)), _c(x, 0), capped)


def leaky_relu(x, negative_slope=0.01):
    """``x`` for ``x >= 0`` and ``negative_slope * x`` below.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.leaky_relu(np.array([-2.0, 3.0]), negative_slope=0.5)
    array([-1.,  3.])
    """
    x = _float("leaky_relu", x)
    return ew.select(ew.ge(x, _c(x, 0)), x, ew.mul(_c(x, negative_slope), x))


def _elu(x, alpha: float):
    positive = ew.gt(x, _c(x, 0))
    x_neg = ew.select(positive, _c(x, 0), x)  # expm1 of large x would overflow
    return ew.select(positive, x, ew.mul(_c(x, alpha), ew.expm1(x_neg)))


def elu(x, alpha=1.0):
    """The exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` below.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.elu(np.array([0.0, 2.0]))
    array([0., 2.])
    """
    return _elu(_float("elu", x), alpha)


def selu(x):
    """The scaled ELU ``scale * elu(x, alpha)`` with the self-normalising constants.

    >>> import numpy as np, funcdiff.nn as nn
    >>> float(nn.selu(1.0))
    1.0507009873554805
    """
    x = _float("selu", x)
    return ew.mul(_c(x, _SELU_SCALE), _elu(x, _SELU_ALPHA))


def gelu(x, approximate=True):
    """The Gaussian error linear unit ``x * Phi(x)``.

    Args:
      x: array_like.
      approximate: True (JAX's default) for the tanh approximation
        ``x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``; False for the exact
        ``x/2 erfc(-x/sqrt 2)`` (erfc keeps it accurate for negative x).

    >>> import funcdiff.nn as nn
    >>> round(float(nn.gelu(1.0, approximate=False)), 10)
    0.8413447461
    >>> round(float(nn.gelu(1.0)), 10)
    0.8411919906
    """
    x = _float("gelu", x)
    if approximate:
        inner = ew.mul(_c(x, _SQRT_2_OVER_PI),
                       ew.add(x, ew.mul(_c(x, 0.044715), ew.integer_pow(x, y=3))))
        return ew.mul(ew.mul(_c(x, 0.5), x), ew.add(_c(x, 1), ew.tanh(inner)))
    return ew.mul(ew.mul(_c(x, 0.5), x), ew.erfc(ew.mul(x, _c(x, -1 / math.sqrt(2.0)))))


def sigmoid(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``, stable for all x.

    >>> import funcdiff.nn as nn
    >>> float(nn.sigmoid(0.0))
    0.5
    """
    return ew.logistic(_float("sigmoid", x))


def silu(x):
    """The sigmoid linear unit ``x * sigmoid(x)`` (also called swish).

    >>> import funcdiff.nn as nn
    >>> float(nn.silu(0.0))
    0.0
    """
    x = _float("silu", x)
    return ew.mul(x, ew.logistic(x))


swish = silu


def softplus(x):
    """``log(1 + exp(x))`` without overflow, with exact derivatives everywhere.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.softplus(np.array([-1000.0, 1000.0]))
    array([   0., 1000.])
    """
    return _special._softplus(_float("softplus", x))


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``, stable for all x.

    >>> import funcdiff.nn as nn
    >>> float(nn.log_sigmoid(-1000.0))
    -1000.0
    """
    x = _float("log_sigmoid", x)
    return ew.neg(_special._softplus(ew.neg(x)))


# ---------------------------------------------------------------------------
# Softmax family


def _axes(name: str, axis: Any, x) -> tuple[int, ...]:
    return _util.normalize_axes(axis, len(_util.shape_of(x)), f"funcdiff.nn.{name}")


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``, shifted by the maximum.

    Finite values and derivatives for logits of any magnitude; the derivative
    in every direction sums to zero along ``axis``.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.softmax(np.array([[1000.0, 1000.0], [0.0, -1000.0]]))
    array([[0.5, 0.5],
           [1. , 0. ]])
    """
    x = _float("softmax", x)
    return _special._softmax(x, _axes("softmax", axis, x))


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis``, shifted by the maximum.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.log_softmax(np.array([0.0, -1000.0]))
    array([    0., -1000.])
    """
    x = _float("log_softmax", x)
    return _special._log_softmax(x, _axes("log_softmax", axis, x))


def one_hot(x, num_classes, *, dtype=np.float64, axis=-1):
    """One-hot encoding of integer class indices (a new axis of size ``num_classes``).

    Indices outside ``[0, num_classes)`` give all-zero rows (as in JAX).

    Args:
      x: integer array of class indices.
      num_classes: a positive Python int.
      dtype: dtype of the result.
      axis: where the new axis goes in the result.

    Raises:
      InvalidArgumentError: for a num_classes that is not a positive int.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.one_hot(np.array([0, 2]), 3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
    """
    if isinstance(num_classes, (bool, np.bool_)) or not isinstance(
            num_classes, (int, np.integer)) or num_classes < 1:
        raise InvalidArgumentError(
            f"funcdiff.nn.one_hot needs num_classes as a positive Python int, got "
            f"{num_classes!r}.")
    if not isinstance(x, (Tracer, np.ndarray, np.generic)):
        x = _util.asarray(x, "funcdiff.nn.one_hot")
    ndim = len(_util.shape_of(x)) + 1
    axis = _util.normalize_axis(axis, ndim, "funcdiff.nn.one_hot")
    classes = np.arange(int(num_classes)).reshape([-1 if i == axis else 1 for i in range(ndim)])
    hits = fnp.equal(fnp.expand_dims(x, axis), classes)
    return fnp.astype(hits, np.dtype(dtype))


# ---------------------------------------------------------------------------
# Losses


# The fused kernels work on (M, K) logits with the classes last. Their rules
# use what the forward pass already holds: the shifted exponentials e and their
# row sums, so the gradient e * (ct / total) - ct * targets costs one pass plus,
# for integer labels, a scatter of M values, with no one-hot array and no
# zero-filled cotangent. The rules are written in funcdiff operations, so the
# losses are differentiable again (Hessians, forward mode, vmap, jit).


def _shifted_exp(logits):
    shifted = ew.sub(logits, _special._max_shift(logits, (1,)))
    e = ew.exp(shifted)
    return shifted, e, fnp.sum(e, axis=1, keepdims=True)


def _labels_loss(shifted, total, labels, smoothing: float):
    """lse - (1 - eps) s[label] - eps mean(s), per row."""
    picked = fnp.squeeze(fnp.take_along_axis(shifted, fnp.expand_dims(labels, 1), axis=1), 1)
    log_total = fnp.squeeze(ew.log(total), 1)
    if not smoothing:
        return ew.sub(log_total, picked)
    rest = ew.add(ew.mul(_c(picked, 1 - smoothing), picked),
                  ew.mul(_c(picked, smoothing), fnp.mean(shifted, axis=1)))
    return ew.sub(log_total, rest)


def _xent_labels_fwd(logits, labels, smoothing):
    shifted, e, total = _shifted_exp(logits)
    return _labels_loss(shifted, total, labels, smoothing), (e, total, labels)


def _xent_labels_bwd(smoothing, res, ct):
    e, total, labels = res
    rows, classes = _util.shape_of(e)
    ct_col = fnp.expand_dims(ct, 1)
    g = ew.mul(e, ew.div(ct_col, total))  # softmax * ct
    if smoothing:
        g = ew.sub(g, ew.mul(_c(g, smoothing / classes), ct_col))
    flat = fnp.add(labels, np.arange(rows, dtype=np.int64) * classes)
    hit = ew.neg(ew.mul(_c(ct, 1 - smoothing), ct)) if smoothing else ew.neg(ct)
    g = indexing.scatter_add(fnp.reshape(g, (rows * classes,)), flat, hit, axis=0)
    return fnp.reshape(g, (rows, classes)), None


@custom_vjp(nondiff_argnums=(2,))
def _xent_labels(logits, labels, smoothing):
    shifted, _, total = _shifted_exp(logits)
    return _labels_loss(shifted, total, labels, smoothing)


_xent_labels.defvjp(_xent_labels_fwd, _xent_labels_bwd)


def _targets_loss(shifted, total, targets):
    """-sum(y * log_softmax) = sum(y) lse - sum(y * s), per row. safe_mul: a zero target
    against a -inf logit (a masked class) adds 0."""
    mass = fnp.sum(targets, axis=1)
    log_total = fnp.squeeze(ew.log(total), 1)
    return ew.sub(ew.mul(mass, log_total), fnp.sum(ew.safe_mul(targets, shifted), axis=1))


def _xent_targets_fwd(logits, targets):
    shifted, e, total = _shifted_exp(logits)
    return _targets_loss(shifted, total, targets), (shifted, e, total, targets)


def _xent_targets_bwd(res, ct):
    shifted, e, total, targets = res
    ct_col = fnp.expand_dims(ct, 1)
    mass = fnp.sum(targets, axis=1, keepdims=True)
    d_logits = ew.sub(ew.mul(e, ew.div(ew.mul(ct_col, mass), total)), ew.mul(targets, ct_col))
    log_probs = ew.sub(shifted, ew.log(total))
    return d_logits, ew.neg(ew.mul(ct_col, log_probs))


@custom_vjp
def _xent_targets(logits, targets):
    shifted, _, total = _shifted_exp(logits)
    return _targets_loss(shifted, total, targets)


_xent_targets.defvjp(_xent_targets_fwd, _xent_targets_bwd)


def _check_labels(name: str, labels, num_classes: int) -> None:
    """Integer labels must index a class; checked when their values are concrete."""
    try:
        values = concrete_value(labels, name)
    except ConcretizationError:
        return  # traced labels: the gather's own semantics apply
    values = np.asarray(values)
    if values.size and (values.min() < 0 or values.max() >= num_classes):
        bad = values[(values < 0) | (values >= num_classes)].flat[0]
        raise IndexOutOfBoundsError(
            f"{name}: the label {bad} is not a class index in [0, {num_classes}) for logits "
            f"with {num_classes} classes along the class axis.")


def cross_entropy(logits, labels, *, axis=-1, reduction="mean", label_smoothing=0.0):
    """Softmax cross-entropy between ``logits`` and integer labels or target probabilities.

    Fused and numerically stable: one max-shifted pass computes the loss, and a
    custom derivative rule gives the gradient with respect to the logits as
    exactly ``softmax(logits) - targets`` per example (divided by the number of
    examples for ``reduction='mean'``), finite for logits of any magnitude.

    Args:
      logits: float array with the classes along ``axis``.
      labels: integer class indices of shape ``logits.shape`` without ``axis``,
        or target probabilities of the same shape as ``logits`` (differentiable).
      axis: the class axis.
      reduction: 'mean' (over all examples), 'sum' or 'none' (per-example losses).
      label_smoothing: eps in [0, 1): targets become ``(1 - eps) targets + eps / K``.

    Returns:
      The loss: a scalar, or per-example losses for ``reduction='none'``.

    Raises:
      InvalidArgumentError: for an unknown reduction or a label_smoothing outside [0, 1).
      ShapeError: if the labels' shape does not match the logits.
      DTypeError: for boolean labels.
      IndexOutOfBoundsError: for a concrete integer label outside [0, K).

    >>> import numpy as np, funcdiff as fd, funcdiff.nn as nn
    >>> logits = np.array([[1000.0, -1000.0], [0.0, 0.0]])
    >>> labels = np.array([1, 0])
    >>> bool(nn.cross_entropy(logits, labels, reduction="sum") == 2000.0 + np.log(2.0))
    True
    >>> fd.grad(nn.cross_entropy)(logits, labels)   # (softmax - onehot) / batch
    array([[ 0.5 , -0.5 ],
           [-0.25,  0.25]])
    """
    name = "funcdiff.nn.cross_entropy"
    if reduction not in _REDUCTIONS:
        raise InvalidArgumentError(
            f"{name} got reduction={reduction!r}; expected one of 'mean', 'sum' or 'none'.")
    if not 0.0 <= float(label_smoothing) < 1.0:
        raise InvalidArgumentError(
            f"{name} needs label_smoothing in [0, 1), got {label_smoothing!r}.")
    smoothing = float(label_smoothing)
    logits = _float("cross_entropy", logits)
    if not isinstance(labels, (Tracer, np.ndarray, np.generic)):
        labels = _util.asarray(labels, name)
    shape = _util.shape_of(logits)
    if not shape:
        raise ShapeError(f"{name} needs logits with a class axis, got a 0-d array.")
    axis = _util.normalize_axis(axis, len(shape), name)
    num_classes = shape[axis]
    batch_shape = shape[:axis] + shape[axis + 1:]
    rows = math.prod(batch_shape)
    label_shape = _util.shape_of(labels)
    kind = labels.dtype.kind
    if kind not in "iuf":
        raise DTypeError(
            f"{name} needs integer class indices or float target probabilities as labels, "
            f"got dtype {labels.dtype}.")
    if kind in "iu" and label_shape != batch_shape:
        raise ShapeError(
            f"{name}: integer labels of shape {label_shape} do not match logits of shape "
            f"{shape} with the classes along axis {axis}; expected labels of shape "
            f"{batch_shape} (or probability targets of shape {shape}).")
    if kind == "f" and label_shape != shape:
        raise ShapeError(
            f"{name}: probability targets of shape {label_shape} do not match logits of "
            f"shape {shape}; give targets of the logits' shape, or integer class indices "
            f"of shape {batch_shape}.")
    logits_2d = fnp.reshape(fnp.moveaxis(logits, axis, -1), (rows, num_classes))
    if kind in "iu":
        _check_labels(name, labels, num_classes)
        labels_1d = fnp.reshape(_util.cast(labels, np.dtype(np.int64)), (rows,))
        losses = _xent_labels(logits_2d, labels_1d, smoothing)
    else:
        targets = _util.cast(labels, logits.dtype)
        if smoothing:
            targets = ew.add(ew.mul(_c(targets, 1 - smoothing), targets),
                             _c(targets, smoothing / num_classes))
        targets_2d = fnp.reshape(fnp.moveaxis(targets, axis, -1), (rows, num_classes))
        losses = _xent_targets(logits_2d, targets_2d)
    if reduction == "sum":
        return fnp.sum(losses)
    if reduction == "mean":
        return fnp.mean(losses)
    return fnp.reshape(losses, batch_shape)


# ---------------------------------------------------------------------------
# Normalisation


def _affine(name: str, y, scale, offset):
    try:
        if scale is not None:
            y = fnp.multiply(y, scale)
        if offset is not None:
            y = fnp.add(y, offset)
    except ShapeError:
        raise ShapeError(
            f"funcdiff.nn.{name}: scale of shape {None if scale is None else _util.shape_of(scale)}"
            f" and offset of shape {None if offset is None else _util.shape_of(offset)} do not "
            f"broadcast against the input of shape {_util.shape_of(y)}.") from None
    return y


def layer_norm(x, axis=-1, eps=1e-5, scale=None, offset=None):
    """Normalise ``x`` to zero mean and unit variance over ``axis``, then scale and shift.

    ``y = (x - mean) / sqrt(var + eps) * scale + offset`` with the biased
    variance. Without scale and offset the result is invariant to adding a
    constant along ``axis``, so gradients through it are orthogonal to that
    direction (and, with eps = 0, to the normalised input).

    Args:
      x: array_like.
      axis: int or tuple of ints to normalise over.
      eps: added to the variance.
      scale, offset: optional arrays broadcast against ``x`` (shape ``x.shape[axis]``
        for the last axis).

    Raises:
      AxisError: for an axis out of range.
      ShapeError: if scale or offset do not broadcast against x.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.layer_norm(np.array([1.0, 2.0, 3.0]), eps=0.0)
    array([-1.22474487,  0.        ,  1.22474487])
    """
    x = _float("layer_norm", x)
    axes = _axes("layer_norm", axis, x)
    centred = ew.sub(x, fnp.mean(x, axis=axes, keepdims=True))
    var = fnp.mean(ew.mul(centred, centred), axis=axes, keepdims=True)
    y = ew.mul(centred, ew.rsqrt(ew.add(var, _c(var, eps))))
    return _affine("layer_norm", y, scale, offset)


def rms_norm(x, axis=-1, eps=1e-6, scale=None):
    """Divide ``x`` by its root mean square over ``axis``: ``x / sqrt(mean(x**2) + eps) * scale``.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.rms_norm(np.array([3.0, -3.0, 3.0, 3.0]), eps=0.0)
    array([ 1., -1.,  1.,  1.])
    """
    x = _float("rms_norm", x)
    axes = _axes("rms_norm", axis, x)
    mean_square = fnp.mean(ew.mul(x, x), axis=axes, keepdims=True)
    y = ew.mul(x, ew.rsqrt(ew.add(mean_square, _c(mean_square, eps))))
    return _affine("rms_norm", y, scale, None)


# ---------------------------------------------------------------------------
# Attention


def dot_product_attention(q, k, v, mask=None, causal=False, scale=None):
    """Scaled dot-product attention ``softmax(q k^T * scale + masking) v``.

    Layout ``(..., T, D)``: leading axes (batch, heads) broadcast like
    ``matmul``. The softmax over keys is shifted by its maximum; masked scores
    are replaced by a large negative finite number (as in JAX), so a row with
    every key masked attends uniformly instead of giving NaN, and masked
    positions get exact zero gradients.

    Args:
      q: queries of shape (..., Tq, D).
      k: keys of shape (..., Tk, D).
      v: values of shape (..., Tk, Dv).
      mask: optional boolean array broadcastable to (..., Tq, Tk); True keeps a key.
      causal: if true, query i attends only to keys j <= i (top-left aligned, as
        in JAX and PyTorch).
      scale: multiplier of the scores; default ``1 / sqrt(D)``.

    Returns:
      The attended values, of shape (..., Tq, Dv).

    Raises:
      ShapeError: for inconsistent shapes.
      DTypeError: for a non-boolean mask.

    >>> import numpy as np, funcdiff.nn as nn
    >>> q = k = np.eye(2)
    >>> v = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> np.round(nn.dot_product_attention(q, k, v, causal=True), 3)
    array([[1.  , 0.  ],
           [0.33, 0.67]])
    """
    name = "funcdiff.nn.dot_product_attention"
    q, k, v = _floats(name, q, k, v, broadcast=False)
    qs, ks, vs = (_util.shape_of(a) for a in (q, k, v))
    if len(qs) < 2 or len(ks) < 2 or len(vs) < 2:
        raise ShapeError(f"{name} needs q, k and v of rank >= 2 (..., T, D), got shapes "
                         f"{qs}, {ks} and {vs}.")
    if qs[-1] != ks[-1] or ks[-2] != vs[-2]:
        raise ShapeError(
            f"{name}: q {qs} and k {ks} must share the feature size D (last axis), and k and "
            f"v {vs} the number of keys Tk (second-to-last axis).")
    scale = 1.0 / math.sqrt(qs[-1]) if scale is None else float(scale)
    try:
        scores = fnp.multiply(fnp.matmul(q, fnp.swapaxes(k, -1, -2)), _c(q, scale))
    except ShapeError as e:
        raise ShapeError(f"{name}: the leading axes of q {qs} and k {ks} do not broadcast "
                         f"({e})") from None
    keep = None
    if mask is not None:
        if not isinstance(mask, (Tracer, np.ndarray, np.generic)):
            mask = _util.asarray(mask, name)
        if mask.dtype != np.bool_:
            raise DTypeError(f"{name} needs a boolean mask (True keeps a key), got dtype "
                             f"{mask.dtype}; compare first, e.g. mask != 0.")
        keep = mask
    if causal:
        tq, tk = qs[-2], ks[-2]
        lower = np.tril(np.ones((tq, tk), dtype=bool))
        keep = lower if keep is None else fnp.logical_and(keep, lower)
    if keep is not None:
        big_negative = _c(scores, -0.7 * np.finfo(scores.dtype).max)
        try:
            scores = fnp.where(keep, scores, big_negative)
        except ShapeError:
            raise ShapeError(f"{name}: the mask of shape {_util.shape_of(keep)} does not "
                             f"broadcast to the scores of shape "
                             f"{_util.shape_of(scores)}.") from None
    weights = _special._softmax(scores, (len(_util.shape_of(scores)) - 1,))
    return fnp.matmul(weights, v)


from funcdiff.nn import initializers  # noqa: E402  (a submodule of this package)

__all__ = [
    "relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "sigmoid", "silu", "swish",
    "softplus", "log_sigmoid", "softmax", "log_softmax", "logsumexp", "one_hot",
    "cross_entropy", "layer_norm", "rms_norm", "dot_product_attention", "initializers",
]
