"""Complex gradients: stencil, boundaries, dtypes, colour and NaN policy."""

import numpy as np
import pytest
from _brute_force import gradient_reference

from xfskde import gradient

MODES = ["reflect", "mirror", "nearest", "wrap", "constant"]


@pytest.mark.parametrize("boundary", MODES)
def test_gradient_equals_central_differences_of_the_padded_image(rng, boundary):
    image = rng.random((11, 14))
    g = gradient(image, boundary=boundary, cval=0.25)
    gx, gy = gradient_reference(image, boundary, cval=0.25)
    np.testing.assert_allclose(g, gx + 1j * gy, atol=1e-15)
    interior = np.gradient(image)
    np.testing.assert_allclose(g.real[:, 1:-1], interior[1][:, 1:-1], atol=1e-15)
    np.testing.assert_allclose(g.imag[1:-1], interior[0][1:-1], atol=1e-15)


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        (np.float32, np.complex64),
        (np.float64, np.complex128),
        (np.uint8, np.complex64),
        (np.uint16, np.complex64),
        (np.int64, np.complex128),
        (np.float16, np.complex64),
    ],
)
def test_dtypes(dtype, expected):
    image = (np.arange(30).reshape(5, 6) % 7).astype(dtype)
    g = gradient(image)
    assert g.dtype == expected
    np.testing.assert_allclose(g, gradient(image.astype(np.float64)), rtol=1e-6)


def test_uint8_does_not_wrap_around():
    image = np.array([[0, 255, 0], [255, 0, 255], [0, 255, 0]], dtype=np.uint8)
    g = gradient(image)
    assert g[1, 1] == 0  # symmetric neighbourhood
    assert g[0, 1].imag == pytest.approx(-127.5)  # (0 - 255) / 2, not a wrapped 0.5


def test_colour_takes_the_channel_with_the_largest_gradient():
    r = np.zeros((6, 6))
    b = np.zeros((6, 6))
    r[:, 3:] = 1.0  # vertical edge, strong
    b[4:, :] = 0.5  # horizontal edge, weaker
    image = np.stack([r, np.zeros((6, 6)), b], axis=-1)
    g = gradient(image, channel_axis=-1)
    gr, gb = gradient(r), gradient(b)
    pick_r = np.abs(gr) >= np.abs(gb)
    np.testing.assert_allclose(g, np.where(pick_r, gr, gb))
    assert pick_r.any() and (~pick_r).any()
    np.testing.assert_allclose(gradient(np.moveaxis(image, -1, 0), channel_axis=0), g)


def test_nan_policy():
    image = np.ones((5, 5))
    image[2, 2] = np.nan
    with pytest.raises(ValueError, match="nan_policy"):
        gradient(image)
    g = gradient(image, nan_policy="omit")
    assert np.all(np.isfinite(g))
    assert g[2, 1] == 0 and g[1, 2] == 0 and g[2, 2] == 0


def test_bad_dims_name_channel_axis():
    with pytest.raises(ValueError, match="channel_axis"):
        gradient(np.zeros((4, 4, 3)))
    with pytest.raises(ValueError, match="channel_axis"):
        gradient(np.zeros((4, 4)), channel_axis=-1)
    with pytest.raises(ValueError, match="boundary"):
        gradient(np.zeros((4, 4)), boundary="periodic")
    with pytest.raises(TypeError, match="dtype"):
        gradient(np.zeros((4, 4), complex))
