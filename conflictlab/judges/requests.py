"""A judge request and the strict reading of its reply.

A request is a chat conversation plus the shape of the reply:

* **closed** (``fields`` and ``options``): the reply is
  ``{"<field 1>": "<option>", "<field 2>": "<option>", ...}``, one verdict per
  field (the RAGAS verdicts of all a response's statements, the ratings of all
  a sample's evidence pieces: one prompt, read once). In process each option
  is read from next-token logits after the reply so far, field by field
  (:class:`conflictlab.judges.backends.HFJudge`); guided backends decode under
  the JSON schema :meth:`JudgeRequest.schema` (an enum per field). Either way
  every verdict is one of the options, unless a guided reply was cut, which
  :func:`read_choices` records as unreadable (None).
* **free JSON** (``reply_schema``): in process the model continues the
  prefilled ``prefix``; guided backends decode under the schema. The metric
  that asked parses the reply strictly.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass


@dataclass(frozen=True)
class JudgeRequest:
    template: str  # versioned template name, part of the cache key
    messages: tuple[tuple[str, str], ...]  # (role, content)
    fields: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    reply_schema: str | None = None  # JSON text of a JSON Schema (free JSON replies)
    prefix: str = ""  # free JSON: the reply's prefilled start in process
    max_new_tokens: int = 16  # free JSON replies (closed ones: backends.reply_budget)

    def __post_init__(self):
        closed = bool(self.fields)
        if closed == (self.reply_schema is not None):
            raise ValueError(f"judge request {self.template}: give either fields and options or reply_schema")
        if closed and len(set(self.fields)) < len(self.fields):
            raise ValueError(f"judge request {self.template}: repeated field names {self.fields}")
        if closed and len(set(self.options)) < 2:
            raise ValueError(f"judge request {self.template}: a closed verdict needs at least two distinct options")

    @property
    def closed(self) -> bool:
        return bool(self.fields)

    def conversation(self) -> list[dict]:
        return [{"role": role, "content": content} for role, content in self.messages]

    def schema(self) -> dict:
        if not self.closed:
            return json.loads(self.reply_schema)
        return {
            "type": "object",
            "properties": {field: {"type": "string", "enum": list(self.options)} for field in self.fields},
            "required": list(self.fields),
            "additionalProperties": False,
        }

    def field_opening(self, index: int) -> str:
        """A closed reply's text before the option of field ``index``."""
        return ("{" if index == 0 else '", ') + f'"{self.fields[index]}": "'

    def key(self) -> str:
        """Hash of everything that determines the reply (template, inputs, shape)."""
        payload = json.dumps(
            [
                self.template,
                self.messages,
                self.fields,
                self.options,
                self.reply_schema,
                self.prefix,
                self.max_new_tokens,
            ],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode()).hexdigest()


def closed_reply(request: JudgeRequest, options: list[str]) -> str:
    """The reply text of closed verdicts read from logits (the guided backends' shape)."""
    return json.dumps(dict(zip(request.fields, options, strict=True)))


def read_choices(request: JudgeRequest, reply: str) -> list[str | None]:
    """Per field, the option a closed reply gives it, or None where the reply
    is not a JSON object or the field is missing or not one of the options
    (callers count those as unparseable)."""
    value = read_json_object(reply) or {}
    found = [value.get(field) for field in request.fields]
    return [option if isinstance(option, str) and option in request.options else None for option in found]


def read_json_object(reply: str) -> dict | None:
    """A reply that is exactly one JSON object, else None."""
    try:
        value = json.loads(reply)
    except (json.JSONDecodeError, TypeError):
        return None
    return value if isinstance(value, dict) else None
