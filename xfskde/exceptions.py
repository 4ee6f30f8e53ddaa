"""The errors and warnings xfskde raises, in one family.

Every error the library raises on purpose derives from :class:`XfskdeError`, and also from the
built-in exception a Python user would expect (``ValueError``, ``FileExistsError``, ...), so that
both ``except xfskde.XfskdeError`` and ``except ValueError`` catch it. The command line catches
the base class and prints its one line. Code tells errors apart by type, never by message text.

==============================  ==========================================================
class                           raised when
==============================  ==========================================================
:class:`XfskdeError`            the base of every error below
:class:`ParameterError`         a parameter is out of range or of the wrong kind
:class:`DimensionError`         an array's dims or shape cannot be read as an image/field
:class:`ImageReadError`         an image file or store cannot be read (format, layout)
:class:`StoreError`             the base of the store errors below
:class:`StoreExistsError`       a store exists where a new one was to be written
:class:`StoreIncompleteError`   a store whose write did not finish is opened or finalised
:class:`StoreParametersError`   a store is resumed with parameters that differ from its own
:class:`StoreFormatError`       a path is not a store written by xfskde
:class:`StoreCorruptError`      a chunk of a store is damaged (checksum, decoding) or missing
:class:`WorkerDiedError`        a Dask worker died computing a task (most often out of memory)
:class:`ChunkSizeWarning`       chunks smaller than the halo were merged with a neighbour
:class:`GeoreferencingWarning`  a GeoTIFF opens without its CRS (rioxarray missing, mismatch)
:class:`PixelAspectWarning`     angles are measured on a grid of pixels that are not square
:class:`InputChangedWarning`    a store resumed was begun from another version of its input
:class:`StoreDamagedWarning`    a store resumed had lost or damaged blocks: computed again
:class:`ExifOrientationWarning` a photo's EXIF orientation (shown turned) is not applied
==============================  ==========================================================
"""

from __future__ import annotations

import contextlib
import inspect
import os

__all__ = [
    "ChunkSizeWarning",
    "DimensionError",
    "ExifOrientationWarning",
    "GeoreferencingWarning",
    "ImageReadError",
    "InputChangedWarning",
    "MaskWarning",
    "ParameterError",
    "PixelAspectWarning",
    "PixelSizeWarning",
    "StoreCorruptError",
    "StoreDamagedWarning",
    "StoreError",
    "StoreExistsError",
    "StoreFormatError",
    "StoreIncompleteError",
    "StoreParametersError",
    "WorkerDiedError",
    "XfskdeError",
    "find_stack_level",
]


class XfskdeError(Exception):
    """Base class of every error xfskde raises on purpose.

    Catch it to handle whatever xfskde refuses (a bad parameter, an unreadable image, a store
    that cannot be resumed); each subclass also derives from the built-in exception that fits,
    so ``except ValueError`` keeps working.
    """


class ParameterError(XfskdeError, ValueError):
    """A parameter is out of range or not one of its choices (the message names it)."""


class DimensionError(XfskdeError, ValueError):
    """An array's dims or shape cannot be read as an image or a coefficient field.

    The message gives the ``.transpose(...)``, ``.rename(...)`` or ``.isel(...)`` call that fixes
    it, as rioxarray's dimension errors do.
    """


class ImageReadError(XfskdeError, ValueError):
    """An image cannot be read: unknown format, unsupported layout, damaged file."""


class StoreError(XfskdeError):
    """Base class of the errors about xfskde's Zarr stores."""


class StoreExistsError(StoreError, FileExistsError):
    """A store already exists where a new one was to be written (resume or overwrite it)."""


class StoreIncompleteError(StoreError, ValueError):
    """A store's write did not finish: it is read, or marked complete, before every block is."""


class StoreParametersError(StoreError, ValueError):
    """A store is resumed with parameters (or a shape) other than those it was written with."""


class StoreFormatError(StoreError, ValueError):
    """A path or Zarr group is not a store written by xfskde (or lacks the array asked for)."""


