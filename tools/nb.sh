#!/usr/bin/env bash
# Dev helper: run notebooks with nbdev's runner saving outputs, clean them, and export the library.
#   tools/nb.sh nbs/01_messages.ipynb [...]    # a notebook edited in Jupyter (or anything that writes .ipynb)
#   tools/nb.sh nbs/01_messages.pct.py [...]   # its jupytext percent source: first updates the notebook from it
# Percent sources (nbs/NAME.pct.py) are git-ignored, so a fresh clone has none. To make one from a notebook:
#   .venv/bin/jupytext --to py:percent -o nbs/NAME.pct.py nbs/NAME.ipynb
set -euo pipefail
cd "$(dirname "$0")/.."
export LITELLM_LOCAL_MODEL_COST_MAP=True
usage="give notebooks as nbs/NAME.ipynb, or their jupytext percent sources as nbs/NAME.pct.py"
# Check every argument first: a typo must not leave the library half exported
for src in "$@"; do
  case "$src" in
    *.pct.py) [ -f "$src" ] || { echo "nb.sh: $src does not exist (percent sources are git-ignored; make it with: .venv/bin/jupytext --to py:percent -o $src ${src%.pct.py}.ipynb), or pass ${src%.pct.py}.ipynb itself" >&2; exit 2; } ;;
    *.ipynb) [ -f "$src" ] || { echo "nb.sh: $src does not exist" >&2; exit 2; } ;;
    *) echo "nb.sh: $src is neither a notebook nor a percent source: $usage" >&2; exit 2 ;;
  esac
done
for src in "$@"; do
  if [[ "$src" == *.pct.py ]]; then
    nb="${src%.pct.py}.ipynb"
    # --update keeps the cell ids (and so the exported cell markers) of cells that already exist: small diffs, clean merges
    if [ -f "$nb" ]; then .venv/bin/jupytext --quiet --update --to ipynb -o "$nb" "$src"; else .venv/bin/jupytext --quiet --to ipynb -o "$nb" "$src"; fi
  else nb="$src"; fi
  .venv/bin/nbdev-export
  .venv/bin/python -c "import sys; from nbdev.test import test_nb; from pathlib import Path; ok,t=test_nb(Path(sys.argv[1]).absolute(), save=True); print(sys.argv[1], 'ok' if ok else 'FAILED', f'{t:.1f}s'); sys.exit(0 if ok else 1)" "$nb"
  .venv/bin/nbdev-clean --fname "$nb"
done
.venv/bin/nbdev-export
