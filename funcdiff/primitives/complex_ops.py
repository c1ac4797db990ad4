"""Complex primitives: real, imag, complex, conj and the magnitude of complex values.

Complex numbers are intermediates in funcdiff (they come from
``funcdiff.numpy.fft``); these primitives move between them and real values.
All but ``complex_abs`` are linear. Their transposes follow JAX's convention:
a cotangent ``c`` of a complex value ``z`` stands for the real-valued
functional ``z -> Re(c * z)`` (bilinear, never conjugated). So the transpose
of ``real`` maps ``c`` to ``c + 0j``, that of ``imag`` to ``-c * 1j``, that of
``complex(re, im)`` to ``(Re c, -Im c)``, that of ``conj`` to ``conj(c)``, and
a holomorphic map's transpose multiplies by its derivative without conjugating
(``mul``'s transpose is ``ct * y``). With this convention the gradient of a
real-valued function of complex intermediates is the ordinary real gradient.

The operation ``complex`` shadows the Python builtin inside this module on
purpose (it is the JAX lax name); ``builtins.complex`` is used where needed.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from funcdiff import dtypes
from funcdiff.bridge import NamespaceArray
from funcdiff.core import Primitive, ShapedArray, Tracer, Zero, bind, get_aval
from funcdiff.errors import DTypeError
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.primitives import structural
from funcdiff.primitives.cards import broadcast_shapes, checked_impl, make_op, nbytes
from funcdiff.primitives.elementwise_arithmetic import div, mul, neg
from funcdiff.primitives.elementwise_cards import elementwise_batch
from funcdiff.primitives.elementwise_logic import eq, select


def _needs_complex(name: str, x: ShapedArray) -> None:
    if not dtypes.is_complex(x.dtype):
        raise DTypeError(
            f"the primitive {name} needs a complex operand, but got {x.str_short()}. "
            "funcdiff.numpy.real/imag/conj/abs accept real arrays too.")


def _zero(dtype: np.dtype) -> np.ndarray:
    return np.zeros((), dtype)


def _unary_batch(prim: Primitive):
    return lambda vals, dims: (bind(prim, vals[0]), dims[0])


def _part_cost(x: ShapedArray) -> dict:
    """Cost of reading a complex array and writing one real part of it."""
    return {"flops": 0, "bytes": nbytes(x) + nbytes(x) // 2}


# --- real ------------------------------------------------------------------------------

real_p = Primitive("real")
def _own(x):
    """numpy's real and imag of a complex array are views: a copy, never a view (another
    library's result is its own array already)."""
    return x if type(x) is NamespaceArray else np.array(x)


real_p.impl = checked_impl(lambda z: _own(np.real(z)), real_p)


def _real_abstract_eval(z):
    _needs_complex("real", z)
    return ShapedArray(z.shape, dtypes.real_dtype(z.dtype))


real_p.abstract_eval = _real_abstract_eval
real_p.linear = True
real_p.jvp = lambda primals, tangents: (real(primals[0]), real(tangents[0]))
real_p.transpose = lambda ct, z: [complex(ct, _zero(get_aval(ct).dtype))]
real_p.batch = _unary_batch(real_p)
real_p.cost = _part_cost
real = make_op(real_p, "The real part of a complex array (a float array of its precision).")

# --- imag ------------------------------------------------------------------------------

imag_p = Primitive("imag")
imag_p.impl = checked_impl(lambda z: _own(np.imag(z)), imag_p)


def _imag_abstract_eval(z):
    _needs_complex("imag", z)
    return ShapedArray(z.shape, dtypes.real_dtype(z.dtype))


imag_p.abstract_eval = _imag_abstract_eval
imag_p.linear = True
imag_p.jvp = lambda primals, tangents: (imag(primals[0]), imag(tangents[0]))
# Re(c * z) = t * Im(z) for all z needs c = -t * 1j
imag_p.transpose = lambda ct, z: [complex(_zero(get_aval(ct).dtype), neg(ct))]
imag_p.batch = _unary_batch(imag_p)
imag_p.cost = _part_cost
imag = make_op(imag_p, "The imaginary part of a complex array (a float array).")

# --- complex ---------------------------------------------------------------------------

complex_p = Primitive("complex")


def _complex_impl(re, im):
    if type(re) is NamespaceArray or type(im) is NamespaceArray:  # another library's arrays
        return (re if type(re) is NamespaceArray else im).complex_from(re, im)
    re, im = np.asarray(re), np.asarray(im)
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), dtypes.complex_dtype(re.dtype))
    out.real = re
    out.imag = im
    return out


def _complex_abstract_eval(re, im):
    for part in (re, im):
        if not dtypes.is_float(part.dtype):
            raise DTypeError(
                f"the primitive complex needs floating real and imaginary parts, but got "
                f"{re.str_short()} and {im.str_short()}. Convert them with astype(float).")
    if re.dtype != im.dtype:
        raise DTypeError(
            f"the primitive complex needs parts of one dtype, but got {re.dtype.name} and "
            f"{im.dtype.name}. funcdiff.numpy promotes automatically; at the primitive "
            "level use convert_element_type.")
    return ShapedArray(broadcast_shapes("complex", re.shape, im.shape),
                       dtypes.complex_dtype(re.dtype))


