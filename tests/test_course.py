"""The course build and its parts: source conventions, checkers, parity, freshness.

The slow, notebook-running tests (nbval, grading) are in test_course_notebooks.py.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("jupytext")

from mcpkit import dispatch, framing, grading, jsonrpc  # noqa: E402
from mcpkit.course import build as course_build  # noqa: E402
from mcpkit.course import grade as course_grade  # noqa: E402
from mcpkit.course import source as src  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# Lesson and lab 09 run the npm reference servers: install them first (see conftest.node).
pytestmark = pytest.mark.usefixtures("node")
TREES = ("notebooks", "labs", "solutions")


@pytest.fixture(autouse=True)
def _english_checks():
    grading.set_language("en")
    yield
    grading.set_language("en")


def built(tree: str, lang: str) -> list[Path]:
    return sorted((ROOT / tree / lang).glob("*.ipynb"))


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


# --------------------------------------------------------------------------- source conventions


def test_language_comments_keep_one_language_and_set_the_checks_language():
    code = "\n".join([
        "# [en] Add two numbers.",
        "# [es] Suma dos números.",
        "grading.set_language(\"en\")",
        "    # [es] sangrado",
        "x = 1  # a comment for everyone",
    ])
    assert src.localize_code(code, "en") == (
        "# Add two numbers.\ngrading.set_language(\"en\")\nx = 1  # a comment for everyone"
    )
    assert src.localize_code(code, "es") == (
        "# Suma dos números.\ngrading.set_language(\"es\")\n    # sangrado\n"
        "x = 1  # a comment for everyone"
    )


def test_unknown_language_comment_is_an_error():
    with pytest.raises(src.SourceError, match="unknown language"):
        src.localize_code("# [fr] bonjour", "en", "here")


def test_solution_markers_become_a_stub_at_their_indentation():
    code = "def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION\n"
    assert src.apply_solution_markers(code, student=False) == "def f(x):\n    return x + 1\n"
    assert src.apply_solution_markers(code, student=True) == (
        "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    )


@pytest.mark.parametrize("code, message", [
    ("### BEGIN SOLUTION\nx = 1\n", "never closed"),
    ("### END SOLUTION\n", "without BEGIN"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n", "nested"),
])
def test_broken_solution_markers_are_errors(code, message):
    with pytest.raises(src.SourceError, match=message):
        src.apply_solution_markers(code, student=True, where="lab")


def _source(*cells: tuple[str, str, dict]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    for kind, text, metadata in cells:
        cell = (nbformat.v4.new_markdown_cell(text) if kind == "markdown"
                else nbformat.v4.new_code_cell(text))
        cell.metadata.update(metadata)
        nb.cells.append(cell)
    return nb


def test_render_splits_languages_numbers_cells_and_locks_graded_cells():
    nb = _source(
        ("markdown", "Hello", {"lang": "en"}),
        ("markdown", "Hola", {"lang": "es"}),
        ("code", "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION", {}),
        ("code", "check(f)", {"tags": ["graded"], "points": 3}),
    )
    es = src.render(nb, "lab09_demo", "es", "student", "lab")
    assert [c.id for c in es.cells] == ["lab09_demo-01", "lab09_demo-02", "lab09_demo-03"]
    assert es.cells[0].source == "Hola"
    assert es.cells[1].metadata["tags"] == ["exercise"]
    assert "raise NotImplementedError()" in es.cells[1].source
    graded = es.cells[2]
    assert graded.metadata["tags"] == ["graded", "nbval-check-output"]
    assert graded.metadata["editable"] is False and graded.metadata["deletable"] is False
    assert graded.metadata["mcpkit"] == {"points": 3}
    assert es.metadata["mcpkit"]["lang"] == "es"
    assert "version" not in es.metadata["language_info"]


def test_a_prose_cell_without_its_twin_breaks_parity():
    nb = _source(("markdown", "Only English", {"lang": "en"}), ("code", "x = 1", {}))
    per_lang = {lang: src.render(nb, "l", lang, "lesson", "lesson") for lang in src.LANGS}
    with pytest.raises(src.SourceError, match="twin"):
        src.check_parity(per_lang, "course/lessons/l.py")


def test_solution_markers_are_refused_in_lessons():
    nb = _source(("code", "### BEGIN SOLUTION\nx = 1\n### END SOLUTION", {}))
    with pytest.raises(src.SourceError, match="labs only"):
        src.render(nb, "l", "en", "lesson", "lesson")


def test_every_course_source_renders_in_both_languages_with_parity():
    sources = src.discover(ROOT / "course")
    assert {s.stem for s in sources if s.kind == "lesson"} >= {
        "00_host_client_server", "01_framing", "02_jsonrpc", "03_dispatch", "04_server",
        "04b_stdio", "05_client", "06_many_servers", "07_modern", "08_http",
        "09_real_world", "10_host_and_model"}
    assert {s.stem for s in sources if s.kind == "lab"} >= {
        "lab01_framing", "lab02_jsonrpc", "lab03_dispatch", "lab04_server", "lab05_client",
        "lab06_host", "lab07_modern", "lab08_http", "lab09_real_world", "lab10_host_model",
        "lab11_apps"}
    for s in sources:
        nb = src.read_source(s.path)
        for variant in ("lesson",) if s.kind == "lesson" else ("solution", "student"):
            per_lang = {lang: src.render(nb, s.stem, lang, variant, s.kind) for lang in src.LANGS}
            src.check_parity(per_lang, s.stem)


SEED_IDS = ("A1", "A2", "A3", "B1", "C1", "C2", "C3", "C4", "C5", "D1", "D2", "D3", "D4", "D5")
# Lessons written on other branches: the table cites them as `<stem>-??` until they merge.
PENDING_STEMS: set[str] = set()  # lessons not merged yet, cited as `<stem>-??`
SEED_HEADINGS = ("## Where the source material's exercises and concepts live",
                 "## Dónde viven los ejercicios y conceptos del material de origen")


def _seed_section(heading: str) -> str:
    text = (ROOT / "course" / "README.md").read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start)
    return text[start:] if end == -1 else text[start:end]


def _cited_cells(section: str) -> list[tuple[str, str]]:
    return re.findall(r"`([0-9a-z_]+)-([0-9]{2}|\?\?)`", section)


@pytest.mark.parametrize("heading", SEED_HEADINGS)
def test_every_seed_exercise_has_a_home_in_cells_that_exist(heading):
    section = _seed_section(heading)
    first_column = {line.split("|")[1].strip() for line in section.splitlines()
                    if line.startswith("| ")}
    assert set(SEED_IDS) <= first_column
    cited = _cited_cells(section)
    assert cited
    built_cells = {cell.id for tree in ("notebooks", "labs") for path in built(tree, "en")
                   for cell in read(path).cells}
    built_stems = {path.stem for tree in ("notebooks", "labs") for path in built(tree, "en")}
    assert [f"{stem}-{n}" for stem, n in cited
            if n != "??" and f"{stem}-{n}" not in built_cells] == []
    pending = {stem for stem, n in cited if n == "??"}
    assert pending <= PENDING_STEMS
    # Once a pending lesson is built here, its rows must cite real cell numbers.
    assert pending & built_stems == set()


def test_the_seed_table_cites_the_same_cells_in_both_languages():
    english, spanish = (_seed_section(heading) for heading in SEED_HEADINGS)
    assert _cited_cells(english) == _cited_cells(spanish)
    assert english.count("\n| ") == spanish.count("\n| ")


# --------------------------------------------------------------------------- the checkers


def test_success_is_one_fixed_line_in_each_language(capsys):
    ok = [grading.CaseResult("a", True), grading.CaseResult("b", True)]
    grading.run_checks(ok)
    grading.set_language("es")
    grading.run_checks(ok)
    assert capsys.readouterr().out == (
        "✓ 2/2 checks passed\n✓ 2/2 comprobaciones superadas\n")


def test_checker_texts_are_chosen_when_used_not_when_imported():
    """``_(en, es)`` picks the language set when it runs: a text made at import time (a
    module-level table of hints) stays in the language of the import, English, for a
    Spanish learner too."""
    import ast

    def early_calls(node: ast.AST, deferred: bool = False) -> list[int]:
        lines = []
        for child in ast.iter_child_nodes(node):
            is_function = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if is_function:  # its decorators and defaults run when it is defined
                for part in [*getattr(child, "decorator_list", []), *child.args.defaults,
                             *[d for d in child.args.kw_defaults if d]]:
                    lines += early_calls(ast.Expression(part), deferred)
            if (not deferred and isinstance(child, ast.Call)
                    and isinstance(child.func, ast.Name) and child.func.id == "_"):
                lines.append(child.lineno)
            lines += early_calls(child, deferred or is_function)
        return lines

    early = [f"{path.name}:{line}" for path in sorted((ROOT / "mcpkit" / "grading").glob("*.py"))
             for line in early_calls(ast.parse(path.read_text(encoding="utf-8")))]
    assert early == [], early


def test_a_failure_names_the_case_the_input_what_was_expected_and_what_came_back():
    grading.set_language("es")
    results = [
        grading.case("suma", lambda: 1 + 1, 2),
        grading.case("resta", lambda: 5 - 3, 3, given="5 - 3", hint="cuenta otra vez"),
    ]
    with pytest.raises(AssertionError) as info:
        grading.run_checks(results)
    report = str(info.value)
    assert report.splitlines() == [
        "✗ 1/2 comprobaciones superadas",
        "  ✓ suma",
        "  ✗ resta",
        "      entrada:  5 - 3",
        "      esperado: 3",
        "      obtenido: 2",
        "      pista:    cuenta otra vez",
    ]
    assert info.value._render_traceback_() == report.splitlines()


def test_an_unstarted_exercise_gets_a_short_report_and_a_hint():
    def stub():
        raise NotImplementedError()

    with pytest.raises(AssertionError) as info:
        grading.run_checks([grading.case("one", stub, 1), grading.case("two", stub, 2)])
    lines = str(info.value).splitlines()
    assert lines[0] == "✗ 0/2 checks passed"
    assert "expected" not in str(info.value)
    assert lines[-1].startswith("Hint: fill in the cells marked # YOUR CODE HERE")


def test_a_case_that_never_ends_is_stopped(monkeypatch):
    monkeypatch.setattr(grading.core, "CASE_TIME_LIMIT", 0.2)

    def forever():
        while True:
            try:
                pass
            except Exception:  # a learner's over-broad except must not swallow the stop
                pass

    result = grading.case("loop", forever, None)
    assert not result.ok
    assert "used more than 0.2 s of CPU" in result.details[-1]


def test_a_case_is_stopped_by_cpu_time_and_by_waiting_not_by_a_slow_machine(monkeypatch):
    """The limit counts the CPU a case uses, so a loaded machine (which slows the case but
    gives it no more CPU) cannot fail it; a case that waits for ever has a wall-clock limit."""
    import time as clock

    monkeypatch.setattr(grading.core, "CASE_TIME_LIMIT", 0.2)
    monkeypatch.setattr(grading.core, "CASE_WAIT_LIMIT", 0.6)
    assert grading.case("sleeps, uses no CPU", lambda: clock.sleep(0.4) or 1, 1).ok
    stuck = grading.case("waits for ever", lambda: clock.sleep(30), None)
    assert not stuck.ok and "waited more than 0.6 s" in stuck.details[-1]


def test_prints_and_logs_from_learner_code_do_not_reach_the_graded_output(capsys):
    import logging

    def noisy():
        print("debug!")
        logging.getLogger("learner").error("oops")
        return 1

    grading.run_checks([grading.case("quiet", noisy, 1)])
    captured = capsys.readouterr()
    assert captured.out == "✓ 1/1 checks passed\n"
    assert "oops" not in captured.err


def test_json_true_is_not_one():
    assert not grading.case("bool", lambda: True, 1).ok
    assert not grading.case("int", lambda: [1], [True]).ok
    assert grading.case("same", lambda: {"a": [1, None]}, {"a": [1, None]}).ok


def test_the_lab_checkers_accept_mcpkits_own_layers(capsys):
    """The labs specify what mcpkit does: its own modules must pass every check. (The
    checkers themselves: their guard flags the reference when a learner hands it in.)"""
    grading.check_encoders.__wrapped__(framing.encode_ndjson, framing.encode_content_length)
    grading.check_ndjson_decoder.__wrapped__(framing.NdjsonDecoder)
    grading.check_content_length_decoder.__wrapped__(framing.ContentLengthDecoder)
    grading.check_classify.__wrapped__(jsonrpc.classify)
    grading.check_dispatcher.__wrapped__(dispatch.Dispatcher)
    out = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("  (")]
    assert len(out) == 5 and all(line.startswith("✓ ") for line in out)


def _lab04(**edits: tuple[str, str]) -> dict:
    """Lab 04's solution, run in-process (setup and exercise cells), with text replaced in the
    named functions' cells (``add_tools=("old", "new")``) to make plausible mistakes."""
    nb = src.render(src.read_source(ROOT / "course" / "labs" / "lab04_server.py"),
                    "lab04_server", "en", "solution", "lab")
    namespace: dict = {}
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "code" or not {"setup", "exercise"} & set(tags):
            continue
        code = cell.source
        for name, (old, new) in edits.items():
            if f"def {name}(" in code:
                assert old in code, (name, old)
                code = code.replace(old, new)
        exec(compile(code, cell.id, "exec"), namespace)
    grading.set_language("en")
    return namespace


