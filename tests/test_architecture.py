"""The layering the design promises, measured from the source (see source_metrics.py).

Imports flow one way (core -> interpreters -> passes -> compiler -> primitives ->
numpy/scipy/nn -> api); the layers that run cards never name a primitive; an
underscore means private to one module.
"""

import pytest

import source_metrics as M

# Imports inside functions that remain, each for a reason its comment gives.
MAX_FUNCTION_LEVEL_IMPORTS = 0  # the registry redesign brought it to zero: keep it there
MAX_PRIVATE_NAMES_IMPORTED = 120
MAX_PRIVATE_TOP_LEVEL_MODULES = 2
# String literals in interpreters/, passes/, compiler/ allowed to equal a primitive's
# name: (file, string) -> why. At most three.
ALLOWED_NAME_STRINGS = {
    ("funcdiff/interpreters/call.py", "call"):
        "the call primitive's own definition: jit's evaluator and the inlining pass need "
        "the object below the cards",
}


def test_no_module_level_import_cycle():
    cycles = M.module_import_cycles()
    assert not cycles, "modules that import each other at import time: " + "; ".join(
        " <-> ".join(group) for group in cycles)


def test_imports_inside_functions_are_few():
    found = M.function_level_imports()
    assert len(found) <= MAX_FUNCTION_LEVEL_IMPORTS, (
        f"{len(found)} imports inside functions (at most {MAX_FUNCTION_LEVEL_IMPORTS}): "
        "put the import at the top of the module, or hand the value down from the layer "
        "above:\n" + "\n".join(found))


def test_private_names_stay_in_their_module():
    found = M.private_names_imported()
    assert len(found) <= MAX_PRIVATE_NAMES_IMPORTED, (
        f"{len(found)} underscore names used outside their module (at most "
        f"{MAX_PRIVATE_NAMES_IMPORTED}): a name another module uses gets a plain name.\n"
        + "\n".join(found[:50]))


def test_private_modules_at_the_top_level_are_few():
    found = M.private_top_level_modules()
    assert len(found) <= MAX_PRIVATE_TOP_LEVEL_MODULES, found


def test_hook_layers_name_no_primitive():
    found = [line for line in M.primitive_name_strings()
             if (line.split(":", 1)[0], eval(line.split(": ", 1)[1]))
             not in ALLOWED_NAME_STRINGS]
    assert len(ALLOWED_NAME_STRINGS) <= 3
    assert not found, ("interpreters, passes and the compiler look primitives up by object "
                       "(a trait, a role or a rule on the card), never by name:\n"
                       + "\n".join(found))


def test_imports_flow_downward():
    """No module imports a higher layer, at import time or inside a function."""
    found = M.upward_imports()
    assert not found, ("a lower layer must not reach up (hand the value down instead: a "
                       "role or slot the higher layer fills):\n" + "\n".join(found))


def test_every_module_has_a_layer():
    assert all(M.layer_of(m) is not None for m in M.source_modules())


@pytest.mark.parametrize("broken,check", [
    ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}}, [["a", "b", "c"]]),
])
def test_cycle_finder_finds_cycles(broken, check):
    assert sorted(M.strongly_connected(broken)) == check
