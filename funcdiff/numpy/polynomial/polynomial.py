"""Power series, as numpy.polynomial.polynomial defines them, differentiable.

Coefficients are lowest degree first, as in numpy; every function traces,
batches, compiles and differentiates in its array arguments. What differs from
numpy (trailing zero coefficients are kept) is listed in
``funcdiff.numpy.polynomial``.

>>> import funcdiff as fd
>>> from funcdiff.numpy.polynomial import polynomial
>>> float(fd.grad(lambda x: polynomial.polyval(x, [1., 2., 3.]))(0.5))
5.0
"""

import numpy.polynomial.polynomial as _numpy_module

from funcdiff.numpy.polynomial._basis import POWER
from funcdiff.numpy.polynomial._public import functions

_functions = functions(POWER)
polyval = _functions.val
polyval2d = _functions.val2d
polyval3d = _functions.val3d
polygrid2d = _functions.grid2d
polygrid3d = _functions.grid3d
polyvander = _functions.vander
polyvander2d = _functions.vander2d
polyvander3d = _functions.vander3d
polyder = _functions.der
polyint = _functions.int
polyadd = _functions.add
polysub = _functions.sub
polymul = _functions.mul
polymulx = _functions.mulx
polydiv = _functions.div
polypow = _functions.pow
polyfromroots = _functions.fromroots
polyline = _functions.line
polyfit = _functions.fit
polyroots = _functions.roots
polytrim = _functions.trim
polyvalfromroots = _functions.valfromroots
# numpy's constant series, unchanged
polydomain = _numpy_module.polydomain
polyzero = _numpy_module.polyzero
polyone = _numpy_module.polyone
polyx = _numpy_module.polyx

__all__ = ["polyval", "polyval2d", "polyval3d", "polygrid2d", "polygrid3d", "polyvander",
           "polyvander2d", "polyvander3d", "polyder", "polyint", "polyadd", "polysub",
           "polymul", "polymulx", "polydiv", "polypow", "polyfromroots", "polyline", "polyfit",
           "polyroots", "polytrim", "polyvalfromroots", "polydomain", "polyzero", "polyone",
           "polyx"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
