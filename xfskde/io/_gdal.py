"""Rasters that only GDAL reads — JPEG 2000 (Sentinel-2's bands), VRT mosaics and band stacks
(``gdalbuildvrt``), ERDAS Imagine — described, and read in rectangles inside Dask tasks (the
tasks of :func:`xfskde.io.open_image` named ``xfskde-read-gdal-...``), through rasterio (the
``geo`` extra).

A task receives only the file's :class:`~xfskde.io._location.Location` (a path, or a URL read
through fsspec as rasterio's opener: by byte ranges, with its storage options) and the level,
opens the file with rasterio and reads its rectangle of every band (``Dataset.read`` with a
window): a GDAL dataset is not shared between threads, and opening one reads its header only
(a VRT's XML, a JPEG 2000's boxes). A VRT at a URL is fetched once per opening
(:class:`RemoteVrt`): GDAL opens it, level after level, from those bytes, and its sources are
read from them; each task fetches it once, refuses it rewritten, and refuses a source changed
or gone since the opening as GDAL opens it. GDAL reads on the task's thread alone
(``GDAL_NUM_THREADS=1``): Dask's threads are the parallelism, and the JPEG 2000 decoder's own
threads report a damaged codestream where no one hears it — a truncated file was read as
zeros, without an error. The labels — CRS, coordinates, band descriptions, nodata — are
rioxarray's, read once when the image is opened, as a GeoTIFF's are.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
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
    "GDAL_FORMATS", "GdalLevel", "RemoteVrt", "gdal_format", "gdal_levels", "gdal_version",
    "input_version", "read_gdal_block", "remote_env", "remote_opener", "remote_vrt",
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


def _open(path: Location, level: int, vrt: RemoteVrt | None = None, opener: Any = None) -> Any:
    """The dataset of ``level`` (0: the full resolution; n: the n-th overview); a VRT at a URL
    from its XML as ``vrt`` holds it (not fetched again), or through ``opener``
    (:meth:`RemoteVrt.checked_opener`)."""
    rasterio = _rasterio(path)
    options: dict[str, Any] = {"overview_level": level - 1} if level else {}
    where = path.url
    if not path.is_local:  # through fsspec (rasterio's opener): byte ranges, its credentials
        where = path.filesystem()[1]
        options["opener"] = opener or remote_opener(path, vrt)
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
    resolves it itself).

    ``held``: files given from memory, by their paths in the filesystem (a VRT's XML, fetched
    once per opening). ``checked``: the sources, by their paths, whose version
    (:meth:`~xfskde.io._location.Location.file_version`) is asked as GDAL opens them and
    must be the one given; the first that is not, or cannot be read, is kept in
    :attr:`refused` (GDAL, told only that a source did not open, may read its pixels as
    nodata) and refused by the reader."""

    def __init__(
        self,
        fs: Any,
        held: dict[str, bytes] | None = None,
        checked: dict[str, tuple[Location, str]] | None = None,
    ) -> None:
        self._fs, self._held, self._checked = fs, held or {}, checked or {}
        #: why a source checked as it was opened cannot be read (None while none)
        self.refused: ImageReadError | None = None

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._fs, name)
        if not callable(method):
            return method
        return lambda path, *args, **kwargs: method(_resolved(path), *args, **kwargs)

    def open(self, path: str, mode: str = "rb", **kwargs: Any) -> Any:
        """The file at ``path``: from memory if held, a checked source once its version is
        the one given (its size from that info: not asked again)."""
        path = _resolved(path)
        if path in self._held:
            return io.BytesIO(self._held[path])
        if path not in self._checked:
            return self._fs.open(path, mode, **kwargs)
        source, then = self._checked[path]
        try:
            with named_failures(source, task=True):
                now = source.file_version()  # "N bytes, ETag ...": its size first
                size = int(now.split(" ", 1)[0]) if now[:1].isdigit() else None
        except ImageReadError as error:  # its server's refusal or failure, named
            self.refused = error
            raise
        except FileNotFoundError as error:
            self.refused = ImageReadError(
                f"{source}, a source of the VRT, is gone ({' '.join(str(error).split())}), "
                "where it was when the image was opened: it was removed or moved meanwhile; "
                "open the VRT again (xfskde.open_image) and compute again"
            )
            raise
        if now != then:
            self.refused = ImageReadError(
                f"{source}, a source of the VRT, changed since it was opened ({then} then, "
                f"{now} now): open the VRT again (xfskde.open_image) and compute again"
            )
            raise self.refused
        try:  # fsspec's buffered files take their size: no second info of it
            return self._fs.open(path, mode, size=size, **kwargs)
        except TypeError:
            return self._fs.open(path, mode, **kwargs)

    def size(self, path: str) -> int:
        """The size of the file at ``path`` (a held one's, without a request)."""
        path = _resolved(path)
        if path in self._held:
            return len(self._held[path])
        return int(self._fs.size(path))


