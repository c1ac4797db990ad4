"""Custom derivative rules: ``custom_jvp`` and ``custom_vjp``.

A user who knows a better derivative than the one autodiff would derive (a
numerically stable one, a cheaper one, an implicit one, a deliberately
different one such as a straight-through estimator) decorates the function
and states the rule.

How it works. Under a transform, the function is staged into a jaxpr at the
shapes of its arguments; values it closes over that belong to enclosing
transforms become explicit leading operands (*closure conversion*), so every
transform sees them. The jaxpr and the rule, a Python callable held in a
hashable ``HeldFunction``, are the params of one primitive:

- ``custom_jvp_call``: impl and abstract_eval use the jaxpr; the jvp rule calls
  the user's rule on (primals, tangents). Reverse mode needs nothing more: in
  linearize the primal side of the rule runs now and its tangent side is
  staged, so the rule is transposed like any program. vmap batches the jaxpr
  and the rule.
- ``custom_vjp_call``: the jvp rule runs the user's ``fwd`` and returns, as the
  output tangent, the linear primitive ``custom_lin`` applied to the input
  tangents. ``custom_lin`` holds ``bwd`` and takes the residuals as operands;
  its transpose calls ``bwd``, so reverse mode (and grad-of-grad, when ``bwd``
  is written in funcdiff operations) uses the user's rule. Its forward
  evaluation, which forward mode needs, transposes ``bwd``: the Jacobian the
  user declared, applied to the tangent. That requires ``bwd`` to be linear
  in the cotangent (it always is, mathematically); otherwise a clear error
  suggests custom_jvp.

The rule governs the derivative with respect to the declared arguments; the
derivative with respect to closed-over values comes from ordinary autodiff
of the function. Rules must not close over values that the same transform
differentiates (pass them as arguments): a Python closure cannot be
re-pointed at the primal values. A function with Python control flow on
values cannot be staged; it then runs as Python each time (still correct in
eager use, where values are concrete; it cannot be jitted).
"""

from __future__ import annotations

import functools
import inspect as _pyinspect
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import core, dtypes
from funcdiff.core import Primitive, ShapedArray, Tracer, Zero, bind, get_aval, tangent_aval
from funcdiff.errors import (ConcretizationError, CustomRuleError, DifferentiationError,
                             FunctionalDiffError, InvalidArgumentError,
                             TracerArrayConversionError)
from funcdiff.interpreters.batching import move_batch_axis, vmap_flat
from funcdiff.interpreters.call import batched_program
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.staging import JaxprTrace, trace_to_jaxpr
from funcdiff.interpreters.transpose import (UndefinedPrimal, add_cotangents, backward_pass,
                                             is_undefined)
from funcdiff.ir import ClosedJaxpr, Jaxpr, Literal, eval_jaxpr
from funcdiff.tree_util import tree_flatten, tree_unflatten

# ---------------------------------------------------------------------------
# Helpers shared with funcdiff.checkpoint


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


def is_array_like(x: Any) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic)) or type(x) in (float, int, bool)


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


def run_impls(closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
    """Evaluate ``closed`` with each primitive's numpy impl, bypassing ``bind``.

    Used by impl rules: they must compute values even when called while a
    staging trace is active (constant folding in jit). Each intermediate is
    dropped after its last use, so a recomputing backward pass holds only
    what it still needs.
    """
    jaxpr = closed.jaxpr
    env: dict = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, args))
    keep = {a for a in jaxpr.outvars if type(a) is not Literal}
    last_use: dict = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for a in eqn.invars:
            if type(a) is not Literal:
                last_use[a] = i
    for i, eqn in enumerate(jaxpr.eqns):
        out = eqn.primitive.impl(*[a.val if type(a) is Literal else env[a] for a in eqn.invars],
                                 **eqn.params)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outvars, out))
        else:
            env[eqn.outvars[0]] = out
        for a in eqn.invars:
            if type(a) is not Literal and last_use[a] == i and a not in keep:
                env.pop(a, None)
    return [a.val if type(a) is Literal else env[a] for a in jaxpr.outvars]


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
    if dtypes.is_float(aval.dtype):
        return core.zeros_array(aval)
    return np.zeros(aval.shape, dtypes.float0)


