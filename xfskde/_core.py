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

import numba
import numpy as np

__all__: list[str] = []

BOX, SEPARABLE, DISK = 0, 1, 2
_FAR = -(1 << 62)


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
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


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _gradient_row(up, mid, down, gx_out, gy_out):
    """Central differences of one row from its three input rows (C, n + 2); channel of max |g|.

    ``gx = (I[y, x+1] - I[y, x-1]) / 2`` and ``gy = (I[y+1, x] - I[y-1, x]) / 2``: x runs along
    columns, y along rows. With several channels, each pixel takes the channel whose gradient
    magnitude is largest (the first one on ties), as HOG does.
    """
    n = gx_out.shape[0]
    n_ch = mid.shape[0]
    half = gx_out.dtype.type(0.5)  # a float64 literal would promote float32 work to float64
    for t in range(n):
        gx = half * (mid[0, t + 2] - mid[0, t])
        gy = half * (down[0, t + 1] - up[0, t + 1])
        best = gx * gx + gy * gy
        for c in range(1, n_ch):
            cx = half * (mid[c, t + 2] - mid[c, t])
            cy = half * (down[c, t + 1] - up[c, t + 1])
            m = cx * cx + cy * cy
            if m > best or not (best == best):
                best, gx, gy = m, cx, cy
        gx_out[t] = gx
        gy_out[t] = gy


@numba.njit(nogil=True, cache=True, error_model="numpy")
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


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _unit_phasors(gx, gy, w0, ure, uim):
    """W = |g| and u = conj(g)/|g| per pixel; zero where g = 0 or not finite (no NaN escapes)."""
    zero = w0.dtype.type(0.0)  # typed constants keep float32 work in float32
    one = w0.dtype.type(1.0)
    big = w0.dtype.type(np.finfo(w0.dtype).max)
    for t in range(gx.shape[0]):
        x = gx[t]
        y = gy[t]
        m = x * x + y * y
        ok = (m > zero) & (m <= big)  # false for 0, inf and NaN
        w = np.sqrt(m)
        inv = one / w
        w0[t] = w if ok else zero
        ure[t] = x * inv if ok else zero  # NaN * 0 would be NaN
        uim[t] = -y * inv if ok else zero


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _phasor_row(gx, gy, pre, pim, ure, uim):
    """P_k = |g| (conj(g)/|g|)^k for k = 0 .. ℓ-1 into pre, pim (ℓ, n).

    The running power lives in buffers allocated here: numba cannot prove that rows k-1 and k
    of ``pre`` do not overlap, and that doubt alone kept the loop scalar (4x slower).
    """
    n = gx.shape[0]
    _unit_phasors(gx, gy, pre[0], ure, uim)
    pim[0, :] = 0.0
    ar = pre[0].copy()
    ai = np.zeros_like(ar)
    for k in range(1, pre.shape[0]):
        c = pre[k]
        d = pim[k]
        for t in range(n):
            x = ar[t] * ure[t] - ai[t] * uim[t]
            y = ar[t] * uim[t] + ai[t] * ure[t]
            ar[t] = x
            ai[t] = y
            c[t] = x
            d[t] = y


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _accumulate_phasors(gx, gy, weight, vre, vim, w0, ure, uim, pr, pi):
    """V[k] += weight * P_k for one row, without storing the powers (the cell path)."""
    _unit_phasors(gx, gy, w0, ure, uim)
    n = gx.shape[0]
    v0 = vre[0]
    for t in range(n):
        p = weight * w0[t]
        pr[t] = p
        pi[t] = 0.0
        v0[t] += p
    for k in range(1, vre.shape[0]):
        c = vre[k]
        d = vim[k]
        for t in range(n):
            a = pr[t]
            b = pi[t]
            x = a * ure[t] - b * uim[t]
            y = a * uim[t] + b * ure[t]
            pr[t] = x
            pi[t] = y
            c[t] += x
            d[t] += y


