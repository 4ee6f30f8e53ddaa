"""Texture segmentation: xfskde against its peers, Rand index and time, side by side in one run.

    python benchmarks/bench_segmentation.py --quick                 # about a minute
    python benchmarks/bench_segmentation.py                         # the full run (~10-15 min)
    python benchmarks/bench_segmentation.py --sets mosaics --method xfskde:segment \\
        --method big=xfskde:segment,size=12 --json seg.json

Sets (every image has three textures, unless said otherwise, and a per-pixel ground truth):

* ``dead_leaves`` — :func:`xfskde.datasets.dead_leaves` with bars of 16, 32, 64 and 128 px on
  images of 256², 512², 1024² and 2048² (the default bar length, side / 16, so every region holds
  the same number of bars at every scale); ``--quick``: 16 and 32 px only.
* ``random_textures`` — :func:`xfskde.datasets.random_textures`, 512² (``--quick``: 256²).
* ``mosaics`` — :func:`xfskde.datasets.texture_mosaic` of scikit-image's brick, grass and
  gravel at their native resolution, mean and std matched per texture: the *held-out* split of
  :data:`xfskde.datasets.mosaics.MOSAIC_CONFIGS` (3 layouts × 5 transforms × 2 seeds), 512²
  (``--quick``: one seed of three layout/transform pairs). Peers' parameters were chosen on the
  ``"tuning"`` split, which shares no seed with it.
* ``texture_counts`` — the same photographs in mosaics of other numbers of textures, segmented
  with that number: each pair of brick, grass and gravel in the three layouts (seed 1000, nine
  images), and all three with a fourth (seeds 1000 and 1001 of each layout): brick turned by
  90° (the same bricks, another orientation), gravel at half size (another scale) and
  scikit-image's ``moon`` (another photograph); ``--quick``: one Voronoi mosaic per pair and per
  fourth texture.
* ``histology`` — H&E mosaics (only with ``--histology DIR``):
  :func:`~xfskde.datasets.texture_mosaic` in colour (``color=True``, stain colours kept) of
  tissue tiles read from ``DIR``, one tile per tissue class, the class the part of a file's
  name before its first ``-`` (as in Kather et al.'s NCT-CRC-HE-100K,
  https://zenodo.org/records/1214456, CC BY 4.0: ``TUM-AACHEHDV.tif``) or its folder's name;
  six triples of classes (:data:`HISTOLOGY_TRIPLES` when the folder holds those classes, else
  consecutive classes) × three layouts, at half the tiles' resolution (a 224² tile of
  0.5 µm/px spans 112 px, as at 1 µm/px), 1024² and 768². xfskde's rule for the window was
  set on other seeds and triples (docs/segmentation.md).
* ``table1`` — the paper's Table 1 (:mod:`xfskde.experiments.segmentation`: leave-one-out over
  5 images of 256² per data set, seeds 0-4; about 4 minutes), and every method at its defaults on
  the same images. Not run with ``--quick``.

Dead leaves and random textures use seeds from ``--seed`` (default 100), so that they are not
Table 1's images (seeds 0-4).

Methods: ``--method`` (repeatable) names segmenters as ``[label=]module:function[,key=value…]``
(``module`` may be a path to a ``.py`` file; values are Python literals), called as
``function(image, n_textures, **kwargs)``; default ``xfskde:segment``. Peers
(``_segmentation_peers.py``; ``--peers`` to choose, ``--peers none`` for none) are called as
``peer(image, n_textures, seed)``: FSEG (Yuan, Wang & Cheriyadat 2015), a Gabor bank + k-means
and ``skimage.feature.multiscale_basic_features`` + k-means.

Scoring and timing: the Rand index (:func:`xfskde.metrics.rand_index`; it does not depend on how
the labels are numbered) against the truth; the wall time of one call (the fastest of
``--repeat``), after every method has run once on small images (numba compiles on first use,
scikit-learn and SciPy warm up). s/image is the mean over a row's images, Mpx/s their pixels over
their summed time.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import importlib
import importlib.util
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # measure this checkout
import _segmentation_peers as peers

import xfskde
from xfskde.datasets import dead_leaves, random_textures, texture_mosaic, texture_mosaic_set
from xfskde.metrics import rand_index

SETS = ("dead_leaves", "random_textures", "mosaics", "texture_counts", "histology", "table1")
N_TEXTURES = 3
#: (image side, bar length): every region holds the same number of bars at every scale
DEAD_LEAVES_FULL = ((256, 16), (512, 32), (1024, 64), (2048, 128))
DEAD_LEAVES_QUICK = ((256, 16), (512, 32))
QUICK_MOSAICS = (("voronoi", None), ("stripes", "rotate"), ("blobs", "both"))
GOAL = 0.95
#: Tissue classes of NCT-CRC-HE-100K three by three (the classes of the held-out H&E check)
HISTOLOGY_TRIPLES = (
    ("TUM", "MUS", "LYM"), ("NORM", "DEB", "ADI"), ("STR", "TUM", "MUC"),
    ("MUC", "LYM", "NORM"), ("ADI", "STR", "DEB"), ("MUS", "NORM", "TUM"),
)  # fmt: skip
#: (layout, transform, side) of every triple's mosaics, seeds 4000 + the triple's index
HISTOLOGY_LAYOUTS = (("voronoi", "both", 1024), ("stripes", None, 1024), ("blobs", "rotate", 768))
HISTOLOGY_SCALE = 0.5


@dataclass
class Record:
    """One method on one image."""

    set: str
    size: str
    image: str
    method: str
    rand: float
    seconds: float
    pixels: int


@dataclass
class Method:
    label: str
    call: Callable[[np.ndarray, int], Any]
    spec: str


# --- methods -----------------------------------------------------------------------------------


def _load_function(target: str) -> Callable:
    module_name, _, func_name = target.rpartition(":")
    if not module_name or not func_name:
        raise argparse.ArgumentTypeError(f"expected module:function, got {target!r}")
    if module_name.endswith(".py"):
        path = Path(module_name).resolve()
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise argparse.ArgumentTypeError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    func = module
    for part in func_name.split("."):
        func = getattr(func, part)
    return func


def parse_method(text: str) -> Method:
    """``[label=]module:function[,key=value…]`` → a :class:`Method`."""
    head, *options = text.split(",")
    label, _, target = head.rpartition("=")
    kwargs: dict[str, Any] = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"option {option!r} of {text!r} is not key=value")
        try:
            kwargs[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            kwargs[key.strip()] = value.strip()
    func = _load_function(target)
    if not label:
        label = "xfskde" if target == "xfskde:segment" else target
        if kwargs:
            label += "(" + ",".join(f"{k}={v}" for k, v in kwargs.items()) + ")"

    def call(image: np.ndarray, n: int) -> Any:
        return func(image, n, **kwargs)

    return Method(label, call, text)


def peer_methods(names: list[str], seed: int) -> list[Method]:
    out = []
    for name in names:
        func = peers.PEERS[name]
        out.append(Method(name, lambda image, n, f=func: f(image, n, seed), f"peer:{name}"))
    return out


# --- data --------------------------------------------------------------------------------------


def _grey_size(image: np.ndarray) -> str:
    return f"{image.shape[0]}x{image.shape[1]}"


def dead_leaves_items(quick: bool, n_images: int, seed: int) -> Iterator[tuple]:
    for side, bar in DEAD_LEAVES_QUICK if quick else DEAD_LEAVES_FULL:
        for i in range(n_images):
            image, truth = dead_leaves((side, side), seed=seed + i, bar_length=bar)
            yield f"dead leaves {bar}px", f"{side}²", f"seed {seed + i}", image, truth


def random_texture_items(quick: bool, n_images: int, seed: int) -> Iterator[tuple]:
    side = 256 if quick else 512
    for i in range(n_images):
        image, truth = random_textures((side, side), seed=seed + i)
        yield "random textures", f"{side}²", f"seed {seed + i}", image, truth


def mosaic_items(quick: bool) -> Iterator[tuple]:
    side = 512
    if quick:
        for layout, transform in QUICK_MOSAICS:
            (item,) = texture_mosaic_set(
                "held_out", (side, side), layouts=(layout,), transforms=(transform,)
            )[:1]
            yield f"mosaic {layout}/{transform or 'plain'}", f"{side}²", *item
        return
    for name, image, truth in texture_mosaic_set("held_out", (side, side)):
        layout, transform, _ = name.split("-")
        yield f"mosaic {layout}/{transform}", f"{side}²", name, image, truth


def _fourth_textures() -> dict[str, np.ndarray]:
    """The fourth textures of the ``texture_counts`` set, from scikit-image's own files."""
    from skimage import data
    from skimage.transform import rescale

    return {
        "brick turned": np.rot90(data.brick()).copy(),
        "gravel halved": rescale(data.gravel(), 0.5, anti_aliasing=True),
        "moon": data.moon(),
    }


