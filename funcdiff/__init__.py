"""funcdiff: composable function transformations (grad, jvp, vjp, vmap, jit) on numpy.

>>> import funcdiff as fd, numpy as np
>>> float(fd.grad(lambda x: x ** 3)(2.0))
12.0
"""

from funcdiff import primitives as _primitives  # noqa: F401  (registers the primitives)
from funcdiff.primitives import elementwise as _elementwise  # noqa: F401
from funcdiff.primitives import structural as _structural  # noqa: F401
from funcdiff.primitives import reductions as _reductions  # noqa: F401
from funcdiff.primitives import (cumulative as _cumulative, dot as _dot,  # noqa: F401
                                 indexing as _indexing, sorting as _sorting)
from funcdiff import tree_util
from funcdiff.primitives.gradient_control import stop_gradient
from funcdiff.api import (grad, hessian, hvp, jacfwd, jacobian, jacrev, jit, jvp,
                          linear_transpose, linearize, make_jaxpr, value_and_grad, vjp, vmap)
from funcdiff.errors import FunctionalDiffError
from funcdiff.ir import ClosedJaxpr, Jaxpr, check_jaxpr, eval_jaxpr

__version__ = "0.1.0"

__all__ = [
    "grad", "value_and_grad", "jvp", "vjp", "linearize", "linear_transpose", "jacfwd",
    "jacrev", "jacobian", "hessian", "hvp", "vmap", "make_jaxpr", "tree_util", "stop_gradient",
    "jit", "FunctionalDiffError", "Jaxpr", "ClosedJaxpr", "check_jaxpr", "eval_jaxpr",
]

# funcdiff.numpy gives tracers numpy's operators and dispatch (np.sin(tracer) works)
from funcdiff import numpy  # noqa: E402,F401
from funcdiff.custom_derivatives import custom_jvp, custom_vjp  # noqa: E402
from funcdiff.checkpoint import checkpoint, remat, checkpoint_name, checkpoint_policies  # noqa: E402
from funcdiff.inspect import saved_residuals, cost_analysis  # noqa: E402
from funcdiff import lax  # noqa: E402,F401
from funcdiff import nn  # noqa: E402,F401
