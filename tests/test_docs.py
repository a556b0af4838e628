"""The docs stand alone: no citation of documents users do not have, no dead docs/ links."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: What users and contributors read: the package, its docs, the configs, scripts, notebooks
#: and the tests (this file aside: its examples of citations are the test's data).
_SCANNED = ("lift_metrics", "docs", "optimizers", "scripts", "benchmarks", "notebooks", "tests")
_NOT_SCANNED = {Path(__file__).resolve()}
_SUFFIXES = {".py", ".md", ".ipynb", ".toml", ".c", ".sh", ".txt"}

#: Citations of internal design documents. A *random* seed ("seed=7", "a fixed seed",
#: "over seeds 7, 11 and 23", "(seed 2026)") is fine; the patterns only match the ways
#: a document called "seed" was cited: "seed §3", "the seed's formula", "seed h10",
#: "seed 002", "seed ``x.md``", "(seed: ...)", "as in the seed", "the seed says", ...
_FORBIDDEN = re.compile(
    "|".join(
        (
            r"DESIGN\.md",
            r"STYLE\.md",
            r"\bshared/",
            r"\bseeds?/",
            r"\bseeds?\s*§",
            r"\bseed['’]s\b",
            r"\bseeds?\s+(?:h\d+|0\d\d)\b",
            r"\bseeds?\s+`*[\w.-]+\.md",
            r"\bseeds?\s+`*[a-z0-9]+(?:-[a-z0-9]+)+",
            r"\bseeds?\s+(?:docs?|documents?|texts?|specs?|specification|formulas?|decisions?"
            r"|examples?|comments?|rules?|tables?|weights|thresholds|scales?|metrics?|default"
            r"|grades?|gates|definition|schema|says|uses|defines|compares|asks|silently)\b",
            r"(?<!\w)\(seeds?\s*[:)]",
            r"\bas in (?:the )?seeds?\b",
            r"\b(?:the|that|this|of) seeds?\b(?!\s*(?:=|value|of\b|for\b|\{|`))",
        )
    ),
    flags=re.IGNORECASE,
)

#: A docs page link, with an optional anchor: ``docs/code.md#code_quality``.
_DOCS_LINK = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")


def _files() -> list[Path]:
    files = [ROOT / "README.md"]
    files += sorted(ROOT.glob("datasets/**/README*.md"))
    for top in _SCANNED:
        files += sorted(p for p in (ROOT / top).rglob("*") if p.is_file() and p.suffix in _SUFFIXES)
    return [path for path in files if path.resolve() not in _NOT_SCANNED]


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, '-' for ' '."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", page.read_text(), flags=re.MULTILINE)
    return {_slug(h) for h in headings}


def test_the_slug_follows_github() -> None:
    assert _slug("Cosine similarity is clipped to [0, 1]") == "cosine-similarity-is-clipped-to-0-1"
    assert _slug("pass@k with k greater than n") == "passk-with-k-greater-than-n"
    assert _slug("A/B decision rule") == "ab-decision-rule"
    assert _slug("code_quality") == "code_quality"


@pytest.mark.parametrize(
    "text",
    [
        "see DESIGN.md",
        "STYLE.md says",
        "(``shared/seeds``)",
        "seed §3",
        "the seed's formula",
        "seed h10, section 1",
        "Seed h10 weights",
        "seed 002, weight 0.2",
        "seed ``scoring-rules.md``",
        "seed framework-harness-metrics.md",
        "(seed ``scylla-metrics``)",
        'seed framework-harness-metrics, "Answer Quality"',
        "(seed: Claude 3.5 Sonnet)",
        "default L40S 0.001 (seed).",
        "as in the seed",
        "the seed says so",
        "Seed example 1:",
        "the seed document",
        "the seeds",
    ],
)
def test_the_pattern_finds_citations(text: str) -> None:
    assert _FORBIDDEN.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "seed : int, default 0",
        "rng = np.random.default_rng(seed)",
        "a fixed seed gives bit-identical results",
        "over seeds 7, 11 and 23",
        "picked at random (seed 2026)",
        'profile="seed" keeps the older plain weighted sum',
        'the ``"seed"`` profile',
        "Seed of the fold assignment.",
        "seed_value = check_seed(seed)",
        "with ``seed`` replaced",
        "one seed for every metric",
        'f"- config hash; seed {cfg.seed}"',
        "Sampling seed sent with every request",
        "use a non-zero seed",
        "the seed of the bootstrap",
    ],
)
def test_the_pattern_spares_random_seeds(text: str) -> None:
    assert not _FORBIDDEN.search(text)


@pytest.mark.slow
def test_no_file_cites_documents_users_do_not_have() -> None:
    found = []
    for path in _files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = _FORBIDDEN.search(line)
            if match:
                found.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)!r}")
    assert not found, "\n".join(found)


def test_every_docs_link_exists() -> None:
    assert DOCS.is_dir()
    anchors = {page.name: _anchors(page) for page in DOCS.glob("*.md")}
    dead = []
    for path in _files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for page, anchor in _DOCS_LINK.findall(line):
                if page not in anchors:
                    dead.append(f"{path.relative_to(ROOT)}:{number}: docs/{page} is missing")
                elif anchor and anchor not in anchors[page]:
                    dead.append(f"{path.relative_to(ROOT)}:{number}: no #{anchor} in docs/{page}")
    assert not dead, "\n".join(dead)


def test_every_link_between_docs_pages_exists() -> None:
    anchors = {page.name: _anchors(page) for page in DOCS.glob("*.md")}
    dead = []
    for page in sorted(DOCS.glob("*.md")):
        for target, anchor in re.findall(r"\]\(([\w-]+\.md)?(?:#([\w-]+))?\)", page.read_text()):
            name = target or page.name
            if name not in anchors or (anchor and anchor not in anchors[name]):
                dead.append(f"docs/{page.name}: ({target}#{anchor})")
    assert not dead, "\n".join(dead)


def test_the_readme_lists_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [page.name for page in DOCS.glob("*.md") if f"(docs/{page.name})" not in readme]
    assert not missing, f"README.md's Documentation line lacks {missing}"
