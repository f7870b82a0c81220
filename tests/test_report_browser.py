"""The report, the reproduction report and the profile pages of the smoke run, in a real browser
(headless Chromium through Playwright: tests/report_browser.py)."""

import os
import re
import shutil

import pytest

from .report_browser import CHROMIUM, check_results

# CI (.ci/run) installs Chromium and sets this: there a missing browser fails instead of skipping.
REQUIRED = os.environ.get("CONFLICTLAB_REQUIRE_BROWSER") == "1"


@pytest.fixture
def browser():
    if not CHROMIUM.exists():
        if REQUIRED:
            pytest.fail(f"{CHROMIUM} is missing (apt-get install -y chromium)")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium; .ci/run does)")
    pytest.importorskip("playwright", reason="the playwright package of the test extras is not installed")


@pytest.fixture
def smoke_pages(smoke_run, tmp_path):
    """A copy of the smoke run's pages, free to break."""
    workflow, run = smoke_run
    assert run.returncode == 0, run.stderr[-2000:]
    results = tmp_path / "results"
    (results / "profiles").mkdir(parents=True)
    for name in ("report.html", "reproduction.html"):
        shutil.copy(workflow / "results" / name, results / name)
    for page in (workflow / "results" / "profiles").glob("*.html"):
        shutil.copy(page, results / "profiles" / page.name)
    return results


def test_the_smoke_runs_pages_load_cleanly_in_chromium(browser, smoke_pages, tmp_path):
    shots = tmp_path / "shots"
    assert check_results(smoke_pages, shots) == []
    profiles = sorted(p.stem for p in (smoke_pages / "profiles").glob("*.html"))
    # a profile per model that a benchmark answers with (config/smoke.yaml: SmolLM2; Gemma-3 only scores)
    assert profiles == ["smollm2-135m-instruct"]
    expected = {"report.png", "reproduction.png", *(f"profile_{name}.png" for name in profiles)}
    assert {p.name for p in shots.iterdir()} == expected
    assert all((shots / name).stat().st_size > 10_000 for name in expected)  # a page, not a blank


def test_a_removed_image_a_broken_link_and_a_table_without_n_fail(browser, smoke_pages, tmp_path):
    profile = smoke_pages / "profiles" / "smollm2-135m-instruct.html"
    html = profile.read_text()
    html = re.sub(r'src="data:image/png;base64,[^"]*"', 'src="removed.png"', html, count=1)
    html = html.replace(
        "</body>",
        '<a href="#nowhere">x</a><a href="gone.html">y</a>'
        "<table><tr><th>accuracy</th></tr><tr><td>50.0 [15.0, 85.0]</td></tr></table></body>",
    )
    profile.write_text(html)
    report = smoke_pages / "report.html"
    text, removed = re.subn(r'("data_uri": "data:image/png;[^"]*?base64,)[^"]*"', r'\1"', report.read_text(), count=1)
    assert removed == 1
    report.write_text(text)
    problems = "\n".join(check_results(smoke_pages, tmp_path / "shots"))
    assert "profiles/smollm2-135m-instruct.html: image 'removed.png' did not load" in problems
    assert "report.html: image results/" in problems and "did not load" in problems
    assert "link #nowhere names no element" in problems and "link gone.html leads to no file" in problems
    assert "a table with intervals has no n" in problems
