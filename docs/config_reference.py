"""The configuration reference of the docs, generated from ``schemas/config.schema.yaml`` and the
benchmarks' schema fragments (:func:`merged_schema`).

``schema_keys(schema)`` lists every key the schema allows, nested ones included (``data.root``,
``models.{name}.hosted.base_url``, ``arbitration.sensitivity.answer_choices[].a_means``), with its
schema node; ``reference_markdown(schema, defaults)`` renders them as one table per top-level key:
type, the embedded default (``config.yaml``), allowed values and the schema's description.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any

MISSING = object()


@dataclass(frozen=True)
class SchemaKey:
    """One key: its dotted path, its schema node ($ref resolved) and whether its parent requires it."""

    path: str
    node: dict
    required: bool


def resolve(node: dict, schema: dict) -> dict:
    """``node`` with its ``$ref`` (``#/$defs/...``) merged in; the node's own fields win."""
    if "$ref" not in node:
        return node
    target = schema
    for part in node["$ref"].removeprefix("#/").split("/"):
        target = target[part]
    return {**resolve(target, schema), **{k: v for k, v in node.items() if k != "$ref"}}


def _children(node: dict, path: str, schema: dict):
    """The keys below ``node`` (an object's properties, a map's ``{name}`` entries, an array's items)."""
    variants = [resolve(v, schema) for v in node.get("oneOf", [])] or [node]
    for variant in variants:
        required = set(variant.get("required", []))
        for name, child in variant.get("properties", {}).items():
            yield from _walk(child, f"{path}.{name}" if path else name, name in required, schema)
        extra = variant.get("additionalProperties")
        if isinstance(extra, dict) and (extra.get("properties") or extra.get("oneOf")):
            yield from _walk(extra, f"{path}.{{name}}", False, schema)
    items = node.get("items")
    if isinstance(items, dict):
        items = resolve(items, schema)
        if items.get("properties"):
            yield from _children(items, f"{path}[]", schema)


def _walk(node: dict, path: str, required: bool, schema: dict):
    node = resolve(node, schema)
    yield SchemaKey(path, node, required)
    yield from _children(node, path, schema)


def merged_schema(repo) -> dict:
    """``schemas/config.schema.yaml`` of checkout ``repo`` with every registered benchmark's schema fragment
    (conflictlab.benchmarks: ``schema``, validating its ``config_section``) as that section's node: the
    whole config as the Snakefile validates it."""
    import sys

    import yaml

    sys.path.insert(0, str(repo))  # this checkout's registry, as the hooks import its modules
    try:
        from conflictlab import benchmarks
    finally:
        sys.path.remove(str(repo))
    schema = yaml.safe_load((repo / "schemas" / "config.schema.yaml").read_text())
    for bench in benchmarks.REGISTRY:
        if bench.schema:
            fragment = yaml.safe_load((repo / bench.schema).read_text())
            fragment.pop("$schema", None)
            schema["properties"][bench.config_section] = fragment
    return schema


def schema_keys(schema: dict) -> list[SchemaKey]:
    """Every key of the config schema, parents before their children."""
    return list(_children(schema, "", schema))


def type_text(node: dict) -> str:
    """The key's JSON type(s) in words, e.g. ``integer | null``, ``array of string``."""
    if "oneOf" in node:
        return " or ".join(type_text(v) for v in node["oneOf"])
    if "enum" in node:
        kinds = sorted(
            {
                "null" if v is None else type(v).__name__.replace("str", "string").replace("int", "integer")
                for v in node["enum"]
            }
        )
        return " | ".join(kinds)
    kinds = node.get("type", "any")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "array" in kinds and isinstance(node.get("items"), dict):
        items = node["items"]
        inner = type_text(items) if "$ref" not in items else "object"
        kinds = [f"array of {inner}" if k == "array" else k for k in kinds]
    return " | ".join(kinds)


def allowed_text(node: dict) -> str:
    """The values the schema admits beyond its type: enum, bounds, pattern, sizes."""
    parts = []
    if "enum" in node:
        parts.append(", ".join(_code(v) for v in node["enum"]))
    for field, sign in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<")):
        if field in node and node[field] < 1e300:
            parts.append(f"{sign} {node[field]}")
    if "multipleOf" in node:
        parts.append(f"multiple of {node['multipleOf']}")
    if "pattern" in node:
        parts.append(f"matches {_code(node['pattern'])}")
    for field, words in (("minItems", "at least {} items"), ("maxItems", "at most {} items")):
        if field in node:
            parts.append(words.format(node[field]))
    if node.get("uniqueItems"):
        parts.append("no repeats")
    items = node.get("items")
    if isinstance(items, dict) and "$ref" not in items and (inner := allowed_text(items)):
        parts.append(f"each: {inner}")
    return "; ".join(parts)


def default_of(defaults: dict, path: str) -> Any:
    """The value at ``path`` in the embedded default config, or MISSING (no value for ``{name}`` or ``[]`` paths)."""
    value: Any = defaults
    for part in path.split("."):
        if "{" in part or "[" in part or not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def _code(value: Any) -> str:
    """Inline code for a table cell: HTML, since a Markdown table splits on every ``|``, code spans included."""
    text = value if isinstance(value, str) else json.dumps(value)
    # Markdown still reads emphasis, escapes and links inside inline HTML: entities keep them literal.
    literal = _cell(text).translate({ord(c): f"&#{ord(c)};" for c in "*_\\[]`"})
    return "<code>" + literal + "</code>"


def _cell(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "&#124;").replace("\n", " ")


def reference_markdown(schema: dict, defaults: dict) -> str:
    """The configuration reference page (Markdown): one section and table per top-level key."""
    keys = schema_keys(schema)
    lines = [
        "# Configuration reference",
        "",
        "Generated from `schemas/config.schema.yaml` when the site is built (`docs/hooks.py`); the",
        "default column is the embedded default, `config.yaml`. A key marked **required** must be",
        "present in the merged config (`config.yaml` holds every one); a misspelt key or a wrong",
        "type stops the run before any job with a message naming the key. `{name}` stands for a",
        "model's name under `models`; `[]` for each item of a list.",
        "",
    ]
    for top in [k for k in keys if "." not in k.path]:
        lines += [f"## `{top.path}`", "", _cell(top.node.get("description", "")), ""]
        lines += ["| key | type | default | allowed | description |", "|---|---|---|---|---|"]
        for key in [top] + [k for k in keys if k.path.startswith(top.path + ".")]:
            default = default_of(defaults, key.path)
            shown = "" if default is MISSING or isinstance(default, dict) and default else _code(default)
            name = f"`{key.path}`" + (" **required**" if key.required else "")
            lines.append(
                f"| {name} | {_cell(type_text(key.node))} | {shown} | {allowed_text(key.node)} | {_cell(key.node.get('description', ''))} |"
            )
        lines.append("")
    return "\n".join(lines)
