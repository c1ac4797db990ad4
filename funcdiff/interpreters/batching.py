"""Batching (vmap): values carry one extra, batched axis.

A ``BatchTracer`` holds a value and ``bdim``, the position of its batch axis
(``None`` when the value is the same for every batch member). Each primitive's
batch rule receives values and batch dims and returns the batched result and
its batch dim, so a whole batch runs in one pass of numpy calls.

jacfwd and jacrev batch over the standard basis: row ``b`` of the batch is the
unit vector ``e_b``. A ``StdBasis`` keeps that identity symbolic (a
``BasisTracer``) for as long as the operations applied to it have a cheap
exact answer: scaling by an unbatched value stays symbolic (``d * e_b`` is
``diag(d)`` row b), and contracting it with an unbatched operand ``w`` is ``w``
itself with the contracted axis relabelled as the batch axis (``w @ e_b`` is
column b of ``w``), so the first layer of jacfwd and the last of jacrev cost
nothing instead of a matrix product with the identity. Any other operation
materialises the identity (``numpy.eye``) and proceeds as usual. The zeros of
a symbolic basis stay exact: a scale that is infinite at one element leaves
the other rows finite, where the materialised ``eye * d`` would hold nan.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import roles
from funcdiff.core import ShapedArray, Trace, Tracer, bind, get_aval, new_main, user_frame
from funcdiff.errors import BatchingError, ConcretizationError

not_mapped = None

# The primitives batching emits by itself (to move a batch axis) or keeps a symbolic
# basis through are reached through funcdiff.roles, which their cards fill.

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

    def carries_derivative(self) -> bool:
        return isinstance(self.val, Tracer) and self.val.carries_derivative()

    def to_concrete(self, operation: str) -> Any:
        if self.bdim is None:
            v = self.val
            return v.to_concrete(operation) if isinstance(v, Tracer) else v
        raise ConcretizationError(
            f"{operation} needs one concrete value, but under vmap this value differs "
            f"across the batch (at {user_frame()}). Use fd.numpy.where or fd.lax.cond / fd.lax.select to "
            "choose per batch member instead of Python control flow.")


class BatchTrace(Trace):
    """``bind`` hands this trace its arguments unraised (``raw_args``): values
    that are not this trace's tracers are unbatched (dim None) as they are."""

    __slots__ = ()
    raw_args = True

    @property
    def axis_size(self) -> int:
        return self.main.global_data

    def pure(self, val: Any) -> BatchTracer:
        return BatchTracer(self, val, not_mapped)

    lift = pure

    def process_primitive(self, primitive, args, params):
        vals = []
        dims = []
        batched = False
        main = self.main
        for a in args:
            if isinstance(a, Tracer):
                if a._trace.main is main:
                    if type(a) is BasisTracer:
                        return self._process_basis(primitive, args, params)
                    d = a.bdim
                    if d is not None:
                        batched = True
                    vals.append(a.val)
                    dims.append(d)
                    continue
                self.full_raise(a)  # raises for a tracer that escaped an inner transform
            vals.append(a)
            dims.append(None)
        return self._apply(primitive, vals, dims, batched, params)

    def _process_basis(self, primitive, args, params):
        """``primitive`` with a symbolic basis among its operands: a shortcut
        when there is one, else the usual rule on the materialised basis."""
        tracers = [self.full_raise(a) for a in args]
        out = _basis_rule(self, primitive, tracers, params)
        if out is not None:
            return out
        dims = [t.bdim for t in tracers]
        return self._apply(primitive, [t.val for t in tracers], dims,
                           any(d is not None for d in dims), params)

    def _apply(self, primitive, vals, dims, batched, params):
        if not batched:
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


class OutputAxisError(BatchingError):
    """An ``out_axes`` entry that cannot apply to flat output ``index``; ``problem``
    completes "vmap output ... " (the api layer names the output by its path)."""

    def __init__(self, index: int, problem: str):
        super().__init__(f"vmap output {index} {problem}")
        self.index, self.problem = index, problem


