"""The traits the optimisation passes read; the primitives' cards declare them.

- A *trait* is a fact a whole family of primitives shares, stated on each card
  (``prim.traits |= {COMMUTATIVE}``) and tested by object (``COMMUTATIVE in
  eqn.primitive.traits``). Each promises exactly what its sentence says: a pass
  relies on nothing more.
- One particular primitive a pass emits or recognises by itself (the broadcast
  a zero is made of, the neg a rule moves out) is reached through its role in
  ``funcdiff.roles``, which every layer below the cards shares.

Rewrites of one primitive are declared on its card as data (``passes.rules``);
the traits below are what the passes apply to every primitive that has them.
"""

from __future__ import annotations

from funcdiff.core import Trait

# --- traits -------------------------------------------------------------------------

COMMUTATIVE = Trait("commutative", "f(a, b) == f(b, a) exactly, so eliminate_common_"
                    "subexpressions may match the operands in either order")
BROADCASTING = Trait("broadcasting", "elementwise over operands broadcast by numpy's rules, "
                     "so an operand may be given in any shape that broadcasts to the same result")
NEG_COMMUTING = Trait("neg-commuting", "odd in every operand: f(..., -a, ...) == -f(..., a, ...) "
                      "exactly, so a negation may move from an operand to the result")
RESHAPING = Trait("reshaping", "the result is its one operand's elements in row-major order, "
                  "only the shape differs (reshape, squeeze, expand_dims)")
KEEPDIMS_MOVE = Trait("keepdims move", "can restore the axes a reduction removed as size-1 "
                      "axes without moving data, as numpy's keepdims=True result is written")
ZERO_PRESERVING = Trait("zero-preserving", "f(0) == 0: a zero first operand gives a zero result "
                        "(unary and structural primitives)")
FINITE_PRESERVING = Trait("finite-preserving", "a finite first operand gives a finite result")
ALWAYS_FINITE = Trait("always finite", "every element of the result is finite, whatever the "
                      "operands")
FINITE_FROM_INTEGERS = Trait("finite from integers", "an integer or boolean first operand gives "
                             "a finite result (a cast to float)")
PRODUCT = Trait("product", "the elementwise product of the two operands (numpy broadcasting), "
                "so a monomial of them")
EFFECTFUL = Trait("effectful", "running it does something besides computing its results (it "
                  "prints): passes keep it though its results are unused, never merge two of "
                  "them, and never run it while optimising")
EXTREMUM_REDUCTION = Trait("extremum reduction", "the maximum or minimum of the operand over "
                           "params['axes'], so one of its elements")
