"""``custom_jvp``: a function with a user-defined forward-mode rule, and its primitive.

``custom_jvp_call`` holds the staged function (or the function itself, when
it cannot be staged) and the user's rule as params. impl and abstract_eval
use the function; the jvp rule calls the user's rule on (primals, tangents),
after checking its output against the function's. Reverse mode needs nothing
more: in linearize the primal side of the rule runs now and its tangent side
is staged, so the rule is transposed like any program. vmap batches the
function and the rule.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import core, dtypes
from funcdiff.core import Primitive, ShapedArray, Tracer, Zero, bind, get_aval, tangent_aval
from funcdiff.custom_derivatives.common import (HeldFunction, add_tangents, bind_arguments,
                                                closure_tangents, convert, flat_function,
                                                stage, traced_arguments, batch_to_front,
                                                call_abstract_eval, call_cost, call_impl,
                                                is_array_like, unbatched_aval, zeros_for)
from funcdiff.errors import CustomRuleError, InvalidArgumentError
from funcdiff.interpreters import tape
from funcdiff.interpreters.batching import vmap_flat
from funcdiff.interpreters.call import batched_program
from funcdiff.primitives import elementwise
from funcdiff.tree_util import tree_flatten, tree_unflatten


custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, fun, jvp, num_consts):
    params = dict(call_jaxpr=call_jaxpr, fun=fun, jvp=jvp, num_consts=num_consts)
    arg_tangents = tangents[num_consts:]
    if all(type(t) is Zero for t in arg_tangents):
        # only closed-over values move: keep the custom rule for lower transforms
        outs = bind(custom_jvp_call_p, *primals, **params)
        out_tangents = [Zero(tangent_aval(get_aval(o))) for o in outs]
    else:
        outs, out_tangents = jvp(list(primals[num_consts:]), list(arg_tangents))
    return outs, add_tangents(out_tangents,
                               closure_tangents(call_jaxpr, primals, tangents, num_consts))


def _custom_jvp_call_batch(vals, dims, *, call_jaxpr, fun, jvp, num_consts):
    vals, dims, size = batch_to_front(vals, dims)
    call_b, fun_b = None, None
    if call_jaxpr is not None:
        call_b = batched_program(call_jaxpr, tuple(dims), size, [get_aval(v) for v in vals])
    else:
        fun_b = HeldFunction(lambda *a: vmap_flat(fun, size, dims[num_consts:], a, 0),
                             fun.__name__ + "_vmap")
    jvp_b = HeldFunction(_batched_jvp_rule(jvp, dims[num_consts:], size), jvp.__name__ + "_vmap")
    outs = bind(custom_jvp_call_p, *vals, call_jaxpr=call_b, fun=fun_b, jvp=jvp_b,
                num_consts=num_consts)
    return outs, [0] * len(outs)


def _batched_jvp_rule(jvp: HeldFunction, arg_dims: list, size: int) -> Callable:
    def rule(primals, tangents):
        n = len(primals)
        t_vals, t_dims = [], []
        for t, d in zip(tangents, arg_dims):
            if type(t) is Zero:  # stays symbolic: passed unbatched
                t_vals.append(Zero(unbatched_aval(t.aval, d)))
                t_dims.append(None)
            else:
                t_vals.append(t)
                t_dims.append(d)
        float_out: list = []

        def inner(*a):
            p_out, t_out = jvp(list(a[:n]), list(a[n:]))
            float_out[:] = [dtypes.is_inexact(get_aval(p).dtype) for p in p_out]
            return list(p_out) + [core.instantiate(t) if f else p
                                  for p, t, f in zip(p_out, t_out, float_out)]
        res = vmap_flat(inner, size, list(arg_dims) + t_dims, list(primals) + t_vals, 0)
        m = len(res) // 2
        p_out = res[:m]
        t_out = [t if f else Zero(tangent_aval(get_aval(p)))
                 for p, t, f in zip(p_out, res[m:], float_out)]
        return p_out, t_out
    return rule


custom_jvp_call_p.impl = call_impl
custom_jvp_call_p.abstract_eval = call_abstract_eval
custom_jvp_call_p.jvp = _custom_jvp_call_jvp
custom_jvp_call_p.batch = _custom_jvp_call_batch
custom_jvp_call_p.cost = call_cost


class custom_jvp:
    """A function with a user-defined forward-mode (JVP) rule.

    The rule is used by every transform: forward mode calls it, reverse mode
    linearizes and transposes it (so write it in funcdiff operations, linear
    in the tangents), vmap batches it, jit stages it. Second and higher
    derivatives differentiate the rule itself.

    Args:
      fun: the function; its arguments are arrays or pytrees of arrays.
      nondiff_argnums: positions of arguments that are not differentiated
        (Python values such as functions or flags). They are passed to the
        rule first: ``rule(*nondiff_args, primals, tangents)``.

    Methods:
      defjvp(rule): ``rule(primals, tangents) -> (primal_out, tangent_out)``,
        where ``primals`` and ``tangents`` are tuples of the (differentiable)
        arguments; tangent_out has primal_out's structure, shapes and dtypes.
      defjvps(*rules): one rule per argument, ``rule_i(t_i, primal_out,
        *primals)`` giving that argument's contribution (None: zero).

    Raises:
      CustomRuleError: when the rule's output structure, shapes or dtypes do
        not match (the message names the function and the output).

    >>> import funcdiff as fd, funcdiff.numpy as fnp
    >>> @fd.custom_jvp
    ... def log1pexp(x):
    ...     return fnp.log1p(fnp.exp(x))
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return log1pexp(x), t / (1.0 + fnp.exp(-x))   # the logistic function
    >>> round(float(fd.grad(log1pexp)(3.0)), 6)
    0.952574
    """

    def __init__(self, fun: Callable | None = None, nondiff_argnums: Sequence[int] = ()):
        if fun is None:  # used as @custom_jvp(nondiff_argnums=...)
            self._pending = tuple(nondiff_argnums)
            return
        self._setup(fun, nondiff_argnums)

    def _setup(self, fun, nondiff_argnums):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(set(nondiff_argnums)))
        self.jvp = None
        self._stageable = True

    def __repr__(self) -> str:
        rule = "no jvp rule yet" if self.jvp is None else \
            f"jvp={getattr(self.jvp, '__name__', type(self.jvp).__name__)}"
        return f"custom_jvp({getattr(self.fun, '__name__', type(self.fun).__name__)}, {rule})"

    def defjvp(self, jvp: Callable) -> Callable:
        """Set the rule ``jvp(primals, tangents) -> (primal_out, tangent_out)``; returns it."""
        if not callable(jvp):
            raise InvalidArgumentError(f"custom_jvp function {self.__name__}: defjvp needs "
                                       f"a callable rule, got {type(jvp).__name__}.")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """Set one rule per argument: ``jvp_i(tangent_i, primal_out, *primals)``."""
        if self.nondiff_argnums:
            raise InvalidArgumentError(
                f"custom_jvp function {self.__name__} has nondiff_argnums, which defjvps "
                "does not support; write one rule with defjvp instead.")
        name = self.__name__

        def jvp(primals, tangents):
            if len(jvps) != len(primals):
                raise CustomRuleError(
                    f"custom_jvp function {name} takes {len(primals)} argument(s) but "
                    f"defjvps was given {len(jvps)} rule(s); give one per argument (None "
                    "for an argument whose derivative is zero).")
            ans = self(*primals)
            total = None
            for i, (rule, t) in enumerate(zip(jvps, tangents)):
                leaves = tree_flatten(t)[0]
                if rule is None or all(type(x) is Zero for x in leaves):
                    continue
                t = tree_unflatten(tree_flatten(t)[1],
                                   [core.instantiate(x) if type(x) is Zero else x for x in leaves])
                term = rule(t, ans, *primals)
                total = term if total is None else _tree_add(total, term)
            if total is None:
                total = _tree_zeros(ans)
            return ans, total
        jvp.symbolic_zeros = True
        jvp.__name__ = f"{name}_jvps"
        self.jvp = jvp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not hasattr(self, "fun"):  # @custom_jvp(nondiff_argnums=...) applied to fun
            (fun,) = args
            wrapped = custom_jvp.__new__(custom_jvp)
            wrapped._setup(fun, self._pending)
            return wrapped
        name = self.__name__
        if self.jvp is None:
            raise CustomRuleError(
                f"custom_jvp function {name} has no derivative rule. Define one with "
                f"@{name}.defjvp (a function of (primals, tangents)) or {name}.defjvps.")
        args = bind_arguments(self.fun, args, kwargs, "custom_jvp")
        if core.cur_level() == 0:  # no transform is active: just run it
            return self.fun(*args)
        traced = traced_arguments(self, args, "custom_jvp")
        if traced is None:
            return self.fun(*args)
        dyn_idx, nondiff, leaves, in_tree = traced
        trace = tape.recording()
        if trace is not None:
            outs = _on_the_tape(self, trace, args, dyn_idx, nondiff, leaves, in_tree)
            if outs is not None:
                return outs
        store: dict = {}
        staged = stage(self, flat_function(self.fun, args, dyn_idx, in_tree, store,
                                             "custom_jvp", name), leaves, name)
        out_avals = list(staged.jaxpr.out_avals) if staged.jaxpr is not None else None
        rule = HeldFunction(_jvp_rule_flat(self.jvp, name, nondiff, in_tree, store, out_avals),
                            getattr(self.jvp, "__name__", f"{name}_jvp"))
        outs = bind(custom_jvp_call_p, *staged.consts, *leaves, call_jaxpr=staged.jaxpr,
                    fun=staged.fun, jvp=rule, num_consts=len(staged.consts))
        return tree_unflatten(store["out_tree"], outs)


def _on_the_tape(cj: custom_jvp, trace, args: tuple, dyn_idx: tuple, nondiff: list,
                 leaves: list, in_tree) -> Any:
    """``cj(*args)`` recorded on the eager tape without staging the function: the
    call is linearized at the concrete values, where the rule runs. None when the
    staged route must decide instead: the rule used values on the tape that it
    closes over (their derivatives come from autodiff of the function), or an
    argument is a tracer of another transform."""
    unwrapped = trace.unwrap(leaves)
    if unwrapped is None:
        return None
    primals, slots = unwrapped
    if not any(slots):  # nothing to differentiate by the rule: autodiff sees any closure
        return cj.fun(*args)
    name = cj.__name__
    store: dict = {}
    fun = HeldFunction(flat_function(cj.fun, args, dyn_idx, in_tree, store, "custom_jvp",
                                      name), name)
    rule = HeldFunction(_jvp_rule_flat(cj.jvp, name, nondiff, in_tree, store, None),
                        getattr(cj.jvp, "__name__", f"{name}_jvp"))
    outs = trace.record_linearized(custom_jvp_call_p, primals, slots,
                                   dict(call_jaxpr=None, fun=fun, jvp=rule, num_consts=0))
    return None if outs is None else tree_unflatten(store["out_tree"], outs)


def _tree_add(a: Any, b: Any) -> Any:
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    if ta != tb:
        raise CustomRuleError(f"defjvps rules returned tangents of different structures "
                              f"{ta} and {tb}; each must have the output's structure.")
    return tree_unflatten(ta, [elementwise.add(x, y) for x, y in zip(la, lb)])


def _tree_zeros(tree: Any) -> Any:
    leaves, t = tree_flatten(tree)
    return tree_unflatten(t, [zeros_for(get_aval(x)) for x in leaves])


def _jvp_rule_flat(user_rule: Callable, name: str, nondiff: list, in_tree, store: dict,
                   out_avals: list | None) -> Callable:
    """The user's rule as a function of flat primal and tangent leaves, with checks."""
    rule_name = getattr(user_rule, "__name__", "jvp rule")
    symbolic = getattr(user_rule, "symbolic_zeros", False)

    def rule(primals, tangents):
        if not symbolic:
            tangents = [zeros_for(t.aval if dtypes.is_inexact(get_aval(p).dtype) else get_aval(p))
                        if type(t) is Zero else t for p, t in zip(primals, tangents)]
        result = user_rule(*nondiff, tree_unflatten(in_tree, primals),
                           tree_unflatten(in_tree, tangents))
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise CustomRuleError(
                f"the jvp rule {rule_name} of custom_jvp function {name} must return a pair "
                f"(primal_out, tangent_out), but it returned {type(result).__name__}.")
        p_leaves, p_tree = tree_flatten(result[0])
        t_leaves, t_tree = tree_flatten(result[1])
        expected = store.setdefault("out_tree", p_tree)
        if p_tree != expected:
            raise CustomRuleError(
                f"the jvp rule {rule_name} of custom_jvp function {name} returned a primal "
                f"output of structure {p_tree}, but {name} returns {expected}.")
        if t_tree != p_tree:
            raise CustomRuleError(
                f"the jvp rule {rule_name} of custom_jvp function {name} returned a tangent "
                f"output of structure {t_tree}, but the primal output has structure "
                f"{p_tree}; the tangent must mirror the primal output exactly.")
        checked = []
        for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
            pa = get_aval(p)
            if out_avals is not None and out_avals[i] != pa:
                raise CustomRuleError(
                    f"the jvp rule {rule_name} of custom_jvp function {name} returned primal "
                    f"output leaf {i} as {pa.str_short()}, but {name} returns "
                    f"{out_avals[i].str_short()} there.")
            checked.append(_check_tangent_leaf(
                t, pa, f"tangent output leaf {i} of the jvp rule {rule_name} of custom_jvp "
                       f"function {name}"))
        return p_leaves, checked
    return rule



