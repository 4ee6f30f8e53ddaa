"""Labeled results: DataArray construction and the ``.fskde`` accessor.

Images are read by dimension *name*, as rioxarray does: the spatial dims are ``y`` and ``x``
when present, else the last two; a colour dim is one of :data:`COLOR_DIMS`, at either end.
Coefficient fields are DataArrays named ``"fskde"`` with dims ``(y, x, k)``, the image's
coordinates at the sampled pixels, ``k = 0 .. ℓ-1`` and attrs that record every parameter.

The accessor is thin: each method delegates to a plain function of :mod:`xfskde`, keeps no state
and its constructor never raises (a method used on the wrong kind of array says so).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ._version import __version__
from .api import local_fskde
from .canonical import canonicalize
from .density import distance, evaluate, rotate
from .lazy import local_fskde_dask
from .local import LocalParameters, local_fskde_numpy, sample_offset

__all__ = ["COLOR_DIMS", "FskdeAccessor", "image_dims", "local_fskde_dataarray"]

#: Names recognised as a colour / spectral axis.
COLOR_DIMS = ("c", "band", "bands", "channel", "channels", "rgb", "color", "colour")


def image_dims(image: xr.DataArray) -> tuple[str, str, str | None]:
    """Return ``(y_dim, x_dim, colour_dim or None)`` of an image DataArray.

    Raises
    ------
    ValueError
        When the layout is not (y, x) or (y, x) with one colour dim, with the ``transpose`` or
        ``rename`` call that would fix it.
    """
    dims = tuple(map(str, image.dims))
    colour = [d for d in dims if d.lower() in COLOR_DIMS]
    if image.ndim == 2:
        y, x = ("y", "x") if {"y", "x"} <= set(dims) else dims
        return y, x, None
    if image.ndim == 3 and len(colour) == 1:
        spatial = [d for d in dims if d != colour[0]]
        if dims.index(colour[0]) == 1:
            raise ValueError(
                f"the colour dim {colour[0]!r} sits between the spatial dims {spatial}; call "
                f".transpose({spatial[0]!r}, {spatial[1]!r}, {colour[0]!r}) first"
            )
        y, x = ("y", "x") if {"y", "x"} <= set(spatial) else spatial
        return y, x, colour[0]
    raise ValueError(
        f"cannot tell the spatial dims of an image with dims {dims}: expected (y, x) or (y, x) "
        f"with a colour dim named one of {COLOR_DIMS}. Select a 2-D or 3-D image (e.g. "
        f".isel(time=0)) and name its dims, e.g. .rename({{{dims[-1]!r}: 'x'}}) or "
        f".transpose(..., 'y', 'x')"
    )


def _attrs(params: LocalParameters, image: xr.DataArray) -> dict[str, Any]:
    attrs = dict(params.attrs())
    attrs["xfskde_version"] = __version__
    attrs["source"] = str(image.name) if image.name is not None else "image"
    attrs["long_name"] = "local FS-KDE coefficients of gradient angles"
    return attrs


def _sampled_coords(image: xr.DataArray, y: str, x: str, stride: int) -> dict[str, Any]:
    """Coordinates of the sampled pixels: 1-D coords on y or x, strided; scalar coords kept."""
    o = sample_offset(stride)
    coords: dict[str, Any] = {}
    for name, coord in image.coords.items():
        cdims = coord.dims
        if cdims == ():
            coords[name] = coord
        elif cdims == (y,):
            coords["y" if name == y else name] = ("y", coord.values[o::stride], coord.attrs)
        elif cdims == (x,):
            coords["x" if name == x else name] = ("x", coord.values[o::stride], coord.attrs)
    coords.setdefault("y", ("y", np.arange(o, image.sizes[y], stride)))
    coords.setdefault("x", ("x", np.arange(o, image.sizes[x], stride)))
    return coords


def local_fskde_dataarray(image: xr.DataArray, params: LocalParameters) -> xr.DataArray:
    """Local FS-KDE of an image DataArray → a ``(y, x, k)`` DataArray named ``"fskde"``.

    NumPy-backed images give an eager result, Dask-backed ones a lazy result; both come from the
    same block core (:func:`xfskde.local.local_fskde_block`).
    """
    y, x, colour = image_dims(image)
    order = (y, x) if colour is None else (y, x, colour)
    data = image.transpose(*order).data
    channel_axis = None if colour is None else -1
    if type(data).__module__.startswith("dask"):
        values = local_fskde_dask(data, params, channel_axis=channel_axis)
    else:
        values = local_fskde_numpy(np.asarray(data), params, channel_axis=channel_axis)
    coords = _sampled_coords(image, y, x, params.stride)
    coords["k"] = ("k", np.arange(params.length), {"long_name": "Fourier index k >= 0"})
    return xr.DataArray(
        values, dims=("y", "x", "k"), coords=coords, name="fskde", attrs=_attrs(params, image)
    )


def _apply_k(func, field: xr.DataArray, dtype: Any, new_dim: str | None = None, size: int = 0):
    """Apply a NumPy function of (..., ℓ) arrays blockwise, keeping dims, coords and attrs."""
    return xr.apply_ufunc(
        func,
        field,
        input_core_dims=[["k"]],
        output_core_dims=[[new_dim or "k"]],
        exclude_dims={"k"} if new_dim else set(),
        dask="parallelized",
        keep_attrs=True,
        dask_gufunc_kwargs={
            "meta": np.empty((0, 0, 0), dtype),
            **({"output_sizes": {new_dim: size}} if new_dim else {}),
        },
    )


@xr.register_dataarray_accessor("fskde")
class FskdeAccessor:
    """``DataArray.fskde``: FS-KDE operations on images and on coefficient fields.

    On an image: :meth:`coefficients`, :meth:`segment`. On a coefficient field (dims ``y, x, k``):
    :meth:`density`, :meth:`canonicalize`, :meth:`rotate`, :meth:`distance`,
    :meth:`dominant_orientation`, :meth:`to_zarr`.
    """

    def __init__(self, obj: xr.DataArray):
        self._obj = obj

    def _field(self) -> xr.DataArray:
        if "k" not in self._obj.dims:
            raise ValueError(
                "this DataArray has no 'k' dim: it is not an FS-KDE coefficient field; compute "
                "one with .fskde.coefficients(order=...) first"
            )
        return self._obj

    def coefficients(self, **params: Any) -> xr.DataArray:
        """Local FS-KDE of this image; parameters as :func:`xfskde.local_fskde` (section 2.3)."""
        return local_fskde(self._obj, **params)

    def density(self, theta: Any) -> xr.DataArray:
        """The density :math:`f(x, \\theta)` (eq. 1) at angles ``theta`` → dims (y, x, theta)."""
        field = self._field()
        theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
        out = _apply_k(
            lambda F: evaluate(F, theta), field, np.float64, new_dim="theta", size=theta.size
        ).assign_coords(theta=("theta", theta, {"units": "rad"}))
        out.name = "density"
        out.attrs["long_name"] = "FS-KDE density of gradient angles"
        return out

    def canonicalize(self, ell: int = 1) -> xr.DataArray:
        """F_ℓ-canonical form of every pixel's FS-KDE (eq. 8; section 4.3)."""
        field = self._field()
        out = _apply_k(lambda F: canonicalize(F, ell), field, field.dtype)
        out.attrs["canonical"] = f"F{ell}"
        return out

    def rotate(self, phi: float) -> xr.DataArray:
        """Rotate every FS-KDE by ``phi`` radians (eq. 2)."""
        field = self._field()
        return _apply_k(lambda F: rotate(F, phi), field, field.dtype)

    def distance(self, other: xr.DataArray | np.ndarray) -> xr.DataArray:
        """Parseval distance to ``other`` (a field or one FS-KDE) per pixel → dims (y, x)."""
        field = self._field()
        if not isinstance(other, xr.DataArray):
            other = xr.DataArray(np.asarray(other), dims=("k",))
        out = xr.apply_ufunc(
            distance,
            field,
            other,
            input_core_dims=[["k"], ["k"]],
            dask="parallelized",
            keep_attrs=True,
            dask_gufunc_kwargs={"meta": np.empty((0, 0), np.float64)},
        )
        out.name = "distance"
        return out

    def dominant_orientation(self) -> xr.DataArray:
        """Angle of the mean gradient direction per pixel, :math:`-\\arg F_1` (section 4.1).

        This is the circular mean of the angles weighted by |g| (the F_1 canonicalization angle,
        negated), in radians; NaN where F_1 = 0 (no dominant orientation).
        """
        field = self._field()
        F1 = field.isel(k=1)
        out = xr.apply_ufunc(
            lambda f: np.where(np.abs(f) > 0, -np.angle(f), np.nan),
            F1,
            dask="parallelized",
            keep_attrs=True,
            dask_gufunc_kwargs={"meta": np.empty((0, 0), np.float64)},
        )
        out.name = "orientation"
        out.attrs["units"] = "rad"
        return out.drop_vars("k", errors="ignore")

    def segment(self, n_textures: int, **kwargs: Any) -> xr.DataArray:
        """Texture segmentation (ORTSEG, section 5.3) of this image; see :func:`xfskde.segment`."""
        from .segmentation import segment

        return segment(self._obj, n_textures, **kwargs)

    def to_zarr(self, store: Any, *, resume: bool = False, **kwargs: Any) -> Any:
        """Write this field to a Zarr v3 store; see :func:`xfskde.write_coefficients`."""
        from .io import write_coefficients

        return write_coefficients(self._field(), store, resume=resume, **kwargs)
