"""funcdiff.nn.initializers: random initial weights for neural-network parameters.

Each initialiser is a function ``init(rng, shape, dtype=np.float64, **settings)``
taking a source of randomness, a shape and a floating dtype:

- ``rng`` a ``numpy.random.Generator``: the values are numpy's, a plain array;
- ``rng`` an ``fd.random`` key: the values are drawn with ``fd.random``, so the
  same key gives the same weights, also under ``jit`` and ``vmap``.

JAX's factory form works too: called with settings only,
``glorot_normal(in_axis=1, out_axis=0)`` (or ``variance_scaling(2.0, "fan_in",
"normal")``) returns ``init(key, shape, dtype)``, as ``jax.nn.initializers``'
factories do.

Fans follow JAX's convention for a dense kernel of shape ``(fan_in, fan_out)``:
the input axis is ``in_axis=-2``, the output axis ``out_axis=-1`` and every other
axis is a receptive field that multiplies both (a ``(3, 3, in, out)``
convolution kernel has ``fan_in = 9 * in``). PyTorch's ``(out, in, ...)`` layout
is ``in_axis=1, out_axis=0``.

The variance-scaling family matches ``jax.nn.initializers``: the target
variance is ``scale / fan`` and ``distribution`` is ``"truncated_normal"``
(within two standard deviations, rescaled so the variance is exactly the
target; JAX's choice), ``"normal"`` (PyTorch's ``xavier_normal_`` /
``kaiming_normal_``) or ``"uniform"``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcdiff import random
from funcdiff.errors import DTypeError, InvalidArgumentError, ShapeError

# Standard deviation of a standard normal truncated to [-2, 2]: dividing by it
# restores unit variance after truncation.
_TRUNCATED_STD = 0.87962566103423978
_MODES = ("fan_in", "fan_out", "fan_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def _is_key(rng: Any) -> bool:
    return hasattr(rng, "shape") and tuple(rng.shape) == (2,) and \
        np.dtype(rng.dtype) == np.uint32


def _check(name: str, rng: Any, shape: Any, dtype: Any) -> tuple[tuple[int, ...], np.dtype]:
    where = f"funcdiff.nn.initializers.{name}"
    if not (isinstance(rng, np.random.Generator) or _is_key(rng)):
        raise InvalidArgumentError(
            f"{where} needs a numpy.random.Generator or an fd.random key as rng, got "
            f"{type(rng).__name__}. Create one with numpy.random.default_rng(seed) or "
            "fd.random.key(seed).")
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError:
        raise ShapeError(f"{where} needs a shape as a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ShapeError(f"{where} got the negative shape {shape}")
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{where} got dtype={dtype!r}, which is not a dtype") from None
    if dtype.kind != "f":
        raise DTypeError(f"{where} makes floating weights; got dtype {dtype}. Pass a float "
                         "dtype such as numpy.float32.")
    return shape, dtype


def _standard_normal(rng: Any, shape: tuple, dtype: np.dtype) -> Any:
    if _is_key(rng):
        return random.normal(rng, shape, dtype)
    return rng.standard_normal(shape).astype(dtype)


def _uniform(rng: Any, shape: tuple, dtype: np.dtype, low: float, high: float) -> Any:
    if _is_key(rng):
        return random.uniform(rng, shape, dtype, low, high)
    return rng.uniform(low, high, shape).astype(dtype)


def _factory(init: Any, settings: dict) -> Any:
    """JAX's form: ``init`` with its settings fixed, a function of ``(key, shape, dtype)``."""
    dtype = settings.pop("dtype", np.float64)

    def configured(key, shape, dtype=dtype):
        return init(key, shape, dtype, **settings)
    configured.__name__ = configured.__qualname__ = init.__name__
    configured.__doc__ = f"``{init.__name__}`` with the settings {settings} fixed."
    return configured


def zeros(rng, shape, dtype=np.float64):
    """An array of zeros (``rng`` is accepted for a uniform signature and unused).

    >>> import numpy as np
    >>> from funcdiff.nn import initializers
    >>> initializers.zeros(np.random.default_rng(0), (2,))
    array([0., 0.])
    """
    shape, dtype = _check("zeros", rng, shape, dtype)
    return np.zeros(shape, dtype)


def ones(rng, shape, dtype=np.float64):
    """An array of ones (``rng`` is accepted for a uniform signature and unused).

    >>> import numpy as np
    >>> from funcdiff.nn import initializers
    >>> initializers.ones(np.random.default_rng(0), (2,), np.float32)
    array([1., 1.], dtype=float32)
    """
    shape, dtype = _check("ones", rng, shape, dtype)
    return np.ones(shape, dtype)