def test_the_notes_server_checkers_pass_the_solution(capsys):
    lab = _lab04()
    grading.check_note_tools(lab["add_tools"])
    grading.check_note_resources(lab["add_resources"])
    grading.check_notes_server(lab["make_notes_server"])
    out = [line for line in capsys.readouterr().out.splitlines() if line.startswith("✓")]
    assert len(out) == 3 and all(re.fullmatch(r"✓ (\d+)/\1 checks passed", line) for line in out)


def test_lab05_compares_the_labs_errors_by_class_and_request_errors_by_message():
    """Lab 05's audit: a learner's subclass of SessionClosed (or TimeoutError) is the lab's
    error, as `except SessionClosed:` sees it; a RequestError's message counts, as the text
    asks for RequestError(code, message, data)."""
    from mcpkit.grading import lab05

    ended = type("Ended", (lab05.SessionClosed,), {})
    assert lab05._error_seen(ended("x")) == lab05._error_seen(lab05.SessionClosed("y"))
    assert lab05._error_seen(type("Slow", (TimeoutError,), {})()).type == "TimeoutError"
    assert lab05._error_seen(ConnectionError("x")).type == "ConnectionError"
    error = lab05.RequestError(-32601, "nope")
    assert lab05._error_seen(error) == lab05._error("RequestError", -32601, "nope")
    assert lab05._error_seen(lab05.RequestError(-32601, "-32601: nope")) != \
        lab05._error_seen(error)


def test_lab09_a_port_slow_to_start_gets_a_second_longer_wait(monkeypatch):
    """A correct port whose start outlasts the first wait (the SDK under a class's load) is
    run again with a longer one, so it matches; a transcript with a step left unanswered is
    never taken as mcpkit's."""
    from mcpkit.grading import lab09

    nb = src.render(src.read_source(ROOT / "course" / "labs" / "lab09_real_world.py"),
                    "lab09_real_world", "en", "solution", "lab")
    namespace: dict = {}
    exec(next(c.source for c in nb.cells if "def notes_port(" in c.source), namespace)
    monkeypatch.setattr(lab09, "START_WAIT", 0.2)
    monkeypatch.setattr(lab09, "NOTES_WAIT", 0.2)
    slow = "import time\ntime.sleep(1.5)\n" + namespace["notes_port"]()
    memo = lab09._Memo()
    script = [["list", "tools"], ["call", "notes_list", {}]]
    expected = memo.notes(script)
    assert "no answer" not in json.dumps(expected)
    assert memo.port(slow, script, expected) == expected


def _lab08_solution(*edits: tuple[str, str]) -> dict:
    """Lab 08's setup and exercise cells, from the solution, with ``edits`` applied."""
    nb = src.render(src.read_source(ROOT / "course" / "labs" / "lab08_http.py"),
                    "lab08_http", "en", "solution", "lab")
    namespace: dict = {}
    applied = 0
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "code" and ("setup" in tags or "exercise" in tags):
            source = cell.source
            for old, new in edits:
                applied += source.count(old)
                source = source.replace(old, new)
            exec(source, namespace)
    assert applied == len(edits), "an edit no longer matches the solution"
    return namespace


