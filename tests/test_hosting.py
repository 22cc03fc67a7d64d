"""The hosting set-up: workflows and Read the Docs configuration that linters
accept, and both addresses of the book taken from the one place in conf.py."""

import re
import runpy
import subprocess
import sys

import pytest

from conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
READTHEDOCS = ROOT / ".readthedocs.yaml"
# yamllint's defaults, less two rules that GitHub's own syntax breaks: the
# `on:` key reads as a boolean to YAML 1.1, and no one writes `---`.
YAMLLINT_CONFIG = (
    "{extends: default, rules: {document-start: disable, "
    "truthy: {check-keys: false}, line-length: {max: 100}}}"
)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def conf() -> dict:
    return runpy.run_path(str(ROOT / "conf.py"))


def test_hosting_has_ci_and_pages_workflows():
    assert {path.name for path in WORKFLOWS} >= {"ci.yml", "pages.yml"}
    assert READTHEDOCS.is_file()


def test_hosting_yaml_passes_yamllint():
    result = _run(
        "yamllint",
        "--strict",
        "-d",
        YAMLLINT_CONFIG,
        *map(str, WORKFLOWS),
        str(READTHEDOCS),
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "schema, paths",
    [
        ("vendor.github-workflows", WORKFLOWS),
        ("vendor.readthedocs", [READTHEDOCS]),
    ],
    ids=["github-workflows", "readthedocs"],
)
def test_hosting_yaml_matches_its_schema(schema, paths):
    # The schemas ship inside check-jsonschema: nothing is downloaded.
    result = _run("check_jsonschema", "--builtin-schema", schema, *map(str, paths))
    assert result.returncode == 0, result.stdout + result.stderr


def test_hosting_ci_runs_the_readme_commands():
    ci = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    pages = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    assert re.search(r"run: make test$", ci, re.M)
    assert "apt-get install -y chromium" in ci
    assert re.search(r"run: make html$", pages, re.M)
    assert "path: _build/html" in pages and "actions/deploy-pages" in pages
    assert "make html" in READTHEDOCS.read_text()


def test_hosting_urls_come_from_conf(conf):
    assert conf["html_baseurl"] == conf["BOOK_URL"]
    assert conf["html_theme_options"]["repository_url"] == conf["REPOSITORY_URL"]
    assert conf["html_theme_options"]["use_repository_button"]


def test_hosting_readme_links_the_hosted_book(conf):
    assert conf["BOOK_URL"] in (ROOT / "README.md").read_text()


@pytest.mark.slow
def test_hosting_built_pages_name_the_hosted_book_and_repository(site, conf):
    page = (site / "attention.html").read_text()
    assert f'<link rel="canonical" href="{conf["BOOK_URL"]}attention.html"' in page
    assert f'href="{conf["REPOSITORY_URL"]}"' in page
