"""Fitted texture models read back from the results that record them.

Every result of :func:`~xfskde.segmentation.segment` and of ``xfskde segment`` carries the model
that made it in its attrs (:meth:`.TextureModel.attrs`: the feature parameters, the ranges
measured at fit time, the weights and the fitted pure textures), and a fitted model *is* what
those attrs say (:func:`~xfskde.segmentation.fit_textures` returns the model read back from
them). So a stored result is a saved model: :func:`read_model` rebuilds it, and the model
segments other images — the other slides of a cohort, the other scenes of a survey — with the
same textures under the same labels (``xfskde segment SLIDE OUT --model FIRST``).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import tifffile
import xarray as xr
import zarr

from ..exceptions import ParameterError, StoreFormatError
from ..io._location import store_target, zarr_like
from ..io.geojson import read_geojson, read_labels_attrs
from ..io.images import gdal_pairs, ome_pairs
from ..io.ometiff import ANNOTATION_NAMESPACE
from ..io.png import png_attrs
from ..io.stores import open_blocks
from .model import TextureModel

__all__ = ["read_model", "same_fit"]

_TIFF_SUFFIXES = (".tif", ".tiff")
#: How near two fits' numbers are to be the same fit (:func:`same_fit`): relative to the
#: largest of a list (the endmembers, the unmixing vectors) or to a number, and absolute for
#: numbers near zero. Fits of other seeds or settings differ by 1e-2 and more.
_FIT_RTOL, _FIT_ATOL = 1e-4, 1e-12
#: A number as text (in the choices: ``log |W| -323.479 -> -323.549``, ``S/N bank 3.72``).
_NUMBER = re.compile(r"-?\d+(?:\.(\d+))?(?:e[-+]?\d+)?")


def read_model(source: Any, *, storage_options: Mapping[str, Any] | None = None) -> TextureModel:
    """The fitted texture model recorded in a segmentation result.

    Parameters
    ----------
    source : str, pathlib.Path, URL, xarray.DataArray or mapping
        Labels or abundances made by :func:`~xfskde.segmentation.segment` (a DataArray, or
        its attrs), or a result written by ``xfskde segment`` or :func:`xfskde.io.write_blocks`:
        a Zarr store of labels, an OME-Zarr image of abundances (``*.ome.zarr``), an OME-TIFF
        of them (``*.ome.tif``, whose OME-XML holds the attrs as key-value pairs), a GeoTIFF
        of labels (``*.tif``, whose metadata hold the attrs as text), a PNG of labels
        (``*.png``, :func:`xfskde.io.png.write_labels_png`) or their regions as GeoJSON
        (``*.geojson``, :func:`xfskde.io.geojson.write_labels_geojson`); a path or URL. A store
        whose write did not finish holds the whole model too (it is written first).
    storage_options : mapping, optional
        Options of the fsspec filesystem of a URL (credentials, ``endpoint_url``).

    Returns
    -------
    TextureModel
        The model that made the result: the labels it gives the same image are the result's,
        and other images get the same textures under the same labels. Its
        :meth:`~.TextureModel.predict` refuses images unlike the one it was fitted on (other
        channels, value range or pixel size).

    Raises
    ------
    ParameterError
        If ``source`` records no texture model, or is no path, URL, DataArray or mapping.
    FileNotFoundError
        If there is nothing at ``source``.

    Examples
    --------
    >>> model = read_model("slide1-labels.zarr")  # doctest: +SKIP
    >>> labels2 = model.predict(xfskde.open_image("slide2.svs"))  # doctest: +SKIP
    """
    if isinstance(source, xr.DataArray):
        return TextureModel.from_attrs(source.attrs)
    if isinstance(source, Mapping):
        return TextureModel.from_attrs(source)
    if source is None or isinstance(source, (bool, numbers.Number, list, tuple)) or not str(source):
        raise ParameterError(
            f"source must be the path or URL of a result, a DataArray or its attrs, got {source!r}"
        )
    where = store_target(source, storage_options)
    if hasattr(where, "exists") and not where.exists():
        raise FileNotFoundError(f"no such result: {where}")
    if str(where).lower().rstrip("/").endswith(_TIFF_SUFFIXES):
        return TextureModel.from_attrs(_tiff_attrs(where), source=where)
    if str(where).lower().endswith(".png"):
        with where.open() as handle:
            return TextureModel.from_attrs(png_attrs(handle), source=where)
    if str(where).lower().endswith(".gpkg"):  # its layer's metadata item "xfskde": the attrs
        recorded = read_labels_attrs(where.url if hasattr(where, "url") else where)
        if recorded is None:
            raise ParameterError(
                f"{where} holds no texture model (no xfskde metadata): give the GeoPackage, "
                "GeoJSON, Zarr store or TIFF that `xfskde segment` wrote"
            )
        return TextureModel.from_attrs(recorded, source=where)
    if str(where).lower().endswith((".shp", ".fgb")):
        raise ParameterError(
            f"{where} holds the regions, not the texture model (a shapefile or FlatGeobuf keeps "
            "no metadata): give the labels' GeoPackage, GeoJSON, Zarr store or TIFF"
        )
    if str(where).lower().endswith(".geojson"):  # its foreign member "xfskde": the attrs
        recorded = read_geojson(where).get("xfskde")
        return TextureModel.from_attrs(recorded if isinstance(recorded, Mapping) else {},
                                       source=where)  # fmt: skip
    group = zarr.open_group(zarr_like(where), mode="r")
    recorded = group.attrs.get("xfskde")
    if isinstance(recorded, Mapping) and isinstance(recorded.get("attrs"), Mapping):
        return TextureModel.from_attrs(recorded["attrs"], source=where)  # an OME-Zarr image
    try:
        data = open_blocks(where, allow_incomplete=True)
    except StoreFormatError:  # no store of xfskde's: a Dataset xarray wrote, of its arrays
        # (labels.to_dataset().to_zarr(path)) the one that records a model
        return _recorded_in_arrays(group, where)
    return TextureModel.from_attrs(data.attrs, source=where)


def _recorded_in_arrays(group: zarr.Group, where: Any) -> TextureModel:
    """The model recorded in the attrs of one array of a Zarr group that is no store of
    xfskde's (a Dataset of labels that xarray wrote); refused, naming the arrays, when none or
    several record one."""
    held = {}
    for name, array in group.arrays():
        try:
            held[name] = TextureModel.from_attrs(dict(array.attrs), source=where)
        except ParameterError:
            continue
    if len(held) == 1:
        return next(iter(held.values()))
    arrays = sorted(name for name, _ in group.arrays())
    if held:
        raise ParameterError(
            f"{where} holds several arrays that record a texture model ({', '.join(sorted(held))}):"
            f" give one, read_model(xarray.open_zarr(path)[name])"
        )
    raise ParameterError(
        f"{where} records no texture model: none of its arrays ({', '.join(arrays)}) holds "
        "the attrs of a segmentation; give the labels or abundances that segment() or "
        "`xfskde segment` made"
    )


def same_fit(fitted: TextureModel, recorded: TextureModel) -> bool:
    """Whether two models are one fit up to the last bits of another machine's arithmetic.

    The fit is seeded, so fitting the same image with the same settings again gives the same
    model — to the bit on the same machine, but not where BLAS takes another kernel (another
    CPU, a cluster's workers in another environment): endmembers 1e-8 apart, relative, and the
    unmixing vectors 3e-5. A resumed ``xfskde segment`` fits again and compares: the same
    settings and the same fit by this test continue the store with the model it records,
    anything else is refused as other parameters. Equal: every attr of the two
    (:meth:`.TextureModel.attrs`), numbers within ``_FIT_RTOL`` relative (``_FIT_ATOL``
    absolute near zero), lists of them within ``_FIT_RTOL`` of their largest magnitude, text
    with its numbers compared alike and within a unit of the last digit written (the choices
    round their figures: ``log |W| -323.479``), the rest exactly.

    Parameters
    ----------
    fitted : TextureModel
        The model fitted now.
    recorded : TextureModel
        The model a store records (its lists' tolerance is taken from ``fitted``'s magnitudes).

    Returns
    -------
    bool
        True when the two have the same attrs and every one is alike as above.

    Raises
    ------
    ParameterError
        If either is not a :class:`.TextureModel`.
    """
    for name, model in (("fitted", fitted), ("recorded", recorded)):
        if not isinstance(model, TextureModel):
            raise ParameterError(
                f"{name} must be a TextureModel (fit_textures', read_model's), got "
                f"{type(model).__name__}"
            )
    a, b = fitted.attrs(), recorded.attrs()
    return a.keys() == b.keys() and all(_alike(a[key], b[key]) for key in a)


def _alike(a: Any, b: Any) -> bool:
    """:func:`same_fit`'s comparison of two attr values."""
    if isinstance(a, str) and isinstance(b, str):
        numbers_a, numbers_b = list(_NUMBER.finditer(a)), list(_NUMBER.finditer(b))
        if _NUMBER.sub("#", a) != _NUMBER.sub("#", b) or len(numbers_a) != len(numbers_b):
            return False
        for x, y in zip(numbers_a, numbers_b, strict=True):
            digits = max(len(x.group(1) or ""), len(y.group(1) or ""))
            unit = 10.0**-digits if "e" not in x.group(0) + y.group(0) else 0.0
            if not math.isclose(float(x.group(0)), float(y.group(0)),
                                rel_tol=_FIT_RTOL, abs_tol=max(unit, _FIT_ATOL)):  # fmt: skip
                return False
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return False
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (*a, *b))
        if not numeric:
            return all(_alike(x, y) for x, y in zip(a, b, strict=True))
        x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        scale = float(np.nanmax(np.abs(x), initial=0.0))
        same_gaps = np.array_equal(np.isnan(x), np.isnan(y))
        return same_gaps and bool(np.nanmax(np.abs(x - y), initial=0.0) <= _FIT_RTOL * scale
                                  + _FIT_ATOL)  # fmt: skip
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=_FIT_RTOL, abs_tol=_FIT_ATOL) or (a != a and b != b)
    return a == b


