"""``xfskde experiment``'s options say what they do, or are refused.

``detection --train 0`` ran on the proxy's 600 windows (``n_train or 600``), ``patches --subset``
was ignored without ``--root``, ``patches --pairs 3`` used 2 pairs and printed an AUC of 0 or 1
for every descriptor without a word, and ``--lengths`` was comma-separated for one experiment
and space-separated for the other.
"""

from __future__ import annotations

import argparse
import warnings

import pytest

from xfskde.commands import experiment
from xfskde.experiments import patches
from xfskde.experiments.detection import detection_experiment


def _parse(words: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    experiment.add_parser(parser.add_subparsers())
    return parser.parse_args(["experiment", *words])


@pytest.mark.parametrize("name", ["detection", "patches"])
def test_lengths_are_comma_or_space_separated_in_both_experiments(name):
    for words, expected in (
        (["4,8"], (4, 8)),
        (["4", "8"], (4, 8)),
        (["4,8", "16"], (4, 8, 16)),
        (["6"], (6,)),
    ):
        assert _parse([name, "--lengths", *words]).lengths == expected
    with pytest.raises(SystemExit):
        _parse([name, "--lengths", "4,x"])


def test_detection_refuses_zero_windows_instead_of_running_the_default_600():
    with pytest.raises(ValueError, match=r"n_train must be an int >= 4 .*, got 0"):
        detection_experiment(lengths=(8,), n_train=0, n_test=40, descriptors=("intensity",))
    with pytest.raises(ValueError, match=r"n_test must be an int >= 4 .*, got 0"):
        detection_experiment(lengths=(8,), n_train=40, n_test=0, descriptors=("intensity",))
    args = _parse(["detection", "--train", "0", "--test", "0", "--lengths", "8"])
    with pytest.raises(ValueError, match=r"--train must be >= 4 .*, got 0"):
        args.func(args)
    # given sizes are the sizes used
    rows = detection_experiment(lengths=(8,), n_train=8, n_test=6, descriptors=("intensity",))
    assert len(rows) == 1 and rows[0]["accuracy"] * 6 == pytest.approx(
        round(rows[0]["accuracy"] * 6)
    )


def test_patches_refuses_a_subset_without_root():
    with pytest.raises(ValueError, match=r"subset='yosemite' names a UBC subset under root"):
        patches.patches_experiment(pairs=4, lengths=[4], subset="yosemite")
    args = _parse(["patches", "--subset", "foo", "--pairs", "4", "--lengths", "4"])
    with pytest.raises(ValueError, match=r"--subset foo names a UBC subset under --root"):
        args.func(args)
    assert _parse(["patches"]).subset is None  # the UBC default, liberty, applies with --root


def test_patches_uses_the_pairs_asked_for_and_warns_when_they_are_few():
    with pytest.warns(UserWarning, match=r"only 1 corresponding and 2 non-corresponding pairs"):
        rows = patches.patches_experiment(pairs=3, lengths=[4], seed=0)
    assert {row["pairs"] for row in rows} == {3}
    assert {row["auc"] for row in rows} <= {0.0, 0.5, 1.0}  # 2 comparisons: why it warns
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = patches.patches_experiment(pairs=21, lengths=[4], seed=0)
    assert {row["pairs"] for row in rows} == {21}


def test_segmentation_help_says_it_needs_two_images():
    parser = argparse.ArgumentParser()
    experiment.add_parser(parser.add_subparsers())
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    inner = next(
        a for a in sub.choices["experiment"]._actions if isinstance(a, argparse._SubParsersAction)
    )
    help_text = " ".join(inner.choices["segmentation"].format_help().split())
    assert "--images IMAGES images per data set, >= 2 for leave-one-out" in help_text
