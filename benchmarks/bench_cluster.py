"""Texture segmentation on Dask's threads against a distributed cluster of worker processes.

One model is fitted (``fit_textures(slide, 3)``, every setting automatic) on a ``--size``² RGB
tiled TIFF made of a 1024² ``random_textures`` image repeated (as ``bench_segment_speed.py``
writes it), then its labels are computed into memory three ways, ``--repeat`` times each:

* ``threads`` — Dask's threaded scheduler on ``--workers`` threads, in this process;
* ``cluster`` — a ``distributed.LocalCluster`` of ``--workers`` processes of one thread each,
  started by nannies with distributed's own environment (``MALLOC_TRIM_THRESHOLD_=65536``, set
  to give memory back to the system at once);
* ``cluster, MALLOC_MMAP_THRESHOLD_`` — the same with ``MALLOC_MMAP_THRESHOLD_=67108864`` added
  to the workers' environment (``distributed.nanny.pre-spawn-environ``).

Setting any of glibc's thresholds turns off its adaptive mmap threshold, so with distributed's
environment every allocation above 128 KiB is mapped afresh and its pages faulted in: a block's
temporary planes then cost their page faults at each task. The labels of all three must be
bit-identical. Printed: the wall time (best of the repeats), the tasks' summed compute time
(distributed's task stream), the workers' memory after the run, and the minor page faults of
the threaded run (in this process).

    python benchmarks/bench_cluster.py --quick          # 2048², checks it runs (~1 min)
    python benchmarks/bench_cluster.py                  # 8192² (~3 min on 2 cores)

Linux only (glibc's allocator and its variables; elsewhere the two cluster rows only differ
by chance).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(1, str(REPO))  # measure this checkout
sys.path.insert(1, str(Path(__file__).resolve().parent))

MMAP = {"MALLOC_MMAP_THRESHOLD_": 64 * 2**20}


def labels_task_seconds(stream: list[dict]) -> float:
    """The compute time of the segmentation's tasks in a distributed task stream."""
    return sum(
        part["stop"] - part["start"]
        for record in stream
        if "xfskde-segment" in str(record["key"])
        for part in record["startstops"]
        if part["action"] == "compute"
    )


def on_cluster(labels, reference: np.ndarray, workers: int, environ: dict, repeat: int) -> dict:
    """The labels computed on a LocalCluster whose nannies add ``environ`` to the workers'."""
    import dask
    from distributed import Client, LocalCluster, get_task_stream

    key = "distributed.nanny.pre-spawn-environ"
    with (
        dask.config.set({key: {**dask.config.get(key), **environ}}),
        LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        seen = client.run(lambda: os.environ.get("MALLOC_MMAP_THRESHOLD_"))
        assert all((v is not None) == bool(environ) for v in seen.values()), seen
        where = client.run(lambda: __import__("xfskde.segmentation.model").__file__)
        assert all(Path(f).is_relative_to(REPO) for f in where.values()), where  # this checkout
        client.compute(labels[:512, :512]).result()  # untimed: warms every worker's kernels
        best, busy = np.inf, np.inf
        for _ in range(repeat):
            with get_task_stream(client) as stream:
                start = time.perf_counter()
                out = client.compute(labels).result()
                seconds = time.perf_counter() - start
            if not np.array_equal(out, reference):
                raise AssertionError("the cluster's labels differ from the threads'")
            best, busy = min(best, seconds), min(busy, labels_task_seconds(stream.data))
        info = client.scheduler_info()["workers"].values()
        memory = sum(w["metrics"]["memory"] for w in info) / 2**30
    return {"seconds": best, "task_seconds": busy, "memory_gib": memory}


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=8192, help="slide side (multiple of 512)")
    parser.add_argument("--workers", type=int, default=2, help="threads, or worker processes")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs of each (best kept)")
    parser.add_argument("--quick", action="store_true", help="a 2048² slide, one run each")
    args = parser.parse_args(argv)
    size, repeat = (2048, 1) if args.quick else (args.size, args.repeat)

    import dask
    from bench_segment_speed import SEED, write_slide

    import xfskde
    from xfskde.datasets import random_textures
    from xfskde.segmentation import fit_textures

    image, _ = random_textures((1024, 1024), seed=SEED)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"slide-{size}.tif"
        write_slide(path, size, np.round(image * 255).astype(np.uint8))
        slide = xfskde.open_image(path)
        model = fit_textures(slide, 3)
        labels = model.predict(slide).data
        labels[:512, :512].compute(scheduler="threads")  # untimed warm-up
        best, reference = np.inf, None
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(repeat):
            with dask.config.set(scheduler="threads", num_workers=args.workers):
                start = time.perf_counter()
                out = labels.compute()
                best = min(best, time.perf_counter() - start)
            reference = out if reference is None else reference
        faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / repeat
        rows.append({"run": "threads", "seconds": best, "faults": faults})
        rows.append({"run": "cluster", **on_cluster(labels, reference, args.workers, {}, repeat)})
        rows.append({"run": "cluster, MALLOC_MMAP_THRESHOLD_ 64 MiB",
                     **on_cluster(labels, reference, args.workers, MMAP, repeat)})  # fmt: skip
    print(f"\nlabels of a {size}² RGB slide (sigma {model.spec.size:g}, stride "
          f"{model.spec.stride}), {args.workers} workers, load {os.getloadavg()[0]:.2f}; "
          "labels bit-identical in all three")  # fmt: skip
    print(f"{'run':40s} {'seconds':>8s} {'Mpx/s':>7s} {'vs threads':>10s} {'tasks':>7s} "
          f"{'memory':>9s}")  # fmt: skip
    for row in rows:
        tasks = f"{row['task_seconds']:.1f} s" if "task_seconds" in row else "-"
        memory = f"{row['memory_gib']:.2f} GiB" if "memory_gib" in row else "-"
        print(f"{row['run']:40s} {row['seconds']:8.2f} {size * size / row['seconds'] / 1e6:7.2f} "
              f"{row['seconds'] / rows[0]['seconds']:10.2f} {tasks:>7s} {memory:>9s}")  # fmt: skip
    print(f"threads: {rows[0]['faults']:.0f} minor page faults per run in this process")
    return rows


if __name__ == "__main__":  # required: the cluster's worker processes re-import this module
    main()
