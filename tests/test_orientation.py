"""Axial orientation, coherence and energy (:mod:`xfskde.orientation`), with measured accuracy.

**Gratings and the central-difference bias.** For a grating
:math:`I = \\cos(\\omega (x\\cos\\alpha + y\\sin\\alpha) + \\psi_0)` sampled on the pixels, the
central differences are exactly

.. math:: I_x = -\\sin\\psi \\,\\sin(\\omega\\cos\\alpha),\\qquad
          I_y = -\\sin\\psi \\,\\sin(\\omega\\sin\\alpha)

(ψ the phase at the pixel): the true derivative's factor ω cos α becomes sin(ω cos α), the
frequency response sin(ω)/ω of ``[-1, 0, 1]/2`` along each axis. Every gradient of the image
lies on one axis,

.. math:: \\hat\\alpha = \\operatorname{atan2}(\\sin(\\omega\\sin\\alpha),
          \\sin(\\omega\\cos\\alpha)),

whatever the pixel, so :math:`F_2 \\propto e^{-2i\\hat\\alpha}` exactly and the orientation error is
:math:`\\hat\\alpha - \\alpha` at every pixel away from the edges, whatever the window. With
:math:`\\sin z = z - z^3/6 + O(z^5)`,
:math:`\\tan\\hat\\alpha = \\tan\\alpha\\,(1 - \\omega^2\\sin^2\\alpha/6)
/(1 - \\omega^2\\cos^2\\alpha/6) \\approx \\tan\\alpha\\,(1 + \\omega^2\\cos 2\\alpha/6)`, hence

.. math:: \\hat\\alpha - \\alpha
          \\approx \\tfrac{\\omega^2}{6}\\sin\\alpha\\cos\\alpha\\cos 2\\alpha
          = \\tfrac{\\omega^2}{24}\\sin 4\\alpha:

no bias on the axes and the diagonals, a pull towards the nearer diagonal that is largest at
α = π/8 + mπ/4, where it is ω²/24 = π²/(6P²) rad = 94.2°/P² for a period of P pixels: 1.47° at
P = 8, 0.65° at 12, 0.37° at 16, 0.16° at 24, 0.09° at 32. Measured (36 angles, 5° apart,
float64): 1.527°, 0.659°, 0.367°, 0.162°, 0.091° — equal to the exact atan2 prediction to
1e-9 rad (the series misses the O(ω⁴) terms at P = 8). Scharr's or Gaussian derivatives would be
more isotropic (docs/orientation.md gives the figures); the gradient is central differences.

**Noise.** For N independent directions with weights a_n, the resultant has
E|Σ a e^{2iθ}|² = Σ a², so the mean resultant length is about
:math:`\\sqrt{\\pi\\kappa/(4N_\\mathrm{eff})}` with :math:`N_\\mathrm{eff} = 1/\\sum\\varphi^2`
and :math:`\\kappa = E w^2 / (E w)^2` (4/π for the Rayleigh |g| of Gaussian noise). Measured on
512² Gaussian noise: mean coherence 0.0767 / 0.0378 / 0.0182 for Gaussian windows σ = 4 / 8 / 16
(N_eff ≈ 201 / 804 / 3216) against the independent-gradient prediction 0.0705 / 0.0353 / 0.0176:
central differences correlate neighbouring gradients, which raises it by 3–9 %; the same
gradients shuffled in space give 0.0708 / 0.0354 / 0.0175.

**scikit-image.** ``structure_tensor`` (Sobel derivatives, |g|² weights) on ``camera`` with the
same Gaussian σ = 2: median axial difference 1.47° over the pixels with coherence > 0.5 (23 %
of them); on ``brick`` 0.85° (54 %). About 1.4° (camera) of it is the weighting alone, as the
central-difference |g|²-tensor shows.
"""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
import xarray as xr
from _xr_checks import assert_labelled_result
from scipy import ndimage as ndi
from skimage import data
from skimage.feature import structure_tensor, structure_tensor_eigenvalues

