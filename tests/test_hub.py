"""A class on a real JupyterHub: three learners, the course handed out by an nbgitpuller link,
each learner's lab run through the Jupyter server API, handed in, and the class graded.

Everything is real and on loopback: JupyterHub (PyPI, pinned in pyproject's ``hub`` extra)
with its proxy (configurable-http-proxy from npm, pinned in ``interop/``), its
SimpleLocalProcessSpawner (each learner's single-user server a process with a home folder of
its own) and its DummyAuthenticator. The instructor is a hub service with a token; each
learner's steps go through their own server the way JupyterLab's do: the nbgitpuller link,
the contents API to save the notebook, a kernel over the websocket to run its cells and, from
the lab's folder, the commands a learner types in a terminal. Every wait is bounded; the hub,
the proxy, the servers and their kernels are stopped at the end, and their process group
killed if anything is left.
"""

from __future__ import annotations

import csv
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
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

httpx = pytest.importorskip("httpx")
nbformat = pytest.importorskip("nbformat")
websocket = pytest.importorskip("websocket")  # websocket-client, a jupyter_server dependency
pytest.importorskip("jupyterhub")
pytest.importorskip("nbgitpuller")

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.prefix, "bin")
CHP = ROOT / "interop" / "node_modules" / "configurable-http-proxy" / "bin" / \
    "configurable-http-proxy"
#: (learner, language of the lab they fill, exercise cells they fill: None for all)
CLASS = [("ana", "en", None), ("bruno", "es", None), ("carla", "en", 0)]
LAB = "lab01_framing"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, timeout: float, log: Path | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.25)
    tail = log.read_text(errors="replace")[-4000:] if log and log.exists() else ""
    raise AssertionError(f"{what}: not after {timeout:g} s\n{tail}")


class Hub:
    def __init__(self, base: str, token: str, log: Path) -> None:
        self.base = base
        self.http = httpx.Client(base_url=base, timeout=30,
                                 headers={"Authorization": f"token {token}"})
        self.token = token
        self.log = log

    def api(self, method: str, path: str, **kwargs) -> httpx.Response:
        return self.http.request(method, "/hub/api" + path, **kwargs)

    def start_server(self, name: str) -> None:
        assert self.api("POST", f"/users/{name}").status_code in (201, 409)
        assert self.api("POST", f"/users/{name}/server").status_code in (201, 202)

        def ready() -> bool:
            user = self.api("GET", f"/users/{name}").json()
            return bool(user["servers"].get("", {}).get("ready"))

        wait_for(f"{name}'s server", ready, 90, self.log)


@pytest.fixture
def hub(tmp_path: Path, node: str) -> Iterator[Hub]:
    """A JupyterHub on loopback, its proxy from npm, learners' homes under tmp_path."""
    assert CHP.exists(), "configurable-http-proxy is not installed: interop/install.sh"
    port, hub_port, proxy_api = free_port(), free_port(), free_port()
    token = secrets.token_hex(24)
    here = tmp_path / "hub"
    here.mkdir()
    (tmp_path / "home").mkdir()
    config = here / "jupyterhub_config.py"
    config.write_text(f"""
c = get_config()  # noqa
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = "sqlite:///{here}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{here}/cookie_secret"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api}"
c.ConfigurableHTTPProxy.command = [{node!r}, {str(CHP)!r}]
c.ConfigurableHTTPProxy.pid_file = "{here}/proxy.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{tmp_path}/home/{{username}}"
c.Spawner.cmd = [{str(BIN / "jupyterhub-singleuser")!r}]
c.Spawner.args = {["--allow-root"] if os.geteuid() == 0 else []!r}  # CI runs as root
c.Spawner.environment = {{"PATH": {f"{BIN}:/usr/bin:/bin"!r}}}
c.Spawner.start_timeout = 90
c.Spawner.http_timeout = 90
c.JupyterHub.services = [{{"name": "instructor", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{
    "name": "instructor", "services": ["instructor"],
    "scopes": ["admin:users", "admin:servers", "access:servers"],
}}]
""")
    log = here / "hub.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env["PATH"] = f"{BIN}:{env.get('PATH', '/usr/bin:/bin')}"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(BIN / "jupyterhub"), "-f", str(config)], cwd=here,
                                stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    hub = Hub(base, token, log)
    try:
        def up() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"jupyterhub exited {proc.returncode}:\n"
                                     + log.read_text(errors="replace")[-4000:])
            try:
                return hub.api("GET", "/").status_code == 200
            except httpx.TransportError:
                return False

        wait_for("the hub", up, 90, log)
        yield hub
    finally:
        for name, _lang, _n in CLASS:
            try:
                hub.api("DELETE", f"/users/{name}/server", timeout=30)
            except httpx.HTTPError:
                pass
        proc.send_signal(signal.SIGTERM)  # the hub stops its proxy and the servers it spawned
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # anything left in the hub's session
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)
        hub.http.close()


