"""Refusing numpy.polynomial's code paths that would compute another function for a tracer.

numpy.polynomial's evaluation functions branch on ``isinstance(x, numpy.ndarray)``:
for an array ``x`` they reshape the coefficients (or roots) so that each
element of ``x`` meets its own column; a tracer is not an ndarray, takes the
other branch, and broadcasts into a different, silently wrong, result. Both
of numpy's protocols see these functions compute with the tracer, so they ask
``check_caller`` first: it reads the calling frame only when that frame is
numpy.polynomial's, and raises where the branch would differ, pointing to
funcdiff.numpy.polynomial, whose functions give numpy's values and derivatives.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import UnsupportedNumpyError

POLYNOMIAL_DIR = os.path.join(os.path.dirname(os.path.abspath(np.__file__)), "polynomial") + os.sep
# the evaluation functions that reshape c for an ndarray x (the grid functions call them)
VALUES = frozenset({"polyval", "chebval", "legval", "hermval", "hermeval", "lagval"})


def check_caller(frame: Any) -> None:
    """Raise if ``frame`` is a numpy.polynomial function about to treat a tracer ``x``
    as a scalar where numpy would treat an array as an array."""
    if not frame.f_code.co_filename.startswith(POLYNOMIAL_DIR):
        return
    name = frame.f_code.co_name
    local = frame.f_locals
    x = local.get("x")
    if not (isinstance(x, Tracer) and x.ndim >= 1 and local.get("tensor", False)):
        return
    if name in VALUES:
        wrong = np.ndim(local.get("c")) >= 2
    else:
        wrong = name == "polyvalfromroots"
    if wrong:
        # name what the user called: the outermost public numpy.polynomial function
        caller = frame.f_back
        while caller is not None and caller.f_code.co_filename.startswith(POLYNOMIAL_DIR):
            if not caller.f_code.co_name.startswith("_"):
                frame, name = caller, caller.f_code.co_name
            caller = caller.f_back
        module = os.path.splitext(os.path.basename(frame.f_code.co_filename))[0].lstrip("_")
        raise UnsupportedNumpyError(
            f"numpy.polynomial.{module}.{name} was called with a funcdiff tracer x of shape "
            f"{x.shape}: it branches on isinstance(x, numpy.ndarray), which is False for a "
            "tracer, and would silently compute another function. Use "
            f"funcdiff.numpy.polynomial.{module}.{name}, which gives numpy's values and "
            "their derivatives (see docs/sharp-bits.md).")
