"""Chebyshev series (first kind), as numpy.polynomial.chebyshev defines them, differentiable.

Coefficients are lowest degree first, as in numpy; every function traces,
batches, compiles and differentiates in its array arguments. What differs from
numpy (trailing zero coefficients are kept) is listed in
``funcdiff.numpy.polynomial``.

>>> import funcdiff as fd
>>> from funcdiff.numpy.polynomial import chebyshev
>>> float(fd.grad(lambda x: chebyshev.chebval(x, [1., 2., 3.]))(0.5))
8.0
"""

import numpy.polynomial.chebyshev as _numpy_module

from funcdiff.numpy.polynomial._basis import CHEBYSHEV
from funcdiff.numpy.polynomial._public import functions

_functions = functions(CHEBYSHEV)
chebval = _functions.val
chebval2d = _functions.val2d
chebval3d = _functions.val3d
chebgrid2d = _functions.grid2d
chebgrid3d = _functions.grid3d
chebvander = _functions.vander
chebvander2d = _functions.vander2d
chebvander3d = _functions.vander3d
chebder = _functions.der
chebint = _functions.int
chebadd = _functions.add
chebsub = _functions.sub
chebmul = _functions.mul
chebmulx = _functions.mulx
chebdiv = _functions.div
chebpow = _functions.pow
chebfromroots = _functions.fromroots
chebline = _functions.line
chebfit = _functions.fit
chebroots = _functions.roots
chebtrim = _functions.trim
cheb2poly = _functions.to_power
poly2cheb = _functions.from_power
# numpy's constant series, unchanged
chebdomain = _numpy_module.chebdomain
chebzero = _numpy_module.chebzero
chebone = _numpy_module.chebone
chebx = _numpy_module.chebx

__all__ = ["chebval", "chebval2d", "chebval3d", "chebgrid2d", "chebgrid3d", "chebvander",
           "chebvander2d", "chebvander3d", "chebder", "chebint", "chebadd", "chebsub",
           "chebmul", "chebmulx", "chebdiv", "chebpow", "chebfromroots", "chebline", "chebfit",
           "chebroots", "chebtrim", "cheb2poly", "poly2cheb", "chebdomain", "chebzero",
           "chebone", "chebx"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