@numba.njit(nogil=True, cache=True, error_model="numpy")
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


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _weighted_taps(a, base, stride, profile, h):
    """h[j] += Σ_d profile[d] * a[base + d + j*stride], four taps per pass over h."""
    n_taps = profile.shape[0]
    n = h.shape[0]
    d = 0
    while d + 4 <= n_taps:
        w0, w1, w2, w3 = profile[d], profile[d + 1], profile[d + 2], profile[d + 3]
        b = base + d
        if stride == 1:  # contiguous: lets the loop vectorise
            a0, a1, a2, a3 = (
                a[b : b + n],
                a[b + 1 : b + 1 + n],
                a[b + 2 : b + 2 + n],
                a[b + 3 : b + 3 + n],
            )
            for j in range(n):
                h[j] += w0 * a0[j] + w1 * a1[j] + w2 * a2[j] + w3 * a3[j]
        else:
            for j in range(n):
                x = b + j * stride
                h[j] += w0 * a[x] + w1 * a[x + 1] + w2 * a[x + 2] + w3 * a[x + 3]
        d += 4
    while d < n_taps:
        w0 = profile[d]
        b = base + d
        for j in range(n):
            h[j] += w0 * a[b + j * stride]
        d += 1


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _weighted_rows(ring, first_row, n_ring, k, profile, v):
    """v[t] += Σ_d profile[d] * ring[(first_row + d) % n_ring, k, t], four rows per pass."""
    n_taps = profile.shape[0]
    n = v.shape[0]
    d = 0
    while d + 4 <= n_taps:
        r0 = ring[(first_row + d) % n_ring, k]
        r1 = ring[(first_row + d + 1) % n_ring, k]
        r2 = ring[(first_row + d + 2) % n_ring, k]
        r3 = ring[(first_row + d + 3) % n_ring, k]
        w0, w1, w2, w3 = profile[d], profile[d + 1], profile[d + 2], profile[d + 3]
        for t in range(n):
            v[t] += w0 * r0[t] + w1 * r1[t] + w2 * r2[t] + w3 * r3[t]
        d += 4
    while d < n_taps:
        r0 = ring[(first_row + d) % n_ring, k]
        w0 = profile[d]
        for t in range(n):
            v[t] += w0 * r0[t]
        d += 1


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _horizontal(vre, vim, out, i, oj0, oj1, first_x, stride, before, after, running, profile,
                scale, acc_re, acc_im):  # fmt: skip
    """Filter one row of V along x at the samples j = oj0 .. oj1-1 and write F_k = scale_k * sum.

    With ``running`` (a box whose consecutive samples share columns) the first sample is a direct
    sum and every next one adds the entering columns and subtracts the leaving ones.
    """
    length = scale.shape[0]
    n_taps = before + after + 1
    row = out[i]
    if not running:
        # weighted taps: for each k and tap, one contiguous pass over the samples (vectorises)
        n_out = oj1 - oj0
        for k in range(length):
            hr = acc_re[:n_out]
            hi = acc_im[:n_out]
            hr[:] = 0.0
            hi[:] = 0.0
            a = vre[k]
            b = vim[k]
            base = first_x + oj0 * stride - before
            _weighted_taps(a, base, stride, profile, hr)
            _weighted_taps(b, base, stride, profile, hi)
            sk = scale[k]
            for j in range(n_out):
                row[oj0 + j, k] = complex(hr[j] * sk, hi[j] * sk)
        return
    xc = first_x + oj0 * stride
    for k in range(length):
        ar = 0.0
        ai = 0.0
        for d in range(n_taps):
            ar += vre[k, xc - before + d]
            ai += vim[k, xc - before + d]
        acc_re[k] = ar
        acc_im[k] = ai
        row[oj0, k] = complex(ar * scale[k], ai * scale[k])
    for k in range(length):
        # one coefficient at a time: the running sum stays in registers; each step adds the
        # `stride` columns that enter the box and subtracts the `stride` that leave it
        ar = acc_re[k]
        ai = acc_im[k]
        sk = scale[k]
        a = vre[k]
        b = vim[k]
        for j in range(oj0 + 1, oj1):
            xc = first_x + j * stride
            for e in range(stride):
                ar += a[xc + after - e] - a[xc - before - 1 - e]
                ai += b[xc + after - e] - b[xc - before - 1 - e]
            row[j, k] = complex(ar * sk, ai * sk)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _disk_row(pre_re, pre_im, out, i, oj0, oj1, first_x, stride, first_row, n_ring, half_widths,
              scale, hr, hi):  # fmt: skip
    """Disk window: per window row, a segment sum from prefix sums; contiguous over samples."""
    n_out = oj1 - oj0
    row = out[i]
    for k in range(scale.shape[0]):
        h_re = hr[:n_out]
        h_im = hi[:n_out]
        h_re[:] = 0.0
        h_im[:] = 0.0
        for d in range(half_widths.shape[0]):
            slot = (first_row + d) % n_ring
            hw = half_widths[d]
            sr = pre_re[slot, k]
            si = pre_im[slot, k]
            hi_ = first_x + oj0 * stride + hw + 1
            lo_ = first_x + oj0 * stride - hw
            if stride == 1:  # contiguous: lets the loop vectorise
                a, b = sr[hi_ : hi_ + n_out], sr[lo_ : lo_ + n_out]
                c, e = si[hi_ : hi_ + n_out], si[lo_ : lo_ + n_out]
                for j in range(n_out):
                    h_re[j] += a[j] - b[j]
                    h_im[j] += c[j] - e[j]
            else:
                for j in range(n_out):
                    h_re[j] += sr[hi_ + j * stride] - sr[lo_ + j * stride]
                    h_im[j] += si[hi_ + j * stride] - si[lo_ + j * stride]
        sk = scale[k]
        for j in range(n_out):
            row[oj0 + j, k] = complex(h_re[j] * sk, h_im[j] * sk)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _ensure_input_rows(src, rowmap, cols, cval, rho, rows, row_of):
    """Make image rows rho-1 .. rho+1 available in the 3-row ring ``rows``."""
    for g in range(rho - 1, rho + 2):
        s3 = g % 3
        if row_of[s3] != g:
            _load_row(src, rowmap, cols, cval, g, 0, rows[s3])
            row_of[s3] = g


