"""Trigonometric and hyperbolic functions of funcdiff.numpy, and angle conversions.

Each function is an elementwise primitive or a short composition of them,
with numpy 2's argument promotion (``_ufunc_support``): integer inputs become
the smallest float that holds them. The trigonometric and hyperbolic
functions and their inverses take complex values too (numpy's principal
branches); ``arctan2``, ``hypot`` and the angle conversions refuse them by
name, as numpy does. ``hypot`` is numpy's own (it cannot
overflow), with the derivative x / r of its primitive. The aliases ``acos``, ``atan2``, ... are numpy 2's array-API
names.
"""

from __future__ import annotations

import numpy as np

from funcdiff.numpy._ufunc_support import (binary_ufunc, _c, float_arg, promote_real,
                                           real_arg, unary_ufunc)
from funcdiff.primitives import elementwise as ew


sin = unary_ufunc("sin", float_arg, ew.sin, "Elementwise sine.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.sin(np.array([0.0, np.pi / 2]))
array([0., 1.])""")
cos = unary_ufunc("cos", float_arg, ew.cos, "Elementwise cosine.")
tan = unary_ufunc("tan", float_arg, ew.tan, "Elementwise tangent.")
arcsin = unary_ufunc("arcsin", float_arg, ew.asin, "Elementwise inverse sine.")
arccos = unary_ufunc("arccos", float_arg, ew.acos, "Elementwise inverse cosine.")
arctan = unary_ufunc("arctan", float_arg, ew.atan, "Elementwise inverse tangent.")
sinh = unary_ufunc("sinh", float_arg, ew.sinh, "Elementwise hyperbolic sine.")
cosh = unary_ufunc("cosh", float_arg, ew.cosh, "Elementwise hyperbolic cosine.")
tanh = unary_ufunc("tanh", float_arg, ew.tanh, "Elementwise hyperbolic tangent.")
arcsinh = unary_ufunc("arcsinh", float_arg, ew.asinh, "Elementwise inverse hyperbolic sine.")
arccosh = unary_ufunc("arccosh", float_arg, ew.acosh,
                       "Elementwise inverse hyperbolic cosine.")
arctanh = unary_ufunc("arctanh", float_arg, ew.atanh,
                       "Elementwise inverse hyperbolic tangent.")
arctan2 = binary_ufunc("arctan2", promote_real, ew.atan2,
                        "Elementwise four-quadrant arctangent of ``x1 / x2``.")
hypot = binary_ufunc("hypot", promote_real, ew.hypot,
                      "Elementwise ``sqrt(x1**2 + x2**2)`` without overflow.", """
>>> import funcdiff.numpy as fnp
>>> float(fnp.hypot(3.0, 4.0))
5.0""")
deg2rad = unary_ufunc("deg2rad", real_arg, lambda x: ew.mul(x, _c(x, np.pi / 180.0)),
                       "Elementwise conversion of degrees to radians.")
rad2deg = unary_ufunc("rad2deg", real_arg, lambda x: ew.mul(x, _c(x, 180.0 / np.pi)),
                       "Elementwise conversion of radians to degrees.")
radians = deg2rad
degrees = rad2deg


acos, acosh, asin, asinh = arccos, arccosh, arcsin, arcsinh
atan, atan2, atanh = arctan, arctan2, arctanh


__all__ = [
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "arctan2", "hypot", "deg2rad", "rad2deg", "radians", "degrees",
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh",
]
