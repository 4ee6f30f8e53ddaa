"""Axial orientation maps, their colour wheel and rose diagrams, checked by value and on screen.

The wheel is a legend only if a structure running at +θ *as displayed* gets the colour the
wheel shows at +θ as displayed: the tests render the figure and compare the pixels there. The
rose is the density (eq. 1) of the region's mean coefficients, and peaks where the gradients
point.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import xfskde
from xfskde import plot
from xfskde.exceptions import DimensionError, ParameterError
from xfskde.orientation import coherence, orientation

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import rgb_to_hsv  # noqa: E402

ORDER = 8
KERNEL = xfskde.Cos2KKernel(ORDER)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _stripes(degrees: float, n: int = 96, period: float = 24.0) -> np.ndarray:
    """A cosine grating whose stripes run at ``degrees`` as displayed (x right, y down).

    Written out, not from the library: the value is constant along d = (cos, sin) in (x, y-down)
    because it depends only on the projection onto the normal (-sin, cos).
    """
    t = np.deg2rad(degrees)
    y, x = np.mgrid[0:n, 0:n].astype(np.float64)
    return np.cos(2 * np.pi * (-x * np.sin(t) + y * np.cos(t)) / period)


def _axial_gap(a, b):
    """|a - b| modulo π, in [0, π/2]."""
    return np.abs(np.mod(np.asarray(a) - b + np.pi / 2, np.pi) - np.pi / 2)


def _hue_gap(a, b):
    """Distance of two hue fractions on the hue circle, in [0, 0.5]."""
    d = np.abs(np.asarray(a) - b) % 1.0
    return np.minimum(d, 1.0 - d)


def _screen(fig) -> np.ndarray:
    """The rendered figure as RGB floats, rows from the top."""
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(np.float64) / 255


def _pixel(screen: np.ndarray, display_xy) -> np.ndarray:
    """The screen's colour at a display point (matplotlib's display y points up)."""
    x, y = display_xy
    return screen[round(screen.shape[0] - y), round(x)]


# --- colours ------------------------------------------------------------------------------------


def test_axial_rgb_hue_over_pi_and_coherence_as_brightness():
    omega = np.array([0.0, np.pi / 6, np.pi / 2, 2 * np.pi / 3, np.pi - 1e-9, np.pi, -np.pi / 3])
    strength = np.array([1.0, 0.5, 0.25, 2.0, 1.0, 1.0, 1.0])
    hsv = rgb_to_hsv(plot.axial_rgb(omega, strength))
    # hue = ω/π modulo 1 (red, yellow, cyan, blue, red, red, blue)
    np.testing.assert_allclose(_hue_gap(hsv[:, 0], [0, 1 / 6, 1 / 2, 2 / 3, 0, 0, 2 / 3]), 0,
                               atol=1e-9)  # fmt: skip
    np.testing.assert_allclose(hsv[:, 2], [1.0, 0.5, 0.25, 1.0, 1.0, 1.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(hsv[:, 1], 1.0)  # full saturation: value alone says coherence
    # one axis, one colour: ω and ω + π, and the ends of [0, π)
    turned = plot.axial_rgb(omega + np.pi, strength)
    np.testing.assert_allclose(turned, plot.axial_rgb(omega, strength), atol=1e-9)
    np.testing.assert_allclose(plot.axial_rgb([np.pi - 1e-9], [1.0]), [[1.0, 0.0, 0.0]], atol=1e-6)
    # white: the coherence at full brightness
    np.testing.assert_allclose(rgb_to_hsv(plot.axial_rgb([0.3], [0.2], white=0.4))[0, 2], 0.5)
    # NaN (no axis) is black, or transparent as opacity
    np.testing.assert_array_equal(plot.axial_rgb([np.nan], [0.9]), [[0.0, 0.0, 0.0]])
    rgba = plot.axial_rgb([np.pi / 2, np.nan], [0.3, 0.9], shade="alpha")
    np.testing.assert_allclose(rgba[:, 3], [0.3, 0.0])
    np.testing.assert_allclose(rgba[0, :3], [0.0, 1.0, 1.0], atol=1e-12)  # cyan at full value


def test_axial_rgb_samples_another_cyclic_map():
    twilight = matplotlib.colormaps["twilight"]
    omega = np.linspace(0, np.pi, 7, endpoint=False)
    got = plot.axial_rgb(omega, np.ones_like(omega), cmap="twilight")
    np.testing.assert_allclose(got, twilight(omega / np.pi)[:, :3], atol=3e-3)
    darker = plot.axial_rgb(omega, np.full_like(omega, 0.5), cmap="twilight")
    np.testing.assert_allclose(darker, 0.5 * got)


def test_axial_rgb_refuses_bad_arguments():
    with pytest.raises(DimensionError):
        plot.axial_rgb(np.zeros(3), np.zeros(4))
    with pytest.raises(ParameterError):
        plot.axial_rgb(np.zeros(3), np.zeros(3), shade="saturation")
    with pytest.raises(ParameterError):
        plot.axial_rgb(np.zeros(3), np.zeros(3), white=0)


def test_wheel_picture_is_in_the_display_convention():
    ax = plot.orientation_wheel(size=101)
    rgba = ax.images[0].get_array()
    assert rgba.shape == (101, 101, 4)
    # the pixel 40 px right and 23 px *down* from the centre lies at atan2(23, 40) as displayed
    theta = np.arctan2(23, 40)
    pixel = rgba[50 + 23, 50 + 40]
    hsv = rgb_to_hsv(pixel[:3])
    assert _hue_gap(hsv[0], theta / np.pi) < 1e-9
    np.testing.assert_allclose(hsv[2], np.hypot(23, 40) / 50)  # radius = coherence
    np.testing.assert_allclose(rgba[50 - 23, 50 - 40], pixel, atol=1e-12)  # one axis
    assert rgba[0, 0, 3] == 0 and rgba[50, 50, 3] == 1  # transparent outside the disc
    assert ax.yaxis_inverted()  # data y points down, like the image's rows


# --- the map against the wheel, on screen -----------------------------------------------------


@pytest.mark.parametrize("degrees", [30.0, 75.0, 120.0, 160.0])
def test_grating_gets_the_wheel_colour_at_its_angle_as_displayed(degrees):
    image = _stripes(degrees)
    F = xfskde.local_fskde(image, order=ORDER, window="gaussian", size=3)
    axes = plot.orientation_map(image, F, kernel=KERNEL)
    assert axes.image is not None and axes.legend is not None
    screen = _screen(axes.map.figure)
    # the grating's colour: the map's centre, on screen
    here = _pixel(screen, axes.map.transData.transform((47.5, 47.5)))
    # the wheel at +degrees as displayed: down-right of its centre is -y in display space
    centre = axes.legend.transData.transform((0.0, 0.0))
    radius = np.linalg.norm(axes.legend.transData.transform((0.95, 0.0)) - centre)
    t = np.deg2rad(degrees)
    wheel = _pixel(screen, centre + radius * np.array([np.cos(t), -np.sin(t)]))
    hsv_here, hsv_wheel = rgb_to_hsv(here), rgb_to_hsv(wheel)
    assert _hue_gap(hsv_here[0], hsv_wheel[0]) < 1.5 / 180  # one colour, within 1.5°
    assert _hue_gap(hsv_here[0], degrees / 180) < 1.5 / 180  # and it is hue = ω/π
    assert hsv_here[2] > 0.97 and abs(hsv_wheel[2] - 0.95) < 0.03  # coherence 1; rim at 0.95
    # and the wheel 90° further on shows another colour (the test can fail)
    u = t + np.pi / 2
    other = _pixel(screen, centre + radius * np.array([np.cos(u), -np.sin(u)]))
    assert _hue_gap(rgb_to_hsv(other)[0], hsv_here[0]) > 0.4


def test_both_flanks_of_a_thin_line_share_one_colour():
    # a bright vertical line: its two flanks have gradients 0 and π (opposite), axis 0
    image = np.zeros((64, 64))
    image[:, 31:33] = 1.0
    F = xfskde.local_fskde(image, order=ORDER, window="gaussian", size=1.5)
    axes = plot.orientation_map(None, F, kernel=KERNEL, interpolation="nearest")
    rgb = axes.map.images[-1].get_array()
    left, right = rgb[32, 29], rgb[32, 34]  # one flank each
    hsv_left, hsv_right = rgb_to_hsv(left), rgb_to_hsv(right)
    assert hsv_left[2] > 0.9 and hsv_right[2] > 0.9
    assert _hue_gap(hsv_left[0], 0.5) < 1e-3 and _hue_gap(hsv_right[0], 0.5) < 1e-3  # cyan: 90°
    # the gradient-direction picture gives the flanks opposite hues
    direction = plot.orientation_rgb(-np.angle(F[..., 1]), np.ones(F.shape[:2]), white=1.0)
    gap = _hue_gap(rgb_to_hsv(direction[32, 29])[0], rgb_to_hsv(direction[32, 34])[0])
    assert abs(gap - 0.5) < 1e-3


# --- inputs and placement ---------------------------------------------------------------------


def test_the_map_is_the_orientation_and_coherence_of_the_field():
    rng = np.random.default_rng(3)
    image = rng.random((40, 56))
    F = xfskde.local_fskde(image, order=ORDER, window="gaussian", size=2)
    axes = plot.orientation_map(image, F, kernel=KERNEL, white=0.5)
    drawn = axes.map.images[-1].get_array()
    expected = plot.axial_rgb(orientation(F), coherence(F, KERNEL), white=0.5)
    np.testing.assert_allclose(drawn, expected)
    value = rgb_to_hsv(np.clip(drawn, 0, 1))[..., 2]
    np.testing.assert_allclose(value, np.clip(coherence(F, KERNEL) / 0.5, 0, 1), atol=1e-6)
    # precomputed maps, NumPy or DataArray, draw the same picture
    maps = (orientation(F), coherence(F, KERNEL))
    again = plot.orientation_map(image, maps, white=0.5).map.images[-1].get_array()
    np.testing.assert_allclose(again, expected)
    assert axes.image.images[0].get_extent() == [-0.5, 55.5, 39.5, -0.5]


@pytest.mark.parametrize("stride", [1, 5, 8])
def test_strided_fields_cover_their_cells(stride):
    image = xr.DataArray(np.random.default_rng(1).random((50, 67)), dims=("y", "x"))
    field = image.fskde.coefficients(order=ORDER, window="box", size=8, stride=stride)
    axes = plot.orientation_map(image, field)
    ny, nx = field.sizes["y"], field.sizes["x"]
    # sample i stands for the pixels i*s .. i*s + s - 1: edges at -0.5 and n*s - 0.5
    left, right, bottom, top = axes.map.images[-1].get_extent()
    np.testing.assert_allclose([left, right, bottom, top],
                               [-0.5, nx * stride - 0.5, ny * stride - 0.5, -0.5])  # fmt: skip
    # a last cell overhanging the image is cut at the image's frame
    np.testing.assert_allclose(axes.map.get_xlim(), (-0.5, 66.5))
    np.testing.assert_allclose(axes.map.get_ylim(), (49.5, -0.5))
    # the NumPy field with its stride is placed alike and drawn alike
    F = xfskde.local_fskde(image.values, order=ORDER, window="box", size=8, stride=stride)
    again = plot.orientation_map(image.values, F, kernel=KERNEL, stride=stride)
    np.testing.assert_allclose(again.map.images[-1].get_extent(), [left, right, bottom, top])
    np.testing.assert_allclose(
        again.map.images[-1].get_array(), axes.map.images[-1].get_array(), atol=1e-6
    )


def test_coordinates_in_other_units_place_image_and_map_alike():
    # 10 m pixels, y north-up (decreasing down the rows), as a georeferenced raster has
    pixels = _stripes(45.0, n=60)
    metres = {"y": 1000.0 - 10 * np.arange(60), "x": 500.0 + 10 * np.arange(60)}
    image = xr.DataArray(pixels, dims=("y", "x"), coords=metres)
    field = image.fskde.coefficients(order=ORDER, window="box", size=6, stride=3)
    axes = plot.orientation_map(image, field)
    assert axes.image.images[0].get_extent() == pytest.approx([495, 1095, 405, 1005])
    assert axes.map.images[-1].get_extent() == pytest.approx([495, 1095, 405, 1005])
    # row 0 is still on top of the screen: the stripes still run at 45° as displayed
    drawn = axes.map.images[-1].get_array()
    assert _hue_gap(rgb_to_hsv(drawn[10, 10])[0], 0.25) < 0.01


def test_a_dask_field_draws_what_the_numpy_one_draws():
    pixels = np.random.default_rng(2).random((60, 70)).astype(np.float32)
    image = xr.DataArray(pixels, dims=("y", "x"))
    eager = image.fskde.coefficients(order=ORDER, window="gaussian", size=2, stride=2)
    lazy = image.chunk({"y": 60, "x": 37}).fskde.coefficients(
        order=ORDER, window="gaussian", size=2, stride=2
    )
    assert lazy.chunks is not None
    a = plot.orientation_map(None, eager).map.images[-1]
    b = plot.orientation_map(None, lazy).map.images[-1]
    np.testing.assert_allclose(b.get_array(), a.get_array(), atol=1e-6)
    assert a.get_extent() == b.get_extent()
    # a plain Dask array of coefficients, with the kernel given
    c = plot.orientation_map(None, lazy.data, kernel=KERNEL, stride=2).map.images[-1]
    np.testing.assert_allclose(c.get_array(), a.get_array(), atol=1e-6)


def test_layouts_and_shading():
    image = _stripes(30.0, n=48)
    F = xfskde.local_fskde(image, order=ORDER, window="gaussian", size=3)
    _, (left, right) = plt.subplots(1, 2)
    axes = plot.orientation_map(image, F, (left, right), kernel=KERNEL)
    assert axes.image is left and axes.map is right and axes.legend in right.child_axes
    _, one = plt.subplots()
    axes = plot.orientation_map(image, F, one, kernel=KERNEL, legend=False, shade="alpha")
    assert axes.image is None and axes.legend is None
    under, over = one.images  # the image, then the colours with coherence as opacity
    np.testing.assert_array_equal(under.get_array(), image)
    np.testing.assert_allclose(over.get_array()[..., 3], np.clip(coherence(F, KERNEL), 0, 1))
    _, spare = plt.subplots()
    axes = plot.orientation_map(None, F, kernel=KERNEL, legend=spare)
    assert axes.legend is spare and spare.images[0].get_array().shape[-1] == 4
    with pytest.raises(ParameterError):  # a NumPy field does not record its kernel
        plot.orientation_map(image, F)
    with pytest.raises(DimensionError):
        plot.orientation_map(image, F[..., :2], kernel=KERNEL)


# --- rose diagrams ------------------------------------------------------------------------------


def _two_ramps() -> xr.DataArray:
    """Left half: a ramp whose gradient points at 40°; right half: one at 110° (as displayed)."""
    y, x = np.mgrid[0:64, 0:128].astype(np.float64)
    left = x * np.cos(np.deg2rad(40)) + y * np.sin(np.deg2rad(40))
    right = x * np.cos(np.deg2rad(110)) + y * np.sin(np.deg2rad(110))
    return xr.DataArray(np.where(x < 64, left, right), dims=("y", "x"))


def _peaks(theta, f, count):
    """The angles (degrees in [0, 360)) of the ``count`` highest local maxima of a periodic f."""
    g = f[:-1]  # theta runs over [-π, π] with both ends: drop the repeat
    local = (g > np.roll(g, 1)) & (g >= np.roll(g, -1))
    best = np.argsort(np.where(local, g, -np.inf))[::-1][:count]
    return np.sort(np.mod(np.rad2deg(theta[:-1][best]), 360))


def test_rose_peaks_at_the_gradient_angle_of_the_region():
    field = _two_ramps().fskde.coefficients(order=16, window="gaussian", size=2)
    for region, degrees in (({"y": slice(10, 54), "x": slice(10, 52)}, 40.0),
                            ({"y": slice(10, 54), "x": slice(76, 118)}, 110.0)):  # fmt: skip
        ax = plot.rose(field, region)
        theta, f = ax.lines[0].get_data()
        mean = field.sel(region).values.astype(np.complex128).mean(axis=(0, 1))
        np.testing.assert_allclose(f, xfskde.evaluate(mean, theta), rtol=1e-12, atol=1e-12)
        (peak,) = _peaks(theta, f, 1)
        assert abs(peak - degrees) <= 0.5  # the grid of 721 angles: every half degree
        assert f.min() < 1e-3 * f.max()  # a ramp: no gradient points the other way
        # the axial reading: ½(f(θ) + f(θ + π)), peaks at the angle and its opposite
        _, axial = ax.lines[1].get_data()
        np.testing.assert_allclose(axial, 0.5 * (f + xfskde.evaluate(mean, theta + np.pi)),
                                   atol=1e-12)  # fmt: skip
        np.testing.assert_allclose(_peaks(theta, axial, 2), [degrees, degrees + 180], atol=0.5)
        # the structures run across the gradients: ω = angle + 90° (mod 180°)
        omega_line, _ = ax.lines[2].get_data()
        assert _axial_gap(omega_line[0], np.deg2rad(degrees + 90)) < 1e-6


def test_rose_of_a_cosine_grating_has_both_directions():
    # a periodic grating: Σ|g| over rising and falling flanks is equal, so f peaks at α and α+π
    image = _stripes(120.0, n=96)  # gradients along 120 + 90 = 210°, i.e. 30° and 210°
    field = xr.DataArray(image, dims=("y", "x")).fskde.coefficients(
        order=ORDER, window="gaussian", size=3
    )
    ax = plot.rose(field, {"y": slice(16, 80), "x": slice(16, 80)})
    theta, f = ax.lines[0].get_data()
    np.testing.assert_allclose(_peaks(theta, f, 2), [30.0, 210.0], atol=1.0)
    # equal mass both ways over whole periods; this square holds 2.7 of them: nearly equal peaks
    i, j = np.argmin(np.abs(theta - np.deg2rad(30))), np.argmin(np.abs(theta - np.deg2rad(-150)))
    assert 0.9 < f[i] / f[j] < 1.1
    assert f.min() < 0.05 * f.max()  # and nothing across the stripes' normal


def test_rose_regions_by_mask_and_on_numpy_fields():
    image = _two_ramps()
    field = image.fskde.coefficients(order=ORDER, window="box", size=4, stride=4)
    mask = (field["x"] < 60).values & (field["y"] > 20).values[:, None]
    by_mask = plot.rose(field, mask, axial=False, orientation=False)
    theta, f = by_mask.lines[0].get_data()
    assert len(by_mask.lines) == 1
    mean = field.values.astype(np.complex128)[mask].mean(axis=0)
    np.testing.assert_allclose(f, xfskde.evaluate(mean, theta), atol=1e-12)
    # a mask on the image's grid is read at each sample's pixel
    pixel_mask = (image["x"] < 60) & (image["y"] > 20)
    by_pixels = plot.rose(field, pixel_mask, axial=False, orientation=False)
    np.testing.assert_allclose(by_pixels.lines[0].get_data()[1], f, atol=1e-12)
    # a NumPy field: coordinates are the sampled pixels i*4 + 1
    F = field.values
    region = {"y": slice(21, 63), "x": slice(0, 59)}
    on_numpy = plot.rose(F, region, stride=4, axial=False, orientation=False)
    np.testing.assert_allclose(on_numpy.lines[0].get_data()[1], f, atol=1e-12)
    # a Dask-backed field reduces to the same mean
    lazy = image.chunk({"x": 68}).fskde.coefficients(order=ORDER, window="box", size=4, stride=4)
    on_dask = plot.rose(lazy, mask, axial=False, orientation=False)
    np.testing.assert_allclose(on_dask.lines[0].get_data()[1], f, atol=1e-6 * f.max())


def test_rose_is_drawn_clockwise_and_can_be_normalized():
    field = _two_ramps().fskde.coefficients(order=ORDER, window="gaussian", size=2)
    ax = plot.rose(field, {"x": slice(10, 50)}, normalize=True)
    assert ax.get_theta_direction() == -1  # clockwise: y down the rows, as displayed
    ax.figure.canvas.draw()  # polar axes are made round when drawn
    origin = ax.transData.transform((0.0, 0.0))
    dx, dy = ax.transData.transform((np.deg2rad(40), 1.0)) - origin
    assert np.rad2deg(np.arctan2(-dy, dx)) == pytest.approx(40.0)  # down-right on the screen
    theta, f = ax.lines[0].get_data()
    assert np.trapezoid(f, theta) == pytest.approx(1.0, rel=1e-9)


def test_rose_leaves_out_no_data_and_refuses_empty_regions():
    F = xfskde.local_fskde(_two_ramps().values, order=ORDER, window="gaussian", size=2)
    holes = F.copy()
    holes[:5] = np.nan
    a = plot.rose(holes, axial=False, orientation=False).lines[0].get_data()[1]
    b = plot.rose(F[5:], axial=False, orientation=False).lines[0].get_data()[1]
    np.testing.assert_allclose(a, b, rtol=1e-10)
    with pytest.raises(ParameterError):
        plot.rose(F, {"y": slice(500, 600)})
    with pytest.raises(ParameterError):
        plot.rose(F, {"z": slice(0, 5)})
    with pytest.raises(DimensionError):
        plot.rose(F, np.ones((3, 3), bool))


# --- the example --------------------------------------------------------------------------------


def test_orientation_pictures_example(tmp_path):
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "examples" / "orientation_pictures.py"
    spec = importlib.util.spec_from_file_location("_example_orientation_pictures", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = module.main(["--size", "96", "--plot", str(tmp_path / "p.png")])
    # rings: ω = polar angle + 90° (the central-difference bias at period 12 is below 0.7°) ...
    assert results["rings_orientation_error_degrees"] < 0.7
    # ... and so the map's colour is the wheel's at that angle
    assert results["rings_hue_gap_degrees"] < 0.7
    assert results["rings_median_coherence"] > 0.99
    # a thin line: one hue on both flanks, against half the hue circle apart by direction
    assert results["line_axial_flank_gap_degrees"] < 0.1
    assert abs(results["line_direction_flank_gap_degrees"] - 180) < 0.5
    # the tripod's leg runs down to the right at about 60°, the grass has hardly an axis
    assert abs(results["leg_orientation_degrees"] - 60) < 5 and results["leg_coherence"] > 0.3
    assert results["grass_coherence"] < 0.15
    assert (tmp_path / "p.png").stat().st_size > 10_000
