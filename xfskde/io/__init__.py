"""Reading images of any size, and writing results to resumable Zarr v3 stores and GeoTIFFs.

Three modules, independent of each other:

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

Errors are those of :mod:`xfskde.exceptions` (``ImageReadError``, ``StoreExistsError``, ...),
and :class:`FileNotFoundError` for a path that does not exist. No module imports another.
"""

from __future__ import annotations

from .geotiff import write_geotiff
from .images import open_image
from .stores import (
    finalize_store,
    open_blocks,
    open_coefficients,
    store_status,
    write_blocks,
    write_coefficients,
)

__all__ = [
    "finalize_store",
    "open_blocks",
    "open_coefficients",
    "open_image",
    "store_status",
    "write_blocks",
    "write_coefficients",
    "write_geotiff",
]
