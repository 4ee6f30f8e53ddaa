"""PIL pictures as the arrays their files' readers give.

``PIL.Image.open`` returns a picture whose raw samples are not always its values: a palette
picture (GIFs, quantised PNGs; mode ``"P"``) holds indices into a colour table, a CMYK one
(print JPEGs) its ink amounts, and a picture with an alpha channel holds its opacity as a last
channel; Pillow turns a TIFF by its Orientation tag as it loads it (and drops the tag), where
the TIFF's readers (tifffile, :func:`xfskde.open_image`) read it as stored. Every door of the
library that takes an array (:func:`xfskde.local_fskde`, :func:`xfskde.segment`,
:func:`xfskde.open_image`, the descriptors) reads a picture through this module, as
scikit-image and imageio read its file — and a file's reader reads it through this module
too where it decodes it with Pillow. A picture is recognised by its type's module: PIL is
imported only to read again the file of a TIFF picture given to it, which PIL made.
"""

from __future__ import annotations

import io
import sys
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .exceptions import (
    DimensionError,
    ExifOrientationWarning,
    ImageReadError,
    find_stack_level,
)

__all__ = [
    "CONVERTED_MODES",
    "GDAL_TAGS",
    "ORIENTATION_TAG",
    "animation",
    "data_palette",
    "is_picture",
    "palette_indices",
    "palette_refusal",
    "picture_values",
    "pixels",
    "refuse_data_palette",
    "transparent_as_nan",
    "warn_if_turned",
]

#: The EXIF (and TIFF) tag of a picture's orientation, and what its values other than 1 ask a
#: viewer to do.
ORIENTATION_TAG = 0x0112
_TURNS = {
    2: "mirrored left to right", 3: "turned 180°", 4: "mirrored top to bottom",
    5: "mirrored along its main diagonal", 6: "turned 90° clockwise",
    7: "mirrored along its other diagonal", 8: "turned 90° counter-clockwise",
}  # fmt: skip

#: PIL's modes of a palette picture (its values are indices into a colour table) and the mode
#: image readers decode each to; and the modes whose last channel is an alpha (opacity).
_PALETTE_MODES = {"P": "RGB", "PA": "RGBA"}
_ALPHA_MODES = ("RGBA", "RGBa", "LA", "La")
#: PIL's modes of pictures whose samples are not light: read as RGB, as Pillow converts them
#: (a CMYK JPEG's ink amounts; Pillow's decoder already undoes Adobe's inverted CMYK).
CONVERTED_MODES = {"CMYK": "RGB"}
#: The tags of a TIFF written by GDAL or georeferenced (ModelPixelScale, ModelTiepoint,
#: ModelTransformation, GeoKeyDirectory, GDAL_METADATA, GDAL_NODATA): a paletted band of one
#: holds classes, which the colour table only shows (a land cover, xfskde's labels.tif).
GDAL_TAGS = (33550, 33922, 34264, 34735, 42112, 42113)
#: The formats whose frames are a film (Pillow's ``n_frames``), and what people call them.
_ANIMATED = {"GIF": "GIF", "PNG": "PNG (APNG)", "WEBP": "WebP"}

#: How to undo, on the values of a picture Pillow loaded as shown, each orientation (the
#: ``ImageOps.exif_transpose`` Pillow applied): the stored grid again, exactly.
_UNDO = {
    2: lambda a: a[:, ::-1], 3: lambda a: a[::-1, ::-1], 4: lambda a: a[::-1],
    5: lambda a: a.swapaxes(0, 1), 6: lambda a: np.rot90(a, 1),
    7: lambda a: a[::-1, ::-1].swapaxes(0, 1), 8: lambda a: np.rot90(a, -1),
}  # fmt: skip
#: How to turn the values of a picture read as stored into the picture as viewers show it,
#: with NumPy: exact for every file, where ``ImageOps.exif_transpose`` scrambles the pixels of
#: an uncompressed TIFF turned 5-8 that Pillow memory-maps (:data:`_SWAPPING`).
_SHOWN = {
    2: "np.fliplr(values)", 3: "np.rot90(values, 2)", 4: "np.flipud(values)",
    5: "np.swapaxes(values, 0, 1)", 6: "np.rot90(values, -1)",
    7: "np.rot90(values, 2).swapaxes(0, 1)", 8: "np.rot90(values, 1)",
}  # fmt: skip
#: The orientation Pillow applied to a picture as it loaded it (by ``id`` and frame, while it
#: lives: a PIL picture is not hashable), once its tag is gone; and the last picture warned of,
#: with the user's call it was warned in, so that one call reading it several times warns once.
_APPLIED_ON_LOAD: dict[tuple[int, int], int] = {}
_LAST_WARNED: list[tuple[int, int, int, int]] = []
#: The orientations that swap a picture's rows and columns: Pillow (10 to 13 at least) decodes
#: an uncompressed TIFF it memory-maps into the turned size before turning it, and so scrambles
#: its pixels (``picture.readonly`` says it was mapped).
_SWAPPING = (5, 6, 7, 8)


