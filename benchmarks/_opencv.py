"""OpenCV's HOG with 8×8 cells and 18 signed bins, run whole and in horizontal strips: an anchor.

``cv2.HOGDescriptor`` with ``blockSize = blockStride = cellSize = (8, 8)`` makes every block one
cell, so its descriptor is one 18-bin histogram per 8×8 cell (normalised per block, L2-Hys, as
OpenCV always does). ``signedGradient=True`` spreads the 18 bins over 0..360°, the same range as
the FS-KDE's e^{-ikθ} (scikit-image's HOG has no signed option: its 18 bins cover 0..180°).
``gammaCorrection=False`` reads the pixels as they are. OpenCV's HOG takes only uint8 images.

The whole-image call runs on one thread (``HOGDescriptor.compute`` has no internal parallelism;
``cv2.setNumThreads(1)`` is set so that OpenCV's own pool cannot compete with ours). The fastest
way a user can run it on several cores is to cut the image into horizontal strips and call
``compute`` from a thread pool (OpenCV releases the GIL). Strips start on multiples of 8 rows so
cells line up, and each strip also reads one cell row (8 pixels) beyond each cut, whose cells are
then dropped: without that halo the gradient on a strip's first and last rows would be taken by
OpenCV's border reflection instead of from the neighbouring pixels, and the cells next to each
cut would differ from the whole-image call (:func:`strips_without_halo_differ` measures this).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["BINS", "CELL", "hog_strips", "hog_whole", "strips_without_halo_differ"]

CELL = 8
BINS = 18


def _descriptor(width: int, height: int):
    """A HOGDescriptor whose one window is ``width × height`` and whose blocks are single cells."""
    import cv2

    return cv2.HOGDescriptor(
        (width, height), (CELL, CELL), (CELL, CELL), (CELL, CELL), BINS,
        1,  # derivAperture
        -1.0,  # winSigma: OpenCV's default Gaussian weighting within each block
        cv2.HOGDESCRIPTOR_L2HYS,  # histogramNormType
        0.2,  # L2HysThreshold
        False,  # gammaCorrection: read the pixels as they are
        64,  # nlevels (multi-scale detection only)
        True,  # signedGradient: 0..360°, like the FS-KDE
    )  # fmt: skip


def _check(image: np.ndarray) -> tuple[int, int]:
    if image.dtype != np.uint8 or image.ndim != 2:
        raise ValueError(f"OpenCV's HOG needs a 2-D uint8 image, got {image.dtype} {image.shape}")
    height, width = image.shape
    if height % CELL or width % CELL:
        raise ValueError(f"image sides must be multiples of {CELL}, got {image.shape}")
    return height, width


def hog_whole(image: np.ndarray) -> Callable[[], np.ndarray]:
    """A call computing the cells of the whole image at once: (rows/8, cols/8, 18) float32."""
    import cv2

    cv2.setNumThreads(1)
    height, width = _check(image)
    hog = _descriptor(width, height)

    def run() -> np.ndarray:
        # OpenCV lists blocks column by column: (x, y, bin)
        return hog.compute(image).reshape(width // CELL, height // CELL, BINS).transpose(1, 0, 2)

    return run


def hog_strips(
    image: np.ndarray, pool: ThreadPoolExecutor, strip_rows: int, halo: int = CELL
) -> Callable[[], np.ndarray]:
    """A call computing the same cells strip by strip on ``pool``: (rows/8, cols/8, 18) float32.

    Strips are ``strip_rows`` high (a multiple of 8) and read ``halo`` extra rows (a multiple of
    8, or 0) beyond each cut.
    """
    import cv2

    cv2.setNumThreads(1)
    height, width = _check(image)
    if strip_rows <= 0 or strip_rows % CELL or halo < 0 or halo % CELL:
        raise ValueError(f"strip_rows and halo must be multiples of {CELL}")
    jobs = []
    for top in range(0, height, strip_rows):
        bottom = min(height, top + strip_rows)
        lo, hi = max(0, top - halo), min(height, bottom + halo)
        keep = slice((top - lo) // CELL, (bottom - lo) // CELL)
        jobs.append((lo, hi, keep, _descriptor(width, hi - lo)))
    out = np.empty((height // CELL, width // CELL, BINS), dtype=np.float32)

    def one(job) -> None:
        lo, hi, keep, hog = job
        cells = hog.compute(image[lo:hi]).reshape(width // CELL, (hi - lo) // CELL, BINS)
        out[lo // CELL + keep.start : lo // CELL + keep.stop] = cells[:, keep].transpose(1, 0, 2)

    def run() -> np.ndarray:
        list(pool.map(one, jobs))
        return out

    return run


def strips_without_halo_differ(image: np.ndarray, strip_rows: int) -> float:
    """Largest |difference| between the whole-image cells and strips cut with no halo."""
    whole = hog_whole(image)()
    with ThreadPoolExecutor(1) as pool:
        bare = hog_strips(image, pool, strip_rows, halo=0)()
    return float(np.abs(whole - bare).max())
