"""Compile a jaxpr to straight-line Python over numpy.

Each equation becomes one line: a direct numpy call when the primitive's
card declares a lowering (``prim.lowering``, chosen from ``lowerings.py``: a
ufunc, ``np.dot``, ``ufunc.reduce``, a method such as ``reshape``) or its
impl is a ufunc (an operator for 0-d floats, which numpy's scalars run
faster), else its ``impl`` with its params. Replaying a program costs one
Python call per equation and nothing else: no tracing, no dispatch through
``bind``, no re-validation of shapes the tracer already checked. Before that,
the groups of equations that index along an axis (the gathers and
scatter-adds of ``take_along_axis`` and ``take`` with their index arithmetic)
become one numpy advanced-indexing call each (``fusion.py``).

Memory: every intermediate is deleted right after its last use, so the peak
memory of a program (a backward pass in particular) is what it needs. An
elementwise ufunc whose operand dies at that equation writes into the
operand's buffer (``out=``) when that is provably safe: the operand was
produced by this program as a fresh array of the result's shape and dtype
(so it is no argument, constant or view), and at run time nothing else
refers to it (its reference count shows no view or other name holds it).
Across calls, large intermediates that die that way are recycled: each
program keeps a pool of dead buffers per (shape, dtype), at most as many as
one call draws from it, and its ufunc and matrix-product results are written
into them (``out=``). The arrays a call returns join the pools too, once
their caller has let them go (no name, container or view refers to them at a
later call; ``lend``, ``reclaim``). A training loop then allocates no fresh
memory after its first calls and pays no page faults; the price is that a
compiled program holds those buffers between calls (its last two calls'
results among them, shared with the caller while the caller holds them).

Programs whose values are all 0-d float64 (or bool) also get a Python-float
version (``scalar.py``), roughly ten times cheaper per operation than
numpy on scalars. Both generators share the analysis of the program and the
namespace of generated names (``codegen.py``).

The generated source only ever contains generated identifiers; parameters,
constants and functions are passed in through the namespace, never written
into the text, so nothing a user supplies is evaluated as code.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable

import numpy as np

from funcdiff.backends import backend_of
from funcdiff.core import ShapedArray
from funcdiff.errors import FunctionalDiffError
from funcdiff.compiler.codegen import Namespace, Program
from funcdiff.compiler.scalar import scalar_source
from funcdiff.compiler.lowerings import CONSTANT_VIEW, take_buffer
from funcdiff.ir import ClosedJaxpr, Literal, Var, eval_jaxpr

_REUSE_MIN_BYTES = 1 << 14  # smaller arrays come from numpy's cache: reuse does not pay


def _sole_reference_count() -> int:
    """What ``sys.getrefcount(x)`` says for a local ``x`` nothing else refers to."""
    scope: dict = {"_rc": sys.getrefcount, "_new": object}
    exec("def probe():\n    x = _new()\n    return _rc(x)\n", scope)
    return scope["probe"]()


_SOLE = _sole_reference_count()


def lend(lent: list, results: tuple, keep: int) -> None:
    """Remember ``results``, the recycled-size arrays a call returns, so that a later
    call can write into them once their caller has let them go (``reclaim``); only
    the last ``keep`` stay remembered (a caller that keeps every result is not
    tracked for ever)."""
    lent.extend(results)
    if len(lent) > keep:
        del lent[:len(lent) - keep]


def reclaim(lent: list, pool: list, depth: int) -> None:
    """Move from ``lent`` into ``pool`` (up to ``depth`` buffers) the results of
    earlier calls that nothing refers to any more: no name, container or view.

    Each is taken out of ``lent`` before its references are counted (and put
    back at the end when it is still in use), so a call in another thread never
    counts or moves the same one."""
    for _ in range(len(lent)):
        if len(pool) >= depth:
            return
        try:
            buf = lent.pop(0)
        except IndexError:  # another thread emptied it
            return
        if sys.getrefcount(buf) == _SOLE:
            pool.append(buf)
        else:
            lent.append(buf)


class CompiledProgram:
    """A jaxpr compiled to a Python function of its inputs, with its source text.

    ``source`` is the numpy program; ``scalar_source`` the Python-float
    version (None when the program is not all-scalar); ``jaxpr`` is the
    program that was compiled; ``fused_chains`` the elementwise chains run as
    one numexpr expression each.
    """

    __slots__ = ("fn", "source", "scalar_source", "jaxpr", "fused_chains", "portable",
                 "__weakref__")

    def __init__(self, fn: Callable, source: str, jaxpr: ClosedJaxpr,
                 scalar_source: str | None = None, fused_chains: list[str] | None = None):
        self.fn = fn
        self.source = source
        self.scalar_source = scalar_source
        self.jaxpr = jaxpr
        self.fused_chains = fused_chains or []
        self.portable = None  # the program for other libraries' arrays, made when first needed

    def __call__(self, *args: Any) -> list[Any]:
        for x in args:  # (a loop body's program is called once per iteration: cheap tests)
            if type(x) not in _NUMPY_TYPES and backend_of(x) is not None:
                return self._call_portable(args)
        return self.fn(*args)

    def _call_portable(self, args) -> list[Any]:
        """Another library's arrays (dask, torch, array_api_strict ...): the same program
        compiled without numpy's buffers, in-place reuse and fusions, so each call goes
        to the arrays' own protocols and namespace (a dask graph is built lazily). Should
        a lowering not suit the library, the program is interpreted instead."""
        if self.portable is None:
            self.portable = _portable_function(self.jaxpr)
        if self.portable is not False:
            try:
                return self.portable(*args)
            except Exception:  # noqa: BLE001  interpreted below, which reports a real error
                self.portable = False
        return eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *args)


# numpy arrays and scalars and Python numbers: the values the numpy program takes as is
_NUMPY_TYPES = frozenset({np.ndarray, float, int, bool, complex}
                         | set(np.sctypeDict.values()))


def numpy_values(values) -> bool:
    """Whether every one of ``values`` is a numpy array or scalar or a Python number."""
    return all(type(x) in _NUMPY_TYPES for x in values)


def _impl_of(eqn) -> Callable:
    impl = eqn.primitive.impl
    if impl is None:
        raise FunctionalDiffError(
            f"jit cannot compile the primitive {eqn.primitive.name}: it has no impl rule. "
            "Every primitive needs an impl to run; this is a bug in its card.")
    return impl


# ---------------------------------------------------------------------------
# numpy code generation


class Emitter:
    """State while generating the numpy version of one program; what a card's
    lowering rule receives (``compiler.lowerings``)."""

    def __init__(self, program: Program, portable: bool = False, numpy_inputs: bool = False):
        self.program = program
        self.portable = portable  # no buffers or in-place reuse: other libraries' arrays
        self.numpy_inputs = numpy_inputs  # the caller never passes a Python scalar
        self.ns = Namespace()
        self.names: dict[Var, str] = {}
        self.produced: set[Var] = set()   # variables held in locals of the function
        self.fresh: set[Var] = set()      # ... that hold arrays this program allocated
        self.index = 0                    # the equation being lowered
        self.pools: dict[tuple, str] = {}  # (shape, dtype) -> name of its buffer pool
        self.pool_sites: dict[str, int] = {}  # pool name -> allocations that draw on it

    def pool(self, aval: ShapedArray, draw: bool = True) -> str | None:
        """The name of the pool of recycled buffers for results of ``aval``, or
        None when such results are too small to be worth recycling. ``draw``
        counts one more allocation site taking buffers from it."""
        if (self.portable or aval.ndim == 0
                or math.prod(aval.shape) * aval.dtype.itemsize < _REUSE_MIN_BYTES):
            return None
        key = (aval.shape, aval.dtype)
        name = self.pools.get(key)
        if name is None:
            name = self.pools[key] = self.ns.add("q", [], share=False)
            self.pool_sites[name] = 0
        if draw:
            self.pool_sites[name] += 1
        return name

    def ref(self, a) -> str:
        a = self.program.resolve(a)
        if type(a) is Literal:
            return self.ns.add("k", np.asarray(a.val, a.aval.dtype)[()], share=False)
        return self.names[a]

    def is_numpy(self, a) -> bool:
        """Whether atom ``a`` certainly holds a numpy array or numpy scalar (so it
        has methods): results, constants and literals do; a 0-d input may be a
        Python scalar, unless the caller promised numpy values."""
        a = self.program.resolve(a)
        if type(a) is Literal or a in self.produced or self.numpy_inputs:
            return True
        if a in self.program.constvars:
            return isinstance(self.ns.values[self.names[a]], (np.ndarray, np.generic))
        return a.aval.ndim > 0

    def reusable(self, eqn) -> int | None:
        """Position of an operand whose buffer the result may overwrite, if any."""
        out = eqn.outvars[0].aval
        if (self.portable or out.ndim == 0
                or math.prod(out.shape) * out.dtype.itemsize < _REUSE_MIN_BYTES):
            return None
        for k, a in enumerate(eqn.invars):
            a = self.program.resolve(a)
            if (type(a) is Var and a in self.fresh and a.aval == out
                    and self.program.last_use.get(a) == self.index
                    and a not in self.program.output_set):
                return k
        return None

    def ufunc_call(self, eqn, ufunc: np.ufunc, args: list[str]) -> tuple[str, bool]:
        """``eqn`` computed by ``ufunc`` on ``args``: an operator for 0-d floats,
        else the ufunc writing into a recycled buffer or into an operand that dies
        here when that is safe (see the module docstring)."""
        out = eqn.outvars[0].aval
        op = _SCALAR_OPERATORS.get(ufunc)
        if (op is not None and out.ndim == 0 and out.dtype.kind == "f" and len(args) == 2
                and all(self.program.resolve(a).aval.dtype == out.dtype for a in eqn.invars)
                and any(self.is_numpy(a) for a in eqn.invars)):
            return f"({args[0]} {op} {args[1]})", False
        f = self.ns.add("f", ufunc)
        call = f"{f}({', '.join(args)})"
        pool = self.pool(out)
        if pool is not None:  # a buffer recycled from an earlier call, if one is free
            call = f"{f}({', '.join(args)}, out={self.ns.add('f', take_buffer)}({pool}))"
        k = self.reusable(eqn)
        if k is not None:
            buf = args[k]
            rc = self.ns.add("f", sys.getrefcount)
            call = f"{f}({', '.join(args)}, out={buf}) if {rc}({buf}) == {_SOLE} else {call}"
        return call, eqn.outvars[0].aval.ndim > 0


# ufuncs that numpy's float scalars implement as operators, at a fraction of a
# ufunc call's cost and with the same IEEE result (a numpy scalar, as the ufunc gives)
_SCALAR_OPERATORS = {np.add: "+", np.subtract: "-", np.multiply: "*", np.true_divide: "/"}


def _default_lowering(em: Emitter, eqn, args: list[str]):
    """A single-result primitive whose impl is a numpy ufunc runs as that ufunc."""
    impl = eqn.primitive.impl
    if isinstance(impl, np.ufunc) and impl.nout == 1 and not eqn.params:
        return em.ufunc_call(eqn, impl, args)
    return None


def _constant_value(em: Emitter, eqn):
    """The value of an equation computable now without allocating: a broadcast
    of a literal or constant is a read-only view, shared by every run."""
    if CONSTANT_VIEW not in eqn.primitive.traits:
        return None
    a = em.program.resolve(eqn.invars[0])
    if type(a) is Literal:
        value = np.asarray(a.val, a.aval.dtype)
    elif a in em.program.constvars:
        value = em.ns.values[em.names[a]]
    else:
        return None
    out = _impl_of(eqn)(value, **eqn.params)
    if isinstance(out, np.ndarray) and out.flags.writeable:
        out = out.view()
        out.flags.writeable = False
    return out


def _numpy_source(program: Program, fn_name: str, portable: bool = False,
                  numpy_inputs: bool = False, bare: bool = False) -> tuple[str, dict]:
    em = Emitter(program, portable, numpy_inputs)
    jaxpr = program.closed.jaxpr
    params = []
    for i, v in enumerate(jaxpr.invars):
        em.names[v] = f"a{i}"
        params.append(f"a{i}")
    for v, c in zip(jaxpr.constvars, program.closed.consts):
        em.names[v] = em.ns.add("c", c, share=False)
    lines = [f"def {fn_name}({', '.join(params)}):"]
    counter = 0
    for i, eqn in program.eqns:
        em.index = i
        const = _constant_value(em, eqn)
        if const is not None:
            em.names[eqn.outvars[0]] = em.ns.add("c", const, share=False)
            continue
        args = [em.ref(a) for a in eqn.invars]
        rule = None if portable else eqn.primitive.lowering  # (lowerings are numpy's)
        if rule is not None:
            lowered = rule(em, eqn, args)
        elif not eqn.primitive.multiple_results:
            lowered = _default_lowering(em, eqn, args)
        else:
            lowered = None
        if lowered is None:
            f = em.ns.add("f", _impl_of(eqn))
            call_args = args + ([f"**{em.ns.add('p', dict(eqn.params), False)}"]
                                if eqn.params else [])
            expr, fresh = f"{f}({', '.join(call_args)})", False
        else:
            expr, fresh = lowered
        outs = []
        for v in eqn.outvars:
            counter += 1
            em.names[v] = f"v{counter}"
            em.produced.add(v)
            outs.append(f"v{counter}")
            if fresh:
                em.fresh.add(v)
        if eqn.primitive.multiple_results:
            lhs = ", ".join(outs) + ("," if len(outs) == 1 else "") if outs else "_"
        else:
            lhs = outs[0]
        lines.append(f"    {lhs} = {expr}")
        dead = program.dead_after(i, eqn, em.produced)
        for v in dead:
            pool = em.pool(v.aval, draw=False) if v in em.fresh else None
            if pool is not None:  # recycle it, unless a view or another name holds it
                rc = em.ns.add("f", sys.getrefcount)
                lines.append(f"    if {rc}({em.names[v]}) == {_SOLE} and len({pool}) < "
                             f"{pool}_depth: {pool}.append({em.names[v]})")
        if dead:
            lines.append(f"    del {', '.join(em.names[v] for v in dead)}")
    opening, closing = _lent_results(em)
    lines[1:1] = opening
    lines += closing
    outputs = ', '.join(_output(em, a) for a in program.outputs)
    lines.append(f"    return {outputs}" if bare else f"    return [{outputs}]")
    for pool, sites in em.pool_sites.items():
        # a pool never holds more buffers than one call can draw from it
        em.ns.values[f"{pool}_depth"] = sites
    return "\n".join(lines) + "\n", em.ns.values


def _lent_results(em: Emitter) -> tuple[list[str], list[str]]:
    """The lines that recycle the results a call returns (``lend``, ``reclaim``):
    those opening the function, which move earlier calls' results that their
    callers have let go into the pools, and those before its return, which lend
    this call's.

    A training loop's ``loss, grads = step(params)`` still holds the last call's
    results while the next runs, so two calls' results are remembered: the
    ones before them are free by then. Without this, each result large enough
    to be recycled is fresh memory on every call, paid for in page faults."""
    returned: dict[str, list[str]] = {}
    for a in dict.fromkeys(a for a in em.program.outputs if type(a) is Var):
        if a in em.fresh:
            pool = em.pool(a.aval, draw=False)
            if pool is not None:
                returned.setdefault(pool, []).append(em.names[a])
    opening, closing = [], []
    for pool, names in returned.items():
        lent = em.ns.add("l", [], share=False)
        opening.append(f"    {em.ns.add('f', reclaim)}({lent}, {pool}, {pool}_depth)")
        closing.append(f"    {em.ns.add('f', lend)}({lent}, ({', '.join(names)},), "
                       f"{2 * len(names)})")
    return opening, closing


def _output(em: Emitter, a) -> str:
    """An output; constants are copied, so no caller can change the program
    (or another caller's result) by writing into what it received."""
    a = em.program.resolve(a)
    if type(a) is Var and a not in em.produced and a not in em.program.closed.jaxpr.invars:
        value = em.ns.values[em.names[a]]
        if isinstance(value, np.ndarray):
            return f"{em.ns.add('f', np.array)}({em.names[a]})"
    return em.ref(a)


# ---------------------------------------------------------------------------


def _compile_unfused(closed: ClosedJaxpr) -> CompiledProgram:
    return compile_jaxpr(closed, "unfused", fuse=False)


def _exec(source: str, namespace: dict, fn_name: str, label: str) -> Callable:
    code = compile(source, f"<funcdiff {label}>", "exec")
    exec(code, namespace)  # the source holds generated identifiers only
    return namespace[fn_name]


def _portable_function(closed: ClosedJaxpr) -> Callable:
    """``closed`` compiled for arrays of other libraries: each equation calls its impl (or
    its ufunc), which goes to the arrays' own protocols; no lowerings (they are numpy's
    fast paths), no fusion, no recycled buffers or ``out=``, no writing into operands."""
    source, namespace = _numpy_source(Program(closed, None), "portable_program", portable=True)
    return _exec(source, namespace, "portable_program", "portable")


def compile_jaxpr(closed: ClosedJaxpr, name: str = "program", fuse: bool = True,
                  python_floats: bool = True, numpy_inputs: bool = False,
                  bare: bool = False) -> CompiledProgram:
    """Generate, compile and return the Python function that runs ``closed``.

    The function takes the jaxpr's inputs positionally and returns a list of
    its outputs. ``name`` only labels the code object (for tracebacks); it
    never enters the source. ``fuse`` runs along-axis indexing as numpy's
    advanced indexing (see ``fusion.py``). ``python_floats`` lets an all-scalar
    program run its Python-float version (``scalar.py``); without it, every
    equation is the numpy call that ``bind`` would make. ``numpy_inputs``
    promises that the function is only ever called with numpy arrays and
    scalars (never Python scalars), so that 0-d float arithmetic on its inputs
    runs as operators too. A ``bare`` program of one output returns that
    output itself, not a list of it (it is called directly, ``.fn``, never
    through ``CompiledProgram.__call__``, whose callers expect a list).
    """
    if any(backend_of(c) is not None for c in closed.consts):
        # a closed-over dask (cupy ...) array: the numpy source would compute it, so
        # the program is interpreted, each impl building on that library's arrays
        def interpreted(*args):
            return eval_jaxpr(closed.jaxpr, closed.consts, *args)
        return CompiledProgram(interpreted, f"# {name}: interpreted on its constants' "
                               "array library\n", closed)
    program = Program(closed, _compile_unfused if fuse else None)
    label = "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))[:60]
    if bare and len(program.outputs) != 1:
        raise ValueError(f"a bare program has one output, not {len(program.outputs)}")
    source, namespace = _numpy_source(program, "program", numpy_inputs=numpy_inputs, bare=bare)
    fn = _exec(source, namespace, "program", label)
    scalar = scalar_source(program, "scalar_program", fn) if python_floats else None
    scalar_text = None
    if scalar is not None:
        scalar_text, scalar_ns = scalar
        fn = _exec(scalar_text, scalar_ns, "scalar_program", label + " (scalar)")
    return CompiledProgram(fn, source, closed, scalar_text, program.fused_chains)
