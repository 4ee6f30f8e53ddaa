"""Where an image or a store lives: a local path made absolute, or an fsspec URL with its
storage options — the one form in which :mod:`xfskde.io` passes a location to Dask tasks.

A :class:`Location` is decided once, on the client, before any task is built:

* a local path (``str`` or :class:`os.PathLike`, ``~`` expanded, or a ``file://`` URL) becomes
  absolute, so that a worker started in another working directory finds the same file;
* any other URL (``s3://``, ``gs://``, ``http(s)://``, ``memory://``, ...) is kept as it is,
  with its ``storage_options`` (credentials, ``endpoint_url``, ...), and read and written
  through fsspec. Its protocol must be one fsspec can serve here: ``s3://`` needs s3fs
  (``pip install 'xfskde[s3]'``), ``gs://`` gcsfs (``xfskde[gcs]``), ``http(s)://`` aiohttp
  (``xfskde[http]``); a missing one is an :class:`ImportError` saying which extra to install.

It is small and picklable (a URL and a dict), so tasks receive it, never an open file or
filesystem, and open what they need themselves. ``memory://`` lives in one process: use it with
the threaded scheduler, not with processes or a cluster.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import hashlib
import json
import math
import os
import re
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import fsspec
from fsspec.core import split_protocol

from ..exceptions import ImageReadError, ParameterError
from ._record import _CHUNKS_ATTR, _STATUS_ATTR

__all__ = [
    "UNITS",
    "Location",
    "locate",
    "micrometres",
    "same_version",
    "store_target",
    "zarr_like",
]

#: fsspec protocols served read-only: a store cannot be written there.
_READ_ONLY = ("http", "https")
#: The extra that installs the fsspec implementation of a protocol.
#: fsspec protocols of object stores, whose paths begin with a bucket.
_BUCKETS = ("s3", "s3a", "gs", "gcs")
_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "http": "http", "https": "http"}


#: Names of zip files that hold a Zarr store (``.ozx``: a single-file OME-Zarr, NGFF RFC-9).
ZIP_SUFFIXES = (".zip", ".ozx")
#: The unit of physical coordinates: micrometres.
UNITS = "µm"
#: Lengths of the units that OME, OME-Zarr (UDUNITS names), ImageJ and TIFF tags use, in µm.
_MICROMETRES = {
    "µm": 1.0, "um": 1.0, "micron": 1.0, "microns": 1.0, "micrometer": 1.0, "micrometre": 1.0,
    "\u03bcm": 1.0, "nm": 1e-3, "nanometer": 1e-3, "nanometre": 1e-3, "pm": 1e-6,
    "picometer": 1e-6, "picometre": 1e-6, "mm": 1e3,
    "millimeter": 1e3, "millimetre": 1e3, "cm": 1e4, "centimeter": 1e4, "centimetre": 1e4,
    "m": 1e6, "meter": 1e6, "metre": 1e6, "å": 1e-4, "angstrom": 1e-4, "in": 25400.0,
    "inch": 25400.0, "inches": 25400.0,
}  # fmt: skip
#: OME's symbols that differ from others only by case (megametre, petametre: not mm, pm).
_CASED = {"Mm": 1e12, "Pm": 1e21}
#: A character escaped as ImageJ writes a unit in its description (``unit=\\u00B5m``: µm).
_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})")


def micrometres(value: Any, unit: Any) -> float | None:
    """A length in µm, or None if the value or its unit is not a known physical length.

    Parameters
    ----------
    value : Any
        The length, a number or its text; not a positive finite number: None.
    unit : Any
        Its unit (``"nm"``, ``"mm"``, ``"micron"``, ...), escaped as ImageJ and Fiji write it
        in their description (``\\u00B5m``, the micro sign; ``\\u03BCm``, the Greek mu) or
        not; None means :data:`UNITS`, µm.

    Returns
    -------
    float or None
    """
    try:
        length = float(value)
    except (TypeError, ValueError):
        return None
    name = UNITS if unit is None else _ESCAPED.sub(lambda m: chr(int(m[1], 16)), str(unit))
    scale = _CASED.get(name.strip(), _MICROMETRES.get(name.strip().lower()))
    return length * scale if scale is not None and math.isfinite(length) and length > 0 else None


#: The files at the root of a Zarr store: v3's metadata, v2's group's and array's.
_ZARR_ROOTS = ("zarr.json", ".zgroup", ".zarray")


class Location:
    """An absolute local path, or a URL and the storage options to reach it.

    Parameters
    ----------
    url : str
        An absolute local path (no scheme), or a URL with a protocol fsspec knows.
    storage_options : mapping, optional
        Keyword arguments of the fsspec filesystem (remote URLs only).
    """

    __slots__ = ("storage_options", "url")

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None = None) -> None:
        self.url = url
        self.storage_options = dict(storage_options or {})

    # ---------------------------------------------------------------- identity and display

    @property
    def protocol(self) -> str:
        """``"file"`` for a local path, else the URL's protocol (``"s3"``, ``"http"``, ...)."""
        return split_protocol(self.url)[0] or "file"

    @property
    def is_local(self) -> bool:
        """Whether this is a local path (protocol ``"file"``)."""
        return self.protocol == "file"

    @property
    def read_only(self) -> bool:
        """Whether nothing can be written there (``http(s)://``)."""
        return self.protocol in _READ_ONLY

    @property
    def name(self) -> str:
        """The last component of the path (``"slide.ome.tif"``); of an HTTP(S) URL's path,
        without its query and fragment (a signed URL's ``?X-Amz-Signature=...``), which do
        not name the file's format."""
        url = self.url
        if self.protocol in ("http", "https"):
            url = url.split("#", 1)[0].split("?", 1)[0]
        return url.rstrip("/").rsplit("/", 1)[-1]

    @property
    def has_query(self) -> bool:
        """Whether an HTTP(S) URL carries a query (a signed URL): no file beside it can be
        named by changing its path."""
        return self.protocol in ("http", "https") and "?" in self.url

    @property
    def stem(self) -> str:
        """:attr:`name` without its last suffix (``"slide.ome"`` for ``"slide.ome.tif"``)."""
        return Path(self.name).stem

    def _key(self) -> tuple[str, str]:
        return self.url, json.dumps(self.storage_options, sort_keys=True, default=repr)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Location) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        options = f", storage_options={self.storage_options!r}" if self.storage_options else ""
        return f"Location({self.url!r}{options})"

    def __getstate__(self) -> tuple[str, dict]:
        return self.url, self.storage_options

    def __setstate__(self, state: tuple[str, dict]) -> None:
        self.url, self.storage_options = state

    def token(self) -> str:
        """A string that names the location in Dask keys (options included, values hidden).

        Returns
        -------
        str
            The URL, then the sorted names of the storage options (not their values).
        """
        return f"{self.url}|{sorted(self.storage_options)}"

    # ------------------------------------------------------------------------ filesystem

    def filesystem(self) -> tuple[fsspec.AbstractFileSystem, str]:
        """The fsspec filesystem and the path in it (fsspec caches the filesystems).

        Returns
        -------
        fs : fsspec.AbstractFileSystem
            The filesystem (the local one for a local path).
        path : str
            The path in it.
        """
        if self.is_local:
            return fsspec.filesystem("file"), self.url
        return fsspec.core.url_to_fs(self.url, **self.storage_options)

    def exists(self) -> bool:
        """Whether something is here. A URL that the server refuses (401, 403), fails to
        serve (5xx) or that cannot be reached raises, naming why: fsspec's ``exists`` says
        False for all of them, and the user read "no such image" and checked the path.

        Returns
        -------
        bool
            True when a file or directory (a prefix, an object) is here.

        Raises
        ------
        PermissionError
            For a URL whose server answers 401 or 403.
        ConnectionError
            For a URL whose server fails (5xx) or cannot be reached.
        """
        if self.is_local:
            return os.path.exists(self.url)
        fs, path = self.filesystem()
        if fs.exists(path):
            return True
        self._refuse_unreachable(fs, path)
        return False

    def _refuse_unreachable(self, fs: Any, path: str) -> None:
        """Raise where a URL that ``exists`` found nothing at was not answered "not found":
        :class:`PermissionError` for 401 and 403, :class:`ConnectionError` for a server error
        or a server that cannot be reached (both OSErrors: the command line's one line)."""
        try:
            fs.info(path)
        except FileNotFoundError as error:  # fsspec's HTTP answer to everything: its cause
            failure = remote_failure(error, self)
            if failure is not None and not isinstance(failure, FileNotFoundError):
                raise failure from None
        except Exception:  # nothing more to learn: what exists() said stands
            return

    def refuse_missing_bucket(self) -> None:
        """Refuse to write under an object store's bucket (``s3://``, ``gs://``) that does not
        exist: the write failed at its first object with the filesystem's own "The specified
        bucket does not exist", said as "[Errno None] cannot write ..." by the command line.
        A bucket that cannot be asked about (no right to) is left for the write to try.

        Raises
        ------
        ParameterError
            Naming the bucket and what to do.
        """
        if self.protocol not in _BUCKETS:
            return
        fs, path = self.filesystem()
        bucket = path.split("/", 1)[0]
        try:
            fs.info(bucket)
        except FileNotFoundError:
            raise ParameterError(
                f"cannot write {self}: the bucket {bucket} does not exist: create it first, "
                "or name one that exists"
            ) from None
        except Exception:  # no right to ask, a server's failure: the write says what it meets
            return

    def is_dir(self) -> bool:
        """Whether a directory is here (remotely: a prefix with objects under it).

        Returns
        -------
        bool
            True for a directory.
        """
        if self.is_local:
            return os.path.isdir(self.url)
        fs, path = self.filesystem()
        return bool(fs.isdir(path))

    def is_file(self) -> bool:
        """Whether a file (remotely: an object) is here.

        Returns
        -------
        bool
            True for a file.
        """
        if self.is_local:
            return os.path.isfile(self.url)
        fs, path = self.filesystem()
        return bool(fs.isfile(path))

    def is_empty_dir(self) -> bool:
        """A directory (or, remotely, a prefix) with nothing in it.

        Returns
        -------
        bool
            True for an empty directory; False for a file or nothing.
        """
        if self.is_local:
            return os.path.isdir(self.url) and not os.listdir(self.url)
        fs, path = self.filesystem()
        return bool(fs.isdir(path)) and not fs.ls(path, detail=False)

    def is_occupied(self) -> bool:
        """Whether something is there: a file, or a directory (prefix) that is not empty.

        Returns
        -------
        bool
            True for a file or a directory that holds something.
        """
        return self.exists() and not self.is_empty_dir()

    def holds(self, other: Location) -> bool:
        """Whether ``other`` is this location or lies under it (a file in this folder, at any
        depth): local paths compared once symbolic links are resolved, URLs of the same
        protocol by their paths.

        Parameters
        ----------
        other : Location
            The location that may lie here; of another protocol it never does.

        Returns
        -------
        bool
        """
        if self.protocol != other.protocol:
            return False
        if self.is_local:
            outer, inner = os.path.realpath(self.url), os.path.realpath(other.url)
            return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)
        outer, inner = self.url.rstrip("/"), other.url.rstrip("/")
        return inner == outer or inner.startswith(outer + "/")

    def is_zarr_store(self) -> bool:
        """Whether a Zarr store (v3 or v2: its root's ``zarr.json``, ``.zgroup`` or
        ``.zarray``) is here.

        Returns
        -------
        bool
            True when one of those files is at the root.
        """
        fs, path = self.filesystem()
        return any(fs.exists(f"{path.rstrip('/')}/{name}") for name in _ZARR_ROOTS)

    def remove(self) -> None:
        """Remove the file or the whole directory (prefix) there, if anything is there."""
        fs, path = self.filesystem()
        if fs.exists(path):
            fs.rm(path, recursive=True)

    def open(self, mode: str = "rb") -> Any:
        """An open binary file (random access: remote files are read by ranges).

        Parameters
        ----------
        mode : str, optional
            As :func:`open` and fsspec take it: ``"rb"`` (the default) to read, ``"wb"`` to
            write.

        Returns
        -------
        file-like
        """
        if self.is_local:
            return open(self.url, mode)
        fs, path = self.filesystem()
        return fs.open(path, mode)

    def open_ranged(self) -> Any:
        """An open binary file to be read in parts (a TIFF's tiles), refused at once where its
        HTTP server does not honour byte ranges.

        Such a server (``python -m http.server``, some proxies) answers every request with the
        whole file: fsspec then reads only from the beginning, so the header opens and every
        tile later fails in the Dask tasks. Its last byte is read first, one request of one byte
        where ranges are honoured.

        Raises
        ------
        ImageReadError
            When the server sends the whole file for a range.

        Returns
        -------
        file object
            Open for binary reading, at its beginning (the caller closes it).
        """
        file = self.open()
        if self.protocol in _READ_ONLY and file.size:
            try:
                file.seek(file.size - 1)
                file.read(1)
                file.seek(0)
            except ValueError as exc:  # fsspec's "doesn't appear to support range requests"
                file.close()
                raise ImageReadError(
                    f"cannot read {self} by parts: its HTTP server sends the whole file for "
                    "every byte range asked, and a TIFF is read tile by tile; serve it from a "
                    "server that honours ranges (nginx, Apache, an object store) or download it"
                ) from exc
        return file

    def version(self, content: bool = True) -> str:
        """What changes when the data here is rewritten: a file's size and modification time
        (at a URL, its size and fsspec's key of its info — an S3 object's ETag); for a
        directory (a Zarr store), a SHA-256 of the same over every file in it (at a URL, of
        what the listing says of each: sizes, ETags, times).

        Recorded by :func:`xfskde.open_image` (``attrs["source_version"]``) and compared by a
        resumed write, whose blocks must all come from the same pixels. A URL directory that
        cannot be listed (an HTTP server without index pages) is known by its root metadata
        only (``zarr.json``, or Zarr v2's ``.zgroup``, ``.zattrs``, ``.zarray``), and one
        listed with names and sizes only (HTTP) by those: there, a chunk rewritten in place at
        the same size goes unseen.

        A store xfskde wrote inside the directory (a nested Zarr group whose ``zarr.json``
        holds the ``xfskde_status`` attribute: a result written next to the pixels it was
        computed from, ``image.zarr/fskde.zarr``) is not part of it: else writing the result
        would change its own input's version, and a resume would compute it again every time.
        Nor is an OME-Zarr image's ``labels`` group (label images added to it, by ``xfskde
        segment``, napari or QuPath: its pixels are the same); its ``zarr.json`` counts by its
        content less the consolidated metadata that such an addition rewrites.

        A local file's version also holds a digest of pieces of its content
        (:func:`_sampled_digest`): a file replaced by another of the same size and time (copied
        over it with ``cp -p``, restored from a backup, staged by a script within one second
        as a tar archive keeps times) was taken for the first, and a resume kept the first
        image's blocks beside the second's.

        Parameters
        ----------
        content : bool, optional
            Whether a local file's version holds the digest of its content; default True.
            False for the many files a VRT names, each read apart
            (:func:`~xfskde.io._gdal.gdal_version`).

        Returns
        -------
        str
            A file's ``"<size> bytes, modified <UTC time>, content <digest>"`` (at a URL,
            ``"<size> bytes, <key>"``), or a directory's digest.
        """
        if self.is_local:
            if not os.path.isdir(self.url):
                stat = os.stat(self.url)
                version = f"{stat.st_size} bytes, modified {_utc(stat.st_mtime_ns)}"
                if not content:
                    return version
                digest = _sampled_digest(self.url, stat.st_size, stat.st_mtime_ns,
                                         stat.st_ctime_ns, stat.st_ino)  # fmt: skip
                return f"{version}, content {digest}"
            return _tree_version(_local_files(self.url, len(self.url.rstrip(os.sep)) + 1))
        fs, path = self.filesystem()
        fs.invalidate_cache(path)  # what is there now, not what a listing cached before
        try:
            is_dir = fs.isdir(path)
        except OSError:  # no right to list (a public bucket): a file answers info, a store not
            try:
                is_dir = fs.info(path).get("type") == "directory"
            except OSError:
                is_dir = True
        if not is_dir:
            return self._file_version(fs, path)
        try:
            listing = fs.find(path, detail=True)
        except (OSError, NotImplementedError, ValueError):
            listing = {}
        if not listing:  # not listable: its root metadata (Zarr v3's, or v2's) stands for it
            names = (f"{path.rstrip('/')}/{m}" for m in (*_ZARR_ROOTS, ".zattrs"))
            listing = {meta: fs.info(meta) for meta in names if fs.exists(meta)}
        results = [
            name[: -len("/zarr.json")] + "/"
            for name in listing
            if name.endswith("/zarr.json")
            and name.rstrip("/").count("/") > path.rstrip("/").count("/") + 1
            and _is_result(fs.cat_file(name))
        ]  # xfskde's stores nested in it: not part of it
        root, lines = f"{path.rstrip('/')}/zarr.json", []
        if root in listing and _is_ome_image(metadata := fs.cat_file(root)):
            # an image's labels are not its pixels, nor their consolidated metadata
            results += [f"{path.rstrip('/')}/labels/", root]
            lines.append(_image_metadata(metadata))
        # each entry as the filesystem lists it: its size and whatever names its content or
        # time there (an S3 ETag, GCS's md5Hash and generation, ...)
        return _tree_version(
            lines
            + [
                f"{name}\0{sorted(info.items())}"
                for name, info in sorted(listing.items())
                if not name.startswith(tuple(results))
            ]
        )

    def file_version(self) -> str:
        """:meth:`version` of what is known to be a file (a VRT's source, a VRT read whole):
        at a URL one request (fsspec's info, read afresh), where :meth:`version` first asks
        whether a directory is there (an HTTP server: a GET).

        Returns
        -------
        str
            What :meth:`version` says of the same file.
        """
        if self.is_local:
            return self.version()
        fs, path = self.filesystem()
        fs.invalidate_cache(path)
        return self._file_version(fs, path)

    def _file_version(self, fs: Any, path: str) -> str:
        """A remote file's size and what names its content (:func:`_content_key`), from one
        info of it."""
        info = fs.info(path)
        return f"{info.get('size')} bytes, {_content_key(fs, path, info)}"

    def refuse_changed(self, version: str, current: Callable[[], str] | None = None) -> None:
        """Refuse to read a file that is not the ``version`` (:meth:`version`, or what
        ``current`` gives: a VRT's, with the files it names) its image was opened on:
        rewritten since, its tiles would be read at the old layout's offsets, or another
        image's pixels mixed with the first one's.

        Parameters
        ----------
        version : str
            The version the image was opened on (:meth:`version`, or ``current``'s then).
        current : callable, optional
            What gives the version now; default :meth:`version` of this location.

        Raises
        ------
        ImageReadError
            Naming both versions.
        """
        try:
            now = self.version() if current is None else current()
        except FileNotFoundError:
            raise ImageReadError(_unseen(self)) from None
        if now != version:
            raise ImageReadError(
                f"{self} changed since it was opened ({version} then, {now} now): open it "
                "again (xfskde.open_image) and compute again"
            )

    # ------------------------------------------------------------------------------ zarr

    @property
    def is_zip(self) -> bool:
        """A zip file (``.zip``, or ``.ozx``: a single-file OME-Zarr): a Zarr store read in
        place, locally, through zarr's ``ZipStore``."""
        return self.name.lower().endswith(ZIP_SUFFIXES)

    def zarr_store(self, *, read_only: bool = False) -> Any:
        """What ``zarr.open_*`` takes: the path itself when local (a local zip file: a
        ``ZipStore``, read only: writers refuse zip files), else an ``FsspecStore``.

        Parameters
        ----------
        read_only : bool, optional
            Open a remote store read only (a local path is opened as ``zarr.open_*``'s mode
            says; a local zip file is always read only).

        Returns
        -------
        str, zarr.storage.ZipStore or zarr.storage.FsspecStore
        """
        if self.is_local and self.is_zip:
            import zarr.storage

            return zarr.storage.ZipStore(self.url, mode="r")
        if self.is_local:
            return self.url
        import zarr.storage

        return zarr.storage.FsspecStore.from_url(
            self.url, storage_options=self.storage_options or None, read_only=read_only
        )


