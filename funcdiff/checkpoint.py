"""Checkpointing (rematerialisation): trade backward-pass memory for recomputation.

``checkpoint(f, policy=...)`` stages ``f`` into a program held by the
``checkpoint`` primitive. Outside reverse mode it runs the program. In
reverse mode (linearize) its jvp rule linearizes the program abstractly into
a forward program, which yields the outputs and every residual the backward
pass would need, and a linear program. The *policy* then partitions those
residuals: a value produced by an equation the policy calls saveable is
kept; any other is recomputed. The forward program is cut down to return the
outputs and the kept values only; the linear program is prefixed with the
equations that recompute the rest from the kept values and the primal
inputs. That linear program is bound as a ``checkpoint`` equation again, so
reverse mode keeps only its operands (kept values and inputs), and its
transpose runs the recomputation right before the backward equations that
need it. Derived programs stay opaque ``checkpoint`` equations in jitted
code, so common-subexpression elimination cannot merge the recomputation
back into the forward pass.

Policies (``checkpoint_policies``): ``nothing_saveable`` (the default: keep
only the inputs), ``everything_saveable`` (no recomputation),
``dots_saveable`` (keep matrix products, recompute elementwise work),
``dots_with_no_batch_dims_saveable``, ``save_only_these_names(*names)`` and
``save_anything_except_these_names(*names)`` for values tagged with
``checkpoint_name(x, name)``; or any ``policy(prim, *avals, **params) -> bool``.

Staging records the user's source line of every equation, so
``funcdiff.inspect.saved_residuals`` can say where a kept value came from;
while a staged program is replayed the recorded line is the *current source*
(a context stack like the trace stack).
"""

from __future__ import annotations

import functools
import types
import weakref
from typing import Any, Callable, Sequence

from funcdiff import core
from funcdiff.core import Primitive, Zero, bind, get_aval, new_main, tangent_aval
from funcdiff.custom_derivatives import (batch_to_front, closure_convert,
                                         is_array_like, run_impls)
from funcdiff.errors import ConcretizationError, InvalidArgumentError
from funcdiff.interpreters.call import batched_program, transposed_program
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.linearize import linearize_flat
from funcdiff.interpreters.passes import eliminate_dead_code, program_cost
from funcdiff.interpreters.staging import JaxprBuilder, JaxprTrace, JaxprTracer
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, eval_jaxpr
from funcdiff.primitives.dot import dot_general_p
from funcdiff.tree_util import tree_flatten, tree_map, tree_unflatten

# ---------------------------------------------------------------------------
# Source lines of staged equations

_sources: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()
_source_stack: list[str] = []  # the user line of the staged equation being replayed


def current_source() -> str | None:
    """The user source line of the staged equation being replayed now, if any."""
    return _source_stack[-1] if _source_stack else None


def source_of(closed: ClosedJaxpr, eqn: Eqn) -> str | None:
    return _sources.get(closed, {}).get(id(eqn))


class _SourceTrace(JaxprTrace):
    """Staging that notes, for each equation, the user line that produced it."""

    __slots__ = ()

    def process_primitive(self, primitive, tracers, params):
        out = super().process_primitive(primitive, tracers, params)
        lines = self.main.global_data.lines
        lines[id(self.builder.eqns[-1])] = current_source() or core._user_frame()
        return out


def stage_with_sources(fun: Callable, avals: Sequence) -> ClosedJaxpr:
    """``trace_to_jaxpr(fun, avals)``, recording each equation's source line."""
    builder = JaxprBuilder()
    builder.lines = {}
    with new_main(_SourceTrace, builder, dynamic=True) as main:
        trace = main.trace
        in_tracers = [trace.new_arg(a) for a in avals]
        closed = trace.to_jaxpr(in_tracers, fun(*in_tracers))
    _sources[closed] = builder.lines
    return closed


def _with_sources(closed: ClosedJaxpr, like: ClosedJaxpr) -> ClosedJaxpr:
    """Register for ``closed`` (sharing equations with ``like``) the lines of ``like``."""
    if like in _sources:
        _sources[closed] = _sources[like]
    return closed


