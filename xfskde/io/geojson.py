"""GeoJSON regions in and out: masks drawn as polygons (:func:`polygon_mask`), and texture
labels written as regions for QuPath and GIS (:func:`labels_geojson`, :func:`write_labels_geojson`).

Pathologists draw their regions in QuPath and export them as GeoJSON; remote-sensing scientists
keep an area of interest as a GeoJSON file, a shapefile or GeoPackage, or a GeoDataFrame. Each
is a mask once its polygons are drawn on the image's pixels — :func:`xfskde.masks.resolve_mask`
takes them wherever it takes a mask image (``mask="regions.geojson"``, ``--mask aoi.shp``).
The other vector formats (:data:`VECTOR_FORMATS`) are read by geopandas (GDAL's drivers,
through pyogrio: the ``vector`` extra), with their CRS (a shapefile's ``.prj``), from files
of one layer, local or at a URL (``s3://``, ``https://``: read whole, with the storage options
of their :class:`~xfskde.io.Location`, then handed to GDAL from memory); a shapefile
at a URL, whose sidecar files GDAL cannot reach, is refused unless zipped (``aoi.shp.zip``).
Without geopandas they are refused with the ``ogr2ogr`` line that makes a GeoJSON of them.

**Coordinates.** Which frame the vertices are in is read from the image and the GeoJSON, never
guessed silently:

* An image with a CRS (a GeoTIFF opened with rioxarray): the vertices are in the GeoJSON's
  CRS — its ``crs`` member where it has one (QGIS and GDAL write it for any CRS but WGS 84; a
  GeoDataFrame's ``crs``), else WGS 84 longitude and latitude, as RFC 7946 has it — and are
  transformed to the image's CRS with pyproj (the ``geo`` extra), then placed by the affine
  transform of the image's grid: its regular ``x``/``y`` coords, or its GeoTransform where
  that is rotated (:func:`_scene_grid`). A scene georeferenced by ground control points only
  is refused (:func:`_refuse_gcps`).
* An image without one (a slide, a photograph, an array): the vertices are pixels of the
  image's full resolution — QuPath's convention: ``x`` the column, ``y`` the row,
  ``(0, 0)`` the top-left corner of the top-left pixel. A pyramid level of a file (or the image
  read at ``mpp=``) is placed by the ratio of its sides to level 0's; a crop of one by its
  coordinates when they are lengths (the file records its pixel size); an image of no file is
  its own level 0. A GeoJSON with a ``crs`` member on an image without a CRS is refused.

**Drawing.** A pixel is foreground when its centre lies inside a polygon (its holes excluded;
polygons may overlap), decided as GDAL's rasterizer decides it (:func:`_filled`): a centre on
an edge belongs to one side only, so that two regions sharing an edge never share a pixel.
The mask is the image at one scale: its own grid for an image up to
:data:`MAX_SIDE` pixels on a side, averaged down by a whole factor beyond (a mask pixel then
covers f × f image pixels, as :func:`xfskde.masks.tissue_mask`'s do). Only ``Polygon`` and
``MultiPolygon`` geometries are regions; points and lines (QuPath's detections as centroids)
are left out, and a GeoJSON without any region is refused. QuPath's detections, cells and
tiles (:data:`DETECTION_TYPES`: an export of all objects holds the cells it found inside the
annotations, as polygons) are measured things, not regions of interest: left out too, and an
export of nothing else refused. Regions classified ``Ignore*`` (QuPath's class for what an
analysis leaves out: a fold, a bubble, a pen mark) are cut out of the others
(:data:`IGNORED_CLASS`); ``classes=`` draws those of some classes only. On a plane of a
stack (an image opened with ``plane=``), a region that names its plane (QuPath's
``geometry.plane``: z and t) is drawn only there; one that names none on every plane.

**Writing.** Labels become one ``MultiPolygon`` feature per texture, in the same frames read
back: level-0 pixels for an image without a CRS (QuPath's *Import objects* draws them on the
slide, each texture an annotation of its class, ``"texture 1"`` …, in the library's label
colours), the image's CRS for a scene (its ``crs`` member, as GDAL writes one; none for WGS 84
longitude and latitude, RFC 7946's), through the whole affine transform of the labels' grid
(a rotated GeoTransform's rotation terms included); exteriors counterclockwise and holes
clockwise, as RFC 7946 has them. The outlines run along the pixels' edges, as
``gdal_polygonize`` draws them (:func:`_outlines`), on the labels' grid — every f-th label, f
the whole factor that brings it to at most :data:`MAX_SIDE` pixels on a side — with a vertex
where an outline turns: neighbouring textures share their edges vertex for vertex, so that
their polygons are valid, neither overlap nor leave a gap, and each has the area of its
pixels; GDAL's rasterizer and :func:`polygon_mask` draw each texture's pixels again, every
one. Until 2026-11-30 they were traced between pixel centres texture by texture (marching
squares, then simplified by 0.3 pixel): each corner cut, the textures overlapped and left
gaps, and lost area (a one-pixel island half of it; on noise their union covered 69 % of the
labelled pixels).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from .._labels import (
    aligned_geotransform,
    crs_wkt,
    gcp_count,
    geotransform,
    parse_crs,
    pixel_steps,
)
from .._palette import label_name, label_rgba_8bit
from .._scheduling import compute as compute_collections
from ..exceptions import ParameterError
from ._location import Location, locate, micrometres
from .images import (
    image_levels,
    is_whole_level,
    level_arguments,
    open_image,
    opened_as,
    parse_plane,
)

__all__ = [
    "DETECTION_TYPES",
    "IGNORED_CLASS",
    "MAX_SIDE",
    "VECTOR_FORMATS",
    "WRITTEN_VECTOR_FORMATS",
    "feature_class",
    "geojson_polygons",
    "geopackage_layers",
    "is_polygons",
    "labels_geojson",
    "labels_layer",
    "object_type",
    "polygon_mask",
    "read_geojson",
    "read_labels_attrs",
    "refuse_gcp_regions",
    "regions_format",
    "write_labels_geojson",
    "write_labels_vector",
]

#: The longest side, in mask pixels, of a mask drawn from polygons: an image larger than this
#: gets a mask averaged down by a whole factor (64 Mpx of booleans at most).
MAX_SIDE = 8192
#: QuPath's class for regions to leave out of an analysis (a fold, a bubble, a pen mark): such
#: regions are cut out of the mask the others draw.
IGNORED_CLASS = "Ignore*"
#: QuPath's objects that are measured things, not regions of interest (its ``objectType``):
#: cells and their nuclei, detections, the tiles of a tiling; left out of masks.
DETECTION_TYPES = ("detection", "cell", "tile")
#: QuPath 0.2's object types, the class names it wrote as a feature's ``id``.
_LEGACY_TYPES = {"PathDetectionObject": "detection", "PathCellObject": "cell",
                 "PathTileObject": "tile", "PathAnnotationObject": "annotation",
                 "TMACoreObject": "tma_core"}  # fmt: skip
#: File names read as GeoJSON.
_SUFFIXES = (".geojson", ".json")
#: Other vector formats read as regions through geopandas (GDAL's drivers; the ``vector``
#: extra): their names.
VECTOR_FORMATS = {
    ".shp": "shapefile", ".shp.zip": "zipped shapefile", ".shz": "zipped shapefile",
    ".gpkg": "GeoPackage", ".fgb": "FlatGeobuf", ".kml": "KML", ".gml": "GML",
}  # fmt: skip
#: The CRS of a GeoJSON without a ``crs`` member (RFC 7946).
_WGS84 = "EPSG:4326"


def is_polygons(mask: Any) -> bool:
    """Whether a mask is given as polygons: a GeoJSON file (``.geojson``, ``.json``: a path or
    URL) or another vector file (:data:`VECTOR_FORMATS`), a GeoJSON mapping, or an object with
    ``__geo_interface__`` (shapely, geopandas).

    Parameters
    ----------
    mask : Any
        What was given as a mask.

    Returns
    -------
    bool
        True for polygons; a path is judged by its name alone (no file is opened), a mapping is
        polygons unless it is an xarray.Dataset, a list or tuple when every item is a mapping
        with a ``type``.
    """
    if isinstance(mask, str | os.PathLike | Location):  # by its name: a signed URL's is
        where = mask if isinstance(mask, Location) else Location(os.fspath(mask))  # less its
        return where.name.lower().endswith((*_SUFFIXES, *VECTOR_FORMATS))  # query
    if isinstance(mask, Mapping):  # a mask in no other form is a mapping (but a Dataset)
        return not isinstance(mask, xr.Dataset)
    if isinstance(mask, list | tuple):  # QuPath's export as json.load reads it: its features
        return bool(mask) and all(isinstance(m, Mapping) and "type" in m for m in mask)
    return hasattr(mask, "__geo_interface__")


def _as_image(image: Any) -> xr.DataArray:
    """The image a mask is drawn for as a DataArray: a DataArray as it is, an array of
    ``(y, x)`` or ``(y, x, c)`` labelled so (an image of no file, its own pixels the frame).

    Raises
    ------
    ParameterError
        For anything else.
    """
    if isinstance(image, xr.DataArray):
        return image
    shape = getattr(image, "shape", None)
    if shape is not None and len(shape) in (2, 3):
        dims = ("y", "x", "c")[: len(shape)]
        return xr.DataArray(np.broadcast_to(np.zeros((), np.uint8), shape), dims=dims)
    raise ParameterError(
        f"polygon_mask needs the image as a DataArray (xfskde.open_image(path)) or an array of "
        f"(y, x) or (y, x, c), got {type(image).__name__}"
        + (f" of shape {tuple(shape)}" if shape is not None else "")
    )


def polygon_mask(
    polygons: Any,
    image: xr.DataArray | np.ndarray,
    max_side: int = MAX_SIDE,
    classes: Sequence[str] | None = None,
) -> xr.DataArray:
    """The regions of a GeoJSON drawn on an image's grid: a boolean ``(y, x)`` mask.

    Parameters
    ----------
    polygons : path, URL, mapping or object with ``__geo_interface__``
        A GeoJSON ``FeatureCollection``, ``Feature`` or geometry (a file, its parsed mapping,
        a shapely geometry, a geopandas GeoDataFrame or GeoSeries, whose ``crs`` is read).
    image : xarray.DataArray or numpy.ndarray
        The image the mask is for (as :func:`xfskde.open_image` gives it); its CRS, coords and
        the file it came from tell the vertices' frame (module docstring). An array, ``(y, x)``
        or ``(y, x, c)``, is an image of no file: the vertices are its pixels.
    max_side : int, optional
        The longest side of the mask; a larger image's mask is the image averaged down by a
        whole factor.
    classes : sequence of str, optional
        Draw only the regions of these classes (QuPath's ``classification``, as
        :func:`feature_class` reads it: ``["Tumor"]`` of an export that also holds the
        tissue's outline and the stroma); those classified :data:`IGNORED_CLASS` are cut out
        all the same. Default: every region.

    Returns
    -------
    xarray.DataArray
        True inside the regions. Its attrs record ``source`` (and ``source_version``) for a
        file, ``polygons`` (how many were drawn), the ``classes`` drawn, if chosen,
        ``detections_left_out`` (QuPath's detections, cells and tiles: not regions) and
        ``other_planes_left_out`` (regions on other planes of a stack), if any.

    Raises
    ------
    ParameterError
        For a GeoJSON without regions (of the ``classes``: a class it does not hold is
        refused, naming those it does), one whose frame cannot be told on this image (a
        ``crs`` on an image without one; a crop of a level without a pixel size), or regions
        that lie wholly outside the image.
    """
    image = _as_image(image)
    document, attrs = _read(polygons)
    document, detections = _without_detections(document, _name(polygons))
    if detections:
        attrs["detections_left_out"] = detections
    document, elsewhere = _on_the_plane(document, image, _name(polygons))
    if elsewhere:
        attrs["other_planes_left_out"] = elsewhere
    if classes is not None:
        document, attrs["classes"] = _of_classes(document, [str(c) for c in classes],
                                                 _name(polygons))  # fmt: skip
    rings = list(geojson_polygons(document))
    if not any(not ignored for *_, ignored in rings):
        some = f" but those classified {IGNORED_CLASS}" if rings else ""
        raise ParameterError(
            f"{_name(polygons)} holds no Polygon or MultiPolygon{some}: a mask needs regions "
            "(points and lines are not)"
        )
    to_pixels = _frame(document, image, _name(polygons))
    ny, nx = image.sizes["y"], image.sizes["x"]
    factor = max(1, math.ceil(max(ny, nx) / max_side))
    my, mx = math.ceil(ny / factor), math.ceil(nx / factor)
    scale = (my / ny, mx / nx)  # image pixels (edges at integers) -> mask pixels

    def on_mask(ring: np.ndarray) -> np.ndarray:  # (row, column) of mask pixel centres
        with np.errstate(invalid="ignore", over="ignore"):  # pyproj's inf: refused below
            placed = to_pixels(ring) * np.array(scale)[:, None] - 0.5
        if not np.isfinite(placed).all():  # pyproj's inf: not coordinates of that CRS
            raise ParameterError(
                f"the vertices of {_name(polygons)} cannot be placed on the image: "
                f"{_frame_hint(document, image)}"
            )
        return placed

    mask = np.zeros((my, mx), bool)
    # the regions first, then those QuPath users mark to be ignored (a fold, a pen mark) cut out
    for exterior, holes, ignored in sorted(rings, key=lambda ring: ring[2]):
        region, (top, left) = _drawn(*on_mask(exterior), (my, mx))
        if region is None:
            continue
        for hole in holes:
            hole_rows, hole_cols = on_mask(hole)
            region &= ~_filled(hole_rows - top, hole_cols - left, region.shape)
        part = mask[top : top + region.shape[0], left : left + region.shape[1]]
        if ignored:
            part &= ~region
        else:
            part |= region
    if not mask.any():
        raise ParameterError(
            f"the regions of {_name(polygons)} lie outside the image (no pixel centre of its "
            f"{ny} x {nx} falls inside one): {_frame_hint(document, image)}"
        )
    attrs = {**attrs, "polygons": sum(not ignored for *_, ignored in rings)}
    if factor > 1:
        attrs["downsampled_by"] = factor
    return xr.DataArray(mask, dims=("y", "x"), name="mask", attrs=attrs)


def _drawn(
    rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]
) -> tuple[np.ndarray | None, tuple[int, int]]:
    """The pixels of a ring, drawn on the part of the grid its bounding box covers: that
    part (None when it lies outside the grid) and its top-left pixel."""
    top, left = max(0, math.floor(rows.min())), max(0, math.floor(cols.min()))
    bottom, right = (
        min(shape[0], math.ceil(rows.max()) + 1),
        min(shape[1], math.ceil(cols.max()) + 1),
    )
    if top >= bottom or left >= right:
        return None, (top, left)
    return _filled(rows - top, cols - left, (bottom - top, right - left)), (top, left)


def _filled(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The pixels of a grid whose centres (at integer rows and columns) a ring encloses, as
    GDAL's scan-line rasterizer fills a polygon (``GDALdllImageFilledPolygon``, which
    ``gdal_rasterize`` and rasterio's ``rasterize`` use): each row's crossings of the edges
    that span it half-open, ``[low, high)``; between each pair of crossings ``(a, b]``, the
    centres after ``a`` up to ``b``. A centre on an edge is then inside one of the two
    regions the edge divides, never both — a pixel-centre test that counts the boundary as
    inside (scikit-image's ``polygon``) gave the centres on a shared edge to both (two
    QuPath regions abutting along y = 1750, drawn on level 2, whose row 437 has its centres
    on that edge: its 100 pixels in each)."""
    y0, x0 = np.asarray(rows, float), np.asarray(cols, float)
    y1, x1 = np.roll(y0, -1), np.roll(x0, -1)  # each vertex to the next, the last to the first
    low, high = np.minimum(y0, y1), np.maximum(y0, y1)
    first = np.clip(np.ceil(low), 0, shape[0]).astype(np.int64)  # the rows r: low <= r < high
    stop = np.clip(np.ceil(high), 0, shape[0]).astype(np.int64)
    counts = np.maximum(stop - first, 0)
    edge = np.repeat(np.arange(y0.size), counts)
    row = first[edge] + (np.arange(edge.size) - np.repeat(np.cumsum(counts) - counts, counts))
    down = y1 < y0  # each edge from its lower row, as GDAL computes its crossings
    ya, xa = np.where(down, y1, y0)[edge], np.where(down, x1, x0)[edge]
    yb, xb = np.where(down, y0, y1)[edge], np.where(down, x0, x1)[edge]
    at = (row - ya) * (xb - xa) / (yb - ya) + xa
    order = np.lexsort((at, row))  # by row, then along it: pairs of crossings
    row, at = row[order][0::2], np.stack([at[order][0::2], at[order][1::2]])
    start = np.clip(np.floor(at[0]) + 1, 0, shape[1]).astype(np.int64)  # a < c <= b
    end = np.clip(np.floor(at[1]) + 1, 0, shape[1]).astype(np.int64)
    change = np.zeros((shape[0], shape[1] + 1), np.int32)
    np.add.at(change, (row, start), 1)
    np.add.at(change, (row, end), -1)
    return np.cumsum(change, axis=1)[:, :-1] > 0


def read_geojson(source: Any) -> dict[str, Any]:
    """The GeoJSON object of a file (a path or URL), a mapping, or an object with
    ``__geo_interface__``: a list of features or geometries (QuPath's export) as a
    FeatureCollection; refused (:class:`~xfskde.exceptions.ParameterError`) unless it is one.

    Parameters
    ----------
    source : path, URL, mapping, list or object with ``__geo_interface__``
        The regions: a GeoJSON file, or another vector file (:data:`VECTOR_FORMATS`, read by
        geopandas), a parsed mapping, QuPath's list of features, a shapely geometry or a
        geopandas GeoDataFrame or GeoSeries (its ``crs`` kept as the ``crs`` member unless it is
        WGS 84).

    Returns
    -------
    dict
        The GeoJSON object; a single Feature or a list as a ``FeatureCollection``, QuPath's
        nested ``childObjects`` as features of their own.

    Raises
    ------
    FileNotFoundError
        For a path or URL where there is no file.
    ParameterError
        For what is not GeoJSON, or a vector file that cannot be read (geopandas missing, several
        layers, damaged; a shapefile at a URL).
    """
    return _read(source)[0]


def _read(polygons: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The GeoJSON mapping of ``polygons``, and the attrs its mask records (a file's source
    and version, so that a resumed write knows the mask changed)."""
    if isinstance(polygons, str | os.PathLike | Location):
        where = locate(polygons)
        vector = _vector_format(where) is not None
        if vector and not where.is_local and where.name.lower().endswith(".shp"):
            _refuse_remote_shapefile(where)
        if not where.exists():
            raise FileNotFoundError(f"no such mask: {where}")
        if vector:
            return _read(_read_vector(where))[0], {
                "source": str(where),
                "source_version": where.version(),
            }
        try:
            with where.open() as file:
                document = json.load(file)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ParameterError(f"{where} is not GeoJSON ({error})") from None
        return _checked(document, str(where)), {
            "source": str(where),
            "source_version": where.version(),
        }
    if isinstance(polygons, Mapping):
        return _checked(dict(polygons), "the mask"), {}
    if isinstance(polygons, list | tuple) and not hasattr(polygons, "__geo_interface__"):
        return _checked([dict(f) if isinstance(f, Mapping) else f for f in polygons],
                        "the mask"), {}  # fmt: skip
    document = dict(polygons.__geo_interface__)
    crs = getattr(polygons, "crs", None)  # a GeoDataFrame's or GeoSeries' CRS
    # WGS 84 is what GDAL gives every GeoJSON it reads, a slide's QuPath regions included:
    # what a GeoJSON without a crs member means (RFC 7946; on an image without a CRS, pixels)
    if crs is not None and "crs" not in document and crs.to_epsg() != 4326:
        document["crs"] = {"type": "name", "properties": {"name": crs.to_wkt()}}
    return _checked(document, type(polygons).__name__), {}


def regions_format(source: Any) -> str:
    """The format of a file of regions (:func:`is_polygons`), by its name: ``"GeoJSON"`` or
    one of :data:`VECTOR_FORMATS`.

    Parameters
    ----------
    source : str, os.PathLike or Location
        The file's path or URL.

    Returns
    -------
    str
        ``"GeoJSON"``, or the format's name in :data:`VECTOR_FORMATS` (``"shapefile"``,
        ``"GeoPackage"`` ...).
    """
    return _vector_format(locate(source)) or "GeoJSON"


def _vector_format(where: Location) -> str | None:
    """The name of the vector format a file is in by its suffix (:data:`VECTOR_FORMATS`), or
    None (GeoJSON)."""
    name = where.name.lower()
    return next((kind for suffix, kind in VECTOR_FORMATS.items() if name.endswith(suffix)), None)


def _convert(where: Location) -> str:
    return f"or convert it to GeoJSON: ogr2ogr -f GeoJSON regions.geojson {where.name}"


def _refuse_remote_shapefile(where: Location) -> None:
    raise ParameterError(
        f"{where}: a shapefile is read from a local file, its .shx, .dbf and .prj beside it "
        f"(GDAL cannot reach them at a URL): zip them as {where.stem}.shp.zip, which is read at "
        f"URLs, copy them locally, {_convert(where)}"
    )


def _geopandas(doing: str, remedy: str) -> tuple[Any, Any]:
    """geopandas and pyogrio (the ``vector`` extra), refused with the way in where they are
    missing."""
    try:
        import geopandas
        import pyogrio
    except ImportError:
        raise ParameterError(
            f"{doing} needs geopandas: pip install 'xfskde[vector]'; {remedy}"
        ) from None
    return geopandas, pyogrio


def _read_vector(where: Location) -> Any:
    """A vector file read by geopandas (its one layer; its CRS with it), refused with the ways
    in when it cannot be: without geopandas, of several layers, damaged. A file at a URL is
    read whole with its storage options and handed to GDAL from memory (``/vsimem/``, which
    pyogrio makes of a buffer): GDAL's own ``/vsis3/`` and ``/vsicurl/`` would not have the
    credentials and endpoint the other inputs are reached with."""
    kind, convert = _vector_format(where), _convert(where)
    geopandas, pyogrio = _geopandas(f"reading {where} (a {kind})", convert)
    source: Any = where.url
    if not where.is_local:
        with where.open() as file:
            source = file.read()
    try:
        with warnings.catch_warnings():  # a GeoPackage in memory has no name, so no .gpkg
            warnings.filterwarnings("ignore", "File /vsimem/.* non conformant file extension")
            listed = pyogrio.list_layers(_buffer(source))
            layers = [str(name) for name, geometry in listed if geometry]
            if len(layers) > 1:
                raise ParameterError(
                    f"{where} holds {len(layers)} layers ({', '.join(layers)}): write the one "
                    f"that draws the regions to a file of its own: ogr2ogr -f GeoJSON "
                    f"regions.geojson {where.name} LAYER"
                )
            return geopandas.read_file(_buffer(source))
    except pyogrio.errors.DataSourceError as error:
        said = re.sub(r"/vsimem/\S*", where.name, str(error))  # not pyogrio's temporary name
        raise ParameterError(f"cannot read {where} as a {kind}: {said}") from None


def _buffer(source: Any) -> Any:
    """A path as it is, the bytes of a file at a URL as a new file object for each read."""
    return io.BytesIO(source) if isinstance(source, bytes) else source


def _checked(document: Any, name: str) -> dict[str, Any]:
    """A GeoJSON object, refused unless it is one; a list of features or geometries (what
    QuPath exports unless asked for a FeatureCollection) and a single Feature as a
    FeatureCollection, with the objects QuPath nests in a feature (``childObjects``) as
    features of their own."""
    if isinstance(document, list) and all(isinstance(f, dict) for f in document):
        features = [f if f.get("type") == "Feature" else {"type": "Feature", "geometry": f}
                    for f in document]  # fmt: skip
        document = {"type": "FeatureCollection", "features": features}
    if not isinstance(document, dict) or not isinstance(document.get("type"), str):
        raise ParameterError(f"{name} is not GeoJSON: a mapping with a 'type' is needed")
    if document["type"] == "Feature":  # one object: whether it is a region is its type's
        crs = {"crs": document["crs"]} if "crs" in document else {}  # (pre-RFC 7946) its CRS
        document = {"type": "FeatureCollection", "features": [document], **crs}
    if document["type"] == "FeatureCollection":
        features = document.get("features") or []
        document = {**document, "features": list(_with_children(features))}
    return document


def _with_children(features: Iterable[Any]) -> Iterator[Any]:
    """Each feature, then the features nested in it (QuPath's ``childObjects``, beside its
    ``geometry`` or in its ``properties``), depth first, without them."""
    for feature in features:
        if not isinstance(feature, Mapping):
            yield feature
            continue
        properties = feature.get("properties")
        nested = [*(feature.get("childObjects") or ())]
        if isinstance(properties, Mapping) and properties.get("childObjects"):
            nested += properties["childObjects"]
            feature = {**feature, "properties": {k: v for k, v in properties.items()
                                                 if k != "childObjects"}}  # fmt: skip
        yield {k: v for k, v in feature.items() if k != "childObjects"}
        yield from _with_children(nested)


def object_type(feature: Any) -> str | None:
    """A feature's QuPath object type (``properties.objectType``: ``"annotation"``,
    ``"detection"``, ``"cell"``, ``"tile"``, ``"tma_core"``), None where it has none. Read
    as QuPath reads it: ``objectType``, else ``object_type`` (QuPath 0.2–0.3), else ``type``;
    QuPath 0.2's class name in the feature's ``id`` (``"PathCellObject"``) as its type.

    Parameters
    ----------
    feature : Any
        A GeoJSON feature (anything but a mapping has no type).

    Returns
    -------
    str or None
        The type as the feature writes it (not lower-cased), or None.
    """
    if not isinstance(feature, Mapping):
        return None
    properties = feature.get("properties")
    if isinstance(properties, Mapping):
        for key in ("objectType", "object_type", "type"):
            if properties.get(key) is not None:
                return str(properties[key])
    return _LEGACY_TYPES.get(str(feature.get("id")))


def _without_detections(document: dict[str, Any], name: str) -> tuple[dict[str, Any], int]:
    """A GeoJSON without QuPath's detections (:data:`DETECTION_TYPES`), and how many there
    were; one of nothing else is refused."""
    if document.get("type") != "FeatureCollection":
        return document, 0
    features = document.get("features") or []
    kept = [f for f in features if object_type(f) not in DETECTION_TYPES]
    dropped = len(features) - len(kept)
    if dropped and not kept:
        raise ParameterError(
            f"{name} holds QuPath's detections only ({dropped} detection, cell or tile "
            "objects): a mask is drawn from regions of interest; export the annotations "
            "(QuPath: File > Export objects as GeoJSON, the annotations only)"
        )
    return {**document, "features": kept}, dropped


def _plane_of(feature: Any) -> dict[str, int] | None:
    """The z and t of the plane a feature lies on (QuPath's ``geometry.plane``), None where it
    names none."""
    geometry = feature.get("geometry") if isinstance(feature, Mapping) else None
    plane = geometry.get("plane") if isinstance(geometry, Mapping) else None
    if not isinstance(plane, Mapping):
        return None
    return {axis: int(plane.get(axis, 0)) for axis in ("z", "t")}


def _on_the_plane(
    document: dict[str, Any], image: xr.DataArray, name: str
) -> tuple[dict[str, Any], int]:
    """The features of a GeoJSON on the plane of a stack ``image`` was opened at (its
    ``source_plane``), and how many lie on others: a region naming its plane (QuPath's
    ``geometry.plane``, z and t) is drawn on that plane only, one naming none on every plane.
    Nothing left is refused, naming the planes the regions lie on."""
    opened = image.attrs.get("source_plane")
    if not opened or document.get("type") != "FeatureCollection":
        return document, 0
    here = {axis: index for axis, index in parse_plane(str(opened)).items() if axis in "zt"}
    features = document.get("features") or []
    planes = [_plane_of(f) for f in features]
    kept = [f for f, p in zip(features, planes, strict=True)
            if p is None or all(p[axis] == index for axis, index in here.items())]  # fmt: skip
    dropped = len(features) - len(kept)
    if dropped and not kept:
        named = sorted({", ".join(f"{a}={p[a]}" for a in here) for p in planes if p})
        raise ParameterError(
            f"the regions of {name} lie on other planes ({'; '.join(named)}; QuPath's plane) "
            f"than the image's ({opened}): open it at theirs (--plane, open_image(plane=...))"
        )
    return {**document, "features": kept}, dropped


def _of_classes(
    document: dict[str, Any], classes: list[str], name: str
) -> tuple[dict[str, Any], list[str]]:
    """The features of a GeoJSON of the given ``classes``, and those classified
    :data:`IGNORED_CLASS`, and the classes drawn (a name with a comma the command line split
    joined again: :func:`_comma_names_rejoined`); a class it does not hold is refused, naming
    those it does."""
    if not classes:
        raise ParameterError("classes is empty: name at least one class, or pass None for all")
    features = document.get("features") if document.get("type") == "FeatureCollection" else None
    features = [document] if features is None else features
    held = sorted({str(feature_class(f)) for f in features if isinstance(f, Mapping)})
    classes = _comma_names_rejoined(classes, held)
    missing = [c for c in classes if c not in held]
    if missing:
        raise ParameterError(
            f"{name} holds no region of class {', '.join(map(repr, missing))}: its classes are "
            f"{', '.join(map(repr, held))} (QuPath's classification names; 'None': "
            "unclassified)"
        )
    keep = {*classes, IGNORED_CLASS}
    chosen = [f for f in features if isinstance(f, Mapping) and str(feature_class(f)) in keep]
    return {**document, "type": "FeatureCollection", "features": chosen}, classes


def _comma_names_rejoined(classes: list[str], held: list[str]) -> list[str]:
    """``classes`` with the runs of names that are the parts of a held class whose name has a
    comma (``--mask-classes "Stroma, dense"``, split at its comma by the command line) joined
    back into it, where one of those parts is not a class of its own."""
    for name in (h for h in held if "," in h):
        parts = [p.strip() for p in name.split(",")]
        for i in range(len(classes) - len(parts) + 1):
            run = classes[i : i + len(parts)]
            if [c.strip() for c in run] == parts and not set(run) <= set(held):
                return _comma_names_rejoined([*classes[:i], name, *classes[i + len(parts):]],
                                             held)  # fmt: skip
    return classes


def _name(polygons: Any) -> str:
    if isinstance(polygons, str | os.PathLike | Location):
        return str(polygons)
    return "the mask" if isinstance(polygons, Mapping) else type(polygons).__name__


def geojson_polygons(
    node: Mapping[str, Any], ignored: bool = False
) -> Iterator[tuple[np.ndarray, list[np.ndarray], bool]]:
    """Every polygon of a GeoJSON node: its exterior ring and its holes, as (2, n) arrays of
    (x, y) vertices, and whether it is to be left out (a feature classified
    :data:`IGNORED_CLASS`).

    Parameters
    ----------
    node : mapping
        A GeoJSON ``FeatureCollection``, ``Feature``, ``GeometryCollection``, ``Polygon`` or
        ``MultiPolygon`` (other geometries yield nothing).
    ignored : bool, optional
        Whether ``node`` lies in a feature classified :data:`IGNORED_CLASS`; False by default (a
        ``Feature`` sets it for its own geometry).

    Yields
    ------
    exterior : numpy.ndarray, shape (2, n), float64
        The exterior ring's (x, y) vertices (the third coordinate of each left out).
    holes : list of numpy.ndarray, shape (2, n)
        The holes' rings; rings of fewer than three vertices are left out.
    ignored : bool
        Whether the polygon is cut out of the others.
    """
    kind = node.get("type")
    if kind == "FeatureCollection":
        for feature in node.get("features") or ():
            yield from geojson_polygons(feature)
    elif kind == "Feature":
        if node.get("geometry"):
            yield from geojson_polygons(node["geometry"], feature_class(node) == IGNORED_CLASS)
    elif kind == "GeometryCollection":
        for geometry in node.get("geometries") or ():
            yield from geojson_polygons(geometry, ignored)
    elif kind in ("Polygon", "MultiPolygon"):
        polygons = node.get("coordinates") or ()
        for rings in [polygons] if kind == "Polygon" else polygons:
            arrays = [np.asarray(ring, float)[:, :2].T for ring in rings if len(ring) >= 3]
            if arrays:
                yield arrays[0], arrays[1:], ignored


def feature_class(feature: Mapping[str, Any]) -> str | None:
    """A feature's class, as QuPath records it: ``properties.classification.name``, or for a
    derived class its ``names`` joined as QuPath names it (``["Tumor", "Positive"]``:
    ``"Tumor: Positive"``); else a ``class`` property, a GIS file's column (a land cover's
    classes; :func:`write_labels_vector` writes the textures' there).

    Parameters
    ----------
    feature : mapping
        A GeoJSON feature.

    Returns
    -------
    str or None
        The class, or None where the feature names none (an empty ``class`` included).
    """
    properties = feature.get("properties")
    if not isinstance(properties, Mapping):
        return None
    classification = properties.get("classification")
    if not isinstance(classification, Mapping):
        column = properties.get("class")
        return str(column) if column is not None and str(column) else None
    name, names = classification.get("name"), classification.get("names")
    if name is None and isinstance(names, list) and names:
        name = ": ".join(map(str, names))
    return str(name) if name is not None else None


def _named_crs(document: Mapping[str, Any]) -> str | None:
    """The CRS a GeoJSON's (pre-RFC 7946) ``crs`` member names, if it has one."""
    member = document.get("crs")
    if not isinstance(member, Mapping):
        return None
    name = (member.get("properties") or {}).get("name")
    return str(name) if name else None


def _frame(document: Mapping[str, Any], image: xr.DataArray, name: str) -> Any:
    """The function that takes (2, n) (x, y) vertices to (2, n) (row, column) positions on
    the image's pixels, edges at integers (module docstring)."""
    named = _named_crs(document)
    wkt = crs_wkt(image)
    if wkt is not None:
        return _geographic(named or _WGS84, wkt, image)
    if named is not None:
        raise ParameterError(
            f"{name} is in a CRS ({named}) and the image has none: open the image with its "
            "CRS (a GeoTIFF, with rioxarray installed), or give regions in its pixels"
        )
    return _in_pixels(image, name)


def _geographic(crs: str, wkt: str, image: xr.DataArray) -> Any:
    """Vertices in ``crs`` onto an image in the CRS ``wkt``, placed through the affine
    transform of its grid (:func:`_scene_grid`)."""
    source, target = parse_crs(crs), parse_crs(wkt)
    if source is None or target is None:
        raise ParameterError(
            f"cannot read the CRS {crs if source is None else 'of the image'}: pyproj (the "
            "geo extra: pip install 'xfskde[geo]') reads CRSs"
        )
    _refuse_gcps(
        image,
        "a polygon cannot be placed on it",
        "warp the scene first (gdalwarp -t_srs EPSG:XXXX scene.tif warped.tif)",
    )
    grid = _scene_grid(image)
    if grid is None:
        raise ParameterError(
            "the image's x and y coords are not a regular grid: no polygon can be placed on it"
        )
    transform = None
    if source != target:
        from pyproj import Transformer

        transform = Transformer.from_crs(source, target, always_xy=True).transform
    c, a, b, f, d, e = grid
    det = a * e - b * d

    def to_pixels(xy: np.ndarray) -> np.ndarray:
        x, y = transform(xy[0], xy[1]) if transform else (xy[0], xy[1])
        dx, dy = np.asarray(x) - c, np.asarray(y) - f
        return np.stack([(a * dy - d * dx) / det, (e * dx - b * dy) / det])  # rows, cols

    return to_pixels


def _scene_grid(image: xr.DataArray) -> tuple[float, ...] | None:
    """The affine transform ``(c, a, b, f, d, e)`` of a scene's pixels to its CRS (GDAL's
    GeoTransform: ``x = c + a*col + b*row``, ``y = f + d*col + e*row``, the pixels' edges at
    integers). A rotated grid's is its GeoTransform (its ``x`` and ``y`` coords are pixel
    indices, as rioxarray gives them), its corner moved to its 2-D ``xc``/``yc`` centres where
    they start elsewhere on its grid (a crop with ``isel`` keeps the scene's transform:
    :func:`xfskde._labels.aligned_geotransform`, which refuses centres in another order); any
    other is read off its regular ``x`` and ``y`` coords, whose origin a crop or flip keeps
    true where the GeoTransform goes stale. None where it has neither."""
    geo = geotransform(image)
    if geo is not None and (geo[2] != 0 or geo[4] != 0):
        # a crop (isel) keeps the whole scene's transform: its corner is its xc/yc's
        return aligned_geotransform(image, geo, "y", "x")
    steps = _grid(image)
    if steps is None:
        return None
    y0, x0 = float(image.y.values[0]), float(image.x.values[0])
    return x0 - steps[1] / 2, steps[1], 0.0, y0 - steps[0] / 2, 0.0, steps[0]


def refuse_gcp_regions(image: xr.DataArray) -> None:
    """Labels of ``image`` (a scene georeferenced by ground control points only) are refused
    as regions: their vertices have no place in its CRS here; a GeoTIFF keeps the GCPs. The
    command line asks before the fit.

    Parameters
    ----------
    image : xarray.DataArray
        The labels, or the image they are of.

    Raises
    ------
    ParameterError
        When ``image`` records ground control points (rioxarray's ``gcps`` attr); nothing
        happens otherwise.
    """
    _refuse_gcps(
        image,
        "its regions cannot be written in its CRS",
        "write the labels as *.tif, which keeps the GCPs, then warp them (gdalwarp) "
        "and polygonize them in the GIS (gdal_polygonize)",
    )


def _refuse_gcps(image: xr.DataArray, why: str, remedy: str) -> None:
    """A scene georeferenced by ground control points (rioxarray's ``gcps`` attr, in place of
    a GeoTransform: :func:`xfskde._labels.gcp_count`) is refused, saying ``why`` and the
    ``remedy``: its pixels have no affine place in its CRS, and GDAL's warp from its points
    is not done here."""
    count = gcp_count(image)
    if count:
        raise ParameterError(
            f"{image.attrs.get('source', 'the image')} is georeferenced by {count} ground "
            f"control points only (GCPs, no GeoTransform): {why}; {remedy}"
        )


def _grid(image: xr.DataArray) -> tuple[float, float] | None:
    """The signed (y, x) steps of an image's regular coords (a GeoTIFF's y runs down from the
    north: its step is negative), None where they are not a regular grid."""
    if pixel_steps(image) is None:
        return None
    y, x = (np.asarray(image[d].values[:2], float) for d in ("y", "x"))
    return float(y[1] - y[0]), float(x[1] - x[0])


def _in_pixels(image: xr.DataArray, name: str) -> Any:
    """Vertices in level-0 pixels onto the image: by its sides' ratio to level 0's (a whole
    level), by its coords (the file read at ``mpp=`` in cells of pixels, or part of a level,
    of a file that records its pixel size), or as they are (an image of no file).

    Cells by their coords: a level whose side the cells do not divide drops its last partial
    row and column of cells, and the sides' ratio stretched the outlines over it (682 cells of
    3 px over 2048 level-0 pixels: cell edge 52 at 156.15, not 156)."""
    source = image.attrs.get("source")
    if not source:
        return lambda xy: np.stack([xy[1], xy[0]])
    ny, nx = image.sizes["y"], image.sizes["x"]
    where = image.encoding.get("source") or source
    opening = opened_as(image)
    levels = image_levels(where, **level_arguments(opening))
    if is_whole_level(image, levels) and int(image.attrs.get("source_binning", 1)) == 1:
        height, width = levels[0].sides
        return lambda xy: np.stack([xy[1] * ny / height, xy[0] * nx / width])
    unit = str(image["x"].attrs.get("units", "")) if "x" in image.coords else ""
    steps = _grid(image)
    if levels[0].pixel_size is None or micrometres(1.0, unit) is None or steps is None:
        raise ParameterError(
            f"{name} is in the pixels of {source}'s level 0, and this image is part of a level "
            "whose file records no pixel size: give the mask for the whole level, or an array"
        )
    whole = open_image(where, level=0, **opening)  # lazy: level 0's coords, in this unit
    y0, x0 = float(whole["y"].values[0]), float(whole["x"].values[0])
    sy, sx = (float(whole[d].values[1] - whole[d].values[0]) for d in ("y", "x"))
    first = (float(image["y"].values[0]), float(image["x"].values[0]))

    def to_pixels(xy: np.ndarray) -> np.ndarray:
        y, x = y0 + (xy[1] - 0.5) * sy, x0 + (xy[0] - 0.5) * sx  # level 0's edges, in µm
        return np.stack([(y - first[0]) / steps[0] + 0.5, (x - first[1]) / steps[1] + 0.5])

    return to_pixels


def _frame_hint(document: Mapping[str, Any], image: xr.DataArray) -> str:
    """What to check when the regions miss the image: for a scene, where the regions lie in
    the CRS they are read in and where the image lies in its own, each CRS by its short name
    (a GeoPackage in EPSG:4326 was told to add a GeoJSON's crs member, one in the image's CRS
    was shown a WKT of 1.6 kB)."""
    wkt = crs_wkt(image)
    if wkt is None:
        return "they are read as pixels of the image's level 0, x the column and y the row"
    named = _named_crs(document)
    theirs = (
        _short_crs(named)
        if named
        else "WGS 84 longitude and latitude (what regions of no CRS are read in: RFC 7946)"
    )
    rings = [exterior for exterior, _, _ in geojson_polygons(document)]
    where = ""
    if rings:
        x, y = np.concatenate(rings, axis=1)
        where = (
            f"the regions span {_span(x, y)} in {theirs}; the image {_image_span(image)} in "
            f"{_short_crs(wkt)}: "
        )
    return (
        f"{where}if the regions are in another CRS, give it (a GeoPackage's or shapefile's CRS, "
        "a GeoJSON's crs member)"
    )


def _short_crs(text: str) -> str:
    """A CRS by its EPSG code where it has one (``EPSG:32633``), else by its name; the text as
    given where it is none."""
    crs = parse_crs(text)
    if crs is None:
        return text if len(text) <= 80 else text[:77] + "..."
    code = crs.to_epsg()
    return f"EPSG:{code}" if code else str(crs.name)


def _span(x: np.ndarray, y: np.ndarray) -> str:
    """``x a to b, y c to d`` of coordinates: six significant digits, whole units from 10⁴ on
    (a UTM scene's metres)."""

    def number(v: float) -> str:
        return f"{v:.0f}" if abs(v) >= 1e4 else f"{v:.6g}"

    x_range = f"{number(np.nanmin(x))} to {number(np.nanmax(x))}"
    return f"x {x_range}, y {number(np.nanmin(y))} to {number(np.nanmax(y))}"


def _image_span(image: xr.DataArray) -> str:
    """:func:`_span` of an image's pixel centres (its ``x`` and ``y`` coords)."""
    return _span(np.asarray(image["x"].values, float), np.asarray(image["y"].values, float))


# ------------------------------------------------------------------------------------- writing


def labels_geojson(labels: Any, *, max_side: int = MAX_SIDE) -> dict[str, Any]:
    """Texture labels as a GeoJSON ``FeatureCollection``: one ``MultiPolygon`` feature per
    texture present, its outlines with their holes.

    Parameters
    ----------
    labels : xarray.DataArray or numpy.ndarray
        ``(y, x)`` integer labels as :func:`xfskde.segment` returns them (0: background, not
        written); a Dask-backed DataArray is computed on a grid of at most ``max_side``
        pixels on a side (every f-th pixel).
    max_side : int, optional
        The longest side of the grid the outlines are traced on.

    Returns
    -------
    dict
        The collection: each feature's ``properties`` hold ``label``, QuPath's
        ``objectType`` (``"annotation"``) and ``classification`` (``name`` ``"texture i"``
        and ``color``, the library's label colour as 0-255 RGB); its ``geometry`` the plane
        of a stack the labels are of (QuPath's ``plane``, ``{"c": -1, "z": Z, "t": T}``,
        where their ``source_plane`` names a z or t); a scene's collection has the
        ``crs`` member of its CRS; the labels' attrs are kept under the foreign member
        ``"xfskde"``. Coordinates are level-0 pixels of the image (``x`` the column) or the
        scene's CRS units (module docstring).

    Raises
    ------
    ParameterError
        For labels that are not ``(y, x)`` or not integers.
    """
    shape = np.shape(labels)
    if len(shape) != 2:
        raise ParameterError(f"labels must be (y, x) to be written as regions, got shape {shape}")
    image = labels if isinstance(labels, xr.DataArray) else xr.DataArray(labels, dims=("y", "x"))
    factor = max(1, math.ceil(max(shape) / max_side))
    grid = np.asarray(compute_collections([image.data[::factor, ::factor]])[0])
    if grid.dtype.kind not in "ui":
        raise ParameterError(f"labels must be integers to be written as regions, got {grid.dtype}")
    wkt = crs_wkt(image)
    to_vertices = _vertices(image, wkt)
    plane = _qupath_plane(image)
    high = int(grid.max()) if grid.size else 0
    colours = label_rgba_8bit(max(int(image.attrs.get("n_textures", high)), high))  # as a PNG's
    features = []
    for label in (int(v) for v in np.unique(grid) if v > 0):
        polygons = []
        for exterior, holes in _outlines(grid == label):
            rings = [exterior, *holes]  # (row, col) edges of the grid -> of the image, -> out
            rings = [to_vertices(r[:, 0] * factor, r[:, 1] * factor) for r in rings]
            rings = [_wound(r, exterior=i == 0) for i, r in enumerate(rings)]  # RFC 7946's
            polygons.append([np.round(r, 6).tolist() for r in rings])
        name = label_name(label)
        colour = [int(c) for c in colours[label][:3]]
        features.append({
            "type": "Feature",
            "geometry": {"type": "MultiPolygon", "coordinates": polygons, **plane},
            "properties": {"label": label, "objectType": "annotation",
                           "classification": {"name": name, "color": colour}},
        })  # fmt: skip
    collection: dict[str, Any] = {"type": "FeatureCollection", "features": features}
    if wkt is not None:
        name = _crs_name(wkt)
        if name is not None:  # WGS 84 longitude and latitude is RFC 7946's: no member
            collection["crs"] = {"type": "name", "properties": {"name": name}}
    from .omezarr import _jsonable  # the one conversion of attrs to JSON

    collection["xfskde"] = {str(k): _jsonable(v) for k, v in image.attrs.items()}
    return collection


def _qupath_plane(labels: xr.DataArray) -> dict[str, Any]:
    """The member QuPath gives a geometry on one plane of a stack, ``{"plane": {"c": -1,
    "z": Z, "t": T}}``, for labels of an image opened at a plane (its ``source_plane`` naming
    a z or t, as :func:`_on_the_plane` reads it back); nothing for any other labels (QuPath
    then draws them on z = 0, t = 0)."""
    opened = labels.attrs.get("source_plane")
    chosen = parse_plane(str(opened)) if opened else {}
    if not {"z", "t"} & set(chosen):
        return {}
    return {"plane": {"c": -1, "z": chosen.get("z", 0), "t": chosen.get("t", 0)}}


def write_labels_geojson(
    labels: Any,
    path: str | os.PathLike,
    *,
    max_side: int = MAX_SIDE,
    storage_options: Mapping[str, Any] | None = None,
) -> None:
    """Write :func:`labels_geojson` of ``labels`` to the file ``path`` (replaced if it exists):
    QuPath imports it with *File > Import objects*, QGIS and GDAL open it as a layer.

    The regions are made whole before anything is written, then written in one piece: at a URL
    (through fsspec, :meth:`xfskde.io.Location.open`) an object store shows the object once
    all of it is uploaded.

    Parameters
    ----------
    labels : xarray.DataArray or numpy.ndarray
        As in :func:`labels_geojson`.
    path : str, os.PathLike or Location
        A local file or a URL (``s3://bucket/labels.geojson``; not ``http(s)://``, read-only).
    max_side : int, optional
        As in :func:`labels_geojson`; :data:`MAX_SIDE` (8192) by default.
    storage_options : mapping, optional
        Options of the fsspec filesystem of a URL (credentials, ``endpoint_url``); refused with
        a local path.

    Raises
    ------
    ParameterError
        For an ``http(s)://`` URL, where nothing can be written, or storage options given with
        a local path.
    """
    where = locate(path, storage_options)
    if where.read_only:
        raise ParameterError(
            f"{where}: nothing can be written at an {where.protocol}:// URL; write the GeoJSON "
            "to a local path or to a bucket (s3://, gs://, az://)"
        )
    collection = labels_geojson(labels, max_side=max_side)
    text = json.dumps(collection).encode("utf-8")  # ASCII: json escapes the rest
    with where.open("wb") as file:
        file.write(text)


#: The vector formats labels are written in (besides GeoJSON): suffix -> GDAL driver.
WRITTEN_VECTOR_FORMATS = {".gpkg": "GPKG", ".shp": "ESRI Shapefile", ".fgb": "FlatGeobuf"}
#: The layer metadata item of a GeoPackage that holds the labels' attrs (the model), as JSON.
_MODEL_ITEM = "xfskde"


def write_labels_vector(
    labels: Any, path: str | os.PathLike, *, max_side: int = MAX_SIDE, driver: str | None = None
) -> None:
    """Write the regions of :func:`labels_geojson` to a GIS vector file, by geopandas (the
    ``vector`` extra): a GeoPackage, shapefile or FlatGeobuf (:data:`WRITTEN_VECTOR_FORMATS`,
    by ``path``'s suffix unless ``driver`` names GDAL's driver). One feature per texture, its
    columns ``label``, ``class`` (``"texture i"``, which :func:`feature_class` reads:
    ``--mask-classes``; a shapefile's names are of 10 characters at most) and ``colour``
    (``"#rrggbb"``, the library's label colour); in the labels' CRS (a scene's; none for an
    image without one, whose coordinates are its level-0 pixels). A GeoPackage keeps the
    labels' attrs, the texture model with them, in its layer's metadata (``xfskde``, JSON):
    ``--model labels.gpkg`` reads it (:func:`read_labels_attrs`); a shapefile or FlatGeobuf
    holds the regions only. A GeoPackage's layer is named as the file (:func:`labels_layer`,
    as GDAL names a new file's one): in a GeoPackage that exists, that layer is written or
    replaced and its other layers are kept, as GDAL and QGIS write a layer.

    Parameters
    ----------
    labels : xarray.DataArray or numpy.ndarray
        As in :func:`labels_geojson`.
    path : str or os.PathLike
        The file written (GDAL's, local), its format by its suffix (``.gpkg``, ``.shp``,
        ``.fgb``).
    max_side : int, optional
        As in :func:`labels_geojson`; :data:`MAX_SIDE` (8192) by default.
    driver : str, optional
        GDAL's driver (``"GPKG"``, ``"ESRI Shapefile"``, ``"FlatGeobuf"`` ...); None (the
        default): by ``path``'s suffix.

    Raises
    ------
    ParameterError
        For a suffix not in :data:`WRITTEN_VECTOR_FORMATS` without a ``driver``, without
        geopandas, or for labels :func:`labels_geojson` refuses.
    """
    name = str(path).lower()
    if driver is None:
        driver = next((d for s, d in WRITTEN_VECTOR_FORMATS.items() if name.endswith(s)), None)
        if driver is None:
            raise ParameterError(
                f"{path}: labels are written as regions in *.geojson, "
                f"{', '.join('*' + s for s in WRITTEN_VECTOR_FORMATS)}"
            )
    geopandas, _ = _geopandas(f"writing {path}", "or name the output *.geojson")
    collection = labels_geojson(labels, max_side=max_side)
    image = labels if isinstance(labels, xr.DataArray) else xr.DataArray(labels, dims=("y", "x"))
    rows = []
    for feature in collection["features"]:
        properties = feature["properties"]
        colour = properties["classification"]["color"]
        rows.append({"type": "Feature", "geometry": feature["geometry"], "properties": {
            "label": properties["label"], "class": properties["classification"]["name"],
            "colour": "#" + "".join(f"{c:02x}" for c in colour)}})  # fmt: skip
    frame = geopandas.GeoDataFrame.from_features(rows, crs=crs_wkt(image))
    if frame.empty:  # no texture (all background): the columns all the same
        frame = geopandas.GeoDataFrame(
            {"label": [], "class": [], "colour": []}, geometry=[], crs=crs_wkt(image)
        )
    extra = {}
    if driver == "GPKG":
        extra["layer"] = labels_layer(path)
        extra["layer_metadata"] = {_MODEL_ITEM: json.dumps(collection["xfskde"])}
    with warnings.catch_warnings():  # a slide's regions have no CRS on purpose: its pixels
        warnings.filterwarnings("ignore", "'crs' was not provided", UserWarning)
        frame.to_file(path, driver=driver, **extra)


def labels_layer(path: Any) -> str:
    """The name of the layer :func:`write_labels_vector` writes in a GeoPackage: the file's
    name without its suffix (``labels`` in ``labels.gpkg``).

    Parameters
    ----------
    path : str or os.PathLike
        The GeoPackage's path (a trailing ``/`` ignored).

    Returns
    -------
    str
        The layer's name.
    """
    return os.path.splitext(os.path.basename(str(path).rstrip("/")))[0]


def geopackage_layers(path: Any) -> list[str] | None:
    """The layers of a GeoPackage file, None where it cannot be read as one (or geopandas,
    the ``vector`` extra, is missing).

    Parameters
    ----------
    path : str or os.PathLike
        The file's path.

    Returns
    -------
    list of str or None
        The layers' names, in the file's order, or None.
    """
    try:
        _, pyogrio = _geopandas(f"reading {path}", "")
    except ParameterError:
        return None
    try:
        return [str(name) for name, _ in pyogrio.list_layers(str(path))]
    except (OSError, pyogrio.errors.DataSourceError):
        return None


def read_labels_attrs(path: Any) -> dict[str, Any] | None:
    """The labels' attrs a GeoPackage written by :func:`write_labels_vector` keeps (the
    ``xfskde`` metadata of its layer :func:`labels_layer`, else of the first of its other
    layers that has it: a project's GeoPackage holding the labels beside other layers); None
    where none has it.

    Parameters
    ----------
    path : str or os.PathLike
        The GeoPackage's path.

    Returns
    -------
    dict or None
        The attrs, as the JSON holds them.

    Raises
    ------
    ParameterError
        Without geopandas (the ``vector`` extra).
    """
    _, pyogrio = _geopandas(f"reading {path}", "or give the Zarr store or GeoJSON")
    ours = labels_layer(path)
    layers = [str(name) for name, _ in pyogrio.list_layers(str(path))]
    for layer in sorted(layers, key=lambda name: name != ours):  # its own layer first
        metadata = pyogrio.read_info(str(path), layer=layer).get("layer_metadata") or {}
        if metadata.get(_MODEL_ITEM):
            return json.loads(metadata[_MODEL_ITEM])
    return None


def _outlines(region: np.ndarray) -> list[tuple[np.ndarray, list[np.ndarray]]]:
    """The polygons of a boolean region along its pixels' edges, as GDAL's ``gdal_polygonize``
    draws them: one per 4-connected part, its exterior ring with the holes inside it, each an
    (n, 2) array of (row, col) vertices on the pixels' edges (the first pixel spans [0, 1)),
    closed (the first vertex repeated last), with a vertex only where the outline turns.

    Each ring is simple (OGC): where two of the region's pixels touch at a corner only, the
    outline passes that corner once, and a part of the background the region encloses but
    for such a corner is a hole touching the exterior there. Two regions of one label image
    share the edges between them vertex for vertex: their polygons neither overlap nor leave
    a gap, and each has the area of its pixels exactly."""
    from scipy import ndimage

    region = np.asarray(region, bool)
    w = region.shape[1]
    padded = np.pad(region, 1)
    inside = padded[1:-1, 1:-1]
    # each edge between a pixel of the region and one outside, directed so that the region is
    # on its left in (x = col, y = row) numbers: (start row, start col, end row, end col)
    edges = []
    for neighbour, (r0, c0, r1, c1) in (
        (padded[:-2, 1:-1], (0, 0, 0, 1)),  # top
        (padded[1:-1, 2:], (0, 1, 1, 1)),  # right
        (padded[2:, 1:-1], (1, 1, 1, 0)),  # bottom
        (padded[1:-1, :-2], (1, 0, 0, 0)),  # left
    ):
        rows, cols = np.nonzero(inside & ~neighbour)
        edges.append(np.stack([rows + r0, cols + c0, rows + r1, cols + c1], 1))
    edge = np.concatenate(edges)
    if not len(edge):
        return []
    start = edge[:, 0] * (w + 1) + edge[:, 1]
    order = np.argsort(start, kind="stable")
    edge, start = edge[order], start[order]
    end = edge[:, 2] * (w + 1) + edge[:, 3]
    first = np.searchsorted(start, end)  # the edges leaving each edge's end: one, or two where
    twice = np.searchsorted(start, end, side="right") - first == 2  # pixels touch at a corner
    step = edge[:, 2:] - edge[:, :2]  # (d row, d col)
    # there the one turning left, around the same pixel: the parts touching at the corner are
    # two (4-connected), as gdal_polygonize's
    left = np.stack([step[:, 1], -step[:, 0]], 1)  # (d row, d col) of a left turn
    alternative = np.minimum(first + 1, len(edge) - 1)
    takes_second = twice & (step[alternative] == left).all(1)
    following = np.where(takes_second, alternative, first).tolist()
    parts, _ = ndimage.label(region)  # 4-connected
    polygons: dict[int, list[np.ndarray]] = {}
    holes: dict[int, list[np.ndarray]] = {}
    seen = np.zeros(len(edge), bool)
    vertex = edge[:, :2]
    for begin in range(len(edge)):
        if seen[begin]:
            continue
        ring = []
        current = begin
        while not seen[current]:
            seen[current] = True
            ring.append(current)
            current = following[current]
        for loop in _simple_loops(ring, start):
            points = vertex[loop]
            turns = points - np.roll(points, 1, 0)
            bends = (turns != np.roll(turns, -1, 0)).any(1)  # a vertex where the outline turns
            d_row, d_col = step[loop[0]]
            row, col = points[0]
            part = parts[row + (d_row + d_col - 1) // 2, col + (d_col - d_row - 1) // 2]
            closed = np.concatenate([points[bends], points[bends][:1]]).astype(float)
            rows, cols = closed[:, 0], closed[:, 1]
            area = 0.5 * float(np.dot(cols[:-1], rows[1:]) - np.dot(cols[1:], rows[:-1]))
            (polygons if area > 0 else holes).setdefault(int(part), []).append(closed)
    return [(exterior, holes.get(part, [])) for part, rings in sorted(polygons.items())
            for exterior in rings]  # fmt: skip


def _simple_loops(ring: list[int], start: np.ndarray) -> list[list[int]]:
    """A closed walk along edges (their indices, each starting at ``start[edge]``) cut into
    simple loops wherever it passes a vertex again (a corner where two pixels touch)."""
    vertices = start[ring].tolist()
    if len(set(vertices)) == len(vertices):
        return [ring]
    loops, stack, at = [], [], {}
    for index, vertex in zip(ring, vertices, strict=True):
        if vertex in at:  # back at a vertex: the loop since then is one
            cut = at[vertex]
            loops.append(stack[cut:])
            for _, passed in stack[cut:]:
                at.pop(passed, None)
            del stack[cut:]
        at[vertex] = len(stack)
        stack.append((index, vertex))
    loops.append(stack)
    return [[index for index, _ in loop] for loop in loops if loop]


def _wound(ring: np.ndarray, exterior: bool) -> np.ndarray:
    """An (n, 2) (x, y) ring wound as RFC 7946 has it: an exterior counterclockwise, a hole
    clockwise (in its coordinates' numbers; a north-up scene's transform turns its rows
    over)."""
    x, y = ring[:, 0], ring[:, 1]
    area = float(np.dot(x[:-1], y[1:]) - np.dot(x[1:], y[:-1]))
    return ring if (area > 0) == exterior else ring[::-1]


def _vertices(image: xr.DataArray, wkt: str | None) -> Any:
    """The function that takes rows and columns of an image's pixels (edges at integers) to
    (n, 2) (x, y) vertices: a scene's through the full affine transform of its grid
    (:func:`_scene_grid`, rotation terms included), an image's without a CRS in its level-0
    pixels (:func:`_inverse` of :func:`_in_pixels`). A scene georeferenced by ground control
    points only is refused: its regions have no place in its CRS here."""
    if wkt is None:
        rows_of, cols_of = _inverse(_in_pixels(image, "the labels"))
        return lambda rows, cols: np.stack([cols_of(cols), rows_of(rows)], 1)
    refuse_gcp_regions(image)
    grid = _scene_grid(image)
    if grid is None:
        raise ParameterError(
            "the labels' x and y coords are not a regular grid, and they carry no rotated "
            "GeoTransform: their regions cannot be placed in their CRS; write them as *.tif"
        )
    c, a, b, f, d, e = grid
    return lambda rows, cols: np.stack([c + a * cols + b * rows, f + d * cols + e * rows], 1)


def _inverse(to_pixels: Any) -> tuple[Any, Any]:
    """The vertex coordinates (y, x) of image pixel rows and columns (edges at integers): the
    inverse of a frame of level-0 pixels (:func:`_in_pixels`, affine along each axis).

    Read off the frame at two points, then again at the image's first pixel edge and a
    thousand pixels on, so that a frame far from its origin keeps no rounding of the first
    reading in its vertices."""
    (r0, r1), (c0, c1) = to_pixels(np.array([[0.0, 1.0], [0.0, 1.0]]))
    y0, x0 = -r0 / (r1 - r0), -c0 / (c1 - c0)  # near the image's first edges
    y1, x1 = y0 + 1000 / (r1 - r0), x0 + 1000 / (c1 - c0)
    (ra, rb), (ca, cb) = to_pixels(np.array([[x0, x1], [y0, y1]]))
    sy, sx = (y1 - y0) / (rb - ra), (x1 - x0) / (cb - ca)
    return (lambda rows: y0 + (rows - ra) * sy), (lambda cols: x0 + (cols - ca) * sx)


def _crs_name(wkt: str) -> str | None:
    """The name of a CRS in a GeoJSON ``crs`` member: its EPSG URN where it has an EPSG code
    (as GDAL writes it), else its WKT; None for WGS 84 longitude and latitude, RFC 7946's CRS,
    which GeoJSON readers assume (and for which the URN EPSG::4326 would name latitude
    first)."""
    crs = parse_crs(wkt)
    code = crs.to_epsg() if crs is not None else None
    if code == 4326 or (crs is not None and crs == parse_crs("OGC:CRS84")):
        return None
    return f"urn:ogc:def:crs:EPSG::{code}" if code else wkt