def is_picture(image: Any) -> bool:
    """Whether ``image`` is a PIL picture (what ``PIL.Image.open`` returns), without importing
    PIL."""
    return type(image).__module__.startswith("PIL.") and hasattr(image, "mode")


def animation(picture: Any) -> str | None:
    """What an animated picture is (``"an animated GIF of 3 frames"``), or None for a picture
    of one frame (a camera's MPO, whose second picture is a preview, counts as one)."""
    kind = _ANIMATED.get(getattr(picture, "format", None) or "")
    frames = int(getattr(picture, "n_frames", 1) or 1)
    return f"an animated {kind} of {frames} frames" if kind and frames > 1 else None


def _orientation(picture: Any) -> int:
    """The orientation a picture's EXIF (a TIFF's own tag) records: 1 (as stored) without."""
    return int(picture.getexif().get(ORIENTATION_TAG, 1) or 1)


def _is_loaded(picture: Any) -> bool:
    """Whether a picture's pixels are decoded (a picture PIL opened from a file has tiles to
    decode until it is loaded; any other is)."""
    return not getattr(picture, "tile", None)


def _loaded(picture: Any) -> tuple[int, int]:
    """Load a picture's pixels; the orientation its file records, and the one Pillow applied
    as it loaded them (a TIFF's: Pillow then drops the tag), else 1.

    Pillow turns every TIFF as it loads it. A TIFF picture loaded before it got here (``load()``,
    ``np.asarray``, ``ImageOps.exif_transpose(picture, in_place=True)``) has lost its tag with
    the turn: the tag is read again from the picture's file or stream, the same page.

    Raises
    ------
    ImageReadError
        For a loaded TIFF picture whose file or stream cannot be read again (closed, moved,
        replaced by another picture): whether and how Pillow turned it is not known.
    """
    key = (id(picture), int(picture.tell()))
    if key in _APPLIED_ON_LOAD and _is_loaded(picture):  # loaded turned by an earlier read
        return _APPLIED_ON_LOAD[key], _APPLIED_ON_LOAD[key]
    recorded = _orientation(picture)
    tiff = getattr(picture, "format", None) == "TIFF"
    if tiff and _is_loaded(picture) and recorded == 1:  # loaded before: its tag may be gone
        recorded = _orientation_in_file(picture)
        applied = recorded
    else:
        picture.load()
        turned = recorded in _UNDO and _orientation(picture) != recorded
        applied = recorded if tiff and turned else 1  # turned, and its tag dropped
    if applied not in _UNDO:
        return recorded, 1
    _APPLIED_ON_LOAD[key] = applied
    weakref.finalize(picture, _APPLIED_ON_LOAD.pop, key, None)
    return recorded, applied


def _orientation_in_file(picture: Any) -> int:
    """The Orientation tag of the page of a loaded TIFF picture, read again from the file or
    stream Pillow opened it from (1 without one).

    Raises
    ------
    ImageReadError
        Where neither can be read again, or they hold another picture now (of another size).
    """
    name = getattr(picture, "filename", "") or ""
    found = _read_again(picture, picture.tell(), lambda header: (_orientation(header), header.size))
    if found is not None:
        shown, size = found
        mapped = shown in _SWAPPING and getattr(picture, "readonly", False)
        if size == (picture.size[::-1] if mapped else picture.size):  # Pillow's size, as shown
            return shown
    what = f"the TIFF picture {name}" if name else "the TIFF picture"
    shown = ", or ImageOps.exif_transpose(picture) to read it as it is shown"
    if getattr(picture, "readonly", False):  # mapped from its file: if turned 5-8, scrambled
        shown = ""
    raise ImageReadError(
        f"{what} was loaded before it was given (picture.load(), np.asarray(picture), ...), "
        "and Pillow turns a TIFF by its Orientation tag as it loads it, dropping the tag; its "
        "file cannot be read again to tell how it is stored: give the picture before loading "
        f"it, or its path, to read it as stored{shown}"
    )


