"""Patch and cell descriptors (section 5.1) against brute force, the paper's counts, rotations."""

from __future__ import annotations

import numpy as np
import pytest
from skimage.feature import hog

import xfskde
from xfskde import descriptors as D
from xfskde.gradients import angle_bins


@pytest.fixture
def patches(rng):
    return rng.random((6, 64, 64))


def _brute_gradient(patch):
    """Central differences / 2 (np.gradient) — equal to xfskde.gradient away from the border."""
    return np.gradient(patch, axis=1) + 1j * np.gradient(patch, axis=0)


def _brute_disk(h, w, diameter):
    return [
        (y, x)
        for y in range(h)
        for x in range(w)
        if (y - (h - 1) / 2) ** 2 + (x - (w - 1) / 2) ** 2 <= (diameter / 2) ** 2
    ]


def test_disk_has_the_papers_2828_pixels(patches):
    mask = D.disk_mask((64, 64))
    assert mask.sum() == 2828 == len(_brute_disk(64, 64, 60))
    assert D.intensity_descriptor(patches).shape == (6, 2828)
    ys, xs = zip(*_brute_disk(64, 64, 60), strict=True)
    np.testing.assert_array_equal(D.intensity_descriptor(patches[2]), patches[2][ys, xs])
    # the disk is invariant under rot90 (centre at 31.5, 31.5) and keeps a 2-pixel rim
    np.testing.assert_array_equal(mask, np.rot90(mask))
    assert not mask[:2].any() and not mask[:, -2:].any()
    assert D.disk_mask((5, 7), None).all()


def test_patch_gradients_match_central_differences(patches):
    g = D.patch_gradients(patches)
    mask = D.disk_mask((64, 64))
    for n in (0, 5):
        np.testing.assert_allclose(g[n], _brute_gradient(patches[n])[mask], atol=1e-12)


@pytest.mark.parametrize("n_bins", [4, 7, 32])
def test_gradient_histogram_against_brute_force(patches, n_bins):
    hist = D.gradient_histogram(patches, n_bins)
    edges = -np.pi + 2 * np.pi * np.arange(n_bins + 1) / n_bins
    mask = D.disk_mask((64, 64))
    for n in range(len(patches)):
        g = _brute_gradient(patches[n])[mask]
        theta = np.angle(g)
        expected = np.zeros(n_bins)
        for t, w in zip(theta, np.abs(g), strict=True):
            j = np.searchsorted(edges, t, side="left") - 1  # edges[j] < t <= edges[j+1]
            expected[j % n_bins] += w
        np.testing.assert_allclose(hist[n], expected / mask.sum(), rtol=1e-10, atol=1e-14)


def test_histogram_bins_are_left_open():
    # a patch whose disk gradients all point along -x: arg = π, and -π from a -0.0 part
    patch = -np.tile(np.arange(64.0), (64, 1))
    assert np.all(np.angle(D.patch_gradients(patch)) == np.pi)
    hist = D.gradient_histogram(patch, 8)
    assert hist[-1] == pytest.approx(1.0) and np.all(hist[:-1] == 0)
    assert np.angle(complex(-1.0, -0.0)) == -np.pi
    assert angle_bins(np.array([complex(-1.0, -0.0)]), 8)[0] == 7


