"""Rules written in funcdiff operations, run on concrete values as compiled programs.

A card's derivative rule (sin's ``cos(x)``, tanh's ``1 - y*y``) is written in
funcdiff operations so that every transform can run it. Run by the eager tape
on concrete values, each of its operations still passes through ``bind``,
which on a numpy scalar or a small array costs more than numpy's own work.
``unary_factor`` (the tape's factor of a unary card) and ``on_concrete`` (an
``OutputFactor``'s derivative of the output) are the rule with a shortcut for
that case: at the first call on numpy float scalars of one type, or on float
arrays under 16 KiB of one shape and dtype, the rule is staged at their avals
and the jaxpr compiled to straight-line numpy (``compile_jaxpr`` without the
Python-float version, so each operation is the numpy call bind would make and
the results are the same bit for bit); later calls on such values run the
compiled function.

Everything else runs the rule itself: larger arrays (where the dispatch is
small next to numpy's work), complex values, tracers, mixed types, a call
while ``fd.config``'s float checks are on (bind checks each operation then), a
rule that cannot be staged (it looks at values), a call whose compiled
function raises (so that the error is the one bind reports) and, for
``on_concrete``, a call while a transform stages operations (a pullback traced
by jit: they must reach its jaxpr). The tape asks its factors only where
nothing stages (a staging transform takes every operation before the tape
sees it), so ``unary_factor`` does not check.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from funcdiff import core
from funcdiff.compiler.compile import compile_jaxpr
from funcdiff.core import dynamic, get_aval
from funcdiff.interpreters.staging import trace_to_jaxpr

# The numpy scalar types a compiled rule runs on. Not complex ones: numpy's complex
# scalar product (mul's impl, an operator) and its ufunc loop (the compiled program's
# np.multiply) can differ in the last bit.
_SCALAR_TYPES = frozenset({np.float64, np.float32, np.float16})
# Float arrays run compiled below this size, where the compiled program keeps no
# buffers between calls (the compiler recycles larger ones) and bind's dispatch is
# a large part of the work; larger ones, and more shapes per rule, run the rule.
_ARRAY_BYTES = 1 << 14
_ARRAY_SHAPES = 64


class _Programs:
    """A rule's compiled programs, by what they run on: a numpy scalar type, or the
    ``(shape, dtype)`` of each array value in turn (None where the rule runs
    itself: other values, or a rule that cannot be staged there)."""

    __slots__ = ("rule", "by_key", "arrays")

    def __init__(self, rule: Callable):
        self.rule = rule
        self.by_key: dict = {}
        self.arrays = 0  # array signatures compiled

    def make(self, values: tuple) -> Callable | None:
        """The program for values like ``values``, made now; None when the values
        are not all numpy float scalars of one type or all small float arrays, or
        the rule cannot be staged at them."""
        t = type(values[0])
        if t is np.ndarray:
            key = tuple(k for v in values for k in (v.shape, v.dtype))
            if not all(type(v) is np.ndarray and v.dtype.kind == "f"
                       and v.nbytes < _ARRAY_BYTES for v in values):
                self.by_key[key] = None
                return None
            if self.arrays >= _ARRAY_SHAPES:
                return None
            self.arrays += 1
        elif t not in _SCALAR_TYPES:
            self.by_key[t] = None
            return None
        elif any(type(v) is not t for v in values):
            return None  # mixed types: this call only
        else:
            key = t
        try:
            closed = trace_to_jaxpr(lambda *xs: [self.rule(*xs)], [get_aval(v) for v in values])
            fn = compile_jaxpr(closed, getattr(self.rule, "__name__", "rule"), fuse=False,
                               python_floats=False, numpy_inputs=True, bare=True).fn
        except Exception:  # noqa: BLE001  a rule that looks at values: it runs as written
            fn = None
        self.by_key[key] = fn
        return fn


_UNSEEN = object()


def on_concrete(rule: Callable) -> Callable:
    """``rule`` of one value, giving one value, run as a compiled program on numpy
    float scalars and small float arrays when nothing stages it (a derivative
    of the output alone, such as tanh's).

    >>> import numpy as np
    >>> from funcdiff.primitives import elementwise as ew
    >>> derivative = on_concrete(lambda y: ew.sub(np.float64(1), ew.mul(y, y)))
    >>> float(derivative(np.float64(0.5)))
    0.75
    """
    programs = _Programs(rule)
    by_key = programs.by_key

    def run(y):
        t = type(y)
        fn = by_key.get(t if t is not np.ndarray else (y.shape, y.dtype), _UNSEEN)
        if fn is _UNSEEN:
            fn = programs.make((y,))
        if fn is not None and len(dynamic) == 1 and not core.float_checks:
            try:
                return fn(y)
            except Exception:  # noqa: BLE001  the rule itself reports it, as bind does
                pass
        return rule(y)
    run.__name__ = getattr(rule, "__name__", "rule")
    run.programs = programs  # (the tests compare them with the rule as written)
    return run


def unary_factor(deriv: Callable) -> Callable:
    """The tape's factor ``(i, y, x) -> deriv(x, y)`` of a unary primitive with
    derivative ``deriv(x, y)`` (input and output), run as a compiled program on
    numpy float scalars and small float arrays (in one Python call: the factor is
    asked on every operation of scalar code).

    >>> import numpy as np
    >>> from funcdiff.primitives import elementwise as ew
    >>> factor = unary_factor(lambda x, y: ew.neg(ew.sin(x)))
    >>> float(factor(0, np.float64(0.0), np.float64(0.5))) == float(-np.sin(0.5))
    True
    """
    programs = _Programs(deriv)
    by_key = programs.by_key

    def factor(i, y, x):
        t = type(x)
        fn = by_key.get(t if t is not np.ndarray else (x.shape, x.dtype, y.shape, y.dtype),
                        _UNSEEN)
        if fn is _UNSEEN:
            fn = programs.make((x, y))
        if fn is not None and type(y) is t and not core.float_checks:
            try:
                return fn(x, y)
            except Exception:  # noqa: BLE001  the rule itself reports it, as bind does
                pass
        return deriv(x, y)
    factor.programs = programs
    return factor


__all__ = ["on_concrete", "unary_factor"]
