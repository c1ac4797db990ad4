"""Seeing what reverse mode keeps and what it costs.

``saved_residuals(f, *args)`` lists every value the backward pass of ``f``
keeps: the constants of the linear program that linearize builds. To say
where each came from, ``f`` is linearized on top of a *recording* trace: a
dynamic trace at the bottom of the stack that computes each primitive with
its numpy impl and wraps the result with the primitive's name and the
user's source line (for staged programs, the line recorded when they were
staged, see ``funcdiff.remat.checkpoint``). The residuals are those wrapped values.

``cost_analysis(f, *args)`` stages, at abstract values, the forward program,
its jvp, and its vjp split into the forward pass (outputs plus residuals)
and the backward pass (the transposed linear program), optimised as jit
would run them, and sums each primitive's cost rule. The peak live memory of
the backward pass is found by walking the backward program, holding each
value from its definition to its last use (inputs, i.e. residuals and output
cotangents, are live from the start).
"""

from __future__ import annotations

import linecache
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from funcdiff import core, dtypes
from funcdiff.remat.checkpoint import checkpoint_p, remat_split
from funcdiff.interpreters.call import transposed_program
from funcdiff.core import Trace, Tracer, Zero, get_aval, is_array_like, new_main, tangent_aval
from funcdiff.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from funcdiff.errors import InvalidArgumentError
from funcdiff.interpreters.call import call_p
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.linearize import linearize_flat
from funcdiff.passes.pipeline import optimize
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.ir import ClosedJaxpr, Literal, current_source, eval_jaxpr
from funcdiff.tree_util import tree_flatten, tree_unflatten

# ---------------------------------------------------------------------------
# Recording where values come from


class _RecordTracer(Tracer):
    __slots__ = ("val", "origin")

    def __init__(self, trace: "_RecordTrace", val: Any, origin: tuple | None):
        self._trace = trace
        self.val = val
        self.origin = origin  # (kind, producer, source) or None for an outside constant

    @property
    def aval(self):
        return get_aval(self.val)

    def to_concrete(self, operation: str) -> Any:
        return self.val


class _RecordTrace(Trace):
    """Computes every primitive with numpy and notes its producer and source line."""

    __slots__ = ()

    def pure(self, val: Any) -> _RecordTracer:
        return _RecordTracer(self, val, None)

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        if primitive is call_p:  # look inside jitted programs: name the real producers
            closed = params["jaxpr"]
            return eval_jaxpr(closed.jaxpr, closed.consts, *tracers)
        out = primitive.impl(*[t.val for t in tracers], **params)
        origin = ("intermediate", primitive.name, current_source() or core.user_frame())
        if primitive.multiple_results:
            return [self._wrap(o, origin) for o in out]
        return self._wrap(out, origin)

    def _wrap(self, val: Any, origin: tuple) -> _RecordTracer:
        if isinstance(val, _RecordTracer) and val._trace.main is self.main:
            return val  # an impl that ran Python code already recorded it
        return _RecordTracer(self, val, origin)


class Residual(NamedTuple):
    """One value kept for the backward pass."""

    shape: tuple
    dtype: np.dtype
    nbytes: int
    kind: str        # "intermediate", "argument" or "constant"
    primitive: str   # the producing primitive, or the argument position
    source: str      # file:line of the user code that produced it ("" if unknown)
    shared_with: int | None  # index of an earlier residual holding the same array


class ResidualReport(list):
    """The residuals of ``saved_residuals``; ``print`` it for a table."""

    def __init__(self, items: Sequence[Residual], name: str):
        super().__init__(items)
        self.name = name

    @property
    def total_bytes(self) -> int:
        """Bytes held for the backward pass (an array kept twice counts once)."""
        return sum(r.nbytes for r in self if r.shared_with is None)

    def bytes_of(self, kind: str) -> int:
        """Bytes of the residuals of one kind: "intermediate", "argument" or "constant"."""
        return sum(r.nbytes for r in self if r.kind == kind and r.shared_with is None)

    def __str__(self) -> str:
        rows = [("#", "shape", "dtype", "bytes", "kind", "produced by", "source")]
        for i, r in enumerate(self):
            note = r.primitive if r.shared_with is None else f"{r.primitive} (= #{r.shared_with})"
            rows.append((str(i), str(r.shape), r.dtype.name, f"{r.nbytes:,}", r.kind, note,
                         _with_code(r.source)))
        widths = [max(len(row[c]) for row in rows) for c in range(6)]
        lines = [f"saved residuals of {self.name}: {len(self)} values, "
                 f"{_human(self.total_bytes)} kept for the backward pass"]
        for row in rows:
            lines.append("  " + "  ".join(cell.rjust(w) if c in (0, 3) else cell.ljust(w)
                                          for c, (cell, w) in enumerate(zip(row, widths)))
                         + "  " + row[6])
        lines.append(f"  total {self.total_bytes:,} bytes (intermediates "
                     f"{self.bytes_of('intermediate'):,}, arguments "
                     f"{self.bytes_of('argument'):,}, constants {self.bytes_of('constant'):,})")
        return "\n".join(line.rstrip() for line in lines)

    __repr__ = __str__


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _with_code(source: str) -> str:
    if not source or ":" not in source:
        return source
    path, _, line = source.rpartition(":")
    try:
        code = linecache.getline(path, int(line)).strip()
    except ValueError:
        code = ""
    short = path.rsplit("/", 1)[-1]
    return f"{short}:{line}" + (f"  {code}" if code else "")


