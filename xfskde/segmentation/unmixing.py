"""Unmixing: pure texture features (endmembers) and per-pixel abundances on the simplex.

Under the occlusion-of-random-textures model (McCann et al., IEEE TIP 2014) the local feature
vector x at a pixel is close to a convex combination a·E of the textures' pure features E (one
row per texture). :func:`fit_endmembers` estimates E from a sample of feature vectors and
:func:`abundances` solves, for every pixel at once, the fully constrained least squares problem

.. math:: \\min_a \\|x - a E\\|^2 \\quad\\text{s.t.}\\quad a \\ge 0,\\ \\textstyle\\sum_i a_i = 1.

The solution is exact: for every non-empty set S of active textures the equality-constrained
problem has a closed form (its KKT system depends on E only, so it is inverted once), and the
answer is the feasible candidate of lowest cost. Only the projections ``x Eᵀ`` are needed per
pixel, so the cost is one matrix product plus O(2^m m²) per pixel for m textures. Beyond
:data:`ENUMERATED` textures the 2^m - 1 supports cost more than a primal active-set method,
which reaches the same minimum (the problem is a convex quadratic programme) in a few steps
from the best single texture, each a KKT system of the textures then active.

**The within-texture metric.** The Euclidean norm weighs every direction of feature space
alike, while a texture's features vary within it far more along some directions (neighbouring
bins, filters of one scale, light and scale drifting across a photograph) than along others.
With the textures' common within-texture covariance W the least-squares problem becomes

.. math:: \\min_a (x - a E)\\, M\\, (x - a E)^\\top, \\qquad M = W^{-1},

the maximum-likelihood unmixing under Gaussian within-texture variation. It needs per pixel
only the projections ``x (E M)ᵀ`` on the *unmixing vectors* ``V = E M`` and the Gram matrix
``E M Eᵀ = V Eᵀ``: as fast as the Euclidean problem (``M = I``, ``V = E``).
:func:`fit_within_metric` estimates M from the sampled pixels (a Gaussian mixture with one
covariance shared by the textures, in the samples' principal subspace), and
:func:`refine_by_labels` then re-estimates E and M from the labels the unmixing gives the same
samples, until those labels stop changing.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import numbers
import threading
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import numba
import numpy as np

from ..exceptions import ParameterError

__all__ = [
    "ENDMEMBER_METHODS",
    "ENUMERATED",
    "MAX_TEXTURES",
    "MERGE_SPLIT_MARGIN",
    "METRIC_AXES",
    "METRIC_SHRINKAGE",
    "REFINE_ROUNDS",
    "RESPLIT_ROUNDS",
    "TRANSFER_EVIDENCE",
    "abundances",
    "fit_endmembers",
    "fit_stable_endmembers",
    "fit_within_metric",
    "refine_by_labels",
    "resplit_closest",
    "stable_samples",
    "unmixing_gram",
]

#: The most textures a model holds: the limit the enumeration of 2^m - 1 supports set, kept
#: since the active-set method lifted it (each texture needs its share of the fit's sample,
#: 20 000 pixels by default, and adds a projected plane to every block).
MAX_TEXTURES = 12

#: Up to this many textures the abundances enumerate the 2^m - 1 supports (vectorised over
#: pixels: 40 / 95 / 225 ns a pixel for 3 / 5 / 6 textures); beyond, the active-set method
#: (340 / 390 / 640 ns for 7 / 8 / 12, where the supports took 590 / 1 290 / 40 000 ns).
ENUMERATED = 6

ENDMEMBER_METHODS = ("nmf", "kmeans")

#: The within-texture metric (:func:`fit_within_metric`) is estimated in this many principal
#: axes of the stable samples (measured on 29 tuning mosaics, features every 4 px: 20 axes
#: Rand 0.903, 30 0.904, 50 0.898, 80 0.892; Euclidean 0.885) ...
METRIC_AXES = 30
#: ... and its covariance's eigenvalues are drawn this far toward their mean (0: none, 1: the
#: Euclidean metric in those axes).
METRIC_SHRINKAGE = 0.1
#: The pure samples the starting covariance is read from: abundance of one texture at least this.
_PURE = 0.9
#: At most this many rounds of :func:`refine_by_labels` (it stops earlier once no sample's label
#: changes) ...
REFINE_ROUNDS = 5
#: ... and it stops before a texture is left with fewer samples than this (its mean would be
#: noise).
_REFINE_MEMBERS = 10
#: At most this many re-splits of the closest textures are kept, one after another
#: (:func:`resplit_closest`; on the fit's samples of the mosaics, tuning / held out: 1 round
#: 0.917 / 0.928, 3 rounds 0.920 / 0.936; the images: tuning 0.919 / 0.922, held out with
#: perspective 0.932 / 0.940).
RESPLIT_ROUNDS = 3
#: The two closest textures merged and another split in two (:func:`resplit_closest`) are kept
#: only when log |W| (W in the :data:`METRIC_AXES` axes: a margin for that many) falls by more
#: than this: 1.5 times the largest fall of such a move on the images it was set on, where none
#: of them was right (0.40: a four-texture stripes mosaic 0.928 -> 0.821; the 30 tuning mosaics
#: at 512² and 1024², 18 four-texture mosaics of seeds 0 and 1, random textures and dead
#: leaves). Held out, the moves that mend a split drifting texture lower it by 0.94-1.34, the
#: others by at most 0.23.
MERGE_SPLIT_MARGIN = 0.6
#: A part of one texture relabelled as another (:func:`resplit_closest`) is kept only when
#: log |W| falls by more than this over the number of independent windows the samples were
#: drawn from (the area they cover over the window's effective area, 1/Σφ²: n log |W| is the
#: classification likelihood of n independent samples, up to constants). 1.5 times the
#: largest such product of a move that was wrong, 23.4, on the images it was set on (a blob
#: mosaic in perspective at 1024², a fall of 0.099 over 236 windows, 0.829 -> 0.750, by a
#: prototype that tried more cuts; the library's own largest is 11.1; the 30 tuning mosaics at
#: 512², 1024², 1536² and 2048², 18 four-texture mosaics of seeds 0 and 1, random textures,
#: grey random textures and dead leaves). There the moves that mended gave 42.9 (kept),
#: 4.7-7.4 (not kept). A fixed margin could not do it: a wrong move at 512² fell by 0.19 over
#: 58 windows, right ones at 1024² and 1536² by 0.17 and 0.22 over 219 and 315.
TRANSFER_EVIDENCE = 35.0
#: The half is relabelled as each of this many other textures, those nearest it in the metric
#: (:func:`_transfer`): every other texture for three, 4 m refinements for m textures instead
#: of 2 m (m - 1). The one move kept on a four-texture tuning mosaic went to the second
#: nearest (the nearest alone: a move of Rand 0.928 -> 0.924 instead of 0.978).
_TRANSFER_TARGETS = 2

_SKLEARN_LOCK = threading.Lock()
_sklearn_pools: Any = None


@contextlib.contextmanager
def _sklearn_on_one_thread() -> Iterator[None]:
    """scikit-learn loaded, and its OpenMP pool at one thread in the calling thread while it is
    inside.

    One thread: scikit-learn's threads spin while they wait, and on a machine whose cores are
    busy (Dask workers, other processes) k-means on 20 000 x 63 took 6.3 s with them and 0.5 s
    without. OpenMP's number of threads is each thread's own (``omp_set_num_threads`` sets the
    calling thread's), so every caller sets it for its thread and restores it as it leaves: set
    once for the process, the second of the window rule's two fits (side by side in two
    threads) ran its k-means on every core beside the first (a 512² image's fit of ten
    textures 5.0 s instead of 1.5 s).

    BLAS is held by the whole fit instead, from the thread that calls it
    (:func:`blas_on_one_thread`).

    The import and the OpenMP limits run under one lock: threadpoolctl finds the pools with
    ``dl_iterate_phdr``, which holds the dynamic loader's lock and calls back into Python for
    every library, while an import of an extension module holds the GIL and waits for that lock
    in ``dlopen`` — the first ``segment()`` of a process hung for good that way (scikit-learn
    imported in one window's thread while the other's limits were being set). The pools are
    found once, after scikit-learn's import has loaded its OpenMP runtime (each search took
    6.7 ms, six times a fit of a 2048² image).
    """
    with _SKLEARN_LOCK:
        openmp = _pools().select(user_api="openmp").limit(limits=1)  # this thread's
    try:
        yield
    finally:
        with _SKLEARN_LOCK:
            openmp.restore_original_limits()


def _pools() -> Any:
    """scikit-learn imported, and threadpoolctl's controller of the thread pools then loaded
    (OpenMP's, BLAS's), found once; to be called under :data:`_SKLEARN_LOCK`
    (:func:`_sklearn_on_one_thread` says why)."""
    global _sklearn_pools
    import sklearn.cluster
    import sklearn.decomposition  # noqa: F401
    from threadpoolctl import ThreadpoolController

    if _sklearn_pools is None:  # found once: each search of the loaded libraries took 6.7 ms
        _sklearn_pools = ThreadpoolController()
    return _sklearn_pools


_blas_users = 0  # fits inside blas_on_one_thread, in any thread
_blas_found: list[tuple[Any, int | None]] = []  # each BLAS pool and its count before the first


@contextlib.contextmanager
def blas_on_one_thread() -> Iterator[None]:
    """BLAS's thread pools at one thread while any caller is inside, then as they were.

    The fit of a model is small products (n × 30 samples, 30 × 30 covariances, the Gaussian
    mixtures of :func:`resplit_closest`) and Dask tasks that are a core each: BLAS's threads
    only wait and wake. Measured 2026-11-29 (2 cores, fits of a model, three runs each, BLAS
    at two threads against one): random textures 512² 0.49 → 0.39 s, with ten textures 2.13 →
    1.50 s, a 512² blob mosaic of real textures 0.95 → 0.62 s; 2048² RGB 1.55 → 1.12–1.22 s,
    grey 1.08–1.17 → 0.75–0.83 s; :func:`resplit_closest` alone on a 2048² image's sample
    0.40–0.58 → 0.20–0.23 s. Other threads of the process run their products on one thread
    too while a fit is inside.

    OpenBLAS's count is the process's, and threadpoolctl (3.8) lets only the thread that set it
    last set it again, until that thread clears its hold: so the first caller in records every
    pool's count and sets one, the last caller out (of any thread) sets the counts back, each
    clearing its hold at once. Threads inside (the window rule's two fits, Dask's workers,
    scikit-learn's own limit in k-means) find one thread and leave it at one. Before, a guard
    like this one did not clear the hold, and when the last thread out was not the one that
    had set the count, its restoring was silently ignored; and scikit-learn's limit, taken by
    two k-means side by side, had the second record the first's one thread as the count to
    restore: either way ``segment()`` left NumPy's BLAS at one thread for the rest of the
    process. A count set by another thread that still holds it (a ``threadpool_limits`` block
    open in another thread) is neither changed nor restored."""
    global _blas_users, _blas_found
    with _SKLEARN_LOCK:
        if _blas_users == 0:
            pools = _pools().select(user_api="blas").lib_controllers
            _blas_found = [(pool, pool.num_threads) for pool in pools]
            for pool, _ in _blas_found:
                pool.set_num_threads(1)
                _release(pool)
        _blas_users += 1
    try:
        yield
    finally:
        with _SKLEARN_LOCK:
            _blas_users -= 1
            if _blas_users == 0:
                for pool, count in _blas_found:
                    if count is not None and pool.num_threads != count:
                        pool.set_num_threads(count)
                        _release(pool)
                _blas_found = []


def _release(pool: Any) -> None:
    """threadpoolctl's hold on OpenBLAS's count cleared, if the calling thread has it (taken by
    setting the count; versions before the hold have nothing to clear)."""
    clear = getattr(type(pool), "clear_controlling_thread", None)
    if clear is not None:
        clear()


def fit_endmembers(
    samples: np.ndarray, n_textures: int, *, method: str = "nmf", seed: int = 0
) -> np.ndarray:
    """Pure texture features from a sample of feature vectors.

    Parameters
    ----------
    samples : numpy.ndarray, shape (n, D), non-negative
        Feature vectors of sampled pixels.
    n_textures : int
        Number m of textures.
    method : {"nmf", "kmeans"}, optional
        ``"nmf"``: :class:`sklearn.decomposition.NMF` (Frobenius loss, NNDSVDa start), X ≈ W H
        with the rows of H as endmembers, each rescaled so that the abundances W·diag(s) sum to
        one in the least-squares sense. ``"kmeans"``: the centres of
        :class:`sklearn.cluster.KMeans` (pure pixels dominate when regions are large).
    seed : int, optional
        Random state of the estimator.

    Returns
    -------
    numpy.ndarray, shape (m, D), float64
    """
    X = np.asarray(samples, dtype=np.float64)
    _check_textures(n_textures)
    if X.ndim != 2 or X.shape[0] < n_textures:
        raise ValueError(
            f"samples must be (n, D) with n >= n_textures = {n_textures}, got shape {X.shape}"
        )
    with _sklearn_on_one_thread():
        return _fit(X, n_textures, method, seed)


def _check_textures(n_textures: Any) -> None:
    """Refuse ``n_textures`` unless it is an integer >= 1."""
    if (
        isinstance(n_textures, bool)
        or not isinstance(n_textures, numbers.Integral)
        or n_textures < 1
    ):
        raise ParameterError(f"n_textures must be an integer >= 1, got {n_textures!r}")


def _fit(X: np.ndarray, n_textures: int, method: str, seed: int) -> np.ndarray:
    if method == "kmeans":
        from sklearn.cluster import KMeans

        km = KMeans(n_clusters=n_textures, n_init=4, random_state=seed).fit(X)
        return km.cluster_centers_
    if method != "nmf":
        raise ValueError(f"method must be one of {ENDMEMBER_METHODS}, got {method!r}")
    from sklearn.decomposition import NMF

    model = NMF(n_components=n_textures, init="nndsvda", max_iter=1000, tol=1e-4,
                random_state=seed)  # fmt: skip
    W = model.fit_transform(np.maximum(X, 0.0))
    H = model.components_
    inv_scale, *_ = np.linalg.lstsq(W, np.ones(W.shape[0]), rcond=None)
    inv_scale = np.where(inv_scale > 0, inv_scale, W.mean(axis=0) ** -1 / n_textures)
    return H / inv_scale[:, None]


def stable_samples(change: np.ndarray) -> np.ndarray:
    """The samples that see one texture across their window: those whose features change at
    most the median ``change`` across them (a boolean mask).

    Parameters
    ----------
    change : numpy.ndarray, shape (n,)
        How much each sample's features change across it.

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
        True at the samples whose change is at most the median (none when a change is NaN).
    """
    change = np.asarray(change, dtype=np.float64)
    return change <= np.median(change)


def fit_stable_endmembers(
    samples: np.ndarray, change: np.ndarray, n_textures: int, *, seed: int = 0
) -> np.ndarray:
    """Pure texture features from the sampled pixels that lie inside regions.

    A pixel whose features hardly change between points 1.5 window sigmas before and after
    it (``change``, :func:`xfskde.segmentation.model.fit_textures` measures it) sees one
    texture across its window; near a boundary its window mixes two, and k-means on every
    pixel spends clusters on those mixtures or splits a texture whose look drifts (perspective
    brick). So: keep the pixels of at most the median change, reduce them to their first
    ``n_textures`` principal components (the m-simplex spans at most m - 1 dimensions, plus
    one for the drift a texture carries), cluster them there with k-means (k-means++
    initialisation, seeded, 10 starts) and take each cluster's mean of the *full* features.

    A texture whose look drifts by more than the textures differ (gravel whose stones grow
    2x across a region in perspective) is still split: its features run along a curve that
    no single mean stands for, and the true regions' means score no better there
    (docs/segmentation-measurements.md, "A texture whose look drifts").

    The median is global: a texture whose features fluctuate more than the others' everywhere
    can lose most of its pixels to it and be merged (dead leaves of 160-256² at σ = 12:
    Rand 0.70-0.73 against 0.96 for k-means on every pixel; keeping the steadier half of each
    k-means cluster instead mends that but loses the held-out mosaics, 0.81 against 0.91).

    Parameters
    ----------
    samples : numpy.ndarray, shape (n, D)
        The sampled feature vectors.
    change : numpy.ndarray, shape (n,)
        How much each sample's features change across it (any non-negative measure).
    n_textures : int
        m, the number of textures (clusters).
    seed : int, optional
        Random state of the k-means; 0 by default.

    Returns
    -------
    numpy.ndarray, shape (m, D), float64
        The endmembers, one row per texture (all the samples' mean for a cluster left
        empty). Fewer stable samples than ``n_textures``: clustered from every sample.
    """
    X = np.asarray(samples, dtype=np.float64)
    _check_textures(n_textures)
    if X.ndim != 2 or X.shape[0] < n_textures or np.shape(change) != X.shape[:1]:
        raise ParameterError(
            f"samples must be (n, D) with n >= n_textures = {n_textures} and change (n,), got "
            f"shapes {X.shape} and {np.shape(change)}"
        )
    stable = X[stable_samples(change)]
    if stable.shape[0] < n_textures:
        stable = X
    centred = stable - stable.mean(axis=0)
    with _sklearn_on_one_thread():  # scikit-learn imported in there, under its lock
        from sklearn.cluster import KMeans

        # the principal axes: eigenvectors of the D × D scatter matrix, largest first (an SVD
        # of the n × D samples gives the same axes at 10x the cost)
        _, axes = np.linalg.eigh(centred.T @ centred)
        reduced = centred @ axes[:, ::-1][:, : max(1, n_textures)]
        km = KMeans(n_clusters=n_textures, n_init=10, random_state=seed).fit(reduced)
    members = [stable[km.labels_ == i] for i in range(n_textures)]
    return np.stack([m.mean(axis=0) if len(m) else stable.mean(axis=0) for m in members])


def fit_within_metric(
    samples: np.ndarray,
    change: np.ndarray | None,
    endmembers: np.ndarray,
    *,
    axes: int = METRIC_AXES,
    shrinkage: float = METRIC_SHRINKAGE,
    seed: int = 0,
) -> np.ndarray | None:
    """The unmixing vectors ``V = E M`` of the within-texture metric M (module docstring).

    1. The stable samples (:func:`stable_samples` of ``change``; all without it) and their
       first ``axes`` principal axes P (D × k): the directions in which the image's features
       vary at all; the metric ignores the others (in them every texture looks alike).
    2. A start: each sample's texture by its abundances under the Euclidean metric, and the
       covariance of the pure samples (abundance ≥ 0.9) about their endmember, in P's axes
       (Ledoit-Wolf shrinkage).
    3. A Gaussian mixture of the stable samples with one covariance W shared by the textures
       (:class:`sklearn.mixture.GaussianMixture`, ``covariance_type="tied"``), started at the
       endmembers and that covariance. Its E-M steps re-weigh every stable sample, the
       textures' harder parts included — what the pure samples alone lack: on 29 tuning
       mosaics their covariance alone gave Rand 0.891 against Euclidean 0.885, the mixture's
       0.903 (the truth's own within-texture covariance: 0.943).
    4. W's eigenvalues drawn ``shrinkage`` of the way toward their mean, then
       ``M = P W⁻¹ Pᵀ`` and ``V = E M``. The endmembers are kept: the mixture's means gave
       the same labels (0.904).

    Parameters
    ----------
    samples : numpy.ndarray, shape (n, D)
        The sampled feature vectors, scaled as the endmembers are.
    change : numpy.ndarray, shape (n,), or None
        How much each sample's features change across it (:func:`stable_samples`).
    endmembers : numpy.ndarray, shape (m, D)
        The endmembers E (the start's texture labels and means).
    axes : int, optional
        Principal axes the metric is estimated in (at most the stable samples' rank);
        :data:`METRIC_AXES` (30) by default.
    shrinkage : float in [0, 1], optional
        How far W's eigenvalues are drawn toward their mean; :data:`METRIC_SHRINKAGE` (0.1) by
        default.
    seed : int, optional
        Random state of the mixture (its start is given: it only breaks ties).

    Returns
    -------
    numpy.ndarray, shape (m, D), float64, or None
        ``E M``; None when the samples cannot estimate a covariance in ``axes`` axes (fewer
        than twice as many pure samples as axes).
    """
    X = np.asarray(samples, dtype=np.float64)
    E, _ = _unmixing_pair(endmembers, None, X.shape[-1] if X.ndim == 2 else -1)
    m = E.shape[0]
    stable = X[stable_samples(change)] if change is not None else X
    mean = stable.mean(axis=0)
    centred = stable - mean
    P = _principal_axes(centred, axes)
    k = P.shape[1]
    Z, Ez = centred @ P, (E - mean) @ P
    a = abundances(stable, E)  # the fit's own labels, in the Euclidean metric
    pure = a.max(axis=1) >= _PURE
    labels = a.argmax(axis=1)
    residuals = Z[pure] - Ez[labels[pure]]
    if k < 1 or residuals.shape[0] < 2 * k:
        return None
    with _sklearn_on_one_thread():
        from sklearn.covariance import LedoitWolf
        from sklearn.mixture import GaussianMixture

        start = LedoitWolf().fit(residuals).covariance_
        scale = float(np.trace(start)) / k
        mixture = GaussianMixture(
            m, covariance_type="tied", means_init=Ez, precisions_init=np.linalg.inv(start),
            reg_covar=1e-6 * scale, max_iter=100, random_state=seed,
        ).fit(Z)  # fmt: skip
    return _unmixing_vectors(E, P, mixture.covariances_, shrinkage)


def _principal_axes(centred: np.ndarray, axes: int) -> np.ndarray:
    """The first ``axes`` principal axes (D × k, largest first) of centred samples: the
    eigenvectors of their D × D scatter matrix (an SVD of the n × D samples gives the same at
    10x the cost), no more than the scatter's rank (eigenvalues above 1e-12 of the largest)."""
    values, vectors = np.linalg.eigh(centred.T @ centred)  # smallest first
    k = int(min(axes, np.count_nonzero(values > values[-1] * 1e-12)))
    return vectors[:, ::-1][:, :k]


def _principal_coordinates(X: np.ndarray, axes: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``axes`` principal axes P of the samples X (:func:`_principal_axes`) and the
    samples' coordinates in them, ``Z = (X - mean) P``: the space the metric's rounds run in."""
    centred = X - X.mean(axis=0)
    P = _principal_axes(centred, axes)
    return P, centred @ P


def _unmixing_vectors(
    E: np.ndarray, P: np.ndarray, covariance: np.ndarray, shrinkage: float
) -> np.ndarray | None:
    """``V = E M`` for the within-texture covariance W (k × k, in the axes P): W's eigenvalues
    drawn ``shrinkage`` of the way toward their mean, ``M = P W⁻¹ Pᵀ``. None when W is zero
    (every sample the same: no variation to weigh)."""
    whitening = _shrunk_whitening(covariance, shrinkage)
    if whitening is None:
        return None
    root = P @ whitening  # D × k: M = root rootᵀ
    return (E @ root) @ root.T


def _shrunk_whitening(covariance: np.ndarray, shrinkage: float) -> np.ndarray | None:
    """``U / sqrt(w)`` for the eigen-decomposition ``U diag(w) Uᵀ`` of a covariance, its
    eigenvalues (rounding's negatives set to 0) drawn ``shrinkage`` of the way toward their
    mean: the k × k map whose outer product is the shrunk W⁻¹. None when W is zero."""
    w, U = np.linalg.eigh(covariance)
    w = np.maximum(w, 0.0)
    w = (1.0 - shrinkage) * w + shrinkage * w.mean()
    if w.min() <= 0:
        return None
    return U / np.sqrt(w)


def refine_by_labels(
    samples: np.ndarray,
    endmembers: np.ndarray,
    vectors: np.ndarray,
    *,
    rounds: int = REFINE_ROUNDS,
    axes: int = METRIC_AXES,
    shrinkage: float = METRIC_SHRINKAGE,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Endmembers and within-texture metric re-estimated from the labels they give the samples.

    The endmembers come from the steadier half of the samples, the metric from a mixture fitted
    to that half (:func:`fit_stable_endmembers`, :func:`fit_within_metric`): both miss the
    textures' harder parts, and a texture whose steady core is small can be pulled toward the
    others. Here *every* sample is labelled by the arg-max of its abundances (:func:`abundances`
    in the metric of ``vectors``, which weighs a sample that mixes two textures as such); each
    texture's endmember becomes the mean of its samples and W the covariance of all samples
    about their texture's mean, in the samples' first ``axes`` principal axes, its eigenvalues
    drawn ``shrinkage`` of the way toward their mean (as in :func:`fit_within_metric`); then
    ``M = P W⁻¹ Pᵀ`` (P those axes), ``V = E M``, and again, until no label changes, at most
    ``rounds`` times: classification E-M steps of a mixture with one covariance, whose E-step
    is the unmixing itself.

    Measured (2026-11-27, 512² mosaics of scikit-image's brick, grass and gravel, about 7 000
    samples each): the 30 tuning mosaics Rand 0.901 → 0.911 / 0.914 after at most 2 / 5 rounds (23
    up, 5 down by at most 0.005; the largest gain 0.814 → 0.875); the 30 held-out ones 0.917 →
    0.924 / 0.925 (19 up, 8 down by at most 0.004). The same from the labels of the whole
    image's pixels, each texture's features taken only beyond σ / 2 of another label: 0.911
    on the tuning mosaics after 2 rounds, as from the samples alone (the image's layout adds
    nothing the samples' own unmixing lacks).

    Parameters
    ----------
    samples : numpy.ndarray, shape (n, D)
        Every sampled feature vector, scaled as the endmembers are.
    endmembers : numpy.ndarray, shape (m, D)
        The start's endmembers E.
    vectors : numpy.ndarray, shape (m, D)
        The unmixing vectors ``E M`` of the start (:func:`fit_within_metric`).
    rounds : int, optional
        At most this many re-estimates; :data:`REFINE_ROUNDS` (5) by default.
    axes : int, optional
        Principal axes of all the samples the covariance is estimated in; :data:`METRIC_AXES`
        (30) by default.
    shrinkage : float in [0, 1], optional
        How far W's eigenvalues are drawn toward their mean; :data:`METRIC_SHRINKAGE` (0.1) by
        default.

    Returns
    -------
    endmembers : numpy.ndarray, shape (m, D), float64
    vectors : numpy.ndarray, shape (m, D), float64
    rounds : int
        The re-estimates made. 0: the start is kept, when its labels leave a texture fewer than
        :data:`_REFINE_MEMBERS` samples or the samples are too few for the axes; a later round
        whose labels would do so keeps the estimate before it.
    """
    X = np.asarray(samples, dtype=np.float64)
    if vectors is None:
        raise ParameterError(
            "vectors must be the unmixing vectors (m, D) of fit_within_metric, got None"
        )
    E, V = _unmixing_pair(endmembers, vectors, X.shape[-1] if X.ndim == 2 else -1)
    P, Z = _principal_coordinates(X, axes)
    if P.shape[1] < 1 or X.shape[0] < 2 * P.shape[1]:
        return E, V, 0
    m = E.shape[0]
    refined = _refine(Z, abundances(X, E, V).argmax(axis=1), m, rounds, shrinkage)
    if refined is None:
        return E, V, 0
    labels, W, done, _ = refined
    return (*_in_all_features(X, P, labels, m, W, shrinkage), done)


def _in_all_features(
    X: np.ndarray, P: np.ndarray, labels: np.ndarray, m: int, W: np.ndarray, shrinkage: float
) -> tuple[np.ndarray, np.ndarray]:
    """The ``m`` endmembers in all D features (the means of the samples X each label holds)
    and their unmixing vectors in the metric of W (in the axes P)."""
    E = _label_means(X, labels, np.bincount(labels, minlength=m))
    return E, _unmixing_vectors(E, P, W, shrinkage)


def _refine(
    Z: np.ndarray,
    labels: np.ndarray,
    m: int,
    rounds: int,
    shrinkage: float,
    gram: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray] | None:
    """The rounds of :func:`refine_by_labels` from the samples' ``labels``, in the axes P.

    The metric lies in P's span, so each round runs on the samples' coordinates in those
    axes, ``Z = (X - mean) P`` (n × k rather than n × D; the unmixing is the same, the common
    shift of samples and endmembers cancelling under the abundances' sum to one); the
    endmembers in all D features are the means of the last labels, taken once by the caller
    (:func:`_in_all_features`), for the estimate it keeps.
    Returns the labels of the last estimate, its W, the rounds made and the labels that
    estimate gives the samples; None when the first labels leave a texture fewer than
    :data:`_REFINE_MEMBERS` samples (or W is zero). ``gram``: ``Zᵀ Z``, when the caller has
    it (:func:`_labelled_scatter`)."""
    k = Z.shape[1]
    gram = Z.T @ Z if gram is None else gram
    kept = None
    for _ in range(int(rounds)):
        scatter = _labelled_scatter(Z, labels, m, gram)
        if scatter is None:
            break
        means, W = scatter
        Vz = _unmixing_vectors(means, np.eye(k), W, shrinkage)
        if Vz is None:
            break
        done = 0 if kept is None else kept[2]
        new = abundances(Z, means, Vz).argmax(axis=1)
        kept = (labels, W, done + 1, new)
        if np.array_equal(new, labels):
            break
        labels = new
    return kept


def _label_means(values: np.ndarray, labels: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each texture's mean of the ``values`` (n × d) it labels, ``counts`` the samples each
    labels (none zero): the labels' indicator matrix (m × n) times the values, one pass."""
    members = labels == np.arange(counts.size)[:, None]
    return (members.astype(values.dtype) @ values) / counts[:, None]


def _labelled_scatter(Z: np.ndarray, labels: np.ndarray, m: int, gram: np.ndarray):
    """Each texture's mean of the samples (coordinates Z, n × k) it labels and their pooled
    covariance about those means (k × k); None when a texture labels fewer than
    :data:`_REFINE_MEMBERS`.

    The scatter about the means is the samples' own, ``gram`` = ``Zᵀ Z`` (computed once by the
    callers, which scatter the same samples under many labellings), less the means' weighted
    by their counts, ``Σ n_c μ_c μ_cᵀ``: one pass over the samples (their means) instead of
    two and an n × k × k product. The samples are centred (:func:`_principal_coordinates`),
    so the difference loses no more than rounding of the within-texture part."""
    counts = np.bincount(labels, minlength=m)
    if counts.min() < _REFINE_MEMBERS:
        return None
    means = _label_means(Z, labels, counts)
    scatter = gram - (means.T * counts) @ means
    return means, (scatter + scatter.T) / (2 * Z.shape[0])


def _log_det(covariance: np.ndarray) -> float:
    """log |W|, +inf for a singular W."""
    sign, value = np.linalg.slogdet(covariance)
    return float(value) if sign > 0 else math.inf


def resplit_closest(
    samples: np.ndarray,
    endmembers: np.ndarray,
    vectors: np.ndarray,
    *,
    axes: int = METRIC_AXES,
    shrinkage: float = METRIC_SHRINKAGE,
    seed: int = 0,
    rounds: int = RESPLIT_ROUNDS,
    windows: float | None = None,
) -> tuple[np.ndarray, np.ndarray, str | None]:
    """The two closest textures' samples split anew, kept when the labels fit better.

    :func:`refine_by_labels` is a classification E-M of a Gaussian mixture with one covariance
    W, and it has several fixed points: two similar textures (grass and gravel) can settle with
    a part of one labelled as the other, and stay so, while the same steps started from the
    truth's labels keep those. The criterion that E-M lowers at each step, log |W| of the
    samples about their labels' means (the mixture's classification likelihood, up to
    constants), tells the two apart where the fit cannot reach the truer one; so here the
    samples labelled by the two textures closest in the metric are split again seven ways —
    2-means along all the samples' first principal axis and along the first principal axis of
    the pair's features whitened by W, a two-component Gaussian mixture (full covariances) in
    the first two and three such axes, and each part of a three-component mixture along the
    first whitened axis against the other two (a texture of two modes, the other texture
    beyond one of them: every two-part split cuts between the modes) — each split refined as
    :func:`refine_by_labels` does, and the labels of lowest log |W|, if lower than the start's
    by 0.001, kept; and again from those, for the pair then closest, at most ``rounds`` times.
    Then two moves these re-splits cannot make, each followed by the re-splits again: the
    closest two merged and another texture split in two (:func:`_merge_and_split`), kept when
    log |W| falls by more than :data:`MERGE_SPLIT_MARGIN`; and a part of one texture
    relabelled as another (:func:`_transfer`), kept when it falls by more than
    :data:`TRANSFER_EVIDENCE` over ``windows``.

    Measured (2026-11-28, ``segment(image, 3)``, side by side with the fit without it): the 24
    held-out 512² mosaics of scikit-image's brick, grass and gravel 0.947 → 0.952 (a blob mosaic
    0.834 → 0.926; below 0.95: 9 → 8; 7 down, by at most 0.003), the six in perspective 0.858 →
    0.890 (0.699 → 0.886), random textures 0.980 → 0.977 (seed 103, two textures of close
    colours, 0.935 → 0.915), dead leaves unchanged; the 30 tuning mosaics 0.916 → 0.922 (one
    round: 0.919, and the perspective mosaic 0.699 → 0.669). On the fit's samples (their labels
    against the truth there), tuning / held out 0.914 / 0.926 → 0.920 / 0.936, and eight more
    splits (2-means in 2 to 10 axes; one round) gave the same; from the truth's labels the same
    steps reach 0.942 / 0.951. log |W| is no criterion between *any* labels: a split of the
    brick, whose features spread far more than the others', with grass and gravel merged, scores
    lower than the truth on some mosaics; hence only the closest pair is re-split.

    The 2-means are exact (the best cut of the sorted values) and the mixtures start once from
    k-means: the Rand of the 36 random-texture and mosaic images unchanged from Lloyd's 2-means
    from five starts and mixtures from three, the re-split 137 → 91 ms a fit (mean of the 60
    mosaics' samples). The three parts of a mixture of three (chosen on the tuning mosaics'
    samples, 0.9202 → 0.9217, over mixtures of three in 2 or 3 axes, 0.9159 / 0.9189, and cuts
    at the deciles or quintiles of the axis, 0.9200 / 0.9199): the 24 held-out mosaics 0.952 →
    0.955 (stripes rotated 0.912 → 0.963, stripes rescaled 0.842 → 0.849; below 0.95: 8 → 7;
    two down, by 0.001), in perspective 0.890 → 0.889, random textures, dead leaves and Table 1
    unchanged; 57 ms more a fit.

    Parameters
    ----------
    samples : numpy.ndarray, shape (n, D)
        Every sampled feature vector, scaled as the endmembers are.
    endmembers, vectors : numpy.ndarray, shape (m, D)
        The refined endmembers and unmixing vectors (:func:`refine_by_labels`).
    axes : int, optional
        Principal axes of all the samples W is estimated in; :data:`METRIC_AXES` (30) by
        default.
    shrinkage : float in [0, 1], optional
        How far W's eigenvalues are drawn toward their mean; :data:`METRIC_SHRINKAGE` (0.1) by
        default.
    seed : int, optional
        Random state of the splits.
    rounds : int, optional
        At most this many re-splits kept, one after the other.
    windows : float, optional
        How many independent windows the samples were drawn from: the area they cover over
        the window's effective area (:attr:`xfskde.windows.Window.effective_area`). None: as
        many as the samples (each from a window of its own).

    Returns
    -------
    endmembers, vectors : numpy.ndarray, shape (m, D), float64
        The start's or the re-split's.
    kept : str or None
        Which splits (and merge) were kept and how log |W| fell; None: the start.
    """
    X = np.asarray(samples, dtype=np.float64)
    if vectors is None:
        raise ParameterError(
            "vectors must be the unmixing vectors (m, D) of fit_within_metric, got None"
        )
    E, V = _unmixing_pair(endmembers, vectors, X.shape[-1] if X.ndim == 2 else -1)
    m = E.shape[0]
    P, Z = _principal_coordinates(X, axes)
    k = P.shape[1]
    if m < 2 or k < 1 or X.shape[0] < 2 * k:
        return E, V, None
    # every labelling of every round is scattered about its means from Zᵀ Z
    samples = _Samples(X, Z, P, Z.T @ Z, shrinkage)
    steps: list[str] = []
    E, V = _resplit_rounds(samples, E, V, seed, rounds, steps)
    moved = _merge_and_split(samples, E, V)
    if moved is not None:  # a texture cut in two, two others as one: the pair then re-split
        E, V, step = moved
        steps.append(step)
        E, V = _resplit_rounds(samples, E, V, seed, rounds, steps)
    moved = _transfer(samples, E, V, X.shape[0] if windows is None else float(windows))
    if moved is not None:  # a part of a texture given to another: the closest pair re-split
        E, V, step = moved
        steps.append(step)
        E, V = _resplit_rounds(samples, E, V, seed, rounds, steps)
    return E, V, ("; then ".join(steps) if steps else None)


class _Samples(NamedTuple):
    """The fit's samples as the re-splits and merges label them: all D features ``X``, their
    coordinates ``Z`` in the metric's principal axes ``P``, ``gram`` = ``Zᵀ Z`` and the
    metric's ``shrinkage``."""

    X: np.ndarray
    Z: np.ndarray
    P: np.ndarray
    gram: np.ndarray
    shrinkage: float


def _refined_fit(samples: _Samples, labels: np.ndarray, m: int) -> tuple[float, tuple] | None:
    """log |W| of the labels the rounds of :func:`refine_by_labels` reach from ``labels`` (the
    labelling's own estimate first, in the axes), and the estimate kept (:func:`_refine`'s);
    None when a texture is left with too few samples."""
    refined = _refine(samples.Z, labels, m, REFINE_ROUNDS + 1, samples.shrinkage, samples.gram)
    if refined is None:
        return None
    scatter = _labelled_scatter(samples.Z, refined[3], m, samples.gram)
    return None if scatter is None else (_log_det(scatter[1]), refined)


def _best_labelling(
    samples: _Samples,
    candidates: Iterable[tuple[Any, np.ndarray]],
    m: int,
    bound: float,
    step: float = 0.0,
) -> tuple[Any, float, np.ndarray, np.ndarray] | None:
    """The candidate labelling that fits best, once refined: each ``(what, labels)`` of
    ``candidates`` refined in turn (:func:`_refined_fit`), and one kept when its log |W| is
    lower by more than ``step`` than ``bound`` and than that of the one kept before it.
    Returns ``what`` of the last kept, its log |W|, and its endmembers in all D features and
    unmixing vectors (only that one's); None when none was kept. The re-splits, the merge and
    the transfer differ only in their candidates, their bound and their step."""
    best, kept = bound, None
    for what, labels in candidates:
        fitted = _refined_fit(samples, labels, m)
        if fitted is not None and fitted[0] < best - step:
            best, kept, estimate = fitted[0], what, fitted[1]
    if kept is None:
        return None
    E, V = _in_all_features(samples.X, samples.P, estimate[0], m, estimate[1], samples.shrinkage)
    return kept, best, E, V


def _resplit_rounds(
    samples: _Samples, E: np.ndarray, V: np.ndarray, seed: int, rounds: int, steps: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """At most ``rounds`` re-splits of the closest pair (:func:`_resplit_once`), each kept
    appended to ``steps``; the endmembers and unmixing vectors after the last."""
    for _ in range(int(rounds)):
        found = _resplit_once(samples, E, V, seed)
        if found is None:
            break
        E, V, step = found
        steps.append(step)
    return E, V


class _Start(NamedTuple):
    """Where a re-split, the merge or the transfer starts from (:func:`_closest_pair`)."""

    labels: np.ndarray  # each sample's label, the arg-max of its abundances
    score: float  # log |W| of their pooled covariance
    whitening: np.ndarray  # W's shrunk whitening
    pair: tuple[int, int]  # the two textures closest in it
    apart: np.ndarray  # each texture's mean of its samples in the whitened axes (m, k)


def _closest_pair(samples: _Samples, E: np.ndarray, V: np.ndarray) -> _Start | None:
    """Where a re-split, the merge or the transfer starts from (:class:`_Start`): the
    samples' labels (the arg-max of their abundances), log |W| of their pooled covariance, its
    shrunk whitening, the two textures closest in it and the labels' means in its whitened
    axes; None when a texture labels too few samples or W is singular."""
    m = E.shape[0]
    labels = abundances(samples.X, E, V).argmax(axis=1)
    start = _labelled_scatter(samples.Z, labels, m, samples.gram)
    if start is None:
        return None
    means, W = start
    score = _log_det(W)
    whitening = _shrunk_whitening(W, samples.shrinkage)
    if not np.isfinite(score) or whitening is None:
        return None
    apart = means @ whitening  # the means in the metric's whitened axes
    distance = {(i, j): float(np.sum((apart[i] - apart[j]) ** 2))
                for i in range(m) for j in range(i + 1, m)}  # fmt: skip
    return _Start(labels, score, whitening, min(distance, key=distance.get), apart)


def _merge_and_split(
    samples: _Samples, E: np.ndarray, V: np.ndarray
) -> tuple[np.ndarray, np.ndarray, str] | None:
    """The two textures closest in the metric merged into one and another texture split in
    two, kept when log |W| falls by more than :data:`MERGE_SPLIT_MARGIN`; None otherwise.

    A texture whose look drifts across the image (a photograph in perspective: its elements
    twice as large on one side) can be fitted as two textures, its near and far parts, while
    two similar textures are fitted as one; the re-splits of :func:`_resplit_once` only ever
    cut the closest pair again, which is then the two similar textures merged, so they cannot
    leave that fixed point. Here each texture but the closest two is cut in two at the
    optimal 2-means cut along the samples' first principal axis, and along the first axis of
    its own samples whitened by W (:func:`_halves`), the closest two are labelled as one, and
    each labelling is refined as :func:`refine_by_labels` does. log |W| alone is no
    criterion between any two labellings (see :func:`resplit_closest`), so a move is kept
    only when it fits far better.

    Measured (2026-12-01, ``segment(image, 3)``, side by side with the fit without it): the
    30 held-out 512² mosaics 0.9412 -> 0.9568 (the two stripe mosaics in perspective 0.733 /
    0.729 -> 0.965 / 0.965; below 0.95: 9 -> 7), at 1024² 0.9628 -> 0.9701 (a blob mosaic in
    perspective 0.742 -> 0.962; 3 -> 2); the tuning mosaics, random textures and dead leaves
    unchanged (no move falls by the margin).
    """
    m = E.shape[0]
    start = _closest_pair(samples, E, V) if m >= 3 else None  # 2: none left
    if start is None:
        return None
    labels, first, whitening, (i, j), _ = start
    merged = np.where(labels == j, i, labels)  # j's label is free for a half of the split

    def candidates() -> Iterator[tuple[tuple[int, str], np.ndarray]]:
        for k in (c for c in range(m) if c not in (i, j)):
            part = np.flatnonzero(labels == k)
            for axis, split in _halves(samples, part, whitening):
                relabelled = merged.copy()
                relabelled[part] = np.where(split == 0, k, j)
                yield (k, axis), relabelled

    found = _best_labelling(samples, candidates(), m, first - MERGE_SPLIT_MARGIN)
    if found is None:
        return None
    (k, axis), best, E, V = found
    why = (
        f"textures {i + 1} and {j + 1} (the closest) merged and texture {k + 1} split by "
        f"2-means along {axis}: log |W| {first:.3f} -> {best:.3f} (kept beyond a fall "
        f"of {MERGE_SPLIT_MARGIN:g})"
    )
    return E, V, why


def _halves(
    samples: _Samples, part: np.ndarray, whitening: np.ndarray, *, principal: bool = True
) -> list[tuple[str, np.ndarray]]:
    """The cuts in two of the samples ``part`` (indices) that the merge and the transfer try:
    the optimal 2-means (0 below the cut, 1 above) along the first of the samples' principal
    axes (with ``principal``), and along the first principal axis of the part's samples
    whitened by W (``whitening``); none when the part's samples coincide in the metric."""
    Zp = samples.Z[part] - samples.Z[part].mean(axis=0)
    Zw = Zp @ whitening
    Zw = Zw @ _principal_axes(Zw, 1)
    if Zw.shape[1] == 0:
        return []
    cuts = [("its first axis whitened by W", _two_means_on_a_line(Zw[:, 0]))]
    if principal:
        cuts.insert(0, ("the samples' first principal axis", _two_means_on_a_line(Zp[:, 0])))
    return cuts


def _transfer(
    samples: _Samples, E: np.ndarray, V: np.ndarray, windows: float
) -> tuple[np.ndarray, np.ndarray, str] | None:
    """A part of one texture relabelled as another, kept when log |W| falls by more than
    :data:`TRANSFER_EVIDENCE` over ``windows``, the number of independent windows the samples
    were drawn from; None otherwise.

    A texture whose look drifts across the image (a photograph in perspective) can be fitted
    with its far part labelled as a neighbouring texture that looks like it there: three
    labels for three textures, but one holding a texture and part of another. `refine`'s
    steps move single samples, which each fit the labels they have, and the re-splits cut
    the closest pair only. Here each texture is cut in two at the optimal 2-means cut along
    the first axis of its samples whitened by W (:func:`_halves`; every move that mended, on
    the tuning and the held-out images, was such a cut, and the merge's other cut, along the
    samples' first principal axis, would double the cost), each half relabelled in turn as
    each of the two other textures nearest it in the metric (:data:`_TRANSFER_TARGETS`), and
    each labelling refined as :func:`refine_by_labels` does (4 m refinements for m textures,
    2 m for two). log |W| alone is no criterion between any two labellings (see
    :func:`resplit_closest`), so a move is kept only when it fits far better — by more the
    fewer windows the image holds: on a small image a few windows' worth of drift or content
    can fit another labelling as well as a true one does.

    Measured (2026-12-01, ``segment(image, 3)``, side by side with the fit without it): see
    ``docs/segmentation-measurements.md``, "A part of one texture given to another".
    """
    m = E.shape[0]
    start = _closest_pair(samples, E, V)
    if start is None:
        return None
    labels, first, whitening, _, centres = start

    def candidates() -> Iterator[tuple[tuple[int, str, int, int], np.ndarray]]:
        for k in range(m):
            part = np.flatnonzero(labels == k)
            for axis, split in _halves(samples, part, whitening, principal=False):
                for half in (0, 1):
                    moved = part[split == half]
                    if not moved.size:
                        continue
                    # the other textures nearest the half in the metric, _TRANSFER_TARGETS
                    gaps = np.sum((centres - samples.Z[moved].mean(axis=0) @ whitening) ** 2, 1)
                    others = sorted((c for c in range(m) if c != k), key=lambda c: gaps[c])
                    for d in others[:_TRANSFER_TARGETS]:
                        relabelled = labels.copy()
                        relabelled[moved] = d
                        yield (k, axis, half, d), relabelled

    margin = TRANSFER_EVIDENCE / windows
    found = _best_labelling(samples, candidates(), m, first - margin)
    if found is None:
        return None
    (k, axis, half, d), best, E, V = found
    why = (
        f"the part of texture {k + 1} {'below' if half == 0 else 'above'} its 2-means cut "
        f"along {axis} relabelled as texture {d + 1}: log |W| {first:.3f} -> {best:.3f} "
        f"(kept beyond a fall of {margin:.3g}: {TRANSFER_EVIDENCE:g} over {windows:.0f} "
        "windows)"
    )
    return E, V, why


def _resplit_once(
    samples: _Samples, E: np.ndarray, V: np.ndarray, seed: int
) -> tuple[np.ndarray, np.ndarray, str] | None:
    """One re-split of :func:`resplit_closest`: the endmembers, unmixing vectors and what was
    done, or None when no split is better."""
    m, k = E.shape[0], samples.Z.shape[1]
    start = _closest_pair(samples, E, V)
    if start is None:
        return None
    labels, start_score, whitening, (i, j), _ = start
    pair = np.flatnonzero((labels == i) | (labels == j))
    Zp = samples.Z[pair] - samples.Z[pair].mean(axis=0)
    Zw = Zp @ whitening
    Zw = Zw @ _principal_axes(Zw, min(3, k))
    if Zw.shape[1] == 0:  # the pair's samples coincide in the metric: nothing to split
        return None
    with _sklearn_on_one_thread():
        from sklearn.mixture import GaussianMixture

        def mixture(Y: np.ndarray, parts: int = 2) -> np.ndarray:  # one start: k-means'
            return GaussianMixture(parts, random_state=seed).fit(Y).predict(Y)

        three = mixture(Zw[:, :1], 3)  # one texture of two modes, the other by one of them
        splits = {  # P's axes are all the samples' principal axes, largest first
            "2-means along the first axis": _two_means_on_a_line(Zp[:, 0]),
            "2-means along the first whitened axis": _two_means_on_a_line(Zw[:, 0]),
            "a mixture in 2 whitened axes": mixture(Zw[:, :2]),
            "a mixture in 3 whitened axes": mixture(Zw[:, :3]),
            **{
                f"part {c + 1} of a mixture of 3 along the first whitened axis": three == c
                for c in range(3)
            },
        }

    def candidates() -> Iterator[tuple[str, np.ndarray]]:
        for name, split in splits.items():
            relabelled = labels.copy()
            relabelled[pair] = np.where(split == 0, i, j)
            yield name, relabelled

    # each split's own estimate, then the rounds of refine_by_labels from its labels (in the
    # axes), kept when log |W| falls by more than 0.001
    found = _best_labelling(samples, candidates(), m, start_score, step=1e-3)
    if found is None:
        return None
    kept, best, E, V = found
    why = (
        f"textures {i + 1} and {j + 1} (the closest) re-split by {kept}: log |W| "
        f"{start_score:.3f} -> {best:.3f}"
    )
    return E, V, why


def _two_means_on_a_line(values: np.ndarray) -> np.ndarray:
    """The optimal 2-means of numbers (0 below the cut, 1 above): of the n - 1 cuts between
    the sorted values, the one of least within-group sum of squares — Otsu's criterion, on the
    values themselves rather than a histogram of them. Exact and deterministic where Lloyd's
    iterations from random starts may stop at another cut."""
    order = np.argsort(values, kind="stable")
    v = np.asarray(values, dtype=np.float64)[order]
    n = v.size
    if n < 2:
        return np.zeros(n, dtype=np.int64)
    v = v - v.mean()  # the sums of squares below, without their cancellation far from zero
    below = np.arange(1, n)  # the values below each cut
    s, s2 = np.cumsum(v)[:-1], np.cumsum(v * v)[:-1]
    sse = s2 - s * s / below + (v @ v - s2) - (v.sum() - s) ** 2 / (n - below)
    labels = np.zeros(n, dtype=np.int64)
    labels[order[int(np.argmin(sse)) + 1 :]] = 1
    return labels


def _supports(m: int) -> list[tuple[int, ...]]:
    return [s for r in range(1, m + 1) for s in itertools.combinations(range(m), r)]


def _unmixing_pair(
    endmembers: Any, vectors: Any, features: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The endmembers E and unmixing vectors V (E itself when ``vectors`` is None) as float64
    arrays, refused unless E is (m, D) with m >= 1, V of E's shape and, with ``features``, D
    that many."""
    E = np.asarray(endmembers, dtype=np.float64)
    if E.ndim != 2 or E.shape[0] < 1:
        raise ParameterError(
            f"endmembers must be (m, D), one row per texture (m >= 1), got shape {E.shape}"
        )
    V = E if vectors is None else np.asarray(vectors, dtype=np.float64)
    if V.shape != E.shape:
        raise ParameterError(
            f"vectors must have the endmembers' shape {E.shape}, got {V.shape}: give the "
            "unmixing vectors fitted with these endmembers, or None for the Euclidean metric"
        )
    if features is not None and E.shape[1] != features:
        raise ParameterError(
            f"the features have {features} columns and the endmembers {E.shape[1]}: give the "
            "features the model was fitted on, scaled and in the same order"
        )
    return E, V


def abundances(
    features: np.ndarray, endmembers: np.ndarray, vectors: np.ndarray | None = None
) -> np.ndarray:
    """Fully constrained least-squares abundances of every pixel (exact, vectorised).

    Parameters
    ----------
    features : array_like, shape (..., D)
        The pixels' features, scaled as the endmembers are: real numbers (integers and
        booleans are read as float64).
    endmembers : numpy.ndarray, shape (m, D)
        The pure textures' features E, m at most :data:`MAX_TEXTURES`.
    vectors : numpy.ndarray, shape (m, D), optional
        The unmixing vectors ``E M`` of a metric M (:func:`fit_within_metric`); default the
        Euclidean metric (``E``).

    Returns
    -------
    numpy.ndarray, shape (..., m), float32
        Non-negative, summing to one along the last axis; 0 for every texture at a pixel
        whose features hold a NaN.

    Raises
    ------
    ValueError
        When there are more than :data:`MAX_TEXTURES` endmembers.
    ParameterError
        When the features are not real numbers with a last axis, or their columns, the
        endmembers' and the vectors' disagree.
    """
    features = np.asarray(features)
    if features.dtype.kind in "biu":  # the product below is in the features' dtype
        features = features.astype(np.float64)
    if features.dtype.kind != "f" or features.ndim < 1:
        raise ParameterError(
            f"features must be real numbers of shape (..., D), got {features.dtype} of shape "
            f"{features.shape}"
        )
    E, V = _unmixing_pair(endmembers, vectors, features.shape[-1])
    shape = features.shape[:-1]
    flat = features.reshape(-1, features.shape[-1])
    b = flat @ V.T.astype(flat.dtype)  # (n, m): the only per-pixel data the solution needs
    return abundances_from_projections(b, unmixing_gram(E, V)).reshape(*shape, E.shape[0])


def unmixing_gram(endmembers: np.ndarray, vectors: np.ndarray | None = None) -> np.ndarray:
    """The Gram matrix ``E M Eᵀ = V Eᵀ`` of the unmixing (symmetric: ``E Eᵀ`` without a
    metric).

    Parameters
    ----------
    endmembers : numpy.ndarray, shape (m, D)
        The endmembers E.
    vectors : numpy.ndarray, shape (m, D), optional
        The unmixing vectors ``V = E M`` (:func:`fit_within_metric`); None (the default): the
        Euclidean metric.

    Returns
    -------
    numpy.ndarray, shape (m, m), float64
        The Gram matrix, symmetrised (``(V Eᵀ + E Vᵀ) / 2``) with a metric.
    """
    E, V = _unmixing_pair(endmembers, vectors)
    if vectors is None:
        return E @ E.T
    gram = V @ E.T
    return (gram + gram.T) / 2


#: Pixels :func:`_best_supports` solves together: its inner loops run along them, so that the
#: compiler vectorises them (the supports' coefficients are the same for every pixel).
_SUPPORT_CHUNK = 256


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _best_supports(b, members, sizes, inverse, offset, gram, out):
    """Per pixel, the feasible equality-constrained solution of lowest cost (see module doc).

    Pixels are taken :data:`_SUPPORT_CHUNK` at a time, their projections transposed so that
    every step of a support (its solution, feasibility and cost) is one loop along the chunk's
    pixels, which the compiler vectorises: the same operations in the same order as one pixel
    at a time, so the same results, 4-5 times faster (80 -> 16 ns a pixel for three textures,
    170 -> 37 ns for four; 3.7 times faster with chunks of 64, 5.1 with 512). A support's
    cost is ``Σ_j a_j (Σ_i G_ji a_i - 2 b_j)``; the first support of least cost (less by
    1e-12) is kept, its negative rounding clipped to 0 and the abundances renormalised; a
    pixel without a feasible support (NaN projections) gets 0 for every texture."""
    n, m = b.shape
    chunk = _SUPPORT_CHUNK
    bt = np.empty((m, chunk))  # the chunk's projections, one row per texture
    a = np.empty((m, chunk))  # the current support's solution (its first k rows)
    kept = np.zeros((m, chunk))  # the best support's clipped solution so far
    best = np.empty(chunk)
    cost = np.empty(chunk)
    ga = np.empty(chunk)
    feasible = np.empty(chunk, np.bool_)
    better = np.empty(chunk, np.bool_)
    for start in range(0, n, chunk):
        c = min(chunk, n - start)
        for p in range(c):
            for j in range(m):
                bt[j, p] = b[start + p, j]
        best[:c] = np.inf
        kept[:, :c] = 0.0
        for s in range(sizes.shape[0]):
            k = sizes[s]
            feasible[:c] = True
            for j in range(k):
                first = offset[s, j]
                for p in range(c):
                    a[j, p] = first
                for i in range(k):
                    w = inverse[s, j, i]
                    row = members[s, i]
                    for p in range(c):
                        a[j, p] += w * bt[row, p]
                for p in range(c):
                    feasible[p] = feasible[p] and a[j, p] >= -1e-9
            cost[:c] = 0.0
            for j in range(k):
                ga[:c] = 0.0
                for i in range(k):
                    g = gram[members[s, j], members[s, i]]
                    for p in range(c):
                        ga[p] += g * a[i, p]
                row = members[s, j]
                for p in range(c):
                    cost[p] += a[j, p] * (ga[p] - 2.0 * bt[row, p])
            for p in range(c):
                better[p] = feasible[p] and cost[p] < best[p] - 1e-12
                if better[p]:
                    best[p] = cost[p]
            for j in range(m):
                for p in range(c):
                    if better[p]:
                        kept[j, p] = 0.0
            for j in range(k):
                row = members[s, j]
                for p in range(c):
                    if better[p]:
                        kept[row, p] = max(a[j, p], 0.0)
        for p in range(c):  # the sum in the textures' order, as the supports list them
            total = 0.0
            for j in range(m):
                total += kept[j, p]
            for j in range(m):  # 0 where no support is feasible (projections not finite)
                out[start + p, j] = kept[j, p] / total if total > 0 else 0.0


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _kkt_solve(gram, b, free, k, work, sol):
    """The equality-constrained minimum on the k textures ``free[:k]``: the KKT system
    ``[[G_FF, 1], [1ᵀ, 0]] [a; ν] = [b_F; 1]`` by Gaussian elimination with partial pivoting,
    into ``sol`` (a, then ν). False where the system is singular (those textures' features
    affinely dependent)."""
    n = k + 1
    for i in range(k):
        for j in range(k):
            work[i, j] = gram[free[i], free[j]]
        work[i, k] = 1.0
        work[i, n] = b[free[i]]
    for j in range(k):
        work[k, j] = 1.0
    work[k, k] = 0.0
    work[k, n] = 1.0
    scale = 1.0
    for i in range(k):
        scale = max(scale, abs(work[i, i]))
    for c in range(n):
        pivot = c
        for r in range(c + 1, n):
            if abs(work[r, c]) > abs(work[pivot, c]):
                pivot = r
        if abs(work[pivot, c]) <= 1e-13 * scale:
            return False
        if pivot != c:
            for j in range(c, n + 1):
                work[c, j], work[pivot, j] = work[pivot, j], work[c, j]
        for r in range(c + 1, n):
            f = work[r, c] / work[c, c]
            if f != 0.0:
                for j in range(c, n + 1):
                    work[r, j] -= f * work[c, j]
    for r in range(n - 1, -1, -1):
        total = work[r, n]
        for j in range(r + 1, n):
            total -= work[r, j] * sol[j]
        sol[r] = total / work[r, r]
    return True


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _active_set(b, gram, out):
    """Per pixel, the minimum of ``a G aᵀ - 2 a·b`` on the simplex by a primal active-set
    method (Nocedal & Wright, *Numerical Optimization*, algorithm 16.3), the textures held at 0
    the working set.

    From the best single texture (a vertex, always feasible) it solves the KKT system of the
    active textures; where the solution leaves the simplex it steps to the simplex's edge and
    drops the texture that reached 0, and where it lies inside it adds the texture of most
    negative multiplier ``(G a - b)_j + ν``, until none is negative (below 1e-12 times G's
    scale): the KKT conditions of the convex problem, so the minimum :func:`_best_supports`
    finds too (the same abundances to float32 rounding). A texture whose addition makes the
    system singular is left out for that pixel. A pixel with a projection not finite gets 0
    for every texture."""
    n, m = b.shape
    free = np.empty(m, np.int64)  # the active textures, free[:k]
    active = np.zeros(m, np.bool_)
    skipped = np.zeros(m, np.bool_)
    a = np.zeros(m)
    sol = np.empty(m + 1)
    work = np.empty((m + 1, m + 2))
    tol = 1e-12 * max(1.0, np.abs(gram).max())
    for p in range(n):
        bp = b[p]
        finite = True
        for j in range(m):
            finite = finite and np.isfinite(bp[j])
        if not finite:
            for j in range(m):
                out[p, j] = 0.0
            continue
        first = 0
        for j in range(1, m):
            if gram[j, j] - 2.0 * bp[j] < gram[first, first] - 2.0 * bp[first]:
                first = j
        for j in range(m):
            a[j] = 0.0
            active[j] = False
            skipped[j] = False
        a[first], active[first], free[0], k = 1.0, True, first, 1
        nu = bp[first] - gram[first, first]  # (G a - b)_F + ν = 0 at the vertex
        solve, added = False, False  # the vertex is the minimum on its own support
        for _ in range(8 * m + 8):
            if solve:
                if not _kkt_solve(gram, bp, free, k, work, sol):
                    if not added:  # a part of a system that was solved: only rounding
                        break
                    k -= 1  # the texture just added: left out for this pixel
                    active[free[k]] = False
                    skipped[free[k]] = True
                else:
                    step, block = 1.0, -1
                    for i in range(k):
                        if sol[i] < 0.0:
                            ratio = a[free[i]] / (a[free[i]] - sol[i])
                            if ratio < step:
                                step, block = ratio, i
                    if block >= 0:  # to the simplex's edge; the textures at 0 leave
                        for i in range(k):
                            a[free[i]] += step * (sol[i] - a[free[i]])
                        a[free[block]] = 0.0
                        kept = 0
                        for i in range(k):
                            j = free[i]
                            if a[j] > 0.0:
                                free[kept] = j
                                kept += 1
                            else:
                                a[j] = 0.0
                                active[j] = False
                        k, added = kept, False
                        continue
                    for i in range(k):
                        a[free[i]] = sol[i]
                    nu = sol[k]
            worst, add = -tol, -1  # the most negative multiplier of a texture held at 0
            for j in range(m):
                if active[j] or skipped[j]:
                    continue
                multiplier = nu - bp[j]
                for i in range(k):
                    multiplier += gram[j, free[i]] * a[free[i]]
                if multiplier < worst:
                    worst, add = multiplier, j
            if add < 0:
                break
            free[k], active[add], k, solve, added = add, True, k + 1, True, True
        total = 0.0
        for j in range(m):
            a[j] = max(a[j], 0.0)
            total += a[j]
        for j in range(m):
            out[p, j] = a[j] / total if total > 0 else 0.0


def abundances_from_projections(b: np.ndarray, gram: np.ndarray) -> np.ndarray:
    """:func:`abundances` from the projections ``b = X Eᵀ`` (n, m) and the Gram matrix ``E Eᵀ``
    (in a metric M: ``b = X (E M)ᵀ`` and ``E M Eᵀ``, :func:`unmixing_gram`).

    The exact solution depends on a pixel's features only through ``b``: for each of the
    2^m - 1 supports the KKT system of min ‖x - aE‖² subject to a ≥ 0, Σa = 1 involves only
    ``gram``, so it is inverted once; a compiled loop then tries the supports pixel by pixel.
    Beyond :data:`ENUMERATED` textures a compiled active-set method finds the same minimum
    (:func:`_active_set`).

    Returns
    -------
    numpy.ndarray, shape (n, m), float32
    """
    G = np.asarray(gram, dtype=np.float64)
    m = G.shape[0] if G.ndim == 2 else -1
    if G.shape != (m, m) or m < 1 or np.ndim(b) != 2 or np.shape(b)[1] != m:
        raise ParameterError(
            f"b must be (n, m) and gram (m, m), m >= 1, got shapes {np.shape(b)} and {G.shape}"
        )
    if m > MAX_TEXTURES:
        raise ValueError(f"at most {MAX_TEXTURES} textures (MAX_TEXTURES) are unmixed, got {m}")
    if m > ENUMERATED:
        out = np.zeros(b.shape)
        _active_set(np.ascontiguousarray(b, dtype=np.float64), G, out)
        return out.astype(np.float32)
    supports = _supports(m)
    members = np.zeros((len(supports), m), dtype=np.int64)
    sizes = np.array([len(s) for s in supports], dtype=np.int64)
    inverse = np.zeros((len(supports), m, m))
    offset = np.zeros((len(supports), m))
    for i, support in enumerate(supports):
        s = list(support)
        k = len(s)
        kkt = np.zeros((k + 1, k + 1))
        kkt[:k, :k] = G[np.ix_(s, s)]
        kkt[:k, k] = kkt[k, :k] = 1.0
        inv = np.linalg.pinv(kkt)
        members[i, :k] = s
        inverse[i, :k, :k] = inv[:k, :k]
        offset[i, :k] = inv[:k, k]
    b = np.ascontiguousarray(b, dtype=np.float64)
    out = np.zeros(b.shape)
    _best_supports(b, members, sizes, inverse, offset, G, out)
    return out.astype(np.float32)