def _complex_jvp(primals, tangents):
    out = complex(*primals)
    t_re, t_im = tangents
    out_aval = get_aval(out)
    if type(t_re) is Zero and type(t_im) is Zero:
        return out, Zero(out_aval)
    part_dtype = dtypes.real_dtype(out_aval.dtype)
    t = complex(_zero(part_dtype) if type(t_re) is Zero else t_re,
                _zero(part_dtype) if type(t_im) is Zero else t_im)
    if get_aval(t).shape != out_aval.shape:
        t = structural.broadcast_to(t, out_aval.shape)
    return out, t


def _complex_transpose(ct, re, im):
    return [structural.unbroadcast(real(ct), re.aval.shape) if is_undefined(re) else None,
            structural.unbroadcast(neg(imag(ct)), im.aval.shape) if is_undefined(im) else None]


def _complex_cost(re, im):
    size = math.prod(broadcast_shapes("complex", re.shape, im.shape))
    return {"flops": 0, "bytes": nbytes(re) + nbytes(im) + 2 * size * re.dtype.itemsize}


complex_p.impl = checked_impl(_complex_impl, complex_p)
complex_p.abstract_eval = _complex_abstract_eval
complex_p.linear = True
complex_p.jvp = _complex_jvp
complex_p.transpose = _complex_transpose
complex_p.batch = elementwise_batch(complex_p)
complex_p.cost = _complex_cost
complex = make_op(complex_p, "The complex array re + 1j * im of two float arrays of one "
                             "dtype, with numpy broadcasting (float32 -> complex64).")

# --- conj ------------------------------------------------------------------------------

conj_p = Primitive("conj")
conj_p.impl = checked_impl(np.conjugate, conj_p)


def _conj_abstract_eval(z):
    _needs_complex("conj", z)
    return z


conj_p.abstract_eval = _conj_abstract_eval
conj_p.linear = True
conj_p.jvp = lambda primals, tangents: (conj(primals[0]), conj(tangents[0]))
conj_p.transpose = lambda ct, z: [conj(ct)]  # Re(c * conj(z)) = Re(conj(c) * z)
conj_p.batch = _unary_batch(conj_p)
conj_p.cost = lambda z: {"flops": z.size, "bytes": 2 * nbytes(z)}
conj = make_op(conj_p, "The complex conjugate of a complex array.")

# --- complex_abs -----------------------------------------------------------------------

complex_abs_p = Primitive("complex_abs")
complex_abs_p.impl = checked_impl(np.abs, complex_abs_p)


def _complex_abs_abstract_eval(z):
    _needs_complex("complex_abs", z)
    return ShapedArray(z.shape, dtypes.real_dtype(z.dtype))


def _complex_abs_jvp(primals, tangents):
    # d|z| = Re(conj(z) dz) / |z|; at z == 0 the divisor is replaced by 1, so the
    # derivative there is 0 (numerator 0), as JAX's abs'(0) = 0.
    (z,), (t,) = primals, tangents
    y = complex_abs(z)
    zero = _zero(get_aval(y).dtype)
    safe_y = select(eq(y, zero), np.ones((), get_aval(y).dtype), y)
    return y, div(real(mul(t, conj(z))), safe_y)


complex_abs_p.abstract_eval = _complex_abs_abstract_eval
complex_abs_p.jvp = _complex_abs_jvp
complex_abs_p.batch = _unary_batch(complex_abs_p)
complex_abs_p.cost = lambda z: {"flops": 4 * z.size, "bytes": nbytes(z) + nbytes(z) // 2}
complex_abs = make_op(complex_abs_p, "The magnitude |z| of a complex array (a float "
                                     "array); its derivative at 0 is 0.")


# --- argument helper for funcdiff.numpy -------------------------------------------------


def complex_value(x):
    """``x`` if it is a complex tracer or array, ``numpy.asarray(x)`` if it is a
    complex Python or numpy scalar or a list of them, else None.

    funcdiff.numpy's ``real``, ``imag``, ``conj``, ``abs`` and ``angle`` use it to
    send complex arguments here and leave real ones on their usual path.
    """
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        if not dtypes.is_complex(dtype):
            return None
        return x if isinstance(x, (Tracer, np.ndarray)) else np.asarray(x)
    if type(x) is builtins.complex or (isinstance(x, (list, tuple)) and _has_complex(x)):
        arr = np.asarray(x)
        if dtypes.is_complex(arr.dtype):
            dtypes.check_dtype(arr.dtype, allow_complex=True)
            return arr
    return None


def _has_complex(seq) -> bool:
    return any(type(e) is builtins.complex or isinstance(e, np.complexfloating)
               or (isinstance(e, (list, tuple)) and _has_complex(e)) for e in seq)


__all__ = ["complex_value", "real", "imag", "complex", "conj", "complex_abs", "real_p",
           "imag_p", "complex_p", "conj_p", "complex_abs_p"]
