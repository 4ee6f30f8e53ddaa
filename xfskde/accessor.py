"""Labeled results: DataArray construction and the ``.fskde`` accessor.

Images are read by dimension *name*, as rioxarray does: the spatial dims are ``y`` and ``x``
when present, else the last two; a colour dim is one of :data:`COLOR_DIMS`, at either end.
Anything else is refused with the ``.transpose(...)`` or ``.rename(...)`` call that fixes it.

Coefficient fields are DataArrays named ``"fskde"`` with dims ``(y, x, k)`` whatever the input's
spatial dim names were (so that every consumer — density, Zarr stores, segmentation — can rely on
them; the input's names are recorded in the ``source_dims`` attr). Their coordinates are the
image's at the sampled pixels, ``image.isel(y=slice(o, None, s), x=slice(o, None, s))`` with
stride ``s`` and offset ``o = (s - 1) // 2``: 1-D and 2-D coords on the spatial dims and scalar
coords (a ``spatial_ref``, say) are carried with their attrs; ``k = 0 .. ℓ-1``. The attrs record
every parameter (:meth:`xfskde.local.LocalParameters.attrs`), the xfskde version and the input's
name; they are strings, integers and floats only, so netCDF and Zarr store them as they are.

The accessor is thin: each method delegates to a plain function of :mod:`xfskde`, keeps no state
and its constructor never raises (a method used on the wrong kind of array says so). On Dask-backed
fields every method is lazy and works block by block (``xarray.apply_ufunc`` with
``dask="parallelized"``); nothing is loaded as a whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import xarray as xr

from ._version import __version__
from .api import local_fskde
from .canonical import canonicalize
from .density import distance, evaluate, rotate
from .lazy import local_fskde_dask
from .local import LocalParameters, local_fskde_numpy, sample_offset

__all__ = [
    "COLOR_DIMS",
    "FskdeAccessor",
    "dominant_orientation",
    "image_dims",
    "local_fskde_dataarray",
]

#: Names recognised as a colour / spectral axis (compared case-insensitively).
COLOR_DIMS = ("c", "band", "bands", "channel", "channels", "rgb", "color", "colour")

#: Pixels per slab when densities are sampled to find their maxima (bounds the temporaries).
_SLAB_PIXELS = 4096


def image_dims(image: xr.DataArray) -> tuple[str, str, str | None]:
    """Return ``(y_dim, x_dim, colour_dim or None)`` of an image DataArray.

    The spatial dims are ``y`` and ``x`` when both are present, else the last two (the first two
    when a colour dim comes last); a colour dim is one of :data:`COLOR_DIMS` at either end.

    Raises
    ------
    ValueError
        When the layout is not (y, x) or (y, x) with one colour dim at either end, or when the
        array is already a coefficient field, with the call that would fix it.
    """
    dims = tuple(map(str, image.dims))
    if "k" in dims:
        raise ValueError(
            f"this DataArray (dims {dims}) has a 'k' dim: it is already an FS-KDE coefficient "
            "field; use .fskde.density/.canonicalize/.distance on it, or pass the image instead"
        )
    colour = [d for d in dims if d.lower() in COLOR_DIMS]
    if image.ndim == 2:
        y, x = ("y", "x") if {"y", "x"} <= set(dims) else dims
        return y, x, None
    if image.ndim == 3 and len(colour) == 1:
        c = colour[0]
        spatial = [d for d in dims if d != c]
        y, x = ("y", "x") if {"y", "x"} <= set(spatial) else spatial
        if dims.index(c) == 1:
            raise ValueError(
                f"the colour dim {c!r} sits between the spatial dims {spatial}; call "
                f".transpose({y!r}, {x!r}, {c!r}) first"
            )
        return y, x, c
    raise ValueError(
        f"cannot tell the spatial dims of an image with dims {dims}: expected (y, x), or (y, x) "
        f"with a colour dim named one of {COLOR_DIMS} at either end. Select a 2-D or 3-D image "
        f"(e.g. .isel({dims[0]}=0)), name a colour dim (e.g. .rename({{{dims[0]!r}: 'band'}})) "
        f"and put it at either end (e.g. .transpose(..., 'y', 'x'))"
    )


def _attrs(params: LocalParameters, image: xr.DataArray, y: str, x: str) -> dict[str, Any]:
    attrs = dict(params.attrs())
    attrs["xfskde_version"] = __version__
    attrs["source"] = str(image.name) if image.name is not None else "image"
    attrs["source_dims"] = f"{y} {x}"
    attrs["long_name"] = "local FS-KDE coefficients of gradient angles"
    return attrs


def _sampled_coords(image: xr.DataArray, y: str, x: str, stride: int) -> dict[str, Any]:
    """The image's coords at the sampled pixels, on dims renamed to ``y`` and ``x``.

    Coords that involve any other dim (the colour dim's labels) are not carried: the field has no
    such dim. Spatial dims without an index get the pixel indices of the samples.
    """
    o = sample_offset(stride)
    sampled = image.isel({y: slice(o, None, stride), x: slice(o, None, stride)})
    coords: dict[str, Any] = {}
    for name, coord in sampled.coords.items():
        if set(coord.dims) <= {y, x}:
            coord = coord.transpose(*[d for d in (y, x) if d in coord.dims])
            dims = tuple({y: "y", x: "x"}[d] for d in coord.dims)
            renamed = xr.Variable(dims, coord.variable.data, coord.attrs)
            coords["y" if name == y else "x" if name == x else str(name)] = renamed
    coords.setdefault("y", ("y", np.arange(o, image.sizes[y], stride)))
    coords.setdefault("x", ("x", np.arange(o, image.sizes[x], stride)))
    return coords


def local_fskde_dataarray(image: xr.DataArray, params: LocalParameters) -> xr.DataArray:
    """Local FS-KDE of an image DataArray → a ``(y, x, k)`` DataArray named ``"fskde"``.

    NumPy-backed images give an eager result, Dask-backed ones a lazy result; both come from the
    same block core (:func:`xfskde.local.local_fskde_block`), through
    :func:`xfskde.local.local_fskde_numpy` or :func:`xfskde.lazy.local_fskde_dask` (section 2.3).

    Parameters
    ----------
    image : xarray.DataArray
        ``(y, x)``, or with a colour dim (see :func:`image_dims`).
    params : LocalParameters

    Returns
    -------
    xarray.DataArray
        Dims ``(y, x, k)``; coords and attrs as described in the module docstring.
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
        values,
        dims=("y", "x", "k"),
        coords=coords,
        name="fskde",
        attrs=_attrs(params, image, y, x),
    )


