"""The course in a real JupyterLab, in a real (headless) Chromium, the way a learner uses it.

One JupyterLab serves a scratch copy of the course (so nothing here touches the repository).
In each language the test

1. opens JupyterLab's default page, as ``./course.sh lab`` sets it, and finds the start page;
2. runs lesson 04b (the server on a pipe) cell by cell (Shift+Enter), picks a tool in the
   tool explorer, fills its form, presses the call button, and reads the rendered result (a
   note found; a tool error framed in red); checks that the live wire inspector grew by the
   new messages, exports its Mermaid diagram, and that the host dashboard shows both servers
   ready;
3. opens lab 01, sees its first graded cell unexecuted with its expected line, types the
   solution of part 1 into the exercise cell, runs the graded cell and sees the success line.

Screenshots of each step go under pytest's tmp dir; the folder is printed. Chromium is
Debian's (``chromium``, which ``.ci/run`` installs), driven by Playwright through
``executable_path``: no browser download. Without chromium or Playwright the test skips,
unless ``MCPKIT_REQUIRE_BROWSER=1`` (set by ``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WAIT_MS = 60_000  # one bound for every wait in the page (kernel starts included)


def _require(reason: str) -> None:
    if os.environ.get("MCPKIT_REQUIRE_BROWSER") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _default_url() -> str:
    """The page ``./course.sh lab`` opens first, read from the script itself."""
    m = re.search(r'--LabApp\.default_url="([^"]+)"', (ROOT / "course.sh").read_text())
    assert m, "course.sh sets no default_url"
    return m.group(1)


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """A JupyterLab on 127.0.0.1 over a scratch copy of the course; (base URL, token)."""
    pytest.importorskip("jupyterlab")
    pytest.importorskip("ipywidgets")
    from mcpkit.course import workspace

    tmp = tmp_path_factory.mktemp("jupyterlab")
    course = tmp / "course-copy"
    for tree in ("notebooks", "labs", "solutions", "course"):
        shutil.copytree(ROOT / tree, course / tree)
    workspace.make(course)  # what ./course.sh lab does first

    # Keep everything JupyterLab, the kernels and Chromium write inside tmp.
    home = tmp / "home"
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))  # no toast over pages
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_DATA_HOME=str(home / ".local"),
               IPYTHONDIR=str(tmp / "ipython"), JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"), JUPYTER_RUNTIME_DIR=str(
                   tmp / "runtime"), PYTHONDONTWRITEBYTECODE="1")
    token = secrets.token_hex(16)
    port = _free_port()
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
               f"--port={port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={course}",
               f"--LabApp.default_url={_default_url()}"]
    if os.getuid() == 0:
        command.append("--allow-root")
    log = (tmp / "jupyterlab.log").open("wb")
    server = subprocess.Popen(command, cwd=course, env=env, stdout=log, stderr=log,
                              start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    _ROOTS[base] = str(course)
    try:
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited ({server.returncode}); see {tmp}/jupyterlab.log")
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab not up after 60 s; see {tmp}/jupyterlab.log")
                time.sleep(0.25)
        yield base, token
    finally:
        _shut_down(server, base, token)
        log.close()


def _shut_down(server: subprocess.Popen, base: str, token: str) -> None:
    """Kernels first (through the API, so they end their own children), then the server."""
    try:
        with urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=5) as r:
            kernels = json.load(r)
        for kernel in kernels:
            request = urllib.request.Request(f"{base}/api/kernels/{kernel['id']}?token={token}",
                                             method="DELETE")
            urllib.request.urlopen(request, timeout=10).close()
    except OSError:
        pass
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)


@pytest.fixture(scope="module")
def browser(lab_server, tmp_path_factory):
    if CHROMIUM is None:
        _require("no chromium on PATH (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _require("playwright is not installed (it is in the dev extra)")
    home = tmp_path_factory.mktemp("chromium-home")  # crash reports and dconf land here
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_CACHE_HOME=str(home / ".cache"))
    with sync_playwright() as p:
        # --no-sandbox: Chromium refuses to run as root with its sandbox (containers, CI).
        instance = p.chromium.launch(executable_path=CHROMIUM, headless=True, env=env,
                                     args=["--no-sandbox"] if os.getuid() == 0 else [])
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory, request):
    folder = tmp_path_factory.mktemp("screenshots")
    yield folder
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        taken = sorted(p.name for p in folder.glob("*.png"))
        print(f"\nbrowser test: {len(taken)} screenshots in {folder}")


WORDS = {
    "en": {"call": "Call", "start": "Start here", "ok": "✓ 10/10 checks passed",
           "expected": "# Expected once every check passes: ✓ 10/10 checks passed",
           "error": "tool error (isError)"},
    "es": {"call": "Llamar", "start": "Empieza aquí", "ok": "✓ 10/10 comprobaciones superadas",
           "expected": "# Lo esperado cuando pasan todas las comprobaciones: ✓ 10/10 "
                       "comprobaciones superadas",
           "error": "error de herramienta (isError)"},
}


PROGRESS = {
    "en": {"title": "Your progress", "lab01": ["2.0/10", "left: Part 2 · One body, one value"],
           "lab02": ["not graded yet"]},
    "es": {"title": "Tu progreso",
           "lab01": ["2.0/10", "por completar: Parte 2 · Un cuerpo, un valor"],
           "lab02": ["sin calificar todavía"]},
}

_ROOTS: dict[str, str] = {}


def _saved_sources(path: Path) -> str:
    """The code of a notebook as saved; empty while JupyterLab is still writing the file."""
    try:
        return "".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])
    except ValueError:  # read half-written
        return ""


def lab_server_root(base: str) -> str:
    """The course copy the JupyterLab at ``base`` serves."""
    return _ROOTS[base]


@contextlib.contextmanager
def _page(browser, shots: Path, name: str, width: int):
    """A fresh page; on any failure, a screenshot ``<name>-failure.png`` first."""
    context = browser.new_context(viewport={"width": width, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        yield page
    except Exception:
        page.screenshot(path=shots / f"{name}-failure.png")
        raise
    finally:
        context.close()


def _open(page, base: str, token: str, path: str) -> None:
    page.goto(f"{base}{path}?reset&token={token}")  # reset: no tabs restored from before
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").first.wait_for(
        timeout=WAIT_MS)
    # The kernel is ready when the status bar names it and says idle (before it connects,
    # Shift+Enter only moves from cell to cell).
    page.locator(".jp-StatusBar-Widget").get_by_text(
        re.compile(r"Python 3 \(ipykernel\) \| Idle")).wait_for(timeout=WAIT_MS)


def _run_through(page, cell_index: int) -> None:
    """Shift+Enter from the first cell down to ``cell_index``, as a learner would."""
    cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
    cells.nth(0).locator(".jp-InputPrompt").click()
    for _ in range(cell_index + 1):
        page.keyboard.press("Shift+Enter")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_learner_in_jupyterlab(lang, lab_server, browser, shots):
    from playwright.sync_api import expect

    base, token = lab_server
    words = WORDS[lang]
    started = time.monotonic()
    with _page(browser, shots, lang, 1400) as page:
        # 1. The start page is what JupyterLab opens by default.
        page.goto(f"{base}/?token={token}")  # the server sends it on to default_url
        page.get_by_role("heading", name=words["start"]).first.wait_for()
        page.screenshot(path=shots / f"{lang}-1-start-page.png")

        # 2. Lesson 04b: the widgets, driven with the mouse and keyboard.
        _open(page, base, token, f"/lab/tree/work/notebooks/{lang}/04b_stdio.ipynb")
        lesson = json.loads((ROOT / "notebooks" / lang / "04b_stdio.ipynb").read_text())
        sources = ["".join(c["source"]) for c in lesson["cells"]]
        last = next(i for i, s in enumerate(sources) if s.startswith("ToolExplorer(host)"))
        closing = next(i for i, s in enumerate(sources) if s.startswith("inspector.close()"))
        _run_through(page, last)  # not yet the cells after it: they close everything
        explorer = page.locator(".mcpkit-tool-explorer").first
        explorer.wait_for()
        inspector = page.locator(".mcpkit-wire-inspector").first
        rows = inspector.locator(".mcpkit-event")
        rows.nth(3).wait_for()  # the tools/ messages of the cells above: list and call
        before = rows.count()
        page.locator(".mcpkit-host-dashboard").get_by_text("verbs").wait_for()

        explorer.locator("select").first.select_option("notes_search")
        explorer.locator(".mcpkit-field-query input").fill("spanish")
        explorer.get_by_role("button", name=words["call"]).click()
        found = explorer.locator(".mcpkit-result .mcpkit-text")
        found.get_by_text("La solicitud y la respuesta llevan el mismo id").wait_for()
        page.wait_for_function(  # the live inspector shows the new request and its result
            "([selector, n]) => document.querySelector(selector)"
            ".querySelectorAll('.mcpkit-event').length >= n",
            arg=[".mcpkit-wire-inspector", before + 2], timeout=WAIT_MS)
        explorer.scroll_into_view_if_needed()
        page.screenshot(path=shots / f"{lang}-2-explorer-result.png")

        explorer.locator("select").first.select_option("notes_delete")
        explorer.locator(".mcpkit-field-id input").fill("99")
        explorer.get_by_role("button", name=words["call"]).click()
        explorer.locator(".mcpkit-result.mcpkit-error").get_by_text(words["error"]).wait_for()
        page.screenshot(path=shots / f"{lang}-3-explorer-tool-error.png")

        inspector.get_by_role("button", name="Mermaid").click()
        expect(inspector.locator("textarea")).to_have_value(  # set by the kernel, a moment later
            re.compile(r"^sequenceDiagram\n    participant C as Client"))
        inspector.scroll_into_view_if_needed()
        page.screenshot(path=shots / f"{lang}-4-inspector.png")
        dashboard = page.locator(".mcpkit-host-dashboard").first
        dashboard.scroll_into_view_if_needed()
        expect(dashboard.get_by_text("ready")).to_have_count(2)
        page.screenshot(path=shots / f"{lang}-5-dashboard.png")
        panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
        panel.locator(".jp-Cell").nth(last + 1).locator(".jp-InputPrompt").click()
        for _ in range(closing - last):  # on to the cell that closes the host and the client
            page.keyboard.press("Shift+Enter")

        # 3. Lab 01, part 1: not passed before it ran; type the solution; run; pass.
        _open(page, base, token, f"/lab/tree/work/labs/{lang}/lab01_framing.ipynb")
        panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
        graded = panel.locator(".jp-CodeCell").filter(has_text=words["expected"].split(":")[0])
        graded.first.wait_for()
        assert graded.first.locator(".jp-InputPrompt").inner_text().strip() in ("[ ]:", "[ ]")
        assert graded.first.locator(".jp-OutputArea-output").count() == 0
        setup = panel.locator(".jp-CodeCell").filter(has_text="set_language")
        setup.locator(".cm-content").click()
        page.keyboard.press("Shift+Enter")
        exercise = panel.locator(".jp-CodeCell").filter(has_text="YOUR CODE HERE").first
        exercise.locator(".cm-content").click()
        page.keyboard.press("ControlOrMeta+a")
        solution = json.loads((ROOT / "solutions" / lang / "lab01_framing.ipynb").read_text())
        code = next("".join(c["source"]) for c in solution["cells"]
                    if "exercise" in c["metadata"].get("tags", []))
        page.keyboard.insert_text(code)  # typed as a paste: no auto-indent on top of ours
        page.keyboard.press("Shift+Enter")
        graded.first.locator(".jp-InputPrompt").click()
        page.keyboard.press("Shift+Enter")
        graded.first.locator(".jp-OutputArea-output").get_by_text(words["ok"]).wait_for()
        graded.first.scroll_into_view_if_needed()
        page.screenshot(path=shots / f"{lang}-6-lab-passed.png")

        # 4. Saved, graded from a terminal, then the start page's progress widget shows it.
        page.keyboard.press("ControlOrMeta+s")
        mine = Path(lab_server_root(base)) / "work" / "labs" / lang / "lab01_framing.ipynb"
        deadline = time.monotonic() + WAIT_MS / 1000
        while code not in _saved_sources(mine):
            assert time.monotonic() < deadline, "JupyterLab did not save the lab"
            time.sleep(0.2)
        graded_run = subprocess.run(
            [sys.executable, "-m", "mcpkit.course.cli", "check", str(mine)],
            cwd=mine.parents[3], capture_output=True, text=True, timeout=300)
        assert graded_run.returncode == 1, graded_run.stdout + graded_run.stderr  # 1 of 4 parts
        _open(page, base, token, "/lab/tree/work/START.ipynb")
        start = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
        cell = start.locator(".jp-CodeCell").filter(has_text=f'show("{lang}")')
        cell.locator(".cm-content").click()
        page.keyboard.press("Shift+Enter")
        widget = cell.locator(".jp-OutputArea-output")
        widget.get_by_text(PROGRESS[lang]["title"]).wait_for()
        for lab in ("lab01", "lab02"):
            row = widget.locator("tr").filter(has_text=f"{lab}_")
            for text in PROGRESS[lang][lab]:
                expect(row).to_contain_text(text)
        cell.scroll_into_view_if_needed()
        page.screenshot(path=shots / f"{lang}-7-progress.png")
    # Reported, not asserted: CI time is a budget, not a behaviour.
    print(f"{lang}: {time.monotonic() - started:.1f} s in the browser")


# -- MCP Apps: a tool's view, hosted by the notebook (mcpkit.app_widget) --------------------

APP_CELLS = [
    "from mcpkit import Host, apps\n"
    "from mcpkit.app_widget import AppView\n"
    "from mcpkit.examples import poll\n"
    "from mcpkit.grading import set_language\n"
    "set_language({lang!r})\n"
    "host = Host({{'mcpServers': {{'poll': {{'server': poll.server}}}}}},\n"
    "            client_options={{'capabilities': apps.CAPABILITIES}})\n"
    "host.start()",
    "view = AppView(host, 'poll_ask',\n"
    "               {{'question': 'Tea or coffee?', 'choices': ['tea', 'coffee']}},\n"
    "               log='view_{lang}.wire')\n"
    "view",
    "from mcpkit.wiretap import Trace\n"
    "print([entry['outcome'] for entry in view.bridge.audit],\n"
    "      len(Trace.from_file('view_{lang}.wire').filter(method='tools/call',\n"
    "                                                  kinds=['request'])))",
]

APP_WORDS = {
    "en": {"reset": "Reset the votes", "tell": "Tell the assistant", "about": "About MCP Apps",
           "yes": "Allow", "no": "Refuse", "may_change": "may change things",
           "messages": "Messages from the view"},
    "es": {"reset": "Poner los votos a cero", "tell": "Contárselo al asistente",
           "about": "Acerca de MCP Apps", "yes": "Permitir", "no": "Rechazar",
           "may_change": "puede cambiar cosas", "messages": "Mensajes de la vista"},
}


def _put_notebook(base: str, token: str, path: str, sources: list[str]) -> None:
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                       "language": "python"}},
        "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": s,
                   "outputs": [], "execution_count": None} for i, s in enumerate(sources)]}
    request = urllib.request.Request(
        f"{base}/api/contents/{path}?token={token}", method="PUT",
        data=json.dumps({"type": "notebook", "format": "json", "content": notebook}).encode(),
        headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).close()


@pytest.mark.parametrize("lang", ["en", "es"])
def test_an_mcp_apps_view_in_the_notebook(lang, lab_server, browser, shots):
    """The poll's board renders in its sandboxed iframe; its buttons make tools/call
    requests that the server answers; the host refuses what the view may not do."""
    base, token = lab_server
    words = APP_WORDS[lang]
    path = f"work/app_view_{lang}.ipynb"
    _put_notebook(base, token, path, [c.format(lang=lang) for c in APP_CELLS])
    with _page(browser, shots, f"app-{lang}", 1200) as page:
        _open(page, base, token, f"/lab/tree/{path}")
        _run_through(page, 1)
        frame = page.frame_locator(".mcpkit-app-frame")
        frame.locator("#question").get_by_text("Tea or coffee?").wait_for()
        frame.locator("#counts").get_by_text("tea: 0 · coffee: 0").wait_for()
        page.screenshot(path=shots / f"app-{lang}-1-board.png")

        # A click in the view: tools/call poll_vote, answered by the server, shown.
        frame.get_by_role("button", name="tea").click()
        frame.locator("#counts").get_by_text("tea: 1 · coffee: 0").wait_for()
        # ... and the view told the model (ui/update-model-context), shown in the notebook.
        page.locator(".mcpkit-app-context").get_by_text('"tea": 1').wait_for()

        # A destructive tool: the learner is asked; "no" reaches the view as a refusal.
        frame.get_by_role("button", name=words["reset"]).click()
        question = page.locator(".mcpkit-app-question")
        question.get_by_text(words["may_change"]).wait_for()
        page.screenshot(path=shots / f"app-{lang}-2-confirm.png")
        question.get_by_role("button", name=words["no"]).click()
        frame.locator("#status").get_by_text("declined").wait_for()
        frame.get_by_role("button", name=words["reset"]).click()
        question.get_by_role("button", name=words["yes"]).click()
        frame.locator("#counts").get_by_text("tea: 0 · coffee: 0").wait_for()

        # A message for the conversation; a link, refused by the learner.
        frame.get_by_role("button", name="coffee").click()
        frame.locator("#counts").get_by_text("tea: 0 · coffee: 1").wait_for()
        frame.get_by_role("button", name=words["tell"]).click()
        page.locator(".mcpkit-app-messages").get_by_text("coffee: 1").wait_for()
        frame.get_by_text(words["about"]).click()
        question.get_by_text("modelcontextprotocol.io").wait_for()
        question.get_by_role("button", name=words["no"]).click()
        frame.locator("#status").get_by_text("Link opening denied by user").wait_for()
        page.screenshot(path=shots / f"app-{lang}-3-messages.png")

        # What the host refuses, tried from inside the view.
        view = page.locator(".mcpkit-app-frame").element_handle().content_frame()
        refused = view.evaluate("request('tools/call', {name: 'poll_close', arguments: {}})"
                                ".then(() => 'called', (e) => e.code)")
        assert refused == -32000  # a tool for the model only
        violation = view.evaluate(
            """(url) => new Promise((done) => {
                 document.addEventListener('securitypolicyviolation',
                   (e) => done('csp ' + e.effectiveDirective));
                 fetch(url).then(() => done('fetched'), () => {});
                 setTimeout(() => done('no violation'), 5000);
               })""", f"{base}/api/status")
        assert violation == "csp connect-src"  # an origin the view did not declare
        before = page.url
        navigated = view.evaluate(
            "() => { try { window.top.location.href = 'https://example.com/'; "
            "return 'no error'; } catch (e) { return e.name; } }")
        page.wait_for_timeout(500)
        assert page.url == before, navigated  # the notebook stayed where it was
        cookie = view.evaluate("() => { try { return document.cookie; } "
                               "catch (e) { return e.name; } }")
        assert cookie == "SecurityError"  # an opaque origin: no cookies of the notebook's

        # The kernel's record of the view's calls, printed by the next cell.
        panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
        panel.locator(".jp-Cell").nth(2).locator(".jp-InputPrompt").click()
        page.keyboard.press("Shift+Enter")
        panel.locator(".jp-Cell").nth(2).locator(".jp-OutputArea-output").get_by_text(
            "['ok', 'declined', 'ok', 'ok', 'refused'] 5").wait_for()  # and 5 on the wire
        page.screenshot(path=shots / f"app-{lang}-4-audit.png")


def test_apps_of_official_peers_in_the_notebook(lab_server, browser, shots, node):
    """Interop, two peers under the notebook host at once. The ext-apps project's own example
    server (npm, pinned in interop/package-lock.json), whose view is built on the official
    app-side library (its App class): the handshake, a tool call from the view, a message, a
    log line and a link. And an app served by the official Python SDK
    (tests/servers/sdk_apps_server.py): a click that calls its app-only tool."""
    base, token = lab_server
    basic = (ROOT / "interop" / "node_modules" / "@modelcontextprotocol"
             / "server-basic-vanillajs" / "dist" / "index.js")
    sdk = ROOT / "tests" / "servers" / "sdk_apps_server.py"
    cells = [
        "from mcpkit import Host, apps\n"
        "from mcpkit.app_widget import AppView\n"
        f"host = Host({{'mcpServers': {{\n"
        f"    'basic': {{'command': {node!r}, 'args': [{str(basic)!r}, '--stdio']}},\n"
        f"    'sdk': {{'command': {sys.executable!r}, 'args': [{str(sdk)!r}]}}}}}},\n"
        "    client_options={'capabilities': apps.CAPABILITIES})\n"
        "host.start()",
        "view = AppView(host, 'get-time', {})\nview",
        "tally = AppView(host, 'tally_show', {})\ntally",
        "print([(e['tool'], e['outcome']) for e in view.bridge.audit], view.bridge.log,\n"
        "      view.bridge.messages, [e['outcome'] for e in tally.bridge.audit])",
    ]
    path = "work/app_view_peers.ipynb"
    _put_notebook(base, token, path, cells)
    with _page(browser, shots, "peers", 1200) as page:
        _open(page, base, token, f"/lab/tree/{path}")
        _run_through(page, 2)
        frame = page.frame_locator(".mcpkit-app-frame >> nth=0")
        question = page.locator(".mcpkit-app").nth(0).locator(".mcpkit-app-question")
        time_shown = frame.locator("#server-time")
        time_shown.get_by_text(re.compile(r"\d{4}-\d\d-\d\dT")).wait_for()  # tool-result
        first = time_shown.inner_text()
        # callServerTool -> tools/call. The tool says nothing of itself (no annotations), so
        # the host asks first (lesson 10's rule); while it asks, the view's other messages
        # still go through.
        frame.locator("#get-time-btn").click()
        question.get_by_text("get-time").wait_for()
        frame.locator("#message-text").fill("hello from the official view")
        frame.locator("#send-message-btn").click()
        page.locator(".mcpkit-app-messages").get_by_text("hello from the official view") \
            .wait_for()
        question.get_by_role("button", name="Allow").click()
        frame.locator("#server-time").filter(has_not_text=first).wait_for()
        frame.locator("#log-text").fill("a log line")
        frame.locator("#send-log-btn").click()
        frame.locator("#open-link-btn").click()
        question.get_by_text("https://modelcontextprotocol.io/").wait_for()
        page.screenshot(path=shots / "peers-1-ext-apps-view.png")
        question.get_by_role("button", name="Refuse").click()

        tally = page.frame_locator(".mcpkit-app-frame >> nth=1")
        tally.locator("#count").get_by_text("0").wait_for()  # the SDK's tool result
        tally.get_by_role("button", name="+1").click()
        page.locator(".mcpkit-app").nth(1).locator(".mcpkit-app-question") \
            .get_by_role("button", name="Allow").click()
        tally.locator("#count").get_by_text("1").wait_for()  # the SDK server counted it
        page.locator(".mcpkit-app").nth(1).scroll_into_view_if_needed()
        page.screenshot(path=shots / "peers-2-sdk-view.png")

        panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
        panel.locator(".jp-Cell").nth(3).locator(".jp-InputPrompt").click()
        page.keyboard.press("Shift+Enter")
        printed = panel.locator(".jp-Cell").nth(3).locator(".jp-OutputArea-output")
        printed.get_by_text("[('get-time', 'ok')]").wait_for()
        assert "a log line" in printed.inner_text()
        assert printed.inner_text().rstrip().endswith("['ok']")
        page.screenshot(path=shots / "peers-3-audit.png")
