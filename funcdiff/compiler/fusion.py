"""Groups of equations the compiler runs as one numpy indexing operation.

funcdiff.numpy normalises integer indices in the program (negatives wrap
once: ``select(i < 0, i + n, i)``) and indexes along an axis of an N-d array
by gathering from the flattened array at positions built from strides
(``take_along_axis``); reverse mode scatter-adds back the same way. Replaying
that literally costs half a dozen numpy calls plus the checks of the gather
and scatter impls, where numpy's own advanced indexing does it in one:
``x[rows, i]`` wraps negative indices once and raises IndexError for any
index outside ``[-n, n)``, exactly when the normalised flat position would
leave the row. So, for a gather or scatter_add whose positions are

    p = select(i < 0, i + n, i) * stride + offsets      (offsets: a constant)

the compiler recognises the layout ``(shape, axis)`` for which ``p`` is
``ravel_multi_index`` of (ramps of the other axes, normalised ``i`` at ``axis``),
and runs ``x.reshape(shape)[ramps..., i, ramps...]`` (or ``numpy.add.at`` into a
copy) instead. Without ``offsets`` and ``stride`` it is ``numpy.take`` along the
gathered axis, written ``x[:, ..., i]``. When numpy raises IndexError the
original equations run instead (compiled without fusion), so results and
errors are those of the unfused program in every case.

The primitives met here are recognised by roles their cards fill: those
defined below (``roles.GATHER.fill(gather_p)``) and the passes' ``roles.ADD``, ``roles.MUL`` and
``roles.RESHAPE``; this layer never imports the cards. The
fused equation stands in the equation list the code generator walks; it has
an ``Eqn``'s attributes, and its ``primitive`` what the generators read of a
primitive (``name``, ``impl``, ``multiple_results``, ``traits``, ``lowering``
and ``scalar_lowering``). Equations only it used are dropped.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from funcdiff import roles
from funcdiff.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from funcdiff.roles import Role

_MAX_OFFSETS = 1 << 16  # offset constants up to this size are checked against a layout


class FusedKind:
    """The stand-in primitive of a fused group: ``impl`` runs the group (and names it)."""

    __slots__ = ("impl",)
    multiple_results = False
    traits: frozenset = frozenset()
    scalar_lowering = None  # (no all-scalar program indexes)

    def __init__(self, impl: Callable):
        self.impl = impl

    @property
    def name(self) -> str:
        return self.impl.__name__

    @staticmethod
    def lowering(em, eqn, args):
        """One call of the group's function; its result is fresh unless a view."""
        return f"{em.ns.add('f', eqn.primitive.impl)}({', '.join(args)})", not eqn.reshaped

    def __repr__(self) -> str:
        return self.name


class FusedEqn:
    """A group of equations lowered as one call; read like an ``Eqn``."""

    __slots__ = ("primitive", "invars", "params", "outvars", "reshaped")

    def __init__(self, primitive: FusedKind, invars: list, outvars: list[Var], reshaped: bool):
        self.primitive = primitive
        self.invars = invars
        self.params: dict = {}
        self.outvars = outvars
        self.reshaped = reshaped  # whether the result is a view (reshape) of a new array


def _guarded(fast: Callable, fallback: Callable, name: str) -> Callable:
    """``fast``, or the unfused program where numpy's indexing raises IndexError."""
    def run(*args):
        try:
            return fast(*args)
        except IndexError:
            return fallback(*args)[0]
    run.__name__ = run.__qualname__ = name
    return run


class _Graph:
    """Definitions and uses of the variables of an equation list."""

    def __init__(self, eqns: list, consts: dict, outputs: list, resolve: Callable):
        self.eqns = eqns
        self.consts = consts
        self.resolve = resolve
        self.producer: dict[Var, Any] = {}
        self.users: dict[Var, list] = {}
        for eqn in eqns:
            for v in eqn.outvars:
                self.producer[v] = eqn
            for a in eqn.invars:
                a = resolve(a)
                if type(a) is Var:
                    self.users.setdefault(a, []).append(eqn)
        self.outputs = {resolve(a) for a in outputs if type(resolve(a)) is Var}

    def defining(self, a, role: Role) -> Eqn | None:
        """The equation of ``role``'s primitive that produces ``a``, if that is how."""
        a = self.resolve(a)
        eqn = self.producer.get(a) if type(a) is Var else None
        return eqn if eqn is not None and eqn.primitive is role.primitive else None

    def int_literal(self, a) -> int | None:
        a = self.resolve(a)
        if type(a) is Literal and a.aval.dtype.kind in "iu":
            return int(a.val)
        return None

    def constant(self, a):
        a = self.resolve(a)
        value = self.consts.get(a) if type(a) is Var else None
        if isinstance(value, np.ndarray) and value.dtype.kind in "iu":
            return value
        return None


