"""Gradient operators: central differences (the paper's), Scharr and Gaussian derivatives.

Each operator against an independent reference (scikit-image's Scharr, scipy's Gaussian
derivative, a brute-force correlation of the np.pad-ed image), its accuracy on gratings, the
missing-pixel rule of its stencil, its halo, and NumPy == Dask for any chunking and stride.
"""

import math
import warnings

import dask.array as da
import numpy as np
import pytest
import skimage
import xarray as xr
from _brute_force import missing_at_samples, padded
from packaging.version import Version
from scipy import ndimage
from skimage import data, filters

import xfskde
from xfskde import Cos2KKernel, Window, _core, gradient, local_fskde, overlap_depth
from xfskde.exceptions import ParameterError, StoreParametersError
from xfskde.gradients import GRADIENT_OPERATORS, GradientOperator
from xfskde.lazy import ChunkSizeWarning
from xfskde.local import LocalParameters, local_fskde_block, sample_count, sample_offset
from xfskde.orientation import orientation

MODES = ["reflect", "mirror", "nearest", "wrap", "constant"]
#: (gradient, gradient_scale) of the wider operators
WIDE = [("scharr", 1.0), ("gaussian", 1.0), ("gaussian", 0.6), ("gaussian", 1.7)]
#: the textbook Scharr kernel for I_x (correlation: +x to the right), scaled so a ramp gives 1
SCHARR_X = np.array([[-3.0, 0.0, 3.0], [-10.0, 0.0, 10.0], [-3.0, 0.0, 3.0]]) / 32.0


