"""The cos^2K kernel against the paper's identities (eqs. 3–8) and exact integer arithmetic."""

import itertools
import warnings
from fractions import Fraction
from math import comb, exp, pi

import numpy as np
import pytest
from scipy import integrate

from xfskde import Cos2KKernel, truncated_length


def exact_coefficients(order: int) -> np.ndarray:
    """H_k = C(2K, K+k) / (2π C(2K, K)), k = 0..K, from exact integers (correctly rounded ratio)."""
    central = comb(2 * order, order)
    c = central
    out = np.empty(order + 1)
    for k in range(order + 1):
        out[k] = (c / central) / (2 * pi)  # int / int is correctly rounded, whatever the size
        c = c * (order - k) // (order + k + 1)  # C(2K, K+k+1), exact
    return out


@pytest.mark.parametrize("order", [1, 2, 4, 8, 16, 32, 39])
def test_kernel_integrates_to_one_is_even_nonnegative_and_zero_at_pi(order):
    kernel = Cos2KKernel(order, approximation="exact")
    value, _ = integrate.quad(kernel, -np.pi, np.pi, epsabs=1e-13, epsrel=1e-13, limit=200)
    assert value == pytest.approx(1.0, abs=1e-12)
    theta = np.linspace(-np.pi, np.pi, 1001)
    h = kernel(theta)
    np.testing.assert_allclose(h, kernel(-theta), rtol=1e-15, atol=0)
    np.testing.assert_allclose(kernel(theta + 2 * np.pi), h, rtol=1e-12, atol=1e-15)
    assert np.all(h >= 0)
    assert kernel(np.pi) == pytest.approx(0.0, abs=1e-15)
    assert kernel(-np.pi) == pytest.approx(0.0, abs=1e-15)
    assert np.argmax(h) == 500  # peak at θ = 0
    assert kernel(0.0) == pytest.approx(kernel.normalization, rel=1e-15)  # h(0) = C_K
    assert kernel(np.zeros((2, 3))).shape == (2, 3)


@pytest.mark.parametrize("order", [1, 2, 3, 8, 20, 39, 64, 200])
def test_fourier_series_reproduces_the_kernel(order):
    """Σ_{|k|<=K} H_k e^{ikθ} = h(θ), with H_{-k} = H_k (eqs. 3–5)."""
    kernel = Cos2KKernel(order, approximation="exact")
    theta = np.linspace(-np.pi, np.pi, 777)
    H = kernel.coefficients
    k = np.arange(-order, order + 1)
    two_sided = H[np.abs(k)]
    series = np.exp(1j * np.multiply.outer(theta, k)) @ two_sided
    np.testing.assert_allclose(series.imag, 0, atol=1e-12)
    np.testing.assert_allclose(series.real, kernel(theta), rtol=0, atol=1e-12)
    np.testing.assert_allclose(kernel.series(theta), kernel(theta), rtol=0, atol=1e-12)
    assert H[0] == 1 / (2 * np.pi)
    assert np.all(np.diff(H) < 0) and np.all(H > 0)


@pytest.mark.parametrize("order", [1, 2, 7, 39, 100, 1000, 2047, 2048, 2049, 5000])
def test_exact_coefficients_match_integer_arithmetic(order):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow / invalid warnings
        H = Cos2KKernel(order, approximation="exact").coefficients
    assert H.dtype == np.float64 and H.shape == (order + 1,)
    assert np.all(np.isfinite(H)) and np.all(H >= 0)
    exact = exact_coefficients(order)
    representable = exact > 1e-290  # below: subnormal doubles, no relative accuracy exists
    np.testing.assert_allclose(H[representable], exact[representable], rtol=1e-12, atol=0)
    assert np.all(H[~representable] < 1e-289)
    assert H[0] == 1 / (2 * pi)


@pytest.mark.parametrize("order", [1, 2, 5, 39, 50, 1000, 2047, 2048, 2049, 2050, 3001, 5000])
def test_normalization_matches_eq5(order):
    """C_K = 2^{2K-1} / (C(2K, K) π) (eq. 5), exactly rounded from integers."""
    exact = float(Fraction(2 ** (2 * order - 1), comb(2 * order, order))) / pi
    kernel = Cos2KKernel(order)
    assert kernel.normalization == pytest.approx(exact, rel=1e-13)
    # and consistent with the coefficients: C_K / 4^K C(2K, K+k) = H_k (eq. 4)
    assert kernel.normalization * 2 * np.pi * float(
        Fraction(comb(2 * order, order), 4**order)
    ) == pytest.approx(1.0, rel=1e-13)


def test_normal_approximation_error_shrinks_with_order():
    orders = [4, 8, 16, 32, 64, 128]
    errors = []
    for order in orders:
        exact = exact_coefficients(order)
        approx = Cos2KKernel(order, approximation="normal").coefficients
        k = np.arange(order + 1)
        np.testing.assert_allclose(approx, np.exp(-(k**2) / order) / (2 * pi), rtol=1e-15)
        errors.append(np.abs(exact - approx).max())
    assert all(b < a for a, b in itertools.pairwise(errors))
    # the error decays like 1/K (about 0.021/K) and is never negligible-by-accident
    scaled = [e * k for e, k in zip(errors, orders, strict=True)]
    assert max(scaled) < 0.025 and min(scaled) > 0.01