def _whole_k(array: xr.DataArray) -> xr.DataArray:
    """One Dask chunk along k (the functions below need every coefficient of a pixel)."""
    return array.chunk({"k": -1}) if array.chunks is not None else array


def _apply_k(
    func: Callable[..., np.ndarray],
    *arrays: xr.DataArray,
    out_dim: str | None = "k",
    out_size: int = 0,
    name: str | None = None,
    long_name: str | None = None,
) -> xr.DataArray:
    """Apply a NumPy function of ``(..., ℓ)`` arrays per pixel, blockwise on Dask.

    ``out_dim`` is the output's core dim: ``"k"`` (same length), a new dim of ``out_size`` or
    None (k reduced). Dims, coords and the first array's attrs are kept; the output dtype is the
    function's own (found on one pixel), so lazy and computed dtypes agree.
    """
    arrays = tuple(_whole_k(a) for a in arrays)
    probe = func(*(np.zeros((1,) * (a.ndim - 1) + (a.sizes["k"],), a.dtype) for a in arrays))
    core = [] if out_dim is None else [out_dim]
    new_dim = out_dim not in (None, "k")
    out = xr.apply_ufunc(
        func,
        *arrays,
        input_core_dims=[["k"]] * len(arrays),
        output_core_dims=[core],
        exclude_dims={"k"} if (new_dim or len(arrays) > 1) else set(),
        join="exact",
        dask="parallelized",
        keep_attrs=True,
        dask_gufunc_kwargs={
            "meta": np.empty((0,) * (arrays[0].ndim - 1 + len(core)), probe.dtype),
            **({"output_sizes": {out_dim: out_size}} if new_dim else {}),
        },
    )
    if name is not None:
        out.name = name
    if long_name is not None:
        out.attrs["long_name"] = long_name
    return out


