"""The record model end to end: where catalogues live, which files are records, how they load.

Every feature (search, site, TUI, check, commands) imports this front door, never its modules.
Locating a catalogue and hashing it (``_locate``) is plain standard library and loads eagerly,
so `kb search` can check its cache without pydantic or YAML; every other name is loaded on
first use (PEP 562), which keeps that path light.
"""

from __future__ import annotations

from .._lazy import lazy_names
from ._locate import (
    AREA_FILE,
    ENV_VAR,
    LAYER_FILE,
    MAX_RECORD_BYTES,
    RECORD_SUFFIXES,
    PathList,
    bundled_folder,
    catalogue_digest,
    find_catalogue,
    find_catalogues,
    find_reports,
    is_layer,
    layers_digest,
    record_files,
    shipped_folder,
)

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from ._jsonschema import MODELINE, SCHEMA_FILE, TODO, render_schema
    from ._layers import LayerFile, layer_name, layer_reports, load_layers
    from ._loader import Backlink, Catalogue, load_catalogue, validation_problems
    from ._mutation import apply_mutation, mutation_problems
    from ._regexsafety import backtracking_risk, nested_quantifier, scoped_flags
    from ._reports import (
        REPORT_FORMAT,
        REPORT_VERSION,
        CheckReport,
        CheckStatus,
        ReportedResult,
        ReportRow,
        VerificationMatrix,
        load_verification,
        read_report,
        torch_release,
    )
    from ._schema import (
        ENTRY_ID_PATTERN,
        RELATION_LABELS,
        Area,
        AreasFile,
        Check,
        Entry,
        ExpectHangs,
        ExpectRaises,
        ExpectWarns,
        ExternalPointer,
        Link,
        Mutation,
        Reference,
        Relation,
        Requires,
        Section,
        Signature,
        Tell,
        TellCompare,
        TellCondition,
        VersionNote,
    )
    from ._yamlio import Located, YamlProblem, dotted, load_yaml

# name -> the private module that defines it, imported on first access
_LAZY = {
    **dict.fromkeys(["MODELINE", "SCHEMA_FILE", "TODO", "render_schema"], "_jsonschema"),
    **dict.fromkeys(["LayerFile", "layer_name", "layer_reports", "load_layers"], "_layers"),
    **dict.fromkeys(["Backlink", "Catalogue", "load_catalogue", "validation_problems"], "_loader"),
    **dict.fromkeys(["apply_mutation", "mutation_problems"], "_mutation"),
    **dict.fromkeys(["backtracking_risk", "nested_quantifier", "scoped_flags"], "_regexsafety"),
    **dict.fromkeys(
        [
            "REPORT_FORMAT",
            "REPORT_VERSION",
            "CheckReport",
            "CheckStatus",
            "ReportRow",
            "ReportedResult",
            "VerificationMatrix",
            "load_verification",
            "read_report",
            "torch_release",
        ],
        "_reports",
    ),
    **dict.fromkeys(
        [
            "ENTRY_ID_PATTERN",
            "RELATION_LABELS",
            "Area",
            "AreasFile",
            "Check",
            "Entry",
            "ExpectHangs",
            "ExpectRaises",
            "ExpectWarns",
            "ExternalPointer",
            "Link",
            "Mutation",
            "Reference",
            "Relation",
            "Requires",
            "Section",
            "Signature",
            "Tell",
            "TellCompare",
            "TellCondition",
            "VersionNote",
        ],
        "_schema",
    ),
    **dict.fromkeys(["Located", "YamlProblem", "dotted", "load_yaml"], "_yamlio"),
}

__all__ = [
    "AREA_FILE",
    "ENTRY_ID_PATTERN",
    "ENV_VAR",
    "LAYER_FILE",
    "MAX_RECORD_BYTES",
    "MODELINE",
    "RECORD_SUFFIXES",
    "RELATION_LABELS",
    "REPORT_FORMAT",
    "REPORT_VERSION",
    "SCHEMA_FILE",
    "TODO",
    "Area",
    "AreasFile",
    "Backlink",
    "Catalogue",
    "Check",
    "CheckReport",
    "CheckStatus",
    "Entry",
    "ExpectHangs",
    "ExpectRaises",
    "ExpectWarns",
    "ExternalPointer",
    "LayerFile",
    "Link",
    "Located",
    "Mutation",
    "PathList",
    "Reference",
    "Relation",
    "ReportRow",
    "ReportedResult",
    "Requires",
    "Section",
    "Signature",
    "Tell",
    "TellCompare",
    "TellCondition",
    "VerificationMatrix",
    "VersionNote",
    "YamlProblem",
    "apply_mutation",
    "backtracking_risk",
    "bundled_folder",
    "catalogue_digest",
    "dotted",
    "find_catalogue",
    "find_catalogues",
    "find_reports",
    "is_layer",
    "layer_name",
    "layer_reports",
    "layers_digest",
    "load_catalogue",
    "load_layers",
    "load_verification",
    "load_yaml",
    "mutation_problems",
    "nested_quantifier",
    "read_report",
    "record_files",
    "render_schema",
    "scoped_flags",
    "shipped_folder",
    "torch_release",
    "validation_problems",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
