"""Widgets for the course notebooks: see the protocol instead of reading about it.

- :class:`ToolExplorer`: pick a tool of a client or a host, fill a form made from its
  ``inputSchema``, call it, see the result rendered by content type, with a progress bar;
- :class:`WireInspector`: the timeline of a session's messages (recorded by the relay of
  :mod:`mcpkit.wiretap`), with filters, each message's JSON, and exports as a Mermaid
  sequence diagram or as the literal bytes;
- :class:`HostDashboard`: a host's servers (state, era, tools, restarts, stderr), live.

Needs ipywidgets (``pip install mcpkit[widgets]``); ``import mcpkit`` never imports this
module. Labels follow the notebook's language (:func:`mcpkit.grading.get_language`).

Each widget displays itself as the live widget where a widget manager runs (JupyterLab),
and as HTML and plain text everywhere else (a saved notebook, GitHub's viewer, nbval, which
compares the text). The text leaves out whatever changes from run to run (times, pids), so a
notebook that shows a widget still gives the same stored output on every run.

The forms and renderings are plain functions (:func:`schema_fields`,
:func:`arguments_from`, :func:`result_html`), usable and testable without a browser.
"""

from __future__ import annotations

import base64
import html
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ipywidgets as w

from .wiretap import FROM_SERVER, TO_SERVER, Trace, timeline_html

__all__ = ["HostDashboard", "ToolExplorer", "WireInspector", "arguments_from", "result_html",
           "result_text", "schema_fields", "show_result"]

_LABELS = {
    "en": {
        "tool": "Tool", "call": "Call", "calling": "calling…", "result": "Result",
        "error": "tool error (isError)", "required": "required", "no_tools": "no tools",
        "json": "JSON", "one_per_line": "one item per line", "bad_json": "not valid JSON",
        "bad_number": "not a number", "missing": "is required", "structured":
        "structured content", "image": "image", "audio": "audio", "resource": "resource",
        "link": "resource link", "tools_of": "tools of", "direction": "Direction", "all": "all",
        "to_server": "client → server", "dir": "dir", "from_server": "server → client",
        "method": "Method",
        "hide_notifications": "hide notifications", "refresh": "Refresh", "mermaid": "Mermaid",
        "bytes": "Bytes", "messages": "messages", "server": "server", "state": "state",
        "era": "era", "tools": "tools", "restarts": "restarts", "stderr": "last stderr lines",
        "servers": "servers", "protocol_error": "protocol error", "kind": "kind", "id": "id",
        "size": "size", "latency": "latency", "explorer": "Tool explorer", "inspector":
        "Wire inspector", "dashboard": "Host dashboard", "arguments": "arguments",
    },
    "es": {
        "tool": "Herramienta", "call": "Llamar", "calling": "llamando…", "result": "Resultado",
        "error": "error de herramienta (isError)", "required": "obligatorio",
        "no_tools": "no hay herramientas", "json": "JSON", "one_per_line":
        "un elemento por línea", "bad_json": "no es JSON válido", "bad_number":
        "no es un número", "missing": "es obligatorio", "structured": "salida estructurada",
        "image": "imagen", "audio": "audio", "resource": "recurso", "link":
        "enlace a recurso", "tools_of": "herramientas de", "direction": "Dirección",
        "all": "todas", "dir": "dir.", "to_server": "cliente → servidor", "from_server":
        "servidor → cliente", "method": "Método", "hide_notifications":
        "ocultar notificaciones", "refresh": "Actualizar", "mermaid": "Mermaid",
        "bytes": "Bytes", "messages": "mensajes", "server": "servidor", "state": "estado",
        "era": "era", "tools": "herramientas", "restarts": "reinicios", "stderr":
        "últimas líneas de stderr", "servers": "servidores", "protocol_error":
        "error de protocolo", "kind": "tipo", "id": "id", "size": "tamaño", "latency":
        "latencia", "explorer": "Explorador de herramientas", "inspector":
        "Inspector de la conexión", "dashboard": "Panel del host", "arguments": "argumentos",
    },
}


def _labels(lang: str | None = None) -> dict[str, str]:
    if lang is None:
        from .grading import get_language  # the notebook's language, set in its setup cell

        lang = get_language()
    return _LABELS.get(lang, _LABELS["en"])


# --------------------------------------------------------------------------- forms