import xfskde
from xfskde.exceptions import DimensionError, ParameterError
from xfskde.orientation import coherence, energy, h2_over_h0, kernel_of, orientation

ORDER = 8
KERNEL = xfskde.Cos2KKernel(ORDER)
ANGLES = np.arange(36) * np.pi / 36  # 5° apart over [0, π)
PERIODS = [8, 12, 16, 24, 32]
# the measured maxima over ANGLES (degrees), central differences, float64
MEASURED_MAX_DEGREES = {8: 1.527, 12: 0.659, 16: 0.367, 24: 0.162, 32: 0.091}


def axial(d):
    """An angle difference modulo π, in [-π/2, π/2)."""
    return np.mod(np.asarray(d) + np.pi / 2, np.pi) - np.pi / 2


def grating(alpha: float, period: float, n: int = 72, dtype=np.float64) -> np.ndarray:
    """Stripes whose gradient points along alpha (x right, y down): structures along alpha + π/2."""
    y, x = np.mgrid[0:n, 0:n].astype(np.float64)
    omega = 2 * np.pi / period
    return np.cos(omega * (x * np.cos(alpha) + y * np.sin(alpha)) + 0.3).astype(dtype)


def central_difference_axis(alpha, period):
    """The axis of every central-difference gradient of a grating (module docstring)."""
    omega = 2 * np.pi / period
    return np.arctan2(np.sin(omega * np.sin(alpha)), np.sin(omega * np.cos(alpha)))


SIGMA = 2.0
MARGIN = 12  # > the window's radius ceil(4 sigma) + 1: no edge pixel reaches the interior
INTERIOR = (slice(MARGIN, -MARGIN), slice(MARGIN, -MARGIN))


@pytest.mark.parametrize("period", PERIODS)
def test_grating_orientation_error_is_the_central_difference_bias(period):
    errors, predicted = [], []
    for alpha in ANGLES:
        F = xfskde.local_fskde(grating(alpha, period), order=ORDER, window="gaussian", size=SIGMA)
        omega = orientation(F)[INTERIOR]
        truth = alpha + np.pi / 2  # the stripes run perpendicular to the gradient
        errors.append(np.abs(axial(omega - truth)).max())
        bias = axial(central_difference_axis(alpha, period) - alpha)
        # the error is the bias, at every interior pixel, to rounding
        np.testing.assert_allclose(axial(omega - truth - bias), 0, atol=1e-9)
        predicted.append(abs(bias))
        # and the series ω²/24 sin 4α holds to O(ω⁴)
        w = 2 * np.pi / period
        assert abs(bias - w**2 / 24 * np.sin(4 * alpha)) < 0.2 * w**2 / 24 + 1e-12
    worst = np.rad2deg(max(errors))
    assert worst == pytest.approx(MEASURED_MAX_DEGREES[period], abs=1e-3)
    assert worst <= np.rad2deg(np.pi**2 / (6 * period**2)) * 1.05  # ω²/24, 5 % for O(ω⁴)
    if period >= 12:
        assert worst < 0.7  # well under 1° from 12 px on
    if period >= 16:
        assert worst < 0.4


def test_grating_coherence_is_one_and_energy_the_mean_gradient():
    for period in PERIODS:
        for alpha in ANGLES[::3]:
            image = grating(alpha, period)
            F = xfskde.local_fskde(image, order=ORDER, window="gaussian", size=SIGMA)
            C = coherence(F, KERNEL)[INTERIOR]
            assert C.min() > 0.999999 and C.max() <= 1
            g = np.abs(xfskde.gradient(image))
            mean_g = ndi.gaussian_filter(g, SIGMA, mode="reflect", truncate=4)
            np.testing.assert_allclose(energy(F)[INTERIOR], mean_g[INTERIOR], rtol=1e-9)


