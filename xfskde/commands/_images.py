"""What ``xfskde info IMAGE`` says about an input image: its format and, for each pyramid level,
the shape, dims, dtype, native tile (or chunk) and pixel size.

The levels are :func:`xfskde.io.images.image_levels`' — the rules by which ``open_image`` reads
pixel sizes, in one place — and the rows above them (format, compression, nodata, where the
pixel size comes from) are read here from the file's header. Only metadata are read (a PNG or
JPEG, small by definition, is decoded).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import tifffile
import zarr

from .._labels import band_scales, channel_names, crs_wkt, gcp_count, parse_crs, value_scale
from ..exceptions import ImageReadError
from ..io import locate, open_image
from ..io._gdal import GDAL_FORMATS, gdal_format, gdal_levels
from ..io.geotiff import PAM_SIDECAR, pam_category_names
from ..io.images import (
    ImageLevel,
    ZarrSeries,
    bioformats2raw_series,
    file_format,
    gdal_pairs,
    image_levels,
    is_plane_axis,
    is_product,
    is_store,
    ome_pairs,
    tiff_extra_samples,
    tiff_mask_file,
    tiff_pixel_size_source,
    tiff_values,
    transparency_mask_series,
)
from ..io.ometiff import ANNOTATION_NAMESPACE
from ..io.png import png_attrs

#: Group attrs that only xfskde's stores carry.
STORE_ATTRS = ("xfskde_status", "xfskde_parameters")
#: GDAL's TIFF tag holding the nodata value as ASCII text.
_GDAL_NODATA = 42113
#: The TIFF tag of GDAL's metadata (a GeoTIFF's attrs, as items).
_GDAL_METADATA = 42112


class ImageDescription(NamedTuple):
    """What ``xfskde info`` prints: ``rows`` of (key, value), then one level each."""

    rows: list[tuple[str, str]]
    levels: list[ImageLevel]


def is_image(path: str) -> bool:
    """Whether ``path`` is an input image rather than a store xfskde wrote.

    Files are images; a directory (or a URL's prefix, or a zip file) is one when it is a Zarr
    array, or a Zarr group without xfskde's store attrs. Paths that do not exist and
    directories that are no Zarr node are left to the store's reader, which says what is
    wrong with them.
    """
    location = locate(path)
    if location.is_local and not location.exists():
        return False
    if not is_store(location) or is_product(location):
        return True  # a Sentinel-2 product's folder or zip: an input, refused with the way in
    if location.is_local and location.is_file() and not location.is_zip:
        return True
    try:
        node = zarr.open(location.zarr_store(read_only=True), mode="r")
    except (OSError, KeyError, ValueError, zarr.errors.BaseZarrError):
        return False
    return not (isinstance(node, zarr.Group) and any(a in node.attrs for a in STORE_ATTRS))


# -------------------------------------------------------------------------------------- TIFF


def _series_row(tif: tifffile.TiffFile) -> str:
    """How many images a TIFF holds; for several, each one's index, name and axes."""
    if len(tif.series) == 1:
        return "1"
    if len(tif.series) == 2 and transparency_mask_series(tif, 0) == 1:
        return "1, and its transparency mask (GDAL's internal mask: where it is 0 is missing)"
    each = ", ".join(
        f"{i} {s.name!r} {s.axes}" if s.name else f"{i} {s.axes}" for i, s in enumerate(tif.series)
    )
    return f"{len(tif.series)}: {each} (the first is read; --series N|NAME reads another)"


def _describe_tiff(path: str, levels: list[ImageLevel]) -> list[tuple[str, str]]:
    """The rows of a TIFF: its flavour, series, axes, compression, nodata and where its pixel
    size comes from (the levels themselves come from :func:`xfskde.io.images.image_levels`)."""
    try:
        with locate(path).open() as file, tifffile.TiffFile(file) as tif:
            first = tif.series[0].levels[0].keyframe
            flavour = next(
                (name for name, yes in (("OME-TIFF", tif.is_ome), ("SVS", tif.is_svs),
                 ("NDPI", tif.is_ndpi), ("GeoTIFF", tif.is_geotiff)) if yes),
                "TIFF",
            )  # fmt: skip
            # where open_image reads it (an OME-TIFF's may be its resolution tags), or why not
            source = ("from the GeoTIFF GeoTransform" if flavour == "GeoTIFF"
                      else tiff_pixel_size_source(tif))  # fmt: skip
            compression = getattr(first.compression, "name", str(first.compression))
            nodata = first.tags.get(_GDAL_NODATA)
            recorded = ome_pairs(tif.ome_metadata, ANNOTATION_NAMESPACE) if tif.is_ome else []
            tag = first.tags.get(_GDAL_METADATA)
            gdal = gdal_pairs(None if tag is None else str(tag.value))
            if not recorded and "xfskde_version" in gdal:  # a GeoTIFF xfskde wrote: its attrs
                recorded = [("GDAL metadata", gdal)]
            rows = [
                ("format", flavour + (" (BigTIFF)" if tif.is_bigtiff else "")),
                ("series", _series_row(tif)),
                ("axes", tif.series[0].axes),
                ("compression", compression.lower()),
            ]  # fmt: skip
            tiled = first.is_tiled
            if (values := tiff_values(tif, first, locate(path))) is not None:
                rows.append(("values", values))
            rows += tiff_extra_samples(first)  # an alpha channel, or channels of no meaning
    except (OSError, tifffile.TiffFileError, ValueError, IndexError) as exc:
        raise ImageReadError(f"cannot read {path} as a TIFF image: {exc}") from exc
    if nodata is not None:
        rows.append(("nodata", f"{str(nodata.value).strip(chr(0) + ' ')} (GDAL_NODATA tag)"))
    if (sidecar := tiff_mask_file(locate(path))) is not None:
        rows.append(("mask", f"{sidecar.name} beside it (GDAL's transparency mask: where it is "
                     "0 is missing)"))  # fmt: skip
    rows += _category_rows(path)
    for name, pairs in (r for r in recorded if r[1]):  # an OME-TIFF or GeoTIFF xfskde wrote
        model = f", the texture model of {pairs['n_textures']} textures" if (
            "endmembers" in pairs and "n_textures" in pairs) else ""  # fmt: skip
        rows.append(("xfskde", f"{name}: {len(pairs)} key-value pairs{model}"))
    if levels[0].pixel_size is None and source.startswith("from"):
        source = "not recorded"  # a level the record does not fit: none is read
    rows.append(("pixel_size", source))
    rows.append(("tiles", "tiled" if tiled else "strips"))
    return rows


# -------------------------------------------------------------------------------------- Zarr


def _zarr_series_row(series: list[ZarrSeries]) -> str:
    """How many images a bioformats2raw store holds; for several, each one's index, name and
    group (where it is not named by its index), as for a TIFF."""
    if len(series) == 1:
        return "1"
    each = ", ".join(
        " ".join([str(i), *([repr(s.name)] if s.name else []),
                  *([f"(group {s.path}/)"] if s.path != str(i) else [])])
        for i, s in enumerate(series)
    )  # fmt: skip
    return f"{len(series)}: {each} (the first is read; --series N|NAME reads another)"


def _describe_zarr(path: str) -> list[tuple[str, str]]:
    location = locate(path)
    try:
        node = zarr.open(location.zarr_store(read_only=True), mode="r")
    except (OSError, KeyError, ValueError, zarr.errors.BaseZarrError) as exc:
        raise ImageReadError(f"{path} is not a readable Zarr array or group ({exc})") from exc
    version = f"Zarr v{node.metadata.zarr_format}{', zipped' if location.is_zip else ''}"
    if isinstance(node, zarr.Array):
        return [("format", f"{version} array")]
    attrs = dict(node.attrs)
    series = bioformats2raw_series(node)
    if series:  # a bioformats2raw store: its series, the first described
        attrs = dict(node[series[0].path].attrs)
        multiscales = attrs.get("multiscales") or attrs.get("ome", {}).get("multiscales") or [{}]
        ome = attrs.get("ome", {}).get("version") or multiscales[0].get("version") or "?"
        return [("format", f"OME-Zarr {ome}, bioformats2raw layout ({version})"),
                ("series", _zarr_series_row(series))]  # fmt: skip
    multiscales = attrs.get("multiscales") or attrs.get("ome", {}).get("multiscales")
    if multiscales:
        ome = attrs.get("ome", {}).get("version") or multiscales[0].get("version") or "?"
        return [("format", f"OME-Zarr {ome} multiscales ({version})")]
    return [("format", f"{version} group")]


# ------------------------------------------------------------------------------------ GDAL


def _describe_gdal(path: str) -> list[tuple[str, str]]:
    """The rows of a raster read through GDAL: its format and driver, nodata, alpha and where
    its pixel size comes from."""
    location = locate(path)
    first = gdal_levels(location)[0]
    rows = [("format", f"{gdal_format(location)} (GDAL's {first.driver} driver, via rasterio)")]
    values = ["none" if v is None else f"{v:g}" for v in first.nodatavals]
    if len(set(values)) > 1:  # a VRT stack of bands with values of their own
        each = ", ".join(f"{v} (band {i})" for i, v in enumerate(values, 1))
        rows.append(("nodata", f"{each}: each band its own"))
    elif first.nodata is not None:
        rows.append(("nodata", f"{first.nodata:g}"))
    if first.alpha is not None:
        rows.append(("alpha", f"band {first.alpha + 1}: its transparent pixels are missing"))
    if first.masked:
        rows.append(("mask", "GDAL's mask of the raster: where it is 0 is missing"))
    if first.driver == "VRT":
        sources = [f for f in first.files if not f.lower().endswith((".aux.xml", ".ovr"))]
        names = ", ".join(Path(f).name for f in sources[:3]) + (", ..." if sources[3:] else "")
        rows.append(("sources", f"{len(sources)} file{'s' * (len(sources) != 1)} ({names})"))
    known = first.pixel_size is not None
    rows.append(("pixel_size", "from the GeoTransform" if known else "not recorded"))
    return rows


# ------------------------------------------------------------------------------ plain files


def _describe_plain(path: str) -> list[tuple[str, str]]:
    if path.lower().endswith(".npy"):
        return [("format", "NumPy .npy (read into memory)")]
    rows = [("format", f"{Path(path).suffix[1:].upper()} (read into memory)")]
    palette = _palette_row(path)
    if palette is not None:
        rows.append(("palette", palette))
    rows += _picture_rows(path)
    if path.lower().endswith(".png"):  # one xfskde wrote: what it holds, and how to read it
        with locate(path).open() as file:
            recorded = png_attrs(file)
        if "n_textures" in recorded:
            rows.append(("xfskde", f"text chunk: {len(recorded)} key-value pairs, the texture "
                         f"model of {recorded['n_textures']} textures; the labels are the "
                         "palette's indices (np.asarray(PIL.Image.open(path)); --model takes "
                         "it)"))  # fmt: skip
        elif recorded:
            rows.append(("xfskde", f"text chunk: {len(recorded)} key-value pairs; a picture "
                         "of the maps (hue orientation, brightness coherence), not their "
                         "values"))  # fmt: skip
    return rows


def _picture_rows(path: str) -> list[tuple[str, str]]:
    """What else a picture's file stores that is not read as it is: a CMYK picture's inks
    (read as RGB), an animated picture's frames (one is read)."""
    from PIL import Image

    from .._pictures import CONVERTED_MODES, animation

    rows = []
    with locate(path).open() as file, Image.open(file) as picture:
        if picture.mode in CONVERTED_MODES:
            rows.append(("colour", f"stores {picture.mode} (print inks); read as "
                         f"{CONVERTED_MODES[picture.mode]}, as Pillow converts it "
                         f"(picture.convert({CONVERTED_MODES[picture.mode]!r}))"))  # fmt: skip
        film = animation(picture)
    if film is not None:
        rows.append(("frames", f"{film}, along t (open_image(path, plane={{'t': N}}))"))
    return rows


def _category_rows(path: str) -> list[tuple[str, str]]:
    """The ``classes`` row of a raster whose GDAL PAM sidecar names its values (a labels
    GeoTIFF of ``xfskde segment``: ``labels.tif.aux.xml``, which QGIS and gdalinfo read),
    else none."""
    sidecar = locate(path).name + PAM_SIDECAR
    try:
        names = pam_category_names(locate(path))
    except ValueError as exc:
        return [("classes", f"{sidecar} beside it cannot be read ({exc}); GDAL ignores it")]
    if not names:
        return []
    listed = ", ".join(f"{value} {name}" for value, name in enumerate(names[:8]))
    return [("classes", f"{listed}{' ...' * (len(names) > 8)} ({sidecar} beside it: GDAL's "
             "category names and attribute table, which QGIS and gdalinfo show)")]  # fmt: skip


def _palette_row(path: str) -> str | None:
    """What a palette picture (a PNG or GIF of PIL's mode ``"P"`` or ``"PA"``: xfskde's
    labels, a quantised photo) stores, and how :func:`xfskde.open_image` reads it — as the
    RGB colours of its indices, which the levels' table then describes (float32, NaN where a
    colour is transparent) — or None for any other picture."""
    from PIL import Image

    with locate(path).open() as file, Image.open(file) as picture:
        if picture.mode not in ("P", "PA"):
            return None
        colours = len(picture.getpalette() or ()) // 3
        height, width = picture.height, picture.width
        clear = picture.info.get("transparency")
    if isinstance(clear, int):
        clear_text = f", index {clear} transparent"
    elif isinstance(clear, bytes) and any(a < 255 for a in clear):
        clear_text = f", {sum(a < 255 for a in clear)} of them (partly) transparent"
    else:
        clear_text = ""
    missing = " (transparent pixels missing: NaN)" if clear_text else ""
    return (
        f"stores ({height}, {width}) indices into a palette of {colours} colours"
        f"{clear_text}; read as their RGB colours{missing}, as the levels below say "
        "(the indices: np.asarray(PIL.Image.open(path)); as --mask the indices are read)"
    )


def describe_image(path: str, dims: tuple[str, ...] | None = None) -> ImageDescription:
    """The description of the image at ``path`` (TIFF family, Zarr, PNG/JPEG/..., NPY): rows
    about its format, and its levels as :func:`xfskde.io.images.image_levels` reads them
    (``dims``: the names of the axes of an image that records none).

    Raises
    ------
    ImageReadError
        For a file in another format, or one that cannot be read.
    """
    levels = image_levels(path, dims=dims)
    location = locate(path)
    if is_store(location):
        rows = _describe_zarr(path)
    elif (kind := file_format(location)) == "tiff":
        rows = _describe_tiff(path, levels)
    elif kind == "gdal":
        rows = _describe_gdal(path)
    else:
        rows = _describe_plain(path)
    rows.append(("dims", " ".join(levels[0].dims)))
    planes = {
        d: n
        for d, n in zip(levels[0].dims, levels[0].shape, strict=True)
        if is_plane_axis(d) and n > 1
    }
    if planes:  # a z-stack, a time series: the commands refuse it without --plane
        counts = ", ".join(f"{d} {n}" for d, n in planes.items())
        choice = ",".join(f"{d.lower()}=N" for d in planes)
        ranges = ", ".join(f"{d.lower()}=0 to {d.lower()}={n - 1}" for d, n in planes.items())
        rows.append(("planes", f"{counts} (coefficients, maps and segment read one plane: "
                     f"--plane {choice} chooses it, {ranges})"))  # fmt: skip
    located = dict(rows)["format"].startswith(("GeoTIFF", "Zarr", *GDAL_FORMATS.values()))
    if located or "c" in levels[0].dims:
        # lazy: the header and coordinates only (of the first plane: all share them)
        opened = open_image(path, plane=dict.fromkeys(planes, 0) or None, dims=dims)
        names = channel_names(opened)  # OME-XML, OME-Zarr omero labels, band descriptions
        if names is not None:
            rows.append(("channels", ", ".join(names)))
        wkt = crs_wkt(opened) if located else None
        if wkt is not None:
            rows.append(("crs", crs_description(wkt)))
        gcps = gcp_count(opened) if located else 0
        if gcps:
            rows.append(("georeferencing", f"by {gcps} ground control points (GCPs), no "
                         "GeoTransform: copied to *.tif outputs (on their cells), not used to "
                         "place them; regions (*.geojson, *.gpkg) are refused"))  # fmt: skip
        scale, units = value_scale(opened)
        offset = opened.attrs.get("add_offset", 0)
        unit = f" in {units}" if units else ""
        scales = band_scales(opened)
        if scales is not None:
            each = ", ".join(f"{s:g}" for s in scales)
            rows.append(("values", f"stored x {each} band by band{unit} (GDAL scales; decoded "
                         "before the gradients)"))  # fmt: skip
        elif scale != 1.0 or (isinstance(offset, int | float) and offset):
            rows.append(("values", f"stored x {scale:g} {offset:+g}{unit} (GDAL scale, offset; "
                         "the energy map is of the decoded values)"))  # fmt: skip
    return ImageDescription(rows, levels)


def crs_description(wkt: str) -> str:
    """A CRS as people name it: ``EPSG:32632 (WGS 84 / UTM zone 32N)``, or its name where it
    has no authority code; the WKT's first name (or the text itself) where pyproj, installed
    with rioxarray, is missing or cannot read it."""
    crs = parse_crs(wkt)
    if crs is None:
        start = wkt.find('"')
        return wkt[start + 1 : wkt.find('"', start + 1)] if start >= 0 else " ".join(wkt.split())
    code = crs.to_authority(min_confidence=70)
    return f"{code[0]}:{code[1]} ({crs.name})" if code else crs.name


def level_table(levels: list[ImageLevel]) -> list[list[str]]:
    """The rows of the levels' table, header first."""
    table = [["level", "shape", "dtype", "tile/chunk", "pixel size (y, x)"]]
    for i, level in enumerate(levels):
        if level.pixel_size is None:
            pixel = "unknown"
        else:
            y, x = level.pixel_size
            pixel = f"({y:.6g}, {x:.6g}) {level.units or ''}".rstrip()
        table.append([str(i), str(level.shape), str(level.dtype), str(level.tile), pixel])
    return table
