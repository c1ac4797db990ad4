"""Hermite series (probabilists', He), as numpy.polynomial.hermite_e defines them, differentiable.

Coefficients are lowest degree first, as in numpy; every function traces,
batches, compiles and differentiates in its array arguments. What differs from
numpy (trailing zero coefficients are kept) is listed in
``funcdiff.numpy.polynomial``.

>>> import funcdiff as fd
>>> from funcdiff.numpy.polynomial import hermite_e
>>> float(fd.grad(lambda x: hermite_e.hermeval(x, [1., 2., 3.]))(0.5))
5.0
"""

import numpy.polynomial.hermite_e as _numpy_module

from funcdiff.numpy.polynomial._basis import HERMITE_E
from funcdiff.numpy.polynomial._public import functions

_functions = functions(HERMITE_E)
hermeval = _functions.val
hermeval2d = _functions.val2d
hermeval3d = _functions.val3d
hermegrid2d = _functions.grid2d
hermegrid3d = _functions.grid3d
hermevander = _functions.vander
hermevander2d = _functions.vander2d
hermevander3d = _functions.vander3d
hermeder = _functions.der
hermeint = _functions.int
hermeadd = _functions.add
hermesub = _functions.sub
hermemul = _functions.mul
hermemulx = _functions.mulx
hermediv = _functions.div
hermepow = _functions.pow
hermefromroots = _functions.fromroots
hermeline = _functions.line
hermefit = _functions.fit
hermeroots = _functions.roots
hermetrim = _functions.trim
herme2poly = _functions.to_power
poly2herme = _functions.from_power
# numpy's constant series, unchanged
hermedomain = _numpy_module.hermedomain
hermezero = _numpy_module.hermezero
hermeone = _numpy_module.hermeone
hermex = _numpy_module.hermex

__all__ = ["hermeval", "hermeval2d", "hermeval3d", "hermegrid2d", "hermegrid3d", "hermevander",
           "hermevander2d", "hermevander3d", "hermeder", "hermeint", "hermeadd", "hermesub",
           "hermemul", "hermemulx", "hermediv", "hermepow", "hermefromroots", "hermeline",
           "hermefit", "hermeroots", "hermetrim", "herme2poly", "poly2herme", "hermedomain",
           "hermezero", "hermeone", "hermex"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
