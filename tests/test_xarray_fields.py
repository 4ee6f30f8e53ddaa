"""The xarray face's fields and labels, with real xarray objects.

Every function of a ``(y, x, k)`` field (:mod:`xfskde.fields`, :mod:`xfskde.orientation`, the
``.fskde`` accessor) puts a field whose ``k`` coordinate is 0 .. ℓ-1 in another order back in
k order, refuses one that lacks coefficients, naming them, and refuses in one line what is not
a field; the two orientation maps have names of their own. Results are labelled
(:mod:`xfskde._labels`) with the coordinates of their cells whatever the coordinates' dtype.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
import zarr
from skimage import data

import xfskde
from xfskde import canonicalize, evaluate, rotate
from xfskde import fields as xfields
from xfskde.density import mean_direction
from xfskde.exceptions import DimensionError, ParameterError
from xfskde.orientation import coherence, energy, orientation

THETA = np.linspace(-np.pi, np.pi, 16, endpoint=False)


@pytest.fixture(scope="module")
def field() -> xr.DataArray:
    """An ℓ = 9 field of a real picture, 8 × 8 box cells, labelled as a scene would be."""
    pixels = data.camera()[:128, :96].astype(np.float32)
    image = xr.DataArray(
        pixels,
        dims=("y", "x"),
        coords={"y": 500.0 - 2.0 * np.arange(128), "x": 10.0 + 2.0 * np.arange(96)},
        name="camera",
    )
    return image.fskde.coefficients(order=8, window="box", size=8, stride=8)


def _methods(F: xr.DataArray, pixel: xr.DataArray) -> dict[str, xr.DataArray]:
    """Every function of a field, through the accessor."""
    return {
        "density": F.fskde.density(THETA),
        "dominant mean": F.fskde.dominant_orientation(),
        "dominant argmax": F.fskde.dominant_orientation("argmax", n_angles=90),
        "canonicalize": F.fskde.canonicalize(3),
        "rotate": F.fskde.rotate(0.7),
        "distance": F.fskde.distance(pixel),
        "distance to a field": F.fskde.distance(F),
        "orientation": F.fskde.orientation(),
        "coherence": F.fskde.coherence(),
        "energy": F.fskde.energy(),
    }


@pytest.mark.parametrize("lazy", [False, True])
def test_a_field_in_another_k_order_gives_the_values_of_its_coefficients(field, lazy):
    F = field.chunk({"y": 5, "x": 7}) if lazy else field
    reordered = {
        "descending": F.sortby("k", ascending=False),  # k = 8 .. 0
        "shuffled": F.isel(k=[3, 0, 8, 1, 5, 2, 7, 4, 6]),
    }
    values = field.values
    expected = {
        "density": evaluate(values, THETA),
        "dominant mean": mean_direction(values),
        "canonicalize": canonicalize(values, 3),
        "rotate": rotate(values, 0.7),
        "distance": xfskde.distance(values, values[4, 5]),
        "distance to a field": np.zeros(values.shape[:2]),
        "orientation": orientation(values),
        "energy": energy(values),
    }
    truth = _methods(F, F.isel(y=4, x=5))
    for label, G in reordered.items():
        assert not np.array_equal(G["k"], np.arange(9)), label
        # the pixel compared with comes in its own k order too
        got = _methods(G, G.isel(y=4, x=5))
        for name, result in got.items():
            assert (result.chunks is not None) == lazy, (label, name)
            np.testing.assert_allclose(
                result.values, truth[name].values, rtol=1e-5, atol=1e-6, err_msg=f"{label} {name}"
            )
            if name in expected:
                np.testing.assert_allclose(
                    result.values, expected[name], rtol=1e-5, atol=1e-6, err_msg=name
                )
            if "k" in result.dims:  # results along k are in k order, labelled so
                np.testing.assert_array_equal(result["k"], np.arange(9))
        # the field's own pixel against a reordered one: the same FS-KDE, distance 0
        np.testing.assert_allclose(F.fskde.distance(G.isel(y=4, x=5)), truth["distance"])


@pytest.mark.parametrize(
    ("pick", "message"),
    [
        ([0, 2, 4, 6], "lacks k = 1, 3, 5: its k coordinate holds 0, 2, 4, 6"),
        (slice(1, None), r"lacks F_0 \(k = 0\).*the density needs F_0"),
        ([8, 6, 4, 2, 0], "lacks k = 1, 3, 5, 7"),
        ([0, 1, 1, 2], "holds k = 1 more than once"),
    ],
)
def test_a_field_that_lacks_coefficients_is_refused_naming_them(field, pick, message):
    G = field.isel(k=pick)
    calls = {
        "density": lambda: G.fskde.density(THETA),
        "dominant_orientation": lambda: G.fskde.dominant_orientation(),
        "canonicalize": lambda: G.fskde.canonicalize(),
        "rotate": lambda: G.fskde.rotate(0.3),
        "distance": lambda: G.fskde.distance(field.isel(y=0, x=0)),
        "distance to it": lambda: field.fskde.distance(G.isel(y=0, x=0)),
        "orientation": lambda: G.fskde.orientation(),
        "coherence": lambda: G.fskde.coherence(),
        "energy": lambda: G.fskde.energy(),
        "plain orientation": lambda: orientation(G),
    }
    for name, call in calls.items():
        with pytest.raises(DimensionError, match=message):
            call()
        try:
            call()
        except DimensionError as exc:
            assert "\n" not in str(exc), name


def test_k_labels_that_are_not_indices_are_refused_and_a_field_without_them_reads_positions(
    field,
):
    with pytest.raises(DimensionError, match=r"indices 0 \.\. ℓ-1"):
        field.assign_coords(k=field["k"] * 0.5).fskde.density(THETA)
    bare = field.drop_vars("k")  # no k coordinate: position k is F_k
    np.testing.assert_array_equal(
        bare.fskde.density(THETA).values, field.fskde.density(THETA).values
    )
    whole = field.astype(np.complex128).assign_coords(k=field["k"].astype(float))
    np.testing.assert_allclose(whole.fskde.energy().values, field.fskde.energy().values, 1e-6)
    # a prefix is a truncated field: fine
    head = field.isel(k=slice(0, 3))
    np.testing.assert_allclose(
        head.fskde.density(THETA).values, evaluate(field.values[..., :3], THETA)
    )


def test_what_is_not_a_field_is_refused_in_one_line_naming_what_to_pass(field):
    refusals = [
        (lambda: orientation(field.to_dataset()), r"ds\['fskde'\]"),
        (lambda: coherence(field.to_dataset()), r"ds\['fskde'\]"),
        (lambda: energy(field.to_dataset()), r"ds\['fskde'\]"),
        (lambda: xfields.density(field.to_dataset(), [0.0]), r"Dataset.*ds\['fskde'\]"),
        (lambda: xfields.density(field.values, [0.0]), r"numpy.ndarray.*xfskde.evaluate"),
        (lambda: xfields.canonicalize(field.values), "xfskde.canonicalize"),
        (lambda: xfields.rotate(field.values, 0.1), "xfskde.rotate"),
        (lambda: xfields.distance(field.values, field.values), "xfskde.distance"),
        (lambda: xfields.dominant_orientation(field.values), "mean_direction"),
    ]
    for call, message in refusals:
        with pytest.raises(DimensionError, match=message) as info:
            call()
        assert "\n" not in str(info.value) and "dims ()" not in str(info.value)


def test_canonicalize_records_the_level_it_reached(field):
    short = field.isel(k=slice(0, 5))  # ℓ = 5: F_1 .. F_4
    for ell, done in ((1, "F1"), (3, "F3"), (4, "F4"), (5, "F4"), (9, "F4")):
        C = short.fskde.canonicalize(ell=ell)
        assert C.attrs["canonical"] == done, ell
        np.testing.assert_array_equal(C.values, canonicalize(short.values, ell))
    np.testing.assert_array_equal(
        short.fskde.canonicalize(ell=9).values, short.fskde.canonicalize(ell=4).values
    )
    assert field.isel(k=slice(0, 2)).fskde.canonicalize(ell=2).attrs["canonical"] == "F1"
    with pytest.raises(ParameterError, match="ell must be a positive integer"):
        field.fskde.canonicalize(ell=0)


def test_rotate_takes_one_angle_and_refuses_arrays_in_one_line(field):
    for phi in ([0.1, 0.2], np.array([0.1, 0.2]), xr.DataArray([0.1, 0.2], dims="y")):
        with pytest.raises(ParameterError, match="one angle in radians") as info:
            field.fskde.rotate(phi)
        assert "\n" not in str(info.value)
    with pytest.raises(ParameterError, match="an angle in radians"):
        field.fskde.rotate("a")
    # one angle as a NumPy scalar, a 0-d array or a 0-d DataArray is fine
    for phi in (np.float32(0.4), np.array(0.4), xr.DataArray(0.4)):
        np.testing.assert_allclose(
            field.fskde.rotate(phi).values, rotate(field.values, 0.4), rtol=1e-5, atol=1e-7
        )


def test_the_two_orientation_maps_have_names_of_their_own_and_merge(field, tmp_path):
    axial, dominant = field.fskde.orientation(), field.fskde.dominant_orientation()
    assert axial.name == "orientation"
    assert dominant.name == "dominant_orientation"
    merged = xr.merge([axial, dominant, field.fskde.coherence()])
    assert set(merged.data_vars) == {"orientation", "dominant_orientation", "coherence"}
    np.testing.assert_array_equal(merged["dominant_orientation"], dominant)
    np.testing.assert_array_equal(merged["orientation"], axial)
    # an OME-Zarr pyramid averages a map named "orientation" as axial angles (mod π): the
    # dominant gradient angle, in [-π, π), is not one
    for name, m in (("axial", axial), ("dominant", dominant)):
        xfskde.write_ome_zarr(m.sortby("y"), tmp_path / f"{name}.ome.zarr", coarsest=1)
    axial_channels = {
        name: zarr.open_group(tmp_path / f"{name}.ome.zarr").attrs["ome"]["multiscales"][0][
            "metadata"
        ]["axial_channels"]
        for name in ("axial", "dominant")
    }
    assert axial_channels == {"axial": ["orientation"], "dominant": []}


@pytest.mark.parametrize("stride", [2, 3, 4])
def test_integer_coordinates_are_interpolated_as_numbers_not_in_their_dtype(stride):
    pixels = data.camera()[:26, :256].astype(np.float32)
    y = np.arange(25.0, -1, -1)  # 25 .. 0, descending; 26 rows: a last partial cell
    x = np.arange(256.0)  # 0 .. 255: a uint8's whole range
    reference = xr.DataArray(pixels, dims=("y", "x"), coords={"y": y, "x": x})
    F = reference.fskde.coefficients(order=2, window="box", size=stride, stride=stride)
    for ydtype, xdtype in ((np.uint32, np.uint8), (np.int16, np.int64), (np.uint16, np.int8)):
        if np.iinfo(xdtype).max < 255:
            xs = x - 128  # -128 .. 127
        else:
            xs = x
        image = reference.assign_coords(y=y.astype(ydtype), x=xs.astype(xdtype))
        G = image.fskde.coefficients(order=2, window="box", size=stride, stride=stride)
        np.testing.assert_array_equal(G["y"], F["y"], err_msg=f"{ydtype}")
        np.testing.assert_array_equal(G["x"], F["x"] - (x[0] - xs[0]), err_msg=f"{xdtype}")
    o = (stride - 1) / 2  # the cells' centres, pixel i*s + (s - 1)/2
    np.testing.assert_array_equal(F["x"], np.arange(0, 256, stride)[: F.sizes["x"]] + o)
    if stride == 4:  # the last cell (rows 24, 25 and two beyond) is centred half a step beyond
        assert F["x"].values[-1] == 253.5 and F["y"].values[-1] == -0.5


def test_n_angles_with_the_mean_direction_is_refused(field):
    """n_angles samples the density for "argmax"; with "mean" (the default) it was ignored,
    and the result said nothing of it. Now refused in one line naming both."""
    with pytest.raises(
        ParameterError, match=r"^n_angles=90 samples the density for method='argmax'"
    ):
        field.fskde.dominant_orientation(n_angles=90)
    with pytest.raises(ParameterError, match=r"drop n_angles, or pass method='argmax'$"):
        xfields.dominant_orientation(field, method="mean", n_angles=90)
    np.testing.assert_array_equal(
        xfields.dominant_orientation(field, method="argmax", n_angles=90),
        field.fskde.dominant_orientation("argmax", n_angles=90),
    )
