"""funcdiff.compat.autograd: autograd's API on funcdiff, each operator against
funcdiff's own transforms or closed forms, and classic autograd programs
through it against gradients computed here by other means."""

import collections

import numpy as onp
import pytest

import funcdiff as fd
import funcdiff.compat.autograd as autograd
import funcdiff.compat.autograd.numpy as np
import funcdiff.compat.autograd.numpy.random as npr
import funcdiff.compat.autograd.scipy.stats.norm as norm
from funcdiff.compat.autograd import (checkpoint, defjvp, defvjp, deriv, elementwise_grad, grad,
                                      grad_and_aux, hessian, hessian_tensor_product,
                                      holomorphic_grad, jacobian, make_ggnvp, make_hvp, make_jvp,
                                      make_vjp, multigrad_dict, primitive,
                                      tensor_jacobian_product, value_and_grad)
from funcdiff.compat.autograd.misc import fixed_points, flatten, optimizers
from funcdiff.compat.autograd.test_util import check_grads
from funcdiff.errors import DifferentiationError

X = onp.array([0.3, -1.2, 0.8])


def central(f, x, eps=1e-6):
    return onp.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in onp.eye(len(x))])


def test_the_namespaces_are_funcdiffs():
    assert np is fd.numpy and npr is onp.random and autograd.scipy is fd.scipy
    assert float(norm.logpdf(0.0)) == pytest.approx(-0.5 * onp.log(2 * onp.pi))


def test_grad_family_with_argnums():
    f = lambda x, y: np.sum(np.sin(x) * y)  # noqa: E731
    y = onp.array([1.0, 2.0, 3.0])
    onp.testing.assert_allclose(grad(f)(X, y), onp.cos(X) * y)
    onp.testing.assert_allclose(grad(f, 1)(X, y), onp.sin(X))
    gx, gy = grad(f, (0, 1))(X, y)
    onp.testing.assert_allclose(gy, onp.sin(X))
    v, g = value_and_grad(f)(X, y)
    assert v == pytest.approx(f(X, y))
    g, aux = grad_and_aux(lambda x: (np.sum(x ** 2), "aux"))(X)
    assert aux == "aux" and onp.allclose(g, 2 * X)
    onp.testing.assert_allclose(grad(lambda x: np.reshape(np.sum(x), (1,)))(X), onp.ones(3))
    with pytest.raises(DifferentiationError, match="elementwise_grad"):
        grad(np.sin)(X)


def test_elementwise_deriv_jacobian_hessian():
    onp.testing.assert_allclose(elementwise_grad(np.tanh)(X), 1 - onp.tanh(X) ** 2)
    assert deriv(np.sin)(0.5) == pytest.approx(onp.cos(0.5))
    J = jacobian(lambda x: np.outer(x, x))(X)
    assert J.shape == (3, 3, 3)
    onp.testing.assert_allclose(J, fd.jacrev(lambda x: fd.numpy.outer(x, x))(X))
    H = hessian(lambda x: np.sum(x ** 3))(X)
    onp.testing.assert_allclose(H, onp.diag(6 * X))
    z = 0.5 + 1.5j
    assert complex(holomorphic_grad(np.sin)(z)) == pytest.approx(onp.cos(z))


def test_vjp_jvp_hvp_and_products():
    f = lambda x: np.sin(x) * np.sum(x)  # noqa: E731
    vjp, ans = make_vjp(f)(X)
    u = onp.array([1.0, -2.0, 0.5])
    onp.testing.assert_allclose(ans, f(X))
    onp.testing.assert_allclose(vjp(u), fd.vjp(f, X)[1](u)[0])
    value, tangent = make_jvp(f)(X)(u)
    onp.testing.assert_allclose(tangent, fd.jvp(f, (X,), (u,))[1])
    loss = lambda x: np.sum(np.exp(x) * x)  # noqa: E731
    hvp, g = make_hvp(loss)(X)
    H = fd.hessian(loss)(X)
    onp.testing.assert_allclose(hvp(u), H @ u)
    onp.testing.assert_allclose(g, grad(loss)(X))
    onp.testing.assert_allclose(hessian_tensor_product(loss)(X, u), H @ u)
    onp.testing.assert_allclose(tensor_jacobian_product(f)(X, u), u @ fd.jacrev(f)(X))
    ggn = make_ggnvp(f)(X)(u)  # g(y) = |y|^2 / 2: J^T J u
    Jf = fd.jacrev(f)(X)
    onp.testing.assert_allclose(ggn, Jf.T @ (Jf @ u))


def test_multigrad_dict_and_checkpoint():
    def f(a, b, scale=2.0):
        return np.sum(a * b) * scale
    grads = multigrad_dict(f)(onp.ones(2), onp.arange(2.0))
    assert isinstance(grads, collections.OrderedDict) and list(grads) == ["a", "b", "scale"]
    onp.testing.assert_allclose(grads["a"], [0.0, 2.0])
    assert grads["scale"] == pytest.approx(1.0)
    onp.testing.assert_allclose(grad(checkpoint(lambda x: np.sum(np.sin(x) ** 2)))(X),
                                onp.sin(2 * X))


