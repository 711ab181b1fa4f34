"""The JSON Schema editors use to validate records while typing (catalogue/schema.json)."""

from __future__ import annotations

import json

from ._schema import Entry

__all__ = ["MODELINE", "SCHEMA_FILE", "TODO", "render_schema"]

SCHEMA_FILE = "schema.json"
MODELINE = "# yaml-language-server: $schema=../schema.json"
TODO = "TODO"  # what `kb new` writes where a person must still write; lint reports each one


def render_schema() -> str:
    """The schema text exactly as it must appear on disk (lint compares byte for byte)."""
    schema = Entry.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "trainkb catalogue entry"
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
