"""Labels written as GeoJSON regions (:func:`xfskde.io.geojson.labels_geojson`): each texture a
MultiPolygon that GDAL's rasterizer (rasterio) draws back onto exactly its pixels — on an
array, on a slide's level 0 from labels of level 1 (QuPath's frame), on a scene in its CRS —
and the command line's ``*.geojson`` output, read back by ``--model`` and ``xfskde info``."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import tifffile
import xarray as xr
import zarr
from skimage.draw import disk, ellipse

import xfskde
from xfskde._labels import label_result
from xfskde._palette import label_rgba_8bit
from xfskde.cli import main
from xfskde.datasets import random_textures
from xfskde.exceptions import ParameterError
from xfskde.io.geojson import labels_geojson, polygon_mask, write_labels_vector

rasterio_features = pytest.importorskip("rasterio.features")
Affine = pytest.importorskip("affine").Affine


def _labels(shape=(300, 400)) -> np.ndarray:
    """Three textures: an ellipse holding a hole with an island, a disk, a band along an edge."""
    labels = np.zeros(shape, np.uint8)
    labels[ellipse(150, 200, 120, 80, rotation=0.6, shape=shape)] = 1
    labels[ellipse(150, 200, 40, 25, shape=shape)] = 0
    labels[disk((150, 200), 8, shape=shape)] = 2
    labels[disk((60, 60), 45, shape=shape)] = 2
    labels[250:, :] = 3
    return labels


def _drawn_by_gdal(collection: dict, shape, transform=None) -> np.ndarray:
    """Each feature burnt with its label by GDAL's rasterizer (pixel centres inside)."""
    shapes = [(f["geometry"], f["properties"]["label"]) for f in collection["features"]]
    transform = transform or Affine.identity()
    return rasterio_features.rasterize(shapes, out_shape=shape, transform=transform, dtype="uint8")


def test_regions_are_drawn_back_onto_their_pixels_by_gdal_and_by_the_mask_reader():
    labels = _labels()
    collection = labels_geojson(labels)
    assert [f["properties"]["label"] for f in collection["features"]] == [1, 2, 3]
    np.testing.assert_array_equal(_drawn_by_gdal(collection, labels.shape), labels)
    palette = label_rgba_8bit(3)
    for feature in collection["features"]:
        label = feature["properties"]["label"]
        assert feature["geometry"]["type"] == "MultiPolygon"
        assert feature["properties"]["objectType"] == "annotation"  # QuPath's import
        assert feature["properties"]["classification"] == {
            "name": f"texture {label}", "color": palette[label][:3].tolist()
        }  # fmt: skip
        alone = {"type": "FeatureCollection", "features": [feature]}
        drawn = polygon_mask(alone, xr.DataArray(labels, dims=("y", "x"))).values
        np.testing.assert_array_equal(drawn, labels == label)
    ellipse_polygons = collection["features"][0]["geometry"]["coordinates"]
    assert max(len(p) for p in ellipse_polygons) == 2  # the ellipse's exterior and its hole
    vertices = sum(len(r) for f in collection["features"] for p in f["geometry"]["coordinates"]
                   for r in p)  # fmt: skip
    assert vertices < 1000  # the staircases' steps become their slopes (outline ~2 000 px)