def _fun_name(f: Callable) -> str:
    return getattr(f, "__name__", None) or type(f).__name__


def _bind_arguments(fun: Callable, args: tuple, kwargs: dict, what: str) -> tuple:
    """Keyword arguments resolved to positions, so rules see one positional tuple."""
    if not kwargs:
        return args
    try:
        bound = _pyinspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"{what} function {_fun_name(fun)}: cannot bind the "
                                   f"arguments: {e}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise InvalidArgumentError(
            f"{what} function {_fun_name(fun)} was called with keyword-only arguments "
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


def _check_leaves(leaves: list, what: str, name: str) -> None:
    for i, x in enumerate(leaves):
        if not is_array_like(x):
            raise InvalidArgumentError(
                f"{what} function {name} received a {type(x).__name__} as argument leaf {i}; "
                "differentiable arguments must be arrays or scalars. Mark non-array "
                "arguments with nondiff_argnums, or close over them.")


def _flat_function(fun: Callable, args: tuple, dyn_idx: tuple, in_tree, store: dict,
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


def _stage(owner: Any, fun_flat: Callable, leaves: list, name: str) -> _Staged:
    avals = [get_aval(x) for x in leaves]
    if owner._stageable:
        try:
            closed, consts = closure_convert(trace_to_jaxpr(fun_flat, avals))
            return _Staged(closed, consts, None)
        except (ConcretizationError, TracerArrayConversionError):
            if isinstance(core._dynamic[-1].trace, JaxprTrace):
                raise  # under jit or make_jaxpr there is no concrete fallback
            owner._stageable = False  # remember: this function branches on values
    return _Staged(None, [], HeldFunction(fun_flat, name))


def _out_avals(call_jaxpr, fun, num_consts, avals) -> list[ShapedArray]:
    if call_jaxpr is not None:
        return list(call_jaxpr.out_avals)
    return list(trace_to_jaxpr(fun, list(avals[num_consts:])).out_avals)


def _closure_tangents(call_jaxpr, primals, tangents, num_consts) -> list[Any] | None:
    """Output tangents due to closed-over operands, by ordinary autodiff of the function."""
    const_t = tangents[:num_consts]
    if call_jaxpr is None or all(type(t) is Zero for t in const_t):
        return None
    args = list(primals[num_consts:])
    _, out_t = jvp_flat(lambda *c: eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *c, *args),
                        list(primals[:num_consts]), list(const_t))
    return out_t


def _add_tangents(a: list, b: list | None) -> list:
    if b is None:
        return a
    return [add_cotangents(x, y) for x, y in zip(a, b)]


def _call_cost(call_jaxpr, fun, num_consts, avals) -> dict:
    from funcdiff.interpreters.passes import program_cost
    if call_jaxpr is None:
        try:
            call_jaxpr = trace_to_jaxpr(fun, list(avals[num_consts:]))
        except (ConcretizationError, TracerArrayConversionError):
            return {"flops": 0, "bytes": 0}
    return program_cost(call_jaxpr)


def _check_tangent_leaf(t: Any, primal_aval: ShapedArray, where: str) -> Any:
    """The tangent ``t`` checked against its primal's aval; a Python scalar is cast."""
    if not dtypes.is_float(primal_aval.dtype):
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
                _convert(t, primal_aval.dtype)
        raise CustomRuleError(f"{where} has dtype {aval.dtype}, but the primal value it "
                              f"pairs with is {primal_aval.str_short()}; cast it with "
                              f".astype({primal_aval.dtype.name}).")
    return t


