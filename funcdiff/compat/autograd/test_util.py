"""autograd's ``check_grads``, on funcdiff's checker.

``check_grads(f, argnum=0, modes=("fwd", "rev"), order=2)(*args)`` (autograd's
form), or ``check_grads(f, x)`` (its older form, checking at once).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcdiff.test_util import check_grads as _check_grads


def check_grads(f: Callable, *args: Any, modes: Any = ("fwd", "rev"), order: int = 2) -> Any:
    """Check ``f``'s derivatives against finite differences, as autograd's does.

    >>> import funcdiff.numpy as fnp
    >>> check_grads(fnp.sin, modes=["rev"])(np.array([0.3, 1.0]))
    """
    if args and not isinstance(args[0], (int, tuple)):
        _check_grads(f, args, order=order, modes=tuple(modes))  # check_grads(f, x, ...)
        return None
    argnum = args[0] if args else 0

    def at(*xs: Any, **kwargs: Any) -> None:
        nums = argnum if isinstance(argnum, tuple) else (argnum,)

        def of_chosen(*chosen):
            full = list(xs)
            for i, v in zip(nums, chosen):
                full[i] = v
            return f(*full, **kwargs)
        _check_grads(of_chosen, tuple(np.asarray(xs[i]) if np.isscalar(xs[i]) else xs[i]
                                      for i in nums), order=order, modes=tuple(modes))
    return at


__all__ = ["check_grads"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