def _read_again(picture: Any, page: int, read: Callable[[Any], Any]) -> Any:
    """``read`` of page ``page`` of the file or stream Pillow opened a picture from, opened
    again (the user's stream left where it was); None where neither can be read again."""
    from PIL import Image, UnidentifiedImageError

    name = getattr(picture, "filename", "") or ""
    # the stream of a picture opened from one: Pillow keeps it, for a TIFF's other pages
    stream = getattr(picture, "fp", None) or getattr(picture, "_fp", None)
    try:
        if name:
            with Image.open(name) as header:
                header.seek(page)
                return read(header)
        if stream is not None and not stream.closed:
            at = stream.tell()
            try:
                header = Image.open(stream)
                header.seek(page)
                return read(header)
            finally:
                stream.seek(at)
    except (AttributeError, OSError, EOFError, ValueError, UnidentifiedImageError):
        pass  # closed (Pillow's stand-in for a closed stream raises ValueError)
    return None


def data_palette(picture: Any) -> int:
    """The entries of the colour map of a palette TIFF picture whose values are data the map
    only shows, else 0 — decided as :func:`xfskde.open_image` decides it for the picture's file
    (:func:`xfskde.io.images._colour_map`), from the TIFF tags Pillow read with the picture: a
    GeoTIFF's or GDAL raster's classes (:data:`GDAL_TAGS` on its page or the file's first), an
    OME-TIFF's label image or an ImageJ TIFF's lookup table (the file's first page describes
    it so: read again for a picture at another page). 0 for a palette picture whose colours
    are the picture (a scanner's, an image editor's TIFF; a GIF, a PNG), for any other mode,
    and for a picture that is not its file's — ``picture.copy()``, ``convert``,
    ``ImageOps.exif_transpose``'s new picture, none of which keeps the tags — or whose other
    page's file cannot be read again: those are read as the colours their map indexes."""
    tags = getattr(picture, "tag_v2", None)
    tiff = getattr(picture, "format", None) == "TIFF"
    if picture.mode not in _PALETTE_MODES or not tiff or tags is None:
        return 0
    entries = len(tags.get(320) or ()) // 3  # ColorMap: red, green and blue entries
    first = tags if picture.tell() == 0 else _read_again(picture, 0, lambda h: dict(h.tag_v2))
    pages = (tags, first or {})
    text = str(pages[1].get(270) or "")  # its ImageDescription: tifffile's is_ome, is_imagej
    described = text[-10:].strip().endswith("OME>") or text.startswith(("ImageJ=", "SCIFIO="))
    gdal = any(code in page for page in pages for code in GDAL_TAGS)
    return entries if entries and (described or gdal) else 0


def refuse_data_palette(picture: Any) -> None:
    """Refuse a palette TIFF picture whose values are data its map only shows
    (:func:`data_palette`) as an image to compute on, as :func:`xfskde.open_image`'s reading
    of its file is refused (:func:`xfskde._labels.image_layout`); nothing for any other."""
    entries = data_palette(picture)
    if entries:
        name = getattr(picture, "filename", "") or "the palette picture"
        raise ImageReadError(palette_refusal(name, entries))


def palette_refusal(name: str, entries: int) -> str:
    """Why an image whose values index a colour map of ``entries`` entries (classes, labels) is
    not computed on, and what to do."""
    return (
        f"{name} is a palette image (its values index a colour map of {entries} entries, not "
        "intensities): convert it to RGB first (PIL: Image.open(path).convert('RGB'); GDAL: "
        "gdal_translate -expand rgb)"
    )


def _decoded(picture: Any, applied: int) -> Any:
    """The picture whose pixels to read: ``picture``, or where Pillow memory-mapped an
    uncompressed TIFF it turned by :data:`_SWAPPING` (and so scrambled it), the same page of
    its file decoded again from its bytes (a mapped picture is unchanged since: Pillow copies
    it before any change)."""
    if applied not in _SWAPPING or not getattr(picture, "readonly", False):
        return picture
    from PIL import Image

    with open(picture.filename, "rb") as file:
        fresh = Image.open(io.BytesIO(file.read()))
    fresh.seek(picture.tell())
    fresh.load()
    return fresh


