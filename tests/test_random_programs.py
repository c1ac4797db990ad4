"""Random programs: jvp and vjp against central differences and against each other.

Hypothesis draws programs of 3-12 operations (elementwise, broadcasting
binary, reductions, structural and matrix operations) over inputs of random
shapes. Each program is checked with ``check_grads`` in both modes, which
also tests the adjoint identity ``<u, J v> == <J^T u, v>`` between them.

The normal run draws a couple of hundred programs; set ``FUNCDIFF_SOAK=N``
to draw N programs for a long soak run.
"""

import os

import numpy as np
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.test_util import check_grads

N_PROGRAMS = int(os.environ.get("FUNCDIFF_SOAK", "150"))
SHAPES = [(), (3,), (2, 3), (1, 3), (3, 1), (2, 1, 3)]

# smooth unary operations, defined everywhere on the reals
UNARY = {
    "sin": fnp.sin, "cos": fnp.cos, "tanh": fnp.tanh, "arctan": fnp.arctan,
    "exp_scaled": lambda x: fnp.exp(0.3 * x), "log1p_sq": lambda x: fnp.log1p(x * x),
    "logistic": lambda x: 1.0 / (1.0 + fnp.exp(-x)), "square": fnp.square,
    "softplus": lambda x: fnp.logaddexp(x, 0.0), "sqrt_1p": lambda x: fnp.sqrt(1.0 + x * x),
    "cube": lambda x: x ** 3, "neg": fnp.negative,
}
BINARY = {
    "add": fnp.add, "sub": fnp.subtract, "mul": fnp.multiply,
    "div": lambda a, b: a / (1.5 + b * b), "hypot": lambda a, b: fnp.hypot(a, b + 2.0),
    "pow": lambda a, b: fnp.power(1.0 + a * a, fnp.tanh(b)),
}


def _reduce(kind, x, axis):
    if x.ndim == 0:
        return x
    ax = axis % x.ndim
    return {"sum": fnp.sum, "mean": fnp.mean, "prod": fnp.prod}[kind](x, axis=ax)


def _structural(kind, x, k):
    if kind == "transpose":
        return fnp.transpose(x)
    if kind == "flatten":
        return fnp.reshape(x, (-1,))
    if kind == "expand":
        return fnp.expand_dims(x, 0)
    if kind == "slice" and x.ndim:
        return x[::2]
    if kind == "flip" and x.ndim:
        return fnp.flip(x, axis=-1)
    if kind == "take" and x.ndim:
        n = x.shape[0]
        return x[np.array([k % n, 0, k % n])]  # repeated indices
    if kind == "cumsum" and x.ndim:
        return fnp.cumsum(x, axis=-1)
    if kind == "concat":
        return fnp.concatenate([fnp.ravel(x), fnp.ravel(x) * 0.5])
    return x


@st.composite
def programs(draw):
    n_inputs = draw(st.integers(1, 2))
    shapes = [draw(st.sampled_from(SHAPES)) for _ in range(n_inputs)]
    steps = []
    for _ in range(draw(st.integers(3, 12))):
        kind = draw(st.sampled_from(["unary", "unary", "binary", "binary", "reduce",
                                     "structural", "matmul"]))
        if kind == "unary":
            steps.append((kind, draw(st.sampled_from(sorted(UNARY))), draw(st.integers(0, 20))))
        elif kind == "binary":
            steps.append((kind, draw(st.sampled_from(sorted(BINARY))),
                          draw(st.integers(0, 20)), draw(st.integers(0, 20))))
        elif kind == "reduce":
            steps.append((kind, draw(st.sampled_from(["sum", "mean", "prod"])),
                          draw(st.integers(0, 20)), draw(st.integers(-3, 2))))
        elif kind == "structural":
            steps.append((kind, draw(st.sampled_from(
                ["transpose", "flatten", "expand", "slice", "flip", "take", "cumsum", "concat"])),
                draw(st.integers(0, 20)), draw(st.integers(0, 5))))
        else:
            steps.append((kind, draw(st.integers(0, 20)), draw(st.integers(0, 20))))
    seed = draw(st.integers(0, 2 ** 16))
    return shapes, steps, seed


