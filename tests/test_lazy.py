"""The Dask face: identical to the in-memory result for any chunking (hypothesis), a graph that
grows linearly with the chunks and never holds the image, errors raised when computed."""

import functools
import warnings

import cloudpickle
import dask
import dask.array as da
import numpy as np
import pytest
import xarray as xr
import zarr
from _xr_checks import assert_keeps_labels
from dask.array.utils import assert_eq
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from xfskde import local_fskde, overlap_depth
from xfskde.lazy import DEFAULT_CHUNK, ChunkSizeWarning, safe_chunks, sample_chunks

HEIGHT, WIDTH = 61, 47
WINDOWS = [("box", 5), ("box", 8), ("gaussian", 1.5), ("disk", 3)]
_RNG = np.random.default_rng(7)
# image kind -> (pixels, channel_axis)
IMAGES = {
    "float32": (_RNG.random((HEIGHT, WIDTH)).astype(np.float32), None),
    "float64": (_RNG.random((HEIGHT, WIDTH)), None),
    "uint16": ((_RNG.random((HEIGHT, WIDTH)) * 65535).astype(np.uint16), None),
    "rgb-last": ((_RNG.random((HEIGHT, WIDTH, 3)) * 255).astype(np.uint8), -1),
    "rgb-first": (_RNG.random((3, HEIGHT, WIDTH)).astype(np.float32), 0),
}
IMAGE = IMAGES["float32"][0]


@functools.cache
def _numpy_result(kind: str, window: tuple, stride: int) -> np.ndarray:
    pixels, channel_axis = IMAGES[kind]
    return local_fskde(
        pixels, order=5, window=window[0], size=window[1], stride=stride, channel_axis=channel_axis
    )


def chunking(n: int):
    """Random chunk sizes along an axis of n pixels (ragged, tall-thin, tiny)."""
    return st.lists(st.integers(1, n), min_size=1, max_size=8).map(lambda sizes: _fit(sizes, n))


def _fit(sizes, n):
    out, total = [], 0
    for s in sizes:
        s = min(s, n - total)
        if s > 0:
            out.append(s)
            total += s
    if total < n:
        out.append(n - total)
    return tuple(out)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=chunking(HEIGHT),
    cols=chunking(WIDTH),
    window=st.sampled_from(WINDOWS),
    stride=st.sampled_from([1, 2, 3, 8]),
    kind=st.sampled_from(sorted(IMAGES)),
    colour_chunks=st.sampled_from([(3,), (1, 2)]),
)
# named cases: tall-thin columns, stride-misaligned ragged chunks, chunks below the depth
@example(rows=(HEIGHT,), cols=(6,) * 7 + (5,), window=("box", 8), stride=8, kind="float32",
         colour_chunks=(3,))  # fmt: skip
@example(rows=(20, 20, 21), cols=(13, 13, 13, 8), window=("gaussian", 1.5), stride=3,
         kind="rgb-last", colour_chunks=(1, 2))  # fmt: skip
@example(rows=(1, 2, 58), cols=(45, 2), window=("disk", 3), stride=2, kind="uint16",
         colour_chunks=(3,))  # fmt: skip
def test_dask_equals_numpy_for_any_chunking(rows, cols, window, stride, kind, colour_chunks):
    pixels, channel_axis = IMAGES[kind]
    chunks = {None: (rows, cols), -1: (rows, cols, colour_chunks), 0: (colour_chunks, rows, cols)}
    expected = _numpy_result(kind, window, stride)
    depth = overlap_depth(*window)
    too_small = any(len(c) > 1 and min(c) < depth for c in (rows, cols))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lazy = local_fskde(
            da.from_array(pixels, chunks=chunks[channel_axis]),
            order=5,
            window=window[0],
            size=window[1],
            stride=stride,
            channel_axis=channel_axis,
        )
    warned = [w for w in caught if issubclass(w.category, ChunkSizeWarning)]
    assert bool(warned) == too_small  # a rechunk is never silent, and never needless
    # values (1e-6 relative), dtype, and every computed block's shape against the declared chunks
    assert_eq(lazy, expected, rtol=1e-6, atol=1e-6 * float(np.abs(expected).max()))


