"""What ``Jitted.lower`` returns: the programs jit runs for one signature.

``Lowered`` holds the traced jaxpr, the jaxpr after the optimisation passes
and the Python source compiled from it (plus its Python-float version for
programs of 0-d floats), prints them, and gives the program's cost.
``Lowered.compile()`` gives the ``Compiled`` function of that one signature,
as ``jax.jit(f).lower(x).compile()`` does.
"""

from __future__ import annotations

from typing import Any, Callable

from funcdiff.core import get_aval
from funcdiff.errors import InvalidArgumentError
from funcdiff.interpreters.cost import program_cost
from funcdiff.ir import ClosedJaxpr
from funcdiff.tree_util import tree_leaves


def _signature(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


class Lowered:
    """What jit runs for one signature: the traced jaxpr, the optimised jaxpr and
    the generated Python source (plus its Python-float version, if any)."""

    def __init__(self, jaxpr: ClosedJaxpr, optimized: ClosedJaxpr, source: str,
                 scalar_source: str | None = None, run: Callable | None = None,
                 name: str = "f", fused_chains: list[str] | None = None):
        self.jaxpr = jaxpr
        self.optimized_jaxpr = optimized
        self.source = source
        self.scalar_source = scalar_source
        self.run = run  # the jitted function, which runs this program for this signature
        self.name = name
        # the chains of elementwise arithmetic run as one numexpr expression each
        self.fused_chains = list(fused_chains or [])

    def compile(self) -> "Compiled":
        """The compiled function of this signature (it refuses other shapes and dtypes)."""
        if self.run is None:
            raise InvalidArgumentError("this Lowered program has no function to run it")
        return Compiled(self)

    def __repr__(self) -> str:
        return (f"Lowered(jit({self.name}) at {_signature(self.jaxpr.in_avals)} -> "
                f"{_signature(self.jaxpr.out_avals)}, "
                f"{len(self.optimized_jaxpr.jaxpr.eqns)} equations after optimisation)")

    def cost(self) -> dict:
        """Flops and bytes of the optimised program, from the primitives' cost rules."""
        return program_cost(self.optimized_jaxpr)

    def as_text(self) -> str:
        text = f"{self.optimized_jaxpr}\n\n{self.source}"
        if self.fused_chains:
            text += "".join(f"# fused (numexpr): {chain}\n" for chain in self.fused_chains)
        return text + (f"\n{self.scalar_source}" if self.scalar_source else "")

    def __str__(self) -> str:
        return self.as_text()


class Compiled:
    """A jitted function fixed to one signature (``jit(f).lower(x).compile()``)."""

    def __init__(self, lowered: Lowered):
        self.lowered = lowered
        self.in_avals = list(lowered.jaxpr.in_avals)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        avals = [get_aval(x) for x in tree_leaves((args, kwargs)) if hasattr(x, "shape")
                 or type(x) in (bool, int, float, complex)]
        if len(avals) == len(self.in_avals) and any(
                a.shape != b.shape or a.dtype != b.dtype for a, b in zip(avals, self.in_avals)):
            raise InvalidArgumentError(
                f"{self!r} was compiled for arguments {_signature(self.in_avals)}, but got "
                f"{_signature(avals)}. Call the jitted function itself for other shapes, or "
                "lower and compile again.")
        return self.lowered.run(*args, **kwargs)

    def cost(self) -> dict:
        """Flops and bytes of the compiled program."""
        return self.lowered.cost()

    def as_text(self) -> str:
        return self.lowered.as_text()

    def __repr__(self) -> str:
        low = self.lowered
        return (f"Compiled(jit({low.name}) for {_signature(low.jaxpr.in_avals)} -> "
                f"{_signature(low.jaxpr.out_avals)})")