def eval_with_sources(closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
    """``eval_jaxpr`` that makes each equation's recorded line the current source."""
    lines = _sources.get(closed)
    if not lines:
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    jaxpr = closed.jaxpr
    env: dict = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, args))

    def read(a):
        return a.val if type(a) is Literal else env[a]
    for eqn in jaxpr.eqns:
        line = lines.get(id(eqn))
        if line is not None:
            _source_stack.append(line)
        try:
            outs = bind(eqn.primitive, *[read(a) for a in eqn.invars], **eqn.params)
        finally:
            if line is not None:
                _source_stack.pop()
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outvars, outs))
        else:
            env[eqn.outvars[0]] = outs
    return [read(a) for a in jaxpr.outvars]


# ---------------------------------------------------------------------------
# checkpoint_name and policies

name_p = Primitive("name")
name_p.impl = lambda x, *, name: x
name_p.abstract_eval = lambda x, *, name: x
name_p.jvp = lambda primals, tangents, *, name: (bind(name_p, primals[0], name=name),
                                                 tangents[0])
name_p.batch = lambda vals, dims, *, name: (bind(name_p, vals[0], name=name), dims[0])
name_p.cost = lambda x, *, name: {"flops": 0, "bytes": 0}


def checkpoint_name(x: Any, name: str) -> Any:
    """Tag ``x`` with ``name`` for checkpoint policies.

    Inside ``checkpoint(f, policy=save_only_these_names(name))`` the tagged
    value is kept for the backward pass instead of recomputed.

    Args:
      x: an array or pytree of arrays.
      name: a string.

    Returns:
      ``x`` unchanged (each leaf passes through the ``name`` primitive).

    Raises:
      InvalidArgumentError: if ``name`` is not a string.

    >>> import funcdiff as fd, numpy as np
    >>> fd.checkpoint_name(np.ones(2), "h")
    array([1., 1.])
    """
    if not isinstance(name, str):
        raise InvalidArgumentError(f"checkpoint_name needs a string name, got {name!r}")
    return tree_map(lambda leaf: bind(name_p, leaf, name=name), x)


class Policy:
    """Which equations' results a checkpoint keeps; ``fn(prim, *avals, **params) -> bool``."""

    def __init__(self, name: str, fn: Callable[..., bool]):
        self.name = name
        self.fn = fn

    def saveable(self, eqn: Eqn) -> bool:
        return bool(self.fn(eqn.primitive, *[a.aval for a in eqn.invars], **eqn.params))

    def __repr__(self) -> str:
        return self.name


def _is_dot(prim, *avals, **params) -> bool:
    return prim is dot_general_p


def _is_dot_without_batch(prim, *avals, **params) -> bool:
    return prim is dot_general_p and not params["dimension_numbers"][1][0]


def save_only_these_names(*names: str) -> Policy:
    """Keep exactly the values tagged by ``checkpoint_name`` with one of ``names``."""
    wanted = frozenset(names)
    return Policy(f"save_only_these_names{tuple(names)}",
                  lambda prim, *avals, **params: prim is name_p and params["name"] in wanted)


def save_anything_except_these_names(*names: str) -> Policy:
    """Keep everything except the values tagged with one of ``names``."""
    unwanted = frozenset(names)
    return Policy(f"save_anything_except_these_names{tuple(names)}",
                  lambda prim, *avals, **params: not (prim is name_p
                                                      and params["name"] in unwanted))


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=Policy("everything_saveable", lambda prim, *a, **p: True),
    nothing_saveable=Policy("nothing_saveable", lambda prim, *a, **p: False),
    dots_saveable=Policy("dots_saveable", _is_dot),
    dots_with_no_batch_dims_saveable=Policy("dots_with_no_batch_dims_saveable",
                                            _is_dot_without_batch),
    save_only_these_names=save_only_these_names,
    save_anything_except_these_names=save_anything_except_these_names,
)

_NAMED_POLICIES = ("everything_saveable", "nothing_saveable", "dots_saveable",
                   "dots_with_no_batch_dims_saveable")


