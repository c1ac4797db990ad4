"""The parts of JAX's API that ports reach for: key paths, self-flattening classes,
Partial, eval_shape, fd.Array, block_until_ready, jit(...).lower().compile(),
donate_argnums, where(size=) and vectorize."""

import dataclasses
import collections

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.tree_util import (DictKey, FlattenedIndexKey, GetAttrKey, Partial, SequenceKey,
                                keystr, register_dataclass, register_pytree_node,
                                register_pytree_node_class, tree_flatten_with_path,
                                tree_leaves, tree_map_with_path)

Point = collections.namedtuple("Point", "x y")


@register_dataclass
@dataclasses.dataclass
class Layer:
    w: float
    b: float


class Opaque:
    def __init__(self, a, b):
        self.a, self.b = a, b


register_pytree_node(Opaque, lambda o: ((o.a, o.b), None), lambda _, ch: Opaque(*ch))


def test_key_paths_name_every_kind_of_node():
    tree = {"p": Point(1.0, 2.0), "layers": [Layer(3.0, 4.0)], "o": Opaque(5.0, 6.0)}
    pairs, treedef = tree_flatten_with_path(tree)
    assert [leaf for _, leaf in pairs] == tree_leaves(tree)
    assert [keystr(p) for p, _ in pairs] == [
        "['layers'][0].w", "['layers'][0].b", "['o'][<flat index 0>]", "['o'][<flat index 1>]",
        "['p'].x", "['p'].y"]
    assert pairs[0][0] == (DictKey("layers"), SequenceKey(0), GetAttrKey("w"))
    assert pairs[2][0][1] == FlattenedIndexKey(0)


def test_tree_map_with_path_sees_paths_and_checks_structures():
    params = {"w": np.ones(2), "b": np.ones(1)}
    decayed = tree_map_with_path(lambda p, x: x * (0.5 if p[-1].key == "w" else 1.0), params)
    assert decayed["w"].tolist() == [0.5, 0.5] and decayed["b"].tolist() == [1.0]
    summed = tree_map_with_path(lambda p, x, y: x + y, params, params)
    assert summed["w"].tolist() == [2.0, 2.0]
    with pytest.raises(fd.errors.TreeStructureError):
        tree_map_with_path(lambda p, x, y: x, params, {"w": 1.0})


@register_pytree_node_class
class Scaled:
    def __init__(self, value, scale):
        self.value, self.scale = value, scale

    def tree_flatten(self):
        return (self.value,), self.scale

    @classmethod
    def tree_unflatten(cls, scale, children):
        return cls(children[0], scale)


def test_self_flattening_classes_go_through_transforms():
    g = fd.grad(lambda s: fnp.sum(s.value ** 2) * s.scale)(Scaled(np.array([1.0, 2.0]), 3.0))
    assert isinstance(g, Scaled) and g.value.tolist() == [6.0, 12.0] and g.scale == 3.0
    with pytest.raises(fd.tree_util.PyTreeRegistrationError, match="tree_flatten"):
        register_pytree_node_class(type("Bare", (), {}))


def test_partial_is_a_pytree_of_its_bound_arguments():
    loss = Partial(lambda w, x: fnp.sum((w * x) ** 2), np.array([1.0, 2.0]))
    assert fd.jit(lambda f, x: f(x))(loss, np.ones(2)) == 5.0
    g = fd.grad(lambda f: f(np.array([1.0, 1.0])))(loss)
    assert isinstance(g, Partial) and g.args[0].tolist() == [2.0, 4.0]
    nested = Partial(Partial(np.add, 1.0))
    assert nested(2.0) == 3.0 and len(tree_leaves(nested)) == 1


def test_eval_shape_computes_nothing():
    calls = []

    def f(x, w):
        calls.append(type(x).__name__)
        return {"h": fnp.tanh(x @ w), "n": fnp.sum(x > 0)}
    out = fd.eval_shape(f, fd.ShapeDtypeStruct((8, 3), np.float32), np.ones((3, 5), np.float32))
    assert out == {"h": fd.ShapeDtypeStruct((8, 5), np.float32),
                   "n": fd.ShapeDtypeStruct((), np.int64)}
    assert calls == ["JaxprTracer"]
    with pytest.raises(InvalidArgumentError, match="ShapeDtypeStruct"):
        fd.eval_shape(f, "not an array", np.ones(3))


