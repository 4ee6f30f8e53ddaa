"""FS-KDEs of angle sets against direct kernel sums (eq. 1), rotation (eq. 2) and Parseval."""

import numpy as np
import pytest
from _brute_force import direct_kde
from scipy import integrate

from xfskde import Cos2KKernel, distance, evaluate, fskde, rotate

THETA = np.linspace(-np.pi, np.pi, 257)


@pytest.mark.parametrize("order", [1, 2, 4, 9, 30, 39])
def test_fskde_equals_the_sum_of_kernels(rng, order):
    angles = rng.uniform(-3 * np.pi, 3 * np.pi, 40)  # angles outside (-π, π] too
    weights = rng.random(40)
    F = fskde(angles, weights, order=order, approximation="exact")
    assert F.shape == (order + 1,) and F.dtype == np.complex128
    kernel = Cos2KKernel(order, approximation="exact")
    f = evaluate(F, THETA)
    assert f.dtype == np.float64
    np.testing.assert_allclose(f, direct_kde(angles, weights, kernel, THETA), rtol=0, atol=1e-12)
    unweighted = fskde(angles, order=order, approximation="exact")
    np.testing.assert_allclose(
        evaluate(unweighted, THETA), direct_kde(angles, None, kernel, THETA), rtol=0, atol=1e-12
    )


def test_coefficients_are_eq1(rng):
    """F_k = H_k / N Σ w_n e^{-ikθ_n}, written out."""
    angles, weights = rng.uniform(-np.pi, np.pi, 17), rng.random(17)
    H = Cos2KKernel(6).coefficients
    expected = [H[k] / 17 * np.sum(weights * np.exp(-1j * k * angles)) for k in range(7)]
    np.testing.assert_allclose(fskde(angles, weights, order=6), expected, rtol=0, atol=1e-15)
    assert fskde(angles, weights, order=6)[0].imag == 0


@pytest.mark.parametrize(
    ("order", "eps", "approximation"),
    [(64, 1e-5, "exact"), (50, None, "normal"), (90, 1e-3, "auto"), (8, 0.1, "exact")],
)
def test_truncated_and_approximate_fskde_use_the_series_kernel(rng, order, eps, approximation):
    angles = rng.uniform(-np.pi, np.pi, 25)
    weights = rng.random(25)
    F = fskde(angles, weights, order=order, eps=eps, approximation=approximation)
    kernel = Cos2KKernel(order, eps=eps, approximation=approximation)
    assert F.shape == (kernel.length,)
    expected = direct_kde(angles, weights, kernel, THETA, series=True)
    np.testing.assert_allclose(evaluate(F, THETA), expected, rtol=0, atol=1e-11)
    full = fskde(angles, weights, order=order, approximation=kernel.approximation)
    np.testing.assert_array_equal(F, full[: kernel.length])


def test_batches_and_axis_equal_direct_kdes(rng):
    angles = rng.uniform(-np.pi, np.pi, (3, 20, 4))
    weights = rng.random((3, 20, 4))
    kernel = Cos2KKernel(5)
    F = fskde(angles, weights, order=5, axis=1)
    assert F.shape == (3, 4, 6)
    f = evaluate(F, THETA)
    assert f.shape == (3, 4, THETA.size)
    for i in range(3):
        for j in range(4):
            expected = direct_kde(angles[i, :, j], weights[i, :, j], kernel, THETA)
            np.testing.assert_allclose(f[i, j], expected, rtol=0, atol=1e-12)
    for axis in (0, -3):
        G = fskde(angles, weights, order=5, axis=axis)
        assert G.shape == (20, 4, 6)
        np.testing.assert_allclose(
            evaluate(G[7, 2], THETA),
            direct_kde(angles[:, 7, 2], weights[:, 7, 2], kernel, THETA),
            atol=1e-12,
        )


def test_weights_broadcast_against_angles(rng):
    angles = rng.uniform(-np.pi, np.pi, (6, 10))
    w = rng.random(10)
    np.testing.assert_allclose(
        fskde(angles, w, order=3), fskde(angles, np.tile(w, (6, 1)), order=3), atol=1e-15
    )
    # one angle set with several weightings
    W = rng.random((5, 10))
    F = fskde(angles[0], W, order=3)
    assert F.shape == (5, 4)
    for r in range(5):
        np.testing.assert_allclose(
            evaluate(F[r], THETA), direct_kde(angles[0], W[r], Cos2KKernel(3), THETA), atol=1e-12
        )


