"""Convolutions and windowed reductions: values against scipy.signal and a direct
loop, derivatives to order 2 in both modes against finite differences, vmap
against a loop, jit against eager, the cost rule's FLOP count, and bad input."""

import itertools

import numpy as np
import pytest
import scipy.signal

import funcdiff as fd
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.test_util import check_grads

lax = fd.lax
RNG = np.random.default_rng(0)


def direct_conv(x, w, strides, pads, lhs_dilation, rhs_dilation, groups=1, batch_groups=1):
    """The definition, one output element at a time (layouts NC.. and OI..)."""
    n, c, *spatial = x.shape
    o, i, *kernel = w.shape
    dilated = np.zeros((n, c) + tuple((s - 1) * d + 1 for s, d in zip(spatial, lhs_dilation)))
    dilated[(slice(None),) * 2 + tuple(slice(None, None, d) for d in lhs_dilation)] = x
    for axis, (lo, hi) in enumerate(pads, start=2):
        width = [(0, 0)] * x.ndim
        width[axis] = (max(lo, 0), max(hi, 0))
        dilated = np.pad(dilated, width)
        stop = dilated.shape[axis] + min(hi, 0)
        dilated = np.take(dilated, range(max(-lo, 0), stop), axis=axis)
    out_spatial = [(size - (k - 1) * r - 1) // s + 1
                   for size, k, r, s in zip(dilated.shape[2:], kernel, rhs_dilation, strides)]
    n_out = n // batch_groups
    out = np.zeros((n_out, o) + tuple(out_spatial))
    for y in itertools.product(*map(range, out_spatial)):
        window = dilated[(slice(None),) * 2 + tuple(
            slice(p * s, p * s + (k - 1) * r + 1, r)
            for p, s, k, r in zip(y, strides, kernel, rhs_dilation))]
        for f in range(o):
            g, b = f // (o // groups), f // (o // batch_groups)
            part = window[b * n_out:(b + 1) * n_out, g * i:(g + 1) * i]
            out[(slice(None), f) + y] = (part * w[f]).reshape(n_out, -1).sum(1)
    return out


