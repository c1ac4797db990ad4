"""Array backends: which array library a value belongs to, and how funcdiff runs on it.

numpy is the default and is never asked about: ``core.get_aval``'s fast path
handles ``numpy.ndarray`` before this module is consulted. Every other array
type is *foreign* and gets a ``Backend``:

- recognised by its type's module (``dask.array``, ``cupy``, ``torch``,
  ``array_api_strict``, ``jax``) or, for any other library, by an
  ``__array_namespace__`` method; its namespace comes from array-api-compat
  (the ``dask`` extra), imported at first use, so ``import funcdiff`` needs
  none of these libraries;
- a backend whose arrays take part in numpy's dispatch protocols (NEP 13 and
  18: Dask and CuPy) runs the primitives' numpy impls as they are: ``np.sin``
  of a dask array is a lazy dask array, ``np.tensordot`` a dask graph;
- a backend that does not (PyTorch, array_api_strict) is computed through
  ``bridge.NamespaceArray``, which gives its arrays numpy's protocols by their
  own namespace; ``as_array`` refuses a bare one by name rather than let numpy
  convert it behind the user's back.

Shapes must be known: a dask array with unknown (NaN) chunk sizes is refused
with the fix (``compute_chunk_sizes()``). Mixing two foreign backends is refused
by name; a numpy value mixed with a foreign one follows the foreign library.
"""

from __future__ import annotations

import importlib
import math
import warnings
from typing import Any

import numpy as np

from funcdiff.errors import InvalidArgumentError, LazyComputeWarning


class BackendError(InvalidArgumentError):
    """A value of an array library funcdiff cannot run on, or two libraries mixed."""


class Backend:
    """One foreign array library: its name, its array API namespace and how funcdiff runs it.

    ``dispatches`` is True when numpy's functions dispatch to its arrays (NEP 13
    and 18), so the numpy impls run on them unchanged.
    """

    __slots__ = ("name", "dispatches", "_namespace")

    def __init__(self, name: str, *, dispatches: bool):
        self.name = name
        self.dispatches = dispatches
        self._namespace = None

    def namespace(self, x: Any = None):
        """The array API namespace of this backend (array-api-compat's wrapper where it has one)."""
        if self._namespace is None:
            self._namespace = _namespace_of(self, x)
        return self._namespace

    def __repr__(self) -> str:
        return f"Backend({self.name})"


DASK = Backend("dask", dispatches=True)
CUPY = Backend("cupy", dispatches=True)
TORCH = Backend("torch", dispatches=False)
ARRAY_API_STRICT = Backend("array_api_strict", dispatches=False)
JAX = Backend("jax", dispatches=False)
_BY_ROOT = {"dask": DASK, "cupy": CUPY, "torch": TORCH, "array_api_strict": ARRAY_API_STRICT,
            "jax": JAX, "jaxlib": JAX}
_by_type: dict[type, Backend | None] = {}  # a cache: each array type is looked at once


_BRIDGED = Backend("bridged", dispatches=True)  # a marker: the array says its Backend itself


def register_bridge(t: type) -> None:
    """Declare ``t`` an array type whose instances carry their Backend as ``.view``
    (``bridge.NamespaceArray``)."""
    _by_type[t] = _BRIDGED


def backend_of(x: Any) -> Backend | None:
    """The Backend of a foreign array, or None for anything else (numpy, scalars, tracers)."""
    t = type(x)
    try:
        backend = _by_type[t]
    except KeyError:
        return _classify(x)
    return x.view if backend is _BRIDGED else backend


def _classify(x: Any) -> Backend | None:
    t = type(x)
    root = t.__module__.partition(".")[0]
    backend = None
    if hasattr(x, "shape") and hasattr(x, "dtype"):  # not a torch.dtype, a dask delayed ...
        backend = _BY_ROOT.get(root)
        if (backend is None and root not in ("funcdiff", "numpy")  # tracers have a namespace too
                and hasattr(t, "__array_namespace__")):
            backend = Backend(f"{t.__module__}.{t.__name__}", dispatches=False)
    _by_type[t] = backend
    return backend


