"""The call primitive behind jit: a primitive that holds a whole program.

``call_p`` takes the program's inputs and a ``ClosedJaxpr`` param. Its impl
runs the compiled program (``compiler.evaluator`` installs it: the compiler
sits above this layer); its rules transform the *inner* program and bind
``call_p`` again with the result, so every transform of a jitted function is
itself a compiled program:

- jvp: the inner program is linearized once, abstractly, into a *forward*
  program (primal outputs plus residuals) and a *linear* program (residuals
  and tangents to output tangents). Both are bound as calls, so under
  ``grad(jit(f))`` the forward pass runs compiled now and the linear call is
  what reverse mode stages and later transposes.
- transpose: the linear program is transposed into a new program.
- batch: the program is vmapped into a new program.

Derived programs are cached per (program, which inputs carry tangents /
which are batched), so a transform traces the inner program only once.
"""

from __future__ import annotations

import weakref
from typing import Any, Sequence

from funcdiff.core import (Primitive, ShapedArray, Tracer, Zero, bind, get_aval, tangent_aval,
                           zeros_array)
from funcdiff.interpreters.batching import vmap_flat
from funcdiff.interpreters.cost import program_cost
from funcdiff.interpreters.linearize import linearize_flat
from funcdiff.interpreters.staging import JaxprTracer, trace_to_jaxpr
from funcdiff.interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined
from funcdiff.ir import ClosedJaxpr, Jaxpr, eval_jaxpr

# The one primitive defined below the cards: the passes (inlining) and the compiler
# (jit binds it) need the object, and its rules are the interpreters' own.
call_p = Primitive("call", multiple_results=True)

derived: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def derived_cache(jaxpr: ClosedJaxpr) -> dict:
    """The programs derived from ``jaxpr`` (and plans made for it), by what they are;
    kept while ``jaxpr`` lives."""
    cache = derived.get(jaxpr)
    if cache is None:
        cache = derived[jaxpr] = {}
    return cache


def _call_abstract_eval(*avals, jaxpr: ClosedJaxpr, name: str):
    return list(jaxpr.out_avals)


def call(jaxpr: ClosedJaxpr, *args: Any, name: str = "program") -> list[Any]:
    """Run ``jaxpr`` on ``args`` as one call (compiled when evaluated)."""
    return bind(call_p, *args, jaxpr=jaxpr, name=name)


# ---------------------------------------------------------------------------
# jvp: linearize the inner program once, abstractly


def _split_linearization(jaxpr: ClosedJaxpr, mask: tuple[bool, ...]):
    """Forward program (primals -> outs + residuals) and linear program
    (residuals + tangents -> tangent outs) of ``jaxpr``."""
    record: dict = {}

    def forward(*primals):
        outs, lin = linearize_flat(lambda *a: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *a),
                                   primals, in_mask=list(mask))
        # residuals that depend on the inputs are outputs of the forward program
        res_idx = [i for i, c in enumerate(lin.jaxpr.consts) if isinstance(c, JaxprTracer)]
        record.update(lin=lin, res_idx=res_idx)
        return list(outs) + [lin.jaxpr.consts[i] for i in res_idx]

    fwd = trace_to_jaxpr(forward, jaxpr.in_avals)
    lin, res_idx = record["lin"], record["res_idx"]
    j = lin.jaxpr.jaxpr
    res_set = set(res_idx)
    res_vars = [j.constvars[i] for i in res_idx]
    const_vars = [v for i, v in enumerate(j.constvars) if i not in res_set]
    const_vals = [c for i, c in enumerate(lin.jaxpr.consts) if i not in res_set]
    linear = ClosedJaxpr(Jaxpr(const_vars, res_vars + list(j.invars), j.eqns, j.outvars),
                         const_vals)
    return fwd, linear, len(res_idx), lin.out_is_zero, lin.out_avals