def _convert(x: Any, dtype: np.dtype) -> Any:
    from funcdiff.primitives import elementwise
    return elementwise.convert_element_type(x, new_dtype=np.dtype(dtype))


# ---------------------------------------------------------------------------
# custom_jvp


custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)


def _custom_jvp_call_impl(*args, call_jaxpr, fun, jvp, num_consts):
    if call_jaxpr is not None:
        return run_impls(call_jaxpr, args)
    return list(fun(*args[num_consts:]))


def _custom_jvp_call_abstract_eval(*avals, call_jaxpr, fun, jvp, num_consts):
    return _out_avals(call_jaxpr, fun, num_consts, avals)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, fun, jvp, num_consts):
    params = dict(call_jaxpr=call_jaxpr, fun=fun, jvp=jvp, num_consts=num_consts)
    arg_tangents = tangents[num_consts:]
    if all(type(t) is Zero for t in arg_tangents):
        # only closed-over values move: keep the custom rule for lower transforms
        outs = bind(custom_jvp_call_p, *primals, **params)
        out_tangents = [Zero(tangent_aval(get_aval(o))) for o in outs]
    else:
        outs, out_tangents = jvp(list(primals[num_consts:]), list(arg_tangents))
    return outs, _add_tangents(out_tangents,
                               _closure_tangents(call_jaxpr, primals, tangents, num_consts))


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
            float_out[:] = [dtypes.is_float(get_aval(p).dtype) for p in p_out]
            return list(p_out) + [core.instantiate(t) if f else p
                                  for p, t, f in zip(p_out, t_out, float_out)]
        res = vmap_flat(inner, size, list(arg_dims) + t_dims, list(primals) + t_vals, 0)
        m = len(res) // 2
        p_out = res[:m]
        t_out = [t if f else Zero(tangent_aval(get_aval(p)))
                 for p, t, f in zip(p_out, res[m:], float_out)]
        return p_out, t_out
    return rule


def _custom_jvp_call_cost(*avals, call_jaxpr, fun, jvp, num_consts):
    return _call_cost(call_jaxpr, fun, num_consts, avals)


custom_jvp_call_p.impl = _custom_jvp_call_impl
custom_jvp_call_p.abstract_eval = _custom_jvp_call_abstract_eval
custom_jvp_call_p.jvp = _custom_jvp_call_jvp
custom_jvp_call_p.batch = _custom_jvp_call_batch
custom_jvp_call_p.cost = _custom_jvp_call_cost


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
        args = _bind_arguments(self.fun, args, kwargs, "custom_jvp")
        if core.cur_level() == 0:  # no transform is active: just run it
            return self.fun(*args)
        dyn_idx, nondiff = _split_nondiff(args, self.nondiff_argnums, "custom_jvp", name)
        leaves, in_tree = tree_flatten(tuple(args[i] for i in dyn_idx))
        _check_leaves(leaves, "custom_jvp", name)
        store: dict = {}
        staged = _stage(self, _flat_function(self.fun, args, dyn_idx, in_tree, store,
                                             "custom_jvp", name), leaves, name)
        out_avals = list(staged.jaxpr.out_avals) if staged.jaxpr is not None else None
        rule = HeldFunction(_jvp_rule_flat(self.jvp, name, nondiff, in_tree, store, out_avals),
                            getattr(self.jvp, "__name__", f"{name}_jvp"))
        outs = bind(custom_jvp_call_p, *staged.consts, *leaves, call_jaxpr=staged.jaxpr,
                    fun=staged.fun, jvp=rule, num_consts=len(staged.consts))
        return tree_unflatten(store["out_tree"], outs)


