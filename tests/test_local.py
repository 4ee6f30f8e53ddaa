"""Local FS-KDE fields against a per-pixel brute-force KDE, the paper's cells and rot90."""

import numpy as np
import pytest
import xarray as xr
from _brute_force import local_fskde_reference, padded_gradient
from skimage import data

from xfskde import Cos2KKernel, Window, fskde, local_fskde, overlap_depth, rotate
from xfskde.exceptions import ParameterError
from xfskde.local import LocalParameters, local_fskde_block, sample_count, sample_offset

WINDOWS = [
    ("box", 5),
    ("box", 4),
    ("box", 1),
    ("box", 2),
    ("gaussian", 1.3),
    ("gaussian", 0.6),
    ("disk", 2.5),
    ("disk", 1),
]
MODES = ["reflect", "mirror", "nearest", "wrap", "constant"]


@pytest.fixture(scope="module")
def camera() -> np.ndarray:
    return data.camera()[200:328, 160:288].astype(np.float64)  # 128 × 128, textured


@pytest.mark.parametrize(("window", "size"), [*WINDOWS, ("disk", 3.5), ("gaussian", 2.0)])
def test_window_tables_are_the_documented_windows(window, size):
    """The φ tables the brute force uses, against their definitions (so it cannot share a bug)."""
    phi = Window(window, size).weights()
    assert phi.sum() == pytest.approx(1.0, rel=1e-14) and np.all(phi >= 0)
    if window == "box":
        assert phi.shape == (size, size)
        np.testing.assert_allclose(phi, 1 / size**2, rtol=1e-15)
        assert (Window(window, size).before, Window(window, size).after) == (
            (size - 1) // 2,
            size // 2,
        )
    elif window == "gaussian":
        r = int(np.ceil(4 * size))
        x = np.arange(-r, r + 1)
        g = np.exp(-(x**2) / (2 * size**2))
        np.testing.assert_allclose(phi, np.outer(g, g) / g.sum() ** 2, rtol=1e-14)
    else:
        r = int(np.floor(size))
        dy, dx = np.mgrid[-r : r + 1, -r : r + 1]
        inside = dy**2 + dx**2 <= size**2
        np.testing.assert_allclose(phi, inside / inside.sum(), rtol=1e-15)


def test_a_windows_effective_area_is_what_its_mean_of_noise_says(rng):
    """1 / Σφ²: the side² of a box, the pixels of a disk, 4πσ² for a Gaussian (the continuous
    one's; within 0.1 % from σ = 2); and what white noise says: the variance of its windowed
    mean (scipy's Gaussian filter, an independent one) times the area is 1."""
    from scipy import ndimage

    assert Window("box", 7).effective_area == pytest.approx(49, rel=1e-12)
    half = Window("disk", 3.5).half_widths()
    assert Window("disk", 3.5).effective_area == pytest.approx(np.sum(2 * half + 1), rel=1e-12)
    for sigma in (2.0, 6.0, 19.5):
        area = Window("gaussian", sigma).effective_area
        assert area == pytest.approx(4 * np.pi * sigma**2, rel=1e-3)
    noise = rng.normal(size=(1024, 1024))
    mean = ndimage.gaussian_filter(noise, 6.0, mode="wrap")
    assert mean.var() * Window("gaussian", 6.0).effective_area == pytest.approx(1.0, rel=0.03)