def texture_count_items(quick: bool) -> Iterator[tuple]:
    """Mosaics of 2 and of 4 textures, each item with its number of textures last."""
    side, layouts = 512, ("voronoi",) if quick else ("voronoi", "stripes", "blobs")
    pairs = (("brick", "grass"), ("grass", "gravel"), ("brick", "gravel"))
    for names in pairs:
        for layout in layouts:
            image, truth = texture_mosaic(
                (side, side), n_regions=2, layout=layout, textures=names, seed=1000
            )
            name = f"{'+'.join(names)} {layout}"
            yield "mosaics of 2 textures", f"{side}²", name, image, truth, 2
    fourths = _fourth_textures()
    for layout in layouts:
        for fourth, texture in fourths.items():
            for seed in (1000,) if quick else (1000, 1001):
                image, truth = texture_mosaic(
                    (side, side), n_regions=4, layout=layout, seed=seed,
                    textures=("brick", "grass", "gravel", texture),
                )  # fmt: skip
                name = f"+{fourth} s{seed}"
                yield f"mosaics of 4, {layout}", f"{side}²", name, image, truth, 4


def histology_items(folder: Path | None) -> Iterator[tuple]:
    if folder is None:
        raise SystemExit("the histology set needs --histology DIR (a folder of H&E tiles)")
    from xfskde.datasets import class_tiles, texture_mosaic

    tiles = {k: v for k, v in class_tiles(folder).items() if v.ndim == 3}
    if len(tiles) < N_TEXTURES:
        raise SystemExit(f"--histology {folder}: {len(tiles)} classes of RGB tiles, 3 needed")
    classes = sorted(tiles)
    triples = [t for t in HISTOLOGY_TRIPLES if set(t) <= set(tiles)]
    if len(triples) < len(HISTOLOGY_TRIPLES):
        n = len(classes)
        triples = [tuple(classes[(i + j) % n] for j in range(N_TEXTURES)) for i in range(min(6, n))]
    for i, names in enumerate(triples):
        for layout, transform, side in HISTOLOGY_LAYOUTS:
            image, truth = texture_mosaic(
                (side, side), n_regions=N_TEXTURES, layout=layout, transform=transform,
                textures=tuple(tiles[name] for name in names), normalize=None,
                scale=HISTOLOGY_SCALE, seed=4000 + i, color=True,
            )  # fmt: skip
            name = f"{'-'.join(names)} {layout}/{transform or 'plain'}"
            yield "histology (H&E tiles)", f"{side}²", name, image, truth


