"""Elementwise questions about imaginary parts: iscomplex, isreal, real_if_close.

``iscomplex`` and ``isreal`` compare the imaginary part with zero, so they trace,
batch and compile (their boolean results have no derivative). ``real_if_close``
returns a different dtype depending on the numbers, so it decides from a
concrete value: eagerly (inside ``grad`` too, where the real part it returns
stays differentiable) it looks at the value; under ``jit`` or ``vmap``, where
there is none, it refuses by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import ConcretizationError
import funcdiff.numpy as fnp  # used at call time (this module is part of it)


def iscomplex(x: Any) -> Any:
    """Elementwise: whether the imaginary part is nonzero (numpy.iscomplex).

    Args:
      x: array_like or tracer.

    Returns:
      A boolean array of ``x``'s shape (False everywhere for a real dtype).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.iscomplex(np.array([1 + 1j, 1 + 0j, 4.5]))
    array([ True, False, False])
    """
    return fnp.not_equal(fnp.imag(x), 0)


def isreal(x: Any) -> Any:
    """Elementwise: whether the imaginary part is zero (numpy.isreal).

    Args:
      x: array_like or tracer.

    Returns:
      A boolean array of ``x``'s shape (True everywhere for a real dtype).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.isreal(np.array([1 + 1j, 1 + 0j, 4.5]))
    array([False,  True,  True])
    """
    return fnp.equal(fnp.imag(x), 0)


def real_if_close(a: Any, tol: float = 100) -> Any:
    """The real part if every imaginary part is within ``tol`` (numpy.real_if_close).

    Args:
      a: array_like or tracer.
      tol: the bound on ``|imag|``; above 1 it counts machine epsilons of ``a``'s dtype.

    Returns:
      ``fnp.real(a)`` when every ``|imag(a)| < tol``, else ``a`` unchanged (also for
      a real ``a``). The real part is differentiable.

    Raises:
      ConcretizationError: for a traced complex ``a`` with no concrete value (under
        ``jit`` or ``vmap``), as the result's dtype depends on the numbers.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.real_if_close(np.array([2.1 + 1e-14j, 5.2 + 3e-15j]))
    array([2.1, 5.2])
    >>> fnp.real_if_close(np.array([2.1 + 4e-13j]))
    array([2.1+4.e-13j])
    """
    if not isinstance(a, Tracer):
        return np.real_if_close(a, tol=tol)
    if a.aval.dtype.kind != "c":
        return a
    try:
        value = a.to_concrete("real_if_close")
    except ConcretizationError:
        raise ConcretizationError(
            f"funcdiff.numpy.real_if_close got the abstract value {a.aval.str_short()} (under "
            "jit, make_jaxpr or vmap): whether it returns the real part depends on the "
            "numbers, which are not known yet. Call fnp.real(a) when the imaginary part is "
            "known to be negligible, or call real_if_close outside jit.") from None
    if tol > 1:
        tol = np.finfo(a.aval.dtype).eps * tol
    return fnp.real(a) if np.all(np.abs(np.imag(value)) < tol) else a


__all__ = ["iscomplex", "isreal", "real_if_close"]