def test_chunk_helpers():
    assert safe_chunks((10, 10, 3), 5) == (10, 13)
    assert safe_chunks((2, 10, 10), 5) == (12, 10)
    assert safe_chunks((4,), 5) == (4,)
    # runs of small chunks join into pieces near the target, at their own boundaries
    assert safe_chunks((1,) * 10, 3, target=4) == (3, 4, 3)
    assert safe_chunks((8,) * 8192, 13) == (2048,) * 32  # not one chunk of 65536 rows
    assert safe_chunks((100, 2, 2, 80, 60), 5) == (100, 84, 60)  # into the smaller neighbour
    assert sample_chunks((8, 8, 8), 8) == (1, 1, 1)
    assert sample_chunks((5, 5, 5), 8) == (1, 0, 1)  # samples at 3 and 11: none in [5, 10)
    assert sum(sample_chunks((13, 9, 30), 3)) == 17


def test_small_chunks_are_merged_with_a_warning():
    with pytest.warns(ChunkSizeWarning, match="overlap depth"):
        lazy = local_fskde(da.from_array(IMAGE, chunks=(3, 47)), order=3, window="box", size=9)
    assert min(lazy.chunks[0]) >= overlap_depth("box", 9)
    assert_eq(lazy, local_fskde(IMAGE, order=3, window="box", size=9), rtol=1e-6, atol=1e-7)


_TALL = np.random.default_rng(11).random((4300, 30), dtype=np.float32)
_TINY = {  # rows, columns
    "one-pixel rows": ((1,) * 4300, (30,)),
    "alternating": ((3, 7) * 430, (4,) * 7 + (2,)),
    "random": (_fit(np.random.default_rng(3).integers(1, 12, 800).tolist(), 4300), (30,)),
    "small between large": ((2000, 2, 3, 1) + (1,) * 794 + (1500,), (4,) * 7 + (2,)),
}


@pytest.mark.parametrize("chunks", list(_TINY.values()), ids=list(_TINY))
def test_tiny_chunks_merge_into_bounded_blocks_of_the_in_memory_values(chunks):
    """Chunks below the halo used to be merged all into one: a (65536, 2048) image in chunks of
    8 rows became one task of 9.66 GB, and the warning listed every chunk (12 502 characters).
    Runs of small chunks now join into blocks near the target, and the field is still the
    in-memory one."""
    kwargs = {"order": 3, "window": "box", "size": 9, "stride": 2}
    depth = overlap_depth("box", 9)
    expected = local_fskde(_TALL, **kwargs)
    with pytest.warns(ChunkSizeWarning, match="overlap depth") as caught:
        lazy = local_fskde(da.from_array(_TALL, chunks=chunks), **kwargs)
    message = str(caught[0].message)
    assert len(message) < 400, message  # counts and sides, not every chunk
    row_sides = [2 * n for n in lazy.chunks[0]]  # samples at stride 2: pixels
    assert len(row_sides) >= 3 and max(row_sides) <= DEFAULT_CHUNK + 2 * depth
    assert lazy.chunks[1] == (15,)  # 30 columns in chunks of 4 and 2: one block
    np.testing.assert_allclose(lazy.compute(), expected, rtol=1e-6, atol=1e-6)


def test_two_fields_in_one_graph_keep_their_own_blocks():
    other = IMAGE[::-1].copy()
    a = local_fskde(da.from_array(IMAGE, chunks=32), order=3, window="box", size=3)
    b = local_fskde(da.from_array(other, chunks=32), order=3, window="box", size=3)
    again = local_fskde(da.from_array(IMAGE, chunks=32), order=3, window="box", size=3)
    assert a.name != b.name and a.name == again.name  # unique and deterministic keys
    got_a, got_b = dask.compute(a, b, scheduler="sync")
    np.testing.assert_array_equal(got_a, local_fskde(IMAGE, order=3, window="box", size=3))
    np.testing.assert_array_equal(got_b, local_fskde(other, order=3, window="box", size=3))