def test_lab08_body_events_always_say_more_body():
    """The lab shows every body event with "more_body", and real servers always send it: an
    app that reads it with event["more_body"] is honest. The loop check's one event had no
    "more_body", so an audit's honest answer lost a check, with a hint about exchange()."""
    from mcpkit.grading import lab08

    old = 'more = event.get("more_body", False)'
    namespace = _lab08_solution((old, 'more = event["more_body"]'))
    assert lab08._loop_free(namespace["make_app"]) == {"status": 200,
                                                      "loop ran during the call": True}
    assert lab08._goes_away(namespace["make_app"]) == []


def test_lab11_a_valueerror_of_a_learners_own_subclass_is_a_valueerror():
    """The lab asks for a ValueError; an exception class of the learner's own that derives
    from it is one, and gets full marks."""
    from mcpkit import apps
    from mcpkit.grading import lab11

    class CspError(ValueError):
        pass

    def view_contents(*args, **kwargs):
        try:
            return lab11.reference_view_contents(*args, **kwargs)
        except ValueError as exc:
            raise CspError(str(exc)) from None

    lab11.check_what_a_server_says(apps.client_supports, apps.tool_meta, view_contents)


def test_lab11_tools_may_be_registered_in_any_order():
    """tools/list follows the order of registration, which the lab leaves free: an app server
    that registers counter_add first gets full marks."""
    from mcpkit import apps
    from mcpkit.grading import lab11

    def build_server(html):
        server = lab11.Server("counter", "1.0.0")
        show, add = lab11.counter_tools()
        apps.tool(server, lab11.BOARD, visibility=["app"], destructive=False)(add)
        apps.tool(server, lab11.BOARD, read_only=True)(show)
        apps.add_view(server, lab11.BOARD, html, name="board",
                      description="The counter's board.", csp=lab11.CSP, prefers_border=True)
        return server

    lab11.check_app_server(build_server)


def test_lab09_a_port_may_say_where_it_comes_from_but_not_run_mcpkit():
    """Comments and docstrings may name mcpkit ("ported from mcpkit.examples.notes") and do
    not count as lines of code; a name or a string in the code that says mcpkit is a port
    leaning on it (a proxy that starts mcpkit's server)."""
    from mcpkit.grading import lab09

    sdk = "from mcp.server.mcpserver import MCPServer\nserver = MCPServer('notes')\n"
    honest = '"""Ported from mcpkit.examples.notes.\n\nMore words.\n"""\n# mcpkit did it so\n' + sdk
    assert lab09.port_problems(honest) == []
    assert lab09.code_lines(honest) == 2
    proxy = sdk + "COMMAND = ['python', '-m', 'mcpkit', 'serve']\n"
    assert [p for p in lab09.port_problems(proxy) if "mcpkit" in p]


def test_setup_check_passes_here(capsys):
    grading.check_setup()
    assert capsys.readouterr().out == "✓ 4/4 checks passed\n"


# --------------------------------------------------------------------------- restoring cells


def test_restore_puts_back_edited_and_deleted_graded_cells():
    pristine = read(ROOT / "labs" / "en" / "lab01_framing.ipynb")
    graded = [c for c in pristine.cells if "graded" in c.metadata.get("tags", [])]
    submission = read(ROOT / "labs" / "en" / "lab01_framing.ipynb")
    fake = next(c for c in submission.cells if c.id == graded[0].id)
    fake.source = 'print("✓ 9/9 checks passed")'
    submission.cells = [c for c in submission.cells if c.id != graded[2].id]
    assert course_grade.restore(submission, pristine) == 2
    assert [c.id for c in submission.cells] == [c.id for c in pristine.cells]
    again = {c.id: c for c in submission.cells}
    assert all(again[g.id] == g for g in graded)


# --------------------------------------------------------------------------- the built trees


def test_every_source_has_its_notebooks_in_both_languages():
    for s in src.discover(ROOT / "course"):
        trees = ("notebooks",) if s.kind == "lesson" else ("labs", "solutions")
        for tree in trees:
            for lang in src.LANGS:
                assert (ROOT / tree / lang / f"{s.stem}.ipynb").exists(), (tree, lang, s.stem)


def test_structural_parity_between_english_and_spanish():
    for tree in TREES:
        en, es = built(tree, "en"), built(tree, "es")
        assert [p.name for p in en] == [p.name for p in es], tree
        for p_en, p_es in zip(en, es, strict=True):
            a, b = read(p_en), read(p_es)
            assert [c.id for c in a.cells] == [c.id for c in b.cells], p_en.name
            assert [c.cell_type for c in a.cells] == [c.cell_type for c in b.cells]
            assert [c.metadata for c in a.cells] == [c.metadata for c in b.cells], p_en.name
            assert src.code_skeleton(a) == src.code_skeleton(b), p_en.name
            for ca, cb in zip(a.cells, b.cells, strict=True):
                if ca.cell_type == "code":
                    assert [o.output_type for o in ca.outputs] == [
                        o.output_type for o in cb.outputs], (p_en.name, ca.id)


def test_graded_cells_are_read_only_and_carry_their_expected_output():
    for lang in src.LANGS:
        for path in built("labs", lang):
            graded = [c for c in read(path).cells if "graded" in c.metadata.get("tags", [])]
            assert graded, path
            for cell in graded:
                assert cell.metadata["editable"] is False and cell.metadata["deletable"] is False
                assert "nbval-check-output" in cell.metadata["tags"]
                # The expected line is a comment, and the cell is not executed: it must not
                # look passed before it ran (tests/test_course_newcomer.py checks the line).
                assert cell.execution_count is None and cell.outputs == []
                assert cell.metadata["mcpkit"]["checks"] > 0


def test_labs_hold_no_solutions():
    for lang in src.LANGS:
        for path in built("labs", lang):
            nb = read(path)
            exercises = [c for c in nb.cells if "exercise" in c.metadata.get("tags", [])]
            assert exercises, path
            for cell in nb.cells:
                assert "### BEGIN SOLUTION" not in cell.source
                if "graded" not in cell.metadata.get("tags", []) and cell.cell_type == "code":
                    assert cell.outputs == [] and cell.execution_count is None, (path, cell.id)
            for cell in exercises:
                assert "raise NotImplementedError()" in cell.source


def test_built_notebooks_are_machine_independent():
    for tree in TREES:
        for lang in src.LANGS:
            for path in built(tree, lang):
                text = path.read_text(encoding="utf-8")
                nb = json.loads(text)
                assert "version" not in nb["metadata"]["language_info"], path
                assert "widgets" not in nb["metadata"]
                for cell in nb["cells"]:
                    assert "execution" not in cell["metadata"]
                assert str(ROOT) not in text and "/tmp/" not in text and "\x1b[" not in text


# English words that Spanish text does not use (nor borrows).
_ENGLISH = set("""
the and of with this that these those you your is are was were be been which what when where
who why how from into will would should could can it its for not by on an or if but then than
there their they them here just only also each every about does do have has had
""".split()) - {"has"}  # "has" is Spanish too (tú has)


def _prose(markdown: str) -> str:
    text = re.sub(r"```.*?```", " ", markdown, flags=re.DOTALL)  # code and mermaid blocks
    text = re.sub(r"`[^`]*`", " ", text)  # inline code
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    return text


def test_spanish_notebooks_have_no_untranslated_english_prose():
    offenders = []
    for tree in TREES:
        for path in built(tree, "es"):
            for cell in read(path).cells:
                if cell.cell_type == "markdown":
                    prose = _prose(cell.source)
                elif cell.cell_type == "code":
                    prose = "\n".join(line for line in cell.source.splitlines()
                                      if line.lstrip().startswith("# ")
                                      and line.strip() != "# YOUR CODE HERE")
                    for out in cell.outputs:
                        if "checks passed" in out.get("text", ""):
                            offenders.append((path.name, cell.id, out.text))
                else:
                    continue
                words = re.findall(r"[^\W\d_]+", prose.lower())
                english = [w for w in words if w in _ENGLISH]
                if len(english) >= 2:
                    offenders.append((path.name, cell.id, english))
    assert offenders == []