def test_a_slides_regions_are_in_level_0_pixels(tmp_path, capsys):
    """Labels of level 1 (``--mpp 1`` of a 0.5 µm slide) written as QuPath reads regions: in
    the pixels of level 0, so GDAL draws them back on level 1 at a scale of 2; ``--model`` of
    the GeoJSON labels the slide alike; ``xfskde info`` says what it holds."""
    image, _ = random_textures((512, 512), seed=1)
    pixels = (image * 255).astype(np.uint8)
    path = tmp_path / "slide.ome.tif"
    options = {"tile": (128, 128), "photometric": "rgb"}
    with tifffile.TiffWriter(path, ome=True) as tif:
        tif.write(pixels, subifds=1, metadata={"axes": "YXS", "PhysicalSizeX": 0.5,
                                               "PhysicalSizeY": 0.5}, **options)  # fmt: skip
        tif.write(pixels[::2, ::2], subfiletype=1, **options)
    regions = tmp_path / "regions.geojson"
    argv = ["segment", str(path), str(regions), "--textures", "3", "--mpp", "1", "--no-progress"]
    assert main(argv) == 0
    assert "labels as regions (256, 256), 3 textures" in capsys.readouterr().out
    collection = json.loads(regions.read_text())
    assert "crs" not in collection and collection["xfskde"]["n_textures"] == 3
    store = tmp_path / "labels.zarr"
    assert main(["segment", str(path), str(store), "--model", str(regions), "--mpp", "1",
                 "--no-progress"]) == 0  # fmt: skip
    labels = zarr.open_group(store)["labels"][:]
    drawn = _drawn_by_gdal(collection, labels.shape, Affine.scale(2))
    np.testing.assert_array_equal(drawn, labels)  # the model's labels are the regions'
    capsys.readouterr()
    assert main(["info", str(regions)]) == 0
    out = capsys.readouterr().out
    assert "features    3: texture 1 (MultiPolygon)" in out and "--model takes it" in out
    assert "extent      x 0 to 512, y 0 to 512" in out  # level 0's pixels, the labels of level 1
    for refused in (["--resume"], ["--abundances", "--overwrite"]):
        assert main([*argv, *refused]) == 2
    assert main(["coefficients", str(path), str(tmp_path / "f.geojson")]) == 2
    err = capsys.readouterr().err
    assert "written whole: --resume needs a Zarr store" in err
    assert "a GeoJSON holds labels; name the output *.tif" in err
    assert "a GeoJSON holds regions: `xfskde segment` writes its labels as them" in err


def test_cells_that_leave_pixels_over_are_placed_by_their_size(tmp_path, capsys):
    """``--mpp 1.5`` of a 0.5 µm, 512² slide: 170 cells of 3 pixels cover 510 of them. The
    regions' vertices lie on the cells' edges in level-0 pixels (multiples of 3, up to 510),
    and GDAL draws them back onto the labels at a scale of 3; before, they were stretched by
    512 / 170 (edge 52 at 156.6)."""
    image, _ = random_textures((512, 512), seed=1)
    path = tmp_path / "slide.ome.tif"
    tifffile.imwrite(path, (image * 255).astype(np.uint8), ome=True, photometric="rgb",
                     metadata={"axes": "YXS", "PhysicalSizeX": 0.5,
                               "PhysicalSizeY": 0.5})  # fmt: skip
    regions, store = tmp_path / "regions.geojson", tmp_path / "labels.zarr"
    for out in (regions, store):
        assert main(["segment", str(path), str(out), "--textures", "3", "--mpp", "1.5",
                     "--seed", "1", "--no-progress"]) == 0  # fmt: skip
    collection = json.loads(regions.read_text())
    vertices = np.concatenate([np.asarray(r) for f in collection["features"]
                               for p in f["geometry"]["coordinates"] for r in p])  # fmt: skip
    np.testing.assert_array_equal(vertices % 3, 0)
    assert vertices.max() == 510
    labels = zarr.open_group(store)["labels"][:]
    assert labels.shape == (170, 170)
    np.testing.assert_array_equal(_drawn_by_gdal(collection, labels.shape, Affine.scale(3)), labels)


def test_a_scenes_regions_are_in_its_crs(tmp_path):
    """A GeoTIFF in UTM: the regions in its CRS (the crs member GDAL writes), drawn back by
    GDAL with the scene's transform onto its labels, and by the mask reader too."""
    pytest.importorskip("rioxarray")
    labels = _labels((256, 320))
    scene = xr.DataArray(
        labels[None], dims=("band", "y", "x"),
        coords={"band": [1], "y": 5_000_000 - 10.0 * np.arange(256) - 5,
                "x": 300_000 + 10.0 * np.arange(320) + 5},
    ).rio.write_crs("EPSG:32632")  # fmt: skip
    scene.rio.to_raster(tmp_path / "labels.tif")
    opened = xfskde.open_image(tmp_path / "labels.tif")
    collection = labels_geojson(opened)
    assert collection["crs"]["properties"]["name"] == "urn:ogc:def:crs:EPSG::32632"
    first = collection["features"][0]["geometry"]["coordinates"][0][0][0]
    assert all(v == round(v, 1) for v in first)  # metres, not metres and rounding
    gdal = _drawn_by_gdal(collection, labels.shape, scene.rio.transform())
    np.testing.assert_array_equal(gdal, labels)
    drawn = polygon_mask(collection, opened).values
    np.testing.assert_array_equal(drawn, labels > 0)