def _zarr_image(path, n_chunks_per_side: int) -> tuple[np.ndarray, da.Array]:
    pixels = np.random.default_rng(n_chunks_per_side).random((64 * n_chunks_per_side,) * 2)
    array = zarr.create_array(path, shape=pixels.shape, chunks=(64, 64), dtype="float32")
    array[...] = pixels.astype(np.float32)
    return array[...], da.from_zarr(path)


def test_graph_grows_linearly_and_holds_no_image(tmp_path):
    sizes, pickled = {}, {}
    for n in (2, 4, 8):
        pixels, source = _zarr_image(tmp_path / f"{n}.zarr", n)
        lazy = local_fskde(source, order=3, window="box", size=4)
        graph = dict(lazy.__dask_graph__())
        sizes[n * n] = len(graph)
        pickled[n * n] = len(cloudpickle.dumps(graph))
        # the pixels are read inside the tasks: the graph is a small fraction of the image
        assert pickled[n * n] < pixels.nbytes / 4, (pickled, pixels.nbytes)
    # measured: 33, 165, 741 tasks for 4, 16, 64 chunks (12 per interior chunk: read, 8 halo
    # slices, concatenate, core, plus the overlap's bookkeeping)
    assert all(size <= 12 * chunks for chunks, size in sizes.items()), sizes
    assert sizes[64] / 64 < 1.5 * sizes[4] / 4, sizes
    # the same check on an in-memory source fails (the test can see an embedded image)
    embedded = local_fskde(da.from_array(pixels, chunks=64), order=3, window="box", size=4)
    assert len(cloudpickle.dumps(dict(embedded.__dask_graph__()))) > pixels.nbytes


def test_a_lazy_source_is_read_only_inside_tasks():
    reads = []

    def tile(i: int, j: int) -> tuple[slice, slice]:
        return slice(i * 32, (i + 1) * 32), slice(j * 32, (j + 1) * 32)

    def read(i: int, j: int) -> np.ndarray:
        reads.append((i, j))
        return IMAGE[tile(i, j)]

    blocks = [
        [
            da.from_delayed(dask.delayed(read)(i, j), IMAGE[tile(i, j)].shape, IMAGE.dtype)
            for j in range(2)
        ]
        for i in range(2)
    ]
    source = da.block(blocks)
    image = xr.DataArray(source, dims=("y", "x"), name="lazy")
    field = image.fskde.coefficients(order=4, window="gaussian", size=2, stride=2)
    density = field.fskde.density([0.0, 1.0])
    assert reads == []  # building the field and the density reads nothing
    eager = xr.DataArray(IMAGE, dims=("y", "x"), name="lazy").fskde.coefficients(
        order=4, window="gaussian", size=2, stride=2
    )
    assert_keeps_labels(field, eager)
    computed = field.compute(scheduler="sync")
    assert sorted(reads) == [(0, 0), (0, 1), (1, 0), (1, 1)]  # each chunk read once, in a task
    xr.testing.assert_allclose(computed, eager, rtol=1e-6)
    assert_keeps_labels(density, field, dims=("y", "x", "theta"))


