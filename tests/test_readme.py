"README.md is built from nbs/index.ipynb by `tools/build_docs.py readme`: it must be current, and its links must resolve."
import os, re, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT/'tools'/'build_docs.py'
ENV = {**os.environ, 'LITELLM_LOCAL_MODEL_COST_MAP': 'True'}

def test_readme_current(tmp_path):
    out = tmp_path/'README.md'
    code = f"import sys; sys.path.insert(0, {str(BUILD.parent)!r}); import build_docs; open({str(out)!r}, 'w').write(build_docs.readme_text())"
    # A subprocess, since building runs notebook code (what `show_doc` needs) in an in-process IPython shell
    r = subprocess.run([sys.executable, '-c', code], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=900)
    if r.returncode: pytest.fail(f'building the README failed:\n{r.stderr[-3000:]}', pytrace=False)
    want = out.read_text()
    assert want, 'readme_text() is empty: is nbs/index.ipynb missing?'
    got = (ROOT/'README.md').read_text() if (ROOT/'README.md').exists() else ''
    assert got == want, 'README.md is stale against nbs/index.ipynb: run `python tools/build_docs.py readme` and commit README.md'

def test_readme_links_resolve():
    "Links in the README are external, or point at files in this repository (no docs host is published)"
    txt = (ROOT/'README.md').read_text()
    links = re.findall(r'\]\(([^)\s]+)\)', txt)
    assert links, 'the README has no links'
    for l in links:
        if re.match(r'https?://', l): continue
        assert (ROOT/l.split('#')[0]).exists(), f'README links {l}, which is not in the repository'
    assert 'lisette-dev' not in txt, 'README links the invented lisette-dev host'
