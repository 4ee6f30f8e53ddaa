"""Agreement between two labelings: the Rand index and the adjusted Rand index (paper, section 5.3).

Both are computed exactly from the contingency table of the two labelings, in time linear in the
number of pixels: no sum over pairs of pixels is ever formed. With :math:`n_{ij}` the number of
pixels labelled *i* in the truth and *j* in the prediction, :math:`a_i = \\sum_j n_{ij}`,
:math:`b_j = \\sum_i n_{ij}` and *n* pixels,

.. math::

    \\mathrm{RI} = 1 + \\frac{2\\sum_{ij}\\binom{n_{ij}}{2} - \\sum_i\\binom{a_i}{2}
        - \\sum_j\\binom{b_j}{2}}{\\binom{n}{2}}

(Rand, 1971), the fraction of pixel pairs on which the two labelings agree (same region in both,
or different regions in both), and the adjusted Rand index of Hubert & Arabie (1985).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._scheduling import compute

__all__ = ["adjusted_rand_index", "contingency_table", "rand_index"]


def _labels(name: str, labels: Any) -> np.ndarray:
    (labels,) = compute([labels])  # a lazy result on Dask's current scheduler
    values = np.asarray(getattr(labels, "values", labels))
    if values.dtype.kind not in "iub":
        raise TypeError(f"{name} must hold integer labels, got dtype {values.dtype}")
    return values


def _flat_pair(labels_true: Any, labels_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    """Both labelings as integer arrays flattened in C order, once they are known to label
    the same pixels: the same size, and the same shape where both are images (a flat one
    beside an image is taken in C order; a transposed or reshaped image is refused, as it
    pairs other pixels)."""
    a, b = _labels("labels_true", labels_true), _labels("labels_pred", labels_pred)
    if a.size != b.size:
        raise ValueError(
            f"labels_true and labels_pred must label the same pixels, got {a.size} and {b.size}"
        )
    if a.ndim > 1 and b.ndim > 1 and a.shape != b.shape:
        raise ValueError(
            f"labels_true and labels_pred must label the same pixels, got shapes {a.shape} and "
            f"{b.shape}: pixel by pixel they pair other pixels (transpose or reshape one first "
            "if that is what you mean)"
        )
    return a.ravel(), b.ravel()


def contingency_table(labels_true: Any, labels_pred: Any) -> np.ndarray:
    """The table n_ij of pixels labelled i in ``labels_true`` and j in ``labels_pred``.

    Parameters
    ----------
    labels_true, labels_pred : array_like of int or bool, same size (same shape if both 2-D+)
        Two labelings of the same pixels (numpy, dask or xarray; any label values), compared
        element by element once flattened in C order (a lazy one is computed first).

    Returns
    -------
    numpy.ndarray of int64, shape (number of true labels, number of predicted labels)
        Rows and columns follow the sorted distinct label values present; the counts sum to
        the number of pixels.

    Raises
    ------
    TypeError
        For labels that are not integers or booleans (float labels, even whole ones).
    ValueError
        For labelings of different sizes, or of different shapes (both at least 2-D: a
        transposed image pairs other pixels), or of no pixel.
    """
    a, b = _flat_pair(labels_true, labels_pred)
    if a.size == 0:
        raise ValueError("labels_true and labels_pred are empty; give at least one pixel")
    ta, tb = _small_top(a), _small_top(b)
    if ta is not None and tb is not None and (ta + 1) * (tb + 1) <= _DIRECT_CELLS:
        # every pair of values counted in place, the absent values' rows and columns dropped
        joint = a.astype(np.intp) * (tb + 1)
        joint += b
        table = np.bincount(joint, minlength=(ta + 1) * (tb + 1)).reshape(ta + 1, tb + 1)
        return table[table.any(axis=1)][:, table.any(axis=0)].astype(np.int64)
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    na, nb = int(ia.max()) + 1, int(ib.max()) + 1
    counts = np.bincount(ia.astype(np.int64) * nb + ib, minlength=na * nb)
    return counts.reshape(na, nb).astype(np.int64)


#: Two labelings whose values are non-negative and span at most this many pairs of values
#: (segmentation labels, truths) are counted without sorting: 2048² pairs of uint8 labels in
#: 29 ms instead of 0.49 s (``np.unique`` sorts them).
_DIRECT_CELLS = 1 << 20


def _small_top(labels: np.ndarray) -> int | None:
    """The largest label, when every label is a non-negative integer below
    :data:`_DIRECT_CELLS`; else None."""
    if labels.dtype.kind == "b":
        return 1
    if labels.dtype.kind not in "ui" or (labels.dtype.kind == "i" and labels.min() < 0):
        return None
    top = int(labels.max())
    return top if top < _DIRECT_CELLS else None


def _pairs(counts: np.ndarray) -> float:
    c = counts.astype(np.float64)
    return float(np.sum(c * (c - 1.0)) / 2.0)


def _pair_sums(labels_true: Any, labels_pred: Any) -> tuple[float, float, float, float]:
    table = contingency_table(labels_true, labels_pred)
    n = float(table.sum())
    return _pairs(table), _pairs(table.sum(axis=1)), _pairs(table.sum(axis=0)), n * (n - 1) / 2


def rand_index(labels_true: Any, labels_pred: Any) -> float:
    """Rand index: the fraction of pixel pairs on which two labelings agree.

    Parameters
    ----------
    labels_true, labels_pred : array_like of int or bool, same size (same shape if both 2-D+)
        Ground truth and segmentation, compared pixel by pixel as in
        :func:`contingency_table`; label values need not match (a permutation of the labels
        does not change the index).

    Returns
    -------
    float in [0, 1]
        1 for identical partitions. A single pixel gives 1.

    Raises
    ------
    TypeError
        For labels that are not integers or booleans (float labels, even whole ones).
    ValueError
        For labelings of different sizes, or of different shapes (both at least 2-D: a
        transposed image pairs other pixels), or of no pixel.

    Examples
    --------
    >>> rand_index([0, 0, 1, 1], [5, 5, 2, 2])
    1.0
    """
    same_both, same_true, same_pred, total = _pair_sums(labels_true, labels_pred)
    if total == 0:
        return 1.0
    return 1.0 + (2.0 * same_both - same_true - same_pred) / total


def adjusted_rand_index(labels_true: Any, labels_pred: Any) -> float:
    """Adjusted Rand index (Hubert & Arabie): the Rand index corrected for chance.

    Parameters
    ----------
    labels_true, labels_pred : array_like of int or bool, same size (same shape if both 2-D+)
        Ground truth and segmentation, compared pixel by pixel as in
        :func:`contingency_table`; label values need not match.

    Returns
    -------
    float, at most 1
        1 for identical partitions (and when both put every pixel in one region, or a single
        pixel), about 0 for independent ones (can be negative).

    Raises
    ------
    TypeError
        For labels that are not integers or booleans (float labels, even whole ones).
    ValueError
        For labelings of different sizes, or of different shapes (both at least 2-D: a
        transposed image pairs other pixels), or of no pixel.
    """
    same_both, same_true, same_pred, total = _pair_sums(labels_true, labels_pred)
    if total == 0:
        return 1.0
    expected = same_true * same_pred / total
    maximum = (same_true + same_pred) / 2.0
    if maximum == expected:
        return 1.0
    return (same_both - expected) / (maximum - expected)
