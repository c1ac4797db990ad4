"""The numbers a picture shows: a program walked one equation at a time.

- ``walk(closed, args, mode, tangents, cotangents)`` runs the program's
  equations in order at concrete inputs, keeping every variable's value; in
  ``"jvp"`` mode each equation's forward-mode rule also gives its outputs'
  tangents; in ``"vjp"`` mode the equations are then walked backward, each
  pulling its outputs' adjoints back to its inputs (adjoints of a variable used
  twice add up), as reverse mode does.
- Each equation's *residuals* are the values its backward step reads: the
  arrays its linearization holds, found by linearizing the equation alone.
  A residual equal to one of the equation's inputs is kept from that input's
  producer; any other is made by the equation's own forward step.
- ``steps`` lists what a reader steps through: the equations forward, then,
  in vjp mode, the output seeds, the equations backward and the inputs' final
  adjoints, each with a sentence saying what happened.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcdiff import dtypes
from funcdiff.api import jvp, vjp
from funcdiff.core import bind, get_aval
from funcdiff.interpreters.linearize import linearize_flat
from funcdiff.ir import ClosedJaxpr, Eqn, Literal, var_names


class Residual:
    """A value equation ``eqn`` (an index) keeps for its backward step: made by the
    forward node ``src`` (a node id), ``nbytes`` big."""

    __slots__ = ("eqn", "src", "nbytes", "aval")

    def __init__(self, eqn: int, src: str, nbytes: int, aval: str):
        self.eqn, self.src, self.nbytes, self.aval = eqn, src, nbytes, aval


class Step:
    """One step of the walk: the node it lights (``node``, whose numbers it
    reveals) and a sentence saying what happened there."""

    __slots__ = ("node", "text")

    def __init__(self, node: str, text: str):
        self.node, self.text = node, text


class Walk:
    """The walked program: values, tangents and adjoints by variable id, residuals,
    and the steps in order."""

    def __init__(self, closed: ClosedJaxpr, mode: str):
        self.closed, self.mode = closed, mode
        self.names = var_names(closed.jaxpr)
        self.values: dict[int, Any] = {}
        self.tangents: dict[int, Any] = {}
        self.adjoints: dict[int, Any] = {}
        self.residuals: list[Residual] = []
        self.steps: list[Step] = []
        self.producer: dict[int, str] = {}  # variable id -> forward node id

    def name(self, atom: Any) -> str:
        return show(atom.val) if type(atom) is Literal else self.names[id(atom)]

    def read(self, atom: Any) -> Any:
        return atom.val if type(atom) is Literal else self.values[id(atom)]


def show(x: Any) -> str:
    """A short text of a value: ``0.7864`` for a scalar, ``[1, 2, 3]`` or
    ``f64[100] [0.1, 0.2, ...]`` for an array."""
    a = np.asarray(x)
    if a.ndim == 0:
        return _scalar(a[()])
    flat = a.ravel()
    head = ", ".join(_scalar(v) for v in flat[:3])
    if a.size <= 3:
        return f"[{head}]"
    return f"{get_aval(a).str_short()} [{head}, ...]"


def _scalar(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (complex, np.complexfloating)):
        return f"{v.real:.4g}{v.imag:+.4g}j"
    return f"{v:.4g}" if isinstance(v, (float, np.floating)) else str(v)


def _differentiable(eqn: Eqn, vals: Sequence[Any]) -> list[int]:
    return [i for i, (a, x) in enumerate(zip(eqn.invars, vals))
            if type(a) is not Literal and dtypes.is_inexact(np.result_type(x))]


def _local(eqn: Eqn, vals: Sequence[Any], diff: Sequence[int]):
    """The equation as a function of its differentiable operands (a list out)."""
    def fun(*xs):
        full = list(vals)
        for i, x in zip(diff, xs):
            full[i] = x
        out = bind(eqn.primitive, *full, **eqn.params)
        return list(out) if eqn.primitive.multiple_results else [out]
    return fun


def walk(closed: ClosedJaxpr, args: Sequence[Any], mode: str,
         tangents: Sequence[Any] | None = None,
         cotangents: Sequence[Any] | None = None) -> Walk:
    """Walk ``closed`` at the flat ``args`` (see the module docstring)."""
    w = Walk(closed, mode)
    j = closed.jaxpr
    for kind, vs, xs in (("c", j.constvars, closed.consts), ("in", j.invars, args)):
        for i, (v, x) in enumerate(zip(vs, xs)):
            w.values[id(v)] = x
            w.producer[id(v)] = f"{kind}{i}"
    if mode == "jvp":
        for v, t in zip(j.invars, tangents):
            w.tangents[id(v)] = t
    for k, eqn in enumerate(j.eqns):
        _forward(w, k, eqn)
    if mode == "vjp":
        _backward(w, cotangents)
    return w


def _forward(w: Walk, k: int, eqn: Eqn) -> None:
    vals = [w.read(a) for a in eqn.invars]
    diff = _differentiable(eqn, vals)
    outs = _local(eqn, vals, diff)(*[vals[i] for i in diff])
    text = (f"{', '.join(w.name(o) for o in eqn.outvars)} = {eqn.primitive.name}"
            f"({', '.join(w.name(a) for a in eqn.invars)}) = {', '.join(map(show, outs))}")
    if w.mode == "jvp":
        ts = [w.tangents.get(id(eqn.invars[i])) for i in diff]
        if diff and any(t is not None for t in ts):
            ts = [np.zeros_like(vals[i]) if t is None else t for i, t in zip(diff, ts)]
            _, touts = jvp(_local(eqn, vals, diff), [vals[i] for i in diff], ts)
            for o, t in zip(eqn.outvars, touts):
                w.tangents[id(o)] = t
            text += f"; tangent {', '.join(map(show, touts))}"
    for o, x in zip(eqn.outvars, outs):
        w.values[id(o)] = x
        w.producer[id(o)] = f"e{k}"
    w.steps.append(Step(f"e{k}", "forward: " + text))


def _backward(w: Walk, cotangents: Sequence[Any]) -> None:
    j = w.closed.jaxpr
    for i, (a, ct) in enumerate(zip(j.outvars, cotangents)):
        if type(a) is not Literal and ct is not None:
            _accumulate(w, a, ct)
            w.steps.append(Step(f"bout{i}", f"backward: seed the adjoint of {w.name(a)} "
                                            f"with {show(ct)}"))
    for k in range(len(j.eqns) - 1, -1, -1):
        eqn = j.eqns[k]
        cts = [w.adjoints.get(id(o)) for o in eqn.outvars]
        vals = [w.read(a) for a in eqn.invars]
        diff = _differentiable(eqn, vals)
        if all(c is None for c in cts) or not diff:
            continue
        outs = [w.values[id(o)] for o in eqn.outvars]
        cts = [np.zeros_like(o) if c is None else c for c, o in zip(cts, outs)]
        fun = _local(eqn, vals, diff)
        _, pullback = vjp(fun, *[vals[i] for i in diff])
        sent = pullback(cts)
        for i, ct in zip(diff, sent):
            _accumulate(w, eqn.invars[i], ct)
        _note_residuals(w, k, eqn, vals, diff, fun)
        parts = [f"{show(ct)} to {w.name(eqn.invars[i])}" for i, ct in zip(diff, sent)]
        w.steps.append(Step(f"be{k}", f"backward: {eqn.primitive.name} receives the adjoint "
                                      f"{', '.join(map(show, cts))} and sends {'; '.join(parts)}"))
    for i, v in enumerate(j.invars):
        if id(v) in w.adjoints:
            w.steps.append(Step(f"bin{i}", f"backward: the gradient with respect to "
                                           f"{w.name(v)} is {show(w.adjoints[id(v)])}"))


def _accumulate(w: Walk, atom: Any, ct: Any) -> None:
    if type(atom) is Literal:
        return
    old = w.adjoints.get(id(atom))
    w.adjoints[id(atom)] = ct if old is None else old + ct


def _note_residuals(w: Walk, k: int, eqn: Eqn, vals, diff, fun) -> None:
    _, lin = linearize_flat(fun, [vals[i] for i in diff])
    # residuals: the linear program's constants, and its scalar literals (staging inlines
    # 0-d values); Python numbers there are constants of a derivative rule, not values kept
    found = list(lin.jaxpr.consts) + [a.val for e in lin.jaxpr.eqns for a in e.invars
                                       if type(a) is Literal]
    seen = set()
    for r in found:
        if not isinstance(r, (np.ndarray, np.generic)) or id(r) in seen:
            continue
        seen.add(id(r))
        same = next((i for i, a in enumerate(eqn.invars)
                     if type(a) is not Literal and _same(r, vals[i])), None)
        src = w.producer[id(eqn.invars[same])] if same is not None else f"e{k}"
        w.residuals.append(Residual(k, src, int(np.asarray(r).nbytes),
                                    get_aval(r).str_short()))


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