def table1_items() -> Iterator[tuple]:
    for dataset, make in (("random texture", random_textures), ("dead leaves", dead_leaves)):
        for i in range(5):
            image, truth = make((256, 256), seed=i)
            yield f"table1 {dataset}", "256²", f"seed {i}", image, truth


# --- running -----------------------------------------------------------------------------------


def warm_up(methods: list[Method]) -> None:
    """One call of every method on small images (grey and colour): compile and load."""
    colour, _ = dead_leaves((96, 96), seed=1)
    grey = colour.mean(axis=-1).astype(np.float32)
    for m in methods:
        for image in (colour, grey):
            m.call(image, N_TEXTURES)


def run_item(
    methods: list[Method], item: tuple, records: list[Record], per_image: bool, repeat: int
) -> None:
    set_name, size, name, image, truth = item[:5]
    n_textures = item[5] if len(item) > 5 else N_TEXTURES
    for m in methods:
        times = []
        for _ in range(repeat):  # the labels of the last call are scored; the fastest is timed
            start = time.perf_counter()
            labels = m.call(image, n_textures)
            if hasattr(labels, "compute"):
                labels = labels.compute()
            times.append(time.perf_counter() - start)
        seconds = min(times)
        score = rand_index(truth, np.asarray(labels))
        pixels = int(image.shape[0] * image.shape[1])
        records.append(Record(set_name, size, name, m.label, score, seconds, pixels))
        if per_image:
            print(f"  {set_name:26} {size:>6} {name:24} {m.label:16} {score:.3f} {seconds:7.2f} s")


