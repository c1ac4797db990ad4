"""funcdiff.numpy: the numpy API built from funcdiff primitives.

``import funcdiff.numpy as fnp`` gives numpy's names with numpy 2's semantics
(broadcasting, dtype promotion with weak Python scalars, axes, ``keepdims``).
Outside transforms the functions take and return plain numpy arrays; inside
``grad``, ``jvp``, ``vmap``, ``jit`` or ``make_jaxpr`` they work on tracers, so
the same code is differentiated, batched and compiled.

>>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
>>> float(fd.grad(lambda x: fnp.sum(fnp.sin(x)))(np.zeros(3))[0])
1.0

The namespace is assembled here from the modules of the package, one concept
each: elementwise functions (``_arithmetic``, ``_trigonometry``, ``_rounding``,
``_logic``, ``_integers``), creation (``_creation``, ``_spacing``, ``_diagonals``),
reductions (``_reductions``, ``_quantiles``, ``_nan_reductions``), shapes (``_shape``,
``_broadcasting``, ``_joining``, ``_tiling``, ``_padding``, ``_take_put``, ``_assembly``),
index arithmetic (``_index_arithmetic``), indexing (``_index_parsing``,
``_getitem``, and ``_indexing`` for ``x.at[...]``), products
(``_linalg_basic``, ``_einsum``), ``_sorting``, ``_nonzero``, ``_selection``
(choose, compress, extract, partition, argpartition, lexsort), ``_counting``
(isin, bincount, digitize, histogram), ``_histograms`` (histogram2d,
histogramdd), ``_sets`` (union1d, intersect1d, setdiff1d, setxor1d), ``_unique_api``
(unique_values, unique_counts, unique_inverse, unique_all), ``_polynomial`` (numpy's ``poly*`` arithmetic and ``vander``),
``_polynomial_fit`` (polyfit), ``_polynomial_roots`` (poly, roots),
``_calculus`` (trapezoid, gradient, interp) and ``_statistics`` (cov,
corrcoef), ``_array_api`` (numpy 2's vecdot, matvec, vecmat,
matrix_transpose, unstack and the static queries shape, ndim, size, ...),
``_functional`` (apply_along_axis, apply_over_axes, piecewise, fromfunction),
``_windows`` (hamming, hanning, bartlett, blackman, kaiser), ``_index_expressions``
(r_, c_), ``_complex_checks`` (iscomplex, isreal, real_if_close), ``_bit_packing``
(packbits, unpackbits), and ``_interop``
(tracer operators and numpy dispatch), plus numpy's constants, scalar types and
dtype helpers re-exported as they are.
"""

from __future__ import annotations

import sys as _sys

import numpy as _np

from funcdiff import dtypes as _dtypes
# Elementwise functions, creation and reductions: each module lists its names in __all__.
from funcdiff.numpy import (_arithmetic, _creation, _diagonals, _integers, _logic,
                            _nan_reductions, _quantiles, _reductions, _rounding, _spacing,
                            _trigonometry)
from funcdiff.numpy._arithmetic import *  # noqa: F401,F403
from funcdiff.numpy._trigonometry import *  # noqa: F401,F403
from funcdiff.numpy._rounding import *  # noqa: F401,F403
from funcdiff.numpy._logic import *  # noqa: F401,F403
from funcdiff.numpy._integers import *  # noqa: F401,F403
from funcdiff.numpy._creation import *  # noqa: F401,F403
from funcdiff.numpy._spacing import *  # noqa: F401,F403
from funcdiff.numpy._diagonals import *  # noqa: F401,F403
from funcdiff.numpy._reductions import *  # noqa: F401,F403
from funcdiff.numpy._quantiles import *  # noqa: F401,F403
from funcdiff.numpy._nan_reductions import *  # noqa: F401,F403

# numpy objects that carry no computation: constants, scalar types, dtype helpers.
pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
newaxis = None
ndarray, dtype, generic, number = _np.ndarray, _np.dtype, _np.generic, _np.number
bool_, bool = _np.bool_, _np.bool_  # noqa: A001  (numpy 2 spells it np.bool too)
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger
inexact, floating = _np.inexact, _np.floating
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
complex64, complex128, complexfloating = _np.complex64, _np.complex128, _np.complexfloating
intp, uintp = _np.intp, _np.uintp
finfo, iinfo = _np.finfo, _np.iinfo
issubdtype, promote_types, can_cast = _np.issubdtype, _np.promote_types, _np.can_cast
isdtype = _np.isdtype
result_type = _dtypes.result_type  # accepts tracers; Python scalars are weak as in numpy 2
# numpy's floating-point error handling governs the impls, which are numpy's: pass through
seterr, geterr, errstate = _np.seterr, _np.geterr, _np.errstate
seterrcall, geterrcall = _np.seterrcall, _np.geterrcall

_NUMPY_OBJECTS = [
    "pi", "e", "inf", "nan", "euler_gamma", "newaxis", "ndarray", "dtype", "generic",
    "number", "bool_", "bool", "integer", "signedinteger", "unsignedinteger", "inexact",
    "floating", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "complexfloating", "intp",
    "uintp", "finfo", "iinfo", "issubdtype", "isdtype", "promote_types", "can_cast", "result_type", "seterr", "geterr", "errstate", "seterrcall",
    "geterrcall",
]