def _resolve_policy(policy: Any) -> Policy:
    if policy is None:
        return checkpoint_policies.nothing_saveable
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, str):
        if policy in _NAMED_POLICIES:
            return getattr(checkpoint_policies, policy)
        raise InvalidArgumentError(
            f"checkpoint got the unknown policy {policy!r}. Valid policies are "
            f"{', '.join(_NAMED_POLICIES)} (by name or as fd.checkpoint_policies.<name>), "
            "save_only_these_names(*names) and save_anything_except_these_names(*names), "
            "or a function policy(prim, *avals, **params) -> bool.")
    if callable(policy):
        return Policy(getattr(policy, "__name__", "custom_policy"), policy)
    raise InvalidArgumentError(
        f"checkpoint policy must be a policy name, a checkpoint_policies entry or a function "
        f"(prim, *avals, **params) -> bool; got {type(policy).__name__}. Valid names: "
        f"{', '.join(_NAMED_POLICIES)}.")


# ---------------------------------------------------------------------------
# The checkpoint primitive

checkpoint_p = Primitive("checkpoint", multiple_results=True)
_derived: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def _cache(closed: ClosedJaxpr) -> dict:
    return _derived.setdefault(closed, {})


class RematSplit:
    """A program split for reverse mode under a policy.

    ``forward``: primal inputs -> outputs + kept values. ``linear``: kept
    values + used primal inputs (``used_inputs`` positions) + nonzero tangents
    -> nonzero output tangents, recomputing what was not kept.
    """

    __slots__ = ("forward", "linear", "num_out", "num_saved", "used_inputs", "out_is_zero",
                 "out_avals", "num_recomputed")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)


def remat_split(closed: ClosedJaxpr, mask: tuple[bool, ...], policy: Policy | None) -> RematSplit:
    """Linearize ``closed`` abstractly and partition its residuals by ``policy``
    (None: keep everything)."""
    record: dict = {}

    def forward(*primals):
        outs, lin = linearize_flat(lambda *a: eval_with_sources(closed, a), primals,
                                   in_mask=list(mask))
        res_idx = [i for i, c in enumerate(lin.jaxpr.consts) if isinstance(c, JaxprTracer)]
        record.update(lin=lin, res_idx=res_idx)
        return list(outs) + [lin.jaxpr.consts[i] for i in res_idx]

    full = stage_with_sources(forward, closed.in_avals)
    lin, res_idx = record["lin"], record["res_idx"]
    fj, lj = full.jaxpr, lin.jaxpr.jaxpr
    n_out = len(closed.out_avals)
    res_atoms = fj.outvars[n_out:]

    producer = {v: e for e in fj.eqns for v in e.outvars}
    inputs, constvars = set(fj.invars), set(fj.constvars)
    saveable = (lambda e: True) if policy is None else policy.saveable
    saved, recompute, used_inputs, used_consts = set(), set(), set(), set()
    stack = list(res_atoms)
    while stack:
        a = stack.pop()
        if type(a) is Literal or a in saved:
            continue
        if a in inputs:
            used_inputs.add(a)
        elif a in constvars:
            used_consts.add(a)
        else:
            eqn = producer[a]
            if id(eqn) in recompute:
                continue
            if saveable(eqn):
                saved.add(a)
            else:
                recompute.add(id(eqn))
                stack.extend(eqn.invars)

    saved_list = [v for e in fj.eqns for v in e.outvars if v in saved]
    fwd = ClosedJaxpr(Jaxpr(fj.constvars, fj.invars, fj.eqns, fj.outvars[:n_out] + saved_list),
                      full.consts)
    fwd = _with_sources(eliminate_dead_code(fwd), full)

    subst = {lj.constvars[i]: atom for i, atom in zip(res_idx, res_atoms)}

    def sub(a):
        return a if type(a) is Literal else subst.get(a, a)
    lin_eqns = [Eqn(e.primitive, [sub(a) for a in e.invars], e.params, e.outvars) for e in lj.eqns]
    res_set = set(res_idx)
    other = [(v, c) for i, (v, c) in enumerate(zip(lj.constvars, lin.jaxpr.consts))
             if i not in res_set]
    fconsts = [(v, c) for v, c in zip(fj.constvars, full.consts) if v in used_consts]
    input_list = [v for v in fj.invars if v in used_inputs]
    linear = ClosedJaxpr(
        Jaxpr([v for v, _ in fconsts + other], saved_list + input_list + list(lj.invars),
              [e for e in fj.eqns if id(e) in recompute] + lin_eqns, [sub(a) for a in lj.outvars]),
        [c for _, c in fconsts + other])
    return RematSplit(forward=fwd, linear=linear, num_out=n_out, num_saved=len(saved_list),
                      used_inputs=[i for i, v in enumerate(fj.invars) if v in used_inputs],
                      out_is_zero=lin.out_is_zero, out_avals=lin.out_avals,
                      num_recomputed=len(recompute))


