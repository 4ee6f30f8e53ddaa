"""Person detection, Figure 9: linear-SVM accuracy against the descriptor length per 8×8 block.

Section 5.2 of the paper: each 64 × 128 window is described per 8 × 8-pixel block by

* ``intensity`` — the raw grey pixels (64 numbers per block, 8192 per window);
* ``gradient histogram`` — an |g|-weighted histogram of the signed gradient angles with
  ``length`` bins on [-π, π);
* ``HOG`` — :func:`skimage.feature.hog` with ``orientations=length``, 8 × 8 cells, 2 × 2-cell
  blocks, L2-Hys block normalisation (Dalal & Triggs' settings; unsigned angles, 0..180°);
* ``cos2K FS-KDE`` — :func:`xfskde.local_fskde` with a box window of 8 and stride 8 (one FS-KDE
  per block, eqs. 1, 6 and 8) of the order :meth:`xfskde.Cos2KKernel.for_length` picks for
  ``length // 2`` complex coefficients at ε = 1e-5, real and imaginary parts as features.

A linear SVM (scikit-learn ``LinearSVC`` on standardised features, C = :data:`SVM_C` = 1e-3, the
value a 3-fold cross-validation over 1e-3 .. 1 picked for every descriptor on the upright proxy's
training set; larger C only overfits the 600 windows) is trained on the training windows and
its accuracy measured on the test windows. With ``rotate=True`` every training and testing window
is turned by a uniform random angle in [-15°, 15°] before its centre is cropped, so no edge
artefacts appear (the paper's footnote). The data are INRIA person
(:func:`xfskde.datasets.load_inria_person`) when ``root`` is given, else the offline proxy
(:func:`xfskde.datasets.inria.person_proxy`).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..datasets.inria import WINDOW, InriaPerson, load_inria_person, person_proxy
from ..descriptors import as_real_vector, fskde_cells, histogram_cells, hog_descriptor
from . import _IntList

__all__ = [
    "DESCRIPTORS",
    "MAX_ROTATION_DEGREES",
    "PAPER_RESULT",
    "SVM_C",
    "add_arguments",
    "block_features",
    "detection_experiment",
    "rotate_and_crop",
    "run",
]

CELL = 8
MAX_ROTATION_DEGREES = 15.0
SVM_C = 1e-3
DESCRIPTORS = ("intensity", "gradient histogram", "HOG", "cos2K FS-KDE")
#: Figure 9's qualitative result (the paper gives no table).
PAPER_RESULT = (
    "upright: HOG best for most lengths, intensity worst; rotated (±15°): every descriptor "
    "loses accuracy, the cos2K FS-KDE the least, ending comparable to HOG; intensity falls "
    "below chance"
)


def rotate_and_crop(
    X: np.ndarray, margin: int, *, degrees: float = MAX_ROTATION_DEGREES, seed: int = 0
) -> np.ndarray:
    """Turn each window by a uniform random angle in [-degrees, degrees], then crop its centre.

    Parameters
    ----------
    X : numpy.ndarray, shape (n, 128 + 2 margin, 64 + 2 margin)
        Windows with context.
    margin : int
        Context on every side; >= 16 keeps a ±15° turn of a 64 × 128 window free of edge
        artefacts (section 5.2's footnote).
    degrees : float, optional
        The largest angle, in degrees (default 15); 0 only crops.
    seed : int, optional
        Seed of the random angles (default 0).

    Returns
    -------
    numpy.ndarray of float32, shape (n, 128, 64)
        The turned windows' centres.
    """
    import skimage.transform

    angles = np.random.default_rng(seed).uniform(-degrees, degrees, len(X))
    out = np.empty((len(X), *WINDOW), np.float32)
    for i, (window, angle) in enumerate(zip(X, angles, strict=True)):
        turned = (
            skimage.transform.rotate(window, angle, order=1, mode="reflect") if degrees else window
        )
        out[i] = turned[margin : margin + WINDOW[0], margin : margin + WINDOW[1]]
    return out


def _intensity(X: np.ndarray, length: int) -> np.ndarray:
    return X.reshape(len(X), -1)


def _gradient_histogram(X: np.ndarray, length: int) -> np.ndarray:
    return np.stack([histogram_cells(x, length, cell=CELL).ravel() for x in X])


def _hog(X: np.ndarray, length: int) -> np.ndarray:
    return hog_descriptor(X, length, pixels_per_cell=(CELL, CELL), cells_per_block=(2, 2))


def _fskde(X: np.ndarray, length: int) -> np.ndarray:
    return np.stack([as_real_vector(fskde_cells(x, length, cell=CELL)).ravel() for x in X])


_FEATURES: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "intensity": _intensity,
    "gradient histogram": _gradient_histogram,
    "HOG": _hog,
    "cos2K FS-KDE": _fskde,
}


def block_features(X: np.ndarray, descriptor: str, length: int) -> np.ndarray:
    """Feature vectors of 64 × 128 windows, ``length`` numbers per 8 × 8 block (section 5.2).

    Parameters
    ----------
    X : numpy.ndarray, shape (n, rows, cols)
        Grey windows; rows and cols multiples of 8.
    descriptor : {"intensity", "gradient histogram", "HOG", "cos2K FS-KDE"}
        See the module docstring. ``intensity`` ignores ``length`` (always 64 per block).
    length : int
        Numbers per block, an even int >= 4: histogram bins, HOG orientations, or twice the
        FS-KDE's complex coefficients (eq. 8's ℓ = length / 2).

    Returns
    -------
    numpy.ndarray, shape (n, n_features)
        One feature vector per window.

    Raises
    ------
    ValueError
        For a ``descriptor`` not in the list, a ``length`` that is not an even int >= 4, and
        windows that are not (n, rows, cols) with rows and cols multiples of 8.
    """
    if descriptor not in _FEATURES:
        raise ValueError(f"descriptor must be one of {DESCRIPTORS}, got {descriptor!r}")
    if int(length) != length or length < 4 or length % 2:
        raise ValueError(f"length must be an even int >= 4, got {length}")
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 3 or X.shape[1] % CELL or X.shape[2] % CELL:
        raise ValueError(f"X must be (n, rows, cols) with rows, cols multiples of 8, got {X.shape}")
    return _FEATURES[descriptor](X, int(length))


def _accuracy(train: np.ndarray, y_train, test: np.ndarray, y_test, C: float) -> float:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    model = make_pipeline(StandardScaler(), LinearSVC(C=C, dual="auto", max_iter=20000))
    return float(model.fit(train, y_train).score(test, y_test))


def _subset(X, y, n, rng):
    if n is None or n >= len(y):
        return X, y
    keep = np.sort(rng.choice(len(y), n, replace=False))
    return X[keep], y[keep]


def _data(root, n_train, n_test, seed) -> tuple[InriaPerson, str]:
    margin = 16
    if root is None:
        data = person_proxy(
            600 if n_train is None else n_train,
            400 if n_test is None else n_test,
            margin=margin,
            seed=seed,
        )
        return data, "proxy"
    data = load_inria_person(root, margin=margin, seed=seed)
    rng = np.random.default_rng(seed)
    X_train, y_train = _subset(data.X_train, data.y_train, n_train, rng)
    X_test, y_test = _subset(data.X_test, data.y_test, n_test, rng)
    return InriaPerson(X_train, y_train, X_test, y_test, margin, data.root), "INRIA"


def detection_experiment(
    lengths: Sequence[int] = (4, 8, 16, 32, 64),
    rotate: bool = False,
    seed: int = 0,
    root: str | Path | None = None,
    n_train: int | None = None,
    n_test: int | None = None,
    *,
    descriptors: Sequence[str] = DESCRIPTORS,
    C: float = SVM_C,
    verbose: bool = False,
) -> list[dict]:
    """Run the person-detection experiment of section 5.2 (Figure 9).

    Parameters
    ----------
    lengths : sequence of int, optional
        Numbers per 8 × 8 block, even ints >= 4 (paper: 4 to 64; default 4, 8, 16, 32, 64).
    rotate : bool, optional
        Turn every window by a uniform random angle in ±15° (seeded) before cropping its centre
        (default False).
    seed : int, optional
        Seeds the proxy, the negative windows, the subsets and the rotations (default 0).
    root : str or pathlib.Path, optional
        An unpacked INRIA person folder; None uses the offline proxy.
    n_train, n_test : int, optional
        Windows per split: the proxy's sizes (default 600 and 400), or a seeded random subset of
        INRIA (default: all of it).
    descriptors : sequence of str, optional
        Among :data:`DESCRIPTORS` (default all four). ``intensity`` gives one row, at length 64.
    C : float, optional
        The linear SVM's regularisation (default :data:`SVM_C`, 0.001).
    verbose : bool, optional
        Print each row as it is measured (default False).

    Returns
    -------
    list of dict
        One row per descriptor and length: ``dataset``, ``descriptor``, ``length``, ``rotated``,
        ``accuracy`` (correct test windows / test windows), ``n_features``, ``C``, ``seconds``.

    Raises
    ------
    ValueError
        For no length or one that is not an even int >= 4, an ``n_train`` or ``n_test``
        below 4, and a descriptor not in :data:`DESCRIPTORS`.
    """
    lengths = tuple(lengths)
    if not lengths:
        raise ValueError("lengths must hold at least one even int >= 4")
    for length in lengths:
        if int(length) != length or length < 4 or length % 2:
            raise ValueError(f"lengths must be even ints >= 4, got {length}")
    for name, n in (("n_train", n_train), ("n_test", n_test)):
        if n is not None and (isinstance(n, bool) or int(n) != n or n < 4):
            raise ValueError(f"{name} must be an int >= 4 (windows of both classes), got {n!r}")
    for name in descriptors:
        if name not in _FEATURES:
            raise ValueError(f"descriptors must be among {DESCRIPTORS}, got {name!r}")
    data, dataset = _data(root, n_train, n_test, seed)
    degrees = MAX_ROTATION_DEGREES if rotate else 0.0
    X_train = rotate_and_crop(data.X_train, data.margin, degrees=degrees, seed=seed + 1)
    X_test = rotate_and_crop(data.X_test, data.margin, degrees=degrees, seed=seed + 2)
    rows = []
    for descriptor in descriptors:
        for length in (64,) if descriptor == "intensity" else lengths:
            start = time.perf_counter()
            train = block_features(X_train, descriptor, length)
            test = block_features(X_test, descriptor, length)
            accuracy = _accuracy(train, data.y_train, test, data.y_test, C)
            row = {
                "dataset": dataset, "descriptor": descriptor, "length": int(length),
                "rotated": bool(rotate), "accuracy": accuracy, "n_features": train.shape[1],
                "C": C, "seconds": time.perf_counter() - start,
            }  # fmt: skip
            rows.append(row)
            if verbose:
                print(_format(row), flush=True)
    return rows


def _format(row: dict) -> str:
    turned = "rotated" if row["rotated"] else "upright"
    return (
        f"{row['dataset']:6} {turned:8} {row['descriptor']:19} {row['length']:3d}  "
        f"accuracy {row['accuracy']:.3f}  ({row['n_features']} features, C={row['C']:g})"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``xfskde experiment detection``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The experiment's subcommand parser; each option is a parameter of
        :func:`detection_experiment` (``--train`` its ``n_train``), with its default.
    """
    parser.add_argument(
        "--root", type=Path, default=None,
        help="unpacked INRIAPerson folder (default: the offline proxy)",
    )  # fmt: skip
    parser.add_argument(
        "--lengths", nargs="+", action=_IntList, default=(4, 8, 16, 32, 64), metavar="N",
        help="descriptor lengths, numbers per 8x8 block: 4,8 or 4 8",
    )  # fmt: skip
    parser.add_argument(
        "--rotate", action="store_true",
        help="also run with random ±15° rotations and print each drop",
    )  # fmt: skip
    parser.add_argument(
        "--train", type=int, default=None,
        help="training windows, >= 4 (default: 600 of the proxy, all of INRIA's)",
    )  # fmt: skip
    parser.add_argument(
        "--test", type=int, default=None,
        help="testing windows, >= 4 (default: 400 of the proxy, all of INRIA's)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="random seed")


def run(args: argparse.Namespace) -> int:
    """Run the experiment from parsed arguments and print the accuracy table.

    Parameters
    ----------
    args : argparse.Namespace
        The options of :func:`add_arguments`, passed to :func:`detection_experiment` (twice
        with ``--rotate``: upright, then rotated, and the loss of accuracy printed).

    Returns
    -------
    int
        Exit status 0.

    Raises
    ------
    ValueError
        For ``--train`` or ``--test`` below 4 (each needs windows of both classes).
    """
    for flag, n in (("--train", args.train), ("--test", args.test)):
        if n is not None and n < 4:
            raise ValueError(f"{flag} must be >= 4 (windows of both classes), got {n}")
    common = {"lengths": args.lengths, "seed": args.seed, "root": args.root,
              "n_train": args.train, "n_test": args.test, "verbose": True}  # fmt: skip
    upright = detection_experiment(rotate=False, **common)
    if args.rotate:
        rotated = detection_experiment(rotate=True, **common)
        print("\nloss of accuracy under ±15° rotations (upright − rotated):")
        for a, b in zip(upright, rotated, strict=True):
            print(f"  {a['descriptor']:19} {a['length']:3d}  {a['accuracy'] - b['accuracy']:+.3f}")
    print(f"\npaper (Figure 9, INRIA): {PAPER_RESULT}")
    return 0
