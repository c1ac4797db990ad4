"""The documentation runs and is in sync with the code.

Every fenced block marked exactly ```python in README.md and docs/*.md is
executed, the blocks of one file in order in one shared namespace (so a page
reads like a session). Blocks marked ```python no-run, and blocks in other
languages (bash, pycon, text), are skipped. docs/api.md must equal what
docs/generate_api.py generates from the docstrings, and every public name
must have a docstring.
"""

from __future__ import annotations

import difflib
import glob
import importlib.util
import os
import re
import subprocess
import sys
import warnings

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKDOWN = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def load_generator():
    spec = importlib.util.spec_from_file_location("generate_api",
                                                  os.path.join(ROOT, "docs", "generate_api.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def code_blocks(text: str) -> list[tuple[str, int, str]]:
    """(info string, first line number, code) of each fenced block."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+)\s*(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.groups()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not re.match(rf"^\s*{fence}\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        blocks.append((info.strip(), start + 1, "\n".join(body) + "\n"))
        i += 1
    return blocks


def test_code_block_parser():
    text = "a\n```python\nx = 1\n```\n```python no-run\ny\n```\n```bash\nls\n```\n"
    assert code_blocks(text) == [("python", 3, "x = 1\n"), ("python no-run", 6, "y\n"),
                                 ("bash", 9, "ls\n")]


def run_page(path: str) -> str | None:
    """Run the page's python blocks in order in one namespace; the first failure, or None."""
    with open(path) as fh:
        blocks = [(line, code) for info, line, code in code_blocks(fh.read()) if info == "python"]
    namespace: dict = {"__name__": "__docs__"}
    rel = os.path.relpath(path, ROOT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # numpy's domain warnings in examples
        for line, code in blocks:
            try:
                exec(compile(code, f"{rel}:{line}", "exec"), namespace)
            except Exception as e:
                return f"the python block at {rel} line {line} failed: {type(e).__name__}: {e}"
    return None


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: os.path.relpath(p, ROOT))
def test_python_blocks_run(path, tmp_path):
    """Each page runs in a fresh interpreter, as a reader would run it: a page that
    declares a primitive (adding-a-primitive.md) leaves no trace in the registry the
    other tests read. A block that writes files writes them in a temporary folder."""
    done = subprocess.run([sys.executable, __file__, path], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    if done.returncode:
        pytest.fail(done.stdout.strip() or done.stderr.strip()[-3000:])


def test_every_doc_page_has_runnable_examples():
    for path in MARKDOWN:
        if os.path.basename(path) == "api.md":
            continue                      # its examples are docstrings, run as doctests
        with open(path) as fh:
            infos = [info for info, _, _ in code_blocks(fh.read())]
        if os.path.basename(path) in ("from-pytorch.md", "sharp-bits.md", "README.md"):
            assert infos.count("python") >= 2, path


def test_local_links_point_to_existing_files():
    broken = []
    for path in MARKDOWN:
        with open(path) as fh:
            text = fh.read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)    # code is not markdown
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"^[a-z]+://", target) or target.startswith("mailto:"):
                continue
            if not os.path.exists(os.path.join(os.path.dirname(path), target)):
                broken.append(f"{os.path.relpath(path, ROOT)} -> {target}")
    assert not broken, broken


def test_api_reference_is_in_sync_with_the_docstrings():
    generator = load_generator()
    with open(generator.API_MD) as fh:
        current = fh.read()
    fresh = generator.render()
    if current != fresh:
        diff = list(difflib.unified_diff(current.splitlines(), fresh.splitlines(),
                                         "docs/api.md", "generated", n=1, lineterm=""))
        pytest.fail("docs/api.md is out of date with the docstrings: run "
                    "`python docs/generate_api.py`. First differences:\n" + "\n".join(diff[:30]))


def test_every_public_name_is_documented():
    generator = load_generator()
    assert generator.undocumented() == []
    import funcdiff
    with open(generator.API_MD) as fh:
        api = fh.read()
    for name in funcdiff.__all__:
        if name in generator.public_names("funcdiff") and not \
                isinstance(getattr(funcdiff, name), type(funcdiff)):
            assert f"### `funcdiff.{name}`" in api, name
    for modname in generator.namespaces():
        assert f"\n## {modname}\n" in api, modname


def test_namespaces_include_the_user_facing_modules():
    namespaces = load_generator().namespaces()
    assert namespaces[0] == "funcdiff"
    assert {"funcdiff.numpy", "funcdiff.tree_util", "funcdiff.test_util"} <= set(namespaces)
    assert not any(n.startswith(("funcdiff.core", "funcdiff.interpreters", "funcdiff.primitives"))
                   for n in namespaces)


def test_docstring_conversion():
    md = load_generator().docstring_to_markdown(
        "Summary with ``code``.\n\nArgs:\n  x: the input,\n    continued.\n  y: other.\n\n"
        "Returns:\n  The result.\n\nEquivalent to::\n\n    y = f(x)\n\n>>> 1 + 1\n2\n")
    assert "Summary with `code`." in md
    assert "- `x`: the input, continued." in md and "- `y`: other." in md
    assert "**Returns:**" in md and "```python no-run\ny = f(x)\n```" in md
    assert "```pycon\n>>> 1 + 1\n2\n```" in md


def test_every_docstring_example_in_the_package_runs():
    """Every example in every module's docstrings runs and prints what it shows
    (modules' own tests run theirs too; this one leaves no module out)."""
    import doctest
    import importlib
    import pkgutil

    import numpy as np

    import funcdiff
    attempted, failed = 0, []
    for info in pkgutil.walk_packages(funcdiff.__path__, "funcdiff."):
        module = importlib.import_module(info.name)
        result = doctest.testmod(module, extraglobs={"np": np}, report=False,
                                 optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
        attempted += result.attempted
        if result.failed:
            failed.append(info.name)
    assert not failed, failed
    assert attempted > 500


if __name__ == "__main__":
    failure = run_page(sys.argv[1])
    if failure:
        print(failure)
        sys.exit(1)


def test_public_namespaces_show_only_public_names():
    """dir() of every documented module lists its __all__: no np, Any, annotations,
    functools or helper modules leak into what users browse."""
    import importlib
    leaks = {}
    for modname in load_generator().namespaces():
        module = importlib.import_module(modname)
        public = set(getattr(module, "__all__", ()))
        extra = sorted(n for n in dir(module) if not n.startswith("_") and n not in public)
        if not public or extra:
            leaks[modname] = extra or "no __all__"
    assert not leaks, leaks
