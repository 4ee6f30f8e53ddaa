"""Keypoint description, Figures 7 and 8: ROC AUC of patch descriptors against their length.

For each labelled pair of 64 × 64 patches (corresponding or not), every descriptor of
:mod:`xfskde.descriptors` is computed on both patches cropped to the central disk of diameter 60,
and the pair's distance is the Euclidean distance of the descriptors (for the FS-KDE, the
Parseval distance; for its F_k canonical version, eq. 10). The AUC is the area under the ROC curve
of the negated distance as a score for "corresponding" (section 5.1). ``rotate=True`` first turns
every patch by its own uniform random angle about its centre (Figure 8).

The data are the UBC / Brown patches when ``root`` points at a downloaded copy
(:func:`xfskde.datasets.load_ubc_patches`), else the scikit-image proxy
(:func:`xfskde.datasets.ubc_proxy`).
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Sequence

import numpy as np

from .. import descriptors as D
from ..datasets.ubc import UBCPatches, load_ubc_patches, ubc_proxy
from . import _IntList

__all__ = [
    "DEFAULT_LENGTHS",
    "DESCRIPTORS",
    "FEW_PAIRS",
    "PAPER",
    "add_arguments",
    "auc_table",
    "patches_experiment",
    "run",
]

#: Descriptor lengths (real numbers) of the paper's Figures 7 and 8.
DEFAULT_LENGTHS = (4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32)
#: Descriptor names, in the order of the tables.
DESCRIPTORS = (
    "intensity",
    "histogram",
    "canonical histogram",
    "cos2K",
    "cos2K F1 canonical",
    "cos2K Fk canonical",
    "cos2K exact canonical",
)
#: What the paper reports (section 5.1, Figures 7–8); the figures give no other numbers.
PAPER = {
    "upright": "cos2K best from length 6 to 26, peak AUC 0.83 at length 10; canonical versions "
    "worse than their plain counterparts",
    "rotated": "plain histogram and cos2K fall sharply; canonical ones barely change; "
    "cos2K Fk canonical best, then cos2K F1 canonical, then the canonical histogram",
}
_FSKDE_METHODS = {
    "cos2K": "euclidean",
    "cos2K F1 canonical": "f1",
    "cos2K Fk canonical": "fk",
    "cos2K exact canonical": "exact",
}


def _select_pairs(data: UBCPatches, pairs: int, rng: np.random.Generator) -> np.ndarray:
    """Up to ``pairs`` pairs, ``pairs // 2`` corresponding and the rest not (an odd number
    has one more non-corresponding pair), drawn without replacement."""
    table = data.pairs
    if table.size == 0:
        raise ValueError(f"the {data.subset} data have no labelled pairs (no m50_*.txt file)")
    chosen = []
    for label, wanted in ((True, pairs // 2), (False, pairs - pairs // 2)):
        idx = np.flatnonzero(table["is_match"] == label)
        if idx.size == 0:
            raise ValueError(f"the {data.subset} pairs hold no {'non-' * (not label)}matching pair")
        chosen.append(rng.choice(idx, size=min(idx.size, wanted), replace=False))
    return np.sort(np.concatenate(chosen))


#: Fewer pairs of either kind than this and the AUC is too coarse to compare descriptors by.
FEW_PAIRS = 10


def _rotate_patches(patches: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each patch turned about its centre by a uniform random angle in [0°, 360°)."""
    from skimage.transform import rotate

    angles = rng.uniform(0.0, 360.0, len(patches))
    return np.stack(
        [
            rotate(p.astype(np.float64), a, order=1, mode="constant", preserve_range=True)
            for p, a in zip(patches, angles, strict=True)
        ]
    )


def _auc(is_match: np.ndarray, dist: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(is_match, -np.asarray(dist)))


