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

The policies and ``checkpoint_name`` are in ``funcdiff.remat.policies``,
the split of a program into kept and recomputed values in
``funcdiff.remat.split``; staging records each equation's source line
(``trace_to_jaxpr(..., sources=True)``), which
``funcdiff.inspect.saved_residuals`` reports. This module holds the primitive, its rules
and the ``checkpoint`` decorator.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Sequence

from funcdiff import core
from funcdiff.arguments.described import DescribedFunction
from funcdiff.remat.policies import resolve_policy, checkpoint_name, checkpoint_policies
from funcdiff.remat.split import remat_split
from funcdiff.core import Primitive, Zero, bind, get_aval, is_array_like, tangent_aval
from funcdiff.custom_derivatives import batch_to_front, closure_convert, run_impls
from funcdiff.errors import ConcretizationError, InvalidArgumentError
from funcdiff.interpreters import programs, tape, tape_control
from funcdiff.interpreters.call import batched_program, transposed_program
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.linearize import linearize_flat
from funcdiff.passes.pipeline import program_cost
from funcdiff.interpreters.staging import JaxprTracer, trace_to_jaxpr
from funcdiff.interpreters.tape_function import tape_vjp_flat
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.ir import ClosedJaxpr
from funcdiff.tree_util import tree_flatten, tree_unflatten

# ---------------------------------------------------------------------------
# The checkpoint primitive

checkpoint_p = Primitive("checkpoint", multiple_results=True)
_derived: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def _cache(closed: ClosedJaxpr) -> dict:
    return _derived.setdefault(closed, {})


def _jvp_program(closed: ClosedJaxpr, mask: tuple[bool, ...]):
    """(primals + nonzero tangents) -> (outputs + nonzero output tangents), for forward mode."""
    in_avals = closed.in_avals
    record: dict = {}

    def run(*args):
        n = len(in_avals)
        it = iter(args[n:])
        tangents = [next(it) if m else Zero(tangent_aval(a)) for a, m in zip(in_avals, mask)]
        outs, out_t = jvp_flat(lambda *a: closed(*a), list(args[:n]), tangents)
        record["out_is_zero"] = [type(t) is Zero for t in out_t]
        return list(outs) + [t for t in out_t if type(t) is not Zero]
    prog = trace_to_jaxpr(run, list(in_avals) + [a for a, m in zip(in_avals, mask) if m],
                          sources=True)
    return prog, record["out_is_zero"]


def _linearizing(tangents: Sequence[Any]) -> bool:
    """Whether the tangents are being staged by linearize (not by jit's staging)."""
    return any(isinstance(t, JaxprTracer) and t._trace.main not in core.dynamic
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
    results = split.forward(*primals)  # the primal side runs now
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
    key = ("transposed", undefined, ct_mask)
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


def _checkpoint_on_tape(trace, args, *, jaxpr, policy, name):
    """On the eager tape: with ``everything_saveable`` the body simply runs on the
    tape; with the default policy (nothing saveable) the outputs are computed
    with the impls, keeping nothing but the inputs, and one node's pullback runs
    the body again on a tape of its own. Other policies decline: the tape
    linearizes the call, which applies them."""
    if policy is checkpoint_policies.everything_saveable:  # no recomputation
        return programs.run(jaxpr, *args)
    if policy is not checkpoint_policies.nothing_saveable:
        return None
    primals = [tape_control.value(trace, a) for a in args]
    slots = [tape_control.slot(trace, a) for a in args]
    outs = run_impls(jaxpr, primals)
    return trace.record(outs, lambda cts: _recomputed(jaxpr, primals, slots, cts), slots)


def _recomputed(jaxpr, primals: list, slots: list, cts: list) -> list:
    """The cotangents of a checkpoint's inputs (None where not needed), its body
    recomputed from ``primals``: on a tape when nothing else is tracing and the
    cotangents are plain values, else linearized (a transformed pullback)."""
    mask = [bool(s) for s in slots]

    def body(*args):
        return jaxpr(*args)
    if tape.usable() and not any(isinstance(c, core.Tracer) for c in cts):
        _, fn = tape_vjp_flat(body, primals, in_mask=mask)
        cts_in = fn.pull_back(cts, release=True)
    else:
        _, lin = linearize_flat(body, primals, in_mask=mask)
        cts_in = tape.pull_back_linear(cts, mask, lin)
    return [c if m else None for c, m in zip(cts_in, mask)]


checkpoint_p.impl = _checkpoint_impl
checkpoint_p.abstract_eval = _checkpoint_abstract_eval
checkpoint_p.jvp = _checkpoint_jvp
checkpoint_p.transpose = _checkpoint_transpose
checkpoint_p.batch = _checkpoint_batch
checkpoint_p.cost = _checkpoint_cost
checkpoint_p.tape_rule = _checkpoint_on_tape


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
    pol = resolve_policy(policy)
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
            staged = trace_to_jaxpr(fun_flat, [get_aval(x) for x in leaves], sources=True)
        except ConcretizationError as e:
            raise ConcretizationError(f"checkpoint stages {name} into a program, so it cannot "
                                      f"branch in Python on traced values: {e}") from None
        closed, consts = closure_convert(staged)
        outs = bind(checkpoint_p, *consts, *leaves, jaxpr=closed,
                    policy=pol, name=name)
        return tree_unflatten(store["out_tree"], outs)
    policy_text = "" if policy is None else f", policy={getattr(policy, '__name__', policy)}"
    return DescribedFunction(checkpointed, f"checkpoint({name}{policy_text})")


remat = checkpoint

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies", "checkpoint_p",
           "remat_split"]
