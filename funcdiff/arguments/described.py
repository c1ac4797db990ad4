"""Functions that transforms return, printing what they map.

``vjp``'s pullback, ``linearize``'s linear function and ``checkpoint``'s
wrapper are ``DescribedFunction``s: calling one calls the function inside,
and its repr says what it is, for example ``vjp of loss: cotangent f64[] ->
(f64[3], f64[])``, instead of ``<function vjp.<locals>.vjp_fn>``.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from funcdiff.bridge import call_at_boundary


def signature_text(avals: Sequence[Any]) -> str:
    """``(f64[3], f32[])``: the shapes and dtypes of a list of avals."""
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def function_name(f: Any) -> str:
    return getattr(f, "__name__", None) or type(f).__name__


class DescribedFunction:
    """``fn`` with a readable repr (``text``); its name and docstring are ``fn``'s."""

    def __init__(self, fn: Callable, text: str):
        functools.update_wrapper(self, fn, updated=())
        self.fn = fn
        self.text = text

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call_at_boundary(self.fn, args, kwargs, self.text)  # results: the user's arrays

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self) -> str:
        return self.text


__all__ = ["DescribedFunction", "signature_text", "function_name"]