def test_primitive_defvjp_defjvp():
    @primitive
    def mul(x, y):
        return x * y
    defvjp(mul, lambda ans, x, y: lambda g: g * y, None)  # y gets no derivative
    gx, gy = grad(lambda x, y: np.sum(mul(x, y)), (0, 1))(X, 2.0 * X)
    onp.testing.assert_allclose(gx, 2.0 * X)
    onp.testing.assert_allclose(gy, 0.0)

    @primitive
    def cube(x):
        return x ** 3
    defjvp(cube, lambda g, ans, x: 3 * x ** 2 * g)
    onp.testing.assert_allclose(elementwise_grad(cube)(X), 3 * X ** 2)  # reverse, transposed
    onp.testing.assert_allclose(fd.jvp(cube, (X,), (onp.ones(3),))[1], 3 * X ** 2)

    @primitive
    def wrong(x):
        return np.sin(x)
    defvjp(wrong, lambda ans, x: lambda g: g * np.sin(x))  # deliberately wrong
    with pytest.raises(AssertionError):
        check_grads(wrong, modes=["rev"], order=1)(X)


def test_optimizers_flatten_and_fixed_points():
    target = {"w": onp.array([1.0, -2.0]), "b": onp.array(0.5)}
    loss = lambda p: np.sum((p["w"] - target["w"]) ** 2) + (p["b"] - target["b"]) ** 2  # noqa: E731
    start = {"w": onp.zeros(2), "b": onp.array(0.0)}
    for optimizer, kw in ((optimizers.adam, dict(step_size=0.1, num_iters=500)),
                          (optimizers.sgd, dict(step_size=0.1, num_iters=500)),
                          (optimizers.rmsprop, dict(step_size=0.01, num_iters=500))):
        seen = []
        out = optimizer(lambda p, i: grad(loss)(p), start, callback=lambda p, i, g: seen.append(i),
                        **kw)
        assert onp.allclose(out["w"], target["w"], atol=0.05) and len(seen) == kw["num_iters"]
    vector, unflatten = flatten(start)
    assert vector.shape == (3,) and unflatten(vector)["w"].shape == (2,)
    sqrt = lambda a: fixed_points.fixed_point(  # noqa: E731
        lambda a, x: 0.5 * (x + a / x), a, 1.0, lambda x, y: float(np.abs(x - y)), 1e-12)
    assert grad(sqrt)(9.0) == pytest.approx(1 / 6)
    assert grad(grad(sqrt))(9.0) == pytest.approx(-0.25 * 9.0 ** -1.5, rel=1e-6)


def test_check_grads_both_forms():
    check_grads(np.sin, X)                        # autograd's older form: check at once
    check_grads(lambda x, y: x * np.exp(y), 1, order=2)(X, X)


# --- classic programs, through the compat layer --------------------------------------

def test_logistic_regression():
    rs = npr.RandomState(0)
    inputs, targets = rs.randn(8, 3), rs.rand(8) > 0.5

    def training_loss(weights):
        preds = 0.5 * (np.tanh(np.dot(inputs, weights) / 2) + 1)
        probs = preds * targets + (1 - preds) * (1 - targets)
        return -np.sum(np.log(probs))
    w = onp.array([0.1, -0.2, 0.3])
    onp.testing.assert_allclose(grad(training_loss)(w), central(training_loss, w), rtol=1e-6)
    for _ in range(20):
        w = w - 0.1 * grad(training_loss)(w)
    assert training_loss(w) < training_loss(onp.array([0.1, -0.2, 0.3]))


def test_neural_net_with_adam():
    rs = npr.RandomState(1)
    x, y = rs.randn(16, 2), rs.randn(16, 1)
    params = [(rs.randn(2, 8) * 0.3, onp.zeros(8)), (rs.randn(8, 1) * 0.3, onp.zeros(1))]

    def predict(params, inputs):
        for w, b in params[:-1]:
            inputs = np.tanh(np.dot(inputs, w) + b)
        w, b = params[-1]
        return np.dot(inputs, w) + b

    def objective(params, i):
        return np.mean((predict(params, x) - y) ** 2)
    g = grad(objective)(params, 0)
    flat, unflatten = flatten(params)
    numeric = central(lambda v: float(objective(unflatten(v), 0)), onp.asarray(flat))
    onp.testing.assert_allclose(flatten(g)[0], numeric, rtol=1e-5, atol=1e-8)
    trained = optimizers.adam(grad(objective), params, step_size=0.05, num_iters=60)
    assert objective(trained, 0) < 0.8 * objective(params, 0)