def vmap_flat(fun: Callable[..., Sequence[Any]], axis_size: int, in_dims: Sequence[int | None],
              args: Sequence[Any], out_dims: Any) -> list[Any]:
    """Run ``fun`` batched: ``args[i]`` is batched along ``in_dims[i]``.

    Outputs are returned with their batch axis moved to ``out_dims[i]`` (an
    output that is not batched is broadcast along a new axis there; ``None``
    requires it to be unbatched). ``out_dims`` may be one int for all outputs,
    or a callable, called after ``fun`` has run, for callers that learn the
    output structure only then. An argument may be a ``StdBasis``, batched
    along axis 0 (in_dims 0).
    """
    with new_main(BatchTrace, axis_size) as main:
        trace = main.trace
        ins = [a if d is None else
               BasisTracer(trace, a) if type(a) is StdBasis else BatchTracer(trace, a, d)
               for a, d in zip(args, in_dims)]
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
                    raise OutputAxisError(
                        i, "has out_axes=None, but it depends on the batched inputs, so it "
                        "differs across the batch. Give it an integer out_axes to keep the "
                        "batch axis.")
                results.append(val)
                continue
            rank = get_aval(val).ndim + (bdim is None)  # with the batch axis
            if not -rank <= od < rank:
                raise OutputAxisError(
                    i, f"has out_axes={od}, out of range for its batched shape of rank {rank} "
                    f"(valid axes {-rank}..{rank - 1}).")
            results.append(move_batch_axis(val, bdim, od, axis_size))
        return results


def move_batch_axis(val: Any, src: int | None, dst: int, axis_size: int) -> Any:
    """``val`` with its batch axis at ``dst``; an unbatched value is broadcast."""
    if src is None:
        aval = get_aval(val)
        shape = list(aval.shape)
        dst = dst % (len(shape) + 1)
        shape.insert(dst, axis_size)
        dims = tuple(i for i in range(len(shape)) if i != dst)
        return roles.BROADCAST.primitive.bind(val, shape=tuple(shape), broadcast_dimensions=dims)
    ndim = get_aval(val).ndim
    dst = dst % ndim
    if src == dst:
        return val
    permutation = [i for i in range(ndim) if i != src]
    permutation.insert(dst, src)
    return roles.TRANSPOSE.primitive.bind(val, permutation=tuple(permutation))


# ---------------------------------------------------------------------------
# The standard basis, kept symbolic


class StdBasis:
    """Rows ``start:start + size`` of the n x n identity, restricted to the
    columns ``offset:offset + leaf size`` of one input leaf and shaped
    ``(size,) + shape``, times ``scale`` (None, or a value of shape () or
    ``shape`` applied with the primitive ``scale_prim``).

    Row ``b`` is the unit vector ``e_{start + b}`` seen by the leaf: a one at
    flat position ``start + b - offset`` when that lies in the leaf, else zeros.
    """

    __slots__ = ("size", "start", "offset", "shape", "dtype", "scale", "scale_prim")

    def __init__(self, size: int, start: int, offset: int, shape: tuple, dtype: np.dtype,
                 scale: Any = None, scale_prim: Any = None):
        self.size = size
        self.start = start
        self.offset = offset
        self.shape = shape
        self.dtype = dtype
        self.scale = scale
        self.scale_prim = scale_prim

    @property
    def leaf_size(self) -> int:
        return math.prod(self.shape)

    def rows(self, start: int, stop: int) -> "StdBasis":
        """Rows ``start:stop`` of this batch (for chunked Jacobians)."""
        return StdBasis(stop - start, self.start + start, self.offset, self.shape, self.dtype,
                        self.scale, self.scale_prim)

    def replace(self, **changes) -> "StdBasis":
        get = changes.get
        return StdBasis(get("size", self.size), get("start", self.start),
                        get("offset", self.offset), get("shape", self.shape),
                        get("dtype", self.dtype), get("scale", self.scale),
                        get("scale_prim", self.scale_prim))

    def materialize(self) -> Any:
        eye = np.eye(self.size, self.leaf_size, k=self.start - self.offset, dtype=self.dtype)
        eye = eye.reshape((self.size,) + self.shape)
        if self.scale is None:
            return eye
        return bind(self.scale_prim, eye, self.scale)


class BasisTracer(BatchTracer):
    """A ``BatchTracer`` (batch axis 0) whose value is a symbolic ``StdBasis``;
    reading ``val`` materialises it, once."""

    __slots__ = ("basis", "_val")

    def __init__(self, trace: BatchTrace, basis: StdBasis):
        self._trace = trace
        self.basis = basis
        self.bdim = 0
        self._val = None

    @property
    def val(self) -> Any:
        if self._val is None:
            self._val = self.basis.materialize()
        return self._val

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.basis.shape, self.basis.dtype)


def _basis_rule(trace: BatchTrace, primitive, tracers, params) -> Any:
    """The result of ``primitive`` applied to a symbolic basis, or None when
    there is no shortcut (the caller then materialises the basis)."""
    rule = basis_rules().get(primitive)
    return None if rule is None else rule(trace, tracers, **params)


def _split(tracers):
    """``(basis, other value)`` when exactly one of two operands is a basis
    and the other is unbatched; else None."""
    if len(tracers) != 2:
        return None
    a, b = tracers
    if type(b) is BasisTracer:
        a, b = b, a
    if type(a) is not BasisTracer or b.bdim is not None:
        return None
    return a.basis, b.val


