"""The README and the docs site: the site builds without a warning, the configuration reference
covers every key of the schema, and what the pages tell a reader to type exists in this checkout."""

import glob
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import REPO

sys.path.insert(0, str(REPO / "docs"))
from config_reference import merged_schema, reference_markdown, schema_keys  # noqa: E402

sys.path.remove(str(REPO / "docs"))

SCHEMA = merged_schema(REPO)  # the main schema and every registered benchmark's fragment
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
# A code span that names a file of this checkout (globs and {a,b} lists allowed).
FILE_SPAN = re.compile(
    r"^(config|profiles|schemas|envs|benchmarks|rules|workflow/scripts|tests|conflictlab|resources|report)/[\w./*{},-]*$"
)
# Spans that end like a file are outputs or modules, not config keys.
FILE_SUFFIX = re.compile(r"\.(csv|md|py|parquet|png|pdf|smk|ya?ml|html|json|jsonl|tex|npy|tsv|log|rst|txt|sh)$")


def code_spans(text: str) -> list[str]:
    """Inline code spans and the lines of fenced code blocks."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.findall(r"`([^`\n]+)`", prose) + [line for block in blocks for line in block.splitlines()]


def schema_paths() -> set[str]:
    return {key.path for key in schema_keys(SCHEMA)}


def rule_names() -> set[str]:
    return {
        m
        for smk in (REPO / "rules").glob("*.smk")
        for m in re.findall(r"^(?:rule|checkpoint) (\w+):", smk.read_text(), re.M)
    }


def make_targets() -> set[str]:
    return set(re.findall(r"^([\w-]+):", (REPO / "Makefile").read_text(), re.M))


def names_code(span: str) -> bool:
    """``methods.cad_logits``: a function of a model-layer module (``conflictlab/lm/methods.py``), not a config key."""
    module, _, name = span.partition(".")
    source = REPO / "conflictlab" / "lm" / f"{module}.py"
    return source.is_file() and re.search(rf"^(def|class) {re.escape(name)}\b", source.read_text(), re.M) is not None


def expand_braces(pattern: str) -> list[str]:
    """``a/{b,c}.md`` as ``a/b.md`` and ``a/c.md``."""
    parts = re.split(r"\{([^{}]*,[^{}]*)\}", pattern)
    choices = [part.split(",") if i % 2 else [part] for i, part in enumerate(parts)]
    return ["".join(combo) for combo in itertools.product(*choices)]


def test_every_schema_key_has_a_description():
    missing = [key.path for key in schema_keys(SCHEMA) if not str(key.node.get("description", "")).strip()]
    assert missing == []


def test_the_configuration_reference_has_a_row_for_every_key_nested_ones_included():
    page = reference_markdown(SCHEMA, yaml.safe_load((REPO / "config.yaml").read_text()))
    rows = set(re.findall(r"^\| `([^`]+)`", page, re.M))
    assert rows == schema_paths()
    assert {
        "data.root",
        "models.{name}.hosted.base_url",
        "conflictbank.embedded.distributed.strategy",
        "arbitration.sensitivity.answer_choices[].a_first",
    } <= rows


def test_a_schema_key_without_a_description_is_found():
    broken = yaml.safe_load((REPO / "schemas" / "config.schema.yaml").read_text())
    del broken["properties"]["conflictbank"]["properties"]["embedded"]["properties"]["distributed"]["properties"][
        "strategy"
    ]["description"]
    assert [k.path for k in schema_keys(broken) if not k.node.get("description")] == [
        "conflictbank.embedded.distributed.strategy"
    ]


def test_mkdocs_builds_strict_without_a_warning(tmp_path):
    mkdocs = Path(sys.executable).parent / "mkdocs"
    result = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "WARNING" not in result.stderr, result.stderr[-4000:]
    assert (tmp_path / "site" / "configuration" / "index.html").is_file()
    assert (tmp_path / "site" / "parquet-schemas" / "index.html").is_file()


def test_the_readme_stays_short_and_links_only_to_existing_pages():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    for target in re.findall(r"\]\(([^)#]+)", text):
        assert (REPO / target).exists(), target


def page_problems(text: str) -> list[str]:
    """What the page names that does not exist: make targets, Snakemake rules (--forcerun,
    --allowed-rules), config files and keys, scripts, files of the checkout."""
    spans = code_spans(text)
    targets, rules, keys, tops = make_targets(), rule_names(), schema_paths(), set(SCHEMA["properties"])
    problems = []
    for span in spans:
        for target in re.findall(r"\bmake ([\w-]+)", span):
            if target not in targets:
                problems.append(f"make target {target}")
        for flag in re.findall(r"--(?:forcerun|allowed-rules|until|omit-from)((?: [a-z_]\w*)+)", span):
            problems += [f"rule {name}" for name in flag.split() if name not in rules]
        for path in re.findall(r"(?:--configfile|--profile) ((?:config|profiles)/\S+)", span):
            if "<" not in path and not (REPO / path).exists():
                problems.append(f"file {path}")
        for script in re.findall(r"\bpython (?:-m )?(\S+\.py)", span):
            if not (REPO / script).exists():
                problems.append(f"script {script}")
        key = re.sub(r"<name>|\{[a-z_]+\}", "{name}", span.strip())
        if (
            re.fullmatch(r"[a-z_]+(\.([a-z0-9_]+|\{name\})(\[\])?)+", key)
            and key.split(".")[0] in tops
            and not FILE_SUFFIX.search(key)
        ):
            if key not in keys and not names_code(key):
                problems.append(f"config key {span}")
        # resources/models/ is what the workflow writes; {model}-like placeholders name outputs
        if (
            FILE_SPAN.match(span.strip())
            and not span.startswith("resources/models")
            and not re.search(r"\{\w+\}", span)
        ):
            if not any(glob.glob(str(REPO / p)) for p in expand_braces(span.strip())):
                problems.append(f"file {span}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_what_a_page_tells_a_reader_to_type_exists(page):
    assert page_problems(page.read_text()) == []


def test_a_made_up_target_rule_key_and_file_are_each_reported():
    text = """`make nosuch` and `judges.no_such_key`, `models.{name}.gpus`, `config/paper.yaml`, `config/nosuch.yaml`

```bash
snakemake --cores 1 --forcerun judge_gold nosuch_rule --configfile config/missing.yaml
python benchmarks/nosuch.py
```
"""
    assert page_problems(text) == [
        "make target nosuch",
        "config key judges.no_such_key",
        "file config/nosuch.yaml",
        "rule nosuch_rule",
        "file config/missing.yaml",
        "script benchmarks/nosuch.py",
    ]
