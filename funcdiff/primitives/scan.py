"""The ``scan`` primitive: a loop over the leading axis of xs, threading a carry.

``scan[jaxpr num_consts num_carry length reverse] *consts *carry *xs`` runs the
body ``length`` times (last slice first when ``reverse``) and returns the final
carry and the per-iteration outputs stacked along a new axis 0. Forward mode is
a scan over (primal, tangent) pairs. Inside ``linearize`` the body splits into
a forward scan, which also stacks each iteration's residuals, and a linear scan
over them; transposing the linear scan gives a scan running the other way.
Which carries have tangents (or are batched) is the fixed point the body
reaches. On the eager tape the loop runs as it is, its iterations recorded
(``interpreters.tape_control``). The public API is ``funcdiff.lax.scan``.
"""

from __future__ import annotations

import numpy as np

from funcdiff import dtypes
from funcdiff.core import (Primitive, ShapedArray, Zero, bind, instantiate, tangent_aval,
                           zeros_array)
from funcdiff.errors import ControlFlowTypeError, DifferentiationError
from funcdiff.interpreters.batching import move_batch_axis
from funcdiff.compiler.evaluator import runner
from funcdiff.passes.pipeline import program_cost
from funcdiff.interpreters.programs import (batch_jaxpr, batch_size, cached, fixed_point,
                                            groups, jvp_jaxpr, linearize_jaxpr, materialize,
                                            nonzero, reorder, run, tangents_staged_apart,
                                            to_front, type_list)
from funcdiff.interpreters import tape_control
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined
from funcdiff.primitives import elementwise, indexing, structural


scan_p = Primitive("scan", multiple_results=True)