def summarise(records: list[Record]) -> list[dict[str, Any]]:
    """One row per (set, size, method), in the order first met."""
    groups: dict[tuple[str, str, str], list[Record]] = {}
    for r in records:
        groups.setdefault((r.set, r.size, r.method), []).append(r)
    rows = []
    for (set_name, size, method), rs in groups.items():
        rand = np.array([r.rand for r in rs])
        seconds = np.array([r.seconds for r in rs])
        pixels = sum(r.pixels for r in rs)
        rows.append({
            "set": set_name, "size": size, "method": method, "images": len(rs),
            "rand_mean": float(rand.mean()), "rand_min": float(rand.min()),
            "seconds": float(seconds.mean()),
            "mpx_per_s": pixels / 1e6 / float(seconds.sum()) if seconds.sum() > 0 else None,
        })  # fmt: skip
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'set':28} {'size':>6} {'method':22} {'n':>3} {'Rand':>6} {'min':>6} "
        f"{'s/image':>8} {'Mpx/s':>6}"
    )
    lines = [head, "-" * len(head)]
    previous = None
    for row in rows:
        key = (row["set"], row["size"])
        if previous is not None and key != previous:
            lines.append("")
        previous = key
        rate = "" if row["mpx_per_s"] is None else f"{row['mpx_per_s']:6.2f}"
        seconds = "" if row["seconds"] is None else f"{row['seconds']:8.2f}"
        minimum = "" if row["rand_min"] is None else f"{row['rand_min']:6.3f}"
        lines.append(
            f"{row['set']:28} {row['size']:>6} {row['method']:22} {row['images']:>3} "
            f"{row['rand_mean']:6.3f} {minimum:>6} {seconds:>8} {rate:>6}"
        )
    return "\n".join(lines)


def goals(rows: list[dict[str, Any]], own: list[str], peer_names: list[str]) -> str:
    """Per set and own method: min Rand ≥ GOAL? mean ahead of the best peer?"""
    lines = [f"goals (every image ≥ {GOAL}; mean Rand ahead of every peer):"]
    by_key: dict[tuple[str, str], dict[str, dict]] = {}
    for row in rows:
        by_key.setdefault((row["set"], row["size"]), {})[row["method"]] = row
    for (set_name, size), per in by_key.items():
        best_peer = max(
            (per[p] for p in peer_names if p in per), key=lambda r: r["rand_mean"], default=None
        )
        for label in own:
            if label not in per or per[label]["rand_min"] is None:
                continue
            row = per[label]
            floor = "yes" if row["rand_min"] >= GOAL else "NO "
            if best_peer is None:
                ahead = "-"
            else:
                margin = row["rand_mean"] - best_peer["rand_mean"]
                verdict = "yes" if margin > 0 else "NO "
                ahead = f"{verdict} ({margin:+.3f} vs {best_peer['method']})"
            lines.append(f"  {set_name:28} {size:>6} {label:22} ≥{GOAL}: {floor}  ahead: {ahead}")
    return "\n".join(lines)


def run_table1(rows: list[dict[str, Any]]) -> tuple[str, float]:
    """The paper's Table 1 by leave-one-out; its rows appended to ``rows``."""
    from xfskde.experiments.segmentation import segmentation_experiment

    results = segmentation_experiment(verbose=True)
    for method, per in results.summary().items():
        for dataset, (mean, _std) in per.items():
            scores = results.scores[method][dataset]
            rows.append({
                "set": f"table1 {dataset}", "size": "256²", "method": f"LOO {method}",
                "images": len(scores), "rand_mean": mean, "rand_min": float(min(scores)),
                "seconds": None, "mpx_per_s": None,
            })  # fmt: skip
    return results.table(), results.seconds


