"""Where the plots put a field over its image: one frame for both, checked on the artists' data.

A field and its image are drawn in the DataArrays' coordinates when both have them (a north-up
``y``, descending as a GeoTIFF's, drawn north-up as ``imshow(extent=...)`` draws it), in pixels
otherwise; a NumPy field's stride is read from the shapes (the library's sample count) or
refused when they do not say it. The coordinate pictures are the pixel pictures mapped through
the coordinates' affine map, spoke for spoke.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import xfskde
from xfskde import plot
from xfskde.exceptions import ParameterError

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

N = 32
#: 10 m pixels, centres at 5 .. 315; y north-up (descending down the rows) or ascending
X = 5.0 + 10 * np.arange(N)
Y_DOWN = 5.0 + 10 * np.arange(N)[::-1]


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _ramp_x() -> np.ndarray:
    """Dark left, bright right: every gradient points to +x (θ = 0)."""
    c = np.mgrid[0:N, 0:N][1].astype(np.float64)
    return 1 / (1 + np.exp(-(c - 16)))


def _segments(ax) -> np.ndarray:
    return np.array(ax.collections[0].get_segments())


def _to_metres(segments: np.ndarray, y_down: bool) -> np.ndarray:
    """Pixel-frame segments through the coordinates' affine map (pixel p -> 5 + 10 p, or
    315 - 10 p for a north-up y)."""
    out = segments.copy()
    out[..., 0] = 5.0 + 10 * segments[..., 0]
    out[..., 1] = (315.0 - 10 * segments[..., 1]) if y_down else 5.0 + 10 * segments[..., 1]
    return out


@pytest.mark.parametrize("y_down", [True, False])
def test_glyphs_in_coordinates_are_the_pixel_glyphs_mapped(y_down):
    image = _ramp_x()
    ys = Y_DOWN if y_down else X
    labelled = xr.DataArray(image, dims=("y", "x"), coords={"y": ys, "x": X})
    field = labelled.fskde.coefficients(order=8, window="box", size=8, stride=8)
    F = xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)
    in_pixels = _segments(plot.glyphs(F, stride=8, n_angles=8))
    ax = plot.glyphs(field, n_angles=8)
    in_metres = _segments(ax)
    np.testing.assert_allclose(in_metres, _to_metres(in_pixels, y_down), atol=1e-9)
    # the gradient points to +x: the longest spoke of each glyph runs east, 0.45 × 80 m long
    vectors = in_metres[:, 1] - in_metres[:, 0]
    longest = vectors[np.argmax(np.hypot(*vectors.T))]
    np.testing.assert_allclose(longest, [36.0, 0.0], atol=1e-9)
    # row 0 (north, y = 315 m) on top of the screen in both
    bottom, top = ax.get_ylim()
    assert (bottom < top) == y_down


def test_a_spoke_down_the_rows_points_south_on_a_north_up_field():
    r = np.mgrid[0:N, 0:N][0].astype(np.float64)
    image = 1 / (1 + np.exp(-(r - 16)))  # dark top, bright bottom: gradient down the rows
    labelled = xr.DataArray(image, dims=("y", "x"), coords={"y": Y_DOWN, "x": X})
    field = labelled.fskde.coefficients(order=8, window="box", size=8, stride=8)
    vectors = np.diff(_segments(plot.glyphs(field, n_angles=4)), axis=1)[:, 0]
    longest = vectors[np.argmax(np.hypot(*vectors.T))]
    np.testing.assert_allclose(longest, [0.0, -36.0], atol=1e-9)  # south: y decreases


@pytest.mark.parametrize("y_down", [True, False])
def test_glyphs_and_their_image_share_the_coordinates(y_down):
    image = np.zeros((N, N))
    image[:8, :8] = 1.0  # bright square at row 0, column 0
    ys = Y_DOWN if y_down else X
    labelled = xr.DataArray(image, dims=("y", "x"), coords={"y": ys, "x": X})
    extent = [0.0, 320.0, 0.0, 320.0] if y_down else [0.0, 320.0, 320.0, 0.0]
    pictures = []
    for stride in (1, 8):
        field = labelled.fskde.coefficients(order=8, window="box", size=8, stride=stride)
        ax = plot.glyphs(field, image=labelled, n_angles=8, step=8 // stride)
        np.testing.assert_allclose(ax.images[0].get_extent(), extent)
        np.testing.assert_allclose([*ax.get_xlim(), *ax.get_ylim()], extent)
        pictures.append(_segments(ax)[:, 0])
    # the stride-8 glyphs sit at the image coordinates of their cells' centres (pixel 3.5, ...)
    starts = pictures[1].reshape(4, 4, 8, 2)[:, :, 0]
    np.testing.assert_allclose(starts[0, :, 0], 5.0 + 10 * (3.5 + 8 * np.arange(4)))
    first_row = 315.0 - 10 * 3.5 if y_down else 5.0 + 10 * 3.5
    np.testing.assert_allclose(starts[0, 0, 1], first_row)
    # unstrided, every 8th sample: the same frame, glyphs at those samples' own pixels
    np.testing.assert_allclose(pictures[0].reshape(4, 4, 8, 2)[0, 1, 0], [85.0, ys[0]])


def test_orientation_map_draws_image_and_map_in_one_frame():
    image = _ramp_x()
    labelled = xr.DataArray(image, dims=("y", "x"), coords={"y": Y_DOWN, "x": X})
    field = labelled.fskde.coefficients(order=8, window="box", size=8, stride=8)
    for stride in (1, 8):  # strided or not, north-up, map and image over one extent
        f = labelled.fskde.coefficients(order=8, window="box", size=8, stride=stride)
        axes = plot.orientation_map(labelled, f, legend=False)
        np.testing.assert_allclose(axes.image.images[0].get_extent(), [0, 320, 0, 320])
        np.testing.assert_allclose(axes.map.images[-1].get_extent(), [0, 320, 0, 320])
    pixels = [-0.5, 31.5, 31.5, -0.5]
    F = xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)
    mixed = [
        (labelled, F, {"kernel": xfskde.Cos2KKernel(8), "stride": 8}),  # NumPy: both in pixels
        (xr.DataArray(image, dims=("y", "x")), field, {}),  # an image without coordinates
        (image, field, {}),  # a NumPy image
    ]
    for shown, f, options in mixed:
        axes = plot.orientation_map(shown, f, legend=False, **options)
        np.testing.assert_allclose(axes.image.images[0].get_extent(), pixels)
        np.testing.assert_allclose(axes.map.images[-1].get_extent(), pixels)
        ax = plot.glyphs(f, image=shown, n_angles=4, stride=options.get("stride"))
        np.testing.assert_allclose(ax.images[0].get_extent(), pixels)
        np.testing.assert_allclose(np.unique(_segments(ax)[:, 0, 0]), 3.5 + 8 * np.arange(4))


def test_a_field_in_other_coordinates_than_its_image_is_refused():
    labelled = xr.DataArray(_ramp_x(), dims=("y", "x"), coords={"y": Y_DOWN + 5000, "x": X})
    # the field of the same pixels without coordinates: pixel indices 3 .. 27, not metres
    field = xr.DataArray(_ramp_x(), dims=("y", "x")).fskde.coefficients(
        order=8, window="box", size=8, stride=8
    )
    with pytest.raises(ParameterError, match=r"y coordinates \(3.5 .. 27.5\) lie outside"):
        plot.glyphs(field, image=labelled)
    with pytest.raises(ParameterError, match="lie outside"):
        plot.orientation_map(labelled, field)


def test_a_strided_numpy_field_is_placed_by_its_shape():
    y, x = np.mgrid[0:64, 0:64].astype(np.float64)
    image = np.cos(2 * np.pi * (x - y) / 8)
    F = xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)
    kernel = xfskde.Cos2KKernel(8)
    axes = plot.orientation_map(image, F, kernel=kernel)  # no stride=: the shapes say 8
    np.testing.assert_allclose(axes.map.images[-1].get_extent(), [-0.5, 63.5, 63.5, -0.5])
    given = plot.orientation_map(image, F, kernel=kernel, stride=8).map.images[-1]
    np.testing.assert_allclose(given.get_extent(), [-0.5, 63.5, 63.5, -0.5])
    ax = plot.glyphs(F, image=image, n_angles=4)
    np.testing.assert_allclose(np.unique(_segments(ax)[:, 0, 0]), 3.5 + 8 * np.arange(8))
    np.testing.assert_allclose(np.unique(_segments(ax)[:, 0, 1]), 3.5 + 8 * np.arange(8))
    # a stride the shapes do not agree with is refused, naming stride= and the right one
    for draw in (
        lambda: plot.orientation_map(image, F, kernel=kernel, stride=3),
        lambda: plot.glyphs(F, image=image, stride=3),
    ):
        with pytest.raises(ParameterError, match=r"8×8 samples but stride=3 .*stride=8"):
            draw()
    # 4×4 samples of 32×32 pixels are strides 8 and 9 alike: not guessed
    small = xfskde.local_fskde(image[:32, :32], order=8, window="box", size=8, stride=8)
    with pytest.raises(ParameterError, match=r"strides 8 and 9 both give .*pass stride="):
        plot.orientation_map(image[:32, :32], small, kernel=kernel)
    # shapes several strides give, or none, are refused too
    with pytest.raises(ParameterError, match=r"strides 17 to 20 all give .*pass stride="):
        plot.glyphs(np.ones((2, 3, 3), complex), image=np.zeros((40, 50)))
    with pytest.raises(ParameterError, match=r"no stride gives .*stride="):
        plot.glyphs(np.ones((5, 3, 3), complex), image=np.zeros((40, 50)))
    # a labelled field of a NumPy image: its stride attr checked against the shapes
    crop = xr.DataArray(image, dims=("y", "x"), coords={"y": y[:, 0], "x": x[0]}).fskde
    field = crop.coefficients(order=8, window="box", size=8, stride=8)
    with pytest.raises(ParameterError, match=r"6×8 samples but stride=8 gives 8×8"):
        plot.glyphs(field.isel(y=slice(2, None)), image=image)


def test_orientation_map_of_an_array_asks_for_its_kernel_parameter():
    image = _ramp_x()
    F = xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)
    with pytest.raises(ParameterError, match=r"orientation_map\(\.\.\., kernel=xfskde\.Cos2K"):
        plot.orientation_map(image, F)
    bare = xr.DataArray(F, dims=("y", "x", "k"))  # no attrs: no recorded kernel
    with pytest.raises(ParameterError, match=r"orientation_map\(\.\.\., kernel=xfskde\.Cos2K"):
        plot.orientation_map(image, bare)
