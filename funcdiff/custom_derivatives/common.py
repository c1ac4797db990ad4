"""What ``custom_jvp``, ``custom_vjp`` and ``checkpoint`` share: staging the user's function.

``stage`` traces a decorated function to a jaxpr at its arguments' shapes and
``closure_convert`` turns the tracers it closed over into leading operands; a
function that branches on values falls back to being held as Python in a
``HeldFunction`` (a callable usable as a primitive param). Around that: the
positional binding and checks of arguments and outputs (errors name the
function), the impl rules (which evaluate a staged program with ``ir.run_impls``,
below ``bind``), batch and zero helpers, and the
tangent that closed-over operands contribute.
``funcdiff.remat.checkpoint`` reuses the staging and batching helpers.
"""

from __future__ import annotations

import inspect as _pyinspect
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import core, dtypes
from funcdiff.core import ShapedArray, Tracer, Zero, get_aval, is_array_like
from funcdiff.errors import (ConcretizationError, InvalidArgumentError,
                             TracerArrayConversionError)
from funcdiff.interpreters.batching import move_batch_axis
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.interpreters.transpose import add_cotangents
from funcdiff.ir import ClosedJaxpr, Jaxpr, eval_jaxpr, run_impls
from funcdiff.passes.pipeline import program_cost
from funcdiff.primitives import elementwise
from funcdiff.tree_util import tree_flatten, tree_unflatten


class HeldFunction:
    """A Python callable held as a primitive param: hashable by identity, printed by name."""

    def __init__(self, fn: Callable, name: str, **attrs: Any):
        self.fn = fn
        self.__name__ = name
        self.__dict__.update(attrs)

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return self.__name__


def closure_convert(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """``closed`` with its tracer constants moved to leading inputs, and those tracers.

    A staged function that closes over values of enclosing transforms has
    them as constants; as operands instead, the transforms see them.
    """
    j = closed.jaxpr
    lifted = [i for i, c in enumerate(closed.consts) if isinstance(c, Tracer)]
    if not lifted:
        return closed, []
    kept = [i for i in range(len(closed.consts)) if i not in set(lifted)]
    jaxpr = Jaxpr([j.constvars[i] for i in kept], [j.constvars[i] for i in lifted] + list(j.invars),
                  j.eqns, j.outvars)
    return ClosedJaxpr(jaxpr, [closed.consts[i] for i in kept]), [closed.consts[i] for i in lifted]


def batch_to_front(vals: Sequence[Any], dims: Sequence[int | None]) -> tuple[list, list, int]:
    """Batched values with their batch axis moved to 0; unbatched ones untouched."""
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    moved = [v if d is None else move_batch_axis(v, d, 0, size) for v, d in zip(vals, dims)]
    return moved, [None if d is None else 0 for d in dims], size


def unbatched_aval(aval: ShapedArray, dim: int | None) -> ShapedArray:
    if dim is None:
        return aval
    return ShapedArray(aval.shape[:dim] + aval.shape[dim + 1:], aval.dtype)


def zeros_for(aval: ShapedArray) -> Any:
    """A materialised zero tangent for a value of ``aval`` (float0 for integers)."""
    if dtypes.is_inexact(aval.dtype):
        return core.zeros_array(aval)
    return np.zeros(aval.shape, dtypes.float0)


def fun_name(f: Callable) -> str:
    return getattr(f, "__name__", None) or type(f).__name__


def bind_arguments(fun: Callable, args: tuple, kwargs: dict, what: str) -> tuple:
    """Keyword arguments resolved to positions, so rules see one positional tuple."""
    if not kwargs:
        return args
    try:
        bound = _pyinspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"{what} function {fun_name(fun)}: cannot bind the "
                                   f"arguments: {e}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise InvalidArgumentError(
            f"{what} function {fun_name(fun)} was called with keyword-only arguments "
            f"{sorted(bound.kwargs)}; custom derivative rules take positional arguments. "
            "Pass them positionally or close over them.")
    return tuple(bound.args)


def _split_nondiff(args: tuple, nondiff_argnums: tuple[int, ...], what: str, name: str):
    n = len(args)
    for i in nondiff_argnums:
        if not 0 <= i < n:
            raise InvalidArgumentError(
                f"{what} function {name} has nondiff_argnums={nondiff_argnums}, but it was "
                f"called with {n} positional argument(s).")
    dyn_idx = tuple(i for i in range(n) if i not in nondiff_argnums)
    return dyn_idx, [args[i] for i in nondiff_argnums]


