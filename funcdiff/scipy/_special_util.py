"""Argument promotion shared by funcdiff.scipy.special, funcdiff.scipy.stats and funcdiff.nn.

``floats`` turns each function's arguments into arrays or tracers of one
floating dtype, the way scipy's ufuncs promote them (integers become float64,
float32 stays float32), with errors that name the calling function; ``c``
makes a constant of an argument's dtype. ``funcdiff.scipy.special``
re-exports both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Tracer
from funcdiff.numpy import _util
from funcdiff.primitives.cards import broadcast_shapes

PY_SCALARS = (bool, int, float)


def floats(name: str, *args: Any, broadcast: bool = True) -> list[Any]:
    """``args`` promoted to one floating dtype (integers -> float64, float32 stays).

    ``name`` is the function's name in this module or a fully qualified one
    (``funcdiff.nn.relu``), used in error messages. With ``broadcast`` the
    arguments' shapes must broadcast together (else a ShapeError naming it)."""
    if not name.startswith("funcdiff."):
        name = f"funcdiff.scipy.special.{name}"
    prepared = []
    for a in args:
        if not isinstance(a, (Tracer, np.ndarray, np.generic)) and type(a) not in PY_SCALARS:
            a = _util.asarray(a, name)
        if hasattr(a, "dtype") and a.dtype.kind not in "biuf":
            dtypes.check_dtype(a.dtype, f"the input of {name}",  # raises, naming `name`
                               allow_complex=False)
        prepared.append(a)
    if broadcast and len(prepared) > 1:  # a ShapeError naming the function, not numpy's
        broadcast_shapes(name, *[_util.shape_of(a) for a in prepared])
    return _util.promote_to_float(name, *prepared)


def c(x: Any, value: float) -> np.ndarray:
    """``value`` as a 0-d constant of ``x``'s dtype."""
    return np.asarray(value, x.dtype)
