"""The elementwise functions, creation and reductions of funcdiff.numpy, under their old address.

This module once held all three; they now live in one module per concept:
``_arithmetic`` (arithmetic, powers, exponentials), ``_trigonometry``, ``_rounding``
(signs, extrema, clipping, rounding), ``_logic`` (comparisons, logic,
selection), ``_creation``, ``_spacing``, ``_diagonals`` (triangles and diagonals),
``_reductions``, ``_quantiles`` (order statistics) and ``_nan_reductions``, with
their shared argument handling in ``_ufunc_support``. It re-exports their
public names (``__all__`` is their union) and the helpers other code reached
here, so ``from funcdiff.numpy._ufuncs import ...`` keeps working, and its
``__test__`` keeps the moved docstring examples in ``doctest.testmod`` of
this module.
"""

from __future__ import annotations

from funcdiff.numpy import (_arithmetic, _creation, _diagonals, _logic, _nan_reductions,
                            _quantiles, _reductions, _rounding, _spacing, _trigonometry)
from funcdiff.numpy._arithmetic import (  # noqa: F401  re-exported: moved to _arithmetic
    add, cbrt, divide, divmod, exp, exp2, expm1, float_power, floor_divide, fmod, frexp, i0,
    ldexp, log, log10, log1p, log2, logaddexp, logaddexp2, mod, multiply, negative, nextafter,
    positive, pow, power, reciprocal, remainder, sinc, spacing, sqrt, square, subtract,
    true_divide)
from funcdiff.numpy._trigonometry import (  # noqa: F401  re-exported: moved to _trigonometry
    acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, asin, asinh, atan,
    atan2, atanh, cos, cosh, deg2rad, degrees, hypot, rad2deg, radians, sin, sinh, tan, tanh)
from funcdiff.numpy._rounding import (  # noqa: F401  re-exported: moved to _rounding
    abs, absolute, angle, around, ceil, clip, conj, conjugate, copysign, fabs, fix, floor,
    fmax, fmin, heaviside, imag, maximum, minimum, modf, real, rint, round, sign, signbit, trunc)
from funcdiff.numpy._logic import (  # noqa: F401  re-exported: moved to _logic
    allclose, array_equal, array_equiv, bitwise_and, bitwise_invert, bitwise_not, bitwise_or,
    bitwise_xor, equal, greater, greater_equal, invert, isclose, isfinite, isinf, isnan,
    isneginf, isposinf, less, less_equal, logical_and, logical_not, logical_or, logical_xor,
    nan_to_num, not_equal, select, where)
from funcdiff.numpy._creation import (  # noqa: F401  re-exported: moved to _creation
    arange, array, asanyarray, asarray, ascontiguousarray, asfortranarray, astype, copy, empty,
    empty_like, eye, full, full_like, identity, meshgrid, ones, ones_like, tri, zeros, zeros_like)
from funcdiff.numpy._spacing import (  # noqa: F401  re-exported: moved to _spacing
    geomspace, linspace, logspace)
from funcdiff.numpy._diagonals import (  # noqa: F401  re-exported: moved to _diagonals
    diag, diagflat, diagonal, tril, triu)
from funcdiff.numpy._reductions import (  # noqa: F401  re-exported: moved to _reductions
    ZeroWeightsError, all, amax, amin, any, argmax, argmin, average, count_nonzero, max, mean,
    min, prod, ptp, std, sum, var)
from funcdiff.numpy._quantiles import (  # noqa: F401  re-exported: moved to _quantiles
    median, nanmedian, nanpercentile, nanquantile, percentile, quantile)
from funcdiff.numpy._nan_reductions import (  # noqa: F401  re-exported: moved to _nan_reductions
    nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd,
    nansum, nanvar)
from funcdiff.numpy._ufunc_support import (  # noqa: F401  re-exported: moved to _ufunc_support
    float_arg, promote)

_MODULES = (_arithmetic, _trigonometry, _rounding, _logic, _creation, _spacing, _diagonals,
            _reductions, _quantiles, _nan_reductions)

__all__ = [name for module in _MODULES for name in module.__all__]

# doctest.testmod finds only the functions defined in a module; list the moved ones.
__test__ = {name: getattr(module, name) for module in _MODULES for name in module.__all__}