def test_float32_grating_and_coherence_in_range():
    F = xfskde.local_fskde(grating(0.4, 12, dtype=np.float32), order=ORDER, size=SIGMA)
    assert F.dtype == np.complex64
    omega, C, E = orientation(F), coherence(F, KERNEL), energy(F)
    assert omega.dtype == C.dtype == E.dtype == np.float32
    assert np.all((omega >= 0) & (omega < np.pi))
    assert np.all((C >= 0) & (C <= 1)) and C[INTERIOR].min() > 0.9999
    bias = axial(central_difference_axis(0.4, 12) - 0.4)
    assert np.abs(axial(omega[INTERIOR] - 0.4 - np.pi / 2 - bias)).max() < 1e-5


def test_white_noise_coherence_is_the_random_walk_floor():
    rng = np.random.default_rng(3)
    noise = rng.standard_normal((256, 256))
    sigma = 8.0
    F = xfskde.local_fskde(noise, order=ORDER, window="gaussian", size=sigma)
    m = int(np.ceil(4 * sigma)) + 2
    C = coherence(F, KERNEL)[m:-m, m:-m]
    w = np.abs(xfskde.gradient(noise))
    kappa = (w**2).mean() / w.mean() ** 2  # 4/π for Rayleigh magnitudes
    assert kappa == pytest.approx(4 / np.pi, rel=0.02)
    r = np.arange(-int(np.ceil(4 * sigma)), int(np.ceil(4 * sigma)) + 1)
    profile = np.exp(-(r**2) / (2 * sigma**2))
    n_eff = 1 / ((profile / profile.sum()) ** 2).sum() ** 2  # ≈ 4πσ² = 804
    expected = np.sqrt(np.pi * kappa / (4 * n_eff))  # ≈ 0.0353
    # measured 0.037-0.038: neighbouring central differences are correlated (a few % more)
    assert 0.95 * expected < C.mean() < 1.2 * expected
    assert C.mean() < 0.05 and np.quantile(C, 0.99) < 0.15


def test_formulas_are_the_sqrt_g_structure_tensor():
    """conj(F_2)/H_2 = φ * (g²/|g|): the structure tensor of the gradient rescaled to √|g|."""
    image = data.camera()[100:220, 150:300].astype(np.float64)
    F = xfskde.local_fskde(image, order=ORDER, window="gaussian", size=SIGMA)
    g = xfskde.gradient(image)
    w = np.abs(g)
    g2_over_w = np.where(w > 0, g**2 / np.where(w > 0, w, 1), 0)

    def smooth(a):
        return ndi.gaussian_filter(a, SIGMA, mode="reflect", truncate=4)

    # (Jxx - Jyy) + 2i Jxy and Jxx + Jyy of the gradient rescaled to magnitude √|g|
    doubled = (smooth(g2_over_w.real) + 1j * smooth(g2_over_w.imag))[INTERIOR]
    trace = smooth(w)[INTERIOR]
    # (interior only: beyond the edges the library reflects the image, scipy the gradients)
    F = F[INTERIOR]
    np.testing.assert_allclose(F[..., 2], KERNEL.coefficients[2] * np.conj(doubled), atol=1e-9)
    np.testing.assert_allclose(energy(F), trace, rtol=1e-9)
    np.testing.assert_allclose(coherence(F, KERNEL), np.abs(doubled) / trace, rtol=1e-9)
    expected = np.mod(0.5 * np.angle(doubled) + np.pi / 2, np.pi)
    np.testing.assert_allclose(axial(orientation(F) - expected), 0, atol=1e-9)


