"""Rasters that only GDAL reads — JPEG 2000 (Sentinel-2's bands), VRT mosaics and band stacks
(``gdalbuildvrt``), ERDAS Imagine — described, and read in rectangles inside Dask tasks (the
tasks of :func:`xfskde.io.open_image` named ``xfskde-read-gdal-...``), through rasterio (the
``geo`` extra).

A task receives only the file's :class:`~xfskde.io._location.Location` (a path, or a URL read
through fsspec as rasterio's opener: by byte ranges, with its storage options) and the level,
opens the file with rasterio and reads its rectangle of every band (``Dataset.read`` with a
window): a GDAL dataset is not shared between threads, and opening one reads its header only
(a VRT's XML, a JPEG 2000's boxes). GDAL reads on the task's thread alone
(``GDAL_NUM_THREADS=1``): Dask's threads are the parallelism, and the JPEG 2000 decoder's own
threads report a damaged codestream where no one hears it — a truncated file was read as
zeros, without an error. The labels — CRS, coordinates, band descriptions, nodata — are
rioxarray's, read once when the image is opened, as a GeoTIFF's are.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import threading
import warnings
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from ..exceptions import ImageReadError
from ._location import Location, locate, locate_beside, named_failures, remote_failure
from ._tiff import mask_sidecar, with_mask_version

__all__ = [
    "GDAL_FORMATS", "GdalLevel", "gdal_format", "gdal_levels", "gdal_version", "input_version",
    "read_gdal_block", "remote_env", "remote_opener",
]  # fmt: skip

#: The formats read through GDAL, by suffix.
GDAL_FORMATS: dict[str, str] = {
    ".jp2": "JPEG 2000", ".j2k": "JPEG 2000", ".vrt": "GDAL VRT", ".img": "ERDAS Imagine",
}  # fmt: skip


class GdalLevel(NamedTuple):
    """One level of a GDAL raster (the full resolution, then its overviews)."""

    #: bands, rows, columns
    shape: tuple[int, int, int]
    dtype: np.dtype
    #: the (rows, columns) of one of its blocks: what one read decodes
    block: tuple[int, int]
    #: the (y, x) size of a pixel in its CRS's units (the GeoTransform's), None without one
    pixel_size: tuple[float, float] | None
    #: the driver's name (``JP2OpenJPEG``, ``VRT``, ``HFA``)
    driver: str
    #: the value of its missing pixels, if it records one
    nodata: float | int | None
    #: the band (from 0) that is an alpha (opacity) band, as GDAL marks one, else None
    alpha: int | None
    #: the unit of ``pixel_size``: its CRS's (``"m"``, ``"°"``), None without a size
    units: str | None
    #: whether it has a mask of its own (GDAL's per-dataset mask: a VRT's ``MaskBand``, the
    #: internal mask of the GeoTIFFs it names), its pixels 0 missing
    masked: bool = False
    #: the local files GDAL reads for it besides its own (a VRT's sources)
    files: tuple[str, ...] = ()
    #: whether it is georeferenced (a CRS or a GeoTransform; a photograph's JPEG 2000 is not)
    located: bool = False
    #: each band's nodata value (None for a band without one): a VRT stack's bands may differ,
    #: where ``nodata`` is the first band's
    nodatavals: tuple[float | None, ...] = ()


def gdal_format(path: Location) -> str | None:
    """The name of the GDAL-only format of ``path`` (:data:`GDAL_FORMATS`), else None."""
    name = path.name.lower()
    return next((f for suffix, f in GDAL_FORMATS.items() if name.endswith(suffix)), None)


def _rasterio(path: Location) -> Any:
    """rasterio, or the refusal that names the extra and the conversion."""
    kind = gdal_format(path) or "GDAL"
    try:
        import rasterio
    except ImportError:
        raise ImageReadError(
            f"cannot read {path}: a {kind} file is read through GDAL, which needs rasterio: "
            "install the geo extra (pip install 'xfskde[geo]'), or convert it to a "
            f"Cloud-Optimised GeoTIFF (gdal_translate -of COG {path.name} "
            f"{path.stem}.tif)"
        ) from None
    return rasterio


#: Held while a dataset read through fsspec is opened and read: rasterio's Python openers
#: keep a registry that threads opening at once corrupt (a KeyError inside rasterio).
_OPENER_LOCK = threading.RLock()


@contextlib.contextmanager
def remote_env(path: Location) -> Iterator[None]:
    """For a raster read through fsspec (a URL), GDAL told that its folder is empty
    (``GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR``, what GDAL advises for cloud storage): it
    otherwise looks for sidecar files (``.ovr``, ``.aux.xml``, ``.msk``) through the opener,
    a request each, with a URL's query carried into every name it tries — a server that
    ignores the query answered with the image itself, which GDAL then parsed as each sidecar,
    and ``overviews()`` of a signed URL did not return. Nothing for a local file."""
    if path.is_local:
        yield
        return
    import rasterio

    with rasterio.Env(GDAL_DISABLE_READDIR_ON_OPEN="EMPTY_DIR"):
        yield


@contextlib.contextmanager
def _serialised(path: Location) -> Iterator[None]:
    """For a remote raster, :data:`_OPENER_LOCK` and :func:`remote_env`; nothing for a local
    one."""
    if path.is_local:
        yield
        return
    with _OPENER_LOCK, remote_env(path):
        yield


def _open(path: Location, level: int) -> Any:
    """The dataset of ``level`` (0: the full resolution; n: the n-th overview)."""
    rasterio = _rasterio(path)
    options: dict[str, Any] = {"overview_level": level - 1} if level else {}
    where = path.url
    if not path.is_local:  # through fsspec (rasterio's opener): byte ranges, its credentials
        where = path.filesystem()[1]
        options["opener"] = remote_opener(path)
    try:
        with warnings.catch_warnings():  # a photograph's JPEG 2000: no CRS, as expected here
            warnings.simplefilter("ignore", rasterio.errors.NotGeoreferencedWarning)
            return rasterio.open(where, **options)
    except rasterio.errors.RasterioError as exc:
        raise ImageReadError(f"cannot read {path}: {' '.join(str(exc).split())}") from exc


class _Resolving:
    """An fsspec filesystem as rasterio's opener, the ``.`` and ``..`` of the paths GDAL asks
    for resolved: GDAL names a VRT's source ``../B04.jp2`` as ``bucket/vrts/../B04.jp2``,
    which s3fs looks up as it is (GDAL's "Resource temporarily unavailable"; an HTTP server
    resolves it itself)."""

    def __init__(self, fs: Any) -> None:
        self._fs = fs

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._fs, name)
        if not callable(method):
            return method
        return lambda path, *args, **kwargs: method(_resolved(path), *args, **kwargs)


def remote_opener(path: Location) -> Any:
    """rasterio's opener of a remote raster: its fsspec filesystem, paths resolved
    (:class:`_Resolving`)."""
    return _Resolving(path.filesystem()[0])


def _resolved(path: Any) -> Any:
    """A path (or URL) with its ``.`` and ``..`` components resolved; anything else as is."""
    if not isinstance(path, str) or not ("/../" in path or "/./" in path):
        return path
    scheme, found, rest = path.partition("://")
    return f"{scheme}://{posixpath.normpath(rest)}" if found else posixpath.normpath(path)


def _level(dataset: Any) -> GdalLevel:
    dtypes = set(dataset.dtypes)
    if len(dtypes) > 1:
        raise ImageReadError(
            f"cannot read {dataset.name}: its bands are of different types "
            f"({', '.join(sorted(dtypes))}); make one type of them (gdal_translate -ot Float32)"
        )
    from rasterio.enums import ColorInterp, MaskFlags

    rows, columns = dataset.block_shapes[0]
    size, units = None, None
    located = dataset.crs is not None or not dataset.transform.is_identity
    if located:  # a GeoTransform, in its CRS's units (or none)
        t = dataset.transform
        size = (float(np.hypot(t.b, t.e)), float(np.hypot(t.a, t.d)))
        crs = dataset.crs
        if crs is None:
            units = "CRS units"
        elif crs.is_geographic:
            units = "°"
        else:
            units = {"metre": "m", "meter": "m"}.get(crs.linear_units, crs.linear_units)
    interpretation = list(dataset.colorinterp) if dataset.count > 1 else []
    alpha = interpretation.index(ColorInterp.alpha) if ColorInterp.alpha in interpretation else None
    flags = dataset.mask_flag_enums[0] if dataset.count else ()
    masked = alpha is None and MaskFlags.per_dataset in flags and MaskFlags.alpha not in flags
    return GdalLevel(
        (int(dataset.count), int(dataset.height), int(dataset.width)),
        np.dtype(dataset.dtypes[0]),
        (int(rows), int(columns)),
        size,
        str(dataset.driver),
        dataset.nodata,
        alpha,
        units,
        bool(masked),
        tuple(_named_files(dataset)),
        located,
        tuple(dataset.nodatavals),
    )


def _named_files(dataset: Any) -> list[str]:
    """The local files GDAL reads for a dataset besides its own (a VRT's sources, an
    Imagine file's spill file, sidecars); those behind ``/vsi…`` (at URLs, or read through
    fsspec: a remote VRT's sources) left out. A dataset read through fsspec is not asked:
    GDAL lists the folder for sidecars through the opener, which for a signed URL (its query
    in every name it tries) did not return."""
    if str(dataset.name).startswith("/vsi"):
        return []
    return [f for f in dataset.files[1:] if not f.startswith("/vsi")]


def gdal_levels(path: Location) -> list[GdalLevel]:
    """The full resolution of a GDAL raster and its overviews (a JPEG 2000's resolution
    levels, a VRT's or Imagine file's overviews), from their headers.

    Raises
    ------
    ImageReadError
        Without rasterio, for a file GDAL cannot open, a VRT whose (local) sources are
        missing, or a raster whose bands differ in type.
    """
    with _serialised(path), _open(path, 0) as dataset:
        levels = [_level(dataset)]
        count = len(dataset.overviews(1)) if dataset.count else 0
    if not path.is_local and gdal_format(path) == "GDAL VRT":  # its sources, at URLs too
        levels = [levels[0]._replace(files=tuple(str(s) for s in vrt_sources(path)))]
    # a URL asked of its server (a refusal raises, naming it: Location.exists)
    missing = [f for f in levels[0].files if not locate_beside(f, path).exists()]
    if missing:  # a VRT's sources: their blocks would fail in the tasks, after a fit
        raise ImageReadError(
            f"cannot read {path}: {len(missing)} of the files it is made of "
            f"{'is' if len(missing) == 1 else 'are'} missing: {', '.join(missing)}"
        )
    full = levels[0]
    for n in range(1, count + 1):
        with _serialised(path), _open(path, n) as overview:
            level = _level(overview)
        # its pixel size from the full resolution's (GDAL gives an overview of a raster without
        # a GeoTransform one of uninitialised numbers), as a pyramid's levels are sized
        size = None
        if full.pixel_size is not None:
            size = tuple(p * f / o for p, f, o in zip(full.pixel_size, full.shape[1:],
                                                      level.shape[1:], strict=True))  # fmt: skip
        levels.append(level._replace(pixel_size=size, units=full.units, located=full.located))
    return levels


def gdal_version(path: Location) -> str:
    """What changes when the raster's pixels are rewritten: the file's version
    (:meth:`~xfskde.io._location.Location.version`) and each other file GDAL reads for it —
    a VRT's bands and tiles, an Imagine file's spill file —, whose rewriting leaves a VRT's
    own bytes as they were. At a URL: a VRT's with its sources' (:func:`vrt_sources`, read
    from its XML, each asked its version), any other raster's alone, without opening it."""
    if not path.is_local:
        if gdal_format(path) != "GDAL VRT":
            return path.version()
        named = [(str(s), s) for s in vrt_sources(path)]
    else:
        with _open(path, 0) as dataset:
            named = [(f, locate(f)) for f in _named_files(dataset)]
    return "; ".join([path.version(), *(f"{f}: {where.version()}" for f, where in named)])


def vrt_sources(path: Location) -> list[Location]:
    """The files a VRT names (its ``SourceFilename`` elements, in order, each once), as
    locations: one named relative to the VRT (``relativeToVRT="1"``, ``../B04.jp2``) beside
    it — at its URL, with its storage options —, one behind GDAL's ``/vsis3/``, ``/vsigs/``
    or ``/vsicurl/`` at that URL, any other as named. Read from the VRT's XML: GDAL, reading
    a VRT at a URL through fsspec, names its sources by paths of its own (``/vsiriopener_…``)."""
    from xml.etree import ElementTree

    with path.open() as file:
        root = ElementTree.fromstring(file.read())
    folder = path.url.split("?", 1)[0].rsplit("/", 1)[0] if not path.is_local else None
    sources: dict[str, Location] = {}
    for element in root.iter("SourceFilename"):
        name = (element.text or "").strip()
        relative = element.get("relativeToVRT") == "1" or not (
            name.startswith(("/", "\\")) or "://" in name or name[1:3] == ":\\"
        )
        if relative:
            base = folder if folder is not None else os.path.dirname(path.url)
            scheme, _, rest = base.partition("://") if "://" in base else ("", "", base)
            joined = posixpath.normpath(f"{rest}/{name}") if scheme else os.path.join(base, name)
            url = f"{scheme}://{joined}" if scheme else os.path.normpath(joined)
        else:
            url = next((f"{scheme}{name[len(prefix):]}" for prefix, scheme in _VSI.items()
                        if name.startswith(prefix)), name)  # fmt: skip
        sources.setdefault(url, locate_beside(url, path))
    return list(sources.values())


#: GDAL's virtual file systems of a VRT's sources, and the URLs they stand for.
_VSI = {"/vsis3/": "s3://", "/vsigs/": "gs://", "/vsicurl/": "", "/vsiaz/": "az://"}


def input_version(path: Location) -> str:
    """The version of an input file or store as its image records it
    (``attrs["source_version"]``) and a finished or resumed write compares it: a raster read
    through GDAL's with the files it names (:func:`gdal_version`), a TIFF's with the
    transparency mask beside it (:func:`~xfskde.io._tiff.mask_sidecar`), any other's
    :meth:`~xfskde.io._location.Location.version`."""
    if gdal_format(path) is not None:
        return gdal_version(path)
    return with_mask_version(path.version(), mask_sidecar(path))


def read_gdal_block(
    path: Location, level: int, version: str, masked: bool = False, block_info: dict | None = None
) -> np.ndarray:
    """The ``(bands, rows, columns)`` block of a GDAL raster's level that a Dask task covers
    (its ``array-location``; ``(rows, columns)`` of a raster of one band): the block function
    of ``dask.array.map_blocks``. With ``masked`` (:attr:`GdalLevel.masked`), float32 with
    NaN where its mask is 0.

    Raises
    ------
    ImageReadError
        When the file, or one it names, changed since it was opened (:func:`gdal_version`),
        or GDAL cannot give the block (a damaged or
        truncated file, a VRT whose sources are gone), naming the file, with GDAL's error as
        its cause.
    """
    import rasterio
    from rasterio.windows import Window

    *bands, (r0, r1), (c0, c1) = block_info[None]["array-location"]
    with named_failures(path, task=True):  # a server's refusal or failure named, as below
        path.refuse_changed(version, (lambda: gdal_version(path)) if path.is_local else None)
    try:  # one thread: GDAL's JPEG 2000 decoder, on threads of its own, reports a damaged
        # codestream there and hands back zeros as if read (a truncated file: all of it)
        with _serialised(path), rasterio.Env(GDAL_NUM_THREADS=1), _open(path, level) as dataset:
            window = Window(c0, r0, c1 - c0, r1 - r0)  # type: ignore[call-arg]
            chosen = 1 if not bands else list(range(bands[0][0] + 1, bands[0][1] + 1))
            values = dataset.read(chosen, window=window)  # one band: (y, x)
            if masked:
                values = values.astype(np.float32)
                values[..., dataset.read_masks(1, window=window) == 0] = np.nan
            return values
    except ImageReadError:
        raise
    except Exception as exc:  # any failure to produce the pixels is the file's, and says so
        if (failure := remote_failure(exc, path, task=True)) is not None:  # or its server's
            raise ImageReadError(str(failure)) from exc
        cause = exc.__cause__ or exc  # rasterio's "Read failed": GDAL's own words are its cause
        detail = f"{type(cause).__name__}: {' '.join(str(cause).split())}"
        raise ImageReadError(
            f"cannot read {path} ({detail}): the file is damaged or truncated, or a source of "
            "a VRT is missing"
        ) from exc