def test_array_type_and_block_until_ready():
    seen = []
    fd.jit(lambda x: seen.append(isinstance(x, fd.Array)) or x)(np.ones(2))
    assert seen == [True] and isinstance(np.ones(1), fd.Array)
    assert not isinstance([1.0], fd.Array)
    with pytest.raises(InvalidArgumentError, match="isinstance"):
        fd.Array()
    tree = {"a": np.ones(2)}
    assert fd.block_until_ready(tree)["a"] is tree["a"]


def test_lower_compile_and_donation():
    f = fd.jit(lambda x, y: fnp.sin(x) * y, donate_argnums=(0,))
    lowered = f.lower(np.ones(3), 2.0)
    assert "f64[3]" in repr(lowered) and "equations" in repr(lowered)
    compiled = lowered.compile()
    assert repr(compiled) == "Compiled(jit(<lambda>) for (f64[3], f64[]) -> (f64[3]))"
    np.testing.assert_allclose(compiled(np.zeros(3), 2.0), np.zeros(3))
    with pytest.raises(InvalidArgumentError, match="compiled for arguments"):
        compiled(np.zeros(4), 2.0)
    x = np.ones(3)
    f(x, 2.0)
    assert x.tolist() == [1.0, 1.0, 1.0]  # a donated argument is never written


def test_where_with_size_traces_under_jit():
    c = np.array([0.0, 3.0, 0.0, 5.0])
    (idx,) = fd.jit(lambda v: fnp.where(v > 1, size=3, fill_value=-1))(c)
    assert idx.tolist() == [1, 3, -1]
    with pytest.raises(InvalidArgumentError, match="one-argument form"):
        fnp.where(c > 1, c, 0.0, size=2)


VECTORIZE = [
    ("scalar", lambda x: fnp.where(x > 0.5, x * x, fnp.sin(x)), None, (np.linspace(0, 1, 6),)),
    ("broadcast", lambda x, y: x * fnp.exp(y), None,
     (np.linspace(0, 1, 3)[:, None], np.linspace(-1, 1, 4))),
    ("gufunc", lambda m, v: m @ v, "(m,n),(n)->(m)",
     (np.arange(24.0).reshape(2, 3, 4) / 10, np.linspace(-1, 1, 4))),
    ("reduction", lambda a, b: fnp.sum(a * b), "(n),(n)->()",
     (np.arange(12.0).reshape(3, 4) / 5, np.ones(4))),
]


@pytest.mark.parametrize("case", VECTORIZE, ids=[c[0] for c in VECTORIZE])
def test_vectorize_matches_numpys_and_differentiates(case):
    _, f, signature, args = case
    ours = fnp.vectorize(f, signature=signature)
    theirs = np.vectorize(lambda *a: np.asarray(f(*a)), signature=signature)
    np.testing.assert_allclose(ours(*args), theirs(*args), rtol=1e-12)
    np.testing.assert_allclose(fd.jit(ours)(*args), theirs(*args), rtol=1e-12)
    fd.test_util.check_grads(lambda *a: fnp.sum(ours(*a)), args, order=2)


def test_vectorize_excluded_arguments_and_bad_shapes():
    scaled = fnp.vectorize(lambda x, k: x * k, excluded={1})
    assert scaled(np.arange(3.0), 2).tolist() == [0.0, 2.0, 4.0]
    dot = fnp.vectorize(lambda a, b: fnp.sum(a * b), signature="(n),(n)->()")
    with pytest.raises(ShapeError, match="core dimension 'n'"):
        dot(np.ones((2, 3)), np.ones(4))
    with pytest.raises(InvalidArgumentError, match="signature"):
        fnp.vectorize(lambda a: a, signature="n->()")


def test_debug_print_runs_with_each_call_and_changes_no_derivative(capsys):
    def f(x):
        y = fnp.sin(x)
        fd.debug.print("y={} total={t}", y, t={"s": y.sum()})
        return fnp.sum(y * y)
    jitted = fd.jit(f)
    jitted(np.zeros(2))
    jitted(np.full(2, np.pi / 2))
    assert capsys.readouterr().out == ("y=[0. 0.] total={'s': array(0.)}\n"
                                       "y=[1. 1.] total={'s': array(2.)}\n")
    x = np.array([0.3, 1.1])
    np.testing.assert_allclose(fd.jit(fd.grad(f))(x), 2 * np.sin(x) * np.cos(x))
    np.testing.assert_allclose(fd.hessian(f)(x), np.diag(2 * np.cos(2 * x)), atol=1e-14)
    capsys.readouterr()
    fd.vmap(f)(np.zeros((3, 2)))
    assert capsys.readouterr().out.startswith("y=[[0. 0.]\n [0. 0.]\n [0. 0.]]")


