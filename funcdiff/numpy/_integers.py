"""Integer-only elementwise functions of funcdiff.numpy: shifts, gcd and lcm.

``left_shift`` and ``right_shift`` (and numpy 2's names ``bitwise_left_shift``
and ``bitwise_right_shift``) shift integers by integer counts; booleans shift
as int8, as in numpy. ``gcd`` and ``lcm`` take integers only. Each binds one
primitive whose impl is the numpy ufunc, after numpy 2's promotion, so values
and dtypes are numpy's, edge cases included (shift counts outside
[0, bits), negative operands, zeros, the most negative integer). Floats raise
a DTypeError, as numpy has no loop for them either; integer results have no
derivative. The bitwise and, or, xor and invert are in ``_logic``.
"""

from __future__ import annotations

from funcdiff.errors import DTypeError
from funcdiff.numpy._ufunc_support import binary_ufunc, fname, promote, promote_int_bool
from funcdiff.primitives import elementwise as ew


def _check_integers(name, x, y, what):
    dtype = x.dtype
    if dtype.kind not in "iu":
        values = "booleans" if dtype.kind == "b" else "whole-valued floats"
        raise DTypeError(
            f"{fname(name)} takes integers only, but its arguments promote to {dtype} "
            f"(numpy has no {name} of {what} either). Convert {values} with "
            "astype(np.int64) first.")
    return x, y


def _integer_pair(name, x, y):
    return _check_integers(name, *promote(name, x, y), "floats or booleans")


def _shift_pair(name, x, y):
    # numpy's integer loops take booleans as int8
    return _check_integers(name, *promote_int_bool(name, x, y), "floats")


left_shift = binary_ufunc("left_shift", _shift_pair, ew.shift_left,
                           "Elementwise ``x1 << x2``: 0 where the count is negative or at "
                           "least the bit width.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.left_shift(np.array([1, 3], np.int8), np.array([2, 8], np.int8))
array([4, 0], dtype=int8)""")
right_shift = binary_ufunc("right_shift", _shift_pair, ew.shift_right,
                            "Elementwise ``x1 >> x2``, arithmetic for signed integers: -1 or 0 "
                            "for counts out of range.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.right_shift(np.array([-8, 8]), 2)
array([-2,  2])""")
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift

gcd = binary_ufunc("gcd", _integer_pair, ew.gcd,
                    "Elementwise greatest common divisor of integers (non-negative).", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.gcd(np.array([12, -18, 0]), 8)
array([4, 2, 8])""")
lcm = binary_ufunc("lcm", _integer_pair, ew.lcm,
                    "Elementwise least common multiple of integers (non-negative; 0 if either "
                    "is 0).", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.lcm(np.array([4, -6, 0]), 6)
array([12,  6,  0])""")


__all__ = ["left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift", "gcd",
           "lcm"]
