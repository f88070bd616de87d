"""The documentation: a README read in five minutes, and links that lead somewhere.

README.md is at most 12 KB and opens with the two set-up commands. Every relative link and image in
README.md and docs/*.md names a file that exists, and a fragment into a Markdown file names one of
its headings (GitHub's anchors). External links may go only to hosts the README already named; they
are not followed: nothing here leaves this machine.
"""

import re
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
README_MAX_BYTES = 12 * 1024
# The title, then the two commands, then the paragraph about what they need.
OPENING = """# specviz

```sh
make run    # builds .venv from requirements.txt and serves the app on http://127.0.0.1:8501
make test   # builds the same .venv plus requirements-dev.txt, installs chromium and prometheus if missing, runs every test
```

Both need only `python3` (3.11) with `venv`."""
# Pages written by a script, not by hand: what each is generated from.
GENERATED = {"docs/cli.md": "the argument parser (specviz/cli/)",
             "docs/settings.md": "the settings table (specviz/settings.py)"}
# The only hosts the README named before it was split (in its commands, not as links).
KNOWN_HOSTS = {"127.0.0.1", "localhost"}

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.M)
INLINE_TARGET = re.compile(r"\]\(\s*(<[^>\n]*>|[^)\s]+)")  # [text](target) and ![alt](target)
REFERENCE_TARGET = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)", re.M)
AUTOLINK = re.compile(r"<((?:https?|mailto|ftp|file):[^>\s]+)>", re.I)
BARE_URL = re.compile(r"(?<![(<\w])https?://[^\s)>\]]+", re.I)
IMAGE = re.compile(r"!\[[^\]]*\]\(")


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def prose(text: str) -> str:
    """The text without fenced code blocks and code spans, where nothing is a link."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, links reduced to their text, punctuation
    dropped (letters, digits, '_', '-' and spaces stay), each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor in a Markdown file, repeats numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(heading)
        found.add(base if base not in seen else f"{base}-{seen[base]}")
        seen[base] = seen.get(base, 0) + 1
    return found


def targets(path: Path) -> list[str]:
    """Every link and image target in a Markdown file, outside code."""
    text = prose(path.read_text(encoding="utf-8"))
    found = [t.strip("<>") for t in INLINE_TARGET.findall(text) + REFERENCE_TARGET.findall(text)]
    return found + AUTOLINK.findall(text) + BARE_URL.findall(text)


def problem(page: Path, target: str) -> str | None:
    """Why a link of ``page`` leads nowhere, or None."""
    parts = urllib.parse.urlsplit(target)
    if parts.scheme in ("http", "https"):
        return None if parts.hostname in KNOWN_HOSTS else f"{target}: a host the README never named"
    if parts.scheme or parts.netloc:
        return f"{target}: only relative links and http(s) links"
    if parts.path.startswith("/"):
        return f"{target}: an absolute path; link relative to {rel(page)}"
    file = (page.parent / urllib.parse.unquote(parts.path)).resolve() if parts.path else page
    if ROOT not in file.parents and file != ROOT:
        return f"{target}: outside the repository"
    if rel(file) in GENERATED and not file.exists():
        return None  # test_generated_page_exists says so, once
    if not file.exists():
        return f"{target}: no file {rel(file)}"
    fragment = urllib.parse.unquote(parts.fragment)
    if fragment and file.suffix == ".md" and fragment not in anchors(file):
        return f"{target}: no heading with the anchor #{fragment} in {rel(file)}"
    return None


def test_readme_is_at_most_12_kb():
    size = README.stat().st_size
    assert size <= README_MAX_BYTES, f"README.md is {size:,} bytes; move detail into docs/ ({README_MAX_BYTES:,} at most)"


def test_readme_opens_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert text.startswith(OPENING), "README.md must open with its title, the make run / make test block and the " \
                                     "paragraph after it, as they were"


def test_readme_shows_one_screenshot():
    assert len(IMAGE.findall(prose(README.read_text(encoding="utf-8")))) == 1


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_every_link_leads_somewhere(page):
    problems = [p for t in targets(page) if (p := problem(page, t))]
    assert not problems, f"{rel(page)}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_page_exists(name):
    assert (ROOT / name).is_file(), (f"{name} is not there: it is generated from {GENERATED[name]}, and "
                                     "README.md links to it; run the generator and commit its output")


class TestTheCheckerItself:
    @pytest.mark.parametrize("heading, anchor", [
        ("Calculator (`/`, `pages/calculator.py`)", "calculator--pagescalculatorpy"),
        ("Scraping a /metrics URL", "scraping-a-metrics-url"),
        ("Claims: the acceptance a claim needs", "claims-the-acceptance-a-claim-needs"),
        ("See [the guide](guide.md) now", "see-the-guide-now"),
        ("snake_case and α", "snake_case-and-α"),
    ])
    def test_slug_as_github_makes_it(self, heading, anchor):
        assert slug(heading) == anchor

    def test_links_in_code_are_not_links(self, tmp_path):
        page = tmp_path / "page.md"
        page.write_text("`[x](nowhere.md)`\n\n```\n[y](nowhere.md)\nhttps://example.com\n```\n", encoding="utf-8")
        assert targets(page) == []

    def test_every_kind_of_link_is_found(self, tmp_path):
        page = tmp_path / "page.md"
        page.write_text("[a](a.md) ![b](b.png \"t\") [c](<c d.md>) <https://e.org/x> https://f.org/y\n\n[r]: r.md\n",
                        encoding="utf-8")
        assert sorted(targets(page)) == sorted(["a.md", "b.png", "c d.md", "r.md", "https://e.org/x", "https://f.org/y"])

    def test_what_leads_nowhere_is_named(self):
        assert problem(README, "docs/nowhere.md") == "docs/nowhere.md: no file docs/nowhere.md"
        assert "no heading" in problem(README, "docs/guide.md#nowhere")
        assert "never named" in problem(README, "https://example.com/")
        assert problem(README, "http://127.0.0.1:8501") is None
        assert "outside" in problem(README, "../elsewhere.md")
