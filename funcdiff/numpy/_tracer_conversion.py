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

from typing import Any

import numpy as np

from funcdiff.core import Tracer, user_frame
from funcdiff.errors import (ConcretizationError, TracerArrayConversionError,
                             UnsupportedNumpyError)

POINTER = ("Use the funcdiff.numpy function of the same meaning (import funcdiff.numpy "
            "as fnp), or see docs/numpy-support.md for everything funcdiff implements.")


def unsupported(what: str, hint: str = "") -> UnsupportedNumpyError:
    return UnsupportedNumpyError(
        f"{what} was called on a funcdiff tracer, but funcdiff has no implementation of it, "
        f"and converting the tracer to a numpy array would lose the trace (and the "
        f"derivative). {hint + ' ' if hint else ''}{POINTER}")


def array(self: Tracer, dtype: Any = None, copy: Any = None) -> np.ndarray:
    """The tracer's ``__array__``: its value when that is a constant (an integer or
    boolean value, or one that depends on no differentiated input), else an error."""
    if self.carries_derivative():
        raise TracerArrayConversionError(
            f"numpy tried to convert the traced value {self.aval.str_short()} into a "
            f"numpy.ndarray (at {user_frame()}: numpy.asarray, numpy.array, or a numpy routine "
            "that converts its inputs) inside a funcdiff transform. The value carries a "
            "derivative: the conversion would silently cut the derivative. Compute with funcdiff.numpy "
            "(fnp.array / fnp.stack build arrays from traced values); if the value is meant "
            "to be a constant, say so with fd.stop_gradient(x) and keep computing on it with "
            "funcdiff.numpy.")
    try:
        value = self.to_concrete("numpy.asarray")
    except ConcretizationError:
        raise TracerArrayConversionError(
            f"numpy tried to convert the traced value {self.aval.str_short()} into a "
            f"numpy.ndarray (at {user_frame()}: numpy.asarray, numpy.array, or a numpy routine "
            "that converts its inputs). This value is abstract: under jit or make_jaxpr (or "
            "per-member under vmap) it has a shape and a dtype but no numbers yet. Compute "
            "with funcdiff.numpy (fnp.array / fnp.stack build arrays from traced values; "
            "fnp.take or x.at[] index with them), or make the argument static (jit's "
            "static_argnums).") from None
    out = np.asarray(value, dtype)
    return out.copy() if copy and out is value else out