def _tiff_attrs(where: Any) -> dict[str, str]:
    """The attrs a TIFF written by ``xfskde segment`` holds, as text values: an OME-TIFF's
    key-value pairs (:mod:`xfskde.io.ometiff`), or the dataset-level items of a GeoTIFF's GDAL
    metadata (as GDAL and rioxarray write the attrs of a DataArray)."""
    with where.open() as handle, tifffile.TiffFile(handle) as tif:
        ome, text = tif.ome_metadata if tif.is_ome else None, _gdal_metadata(tif)
    if ome:
        pairs = _ome_pairs(ome)
        if pairs:
            return pairs
    if not text:
        raise ParameterError(
            f"{where} holds no metadata of a segmentation (no GDAL metadata tag, no xfskde "
            "key-value pairs): give the GeoTIFF or OME-TIFF that `xfskde segment` wrote, or "
            "its Zarr store"
        )
    return gdal_pairs(text)


def _ome_pairs(xml: str) -> dict[str, str]:
    """The xfskde key-value pairs of an OME-XML document: those annotating the label image
    (``labels/textures``, which records the model), else the first image's; {} if none."""
    images = dict(ome_pairs(xml, ANNOTATION_NAMESPACE))
    return images.get("labels/textures") or next((p for p in images.values() if p), {})


def _gdal_metadata(tif: tifffile.TiffFile) -> str | None:
    tag = tif.pages.first.tags.get("GDAL_METADATA")
    return None if tag is None else str(tag.value)
