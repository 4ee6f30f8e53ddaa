"""A fitted texture model is what its results record: rebuilt from a stored result
(`read_model`, `xfskde segment --model`), it gives the same labels, and other images of the
same textures get them under the same numbers; images it does not fit are refused."""

import warnings

import numpy as np
import pytest
import tifffile
import xarray as xr

import xfskde
from xfskde.cli import main
from xfskde.datasets import random_textures
from xfskde.exceptions import ParameterError, PixelSizeWarning
from xfskde.metrics import rand_index
from xfskde.segmentation import TextureModel, fit_textures, read_model

SIDE = 192


@pytest.fixture(scope="module")
def cohort():
    """Two images of the same three textures in other layouts (two crops of one image), as
    8-bit RGB, and their truths."""
    image, truth = random_textures((2 * SIDE, 2 * SIDE), seed=3)
    pixels = np.round(image * 255).astype(np.uint8)
    first = (pixels[:SIDE, :SIDE], truth[:SIDE, :SIDE])
    second = (pixels[SIDE:, SIDE:], truth[SIDE:, SIDE:])
    for _, t in (first, second):
        assert len(np.unique(t)) == 3  # each crop holds the three textures
    return first, second


def _same_model(a: TextureModel, b: TextureModel) -> None:
    assert a.spec == b.spec and a.scales == b.scales and a.weights == b.weights
    assert a.fit_method == b.fit_method and a.resolution == b.resolution
    assert a.value_range == b.value_range and a.pixel_size == b.pixel_size
    assert (a.seed, a.sample) == (b.seed, b.sample)
    assert a.choices == b.choices
    np.testing.assert_array_equal(a.endmembers, b.endmembers)  # exact floats
    assert a.metric == b.metric
    if a.metric == "within":
        np.testing.assert_array_equal(a.unmixing_vectors, b.unmixing_vectors)


def _ome_tiff(path, pixels, size_um):
    tifffile.imwrite(path, pixels, ome=True, photometric="rgb",
                     metadata={"axes": "YXS", "PhysicalSizeX": size_um,
                               "PhysicalSizeY": size_um})  # fmt: skip


@pytest.mark.parametrize(
    "options",
    [{}, {"features": ("color", "fskde"), "size": 6, "stride": 1, "method": "kmeans"},
     {"resolution": 2, "size": 10}, {"size": 12}],
    ids=["auto", "paper", "cells", "within"],
)  # fmt: skip
def test_a_model_is_what_its_attrs_record(cohort, options):
    (image, _), _ = cohort
    model = fit_textures(image, 3, sample=4000, seed=5, **options)
    rebuilt = TextureModel.from_attrs(model.attrs())
    _same_model(rebuilt, model)
    # the fit's seed and sample are recorded: with the image they reproduce it
    assert (model.attrs()["fit_seed"], model.attrs()["fit_sample"]) == (5, 4000)
    _same_model(fit_textures(image, 3, sample=rebuilt.sample, seed=rebuilt.seed, **options), model)
    assert {f"chose_{k}" for k in model.choices} <= set(model.attrs())
    assert ("size" in model.choices) == ("size" not in options)  # the choices keep their names
    # the stable fit (σ > 6) unmixes in the within-texture metric, k-means in the paper's
    assert model.metric == ("within" if model.fit_method == "stable" else "euclidean")
    assert model.attrs()["metric"] == model.metric and "metric" in model.choices
    assert ("unmixing_vectors" in model.attrs()) == (model.metric == "within")
    np.testing.assert_array_equal(rebuilt.predict(image), model.predict(image))
    # attrs netCDF stores: strings, numbers and flat lists (nested lists are refused by it)
    for value in model.attrs().values():
        assert isinstance(value, str | int | float) or (
            isinstance(value, list) and all(isinstance(v, int | float) for v in value)
        )


def test_labels_saved_to_netcdf_keep_their_model(cohort, tmp_path):
    (image, _), _ = cohort
    labels, model = xfskde.segment(xr.DataArray(image, dims=("y", "x", "c")), 3,
                                   sample=4000, return_model=True)  # fmt: skip
    labels.to_netcdf(tmp_path / "labels.nc")  # raised "attributes must be 1-dimensional"
    with xr.open_dataarray(tmp_path / "labels.nc") as back:
        _same_model(read_model(back), model)
        np.testing.assert_array_equal(back.values, labels.values)


