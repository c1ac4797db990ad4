"""Generate docs/api.md, the API reference, from the public docstrings.

The public names are ``funcdiff.__all__`` (plus any other public function or
class the package exposes at top level) and those of every user namespace:
each module of the package that defines ``__all__``, has no underscore in its
dotted name and is not one of the implementation layers listed in
``IMPLEMENTATION_MODULES`` (whose public names are re-exported at top level),
plus ``funcdiff.test_util``. New namespaces appear here by themselves.

Run ``python docs/generate_api.py`` after changing a docstring (the test
``tests/test_docs.py`` fails while docs/api.md is out of date), or
``python docs/generate_api.py --check`` to see whether it is.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import pkgutil
import re
import sys
import types
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy  # noqa: E402

import funcdiff  # noqa: E402

API_MD = os.path.join(ROOT, "docs", "api.md")

# Layers whose public names are re-exported by ``funcdiff`` itself: documented there.
IMPLEMENTATION_MODULES = ("funcdiff.core", "funcdiff.ir", "funcdiff.api", "funcdiff.jacobians",
                          "funcdiff.dtypes", "funcdiff.errors", "funcdiff.custom_derivatives",
                          "funcdiff.inspect", "funcdiff.primitives", "funcdiff.interpreters",
                          "funcdiff.passes", "funcdiff.compiler", "funcdiff.remat",
                          "funcdiff.arguments", "funcdiff.pytrees", "funcdiff.configuration",
                          "funcdiff.shapes", "funcdiff.lax_operations", "funcdiff.lax_solvers")
# Namespaces documented in full even without __all__.
EXTRA_NAMESPACES = ("funcdiff.test_util",)
# Large namespaces shown as one table row per name (summary line and signature).
TABLE_NAMESPACES = ("funcdiff.numpy",) + tuple(
    f"funcdiff.numpy.polynomial.{basis}" for basis in
    ("polynomial", "chebyshev", "legendre", "hermite", "hermite_e", "laguerre"))
SECTIONS = ("Args", "Arguments", "Returns", "Raises", "Yields", "Attributes", "Example",
            "Examples", "Note", "Notes", "See also")


# ---------------------------------------------------------------------------
# What is public


def namespaces() -> list[str]:
    """The documented modules, ``funcdiff`` first, the rest sorted by name."""
    names = []
    for info in pkgutil.walk_packages(funcdiff.__path__, "funcdiff."):
        name = info.name
        if any(part.startswith("_") for part in name.split(".")):
            continue
        if any(name == m or name.startswith(m + ".") for m in IMPLEMENTATION_MODULES):
            continue
        module = importlib.import_module(name)
        if hasattr(module, "__all__") or name in EXTRA_NAMESPACES:
            names.append(name)
    return ["funcdiff"] + sorted(names)


def public_names(modname: str) -> list[str]:
    """The public names of a namespace, in the order its ``__all__`` gives them."""
    module = importlib.import_module(modname)
    declared = list(getattr(module, "__all__", []))
    extra = []
    for name, obj in vars(module).items():
        if name.startswith("_") or name in declared or isinstance(obj, types.ModuleType):
            continue
        home = getattr(obj, "__module__", None) or ""
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and home.startswith("funcdiff") \
                and (modname == "funcdiff" or home == modname):
            extra.append(name)
        elif modname == "funcdiff" and isinstance(obj, types.SimpleNamespace):
            extra.append(name)
    return declared + sorted(extra)


def is_numpy_object(modname: str, name: str, obj: Any) -> bool:
    """Constants, dtypes and helpers funcdiff.numpy re-exports from numpy unchanged."""
    if not modname.startswith("funcdiff.numpy"):
        return False
    return getattr(numpy, name, object()) is obj or \
        (getattr(obj, "__module__", "") or "").split(".")[0] == "numpy" or \
        isinstance(obj, (int, float, type(None)))


def undocumented() -> list[str]:
    """Public names whose docstring is missing (re-exported numpy objects excepted)."""
    missing = []
    for modname in namespaces():
        module = importlib.import_module(modname)
        for name in public_names(modname):
            obj = getattr(module, name, None)
            if obj is None and not hasattr(module, name):
                missing.append(f"{modname}.{name} (listed in __all__ but not defined)")
            elif isinstance(obj, types.ModuleType) or is_numpy_object(modname, name, obj):
                continue
            elif not _own_doc(obj):
                missing.append(f"{modname}.{name}")
    return missing


def _own_doc(obj: Any) -> str:
    """The object's docstring; for an instance, its class's unless that is a builtin's.
    A namespace object (``types.SimpleNamespace``) is documented by its members:
    one line each, or nothing if any member lacks a docstring."""
    if isinstance(obj, types.SimpleNamespace):
        members = {k: _own_doc(v) for k, v in sorted(vars(obj).items()) if not k.startswith("_")}
        if not members or not all(members.values()):
            return ""
        return "A namespace of:\n\n" + "\n".join(
            f"- ``{k}``: {doc.splitlines()[0]}" for k, doc in members.items())
    doc = inspect.getdoc(obj) or ""
    if not (inspect.isroutine(obj) or inspect.isclass(obj) or isinstance(obj, types.ModuleType)):
        if type(obj).__module__ == "builtins":
            return ""
    return doc.strip()


# ---------------------------------------------------------------------------
# Rendering


def signature(name: str, obj: Any) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return name
    # annotations are strings under ``from __future__ import annotations``: leave them out
    sig = str(sig.replace(parameters=[p.replace(annotation=inspect.Parameter.empty)
                                      for p in sig.parameters.values()],
                          return_annotation=inspect.Signature.empty))
    sig = re.sub(r" at 0x[0-9a-fA-F]+", "", sig)       # reprs with addresses change every run
    return f"{name}{sig}"


def docstring_to_markdown(doc: str) -> str:
    """Google-style docstring -> markdown: sections become bold labels with bullet
    lists, ``>>>`` examples become ``pycon`` blocks, ``::`` blocks become code."""
    lines = doc.replace("``", "`").splitlines()
    out: list[str] = []
    i = 0
    section = None
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i].rstrip())
                i += 1
            out += ["", "```pycon", *block, "```", ""]
            section = None
            continue
        header = stripped[:-1] if stripped.endswith(":") else None
        if header in SECTIONS and not line.startswith(" "):
            section = header
            out += ["", f"**{header}:**", ""]
            i += 1
            continue
        if stripped.endswith("::") and not line.startswith(" " * 4):
            text = line.rstrip()[:-1]
            out.append(text)
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            indent = len(lines[i]) - len(lines[i].lstrip()) if i < len(lines) else 0
            block = []
            while i < len(lines) and (not lines[i].strip() or
                                      len(lines[i]) - len(lines[i].lstrip()) >= max(indent, 1)):
                block.append(lines[i][indent:].rstrip())
                i += 1
            while block and not block[-1]:
                block.pop()
            out += ["", "```python no-run", *block, "```", ""]
            continue
        if section in ("Args", "Arguments", "Raises", "Attributes") and line.startswith("  ") \
                and not line.startswith("    "):
            m = re.match(r"\s*([\w*., \[\]|`]+?):\s(.*)", line)
            if m:
                out.append(f"- `{m.group(1).strip('`')}`: {m.group(2)}")
            else:
                out.append(f"- {stripped}")
            i += 1
            while i < len(lines) and lines[i].startswith("    ") and lines[i].strip() \
                    and not lines[i].strip().startswith(">>>"):
                out[-1] += " " + lines[i].strip()
                i += 1
            continue
        if not stripped:
            section = section if section and i + 1 < len(lines) and \
                lines[i + 1].startswith("  ") else None
        out.append(stripped if section else line.rstrip())
        i += 1
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def anchor(modname: str) -> str:
    return modname.replace(".", "")


def render() -> str:
    """The whole of docs/api.md."""
    mods = namespaces()
    parts = [
        "# API reference",
        "",
        "<!-- Generated from the docstrings by docs/generate_api.py; do not edit by hand.",
        "     Regenerate with: python docs/generate_api.py -->",
        "",
        "Every public name of funcdiff, with its signature and docstring. The examples "
        "(`>>>`) are run by the test suite. Arrays are plain `numpy.ndarray`s outside "
        "transforms; see the [README](../README.md) for an introduction, "
        "[from-pytorch.md](from-pytorch.md) for a guide from PyTorch autograd, and "
        "[sharp-bits.md](sharp-bits.md) for the conventions that surprise.",
        "",
        "| namespace | names |",
        "|---|---|",
    ]
    for modname in mods:
        parts.append(f"| [`{modname}`](#{anchor(modname)}) | {len(public_names(modname))} |")
    for modname in mods:
        parts += ["", f"## {modname}", ""]
        module = importlib.import_module(modname)
        module_doc = inspect.getdoc(module) or ""
        if module_doc:
            parts += [docstring_to_markdown(module_doc.split("\n\n")[0]), ""]
        names = public_names(modname)
        numpy_objects = [n for n in names if is_numpy_object(modname, n, getattr(module, n, None))]
        submodules = [n for n in names if isinstance(getattr(module, n, None), types.ModuleType)]
        children = [m[len(modname) + 1:] for m in mods if m.startswith(modname + ".")]
        submodules += [c for c in children if "." not in c and c not in submodules]
        documented = [n for n in names if n not in numpy_objects and n not in submodules]
        if submodules:
            parts.append("Submodules: " + ", ".join(
                f"[`{modname}.{n}`](#{anchor(modname + '.' + n)})" for n in submodules) + ".")
            parts.append("")
        if modname in TABLE_NAMESPACES:
            parts += ["| name | summary |", "|---|---|"]
            for name in documented:
                obj = getattr(module, name)
                summary = (_own_doc(obj).split("\n\n")[0].replace("\n", " ")
                           .replace("``", "`").replace("|", "\\|"))
                parts.append(f"| `{name}` | {summary or '(no docstring)'} |")
        else:
            for name in documented:
                obj = getattr(module, name)
                kind = "class" if inspect.isclass(obj) else ""
                parts += [f"### `{modname}.{name}`", "",
                          f"```python no-run\n{kind + ' ' if kind else ''}"
                          f"{signature(name, obj)}\n```", "",
                          docstring_to_markdown(_own_doc(obj)) or "(no docstring)", ""]
        if numpy_objects:
            parts += ["", "Re-exported from numpy unchanged: " +
                      ", ".join(f"`{n}`" for n in numpy_objects) + ".", ""]
    return "\n".join(parts).rstrip() + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if docs/api.md is out of date, without writing it")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        with open(API_MD) as fh:
            current = fh.read()
        if current != text:
            print("docs/api.md is out of date: run python docs/generate_api.py")
            return 1
        print("docs/api.md is up to date")
        return 0
    with open(API_MD, "w") as fh:
        fh.write(text)
    missing = undocumented()
    print(f"wrote {os.path.relpath(API_MD)}"
          + (f"; names without a docstring: {', '.join(missing)}" if missing else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
