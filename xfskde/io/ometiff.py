"""Writing maps and label images as a pyramidal OME-TIFF: :func:`write_ome_tiff`.

OME-TIFF is what most microscopy software opens without a plug-in — QuPath, Fiji (Bio-Formats),
OMERO's importer, napari (through tifffile) — so the maps of a slide, and its texture labels,
go where its microscopists already look. The file is a faithful copy of the OME-Zarr image that
:func:`xfskde.io.write_ome_zarr` writes of the same maps (one pyramid rule, in one place: 2×2
means, doubled-angle means for axial channels, modes for labels; see :mod:`xfskde.io.omezarr`):
that image is written to a temporary store beside the file, then copied level by level with
tifffile, a strip of tiles at a time, so nothing is held whole in memory.

**Layout.**

* **Series 0**: the maps, float32 ``(c, y, x)``, one channel per map, named by it
  (``Channel Name`` in the OME-XML) and in its OME-Zarr colour (``Channel Color``: a
  segmentation's abundances in their textures' label colours, :mod:`xfskde._palette`); NaN
  where a map has no value.
* **Series 1** (when there are labels): each label image, in the dtype the OME-Zarr holds
  (uint8 for up to 254 textures), named ``labels/<name>``; a segmentation's labels are
  palette images whose TIFF colour map holds each texture's colour (background black), the
  colours of the OME-Zarr label image, napari and the GeoTIFFs.
* **Pyramid**: every series has the levels of the OME-Zarr image, as reduced-resolution
  SubIFDs of its full-resolution page (the layout Bio-Formats 6+, QuPath and tifffile read).
  Tiles of ``tile`` pixels, ``compression`` (deflate by default, on every core), BigTIFF when
  the levels may pass 2 GiB.
* **Attrs**: the parameters of the maps and, for labels, the texture model that made them, as
  the key-value pairs of an OME ``MapAnnotation`` (namespace ``xfskde``) on each series, which
  OMERO shows and :func:`xfskde.segmentation.read_model` reads back.
* **Pixel size**: with a pixel size known (the input's, as the OME-Zarr writer reads it), the
  OME-XML's ``PhysicalSizeX``/``PhysicalSizeY`` in µm for the level-0 samples (a stride-8 map of
  a 0.5 µm slide: 4 µm) and the TIFF resolution tags (pixels per centimetre) for software that
  reads only those.

**Where the samples sit.** OME-TIFF has no translation (the centre of the first sample, which
the OME-Zarr's translation gives, is kept as the key-value pairs ``y``, ``x`` in µm of the
namespace ``xfskde.origin``, from which :func:`xfskde.open_image` places the samples exactly
where the maps' own coordinates were): a map's pixel (i, j) is drawn over the
rectangle of its own size at (i, j) of the image's frame. xfskde's stride-``s`` results describe
the cells ``i*s .. i*s + s - 1`` of the input, anchored at its corner (:mod:`xfskde._labels`),
so a map opened at the slide's origin with its pixel size lies exactly over the cells it
describes in viewers that place pixels by their corners (QuPath, Fiji), as in the OME-Zarr
(whose translations say the same thing in the input's frame). Viewers that place pixels by
their centres (napari: index × scale) need the OME-Zarr's translation, (s - 1)/2 input pixels.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tifffile
import zarr

from ..exceptions import ParameterError, StoreExistsError
from ._location import locate
from .geotiff import check_tile
from .images import ORIGIN_NAMESPACE
from .omezarr import COARSEST, write_ome_zarr

__all__ = ["copy_ome_zarr_to_tiff", "temporary_ome_zarr", "write_ome_tiff"]

#: Default tile side of every level (a multiple of 16, as TIFF requires).
TILE = 256
#: The namespace of the key-value pairs (OME ``MapAnnotation``) that hold each series' attrs.
ANNOTATION_NAMESPACE = "xfskde"
#: Above this many bytes of uncompressed levels the file is a BigTIFF (offsets past 4 GiB).
_CLASSIC_LIMIT = 2**31
#: Bytes of tiles tifffile gathers before compressing them on its threads (its default,
#: 512 MiB, was 0.4 GiB more at the peak of a 16384² slide's copy; 32 MiB is 128 float32 tiles).
_ENCODE_BUFFER = 2**25


def write_ome_tiff(
    maps: Any,
    path: str | os.PathLike,
    *,
    labels: Mapping[str, Any] | None = None,
    axial: Sequence[str] | None = None,
    pixel_size: float | Sequence[float] | None = None,
    coarsest: int = COARSEST,
    name: str | None = None,
    tile: int = TILE,
    compression: str | None = "zlib",
    overwrite: bool = False,
    scheduler: Any = None,
    progress: bool = False,
) -> Path:
    """Write real-valued maps (and label images) as a pyramidal OME-TIFF, out of core.

    The maps — e.g. the orientation, coherence and energy of a local FS-KDE field (paper,
    section 2.3, eq. 1; :mod:`xfskde.orientation`) or the texture abundances of a segmentation —
    become the channels of series 0, the labels series 1; both keep the pyramid, channel names
    and pixel size of the OME-Zarr image :func:`xfskde.io.write_ome_zarr` writes of them (the
    module docstring, :mod:`xfskde.io.ometiff`, gives the layout).

    Parameters
    ----------
    maps : xarray.DataArray, xarray.Dataset or mapping of str to DataArray
        As :func:`xfskde.io.write_ome_zarr` takes them: one ``(y, x)`` map, a ``(c, y, x)``
        DataArray, or named ``(y, x)`` maps on one grid; NumPy- or Dask-backed.
    path : str or path-like
        The file to write, a local path (``*.ome.tif`` by convention).
    labels : mapping of str to DataArray, optional
        Integer ``(y, x)`` label images, e.g. ``{"textures": xfskde.segment(...)}``.
    axial, pixel_size, coarsest, name : optional
        As in :func:`xfskde.io.write_ome_zarr`, with the same defaults.
    tile : int, optional
        Tile side of every level in pixels, a positive multiple of 16 (default 256).
    compression : str or None, optional
        tifffile's compression of the tiles (default ``"zlib"``: deflate, which every TIFF
        reader decodes); None stores them raw.
    overwrite : bool, optional
        Replace a file at ``path``; otherwise an existing file is refused.
    scheduler, progress : optional
        As in :func:`xfskde.io.write_ome_zarr`, with the same defaults.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    StoreExistsError
        If ``path`` exists and ``overwrite`` is False.
    ParameterError
        For a URL (the file is local), a ``tile`` that TIFF cannot hold, and as
        :func:`xfskde.io.write_ome_zarr` (a georeferenced map, whose place an OME-TIFF cannot
        record, is refused: write a GeoTIFF).
    DimensionError
        As :func:`xfskde.io.write_ome_zarr`.

    Examples
    --------
    >>> maps = {"orientation": orientation(field), "coherence": coherence(field)}  # doctest: +SKIP
    >>> write_ome_tiff(maps, "maps.ome.tif")  # doctest: +SKIP
    """
    path = _target(path, tile, overwrite)
    with temporary_ome_zarr(path) as store:
        write_ome_zarr(
            maps, store, labels=labels, axial=axial, pixel_size=pixel_size, coarsest=coarsest,
            name=name, scheduler=scheduler, progress=progress,
        )  # fmt: skip
        return copy_ome_zarr_to_tiff(store, path, tile=tile, compression=compression,
                                     overwrite=overwrite)  # fmt: skip


@contextlib.contextmanager
def temporary_ome_zarr(path: str | os.PathLike) -> Iterator[Path]:
    """A place for the OME-Zarr image of the OME-TIFF ``path``: the hidden store
    ``.NAME.ome.zarr`` beside it (on its disk; an absolute path, which a cluster's workers that
    see the folder write to whatever their working directory), removed after. Its name is
    fixed, so a run killed before it could remove it (SIGKILL, a power cut) leaves one, which
    the next write of the same file removes first; an interrupt (Ctrl-C, SIGTERM) removes it
    and says so in a note on the exception, naming it, since a run killed outright would
    have left it there.

    Parameters
    ----------
    path : str or path-like
        The OME-TIFF to be written, a local path.

    Yields
    ------
    pathlib.Path
        The store's absolute path (nothing there yet).
    """
    path = Path(os.fspath(path)).resolve()
    store = path.with_name(f".{path.name}.ome.zarr")
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(store, ignore_errors=True)
    try:
        yield store
    except KeyboardInterrupt as exc:
        shutil.rmtree(store, ignore_errors=True)
        exc.add_note(
            f"the working store of {path.name}, {store}, was removed (a run killed outright, "
            "kill -9 or a power cut, leaves it: delete it, or the next run replaces it)"
        )
        raise
    finally:
        shutil.rmtree(store, ignore_errors=True)


def copy_ome_zarr_to_tiff(
    store: str | os.PathLike,
    path: str | os.PathLike,
    *,
    tile: int = TILE,
    compression: str | None = "zlib",
    overwrite: bool = False,
) -> Path:
    """Copy an OME-Zarr image written by xfskde (its maps and label images) to an OME-TIFF.

    What :func:`write_ome_tiff` does after writing the OME-Zarr image; here for a store that
    exists (e.g. ``xfskde segment SLIDE OUT.ome.zarr``). The file is written as
    ``PATH.partial`` beside ``path`` and renamed when whole, so a file at ``path`` is never
    half written.

    Parameters
    ----------
    store : str or path-like
        A local OME-Zarr 0.5 image with the layout of :mod:`xfskde.io.omezarr`.
    path : str or path-like
        The OME-TIFF to write.
    tile, compression, overwrite : optional
        As in :func:`write_ome_tiff`, with the same defaults.

    Returns
    -------
    pathlib.Path
        The path written.
    """
    path = _target(path, tile, overwrite)
    root = zarr.open_group(os.fspath(store), mode="r")
    series = [(root, str(root.attrs["ome"]["multiscales"][0].get("name", "image")))]
    if "labels" in root:
        names = root["labels"].attrs["ome"]["labels"]
        series += [(root["labels"][n], f"labels/{n}") for n in names]
    levels = [_levels(group) for group, _ in series]
    total = sum(a.nbytes for arrays in levels for a in arrays)
    partial = path.with_name(path.name + ".partial")
    try:
        with tifffile.TiffWriter(partial, bigtiff=total > _CLASSIC_LIMIT, ome=True) as tif:
            for (group, title), arrays in zip(series, levels, strict=True):
                _write_series(tif, group, title, arrays, tile, compression)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def _target(path: str | os.PathLike, tile: Any, overwrite: bool) -> Path:
    """The local file to write, checked: not a URL, a valid tile, nothing there to keep."""
    if not locate(path).is_local:
        raise ParameterError(
            f"{path}: an OME-TIFF is written as a local file; write it locally and copy it, or "
            "write an OME-Zarr image to the URL (write_ome_zarr)"
        )
    check_tile(tile)
    path = Path(os.fspath(path))
    if path.exists() and not overwrite:
        raise StoreExistsError(f"{path} exists; pass overwrite=True to replace it")
    return path


def _levels(group: zarr.Group) -> list[zarr.Array]:
    """A multiscale group's level arrays, full resolution first."""
    datasets = group.attrs["ome"]["multiscales"][0]["datasets"]
    return [group[d["path"]] for d in datasets]