@numba.njit(nogil=True, cache=True, error_model="numpy")
def fskde_tile(
    src, rowmap, colmap, cval, work, out,
    oi0, oi1, oj0, oj1, prow0, pcol0, stride,
    kind, before, after, profile, half_widths, scale,
):  # fmt: skip
    """Local FS-KDE of output rows ``oi0:oi1`` and columns ``oj0:oj1`` of ``out``.

    ``out[i, j, k]`` is the sample at pixel (prow0 + i*stride, pcol0 + j*stride) in the frame of
    the index maps: F_k = scale_k * sum over the window of weight(dy, dx) * P_k(y+dy, x+dx).
    ``kind`` is BOX (unit weights; running sums when samples share rows), SEPARABLE
    (``profile`` weights on both axes) or DISK (row segments of half-width
    ``half_widths[dy]``). Phasors are computed in the precision of ``work`` (float32 for
    float32 images); every running or prefix sum is float64, so results do not depend on where
    a tile starts beyond rounding.
    """
    if oi1 <= oi0 or oj1 <= oj0:
        return
    length = scale.shape[0]
    xg0 = pcol0 + oj0 * stride - before
    width = (oj1 - 1 - oj0) * stride + before + after + 1
    n_ch = src.shape[0]
    dt = work.dtype
    cols = np.empty(width + 2, np.int64)
    for t in range(width + 2):
        cols[t] = colmap[xg0 - 1 + t]
    rows = np.empty((3, n_ch, width + 2), dt)
    row_of = np.full(3, _FAR, np.int64)
    gx = np.empty(width, dt)
    gy = np.empty(width, dt)
    ure = np.empty(width, dt)
    uim = np.empty(width, dt)
    w0 = np.empty(width, dt)
    pr = np.empty(width, dt)
    pi = np.empty(width, dt)
    acc_re = np.zeros(max(length, oj1 - oj0))
    acc_im = np.zeros(max(length, oj1 - oj0))
    n_taps = before + after + 1
    first_x = pcol0 - xg0
    running = kind == BOX and stride < before + after + 1  # samples share rows and columns

    if kind != DISK and stride >= n_taps:
        # cells: no row is shared between samples, accumulate powers straight into V
        vre = np.empty((length, width), dt)
        vim = np.empty((length, width), dt)
        for i in range(oi0, oi1):
            yc = prow0 + i * stride
            vre[:] = 0.0
            vim[:] = 0.0
            for d in range(n_taps):
                rho = yc - before + d
                _ensure_input_rows(src, rowmap, cols, cval, rho, rows, row_of)
                _gradient_row(rows[(rho - 1) % 3], rows[rho % 3], rows[(rho + 1) % 3], gx, gy)
                _accumulate_phasors(gx, gy, profile[d], vre, vim, w0, ure, uim, pr, pi)
            _horizontal(vre, vim, out, i, oj0, oj1, first_x, stride, before, after, False,
                        profile, scale, acc_re, acc_im)  # fmt: skip
        return

    n_ring = n_taps + stride  # the window's rows and the `stride` rows that just left it
    ring_of = np.full(n_ring, _FAR, np.int64)
    # disk rows are stored as float64 prefix sums; other rows as phasors in the work precision
    disk = kind == DISK
    n_pre = n_ring if disk else 1
    n_ph = 1 if disk else n_ring
    pre_re = np.empty((n_pre, length, width + 1))
    pre_im = np.empty((n_pre, length, width + 1))
    ring_re = np.empty((n_ph, length, width), dt)
    ring_im = np.empty((n_ph, length, width), dt)
    tre = ring_re[0]
    tim = ring_im[0]
    v64re = np.zeros((length, width))
    v64im = np.zeros((length, width))
    vre = np.zeros((length, width), dt)
    vim = np.zeros((length, width), dt)

    for i in range(oi0, oi1):
        yc = prow0 + i * stride
        # 1. phasor rows yc-before .. yc+after, each computed once
        for rho in range(yc - before, yc + after + 1):
            slot = rho % n_ring
            if ring_of[slot] == rho:
                continue
            _ensure_input_rows(src, rowmap, cols, cval, rho, rows, row_of)
            _gradient_row(rows[(rho - 1) % 3], rows[rho % 3], rows[(rho + 1) % 3], gx, gy)
            if disk:
                _phasor_row(gx, gy, tre, tim, ure, uim)
                _prefix_sums(tre, tim, pre_re[slot], pre_im[slot])
            else:
                _phasor_row(gx, gy, ring_re[slot], ring_im[slot], ure, uim)
            ring_of[slot] = rho

        if disk:
            _disk_row(pre_re, pre_im, out, i, oj0, oj1, first_x, stride, yc - before, n_ring,
                      half_widths, scale, acc_re, acc_im)  # fmt: skip
        elif running:
            # 2a. box sharing rows: running sums down the rows, in float64
            if i > oi0:
                for step in range(stride):
                    s_in = (yc + after - step) % n_ring
                    s_out = (yc - before - 1 - step) % n_ring
                    for k in range(length):
                        a = ring_re[s_in, k]
                        b = ring_re[s_out, k]
                        c = ring_im[s_in, k]
                        e = ring_im[s_out, k]
                        vr = v64re[k]
                        vi = v64im[k]
                        for t in range(width):
                            vr[t] += np.float64(a[t]) - np.float64(b[t])
                            vi[t] += np.float64(c[t]) - np.float64(e[t])
            else:
                v64re[:] = 0.0
                v64im[:] = 0.0
                for d in range(n_taps):
                    slot = (yc - before + d) % n_ring
                    for k in range(length):
                        for t in range(width):
                            v64re[k, t] += ring_re[slot, k, t]
                            v64im[k, t] += ring_im[slot, k, t]
            _horizontal(v64re, v64im, out, i, oj0, oj1, first_x, stride, before, after, True,
                        profile, scale, acc_re, acc_im)  # fmt: skip
        else:
            # 2b. weighted vertical sum (Gaussian, or a box with stride > 1 sharing rows)
            vre[:] = 0.0
            vim[:] = 0.0
            for k in range(length):
                _weighted_rows(ring_re, yc - before, n_ring, k, profile, vre[k])
                _weighted_rows(ring_im, yc - before, n_ring, k, profile, vim[k])
            _horizontal(vre, vim, out, i, oj0, oj1, first_x, stride, before, after, False,
                        profile, scale, acc_re, acc_im)  # fmt: skip
