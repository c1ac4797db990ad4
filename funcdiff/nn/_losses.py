"""The losses of funcdiff.nn: the fused softmax ``cross_entropy``.

``cross_entropy`` takes integer labels or target probabilities along any class
axis, with optional label smoothing and a ``reduction``. It moves the classes
last and calls one of two ``custom_vjp`` kernels, for labels or for targets,
whose forward pass computes the max-shifted loss and whose backward pass returns
``softmax - targets`` from the forward pass's exponentials.
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff.core import Tracer, concrete_value
from funcdiff.custom_derivatives import custom_vjp
from funcdiff.errors import (ConcretizationError, DTypeError, IndexOutOfBoundsError,
                             InvalidArgumentError, ShapeError)
from funcdiff.nn._support import _float
from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import indexing
from funcdiff.scipy import special as _special
from funcdiff.scipy._special_util import c
import funcdiff.numpy as fnp

REDUCTIONS = ("mean", "sum", "none")


# The fused kernels work on (M, K) logits with the classes last. Their rules
# use what the forward pass already holds: the shifted exponentials e and their
# row sums, so the gradient e * (ct / total) - ct * targets costs one pass plus,
# for integer labels, a scatter of M values, with no one-hot array and no
# zero-filled cotangent. The rules are written in funcdiff operations, so the
# losses are differentiable again (Hessians, forward mode, vmap, jit).


def shifted_exp(logits):
    shifted = ew.sub(logits, _special._max_shift(logits, (1,)))
    e = ew.exp(shifted)
    return shifted, e, fnp.sum(e, axis=1, keepdims=True)


def labels_loss(shifted, total, labels, smoothing: float):
    """lse - (1 - eps) s[label] - eps mean(s), per row."""
    picked = fnp.squeeze(fnp.take_along_axis(shifted, fnp.expand_dims(labels, 1), axis=1), 1)
    log_total = fnp.squeeze(ew.log(total), 1)
    if not smoothing:
        return ew.sub(log_total, picked)
    rest = ew.add(ew.mul(c(picked, 1 - smoothing), picked),
                  ew.mul(c(picked, smoothing), fnp.mean(shifted, axis=1)))
    return ew.sub(log_total, rest)


def xent_labels_fwd(logits, labels, smoothing):
    shifted, e, total = shifted_exp(logits)
    return labels_loss(shifted, total, labels, smoothing), (e, total, labels)


def xent_labels_bwd(smoothing, res, ct):
    e, total, labels = res
    rows, classes = _util.shape_of(e)
    ct_col = fnp.expand_dims(ct, 1)
    g = ew.mul(e, ew.div(ct_col, total))  # softmax * ct
    if smoothing:
        g = ew.sub(g, ew.mul(c(g, smoothing / classes), ct_col))
    flat = fnp.add(labels, np.arange(rows, dtype=np.int64) * classes)
    hit = ew.neg(ew.mul(c(ct, 1 - smoothing), ct)) if smoothing else ew.neg(ct)
    g = indexing.scatter_add(fnp.reshape(g, (rows * classes,)), flat, hit, axis=0)
    return fnp.reshape(g, (rows, classes)), None


@custom_vjp(nondiff_argnums=(2,))
def xent_labels(logits, labels, smoothing):
    shifted, _, total = shifted_exp(logits)
    return labels_loss(shifted, total, labels, smoothing)


xent_labels.defvjp(xent_labels_fwd, xent_labels_bwd)


def targets_loss(shifted, total, targets):
    """-sum(y * log_softmax) = sum(y) lse - sum(y * s), per row. safe_mul: a zero target
    against a -inf logit (a masked class) adds 0."""
    mass = fnp.sum(targets, axis=1)
    log_total = fnp.squeeze(ew.log(total), 1)
    return ew.sub(ew.mul(mass, log_total), fnp.sum(ew.safe_mul(targets, shifted), axis=1))


def xent_targets_fwd(logits, targets):
    shifted, e, total = shifted_exp(logits)
    return targets_loss(shifted, total, targets), (shifted, e, total, targets)


def xent_targets_bwd(res, ct):
    shifted, e, total, targets = res
    ct_col = fnp.expand_dims(ct, 1)
    mass = fnp.sum(targets, axis=1, keepdims=True)
    d_logits = ew.sub(ew.mul(e, ew.div(ew.mul(ct_col, mass), total)), ew.mul(targets, ct_col))
    log_probs = ew.sub(shifted, ew.log(total))
    return d_logits, ew.neg(ew.mul(ct_col, log_probs))


@custom_vjp
def xent_targets(logits, targets):
    shifted, _, total = shifted_exp(logits)
    return targets_loss(shifted, total, targets)


xent_targets.defvjp(xent_targets_fwd, xent_targets_bwd)


def check_labels(name: str, labels, num_classes: int) -> None:
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
    if reduction not in REDUCTIONS:
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
        check_labels(name, labels, num_classes)
        labels_1d = fnp.reshape(_util.cast(labels, np.dtype(np.int64)), (rows,))
        losses = xent_labels(logits_2d, labels_1d, smoothing)
    else:
        targets = _util.cast(labels, logits.dtype)
        if smoothing:
            targets = ew.add(ew.mul(c(targets, 1 - smoothing), targets),
                             c(targets, smoothing / num_classes))
        targets_2d = fnp.reshape(fnp.moveaxis(targets, axis, -1), (rows, num_classes))
        losses = xent_targets(logits_2d, targets_2d)
    if reduction == "sum":
        return fnp.sum(losses)
    if reduction == "mean":
        return fnp.mean(losses)
    return fnp.reshape(losses, batch_shape)