def test_auto_switches_to_normal_at_2k_80():
    for order in (1, 20, 39):
        kernel = Cos2KKernel(order)
        assert kernel.approximation == "exact"
        np.testing.assert_array_equal(
            kernel.coefficients, Cos2KKernel(order, approximation="exact").coefficients
        )
    for order in (40, 41, 100, 5000):
        kernel = Cos2KKernel(order)
        assert kernel.approximation == "normal"
        np.testing.assert_array_equal(
            kernel.coefficients, Cos2KKernel(order, approximation="normal").coefficients
        )
    assert Cos2KKernel(40, approximation="exact").approximation == "exact"
    assert Cos2KKernel(3, approximation="normal").approximation == "normal"


@pytest.mark.parametrize("order", [1, 2, 3, 5, 10, 11, 12, 13, 30, 39, 40, 64, 100, 1000, 4999])
@pytest.mark.parametrize("eps", [None, 0.9, 0.5, 1e-2, 1e-5, 1e-8, 1e-12, 1e-300])
def test_truncated_length_counts_kept_coefficients(order, eps):
    if eps is None:
        expected = order + 1
    else:
        expected = sum(exp(-(k**2) / order) >= eps for k in range(order + 1))
    assert truncated_length(order, eps) == expected
    kernel = Cos2KKernel(order, eps=eps)
    assert kernel.length == expected == kernel.coefficients.shape[0]
    # the truncated coefficients are the first ℓ of the untruncated ones
    full = Cos2KKernel(order, approximation=kernel.approximation).coefficients
    np.testing.assert_array_equal(kernel.coefficients, full[:expected])


def test_truncated_length_on_the_exact_boundary():
    # e^{-k²/K} == eps exactly for eps = exp(-k²/K) computed the same way: k is kept (>=)
    for order, k in [(10, 3), (64, 20), (1000, 77)]:
        eps = exp(-(k**2) / order)
        assert truncated_length(order, eps) == k + 1
        assert truncated_length(order, np.nextafter(eps, 1.0)) == k


def test_truncation_of_order_64_matches_figure_3():
    # Figure 3: K = 64 keeps most of its shape with a quarter of the coefficients
    kernel = Cos2KKernel(64, eps=1e-5, approximation="exact")
    assert kernel.length == 28
    theta = np.linspace(-np.pi, np.pi, 501)
    full = Cos2KKernel(64, approximation="exact")(theta)
    assert np.abs(kernel.series(theta) - full).max() < 1e-4 * full.max()


@pytest.mark.parametrize("eps", [1e-5, 1e-2, 1e-9])
def test_for_length_is_the_sharpest_kernel_of_that_length(eps):
    for n in range(2, 65):
        kernel = Cos2KKernel.for_length(n, eps=eps)
        assert kernel.eps == eps
        assert kernel.length == n == truncated_length(kernel.order, eps)
        assert truncated_length(kernel.order + 1, eps) > n


def test_for_length_matches_a_linear_search():
    lengths = [truncated_length(order, 1e-5) for order in range(1, 400)]
    for n in range(2, 30):
        largest = max(o for o, ell in zip(range(1, 400), lengths, strict=True) if ell == n)
        assert Cos2KKernel.for_length(n).order == largest


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"order": 0}, ValueError, "order"),
        ({"order": -3}, ValueError, "order"),
        ({"order": 2.5}, ValueError, "order"),
        ({"order": np.nan}, ValueError, "order"),
        ({"order": "8"}, TypeError, "order"),
        ({"order": None}, TypeError, "order"),
        ({"order": True}, TypeError, "order"),
        ({"order": 8, "eps": 0.0}, ValueError, "eps"),
        ({"order": 8, "eps": 1.0}, ValueError, "eps"),
        ({"order": 8, "eps": 1.5}, ValueError, "eps"),
        ({"order": 8, "eps": -1e-5}, ValueError, "eps"),
        ({"order": 8, "eps": np.nan}, ValueError, "eps"),
        ({"order": 8, "eps": "small"}, TypeError, "eps"),
        ({"order": 8, "approximation": "taylor"}, ValueError, "approximation"),
        ({"order": 8, "approximation": None}, ValueError, "approximation"),
    ],
)
def test_bad_parameters_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        Cos2KKernel(**kwargs)
    if set(kwargs) <= {"order", "eps"}:
        with pytest.raises(error, match=match):
            truncated_length(kwargs["order"], kwargs.get("eps"))


def test_integral_orders_given_as_floats_are_accepted():
    assert Cos2KKernel(8.0).order == 8
    assert Cos2KKernel(np.int64(8)) == Cos2KKernel(8)


def test_for_length_rejects_impossible_lengths():
    with pytest.raises(ValueError, match="n_coefficients"):
        Cos2KKernel.for_length(1)
    with pytest.raises(ValueError, match="n_coefficients"):
        Cos2KKernel.for_length(0)
    with pytest.raises(TypeError, match="n_coefficients"):
        Cos2KKernel.for_length(4.5)
    with pytest.raises(ValueError, match="eps"):
        Cos2KKernel.for_length(10, eps=2.0)