def test_committed_trees_equal_a_fresh_build(tmp_path_factory):
    """Two builds must agree cell for cell: the committed one (built on a quiet machine) and
    a fresh one built here with every core kept busy. A stored output that depends on timing
    or load (which of two things was faster, whether a wait ended in time) shows up as a
    difference; so does a source edited without a rebuild."""
    from cpuload import cpu_load

    out = tmp_path_factory.mktemp("fresh-build")
    with cpu_load():
        course_build.build(ROOT, out=out)
    differ = course_build.differing_cells(ROOT, out)
    assert differ == [], (
        "the committed notebooks differ from a fresh build made under CPU load (committed "
        "first, then fresh). If a source changed, run `mcpkit-course build` and commit; if "
        "not, these cells store something that depends on timing or load: show it live "
        "instead (course/README.md):\n" + "\n".join(differ))


def test_sources_are_in_jupytexts_canonical_form():
    """Opening a source in JupyterLab and saving it must not rewrite it."""
    import jupytext

    for s in src.discover(ROOT / "course"):
        text = s.path.read_text(encoding="utf-8")
        assert jupytext.writes(jupytext.reads(text, fmt="py:percent"), fmt="py:percent") == text


@pytest.mark.parametrize("lang", src.LANGS)
def test_every_lab_prints_the_grading_command_for_the_learners_copy(lang):
    """A lab tells its learner to run ``./course.sh grade labNN`` (their copy in work/,
    per part); any nbval command it shows points at work/, never at the pristine labs/."""
    for path in sorted((ROOT / "labs" / lang).glob("lab*.ipynb")):
        prose = "\n".join(c.source for c in read(path).cells if c.cell_type == "markdown")
        assert f"./course.sh grade {path.stem[:5]}" in prose, path.name
        for line in re.findall(r"^.*--nbval.*$", prose, flags=re.MULTILINE):
            assert "work/" in line and "labs/" not in line, (path.name, line)


def test_the_english_prose_heuristic_catches_english():
    words = re.findall(r"[^\W\d_]+", _prose("The decoder returns `x` when the line is done."))
    assert len([w for w in (w.lower() for w in words) if w in _ENGLISH]) >= 2
    words = re.findall(r"[^\W\d_]+", _prose("El decodificador devuelve `the x` cuando termina."))
    assert [w for w in (w.lower() for w in words) if w in _ENGLISH] == []


def test_kernel_trouble_is_told_apart_from_a_learners_endless_loop():
    results = {
        ("a.ipynb", 0): ("error", "RuntimeError: Kernel died before replying to kernel_info"),
        ("b.ipynb", 3): ("failure", "Timeout of 60 seconds exceeded executing cell"),
        ("c.ipynb", 1): ("failure", "Timeout of 5 seconds exceeded waiting for output."),
        ("d.ipynb", 2): ("passed", ""),
    }
    assert course_grade.kernel_troubles(results) == {"a.ipynb", "c.ipynb"}


# --------------------------------------------------------------------------- wrong answers

import course_fixtures  # noqa: E402
from course_fixtures import wrong_fixtures  # noqa: E402

from mcpkit.grading import core, sandbox  # noqa: E402

LAB_STEMS = ("lab01_framing", "lab02_jsonrpc", "lab03_dispatch", "lab04_server",
             "lab05_client", "lab06_host", "lab07_modern", "lab08_http", "lab09_real_world",
             "lab10_host_model", "lab11_apps")


def run_parts(nb, lab: str, lang: str, seed=None, scale=1) -> list[dict]:
    return course_fixtures.run_parts(nb, lab, lang, seed, scale)


def _selected(request, test: str, *names: str) -> list[tuple]:
    """The parameters of the selected tests called ``test`` (so that ``-k`` runs only what
    it selects)."""
    return sorted({tuple(str(getattr(item.callspec.params[n], "path", item.callspec.params[n]))
                         for n in names)
                   for item in request.session.items
                   if getattr(item, "originalname", "") == test and hasattr(item, "callspec")})


@pytest.fixture(scope="module")
def pooled_results(request) -> dict:
    """The wrong answers and the many-seed solution runs, scheduled for two cores.

    First the wrong answers whose generated checks draw cases within a wall-clock budget
    (their failing case must still be found): a worker per core and one more, nothing else
    running. Then, together, what mostly waits (real servers, restarts, time limits: labs
    05, 06, 08 and 09) and the solutions (which pass however few cases a budget draws),
    with twice as many workers: waiting leaves the cores idle otherwise."""
    wrong = _selected(request, "test_a_wrong_answer_fails_where_and_how_it_should",
                      "fixture", "lang")
    labs = [lab for (lab,) in _selected(
        request, "test_solutions_pass_the_generated_cases_of_many_seeds", "lab")]
    seeds = [(lab, seed) for lab in labs for seed in range(SEEDS)]
    budgeted = [c for c in wrong if Path(c[0]).name.split(".")[0] not in WAITING_LABS]
    waiting = [c for c in wrong if c not in budgeted]
    results = dict(zip(budgeted, course_fixtures.in_workers(
        course_fixtures.wrong_answer_parts, budgeted), strict=True))
    tasks = [(course_fixtures.wrong_answer_parts, *c) for c in waiting] + \
        [(course_fixtures.solution_parts, *c) for c in seeds]
    workers = 2 * (os.cpu_count() or 1) + 2
    answers = course_fixtures.in_workers(course_fixtures.call, tasks, workers=workers)
    results.update(zip([*waiting, *seeds], answers, strict=True))
    return results


#: Seeds each solution is graded with (class grading draws other ones, at 4 times the cases;
#: 8 rather than 12 keeps CI within its budget as the wrong answers grow).
SEEDS = 8

#: Labs whose checks mostly wait on real servers and time limits.
WAITING_LABS = frozenset({"lab05_client", "lab06_host", "lab08_http", "lab09_real_world"})


@pytest.fixture(scope="module")
def wrong_answer_results(pooled_results) -> dict:
    return pooled_results


@pytest.fixture(scope="module")
def many_seeds_results(pooled_results) -> dict:
    return pooled_results


@pytest.mark.parametrize("lang", src.LANGS)
@pytest.mark.parametrize("fixture", wrong_fixtures(), ids=lambda f: f.name)
def test_a_wrong_answer_fails_where_and_how_it_should(fixture, lang, wrong_answer_results):
    parts = wrong_answer_results[(str(fixture.path), lang)]
    if isinstance(parts, BaseException):
        raise parts
    failing = [n for n, part in enumerate(parts, 1) if part["status"] != "passed"]
    assert failing == fixture.graded_fails, _unexpected_parts(parts, fixture.graded_fails)
    assert all(parts[n - 1]["status"] == "failed" for n in failing), "a crash is not a message"
    reports = "\n".join(parts[n - 1]["report"] for n in failing)
    assert fixture.expect.get(lang), f"{fixture.name} has no expect-{lang} lines"
    for text in fixture.expect[lang]:
        assert text in reports, reports


def _unexpected_parts(parts: list[dict], expected_fails: list[int]) -> str:
    """The parts whose verdict was not the expected one, their failing checks first (a short
    assertion message shows its first lines only)."""
    said = []
    for n, part in enumerate(parts, 1):
        if (part["status"] != "passed") != (n in expected_fails):
            lines = part["report"].splitlines()
            said += [f"part {n}: {part['status']} {part['problems']}",
                     *[line for line in lines if not line.lstrip().startswith("✓")]]
    return "\n".join(said)


def test_every_lab_has_many_kinds_of_wrong_answer():
    for lab in LAB_STEMS:
        fixtures = wrong_fixtures(lab)
        assert len(fixtures) >= 15, lab
        assert len({tuple(f.expect["en"]) for f in fixtures}) == len(fixtures), lab


@pytest.mark.parametrize("lab", LAB_STEMS)
def test_solutions_pass_the_generated_cases_of_many_seeds(lab, many_seeds_results):
    for seed in range(SEEDS):
        parts = many_seeds_results[(lab, seed)]
        if isinstance(parts, BaseException):
            raise parts
        assert [p["status"] for p in parts] == ["passed"] * len(parts), (seed, parts)


