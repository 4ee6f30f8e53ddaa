"""Texture segmentation, Table 1: ORTSEG with colour, gradient histograms or cos^2K FS-KDEs.

Leave-one-out over ``n_images`` seeded images of each data set (random textures, dead leaves),
as in the paper (section 5.3): for every held-out image the parameters (window size, histogram
bins in 8..40, FS-KDE coefficients in 4..20, gradient weight) are the ones with the best mean
Rand index on the other images; the table reports the held-out images' Rand index, mean ± std.
Every (parameters, image) pair is segmented once and the score matrix is reused by every fold.
"""

from __future__ import annotations

import argparse
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..datasets import dead_leaves, random_textures
from ..metrics import rand_index
from ..segmentation import segment

__all__ = ["PAPER_TABLE", "SegmentationResults", "add_arguments", "run", "segmentation_experiment"]

#: Table 1 of the paper: method -> dataset -> (mean, std) Rand index.
PAPER_TABLE = {
    "basic": {"random texture": (0.989, 0.002), "dead leaves": (0.551, 0.087)},
    "hist": {"random texture": (0.988, 0.002), "dead leaves": (0.702, 0.161)},
    "FS-KDE": {"random texture": (0.989, 0.002), "dead leaves": (0.907, 0.094)},
}

DATASETS = {"random texture": random_textures, "dead leaves": dead_leaves}
METHODS = {"basic": ("color",), "hist": ("color", "hist"), "FS-KDE": ("color", "fskde")}
#: The paper's settings that ``segment`` would otherwise choose from the image: features at
#: every pixel, endmembers by k-means on every sampled pixel, colour bins over [0, 1].
PAPER_SETTINGS = {"stride": 1, "method": "kmeans", "color_ranges": "unit"}


@dataclass
class SegmentationResults:
    """Held-out Rand indices per method and data set, and the parameters each fold chose.

    Attributes
    ----------
    scores : dict
        method -> dataset -> the held-out Rand index of each image.
    chosen : dict
        method -> dataset -> the parameters chosen on the other images, per held-out image.
    seconds : float
        Wall time of the whole experiment.
    """

    scores: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    chosen: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    seconds: float = 0.0

    def summary(self) -> dict[str, dict[str, tuple[float, float]]]:
        """method -> dataset -> (mean, std).

        Returns
        -------
        dict of str to dict of str to (float, float)
            The mean and (population) standard deviation of each method's held-out Rand
            indices on each data set.
        """
        return {
            m: {d: (float(np.mean(v)), float(np.std(v))) for d, v in per.items()}
            for m, per in self.scores.items()
        }

    def table(self) -> str:
        """Table 1, measured next to the paper's numbers.

        Returns
        -------
        str
            One line per method: mean ± std on each data set, then the paper's.
        """
        summary = self.summary()
        datasets = [d for d in DATASETS if any(d in per for per in summary.values())]
        lines = [f"{'method':8}" + "".join(f" {d:>16} {'(paper)':>15}" for d in datasets)]
        for method, per in summary.items():
            row = f"{method:8}"
            for dataset in datasets:
                mean, std = per[dataset]
                pm, ps = PAPER_TABLE[method][dataset]
                row += f" {mean:>8.3f} ± {std:.3f} {pm:>7.3f} ± {ps:.3f}"
            lines.append(row)
        return "\n".join(lines)


def _grid(method: str, sizes, color_bins, angle_bins, coefficients, weights) -> list[dict]:
    base = [{"size": s, "color_bins": c} for s in sizes for c in color_bins]
    if method == "basic":
        return base
    if method == "hist":
        extra = [{"angle_bins": b, "weights": {"hist": w}} for b in angle_bins for w in weights]
    else:
        extra = [
            {"n_coefficients": n, "weights": {"fskde": w}} for n in coefficients for w in weights
        ]
    return [{**a, **b} for a, b in itertools.product(base, extra)]


