"""The compiled evaluator: a program optimised and compiled once, then run as Python.

- ``compiled(jaxpr)``: the optimisation passes, then the code generator
  (``compile.py``), once per program, cached while the program lives.
- ``runner(jaxpr, name, runs)``: what an eager loop body runs: the compiled
  program when compiling pays for itself, else an interpreter of its impls.
- It runs the call primitive: ``interpreters.call`` defines ``call_p`` and
  how transforms act on it, below this layer; its impl, installed here, runs
  the compiled program.
- While ``fd.config``'s debug_nans or debug_infs is on, a body or called
  program is evaluated equation by equation instead, each checked (and named
  by its source line, which staging records while the checks are on): a NaN
  inside a scan, cond, while body or nested jit is reported at the operation
  that made it, not at the loop.
"""

from __future__ import annotations

import weakref
from typing import Any, Sequence

from funcdiff import core
from funcdiff.compiler.compile import CompiledProgram, compile_jaxpr, numpy_values
from funcdiff.interpreters.call import call_p
from funcdiff.ir import ClosedJaxpr, run_impls
from funcdiff.passes.pipeline import optimize

_compiled: "weakref.WeakKeyDictionary[ClosedJaxpr, CompiledProgram]" = weakref.WeakKeyDictionary()


def compiled(jaxpr: ClosedJaxpr, name: str = "program") -> CompiledProgram:
    """The compiled form of ``jaxpr``, optimised and compiled on first use.

    Cached while ``jaxpr`` lives (the compiled program never refers back to it,
    so a program is freed with the function that traced it).
    """
    prog = _compiled.get(jaxpr)
    if prog is None:
        optimized = optimize(jaxpr)
        if optimized is jaxpr:  # a new wrapper: the cache must not keep its own key alive
            optimized = ClosedJaxpr(jaxpr.jaxpr, jaxpr.consts, jaxpr.in_tree, jaxpr.out_tree)
        prog = _compiled[jaxpr] = compile_jaxpr(optimized, name)
    return prog


# Compiling a program costs about as much as evaluating a few hundred of its
# equations one by one: a program first seen with fewer evaluations ahead is
# interpreted (control flow called eagerly traces a new body on every call).
COMPILE_AFTER = 256
_seen: "weakref.WeakKeyDictionary[ClosedJaxpr, bool]" = weakref.WeakKeyDictionary()


def runner(jaxpr: ClosedJaxpr, name: str, runs: int, values: Sequence[Any] = ()):
    """A function evaluating ``jaxpr`` with numpy, to be called about ``runs``
    times now (a loop body's trip count): the compiled program when there is
    one, or when the runs times the equations reach ``COMPILE_AFTER``, or when
    ``jaxpr`` was seen before (a loop inside a jitted function runs the same
    body program on every call); else an interpreter of its equations' impls,
    which costs nothing up front. When the loop's ``values`` are all numpy's, the
    compiled program's function itself, without its per-call test for other
    libraries' arrays.

    >>> import numpy as np
    >>> from funcdiff.interpreters.staging import trace_to_jaxpr
    >>> from funcdiff.core import ShapedArray
    >>> jaxpr = trace_to_jaxpr(lambda x: [x * 2.0], [ShapedArray((), np.dtype("float64"))])
    >>> runner(jaxpr, "double", 1)(np.float64(3.0))
    [np.float64(6.0)]
    """
    if core.float_checks:
        return jaxpr
    prog = _compiled.get(jaxpr)
    if prog is None and (runs * len(jaxpr.jaxpr.eqns) >= COMPILE_AFTER or jaxpr in _seen):
        prog = compiled(jaxpr, name)
    if prog is not None:
        return prog.fn if numpy_values(values) else prog
    _seen[jaxpr] = True
    return lambda *args: run_impls(jaxpr, args)


def _call_impl(*args, jaxpr: ClosedJaxpr, name: str):
    if core.float_checks:
        return jaxpr(*args)
    return compiled(jaxpr, name)(*args)


call_p.impl = _call_impl