def _processes_running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode(
                    errors="replace").split("\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("ending", ["finishes", "hangs"])
def test_grading_leaves_no_process_behind(ending):
    """Whatever a part started (a test server the checks spawned, a child of the learner's)
    goes with it, whether the part finished or was killed at its time limit."""
    import secrets
    import time as clock

    nb = read(ROOT / "solutions" / "en" / "lab01_framing.ipynb")
    pristine = read(ROOT / "labs" / "en" / "lab01_framing.ipynb")
    job = course_grade.part_jobs(nb, pristine, "lab01_framing", "en", None, 1)[0]
    marker = str(3000 + secrets.randbelow(5000))
    job["graded"] = (f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'])\n"
                     "grading.core.verdicts.append((1, 1))\n"
                     + ("while True:\n    pass\n" if ending == "hangs" else ""))
    answer = course_grade.run_part(job, timeout=5)
    assert answer["status"] == ("timeout" if ending == "hangs" else "passed"), answer
    deadline = clock.monotonic() + 10
    while _processes_running(marker) and clock.monotonic() < deadline:
        clock.sleep(0.05)  # killed at once; gone as soon as init reaps it
    assert _processes_running(marker) == []


RULES_HEADINGS = {"en": "## Each lab's rules and the checks that exercise them",
                  "es": "## Las reglas de cada laboratorio y las comprobaciones que las ejercen"}
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def rule_tables(lang: str) -> dict[str, list[tuple[str, list[str]]]]:
    """course/README.md's rule tables in one language: lab -> [(rule, [check names])]."""
    text = (ROOT / "course" / "README.md").read_text(encoding="utf-8")
    assert RULES_HEADINGS[lang] in text, f"course/README.md has no {RULES_HEADINGS[lang]!r}"
    section = text.split(RULES_HEADINGS[lang], 1)[1].split("\n## ", 1)[0]
    tables: dict[str, list[tuple[str, list[str]]]] = {}
    for block in section.split("\n### ")[1:]:
        lab, _, body = block.partition("\n")
        rows = [line for line in body.splitlines() if line.startswith("|")][2:]
        tables[lab.strip()] = []
        for row in rows:
            rule, checks = [c.strip() for c in row.strip("|").rsplit("|", 1)]
            names = [m.group(2).strip() if m.group(2).startswith(" ") and m.group(2).endswith(" ")
                     else m.group(2) for m in _CODE_SPAN.finditer(checks)]
            tables[lab.strip()].append((rule, names))
    return tables


def check_names(lab: str, lang: str) -> set[str]:
    """The name of every check of a lab, in one language, from the class grader's runs of the
    lab as handed out and, for a part that stops at its first unwritten function, of the
    solution."""
    names: set[str] = set()
    for tree in ("labs", "solutions"):
        grading.core.names_seen.clear()
        run_parts(read(ROOT / tree / lang / f"{lab}.ipynb"), lab, lang)
        names.update(grading.core.names_seen)
        lab_cells = read(ROOT / "labs" / lang / f"{lab}.ipynb").cells
        if len(names) == sum(c.metadata["mcpkit"]["checks"] for c in lab_cells
                             if "graded" in c.metadata.get("tags", [])):
            break
    return names


@pytest.mark.parametrize("lang", src.LANGS)
@pytest.mark.parametrize("lab", LAB_STEMS)
def test_every_rule_a_lab_states_is_exercised_by_checks_that_exist(lab, lang):
    """course/README.md lists, per lab, each rule its text states and the checks exercising
    it, by the names the reports show: every rule has one, and every name is a real check."""
    table = rule_tables(lang).get(lab)
    assert table, f"course/README.md has no rule table for {lab} ({lang})"
    known = check_names(lab, lang)
    for rule, names in table:
        assert names, f"{lab} ({lang}): no check exercises the rule {rule!r}"
        unknown = [n for n in names if n not in known]
        assert not unknown, (lab, lang, rule, unknown)
    assert len(table) == len(rule_tables("en")[lab]), "both languages list the same rules"


def test_the_engine_finds_a_bug_that_no_hand_written_case_covers(capsys):
    """A copy of mcpkit's NDJSON decoder that forgets its buffer on an empty read: every
    hand-written case passes, the generated ones find it, and shrink it to a few reads."""

    class Planted(framing.NdjsonDecoder):
        def feed(self, data):
            if not data:
                self._buf.clear()
            return super().feed(data)

    with pytest.raises(AssertionError) as info:
        grading.check_ndjson_decoder(Planted)
    failed = [line for line in str(info.value).splitlines() if line.startswith("  ✗ ")]
    assert failed == ["  ✗ behaves like mcpkit's NdjsonDecoder on generated streams (random "
                      "chunks, sizes around the limit, two decoders side by side)"]
    found_input = next(line for line in str(info.value).splitlines() if "input:" in line)
    assert "feed(b'')" in found_input and found_input.count("feed(") <= 4, found_input
    found = 0
    for seed in range(20):
        core.configure(seed)
        result = grading.lab01.ndjson_differential(Planted)
        found += not result.ok
        assert grading.lab01.ndjson_differential(framing.NdjsonDecoder).ok
    core.configure()
    assert found >= 15


def test_a_report_shows_the_learners_value_cut_around_the_first_difference():
    expected = {"items": ["x" * 300 + "A"]}
    got = {"items": ["x" * 300 + "B"]}
    result = grading.case("long", lambda: got, expected)
    lines = dict(line.split(None, 1) for line in result.details)
    assert lines["expected:"].endswith("A']}") and lines["got:"].endswith("B']}")
    assert lines["got:"].startswith("…") and len(lines["got:"]) < 200


def test_a_body_read_as_headers_after_a_refused_message_gets_the_skip_hint():
    """An InvalidHeader right after a MessageTooLarge is the refused message's body, not a
    header the learner misread: the hint says to skip the body (an audit found the header
    names' hint there, which sends a learner to the wrong code)."""
    from mcpkit.framing import InvalidHeader, MessageTooLarge
    from mcpkit.grading import lab01
    from mcpkit.grading.core import Seen, Step

    big, other = Seen.of(MessageTooLarge(123, 27)), Seen.of(MessageTooLarge(82, 27))
    header = Seen.of(InvalidHeader("bad header"))
    hint = lab01._framing_hint(None, Step("feed", [big, other]), Step("feed", [big, header]))
    assert hint.startswith("after a MessageTooLarge, skip that message's body")
    alone = lab01._framing_hint(None, Step("feed", [{"id": 1}]), Step("feed", [header]))
    assert alone.startswith("header names are case-insensitive")


def test_a_hint_is_shown_when_the_learners_code_raised_too():
    def broken():
        raise KeyError("x")

    result = grading.case("c", broken, 1, hint="look at the keys")
    assert result.details[-1].endswith("look at the keys")
    assert any("raised KeyError" in d for d in result.details)


def test_an_error_message_is_free_text_but_shown_as_it_came():
    from mcpkit.grading.core import ANY_TEXT, error_shape

    response = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": 7}}
    result = grading.case("msg", lambda: response,
                          {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601,
                                                                "message": ANY_TEXT}},
                          normalize=error_shape)
    assert not result.ok and "'message': 7" in result.details[-1]


# --------------------------------------------------------------------------- the sandbox


@pytest.mark.parametrize("code, problem", [
    ("from mcpkit import grading", "line 1: uses mcpkit.grading, the course's grader"),
    ("import mcpkit.grading.core as c", "the course's grader"),
    ("import os", "imports os"),
    ("import sys\nsys.modules['mcpkit.grading'] = None", "uses sys.modules"),
    ("from sys import excepthook", "uses sys.excepthook"),
    ("x = __builtins__", "__builtins__"),
    ("f = (lambda: 0).__globals__", "__globals__"),
    ("getattr(json, 'lo' + 'ads')", "computed"),
    ("json.loads = print", "changes json"),
    ("framing.NdjsonDecoder.feed = print", "the reference"),
    ("from mcpkit.framing import NdjsonDecoder", "the reference"),
    ("eval('1')", "uses eval"),
    ("import logging\nlogging.disable(50)", "uses logging.disable"),
    ("import traceback\ntraceback.walk_stack(None)", "uses traceback.walk_stack"),
    ("from traceback import StackSummary", "uses traceback.StackSummary"),
    ("import uuid", "imports uuid: exercise code may import mcpkit's layers and only these "
                    "standard modules: abc, base64, binascii, bisect,"),
    ("get_ipython().set_custom_exc((Exception,), print)", "get_ipython"),
    # Found by a gaming audit: each reached the checks' globals (and their record of what
    # passed) without a dunder attribute or a name the scan knew.
    ("import operator\noperator.attrgetter('__glo' + 'bals__')", "uses operator.attrgetter"),
    ("from operator import methodcaller", "uses operator.methodcaller"),
    ("look = getattr\nlook(json, '__glo' + 'bals__')", "uses getattr as a value"),
    ("import functools\nfunctools.reduce(getattr, ['a'], json)", "uses getattr as a value"),
    ("def f():\n    yield\nf().gi_frame.f_back.f_globals", "uses gi_frame"),
    ("getattr(err, 'tb_frame')", "getattr with a computed or dunder name ('tb_frame')"),
    ("import logging\nlogging.currentframe()", "uses logging.currentframe"),
    ("import string\nstring.Formatter().get_field('0.x', [json], {})", "uses string.Formatter"),
    ("import codecs\ncodecs.register_error('strict', print)", "uses codecs.register_error"),
    ("import io\nio.FileIO('core.py', 'w')", "uses io.FileIO"),
])
def test_the_sandbox_flags_code_that_reaches_for_the_grader(code, problem):
    found = [sandbox.describe(p) for p in sandbox.scan(
        code, {"json": "json", "framing": "mcpkit.framing"}, grading.OFF_LIMITS["lab01_framing"])]
    assert any(problem in p for p in found), found


