"""Helpers shared by the distributions of funcdiff.scipy.stats: standardising, support, scalars,
and the identity that refuses derivatives with respect to integer arguments."""

from __future__ import annotations

import math

import numpy as np

from funcdiff.compiler.codegen import RUNS_AS_IDENTITY
from funcdiff.core import Primitive, Zero, bind
from funcdiff.errors import DifferentiationError
from funcdiff.passes.traits import ZERO_PRESERVING
from funcdiff.primitives import elementwise as ew
from funcdiff.scipy._special_util import c as _c, floats as _floats

HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
LOG_PI = math.log(math.pi)
LOG_2 = math.log(2.0)


def standardize(name: str, x, loc, scale, *params):
    """``(z, log(scale), params...)`` with z = (x - loc) / scale, all in one float dtype."""
    x, loc, scale, *params = _floats(name, x, loc, scale, *params)
    z = ew.div(ew.sub(x, loc), scale)
    return (z, ew.log(scale), *params)


def finish(x):
    """numpy scalars for scalar results, as scipy returns."""
    if type(x) is np.ndarray and x.ndim == 0:
        return x[()]
    return x


def outside_support(inside, value):
    """``value`` where ``inside``, else -inf."""
    return ew.select(inside, value, _c(value, -np.inf))


def zero_outside(inside, value):
    """``value`` where ``inside``, else 0."""
    return ew.select(inside, value, _c(value, 0))


def nan_outside_unit(q, value):
    """``value`` where 0 <= q <= 1, else NaN (scipy's ppf off its domain)."""
    inside = ew.and_(ew.ge(q, _c(q, 0)), ew.le(q, _c(q, 1)))
    return ew.select(inside, value, _c(value, np.nan))


def scaled_quantile(name: str, standard, q, loc, scale, *params):
    """``loc + scale * standard(*params, q)``, the quantile of a location-scale family
    whose standard quantile card is ``standard``."""
    q, loc, scale, *params = _floats(name, q, loc, scale, *params)
    return finish(ew.add(loc, ew.mul(scale, standard(*params, q))))


def safe(inside, x, stand_in):
    """``x`` where ``inside``, else the in-support ``stand_in``: the formula then
    stays finite off the support, and the select afterwards gives it a zero derivative."""
    return ew.select(inside, x, _c(x, stand_in))


# An argument without a derivative (a count, or a shape that enters only through
# a special function differentiable in x alone): this identity passes its value
# through and, differentiated, raises a DifferentiationError naming it and why.
no_derivative_p = Primitive("no_derivative")
no_derivative_p.impl = lambda x, **params: x
no_derivative_p.abstract_eval = lambda x, **params: x
no_derivative_p.traits |= {RUNS_AS_IDENTITY, ZERO_PRESERVING}


def _no_derivative_jvp(primals, tangents, *, function, argument, reason):
    if type(tangents[0]) is not Zero:
        raise DifferentiationError(
            f"{function} has no derivative with respect to its argument {argument}: "
            f"{reason} Differentiate with respect to the other arguments, or wrap "
            f"{argument} in fd.stop_gradient.")
    return primals[0], tangents[0]


no_derivative_p.jvp = _no_derivative_jvp
no_derivative_p.batch = lambda vals, dims, **params: (
    bind(no_derivative_p, vals[0], **params), dims[0])
no_derivative_p.cost = lambda x, **params: {"flops": 0, "bytes": 0}

COUNTS = "it counts, so it takes integer values only."


def no_derivative(x, function: str, argument: str, reason: str = COUNTS):
    """``x`` unchanged; a derivative with respect to it raises a DifferentiationError
    naming ``argument`` of ``function`` and the ``reason``."""
    return bind(no_derivative_p, x, function=function, argument=argument, reason=reason)


def log_probability(p, complement):
    """``log(p)`` given p and its complement ``1 - p`` computed separately: log(p) up
    to 1/2, log1p(-complement) above, so neither loses digits; -inf (with a zero
    derivative) where p is 0."""
    half = _c(p, 0.5)
    positive = ew.gt(p, _c(p, 0))
    small = ew.le(p, half)
    value = ew.select(small, ew.log(ew.select(positive, p, half)),
                      ew.log1p(ew.neg(ew.min(complement, half))))
    return outside_support(positive, value)
