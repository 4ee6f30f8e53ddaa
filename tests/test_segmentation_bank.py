"""The filter bank of the "bank" (spectral histogram) feature group, against scipy and skimage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import ndimage as ndi
from skimage.filters import gabor_kernel

from xfskde.datasets import dead_leaves
from xfskde.segmentation._bank import (
    _KERNELS,
    BANK_FILTERS,
    BANK_RADIUS,
    bank_bin_planes,
    bank_bins,
    bank_ranges,
    bank_responses,
    measured_bank_ranges,
)

R = BANK_RADIUS
N = len(BANK_FILTERS)  # 16 filters
LOGS = [(1, 1.0), (2, 2.0), (3, 4.0)]
GABORS = [
    (4 + 4 * i + j, f, d)
    for i, f in enumerate((0.05, 0.14, 0.35))
    for j, d in enumerate((0, 45, 90, 135))
]


def _interior(a: np.ndarray, margin: int = R) -> np.ndarray:
    return a[margin:-margin, margin:-margin]


def _reference_gabor(frequency: float, degrees: int) -> np.ndarray:
    k = gabor_kernel(frequency, theta=math.radians(degrees), bandwidth=1).real
    return k - k.mean()


@pytest.fixture(scope="module")
def image() -> np.ndarray:
    return np.random.default_rng(7).random((96, 128)).astype(np.float32)


def test_names_and_radius():
    assert len(BANK_FILTERS) == N == 16
    assert BANK_FILTERS[:4] == ("intensity", "log1", "log2", "log4")
    assert BANK_FILTERS[4:8] == ("gabor0.05_0", "gabor0.05_45", "gabor0.05_90", "gabor0.05_135")
    assert BANK_FILTERS[8:12] == ("gabor0.14_0", "gabor0.14_45", "gabor0.14_90", "gabor0.14_135")
    assert BANK_FILTERS[12:] == ("gabor0.35_0", "gabor0.35_45", "gabor0.35_90", "gabor0.35_135")
    # the widest support: skimage's Gabor at f = 0.05 (3 sigma of 0.56 / 0.05 px), wider than the
    # LoG at sigma 4 truncated at 4 sigma (16)
    assert BANK_RADIUS == gabor_kernel(0.05, bandwidth=1).shape[0] // 2 == 34


def test_shape_dtype_and_intensity(image):
    r = bank_responses(image, fill=0.0)
    assert r.shape == (96, 128, N) and r.dtype == np.float32
    np.testing.assert_array_equal(r[..., 0], image)


@pytest.mark.parametrize(("channel", "sigma"), LOGS)
def test_log_equals_scipy_gaussian_laplace(image, channel, sigma):
    """Interior responses are scipy's gaussian_laplace · sigma², less its (small) DC: each 1-D
    second-derivative pass has its sum s2 removed in the Gaussian's shape."""
    grey = image.astype(np.float64)
    impulse = np.zeros(81)
    impulse[40] = 1.0
    s2 = ndi.gaussian_filter1d(impulse, sigma, order=2).sum()
    scipy_log = ndi.gaussian_laplace(grey, sigma) * sigma**2
    reference = scipy_log - 2 * s2 * sigma**2 * ndi.gaussian_filter(grey, sigma)
    got = _interior(bank_responses(image, fill=0.0)[..., channel])
    scale = _interior(reference).std()
    np.testing.assert_allclose(got, _interior(reference), rtol=0, atol=1e-5 * scale)
    # the DC correction is a small change of scipy's LoG
    assert np.abs(_interior(scipy_log - reference)).max() < 0.1 * scale


@pytest.mark.parametrize(("channel", "frequency", "degrees"), GABORS)
def test_gabor_equals_direct_correlation(image, channel, frequency, degrees):
    assert BANK_FILTERS[channel] == f"gabor{frequency:g}_{degrees}"
    kernel = _reference_gabor(frequency, degrees)
    reference = ndi.correlate(image.astype(np.float64), kernel)
    got = _interior(bank_responses(image, fill=0.0)[..., channel])
    scale = _interior(reference).std()
    assert scale > 1e-3
    np.testing.assert_allclose(got, _interior(reference), rtol=0, atol=1e-5 * scale)


