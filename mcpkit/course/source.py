"""From one bilingual course source to the notebooks of each language and variant.

A source is a jupytext ``py:percent`` file under ``course/lessons/`` or ``course/labs/``. The
conventions (``course/README.md`` has the instructor's version):

* ``# %% [markdown] lang="en"`` / ``lang="es"``: prose for one language. A markdown cell
  without ``lang`` goes to both builds (use it for language-free content only).
* In code cells, a whole-line comment ``# [en] text`` or ``# [es] text`` is kept, as
  ``# text``, in its own language only. A comment that shares its line with code may hold
  both languages, ``x = 1  # [en] text  [es] texto``: each build keeps ``x = 1  # text`` in
  its own language (or the code alone, if that language has no text). Everything else in a
  code cell is identical in both.
* ``grading.set_language("en")`` is rewritten to the language being built: the one place
  where the two builds' code differs.
* ``### BEGIN SOLUTION`` / ``### END SOLUTION`` (nbgrader's markers): the solution keeps the
  lines between them, the student version gets ``# YOUR CODE HERE`` and
  ``raise NotImplementedError()`` instead, at the marker's indentation.
* Cell tags pass through (``nbval-ignore-output``, ``nbval-skip``, ``raises-exception``,
  ``nbval-check-output``). A cell tagged ``graded`` also gets ``nbval-check-output`` and is
  made read-only (``editable: false``, ``deletable: false``); ``points=N`` in its header sets
  what it is worth (default 1). A cell with solution markers is tagged ``exercise``.

Cell ids are ``<stem>-NN`` in order, so the same cell has the same id in both languages and
in the lab, its solution and every learner's copy.
"""

from __future__ import annotations

import copy
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import nbformat

LANGS = ("en", "es")
Kind = Literal["lesson", "lab"]
Variant = Literal["lesson", "solution", "student"]

#: Where each kind of source lives under ``course/`` and the tree it builds.
KIND_DIRS: dict[Kind, str] = {"lesson": "lessons", "lab": "labs"}

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
STUB_LINES = ("# YOUR CODE HERE", "raise NotImplementedError()")

_LANG_COMMENT = re.compile(r"^(?P<indent>[ \t]*)# \[(?P<lang>[a-z]{2})\](?: (?P<text>.*))?$")
#: A comment after code whose text starts with a language marker: ``code  # [en] a  [es] b``.
_INLINE_LANG_COMMENT = re.compile(r"^(?P<code>.*?\S)(?P<gap>[ \t]+)# (?P<texts>\[[a-z]{2}\].*)$")
_INLINE_SEGMENT = re.compile(r"\[(?P<lang>[a-z]{2})\](?P<text>.*?)(?=\s\[[a-z]{2}\]|$)")
_SET_LANGUAGE = re.compile(r'set_language\("en"\)')
_KEPT_CELL_METADATA = ("tags", "editable", "deletable")

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}


class SourceError(ValueError):
    """A course source breaks one of the conventions above."""


@dataclass(frozen=True)
class Source:
    path: Path
    kind: Kind

    @property
    def stem(self) -> str:
        return self.path.stem


def discover(course_dir: Path) -> list[Source]:
    """Every lesson and lab source under ``course_dir``, lessons first, each sorted by name."""
    found: list[Source] = []
    for kind, sub in KIND_DIRS.items():
        found += [Source(p, kind) for p in sorted((course_dir / sub).glob("*.py"))]
    return found


def read_source(path: Path) -> nbformat.NotebookNode:
    import jupytext  # imported here: only the build needs it

    return jupytext.read(path, fmt="py:percent")


# --------------------------------------------------------------------------- code cells


def localize_code(code: str, lang: str, where: str = "") -> str:
    """Keep the learner comments of ``lang``, drop the other language's, set the language."""
    out: list[str] = []
    for line in code.split("\n"):
        m = _LANG_COMMENT.match(line)
        if m is None:
            out.append(_localize_inline(line, lang, where))
            continue
        if m["lang"] not in LANGS:
            raise SourceError(f"{where}: unknown language comment {line.strip()!r}")
        if m["lang"] == lang:
            text = m["text"] or ""
            out.append(f"{m['indent']}# {text}".rstrip())
    return _SET_LANGUAGE.sub(f'set_language("{lang}")', "\n".join(out))


def _localize_inline(line: str, lang: str, where: str) -> str:
    """``code  # [en] a  [es] b`` -> ``code  # a`` in English, ``code  # b`` in Spanish."""
    m = _INLINE_LANG_COMMENT.match(line)
    if m is None:
        return line
    column = _comment_column(line)
    if column is not None and column != len(m["code"]) + len(m["gap"]):
        return line  # the "# [xx]" is inside a string
    texts: dict[str, str] = {}
    for segment in _INLINE_SEGMENT.finditer(m["texts"]):
        if segment["lang"] not in LANGS:
            raise SourceError(f"{where}: unknown language comment {line.strip()!r}")
        if segment["lang"] in texts:
            raise SourceError(f"{where}: [{segment['lang']}] twice in {line.strip()!r}")
        texts[segment["lang"]] = segment["text"].strip()
    text = texts.get(lang, "")
    return f"{m['code']}{m['gap']}# {text}" if text else m["code"]


