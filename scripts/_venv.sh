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
echo "== installing annols[$1] into $venv (a first run downloads and installs Label Studio: a minute or two)" >&2
pip_quiet install -q --upgrade pip
printf "   pip is up to date; installing annols and its dependencies (a dot every 5 s) " >&2
pip_quiet install -q -e ".[$1]" &
pip_pid=$!
while kill -0 "$pip_pid" 2>/dev/null; do
    sleep 5
    if kill -0 "$pip_pid" 2>/dev/null; then printf "." >&2; fi
done
echo >&2
wait "$pip_pid"
echo "   installed: $("$venv/bin/python" -m pip --version | cut -d' ' -f1-2), annols $("$venv/bin/python" -c 'import annols; print(annols.__version__)')" >&2
