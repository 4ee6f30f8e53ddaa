"""Data sets for the paper's experiments (section 5).

* :mod:`.synthetic` — seeded generators: dead leaves and random textures (section 5.3), each
  with a lazy, tile-consistent version of any size (``*_lazy``);
* :mod:`.ubc` — the UBC / Brown multi-view stereo patches in their published layout, and an
  offline proxy built from scikit-image photographs (section 5.1);
* :mod:`.inria` — the INRIA person data set in its published layout (section 5.2);
* :mod:`.mosaics` — seeded mosaics of real textures (scikit-image's brick, grass and gravel,
  or your own tiles, in grey or colour: :func:`class_tiles` reads a folder of labelled tissue
  tiles) in random layouts, optionally rotated and rescaled, with ground truth;
* :mod:`.slides` — slides made from a real section: scikit-image's IHC image in an ellipse
  on glass (brightfield), and its stains as a fluorescence camera's counts on a dark
  background, with the section's extent.
"""

from .inria import InriaPerson, load_inria_person
from .mosaics import class_tiles, texture_mosaic, texture_mosaic_set
from .slides import section_in_fluorescence, section_on_glass
from .synthetic import dead_leaves, dead_leaves_lazy, random_textures, random_textures_lazy
from .ubc import PatchStack, UBCPatches, load_ubc_patches, ubc_proxy

__all__ = [
    "InriaPerson",
    "PatchStack",
    "UBCPatches",
    "class_tiles",
    "dead_leaves",
    "dead_leaves_lazy",
    "load_inria_person",
    "load_ubc_patches",
    "random_textures",
    "random_textures_lazy",
    "section_in_fluorescence",
    "section_on_glass",
    "texture_mosaic",
    "texture_mosaic_set",
    "ubc_proxy",
]
