"""Reading rectangles of one TIFF pyramid level inside Dask tasks (the tasks of
:func:`xfskde.io.open_image` named ``xfskde-read-tiff-...``).

A task receives only the file's :class:`~xfskde.io._location.Location` — an absolute path or a
URL with its storage options, never an open handle or pixel data — opens the file once per
process and decodes the tiles or strips that overlap its rectangle (a remote file is read by
byte ranges through fsspec). Two readers:

* **Segments** — for the common layout of whole-slide and satellite TIFFs: a level stored in a
  single page, tiled or stripped, samples interleaved (``YX`` or ``YXS``). The task asks
  tifffile for exactly the segments it needs (``FileHandle.read_segments``) and decodes them with
  ``TiffPage.decode`` (any codec tifffile knows, JPEG tables of SVS files included), or, when
  they are stored uncompressed, copies them straight out of a memory map of the file (a local
  one). On a
  4112² rectangle of a 32768² file of 512² uncompressed tiles: 3.4 ms from the memory map,
  21–30 ms read and decoded segment by segment, 16 ms and more through the Zarr view below,
  whose every tile goes through zarr's asynchronous store machinery.
* **Zarr** — anything else (a level spread over several pages, planar samples, volumes) through
  tifffile's Zarr interface (``imread(aszarr=True)``), which handles every layout tifffile does.
"""

from __future__ import annotations

import functools
import sys
import threading
from typing import Any

import numpy as np
import tifffile
import zarr

from ..exceptions import ImageReadError
from ._location import Location, remote_failure

__all__ = [
    "MASK_SIDECAR",
    "mapped_strips",
    "mask_sidecar",
    "read_tiff_block",
    "tiff_level",
    "with_mask_version",
]

#: The suffix GDAL adds to a TIFF's name for the file of its transparency mask, written beside
#: it unless ``GDAL_TIFF_INTERNAL_MASK`` is on (rasterio's ``write_mask`` with GDAL 3.10 writes
#: it so): ``ortho.tif.msk``
MASK_SIDECAR = ".msk"
_TIFF_SUFFIXES = (".tif", ".tiff")

_NATIVE_ORDER = "<" if sys.byteorder == "little" else ">"