def segmentation_experiment(
    n_images: int = 5,
    size: int = 256,
    *,
    window_sizes: tuple[float, ...] = (3.0, 4.0, 6.0),
    color_bins: tuple[int, ...] = (16,),
    angle_bins: tuple[int, ...] = (8, 16, 40),
    coefficients: tuple[int, ...] = (4, 8, 16),
    weights: tuple[float, ...] = (0.25, 0.5, 1.0),
    methods: tuple[str, ...] = ("basic", "hist", "FS-KDE"),
    datasets: tuple[str, ...] = ("random texture", "dead leaves"),
    seed: int = 0,
    verbose: bool = False,
) -> SegmentationResults:
    """Run the leave-one-out segmentation experiment of section 5.3 (Table 1).

    Parameters
    ----------
    n_images : int, optional
        Images per data set (>= 2; default 5), seeds ``seed .. seed + n_images - 1``.
    size : int, optional
        Image side in pixels (default 256).
    window_sizes : tuple of float, optional
        Gaussian window sigmas to choose from (default 3, 4, 6).
    color_bins, angle_bins, coefficients, weights : tuple, optional
        Colour bins per channel (default 16), gradient-histogram bins (paper: 8..40;
        default 8, 16, 40), complex FS-KDE coefficients (paper: 4..20; default 4, 8, 16) and
        weights of the gradient group (default 0.25, 0.5, 1) to choose from.
    methods, datasets : tuple of str, optional
        Rows (among ``"basic"``, ``"hist"``, ``"FS-KDE"``, the default all three) and
        columns (among ``"random texture"``, ``"dead leaves"``, the default both) of the
        table.
    seed : int, optional
        Seed of the first image of each data set (the others: ``seed + 1`` ...; default 0).
    verbose : bool, optional
        Print progress (default False).

    Returns
    -------
    SegmentationResults
        The held-out scores and the chosen settings.

    Raises
    ------
    ValueError
        For ``n_images`` below 2, and a method or data set not in the lists.
    """
    if n_images < 2:
        raise ValueError(f"n_images must be >= 2 for leave-one-out, got {n_images}")
    for name, values in (("angle_bins", angle_bins), ("coefficients", coefficients)):
        lo, hi = (8, 40) if name == "angle_bins" else (4, 20)
        if any(not lo <= v <= hi for v in values):
            print(f"note: {name} {values} go beyond the paper's range {lo}..{hi}")
    start = time.perf_counter()
    results = SegmentationResults()
    for dataset in datasets:
        if dataset not in DATASETS:
            raise ValueError(f"datasets must be among {tuple(DATASETS)}, got {dataset!r}")
        images = [DATASETS[dataset]((size, size), seed=seed + i) for i in range(n_images)]
        for method in methods:
            if method not in METHODS:
                raise ValueError(f"methods must be among {tuple(METHODS)}, got {method!r}")
            grid = _grid(method, window_sizes, color_bins, angle_bins, coefficients, weights)
            S = np.array([
                [rand_index(truth, segment(image, 3, features=METHODS[method], **PAPER_SETTINGS,
                                            **params))
                 for image, truth in images]
                for params in grid
            ])  # fmt: skip
            held_out, chosen = [], []
            for i in range(n_images):
                train = np.delete(S, i, axis=1).mean(axis=1)
                best = int(np.argmax(train))
                held_out.append(float(S[best, i]))
                chosen.append(grid[best])
            results.scores.setdefault(method, {})[dataset] = held_out
            results.chosen.setdefault(method, {})[dataset] = chosen
            if verbose:
                elapsed = time.perf_counter() - start
                score = f"{np.mean(held_out):.3f} ± {np.std(held_out):.3f}"
                print(f"{dataset:15} {method:7} {score}  ({len(grid)} settings, {elapsed:.0f} s)")
    results.seconds = time.perf_counter() - start
    return results


def _flat(params: dict[str, Any]) -> dict[str, Any]:
    """A chosen setting without what is fixed: size, bins or coefficients, weight."""
    out = {k: v for k, v in params.items() if k not in ("weights", "color_bins")}
    out.update({f"w_{k}": v for k, v in params.get("weights", {}).items()})
    return out


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(v) for v in text.split(","))


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(","))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``xfskde experiment segmentation``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The experiment's subcommand parser; each option is a parameter of
        :func:`segmentation_experiment` (``--images`` its ``n_images``), with its default.
    """
    parser.add_argument("--images", type=int, default=5,
                        help="images per data set, >= 2 for leave-one-out")  # fmt: skip
    parser.add_argument("--size", type=int, default=256, help="image side in pixels")
    parser.add_argument("--window-sizes", type=_floats, default=(3.0, 4.0, 6.0),
                        help="Gaussian sigmas to choose from, comma separated")  # fmt: skip
    parser.add_argument("--color-bins", type=_ints, default=(16,),
                        help="colour bins per channel to choose from, comma separated")  # fmt: skip
    parser.add_argument("--angle-bins", type=_ints, default=(8, 16, 40),
                        help="gradient histogram bins to choose from, paper 8..40")  # fmt: skip
    parser.add_argument("--coefficients", type=_ints, default=(4, 8, 16),
                        help="complex FS-KDE coefficients to choose from, paper 4..20")  # fmt: skip
    parser.add_argument("--weights", type=_floats, default=(0.25, 0.5, 1.0),
                        help="gradient-group weights to choose from")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="first image seed")


def run(args: argparse.Namespace) -> int:
    """Run the experiment from parsed arguments and print Table 1 and the settings chosen.

    Parameters
    ----------
    args : argparse.Namespace
        The options of :func:`add_arguments`, passed to :func:`segmentation_experiment`
        (with ``verbose=True``: progress is printed as it goes).

    Returns
    -------
    int
        Exit status 0.
    """
    results = segmentation_experiment(
        n_images=args.images, size=args.size, window_sizes=args.window_sizes,
        color_bins=args.color_bins, angle_bins=args.angle_bins, coefficients=args.coefficients,
        weights=args.weights, seed=args.seed, verbose=True,
    )  # fmt: skip
    print()
    print("Table 1: Rand index, leave-one-out (measured mean ± std, then the paper's)")
    print(results.table())
    print("\nsettings chosen on the training images (one per held-out image):")
    for method, per in results.chosen.items():
        for dataset, chosen in per.items():
            picks = ["/".join(f"{k}={v}" for k, v in _flat(c).items()) for c in chosen]
            print(f"  {method:7} {dataset:15} " + "; ".join(picks))
    print(f"({results.seconds:.0f} s)")
    return 0