def test_a_scene_in_longitude_and_latitude_has_no_crs_member(tmp_path):
    """WGS 84 is RFC 7946's CRS: no crs member (whose URN EPSG::4326 would name latitude
    first), longitude before latitude, drawn back by GDAL and by the mask reader alike."""
    pytest.importorskip("rioxarray")
    labels = _labels((200, 300))
    scene = xr.DataArray(
        labels[None], dims=("band", "y", "x"),
        coords={"band": [1], "y": 45.5 - 0.001 * np.arange(200), "x": 6.2 + 0.001 * np.arange(300)},
    ).rio.write_crs("EPSG:4326")  # fmt: skip
    scene.rio.to_raster(tmp_path / "labels.tif")
    opened = xfskde.open_image(tmp_path / "labels.tif")
    collection = labels_geojson(opened)
    assert "crs" not in collection
    lon, lat = collection["features"][0]["geometry"]["coordinates"][0][0][0]
    assert 6.2 < lon < 6.5 and 45.3 < lat < 45.5
    np.testing.assert_array_equal(
        _drawn_by_gdal(collection, labels.shape, scene.rio.transform()), labels
    )
    np.testing.assert_array_equal(polygon_mask(collection, opened).values, labels > 0)


def test_labels_as_a_geopackage_shapefile_or_flatgeobuf(tmp_path, capsys):
    """``xfskde segment scene.tif labels.gpkg`` (or ``.shp``, ``.fgb``) wrote a Zarr store of
    that name, a folder no GIS opens. Now the regions, by geopandas: read back by pyogrio (an
    independent reader) in the scene's CRS, one feature per texture with its label, class
    and colour, which GDAL burns back onto the labels' pixels, every one; a GeoPackage keeps
    the model (``--model labels.gpkg`` labels the scene alike; ``--mask labels.gpkg
    --mask-classes 'texture 2'`` draws that texture), a shapefile is refused as a model.
    KML and other commands are refused."""
    pytest.importorskip("rioxarray")
    pyogrio = pytest.importorskip("pyogrio")
    image, _ = random_textures((256, 256), seed=3)
    scene = xr.DataArray(
        np.moveaxis(np.round(image * 255).astype(np.uint8), -1, 0), dims=("band", "y", "x"),
        coords={"band": [1, 2, 3], "y": 5_000_000 - 10.0 * np.arange(256) - 5,
                "x": 300_000 + 10.0 * np.arange(256) + 5},
    ).rio.write_crs("EPSG:32632")  # fmt: skip
    scene.rio.to_raster(tmp_path / "scene.tif")
    run = ["segment", str(tmp_path / "scene.tif")]
    assert main([*run, str(tmp_path / "labels.zarr"), "--textures", "3", "--no-progress"]) == 0
    labels = zarr.open_group(tmp_path / "labels.zarr")["labels"][:]
    for name in ("labels.gpkg", "labels.shp", "labels.fgb"):
        out = str(tmp_path / name)
        assert main([*run, out, "--model", str(tmp_path / "labels.zarr")]) == 0, name
        assert (tmp_path / name).is_file() and "labels as regions" in capsys.readouterr().out
        meta, _, geometry, fields = pyogrio.raw.read(out, return_fids=False)
        assert meta["crs"] == "EPSG:32632" and list(meta["fields"]) == [
            "label", "class", "colour"]  # fmt: skip
        records = dict(zip(meta["fields"], fields, strict=True))
        assert list(records["class"]) == ["texture 1", "texture 2", "texture 3"]
        red, green, blue = label_rgba_8bit(3)[1][:3]
        assert records["colour"][0] == f"#{red:02x}{green:02x}{blue:02x}"
        from shapely import from_wkb

        shapes = list(zip(from_wkb(geometry), records["label"], strict=True))
        burnt = rasterio_features.rasterize(shapes, out_shape=labels.shape, dtype="uint8",
                                            transform=scene.rio.transform())  # fmt: skip
        np.testing.assert_array_equal(burnt, labels, err_msg=name)
    assert sorted(p.suffix for p in tmp_path.glob("labels.*") if p.is_file()) == [
        ".cpg", ".dbf", ".fgb", ".gpkg", ".prj", ".shp", ".shx"]  # no scratch left  # fmt: skip
    again = str(tmp_path / "again.zarr")
    assert main([*run, again, "--model", str(tmp_path / "labels.gpkg"), "--mask",
                 str(tmp_path / "labels.gpkg"), "--mask-classes", "texture 2",
                 "--no-progress"]) == 0  # fmt: skip
    second = zarr.open_group(again)["labels"][:]
    np.testing.assert_array_equal(second, np.where(labels == 2, labels, 0))
    assert main([*run, str(tmp_path / "x.zarr"), "--model", str(tmp_path / "labels.shp")]) == 2
    assert "holds the regions, not the texture model" in capsys.readouterr().err
    assert main(["info", str(tmp_path / "labels.gpkg")]) == 0
    assert "the regions of 3 textures and their texture model" in capsys.readouterr().out
    assert main([*run, str(tmp_path / "labels.kml"), "--textures", "3"]) == 2
    assert "writes no .kml file" in capsys.readouterr().err
    assert main(["maps", str(tmp_path / "scene.tif"), str(tmp_path / "maps.gpkg")]) == 2
    assert "holds regions: `xfskde segment` writes its labels" in capsys.readouterr().err
    # a slide's regions: in its level-0 pixels, without a CRS, on purpose and without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_labels_vector(_labels(), tmp_path / "slide.gpkg")
    meta = pyogrio.read_info(str(tmp_path / "slide.gpkg"))
    assert meta["crs"] is None and meta["features"] == 3


