"""F1 / Fℓ canonical forms (eq. 9, section 4.3) and canonical distances (eq. 10)."""

import numpy as np
import pytest

from xfskde import canonical_distance, canonicalize, distance, fskde, rotate

GRID = np.linspace(-np.pi, np.pi, 100_000, endpoint=False)


def random_sets(rng, n_sets, n_angles=25, order=10, clusters=None):
    """FS-KDEs of random weighted angle sets: uniform, or von Mises clusters (sharper densities)."""
    if clusters is None:
        angles = rng.uniform(-np.pi, np.pi, (n_sets, n_angles))
    else:
        centres = rng.uniform(-np.pi, np.pi, (n_sets, clusters))
        pick = rng.integers(0, clusters, (n_sets, n_angles))
        angles = np.take_along_axis(centres, pick, axis=1) + rng.vonmises(0, 8, (n_sets, n_angles))
    return fskde(angles, rng.random((n_sets, n_angles)), order=order, approximation="exact")


@pytest.fixture
def pairs(rng):
    return random_sets(rng, 200), rng.uniform(-np.pi, np.pi, 200)


def brute_force_min(F, G):
    """min over 100 000 rotations φ of ||f - g_φ||, one pair at a time."""
    return np.array([distance(f, rotate(g[None], GRID)).min() for f, g in zip(F, G, strict=True)])


@pytest.mark.parametrize("ell", [1, 2, 3, 4, 5])
def test_canonical_form_is_rotation_invariant(pairs, ell):
    F, phi = pairs
    C = canonicalize(F, ell)
    assert C.shape == F.shape and C.dtype == np.complex128
    np.testing.assert_allclose(canonicalize(rotate(F, phi), ell), C, rtol=0, atol=1e-12)
    # the same sets, rotated by angles outside (-π, π]
    np.testing.assert_allclose(canonicalize(rotate(F, phi + 6 * np.pi), ell), C, atol=1e-12)


@pytest.mark.parametrize(("order", "clusters"), [(4, 2), (12, 3), (30, 1), (39, 5)])
def test_canonical_forms_of_sharp_densities_are_rotation_invariant(rng, order, clusters):
    F = random_sets(rng, 100, 40, order, clusters)
    for _ in range(3):
        phi = rng.uniform(-np.pi, np.pi, 100)
        for ell in (1, 2, 5):
            np.testing.assert_allclose(
                canonicalize(rotate(F, phi), ell), canonicalize(F, ell), rtol=0, atol=1e-12
            )


def test_canonical_forms_are_rotations_with_real_nonnegative_coefficients(pairs):
    F, _ = pairs
    C, alpha = canonicalize(F, return_angle=True)
    assert alpha.shape == (200,)
    assert np.all(np.abs(C[:, 1].imag) < 1e-15) and np.all(C[:, 1].real >= 0)
    np.testing.assert_allclose(C[:, 1].real, np.abs(F[:, 1]), rtol=1e-14)  # eq. 9: |F_1|
    np.testing.assert_allclose(C, rotate(F, alpha), rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.abs(C), np.abs(F), rtol=1e-14)  # a rotation keeps |F_k|
    for ell in (2, 3, 5):
        Cl, alpha_l = canonicalize(F, ell, return_angle=True)
        np.testing.assert_allclose(Cl, rotate(F, alpha_l), rtol=0, atol=1e-14)
        assert np.all(np.abs(Cl[:, ell].imag) < 1e-15) and np.all(Cl[:, ell].real >= 0)


def test_recursive_form_is_the_smallest_rotation_making_each_coefficient_real(pairs):
    """F̃^m = rotate(F̃^{m-1}, arg(F̃^{m-1}_m) / m), arg in (-π, π] (section 4.3)."""
    F, _ = pairs
    previous = canonicalize(F, 1)
    for m in range(2, 6):
        step = np.angle(previous[:, m]) / m
        expected = rotate(previous, step)
        np.testing.assert_allclose(canonicalize(F, m), expected, rtol=0, atol=1e-14)
        previous = expected


def test_zero_first_coefficient_gives_finite_forms():
    symmetric = fskde([0.0, np.pi], order=6)  # F_1 = 0 (to rounding)
    assert abs(symmetric[1]) < 1e-16
    for ell in (1, 2, 4):
        out, alpha = canonicalize(symmetric, ell, return_angle=True)
        assert np.all(np.isfinite(out)) and np.isfinite(alpha)
        np.testing.assert_allclose(np.abs(out), np.abs(symmetric), atol=1e-15)
    # F2-canonicalization makes a symmetric set's canonical form rotation invariant
    rotated = rotate(symmetric, 1.1)
    np.testing.assert_allclose(canonicalize(rotated, 2), canonicalize(symmetric, 2), atol=1e-14)


def test_exactly_zero_coefficients_leave_the_form_unchanged():
    F = np.array([1 / (2 * np.pi), 0, 0.05 * np.exp(0.8j), 0.01j], dtype=complex)  # F_1 == 0
    C, alpha = canonicalize(F, return_angle=True)
    assert alpha == 0
    np.testing.assert_array_equal(C, F)
    zero = np.zeros((3, 5), complex)
    for ell in (1, 3, 10):
        C, alpha = canonicalize(zero, ell, return_angle=True)
        assert np.all(C == 0) and np.all(alpha == 0)
    d, phi = canonical_distance(zero, zero, return_angle=True)
    assert np.all(d == 0) and np.all(np.isfinite(phi))
    assert np.all(canonical_distance(zero, zero, method="fk") == 0)
    G = fskde([0.3, 1.0], order=4)
    assert canonical_distance(zero, G) == pytest.approx(distance(zero, G), rel=1e-14)


