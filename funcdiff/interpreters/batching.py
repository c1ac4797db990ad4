"""Batching (vmap): values carry one extra, batched axis.

A ``BatchTracer`` holds a value and ``bdim``, the position of its batch axis
(``None`` when the value is the same for every batch member). Each primitive's
batch rule receives values and batch dims and returns the batched result and
its batch dim, so a whole batch runs in one pass of numpy calls.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from funcdiff.core import ShapedArray, Trace, Tracer, get_aval, new_main
from funcdiff.errors import BatchingError

not_mapped = None


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace: "BatchTrace", val: Any, bdim: int | None):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self) -> ShapedArray:
        aval = get_aval(self.val)
        if self.bdim is None:
            return aval
        shape = aval.shape[:self.bdim] + aval.shape[self.bdim + 1:]
        return ShapedArray(shape, aval.dtype)

    def to_concrete(self, operation: str) -> Any:
        if self.bdim is None:
            v = self.val
            return v.to_concrete(operation) if isinstance(v, Tracer) else v
        from funcdiff.errors import ConcretizationError
        raise ConcretizationError(
            f"{operation} needs one concrete value, but under vmap this value differs "
            "across the batch. Use fd.numpy.where or fd.lax.cond / fd.lax.select to "
            "choose per batch member instead of Python control flow.")


class BatchTrace(Trace):
    __slots__ = ()

    @property
    def axis_size(self) -> int:
        return self.main.global_data

    def pure(self, val: Any) -> BatchTracer:
        return BatchTracer(self, val, not_mapped)

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        vals = [t.val for t in tracers]
        dims = [t.bdim for t in tracers]
        if all(d is None for d in dims):
            out = primitive.bind(*vals, **params)
            if primitive.multiple_results:
                return [BatchTracer(self, o, None) for o in out]
            return BatchTracer(self, out, None)
        rule = primitive.batch
        if rule is None:
            raise BatchingError(f"vmap has no batching rule for the primitive {primitive.name}")
        out, out_dim = rule(vals, dims, axis_size=self.axis_size, **params) \
            if getattr(rule, "wants_axis_size", False) else rule(vals, dims, **params)
        if primitive.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim)]
        return BatchTracer(self, out, out_dim)


def vmap_flat(fun: Callable[..., Sequence[Any]], axis_size: int, in_dims: Sequence[int | None],
              args: Sequence[Any], out_dims: Any) -> list[Any]:
    """Run ``fun`` batched: ``args[i]`` is batched along ``in_dims[i]``.

    Outputs are returned with their batch axis moved to ``out_dims[i]`` (an
    output that is not batched is broadcast along a new axis there; ``None``
    requires it to be unbatched). ``out_dims`` may be one int for all outputs,
    or a callable, called after ``fun`` has run, for callers that learn the
    output structure only then.
    """
    from funcdiff.primitives import structural
    with new_main(BatchTrace, axis_size) as main:
        trace = main.trace
        ins = [BatchTracer(trace, a, d) if d is not None else a for a, d in zip(args, in_dims)]
        outs = fun(*ins)
        if callable(out_dims):
            out_dims = out_dims()
        elif isinstance(out_dims, int):
            out_dims = [out_dims] * len(outs)
        results = []
        for i, (o, od) in enumerate(zip(outs, out_dims)):
            if isinstance(o, Tracer) and o._trace.main is main:
                val, bdim = o.val, o.bdim
            else:
                val, bdim = o, None
            if od is None:
                if bdim is not None:
                    raise BatchingError(
                        f"vmap output {i} has out_axes=None, but it depends on the "
                        "batched inputs, so it differs across the batch. Give it an "
                        "integer out_axes to keep the batch axis.")
                results.append(val)
            else:
                results.append(move_batch_axis(val, bdim, od, axis_size, structural))
        return results


def move_batch_axis(val: Any, src: int | None, dst: int, axis_size: int, structural=None) -> Any:
    """``val`` with its batch axis at ``dst``; an unbatched value is broadcast."""
    if structural is None:
        from funcdiff.primitives import structural
    if src is None:
        aval = get_aval(val)
        shape = list(aval.shape)
        dst = dst % (len(shape) + 1)
        shape.insert(dst, axis_size)
        dims = tuple(i for i in range(len(shape)) if i != dst)
        return structural.broadcast_in_dim(val, shape=tuple(shape), broadcast_dimensions=dims)
    ndim = get_aval(val).ndim
    dst = dst % ndim
    if src == dst:
        return val
    return structural.moveaxis(val, src, dst)