def _git_state() -> str:
    """The checkout's commit, and the package files that differ from it (xfskde is measured
    as it is on disk when the script starts)."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
            check=True,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "xfskde"], cwd=root, capture_output=True,
            text=True, check=True,
        ).stdout.split("\n")  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    changed = [line[3:] for line in dirty if line.strip()]
    return commit + (f" + changes to {', '.join(changed)}" if changed else "")


def _environment() -> dict[str, Any]:
    import scipy
    import skimage
    import sklearn

    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-image": skimage.__version__,
        "scikit-learn": sklearn.__version__,
        "xfskde": xfskde.__version__,
        "git": _git_state(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, about a minute")
    parser.add_argument(
        "--sets", default=None,
        help=f"comma-separated subset of {','.join(SETS)} (default: all; --quick skips table1)",
    )  # fmt: skip
    parser.add_argument(
        "--method", action="append", type=parse_method, default=None,
        help="[label=]module:function[,key=value...] called as f(image, n_textures, **kw); "
        "repeatable (default xfskde:segment)",
    )  # fmt: skip
    parser.add_argument(
        "--peers", default=",".join(peers.PEERS),
        help=f"comma-separated peers among {','.join(peers.PEERS)}, or 'none'",
    )  # fmt: skip
    parser.add_argument(
        "--images", type=int, default=None,
        help="images per dead-leaves size and of random textures (2; --quick: 1)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=100, help="first synthetic seed (100)")
    parser.add_argument(
        "--histology", type=Path, default=None,
        help="a folder of H&E tiles, one class per name prefix or sub-folder: adds the "
        "histology set",
    )  # fmt: skip
    parser.add_argument("--repeat", type=int, default=1,
                        help="calls per image and method, the fastest timed (1)")  # fmt: skip
    parser.add_argument("--per-image", action="store_true", help="print every image's row")
    parser.add_argument("--json", type=Path, default=None, help="write records and rows here")
    args = parser.parse_args(argv)

    sets = SETS if args.sets is None else tuple(s.strip() for s in args.sets.split(","))
    unknown = set(sets) - set(SETS)
    if unknown:
        parser.error(f"unknown sets {sorted(unknown)}; choose among {SETS}")
    if args.quick and args.sets is None:
        sets = tuple(s for s in sets if s != "table1")
    if args.histology is None and args.sets is None:
        sets = tuple(s for s in sets if s != "histology")
    own = args.method or [parse_method("xfskde:segment")]
    peer_names = [] if args.peers == "none" else [p.strip() for p in args.peers.split(",")]
    bad = set(peer_names) - set(peers.PEERS)
    if bad:
        parser.error(f"unknown peers {sorted(bad)}; choose among {tuple(peers.PEERS)}")
    methods = own + peer_methods(peer_names, seed=0)
    n_images = args.images or (1 if args.quick else 2)

    env = _environment()
    print(f"# bench_segmentation {'--quick ' if args.quick else ''}{env['date']}")
    print(f"# xfskde at {env['git']}")
    print(
        f"# {env['cpus']} CPUs; numpy {env['numpy']}, scikit-image {env['scikit-image']}, "
        f"scikit-learn {env['scikit-learn']}; methods: {', '.join(m.label for m in methods)}"
    )
    start = time.perf_counter()
    warm_up(methods)
    print(f"# warm-up {time.perf_counter() - start:.1f} s")

    records: list[Record] = []
    sources = {
        "dead_leaves": lambda: dead_leaves_items(args.quick, n_images, args.seed),
        "random_textures": lambda: random_texture_items(args.quick, n_images, args.seed),
        "mosaics": lambda: mosaic_items(args.quick),
        "texture_counts": lambda: texture_count_items(args.quick),
        "histology": lambda: histology_items(args.histology),
        "table1": table1_items,
    }
    for set_name in sets:
        set_start = time.perf_counter()
        for item in sources[set_name]():
            run_item(methods, item, records, args.per_image, max(1, args.repeat))
        print(f"# {set_name}: {time.perf_counter() - set_start:.0f} s", flush=True)
    rows = summarise(records)
    table1_text = None
    if "table1" in sets:
        table1_text, table1_seconds = run_table1(rows)
        order = {name: i for i, name in reversed(list(enumerate(r["set"] for r in rows)))}
        rows.sort(key=lambda r: order[r["set"]])  # the LOO rows next to their set's rows
        print(f"# table1 leave-one-out: {table1_seconds:.0f} s")

    print()
    print(format_table(rows))
    print()
    print(goals(rows, [m.label for m in own], peer_names))
    if table1_text:
        print("\nTable 1 (leave-one-out, measured mean ± std, then the paper's):")
        print(table1_text)
    total = time.perf_counter() - start
    print(f"\n# total {total:.0f} s")
    if args.json:
        payload = {
            "environment": env, "quick": args.quick, "sets": list(sets),
            "methods": [m.spec for m in methods], "rows": rows,
            "records": [asdict(r) for r in records], "seconds": total,
        }  # fmt: skip
        args.json.write_text(json.dumps(payload, indent=1))
        print(f"# wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