class Kernel:
    """A kernel of a learner's server, driven over its websocket as JupyterLab does."""

    def __init__(self, hub: Hub, user: str, path: str) -> None:
        self.hub, self.user = hub, user
        r = hub.http.post(f"/user/{user}/api/kernels", json={"name": "python3", "path": path})
        assert r.status_code == 201, r.text
        self.id = r.json()["id"]
        url = hub.base.replace("http", "ws", 1) + f"/user/{user}/api/kernels/{self.id}/channels"
        self.ws = websocket.create_connection(
            url, header=[f"Authorization: token {hub.token}"], timeout=120)

    def run(self, code: str, timeout: float = 180) -> tuple[str, str | None]:
        """Execute ``code``; return (what it printed or displayed, the error's name or None)."""
        msg_id = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": self.user,
                       "session": uuid.uuid4().hex, "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True},
        }))
        text, error, idle, replied = [], None, False, False
        deadline = time.monotonic() + timeout
        while not (idle and replied):
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            msg = json.loads(self.ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["header"]["msg_type"], msg["content"]
            if kind == "stream":
                text.append(content["text"])
            elif kind in ("execute_result", "display_data"):
                text.append(content["data"].get("text/plain", ""))
            elif kind == "error":
                error = content["ename"]
                text.append(f"{content['ename']}: {content['evalue']}")
            elif kind == "status" and content["execution_state"] == "idle":
                idle = True
            elif kind == "execute_reply":
                replied = True
        return "".join(text), error

    def shell(self, *command: str) -> str:
        """A command as the learner types it in a terminal of that folder."""
        out, error = self.run(
            "import subprocess as _sp\n"
            f"_done = _sp.run({list(command)!r}, capture_output=True, text=True, timeout=300)\n"
            "print(_done.stdout + _done.stderr + f'[exit {_done.returncode}]')")
        assert error is None, out
        return out

    def close(self) -> None:
        self.ws.close()
        self.hub.http.delete(f"/user/{self.user}/api/kernels/{self.id}")


def git_pull_link(hub: Hub, user: str, repo: str, branch: str) -> tuple[str, str]:
    """The nbgitpuller link an instructor hands out, and the API its page calls."""
    query = urlencode({"repo": repo, "branch": branch, "targetpath": "mcpkit-course",
                       "urlpath": "lab/tree/mcpkit-course/work/START.ipynb"})
    return (f"/hub/user-redirect/git-pull?{query}", f"/user/{user}/git-pull/api?{query}")


def pull(hub: Hub, user: str, repo: str, branch: str) -> None:
    link, api = git_pull_link(hub, user, repo, branch)
    page = hub.http.get(f"/user/{user}/git-pull?" + link.split("?", 1)[1])
    assert page.status_code == 200 and "git-pull" in page.text.lower(), page.status_code
    events = []
    with hub.http.stream("GET", api, timeout=120) as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
                if events[-1].get("phase") in ("finished", "error"):
                    break
    assert events and events[-1]["phase"] == "finished", events[-3:]


def fill_through_the_contents_api(hub: Hub, user: str, lang: str, solved: int | None) -> None:
    """The learner types the solution into their copy and JupyterLab saves it."""
    base = f"/user/{user}/api/contents/mcpkit-course"
    mine_path = f"{base}/work/labs/{lang}/{LAB}.ipynb"
    mine = hub.http.get(mine_path, params={"content": 1}).json()["content"]
    solution = hub.http.get(f"{base}/solutions/{lang}/{LAB}.ipynb",
                            params={"content": 1}).json()["content"]
    answers = {c["id"]: c["source"] for c in solution["cells"]}
    exercises = [c for c in mine["cells"] if "exercise" in c["metadata"].get("tags", [])]
    for cell in exercises[:solved]:
        cell["source"] = answers[cell["id"]]
    r = hub.http.put(mine_path, json={"type": "notebook", "format": "json", "content": mine})
    assert r.status_code == 200, r.text


def run_the_lab(kernel: Kernel, hub: Hub, user: str, lang: str) -> list[tuple[str, str | None]]:
    """Every code cell of the learner's saved copy, in order, as Run All does."""
    nb = hub.http.get(f"/user/{user}/api/contents/mcpkit-course/work/labs/{lang}/{LAB}.ipynb",
                      params={"content": 1}).json()["content"]
    results = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            out, error = kernel.run(cell["source"])
            if "graded" in cell["metadata"].get("tags", []):
                results.append((out, error))
    return results


def test_a_class_on_jupyterhub_pulls_the_course_does_a_lab_hands_it_in_and_is_graded(
        hub, tmp_path):
    exchange_dir = tmp_path / "exchange"
    exchange_dir.mkdir()
    exchange_dir.chmod(0o1777)  # every learner writes there; the sticky bit keeps them apart
    repo = tmp_path / "course.git"  # what the instructor publishes: this commit of the course
    subprocess.run(["git", "clone", "-q", "--bare", str(ROOT), str(repo)], check=True,
                   timeout=120)
    branch = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--abbrev-ref", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    if branch == "HEAD":  # a detached checkout: publish it under a name
        branch = "course"
        subprocess.run(["git", "-C", str(repo), "branch", branch,
                        subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                                       capture_output=True, text=True).stdout.strip()],
                       check=True)
    for user, lang, solved in CLASS:
        hub.start_server(user)
        pull(hub, user, f"file://{repo}", branch)
        home = tmp_path / "home" / user
        assert (home / "mcpkit-course" / "course.sh").exists()
        setup = Kernel(hub, user, "mcpkit-course")
        try:
            made = setup.shell("bash", "course.sh", "lab")  # on a hub: the working copies only
            assert "[exit 0]" in made and "work/START.ipynb" in made, made
        finally:
            setup.close()
        fill_through_the_contents_api(hub, user, lang, solved)
        kernel = Kernel(hub, user, f"mcpkit-course/work/labs/{lang}")
        try:
            graded = run_the_lab(kernel, hub, user, lang)
            if solved is None:
                assert graded and all(err is None and "✓" in out for out, err in graded), graded
            else:
                assert graded and all(err is not None for _out, err in graded), graded
            sheet = kernel.shell("bash", "../../../course.sh", "grade", "lab01")
            expected = ("10.0/10" if solved is None else "0.0/10")
            assert expected in sheet and ("[exit 0]" if solved is None else "[exit 1]") in sheet
            shown = kernel.shell("bash", "../../../course.sh", "progress")
            assert re.search(rf"^[✓✗] lab01_framing +{re.escape(expected)} ", shown, re.M), shown
            handed = kernel.shell("bash", "../../../course.sh", "submit", "lab01", "--to",
                                  str(exchange_dir))
            assert "[exit 0]" in handed and f"/{user}/{LAB}/" in handed, handed
        finally:
            kernel.close()

    out = tmp_path / "grades.csv"
    canvas = tmp_path / "canvas.csv"
    done = subprocess.run(
        [str(BIN / "mcpkit-course"), "--root", str(ROOT), "grade", str(exchange_dir), "--out",
         str(out), "--canvas", str(canvas), "--jobs", "2"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with out.open() as f:
        rows = {r["learner"]: r for r in csv.DictReader(f)}
    assert {u: (r["lang"], r["status"], r["points"]) for u, r in rows.items()} == {
        "ana": ("en", "passed", "10.00"), "bruno": ("es", "passed", "10.00"),
        "carla": ("en", "failed", "0.00")}
    assert all(r["submitted"] for r in rows.values())
    with canvas.open() as f:
        assert [r["SIS Login ID"] for r in csv.DictReader(f)][1:] == ["ana", "bruno", "carla"]
    shutil.rmtree(repo)


def test_the_image_files_install_what_the_hub_test_ran():
    """binder/ (repo2docker's files) asks for a Python the package supports, installs the
    extras that exist, the hub's pins among them, and both scripts are valid bash."""
    import tomllib

    from packaging.specifiers import SpecifierSet

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", runtime), runtime
    assert runtime.removeprefix("python-") + ".0" in SpecifierSet(project["requires-python"])
    post_build = (ROOT / "binder" / "postBuild").read_text()
    extras = re.search(r'pip install --no-cache-dir "\.\[([a-z,]+)\]"', post_build).group(1)
    for extra in extras.split(","):
        assert extra in project["optional-dependencies"], extra
    import jupyterhub
    import nbgitpuller

    assert set(project["optional-dependencies"]["hub"]) == {
        f"jupyterhub=={jupyterhub.__version__}", f"nbgitpuller=={nbgitpuller.__version__}"}
    for script in ("postBuild", "start"):
        path = ROOT / "binder" / script
        assert os.access(path, os.X_OK), f"binder/{script} is not executable"
        assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