def textbook_kernels(kind: str, sigma: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The 2-D correlation kernels (K_x, K_y) of an operator, from their definitions."""
    if kind == "central":
        kx = np.zeros((3, 3))
        kx[1] = [-0.5, 0.0, 0.5]
    elif kind == "scharr":
        kx = SCHARR_X
    else:
        r = math.ceil(4 * sigma)
        t = np.arange(-r, r + 1, dtype=np.float64)
        bell = np.exp(-(t**2) / (2 * sigma**2))
        # d/dx of the sampled Gaussian, scaled so that the unit ramp gives exactly 1
        kx = np.outer(bell / bell.sum(), t * bell / np.sum(t * t * bell))
    return kx, kx.T


def reference_gradient(
    image, kind, sigma, pad, boundary="reflect", cval=0.0, omit_nan=False, channel_axis=None
):
    """(gx, gy) of the image np.pad-ed by ``pad`` pixels, by explicit shifted sums.

    Each gradient is Σ K[i, j] P[y + i, x + j] over the kernel's offsets; with ``omit_nan`` one
    whose stencil (the offsets where K_x or K_y is not zero) holds a non-finite pixel is dropped
    from the channel choice, and is 0 if every channel's is. With ``channel_axis`` each pixel
    keeps the channel of largest |g|² (the first on ties).
    """
    image = np.asarray(image, dtype=np.float64)
    if channel_axis is None:
        image = image[..., None]
    else:
        image = np.moveaxis(image, channel_axis, -1)
    kx, ky = textbook_kernels(kind, sigma)
    r = kx.shape[0] // 2
    P = padded(image, pad + r, boundary, cval)
    h, w = P.shape[0] - 2 * r, P.shape[1] - 2 * r
    bad = ~np.isfinite(P)
    P = np.where(bad, 0.0, P)
    gx = np.zeros((h, w, image.shape[-1]))
    gy = np.zeros_like(gx)
    touched = np.zeros(gx.shape, bool)
    for i in range(2 * r + 1):
        for j in range(2 * r + 1):
            gx += kx[i, j] * P[i : i + h, j : j + w]
            gy += ky[i, j] * P[i : i + h, j : j + w]
            if kx[i, j] != 0 or ky[i, j] != 0:
                touched |= bad[i : i + h, j : j + w]
    m = np.where(touched, -np.inf, gx**2 + gy**2)
    pick = np.argmax(m, axis=-1)[..., None]
    gx = np.take_along_axis(gx, pick, axis=-1)[..., 0]
    gy = np.take_along_axis(gy, pick, axis=-1)[..., 0]
    lost = np.take_along_axis(touched, pick, axis=-1)[..., 0]
    if omit_nan:
        gx[lost] = 0.0
        gy[lost] = 0.0
    else:
        gx[lost] = np.nan
        gy[lost] = np.nan
    return gx, gy


def reference_field(image, order, window, size, stride, kind, sigma, **gradient_kwargs):
    """F_k = H_k Σ φ W e^{-ikΘ} over each sample's window, from :func:`reference_gradient`."""
    win = Window(window, size)
    d = win.radius
    gx, gy = reference_gradient(image, kind, sigma, d, **gradient_kwargs)
    H = Cos2KKernel(order).coefficients
    k = np.arange(len(H))
    terms = np.hypot(gx, gy)[..., None] * np.exp(-1j * k * np.arctan2(gy, gx)[..., None])
    phi, b, a = win.weights(), win.before, win.after
    o = sample_offset(stride)
    ny, nx = (sample_count(n, stride) for n in (gx.shape[0] - 2 * d, gx.shape[1] - 2 * d))
    out = np.zeros((ny, nx, len(H)), dtype=np.complex128)
    for i in range(ny):
        for j in range(nx):
            y, x = i * stride + o + d, j * stride + o + d
            block = terms[y - b : y + a + 1, x - b : x + a + 1]
            out[i, j] = H * np.tensordot(phi, block, axes=([0, 1], [0, 1]))
    if gradient_kwargs.get("omit_nan"):
        out[missing_at_samples(image, stride, gradient_kwargs.get("channel_axis"))] = np.nan
    return out


# ---------------------------------------------------------------------------- the operators


def test_operators_and_their_radius():
    assert GRADIENT_OPERATORS == ("central", "scharr", "gaussian")
    assert GradientOperator().kind == "central" and GradientOperator().radius == 1
    assert GradientOperator("scharr").radius == 1
    for sigma, radius in [(1.0, 4), (0.6, 3), (0.1, 1), (1.7, 7), (2.5, 10)]:
        assert GradientOperator("gaussian", sigma).radius == radius  # ⌈4σ⌉, at least 1
    for kind, sigma in [("central", 1.0), ("scharr", 1.0), ("gaussian", 1.0), ("gaussian", 2.2)]:
        d, s = GradientOperator(kind, sigma).taps()
        kx, ky = textbook_kernels(kind, sigma)
        np.testing.assert_allclose(np.outer(s, d), kx, rtol=1e-15, atol=1e-17)
        np.testing.assert_allclose(np.outer(d, s), ky, rtol=1e-15, atol=1e-17)
        t = np.arange(len(d)) - len(d) // 2
        assert np.sum(t * d) == pytest.approx(1.0, abs=1e-15)  # a unit ramp gives 1
        assert np.sum(s) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gradient": "sobel"}, "gradient"),
        ({"gradient": "scharr", "gradient_scale": 2.0}, "gradient_scale"),
        ({"gradient_scale": 0.5}, "gradient_scale"),  # central has no scale
        ({"gradient": "gaussian", "gradient_scale": 0}, "gradient_scale"),
        ({"gradient": "gaussian", "gradient_scale": -1.0}, "gradient_scale"),
        ({"gradient": "gaussian", "gradient_scale": float("nan")}, "gradient_scale"),
        ({"gradient": "gaussian", "gradient_scale": "wide"}, "gradient_scale"),
    ],
)
def test_bad_operators_are_refused(kwargs, message):
    image = np.zeros((8, 8))
    for call in (
        lambda: gradient(image, **kwargs),
        lambda: local_fskde(image, order=2, **kwargs),
        lambda: overlap_depth("box", 3, **kwargs),
    ):
        with pytest.raises(ParameterError, match=message):
            call()


@pytest.mark.parametrize("boundary", MODES)
@pytest.mark.parametrize("shape", [(1, 1), (1, 6), (2, 2), (3, 1), (13, 17)])
def test_scharr_equals_scikit_image(rng, boundary, shape):
    """scikit-image's Scharr is (3, 10, 3)/16 ⊗ (-1, 0, 1): twice ours, which divides by 32."""
    if boundary == "constant" and Version(skimage.__version__) < Version("0.26"):
        pytest.skip("scikit-image before 0.26 ignores cval (pads with 0 whatever it is given)")
    image = rng.random(shape)
    g = gradient(image, gradient="scharr", boundary=boundary, cval=0.7)
    sk_x = filters.scharr(image, axis=1, mode=boundary, cval=0.7)
    sk_y = filters.scharr(image, axis=0, mode=boundary, cval=0.7)
    np.testing.assert_allclose(g.real, sk_x / 2, rtol=0, atol=1e-15)
    np.testing.assert_allclose(g.imag, sk_y / 2, rtol=0, atol=1e-15)