def _mcpkit_modules() -> list[str]:
    """Every module of mcpkit a learner could import from (not the grader, the course
    commands, the command line or the example servers), imported."""
    import importlib
    import pkgutil

    import mcpkit

    names = ["mcpkit"]
    for info in pkgutil.walk_packages(mcpkit.__path__, "mcpkit."):
        if info.name.endswith("__main__") or info.name.startswith(
                ("mcpkit.grading", "mcpkit.course", "mcpkit.examples")):
            continue
        importlib.import_module(info.name)
        names.append(info.name)
    return names


def test_a_reference_reached_through_another_modules_import_of_it_is_flagged():
    """The class of "import the reference under another name": every path in mcpkit that
    names an object a lab puts off limits (mcpkit.session.encoder_for is
    mcpkit.framing.encoder_for, mcpkit.registry.Dispatcher is mcpkit.dispatch.Dispatcher),
    imported directly, through a module bound by another, or with a star import."""
    import sys

    reexports = 0
    for lab, off_limits in grading.OFF_LIMITS.items():
        references = sandbox.off_limits_objects(off_limits)
        for module in _mcpkit_modules():
            for name, value in vars(sys.modules[module]).items():
                original = references.get(id(value))
                if original is None or original == f"{module}.{name}":
                    continue
                reexports += 1
                space = vars(sys.modules[module])
                starred = name in (space.get("__all__") or
                                   [n for n in space if not n.startswith("_")])
                for code in (f"from {module} import {name}",
                             f"import {module} as m\nx = m.{name}",
                             *([f"from {module} import *"] if starred else [])):
                    found = [sandbox.describe(p) for p in sandbox.scan(code, {}, off_limits)]
                    assert any("the reference this lab asks" in f for f in found), \
                        (lab, code, found)
    assert reexports >= 20  # the session, registry, host and package re-exports, at least
    # A name bound by plain assignment (or a parameter's default) to an import is followed.
    for code in ("import mcpkit\npackage = mcpkit\nx = package.jsonrpc.classify",
                 "import mcpkit\ndef f(m, p=mcpkit):\n    return p.jsonrpc.classify(m)",
                 "import mcpkit\na, b = mcpkit, 1\nx = a.jsonrpc.classify",
                 "import mcpkit\nif (p := mcpkit):\n    x = p.jsonrpc.classify"):
        assert "mcpkit.jsonrpc.classify" in [p.name for p in sandbox.scan(
            code, {}, grading.OFF_LIMITS["lab02_jsonrpc"])], code
    found = sandbox.scan("import time\nclock = time\nclock.time = lambda: 0", {}, {})
    assert [p.kind for p in found] == ["assign"]
    found = sandbox.scan("from mcpkit import session as s\nx = s.jsonrpc.classify({})", {},
                         grading.OFF_LIMITS["lab02_jsonrpc"])
    assert "mcpkit.session.jsonrpc.classify (= mcpkit.jsonrpc.classify)" in [
        p.name for p in found]
    # An object a reference class made, reached through a module that holds one (an
    # example server's dispatcher), is the reference too, and so is a member of it.
    lab03 = grading.OFF_LIMITS["lab03_dispatch"]
    for code in ("from mcpkit.examples import everything\nd = everything.server.dispatcher",
                 "import mcpkit.examples.everything as e\nf = e.server.dispatcher.call"):
        assert any("(= mcpkit.dispatch.Dispatcher(...)" in p.name or
                   "(= mcpkit.server.Server(...))" in p.name
                   for p in sandbox.scan(code, {}, lab03)), code
    # What merely shares a name, or is not off limits, still goes through.
    assert sandbox.scan("from mcpkit.session import ServerError", {},
                        grading.OFF_LIMITS["lab01_framing"]) == []
    assert sandbox.scan("import mcpkit.__main__", {}, grading.OFF_LIMITS["lab01_framing"]) == []


def test_what_a_checker_is_handed_is_not_the_reference_under_another_name():
    """What no static check can follow (type(obj), an attribute of an object made at run
    time) is caught where the learner's code is handed to the checks."""
    from mcpkit import dispatch, framing
    from mcpkit.server import Server

    off_limits = grading.OFF_LIMITS["lab03_dispatch"]
    derived = type("Dispatcher", (type(Server("x").dispatcher),), {})
    assert sandbox.built_on_reference(derived, off_limits) == "mcpkit.dispatch.Dispatcher"
    assert sandbox.built_on_reference(dispatch.Dispatcher, off_limits) is not None
    taken = dispatch.Dispatcher.__init__
    assert sandbox.built_on_reference(taken, off_limits) == "mcpkit.dispatch.Dispatcher.__init__"

    class Mine:
        def call(self):
            return None

    assert sandbox.built_on_reference(Mine, off_limits) is None
    assert sandbox.built_on_reference(Mine().call, off_limits) is None
    # The reference's methods transplanted into a class of one's own, or wrapped in a
    # partial: the code that runs is the reference's.
    transplanted = type("Dispatcher", (), dict(vars(type(Server("x").dispatcher))))
    assert sandbox.built_on_reference(transplanted, off_limits).startswith(
        "mcpkit.dispatch.Dispatcher.")
    import functools

    lab02 = grading.OFF_LIMITS["lab02_jsonrpc"]
    from mcpkit import jsonrpc
    assert sandbox.built_on_reference(functools.partial(jsonrpc.classify), lab02) == \
        "mcpkit.jsonrpc.classify"
    assert sandbox.built_on_reference(staticmethod(jsonrpc.classify), lab02) == \
        "mcpkit.jsonrpc.classify"
    assert sandbox.built_on_reference(framing.NdjsonDecoder, off_limits) is None  # not lab 03's
    lab01 = grading.OFF_LIMITS["lab01_framing"]
    decoder = framing.decoder_for("ndjson")
    assert sandbox.built_on_reference(type(decoder), lab01) == "mcpkit.framing.NdjsonDecoder"
    assert sandbox.built_on_reference(decoder.feed, lab01) == "mcpkit.framing.NdjsonDecoder.feed"
    # Handed to a guarded checker: the notebook's graded cell fails with the flag.
    try:
        grading.check_dispatcher(derived)
    except grading.ChecksFailed as exc:
        assert "hands the checks Dispatcher → mcpkit.dispatch.Dispatcher" in str(exc)
    else:
        raise AssertionError("a Dispatcher built on the reference passed")
    assert [p.kind for p in sandbox.handed_in] == ["handed"]


def test_a_flag_says_where_what_and_why_in_the_learners_language():
    code = "import json\n\nfrom mcpkit.framing import NdjsonDecoder as Mine\n"
    found = sandbox.scan(code, {}, grading.OFF_LIMITS["lab01_framing"], cell="lab01-7")
    where = {"lab01-7": "exercise 3"}
    assert [sandbox.describe(p, where) for p in found] == [
        "exercise 3, line 3: uses mcpkit.framing.NdjsonDecoder, the reference this lab asks "
        "you to write yourself"]
    grading.set_language("es")
    try:
        assert sandbox.describe(found[0], {"lab01-7": "ejercicio 3"}).startswith(
            "ejercicio 3, línea 3: usa mcpkit.framing.NdjsonDecoder, la referencia")
    finally:
        grading.set_language("en")