def _flatten_call(f: Callable, args: tuple, what: str, argnums):
    leaves, labels, mask = [], [], []
    nums = None if argnums is None else \
        {a % len(args) for a in ((argnums,) if isinstance(argnums, int) else argnums)}
    for i, a in enumerate(args):
        arg_leaves, _ = tree_flatten(a)
        for j, x in enumerate(arg_leaves):
            if not is_array_like(x):
                raise InvalidArgumentError(f"{what}: argument {i} leaf {j} is a "
                                           f"{type(x).__name__}; pass arrays, or close over "
                                           "non-array values.")
            x = np.asarray(x) if type(x) in (float, int, bool) else x
            leaves.append(x)
            labels.append(f"argument {i}" + (f" leaf {j}" if len(arg_leaves) > 1 else ""))
            mask.append(dtypes.is_inexact(get_aval(x).dtype) and (nums is None or i in nums))
    _, in_tree = tree_flatten(tuple(args))

    def f_flat(*xs):
        out_leaves, _ = tree_flatten(f(*tree_unflatten(in_tree, xs)))
        return out_leaves
    return f_flat, leaves, labels, mask


def saved_residuals(f: Callable, *args: Any, argnums: int | Sequence[int] | None = None
                    ) -> ResidualReport:
    """Every value reverse mode keeps for the backward pass of ``f`` at ``args``.

    Args:
      f: function of arrays (pytrees of arrays).
      *args: the point at which ``f`` is linearized.
      argnums: the arguments differentiated (default: every float argument, as vjp).

    Returns:
      A ``ResidualReport``: a list of ``Residual(shape, dtype, nbytes, kind,
      primitive, source, shared_with)`` in the order the backward pass holds
      them, with ``.total_bytes``; printing it gives a table. Checkpointing
      (``fd.checkpoint``) and its policies change the list accordingly.

    Raises:
      InvalidArgumentError: when called inside a transform, or with non-array arguments.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> report = fd.saved_residuals(lambda x: fnp.sum(fnp.sin(x)), np.ones(3))
    >>> [(r.shape, r.primitive) for r in report]
    [((3,), 'cos')]
    >>> report.total_bytes
    24
    """
    if core.cur_level() != 0:
        raise InvalidArgumentError("saved_residuals inspects a function from the outside; "
                                   "call it outside grad/jvp/vmap/jit.")
    f_flat, leaves, labels, mask = _flatten_call(f, args, "saved_residuals", argnums)
    with new_main(_RecordTrace, dynamic=True) as main:
        trace = main.trace
        ins = [_RecordTracer(trace, x, ("argument", label, ""))
               for x, label in zip(leaves, labels)]
        _, lin = linearize_flat(f_flat, ins, in_mask=mask)
        consts = list(lin.jaxpr.consts)
    items, first_index = [], {}
    for c in consts:
        if isinstance(c, _RecordTracer):
            val, origin = c.val, c.origin
        else:
            val, origin = c, None
        aval = get_aval(val)
        if aval.shape == () and not isinstance(val, Tracer):
            continue  # a concrete scalar is written into the program as a literal
        if origin is None:
            origin = ("constant", "constant", "")
        key = id(val)
        shared = first_index.get(key)
        if shared is None:
            first_index[key] = len(items)
        items.append(Residual(aval.shape, aval.dtype, aval.size * aval.dtype.itemsize,
                              origin[0], origin[1], origin[2], shared))
    return ResidualReport(items, getattr(f, "__name__", "f"))