def _scale_rule(primitive):
    """mul/safe_mul of a basis by an unbatched scalar or leaf-shaped value: a
    scaled basis (scales by the same primitive compose)."""
    def rule(trace, tracers):
        split = _split(tracers)
        if split is None:
            return None
        basis, d = split
        aval = get_aval(d)
        if aval.dtype != basis.dtype or aval.shape not in ((), basis.shape):
            return None
        if basis.scale is None:
            scale = d
        elif basis.scale_prim is primitive:
            scale = bind(primitive, basis.scale, d)
        else:
            return None
        return BasisTracer(trace, basis.replace(scale=scale, scale_prim=primitive))
    return rule


def _neg_rule(trace, tracers):
    (t,) = tracers
    basis = t.basis
    if basis.scale is None:
        scaled = basis.replace(scale=np.asarray(-1, basis.dtype), scale_prim=roles.MUL.primitive)
    else:
        scaled = basis.replace(scale=roles.NEG.primitive.bind(basis.scale))
    return BasisTracer(trace, scaled)


def _reshape_rule(trace, tracers, *, new_sizes):
    """A reshape of the basis (batch axis first, the usual batch rule) only
    relabels the leaf's elements: row b keeps its one at the same flat position."""
    (t,) = tracers
    basis, shape = t.basis, tuple(new_sizes)
    if math.prod(shape) != basis.leaf_size:
        return None  # let the reshape itself report the error
    scale = basis.scale
    if scale is not None and get_aval(scale).shape != ():
        scale = roles.RESHAPE.primitive.bind(scale, new_sizes=shape)
    return BasisTracer(trace, basis.replace(shape=shape, scale=scale))


def _dot_general_rule(trace, tracers, *, dimension_numbers):
    """``w . e_b`` over one axis ``c`` of an unbatched ``w`` and a vector leaf is
    ``w`` indexed at ``b`` along ``c``: the batch is ``w`` itself with batch axis
    ``c`` (sliced and zero-padded when the basis covers other leaves or a chunk
    of rows; scaled along ``c`` for a scaled basis)."""
    split = _split(tracers)
    (lc, rc), (lb, rb) = dimension_numbers
    if split is None or lb or len(lc) != 1:
        return None
    basis, w = split
    if len(basis.shape) != 1:
        return None
    w_aval = get_aval(w)
    if w_aval.dtype != basis.dtype:
        return None
    c = lc[0] if type(tracers[1]) is BasisTracer else rc[0]
    n_leaf = basis.shape[0]
    lo = max(0, basis.offset - basis.start)             # first row that meets the leaf
    hi = min(basis.size, basis.offset + n_leaf - basis.start)
    if hi <= lo:
        return None
    j_lo, j_hi = basis.start + lo - basis.offset, basis.start + hi - basis.offset
    piece = w
    if (j_lo, j_hi) != (0, n_leaf):
        piece = roles.SLICE.primitive.bind(
            w, start_indices=tuple(j_lo if i == c else 0 for i in range(w_aval.ndim)),
            limit_indices=tuple(j_hi if i == c else s for i, s in enumerate(w_aval.shape)),
            strides=None)
    if basis.scale is not None:
        scale = basis.scale
        if get_aval(scale).ndim:
            if (j_lo, j_hi) != (0, n_leaf):
                scale = roles.SLICE.primitive.bind(scale, start_indices=(j_lo,),
                                                    limit_indices=(j_hi,), strides=None)
            trailing = w_aval.ndim - 1 - c
            if trailing:
                scale = roles.RESHAPE.primitive.bind(
                    scale, new_sizes=(j_hi - j_lo,) + (1,) * trailing)
        piece = bind(basis.scale_prim, piece, scale)
    if (lo, hi) != (0, basis.size):
        piece = roles.PAD.primitive.bind(piece, np.zeros((), basis.dtype), padding_config=tuple(
            (lo, basis.size - hi, 0) if i == c else (0, 0, 0) for i in range(w_aval.ndim)))
    return BatchTracer(trace, piece, c)


@functools.cache
def basis_rules() -> dict:
    """The shortcuts, by primitive (built once, on first use)."""
    return {roles.MUL.primitive: _scale_rule(roles.MUL.primitive),
            roles.SAFE_MUL.primitive: _scale_rule(roles.SAFE_MUL.primitive),
            roles.NEG.primitive: _neg_rule, roles.RESHAPE.primitive: _reshape_rule,
            roles.CONTRACTION.primitive: _dot_general_rule}