@pytest.mark.parametrize("boundary", MODES)
@pytest.mark.parametrize("sigma", [0.4, 1.0, 1.7])
@pytest.mark.parametrize("shape", [(1, 5), (3, 2), (19, 14)])
def test_gaussian_equals_scipy(rng, boundary, sigma, shape):
    """scipy's order-1 Gaussian, rescaled by σ²/Σt²φ(t) (so a ramp gives exactly 1), and the
    2-D correlation of the image with the textbook kernel, which is what every mode reads."""
    image = rng.random(shape)
    g = gradient(image, gradient="gaussian", gradient_scale=sigma, boundary=boundary, cval=0.3)
    kx, ky = textbook_kernels("gaussian", sigma)
    for plane, kernel in [(g.real, kx), (g.imag, ky)]:
        direct = ndimage.correlate(image, kernel, mode=boundary, cval=0.3)
        np.testing.assert_allclose(plane, direct, rtol=0, atol=1e-15)
    if boundary != "constant":  # scipy's separable passes pad each pass with cval
        r = math.ceil(4 * sigma)
        t = np.arange(-r, r + 1)
        phi = np.exp(-(t**2) / (2 * sigma**2))
        rescale = sigma**2 / np.sum(t**2 * phi / phi.sum())
        for plane, order in [(g.real, (0, 1)), (g.imag, (1, 0))]:
            scipy_g = ndimage.gaussian_filter(image, sigma, order=order, mode=boundary, radius=r)
            np.testing.assert_allclose(plane, rescale * scipy_g, rtol=0, atol=1e-15)


