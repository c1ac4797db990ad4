"""jit's cache entries and the per-call fast path that finds one.

A ``CacheEntry`` is one traced signature of a ``Jitted`` function: the traced
program, its compiled form, the outer tracers it closed over and the
unflattener of its output (generated code for trees of tuples, lists, dicts
and None). Every call of a jitted function on plain arrays looks for its entry
before anything else, so that lookup is kept short: ``fast_flatten`` takes
arguments of tuples, lists, dicts, arrays and scalars to their leaves and a
signature of their structure, shapes and dtypes without tree_flatten, and
``compile_guard`` turns the last signature seen into generated code that
checks a call's arguments against it and runs the program (``MISS`` for
arguments of another signature). ``funcdiff.compiler.jit`` decides when entries and
guards are built and used.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from funcdiff.tree_util import PyTreeDef, tree_unflatten


class CacheEntry:
    """One traced signature: the traced program, its compiled form, the output
    structure, and the outer tracers ``f`` closed over (then the entry is not
    cached: those tracers belong to one trace of an enclosing transform)."""

    __slots__ = ("jaxpr", "out_tree", "program", "closed_over", "unflatten")

    def __init__(self, jaxpr, out_tree, program, closed_over):
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.program = program
        self.closed_over = closed_over
        self.unflatten = _unflattener(out_tree)


def _unflattener(tree: PyTreeDef) -> Callable[[list], Any]:
    """``tree_unflatten(tree, ·)`` as generated code when ``tree`` is built of
    tuples, lists, str-keyed... dicts and None only (keys are passed in the
    namespace, never written into the source); else tree_unflatten itself."""
    example = tree_unflatten(tree, list(range(tree.num_leaves)))
    namespace: dict = {}

    def build(x):
        t = type(x)
        if t is int:
            return f"o[{x}]"
        if x is None:
            return "None"
        if t is tuple:
            return "(" + "".join(build(c) + ", " for c in x) + ")"
        if t is list:
            return "[" + ", ".join(build(c) for c in x) + "]"
        if t is dict:
            items = []
            for k, c in x.items():
                name = f"_k{len(namespace)}"
                namespace[name] = k
                items.append(f"{name}: {build(c)}")
            return "{" + ", ".join(items) + "}"
        raise TypeError(t)
    try:
        body = build(example)
    except TypeError:
        return functools.partial(tree_unflatten, tree)
    exec(f"def unflatten(o):\n    return {body}\n", namespace)  # generated text only
    return namespace["unflatten"]


def fast_flatten(x: Any, leaves: list, key: list) -> bool:
    """Append the leaves of ``x`` and a signature of its structure and avals, for
    pytrees of tuples, lists, dicts and arrays/scalars; False for anything else
    (the caller then takes the general path through tree_flatten)."""
    t = type(x)
    if t is np.ndarray:
        leaves.append(x)
        key.append(x.shape)
        key.append(x.dtype)
    elif t is tuple or t is list:
        key.append((t, len(x)))
        for c in x:
            if type(c) is np.ndarray:  # the common leaf, without a call
                leaves.append(c)
                key.append(c.shape)
                key.append(c.dtype)
            elif not fast_flatten(c, leaves, key):
                return False
    elif t is dict:
        try:
            keys = tuple(sorted(x))
        except TypeError:
            return False
        key.append((t, keys))
        for k in keys:
            if not fast_flatten(x[k], leaves, key):
                return False
    elif t is float or t is bool:
        leaves.append(np.asarray(x))
        key.append(t)
    elif t is int:
        if not -(1 << 63) <= x < (1 << 63):
            return False
        leaves.append(np.asarray(x))
        key.append(t)
    elif isinstance(x, np.generic) and x.dtype.kind in "biufc":
        leaves.append(x)
        key.append(t)
    else:
        return False
    return True


MISS = object()  # what a guard returns for arguments of another signature


def compile_guard(args: tuple, entry: "CacheEntry") -> Callable[[tuple], Any] | None:
    """A function of the positional arguments that runs ``entry``'s program when
    they have the structure, shapes and dtypes of ``args`` (and returns ``MISS``
    otherwise): the signature check of the fast path as straight-line code, one
    type test per container and leaf and one comparison of all shapes and of all
    dtypes. None when ``args`` holds anything but tuples, lists, str-keyed dicts,
    arrays and scalars (the dict of signatures serves those)."""
    ns: dict = {"_MISS": MISS, "_nd": np.ndarray, "_asarray": np.asarray,
                "_fn": entry.program.fn, "_unflatten": entry.unflatten}
    lines = ["def guard(args):"]
    leaves: list[str] = []
    arrays: list[tuple[str, Any]] = []
    counter = [0]

    def fresh(prefix):
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    def const(value):
        name = fresh("_c")
        ns[name] = value
        return name

    def visit(x, name) -> bool:
        t = type(x)
        if t is np.ndarray:
            leaves.append(name)
            arrays.append((name, x))
            return True
        if t is tuple or t is list:
            lines.append(f"    if type({name}) is not {const(t)} or len({name}) != {len(x)}:")
            lines.append("        return _MISS")
            if not x:
                return True
            names = [fresh("x") for _ in x]
            lines.append(f"    {', '.join(names)}, = {name}")
            return all(visit(c, n) for c, n in zip(x, names))
        if t is dict:
            if not all(type(k) is str for k in x):
                return False
            keys = sorted(x)
            lines.append(f"    if type({name}) is not {const(dict)} or {name}.keys() != "
                         f"{const(frozenset(keys))}:")
            lines.append("        return _MISS")
            names = [fresh("x") for _ in keys]
            for n, k in zip(names, keys):
                lines.append(f"    {n} = {name}[{const(k)}]")
            return all(visit(x[k], n) for k, n in zip(keys, names))
        if t is float or t is bool:
            lines.append(f"    if type({name}) is not {const(t)}:")
            lines.append("        return _MISS")
            leaves.append(f"_asarray({name})")
            return True
        if isinstance(x, np.generic) and x.dtype.kind in "biufc":
            lines.append(f"    if type({name}) is not {const(t)}:")
            lines.append("        return _MISS")
            leaves.append(name)
            return True
        return False
    if not visit(args, "args"):
        return None
    if arrays:
        names = [n for n, _ in arrays]
        lines.append(f"    if type({') is not _nd or type('.join(names)}) is not _nd:")
        lines.append("        return _MISS")
        shapes = "".join(f"{n}.shape, " for n in names)
        dtypes = "".join(f"{n}.dtype, " for n in names)
        lines.append(f"    if ({shapes}) != {const(tuple(a.shape for _, a in arrays))} or "
                     f"({dtypes}) != {const(tuple(a.dtype for _, a in arrays))}:")
        lines.append("        return _MISS")
    lines.append(f"    return _unflatten(_fn({', '.join(leaves)}))")
    exec("\n".join(lines) + "\n", ns)  # generated identifiers only; values are in ns
    return ns["guard"]
