"""Reading images of any size, and writing results to resumable Zarr v3 stores, GeoTIFFs,
OME-Zarr images, OME-TIFFs and PNGs.

Six modules:

* :mod:`xfskde.io.images` — :func:`open_image`: a lazy ``(y, x[, c])`` DataArray from a NumPy
  or Dask array, a Zarr array or group (a level of an OME-Zarr multiscale image), a TIFF /
  OME-TIFF / SVS file (read inside the tasks by :mod:`xfskde.io._tiff`) or a small PNG/JPEG/NPY
  file. Chunks come from :func:`xfskde.lazy.plan_chunks`, aligned to the file's tiles; the
  tiles are recorded in ``encoding["preferred_chunks"]``.
* :mod:`xfskde.io.stores` — the block store: :func:`write_blocks` and
  :func:`write_coefficients` lay a store out, write it block by block with a completion record
  per block, and :func:`finalize_store` marks it complete; :func:`store_status` tells how far a
  write got; :func:`open_blocks` and :func:`open_coefficients` reopen a store lazily.
* :mod:`xfskde.io.geotiff` — :func:`write_geotiff`: a georeferenced result as a GeoTIFF or COG
  through rioxarray (an optional extra, imported only when called).
* :mod:`xfskde.io.omezarr` — :func:`write_ome_zarr`: real maps (orientation, coherence,
  energy, ...) as the channels of an OME-NGFF 0.5 multiscale image, with label images beside
  them (:func:`write_ome_zarr_labels` adds one later), for napari, OMERO, QuPath and others.
* :mod:`xfskde.io.ometiff` — :func:`write_ome_tiff`: the same image as one pyramidal OME-TIFF
  (QuPath, Fiji, OMERO's importer), copied from the OME-Zarr image level by level.
* :mod:`xfskde.io.png` — :func:`write_labels_png`: segmentation labels of a picture-sized
  image as an indexed PNG, each pixel's value its label, in the library's label colours.

Errors are those of :mod:`xfskde.exceptions` (``ImageReadError``, ``StoreExistsError``, ...),
and :class:`FileNotFoundError` for a path that does not exist. A writer builds only on those
below it: omezarr on stores (level 0 is a block store), ometiff on omezarr.
"""

from __future__ import annotations

from ._location import Location, locate
from .geotiff import write_geotiff
from .images import open_image
from .ometiff import write_ome_tiff
from .omezarr import write_ome_zarr, write_ome_zarr_labels
from .png import write_labels_png
from .stores import (
    finalize_store,
    open_blocks,
    open_coefficients,
    store_status,
    verify_store,
    write_blocks,
    write_coefficients,
)

__all__ = [
    "Location",
    "finalize_store",
    "locate",
    "open_blocks",
    "open_coefficients",
    "open_image",
    "store_status",
    "verify_store",
    "write_blocks",
    "write_coefficients",
    "write_geotiff",
    "write_labels_png",
    "write_ome_tiff",
    "write_ome_zarr",
    "write_ome_zarr_labels",
]
