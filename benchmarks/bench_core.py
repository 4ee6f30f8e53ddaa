"""Core speed: xfskde's local FS-KDE against its anchors, measured side by side in one run.

    python benchmarks/bench_core.py [--size 2048] [--repeat 5] [--threads 2] [--json PATH]

Image: scikit-image's ``camera`` photograph (512×512 uint8) tiled to ``--size``² (4×4 tiles at
2048), as float32 in [0, 1]; OpenCV, which takes only uint8, gets the same tiles as uint8.
Kernel order K = 8 throughout.

* **dense** (stride 1, box 15): ``xfskde.local_fskde(image, order=8, window="box", size=15)``
  against the textbook NumPy/SciPy version (``_naive.naive_dense``: ``np.gradient``, atan2,
  cos/sin per k, ``scipy.ndimage.uniform_filter``; checked to agree) and against the memory
  floor, ``np.full`` of the output's shape and dtype (a fresh allocation each run, as the real
  call makes).
* **cells** (box 8, stride 8): ``local_fskde(..., size=8, stride=8)`` — one FS-KDE per 8×8 cell:
  9 complex = 18 real numbers per cell (17 independent, F_0 being real) — against
  ``skimage.feature.hog`` (18 bins, 8×8 cells, 1×1-cell blocks) and OpenCV's ``HOGDescriptor``
  (8×8 cells, 1×1-cell blocks, 18 signed bins): 18 numbers per cell. OpenCV runs both ways a
  user can: the whole image in one call (one thread) and 8-row-aligned horizontal strips on a
  pool of ``--threads`` threads (output checked identical; the fastest strip height is kept).

Each function runs once to warm up (numba compiles on first use), then the best (min) of
``--repeat`` runs, timed with ``time.perf_counter``, is reported. xfskde itself spreads its tiles
over ``os.cpu_count()`` threads.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import scipy
import skimage
from skimage import data
from skimage.feature import hog

import xfskde
from xfskde.local import LocalParameters, local_fskde_block, sample_count

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _opencv
from _naive import naive_dense

ORDER = 8
DENSE_BOX = 15
CELL = 8
TOLERANCE = 1e-4  # relative agreement required between the naive version and xfskde

#: (numerator, denominator, label, target, "min" if the ratio must reach it, "max" if not exceed)
RATIOS = [
    ("naive", "dense", "dense: naive / xfskde", 10.0, "min"),
    ("dense", "floor", "dense: xfskde / floor", 3.0, "max"),
    ("skimage_hog", "cells", "cells: skimage HOG / xfskde", 20.0, "min"),
    ("opencv_whole", "cells", "cells: OpenCV whole / xfskde", 1.0, "min"),
    ("opencv_strips", "cells", "cells: OpenCV strips / xfskde", 1.0, "min"),
]


def _best_of(fn: Callable[[], object], repeat: int) -> list[float]:
    """Run ``fn`` once to warm up, then ``repeat`` times; the seconds of each timed run."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _machine() -> dict:
    import numba

    try:
        import cv2

        opencv = cv2.__version__
    except ImportError:
        opencv = None
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": _cpu_model(),
        "logical_cores": os.cpu_count(),
        "usable_cores": usable,
        "python": platform.python_version(),
        "xfskde": xfskde.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "opencv": opencv,
        "scikit-image": skimage.__version__,
    }