@pytest.mark.parametrize(("window", "size"), WINDOWS)
@pytest.mark.parametrize("stride", [1, 2, 3, 8])
def test_equals_brute_force_kde(rng, window, size, stride):
    for shape, boundary in zip([(17, 13), (12, 19)] * 3, MODES, strict=False):
        image = rng.random(shape)
        F = local_fskde(
            image, order=3, window=window, size=size, stride=stride, boundary=boundary, cval=0.3
        )
        expected = local_fskde_reference(
            image, 3, window, size, stride, boundary, cval=0.3, approximation="exact"
        )
        assert F.shape == expected.shape and F.dtype == np.complex128
        assert F.shape[:2] == (sample_count(shape[0], stride), sample_count(shape[1], stride))
        np.testing.assert_allclose(F, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("boundary", MODES)
def test_every_boundary_mode_equals_brute_force_for_every_window(rng, boundary):
    image = rng.random((12, 19))
    for window, size in [("box", 6), ("box", 3), ("gaussian", 1.0), ("disk", 2)]:
        for stride in (1, 3):
            F = local_fskde(
                image, order=2, window=window, size=size, stride=stride, boundary=boundary, cval=-2
            )
            expected = local_fskde_reference(image, 2, window, size, stride, boundary, cval=-2)
            np.testing.assert_allclose(F, expected, rtol=0, atol=1e-10)


def test_higher_orders_equal_brute_force(rng):
    image = rng.random((11, 10))
    for order, approximation in [(12, "exact"), (45, "normal")]:
        F = local_fskde(image, order=order, window="gaussian", size=1.5)
        expected = local_fskde_reference(image, order, "gaussian", 1.5, approximation=approximation)
        np.testing.assert_allclose(F, expected, rtol=0, atol=1e-12)


def test_windows_larger_than_the_image(rng):
    image = rng.random((5, 4))
    for window, size, boundary in [
        ("gaussian", 3.0, "reflect"),
        ("box", 11, "mirror"),
        ("disk", 6, "wrap"),
        ("box", 9, "nearest"),
    ]:
        F = local_fskde(image, order=2, window=window, size=size, boundary=boundary)
        expected = local_fskde_reference(image, 2, window, size, 1, boundary)
        np.testing.assert_allclose(F, expected, rtol=0, atol=1e-12)


def test_sampling_grid():
    assert [sample_offset(s) for s in (1, 2, 3, 8)] == [0, 0, 1, 3]
    assert sample_count(2048, 8) == 256 and sample_count(13, 8) == 2 and sample_count(3, 8) == 0
    assert sample_count(10, 1) == 10 and sample_count(10, 3) == 3 and sample_count(11, 3) == 4
    for n in range(1, 40):
        for s in (1, 2, 3, 5, 8):
            # the samples are the grid rows i*s + o that fall inside the image
            assert sample_count(n, s) == len(range(sample_offset(s), n, s))
    F = local_fskde(np.zeros((13, 17)), order=2, window="box", size=8, stride=8)
    assert F.shape == (2, 2, 3)


@pytest.mark.parametrize(
    ("window", "size"), [("box", 5), ("box", 8), ("gaussian", 1.5), ("disk", 3)]
)
@pytest.mark.parametrize("stride", [2, 3, 8])
def test_strided_output_samples_the_dense_field(rng, window, size, stride):
    image = rng.random((29, 34))
    dense = local_fskde(image, order=4, window=window, size=size)
    F = local_fskde(image, order=4, window=window, size=size, stride=stride)
    o = sample_offset(stride)
    np.testing.assert_allclose(F, dense[o::stride, o::stride], rtol=0, atol=1e-13)


@pytest.mark.parametrize("shape", [(32, 24), (30, 21)])
def test_box_cells_are_the_fskde_of_each_cell(rng, shape):
    image = rng.random(shape)
    F = local_fskde(image, order=8, window="box", size=8, stride=8)
    assert F.shape == (-(-shape[0] // 8), -(-shape[1] // 8), 9)
    # the last cells of a 30 × 21 image reach past its edge and read it through "reflect"
    gx, gy = padded_gradient(image, 8)
    angles, weights = np.arctan2(gy, gx)[7:, 7:], np.hypot(gx, gy)[7:, 7:]
    for i in range(F.shape[0]):
        for j in range(F.shape[1]):
            cell = np.s_[8 * i : 8 * i + 8, 8 * j : 8 * j + 8]
            expected = fskde(angles[cell].ravel(), weights[cell].ravel(), order=8)
            assert angles[cell].size == 64  # fskde's 1/N is the box's 1/64
            np.testing.assert_allclose(F[i, j], expected, rtol=0, atol=1e-13)


def test_one_cell_written_out():
    """F_k = H_k / 64 Σ_{8×8 cell} |g| e^{-ik arg g} for a hand-made cell."""
    image = np.zeros((8, 8))
    image[:, 4:] = 1.0  # one vertical edge: g = 1/2 at columns 3 and 4, angle 0
    F = local_fskde(image, order=5, window="box", size=8, stride=8, boundary="nearest")
    H = Cos2KKernel(5).coefficients
    np.testing.assert_allclose(F[0, 0], H * 16 * 0.5 / 64, rtol=1e-15, atol=0)


def rot90_reference(F: np.ndarray, turns: int) -> np.ndarray:
    """Where np.rot90 moves pixels, and what it does to angles, written out index by index.

    np.rot90(a)[i, j] = a[j, n - 1 - i] for an (m, n) array: one counter-clockwise turn as
    displayed. The gradient turns with the picture, and since angles are measured from +x
    (columns) towards +y (rows, downwards), a counter-clockwise turn subtracts π/2 from each.
    """
    for _ in range(turns % 4):
        m, n = F.shape[:2]
        i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
        F = rotate(F[j, n - 1 - i], -np.pi / 2)
    return F


def test_rot90_reference_index_rule():
    a = np.arange(12).reshape(3, 4)
    i, j = np.meshgrid(np.arange(4), np.arange(3), indexing="ij")
    np.testing.assert_array_equal(np.rot90(a), a[j, 3 - i])


@pytest.mark.parametrize(
    ("window", "size", "boundary"),
    [
        ("box", 7, "reflect"),
        ("box", 1, "wrap"),
        ("gaussian", 2.0, "reflect"),
        ("gaussian", 1.0, "mirror"),
        ("disk", 4, "reflect"),
        ("disk", 2.5, "nearest"),
        ("box", 5, "constant"),
    ],
)
def test_exact_equivariance_under_rot90(camera, window, size, boundary):
    image = camera[:, :120]  # not square, so rows and columns cannot be confused
    F = local_fskde(image, order=6, window=window, size=size, boundary=boundary, cval=50)
    scale = np.abs(F).max()
    for turns in (1, 2, 3):
        rotated = local_fskde(
            np.rot90(image, turns), order=6, window=window, size=size, boundary=boundary, cval=50
        )
        expected = rot90_reference(F, turns)
        assert rotated.shape == expected.shape
        np.testing.assert_allclose(rotated, expected, rtol=0, atol=1e-12 * scale)
        # the same rule in numpy's words: rotate the field's axes and its angles
        np.testing.assert_allclose(
            rotated, rotate(np.rot90(F, turns), -turns * np.pi / 2), rtol=0, atol=1e-12 * scale
        )


def test_rot90_would_fail_with_the_opposite_angle_sign(camera):
    F = local_fskde(camera, order=3, window="box", size=5)
    rotated = local_fskde(np.rot90(camera), order=3, window="box", size=5)
    wrong = rotate(np.rot90(F), +np.pi / 2)
    assert np.abs(rotated - wrong).max() > 0.1 * np.abs(F[..., 1]).max()


@pytest.mark.parametrize(
    ("window", "size", "stride"),
    [("box", 9, 1), ("box", 8, 8), ("box", 4, 3), ("gaussian", 2.0, 1), ("disk", 3, 2)],
)
def test_float32_gives_complex64_close_to_float64(camera, window, size, stride):
    image = camera[:40, :33] / 255
    F32 = local_fskde(image.astype(np.float32), order=8, window=window, size=size, stride=stride)
    F64 = local_fskde(image, order=8, window=window, size=size, stride=stride)
    assert F32.dtype == np.complex64 and F64.dtype == np.complex128
    assert F32.shape == F64.shape
    np.testing.assert_allclose(F32, F64, rtol=0, atol=2e-6 * np.abs(F64).max())


@pytest.mark.parametrize(("window", "size"), WINDOWS)
@pytest.mark.parametrize("boundary", MODES)
def test_flat_image_gives_exact_zeros(window, size, boundary):
    for value, dtype in [(0, np.float64), (3.5, np.float32), (200, np.uint8)]:
        image = np.full((15, 11), value, dtype=dtype)
        for stride in (1, 2):
            F = local_fskde(
                image, order=5, window=window, size=size, stride=stride, boundary=boundary,
                cval=value,
            )  # fmt: skip
            assert not np.isnan(F).any()
            assert np.all(F == 0)


def test_integer_images_match_their_float_conversion(rng):
    image = np.zeros((16, 16), dtype=np.uint8)
    image[:, 8:] = 255
    image[5, 3] = 255
    F = local_fskde(image, order=4, window="box", size=5)
    assert F.dtype == np.complex64
    G = local_fskde(image.astype(np.float32), order=4, window="box", size=5)
    np.testing.assert_array_equal(F, G)
    # the 0 -> 255 edge: two columns of |g| = 127.5 in a 5x5 box, times H_0 (not a wrapped 0.5)
    np.testing.assert_allclose(F[8:12, 7:9, 0].real, 2 * 5 * 127.5 / 25 / (2 * np.pi), rtol=1e-6)
    np.testing.assert_allclose(F, local_fskde_reference(image, 4, "box", 5), rtol=0, atol=1e-4)
    for dtype, top in [(np.uint8, 255), (np.uint16, 65535), (np.int64, 10**6)]:
        noisy = rng.integers(0, top, (14, 13), endpoint=True).astype(dtype)
        F = local_fskde(noisy, order=3, window="disk", size=2, stride=2)
        expected = local_fskde_reference(noisy, 3, "disk", 2, 2)
        assert F.dtype == (np.complex128 if dtype == np.int64 else np.complex64)
        np.testing.assert_allclose(F, expected, rtol=0, atol=1e-6 * np.abs(expected).max())


@pytest.mark.parametrize("channel_axis", [-1, 0])
def test_colour_images_equal_brute_force(rng, channel_axis):
    channels = rng.random((14, 15, 3)) * np.array([1.0, 1.3, 1.7])
    image = channels if channel_axis == -1 else np.moveaxis(channels, -1, 0)
    F = local_fskde(image, order=3, window="box", size=3, channel_axis=channel_axis, stride=2)
    expected = local_fskde_reference(channels, 3, "box", 3, 2, channel_axis=-1)
    np.testing.assert_allclose(F, expected, rtol=0, atol=1e-12)
    grey = local_fskde(channels[..., 1], order=3, window="box", size=3, stride=2)
    assert not np.allclose(F, grey)


@pytest.mark.parametrize("approximation", ["exact", "auto"])
def test_truncation_keeps_the_first_coefficients(rng, approximation):
    image = rng.random((20, 20))
    for window, size in [("box", 5), ("gaussian", 1.5), ("disk", 2)]:
        kwargs = {"order": 64, "window": window, "size": size, "approximation": approximation}
        full = local_fskde(image, **kwargs)
        cut = local_fskde(image, eps=1e-5, **kwargs)
        assert full.shape[-1] == 65 and cut.shape[-1] == 28
        np.testing.assert_allclose(cut, full[..., :28], rtol=0, atol=1e-14)


def test_nan_policy_equals_brute_force_with_omitted_gradients(rng):
    image = rng.random((12, 13))
    image[6, 6] = np.nan
    image[0, 11] = np.inf
    with pytest.raises(ValueError, match="nan_policy"):
        local_fskde(image, order=3, window="box", size=3)
    for window, size, stride in [("box", 3, 1), ("gaussian", 1.0, 2), ("disk", 2, 1)]:
        F = local_fskde(image, order=3, window=window, size=size, stride=stride, nan_policy="omit")
        # NaN only at the samples of the two missing pixels: no value there, not "no gradient"
        lost = {(y, x) for y, x in [(6, 6), (0, 11)] if (y - (stride - 1) // 2) % stride == 0
                and (x - (stride - 1) // 2) % stride == 0}  # fmt: skip
        missing = {(i * stride + (stride - 1) // 2, j * stride + (stride - 1) // 2)
                   for i, j in np.argwhere(~np.isfinite(F).all(axis=-1))}  # fmt: skip
        assert missing == lost and np.isnan(F[~np.isfinite(F).all(axis=-1)]).all()
        expected = local_fskde_reference(image, 3, window, size, stride, omit_nan=True)
        np.testing.assert_allclose(F, expected, rtol=0, atol=1e-12)
    clean = image.copy()
    clean[6, 6] = clean[0, 11] = 0.0
    F = local_fskde(image, order=3, window="box", size=3, nan_policy="omit")
    G = local_fskde(clean, order=3, window="box", size=3)
    np.testing.assert_array_equal(F[:3, :3], G[:3, :3])  # far from the holes: unchanged


def test_overlap_depth_is_enough_for_a_block(camera):
    """A block holding the samples plus overlap_depth pixels gives the whole image's values."""
    assert overlap_depth("box", 15) == 8
    assert overlap_depth("box", 8) == 5
    assert overlap_depth("gaussian", 4) == 17
    assert overlap_depth("disk", 3.5) == 4
    for window, size in [("box", 7), ("gaussian", 1.5), ("disk", 3)]:
        params = LocalParameters(order=4, window=window, size=size, stride=1)
        d = params.depth
        assert d == overlap_depth(window, size) == params.window.radius + 1
        full = local_fskde(camera, order=4, window=window, size=size)
        r0, r1, c0, c1 = 40, 60, 50, 75
        block = camera[None, r0 - d : r1 + d, c0 - d : c1 + d]
        out = local_fskde_block(
            block, params, image_shape=camera.shape, src_origin=(r0 - d, c0 - d),
            rows=(r0, r1), cols=(c0, c1),
        )  # fmt: skip
        np.testing.assert_allclose(out, full[r0:r1, c0:c1], rtol=0, atol=1e-12)
        with pytest.raises(ValueError, match="overlap depth"):
            local_fskde_block(
                block[:, 1:, 1:], params, image_shape=camera.shape,
                src_origin=(r0 - d + 1, c0 - d + 1), rows=(r0, r1), cols=(c0, c1),
            )  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"order": 0}, ValueError, "order"),
        ({"order": 2.5}, ValueError, "order"),
        ({"order": 3, "eps": 1.5}, ValueError, "eps"),
        ({"order": 3, "eps": 0}, ValueError, "eps"),
        ({"order": 3, "window": "triangle"}, ValueError, "window"),
        ({"order": 3, "size": 0}, ValueError, "size"),
        ({"order": 3, "size": -2}, ValueError, "size"),
        ({"order": 3, "size": np.nan}, ValueError, "size"),
        ({"order": 3, "size": "big"}, TypeError, "size"),
        ({"order": 3, "window": "box", "size": 2.5}, ValueError, "size"),
        ({"order": 3, "stride": 0}, ValueError, "stride"),
        ({"order": 3, "stride": -1}, ValueError, "stride"),
        ({"order": 3, "stride": 1.5}, TypeError, "stride"),
        ({"order": 3, "boundary": "periodic"}, ValueError, "boundary"),
        ({"order": 3, "nan_policy": "propagate"}, ValueError, "nan_policy"),
        ({"order": 3, "approximation": "taylor"}, ValueError, "approximation"),
    ],
)
def test_bad_parameters_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        local_fskde(np.zeros((8, 8)), **kwargs)
    if error is ValueError:  # xfskde's own: a ParameterError, which a caller can catch
        with pytest.raises(ParameterError):
            local_fskde(np.zeros((8, 8)), **kwargs)


def test_parameters_the_image_cannot_hold_are_refused_before_any_allocation():
    """size=1e6 asked NumPy for petabytes of padding (MemoryError), order=10**6 for a 244 GiB
    field, stride=1000 on 128² returned an empty (0, 0, 5) field without a word: each is a
    ParameterError naming the parameter and the image, a DataArray's and a colour image's too."""
    image = np.zeros((128, 96))
    with pytest.raises(
        ParameterError, match=r"size 1000000.0 is a window wider than this 128 x 96"
    ):
        local_fskde(image, order=4, size=1e6)
    with pytest.raises(ParameterError, match=r"order 10000000: .* would take 1,831 GiB"):
        local_fskde(image, order=10**7)
    with pytest.raises(ParameterError, match=r"stride 1000 places no sample .*at most 192"):
        local_fskde(xr.DataArray(image, dims=("y", "x")), order=4, stride=1000)
    with pytest.raises(ParameterError, match="stride 300 places no sample"):
        local_fskde(np.zeros((3, 128, 96)), order=4, stride=300, channel_axis=0)
    assert local_fskde(image, order=4, stride=192).shape == (1, 1, 5)  # one cell: its centre


def test_bad_dims():
    with pytest.raises(ValueError, match="channel_axis"):
        local_fskde(np.zeros((8, 8, 3)), order=2)
    with pytest.raises(ValueError, match="channel_axis"):
        local_fskde(np.zeros((8, 8)), order=2, channel_axis=-1)
    with pytest.raises(TypeError, match="dtype"):
        local_fskde(np.zeros((8, 8), complex), order=2)


def test_a_kernel_can_be_passed_as_the_order():
    """Callers that start from a descriptor length pass the kernel itself (no (order, eps)
    round trip); eps and approximation then belong to the kernel and are not taken twice."""
    image = np.random.default_rng(5).random((40, 33)).astype(np.float32)
    kernel = Cos2KKernel.for_length(5)
    by_kernel = local_fskde(image, order=kernel, window="box", size=4, stride=4)
    by_order = local_fskde(
        image, order=kernel.order, eps=kernel.eps, window="box", size=4, stride=4
    )
    assert by_kernel.shape[-1] == 5
    np.testing.assert_array_equal(by_kernel, by_order)
    with pytest.raises(ValueError, match="eps"):
        local_fskde(image, order=kernel, eps=1e-3)
