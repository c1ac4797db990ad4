"""Custom derivative rules: ``custom_jvp`` and ``custom_vjp``.

A user who knows a better derivative than the one autodiff would derive (a
numerically stable one, a cheaper one, an implicit one, a deliberately
different one such as a straight-through estimator) decorates the function
and states the rule.

How it works. Under a transform, the function is staged into a jaxpr at the
shapes of its arguments; values it closes over that belong to enclosing
transforms become explicit leading operands (*closure conversion*), so every
transform sees them. The jaxpr and the rule, a Python callable held in a
hashable ``HeldFunction``, are the params of one primitive:

- ``custom_jvp_call``: impl and abstract_eval use the jaxpr; the jvp rule calls
  the user's rule on (primals, tangents). Reverse mode needs nothing more: in
  linearize the primal side of the rule runs now and its tangent side is
  staged, so the rule is transposed like any program. vmap batches the jaxpr
  and the rule.
- ``custom_vjp_call``: the jvp rule runs the user's ``fwd`` and returns, as the
  output tangent, the linear primitive ``custom_lin`` applied to the input
  tangents. ``custom_lin`` holds ``bwd`` and takes the residuals as operands;
  its transpose calls ``bwd``, so reverse mode (and grad-of-grad, when ``bwd``
  is written in funcdiff operations) uses the user's rule. Its forward
  evaluation, which forward mode needs, transposes ``bwd``: the Jacobian the
  user declared, applied to the tangent. That requires ``bwd`` to be linear
  in the cotangent (it always is, mathematically); otherwise a clear error
  suggests custom_jvp.

The rule governs the derivative with respect to the declared arguments; the
derivative with respect to closed-over values comes from ordinary autodiff
of the function. Rules must not close over values that the same transform
differentiates (pass them as arguments): a Python closure cannot be
re-pointed at the primal values. A function with Python control flow on
values cannot be staged; it then runs as Python each time (still correct in
eager use, where values are concrete; it cannot be jitted).

The package holds one module per part: ``common`` (staging the user's
function, shared with ``funcdiff.remat.checkpoint``), ``jvp`` (``custom_jvp`` and
``custom_jvp_call``), ``vjp`` (``custom_vjp`` and ``custom_vjp_call``) and
``lin`` (``custom_lin``). Their names are re-exported here.
"""

# the helpers are imported from here by funcdiff.remat.checkpoint and funcdiff.inspect
from funcdiff.custom_derivatives.common import (  # noqa: F401
    HeldFunction, batch_to_front, closure_convert, run_impls, unbatched_aval,
    zeros_for)
from funcdiff.custom_derivatives.jvp import custom_jvp, custom_jvp_call_p
from funcdiff.custom_derivatives.lin import custom_lin_p
from funcdiff.custom_derivatives.vjp import custom_vjp, custom_vjp_call_p

__all__ = ["custom_jvp", "custom_vjp", "custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p",
           "HeldFunction"]
