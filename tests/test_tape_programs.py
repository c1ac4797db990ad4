"""The tape's planned nodes (interpreters/tape_programs.py).

A primitive with no reverse rule of its own is linearized once per signature
into a forward and a transposed program, replayed on every eager call. Each
row below runs such a primitive on the tape and compares its cotangents with
linearize + transpose (the tape disabled), checks that the plan was made once
and reused, and transforms the pullback (vmap, jit). Primitives whose params
hold programs, and rules that read values, keep the per-call linearization.
"""

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.core import Primitive, concrete_value
from funcdiff.interpreters import tape, tape_programs
from funcdiff.primitives import sorting
from funcdiff.primitives.cards import make_op

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
SPD = A @ A.T
V = RNG.standard_normal(4)

# name, function of one float array, its argument
ROWS = [
    ("solve", lambda a: fnp.linalg.solve(a, V), A),
    ("det", fnp.linalg.det, A),
    ("slogdet", lambda a: fnp.linalg.slogdet(a)[1], A),
    ("inv", fnp.linalg.inv, A),
    ("cholesky", lambda a: fnp.linalg.cholesky(a), SPD),
    ("eigh-values", lambda a: fnp.linalg.eigh(a)[0], SPD),  # eigenvectors' cotangent is zero
    ("eigh-vectors", lambda a: fnp.linalg.eigh(a)[1] ** 2, SPD),
    ("svd", lambda a: fnp.linalg.svd(a, compute_uv=False), A),
    ("qr", lambda a: fnp.linalg.qr(a)[1], A),
    ("sort", lambda a: fnp.sort(a, axis=1), A),
    ("sort-together", lambda a: fnp.stack(sorting.sort_together(a, a * a, dimension=0)), A),
    ("cumprod", lambda a: fnp.cumprod(a, axis=1), A),
    ("prod", lambda a: fnp.prod(a, axis=0), A),
    ("triangular", lambda a: fd.scipy.linalg.solve_triangular(a, V, lower=True), A),
]


def _vjps(f, x):
    out, pullback = fd.vjp(f, x)
    ct = RNG.standard_normal(np.shape(out))
    with tape.disabled():
        _, staged = fd.vjp(f, x)
    return pullback, staged, ct


@pytest.mark.parametrize("name,f,x", ROWS, ids=[r[0] for r in ROWS])
def test_planned_nodes_agree_with_linearize(name, f, x):
    tape_programs._plans.clear()
    pullback, staged, ct = _vjps(f, x)
    np.testing.assert_allclose(pullback(ct)[0], staged(ct)[0], rtol=1e-10, atol=1e-12)
    planned = [p for p in tape_programs._plans.values() if p is not None]
    assert planned, "the primitive was not planned"
    n = len(tape_programs._plans)
    for _ in range(2):  # replayed: no new plan for the same signature
        np.testing.assert_allclose(fd.vjp(f, x)[1](ct)[0], staged(ct)[0], rtol=1e-10,
                                   atol=1e-12)
    assert len(tape_programs._plans) == n
    # the pullback is a traceable function: vmap and jit of it
    cts = np.stack([ct, 2.0 * ct])
    np.testing.assert_allclose(fd.vmap(pullback)(cts)[0],
                               np.stack([staged(c)[0] for c in cts]), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fd.jit(pullback)(ct)[0], staged(ct)[0], rtol=1e-10, atol=1e-12)


def test_planned_nodes_in_float32_and_second_order():
    a32 = A.astype(np.float32)
    g = fd.grad(lambda a: fnp.linalg.slogdet(a)[1])(a32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.linalg.inv(A).T, rtol=1e-4)
    # grad of grad: the outer transform sees the inner pullback's program
    h = fd.grad(lambda a: fnp.sum(fd.grad(fnp.linalg.det)(a) * V[:, None]))(A)
    with tape.disabled():
        h_staged = fd.grad(lambda a: fnp.sum(fd.grad(fnp.linalg.det)(a) * V[:, None]))(A)
    np.testing.assert_allclose(h, h_staged, rtol=1e-10)


def test_control_flow_is_not_planned():
    tape_programs._plans.clear()
    f = lambda x: fd.lax.cond(x[0] > 0, lambda y: fnp.sum(y * y), lambda y: fnp.sum(y), x)  # noqa: E731
    for _ in range(3):
        np.testing.assert_allclose(fd.grad(f)(np.ones(3)), 2 * np.ones(3))
    assert not tape_programs._plans  # its branches are new programs on each call


def test_a_jit_call_is_planned_on_its_second_call():
    inner = fd.jit(lambda w, x: fnp.tanh(x @ w) * fnp.sum(w))
    w, x = RNG.standard_normal((4, 3)), RNG.standard_normal((2, 4))
    f = lambda w: fnp.sum(inner(w, x) ** 2)  # noqa: E731
    with tape.disabled():
        want = fd.grad(f)(w)
    from funcdiff.interpreters import call
    (entry,) = inner._cache.values()

    def plans():
        return [k for k, v in call.derived.get(entry.jaxpr, {}).items()
                if k[0] == "tape plan" and k[-1] != "seen" and v is not None]
    np.testing.assert_allclose(fd.grad(f)(w), want, rtol=1e-12)   # seen once: per call
    assert not plans()
    for _ in range(2):                                              # then planned, replayed
        np.testing.assert_allclose(fd.grad(f)(w), want, rtol=1e-12)
    assert len(plans()) == 1
    np.testing.assert_allclose(fd.jit(fd.grad(f))(w), want, rtol=1e-12)


def test_a_rule_that_reads_values_is_linearized_per_call():
    clip_p = Primitive("test_value_reading_clip")
    clip_p.impl = lambda x: np.minimum(x, 1.0)
    clip_p.abstract_eval = lambda x: x

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        scale = 0.0 if float(concrete_value(fnp.max(x), "test rule")) > 1.0 else 1.0
        return clip_p.bind(x), t * scale
    clip_p.jvp = jvp
    clip = make_op(clip_p)
    tape_programs._plans.clear()
    np.testing.assert_allclose(fd.grad(lambda x: fnp.sum(clip(x)))(np.full(2, 0.5)), [1.0, 1.0])
    np.testing.assert_allclose(fd.grad(lambda x: fnp.sum(clip(x)))(np.full(2, 2.0)), [0.0, 0.0])
    assert list(tape_programs._plans.values()) == [None]  # could not be planned: remembered
