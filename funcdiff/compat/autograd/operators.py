"""autograd's differential operators, on funcdiff's transforms.

Each takes ``argnum`` (an int, or a tuple of ints for a tuple of arguments)
and returns a function with ``fun``'s signature, as autograd's do: the
operator is defined for a function of one value ``x``, and ``nary`` lifts it
to the chosen positional arguments.
"""

from __future__ import annotations

import collections
import functools
import inspect
from typing import Any, Callable

import numpy as np

from funcdiff import api, jacobians
from funcdiff import numpy as fnp
from funcdiff.core import get_aval
from funcdiff.errors import DifferentiationError
from funcdiff.remat.checkpoint import checkpoint as _checkpoint
from funcdiff.tree_util import tree_map


def nary(unary_operator: Callable) -> Callable:
    """``unary_operator(f, x)`` as ``operator(fun, argnum=0)(*args, **kwargs)``."""
    @functools.wraps(unary_operator)
    def operator(fun: Callable, argnum: Any = 0, *extra: Any, **options: Any) -> Callable:
        @functools.wraps(fun)
        def applied(*args: Any, **kwargs: Any) -> Any:
            nums = argnum if isinstance(argnum, tuple) else (argnum,)

            def of_x(x):
                full = list(args)
                for i, v in zip(nums, x if isinstance(argnum, tuple) else (x,)):
                    full[i] = v
                return fun(*full, **kwargs)
            x = tuple(args[i] for i in nums) if isinstance(argnum, tuple) else args[argnum]
            return unary_operator(of_x, x, *extra, **options)
        return applied
    return operator


def _ones(value: Any) -> Any:
    return tree_map(lambda v: np.ones(np.shape(v), get_aval(v).dtype), value)


def _zeros(value: Any) -> Any:
    return tree_map(lambda v: np.zeros(np.shape(v), get_aval(v).dtype), value)


def _scalar_vjp(name: str, f: Callable, x: Any):
    ans, pullback = api.vjp(f, x)
    aval = get_aval(ans)
    if aval.size != 1 or aval.dtype.kind == "c":
        raise DifferentiationError(
            f"autograd's {name} applies to functions with one real output element, but f "
            f"returned {aval.str_short()}. Use jacobian, elementwise_grad or holomorphic_grad.")
    return ans, pullback(_ones(ans))[0]


@nary
def grad(f: Callable, x: Any) -> Any:
    """The gradient of a function with one real output element (autograd's grad).

    >>> float(grad(lambda x, y: x * y, 1)(2.0, 3.0))
    2.0
    """
    return _scalar_vjp("grad", f, x)[1]


@nary
def value_and_grad(f: Callable, x: Any) -> Any:
    """``(value, gradient)``."""
    return _scalar_vjp("value_and_grad", f, x)


@nary
def grad_and_aux(f: Callable, x: Any) -> Any:
    """For ``f`` returning ``(value, aux)``: ``(gradient of value, aux)``."""
    ans, pullback, aux = api.vjp(lambda v: tuple(f(v)), x, has_aux=True)
    return pullback(_ones(ans))[0], aux


@nary
def elementwise_grad(f: Callable, x: Any) -> Any:
    """The pullback of ones: the diagonal of a diagonal Jacobian (autograd's)."""
    ans, pullback = api.vjp(f, x)
    return pullback(_ones(ans))[0]


@nary
def deriv(f: Callable, x: Any) -> Any:
    """The jvp along ones: ``f'(x)`` for a function of a scalar."""
    return api.jvp(f, (x,), (_ones(x),))[1]


@nary
def jacobian(f: Callable, x: Any) -> Any:
    """The Jacobian, of shape ``out.shape + x.shape`` (any output)."""
    return jacobians.jacrev(f)(x)


@nary
def hessian(f: Callable, x: Any) -> Any:
    """The Jacobian of the Jacobian."""
    return jacobians.jacfwd(jacobians.jacrev(f))(x)


@nary
def holomorphic_grad(f: Callable, x: Any) -> Any:
    """``f'(z)`` of a holomorphic ``f``: the gradient of its real part."""
    return _scalar_vjp("holomorphic_grad", lambda z: fnp.real(f(z)), x)[1]


@nary
def make_vjp(f: Callable, x: Any) -> Any:
    """``(vjp, value)``: ``vjp(g)`` is the cotangent of ``x`` for ``g``."""
    ans, pullback = api.vjp(f, x)
    return (lambda g: pullback(g)[0]), ans


@nary
def make_jvp(f: Callable, x: Any) -> Any:
    """A function of a tangent ``v`` returning ``(value, tangent)``."""
    return lambda v: api.jvp(f, (x,), (v,))


@nary
def make_hvp(f: Callable, x: Any) -> Any:
    """``(hvp, gradient)`` at ``x``: ``hvp(v)`` is the Hessian times ``v``."""
    g, pullback = api.vjp(grad(f), x)
    return (lambda v: pullback(v)[0]), g


def hessian_tensor_product(fun: Callable, argnum: int = 0) -> Callable:
    """A function of ``(*args, tensor)``: the Hessian of ``fun`` contracted with ``tensor``."""
    gradient = grad(fun, argnum)

    def contracted(*args: Any, **kwargs: Any) -> Any:
        args, tensor = args[:-1], args[-1]
        return fnp.tensordot(gradient(*args, **kwargs), tensor, np.ndim(tensor))
    return grad(contracted, argnum)


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun: Callable, argnum: int = 0) -> Callable:
    """A function of ``(*args, tensor)``: ``tensor`` contracted with the Jacobian of ``fun``."""
    def contracted(*args: Any, **kwargs: Any) -> Any:
        args, tensor = args[:-1], args[-1]
        return fnp.tensordot(tensor, fun(*args, **kwargs), axes=np.ndim(tensor))
    return jacobian(contracted, argnum)


vector_jacobian_product = tensor_jacobian_product


def make_ggnvp(f: Callable, g: Callable = lambda y: 0.5 * fnp.sum(y ** 2, axis=-1),
               f_argnum: int = 0) -> Callable:
    """Generalized Gauss-Newton products ``J^T H_g J v`` of ``g(f(x))`` at ``x``."""
    @nary
    def at(f1: Callable, x: Any) -> Callable:
        y, pullback = api.vjp(f1, x)

        def ggnvp(v: Any) -> Any:
            jv = api.jvp(f1, (x,), (v,))[1]
            hjv = api.jvp(api.grad(g), (y,), (jv,))[1]
            return pullback(hjv)[0]
        return ggnvp
    return at(f, f_argnum)


def multigrad_dict(fun: Callable) -> Callable:
    """Gradients with respect to every named argument, as an OrderedDict name -> gradient."""
    signature = inspect.signature(fun)

    def gradients(*args: Any, **kwargs: Any) -> collections.OrderedDict:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        names = list(bound.arguments)
        g = api.grad(lambda values: fun(**dict(zip(names, values))))(
            tuple(bound.arguments.values()))
        return collections.OrderedDict(zip(names, g))
    return gradients


def checkpoint(fun: Callable) -> Callable:
    """``fun`` recomputed in the backward pass instead of storing its intermediates."""
    return _checkpoint(fun)


__all__ = ["nary", "grad", "value_and_grad", "grad_and_aux", "elementwise_grad", "deriv",
           "jacobian", "hessian", "holomorphic_grad", "make_vjp", "make_jvp", "make_hvp",
           "hessian_tensor_product", "hessian_vector_product", "tensor_jacobian_product",
           "vector_jacobian_product", "make_ggnvp", "multigrad_dict", "checkpoint"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