@dataclass(frozen=True)
class Field:
    """One argument of a tool, as the form shows it."""

    name: str
    kind: str  # string | number | integer | boolean | enum | array | json
    required: bool
    default: Any = None
    choices: tuple[Any, ...] = ()  # enum values
    items: str = "string"  # for arrays: the kind of each item
    description: str = ""


_SIMPLE = {"string", "number", "integer", "boolean"}


def _type_of(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]: the first real type
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def schema_fields(schema: Mapping[str, Any] | None) -> list[Field]:
    """The form for a tool's ``inputSchema``: required fields first, each in schema order.

    Anything the form has no widget for (objects, arrays of objects, unions) is a JSON
    text field: the schema is open-ended, the form is not.
    """
    schema = schema or {}
    required = set(schema.get("required", []))
    fields = []
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, Mapping) else {}
        kind = _type_of(prop)
        description = str(prop.get("description", ""))
        default = prop.get("default")
        if "enum" in prop:
            fields.append(Field(name, "enum", name in required, default,
                                tuple(prop["enum"]), description=description))
        elif kind in _SIMPLE:
            fields.append(Field(name, kind, name in required, default,
                                description=description))
        elif kind == "array" and _type_of(prop.get("items") or {}) in _SIMPLE:
            fields.append(Field(name, "array", name in required, default,
                                items=_type_of(prop["items"]) or "string",
                                description=description))
        else:
            fields.append(Field(name, "json", name in required, default,
                                description=description))
    return sorted(fields, key=lambda f: not f.required)  # sorted() is stable


def _convert(kind: str, text: str, labels: Mapping[str, str]) -> Any:
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError(labels["bad_number"]) from None
    if kind == "number":
        try:
            return float(text)
        except ValueError:
            raise ValueError(labels["bad_number"]) from None
    if kind == "boolean":
        return text.strip().lower() in ("true", "1", "yes", "sí", "si")
    return text


def arguments_from(fields: Sequence[Field], values: Mapping[str, Any],
                   lang: str | None = None) -> dict[str, Any]:
    """The ``arguments`` of a call from the form's raw values (text, numbers, booleans).

    Empty optional fields are left out, so the server applies its own defaults. Raises
    ``ValueError("name: why")`` for the first field that cannot be used.
    """
    labels = _labels(lang)
    out: dict[str, Any] = {}
    for f in fields:
        value = values.get(f.name)
        empty = value is None or (isinstance(value, str) and not value.strip())
        if empty:
            if f.required and f.kind != "boolean":
                raise ValueError(f"{f.name}: {labels['missing']}")
            continue
        try:
            if f.kind == "array":
                lines = value if isinstance(value, list) else str(value).splitlines()
                out[f.name] = [_convert(f.items, str(x), labels) for x in lines if str(x).strip()]
            elif f.kind == "json":
                try:
                    out[f.name] = json.loads(value) if isinstance(value, str) else value
                except ValueError:
                    raise ValueError(labels["bad_json"]) from None
            elif f.kind in ("integer", "number") and isinstance(value, str):
                out[f.name] = _convert(f.kind, value, labels)
            else:
                out[f.name] = value
        except ValueError as exc:
            raise ValueError(f"{f.name}: {exc}") from None
    return out


def _widget_for(f: Field, labels: Mapping[str, str]) -> w.Widget:
    label = f.name + (" *" if f.required else "")
    style = {"description_width": "initial"}
    layout = w.Layout(width="32em")
    tip = f.description or (labels["required"] if f.required else "")
    if f.kind == "boolean":
        return w.Checkbox(value=bool(f.default), description=label, tooltip=tip, indent=False)
    if f.kind == "enum":
        options = [("", None)] * (not f.required) + [(str(c), c) for c in f.choices]
        value = f.default if f.default in f.choices else options[0][1]
        return w.Dropdown(options=options, value=value, description=label, style=style,
                          tooltip=tip)
    if f.kind == "array":
        default = "\n".join(str(x) for x in f.default) if isinstance(f.default, list) else ""
        return w.Textarea(value=default, description=label, placeholder=labels["one_per_line"],
                          style=style, layout=layout, tooltip=tip)
    if f.kind == "json":
        default = json.dumps(f.default) if f.default is not None else ""
        return w.Textarea(value=default, description=label, placeholder=labels["json"],
                          style=style, layout=layout, tooltip=tip)
    # Numbers are typed as text: an empty optional number must stay empty, not become 0.
    default = "" if f.default is None else str(f.default)
    return w.Text(value=default, description=label, placeholder=f.description[:60],
                  style=style, layout=layout, tooltip=tip)


# --------------------------------------------------------------------------- results


