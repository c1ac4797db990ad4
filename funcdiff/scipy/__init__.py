"""funcdiff.scipy: parts of SciPy, differentiable in every mode, built on funcdiff.

``funcdiff.scipy.linalg`` (triangular, Cholesky and LU solvers, ``expm``),
``funcdiff.scipy.signal`` (convolutions) and ``funcdiff.scipy.integrate``
(``odeint``, ``solve_ivp``) are always here; ``special`` and ``stats`` are imported when their modules are
installed, so each submodule plugs in on its own. SciPy itself is not needed.

>>> import numpy as np
>>> from funcdiff.scipy import linalg
>>> linalg.solve_triangular(np.array([[2., 0.], [1., 1.]]), np.array([2., 3.]), lower=True)
array([1., 2.])
"""

import importlib
import importlib.util

from funcdiff.scipy import integrate, linalg, signal  # noqa: F401

__all__ = ["integrate", "linalg", "signal"]

for _name in ("special", "stats"):  # stats builds on special, so special comes first
    if importlib.util.find_spec(f"funcdiff.scipy.{_name}") is not None:
        globals()[_name] = importlib.import_module(f"funcdiff.scipy.{_name}")
        __all__.append(_name)
del _name


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
