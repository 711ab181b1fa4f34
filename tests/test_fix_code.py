"""Every ```python block in a real record's fix is valid Python: the TUI's `c` copies it as it stands (`kb lint`'s
fix-code rule says the same for any catalogue)."""

from __future__ import annotations

from markdown_it import MarkdownIt

from trainkb.catalogue import find_catalogue, load_catalogue


def test_python_blocks_in_every_fix_compile():
    broken = []
    parser = MarkdownIt("commonmark")
    for entry in load_catalogue(find_catalogue()).ordered():
        blocks = [t.content for t in parser.parse(entry.fix) if t.type == "fence" and t.info.split()[:1] == ["python"]]
        for number, code in enumerate(blocks):
            try:
                compile(code, f"{entry.id} fix block {number}", "exec")
            except SyntaxError as exc:
                broken.append(f"{entry.id} block {number}: {exc}")
    assert broken == []