@pytest.mark.parametrize("shape", [(96, 128), (97, 131), (10, 12)])
def test_constant_image_gives_zero(shape):
    r = bank_responses(np.full(shape, 7.0, dtype=np.float32), fill=7.0)
    np.testing.assert_array_equal(r[..., 0], 7.0)
    np.testing.assert_allclose(r[..., 1:], 0.0, atol=1e-5)


def test_nan_reads_as_fill(image):
    holed = image.copy()
    holed[40:60, 50:90] = np.nan
    holed[:, :5] = np.nan
    filled = image.copy()
    filled[40:60, 50:90] = 0.3
    filled[:, :5] = 0.3
    got = bank_responses(holed, fill=0.3)
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got, bank_responses(filled, fill=0.3))


def test_responses_finite_with_nan_border_and_small_blocks(image):
    padded = np.full((96 + 2 * R, 128 + 2 * R), np.nan, dtype=np.float32)
    padded[R:-R, R:-R] = image
    assert np.isfinite(bank_responses(padded, fill=0.5)).all()
    assert np.isfinite(bank_responses(image[:8, :9], fill=0.5)).all()  # smaller than a kernel
    with pytest.raises(ValueError):
        bank_responses(image, fill=np.nan)
    with pytest.raises(ValueError):
        bank_responses(image[0], fill=0.0)


def test_responses_do_not_depend_on_the_block_cut():
    rng = np.random.default_rng(3)
    full = rng.normal(100.0, 20.0, (200, 240)).astype(np.float32)
    full[120:130, 100:180] = np.nan
    whole = bank_responses(full, fill=100.0)
    y0, y1, x0, x1 = 30, 151, 50, 203  # odd sizes: different FFT padding from the whole
    part = bank_responses(full[y0:y1, x0:x1], fill=100.0)
    expected = whole[y0 + R : y1 - R, x0 + R : x1 - R]
    got = _interior(part)
    scale = _interior(whole).reshape(-1, N).std(axis=0)
    np.testing.assert_array_equal(got[..., 0], expected[..., 0])
    assert np.all(np.abs(got - expected) <= 1e-5 * scale)  # each filter at its own scale


@pytest.mark.parametrize(("frequency", "first"), [(0.05, 4), (0.14, 8), (0.35, 12)])
def test_gabor_orientation_selectivity(frequency, first):
    """A grating along skimage's own wave vector (cos θ, sin θ) in (column, row) coordinates
    at θ = 45° excites gabor{f}_45 and hardly gabor{f}_135 (and vice versa)."""
    y, x = np.mgrid[0:128, 0:128].astype(np.float64)
    for degrees, same, orthogonal in [(45, first + 1, first + 3), (135, first + 3, first + 1)]:
        theta = math.radians(degrees)
        rotx = x * math.cos(theta) + y * math.sin(theta)  # gabor_kernel's rotx
        grating = np.cos(2 * np.pi * frequency * rotx).astype(np.float32)
        energy = (_interior(bank_responses(grating, fill=0.0)) ** 2).mean(axis=(0, 1))
        assert energy[same] > 100 * energy[orthogonal]
        assert energy[same] == energy[4:].max()  # the largest of the Gabor responses


def test_bank_ranges_percentiles_and_flat_filters():
    rng = np.random.default_rng(0)
    r = rng.normal(size=(50, 40, N)).astype(np.float32)
    r[..., 3] = 2.5  # a flat filter
    r[:5, :, 1] = np.nan  # ignored
    ranges = bank_ranges(r, 5.0, 95.0)
    assert len(ranges) == N
    for lo, hi in ranges:
        assert type(lo) is float and type(hi) is float and hi > lo
    flat = r[..., 0].astype(np.float64).ravel()
    assert ranges[0] == pytest.approx(tuple(np.percentile(flat, [5, 95])))
    kept = r[5:, :, 1].astype(np.float64).ravel()
    assert ranges[1] == pytest.approx(tuple(np.percentile(kept, [5, 95])))
    assert ranges[3] == pytest.approx((2.5 - 1.25e-3, 2.5 + 1.25e-3))
    default = bank_ranges(r)
    assert default[2] == pytest.approx(tuple(np.percentile(r[..., 2].ravel(), [1, 99])))
    with pytest.raises(ValueError):
        bank_ranges(r, 50.0, 50.0)
    with pytest.raises(ValueError):
        bank_ranges(np.full((3, N), np.nan))


