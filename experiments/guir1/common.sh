# Sourced by inference.sh and eval.sh (not run on its own): the repository root, the rl environment's python, and
# the checks both scripts make before working.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="$ROOT/.venvs/rl/bin/python"

# fail CODE MESSAGE: print MESSAGE on stderr and exit with CODE (2: bad arguments, 1: missing setup or data).
fail() {
    echo "$2" >&2
    exit "$1"
}

require_rl_python() {
    [[ -x "$PY" ]] || fail 1 "error: $PY not found; create the environments first with 'make setup'"
}