@pytest.mark.parametrize(("name", "bound_degrees"), [("camera", 2.5), ("brick", 1.5)])
def test_agrees_with_scikit_image_structure_tensor(name, bound_degrees):
    """Median axial difference to skimage's structure tensor, same Gaussian sigma.

    Measured: camera 1.47° (23 % of pixels with coherence > 0.5), brick 0.85° (54 %). The
    tensor weighs gradients by |g|² and takes Sobel derivatives; ours |g| and central differences.
    """
    image = getattr(data, name)().astype(np.float64)  # 512 x 512
    F = xfskde.local_fskde(image, order=ORDER, window="gaussian", size=SIGMA)
    omega, C = orientation(F), coherence(F, KERNEL)
    # order="rc": A_rr = φ * Iy², A_rc = φ * Iy Ix, A_cc = φ * Ix² (rows are y, down; columns x)
    Arr, Arc, Acc = structure_tensor(image, sigma=SIGMA, mode="reflect", order="rc")
    gradient_axis = 0.5 * np.arctan2(2 * Arc, Acc - Arr)  # ½ arg((Jxx - Jyy) + 2i Jxy)
    omega_st = np.mod(gradient_axis + np.pi / 2, np.pi)  # the second eigenvector
    l1, l2 = structure_tensor_eigenvalues([Arr, Arc, Acc])
    coherence_st = (l1 - l2) / np.where(l1 + l2 > 0, l1 + l2, 1)
    np.testing.assert_allclose(  # (λ1 - λ2)/(λ1 + λ2) = |doubled-angle vector| / trace
        coherence_st, np.hypot(Acc - Arr, 2 * Arc) / np.where(l1 + l2 > 0, l1 + l2, 1), atol=1e-9
    )
    m = int(np.ceil(4 * SIGMA)) + 2
    inner = (slice(m, -m), slice(m, -m))
    coherent = C[inner] > 0.5
    assert coherent.mean() > 0.15
    difference = np.rad2deg(np.abs(axial(omega - omega_st)))[inner][coherent]
    assert np.median(difference) < bound_degrees
    # |g|² weights lean towards the strongest edges: the tensor's coherence is the higher
    assert np.median(coherence_st[inner][coherent]) > np.median(C[inner][coherent])


def test_convention_on_screen():
    n = 48
    y, x = np.mgrid[0:n, 0:n].astype(np.float64)
    cases = {
        "horizontal stripes (vary down the rows)": (np.cos(2 * np.pi * y / 12), 0.0),
        "vertical stripes (vary along the rows)": (np.cos(2 * np.pi * x / 12), np.pi / 2),
        # constant along x = y: from top-left down to bottom-right
        "top-left to bottom-right": (np.cos(2 * np.pi * (x - y) / 12), np.pi / 4),
        "bottom-left to top-right": (np.cos(2 * np.pi * (x + y) / 12), 3 * np.pi / 4),
    }
    for what, (image, expected) in cases.items():
        F = xfskde.local_fskde(image, order=ORDER, size=SIGMA)
        omega = orientation(F)[INTERIOR]
        assert np.abs(axial(omega - expected)).max() < 1e-9, what
    # a step edge: dark left, bright right -> a vertical edge, ω = π/2
    step = np.zeros((32, 32))
    step[:, 16:] = 1.0
    F = xfskde.local_fskde(step, order=ORDER, size=SIGMA)
    assert orientation(F)[16, 16] == pytest.approx(np.pi / 2)
    assert coherence(F, KERNEL)[16, 16] == pytest.approx(1.0)


def test_rot90_rule():
    """np.rot90 turns the picture 90° counter-clockwise: ω - π/2 at the rotated pixel."""
    image = data.camera()[:96, :128]
    F = xfskde.local_fskde(image, order=ORDER, window="gaussian", size=SIGMA)
    F_rot = xfskde.local_fskde(np.rot90(image), order=ORDER, window="gaussian", size=SIGMA)
    omega, omega_rot = orientation(F), orientation(F_rot)
    C, C_rot = coherence(F, KERNEL), coherence(F_rot, KERNEL)
    defined = np.isfinite(np.rot90(omega)) & (np.rot90(C) > 1e-3)
    assert defined.mean() > 0.9
    difference = axial(omega_rot - (np.rot90(omega) - np.pi / 2))[defined]
    assert np.abs(difference).max() < 1e-3
    np.testing.assert_allclose(C_rot, np.rot90(C), atol=1e-5)
    np.testing.assert_allclose(energy(F_rot), np.rot90(energy(F)), rtol=1e-5)


