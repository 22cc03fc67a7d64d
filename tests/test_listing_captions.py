"""Every listing of package code on a chapter page names its file and links to its
API entry (book/_ext/listing_captions.py), checked on the built site."""

import re
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup

from conftest import chapters
from test_listings import LISTINGS, PACKAGE

pytestmark = pytest.mark.slow
# A caption's file: code/transformer/<folder>/<module>.py (or a module at the top).
CAPTION_FILE = re.compile(r"code/transformer/((?:\w+/)*\w+)\.py")


def package_listings(chapter: str) -> list[str]:
    """The files of the package (``<folder>/<module>``, relative to
    code/transformer) that ``chapter``'s literalincludes show, in order."""
    return [
        listing.path.relative_to(PACKAGE).with_suffix("").as_posix()
        for listing in LISTINGS
        if listing.page == chapter
    ]


@pytest.fixture(scope="module")
def api_anchors(site) -> set[str]:
    soup = BeautifulSoup((site / "api.html").read_text(), "html.parser")
    return {tag["id"] for tag in soup.find_all(id=True)}


def test_chapters_show_package_listings():
    assert sum(len(package_listings(c)) for c in chapters()) >= 20


@pytest.mark.parametrize("chapter", [c for c in chapters() if package_listings(c)])
def test_every_package_listing_names_its_file_and_links_to_the_api(
    site, api_anchors, chapter
):
    soup = BeautifulSoup((site / f"{chapter}.html").read_text(), "html.parser")
    captions = [
        wrapper.find(class_="code-block-caption")
        for wrapper in soup.select("article div.literal-block-wrapper")
    ]
    captions = [c for c in captions if c and "code/transformer/" in c.get_text()]
    expected = package_listings(chapter)
    assert [CAPTION_FILE.search(c.get_text())[1] for c in captions] == expected, (
        f"{chapter}: a package listing without a caption naming its file"
    )
    for caption, module in zip(captions, expected):
        hrefs = [a["href"] for a in caption.find_all("a", href=True)]
        repo = [
            h for h in hrefs if h.endswith(f"/blob/main/code/transformer/{module}.py")
        ]
        assert repo and repo[0].startswith("https://"), (chapter, hrefs)
        api = [urlsplit(h) for h in hrefs if urlsplit(h).path == "api.html"]
        assert api, (
            f"{chapter}: caption of {module}.py has no link to api.html: {hrefs}"
        )
        assert api[0].fragment in api_anchors, (chapter, api[0].fragment)
        # An object re-exported by another module is documented there (canonical
        # name); a private helper links to its class or module.
        assert re.match(r"(module-)?transformer\.", api[0].fragment), api[0]
