"""Printing traced values when the program runs: the ``debug_print`` primitive.

A Python ``print`` inside a jitted function runs once, while tracing, and
shows tracers. ``fd.debug.print`` binds this primitive instead: it has no
results, so it stays in the program only because it is declared
``EFFECTFUL`` (dead-code elimination keeps it, common-subexpression
elimination never merges two, constant folding never runs it), and jit runs
it each time the compiled program runs, with the values of that call.

- Its operands are the array leaves of the values to format; the format
  string and the pytree structure of ``(args, kwargs)`` are params.
- It is nondifferentiable (it prints primal values only), and under vmap it
  prints the batched arrays.
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import Primitive, bind
from funcdiff.passes.traits import EFFECTFUL
from funcdiff.tree_util import PyTreeDef, tree_flatten, tree_unflatten

debug_print_p = Primitive("debug_print", multiple_results=True)


def _format_and_print(*leaves, fmt: str, tree: PyTreeDef):
    args, kwargs = tree_unflatten(tree, [np.asarray(v) for v in leaves])  # arrays, as traced
    print(fmt.format(*args, **kwargs), flush=True)
    return []


def _batch(vals, dims, *, fmt, tree):
    # print what vmap holds: each batched operand with its batch axis first
    vals = [v if d is None else np.moveaxis(v, d, 0) if isinstance(v, np.ndarray) else v
            for v, d in zip(vals, dims)]
    return bind(debug_print_p, *vals, fmt=fmt, tree=tree), []


debug_print_p.impl = _format_and_print
debug_print_p.abstract_eval = lambda *avals, fmt, tree: []
debug_print_p.nondifferentiable = True
debug_print_p.batch = _batch
debug_print_p.cost = lambda *avals, fmt, tree: {"flops": 0, "bytes": 0}
debug_print_p.traits |= {EFFECTFUL}


def debug_print(fmt: str, *args, **kwargs) -> None:
    """Bind ``debug_print``: print ``fmt.format(*args, **kwargs)`` when the program
    runs (``args`` and ``kwargs`` may be pytrees)."""
    leaves, tree = tree_flatten((args, kwargs))
    bind(debug_print_p, *leaves, fmt=fmt, tree=tree)


__all__ = ["debug_print_p", "debug_print"]
