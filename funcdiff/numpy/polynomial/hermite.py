"""Hermite series (physicists'), as numpy.polynomial.hermite defines them, differentiable.

Coefficients are lowest degree first, as in numpy; every function traces,
batches, compiles and differentiates in its array arguments. What differs from
numpy (trailing zero coefficients are kept) is listed in
``funcdiff.numpy.polynomial``.

>>> import funcdiff as fd
>>> from funcdiff.numpy.polynomial import hermite
>>> float(fd.grad(lambda x: hermite.hermval(x, [1., 2., 3.]))(0.5))
16.0
"""

import numpy.polynomial.hermite as _numpy_module

from funcdiff.numpy.polynomial._basis import HERMITE
from funcdiff.numpy.polynomial._public import functions

_functions = functions(HERMITE)
hermval = _functions.val
hermval2d = _functions.val2d
hermval3d = _functions.val3d
hermgrid2d = _functions.grid2d
hermgrid3d = _functions.grid3d
hermvander = _functions.vander
hermvander2d = _functions.vander2d
hermvander3d = _functions.vander3d
hermder = _functions.der
hermint = _functions.int
hermadd = _functions.add
hermsub = _functions.sub
hermmul = _functions.mul
hermmulx = _functions.mulx
hermdiv = _functions.div
hermpow = _functions.pow
hermfromroots = _functions.fromroots
hermline = _functions.line
hermfit = _functions.fit
hermroots = _functions.roots
hermtrim = _functions.trim
herm2poly = _functions.to_power
poly2herm = _functions.from_power
# numpy's constant series, unchanged
hermdomain = _numpy_module.hermdomain
hermzero = _numpy_module.hermzero
hermone = _numpy_module.hermone
hermx = _numpy_module.hermx

__all__ = ["hermval", "hermval2d", "hermval3d", "hermgrid2d", "hermgrid3d", "hermvander",
           "hermvander2d", "hermvander3d", "hermder", "hermint", "hermadd", "hermsub",
           "hermmul", "hermmulx", "hermdiv", "hermpow", "hermfromroots", "hermline", "hermfit",
           "hermroots", "hermtrim", "herm2poly", "poly2herm", "hermdomain", "hermzero",
           "hermone", "hermx"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