def _comment_column(line: str) -> int | None:
    """Where the comment of one line of code starts (None: no comment, or not tokenizable)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(line + "\n").readline):
            if token.type == tokenize.COMMENT:
                return token.start[1]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return None


def has_solution(code: str) -> bool:
    return any(line.strip() == BEGIN_SOLUTION for line in code.split("\n"))


def apply_solution_markers(code: str, student: bool, where: str = "") -> str:
    """Drop the markers (solution) or replace the marked block with a stub (student)."""
    out: list[str] = []
    inside = False
    for number, line in enumerate(code.split("\n"), 1):
        marker = line.strip()
        if marker == BEGIN_SOLUTION:
            if inside:
                raise SourceError(f"{where}, line {number}: nested {BEGIN_SOLUTION}")
            inside = True
            if student:
                indent = line[: len(line) - len(line.lstrip())]
                out += [indent + stub for stub in STUB_LINES]
        elif marker == END_SOLUTION:
            if not inside:
                raise SourceError(f"{where}, line {number}: {END_SOLUTION} without BEGIN")
            inside = False
        elif not (inside and student):
            out.append(line)
    if inside:
        raise SourceError(f"{where}: {BEGIN_SOLUTION} is never closed")
    return "\n".join(out)


# --------------------------------------------------------------------------- notebooks


def render(
    source: nbformat.NotebookNode, stem: str, lang: str, variant: Variant, kind: Kind,
    origin: str = "",
) -> nbformat.NotebookNode:
    """The notebook of one language and variant, without outputs."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}")
    cells = []
    for index, cell in enumerate(source.cells, 1):
        where = f"{origin or stem}, cell {index}"
        cell_lang = cell.metadata.get("lang")
        if cell_lang is not None and cell_lang not in LANGS:
            raise SourceError(f"{where}: lang={cell_lang!r} is not one of {LANGS}")
        if cell_lang not in (None, lang):
            continue
        tags = list(cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(cell.source)
        elif cell.cell_type == "code":
            code = localize_code(cell.source, lang, where)
            if has_solution(code):
                if kind != "lab":
                    raise SourceError(f"{where}: solution markers belong in labs only")
                if "exercise" not in tags:
                    tags.append("exercise")
            code = apply_solution_markers(code, student=variant == "student", where=where)
            new = nbformat.v4.new_code_cell(code)
        else:
            new = nbformat.v4.new_raw_cell(cell.source)
        for key in _KEPT_CELL_METADATA:
            if key in cell.metadata and key != "tags":
                new.metadata[key] = copy.deepcopy(cell.metadata[key])
        if "graded" in tags:
            if cell.cell_type != "code":
                raise SourceError(f"{where}: only code cells can be graded")
            if "nbval-check-output" not in tags:
                tags.append("nbval-check-output")
            new.metadata["editable"] = False
            new.metadata["deletable"] = False
            new.metadata["mcpkit"] = {"points": cell.metadata.get("points", 1)}
        elif "points" in cell.metadata:
            raise SourceError(f"{where}: points= is only meaningful on a graded cell")
        if tags:
            new.metadata["tags"] = tags
        cells.append(new)
    for number, cell in enumerate(cells, 1):
        cell.id = f"{stem}-{number:02d}"
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": copy.deepcopy(LANGUAGE_INFO),
        "mcpkit": {"kind": "lab" if variant != "lesson" else "lesson", "lang": lang,
                   "variant": variant, "source": origin},
    }
    return nb


def code_skeleton(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """(cell type, code without comment lines or language) per cell: what parity compares."""
    shape = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            lines = [_without_comment(line) for line in cell.source.split("\n")
                     if not line.lstrip().startswith("#")]
            code = re.sub(r'set_language\("[a-z]{2}"\)', "set_language(LANG)", "\n".join(lines))
            shape.append(("code", code))
        else:
            shape.append((cell.cell_type, ""))
    return shape


def _without_comment(line: str) -> str:
    """A line of code without the comment after it (comments may differ by language)."""
    column = _comment_column(line)
    return line if column is None else line[:column].rstrip()


def check_parity(per_lang: dict[str, nbformat.NotebookNode], origin: str) -> None:
    """The languages must have the same cells in the same order with the same code."""
    first, *others = LANGS
    reference = code_skeleton(per_lang[first])
    for lang in others:
        other = code_skeleton(per_lang[lang])
        if len(other) != len(reference):
            raise SourceError(
                f"{origin}: {first} has {len(reference)} cells but {lang} has {len(other)} "
                f"(every lang=\"{first}\" markdown cell needs a lang=\"{lang}\" twin)"
            )
        for number, (a, b) in enumerate(zip(reference, other, strict=True), 1):
            if a != b:
                raise SourceError(f"{origin}: cell {number} differs between {first} and {lang}")
