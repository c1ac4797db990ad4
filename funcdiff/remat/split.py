"""Partial evaluation for checkpoint: which residuals reverse mode keeps, which it recomputes.

``remat_split`` linearizes a staged program abstractly and partitions the
residuals the backward pass would need by a policy: a value produced by an
equation the policy calls saveable is kept; any other is recomputed. The
resulting ``RematSplit`` holds a forward program that returns the outputs and
the kept values only, and a linear program prefixed with the equations that
recompute the rest from the kept values and the primal inputs. The
``checkpoint`` primitive's jvp rule runs the one and binds the other;
``funcdiff.inspect.cost_analysis`` splits with no policy (keep everything), and
so does the eager tape's plan of a primitive without a reverse rule of its own
(``interpreters.tape_programs``, to which this module hands ``remat_split``).
"""

from __future__ import annotations

from funcdiff.remat.policies import Policy
from funcdiff.interpreters import tape_programs
from funcdiff.interpreters.linearize import linearize_flat
from funcdiff.passes.pipeline import eliminate_dead_code
from funcdiff.interpreters.staging import JaxprTracer, trace_to_jaxpr
from funcdiff.ir import ClosedJaxpr, Eqn, Jaxpr, Literal


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
        outs, lin = linearize_flat(lambda *a: closed(*a), primals,
                                   in_mask=list(mask))
        res_idx = [i for i, c in enumerate(lin.jaxpr.consts) if isinstance(c, JaxprTracer)]
        record.update(lin=lin, res_idx=res_idx)
        return list(outs) + [lin.jaxpr.consts[i] for i in res_idx]

    full = trace_to_jaxpr(forward, closed.in_avals, sources=True)
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
    fwd = eliminate_dead_code(fwd)

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


tape_programs.install_split(remat_split)  # the tape plans its nodes with it