def remote_opener(path: Location, vrt: RemoteVrt | None = None) -> Any:
    """rasterio's opener of a remote raster: its fsspec filesystem, paths resolved
    (:class:`_Resolving`); a VRT's XML, as ``vrt`` holds it, from memory."""
    fs, where = path.filesystem()
    return _Resolving(fs, {_resolved(where): vrt.xml} if vrt is not None else None)


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


def gdal_levels(path: Location, vrt: RemoteVrt | None = None) -> list[GdalLevel]:
    """The full resolution of a GDAL raster and its overviews (a JPEG 2000's resolution
    levels, a VRT's or Imagine file's overviews), from their headers; a VRT at a URL from its
    XML as ``vrt`` holds it (:func:`remote_vrt`; fetched here without).

    Raises
    ------
    ImageReadError
        Without rasterio, for a file GDAL cannot open, a VRT whose sources are missing, or a
        raster whose bands differ in type.
    """
    if vrt is None:
        vrt = remote_vrt(path)
    with _serialised(path), _open(path, 0, vrt) as dataset:
        levels = [_level(dataset)]
        count = len(dataset.overviews(1)) if dataset.count else 0
    if vrt is not None:  # its sources, at URLs too: each asked its version once
        levels = [levels[0]._replace(files=tuple(str(s) for s in vrt.sources))]
        missing = vrt.missing()
    else:  # a URL asked of its server (a refusal raises, naming it: Location.exists)
        missing = [f for f in levels[0].files if not locate_beside(f, path).exists()]
    if missing:  # a VRT's sources: their blocks would fail in the tasks, after a fit
        raise ImageReadError(_missing_sources(path, missing))
    full = levels[0]
    for n in range(1, count + 1):
        with _serialised(path), _open(path, n, vrt) as overview:
            level = _level(overview)
        # its pixel size from the full resolution's (GDAL gives an overview of a raster without
        # a GeoTransform one of uninitialised numbers), as a pyramid's levels are sized
        size = None
        if full.pixel_size is not None:
            size = tuple(p * f / o for p, f, o in zip(full.pixel_size, full.shape[1:],
                                                      level.shape[1:], strict=True))  # fmt: skip
        levels.append(level._replace(pixel_size=size, units=full.units, located=full.located))
    return levels


def gdal_version(path: Location, vrt: RemoteVrt | None = None) -> str:
    """What changes when the raster's pixels are rewritten: the file's version
    (:meth:`~xfskde.io._location.Location.version`) and each other file GDAL reads for it —
    a VRT's bands and tiles, an Imagine file's spill file —, whose rewriting leaves a VRT's
    own bytes as they were, each by its size and time (no content digest). At a URL: a VRT's
    (:meth:`RemoteVrt.version`: its XML's digest) with its sources' (each asked once; from
    ``vrt`` where given), any other raster's alone, without opening it."""
    if not path.is_local:
        if gdal_format(path) != "GDAL VRT":
            return path.version()
        vrt = vrt or RemoteVrt(path)
        named = [f"{s}: {v}" for s, v in zip(vrt.sources, vrt.versions(), strict=True)]
        return "; ".join([vrt.version, *named])
    else:
        with _open(path, 0) as dataset:
            named = [(f, locate(f)) for f in _named_files(dataset)]
    # the files named by their size and time: a digest of each (a VRT of a thousand tiles)
    # would read 256 KiB of every one at each open and, past the digests' cache, each block
    return "; ".join([path.version(), *(f"{f}: {where.version(content=False)}"
                                        for f, where in named)])  # fmt: skip


