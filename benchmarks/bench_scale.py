"""Out-of-core scale: tiled TIFF / Zarr → stride-8 FS-KDE cells → Zarr, on 2 cores.

A real photograph (scikit-image's ``camera``, 512²) is tiled to N² uint8 pixels and written once
to a tiled TIFF (512² tiles) and to a Zarr v3 array (the same chunks). Each measurement then runs
in a fresh child process — so that its peak RSS is its own — which opens the input lazily,
computes ``local_fskde(order=8, window="box", size=8, stride=8)`` with Dask's threaded scheduler
on ``--workers`` threads and writes the coefficients to a Zarr store.

For the largest size the TIFF run is repeated without the write ("tiff nowrite": read and
compute only), so that the cost of writing shows by difference in the same run.

Both faces are timed alike: each child first runs its job on a 256² image, untimed (numba
compiles on first use, or loads its cache), then runs the whole job ``--repeat`` times (default
3); the first run (a fresh process's: its pages, pools and files new) and the median are reported.
The in-memory face is ``local_fskde`` on the same image already held as a NumPy array (read before
the clock starts), in another child right before each run (the cores are shared: a ratio of two
measurements minutes apart would mostly measure the load). Reported: seconds (first and median),
Mpx/s and ns/px of the median, peak RSS of the child, the in-memory median rate, the ratio of the
two medians, and the 1-minute load average.

The CPU columns say what bounds that ratio. "CPU s" is the median CPU time of a run (user and
system, all threads of the child), "memory" the in-memory run's. The in-memory run keeps the
cores busy (about 0.97 of 2 cores at 16384²), so an out-of-core run, which does the same compute
and reads, decodes, encodes and writes besides, can reach at most "CPU bound" = memory CPU / run
CPU of the in-memory rate on the same cores, however well its tasks overlap: the rest of the gap
to that bound is idle cores, the rest of the gap to 1 is the work of reading and writing itself.

    python benchmarks/bench_scale.py                   # 1k, 4k, 16k, 32k from TIFF, 32k from Zarr
    python benchmarks/bench_scale.py --quick           # 1k and 2k only: checks that it runs
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
import dask
import numpy as np
import xfskde

mode, source, out, workers, chunks = sys.argv[1:6]
workers, chunks = int(workers), int(chunks)
repeat = int(sys.argv[6])
if mode == "memory":  # the image already in memory, as a NumPy array
    import tifffile
    image = tifffile.imread(source)
    xfskde.local_fskde(image[:256, :256].copy(), order=8, window="box", size=8, stride=8)

    def job():
        xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)
else:
    import dask.array as da
    warm = da.zeros((256, 256), np.uint8, chunks=128)  # compile the blockwise path first
    xfskde.local_fskde(warm, order=8, window="box", size=8, stride=8).compute()

    def job():
        image = xfskde.open_image(source, chunks=chunks)
        field = xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)
        with dask.config.set(scheduler="threads", num_workers=workers):
            if mode == "nowrite":  # read and compute only: what the write costs, by difference
                field.data.sum().compute()
            else:
                xfskde.write_coefficients(field, out, overwrite=True)
times, cpu = [], []
for _ in range(repeat):
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    job()
    times.append(time.perf_counter() - start)
    after = resource.getrusage(resource.RUSAGE_SELF)  # every thread's CPU, user and system
    cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
pixels = int(np.prod(xfskde.open_image(source).shape[:2]))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
print(json.dumps({"times": times, "cpu": cpu, "pixels": pixels, "peak_rss_gib": peak}))
"""