def _density_argmax(F: np.ndarray, n_angles: int) -> np.ndarray:
    """Angle of the maximum of f (eq. 1) per pixel: grid argmax + parabolic refinement."""
    F = np.asarray(F)
    flat = F.reshape(-1, F.shape[-1])
    theta = np.linspace(-np.pi, np.pi, n_angles, endpoint=False)
    step = 2 * np.pi / n_angles
    out = np.empty(flat.shape[0], dtype=np.float64)
    for a in range(0, flat.shape[0], _SLAB_PIXELS):
        f = evaluate(flat[a : a + _SLAB_PIXELS], theta)
        j = np.argmax(f, axis=-1)
        rows = np.arange(f.shape[0])
        f0, fm, fp = f[rows, j], f[rows, j - 1], f[rows, (j + 1) % n_angles]
        curvature = fm - 2 * f0 + fp
        shift = np.where(curvature < 0, 0.5 * (fm - fp) / np.where(curvature < 0, curvature, 1), 0)
        out[a : a + f.shape[0]] = theta[j] + step * shift
    out = np.mod(out + np.pi, 2 * np.pi) - np.pi
    flat_density = ~(np.abs(flat[:, 1:]) > 0).any(axis=-1)
    out[flat_density] = np.nan
    return out.reshape(F.shape[:-1])


def _mean_direction(F: np.ndarray) -> np.ndarray:
    """-arg F_1 per pixel, NaN where F_1 = 0."""
    F1 = np.asarray(F)[..., 1]
    return np.where(np.abs(F1) > 0, -np.angle(F1), np.nan).astype(np.float64)


def dominant_orientation(
    field: xr.DataArray, *, method: Literal["mean", "argmax"] = "mean", n_angles: int = 360
) -> xr.DataArray:
    """Dominant gradient angle per pixel of a coefficient field → dims ``(y, x)``, radians.

    Parameters
    ----------
    field : xarray.DataArray
        A ``(y, x, k)`` coefficient field with ℓ >= 2.
    method : {"mean", "argmax"}
        ``"mean"`` (default): :math:`-\\arg F_1`, the |g|-weighted circular mean of the gradient
        angles (F_1 is proportional to :math:`\\sum_n w_n e^{-i\\theta_n}`, eq. 1), exactly the
        angle by which F_1 canonicalization turns the FS-KDE back (eq. 8). One coefficient per
        pixel, no sampling. ``"argmax"``: the angle of the density's maximum, max over θ of
        :math:`f(x, \\theta)`, found on ``n_angles`` equally spaced angles and refined by a
        parabola through the best sample and its neighbours. The two agree for a unimodal,
        symmetric density; they differ when the density is skewed or multimodal (for two equal
        opposite modes, as across a thin line, F_1 vanishes and "mean" gives NaN).
    n_angles : int
        Angles sampled by ``"argmax"`` (default 360: one degree before the refinement).

    Returns
    -------
    xarray.DataArray
        Angles in (-π, π], dims ``(y, x)``, named ``"orientation"``; NaN where the density is
        flat (F_1 = 0 for "mean"; every F_k, k >= 1, zero for "argmax").
    """
    if field.sizes.get("k", 0) < 2:
        raise ValueError("the field needs at least 2 coefficients (k = 0, 1) for an orientation")
    if method == "mean":
        func: Callable[[np.ndarray], np.ndarray] = _mean_direction
    elif method == "argmax":
        if int(n_angles) != n_angles or n_angles < 3:
            raise ValueError(f"n_angles must be an integer >= 3, got {n_angles!r}")
        n = int(n_angles)

        def func(F: np.ndarray) -> np.ndarray:
            return _density_argmax(F, n)
    else:
        raise ValueError(f"method must be 'mean' or 'argmax', got {method!r}")
    out = _apply_k(
        func, field, out_dim=None, name="orientation", long_name="dominant gradient angle"
    )
    out.attrs["units"] = "rad"
    out.attrs["orientation_method"] = method
    return out


