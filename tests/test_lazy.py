"""The Dask face: identical to the in-memory result for any chunking (hypothesis)."""

import warnings

import dask
import dask.array as da
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xfskde import local_fskde
from xfskde.lazy import ChunkSizeWarning, safe_chunks, sample_chunks

WINDOWS = [("box", 5), ("box", 8), ("gaussian", 1.5), ("disk", 3)]
IMAGE = np.random.default_rng(7).random((61, 47)).astype(np.float32)


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


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=chunking(61),
    cols=chunking(47),
    window=st.sampled_from(WINDOWS),
    stride=st.sampled_from([1, 2, 3, 8]),
)
def test_dask_equals_numpy_for_any_chunking(rows, cols, window, stride):
    kind, size = window
    expected = local_fskde(IMAGE, order=5, window=kind, size=size, stride=stride)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChunkSizeWarning)
        lazy = local_fskde(
            da.from_array(IMAGE, chunks=(rows, cols)),
            order=5,
            window=kind,
            size=size,
            stride=stride,
        )
    assert lazy.shape == expected.shape and lazy.dtype == expected.dtype
    got = lazy.compute(scheduler="sync")
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6 * np.abs(expected).max())


def test_declared_chunks_match_the_computed_blocks():
    lazy = local_fskde(
        da.from_array(IMAGE, chunks=(21, 13)), order=3, window="box", size=8, stride=3
    )
    for index in np.ndindex(lazy.numblocks):
        block = lazy.blocks[index].compute(scheduler="sync")
        assert block.shape == tuple(c[i] for c, i in zip(lazy.chunks, index, strict=True))


def test_small_chunks_are_merged_with_a_warning():
    with pytest.warns(ChunkSizeWarning, match="overlap depth"):
        lazy = local_fskde(da.from_array(IMAGE, chunks=(3, 47)), order=3, window="box", size=9)
    assert min(lazy.chunks[0]) >= 5
    np.testing.assert_allclose(lazy.compute(), local_fskde(IMAGE, order=3, window="box", size=9))


def test_chunk_helpers():
    assert safe_chunks((10, 10, 3), 5) == (10, 13)
    assert safe_chunks((2, 10, 10), 5) == (12, 10)
    assert safe_chunks((4,), 5) == (4,)
    assert sample_chunks((8, 8, 8), 8) == (1, 1, 1)
    assert sample_chunks((5, 5, 5), 8) == (1, 0, 1)
    assert sum(sample_chunks((13, 9, 30), 3)) == 17


@pytest.mark.parametrize("channel_axis", [0, -1])
def test_colour_and_integer_images(channel_axis):
    rgb = (np.random.default_rng(1).random((40, 36, 3)) * 255).astype(np.uint8)
    image = np.moveaxis(rgb, -1, 0) if channel_axis == 0 else rgb
    chunks = (3, 17, 11) if channel_axis == 0 else (17, 11, 3)
    expected = local_fskde(image, order=4, window="disk", size=2, channel_axis=channel_axis)
    lazy = local_fskde(
        da.from_array(image, chunks=chunks),
        order=4,
        window="disk",
        size=2,
        channel_axis=channel_axis,
    )
    assert lazy.dtype == np.complex64
    np.testing.assert_allclose(lazy.compute(), expected, rtol=1e-6, atol=1e-6)


def test_graph_grows_linearly_and_holds_no_image():
    sizes = []
    for n in (2, 4, 8):
        source = da.random.default_rng(0).random((64 * n, 64 * n), chunks=64)
        lazy = local_fskde(source, order=3, window="box", size=4)
        graph = dict(lazy.__dask_graph__())
        sizes.append(len(graph) / (n * n))
        big = [v for v in graph.values() if isinstance(v, np.ndarray) and v.size >= 64 * 64]
        assert not big, "an image-sized array is embedded in the graph"
    assert max(sizes) < 1.5 * min(sizes)  # tasks per chunk stay constant


def test_nan_policy_raises_at_compute_time():
    image = IMAGE.copy()
    image[30, 30] = np.nan
    lazy = local_fskde(da.from_array(image, chunks=21), order=3, window="box", size=3)
    with pytest.raises(ValueError, match="nan_policy"), dask.config.set(scheduler="sync"):
        lazy.compute()
    omitted = local_fskde(
        da.from_array(image, chunks=21), order=3, window="box", size=3, nan_policy="omit"
    )
    np.testing.assert_allclose(
        omitted.compute(),
        local_fskde(image, order=3, window="box", size=3, nan_policy="omit"),
        rtol=1e-6,
    )