def test_measured_bank_ranges_are_those_of_the_masked_responses_stacked():
    """The ranges of several blocks' responses at their masked pixels, filter by filter, are
    exactly bank_ranges of those responses stacked (each block's responses never held whole)."""
    rng = np.random.default_rng(1)
    greys = [rng.random((40, 50)).astype(np.float32), rng.random((33, 21)).astype(np.float32)]
    greys[1][:5] = np.nan
    fills = [0.5, float(np.nanmean(greys[1]))]
    masks = [rng.random((40, 50)) > 0.3, np.isfinite(greys[1]) & (rng.random((33, 21)) > 0.5)]
    stacked = np.concatenate(
        [bank_responses(g, f)[m] for g, f, m in zip(greys, fills, masks, strict=True)]
    )
    assert measured_bank_ranges(greys, fills, masks) == bank_ranges(stacked)
    assert measured_bank_ranges(greys, fills, masks, 5.0, 95.0) == bank_ranges(stacked, 5.0, 95.0)
    with pytest.raises(ValueError, match="no finite"):
        measured_bank_ranges(greys, fills, [np.zeros_like(m) for m in masks])


def test_bank_bins_ends_outside_and_nan():
    ranges = tuple((-1.0, 1.0) for _ in range(N))
    values = np.array([-1.0, -0.75, -0.5 + 1e-9, 0.0, 0.999, 1.0, -5.0, 5.0, np.nan, np.inf])
    r = np.repeat(values[:, None], N, axis=1).astype(np.float64)
    bins = bank_bins(r, ranges, 8)
    assert bins.dtype == np.int64 and bins.shape == (10, N)
    expected = [0, 1, 2, 4, 7, 7, 0, 7, 0, 7]
    np.testing.assert_array_equal(bins, np.repeat(np.array(expected)[:, None], N, axis=1))
    # per-filter ranges, on a block of responses
    ranges = tuple((float(i), float(i) + 2.0) for i in range(N))
    offsets = np.array([0.0, 1.0, 1.9])[:, None, None]
    block = (np.arange(N)[None, None, :] + offsets).astype(np.float32)
    bins = bank_bins(block, ranges, 4)
    np.testing.assert_array_equal(bins[:, 0, :], np.array([[0] * N, [2] * N, [3] * N]))
    # a flat filter's widened range bins its value in the middle
    flat = np.full((4, N), 2.5, dtype=np.float32)
    bins = bank_bins(flat, bank_ranges(flat), 10)
    np.testing.assert_array_equal(bins, 5)
    with pytest.raises(ValueError):
        bank_bins(block, ranges, 0)
    with pytest.raises(ValueError):
        bank_bins(block, ranges[:11], 4)


def test_responses_reuse_one_plane_and_equal_2d_transforms(image):
    """The responses are computed into buffers held for the block (no allocation per filter:
    every filtered plane is the same memory) and equal SciPy's 2-D transforms of the same
    padded block to float32 rounding."""
    import scipy.fft

    from xfskde.segmentation._bank import _filtered, _spectra

    planes, first = [], None
    for i, plane in enumerate(_filtered(image, 0.25)):
        if i == 1:
            first = plane
        elif i > 1:
            assert np.shares_memory(plane, first)
        planes.append(plane[: image.shape[0], : image.shape[1]].copy())
    shape = (scipy.fft.next_fast_len(96, real=True), scipy.fft.next_fast_len(128, real=True))
    padded = np.full(shape, 0.25 - image.mean(dtype=np.float64), np.float32)
    padded[:96, :128] = image - np.float32(image.mean(dtype=np.float64))
    transform = scipy.fft.rfft2(padded)
    for plane, spectrum in zip(planes[1:], _spectra(shape), strict=True):
        expected = scipy.fft.irfft2(transform * spectrum, s=shape)[:96, :128]
        np.testing.assert_allclose(plane, expected, rtol=0, atol=2e-7)