# The namespace: each module lists its public names in __all__.
from funcdiff.numpy import (_array_api, _assembly, _broadcasting, _calculus,  # noqa: E402
                            _counting, _einsum, _functional, _histograms, _index_arithmetic, _indexing, _joining,
                            _linalg_basic, _nonzero, _padding, _polynomial, _polynomial_fit,
                            _polynomial_roots, _selection, _sets, _shape, _sorting, _statistics,
                            _take_put, _tiling, _unique_api, _util, _vectorize, _windows)
from funcdiff.numpy._indexing import *  # noqa: F401,F403,E402
from funcdiff.numpy._linalg_basic import *  # noqa: F401,F403,E402
from funcdiff.numpy._einsum import *  # noqa: F401,F403,E402
from funcdiff.numpy._shape import *  # noqa: F401,F403,E402
from funcdiff.numpy._broadcasting import *  # noqa: F401,F403,E402
from funcdiff.numpy._util import *  # noqa: F401,F403,E402
from funcdiff.numpy._joining import *  # noqa: F401,F403,E402
from funcdiff.numpy._tiling import *  # noqa: F401,F403,E402
from funcdiff.numpy._padding import *  # noqa: F401,F403,E402
from funcdiff.numpy._take_put import *  # noqa: F401,F403,E402
from funcdiff.numpy._sorting import *  # noqa: F401,F403,E402
from funcdiff.numpy._nonzero import *  # noqa: F401,F403,E402
from funcdiff.numpy._selection import *  # noqa: F401,F403,E402
from funcdiff.numpy._assembly import *  # noqa: F401,F403,E402
from funcdiff.numpy._index_arithmetic import *  # noqa: F401,F403,E402
from funcdiff.numpy._polynomial import *  # noqa: F401,F403,E402
from funcdiff.numpy._polynomial_fit import *  # noqa: F401,F403,E402
from funcdiff.numpy._polynomial_roots import *  # noqa: F401,F403,E402
from funcdiff.numpy._counting import *  # noqa: F401,F403,E402
from funcdiff.numpy._histograms import *  # noqa: F401,F403,E402
from funcdiff.numpy._sets import *  # noqa: F401,F403,E402
from funcdiff.numpy._unique_api import *  # noqa: F401,F403,E402
from funcdiff.numpy._calculus import *  # noqa: F401,F403,E402
from funcdiff.numpy._statistics import *  # noqa: F401,F403,E402
from funcdiff.numpy._array_api import *  # noqa: F401,F403,E402
from funcdiff.numpy._functional import *  # noqa: F401,F403,E402
from funcdiff.numpy._windows import *  # noqa: F401,F403,E402
from funcdiff.numpy._vectorize import *  # noqa: F401,F403,E402
from funcdiff.numpy import _bit_packing, _complex_checks, _index_expressions  # noqa: E402
from funcdiff.numpy._index_expressions import *  # noqa: F401,F403,E402
from funcdiff.numpy._complex_checks import *  # noqa: F401,F403,E402
from funcdiff.numpy._bit_packing import *  # noqa: F401,F403,E402

# _interop gives tracers the array operators and numpy's dispatch protocols (the
# only import-time side effect of this package); it must run after the names
# above exist. The operators, the protocols and the conversion error live in
# _operators, _numpy_dispatch and _tracer_conversion.
from funcdiff.numpy import _interop  # noqa: E402

_interop.install_tracer_methods()

_MODULES = (_arithmetic, _trigonometry, _rounding, _logic, _integers, _creation, _spacing,
            _diagonals, _reductions, _quantiles, _nan_reductions, _shape, _util, _broadcasting, _joining, _tiling,
            _padding, _take_put, _indexing, _linalg_basic, _einsum, _sorting, _nonzero,
            _selection, _assembly, _index_arithmetic, _polynomial, _polynomial_fit,
            _polynomial_roots, _counting, _histograms, _sets, _unique_api, _calculus,
            _statistics, _array_api, _functional, _windows, _vectorize, _index_expressions,
            _complex_checks, _bit_packing)
__all__ = sorted(set(_NUMPY_OBJECTS).union(*(module.__all__ for module in _MODULES)))

from funcdiff.numpy import linalg  # noqa: E402,F401
from funcdiff.numpy import fft  # noqa: E402,F401
from funcdiff.numpy import polynomial  # noqa: E402,F401
from funcdiff.numpy import lib  # noqa: E402,F401
from funcdiff.numpy import array_api  # noqa: E402  what a tracer's __array_namespace__ returns

_interop.install_array_namespace(array_api)

# numpy.random itself, as autograd.numpy.random is: random numbers are data drawn outside
# the differentiated function, so ``fnp.random.randn`` and ``import funcdiff.numpy.random``
# (registered under that name so the import statement finds it) are numpy's.
random = _np.random
_sys.modules[__name__ + ".random"] = _np.random


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