class StoreCorruptError(StoreError, ValueError):
    """A chunk of a store is damaged or gone: its checksum does not match, it cannot be decoded,
    or the store says it was written but it is not there.

    The message names the store, the array and the chunk key; ``xfskde info --verify STORE``
    lists every such chunk. A resume with ``--verify`` (``resume=True, verify=True``) computes
    them again; or restore the store from a copy.
    """


class WorkerDiedError(XfskdeError, RuntimeError):
    """The workers of a Dask cluster could not finish a computation for lack of memory: one
    died while it computed a task, as many times as the scheduler allows (distributed's
    ``KilledWorker``: its nanny killed it), or every worker stayed paused, with no task
    running, for :data:`xfskde._scheduling.PAUSED_PATIENCE` seconds (distributed starts no task
    on a worker above its pause fraction of its ``memory_limit``). Give the workers more
    memory, or compute in smaller chunks; a store keeps the blocks written before, and a
    resumed write finishes it."""


class ChunkSizeWarning(UserWarning):
    """Chunks were smaller than the halo a block needs and have been merged with a neighbour;
    or an input's storage units (a strip, tile or Zarr chunk larger than
    :data:`xfskde.io.images.LARGE_READ_BYTES` decoded, a picture without tiles) are read
    whole, so reading it takes that much memory beside the computation's."""


class GeoreferencingWarning(UserWarning):
    """A GeoTIFF's CRS and coordinates could not be kept (rioxarray missing, or a mismatch)."""


class PixelAspectWarning(UserWarning):
    """The image's pixels are not square (its y and x coordinate steps differ, on the ground
    for a scene), or its grid is rotated from its CRS's axes: gradient angles are measured on
    the pixel grid, so they are not the angles in the image's units."""


class PixelSizeWarning(UserWarning):
    """A texture model is applied to an image whose pixel size cannot be compared with that of
    the image it was fitted on: one of the two records it, the other does not (a plain TIFF, a
    NumPy array). The model's features are measured in pixels, so its labels hold only where
    the pixels are the same size; where both record it, another size is refused."""


class ExifOrientationWarning(UserWarning):
    """A photo's EXIF orientation (or a TIFF's Orientation tag) says viewers show it turned or
    mirrored; its pixels are read as stored (as scikit-image and tifffile read them), so
    results and angles are those of the stored grid, not of the picture as it is shown."""


class MaskWarning(UserWarning):
    """``mask="auto"`` found no background: an image it does not take for a brightfield slide
    (not 8-bit RGB) is masked by its data, and all of it is data — a fluorescence slide's dark
    background, or a grey slide's glass, is not zero. The warning names the method to ask for."""


class InputChangedWarning(UserWarning):
    """A store being resumed was begun from another version of its input file (its size and
    modification time, or its ETag, differ): the blocks it holds came from other pixels, so
    every block is computed again."""


class StoreDamagedWarning(UserWarning):
    """A store being resumed holds blocks its completion record says were written whose chunks
    are gone, or do not read back (checksum mismatch, undecodable), or whose record entries are
    damaged: the store was damaged after they were written. They are marked not written (the
    store's status ``"incomplete"`` first) and computed again; the warning says how many."""


def find_stack_level() -> int:
    """The ``stacklevel`` that makes a warning point at the user's line, outside xfskde.

    Counts the frames from the caller of this function up to the first one whose file is not
    in the xfskde package (as pandas' ``find_stack_level`` does), so a warning raised deep in
    the engine names the line of the user's code that asked for the work, whatever the path.
    The frames of :mod:`contextlib`'s wrappers (a function of xfskde decorated with a context
    manager) are passed over too: they are xfskde's calls, not the user's.

    Returns
    -------
    int
        The number of frames of xfskde (this function's included) between here and the user's
        code: ``warnings.warn(..., stacklevel=find_stack_level())`` called in xfskde names the
        user's line.
    """
    package = os.path.dirname(__file__)
    wrappers = contextlib.__file__
    frame = inspect.currentframe()
    level = 0
    try:
        while frame is not None and (
            inspect.getfile(frame).startswith(package) or inspect.getfile(frame) == wrappers
        ):
            frame = frame.f_back
            level += 1
    finally:
        del frame
    return level
