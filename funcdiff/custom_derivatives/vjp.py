"""``custom_vjp``: a function with a user-defined reverse-mode rule, and its primitive.

``custom_vjp_call`` holds the staged function (or the function itself, when
it cannot be staged) and the user's ``fwd`` and ``bwd`` rules, each wrapped
so that it works on flat leaves and checks what the user returns (count,
structure, shapes and dtypes, with errors naming the rule and the argument).
Its jvp rule runs ``fwd`` and returns ``custom_lin`` of the tangents (module
``lin``), which reverse mode transposes by calling ``bwd``. vmap batches
``fwd`` and ``bwd``; the cotangent of an unbatched argument is summed over
the batch.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import core, dtypes
from funcdiff.core import Primitive, ShapedArray, Tracer, Zero, bind, get_aval, tangent_aval
from funcdiff.custom_derivatives.common import (HeldFunction, add_tangents, bind_arguments,
                                                closure_tangents, convert, flat_function,
                                                fun_name, stage, traced_arguments,
                                                batch_to_front, call_abstract_eval, call_cost,
                                                call_impl, is_array_like)
from funcdiff.custom_derivatives.lin import LinRule, scatter_mask, custom_lin_p
from funcdiff.errors import CustomRuleError, InvalidArgumentError
from funcdiff.interpreters.batching import vmap_flat
from funcdiff.interpreters import tape
from funcdiff.interpreters.call import batched_program
from funcdiff.primitives import reductions
from funcdiff.tree_util import tree_flatten, tree_unflatten


custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fun, fwd, bwd, num_consts):
    params = dict(call_jaxpr=call_jaxpr, fun=fun, fwd=fwd, bwd=bwd, num_consts=num_consts)
    args, arg_tangents = list(primals[num_consts:]), list(tangents[num_consts:])
    if all(type(t) is Zero for t in arg_tangents):
        outs = bind(custom_vjp_call_p, *primals, **params)
        out_tangents = [Zero(tangent_aval(get_aval(o))) for o in outs]
    else:
        outs, res, res_static = fwd(args)
        mask = tuple(type(t) is not Zero for t in arg_tangents)
        lin = LinRule(bwd, res_static, mask, [get_aval(a) for a in args],
                       [get_aval(o) for o in outs])
        staged = iter(bind(custom_lin_p, *res, *[t for t in arg_tangents if type(t) is not Zero],
                           rule=lin, num_res=len(res)))
        out_tangents = [next(staged) if f else Zero(tangent_aval(a))
                        for a, f in zip(lin.out_avals_all, lin.float_out)]
    return outs, add_tangents(out_tangents,
                               closure_tangents(call_jaxpr, primals, tangents, num_consts))


def _custom_vjp_call_batch(vals, dims, *, call_jaxpr, fun, fwd, bwd, num_consts):
    vals, dims, size = batch_to_front(vals, dims)
    arg_dims = dims[num_consts:]
    call_b, fun_b = None, None
    if call_jaxpr is not None:
        call_b = batched_program(call_jaxpr, tuple(dims), size, [get_aval(v) for v in vals])
    else:
        fun_b = HeldFunction(lambda *a: vmap_flat(fun, size, arg_dims, a, 0),
                             fun.__name__ + "_vmap")
    fwd_b = HeldFunction(_batched_fwd(fwd, arg_dims, size), fwd.__name__ + "_vmap")
    bwd_b = HeldFunction(_batched_bwd(bwd, arg_dims, size), bwd.__name__ + "_vmap",
                         fun_name=bwd.fun_name)
    outs = bind(custom_vjp_call_p, *vals, call_jaxpr=call_b, fun=fun_b, fwd=fwd_b, bwd=bwd_b,
                num_consts=num_consts)
    return outs, [0] * len(outs)


def _batched_fwd(fwd: HeldFunction, arg_dims: list, size: int) -> Callable:
    def run(args):
        n_out = static = None  # known once fwd has run

        def inner(*a):
            nonlocal n_out, static
            outs, res, static = fwd(list(a))
            n_out = len(outs)
            return list(outs) + list(res)
        results = vmap_flat(inner, size, list(arg_dims), list(args), 0)
        return results[:n_out], results[n_out:], static
    return run


def _batched_bwd(bwd: HeldFunction, arg_dims: list, size: int) -> Callable:
    """``bwd`` over batched residuals and cotangents (all at axis 0); the cotangent of
    an unbatched argument is summed over the batch."""

    def run(res, res_static, cts):
        n_res = len(res)
        is_f0 = [getattr(c, "dtype", None) == dtypes.float0 for c in cts]
        # integer outputs' cotangents are float0 zeros: pass one unbatched member
        cts = [np.zeros(c.shape[1:], dtypes.float0) if f0 else c for c, f0 in zip(cts, is_f0)]
        ct_dims = [None if f0 else 0 for f0 in is_f0]
        is_none: list = []

        def inner(*a):
            out = bwd(list(a[:n_res]), res_static, list(a[n_res:]))
            is_none[:] = [c is None for c in out]
            return [core.zeros_array(ShapedArray((), np.dtype(np.float64))) if c is None else c
                    for c in out]
        results = vmap_flat(inner, size, [0] * n_res + ct_dims, list(res) + list(cts), 0)
        out = []
        for r, none, d in zip(results, is_none, arg_dims):
            if none:
                out.append(None)
            elif d is None:
                out.append(reductions.reduce_sum(r, axes=(0,)))
            else:
                out.append(r)
        return out
    return run


custom_vjp_call_p.impl = call_impl
custom_vjp_call_p.abstract_eval = call_abstract_eval
custom_vjp_call_p.jvp = _custom_vjp_call_jvp
custom_vjp_call_p.batch = _custom_vjp_call_batch
custom_vjp_call_p.cost = call_cost


class custom_vjp:
    """A function with a user-defined reverse-mode (VJP) rule.

    ``defvjp(fwd, bwd)``: ``fwd(*args)`` returns ``(output, residuals)``, with
    residuals any pytree of arrays (other Python values are kept as they are);
    ``bwd(*nondiff_args, residuals, cotangent)`` returns a tuple with one
    cotangent per differentiable argument, shaped like it (or None for zero).
    Reverse mode calls ``bwd``; written in funcdiff operations it can itself be
    differentiated (grad of grad). vmap batches fwd and bwd, jit stages them.
    Forward mode (jvp, jacfwd, hessian) applies the transpose of ``bwd``, which
    exists because bwd is linear in the cotangent; a bwd that cannot be
    transposed (it branches on the cotangent or leaves funcdiff) raises an error
    suggesting custom_jvp.

    Args:
      fun: the function; arguments are arrays or pytrees of arrays.
      nondiff_argnums: positions of non-differentiated (Python) arguments; they
        are passed to ``fwd`` in place and to ``bwd`` first.

    Raises:
      CustomRuleError: when bwd returns the wrong number of cotangents or a
        cotangent of the wrong shape (the message names the function, the
        argument position and the expected shape), or fwd's output does not
        match the function's.

    >>> import funcdiff as fd, funcdiff.numpy as fnp
    >>> @fd.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> def fwd(x):
    ...     return x, None
    >>> def bwd(res, g):
    ...     return (fnp.clip(g, -1.0, 1.0),)
    >>> clip_gradient.defvjp(fwd, bwd)
    >>> float(fd.grad(lambda x: 5.0 * clip_gradient(x))(2.0))
    1.0
    """

    def __init__(self, fun: Callable | None = None, nondiff_argnums: Sequence[int] = ()):
        if fun is None:
            self._pending = tuple(nondiff_argnums)
            return
        self._setup(fun, nondiff_argnums)

    def _setup(self, fun, nondiff_argnums):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(set(nondiff_argnums)))
        self.fwd = self.bwd = None
        self._stageable = True

    def __repr__(self) -> str:
        name = lambda f: getattr(f, "__name__", type(f).__name__)  # noqa: E731
        rules = "no rules yet" if self.fwd is None else \
            f"fwd={name(self.fwd)}, bwd={name(self.bwd)}"
        return f"custom_vjp({name(self.fun)}, {rules})"

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """Set the rules: ``fwd(*args) -> (out, residuals)``, ``bwd(residuals, ct) -> cts``."""
        for what, f in (("fwd", fwd), ("bwd", bwd)):
            if not callable(f):
                raise InvalidArgumentError(f"custom_vjp function {self.__name__}: defvjp "
                                           f"needs a callable {what}, got {type(f).__name__}.")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not hasattr(self, "fun"):
            (fun,) = args
            wrapped = custom_vjp.__new__(custom_vjp)
            wrapped._setup(fun, self._pending)
            return wrapped
        name = self.__name__
        if self.fwd is None:
            raise CustomRuleError(f"custom_vjp function {name} has no derivative rule. "
                                  f"Define one with {name}.defvjp(fwd, bwd).")
        args = bind_arguments(self.fun, args, kwargs, "custom_vjp")
        if core.cur_level() == 0:
            return self.fun(*args)
        traced = traced_arguments(self, args, "custom_vjp")
        if traced is None:
            return self.fun(*args)
        dyn_idx, nondiff, leaves, in_tree = traced
        dyn_args = tuple(args[i] for i in dyn_idx)
        trace = tape.recording()
        if trace is not None:
            outs = _on_the_tape(self, trace, args, dyn_idx, nondiff, leaves, in_tree)
            if outs is not None:
                return outs
        store: dict = {}
        staged = stage(self, flat_function(self.fun, args, dyn_idx, in_tree, store,
                                             "custom_vjp", name), leaves, name)
        out_avals = list(staged.jaxpr.out_avals) if staged.jaxpr is not None else None
        fwd = HeldFunction(_fwd_flat(self.fwd, name, args, dyn_idx, in_tree, store, out_avals),
                           fun_name(self.fwd))
        bwd = HeldFunction(_bwd_flat(self.bwd, name, nondiff, dyn_args, dyn_idx, store),
                           fun_name(self.bwd), fun_name=name)
        outs = bind(custom_vjp_call_p, *staged.consts, *leaves, call_jaxpr=staged.jaxpr,
                    fun=staged.fun, fwd=fwd, bwd=bwd, num_consts=len(staged.consts))
        return tree_unflatten(store["out_tree"], outs)


def _on_the_tape(cv: custom_vjp, trace, args: tuple, dyn_idx: tuple, nondiff: list,
                 leaves: list, in_tree) -> Any:
    """``cv(*args)`` recorded on the eager tape: ``fwd`` runs once on the concrete
    values and the node's pullback calls ``bwd``, with no staging. None when the
    staged route must decide instead: ``fwd`` used values on the tape that it
    closes over (their derivatives come from autodiff of the function), or an
    argument is a tracer of another transform.
    """
    name = cv.__name__
    unwrapped = trace.unwrap(leaves)
    if unwrapped is None:
        return None
    primals, slots = unwrapped
    if not any(slots):  # nothing to differentiate by the rule: autodiff sees any closure
        return cv.fun(*args)
    store: dict = {}
    n_nodes = len(trace.nodes)
    outs, res, res_static = _fwd_flat(cv.fwd, name, args, dyn_idx, in_tree, store, None)(primals)
    if len(trace.nodes) != n_nodes or any(isinstance(v, Tracer) for v in (*outs, *res)):
        del trace.nodes[n_nodes:]
        return None
    bwd = HeldFunction(_bwd_flat(cv.bwd, name, nondiff, tuple(args[i] for i in dyn_idx),
                                 dyn_idx, store),
                       fun_name(cv.bwd), fun_name=name)
    mask = tuple(bool(s) for s in slots)
    lin = LinRule(bwd, res_static, mask, [get_aval(p) for p in primals],
                   [get_aval(o) for o in outs])

    def pullback(cts):
        return scatter_mask(lin.cotangents(res, [c for c, f in zip(cts, lin.float_out) if f]),
                             mask)
    return tree_unflatten(store["out_tree"], trace.record(outs, pullback, slots))


def _fwd_flat(user_fwd: Callable, name: str, args: tuple, dyn_idx: tuple, in_tree,
              store: dict, out_avals: list | None) -> Callable:
    fwd_name = fun_name(user_fwd)

    def fwd(leaves):
        full = list(args)
        for i, v in zip(dyn_idx, tree_unflatten(in_tree, leaves)):
            full[i] = v
        result = user_fwd(*full)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise CustomRuleError(
                f"the fwd rule {fwd_name} of custom_vjp function {name} must return a pair "
                f"(output, residuals), but it returned {type(result).__name__}.")
        out_leaves, out_tree = tree_flatten(result[0])
        expected = store.setdefault("out_tree", out_tree)
        if out_tree != expected:
            raise CustomRuleError(
                f"the fwd rule {fwd_name} of custom_vjp function {name} returned an output "
                f"of structure {out_tree}, but {name} returns {expected}.")
        if out_avals is not None:
            for i, (o, a) in enumerate(zip(out_leaves, out_avals)):
                if get_aval(o) != a:
                    raise CustomRuleError(
                        f"the fwd rule {fwd_name} of custom_vjp function {name} returned "
                        f"output leaf {i} as {get_aval(o).str_short()}, but {name} returns "
                        f"{a.str_short()} there; fwd must compute the same output.")
        res_leaves, res_tree = tree_flatten(result[1])
        is_arr = [isinstance(r, (Tracer, np.ndarray, np.generic)) for r in res_leaves]
        arrays = [r for r, a in zip(res_leaves, is_arr) if a]
        static = (res_tree, tuple(is_arr), [r for r, a in zip(res_leaves, is_arr) if not a])
        return out_leaves, arrays, static
    return fwd


def _bwd_flat(user_bwd: Callable, name: str, nondiff: list, dyn_args: tuple, dyn_idx: tuple,
              store: dict) -> Callable:
    """The user's bwd as a function of flat residuals and cotangents, returning one
    cotangent (or None) per argument leaf, after checking count, structure and shapes."""
    bwd_name = fun_name(user_bwd)
    arg_trees = [tree_flatten(a) for a in dyn_args]

    def bwd(res_arrays, res_static, cts_flat):
        res_tree, is_arr, others = res_static
        arrays, others_it = iter(res_arrays), iter(others)
        res = tree_unflatten(res_tree, [next(arrays) if a else next(others_it) for a in is_arr])
        result = user_bwd(*nondiff, res, tree_unflatten(store["out_tree"], cts_flat))
        n = len(dyn_args)
        if not isinstance(result, (tuple, list)) or len(result) != n:
            got = (f"{len(result)} cotangent(s)" if isinstance(result, (tuple, list))
                   else f"a {type(result).__name__}")
            raise CustomRuleError(
                f"the bwd rule {bwd_name} of custom_vjp function {name} returned {got}, but "
                f"{name} has {n} differentiable argument(s) (positions "
                f"{list(dyn_idx)}); bwd must return a tuple with one cotangent per argument, "
                "each shaped like the argument (None for zero).")
        out = []
        for k, (ct, (leaves, tree)) in enumerate(zip(result, arg_trees)):
            pos = dyn_idx[k]
            if ct is None:
                out.extend([None] * len(leaves))
                continue
            ct_leaves, ct_tree = tree_flatten(ct)
            if ct_tree != tree:
                raise CustomRuleError(
                    f"the bwd rule {bwd_name} of custom_vjp function {name} returned, for "
                    f"argument {pos}, a cotangent of structure {ct_tree}, but the argument "
                    f"has structure {tree}; return one array per leaf (or None).")
            for j, (c, x) in enumerate(zip(ct_leaves, leaves)):
                xa = get_aval(x)
                where = (f"the cotangent for argument {pos}"
                         + (f" (leaf {j})" if len(leaves) > 1 else "")
                         + f" returned by the bwd rule {bwd_name} of custom_vjp function {name}")
                if not dtypes.is_inexact(xa.dtype):
                    out.append(None)  # integer arguments have no cotangent
                    continue
                if not is_array_like(c):
                    raise CustomRuleError(f"{where} is a {type(c).__name__}; expected an "
                                          f"array of shape {xa.shape} ({xa.str_short()}).")
                ca = get_aval(c)
                if ca.shape != xa.shape:
                    raise CustomRuleError(
                        f"{where} has shape {ca.shape}, but argument {pos} has shape "
                        f"{xa.shape} ({xa.str_short()}); expected shape {xa.shape}.")
                if ca.dtype != xa.dtype:
                    if dtypes.is_float(ca.dtype) or type(c) in (float, int):
                        c = np.asarray(c, xa.dtype) if not isinstance(c, Tracer) else \
                            convert(c, xa.dtype)
                    else:
                        raise CustomRuleError(f"{where} has dtype {ca.dtype}; expected "
                                              f"{xa.dtype} like argument {pos}.")
                out.append(c)
        return out
    return bwd
