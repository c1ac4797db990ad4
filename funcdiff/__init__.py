"""funcdiff: composable function transformations (grad, jvp, vjp, vmap, jit) on numpy.

>>> import funcdiff as fd, numpy as np
>>> float(fd.grad(lambda x: x ** 3)(2.0))
12.0
"""

# Importing the primitive families registers every primitive (their cards).
from funcdiff.primitives import (convolution as _convolution,  # noqa: F401
                                 cumulative as _cumulative, dot as _dot,
                                 elementwise as _elementwise, indexing as _indexing,
                                 reductions as _reductions, sorting as _sorting,
                                 structural as _structural, windowed as _windowed)
from funcdiff import tree_util
from funcdiff.configuration import config, debug_infs, debug_nans
from funcdiff.primitives.gradient_control import stop_gradient
from funcdiff.api import (grad, jvp, linear_transpose, linearize, make_jaxpr, value_and_grad, vjp,
                          vmap)
from funcdiff.jacobians import elementwise_grad, hessian, hvp, jacfwd, jacobian, jacrev
from funcdiff.compiler.jit import jit
from funcdiff.errors import FloatingPointCheckError, FunctionalDiffError
from funcdiff.ir import ClosedJaxpr, Jaxpr, check_jaxpr, eval_jaxpr

# funcdiff.numpy gives tracers numpy's operators and dispatch (np.sin(tracer) works);
# the modules below build on it.
from funcdiff import numpy  # noqa: E402
from funcdiff.custom_derivatives import custom_jvp, custom_vjp  # noqa: E402
from funcdiff.remat.checkpoint import checkpoint, checkpoint_name, checkpoint_policies, remat  # noqa: E402
from funcdiff.inspect import cost_analysis, saved_residuals  # noqa: E402
from funcdiff.pictures import draw  # noqa: E402
from funcdiff.shapes import Array, ShapeDtypeStruct, block_until_ready, eval_shape  # noqa: E402
from funcdiff import debug, lax, nn, random, scipy, test_util  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "grad", "value_and_grad", "jvp", "vjp", "linearize", "linear_transpose", "jacfwd",
    "jacrev", "jacobian", "hessian", "hvp", "elementwise_grad", "vmap", "jit", "make_jaxpr", "stop_gradient",
    "custom_jvp", "custom_vjp", "checkpoint", "remat", "checkpoint_name",
    "checkpoint_policies", "saved_residuals", "cost_analysis", "tree_util", "lax", "nn", "random",
    "numpy", "scipy", "test_util", "FunctionalDiffError", "Jaxpr", "ClosedJaxpr",
    "check_jaxpr", "eval_jaxpr", "eval_shape", "ShapeDtypeStruct", "Array", "block_until_ready",
    "debug", "config", "debug_nans", "debug_infs", "FloatingPointCheckError",
]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