def _placement(group: zarr.Group) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """Micrometres per level-0 sample (y, x) and the centre of its first sample, when the
    image's axes are in micrometres (its level-0 scale and translation)."""
    multiscale = group.attrs["ome"]["multiscales"][0]
    axes = multiscale["axes"]
    if any(a["name"] in ("y", "x") and a.get("unit") != "micrometer" for a in axes):
        return None
    transforms = multiscale["datasets"][0]["coordinateTransformations"]
    scale = next(t["scale"] for t in transforms if t["type"] == "scale")
    shift = next((t["translation"] for t in transforms if t["type"] == "translation"),
                 [0.0] * len(scale))  # fmt: skip
    return (float(scale[-2]), float(scale[-1])), (float(shift[-2]), float(shift[-1]))


def _write_series(
    tif: tifffile.TiffWriter,
    group: zarr.Group,
    title: str,
    arrays: list[zarr.Array],
    tile: int,
    compression: str | None,
) -> None:
    """One OME series: the full-resolution page with the coarser levels as its SubIFDs."""
    first = arrays[0]
    channels = first.ndim == 3
    metadata: dict[str, Any] = {"axes": "CYX" if channels else "YX", "Name": title}
    if channels:
        omero = group.attrs["ome"].get("omero", {}).get("channels", [])
        names = [c.get("label", f"channel {i}") for i, c in enumerate(omero)]
        metadata["Channel"] = {"Name": names or [f"channel {i}" for i in range(first.shape[0])]}
        colours = [_ome_colour(c.get("color")) for c in omero]
        if colours and None not in colours:  # as the OME-Zarr shows them (QuPath reads them)
            metadata["Channel"]["Color"] = colours
    annotations = []
    recorded = group.attrs.get("xfskde", {})
    attrs = recorded.get("attrs") if isinstance(recorded, Mapping) else None
    if isinstance(attrs, Mapping) and attrs:  # parameters, a texture model: key-value pairs
        pairs = {str(k): _text(v) for k, v in attrs.items()}
        annotations.append({"Namespace": ANNOTATION_NAMESPACE, "Value": pairs})
    colormap = _colormap(group, first.dtype)
    placement = _placement(group)
    size = None if placement is None else placement[0]
    if placement is not None and placement[1] != (0.0, 0.0):  # OME-TIFF has no translation
        origin = {"y": repr(placement[1][0]), "x": repr(placement[1][1])}
        annotations.append({"Namespace": ORIGIN_NAMESPACE, "Value": origin})
    if annotations:
        metadata["MapAnnotation"] = annotations
    for level, array in enumerate(arrays):
        options: dict[str, Any] = {
            "shape": array.shape, "dtype": array.dtype, "tile": (tile, tile),
            "compression": compression, "photometric": "minisblack",
            "maxworkers": os.cpu_count() or 1,  # tiles compressed on every core: 1.7 -> 1.1 s
            "buffersize": _ENCODE_BUFFER,
        }  # fmt: skip
        if colormap is not None:  # each texture in its colour where a TIFF reader shows it
            options.update(photometric="palette", colormap=colormap)
        if size is not None:  # pixels per centimetre, for readers of the TIFF tags only
            factor = 2**level
            options["resolution"] = (1e4 / (size[1] * factor), 1e4 / (size[0] * factor))
            options["resolutionunit"] = "CENTIMETER"
        if level == 0:
            if size is not None:
                metadata.update(PhysicalSizeY=size[0], PhysicalSizeYUnit="µm",
                                PhysicalSizeX=size[1], PhysicalSizeXUnit="µm")  # fmt: skip
            tif.write(_tiles(array, tile), subifds=len(arrays) - 1, metadata=metadata, **options)
        else:
            tif.write(_tiles(array, tile), subfiletype=1, metadata=None, **options)


