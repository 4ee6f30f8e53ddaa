"""What ``xfskde info IMAGE`` says about an input image: its format and, for each pyramid level,
the shape, dtype, tile (or chunk) and pixel size.

Only metadata are read (a PNG or JPEG, small by definition, is decoded). The pixel size comes
from, in this order: an OME-TIFF's ``PhysicalSizeY``/``PhysicalSizeX`` (unit: their
``...Unit``, OME's default µm); an Aperio SVS's ``MPP`` (µm); a GeoTIFF's ``ModelPixelScale`` or
``ModelTransformation`` (GDAL's GeoTransform; unit: the linear or angular unit of its GeoKeys);
the TIFF ``XResolution``/``YResolution`` tags when their ``ResolutionUnit`` is an inch or a
centimetre (µm); an OME-Zarr level's ``scale`` transformations (unit: its axes' ``unit``); the
spacing of a Zarr group's ``y``/``x`` coordinate arrays; a PNG's or JPEG's dots per inch. A level
without its own is given level 0's, scaled by the ratio of their shapes (an OME-TIFF records
only the full resolution's, a GeoTIFF's overviews have no GeoKeys).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import tifffile
import zarr

from ..exceptions import ImageReadError

#: Files described with tifffile, and files read whole (as :func:`xfskde.io.open_image` does).
TIFF_SUFFIXES = (".tif", ".tiff", ".svs", ".ndpi", ".scn", ".btf", ".qptiff")
PLAIN_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".npy")
#: Group attrs that only xfskde's stores carry.
STORE_ATTRS = ("xfskde_status", "xfskde_parameters")
#: GDAL's TIFF tag holding the nodata value as ASCII text.
_GDAL_NODATA = 42113
#: Micrometres per TIFF ResolutionUnit (2: inch, 3: centimetre).
_UM_PER_UNIT = {2: 25400.0, 3: 10000.0}
#: GeoKey unit names as they are usually written.
_UNIT_NAMES = {"Meter": "m", "Foot": "ft", "Foot_US_Survey": "US survey ft", "Degree": "°"}


class Level(NamedTuple):
    """One pyramid level: shape (in the image's axes), dtype, native tile or chunk, and the
    pixel size ``(y, x)`` with its unit (None when the file does not say)."""

    shape: tuple[int, ...]
    dtype: str
    tile: str
    pixel_size: tuple[float, float] | None
    unit: str | None


class ImageDescription(NamedTuple):
    """What ``xfskde info`` prints: ``rows`` of (key, value), then one :class:`Level` each."""

    rows: list[tuple[str, str]]
    levels: list[Level]


def is_image(path: str) -> bool:
    """Whether ``path`` is an input image rather than a store xfskde wrote.

    Files are images; a directory is one when it is a Zarr array, or a Zarr group without
    xfskde's store attrs. Paths that do not exist, URLs and directories that are no Zarr node
    are left to the store's reader, which says what is wrong with them.
    """
    if "://" in str(path):
        return False
    local = Path(os.fspath(path))
    if not local.exists():
        return False
    if local.is_file():
        return True
    try:
        node = zarr.open(str(local), mode="r")
    except (OSError, KeyError, ValueError, zarr.errors.BaseZarrError):
        return False
    return not (isinstance(node, zarr.Group) and any(a in node.attrs for a in STORE_ATTRS))


# ---------------------------------------------------------------------------------- helpers


def _scaled(
    size: tuple[float, float] | None, shape0: tuple[int, int], shape: tuple[int, int]
) -> tuple[float, float] | None:
    """Level 0's pixel size carried to a level of ``shape``: larger by the ratio of the sides."""
    if size is None:
        return None
    return size[0] * shape0[0] / shape[0], size[1] * shape0[1] / shape[1]


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def _rational(tag: Any) -> float | None:
    """A TIFF RATIONAL tag's value as a float (tifffile gives ``(numerator, denominator)``)."""
    if tag is None:
        return None
    value = tag.value
    if isinstance(value, tuple) and len(value) == 2:
        return _number(value[0] / value[1]) if value[1] else None
    return _number(value)


# -------------------------------------------------------------------------------------- TIFF


def _ome_size(tif: tifffile.TiffFile) -> tuple[tuple[float, float] | None, str | None]:
    """The first image's PhysicalSizeY/X and unit from the OME-XML (None if not given)."""
    try:
        ome = tifffile.xml2dict(tif.ome_metadata or "").get("OME", {})
    except Exception:  # malformed XML: no pixel size, the rest is still described
        return None, None
    image = ome.get("Image", {})
    pixels = (image[0] if isinstance(image, list) else image).get("Pixels", {})
    y, x = _number(pixels.get("PhysicalSizeY")), _number(pixels.get("PhysicalSizeX"))
    if y is None and x is None:
        return None, None
    y, x = y or x, x or y  # one given: square pixels
    unit = pixels.get("PhysicalSizeXUnit") or pixels.get("PhysicalSizeYUnit") or "µm"
    return (float(y), float(x)), str(unit)


def _svs_mpp(description: str) -> float | None:
    """The µm per pixel of an Aperio SVS, from its ImageDescription's ``|MPP = 0.499``."""
    for part in description.split("|")[1:]:
        key, _, value = part.partition("=")
        if key.strip() == "MPP":
            return _number(value.strip())
    return None


def _unit_name(key: Any) -> str:
    name = getattr(key, "name", None) or str(key)
    return _UNIT_NAMES.get(name, name)


def _geo_size(tif: tifffile.TiffFile) -> tuple[tuple[float, float] | None, str | None]:
    """The pixel size of a GeoTIFF's GeoTransform, in the units of its CRS."""
    geo = tif.geotiff_metadata or {}
    if "ModelTransformation" in geo:
        m = np.asarray(geo["ModelTransformation"], float).reshape(-1)
        size = (math.hypot(m[1], m[5]), math.hypot(m[0], m[4]))
    elif "ModelPixelScale" in geo:
        scale = geo["ModelPixelScale"]
        size = (abs(float(scale[1])), abs(float(scale[0])))
    else:
        return None, None
    if not all(s > 0 for s in size):
        return None, None
    model = getattr(geo.get("GTModelTypeGeoKey"), "name", "")
    if model == "Geographic":
        key = geo.get("GeogAngularUnitsGeoKey")
    else:
        key = geo.get("ProjLinearUnitsGeoKey")
    return size, _unit_name(key) if key is not None else "CRS units"


def _resolution_size(page: Any) -> tuple[float, float] | None:
    """A page's pixel size in µm from its resolution tags (None without a physical unit)."""
    unit = page.tags.get("ResolutionUnit")
    um = _UM_PER_UNIT.get(int(unit.value)) if unit is not None else None
    y, x = _rational(page.tags.get("YResolution")), _rational(page.tags.get("XResolution"))
    if um is None or y is None or x is None:
        return None
    return um / y, um / x


def _tile(page: Any) -> str:
    if page.is_tiled:
        return f"({page.tilelength}, {page.tilewidth})"
    rows = min(page.rowsperstrip or page.imagelength, page.imagelength)
    return f"({rows}, {page.imagewidth}) strip"


def _describe_tiff(path: Path) -> ImageDescription:
    try:
        with tifffile.TiffFile(path) as tif:
            series = tif.series[0]
            levels = list(series.levels)
            axes = series.axes
            iy, ix = axes.index("Y"), axes.index("X")
            shapes = [(int(lv.shape[iy]), int(lv.shape[ix])) for lv in levels]
            flavour = next(
                (name for name, yes in (("OME-TIFF", tif.is_ome), ("SVS", tif.is_svs),
                 ("NDPI", tif.is_ndpi), ("GeoTIFF", tif.is_geotiff)) if yes),
                "TIFF",
            )  # fmt: skip
            size, unit, source = None, None, None
            if tif.is_ome:
                size, unit = _ome_size(tif)
                source = "OME-XML PhysicalSizeY/X"
            if size is None and tif.is_svs:
                mpp = _svs_mpp(tif.pages.first.description)
                size, unit, source = ((mpp, mpp), "µm", "SVS MPP") if mpp else (None, None, None)
            if size is None and tif.is_geotiff:
                size, unit = _geo_size(tif)
                source = "GeoTIFF GeoTransform"
            own: list[tuple[float, float] | None] = [None] * len(levels)
            if size is None:  # resolution tags, which each level may carry for itself
                own = [_resolution_size(lv.keyframe) for lv in levels]
                if own[0] is not None:
                    size, unit, source = own[0], "µm", "TIFF resolution tags"
            described = []
            for lv, shape, mine in zip(levels, shapes, own, strict=True):
                pixel = mine or _scaled(size, shapes[0], shape)
                described.append(
                    Level(tuple(int(n) for n in lv.shape), str(lv.dtype), _tile(lv.keyframe),
                          pixel, unit if pixel is not None else None)
                )  # fmt: skip
            first = levels[0].keyframe
            compression = getattr(first.compression, "name", str(first.compression))
            nodata = first.tags.get(_GDAL_NODATA)
            series_count = len(tif.series)
            bigtiff = tif.is_bigtiff
    except (OSError, tifffile.TiffFileError, ValueError, IndexError) as exc:
        raise ImageReadError(f"cannot read {path} as a TIFF image: {exc}") from exc
    rows = [
        ("format", flavour + (" (BigTIFF)" if bigtiff else "")),
        ("series", f"{series_count} (xfskde reads the first)" if series_count > 1 else "1"),
        ("axes", axes),
        ("compression", compression.lower()),
    ]
    if nodata is not None:
        rows.append(("nodata", f"{str(nodata.value).strip(chr(0) + ' ')} (GDAL_NODATA tag)"))
    rows.append(("pixel_size", f"from the {source}" if size is not None else "not recorded"))
    return ImageDescription(rows, described)


# -------------------------------------------------------------------------------------- Zarr


def _axis_names(axes: list) -> list[str]:
    return [str(a.get("name") if isinstance(a, dict) else a).lower() for a in axes]


def _scale(transforms: Any) -> list[float] | None:
    for t in transforms or []:
        if isinstance(t, dict) and t.get("type") == "scale" and "scale" in t:
            return [float(s) for s in t["scale"]]
    return None


def _array_level(array: zarr.Array, pixel: tuple[float, float] | None, unit: str | None) -> Level:
    return Level(
        tuple(int(n) for n in array.shape),
        str(array.dtype),
        str(tuple(int(c) for c in array.chunks)),
        pixel,
        unit if pixel is not None else None,
    )


def _spacing(group: zarr.Group, name: str) -> tuple[float | None, str | None]:
    """The step of an evenly spaced 1-D coordinate array ``name`` of a group, and its units."""
    if name not in group or not isinstance(group[name], zarr.Array) or group[name].ndim != 1:
        return None, None
    values = np.asarray(group[name][:], float)
    steps = np.diff(values)
    if steps.size == 0 or not np.allclose(steps, steps[0], rtol=1e-6, atol=0):
        return None, None
    units = group[name].attrs.get("units")
    return abs(float(steps[0])) or None, str(units) if units else None


def _describe_zarr(path: Path) -> ImageDescription:
    try:
        node = zarr.open(str(path), mode="r")
    except (OSError, KeyError, ValueError, zarr.errors.BaseZarrError) as exc:
        raise ImageReadError(f"{path} is not a readable Zarr array or group ({exc})") from exc
    version = f"Zarr v{node.metadata.zarr_format}"
    if isinstance(node, zarr.Array):
        dims = node.metadata.dimension_names if hasattr(node.metadata, "dimension_names") else None
        rows = [("format", f"{version} array")]
        if dims:
            rows.append(("dims", " ".join(str(d) for d in dims)))
        return ImageDescription(rows, [_array_level(node, None, None)])
    attrs = dict(node.attrs)
    multiscales = attrs.get("multiscales") or attrs.get("ome", {}).get("multiscales")
    if multiscales:
        ms = multiscales[0]
        axes = ms.get("axes", [])
        names = _axis_names(axes)
        units = [a.get("unit") if isinstance(a, dict) else None for a in axes]
        iy = names.index("y") if "y" in names else len(names) - 2
        ix = names.index("x") if "x" in names else len(names) - 1
        outer = _scale(ms.get("coordinateTransformations")) or [1.0] * len(names)
        ome = attrs.get("ome", {}).get("version") or ms.get("version") or "?"
        levels = []
        for dataset in ms.get("datasets", []):
            array = node[str(dataset.get("path"))]
            scale = _scale(dataset.get("coordinateTransformations"))
            pixel = None
            if scale is not None and len(scale) == len(names):
                pixel = (scale[iy] * outer[iy], scale[ix] * outer[ix])
            unit = (units[ix] or units[iy]) if units else None
            levels.append(_array_level(array, pixel, unit))
        rows = [("format", f"OME-Zarr {ome} multiscales ({version})"), ("axes", " ".join(names))]
        return ImageDescription(rows, levels)
    arrays = [(name, array) for name, array in node.arrays() if array.ndim >= 2]
    if not arrays:
        raise ImageReadError(f"{path} is a Zarr group with no image array (2-D or more)")
    (y, y_units), (x, x_units) = _spacing(node, "y"), _spacing(node, "x")
    pixel = (y, x) if y and x else None
    levels = [_array_level(array, pixel, x_units or y_units) for _, array in arrays]
    rows = [("format", f"{version} group"), ("arrays", ", ".join(name for name, _ in arrays))]
    if len(arrays) > 1:
        rows.append(("note", "one row per array; open_image needs one: pass PATH/NAME"))
    return ImageDescription(rows, levels)


# ------------------------------------------------------------------------------ plain files


def _describe_plain(path: Path) -> ImageDescription:
    if path.suffix.lower() == ".npy":
        try:
            array = np.load(path, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise ImageReadError(f"cannot read {path} as an image: {exc}") from exc
        level = Level(tuple(array.shape), str(array.dtype), "whole image", None, None)
        return ImageDescription([("format", "NumPy .npy (read into memory)")], [level])
    try:
        from PIL import Image
        from skimage import io as skio

        pixels = skio.imread(path)
        with Image.open(path) as opened:
            fmt, dpi = opened.format or path.suffix[1:].upper(), opened.info.get("dpi")
    except (OSError, ValueError) as exc:
        raise ImageReadError(f"cannot read {path} as an image: {exc}") from exc
    pixel = None
    if isinstance(dpi, tuple) and len(dpi) == 2 and all(_number(d) for d in dpi):
        pixel = (25400.0 / float(dpi[1]), 25400.0 / float(dpi[0]))
    level = Level(tuple(pixels.shape), str(pixels.dtype), "whole image", pixel,
                  "µm" if pixel else None)  # fmt: skip
    rows = [("format", f"{fmt} (read into memory)")]
    return ImageDescription(rows, [level])


def describe_image(path: str) -> ImageDescription:
    """The description of the image at ``path`` (TIFF family, Zarr, PNG/JPEG/..., NPY).

    Raises
    ------
    ImageReadError
        For a file in another format, or one that cannot be read.
    """
    local = Path(os.fspath(path))
    name = local.name.lower()
    if local.is_dir() or name.endswith(".zarr"):
        return _describe_zarr(local)
    if name.endswith(TIFF_SUFFIXES):
        return _describe_tiff(local)
    if name.endswith(PLAIN_SUFFIXES):
        return _describe_plain(local)
    raise ImageReadError(
        f"cannot describe {path}: it is neither a store written by xfskde nor an image xfskde "
        "reads (TIFF/OME-TIFF/SVS, Zarr, PNG, JPEG or NPY)"
    )


def level_table(levels: list[Level]) -> list[list[str]]:
    """The rows of the levels' table, header first."""
    table = [["level", "shape", "dtype", "tile/chunk", "pixel size (y, x)"]]
    for i, level in enumerate(levels):
        if level.pixel_size is None:
            pixel = "unknown"
        else:
            y, x = level.pixel_size
            pixel = f"({y:.6g}, {x:.6g}) {level.unit or ''}".rstrip()  # no unit: none said
        table.append([str(i), str(level.shape), level.dtype, level.tile, pixel])
    return table