def test_log_compiles_logs_each_trace(caplog):
    f = fd.jit(lambda x: x * 2)
    fd.config.update("jax_log_compiles", True)
    try:
        with caplog.at_level("WARNING", logger="funcdiff"):
            f(np.ones(2))
            f(np.ones(2))  # cached: no trace
            f(np.ones(3))
    finally:
        fd.config.update("log_compiles", False)
    messages = [r.getMessage() for r in caplog.records if r.name == "funcdiff"]
    assert messages == ["funcdiff: tracing jit(<lambda>) for arguments (f64[2],) (trace 1 of it)",
                        "funcdiff: tracing jit(<lambda>) for arguments (f64[3],) (trace 2 of it)"]
    with pytest.raises(InvalidArgumentError, match="no setting"):
        fd.config.update("log_everything", True)
    with pytest.raises(InvalidArgumentError, match="True or False"):
        fd.config.update("log_compiles", 1)


def test_retracing_for_changing_shapes_warns_once_naming_the_argument():
    f = fd.jit(lambda x, p: x.sum() + p["w"].sum())
    fd.config.update("retrace_warning_threshold", 3)
    try:
        with pytest.warns(fd.errors.RetraceWarning, match=r"argument 1 leaf \['w'\]") as seen:
            for n in range(2, 9):
                f(np.ones(2), {"w": np.ones(n)})
    finally:
        fd.config.update("retrace_warning_threshold", 10)
    assert len([w for w in seen if issubclass(w.category, fd.errors.RetraceWarning)]) == 1
    assert seen[0].filename == __file__


def test_initializers_take_jaxs_factory_form_and_random_keys():
    from funcdiff.nn import initializers as init
    key = fd.random.key(3)
    w = init.glorot_normal()(key, (400, 200))
    assert w.shape == (400, 200) and abs(w.var() * 300 - 1.0) < 0.05  # 2 / (fan_in + fan_out)
    np.testing.assert_array_equal(w, init.glorot_normal()(key, (400, 200)))  # the key decides
    np.testing.assert_array_equal(fd.jit(lambda k: init.glorot_normal()(k, (400, 200)))(key), w)
    conv = init.he_uniform(in_axis=1, out_axis=0)(key, (32, 16, 3, 3), np.float32)
    assert conv.dtype == np.float32 and np.abs(conv).max() <= np.sqrt(6.0 / (16 * 9))
    scaled = init.variance_scaling(2.0, "fan_in", "normal")(key, (1000, 10))
    assert abs(scaled.var() * 1000 / 2.0 - 1.0) < 0.1
    assert init.normal(stddev=2.0)(key, (3,)).shape == (3,)
    assert np.all((0.0 <= init.uniform(scale=0.5)(key, (50,))) & (init.uniform(scale=0.5)(key, (50,)) < 0.5))
    numpy_way = init.glorot_normal(np.random.default_rng(0), (4, 4))  # today's form still works
    assert isinstance(numpy_way, np.ndarray) and numpy_way.shape == (4, 4)
    with pytest.raises(InvalidArgumentError, match="fd.random key"):
        init.glorot_normal("seed", (2, 2))


def test_transformed_functions_have_readable_reprs():
    def loss(x):
        return fnp.sum(fnp.sin(x))
    _, pullback = fd.vjp(loss, np.ones(3))
    assert repr(pullback) == "vjp of loss: cotangent (f64[]) -> (f64[3])"
    _, f_jvp = fd.linearize(fnp.sin, np.ones((2, 3)))
    assert repr(f_jvp) == "linearized sin at (f64[2,3]): tangents -> (f64[2,3])"
    assert repr(fd.checkpoint(loss)) == "checkpoint(loss)"
    assert fd.checkpoint(loss).__name__ == "loss"
    rule = fd.custom_jvp(loss)
    assert repr(rule) == "custom_jvp(loss, no jvp rule yet)"
    rule.defjvp(lambda p, t: (loss(p[0]), fnp.sum(fnp.cos(p[0]) * t[0])))
    assert repr(rule) == "custom_jvp(loss, jvp=<lambda>)"
    assert repr(fd.custom_vjp(loss)) == "custom_vjp(loss, no rules yet)"
    seen = []
    fd.grad(lambda x: seen.append(repr(x)) or loss(x))(np.ones(2))
    assert seen == ["Traced<f64[2]>"]
