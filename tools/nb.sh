#!/usr/bin/env bash
# Dev helper: rebuild notebooks from their jupytext percent sources (nbs/NAME.pct.py, git-ignored), run them with
# nbdev's runner saving outputs, clean them, and export the library.
#   tools/nb.sh nbs/01_messages.pct.py [...]
# To get a percent source back from a notebook: .venv/bin/jupytext --to py:percent -o nbs/NAME.pct.py nbs/NAME.ipynb
set -euo pipefail
cd "$(dirname "$0")/.."
export LITELLM_LOCAL_MODEL_COST_MAP=True
for src in "$@"; do
  nb="${src%.pct.py}.ipynb"
  # --update keeps the cell ids (and so the exported cell markers) of cells that already exist: small diffs, clean merges
  if [ -f "$nb" ]; then .venv/bin/jupytext --quiet --update --to ipynb -o "$nb" "$src"; else .venv/bin/jupytext --quiet --to ipynb -o "$nb" "$src"; fi
  .venv/bin/nbdev-export
  .venv/bin/python -c "import sys; from nbdev.test import test_nb; from pathlib import Path; ok,t=test_nb(Path(sys.argv[1]).absolute(), save=True); print(sys.argv[1], 'ok' if ok else 'FAILED', f'{t:.1f}s'); sys.exit(0 if ok else 1)" "$nb"
  .venv/bin/nbdev-clean --fname "$nb"
done
.venv/bin/nbdev-export
