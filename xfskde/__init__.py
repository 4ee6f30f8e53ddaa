"""xfskde: Fourier-series kernel density estimates of angles with the cos^2K kernel.

Implements McCann, Fickus & Kovačević, "Rotation invariant angular descriptor via a bandlimited
Gaussian-like kernel", for arrays that fit in memory and, through Dask, for images that do not.
"""

from . import (
    _numba_cache,  # noqa: F401  (first: numba caches go to the user's cache folder)
    accessor,  # noqa: F401  (registering DataArray.fskde is this import's purpose)
)
from ._version import __version__
from .api import local_fskde
from .canonical import canonical_distance, canonicalize
from .density import distance, evaluate, fskde, rotate
from .exceptions import XfskdeError
from .gradients import gradient
from .io import (
    open_coefficients,
    open_image,
    verify_store,
    write_coefficients,
    write_ome_zarr,
)
from .kernel import Cos2KKernel, truncated_length
from .local import overlap_depth
from .metrics import adjusted_rand_index, rand_index
from .orientation import coherence, energy
from .segmentation import fit_textures, segment
from .windows import Window

__all__ = [
    "Cos2KKernel",
    "Window",
    "XfskdeError",
    "__version__",
    "adjusted_rand_index",
    "canonical_distance",
    "canonicalize",
    "coherence",
    "distance",
    "energy",
    "evaluate",
    "fit_textures",
    "fskde",
    "gradient",
    "local_fskde",
    "open_coefficients",
    "open_image",
    "overlap_depth",
    "rand_index",
    "rotate",
    "segment",
    "truncated_length",
    "verify_store",
    "write_coefficients",
    "write_ome_zarr",
]

#: Subpackages imported on first use (``xfskde.datasets.random_textures(...)`` after a bare
#: ``import xfskde`` raised AttributeError): each pulls its own dependencies in when asked.
_LAZY_SUBPACKAGES = ("datasets", "descriptors", "experiments", "plot")


def __getattr__(name: str):
    """``xfskde.datasets``, ``xfskde.descriptors``, ``xfskde.experiments`` and ``xfskde.plot``,
    imported on first use."""
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
