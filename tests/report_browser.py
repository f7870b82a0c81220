"""The pages a run writes, opened in headless Chromium through Playwright.

``check_results(results, shots)`` opens ``results/report.html`` (Snakemake's report),
``results/reproduction.html`` and every ``results/profiles/*.html`` and returns every problem
found as a sentence (an empty list: none): a console error or script exception, an image that did
not load (natural width 0), a table that shows an interval without its n, a link inside the pages
that leads nowhere. It saves one screenshot per page into ``shots``; the docs show them.

Playwright drives the distribution's Chromium (``/usr/bin/chromium``, Debian's ``chromium``
package, which ``.ci/run`` installs): Playwright's own browser download needs the internet.

    python -m tests.report_browser results docs/img   # the docs' screenshots, from the demo's pages
"""

from __future__ import annotations

import base64
import csv
import io
import re
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlparse

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 900}

# A column or header that counts what a row stands on: n, n_scored, n[gemma3-270m], n_records ...
N_COLUMN = re.compile(r"^n($|_|\[)")
# A column that bounds an interval: ci_low, eb_low, mr_low, fth_ci_low ...
INTERVAL_COLUMN = re.compile(r"(^|_)low$")
# An interval as the HTML pages print it: 62.5 [48.1, 75.2]
INTERVAL_TEXT = re.compile(r"\[\s*-?[\d.]+,\s*-?[\d.]+\s*\]")

# Per page: its images, its tables (header cells, rows of cell texts) and its links (href, whether
# a fragment's target exists in the page).
PAGE_CONTENT_JS = """async () => {
  await Promise.all(Array.from(document.images).map(img => img.decode().catch(() => null)));
  return {
    images: Array.from(document.images).map(img => ({src: img.getAttribute('src') || '', width: img.naturalWidth})),
    tables: Array.from(document.querySelectorAll('table')).map(table => ({
      header: Array.from(table.querySelectorAll('th')).map(th => th.textContent.trim()),
      rows: Array.from(table.querySelectorAll('tr'))
        .map(tr => Array.from(tr.querySelectorAll('td')).map(td => td.textContent.trim()))
        .filter(cells => cells.length),
    })),
    links: Array.from(document.querySelectorAll('a[href]')).map(a => {
      const href = a.getAttribute('href');
      const target = href.startsWith('#') && href.length > 1 ? decodeURIComponent(href.slice(1)) : null;
      const found = target === null ? null
        : !!(document.getElementById(target) || document.getElementsByName(target).length);
      return {href, fragment_found: found};
    }),
  };
}"""

# Every image of Snakemake's report decoded in the page; every result's name, type and data.
REPORT_IMAGES_JS = """async () => {
  const out = [];
  for (const [name, result] of Object.entries(results)) {
    const mime = result.mime_type;
    if (!mime.startsWith('image/')) continue;
    const img = new Image();
    img.src = result.data_uri;
    await img.decode().catch(() => null);
    out.push({name, width: img.naturalWidth});
  }
  return out;
}"""