def _ome_colour(text: Any) -> int | None:
    """An ``omero`` colour (``"RRGGBB"`` hex) as OME-XML's ``Color``: the RGBA bytes, opaque, as
    one signed 32-bit integer (red in the high byte); None for anything else."""
    try:
        rgb = int(str(text), 16) if len(str(text)) == 6 else None
    except ValueError:
        return None
    if rgb is None:
        return None
    rgba = (rgb << 8) | 0xFF
    return rgba - 2**32 if rgba >= 2**31 else rgba


def _colormap(group: zarr.Group, dtype: np.dtype) -> np.ndarray | None:
    """The TIFF colour map of a label image whose OME-Zarr metadata give its colours
    (``image-label`` ``colors``: a segmentation's textures, :mod:`xfskde._palette`): ``(3,
    2**bits)`` uint16, 0-65535 (TIFF's scale), labels without a colour black — so that Fiji
    and other TIFF readers show the textures in the colours of napari and the GeoTIFFs, and
    not as dark greys. None for other images, and for labels of more than 16 bits."""
    colors = group.attrs.get("ome", {}).get("image-label", {}).get("colors")
    if not colors or np.dtype(dtype) not in (np.dtype(np.uint8), np.dtype(np.uint16)):
        return None
    colormap = np.zeros((3, 2 ** (8 * np.dtype(dtype).itemsize)), np.uint16)
    for entry in colors:
        value, rgba = int(entry["label-value"]), entry["rgba"]
        if 0 <= value < colormap.shape[1]:
            colormap[:, value] = np.asarray(rgba[:3], np.uint16) * 257
    return colormap


