"""Checks for the course's graded cells, with feedback in the learner's language.

The shared machinery (language, cases, reports, time limits, the differential engine) is in
:mod:`mcpkit.grading.core`; the checks of each lab are in their own module (``lab01`` for
framing, ``lab02`` for JSON-RPC, ...), so the lab you are working on has one file of checks
to read. Graded cells call the names re-exported here.
"""

from __future__ import annotations

from .. import deprecations
from . import lab01, lab02, lab03, lab04, lab05, lab06, lab07, lab08, lab09, lab10, lab11
from .core import (
    LANGUAGES,
    CaseResult,
    ChecksFailed,
    Err,
    _,
    case,
    get_language,
    predicate,
    run_checks,
    set_language,
)
from .lab00 import check_setup
from .lab01 import (
    check_content_length_decoder,
    check_encoders,
    check_ndjson_decoder,
    check_parse_message,
)
from .lab02 import check_call_tool, check_classify, check_error_for
from .lab03 import check_dispatcher, check_serve
from .lab04 import NOTES_SEED, check_note_resources, check_note_tools, check_notes_server
from .lab05 import check_end_of_stream, check_requests, check_timeouts
from .lab05 import server_command as lab05_server_command
from .lab06 import check_backoff, check_merge, check_namespace, check_supervisor
from .lab06 import server_command as lab06_server_command
from .lab07 import check_discover_result, check_next_step, check_request_era, check_request_state
from .lab08 import (
    check_notes_front,
    check_refusal,
    drive,
    http_outcome,
    modern_headers,
    notes_front_server,
)
from .lab09 import check_harness, check_notes_port, check_reference_host
from .lab09 import peers as lab09_peers
from .lab09 import server_command as lab09_server_command
from .lab10 import check_agent_loop, check_calls_and_results, check_tool_formats
from .lab11 import check_app_server, check_view_router, check_what_a_server_says
from .sandbox import guarded as _guarded

# Every checker first reads what its graded cell hands it, as the class grader would.
for _name in [n for n in list(globals()) if n.startswith("check_") and n != "check_setup"]:
    globals()[_name] = _guarded(globals()[_name])
del _name

#: Per lab: mcpkit names its exercise code may not use (the class grader flags them).
OFF_LIMITS: dict[str, dict[str, set[str]]] = {
    "lab01_framing": lab01.OFF_LIMITS,
    "lab02_jsonrpc": lab02.OFF_LIMITS,
    "lab03_dispatch": lab03.OFF_LIMITS,
    "lab04_server": lab04.OFF_LIMITS,
    "lab07_modern": lab07.OFF_LIMITS,
    "lab08_http": lab08.OFF_LIMITS,
    "lab05_client": lab05.OFF_LIMITS,
    "lab06_host": lab06.OFF_LIMITS,
    "lab09_real_world": lab09.OFF_LIMITS,
    "lab10_host_model": lab10.OFF_LIMITS,
    "lab11_apps": lab11.OFF_LIMITS,
}


def lab09_notes_command() -> list[str]:
    """The command that runs mcpkit's notes server (lab 09's setup cell uses it)."""
    return list(lab09.NOTES_COMMAND)


# The checks' own servers log and sample in the modern era on purpose: no warnings in a lab.
deprecations.silence()

__all__ = [
    "OFF_LIMITS",
    "LANGUAGES",
    "NOTES_SEED",
    "CaseResult",
    "ChecksFailed",
    "Err",
    "_",
    "case",
    "drive",
    "http_outcome",
    "modern_headers",
    "notes_front_server",
    "check_backoff",
    "check_agent_loop",
    "check_app_server",
    "check_call_tool",
    "check_calls_and_results",
    "check_classify",
    "check_content_length_decoder",
    "check_discover_result",
    "check_dispatcher",
    "check_encoders",
    "check_merge",
    "check_namespace",
    "check_end_of_stream",
    "check_harness",
    "check_notes_port",
    "check_reference_host",
    "check_error_for",
    "check_next_step",
    "check_ndjson_decoder",
    "check_note_resources",
    "check_notes_front",
    "check_note_tools",
    "check_notes_server",
    "check_parse_message",
    "check_refusal",
    "check_request_era",
    "check_request_state",
    "check_requests",
    "check_serve",
    "check_setup",
    "check_supervisor",
    "check_timeouts",
    "check_tool_formats",
    "check_view_router",
    "check_what_a_server_says",
    "get_language",
    "lab05_server_command",
    "lab06_server_command",
    "lab09_notes_command",
    "lab09_peers",
    "lab09_server_command",
    "predicate",
    "run_checks",
    "set_language",
]
