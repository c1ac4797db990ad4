"""``custom_lin``: the linearized rule of a ``custom_vjp`` function.

What the jvp rule of ``custom_vjp_call`` returns as the output tangent:
``custom_lin`` of the input tangents, holding the user's ``bwd`` (in a
``LinRule``) as a param and the residuals of ``fwd`` as operands. It is
linear in the tangent operands only, never in the residuals. Transposing it
calls ``bwd``; evaluating it forward (what forward mode needs) stages ``bwd``
as a function of the cotangent and transposes that, which works because
``bwd`` is linear in the cotangent, and fails with an error that suggests
custom_jvp when ``bwd`` cannot be staged and transposed. Under vmap the rule
is rebuilt for batched residuals and tangents.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcdiff import core, dtypes
from funcdiff.core import Primitive, ShapedArray, Zero, bind
from funcdiff.custom_derivatives.common import (HeldFunction, add_tangents, batch_to_front,
                                                zeros_for)
from funcdiff.errors import (ConcretizationError, DifferentiationError, FunctionalDiffError,
                             TracerArrayConversionError)
from funcdiff.interpreters.batching import move_batch_axis, vmap_flat
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined
from funcdiff.passes.pipeline import program_cost
from funcdiff.primitives import reductions


custom_lin_p = Primitive("custom_lin", multiple_results=True)


class LinRule:
    """What ``custom_lin`` needs to know: the bwd rule, the static part of the
    residuals, which argument leaves carry tangents, and the output avals."""

    def __init__(self, bwd: HeldFunction, res_static: Any, mask: tuple, arg_avals: list,
                 out_avals: list):
        self.bwd = bwd
        self.res_static = res_static
        self.mask = mask
        self.arg_avals = arg_avals
        self.out_avals_all = out_avals
        self.float_out = [dtypes.is_inexact(a.dtype) for a in out_avals]
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

    def batched(self, dims: list, size: int) -> "LinRule":
        """This rule for residuals batched at ``dims`` (0 or None) and tangents at 0."""
        n_res = len(dims) - len(self.in_avals)
        res_dims, t_dims = dims[:n_res], dims[n_res:]
        base = self

        def bwd(res, res_static, full_cts):
            cts = [c for c, f in zip(full_cts, base.float_out) if f]

            def inner(*a):
                out = base.cotangents(a[:n_res], a[n_res:])
                return [zeros_for(av) if c is None else c for c, av in zip(out, base.in_avals)]
            outs = vmap_flat(inner, size, list(res_dims) + [0] * len(cts), list(res) + cts, 0)
            outs = [reductions.reduce_sum(o, axes=(0,)) if d is None else o
                    for o, d in zip(outs, t_dims)]
            return scatter_mask(outs, base.mask)

        held = HeldFunction(bwd, self.__name__ + "_vmap", fun_name=self.bwd.fun_name)
        batch_aval = lambda a: ShapedArray((size,) + a.shape, a.dtype)  # noqa: E731
        arg_avals = []
        it = iter(t_dims)
        for a, m in zip(self.arg_avals, self.mask):
            arg_avals.append((a if next(it) is None else batch_aval(a)) if m else a)
        return LinRule(held, None, self.mask, arg_avals,
                        [batch_aval(a) for a in self.out_avals_all])


def scatter_mask(vals: list, mask: tuple) -> list:
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
        out_t = add_tangents(out_t, extra)
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