def _jvp_program(closed: ClosedJaxpr, mask: tuple[bool, ...]):
    """(primals + nonzero tangents) -> (outputs + nonzero output tangents), for forward mode."""
    in_avals = closed.in_avals
    record: dict = {}

    def run(*args):
        n = len(in_avals)
        it = iter(args[n:])
        tangents = [next(it) if m else Zero(tangent_aval(a)) for a, m in zip(in_avals, mask)]
        outs, out_t = jvp_flat(lambda *a: eval_with_sources(closed, a), list(args[:n]), tangents)
        record["out_is_zero"] = [type(t) is Zero for t in out_t]
        return list(outs) + [t for t in out_t if type(t) is not Zero]
    prog = stage_with_sources(run, list(in_avals) + [a for a, m in zip(in_avals, mask) if m])
    return prog, record["out_is_zero"]


def _linearizing(tangents: Sequence[Any]) -> bool:
    """Whether the tangents are being staged by linearize (not by jit's staging)."""
    return any(isinstance(t, JaxprTracer) and t._trace.main not in core._dynamic
               for t in tangents)


def _checkpoint_impl(*args, jaxpr, policy, name):
    return run_impls(jaxpr, args)


def _checkpoint_abstract_eval(*avals, jaxpr, policy, name):
    return list(jaxpr.out_avals)


def _checkpoint_jvp(primals, tangents, *, jaxpr, policy, name):
    mask = tuple(type(t) is not Zero for t in tangents)
    nonzero = [t for t in tangents if type(t) is not Zero]
    cache = _cache(jaxpr)
    if not _linearizing(nonzero):  # forward mode: one program, no residuals to manage
        key = ("jvp", mask)
        if key not in cache:
            cache[key] = _jvp_program(jaxpr, mask)
        prog, out_is_zero = cache[key]
        results = bind(checkpoint_p, *primals, *nonzero, jaxpr=prog, policy=policy,
                       name=name + "_jvp")
        n_out = len(jaxpr.out_avals)
        staged = iter(results[n_out:])
        return results[:n_out], [Zero(tangent_aval(a)) if z else next(staged)
                                 for a, z in zip(jaxpr.out_avals, out_is_zero)]
    key = ("remat", mask, policy)
    if key not in cache:
        cache[key] = remat_split(jaxpr, mask, policy)
    split = cache[key]
    results = eval_with_sources(split.forward, primals)  # the primal side runs now
    outs, saved = results[:split.num_out], results[split.num_out:]
    lin_args = list(saved) + [primals[i] for i in split.used_inputs] + nonzero
    staged = iter(bind(checkpoint_p, *lin_args, jaxpr=split.linear, policy=None,
                       name=name + "_lin"))
    return outs, [Zero(tangent_aval(a)) if z else next(staged)
                  for a, z in zip(split.out_avals, split.out_is_zero)]


def _checkpoint_transpose(cts, *args, jaxpr, policy, name):
    undefined = tuple(is_undefined(a) for a in args)
    ct_mask = tuple(type(c) is not Zero for c in cts)
    cache = _cache(jaxpr)
    key = ("transpose", undefined, ct_mask)
    if key not in cache:
        cache[key] = transposed_program(jaxpr, undefined, ct_mask)
    defined = [a for a in args if not is_undefined(a)]
    out = iter(bind(checkpoint_p, *defined, *[c for c in cts if type(c) is not Zero],
                    jaxpr=cache[key], policy=None, name=name + "_T"))
    return [next(out) if u else None for u in undefined]


def _checkpoint_batch(vals, dims, *, jaxpr, policy, name):
    vals, dims, size = batch_to_front(vals, dims)
    prog = batched_program(jaxpr, tuple(dims), size, [get_aval(v) for v in vals])
    outs = bind(checkpoint_p, *vals, jaxpr=prog, policy=policy, name=name + "_vmap")
    return outs, [0] * len(outs)


def _checkpoint_cost(*avals, jaxpr, policy, name):
    return program_cost(jaxpr)