class RemoteVrt:
    """A VRT at a URL as one opening reads it: its XML, fetched once (one request; GDAL opens
    it, level after level, from these bytes: :class:`_Resolving`), its sources as the XML
    names them (:func:`vrt_sources`) and their versions, asked once each
    (:meth:`versions`).

    Parameters
    ----------
    path : Location
        The VRT's URL.
    xml : bytes, optional
        Its XML, read already; fetched here without.
    """

    __slots__ = ("_versions", "path", "sources", "xml")

    def __init__(self, path: Location, xml: bytes | None = None) -> None:
        if xml is None:
            fs, where = path.filesystem()
            xml = bytes(fs.cat_file(where))
        self.path, self.xml = path, xml
        self.sources = tuple(vrt_sources(path, xml))
        self._versions: dict[Location, str | None] | None = None

    @property
    def version(self) -> str:
        """The VRT's own version: its XML's size and SHA-256 (what a task fetching it again
        compares, with no request of its own)."""
        return f"{len(self.xml)} bytes, sha256 {hashlib.sha256(self.xml).hexdigest()}"

    def _asked(self) -> dict[Location, str | None]:
        """Each source's version (:meth:`~xfskde.io._location.Location.file_version`), None
        for one its server says is not there; asked once."""
        if self._versions is None:
            versions: dict[Location, str | None] = {}
            for source in self.sources:
                try:
                    versions[source] = source.file_version()
                except FileNotFoundError as error:  # 404, or fsspec's HTTP for any refusal
                    failure = remote_failure(error, source)
                    if failure is not None and not isinstance(failure, FileNotFoundError):
                        raise failure from None  # a 403, a 500: named, not "missing"
                    versions[source] = None
            self._versions = versions
        return self._versions

    def missing(self) -> list[str]:
        """The sources that are not there."""
        return [str(s) for s, v in self._asked().items() if v is None]

    def versions(self) -> list[str]:
        """Each source's version, in :attr:`sources`' order.

        Raises
        ------
        ImageReadError
            Naming the sources that are missing.
        """
        if missing := self.missing():
            raise ImageReadError(_missing_sources(self.path, missing))
        return [v for v in self._asked().values() if v is not None]

    def checked_opener(self, versions: tuple[str, ...]) -> _Resolving:
        """rasterio's opener of the VRT in a task: its XML from here, each source's version
        asked as GDAL opens it and refused unless it is the one in ``versions``
        (:attr:`sources`' order, as :meth:`versions` gave them when it was opened)."""
        fs, where = self.path.filesystem()
        checked = {_resolved(s.filesystem()[1]): (s, v)
                   for s, v in zip(self.sources, versions, strict=True)}  # fmt: skip
        return _Resolving(fs, {_resolved(where): self.xml}, checked)


def remote_vrt(path: Location) -> RemoteVrt | None:
    """A VRT at a URL fetched (:class:`RemoteVrt`), else None (a local file, another
    format)."""
    if path.is_local or gdal_format(path) != "GDAL VRT":
        return None
    return RemoteVrt(path)


def _missing_sources(path: Location, missing: list[str]) -> str:
    return (
        f"cannot read {path}: {len(missing)} of the files it is made of "
        f"{'is' if len(missing) == 1 else 'are'} missing: {', '.join(missing)}"
    )


def vrt_sources(path: Location, xml: bytes | None = None) -> list[Location]:
    """The files a VRT names (its ``SourceFilename`` elements, in order, each once), as
    locations: one named relative to the VRT (``relativeToVRT="1"``, ``../B04.jp2``) beside
    it — at its URL, with its storage options —, one behind GDAL's ``/vsis3/``, ``/vsigs/``
    or ``/vsicurl/`` at that URL, any other as named. Read from the VRT's XML (``xml``, read
    already; else read here): GDAL, reading a VRT at a URL through fsspec, names its sources
    by paths of its own (``/vsiriopener_…``)."""
    from xml.etree import ElementTree

    if xml is None:
        with path.open() as file:
            xml = file.read()
    root = ElementTree.fromstring(xml)
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


