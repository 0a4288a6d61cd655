"""The English-verb server: a small, closed-world tool set for language learners.

Verbs outside its table are answered with ``isError`` results (the model sees the
problem and can say so); an unknown *tool* is a protocol error, because that is a bug in
the caller, not something the model asked about.
"""

from __future__ import annotations

from typing import Literal

from mcpkit import Server
from mcpkit.content import error_result

server = Server("verbs", "1.0.0", title="English verbs",
                instructions="Conjugates and translates common English verbs.")

# base: (past simple, past participle, Spanish infinitive); None = regular.
VERBS: dict[str, tuple[str | None, str | None, str]] = {
    "be": ("was/were", "been", "ser / estar"),
    "have": ("had", "had", "tener / haber"),
    "do": ("did", "done", "hacer"),
    "go": ("went", "gone", "ir"),
    "say": ("said", "said", "decir"),
    "get": ("got", "got", "obtener"),
    "make": ("made", "made", "hacer"),
    "know": ("knew", "known", "saber / conocer"),
    "think": ("thought", "thought", "pensar"),
    "take": ("took", "taken", "tomar"),
    "see": ("saw", "seen", "ver"),
    "come": ("came", "come", "venir"),
    "give": ("gave", "given", "dar"),
    "write": ("wrote", "written", "escribir"),
    "read": ("read", "read", "leer"),
    "speak": ("spoke", "spoken", "hablar"),
    "eat": ("ate", "eaten", "comer"),
    "run": ("ran", "run", "correr"),
    "send": ("sent", "sent", "enviar"),
    "begin": ("began", "begun", "empezar"),
    "work": (None, None, "trabajar"),
    "play": (None, None, "jugar"),
    "study": (None, None, "estudiar"),
    "call": (None, None, "llamar"),
    "ask": (None, None, "preguntar"),
    "listen": (None, None, "escuchar"),
    "stop": (None, None, "detener"),
    "try": (None, None, "intentar"),
    "watch": (None, None, "mirar"),
    "live": (None, None, "vivir"),
}

Subject = Literal["I", "you", "he", "she", "it", "we", "they"]
THIRD_SINGULAR = {"he", "she", "it"}


def _unknown(verb: str):
    return error_result(f"'{verb}' is not in this server's verb list; known verbs: "
                        + ", ".join(sorted(VERBS)))


def _regular_past(verb: str) -> str:
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ied"
    if verb in ("stop",):
        return verb + verb[-1] + "ed"
    return verb + "ed"


def _third_person(verb: str) -> str:
    special = {"be": "is", "have": "has", "do": "does", "go": "goes"}
    if verb in special:
        return special[verb]
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _present(verb: str, subject: str) -> str:
    if verb == "be":
        return {"I": "am", "he": "is", "she": "is", "it": "is"}.get(subject, "are")
    return _third_person(verb) if subject in THIRD_SINGULAR else verb


def _past(verb: str, subject: str) -> str:
    if verb == "be":
        return "was" if subject in THIRD_SINGULAR | {"I"} else "were"
    past = VERBS[verb][0]
    return past or _regular_past(verb)


@server.tool(read_only=True)
def conjugate(verb: str, subject: Subject = "I",
              tense: Literal["present", "past", "future"] = "present"):
    """Conjugate an English verb for a subject and tense.

    Args:
        verb: The base form, e.g. "go".
        subject: The grammatical subject.
        tense: present, past or future.
    """
    verb = verb.strip().lower()
    if verb not in VERBS:
        return _unknown(verb)
    if tense == "present":
        form = _present(verb, subject)
    elif tense == "past":
        form = _past(verb, subject)
    else:
        form = f"will {verb}"
    return f"{subject} {form}"


@server.tool(read_only=True, structured=True)
def lookup_irregular_verb(verb: str) -> dict[str, str | bool]:
    """Past simple and past participle of a verb, and whether it is irregular."""
    verb = verb.strip().lower()
    if verb not in VERBS:
        return _unknown(verb)
    past, participle, _ = VERBS[verb]
    irregular = past is not None
    return {"verb": verb, "irregular": irregular,
            "past": past or _regular_past(verb), "participle": participle or _regular_past(verb)}


@server.tool(read_only=True)
def lookup_spanish(verb: str) -> str:
    """The Spanish infinitive for an English verb."""
    verb = verb.strip().lower()
    if verb not in VERBS:
        return _unknown(verb)
    return f"{verb} -> {VERBS[verb][2]}"


@server.tool(read_only=True, structured=True)
def check_subject_verb_agreement(subject: Subject, verb_form: str) -> dict[str, str | bool]:
    """Check that a present-tense verb form agrees with its subject ("she go" -> wrong).

    Args:
        subject: The grammatical subject.
        verb_form: The verb as written, e.g. "goes".
    """
    form = verb_form.strip().lower()
    base = next((v for v in VERBS if form in (v, _third_person(v), _present(v, subject))), None)
    if base is None:
        return _unknown(form)
    expected = _present(base, subject)
    return {"subject": subject, "verb_form": form, "agrees": form == expected,
            "expected": expected}


if __name__ == "__main__":
    server.run()
