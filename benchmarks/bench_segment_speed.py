"""Texture segmentation speed, stage by stage, against the FS-KDE field of the same image.

In memory, on an RGB image (:func:`xfskde.datasets.random_textures`) and a grey one (the
channel mean of :func:`xfskde.datasets.dead_leaves`), seed 100, three textures, ``--size``²:

* ``field`` — ``xfskde.local_fskde(grey, order=8, window="gaussian", size=σ, stride=s)`` on the
  image as float32 (an RGB image's channel mean) at the σ and stride the automatic fit chose
  for the labels: the speed anchor;
* ``choose+fit`` — ``fit_textures(image, 3)``, every setting automatic;
* ``fit`` — ``fit_textures(image, 3, ...)`` given what the automatic fit chose (the feature
  groups, window, fit's size, stride and gradient scales of the model, its ``fit_method``,
  ``weights`` and ``resolution``): the same endmembers without the choosing (checked; but
  where the automatic fit was k-means at σ = 6 that weighed the groups by their signal, it
  sampled each pixel's change for that, on another grid, and the explicit fit's samples and
  endmembers differ: said so; and where the automatic fit left out groups its labels do not
  need, :func:`xfskde.segmentation.defaults.idle_groups`, the explicit fit reads only the
  groups kept: said so too, its time is then that of the smaller fit); ``choose`` is
  choose+fit minus fit;
* ``predict`` — ``model.predict(image)`` with the model of ``choose+fit`` (handed over as a
  pickle): the labels, as a NumPy array;
* ``segment`` — ``xfskde.segment(image, 3)`` end to end, with its Rand index against the truth.

Whole slides (not with ``--quick``; ``--slides``): a 1024² image as uint8 repeated to a
``--slide``² RGB tiled TIFF (512² tiles, uncompressed, written tile by tile), segmented by the
command line, ``python -m xfskde.cli segment SLIDE OUT.zarr --textures 3``: its wall time
(start-up and imports included; below it the command's own figure: fit, labels and write) and
its peak RSS. ``random``: a ``random_textures`` image (fine colour textures: the window check
keeps σ = 6, every pixel analysed); ``ihc``: scikit-image's immunohistochemistry image
(``data.immunohistochemistry``, 512²) mirrored to 1024², a microscopy texture whose scale
(≈ 23 px) sends the fit through the region-scale search on crops of up to 6000² pixels and the
labels through 5 × 5 cells (``resolution``), as tissue seen at 0.5 µm/px does; ``tissue``:
that image in two overlapping ellipses (43 % of the slide) on noisy grey-white glass,
segmented with ``--mask auto`` (a flat TIFF: the mask is found on the slide averaged down).

Every measurement runs in a fresh child process (this script with ``--child``), so that its
peak RSS is its own; each child first runs its stage on a contiguous copy of a 256² crop,
untimed (numba compiles on first use, or loads its cache; a view of the image would compile
numba's loops for another memory layout than the image's, and the image's own compilation,
13–16 s on a cold cache, would be timed), and the command line is run once on a 256² TIFF
first. One
timed run each. Dask's threaded scheduler runs on ``--threads`` workers and numba on as many
(``NUMBA_NUM_THREADS``); the field of a NumPy image spreads its tiles over every core whatever
``--threads``, as ``local_fskde`` does. Mpx/s counts pixels (y × x), whatever the channels;
"vs field" is a stage's rate over the field's.

    python benchmarks/bench_segment_speed.py --quick     # 512², no slide: checks it runs (~40 s)
    python benchmarks/bench_segment_speed.py             # 2048² and a 16384² slide (~10 min)
    python benchmarks/bench_segment_speed.py --size 1024 --slide 4096 --json speed.json
    python benchmarks/bench_segment_speed.py --size 2048 --slide 0   # no slide
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(1, str(REPO))  # measure this checkout

N_TEXTURES = 3
SEED = 100
WARM = 256  # side of the untimed warm-up image
TILE = 512  # the slide's TIFF tiles
TARGETS = (
    "targets (issue 12): segment of a 2048² RGB image >= 20 Mpx/s including the fit; "
    "xfskde segment of a 16384² slide >= 20 Mpx/s, peak RSS < 1.5 GiB"
)
TARGET_MPX_S, TARGET_RSS_GIB = 20.0, 1.5


# --- in the child processes --------------------------------------------------------------------


def chosen(model: Any) -> dict[str, Any]:
    """What an automatic fit chose, as arguments of ``fit_textures`` that repeat it without
    choosing anything (the groups' weights included: naming the groups would otherwise switch
    to the paper's weights)."""
    spec, f = model.spec, model.resolution  # the spec's window and stride are in f × f cells
    return {
        "features": list(spec.features),
        "window": spec.window,
        "size": spec.size * f,  # the labels', in pixels (a Gaussian's sigma: this script's)
        "fit_size": (spec.size if model.fit_size is None else model.fit_size) * f,
        "stride": spec.stride * f,
        "resolution": f,
        "gradient_scales": list(spec.gradient_scales),
        "method": model.fit_method,
        "weights": dict(model.weights),
    }


def explicit(settings: dict[str, Any]) -> dict[str, Any]:
    """``fit_textures`` keywords from :func:`chosen`'s (JSON-friendly) settings: the fit's
    window (the labels of such a model are drawn through it too)."""
    return {
        **{k: v for k, v in settings.items() if k != "fit_size"},
        "size": settings["fit_size"],
        "features": tuple(settings["features"]),
        "gradient_scales": tuple(settings["gradient_scales"]),
    }


def stage_call(task: dict) -> Callable[[np.ndarray], Any]:
    """The timed call of the task's stage, as a function of the image."""
    import xfskde
    from xfskde.segmentation import fit_textures

    stage, settings = task["stage"], task.get("settings")
    if stage == "field":
        field = {"order": 8, "window": settings["window"], "size": settings["size"],
                 "stride": settings["stride"]}  # fmt: skip
        return lambda im: xfskde.local_fskde(im, **field)
    if stage == "choose+fit":
        return lambda im: fit_textures(im, N_TEXTURES)
    if stage == "fit":
        return lambda im: fit_textures(im, N_TEXTURES, **explicit(settings))
    if stage == "predict":  # the model of the "choose+fit" child
        model = pickle.loads(Path(task["model"]).read_bytes())
        return lambda im: np.asarray(model.predict(im))
    if stage == "segment":
        return lambda im: xfskde.segment(im, N_TEXTURES, return_model=True)
    raise ValueError(f"unknown stage {stage!r}")


def measure_stage(task: dict) -> dict:
    """One in-memory stage on the task's image: warm-up on a 256² crop, then one timed run."""
    import dask

    from xfskde.metrics import rand_index

    image = np.load(task["image"])
    if task["stage"] == "field":  # the grey float32 image, made before the clock starts
        image = (image.mean(axis=-1) if image.ndim == 3 else image).astype(np.float32)
    with dask.config.set(scheduler="threads", num_workers=task["threads"]):
        call = stage_call(task)
        call(np.ascontiguousarray(image[:WARM, :WARM]))  # the image's memory layout: see above
        start = time.perf_counter()
        result = call(image)
        seconds = time.perf_counter() - start
    out = {"seconds": seconds, "pixels": image.shape[0] * image.shape[1]}
    if task["stage"] == "segment":
        labels, model = result
        out["rand"] = rand_index(np.load(task["truth"]), labels)
        out["settings"] = chosen(model)
    elif task["stage"] in ("choose+fit", "fit"):
        out["endmembers"] = np.asarray(result.endmembers).tolist()
        if task["stage"] == "choose+fit":  # what it chose, and the model for "predict"
            out["settings"] = chosen(result)
            out["signal"] = "signal" in result.choices  # groups weighed by a sampled S/N
            out["left_out"] = "left out" in result.choices.get("groups", "")
            Path(task["model"]).write_bytes(pickle.dumps(result))
    return out


def measure_command(task: dict) -> dict:
    """Run the command line; its wall time, its own time and its peak RSS (this process has no
    other child, so RUSAGE_CHILDREN's peak is the command's)."""
    start = time.perf_counter()
    result = subprocess.run(task["command"], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode:
        raise RuntimeError(f"{' '.join(task['command'])} failed:\n{result.stderr[-3000:]}")
    own = re.search(r"blocks (?:computed|written) in ([0-9.]+) s", result.stdout)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # KiB -> GiB
    return {"seconds": seconds, "command_seconds": float(own[1]) if own else None,
            "peak_rss_gib": peak}  # fmt: skip


def child(task: dict) -> None:
    """Measure one task and print its result as one JSON line."""
    if task["stage"] == "slide":
        out = measure_command(task)
    else:
        out = measure_stage(task)
        out["peak_rss_gib"] = peak_rss_gib()
    print(json.dumps(out))


def peak_rss_gib() -> float:
    """This process's peak resident memory: VmHWM, which starts afresh at exec (getrusage's
    ru_maxrss keeps the parent's peak at fork, the whole parent when it is the larger)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20  # kB -> GiB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


# --- in the parent -----------------------------------------------------------------------------


def child_env(threads: int) -> dict[str, str]:
    """The environment of every child: numba's threads, and this checkout first on the path."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "NUMBA_NUM_THREADS": str(threads), "PYTHONPATH": path}


def run_child(task: dict) -> dict:
    """Run one task in a fresh process of this script; its result and the load right after."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(task)]
    result = subprocess.run(command, capture_output=True, text=True, env=child_env(task["threads"]))
    if result.returncode:
        raise RuntimeError(f"child {task['stage']} failed:\n{result.stderr[-3000:]}")
    return {**json.loads(result.stdout.strip().splitlines()[-1]), "load": os.getloadavg()[0]}


def make_images(size: int, folder: Path) -> dict[str, tuple[Path, Path]]:
    """The RGB and the grey image and their truths, saved as .npy for the children."""
    from xfskde.datasets import dead_leaves, random_textures

    rgb, rgb_truth = random_textures((size, size), seed=SEED)
    leaves, leaves_truth = dead_leaves((size, size), seed=SEED)
    images = {}
    for name, image, truth in (("rgb", rgb, rgb_truth), ("grey", leaves.mean(-1), leaves_truth)):
        images[name] = (folder / f"{name}.npy", folder / f"{name}-truth.npy")
        np.save(images[name][0], image)
        np.save(images[name][1], truth)
    return images


def measure_image(name: str, paths: tuple[Path, Path], size: int, threads: int) -> list[dict]:
    """The rows of one in-memory image: field, choose+fit, choose, fit, predict, segment."""
    image, truth = (str(p) for p in paths)
    model = str(paths[0].with_suffix(".model.pickle"))
    base = {"image": image, "truth": truth, "model": model, "threads": threads}
    auto = run_child({**base, "stage": "choose+fit"})
    settings = auto.pop("settings")
    r = {"choose+fit": auto}
    for stage in ("field", "fit", "predict", "segment"):
        r[stage] = run_child({**base, "stage": stage, "settings": settings})
    same_fit = np.allclose(auto.pop("endmembers"), r["fit"].pop("endmembers"), rtol=1e-6)
    # an automatic k-means fit that weighs the groups by their signal samples each pixel's
    # change for it (another grid of samples); one given those weights has nothing to measure
    why = " (its k-means samples differ: the automatic fit also measured the groups' signal)"
    differs = why if auto.pop("signal") and settings["method"] == "kmeans" else ""
    if auto.pop("left_out"):
        differs += " (the automatic fit read groups it then left out; this one the kept only)"
    fit_check = "yes" if same_fit else "NO" + differs
    same_choice = r["segment"].pop("settings") == settings
    r["choose"] = {"seconds": auto["seconds"] - r["fit"]["seconds"], "pixels": auto["pixels"]}
    print(f"{name} {size}²: chose {','.join(settings['features'])}, {settings['window']} "
          f"{settings['size']:g} (fit {settings['fit_size']:g}), stride {settings['stride']}, "
          f"resolution {settings['resolution']}, {settings['method']} fit; "
          f"explicit fit gives the same endmembers: {fit_check}; segment "
          f"chose the same: {'yes' if same_choice else 'NO'}")  # fmt: skip
    field_rate = r["field"]["pixels"] / r["field"]["seconds"] / 1e6
    rows = []
    for stage in ("field", "choose+fit", "choose", "fit", "predict", "segment"):
        rate = r[stage]["pixels"] / r[stage]["seconds"] / 1e6
        rows.append({"image": f"{name} {size}²", "stage": stage, **r[stage], "mpx_s": rate,
                     "vs_field": rate / field_rate, "settings": settings})  # fmt: skip
    return rows


def write_slide(path: Path, size: int, base: np.ndarray, on_glass: bool = False) -> None:
    """A size² RGB tiled TIFF of ``base`` (side a multiple of the tile) repeated, tile by tile;
    ``on_glass``: inside two overlapping ellipses only (43 % of the slide), the rest glass."""
    import tifffile

    n, rng = base.shape[0], np.random.default_rng(0)
    tissue = _tissue(size) if on_glass else None

    def tile(r: int, c: int) -> np.ndarray:
        pixels = base[r % n : r % n + TILE, c % n : c % n + TILE]
        if tissue is None:
            return pixels
        f = size // tissue.shape[0]
        inside = np.repeat(np.repeat(tissue[r // f : (r + TILE) // f, c // f : (c + TILE) // f],
                                     f, axis=0), f, axis=1)  # fmt: skip
        glass = (236 + rng.integers(-4, 5, (TILE, TILE, 3))).astype(np.uint8)
        return np.where(inside[..., None], pixels, glass)

    tiles = (tile(r, c) for r in range(0, size, TILE) for c in range(0, size, TILE))
    tifffile.imwrite(path, tiles, shape=(size, size, 3), dtype=np.uint8, tile=(TILE, TILE),
                     photometric="rgb")  # fmt: skip


def _tissue(size: int) -> np.ndarray:
    """The tissue of a ``tissue`` slide at 1/32 of its side: two overlapping ellipses."""
    from skimage.draw import ellipse

    side = max(1, size // 32)
    small = np.zeros((side, side), bool)
    for cy, cx, ry, rx in ((0.39, 0.43, 0.29, 0.37), (0.64, 0.64, 0.23, 0.2)):
        small[ellipse(cy * side, cx * side, ry * side, rx * side, shape=small.shape)] = True
    return small


def slide_base(kind: str) -> np.ndarray:
    """The 1024² uint8 RGB image a slide of ``kind`` repeats."""
    if kind in ("ihc", "tissue"):
        from skimage import data

        ihc = data.immunohistochemistry()  # 512² RGB
        top = np.concatenate([ihc, ihc[:, ::-1]], axis=1)
        return np.ascontiguousarray(np.concatenate([top, top[::-1]], axis=0))
    from xfskde.datasets import random_textures

    image, _ = random_textures((1024, 1024), seed=SEED)
    return np.round(image * 255).astype(np.uint8)


def measure_slide(size: int, folder: Path, threads: int, kind: str = "random") -> dict:
    """The command line on a size² slide of ``kind``, after an untimed run on a 256² one."""
    import tifffile

    base = slide_base(kind)
    warm, slide = folder / "warm.tif", folder / f"slide-{kind}-{size}.tif"
    tifffile.imwrite(warm, base[:WARM, :WARM], tile=(WARM, WARM), photometric="rgb")
    write_slide(slide, size, base, on_glass=kind == "tissue")

    def command(source: Path) -> list[str]:
        return [sys.executable, "-m", "xfskde.cli", "segment", str(source),
                str(folder / f"{source.stem}.zarr"), "--textures", str(N_TEXTURES),
                "--workers", str(threads), "--no-progress", "--overwrite",
                *(["--mask", "auto"] if kind == "tissue" and source == slide else [])]  # fmt: skip

    subprocess.run(command(warm), capture_output=True, check=True, env=child_env(threads))
    r = run_child({"stage": "slide", "command": command(slide), "threads": threads})
    slide.unlink()
    shutil.rmtree(folder / f"{slide.stem}.zarr", ignore_errors=True)
    pixels = size * size
    names = {"random": "slide", "ihc": "IHC slide", "tissue": "IHC on glass"}
    name = f"{names[kind]} {size}²"
    return {"image": name, "stage": "xfskde segment", **r, "pixels": pixels,
            "mpx_s": pixels / r["seconds"] / 1e6}  # fmt: skip


def print_row(row: dict) -> None:
    """One line of the table."""
    vs = f"{row['vs_field']:.3f}" if "vs_field" in row else "-"
    rss = f"{row['peak_rss_gib']:.2f} GiB" if "peak_rss_gib" in row else "-"
    rand = f"{row['rand']:.3f}" if "rand" in row else "-"
    load = f"{row['load']:.1f}" if "load" in row else "-"
    print(f"{row['image']:<21}{row['stage']:<16}{row['seconds']:>9.2f}{row['mpx_s']:>9.2f}"
          f"{vs:>10}{rss:>11}{rand:>7}{load:>6}")  # fmt: skip


def print_targets(rows: list[dict], size: int) -> None:
    """The issue's targets, and whether this run met them."""

    def met(ok: bool) -> str:
        return "met" if ok else "not met"

    print(f"\n{TARGETS}")
    seg = next(r for r in rows if r["image"].startswith("rgb") and r["stage"] == "segment")
    note = "" if size == 2048 else f" (measured at {size}², the target is for 2048²)"
    print(f"  segment, RGB {size}²: {seg['mpx_s']:.2f} Mpx/s, "
          f"{met(seg['mpx_s'] >= TARGET_MPX_S)}{note}")  # fmt: skip
    for r in rows:
        if r["stage"] == "xfskde segment":
            note = "" if r["image"].endswith("slide 16384²") else " (the target is for 16384²)"
            print(f"  xfskde segment, {r['image']}: {r['mpx_s']:.2f} Mpx/s, "
                  f"{met(r['mpx_s'] >= TARGET_MPX_S)}; peak RSS {r['peak_rss_gib']:.2f} GiB, "
                  f"{met(r['peak_rss_gib'] < TARGET_RSS_GIB)}{note}")  # fmt: skip


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, help="in-memory image side (default 2048; quick 512)")
    parser.add_argument("--slide", type=int, default=16384,
                        help="slide side (a multiple of 512; 0: no slide)")  # fmt: skip
    parser.add_argument("--slides", default="random,ihc,tissue",
                        help="the slides, comma-separated: random, ihc, tissue")  # fmt: skip
    parser.add_argument("--threads", type=int, default=2, help="Dask workers and numba threads")
    parser.add_argument("--quick", action="store_true", help="512² and no slide: checks it runs")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # one task, run in a child process
    args = parser.parse_args(argv)
    if args.child:
        child(json.loads(args.child))
        return []
    if args.slide % TILE:
        parser.error(f"--slide must be a multiple of {TILE}")
    slides = [k for k in args.slides.split(",") if k]
    if set(slides) - {"random", "ihc", "tissue"}:
        parser.error(f"--slides takes random, ihc and tissue, got {args.slides!r}")
    size = args.size or (512 if args.quick else 2048)

    folder = Path(tempfile.mkdtemp(prefix="xfskde-segment-speed-"))
    rows: list[dict] = []
    try:
        print(f"load {os.getloadavg()[0]:.2f}; {args.threads} threads, {os.cpu_count()} cores")
        for name, paths in make_images(size, folder).items():
            rows += measure_image(name, paths, size, args.threads)
        if not args.quick and args.slide:
            rows += [measure_slide(args.slide, folder, args.threads, kind) for kind in slides]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\n{'image':<21}{'stage':<16}{'seconds':>9}{'Mpx/s':>9}{'vs field':>10}"
          f"{'peak RSS':>11}{'Rand':>7}{'load':>6}")  # fmt: skip
    for row in rows:
        print_row(row)
        if row.get("command_seconds") is not None:
            print(f"{'':<21}{'  its own time':<16}{row['command_seconds']:>9.2f}"
                  f"{row['pixels'] / row['command_seconds'] / 1e6:>9.2f}")  # fmt: skip
    print_targets(rows, size)
    print(f"\nload {os.getloadavg()[0]:.2f} (1 minute)")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=2))
    return rows


if __name__ == "__main__":
    main()
