"""What both code generators of ``compile.py`` share: the analysis of a
program (aliases through primitives that run as the identity, such as
stop_gradient, the fused equation list, each variable's last use, what to
delete after each equation) and the namespace of a generated function, which
holds everything the source refers to under generated names only.
"""

from __future__ import annotations

from typing import Any, Callable

from funcdiff.compiler.elementwise_fusion import fuse_elementwise
from funcdiff.compiler.fusion import fuse_indexing
from funcdiff.configuration import config
from funcdiff.core import Trait
from funcdiff.ir import ClosedJaxpr, Var

RUNS_AS_IDENTITY = Trait(
    "runs_as_identity", "evaluates to its one operand unchanged (what it means lies in its "
    "other rules, as stop_gradient's): compiled programs let the result stand for the "
    "operand and emit nothing")


class Namespace:
    """The globals of a generated function, under generated names only."""

    def __init__(self):
        self.values: dict[str, Any] = {}
        self._by_id: dict[int, str] = {}

    def add(self, prefix: str, value: Any, share: bool = True) -> str:
        if share and id(value) in self._by_id:
            return self._by_id[id(value)]
        name = f"_{prefix}{len(self.values)}"
        self.values[name] = value
        if share:
            self._by_id[id(value)] = name
        return name


class Program:
    """Aliases (``RUNS_AS_IDENTITY``), names and last uses of a jaxpr's variables."""

    def __init__(self, closed: ClosedJaxpr, compile_unfused: Callable | None = None):
        """``compile_unfused`` (the compiler without fusion, which a fused group
        falls back to) turns on the fusion of along-axis indexing, and of chains of
        elementwise arithmetic when numexpr is there (``fused_chains`` lists them)."""
        self.closed = closed
        jaxpr = closed.jaxpr
        self.alias: dict[Var, Any] = {}
        for eqn in jaxpr.eqns:
            if RUNS_AS_IDENTITY in eqn.primitive.traits and len(eqn.invars) == 1:
                self.alias[eqn.outvars[0]] = self.resolve(eqn.invars[0])
        eqns = [e for e in jaxpr.eqns if not (len(e.outvars) == 1 and e.outvars[0] in self.alias)]
        if compile_unfused is not None:
            eqns = fuse_indexing(eqns, dict(zip(jaxpr.constvars, closed.consts)), jaxpr.outvars,
                                 self.resolve, compile_unfused)
        self.fused_chains: list[str] = []
        if compile_unfused is not None and config.jit_numexpr:
            eqns, self.fused_chains = fuse_elementwise(eqns, jaxpr.outvars, self.resolve)
        self.eqns = list(enumerate(eqns))
        self.last_use: dict[Var, int] = {}
        for i, eqn in self.eqns:
            for a in eqn.invars:
                a = self.resolve(a)
                if type(a) is Var:
                    self.last_use[a] = i
        self.outputs = [self.resolve(a) for a in jaxpr.outvars]
        self.output_set = {a for a in self.outputs if type(a) is Var}
        self.constvars = set(jaxpr.constvars)

    def resolve(self, a):
        while type(a) is Var and a in self.alias:
            a = self.alias[a]
        return a

    def dead_after(self, i: int, eqn, produced: set) -> list[Var]:
        """Variables of this program to delete after equation ``i``."""
        dead = []
        for a in dict.fromkeys(self.resolve(a) for a in eqn.invars):
            if type(a) is Var and a in produced and self.last_use.get(a) == i \
                    and a not in self.output_set:
                dead.append(a)
        for v in eqn.outvars:  # results nobody uses
            if v in produced and v not in self.last_use and v not in self.output_set:
                dead.append(v)
        return dead
