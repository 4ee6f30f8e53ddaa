"""The public entry point :func:`local_fskde`: NumPy, Dask or xarray images, one block core.

Each face is thin: the parameters are checked once (:class:`~xfskde.local.LocalParameters`), then
NumPy arrays go to the tiled in-memory driver (:func:`xfskde.local.local_fskde_numpy`), Dask
arrays to the one block engine (:func:`xfskde.lazy.local_fskde_dask`), and DataArrays to either
of those, labelled with dims, coords and attrs by :mod:`xfskde._labels`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ._labels import image_layout, label_result
from .exceptions import ParameterError
from .gradients import Boundary
from .kernel import Approximation, Cos2KKernel
from .lazy import local_fskde_dask
from .local import LocalParameters, local_fskde_numpy
from .windows import Window

__all__ = ["local_fskde", "local_fskde_dataarray"]


def local_fskde_dataarray(image: Any, params: LocalParameters) -> Any:
    """Local FS-KDE of an image DataArray → a ``(y, x, k)`` DataArray named ``"fskde"``.

    NumPy-backed images give an eager result, Dask-backed ones a lazy result; both come from the
    same block core. Coords and attrs follow :mod:`xfskde._labels`: the image's coordinates at
    the sampled pixels, its attrs, and every parameter (:meth:`LocalParameters.attrs`).
    """
    data, (_, _, colour) = image_layout(image)
    channel_axis = None if colour is None else -1
    if type(data).__module__.startswith("dask"):
        values = local_fskde_dask(data, params, channel_axis=channel_axis)
    else:
        values = local_fskde_numpy(np.asarray(data), params, channel_axis=channel_axis)
    k = ("k", np.arange(params.length), {"long_name": "Fourier index k >= 0"})
    attrs = {**params.attrs(), "long_name": "local FS-KDE coefficients of gradient angles"}
    return label_result(
        values, image, stride=params.stride, extra_dims={"k": k}, name="fskde", attrs=attrs
    )


def local_fskde(
    image: Any,
    *,
    order: int | Cos2KKernel,
    window: str | Window = "gaussian",
    size: float = 4,
    stride: int = 1,
    eps: float | None = None,
    boundary: Boundary = "reflect",
    cval: float = 0.0,
    channel_axis: int | None = None,
    approximation: Approximation = "auto",
    nan_policy: Literal["raise", "omit"] = "raise",
) -> Any:
    """Local FS-KDE of an image's gradient angles at every (sampled) pixel (section 2.3).

    .. math:: F_k(x) = H_k\\,\\big(W\\,e^{-ik\\Theta} * \\varphi\\big)(x),\\quad k = 0 .. ℓ-1

    with :math:`W = |g|`, :math:`\\Theta = \\arg g` (:func:`xfskde.gradient`), φ the window and
    :math:`H_k` the cos^2K coefficients (eqs. 4–7).

    Parameters
    ----------
    image : numpy.ndarray, dask.array.Array or xarray.DataArray
        ``(y, x)`` or with a colour axis. Any real dtype; integers are converted to float first
        (no uint8 wrap-around). DataArrays are read by dimension name (``y``/``x``, else the last
        two; ``c``/``band``/``channel`` for colour).
    order : int or Cos2KKernel
        Order K >= 1 of the cos^2K kernel (eq. 3), or the kernel itself (with its truncation
        and approximation; ``eps`` and ``approximation`` are then not taken), e.g.
        ``Cos2KKernel.for_length(10)`` for a descriptor of length ℓ = 10.
    window : {"gaussian", "box", "disk"} or Window
        The window φ. ``"box"``: ``size`` × ``size`` pixels; ``"gaussian"``: ``size`` = sigma,
        truncated at ``ceil(4 sigma)``; ``"disk"``: ``size`` = radius. Each sums to one.
    size : float
        Window size in pixels (see ``window``); default 4.
    stride : int
        Sample every ``stride``-th pixel on a grid anchored at pixel (0, 0), at the cell centres
        ``i*stride + (stride-1)//2``. With ``window="box", size=8, stride=8`` each output is the
        FS-KDE of one 8×8 cell, like HOG's cells. Default 1: every pixel.
    eps : float in (0, 1), optional
        Truncation threshold (eq. 7): keep k with e^{-k²/K} >= eps. None keeps K + 1.
    boundary : {"reflect", "mirror", "nearest", "wrap", "constant"}
        How the image is read beyond its true edges (``scipy.ndimage`` modes); default
        ``"reflect"``. Internal chunk edges always see their real neighbours.
    cval : float
        Outside value for ``boundary="constant"``.
    channel_axis : int, optional
        Colour axis of a NumPy/Dask image; each pixel takes the channel with the largest |g|.
    approximation : {"auto", "exact", "normal"}
        How H_k is computed; see :class:`~xfskde.Cos2KKernel`.
    nan_policy : {"raise", "omit"}
        ``"raise"`` (default) refuses NaN/inf pixels; ``"omit"`` gives every gradient that touches
        one zero weight, which is how no-data areas of mosaics are skipped. In colour images a
        channel whose stencil touches NaN is skipped; the weight is 0 only when all channels'
        are.

    Returns
    -------
    numpy.ndarray, dask.array.Array or xarray.DataArray of shape (ny, nx, ℓ)
        The kind of the input. complex64 for float32 and 8/16-bit integer images, complex128
        for float64. A flat region gives exact zeros. DataArrays are named ``"fskde"`` with dims
        ``(y, x, k)``, the input's coordinates at the sampled pixels and attrs that record every
        parameter.

    Raises
    ------
    ValueError
        For bad parameters (each message names the parameter) or NaN pixels under
        ``nan_policy="raise"``.

    See Also
    --------
    xfskde.overlap_depth : the halo a block needs; the Dask engine derives its overlap from it.

    Examples
    --------
    >>> import numpy as np
    >>> image = np.random.default_rng(0).random((64, 48), dtype=np.float32)
    >>> F = local_fskde(image, order=8, window="box", size=8, stride=8)
    >>> F.shape, F.dtype
    ((8, 6, 9), dtype('complex64'))
    """
    params = LocalParameters(
        order=order, window=window, size=size, stride=stride, eps=eps, boundary=boundary,
        cval=cval, approximation=approximation, nan_policy=nan_policy,
    )  # fmt: skip
    module = type(image).__module__
    if module.startswith("xarray"):
        if channel_axis is not None:
            raise ParameterError(
                "channel_axis is for NumPy and Dask images; a DataArray's colour dim is found by "
                "name (c, band, channel, ...): rename it, e.g. .rename({'dim_2': 'c'}), and drop "
                "channel_axis"
            )

        return local_fskde_dataarray(image, params)
    if module.startswith("dask"):
        return local_fskde_dask(image, params, channel_axis=channel_axis)
    return local_fskde_numpy(np.asarray(image), params, channel_axis=channel_axis)
