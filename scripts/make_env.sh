#!/usr/bin/env bash
# Create (or refresh) one environment under .venvs/: base | rl | llamafactory.
# Installs the top-level pins of requirements/NAME.in, constrained by the lock file requirements/NAME.lock.txt
# when it exists (every environment has one: installs repeat exactly), then this repo (editable) with the dev
# extras. Idempotent: re-running only fixes drift.
set -euo pipefail
name=${1:?usage: scripts/make_env.sh base|rl|llamafactory}
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
venv="$root/.venvs/$name"
cd "$root"
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install -q --upgrade "pip>=24"
lock=()
[ -f "requirements/$name.lock.txt" ] && lock=(-c "requirements/$name.lock.txt")
if [ "$name" = base ]; then
  "${pip[@]}" install -q "${lock[@]}" -e ".[dev]"
else
  # The other heavy environment's torch/CUDA files, hard-linked when the versions match (~5 GB of disk saved).
  for other in rl llamafactory; do
    [ "$other" = "$name" ] || "$venv/bin/python" scripts/share_packages.py ".venvs/$other" "$venv" "requirements/$name.lock.txt"
  done
  "${pip[@]}" install -q "${lock[@]}" -r "requirements/$name.in"
  "${pip[@]}" install -q "${lock[@]}" -e ".[dev,plot]"
fi
# Never let anything replace the pinned CPU-machine torch.
"$venv/bin/python" - <<'PY'
import importlib.metadata as m, sys
try:
    v = m.version("torch")
except m.PackageNotFoundError:
    sys.exit(0)
assert v.split("+")[0] in ("2.14.1", "2.13.0"), f"unexpected torch {v}"
PY
# An activated rl environment runs every command of the README; LLaMA-Factory's through this shim.
if [ "$name" = rl ]; then install -m 755 scripts/llamafactory-cli "$venv/bin/llamafactory-cli"; fi
touch "$venv/.ready"
echo "environment $name ready: $venv"
