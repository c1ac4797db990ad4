"""jacrev's pass over the eager tape: many pullbacks at once.

``jacrev`` with no transform active records its function on the tape
(``interpreters.tape``) and then needs the pullback of every row of the
output basis. ``vmap`` of ``TapeFunction.pull_back`` would push each node's
pullback through a ``BatchTrace``; ``pull_back_batched`` walks the nodes once
with cotangents that carry a leading batch axis instead. A factor node
multiplies the batch directly (a symbolic basis stays symbolic, scaled); a
product (``ProductNode``) uses its primitive's ``batched_transpose``, the
batched product a batch rule would run, after making a small basis dense
(a basis that is the diagonal of a vector output, ``DiagonalBatch``, meets a
matrix-vector product as the matrix's rows, scaled: no product at all);
every other node runs its pullback under a ``BatchTrace`` of its own, and
its results are brought back to a leading batch axis.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcdiff import roles
from funcdiff.core import Tracer, Zero, get_aval, new_main
from funcdiff.interpreters.batching import BasisTracer, BatchTrace, BatchTracer, StdBasis
from funcdiff.interpreters.tape_function import TapeFunction
from funcdiff.interpreters.tape_nodes import (DiagonalBatch, FactorNode, MultiOutputNode,
                                              OutputFactor, ProductNode, SumNode)


def pull_back_batched(fn: TapeFunction, cts_out: Sequence[Any], size: int) -> list[Any]:
    """``size`` pullbacks of ``fn`` in one pass: each output cotangent carries a
    leading batch axis (an array of shape ``(size,) + out.shape``, or a
    symbolic ``StdBasis``, as jacrev passes its basis). Returns the input
    cotangents batched the same way (None where zero): the result of ``vmap``
    of ``fn.pull_back``, for concrete cotangents with no transform active.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> from funcdiff.interpreters.tape_function import tape_vjp_flat
    >>> _, fn = tape_vjp_flat(lambda x: [fnp.sin(x) * 2.0], [np.zeros(2)])
    >>> pull_back_batched(fn, [np.eye(2)], 2)[0]
    array([[2., 0.],
           [0., 2.]])
    """
    cts: list[Any] = [None] * fn.n_slots
    for slot, ct in zip(fn.out_slots, cts_out):
        if slot is not None and ct is not None:
            cts[slot] = _add_batched(cts[slot], ct)
    for node in reversed(fn.nodes):
        kind = type(node)
        if kind is FactorNode:
            slot, s, d = node
            ct = cts[slot]
            if ct is None:
                continue
            cts[slot] = None
            if d is not None:
                if type(d) is OutputFactor:
                    d = d.value()
                ct = ct * d if type(ct) is np.ndarray else _scaled(ct, d)
            prev = cts[s]
            cts[s] = ct if prev is None else _add_batched(prev, ct)
            continue
        slot = node.slot
        results = None
        if kind is MultiOutputNode:
            nout = len(node.out_avals)
            ct = cts[slot:slot + nout]
            if all(c is None for c in ct):
                continue
            cts[slot:slot + nout] = [None] * nout
            results = _pull_back_traced(node.pullback, ct, node.out_avals, size)
        else:
            ct = cts[slot]
            if ct is None:
                continue
            cts[slot] = None
            if kind is ProductNode:  # the batched product, with no trace
                if type(ct) is StdBasis:
                    d = _diagonal(ct)
                    if d is not None:
                        results = node.batched(DiagonalBatch(d))
                    if results is None and _dense_is_cheap(ct, node):
                        ct = ct.materialize()
                if results is None and type(ct) is np.ndarray:
                    results = node.batched(ct)
                if results is None:
                    results = _pull_back_traced(node.pull_back, ct, None, size)
                for s, c in zip((node.x_slot, node.y_slot), results):
                    if s and c is not None:
                        prev = cts[s]
                        cts[s] = c if prev is None else _add_batched(prev, c)
                continue
            if kind is SumNode and type(ct) is np.ndarray:  # the batch axis leads: no trace
                results = node.batched(ct)
            else:
                results = _pull_back_traced(node.pullback, ct, None, size)
        for s, c in zip(node.needed, results):
            if s and c is not None:
                prev = cts[s]
                cts[s] = c if prev is None else _add_batched(prev, c)
    return [_dense(cts[s]) if s is not None and cts[s] is not None else None
            for s in fn.in_slots]


def _pull_back_traced(pullback, ct: Any, out_avals, size: int) -> list[Any]:
    """A node's pullback run under a ``BatchTrace`` for a batch of cotangents
    (one, or a list with None for zero when ``out_avals`` lists several
    outputs); its results with a leading batch axis (None where zero)."""
    with new_main(BatchTrace, size) as main:
        trace = main.trace
        if out_avals is None:
            ct = _batch_tracer(trace, ct)
        else:
            ct = [Zero(a) if c is None else _batch_tracer(trace, c)
                  for c, a in zip(ct, out_avals)]
        return [None if c is None or type(c) is Zero else _batch_value(main, c, size)
                for c in pullback(ct)]


# A symbolic basis meeting a product is made dense when the product with the
# dense basis costs at most this many multiplications: below it (a Jacobian of
# a few outputs), numpy on the small identity is faster than the symbolic
# shortcut's dispatch through a BatchTrace.
_DENSE_BASIS_PRODUCT = 1 << 15


def _dense_is_cheap(basis: StdBasis, node: ProductNode) -> bool:
    kept = node.x_kept if node.x_kept is not None else node.y_kept
    return basis.size * np.size(kept) <= _DENSE_BASIS_PRODUCT


def _diagonal(basis: StdBasis) -> np.ndarray | None:
    """``d`` when ``basis`` is ``diag(d)`` over a whole 1-D output (jacrev's basis
    of one vector output, unscaled or scaled by concrete factors), else None."""
    if len(basis.shape) != 1 or basis.start != basis.offset or basis.size != basis.shape[0]:
        return None
    scale = basis.scale
    if scale is None:
        return np.ones(basis.size, basis.dtype)
    if (basis.scale_prim is roles.MUL.primitive and type(scale) is np.ndarray
            and scale.dtype == basis.dtype):
        return scale if scale.shape == (basis.size,) else np.full(basis.size, scale, scale.dtype)
    return None


def _batch_tracer(trace: BatchTrace, ct: Any) -> BatchTracer:
    """A batched cotangent as a tracer of the batched pass (batch axis 0)."""
    return BasisTracer(trace, ct) if type(ct) is StdBasis else BatchTracer(trace, ct, 0)


def _batch_value(main, c: Any, size: int) -> Any:
    """A pullback's result in the batched pass as a value with a leading batch
    axis (a symbolic basis stays one; an unbatched value is repeated)."""
    if type(c) is BasisTracer and c._trace.main is main:
        return c.basis
    if isinstance(c, Tracer) and c._trace.main is main:
        c, bdim = c.val, c.bdim
        if bdim is not None:
            return c if bdim == 0 else np.moveaxis(c, bdim, 0)
    c = np.asarray(c)
    return np.broadcast_to(c, (size,) + c.shape).copy()


def _scaled(ct: Any, d: Any) -> Any:
    """A batched cotangent times a factor of the output's shape (or a scalar)."""
    if type(ct) is not StdBasis:
        return ct * d
    aval = get_aval(d)
    if aval.dtype == ct.dtype and aval.shape in ((), ct.shape):
        if ct.scale is None:
            return ct.replace(scale=d, scale_prim=roles.MUL.primitive)
        if ct.scale_prim is roles.MUL.primitive:
            return ct.replace(scale=ct.scale * d)
    return ct.materialize() * d


def _add_batched(prev: Any, ct: Any) -> Any:
    """Accumulate batched cotangents (a symbolic basis is made dense to be added)."""
    if prev is None:
        return ct
    return _dense(prev) + _dense(ct)


def _dense(ct: Any) -> Any:
    return ct.materialize() if type(ct) is StdBasis else ct


__all__ = ["pull_back_batched"]
