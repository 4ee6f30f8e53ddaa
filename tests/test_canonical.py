"""F1 / Fℓ canonical forms (eq. 8, section 4.3) and canonical distances (eq. 9)."""

import numpy as np
import pytest

from xfskde import canonical_distance, canonicalize, distance, fskde, rotate


@pytest.fixture
def pairs(rng):
    angles = rng.uniform(-np.pi, np.pi, (200, 25))
    weights = rng.random((200, 25))
    return fskde(angles, weights, order=10), rng.uniform(-np.pi, np.pi, 200)


@pytest.mark.parametrize("ell", [1, 2, 3, 4, 5])
def test_canonical_form_is_rotation_invariant(pairs, ell):
    F, phi = pairs
    np.testing.assert_allclose(canonicalize(rotate(F, phi), ell), canonicalize(F, ell), atol=1e-12)


def test_f1_canonical_has_real_nonnegative_f1_and_returns_its_angle(pairs):
    F, _ = pairs
    C, alpha = canonicalize(F, return_angle=True)
    assert np.all(np.abs(C[:, 1].imag) < 1e-15) and np.all(C[:, 1].real >= 0)
    np.testing.assert_allclose(C, rotate(F, alpha), atol=1e-15)
    C3, alpha3 = canonicalize(F, 3, return_angle=True)
    np.testing.assert_allclose(C3, rotate(F, alpha3), atol=1e-14)
    assert np.all(np.abs(C3[:, 3].imag) < 1e-15)


def test_zero_first_coefficient_gives_finite_forms():
    symmetric = fskde([0.0, np.pi], order=6)  # F_1 = 0
    assert abs(symmetric[1]) < 1e-16
    for ell in (1, 2, 4):
        out = canonicalize(symmetric, ell)
        assert np.all(np.isfinite(out))
    zero = np.zeros((3, 5), complex)
    assert np.all(canonicalize(zero, 3) == 0)
    assert np.all(canonical_distance(zero, zero) == 0)
    # F2-canonicalization makes a symmetric set's canonical form rotation invariant
    rotated = rotate(symmetric, 1.1)
    np.testing.assert_allclose(canonicalize(rotated, 2), canonicalize(symmetric, 2), atol=1e-14)


def test_exact_canonical_distance_matches_brute_force(rng):
    F = fskde(rng.uniform(-np.pi, np.pi, (30, 20)), rng.random((30, 20)), order=9)
    G = fskde(rng.uniform(-np.pi, np.pi, (30, 20)), rng.random((30, 20)), order=9)
    d, phi = canonical_distance(F, G, return_angle=True)
    grid = np.linspace(-np.pi, np.pi, 100_000, endpoint=False)
    for i in range(30):
        brute = distance(F[i], rotate(G[i][None], grid)).min()
        assert d[i] <= brute * (1 + 1e-12)
        assert d[i] == pytest.approx(brute, rel=1e-6)
    np.testing.assert_allclose(d, distance(F, rotate(G, phi)), atol=1e-15)


def test_exact_distance_of_a_rotated_copy_is_zero_and_finds_the_rotation(pairs):
    F, phi = pairs
    d, found = canonical_distance(rotate(F, phi), F, return_angle=True)
    assert d.max() < 1e-12
    np.testing.assert_allclose(np.angle(np.exp(1j * (found - phi))), 0, atol=1e-9)


def test_fk_distance_is_eq9_and_bounds_the_exact_distance(pairs, rng):
    F, _ = pairs
    G = fskde(rng.uniform(-np.pi, np.pi, (200, 25)), order=10)
    fk = canonical_distance(F, G, method="fk")
    expected = np.min(
        [distance(canonicalize(F, ell), canonicalize(G, ell)) for ell in range(1, 11)], axis=0
    )
    np.testing.assert_allclose(fk, expected, atol=1e-14)
    assert np.all(fk >= canonical_distance(F, G) - 1e-12)
    fk3, angle = canonical_distance(F, G, method="fk", ells=3, return_angle=True)
    np.testing.assert_allclose(fk3, distance(F, rotate(G, angle)), atol=1e-12)


def test_broadcasting_one_against_many(pairs):
    F, _ = pairs
    d = canonical_distance(F[0], F)
    assert d.shape == (200,) and d[0] < 1e-12


def test_bad_arguments():
    F = fskde([0.1, 0.2], order=3)
    with pytest.raises(ValueError, match="method"):
        canonical_distance(F, F, method="grid")
    with pytest.raises(ValueError, match="ell"):
        canonicalize(F, 0)
