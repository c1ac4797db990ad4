"""``funcdiff.numpy.vectorize``: numpy's vectorize, by batching instead of a Python loop.

``numpy.vectorize`` calls the function once per element (or per core slice,
with ``signature``); on traced values that loop would unroll into the
program. Here the function is traced once and batched over the broadcast
loop dimensions (one batched call, as ``jax.numpy.vectorize`` does), so it
differentiates and compiles like any funcdiff.numpy code.

- Without ``signature`` the function maps scalars to scalars; with
  ``signature="(m,n),(n)->(m)"`` each argument has core dimensions, and the
  loop dimensions in front of them broadcast.
- ``excluded`` names positional indices or keywords passed through unbatched.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Callable

import numpy as np

from funcdiff.core import get_aval
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.interpreters.batching import vmap_flat
from funcdiff.numpy import _util
from funcdiff.primitives import structural

_DIMS = r"\((?:\w+(?:,\s*\w+)*)?\)"
_SIGNATURE = re.compile(rf"^\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*->\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*$")


def _parse(signature: str) -> tuple[list, list]:
    if not _SIGNATURE.match(signature):
        raise InvalidArgumentError(
            f"funcdiff.numpy.vectorize: signature {signature!r} is not a generalized-ufunc "
            "signature such as '(n),(n)->()' or '(m,n)->(n,m),(m)'.")
    ins, outs = signature.split("->")
    groups = [[tuple(d.strip() for d in g.split(",") if d.strip())
               for g in re.findall(r"\(([^)]*)\)", side)] for side in (ins, outs)]
    return groups[0], groups[1]


def vectorize(pyfunc: Callable, *, otypes: Any = None, excluded: Any = None,
              signature: str | None = None) -> Callable:
    """``pyfunc`` vectorized over the leading (loop) dimensions of its arguments.

    Args:
      pyfunc: a function of scalars (or, with ``signature``, of core arrays)
        written with funcdiff.numpy.
      otypes: accepted for numpy's signature; the outputs' dtypes are pyfunc's.
      excluded: positions (ints) or keyword names passed to ``pyfunc`` as they are.
      signature: a generalized-ufunc signature, e.g. ``"(n),(n)->()"``.

    Returns:
      The vectorized function.

    Raises:
      ShapeError: loop dimensions that do not broadcast, or core dimensions
        that disagree with the signature.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> clipped = fnp.vectorize(lambda x: fnp.where(x > 1.0, 1.0, x * x))
    >>> clipped(np.array([[0.5, 2.0], [1.0, -1.0]])).tolist()
    [[0.25, 1.0], [1.0, 1.0]]
    >>> dot = fnp.vectorize(lambda a, b: fnp.sum(a * b), signature="(n),(n)->()")
    >>> dot(np.ones((4, 3)), np.arange(3.0)).tolist()
    [3.0, 3.0, 3.0, 3.0]
    """
    excluded = frozenset(excluded or ())
    in_cores, out_cores = _parse(signature) if signature is not None else (None, None)

    @functools.wraps(pyfunc)
    def vectorized(*args: Any, **kwargs: Any) -> Any:
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        batched_kw = {k: v for k, v in kwargs.items() if k not in excluded}
        positions = [i for i in range(len(args)) if i not in excluded]
        arrays = [_util.asarray(args[i], "funcdiff.numpy.vectorize") for i in positions]
        arrays += [_util.asarray(v, "funcdiff.numpy.vectorize") for v in batched_kw.values()]
        cores = in_cores if in_cores is not None else [()] * len(arrays)
        if len(cores) != len(arrays):
            raise InvalidArgumentError(
                f"funcdiff.numpy.vectorize: signature {signature!r} has {len(cores)} inputs, "
                f"but the function got {len(arrays)} array arguments.")
        sizes: dict = {}
        loops = []
        for a, core in zip(arrays, cores):
            shape = get_aval(a).shape
            if len(shape) < len(core):
                raise ShapeError(f"funcdiff.numpy.vectorize: an argument of shape {shape} has "
                                 f"fewer dimensions than its core {core} in {signature!r}.")
            for name, n in zip(core, shape[len(shape) - len(core):]):
                if sizes.setdefault(name, n) != n:
                    raise ShapeError(f"funcdiff.numpy.vectorize: core dimension {name!r} is "
                                     f"both {sizes[name]} and {n}.")
            loops.append(shape[:len(shape) - len(core)])
        try:
            loop_shape = np.broadcast_shapes(*loops)
        except ValueError:
            raise ShapeError(f"funcdiff.numpy.vectorize: the loop dimensions {loops} do not "
                             "broadcast.") from None
        size = math.prod(loop_shape)
        flat = [structural.reshape(
                    structural.broadcast_to(a, loop_shape + get_aval(a).shape[len(lp):]),
                    new_sizes=(size,) + get_aval(a).shape[len(lp):])
                for a, lp in zip(arrays, loops)]

        def call(*xs):
            full = list(args)
            for i, x in zip(positions, xs):
                full[i] = x
            kw = dict(static_kw, **dict(zip(batched_kw, xs[len(positions):])))
            out = pyfunc(*full, **kw)
            return list(out) if isinstance(out, tuple) else [out]
        outs = vmap_flat(call, size, [0] * len(flat), flat, 0)
        results = [structural.reshape(o, new_sizes=loop_shape + get_aval(o).shape[1:])
                   for o in outs]
        if out_cores is not None and len(out_cores) > 1 or len(results) > 1:
            return tuple(results)
        return results[0]
    return vectorized


__all__ = ["vectorize"]