def picture_values(picture: Any, *, warn: bool = True) -> tuple[np.ndarray, bool]:
    """A PIL picture's values as its file's readers give them (scikit-image, imageio,
    tifffile), and whether their last channel is an alpha.

    A palette picture (GIFs, many PNGs: mode ``"P"``) holds indices into its colour table,
    whose gradients and histograms would be those of arbitrary numbers: it is read as RGB, or
    RGBA where the table has a transparent entry — but a palette TIFF whose values are data its
    map only shows (a GDAL raster's classes, an OME-TIFF's labels: :func:`data_palette`) by
    its indices, as :func:`xfskde.open_image` reads its file (and :func:`pixels` refuses it).
    A CMYK picture (a print JPEG) is read as RGB, as Pillow converts it
    (``picture.convert("RGB")``). A TIFF that stores 0 as white (MinIsWhite) is read
    inverted, as viewers show it (:func:`_white_high`). A picture whose
    orientation asks viewers to turn it is read as stored — a TIFF, which Pillow turns as it
    loads it, turned back, whether it was loaded before it got here or not — and ``warn`` says so
    (:func:`warn_if_turned`), once per call of the library however often the call reads it.
    A new picture made from it (``ImageOps.exif_transpose(picture)``, ``picture.copy()``) has
    no tag: it is read as its pixels are. An animated picture (a GIF, WebP or APNG of several
    frames) is refused: one frame is picked first.

    Raises
    ------
    DimensionError
        For an animated picture, with how to pick a frame.
    ImageReadError
        For a TIFF picture loaded before it got here whose file cannot be read again
        (:func:`_orientation_in_file`), and a MinIsWhite one of floats.
    """
    film = animation(picture)
    if film is not None:
        raise DimensionError(
            f"the picture is {film} (at frame {picture.tell()}): pass one frame, "
            "picture.seek(i) then picture.copy(), or its file to open_image(path, plane={'t': i})"
        )
    turned, applied = _loaded(picture)
    if warn:  # a file's reader says it for the file (warn=False)
        _warn_once(picture, turned)
    indices = data_palette(picture) > 0  # its values are data: kept, as its file's are
    picture = _decoded(picture, applied)
    mode = picture.mode
    if mode in _PALETTE_MODES and not indices:
        transparent = mode == "PA" or "transparency" in picture.info
        picture = picture.convert("RGBA" if transparent else _PALETTE_MODES[mode])
    elif mode in CONVERTED_MODES:
        picture = picture.convert(CONVERTED_MODES[mode])
    values = _white_high(picture, np.asarray(picture))
    if applied != 1:  # the stored grid, as the file's readers read it
        values = np.ascontiguousarray(_UNDO[applied](values))
    return values, picture.mode in _ALPHA_MODES


def _white_high(picture: Any, values: np.ndarray) -> np.ndarray:
    """A TIFF picture's values as viewers show them where it stores 0 as white (Photometric
    MinIsWhite): Pillow inverts those of 1 to 8 bits (modes ``"1"``, ``"L"``) as it loads
    them, and leaves 16 bits stored, which are inverted here (2^bits - 1 less each), as
    :func:`xfskde.open_image` reads the file; ``values`` as they are for any other picture.

    Raises
    ------
    ImageReadError
        For MinIsWhite floats (mode ``"F"``), which set no black to invert them against.
    """
    tags = getattr(picture, "tag_v2", None)
    if getattr(picture, "format", None) != "TIFF" or tags is None or tags.get(262) != 0:
        return values
    if picture.mode in ("1", "L"):  # inverted by Pillow
        return values
    if picture.mode.startswith("I;16"):
        bits = tags.get(258, (16,))
        black = 2 ** int(bits[0] if isinstance(bits, tuple) else bits) - 1
        return np.asarray(black, values.dtype) - values
    name = getattr(picture, "filename", "") or "the TIFF picture"
    raise ImageReadError(
        f"{name} stores {values.dtype} values with 0 as white (Photometric MinIsWhite), which "
        "sets no black to invert them against: write it with white high (1 - values, for "
        "values in [0, 1]) and read that"
    )