def _scan_impl(*args, jaxpr, num_consts, num_carry, length, reverse):
    consts, carry, xs = groups(args, num_consts, num_carry)
    body = runner(jaxpr, "scan_body", length, args)
    ys = [np.empty((length,) + a.shape, a.dtype) for a in jaxpr.out_avals[num_carry:]]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = body(*consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        for y, out in zip(ys, outs[num_carry:]):
            y[i] = out
    return list(carry) + ys


def _scan_abstract_eval(*avals, jaxpr, num_consts, num_carry, length, reverse):
    consts, carry, xs = groups(avals, num_consts, num_carry)
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise ControlFlowTypeError(
                f"scan of length {length} needs xs with leading axis {length}, got "
                f"{type_list(xs)}.")
    x_avals = [ShapedArray(x.shape[1:], x.dtype) for x in xs]
    if jaxpr.in_avals != consts + carry + x_avals or jaxpr.out_avals[:num_carry] != carry:
        raise ControlFlowTypeError(
            f"scan received consts {type_list(consts)}, carry {type_list(carry)} and "
            f"slices {type_list(x_avals)}, but its body has type "
            f"{type_list(jaxpr.in_avals)} -> {type_list(jaxpr.out_avals)}.")
    return list(carry) + [ShapedArray((length,) + a.shape, a.dtype)
                          for a in jaxpr.out_avals[num_carry:]]


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    ny = len(jaxpr.out_avals) - nk
    consts, init, xs = groups(primals, nc, nk)
    consts_t, init_t, xs_t = groups(tangents, nc, nk)
    c_nz, k_nz, x_nz = (tuple(type(t) is not Zero for t in ts) for ts in (consts_t, init_t, xs_t))
    split = tangents_staged_apart(primals, tangents)
    if split:
        def carry_nz_of(nz):
            return linearize_jaxpr(jaxpr, c_nz + nz + x_nz, nz + (False,) * ny)[3][:nk]
    else:
        def carry_nz_of(nz):
            return jvp_jaxpr(jaxpr, c_nz + nz + x_nz, nz + (False,) * ny)[1][:nk]
    k_nz = fixed_point(carry_nz_of, k_nz)
    params = dict(length=length, reverse=reverse)
    carry_avals = jaxpr.in_avals[nc:nc + nk]
    init_t = [materialize(t, a) for t, a, nz in zip(init_t, carry_avals, k_nz) if nz]
    if split:
        fwd, lin, forwarded, y_nz = _scan_split(jaxpr, nc, nk, c_nz, k_nz, x_nz)
        outs = bind(scan_p, *consts, *init, *xs, jaxpr=fwd, num_consts=nc, num_carry=nk, **params)
        carry, ys, stacked = groups(outs, nk, ny)
        res_consts = [consts[r] for r in forwarded[0]]
        res_xs = [xs[r] for r in forwarded[1]]
        touts = bind(scan_p, *res_consts, *nonzero(consts_t), *init_t, *stacked, *res_xs,
                     *nonzero(xs_t), jaxpr=lin, num_consts=len(res_consts) + sum(c_nz),
                     num_carry=sum(k_nz), **params)
        carry_t, ys_t = groups(touts, sum(k_nz))[:2]
    else:
        body, y_nz = _scan_joint(jaxpr, nc, nk, c_nz, k_nz, x_nz)
        outs = bind(scan_p, *consts, *nonzero(consts_t), *init, *init_t, *xs, *nonzero(xs_t),
                    jaxpr=body, num_consts=nc + sum(c_nz), num_carry=nk + sum(k_nz), **params)
        carry, carry_t, ys, ys_t = groups(outs, nk, sum(k_nz), ny)
    out_avals = [tangent_aval(a) for a in jaxpr.out_avals[:nk]] + [
        tangent_aval(ShapedArray((length,) + a.shape, a.dtype)) for a in jaxpr.out_avals[nk:]]
    touts = iter(list(carry_t) + list(ys_t))
    return list(carry) + list(ys), [next(touts) if nz else Zero(a)
                                    for a, nz in zip(out_avals, k_nz + y_nz)]


def _scan_joint(jaxpr, nc, nk, c_nz, k_nz, x_nz):
    """A scan over (primal, tangent) pairs: consts, carries and xs each followed by
    their nonzero tangents."""
    def make():
        ny = len(jaxpr.out_avals) - nk
        jbody, out_nz = jvp_jaxpr(jaxpr, c_nz + k_nz + x_nz, k_nz + (False,) * ny)
        nx, nct, nkt, nxt, nyt = len(x_nz), sum(c_nz), sum(k_nz), sum(x_nz), sum(out_nz[nk:])
        p = nc + nk + nx
        in_order = [*range(nc), *range(p, p + nct), *range(nc, nc + nk),
                    *range(p + nct, p + nct + nkt), *range(nc + nk, p),
                    *range(p + nct + nkt, p + nct + nkt + nxt)]
        out_order = [*range(nk), *range(nk + ny, nk + ny + nkt), *range(nk, nk + ny),
                     *range(nk + ny + nkt, nk + ny + nkt + nyt)]
        return reorder(jbody, in_order, out_order), out_nz[nk:]
    return cached(jaxpr, ("scan_joint", nc, nk, c_nz, k_nz, x_nz), make)


def _scan_split(jaxpr, nc, nk, c_nz, k_nz, x_nz):
    """A forward scan (carry, ys, residuals stacked per iteration) and a linear scan
    over the residuals. Residuals that merely forward a const or an xs operand are
    not stacked again: the operand itself is passed to the linear scan."""
    def make():
        ny = len(jaxpr.out_avals) - nk
        fwd, lin, res_avals, out_nz, res_inputs = linearize_jaxpr(
            jaxpr, c_nz + k_nz + x_nz, k_nz + (False,) * ny)
        from_consts = [k for k, r in enumerate(res_inputs) if r is not None and r < nc]
        from_xs = [k for k, r in enumerate(res_inputs) if r is not None and r >= nc + nk]
        stacked = [k for k in range(len(res_avals)) if k not in from_consts + from_xs]
        forward = reorder(fwd, out_order=[*range(nk + ny)] + [nk + ny + k for k in stacked])
        n_res, nct, nkt = len(res_avals), sum(c_nz), sum(k_nz)
        order = from_consts + list(range(n_res, n_res + nct + nkt)) + stacked + from_xs + \
            list(range(n_res + nct + nkt, len(lin.in_avals)))
        forwarded = ([res_inputs[k] for k in from_consts],
                     [res_inputs[k] - nc - nk for k in from_xs])
        return forward, reorder(lin, order), forwarded, out_nz[nk:]
    return cached(jaxpr, ("scan_split", nc, nk, c_nz, k_nz, x_nz), make)


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse):
    consts, init, xs = groups(args, num_consts, num_carry)
    ct_carry, ct_ys = cts[:num_carry], cts[num_carry:]
    c_lin = tuple(is_undefined(c) for c in consts)
    x_lin = tuple(is_undefined(x) for x in xs)
    carry_avals = jaxpr.in_avals[num_consts:num_consts + num_carry]
    if not all(dtypes.is_inexact(a.dtype) for a in carry_avals):
        raise DifferentiationError(
            f"scan with carry {type_list(carry_avals)} is not linear in its carries and "
            "cannot be transposed; this is a bug in a rule producing it, please report it.")
    y_nz = tuple(type(c) is not Zero for c in ct_ys)
    body = _scan_transposed_body(jaxpr, num_consts, num_carry, c_lin, x_lin, y_nz)
    lin_const_avals = [c.aval for c in consts if is_undefined(c)]
    res_consts = [c for c in consts if not is_undefined(c)]
    outs = bind(scan_p, *res_consts, *[materialize(c, a) for c, a in zip(ct_carry, carry_avals)],
                *[zeros_array(a) for a in lin_const_avals], *[x for x in xs if not is_undefined(x)],
                *nonzero(ct_ys), jaxpr=body, num_consts=len(res_consts),
                num_carry=num_carry + len(lin_const_avals), length=length, reverse=not reverse)
    ct_init, ct_consts, ct_xs = groups(outs, num_carry, len(lin_const_avals))
    ct_consts, ct_xs = iter(ct_consts), iter(ct_xs)
    return ([next(ct_consts) if l else None for l in c_lin]
            + [ct if is_undefined(c) else None for c, ct in zip(init, ct_init)]
            + [next(ct_xs) if l else None for l in x_lin])


