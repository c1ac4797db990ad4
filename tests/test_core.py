"""Core engine: dtype promotion, the jaxpr IR, tracing, nesting, coverage and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.core import Primitive, ShapedArray, all_primitives, get_aval
from funcdiff.errors import (ConcretizationError, DTypeError, FunctionalDiffError,
                             InvalidArgumentError, JaxprTypeError, ShapeError)
from funcdiff.ir import Eqn, Jaxpr, Var, check_jaxpr

# ---------------------------------------------------------------------------
# dtype promotion matches numpy 2 (NEP 50)

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64]
SCALARS = [True, 3, -2, 2.5]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES + SCALARS))
def test_result_type_matches_numpy(a, b):
    expected = np.result_type(np.dtype(a), b if not isinstance(b, type) else np.dtype(b))
    assert dtypes.result_type(np.dtype(a), b) == expected


@pytest.mark.parametrize("a,b", [(1, 2.0), (True, 1), (2.0, True), (1, 1)])
def test_result_type_of_python_scalars_alone(a, b):
    assert dtypes.result_type(a, b) == np.result_type(np.asarray(a), np.asarray(b))


def test_result_type_rejects_strings():
    with pytest.raises(DTypeError, match="does not support"):
        dtypes.check_dtype(np.dtype("U3"))


# ---------------------------------------------------------------------------
# Printed jaxprs (golden strings)


def test_print_sin_sum():
    text = str(fd.make_jaxpr(lambda x: fnp.sum(fnp.sin(x)))(np.ones(3)))
    assert text == ("{ lambda ; a:f64[3]. let\n"
                    "    b:f64[3] = sin a\n"
                    "    c:f64[] = reduce_sum[axes=(0,)] b\n"
                    "  in (c,) }")


def test_print_literal_and_float32():
    text = str(fd.make_jaxpr(lambda x: x * 2.0)(np.ones(2, np.float32)))
    assert text == ("{ lambda ; a:f32[2]. let\n"
                    "    b:f32[2] = mul a 2.0:f32[]\n"
                    "  in (b,) }")


def test_print_constants_and_multiple_outputs():
    w = np.arange(6.0).reshape(2, 3)
    text = str(fd.make_jaxpr(lambda x: (x @ w, x))(np.ones(2)))
    assert text.startswith("{ lambda a:f64[2,3] ; b:f64[2]. let")
    assert "dot_general" in text and text.endswith("in (c, b) }")


def test_make_jaxpr_trees_and_static_args():
    def f(params, n):
        return {"out": params["w"] * n, "n": params["b"]}
    j = fd.make_jaxpr(f, static_argnums=1)({"w": np.ones(2), "b": np.zeros(())}, 3)
    assert j.in_tree == fd.tree_util.tree_structure(({"w": 0, "b": 0},))
    assert j.out_tree == fd.tree_util.tree_structure({"out": 0, "n": 0})
    assert "3" in str(j)


# ---------------------------------------------------------------------------
# eval_jaxpr(make_jaxpr(f)) == f, and every produced jaxpr type-checks


def mlp(params, x):
    (w1, b1), (w2, b2) = params
    h = fnp.tanh(x @ w1 + b1)
    return fnp.sum((h @ w2 + b2) ** 2)


def softmax(x):
    z = x - fnp.max(x, axis=-1, keepdims=True)
    e = fnp.exp(z)
    return e / fnp.sum(e, axis=-1, keepdims=True)


def tree_fn(d):
    return {"sum": d["a"] + d["b"][0], "prod": d["a"] * d["b"][1]}


rng = np.random.default_rng(0)
MLP_ARGS = ([(rng.standard_normal((4, 8)), rng.standard_normal(8)),
             (rng.standard_normal((8, 3)), rng.standard_normal(3))], rng.standard_normal((5, 4)))
CASES = [
    (mlp, MLP_ARGS),
    (softmax, (rng.standard_normal((3, 5)),)),
    (tree_fn, ({"a": rng.standard_normal(3), "b": [rng.standard_normal(3), 2.0]},)),
]


@pytest.mark.parametrize("f,args", CASES, ids=["mlp", "softmax", "pytree"])
def test_eval_jaxpr_matches_function(f, args):
    closed = fd.make_jaxpr(f)(*args)
    check_jaxpr(closed.jaxpr)
    leaves = fd.tree_util.tree_leaves(args)
    outs = fd.eval_jaxpr(closed.jaxpr, closed.consts, *leaves)
    expected = fd.tree_util.tree_leaves(f(*args))
    assert len(outs) == len(expected)
    for o, e in zip(outs, expected):
        np.testing.assert_allclose(o, e, rtol=1e-12)


def test_linearized_and_transposed_programs_type_check():
    from funcdiff.interpreters.linearize import linearize_flat
    leaves, tree = fd.tree_util.tree_flatten(MLP_ARGS)
    _, lin = linearize_flat(lambda *l: [mlp(*fd.tree_util.tree_unflatten(tree, l))], leaves)
    check_jaxpr(lin.jaxpr.jaxpr)
    grad_jaxpr = fd.make_jaxpr(fd.grad(mlp))(*MLP_ARGS)
    check_jaxpr(grad_jaxpr.jaxpr)


def test_check_jaxpr_rejects_bad_programs():
    a = Var(ShapedArray((3,), np.dtype(np.float64)))
    b = Var(ShapedArray((4,), np.dtype(np.float64)))  # wrong declared shape
    sin_p = all_primitives()["sin"]
    with pytest.raises(JaxprTypeError, match="declared"):
        check_jaxpr(Jaxpr([], [a], [Eqn(sin_p, [a], {}, [b])], [b]))
    c = Var(ShapedArray((3,), np.dtype(np.float64)))
    with pytest.raises(JaxprTypeError, match="before it is defined"):
        check_jaxpr(Jaxpr([], [a], [Eqn(sin_p, [c], {}, [b])], [b]))


# ---------------------------------------------------------------------------
# Tracers behave like arrays; abstract ones refuse concretization


def test_tracer_array_interface_under_make_jaxpr():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, ndim=x.ndim, dtype=x.dtype, size=x.size, len=len(x))
        rows = [r for r in x]
        return x.T.reshape(-1).astype(np.float32).sum() + rows[0].mean() + x.max() - x.min() \
            + x.dot(x.T).sum() + x[1, ::2].sum()
    fd.make_jaxpr(f)(np.ones((2, 3)))
    assert seen == dict(shape=(2, 3), ndim=2, dtype=np.dtype(np.float64), size=6, len=2)


@pytest.mark.parametrize("convert", [bool, float, int, lambda t: [0, 1][t]])
def test_concretization_error_names_operation_and_fix(convert):
    def f(x):
        return convert(x.sum() > 0)
    with pytest.raises(ConcretizationError, match="lax.cond") as info:
        fd.make_jaxpr(f)(np.ones(3))
    assert "test_core.py" in str(info.value)  # the user's source line


def test_concrete_tracers_allow_python_control_flow_under_grad():
    def f(x):
        return x ** 2 if x > 0 else -x
    assert fd.grad(f)(3.0) == 6.0
    assert fd.grad(f)(-3.0) == -1.0


def test_setitem_on_tracer_explains_at():
    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(FunctionalDiffError, match=r"\.at\["):
        fd.make_jaxpr(f)(np.ones(3))


# ---------------------------------------------------------------------------
# Nesting: no perturbation confusion


def test_perturbation_confusion_grad():
    assert fd.grad(lambda x: x * fd.grad(lambda y: x + y)(1.0))(1.0) == 1.0


def test_perturbation_confusion_jvp():
    def f(x):
        inner = fd.jvp(lambda y: x * y, (1.0,), (1.0,))[1]  # d/dy (x*y) = x
        return x * inner  # x**2 -> derivative 2x
    assert fd.jvp(f, (3.0,), (1.0,))[1] == 6.0


def test_perturbation_confusion_vjp_in_grad():
    def f(x):
        _, pull = fd.vjp(lambda y: x + y, 1.0)
        return x * pull(1.0)[0]
    assert fd.grad(f)(2.0) == 1.0


def test_perturbation_confusion_vmap():
    def f(x):
        return fd.vmap(lambda y: x * y)(np.arange(3.0)).sum()
    assert fd.grad(f)(2.0) == 3.0


# ---------------------------------------------------------------------------
# Coverage: every primitive fills every rule slot it needs


def _slots(p: Primitive):
    return dict(impl=p.impl is not None, abstract_eval=p.abstract_eval is not None,
                jvp=p.jvp is not None or p.nondifferentiable,
                transpose=p.transpose is not None or not p.linear,
                batch=p.batch is not None, cost=p.cost is not None)


def test_rule_coverage():
    missing = {name: [s for s, ok in _slots(p).items() if not ok]
               for name, p in all_primitives().items()}
    missing = {k: v for k, v in missing.items() if v}
    assert not missing, f"primitives with empty rule slots: {missing}"


def test_core_primitive_set_exists():
    required = """neg sign floor ceil round abs exp exp2 log log1p expm1 sqrt rsqrt cbrt sin cos
    tan asin acos atan sinh cosh tanh asinh acosh atanh logistic erf erfc erf_inv lgamma
    digamma is_finite add sub mul div rem pow integer_pow max min atan2 eq ne lt le gt ge
    and or xor not select convert_element_type iota reduce_sum reduce_max reduce_min
    reduce_prod argmax argmin reduce_and reduce_or broadcast_in_dim reshape transpose
    squeeze expand_dims slice dynamic_slice dynamic_update_slice pad concatenate rev
    dot_general gather scatter scatter_add cumsum cumprod cummax cummin sort""".split()
    names = set(all_primitives())
    assert not [r for r in required if r not in names]


# ---------------------------------------------------------------------------
# Bad input


def test_bad_input_object_dtype():
    with pytest.raises(FunctionalDiffError, match="dtype"):
        fd.grad(lambda x: x.sum())(np.array(["a", "b"]))


def test_bad_input_non_array():
    with pytest.raises(InvalidArgumentError, match="expected arrays"):
        fd.grad(lambda x: x)(object())


def test_bad_input_shape_mismatch_names_both_shapes():
    with pytest.raises(ShapeError, match=r"\(3,\).*\(4,\)"):
        fd.make_jaxpr(lambda x, y: x + y)(np.ones(3), np.ones(4))


def test_bad_input_invalid_axis():
    with pytest.raises(FunctionalDiffError, match="axis"):
        fd.make_jaxpr(lambda x: fnp.sum(x, axis=3))(np.ones(3))


def test_get_aval_rejects_objects():
    with pytest.raises(InvalidArgumentError):
        get_aval({"a": 1})


def _cyclic_garbage(fn):
    """The types of the objects only Python's cycle collector could free after ``fn()``."""
    import collections
    import gc
    fn()  # caches (plans, compiled programs) are filled by the first call
    while gc.collect():  # a collection can free more (weak-keyed caches drop entries)
        pass
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        fn()
        gc.collect()
        return collections.Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


