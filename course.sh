#!/usr/bin/env bash
# The course's one entry point.
#   ./course.sh lab    open the course in JupyterLab (sets up .venv on first use), on the
#                      start page of work/, the learner's own copies (made once, ignored by git)
#   ./course.sh grade lab01   grade your copy of a lab, per part (language from the notebook)
#   ./course.sh progress      your last grade of every lab and part, and the lessons you ran
#   ./course.sh submit lab01 --to DIR   hand your graded lab in to the class's exchange folder
#   ./course.sh test   run the whole test suite, exactly as CI does
#   ./course.sh setup  only create/update .venv
# Needs python3 (3.11+) on PATH. Everything else is installed into ./.venv.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

VENV="${MCPKIT_VENV:-.venv}"
PY="${PYTHON:-python3}"

setup() {
    local extras="$1"
    if [ ! -x "$VENV/bin/python" ]; then
        echo "course.sh: creating $VENV" >&2
        "$PY" -m venv "$VENV"
        "$VENV/bin/python" -m pip install -q --upgrade pip
    fi
    # Reinstall only when pyproject.toml or the wanted extras changed.
    local stamp="$VENV/.mcpkit-installed"
    local want
    want="$extras $(sha256sum pyproject.toml | cut -c1-16)"
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        echo "course.sh: installing mcpkit[$extras] into $VENV" >&2
        "$VENV/bin/python" -m pip install -q -e ".[$extras]"
        # Pulled in by jupyterlab's jsonschema extras; it rebuilds a grammar on every import
        # (~4 s per notebook run) and nothing here needs it.
        "$VENV/bin/python" -m pip uninstall -q -y rfc3987-syntax >/dev/null 2>&1 || true
        echo "$want" >"$stamp"
    fi
    # JupyterLab settings for the course: no news or update pop-ups over the lessons.
    local settings="$VENV/share/jupyter/lab/settings"
    mkdir -p "$settings"
    [ -f "$settings/overrides.json" ] || cat >"$settings/overrides.json" <<'JSON'
{
  "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}
}
JSON
}

# The course's command: ./.venv's, else one already installed (a JupyterHub or Binder image
# built from binder/ has mcpkit in its environment), else a new ./.venv's.
course_cmd() {
    if [ -x "$VENV/bin/mcpkit-course" ]; then
        echo "$VENV/bin/mcpkit-course"
    elif command -v mcpkit-course >/dev/null; then
        command -v mcpkit-course
    else
        setup "course,http" >&2
        echo "$VENV/bin/mcpkit-course"
    fi
}

cmd="${1:-lab}"
shift || true
case "$cmd" in
    lab)
        if [ -n "${JUPYTERHUB_API_URL:-}" ]; then
            # On a JupyterHub, JupyterLab is running already (this is its terminal): only make
            # the working copies.
            "$(course_cmd)" workspace
            echo "course.sh: open work/START.ipynb (in $PWD) in your JupyterLab /" \
                 "abre work/START.ipynb (en $PWD) en tu JupyterLab" >&2
            exit 0
        fi
        setup "course,http"
        # Terminals opened in JupyterLab then find the course's pytest and mcpkit commands.
        case "$VENV" in /*) bin="$VENV/bin" ;; *) bin="$PWD/$VENV/bin" ;; esac
        export PATH="$bin:$PATH"
        # Learners work in work/: the built notebooks stay pristine for the tests and grader.
        "$VENV/bin/mcpkit-course" workspace
        extra=()
        # Jupyter refuses to run as root unless told; containers often run as root.
        [ "$(id -u)" -eq 0 ] && extra+=(--allow-root)
        exec "$VENV/bin/jupyter" lab --notebook-dir="$PWD" \
            --LabApp.default_url="/lab/tree/work/START.ipynb" "${extra[@]}" "$@"
        ;;
    grade)
        # Any existing install will do (lab's or test's): grading needs no extra package.
        exec "$(course_cmd)" check "$@"
        ;;
    progress|submit)
        exec "$(course_cmd)" "$cmd" "$@"
        ;;
    test)
        setup "dev,course,http"
        exec "$VENV/bin/python" -m pytest "$@"
        ;;
    setup)
        setup "dev,course,http"
        ;;
    *)
        echo "usage: ./course.sh [lab|grade LAB|progress|submit LAB --to DIR|test|setup]" \
             "[extra pytest or jupyter args]" >&2
        exit 2
        ;;
esac
