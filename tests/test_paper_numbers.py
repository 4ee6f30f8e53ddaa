"""The paper's equation and figure numbers, as cited in the docs and docstrings, are the compiled
paper's.

Built with amsmath (as the paper loads it), the paper numbers its displays 1 the FS-KDE, 2
rotation, 3 the kernel, 4 its coefficients H_k, 5 C_K, 6 the coefficients in closed form, 7 the
normal approximation, 8 truncation, 9 the F_1 canonical form, 10 the F_k canonical distance and
11–12 the appendix's bounds; its captioned figures 1 the binning, 2 the kernels, 3 the truncated
kernel, 4 and 5 the stability of F_1 canonicalization, 6 example patches, 7 and 8 the patch
matching, 9 person detection, 10 dead leaves. The docs once skipped display 6 (the closed form)
and figure 3, so every later number was one too high: the checks below read the sentences whose
subject fixes the number.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# equation (display) numbers of the compiled paper
FSKDE, ROTATION, KERNEL, COEFFICIENTS, C_K, CLOSED_FORM = 1, 2, 3, 4, 5, 6
NORMAL, TRUNCATION, CANONICAL_FORM, CANONICAL_DISTANCE, LAST = 7, 8, 9, 10, 12
# captioned figures of the paper
TRUNCATED_KERNEL, STABLE_CANONICAL, UNSTABLE_CANONICAL = 3, 4, 5

# (what the sentence is about, pattern whose first group is the number it cites, that number)
CITES = [
    ("normal approximation", r"normal approximation \(eq\. (\d+)\)", NORMAL),
    ("normal approximation", r"normal\W+uses the paper's eq\. (\d+)", NORMAL),
    ("normal approximation", r"normal, eq\. (\d+)", NORMAL),
    (
        "truncation",
        r"[Tt]runcation(?: threshold)?(?: ε)?(?: at ε)? \((?:red, )?eq\. (\d+)",
        TRUNCATION,
    ),
    ("truncation", r"[Tt]runcation threshold(?: ε)? of eq\. (\d+)", TRUNCATION),
    ("truncation", r"coefficients \(red, eq\. (\d+)\)", TRUNCATION),
    ("truncation", r"eq\. (\d+) truncation", TRUNCATION),
    ("F_1 canonicalization", r"F_?[1₁] canonicali[sz]ation \(eq\. (\d+)\)", CANONICAL_FORM),
    ("F_1 canonicalization", r"F_?[1₁] canonicali[sz]ation, eq\. (\d+)", CANONICAL_FORM),
    ("canonical form", r"canonical forms? \(eq\. (\d+)", CANONICAL_FORM),
    ("canonical distance", r"canonical distance \(eq\. (\d+)", CANONICAL_DISTANCE),
    ("canonical distance", r"eq\. (\d+)'s F_k canonical distance", CANONICAL_DISTANCE),
    (
        "canonical distance",
        r"(?:is the|\"fk\"``: the) paper's (?:cheaper )?eq\. (\d+)",
        CANONICAL_DISTANCE,
    ),
    ("canonical distance", r"\"fk\"`?:? \(?eq\. (\d+)", CANONICAL_DISTANCE),
    ("Fk canonicalization", r"F_?k canonicali[sz]ation \(eq\. (\d+)\)", CANONICAL_DISTANCE),
    ("Fk canonicalization", r"beats F_k \(eq\. (\d+)\)", CANONICAL_DISTANCE),
    ("rotation", r"[Rr]otat\w*(?: it)? \(eq\. (\d+)\)", ROTATION),
    ("C_K", r"C_K of eq\. (\d+)", C_K),
    ("the kernel", r"cos\^\{?2K\}?\(θ/2\) \(eq\. (\d+)\)", KERNEL),
    ("FS-KDE of weighted angle sets", r"weighted angle sets \(eqs\. 1 and (\d+)\)", CLOSED_FORM),
    ("the truncated kernel", r"truncation \(eq\. \d+, Figure (\d+)\)", TRUNCATED_KERNEL),
    ("the truncated kernel", r"Figure (\d+): the kernel of order 64", TRUNCATED_KERNEL),
    ("the truncated kernel", r"distortion is tiny \(Figure (\d+)", TRUNCATED_KERNEL),
    ("the truncated kernel", r"Figure (\d+)'s ℓ", TRUNCATED_KERNEL),
    ("stable canonicalization", r"Figure (\d+), one peak", STABLE_CANONICAL),
    ("unstable canonicalization", r"Figure (\d+), two opposite peaks", UNSTABLE_CANONICAL),
]
EQ = re.compile(r"\beqs?\. ?\(?(\d+)(?:\)?\s*(?:–|-|and|,)\s*(\d+))?")


def _texts() -> dict[str, str]:
    """Every file that cites the paper: the package, docs, README, examples, benchmarks, tests."""
    paths = [
        *(ROOT / "xfskde").rglob("*.py"),
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "docs").glob("*.py"),
        *(ROOT / "examples").glob("*.py"),
        *(ROOT / "benchmarks").glob("*.py"),
        *(p for p in (ROOT / "tests").glob("*.py") if p.name != Path(__file__).name),
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
    ]
    # one line per wrapped sentence: docstrings and Markdown break lines anywhere
    return {
        str(p.relative_to(ROOT)): re.sub(r"\s*\n\s*(?:#\s*)?", " ", p.read_text(encoding="utf-8"))
        for p in paths
    }


TEXTS = _texts()


@pytest.mark.parametrize(
    ("subject", "pattern", "number"), CITES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CITES)]
)
def test_each_citation_names_the_display_it_means(subject, pattern, number):
    found = [
        (name, int(m.group(1))) for name, text in TEXTS.items() for m in re.finditer(pattern, text)
    ]
    assert found, f"no citation of {subject} matches {pattern!r}: the pattern is stale"
    wrong = [(name, n) for name, n in found if n != number]
    assert not wrong, f"{subject} is the paper's {number}, cited as {wrong}"


def test_no_citation_beyond_the_papers_last_display():
    beyond = [
        (name, m.group(0))
        for name, text in TEXTS.items()
        for m in EQ.finditer(text)
        if max(int(g) for g in m.groups() if g) > LAST or int(m.group(1)) < 1
    ]
    assert not beyond, beyond


def test_concepts_lists_every_display_in_order():
    """docs/concepts.md says how the numbers were read and names all ten cited displays."""
    intro = TEXTS["docs/concepts.md"].split("## ", 1)[0]
    assert "compiled paper" in intro and "amsmath" in intro
    listed = [int(n) for n in re.findall(r"\beq\. (\d+) ", intro)]
    assert listed == list(range(1, CANONICAL_DISTANCE + 1))
    for number, words in [
        (CLOSED_FORM, "the FS-KDE's coefficients in closed form"),
        (NORMAL, "the normal approximation"),
        (TRUNCATION, "truncation"),
        (CANONICAL_FORM, "the F₁ canonical form"),
        (CANONICAL_DISTANCE, "the Fₖ canonical distance"),
    ]:
        assert f"eq. {number} {words}" in intro
