"""Tracers as numpy arrays: installing operators, methods and numpy's protocols; what is supported.

``install_tracer_methods()`` gives ``funcdiff.core.Tracer`` the arithmetic and
comparison operators, indexing (``x[idx]``, ``x.at[idx]``) and the common
ndarray methods, each forwarding to the ``funcdiff.numpy`` function of the
same meaning, so promotion is numpy 2's (``float32 tracer * 2.0`` stays
float32). It also installs numpy's override protocols:

- ``__array_ufunc__``: ``np.sin(x)``, ``W @ x``, ``np.add.reduce(x)`` with a
  tracer anywhere in the arguments run the funcdiff.numpy function of that name
  (``reduce``/``accumulate``/``outer`` map to ``sum``, ``cumsum``, ... ).
- ``__array_function__``: ``np.sum(x, axis=0)``, ``np.where(...)``,
  ``np.concatenate([...])`` likewise.
- ``__array__`` refuses: converting a tracer to a numpy array would drop it
  from the trace (abstract under jit) or silently cut its derivative.

Anything numpy offers that funcdiff does not implement raises
``UnsupportedNumpyError`` naming the numpy function. ``supported_numpy_names``
lists the names the dispatch tables serve and ``supported_array_methods`` the
operators and methods tracers have; ``write_numpy_support_doc`` renders both
as ``docs/numpy-support.md``.

This module holds the installation and the lists. What it installs lives in one
module per concept: ``_operators`` (operators and array methods),
``_numpy_dispatch`` (``__array_ufunc__``, ``__array_function__`` and their
dispatch tables) and ``_tracer_conversion`` (``__array__`` and the errors for
what funcdiff does not implement). Their names are re-exported here, so
``from funcdiff.numpy._interop import ...`` keeps working.
"""

from __future__ import annotations

import os
from typing import Any, Callable  # noqa: F401  Callable: still importable from here

import numpy as np  # noqa: F401  still importable from here

from funcdiff import dtypes  # noqa: F401  still importable from here
from funcdiff.core import Tracer
from funcdiff.errors import (ConcretizationError, InvalidArgumentError,  # noqa: F401
                             TracerArrayConversionError, UnsupportedNumpyError)
from funcdiff.numpy._tracer_conversion import (  # noqa: F401  re-exported: moved there
    POINTER, array, unsupported)
from funcdiff.numpy._numpy_dispatch import (  # noqa: F401  re-exported: moved to _numpy_dispatch
    IN_PLACE, NOT_DISPATCHED, QUERIES, SUBMODULES, UFUNC_ACCUMULATE, UFUNC_REDUCE,
    array_function, array_ufunc, build_tables, dtype_or_value, _fnp, is_implementation,
    numpy_name, numpy_objects, submodule_functions, _tables)
from funcdiff.numpy._operators import (  # noqa: F401  re-exported: moved to _operators
    BINARY_OPERATORS, COMPARISONS, FALLBACKS, FLOAT_SCALAR_OPS, LOGICAL_OF, METHODS,
    UNARY_OPERATORS, array_method, astype, at, binary, _bitwise, conj, copy_method, _getitem,
    identity, imag, is_bool, nonzero, real, reshape_method, resolve, resolved,
    swap_last_two, transpose_method, unary)


def _tracer_methods() -> dict[str, tuple[Any, str | None]]:
    """Every attribute ``install_tracer_methods`` puts on Tracer, by name, with the
    funcdiff.numpy function it forwards to (None when it needs none)."""
    methods: dict[str, tuple[Any, str | None]] = {}
    for op, name in BINARY_OPERATORS.items():
        methods[f"__{op}__"] = (binary(name, f"__{op}__", reflected=False), name)
        methods[f"__r{op}__"] = (binary(name, f"__r{op}__", reflected=True), name)
    for op, name in COMPARISONS.items():
        methods[f"__{op}__"] = (binary(name, f"__{op}__", reflected=False), name)
    for op, name in UNARY_OPERATORS.items():
        methods[f"__{op}__"] = (unary(name, f"__{op}__"), name)
    for method_name, fn_name in METHODS.items():
        methods[method_name] = (array_method(method_name, fn_name), fn_name)
    for name, value in dict(
            __getitem__=_getitem, at=property(at), reshape=reshape_method,
            transpose=transpose_method, T=property(lambda self: transpose_method(self)),
            mT=property(swap_last_two), astype=astype, copy=copy_method, conj=conj,
            conjugate=conj, real=property(real), imag=property(imag),
            nonzero=nonzero, __array__=array, __array_ufunc__=array_ufunc,
            __array_function__=array_function).items():
        methods[name] = (value, None)
    return methods


def install_tracer_methods() -> None:
    """Attach operators, array methods and numpy's dispatch protocols to ``Tracer``.

    Called once by ``funcdiff.numpy`` at import; calling it again is harmless.
    """
    for name, (value, _) in _tracer_methods().items():
        setattr(Tracer, name, value)


