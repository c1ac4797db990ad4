"""What ``Jitted.lower`` returns: the programs jit runs for one signature.

``Lowered`` holds the traced jaxpr, the jaxpr after the optimisation passes
and the Python source compiled from it (plus its Python-float version for
programs of 0-d floats), prints them, and gives the program's cost.
"""

from __future__ import annotations

from funcdiff.interpreters.cost import program_cost
from funcdiff.ir import ClosedJaxpr


class Lowered:
    """What jit runs for one signature: the traced jaxpr, the optimised jaxpr and
    the generated Python source (plus its Python-float version, if any)."""

    def __init__(self, jaxpr: ClosedJaxpr, optimized: ClosedJaxpr, source: str,
                 scalar_source: str | None = None):
        self.jaxpr = jaxpr
        self.optimized_jaxpr = optimized
        self.source = source
        self.scalar_source = scalar_source

    def cost(self) -> dict:
        """Flops and bytes of the optimised program, from the primitives' cost rules."""
        return program_cost(self.optimized_jaxpr)

    def as_text(self) -> str:
        text = f"{self.optimized_jaxpr}\n\n{self.source}"
        return text + (f"\n{self.scalar_source}" if self.scalar_source else "")

    def __str__(self) -> str:
        return self.as_text()
