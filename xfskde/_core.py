"""Compiled loops (numba) behind :mod:`xfskde.gradients` and :mod:`xfskde.local`.

The local FS-KDE of an image (paper, section 2.3) is, at every sampled pixel x,

.. math:: F_k(x) = H_k\\,\\big(W\\,e^{-ik\\Theta} * \\varphi\\big)(x), \\qquad k = 0 .. ℓ-1:

the coefficients :math:`F_k = \\frac{H_k}{N}\\sum_n w_n e^{-ik\\theta_n}` of the paper's eq. (1),
taken over the angle-weight pairs of the pixels around x and weighted by a window φ. This
module computes it in five stages:

1. **Gradient.** :math:`g = I_x + i I_y` by central differences,
   ``Ix = (I[y, x+1] - I[y, x-1]) / 2`` and ``Iy = (I[y+1, x] - I[y-1, x]) / 2``; the weight is
   :math:`W = |g|` and the angle :math:`\\Theta = \\arg g` (:func:`_gradient_row`). For the
   wider operators (Scharr, Gaussian derivatives; :mod:`xfskde.gradients`) the caller computes
   I_x and I_y beforehand and passes them as ``src`` with ``planes=True``: this stage then reads
   them instead of differencing the image (:func:`_row_gradient`), and stages 2 to 5 are the
   same code.
2. **Phasor powers.** :math:`P_k = W e^{-ik\\Theta} = |g|\\,(\\bar g/|g|)^k`: the unit phasor
   :math:`u = \\bar g/|g|` is raised to the powers k = 1 .. ℓ-1 by repeated complex
   multiplication, so no angle, sine or cosine is ever computed (:func:`_phasor_row`).
3. **Vertical window pass.** Per column, sum the window's phasor rows, weighted by the
   window's profile.
4. **Horizontal window pass.** Sum the result along the row at the sampled columns. The two
   passes together give :math:`\\sum_{dy, dx} \\varphi(dy, dx)\\,P_k(y + dy, x + dx)` over the
   window's offsets ``-before .. after``: the paper's :math:`(W e^{-ik\\Theta} * \\varphi)(x)`,
   read with the window's own offsets (an even box reaches one pixel further after its centre
   than before it).
5. **Scaling.** Multiply by ``scale[k]``: :math:`H_k`, times 1/N for the equal-weight windows
   (box, disk), whose weights here are ones (``LocalParameters.scale`` in :mod:`xfskde.local`).

**The five paths.** :func:`fskde_tile` hands a tile of samples to one routine, chosen by
:func:`tile_path` from the window kind and from whether the windows of neighbouring samples
share image rows (they do when ``stride < n_taps``; ``n_taps = before + after + 1`` is the
window's side):

* :func:`_tile_cells` — box or Gaussian with ``stride >= n_taps``: no image row lies in two
  samples' windows (HOG-like cells such as box 8 with stride 8; also a box of side 1 at any
  stride). Each row's powers are added, weighted, into the vertical sums as they are formed and
  never stored; the sums are then filtered along the row with the same weights.
* :func:`_tile_box_running` — box with ``stride < n_taps``: running sums down the rows and along
  them, O(1) per pixel whatever the side of the box.
* :func:`_tile_separable` — Gaussian with ``stride = 1 < n_taps``: weighted sums over a ring
  of phasor rows, then along the row.
* :func:`_tile_separable_strided` — Gaussian with ``1 < stride < n_taps``: each phasor row is
  added, as it is formed, into the sums of the ``ceil(n_taps / stride)`` sample rows it serves,
  so only those sums are held, not the window's rows: a wide window's tiles can then be wide
  (:func:`xfskde.local._tile_shape`), which made σ = 121.8 at stride 32 on a 2048² image 26
  times faster than the ring of rows did; its samples are the ring's, bit for bit.
* :func:`_tile_disk` — disk, any stride: each row of the disk is a segment, summed as a
  difference of two prefix sums of that phasor row, O(radius) per pixel.

**Coordinates and index maps.** A source array ``src`` of shape (C, Hs, Ws) holds some rows and
columns of the image (all of it, or a Dask block with its halo) — or, with ``planes``, the
(2, Hs, Ws) gradient planes of a tile, which the maps then index as they are. Two index maps
say where the core's row ``r`` and column ``c`` live in it: ``rowmap[r]`` is a row of ``src``,
or ``-1`` for a pixel outside the image in ``constant`` mode, which reads as ``cval``; likewise
``colmap[c]``.
The caller builds them (:func:`xfskde.gradients.boundary_index_map`) so that a row outside the
image maps to the source row that the boundary mode reads there: reflected, mirrored, clamped
or wrapped. This is how every boundary mode is realised without a padded copy of the image, and
how a Dask block is read exactly as the whole image would be. :mod:`xfskde.local` starts both
maps ``depth = radius + 1`` pixels before the block's first sample (``prow0 = pcol0 = depth``
in :func:`fskde_tile`), so the windows and the gradient's stencil only form indices >= 0.

**Precision.** ``work`` is a zero-size array: only its dtype is used, and it sets the precision
of stages 1 and 2 (float32 for complex64 outputs, float64 for complex128). What is held in
which precision (all float64 when ``work`` is float64):

* input rows, gradients, unit phasors and powers, and the ring of phasor rows: ``work``
  (gradient planes are float64, computed by ``scipy.ndimage``, and rounded to ``work`` as
  they are read);
* running sums (box, both passes) and prefix sums (disk): float64;
* weighted vertical sums (cells, Gaussian): held in ``work``; each update is formed in
  float64 (the weights are float64) and rounded when it is stored;
* weighted horizontal sums (cells, Gaussian) and disk segment sums: float64;
* outputs: ``complex(sum * scale[k])`` in float64, stored in ``out``'s dtype.

The cells and Gaussian paths compute every sample from its own window in a fixed order, so a
sample does not depend on where its tile or Dask chunk starts. Running sums (box) start at the
tile's first sample row and column, and prefix sums (disk) at its first column, so there a
sample depends on the tile's start at the rounding of float64 sums.

**Numba.** Every function is compiled on first use and cached on disk (``cache=True``).
``nogil=True`` lets :mod:`xfskde.local` run tiles on several threads; ``error_model="numpy"``
makes a division by zero give inf or NaN, as in NumPy, instead of raising. Literals are typed
(``dtype.type(0.5)``) where a float64 literal would promote float32 work to float64.

The tile routines are inlined into :func:`fskde_tile` (``inline="always"``, numba's own
inlining), and each writes its per-row steps out in its loop rather than in small helpers.
Both are for speed, measured against the single function these routines were split from: as
separate compiled functions the routines made the strided box about 5 % slower (and the row
helpers they call compiled to different code one call level deeper), and a helper called once
per image row cost the cells path about 4 %.
"""