def _text(value: Any) -> str:
    """An attr as the text of a key-value pair: strings as they are, the rest as JSON (exact
    for floats), which :func:`xfskde.segmentation.read_model` decodes."""
    return value if isinstance(value, str) else json.dumps(value)


def _tiles(array: zarr.Array, tile: int) -> Iterator[np.ndarray]:
    """The tiles of a ``(y, x)`` or ``(c, y, x)`` array in TIFF's order (plane by plane, rows of
    tiles top to bottom), each ``tile × tile``, the edges padded with the fill value; read a
    strip of whole rows of the store's chunks at a time (a strip of one tile's height decoded
    each chunk 4 times over for chunks of 1024 rows and tiles of 256: 31 s against 13 s for
    a 16384² slide's abundances and labels)."""
    planes = array.shape[0] if array.ndim == 3 else 1
    height, width = array.shape[-2:]
    fill = np.nan if np.issubdtype(array.dtype, np.floating) else 0
    step = tile * -(-array.chunks[-2] // tile)  # whole tiles, at least a row of chunks
    for plane in range(planes):
        for top in range(0, height, step):
            rows = slice(top, min(top + step, height))
            strip = np.asarray(array[plane, rows] if array.ndim == 3 else array[rows])
            for row in range(0, strip.shape[0], tile):
                for left in range(0, width, tile):
                    block = strip[row : row + tile, left : left + tile]
                    if block.shape != (tile, tile):
                        padded = np.full((tile, tile), fill, array.dtype)
                        padded[: block.shape[0], : block.shape[1]] = block
                        block = padded
                    yield np.ascontiguousarray(block)