def _scan_transposed_body(jaxpr, nc, nk, c_lin, x_lin, y_nz):
    """(residual consts; carry cotangents, const cotangents so far; residual xs,
    ys cotangents) -> (carry cotangents, const cotangents, xs cotangents)."""
    def make():
        consts_a, carry_a, xs_a = groups(jaxpr.in_avals, nc, nk)
        ys_a = jaxpr.out_avals[nk:]
        res_c = [a for a, l in zip(consts_a, c_lin) if not l]
        lin_c = [a for a, l in zip(consts_a, c_lin) if l]
        res_x = [a for a, l in zip(xs_a, x_lin) if not l]
        ct_y = [a for a, nz in zip(ys_a, y_nz) if nz]

        def body(*args):
            rc, ct_carry, acc, rx, cy = (iter(g) for g in groups(
                args, len(res_c), nk, len(lin_c), len(res_x)))
            linear_args = ([UndefinedPrimal(a) if l else next(rc) for a, l in zip(consts_a, c_lin)]
                           + [UndefinedPrimal(a) for a in carry_a]
                           + [UndefinedPrimal(a) if l else next(rx) for a, l in zip(xs_a, x_lin)])
            cts_out = list(ct_carry) + [next(cy) if nz else Zero(a) for a, nz in zip(ys_a, y_nz)]
            ct_c, ct_k, ct_x = groups(backward_pass(jaxpr.jaxpr, jaxpr.consts, linear_args,
                                                    cts_out), nc, nk)
            ct_c = [c for c, l in zip(ct_c, c_lin) if l]
            return ([materialize(c, a) for c, a in zip(ct_k, carry_a)]
                    + [a if c is None or type(c) is Zero else elementwise.add(a, c)
                       for a, c in zip(acc, ct_c)]
                    + [materialize(c, a) for c, a, l in zip(ct_x, xs_a, x_lin) if l])
        return trace_to_jaxpr(body, res_c + list(carry_a) + lin_c + res_x + ct_y)
    return cached(jaxpr, ("scan_transpose", nc, nk, c_lin, x_lin, y_nz), make)


