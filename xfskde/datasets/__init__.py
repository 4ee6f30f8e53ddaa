"""Data sets: seeded synthetic generators (:mod:`.synthetic`) and loaders for the published data
sets of the paper's experiments (:mod:`.published`)."""

from .inria import InriaPerson, load_inria_person  # noqa: F401
from .synthetic import dead_leaves, dead_leaves_lazy, random_textures  # noqa: F401
from .ubc import PatchStack, UBCPatches, load_ubc_patches, ubc_proxy  # noqa: F401
