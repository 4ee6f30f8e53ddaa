"""The filter bank of the "bank" feature group: spectral histograms of texture.

A spectral histogram (Liu & Wang 2002, "A computational approach to texture segmentation /
spectral histogram") describes the texture around a pixel by the local histograms of the
responses of a small fixed bank of filters; factorization-based segmentation (Yuan, Wang & Li
2015) unmixes such features into pure textures and per-pixel weights. This module computes the
responses of one image block to the 16 filters of :data:`BANK_FILTERS` and turns them into bin
indices; the windowing is done elsewhere (:mod:`._filters`).

* ``intensity``: the pixel value itself (the identity filter);
* ``log1``, ``log2``, ``log4``: the Laplacian of Gaussian at sigma 1, 2 and 4 px, built as
  :func:`scipy.ndimage.gaussian_laplace` builds it (the sum of second-derivative-of-Gaussian
  passes, truncated at 4 sigma) and scale-normalised (times sigma²);
* ``gabor{f}_{θ}``: the real (even, cosine) part of :func:`skimage.filters.gabor_kernel` at
  spatial frequency f ∈ {0.05, 0.14, 0.35} cycles/px (periods of 20, 7 and 3 px, about 1.4
  octaves apart) and orientation θ ∈ {0, 45, 90, 135} degrees
  (``bandwidth=1``, so sigma ≈ 0.56/f px, and skimage's extent of 3 sigma), in skimage's
  convention: θ is the direction of the harmonic's wave vector ``(cos θ, sin θ)`` in (column,
  row) coordinates, rows counted downwards.

**Why these frequencies** (measured on mosaics of real textures, :mod:`xfskde.datasets.mosaics`,
three seeds of the fit each): the first bank had Gabors at 0.1 and 0.2 cycles/px, and brick,
whose elements are 30 × 100 px, varied more inside itself than grass and gravel differed;
a period of 20 px (f = 0.05) sees that structure. Tuning split: 0.1, 0.2 -> 0.868 Rand;
0.06, 0.2 -> 0.895; 0.05, 0.1, 0.2 -> 0.887; 0.05, 0.1, 0.2, 0.35 -> 0.889; 0.05, 0.14, 0.35 ->
**0.898** (kept); six orientations instead of four lost (0.870). Held-out split, not tuned on:
0.891 -> 0.916, mosaics below 0.8 from 9 of 72 segmentations to 2. Dead leaves and random
textures unchanged (0.968-0.977, 0.990).

Every filter but ``intensity`` has zero mean: a flat patch gives a zero response whatever its
level. The Gabor kernels have their mean removed; the discrete, truncated LoG does not quite sum
to zero, so each of its 1-D second-derivative passes has its sum removed in the Gaussian's
shape (``g2 - sum(g2) g0``), which moves a response from scipy's by ``-2 sum(g2) sigma²`` times
the Gaussian-smoothed image (about 1e-3 of the local mean at sigma 4).

**Linear in the window.** A local histogram is the window applied to one-hot vote planes (one
plane per bin, a pixel voting 1 in the bin of its response): a mean of votes, linear in the
window. So a window straddling two textures sees the weighted mix of their histograms, which
is what the unmixing assumes, and the histograms need only the bin indices that
:func:`bank_bins` returns.

**Why the FFT.** The Gabor kernels at f = 0.05 span 69 px and are not separable at 45° and 135°,
so direct correlation would cost over a thousand multiply-adds per pixel and filter. Instead
the block is transformed once (zero-padded to a fast size) and each filter costs one product
with its precomputed spectrum and one inverse transform. The spectra are built for each padded
block shape and cached. The transforms run on one thread (``workers=1``): they run inside
single-threaded Dask tasks.

**No allocation per filter.** Each 2-D transform is done as two 1-D passes into buffers held
for the whole block: along the rows by :func:`scipy.fft.rfft` (once per block: NumPy's took 4.7
ms on a 1152² float32 plane, SciPy's 1.25 ms) and :func:`numpy.fft.irfft` with ``out=``, along
the columns by :func:`scipy.fft.fft` / :func:`scipy.fft.ifft` in place (``overwrite_x``), and
every response is written into the same plane. A transform that
allocates its result and its scratch (:func:`scipy.fft.irfft2`) costs nothing more where the C
allocator reuses freed memory, but Dask's distributed workers are started with
``MALLOC_TRIM_THRESHOLD_=65536``, which makes glibc map every allocation above 128 KiB afresh
and fault in its pages: there the 15 inverse transforms of a 600² block took 28.7 ms instead
of 19.1 ms (with the buffers: 17.5 and 17.1 ms), and a whole block's votes 0.104 s instead of
0.074 s.

**Missing pixels.** NaN (and ±inf) pixels are read as the constant ``fill`` by every filter,
``intensity`` included, and so is the padding up to the fast size. The rule is a property of
the pixel alone, so the responses do not depend on how an image is cut into blocks: a pixel at
least :data:`BANK_RADIUS` from every edge of a block gets exactly (to float32 precision) the
response of a direct correlation of the whole image, NaN read as ``fill``. Pixels nearer the
edge read wrapped-around values and are inexact (but finite); a caller pads a block by
:data:`BANK_RADIUS` and uses only its interior.

**Bins that do not depend on the block.** "To float32 precision" is not enough for a bin: the
transforms' rounding depends on the whole block (its size, its mean), so a response within
that rounding of an edge between two bins fell on one side of it in one block and on the
other in another, and labels changed with the chunking (five pixels of a 512² image of dead
leaves with 128² chunks). :func:`bank_bin_planes` bounds that rounding (:func:`_rounding`,
:data:`ROUNDING_FACTOR`) and, where a response of the block's interior lies within it of an
edge, bins the direct correlation instead (float64, the taps in one order whatever the
block). So the bins of a pixel are the same in every block whose interior holds it, bit for
bit. With 11 bins per filter, 3.5e-4 to 7e-4 of the responses of 1024² images of dead
leaves, random textures and a mosaic of real textures lie that near an edge: 5 to 11 direct
sums per thousand pixels.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence

import numba
import numpy as np
import scipy.fft

__all__ = [
    "BANK_FILTERS",
    "BANK_RADIUS",
    "bank_bin_planes",
    "bank_bins",
    "bank_ranges",
    "bank_responses",
    "forget_spectra",
    "measured_bank_ranges",
]

_LOG_SIGMAS = (1.0, 2.0, 4.0)
_GABOR_FREQUENCIES = (0.05, 0.14, 0.35)
_GABOR_DEGREES = (0, 45, 90, 135)

#: The names of the 16 filters, in the order of the last axis of :func:`bank_responses`.
BANK_FILTERS: tuple[str, ...] = (
    "intensity",
    *(f"log{s:g}" for s in _LOG_SIGMAS),
    *(f"gabor{f:g}_{d}" for f in _GABOR_FREQUENCIES for d in _GABOR_DEGREES),
)


def _gaussian_1d(sigma: float, radius: int) -> tuple[np.ndarray, np.ndarray]:
    """scipy.ndimage's 1-D Gaussian and its second derivative on ``-radius..radius`` (float64)."""
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    g0 = np.exp(-0.5 * x**2 / sigma**2)
    g0 /= g0.sum()
    g2 = g0 * (x**2 / sigma**4 - 1.0 / sigma**2)
    return g0, g2


