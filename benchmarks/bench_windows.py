"""Wide Gaussian windows: the local FS-KDE's time as the window grows, against SciPy's filters.

    python benchmarks/bench_windows.py [--size 2048] [--repeat 3] [--json PATH]

Image: scikit-image's ``camera`` tiled to ``--size``² as float32 in [0, 1] (as ``bench_core.py``).
K = 8. For each Gaussian σ in 6, 17.6, 60 and 121.8 px (17.6 and 121.8 are the windows the
automatic segmentation chose on the RGB and grey images of ``bench_segment_speed.py``), at
stride 1 (up to σ = 60: beyond, a dense field takes minutes) and at the stride ``round(σ / 4)``
that such fields are sampled at:

* **xfskde** — ``xfskde.local_fskde(image, order=8, window="gaussian", size=σ, stride=s)``,
  its tiles on every core; the best of ``--repeat`` runs after one warm-up;
* **scipy direct** — the textbook way (``_naive.py``'s planes: central differences of the image
  padded in scipy's ``reflect`` mode, ``arctan2``, one ``cos`` and one ``sin`` per k), each of the
  18 real planes filtered by ``scipy.ndimage.correlate1d`` along both axes with the very taps of
  xfskde's window (``Window.profile()``), then sampled at the stride: O(σ) per pixel, so it runs
  only where σ ≤ 20 (one run);
* **scipy FFT** — the same planes and taps, each axis convolved by ``scipy.signal.fftconvolve``
  (cost independent of σ), then sampled: one run.

Both anchors are checked against xfskde (max |ΔF| / max |F|). "x / xfskde" is an anchor's time
over xfskde's: above 1, xfskde is faster.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import ndimage, signal
from skimage import data

import xfskde
from xfskde import Cos2KKernel
from xfskde.windows import make_window

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _naive import gradient_polar

ORDER = 8
SIGMAS = (6.0, 17.6, 60.0, 121.8)
DIRECT_MAX_SIGMA = 20.0
DENSE_MAX_SIGMA = 60.0


def _image(size: int) -> np.ndarray:
    camera = data.camera()
    reps = -(-size // camera.shape[0])
    return np.ascontiguousarray(np.tile(camera, (reps, reps))[:size, :size]) / np.float32(255)


def _planes(image: np.ndarray, pad: int) -> tuple[np.ndarray, np.ndarray]:
    """The padded image's W cos kΘ and -W sin kΘ planes, k = 0 .. ORDER (float32)."""
    theta, weight = gradient_polar(image, pad)
    k = np.arange(ORDER + 1, dtype=np.float32)[:, None, None]
    return weight * np.cos(k * theta), -weight * np.sin(k * theta)


def _anchor(image: np.ndarray, sigma: float, stride: int, fft: bool) -> np.ndarray:
    """F_k at the samples of ``stride``, by SciPy (direct or FFT) filters of the planes."""
    window = make_window("gaussian", sigma)
    taps, pad = window.profile(), window.radius + 1
    offset = (stride - 1) // 2
    inner = np.s_[
        pad + offset : pad + image.shape[0] : stride, pad + offset : pad + image.shape[1] : stride
    ]
    re, im = _planes(image, pad)
    out = np.empty((*re[0][inner].shape, ORDER + 1), np.complex64)
    h = Cos2KKernel(ORDER).coefficients
    for k in range(ORDER + 1):
        parts = []
        for plane in (re[k], im[k]):
            if fft:
                plane = signal.fftconvolve(plane, taps[::-1][None, :], mode="same", axes=1)
                plane = signal.fftconvolve(plane, taps[::-1][:, None], mode="same", axes=0)
            else:
                plane = ndimage.correlate1d(plane, taps, axis=1, mode="reflect")
                plane = ndimage.correlate1d(plane, taps, axis=0, mode="reflect")
            parts.append(plane[inner])
        out[..., k] = h[k] * (parts[0] + 1j * parts[1])
    return out


def _timed(fn: Callable[[], np.ndarray], repeat: int) -> tuple[float, np.ndarray]:
    best, result = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = np.asarray(fn())
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048, help="image side in pixels (2048)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of xfskde (3)")
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    args = parser.parse_args()
    image = _image(args.size)
    xfskde.local_fskde(image[:256, :256], order=ORDER, window="gaussian", size=6.0, stride=2)
    rows = []
    print(f"camera tiled to {args.size}², K = {ORDER}, Gaussian windows")
    print(f"{'sigma':>6} {'stride':>6} {'xfskde s':>9} {'Mpx/s':>7} {'direct s':>9} "
          f"{'x / xfskde':>10} {'FFT s':>7} {'x / xfskde':>10} {'max rel diff':>12}")  # fmt: skip
    for sigma in SIGMAS:
        strides = {max(1, round(sigma / 4))} | ({1} if sigma <= DENSE_MAX_SIGMA else set())
        for stride in sorted(strides):
            kwargs = {"order": ORDER, "window": "gaussian", "size": sigma, "stride": stride}
            seconds, ours = _timed(lambda kw=kwargs: xfskde.local_fskde(image, **kw), args.repeat)
            row = {"sigma": sigma, "stride": stride, "xfskde_s": seconds,
                   "mpx_s": image.size / seconds / 1e6}  # fmt: skip
            diffs = []
            for name, fft in (("direct", False), ("fft", True)):
                if not fft and sigma > DIRECT_MAX_SIGMA:
                    row[f"{name}_s"] = None
                    continue
                start = time.perf_counter()
                theirs = _anchor(image, sigma, stride, fft)
                row[f"{name}_s"] = time.perf_counter() - start
                diffs.append(float(np.abs(theirs - ours).max() / np.abs(ours).max()))
            row["max_rel_diff"] = max(diffs)
            rows.append(row)
            direct = row["direct_s"]
            print(
                f"{sigma:6.1f} {stride:6d} {seconds:9.3f} {row['mpx_s']:7.1f} "
                + (f"{direct:9.2f} {direct / seconds:10.1f} " if direct else f"{'-':>9} {'-':>10} ")
                + f"{row['fft_s']:7.2f} {row['fft_s'] / seconds:10.1f} {row['max_rel_diff']:12.1e}",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    sys.exit(main())
