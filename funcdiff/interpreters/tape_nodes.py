"""What the eager tape records: one small class per kind of node.

``TapeTrace`` (``interpreters.tape``) appends a node for each differentiable
operation; the backward passes (``TapeFunction.pull_back``, and jacrev's
``pull_back_batched``) visit them in reverse and tell the kinds apart by
class (``type(node) is FactorNode``: cheaper than a method call per node).
A node names the cotangent slot of its output (``slot``) and the slots of
the inputs that receive cotangents (0 for an input not on the tape):

- ``FactorNode``: an elementwise operation of one value on the tape, whose
  cotangent is the output's times ``factor`` (None for 1; an ``OutputFactor``
  is computed when the backward pass needs it): the tuple
  ``(slot, input_slot, factor)``;
- ``ProductNode``: a product (a layer's ``x @ W``, any primitive whose card
  declares ``BilinearRule``), keeping only the operand each needed cotangent
  is made from, and transposed by the primitive's own rule;
- ``SumNode``: a sum or difference of two values with numpy broadcasting
  (any primitive whose card declares ``SumRule``), whose operands' cotangents
  are the output's summed down to their shapes;
- ``LinearNode``: a linear operation (a reshape, a sum) of one value on the
  tape and constants, pulled back by the primitive's transpose;
- ``PullbackNode``: any other operation with one output: ``pullback(ct)``
  gives one cotangent per input;
- ``MultiOutputNode``: an operation with several outputs, at the slots
  ``slot .. slot + len(out_avals) - 1``: ``pullback(cts)`` takes their list.

The cards declare the factor, product and sum rules with the types below
(``OutputFactor``, ``BilinearRule``, ``SumRule``) and a product's batched transpose may be
handed a ``DiagonalBatch``: the tape reads them, so they are defined here,
with the role of the primitive that scales a cotangent by a factor.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import roles
from funcdiff.core import Tracer, get_aval
from funcdiff.interpreters.transpose import UndefinedPrimal



# A factor node is the plain tuple ``(slot, input_slot, factor)``: the cotangent of
# the input at ``input_slot`` is the output's times ``factor`` (None for a factor of
# 1, a value, or an OutputFactor). It is the node of most scalar code, and a tuple
# is made and unpacked without a Python frame; no other node is a tuple.
FactorNode = tuple


class OutputFactor:
    """A tape factor computed when the backward pass needs it: ``output_deriv(y)``
    of a unary primitive whose derivative is a function of its output ``y``."""

    __slots__ = ("output_deriv", "y")

    def __init__(self, output_deriv: Callable, y: Any):
        self.output_deriv = output_deriv
        self.y = y

    def value(self) -> Any:
        return self.output_deriv(self.y)


class ProductNode:
    """A product ``primitive(x, y, **params)``, linear in each operand separately.

    ``x_undefined`` (an ``UndefinedPrimal``, when ``x`` is on the tape at
    ``x_slot``) is paired with ``y_kept``, the value of ``y`` its cotangent is
    made from; likewise ``y_undefined`` with ``x_kept``. An operand not on the
    tape has slot 0 and keeps nothing of the other."""

    __slots__ = ("slot", "x_slot", "y_slot", "primitive", "params",
                 "x_undefined", "y_kept", "x_kept", "y_undefined")

    def __init__(self, slot: int, x_slot: int, y_slot: int, primitive, params: dict,
                 x_undefined, y_kept, x_kept, y_undefined):
        self.slot = slot
        self.x_slot = x_slot
        self.y_slot = y_slot
        self.primitive = primitive
        self.params = params
        self.x_undefined = x_undefined
        self.y_kept = y_kept
        self.x_kept = x_kept
        self.y_undefined = y_undefined

    def pull_back(self, ct: Any, transpose: Callable | None = None) -> tuple[Any, Any] | None:
        """``(ct_x, ct_y)`` by the primitive's transpose (None where not needed),
        or by ``transpose`` when given (None when it returns None)."""
        if transpose is None:
            transpose = self.primitive.transpose
        ct_x = ct_y = None
        if self.x_undefined is not None:
            ct_x = transpose(ct, self.x_undefined, self.y_kept, **self.params)
            if ct_x is None:
                return None
            ct_x = ct_x[0]
        if self.y_undefined is not None:
            ct_y = transpose(ct, self.x_kept, self.y_undefined, **self.params)
            if ct_y is None:
                return None
            ct_y = ct_y[1]
        return ct_x, ct_y

    def batched(self, ct: Any) -> tuple[Any, Any] | None:
        """The cotangents for ``ct`` with a leading batch axis (concrete, or a
        ``DiagonalBatch``), or None when the primitive has no
        ``batched_transpose`` or no shortcut for a ``DiagonalBatch``."""
        transpose = self.primitive.batched_transpose
        return None if transpose is None else self.pull_back(ct, transpose)


class BilinearRule:
    """The reverse rule a card declares for a product (``prim.vjp``): the tape
    recognises it by type and records a ``ProductNode`` inline. Called as a
    rule, ``(needed, out, x, y, **params)``, it gives that node's pullback."""

    __slots__ = ("primitive",)

    def __init__(self, primitive):
        self.primitive = primitive

    def __call__(self, needed, out, x, y, **params) -> Callable:
        x_slot, y_slot = needed
        return ProductNode(
            0, x_slot, y_slot, self.primitive, params,
            UndefinedPrimal(get_aval(x)) if x_slot else None, y if x_slot else None,
            x if y_slot else None, UndefinedPrimal(get_aval(y)) if y_slot else None).pull_back