# id, lhs shape, rhs shape, strides, padding, lhs_dilation, rhs_dilation, groups, batch groups
CASES = [
    ("2d-plain", (2, 3, 6, 5), (4, 3, 3, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1, 1),
    ("2d-pad-stride", (2, 3, 7, 6), (4, 3, 3, 2), (2, 3), ((1, 0), (2, -1)), (1, 1), (1, 1), 1, 1),
    ("2d-rhs-dilation", (1, 2, 7, 7), (3, 2, 2, 3), (1, 2), ((1, 1), (0, 2)), (1, 1), (2, 2), 1, 1),
    ("2d-lhs-dilation", (2, 2, 4, 3), (3, 2, 3, 2), (1, 1), ((2, 2), (1, 0)), (2, 3), (1, 1), 1, 1),
    ("2d-groups", (2, 4, 5, 6), (6, 2, 3, 3), (1, 2), ((1, 1), (1, 1)), (2, 1), (1, 2), 2, 1),
    ("2d-depthwise", (2, 3, 5, 5), (6, 1, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1), 3, 1),
    ("2d-batch-groups", (4, 3, 5, 6), (6, 3, 2, 3), (1, 1), ((0, 1), (1, 0)), (1, 2), (1, 1), 1, 2),
    ("1d", (2, 2, 9), (3, 2, 3), (2,), ((2, 1),), (3,), (1,), 1, 1),
    ("3d", (1, 2, 4, 3, 5), (2, 2, 2, 2, 3), (1, 2, 1), ((1, 0), (0, 1), (1, 1)), (1, 1, 2),
     (1, 1, 1), 1, 1),
]


def case_function(case):
    _, _, _, strides, pads, lhs_d, rhs_d, groups, batch_groups = case
    return lambda x, w: lax.conv_general_dilated(x, w, strides, pads, lhs_d, rhs_d, None,
                                                 groups, batch_groups)


def case_args(case, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(case[1]), rng.standard_normal(case[2])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_against_a_direct_loop_and_jit(case):
    f, (x, w) = case_function(case), case_args(case)
    want = direct_conv(x, w, *case[3:])
    np.testing.assert_allclose(f(x, w), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fd.jit(f)(x, w), want, rtol=1e-12, atol=1e-12)
    assert fd.make_jaxpr(f)(x, w).jaxpr.outvars[0].aval.shape == want.shape


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_derivatives_to_order_two_in_both_modes(case):
    check_grads(case_function(case), case_args(case), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_vmap_against_a_loop(case):
    f, (x, w) = case_function(case), case_args(case)
    xs, ws = np.stack([x, 2 * x - 1]), np.stack([w, -0.5 * w])
    for in_axes in ((0, None), (None, 0), (0, 0)):
        got = fd.vmap(f, in_axes=in_axes)(xs if in_axes[0] == 0 else x,
                                          ws if in_axes[1] == 0 else w)
        want = np.stack([f(xs[k] if in_axes[0] == 0 else x, ws[k] if in_axes[1] == 0 else w)
                         for k in range(2)])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=str(in_axes))


def test_vmap_of_per_example_gradients_of_a_grouped_convolution():
    """The kernel's transpose is a batch-grouped convolution of two batched operands."""
    case = CASES[4]
    f, (x, w) = case_function(case), case_args(case)
    loss = lambda w, x: (f(x[None], w) ** 2).sum()  # noqa: E731
    got = fd.vmap(fd.grad(loss), in_axes=(None, 0))(w, x)
    want = np.stack([fd.grad(loss)(w, x[k]) for k in range(x.shape[0])])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_layouts_nhwc_hwio_equal_the_canonical_layout():
    x, w = RNG.standard_normal((2, 7, 6, 3)), RNG.standard_normal((3, 2, 3, 4))
    f = lambda x, w: lax.conv_general_dilated(  # noqa: E731
        x, w, (2, 1), "SAME", None, (1, 2), ("NHWC", "HWIO", "NHWC"))
    want = lax.conv_general_dilated(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (2, 1),
                                    "SAME", None, (1, 2)).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(f(x, w), want, rtol=1e-13)
    check_grads(f, (x, w), order=2)
    numbers = lax.conv_dimension_numbers(x.shape, w.shape, ("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(lax.conv_general_dilated(x, w, (2, 1), "SAME", None, (1, 2),
                                                        numbers), want, rtol=1e-13)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_against_scipy_signal(mode):
    image, kernel = RNG.standard_normal((9, 8)), RNG.standard_normal((3, 4))
    # scipy's 'same' keeps the middle of 'full': the odd padding goes at a
    # correlation's end and at a convolution's start (it flips the kernel)
    pads, flipped_pads = {"full": [((2, 2), (3, 3))] * 2, "valid": [((0, 0), (0, 0))] * 2,
                          "same": [((1, 1), (1, 2)), ((1, 1), (2, 1))]}[mode]
    got = lax.conv_general_dilated(image[None, None], kernel[None, None], (1, 1), pads)[0, 0]
    np.testing.assert_allclose(got, scipy.signal.correlate2d(image, kernel, mode), rtol=1e-12)
    flipped = lax.conv_general_dilated(image[None, None], kernel[None, None, ::-1, ::-1],
                                       (1, 1), flipped_pads)[0, 0]
    np.testing.assert_allclose(flipped, scipy.signal.convolve2d(image, kernel, mode),
                               rtol=1e-12)
    volume, kernel3 = RNG.standard_normal((5, 6, 4)), RNG.standard_normal((2, 3, 2))
    got3 = lax.conv_general_dilated(volume[None, None], kernel3[None, None], (1, 1, 1),
                                    "VALID")[0, 0]
    np.testing.assert_allclose(got3, scipy.signal.correlate(volume, kernel3, "valid"),
                               rtol=1e-12)


@pytest.mark.parametrize("padding,expect", [("SAME", (4, 3)), ("SAME_LOWER", (4, 3)),
                                            ("VALID", (3, 2))])
def test_padding_strings(padding, expect):
    x, w = RNG.standard_normal((1, 1, 7, 6)), RNG.standard_normal((1, 1, 2, 3))
    out = lax.conv_general_dilated(x, w, (2, 2), padding)
    assert out.shape[2:] == expect
    total = [max((e - 1) * 2 + k - s, 0) for e, k, s in zip(expect, (2, 3), (7, 6))]
    if padding != "VALID":
        pairs = [(t // 2, t - t // 2) if padding == "SAME" else (t - t // 2, t // 2)
                 for t in total]
        np.testing.assert_allclose(out, direct_conv(x, w, (2, 2), pairs, (1, 1), (1, 1)),
                                   rtol=1e-12)


def test_short_forms():
    x, w = RNG.standard_normal((2, 3, 6, 6)), RNG.standard_normal((4, 3, 3, 3))
    np.testing.assert_allclose(lax.conv(x, w, (1, 1), "SAME"),
                               direct_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1)),
                               rtol=1e-12)
    np.testing.assert_allclose(
        lax.conv_with_general_padding(x, w, (2, 1), ((0, 1), (2, 0)), (1, 2), None),
        direct_conv(x, w, (2, 1), ((0, 1), (2, 0)), (1, 2), (1, 1)), rtol=1e-12)


def test_float32_stays_float32_and_second_derivative_in_mixed_modes():
    x, w = case_args(CASES[1])
    f = case_function(CASES[1])
    assert f(x.astype(np.float32), w.astype(np.float32)).dtype == np.float32
    loss = lambda x, w: (f(x, w) ** 3).sum()  # noqa: E731
    v = RNG.standard_normal(x.shape)
    hess_v = fd.jvp(lambda x: fd.grad(loss)(x, w), (x,), (v,))[1]
    eps = 1e-5
    fdiff = (fd.grad(loss)(x + eps * v, w) - fd.grad(loss)(x - eps * v, w)) / (2 * eps)
    np.testing.assert_allclose(hess_v, fdiff, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in ("2d-plain", "2d-groups",
                                                               "2d-batch-groups", "3d")],
                         ids=lambda c: c[0])