def make_inputs(size: int, folder: Path) -> tuple[Path, Path]:
    """Tile the camera photograph to size² and write it to a tiled TIFF and to Zarr, by strips."""
    import numpy as np
    import tifffile
    import zarr
    from skimage import data

    tif, zar = folder / f"camera-{size}.tif", folder / f"camera-{size}.zarr"
    if tif.exists() and zar.exists():
        return tif, zar
    photo = data.camera()
    strip = np.tile(photo, (1, -(-size // 512)))[:, :size]
    tiles = (strip[r : r + 512, c : c + 512] for _ in range(0, size, 512)
             for r in range(0, 512, 512) for c in range(0, size, 512))  # fmt: skip
    tifffile.imwrite(tif, tiles, shape=(size, size), dtype=np.uint8, tile=(512, 512))
    arr = zarr.create_array(zar, shape=(size, size), chunks=(512, 512), dtype="uint8",
                            dimension_names=("y", "x"), overwrite=True)  # fmt: skip
    for r in range(0, size, 512):
        arr[r : r + 512] = np.broadcast_to(strip, (512, size))
    return tif, zar


def run_child(mode: str, source: Path, out: Path, workers: int, chunks: int, repeat: int) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(source), str(out), str(workers), str(chunks),
         str(repeat)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    r = json.loads(result.stdout.strip().splitlines()[-1])
    times, cpu = r.pop("times"), r.pop("cpu")
    return {**r, "first_seconds": times[0], "seconds": float(statistics.median(times)),
            "times": times, "cpu_seconds": float(statistics.median(cpu)), "cpu": cpu}  # fmt: skip


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", help="image sides (default 1024 4096 16384 32768)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunks", type=int, default=4096, help="Dask chunk side in pixels")
    parser.add_argument("--folder", help="where inputs and outputs go (default: a temp dir)")
    parser.add_argument(
        "--quick", action="store_true", help="small sizes (1024 2048) and no Zarr-input run"
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each job (3)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    if args.sizes is None:
        args.sizes = [1024, 2048] if args.quick else [1024, 4096, 16384, 32768]

    folder = Path(args.folder or tempfile.mkdtemp(prefix="xfskde-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        big = max(args.sizes)
        print(f"{'input':<20}{'first s':>9}{'median s':>9}{'Mpx/s':>8}{'ns/px':>8}"
              f"{'peak RSS':>12}{'memory Mpx/s':>14}{'/ memory':>10}{'CPU s':>7}{'memory':>8}"
              f"{'CPU bound':>10}{'load':>6}")  # fmt: skip
        for size in args.sizes:
            tif, zar = make_inputs(size, folder)
            sources = [("tiff", tif)]
            if size == big and not args.quick:
                sources += [("tiff nowrite", tif), ("zarr", zar)]
            for kind, source in sources:
                memory = run_child("memory", tif, folder / "unused", args.workers, args.chunks,
                                   args.repeat)  # fmt: skip
                memory_rate = memory["pixels"] / memory["seconds"] / 1e6
                out = folder / f"out-{size}-{kind}.zarr"
                mode = "nowrite" if kind.endswith("nowrite") else "disk"
                r = run_child(mode, source, out, args.workers, args.chunks, args.repeat)
                rate = r["pixels"] / r["seconds"] / 1e6
                row = {"size": size, "input": kind, **r, "mpx_s": rate,
                       "memory_mpx_s": memory_rate, "memory_times": memory["times"],
                       "ratio_to_memory": rate / memory_rate,
                       "memory_cpu_seconds": memory["cpu_seconds"],
                       "cpu_bound": memory["cpu_seconds"] / r["cpu_seconds"],
                       "load": os.getloadavg()[0]}  # fmt: skip
                rows.append(row)
                print(f"{f'{size}² {kind}':<20}{r['first_seconds']:>9.2f}{r['seconds']:>9.2f}"
                      f"{rate:>8.0f}{1e9 * r['seconds'] / r['pixels']:>8.2f}"
                      f"{r['peak_rss_gib']:>8.2f} GiB{memory_rate:>14.0f}"
                      f"{row['ratio_to_memory']:>10.2f}{r['cpu_seconds']:>7.2f}"
                      f"{memory['cpu_seconds']:>8.2f}{row['cpu_bound']:>10.2f}"
                      f"{row['load']:>6.1f}")  # fmt: skip
                shutil.rmtree(out, ignore_errors=True)
        print(f"\nload {os.getloadavg()[0]:.2f}; parent peak RSS "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")  # fmt: skip
    finally:
        if not args.folder:
            shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=2))
    return rows


if __name__ == "__main__":
    main()
