"""funcdiff.numpy.polynomial: numpy.polynomial's series functions, differentiable.

One module per basis, as in numpy: ``polynomial`` (power series),
``chebyshev``, ``legendre``, ``hermite``, ``hermite_e`` and ``laguerre``, each
with numpy's names (``chebval``, ``chebder``, ``chebfit``, ...). Use them in
place of numpy's inside a transform: numpy's ``<prefix>val``,
``<prefix>grid2d``/``grid3d`` and ``polyvalfromroots`` branch on
``isinstance(x, numpy.ndarray)``, which is false for a traced ``x``, and then
compute a different function without an error (a traced array ``x`` is
treated as a scalar); the others convert their arguments to numpy arrays and
refuse a traced value.

- Coefficients are lowest degree first, along axis 0.
- Every function traces, batches, compiles and differentiates in its array
  arguments (``x`` and the coefficients, roots, ``k``, ``lbnd``, ``scl``,
  ``y`` and ``w``); degrees, orders and powers must be concrete ints.
- Shapes never depend on values: numpy drops trailing zero coefficients
  from the results of ``add``, ``sub``, ``mul``, ``div``, ``pow``, ``line``
  and ``fromroots``; funcdiff keeps them (the same series).
- ``<prefix>roots`` (eigenvalues of a non-symmetric companion matrix) and
  ``<prefix>trim`` (a value-dependent length) work on concrete values only
  and raise ``UnsupportedNumpyError`` for a traced one. The convenience classes
  (``numpy.polynomial.Chebyshev``, ...) are numpy's; they convert their
  arguments and refuse traced values, so call these functions instead.

>>> import numpy as np, funcdiff as fd
>>> from funcdiff.numpy.polynomial import chebyshev as C
>>> c = np.array([1., 2., 3.])
>>> fd.grad(lambda x: C.chebval(x, c).sum())(np.array([0., 0.5]))   # 2 + 12x
array([2., 8.])
"""

from funcdiff.numpy.polynomial import (chebyshev, hermite, hermite_e, laguerre, legendre,
                                       polynomial)

__all__ = ["polynomial", "chebyshev", "legendre", "hermite", "hermite_e", "laguerre"]