def _scan_batch(vals, dims, *, jaxpr, num_consts, num_carry, length, reverse):
    size = batch_size(vals, dims)
    nk, ny = num_carry, len(jaxpr.out_avals) - num_carry
    consts, init, xs = groups(vals, num_consts, nk)
    c_dims, k_dims, x_dims = groups(dims, num_consts, nk)
    c_b, x_b = (tuple(d is not None for d in ds) for ds in (c_dims, x_dims))
    k_b = fixed_point(lambda m: batch_jaxpr(jaxpr, size, c_b + m + x_b,
                                            m + (False,) * ny)[1][:nk],
                       tuple(d is not None for d in k_dims))
    body, out_b = batch_jaxpr(jaxpr, size, c_b + k_b + x_b, k_b + (False,) * ny)
    xs = [move_batch_axis(x, d, 1, size) if d is not None else x for x, d in zip(xs, x_dims)]
    outs = bind(scan_p, *to_front(consts, c_dims, c_b, size), *to_front(init, k_dims, k_b, size),
                *xs, jaxpr=body, num_consts=num_consts, num_carry=nk, length=length,
                reverse=reverse)
    return outs, [0 if b else None for b in k_b] + [1 if b else None for b in out_b[nk:]]


def _scan_cost(*avals, jaxpr, num_consts, num_carry, length, reverse):
    c = program_cost(jaxpr)
    return {"flops": length * c["flops"], "bytes": length * c["bytes"]}


# --- on the eager tape: the loop itself, iteration by iteration ---------------------
# The body gets one slice of each xs and the per-iteration outputs are stacked
# through one node each, whose pullbacks stack or slice the cotangents: O(length)
# in the backward pass, where a slicing node per iteration would pad a full-size
# cotangent each time.


def _scan_on_tape(trace, args, *, jaxpr, num_consts, num_carry, length, reverse):
    consts, carry, xs = groups(args, num_consts, num_carry)
    slices = [_unstacked(trace, x, length) for x in xs]
    y_avals = jaxpr.out_avals[num_carry:]
    ys: list[list] = [[None] * length for _ in y_avals]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = run(jaxpr, *consts, *carry, *[s[i] for s in slices])
        carry = outs[:num_carry]
        for y, out in zip(ys, outs[num_carry:]):
            y[i] = out
    return list(carry) + [_stacked(trace, y, a) for y, a in zip(ys, y_avals)]


def _unstacked(trace, x, length: int) -> list:
    """The ``length`` slices of ``x`` along axis 0, through one node whose
    pullback stacks their cotangents."""
    whole = tape_control.value(trace, x)
    pieces = [whole[i] for i in range(length)]
    slot = tape_control.slot(trace, x)
    if not slot or not pieces:
        return pieces

    def pullback(cts):
        rows = [structural.expand_dims(instantiate(ct), dimensions=(0,)) for ct in cts]
        return [structural.concatenate(*rows, dimension=0)]
    return trace.record(pieces, pullback, [slot])


def _stacked(trace, pieces: list, aval):
    """The per-iteration outputs ``pieces`` stacked along a new axis 0, through one
    node whose pullback hands each piece its slice of the cotangent."""
    values = [tape_control.value(trace, p) for p in pieces]
    out = np.stack(values) if values else np.zeros((0,) + aval.shape, aval.dtype)
    slots = [tape_control.slot(trace, p) for p in pieces]
    if not any(slots) or not dtypes.is_inexact(aval.dtype):
        return out

    def pullback(cts):
        (ct,) = cts
        return [indexing.gather(ct, np.asarray(i), axis=0) if s else None
                for i, s in enumerate(slots)]
    return trace.record([out], pullback, slots)[0]


scan_p.impl = _scan_impl
scan_p.abstract_eval = _scan_abstract_eval
scan_p.jvp = _scan_jvp
scan_p.transpose = _scan_transpose  # reached only for scans produced by linearization
scan_p.batch = _scan_batch
scan_p.cost = _scan_cost
scan_p.tape_rule = _scan_on_tape