def build(steps):
    """The program as a Python function of its inputs."""
    def program(*inputs):
        values = list(inputs)
        for step in steps:
            kind = step[0]
            if kind == "unary":
                x = values[step[2] % len(values)]
                values.append(UNARY[step[1]](x))
            elif kind == "binary":
                a, b = values[step[2] % len(values)], values[step[3] % len(values)]
                try:
                    np.broadcast_shapes(np.shape(a), np.shape(b))
                except ValueError:
                    b = fnp.sum(b)  # shapes that do not broadcast: combine with a scalar
                values.append(BINARY[step[1]](a, b))
            elif kind == "reduce":
                values.append(_reduce(step[1], values[step[2] % len(values)], step[3]))
            elif kind == "structural":
                values.append(_structural(step[1], values[step[2] % len(values)], step[3]))
            else:
                a, b = values[step[1] % len(values)], values[step[2] % len(values)]
                # (n, 1) @ (1, m), then contracted with a matrix of the right size
                outer = fnp.reshape(fnp.tanh(a), (-1, 1)) @ fnp.reshape(fnp.cos(b), (1, -1))
                w = np.linspace(-1.0, 1.0, outer.shape[1] * 2).reshape(outer.shape[1], 2)
                values.append(outer @ w)
        # every value reaches the output, so every operation is differentiated
        return fnp.stack([fnp.sum(fnp.tanh(v)) for v in values[len(inputs):]])
    return program


def _differences_settle(f, inputs, eps, tol):
    """Whether central differences at steps ``eps`` and ``2 * eps`` agree within
    ``tol``: where they do not, the function is too steep for the
    finite-difference oracle at this step (a near-singular composition of cubes,
    say), and the program says nothing about funcdiff."""
    rng = np.random.default_rng(1)
    v = [rng.standard_normal(np.shape(x)) for x in inputs]

    def diff(h):
        plus = f(*[x + h * d for x, d in zip(inputs, v)])
        minus = f(*[x - h * d for x, d in zip(inputs, v)])
        return (np.asarray(plus) - np.asarray(minus)) / (2 * h)
    return bool(np.allclose(diff(eps), diff(2 * eps), rtol=tol, atol=tol))


def _checkable(program_spec, eps, tol):
    """The program and its inputs, or a skip when finite differences at ``eps``
    cannot judge it."""
    shapes, steps, seed = program_spec
    rng = np.random.default_rng(seed)
    inputs = tuple(rng.uniform(-1.5, 1.5, size=s) for s in shapes)
    f = build(steps)
    assume(_differences_settle(f, inputs, eps, tol))
    return f, inputs


@settings(max_examples=N_PROGRAMS, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(programs())
def test_random_program_derivatives(program_spec):
    # a small step: repeated squares and cubes make third derivatives large
    f, inputs = _checkable(program_spec, eps=1e-6, tol=1e-5)
    check_grads(f, inputs, order=1, modes=("fwd", "rev"), eps=1e-6, atol=1e-5, rtol=1e-5)
    # jacrev's batched pass over the tape against jacfwd's batched jvp
    argnums = tuple(range(len(inputs)))
    for rev, fwd in zip(fd.jacrev(f, argnums=argnums)(*inputs),
                        fd.jacfwd(f, argnums=argnums)(*inputs)):
        np.testing.assert_allclose(rev, fwd, rtol=1e-9, atol=1e-12)


@settings(max_examples=max(N_PROGRAMS // 10, 10), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(programs())
def test_random_program_second_order_and_jit(program_spec):
    f, inputs = _checkable(program_spec, eps=1e-5, tol=1e-4)
    # order 2 differentiates f's jvp and vjp by finite differences too: the
    # derivative must also settle at this step (repeated powers make it steep)
    tangents = tuple(np.random.default_rng(2).standard_normal(np.shape(x)) for x in inputs)
    assume(_differences_settle(lambda *xs: fd.jvp(f, xs, tangents)[1], inputs, 1e-5, 1e-4))
    check_grads(f, inputs, order=2, modes=("fwd", "rev"), eps=1e-5, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(fd.jit(f)(*inputs), f(*inputs), rtol=1e-10, atol=1e-12)
    loss = lambda *xs: fnp.sum(f(*xs) ** 2)
    for a, b in zip(fd.jit(fd.grad(loss, argnums=tuple(range(len(inputs)))))(*inputs),
                    fd.grad(loss, argnums=tuple(range(len(inputs))))(*inputs)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
