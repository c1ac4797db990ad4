"""Helpers shared by the distributions of funcdiff.scipy.stats: standardising, support, scalars."""

from __future__ import annotations

import math

import numpy as np

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy._special_util import c as _c, floats as _floats

HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
LOG_PI = math.log(math.pi)


def standardize(name: str, x, loc, scale, *params):
    """``(z, log(scale), params...)`` with z = (x - loc) / scale, all in one float dtype."""
    x, loc, scale, *params = _floats(name, x, loc, scale, *params)
    z = ew.div(ew.sub(x, loc), scale)
    return (z, ew.log(scale), *params)


def finish(x):
    """numpy scalars for scalar results, as scipy returns."""
    if type(x) is np.ndarray and x.ndim == 0:
        return x[()]
    return x


def outside_support(inside, value):
    """``value`` where ``inside``, else -inf."""
    return ew.select(inside, value, _c(value, -np.inf))