from __future__ import annotations

import numba
import numpy as np

__all__: list[str] = []

#: Window kinds, as :meth:`xfskde.local.LocalParameters.kind_code` passes them.
BOX, SEPARABLE, DISK = 0, 1, 2
#: The routines :func:`fskde_tile` chooses between (:func:`tile_path`), named in PATHS.
PATH_CELLS, PATH_BOX_RUNNING, PATH_SEPARABLE, PATH_DISK, PATH_SEPARABLE_STRIDED = 0, 1, 2, 3, 4
PATHS = ("cells", "box_running", "separable", "disk", "separable_strided")
#: A row index that no image row has: marks a ring slot that holds no row yet.
_FAR = -(1 << 62)


# --------------------------------------------------------------------------------------------
# Reading the image: rows through the index maps
# --------------------------------------------------------------------------------------------


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _load_row(src, rowmap, cols, cval, g, moff, dst):
    """Copy row ``g`` at columns ``cols`` into ``dst`` (C, n), converted to ``dst``'s dtype.

    ``g`` is read through ``rowmap[g + moff]`` and each column through ``cols`` (entries of
    ``colmap``); a ``-1`` in either is outside the image in ``constant`` mode and reads ``cval``.
    """
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
def _ensure_input_rows(src, rowmap, cols, cval, rho, rows, row_of):
    """Make image rows rho-1 .. rho+1 available in the 3-row ring ``rows``.

    Row g lives in slot ``g % 3`` and ``row_of`` records which row each slot holds, so rows
    already loaded (by the previous image row, usually) are not read again.
    """
    for g in range(rho - 1, rho + 2):
        s3 = g % 3
        if row_of[s3] != g:
            _load_row(src, rowmap, cols, cval, g, 0, rows[s3])
            row_of[s3] = g


