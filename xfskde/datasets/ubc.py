"""The UBC / Brown multi-view stereo patches (Winder & Brown 2009; paper section 5.1), and a proxy.

:func:`load_ubc_patches` reads a subset (``liberty``, ``notredame``, ``yosemite``) in its published
layout::

    root/<subset>/patches0000.bmp, patches0001.bmp, ...   1024 × 1024 greyscale, 16 × 16 patches
                                                          of 64 × 64, left to right, top to bottom
    root/<subset>/info.txt                                one line per patch: 3D point id, unused
    root/<subset>/m50_<n>_<n>_0.txt                       pairs: patchID1 pointID1 unused
                                                          patchID2 pointID2 unused unused

Patch p lives in file ``p // 256`` at row ``(p % 256) // 16``, column ``p % 16``. The bitmaps are
decoded only when a patch in them is read, and a few are cached (:class:`PatchStack`), so a
subset of 100k+ patches opens instantly.

The data set cannot be downloaded in every environment; :func:`ubc_proxy` builds pairs of the
same kind from photographs that ship with scikit-image (see its docstring for exactly how).
"""

from __future__ import annotations

import re
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validation import _check_positive_int

__all__ = ["PAIR_DTYPE", "PatchStack", "UBCPatches", "load_ubc_patches", "ubc_proxy"]

PATCH = 64
GRID = 16
PER_FILE = GRID * GRID
#: dtype of :attr:`UBCPatches.pairs`: patch indices i, j and whether their 3D points agree.
PAIR_DTYPE = np.dtype([("i", np.int64), ("j", np.int64), ("is_match", bool)])
_PAIR_FILE = re.compile(r"^m50_(\d+)_(\d+)_(\d+)\.txt$")


