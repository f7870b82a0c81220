"""MkDocs hooks: the pages generated from the code when the site is built.

- ``configuration.md`` from ``schemas/config.schema.yaml`` and ``config.yaml``
  (``docs/config_reference.py``);
- ``parquet-schemas.md``: every Parquet file a workflow script writes with a pyarrow schema, found
  in the scripts themselves (``write_parquet(table, snakemake.output.<name>, <SCHEMA>)``), its rule and
  path read from ``rules/*.smk``, its columns and types from the schema object.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
# MkDocs puts this folder on sys.path only while it loads the hook: import its modules now.
sys.path.insert(0, str(REPO / "docs"))
from config_reference import merged_schema, reference_markdown  # noqa: E402

sys.path.remove(str(REPO / "docs"))

GENERATED = {"configuration.md", "parquet-schemas.md"}


def configuration_page() -> str:
    schema = merged_schema(REPO)
    defaults = yaml.safe_load((REPO / "config.yaml").read_text())
    return reference_markdown(schema, defaults)


def _imported_names(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """name in the script -> (module, name in the module), for ``from conflictlab... import``."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("conflictlab"):
            for alias in node.names:
                names[alias.asname or alias.name] = (node.module, alias.name)
    return names


def parquet_writes(script: Path) -> list[tuple[str, str, str]]:
    """(output name, module, schema name) of each ``write_parquet(..., snakemake.output.X, SCHEMA)`` call."""
    tree = ast.parse(script.read_text())
    imported = _imported_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "write_parquet" and len(node.args) == 3:
            target, schema = node.args[1], node.args[2]
            output = target.attr if isinstance(target, ast.Attribute) else ast.unparse(target)
            if isinstance(schema, ast.Name) and schema.id in imported:
                found.append((output, *imported[schema.id]))
    return found


def rules_of_scripts() -> dict[str, list[tuple[str, str]]]:
    """script file name -> [(rule, its output block's text)] from ``rules/*.smk``."""
    by_script: dict[str, list[tuple[str, str]]] = {}
    for smk in sorted((REPO / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule |checkpoint )", smk.read_text()):
            head = re.match(r"(?:rule|checkpoint) (\w+):", block)
            script = re.search(r'script:\s*\n\s*"\.\./workflow/scripts/([\w.]+)"', block)
            if head and script:
                output = re.search(r"\n    output:\n(.*?)\n    \w+:", block, re.S)
                by_script.setdefault(script.group(1), []).append((head.group(1), output.group(1) if output else ""))
    return by_script


def _path_of(output_block: str, name: str) -> str:
    match = re.search(rf"\b{name}\s*=\s*(?:expand\()?f?\"([^\"]+)\"", output_block)
    return match.group(1).replace("{{", "{").replace("}}", "}") if match else ""


def _import(module: str):
    """``module`` of this checkout's library, not of an installed copy."""
    sys.path.insert(0, str(REPO))
    try:
        imported = importlib.import_module(module)
    finally:
        sys.path.remove(str(REPO))
    if not Path(imported.__file__).resolve().is_relative_to(REPO):
        raise ImportError(f"{module} was imported from {imported.__file__}, not from {REPO}")
    return imported


def parquet_page() -> str:
    lines = [
        "# Parquet schemas",
        "",
        "Generated when the site is built (`docs/hooks.py`): every Parquet file a workflow script writes",
        "through `conflictlab.io.write_parquet` with a pyarrow schema, that schema's columns and types,",
        "and where the rule puts it. The schema object named is the one the script passes, so this page",
        "cannot drift from what is written. A path left empty is built by the rule's code (see the rule).",
        "",
    ]
    rules = rules_of_scripts()
    for script in sorted((REPO / "workflow" / "scripts").glob("*.py")):
        for output, module, name in parquet_writes(script):
            schema = getattr(_import(module), name)
            for rule, block in rules.get(script.name, [("", "")]):
                path = _path_of(block, output)
                title = f"`{path}`" if path else f"`{output}` of rule `{rule}`"
                lines += [f"## {title}", "", f"Rule `{rule}`, output `{output}`; schema `{module}.{name}`.", ""]
                lines += ["| column | type | nullable |", "|---|---|---|"]
                for field in schema:
                    kind = str(field.type).replace("|", "\\|")
                    lines.append(f"| `{field.name}` | `{kind}` | {'yes' if field.nullable else 'no'} |")
                lines.append("")
    return "\n".join(lines)


def on_files(files, config):
    """Add the generated pages to the site (they exist only in the build)."""
    from mkdocs.structure.files import File

    for name, make in (("configuration.md", configuration_page), ("parquet-schemas.md", parquet_page)):
        files.append(File.generated(config, name, content=make()))
    return files
