"""Linearize: forward mode whose tangent side is staged into a linear jaxpr.

The primal side of each jvp rule is evaluated by whatever trace sits below
(numpy in eager use, the jit trace under jit); only operations that touch a
tangent are recorded. The result is the primal output plus a jaxpr that is
linear in its inputs and whose constants are the residuals: exactly the values
reverse mode must keep for the backward pass.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from funcdiff import core, dtypes
from funcdiff.core import Zero, get_aval, new_main, tangent_aval
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.staging import JaxprBuilder, JaxprTrace
from funcdiff.ir import ClosedJaxpr


class LinearFunction:
    """The linear map ``tangents_in -> tangents_out`` found by linearize.

    ``jaxpr`` takes one input per differentiable (float) primal input, listed
    in ``in_mask``; outputs whose tangent is identically zero are not in the
    jaxpr and are marked ``None`` in ``out_zero_avals`` positions.
    """

    __slots__ = ("jaxpr", "in_avals", "in_mask", "out_avals", "out_is_zero")

    def __init__(self, jaxpr: ClosedJaxpr, in_avals, in_mask, out_avals, out_is_zero):
        self.jaxpr = jaxpr
        self.in_avals = in_avals
        self.in_mask = in_mask
        self.out_avals = out_avals
        self.out_is_zero = out_is_zero


def linearize_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any],
                   in_mask: Sequence[bool] | None = None) -> tuple[list[Any], LinearFunction]:
    """Evaluate ``fun`` at ``primals`` and stage its linearization.

    ``in_mask`` selects the inputs to differentiate (default: the float and complex ones);
    the others get zero tangents and are not inputs of the linear jaxpr.
    """
    with new_main(JaxprTrace, JaxprBuilder(core.float_checks)) as staging:  # sources: see staging
        strace = staging.trace
        in_avals = [get_aval(p) for p in primals]
        if in_mask is None:
            in_mask = [dtypes.is_inexact(a.dtype) for a in in_avals]
        tangent_tracers = [strace.new_arg(a) for a, m in zip(in_avals, in_mask) if m]
        it = iter(tangent_tracers)
        tangents = [next(it) if m else Zero(tangent_aval(a)) for a, m in zip(in_avals, in_mask)]
        primals_out, tangents_out = jvp_flat(fun, primals, tangents)
        out_is_zero = [type(t) is Zero for t in tangents_out]
        staged_outs = [t for t in tangents_out if type(t) is not Zero]
        jaxpr = strace.to_jaxpr(tangent_tracers, staged_outs)
    out_avals = [get_aval(p) for p in primals_out]
    return primals_out, LinearFunction(jaxpr, in_avals, in_mask, out_avals, out_is_zero)
