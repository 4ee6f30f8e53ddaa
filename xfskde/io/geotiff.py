"""Writing labelled results as GeoTIFF or Cloud-Optimised GeoTIFF: :func:`write_geotiff`.

Needs rioxarray (``pip install 'xfskde[geo]'``); nothing else in xfskde does. Every DataArray
result of xfskde — a coefficient field, a density, orientation, coherence or energy map,
segmentation labels or abundances — carries the CRS (``spatial_ref``) and a GeoTransform of its
own grid (:mod:`xfskde._labels`), which rioxarray writes as they are. A result of an image
without georeferencing (a plain TIFF, a PNG: pixel-index coords, no CRS) is written on GDAL's
pixel grid, the one GDAL reads its input on: the identity transform at stride 1, each pixel of a
stride-``s`` map over the ``s × s`` input pixels of its cell (:func:`_pixel_grid`).

**Layout.**

* **Complex coefficient fields** ``(y, x, k)`` become ``2ℓ`` real bands, the real and imaginary
  parts of each coefficient side by side: band ``2k + 1`` is Re F_k and band ``2k + 2`` is
  Im F_k (``"Re F_0", "Im F_0", "Re F_1", ...`` in the band descriptions; Im F_0 is 0). GDAL
  could store complex samples (``CFloat32``), but most readers — QGIS, web tilers, COG
  overviews, many Python readers — refuse or mangle them, while two float bands read everywhere
  and hold exactly the same numbers. The parts keep the field's precision (float32 for
  complex64, float64 for complex128). ``F = bands[0::2] + 1j * bands[1::2]`` gives the field
  back.
* **Real maps** (orientation, coherence, energy, density, abundances) become float32 bands,
  one per value of a trailing dim; their nodata is NaN.
* **Integer maps** keep their dtype; uint8 maps get nodata 255 and booleans are written as
  uint8. **Segmentation labels** (an integer result with a ``background_label`` attr, as
  :func:`xfskde.segment` returns them) get that label, 0, as their nodata: no texture was
  found there. With an ``n_textures`` attr too, 8- and 16-bit labels get a colour table: the
  library's label colours (:mod:`xfskde._palette`, those of :func:`xfskde.plot.segmentation`
  and of the NGFF label image), so that QGIS and GDAL show each texture in the colour it has
  in the library's pictures and in napari (the background, being nodata, is not drawn).
  Labels with an ``n_textures`` attr are also named, ``background``, ``texture 1``, ...
  (:func:`xfskde._palette.label_names`, the names of the NGFF label image): GDAL's category
  names of the band and a thematic raster attribute table (``Value``, ``Name`` and, with the
  colour table, ``Red``, ``Green``, ``Blue``, ``Alpha``), which QGIS's paletted renderer and
  legend, its attribute-table tools and ``gdalinfo`` show. TIFF tags cannot hold them: GDAL
  keeps both, for a GeoTIFF, in its PAM sidecar ``labels.tif.aux.xml`` beside the file (as
  GDAL's own ``SetCategoryNames`` / ``SetDefaultRAT`` do), which every GDAL-based reader
  finds by that name; it travels with the file (copy both). A GeoTIFF written without names
  leaves no such file behind: an older one at ``path.aux.xml`` is removed, as it would name
  and colour the new pixels.
* **A Dataset of maps** on one grid (``xr.Dataset({"orientation": ..., "coherence": ...})``)
  becomes one band per variable, in order, described by the variable's name.

Each band carries its unit (GDAL's band unit type, from the ``units`` attr: ``rad`` for
orientation, ``1`` for coherence, ...), which QGIS shows and rioxarray reads back as
``attrs["units"]``, and its ``long_name`` as band metadata.

Every attr of the result (kernel, order, window, stride, nodata handling, ...) is written as
GDAL metadata, so the file says how it was computed. A Dask-backed result is written block by
block, each task writing whole tiles under a lock (a :class:`distributed.Lock` on a distributed
cluster, whose workers must then all see the file's folder); the memory used is a few blocks.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any, Literal

import dask.array as da
import numpy as np
import xarray as xr

from .._grid import cell_centres, index_stride
from .._labels import geotransform
from .._palette import BACKGROUND_COLOUR, label_names, label_rgba_8bit
from .._scheduling import check_room, refuse_unshared_folder
from .._scheduling import compute as compute_collections
from ..exceptions import DimensionError, ParameterError
from ._location import Location, micrometres

__all__ = ["PAM_SIDECAR", "pam_category_names", "pam_sidecar", "write_geotiff"]

#: The suffix of GDAL's PAM (Persistent Auxiliary Metadata) sidecar beside a raster,
#: ``labels.tif.aux.xml``: where GDAL keeps what the raster's format cannot hold — for a
#: GeoTIFF, a band's category names and raster attribute table.
PAM_SIDECAR = ".aux.xml"

#: The columns of a labels GeoTIFF's raster attribute table: name, GDAL field type
#: (GFT_Integer 0, GFT_String 2) and usage (GFU_MinMax 5: the pixel value; GFU_Name 2;
#: GFU_Red .. GFU_Alpha 6 .. 9), as GDAL writes them in a PAM sidecar.
_RAT_COLUMNS = (("Value", 0, 5), ("Name", 2, 2))
_RAT_COLOURS = (("Red", 0, 6), ("Green", 0, 7), ("Blue", 0, 8), ("Alpha", 0, 9))

#: GDAL's block cache while a GeoTIFF is written, in MB (GDAL_CACHEMAX).
_GDAL_CACHE_MB = 64

#: Attrs that would make rioxarray write something other than the result (value encodings, a
#: stale rasterio-order transform) and are therefore not passed on as metadata; ``long_name``
#: and ``units`` are each band's own (band descriptions, units and metadata).
_NOT_WRITTEN = (
    "_FillValue", "missing_value", "scale_factor", "add_offset", "transform", "nodata",
    "nodatavals", "fill_value", "scales", "offsets", "long_name", "grid_mapping", "units",
)  # fmt: skip


def check_tile(tile: Any) -> None:
    """A TIFF tile side: a positive multiple of 16, as TIFF requires (GeoTIFF and OME-TIFF)."""
    if isinstance(tile, bool) or not isinstance(tile, int) or tile < 16 or tile % 16:
        raise ParameterError(f"tile must be a positive multiple of 16, got {tile!r}")


def _require_rioxarray() -> Any:
    try:
        import rasterio  # noqa: F401
        import rioxarray
    except ImportError as exc:
        raise ImportError(
            "write_geotiff needs rioxarray (and rasterio): pip install 'xfskde[geo]'"
        ) from exc
    return rioxarray


def _from_dataset(maps: xr.Dataset) -> tuple[xr.DataArray, list[dict[str, str]]]:
    """A Dataset of 2-D maps on one grid as one ``(y, x, map)`` DataArray (the attrs the maps
    share, and the Dataset's), and each band's ``units`` and ``long_name``."""
    names = list(maps.data_vars)
    if not names or any(maps[n].dims != ("y", "x") for n in names):
        raise DimensionError(
            "write_geotiff writes a Dataset of (y, x) maps, one band each; got variables "
            f"{ {n: maps[n].dims for n in names} }"
        )
    bands = xr.concat([maps[n] for n in names], dim="map", combine_attrs="drop_conflicts")
    bands = bands.assign_coords(map=names).transpose("y", "x", "map")
    bands.attrs = {**bands.attrs, **maps.attrs}
    return bands, [_band_tags(maps[n].attrs) for n in names]


def _band_tags(attrs: dict[str, Any]) -> dict[str, str]:
    """A band's own metadata: its unit and long name, where the attrs give them."""
    return {key: str(attrs[key]) for key in ("units", "long_name") if attrs.get(key) is not None}


def _bands(result: xr.DataArray, dtype: Any) -> tuple[Any, list[str], np.dtype, str]:
    """The result's values as ``(band, y, x)`` data, the band names, the dtype and the layout."""
    data = result.data
    trailing = result.dims[2] if result.ndim == 3 else None
    if result.ndim == 2:
        data = data[None]
        labels = [str(result.name or "band")]
    else:
        values = result[trailing].values if trailing in result.coords else range(result.shape[2])
        # names as they are ("texture 1", a band's "B04"); numbers with their dim ("k=2")
        labels = [v if isinstance(v, str) else f"{trailing}={v}" for v in list(values)]
        data = da.moveaxis(data, 2, 0) if isinstance(data, da.Array) else np.moveaxis(data, 2, 0)
    kind = result.dtype.kind
    if kind == "c":
        part = np.dtype(dtype) if dtype is not None else np.finfo(result.dtype).dtype
        stack = da.stack if isinstance(data, da.Array) else np.stack
        data = stack([data.real, data.imag], axis=1).reshape((-1, *data.shape[1:]))
        if trailing is None:
            names = [f"Re {labels[0]}", f"Im {labels[0]}"]
        else:
            ks = result[trailing].values if trailing in result.coords else range(result.shape[2])
            names = [f"{part_name} F_{k}" for k in ks for part_name in ("Re", "Im")]
        layout = "band 2k+1 = Re F_k, band 2k+2 = Im F_k (k = 0, 1, ...)"
        return data.astype(part, copy=False), names, part, layout
    if kind == "f":
        out = np.dtype(dtype) if dtype is not None else np.dtype(np.float32)
    elif kind == "b":
        out = np.dtype(np.uint8)
    elif kind in "iu":
        out = np.dtype(dtype) if dtype is not None else result.dtype
    else:
        raise ParameterError(f"cannot write a result of dtype {result.dtype} as a GeoTIFF")
    names = labels if result.ndim == 3 else [str(result.name or "band")]
    return data.astype(out, copy=False), names, out, "one band per " + (trailing or "map")


def _nodata(nodata: Any, dtype: np.dtype, background: Any = None) -> float | int | None:
    """The nodata value written: ``"auto"`` is NaN for floats, the ``background`` label of
    integer labels that name one (a segmentation's 0: no texture there), else 255 for uint8,
    none otherwise."""
    if isinstance(nodata, str):
        if nodata != "auto":
            raise ParameterError(f"nodata must be 'auto', a number or None, got {nodata!r}")
        if dtype.kind == "f":
            return float("nan")
        if background is not None:
            return int(background)
        return 255 if dtype == np.uint8 else None
    if nodata is None:
        return None
    if isinstance(nodata, bool) or not isinstance(nodata, int | float | np.number):
        raise ParameterError(f"nodata must be 'auto', a number or None, got {nodata!r}")
    return nodata


def _metadata(attrs: dict[str, Any]) -> dict[str, Any]:
    """The result's attrs as GDAL metadata: scalars as they are, lists as text."""
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if key in _NOT_WRITTEN:
            continue
        if isinstance(value, float) and math.isnan(value):
            value = "nan"
        out[str(key)] = value if isinstance(value, str | int | float) else str(value)
    return out


def _resolution_tags(result: xr.DataArray) -> dict[str, str]:
    """For a result without a CRS whose ``y``/``x`` coords are a physical length (a microscope
    image's µm, ``attrs["units"]``): the TIFF resolution tags in pixels per centimetre, which
    GDAL writes from these metadata items and which Fiji, QuPath, tifffile and
    :func:`xfskde.open_image` read. The GeoTransform alone (no GeoKeys without a CRS) is read by
    GDAL only, and the pixel size was lost to everything else."""
    if result.rio.crs is not None or result.sizes["y"] < 2 or result.sizes["x"] < 2:
        return {}
    tags = {}
    for dim, tag in (("x", "TIFFTAG_XRESOLUTION"), ("y", "TIFFTAG_YRESOLUTION")):
        values = np.asarray(result[dim].values, dtype=np.float64)
        step = micrometres(abs(float(values[1] - values[0])), result[dim].attrs.get("units"))
        if step is None or "units" not in result[dim].attrs:
            return {}
        tags[tag] = repr(1e4 / step)  # pixels per centimetre
    return {**tags, "TIFFTAG_RESOLUTIONUNIT": "3 (pixels/cm)"}


def _pixel_grid(result: xr.DataArray) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``(y, x)`` centres, in GDAL's pixel frame, of the samples of a result of an image
    without georeferencing; None for any other result, whose coords rioxarray writes as they
    are.

    xfskde gives an image without coordinates (a plain TIFF, a PNG, a NumPy array) the pixel
    indices as coords: the sample of a stride-``s`` result at index ``v = i*s + o`` (``o =
    (s - 1)//2``) describes the pixels ``v - o .. v - o + s - 1`` (:mod:`xfskde._labels`).
    GDAL reads such an image with the identity transform, its pixel ``j`` covering ``[j, j+1)``,
    while rioxarray takes coords for the pixels' centres: written as they are, the indices put
    every pixel half a pixel up and left of the input's (an even stride's cells a whole pixel).
    Their centres in GDAL's frame are the cells' centres (:func:`xfskde._grid.cell_centres`)
    plus half a pixel, ``v - o + s/2``, so that the file's transform is
    ``(s, 0, x0 - o, 0, s, y0 - o)`` for the first coords ``x0``, ``y0``: the identity at
    stride 1. Such coords are those :func:`xfskde._grid.index_stride` tells, of a result with
    no CRS, GeoTransform, ``transform`` attr or ground control points.
    """
    if result.rio.crs is not None or geotransform(result) is not None:
        return None
    if "transform" in result.attrs or result.rio.get_gcps() is not None:
        return None
    step = index_stride(result.coords.get("y"), result.coords.get("x"), result.attrs)
    if step is None:
        return None
    y, x = (cell_centres(result[d].values, step) + 0.5 for d in ("y", "x"))
    return y, x


def _colour_table(result: xr.DataArray, dtype: np.dtype, colors: Any) -> dict[int, tuple]:
    """The GDAL colour table (value: RGBA, 0-255) of a labels result: one entry per texture
    and the background (0) transparent; empty for anything else or with ``colors=None``."""
    if colors is None:
        return {}
    if colors != "auto":
        raise ParameterError(f'colors must be "auto" or None, got {colors!r}')
    textures = result.attrs.get("n_textures")
    if result.ndim != 2 or np.dtype(dtype) not in (np.uint8, np.uint16) or textures is None:
        return {}
    # label 0 the pictures' background grey; TIFF keeps no alpha: GDAL reads 0 where nodata
    rgba = label_rgba_8bit(int(textures), BACKGROUND_COLOUR)
    return {i: tuple(map(int, row)) for i, row in enumerate(rgba)}


def _category_names(result: xr.DataArray, dtype: np.dtype) -> list[str]:
    """The names of the values of segmentation labels (an integer ``(y, x)`` result with an
    ``n_textures`` attr), from 0 (:func:`xfskde._palette.label_names`); empty for anything
    else."""
    textures = result.attrs.get("n_textures")
    if result.ndim != 2 or np.dtype(dtype).kind not in "iu" or textures is None:
        return []
    return label_names(int(textures))


def pam_sidecar(path: str | os.PathLike) -> Path:
    """The PAM sidecar of the raster at ``path`` (``labels.tif`` -> ``labels.tif.aux.xml``).

    Parameters
    ----------
    path : str or os.PathLike
        A local raster's path.

    Returns
    -------
    pathlib.Path
        ``path`` + :data:`PAM_SIDECAR`.
    """
    return Path(os.fspath(path) + PAM_SIDECAR)


def _pam_xml(names: list[str], table: dict[int, tuple]) -> str:
    """The PAM sidecar of a labels GeoTIFF: band 1's category names (value ``i`` named
    ``names[i]``) and a thematic raster attribute table of the same values and names, with
    their colours where the file has a colour table (``table``)."""
    root = ElementTree.Element("PAMDataset")
    band = ElementTree.SubElement(root, "PAMRasterBand", band="1")
    categories = ElementTree.SubElement(band, "CategoryNames")
    for name in names:
        ElementTree.SubElement(categories, "Category").text = name
    rat = ElementTree.SubElement(band, "GDALRasterAttributeTable", tableType="thematic")
    columns = _RAT_COLUMNS + (_RAT_COLOURS if table else ())
    for index, (name, kind, usage) in enumerate(columns):
        field = ElementTree.SubElement(rat, "FieldDefn", index=str(index))
        for tag, text in (("Name", name), ("Type", kind), ("Usage", usage)):
            ElementTree.SubElement(field, tag).text = str(text)
    for value, name in enumerate(names):
        row = ElementTree.SubElement(rat, "Row", index=str(value))
        for cell in (value, name, *(table[value] if table else ())):
            ElementTree.SubElement(row, "F").text = str(cell)
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode") + "\n"


def _write_pam(path: Path, names: list[str], table: dict[int, tuple]) -> None:
    """Write the PAM sidecar of the labels GeoTIFF ``path`` whole (a scratch file renamed)."""
    sidecar = pam_sidecar(path)
    scratch = sidecar.with_name(sidecar.name + ".tmp")
    try:
        scratch.write_text(_pam_xml(names, table), encoding="utf-8")
        os.replace(scratch, sidecar)
    finally:
        scratch.unlink(missing_ok=True)


def pam_category_names(path: Location) -> list[str] | None:
    """The category names of band 1 of the raster at ``path`` as its PAM sidecar holds them
    (those :func:`write_geotiff` writes for segmentation labels), value 0 first.

    Parameters
    ----------
    path : Location
        The raster (a local path or a URL); its sidecar is ``path`` + :data:`PAM_SIDECAR`.

    Returns
    -------
    list of str or None
        The names, value 0 first; None where there is no sidecar (or it cannot be read
        remotely), or it names none.

    Raises
    ------
    ValueError
        For a sidecar that is not XML (GDAL ignores it, with a warning).
    """
    if path.has_query:
        return None
    sidecar = Location(path.url + PAM_SIDECAR, path.storage_options)
    try:
        if not sidecar.is_file():
            return None
    except Exception:  # a remote answer other than a file (403, 5xx): no names to show
        return None
    with sidecar.open() as file:
        try:
            root = ElementTree.fromstring(file.read())
        except ElementTree.ParseError as exc:
            raise ValueError(f"{sidecar} is not GDAL's PAM XML: {exc}") from exc
    for band in root.iter("PAMRasterBand"):
        if band.get("band") == "1" and (categories := band.find("CategoryNames")) is not None:
            return [category.text or "" for category in categories.iter("Category")]
    return None


def _write_lock(path: Path) -> Any:
    """The lock the writing tasks share: a :class:`distributed.Lock` when the current Dask
    scheduler is a distributed client (its workers are other processes, which a thread lock
    cannot reach or even be sent to), a thread lock otherwise."""
    import dask.base

    client = getattr(dask.base.get_scheduler(), "__self__", None)
    if type(client).__name__ == "Client" and type(client).__module__.startswith("distributed"):
        from distributed import Lock

        return Lock(f"xfskde-geotiff-{path.resolve()}")
    return threading.Lock()


def _tiled(data: Any, tile: int) -> Any:
    """A Dask array rechunked so that every block is whole tiles (bands in one block)."""
    if not isinstance(data, da.Array):
        return data

    def side(chunks: tuple[int, ...]) -> int:
        return max(tile, -(-max(chunks) // tile) * tile)

    return data.rechunk((data.shape[0], side(data.chunks[1]), side(data.chunks[2])))


def write_geotiff(
    result: xr.DataArray | xr.Dataset,
    path: str | os.PathLike,
    *,
    cog: bool = False,
    nodata: Literal["auto"] | float | int | None = "auto",
    dtype: Any = None,
    compress: str = "deflate",
    tile: int = 256,
    overview_resampling: str = "nearest",
    colors: Literal["auto"] | None = "auto",
) -> Path:
    """Write a labelled result as a (Cloud-Optimised) GeoTIFF with its CRS and grid.

    Parameters
    ----------
    result : xarray.DataArray or xarray.Dataset
        A result of xfskde with dims ``(y, x)`` or ``(y, x, dim)`` — a coefficient field
        ``(y, x, k)``, a map, labels, abundances — NumPy- or Dask-backed, or a Dataset of
        ``(y, x)`` maps on one grid (one band each, named and with its unit). Its CRS is read
        from its ``spatial_ref`` coord and its grid from its coordinates and GeoTransform, by
        rioxarray (``result.rio.crs``, ``result.rio.transform()``).
    path : str or path-like
        The file to write (replaced if it exists, unless the lazy ``result`` reads it).
    cog : bool, optional
        Write a Cloud-Optimised GeoTIFF (GDAL's COG driver: tiles, overviews, the layout that
        HTTP range reads need). The tiled GeoTIFF is written first, next to ``path``, and
        copied.
    nodata : "auto", number or None, optional
        The value marking missing samples, written as the file's nodata. ``"auto"``: NaN for
        float bands, the background label of segmentation labels (their ``background_label``
        attr, 0), 255 for other uint8 maps, none for other integers.
    dtype : dtype, optional
        The bands' dtype; default float32 for real maps, the field's precision for the parts of
        complex coefficients, the dtype itself for integers.
    compress : str, optional
        GDAL compression (``"deflate"``, ``"zstd"``, ``"lzw"``, ``"none"``...).
    tile : int, optional
        Tile side in pixels, a multiple of 16.
    overview_resampling : str, optional
        How a COG's overviews are computed (``"nearest"``, safe for labels and angles;
        ``"average"`` for smooth maps).
    colors : "auto" or None, optional
        ``"auto"``: segmentation labels (an 8- or 16-bit integer ``(y, x)`` result with an
        ``n_textures`` attr) get a colour table, the library's label colours with label 0
        transparent (QGIS shows them as categories); other results none. None: no colour
        table.

    Returns
    -------
    pathlib.Path
        The path written, absolute (a relative ``path`` is taken in this process's working
        directory, also where a cluster's workers write the tiles). Segmentation labels (an
        integer ``(y, x)`` result with an ``n_textures`` attr) also get their class names in
        ``path.aux.xml`` beside it (:data:`PAM_SIDECAR`: GDAL's category names and raster
        attribute table, which QGIS and ``gdalinfo`` read); any other result removes an
        older file of that name.

    Raises
    ------
    ImportError
        If rioxarray is not installed.
    DimensionError
        If ``result`` is not ``(y, x)`` or ``(y, x, dim)``.
    ParameterError
        For a ``nodata``, ``tile`` or dtype that cannot be written, and for a ``path`` that
        the lazy ``result`` is read from (the image it was opened from, its mask file): it
        would be replaced before it is read.

    Examples
    --------
    >>> field = xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)  # doctest: +SKIP
    >>> write_geotiff(field, "cells.tif", cog=True)  # doctest: +SKIP
    >>> write_geotiff(field.fskde.orientation(), "orientation.tif")  # doctest: +SKIP
    """
    _require_rioxarray()
    import rasterio
    import rasterio.errors
    import rasterio.shutil

    from .stores import refuse_replacing_sources

    if Path(os.fspath(path)).exists():  # never the file (or store) the lazy result reads
        refuse_replacing_sources(result, path, "write_geotiff")
    per_band = variables = None
    if isinstance(result, xr.Dataset):
        variables = [str(name) for name in result.data_vars]
        result, per_band = _from_dataset(result)
    if not isinstance(result, xr.DataArray) or result.dims[:2] != ("y", "x") or result.ndim > 3:
        dims = getattr(result, "dims", None)
        raise DimensionError(
            f"write_geotiff writes DataArrays with dims (y, x) or (y, x, dim), got {dims}; "
            "results of xfskde have them (transpose other arrays first)"
        )
    check_tile(tile)
    data, names, out_dtype, layout = _bands(result, dtype)
    table = _colour_table(result, out_dtype, colors)
    categories = _category_names(result, out_dtype)
    names = variables or names  # a Dataset's bands are named by its variables
    if per_band is None:  # one quantity: every band has the result's unit and long name
        per_band = [_band_tags(result.attrs)] * len(names)
    fill = _nodata(nodata, out_dtype, result.attrs.get("background_label"))
    scalars = {name: c for name, c in result.coords.items() if c.ndim == 0}
    grid = _pixel_grid(result)  # an image without georeferencing: on GDAL's pixel grid
    y, x = (result.y, result.x) if grid is None else (("y", grid[0]), ("x", grid[1]))
    out = xr.DataArray(
        _tiled(data, tile),
        dims=("band", "y", "x"),
        coords={"band": np.arange(1, len(names) + 1), "y": y, "x": x, **scalars},
        name=result.name,
        attrs={
            **_metadata(result.attrs),
            **_resolution_tags(result),
            "xfskde_geotiff_layout": layout,
            "long_name": tuple(names),
        },
    )
    grid_mapping = result.encoding.get("grid_mapping") or result.attrs.get("grid_mapping")
    if grid_mapping in scalars:
        out.encoding["grid_mapping"] = grid_mapping
    out = out.rio.write_nodata(fill)
    # absolute: on a cluster the workers open the file themselves, in their own directory
    path = Path(os.fspath(path)).absolute()
    target = path.with_name(path.name + ".gtiff.tmp") if cog else path
    # an older file's names and colours, which GDAL would read as the new file's
    pam_sidecar(path).unlink(missing_ok=True)
    options = {"compress": compress} if compress.lower() != "none" else {}
    lock = _write_lock(path) if isinstance(out.data, da.Array) else None
    if lock is not None:  # the tasks write their tiles themselves
        refuse_unshared_folder(path.resolve().parent)
        check_room([out.data])  # on a cluster too small, before a file there is replaced
    # GDAL's block cache kept small (its default, 5 % of the memory, held the tiles of a
    # slide's labels: 1.30 against 1.14 GiB at the peak of a 16384² `xfskde segment`, as fast)
    with rasterio.Env(GDAL_CACHEMAX=_GDAL_CACHE_MB), warnings.catch_warnings():
        if grid is not None:  # at stride 1 the identity, which GDAL leaves out, as the input did
            warnings.simplefilter("ignore", rasterio.errors.NotGeoreferencedWarning)
        try:
            # BigTIFF where the uncompressed bands could pass 4 GB (GDAL's default, IF_NEEDED,
            # cannot tell for a compressed file, and fails when it does pass)
            pending = out.rio.to_raster(
                target, driver="GTiff", tiled=True, blockxsize=tile, blockysize=tile,
                recalc_transform=False, lock=lock, BIGTIFF="IF_SAFER", compute=False, **options,
            )  # fmt: skip
            if pending is not None:  # the tasks that write the tiles (Dask-backed data)
                compute_collections([pending], check=False)
            with rasterio.open(target, "r+") as written:  # rioxarray writes no band units
                for band, tags in enumerate(per_band, start=1):
                    if "units" in tags:
                        written.set_band_unit(band, tags["units"])
                    written.update_tags(band, **tags)
                if table:  # palette-coloured: GDAL and QGIS show the labels as categories
                    written.write_colormap(1, table)
            if cog:
                # the tiles, compressed as the COG's, are copied as they are; the overviews are
                # compressed on every core (a 16384² slide's three float maps: 59 -> 30 s)
                rasterio.shutil.copy(
                    target, path, driver="COG", blocksize=tile, num_threads="ALL_CPUS",
                    overview_resampling=overview_resampling, **options,
                )  # fmt: skip
        finally:
            if cog and target.exists():
                target.unlink()
    if categories:  # after the file: GDAL replacing a GeoTIFF removes its sidecar too
        _write_pam(path, categories, table)
    return path