def _normalized(g: _Graph, a) -> tuple[Any, int] | None:
    """``(i, n)`` when atom ``a`` is ``select(i < 0, i + n, i)``."""
    sel = g.defining(a, roles.SELECT)
    if sel is None:
        return None
    pred, wrapped, i = (g.resolve(x) for x in sel.invars)
    lt, add = g.defining(pred, roles.LESS_THAN), g.defining(wrapped, roles.ADD)
    if lt is None or add is None or type(i) is not Var or i.aval.dtype.kind != "i":
        return None  # (signed: numpy would read huge unsigned values as negative)
    if g.resolve(lt.invars[0]) is not i or g.int_literal(lt.invars[1]) != 0:
        return None
    x, y = (g.resolve(v) for v in add.invars)
    n = g.int_literal(y) if x is i else g.int_literal(x) if y is i else None
    if n is None or n <= 0 or i.aval.shape != sel.outvars[0].aval.shape:
        return None
    return i, n


def _positions(g: _Graph, a) -> tuple[Any, int, int, np.ndarray | None] | None:
    """``(i, n, stride, offsets)`` when atom ``a`` is ``normalized(i) * stride + offsets``
    (stride 1 and offsets None when absent)."""
    offsets = None
    add = g.defining(a, roles.ADD)
    if add is not None:
        for x, c in (add.invars, add.invars[::-1]):
            if g.constant(c) is not None:
                offsets, a = g.constant(c), x
                break
        else:
            return None
    stride = 1
    mul = g.defining(a, roles.MUL)
    if mul is not None:
        x, y = mul.invars
        stride, a = ((g.int_literal(y), x) if g.int_literal(y) is not None
                     else (g.int_literal(x), y))
        if stride is None or stride <= 0:
            return None
    found = _normalized(g, a)
    if found is None:
        return None
    return found[0], found[1], stride, offsets


def _layout(shape: tuple, n: int, stride: int, offsets, size: int, i_shape: tuple):
    """``(array shape, axis, ramps)`` for which positions ``normalized(i) * stride +
    offsets`` of shape ``shape`` index the flattened array of ``size`` elements as
    ``ramps[:axis] + (i,) + ramps[axis + 1:]`` index the unflattened one; or None."""
    if offsets is not None and offsets.size > _MAX_OFFSETS:
        return None
    for axis in range(len(shape)):
        layout = shape[:axis] + (n,) + shape[axis + 1:]
        if math.prod(layout) != size or math.prod(layout[axis + 1:]) != stride:
            continue
        ramps, expected = [], np.zeros((1,) * len(shape), np.int64)
        for k, s in enumerate(layout):
            ramp = np.arange(s).reshape((1,) * k + (s,) + (1,) * (len(shape) - k - 1))
            ramps.append(ramp)
            if k != axis:
                expected = expected + ramp * math.prod(layout[k + 1:])
        expected = np.broadcast_to(expected, shape)
        actual = 0 if offsets is None else np.broadcast_to(offsets, shape)
        shapes = [r.shape for k, r in enumerate(ramps) if k != axis] + [i_shape]
        if np.broadcast_shapes(*shapes) == shape and np.array_equal(actual, expected):
            ramps[axis] = None
            return layout, axis, ramps
    return None


def _backward_slice(g: _Graph, target, inputs: list) -> tuple[list, list]:
    """The equations computing ``target`` from ``inputs`` (in program order) and
    the constant variables they read."""
    stop = {g.resolve(a) for a in inputs if type(g.resolve(a)) is Var}
    needed: set = set()
    todo = [target]
    while todo:
        eqn = todo.pop()
        if id(eqn) in needed:
            continue
        needed.add(id(eqn))
        for a in eqn.invars:
            a = g.resolve(a)
            if type(a) is Var and a not in stop and a in g.producer:
                todo.append(g.producer[a])
    eqns = [e for e in g.eqns if id(e) in needed]
    constvars = list(dict.fromkeys(
        g.resolve(a) for e in eqns for a in e.invars
        if type(g.resolve(a)) is Var and g.resolve(a) in g.consts and g.resolve(a) not in stop))
    return eqns, constvars


def _fallback(g: _Graph, eqns: list, constvars: list, inputs: list, out: Var,
              compile_fn: Callable) -> Callable:
    resolved = [g.resolve(a) for a in inputs]
    body = [Eqn(e.primitive, [g.resolve(a) for a in e.invars], e.params, e.outvars)
            for e in eqns]
    jaxpr = Jaxpr(constvars, resolved, body, [out])
    return compile_fn(ClosedJaxpr(jaxpr, [g.consts[v] for v in constvars]))


def _index_key(ramps: list, axis: int) -> Callable:
    before, after = tuple(ramps[:axis]), tuple(ramps[axis + 1:])
    return lambda i: before + (i,) + after


