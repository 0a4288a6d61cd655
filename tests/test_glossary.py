"""The Spanish of the course: the glossary, bilingual comments, Spanish notebooks' outputs.

- ``course/glossary.toml`` is the course's glossary; no Spanish prose of a lesson or lab
  source uses a variant it says to avoid.
- A comment that shares its line with code can hold both languages
  (``x = 1  # [en] text  [es] texto``); the build keeps one per language.
- What the cells of the Spanish notebooks print is Spanish or language-free: no English
  sentence of the course's own in a stored output.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import tomllib
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("jupytext")

from test_course import _ENGLISH, _prose  # noqa: E402  (the English-prose heuristic)

from mcpkit.course import source as src  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "course" / "glossary.toml"


def glossary() -> list[dict]:
    with GLOSSARY.open("rb") as f:
        return tomllib.load(f)["term"]


# --------------------------------------------------------------------------- the glossary


def test_the_glossary_is_one_readable_table_of_terms():
    terms = glossary()
    assert len(terms) >= 200
    for term in terms:
        assert set(term) <= {"en", "es", "avoid", "note"}, term
        assert term["en"].strip() and term["es"].strip(), term
        for variant in term.get("avoid", []):
            assert variant.strip() and variant.lower() not in term["es"].lower(), term
    english = [term["en"] for term in terms]
    assert len(english) == len(set(english)), "a term appears twice"


def test_the_glossary_holds_the_terms_decided_across_notebooks():
    spanish = {term["en"]: term["es"] for term in glossary()}
    assert spanish["timeout"] == "tiempo de espera (timeout)"
    assert spanish["command line"] == "línea de comandos"
    assert spanish["helper (function)"] == "función auxiliar"
    assert spanish["caller (of a request)"] == "quien llama"
    assert spanish["source material (the earlier course)"] == "material de origen"
    assert spanish["merge / merged (tools, namespace)"].startswith("fusionar")
    assert spanish["fall back (to the legacy era)"].startswith("recurrir")


def _avoid_pattern(variant: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(variant) + r"(?!\w)", re.IGNORECASE)


def spanish_prose(path: Path) -> list[tuple[int, str]]:
    """(cell number, Spanish text) of a source: its ``es`` markdown and ``[es]`` comments."""
    found = []
    for number, cell in enumerate(src.read_source(path).cells, 1):
        if cell.cell_type == "markdown" and cell.metadata.get("lang") == "es":
            text = cell.source
        elif cell.cell_type == "code":
            spanish = src.localize_code(cell.source, "es")
            english = src.localize_code(cell.source, "en")
            # [es] comments: the comment lines (and comments after code) that differ from English
            text = "\n".join(line for line in spanish.split("\n")
                             if "#" in line and line not in english.split("\n"))
        else:
            continue
        found.append((number, re.sub(r"`[^`\n]*`", " ", text)))  # identifiers stay English
    return found


def sources() -> list[Path]:
    return [s.path for s in src.discover(ROOT / "course")]


def test_spanish_prose_uses_no_variant_the_glossary_says_to_avoid():
    patterns = [(term["en"], variant, _avoid_pattern(variant))
                for term in glossary() for variant in term.get("avoid", [])]
    offenders = []
    for path in sources():
        for number, text in spanish_prose(path):
            for english, variant, pattern in patterns:
                for line in text.split("\n"):
                    if pattern.search(line):
                        offenders.append(f"{path.name}, cell {number}: «{variant}» "
                                         f"(glossary: {english}): {line.strip()}")
    assert offenders == [], "\n".join(offenders)


def test_the_avoid_check_finds_a_variant_in_prose_and_comments_only():
    pattern = _avoid_pattern("tiempo límite")
    assert pattern.search("Sin Tiempo límite, las dos esperarían.")
    assert not pattern.search("un tiempo límite_x")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("Sin tiempo límite `tiempo límite`"),
                nbformat.v4.new_code_cell("x = 1  # [en] no limit  [es] sin tiempo límite\n"
                                          "# [es] otro tiempo límite\ny = 'tiempo límite'")]
    nb.cells[0].metadata["lang"] = "es"
    texts = [text for cell in nb.cells for text in _cell_spanish(cell)]
    assert [len(pattern.findall(t)) for t in texts] == [1, 2]


def _cell_spanish(cell) -> list[str]:
    """spanish_prose() for one cell (the test above builds cells in memory)."""
    if cell.cell_type == "markdown":
        return [re.sub(r"`[^`\n]*`", " ", cell.source)]
    spanish, english = src.localize_code(cell.source, "es"), src.localize_code(cell.source, "en")
    return ["\n".join(line for line in spanish.split("\n")
                      if "#" in line and line not in english.split("\n"))]


# --------------------------------------------------------------------------- inline comments


def test_a_bilingual_comment_after_code_keeps_one_language_per_build():
    code = "\n".join([
        'with open(os.devnull, "w") as log:  # [en] the server\'s stderr  [es] su stderr',
        "    x = 1  # [es] solo en español",
        "y = 2  # [en] only in English",
        "z = 3  # a comment for everyone",
        'w = "# [en] inside a string [es] dentro de una cadena"',
    ])
    assert src.localize_code(code, "en").split("\n") == [
        'with open(os.devnull, "w") as log:  # the server\'s stderr',
        "    x = 1",
        "y = 2  # only in English",
        "z = 3  # a comment for everyone",
        'w = "# [en] inside a string [es] dentro de una cadena"',
    ]
    assert src.localize_code(code, "es").split("\n") == [
        'with open(os.devnull, "w") as log:  # su stderr',
        "    x = 1  # solo en español",
        "y = 2",
        "z = 3  # a comment for everyone",
        'w = "# [en] inside a string [es] dentro de una cadena"',
    ]


def test_a_bilingual_inline_comment_with_an_unknown_or_repeated_language_is_refused():
    with pytest.raises(src.SourceError, match="unknown language"):
        src.localize_code("x = 1  # [en] one  [fr] un", "en", "lesson, cell 3")
    with pytest.raises(src.SourceError, match=r"\[en\] twice"):
        src.localize_code("x = 1  # [en] one  [en] two", "es", "lesson, cell 3")


def test_inline_comments_in_either_language_keep_the_builds_in_parity():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1  # [en] one  [es] uno\nprint(x)  # shown")]
    per_lang = {lang: src.render(nb, "t", lang, "lesson", "lesson") for lang in src.LANGS}
    src.check_parity(per_lang, "t")  # does not raise
    assert per_lang["en"].cells[0].source.startswith("x = 1  # one")
    assert per_lang["es"].cells[0].source.startswith("x = 1  # uno")
    other = nbformat.v4.new_notebook()
    other.cells = [nbformat.v4.new_code_cell("x = 2  # [en] one  [es] uno\nprint(x)  # shown")]
    with pytest.raises(src.SourceError, match="differs"):
        src.check_parity({"en": per_lang["en"],
                          "es": src.render(other, "t", "es", "lesson", "lesson")}, "t")


def test_no_source_leaves_a_language_marker_in_a_built_cell():
    for path in sources():
        nb = src.read_source(path)
        for lang in src.LANGS:
            for cell in src.render(nb, path.stem, lang, "solution", "lab").cells \
                    if "/labs/" in path.as_posix() else \
                    src.render(nb, path.stem, lang, "lesson", "lesson").cells:
                if cell.cell_type == "code":
                    assert not re.search(r"#.*\[(en|es)\] ", cell.source), (path.name, cell.id)


# --------------------------------------------------------------------------- outputs

#: Sentences that peers and libraries print, kept as they are (the notebooks show real
#: messages): protocol error messages, server data, mcpkit's own log and exception text, and
#: what a model reads (tool descriptions, a system prompt, tool results), which stays English.
PEER_TEXT = (
    "the server closed the connection",  # mcpkit.client: ConnectionClosed, host events
    "is hidden by the one of server",  # mcpkit.host: a first-wins warning
    "is offered by both server",  # mcpkit.host.NameCollision
    "must be a non-empty string",  # mcpkit.host.load_config
    "is not in this server's verb list",  # the verbs server's tool error (lesson 04)
    "Session not found",  # mcpkit's HTTP server: a legacy session that is gone
    "is not allowed (DNS rebinding",  # mcpkit's Guard refusing a Host or Origin
    "The sum of 2 and 3 is 5.",  # server-everything's answer (lesson 09)
    "Review this note",  # the notes server's prompt, as the SDK port returns it
    "<IMPORTANT>",  # lesson 10: a poisoned tool description
    "Always read notes/plan.md first",  # lesson 10: a rug-pulled tool description
    "You help with notes and files.",  # lesson 10: the system prompt sent to a model API
    "Sorry, I could not tidy up.",  # lesson 10: the scripted model's last answer
    '"a" and "b" must be numbers',  # lesson 03: a handler's JSON-RPC error message
    'a response needs exactly one of "result" and "error"',  # lab 02: an error message
)
#: A line of a model conversation (lesson 10): what the model and the host said to each other.
CONVERSATION = re.compile(r"^(user|assistant)\s+(tool_result|tool_use|text)\b")


def _output_lines(cell) -> list[str]:
    lines = []
    for out in cell.get("outputs", []):
        texts = [out.get("text", "")]
        texts += [v for k, v in out.get("data", {}).items()
                  if k.startswith("text/") and isinstance(v, str) and k != "text/html"]
        if out.get("output_type") == "error":
            texts.append(out.get("evalue", ""))
        lines += [line for text in texts for line in text.split("\n")]
    return lines


def _quoted_removed(line: str) -> str:
    """The line without quoted strings: JSON, reprs and bytes are data, not our sentences."""
    line = re.sub(r'b?"(?:[^"\\]|\\.)*"', " ", line)
    return re.sub(r"b?'(?:[^'\\]|\\.)*'", " ", line)


def english_sentence(line: str) -> bool:
    """Whether an output line reads as an English sentence (the prose heuristic)."""
    if any(text in line for text in PEER_TEXT) or CONVERSATION.match(line):
        return False
    words = re.findall(r"[^\W\d_]+", _prose(_quoted_removed(line)).lower())
    return len([w for w in words if w in _ENGLISH]) >= 2


def test_the_output_heuristic_tells_a_sentence_from_data():
    assert english_sentence("(nothing: the child is stuck writing to stderr)")
    assert english_sentence("bytes sent:     812 legacy, 402 modern") is False  # no sentence
    assert english_sentence("TimeoutError: the reader was waiting for itself")
    assert not english_sentence("{'code': -32602, 'message': 'the a is not of the b'}")
    assert not english_sentence('data: {"data":"counting the words of 13 characters"}')
    assert not english_sentence("(nada: el hijo está bloqueado escribiendo en stderr)")


@pytest.mark.parametrize("tree", ["notebooks", "solutions"])
def test_spanish_notebooks_print_no_english_sentence_of_ours(tree):
    offenders = []
    for path in sorted((ROOT / tree / "es").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            offenders += [f"{path.name} {cell.id}: {line}" for line in _output_lines(cell)
                          if english_sentence(line)]
    assert offenders == [], "\n".join(offenders)


def english_literals(path: Path) -> set[str]:
    """The one-line string literals of a source's code that read as English sentences.

    These are the course's own sentences: in a Spanish notebook they must go through
    ``grading._`` (whose English half then never prints) or not be printed at all.
    """
    found = set()
    for cell in src.read_source(path).cells:
        if cell.cell_type != "code":
            continue
        code = src.localize_code(cell.source, "en")
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            continue
        for token in tokens:
            if token.type != tokenize.STRING or token.string[:1] in "fFbB":
                continue
            try:
                value = ast.literal_eval(token.string)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str) and "\n" not in value.strip() and english_sentence(value):
                found.add(value.strip())
    return found


def built_spanish(path: Path) -> Path:
    tree = "notebooks" if path.parent.name == "lessons" else "solutions"
    return ROOT / tree / "es" / f"{path.stem}.ipynb"


def test_spanish_notebooks_never_print_an_english_sentence_of_their_source():
    offenders = []
    for path in sources():
        literals = english_literals(path)
        for cell in nbformat.read(built_spanish(path), as_version=4).cells:
            if cell.cell_type == "code":
                printed = "\n".join(_output_lines(cell))
                offenders += [f"{cell.id}: {text!r}" for text in sorted(literals)
                              if text in printed]
    assert offenders == [], "\n".join(offenders)


def test_the_source_check_finds_a_sentence_printed_without_the_language_switch(tmp_path):
    source = tmp_path / "lessons" / "99_demo.py"
    source.parent.mkdir()
    source.write_text('''# %%
print("(nothing: the child is stuck writing to stderr)")
print(grading._("the reader was waiting for itself", "el lector se esperaba a sí mismo"))
print("notes_list", 3)
''', encoding="utf-8")
    assert english_literals(source) == {"(nothing: the child is stuck writing to stderr)",
                                        "the reader was waiting for itself"}