def test_large_batch_is_vectorised(rng):
    angles = rng.uniform(-np.pi, np.pi, (200_000, 64)).astype(np.float32)
    # float64 angles (of float32 values): complex128 out, checked to 1e-13; float32 angles give
    # the same coefficients rounded to complex64 (tests/test_dtypes_core.py)
    F = fskde(angles.astype(np.float64), order=8)
    assert F.shape == (200_000, 9) and F.dtype == np.complex128
    H = Cos2KKernel(8).coefficients
    k = np.arange(9)
    for row in [0, 12345, 131_071, 199_999]:
        theta = angles[row].astype(np.float64)
        expected = H / 64 * np.exp(-1j * np.multiply.outer(k, theta)).sum(axis=1)
        np.testing.assert_allclose(F[row], expected, rtol=0, atol=1e-13)


def test_evaluate_is_real_and_equals_the_two_sided_sum(rng):
    F = fskde(rng.uniform(-np.pi, np.pi, (2, 3, 15)), rng.random((2, 3, 15)), order=6)
    theta = rng.uniform(-np.pi, np.pi, (4, 5))
    f = evaluate(F, theta)
    assert f.shape == (2, 3, 4, 5) and f.dtype == np.float64
    k = np.arange(-6, 7)
    two_sided = np.where(k >= 0, F[..., np.abs(k)], np.conj(F[..., np.abs(k)]))  # F_-k = conj F_k
    full = np.einsum("...k,tsk->...ts", two_sided, np.exp(1j * np.multiply.outer(theta, k)))
    np.testing.assert_allclose(full.imag, 0, atol=1e-14)
    np.testing.assert_allclose(f, full.real, rtol=0, atol=1e-14)
    assert evaluate(F, 0.3).shape == (2, 3)
    np.testing.assert_allclose(evaluate(F, 0.3), evaluate(F, 0.3 + 2 * np.pi), atol=1e-13)


@pytest.mark.parametrize("phi", [0.7, -2.9, np.pi, 10.0])
def test_rotation_eq2(rng, phi):
    angles = rng.uniform(-np.pi, np.pi, 30)
    weights = rng.random(30)
    F = fskde(angles, weights, order=7)
    R = rotate(F, phi)
    k = np.arange(8)
    np.testing.assert_allclose(R, np.exp(-1j * k * phi) * F, rtol=0, atol=1e-15)
    np.testing.assert_allclose(fskde(angles + phi, weights, order=7), R, rtol=0, atol=1e-14)
    np.testing.assert_allclose(evaluate(R, THETA), evaluate(F, THETA - phi), rtol=0, atol=1e-13)
    np.testing.assert_allclose(rotate(R, -phi), F, rtol=0, atol=1e-15)


def test_rotation_broadcasts_and_keeps_precision(rng):
    angles = rng.uniform(-np.pi, np.pi, (5, 12))
    F = fskde(angles, order=4)
    phis = rng.uniform(-np.pi, np.pi, 5)
    R = rotate(F, phis)
    assert R.shape == (5, 5)
    np.testing.assert_allclose(R, fskde(angles + phis[:, None], order=4), atol=1e-14)
    many = rotate(F[0], phis[:, None, None] * np.ones((1, 2, 1)))  # one F, (5, 2, 1) angles
    assert many.shape == (5, 2, 1, 5)
    assert rotate(F.astype(np.complex64), 0.3).dtype == np.complex64


def test_parseval_distance_equals_the_l2_integral(rng):
    F = fskde(rng.uniform(-np.pi, np.pi, 12), rng.random(12), order=6)
    G = fskde(rng.uniform(-np.pi, np.pi, 9), rng.random(9), order=6)
    integral, _ = integrate.quad(
        lambda t: (evaluate(F, t) - evaluate(G, t)) ** 2, -np.pi, np.pi, epsabs=1e-14, limit=200
    )
    assert distance(F, G) == pytest.approx(np.sqrt(integral), rel=1e-9)
    norm2, _ = integrate.quad(lambda t: evaluate(F, t) ** 2, -np.pi, np.pi, epsabs=1e-14)
    assert distance(F, np.zeros_like(F)) ** 2 == pytest.approx(norm2, rel=1e-9)
    assert distance(F, F) == 0
    assert distance(F, G) == distance(G, F)


