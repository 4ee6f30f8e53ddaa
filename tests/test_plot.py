"""xfskde.plot draws what the coefficients say: curves, bars and spokes checked by value."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import xfskde
from xfskde import plot

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_polar_curve_and_histogram(rng):
    angles, weights = rng.uniform(-np.pi, np.pi, 40), rng.uniform(0.5, 1.5, 40)
    F = xfskde.fskde(angles, weights, order=9, eps=1e-5)
    ax = plot.polar(F, angles=angles, weights=weights, bins=20, n_points=181)
    assert ax.name == "polar"
    theta, f = ax.lines[0].get_data()
    np.testing.assert_allclose(f, xfskde.evaluate(F, theta))
    heights = np.array([bar.get_height() for bar in ax.patches])
    counts, _ = np.histogram(angles, 20, range=(-np.pi, np.pi), weights=weights)
    np.testing.assert_allclose(heights, counts / (40 * 2 * np.pi / 20))
    # both integrate to the mean weight (eq. 1's 1/N): the histogram is scaled like the FS-KDE
    np.testing.assert_allclose(heights.sum() * 2 * np.pi / 20, weights.mean())
    np.testing.assert_allclose(2 * np.pi * F[0].real, weights.mean())


def test_polar_refuses_a_field():
    with pytest.raises(ValueError, match="glyphs"):
        plot.polar(np.zeros((2, 3), complex))


def test_glyph_spokes_follow_the_density():
    # a ramp along x: every gradient has angle 0, so the longest spoke of each glyph points +x
    image = np.tile(np.arange(32, dtype=np.float64), (24, 1))
    F = xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)
    ax = plot.glyphs(F, stride=8, n_angles=8)
    segments = np.array(ax.collections[0].get_segments())
    assert segments.shape == (3 * 4 * 8, 2, 2)
    starts = segments[:, 0].reshape(3, 4, 8, 2)
    # at the centres of the 8×8 cells, i*8 + 3.5, as a labelled field's coordinates put them
    centres = [3.5, 11.5, 19.5, 27.5]
    np.testing.assert_array_equal(starts[:, :, 0, 0], np.broadcast_to(centres, (3, 4)))
    np.testing.assert_array_equal(starts[:, :, 0, 1], np.broadcast_to([[3.5], [11.5], [19.5]],
                                                                      (3, 4)))  # fmt: skip
    vectors = (segments[:, 1] - segments[:, 0]).reshape(3, 4, 8, 2)
    lengths = np.hypot(vectors[..., 0], vectors[..., 1])
    theta = np.linspace(-np.pi, np.pi, 8, endpoint=False)
    f = np.clip(xfskde.evaluate(F, theta), 0, None)
    np.testing.assert_allclose(lengths, 0.45 * 8 * f / f.max(), atol=1e-9)
    assert np.all(np.argmax(lengths, axis=-1) == 4)  # theta[4] == 0: towards +x
    np.testing.assert_allclose(vectors[0, 0, 4], [lengths[0, 0, 4], 0], atol=1e-9)
    edges = plot.glyphs(F, stride=8, n_angles=8, edges=True, step=2)
    turned = np.array(edges.collections[0].get_segments())
    assert turned.shape == (2 * 2 * 8, 2, 2)
    spoke = turned[4, 1] - turned[4, 0]  # spacing 16 with step 2: spokes twice as long
    np.testing.assert_allclose(spoke, [0, 2 * lengths[0, 0, 4]], atol=1e-9)


def test_glyphs_read_dataarray_coordinates():
    xr = pytest.importorskip("xarray")
    F = np.zeros((2, 3, 2), complex)
    F[..., 0] = 1 / (2 * np.pi)
    field = xr.DataArray(F, dims=("y", "x", "k"), coords={"y": [10.0, 30.0], "x": [5.0, 25, 45]})
    image = xr.DataArray(np.zeros((40, 50)), dims=("y", "x"),
                         coords={"y": np.arange(40.0), "x": np.arange(50.0)})  # fmt: skip
    ax = plot.glyphs(field.transpose("k", "x", "y"), n_angles=4, image=image)
    starts = np.array(ax.collections[0].get_segments())[:, 0].reshape(2, 3, 4, 2)
    np.testing.assert_array_equal(starts[1, 2, 0], [45, 30])
    # integer coordinates over an image without any are its pixel indices
    pixels = field.assign_coords(y=[10, 30], x=[5, 25, 45])
    ax = plot.glyphs(pixels, n_angles=4, image=np.zeros((40, 50)))
    starts = np.array(ax.collections[0].get_segments())[:, 0].reshape(2, 3, 4, 2)
    np.testing.assert_array_equal(starts[1, 2, 0], [45, 30])
    with pytest.raises(ValueError, match=r"dims \(y, x, k\)"):
        plot.glyphs(field.isel(k=0))


def test_kernel_curves():
    ax = plot.kernel((4, 32))
    theta, h = ax.lines[1].get_data()
    np.testing.assert_allclose(h, xfskde.Cos2KKernel(32)(theta))
    assert ax.lines[0].get_label() == "K = 4"
    ax = plot.kernel((64,), length=16)
    theta, h = ax.lines[0].get_data()
    H = xfskde.Cos2KKernel(64).coefficients[:16]
    np.testing.assert_allclose(h, H[0] + 2 * np.cos(np.outer(theta, np.arange(1, 16))) @ H[1:])
    assert ax.lines[0].get_label() == "K = 64, ℓ = 16"


def test_without_matplotlib_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install 'xfskde\[plot\]'"):
        plot.polar(np.ones(3, complex))


def test_orientation_rgb_maps_angle_to_hue_and_coherence_to_brightness():
    from skimage.color import rgb2hsv

    from xfskde.plot import orientation_rgb

    orientation = np.array([[0.0, np.pi / 2], [-np.pi / 2, np.nan]])
    coherence = np.array([[1.0, 0.5], [2.0, 0.25]])
    hsv = rgb2hsv(orientation_rgb(orientation, coherence, white=1.0))
    np.testing.assert_allclose(hsv[..., 0], [[0.0, 0.25], [0.75, 0.0]], atol=1e-12)
    np.testing.assert_allclose(hsv[..., 2], [[1.0, 0.5], [1.0, 0.25]], atol=1e-12)
    default = rgb2hsv(orientation_rgb(orientation, coherence))  # white = 99th percentile
    assert default[1, 0, 2] == 1.0 and default[0, 1, 2] < 0.5
    # a cell with no value (NaN coherence: a missing pixel) is black; the others as before
    coherence[0, 0] = np.nan
    rgb = orientation_rgb(orientation, coherence)
    assert np.isfinite(rgb).all() and (rgb[0, 0] == 0).all()
    np.testing.assert_allclose(rgb2hsv(rgb)[1, 0], [0.75, 1.0, 1.0], atol=1e-12)


def test_glyphs_skip_samples_without_a_value():
    """A field with nodata is NaN there: no glyph, and the others scaled as without them."""
    image = np.tile(np.arange(32, dtype=np.float64), (24, 1))
    F = xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)
    holes = F.copy()
    holes[0, :2] = np.nan
    whole = np.array(plot.glyphs(F, stride=8, n_angles=8).collections[0].get_segments())
    drawn = np.array(plot.glyphs(holes, stride=8, n_angles=8).collections[0].get_segments())
    assert drawn.shape == (whole.shape[0] - 2 * 8, 2, 2) and np.isfinite(drawn).all()
    np.testing.assert_allclose(drawn, whole.reshape(3, 4, 8, 2, 2)[np.isfinite(holes[..., 0])]
                               .reshape(-1, 2, 2))  # fmt: skip