@pytest.mark.parametrize(("kind", "sigma"), [("central", 1.0), *WIDE, ("gaussian", 2.5)])
def test_a_linear_ramp_has_its_exact_gradient(kind, sigma):
    y, x = np.mgrid[0:40, 0:44].astype(np.float64)
    image = 3.0 * x - 2.0 * y + 5.0
    g = gradient(image, gradient=kind, gradient_scale=sigma)
    r = GradientOperator(kind, sigma).radius
    inner = g[r:-r, r:-r]  # away from the edges, where the reflected ramp is no longer linear
    np.testing.assert_allclose(inner.real, 3.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(inner.imag, -2.0, rtol=0, atol=1e-12)
    if kind == "gaussian":  # scipy's own order-1 taps are off by the sampled Gaussian's variance
        scipy_x = ndimage.gaussian_filter(image, sigma, order=(0, 1), radius=r)[r:-r, r:-r]
        assert np.abs(scipy_x - 3.0).max() > 1e-6


@pytest.mark.parametrize(("kind", "sigma"), WIDE)
@pytest.mark.parametrize("boundary", MODES)
def test_gradient_equals_brute_force_correlation(rng, kind, sigma, boundary):
    image = rng.random((12, 15))
    g = gradient(image, gradient=kind, gradient_scale=sigma, boundary=boundary, cval=-0.5)
    gx, gy = reference_gradient(image, kind, sigma, 0, boundary, cval=-0.5)
    np.testing.assert_allclose(g, gx + 1j * gy, rtol=0, atol=1e-14)
    assert g.dtype == np.complex128
    assert gradient(image.astype(np.float32), gradient=kind, gradient_scale=sigma).dtype == (
        np.complex64
    )


@pytest.mark.parametrize(("kind", "sigma"), WIDE)
def test_colour_takes_the_channel_with_the_largest_gradient(rng, kind, sigma):
    channels = rng.random((15, 16, 3)) * np.array([1.0, 1.5, 2.0])
    g = gradient(channels, channel_axis=-1, gradient=kind, gradient_scale=sigma)
    gx, gy = reference_gradient(channels, kind, sigma, 0, channel_axis=-1)
    np.testing.assert_allclose(g, gx + 1j * gy, rtol=0, atol=1e-14)
    one = [gradient(channels[..., c], gradient=kind, gradient_scale=sigma) for c in range(3)]
    assert len(np.unique(np.argmax(np.abs(np.stack(one)), axis=0))) == 3  # every channel wins


@pytest.mark.parametrize("boundary", MODES)
@pytest.mark.parametrize(("kind", "sigma"), [("central", 1.0), *WIDE])
def test_rot90_turns_every_angle_by_a_quarter(rng, boundary, kind, sigma):
    """Every operator is the same along x and y: the gradient of np.rot90(image) is the
    original's, moved with the pixels and turned by -π/2 (I_x' = I_y, I_y' = -I_x)."""
    image = rng.random((14, 11))
    g = gradient(image, gradient=kind, gradient_scale=sigma, boundary=boundary, cval=0.2)
    turned = gradient(
        np.rot90(image), gradient=kind, gradient_scale=sigma, boundary=boundary, cval=0.2
    )
    np.testing.assert_allclose(turned, np.rot90(g) * np.exp(-0.5j * np.pi), rtol=0, atol=1e-14)


# ------------------------------------------------------------------------- missing pixels


@pytest.mark.parametrize(("kind", "sigma"), [("central", 1.0), *WIDE])
def test_a_missing_pixel_removes_every_gradient_whose_stencil_touches_it(rng, kind, sigma):
    image = rng.random((24, 25))
    image[11, 12] = np.nan
    with pytest.raises(ParameterError, match="nan_policy"):
        gradient(image, gradient=kind, gradient_scale=sigma)
    g = gradient(image, gradient=kind, gradient_scale=sigma, nan_policy="omit")
    kx, ky = textbook_kernels(kind, sigma)
    r = kx.shape[0] // 2
    # the gradient at (y, x) reads (y + i, x + j) for each tap; the NaN is at (11, 12)
    touches = np.zeros(image.shape, bool)
    for i, j in zip(*np.nonzero((kx != 0) | (ky != 0)), strict=True):
        touches[11 - (i - r), 12 - (j - r)] = True
    expected_count = {"central": 4, "scharr": 8}.get(kind, (2 * r + 1) ** 2 - 1)
    assert touches.sum() == expected_count and not touches[11, 12]  # the centre is never read
    assert np.all(g[touches] == 0) and np.all(g[~touches] != 0)
    gx, gy = reference_gradient(image, kind, sigma, 0, omit_nan=True)
    np.testing.assert_allclose(g, gx + 1j * gy, rtol=0, atol=1e-14)
    clean = gradient(np.nan_to_num(image), gradient=kind, gradient_scale=sigma)
    np.testing.assert_array_equal(g[~touches], clean[~touches])  # the others are untouched


@pytest.mark.parametrize(("kind", "sigma"), WIDE)
def test_a_band_missing_at_a_pixel_does_not_erase_the_others(rng, kind, sigma):
    channels = rng.random((30, 31, 3))
    channels[9, 10, 2] = np.nan  # one band missing at one pixel
    channels[25, 4, :] = np.nan  # every band missing at another, farther than the stencils
    g = gradient(channels, channel_axis=-1, gradient=kind, gradient_scale=sigma, nan_policy="omit")
    gx, gy = reference_gradient(channels, kind, sigma, 0, omit_nan=True, channel_axis=-1)
    np.testing.assert_allclose(g, gx + 1j * gy, rtol=0, atol=1e-14)
    assert g[9, 11] != 0 and g[25, 5] == 0


# ----------------------------------------------------------------------------- the fields


#: (window, size, stride): each of the core's five routines (cells, running box, separable
#: Gaussian at stride 1 and strided, disk), reading gradient planes instead of differencing the
#: image
ROUTINES = [
    ("box", 4, 4), ("gaussian", 0.6, 8),  # cells
    ("box", 5, 1), ("box", 4, 3),  # running box
    ("gaussian", 1.3, 1), ("gaussian", 0.6, 3),  # separable Gaussian, at stride 1 and strided
    ("disk", 2.5, 1), ("disk", 1, 8),  # disk
]  # fmt: skip


def test_the_cases_reach_every_routine():
    paths = set()
    for window, size, stride in ROUTINES:
        params = LocalParameters(order=2, window=window, size=size, stride=stride)
        n_taps = params.window.before + params.window.after + 1
        paths.add(_core.PATHS[_core.tile_path(params.kind_code(), n_taps, stride)])
    assert paths == set(_core.PATHS)


@pytest.mark.parametrize(("window", "size", "stride"), ROUTINES)
@pytest.mark.parametrize(("kind", "sigma"), WIDE[:2])
def test_field_equals_brute_force(rng, window, size, stride, kind, sigma):
    for shape, boundary in zip([(17, 13), (12, 19)] * 3, MODES, strict=False):
        image = rng.random(shape)
        F = local_fskde(image, order=3, window=window, size=size, stride=stride,
                        boundary=boundary, cval=0.3, gradient=kind,
                        gradient_scale=sigma)  # fmt: skip
        expected = reference_field(image, 3, window, size, stride, kind, sigma,
                                   boundary=boundary, cval=0.3)  # fmt: skip
        np.testing.assert_allclose(F, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("kind", "sigma"), [("scharr", 1.0), ("gaussian", 1.0)])
def test_field_with_missing_pixels_and_colour_equals_brute_force(rng, kind, sigma):
    image = rng.random((22, 19, 3))
    image[5, 6, 0] = np.nan
    image[14:16, 3:5, :] = np.nan
    F = local_fskde(image, order=4, window="gaussian", size=1.2, stride=2, channel_axis=-1,
                    nan_policy="omit", gradient=kind, gradient_scale=sigma)  # fmt: skip
    expected = reference_field(image, 4, "gaussian", 1.2, 2, kind, sigma, omit_nan=True,
                               channel_axis=-1)  # fmt: skip
    np.testing.assert_allclose(F, expected, rtol=0, atol=1e-12)


def test_central_is_the_default_and_unchanged(rng):
    """gradient="central" is the paper's gradient: the default call, bit for bit, and the
    brute-force central differences."""
    image = rng.random((40, 37)).astype(np.float32)
    for window, size, stride in [("box", 8, 8), ("gaussian", 2.0, 1), ("disk", 3, 2)]:
        default = local_fskde(image, order=5, window=window, size=size, stride=stride)
        explicit = local_fskde(image, order=5, window=window, size=size, stride=stride,
                               gradient="central", gradient_scale=1.0)  # fmt: skip
        np.testing.assert_array_equal(explicit, default)
        expected = reference_field(image, 5, window, size, stride, "central", 1.0)
        np.testing.assert_allclose(default, expected, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(gradient(image, gradient="central"), gradient(image))
    assert LocalParameters(order=3).gradient == GradientOperator("central", 1.0)


# --------------------------------------------------------------------------- halo and Dask


@pytest.mark.parametrize(
    ("kind", "sigma", "extra"), [("central", 1.0, 1), ("scharr", 1.0, 1), ("gaussian", 1.0, 4),
                                 ("gaussian", 0.2, 1), ("gaussian", 2.3, 10)]
)  # fmt: skip
def test_the_halo_grows_by_the_operators_radius(kind, sigma, extra):
    for window, size in [("box", 8), ("gaussian", 1.5), ("disk", 3)]:
        radius = Window(window, size).radius
        params = LocalParameters(order=3, window=window, size=size, gradient=kind,
                                 gradient_scale=sigma)  # fmt: skip
        assert params.depth == radius + extra == Window(window, size).halo(extra)
        assert overlap_depth(window, size, gradient=kind, gradient_scale=sigma) == params.depth
    assert overlap_depth("box", 8) == Window("box", 8).depth == 5  # central: unchanged


@pytest.mark.parametrize(("kind", "sigma"), WIDE[:3])
def test_a_block_needs_its_halo_and_no_more(rng, kind, sigma):
    image = rng.random((60, 50))
    params = LocalParameters(order=3, window="gaussian", size=1.5, gradient=kind,
                             gradient_scale=sigma)  # fmt: skip
    whole = local_fskde(image, order=3, window="gaussian", size=1.5, gradient=kind,
                        gradient_scale=sigma)  # fmt: skip
    depth = params.depth
    a, b = 20, 40  # the block's own rows; the samples' windows and stencils reach `depth` more
    block = {"image_shape": image.shape, "rows": (a, b), "cols": (0, 50)}
    src = image[a - depth : b + depth][None]
    out = local_fskde_block(src, params, src_origin=(a - depth, 0), **block)
    np.testing.assert_array_equal(out, whole[a:b])
    with pytest.raises(ValueError, match="overlap depth"):
        local_fskde_block(src[:, 1:], params, src_origin=(a - depth + 1, 0), **block)


CHUNKINGS = [((17, 20, 24), (13, 13, 21)), ((61,), (6,) * 7 + (5,)), ((30, 31), (47,)),
             ((9, 52), (40, 7))]  # fmt: skip


@pytest.mark.parametrize(("kind", "sigma"), WIDE[:3])
@pytest.mark.parametrize("boundary", MODES)
def test_dask_equals_numpy_for_any_chunking_and_stride(kind, sigma, boundary):
    """Every chunking and stride, with missing pixels: exactly equal for the Gaussian and cell
    windows (each sample is summed in a fixed order); running box sums and disk prefix sums
    start with each block and tile, and agree to float64 rounding."""
    rng = np.random.default_rng(11)
    image = rng.random((61, 47))
    image[[7, 30, 31, 58], [40, 2, 3, 20]] = np.nan
    image[0, 0] = np.nan  # at the corner, where the boundary mode reads it again
    for window, size, stride in [("gaussian", 1.5, 1), ("gaussian", 1.5, 3), ("box", 8, 8),
                                 ("box", 5, 2), ("disk", 3, 1)]:  # fmt: skip
        kwargs = {"order": 4, "window": window, "size": size, "stride": stride,
                  "boundary": boundary, "cval": 0.5, "nan_policy": "omit", "gradient": kind,
                  "gradient_scale": sigma}  # fmt: skip
        expected = local_fskde(image, **kwargs)
        for chunks in CHUNKINGS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ChunkSizeWarning)  # (9, 52) is below the halo
                lazy = local_fskde(da.from_array(image, chunks=chunks), **kwargs)
            got = lazy.compute()
            if window == "gaussian" or stride >= size:
                np.testing.assert_array_equal(got, expected)
            else:
                np.testing.assert_allclose(got, expected, rtol=0, atol=1e-14)


def test_dask_colour_and_float32_equal_numpy():
    rng = np.random.default_rng(12)
    image = rng.random((3, 50, 41)).astype(np.float32)
    image[1, 20, 20] = np.nan
    kwargs = {"order": 5, "window": "gaussian", "size": 2.0, "stride": 2, "channel_axis": 0,
              "nan_policy": "omit", "gradient": "gaussian", "gradient_scale": 1.3}  # fmt: skip
    expected = local_fskde(image, **kwargs)
    assert expected.dtype == np.complex64
    lazy = local_fskde(da.from_array(image, chunks=(1, 25, 21)), **kwargs)
    np.testing.assert_array_equal(lazy.compute(), expected)


@pytest.mark.parametrize(("kind", "sigma"), WIDE[:2])
def test_tiles_do_not_change_the_result(monkeypatch, kind, sigma):
    """The in-memory face computes each tile's gradients from the tile's own pixels: small
    tiles (many seams) give the same field, bit for bit where sums are not running."""
    rng = np.random.default_rng(14)
    image = rng.random((150, 170)).astype(np.float32)
    image[70:72, 60] = np.nan
    kwargs = {"order": 4, "nan_policy": "omit", "gradient": kind, "gradient_scale": sigma}
    cases = [("gaussian", 2.0, 1), ("gaussian", 1.0, 3), ("box", 4, 4), ("box", 7, 1)]
    wide = {case: local_fskde(image, window=case[0], size=case[1], stride=case[2], **kwargs)
            for case in cases}  # fmt: skip
    monkeypatch.setattr(xfskde.local, "TILE_ROWS", 16)  # four windows tall at least
    monkeypatch.setattr(xfskde.local, "CACHE_BYTES", 1)
    monkeypatch.setattr(xfskde.local, "RING_BYTES", 1)  # 64 columns per tile
    for (window, size, stride), expected in wide.items():
        got = local_fskde(image, window=window, size=size, stride=stride, **kwargs)
        if window == "gaussian" or stride >= size:
            np.testing.assert_array_equal(got, expected)
        else:
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * np.abs(expected).max())