def _call_jvp(primals, tangents, *, jaxpr: ClosedJaxpr, name: str):
    mask = tuple(type(t) is not Zero for t in tangents)
    cache = derived_cache(jaxpr)
    key = ("linearized", mask)
    if key not in cache:
        cache[key] = _split_linearization(jaxpr, mask)
    fwd, linear, n_res, out_is_zero, out_avals = cache[key]
    results = bind(call_p, *primals, jaxpr=fwd, name=name + "_fwd")
    n_out = len(results) - n_res
    primal_outs, residuals = results[:n_out], results[n_out:]
    nonzero = [t for t in tangents if type(t) is not Zero]
    staged = iter(bind(call_p, *residuals, *nonzero, jaxpr=linear, name=name + "_lin"))
    tangent_outs = [Zero(tangent_aval(a)) if z else next(staged)
                    for a, z in zip(out_avals, out_is_zero)]
    return primal_outs, tangent_outs


# ---------------------------------------------------------------------------
# transpose: a new program running the inner one backwards


def transposed_program(jaxpr: ClosedJaxpr, undefined: tuple[bool, ...],
                       ct_mask: tuple[bool, ...]) -> ClosedJaxpr:
    """The program (defined inputs + nonzero output cotangents) -> cotangents of the
    undefined (linear) inputs of ``jaxpr``, zeros materialised."""
    in_avals = jaxpr.in_avals
    defined_avals = [a for a, u in zip(in_avals, undefined) if not u]
    ct_avals = [a for a, m in zip(jaxpr.out_avals, ct_mask) if m]

    def backward(*args):
        defined, cts = iter(args[:len(defined_avals)]), iter(args[len(defined_avals):])
        linear_args = [UndefinedPrimal(a) if u else next(defined)
                       for a, u in zip(in_avals, undefined)]
        cts_out = [next(cts) if m else Zero(a) for a, m in zip(jaxpr.out_avals, ct_mask)]
        cts_in = backward_pass(jaxpr.jaxpr, jaxpr.consts, linear_args, cts_out)
        return [zeros_array(a) if ct is None or type(ct) is Zero else ct
                for ct, a, u in zip(cts_in, in_avals, undefined) if u]

    return trace_to_jaxpr(backward, defined_avals + ct_avals)


def _call_transpose(cts, *args, jaxpr: ClosedJaxpr, name: str):
    undefined = tuple(is_undefined(a) for a in args)
    ct_mask = tuple(type(c) is not Zero for c in cts)
    cache = derived_cache(jaxpr)
    key = ("transposed", undefined, ct_mask)
    if key not in cache:
        cache[key] = transposed_program(jaxpr, undefined, ct_mask)
    defined = [a for a in args if not is_undefined(a)]
    nonzero = [c for c in cts if type(c) is not Zero]
    cts_in = iter(bind(call_p, *defined, *nonzero, jaxpr=cache[key], name=name + "_T"))
    return [next(cts_in) if u else None for u in undefined]


# ---------------------------------------------------------------------------
# batch: a new program over batched values


def batched_program(jaxpr: ClosedJaxpr, dims: tuple, size: int,
                    in_avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """``jaxpr`` vmapped over inputs batched at ``dims`` (``size`` members; None for
    unbatched inputs of avals ``in_avals``); every output batched at axis 0.
    Cached per program, dims and size."""
    cache = derived_cache(jaxpr)
    key = ("batched", tuple(dims), size)
    if key not in cache:
        def run(*args):
            return vmap_flat(lambda *a: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *a), size,
                             list(dims), args, 0)
        cache[key] = trace_to_jaxpr(run, list(in_avals))
    return cache[key]


def _call_batch(vals, dims, *, jaxpr: ClosedJaxpr, name: str):
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    program = batched_program(jaxpr, tuple(dims), size, [get_aval(v) for v in vals])
    outs = bind(call_p, *vals, jaxpr=program, name=name + "_vmap")
    return outs, [0] * len(outs)


def _call_cost(*avals, jaxpr: ClosedJaxpr, name: str):
    return program_cost(jaxpr)


call_p.abstract_eval = _call_abstract_eval
call_p.jvp = _call_jvp
call_p.transpose = _call_transpose
call_p.batch = _call_batch
call_p.cost = _call_cost
call_p.linear = False  # linear only in its tangent inputs; the transpose handles both


def is_tracer(x: Any) -> bool:
    return isinstance(x, Tracer)