def test_parseval_distance_is_batched(rng):
    F = fskde(rng.uniform(-np.pi, np.pi, (4, 10)), order=5)
    G = fskde(rng.uniform(-np.pi, np.pi, (3, 1, 10)), order=5)
    d = distance(F, G)
    assert d.shape == (3, 4)
    t = np.linspace(-np.pi, np.pi, 4096, endpoint=False)  # exact for trigonometric polynomials
    diff = evaluate(F, t)[None] - evaluate(G, t)
    np.testing.assert_allclose(d, np.sqrt(np.mean(diff**2, axis=-1) * 2 * np.pi), rtol=1e-12)


def test_distance_pads_a_shorter_truncated_series(rng):
    angles = rng.uniform(-np.pi, np.pi, 10)
    F = fskde(angles, order=64, approximation="exact")
    short = fskde(rng.uniform(-np.pi, np.pi, 7), order=64, eps=1e-5, approximation="exact")
    assert short.shape == (28,)
    padded = np.concatenate([short, np.zeros(37, complex)])
    assert distance(F, short) == pytest.approx(distance(F, padded), rel=1e-15)
    assert distance(short, F) == pytest.approx(distance(padded, F), rel=1e-15)
    integral, _ = integrate.quad(
        lambda t: (evaluate(F, t) - evaluate(short, t)) ** 2, -np.pi, np.pi, limit=400
    )
    assert distance(F, short) == pytest.approx(np.sqrt(integral), rel=1e-8)


def test_linearity(rng):
    a1, a2 = rng.uniform(-np.pi, np.pi, (2, 16))
    F = fskde(np.concatenate([a1, a2]), order=5)
    np.testing.assert_allclose(F, 0.5 * (fskde(a1, order=5) + fskde(a2, order=5)), atol=1e-15)
    w1, w2 = rng.random((2, 16))
    np.testing.assert_allclose(
        fskde(a1, 2.0 * w1 + 3.0 * w2, order=5),
        2.0 * fskde(a1, w1, order=5) + 3.0 * fskde(a1, w2, order=5),
        atol=1e-15,
    )
    # the density is linear in F
    G = fskde(a2, w2, order=5)
    np.testing.assert_allclose(
        evaluate(2 * F - G, THETA), 2 * evaluate(F, THETA) - evaluate(G, THETA), atol=1e-13
    )


def test_unit_weights_and_no_weights_agree(rng):
    angles = rng.uniform(-np.pi, np.pi, 11)
    np.testing.assert_array_equal(fskde(angles, order=4), fskde(angles, np.ones(11), order=4))
    # F_0 is the mean weight times H_0: a density of total mass mean(w)
    w = rng.random(11)
    assert fskde(angles, w, order=4)[0] == pytest.approx(w.mean() / (2 * np.pi), rel=1e-14)


@pytest.mark.parametrize(
    ("angles", "weights", "match"),
    [
        ([0.1, np.nan], None, "angles"),
        ([0.1, np.inf], None, "angles"),
        ([0.1, -np.inf], None, "angles"),
        ([0.1, 0.2], [1.0, -1.0], "non-negative"),
        ([0.1, 0.2], [1.0, np.nan], "weights"),
        ([0.1, 0.2], [1.0, np.inf], "weights"),
        (np.zeros((3, 0)), None, "empty"),
        ([], None, "empty"),
        (0.5, None, "axis"),
    ],
)
def test_bad_input_is_refused(angles, weights, match):
    with pytest.raises(ValueError, match=match):
        fskde(angles, weights, order=4)


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="order"):
        fskde([0.1], order=0)
    with pytest.raises(ValueError, match="eps"):
        fskde([0.1], order=4, eps=2.0)
    with pytest.raises(ValueError, match="approximation"):
        fskde([0.1], order=4, approximation="gaussian")