def test_rnn_and_gaussian_process_and_black_box_vi():
    rs = npr.RandomState(2)
    seq = rs.randn(5, 2)

    def rnn_loss(w):
        h = np.zeros(3)
        for t in range(seq.shape[0]):
            h = np.tanh(np.dot(np.concatenate([seq[t], h]), w))
        return np.sum(h ** 2)
    w = rs.randn(5, 3) * 0.5
    onp.testing.assert_allclose(grad(rnn_loss)(w).ravel(),
                                central(lambda v: rnn_loss(v.reshape(5, 3)), w.ravel()),
                                rtol=1e-5, atol=1e-9)

    xs, ys = onp.linspace(-1, 1, 6), onp.sin(onp.linspace(-1, 1, 6))

    def gp_nll(log_params):
        scale, noise = np.exp(log_params[0]), np.exp(log_params[1])
        K = np.exp(-0.5 * (xs[:, None] - xs[None, :]) ** 2 / scale ** 2) + noise * np.eye(6)
        sign, logdet = np.linalg.slogdet(K)
        return 0.5 * np.dot(ys, np.linalg.solve(K, ys)) + 0.5 * logdet
    p = onp.array([-0.3, -2.0])
    onp.testing.assert_allclose(grad(gp_nll)(p), central(gp_nll, p), rtol=1e-5)

    eps = rs.randn(50, 2)

    def elbo(params):  # black-box VI with the reparameterisation trick, fixed noise
        mean, log_std = params[:2], params[2:]
        samples = mean + np.exp(log_std) * eps
        log_density = -0.5 * np.sum(samples ** 2, axis=1)
        return -(np.mean(log_density) + np.sum(log_std))
    q = onp.array([0.5, -0.5, -1.0, 0.2])
    onp.testing.assert_allclose(grad(elbo)(q), central(elbo, q), rtol=1e-6)


def test_more_classic_programs():
    rs = npr.RandomState(3)
    # tanh's derivatives by repeated elementwise_grad (autograd's tanh example)
    x = onp.linspace(-2, 2, 7)
    d1, d2 = elementwise_grad(np.tanh), elementwise_grad(elementwise_grad(np.tanh))
    onp.testing.assert_allclose(d1(x), 1 - onp.tanh(x) ** 2)
    onp.testing.assert_allclose(d2(x), -2 * onp.tanh(x) * (1 - onp.tanh(x) ** 2))

    # sinusoid: the derivative of a Taylor-series sine is its cosine
    def taylor_sin(t):
        ans, term = t, t
        for i in range(12):
            term = -term * t ** 2 / ((2 * i + 3) * (2 * i + 2))
            ans = ans + term
        return ans
    assert grad(taylor_sin)(0.7) == pytest.approx(onp.cos(0.7), rel=1e-10)

    # negative binomial maximum likelihood: the gradient vanishes at the fit
    data = rs.negative_binomial(5, 0.4, size=200).astype(float)
    from funcdiff.compat.autograd.scipy.special import gammaln

    def nll(params):
        r, p = np.exp(params[0]), 1 / (1 + np.exp(-params[1]))
        return -np.sum(gammaln(data + r) - gammaln(r) + r * np.log(p) + data * np.log1p(-p))
    params = onp.array([1.0, 0.0])
    for _ in range(200):
        params = params - 0.002 * grad(nll)(params) / len(data) * 10
    onp.testing.assert_allclose(grad(nll)(params), central(nll, params), rtol=1e-5, atol=1e-6)

    # a Gaussian mixture's log-likelihood through logsumexp
    from funcdiff.compat.autograd.scipy.special import logsumexp
    points = rs.randn(30, 2)

    def mixture_ll(means):
        means = means.reshape(3, 2)
        sq = np.sum((points[:, None, :] - means[None]) ** 2, axis=2)
        return np.sum(logsumexp(-0.5 * sq, axis=1))
    m = rs.randn(6)
    onp.testing.assert_allclose(grad(mixture_ll)(m), central(mixture_ll, m), rtol=1e-6)

    # a Hessian-vector product and natural-gradient style solve
    def quad(w):
        return 0.5 * np.dot(w, np.dot(onp.diag([1.0, 2.0, 3.0]), w)) + np.sum(np.sin(w))
    hvp, g = make_hvp(quad)(X)
    onp.testing.assert_allclose(hvp(onp.ones(3)), onp.array([1.0, 2.0, 3.0]) - onp.sin(X))

    # a tiny convnet layer by einsum over shifted windows
    image, kernel = rs.randn(6, 6), rs.randn(3, 3)

    def conv_loss(k):
        patches = onp.stack([image[i:i + 4, j:j + 4] for i in range(3) for j in range(3)])
        return np.sum(np.tanh(np.einsum("pij,p->ij", patches, np.ravel(k))) ** 2)
    onp.testing.assert_allclose(grad(conv_loss)(kernel).ravel(),
                                central(lambda k: conv_loss(k.reshape(3, 3)), kernel.ravel()),
                                rtol=1e-5, atol=1e-9)