def _check_tangent_leaf(t: Any, primal_aval: ShapedArray, where: str) -> Any:
    """The tangent ``t`` checked against its primal's aval; a Python scalar is cast."""
    if not dtypes.is_inexact(primal_aval.dtype):
        return Zero(tangent_aval(primal_aval))
    if type(t) is Zero:
        return t
    if not is_array_like(t):
        raise CustomRuleError(f"{where} is a {type(t).__name__}, but it must be an array "
                              f"{primal_aval.str_short()}.")
    aval = get_aval(t)
    if aval.shape != primal_aval.shape:
        raise CustomRuleError(f"{where} has shape {aval.shape} ({aval.str_short()}), but the "
                              f"primal value it pairs with is {primal_aval.str_short()}; "
                              "return a tangent of exactly that shape.")
    if aval.dtype != primal_aval.dtype:
        if type(t) in (float, int) or not dtypes.is_float(aval.dtype):
            return np.asarray(t, primal_aval.dtype) if not isinstance(t, Tracer) else \
                convert(t, primal_aval.dtype)
        raise CustomRuleError(f"{where} has dtype {aval.dtype}, but the primal value it "
                              f"pairs with is {primal_aval.str_short()}; cast it with "
                              f".astype({primal_aval.dtype.name}).")
    return t