# --------------------------------------------------------------------------------------------
# Stage 1: the gradient g = Ix + i Iy
# --------------------------------------------------------------------------------------------


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _gradient_row(up, mid, down, gx_out, gy_out):
    """Central differences of one row from its three input rows (C, n + 2); channel of max |g|.

    ``gx = (I[y, x+1] - I[y, x-1]) / 2`` and ``gy = (I[y+1, x] - I[y-1, x]) / 2``: x runs along
    columns, y along rows. Output column t is input column t + 1. With several channels, each
    pixel takes the channel whose |g|² is largest (the first one on ties), as HOG does; a
    channel whose |g|² is NaN is passed over unless every channel's is (a running NaN maximum is
    replaced by the next channel, and a NaN never beats a number).
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


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _row_gradient(src, rowmap, cols, cval, planes, rho, rows, row_of, gx, gy):
    """Stage 1 for image row ``rho`` of a tile: its gradient at the tile's columns, into gx, gy.

    From the image (``planes`` false): rows rho-1 .. rho+1 enter the 3-row ring ``rows`` and are
    differenced (:func:`_gradient_row`). From gradient planes (``planes`` true): ``src`` is
    (2, h, w), I_x then I_y, computed beforehand by another operator (Scharr, Gaussian
    derivatives: :func:`xfskde.gradients.stencil_gradient`), and row ``rho`` is read as it is
    through ``rowmap`` and the tile's columns ``cols[1 .. n]`` (``cols[0]`` and ``cols[n + 1]``
    are the central difference's extra columns). Everything after this stage is the same.
    """
    if planes:
        r = rowmap[rho]
        for t in range(gx.shape[0]):
            x = cols[t + 1]
            gx[t] = src[0, r, x]
            gy[t] = src[1, r, x]
    else:
        _ensure_input_rows(src, rowmap, cols, cval, rho, rows, row_of)
        _gradient_row(rows[(rho - 1) % 3], rows[rho % 3], rows[(rho + 1) % 3], gx, gy)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def gradient_image(src, rowmap, colmap, moff, cval, out):
    """Complex gradient g = gx + i gy of rows 0 .. H-1, columns 0 .. W-1 into ``out`` (H, W).

    Row ``y`` is read through ``rowmap[y + moff]`` and column ``x`` through ``colmap[x + moff]``
    (so ``moff = 1`` when the maps start at index -1). The rows are converted to float64 and
    differenced in float64, whatever the input dtype; ``out``'s dtype sets the stored precision.
    """
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


# --------------------------------------------------------------------------------------------
# Stage 2: phasor powers P_k = |g| (conj(g)/|g|)^k = W e^{-ikΘ}
# --------------------------------------------------------------------------------------------


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _unit_phasors(gx, gy, w0, ure, uim):
    """W = |g| and u = conj(g)/|g| per pixel, in the dtype of ``w0``.

    Where |g|² is 0 or not finite (a NaN or infinite gradient, or an overflow of gx² + gy²),
    W and u are set to 0, so that such a pixel adds nothing and no NaN escapes into the sums.
    """
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
    """P_k = |g| (conj(g)/|g|)^k for k = 0 .. ℓ-1 into ``pre``, ``pim`` (ℓ, n), real and imaginary.

    P_0 = |g| and P_k = P_{k-1} u: one complex multiplication per power, in ``pre``'s dtype.
    The running power lives in buffers allocated here rather than being read back from row k-1
    of ``pre``: the compiler cannot prove that rows k-1 and k do not overlap, and in float32
    that made the loop about twice as slow (measured on rows of 512 columns, ℓ = 9).
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
    """Stages 2 and 3 fused for one row: V[k] += weight * P_k, the powers never stored (cells).

    ``vre``, ``vim`` (ℓ, n) and the scratch rows ``w0, ure, uim, pr, pi`` are in the work dtype.
    ``weight`` is float64, so ``weight * W`` is formed in float64; the powers start from it
    rounded to the work dtype and are multiplied in the work dtype.
    """
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
    """Exclusive prefix sums along the row: s[k, t] = Σ_{t' < t} p[k, t'] (s has n + 1 entries).

    The sums are accumulated and stored in float64 (``sre``, ``sim``), whatever ``pre``'s dtype.
    """
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