def _namespace_of(backend: Backend, x: Any):
    try:
        compat = importlib.import_module("array_api_compat")
    except ImportError:
        compat = None
    if compat is not None and x is not None:
        try:
            return compat.array_namespace(x)
        except TypeError:
            pass
    if hasattr(x, "__array_namespace__"):
        return x.__array_namespace__()
    if compat is None:
        raise BackendError(
            f"funcdiff needs array-api-compat to run on {backend.name} arrays: install it "
            "(pip install funcdiff[dask]).")
    raise BackendError(f"funcdiff cannot find an array API namespace for {backend.name} arrays.")


def numpy_dtype(dtype: Any) -> np.dtype:
    """The numpy dtype of a foreign array's dtype (numpy's own, torch.float64, array_api_strict.float32 ...)."""
    if isinstance(dtype, np.dtype):
        return dtype
    try:
        return np.dtype(dtype)
    except TypeError:
        pass
    name = str(dtype).rpartition(".")[2]  # "torch.float64", "array_api_strict.float64"
    try:
        return np.dtype(name)
    except TypeError:
        raise BackendError(f"funcdiff does not know the dtype {dtype!r} of a foreign array.") from None


def static_shape(x: Any, backend: Backend) -> tuple[int, ...]:
    """The shape of a foreign array as a tuple of ints, refusing unknown sizes."""
    shape = tuple(x.shape)
    if any(d is None or (isinstance(d, float) and math.isnan(d)) for d in shape):
        fix = (" Call x.compute_chunk_sizes() (or pass lengths= to to_dask_array) first."
               if backend is DASK else " Give the array a known shape first.")
        raise BackendError(
            f"funcdiff needs static shapes, but a {backend.name} array of shape {shape} "
            f"has unknown sizes (for example after boolean indexing).{fix}")
    return tuple(int(d) for d in shape)


def common_backend(values: Any, where: str) -> Backend | None:
    """The one foreign backend among ``values`` (None if all are numpy or scalars);
    two different foreign backends are refused by name."""
    found = None
    for v in values:
        b = backend_of(v)
        if b is not None and b is not found:
            if found is not None and b.name != found.name:
                raise BackendError(
                    f"{where} received arrays of two array libraries, {found.name} and "
                    f"{b.name}; funcdiff runs one program on one library. Convert one of "
                    f"them (for example to {found.name}) before the call.")
            found = b
    return found


def as_array(x: Any) -> Any:
    """``x`` as an array an impl can compute on: numpy arrays, and arrays of a
    backend numpy dispatches to, as they are; scalars as numpy arrays.

    The impls' ``np.asarray`` would compute a lazy dask array (or copy a GPU
    array to the host): this keeps it where it is.
    """
    if type(x) is np.ndarray:
        return x
    backend = backend_of(x)
    if backend is None:
        return np.asarray(x)
    if backend.dispatches:
        return x
    raise BackendError(
        f"a {backend.name} array reached funcdiff's numpy code without passing a transform's "
        f"arguments (was it closed over?). Pass {backend.name} arrays to the transformed "
        "function as arguments, so funcdiff computes them through their own namespace.")


_warned_compute: set[str] = set()  # the libraries whose arrays were computed for a branch


def computed(value: Any, operation: str) -> Any:
    """``value`` computed, when it is a lazy array (dask) that Python's ``operation``
    (``bool()``, ``float()``, an index) needs as a number; a LazyComputeWarning
    says so, once per library. Anything else returns as it is."""
    if type(value) is np.ndarray:
        return value
    backend = backend_of(value)
    if backend is None or not hasattr(value, "compute"):
        return value
    if backend.name not in _warned_compute:
        _warned_compute.add(backend.name)
        warnings.warn(
            f"{operation} on a value computed from {backend.name} arrays computed it now: "
            "a Python branch needs a number. funcdiff says this once; to keep the whole "
            "computation lazy, use funcdiff.numpy.where or fd.lax.cond instead of the branch.",
            LazyComputeWarning, stacklevel=3)
    return value.compute()