def _log_kernel(sigma: float) -> np.ndarray:
    """The scale-normalised LoG as :func:`scipy.ndimage.gaussian_laplace` builds it (truncated at
    4 sigma), each second-derivative pass made to sum to zero."""
    g0, g2 = _gaussian_1d(sigma, int(4.0 * sigma + 0.5))
    g2 = g2 - g2.sum() * g0
    return sigma**2 * (np.outer(g2, g0) + np.outer(g0, g2))


def _gabor_kernel(frequency: float, degrees: int) -> np.ndarray:
    """The real part of skimage's Gabor kernel (``bandwidth=1``, ``n_stds=3``), mean removed."""
    from skimage.filters import gabor_kernel

    k = gabor_kernel(frequency, theta=math.radians(degrees), bandwidth=1).real
    return k - k.mean()


def _build_kernels() -> tuple[np.ndarray, ...]:
    logs = [_log_kernel(s) for s in _LOG_SIGMAS]
    gabors = [_gabor_kernel(f, d) for f in _GABOR_FREQUENCIES for d in _GABOR_DEGREES]
    kernels = (*logs, *gabors)
    for k in kernels:
        k.setflags(write=False)
    return kernels


#: The kernels of the filters after ``intensity`` (float64, odd shapes, centred, point-symmetric).
_KERNELS: tuple[np.ndarray, ...] = _build_kernels()