def traced_arguments(owner: Any, args: tuple, what: str):
    """The differentiable arguments of a call of a custom function: ``(dyn_idx,
    nondiff, leaves, in_tree)``, checked; None when no leaf is traced. Then no
    transform sees the arguments, so none asks for the rule (values the function
    closes over are differentiated by autodiff in any case): the caller just runs
    the function."""
    name = owner.__name__
    dyn_idx, nondiff = _split_nondiff(args, owner.nondiff_argnums, what, name)
    leaves, in_tree = tree_flatten(tuple(args[i] for i in dyn_idx))
    _check_leaves(leaves, what, name)
    if not any(isinstance(x, Tracer) for x in leaves):
        return None
    return dyn_idx, nondiff, leaves, in_tree


def _check_leaves(leaves: list, what: str, name: str) -> None:
    for i, x in enumerate(leaves):
        if not is_array_like(x):
            raise InvalidArgumentError(
                f"{what} function {name} received a {type(x).__name__} as argument leaf {i}; "
                "differentiable arguments must be arrays or scalars. Mark non-array "
                "arguments with nondiff_argnums, or close over them.")


def flat_function(fun: Callable, args: tuple, dyn_idx: tuple, in_tree, store: dict,
                   what: str, name: str) -> Callable:
    """``fun`` as a function of the flat leaves of its differentiable arguments."""
    def fun_flat(*leaves):
        full = list(args)
        for i, v in zip(dyn_idx, tree_unflatten(in_tree, leaves)):
            full[i] = v
        out_leaves, out_tree = tree_flatten(fun(*full))
        for j, o in enumerate(out_leaves):
            if not is_array_like(o):
                raise InvalidArgumentError(f"{what} function {name} returned a "
                                           f"{type(o).__name__} as output leaf {j}; outputs "
                                           "must be arrays or pytrees of arrays.")
        store.setdefault("out_tree", out_tree)
        return out_leaves
    fun_flat.__name__ = name
    return fun_flat


class _Staged:
    """The staged form of a user function: jaxpr plus lifted closure operands, or,
    for a function with value-dependent Python control flow, the function itself."""

    __slots__ = ("jaxpr", "consts", "fun")

    def __init__(self, jaxpr, consts, fun):
        self.jaxpr, self.consts, self.fun = jaxpr, consts, fun


def stage(owner: Any, fun_flat: Callable, leaves: list, name: str) -> _Staged:
    avals = [get_aval(x) for x in leaves]
    if owner._stageable:
        try:
            closed, consts = closure_convert(trace_to_jaxpr(fun_flat, avals))
            return _Staged(closed, consts, None)
        except (ConcretizationError, TracerArrayConversionError):
            if core.staging_active():
                raise  # under jit or make_jaxpr there is no concrete fallback
            owner._stageable = False  # remember: this function branches on values
    return _Staged(None, [], HeldFunction(fun_flat, name))


# The impl, shape rule and cost of both custom call primitives (custom_jvp_call and
# custom_vjp_call); ``rules`` are their jvp, or fwd and bwd, which these ignore.


def call_impl(*args, call_jaxpr, fun, num_consts, **rules) -> list[Any]:
    if call_jaxpr is not None:
        return run_impls(call_jaxpr, args)
    return list(fun(*args[num_consts:]))


def call_abstract_eval(*avals, call_jaxpr, fun, num_consts, **rules) -> list[ShapedArray]:
    if call_jaxpr is not None:
        return list(call_jaxpr.out_avals)
    return list(trace_to_jaxpr(fun, list(avals[num_consts:])).out_avals)


def closure_tangents(call_jaxpr, primals, tangents, num_consts) -> list[Any] | None:
    """Output tangents due to closed-over operands, by ordinary autodiff of the function."""
    const_t = tangents[:num_consts]
    if call_jaxpr is None or all(type(t) is Zero for t in const_t):
        return None
    args = list(primals[num_consts:])
    _, out_t = jvp_flat(lambda *c: eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *c, *args),
                        list(primals[:num_consts]), list(const_t))
    return out_t


def add_tangents(a: list, b: list | None) -> list:
    if b is None:
        return a
    return [add_cotangents(x, y) for x, y in zip(a, b)]


def call_cost(*avals, call_jaxpr, fun, num_consts, **rules) -> dict:
    if call_jaxpr is None:
        try:
            call_jaxpr = trace_to_jaxpr(fun, list(avals[num_consts:]))
        except (ConcretizationError, TracerArrayConversionError):
            return {"flops": 0, "bytes": 0}
    return program_cost(call_jaxpr)




def convert(x: Any, dtype: np.dtype) -> Any:
    return elementwise.convert_element_type(x, new_dtype=np.dtype(dtype))
