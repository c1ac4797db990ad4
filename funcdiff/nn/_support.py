"""Argument handling shared by the functions of funcdiff.nn.

``_float`` prepares a function's input as a floating array (integers become
float64, float32 stays float32) and ``normalize_axes`` turns its ``axis`` argument into a
sorted tuple of non-negative axes; both name the calling ``funcdiff.nn``
function in the errors they raise.
"""

from __future__ import annotations

from typing import Any

from funcdiff.numpy import _util
from funcdiff.scipy._special_util import floats


def _float(name: str, x):
    return floats(f"funcdiff.nn.{name}", x)[0]


def normalize_axes(name: str, axis: Any, x) -> tuple[int, ...]:
    return _util.normalize_axes(axis, len(_util.shape_of(x)), f"funcdiff.nn.{name}")