# ---------------------------------------------------------------------------
# Costs


class ProgramCost(NamedTuple):
    """Flops and bytes moved by one program, in total and per primitive."""

    flops: int
    bytes: int
    by_primitive: dict  # name -> {"count", "flops", "bytes"}

    def __add__(self, other: "ProgramCost") -> "ProgramCost":  # type: ignore[override]
        merged = {k: dict(v) for k, v in self.by_primitive.items()}
        for k, v in other.by_primitive.items():
            m = merged.setdefault(k, {"count": 0, "flops": 0, "bytes": 0})
            for f in ("count", "flops", "bytes"):
                m[f] += v[f]
        return ProgramCost(self.flops + other.flops, self.bytes + other.bytes, merged)


_INLINED = {"jaxpr": (call_p, checkpoint_p), "call_jaxpr": (custom_jvp_call_p, custom_vjp_call_p)}


def program_costs(closed: ClosedJaxpr) -> ProgramCost:
    """Cost of ``closed`` from each primitive's cost rule, looking inside nested programs."""
    by: dict = {}
    total_f = total_b = 0
    for eqn in closed.jaxpr.eqns:
        inner = None
        for param, prims in _INLINED.items():
            if eqn.primitive in prims and eqn.params.get(param) is not None:
                inner = eqn.params[param]
        if inner is not None:
            sub = program_costs(inner)
            for k, v in sub.by_primitive.items():
                m = by.setdefault(k, {"count": 0, "flops": 0, "bytes": 0})
                for f in ("count", "flops", "bytes"):
                    m[f] += v[f]
            total_f += sub.flops
            total_b += sub.bytes
            continue
        rule = eqn.primitive.cost
        c = rule(*[a.aval for a in eqn.invars], **eqn.params) if rule else {}
        m = by.setdefault(eqn.primitive.name, {"count": 0, "flops": 0, "bytes": 0})
        m["count"] += 1
        m["flops"] += int(c.get("flops", 0))
        m["bytes"] += int(c.get("bytes", 0))
        total_f += int(c.get("flops", 0))
        total_b += int(c.get("bytes", 0))
    return ProgramCost(total_f, total_b, by)


def _nbytes(aval) -> int:
    return aval.size * aval.dtype.itemsize


def peak_live_bytes(closed: ClosedJaxpr) -> int:
    """Peak bytes live while running ``closed`` with every value freed after its
    last use; its inputs are live at the start, nested programs add their own peak."""
    j = closed.jaxpr
    last: dict = {}
    for i, eqn in enumerate(j.eqns):
        for a in eqn.invars:
            if type(a) is not Literal:
                last[a] = i
    outs = {a for a in j.outvars if type(a) is not Literal}
    live = {v: _nbytes(v.aval) for v in j.invars}
    for v in j.invars:
        if v not in last and v not in outs:
            live.pop(v)  # an unused input is released at once
    current = sum(live.values())
    peak = current + sum(_nbytes(v.aval) for v in j.invars if v not in live)
    for i, eqn in enumerate(j.eqns):
        inner = eqn.params.get("jaxpr") if eqn.primitive is checkpoint_p else None
        if inner is not None:
            in_bytes = sum(_nbytes(a.aval) for a in set(eqn.invars) if type(a) is not Literal)
            peak = max(peak, current + max(0, peak_live_bytes(inner) - in_bytes))
        for v in eqn.outvars:
            live[v] = _nbytes(v.aval)
            current += live[v]
        peak = max(peak, current)
        for a in set(eqn.invars):
            if type(a) is not Literal and last.get(a) == i and a not in outs and a in live:
                current -= live.pop(a)
        for v in eqn.outvars:
            if v not in last and v not in outs and v in live:
                current -= live.pop(v)
    return peak


