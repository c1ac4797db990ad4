"""The primitives the layers below the cards must emit or recognise by themselves.

- A *role* names one primitive by what it computes. Interpreters, passes and the
  compiler reach it as ``roles.MUL.primitive`` (to bind it, to build an equation
  of it, to recognise an equation's primitive) and never import the primitives
  layer, which sits above them.
- The card of the primitive that plays a role fills it once, beside its other
  facts: ``roles.MUL.fill(mul_p)``. A role filled twice, or read before its card
  was imported, raises an error naming it.
- Each primitive plays at most one role, so every layer that needs "the product"
  reads the same one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funcdiff.errors import FunctionalDiffError

if TYPE_CHECKING:
    from funcdiff.core import Primitive


class Role:
    """One primitive a layer below the cards needs by itself; its card fills it."""

    __slots__ = ("name", "doc", "_primitive")

    def __init__(self, name: str, doc: str):
        self.name = name
        self.doc = doc
        self._primitive: Primitive | None = None

    def fill(self, primitive: Primitive) -> None:
        if self._primitive is not None and self._primitive is not primitive:
            raise FunctionalDiffError(f"the role {self.name!r} is played by "
                                      f"{self._primitive.name} already; {primitive.name} "
                                      "cannot take it too")
        self._primitive = primitive

    @property
    def primitive(self) -> Primitive:
        if self._primitive is None:
            raise FunctionalDiffError(f"no primitive plays the role {self.name!r}: its card "
                                      "must call fill (is funcdiff.primitives imported?)")
        return self._primitive

    def __repr__(self) -> str:
        return f"Role({self.name})"


# --- moving and reshaping ------------------------------------------------------------
BROADCAST = Role("broadcast", "broadcast_in_dim(x, shape=, broadcast_dimensions=): zeros "
                 "materialised as a broadcast 0-d zero, a batch axis added, a pass's fill")
RESHAPE = Role("change of shape", "reshape(x, new_sizes=): x's elements in a new shape")
TRANSPOSE = Role("axis permutation", "transpose(x, permutation=): moves axes (a batch axis, "
                 "the transpose of a product)")
SLICE = Role("static slice", "slice(x, start_indices=, limit_indices=, strides=): x[start:limit]")
PAD = Role("padding", "pad(x, padding_value, padding_config=): x with rows added around it")
# --- arithmetic -----------------------------------------------------------------------
ADD = Role("sum", "x + y elementwise with numpy broadcasting (a value used twice receives the "
           "sum of its cotangents; a jvp adds its terms)")
SUB = Role("difference", "x - y elementwise with numpy broadcasting")
MUL = Role("product", "x * y elementwise with numpy broadcasting (a tangent scaled by a "
           "derivative, a cotangent by a factor, a basis by a value)")
SAFE_MUL = Role("safe product", "x * y elementwise in which 0 times anything is 0: scales the "
                "tangent of a primitive whose derivative can be infinite")
DIV = Role("quotient", "x / y elementwise with numpy broadcasting")
NEG = Role("negation", "-x elementwise")
EXP = Role("exponential", "exp(x) elementwise")
EQ = Role("equality", "x == y elementwise, a bool array")
LESS_THAN = Role("less-than", "x < y elementwise, a bool array")
SELECT = Role("elementwise choice", "select(pred, on_true, on_false) elementwise")
CONVERT = Role("cast", "convert_element_type(x, new_dtype=)")
# --- reductions, products, indexing ----------------------------------------------------
REDUCE_SUM = Role("axis sum", "reduce_sum(x, axes=): the sum of x over a sorted tuple of axes, "
                  "the transpose of broadcasting")
CONTRACTION = Role("contraction", "dot_general(x, y, dimension_numbers=((lc, rc), (lb, rb)))")
GATHER = Role("gather along an axis", "gather(x, positions, axis=k): x's entries at integer "
              "positions along axis k")
SCATTER_ADD = Role("scatter-add along an axis", "scatter_add(operand, positions, updates, "
                   "axis=k): operand plus updates added at positions along axis k, repeated "
                   "ones accumulating (the transpose of gather)")
