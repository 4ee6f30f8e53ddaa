"""segment(image, n, model=...): the fit's settings are the model's."""

import numpy as np
import pytest
from skimage import data

from xfskde.exceptions import ParameterError
from xfskde.segmentation import fit_textures, segment

IMAGE = data.immunohistochemistry()[:128, :128]


@pytest.fixture(scope="module")
def model():
    return fit_textures(IMAGE, 2, size=6)


@pytest.mark.parametrize(
    "setting",
    [{"size": 20}, {"stride": 5}, {"window": "box"}, {"features": ("color",)}, {"seed": 9},
     {"metric": "within"}, {"weights": {"color": 2.0}}, {"sample": 500}],
)  # fmt: skip
def test_a_fit_setting_beside_a_model_is_refused_not_ignored(model, setting):
    """Given with a model, size=20 (or stride, window, seed ...) labelled the image exactly as
    without it, and said nothing: the labels follow the model's own settings. Now refused in
    one line naming what was given, as the command line refuses --size with --model."""
    ((name, value),) = setting.items()
    with pytest.raises(ParameterError) as error:
        segment(IMAGE, 2, model=model, **setting)
    assert str(error.value) == (
        f"{name}={value!r} cannot be given with model=: the fit's settings are the model's "
        "(drop them, or drop model= to fit a new model)"
    )


def test_the_defaults_and_the_labelling_settings_are_taken_with_a_model(model):
    labels = segment(IMAGE, 2, model=model)
    np.testing.assert_array_equal(labels, model.predict(IMAGE))
    same = segment(IMAGE, 2, model=model, size="auto", seed=0, stride="auto", chunks=64,
                   gradient_scales="auto", window="gaussian")  # fmt: skip
    np.testing.assert_array_equal(same, labels)