def test_transforms_leave_no_reference_cycles():
    """A transform's trace and everything it recorded (the tape's residual arrays,
    staged equations) are freed when it returns, not at the next run of the cycle
    collector: a main trace lets go of its trace on exit."""
    w, x, xs = np.random.default_rng(0).standard_normal((3, 3)), np.ones(3), np.ones((2, 3))

    def f(x):
        return fnp.sum(fnp.sin(w @ x) ** 2)
    calls = {
        "grad": lambda: fd.grad(f)(x), "value_and_grad": lambda: fd.value_and_grad(f)(x),
        "vjp": lambda: fd.vjp(f, x)[1](1.0), "jvp": lambda: fd.jvp(f, (x,), (x,)),
        "linearize": lambda: fd.linearize(f, x)[1](x), "vmap": lambda: fd.vmap(f)(xs),
        "jacfwd": lambda: fd.jacfwd(f)(x), "jacrev": lambda: fd.jacrev(fnp.sin)(x),
        "hessian": lambda: fd.hessian(f)(x), "hvp": lambda: fd.hvp(f, (x,), (x,)),
        "make_jaxpr": lambda: fd.make_jaxpr(f)(x)}
    for name, call in calls.items():
        assert _cyclic_garbage(call) == {}, name


def test_the_tape_frees_its_residuals_when_grad_returns():
    import gc
    import weakref
    refs = []

    def f(x):
        h = fnp.tanh(x * 2.0)
        refs.append(weakref.ref(h.primal))  # kept by the tape for the backward pass
        return fnp.sum(h * h)
    enabled = gc.isenabled()
    gc.disable()
    try:
        fd.grad(f)(np.ones(4))
        assert refs[0]() is None
    finally:
        if enabled:
            gc.enable()
