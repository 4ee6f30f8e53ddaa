"""Compiled loops (numba) behind :mod:`xfskde.gradients` and :mod:`xfskde.local`.

Everything here works in *global* pixel coordinates: a source array ``src`` of shape (C, Hs, Ws)
holds some rows and columns of the image, and two index maps (``rowmap``, ``colmap``) say where
global row ``g`` and column ``x`` live in ``src`` (``-1``: outside the image in ``constant`` mode,
read as ``cval``). The maps are how boundaries are handled — inside the core, with no padded copy
of the image — and how a Dask block with its halo is read exactly like the whole image.

Per output row the core

1. keeps a ring of three converted input rows (float64, any input dtype, colour channels),
2. turns each image row it needs into a row of *phasor powers*
   :math:`P_k = |g|\\,(\\bar g/|g|)^k`, k = 0 .. ℓ-1 — complex multiplications only (section 2.3),
   stored in a ring so that each row is computed once,
3. filters the ring vertically (running sums for a box, weights for a Gaussian) and then
   horizontally (running sums again), or, for a disk, sums one prefix-summed row segment per
   window row; it scales by :math:`H_k` and writes :math:`F_k` straight into the output.

All accumulation is in float64, so running sums do not drift and results do not depend on where a
tile or a Dask chunk starts (to rounding).
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__: list[str] = []

BOX, SEPARABLE, DISK = 0, 1, 2
_FAR = -(1 << 62)


@numba.njit(nogil=True, cache=True, inline="always")
def _load_row(src, rowmap, cols, cval, g, moff, dst):
    """Copy image row ``g`` (global) at columns ``cols`` into ``dst`` (C, n) as float64."""
    r = rowmap[g + moff]
    n_ch = src.shape[0]
    n = cols.shape[0]
    if r < 0:
        for c in range(n_ch):
            for t in range(n):
                dst[c, t] = cval
        return
    for c in range(n_ch):
        for t in range(n):
            x = cols[t]
            dst[c, t] = src[c, r, x] if x >= 0 else cval


@numba.njit(nogil=True, cache=True)
def _gradient_row(up, mid, down, gx_out, gy_out):
    """Central differences of one row from its three input rows (C, n + 2); channel of max |g|.

    ``gx = (I[y, x+1] - I[y, x-1]) / 2`` and ``gy = (I[y+1, x] - I[y-1, x]) / 2``: x runs along
    columns, y along rows. With several channels, each pixel takes the channel whose gradient
    magnitude is largest (the first one on ties), as HOG does.
    """
    n = gx_out.shape[0]
    n_ch = mid.shape[0]
    for t in range(n):
        gx = 0.5 * (mid[0, t + 2] - mid[0, t])
        gy = 0.5 * (down[0, t + 1] - up[0, t + 1])
        best = gx * gx + gy * gy
        for c in range(1, n_ch):
            cx = 0.5 * (mid[c, t + 2] - mid[c, t])
            cy = 0.5 * (down[c, t + 1] - up[c, t + 1])
            m = cx * cx + cy * cy
            if m > best or not (best == best):
                best, gx, gy = m, cx, cy
        gx_out[t] = gx
        gy_out[t] = gy


@numba.njit(nogil=True, cache=True)
def gradient_image(src, rowmap, colmap, moff, cval, out):
    """Complex gradient g = gx + i gy of global rows 0 .. H-1, columns 0 .. W-1 into ``out``."""
    h, w = out.shape
    n_ch = src.shape[0]
    cols = np.empty(w + 2, np.int64)
    for t in range(w + 2):
        cols[t] = colmap[t - 1 + moff]
    rows = np.empty((3, n_ch, w + 2))
    gx = np.empty(w)
    gy = np.empty(w)
    _load_row(src, rowmap, cols, cval, -1, moff, rows[0])
    _load_row(src, rowmap, cols, cval, 0, moff, rows[1])
    for y in range(h):
        _load_row(src, rowmap, cols, cval, y + 1, moff, rows[(y + 2) % 3])
        _gradient_row(rows[y % 3], rows[(y + 1) % 3], rows[(y + 2) % 3], gx, gy)
        for x in range(w):
            out[y, x] = complex(gx[x], gy[x])


@numba.njit(nogil=True, cache=True)
def _phasor_row(gx, gy, pre, pim):
    """P_k = |g| (conj(g)/|g|)^k for k = 0 .. ℓ-1 (pre, pim: (ℓ, n)); zero where g = 0 or NaN."""
    n = gx.shape[0]
    length = pre.shape[0]
    ure = np.empty(n)
    uim = np.empty(n)
    for t in range(n):
        m = gx[t] * gx[t] + gy[t] * gy[t]
        if m > 0.0 and m < math.inf:
            w = math.sqrt(m)
            ure[t] = gx[t] / w
            uim[t] = -gy[t] / w
            pre[0, t] = w
        else:
            ure[t] = 0.0
            uim[t] = 0.0
            pre[0, t] = 0.0
        pim[0, t] = 0.0
    for k in range(1, length):
        for t in range(n):
            a = pre[k - 1, t]
            b = pim[k - 1, t]
            pre[k, t] = a * ure[t] - b * uim[t]
            pim[k, t] = a * uim[t] + b * ure[t]


@numba.njit(nogil=True, cache=True)
def _prefix_sums(pre, pim, sre, sim):
    """Exclusive prefix sums along the row: s[k, t] = Σ_{t' < t} p[k, t'] (s has n + 1 entries)."""
    length, n = pre.shape
    for k in range(length):
        ar = 0.0
        ai = 0.0
        sre[k, 0] = 0.0
        sim[k, 0] = 0.0
        for t in range(n):
            ar += pre[k, t]
            ai += pim[k, t]
            sre[k, t + 1] = ar
            sim[k, t + 1] = ai


@numba.njit(nogil=True, cache=True)
def fskde_tile(
    src, rowmap, colmap, moff, cval, out,
    oi0, oi1, oj0, oj1, prow0, pcol0, stride,
    kind, before, after, profile, half_widths, scale,
):  # fmt: skip
    """Local FS-KDE of output rows ``oi0:oi1`` and columns ``oj0:oj1`` of ``out``.

    ``out[i, j, k]`` is the sample at global pixel (prow0 + i*stride, pcol0 + j*stride):
    :math:`F_k = \\text{scale}_k \\sum_{dy,dx} \\text{weight}(dy, dx) P_k(y+dy, x+dx)`.
    ``kind`` is BOX (unit weights, running sums when stride == 1), SEPARABLE (``profile``
    weights on both axes) or DISK (row segments of half-width ``half_widths[dy]``).
    """
    if oi1 <= oi0 or oj1 <= oj0:
        return
    length = scale.shape[0]
    xg0 = pcol0 + oj0 * stride - before
    xg1 = pcol0 + (oj1 - 1) * stride + after
    width = xg1 - xg0 + 1
    n_ch = src.shape[0]
    cols = np.empty(width + 2, np.int64)
    for t in range(width + 2):
        cols[t] = colmap[xg0 - 1 + t + moff]
    rows = np.empty((3, n_ch, width + 2))
    row_of = np.full(3, _FAR, np.int64)
    gx = np.empty(width)
    gy = np.empty(width)
    n_ring = before + after + 2
    ring_re = np.empty((n_ring, length, width + 1))
    ring_im = np.empty((n_ring, length, width + 1))
    ring_of = np.full(n_ring, _FAR, np.int64)
    vre = np.zeros((length, width))
    vim = np.zeros((length, width))
    tre = np.empty((length, width))
    tim = np.empty((length, width))
    acc_re = np.zeros(length)
    acc_im = np.zeros(length)
    running_rows = kind == BOX and stride == 1
    running_cols = kind == BOX and stride == 1
    n_taps = before + after + 1

    for i in range(oi0, oi1):
        yc = prow0 + i * stride
        # 1. phasor rows yc-before .. yc+after, each computed once
        for rho in range(yc - before, yc + after + 1):
            slot = rho % n_ring
            if ring_of[slot] == rho:
                continue
            for g in range(rho - 1, rho + 2):
                s3 = g % 3
                if row_of[s3] != g:
                    _load_row(src, rowmap, cols, cval, g, moff, rows[s3])
                    row_of[s3] = g
            _gradient_row(rows[(rho - 1) % 3], rows[rho % 3], rows[(rho + 1) % 3], gx, gy)
            if kind == DISK:
                _phasor_row(gx, gy, tre, tim)
                _prefix_sums(tre, tim, ring_re[slot], ring_im[slot])
            else:
                _phasor_row(gx, gy, ring_re[slot, :, :width], ring_im[slot, :, :width])
            ring_of[slot] = rho

        if kind == DISK:
            for j in range(oj0, oj1):
                xc = pcol0 + j * stride - xg0
                for k in range(length):
                    acc_re[k] = 0.0
                    acc_im[k] = 0.0
                for d in range(n_taps):
                    slot = (yc - before + d) % n_ring
                    h = half_widths[d]
                    for k in range(length):
                        acc_re[k] += ring_re[slot, k, xc + h + 1] - ring_re[slot, k, xc - h]
                        acc_im[k] += ring_im[slot, k, xc + h + 1] - ring_im[slot, k, xc - h]
                for k in range(length):
                    out[i, j, k] = complex(acc_re[k] * scale[k], acc_im[k] * scale[k])
            continue

        # 2. vertical filter into v (length, width)
        if running_rows and i > oi0:
            s_in = (yc + after) % n_ring
            s_out = (yc - before - 1) % n_ring
            for k in range(length):
                for t in range(width):
                    vre[k, t] += ring_re[s_in, k, t] - ring_re[s_out, k, t]
                    vim[k, t] += ring_im[s_in, k, t] - ring_im[s_out, k, t]
        else:
            for k in range(length):
                for t in range(width):
                    vre[k, t] = 0.0
                    vim[k, t] = 0.0
            for d in range(n_taps):
                slot = (yc - before + d) % n_ring
                wgt = profile[d]
                for k in range(length):
                    for t in range(width):
                        vre[k, t] += wgt * ring_re[slot, k, t]
                        vim[k, t] += wgt * ring_im[slot, k, t]

        # 3. horizontal filter, scale by H_k, write
        for j in range(oj0, oj1):
            xc = pcol0 + j * stride - xg0
            if running_cols and j > oj0:
                for k in range(length):
                    acc_re[k] += vre[k, xc + after] - vre[k, xc - before - 1]
                    acc_im[k] += vim[k, xc + after] - vim[k, xc - before - 1]
            else:
                for k in range(length):
                    ar = 0.0
                    ai = 0.0
                    for d in range(n_taps):
                        wgt = profile[d]
                        ar += wgt * vre[k, xc - before + d]
                        ai += wgt * vim[k, xc - before + d]
                    acc_re[k] = ar
                    acc_im[k] = ai
            for k in range(length):
                out[i, j, k] = complex(acc_re[k] * scale[k], acc_im[k] * scale[k])
