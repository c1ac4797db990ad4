"""Cost analysis: the total flops and bytes of a program.

``program_cost`` adds up the cost rules of the primitives of a program's
equations (a primitive without one counts as free). It is not an
optimisation pass: ``jit`` reports it for the optimised program, and the
cost rules of the primitives that hold programs (``call``, the control-flow
primitives, checkpoint, custom derivatives) are written with it.
"""

from __future__ import annotations

from funcdiff.ir import ClosedJaxpr


def program_cost(closed: ClosedJaxpr) -> dict:
    """Total flops and bytes of a program, from each primitive's cost rule."""
    flops = nbytes = 0
    for eqn in closed.jaxpr.eqns:
        rule = eqn.primitive.cost
        if rule is None:
            continue
        c = rule(*[a.aval for a in eqn.invars], **eqn.params)
        flops += c.get("flops", 0)
        nbytes += c.get("bytes", 0)
    return {"flops": flops, "bytes": nbytes}