def test_levels_beyond_the_length_change_nothing(pairs):
    F, _ = pairs
    np.testing.assert_array_equal(canonicalize(F, 30), canonicalize(F, 10))


def test_exact_canonical_distance_matches_brute_force(rng):
    F = random_sets(rng, 30, 20, 9)
    G = random_sets(rng, 30, 20, 9)
    d, phi = canonical_distance(F, G, return_angle=True)
    brute = brute_force_min(F, G)
    assert np.all(d <= brute * (1 + 1e-12))
    np.testing.assert_allclose(d, brute, rtol=1e-6)
    np.testing.assert_allclose(d, distance(F, rotate(G, phi)), rtol=0, atol=1e-15)
    assert np.all(np.abs(phi) <= np.pi)


@pytest.mark.parametrize(("order", "clusters"), [(39, 3), (25, 6), (2, 2)])
def test_exact_canonical_distance_of_multimodal_densities(rng, order, clusters):
    """Sharp, multi-peaked densities: c(φ) has many local maxima; the global one must win."""
    F = random_sets(rng, 12, 30, order, clusters)
    G = random_sets(rng, 12, 30, order, clusters)
    d = canonical_distance(F, G)
    brute = brute_force_min(F, G)
    assert np.all(d <= brute * (1 + 1e-12))
    np.testing.assert_allclose(d, brute, rtol=1e-6)


def test_exact_distance_of_truncated_and_different_lengths(rng):
    angles = rng.uniform(-np.pi, np.pi, (10, 15))
    F = fskde(angles, order=64, eps=1e-5, approximation="exact")  # ℓ = 28
    G = fskde(rng.uniform(-np.pi, np.pi, (10, 15)), order=20, approximation="exact")  # ℓ = 21
    d = canonical_distance(F, G)
    np.testing.assert_allclose(d, canonical_distance(G, F), rtol=1e-10)
    brute = brute_force_min(F, G)
    assert np.all(d <= brute * (1 + 1e-12))
    np.testing.assert_allclose(d, brute, rtol=1e-6)


def test_exact_distance_of_a_rotated_copy_is_zero_and_finds_the_rotation(pairs):
    F, phi = pairs
    d, found = canonical_distance(rotate(F, phi), F, return_angle=True)
    assert d.max() < 1e-12
    np.testing.assert_allclose(np.angle(np.exp(1j * (found - phi))), 0, atol=1e-9)
    d, found = canonical_distance(F, rotate(F, phi), return_angle=True)
    assert d.max() < 1e-12
    np.testing.assert_allclose(np.angle(np.exp(1j * (found + phi))), 0, atol=1e-9)


def test_exact_distance_is_symmetric_and_rotation_invariant(pairs, rng):
    F, phi = pairs
    G = random_sets(rng, 200)
    d = canonical_distance(F, G)
    np.testing.assert_allclose(canonical_distance(G, F), d, rtol=1e-10, atol=1e-15)
    psi = rng.uniform(-np.pi, np.pi, 200)
    np.testing.assert_allclose(canonical_distance(rotate(F, phi), rotate(G, psi)), d, rtol=1e-10)
    assert np.all(d <= distance(F, G) * (1 + 1e-12))


def test_fk_distance_is_eq10_and_bounds_the_exact_distance(pairs, rng):
    F, _ = pairs
    G = random_sets(rng, 200)
    fk = canonical_distance(F, G, method="fk")
    levels = [distance(canonicalize(F, ell), canonicalize(G, ell)) for ell in range(1, 11)]
    np.testing.assert_allclose(fk, np.min(levels, axis=0), rtol=0, atol=1e-14)
    exact = canonical_distance(F, G)
    assert np.all(fk >= exact * (1 - 1e-12))
    assert np.any(fk > exact * 1.01)  # eq. 10 is an approximation, not the minimum
    fk3, angle = canonical_distance(F, G, method="fk", ells=3, return_angle=True)
    np.testing.assert_allclose(fk3, np.min(levels[:3], axis=0), rtol=0, atol=1e-14)
    np.testing.assert_allclose(fk3, distance(F, rotate(G, angle)), rtol=0, atol=1e-12)
    fk1 = canonical_distance(F, G, method="fk", ells=1)
    np.testing.assert_allclose(fk1, levels[0], rtol=0, atol=1e-14)
    assert np.all(fk1 >= fk3 - 1e-15) and np.all(fk3 >= fk - 1e-15)


def test_broadcasting_one_against_many(pairs):
    F, _ = pairs
    for method in ("exact", "fk"):
        d = canonical_distance(F[0], F, method=method)
        assert d.shape == (200,) and d[0] < 1e-12
        single = [canonical_distance(F[0], F[i], method=method) for i in (0, 1, 50, 199)]
        np.testing.assert_allclose(d[[0, 1, 50, 199]], single, rtol=1e-12, atol=1e-15)
    table = canonical_distance(F[:4, None], F[None, :6])
    assert table.shape == (4, 6)
    np.testing.assert_allclose(table[2, 5], canonical_distance(F[2], F[5]), rtol=1e-12)


def test_bad_arguments():
    F = fskde([0.1, 0.2], order=3)
    with pytest.raises(ValueError, match="method"):
        canonical_distance(F, F, method="grid")
    with pytest.raises(ValueError, match="ell"):
        canonicalize(F, 0)
    with pytest.raises(TypeError, match="ell"):
        canonicalize(F, 1.5)
    with pytest.raises(ValueError, match="ells"):
        canonical_distance(F, F, method="fk", ells=0)
