"""The notes server: the running example of the course.

Tools list, search, create and delete notes; each note is also a resource at
``notes://{id}``; the ``review_note`` prompt asks a model to review one.
"""

from __future__ import annotations

import itertools
import threading
from typing import Annotated

from mcpkit import Server
from mcpkit.jsonrpc import InvalidParams

server = Server(
    "notes",
    "1.0.0",
    title="Notes",
    instructions="A small note store. Use notes_search before notes_create to avoid duplicates.",
)

_SEED = [
    ("Shopping", "Milk, eggs, coffee."),
    ("MCP", "Hosts run clients; each client talks to one server."),
    ("Spanish", "La solicitud y la respuesta llevan el mismo id."),
]
_lock = threading.Lock()
_notes: dict[str, dict[str, str]] = {}
_ids = itertools.count(1)


def reset() -> None:
    """Back to the three seed notes (used by tests and lessons)."""
    global _ids
    with _lock:
        _notes.clear()
        _ids = itertools.count(1)
        for title, body in _SEED:
            note_id = str(next(_ids))
            _notes[note_id] = {"id": note_id, "title": title, "body": body}


reset()


@server.tool(read_only=True, title="List notes")
def notes_list() -> list[dict[str, str]]:
    """List every note's id and title."""
    with _lock:
        return [{"id": n["id"], "title": n["title"]} for n in _notes.values()]


@server.tool(read_only=True, title="Search notes")
def notes_search(
    query: Annotated[str, "Words to look for, case-insensitive"], limit: int = 10
) -> list[dict[str, str]]:
    """Find notes whose title or body contains the query."""
    needle = query.casefold()
    with _lock:
        hits = [n for n in _notes.values()
                if needle in n["title"].casefold() or needle in n["body"].casefold()]
    return hits[:limit]


@server.tool(title="Create a note", destructive=False, idempotent=False)
def notes_create(title: str, body: str) -> str:
    """Create a note and return its id.

    Args:
        title: A short title.
        body: The text of the note.
    """
    if not title.strip():
        raise ValueError("a note needs a non-empty title")
    with _lock:
        note_id = str(next(_ids))
        _notes[note_id] = {"id": note_id, "title": title, "body": body}
    server.notify_resource_updated(f"notes://{note_id}")
    return f"created note {note_id}"


@server.tool(title="Delete a note", destructive=True, idempotent=True)
def notes_delete(id: str) -> str:
    """Delete a note for good.

    Args:
        id: The note's id, as notes_list shows it.
    """
    with _lock:
        if _notes.pop(id, None) is None:
            raise KeyError(f"no note with id {id}")
    server.notify_resource_updated(f"notes://{id}")
    return f"deleted note {id}"


@server.resource("notes://{id}", name="note", mime_type="text/markdown")
def read_note(id: str) -> str:
    """One note as Markdown."""
    with _lock:
        note = _notes[id]  # KeyError -> resource not found
    return f"# {note['title']}\n\n{note['body']}\n"


@server.prompt(title="Review a note")
def review_note(id: str) -> list[dict]:
    """Ask the model to review a note for clarity.

    Args:
        id: The note to review.
    """
    uri = f"notes://{id}"
    with _lock:
        if id not in _notes:
            raise InvalidParams(f"no note with id {id}", {"id": id})
    return [
        {"role": "user", "content": {"type": "resource", "resource": {
            "uri": uri, "mimeType": "text/markdown", "text": read_note(id)}}},
        {"role": "user", "content": {"type": "text",
                                     "text": "Review this note: is it clear and complete?"}},
    ]


@server.completion("prompt", "review_note")
@server.completion("resource", "notes://{id}")
def complete_note_id(argument: str, value: str, context: dict) -> list[str]:
    with _lock:
        return [note_id for note_id in _notes if note_id.startswith(value)]


if __name__ == "__main__":
    server.run()