def test_cost_is_the_flop_count(case):
    f, (x, w) = case_function(case), case_args(case)
    out = f(x, w)
    o, i, *kernel = w.shape
    # 2 * N' * O * (C / groups) * prod(K) * prod(Y): one multiply-add per kernel entry
    flops = 2 * out.shape[0] * o * i * int(np.prod(kernel)) * int(np.prod(out.shape[2:]))
    assert fd.cost_analysis(f, x, w).forward.flops == flops


def test_bad_input_names_the_argument_and_the_shapes():
    x, w = np.ones((2, 4, 5, 5)), np.ones((6, 3, 3, 3))
    with pytest.raises(ShapeError, match=r"lhs feature dimension.*size 4.*in-feature.*size 3"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID")
    with pytest.raises(ShapeError, match="feature_group_count=3 does not divide"):
        lax.conv_general_dilated(x, np.ones((6, 1, 3, 3)), (1, 1), "VALID", None, None, None, 3)
    with pytest.raises(ShapeError, match="larger than the padded input"):
        lax.conv_general_dilated(x, np.ones((6, 4, 7, 3)), (1, 1), ((0, 1), (0, 0)))
    with pytest.raises(ShapeError, match="larger than the padded input"):
        fd.jit(lambda x: lax.conv_general_dilated(x, np.ones((6, 4, 7, 3)), (1, 1), "VALID"))(x)
    with pytest.raises(InvalidArgumentError, match="'NCXW'"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NCXW", "OIHW", "NCHW"))
    with pytest.raises(InvalidArgumentError, match="padding"):
        lax.conv_general_dilated(x, w, (1, 1), "FULL")
    with pytest.raises(ShapeError, match="window_strides"):
        lax.conv_general_dilated(x, np.ones((6, 4, 3, 3)), (1,), "VALID")


# --- windowed reductions ---------------------------------------------------------

WINDOW_CASES = [  # id, shape, window, strides, padding, base dilation, window dilation
    ("pool-2x2", (2, 3, 6, 4), (1, 1, 2, 2), (1, 1, 2, 2), "VALID", None, None),
    ("padded-dilated", (5, 6), (3, 2), (1, 2), ((1, 1), (0, 1)), None, (1, 2)),
    ("base-dilation", (2, 3, 5), (1, 2, 3), (1, 1, 2), ((0, 0), (1, 0), (2, 1)), (1, 2, 1), None),
    ("same", (4, 5), (3, 3), (2, 1), "SAME", None, None),
]


def direct_window(x, init, op, window, strides, padding, base, dilation):
    base = base or (1,) * x.ndim
    dilation = dilation or (1,) * x.ndim
    dilated = np.full(tuple((s - 1) * b + 1 for s, b in zip(x.shape, base)), init)
    dilated[tuple(slice(None, None, b) for b in base)] = x
    if isinstance(padding, str):
        padding = fd.primitives.convolution.padding_pairs(
            padding, dilated.shape, tuple((k - 1) * d + 1 for k, d in zip(window, dilation)),
            strides)
    dilated = np.pad(dilated, [(lo, hi) for lo, hi in padding], constant_values=init)
    out_shape = [(size - (k - 1) * d - 1) // s + 1
                 for size, k, d, s in zip(dilated.shape, window, dilation, strides)]
    out = np.zeros(out_shape)
    for y in itertools.product(*map(range, out_shape)):
        out[y] = op(dilated[tuple(slice(p * s, p * s + (k - 1) * d + 1, d)
                                  for p, s, k, d in zip(y, strides, window, dilation))])
    return out


@pytest.mark.parametrize("computation,init,ref", [
    ("max", -np.inf, np.max), ("min", np.inf, np.min), ("add", 0.0, np.sum),
    ("mul", 1.0, np.prod)])
@pytest.mark.parametrize("case", WINDOW_CASES, ids=[c[0] for c in WINDOW_CASES])
def test_reduce_window(case, computation, init, ref):
    _, shape, window, strides, padding, base, dilation = case
    x = RNG.uniform(0.5, 1.5, shape)
    op = getattr(lax, computation)
    f = lambda x: lax.reduce_window(x, init, op, window, strides, padding, base, dilation)  # noqa: E731
    want = direct_window(x, init, ref, window, strides, padding, base, dilation)
    np.testing.assert_allclose(f(x), want, rtol=1e-12)
    np.testing.assert_allclose(fd.jit(f)(x), want, rtol=1e-12)
    xs = np.stack([x, x[::-1].copy()])
    np.testing.assert_allclose(fd.vmap(f)(xs), np.stack([f(xs[0]), f(xs[1])]), rtol=1e-12)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_window_max_ties_split_evenly_and_init_values():
    x = np.array([[1.0, 1.0], [0.0, 1.0]])
    g = fd.grad(lambda x: lax.reduce_window_max(x, (2, 2)).sum())(x)
    np.testing.assert_allclose(g, [[1 / 3, 1 / 3], [0.0, 1 / 3]])
    g_jit = fd.jit(fd.grad(lambda x: lax.reduce_window_max(x, (2, 2)).sum()))(x)
    np.testing.assert_allclose(g_jit, g)
    np.testing.assert_allclose(lax.reduce_window(x, 5.0, lax.max, (1, 2), (1, 2)), [[5.0], [5.0]])
    np.testing.assert_allclose(lax.reduce_window(x, 2.0, lax.add, (1, 2), (1, 2)), [[4.0], [3.0]])
    with pytest.raises(InvalidArgumentError, match="init_value must be 0"):
        lax.reduce_window(x, 2.0, lax.add, (2, 2), (1, 1), "SAME")
    with pytest.raises(InvalidArgumentError, match="computation"):
        lax.reduce_window(x, 0.0, lax.sub, (2, 2), (1, 1))
    with pytest.raises(ShapeError, match="larger than the padded operand"):
        lax.reduce_window_max(x, (3, 1))


# --- funcdiff.nn --------------------------------------------------------------------


def test_nn_conv_is_pytorch_conv_with_bias_groups_and_padding():
    x, w, b = RNG.standard_normal((2, 4, 7, 6)), RNG.standard_normal((6, 2, 3, 3)), \
        RNG.standard_normal(6)
    got = fd.nn.conv(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    want = direct_conv(x, w, (2, 1), ((1, 1), (1, 1)), (1, 1), (1, 2), 2) + b[:, None, None]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert fd.nn.conv(x, w, groups=2, padding="same").shape == (2, 6, 7, 6)
    check_grads(lambda x, w, b: fd.nn.conv(x, w, b, stride=2, groups=2), (x, w, b), order=2)
    with pytest.raises(ShapeError, match="rank 4"):
        fd.nn.conv(x[0], w, groups=2)
    with pytest.raises(ShapeError, match="bias"):
        fd.nn.conv(x, w, np.ones(5), groups=2)


@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation",
                         [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (3, 2, 0, 2, 2), ((2, 1), (0, 1), (1, 0), 1, 1)])
def test_nn_conv_transpose_is_the_adjoint_of_conv(stride, padding, output_padding, groups,
                                                  dilation):
    x = RNG.standard_normal((2, 4, 5, 4))
    w = RNG.standard_normal((4, 3, 3, 2))  # (in, out / groups, k): conv's (out, in / groups, k)
    y = fd.nn.conv_transpose(x, w, stride=stride, padding=padding,
                             output_padding=output_padding, groups=groups, dilation=dilation)
    conv = lambda z: fd.nn.conv(z, w, stride=stride, padding=padding, dilation=dilation,  # noqa: E731
                                groups=groups)
    assert conv(y).shape == x.shape
    v = RNG.standard_normal(y.shape)
    # <conv(v), x> == <v, conv_transpose(x)>: the transposed convolution is conv's adjoint
    np.testing.assert_allclose(np.sum(conv(v) * x), np.sum(v * y), rtol=1e-11)
    check_grads(lambda x, w: fd.nn.conv_transpose(x, w, stride=stride, padding=padding,
                                                  output_padding=output_padding, groups=groups,
                                                  dilation=dilation), (x, w), order=2)


def test_nn_pooling():
    x = RNG.standard_normal((2, 3, 6, 4))
    blocks = x.reshape(2, 3, 3, 2, 2, 2)
    np.testing.assert_allclose(fd.nn.max_pool(x, (2, 2)), blocks.max(axis=(3, 5)))
    np.testing.assert_allclose(fd.nn.avg_pool(x, (2, 2)), blocks.mean(axis=(3, 5)), rtol=1e-12)
    padded = fd.nn.avg_pool(x, 3, stride=1, padding=1, count_include_pad=False)
    np.testing.assert_allclose(padded[..., 0], (x[..., :2]).mean(-1), rtol=1e-12)
    np.testing.assert_allclose(fd.nn.max_pool(x, (3, 3), 1, 1)[..., 0, 0],
                               x[..., :2, :2].max(axis=(-1, -2)))
    check_grads(lambda x: fd.nn.max_pool(x, (2, 2)), (x,), order=2)
    check_grads(lambda x: fd.nn.avg_pool(x, (3, 2), 1, (1, 0), False), (x,), order=2)


def test_conv_kernel_initializers_take_fans_from_the_layout():
    rng = np.random.default_rng(3)
    w = fd.nn.initializers.he_normal(rng, (64, 32, 3, 3), in_axis=1, out_axis=0)  # OIHW
    assert abs(w.var() / (2 / (32 * 9)) - 1) < 0.05
    assert fd.nn.initializers.compute_fans((3, 3, 32, 64)) == (288, 576)  # HWIO


def test_cnn_example_trains_and_its_gradient_matches_central_differences():
    """examples/cnn.py at a small size: the glyphs are learned well above chance (1/6)."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "examples", "cnn.py")
    spec = importlib.util.spec_from_file_location("examples_cnn", path)
    cnn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cnn)
    result = cnn.train(steps=250, n_train=600, n_test=300, verbose=False)
    assert result["gradient_error"] < 1e-6
    assert result["test_accuracy"] >= 0.8, result