class SumNode:
    """A sum or difference ``x + y`` / ``x - y`` with numpy broadcasting (a bias
    added to a layer's output): each needed operand's cotangent is the output's,
    summed over the axes along which that operand was broadcast (``x_sum``,
    ``y_sum``: ``(axes, shape)``, or None for an operand of the output's shape),
    and negated for ``y`` of a difference. ``needed`` holds the two operands'
    slots (0 for one not on the tape)."""

    __slots__ = ("slot", "needed", "x_sum", "y_sum", "negate")

    def __init__(self, slot: int, needed: list, x_sum, y_sum, negate: bool):
        self.slot = slot
        self.needed = needed
        self.x_sum = x_sum
        self.y_sum = y_sum
        self.negate = negate

    def pullback(self, ct: Any) -> tuple[Any, Any]:
        return self._cotangents(ct, 0)

    def batched(self, ct: np.ndarray) -> tuple[Any, Any]:
        """The cotangents for a concrete batch ``ct`` (a leading batch axis)."""
        return self._cotangents(ct, 1)

    def _cotangents(self, ct: Any, lead: int) -> tuple[Any, Any]:
        x_slot, y_slot = self.needed
        ct_x = ct_y = None
        if x_slot:
            ct_x = summed_down(ct, self.x_sum, lead)
        if y_slot:
            ct_y = summed_down(ct, self.y_sum, lead)
            if self.negate:
                ct_y = roles.NEG.primitive.bind(ct_y) if isinstance(ct_y, Tracer) else -ct_y
        return ct_x, ct_y


def summed_down(ct: Any, sum_down: tuple | None, lead: int = 0) -> Any:
    """``ct`` summed over the axes and reshaped to the shape of ``sum_down`` (from
    ``broadcast_axes``; None: ``ct`` itself), the cotangent of an operand numpy
    broadcast to ``ct``'s shape; with ``lead`` leading batch axes kept (numpy on a
    concrete ``ct``)."""
    if sum_down is None:
        return ct
    axes, shape = sum_down
    if lead:
        axes, shape = tuple(a + lead for a in axes), tuple(ct.shape[:lead]) + shape
    if type(ct) is np.ndarray:
        out = np.add.reduce(ct, axis=axes, dtype=ct.dtype) if axes else ct
        return out if out.shape == shape else out.reshape(shape)
    out = roles.REDUCE_SUM.primitive.bind(ct, axes=axes) if axes else ct
    return out if get_aval(out).shape == shape else roles.RESHAPE.primitive.bind(
        out, new_sizes=shape)


@functools.lru_cache(maxsize=1024)  # bounded: shapes come from users
def broadcast_axes(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> tuple:
    """``(axes, shape)`` for ``summed_down`` of an operand of ``shape`` broadcast to
    ``out_shape`` (the axes to sum over), or None when the shapes are equal."""
    if shape == out_shape:
        return None
    lead = len(out_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and out_shape[lead + i] != 1)
    return axes, shape


class SumRule:
    """The reverse rule the cards of ``add`` and ``sub`` declare (``prim.vjp``):
    the tape recognises it by type and records a ``SumNode`` inline. Called as
    a rule, ``(needed, out, x, y)``, it gives that node's pullback."""

    __slots__ = ("negate",)

    def __init__(self, negate: bool):
        self.negate = negate

    def __call__(self, needed, out, x, y) -> Callable:
        out_shape = get_aval(out).shape
        return SumNode(0, list(needed), broadcast_axes(get_aval(x).shape, out_shape),
                       broadcast_axes(get_aval(y).shape, out_shape), self.negate).pullback


class DiagonalBatch:
    """The batch of cotangents ``diag(d)`` of a 1-D output: cotangent ``b`` is
    ``d[b]`` times the unit vector ``e_b`` (jacrev's basis, scaled by the
    derivatives met on the way back). A ``batched_transpose`` may take it and
    return the cotangents directly, or return None to be given the dense batch."""

    __slots__ = ("d",)

    def __init__(self, d):
        self.d = d


class LinearNode:
    """A linear primitive whose first operand is on the tape and whose others are
    constants (a reshape, a sum over axes, a gather at given indices): the
    operand's cotangent is the primitive's transpose of the output's, which
    needs only the operand's aval (``args`` holds it undefined, then the
    constants). ``needed`` is ``[operand's slot, 0, ...]``."""

    __slots__ = ("slot", "needed", "primitive", "args", "params")

    def __init__(self, slot: int, needed: list, primitive, args: tuple, params: dict):
        self.slot = slot
        self.needed = needed
        self.primitive = primitive
        self.args = args
        self.params = params

    def pullback(self, ct: Any) -> Sequence[Any]:
        return self.primitive.transpose(ct, *self.args, **self.params)


class PullbackNode:
    """An operation with one output: ``pullback(ct)`` gives one cotangent per
    input (None where none), for the inputs at slots ``needed``."""

    __slots__ = ("slot", "needed", "pullback")

    def __init__(self, slot: int, needed: Sequence[int], pullback: Callable):
        self.slot = slot
        self.needed = needed
        self.pullback = pullback


class MultiOutputNode:
    """An operation with several outputs, at slots ``slot`` onwards:
    ``pullback(cts)`` maps their cotangents (a list, Zero where none) to one
    cotangent per input (None where none), for the inputs at slots ``needed``."""

    __slots__ = ("slot", "needed", "pullback", "out_avals")

    def __init__(self, slot: int, needed: Sequence[int], pullback: Callable, out_avals: list):
        self.slot = slot
        self.needed = needed
        self.pullback = pullback
        self.out_avals = out_avals


__all__ = ["FactorNode", "OutputFactor", "ProductNode", "BilinearRule", "SumNode", "SumRule",
           "DiagonalBatch", "LinearNode", "PullbackNode", "MultiOutputNode"]