def test_small_chunks_are_merged_for_the_wider_halo():
    image = np.random.default_rng(13).random((40, 40))
    kwargs = {"order": 3, "window": "box", "size": 3, "gradient": "gaussian", "gradient_scale": 2}
    depth = overlap_depth("box", 3, gradient="gaussian", gradient_scale=2)
    assert depth == 1 + 8
    with pytest.warns(ChunkSizeWarning, match=f"overlap depth \\({depth} pixels\\)"):
        lazy = local_fskde(da.from_array(image, chunks=(6, 40)), **kwargs)
    assert min(lazy.chunks[0]) >= depth
    np.testing.assert_allclose(lazy.compute(), local_fskde(image, **kwargs), rtol=0, atol=1e-14)


# ------------------------------------------------------------------- labels, accessor, store


def test_attrs_record_the_operator_and_the_accessor_passes_it(tmp_path):
    image = xr.DataArray(data.camera()[:64, :64], dims=("y", "x"))
    central = image.fskde.coefficients(order=3, window="box", size=3)
    assert central.attrs["gradient"] == "central" and central.attrs["gradient_scale"] == 1.0
    assert central.attrs["angle_convention"].endswith("central differences")
    F = image.fskde.coefficients(order=3, window="box", size=3, gradient="gaussian",
                                 gradient_scale=1.5)  # fmt: skip
    assert F.attrs["gradient"] == "gaussian" and F.attrs["gradient_scale"] == 1.5
    assert F.attrs["angle_convention"].endswith("Gaussian derivatives, sigma = 1.5 pixels")
    np.testing.assert_array_equal(
        F.values,
        local_fskde(image.values, order=3, window="box", size=3, gradient="gaussian",
                    gradient_scale=1.5),
    )  # fmt: skip
    lazy = image.chunk(24).fskde.coefficients(order=3, window="box", size=3, gradient="scharr")
    assert lazy.attrs["gradient"] == "scharr" and lazy.attrs["gradient_scale"] == 1.0
    eager = local_fskde(image.values, order=3, window="box", size=3, gradient="scharr")
    np.testing.assert_allclose(lazy.values, eager, rtol=0, atol=1e-6 * np.abs(eager).max())
    # a store records the operator: a resume with another one is refused
    xfskde.write_coefficients(F, tmp_path / "f.zarr")
    assert xfskde.open_coefficients(tmp_path / "f.zarr").attrs["gradient_scale"] == 1.5
    other = image.fskde.coefficients(order=3, window="box", size=3, gradient="gaussian")
    with pytest.raises(StoreParametersError):
        xfskde.write_coefficients(other, tmp_path / "f.zarr", resume=True)
    with pytest.raises(StoreParametersError):
        xfskde.write_coefficients(central, tmp_path / "f.zarr", resume=True)