def patches_experiment(
    pairs: int = 2000,
    lengths: Sequence[int] = DEFAULT_LENGTHS,
    rotate: bool = False,
    seed: int = 0,
    root: str | None = None,
    subset: str | None = None,
) -> list[dict]:
    """ROC AUC of every descriptor and length on corresponding vs non-corresponding pairs.

    Parameters
    ----------
    pairs : int, optional
        Number of pairs, half corresponding (default 2000; the paper uses 500,000).
    lengths : sequence of int, optional
        Descriptor lengths L >= 3 in real numbers: histogram bins, and ℓ = ceil(L/2) complex
        FS-KDE coefficients (:func:`xfskde.descriptors.coefficient_count`). Default 4 .. 32.
    rotate : bool, optional
        Turn every patch by a random angle first (Figure 8) instead of upright (Figure 7;
        default False).
    seed : int, optional
        Seed of the proxy, the pair sample and the rotations (default 0).
    root : str or None, optional
        Folder of a downloaded UBC copy; None (default) uses the scikit-image proxy.
    subset : str or None, optional
        UBC subset under ``root`` (default ``"liberty"``); refused without ``root`` (the proxy
        has none).

    Returns
    -------
    list of dict
        One row per (descriptor, length): ``descriptor`` (see :data:`DESCRIPTORS`), ``length``
        (real numbers; 2,828 pixels for intensity), ``rotated`` (bool), ``auc``, ``pairs``
        (number used) and ``data`` (``"proxy"`` or ``"ubc:<subset>"``).

    Warns
    -----
    UserWarning
        When the data hold fewer pairs than asked for, and when fewer than :data:`FEW_PAIRS`
        of either kind are used: each AUC is then a fraction of a few comparisons (1 and 1
        give 0 or 1 for every descriptor).

    Raises
    ------
    ValueError
        For no length or one below 3, a ``subset`` without ``root``, and data without
        labelled pairs of both kinds.
    """
    lengths = sorted({int(n) for n in lengths})
    if not lengths or min(lengths) < 3:
        raise ValueError(f"lengths must be integers >= 3, got {lengths}")
    if root is None and subset is not None:
        raise ValueError(
            f"subset={subset!r} names a UBC subset under root, and the proxy has none: give "
            "root (a downloaded UBC copy) or drop subset"
        )
    rng = np.random.default_rng(seed)
    if root is None:
        data = ubc_proxy(pairs, seed=seed)
        source = "proxy"
    else:
        data = load_ubc_patches(root, subset or "liberty")
        source = f"ubc:{data.subset}"
    which = _select_pairs(data, pairs, rng)
    first, second = (p.astype(np.float64) for p in data.pair_patches(which))
    if rotate:
        first, second = _rotate_patches(first, rng), _rotate_patches(second, rng)
    is_match = data.pairs["is_match"][which]
    matching = int(is_match.sum())
    others = int(which.size) - matching
    if which.size < pairs:
        warnings.warn(
            f"asked for {pairs} pairs, the {data.subset} data give {which.size} ({matching} "
            f"corresponding, {others} not): the AUCs are of those",
            stacklevel=2,
        )
    if min(matching, others) < FEW_PAIRS:
        warnings.warn(
            f"only {matching} corresponding and {others} non-corresponding pairs: each AUC is a "
            f"fraction of {matching * others} comparisons and tells the descriptors little "
            f"apart; use {2 * FEW_PAIRS} pairs or more",
            stacklevel=2,
        )
    base = {"rotated": bool(rotate), "pairs": int(which.size), "data": source}
    rows = []

    def add(name: str, length: int, dist: np.ndarray) -> None:
        auc = _auc(is_match, dist)
        rows.append({"descriptor": name, "length": int(length), **base, "auc": auc})

    a, b = D.intensity_descriptor(first), D.intensity_descriptor(second)
    add("intensity", a.shape[-1], np.linalg.norm(a - b, axis=-1))
    for length in lengths:
        ha, hb = D.gradient_histogram(first, length), D.gradient_histogram(second, length)
        add("histogram", length, np.linalg.norm(ha - hb, axis=-1))
        ca, cb = D.canonical_histogram(ha), D.canonical_histogram(hb)
        add("canonical histogram", length, np.linalg.norm(ca - cb, axis=-1))
    Fa, Fb = D.fskde_descriptors(first, lengths), D.fskde_descriptors(second, lengths)
    for name, method in _FSKDE_METHODS.items():
        for length in lengths:
            add(name, length, D.fskde_distance(Fa[length], Fb[length], method))
    return rows


def auc_table(rows: list[dict]) -> str:
    """The rows of :func:`patches_experiment` as a text table: descriptors × lengths.

    Parameters
    ----------
    rows : list of dict
        Output of :func:`patches_experiment` (one rotation setting).

    Returns
    -------
    str
        One line per descriptor, one column per length, the AUCs.
    """
    lengths = sorted({r["length"] for r in rows if r["descriptor"] != "intensity"})
    lines = [f"{'descriptor':22}" + "".join(f"{n:>7}" for n in lengths)]
    for name in DESCRIPTORS:
        mine = {r["length"]: r["auc"] for r in rows if r["descriptor"] == name}
        if not mine:
            continue
        if name == "intensity":
            (n, auc), *_ = mine.items()
            lines.append(f"{f'intensity ({n})':22}" + f"{auc:>7.3f}" * len(lengths))
        else:
            lines.append(f"{name:22}" + "".join(f"{mine[n]:>7.3f}" for n in lengths))
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``xfskde experiment patches``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The experiment's subcommand parser; each option is a parameter of
        :func:`patches_experiment`, with its default.
    """
    parser.add_argument(
        "--root", default=None, help="folder of a downloaded UBC copy (default: the proxy)"
    )
    parser.add_argument("--subset", default=None,
                        help="UBC subset under --root (default: liberty)")  # fmt: skip
    parser.add_argument("--pairs", type=int, default=2000, help="pairs, half matching")
    parser.add_argument("--rotate", action="store_true", help="rotate patches randomly (Fig. 8)")
    parser.add_argument("--lengths", nargs="+", action=_IntList, default=tuple(DEFAULT_LENGTHS),
                        metavar="N", help="descriptor lengths, 4,10 or 4 10")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="random seed")


def run(args: argparse.Namespace) -> int:
    """Run the experiment from parsed arguments and print the AUC table.

    Parameters
    ----------
    args : argparse.Namespace
        From :func:`add_arguments`.

    Returns
    -------
    int
        Exit status 0.
    """
    if args.pairs < 2:
        raise ValueError(f"--pairs must be >= 2, got {args.pairs}")
    if args.subset is not None and args.root is None:
        raise ValueError(
            f"--subset {args.subset} names a UBC subset under --root, and the proxy has none: "
            "give --root or drop --subset"
        )
    rows = patches_experiment(
        pairs=args.pairs,
        lengths=args.lengths,
        rotate=args.rotate,
        seed=args.seed,
        root=args.root,
        subset=args.subset,
    )
    setting = "rotated" if args.rotate else "upright"
    print(f"ROC AUC, {setting} patches, {rows[0]['pairs']} pairs of {rows[0]['data']}")
    print(auc_table(rows))
    print(f"paper ({setting}): {PAPER[setting]}")
    return 0