def _tree(value: Any) -> str:
    """Structured content as nested lists, every branch open."""
    if isinstance(value, Mapping):
        items = "".join(f"<li><b>{html.escape(str(k))}</b>: {_tree(v)}</li>"
                        for k, v in value.items())
        return f"<ul class='mcpkit-tree'>{items}</ul>" if items else "{}"
    if isinstance(value, list):
        items = "".join(f"<li>{_tree(v)}</li>" for v in value)
        return f"<ol start='0' class='mcpkit-tree'>{items}</ol>" if items else "[]"
    return f"<code>{html.escape(json.dumps(value, ensure_ascii=False))}</code>"


def _block_html(block: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    kind = block.get("type")
    if kind == "text":
        return f"<pre class='mcpkit-text'>{html.escape(str(block.get('text', '')))}</pre>"
    if kind == "image":
        mime = html.escape(str(block.get("mimeType", "image/png")))
        data = str(block.get("data", ""))
        base64.b64decode(data, validate=True)  # refuse to put anything else in the src
        return (f"<img class='mcpkit-image' alt='{labels['image']}' "
                f"src='data:{mime};base64,{data}' style='image-rendering:pixelated;"
                f"min-width:48px;border:1px solid #ccc'>")
    if kind == "audio":
        mime = html.escape(str(block.get("mimeType", "audio/wav")))
        data = str(block.get("data", ""))
        base64.b64decode(data, validate=True)
        return f"<audio class='mcpkit-audio' controls src='data:{mime};base64,{data}'></audio>"
    if kind == "resource_link":
        uri = html.escape(str(block.get("uri", "")))
        name = html.escape(str(block.get("name") or block.get("uri", "")))
        return (f"<div class='mcpkit-link'>🔗 {labels['link']}: <a href='#' title='{uri}'>"
                f"{name}</a> <code>{uri}</code></div>")
    if kind == "resource":
        res = block.get("resource") or {}
        uri = html.escape(str(res.get("uri", "")))
        body = res.get("text")
        shown = (html.escape(body) if isinstance(body, str)
                 else f"({len(str(res.get('blob', '')))} base64)")
        return (f"<div class='mcpkit-resource'>📄 {labels['resource']} <code>{uri}</code>"
                f"<pre>{shown}</pre></div>")
    return f"<pre>{html.escape(json.dumps(block, indent=2, ensure_ascii=False))}</pre>"


def result_html(result: Mapping[str, Any], lang: str | None = None) -> str:
    """A ``tools/call`` result as HTML: each content block by its type, then the structured
    content as a tree; a tool error (``isError``) framed in red and named."""
    labels = _labels(lang)
    error = bool(result.get("isError"))
    parts = [_block_html(b, labels) for b in result.get("content") or []
             if isinstance(b, Mapping)]
    if "structuredContent" in result:
        parts.append(f"<div class='mcpkit-structured'><i>{labels['structured']}</i>"
                     f"{_tree(result['structuredContent'])}</div>")
    head = (f"<div class='mcpkit-is-error' style='color:#b00020;font-weight:bold'>"
            f"⚠ {labels['error']}</div>" if error else "")
    border = "#b00020" if error else "#2e7d32"
    return (f"<div class='mcpkit-result{' mcpkit-error' if error else ''}' style='border-left:"
            f"4px solid {border};padding:.3em .8em'>{head}{''.join(parts)}</div>")


def result_text(result: Mapping[str, Any], lang: str | None = None) -> str:
    """The same result as plain text (what nbval and a text viewer see)."""
    labels = _labels(lang)
    lines = [f"⚠ {labels['error']}"] if result.get("isError") else []
    for b in result.get("content") or []:
        kind = b.get("type")
        if kind == "text":
            lines.append(str(b.get("text", "")))
        elif kind in ("image", "audio"):
            lines.append(f"[{labels[kind]} {b.get('mimeType', '')}, "
                         f"{len(base64.b64decode(b.get('data', '')))} bytes]")
        elif kind == "resource_link":
            lines.append(f"[{labels['link']} {b.get('uri', '')}]")
        elif kind == "resource":
            lines.append(f"[{labels['resource']} {(b.get('resource') or {}).get('uri', '')}]")
    if "structuredContent" in result:
        lines.append(f"{labels['structured']}: "
                     + json.dumps(result["structuredContent"], ensure_ascii=False))
    return "\n".join(lines)


# --------------------------------------------------------------------------- widgets


class _View:
    """The display plumbing shared by the widgets: the live widget, plus HTML and text."""

    box: w.Widget

    def _text(self) -> str:
        raise NotImplementedError

    def _html(self) -> str:
        return f"<pre>{html.escape(self._text())}</pre>"

    def __repr__(self) -> str:
        return self._text()

    def _repr_html_(self) -> str:
        return self._html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        live = self.box._repr_mimebundle_(include=include, exclude=exclude) or {}
        if isinstance(live, tuple):  # anywidget's widgets give (data, metadata)
            live = live[0]
        bundle = dict(live)
        bundle["text/plain"] = self._text()
        bundle["text/html"] = self._html()
        return bundle


def _tools_of(source: Any) -> list[dict[str, Any]]:
    return source.tools() if hasattr(source, "tools") else source.list_tools()


def _name_of(source: Any) -> str:
    info = getattr(source, "server_info", None)
    if isinstance(info, Mapping) and info.get("name"):
        return str(info["name"])
    return type(source).__name__


class ToolExplorer(_View):
    """Pick a tool of ``source`` (a :class:`~mcpkit.Client` or :class:`~mcpkit.Host`), fill
    the form generated from its ``inputSchema``, press *Call*.

    The call runs on a thread of its own so that progress notifications move the bar while
    it runs; :meth:`call` does the same from code and waits for the result.
    """

    def __init__(self, source: Any, lang: str | None = None) -> None:
        self.source = source
        self.labels = _labels(lang)
        self.lang = lang
        self.tools = {t["name"]: t for t in _tools_of(source)}
        self.last_result: dict[str, Any] | None = None
        self._worker: threading.Thread | None = None
        names = list(self.tools)
        self.picker = w.Dropdown(options=names, value=names[0] if names else None,
                                 description=self.labels["tool"],
                                 style={"description_width": "initial"})
        self.description = w.HTML()
        self.form = w.VBox()
        self.button = w.Button(description=self.labels["call"], button_style="primary",
                               icon="play")
        self.progress = w.FloatProgress(value=0, min=0, max=1, layout=w.Layout(
            visibility="hidden", width="20em"))
        self.status = w.HTML()
        self.output = w.HTML()
        self.fields: list[Field] = []
        self.inputs: dict[str, w.Widget] = {}
        self.picker.observe(lambda _change: self._build_form(), names="value")
        self.button.on_click(lambda _button: self._start())
        self.box = w.VBox([w.HTML(f"<b>{self.labels['explorer']}</b> · {self.labels['tools_of']} "
                                  f"{html.escape(_name_of(source))}"),
                           self.picker, self.description, self.form,
                           w.HBox([self.button, self.progress, self.status]), self.output])
        self.box.add_class("mcpkit-tool-explorer")
        self._build_form()

    def _build_form(self) -> None:
        tool = self.tools.get(self.picker.value) or {}
        self.description.value = f"<i>{html.escape(tool.get('description') or '')}</i>"
        self.fields = schema_fields(tool.get("inputSchema"))
        self.inputs = {f.name: _widget_for(f, self.labels) for f in self.fields}
        for f, widget in self.inputs.items():
            widget.add_class(f"mcpkit-field-{f}")
        self.form.children = list(self.inputs.values())

    def values(self) -> dict[str, Any]:
        return {name: widget.value for name, widget in self.inputs.items()}

    def fill(self, **values: Any) -> ToolExplorer:
        """Set form fields from code (as a learner would type them)."""
        for name, value in values.items():
            self.inputs[name].value = value
        return self

    def _on_progress(self, params: Mapping[str, Any]) -> None:
        total = params.get("total")
        self.progress.max = float(total) if total else max(self.progress.max,
                                                            float(params["progress"]) + 1)
        self.progress.value = float(params.get("progress", 0))

    def _run(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        self.progress.value, self.progress.max = 0, 1
        self.progress.layout.visibility = "visible"
        self.status.value = self.labels["calling"]
        try:
            result = self.source.call_tool(name, arguments, on_progress=self._on_progress)
        except Exception as exc:  # a protocol error: not a result, say so in the widget
            self.output.value = (f"<div class='mcpkit-result mcpkit-protocol-error' style="
                                 f"'color:#b00020'>{self.labels['protocol_error']}: "
                                 f"{html.escape(str(exc))}</div>")
            self.last_result = None
            return None
        finally:
            self.progress.layout.visibility = "hidden"
            self.status.value = ""
        self.last_result = result
        self.output.value = result_html(result, self.lang)
        return result

    def _start(self) -> None:
        try:
            arguments = arguments_from(self.fields, self.values(), self.lang)
        except ValueError as exc:
            self.output.value = f"<span style='color:#b00020'>{html.escape(str(exc))}</span>"
            return
        if self._worker is not None and self._worker.is_alive():
            return  # one call at a time
        self._worker = threading.Thread(target=self._run, args=(self.picker.value, arguments),
                                        daemon=True)
        self._worker.start()

    def call(self, name: str | None = None, arguments: Mapping[str, Any] | None = None
             ) -> dict[str, Any] | None:
        """Call ``name`` (default: the tool picked) with ``arguments`` (default: the form's)
        and wait; the widget shows the result as a click would."""
        if name is not None:
            self.picker.value = name
        args = dict(arguments) if arguments is not None else arguments_from(
            self.fields, self.values(), self.lang)
        return self._run(self.picker.value, args)

    def _text(self) -> str:
        head = f"{self.labels['explorer']}: {len(self.tools)} {self.labels['tools_of']} " \
               f"{_name_of(self.source)}"
        lines = [head]
        for name, tool in self.tools.items():
            fields = schema_fields(tool.get("inputSchema"))
            args = ", ".join(f.name + ("*" if f.required else "") for f in fields)
            lines.append(f"  {name}({args})")
        if self.last_result is not None:
            lines += [f"{self.labels['result']}:", result_text(self.last_result, self.lang)]
        return "\n".join(lines)

    def _html(self) -> str:
        text = html.escape("\n".join(self._text().splitlines()[:len(self.tools) + 1]))
        out = f"<pre>{text}</pre>"
        if self.last_result is not None:
            out += result_html(self.last_result, self.lang)
        return out


class WireInspector(_View):
    """The timeline of the messages recorded in ``log`` by :func:`mcpkit.wiretap.command`.

    ``live=True`` re-reads the log twice a second while the widget lives (``close()`` stops
    it); otherwise press *Refresh* or call :meth:`refresh`.
    """

    def __init__(self, log: str | Path, lang: str | None = None, live: bool = False,
                 interval: float = 0.5) -> None:
        self.log = Path(log)
        self.labels = _labels(lang)
        self.trace = Trace()
        L = self.labels
        # "" rather than None for "all": a None value shows as an empty menu in JupyterLab.
        self.direction = w.Dropdown(options=[(L["all"], ""), (L["to_server"], TO_SERVER),
                                             (L["from_server"], FROM_SERVER)],
                                    description=L["direction"])
        self.method = w.Text(description=L["method"], placeholder="tools/")
        self.hide = w.Checkbox(description=L["hide_notifications"], indent=False)
        self.refresh_button = w.Button(description=L["refresh"], icon="refresh")
        self.mermaid_button = w.Button(description=L["mermaid"], icon="project-diagram")
        self.bytes_button = w.Button(description=L["bytes"], icon="file")
        self.count = w.HTML()
        self.timeline = w.HTML()
        self.export = w.Textarea(layout=w.Layout(width="100%", height="12em",
                                                 display="none"))
        for control in (self.direction, self.method, self.hide):
            control.observe(lambda _change: self._render(), names="value")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.mermaid_button.on_click(lambda _b: self._show_export(self.trace.to_mermaid()))
        self.bytes_button.on_click(lambda _b: self._show_export(
            self.trace.to_bytes().decode("utf-8", "backslashreplace")))
        self.box = w.VBox([w.HTML(f"<b>{L['inspector']}</b>"),
                           w.HBox([self.direction, self.method, self.hide]),
                           w.HBox([self.refresh_button, self.mermaid_button, self.bytes_button,
                                   self.count]),
                           self.timeline, self.export])
        self.box.add_class("mcpkit-wire-inspector")
        self._stop = threading.Event()
        self.refresh()
        if live:
            threading.Thread(target=self._follow, args=(interval,), daemon=True).start()

    def _follow(self, interval: float) -> None:
        size = -1
        while not self._stop.wait(interval):
            now = self.log.stat().st_size if self.log.exists() else 0
            if now != size:  # re-render only when the relay wrote something
                size = now
                self.refresh()

    def refresh(self) -> Trace:
        self.trace = Trace.from_file(self.log)
        self._render()
        return self.trace

    def shown(self) -> Trace:
        kinds = None
        if self.hide.value:
            kinds = {"request", "result", "error", "invalid"}
        return self.trace.filter(self.direction.value or None, self.method.value.strip(), kinds)

    def _headers(self) -> tuple[str, ...]:
        L = self.labels
        return ("#", L["dir"], L["kind"], L["method"], L["id"], L["size"], L["latency"])

    def _render(self) -> None:
        shown = self.shown()
        self.count.value = f"{len(shown)}/{len(self.trace)} {self.labels['messages']}"
        self.timeline.value = timeline_html(shown, latency=True, headers=self._headers())

    def _show_export(self, text: str) -> None:
        self.export.value = text
        self.export.layout.display = "block"

    def close(self) -> None:
        self._stop.set()
        self.box.close()

    def _text(self) -> str:
        shown = self.shown()
        return (f"{self.labels['inspector']}: {len(shown)} {self.labels['messages']}\n"
                + shown.table(latency=False, headers=self._headers()))

    def _html(self) -> str:
        return timeline_html(self.shown(), latency=False, headers=self._headers())


class HostDashboard(_View):
    """A :class:`~mcpkit.Host`'s servers: state, era, tools, restarts, last stderr lines.

    ``live=True`` refreshes every ``interval`` seconds while the widget lives.
    """

    def __init__(self, host: Any, lang: str | None = None, live: bool = False,
                 interval: float = 1.0, stderr_lines: int = 3) -> None:
        self.host = host
        self.labels = _labels(lang)
        self.stderr_lines = stderr_lines
        self.table = w.HTML()
        self.box = w.VBox([w.HTML(f"<b>{self.labels['dashboard']}</b>"), self.table])
        self.box.add_class("mcpkit-host-dashboard")
        self._stop = threading.Event()
        self.refresh()
        if live:
            threading.Thread(target=self._follow, args=(interval,), daemon=True).start()

    def _follow(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                self.refresh()
            except Exception:  # the host closed under us: stop quietly
                return

    def _stderr(self, name: str) -> list[str]:
        try:
            client = self.host.client(name, timeout=0)
        except Exception:  # failed, stopped or still starting: no session to ask
            return []
        return list(client.stderr_tail(self.stderr_lines))

    def rows(self) -> list[tuple[str, str, str, str, str, list[str]]]:
        return [(s.name, s.state, s.era or "-", str(s.tools), str(s.restarts),
                 self._stderr(s.name)) for s in self.host.status().values()]

    def refresh(self) -> None:
        self.table.value = self._table(self.rows())

    def _table(self, rows: list[tuple[str, str, str, str, str, list[str]]],
               stderr: bool = True) -> str:
        L = self.labels
        names = [L["server"], L["state"], L["era"], L["tools"], L["restarts"]]
        head = "".join(f"<th style='text-align:left;padding:0 .6em'>{h}</th>" for h in (
            names + [L["stderr"]] * stderr))
        body = []
        for name, state, era, tools, restarts, lines in rows:
            lines = lines if stderr else []
            colour = {"ready": "#2e7d32", "failed": "#b00020"}.get(state, "#f9a825")
            tail = html.escape("\n".join(lines))
            body.append(
                f"<tr><td style='padding:0 .6em'><b>{html.escape(name)}</b></td>"
                f"<td style='padding:0 .6em;color:{colour}'>● {html.escape(state)}</td>"
                f"<td style='padding:0 .6em'>{era}</td><td style='padding:0 .6em'>{tools}</td>"
                f"<td style='padding:0 .6em'>{restarts}</td>"
                + (f"<td><pre style='margin:0;font-size:85%'>{tail}</pre></td>" if stderr else "")
                + "</tr>")
        return f"<table>{''.join(['<tr>' + head + '</tr>', *body])}</table>"

    def close(self) -> None:
        self._stop.set()
        self.box.close()

    def _text(self) -> str:  # no stderr or pids: they change from run to run
        L = self.labels
        rows = [(L["server"], L["state"], L["era"], L["tools"], L["restarts"])]
        rows += [r[:5] for r in self.rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        return f"{L['dashboard']}\n" + "\n".join(
            "  ".join(c.ljust(n) for c, n in zip(r, widths, strict=True)).rstrip() for r in rows)

    def _html(self) -> str:  # stderr left out here too, for the same reason
        return self._table(self.rows(), stderr=False)


def show_result(result: Mapping[str, Any], lang: str | None = None) -> Any:
    """A tool result that displays itself by content type (HTML) or as text."""

    class _Result:
        def __repr__(self) -> str:
            return result_text(result, lang)

        def _repr_html_(self) -> str:
            return result_html(result, lang)

    return _Result()