def test_bin_planes_are_the_bins_of_the_exact_responses(image):
    """The segmentation path (each response binned as it comes, uint8 planes) gives, in the
    block's interior, the bins of the direct correlation (in float64, NaN read as the fill),
    NaN pixels and values beyond the ranges included: the responses of the transforms decide
    a bin except within their rounding of its edges, where the direct correlation does.
    Elsewhere they are the bins of the public responses (all but a few near edges)."""
    grey = image.copy()
    grey[:5, :9] = np.nan
    grey[40, 40] = 3.0  # far above the intensity range
    responses = bank_responses(grey, 0.5)
    ranges = bank_ranges(responses[10:-10, 10:-10], 5.0, 95.0)
    filled = np.where(np.isfinite(grey), grey, np.float32(0.5)).astype(np.float64)
    exact = np.stack(
        [filled] + [ndi.correlate(filled, k, mode="constant", cval=0.5) for k in _KERNELS], -1
    )
    inner = (slice(None), slice(R, -R), slice(R, -R))
    for n_bins in (1, 11, 300):
        planes = bank_bin_planes(grey, 0.5, ranges, n_bins)
        assert planes.shape == (N, *grey.shape)
        assert planes.dtype == (np.uint8 if n_bins <= 256 else np.int64)
        expected = np.moveaxis(bank_bins(exact, ranges, n_bins), -1, 0)
        np.testing.assert_array_equal(planes[inner], expected[inner])
        through = np.moveaxis(bank_bins(responses, ranges, n_bins), -1, 0)
        assert np.mean(planes != through) < 1e-4
    assert bank_bin_planes(grey, 0.5, ranges, 11)[0, 40, 40] == 10
    with pytest.raises(ValueError):
        bank_bin_planes(grey, 0.5, ranges[:11], 11)
    with pytest.raises(ValueError):
        bank_bin_planes(grey, 0.5, ranges, 0)


def test_bins_of_a_block_do_not_depend_on_where_it_is_cut():
    """A block's interior has the bins the whole image gives its pixels, bit for bit: the
    transforms' rounding (which depends on the whole block) is not left to decide a response
    that lies within it of a bin edge. Cut from this image of dead leaves at (100, 50), a
    block's bins differed from the whole image's at two pixels before."""
    grey = dead_leaves((512, 512), seed=2)[0].mean(-1).astype(np.float32)
    ranges = bank_ranges(bank_responses(grey, 0.5)[R:-R, R:-R])
    whole = bank_bin_planes(grey, 0.5, ranges, 11)
    for top, left, h, w in [(100, 50, 300, 330), (80, 90, 220, 410), (0, 0, 512, 300)]:
        block = bank_bin_planes(grey[top : top + h, left : left + w], 0.5, ranges, 11)
        np.testing.assert_array_equal(
            block[:, R:-R, R:-R], whole[:, top + R : top + h - R, left + R : left + w - R]
        )


def test_the_spectra_cache_is_held_to_its_bytes(monkeypatch):
    """Spectra are kept for shapes seen before, the least recently used forgotten beyond
    SPECTRA_CACHE_BYTES, the last one always kept."""
    from xfskde.segmentation import _bank

    monkeypatch.setattr(_bank, "_spectra_cache", type(_bank._spectra_cache)())
    first = _bank._spectra((64, 64))
    assert _bank._spectra((64, 64)) is first  # cached
    held = sum(a.nbytes for a in first) + sum(a.nbytes for a in _bank._build_spectra((72, 72)))
    monkeypatch.setattr(_bank, "SPECTRA_CACHE_BYTES", held)  # 64² and 72², not 60² too
    _bank._spectra((64, 64))  # now the most recent
    second = _bank._spectra((60, 60))
    assert list(_bank._spectra_cache) == [(64, 64), (60, 60)]
    _bank._spectra((64, 64))
    _bank._spectra((72, 72))  # over the budget: (60, 60), the least recently used, goes
    assert list(_bank._spectra_cache) == [(64, 64), (72, 72)]
    assert _bank._spectra((60, 60)) is not second and np.array_equal(
        _bank._spectra((60, 60))[3], second[3]
    )
    monkeypatch.setattr(_bank, "SPECTRA_CACHE_BYTES", 0)
    _bank._spectra((80, 80))
    assert list(_bank._spectra_cache) == [(80, 80)]  # the last shape stays


