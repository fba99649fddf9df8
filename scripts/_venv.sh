# Sourced by scripts/*: make (or reuse) the project's virtual environment and install
# annols into it with the extras named in $1 (e.g. "test" or "server").
venv="${ANNOLS_VENV:-.venv}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
pip_quiet() {  # pip, without the machine's warnings about absent local indexes
    "$venv/bin/python" -m pip "$@" 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
    return "${PIPESTATUS[0]}"
}
pip_quiet install -q --upgrade pip
pip_quiet install -q -e ".[$1]"
