"""What ``xfskde --help`` and ``xfskde COMMAND --help`` say is readable and true.

Every (sub)command's help is rendered in-process, as ``--help`` prints it: no reST markup
(a description once cut from a module docstring showed ``:mod:`` and double backquotes), every
description a whole sentence that starts with a capital letter, every ``--option`` a help names
an option of that command (``info``'s ``--dims`` once pointed at a ``--plane`` it lacks), and
every default shown in one style, ``(default: ...)``.
"""

from __future__ import annotations

import argparse
import re

import pytest

from xfskde.cli import build_parser

MARKUP = re.compile(r"``|:(?:mod|func|class|meth|attr|data|obj|exc|ref):")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _subcommands(parser, words=()):
    """Every (sub)command's parser, with the words that reach it."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subcommands(sub, (*words, name))


PARSERS = dict(_subcommands(build_parser()))
IDS = [" ".join(words) or "xfskde" for words in PARSERS]


def _entries(parser) -> dict[str, str]:
    """Each option's help as ``--help`` renders it (the default appended), on one line."""
    formatter = parser._get_formatter()
    return {
        action.option_strings[-1]: " ".join(formatter._expand_help(action).split())
        for action in parser._actions
        if action.option_strings and action.help not in (None, argparse.SUPPRESS)
    }


def _options(parser) -> set[str]:
    return {o for action in parser._actions for o in action.option_strings}


def test_every_command_is_checked():
    assert {(), ("maps",), ("info",), ("segment",), ("coefficients",), ("demo",),
            ("experiment",), ("experiment", "segmentation"), ("experiment", "patches"),
            ("experiment", "detection")} == set(PARSERS)  # fmt: skip


@pytest.mark.parametrize("words", PARSERS, ids=IDS)
def test_help_has_no_markup(words):
    text = PARSERS[words].format_help()
    assert not MARKUP.findall(text), (words, MARKUP.findall(text))


@pytest.mark.parametrize("words", PARSERS, ids=IDS)
def test_description_is_a_whole_sentence(words):
    """A description starts with a capital letter and ends with a full stop: not cut from a
    docstring at its first colon (``maps``' began "orientation, coherence and energy ..."),
    and present for every command (the experiments' had none)."""
    description = " ".join((PARSERS[words].description or "").split())
    assert description[:1].isupper(), (words, description[:60])
    assert description.endswith("."), (words, description[-60:])


@pytest.mark.parametrize("words", PARSERS, ids=IDS)
def test_commands_are_listed_alike(words):
    """The lines ``--help`` lists subcommands by read as the options' do: lower case, no full
    stop (the experiments' were sentences among the others' phrases)."""
    for action in PARSERS[words]._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                assert choice.help[:1].islower(), (words, choice.dest, choice.help)
                assert not choice.help.endswith("."), (words, choice.dest, choice.help)


@pytest.mark.parametrize("words", PARSERS, ids=IDS)
def test_every_option_named_exists(words):
    """An option named in a description or an option's help is the command's; one named in
    the line a subcommand is listed by is that subcommand's."""
    parser = PARSERS[words]
    said = [parser.description or "", *_entries(parser).values()]
    named = {o for text in said for o in OPTION.findall(text)}
    assert named <= _options(parser), (words, sorted(named - _options(parser)))
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                options = _options(action.choices[choice.dest])
                named = set(OPTION.findall(choice.help or ""))
                assert named <= options, (words, choice.dest, sorted(named - options))


def test_info_dims_names_no_plane():
    """``info`` has no ``--plane``; its ``--dims`` said "(with --plane z=N)"."""
    assert "--plane" not in PARSERS[("info",)].format_help()
    assert "--plane" not in _options(PARSERS[("info",)])


@pytest.mark.parametrize("words", PARSERS, ids=IDS)
def test_defaults_in_one_style(words):
    """Every option with a default ends its help with ``(default: VALUE)``, and a help that
    says a default says it so: not ``(256)``, ``default 5``, ``default all`` or ``Default:``."""
    parser = PARSERS[words]
    entries = _entries(parser)
    for action in parser._actions:
        if not action.option_strings or action.option_strings[-1] not in entries:
            continue
        text = entries[action.option_strings[-1]]
        for said in re.finditer(r"default", text, re.I):
            assert text[max(0, said.start() - 1) : said.end() + 2] == "(default: ", (words, text)
        if action.default not in (None, False, argparse.SUPPRESS):
            assert re.search(r"\(default: [^()]*(?:\([^()]*\)[^()]*)*\)$", text), (words, text)


def test_defaults_shown_are_the_defaults():
    """The values the experiments' help used to give bare, now in the one style."""
    entries = _entries(PARSERS[("experiment", "segmentation")])
    assert entries["--size"].endswith("(default: 256)")
    assert entries["--window-sizes"].endswith("(default: 3,4,6)")
    assert entries["--weights"].endswith("(default: 0.25,0.5,1)")
    assert entries["--images"].endswith("(default: 5)")
    assert _entries(PARSERS[("experiment", "detection")])["--seed"].endswith("(default: 0)")
    assert _entries(PARSERS[("coefficients",)])["--channels"].endswith("(default: all)")


def test_maps_description_says_what_it_writes():
    description = " ".join(PARSERS[("maps",)].description.split())
    assert description.startswith("Compute the local FS-KDE of an image")
    for said in ("orientation", "coherence", "energy", "OME-Zarr", "--resume", "--verify"):
        assert said in description
