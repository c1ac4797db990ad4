"""The tape's pullback and its entry point: ``TapeFunction`` and ``tape_vjp_flat``.

``tape_vjp_flat`` evaluates a function on a tape (``interpreters.tape``) and
returns its outputs with a ``TapeFunction``, whose ``pull_back`` visits the
recorded nodes (``interpreters.tape_nodes``) in reverse: a factor node
multiplies the cotangent by its factor (an ``OutputFactor`` computed then), a
product node applies its primitive's transpose, any other node calls its
pullback.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from funcdiff import core, dtypes, roles
from funcdiff.core import Tracer, Zero, get_aval, new_main
from funcdiff.interpreters.tape import CheckedTapeTrace, TapeTrace, TapeTracer
from funcdiff.interpreters.tape_nodes import FactorNode, MultiOutputNode, OutputFactor, ProductNode
from funcdiff.interpreters.transpose import add_cotangents


class TapeFunction:
    """The pullback found by ``tape_vjp_flat``: output cotangents -> input cotangents.

    It mirrors ``LinearFunction``'s description of inputs and outputs
    (``in_avals``, ``in_mask``, ``out_avals``, ``out_is_zero``).
    """

    __slots__ = ("nodes", "n_slots", "in_slots", "out_slots", "in_avals", "in_mask",
                 "out_avals", "out_is_zero")

    def __init__(self, nodes, n_slots, in_slots, out_slots, in_avals, in_mask, out_avals):
        self.nodes = nodes
        self.n_slots = n_slots
        self.in_slots = in_slots
        self.out_slots = out_slots
        self.in_avals = in_avals
        self.in_mask = in_mask
        self.out_avals = out_avals
        self.out_is_zero = [s is None for s in out_slots]

    def restricted(self, n: int) -> "TapeFunction":
        """The same pullback for the first ``n`` outputs only."""
        return TapeFunction(self.nodes, self.n_slots, self.in_slots, self.out_slots[:n],
                            self.in_avals, self.in_mask, self.out_avals[:n])

    def pull_back(self, cts_out: Sequence[Any], release: bool = False) -> list[Any]:
        """Cotangents of the inputs (None where zero) for cotangents of the outputs.

        With ``release`` (a pullback used once, as grad uses it), each node is
        dropped from the tape as soon as it has been visited, so its residuals
        are freed during the backward pass, as hand-written backpropagation
        frees them, rather than all at its end; the tape cannot be pulled back
        again."""
        nodes = self.nodes
        if nodes is None:
            raise RuntimeError("this tape released its nodes when it was pulled back")
        cts: list[Any] = [None] * self.n_slots
        for slot, ct in zip(self.out_slots, cts_out):
            if slot is not None and ct is not None and type(ct) is not Zero:
                prev = cts[slot]
                cts[slot] = ct if prev is None else add_cotangents(prev, ct)
        if release:  # pop each node as it is visited (None, put first, ends the loop)
            self.nodes = None
            nodes.insert(0, None)
            order = iter(nodes.pop, None)
        else:
            order = reversed(nodes)
        for node in order:
            kind = type(node)
            if kind is FactorNode:  # the bulk of scalar code: no call
                slot, s, factor = node
                ct = cts[slot]
                if ct is None:
                    continue
                cts[slot] = None
                if factor is not None:  # ct * factor, inline
                    if type(factor) is OutputFactor:
                        factor = factor.value()
                    ct = (roles.MUL.primitive.bind(ct, factor) if isinstance(ct, Tracer)
                          else ct * factor)
                    factor = None  # a factor computed now is freed now, not at the next node
                prev = cts[s]
                cts[s] = ct if prev is None else add_cotangents(prev, ct)
                continue
            slot = node.slot
            if kind is MultiOutputNode:
                nout = len(node.out_avals)
                ct = cts[slot:slot + nout]
                if all(c is None for c in ct):
                    continue
                cts[slot:slot + nout] = [None] * nout
                ct = [Zero(a) if c is None else c for c, a in zip(ct, node.out_avals)]
                results = node.pullback(ct)
            else:
                ct = cts[slot]
                if ct is None:
                    continue
                cts[slot] = None
                if kind is ProductNode:
                    ct_x, ct_y = node.pull_back(ct)
                    if ct_x is not None and type(ct_x) is not Zero:
                        s = node.x_slot
                        prev = cts[s]
                        cts[s] = ct_x if prev is None else add_cotangents(prev, ct_x)
                    if ct_y is not None and type(ct_y) is not Zero:
                        s = node.y_slot
                        prev = cts[s]
                        cts[s] = ct_y if prev is None else add_cotangents(prev, ct_y)
                    continue
                results = node.pullback(ct)
            for s, c in zip(node.needed, results):
                if s and c is not None and type(c) is not Zero:
                    prev = cts[s]
                    cts[s] = c if prev is None else add_cotangents(prev, c)
        return [cts[s] if s is not None else None for s in self.in_slots]


def tape_vjp_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any],
                  in_mask: Sequence[bool] | None = None) -> tuple[list[Any], TapeFunction]:
    """Evaluate ``fun`` at ``primals`` on a tape; return its outputs and pullback.

    The counterpart of ``linearize_flat`` for eager reverse mode (``usable()``
    must hold). ``in_mask`` selects the inputs to differentiate (default: the
    float and complex ones).
    """
    in_avals = [get_aval(p) for p in primals]
    if in_mask is None:
        in_mask = [dtypes.is_inexact(a.dtype) for a in in_avals]
    with new_main(CheckedTapeTrace if core.float_checks else TapeTrace) as main:
        trace = main.trace
        ins = []
        in_slots = []
        for p, a, m in zip(primals, in_avals, in_mask):
            slot = 0
            if m:
                slot = trace.next_slot
                trace.next_slot = slot + 1
            ins.append(TapeTracer(trace, p, slot, a))
            in_slots.append(slot or None)
        outs = fun(*ins)
        primals_out, out_slots = [], []
        for o in outs:
            if type(o) is TapeTracer and o._trace is trace:
                primals_out.append(o.primal)
                out_slots.append(o.slot or None)
            else:
                primals_out.append(o)
                out_slots.append(None)
    out_avals = [get_aval(p) for p in primals_out]
    return primals_out, TapeFunction(trace.nodes, trace.next_slot, in_slots, out_slots,
                                     in_avals, in_mask, out_avals)


__all__ = ["TapeFunction", "tape_vjp_flat"]
