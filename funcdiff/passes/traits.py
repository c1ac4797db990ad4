"""The traits and roles the optimisation passes read; the primitives' cards declare and fill them.

- A *trait* is a fact a whole family of primitives shares, stated on each card
  (``prim.traits |= {COMMUTATIVE}``) and tested by object (``COMMUTATIVE in
  eqn.primitive.traits``). Each promises exactly what its sentence says: a pass
  relies on nothing more.
- A *role* is one particular primitive a pass emits or recognises by itself
  (the broadcast a zero is made of, the neg a rule moves out): the card of the
  primitive that plays it calls ``ROLE.fill(prim)``, and the pass reads
  ``ROLE.primitive``. The broadcast is ``core.BROADCAST``, shared with core.

Rewrites of one primitive are declared on its card as data (``passes.rules``);
the traits below are what the passes apply to every primitive that has them.
"""

from __future__ import annotations

from funcdiff.core import Role, Trait

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
EXTREMUM_REDUCTION = Trait("extremum reduction", "the maximum or minimum of the operand over "
                           "params['axes'], so one of its elements")

# --- roles ----------------------------------------------------------------------------

NEG = Role("negation", "neg(x): -x elementwise; the rule for NEG_COMMUTING primitives moves it")
RESHAPE = Role("change of shape", "reshape(x, new_sizes=shape): x's elements in a new shape; an "
               "implicit broadcast leaves one behind")
TRANSPOSE = Role("axis permutation", "transpose(x, permutation=p): orient_matmuls reads the "
                 "transpose of a product")
CONTRACTION = Role("contraction", "dot_general(a, b, dimension_numbers=((lc, rc), (lb, rb))): "
                   "orient_matmuls swaps its operands")
# the operations a softmax and its derivative are written with, for idioms.py
ADD = Role("sum", "x + y elementwise with broadcasting")
SUB = Role("difference", "x - y elementwise with broadcasting")
MUL = Role("product", "x * y elementwise with broadcasting")
DIV = Role("quotient", "x / y elementwise with broadcasting")
EXP = Role("exponential", "exp(x) elementwise")
EQ = Role("equality", "x == y elementwise, a bool array")
CONVERT = Role("cast", "convert_element_type(x, new_dtype=d)")
REDUCE_SUM = Role("axis sum", "reduce_sum(x, axes=a): the sum of x over the axes a")