def _tree_add(a: Any, b: Any) -> Any:
    from funcdiff.primitives import elementwise
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
            tangents = [zeros_for(t.aval if dtypes.is_float(get_aval(p).dtype) else get_aval(p))
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


# ---------------------------------------------------------------------------
# custom_vjp


custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_vjp_call_impl(*args, call_jaxpr, fun, fwd, bwd, num_consts):
    if call_jaxpr is not None:
        return run_impls(call_jaxpr, args)
    return list(fun(*args[num_consts:]))


def _custom_vjp_call_abstract_eval(*avals, call_jaxpr, fun, fwd, bwd, num_consts):
    return _out_avals(call_jaxpr, fun, num_consts, avals)


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fun, fwd, bwd, num_consts):
    params = dict(call_jaxpr=call_jaxpr, fun=fun, fwd=fwd, bwd=bwd, num_consts=num_consts)
    args, arg_tangents = list(primals[num_consts:]), list(tangents[num_consts:])
    if all(type(t) is Zero for t in arg_tangents):
        outs = bind(custom_vjp_call_p, *primals, **params)
        out_tangents = [Zero(tangent_aval(get_aval(o))) for o in outs]
    else:
        outs, res, res_static = fwd(args)
        mask = tuple(type(t) is not Zero for t in arg_tangents)
        lin = _LinRule(bwd, res_static, mask, [get_aval(a) for a in args],
                       [get_aval(o) for o in outs])
        staged = iter(bind(custom_lin_p, *res, *[t for t in arg_tangents if type(t) is not Zero],
                           rule=lin, num_res=len(res)))
        out_tangents = [next(staged) if f else Zero(tangent_aval(a))
                        for a, f in zip(lin.out_avals_all, lin.float_out)]
    return outs, _add_tangents(out_tangents,
                               _closure_tangents(call_jaxpr, primals, tangents, num_consts))


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
        record: list = []

        def inner(*a):
            outs, res, static = fwd(list(a))
            record[:] = [len(outs), static]
            return list(outs) + list(res)
        results = vmap_flat(inner, size, list(arg_dims), list(args), 0)
        n_out, static = record
        return results[:n_out], results[n_out:], static
    return run


def _batched_bwd(bwd: HeldFunction, arg_dims: list, size: int) -> Callable:
    """``bwd`` over batched residuals and cotangents (all at axis 0); the cotangent of
    an unbatched argument is summed over the batch."""
    from funcdiff.primitives import reductions

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


def _custom_vjp_call_cost(*avals, call_jaxpr, fun, fwd, bwd, num_consts):
    return _call_cost(call_jaxpr, fun, num_consts, avals)


custom_vjp_call_p.impl = _custom_vjp_call_impl
custom_vjp_call_p.abstract_eval = _custom_vjp_call_abstract_eval
custom_vjp_call_p.jvp = _custom_vjp_call_jvp
custom_vjp_call_p.batch = _custom_vjp_call_batch
custom_vjp_call_p.cost = _custom_vjp_call_cost


