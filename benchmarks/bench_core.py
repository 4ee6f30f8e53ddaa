"""Core speed: xfskde's local FS-KDE against its anchors, measured side by side in one run.

Run ``python benchmarks/bench_core.py`` (options: ``--size``, ``--repeat``, ``--json``).

* **dense** (stride 1, box 15, K = 8) against a naive NumPy/SciPy version (atan2, cos/sin per
  coefficient, ``scipy.ndimage.uniform_filter``) and against the memory floor: ``np.full`` of the
  output's shape and dtype (a fresh allocation, as the real call makes).
* **cells** (box 8, stride 8, K = 8: 9 complex = 18 real numbers per cell, 17 independent since
  F_0 is real) against ``skimage.feature.hog`` and OpenCV's ``HOGDescriptor`` with 8×8 cells and
  18 signed bins (18 numbers per cell), OpenCV run whole (one thread) and in horizontal strips
  with an 8-row overlap on a pool of ``--threads`` threads (identical output, checked).

The image is scikit-image's ``camera`` photograph (512×512) tiled to ``--size``² float32 in
[0, 1] (uint8 for OpenCV, which needs it). Each function runs once to warm up (numba compiles on
first use), then the best of ``--repeat`` runs is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import ndimage
from skimage import data
from skimage.feature import hog

import xfskde
from xfskde import Cos2KKernel

ORDER = 8


def best_time(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def naive_dense(image: np.ndarray, size: int = 15) -> np.ndarray:
    """The textbook version: angles by atan2, one cos and sin per coefficient, scipy filters."""
    padded = np.pad(image, 1, mode="symmetric")
    gx = 0.5 * (padded[1:-1, 2:] - padded[1:-1, :-2])
    gy = 0.5 * (padded[2:, 1:-1] - padded[:-2, 1:-1])
    theta = np.arctan2(gy, gx)
    weight = np.hypot(gx, gy)
    H = Cos2KKernel(ORDER).coefficients
    out = np.empty((*image.shape, ORDER + 1), dtype=np.complex64)
    for k in range(ORDER + 1):
        re = ndimage.uniform_filter(weight * np.cos(k * theta), size, mode="reflect")
        im = ndimage.uniform_filter(-weight * np.sin(k * theta), size, mode="reflect")
        out[..., k] = H[k] * (re + 1j * im)
    return out


def opencv_hog(image_u8: np.ndarray, threads: int):
    """OpenCV HOG with 8x8 cells, 1x1-cell blocks, 18 signed bins: whole image and strips."""
    import cv2

    cv2.setNumThreads(1)
    h, w = image_u8.shape

    def descriptor(height: int):
        return cv2.HOGDescriptor((w, height), (8, 8), (8, 8), (8, 8), 18, 1, -1.0, 0, 0.2, False,
                                 64, True)  # fmt: skip

    whole_hog = descriptor(h)

    def whole():
        return whole_hog.compute(image_u8)

    strip = max(64, (h // (4 * threads)) // 8 * 8)
    jobs = []
    for top in range(0, h, strip):
        lo, hi = max(0, top - 8), min(h, top + strip + 8)
        jobs.append((top, lo, hi, descriptor(hi - lo)))

    def one(job):
        top, lo, hi, hog_ = job
        cells = hog_.compute(image_u8[lo:hi]).reshape(w // 8, (hi - lo) // 8, 18)
        first = (top - lo) // 8
        return cells[:, first : first + min(strip, h - top) // 8]

    pool = ThreadPoolExecutor(threads)

    def strips():
        return np.concatenate(list(pool.map(one, jobs)), axis=1)

    return whole, strips, pool


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048, help="image side in pixels")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="OpenCV pool")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)

    reps = -(-args.size // 512)
    image_u8 = np.tile(data.camera(), (reps, reps))[: args.size, : args.size]
    image = image_u8.astype(np.float32) / 255
    mpx = image.size / 1e6
    results: dict[str, float] = {}

    results["floor"] = best_time(
        lambda: np.full((*image.shape, ORDER + 1), 1 + 1j, dtype=np.complex64), args.repeat
    )
    results["dense"] = best_time(
        lambda: xfskde.local_fskde(image, order=ORDER, window="box", size=15), args.repeat
    )
    results["naive"] = best_time(lambda: naive_dense(image), max(1, args.repeat // 2))
    inner = np.s_[9:-9, 9:-9]
    check = np.abs(
        xfskde.local_fskde(image, order=ORDER, window="box", size=15)[inner]
        - naive_dense(image)[inner]
    ).max()

    results["cells"] = best_time(
        lambda: xfskde.local_fskde(image, order=ORDER, window="box", size=8, stride=8), args.repeat
    )
    results["skimage_hog"] = best_time(
        lambda: hog(
            image,
            orientations=18,
            pixels_per_cell=(8, 8),
            cells_per_block=(1, 1),
            feature_vector=False,
        ),
        max(1, args.repeat // 2),
    )
    try:
        whole, strips, pool = opencv_hog(image_u8, args.threads)
        same = np.array_equal(np.asarray(whole()).reshape(args.size // 8, args.size // 8, 18),
                              strips().reshape(args.size // 8, args.size // 8, 18))  # fmt: skip
        results["opencv_whole"] = best_time(whole, args.repeat)
        results["opencv_strips"] = best_time(strips, args.repeat)
        pool.shutdown()
    except ImportError:
        same = None

    import numba

    print(f"# xfskde {xfskde.__version__} core benchmark, {args.size}² camera tiles, K = {ORDER}")
    machine = platform.processor() or platform.machine()
    load = os.getloadavg()[0]
    print(f"# {machine}, {os.cpu_count()} cores, load {load:.2f}; numpy {np.__version__}, "
          f"numba {numba.__version__}")  # fmt: skip
    print(f"{'case':<34}{'ms':>10}{'Mpx/s':>10}")
    for name, label in [
        ("floor", "np.full of the dense output"),
        ("dense", "xfskde dense (box 15, stride 1)"),
        ("naive", "naive NumPy/SciPy dense"),
        ("cells", "xfskde cells (box 8, stride 8)"),
        ("skimage_hog", "skimage hog (18 bins, 8x8)"),
        ("opencv_whole", "OpenCV HOG, whole image"),
        ("opencv_strips", f"OpenCV HOG, strips x {args.threads} threads"),
    ]:
        if name in results:
            print(f"{label:<34}{results[name] * 1e3:>10.1f}{mpx / results[name]:>10.0f}")
    ratios = {
        "naive / dense (target >= 10)": results["naive"] / results["dense"],
        "dense / floor (target <= 3)": results["dense"] / results["floor"],
        "skimage hog / cells (target >= 20)": results["skimage_hog"] / results["cells"],
    }
    if "opencv_whole" in results:
        ratios["opencv whole / cells (target >= 1)"] = results["opencv_whole"] / results["cells"]
        ratios["opencv strips / cells (target >= 1)"] = results["opencv_strips"] / results["cells"]
    print()
    for label, value in ratios.items():
        print(f"{label:<40}{value:>8.2f}")
    print(f"\nnaive vs xfskde, interior max |diff|: {check:.2e}; OpenCV strips identical: {same}")
    out = {"size": args.size, "seconds": results, "ratios": ratios}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return out


if __name__ == "__main__":
    main()
