"""Background skipped: a slide that is mostly glass, with and without ``mask="auto"``.

A synthetic brightfield slide of N² RGB pixels (a section of pink-purple tissue on near-white
glass, ``--background`` of it glass, 0.6 by default) is written once as a pyramidal tiled TIFF
(256² tiles, levels down to 2048 pixels, as scanners write them). With ``--kind
fluorescence`` the slide is three 16-bit channels of counts instead (the tissue's signal, 200
to 2 600 counts over a camera offset of 100, on a dark background with read noise), masked
with ``mask="fluorescence"``.
Each measurement runs in a fresh child process: ``open_image`` → ``local_fskde(order=8,
window="gaussian", size=4, stride=4)`` → ``write_coefficients`` to a Zarr store, with Dask's
threaded scheduler on ``--workers`` threads, once without a mask and once with
``mask="auto"`` (the tissue mask, computed on the 2048-pixel level, is part of the masked time),
in blocks of ``--chunks`` pixels (1024).

Reported: wall time of each, their ratio (the target: masked / unmasked <= 0.5 at 60 %
background), the fraction of blocks skipped, and whether the masked store equals the unmasked
one on every sample inside the mask (it must, bit for bit).

    python benchmarks/bench_mask.py                 # 8192², 60 % glass
    python benchmarks/bench_mask.py --size 2048     # a quick check that it runs
    python benchmarks/bench_mask.py --kind fluorescence   # 16-bit counts, mask="fluorescence"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
import dask
import numpy as np
import xfskde

source, out, mask = sys.argv[1], sys.argv[2], sys.argv[4]
workers, chunks = int(sys.argv[3]), int(sys.argv[5])
dask.config.set(scheduler="threads", num_workers=workers)
start = time.perf_counter()
image = xfskde.open_image(source, chunks=chunks)
field = xfskde.local_fskde(image, order=8, window="gaussian", size=4, stride=4,
                           mask=None if mask == "none" else mask)
xfskde.write_coefficients(field, out)
seconds = time.perf_counter() - start
graph = field.data.__dask_graph__()
skipping = [layer for name, layer in graph.layers.items() if "skipping" in name]
tasks = list(skipping[0].values()) if skipping else []
skipped = sum(isinstance(t, tuple) and t[0] is np.full for t in tasks)
print(json.dumps({"seconds": seconds, "blocks": int(np.prod(field.data.numblocks)),
                  "skipped": skipped}))
"""


def _slide(path: Path, side: int, background: float, kind: str = "brightfield") -> float:
    """Write the slide, a pyramidal tiled TIFF as scanners write them (levels halved down to
    at most 2048 pixels); return the fraction of glass (or dark background) it really has.

    The tissue is a section of a few large overlapping ellipses around the middle of the glass,
    grown until it covers ``1 - background`` of the slide, with a striped texture.
    """
    import numpy as np
    import tifffile

    rng = np.random.default_rng(0)
    yy, xx = np.ogrid[0:side, 0:side]
    tissue = np.zeros((side, side), bool)
    while tissue.mean() < 1 - background:
        cy, cx = rng.uniform(0.3, 0.7, 2) * side
        ry, rx = rng.uniform(0.12, 0.25, 2) * side
        tissue |= (yy - cy) ** 2 / ry**2 + (xx - cx) ** 2 / rx**2 < 1

    def tiles(level: int):
        step = 2**level
        mask = tissue[::step, ::step]
        n = mask.shape[0]
        for r in range(0, n, 256):
            for c in range(0, n, 256):
                t = mask[r : r + 256, c : c + 256]
                texture = np.sin(0.3 * step * (np.arange(c, c + t.shape[1])[None, :] + r))
                if kind == "fluorescence":  # counts: signal over the camera's offset
                    dark = 100 + rng.normal(0, 4, (*t.shape, 3))
                    signal = np.array([1500, 800, 300]) * (1 + 0.75 * texture[..., None])
                    signal = rng.poisson(signal + 5) + 100 + rng.normal(0, 4, (*t.shape, 3))
                    tile = np.where(t[..., None], signal, dark).clip(0, 65535).astype(np.uint16)
                else:
                    glass = 242 + rng.normal(0, 3, (*t.shape, 3))
                    noise = rng.normal(0, 15, (*t.shape, 3))
                    stain = np.array([190, 110, 170]) + 40 * texture[..., None] + noise
                    tile = np.where(t[..., None], stain, glass).clip(0, 255).astype(np.uint8)
                yield np.pad(tile, ((0, 256 - t.shape[0]), (0, 256 - t.shape[1]), (0, 0)))

    levels = max(0, int(np.ceil(np.log2(side / 2048))))
    with tifffile.TiffWriter(path, bigtiff=True) as tif:
        for level in range(levels + 1):
            n = -(-side // 2**level)
            options = {"subifds": levels} if level == 0 else {"subfiletype": 1}
            dtype = np.uint16 if kind == "fluorescence" else np.uint8
            tif.write(tiles(level), shape=(n, n, 3), dtype=dtype, tile=(256, 256),
                      photometric="rgb", **options)  # fmt: skip
    return float(1 - tissue.mean())


def _run(source: Path, out: Path, workers: int, mask: str, chunks: int) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(source), str(out), str(workers), mask, str(chunks)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--background", type=float, default=0.6)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--chunks", type=int, default=1024, help="target block side")
    parser.add_argument("--kind", choices=["brightfield", "fluorescence"], default="brightfield")
    args = parser.parse_args(argv)
    method = "fluorescence" if args.kind == "fluorescence" else "auto"
    import numpy as np

    import xfskde

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        source = folder / "slide.tif"
        glass = _slide(source, args.size, args.background, args.kind)
        plain = _run(source, folder / "plain.zarr", args.workers, "none", args.chunks)
        masked = _run(source, folder / "masked.zarr", args.workers, method, args.chunks)
        a = xfskde.open_coefficients(folder / "plain.zarr").values
        b = xfskde.open_coefficients(folder / "masked.zarr").values
        kept = np.abs(b).sum(-1) > 0
        equal = bool(np.array_equal(a[kept], b[kept]))
    report = {
        "size": args.size, "kind": args.kind, "mask": method, "glass": round(glass, 3),
        "workers": args.workers,
        "chunks": args.chunks,
        "unmasked_s": round(plain["seconds"], 2), "masked_s": round(masked["seconds"], 2),
        "ratio": round(masked["seconds"] / plain["seconds"], 3),
        "blocks": masked["blocks"], "skipped": masked["skipped"],
        "samples_kept": round(float(kept.mean()), 3), "equal_inside_mask": equal,
        "load_1min": round(os.getloadavg()[0], 2),
    }  # fmt: skip
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()
