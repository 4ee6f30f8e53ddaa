"""The public entry point :func:`local_fskde`: NumPy, Dask or xarray images, one block core.

Each face is thin: the parameters are checked once (:class:`~xfskde.local.LocalParameters`), then
NumPy arrays go to the tiled in-memory driver (:func:`xfskde.local.local_fskde_numpy`), Dask
arrays to the one block engine (:func:`xfskde.lazy.local_fskde_dask`), and DataArrays to either
of those, labelled with dims, coords and attrs by :mod:`xfskde._labels`.

**Nodata.** Every face takes ``nodata=``: the value that marks missing pixels (``0`` on
Sentinel-2 L1C/L2A uint16 tiles, say). Pixels equal to it become NaN — on the image's own float
dtype (:func:`xfskde.gradients.result_float_dtype`), block by block for Dask images, so no
full-size copy is ever held — and NaN pixels are then omitted exactly as ``nan_policy="omit"``
omits them: every gradient whose stencil touches one has zero weight. The default,
``"auto"``, reads the value from a DataArray's metadata (:func:`xfskde._labels.image_nodata`:
rioxarray's ``rio.nodata`` places, CF's ``_FillValue``/``missing_value``); NumPy and Dask arrays
have no metadata, so for them ``"auto"`` masks nothing. Bands with values of their own (a VRT
stack's ``nodatavals``) have each band's samples equal to its own value set to NaN.

**NaN pixels and nodata.** Without a ``nan_policy``, NaN pixels are refused, and omitted where a
nodata value is found (a number's pixels are NaN by then, and a float image whose nodata is NaN
holds them as NaN). A ``nan_policy="raise"`` the caller gives refuses the image's NaN pixels
unless its nodata declares NaN missing (GDAL's and rioxarray's nodata, CF's attrs): the NaN
``_FillValue`` that xarray writes for every float variable to netCDF and Zarr does not
(:func:`_resolve_nodata`); the pixels of a numeric nodata are omitted all the same.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import math
import warnings
from collections.abc import Callable
from contextvars import ContextVar
from numbers import Real
from typing import Any, Literal, TypeVar

import dask.array as da
import numpy as np
import xarray as xr

from ._grid import sample_count, sample_offset
from ._labels import (
    COLOR_DIMS,
    NODATA_ATTRS,
    NodataValue,
    band_missing,
    band_nodata_text,
    band_scales,
    geotransform,
    grid_shear,
    ground_pixel_size,
    image_dims,
    image_layout,
    image_nodata,
    label_result,
    nodata_record,
    nodata_value,
    pixel_steps,
    plane_dims,
    recorded_nodata,
    refuse_dataset,
    value_scale,
)
from ._pictures import is_picture, pixels
from ._validation import check_within_image, physical_memory
from .exceptions import ParameterError, PixelAspectWarning, find_stack_level
from .gradients import Boundary, Operator, check_finite, result_float_dtype
from .kernel import Approximation, Cos2KKernel
from .lazy import local_fskde_dask
from .local import LocalParameters, local_fskde_numpy, missing_pixels
from .masks import _mask_attrs, _refuse_no_foreground, resolve_mask
from .windows import Window

__all__ = [
    "Nodata",
    "check_nodata",
    "local_fskde",
    "local_fskde_dataarray",
    "mask_nodata",
    "present_samples",
]

#: What ``nodata=`` takes: "auto" (read the metadata), a number, or None (every pixel is data).
Nodata = Literal["auto"] | float | int | None


def check_nodata(nodata: Any) -> None:
    """Refuse a ``nodata=`` that is not one of the values :data:`Nodata` names.

    Parameters
    ----------
    nodata : Any
        What the caller gave as ``nodata``: ``"auto"``, a real number (NaN included) or None
        pass; anything else (a boolean, another string, an array) is refused.

    Raises
    ------
    ParameterError
        Naming ``nodata`` and the values it takes.
    """
    if nodata is None or (isinstance(nodata, str) and nodata == "auto"):
        return
    if isinstance(nodata, bool) or not isinstance(nodata, Real | np.number):
        number = ""
        if isinstance(nodata, str):  # the command line's --nodata nan, written as Python
            with contextlib.suppress(ValueError):
                value = float(nodata)
                written = "np.nan" if math.isnan(value) else repr(value)
                number = f": give the number, nodata={written}"
        raise ParameterError(
            f"nodata must be 'auto' (read the image's metadata), a number (e.g. 0) or None (use "
            f"every pixel), got {nodata!r}{number}"
        )


def mask_nodata(data: Any, nodata: NodataValue, axis: int = -1) -> Any:
    """The image with its nodata pixels set to NaN, on its work float dtype; lazy for Dask.

    ``data`` is a NumPy or Dask array of any real dtype. Pixels equal to ``nodata`` become NaN
    in :func:`~xfskde.gradients.result_float_dtype` (float32 for uint16, float64 for int32, ...:
    the dtype the core would compute in anyway, so the coefficients' dtype does not change). A
    Dask array is converted block by block, in the tasks; a NumPy array is copied once. ``None``
    and NaN return ``data`` as it is (a float image's NaN pixels are already NaN). Values per
    band (a tuple, :func:`xfskde._labels.image_nodata`), the bands along ``axis``: each
    band's samples equal to its own value become NaN, as a single value's do in every band
    (:func:`xfskde._labels.band_missing`).

    Parameters
    ----------
    data : numpy.ndarray or dask.array.Array
        The image's pixels, any real dtype.
    nodata : number, tuple of numbers or None
        The value that marks missing pixels, or one per band along ``axis``; None or NaN
        masks nothing.
    axis : int, optional
        The band axis of per-band values (default -1).

    Returns
    -------
    numpy.ndarray or dask.array.Array
        Of the work float dtype, NaN at the missing pixels; ``data`` itself for None or NaN.
    """
    if nodata is None or (isinstance(nodata, float) and math.isnan(nodata)):
        return data
    ftype = result_float_dtype(data.dtype)
    if isinstance(nodata, tuple):
        missing = band_missing(data, nodata, axis)
    else:
        missing = data == nodata  # in the image's own dtype: exact for every integer
    if isinstance(data, da.Array):
        return da.where(missing, ftype.type(np.nan), data.astype(ftype))
    return np.where(missing, ftype.type(np.nan), np.asarray(data, dtype=ftype))


def present_samples(image: xr.DataArray, field: xr.DataArray) -> xr.DataArray:
    """Whether the pixel at each sample of ``field`` holds data: a boolean DataArray on the
    field's grid, ``(y, x)`` — ``(t, z, y, x)`` for the field of a stack —, lazy for a Dask
    image.

    ``field`` is a result of :func:`local_fskde` on ``image``, a DataArray read as
    :func:`local_fskde` reads it: its spatial dims ``y, x`` or named otherwise (``lat, lon``:
    :func:`xfskde._labels.image_dims`), maybe a colour dim, or a stack of such images with
    ``y`` and ``x`` named (:func:`xfskde._labels.plane_dims`), each plane's samples its own.
    A sample's pixel is missing where no channel is finite, the nodata value the field
    recorded (``input_nodata``) counting as NaN (:func:`xfskde.local.missing_pixels`). The
    field is NaN there already (so are the maps drawn from it); this reads only the image's
    pixels at the samples, not the field, e.g. to count the cells on data or to mask another
    result on the same grid. The result has the field's coords of its dims.

    Parameters
    ----------
    image : xarray.DataArray
        The image the field was computed from.
    field : xarray.DataArray
        Its field: :func:`local_fskde`'s result, whose ``stride`` and ``input_nodata`` attrs
        are read.

    Returns
    -------
    xarray.DataArray of bool
        True where the sample's pixel holds data, on the field's dims less ``k``.
    """
    nodata = recorded_nodata(field.attrs.get("input_nodata", "none"))
    stride = int(field.attrs.get("stride", 1))
    offset = sample_offset(stride)
    stack = plane_dims(image)
    if stack:  # y and x named; the colour dim, if any, is the one left
        y, x = "y", "x"
        colour = next((str(d) for d in image.dims if d not in (y, x, *stack)), None)
    else:
        y, x, colour = image_dims(image)
    pixels = image.transpose(*stack, y, x, *([colour] if colour else [])).data
    kept = (slice(None),) * len(stack)
    picked = pixels[(*kept, slice(offset, None, stride), slice(offset, None, stride))]
    picked = picked[(*kept, slice(field.sizes["y"]), slice(field.sizes["x"]))]
    picked = mask_nodata(picked, nodata)
    present = ~missing_pixels(picked if colour else picked[..., None], -1)
    dims = (*stack, "y", "x")
    coords = {name: c for name, c in field.coords.items() if set(c.dims) <= set(dims)}
    return xr.DataArray(present, dims=dims, coords=coords)


def _nodata_attrs(nodata: NodataValue, source: str) -> dict[str, Any]:
    """The result's record of the nodata handling (no None, no NaN: Zarr and netCDF store it;
    a list, one per band, for bands of values of their own)."""
    value = nodata_record(nodata)
    if nodata is None:
        return {"input_nodata": value, "input_nodata_source": source}
    what = (
        f"each band's samples equal to its own value {band_nodata_text(nodata)}"
        if isinstance(nodata, tuple)
        else f"pixels equal to {value}"
    )
    return {
        "input_nodata": value,
        "input_nodata_source": source,
        "nodata_handling": f"{what} were set to NaN and omitted "
        "(gradients touching them have zero weight)",
    }


def _value_attrs(image: xr.DataArray) -> dict[str, Any]:
    """The scale and unit of the image's decoded values (:func:`xfskde._labels.value_scale`:
    a GeoTIFF's GDAL scale, a CF ``scale_factor``), the scale where it is not 1 and the unit
    where the image names one: the field's coefficients are of the stored values, and
    :func:`xfskde.orientation.energy` reads the decoded ones from these. Bands of scales of
    their own (:func:`xfskde._labels.band_scales`) are decoded before their gradients, each
    by its own: the field is then of the decoded values (``input_band_scales`` records
    them; no ``input_scale_factor``)."""
    scale, units = value_scale(image)
    scales = band_scales(image)
    decoded = {"input_band_scales": list(scales)} if scales is not None else {}
    return {
        **({"input_scale_factor": scale} if scale != 1.0 else {}),
        **decoded,
        **({"input_units": units} if units else {}),
    }


def _no_value_attrs(params: LocalParameters, foreground: Any) -> dict[str, str]:
    """Which samples are NaN, when some can be: a record in the result (and its stores and
    files) that they mean "no value", not "no gradient" (0); a store written before they were
    NaN lacks it, so it cannot be resumed into a mix of both."""
    reasons = []
    if params.nan_policy == "omit":
        reasons.append("whose own pixel is missing (NaN or nodata)")
    if foreground is not None:
        reasons.append("outside the mask (not computed)")
    return {"no_value": f"NaN at the samples {' or '.join(reasons)}"} if reasons else {}


def _resolve_nodata(
    image: Any, nodata: Any, params: LocalParameters, chosen: bool = False
) -> tuple[NodataValue, str, LocalParameters]:
    """The nodata value to mask, where it came from, and the parameters (NaNs omitted if set).

    ``chosen``: whether the caller gave ``params.nan_policy`` (else it is the default,
    ``"raise"``). Where a nodata value is found its pixels are NaN once masked, and are
    omitted, never refused: ``"raise"`` becomes ``"omit"``. But a ``"raise"`` the caller chose
    is not overridden by the ``_FillValue`` NaN of a float image's *encoding* alone
    (:func:`_fill_of_every_float`: xarray writes it for every float variable to netCDF and
    Zarr, and reads it back so): that marks no pixel as missing, so the image's NaN pixels are
    refused as asked, and no value is recorded as masked. Under a chosen ``"raise"`` the
    pixels of a numeric nodata are omitted, and the image's own NaN pixels refused by the
    caller before they are masked (:func:`_refusing_nan`).
    """
    check_nodata(nodata)
    if isinstance(nodata, str):  # "auto"
        is_xarray = type(image).__module__.startswith("xarray")
        value, source = image_nodata(image) if is_xarray else (None, "none")
        if chosen and params.nan_policy == "raise" and is_xarray and _fill_of_every_float(image):
            return None, "none (encoding['_FillValue'] NaN marks no pixel missing)", params
    elif nodata is None:
        value, source = None, "nodata=None"
    else:
        value, source = (
            nodata_value(nodata, image.dtype, "nodata", must_match=True),
            "nodata argument",
        )
    if value is not None and params.nan_policy != "omit":
        params = copy.copy(params)
        params.nan_policy = "omit"  # nodata pixels are NaN now: omitted, never refused
    return value, source, params


def _fill_of_every_float(image: xr.DataArray) -> bool:
    """Whether a float image's nodata, as :func:`xfskde._labels.image_nodata` reads it, is
    only the NaN ``_FillValue`` of its encoding — the fill xarray writes for every float
    variable to netCDF and Zarr — with no nodata in its attrs (GDAL's, rioxarray's, CF's
    ``missing_value``: a value the data's maker chose) nor a numeric fill its NaN pixels were
    decoded from (``-9999``)."""
    fill = image.encoding.get("_FillValue")
    if image.dtype.kind != "f" or fill is None:
        return False
    declared = any(image.attrs.get(k) is not None for k in (*NODATA_ATTRS, "nodatavals"))
    try:
        return not declared and bool(np.isnan(np.asarray(fill, dtype=np.float64)).all())
    except (TypeError, ValueError):
        return False


def _is_number(value: NodataValue) -> bool:
    """Whether a nodata value is a number (not None, not NaN; of values per band, any one):
    its pixels, not NaN ones, are what it marks missing."""
    if isinstance(value, tuple):
        return any(_is_number(v) for v in value)
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _finite_block(block: np.ndarray) -> np.ndarray:
    """A block of an image, its NaN or infinite pixels refused (nan_policy='raise')."""
    check_finite(block, "raise")
    return block


def _refusing_nan(data: Any) -> Any:
    """``data`` (NumPy or Dask), its NaN or infinite pixels refused as ``nan_policy="raise"``
    refuses them — before its nodata pixels are set to NaN, under a ``"raise"`` the caller
    chose: at once for NumPy, in each block's task for Dask (as the engine checks them)."""
    if data.dtype.kind != "f":
        return data
    if isinstance(data, da.Array):
        return data.map_blocks(_finite_block, dtype=data.dtype, meta=data._meta)
    check_finite(np.asarray(data), "raise")
    return data


def _field(image: Any, params: LocalParameters, channel_axis: int | None, mask: Any) -> Any:
    """The block core on a NumPy image or the engine on a Dask one; with a foreground ``mask``
    (a labelled (y, x) DataArray) the samples outside it are NaN and blocks and tiles of the
    core without foreground are not computed."""
    foreground = None if mask is None else np.asarray(mask.values, bool)
    if isinstance(image, da.Array):
        return local_fskde_dask(image, params, channel_axis=channel_axis, mask=foreground)
    return local_fskde_numpy(image, params, channel_axis=channel_axis, mask=foreground)


#: Pixels whose y and x steps differ by more than this fraction are not square.
ASPECT_TOLERANCE = 0.01


def _grid_rotation(image: xr.DataArray) -> float | None:
    """The angle in degrees from a georeferenced image's CRS x axis (east) to its pixel
    columns' axis, from a rotated GDAL GeoTransform ``x0 a b y0 d e`` (columns along (a, d));
    None when the grid is not rotated or has no GeoTransform."""
    name = image.encoding.get("grid_mapping") or image.attrs.get("grid_mapping") or "spatial_ref"
    ref = image.coords.get(name)
    text = ref.attrs.get("GeoTransform") if ref is not None else None
    try:
        _, a, b, _, d, _ = (float(v) for v in str(text).split())
    except ValueError:
        return None
    return None if b == 0 and d == 0 else math.degrees(math.atan2(d, a))


#: What non-square pixels make of each consumer's results, and where that matters, as its
#: warning says them.
_AFFECTED = {
    "field": (
        "gradient angles are measured on the pixel grid, so orientations and densities are",
        "where the physical angles matter",
    ),
    "segmentation": (
        "segmentation's window is round in pixels and its gradient angles are measured on the "
        "pixel grid, so its features and labels are",
        "where the textures' physical scales and angles matter",
    ),
}


#: A 4th channel of integers that holds 0 or the dtype's largest value at this share of its
#: pixels or more, the largest at :data:`_OPAQUE_SHARE` or more, is taken for an opacity: a
#: cut-out's edges are antialiased (partly opaque); a sparse channel of data that is 0 almost
#: everywhere is not at its largest value at a tenth of its pixels.
_ALPHA_SHARE, _OPAQUE_SHARE = 0.99, 0.1


def _warn_if_alpha(image: np.ndarray) -> None:
    """Warn of a NumPy RGBA image (``skimage.io.imread`` of a PNG): four channels of integers
    whose last holds only 0 and the dtype's largest value, or those at :data:`_ALPHA_SHARE`
    of its pixels or more and the largest at :data:`_OPAQUE_SHARE` or more, as an opacity
    does (its edges antialiased: a few pixels between), which an array
    does not say is one and which is segmented as a fourth colour (its transparent pixels a
    texture of their own: Rand 0.85 -> 0.73). Pictures and files say which channel is alpha,
    and their transparent pixels are missing."""
    if image.ndim != 3 or image.shape[2] != 4 or image.dtype.kind not in "ui" or not image.size:
        return
    alpha = image[..., 3]
    top = np.iinfo(image.dtype).max
    between = np.count_nonzero((alpha != 0) & (alpha != top))
    few = between <= (1 - _ALPHA_SHARE) * alpha.size
    if not between or (few and np.count_nonzero(alpha == top) >= _OPAQUE_SHARE * alpha.size):
        held = (
            f"only 0 and {top}"
            if not between
            else f"0 or {top} at {_ALPHA_SHARE:.0%} of its pixels or more"
        )
        warnings.warn(
            f"the image's 4th channel holds {held}, as an opacity (alpha) does, and is "
            "segmented as a colour: for an RGBA array pass image[..., :3] and "
            "mask=image[..., 3] > 0 (or open its file with xfskde.open_image, which reads its "
            "alpha)",
            UserWarning,
            stacklevel=find_stack_level(),
        )


def _warn_if_mask_unread(image: xr.DataArray) -> None:
    """Warn of a DataArray that ``rioxarray.open_rasterio`` read, without ``masked=True``, from
    a file with an alpha band or a transparency mask (GDAL's internal or ``.msk`` mask): its
    integers hold the pixels outside the scene's footprint as data, and the alpha band as a
    band (Rand 0.988 / 0.985 from the files, 0.73 / 0.78 from such arrays, the outside a
    texture of its own). Arrays of :func:`xfskde.open_image` (``attrs["source"]``) hold those
    pixels as missing; a file that cannot be opened here says nothing."""
    source = image.encoding.get("source")
    if not source or "source" in image.attrs or image.dtype.kind not in "iub":
        return
    try:
        import rasterio
        from rasterio.enums import ColorInterp, MaskFlags

        with rasterio.open(source) as ds:
            interp, flags, count = ds.colorinterp, ds.mask_flag_enums, ds.count
    except Exception:  # not a raster rasterio opens (or no rasterio): nothing to say
        return
    alpha = [i + 1 for i, c in enumerate(interp) if c == ColorInterp.alpha]
    masked = any(MaskFlags.per_dataset in f and MaskFlags.alpha not in f for f in flags)
    if not alpha and not masked:
        return
    what = f"an alpha band (band {alpha[0]} of {count})" if alpha else "a transparency mask"
    warnings.warn(
        f"the image was read from {source}, which has {what} that rioxarray.open_rasterio "
        "reads as data without masked=True: the pixels outside the scene are segmented as a "
        "texture; open it with xfskde.open_image(path), or rioxarray.open_rasterio(path, "
        "masked=True)",
        UserWarning,
        stacklevel=find_stack_level(),
    )


def _warn_if_not_square(image: xr.DataArray, consumer: str = "field") -> None:
    """A :class:`~xfskde.exceptions.PixelAspectWarning` when the image's coordinates say its
    pixels are not square: the angles are then those of the pixel grid (eq. 1's θ =
    arg(Ix + i Iy) with Ix, Iy per pixel), not those of the image's units. A georeferenced
    image's pixels are measured on the ground (:func:`~xfskde._labels.ground_pixel_size`):
    a geographic grid of equal degree steps is not square away from the equator (0.0001° at
    45° N: 11.1 × 7.9 m), nor is a UTM grid of 10 × 20 m pixels. A rotated GeoTransform, and a
    sheared one (rows not perpendicular to columns: :func:`~xfskde._labels.grid_shear`), are
    said too: the pixel grid's angles are then not those on the ground. ``consumer`` (a key
    of :data:`_AFFECTED`) names what is affected: the field's orientations and densities, or
    segmentation's window, features and labels."""
    affected, matters = _AFFECTED[consumer]
    rotation = _grid_rotation(image)
    if rotation is not None and abs(rotation) > 0.1:
        warnings.warn(
            f"the image's pixel grid is rotated {rotation:.3g}° from its CRS's x axis (a "
            "rotated GeoTransform): gradient angles are measured on the pixel grid (x along "
            "its columns), not from east; warp it north-up first (gdalwarp, or rioxarray's "
            "rio.reproject) where the physical angles matter",
            PixelAspectWarning,
            stacklevel=find_stack_level(),
        )
    geo = geotransform(image)
    shear = 0.0 if geo is None else grid_shear(geo)
    if shear > 0.1:
        warnings.warn(
            f"the image's pixel grid is sheared: its rows' axis is {shear:.3g}° off "
            "perpendicular to its columns' (a sheared GeoTransform), so gradient angles, "
            "measured on the pixel grid, are not angles on the ground; warp it north-up first "
            "(gdalwarp, or rioxarray's rio.reproject) where the physical angles matter",
            PixelAspectWarning,
            stacklevel=find_stack_level(),
        )
    ground = ground_pixel_size(image)
    y, x, _ = image_dims(image)
    steps = ground if ground is not None else pixel_steps(image, (y, x))
    if steps is None or abs(steps[0] / steps[1] - 1) <= ASPECT_TOLERANCE:
        return
    unit = "m on the ground" if ground is not None else (
        image.coords[x].attrs.get("units") or "coordinate units")  # fmt: skip
    warnings.warn(
        f"the image's pixels are {steps[0]:.4g} x {steps[1]:.4g} {unit} (y x), not square: "
        f"{affected} "
        + (
            "not those on the ground; reproject it to square pixels first (rioxarray's "
            "image.rio.reproject with one resolution, to a projected CRS such as its UTM zone "
            "for a geographic grid)"
            if ground is not None
            else "not those of the image's units; resample it to square pixels first (e.g. "
            "image.coarsen or image.interp)"
        )
        + f" {matters}",
        PixelAspectWarning,
        stacklevel=find_stack_level(),
    )


_Entry = TypeVar("_Entry", bound=Callable[..., Any])

#: Whether an entry point that checks its image (:func:`_checks_the_image`) is running in this
#: context: the entry points it calls (segment's fit and labels) then say nothing more.
_IMAGE_CHECKED: ContextVar[bool] = ContextVar("xfskde_image_checked", default=False)


def _checks_the_image(consumer: str) -> Callable[[_Entry], _Entry]:
    """A decorator for an entry point that warns of what its ``image`` argument holds and
    the work would misread, once per call, before the work (not once per block), and not
    again in the decorated entry points the call makes (:func:`~xfskde.segment` fits with
    :func:`~xfskde.segmentation.fit_textures` and labels with
    :meth:`~xfskde.segmentation.TextureModel.predict`: one warning): a DataArray's
    non-square pixels (:func:`_warn_if_not_square`; NumPy and Dask arrays and pictures have
    no coordinates: nothing is said, as :func:`local_fskde` says nothing for them), a NumPy
    array's alpha channel (:func:`_warn_if_alpha`), the alpha band or mask of a file
    rioxarray read (:func:`_warn_if_mask_unread`)."""

    def decorate(entry: _Entry) -> _Entry:
        signature = inspect.signature(entry)

        @functools.wraps(entry)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if _IMAGE_CHECKED.get():
                return entry(*args, **kwargs)
            try:
                image = signature.bind(*args, **kwargs).arguments.get("image")
            except TypeError:  # the entry point's own error, in its words
                return entry(*args, **kwargs)
            # a stack of planes: the entry point's refusal, in its words, comes first
            if isinstance(image, xr.DataArray) and not plane_dims(image):
                _warn_if_not_square(image, consumer)
            if isinstance(image, np.ndarray):
                _warn_if_alpha(image)
            elif isinstance(image, xr.DataArray):
                _warn_if_mask_unread(image)
            token = _IMAGE_CHECKED.set(True)
            try:
                return entry(*args, **kwargs)
            finally:
                _IMAGE_CHECKED.reset(token)

        return checked  # type: ignore[return-value]

    return decorate


def local_fskde_dataarray(
    image: Any,
    params: LocalParameters,
    *,
    nodata: Nodata = "auto",
    mask: Any = None,
    chosen_nan_policy: bool = False,
) -> Any:
    """Local FS-KDE of an image DataArray → a ``(y, x, k)`` DataArray named ``"fskde"``.

    NumPy-backed images give an eager result, Dask-backed ones a lazy result; both come from the
    same block core. Coords and attrs follow :mod:`xfskde._labels`: the image's coordinates at
    the cells' centres, a GeoTransform of the result's own grid, its attrs, every parameter
    (:meth:`LocalParameters.attrs`), the nodata handling (``input_nodata``,
    ``input_nodata_source``; ``nan_policy`` is ``"omit"`` when a nodata value was masked) and
    the scale and unit of the image's values where it records them (``input_scale_factor``,
    ``input_units``).

    Parameters
    ----------
    image : xarray.DataArray
        The image, ``(y, x)`` or with a colour dim, read by dim names.
    params : LocalParameters
        The kernel, window, stride, boundary, gradient and NaN policy.
    nodata : "auto", number or None, optional
        As in :func:`local_fskde`.
    mask : Any, optional
        As in :func:`local_fskde`.
    chosen_nan_policy : bool, optional
        Whether ``params.nan_policy`` was given by the caller (a ``"raise"`` then refuses NaN
        pixels whatever the image's metadata say: :func:`_resolve_nodata`) or is the default.

    Returns
    -------
    xarray.DataArray
        The ``(y, x, k)`` field named ``"fskde"``, eager or lazy as the image.
    """
    asked = params.nan_policy
    value, source, params = _resolve_nodata(image, nodata, params, chosen_nan_policy)
    data, (_, _, colour) = image_layout(image)
    _refuse_beyond(data.shape[:2], params, isinstance(data, da.Array))
    foreground = resolve_mask(mask, image)
    _refuse_no_foreground(foreground, data.shape[:2], params.stride, mask)
    _warn_if_not_square(image)
    if chosen_nan_policy and asked == "raise" and _is_number(value):
        data = _refusing_nan(data)  # NaN pixels refused; the nodata's omitted
    data = mask_nodata(data, value)
    scales = band_scales(image)
    if scales is not None:  # each band decoded: the channel of largest |g| in one unit
        data = data * np.asarray(scales, result_float_dtype(data.dtype))
    channel_axis = None if colour is None else -1
    values = _field(data, params, channel_axis, foreground)
    k = ("k", np.arange(params.length), {"long_name": "Fourier index k >= 0"})
    attrs = {
        **params.attrs(),
        **_nodata_attrs(value, source),
        **_value_attrs(image),
        **_mask_attrs(foreground, mask),
        **_no_value_attrs(params, foreground),
        "long_name": "local FS-KDE coefficients of gradient angles",
    }
    return label_result(
        values, image, stride=params.stride, extra_dims={"k": k}, name="fskde", attrs=attrs
    )


def _refuse_beyond(shape: tuple[int, int], params: LocalParameters, lazy: bool) -> None:
    """Refuse parameters that cannot give this image's field: a stride that places no sample
    on it, a window or Gaussian derivatives (``gradient_scale``) wider than it
    (:func:`xfskde._validation.check_within_image`), or, for an
    image of ``(height, width)`` ``shape`` in memory (not ``lazy``: its field is computed
    whole), an ``order`` whose field would not fit in the machine's memory (``order=10**6`` on
    a 128² image: 244 GiB, a MemoryError deep in the core, or the process killed)."""
    check_within_image(shape, params.stride, params.window.sigma, params.window.size,
                       ("stride", "size"), params.window.kind)  # fmt: skip
    bound = max(shape)  # their halo is 4σ, and their direct convolution's time grows with σ
    if params.gradient.scale > bound:
        raise ParameterError(
            f"gradient_scale {params.gradient.scale:g} is wider than this {shape[0]} x "
            f"{shape[1]} image: its Gaussian derivatives would see all of it, and the padding "
            f"around the image grows with it; give a gradient_scale of at most {bound}"
        )
    if lazy:
        return
    memory = physical_memory()
    cells = math.prod(sample_count(n, params.stride) for n in shape)
    needed = cells * params.length * np.dtype(np.complex128).itemsize
    if memory is not None and needed > memory:
        raise ParameterError(
            f"order {params.kernel.order}: the field of this {shape[0]} x {shape[1]} image "
            f"would take {needed / 2**30:,.0f} GiB, more than this machine's "
            f"{memory / 2**30:.3g} GiB: give a lower order, a larger stride, or the image as a "
            "Dask array (open_image), whose field is computed block by block"
        )


def _fields_of_planes(
    image: xr.DataArray, params: LocalParameters, nodata: Any, mask: Any, chosen: bool = False
) -> Any:
    """The field of each plane of a stack (:func:`xfskde._labels.plane_dims`: a time series, a
    z-stack), concatenated along the stack's dims in their order, with their coordinates:
    ``(t, z, y, x, k)``. Each plane is an image of its own — its own engine graph, nodata and
    mask — so the result is what computing them one by one gives. A coord along a stack dim
    keeps it, whether the dim has an index or not: a sensor per date stays ``(t,)``, a
    ``(t, y)`` acquisition time of each row is ``(t, y)`` at the cells, as each plane's ``y``
    coords are (:func:`xfskde._labels.sampled_coords`); one along the colour dim is dropped,
    as an image's is."""
    first, *_ = plane_dims(image)
    planes = [image.isel({first: i}) for i in range(image.sizes[first])]
    fields = [
        _fields_of_planes(p, params, nodata, mask, chosen) if plane_dims(p) else
        local_fskde_dataarray(p, params, nodata=nodata, mask=mask, chosen_nan_policy=chosen)
        for p in planes
    ]  # fmt: skip
    along = image[first] if first in image.coords else first
    # each plane holds its value of a coord along the stack dim (scalar, or along y): all of
    # them, not the first plane's ("minimal" left them out, "override" took plane 0's)
    own = [n for n, c in image.coords.items()
           if first in c.dims and n != first and n in fields[0].coords]  # fmt: skip
    return xr.concat(fields, dim=along, coords=own, compat="override")


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
    nan_policy: Literal["raise", "omit"] | None = None,
    nodata: Nodata = "auto",
    gradient: Operator = "central",
    gradient_scale: float = 1.0,
    mask: Any = None,
) -> Any:
    """Local FS-KDE of an image's gradient angles at every (sampled) pixel (section 2.3).

    .. math:: F_k(x) = H_k\\,\\big(W\\,e^{-ik\\Theta} * \\varphi\\big)(x),\\quad k = 0 .. ℓ-1

    with :math:`W = |g|`, :math:`\\Theta = \\arg g` (:func:`xfskde.gradient`, central
    differences by default), φ the window and :math:`H_k` the cos^2K coefficients (eqs. 4–8).

    Parameters
    ----------
    image : numpy.ndarray, dask.array.Array, xarray.DataArray or PIL picture
        ``(y, x)`` or with a colour axis. Any real dtype; integers are converted to float first
        (no uint8 wrap-around). DataArrays are read by dimension name (``y``/``x``, else the last
        two; ``c``/``band``/``channel`` for colour); a stack with ``y`` and ``x`` named —
        ``(t, z, y, x[, c])``, a time series or z-stack — gives each plane's field, stacked:
        ``(t, z, y, x, k)``. A PIL picture (``PIL.Image.open``'s) is read
        as its file is (a palette one as RGB, an alpha channel dropped and its transparent
        pixels missing); anything else NumPy reads, through ``np.asarray``.
    order : int or Cos2KKernel
        Order K >= 1 of the cos^2K kernel (eq. 3), or the kernel itself (with its truncation
        and approximation; ``eps`` and ``approximation`` are then not taken), e.g.
        ``Cos2KKernel.for_length(10)`` for a descriptor of length ℓ = 10.
    window : {"gaussian", "box", "disk"} or Window, optional
        The window φ. ``"box"``: ``size`` × ``size`` pixels; ``"gaussian"``: ``size`` = sigma,
        truncated at ``ceil(4 sigma)``; ``"disk"``: ``size`` = radius. Each sums to one.
    size : float, optional
        Window size in pixels (see ``window``); default 4.
    stride : int, optional
        Sample every ``stride``-th pixel on a grid anchored at pixel (0, 0), at the cell centres
        ``i*stride + (stride-1)//2``. With ``window="box", size=8, stride=8`` each output is the
        FS-KDE of one 8×8 cell, like HOG's cells. Default 1: every pixel.
    eps : float in (0, 1), optional
        Truncation threshold (eq. 8): keep k with e^{-k²/K} >= eps. None keeps K + 1.
    boundary : {"reflect", "mirror", "nearest", "wrap", "constant"}, optional
        How the image is read beyond its true edges (``scipy.ndimage`` modes); default
        ``"reflect"``. Internal chunk edges always see their real neighbours.
    cval : float, optional
        Outside value for ``boundary="constant"``.
    channel_axis : int, optional
        Colour axis of a NumPy/Dask image; each pixel takes the channel with the largest |g|.
    approximation : {"auto", "exact", "normal"}, optional
        How H_k is computed; see :class:`~xfskde.Cos2KKernel`.
    nan_policy : {"raise", "omit"}, optional
        ``"raise"`` refuses NaN/inf pixels; ``"omit"`` gives every gradient that touches one
        zero weight, which is how no-data areas of mosaics are skipped. In colour images a
        channel whose stencil touches NaN is skipped; the weight is 0 only when all channels'
        are. Default: ``"raise"``, or ``"omit"`` where a nodata value is found (``nodata``).
        A ``"raise"`` given refuses the image's NaN pixels unless its nodata declares NaN
        missing (a GeoTIFF's, rioxarray's, a ``nodata`` or CF attr): the NaN ``_FillValue``
        in the encoding of any float image reopened from netCDF or Zarr, which xarray writes
        for every float variable, does not; the pixels of a numeric nodata are still
        omitted.
    nodata : "auto", number or None, optional
        The value that marks missing pixels (e.g. 0 on Sentinel-2 uint16 tiles). Pixels equal to
        it are set to NaN (lazily, block by block, on the work float dtype) and omitted exactly
        as ``nan_policy="omit"`` omits NaN — which it implies unless ``nan_policy="raise"`` is
        given (see ``nan_policy``). ``"auto"`` (default) reads it
        from a DataArray's metadata, where rioxarray's ``rio.nodata`` does: a decoded
        ``encoding["_FillValue"]`` (the image already holds NaN: NaN pixels are omitted), the
        ``_FillValue``, ``missing_value``, ``fill_value`` or ``nodata`` attr
        (:func:`xfskde.io.open_image` puts a GeoTIFF's nodata in ``_FillValue``), else
        ``nodatavals``: where the bands' differ (a VRT stack of B04, nodata 0, and B08, 65535)
        each band's samples equal to its own value are NaN, as GDAL masks each band. NumPy and
        Dask arrays have no metadata, so ``"auto"`` masks nothing there. ``None`` uses every
        pixel as data. DataArray results record it in the ``input_nodata`` and
        ``input_nodata_source`` attrs.
    gradient : {"central", "scharr", "gaussian"}, optional
        The gradient operator (:mod:`xfskde.gradients`). ``"central"`` (default): the central
        differences of the paper, bit for bit as before this option existed; their angles are
        biased by up to 94°/P² on structures of period P pixels (1.5° at P = 8).
        ``"scharr"``: Scharr's 3×3 operator, about ten times less biased, same halo.
        ``"gaussian"``: Gaussian derivatives of σ = ``gradient_scale``, nearly unbiased (0.001°
        at P = 8, σ = 1) but smoothing the image and needing ⌈4σ⌉ - 1 more pixels of halo. All
        give |g| in image units per pixel. Under ``nan_policy="omit"`` a gradient touching a
        missing pixel anywhere in its stencil (8 neighbours for Scharr, the (2⌈4σ⌉+1)² square
        for Gaussians, less the centre) has zero weight. Recorded in the ``gradient`` attr.
    gradient_scale : float, optional
        σ of ``gradient="gaussian"`` in pixels (default 1); the other operators take only the
        default. Recorded in the ``gradient_scale`` attr.
    mask : "auto", path, array or DataArray, optional
        The foreground to compute (:mod:`xfskde.masks`): ``"auto"`` finds tissue or signal with
        :func:`xfskde.masks.tissue_mask` (on a low-resolution level of the image's file when it
        has one), a path, an array or a nested list of rows (``[[False, True], ...]``) gives
        it (non-zero is foreground), at any resolution: it
        covers the image's extent. Samples outside it are NaN (no value: not computed, and
        so are the maps drawn from them); with a Dask-backed image the
        blocks it does not touch are neither read nor computed. DataArray results record it
        in the ``mask`` and ``mask_foreground`` (the fraction of foreground) attrs. A mask
        without foreground at any sample (empty, or a method that found none) is refused:
        its field would be NaN throughout. Default: everything.

    Returns
    -------
    numpy.ndarray, dask.array.Array or xarray.DataArray of shape (ny, nx, ℓ)
        The kind of the input. complex64 for float32 and 8/16-bit integer images, complex128
        for float64. A flat region gives exact zeros. DataArrays are named ``"fskde"`` with dims
        ``(y, x, k)``, the input's coordinates at the centres of the stride cells (the sampled
        pixels for odd strides), a GeoTransform of the result's own grid (s×s cells anchored at
        the image's corner) and attrs that record every parameter.

    Raises
    ------
    ValueError
        For bad parameters (each message names the parameter), NaN pixels under
        ``nan_policy="raise"``, or a mask without foreground.

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
    chosen = nan_policy is not None  # else "raise", or "omit" where nodata is masked
    params = LocalParameters(
        order=order, window=window, size=size, stride=stride, eps=eps, boundary=boundary,
        cval=cval, approximation=approximation,
        nan_policy="raise" if nan_policy is None else nan_policy,  # not `or`: False is refused
        gradient=gradient, gradient_scale=gradient_scale,
    )  # fmt: skip
    check_nodata(nodata)
    refuse_dataset(image)
    module = type(image).__module__
    if module.startswith("xarray"):
        if channel_axis is not None:
            named = [d for d in image.dims if str(d).lower() in COLOR_DIMS]
            if named:  # open_image's result, say: its colour dim is known already
                raise ParameterError(
                    f"channel_axis is for NumPy and Dask images; this DataArray names its colour "
                    f"dim already ({named[0]!r}): drop channel_axis"
                )
            raise ParameterError(
                "channel_axis is for NumPy and Dask images; a DataArray's colour dim is found by "
                "name (c, band, channel, ...): rename it, e.g. .rename({'dim_2': 'c'}), and drop "
                "channel_axis"
            )

        if plane_dims(image):  # a stack: each plane's field, stacked as the planes are
            return _fields_of_planes(image, params, nodata, mask, chosen)
        return local_fskde_dataarray(
            image, params, nodata=nodata, mask=mask, chosen_nan_policy=chosen
        )
    picture = is_picture(image)
    if not module.startswith("dask"):
        image = pixels(image)  # a PIL picture as its file reads: RGB, not palette indices
    value, _, params = _resolve_nodata(image, nodata, params, chosen)
    auto = isinstance(nodata, str)  # "auto"
    if picture and auto and image.dtype.kind == "f" and not chosen:
        params = copy.copy(params)
        params.nan_policy = "omit"  # its transparent pixels, NaN: missing, as open_image reads
    if chosen and nan_policy == "raise" and _is_number(value):
        image = _refusing_nan(image)  # NaN pixels refused; the nodata's omitted
    image = mask_nodata(image, value)
    if image.ndim in (2, 3) and (image.ndim == 2 or channel_axis is not None):
        axis = None if image.ndim == 2 else channel_axis % 3
        yx = tuple(n for i, n in enumerate(image.shape) if i != axis)
        _refuse_beyond(yx, params, isinstance(image, da.Array))  # type: ignore[arg-type]
    foreground = None
    if mask is not None:  # a mask is labelled (y, x): the array is seen as the image it is
        lib = da if isinstance(image, da.Array) else np
        view = image if channel_axis is None else lib.moveaxis(image, channel_axis, -1)
        dims = ("y", "x") if view.ndim == 2 else ("y", "x", "c")
        foreground = resolve_mask(mask, xr.DataArray(view, dims=dims))
        _refuse_no_foreground(foreground, view.shape[:2], params.stride, mask)
    return _field(image, params, channel_axis, foreground)
