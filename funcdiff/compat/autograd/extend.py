"""autograd's ``primitive``, ``defvjp`` and ``defjvp``, on funcdiff's custom rules.

``@primitive`` marks a function whose derivative is given by hand;
``defvjp(f, maker_0, maker_1, ...)`` gives, per positional argument, a maker
``maker_i(ans, *args, **kwargs) -> (lambda g: cotangent of argument i)``, and
``defjvp(f, maker_0, ...)`` makers ``maker_i(g, ans, *args, **kwargs) -> tangent``
(``None`` skips an argument: it gets a zero derivative). Calls become
``fd.custom_vjp`` / ``fd.custom_jvp`` functions (forward-mode rules take
precedence, and reverse mode transposes them); a primitive without rules is
differentiated through its body, as any funcdiff code.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from funcdiff.core import get_aval
from funcdiff.custom_derivatives import custom_jvp, custom_vjp


class Primitive:
    """A function with hand-written derivative rules (autograd's ``primitive``)."""

    def __init__(self, fun: Callable):
        self.fun = fun
        self.vjp_makers: dict[int, Callable] = {}
        self.jvp_makers: dict[int, Callable] = {}
        functools.update_wrapper(self, fun)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp_makers:
            return self._with_jvp(kwargs)(*args)
        if self.vjp_makers:
            return self._with_vjp(kwargs)(*args)
        return self.fun(*args, **kwargs)

    def _with_vjp(self, kwargs: dict) -> Callable:
        fun, makers = self.fun, self.vjp_makers
        f = custom_vjp(lambda *a: fun(*a, **kwargs))

        def fwd(*a):
            ans = fun(*a, **kwargs)
            return ans, (ans, a)

        def bwd(res, g):
            ans, a = res
            return tuple(makers[i](ans, *a, **kwargs)(g) if i in makers else _zero_like(x)
                         for i, x in enumerate(a))
        f.defvjp(fwd, bwd)
        return f

    def _with_jvp(self, kwargs: dict) -> Callable:
        fun, makers = self.fun, self.jvp_makers
        f = custom_jvp(lambda *a: fun(*a, **kwargs))

        def rule(primals, tangents):
            ans = fun(*primals, **kwargs)
            out = None
            for i, t in enumerate(tangents):
                if i in makers:
                    term = makers[i](t, ans, *primals, **kwargs)
                    out = term if out is None else out + term
            return ans, _zero_like(ans) if out is None else out
        f.defjvp(rule)
        return f

    def __repr__(self) -> str:
        return f"autograd primitive {getattr(self.fun, '__name__', self.fun)!r}"


def _zero_like(x: Any) -> Any:
    return np.zeros(np.shape(x), get_aval(x).dtype)


def primitive(fun: Callable) -> Primitive:
    """Mark ``fun`` as a primitive whose derivatives ``defvjp``/``defjvp`` give.

    >>> @primitive
    ... def logsumexp(x):
    ...     m = np.max(x)
    ...     return m + np.log(np.sum(np.exp(x - m)))
    >>> defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
    >>> import funcdiff as fd
    >>> fd.grad(logsumexp)(np.zeros(2)).tolist()
    [0.5, 0.5]
    """
    return Primitive(fun)


def defvjp(fun: Primitive, *makers: Callable | None, argnums: Any = None) -> None:
    """Give ``fun`` reverse-mode rules, one maker per positional argument (or per
    entry of ``argnums``)."""
    for i, maker in zip(range(len(makers)) if argnums is None else argnums, makers):
        if maker is not None:
            fun.vjp_makers[i] = maker


def defjvp(fun: Primitive, *makers: Callable | None, argnums: Any = None) -> None:
    """Give ``fun`` forward-mode rules, one maker per positional argument."""
    for i, maker in zip(range(len(makers)) if argnums is None else argnums, makers):
        if maker is not None:
            fun.jvp_makers[i] = maker


__all__ = ["primitive", "defvjp", "defjvp", "Primitive"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
