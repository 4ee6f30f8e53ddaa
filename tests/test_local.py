"""Local FS-KDE fields against a per-pixel brute-force KDE, the paper's cells and rot90."""

import numpy as np
import pytest
from _brute_force import gradient_reference, local_fskde_reference
from skimage import data

from xfskde import fskde, local_fskde, overlap_depth, rotate
from xfskde.local import sample_count, sample_offset

WINDOWS = [("box", 5), ("box", 4), ("box", 1), ("gaussian", 1.3), ("disk", 2.5), ("disk", 1)]


@pytest.mark.parametrize(("window", "size"), WINDOWS)
@pytest.mark.parametrize("stride", [1, 2, 3, 8])
def test_equals_brute_force_kde(rng, window, size, stride):
    image = rng.random((17, 13))
    F = local_fskde(image, order=3, window=window, size=size, stride=stride)
    expected = local_fskde_reference(image, 3, window, size, stride)
    assert F.shape == expected.shape and F.dtype == np.complex128
    np.testing.assert_allclose(F, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("boundary", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_boundary_modes_equal_brute_force(rng, boundary):
    image = rng.random((12, 19))
    for window, size in [("box", 6), ("gaussian", 1.0), ("disk", 2)]:
        F = local_fskde(image, order=2, window=window, size=size, boundary=boundary)
        expected = local_fskde_reference(image, 2, window, size, 1, boundary)
        np.testing.assert_allclose(F, expected, rtol=0, atol=1e-12)


def test_windows_larger_than_the_image(rng):
    image = rng.random((5, 4))
    F = local_fskde(image, order=2, window="gaussian", size=3.0)
    np.testing.assert_allclose(F, local_fskde_reference(image, 2, "gaussian", 3.0), atol=1e-12)


def test_sampling_grid():
    assert [sample_offset(s) for s in (1, 2, 3, 8)] == [0, 0, 1, 3]
    assert sample_count(2048, 8) == 256 and sample_count(13, 8) == 2 and sample_count(3, 8) == 0
    assert sample_count(10, 1) == 10 and sample_count(10, 3) == 3
    F = local_fskde(np.zeros((13, 17)), order=2, window="box", size=8, stride=8)
    assert F.shape == (2, 2, 3)


def test_box_cells_are_the_fskde_of_each_cell(rng):
    image = rng.random((32, 24))
    F = local_fskde(image, order=8, window="box", size=8, stride=8)
    gx, gy = gradient_reference(image)
    angles, weights = np.arctan2(gy, gx), np.hypot(gx, gy)
    for i in range(4):
        for j in range(3):
            cell = np.s_[8 * i : 8 * i + 8, 8 * j : 8 * j + 8]
            expected = fskde(angles[cell].ravel(), weights[cell].ravel(), order=8)
            np.testing.assert_allclose(F[i, j], expected, atol=1e-13)


@pytest.mark.parametrize(("window", "size"), [("box", 7), ("gaussian", 2.0), ("disk", 4)])
def test_exact_equivariance_under_rot90(window, size):
    image = data.camera()[100:196, 200:296].astype(np.float64)
    F = local_fskde(image, order=6, window=window, size=size)
    for turns in (1, 2, 3):
        rotated = local_fskde(np.rot90(image, turns), order=6, window=window, size=size)
        # np.rot90 turns the picture counter-clockwise: every gradient angle loses pi/2 per turn
        expected = rotate(np.rot90(F, turns, axes=(0, 1)), -turns * np.pi / 2)
        np.testing.assert_allclose(rotated, expected, rtol=0, atol=1e-12 * np.abs(F).max())


def test_float32_gives_complex64_close_to_float64(rng):
    image = rng.random((40, 33))
    for window, size, stride in [
        ("box", 9, 1),
        ("box", 8, 8),
        ("gaussian", 2.0, 1),
        ("disk", 3, 2),
    ]:
        F32 = local_fskde(
            image.astype(np.float32), order=8, window=window, size=size, stride=stride
        )
        F64 = local_fskde(image, order=8, window=window, size=size, stride=stride)
        assert F32.dtype == np.complex64 and F64.dtype == np.complex128
        np.testing.assert_allclose(F32, F64, rtol=0, atol=2e-6 * np.abs(F64).max())


@pytest.mark.parametrize(("window", "size"), WINDOWS)
def test_flat_image_gives_exact_zeros(window, size):
    for value in (0, 3.5):
        F = local_fskde(np.full((15, 11), value), order=5, window=window, size=size, stride=2)
        assert np.all(F == 0)


def test_integer_images_match_their_float_conversion():
    image = np.zeros((16, 16), dtype=np.uint8)
    image[:, 8:] = 255
    image[5, 3] = 255
    F = local_fskde(image, order=4, window="box", size=5)
    assert F.dtype == np.complex64
    G = local_fskde(image.astype(np.float32), order=4, window="box", size=5)
    np.testing.assert_array_equal(F, G)
    # the 0 -> 255 edge: two columns of |g| = 127.5 in a 5x5 box, times H_0 (not a wrapped 0.5)
    np.testing.assert_allclose(F[8:12, 7:9, 0].real, 2 * 5 * 127.5 / 25 / (2 * np.pi), rtol=1e-6)


def test_colour_images(rng):
    image = rng.random((14, 15, 3))
    F = local_fskde(image, order=3, window="box", size=3, channel_axis=-1)
    G = local_fskde(np.moveaxis(image, -1, 0), order=3, window="box", size=3, channel_axis=0)
    np.testing.assert_array_equal(F, G)
    grey = local_fskde(image[..., 1], order=3, window="box", size=3)
    assert not np.allclose(F, grey)


def test_truncation_keeps_the_first_coefficients(rng):
    image = rng.random((20, 20))
    full = local_fskde(image, order=64, window="box", size=5, approximation="exact")
    cut = local_fskde(image, order=64, window="box", size=5, eps=1e-5, approximation="exact")
    assert cut.shape[-1] == 28
    np.testing.assert_allclose(cut, full[..., :28], atol=1e-14)


def test_nan_policy(rng):
    image = rng.random((12, 12))
    image[6, 6] = np.nan
    with pytest.raises(ValueError, match="nan_policy"):
        local_fskde(image, order=3, window="box", size=3)
    F = local_fskde(image, order=3, window="box", size=3, nan_policy="omit")
    assert np.all(np.isfinite(F))
    clean = image.copy()
    clean[6, 6] = 0.0
    G = local_fskde(clean, order=3, window="box", size=3)
    np.testing.assert_allclose(F[:3, :3], G[:3, :3])  # far from the hole: unchanged


def test_overlap_depth():
    assert overlap_depth("box", 15) == 8
    assert overlap_depth("box", 8) == 5
    assert overlap_depth("gaussian", 4) == 17
    assert overlap_depth("disk", 3.5) == 4


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"order": 0}, ValueError, "order"),
        ({"order": 3, "eps": 1.5}, ValueError, "eps"),
        ({"order": 3, "window": "triangle"}, ValueError, "window"),
        ({"order": 3, "size": 0}, ValueError, "size"),
        ({"order": 3, "size": -2}, ValueError, "size"),
        ({"order": 3, "window": "box", "size": 2.5}, ValueError, "size"),
        ({"order": 3, "stride": 0}, ValueError, "stride"),
        ({"order": 3, "boundary": "periodic"}, ValueError, "boundary"),
        ({"order": 3, "nan_policy": "propagate"}, ValueError, "nan_policy"),
    ],
)
def test_bad_parameters_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        local_fskde(np.zeros((8, 8)), **kwargs)


def test_bad_dims():
    with pytest.raises(ValueError, match="channel_axis"):
        local_fskde(np.zeros((8, 8, 3)), order=2)
