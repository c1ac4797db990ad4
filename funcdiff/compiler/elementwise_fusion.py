"""Chains of elementwise arithmetic the compiler runs as one numexpr expression.

numpy makes one pass over memory, and one temporary, per operation: in a
backward pass ``ct * (1 - y * y)`` reads and writes three arrays' worth of
memory more than it must. When ``numexpr`` is installed (``pip install
funcdiff[fast]``) and ``fd.config.jit_numexpr`` is on (the default), jit turns
each tree of such operations into one compiled numexpr expression, which
evaluates it block by block in cache, on every core.

What is fused: equations whose impl is one of numpy's arithmetic ufuncs
(``_EXPRESSIONS``: add, subtract, multiply, true_divide, negative), with no
params, a float32 or float64 result and operands of that same dtype. An
operand produced by another such equation is inlined when it has the result's
shape and nothing else reads it (it is used once and is no output of the
program); the tree then runs where its root stood, so an intermediate such as
the ``1 - y * y`` a forward pass keeps for the backward pass is never
materialised. Trees of at least two equations whose result holds at least
``MIN_ELEMENTS`` elements are fused (below that numexpr's fixed cost exceeds
what it saves). Transcendental functions (tanh, exp, log) are not: numpy's
vectorised kernels run them faster than numexpr's. The arithmetic is the same
IEEE operations in the same order, so results equal numpy's bit for bit,
float32 stays float32, and NaN and inf propagate as in numpy.

Recognised by the ufunc objects the cards' impls are, never by primitive
names. ``Lowered.fused_chains()`` lists what was fused.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

import numpy as np

from funcdiff.compiler.fusion import FusedEqn
from funcdiff.compiler.lowerings import take_buffer
from funcdiff.ir import Var

MIN_ELEMENTS = 1 << 15

_EXPRESSIONS = {np.add: "({} + {})", np.subtract: "({} - {})", np.multiply: "({} * {})",
                np.true_divide: "({} / {})", np.negative: "(-{})"}
_KINDS = {np.dtype(np.float64): np.float64, np.dtype(np.float32): float}  # numexpr's names

_module: list = []  # [numexpr or None], imported at the first compile that could use it


def numexpr_module():
    """The numexpr module, or None when it is not installed."""
    if not _module:
        try:
            _module.append(importlib.import_module("numexpr"))
        except ImportError:
            _module.append(None)
    return _module[0]


class ExpressionKind:
    """The stand-in primitive of a fused tree: ``impl`` evaluates its expression."""

    __slots__ = ("impl", "expression")
    multiple_results = False
    traits: frozenset = frozenset()
    scalar_lowering = None

    def __init__(self, impl: Callable, expression: str):
        self.impl = impl
        self.expression = expression

    @property
    def name(self) -> str:
        return "numexpr"

    @staticmethod
    def lowering(em, eqn, args):
        """One call of the compiled expression, writing into a recycled buffer when one is free."""
        f = em.ns.add("f", eqn.primitive.impl)
        pool = em.pool(eqn.outvars[0].aval)
        out = f"{em.ns.add('f', take_buffer)}({pool})" if pool is not None else "None"
        return f"{f}({', '.join(args)}, out={out}, ex_uses_vml=False)", True

    def __repr__(self) -> str:
        return f"numexpr[{self.expression}]"


def _fusible(eqn, resolve) -> bool:
    if len(eqn.outvars) != 1 or eqn.params:
        return False
    ufunc = ufunc_of(eqn.primitive)
    if ufunc not in _EXPRESSIONS:
        return False
    dtype = eqn.outvars[0].aval.dtype
    kinds = getattr(eqn.primitive.lowering, "kinds", None)
    return (dtype in _KINDS and (kinds is None or dtype.kind in kinds)
            and all(resolve(a).aval.dtype == dtype for a in eqn.invars))


def ufunc_of(primitive) -> np.ufunc | None:
    """The numpy ufunc an elementwise primitive computes: its impl, or the ufunc its
    lowering rule (``lowerings.lower_ufunc``) runs for an impl that is a Python operator."""
    impl = primitive.impl
    if isinstance(impl, np.ufunc):
        return impl
    return getattr(primitive.lowering, "ufunc", None)


def fuse_elementwise(eqns: list, outputs: list, resolve: Callable) -> tuple[list, list[str]]:
    """``eqns`` with trees of elementwise arithmetic fused (see the module docstring),
    and the expressions of the fused trees (empty without numexpr)."""
    ne = numexpr_module()
    if ne is None:
        return eqns, []
    fusible = {id(e) for e in eqns if _fusible(e, resolve)}
    if len(fusible) < 2:
        return eqns, []
    uses: dict[Var, int] = {}
    producer: dict[Var, Any] = {}
    for eqn in eqns:
        for a in eqn.invars:
            a = resolve(a)
            if type(a) is Var:
                uses[a] = uses.get(a, 0) + 1
        for v in eqn.outvars:
            producer[v] = eqn
    output_set = {resolve(a) for a in outputs if type(resolve(a)) is Var}

    def inlined(a, shape) -> bool:
        """Whether operand ``a`` of a fusible equation of result shape ``shape`` joins its tree."""
        p = producer.get(a) if type(a) is Var else None
        return (p is not None and id(p) in fusible and uses.get(a) == 1
                and a not in output_set and a.aval.shape == shape)

    inner = set()  # ids of equations inlined into a consumer's tree
    for eqn in eqns:
        if id(eqn) in fusible:
            shape = eqn.outvars[0].aval.shape
            for a in eqn.invars:
                a = resolve(a)
                if inlined(a, shape):
                    inner.add(id(producer[a]))
    replaced: dict[int, FusedEqn] = {}
    subsumed: set[int] = set()
    chains: list[str] = []
    for eqn in eqns:
        if id(eqn) not in fusible or id(eqn) in inner:
            continue
        aval = eqn.outvars[0].aval
        leaves: list = []
        members: list = []

        def spell(e) -> tuple[str, str]:
            """The expression of the tree rooted at ``e``, and how it reads (literals in)."""
            members.append(e)
            parts, shown = [], []
            for a in e.invars:
                a = resolve(a)
                if inlined(a, aval.shape):
                    part, text = spell(producer[a])
                    parts.append(part)
                    shown.append(text)
                    continue
                if not any(a is leaf for leaf in leaves):
                    leaves.append(a)
                name = f"i{next(k for k, leaf in enumerate(leaves) if leaf is a)}"
                parts.append(name)
                shown.append(name if type(a) is Var else repr(np.asarray(a.val).item()))
            template = _EXPRESSIONS[ufunc_of(e.primitive)]
            return template.format(*parts), template.format(*shown)

        expression, shown = spell(eqn)
        if len(members) < 2 or int(np.prod(aval.shape)) < MIN_ELEMENTS:
            continue
        signature = [(f"i{k}", _KINDS[aval.dtype]) for k in range(len(leaves))]
        compiled = ne.NumExpr(expression, signature)
        replaced[id(eqn)] = FusedEqn(ExpressionKind(compiled, expression), leaves,
                                     list(eqn.outvars), False)
        subsumed.update(id(e) for e in members if e is not eqn)
        inputs = ", ".join(f"i{k}: {leaf.aval.str_short()}" for k, leaf in enumerate(leaves)
                           if type(leaf) is Var)
        chains.append(f"{aval.str_short()} = {shown}" + (f" of {inputs}" if inputs else ""))
    if not replaced:
        return eqns, []
    return [replaced.get(id(e), e) for e in eqns if id(e) not in subsumed], chains