#: What names a remote file's content in fsspec's info of it, most telling first: an S3
#: object's ETag, a GCS object's generation and MD5, an HTTP server's ETag and digests.
_CONTENT_KEYS = ("ETag", "etag", "generation", "md5Hash", "Content-MD5", "Digest", "crc32c")
#: Else its time of writing (an S3 listing gives it in local time, a HEAD in UTC).
_TIME_KEYS = ("LastModified", "last_modified", "Last-Modified", "updated", "mtime", "modified")


def _content_key(fs: Any, path: str, info: Mapping[str, Any] | None = None) -> str:
    """What names the content of a remote file now: its ETag, generation or digest (or the
    time it was written, in UTC) from fsspec's info, read afresh; the filesystem's ``ukey``
    only where the info holds none of them. Not ``ukey`` first: s3fs hashes the whole info,
    which a listing of the folder (GDAL looks for a JPEG 2000's sidecars beside it) fills with
    other fields and its time in local time, and the same object then had two versions: a
    read refused as "changed since it was opened" in 6 of 8 runs. ``info``: that info, read
    already."""
    info = fs.info(path) if info is None else info
    for key in _CONTENT_KEYS:
        if info.get(key):
            return f"{key} {str(info[key]).strip(chr(34))}"
    for key in _TIME_KEYS:
        value = info.get(key)
        if isinstance(value, datetime.datetime):
            value = value.astimezone(datetime.UTC).isoformat()
        if value:
            return f"{key} {value}"
    return str(fs.ukey(path))


