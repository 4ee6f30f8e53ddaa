"""FS-KDEs of angle sets against direct kernel sums (eq. 1), rotation (eq. 2) and Parseval."""

import numpy as np
import pytest
from scipy import integrate

from xfskde import Cos2KKernel, distance, evaluate, fskde, rotate

THETA = np.linspace(-np.pi, np.pi, 257)


def direct_kde(angles, weights, kernel, theta=THETA, series=False):
    h = kernel.series if series else kernel
    return np.mean(weights[:, None] * h(theta[None, :] - angles[:, None]), axis=0)


@pytest.mark.parametrize("order", [1, 4, 9, 30])
def test_fskde_equals_the_sum_of_kernels(rng, order):
    angles = rng.uniform(-np.pi, np.pi, 40)
    weights = rng.random(40)
    F = fskde(angles, weights, order=order, approximation="exact")
    kernel = Cos2KKernel(order, approximation="exact")
    np.testing.assert_allclose(evaluate(F, THETA), direct_kde(angles, weights, kernel), atol=1e-12)
    unweighted = fskde(angles, order=order, approximation="exact")
    np.testing.assert_allclose(
        evaluate(unweighted, THETA), direct_kde(angles, np.ones(40), kernel), atol=1e-12
    )


@pytest.mark.parametrize(
    ("order", "eps", "approximation"),
    [(64, 1e-5, "exact"), (50, None, "normal"), (90, 1e-3, "auto")],
)
def test_truncated_and_approximate_fskde_use_the_series_kernel(rng, order, eps, approximation):
    angles = rng.uniform(-np.pi, np.pi, 25)
    weights = rng.random(25)
    F = fskde(angles, weights, order=order, eps=eps, approximation=approximation)
    kernel = Cos2KKernel(order, eps=eps, approximation=approximation)
    assert F.shape == (kernel.length,)
    expected = direct_kde(angles, weights, kernel, series=True)
    np.testing.assert_allclose(evaluate(F, THETA), expected, atol=1e-11)


def test_batches_and_axis(rng):
    angles = rng.uniform(-np.pi, np.pi, (3, 20, 4))
    weights = rng.random((3, 20, 4))
    F = fskde(angles, weights, order=5, axis=1)
    assert F.shape == (3, 4, 6)
    for i in range(3):
        for j in range(4):
            np.testing.assert_allclose(F[i, j], fskde(angles[i, :, j], weights[i, :, j], order=5))


def test_weights_broadcast_against_angles(rng):
    angles = rng.uniform(-np.pi, np.pi, (6, 10))
    w = rng.random(10)
    np.testing.assert_allclose(
        fskde(angles, w, order=3), fskde(angles, np.tile(w, (6, 1)), order=3)
    )


def test_large_batch_is_vectorised(rng):
    angles = rng.uniform(-np.pi, np.pi, (200_000, 64)).astype(np.float32)
    F = fskde(angles, order=8)
    assert F.shape == (200_000, 9) and F.dtype == np.complex128
    for row in [0, 12345, 199_999]:
        np.testing.assert_allclose(
            F[row], fskde(angles[row].astype(np.float64), order=8), atol=1e-12
        )


def test_evaluate_is_real_and_shapes_broadcast(rng):
    F = fskde(rng.uniform(-np.pi, np.pi, (2, 3, 15)), order=6)
    f = evaluate(F, np.zeros((4, 5)))
    assert f.shape == (2, 3, 4, 5) and f.dtype == np.float64
    assert evaluate(F, 0.3).shape == (2, 3)


def test_rotation_eq2(rng):
    angles = rng.uniform(-np.pi, np.pi, 30)
    weights = rng.random(30)
    phi = 0.7
    F = fskde(angles, weights, order=7)
    np.testing.assert_allclose(fskde(angles + phi, weights, order=7), rotate(F, phi), atol=1e-14)
    np.testing.assert_allclose(
        evaluate(rotate(F, phi), THETA), evaluate(F, THETA - phi), atol=1e-13
    )
    phis = rng.uniform(-np.pi, np.pi, 5)
    assert rotate(np.tile(F, (5, 1)), phis).shape == (5, 8)


def test_parseval_distance_equals_the_l2_integral(rng):
    F = fskde(rng.uniform(-np.pi, np.pi, 12), rng.random(12), order=6)
    G = fskde(rng.uniform(-np.pi, np.pi, 9), rng.random(9), order=6)
    integral, _ = integrate.quad(
        lambda t: (evaluate(F, t) - evaluate(G, t)) ** 2, -np.pi, np.pi, epsabs=1e-14, limit=200
    )
    assert distance(F, G) == pytest.approx(np.sqrt(integral), rel=1e-9)
    norm2, _ = integrate.quad(lambda t: evaluate(F, t) ** 2, -np.pi, np.pi, epsabs=1e-14)
    assert distance(F, np.zeros_like(F)) ** 2 == pytest.approx(norm2, rel=1e-9)


def test_distance_pads_a_shorter_truncated_series(rng):
    F = fskde(rng.uniform(-np.pi, np.pi, 10), order=64)
    short = F[:20]
    padded = np.concatenate([short, np.zeros(45, complex)])
    assert distance(F, short) == pytest.approx(distance(F, padded))


def test_linearity(rng):
    a1, a2 = rng.uniform(-np.pi, np.pi, (2, 16))
    F = fskde(np.concatenate([a1, a2]), order=5)
    np.testing.assert_allclose(F, 0.5 * (fskde(a1, order=5) + fskde(a2, order=5)), atol=1e-15)


@pytest.mark.parametrize(
    ("angles", "weights", "match"),
    [
        ([0.1, np.nan], None, "angles"),
        ([0.1, np.inf], None, "angles"),
        ([0.1, 0.2], [1.0, -1.0], "non-negative"),
        ([0.1, 0.2], [1.0, np.nan], "weights"),
        (np.zeros((3, 0)), None, "empty"),
        (0.5, None, "axis"),
    ],
)
def test_bad_input_is_refused(angles, weights, match):
    with pytest.raises(ValueError, match=match):
        fskde(angles, weights, order=4)
