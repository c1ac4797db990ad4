"""Declaring elementwise cards whose values are scipy.special's own functions.

- ``scipy_special()`` is the scipy.special module, imported at the first call of
  such an impl and not before: ``import funcdiff`` never imports scipy, and
  without scipy the first call raises ``ScipyMissingError``, saying how to
  install it.
- ``scipy_elementwise`` declares the card: impl (scipy's value, cast back to the
  operands' dtype, which is a no-op for float64: the values are scipy's bit for
  bit), shape and dtype rule, a check of the static params, jvp from one
  partial derivative per operand (written in funcdiff operations), batch and
  cost. A partial is a function, ``None`` (identically zero) or
  ``NoDerivative(reason)``: the jvp then raises a ``DifferentiationError``
  naming the operand when that operand's tangent is not the symbolic zero, so
  a missing derivative is never a silent zero.
"""

from __future__ import annotations

import importlib
from typing import Callable

import numpy as np

from funcdiff import roles
from funcdiff.core import Primitive, ShapedArray, Zero, bind, get_aval
from funcdiff.errors import DifferentiationError, FunctionalDiffError, InvalidArgumentError
from funcdiff.primitives import structural
from funcdiff.primitives.cards import broadcast_shapes, elementwise_cost, same_dtype
from funcdiff.primitives.elementwise_cards import elementwise_batch
from funcdiff.primitives.elementwise_common import FLOAT, accepts


class ScipyMissingError(FunctionalDiffError, ImportError):
    """A function whose values funcdiff takes from scipy was called without scipy."""


def scipy_special():
    """The scipy.special module, imported when first needed."""
    try:
        return importlib.import_module("scipy.special")
    except ImportError:
        raise ScipyMissingError(
            "this funcdiff.scipy.special function takes its values from scipy.special, "
            "but scipy is not installed: install it (pip install funcdiff[scipy]).") from None


class NoDerivative:
    """The partial derivative with respect to an operand that funcdiff does not have."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason


def scipy_elementwise(name: str, call: Callable, operands: tuple[str, ...], partials: tuple,
                      *, check_params: Callable | None = None, flops: int = 100,
                      singular: bool = False, nondifferentiable: bool = False,
                      kinds: str = FLOAT) -> Primitive:
    """An elementwise primitive of ``len(operands)`` floating operands of one dtype
    (broadcast together) whose value is ``call(scipy.special, *operands, **params)``.

    ``operands`` are the operands' names, for errors. ``partials[i](*primals,
    out=..., **params)`` is the derivative with respect to operand i, in funcdiff
    operations (``None``: zero; ``NoDerivative``: refused by name).
    ``check_params(**params)`` raises the funcdiff error for bad static params.
    ``singular`` scales tangents with safe_mul (the derivative can be infinite).
    ``kinds`` are the dtype kinds accepted (real floats unless told)."""
    prim = Primitive(name)

    def impl(*xs, **params):
        dtype = np.result_type(*xs)
        with np.errstate(all="ignore"):
            out = call(scipy_special(), *xs, **params)
        return out.astype(dtype, copy=False) if out.dtype != dtype else out

    def abstract_eval(*avals, **params):
        if check_params is not None:
            check_params(**params)
        dtype = same_dtype(name, *avals)
        return ShapedArray(broadcast_shapes(name, *[a.shape for a in avals]), dtype)

    def jvp(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        out_shape = get_aval(out).shape
        scale = (roles.SAFE_MUL if singular else roles.MUL).primitive.bind
        total = None
        for operand, t, partial in zip(operands, tangents, partials):
            if type(t) is Zero or partial is None:
                continue
            if isinstance(partial, NoDerivative):
                raise DifferentiationError(
                    f"funcdiff has no derivative of {name} with respect to its argument "
                    f"{operand}: {partial.reason} Differentiate with respect to the other "
                    f"arguments only, or wrap {operand} in fd.stop_gradient.")
            term = scale(t, partial(*primals, out=out, **params))
            if get_aval(term).shape != out_shape:
                term = structural.broadcast_to(term, out_shape)
            total = term if total is None else roles.ADD.primitive.bind(total, term)
        return out, Zero(get_aval(out)) if total is None else total

    prim.impl = impl
    prim.abstract_eval = abstract_eval
    prim = accepts(prim, kinds)
    if nondifferentiable:
        prim.nondifferentiable = True
    else:
        prim.jvp = jvp
    prim.batch = elementwise_batch(prim)
    prim.cost = elementwise_cost(flops)
    return prim


def static_order_check(name: str, *, integer: bool = False, param: str = "order"):
    """A ``check_params`` for one static real (or int) param named ``param``."""
    kinds = (int,) if integer else (int, float)

    def check(**params):
        value = params[param]
        if type(value) not in kinds:
            from_what = "a Python int" if integer else "a Python float or int"
            raise InvalidArgumentError(
                f"the primitive {name} needs its static {param} as {from_what}, got "
                f"{value!r}")
    return check
