"""Cards for scipy.linalg's matrix square root and logarithm, and its Schur form.

- ``sqrtm`` and ``logm`` take scipy's values (Schur-based, Higham's methods)
  and the Fréchet derivatives of ``matrix_functions`` (scipy's function of the
  block matrix [[a, e], [0, a]]), differentiable to every order in both modes.
  A real matrix whose root or logarithm is complex (a negative real
  eigenvalue) is refused rather than losing the imaginary part.
- ``schur`` gives scipy's real or complex Schur form ``(t, z)``; the Schur
  vectors are not unique (each can turn by a phase, a real form's 2 x 2 blocks
  can rotate), so differentiating it raises and points to sqrtm, logm and expm,
  whose derivatives do not depend on that choice.
"""

from __future__ import annotations

import importlib

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Primitive, ShapedArray
from funcdiff.errors import DifferentiationError, InvalidArgumentError
from funcdiff.primitives.cards import checked_impl
from funcdiff.primitives.linalg_common import check_matrix, cost, leading_batch
from funcdiff.primitives.matrix_functions import matrix_function, square_stack
from funcdiff.primitives.scipy_cards import ScipyMissingError


def scipy_linalg():
    """The scipy.linalg module, imported when first needed."""
    try:
        return importlib.import_module("scipy.linalg")
    except ImportError:
        raise ScipyMissingError(
            "this funcdiff.scipy.linalg function takes its values from scipy.linalg, but "
            "scipy is not installed: install it (pip install funcdiff[scipy]).") from None


def _real_valued(name: str, a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """scipy's result in ``a``'s dtype; a real matrix with a complex result is refused."""
    if np.iscomplexobj(out) and not np.iscomplexobj(a):
        scale = max(1.0, float(np.abs(out).max())) if out.size else 1.0
        if out.size and np.abs(out.imag).max() > 1e3 * np.finfo(a.dtype).eps * scale:
            raise InvalidArgumentError(
                f"{name} of this real matrix is complex (it has a negative real eigenvalue), "
                "and funcdiff never drops an imaginary part: pass a complex matrix "
                "(a.astype(complex)) for the complex result.")
        out = out.real
    return out.astype(a.dtype, copy=False)


def _sqrtm_impl(a):
    return _real_valued("sqrtm", a, scipy_linalg().sqrtm(a))


def _logm_impl(a):
    return _real_valued("logm", a, scipy_linalg().logm(a))


sqrtm_p, sqrtm_frechet_p = matrix_function("sqrtm", _sqrtm_impl, flops=28)
logm_p, logm_frechet_p = matrix_function("logm", _logm_impl, flops=60)


# --- the Schur decomposition: values only ---------------------------------------------------

schur_p = Primitive("schur")
schur_p.multiple_results = True
OUTPUTS = ("real", "complex")


def _schur_abstract_eval(a, *, output):
    check_matrix("schur", a)
    if output not in OUTPUTS:
        raise InvalidArgumentError(f"schur: output must be 'real' or 'complex', got {output!r}")
    dtype = dtypes.complex_dtype(a.dtype) if output == "complex" else a.dtype
    out = ShapedArray(a.shape, dtype)
    return [out, out]


def _schur_impl(a, *, output):
    a = square_stack(a)
    dtype = dtypes.complex_dtype(a.dtype) if output == "complex" else a.dtype
    t, z = np.empty(a.shape, dtype), np.empty(a.shape, dtype)
    for index in np.ndindex(a.shape[:-2]):  # scipy's schur takes one matrix at a time
        t[index], z[index] = scipy_linalg().schur(a[index], output=output)
    return [t, z]


def _schur_jvp(primals, tangents, *, output):
    raise DifferentiationError(
        "funcdiff has no derivative of schur: the Schur vectors are not unique (a phase per "
        "vector, a rotation per 2 x 2 block), so neither are their derivatives. Functions "
        "of the matrix are differentiable: funcdiff.scipy.linalg.sqrtm, logm and expm; or "
        "wrap the matrix in fd.stop_gradient.")


schur_p.abstract_eval = _schur_abstract_eval
schur_p.impl = checked_impl(_schur_impl, _schur_abstract_eval)
schur_p.jvp = _schur_jvp
schur_p.batch = leading_batch(schur_p)
schur_p.cost = cost(lambda m, n: 25 * n ** 3)