#: A 15° rotated grid of 10 m pixels in UTM zone 33N (GDAL's GeoTransform with rotation terms).
ROTATED = (9.659258, -2.588190, 500_000.0, -2.588190, -9.659258, 4_600_000.0)


def test_a_rotated_scenes_regions_go_through_its_whole_transform(tmp_path):
    """A GeoTIFF whose GeoTransform has rotation terms: its regions (GeoJSON and GeoPackage)
    are in its CRS through x = a·col + b·row + c, y = d·col + e·row + f, which GDAL burns
    back onto its labels, every pixel, and the mask reader draws again. They were written
    in pixel coordinates (its x and y coords, pixel indices) under the scene's CRS."""
    rasterio = pytest.importorskip("rasterio")
    pytest.importorskip("rioxarray")
    labels = _labels((128, 160))
    transform = Affine(*ROTATED)
    profile = {"driver": "GTiff", "width": 160, "height": 128, "count": 1, "dtype": "uint8",
               "crs": "EPSG:32633", "transform": transform}  # fmt: skip
    with rasterio.open(tmp_path / "labels.tif", "w", **profile) as file:
        file.write(labels, 1)
    opened = xfskde.open_image(tmp_path / "labels.tif")
    # as segmentation labels it: x and y the pixels' indices, the GeoTransform in spatial_ref
    result = label_result(opened.data, opened, name="labels", attrs={})
    assert result.x.values[1] == 1 and result.rio.transform() == transform
    for given in (result, opened):
        collection = labels_geojson(given)
        assert collection["crs"]["properties"]["name"] == "urn:ogc:def:crs:EPSG::32633"
        drawn = _drawn_by_gdal(collection, labels.shape, transform)
        np.testing.assert_array_equal(drawn, labels)
        np.testing.assert_array_equal(polygon_mask(collection, given).values, labels > 0)
    gpd = pytest.importorskip("geopandas")
    write_labels_vector(result, tmp_path / "labels.gpkg")
    frame = gpd.read_file(tmp_path / "labels.gpkg")
    shapes = zip(frame.geometry, frame["label"], strict=True)
    burnt = rasterio_features.rasterize(shapes, out_shape=labels.shape, transform=transform,
                                        dtype="uint8")  # fmt: skip
    np.testing.assert_array_equal(burnt, labels)


