"""Laguerre series, as numpy.polynomial.laguerre defines them, differentiable.

Coefficients are lowest degree first, as in numpy; every function traces,
batches, compiles and differentiates in its array arguments. What differs from
numpy (trailing zero coefficients are kept) is listed in
``funcdiff.numpy.polynomial``.

>>> import funcdiff as fd
>>> from funcdiff.numpy.polynomial import laguerre
>>> float(fd.grad(lambda x: laguerre.lagval(x, [1., 2., 3.]))(0.5))
-6.5
"""

import numpy.polynomial.laguerre as _numpy_module

from funcdiff.numpy.polynomial._basis import LAGUERRE
from funcdiff.numpy.polynomial._public import functions

_functions = functions(LAGUERRE)
lagval = _functions.val
lagval2d = _functions.val2d
lagval3d = _functions.val3d
laggrid2d = _functions.grid2d
laggrid3d = _functions.grid3d
lagvander = _functions.vander
lagvander2d = _functions.vander2d
lagvander3d = _functions.vander3d
lagder = _functions.der
lagint = _functions.int
lagadd = _functions.add
lagsub = _functions.sub
lagmul = _functions.mul
lagmulx = _functions.mulx
lagdiv = _functions.div
lagpow = _functions.pow
lagfromroots = _functions.fromroots
lagline = _functions.line
lagfit = _functions.fit
lagroots = _functions.roots
lagtrim = _functions.trim
lag2poly = _functions.to_power
poly2lag = _functions.from_power
# numpy's constant series, unchanged
lagdomain = _numpy_module.lagdomain
lagzero = _numpy_module.lagzero
lagone = _numpy_module.lagone
lagx = _numpy_module.lagx

__all__ = ["lagval", "lagval2d", "lagval3d", "laggrid2d", "laggrid3d", "lagvander",
           "lagvander2d", "lagvander3d", "lagder", "lagint", "lagadd", "lagsub", "lagmul",
           "lagmulx", "lagdiv", "lagpow", "lagfromroots", "lagline", "lagfit", "lagroots",
           "lagtrim", "lag2poly", "poly2lag", "lagdomain", "lagzero", "lagone", "lagx"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