class CostReport:
    """Costs of a function's forward program, its jvp and its vjp.

    Attributes:
      forward, jvp, vjp_forward, backward: ``ProgramCost`` of the plain
        program, the forward-mode program, the forward pass of reverse mode
        (outputs plus residuals) and the backward pass (transposed linear
        program, including any recomputation by checkpoints).
      vjp: ``vjp_forward + backward``.
      residual_bytes: bytes of the backward pass's inputs other than the
        output cotangents (the values kept).
      peak_backward_bytes: peak live bytes of the backward pass.
    """

    def __init__(self, name, forward, jvp, vjp_forward, backward, residual_bytes, peak):
        self.name = name
        self.forward, self.jvp = forward, jvp
        self.vjp_forward, self.backward = vjp_forward, backward
        self.residual_bytes = residual_bytes
        self.peak_backward_bytes = peak

    @property
    def vjp(self) -> ProgramCost:
        return self.vjp_forward + self.backward

    def __str__(self) -> str:
        programs = [("forward", self.forward), ("jvp", self.jvp),
                    ("vjp forward pass", self.vjp_forward), ("vjp backward pass", self.backward),
                    ("vjp total", self.vjp)]
        lines = [f"cost analysis of {self.name}"]
        for label, p in programs:
            lines.append(f"  {label:<18} {p.flops:>14,} flops  {p.bytes:>14,} bytes")
        ratio = self.backward.flops / self.forward.flops if self.forward.flops else float("nan")
        lines.append(f"  backward / forward flops: {ratio:.2f}")
        lines.append(f"  kept for the backward pass: {self.residual_bytes:,} bytes; peak live "
                     f"memory of the backward pass: {self.peak_backward_bytes:,} bytes")
        lines.append("  per primitive (forward | backward flops):")
        names = sorted(set(self.forward.by_primitive) | set(self.backward.by_primitive),
                       key=lambda n: -(self.forward.by_primitive.get(n, {}).get("flops", 0)
                                       + self.backward.by_primitive.get(n, {}).get("flops", 0)))
        for n in names:
            fw = self.forward.by_primitive.get(n, {}).get("flops", 0)
            bw = self.backward.by_primitive.get(n, {}).get("flops", 0)
            lines.append(f"    {n:<22} {fw:>14,} | {bw:>14,}")
        return "\n".join(lines)

    __repr__ = __str__


def cost_analysis(f: Callable, *args: Any, argnums: int | Sequence[int] | None = None
                  ) -> CostReport:
    """Flops and bytes of ``f``'s forward program, its jvp and its vjp, per primitive.

    The programs are staged at the shapes of ``args`` (no numbers are
    computed) and optimised as jit would run them; each primitive's cost rule
    is summed. Reverse mode is split into its forward pass and its backward
    pass; the peak live memory of the backward pass comes from the liveness
    of the backward program.

    Args:
      f: function of arrays (pytrees of arrays) that jit could trace.
      *args: example arguments (only shapes and dtypes matter).
      argnums: arguments differentiated (default: every float argument).

    Returns:
      A ``CostReport`` (print it for a table).

    >>> import funcdiff as fd, numpy as np
    >>> report = fd.cost_analysis(lambda x, w: x @ w, np.ones((8, 3)), np.ones((3, 5)))
    >>> report.forward.flops, report.backward.flops   # 2·B·n·m and 4·B·n·m
    (240, 480)
    """
    f_flat, leaves, _, mask = _flatten_call(f, args, "cost_analysis", argnums)
    avals = [get_aval(x) for x in leaves]
    forward = trace_to_jaxpr(f_flat, avals)

    def jvp_program(*xs):
        n = len(avals)
        it = iter(xs[n:])
        tangents = [next(it) if m else Zero(tangent_aval(a)) for a, m in zip(avals, mask)]
        outs, out_t = jvp_flat(f_flat, list(xs[:n]), tangents)
        return list(outs) + [t for t in out_t if type(t) is not Zero]
    jvp = trace_to_jaxpr(jvp_program, avals + [a for a, m in zip(avals, mask) if m])

    split = remat_split(forward, tuple(mask), None)
    n_kept = split.num_saved + len(split.used_inputs)
    n_tangents = sum(mask)
    n_cts = sum(not z for z in split.out_is_zero)
    backward = transposed_program(split.linear, (False,) * n_kept + (True,) * n_tangents,
                           (True,) * n_cts)
    backward = optimize(backward)
    kept = sum(_nbytes(v.aval) for v in split.linear.jaxpr.invars[:n_kept])
    kept += sum(_nbytes(get_aval(c)) for c in split.linear.consts if get_aval(c).shape != ())
    return CostReport(getattr(f, "__name__", "f"), program_costs(optimize(forward)),
                      program_costs(optimize(jvp)), program_costs(optimize(split.forward)),
                      program_costs(backward), kept, peak_live_bytes(backward))


__all__ = ["saved_residuals", "cost_analysis", "Residual", "ResidualReport", "CostReport",
           "ProgramCost", "program_costs", "peak_live_bytes"]