def _image(size: int) -> tuple[np.ndarray, np.ndarray]:
    """scikit-image's camera tiled to size × size: (float32 in [0, 1], uint8)."""
    camera = data.camera()
    reps = -(-size // camera.shape[0])
    image_u8 = np.ascontiguousarray(np.tile(camera, (reps, reps))[:size, :size])
    return image_u8.astype(np.float32) / np.float32(255), image_u8


def _measure(args: argparse.Namespace) -> tuple[dict, dict, dict]:
    """Time every case; return (seconds per case, case notes, numerical checks)."""
    image, image_u8 = _image(args.size)
    shape = (*image.shape, ORDER + 1)
    times: dict[str, list[float]] = {}
    notes: dict[str, str] = {}
    checks: dict[str, object] = {}

    def dense() -> np.ndarray:
        return xfskde.local_fskde(image, order=ORDER, window="box", size=DENSE_BOX)

    def cells() -> np.ndarray:
        return xfskde.local_fskde(image, order=ORDER, window="box", size=CELL, stride=CELL)

    def one_thread(size: int, stride: int) -> Callable[[], np.ndarray]:
        # the same core on one thread: shows how much the second core gave (or was taken away)
        params = LocalParameters(order=ORDER, window="box", size=size, stride=stride)
        rows, cols = (sample_count(n, stride) for n in image.shape)
        return lambda: local_fskde_block(
            image[None], params, image_shape=image.shape, rows=(0, rows), cols=(0, cols),
            out_dtype=np.complex64, threads=1,
        )  # fmt: skip

    times["floor"] = _best_of(lambda: np.full(shape, 1 + 1j, dtype=np.complex64), args.repeat)
    times["dense"] = _best_of(dense, args.repeat)
    times["dense_1"] = _best_of(one_thread(DENSE_BOX, 1), args.repeat)
    times["naive"] = _best_of(lambda: naive_dense(image, order=ORDER, size=DENSE_BOX), args.repeat)
    fast, slow = dense(), naive_dense(image, order=ORDER, size=DENSE_BOX)
    scale = float(np.abs(fast).max())
    diff = np.abs(fast - slow)
    depth = DENSE_BOX // 2 + 1
    checks["naive_vs_xfskde_max_rel"] = float(diff.max()) / scale
    checks["naive_vs_xfskde_interior_max_rel"] = (
        float(diff[depth:-depth, depth:-depth].max()) / scale
    )
    checks["naive_agrees"] = checks["naive_vs_xfskde_max_rel"] <= TOLERANCE
    del fast, slow, diff

    times["cells"] = _best_of(cells, args.repeat)
    times["cells_1"] = _best_of(one_thread(CELL, CELL), args.repeat)
    checks["cells_shape"] = list(cells().shape)
    times["skimage_hog"] = _best_of(
        lambda: hog(
            image,
            orientations=18,
            pixels_per_cell=(CELL, CELL),
            cells_per_block=(1, 1),
            feature_vector=False,
        ),
        args.repeat,
    )
    try:
        import cv2  # noqa: F401  (a benchmark-only dependency)
    except ImportError:
        notes["opencv"] = "not installed (pip install 'opencv-python-headless<5')"
        return times, notes, checks

    whole = _opencv.hog_whole(image_u8)
    reference = whole().copy()
    times["opencv_whole"] = _best_of(whole, args.repeat)
    identical = {}
    best_rows, best = None, None
    with ThreadPoolExecutor(args.threads) as pool:
        for rows in args.strip_rows:
            strips = _opencv.hog_strips(image_u8, pool, rows)
            identical[rows] = bool(np.array_equal(strips(), reference))
            trial = _best_of(strips, args.repeat)
            if best is None or min(trial) < min(best):
                best_rows, best = rows, trial
    times["opencv_strips"] = best
    notes["opencv_strips"] = f"{best_rows}-row strips + 8-row halo, {args.threads} threads"
    checks["opencv_strips_identical"] = identical
    checks["opencv_strips_without_halo_max_abs_diff"] = _opencv.strips_without_halo_differ(
        image_u8, best_rows
    )
    return times, notes, checks


def _ratios(seconds: dict[str, float]) -> dict[str, dict]:
    out = {}
    for num, den, label, target, kind in RATIOS:
        if num in seconds and den in seconds:
            value = seconds[num] / seconds[den]
            met = value >= target if kind == "min" else value <= target
            out[label] = {"value": value, "target": target, "kind": kind, "met": met}
    return out


def _report(args: argparse.Namespace, machine: dict, results: dict) -> str:
    seconds, notes, checks = results["seconds"], results["notes"], results["checks"]
    mpx = args.size**2 / 1e6
    reps = -(-args.size // 512)
    threads = os.cpu_count()
    lines = [
        f"# xfskde {machine['xfskde']} core benchmark, {machine['date']}",
        f"# image: skimage.data.camera() (512², uint8) tiled {reps}×{reps} → "
        f"{args.size}×{args.size} float32 in [0, 1] (uint8 for OpenCV); K = {ORDER}; "
        f"best of {args.repeat} after one warm-up",
        f"# CPU: {machine['cpu']}, {machine['logical_cores']} logical cores "
        f"({machine['usable_cores']} usable); load average {results['load_start']} at start, "
        f"{results['load_end']} at end",
        f"# python {machine['python']}, numpy {machine['numpy']}, scipy {machine['scipy']}, "
        f"numba {machine['numba']}, opencv {machine['opencv']}, "
        f"scikit-image {machine['scikit-image']}",
        "",
        f"{'case':<50}{'threads':>8}{'ms':>10}{'Mpx/s':>9}  numbers per cell",
    ]
    rows = [
        ("dense (stride 1, box 15), output "
         f"({args.size}, {args.size}, {ORDER + 1}) complex64", None, None, ""),
        ("  memory floor: np.full of the output", "floor", 1, ""),
        ("  xfskde.local_fskde", "dense", threads, ""),
        ("  same core on 1 thread (local_fskde_block)", "dense_1", 1, ""),
        ("  naive NumPy/SciPy (_naive.naive_dense)", "naive", 1, ""),
        (f"cells (box 8, stride 8), {args.size // 8}×{args.size // 8} cells", None, None, ""),
        ("  xfskde.local_fskde", "cells", threads, "18 real (9 complex; 17 indep.)"),
        ("  same core on 1 thread (local_fskde_block)", "cells_1", 1, ""),
        ("  skimage.feature.hog, 18 bins (0..180°)", "skimage_hog", 1, "18"),
        ("  OpenCV HOGDescriptor, whole image (0..360°)", "opencv_whole", 1, "18"),
        ("  OpenCV HOGDescriptor, strips (0..360°)", "opencv_strips", args.threads, "18"),
    ]  # fmt: skip
    for label, key, nthreads, per_cell in rows:
        if key is None:
            lines.append(label)
        elif key in seconds:
            s = seconds[key]
            lines.append(
                f"{label:<50}{nthreads:>8}{s * 1e3:>10.1f}{mpx / s:>9.1f}  {per_cell}".rstrip()
            )
    if "opencv_strips" in notes:
        lines.append(f"    ({notes['opencv_strips']})")
    if "opencv" in notes:
        lines.append(f"  OpenCV: {notes['opencv']}")
    lines += ["", f"{'ratio':<34}{'value':>8}  target"]
    for label, r in results["ratios"].items():
        sign = "≥" if r["kind"] == "min" else "≤"
        verdict = "met" if r["met"] else "NOT met"
        lines.append(f"{label:<34}{r['value']:>8.2f}  {sign} {r['target']:g}  {verdict}")
    lines += [
        "",
        "checks:",
        f"  naive vs xfskde dense, max |diff| / max |F|: {checks['naive_vs_xfskde_max_rel']:.1e} "
        f"on every pixel, edges included (same reflect boundary); tolerance {TOLERANCE:g}: "
        + ("OK" if checks["naive_agrees"] else "FAILED"),
    ]
    if "opencv_strips_identical" in checks:
        same = checks["opencv_strips_identical"]
        lines.append(
            "  OpenCV strips (8-row halo) identical to the whole-image call: "
            + ", ".join(f"{rows} rows {ok}" for rows, ok in same.items())
        )
        lines.append(
            "  OpenCV strips with no halo differ from it next to each cut: max |diff| "
            f"{checks['opencv_strips_without_halo_max_abs_diff']:.3f}"
        )
    return "\n".join(lines)


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark, print its table, and return (and optionally write) the results."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=2048, help="image side in pixels (2048)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case (5)")
    parser.add_argument("--threads", type=int, default=2, help="OpenCV strip pool threads (2)")
    parser.add_argument(
        "--strip-rows",
        type=int,
        nargs="+",
        default=[64, 128, 256, 512],
        help="OpenCV strip heights to try (multiples of 8); the fastest is reported",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    if args.size < 64 or args.size % CELL:
        parser.error(f"--size must be a multiple of {CELL}, at least 64; got {args.size}")
    if args.repeat < 1 or args.threads < 1:
        parser.error("--repeat and --threads must be at least 1")
    if any(r <= 0 or r % CELL for r in args.strip_rows):
        parser.error(f"--strip-rows must be positive multiples of {CELL}")

    machine = _machine()
    load_start = _load()
    times, notes, checks = _measure(args)
    seconds = {name: min(t) for name, t in times.items()}
    results = {
        "size": args.size,
        "order": ORDER,
        "repeat": args.repeat,
        "threads": args.threads,
        "load_start": load_start,
        "load_end": _load(),
        "seconds": seconds,
        "all_seconds": times,
        "mpx_per_s": {name: args.size**2 / 1e6 / s for name, s in seconds.items()},
        "notes": notes,
        "checks": checks,
        "ratios": _ratios(seconds),
    }
    print(_report(args, machine, results))
    out = {"machine": machine, **results}
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str))
    return out


if __name__ == "__main__":
    main()