checkpoint_p.impl = _checkpoint_impl
checkpoint_p.abstract_eval = _checkpoint_abstract_eval
checkpoint_p.jvp = _checkpoint_jvp
checkpoint_p.transpose = _checkpoint_transpose
checkpoint_p.batch = _checkpoint_batch
checkpoint_p.cost = _checkpoint_cost


def checkpoint(fun: Callable | None = None, *, policy: Any = None, prevent_cse: bool = True,
               static_argnums: int | Sequence[int] = ()) -> Callable:
    """Make reverse mode recompute ``fun``'s intermediates instead of keeping them.

    Under grad/vjp the values ``fun`` computes are recomputed during the
    backward pass, except those the policy keeps; the inputs of ``fun`` are
    always kept. Gradients are unchanged (up to rounding). Checkpointing every
    k-th block of an L-block network keeps about L/k block inputs plus one
    block's intermediates at a time; k ~ sqrt(L) minimises the total.

    Args:
      fun: function of arrays (pytrees of arrays). Usable as ``@checkpoint`` or
        ``@checkpoint(policy=...)``.
      policy: a name ("nothing_saveable", "everything_saveable",
        "dots_saveable", "dots_with_no_batch_dims_saveable"), an entry of
        ``checkpoint_policies`` (including ``save_only_these_names(...)``), or
        ``policy(prim, *avals, **params) -> bool``. Default: nothing_saveable.
      prevent_cse: accepted for JAX compatibility; the recomputation is always
        kept apart from the forward pass (derived programs are opaque
        ``checkpoint`` equations).
      static_argnums: positions of non-array arguments, baked into the program.

    Returns:
      A function with ``fun``'s signature (alias: ``remat``).

    Raises:
      InvalidArgumentError: for an unknown policy (the message lists the valid
        ones) or a non-array argument not marked static.
      ConcretizationError: if ``fun`` branches in Python on traced values.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> block = fd.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
    >>> g = fd.grad(lambda x: block(x).sum())(np.array([0.5, 1.0]))
    >>> np.allclose(g, np.cos(np.sin([0.5, 1.0])) * np.cos([0.5, 1.0]))
    True
    """
    pol = _resolve_policy(policy)
    if fun is None:
        return functools.partial(checkpoint, policy=pol, prevent_cse=prevent_cse,
                                 static_argnums=static_argnums)
    if not callable(fun):
        raise InvalidArgumentError(f"checkpoint needs a function, got {type(fun).__name__}")
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    name = getattr(fun, "__name__", "checkpointed")
    if not name.isidentifier():
        name = "checkpointed"

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        if core.cur_level() == 0:  # no transform active: nothing to save or recompute
            return fun(*args, **kwargs)
        n = len(args)
        for i in static:
            if not -n <= i < n:
                raise InvalidArgumentError(f"checkpoint of {name}: static_argnums contains "
                                           f"{i}, but it was called with {n} argument(s).")
        static_pos = {i % n for i in static}
        dyn = [args[i] for i in range(n) if i not in static_pos]
        leaves, in_tree = tree_flatten((dyn, kwargs))
        for j, x in enumerate(leaves):
            if not is_array_like(x):
                raise InvalidArgumentError(
                    f"checkpoint of {name} received a {type(x).__name__} as argument leaf "
                    f"{j}; mark non-array arguments with static_argnums.")
        store: dict = {}

        def fun_flat(*flat):
            d, kw = tree_unflatten(in_tree, flat)
            it = iter(d)
            out = fun(*[args[i] if i in static_pos else next(it) for i in range(n)], **kw)
            out_leaves, store["out_tree"] = tree_flatten(out)
            return out_leaves
        try:
            staged = stage_with_sources(fun_flat, [get_aval(x) for x in leaves])
        except ConcretizationError as e:
            raise ConcretizationError(f"checkpoint stages {name} into a program, so it cannot "
                                      f"branch in Python on traced values: {e}") from None
        closed, consts = closure_convert(staged)
        outs = bind(checkpoint_p, *consts, *leaves, jaxpr=_with_sources(closed, staged),
                    policy=pol, name=name)
        return tree_unflatten(store["out_tree"], outs)
    return checkpointed


remat = checkpoint

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies", "checkpoint_p",
           "name_p", "Policy", "remat_split"]