def _warn_once(picture: Any, turned: int) -> None:
    """:func:`warn_if_turned` for a picture, unless the same call of the library (the same
    line of the user's code, at the same instruction) has warned of it already: a call that
    reads it several times (:func:`xfskde.segment` fits, then labels) warns once."""
    if turned not in _TURNS:
        return
    level = find_stack_level()  # counted from here: the user's frame is that many - 1 up
    frame = sys._getframe(level - 1)
    call = (id(picture), turned, id(frame), frame.f_lasti)
    del frame
    if _LAST_WARNED == [call]:
        return
    name = getattr(picture, "filename", "") or f"the {picture.mode} picture"
    tag = "TIFF Orientation" if getattr(picture, "format", None) == "TIFF" else "EXIF orientation"
    warn_if_turned(name, turned, tag)
    _LAST_WARNED[:] = [call]


def palette_indices(picture: Any) -> np.ndarray | None:
    """A palette picture's raw values, the indices into its colour table — where they are
    labels (an annotation tool's label PNG, a mask: index 0 the background) — or None for a
    picture of another mode."""
    if picture.mode not in _PALETTE_MODES:
        return None
    _, applied = _loaded(picture)
    values = np.asarray(_decoded(picture, applied))
    return np.ascontiguousarray(_UNDO[applied](values)) if applied != 1 else values


def pixels(image: Any) -> np.ndarray:
    """An image's values as a NumPy array: ``np.asarray``, but a PIL picture as its file's
    readers read it (:func:`picture_values`: a palette picture as RGB), and without its alpha
    channel (``"RGBA"``, ``"LA"``: cut-outs, screenshots): unchanged where every pixel is
    opaque, else as float32 with NaN at the transparent pixels (alpha 0), the pixels that are
    not there, as :func:`xfskde.open_image` reads such a file. A palette TIFF whose values are
    data its map only shows is refused, as a picture (:func:`refuse_data_palette`) and as
    :func:`xfskde.open_image` reads its file (``attrs["source_palette"]``).

    Raises
    ------
    ImageReadError
        For such a palette image, and where :func:`picture_values` refuses the picture.
    """
    if not is_picture(image):
        entries = getattr(image, "attrs", {}).get("source_palette")
        if entries:  # open_image's reading of such a file
            name = image.attrs.get("source") or getattr(image, "name", None) or "the image"
            raise ImageReadError(palette_refusal(str(name), int(entries)))
        return np.asarray(image)
    refuse_data_palette(image)
    values, alpha = picture_values(image)
    if not alpha:
        return values
    if values[..., -1].all():  # opaque: the colours as they are
        colour = values[..., :-1]
    else:
        colour = transparent_as_nan(values, -1, None)
    return np.ascontiguousarray(colour[..., 0] if colour.shape[-1] == 1 else colour)


def transparent_as_nan(
    block: np.ndarray, axis: int, nodata: float | int | None, index: int = -1
) -> np.ndarray:
    """A block's colour channels (all but the alpha, channel ``index`` along ``axis``: the
    last, or the first extra sample of a multispectral TIFF) as float32, NaN where the alpha
    is 0 and where every colour channel equals ``nodata``."""
    colour = np.delete(block, index, axis=axis)
    out = colour.astype(np.float32)
    missing = np.take(block, index, axis=axis) == 0
    if nodata is not None:
        missing |= np.all(colour == nodata, axis=axis)
    np.copyto(out, np.float32(np.nan), where=np.expand_dims(missing, axis))
    return out


def warn_if_turned(name: str, turned: int, tag: str, then: str = "") -> None:
    """Say that a picture whose orientation tag asks viewers to turn or mirror it (``turned``,
    2-8) is read as stored, and how to turn the values read as it is shown (:data:`_SHOWN`,
    exact for every file, where ``ImageOps.exif_transpose`` scrambles an uncompressed TIFF
    turned 5-8), followed by ``then`` (:class:`~xfskde.exceptions.ExifOrientationWarning`);
    nothing for 1 (as stored) or no tag."""
    if turned not in _TURNS:
        return
    warnings.warn(
        f"{name} says viewers show it {_TURNS[turned]} ({tag} {turned}); its pixels are read "
        "as stored, as scikit-image and tifffile read them, so results and angles are those "
        "of the stored grid: to work on the picture as it is shown, turn the values read, "
        f"{_SHOWN[turned]}{then}",
        ExifOrientationWarning,
        stacklevel=find_stack_level(),
    )
