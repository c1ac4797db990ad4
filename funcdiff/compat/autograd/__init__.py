"""HIPS autograd's public API on funcdiff: porting a program is changing its imports.

``import funcdiff.compat.autograd as autograd`` stands for ``import autograd``,
and ``funcdiff.compat.autograd.numpy`` (with ``.linalg``, ``.fft``,
``.random``) and ``.scipy`` (``.special``, ``.stats.norm``, ...) are funcdiff's
namespaces under autograd's paths. The operators take ``argnum`` (an int or a
tuple of ints) as autograd's do:

- ``grad``, ``value_and_grad``, ``grad_and_aux``, ``elementwise_grad``,
  ``deriv``, ``jacobian``, ``hessian``, ``holomorphic_grad``, ``multigrad_dict``;
- ``make_vjp(f)(x) -> (vjp, value)``, ``make_jvp(f)(x)(v) -> (value, tangent)``,
  ``make_hvp(f)(x) -> (hvp, gradient)``, ``hessian_tensor_product`` (alias
  ``hessian_vector_product``), ``tensor_jacobian_product`` (alias
  ``vector_jacobian_product``), ``make_ggnvp``;
- ``checkpoint``; ``primitive`` with ``defvjp`` and ``defjvp``;
- ``misc.optimizers`` (``sgd``, ``rmsprop``, ``adam`` over pytrees),
  ``misc.flatten``, ``misc.fixed_points.fixed_point``, ``test_util.check_grads``.

Complex numbers follow JAX's convention, which autograd shares.

>>> import funcdiff.compat.autograd as autograd
>>> import funcdiff.compat.autograd.numpy as np
>>> float(autograd.grad(lambda x: np.tanh(x))(0.0))
1.0
"""

from __future__ import annotations

import sys

import numpy

from funcdiff import numpy as _fnp
from funcdiff import scipy as _fsp
from funcdiff.compat.autograd.operators import (
    checkpoint, deriv, elementwise_grad, grad, grad_and_aux, hessian, hessian_tensor_product,
    hessian_vector_product, holomorphic_grad, jacobian, make_ggnvp, make_hvp, make_jvp,
    make_vjp, multigrad_dict, tensor_jacobian_product, value_and_grad, vector_jacobian_product)
from funcdiff.compat.autograd.extend import defjvp, defvjp, primitive
from funcdiff.compat.autograd import misc, test_util  # noqa: F401


def _alias_namespaces() -> None:
    """Make autograd's module paths name funcdiff's modules, so that
    ``import funcdiff.compat.autograd.numpy.random as npr`` works as
    ``import autograd.numpy.random as npr`` does."""
    aliases = {"numpy": _fnp, "numpy.linalg": _fnp.linalg, "numpy.fft": _fnp.fft,
               "numpy.random": numpy.random, "scipy": _fsp}
    for name, module in list(sys.modules.items()):
        if name.startswith("funcdiff.scipy.") and not name.split(".")[-1].startswith("_"):
            aliases["scipy." + name[len("funcdiff.scipy."):]] = module
    for name, module in aliases.items():
        sys.modules.setdefault(f"{__name__}.{name}", module)


_alias_namespaces()
numpy = _fnp  # noqa: F811  autograd.numpy is funcdiff.numpy
scipy = _fsp

__all__ = ["grad", "value_and_grad", "grad_and_aux", "elementwise_grad", "deriv", "jacobian",
           "hessian", "holomorphic_grad", "multigrad_dict", "make_vjp", "make_jvp", "make_hvp",
           "hessian_tensor_product", "hessian_vector_product", "tensor_jacobian_product",
           "vector_jacobian_product", "make_ggnvp", "checkpoint", "primitive", "defvjp",
           "defjvp", "numpy", "scipy", "misc", "test_util"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
