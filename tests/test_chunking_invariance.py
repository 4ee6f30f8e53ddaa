"""The lazy pipelines give what the in-memory ones give, bit for bit, whatever the chunking: the
cases one step off the tested path (chunks along the colour axis, chunks that do not line up
with anything) that once broke it."""

import dask.array as da
import numpy as np

from xfskde.segmentation import fit_textures, segment


def _two_textures_rgb16() -> np.ndarray:
    """A uint16 RGB image of two gratings, one channel 0 where the others are not, and a patch
    where every channel is 0 (the missing pixels of ``nodata=0``)."""
    rng = np.random.default_rng(5)
    yy, xx = np.mgrid[:160, :144]
    grey = np.where(xx < 70, np.sin(xx * 0.9), np.sin(yy * 0.9 + xx * 0.9))
    grey = grey + 0.2 * rng.random(grey.shape)
    grey = (grey - grey.min()) / np.ptp(grey)
    rgb = (np.stack([grey, grey**2, 1 - grey], -1) * 65535).astype(np.uint16)
    rgb[5:9, 20:40] = 0
    return rgb


def test_segmentation_of_an_image_chunked_along_its_channels():
    """A pixel is missing when every channel equals ``nodata``; a Dask image in one chunk per
    channel had each channel's blocks tested alone, so a pixel with one channel at 0 counted as
    missing: the fit measured other channel levels (0.0 against 3.05e-05 for the third
    channel's black), other weights, and 184 of 23040 labels differed from the NumPy image's."""
    rgb = _two_textures_rgb16()
    kw = dict(size=5, stride=2, resolution=1, sample=2000, nodata=0, method="stable")
    expected, model = segment(rgb, 2, return_model=True, **kw)
    for chunks in [(160, 144, 1), (33, 50, 1), (33, 50, (1, 2))]:
        lazy = da.from_array(rgb, chunks=chunks)
        fitted = fit_textures(lazy, 2, **kw)
        assert fitted.attrs() == model.attrs(), chunks
        np.testing.assert_array_equal(fitted.endmembers, model.endmembers)
        labels = segment(lazy, 2, **kw).compute()
        assert np.array_equal(labels, expected), (chunks, int((labels != expected).sum()))
