"""Structured control flow: the primitives ``cond``, ``while`` and ``scan``.

Each holds its branches or loop body as closed sub-programs (``ClosedJaxpr``
params) and runs them compiled. Their rules never look at the user's Python
functions: they transform the sub-programs (jvp, linearize, transpose, vmap)
with the derivations of ``funcdiff.interpreters.programs``, which caches the
derived programs per sub-program, and bind the primitive again, so every
transform of a loop is again a loop. One module per construct:

- ``cond``: ``cond[branches] index *args`` runs ``branches[index]`` (index clamped).
- ``while_loop``: ``while[cond_jaxpr body_jaxpr cond_nconsts body_nconsts]
  *cconsts *bconsts *carry``, and ``while_tangent``/``while_cotangent``, its
  reverse mode under ``jit``.
- ``loop_recording``: reverse mode of a ``while`` on concrete values, and
  ``any_in_batch``.
- ``scan``: ``scan[jaxpr num_consts num_carry length reverse] *consts *carry *xs``
  returns the final carry and the per-iteration outputs stacked along a new axis 0.

Forward mode runs a loop over (primal, tangent) pairs. Reverse mode first
*linearizes*: when the tangents are staged apart from the primals (inside
``linearize``), a jvp rule splits the sub-program into a forward part (outputs
plus residuals, stacked per iteration for ``scan``) and a linear part, and
transposing the linear part gives a ``cond`` of transposed branches or a
``scan`` running the other way. A ``while`` loop has no static trip count.
On concrete values (eager ``grad``) it runs forward now, records each
iteration's residuals and differentiates as a scan of that length; under vmap
a batched predicate is reduced with ``any_in_batch`` and finished members are
frozen. Under ``jit`` the linear part is a ``while_tangent`` loop whose
transpose, ``while_cotangent``, reruns the forward loop at run time keeping
each iteration's carry and walks back through them.
The public API with pytrees and checks is ``funcdiff.lax``.
"""

# Re-exported: the primitives, and the program derivations their rules use.
from funcdiff.interpreters.programs import (  # noqa: F401
    batch_jaxpr, jvp_jaxpr, linearize_jaxpr, transpose_jaxpr)
from funcdiff.primitives.cond import cond_p  # noqa: F401
from funcdiff.primitives.loop_recording import any_in_batch, any_in_batch_p  # noqa: F401
from funcdiff.primitives.scan import scan_p  # noqa: F401
from funcdiff.primitives.while_loop import (  # noqa: F401
    while_cotangent_p, while_p, while_tangent_p)
