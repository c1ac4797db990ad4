"""``fd.debug``: looking at values while a transformed program runs.

``fd.debug.print(fmt, *args, **kwargs)`` prints ``fmt.format(...)`` of the
values each time the program runs: eagerly at once, under ``jit`` on every
call of the compiled program (a plain ``print`` there runs once, while
tracing, and shows tracers). It prints primal values, never changes a
derivative, and under ``vmap`` prints the batched arrays.
"""

from __future__ import annotations

from typing import Any

from funcdiff.primitives.debug_print import debug_print


def print(fmt: str, *args: Any, **kwargs: Any) -> None:  # noqa: A001  (JAX's name)
    """Print ``fmt.format(*args, **kwargs)`` with the values of this run.

    Args:
      fmt: a ``str.format`` string.
      *args, **kwargs: arrays, scalars or pytrees of them, traced or not.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> f = fd.jit(lambda x: fd.debug.print("x = {}", x) or x * 2)
    >>> _ = f(np.arange(2.0))
    x = [0. 1.]
    >>> _ = f(np.ones(2))
    x = [1. 1.]
    """
    debug_print(fmt, *args, **kwargs)


__all__ = ["print"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