#: Each kernel's sum of absolute values: a bound on its spectrum (:func:`_rounding`).
_KERNEL_SUMS: tuple[float, ...] = tuple(float(np.abs(k).sum()) for k in _KERNELS)

#: The largest half-width of any filter's support (the Gabor at f = 0.05, θ = 0 or 90°): a block
#: padded by this many pixels has exact responses in its interior.
BANK_RADIUS: int = max(max(k.shape) // 2 for k in _KERNELS)


#: The most bytes of filter spectra kept for blocks of shapes seen before: four blocks of 1152²
#: (a 1024² block and its halo; 40 MiB each). A prediction meets one to four padded shapes (the
#: blocks inside the image and those along its last row and column); a fit meets one shape per
#: crop, tile or check, never again afterwards.
SPECTRA_CACHE_BYTES = 160 * 2**20
_spectra_cache: OrderedDict[tuple[int, int], tuple[np.ndarray, ...]] = OrderedDict()
_spectra_lock = threading.Lock()
_spectra_building: dict[tuple[int, int], threading.Event] = {}  # shapes a thread is building


def _spectra(shape: tuple[int, int]) -> tuple[np.ndarray, ...]:
    """The filters' spectra for blocks padded to ``shape``: real float32 (h, w // 2 + 1) arrays,
    the least recently used shapes' forgotten beyond :data:`SPECTRA_CACHE_BYTES` (the last
    shape is always kept). An unbounded cache of sixteen shapes held 216 MiB at the end of the
    fit of a 16384² slide of a coarse texture, every shape of its crops and tiles, none used
    again by its labels. A shape is built by one thread at a time: another that asks for it
    meanwhile waits for it (a fit's first two tiles, one per Dask worker, built the same
    spectra side by side).

    Each kernel is placed with its centre at index (0, 0), negative offsets wrapped (and summed
    where a kernel is larger than the block). The kernels are point-symmetric, so their spectra
    are real and convolution by them is correlation.
    """
    shape = (int(shape[0]), int(shape[1]))
    while True:
        with _spectra_lock:
            if shape in _spectra_cache:
                _spectra_cache.move_to_end(shape)
                return _spectra_cache[shape]
            building = _spectra_building.get(shape)
            if building is None:  # this thread builds them
                building = _spectra_building[shape] = threading.Event()
                break
        building.wait()  # another thread builds them: not twice at once (then found cached)
    try:
        spectra = _build_spectra(shape)
    except BaseException:  # the waiting threads look again, and build them themselves
        with _spectra_lock:
            del _spectra_building[shape]
        building.set()
        raise
    with _spectra_lock:  # cached as the build is forgotten: a waiting thread finds them
        del _spectra_building[shape]
        _spectra_cache[shape] = spectra
        _spectra_cache.move_to_end(shape)
        held = sum(a.nbytes for entry in _spectra_cache.values() for a in entry)
        while held > SPECTRA_CACHE_BYTES and len(_spectra_cache) > 1:
            _, dropped = _spectra_cache.popitem(last=False)
            held -= sum(a.nbytes for a in dropped)
    building.set()
    return spectra


def forget_spectra() -> None:
    """Empty the spectra cache (:func:`_spectra`): a fit's crops and tiles have shapes the
    labels' blocks do not (up to :data:`SPECTRA_CACHE_BYTES` held for nothing while they are
    computed)."""
    with _spectra_lock:
        _spectra_cache.clear()


def _separable_factors(kernel: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """``kernel`` as a short sum of outer products ``Σ col ⊗ row``: its singular value
    decomposition, the terms above 1e-13 of the largest singular value kept. Every kernel of
    the bank is a sum of two or three such terms: a LoG by construction (``g2 ⊗ g0 + g0 ⊗
    g2``), a Gabor because its envelope is an isotropic Gaussian (``bandwidth`` gives skimage's
    σx = σy) and cos(a x + b y) = cos(a x) cos(b y) - sin(a x) sin(b y), its mean removed one
    term more. The terms dropped hold less than 1e-16 of the kernel's largest value."""
    u, s, vt = np.linalg.svd(kernel)
    return tuple((u[:, i] * s[i], vt[i]) for i in np.flatnonzero(s > 1e-13 * s[0]))


#: Each kernel of :data:`_KERNELS` as the outer products of :func:`_separable_factors`.
_FACTORS: tuple[tuple[tuple[np.ndarray, np.ndarray], ...], ...] = tuple(
    _separable_factors(k) for k in _KERNELS
)


def _wrapped(factor: np.ndarray, n: int) -> np.ndarray:
    """A kernel's 1-D factor centred at index 0 of a period of ``n`` samples, negative offsets
    wrapped (and summed where the factor is longer than ``n``)."""
    r = factor.size // 2
    return np.bincount(np.arange(-r, r + 1) % n, weights=factor, minlength=n)


def _build_spectra(shape: tuple[int, int]) -> tuple[np.ndarray, ...]:
    """The spectra of :func:`_spectra`, computed from the kernels' separable factors
    (:func:`_separable_factors`): the 2-D transform of ``col ⊗ row`` is ``fft(col) ⊗
    rfft(row)``, and wrapping a kernel larger than the block wraps each factor, so a kernel's
    spectrum is the real part of a sum of two or three outer products of 1-D transforms — one
    product of an h × 6 and a 6 × (w // 2 + 1) matrix instead of a 2-D transform (by
    :func:`numpy.einsum`'s own loop: OpenBLAS spread it over every core, 15 times slower on
    two, inside tasks that already fill them). It equals
    ``scipy.fft.rfft2`` of the wrapped kernel to float64 rounding (within 3e-11 of the
    spectrum's largest value, at the spectrum's near-zero values: a response changes by less
    than float32's rounding). One thread, 540² 11.8 → 2.1 ms, 1152² 65 → 7.8 ms: the window
    rule's crops, the fit's tiles and the labels' blocks each meet a new shape, and the 2-D
    transforms were 7 % of ``segment``'s time on a 2048² RGB image."""
    h, w = shape
    spectra = []
    for factors in _FACTORS:
        down = np.empty((h, 2 * len(factors)))
        across = np.empty((2 * len(factors), w // 2 + 1))
        for i, (col, row) in enumerate(factors):
            c = scipy.fft.fft(_wrapped(col, h), workers=1)
            r = scipy.fft.rfft(_wrapped(row, w), workers=1)
            # Re(c ⊗ r) = c.real ⊗ r.real - c.imag ⊗ r.imag (the spectrum is real: the
            # kernels are point-symmetric)
            down[:, 2 * i], down[:, 2 * i + 1] = c.real, -c.imag
            across[2 * i], across[2 * i + 1] = r.real, r.imag
        spectrum = np.einsum("ik,kj->ij", down, across, optimize=False).astype(np.float32)
        spectrum.setflags(write=False)
        spectra.append(spectrum)
    return tuple(spectra)


def _transformed(grey: np.ndarray, fill: float) -> tuple[np.ndarray, float, Iterator[np.ndarray]]:
    """One block's filtering, as :func:`_filtered` yields it: the block with ``fill`` at its
    missing pixels (the ``intensity`` response, float32), the root mean square of the
    transform's input (the block less its mean, padded with ``fill`` less it: what bounds the
    transforms' rounding, :func:`_rounding`), and the responses of the filters after
    ``intensity``, one plane at a time, in their order (each valid until the next is asked
    for). Each plane is C-contiguous and at least (h, w): its first h rows and w columns are
    the response (the rest is the transform's padding), so that compiled kernels read it with
    contiguous rows (a sliced view compiles to a kernel for any layout, three times slower).

    One forward real FFT of the block, zero-padded with ``fill`` to a fast size, and one inverse
    per filter, with the filters' spectra cached per padded shape. The block's mean is
    subtracted before the transform (the filters have zero mean, so only rounding changes),
    which keeps float32 rounding relative to the texture's contrast, not its level.
    """
    grey = np.asarray(grey, dtype=np.float32)
    if grey.ndim != 2:
        raise ValueError(f"grey must be a 2-D block, got shape {grey.shape}")
    fill = float(fill)
    if not math.isfinite(fill):
        raise ValueError(f"fill must be finite, got {fill}")
    h, w = grey.shape
    filled = np.where(np.isfinite(grey), grey, np.float32(fill))
    if h == 0 or w == 0:
        return filled, 0.0, iter([filled] * len(_KERNELS))
    shape = (scipy.fft.next_fast_len(h, real=True), scipy.fft.next_fast_len(w, real=True))
    offset = float(np.mean(filled, dtype=np.float64))
    plane = np.full(shape, fill - offset, dtype=np.float32)
    np.subtract(filled, np.float32(offset), out=plane[:h, :w])
    spread = math.sqrt(_squares(plane) / plane.size)

    def responses() -> Iterator[np.ndarray]:
        # the 2-D transforms as 1-D passes into buffers held for the block (module docstring)
        transform = scipy.fft.rfft(plane, axis=1, workers=1)  # numpy's: 3.7x slower on float32
        transform = scipy.fft.fft(transform, axis=0, workers=1, overwrite_x=True)
        product = np.empty_like(transform)
        for spectrum in _spectra(shape):  # the padded input's plane now holds each response
            np.multiply(transform, spectrum, out=product)
            columns = scipy.fft.ifft(product, axis=0, workers=1, overwrite_x=True)
            yield np.fft.irfft(columns, n=shape[1], axis=1, out=plane)

    return filled, spread, responses()


@numba.njit(nogil=True, cache=True)
def _squares(plane):
    """The sum of the squares of a float32 plane's values, in float64."""
    total = 0.0
    for value in plane.ravel():
        total += np.float64(value) * np.float64(value)
    return total


def _filtered(grey: np.ndarray, fill: float) -> Iterator[np.ndarray]:
    """The responses of one (h, w) block to the filters of :data:`BANK_FILTERS`, one float32
    plane at a time, in their order (each plane is valid until the next is asked for; the
    first, ``intensity``, is the block with ``fill`` at its missing pixels): those of
    :func:`_transformed`."""
    filled, _, responses = _transformed(grey, fill)
    yield filled
    yield from responses


def bank_responses(grey: np.ndarray, fill: float) -> np.ndarray:
    """The responses of one block to the filters of :data:`BANK_FILTERS`.

    Parameters
    ----------
    grey : numpy.ndarray
        A (h, w) block of grey values (cast to float32). NaN (and ±inf) marks missing pixels,
        whole padded borders included.
    fill : float
        The finite value every filter reads in place of a missing pixel.

    Returns
    -------
    numpy.ndarray
        (h, w, 16) float32 responses, in the order of :data:`BANK_FILTERS`. They equal direct
        correlation with each kernel (to float32 precision) at pixels at least
        :data:`BANK_RADIUS` from every edge; nearer the edge they are inexact but finite.

    Raises
    ------
    ValueError
        If ``grey`` is not 2-D or ``fill`` is not finite.

    Notes
    -----
    One forward real FFT of the block, zero-padded with ``fill`` to a fast size, and one inverse
    per filter, with the filters' spectra cached per padded shape. The block's mean is
    subtracted before the transform (the filters have zero mean, so only rounding changes),
    which keeps float32 rounding relative to the texture's contrast, not its level.
    Segmentation does not keep the responses: :func:`bank_bin_planes` bins each as it comes.
    """
    grey = np.asarray(grey)
    h, w = grey.shape[:2]
    out = np.empty((*grey.shape, len(BANK_FILTERS)), dtype=np.float32)
    for i, response in enumerate(_filtered(grey, fill)):
        out[..., i] = response[:h, :w]
    return out


def bank_ranges(
    responses: np.ndarray, low: float = 1.0, high: float = 99.0
) -> tuple[tuple[float, float], ...]:
    """Each filter's bin range: the (low, high) percentiles of its responses.

    Parameters
    ----------
    responses : numpy.ndarray
        Responses of shape (..., 16), as :func:`bank_responses` returns; NaN is ignored.
    low, high : float, optional
        The percentiles (0 ≤ low < high ≤ 100) of each range's ends; 1 and 99 by default.

    Returns
    -------
    tuple of (float, float)
        One ``(lo, hi)`` pair of Python floats per filter, with ``hi > lo``: where a filter's
        two percentiles coincide (a flat response), the range is widened to
        ``lo - d .. hi + d`` with ``d = 0.5e-3 · max(1, |lo|)``.

    Raises
    ------
    ValueError
        If the percentiles are out of order or range, the last axis is not 16 long, or a filter
        has no finite response.
    """
    responses = np.asarray(responses)
    n = len(BANK_FILTERS)
    if responses.ndim < 1 or responses.shape[-1] != n:
        raise ValueError(f"responses must have shape (..., {n}), got {responses.shape}")
    if not 0.0 <= low < high <= 100.0:
        raise ValueError(f"need 0 <= low < high <= 100, got low={low}, high={high}")
    flat = responses.reshape(-1, n)
    return _column_ranges([flat[:, i] for i in range(n)], low, high)


def measured_bank_ranges(
    greys: Sequence[np.ndarray],
    fills: Sequence[float],
    masks: Sequence[np.ndarray],
    low: float = 1.0,
    high: float = 99.0,
) -> tuple[tuple[float, float], ...]:
    """:func:`bank_ranges` of the responses of several grey blocks at their masked pixels,
    filter by filter: no block's (h, w, 16) responses are held at once, only each filter's
    values at the masked pixels (the crop of a slide's fit, 1200² px: 180 MiB fewer and 0.6 s
    less).

    Parameters
    ----------
    greys : sequence of numpy.ndarray
        (h, w) grey blocks, NaN at missing pixels, as :func:`bank_responses` takes them.
    fills : sequence of float
        Each block's ``fill`` (:func:`bank_responses`).
    masks : sequence of numpy.ndarray
        Each block's (h, w) boolean mask of the pixels whose responses count.
    low, high : float, optional
        As in :func:`bank_ranges`.

    Returns
    -------
    tuple of (float, float)
        As :func:`bank_ranges` returns for the masked responses stacked.
    """
    if not 0.0 <= low < high <= 100.0:
        raise ValueError(f"need 0 <= low < high <= 100, got low={low}, high={high}")
    values: list[list[np.ndarray]] = [[] for _ in BANK_FILTERS]
    for grey, fill, mask in zip(greys, fills, masks, strict=True):
        h, w = np.shape(grey)
        for i, plane in enumerate(_filtered(grey, fill)):  # each valid until the next
            values[i].append(plane[:h, :w][mask])
    return _column_ranges([np.concatenate(v) for v in values], low, high)


def _column_ranges(
    columns: Sequence[np.ndarray], low: float, high: float
) -> tuple[tuple[float, float], ...]:
    """Each filter's range of :func:`bank_ranges` from its responses (one 1-D array per
    filter): the percentiles of its finite values, column by column — what
    :func:`numpy.nanpercentile` computes, without its passes over a whole (n, 16) array."""
    finite = [c[np.isfinite(c)] for c in columns]
    empty = [name for name, c in zip(BANK_FILTERS, finite, strict=True) if not c.size]
    if empty:
        raise ValueError(f"no finite responses for {empty}")
    ranges = []
    for c in finite:
        lo, hi = np.percentile(c.astype(np.float64), [low, high]).tolist()
        if not hi > lo:
            d = 0.5e-3 * max(1.0, abs(lo))
            lo, hi = lo - d, hi + d
        ranges.append((float(lo), float(hi)))
    return tuple(ranges)


def bank_bins(
    responses: np.ndarray, ranges: Sequence[tuple[float, float]], n_bins: int
) -> np.ndarray:
    """The equal-width bin of each response in its filter's range.

    Parameters
    ----------
    responses : numpy.ndarray
        Responses of shape (..., 16).
    ranges : sequence of (float, float)
        One ``(lo, hi)`` range per filter, ``hi > lo``, as :func:`bank_ranges` returns.
    n_bins : int
        The number of bins per filter (at least 1).

    Returns
    -------
    numpy.ndarray
        int64 bin indices of the responses' shape: ``floor((r - lo) / (hi - lo) · n_bins)``
        clipped to ``0 .. n_bins - 1``, so values below the range fall in the first bin and
        values at its top or above in the last. NaN falls in bin 0 (callers give such pixels
        weight 0).

    Raises
    ------
    ValueError
        If the shapes do not match, a range is not increasing or ``n_bins < 1``.
    """
    responses = np.asarray(responses)
    n = len(BANK_FILTERS)
    if responses.ndim < 1 or responses.shape[-1] != n:
        raise ValueError(f"responses must have shape (..., {n}), got {responses.shape}")
    bounds, n_bins = _binning(ranges, n_bins)
    flat = responses.reshape(-1, n)
    out = np.empty(flat.shape, dtype=np.int64)
    for i in range(n):
        _bin_plane(flat[:, i : i + 1], bounds[i, 0], bounds[i, 1] - bounds[i, 0], n_bins,
                   out[:, i : i + 1])  # fmt: skip
    return out.reshape(responses.shape)


def bank_bin_planes(
    grey: np.ndarray, fill: float, ranges: Sequence[tuple[float, float]], n_bins: int
) -> np.ndarray:
    """:func:`bank_bins` of :func:`bank_responses`, filter by filter, as compact planes.

    Each response is binned as soon as it is computed and dropped: the block's float responses
    are never held together.

    Parameters
    ----------
    grey, fill
        As in :func:`bank_responses`.
    ranges, n_bins
        As in :func:`bank_bins`.

    Returns
    -------
    numpy.ndarray
        (16, h, w) bin indices, as uint8 when ``n_bins <= 256`` (else int64): at pixels at
        least :data:`BANK_RADIUS` from every edge, the bins :func:`bank_bins` gives the
        direct correlations (each response within the transforms' rounding of a bin edge is
        recomputed as one: the module's "Bins that do not depend on the block"); elsewhere,
        and at all but those few, ``moveaxis(bank_bins(bank_responses(grey, fill), ranges,
        n_bins), -1, 0)``.
    """
    bounds, n_bins = _binning(ranges, n_bins)
    grey = np.asarray(grey)
    dtype = np.uint8 if n_bins <= 256 else np.int64
    out = np.empty((len(BANK_FILTERS), *grey.shape), dtype=dtype)
    filled, spread, responses = _transformed(grey, fill)
    _bin_plane(filled, bounds[0, 0], bounds[0, 1] - bounds[0, 0], n_bins, out[0])  # exact
    filters = zip(responses, _KERNELS, _KERNEL_SUMS, strict=True)
    for i, (response, kernel, total) in enumerate(filters, start=1):
        lo, width = bounds[i, 0], bounds[i, 1] - bounds[i, 0]
        _bin_plane_exact(response, filled, kernel, lo, width, n_bins,
                         _rounding(spread, total), out[i])  # fmt: skip
    return out


#: How many times its typical size the transforms' rounding error is allowed for
#: (:func:`_rounding`): the largest error measured, on blocks of 300² to 2100² of dead leaves,
#: random textures, photographs, a faint texture crossed by bright lines and blocks mostly
#: missing (2026-12-02), was 6.8 times that size, most 2-4 times; a margin of 19 times the
#: largest. Each doubling doubles the responses recomputed (here 3.5e-4 to 7e-4 of them).
ROUNDING_FACTOR = 128.0


def _rounding(spread: float, kernel_sum: float) -> float:
    """A bound on the error of a response computed through float32 transforms
    (:func:`_transformed`) at a pixel of the block's interior: :data:`ROUNDING_FACTOR` times
    float32's ε times the root mean square of the transform's input (``spread``) times the
    kernel's sum of absolute values (``kernel_sum``, which bounds its spectrum). Rounding of
    the transforms spreads over every pixel of the block, so it grows with the block's
    contrast, not the response's own."""
    return ROUNDING_FACTOR * float(np.finfo(np.float32).eps) * spread * kernel_sum


def _binning(ranges: Sequence[tuple[float, float]], n_bins: int) -> tuple[np.ndarray, int]:
    """The (16, 2) float64 ranges and the number of bins, checked: one increasing range per
    filter, at least one bin."""
    n = len(BANK_FILTERS)
    bounds = np.asarray(ranges, dtype=np.float64)
    if bounds.shape != (n, 2):
        raise ValueError(f"ranges must hold {n} (lo, hi) pairs, got shape {bounds.shape}")
    if not np.all(bounds[:, 1] > bounds[:, 0]):
        raise ValueError("every range must have hi > lo")
    n_bins = int(n_bins)
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, got {n_bins}")
    return bounds, n_bins


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _bin_plane_exact(response, filled, kernel, lo, width, n_bins, rounding, out):
    """:func:`_bin_plane` of a response computed through the transforms, but where a response
    lies within its ``rounding`` (and float32's rounding of itself) of an edge between two
    bins, at a pixel of the block's interior (its kernel inside the block), the bin of the
    direct correlation of ``filled`` with ``kernel``, in float64 and the same order of taps
    whatever the block. The transforms' rounding depends on the whole block — its size, its
    mean —, so a response near an edge fell on either side of it with the chunking (five
    labels of a 512² image of dead leaves changed with 128² chunks); a direct sum depends on
    the pixel's neighbourhood only, so the bins of the block's interior do not depend on how
    the image is cut."""
    top = n_bins - 1
    h, w = out.shape
    ry, rx = kernel.shape[0] // 2, kernel.shape[1] // 2
    per_bin = width / n_bins
    eps = np.float64(np.finfo(np.float32).eps)
    for y in range(h):
        inner_row = ry <= y < h - ry
        for x in range(w):
            v = np.float64(response[y, x])
            s = (v - lo) / width * n_bins
            if inner_row and rx <= x < w - rx:
                edge = np.floor(s + 0.5)
                if 1 <= edge <= top and abs(s - edge) * per_bin <= rounding + 4 * eps * abs(v):
                    v = 0.0
                    for i in range(kernel.shape[0]):
                        for j in range(kernel.shape[1]):
                            v += kernel[i, j] * np.float64(filled[y - ry + i, x - rx + j])
                    s = (v - lo) / width * n_bins
            out[y, x] = _bin_of(s, top)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _bin_plane(response, lo, width, n_bins, out):
    """``out = clip(floor((response - lo) / width · n_bins), 0, n_bins - 1)`` in float64, NaN
    to bin 0: the rule of :func:`bank_bins`, in one pass over the (h, w) plane ``out`` (the
    first h rows and w columns of ``response``)."""
    top = n_bins - 1
    for y in range(out.shape[0]):
        for x in range(out.shape[1]):
            out[y, x] = _bin_of((np.float64(response[y, x]) - lo) / width * n_bins, top)


@numba.njit(nogil=True, cache=True, inline="always")
def _bin_of(s, top):
    """The bin of a response ``s`` bins above its range's low end: ``floor(s)`` within
    0 .. ``top``; ``top`` at and above it (+inf too), 0 below the range (-inf and NaN too)."""
    if s >= top:
        return top
    if s > 0:
        return int(np.floor(s))
    return 0
