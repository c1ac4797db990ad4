"""Legendre series, as numpy.polynomial.legendre defines them, differentiable.

Coefficients are lowest degree first, as in numpy; every function traces,
batches, compiles and differentiates in its array arguments. What differs from
numpy (trailing zero coefficients are kept) is listed in
``funcdiff.numpy.polynomial``.

>>> import funcdiff as fd
>>> from funcdiff.numpy.polynomial import legendre
>>> float(fd.grad(lambda x: legendre.legval(x, [1., 2., 3.]))(0.5))
6.5
"""

import numpy.polynomial.legendre as _numpy_module

from funcdiff.numpy.polynomial._basis import LEGENDRE
from funcdiff.numpy.polynomial._public import functions

_functions = functions(LEGENDRE)
legval = _functions.val
legval2d = _functions.val2d
legval3d = _functions.val3d
leggrid2d = _functions.grid2d
leggrid3d = _functions.grid3d
legvander = _functions.vander
legvander2d = _functions.vander2d
legvander3d = _functions.vander3d
legder = _functions.der
legint = _functions.int
legadd = _functions.add
legsub = _functions.sub
legmul = _functions.mul
legmulx = _functions.mulx
legdiv = _functions.div
legpow = _functions.pow
legfromroots = _functions.fromroots
legline = _functions.line
legfit = _functions.fit
legroots = _functions.roots
legtrim = _functions.trim
leg2poly = _functions.to_power
poly2leg = _functions.from_power
# numpy's constant series, unchanged
legdomain = _numpy_module.legdomain
legzero = _numpy_module.legzero
legone = _numpy_module.legone
legx = _numpy_module.legx

__all__ = ["legval", "legval2d", "legval3d", "leggrid2d", "leggrid3d", "legvander",
           "legvander2d", "legvander3d", "legder", "legint", "legadd", "legsub", "legmul",
           "legmulx", "legdiv", "legpow", "legfromroots", "legline", "legfit", "legroots",
           "legtrim", "leg2poly", "poly2leg", "legdomain", "legzero", "legone", "legx"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