def normal(rng=None, shape=None, dtype=np.float64, *, stddev=1e-2):
    """Independent normal entries with mean 0 and standard deviation ``stddev``
    (``normal(stddev=...)`` alone is JAX's factory form).

    >>> import numpy as np
    >>> from funcdiff.nn import initializers
    >>> w = initializers.normal(np.random.default_rng(0), (1000,), stddev=2.0)
    >>> bool(1.8 < w.std() < 2.2)
    True
    """
    if rng is None and shape is None:
        return _factory(normal, {"stddev": stddev, "dtype": dtype})
    shape, dtype = _check("normal", rng, shape, dtype)
    return stddev * _standard_normal(rng, shape, dtype)


def uniform(rng=None, shape=None, dtype=np.float64, *, scale=1e-2):
    """Independent entries uniform on ``[0, scale)`` (JAX's ``uniform``; ``uniform(scale=...)``
    alone is its factory form).

    >>> import numpy as np
    >>> from funcdiff.nn import initializers
    >>> w = initializers.uniform(np.random.default_rng(0), (100,), scale=3.0)
    >>> bool(w.min() >= 0.0 and w.max() < 3.0)
    True
    """
    if rng is None and shape is None:
        return _factory(uniform, {"scale": scale, "dtype": dtype})
    shape, dtype = _check("uniform", rng, shape, dtype)
    return _uniform(rng, shape, dtype, 0.0, scale)


def compute_fans(shape: tuple[int, ...], in_axis: int = -2, out_axis: int = -1) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight shape; other axes are a receptive field.

    A 0-d shape has fans (1, 1) and a 1-d shape ``(n,)`` has fans (n, n).

    >>> compute_fans((3, 3, 16, 32))
    (144, 288)
    """
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    try:
        i, o = in_axis % len(shape), out_axis % len(shape)
    except TypeError:
        raise InvalidArgumentError(f"compute_fans needs integer in_axis and out_axis, got "
                                   f"{in_axis!r} and {out_axis!r}") from None
    if i == o or not (-len(shape) <= in_axis < len(shape) and -len(shape) <= out_axis < len(shape)):
        raise InvalidArgumentError(
            f"compute_fans: in_axis={in_axis} and out_axis={out_axis} must be two different "
            f"axes of the shape {shape}")
    receptive = math.prod(s for a, s in enumerate(shape) if a not in (i, o))
    return shape[i] * receptive, shape[o] * receptive


def variance_scaling(rng=None, shape=None, dtype=np.float64, *, scale=1.0, mode="fan_in",
                     distribution="truncated_normal", in_axis=-2, out_axis=-1):
    """Entries with mean 0 and variance ``scale / fan``.

    JAX's factory form, ``variance_scaling(scale, mode, distribution, in_axis=...,
    out_axis=..., dtype=...)`` (a number first), returns ``init(key, shape, dtype)``.

    Args:
      rng: a ``numpy.random.Generator``.
      shape: the weight shape.
      dtype: a floating dtype.
      scale: numerator of the variance.
      mode: which fan divides: 'fan_in', 'fan_out' or 'fan_avg' (their mean).
      distribution: 'truncated_normal', 'normal' or 'uniform'.
      in_axis, out_axis: the input and output axes of ``shape`` (see the module doc).

    Returns:
      A numpy array of ``shape`` and ``dtype``.

    Raises:
      InvalidArgumentError: for an unknown mode or distribution, or a bad rng.
      DTypeError: for a non-floating dtype.

    >>> import numpy as np
    >>> from funcdiff.nn import initializers
    >>> w = initializers.variance_scaling(np.random.default_rng(0), (400, 100), scale=2.0)
    >>> bool(abs(w.var() - 2.0 / 400) < 2e-4)
    True
    """
    if not (isinstance(rng, np.random.Generator) or _is_key(rng)) and (
            rng is None or isinstance(rng, (int, float))):  # JAX: variance_scaling(scale, ...)
        positional = [a for a in (rng, shape, dtype if isinstance(dtype, str) else None)
                      if a is not None]
        settings = dict(zip(("scale", "mode", "distribution"), positional))
        settings = {"scale": scale, "mode": mode, "distribution": distribution, **settings,
                    "in_axis": in_axis, "out_axis": out_axis}
        if not isinstance(dtype, str):
            settings["dtype"] = dtype
        return _factory(variance_scaling, settings)
    shape, dtype = _check("variance_scaling", rng, shape, dtype)
    if mode not in _MODES:
        raise InvalidArgumentError(
            f"funcdiff.nn.initializers.variance_scaling got mode={mode!r}; expected one of "
            f"{', '.join(map(repr, _MODES))}.")
    if distribution not in _DISTRIBUTIONS:
        raise InvalidArgumentError(
            f"funcdiff.nn.initializers.variance_scaling got distribution={distribution!r}; "
            f"expected one of {', '.join(map(repr, _DISTRIBUTIONS))}.")
    fan_in, fan_out = compute_fans(shape, in_axis, out_axis)
    fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
    variance = scale / max(1.0, fan)
    if distribution == "uniform":
        limit = math.sqrt(3.0 * variance)
        return _uniform(rng, shape, dtype, -limit, limit)
    if distribution == "normal":
        return math.sqrt(variance) * _standard_normal(rng, shape, dtype)
    if _is_key(rng):
        return (math.sqrt(variance) / _TRUNCATED_STD
                * random.truncated_normal(rng, -2.0, 2.0, shape, dtype))
    values = math.sqrt(variance) / _TRUNCATED_STD * _truncated_standard_normal(rng, shape)
    return values.astype(dtype)


def _truncated_standard_normal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal samples conditioned on [-2, 2], by rejection (95% accepted)."""
    values = rng.standard_normal(shape)
    outside = np.abs(values) > 2.0
    while outside.any():
        values[outside] = rng.standard_normal(int(outside.sum()))
        outside = np.abs(values) > 2.0
    return values