def input_version(path: Location, vrt: RemoteVrt | None = None) -> str:
    """The version of an input file or store as its image records it
    (``attrs["source_version"]``) and a finished or resumed write compares it: a raster read
    through GDAL's with the files it names (:func:`gdal_version`; a VRT at a URL as ``vrt``
    read it, if given), a TIFF's with the transparency mask beside it
    (:func:`~xfskde.io._tiff.mask_sidecar`), any other's
    :meth:`~xfskde.io._location.Location.version`."""
    if gdal_format(path) is not None:
        return gdal_version(path, vrt)
    return with_mask_version(path.version(), mask_sidecar(path))


def read_gdal_block(
    path: Location,
    level: int,
    version: str,
    masked: bool = False,
    block_info: dict | None = None,
    sources: tuple[str, ...] | None = None,
) -> np.ndarray:
    """The ``(bands, rows, columns)`` block of a GDAL raster's level that a Dask task covers
    (its ``array-location``; ``(rows, columns)`` of a raster of one band): the block function
    of ``dask.array.map_blocks``. With ``masked`` (:attr:`GdalLevel.masked`), float32 with
    NaN where its mask is 0.

    ``version`` is the file's as it was opened (:func:`gdal_version` of a local file;
    :meth:`RemoteVrt.version` of a VRT at a URL, whose ``sources`` are its sources'
    versions, :meth:`RemoteVrt.versions`; :meth:`~xfskde.io._location.Location.version` of
    any other URL). A VRT at a URL is fetched once here, and each source GDAL opens for the
    block is asked its version as it is opened.

    Raises
    ------
    ImageReadError
        When the file, or one it names, changed or is gone since it was opened, naming it, or
        GDAL cannot give the block (a damaged or truncated file, a VRT whose sources are
        gone), naming the file, with GDAL's error as its cause.
    """
    import rasterio
    from rasterio.windows import Window

    *bands, (r0, r1), (c0, c1) = block_info[None]["array-location"]
    vrt, opener = None, None
    with named_failures(path, task=True):  # a server's refusal or failure named, as below
        if sources is not None:  # a VRT at a URL: its XML fetched once, and compared
            vrt = RemoteVrt(path)
            if vrt.version != version:
                raise ImageReadError(
                    f"{path} changed since it was opened (its XML is another: {version} "
                    f"then, {vrt.version} now): open it again (xfskde.open_image) and "
                    "compute again"
                )
            opener = vrt.checked_opener(sources)
        else:
            path.refuse_changed(version, (lambda: gdal_version(path)) if path.is_local else None)
    try:  # one thread: GDAL's JPEG 2000 decoder, on threads of its own, reports a damaged
        # codestream there and hands back zeros as if read (a truncated file: all of it)
        with (
            _serialised(path),
            rasterio.Env(GDAL_NUM_THREADS=1),
            _open(path, level, vrt, opener) as dataset,
        ):
            window = Window(c0, r0, c1 - c0, r1 - r0)  # type: ignore[call-arg]
            chosen = 1 if not bands else list(range(bands[0][0] + 1, bands[0][1] + 1))
            values = dataset.read(chosen, window=window)  # one band: (y, x)
            if masked:
                values = values.astype(np.float32)
                values[..., dataset.read_masks(1, window=window) == 0] = np.nan
        if opener is not None and opener.refused is not None:  # GDAL may have gone on
            raise opener.refused
        return values
    except ImageReadError:
        raise
    except Exception as exc:  # any failure to produce the pixels is the file's, and says so
        if opener is not None and opener.refused is not None:  # a source's, named
            raise opener.refused from exc
        if (failure := remote_failure(exc, path, task=True)) is not None:  # or its server's
            raise ImageReadError(str(failure)) from exc
        cause = exc.__cause__ or exc  # rasterio's "Read failed": GDAL's own words are its cause
        detail = f"{type(cause).__name__}: {' '.join(str(cause).split())}"
        raise ImageReadError(
            f"cannot read {path} ({detail}): the file is damaged or truncated, or a source of "
            "a VRT is missing"
        ) from exc