def test_labels_that_xarray_wrote_to_zarr_give_back_their_model(cohort, tmp_path):
    """A Dataset of labels written by xarray (no store of xfskde's) gives the model of the
    one array that records one; several, or none, are refused naming the arrays. Before, the
    refusal said to pass name=, which read_model does not take."""
    (image, _), _ = cohort
    labels, model = xfskde.segment(xr.DataArray(image, dims=("y", "x", "c")), 3,
                                   sample=4000, return_model=True)  # fmt: skip
    labels.to_dataset(name="labels").to_zarr(tmp_path / "one.zarr")
    _same_model(read_model(tmp_path / "one.zarr"), model)
    xr.Dataset({"a": labels, "b": labels}).to_zarr(tmp_path / "two.zarr")
    with pytest.raises(ParameterError, match=r"several arrays .* \(a, b\): give one"):
        read_model(tmp_path / "two.zarr")
    xr.Dataset({"a": xr.DataArray(np.zeros((4, 4)))}).to_zarr(tmp_path / "none.zarr")
    with pytest.raises(ParameterError, match=r"records no texture model: none of its arrays \(a\)"):
        read_model(tmp_path / "none.zarr")


@pytest.mark.parametrize("output", ["labels.zarr", "labels.ome.zarr", "labels.tif"])
def test_every_stored_result_gives_back_its_model(cohort, tmp_path, output):
    if output.endswith(".tif"):
        pytest.importorskip("rioxarray")
    (image, _), _ = cohort
    _ome_tiff(tmp_path / "first.ome.tif", image, 0.5)
    out = tmp_path / output
    argv = ["segment", str(tmp_path / "first.ome.tif"), str(out), "--textures", "3"]
    # σ = 12: the stable fit, whose within-texture metric (its unmixing vectors) is stored too
    assert main([*argv, "--sample", "4000", "--size", "12", "--no-progress"]) == 0
    opened = xfskde.open_image(tmp_path / "first.ome.tif")
    model = read_model(out)
    _same_model(model, fit_textures(opened, 3, sample=4000, size=12))
    assert model.pixel_size == (0.5, 0.5) and (model.seed, model.sample) == (0, 4000)
    assert model.metric == "within"
    if output.endswith(".ome.zarr"):
        stored = xfskde.open_image(out / "labels" / "textures")
        _same_model(read_model(out / "labels" / "textures"), model)  # the label image's own
    elif output.endswith(".tif"):
        stored = xfskde.open_image(out)
    else:
        stored = xfskde.io.open_blocks(out)
    np.testing.assert_array_equal(np.asarray(model.predict(opened)), np.asarray(stored).squeeze())