def test_the_standard_librarys_own_caches_are_not_evidence():
    """Combining regex flags makes a new enum pseudo-member (re.RegexFlag's value map grows),
    and the regex cache fills: ordinary code does both, so neither may flag anyone. Replacing
    a public function of a watched module still does."""
    import json
    import re as regex

    snap = sandbox.snapshot()
    regex.compile(f"x(?#{id(snap)})", regex.I | regex.M | regex.S | regex.X | regex.A)
    known = regex.RegexFlag._value2member_map_
    fresh = next(v for v in range(1, 512) if v not in known)
    regex.RegexFlag(fresh)
    assert fresh in known  # the map did grow, and that is no one's doing
    assert sandbox.changes(snap) == []
    original = json.dumps
    try:
        json.dumps = repr
        assert sandbox.Problem("replaced", "json.dumps") in sandbox.changes(snap)
    finally:
        json.dumps = original


def test_an_exercise_may_import_again_what_the_setup_imports():
    """Lab 09's setup imports subprocess: a harness cell that imports it too is honest work
    (it adds nothing the namespace does not hold). A from-import lets in its module only."""
    setup = {"subprocess": "subprocess", "quote": "urllib.parse.quote"}
    for code in ["import subprocess", "from subprocess import TimeoutExpired",
                 "from urllib.parse import urlsplit"]:
        assert sandbox.scan(code, setup, {}) == [], code
    for code in ["import urllib", "import urllib.request", "import socket"]:
        assert [p.kind for p in sandbox.scan(code, setup, {})] == ["import"], code


def test_honest_imports_and_names_pass_and_a_module_used_as_a_value_is_flagged():
    """Audits of labs 02 and 10: `from mcpkit import jsonrpc` for its builders, `import
    mcpkit.host`, `from mcpkit import agent` for looks_injected, the setup's own import line
    again, a parameter named `input`, `from __future__ import annotations` and
    `type(exc).__module__` were flagged (0 on the part). A module is no reference; what is
    read from it is checked, so a module used as any other value is flagged instead."""
    lab02, lab10 = grading.OFF_LIMITS["lab02_jsonrpc"], grading.OFF_LIMITS["lab10_host_model"]
    setup10 = sandbox.import_bindings("from mcpkit.agent import ScriptedModel, looks_injected\n"
                                      "from mcpkit.host import Host, HostError")
    cases = [
        ("from mcpkit import jsonrpc\nx = jsonrpc.error_response(1, -32600, 'm')", {}, lab02, []),
        ("import mcpkit.jsonrpc\nx = mcpkit.jsonrpc.error_response", {}, lab02, []),
        ("import mcpkit.host\nx = mcpkit.host.HostError", setup10, lab10, []),
        ("from mcpkit.host import Host, HostError\nx = HostError", setup10, lab10, []),
        ("from mcpkit import agent\nx = agent.looks_injected('a')", setup10, lab10, []),
        ("def parse(input):\n    return input.strip()", {}, lab02, []),
        ("def parse(line):\n    input = line.strip()\n    return input", {}, lab02, []),
        ("x = [input for input in 'ab']", {}, lab02, []),
        ("from __future__ import annotations", {}, lab02, []),
        ("import binascii\nimport base64", {}, lab02, []),  # lab 07: base64 raises binascii.Error
        ("def f(e):\n    return type(e).__module__", {}, lab02, []),
        # What is read from a module is still the reference...
        ("from mcpkit import jsonrpc\nx = jsonrpc.classify", {}, lab02, ["reference"]),
        ("from mcpkit import jsonrpc as j\nk = j\nk.classify", {}, lab02, ["reference"]),
        ("from mcpkit import jsonrpc\ngetattr(jsonrpc, 'classify')", {}, lab02, ["reference"]),
        ("from mcpkit.host import Host\nx = Host({})", setup10, lab10, ["reference"]),
        ("from mcpkit import agent\nx = agent.run_agent", setup10, lab10, ["reference"]),
        ("from mcpkit.host import toolformats", setup10, lab10, ["reference"]),
        # ... a module as any other value is out of the scan's sight ...
        ("from mcpkit import jsonrpc\nx = [jsonrpc][0].classify", {}, lab02, ["module_value"]),
        ("import mcpkit\nx = [mcpkit.jsonrpc][0].classify", {}, lab02, ["module_value"]),
        ("import mcpkit\ndef f(m):\n    return m.jsonrpc.classify\nf(mcpkit)", {}, lab02,
         ["module_value"]),
        ("from mcpkit import jsonrpc\nfor m in (jsonrpc,):\n    m.classify", {}, lab02,
         ["module_value"]),
        # ... and the builtin `input` stays out of reach wherever it is not a local.
        ("def parse(line):\n    return input('x')", {}, lab02, ["name"]),
        ("def parse(line, x=input):\n    input = 1\n    return x", {}, lab02, ["name"]),
        ("def parse(line):\n    [0 for input in ()]\n    return input('x')", {}, lab02,
         ["name"]),
        ("def parse(line):\n    global input\n    input = 1\n    return input", {}, lab02,
         ["name"]),
    ]
    for code, setup, off_limits, kinds in cases:
        found = {p.kind for p in sandbox.scan(code, setup, off_limits)}
        assert found == set(kinds), (code, found)
    grading.set_language("es")
    try:
        flag = sandbox.describe(sandbox.Problem("module_value", "mcpkit.jsonrpc", "c", 2))
        assert "usa el módulo mcpkit.jsonrpc como un valor" in flag, flag
    finally:
        grading.set_language("en")


def test_the_sandbox_lets_ordinary_code_through():
    code = ("import sys\nimport itertools\nfrom mcpkit.framing import InvalidJson\n"
            "print(sys.maxsize, file=sys.stderr)\nx = getattr(object(), 'real', None)\n"
            "class D:\n    def __init__(self):\n        self.buffer = bytearray()\n"
            "        super().__init__()\n        self.__class__.count = 1\n"
            "import traceback\nlog_line = traceback.format_exc()\n"
            "import codecs\nimport io\nkept = io.BytesIO()\ncodecs.decode(b'x', 'utf-8')\n"
            "def pick(getattr):\n    return getattr\n")
    assert sandbox.scan(code, {"json": "json"}, grading.OFF_LIMITS["lab01_framing"]) == []
    # An index that reads an import changes the table, not the import (lab 05's audit: a
    # pending table keyed by json.dumps(id) was flagged as changing json).
    for code in ("table = {}\ntable[json.dumps(1)] = 2", "t = {}\nt[json.dumps(1)] += 1",
                 "a = [0]\nb = {}\na[0], b[json.dumps([])] = 1, 2",
                 "t = {}\ndel t[json.dumps(1)]"):
        assert sandbox.scan(code, {"json": "json"}, grading.OFF_LIMITS["lab05_client"]) == [], \
            code
    for code in ("json.loads, x = print, 1", "[*json.x] = [1]", "json.__dict__['x'] = 1",
                 "del json.loads", "json.x[json.dumps(1)] = 2"):
        assert "assign" in [p.kind for p in sandbox.scan(code, {"json": "json"}, {})], code


def test_the_sandbox_flags_nothing_in_the_solutions():
    for lab in LAB_STEMS:
        nb = read(ROOT / "solutions" / "en" / f"{lab}.ipynb")
        names: dict = {}
        for cell in nb.cells:
            if "setup" in cell.metadata.get("tags", []):
                names.update(sandbox.import_bindings(cell.source))
        for cell in nb.cells:
            if "exercise" in cell.metadata.get("tags", []):
                assert sandbox.scan(cell.source, names, grading.OFF_LIMITS[lab]) == [], cell.id


def test_the_sandbox_sees_a_patch_made_at_run_time():
    snap = sandbox.snapshot()
    original = framing.MessageTooLarge.__init__
    try:
        framing.MessageTooLarge.__eq__ = lambda self, other: True
        assert sandbox.Problem("added", "mcpkit.framing.MessageTooLarge.__eq__") in \
            sandbox.changes(snap)
    finally:
        del framing.MessageTooLarge.__eq__
    assert framing.MessageTooLarge.__init__ is original
    assert sandbox.changes(snap) == []
    table = next(name for name, value in vars(jsonrpc).items() if isinstance(value, dict)
                 and not name.startswith("__"))
    getattr(jsonrpc, table)["planted"] = 1  # changed in place: same object, other contents
    try:
        assert any(f"{table} was changed in place" in sandbox.describe(c)
                   for c in sandbox.changes(snap))
    finally:
        del getattr(jsonrpc, table)["planted"]