# --------------------------------------------------------------------------------------------
# Stages 3 to 5: the window passes and the scaling by H_k
# --------------------------------------------------------------------------------------------


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _weighted_rows(ring, first_row, n_ring, k, profile, v):
    """v[t] += Σ_d profile[d] * ring[(first_row + d) % n_ring, k, t], four rows per pass.

    Each pass forms its products and their sum in float64 (``profile`` is float64) and adds
    that to ``v``, so ``v`` is rounded to its own dtype once per pass (four rows, or one in the
    tail).
    """
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
def _weighted_taps(a, base, stride, profile, h):
    """h[j] += Σ_d profile[d] * a[base + d + j*stride], four taps per pass over h."""
    n_taps = profile.shape[0]
    n = h.shape[0]
    d = 0
    while d + 4 <= n_taps:
        w0, w1, w2, w3 = profile[d], profile[d + 1], profile[d + 2], profile[d + 3]
        b = base + d
        if stride == 1:  # contiguous slices let the loop vectorise
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
def _horizontal_taps(vre, vim, out, i, oj0, oj1, first_x, stride, before, profile, scale,
                     hr, hi):  # fmt: skip
    """Stages 4 and 5 with weights: F_k = scale_k Σ_d profile[d] V_k(x - before + d).

    For each sample j = oj0 .. oj1-1 at tile column x = first_x + j*stride, into ``out[i, j]``.
    The sums are float64 (``hr``, ``hi``, at least oj1 - oj0 long); for each k and tap there is
    one pass over the samples, contiguous when ``stride == 1``.
    """
    length = scale.shape[0]
    row = out[i]
    n_out = oj1 - oj0
    base = first_x + oj0 * stride - before
    for k in range(length):
        h_re = hr[:n_out]
        h_im = hi[:n_out]
        h_re[:] = 0.0
        h_im[:] = 0.0
        _weighted_taps(vre[k], base, stride, profile, h_re)
        _weighted_taps(vim[k], base, stride, profile, h_im)
        sk = scale[k]
        for j in range(n_out):
            row[oj0 + j, k] = complex(h_re[j] * sk, h_im[j] * sk)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _horizontal_running(vre, vim, out, i, oj0, oj1, first_x, stride, before, after, scale,
                        acc_re, acc_im):  # fmt: skip
    """Stages 4 and 5 for a box: running sums along the row, F_k = scale_k Σ_box V_k.

    The first sample's sum is direct; each next sample, ``stride`` columns on, adds the
    ``stride`` columns that enter its box and subtracts the ``stride`` that leave. ``vre``,
    ``vim`` and the sums are float64; ``acc_re``, ``acc_im`` (ℓ) carry the first sums.
    """
    length = scale.shape[0]
    n_taps = before + after + 1
    row = out[i]
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
        # one coefficient at a time, so that the running sum stays in registers
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
    """Stages 3 to 5 for a disk: per window row, one segment sum from that row's prefix sums.

    Window row d (image row first_row + d, ring slot (first_row + d) % n_ring) covers columns
    x - half_widths[d] .. x + half_widths[d] around sample column x, whose sum is
    ``S[x + hw + 1] - S[x - hw]``. All in float64; contiguous over samples when ``stride == 1``.
    """
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
            end = first_x + oj0 * stride + hw + 1  # one past the first sample's segment
            start = first_x + oj0 * stride - hw
            if stride == 1:  # contiguous slices let the loop vectorise
                a, b = sr[end : end + n_out], sr[start : start + n_out]
                c, e = si[end : end + n_out], si[start : start + n_out]
                for j in range(n_out):
                    h_re[j] += a[j] - b[j]
                    h_im[j] += c[j] - e[j]
            else:
                for j in range(n_out):
                    h_re[j] += sr[end + j * stride] - sr[start + j * stride]
                    h_im[j] += si[end + j * stride] - si[start + j * stride]
        sk = scale[k]
        for j in range(n_out):
            row[oj0 + j, k] = complex(h_re[j] * sk, h_im[j] * sk)


