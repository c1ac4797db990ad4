"""Facts about funcdiff's source read with ``ast``: the import graph and what crosses modules.

- ``module_import_cycles``: strongly connected groups of the module-level import graph;
- ``function_level_imports``: ``import`` statements inside functions;
- ``private_names_imported``: ``_name``s a module takes from another funcdiff module
  (``from m import _x`` and ``m._x`` on an imported module);
- ``private_top_level_modules``: ``funcdiff/_*.py``;
- ``primitive_name_strings``: string literals in the layers that own hooks
  (``funcdiff/interpreters``, ``funcdiff/passes``, ``funcdiff/compiler``) that equal a
  primitive's name.

Run as a script to print them all.
"""

from __future__ import annotations

import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "funcdiff"
HOOK_LAYERS = ("interpreters", "passes", "compiler")  # they run cards, never name them


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_modules() -> dict[str, pathlib.Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def parse(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imported_modules(module: str, path: pathlib.Path, node: ast.AST, modules) -> list[str]:
    """The funcdiff modules one import statement loads."""
    found = []
    if isinstance(node, ast.Import):
        found = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        source = _resolve(module, path.name == "__init__.py", node)
        found = [f"{source}.{alias.name}" for alias in node.names]
        if not all(name in modules for name in found):
            found.append(source)  # names taken from the module itself, not submodules
    # A package a module sits in is loaded before the module in any case.
    return [name for name in found if name in modules and not module.startswith(name + ".")]


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def module_level_imports(module: str, path: pathlib.Path, tree: ast.Module, modules):
    """Imports run when the module is first imported (not inside functions or TYPE_CHECKING)."""
    def visit(nodes):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if _is_type_checking_block(node):
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                yield from _imported_modules(module, path, node, modules)
            else:
                yield from visit(ast.iter_child_nodes(node))
    return set(visit(tree.body)) - {module}


def all_imports(module: str, path: pathlib.Path, tree: ast.Module, modules) -> set[str]:
    """Every funcdiff module the module imports, at import time or inside functions."""
    found = set()
    for node in ast.walk(tree):
        found.update(_imported_modules(module, path, node, modules))
    return found - {module}


def full_import_graph() -> dict[str, set[str]]:
    modules = source_modules()
    return {m: all_imports(m, p, parse(p), modules) for m, p in modules.items()}


def import_graph() -> dict[str, set[str]]:
    modules = source_modules()
    return {m: module_level_imports(m, p, parse(p), modules) for m, p in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively; groups of two or more modules only."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def module_import_cycles() -> list[list[str]]:
    return strongly_connected(import_graph())


def function_level_imports() -> list[str]:
    """``file:line`` of every import statement inside a function."""
    found = []
    for module, path in source_modules().items():
        for func in ast.walk(parse(path)):
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(func):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return sorted(set(found))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_names_imported() -> list[str]:
    """``module: source._name`` for each private name one module takes from another."""
    modules = source_modules()
    found = set()
    for module, path in modules.items():
        tree = parse(path)
        module_aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _resolve(module, path.name == "__init__.py", node)
                if source not in modules:
                    continue
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    if full in modules:
                        module_aliases[alias.asname or alias.name] = full
                        if _private(alias.name) and source.rsplit(".", 1)[0] != module.rsplit(".", 1)[0]:
                            pass
                    elif _private(alias.name):
                        found.add(f"{module}: {source}.{alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules and alias.asname:
                        module_aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr)
                    and isinstance(node.value, ast.Name) and node.value.id in module_aliases):
                found.add(f"{module}: {module_aliases[node.value.id]}.{node.attr}")
    return sorted(found)


def private_top_level_modules() -> list[str]:
    return sorted(p.name for p in PACKAGE.glob("_*.py") if p.name != "__init__.py")


def primitive_names() -> set[str]:
    sys.path.insert(0, str(ROOT))
    import funcdiff  # noqa: F401  (registers every primitive)
    from funcdiff.core import all_primitives
    return set(all_primitives())


def primitive_name_strings(names: set[str] | None = None) -> list[str]:
    """``file:line: 'name'`` for each string literal of a hook-owning layer naming a primitive."""
    names = primitive_names() if names is None else names
    found = []
    paths = [p for layer in HOOK_LAYERS for p in (PACKAGE / layer).rglob("*.py")]
    for path in sorted(paths):
        tree = parse(path)
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef,
                                           ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and node.value in names and id(node) not in docstrings):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    return found


# The layers, lowest first: a module imports only from its own layer and lower ones.
# A module belongs to the layer of the longest prefix that names it.
LAYERS = (
    ("core", ("funcdiff.core", "funcdiff.ir", "funcdiff.dtypes", "funcdiff.errors", "funcdiff.roles",
              "funcdiff.backends", "funcdiff.bridge", "funcdiff.dot",
              "funcdiff.configuration",
              "funcdiff.pytrees", "funcdiff.tree_util")),
    ("interpreters", ("funcdiff.interpreters",)),
    ("passes", ("funcdiff.passes",)),
    ("compiler", ("funcdiff.compiler",)),
    ("primitives", ("funcdiff.primitives",)),
    ("libraries", ("funcdiff.numpy", "funcdiff.scipy", "funcdiff.nn", "funcdiff.lax",
                   "funcdiff.lax_operations", "funcdiff.lax_solvers", "funcdiff.random",
                   "funcdiff.custom_derivatives")),
    ("api", ("funcdiff", "funcdiff.compiler.jit")),
)


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    return best


def upward_imports() -> list[str]:
    """``importer (layer) -> imported (layer)`` for each import of a higher layer."""
    found = []
    for module, targets in sorted(full_import_graph().items()):
        for target in sorted(targets):
            if layer_of(target) > layer_of(module):
                found.append(f"{module} ({LAYERS[layer_of(module)][0]}) -> "
                             f"{target} ({LAYERS[layer_of(target)][0]})")
    return found


def report() -> None:
    cycles = module_import_cycles()
    print(f"module-level import cycles: {len(cycles)} "
          f"({sum(map(len, cycles))} modules)")
    for group in cycles:
        print("   ", " ".join(group))
    inner = function_level_imports()
    print(f"imports inside functions: {len(inner)}")
    private = private_names_imported()
    print(f"private names imported across modules: {len(private)}")
    print(f"private top-level modules: {private_top_level_modules()}")
    upward = upward_imports()
    print(f"imports of a higher layer: {len(upward)}")
    strings = primitive_name_strings()
    print(f"primitive names as strings in {'/, '.join(HOOK_LAYERS)}/: {len(strings)}")
    if "-v" in sys.argv:
        for line in inner + private + upward + strings:
            print("   ", line)


if __name__ == "__main__":
    report()
