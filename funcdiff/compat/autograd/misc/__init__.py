"""autograd.misc: optimizers over pytrees, flatten, and fixed points with implicit derivatives."""

from funcdiff.compat.autograd.misc import fixed_points, optimizers  # noqa: F401
from funcdiff.compat.autograd.misc.flatten import flatten

__all__ = ["flatten", "optimizers", "fixed_points"]