class _LinRule:
    """What ``custom_lin`` needs to know: the bwd rule, the static part of the
    residuals, which argument leaves carry tangents, and the output avals."""

    def __init__(self, bwd: HeldFunction, res_static: Any, mask: tuple, arg_avals: list,
                 out_avals: list):
        self.bwd = bwd
        self.res_static = res_static
        self.mask = mask
        self.arg_avals = arg_avals
        self.out_avals_all = out_avals
        self.float_out = [dtypes.is_float(a.dtype) for a in out_avals]
        self.out_avals = [a for a, f in zip(out_avals, self.float_out) if f]
        self.in_avals = [a for a, m in zip(arg_avals, mask) if m]
        self.__name__ = bwd.__name__

    def __repr__(self) -> str:
        return self.__name__

    def cotangents(self, res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        """Cotangents of the tangent operands (None for zero) for output cotangents
        ``cts`` (one per float output; Zero allowed)."""
        it = iter(cts)
        full = []
        for a, f in zip(self.out_avals_all, self.float_out):
            if f:
                c = next(it)
                full.append(core.instantiate(c))
            else:
                full.append(np.zeros(a.shape, dtypes.float0))
        cts_in = self.bwd(list(res), self.res_static, full)
        return [c for c, m in zip(cts_in, self.mask) if m]

    def forward(self, res: Sequence[Any], tangents: Sequence[Any]) -> list[Any]:
        """J t for the Jacobian J that bwd transposes: bwd, staged as a linear
        function of the cotangent, transposed and applied to the tangents."""
        where = (f"forward-mode differentiation of the custom_vjp function "
                 f"{self.bwd.fun_name} uses the transpose of its bwd rule {self.__name__}")
        try:
            closed = trace_to_jaxpr(
                lambda *cts: [zeros_for(a) if c is None else c
                              for c, a in zip(self.cotangents(res, cts), self.in_avals)],
                self.out_avals, dynamic=False)
            cts = backward_pass(closed.jaxpr, closed.consts,
                                [UndefinedPrimal(a) for a in self.out_avals], list(tangents))
        except (DifferentiationError, ConcretizationError, TracerArrayConversionError) as e:
            raise DifferentiationError(
                f"{where}, which must then be linear in the cotangent and written with "
                f"funcdiff operations; transposing it failed: {e} Use reverse mode "
                "(grad, vjp), or define the derivative with custom_jvp for forward mode."
            ) from None
        return [zeros_for(a) if c is None or type(c) is Zero else c
                for c, a in zip(cts, self.out_avals)]

    def batched(self, dims: list, size: int) -> "_LinRule":
        """This rule for residuals batched at ``dims`` (0 or None) and tangents at 0."""
        n_res = len(dims) - len(self.in_avals)
        res_dims, t_dims = dims[:n_res], dims[n_res:]
        base = self
        from funcdiff.primitives import reductions

        def bwd(res, res_static, full_cts):
            cts = [c for c, f in zip(full_cts, base.float_out) if f]

            def inner(*a):
                out = base.cotangents(a[:n_res], a[n_res:])
                return [zeros_for(av) if c is None else c for c, av in zip(out, base.in_avals)]
            outs = vmap_flat(inner, size, list(res_dims) + [0] * len(cts), list(res) + cts, 0)
            outs = [reductions.reduce_sum(o, axes=(0,)) if d is None else o
                    for o, d in zip(outs, t_dims)]
            return _scatter_mask(outs, base.mask)

        held = HeldFunction(bwd, self.__name__ + "_vmap", fun_name=self.bwd.fun_name)
        batch_aval = lambda a: ShapedArray((size,) + a.shape, a.dtype)  # noqa: E731
        arg_avals = []
        it = iter(t_dims)
        for a, m in zip(self.arg_avals, self.mask):
            arg_avals.append((a if next(it) is None else batch_aval(a)) if m else a)
        return _LinRule(held, None, self.mask, arg_avals,
                        [batch_aval(a) for a in self.out_avals_all])


def _scatter_mask(vals: list, mask: tuple) -> list:
    it = iter(vals)
    return [next(it) if m else None for m in mask]


def _custom_lin_impl(*args, rule, num_res):
    return rule.forward(args[:num_res], args[num_res:])


def _custom_lin_abstract_eval(*avals, rule, num_res):
    return list(rule.out_avals)


def _custom_lin_jvp(primals, tangents, *, rule, num_res):
    res, ts = primals[:num_res], primals[num_res:]
    d_res, d_ts = tangents[:num_res], tangents[num_res:]
    out = bind(custom_lin_p, *primals, rule=rule, num_res=num_res)
    out_t = [Zero(a) for a in rule.out_avals]
    if any(type(d) is not Zero for d in d_ts):  # linear in the tangent operands
        out_t = bind(custom_lin_p, *res, *[core.instantiate(d) for d in d_ts], rule=rule,
                     num_res=num_res)
    if any(type(d) is not Zero for d in d_res):  # J depends on the residuals
        _, extra = jvp_flat(lambda *r: rule.forward(r, ts), list(res), list(d_res))
        out_t = _add_tangents(out_t, extra)
    return out, out_t


def _custom_lin_transpose(cts, *args, rule, num_res):
    res = args[:num_res]
    if any(is_undefined(r) for r in res):
        raise DifferentiationError(
            f"custom_lin (the linearized custom_vjp rule {rule.__name__}) is linear only in "
            "its tangent operands, not in the residuals; this is a bug in funcdiff.")
    return [None] * num_res + rule.cotangents(res, cts)


def _custom_lin_batch(vals, dims, *, rule, num_res):
    vals, dims, size = batch_to_front(vals, dims)
    res_dims = dims[:num_res]
    # tangent operands all carry the batch axis, so their transpose does too
    vals = vals[:num_res] + [move_batch_axis(v, d, 0, size) for v, d in
                             zip(vals[num_res:], dims[num_res:])]
    new_rule = rule.batched(list(res_dims) + [0] * (len(vals) - num_res), size)
    outs = bind(custom_lin_p, *vals, rule=new_rule, num_res=num_res)
    return outs, [0] * len(outs)


def _custom_lin_cost(*avals, rule, num_res):
    from funcdiff.interpreters.passes import program_cost
    try:
        closed = trace_to_jaxpr(lambda *a: [c for c in rule.cotangents(a[:num_res], a[num_res:])
                                            if c is not None],
                                list(avals[:num_res]) + list(rule.out_avals))
    except (FunctionalDiffError, TypeError, ValueError):  # a bwd that cannot be staged
        return {"flops": 0, "bytes": 0}
    return program_cost(closed)


custom_lin_p.impl = _custom_lin_impl
custom_lin_p.abstract_eval = _custom_lin_abstract_eval
custom_lin_p.jvp = _custom_lin_jvp
custom_lin_p.transpose = _custom_lin_transpose
custom_lin_p.batch = _custom_lin_batch
custom_lin_p.cost = _custom_lin_cost
custom_lin_p.linear = False  # linear in its tangent operands only, not in the residuals


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
        args = _bind_arguments(self.fun, args, kwargs, "custom_vjp")
        if core.cur_level() == 0:
            return self.fun(*args)
        dyn_idx, nondiff = _split_nondiff(args, self.nondiff_argnums, "custom_vjp", name)
        dyn_args = tuple(args[i] for i in dyn_idx)
        leaves, in_tree = tree_flatten(dyn_args)
        _check_leaves(leaves, "custom_vjp", name)
        store: dict = {}
        staged = _stage(self, _flat_function(self.fun, args, dyn_idx, in_tree, store,
                                             "custom_vjp", name), leaves, name)
        out_avals = list(staged.jaxpr.out_avals) if staged.jaxpr is not None else None
        fwd = HeldFunction(_fwd_flat(self.fwd, name, args, dyn_idx, in_tree, store, out_avals),
                           _fun_name(self.fwd))
        bwd = HeldFunction(_bwd_flat(self.bwd, name, nondiff, dyn_args, dyn_idx, store),
                           _fun_name(self.bwd), fun_name=name)
        outs = bind(custom_vjp_call_p, *staged.consts, *leaves, call_jaxpr=staged.jaxpr,
                    fun=staged.fun, fwd=fwd, bwd=bwd, num_consts=len(staged.consts))
        return tree_unflatten(store["out_tree"], outs)


def _fwd_flat(user_fwd: Callable, name: str, args: tuple, dyn_idx: tuple, in_tree,
              store: dict, out_avals: list | None) -> Callable:
    fwd_name = _fun_name(user_fwd)

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
    bwd_name = _fun_name(user_bwd)
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
                if not dtypes.is_float(xa.dtype):
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
                            _convert(c, xa.dtype)
                    else:
                        raise CustomRuleError(f"{where} has dtype {ca.dtype}; expected "
                                              f"{xa.dtype} like argument {pos}.")
                out.append(c)
        return out
    return bwd


__all__ = ["custom_jvp", "custom_vjp", "custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p",
           "HeldFunction"]
