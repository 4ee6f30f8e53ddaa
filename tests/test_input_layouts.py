"""Inputs laid out badly for random access read as the same pixels as a tiled TIFF, each
storage unit (strip, tile, Zarr chunk) read once per task, in bounded memory — or with one line
saying what it costs and how to rewrite the file.

512² images stand in for whole-slide ones, 64² chunks for 2048² ones: one strip per row, 16
rows per strip, one strip of the whole image (uncompressed and deflated), an LZW BigTIFF, a
JPEG-compressed tiled TIFF, Zarr v3 stores of one chunk, of row and of column chunks, sharded,
a PNG and an NPY file.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
import tifffile
import zarr
from PIL import Image

import xfskde
import xfskde.io.images
from xfskde.exceptions import ChunkSizeWarning, ImageReadError
from xfskde.io._location import locate
from xfskde.io._tiff import tiff_level

N = 512
CHUNKS = 64


def _pixels(grey: bool) -> np.ndarray:
    """Oriented stripes and noise: compressible, like a real image."""
    y, x = np.mgrid[0:N, 0:N]
    rng = np.random.default_rng(3)
    g = np.sin((x * np.cos(0.7) + y * np.sin(0.7)) * 0.4) * 0.4 + 0.5
    g = np.clip(g + rng.normal(0, 0.05, g.shape), 0, 1)
    if grey:
        return (g * 60000).astype(np.uint16)
    return np.stack([g, g[:, ::-1], g.T], -1).__mul__(255).astype(np.uint8)


def _tiff(path, a, **options):
    tifffile.imwrite(path, a, photometric="rgb" if a.ndim == 3 else "minisblack", **options)


def _zarr(path, a, chunks, shards=None):
    extra = a.shape[2:]
    z = zarr.create_array(path, shape=a.shape, dtype=a.dtype, chunks=chunks + extra,
                          shards=None if shards is None else shards + extra)  # fmt: skip
    z[...] = a


LAYOUTS = {
    "strip per row": lambda p, a: _tiff(p / "a.tif", a, rowsperstrip=1),
    "strip per row, deflate": lambda p, a: _tiff(p / "a.tif", a, rowsperstrip=1,
                                                 compression="zlib"),
    "16-row strips": lambda p, a: _tiff(p / "a.tif", a, rowsperstrip=16),
    "16-row strips, deflate": lambda p, a: _tiff(p / "a.tif", a, rowsperstrip=16,
                                                 compression="zlib"),
    "one strip": lambda p, a: _tiff(p / "a.tif", a, rowsperstrip=N),
    "one strip, deflate": lambda p, a: _tiff(p / "a.tif", a, rowsperstrip=N, compression="zlib"),
    "LZW strips, BigTIFF": lambda p, a: _tiff(p / "a.tif", a, rowsperstrip=16,
                                              compression="lzw", bigtiff=True),
    "Zarr, one chunk": lambda p, a: _zarr(p / "a.zarr", a, (N, N)),
    "Zarr, row chunks": lambda p, a: _zarr(p / "a.zarr", a, (1, N)),
    "Zarr, column chunks": lambda p, a: _zarr(p / "a.zarr", a, (N, 1)),
    "Zarr, sharded": lambda p, a: _zarr(p / "a.zarr", a, (32, 32), shards=(128, 128)),
    "PNG": lambda p, a: Image.fromarray(a).save(p / "a.png"),
    "NPY": lambda p, a: np.save(p / "a.npy", a),
}  # fmt: skip


def _written(tmp_path, layout, a):
    LAYOUTS[layout](tmp_path, a)
    (path,) = [p for p in tmp_path.iterdir() if p.name.startswith("a.")]
    return path


@pytest.mark.parametrize("grey", [False, True], ids=["uint8 RGB", "uint16 grey"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_layout_reads_the_anchor_s_pixels_and_field(tmp_path, layout, grey):
    a = _pixels(grey)
    anchor = tmp_path / "anchor"
    anchor.mkdir()
    _tiff(anchor / "tiled.tif", a, tile=(256, 256))
    expected = xfskde.open_image(anchor / "tiled.tif", chunks=CHUNKS)
    path = _written(tmp_path, layout, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none of these costs a warning at this size
        image = xfskde.open_image(path, chunks=CHUNKS)
    np.testing.assert_array_equal(image.values, a)
    # every task reads whole storage units: no block wider or taller than it need be
    assert max(image.data.chunks[0]) <= N and max(image.data.chunks[1]) <= N
    field = xfskde.local_fskde(image, order=4, size=5, stride=4)
    np.testing.assert_array_equal(
        field.values, xfskde.local_fskde(expected, order=4, size=5, stride=4).values
    )


def test_a_jpeg_tiled_tiff_reads_as_tifffile_decodes_it(tmp_path):
    a = _pixels(grey=False)
    path = tmp_path / "jpeg.tif"
    tifffile.imwrite(path, a, tile=(128, 128), photometric="rgb", compression="jpeg",
                     compressionargs={"level": 95}, subsampling=(2, 2))  # fmt: skip
    assert tifffile.TiffFile(path).pages[0].photometric == 6  # stored as YCbCr
    image = xfskde.open_image(path, chunks=CHUNKS)
    decoded = tifffile.imread(path)
    assert image.shape == (N, N, 3) and np.abs(decoded.astype(int) - a).mean() < 16  # RGB, lossy
    np.testing.assert_array_equal(image.values, decoded)


@pytest.mark.parametrize("rows", [1, 16, N])
def test_uncompressed_strips_are_read_in_square_chunks_from_the_memory_map(tmp_path, rows):
    """A strip of the whole image made one task of the whole image (a 16384² RGB slide: one
    805 MB block, 1.8 GB at the peak of ``xfskde coefficients``, against 0.9 GB tiled): the
    strips are copied out of a memory map, so a task reads only its own rows."""
    a = _pixels(grey=False)
    path = tmp_path / "strips.tif"
    _tiff(path, a, rowsperstrip=rows)
    image = xfskde.open_image(path, chunks=CHUNKS)
    assert image.data.chunks[:2] == ((CHUNKS,) * (N // CHUNKS),) * 2
    np.testing.assert_array_equal(image.values, a)
    # deflated strips are still read whole, each by one task
    _tiff(path, a, rowsperstrip=rows, compression="zlib")
    image = xfskde.open_image(path, chunks=CHUNKS)
    assert all(n % rows == 0 for n in image.data.chunks[0][:-1])
    assert image.data.chunks[1] == (N,)


def test_a_block_of_one_whole_compressed_strip_is_not_held_twice(tmp_path):
    """A block that is one whole strip (or tile) is the decoded strip itself: it was copied
    into a block of zeros, and a 16384² RGB slide of one deflated strip held 805 MB twice
    (2.2 GB at the peak, 1.6 GB now)."""
    a = np.broadcast_to(np.arange(N, dtype=np.uint8)[:, None, None], (N, N, 3)).copy()
    path = tmp_path / "one.tif"
    _tiff(path, a, rowsperstrip=N, compression="zlib")  # 4 kB: its bytes count for nothing
    location = locate(path)
    reader = tiff_level(location, 0, location.version())
    tracemalloc.start()
    try:
        block = reader[slice(0, N), slice(0, N), slice(None)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(block, a)
    assert peak < 1.5 * a.nbytes, peak / a.nbytes
    # the image in one chunk is that strip, read-only as deflate decodes it: computed on as is
    image = xfskde.open_image(path)
    assert image.data.chunks[:2] == ((N,), (N,))
    np.testing.assert_array_equal(
        xfskde.local_fskde(image, order=4, size=5).values,
        xfskde.local_fskde(xfskde.open_image(a), order=4, size=5).values,
    )


def test_row_and_column_chunks_of_a_zarr_store_are_each_read_by_one_task(tmp_path):
    """Zarr chunks reach the chunk planner: a store of 512 x 1 column chunks (of 1 x 512 row
    chunks) is read by tasks of whole columns (rows), each chunk by one task only, not once per
    band of rows (of columns) that crosses it."""
    a = _pixels(grey=True)
    _zarr(tmp_path / "cols.zarr", a, (N, 1))
    _zarr(tmp_path / "rows.zarr", a, (1, N))
    cols = xfskde.open_image(tmp_path / "cols.zarr", chunks=CHUNKS)
    rows = xfskde.open_image(tmp_path / "rows.zarr", chunks=CHUNKS)
    assert cols.data.chunks == ((N,), (CHUNKS,) * (N // CHUNKS))
    assert rows.data.chunks == ((CHUNKS,) * (N // CHUNKS), (N,))
    np.testing.assert_array_equal(cols.values, a)
    np.testing.assert_array_equal(rows.values, a)


def test_a_large_single_strip_or_chunk_warns_once_with_what_to_do(tmp_path, monkeypatch):
    """Reading a strip or Zarr chunk far larger than a block takes its memory at once: said in
    one warning naming the file, its layout and how to rewrite it; tiles, memory-mapped strips
    and small chunks say nothing."""
    monkeypatch.setattr(xfskde.io.images, "LARGE_READ_BYTES", 100_000)
    a = _pixels(grey=False)  # 786 kB
    _tiff(tmp_path / "one.tif", a, rowsperstrip=N, compression="zlib")
    with pytest.warns(ChunkSizeWarning, match="strips of 512 x 512 .*TILED=YES") as caught:
        image = xfskde.open_image(tmp_path / "one.tif", chunks=CHUNKS)
    assert len(caught) == 1 and "one.tif" in str(caught[0].message)
    assert "\n" not in str(caught[0].message)
    np.testing.assert_array_equal(image.values, a)
    _zarr(tmp_path / "one.zarr", a, (N, N))
    with pytest.warns(
        ChunkSizeWarning, match="one.zarr is stored in chunks of 512 x 512 x 3.*rechunk"
    ):
        xfskde.open_image(tmp_path / "one.zarr", chunks=CHUNKS)
    _tiff(tmp_path / "tiled.tif", a, tile=(64, 64), compression="zlib")
    _tiff(tmp_path / "raw.tif", a, rowsperstrip=N)
    _zarr(tmp_path / "small.zarr", a, (64, 64))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("tiled.tif", "raw.tif", "small.zarr"):
            xfskde.open_image(tmp_path / name, chunks=CHUNKS)


def test_a_picture_too_large_for_pillow_is_refused_in_one_line(tmp_path, monkeypatch):
    """Pillow's decompression-bomb guard raised its own error from inside open_image (an
    'internal error' on the command line for a 16384² PNG)."""
    path = tmp_path / "big.png"
    Image.fromarray(_pixels(grey=False)).save(path)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100_000)  # 512² is more than twice that
    with pytest.raises(ImageReadError, match=r"big.png: a picture of 0 Mpx.*tiled TIFF") as info:
        xfskde.open_image(path)
    assert "\n" not in str(info.value)


def test_a_large_picture_warns_it_is_read_whole_in_place_of_pillow_s_bomb_warning(
    tmp_path, monkeypatch
):
    a = _pixels(grey=False)
    path = tmp_path / "big.png"
    Image.fromarray(a).save(path)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 200_000)  # 512² is more, not twice more
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        image = xfskde.open_image(path)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages
    assert caught[0].category is ChunkSizeWarning
    assert "big.png is a 512 x 512 PNG picture, read whole into memory (1 MB)" in messages[0]
    np.testing.assert_array_equal(image.values, a)


@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA", "I;16"])
def test_pngs_decode_to_the_values_pillow_reads(tmp_path, mode):
    rng = np.random.default_rng(1)
    shape = {"L": (40, 50), "LA": (40, 50, 2), "RGB": (40, 50, 3), "RGBA": (40, 50, 4),
             "I;16": (40, 50)}[mode]  # fmt: skip
    dtype = np.uint16 if mode == "I;16" else np.uint8
    a = rng.integers(1, np.iinfo(dtype).max, shape, dtype=dtype)
    path = tmp_path / "p.png"
    Image.fromarray(a, None if mode == "I;16" else mode).save(path)
    with Image.open(path) as picture:
        assert picture.mode == mode
        expected = np.asarray(picture)
    image = xfskde.open_image(path)
    if mode in ("LA", "RGBA"):  # the alpha dropped, the pixels all opaque
        expected = expected[..., :-1].squeeze()
    np.testing.assert_array_equal(image.values, expected)
