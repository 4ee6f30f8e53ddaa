"""Complex gradients: stencil, boundaries, dtypes, colour and NaN policy."""

import numpy as np
import pytest
from _brute_force import gradient_reference
from scipy import ndimage

from xfskde import gradient

MODES = ["reflect", "mirror", "nearest", "wrap", "constant"]


@pytest.mark.parametrize("boundary", MODES)
def test_gradient_equals_central_differences_of_the_padded_image(rng, boundary):
    image = rng.random((11, 14))
    g = gradient(image, boundary=boundary, cval=0.25)
    assert g.shape == image.shape and g.dtype == np.complex128
    gx, gy = gradient_reference(image, boundary, cval=0.25)
    np.testing.assert_allclose(g, gx + 1j * gy, rtol=0, atol=1e-15)
    # away from the edges every mode is numpy's central difference
    dy, dx = np.gradient(image)
    np.testing.assert_allclose(g.real[:, 1:-1], dx[:, 1:-1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(g.imag[1:-1], dy[1:-1], rtol=0, atol=1e-15)


@pytest.mark.parametrize("boundary", MODES)
@pytest.mark.parametrize("shape", [(1, 1), (1, 6), (2, 2), (3, 1), (9, 4)])
def test_gradient_equals_scipy_correlation_with_the_same_mode(rng, boundary, shape):
    image = rng.random(shape)
    stencil = [-0.5, 0.0, 0.5]
    gx = ndimage.correlate1d(image, stencil, axis=1, mode=boundary, cval=-1.5)
    gy = ndimage.correlate1d(image, stencil, axis=0, mode=boundary, cval=-1.5)
    g = gradient(image, boundary=boundary, cval=-1.5)
    np.testing.assert_allclose(g, gx + 1j * gy, rtol=0, atol=1e-15)


def test_constant_mode_uses_cval():
    image = np.full((3, 4), 2.0)
    g = gradient(image, boundary="constant", cval=5.0)
    assert g[0, 1] == -1.5j  # (2 - 5) / 2 along y
    assert g[1, 0] == -1.5  # (2 - 5) / 2 along x
    assert g[1, 1] == 0
    assert np.all(gradient(image, boundary="constant", cval=2.0) == 0)


def test_angle_convention_x_along_columns_y_along_rows():
    y, x = np.mgrid[0:7, 0:9].astype(np.float64)
    assert np.allclose(gradient(x)[1:-1, 1:-1], 1.0)  # brighter to the right: angle 0
    assert np.allclose(gradient(y)[1:-1, 1:-1], 1.0j)  # brighter downwards: angle +π/2
    g = gradient(3 * x - 2 * y)[1:-1, 1:-1]
    np.testing.assert_allclose(np.angle(g), np.arctan2(-2, 3))
    np.testing.assert_allclose(np.abs(g), np.hypot(3, 2))


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        (np.float32, np.complex64),
        (np.float64, np.complex128),
        (np.uint8, np.complex64),
        (np.uint16, np.complex64),
        (np.int16, np.complex64),
        (np.int64, np.complex128),
        (np.float16, np.complex64),
        (np.bool_, np.complex64),
        (">u2", np.complex64),  # big-endian, as FITS and raw files store them
        (">f8", np.complex128),
    ],
)
def test_dtypes(dtype, expected):
    image = (np.arange(30).reshape(5, 6) % 7).astype(dtype)
    g = gradient(image)
    assert g.dtype == expected
    np.testing.assert_allclose(g, gradient(image.astype(np.float64)), rtol=1e-6, atol=0)


def test_big_endian_images_give_the_native_results(rng):
    """The compiled core takes the machine's byte order only: other orders are converted (a
    '>f4' array raised a numba TypingError), in memory and block by block alike."""
    import dask.array as da

    import xfskde

    native = (rng.random((64, 64)) * 1000).astype(np.uint16)
    swapped = native.astype(">u2")
    expected = xfskde.local_fskde(native, order=4, size=3, stride=2)
    np.testing.assert_array_equal(xfskde.local_fskde(swapped, order=4, size=3, stride=2), expected)
    lazy = xfskde.local_fskde(da.from_array(swapped, chunks=32), order=4, size=3, stride=2)
    np.testing.assert_array_equal(lazy.compute(), expected)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_unsigned_images_do_not_wrap_around(rng, dtype):
    top = np.iinfo(dtype).max
    image = np.array([[0, top, 0], [top, 0, top], [0, top, 0]], dtype=dtype)
    g = gradient(image)
    assert g[1, 1] == 0  # symmetric neighbourhood
    assert g[0, 1].imag == pytest.approx(-top / 2)  # (0 - top) / 2, not a wrapped 0.5
    assert g[1, 0].real == pytest.approx(-top / 2)
    random_image = rng.integers(0, top, (13, 10), endpoint=True).astype(dtype)
    gx, gy = gradient_reference(random_image)  # float64 differences
    np.testing.assert_allclose(gradient(random_image), gx + 1j * gy, rtol=1e-6, atol=0)