@contextmanager
def chromium():
    """A headless Chromium with a fresh profile, as a Playwright browser context."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, viewport=VIEWPORT, offline=True
        )
        try:
            yield context
        finally:
            context.close()


def open_page(context, url: str, problems: list[str], label: str):
    """``url`` loaded in a new tab whose console errors and script exceptions land in ``problems``."""
    page = context.new_page()
    page.on(
        "console",
        lambda message: message.type == "error" and problems.append(f"{label}: console error: {message.text}"),
    )
    page.on("pageerror", lambda error: problems.append(f"{label}: script error: {error}"))
    page.goto(url, wait_until="load")
    return page


def table_problems(label: str, header: list[str], rows: list[list[str]]) -> list[str]:
    """A table that shows an interval needs its n: an n column, or ``n=`` in every row with an interval."""
    with_interval = [row for row in rows if any(INTERVAL_TEXT.search(cell) for cell in row)]
    if not with_interval or any(N_COLUMN.match(name) for name in header):
        return []
    if all(any("n=" in cell for cell in row) for row in with_interval):
        return []
    return [f"{label}: a table with intervals has no n (header {header[:8]})"]


def csv_problems(label: str, text: str) -> list[str]:
    """A CSV table with interval bounds needs an n column."""
    header = next(csv.reader(io.StringIO(text)), [])
    if any(INTERVAL_COLUMN.search(name) for name in header) and not any(N_COLUMN.match(name) for name in header):
        return [f"{label}: interval columns but no n column (columns {header})"]
    return []


def link_problems(label: str, page_file: Path | None, links: list[dict]) -> list[str]:
    """A fragment must name an element of the page, a relative link an existing file beside it."""
    problems = []
    for link in links:
        href = link["href"]
        if link["fragment_found"] is False:
            problems.append(f"{label}: link {href} names no element of the page")
            continue
        parsed = urlparse(href)
        if parsed.scheme in ("http", "https", "mailto", "data") or href.startswith("#"):
            continue
        if page_file is None:
            problems.append(f"{label}: relative link {href} in an embedded page")
        elif not (page_file.parent / unquote(parsed.path)).exists():
            problems.append(f"{label}: link {href} leads to no file ({page_file.parent / unquote(parsed.path)})")
    return problems


def content_problems(label: str, page, page_file: Path | None) -> list[str]:
    """Images, tables and links of one loaded page."""
    content = page.evaluate(PAGE_CONTENT_JS)
    problems = [
        f"{label}: image {image['src'][:60]!r} did not load" for image in content["images"] if image["width"] == 0
    ]
    for table in content["tables"]:
        problems += table_problems(label, table["header"], table["rows"])
    return problems + link_problems(label, page_file, content["links"])


def check_report(context, report: Path, shots: Path) -> list[str]:
    """Snakemake's report: the app runs without errors, every image and embedded page loads,
    every CSV with intervals has its n; the Model profiles category shown in a screenshot."""
    problems: list[str] = []
    label = report.name
    page = open_page(context, report.as_uri(), problems, label)
    entries = page.evaluate("Object.entries(results).map(([name, r]) => ({name, mime: r.mime_type, data: r.data_uri}))")
    if not entries:
        problems.append(f"{label}: no results in the report")
    for image in page.evaluate(REPORT_IMAGES_JS):
        if image["width"] == 0:
            problems.append(f"{label}: image {image['name']} did not load")
    for entry in entries:
        name, mime = entry["name"], entry["mime"]
        if mime == "text/csv":
            payload = entry["data"].split(",", 1)[1]
            problems += csv_problems(f"{label}: {name}", base64.b64decode(payload).decode("utf-8"))
        elif mime == "text/html":
            # An embedded page opens from its data URI, as the report's eye button opens it.
            inner = open_page(context, entry["data"], problems, f"{label}: {name}")
            problems += content_problems(f"{label}: {name}", inner, None)
            inner.close()
    # What a reader sees: the category of the model profiles, one profile's figure opened.
    page.get_by_text("Model profiles", exact=True).click()
    page.locator("tr", has_text="-instruct.png").first.locator("a").first.click()
    page.wait_for_timeout(500)
    problems += content_problems(f"{label}: Model profiles", page, None)
    page.screenshot(path=str(shots / "report.png"))
    page.close()
    return problems


def check_results(results: Path, shots: Path) -> list[str]:
    """Every problem of the pages under ``results`` (see the module's docstring); screenshots into ``shots``."""
    shots.mkdir(parents=True, exist_ok=True)
    pages = [results / "reproduction.html", *sorted((results / "profiles").glob("*.html"))]
    problems = [f"{path}: missing" for path in [results / "report.html", *pages] if not path.is_file()]
    if problems:
        return problems
    with chromium() as context:
        problems += check_report(context, results / "report.html", shots)
        for path in pages:
            label = str(path.relative_to(results))
            page = open_page(context, path.as_uri(), problems, label)
            problems += content_problems(label, page, path)
            name = "reproduction" if path.name == "reproduction.html" else f"profile_{path.stem}"
            page.screenshot(path=str(shots / f"{name}.png"))
            page.close()
    return problems


if __name__ == "__main__":
    found = check_results(Path(sys.argv[1]), Path(sys.argv[2]))
    print("\n".join(found) or "no problem")
    sys.exit(1 if found else 0)
