"""Refusing to turn a tracer into a numpy array, and the errors that say why.

numpy code reaches a traced value in two ways that would convert it: asking for
an ndarray (``numpy.asarray(x)``, or a numpy routine that converts its inputs),
and calling a numpy function funcdiff does not implement. Converting would drop
the value from the trace (abstract under jit) or silently cut its derivative,
so both raise instead. ``array`` is the tracer's ``__array__``: a value that
carries a derivative, or an abstract one, raises ``TracerArrayConversionError``
naming the user's line and what to compute with; a constant one (an integer
index, a value no differentiated input reaches) converts, losing nothing. ``unsupported`` builds the ``UnsupportedNumpyError``
that the dispatch protocols (``_numpy_dispatch``) and the operators and methods
(``_operators``) raise for what funcdiff has no implementation of, pointing to
funcdiff.numpy and ``docs/numpy-support.md``.
"""

from __future__ import annotations

import linecache
import os
import sys
from typing import Any

import numpy as np

from funcdiff.core import Tracer, user_frame
from funcdiff.errors import (ConcretizationError, TracerArrayConversionError,
                             UnsupportedNumpyError)

_FUNCDIFF_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__)) + os.sep


POINTER = ("Use the funcdiff.numpy function of the same meaning (import funcdiff.numpy "
            "as fnp), or see docs/numpy-support.md for everything funcdiff implements.")


def unsupported(what: str, hint: str = "") -> UnsupportedNumpyError:
    return UnsupportedNumpyError(
        f"{what} was called on a funcdiff tracer, but funcdiff has no implementation of it, "
        f"and converting the tracer to a numpy array would lose the trace (and the "
        f"derivative). {hint + ' ' if hint else ''}{POINTER}")


def conversion_site() -> str:
    """Where the conversion happened: the call that asked numpy for an array (the
    innermost frame outside funcdiff, a library's line included, with its source),
    and the user's line when that is elsewhere; then the array-API route if the
    call is in a library that has one."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_FUNCDIFF_DIR):
        frame = frame.f_back
    if frame is None:
        return f"at {user_frame()}"
    filename, line = frame.f_code.co_filename, frame.f_lineno
    source = linecache.getline(filename, line).strip()
    site = f"at {filename}:{line}, in {frame.f_code.co_name}" + (f": `{source}`" if source else "")
    user = _caller_outside_libraries(frame)
    if user is not None and user != f"{filename}:{line}":
        site += f", reached from {user}"
    callers, outer = [], frame
    while outer is not None and os.path.abspath(outer.f_code.co_filename).startswith(_NUMPY_DIR):
        callers.append(outer.f_code.co_name)
        outer = outer.f_back
    return site + array_api_route(filename, tuple(callers))


def _caller_outside_libraries(frame: Any) -> str | None:
    """``file:line`` of the innermost frame from ``frame`` outwards that is not an
    installed package's (the user's own code)."""
    while frame is not None:
        parts = frame.f_code.co_filename.split(os.sep)
        if "site-packages" not in parts and "dist-packages" not in parts \
                and not os.path.abspath(frame.f_code.co_filename).startswith(_FUNCDIFF_DIR):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def array_api_route(filename: str, callers: tuple = ()) -> str:
    """Whether the library at ``filename`` could take tracers through the array API (or,
    for numpy.vectorize, which loops over numbers, what batches instead); ``callers``
    are the names of the numpy functions the conversion happened in."""
    parts = os.path.abspath(filename).split(os.sep)
    if any("vectorize" in name for name in callers):
        return (". numpy.vectorize calls the function on each number: use fnp.vectorize (the "
                "same signature, batched) or fd.vmap")
    if "scipy" in parts:
        flags = sys.modules.get("scipy._lib._array_api")
        if flags is not None and getattr(flags, "SCIPY_ARRAY_API", False):
            return (". This scipy function converts its inputs even with SCIPY_ARRAY_API=1: "
                    "use its funcdiff.scipy counterpart, or write it with funcdiff.numpy")
        return (". scipy takes funcdiff's arrays through the Python array API standard in "
                "many functions: set the environment variable SCIPY_ARRAY_API=1 before "
                "scipy is imported (see docs/array-api.md), or use funcdiff.scipy")
    if "sklearn" in parts:
        return (". scikit-learn takes funcdiff's arrays through the array API standard in "
                "some functions: sklearn.set_config(array_api_dispatch=True) (see "
                "docs/array-api.md)")
    return ""


def array(self: Tracer, dtype: Any = None, copy: Any = None) -> np.ndarray:
    """The tracer's ``__array__``: its value when that is a constant (an integer or
    boolean value, or one that depends on no differentiated input), else an error.
    A cast to an integer or boolean dtype (``numpy.array(x, dtype=int)``) converts a
    value that carries a derivative too, as that derivative is zero: nothing is cut."""
    to_integers = dtype is not None and np.dtype(dtype).kind in "biu"
    if self.carries_derivative() and not to_integers:
        raise TracerArrayConversionError(
            f"numpy tried to convert the traced value {self.aval.str_short()} into a "
            f"numpy.ndarray ({conversion_site()}) inside a funcdiff transform. The value "
            "carries a derivative: the conversion would silently cut the derivative. Compute "
            "with funcdiff.numpy (fnp.array / fnp.stack build arrays from traced values); if "
            "the value is meant to be a constant, say so with fd.stop_gradient(x) and keep "
            "computing on it with funcdiff.numpy.")
    try:
        value = self.to_concrete("numpy.asarray")
    except ConcretizationError:
        raise TracerArrayConversionError(
            f"numpy tried to convert the traced value {self.aval.str_short()} into a "
            f"numpy.ndarray ({conversion_site()}). This value is abstract: under jit or "
            "make_jaxpr (or per-member under vmap) it has a shape and a dtype but no numbers "
            "yet. Compute with funcdiff.numpy (fnp.array / fnp.stack build arrays from traced "
            "values; fnp.take or x.at[] index with them; fnp.array(x, dtype=int) casts), or "
            "make the argument static (jit's static_argnums).") from None
    out = np.asarray(value, dtype)
    return out.copy() if copy and out is value else out