#: A local file's content digest reads this many pieces of :data:`_DIGEST_PIECE` bytes.
_DIGEST_PIECES = 64
_DIGEST_PIECE = 4096


@functools.lru_cache(maxsize=4096)
def _sampled_digest(path: str, size: int, mtime_ns: int, ctime_ns: int, inode: int) -> str:
    """The first 16 hex digits of a SHA-256 of :data:`_DIGEST_PIECES` pieces of
    :data:`_DIGEST_PIECE` bytes spread evenly over a local file, its first and last bytes
    included (of the whole file, when smaller): 256 KiB read once per process and version of
    the file, whatever its size. Two files of the same size are told apart unless they differ
    only between the pieces (two uncompressed images alike but there: a compressed one's
    tiles shift every later byte); a digest of every byte would read a slide's gigabytes at
    every open.

    Cached by the file's status (``size``, ``mtime_ns``, ``ctime_ns``, ``inode``): a block
    read checks the file's version at each block (:meth:`Location.refuse_changed`) with one
    ``stat``. A file written again changes its status time, which no tool sets back."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        if size <= _DIGEST_PIECES * _DIGEST_PIECE:
            digest.update(file.read())
        else:
            last = size - _DIGEST_PIECE
            for i in range(_DIGEST_PIECES):
                file.seek(i * last // (_DIGEST_PIECES - 1))
                digest.update(file.read(_DIGEST_PIECE))
    return digest.hexdigest()[:16]


#: A local file's content digest in its version (:meth:`Location.version`).
_CONTENT = re.compile(r", content [0-9a-f]{16}")


def same_version(then: str, now: str) -> bool:
    """Whether an input's version recorded by a store is its version now.

    Equal, or, where ``then`` was recorded before local files' versions held a content digest
    (2026-12-02), equal but for the digests ``now`` holds: a store begun before is not written
    again, nor reported stale, for that alone.

    Parameters
    ----------
    then : str
        The version a store recorded (``source_version``, ``mask_version``).
    now : str
        The version now (:meth:`Location.version`, or a composite of several files' versions).

    Returns
    -------
    bool
        True when ``then`` is ``now``.
    """
    return then == now or (", content " not in then and _CONTENT.sub("", now) == then)


def _utc(ns: int) -> str:
    """A time in nanoseconds since the epoch as UTC, to the nanosecond (ISO 8601)."""
    seconds = datetime.datetime.fromtimestamp(ns // 10**9, datetime.UTC)
    return f"{seconds:%Y-%m-%dT%H:%M:%S}.{ns % 10**9:09d}Z"


def _unseen(location: Location) -> str:
    """Why a task cannot find a local input the client opened: it is gone, or the task runs on
    a worker of a cluster on a machine that does not share its folder."""
    return (
        f"{location} is not there for the task that reads it, on {socket.gethostname()}: it was "
        "removed since it was opened, or a cluster's worker runs on a machine that does not "
        "share its folder (read it from a folder every worker shares, or from a URL)"
    )


def metadata_stamp(location: Location) -> str:
    """The size and modification time of a local Zarr array's metadata file (``zarr.json``,
    or Zarr v2's ``.zarray``): what a task reading the array checks first
    (:func:`check_stamp`), one stat."""
    for name in ("zarr.json", ".zarray"):
        try:
            stat = os.stat(os.path.join(location.url, name))
        except FileNotFoundError:
            continue
        return f"{name} {stat.st_size} bytes, modified {_utc(stat.st_mtime_ns)}"
    raise FileNotFoundError(f"no Zarr array metadata in {location}")


def check_stamp(block: Any, location: Location, stamp: str) -> Any:
    """``block``, read from the local Zarr array at ``location``, once its metadata file is
    still the one the client saw (:func:`metadata_stamp`): a worker that does not share the
    folder reads no chunk there, and a Zarr array reads a missing chunk as its fill value
    (zeros, without an error). A block function of ``dask.array.map_blocks``."""
    try:
        now = metadata_stamp(location)
    except FileNotFoundError:
        raise ImageReadError(_unseen(location)) from None
    if now != stamp:
        raise ImageReadError(
            f"{location} changed since it was opened ({stamp} then, {now} now), or this task's "
            f"machine ({socket.gethostname()}) has another store under its name: open it again "
            "(xfskde.open_image) from a folder every worker shares"
        )
    return block


def _attributes(metadata: bytes) -> dict[str, Any]:
    """The attributes of a Zarr v3 node's ``zarr.json`` (empty when it cannot be read)."""
    try:
        attributes = json.loads(metadata).get("attributes")
    except (ValueError, AttributeError):
        return {}
    return attributes if isinstance(attributes, dict) else {}


def _is_result(metadata: bytes) -> bool:
    """Whether a nested Zarr group's ``zarr.json`` is that of a store xfskde wrote (its
    attributes hold ``xfskde_status``)."""
    return _STATUS_ATTR in _attributes(metadata)


def _image_metadata(metadata: bytes) -> str:
    """An OME-Zarr image's ``zarr.json`` as its version counts it: its content, less the
    consolidated metadata of the nodes under it and xfskde's count of their chunks (which a
    label image added rewrites: its pixels are the same)."""
    node = json.loads(metadata)
    node.pop("consolidated_metadata", None)
    if isinstance(node.get("attributes"), dict):
        node["attributes"].pop(_CHUNKS_ATTR, None)
    text = json.dumps(node, sort_keys=True)
    return f"zarr.json\0{hashlib.sha256(text.encode()).hexdigest()}"


def _is_ome_image(metadata: bytes) -> bool:
    """Whether a Zarr group's ``zarr.json`` is an OME-Zarr image's (multiscales), whose
    ``labels`` group holds label images made from it (OME-NGFF), not its pixels."""
    attributes = _attributes(metadata)
    ome = attributes.get("ome")
    return bool(attributes.get("multiscales") or (isinstance(ome, dict) and ome.get("multiscales")))


def _local_files(folder: str, skip: int, top: bool = True) -> Iterator[str]:
    """Every file under a local directory, in name order, as ``name, size, modification
    time`` with the first ``skip`` characters of its path left out (one ``stat`` per file:
    50 000 files in 0.11 s on a local disk), but those of xfskde's stores nested in it."""
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    skipped: tuple[str, ...] = ()
    if any(e.name == "zarr.json" for e in entries):
        with open(os.path.join(folder, "zarr.json"), "rb") as file:
            metadata = file.read()
        if not top and _is_result(metadata):
            return
        if top and _is_ome_image(metadata):  # its labels, and their consolidated metadata
            skipped = ("labels", "zarr.json")
            yield _image_metadata(metadata)
    for entry in entries:
        if entry.name in skipped:
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _local_files(entry.path, skip, top=False)
        else:
            stat = entry.stat()
            yield f"{entry.path[skip:]}\0{stat.st_size}\0{stat.st_mtime_ns}"


def _tree_version(files: Iterable[str]) -> str:
    """A directory's version: how many files, and a SHA-256 of what is known of each (one
    line per file, in a fixed order)."""
    digest, count = hashlib.sha256(), 0
    for line in files:
        digest.update(f"{line}\n".encode())
        count += 1
    return f"{count} files, sha256 {digest.hexdigest()[:16]}"


def _check_protocol(protocol: str, url: str) -> None:
    try:
        fsspec.get_filesystem_class(protocol)
    except ImportError as exc:
        extra = _EXTRAS.get(protocol)
        hint = f"pip install 'xfskde[{extra}]'" if extra else "install its fsspec implementation"
        raise ImportError(f"{url} needs the {protocol}:// filesystem: {hint}") from exc
    except ValueError as exc:
        raise ParameterError(f"{url}: unknown protocol {protocol!r} ({exc})") from exc


#: What a server's 401 or 403 asks of the user (:meth:`Location.exists`, and the command
#: line's line for a refusal while the blocks are read).
NEEDS_CREDENTIALS = (
    "it needs credentials (a token in the request's headers: storage_options={'client_kwargs': "
    "{'headers': {'Authorization': ...}}}; or a signed URL)"
)


#: aiohttp's errors (by class name: aiohttp is no dependency) of a connection that broke or
#: timed out while a file was read: the server went away, or stopped answering.
_BROKEN = ("ServerDisconnectedError", "ClientPayloadError", "ServerTimeoutError",
           "ClientConnectionResetError", "TimeoutError")  # fmt: skip
#: aiohttp's errors of a server that cannot be reached at all (refused, no route, no name).
_UNREACHED = ("ClientConnectorError", "ClientOSError")
#: botocore's (s3fs's) errors of missing credentials and of an endpoint that cannot be reached.
_NO_CREDENTIALS = ("NoCredentialsError", "PartialCredentialsError", "DefaultCredentialsError")
_NO_ENDPOINT = ("EndpointConnectionError", "ConnectTimeoutError", "ConnectionClosedError")


def _causes(error: BaseException) -> Iterator[BaseException]:
    """An error and the errors it was raised from (``raise ... from``), nearest first.

    Not the errors it was raised while handling (``__context__``): an error raised in a
    handler (a write's note of what it kept, which asks the output's filesystem) would take
    the failure it handles, of another URL, for its own."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__


def _kinds(error: BaseException) -> set[str]:
    return {kind.__name__ for kind in type(error).__mro__}


def remote_failure(
    error: BaseException, location: Location, *, task: bool = False, writing: bool = False
) -> OSError | None:
    """The one-line error that says why a URL could not be read, or None where ``error`` (or
    what it was raised from) is no failure of the remote filesystem.

    fsspec's HTTP filesystem raises every answer but 2xx as a bare ``FileNotFoundError(url)``
    (the server's answer in its cause), and a connection that breaks, or a server that cannot
    be reached, as aiohttp's own errors: read as they were, a 403 or a 500 was "no such
    image", a server stopped halfway an "internal error", and a tile the server did not send
    a "damaged" file. Here each is named, with what to do.

    Parameters
    ----------
    error : BaseException
        What reading ``location`` raised.
    location : Location
        The URL read.
    task : bool
        Whether a Dask task read it (on a cluster's worker, perhaps): the machine is named,
        and missing credentials or endpoint are said to be that machine's.
    writing : bool
        Whether the task wrote there (a store's block): only missing credentials or endpoint
        are named (what else a write meets is the writer's to say).

    Returns
    -------
    OSError or None
        :class:`PermissionError` (401, 403, no credentials), :class:`FileNotFoundError`
        (404, 410) or :class:`ConnectionError` (a server's failure, a broken connection, a
        server or endpoint that cannot be reached).
    """
    if location.is_local:
        return None
    for cause in _causes(error):
        failure = _failure(cause, location, task)
        if writing and not _kinds(cause) & {*_NO_CREDENTIALS, *_NO_ENDPOINT}:
            continue
        if failure is not None:
            kind, message = failure
            here = f" (in a task on {socket.gethostname()})" if task else ""
            return kind(f"{message}{here}")
    return None


@contextlib.contextmanager
def named_failures(
    location: Location, *, task: bool = False, writing: bool = False
) -> Iterator[None]:
    """Around code that reads ``location``: a failure of its remote filesystem is raised as
    :func:`remote_failure` names it (from the original error), any other error as it is.

    In a Dask task (``task=True``) it is an :class:`ImageReadError` of that message: an
    input's error, as a task's other reading errors are, which a writer passes on with a
    note of the blocks it kept. A task that writes there (``writing=True``) raises the
    :class:`OSError` itself, and only for credentials or an endpoint it lacks."""
    try:
        yield
    except Exception as error:
        failure = remote_failure(error, location, task=task, writing=writing)
        if failure is None:
            raise
        if task and not writing:
            raise ImageReadError(str(failure)) from error
        raise failure from error


def _failure(
    cause: BaseException, location: Location, task: bool
) -> tuple[type[OSError], str] | None:
    """:func:`remote_failure` of one error of the chain: the kind of error and its message."""
    kinds = _kinds(cause)
    status, message, asked = getattr(cause, "status", None), "", ""
    if "ClientResponseError" in kinds and isinstance(status, int):
        message = str(getattr(cause, "message", "") or "")
        asked = str(getattr(getattr(cause, "request_info", None), "real_url", "") or "")
    elif _is_not_found(cause, location):  # fsspec's HTTP 404: FileNotFoundError(url)
        status, message, asked = 404, "Not Found", str(cause.args[0])
    if isinstance(status, int) and (message or asked):
        said = f"{location}: the server answered {status} {message}".rstrip()
        if asked and asked != location.url:  # a file of a store: its zarr.json, a chunk
            said = f"{said} for {asked}"
        if status in (401, 403):
            return PermissionError, f"{said}: {NEEDS_CREDENTIALS}"
        if status in (404, 410):
            if task or asked != location.url:
                return FileNotFoundError, (f"{said}, where it served the data a moment before: "
                                           "it was removed, moved or rewritten meanwhile; open "
                                           "it again")  # fmt: skip
            return FileNotFoundError, f"{said}: no such file"
        if status >= 500:
            return ConnectionError, f"{said} (its own failure): try again later"
        return ConnectionError, f"{said}: it cannot be read from there"
    if kinds & set(_UNREACHED):
        return ConnectionError, f"cannot reach {location}: {_said(cause)}"
    if kinds & set(_BROKEN):
        return ConnectionError, (
            f"{location}: the connection broke while it was read ({_said(cause)}): the server "
            "went away or stopped answering; try again once it serves again"
        )
    if (  # s3fs's, gcsfs's refusal or "not found" (the cause, if any, is named from there)
        task
        and type(cause) in (PermissionError, FileNotFoundError)
        and cause.__cause__ is None
        and location.protocol not in _READ_ONLY
    ):
        said = " ".join(str(cause).split())
        if type(cause) is PermissionError:
            return PermissionError, (
                f"{location}: the storage service refused access ({said}): check the "
                "credentials of the machine that reads it, and that the bucket's policy "
                "grants them this object"
            )
        return FileNotFoundError, (
            f"{location} is gone ({said}), where it was when the image was opened: it was "
            "removed or moved meanwhile; open it again"
        )
    if kinds & set(_NO_CREDENTIALS) and task:
        return PermissionError, (
            f"no credentials to read or write {location} ({_said(cause)}): a task reaches the "
            "bucket itself, on the machine that runs it; configure the credentials there too "
            "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, in the environment "
            "of every worker), or pass storage_options, which travel with the tasks"
        )
    if kinds & set(_NO_ENDPOINT) and task:
        return ConnectionError, (
            f"cannot reach the storage service of {location} ({_said(cause)}): a task reaches "
            "it itself, on the machine that runs it; give every worker the same endpoint "
            "(AWS_ENDPOINT_URL in its environment), or pass storage_options' endpoint_url, "
            "which travels with the tasks"
        )
    return None


def _is_not_found(error: BaseException, location: Location) -> bool:
    """Whether ``error`` is how fsspec's HTTP filesystem says its server answered 404 for a
    read (a bare ``FileNotFoundError(url)``, no cause) of ``location`` or a file of it."""
    if location.protocol not in _READ_ONLY or type(error) is not FileNotFoundError:
        return False
    if error.__cause__ is not None:  # the server's own answer is its cause: named from there
        return False
    if len(error.args) != 1 or not isinstance(error.args[0], str):
        return False
    url, root = error.args[0], location.url.rstrip("/")
    return url == location.url or url.startswith(f"{root}/")


def _said(error: BaseException) -> str:
    """An error as one line: its class and message."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def locate(
    source: str | os.PathLike | Location, storage_options: Mapping[str, Any] | None = None
) -> Location:
    """The :class:`Location` of a path or URL, decided on the client.

    Parameters
    ----------
    source : str, os.PathLike or Location
        A local path (relative paths are made absolute here, ``~`` is expanded), a ``file://``
        URL, an fsspec URL (``s3://bucket/key``, ``http://host/slide.tif``, ...), or a
        Location (returned as it is, or with ``storage_options`` in place of its own).
    storage_options : mapping, optional
        Options of the remote filesystem; refused with a local path, where they would be
        silently ignored.

    Raises
    ------
    ImportError
        If the protocol's fsspec implementation is not installed (naming the extra).
    ParameterError
        For an unknown protocol, or storage options given with a local path.

    Returns
    -------
    Location
        Its ``url`` absolute for a local path.
    """
    if isinstance(source, Location):  # decided already: given options replace its own
        return Location(source.url, storage_options) if storage_options else source
    text = os.fspath(source)
    protocol, rest = split_protocol(text)
    if protocol in (None, "file", "local"):
        if storage_options:
            raise ParameterError(
                f"storage_options were given for the local path {text}: they apply to URLs "
                "(s3://, gs://, http://, ...) only; drop them"
            )
        return Location(os.path.abspath(os.path.expanduser(rest if protocol else text)))
    _check_protocol(protocol, text)
    return Location(text, storage_options)


def locate_beside(source: str | os.PathLike, other: Location) -> Location:
    """The :class:`Location` of a path or URL named with ``other`` (a VRT's source, a mask
    for an image read from a bucket): reached with ``other``'s storage options where it is a
    URL of the same protocol, as it is otherwise."""
    where = locate(source)
    if where.is_local or where.protocol != other.protocol or not other.storage_options:
        return where
    return Location(where.url, other.storage_options)


def store_target(store: Any, storage_options: Mapping[str, Any] | None = None) -> Any:
    """Where a store is: a :class:`Location` for a path or URL (absolute, decided here on the
    client), a zarr store object as it is.

    Parameters
    ----------
    store : str, os.PathLike, Location or zarr store
        The store's path or URL, its Location, or a zarr store object.
    storage_options : mapping, optional
        Options of the fsspec filesystem of a URL; refused with a zarr store object, which
        carries its own.

    Returns
    -------
    Location or zarr store

    Raises
    ------
    ParameterError
        For ``storage_options`` with a zarr store object.
    """
    if isinstance(store, Location):
        return store
    if isinstance(store, str | os.PathLike):
        return locate(store, storage_options)
    if storage_options:
        raise ParameterError(
            "storage_options apply to a path or URL; a zarr store object carries its own"
        )
    return store


def zarr_like(store: Any) -> Any:
    """What ``zarr.open_*`` takes for a store target.

    Parameters
    ----------
    store : Location or zarr store
        A target of :func:`store_target`.

    Returns
    -------
    str or zarr store
        :meth:`Location.zarr_store` of a Location, anything else as it is.
    """
    return store.zarr_store() if isinstance(store, Location) else store