@xr.register_dataarray_accessor("fskde")
class FskdeAccessor:
    """``DataArray.fskde``: FS-KDE operations on images and on coefficient fields.

    On an image: :meth:`coefficients`, :meth:`segment`. On a coefficient field (dims ``y, x, k``):
    :meth:`density`, :meth:`canonicalize`, :meth:`rotate`, :meth:`distance`,
    :meth:`dominant_orientation`, :meth:`to_zarr`. Each keeps the field's dims, coords and attrs
    and stays lazy on Dask-backed arrays.
    """

    def __init__(self, obj: xr.DataArray):
        self._obj = obj

    def _field(self) -> xr.DataArray:
        if "k" not in self._obj.dims:
            raise ValueError(
                f"this DataArray (dims {tuple(self._obj.dims)}) has no 'k' dim: it is not an "
                "FS-KDE coefficient field; compute one with .fskde.coefficients(order=...) first"
            )
        return self._obj

    def coefficients(self, **params: Any) -> xr.DataArray:
        """Local FS-KDE of this image (section 2.3); parameters as :func:`xfskde.local_fskde`.

        The colour dim is found by name (:func:`image_dims`), so ``channel_axis`` is not taken.
        """
        if "channel_axis" in params:
            raise ValueError(
                "channel_axis is not used for DataArrays: the colour dim is found by name "
                f"(one of {COLOR_DIMS}); rename it instead, e.g. .rename({{'dim_2': 'band'}})"
            )
        return local_fskde(self._obj, **params)

    def density(self, theta: Any) -> xr.DataArray:
        """The density :math:`f(x, \\theta)` (eq. 1) at angles ``theta`` → dims (y, x, theta).

        ``theta`` (radians, any 1-D sequence or a scalar) becomes the float ``theta`` coord.
        """
        field = self._field()
        theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
        if theta.ndim != 1:
            raise ValueError(f"theta must be a scalar or 1-D, got shape {theta.shape}")
        out = _apply_k(
            lambda F: evaluate(F, theta),
            field,
            out_dim="theta",
            out_size=theta.size,
            name="density",
            long_name="FS-KDE density of gradient angles",
        )
        return out.assign_coords(theta=("theta", theta, {"units": "rad"}))

    def canonicalize(self, ell: int = 1) -> xr.DataArray:
        """F_ℓ-canonical form of every pixel's FS-KDE (eq. 8; section 4.3)."""
        field = self._field()
        out = _apply_k(lambda F: canonicalize(F, ell), field)
        out.attrs["canonical"] = f"F{ell}"
        return out

    def rotate(self, phi: float) -> xr.DataArray:
        """Rotate every FS-KDE by ``phi`` radians (eq. 2): :math:`F_k e^{-ik\\phi}`."""
        field = self._field()
        phi = float(phi)
        return _apply_k(lambda F: rotate(F, phi), field)

    def distance(self, other: xr.DataArray | np.ndarray) -> xr.DataArray:
        """Parseval distance (section 2.2) per pixel to ``other`` → dims (y, x).

        ``other`` is one FS-KDE (a 1-D array or DataArray along k, e.g. ``F.isel(y=3, x=2)``) or
        a field on the same grid (its y/x coords must equal this field's). Different lengths ℓ
        are allowed, as in :func:`xfskde.distance`.
        """
        field = self._field()
        if not isinstance(other, xr.DataArray):
            other = np.asarray(other)
            if other.ndim != 1:
                raise ValueError(
                    f"other must be one FS-KDE (1-D along k) or a DataArray field, got shape "
                    f"{other.shape}"
                )
            other = xr.DataArray(other, dims=("k",))
        elif "k" not in other.dims:
            raise ValueError(f"other has no 'k' dim (dims {tuple(other.dims)})")
        if other.ndim == 1:
            other = other.reset_coords(drop=True)  # a pixel picked with isel keeps scalar y, x
        return _apply_k(
            distance, field, other, out_dim=None, name="distance", long_name="L2 distance"
        )

    def dominant_orientation(
        self, method: Literal["mean", "argmax"] = "mean", n_angles: int = 360
    ) -> xr.DataArray:
        """Dominant gradient angle per pixel → dims (y, x); see :func:`dominant_orientation`."""
        return dominant_orientation(self._field(), method=method, n_angles=n_angles)

    def segment(self, n_textures: int, **kwargs: Any) -> xr.DataArray:
        """Texture segmentation (ORTSEG, section 5.3) of this image; see :func:`xfskde.segment`."""
        from .segmentation import segment

        return segment(self._obj, n_textures, **kwargs)

    def to_zarr(self, store: Any, *, resume: bool = False, **kwargs: Any) -> Any:
        """Write this field to a Zarr v3 store; see :func:`xfskde.write_coefficients`."""
        from .io import write_coefficients

        return write_coefficients(self._field(), store, resume=resume, **kwargs)
