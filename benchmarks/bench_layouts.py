"""Inputs laid out badly for random access, against the same image as a tiled TIFF.

One N² image (oriented stripes and noise; uint8 RGB, or uint16 grey with ``--grey``) is written
as a tiled TIFF (256² tiles: the anchor), TIFFs of strips (one row, 16 rows, all rows; raw and
deflated), an LZW BigTIFF, Zarr v3 stores (one chunk; 1 x N row chunks; 256² chunks in 2048²
shards), an NPY and a PNG file. Each is given to ``xfskde coefficients --stride 4`` in a fresh
child process; reported: wall time, the child's peak RSS, whether its store equals the anchor's
(every value) and the first warning it printed.

    python benchmarks/bench_layouts.py                    # 8192² RGB (~3 min on 2 cores)
    python benchmarks/bench_layouts.py --size 1024 --grey # a quick check that it runs
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import tifffile
import zarr
from PIL import Image

CHILD = """
import resource, sys
from xfskde import cli
code = cli.main(sys.argv[1:])
print("maxrss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


def pixels(n: int, grey: bool) -> np.ndarray:
    y, x = np.mgrid[0:n, 0:n].astype(np.float32)
    g = np.sin((x * np.cos(0.7) + y * np.sin(0.7)) * 0.4) * 0.4 + 0.5
    g = np.clip(g + np.random.default_rng(0).normal(0, 0.08, g.shape), 0, 1)
    if grey:
        return (g * 60000).astype(np.uint16)
    return (np.stack([g, g[:, ::-1], g.T], -1) * 255).astype(np.uint8)


def write_layouts(a: np.ndarray, folder: Path) -> dict[str, Path]:
    n, ph, extra = a.shape[0], "rgb" if a.ndim == 3 else "minisblack", a.shape[2:]
    files = {}

    def tiff(name: str, **options) -> None:
        files[name] = folder / f"{name}.tif"
        tifffile.imwrite(files[name], a, photometric=ph, **options)

    def store(name: str, chunks: tuple[int, int], shards: tuple[int, int] | None = None) -> None:
        files[name] = folder / f"{name}.zarr"
        z = zarr.create_array(files[name], shape=a.shape, dtype=a.dtype, chunks=chunks + extra,
                              shards=None if shards is None else shards + extra)  # fmt: skip
        z[...] = a

    tiff("tiled", tile=(256, 256))
    for rows in (1, 16, n):
        tiff(f"strips{rows}", rowsperstrip=rows)
        tiff(f"strips{rows}-deflate", rowsperstrip=rows, compression="zlib")
    tiff("lzw-bigtiff", rowsperstrip=16, compression="lzw", bigtiff=True)
    store("zarr-one-chunk", (n, n))
    store("zarr-rows", (1, n))
    store("zarr-sharded", (256, 256), (min(n, 2048), min(n, 2048)))
    files["npy"] = folder / "a.npy"
    np.save(files["npy"], a)
    files["png"] = folder / "a.png"
    Image.fromarray(a).save(files["png"], compress_level=1)
    return files


def run(source: Path, out: Path) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in GiB and the first warning of one child's coefficients."""
    args = ["coefficients", str(source), str(out), "--stride", "4", "--no-progress"]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        return wall, float("nan"), "FAILED: " + done.stderr.strip().splitlines()[-1][:100]
    rss = [line for line in done.stderr.splitlines() if line.startswith("maxrss")]
    warned = [line for line in done.stderr.splitlines() if "warning" in line]
    return wall, int(rss[-1].split()[1]) / 2**20, (warned[0][:100] if warned else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--grey", action="store_true", help="uint16 grey instead of uint8 RGB")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = write_layouts(pixels(options.size, options.grey), Path(tmp))
        anchor = None
        print("| layout | time (s) | peak RSS (GiB) | equals the tiled TIFF's | warning |")
        print("| --- | --- | --- | --- | --- |")
        for name, path in files.items():
            out = Path(tmp) / f"{name}-fskde.zarr"
            wall, rss, warned = run(path, out)
            values = zarr.open_group(out, mode="r")["fskde"][...] if out.exists() else None
            anchor = values if anchor is None else anchor
            same = values is not None and np.array_equal(values, anchor, equal_nan=True)
            print(f"| {name} | {wall:.1f} | {rss:.2f} | {'yes' if same else 'NO'} | {warned} |")


if __name__ == "__main__":
    main()
