"""Large images (slow): run with ``python -m pytest -m slow``."""

import resource
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.slow

SCRIPT = r"""
import resource, sys
import dask, dask.array as da, numpy as np, tifffile, xfskde
from skimage import data

size, path, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
photo = data.camera()
row = np.tile(photo, (1, size // 512))
tiles = (row[:, c:c + 512] for _ in range(size // 512) for c in range(0, size, 512))
tifffile.imwrite(path, tiles, shape=(size, size), dtype=np.uint8, tile=(512, 512))
image = xfskde.open_image(path, chunks=2048)
field = xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)
with dask.config.set(scheduler="threads", num_workers=2):
    xfskde.write_coefficients(field, out)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20)
"""


def test_16k_tiff_to_zarr_in_bounded_memory(tmp_path):
    size = 16384
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(size), str(tmp_path / "b.tif"), str(tmp_path / "o")],
        capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    peak_gib = float(result.stdout.strip().splitlines()[-1])
    assert peak_gib < 2.0, f"peak RSS {peak_gib:.2f} GiB"
    from skimage import data

    import xfskde

    F = xfskde.open_coefficients(tmp_path / "o")
    assert F.shape == (2048, 2048, 9)
    # the image repeats the photograph every 512 pixels: every 64-cell period of the field
    # away from the true edges equals the in-memory field of a 3x3 tiling's centre
    reference = xfskde.local_fskde(np.tile(data.camera(), (3, 3)), order=8, window="box", size=8,
                                   stride=8)[64:128, 64:128]  # fmt: skip
    for i, j in [(1, 1), (7, 20), (30, 3), (16, 16)]:
        block = F.isel(y=slice(64 * i, 64 * i + 64), x=slice(64 * j, 64 * j + 64)).values
        np.testing.assert_array_equal(block, reference)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20 < 2.0
