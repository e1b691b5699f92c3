"Run every notebook in nbs/ as `nbdev-test` does, one pytest test each, each in a fresh Python process."
import os, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
NBS = sorted((ROOT/'nbs').glob('*.ipynb'))

# What `nbdev_test` does per notebook: skip `tst_flags` cells, put the project root on sys.path, honour `cell_timeout`;
# `test_nb` itself runs the cells with the notebook's folder as cwd.
_RUN = """
import sys
from pathlib import Path
from nbdev.config import get_config
from nbdev.test import test_nb
cfg = get_config()
flags = cfg.tst_flags.split() if isinstance(cfg.tst_flags, str) else list(cfg.tst_flags or [])
ok, secs = test_nb(Path(sys.argv[1]), skip_flags=flags, basepath=cfg.config_path, cell_timeout=int(cfg.cell_timeout or 600) or None)
print(f'{Path(sys.argv[1]).name}: {"ok" if ok else "FAILED"} in {secs:.1f}s')
sys.exit(0 if ok else 1)
"""

@pytest.mark.parametrize('fn', NBS, ids=[f.name for f in NBS])
def test_notebook(fn):
    env = {**os.environ, 'LITELLM_LOCAL_MODEL_COST_MAP': 'True'}
    # nbdev-test runs from nbs_path; a fresh process per notebook so none shares state and a crash stays contained
    r = subprocess.run([sys.executable, '-c', _RUN, str(fn)], cwd=ROOT/'nbs', env=env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=1800)
    tail = '\n'.join((r.stderr or r.stdout).strip().splitlines()[-40:])
    if r.returncode: pytest.fail(f'notebook {fn.name} failed (exit {r.returncode}); last lines of its output:\n{tail}', pytrace=False)