def _family(name: str, scale: float, mode: str, distribution: str, summary: str, example: str):
    def init(rng=None, shape=None, dtype=np.float64, *, in_axis=-2, out_axis=-1):
        if rng is None and shape is None:  # JAX's factory form: glorot_normal()(key, shape)
            return _factory(init, {"in_axis": in_axis, "out_axis": out_axis, "dtype": dtype})
        _check(name, rng, shape, dtype)
        return variance_scaling(rng, shape, dtype, scale=scale, mode=mode,
                                distribution=distribution, in_axis=in_axis, out_axis=out_axis)
    init.__name__ = init.__qualname__ = name
    init.__doc__ = (f"{summary}\n\n    Args: rng, shape, dtype as for ``variance_scaling``; "
                    f"in_axis, out_axis\n    locate the fans (see the module doc).\n\n"
                    f"    >>> import numpy as np\n    >>> from funcdiff.nn import initializers\n"
                    f"    >>> w = initializers.{name}(np.random.default_rng(0), (300, 100))\n"
                    f"    >>> {example}\n    True\n")
    return init


glorot_normal = _family(
    "glorot_normal", 1.0, "fan_avg", "truncated_normal",
    "Glorot (Xavier) normal initialiser: variance 2 / (fan_in + fan_out), truncated normal.",
    "bool(abs(w.var() - 2.0 / 400) < 3e-4)")
glorot_uniform = _family(
    "glorot_uniform", 1.0, "fan_avg", "uniform",
    "Glorot (Xavier) uniform initialiser: uniform on +-sqrt(6 / (fan_in + fan_out)).",
    "bool(np.abs(w).max() <= np.sqrt(6.0 / 400))")
he_normal = _family(
    "he_normal", 2.0, "fan_in", "truncated_normal",
    "He (Kaiming) normal initialiser: variance 2 / fan_in, truncated normal.",
    "bool(abs(w.var() - 2.0 / 300) < 4e-4)")
he_uniform = _family(
    "he_uniform", 2.0, "fan_in", "uniform",
    "He (Kaiming) uniform initialiser: uniform on +-sqrt(6 / fan_in).",
    "bool(np.abs(w).max() <= np.sqrt(6.0 / 300))")
lecun_normal = _family(
    "lecun_normal", 1.0, "fan_in", "truncated_normal",
    "LeCun normal initialiser: variance 1 / fan_in, truncated normal.",
    "bool(abs(w.var() - 1.0 / 300) < 2e-4)")
lecun_uniform = _family(
    "lecun_uniform", 1.0, "fan_in", "uniform",
    "LeCun uniform initialiser: uniform on +-sqrt(3 / fan_in).",
    "bool(np.abs(w).max() <= np.sqrt(3.0 / 300))")

# PyTorch's names for the same initialisers
xavier_normal, xavier_uniform = glorot_normal, glorot_uniform
kaiming_normal, kaiming_uniform = he_normal, he_uniform

__all__ = [
    "zeros", "ones", "normal", "uniform", "variance_scaling", "compute_fans",
    "glorot_normal", "glorot_uniform", "xavier_normal", "xavier_uniform", "he_normal",
    "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform",
]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