# ------------------------------------------------------------------------------- accuracy


def grating_errors(kind: str, sigma: float, period: float) -> float:
    """Largest orientation error (degrees) over 36 grating angles 5° apart, away from the edges.

    The grating cos(ω(x cos α + y sin α)) runs along α + 90°; every operator is separable and
    linear, so its gradient has one direction at every pixel: the error is the operator's bias.
    """
    n, margin = 56, 18  # the window (σ = 3, radius 12) plus the widest stencil (4) from the edge
    y, x = np.mgrid[0:n, 0:n].astype(np.float64)
    worst = 0.0
    for alpha in np.deg2rad(np.arange(0, 180, 5)):
        image = np.cos(2 * np.pi / period * (x * np.cos(alpha) + y * np.sin(alpha)))
        F = local_fskde(image, order=2, window="gaussian", size=3, gradient=kind,
                        gradient_scale=sigma)  # fmt: skip
        omega = orientation(F)[margin:-margin, margin:-margin]
        expected = alpha + np.pi / 2  # the stripes run across the direction of variation
        error = np.abs(np.mod(omega - expected + np.pi / 2, np.pi) - np.pi / 2)
        worst = max(worst, float(error.max()))
    return np.rad2deg(worst)


def test_orientation_error_on_gratings_falls_with_each_operator():
    """Measured (docs/orientation.md): central 1.53°/0.66°/0.37° at periods 8/12/16, Scharr
    0.16°/0.077°/0.044°, Gaussian σ = 1 0.0012°/0.0007°/0.0005°."""
    measured = {
        (kind, period): grating_errors(kind, 1.0, period)
        for kind in ("central", "scharr", "gaussian")
        for period in (8, 12, 16)
    }
    for period in (8, 12, 16):
        # central differences: the series (ω²/24) sin 4α of docs/orientation.md, ±5 %
        series = np.rad2deg((2 * np.pi / period) ** 2 / 24)
        assert measured["central", period] == pytest.approx(series, rel=0.05)
        assert measured["central", period] > 5 * measured["scharr", period]
        assert measured["scharr", period] > 20 * measured["gaussian", period]
    assert 1.45 < measured["central", 8] < 1.6
    assert 0.14 < measured["scharr", 8] < 0.18
    assert 0.06 < measured["scharr", 12] < 0.09 and 0.035 < measured["scharr", 16] < 0.05
    assert measured["gaussian", 8] < 0.005 and measured["gaussian", 16] < 0.002
