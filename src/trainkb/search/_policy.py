"""The rules search ranks by: every weight, threshold, cap and word list, declared once as frozen objects.

``kb search`` runs these objects (_input.py, _normalize.py, _score.py, _search.py);
``trainkb.search.contract`` serialises every field of ``PASTE``, ``WORDS``, ``SCORE`` and ``ANSWER``
under its upper-cased name into the site's search index (a regex, or a table of them, with the
patterns; anything else with the constants), where site/static/engine.js reads them. ``SIGNATURES``
is read once per catalogue build: the contract ships what it computes (each signature's specificity
and ambiguity), not the rule.
A retuned value reaches the browser at the next build, and the JavaScript holds no copy to drift.
tests/search/test_search_constants.py holds the relations between the values that the answers rely on.
Each class is built at every start of ``kb search``: it is frozen and has only the methods used (no
generated equality or repr, which would cost start-up time for nothing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "ANSWER",
    "FILE_TYPES",
    "PASTE",
    "SCORE",
    "SIGNATURES",
    "WORDS",
    "AnswerRules",
    "PasteRules",
    "ScoreRules",
    "SignatureRules",
    "WordRules",
]


@dataclass(frozen=True, eq=False, repr=False, match_args=False)
class PasteRules:
    """How a paste is cleaned and read: its limits, the regexes that find messages, frames and context lines,
    and the weight of each kind of message."""

    # THE paste limit: what search reads of a paste, its tail (tracebacks end at the bottom). The TUI's paste
    # box keeps as much; readers of pipes and files keep more bytes (_tail.PIPE_TAIL_BYTES), for triage.
    max_chars: int
    max_lines: int
    max_output_chars: int  # what tells read of a whole output (its tail): a pipe's or a run's kept tail
    max_line_chars: int  # bound on what any regex or fuzzy comparison sees of one line
    max_continuation: int  # lines a multi-line exception message may run on
    newline_search: int  # characters past a cut searched for a line start, so the tail begins on a whole line
    max_prefixes: int  # "[rank0]: │ > text" stacks prefixes; so does "Epoch 2:  0%|  | 6/85 [00:10<…][rank1]:text"
    root_cause_lines: int  # lines after "Root Cause" searched for its rank and traceback fields
    sentence_words: int  # words that make a plain line a sentence of prose
    failure_weight: float  # an exception of the last traceback chain (of the root-cause rank): the failure
    other_weight: float  # any other exception or warning
    wrapper_weight: float  # a wrapper that only relays another exception (ChildFailedError, "Caught X in ...")
    min_dump_items: int  # items in one line that make it a dump, not a remark about one setting
    raw_line_chars: int  # what a raw line is cut to before escapes and prefixes are removed from it
    min_options: int  # command-line options that make a line a command line
    wrapper_types: frozenset[str]  # exception types that only relay another one (a launcher's summary)
    warning_suffix: str  # an exception type ending in this is a warning
    what_type: str  # the type given to the message of a C++ exception's "what():" line
    nccl_type: str  # the type given to the message of torch's "NCCL error in:" line
    quotes: str  # stripped from the end of a message quoted inline
    no_traceback: str  # a torchrun summary's traceback field holding this names no traceback
    between_words: str  # a character that stands between words (NUL: a padded or binary field), read as a space
    code_quotes: str  # stripped from both ends of a line before it is read as an exception: a message pasted as code
    runs_on: str  # a message ending in this continues on the lines below it
    ansi: re.Pattern[str]
    control: re.Pattern[str]
    prefix: re.Pattern[str]
    box: re.Pattern[str]
    tb_header: re.Pattern[str]
    frame: re.Pattern[str]
    frame_start: re.Pattern[str]
    chain: re.Pattern[str]
    nccl_line: re.Pattern[str]
    exc_line: re.Pattern[str]
    warn_line: re.Pattern[str]
    what: re.Pattern[str]
    exc_inline: re.Pattern[str]
    wrapper: re.Pattern[str]
    root_cause: re.Pattern[str]
    launcher_failed: re.Pattern[str]
    field: re.Pattern[str]
    loggy: re.Pattern[str]
    sentence: re.Pattern[str]
    progress: re.Pattern[str]
    command: re.Pattern[str]
    option: re.Pattern[str]
    dump_item: re.Pattern[str]
    dump_start: re.Pattern[str]
    setting: re.Pattern[str]
    environment: re.Pattern[str]


@dataclass(frozen=True, eq=False, repr=False, match_args=False)
class WordRules:
    """How text becomes search terms: the words left out and the crude stemmer."""

    # (placeholder, pattern) in application order: the variable parts of a line (numbers, shapes, paths,
    # ranks, ports) masked so that two pastes of one failure compare equal; the first two are locations
    masks: tuple[tuple[str, re.Pattern[str]], ...]
    spaces: re.Pattern[str]  # collapsed to one space
    number: re.Pattern[str]  # a whole number, as a signature spells one out
    word: re.Pattern[str]  # a word of lower-cased text: a search term before stemming
    token: re.Pattern[str]  # a word of a message's fixed wording (content_words)
    stop: frozenset[str]  # words too common to tell failures apart
    stem_suffixes: tuple[str, ...]  # stripped in this order, the first that ends the word (a longer one first)
    stem_keep_chars: int  # a word this long or shorter is kept whole
    stem_min_chars: int  # characters a stem keeps at least: a suffix that would leave fewer stays
    part_min_chars: int  # characters an identifier's ``_``-separated part needs to be a term of its own
    named_chars: int  # letters before its trailing digits that make a word a name ('SqrtBackward0'), not a variable


@dataclass(frozen=True, eq=False, repr=False, match_args=False)
class SignatureRules:
    """How surely one signature or alias names its failure: computed once per catalogue build."""

    brevity_base: float  # a signature or alias of n characters counts min(1, base + n / chars)
    brevity_chars: int
    shared_discount: float  # per other entry whose examples a signature also matches, up to a cap
    max_shared: int
    ambiguous_reports: int  # public failure reports printing a message that make it a symptom of many causes
    ambiguous_shared: int  # other entries whose examples a signature matches that make it a family's, not a cause's
    ambiguous_family: int  # entries carrying the very same pattern that make it a family's, not a cause's


@dataclass(frozen=True, eq=False, repr=False, match_args=False)
class ScoreRules:
    """How signature hits, fuzzy alignments and prose become one 0-100 score per entry."""

    max_hits_per_sig: int
    exact_strength: float  # an exact hit of a long, unique signature on the failure line, before the type bonus
    fuzzy_strength: float  # a perfect, complete fuzzy alignment on the failure line
    type_bonus: float  # the signature's exception type is the message's
    min_fuzzy_chars: int  # a masked message shorter than this is not aligned
    min_shared_terms: int  # words a line must share with a signature before alignment: at least this many
    shared_terms_share: float  # ... and at least this share of the signature's words
    min_line_chars: int  # a plain (non-message) line shorter than this is not aligned
    max_term_repeats: int  # repeats of a word that still raise its BM25 weight (by the square root)
    full_alias_words: int  # a title or alias of fewer words covers the paste proportionally less
    min_alias_words: int  # a title or alias of fewer words is no coverage at all (one word is a topic)
    prose_saturation: float  # BM25 strength at which prose evidence reaches 1 - 1/e of its range
    bm25_share: float  # the prose score's blend of relative BM25 ...
    cover_share: float  # ... and title/alias coverage
    extra_signature: float  # added per further distinct signature that hit the same entry
    other_kind_share: float  # share of the weaker kind of evidence added to the stronger
    max_evidence: int  # evidence items kept per entry
    substitution_penalty: float  # a fuzzy alignment whose windows trade content words is a sibling message
    fuzzy_floor: int  # partial_ratio below this is noise for messages of ordinary length
    prose_candidates: int  # entries scored by prose: the best BM25 matches
    max_query_terms: int  # rarest words of the paste given to BM25
    alias_strength: float  # an alias found verbatim in a failure message: below an exact signature hit
    known_failure: float  # signature strength on the failure message that makes it a known failure
    some_evidence: float  # below this, evidence cannot lift an unknown failure's entry above the cap
    max_text_segments: int  # plain lines aligned against signatures (the last ones of a long log)
    max_message_segments: int  # exception messages aligned against signatures (the last ones)
    unknown_error_cap: float  # score without real evidence when the failure message matched no signature
    excluded_cap: float  # score of an entry whose excludes the paste holds: listed, never an answer
    ambiguous_share: float  # what a hit of a message many causes print is worth alone
    # A paste of many distinct words that the catalogue's records mostly never use (random bytes, a
    # hash dump, a foreign log) is noise: its chance overlaps with titles and aliases are not evidence.
    # Words shorter than noise_min_chars are left out of the count: any byte soup holds most single
    # letters. Real pastes: >= 50% known.
    noise_min_terms: int
    noise_known_share: float
    noise_min_chars: int
    role_weight: Mapping[str, float]  # a line's weight by its role, when it belongs to no exception message


@dataclass(frozen=True, eq=False, repr=False, match_args=False)
class AnswerRules:
    """How scores become confidence bands and one of the three answers."""

    high: float  # score threshold of "high"
    medium: float  # ... of "medium"; below it is low
    signature_lead: float  # lead over the runner-up that "high" also needs
    min_score: float  # below this an entry shares no more than a stray word with the paste
    why_chars: int  # characters of the vouching line quoted in ``why``
    why_vouched: str  # an answer's why, when a cause-naming line made it
    min_candidates: int  # a differential weighs causes against each other: one known cause alone is no differential
    max_candidates: int  # entries a differential lists: more is a reading list, not a diagnosis


FILE_TYPES = "py|cpp|cu|cc|h|hpp|so|pth|pt|ckpt|bin|safetensors|json|yaml|yml"  # a bare file name's extensions
# (placeholder, pattern) in application order: wider constructs first, so a path's
# digits or a shape's numbers are not masked piecemeal.
_MASKS = (
    ("<url>", re.compile(r"\b(?:https?|file)://\S+")),
    (
        "<path>",
        re.compile(
            r"(?:\b[A-Za-z]:)?(?:[\\/][\w.\-~@+]+){2,}[\\/]?|"
            # one start per run of name characters: "\b" would let every "a" of "a.a.a..." start
            # a match that rescans the rest of the run (quadratic in the run's length)
            rf"(?<![\w.\-])[\w.\-]+\.(?:{FILE_TYPES})\b"
        ),
    ),
    ("<addr>", re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\[::\d*\](?::\d+)?|\blocalhost:\d+")),
    ("<hex>", re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{12,}\b")),
    (
        "<shape>",
        re.compile(
            r"torch\.Size\(\[[^\]]*\]\)|\[\s*\d+(?:\s*,\s*\d+)+\s*\]|"
            r"\(\s*\d+(?:\s*,\s*\d+)+\s*,?\s*\)"
        ),
    ),
    ("<size>", re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGT]i?B|bytes|[kmgt]b)\b")),
    (
        "<time>",
        re.compile(
            r"\b\d{1,4}[-/]\d{1,2}[-/]\d{1,4}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?\b|"
            r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
        ),
    ),
    ("pid <num>", re.compile(r"\bpid\s*[:=]?\s*\d+", re.IGNORECASE)),
    ("rank <num>", re.compile(r"\brank\s*[:=]?\s*\d+", re.IGNORECASE)),
    ("port <num>", re.compile(r"\bport\s*[:=]?\s*\d+", re.IGNORECASE)),
    ("<num>", re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])", re.IGNORECASE)),
)


WORDS = WordRules(
    masks=_MASKS,
    spaces=re.compile(r"\s+"),
    number=re.compile(r"(?<![\w.])\d+(?![\w.])"),
    word=re.compile(r"[a-z][a-z0-9_]*[a-z0-9]|[a-z]"),
    token=re.compile(r"[a-z0-9_]+"),
    stop=frozenset(
        [
            "a",
            "an",
            "and",
            "are",
            "as",
            "at",
            "be",
            "been",
            "but",
            "by",
            "can",
            "could",
            "did",
            "do",
            "does",
            "doing",
            "for",
            "from",
            "get",
            "got",
            "had",
            "has",
            "have",
            "how",
            "i",
            "if",
            "in",
            "into",
            "is",
            "it",
            "its",
            "me",
            "my",
            "no",
            "not",
            "of",
            "on",
            "or",
            "our",
            "please",
            "so",
            "some",
            "than",
            "that",
            "the",
            "their",
            "then",
            "there",
            "these",
            "this",
            "those",
            "to",
            "too",
            "was",
            "we",
            "were",
            "what",
            "when",
            "where",
            "which",
            "while",
            "who",
            "why",
            "will",
            "with",
            "would",
            "you",
            "your",
            "after",
            "before",
            "also",
            "any",
            "just",
            "only",
            "very",
            "all",
            "one",
            "two",
            "use",
            "used",
            "using",
            "try",
            "tried",
            "run",
            "running",
            "same",
            "other",
            "more",
            "most",
            "here",
            "out",
            "up",
            "about",
        ]
    ),
    stem_suffixes=("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s", "e"),
    stem_keep_chars=4,
    stem_min_chars=4,
    part_min_chars=3,
    named_chars=8,
)

SIGNATURES = SignatureRules(
    brevity_base=0.75,
    brevity_chars=160,
    shared_discount=0.06,
    max_shared=3,
    ambiguous_reports=2,
    ambiguous_shared=3,
    ambiguous_family=3,
)

SCORE = ScoreRules(
    max_hits_per_sig=3,
    exact_strength=96.0,
    fuzzy_strength=90.0,
    type_bonus=3.0,
    min_fuzzy_chars=12,
    min_shared_terms=2,
    shared_terms_share=0.5,
    min_line_chars=16,
    max_term_repeats=4,
    full_alias_words=4,
    min_alias_words=2,
    prose_saturation=16.0,
    bm25_share=0.55,
    cover_share=0.45,
    extra_signature=2.0,
    other_kind_share=0.12,
    max_evidence=5,
    substitution_penalty=0.4,
    fuzzy_floor=72,
    prose_candidates=40,
    max_query_terms=64,
    alias_strength=78.0,
    known_failure=60.0,
    some_evidence=40.0,
    max_text_segments=300,
    max_message_segments=200,
    unknown_error_cap=52.0,
    excluded_cap=25.0,
    ambiguous_share=0.45,
    noise_min_terms=8,
    noise_known_share=0.3,
    noise_min_chars=2,
    role_weight=MappingProxyType({"message": 0.9, "text": 0.85, "header": 0.6, "frame": 0.6}),
)

ANSWER = AnswerRules(
    high=75.0,
    medium=55.0,
    signature_lead=3.0,
    min_score=1.0,
    why_chars=120,
    why_vouched="only this cause prints `{matched}`",
    min_candidates=2,
    max_candidates=5,
)

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# group 1: a rank tag; group 2: a tqdm bar the message was printed after on the same line (kept when alone)
_PREFIX = re.compile(
    r"^\s*\[(?:rank|default)\s*(\d+)\]\s*:\s?|^\s*(?:>\s?)+|^\s*[│┃|]\s?"
    r"|^([^|\n]*?\d+%\|[^|\n]*\|\s*\d+/\d+\s*\[[^\]\n]*\]\s*)"
)
_BOX = re.compile(r"^[\s│┃╭╮╰╯─━┌┐└┘]+|[\s│┃╭╮╰╯─━┌┐└┘]+$")

# a Python traceback, or the C++ backtrace c10 prints under a torch error ("Exception raised from ...")
_TB_HEADER = re.compile(r"Traceback \(most recent call last\)|\(most recent call first\):")
_FRAME = re.compile(  # a Python frame, an IPython frame or numbered source line, a caret marker line, a rich frame
    r'^\s*File "[^"]*", line \d+|^\s*(?:-+>\s*|❱\s*)?\d+\s|^\S+\.py in \S+\(|^<ipython-input-|^\s*\.\.\.$|'
    r"^\s*[~^]{3,}\s*$|^\S*\.py:\d+ in \S+$|^frame #\d+: "
)
_FRAME_START = re.compile(r'^\s*File "[^"]*", line \d+, in |^\S+\.py in \S+\(|^\S*\.py:\d+ in \S+$|^frame #\d+: ')
_CHAIN = re.compile(r"During handling of the above exception|The above exception was the direct cause")
_TYPE = (
    r"(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Warning|Interrupt|Exit|Fault|Failure)|KeyboardInterrupt|"
    r"StopIteration|nccl[A-Z]\w*Error)"
)
# torch's NCCL check prints "NCCL error in: <file>:<line>, <message>" with no exception class of its own
_NCCL_LINE = re.compile(r"\bNCCL error in: [^,]*, (?P<msg>\S.*)$")
_EXC_LINE = re.compile(rf"^(?P<type>{_TYPE})(?::\s*(?P<msg>.*))?$")
_WARN_LINE = re.compile(rf"^\S+:\d+:\s*(?P<type>{_TYPE}):\s*(?P<msg>.*)$")
# a C++ exception that ended the process: "terminate called after throwing an instance of 'c10::Error'"
# is followed by "  what():  <message>"
_WHAT = re.compile(r"^what\(\):\s+(?P<msg>\S.*)$")
_EXC_INLINE = re.compile(rf"(?<![\w.])(?P<type>{_TYPE}):\s+(?P<msg>\S.*)$")
_WRAPPER = re.compile(r"^Caught \w+ in (?:DataLoader worker process|replica) \d+|^\s*$")
_ROOT_CAUSE = re.compile(r"Root Cause \(first observed failure\)")
_LAUNCHER_FAILED = re.compile(r"elastic\.multiprocessing\.api:failed \(exitcode: -?\d+\)")
_FIELD = re.compile(r"^\s*(rank|exitcode|traceback)\s*:\s*(.*)$")
_LOGGY = re.compile(
    r"^\[?[EWIF]\d{4}|^\[?\d{4}-\d\d-\d\d|^(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b|NCCL|ProcessGroup|"
    r"\bKilled\b|Bus error|Segmentation fault|core dumped|\bexitcode\b|^\*{5,}|^[=\-]{10,}|^\s*\w[\w.]*:\d+:",
)
_SENTENCE = re.compile(r"[A-Za-z]{2,}")
# Context, not symptoms: what the user pasted around the failure to describe their set-up. These lines
# name options and packages that many entries mention, so they are kept out of the prose model and the
# fuzzy alignment (exact signatures still see them).
_PROGRESS = re.compile(r"\d+%\|.*\||\|\s*\d+/\d+\s*\[|\d\s*(?:it/s|s/it)\b")  # tqdm and similar progress bars
_COMMAND = re.compile(  # a shell command line, possibly behind a prompt and environment assignments
    r"^\s*(?:[$#>]\s*|\(\S+\)\s*(?:\S+[$#]\s*)?|\S+@\S+[$#]\s*)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
    r"(?:python[\d.]*|torchrun|accelerate|deepspeed|srun|sbatch|mpirun|bash|sh|llamafactory-cli|tune|"
    r"lightning|composer|CUDA_VISIBLE_DEVICES=\S*)\s+\S|\s\\$"
)
_OPTION = re.compile(r"(?:^|\s)--[A-Za-z][\w.\-]*")  # a command-line option; two or more make a command line
# an item of a configuration or key list dumped into a line: `num_processes: 4`, 'loss.beta=0.1', 'encoder.bn.weight'
# (keys and values are bounded: an unbounded key would rescan a long dotted line from every letter)
_DUMP_ITEM = re.compile(
    r"(?<![\w.\-])[A-Za-z_][\w.\-]{0,79}\s{0,3}[:=]\s{0,3}[^\s,;)\]'\"]{1,200}|"
    r"['\"][\w\-]{1,80}(?:\.[\w\-]{1,80}){1,40}['\"]"
)
_DUMP_START = re.compile(r"^\s*(?:Namespace|\w*(?:Config|Arguments|Args))\(")  # a printed arguments object
_SETTING = re.compile(  # one configuration setting: `key: value` (YAML), `"key": value,` (JSON), `- key: value`
    r"^\s*(?:[-*]\s+)?[\"'`]?[A-Za-z_][\w.\-]*[\"'`]?\s*:(?!\s*[\"']?[-+]?(?:nan|inf)\b)\s*(?:[^\s(]+)?\s*$",
    re.IGNORECASE,
)
_ENVIRONMENT = re.compile(  # `pip list` rows, `transformers-cli env` / `collect_env` / accelerate env fields
    r"^\s*(?:[-*]\s+)?`?[\w.\-]+`?\s*(?:==|\s{2,}|\s+version:\s*)v?\d+(?:\.\d+)+\S*\s*$|"
    r"^\s*(?:[-*]\s+)?`?(?:Platform|Python|PyTorch|Torch|CUDA|cuDNN|CUDNN|Nvidia driver|GPU models?|OS|"
    r"Is CUDA available|Is debug build|GCC|Clang|CMake|Libc|Numpy|NumPy|DeepSpeed|Accelerate|Transformers|"
    r"Huggingface_hub|Safetensors|PEFT|TRL|Jax|JaxLib|Tensorflow|Flax|Using GPU in script|"
    r"Using distributed or parallel set-up in script|`[\w\-]+`)\b[^:]{0,40}:"
)

PASTE = PasteRules(
    max_chars=200_000,
    max_lines=5_000,
    max_output_chars=4 * 1024 * 1024,
    max_line_chars=2_000,
    max_continuation=30,
    newline_search=2_000,
    max_prefixes=3,
    root_cause_lines=14,
    sentence_words=6,
    failure_weight=1.0,
    other_weight=0.9,
    wrapper_weight=0.5,
    min_dump_items=3,
    raw_line_chars=4_000,
    min_options=2,
    wrapper_types=frozenset({"ChildFailedError"}),
    warning_suffix="Warning",
    what_type="c10::Error",
    nccl_type="NCCLError",
    quotes="`'\"",
    no_traceback="enable traceback",
    between_words="\x00",
    code_quotes="`",
    runs_on=":",
    ansi=_ANSI,
    control=_CONTROL,
    prefix=_PREFIX,
    box=_BOX,
    tb_header=_TB_HEADER,
    frame=_FRAME,
    frame_start=_FRAME_START,
    chain=_CHAIN,
    nccl_line=_NCCL_LINE,
    exc_line=_EXC_LINE,
    warn_line=_WARN_LINE,
    what=_WHAT,
    exc_inline=_EXC_INLINE,
    wrapper=_WRAPPER,
    root_cause=_ROOT_CAUSE,
    launcher_failed=_LAUNCHER_FAILED,
    field=_FIELD,
    loggy=_LOGGY,
    sentence=_SENTENCE,
    progress=_PROGRESS,
    command=_COMMAND,
    option=_OPTION,
    dump_item=_DUMP_ITEM,
    dump_start=_DUMP_START,
    setting=_SETTING,
    environment=_ENVIRONMENT,
)
