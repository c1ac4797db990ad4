"""Primitives that control differentiation itself.

``stop_gradient`` passes its value through unchanged and has a zero
derivative in every mode and at every order: it is declared
non-differentiable, so the jvp trace gives it a symbolic zero tangent and it
never appears in a linear program.
"""

from __future__ import annotations

from funcdiff.compiler.codegen import RUNS_AS_IDENTITY
from funcdiff.core import Primitive, bind
from funcdiff.passes.traits import ZERO_PRESERVING
from funcdiff.primitives.cards import make_op
from funcdiff.tree_util import tree_map

stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.impl = lambda x: x
stop_gradient_p.abstract_eval = lambda x: x
stop_gradient_p.nondifferentiable = True
stop_gradient_p.batch = lambda vals, dims: (bind(stop_gradient_p, vals[0]), dims[0])
stop_gradient_p.cost = lambda x: {"flops": 0, "bytes": 0}
stop_gradient_p.traits |= {RUNS_AS_IDENTITY}  # compiled, the result is the operand
stop_gradient_p.traits |= {ZERO_PRESERVING}


def stop_gradient(x):
    """The value of ``x`` with a zero derivative in every mode and order.

    Args:
      x: an array or pytree of arrays.

    Returns:
      ``x`` unchanged, treated as a constant by grad, jvp, vjp and their compositions.

    >>> import funcdiff as fd
    >>> float(fd.grad(lambda x: x * fd.stop_gradient(x))(3.0))
    3.0
    """
    return tree_map(lambda leaf: bind(stop_gradient_p, leaf), x)