def test_flat_windows_and_edge_values():
    F = xfskde.local_fskde(np.full((20, 20), 7.0), order=ORDER, size=2)
    assert np.all(np.isnan(orientation(F)))
    assert np.all(coherence(F, KERNEL) == 0) and np.all(energy(F) == 0)
    # axis near the gradient axis π/2 - 0: ω just below π rounds to π in float32 -> 0
    for dtype in (np.complex64, np.complex128):
        G = np.zeros((4, 3), dtype)
        G[:, 0] = 1.0
        G[:, 2] = np.exp(-1j * np.array([np.pi - 1e-9, -np.pi + 1e-9, 1e-9, np.pi]))
        omega = orientation(G)
        assert omega.dtype == np.empty(0, dtype).real.dtype
        assert np.all((omega >= 0) & (omega < np.pi)), omega
        np.testing.assert_allclose(axial(omega - np.array([0, 0, np.pi / 2, 0])), 0, atol=1e-6)


def test_kernel_ratio():
    assert h2_over_h0(KERNEL) == pytest.approx(ORDER * (ORDER - 1) / ((ORDER + 1) * (ORDER + 2)))
    normal = xfskde.Cos2KKernel(64, eps=1e-5)
    assert h2_over_h0(normal) == pytest.approx(np.exp(-4 / 64))
    F = xfskde.fskde([0.3, 0.3 + np.pi, 0.31], [1.0, 2.0, 0.5], order=ORDER)
    assert coherence(F, h2_over_h0(KERNEL)) == coherence(F, KERNEL)
    # the raw doubled-angle resultant of the set
    z = np.array([1.0, 2.0, 0.5]) * np.exp(2j * np.array([0.3, 0.3 + np.pi, 0.31]))
    assert coherence(F, KERNEL) == pytest.approx(abs(z.sum()) / 3.5)
    assert orientation(F) == pytest.approx(np.mod(0.5 * np.angle(z.sum()) + np.pi / 2, np.pi))
    # the order does not matter once H_2/H_0 is divided out
    G = xfskde.fskde([0.3, 0.3 + np.pi, 0.31], [1.0, 2.0, 0.5], order=30, eps=1e-5)
    assert coherence(G, xfskde.Cos2KKernel(30, eps=1e-5)) == pytest.approx(coherence(F, KERNEL))


def test_refusals():
    F2 = xfskde.local_fskde(np.random.default_rng(0).random((8, 8)), order=1)  # ℓ = 2
    with pytest.raises(DimensionError, match="at least 3"):
        orientation(F2)
    np.testing.assert_array_equal(energy(F2), 2 * np.pi * F2[..., 0].real)  # F_0 is enough
    with pytest.raises(DimensionError, match="at least 3"):
        coherence(F2, 0.5)
    with pytest.raises(ParameterError, match="needs the kernel"):
        coherence(np.ones((2, 3), complex))
    with pytest.raises(ParameterError, match="no F_2"):
        h2_over_h0(xfskde.Cos2KKernel(1))
    for bad in (0.0, 1.5, np.nan, "x"):
        with pytest.raises(ParameterError):
            h2_over_h0(bad)
    field = xr.DataArray(np.ones((2, 2, 4), complex), dims=("y", "x", "k"))
    with pytest.raises(ParameterError, match="pass the kernel"):
        coherence(field)
    assert coherence(field, KERNEL).name == "coherence"
    with pytest.raises(DimensionError, match="no 'k' dim"):
        orientation(xr.DataArray(np.ones((3, 3)), dims=("y", "x")))
    scattered = field.assign_coords(k=[0, 2, 4, 6])
    with pytest.raises(DimensionError, match="lacks k = 1, 3, 5"):
        orientation(scattered)