class PatchStack:
    """Lazy read-only stack of the 64 × 64 patches of a folder of ``patchesNNNN.bmp`` files.

    Behaves like a ``uint8`` array of shape ``(n, 64, 64)`` for ``len``, ``shape``, ``dtype``,
    integer / slice / integer-array indexing and ``np.asarray`` (which reads everything). Each
    bitmap is decoded on first use and kept in a small least-recently-used cache.

    Parameters
    ----------
    files : sequence of path
        The bitmaps in order (patch p is in ``files[p // 256]``).
    count : int
        Number of patches (the last bitmap may be partly filled).
    cache : int
        Number of decoded bitmaps kept in memory (1 MiB each; default 32).
    """

    def __init__(self, files: Sequence[Path], count: int, *, cache: int = 32) -> None:
        self.files = [Path(f) for f in files]
        self.count = int(count)
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self._cache_size = max(1, int(cache))

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(n, 64, 64)``."""
        return (self.count, PATCH, PATCH)

    @property
    def dtype(self) -> np.dtype:
        """``uint8``."""
        return np.dtype(np.uint8)

    @property
    def ndim(self) -> int:
        """3."""
        return 3

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return f"PatchStack({self.count} patches in {len(self.files)} bitmaps)"

    def _sheet(self, index: int) -> np.ndarray:
        if index in self._cache:
            self._cache.move_to_end(index)
            return self._cache[index]
        from PIL import Image

        path = self.files[index]
        try:
            with Image.open(path) as image:
                sheet = np.asarray(image.convert("L"))
        except OSError as error:
            raise OSError(f"cannot read the patch bitmap {path}: {error}") from error
        if sheet.shape != (GRID * PATCH, GRID * PATCH):
            raise ValueError(
                f"{path} is {sheet.shape[1]}x{sheet.shape[0]} pixels; UBC patch bitmaps are "
                f"{GRID * PATCH}x{GRID * PATCH} (16 x 16 patches of 64 x 64)"
            )
        self._cache[index] = sheet
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return sheet

    def _patch(self, p: int) -> np.ndarray:
        sheet = self._sheet(p // PER_FILE)
        r, c = divmod(p % PER_FILE, GRID)
        return sheet[r * PATCH : (r + 1) * PATCH, c * PATCH : (c + 1) * PATCH]

    def __getitem__(self, key) -> np.ndarray:
        if isinstance(key, tuple):
            batch = self[key[0]]
            lead = (slice(None),) * (batch.ndim - 2)
            return batch[(*lead, *key[1:])]
        if isinstance(key, slice):
            return self[np.arange(self.count)[key]]
        idx = np.asarray(key)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        if idx.dtype.kind not in "iu":
            raise TypeError(f"patch indices must be integers, slices or masks, got {key!r}")
        flat = np.where(idx < 0, idx + self.count, idx).ravel()
        if flat.size and (flat.min() < 0 or flat.max() >= self.count):
            raise IndexError(f"patch index out of range for {self.count} patches")
        out = np.empty((flat.size, PATCH, PATCH), dtype=np.uint8)
        for n in np.argsort(flat, kind="stable"):  # one bitmap at a time
            out[n] = self._patch(int(flat[n]))
        return out.reshape(*idx.shape, PATCH, PATCH)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self[np.arange(self.count)]
        return out if dtype is None else out.astype(dtype)


@dataclass
class UBCPatches:
    """Patches, their 3D point ids and the labelled pairs of one UBC subset (or of the proxy).

    Attributes
    ----------
    patches : PatchStack or numpy.ndarray
        ``uint8`` ``(n, 64, 64)``: lazy for a published subset, in memory for the proxy.
    point_ids : numpy.ndarray of int64, shape (n,)
        The 3D point of each patch (``info.txt``'s first column).
    pairs : numpy.ndarray of :data:`PAIR_DTYPE`, shape (m,)
        Fields ``i``, ``j`` (patch indices) and ``is_match`` (the two 3D ids agree).
    subset : str
        Subset name (``"proxy"`` for :func:`ubc_proxy`).
    root : pathlib.Path or None
        The subset's folder (None for the proxy).
    """

    patches: PatchStack | np.ndarray
    point_ids: np.ndarray
    pairs: np.ndarray
    subset: str
    root: Path | None = None

    def __len__(self) -> int:
        return len(self.point_ids)

    def pair_patches(self, which: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The two patches of each selected pair, as two ``uint8`` ``(m, 64, 64)`` arrays.

        Parameters
        ----------
        which : array of int, optional
            Indices into :attr:`pairs` (default: all pairs).

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
        """
        pairs = self.pairs if which is None else self.pairs[np.asarray(which)]
        return self.patches[pairs["i"]], self.patches[pairs["j"]]


# ----------------------------------------------------------------------------------- the loader
def _read_int_table(path: Path, columns: int, what: str) -> np.ndarray:
    """Whitespace-separated integer table with at least ``columns`` columns, or a clear error."""
    rows = []
    with open(path) as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < columns:
                raise ValueError(
                    f"{path}, line {number}: expected {columns} columns ({what}), "
                    f"got {len(fields)}: {line.strip()!r}"
                )
            try:
                rows.append([int(f) for f in fields[:columns]])
            except ValueError:
                raise ValueError(
                    f"{path}, line {number}: expected integers ({what}), got {line.strip()!r}"
                ) from None
    return np.asarray(rows, dtype=np.int64).reshape(-1, columns)


def _subset_folder(root: str | Path, subset: str | None) -> Path:
    root = Path(root).expanduser()
    if not root.is_dir():
        raise OSError(
            f"UBC patch folder {root} does not exist; download a subset (liberty, notredame or "
            "yosemite) of the Brown/UBC multi-view stereo patches and pass its parent folder"
        )
    folder = root if subset is None else root / subset
    if not folder.is_dir():
        found = sorted(p.name for p in root.iterdir() if (p / "info.txt").is_file())
        raise OSError(
            f"no subset folder {folder}; subsets found in {root}: {found or 'none'} "
            "(each holds info.txt and patchesNNNN.bmp)"
        )
    if not (folder / "info.txt").is_file():
        raise OSError(f"{folder} has no info.txt; is it a UBC patch subset folder?")
    return folder


def _pair_file(folder: Path, pairs: int | str | None) -> Path | None:
    found = {}
    for path in folder.iterdir():
        match = _PAIR_FILE.match(path.name)
        if match:
            found[int(match.group(1))] = path
    if pairs is None:
        return found[max(found)] if found else None
    if isinstance(pairs, str):
        path = folder / pairs
        if not path.is_file():
            raise OSError(f"pair file {path} does not exist; found {sorted(found.values())}")
        return path
    if int(pairs) not in found:
        raise OSError(
            f"no m50_{pairs}_{pairs}_0.txt in {folder}; pair files for {sorted(found)} pairs exist"
        )
    return found[int(pairs)]


def load_ubc_patches(
    root: str | Path, subset: str | None = "liberty", *, pairs: int | str | None = None
) -> UBCPatches:
    """Open a subset of the UBC / Brown multi-view stereo patches (section 5.1).

    Parameters
    ----------
    root : str or path
        The folder holding the subset folders (or the subset folder itself with ``subset=None``).
    subset : str or None, optional
        Subset folder name, e.g. ``"liberty"``, ``"notredame"``, ``"yosemite"`` (default
        ``"liberty"``).
    pairs : int, str or None, optional
        Which pair file: the number n of ``m50_<n>_<n>_0.txt`` (e.g. 100000), a file name, or
        None for the largest present. A subset without pair files gives an empty ``pairs``.

    Returns
    -------
    UBCPatches
        Lazy patches, 3D point ids and the labelled pairs.

    Raises
    ------
    OSError
        A missing folder, ``info.txt``, bitmap or pair file.
    ValueError
        A malformed ``info.txt`` or pair file, or a pair naming a patch that does not exist.
    """
    folder = _subset_folder(root, subset)
    point_ids = _read_int_table(folder / "info.txt", 1, "3D point id per patch")[:, 0]
    count = point_ids.size
    if count == 0:
        raise ValueError(f"{folder / 'info.txt'} lists no patches")
    n_files = -(-count // PER_FILE)
    files = [folder / f"patches{n:04d}.bmp" for n in range(n_files)]
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise OSError(
            f"info.txt lists {count} patches, which need {n_files} bitmaps, but {folder} lacks "
            f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}"
        )
    table = np.empty(0, dtype=PAIR_DTYPE)
    path = _pair_file(folder, pairs)
    if path is not None:
        rows = _read_int_table(path, 7, "patchID1 3DpointID1 unused patchID2 3DpointID2 ...")
        i, pi, j, pj = rows[:, 0], rows[:, 1], rows[:, 3], rows[:, 4]
        bad = (np.minimum(i, j) < 0) | (np.maximum(i, j) >= count)
        if bad.any():
            line = int(np.flatnonzero(bad)[0]) + 1
            raise ValueError(
                f"{path}, pair {line}: patch index out of range for the {count} patches of info.txt"
            )
        if np.any(point_ids[i] != pi) or np.any(point_ids[j] != pj):
            warnings.warn(
                f"{path.name}: some 3D point ids differ from info.txt's; is_match follows the "
                "pair file",
                stacklevel=2,
            )
        table = np.empty(rows.shape[0], dtype=PAIR_DTYPE)
        table["i"], table["j"], table["is_match"] = i, j, pi == pj
    return UBCPatches(
        patches=PatchStack(files, count),
        point_ids=point_ids,
        pairs=table,
        subset=folder.name,
        root=folder,
    )


# ------------------------------------------------------------------------------------ the proxy
#: The scikit-image photographs of the proxy (greyscale; colour ones through rgb2gray).
PROXY_IMAGES = (
    "camera",
    "astronaut",
    "coffee",
    "chelsea",
    "rocket",
    "brick",
    "grass",
    "gravel",
    "moon",
    "page",
    "text",
    "coins",
)


def _proxy_images() -> list[np.ndarray]:
    from skimage import color, data, util

    images = []
    for name in PROXY_IMAGES:
        image = getattr(data, name)()
        if image.ndim == 3:
            image = color.rgb2gray(image[..., :3])
        images.append(util.img_as_float(image))
    return images


def _keypoints(image: np.ndarray, margin: int, spacing: int) -> np.ndarray:
    from skimage.feature import corner_harris, corner_peaks

    response = corner_harris(image, sigma=2.0)
    return corner_peaks(
        response, min_distance=spacing, threshold_rel=0.01, exclude_border=margin
    ).astype(np.float64)


def _view(
    image: np.ndarray,
    center: np.ndarray,
    rng: np.random.Generator,
    *,
    rotation: float,
    warp: float,
    shift: float,
    noise: float,
) -> np.ndarray:
    """One 64 × 64 uint8 view of ``image`` around ``center`` (row, col) through a random warp."""
    from skimage.transform import ProjectiveTransform
    from skimage.transform import warp as warp_image

    angle = np.deg2rad(rng.uniform(-rotation, rotation))
    c, s = np.cos(angle), np.sin(angle)
    linear = np.array([[c, -s], [s, c]]) @ (np.eye(2) + rng.uniform(-warp, warp, (2, 2)))
    half = (PATCH - 1) / 2
    matrix = np.eye(3)
    matrix[:2, :2] = linear
    matrix[2, :2] = rng.uniform(-warp, warp, 2) / (4 * PATCH)  # a slight perspective
    # output (x, y) -> centred -> warped -> input (x, y) around the keypoint
    to_centre = np.array([[1, 0, -half], [0, 1, -half], [0, 0, 1]])
    offset = center[::-1] + rng.uniform(-shift, shift, 2)
    to_image = np.array([[1, 0, offset[0]], [0, 1, offset[1]], [0, 0, 1]])
    transform = ProjectiveTransform(to_image @ matrix @ to_centre)
    patch = warp_image(image, transform, output_shape=(PATCH, PATCH), order=1, mode="reflect")
    patch = patch * np.exp(rng.uniform(-0.25, 0.25)) + rng.uniform(-0.1, 0.1)
    patch = patch + rng.normal(0.0, noise, patch.shape)
    return np.round(np.clip(patch, 0.0, 1.0) * 255).astype(np.uint8)


def ubc_proxy(
    pairs: int = 2000,
    *,
    seed: int = 0,
    rotation: float = 5.0,
    warp: float = 0.1,
    shift: float = 1.5,
    noise: float = 0.02,
) -> UBCPatches:
    """Pairs of 64 × 64 patches like the UBC data set's, made from scikit-image photographs.

    Construction (seeded, deterministic for a given ``seed``):

    1. The photographs :data:`PROXY_IMAGES` of :mod:`skimage.data` are converted to greyscale
       floats in [0, 1].
    2. Keypoints are the Harris corners (:func:`skimage.feature.corner_harris`, σ = 2) found by
       :func:`skimage.feature.corner_peaks` (at least 8 px apart, response >= 1 % of the
       image's maximum, at least 48 px from the border so every warped view stays inside).
       Each keypoint is one "3D point".
    3. A *view* of a keypoint is a 64 × 64 patch sampled (bilinear, :func:`skimage.transform.warp`)
       through a random projective map about the keypoint: a rotation uniform in
       ±``rotation`` degrees (the paper's residual rotation of canonically oriented patches),
       a linear distortion I + U(±``warp``)^{2×2} (scale, shear, aspect), a perspective term
       U(±``warp``)/256 per axis, and a shift of the centre uniform in ±``shift`` px (keypoint
       localisation error); then a contrast gain e^{U(±0.25)}, a brightness offset U(±0.1),
       Gaussian noise of standard deviation ``noise`` and rounding to uint8.
    4. Every pair draws a photograph (uniformly, so no image dominates) and a keypoint in it,
       and is that keypoint's *reference* view (identity geometry, with the photometric change
       and noise) next to a random view of either the same keypoint (corresponding) or of
       another keypoint of the same photograph at least 32 px away (non-corresponding, as the
       UBC negatives come from the same scene). Half the pairs correspond, in random order.

    Parameters
    ----------
    pairs : int, optional
        Number of pairs, >= 2 (default 2000); ``pairs // 2`` correspond.
    seed : int, optional
        Seed of :func:`numpy.random.default_rng` (default 0).
    rotation : float, optional
        Largest residual rotation in degrees (default 5).
    warp : float, optional
        Size of the random linear and perspective distortion (default 0.1).
    shift : float, optional
        Largest keypoint shift in pixels (default 1.5).
    noise : float, optional
        Standard deviation of the additive noise on the [0, 1] scale (default 0.02).

    Returns
    -------
    UBCPatches
        ``2 * pairs`` patches (pair m is patches 2m and 2m + 1), subset ``"proxy"``.

    Raises
    ------
    ValueError
        For ``pairs`` below 2.
    """
    pairs = _check_positive_int("pairs", pairs)
    if pairs < 2:
        raise ValueError(f"pairs must be >= 2 (one corresponding, one not), got {pairs}")
    rng = np.random.default_rng(seed)
    images = _proxy_images()
    keypoints = [_keypoints(image, 48, 8) for image in images]
    offsets = np.cumsum([0] + [len(k) for k in keypoints])  # global point id of each keypoint
    is_match = np.zeros(pairs, dtype=bool)
    is_match[: pairs // 2] = True
    rng.shuffle(is_match)
    patches = np.empty((2 * pairs, PATCH, PATCH), dtype=np.uint8)
    point_ids = np.empty(2 * pairs, dtype=np.int64)
    jitter = {"rotation": rotation, "warp": warp, "shift": shift, "noise": noise}
    still = {"rotation": 0.0, "warp": 0.0, "shift": 0.0, "noise": noise}
    for m, match in enumerate(is_match):
        n = int(rng.integers(len(images)))
        points = keypoints[n]
        a = int(rng.integers(len(points)))
        b = a
        if not match:
            far = np.flatnonzero(np.hypot(*(points - points[a]).T) >= PATCH / 2)
            b = int(rng.choice(far))
        patches[2 * m] = _view(images[n], points[a], rng, **still)
        patches[2 * m + 1] = _view(images[n], points[b], rng, **jitter)
        point_ids[2 * m], point_ids[2 * m + 1] = offsets[n] + a, offsets[n] + b
    table = np.empty(pairs, dtype=PAIR_DTYPE)
    table["i"] = np.arange(0, 2 * pairs, 2)
    table["j"] = table["i"] + 1
    table["is_match"] = is_match
    return UBCPatches(patches=patches, point_ids=point_ids, pairs=table, subset="proxy")