def to_device(self: Tracer, device: Any, /, *, stream: Any = None) -> Tracer:
    """The array API's ``x.to_device``: funcdiff's values live on the CPU."""
    if device != "cpu":
        raise InvalidArgumentError(
            f"x.to_device({device!r}): funcdiff's numpy values live on the 'cpu' device only.")
    return self


def install_array_namespace(namespace: Any) -> None:
    """Give ``Tracer`` the array API standard's ``__array_namespace__`` (returning
    ``namespace``), ``device`` and ``to_device``.

    Called once by ``funcdiff.numpy`` at import, after ``namespace`` exists.
    """
    def array_namespace(self: Tracer, /, *, api_version: str | None = None) -> Any:
        if api_version is not None and api_version not in namespace.SUPPORTED_VERSIONS:
            raise InvalidArgumentError(
                f"x.__array_namespace__(api_version={api_version!r}): funcdiff implements "
                f"the array API standard versions {', '.join(namespace.SUPPORTED_VERSIONS)}; "
                "pass one of them or None.")
        return namespace

    Tracer.__array_namespace__ = array_namespace
    Tracer.device = property(lambda self: "cpu")
    Tracer.to_device = to_device


# ---------------------------------------------------------------------------
# The list of supported names and its document


def supported_numpy_names() -> list[str]:
    """Every numpy name funcdiff implements: ``numpy.X`` functions and ufuncs (by each
    name numpy exports them under), ``numpy.linalg.X`` and ``numpy.fft.X``, and
    ``numpy.<ufunc>.reduce/accumulate/outer``.

    >>> "numpy.concatenate" in supported_numpy_names()
    True
    >>> "numpy.linalg.det" in supported_numpy_names()
    True
    """
    tables = build_tables()
    names = set()
    for obj in list(tables["ufuncs"]) + list(tables["functions"]):
        names.update(f"numpy.{n}" for n in tables["names_of"][id(obj)])
    fnp = _fnp()
    for ufunc in tables["ufuncs"]:
        aliases = tables["names_of"][id(ufunc)]
        for method, mapping in (("reduce", UFUNC_REDUCE), ("accumulate", UFUNC_ACCUMULATE)):
            target = mapping.get(ufunc.__name__)
            if target and hasattr(fnp, target):
                names.update(f"numpy.{n}.{method}" for n in aliases)
        if ufunc.nin == 2 and ufunc.signature is None:  # gufuncs (matmul) have no outer
            names.update(f"numpy.{n}.outer" for n in aliases)
    return sorted(names)


def supported_array_methods() -> list[str]:
    """The ndarray operators, methods and attributes funcdiff tracers have (those whose
    funcdiff.numpy function exists)."""
    fnp = _fnp()
    out = []
    for name, (_, target) in _tracer_methods().items():
        if name in ("__array__", "__array_ufunc__", "__array_function__"):
            continue
        if target is None or any(
                hasattr(fnp, c) for c in (target,) + FALLBACKS.get(target, ())):
            out.append(name)
    return sorted(out)


def numpy_support_markdown() -> str:
    """The text of ``docs/numpy-support.md``, generated from the dispatch tables."""
    functions = supported_numpy_names()
    methods = supported_array_methods()
    lines = [
        "# numpy names supported by funcdiff",
        "",
        "<!-- Generated from the code by funcdiff.numpy._interop; do not edit by hand.",
        "     Regenerate with: python -c \"from funcdiff.numpy._interop import "
        "write_numpy_support_doc; write_numpy_support_doc()\" -->",
        "",
        "Inside a transform, calling any of these numpy functions on a traced value runs the",
        "funcdiff.numpy function of the same name (through `__array_ufunc__` /",
        "`__array_function__`), so unmodified `import numpy as np` code is traced and",
        "differentiated. Every other numpy function raises `UnsupportedNumpyError` naming it;",
        "`numpy.asarray(tracer)` raises `TracerArrayConversionError`. numpy's creation",
        "functions that take shapes (`numpy.zeros`, `numpy.arange`, ...) need no dispatch: they",
        "build constants; `funcdiff.numpy` has them too. Operators `&`, `|`, `^`, `~` on",
        "traced booleans are the logical functions.",
        "",
        f"## Functions and ufuncs ({len(functions)})",
        "",
    ]
    lines += [f"- `{n}`" for n in functions]
    lines += ["", f"## Array methods and operators on traced values ({len(methods)})", ""]
    lines += [f"- `ndarray.{n}`" for n in methods]
    return "\n".join(lines) + "\n"


def default_doc_path() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(os.path.dirname(here)), "docs", "numpy-support.md")


def write_numpy_support_doc(path: str | None = None) -> str:
    """Write ``docs/numpy-support.md`` (or ``path``) from the code; returns the path."""
    path = path or default_doc_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(numpy_support_markdown())
    return path


__all__ = ["install_tracer_methods", "supported_numpy_names", "supported_array_methods",
           "numpy_support_markdown", "write_numpy_support_doc"]