# --- labelled fields: eager, lazy, labels -------------------------------------------------------


def _image(lazy: bool) -> xr.DataArray:
    pixels = data.brick()[:131, :97]
    ny, nx = pixels.shape
    image = xr.DataArray(
        da.from_array(pixels, chunks=(37, 41)) if lazy else pixels,
        dims=("y", "x"),
        coords={
            "y": ("y", 500.0 - 2.0 * np.arange(ny), {"units": "m"}),
            "x": ("x", 10.0 + 2.0 * np.arange(nx), {"units": "m"}),
            "lat": (("y", "x"), np.add.outer(np.arange(ny), 0.01 * np.arange(nx))),
            "spatial_ref": ((), 0, {"crs_wkt": "EPSG:32632"}),
        },
        name="brick",
        attrs={"units": "DN", "mission": "test"},
    )
    return image


@pytest.mark.parametrize("stride", [1, 3])
def test_lazy_equals_eager_and_labels_are_kept(stride):
    eager_image, lazy_image = _image(False), _image(True)
    params = dict(order=ORDER, window="gaussian", size=3, stride=stride)
    eager_field = eager_image.fskde.coefficients(**params)
    lazy_field = lazy_image.fskde.coefficients(**params)  # chunks 37 x 41: odd, uneven
    assert lazy_field.chunks is not None
    for method, name, units in [
        ("orientation", "orientation", "rad"),
        ("coherence", "coherence", "1"),
        ("energy", "energy", "DN/pixel"),  # the image's units, recorded by the field
    ]:
        eager = getattr(eager_field.fskde, method)()
        lazy = getattr(lazy_field.fskde, method)()
        assert lazy.chunks is not None, f"{method} loaded the field"
        assert eager.name == lazy.name == name
        assert eager.attrs["units"] == units and "long_name" in eager.attrs
        assert eager.attrs["order"] == ORDER  # the field's parameters travel on
        for result, image in ((eager, eager_image), (lazy, lazy_image)):
            assert_labelled_result(result, image, stride=stride)
        computed = lazy.compute()
        xr.testing.assert_allclose(computed, eager, rtol=1e-5, atol=1e-6)
        assert computed.dtype == eager.dtype == np.float32
    assert eager_field.attrs["input_units"] == "DN"
    assert eager_field.fskde.energy("counts").attrs["units"] == "counts/pixel"  # given wins
    assert "clockwise" in eager_field.fskde.orientation().attrs["orientation_convention"]


def test_functions_match_the_accessor_and_numpy():
    field = _image(False).fskde.coefficients(order=ORDER, window="gaussian", size=3)
    assert kernel_of(field) == KERNEL
    np.testing.assert_array_equal(field.fskde.coherence().values, coherence(field.values, KERNEL))
    np.testing.assert_array_equal(field.fskde.orientation().values, orientation(field.values))
    np.testing.assert_array_equal(energy(field).values, energy(field.values))
    assert xfskde.coherence is coherence and xfskde.energy is energy
    # an explicit kernel overrides the attrs (e.g. a field whose attrs were lost)
    bare = field.copy()
    bare.attrs = {}
    xr.testing.assert_allclose(
        bare.fskde.coherence(KERNEL).drop_attrs(), field.fskde.coherence().drop_attrs()
    )


def test_dask_array_face():
    pixels = data.camera()[:90, :70]
    F = xfskde.local_fskde(pixels, order=ORDER, size=2)
    lazy = da.from_array(F, chunks=(23, 29, 4))  # k split too: rechunked to one block
    for func, args in ((orientation, ()), (coherence, (KERNEL,)), (energy, ())):
        out = func(lazy, *args)
        assert isinstance(out, da.Array) and out.shape == F.shape[:-1]
        np.testing.assert_array_equal(out.compute(), func(F, *args))