def test_a_second_image_gets_the_first_ones_labels(cohort, tmp_path, capsys):
    (first, truth1), (second, truth2) = cohort
    _ome_tiff(tmp_path / "first.ome.tif", first, 0.5)
    _ome_tiff(tmp_path / "second.ome.tif", second, 0.5)
    one, two = tmp_path / "one.zarr", tmp_path / "two.zarr"
    common = ["--no-progress"]
    argv = ["segment", str(tmp_path / "first.ome.tif"), str(one), "--textures", "3"]
    assert main([*argv, "--sample", "4000", *common]) == 0
    argv = ["segment", str(tmp_path / "second.ome.tif"), str(two), "--model", str(one)]
    assert main([*argv, *common]) == 0
    assert "3 textures" in capsys.readouterr().out
    labels1 = xfskde.io.open_blocks(one).values
    labels2 = xfskde.io.open_blocks(two).values
    assert rand_index(truth2, labels2) > 0.9  # measured 0.96
    # each true texture has the same label in both images
    for texture in range(3):
        first_label = np.bincount(labels1[truth1 == texture]).argmax()
        second_label = np.bincount(labels2[truth2 == texture]).argmax()
        assert first_label == second_label
    # the same labels as the model's in Python, and its attrs in the second store
    model = read_model(one)
    np.testing.assert_array_equal(labels2, model.predict(second))
    _same_model(read_model(two), model)
    # a resumed run with the model finds the store written with it
    assert main([*argv, *common, "--resume"]) == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--size", "8"], "--size cannot be given with --model"),
        (["--seed", "1", "--features", "color"], "--features, --seed cannot be given"),
        (["--metric", "euclidean"], "--metric cannot be given with --model"),
        (["--textures", "4"], "has 3 textures: drop --textures"),
    ],
)
def test_model_options_that_contradict_it_are_refused(cohort, tmp_path, capsys, extra, message):
    (image, _), _ = cohort
    np.save(tmp_path / "image.npy", image)
    one = tmp_path / "one.zarr"
    argv = ["segment", str(tmp_path / "image.npy"), str(one), "--textures", "3"]
    assert main([*argv, "--sample", "3000", "--no-progress"]) == 0
    capsys.readouterr()
    out = tmp_path / "two.zarr"
    argv = ["segment", str(tmp_path / "image.npy"), str(out), "--model", str(one), *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and not out.exists()


def test_without_textures_or_a_model_the_command_says_what_to_give(tmp_path, capsys):
    np.save(tmp_path / "image.npy", np.zeros((32, 32)))
    assert main(["segment", str(tmp_path / "image.npy"), str(tmp_path / "o.zarr")]) == 2
    assert "give --textures N" in capsys.readouterr().err


def test_a_result_without_a_model_is_refused(tmp_path, capsys):
    image = np.random.default_rng(0).random((64, 64))
    np.save(tmp_path / "image.npy", image)
    field = tmp_path / "field.zarr"
    assert main(["coefficients", str(tmp_path / "image.npy"), str(field), "--no-progress"]) == 0
    tifffile.imwrite(tmp_path / "plain.tif", (image * 255).astype(np.uint8))
    for source in (field, tmp_path / "plain.tif"):
        with pytest.raises(ParameterError, match="segment"):
            read_model(source)
        argv = ["segment", str(tmp_path / "image.npy"), str(tmp_path / "o.zarr")]
        assert main([*argv, "--model", str(source)]) == 2
        assert str(source) in capsys.readouterr().err
    with pytest.raises(ParameterError, match="records no fitted texture model"):
        read_model({"long_name": "texture label"})


def test_a_metric_the_sample_cannot_estimate(cohort):
    """Too few samples for the within-texture covariance: asked for, it is refused, naming
    what to do; chosen automatically (the stable fit), the fit keeps the Euclidean metric and
    says why."""
    (image, _), _ = cohort
    with pytest.raises(ParameterError, match=r"metric='within'.*larger sample= or metric="):
        fit_textures(image, 3, sample=30, metric="within")
    model = fit_textures(image, 3, sample=30, size=12)
    assert model.fit_method == "stable" and model.metric == "euclidean"
    assert model.choices["metric"].startswith("euclidean: the sample cannot estimate")
    with pytest.raises(ParameterError, match="metric must be one of"):
        fit_textures(image, 3, metric="mahalanobis")


def test_damaged_attrs_are_refused(cohort):
    (image, _), _ = cohort
    attrs = fit_textures(image, 3, sample=3000).attrs()
    attrs["endmembers"] = attrs["endmembers"][:-1]  # one number lost
    with pytest.raises(ParameterError, match="damaged texture model"):
        TextureModel.from_attrs(attrs)
    within = fit_textures(image, 3, sample=3000, metric="within").attrs()
    assert within["metric"] == "within"
    for damage in ({"unmixing_vectors": None}, {"metric": "euclidean"},
                   {"unmixing_vectors": within["unmixing_vectors"][:-1]}):  # fmt: skip
        damaged = {k: v for k, v in {**within, **damage}.items() if v is not None}
        with pytest.raises(ParameterError, match="damaged texture model"):
            TextureModel.from_attrs(damaged)
    # a result written before the metric was recorded: the Euclidean unmixing it was made with
    older = {k: v for k, v in attrs.items() if k != "metric"}
    older["endmembers"] = fit_textures(image, 3, sample=3000).attrs()["endmembers"]
    assert TextureModel.from_attrs(older).metric == "euclidean"


def test_a_model_refuses_images_of_another_magnification(cohort, tmp_path, capsys):
    (image, _), _ = cohort
    _ome_tiff(tmp_path / "half.ome.tif", image, 0.5)
    _ome_tiff(tmp_path / "quarter.ome.tif", image, 0.25)
    _ome_tiff(tmp_path / "near.ome.tif", image, 0.55)
    model = fit_textures(xfskde.open_image(tmp_path / "half.ome.tif"), 3, sample=3000)
    assert model.pixel_size == (0.5, 0.5) and model.attrs()["fit_pixel_size_um"] == [0.5, 0.5]
    with pytest.raises(ParameterError, match=r"0\.25 µm.* 0\.5 µm.*--mpp 0\.5"):
        model.predict(xfskde.open_image(tmp_path / "quarter.ome.tif"))
    with warnings.catch_warnings():  # both record theirs: compared, nothing to warn of
        warnings.simplefilter("error", PixelSizeWarning)
        model.predict(xfskde.open_image(tmp_path / "near.ome.tif"))  # another scanner: 10 % apart
    # one of the two without a pixel size: taken, but said (it was taken silently: a model of
    # 0.5 µm pixels labelled a 1 µm image without one all as one texture)
    with pytest.warns(PixelSizeWarning, match=r"fitted on pixels of 0\.5 µm, and this image rec"):
        model.predict(image)
    plain = fit_textures(image, 3, sample=3000)
    with pytest.warns(PixelSizeWarning, match=r"this image's pixels are 0\.5 µm, and the model"):
        plain.predict(xfskde.open_image(tmp_path / "half.ome.tif"))
    one = tmp_path / "one.zarr"
    argv = ["segment", str(tmp_path / "half.ome.tif"), str(one), "--textures", "3"]
    assert main([*argv, "--sample", "3000", "--no-progress"]) == 0
    capsys.readouterr()
    argv = ["segment", str(tmp_path / "quarter.ome.tif"), str(tmp_path / "two.zarr")]
    assert main([*argv, "--model", str(one), "--level", "0"]) == 2
    assert "--mpp 0.5" in capsys.readouterr().err
    # a slide of one level at 0.25 µm: read in 2 x 2 cells, at the model's 0.5 µm (it was
    # refused: its only level was the nearest)
    assert main([*argv, "--model", str(one), "--no-progress"]) == 0
    said = capsys.readouterr().err
    assert "reading level 0 of" in said and "averaged over 2 x 2 pixels (0.5 µm)" in said, said
    labels = xfskde.io.open_blocks(tmp_path / "two.zarr")
    assert labels.shape == (image.shape[0] // 2, image.shape[1] // 2)
    assert labels.attrs["source_binning"] == 2
    # a slide of 0.325 µm: 0.325 and 0.65 µm are both over 25 % off the model's 0.5 µm, which
    # --mpp cannot mend; the line said "--mpp 0.5", which read 0.65 µm and was refused again
    _ome_tiff(tmp_path / "fine.ome.tif", image, 0.325)
    from xfskde.io.images import MPP_LIMIT
    from xfskde.segmentation.model import PIXEL_RATIO

    assert MPP_LIMIT == PIXEL_RATIO  # what --mpp reads, a model takes
    argv = ["segment", str(tmp_path / "fine.ome.tif"), str(tmp_path / "three.zarr")]
    for extra in ([], ["--mpp", "0.65"]):
        assert main([*argv, "--model", str(one), *extra]) == 2
        said = capsys.readouterr().err
        assert "the nearest is 0.65 µm (level 0 in 2 x 2 cells, 30% off)" in said, said
        assert "Resample the image to 0.5 µm pixels" in said and "--mpp 0.5" not in said, said
    assert main([*argv, "--model", str(one), "--mpp", "0.5"]) == 2
    said = capsys.readouterr().err
    assert "--mpp 0.5 µm: no level of" in said and "within 25%" in said, said
    assert not (tmp_path / "three.zarr").exists()
    # an image without a pixel size makes a model without one
    assert fit_textures(image, 3, sample=3000).pixel_size is None


def _scene(pixels, crs, x0, y0, step):
    """A georeferenced DataArray of ``pixels`` (y, x, band) on a ``step`` grid in ``crs``."""
    rioxarray = pytest.importorskip("rioxarray")
    del rioxarray  # registers the .rio accessor
    ny, nx = pixels.shape[:2]
    coords = {"y": y0 - step * (np.arange(ny) + 0.5), "x": x0 + step * (np.arange(nx) + 0.5)}
    scene = xr.DataArray(pixels, dims=("y", "x", "band"), coords=coords)
    return scene.rio.write_crs(crs)


def test_a_model_refuses_scenes_of_another_ground_resolution(cohort, tmp_path, capsys):
    """A scene's pixel size is its size on the ground, from its CRS (pyproj's geodesic
    lengths, checked here against pyproj.Geod directly): a model of a 10 m UTM scene takes a
    0.0001-degree scene (8.8 m at 45 N) and refuses a 30 m one, naming the resolution."""
    pyproj = pytest.importorskip("pyproj")
    (image, _), _ = cohort
    utm = _scene(image, "EPSG:32632", 500000.0, 5000000.0, 10.0)
    model = fit_textures(utm, 3, sample=3000)
    size = np.sqrt(np.prod(model.pixel_size)) / 1e6  # metres
    assert 10.0 < size < 10.01  # 10 m of UTM near the central meridian: 10.004 m (k = 0.9996)
    degrees = _scene(image, "EPSG:4326", 9.0, 45.0, 1e-4)
    geod = pyproj.Geod(ellps="WGS84")
    lat = float(degrees.y[SIDE // 2])
    expected = np.sqrt(geod.inv(9, lat, 9, lat + 1e-4)[2] * geod.inv(9, lat, 9 + 1e-4, lat)[2])
    np.testing.assert_allclose(model.pixel_ratio(degrees) * size, expected, rtol=1e-3)
    labels = model.predict(degrees)  # 8.8 m against 10 m: the same textures, taken
    assert rand_index(labels.values, model.predict(utm).values) == 1.0
    coarse = _scene(image, "EPSG:32632", 500000.0, 5000000.0, 30.0)
    with pytest.raises(ParameterError, match=r"30 m on the ground, .* 10 m .*resolution=10\)"):
        model.predict(coarse)
    # from GeoTIFFs on the command line: the model recorded, the 30 m scene refused
    utm.transpose("band", "y", "x").rio.to_raster(tmp_path / "utm.tif")
    coarse.transpose("band", "y", "x").rio.to_raster(tmp_path / "coarse.tif")
    argv = ["segment", str(tmp_path / "utm.tif"), str(tmp_path / "one.zarr"), "--textures", "3"]
    assert main([*argv, "--sample", "3000", "--no-progress"]) == 0
    stored = read_model(tmp_path / "one.zarr")
    np.testing.assert_allclose(stored.pixel_size, model.pixel_size, rtol=1e-9)
    capsys.readouterr()
    argv = ["segment", str(tmp_path / "coarse.tif"), str(tmp_path / "two.zarr")]
    assert main([*argv, "--model", str(tmp_path / "one.zarr"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "30 m" in err and "gdalwarp -tr 10 10" in err and len(err.strip().splitlines()) == 1


def test_matched_levels_take_an_image_of_another_exposure(cohort):
    """A model's colour bins are fixed at fit: the second image 10 % darker lost its textures'
    labels; its levels mapped onto the model's, it gets them back, and another bit depth is
    taken instead of refused."""
    (first, _), (second, truth) = cohort
    model = fit_textures(first, 3, sample=4000)
    reference = np.asarray(model.predict(second))
    darker = np.round(second * 0.9).astype(np.uint8)
    plain = rand_index(truth, np.asarray(model.predict(darker)))
    matched = model.predict(darker, match_levels=True)
    assert plain < rand_index(truth, reference) - 0.1  # measured 0.767 against 0.968
    assert rand_index(truth, np.asarray(matched)) > 0.95  # measured 0.961
    twelve_bit = (second.astype(np.uint16) * 16).astype(np.uint16)  # 0..4080 of 65535
    with pytest.raises(ParameterError, match="match_levels"):
        model.predict(twelve_bit)
    got = model.predict(twelve_bit, match_levels=True)  # the darker image's labels, exactly
    np.testing.assert_array_equal(got, model.predict(second, match_levels=True))
    labelled = xfskde.segment(xr.DataArray(darker, dims=("y", "x", "c")), 3, model=model,
                              match_levels=True)  # fmt: skip
    low, high = labelled.attrs["matched_levels"]
    assert 0 < low < high < 0.9 * model.value_range[1] + 0.01
    with pytest.raises(ParameterError, match="pass model="):
        xfskde.segment(darker, 3, match_levels=True)


def test_fluorescence_channels_of_their_own_exposure_are_matched_one_by_one(tmp_path, capsys):
    """match_levels="channels" (--match-levels channels): each channel's levels onto the same
    channel's of the model's image. A second section with its DAPI twice as bright and its
    autofluorescence half as bright: matched channel by channel, the labels its original
    gets; matched together, or not at all, others (measured 0.999, 0.693 and 0.877)."""
    from xfskde.datasets import section_in_fluorescence

    first, _ = section_in_fluorescence(seed=0)
    second, section = section_in_fluorescence(seed=1)
    model = fit_textures(first, 3, mask="fluorescence", sample=4000)
    assert len(model.channel_levels) == 3
    assert model.channel_levels[2][1] < 0.2 * model.channel_levels[1][1]  # a dim channel
    reference = np.asarray(model.predict(second, mask="fluorescence"))[section]
    exposed = (second.astype(float) - 100) * np.array([2.0, 1.0, 0.5]) + 100
    exposed = np.clip(exposed, 0, 65535).astype(np.uint16)
    rands = {}
    for how in (False, True, "channels"):
        got = np.asarray(model.predict(exposed, mask="fluorescence", match_levels=how))
        rands[how] = rand_index(reference, got[section])
    assert rands["channels"] > 0.99
    assert rands[True] < 0.9 and rands[False] < 0.9
    labelled = model.predict(xr.DataArray(exposed, dims=("y", "x", "c")), mask="fluorescence",
                             match_levels="channels")  # fmt: skip
    levels = np.reshape(labelled.attrs["matched_levels"], (3, 2))
    assert levels[0, 1] > 1.8 * model.channel_levels[0][1]  # the brighter DAPI, measured
    with pytest.raises(ParameterError, match="'channels'"):
        model.predict(exposed, match_levels="each")
    old = TextureModel.from_attrs({k: v for k, v in model.attrs().items()
                                   if k != "channel_levels"})  # fmt: skip
    with pytest.raises(ParameterError, match="fit it again"):
        old.predict(exposed, match_levels="channels")
    # from the command line, with the model of a store
    np.save(tmp_path / "first.npy", first)
    np.save(tmp_path / "exposed.npy", exposed)
    one = tmp_path / "one.zarr"
    argv = ["segment", str(tmp_path / "first.npy"), str(one), "--textures", "3",
            "--mask", "fluorescence", "--sample", "4000", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    argv = ["segment", str(tmp_path / "exposed.npy"), str(tmp_path / "two.zarr"), "--model",
            str(one), "--mask", "fluorescence", "--no-progress", "--match-levels"]  # fmt: skip
    assert main([*argv, "channels"]) == 0
    stored = xfskde.io.open_blocks(tmp_path / "two.zarr").values
    direct = model.predict(exposed, mask="fluorescence", match_levels="channels")
    np.testing.assert_array_equal(stored, direct)
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main([*argv, "each", "--overwrite"])
    assert "invalid choice: 'each'" in capsys.readouterr().err


def test_named_channels_in_another_order_are_put_in_the_model_s_and_others_refused(
    tmp_path, capsys
):
    """A multiplexed panel acquired in another order: its named channels are taken in the
    model's order (the same labels as the image in that order), recorded; channels of other
    names are refused in one line, from the API and the command line (a model applied to
    channels in another order read one marker's signal as another's, silently)."""
    from xfskde.datasets import section_in_fluorescence

    names = ["DAPI", "marker", "autofluorescence"]
    first, _ = section_in_fluorescence(seed=0)
    second, _ = section_in_fluorescence(seed=1)

    def write(name, counts, channels):
        path = tmp_path / f"{name}.ome.tif"
        tifffile.imwrite(path, np.moveaxis(counts, -1, 0), ome=True,
                         metadata={"axes": "CYX", "Channel": {"Name": channels}})  # fmt: skip
        return path

    model_of = write("first", first, names)
    model = fit_textures(xfskde.open_image(model_of), 3, mask="fluorescence", sample=4000)
    assert model.channel_names == tuple(names)
    assert TextureModel.from_attrs(model.attrs()).channel_names == tuple(names)
    in_order = model.predict(xfskde.open_image(write("second", second, names)))
    turned = write("turned", second[..., [2, 0, 1]], [names[2], names[0], names[1]])
    reordered = model.predict(xfskde.open_image(turned))
    np.testing.assert_array_equal(reordered.values, in_order.values)
    assert reordered.attrs["channels_reordered"] == '["autofluorescence", "DAPI", "marker"]'
    with pytest.warns(
        UserWarning,
        match=r"named DAPI, marker, autofluorescence; this image's "
        r"channels have no names, so they are taken in that order unchecked",
    ):
        unnamed = model.predict(second[..., [2, 0, 1]])  # taken silently before
    assert (unnamed != in_order.values).mean() > 0.1
    # a panel of more channels gives the model's by their names
    more = second[..., [0, 2, 2, 1, 0]]  # DAPI, CD8 (a copy), autofluorescence, marker, CD3
    panel = write("panel", more, ["DAPI", "CD8", "autofluorescence", "marker", "CD3"])
    selected = model.predict(xfskde.open_image(panel))
    np.testing.assert_array_equal(selected.values, in_order.values)
    assert selected.attrs["channels_selected"] == (
        '["DAPI", "CD8", "autofluorescence", "marker", "CD3"]'
    )
    other = write("other", second, ["DAPI", "CD8", "autofluorescence"])
    with pytest.raises(ParameterError, match=r"fitted on DAPI, marker, autofl.*marker is not"):
        model.predict(xfskde.open_image(other))
    one = tmp_path / "one.zarr"
    assert main(["segment", str(model_of), str(one), "--textures", "3", "--mask",
                 "fluorescence", "--sample", "4000", "--no-progress"]) == 0  # fmt: skip
    argv = ["segment", str(other), str(tmp_path / "two.zarr"), "--model", str(one)]
    capsys.readouterr()
    assert main([*argv, "--no-progress"]) == 2
    assert "channels are DAPI, CD8, autofluorescence" in capsys.readouterr().err


def test_the_command_matches_levels_with_a_model_only(cohort, tmp_path, capsys):
    (first, _), (second, truth) = cohort
    np.save(tmp_path / "first.npy", first)
    np.save(tmp_path / "darker.npy", np.round(second * 0.9).astype(np.uint8))
    one = tmp_path / "one.zarr"
    argv = ["segment", str(tmp_path / "first.npy"), str(one), "--textures", "3"]
    assert main([*argv, "--sample", "4000", "--no-progress"]) == 0
    argv = ["segment", str(tmp_path / "darker.npy"), str(tmp_path / "two.zarr")]
    assert main([*argv, "--model", str(one), "--match-levels", "--no-progress"]) == 0
    labels = xfskde.io.open_blocks(tmp_path / "two.zarr")
    assert rand_index(truth, labels.values) > 0.95 and "matched_levels" in labels.attrs
    capsys.readouterr()
    assert main([*argv[:2], str(tmp_path / "three.zarr"), "--textures", "3",
                 "--match-levels"]) == 2  # fmt: skip
    assert "give --model RESULT" in capsys.readouterr().err


def _pyramid(path, pixels, size_um):
    """A two-level pyramidal OME-TIFF: ``pixels`` at ``size_um`` and at twice that."""
    half = pixels.reshape(pixels.shape[0] // 2, 2, pixels.shape[1] // 2, 2, -1).mean(axis=(1, 3))
    with tifffile.TiffWriter(path, bigtiff=True) as tif:
        tif.write(pixels, subifds=1, tile=(64, 64), photometric="rgb",
                  metadata={"axes": "YXS", "PhysicalSizeX": size_um,
                            "PhysicalSizeY": size_um})  # fmt: skip
        tif.write(np.round(half).astype(np.uint8), subfiletype=1, tile=(64, 64),
                  photometric="rgb")  # fmt: skip


def test_the_command_reads_the_level_at_the_model_scale(tmp_path, capsys):
    """A model fitted on the 0.5 µm level of one slide, given another slide whose level 0 is
    0.25 µm and no --level or --mpp: its 0.5 µm level is read (and said), as with --mpp 0.5;
    an explicit --level 0 is refused, naming --mpp."""
    image, _ = random_textures((768, 768), seed=5)
    pixels = np.round(image * 255).astype(np.uint8)
    _pyramid(tmp_path / "a.ome.tif", pixels[:384, :384], 0.25)
    _pyramid(tmp_path / "b.ome.tif", pixels[384:, 384:], 0.25)
    one = tmp_path / "one.zarr"
    argv = ["segment", str(tmp_path / "a.ome.tif"), str(one), "--textures", "3", "--mpp", "0.5"]
    assert main([*argv, "--sample", "3000", "--no-progress"]) == 0
    capsys.readouterr()
    base = ["segment", str(tmp_path / "b.ome.tif"), "--model", str(one), "--no-progress"]
    assert main([*base[:2], str(tmp_path / "auto.zarr"), *base[2:]]) == 0
    assert "reading level 1" in capsys.readouterr().err
    assert main([*base[:2], str(tmp_path / "mpp.zarr"), *base[2:], "--mpp", "0.5"]) == 0
    auto = xfskde.io.open_blocks(tmp_path / "auto.zarr")
    np.testing.assert_array_equal(auto.values, xfskde.io.open_blocks(tmp_path / "mpp.zarr"))
    assert auto.shape == (192, 192) and auto.attrs["source_level"] == 1
    capsys.readouterr()
    assert main([*base[:2], str(tmp_path / "l0.zarr"), *base[2:], "--level", "0"]) == 2
    assert "--mpp 0.5" in capsys.readouterr().err


def test_floats_that_hold_stored_integers_are_read_as_those_integers(cohort, tmp_path):
    """An 8-bit RGBA PNG opens as float32 (its transparent pixels NaN) holding 0..255: it was
    segmented as floats in those units (its colour bins over its own percentiles, not [0, 1]),
    so an opaque RGBA PNG got other labels than its RGB version, and a model fitted on the RGB
    refused the RGBA as "another bit depth or unit". Read in uint8's range, it gets the RGB's
    labels bit for bit; so does a uint16 GeoTIFF that rioxarray decodes to floats
    (``masked=True``) against the same file read as integers."""
    from PIL import Image

    (first, _), (second, truth) = cohort
    rgba = np.dstack([second, np.full(second.shape[:2], 255, np.uint8)])
    Image.fromarray(second).save(tmp_path / "rgb.png")
    Image.fromarray(rgba).save(tmp_path / "opaque.png")
    rgb, opaque = (xfskde.open_image(tmp_path / f"{n}.png") for n in ("rgb", "opaque"))
    assert opaque.dtype == np.float32 and opaque.attrs["source_dtype"] == "uint8"
    options = {"sample": 4000, "size": 8}
    reference = xfskde.segment(rgb, 3, **options)
    labels = xfskde.segment(opaque, 3, **options)
    np.testing.assert_array_equal(labels.values, reference.values)
    assert rand_index(truth, reference.values) > 0.9
    assert labels.attrs["input_integer_dtype"] == "uint8" and "source_dtype" not in labels.attrs
    # a model fitted on an RGB image takes the RGBA tiles of the same scanner
    rgba[:, :40, 3] = 0  # a transparent margin
    Image.fromarray(rgba).save(tmp_path / "cut.png")
    model = fit_textures(first, 3, **options)
    cut = model.predict(xfskde.open_image(tmp_path / "cut.png"))
    assert not cut.values[:, :40].any()
    kept = model.predict(rgb).values[:, 80:]  # beyond the margin's windows
    np.testing.assert_array_equal(cut.values[:, 80:], kept)
    # rioxarray's decoded integers, with a nodata value
    rioxarray = pytest.importorskip("rioxarray")
    scene = np.moveaxis(second.astype(np.uint16) * 257, -1, 0)
    scene[:, :, :30] = 0
    plain = xr.DataArray(scene, dims=("band", "y", "x"),
                         coords={"band": [1, 2, 3], "y": np.arange(SIDE)[::-1] * 10.0 + 5,
                                 "x": np.arange(SIDE) * 10.0 + 5})  # fmt: skip
    plain = plain.rio.write_crs("EPSG:32633").rio.write_nodata(0)
    plain.rio.to_raster(tmp_path / "scene.tif")
    as_integers = rioxarray.open_rasterio(tmp_path / "scene.tif")
    as_floats = rioxarray.open_rasterio(tmp_path / "scene.tif", masked=True)
    assert as_integers.dtype == np.uint16 and as_floats.dtype.kind == "f"
    a = xfskde.segment(as_integers, 3, **options)
    b = xfskde.segment(as_floats, 3, **options)
    np.testing.assert_array_equal(a.values, b.values)
    assert not a.values[:, :30].any() and a.values[:, 40:].all()


def test_same_fit_is_one_fit_up_to_the_last_bits_of_the_arithmetic():
    """What a resumed segment takes for the fit its store records: numbers within 1e-4 of
    their list's largest, a choice's figures within a unit of their last digit; not another
    seed, nor endmembers a percent apart."""
    import dataclasses

    from xfskde.segmentation.saved import same_fit

    image, _ = random_textures((96, 96), seed=2)
    model = fit_textures(image, 3)
    E = np.asarray(model.endmembers)
    assert same_fit(model, model)
    assert same_fit(dataclasses.replace(model, endmembers=E * (1 + 1e-8)), model)
    assert not same_fit(dataclasses.replace(model, endmembers=E * (1 + 1e-2)), model)
    assert not same_fit(dataclasses.replace(model, seed=1), model)
    choices = dict(model.choices, resplit="log |W| -323.479 -> -323.549")
    rounded = dict(model.choices, resplit="log |W| -323.480 -> -323.549")
    other = dict(model.choices, resplit="log |W| -323.479 -> -322.549")
    ours = dataclasses.replace(model, choices=choices)
    assert same_fit(dataclasses.replace(model, choices=rounded), ours)
    assert not same_fit(dataclasses.replace(model, choices=other), ours)


def test_an_mpp_that_leaves_too_few_pixels_is_refused_naming_the_largest(tmp_path, capsys):
    """``--mpp`` that shrinks a 512² slide of 0.5 µm below 64 pixels a side is refused, naming
    the largest that keeps 64: at 16 µm it was segmented as 16 × 16 pixels into three textures
    (exit 0), at 300 µm the refusal blamed the mask and the pixels present."""
    image, _ = random_textures((512, 512), seed=1)
    _ome_tiff(tmp_path / "slide.ome.tif", np.round(image * 255).astype(np.uint8), 0.5)
    for mpp, shape in (("16", "16 x 16"), ("300", "0 x 0"), ("5", "51 x 51")):
        argv = ["segment", str(tmp_path / "slide.ome.tif"), str(tmp_path / "l.zarr"),
                "--textures", "3", "--mpp", mpp, "--no-progress"]  # fmt: skip
        assert main(argv) == 2
        err = capsys.readouterr().err
        if mpp == "300":  # smaller than one cell: refused by the reader, as before
            assert "smaller than one cell" in err
            continue
        assert f"at --mpp {mpp} the image is {shape} pixels, fewer than 64 on a side" in err
        assert err.rstrip().endswith("ask for --mpp 4 or less")
    assert not (tmp_path / "l.zarr").exists()
