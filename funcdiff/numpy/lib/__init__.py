"""funcdiff.numpy.lib: the parts of numpy.lib that funcdiff implements.

- ``stride_tricks.sliding_window_view``: windows of an array, differentiable.
  numpy's own ``numpy.lib.stride_tricks.sliding_window_view`` called on a
  tracer dispatches to it.

>>> import numpy as np
>>> from funcdiff.numpy.lib.stride_tricks import sliding_window_view
>>> sliding_window_view(np.arange(4), 3)
array([[0, 1, 2],
       [1, 2, 3]])
"""

from funcdiff.numpy.lib import stride_tricks

__all__ = ["stride_tricks"]


def __dir__() -> list[str]:  # dir() shows the public names only
    return sorted(__all__)
