"""Control flow on the eager tape (interpreters/tape_control.py): scan, while and
cond run by their definition, their bodies recorded operation by operation, and
give the cotangents linearize gives, also when the pullback is transformed."""

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff import lax
from funcdiff.interpreters import tape, tape_function
from funcdiff.interpreters.tape_nodes import FactorNode

# float32 weights: the float64 cases promote them, the float32 ones stay float32
_W = (np.random.default_rng(0).standard_normal((3, 3)) / 3).astype(np.float32)
_X = np.array([0.3, -0.8, 0.5])


def _rnn(x):
    def step(h, xi):
        h = fnp.tanh(_W @ h + xi)
        return h, h * xi
    return lax.scan(step, x, fnp.stack([x, 2.0 * x, -x, x * x]))


CASES = {
    "scan": _rnn,
    "scan reverse, two carries": lambda x: lax.scan(
        lambda c, xi: ((c[0] * xi + c[1], fnp.sin(c[1])), c[0] - xi), (x, x[::-1]),
        fnp.stack([x, x + 1.0]), reverse=True),
    "scan without xs": lambda x: lax.scan(lambda c, _: (fnp.cos(c) * 1.5, None), x, None,
                                          length=3)[0],
    "scan, ys unused": lambda x: _rnn(x)[0],
    "scan of length 0": lambda x: lax.scan(lambda c, xi: (c * xi, c), x, fnp.zeros((0, 3), x.dtype)),
    "scan with an integer carry": lambda x: lax.scan(
        lambda c, xi: ((c[0] + 1, c[1] * xi), c[1]), (0, x), fnp.stack([x, x]))[0][1],
    "nested scans": lambda x: lax.scan(
        lambda c, xi: (lax.scan(lambda d, _: (fnp.tanh(d + xi), None), c, None, length=2)[0],
                       None), x, fnp.stack([x, x * 0.5]))[0],
    "fori with concrete bounds": lambda x: lax.fori_loop(0, 4, lambda i, h: fnp.sin(h) * h + 0.5,
                                                         x),
    "while": lambda x: lax.while_loop(lambda c: c[1] < 3,
                                      lambda c: (fnp.sin(c[0]) * 1.1, c[1] + 1), (x, 0))[0],
    "cond, true side": lambda x: lax.cond(fnp.sum(x) < 1.0, lambda v: fnp.exp(v) * v,
                                          lambda v: v, x),
    "cond, false side returns its operand": lambda x: lax.cond(fnp.sum(x) > 1.0,
                                                               lambda v: fnp.exp(v), lambda v: v,
                                                               x),
    "switch": lambda x: lax.switch(2, [lambda v: v, lambda v: v * 2.0, lambda v: fnp.tanh(v)],
                                   x),
    "loop in a branch": lambda x: lax.cond(True, lambda v: lax.fori_loop(
        0, 2, lambda i, h: h * v, v), lambda v: v, x),
}


def _loss(f):
    def loss(x):
        leaves = fd.tree_util.tree_leaves(f(x))
        return sum(fnp.sum(fnp.sin(leaf) * (k + 1)) for k, leaf in enumerate(leaves)
                   if fnp.asarray(leaf).dtype.kind == "f")
    return loss


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_tape_gives_linearizes_cotangents(name, monkeypatch):
    loss = _loss(CASES[name])
    with tape.disabled():
        want = fd.grad(loss)(_X)
    # the loop runs on the tape: no linearization of the control-flow primitive
    monkeypatch.setattr(tape.TapeTrace, "record_linearized", None)
    np.testing.assert_allclose(fd.grad(loss)(_X), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fd.grad(loss)(_X.astype(np.float32)), want, rtol=2e-5,
                               atol=1e-6)
    assert fd.grad(loss)(_X.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("name", ["scan", "scan reverse, two carries", "while", "switch"])
def test_transformed_pullbacks_and_jacobians_through_loops(name):
    f = CASES[name]
    first = lambda x: fd.tree_util.tree_leaves(f(x))[0]  # noqa: E731
    y, pullback = fd.vjp(first, _X)
    with tape.disabled():
        _, staged = fd.vjp(first, _X)
    cts = np.random.default_rng(1).standard_normal((4,) + np.shape(y))
    np.testing.assert_allclose(fd.vmap(pullback)(cts)[0], fd.vmap(staged)(cts)[0],
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fd.jit(pullback)(cts[0])[0], staged(cts[0])[0], rtol=1e-12,
                               atol=1e-14)
    with tape.disabled():
        want = fd.jacrev(first)(_X)
    np.testing.assert_allclose(fd.jacrev(first)(_X), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fd.jacrev(first)(_X), fd.jacfwd(first)(_X), rtol=1e-12,
                               atol=1e-14)


def test_the_pullback_of_a_loop_can_be_called_again():
    _, pullback = fd.vjp(lambda x: _rnn(x)[1], _X)
    ct = np.ones((4, 3))
    np.testing.assert_array_equal(pullback(ct)[0], pullback(ct)[0])


def _layer(h):
    return fnp.tanh(_W @ h + 0.1) * fnp.sin(h)


@pytest.mark.parametrize("policy", [None, "everything_saveable", "dots_saveable"])
def test_checkpoint_on_the_tape(policy, monkeypatch):
    """The default policy keeps only a checkpoint's inputs (one node, its body
    recomputed on a tape of its own by the pullback); everything_saveable runs
    the body on the tape; other policies keep their linearization."""
    def f(x):
        for _ in range(3):
            x = fd.checkpoint(_layer, policy=policy)(x)
        return fnp.sum(x * x)
    with tape.disabled():
        want = fd.grad(f)(_X)
    if policy != "dots_saveable":
        monkeypatch.setattr(tape.TapeTrace, "record_linearized", None)
    np.testing.assert_allclose(fd.grad(f)(_X), want, rtol=1e-12, atol=1e-14)
    (_,), fn = tape_function.tape_vjp_flat(lambda x: [f(x)], [_X])
    if policy is None:
        assert sum(type(node) is not FactorNode for node in fn.nodes) == 3 + 1  # + the sum
    y, pullback = fd.vjp(lambda x: fd.checkpoint(_layer, policy=policy)(x), _X)
    with tape.disabled():
        _, staged = fd.vjp(lambda x: fd.checkpoint(_layer, policy=policy)(x), _X)
    cts = np.random.default_rng(2).standard_normal((2, 3))
    np.testing.assert_allclose(fd.vmap(pullback)(cts)[0], fd.vmap(staged)(cts)[0], rtol=1e-12)
    np.testing.assert_allclose(fd.jit(pullback)(cts[0])[0], staged(cts[0])[0], rtol=1e-12)
    np.testing.assert_allclose(pullback(cts[1])[0], staged(cts[1])[0], rtol=1e-12)
    np.testing.assert_allclose(fd.jacrev(fd.checkpoint(_layer, policy=policy))(_X),
                               fd.jacfwd(_layer)(_X), rtol=1e-12, atol=1e-14)