def test_a_geopackage_is_written_into_layer_by_layer(tmp_path, capsys):
    """``xfskde segment scene.tif project.gpkg`` into a GeoPackage holding the user's own
    layer: the labels' layer (named as the file) is added, and ``--overwrite`` replaces that
    layer alone, as GDAL and QGIS write layers; the other layer was deleted with the file.
    Without ``--overwrite`` only a file that holds the labels' layer already is refused; the
    model in that layer's metadata is read back by ``--model``."""
    pytest.importorskip("rioxarray")
    gpd = pytest.importorskip("geopandas")
    pyogrio = pytest.importorskip("pyogrio")
    from shapely.geometry import box

    image, _ = random_textures((96, 96), seed=3)
    scene = xr.DataArray(
        np.round(image[..., 0] * 255).astype(np.uint8)[None], dims=("band", "y", "x"),
        coords={"band": [1], "y": 5_000_000 - 10.0 * np.arange(96) - 5,
                "x": 300_000 + 10.0 * np.arange(96) + 5},
    ).rio.write_crs("EPSG:32632")  # fmt: skip
    scene.rio.to_raster(tmp_path / "scene.tif")
    project = tmp_path / "project.gpkg"
    square = box(300_100, 4_999_100, 300_500, 4_999_500)
    aoi = gpd.GeoDataFrame({"name": ["aoi"]}, geometry=[square], crs="EPSG:32632")
    aoi.to_file(project, layer="aoi")
    run = ["segment", str(tmp_path / "scene.tif"), str(project), "--no-progress"]
    assert main([*run, "--textures", "2"]) == 0
    assert sorted(pyogrio.list_layers(project)[:, 0]) == ["aoi", "project"]
    assert main([*run, "--textures", "2"]) == 2
    assert "holds a layer 'project' already; pass --overwrite" in capsys.readouterr().err
    assert main([*run, "--textures", "3", "--overwrite"]) == 0
    assert sorted(pyogrio.list_layers(project)[:, 0]) == ["aoi", "project"]
    assert gpd.read_file(project, layer="aoi").geometry[0].equals(aoi.geometry[0])
    assert list(gpd.read_file(project, layer="project")["label"]) == [1, 2, 3]
    assert main([*run[:2], str(tmp_path / "again.zarr"), "--model", str(project)]) == 0
    assert "3 textures" in capsys.readouterr().out
    assert not list(tmp_path.glob(".project.gpkg.*"))  # no scratch left


def test_labels_of_a_plane_of_a_stack_name_their_plane_as_qupath_does(tmp_path):
    """Labels of one plane of a z-stack (``--plane z=2``) as GeoJSON: each geometry names its
    plane as QuPath writes it (``"plane": {"c": -1, "z": 2, "t": 0}``), which QuPath's
    Import objects reads (it put them on z = 0 without it) and the mask reader too: drawn on
    that plane again, refused on another. Labels of a single image name none."""
    labels = _labels()
    stack = np.zeros((3, *labels.shape), np.uint8)
    tifffile.imwrite(tmp_path / "stack.ome.tif", stack, ome=True, metadata={"axes": "ZYX"})
    on_z2 = xfskde.open_image(tmp_path / "stack.ome.tif", plane={"z": 2})
    collection = labels_geojson(label_result(labels, on_z2, name="labels", attrs={}))
    planes = [f["geometry"]["plane"] for f in collection["features"]]
    assert planes == [{"c": -1, "z": 2, "t": 0}] * 3
    np.testing.assert_array_equal(polygon_mask(collection, on_z2).values, labels > 0)
    on_z0 = xfskde.open_image(tmp_path / "stack.ome.tif", plane={"z": 0})
    with pytest.raises(ParameterError, match=r"lie on other planes \(z=2; QuPath's plane\)"):
        polygon_mask(collection, on_z0)
    assert all("plane" not in f["geometry"] for f in labels_geojson(labels)["features"])