@pytest.mark.parametrize("shape", [(540, 540), (96, 128), (30, 50), (7, 9), (1, 5)])
def test_spectra_are_the_2d_transforms_of_the_wrapped_kernels(shape):
    """Each filter's spectrum, built from its kernel's separable factors, is scipy's rfft2 of
    the whole plane with the kernel wrapped into it, to float64 rounding (1e-10 of the largest
    value): as float32, within one unit in the last place wherever the value is not next to
    zero (below 1e-6 of the largest: there both are rounding noise) — blocks larger
    than the kernels, and smaller ones whose rows and columns the kernel covers several times
    (summed)."""
    import scipy.fft

    from xfskde.segmentation._bank import _FACTORS, _KERNELS, _build_spectra

    assert [len(f) for f in _FACTORS] == [2, 2, 2] + [2, 3, 2, 3] * 3  # LoGs, Gabors 0-135°
    h, w = shape
    for kernel, spectrum in zip(_KERNELS, _build_spectra(shape), strict=True):
        ry, rx = kernel.shape[0] // 2, kernel.shape[1] // 2
        grid = np.zeros(shape, dtype=np.float64)
        rows, cols = np.arange(-ry, ry + 1) % h, np.arange(-rx, rx + 1) % w
        np.add.at(grid, (rows[:, None], cols[None, :]), kernel)
        exact = scipy.fft.rfft2(grid, workers=1).real
        assert spectrum.shape == (h, w // 2 + 1) and spectrum.dtype == np.float32
        np.testing.assert_allclose(spectrum, exact, rtol=1e-6, atol=1e-10 * np.abs(exact).max())
        expected = exact.astype(np.float32)
        away = np.abs(exact) > 1e-6 * np.abs(exact).max()
        ulps = np.abs(spectrum.view(np.int32).astype(np.int64) - expected.view(np.int32))
        assert ulps[away].max() <= 1


def test_spectra_asked_by_two_threads_at_once_are_built_once(monkeypatch):
    """Two threads that ask for the spectra of a new shape at the same time (a fit's first two
    tiles, one per Dask worker) get the same spectra, built by one of them: the other waits
    for them rather than building them too; a build that fails leaves the shape to the next
    thread that asks."""
    import threading

    from xfskde.segmentation import _bank

    monkeypatch.setattr(_bank, "_spectra_cache", type(_bank._spectra_cache)())
    builds, started, go = [], threading.Event(), threading.Event()
    build = _bank._build_spectra

    def slow_build(shape):
        builds.append(shape)
        started.set()
        go.wait(10)  # the second thread asks while this one builds
        return build(shape)

    monkeypatch.setattr(_bank, "_build_spectra", slow_build)
    got = [None, None]

    def ask(i):
        got[i] = _bank._spectra((48, 40))

    first = threading.Thread(target=ask, args=(0,))
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=ask, args=(1,))
    second.start()
    second.join(0.3)
    assert second.is_alive()  # waiting for the first's build
    go.set()
    first.join(10)
    second.join(10)
    assert builds == [(48, 40)]
    assert got[0] is got[1] and len(got[0]) == N - 1

    def failing(shape):
        raise MemoryError("no room")

    monkeypatch.setattr(_bank, "_build_spectra", failing)
    with pytest.raises(MemoryError):
        _bank._spectra((20, 20))
    monkeypatch.setattr(_bank, "_build_spectra", build)
    assert len(_bank._spectra((20, 20))) == N - 1  # built by the next caller
    assert not _bank._spectra_building


def test_freed_memory_goes_back_to_the_system():
    import platform

    from xfskde._memory import release_free_memory

    assert release_free_memory() is (platform.libc_ver()[0] == "glibc")


def test_a_fit_leaves_no_spectra_for_the_labels():
    """The filters' spectra of a fit's crops and tiles are forgotten when it ends: the labels'
    blocks have other shapes (the fit of a masked slide left 96 MiB of them)."""
    import xfskde.segmentation._bank as bank
    from xfskde.datasets import texture_mosaic
    from xfskde.segmentation import fit_textures

    picture, _ = texture_mosaic((256, 256), n_regions=3, seed=3)
    model = fit_textures(picture, 3)
    assert "bank" in model.spec.features or "bank" in model.choices.get("groups", "")
    assert not bank._spectra_cache
    bank_responses(np.zeros((40, 40), np.float32), 0.0)
    assert len(bank._spectra_cache) == 1
    bank.forget_spectra()
    assert not bank._spectra_cache