class _SegmentReader:
    """Rectangles of a single-page, chunk-interleaved TIFF level, read segment by segment.

    Uncompressed segments in the machine's byte order are copied once, straight out of a memory
    map of the bytes the block spans; the others are read and decoded by tifffile.
    """

    def __init__(self, tif: Any, page: Any, has_samples: bool, mappable: bool) -> None:
        self._tif = tif
        self._page = page
        self._extra = (page.samplesperpixel,) if has_samples else ()
        self._tile = page.chunks[:2]  # (rows, columns) of a tile, or (rows per strip, width)
        self._across = -(-page.imagewidth // self._tile[1])
        self._lock = threading.RLock()
        self._row_bytes = _row_bytes(page)
        self._raw = mappable and _is_raw(tif, page)

    def _place(self, out: np.ndarray, segment: np.ndarray, index: int, r0: int, c0: int) -> None:
        """Copy the part of one segment that falls in ``out`` (whose origin is r0, c0)."""
        y0, x0 = (index // self._across) * self._tile[0], (index % self._across) * self._tile[1]
        ys, ye = max(r0, y0), min(r0 + out.shape[0], y0 + segment.shape[0])
        xs, xe = max(c0, x0), min(c0 + out.shape[1], x0 + segment.shape[1])
        out[ys - r0 : ye - r0, xs - c0 : xe - c0] = segment[ys - y0 : ye - y0, xs - x0 : xe - x0]

    def _read_decoded(self, indices: list[int], out: np.ndarray, r0: int, c0: int) -> None:
        page = self._page
        # without tifffile's ``indices``: tifffile 2025.10 and older looked a single segment up
        # by its index in the lists given (IndexError); each yields its position in them
        segments = self._tif.filehandle.read_segments(
            [page.dataoffsets[i] for i in indices],
            [page.databytecounts[i] for i in indices],
            lock=self._lock,
        )
        for data, position in segments:
            index = indices[position]
            segment, _, shape = page.decode(data, index, jpegtables=page.jpegtables)
            if segment is not None:  # a sparse file's missing tile reads as zeros, like tifffile's
                self._place(out, segment.reshape(shape[1:3] + self._extra), index, r0, c0)

    def _read_mapped(self, indices: list[int], out: np.ndarray, r0: int, c0: int) -> None:
        """Copy uncompressed segments out of a memory map of just the bytes they span.

        The map lives only while one block is read, so a worker's resident memory never grows
        with the size of the file (Dask's memory manager watches it).
        """
        page = self._page
        present = [i for i in indices if page.databytecounts[i] > 0]
        if not present:
            return
        lo = min(page.dataoffsets[i] for i in present)
        hi = max(page.dataoffsets[i] + page.databytecounts[i] for i in present)
        # np.memmap owns its map: it is unmapped when the last view of it goes, however views
        # are released (a bare mmap.mmap refuses to close while any view is alive)
        mapped = np.memmap(self._tif.filehandle.path, np.uint8, mode="r", offset=lo, shape=hi - lo)
        for i in present:
            start, count = page.dataoffsets[i] - lo, page.databytecounts[i]
            flat = mapped[start : start + count].view(page.dtype)
            segment = flat.reshape(count // self._row_bytes, self._tile[1], *self._extra)
            self._place(out, segment, i, r0, c0)

    def __getitem__(self, region: tuple[slice, ...]) -> np.ndarray:
        (r0, r1), (c0, c1) = ((s.start, s.stop) for s in region[:2])
        th, tw = self._tile
        indices = [
            ty * self._across + tx
            for ty in range(r0 // th, -(-r1 // th))
            for tx in range(c0 // tw, -(-c1 // tw))
        ]
        whole = None if self._raw or len(indices) != 1 else self._whole(indices[0], region)
        if whole is not None:
            return whole[(slice(None), slice(None), *region[2:])]
        out = np.zeros((r1 - r0, c1 - c0, *self._extra), self._page.dtype)
        (self._read_mapped if self._raw else self._read_decoded)(indices, out, r0, c0)
        return out[(slice(None), slice(None), *region[2:])]

    def _whole(self, index: int, region: tuple[slice, ...]) -> np.ndarray | None:
        """Segment ``index`` decoded, when it is exactly the rectangle of ``region`` (a strip
        or tile read whole, as a stripped image of one strip is): returned as decoded, not
        copied into a block of zeros first, which held the segment twice (a 16384² RGB TIFF of
        one deflated strip peaked at 2.2 GB, 0.8 GB of it the copy); else None. The block is
        read-only where the codec gives bytes (deflate, LZW, zstd), as a Dask block may be."""
        page = self._page
        y0, x0 = (index // self._across) * self._tile[0], (index % self._across) * self._tile[1]
        rows = min(self._tile[0], page.imagelength - y0)
        cols = min(self._tile[1], page.imagewidth - x0)
        given = (region[0].start, region[0].stop, region[1].start, region[1].stop)
        if given != (y0, y0 + rows, x0, x0 + cols) or page.databytecounts[index] == 0:
            return None
        ((data, _),) = self._tif.filehandle.read_segments(
            [page.dataoffsets[index]], [page.databytecounts[index]], lock=self._lock
        )
        segment, _, shape = page.decode(data, index, jpegtables=page.jpegtables)
        del data  # the compressed bytes go before the block is used
        if segment is None:  # a sparse file's missing tile: zeros, as tifffile reads it
            return np.zeros((rows, cols, *self._extra), page.dtype)
        return segment.reshape(shape[1:3] + self._extra)[:rows, :cols]  # an edge tile, padded


def _row_bytes(page: Any) -> int:
    """The bytes of one row of a tile or strip of ``page`` as stored (samples interleaved)."""
    return page.chunks[1] * page.samplesperpixel * np.dtype(page.dtype).itemsize


def _is_raw(tif: Any, page: Any) -> bool:
    """Whether the segments of ``page`` are stored as the pixels themselves (uncompressed, in
    whole rows of whole bytes, in the machine's byte order): read by copying them out of a
    memory map of the file."""
    dtype = np.dtype(page.dtype)
    return (
        page.compression == 1
        and page.fillorder == 1
        and page.bitspersample == 8 * dtype.itemsize
        and (dtype.itemsize == 1 or tif.byteorder == _NATIVE_ORDER)
        and all(n % _row_bytes(page) == 0 for n in page.databytecounts)
    )


def _segment_page(image: Any) -> Any:
    """The page of a TIFF level (a tifffile series level) that :class:`_SegmentReader` reads:
    a level stored in a single page, samples interleaved, axes ``YX`` or ``YXS``; else None
    (the level is read through tifffile's Zarr view)."""
    page = image.pages[0] if len(image.pages) == 1 else None
    if (
        page is not None
        and image.axes in ("YX", "YXS")
        and tuple(page.shape) == tuple(image.shape)
        and page.imagedepth == 1
        and (page.samplesperpixel == 1 or page.planarconfig == 1)
        and len(page.dataoffsets) > 0
    ):
        return page
    return None


def mapped_strips(tif: Any, image: Any) -> bool:
    """Whether a level of a local TIFF (a tifffile series level) is stored in uncompressed
    strips that the tasks copy out of a memory map: any rectangle of it is then read at the
    cost of its own rows, so its chunks need not hold whole strips (a strip of the whole
    image made a single task of a 16384² slide, 1.8 GB at once)."""
    page = _segment_page(image)
    return page is not None and not page.is_tiled and _is_raw(tif, page)


def mask_sidecar(path: Location) -> Location | None:
    """The file of a TIFF's transparency mask beside it (``ortho.tif.msk``, a TIFF of one
    band and the image's levels, 0 where there is no data), as GDAL finds it; None where
    there is none, or where it cannot be reached (a bucket that answers 403 for a key that
    does not exist: the image itself is read, or refused, on its own)."""
    if not path.name.lower().endswith(_TIFF_SUFFIXES) or path.has_query:
        return None
    sidecar = Location(path.url + MASK_SIDECAR, path.storage_options)
    try:
        return sidecar if sidecar.is_file() else None
    except Exception:  # a remote answer other than a file (403, 5xx): no mask
        return None


def with_mask_version(version: str, sidecar: Location | None) -> str:
    """A TIFF's ``version`` with that of the transparency mask ``sidecar`` beside it
    (:func:`mask_sidecar`), if it has one: what its image records and a write compares."""
    return version if sidecar is None else f"{version}; {sidecar.name}: {sidecar.version()}"


@functools.lru_cache(maxsize=16)
def tiff_level(path: Location, level: int, version: str, series: int = 0) -> Any:
    """An indexable reader of one pyramid level of a series (an image of a multi-image file),
    opened once per process and file version.

    ``version`` (:meth:`Location.version`: the size, mtime and content digest, or a remote
    file's size and fsspec key) is part of the cache key, and the file opened must be of that
    version (:meth:`Location.refuse_changed`; a local file's is checked at every block too,
    with one ``stat``: the digest is cached by the file's status).
    The reader is :class:`_SegmentReader` for a single-page, chunk-interleaved level and
    tifffile's Zarr view of the level otherwise; both are indexed with a tuple of slices.
    """
    tif = tifffile.TiffFile(path.url if path.is_local else path.open(), name=path.name)
    path.refuse_changed(version)  # the file opened is the one the image was planned on
    image = tif.series[series].levels[level]
    if (page := _segment_page(image)) is not None:
        return _SegmentReader(tif, page, has_samples=image.axes == "YXS", mappable=path.is_local)
    return zarr.open(tif.aszarr(series=series, level=level), mode="r")


def read_tiff_block(
    path: Location, level: int, version: str, series: int = 0, block_info: dict | None = None
) -> np.ndarray:
    """The block of a TIFF level (of series ``series``) that a Dask task covers (its
    ``array-location``).

    The block function of ``dask.array.map_blocks``: ``block_info`` is filled in by Dask.

    Raises
    ------
    ImageReadError
        When the file cannot give the block — truncated, a damaged tile, a codec that cannot
        decode it — naming the file, with the reader's own error as its cause.
    """
    loc = block_info[None]["array-location"]
    if path.is_local:  # a stat per block: a file replaced mid-run is not read in part
        path.refuse_changed(version)
    try:
        return tiff_level(path, level, version, series)[tuple(slice(a, b) for a, b in loc)]
    except ImageReadError:
        raise
    except Exception as exc:  # any failure to produce the pixels is the file's, and says so
        if (failure := remote_failure(exc, path, task=True)) is not None:  # or its server's
            raise ImageReadError(str(failure)) from exc
        detail = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        raise ImageReadError(
            f"cannot read {path} ({detail}): the file is damaged, truncated or in a codec that "
            "cannot be decoded"
        ) from exc