def test_nan_policy_raises_at_compute_time():
    image = IMAGE.copy()
    image[30, 30] = np.nan
    lazy = local_fskde(da.from_array(image, chunks=21), order=3, window="box", size=3)  # no error
    with pytest.raises(ValueError, match=r"NaN or infinite pixels; pass nan_policy='omit'"):
        lazy.compute()
    omitted = local_fskde(
        da.from_array(image, chunks=21), order=3, window="box", size=3, nan_policy="omit"
    )
    expected = local_fskde(image, order=3, window="box", size=3, nan_policy="omit")
    # no value at the missing pixel itself, its neighbours' windows computed without it
    assert np.isnan(expected[30, 30]).all() and np.isfinite(np.delete(expected, 30, 0)).all()
    assert np.abs(expected[30, 29]).max() > 0
    assert_eq(omitted, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("window", [("gaussian", 4), ("box", 15), ("disk", 12)])
def test_images_smaller_than_the_halo(window):
    """A 10x10 image under a window reaching 17 pixels: one chunk, no neighbour to borrow
    from; the engine must not ask Dask for an overlap (it used to fail with Dask's message)."""
    tiny = IMAGE[:10, :10]
    eager = local_fskde(tiny, order=3, window=window[0], size=window[1], stride=3)
    lazy = local_fskde(da.from_array(tiny), order=3, window=window[0], size=window[1], stride=3)
    np.testing.assert_array_equal(lazy.compute(), eager)
    # a thin strip: one chunk down, many across
    strip = np.tile(IMAGE[:10], (1, 4))
    eager = local_fskde(strip, order=3, window=window[0], size=window[1])
    with pytest.warns(ChunkSizeWarning):  # 6-pixel chunks merge under a halo of 8..17
        lazy = local_fskde(
            da.from_array(strip, chunks=(10, 6)), order=3, window=window[0], size=window[1]
        )
    np.testing.assert_array_equal(lazy.compute(), eager)


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("chunks", [(20, 24), (61, 10), (13, 47)])
def test_wrap_boundary_borrows_the_opposite_edge(window, chunks):
    """boundary="wrap" reads the far side of the image: edge chunks get it from Dask as a
    periodic halo (it used to fail: 'the block does not hold the pixels its boundary needs')."""
    eager = local_fskde(IMAGE, order=3, window=window[0], size=window[1], stride=2, boundary="wrap")
    lazy = local_fskde(
        da.from_array(IMAGE, chunks=chunks), order=3, window=window[0], size=window[1],
        stride=2, boundary="wrap",
    )  # fmt: skip
    np.testing.assert_array_equal(lazy.compute(), eager)


def test_an_empty_image_is_a_dimension_error():
    from xfskde.exceptions import DimensionError
    from xfskde.lazy import plan_chunks

    with pytest.raises(DimensionError, match="empty"):
        plan_chunks((0, 5))


def test_a_dask_image_in_very_large_chunks_is_cut_into_tasks():
    """A chunk is one task on one thread: an image in one 8192² chunk took 3.8 s where the
    same in 2048² chunks took 1.6 s on 2 cores. Chunks over LARGE_CHUNK x DEFAULT_CHUNK are
    cut by the planner; the values are those of the in-memory field."""
    from xfskde.lazy import DEFAULT_CHUNK, LARGE_CHUNK

    rng = np.random.default_rng(3)
    image = rng.random((LARGE_CHUNK * DEFAULT_CHUNK + 104, 96)).astype(np.float32)
    lazy = local_fskde(da.from_array(image, chunks=-1), order=3, size=2, stride=4)
    assert max(lazy.chunks[0]) * 4 <= DEFAULT_CHUNK and len(lazy.chunks[0]) > 2
    np.testing.assert_array_equal(lazy.compute(), local_fskde(image, order=3, size=2, stride=4))
    kept = local_fskde(da.from_array(image, chunks=(3000, 96)), order=3, size=2, stride=4)
    assert kept.chunks[0][0] == 750  # chunks up to the limit stay the caller's


def test_in_memory_arrays_are_read_in_place_not_copied(tmp_path):
    """dask.array.from_array copies what it is given (dask #11850): segmentation and the store
    writer copied each NumPy image, and open_image of a .npy file read all of it to open it.
    dask_view's tasks slice the array itself; a .npy file is read block by block in the tasks,
    whose graph holds its path only."""
    import pickle

    import xfskde
    from xfskde.lazy import dask_view

    image = np.arange(64 * 48, dtype=np.float64).reshape(64, 48)
    view = dask_view(image, (32, 24))
    image[0, 0] = -1.0  # seen by the view: it holds the array, not a copy
    assert view.compute()[0, 0] == -1.0 and view.chunks == ((32, 32), (24, 24))
    big = np.lib.format.open_memmap(tmp_path / "big.npy", mode="w+", dtype=np.uint8,
                                    shape=(4096, 4096))  # fmt: skip
    big[100, 200] = 7
    big.flush()
    opened = xfskde.open_image(tmp_path / "big.npy")
    graph = pickle.dumps(dict(opened.data.dask))
    assert len(graph) < 100_000  # 16 MB of pixels, not in the graph
    assert all("xfskde-read-npy" in str(key) for key in opened.data.dask)
    assert int(opened[100, 200]) == 7 and int(opened.sum()) == 7


def test_map_regions_reads_each_region_with_its_halo_only():
    """The engine's sparse map: each region's function gets the region and the halo that lies
    in the image (cut at the edges), its global origin and ranges, its own ``extra`` and the
    shared value; only the chunks that hold a region and its halo are read."""
    from xfskde.lazy import map_regions

    image = np.arange(100 * 120 * 2, dtype=np.float32).reshape(100, 120, 2)
    lazy = da.from_array(image, chunks=(20, 30, 2))
    read = []
    counted = lazy.map_blocks(lambda x, block_info=None: read.append(
        tuple(block_info[0]["chunk-location"][:2])) or x, dtype=lazy.dtype)  # fmt: skip
    regions = [((0, 10), (5, 25)), ((45, 55), (60, 64)), ((90, 100), (100, 120))]

    def region(block, *, image_shape, src_origin, rows, cols, extra, shared):
        (a, b), (c, d) = rows, cols
        top, left = src_origin
        assert image_shape == (100, 120) and shared == "mask"
        assert block.shape[:2] == (min(100, b + 3) - top, min(120, d + 3) - left)
        np.testing.assert_array_equal(block, image[top : min(100, b + 3), left : min(120, d + 3)])
        return np.array([top, left, a, b, c, d, extra], np.int64)

    out = map_regions(region, counted, regions, halo=3, trailing=(7,), dtype=np.int64,
                      name="t", shared="mask", extra=[7, 8, 9])  # fmt: skip
    assert out.shape == (3, 7) and out.chunks[0] == (1, 1, 1)
    np.testing.assert_array_equal(
        out.compute(scheduler="sync"),
        [[0, 2, 0, 10, 5, 25, 7], [42, 57, 45, 55, 60, 64, 8], [87, 97, 90, 100, 100, 120, 9]],
    )
    # the first region with its halo lies in chunk (0, 0); the second in chunk row 2, columns
    # 1 and 2; the last in chunk (4, 3): 4 of the 20 chunks are read
    assert sorted(read) == [(0, 0), (2, 1), (2, 2), (4, 3)]
    with pytest.raises(ValueError, match="not inside"):
        map_regions(region, lazy, [((0, 101), (0, 5))], halo=1, trailing=(7,), dtype=int,
                    name="t")  # fmt: skip


def test_map_regions_computes_a_chunk_that_regions_share_once():
    """Regions whose halos reach into the same chunks of a computed image (a fit's tiles on the
    cells of a coarse slide) share each chunk's computation: it runs once per compute, not once
    per region (each region's piece optimized apart, the fused chunk tasks ran per piece)."""
    import collections
    import threading

    from xfskde.lazy import map_regions

    runs, lock = collections.Counter(), threading.Lock()

    def averaged(x, block_info=None):
        with lock:
            runs[tuple(block_info[0]["chunk-location"][:2])] += 1
        return x.astype(np.float32) / 255

    raw = da.from_array(np.arange(120 * 120 * 3).reshape(120, 120, 3) % 256, chunks=(40, 40, 3))
    cells = da.coarsen(np.mean, raw.rechunk((30, 30, 3)).map_blocks(averaged, dtype=np.float32),
                       {0: 2, 1: 2})  # fmt: skip
    regions = [((10, 20), (10, 20)), ((14, 24), (14, 24)), ((20, 30), (10, 20))]

    def region(block, *, image_shape, src_origin, rows, cols, extra):
        return np.array([block.sum()])

    out = map_regions(region, cells, regions, halo=6, trailing=(1,), dtype=np.float64, name="t")
    got = out.compute().ravel()
    # every region with its halo reaches into chunk (1, 1) of the 4 × 4; each chunk ran once
    assert runs[(1, 1)] == 1 and set(runs.values()) == {1}
    np.testing.assert_allclose(got, [
        cells[max(0, a - 6) : b + 6, max(0, c - 6) : d + 6].sum().compute()
        for (a, b), (c, d) in regions
    ], rtol=1e-6)  # fmt: skip