def test_rot90_rolls_the_histogram_and_canonical_form_is_invariant(patches):
    n_bins = 12
    hist = D.gradient_histogram(patches, n_bins)
    turned = D.gradient_histogram(np.rot90(patches, axes=(1, 2)), n_bins)
    # rot90 subtracts π/2 from every angle: a shift of n/4 bins
    np.testing.assert_allclose(turned, np.roll(hist, -n_bins // 4, axis=-1), rtol=1e-12)
    canon = D.gradient_histogram(patches, n_bins, canonical=True)
    np.testing.assert_allclose(D.canonical_histogram(turned), canon, rtol=1e-12, atol=1e-15)
    assert np.all(canon[:, 0] == hist.max(axis=1))
    np.testing.assert_array_equal(D.canonical_histogram([1, 3, 2, 3]), [3, 2, 3, 1])


@pytest.mark.parametrize(
    ("length", "ell", "order"), [(4, 2, 1), (10, 5, 4), (11, 6, 5), (32, 16, 22)]
)
def test_length_convention(length, ell, order):
    assert D.coefficient_count(length) == ell
    kernel = D.kernel_for_length(length)
    assert (kernel.length, kernel.order) == (ell, order)
    # the next order is longer: the sharpest kernel of that length (eq. 8, ε = 1e-5)
    assert xfskde.truncated_length(order + 1, 1e-5) == ell + 1
    F = D.fskde_descriptor(np.zeros((2, 64, 64)), length)
    assert D.as_real_vector(F).shape == (2, 2 * ell - 1)
    assert 2 * ell - 1 <= length <= 2 * ell


def test_fskde_descriptor_is_eq1_written_out(patches):
    mask = D.disk_mask((64, 64))
    for length in (6, 10, 25):
        kernel = D.kernel_for_length(length)
        k = np.arange(kernel.length)
        F = D.fskde_descriptor(patches, length)
        for n in (1, 4):
            g = _brute_gradient(patches[n])[mask]
            direct = (np.abs(g)[:, None] * np.exp(-1j * k * np.angle(g)[:, None])).sum(0)
            np.testing.assert_allclose(F[n], kernel.coefficients * direct / mask.sum(), atol=1e-14)


def test_several_lengths_at_once_equal_one_at_a_time(patches):
    many = D.fskde_descriptors(patches, [4, 10, 17, 64], canonical="f1")
    for length, F in many.items():
        g = D.patch_gradients(patches)
        order = D.kernel_for_length(length).order
        alone = xfskde.canonicalize(xfskde.fskde(np.angle(g), np.abs(g), order=order, eps=1e-5))
        np.testing.assert_allclose(F, alone, rtol=1e-10, atol=1e-16)


def test_real_vector_distance_is_the_parseval_distance(patches, rng):
    F = D.fskde_descriptor(patches, 20)
    G = D.fskde_descriptor(rng.random((6, 64, 64)), 20)
    v, w = D.as_real_vector(F), D.as_real_vector(G)
    np.testing.assert_allclose(np.linalg.norm(v - w, axis=-1), xfskde.distance(F, G), rtol=1e-12)
    np.testing.assert_allclose(D.fskde_distance(F, G), xfskde.distance(F, G), rtol=0)
    # the vector's entries are the coefficients, scaled
    np.testing.assert_allclose(v[:, 0], np.sqrt(2 * np.pi) * F[:, 0].real)
    np.testing.assert_allclose(v[:, 3] + 1j * v[:, 4], 2 * np.sqrt(np.pi) * F[:, 2])


def test_rotation_of_a_patch_rotates_its_fskde(patches):
    turned = np.rot90(patches, axes=(1, 2))
    F, G = D.fskde_descriptor(patches, 16), D.fskde_descriptor(turned, 16)
    np.testing.assert_allclose(G, xfskde.rotate(F, -np.pi / 2), atol=1e-14)  # eq. 2
    np.testing.assert_allclose(
        D.fskde_descriptor(turned, 16, canonical="f1"),
        D.fskde_descriptor(patches, 16, canonical="f1"),
        atol=1e-13,
    )  # eq. 9
    plain = D.fskde_distance(F, G)
    assert np.all(plain > 1e-3)
    for method in ("f1", "fk", "exact"):
        assert np.all(D.fskde_distance(F, G, method) < 1e-10 * plain)


def test_rotation_invariant_distances_are_ordered(patches, rng):
    F = D.fskde_descriptor(patches, 12)
    G = D.fskde_descriptor(rng.random((6, 64, 64)), 12)
    exact, fk, f1 = (D.fskde_distance(F, G, m) for m in ("exact", "fk", "f1"))
    assert np.all(exact <= fk + 1e-12) and np.all(fk <= f1 + 1e-12)
    assert np.all(exact <= D.fskde_distance(F, G) + 1e-12)
    assert np.all(exact > 0)


def test_hog_descriptor_uses_skimage_with_the_documented_settings(patches):
    out = D.hog_descriptor(patches, 6)
    assert out.shape == (6, 7 * 7 * 2 * 2 * 6)
    expected = hog(patches[3], orientations=6, pixels_per_cell=(8, 8), cells_per_block=(2, 2))
    np.testing.assert_allclose(out[3], expected)
    masked = D.hog_descriptor(patches[:1], 6, diameter=60)[0]
    cropped = np.where(D.disk_mask((64, 64)), patches[0], 0.0)
    np.testing.assert_allclose(masked, hog(cropped, 6, cells_per_block=(2, 2)))


def test_cells_against_per_cell_sums(rng):
    image = rng.random((40, 29))  # 5 x 3 full cells, partial ones dropped
    F = D.fskde_cells(image, 10)
    H = D.histogram_cells(image, 8)
    assert F.shape == (5, 3, 5) and H.shape == (5, 3, 8)
    g = xfskde.gradient(image)
    kernel = D.kernel_for_length(10)
    for i, j in [(0, 0), (4, 2), (2, 1)]:
        cell = g[i * 8 : i * 8 + 8, j * 8 : j * 8 + 8].ravel()
        F_ref = xfskde.fskde(np.angle(cell), np.abs(cell), order=kernel.order, eps=1e-5)
        np.testing.assert_allclose(F[i, j], F_ref, atol=1e-12)
        bins = angle_bins(cell, 8)
        H_ref = np.array([np.abs(cell)[bins == b].sum() for b in range(8)]) / 64
        np.testing.assert_allclose(H[i, j], H_ref, atol=1e-14)


def test_bad_input_is_refused(patches):
    with pytest.raises(ValueError, match="patches must have shape"):
        D.intensity_descriptor(np.zeros(64))
    with pytest.raises(TypeError, match="real numbers"):
        D.intensity_descriptor(np.zeros((64, 64), complex))
    with pytest.raises(ValueError, match="NaN"):
        D.gradient_histogram(np.full((64, 64), np.nan), 8)
    with pytest.raises(ValueError, match="n_bins must be >= 2"):
        D.gradient_histogram(patches, 1)
    with pytest.raises(ValueError, match="length must be >= 3"):
        D.fskde_descriptor(patches, 2)
    with pytest.raises(ValueError, match="diameter must be in"):
        D.intensity_descriptor(patches, diameter=70)
    with pytest.raises(ValueError, match="canonical must be"):
        D.fskde_descriptor(patches, 8, canonical="f2")
    with pytest.raises(ValueError, match="method must be one of"):
        D.fskde_distance(np.ones(3), np.ones(3), "cosine")
    with pytest.raises(ValueError, match="no full 8x8 cell"):
        D.histogram_cells(np.zeros((7, 30)), 8)


def test_rot90_moves_histograms_by_exactly_a_quarter_of_their_bins():
    """docs/descriptors.md said a histogram rolls by a quarter of its bins under rot90, but a
    gradient exactly on a bin edge (|Ix| = |Iy|: a diagonal ramp, and 32 of 80 keypoint
    patches of a photo) landed on either side of it, atan2 being inexact on the turned
    components: 0.0073 of a bin moved. The bin is measured within the gradient's quarter of
    the circle now, told by its components' signs: every quarter turn moves it n/4 bins."""
    from skimage import data

    photo = data.astronaut()[:512, :512].mean(-1)  # the tester's grey: |Ix| = |Iy| is common
    patches = photo.reshape(8, 64, 8, 64).swapaxes(1, 2).reshape(64, 64, 64)
    for n_bins in (8, 16):
        h = D.gradient_histogram(patches, n_bins)
        for k in (1, 2, 3):  # before: up to 0.016 moved
            turned = D.gradient_histogram(np.rot90(patches, k, axes=(1, 2)), n_bins)
            np.testing.assert_allclose(turned, np.roll(h, -k * n_bins // 4, -1), atol=1e-13)
    g = np.array([1 + 1j, -1 + 1j, -1 - 1j, 1 - 1j, complex(-1, -0.0), 1j, complex(-0.0, -1)])
    np.testing.assert_array_equal(angle_bins(g, 8), [4, 6, 0, 2, 7, 5, 1])  # (a, b] as before


def test_pictures_are_described_by_their_values_and_colour_is_refused():
    """fskde_descriptor and gradient_histogram took a palette picture (a GIF) by its
    colour-table indices, where fskde_cells decoded it; an RGB patch was refused as "diameter
    must be in (0, 3] for 64x3 patches". Pictures are read through the library's one picture
    reader, and colour is refused by name with how to take its grey."""
    from PIL import Image
    from skimage import data

    patch = data.astronaut()[100:164, 100:164]
    grey = Image.fromarray(patch).convert("L")
    np.testing.assert_array_equal(D.fskde_descriptor(grey, 10),
                                  D.fskde_descriptor(np.asarray(grey), 10))  # fmt: skip
    np.testing.assert_array_equal(D.gradient_histogram([grey, grey], 8),
                                  D.gradient_histogram(np.stack([grey, grey]), 8))  # fmt: skip
    palette = Image.fromarray(patch).quantize(16)
    describers = (lambda p: D.fskde_descriptor(p, 10), lambda p: D.gradient_histogram(p, 8),
                  lambda p: D.fskde_cells(p, 10), lambda p: D.histogram_cells(p, 8))  # fmt: skip
    for describe in describers:
        for colour in (palette, patch):
            with pytest.raises(xfskde.exceptions.DimensionError, match=r"must be grey, shape .*"
                               r"got shape \(64, 64, 3\), colour .*convert\('L'\)"):  # fmt: skip
                describe(colour)