def test_an_object_that_claims_to_equal_everything_gains_nothing():
    class Anything:
        def __eq__(self, other):
            return True

    class Liar(str):
        def __eq__(self, other):
            return True

        __hash__ = str.__hash__

    assert not grading.case("any", lambda: Anything(), {"jsonrpc": "2.0"}).ok
    assert not grading.case("str", lambda: Liar("request"), "result").ok
    assert not grading.case("list", lambda: [Liar("a")], ["b"]).ok
    assert grading.case("fine", lambda: Liar("request"), "request").ok


def test_a_notebook_whose_kernel_dies_is_built_once_more_and_the_build_says_so(tmp_path):
    """A kernel that dies (or a cell that stalls past the limit) under load gets one fresh
    start; the retry is a warning, so a slow CI run shows which notebook cost it."""
    import asyncio

    marker = tmp_path / "died-once"
    code = (f"import os, pathlib\nmarker = pathlib.Path({str(marker)!r})\n"
            "if not marker.exists():\n    marker.write_text('x')\n    os._exit(1)\nprint('ok')")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    job = course_build.Job(nb, tmp_path / "out" / "dies.ipynb")
    with pytest.warns(RuntimeWarning, match=r"dies\.ipynb: .*built once more"):
        asyncio.run(course_build._run_all([job], [], 1))
    built = nbformat.read(job.target, as_version=4)
    assert built.cells[0].outputs[0]["text"] == "ok\n"


def test_building_a_notebook_leaves_no_kernel_behind(tmp_path):
    import asyncio
    import time

    def os_threads() -> int:  # zmq's I/O threads are not Python threads
        return len(os.listdir("/proc/self/task"))

    before = core.child_processes()
    threads, fds = os_threads(), len(os.listdir("/proc/self/fd"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    asyncio.run(course_build._execute(nb, tmp_path, "tiny"))
    assert nb.cells[0].outputs[0]["text"] == "42\n"
    deadline = time.monotonic() + 10
    while core.child_processes() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert core.child_processes() - before == set()
    # Nor sockets reconnecting to the dead kernel (they made the suite's later leak checks,
    # which count descriptors, fail now and then).
    assert os_threads() <= threads
    assert len(os.listdir("/proc/self/fd")) <= fds


_GUARDED = r'''
import json, logging, os, shutil, sys, tempfile
from mcpkit.grading import guard
problems = guard.install(["learner-cell"])
outside = sys.argv[1]
learner = compile("""
def frame_of_a_generator():
    def gen():
        yield
    g = gen()
    return g.gi_frame
def frame_by_string():
    return getattr(sys, "_get" + "frame")()
def write_through_logging():
    logging.FileHandler(outside).close()
""", "learner-cell", "exec")
space = {"sys": sys, "logging": logging, "outside": outside}
exec(learner, space)
seen = {}
for name in ("frame_of_a_generator", "frame_by_string", "write_through_logging"):
    try:
        space[name]()
        seen[name] = "allowed"
    except PermissionError:
        seen[name] = "refused"
# The standard library's own frames and the checks' temporary files are nobody's breach.
logging.getLogger("t").warning("logging finds its caller with sys._getframe")
folder = tempfile.mkdtemp()
open(os.path.join(folder, "f"), "w").close()
shutil.rmtree(folder)
try:
    open(outside + ".checks", "w").close()  # outside the temp folder: refused, not flagged
    seen["checks_write"] = "allowed"
except PermissionError:
    seen["checks_write"] = "refused"
print(json.dumps({"seen": seen, "problems": [[p.kind, p.name, p.cell] for p in problems]}))
'''


def test_the_run_time_guard_refuses_frames_and_writes_that_no_scan_sees(tmp_path):
    """The class grader's process refuses, and flags, what exercise code reaches at run time
    (a frame through a generator or a name put together) and any file written outside the
    temporary folder (the grader's own files: a learner graded later would run with them)."""
    import subprocess
    import sys

    outside = ROOT / ".guard-test-must-not-exist.log"
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _GUARDED, str(outside)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["seen"] == {"frame_of_a_generator": "refused", "frame_by_string": "refused",
                              "write_through_logging": "refused", "checks_write": "refused"}
    assert answer["problems"] == [["run_time", "gi_frame", "learner-cell"],
                                  ["run_time", "sys._getframe", "learner-cell"],
                                  ["write", str(outside), "learner-cell"]]
    assert not outside.exists() and not Path(str(outside) + ".checks").exists()


_ESCAPES = """
import subprocess, sys
target, scratch, seconds = sys.argv[1:]
# a child that leaves the part's process group and would outlive it
subprocess.Popen(["setsid", "sleep", seconds], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for path, name in ((target, "course"), (scratch, "temporary")):
    try:
        with open(path, "a") as f:
            f.write("changed")
        print(name, "written")
    except OSError as exc:
        print(name, "refused", exc.errno)
"""


def test_a_confined_part_writes_only_its_temporary_folder_and_leaves_no_process(tmp_path):
    """Confinement (root and util-linux): what a part's processes may not write is read-only
    to them, and when the part ends every process it started is gone, the ones that left its
    process group too: what neither the audit hook nor a process group can hold."""
    import errno
    import subprocess
    import sys
    import time

    from mcpkit.course import confine

    course = tmp_path / "course"
    course.mkdir()
    target = course / "lab.ipynb"
    target.write_text("pristine")
    closed = confine.folders([course])
    assert closed == (str(course.resolve()),)
    if not confine.closes([course]):
        pytest.skip("this system does not confine parts (not root, no util-linux, or "
                    "namespaces refused)")
    seconds = f"{time.time() % 1000 + 1000:.3f}"  # a sleep no other process has
    argv = [sys.executable, "-c", _ESCAPES, str(target), str(tmp_path / "scratch"), seconds]
    done = subprocess.run(confine.wrap(argv, closed), capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.splitlines() == [f"course refused {errno.EROFS}", "temporary written"]
    assert target.read_text() == "pristine"
    assert (tmp_path / "scratch").read_text() == "changed"

    def sleepers() -> list[str]:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if seconds in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(entry.name)
            except OSError:
                continue
        return found

    deadline = time.monotonic() + 10
    while sleepers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sleepers() == []
    # unconfined, the same child would outlive it: the check above can fail
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    left = sleepers()
    assert left
    for pid in left:
        os.kill(int(pid), 9)


def test_the_folders_a_part_may_not_write_never_hold_the_temporary_folder(tmp_path):
    import tempfile

    from mcpkit.course import confine

    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    temporary = os.path.realpath(tempfile.gettempdir())
    assert confine.folders([tmp_path, inner, tmp_path / "missing"]) == \
        (str(tmp_path.resolve()),)
    assert confine.folders([os.path.dirname(temporary), "/"]) == ()


def test_a_record_of_checks_that_does_not_add_up_scores_nothing():
    """Class grading takes a part's score from its sandbox's answer: more checks passed than
    ran, or another count than the cell runs, is no honest answer (a gaming audit swapped the
    checks' record for one that said 10**6 of 10**6), so the part scores nothing."""
    def settled(answer):
        g = course_grade.Graded("c", 0, 3.0, 12)
        course_grade.settle(g, {"report": "", "problems": [], **answer})
        return g.status, g.passed

    assert settled({"status": "passed", "passed": 12, "total": 12}) == ("passed", 12)
    assert settled({"status": "failed", "passed": 7, "total": 12}) == ("failed", 7)
    assert settled({"status": "failed", "passed": 0, "total": 3}) == ("failed", 0)  # unfilled
    assert settled({"status": "passed", "passed": 10**6, "total": 10**6}) == ("crashed", 0)
    assert settled({"status": "passed", "passed": 13, "total": 12}) == ("crashed", 0)
    assert settled({"status": "passed", "passed": 5, "total": 5}) == ("crashed", 0)
    assert settled({"status": "flagged", "passed": 12, "total": 12}) == ("flagged", 0)
