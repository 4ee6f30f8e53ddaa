"""The cos^2K kernel against the paper's identities (eqs. 3–7) and exact arithmetic."""

import itertools
from fractions import Fraction
from math import comb, exp, pi

import numpy as np
import pytest
from scipy import integrate

from xfskde import Cos2KKernel, truncated_length


@pytest.mark.parametrize("order", [1, 2, 4, 8, 16, 32])
def test_kernel_integrates_to_one_is_even_nonnegative_and_zero_at_pi(order):
    kernel = Cos2KKernel(order, approximation="exact")
    value, _ = integrate.quad(kernel, -np.pi, np.pi, epsabs=1e-13, epsrel=1e-13)
    assert value == pytest.approx(1.0, abs=1e-12)
    theta = np.linspace(-np.pi, np.pi, 1001)
    np.testing.assert_allclose(kernel(theta), kernel(-theta), rtol=0, atol=1e-15)
    assert np.all(kernel(theta) >= 0)
    assert kernel(np.pi) == pytest.approx(0.0, abs=1e-15)
    assert np.argmax(kernel(theta)) == 500  # peak at 0


@pytest.mark.parametrize("order", [1, 3, 8, 20, 39])
def test_fourier_series_reproduces_the_kernel(order):
    kernel = Cos2KKernel(order, approximation="exact")
    theta = np.linspace(-np.pi, np.pi, 777)
    H = kernel.coefficients
    series = H[0] + 2 * sum(H[k] * np.cos(k * theta) for k in range(1, order + 1))
    np.testing.assert_allclose(series, kernel(theta), rtol=0, atol=1e-12)
    np.testing.assert_allclose(kernel.series(theta), kernel(theta), rtol=0, atol=1e-12)
    assert H[0] == 1 / (2 * np.pi)


@pytest.mark.parametrize("order", [1, 7, 100, 1000, 5000])
def test_exact_coefficients_match_rational_arithmetic(order):
    H = Cos2KKernel(order, approximation="exact").coefficients
    assert np.all(np.isfinite(H)) and H.shape == (order + 1,)
    for k in sorted({0, 1, order // 3, order // 2, order}):
        exact = float(Fraction(comb(2 * order, order + k), comb(2 * order, order))) / (2 * pi)
        if exact > 1e-300:
            assert H[k] == pytest.approx(exact, rel=1e-12)
        else:
            assert H[k] < 1e-290


@pytest.mark.parametrize("order", [1, 5, 50, 5000])
def test_normalization_matches_eq5(order):
    exact = float(Fraction(2 ** (2 * order - 1), comb(2 * order, order))) / pi
    assert Cos2KKernel(order).normalization == pytest.approx(exact, rel=1e-12)


def test_normal_approximation_error_shrinks_with_order():
    errors = []
    for order in [4, 8, 16, 32, 64, 128]:
        exact = Cos2KKernel(order, approximation="exact").coefficients
        approx = Cos2KKernel(order, approximation="normal").coefficients
        np.testing.assert_allclose(approx, np.exp(-(np.arange(order + 1) ** 2) / order) / (2 * pi))
        errors.append(np.abs(exact - approx).max())
    assert all(b < a for a, b in itertools.pairwise(errors))
    # the error decays like 1/K (about 0.021/K)
    assert max(e * k for e, k in zip(errors, [4, 8, 16, 32, 64, 128], strict=True)) < 0.025


def test_auto_switches_to_normal_at_2k_80():
    assert Cos2KKernel(39).approximation == "exact"
    assert Cos2KKernel(40).approximation == "normal"
    assert Cos2KKernel(40, approximation="exact").approximation == "exact"


@pytest.mark.parametrize("order", [1, 2, 5, 10, 11, 12, 13, 30, 64, 100, 1000])
@pytest.mark.parametrize("eps", [None, 0.5, 1e-2, 1e-5, 1e-12])
def test_truncated_length_counts_kept_coefficients(order, eps):
    expected = (
        order + 1 if eps is None else sum(exp(-(k**2) / order) >= eps for k in range(order + 1))
    )
    assert truncated_length(order, eps) == expected
    kernel = Cos2KKernel(order, eps=eps)
    assert kernel.length == expected == kernel.coefficients.shape[0]


def test_truncation_of_order_64_matches_figure_4():
    # Figure 4: K = 64 keeps most of its shape with a quarter of the coefficients
    kernel = Cos2KKernel(64, eps=1e-5, approximation="exact")
    assert kernel.length == 28
    theta = np.linspace(-np.pi, np.pi, 501)
    full = Cos2KKernel(64, approximation="exact")(theta)
    assert np.abs(kernel.series(theta) - full).max() < 1e-4 * full.max()


@pytest.mark.parametrize("n", list(range(2, 65)))
def test_for_length_is_the_sharpest_kernel_of_that_length(n):
    kernel = Cos2KKernel.for_length(n, eps=1e-5)
    assert kernel.length == n
    assert truncated_length(kernel.order + 1, 1e-5) > n


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"order": 0}, ValueError, "order"),
        ({"order": -3}, ValueError, "order"),
        ({"order": 2.5}, ValueError, "order"),
        ({"order": "8"}, TypeError, "order"),
        ({"order": 8, "eps": 0.0}, ValueError, "eps"),
        ({"order": 8, "eps": 1.0}, ValueError, "eps"),
        ({"order": 8, "eps": 1.5}, ValueError, "eps"),
        ({"order": 8, "approximation": "taylor"}, ValueError, "approximation"),
    ],
)
def test_bad_parameters_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        Cos2KKernel(**kwargs)


def test_for_length_rejects_impossible_lengths():
    with pytest.raises(ValueError, match="n_coefficients"):
        Cos2KKernel.for_length(1)
    with pytest.raises(ValueError, match="eps"):
        Cos2KKernel.for_length(10, eps=2.0)
