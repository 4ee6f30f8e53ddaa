"""Keypoint and cell descriptors of the paper's experiments (section 5.1, Figures 7 and 8).

Every patch function takes a batch of greyscale patches of shape ``(..., h, w)`` (a single patch
is ``(h, w)``) and returns one descriptor per patch, shape ``(..., d)``. As in the paper, patches
are cropped to their **central disk** (diameter 60 for 64 × 64 patches, 2,828 pixels): only the
intensities and gradients of the pixels whose centres lie within ``diameter / 2`` of the patch
centre count, so rotating a patch about its centre adds no corner artefacts.

Descriptors
-----------
- :func:`intensity_descriptor` — the pixel values inside the disk (2,828 numbers for 64 × 64).
- :func:`gradient_histogram` — |g|-weighted histogram of the gradient angles arg g in n bins
  over (-π, π] (:func:`xfskde.gradient`); ``canonical=True`` rotates the bins so that the largest
  comes first (:func:`canonical_histogram`).
- :func:`fskde_descriptor` — the truncated cos^2K FS-KDE of the gradient angles weighted by |g|
  (eqs. 1, 6 and 8 with ε = 1e-5); ``canonical="f1"`` applies F_1 canonicalization (eq. 9).
  :func:`fskde_distance` compares two of them, plain (Parseval) or rotation-invariantly
  (F_1 forms, eq. 10's F_k canonical distance, or the exact minimum over rotations).
- :func:`hog_descriptor` — scikit-image's HOG with the cell layout of the paper's usage.
- :func:`fskde_cells` / :func:`histogram_cells` — the same FS-KDE and histogram on an image's
  grid of square cells (the person-detection features of section 5.2), the FS-KDE through
  :func:`xfskde.local_fskde` with a box window and a stride.

Lengths
-------
A descriptor *length* L counts real numbers, as the paper's Figures 7–9 do. An FS-KDE truncated
to ℓ complex coefficients F_0 .. F_{ℓ-1} stores 2ℓ real numbers of which one, Im F_0, is always
zero (F_{-k} = conj F_k are not stored). The convention here is **ℓ = ceil(L / 2)**
(:func:`coefficient_count`): an even L is exactly 2ℓ stored numbers (the convention of
:meth:`xfskde.Cos2KKernel.for_length`) holding 2ℓ − 1 = L − 1 independent ones, an odd L is
exactly the 2ℓ − 1 independent ones. The order K is the sharpest one whose truncated length is ℓ
(:func:`kernel_for_length`). :func:`as_real_vector` turns coefficients into the 2ℓ − 1 real numbers
whose Euclidean distance *equals* the Parseval distance :func:`xfskde.distance`, so the plain
Euclidean distance of the paper's experiments is the FS-KDE's L2 distance.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

import numpy as np

from ._pictures import is_picture, pixels
from ._validation import _check_choice, _check_nonnegative_int, _check_positive_int
from .api import local_fskde
from .canonical import canonical_distance, canonicalize
from .density import _apply_k, _check_field, _is_labelled, distance, fskde
from .exceptions import DimensionError, ParameterError
from .gradients import angle_bins, gradient
from .kernel import PAPER_EPS, Cos2KKernel

__all__ = [
    "DISK_DIAMETER",
    "as_real_vector",
    "canonical_histogram",
    "coefficient_count",
    "disk_mask",
    "fskde_cells",
    "fskde_descriptor",
    "fskde_descriptors",
    "fskde_distance",
    "gradient_histogram",
    "histogram_cells",
    "hog_descriptor",
    "intensity_descriptor",
    "kernel_for_length",
    "patch_gradients",
]

#: Diameter of the central disk the paper crops its 64 × 64 patches to (section 5.1).
DISK_DIAMETER = 60
#: Truncation threshold of the paper's descriptors (eq. 8, section 5).


# --------------------------------------------------------------------------------------- helpers
def _grey(image: np.typing.ArrayLike, name: str, shape: str) -> np.ndarray:
    """An image's (or a batch of patches') values, a PIL picture (or a list of them) read as
    its file is (:func:`xfskde._pictures.pixels`: a palette picture as its colours, not its
    indices), refusing colour: the descriptors are of grey patches and images."""
    if isinstance(image, list | tuple) and any(is_picture(p) for p in image):
        arr = np.stack([pixels(p) for p in image])
    else:
        arr = pixels(image)
    pictures = isinstance(image, list | tuple) and any(map(is_picture, image))
    # a picture's third axis is colour; an array's (h, w, 3 or 4) with h, w > 4 * 3: too
    colour = arr.ndim >= 3 and arr.shape[-1] in (3, 4) and arr.shape[-2] > 4 * arr.shape[-1]
    if colour or (is_picture(image) and arr.ndim > 2) or (pictures and arr.ndim > 3):
        raise DimensionError(
            f"{name} must be grey, shape {shape}; got shape {arr.shape}, colour (y, x and "
            f"{arr.shape[-1]} channels): take its grey first, picture.convert('L') or "
            "skimage.color.rgb2gray(image)"
        )
    return arr


def _as_patches(patches: np.typing.ArrayLike) -> np.ndarray:
    """Patches as float64 ``(..., h, w)``, refusing what is not a real 2-D grey patch batch."""
    arr = _grey(patches, "patches", "(h, w) or (n, h, w)")
    if arr.ndim < 2:
        raise ValueError(
            f"patches must have shape (h, w) or (n, h, w), got shape {arr.shape}; "
            "stack single patches with np.stack"
        )
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"patches must hold real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        raise ValueError("patches contain NaN or infinite pixels; fill them before describing")
    return arr


def _pair(name: str, value: Any, check: Callable[[str, Any], int]) -> tuple[int, int]:
    """``value`` as two integers (rows, columns), each passed through ``check``."""
    if isinstance(value, str) or np.ndim(value) != 1 or len(value) != 2:
        raise ParameterError(f"{name} must be two integers (rows, columns), got {value!r}")
    rows, cols = value
    return check(name, rows), check(name, cols)


def disk_mask(shape: tuple[int, int], diameter: float | None = DISK_DIAMETER) -> np.ndarray:
    """Boolean mask of the pixels whose centres lie in the central disk of a patch.

    Parameters
    ----------
    shape : (int, int)
        Patch shape ``(h, w)``.
    diameter : float or None, optional
        Disk diameter in pixels, centred at ``((h-1)/2, (w-1)/2)``; a pixel is in when its
        centre is at distance <= diameter / 2. None selects every pixel. Default 60 (section 5.1).

    Returns
    -------
    numpy.ndarray of bool, shape ``(h, w)``
        For 64 × 64 and diameter 60 it holds 2,828 pixels, the paper's intensity length.

    Raises
    ------
    ValueError
        For a ``diameter`` outside (0, min(h, w)], and a ``shape`` that is not two integers
        >= 0 (a ParameterError; a TypeError for non-integers).
    """
    h, w = _pair("shape", shape, _check_nonnegative_int)
    if diameter is None:
        return np.ones((h, w), dtype=bool)
    diameter = float(diameter)
    if not (0 < diameter <= min(h, w)):
        raise ValueError(
            f"diameter must be in (0, {min(h, w)}] for {h}x{w} patches, got {diameter}; "
            "pass diameter=None to use the whole patch"
        )
    y, x = np.ogrid[:h, :w]
    return np.hypot(y - (h - 1) / 2, x - (w - 1) / 2) <= diameter / 2


def coefficient_count(length: int) -> int:
    """Number ℓ of complex coefficients of a descriptor of ``length`` real numbers: ceil(L / 2).

    Parameters
    ----------
    length : int
        Descriptor length L >= 3 in real numbers (the paper uses 4 .. 64).

    Returns
    -------
    int
        ℓ = ceil(L / 2); the descriptor holds 2ℓ − 1 independent real numbers (F_0 is real).

    Raises
    ------
    ParameterError
        For a ``length`` below 1 (TypeError for one that is not an integer).
    ValueError
        For a ``length`` of 1 or 2.
    """
    length = _check_positive_int("length", length)
    if length < 3:
        raise ValueError(f"length must be >= 3 (F_0 and one complex F_1), got {length}")
    return (length + 1) // 2


def kernel_for_length(length: int, eps: float = PAPER_EPS) -> Cos2KKernel:
    """The cos^2K kernel of a descriptor of ``length`` real numbers (eq. 8, section 5.1).

    Parameters
    ----------
    length : int
        Descriptor length L >= 3 in real numbers; ℓ = :func:`coefficient_count` (L).
    eps : float, optional
        Truncation threshold (eq. 8; default 1e-5, the paper's).

    Returns
    -------
    Cos2KKernel
        The sharpest (largest order K) kernel whose truncated length is ℓ
        (:meth:`xfskde.Cos2KKernel.for_length`).

    Raises
    ------
    ValueError
        For a ``length`` below 3 (ParameterError below 1), and the refusals of
        :meth:`xfskde.Cos2KKernel.for_length` (an ``eps`` outside (0, 1)).
    """
    return Cos2KKernel.for_length(coefficient_count(length), eps=eps)


def patch_gradients(
    patches: np.typing.ArrayLike, *, diameter: float | None = DISK_DIAMETER
) -> np.ndarray:
    """Complex gradients g = I_x + i I_y of the disk pixels of each patch (section 2.3).

    The gradient of each whole patch is taken with :func:`xfskde.gradient` (central
    differences, reflected edges), then only the pixels of :func:`disk_mask` are kept, so for a
    disk of diameter <= h − 2 no value depends on the patch border or its corners.

    Parameters
    ----------
    patches : array_like, shape (..., h, w)
        Greyscale patches of any real dtype (a PIL picture, or a list of them, as read from
        its file).
    diameter : float or None, optional
        Disk diameter in pixels (default 60); None keeps every pixel.

    Returns
    -------
    numpy.ndarray of complex128, shape (..., m)
        m = number of disk pixels, in row-major order; the gradients in image units per
        pixel, arg g in radians in the convention of :mod:`xfskde.gradients`.

    Raises
    ------
    DimensionError
        For colour patches (take their grey first).
    ValueError
        For patches of fewer than 2 axes or with NaN or infinite pixels, and a ``diameter``
        outside (0, min(h, w)].
    TypeError
        For patches that do not hold real numbers.
    """
    arr = _as_patches(patches)
    mask = disk_mask(arr.shape[-2:], diameter)
    flat = arr.reshape(-1, *arr.shape[-2:])
    out = np.empty((flat.shape[0], int(mask.sum())), dtype=np.complex128)
    for n, patch in enumerate(flat):
        out[n] = gradient(patch)[mask]
    return out.reshape(*arr.shape[:-2], out.shape[-1])


# ----------------------------------------------------------------------------------- descriptors
def intensity_descriptor(
    patches: np.typing.ArrayLike, *, diameter: float | None = DISK_DIAMETER
) -> np.ndarray:
    """Raw intensity descriptor: the pixel values inside the central disk (section 5.1).

    Parameters
    ----------
    patches : array_like, shape (..., h, w)
        Greyscale patches.
    diameter : float or None, optional
        Disk diameter (default 60: 2,828 values for 64 × 64 patches); None keeps every pixel.

    Returns
    -------
    numpy.ndarray of float64, shape (..., m)
        The m disk pixels' values, in row-major order (:func:`disk_mask`).

    Raises
    ------
    DimensionError
        For colour patches (take their grey first).
    ValueError
        For patches of fewer than 2 axes or with NaN or infinite pixels, and a ``diameter``
        outside (0, min(h, w)].
    TypeError
        For patches that do not hold real numbers.
    """
    arr = _as_patches(patches)
    return arr[..., disk_mask(arr.shape[-2:], diameter)]


def _check_bins(n_bins: int) -> int:
    n_bins = _check_positive_int("n_bins", n_bins)
    if n_bins < 2:
        raise ValueError(f"n_bins must be >= 2, got {n_bins}")
    return n_bins


def canonical_histogram(histograms: np.typing.ArrayLike) -> np.ndarray:
    """Rotate each histogram's bins cyclically so that the largest bin comes first (section 5.1).

    Parameters
    ----------
    histograms : array_like, shape (..., n_bins)
        Histograms along the last axis, the bins in angle order round the circle
        (:func:`gradient_histogram`).

    Returns
    -------
    numpy.ndarray, shape (..., n_bins), the dtype of ``histograms``
        ``out[..., i] = h[..., (argmax h + i) mod n_bins]``; ties go to the first largest bin.

    Raises
    ------
    DimensionError
        For a scalar, or histograms of no bin (an empty last axis).
    TypeError
        For histograms that are not real numbers.
    """
    h = np.asarray(histograms)
    if h.dtype.kind not in "biuf":
        raise TypeError(f"histograms must hold real numbers, got an array of {h.dtype}")
    if h.ndim == 0 or h.shape[-1] == 0:
        raise DimensionError(
            f"histograms must hold bins along their last axis, shape (..., n_bins), got shape "
            f"{h.shape}"
        )
    n = h.shape[-1]
    start = np.argmax(h, axis=-1)[..., None]
    return np.take_along_axis(h, (start + np.arange(n)) % n, axis=-1)


def gradient_histogram(
    patches: np.typing.ArrayLike,
    n_bins: int,
    *,
    canonical: bool = False,
    diameter: float | None = DISK_DIAMETER,
) -> np.ndarray:
    """|g|-weighted histogram of gradient angles in the central disk (section 5.1).

    Bin j covers the angles (-π + 2πj/n, -π + 2π(j+1)/n]; each pixel adds its weight |g| to the
    bin of arg g; the sum is divided by the number of disk pixels N, the 1/N of eq. 1, so the
    histogram and the FS-KDE of a patch have the same units.

    Parameters
    ----------
    patches : array_like, shape (..., h, w)
        Greyscale patches.
    n_bins : int
        Number of bins n >= 2 (the descriptor length; the paper varies it from 4 to 32).
    canonical : bool, optional
        Rotate the bins so that the largest comes first (:func:`canonical_histogram`; default
        False).
    diameter : float or None, optional
        Disk diameter (default 60); None uses the whole patch.

    Returns
    -------
    numpy.ndarray of float64, shape (..., n_bins)
        Bin j holds Σ |g| / N over the disk pixels whose angle falls in it
        (:func:`xfskde.gradients.angle_bins`).

    Raises
    ------
    ValueError
        For ``n_bins`` < 2 (ParameterError below 1), and the refusals of
        :func:`patch_gradients`.
    """
    n_bins = _check_bins(n_bins)
    g = patch_gradients(patches, diameter=diameter)
    flat = g.reshape(-1, g.shape[-1])
    idx = angle_bins(flat, n_bins) + n_bins * np.arange(flat.shape[0])[:, None]
    hist = np.bincount(
        idx.ravel(), weights=np.abs(flat).ravel(), minlength=flat.shape[0] * n_bins
    ).reshape(-1, n_bins)
    hist = (hist / flat.shape[1]).reshape(*g.shape[:-1], n_bins)
    return canonical_histogram(hist) if canonical else hist


def fskde_descriptors(
    patches: np.typing.ArrayLike,
    lengths: Iterable[int],
    *,
    eps: float = PAPER_EPS,
    canonical: Literal["f1"] | None = None,
    diameter: float | None = DISK_DIAMETER,
) -> dict[int, np.ndarray]:
    """cos^2K FS-KDE descriptors of several lengths at once (eqs. 1, 6, 8 and 9).

    The FS-KDE of the longest length is computed once with :func:`xfskde.fskde`; by eq. 1 each
    coefficient is :math:`H_k` times a kernel-free sum, so every shorter descriptor is the first
    ℓ coefficients rescaled by the ratio of the two kernels' :math:`H_k`.

    Parameters
    ----------
    patches : array_like, shape (..., h, w)
        Greyscale patches.
    lengths : iterable of int
        Descriptor lengths L >= 3 in real numbers (see :func:`coefficient_count`); repeats
        count once.
    eps : float, optional
        Truncation threshold of eq. 8 (default 1e-5, the paper's).
    canonical : {None, "f1"}, optional
        None (default): the FS-KDE as is; ``"f1"``: its F_1 canonical form (eq. 9).
    diameter : float or None, optional
        Disk diameter (default 60); None uses the whole patch.

    Returns
    -------
    dict of int to numpy.ndarray
        Each length L (an int, in increasing order) -> its descriptors, complex128, shape
        (..., ℓ) with ℓ = ceil(L / 2).

    Raises
    ------
    ValueError
        For no length, a length below 3, and a ``canonical`` not in the list, and the
        refusals of :func:`patch_gradients`.
    """
    lengths = sorted({_check_positive_int("lengths", length) for length in lengths})
    if not lengths:
        raise ValueError("lengths must hold at least one descriptor length, e.g. [10]")
    if canonical not in (None, "f1"):
        raise ValueError(f"canonical must be None or 'f1', got {canonical!r}")
    kernels = {length: kernel_for_length(length, eps) for length in lengths}
    top = kernels[lengths[-1]]
    g = patch_gradients(patches, diameter=diameter)
    full = fskde(np.angle(g), np.abs(g), order=top.order, eps=eps)
    out = {}
    for length, kernel in kernels.items():
        F = full[..., : kernel.length] * (kernel.coefficients / top.coefficients[: kernel.length])
        out[length] = canonicalize(F) if canonical == "f1" else F
    return out


def fskde_descriptor(
    patches: np.typing.ArrayLike,
    length: int = 10,
    *,
    eps: float = PAPER_EPS,
    canonical: Literal["f1"] | None = None,
    diameter: float | None = DISK_DIAMETER,
) -> np.ndarray:
    """cos^2K FS-KDE descriptor of gradient angles weighted by |g| (eqs. 1, 6, 8; section 5.1).

    .. math:: F_k = \\frac{H_k}{N}\\sum_{n} |g_n|\\, e^{-ik\\arg g_n},\\quad k = 0 .. ℓ-1

    over the N disk pixels, with the kernel of :func:`kernel_for_length`.

    Parameters
    ----------
    patches : array_like, shape (..., h, w)
        Greyscale patches.
    length : int, optional
        Descriptor length L >= 3 in real numbers (default 10, the paper's best);
        ℓ = ceil(L/2).
    eps : float, optional
        Truncation threshold of eq. 8 (default 1e-5).
    canonical : {None, "f1"}, optional
        None (default): the FS-KDE as is; ``"f1"`` returns the F_1 canonical form (eq. 9).
        For eq. 10 keep None and compare with :func:`fskde_distance` ``(F, G, "fk")``.
    diameter : float or None, optional
        Disk diameter (default 60); None uses the whole patch.

    Returns
    -------
    numpy.ndarray of complex128, shape (..., ℓ)
        Use :func:`as_real_vector` for a real vector whose Euclidean distance is
        :func:`xfskde.distance`.

    Raises
    ------
    ValueError
        As :func:`fskde_descriptors`.
    """
    return fskde_descriptors(patches, [length], eps=eps, canonical=canonical, diameter=diameter)[
        _check_positive_int("length", length)
    ]


def as_real_vector(F: np.typing.ArrayLike) -> np.ndarray:
    """Real vector of FS-KDE coefficients whose Euclidean distances are Parseval distances.

    .. math:: v = \\sqrt{2\\pi}\\,\\big(F_0,\\ \\sqrt2\\,\\mathrm{Re}F_1,
              \\ \\sqrt2\\,\\mathrm{Im}F_1,\\ \\dots,
              \\ \\sqrt2\\,\\mathrm{Re}F_{ℓ-1},\\ \\sqrt2\\,\\mathrm{Im}F_{ℓ-1}\\big)

    so that :math:`\\|v(F) - v(G)\\| = \\|f - g\\|` of :func:`xfskde.distance` (section 2.2):
    the √2 counts the coefficient F_{-k} = conj F_k that is not stored. F_0 is real for an
    FS-KDE, so the vector has 2ℓ − 1 entries.

    Parameters
    ----------
    F : array_like, complex, shape (..., ℓ), or xarray.DataArray
        Coefficients along the last axis, or a labelled field with a ``k`` dim (read by name).

    Returns
    -------
    numpy.ndarray of float64, shape (..., 2ℓ − 1), or xarray.DataArray
        A labelled field gives its dims without k, then a ``component`` dim of 2ℓ − 1, named
        ``"real_vector"``.

    Raises
    ------
    ValueError
        For a scalar ``F``, or one without coefficients along its last axis.
    DimensionError
        For labelled input that is not a coefficient field
        (:func:`xfskde.fields.check_field`).
    """
    if _is_labelled(F):
        field = _check_field(F, plain="as_real_vector(F)")
        return _apply_k(
            as_real_vector, field, out_dim="component", out_size=2 * field.sizes["k"] - 1
        ).rename("real_vector")
    F = np.asarray(F)
    if F.ndim == 0 or F.shape[-1] < 1:
        raise ValueError(f"F must have the coefficients along its last axis, got shape {F.shape}")
    rest = np.sqrt(2.0) * F[..., 1:]
    parts = np.stack([rest.real, rest.imag], axis=-1).reshape(
        *F.shape[:-1], 2 * (F.shape[-1] - 1)
    )  # not -1: a batch of no FS-KDE has no size to infer it from
    return np.sqrt(2 * np.pi) * np.concatenate([F[..., :1].real, parts], axis=-1)


def hog_descriptor(
    patches: np.typing.ArrayLike,
    orientations: int = 9,
    *,
    pixels_per_cell: tuple[int, int] = (8, 8),
    cells_per_block: tuple[int, int] = (2, 2),
    block_norm: str = "L2-Hys",
    diameter: float | None = None,
) -> np.ndarray:
    """HOG (Dalal & Triggs 2005) of each patch or image, by :func:`skimage.feature.hog`.

    The defaults mirror the paper's use of HOG (section 5.2): 8 × 8-pixel cells, ``orientations``
    bins per cell (the paper varies it from 4 to 64 as the "length per block"), 2 × 2-cell blocks
    with L2-Hys block normalisation, the original detector's setting. Two differences from the
    VLFeat implementation the paper used: scikit-image's orientations are unsigned (0–180°) and
    it has no extra contrast-sensitive channels, so the vector is ``blocks × 4 × orientations``
    long.

    Parameters
    ----------
    patches : array_like, shape (..., h, w)
        Greyscale patches or images.
    orientations : int, optional
        Orientation bins per cell, over 0–180° (default 9).
    pixels_per_cell : (int, int), optional
        Cell size in pixels, (rows, columns) (default (8, 8)).
    cells_per_block : (int, int), optional
        Block size in cells (default (2, 2)).
    block_norm : {"L1", "L1-sqrt", "L2", "L2-Hys"}, optional
        Block normalisation (default "L2-Hys").
    diameter : float or None, optional
        When given, pixels outside the central disk are set to zero first (default None: HOG
        sees the whole patch, as its cells are square).

    Returns
    -------
    numpy.ndarray of float64, shape (..., d)
        d = blocks × cells per block × ``orientations``, scikit-image's feature vector.

    Raises
    ------
    DimensionError
        For colour patches (take their grey first).
    ValueError
        For patches of fewer than 2 axes or with NaN or infinite pixels, a ``diameter``
        outside (0, min(h, w)], and (as a ParameterError) a ``block_norm`` not in the list,
        ``pixels_per_cell`` or ``cells_per_block`` that are not two positive integers, and
        patches smaller than one block.
    TypeError
        For patches that do not hold real numbers, and cell or block sizes that are not
        integers.
    """
    from skimage.feature import hog

    orientations = _check_positive_int("orientations", orientations)
    _check_choice("block_norm", block_norm, ("L1", "L1-sqrt", "L2", "L2-Hys"))
    cell = _pair("pixels_per_cell", pixels_per_cell, _check_positive_int)
    block = _pair("cells_per_block", cells_per_block, _check_positive_int)
    arr = _as_patches(patches)
    if arr.shape[-2] < cell[0] * block[0] or arr.shape[-1] < cell[1] * block[1]:
        raise ParameterError(
            f"patches of {arr.shape[-2]}x{arr.shape[-1]} pixels hold no block of "
            f"cells_per_block {block} cells of pixels_per_cell {cell}: give patches of at least "
            f"{cell[0] * block[0]}x{cell[1] * block[1]} pixels, or smaller cells"
        )
    if diameter is not None:
        arr = np.where(disk_mask(arr.shape[-2:], diameter), arr, 0.0)
    flat = arr.reshape(-1, *arr.shape[-2:])
    rows = [
        hog(
            patch,
            orientations=orientations,
            pixels_per_cell=cell,
            cells_per_block=block,
            block_norm=block_norm,
            feature_vector=True,
        )
        for patch in flat
    ]
    return np.stack(rows).reshape(*arr.shape[:-2], -1)


# --------------------------------------------------------------------------------- cell grids
def _check_cell(image: np.ndarray, cell: int) -> tuple[int, int]:
    cell = _check_positive_int("cell", cell)
    if image.ndim != 2:
        raise DimensionError(
            f"image must be one grey image, shape (h, w), got shape {image.shape}: describe "
            "each plane alone"
        )
    ny, nx = image.shape[0] // cell, image.shape[1] // cell
    if ny == 0 or nx == 0:
        raise ValueError(f"image of shape {image.shape} holds no full {cell}x{cell} cell")
    return ny, nx


def fskde_cells(
    image: np.typing.ArrayLike, length: int, *, cell: int = 8, eps: float = PAPER_EPS
) -> np.ndarray:
    """cos^2K FS-KDE of every full ``cell`` × ``cell`` cell of an image (section 5.2).

    Computed by :func:`xfskde.local_fskde` with ``window="box", size=cell, stride=cell``: the
    output sample (i, j) is the FS-KDE (eqs. 1, 6, 8) of the gradients of the pixels
    ``[i*cell, (i+1)*cell) × [j*cell, (j+1)*cell)``. A partial cell at the bottom or right edge
    is dropped, as :func:`skimage.feature.hog` does.

    Parameters
    ----------
    image : array_like, shape (h, w)
        Greyscale image.
    length : int
        Descriptor length L >= 3 per cell in real numbers (ℓ = ceil(L/2),
        :func:`kernel_for_length`).
    cell : int, optional
        Cell size in pixels (default 8).
    eps : float, optional
        Truncation threshold (eq. 8; default 1e-5).

    Returns
    -------
    numpy.ndarray of complex, shape (h // cell, w // cell, ℓ)
        complex64 for float32 and 8- or 16-bit images, complex128 for float64 (as
        :func:`xfskde.local_fskde`).

    Raises
    ------
    DimensionError
        For a colour image (take its grey first), and an image that is not 2-D.
    ValueError
        For an image that holds no full cell, and a ``length`` below 3.
    """
    arr = _grey(image, "image", "(h, w)")
    ny, nx = _check_cell(arr, cell)
    F = local_fskde(arr, order=kernel_for_length(length, eps), window="box", size=cell, stride=cell)
    return F[:ny, :nx]


def histogram_cells(image: np.typing.ArrayLike, n_bins: int, *, cell: int = 8) -> np.ndarray:
    """|g|-weighted gradient-angle histogram of every full cell of an image (section 5.2).

    The same bins and 1/N normalisation as :func:`gradient_histogram`, on the cells of
    :func:`fskde_cells`; the gradient is :func:`xfskde.gradient` of the whole image.

    Parameters
    ----------
    image : array_like, shape (h, w)
        Greyscale image.
    n_bins : int
        Bins per cell, >= 2.
    cell : int, optional
        Cell size in pixels (default 8).

    Returns
    -------
    numpy.ndarray of float64, shape (h // cell, w // cell, n_bins)
        Bin j of a cell holds Σ |g| / cell² over its pixels whose angle falls in it.

    Raises
    ------
    DimensionError
        For a colour image (take its grey first), and an image that is not 2-D.
    ValueError
        For ``n_bins`` < 2, and an image that holds no full cell.
    """
    n_bins = _check_bins(n_bins)
    arr = _grey(image, "image", "(h, w)")
    ny, nx = _check_cell(arr, cell)
    g = gradient(arr.astype(np.float64))[: ny * cell, : nx * cell]
    cell_id = (np.arange(ny * cell) // cell)[:, None] * nx + (np.arange(nx * cell) // cell)
    idx = cell_id * n_bins + angle_bins(g, n_bins)
    hist = np.bincount(idx.ravel(), weights=np.abs(g).ravel(), minlength=ny * nx * n_bins)
    return hist.reshape(ny, nx, n_bins) / cell**2


# ----------------------------------------------------------------------------------- distances
DistanceMethod = Literal["euclidean", "f1", "fk", "exact"]


def fskde_distance(
    F: np.typing.ArrayLike, G: np.typing.ArrayLike, method: DistanceMethod = "euclidean"
) -> np.ndarray:
    """Distance between FS-KDE descriptors, plain or rotation-invariant (sections 2.2 and 4).

    Parameters
    ----------
    F, G : array_like, complex, shape (..., ℓ)
        Descriptors (:func:`fskde_descriptor`); leading axes broadcast.
    method : {"euclidean", "f1", "fk", "exact"}, optional
        ``"euclidean"`` (default): the Parseval distance :func:`xfskde.distance`, equal to the
        Euclidean distance of :func:`as_real_vector`; ``"f1"``: the same between the F_1
        canonical forms (eq. 9); ``"fk"``: eq. 10, the smallest F_m-canonical distance for
        m = 1 .. ℓ-1; ``"exact"``: the minimum over every rotation
        (:func:`xfskde.canonical_distance`).

    Returns
    -------
    numpy.ndarray, real
        The shape of the broadcast leading axes: float32 when ``F`` and ``G`` are complex64,
        else float64 (as :func:`xfskde.distance`; :func:`fskde_descriptor` gives complex128).

    Raises
    ------
    ParameterError
        For a ``method`` not in the list.
    """
    _check_choice("method", method, ("euclidean", "f1", "fk", "exact"))
    if method == "euclidean":
        return distance(F, G)
    if method == "f1":
        return distance(canonicalize(F), canonicalize(G))
    return canonical_distance(F, G, method=method)