def _fuse_gather(g: _Graph, eqn: Eqn, compile_fn: Callable):
    x, p = (g.resolve(a) for a in eqn.invars)
    found = _positions(g, p)
    if found is None or type(x) is not Var:
        return None
    i, n, stride, offsets = found
    axis = eqn.params["axis"]
    name = "fused_take_along_axis"
    if offsets is None and stride == 1:  # numpy.take along ``axis``
        if x.aval.shape[axis] != n:
            return None
        key = _index_key([slice(None)] * x.aval.ndim, axis)
        fast, inputs, name = (lambda x, i: x[key(i)]), [x, i], "fused_take"
    else:
        if x.aval.ndim != 1 or axis != 0:
            return None
        found = _layout(p.aval.shape, n, stride, offsets, x.aval.shape[0], i.aval.shape)
        if found is None:
            return None
        shape, k, ramps = found
        key = _index_key(ramps, k)
        flat = g.defining(x, roles.RESHAPE)
        if flat is not None and g.resolve(flat.invars[0]).aval.shape == shape:
            fast, inputs = (lambda x, i: x[key(i)]), [g.resolve(flat.invars[0]), i]
        else:
            fast, inputs = (lambda x, i: x.reshape(shape)[key(i)]), [x, i]
    return _make(g, eqn, eqn.outvars[0], inputs, fast, name, False, compile_fn)


def _fuse_scatter_add(g: _Graph, eqn: Eqn, compile_fn: Callable):
    operand, p, updates = (g.resolve(a) for a in eqn.invars)
    found = _positions(g, p)
    if found is None:
        return None
    i, n, stride, offsets = found
    axis = eqn.params["axis"]
    out = eqn.outvars[0]
    add_at = np.add.at
    name = "fused_scatter_add_along_axis"
    if offsets is None and stride == 1:
        if operand.aval.shape[axis] != n:
            return None
        key = _index_key([slice(None)] * operand.aval.ndim, axis)
        shape, reshaped, name = operand.aval.shape, False, "fused_scatter_add"
    else:
        if operand.aval.ndim != 1 or axis != 0:
            return None
        found = _layout(p.aval.shape, n, stride, offsets, operand.aval.shape[0], i.aval.shape)
        if found is None:
            return None
        shape, k, ramps = found
        key = _index_key(ramps, k)
        users = g.users.get(out, [])
        reshaped = True
        if (out not in g.outputs and len(users) == 1 and users[0].primitive is roles.RESHAPE.primitive
                and users[0].outvars[0].aval.shape == shape):
            out, reshaped = users[0].outvars[0], False  # the array itself, not a flat view
    zero = g.consts.get(operand) if type(operand) is Var else None
    if (isinstance(zero, np.ndarray) and zero.size <= _MAX_OFFSETS and not zero.any()
            and not np.signbit(zero).any()):
        dtype, zeros = operand.aval.dtype, np.zeros

        def fast(i, u):  # positive zeros, then numpy.add.at as the impl does it
            result = zeros(shape, dtype)
            add_at(result, key(i), u)
            return result.reshape(-1) if reshaped else result
        inputs = [i, updates]
    else:
        def fast(o, i, u):
            result = o.reshape(shape).copy()
            add_at(result, key(i), u)
            return result.reshape(-1) if reshaped else result
        inputs = [operand, i, updates]
    target = g.producer[out]
    return _make(g, target, out, inputs, fast, name, reshaped, compile_fn)


def _make(g: _Graph, target, out: Var, inputs: list, fast: Callable, name: str,
          reshaped: bool, compile_fn: Callable) -> tuple[FusedEqn, list]:
    eqns, constvars = _backward_slice(g, target, inputs)
    fallback = _fallback(g, eqns, constvars, inputs, out, compile_fn)
    fused = FusedEqn(FusedKind(_guarded(fast, fallback.fn, name)), inputs, [out],
                     reshaped)
    return fused, eqns


def fuse_indexing(eqns: list, consts: dict, outputs: list, resolve: Callable,
                  compile_fn: Callable[[ClosedJaxpr], Any]) -> list:
    """``eqns`` with along-axis gathers and scatter-adds fused (see the module
    docstring), minus the equations only the fused groups used.

    ``consts`` maps constant variables to values, ``resolve`` maps an atom to the
    atom it stands for (aliases), and ``compile_fn`` compiles the unfused fallback.
    """
    fusions = {roles.GATHER.primitive: _fuse_gather, roles.SCATTER_ADD.primitive: _fuse_scatter_add}
    if not any(e.primitive in fusions for e in eqns):
        return eqns
    g = _Graph(eqns, consts, outputs, resolve)
    replaced: dict[int, FusedEqn] = {}
    subsumed: set[int] = set()
    for eqn in eqns:
        rule = fusions.get(eqn.primitive)
        if rule is None or id(eqn) in subsumed:
            continue
        made = rule(g, eqn, compile_fn)
        if made is not None:
            fused, group = made
            replaced[id(g.producer[fused.outvars[0]])] = fused
            subsumed.update(id(e) for e in group)
    if not replaced:
        return eqns
    result = [replaced.get(id(e), e) for e in eqns]
    # drop what only the fused groups read (never other equations: they may raise)
    live = set(g.outputs)
    kept = []
    for eqn in reversed(result):
        if id(eqn) in subsumed and not any(v in live for v in eqn.outvars):
            continue
        kept.append(eqn)
        live.update(resolve(a) for a in eqn.invars if type(resolve(a)) is Var)
    kept.reverse()
    return kept