def test_float32_keeps_float32_accuracy(rng):
    image = rng.random((20, 21)).astype(np.float32)
    gx, gy = gradient_reference(image)  # exact differences of the float32 values
    np.testing.assert_allclose(gradient(image), gx + 1j * gy, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("channel_axis", [-1, 0, 2])
def test_colour_takes_the_channel_with_the_largest_gradient(rng, channel_axis):
    channels = rng.random((3, 16, 17)) * np.array([1.0, 1.5, 2.0])[:, None, None]
    refs = np.stack([complex(1, 0) * gx + 1j * gy for gx, gy in map(gradient_reference, channels)])
    pick = np.argmax(np.abs(refs), axis=0)
    assert len(np.unique(pick)) == 3  # every channel wins somewhere
    expected = np.take_along_axis(refs, pick[None], axis=0)[0]
    image = channels if channel_axis == 0 else np.moveaxis(channels, 0, -1)
    g = gradient(image, channel_axis=channel_axis)
    assert g.shape == (16, 17)
    np.testing.assert_allclose(g, expected, rtol=0, atol=1e-15)


def test_colour_edges_pick_different_channels():
    r = np.zeros((6, 6))
    b = np.zeros((6, 6))
    r[:, 3:] = 1.0  # vertical edge, strong
    b[4:, :] = 0.5  # horizontal edge, weaker
    image = np.stack([r, np.zeros((6, 6)), b], axis=-1)
    g = gradient(image, channel_axis=-1)
    assert g[1, 3] == 0.5 and g[1, 2] == 0.5  # red edge, away from the blue one
    assert g[4, 0] == 0.25j and g[3, 5] == 0.25j  # blue edge, away from the red one
    assert g[4, 3] == 0.5  # both: red is larger
    assert g[0, 0] == 0


def test_nan_policy(rng):
    image = rng.random((7, 8))
    image[3, 4] = np.nan
    with pytest.raises(ValueError, match="nan_policy"):
        gradient(image)
    with pytest.raises(ValueError, match="nan_policy"):
        gradient(np.where(np.isnan(image), np.inf, image))
    g = gradient(image, nan_policy="omit")
    assert np.all(np.isfinite(g))
    touches = np.zeros(image.shape, bool)
    touches[[2, 4, 3, 3], [4, 4, 3, 5]] = True  # the pixels whose stencil reads (3, 4)
    assert np.all(g[touches] == 0)
    gx, gy = gradient_reference(image)
    np.testing.assert_allclose(g[~touches], (gx + 1j * gy)[~touches], rtol=0, atol=1e-15)
    assert g[3, 4] != 0  # the NaN pixel's own stencil skips it
    with pytest.raises(ValueError, match="nan_policy"):
        gradient(image, nan_policy="propagate")


def test_nan_policy_does_not_apply_to_integers():
    image = np.arange(20, dtype=np.uint8).reshape(4, 5)
    np.testing.assert_array_equal(gradient(image, nan_policy="raise"), gradient(image))


@pytest.mark.parametrize(
    ("shape", "channel_axis"),
    [((4, 4, 3), None), ((4, 4), -1), ((4,), None), ((2, 4, 4, 3), -1), ((2, 4, 4, 3), None)],
)
def test_bad_dims_name_channel_axis(shape, channel_axis):
    with pytest.raises(ValueError, match="channel_axis"):
        gradient(np.zeros(shape), channel_axis=channel_axis)


def test_bad_boundary_and_dtype():
    with pytest.raises(ValueError, match="boundary"):
        gradient(np.zeros((4, 4)), boundary="periodic")
    with pytest.raises(TypeError, match="dtype"):
        gradient(np.zeros((4, 4), complex))
    with pytest.raises(TypeError, match="dtype"):
        gradient(np.array([["a", "b"], ["c", "d"]]))


def test_omit_skips_a_nan_channel_but_keeps_the_others():
    image = np.zeros((3, 3, 2))
    image[1, 2, 0] = np.nan
    image[1, 2, 1] = 1.0
    g = gradient(image, channel_axis=-1, nan_policy="omit")
    assert g[1, 1] == 0.5  # channel 1's (1 - 0) / 2; channel 0 touches NaN and is skipped
    both = image.copy()
    both[1, 2, 1] = np.nan
    assert gradient(both, channel_axis=-1, nan_policy="omit")[1, 1] == 0