# --------------------------------------------------------------------------------------------
# The tile routines, one per path
# --------------------------------------------------------------------------------------------
#
# A tile is the output rows oi0 .. oi1-1 and columns oj0 .. oj1-1 of `out`. Sample (i, j) sits
# at row prow0 + i*stride and column pcol0 + j*stride of the index maps' frame, and its window
# covers offsets -before .. +after on each axis.
#
# Columns. A routine works on the tile's columns only: from the first sample's window start
# xg0 = pcol0 + oj0*stride - before, `width` columns to the last sample's window end. Tile
# column t is map column xg0 + t; `cols` holds colmap[xg0 - 1 .. xg0 + width], one column more
# on each side for the central difference, and sample j sits at tile column first_x + j*stride.
#
# Input rows. Image rows stream down the tile through a ring of three (`rows`, C channels,
# width + 2 columns; `row_of` names the image row in each slot, row g in slot g % 3), from which
# each image row's gradient is formed (stage 1).
#
# The ring of phasor rows (running box, Gaussian, disk). Slot rho % n_ring holds image row rho
# (`ring_of` names it): P_k at every tile column for k = 0 .. ℓ-1, real and imaginary parts in
# two arrays (ring_re[slot, k, t], ring_im[slot, k, t]); the disk keeps the row's float64
# prefix sums instead. The window of sample row yc needs rows yc-before .. yc+after, n_taps
# consecutive rows, which sit in distinct slots; a row already in its slot was in the previous
# sample row's window and is not computed again, so moving down by `stride` computes only the
# min(stride, n_taps) rows that enter. The ring has n_ring = n_taps + stride slots: the extra
# `stride` keep the rows yc-before-stride .. yc-before-1 that have just left the window, which
# the running box subtracts; the Gaussian and disk paths never read them.
#
# The cells path keeps no ring: no image row is in two sample rows' windows, so each row's
# powers are added into the vertical sums as they are formed.


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _tile_columns(colmap, pcol0, oj0, oj1, stride, before, after):
    """The tile's columns, as described above: (cols, width, first_x)."""
    xg0 = pcol0 + oj0 * stride - before
    width = (oj1 - 1 - oj0) * stride + before + after + 1
    cols = np.empty(width + 2, np.int64)
    for t in range(width + 2):
        cols[t] = colmap[xg0 - 1 + t]
    return cols, width, pcol0 - xg0


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _tile_scratch(src, colmap, work, pcol0, oj0, oj1, stride, before, after):
    """What stages 1 and 2 of every routine need for a tile: its columns (:func:`_tile_columns`),
    the 3-row ring of input rows with the row each slot holds, and the gradient and unit-phasor
    rows, in the work dtype: (cols, width, first_x, rows, row_of, gx, gy, ure, uim)."""
    dt = work.dtype
    cols, width, first_x = _tile_columns(colmap, pcol0, oj0, oj1, stride, before, after)
    rows = np.empty((3, src.shape[0], width + 2), dt)
    row_of = np.full(3, _FAR, np.int64)
    gx = np.empty(width, dt)
    gy = np.empty(width, dt)
    ure = np.empty(width, dt)
    uim = np.empty(width, dt)
    return cols, width, first_x, rows, row_of, gx, gy, ure, uim


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _tile_cells(src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0, pcol0, stride,
                before, after, profile, scale, planes):  # fmt: skip
    """Box or Gaussian window with ``stride >= n_taps``: windows that share no row (cells).

    No image row lies in the windows of two sample rows, so no phasor row is kept: each of a
    sample row's n_taps image rows is turned into powers and added, weighted by
    ``profile[d]``, straight into V (stages 2 and 3 fused, in the work dtype); V is then
    filtered along the row with the same profile (float64). For a box the profile is ones and
    ``scale`` holds H_k / size².
    """
    dt = work.dtype
    length = scale.shape[0]
    n_taps = before + after + 1
    cols, width, first_x, rows, row_of, gx, gy, ure, uim = _tile_scratch(
        src, colmap, work, pcol0, oj0, oj1, stride, before, after
    )
    w0 = np.empty(width, dt)
    pr = np.empty(width, dt)
    pi = np.empty(width, dt)
    vre = np.empty((length, width), dt)  # V_k of one sample row
    vim = np.empty((length, width), dt)
    hr = np.zeros(oj1 - oj0)  # float64 sums along the row
    hi = np.zeros(oj1 - oj0)

    for i in range(oi0, oi1):
        yc = prow0 + i * stride
        vre[:] = 0.0
        vim[:] = 0.0
        for d in range(n_taps):
            rho = yc - before + d
            # 1. the gradient of image row rho
            _row_gradient(src, rowmap, cols, cval, planes, rho, rows, row_of, gx, gy)
            # 2.-3. its powers, weighted by profile[d], added into V
            _accumulate_phasors(gx, gy, profile[d], vre, vim, w0, ure, uim, pr, pi)
        # 4.-5. weighted taps along the row, times scale_k
        _horizontal_taps(vre, vim, out, i, oj0, oj1, first_x, stride, before, profile, scale,
                         hr, hi)  # fmt: skip


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _tile_box_running(src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0, pcol0,
                      stride, before, after, scale, planes):  # fmt: skip
    """Box window with ``stride < n_taps``: running sums in both passes, O(1) per pixel.

    The box's weights are ones, so the vertical pass is a plain sum of its n_taps phasor rows:
    direct for the tile's first sample row, and for each next one, ``stride`` rows down, the
    previous sums plus the ``stride`` rows that enter the box minus the ``stride`` rows that
    leave it (float64). :func:`_horizontal_running` does the same along the row. ``scale`` holds
    H_k / size²; no profile is needed.
    """
    dt = work.dtype
    length = scale.shape[0]
    n_taps = before + after + 1
    cols, width, first_x, rows, row_of, gx, gy, ure, uim = _tile_scratch(
        src, colmap, work, pcol0, oj0, oj1, stride, before, after
    )
    n_ring = n_taps + stride  # the box's rows and the `stride` rows that have just left it
    ring_of = np.full(n_ring, _FAR, np.int64)
    ring_re = np.empty((n_ring, length, width), dt)
    ring_im = np.empty((n_ring, length, width), dt)
    v_re = np.zeros((length, width))  # float64 box sums down each column
    v_im = np.zeros((length, width))
    acc_re = np.zeros(length)
    acc_im = np.zeros(length)

    for i in range(oi0, oi1):
        yc = prow0 + i * stride
        # 1.-2. the box's phasor rows yc-before .. yc+after into the ring, each computed once
        for rho in range(yc - before, yc + after + 1):
            slot = rho % n_ring
            if ring_of[slot] == rho:
                continue
            _row_gradient(src, rowmap, cols, cval, planes, rho, rows, row_of, gx, gy)
            _phasor_row(gx, gy, ring_re[slot], ring_im[slot], ure, uim)
            ring_of[slot] = rho
        # 3. vertical pass
        if i > oi0:
            # `stride` rows down from the previous sample row: add rows yc+after-stride+1 ..
            # yc+after, which enter the box, and subtract rows yc-before-stride .. yc-before-1,
            # which leave it (still in the ring: it has `stride` slots more than the box)
            for step in range(stride):
                s_in = (yc + after - step) % n_ring
                s_out = (yc - before - 1 - step) % n_ring
                for k in range(length):
                    a = ring_re[s_in, k]
                    b = ring_re[s_out, k]
                    c = ring_im[s_in, k]
                    e = ring_im[s_out, k]
                    vr = v_re[k]
                    vi = v_im[k]
                    for t in range(width):
                        vr[t] += np.float64(a[t]) - np.float64(b[t])
                        vi[t] += np.float64(c[t]) - np.float64(e[t])
        else:
            # the tile's first sample row: sum the box's rows directly
            v_re[:] = 0.0
            v_im[:] = 0.0
            for d in range(n_taps):
                slot = (yc - before + d) % n_ring
                for k in range(length):
                    for t in range(width):
                        v_re[k, t] += ring_re[slot, k, t]
                        v_im[k, t] += ring_im[slot, k, t]
        # 4.-5. running sums along the row, times H_k / size²
        _horizontal_running(v_re, v_im, out, i, oj0, oj1, first_x, stride, before, after, scale,
                            acc_re, acc_im)  # fmt: skip


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _tile_separable(src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0, pcol0,
                    stride, before, after, profile, scale, planes):  # fmt: skip
    """Gaussian window with ``stride < n_taps``: weighted sums over a ring of phasor rows.

    The windows of neighbouring sample rows share rows, so each phasor row is kept in the ring
    while it is needed. Per sample row, V_k = Σ_d profile[d] P_k(yc - before + d) down each
    column (held in the work dtype, four rows per float64 partial sum), then the same profile
    along the row (float64). ``scale`` holds H_k (the profile sums to one).
    """
    dt = work.dtype
    length = scale.shape[0]
    n_taps = before + after + 1
    cols, width, first_x, rows, row_of, gx, gy, ure, uim = _tile_scratch(
        src, colmap, work, pcol0, oj0, oj1, stride, before, after
    )
    n_ring = n_taps + stride  # as for the running box; the extra `stride` slots go unread
    ring_of = np.full(n_ring, _FAR, np.int64)
    ring_re = np.empty((n_ring, length, width), dt)
    ring_im = np.empty((n_ring, length, width), dt)
    vre = np.zeros((length, width), dt)  # V_k of one sample row
    vim = np.zeros((length, width), dt)
    hr = np.zeros(oj1 - oj0)  # float64 sums along the row
    hi = np.zeros(oj1 - oj0)

    for i in range(oi0, oi1):
        yc = prow0 + i * stride
        # 1.-2. the window's phasor rows yc-before .. yc+after into the ring, each computed once
        for rho in range(yc - before, yc + after + 1):
            slot = rho % n_ring
            if ring_of[slot] == rho:
                continue
            _row_gradient(src, rowmap, cols, cval, planes, rho, rows, row_of, gx, gy)
            _phasor_row(gx, gy, ring_re[slot], ring_im[slot], ure, uim)
            ring_of[slot] = rho
        # 3. vertical pass: the window's rows, weighted by the profile
        vre[:] = 0.0
        vim[:] = 0.0
        for k in range(length):
            _weighted_rows(ring_re, yc - before, n_ring, k, profile, vre[k])
            _weighted_rows(ring_im, yc - before, n_ring, k, profile, vim[k])
        # 4.-5. weighted taps along the row, times H_k
        _horizontal_taps(vre, vim, out, i, oj0, oj1, first_x, stride, before, profile, scale,
                         hr, hi)  # fmt: skip


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _tile_separable_strided(src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0,
                            pcol0, stride, before, after, profile, scale, planes):  # fmt: skip
    """Gaussian window with ``1 < stride < n_taps``: each phasor row added into the sample rows
    it serves as it is formed.

    Every image row is computed once and added, weighted by its tap, into the vertical sums V
    of each sample row whose window holds it (at most ``ceil(n_taps / stride)`` at a time, in a
    ring of sums); a sample row's V is complete with its window's last row and is then filtered
    along the row, as in :func:`_tile_separable`. Only those sums and the last four phasor rows
    are held, not the window's rows: a tile of a wide window can be wide. Each V adds its
    window's rows four at a time from its first, each four formed in float64 and V held in the
    work dtype, exactly as :func:`_weighted_rows` does in :func:`_tile_separable`: the samples
    are those of the ring of rows, bit for bit, and do not depend on where the tile starts.
    """
    dt = work.dtype
    length = scale.shape[0]
    n_taps = before + after + 1
    n_fours = n_taps - n_taps % 4  # taps added four at a time; the rest one at a time
    cols, width, first_x, rows, row_of, gx, gy, ure, uim = _tile_scratch(
        src, colmap, work, pcol0, oj0, oj1, stride, before, after
    )
    p_re = np.empty((4, length, width), dt)  # the last four image rows' powers, by rho % 4
    p_im = np.empty((4, length, width), dt)
    n_open = (n_taps + stride - 1) // stride  # sample rows one image row can serve
    v_re = np.zeros((n_open, length, width), dt)  # V of the open sample rows, by i % n_open
    v_im = np.zeros((n_open, length, width), dt)
    hr = np.zeros(oj1 - oj0)  # float64 sums along the row
    hi = np.zeros(oj1 - oj0)

    for rho in range(prow0 + oi0 * stride - before, prow0 + (oi1 - 1) * stride + after + 1):
        # 1.-2. the powers of image row rho, once
        _row_gradient(src, rowmap, cols, cval, planes, rho, rows, row_of, gx, gy)
        _phasor_row(gx, gy, p_re[rho % 4], p_im[rho % 4], ure, uim)
        # 3. into V of the sample rows i whose window holds rho (yc - before <= rho <= yc +
        # after, yc = prow0 + i * stride): rows d-3 .. d of the window at its tap d = 3, 7, ..,
        # then each of the last n_taps % 4 taps alone
        i_lo = max(oi0, -((prow0 + after - rho) // stride))
        i_hi = min(oi1 - 1, (rho + before - prow0) // stride)
        for i in range(i_lo, i_hi + 1):
            slot = i % n_open
            d = rho - (prow0 + i * stride - before)
            if d == 0:
                v_re[slot] = 0.0
                v_im[slot] = 0.0
            if d < n_fours:
                if d % 4 != 3:
                    continue
                s0, s1, s2, s3 = (rho - 3) % 4, (rho - 2) % 4, (rho - 1) % 4, rho % 4
                w0, w1, w2, w3 = profile[d - 3], profile[d - 2], profile[d - 1], profile[d]
                for k in range(length):
                    vr = v_re[slot, k]
                    vi = v_im[slot, k]
                    r0, r1, r2, r3 = p_re[s0, k], p_re[s1, k], p_re[s2, k], p_re[s3, k]
                    for t in range(width):
                        vr[t] += w0 * r0[t] + w1 * r1[t] + w2 * r2[t] + w3 * r3[t]
                    r0, r1, r2, r3 = p_im[s0, k], p_im[s1, k], p_im[s2, k], p_im[s3, k]
                    for t in range(width):
                        vi[t] += w0 * r0[t] + w1 * r1[t] + w2 * r2[t] + w3 * r3[t]
            else:
                w0 = profile[d]
                for k in range(length):
                    vr = v_re[slot, k]
                    vi = v_im[slot, k]
                    r0 = p_re[rho % 4, k]
                    for t in range(width):
                        vr[t] += w0 * r0[t]
                    r0 = p_im[rho % 4, k]
                    for t in range(width):
                        vi[t] += w0 * r0[t]
        # 4.-5. the sample row whose window ends at rho: weighted taps along the row, times H_k
        if i_lo <= i_hi and rho == prow0 + i_lo * stride + after:
            slot = i_lo % n_open
            _horizontal_taps(v_re[slot], v_im[slot], out, i_lo, oj0, oj1, first_x, stride,
                             before, profile, scale, hr, hi)  # fmt: skip


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _tile_disk(src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0, pcol0, stride,
               before, after, half_widths, scale, planes):  # fmt: skip
    """Disk window, any stride: one row segment per window row, O(radius) per pixel.

    The disk is not separable, but each of its rows is a segment of half-width
    ``half_widths[d]``. The ring therefore holds each phasor row's float64 prefix sums, from
    which :func:`_disk_row` takes every segment sum as one difference (stages 3 to 5 at once).
    ``before == after`` is the radius; ``scale`` holds H_k / (number of pixels in the disk).
    """
    dt = work.dtype
    length = scale.shape[0]
    n_taps = before + after + 1
    cols, width, first_x, rows, row_of, gx, gy, ure, uim = _tile_scratch(
        src, colmap, work, pcol0, oj0, oj1, stride, before, after
    )
    p_re = np.empty((length, width), dt)  # one row's powers, before their prefix sums
    p_im = np.empty((length, width), dt)
    n_ring = n_taps + stride  # as for the running box; the extra `stride` slots go unread
    ring_of = np.full(n_ring, _FAR, np.int64)
    pre_re = np.empty((n_ring, length, width + 1))  # float64 prefix sums of the phasor rows
    pre_im = np.empty((n_ring, length, width + 1))
    hr = np.zeros(oj1 - oj0)  # float64 sums along the row
    hi = np.zeros(oj1 - oj0)

    for i in range(oi0, oi1):
        yc = prow0 + i * stride
        # 1.-2. the window's phasor rows into the ring as prefix sums, each computed once
        for rho in range(yc - before, yc + after + 1):
            slot = rho % n_ring
            if ring_of[slot] == rho:
                continue
            _row_gradient(src, rowmap, cols, cval, planes, rho, rows, row_of, gx, gy)
            _phasor_row(gx, gy, p_re, p_im, ure, uim)
            _prefix_sums(p_re, p_im, pre_re[slot], pre_im[slot])
            ring_of[slot] = rho
        # 3.-5. one segment per window row, times H_k / N
        _disk_row(pre_re, pre_im, out, i, oj0, oj1, first_x, stride, yc - before, n_ring,
                  half_widths, scale, hr, hi)  # fmt: skip


# --------------------------------------------------------------------------------------------
# The dispatcher
# --------------------------------------------------------------------------------------------


@numba.njit(nogil=True, cache=True, error_model="numpy")
def tile_path(kind, n_taps, stride):
    """The routine that computes a tile: one of the ``PATH_*`` codes (``PATHS[path]`` names it).

    A disk always takes :func:`_tile_disk`. A box or Gaussian whose samples' windows share no
    row (``stride >= n_taps``) takes :func:`_tile_cells`; otherwise a box takes
    :func:`_tile_box_running` and a Gaussian :func:`_tile_separable`.
    """
    if kind == DISK:
        return PATH_DISK
    if stride >= n_taps:
        return PATH_CELLS
    if kind == BOX:
        return PATH_BOX_RUNNING
    if stride > 1:
        return PATH_SEPARABLE_STRIDED
    return PATH_SEPARABLE


@numba.njit(nogil=True, cache=True, error_model="numpy")
def fskde_tile(
    src, rowmap, colmap, cval, work, out,
    oi0, oi1, oj0, oj1, prow0, pcol0, stride,
    kind, before, after, profile, half_widths, scale, planes,
):  # fmt: skip
    """Local FS-KDE of output rows ``oi0:oi1`` and columns ``oj0:oj1`` of ``out`` (a tile).

    ``out[i, j, k]`` is F_k at pixel (prow0 + i*stride, pcol0 + j*stride) of the index maps'
    frame: ``scale[k]`` times the sum over the window (offsets -before .. after on each axis) of
    weight(dy, dx) * P_k(y + dy, x + dx). ``kind`` is BOX (unit weights), SEPARABLE
    (``profile`` weights on both axes) or DISK (window row d is a segment of half-width
    ``half_widths[d]``); :func:`tile_path` picks the routine. ``work`` is a zero-size array
    whose dtype is the precision of the gradients and powers (see the module docstring).

    Numba compiles this function with every branch, whichever one a call takes, so every
    argument must have a type that all five routines' calls accept: where a window has nothing
    to pass, :mod:`xfskde.local` passes a small array that the chosen routine ignores
    (``half_widths = [0]`` for a box or Gaussian, a profile of ones for a disk), never None
    (None fails to compile: the disk branch reads ``half_widths.shape``). One compiled version
    per source dtype and precision thus serves every window.

    ``planes`` (bool): ``src`` holds the gradient planes I_x, I_y (2, h, w) of another operator
    instead of the image (stage 1 reads them; :func:`_row_gradient`); ``cval`` is then unused.
    """
    if oi1 <= oi0 or oj1 <= oj0:
        return
    path = tile_path(kind, before + after + 1, stride)
    if path == PATH_CELLS:
        _tile_cells(src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0, pcol0,
                    stride, before, after, profile, scale, planes)  # fmt: skip
    elif path == PATH_BOX_RUNNING:
        _tile_box_running(src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0,
                          pcol0, stride, before, after, scale, planes)  # fmt: skip
    elif path == PATH_SEPARABLE:
        _tile_separable(src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0, pcol0,
                        stride, before, after, profile, scale, planes)  # fmt: skip
    elif path == PATH_SEPARABLE_STRIDED:
        _tile_separable_strided(src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0,
                                pcol0, stride, before, after, profile, scale, planes)  # fmt: skip
    else:
        _tile_disk(src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0, pcol0,
                   stride, before, after, half_widths, scale, planes)  # fmt: skip
