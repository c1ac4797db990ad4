"""Pictures of a program and its derivatives: ``fd.draw`` writes a self-contained
HTML page that steps through the forward pass and, in reverse mode, the backward
pass, one node at a time (``ClosedJaxpr.to_dot`` gives the program as Graphviz
DOT text).

- ``walk``: the numbers at each node (values, tangents, adjoints, residuals).
- ``layout``: where the nodes go (Graphviz when installed, else layered).
- ``page``: the SVG drawing, the step control and the HTML around them.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcdiff import dtypes
from funcdiff.api import make_jaxpr
from funcdiff.core import get_aval
from funcdiff.errors import FunctionalDiffError
from funcdiff.pictures.page import render
from funcdiff.pictures.walk import walk
from funcdiff.tree_util import tree_flatten

MODES = ("program", "jvp", "vjp")


def draw(f: Callable, *args: Any, mode: str = "program", path: str | None = None,
         tangents: Any = None, cotangents: Any = None, layout: str = "auto",
         title: str | None = None) -> str:
    """Draw ``f`` at ``args`` as an HTML page that steps through its evaluation.

    The page is one file with an inline SVG drawing and its own small script:
    it needs no network and no JavaScript from elsewhere. Each equation of the
    traced program is a node. ``"program"`` shows each node's value; ``"jvp"``
    also its tangent; ``"vjp"`` adds the backward graph beside the forward one,
    each node showing the adjoint it receives, the gradients at the inputs, and
    in red the residual edges from the forward node that made each value kept
    for the backward pass to the step that reads it, with its bytes. A step
    control walks the forward pass, then the backward pass, one node at a time.

    Args:
      f: a function of arrays (pytrees of arrays).
      *args: the arguments to evaluate it at.
      mode: ``"program"``, ``"jvp"`` or ``"vjp"``.
      path: where to write the page (also returned as text).
      tangents: jvp mode: tangents like ``args`` (default: ones for each float input).
      cotangents: vjp mode: cotangents like ``f``'s output (default: ones for each
        float output, so a scalar loss gets 1.0).
      layout: ``"auto"`` (Graphviz's ``dot`` when installed, else layered),
        ``"graphviz"`` or ``"layered"``.
      title: the page's heading (default: the function's name and the mode).

    Returns:
      The page's HTML text.

    Raises:
      FunctionalDiffError: an unknown mode or layout, tangents or cotangents that do
        not match, or a vjp of a function without a float output.

    >>> import funcdiff as fd, funcdiff.numpy as fnp
    >>> page = fd.draw(lambda a, b: fnp.sin(a * b), 1.0, 2.0, mode="vjp", layout="layered")
    >>> page.count('class="node eqn fwd"'), page.count('class="node eqn bwd"')
    (2, 2)
    """
    if mode not in MODES:
        raise FunctionalDiffError(f"fd.draw: mode={mode!r} is not a mode; use one of "
                                  f"{', '.join(map(repr, MODES))}.")
    closed = make_jaxpr(f)(*args)
    flat = [np.asarray(x) if not isinstance(x, np.ndarray) else x for x in tree_flatten(args)[0]]
    avals = [get_aval(x) for x in flat]
    flat_t = flat_ct = None
    if mode == "jvp":
        flat_t = _flat_like("tangents", tangents, flat, avals)
    if mode == "vjp":
        outs = closed.out_avals
        if not any(dtypes.is_inexact(a.dtype) for a in outs):
            raise FunctionalDiffError(
                "fd.draw(mode='vjp') needs a float output to pull back, but f returns "
                f"{', '.join(a.str_short() for a in outs)}; draw mode='program' instead.")
        flat_ct = _flat_like("cotangents", cotangents, [np.zeros(a.shape, a.dtype) for a in outs],
                             outs)
    w = walk(closed, flat, mode, flat_t, flat_ct)
    name = getattr(f, "__name__", "f")
    page = render(w, title=title or f"{'f' if name == '<lambda>' else name}: {mode}",
                  engine=layout)
    if path is not None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(page)
    return page


def _flat_like(what: str, given: Any, like: list, avals: list) -> list:
    """The flat ``tangents``/``cotangents``: ones for each float leaf by default."""
    if given is None:
        return [np.ones(a.shape, a.dtype) if dtypes.is_inexact(a.dtype) else None
                for a in avals]
    leaves = tree_flatten(given)[0]
    if len(leaves) != len(like) or any(np.shape(t) != a.shape for t, a in zip(leaves, avals)):
        raise FunctionalDiffError(
            f"fd.draw: {what} must match {'the arguments' if what == 'tangents' else 'the output'}"
            f" ({', '.join(a.str_short() for a in avals)}), but got "
            f"{', '.join(str(np.shape(t)) for t in leaves)} ({len(leaves)} leaves).")
    return [np.asarray(t, dtype=a.dtype) if dtypes.is_inexact(a.dtype) else None
            for t, a in zip(leaves, avals)]
