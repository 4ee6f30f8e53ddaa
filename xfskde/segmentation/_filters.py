"""The window φ applied to stacks of vote planes, at chosen samples only (compiled with numba).

Every texture feature is φ * v: the window applied to a per-pixel vote v (a one-hot bin
indicator times a weight, or a dense vector). Segmentation needs φ * v only at the samples of a
stride grid, never at every pixel, so a separable window is applied in two passes that each
compute only what the next needs:

1. vertical, at the sample rows only: ``rows[i, x, c] = Σ_t p[t] · v[r_i + t, x, c]`` for every
   column x;
2. horizontal, at the sample columns only: ``out[i, j, c] = Σ_t p[t] · rows[i, c_j + t, c]``.

With a stride s the cost per output sample falls from 2L·n to (L/s + L)·n/s multiply-adds for a
window of L taps and n planes, so a wide window on a coarse grid costs what a narrow one costs
on a fine grid. One-hot votes never build their planes: the vertical pass gathers straight
from the bin indices (one multiply-add per tap and pixel, whatever the number of bins). The
input holds every pixel the window reaches (the caller pads a block by its halo), so there is
no boundary rule here: ``r_i`` and ``c_j`` are the first row and column each sample's window
reads. The disk, which is not separable, is summed row segment by row segment from prefix sums
along x (:func:`disk_sums`).

A wide separable window need not read every pixel: with a :class:`Lattice` of step q only the
pixels whose global row and column are multiples of q vote, each tap weighing q times as much
(a quadrature of the same window on the image's own lattice, so chunk independence holds), and
both passes cost q times less each.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "Lattice",
    "disk_sums",
    "interpolate",
    "phasor_powers",
    "project_binned",
    "project_phasors",
    "separable_binned",
    "separable_dense",
]


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _rows_dense(src, profile, row0, first, step, out):
    """``out[i, x, c] = Σ_t step · profile[t] · src[row0[i] + (t - first[i]) / step, x, c]``
    over the taps ``t = first[i], first[i] + step, ...``: (h', w, n) → (ny, w, n), ``src``
    holding the lattice's rows only (every row for step 1)."""
    for i in range(out.shape[0]):
        row = out[i].reshape(-1)
        row[:] = 0
        g = row0[i]
        for t in range(first[i], profile.shape[0], step):
            p = np.float32(profile[t] * step)
            source = src[g].reshape(-1)
            for j in range(row.shape[0]):
                row[j] += p * source[j]
            g += 1


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _rows_binned(bins, weight, uniform, profile, row0, first, step, out):
    """The vertical pass of one-hot planes from their bin indices:
    ``out[i, x, bins[g, x]] += step · profile[t] · weight[g, x]`` for the lattice rows
    ``g = row0[i], row0[i] + 1, ...`` of the taps ``t = first[i], first[i] + step, ...``; with
    an empty ``weight``, every pixel's weight is ``uniform`` (a float32 value, in float64),
    whose product with a tap is then formed once per row: the same sums, a third faster (the
    fit's blocks without missing pixels)."""
    same = weight.size == 0
    for i in range(out.shape[0]):
        row = out[i]
        row[:, :] = 0
        g = row0[i] - 1
        for t in range(first[i], profile.shape[0], step):
            p = profile[t] * step
            g += 1
            if same:
                pw = p * uniform
                for x in range(row.shape[0]):
                    row[x, bins[g, x]] += pw
            else:
                for x in range(row.shape[0]):
                    row[x, bins[g, x]] += p * weight[g, x]


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _columns(src, profile, starts, first, step, out):
    """``out[i, j, c] = step · Σ_t profile[t] · src[i, (starts[j] + t) // step, c]`` over the
    taps ``t = first[j], first[j] + step, ...`` (``src`` holds every step-th column, from a
    column on the lattice): (ny, w / step, n) → (ny, nx, n); up to 8 planes summed in float64,
    more in float32 along the planes' contiguous axis."""
    ny, nx, n = out.shape
    taps = profile.shape[0]
    for i in range(ny):
        row = src[i]
        for j in range(nx):
            x0 = (starts[j] + first[j]) // step  # then one lattice column per tap
            if n <= 8:  # a few planes (projections): one at a time, the sum in a register
                for c in range(n):
                    total = 0.0
                    x = x0
                    for t in range(first[j], taps, step):
                        total += profile[t] * row[x, c]
                        x += 1
                    out[i, j, c] = total * step
            else:  # many planes (features): all at once, along contiguous memory
                acc = out[i, j]
                acc[:] = 0
                x = x0
                for t in range(first[j], taps, step):
                    p = np.float32(profile[t] * step)
                    column = row[x]
                    for c in range(n):
                        acc[c] += p * column[c]
                    x += 1


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _columns_regular(src, profile, x0, spacing, first, step, out):
    """:func:`_columns` when every sample's first tap is ``first`` and sample j reads from
    lattice column ``x0 + j · spacing``: the same products and sums, in the same order (for a
    few planes each tap's float32 product added to a float64 sum, for many a float32 sum of
    the taps' weights times ``step``), but a whole column of the block at a time. ``src`` is
    transposed to (w, ny · n) first, so that a tap of sample j adds one contiguous column —
    every row and plane — to j's accumulator: a loop over contiguous memory, which vectorises
    (over the rows and planes of one column, where a loop over the samples of a row reads every
    ``spacing``-th value, and one over a sample's taps, or over a few planes, waits on each
    addition)."""
    ny, _, n = out.shape
    taps = profile.shape[0]
    columns = np.empty((src.shape[1], ny * n), np.float32)
    for i in range(ny):
        for x in range(src.shape[1]):
            for c in range(n):
                columns[x, i * n + c] = src[i, x, c]
    if n <= 8:  # a few planes (projections): each sum in float64, times step at the end
        _sum_columns(columns, profile, x0, spacing, first, step, np.empty(ny * n), step, out)
    else:  # many planes (features): in float32, each tap's weight times step first
        weights = np.empty(taps, np.float32)
        for t in range(taps):
            weights[t] = np.float32(profile[t] * step)
        acc = np.empty(ny * n, np.float32)
        _sum_columns(columns, weights, x0, spacing, first, step, acc, np.float32(1), out)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _sum_columns(columns, weights, x0, spacing, first, step, total, scale, out):
    """The sums of :func:`_columns_regular`: ``out[i, j, c] = scale · Σ_t weights[t] ·
    columns[x_j(t), i · n + c]`` over the taps ``t = first, first + step, ...``, sample j's
    first column ``x0 + j · spacing`` and one column per tap, each product added to ``total``
    (a row of ny · n sums in its own dtype)."""
    ny, nx, n = out.shape
    for j in range(nx):
        total[:] = 0
        x = x0 + j * spacing
        for t in range(first, weights.shape[0], step):
            p = weights[t]
            column = columns[x]
            for k in range(total.shape[0]):
                total[k] += p * column[k]
            x += 1
        for i in range(ny):
            for c in range(n):
                out[i, j, c] = total[i * n + c] * scale


class Lattice:
    """Which pixels vote: those whose global row and column are multiples of ``step``.

    ``origin`` is the global position of the block's pixel (0, 0). ``step`` 1 is every pixel,
    exactly. A wide window reads every step-th pixel along each axis with each tap's weight
    times ``step``: a quadrature of the same window, whose cost no longer grows with its size;
    the lattice is the image's, so the result does not depend on how the image is cut.
    """

    def __init__(self, step: int = 1, origin: tuple[int, int] = (0, 0)) -> None:
        self.step = max(1, int(step))
        self.origin = (int(origin[0]), int(origin[1]))

    @property
    def first_row(self) -> int:
        """The block's first row on the lattice."""
        return (-self.origin[0]) % self.step

    @property
    def first_column(self) -> int:
        """The block's first column on the lattice."""
        return (-self.origin[1]) % self.step

    def sites(self, block: np.ndarray) -> np.ndarray:
        """The block's pixels on the lattice, as a (strided) view of its first two axes (the
        block itself for step 1): the windows copy only these."""
        if self.step == 1:
            return block
        return block[self.first_row :: self.step, self.first_column :: self.step]

    def first_taps(self, starts: np.ndarray, axis: int) -> np.ndarray:
        """Per window starting at block position ``starts``, its first tap on the lattice."""
        return ((-(starts + self.origin[axis])) % self.step).astype(np.int64)


def _prepared(profile: np.ndarray, rows: np.ndarray, cols: np.ndarray, lattice: Lattice):
    """Contiguous arguments: the lattice row of each sample's first tap (an index into the
    lattice's rows), and the column starts shifted so that ``(start + t) // step`` indexes the
    lattice's columns."""
    profile = np.ascontiguousarray(profile, dtype=np.float32)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    cols = np.ascontiguousarray(cols, dtype=np.int64)
    first_rows, first_cols = lattice.first_taps(rows, 0), lattice.first_taps(cols, 1)
    row0 = (rows + first_rows - lattice.first_row) // lattice.step
    shifted = cols - lattice.first_column
    return profile, row0, shifted, first_rows, first_cols


def separable_dense(
    planes: np.ndarray,
    profile: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    lattice: Lattice | None = None,
) -> np.ndarray:
    """A separable window over dense planes, at the samples ``rows × cols``.

    Parameters
    ----------
    planes : numpy.ndarray, shape (h, w, n)
        The votes, padded so that every window lies inside.
    profile : numpy.ndarray, shape (L,)
        The window's 1-D weights (the same along y and x).
    rows, cols : numpy.ndarray of int
        The first row / column each sample's window reads (its centre minus ``before``).
    lattice : Lattice, optional
        The pixels that vote (default: every pixel).

    Returns
    -------
    numpy.ndarray, shape (len(rows), len(cols), n), float32
    """
    lattice = lattice or Lattice()
    profile, rows, cols, first_rows, first_cols = _prepared(profile, rows, cols, lattice)
    planes = np.ascontiguousarray(lattice.sites(planes), dtype=np.float32)
    vertical = np.empty((rows.size, planes.shape[1], planes.shape[2]), np.float32)
    _rows_dense(planes, profile, rows, first_rows, lattice.step, vertical)
    out = np.empty((rows.size, cols.size, planes.shape[2]), np.float32)
    _columns_of(vertical, profile, cols, first_cols, lattice.step, out)
    return out


def _columns_of(
    src: np.ndarray,
    profile: np.ndarray,
    starts: np.ndarray,
    first: np.ndarray,
    step: int,
    out: np.ndarray,
) -> None:
    """The horizontal pass (:func:`_columns`), by :func:`_columns_regular` on a regular grid
    of samples whose windows all start on the lattice alike (segmentation's
    projections: 6 ms of a 730² block's 7, and most of a stride-1 window's time, went to sums
    over the taps of one sample at a time; a σ = 6, stride-2 window over a 632² block's three
    projections took 6.0 ms with the samples in the inner loop, 2.0 ms a column at a time)."""
    spacing = np.diff(starts)
    if (
        starts.size > 1
        and np.all(spacing == spacing[0])
        and np.all(first == first[0])
        and spacing[0] % step == 0
    ):
        x0 = (int(starts[0]) + int(first[0])) // step
        _columns_regular(src, profile, x0, int(spacing[0]) // step, int(first[0]), step, out)
    else:
        _columns(src, profile, starts, first, step, out)


def _indices(bins: np.ndarray) -> np.ndarray:
    """Bin indices as the kernels take them: contiguous, in their own integer type (uint8
    votes stay uint8: an eighth of the memory traffic of int64)."""
    bins = np.asarray(bins)
    return np.ascontiguousarray(bins if bins.dtype.kind in "ui" else bins.astype(np.int64))


def _weights(weight: np.ndarray | float, shape: tuple[int, ...]) -> np.ndarray:
    """Per-pixel float32 votes; a scalar is broadcast without being written out (a read-only
    array of zero strides)."""
    if np.ndim(weight) == 0:
        return np.broadcast_to(np.float32(weight), shape)
    return np.ascontiguousarray(weight, dtype=np.float32)


def separable_binned(
    bins: np.ndarray,
    weight: np.ndarray | float,
    n_bins: int,
    profile: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    lattice: Lattice | None = None,
) -> np.ndarray:
    """:func:`separable_dense` of the one-hot planes of a binned image, without building them.

    Plane ``k`` holds ``weight`` where ``bins == k`` and 0 elsewhere: a local histogram's bin
    indicators.

    Parameters
    ----------
    bins : numpy.ndarray of int, shape (h, w)
        Bin of every pixel, in 0 .. n_bins - 1.
    weight : numpy.ndarray of shape (h, w), or a scalar
        Each pixel's vote.
    n_bins : int
    profile, rows, cols, lattice
        As in :func:`separable_dense`.

    Returns
    -------
    numpy.ndarray, shape (len(rows), len(cols), n_bins), float32
    """
    lattice = lattice or Lattice()
    profile, rows, cols, first_rows, first_cols = _prepared(profile, rows, cols, lattice)
    bins = _indices(lattice.sites(bins))
    if np.ndim(weight) == 0:  # one weight for every pixel: the kernel's uniform path
        uniform, weight = float(np.float32(weight)), np.empty((0, 0), np.float32)
    else:
        uniform, weight = 0.0, _weights(lattice.sites(np.asarray(weight)), bins.shape)
    vertical = np.empty((rows.size, bins.shape[1], n_bins), np.float32)
    _rows_binned(bins, weight, uniform, profile, rows, first_rows, lattice.step, vertical)
    out = np.empty((rows.size, cols.size, n_bins), np.float32)
    _columns_of(vertical, profile, cols, first_cols, lattice.step, out)
    return out


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _disk(prefix, half_widths, scale, centres_y, centres_x, out):
    r = (half_widths.shape[0] - 1) // 2
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            acc = out[i, j]
            acc[:] = 0
            x = centres_x[j]
            for d in range(half_widths.shape[0]):
                row = prefix[centres_y[i] - r + d]
                hw = half_widths[d]
                for c in range(acc.shape[0]):
                    acc[c] += row[x + hw + 1, c] - row[x - hw, c]
            for c in range(acc.shape[0]):
                acc[c] *= scale


def disk_sums(
    planes: np.ndarray,
    half_widths: np.ndarray,
    scale: float,
    centres_y: np.ndarray,
    centres_x: np.ndarray,
) -> np.ndarray:
    """A disk window over dense planes at the samples centred on ``centres_y × centres_x``.

    Each of the disk's rows is a segment of half-width ``half_widths[d]``, summed in O(1) from
    the prefix sums of its image row; the total is multiplied by ``scale`` (1 / pixels).

    Returns
    -------
    numpy.ndarray, shape (len(centres_y), len(centres_x), n), float32
    """
    planes = np.asarray(planes, dtype=np.float64)
    prefix = np.zeros((planes.shape[0], planes.shape[1] + 1, planes.shape[2]))
    np.cumsum(planes, axis=1, out=prefix[:, 1:])
    out = np.empty((len(centres_y), len(centres_x), planes.shape[2]))
    _disk(prefix, np.asarray(half_widths, np.int64), float(scale),
          np.asarray(centres_y, np.int64), np.asarray(centres_x, np.int64), out)  # fmt: skip
    return out.astype(np.float32)


# ------------------------------------------------------------------------ projected votes


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _project_binned(bins, weight, tables, pairs, out):
    """``out[y, x, :] += weight[y, x] · Σ_p tables[p][bins[p, y, x], :]`` over the P planes of
    ``bins`` (P, h, w), each row of ``out`` summed in a small buffer first.

    ``pairs`` holds the tables of planes 2q and 2q + 1 added into one of n² rows
    (``pairs[q, a·n + b] = tables[2q, a] + tables[2q + 1, b]``; empty when not used), so two
    planes cost one look-up: the look-ups, not the arithmetic, are what a pixel costs."""
    planes, h, w = bins.shape
    n, m = tables.shape[1], out.shape[2]
    paired = pairs.shape[0]
    acc = np.empty((w, m), np.float32)
    for y in range(h):
        acc[:] = 0
        for q in range(paired):
            table = pairs[q]
            for x in range(w):
                b = np.int64(bins[2 * q, y, x]) * n + bins[2 * q + 1, y, x]
                for i in range(m):
                    acc[x, i] += table[b, i]
        for p in range(2 * paired, planes):
            table = tables[p]
            for x in range(w):
                b = bins[p, y, x]
                for i in range(m):
                    acc[x, i] += table[b, i]
        for x in range(w):
            v = weight[y, x]
            for i in range(m):
                out[y, x, i] += v * acc[x, i]


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _polar(value):
    """(|g|, Re z, Im z) of conj(g) = |g| z in float64, z = 0 where g = 0."""
    a, b = np.float64(value.real), np.float64(value.imag)
    r = np.sqrt(a * a + b * b)
    inverse = 1.0 / r if r > 0 else 0.0
    return r, a * inverse, -b * inverse


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _project_phasors(g, coefficients, out):
    """``out[y, x, i] += Re Σ_k coefficients[k, i] · |g| conj(z)^k`` for g = |g| z, row by row:
    the powers of a row's unit phasors are formed one multiplication at a time in float64
    buffers the length of the row (never stored for the block), and each power's dot product
    with the coefficients is added to a row buffer per column of ``out``. Every inner loop runs
    along the row, so it vectorises."""
    h, w, m = out.shape
    ell = coefficients.shape[0]
    cr, ci = coefficients.real.copy(), coefficients.imag.copy()
    zr, zi = np.empty(w), np.empty(w)  # conj(g) / |g| (0 where g = 0)
    pr, pi = np.empty(w), np.empty(w)  # |g| conj(z)^k
    acc = np.empty((m, w))
    for y in range(h):
        for x in range(w):
            pr[x], zr[x], zi[x] = _polar(g[y, x])
            pi[x] = 0.0
        for i in range(m):
            c = cr[0, i]
            for x in range(w):
                acc[i, x] = pr[x] * c
        for k in range(1, ell):
            for x in range(w):
                p, q = pr[x], pi[x]
                pr[x] = p * zr[x] - q * zi[x]
                pi[x] = p * zi[x] + q * zr[x]
            for i in range(m):
                c, d = cr[k, i], ci[k, i]
                for x in range(w):
                    acc[i, x] += pr[x] * c - pi[x] * d
        for x in range(w):
            for i in range(m):
                out[y, x, i] += acc[i, x]


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _phasor_powers(g, out):
    """``out[y, x, k] = |g| conj(z)^k`` for g = |g| z (0 where g = 0), k = 0 .. ℓ-1, the powers
    formed one multiplication at a time in float64, as in :func:`_project_phasors`."""
    h, w, ell = out.shape
    for y in range(h):
        for x in range(w):
            pr, zr, zi = _polar(g[y, x])
            pi = 0.0
            for k in range(ell):
                out[y, x, k] = complex(pr, pi)
                pr, pi = pr * zr - pi * zi, pr * zi + pi * zr


def phasor_powers(g: np.ndarray, ell: int) -> np.ndarray:
    """The (h, w, ℓ) complex64 phasor powers ``|g| conj(z)^k``, k = 0 .. ℓ-1, of the (h, w)
    gradients g = |g| z (0 where g = 0): the FS-KDE's votes before the window (eq. 6)."""
    out = np.empty((*g.shape, int(ell)), np.complex64)
    _phasor_powers(np.ascontiguousarray(g, np.complex64), out)
    return out


#: The most bins per plane for which :func:`project_binned` pairs planes (n² table rows).
_PAIRED_BINS = 32


def project_binned(
    bins: np.ndarray, weight: np.ndarray | float, table: np.ndarray, out: np.ndarray
) -> None:
    """Add each pixel's one-hot votes, projected on the columns of ``table``, to ``out``
    (h, w, m).

    Parameters
    ----------
    bins : numpy.ndarray of int, shape (h, w) or (P, h, w)
        One or P planes of bin indices in 0 .. n - 1; plane p selects rows p·n .. p·n + n - 1
        of ``table``.
    weight : numpy.ndarray of shape (h, w), or a scalar
        Each pixel's vote, the same in every plane.
    table : numpy.ndarray, shape (P·n, m)
    out : numpy.ndarray, shape (h, w, m), float32
        Added to: ``weight`` times the sum over the planes of the rows their bins select.
    """
    bins = _indices(bins if bins.ndim == 3 else bins[None])
    planes = bins.shape[0]
    tables = np.ascontiguousarray(table, np.float32).reshape(planes, -1, table.shape[-1])
    n = tables.shape[1]
    paired = planes // 2 if n <= _PAIRED_BINS else 0
    pairs = tables[0 : 2 * paired : 2, :, None] + tables[1 : 2 * paired : 2, None, :]
    pairs = pairs.reshape(paired, n * n, tables.shape[-1])
    weight = _weights(weight, bins.shape[1:])
    _project_binned(bins, weight, tables, pairs, out)


def project_phasors(g: np.ndarray, coefficients: np.ndarray, out: np.ndarray) -> None:
    """Add ``Re Σ_k coefficients[k] · |g| conj(z)^k`` (k = 0 .. ℓ-1) of every gradient
    g = |g| z to ``out`` (h, w, m); ``coefficients`` is (ℓ, m) complex."""
    _project_phasors(np.ascontiguousarray(g, np.complex64),
                     np.ascontiguousarray(coefficients, np.complex128), out)  # fmt: skip


# ---------------------------------------------------------------------------- interpolation


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _interpolate(a, y0, y1, fy, x0, x1, fx, out):
    """``out[y, x] = `` the bilinear interpolation of the grid values ``a`` (ny, nx, m) between
    samples ``y0[y], y1[y]`` (weight ``fy[y]`` for the second) and ``x0[x], x1[x]``."""
    m = a.shape[2]
    for y in range(out.shape[0]):
        wy = fy[y]
        for x in range(out.shape[1]):
            wx = fx[x]
            for i in range(m):
                top = a[y0[y], x0[x], i] * (1 - wx) + a[y0[y], x1[x], i] * wx
                bottom = a[y1[y], x0[x], i] * (1 - wx) + a[y1[y], x1[x], i] * wx
                out[y, x, i] = top * (1 - wy) + bottom * wy


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _interpolate_argmax(a, y0, y1, fy, x0, x1, fx, out):
    """``out[y, x] = 1 + `` the index of the largest interpolated value (see
    :func:`_interpolate`), without storing the interpolated values."""
    m = a.shape[2]
    for y in range(out.shape[0]):
        wy = fy[y]
        for x in range(out.shape[1]):
            wx = fx[x]
            best, arg = -np.inf, 0
            for i in range(m):
                top = a[y0[y], x0[x], i] * (1 - wx) + a[y0[y], x1[x], i] * wx
                bottom = a[y1[y], x0[x], i] * (1 - wx) + a[y1[y], x1[x], i] * wx
                v = top * (1 - wy) + bottom * wy
                if v > best:
                    best, arg = v, i
            out[y, x] = arg + 1


def interpolate(a: np.ndarray, rows: tuple, cols: tuple, labels: bool) -> np.ndarray:
    """Values ``a`` (ny, nx, m) on a grid, interpolated bilinearly to pixels: ``rows`` and
    ``cols`` are (before, after, weight of after) per pixel. With ``labels``, the 1-based
    index of the largest interpolated value per pixel (uint8) instead of the values."""
    y0, y1, fy = rows
    x0, x1, fx = cols
    args = (np.ascontiguousarray(a, np.float32), y0.astype(np.int64), y1.astype(np.int64),
            fy.astype(np.float32), x0.astype(np.int64), x1.astype(np.int64),
            fx.astype(np.float32))  # fmt: skip
    if labels:
        out = np.empty((y0.size, x0.size), np.uint8)
        _interpolate_argmax(*args, out)
    else:
        out = np.empty((y0.size, x0.size, a.shape[2]), np.float32)
        _interpolate(*args, out)
    return out
