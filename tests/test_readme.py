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

# ---- the Contributing workflow: `tools/nb.sh` on what a fresh clone has (notebooks; their percent sources are git-ignored)
import json, shutil

def _project_copy(tmp_path):
    "A copy of the project's sources with one tiny notebook added, using this venv as its `.venv` (nb.sh exports into the copy)"
    d = tmp_path/'proj'; d.mkdir()
    for p in ('pyproject.toml', 'tools', 'nbs', 'lisette'): (shutil.copytree if (ROOT/p).is_dir() else shutil.copy)(ROOT/p, d/p)
    for f in (d/'nbs').glob('*.pct.py'): f.unlink()  # as in a fresh clone
    (d/'.venv').symlink_to(Path(sys.executable).parent.parent)
    cell = dict(cell_type='code', execution_count=None, id='c1', metadata={}, outputs=[], source='6*7')
    nb = dict(cells=[cell], metadata={'kernelspec': {'display_name': 'python3', 'language': 'python', 'name': 'python3'}}, nbformat=4, nbformat_minor=5)
    (d/'nbs'/'zz_tiny.ipynb').write_text(json.dumps(nb))
    return d

def _nbsh(d, *args): return subprocess.run(['bash', str(d/'tools'/'nb.sh'), *args], cwd=d, env=ENV, capture_output=True, text=True, timeout=600)

def test_nbsh_runs_a_notebook(tmp_path):
    "Given nbs/NAME.ipynb, nb.sh runs that notebook (saving its outputs): it made nbs/NAME.ipynb.ipynb and ran that instead"
    d = _project_copy(tmp_path)
    r = _nbsh(d, 'nbs/zz_tiny.ipynb')
    assert r.returncode==0, r.stderr[-2000:]
    assert not (d/'nbs'/'zz_tiny.ipynb.ipynb').exists()
    outs = json.loads((d/'nbs'/'zz_tiny.ipynb').read_text())['cells'][0]['outputs']
    assert any('42' in ''.join(o.get('data', {}).get('text/plain', '')) for o in outs), outs

def test_nbsh_missing_percent_source(tmp_path):
    "A percent source a fresh clone lacks is named, with how to make it, before anything is exported"
    d = _project_copy(tmp_path)
    r = _nbsh(d, 'nbs/zz_tiny.pct.py')
    assert r.returncode!=0 and 'jupytext --to py:percent' in r.stderr and 'zz_tiny.ipynb' in r.stderr, r.stderr

# ---- the README's examples, read where people read the README: at the repository's root

def test_readme_paths_from_root():
    "Files the README's code opens exist relative to the repository root (the image example said '../samples/', from nbs/)"
    txt = (ROOT/'README.md').read_text()
    code = '\n'.join(re.findall(r'```python\n(.*?)```', txt, flags=re.S))
    paths = re.findall(r"Path\((['\"])(.+?)\1\)", code)
    assert paths, 'the README opens no file'
    for _,p in paths: assert (ROOT/p).exists(), f'the README opens {p}, which is not there from the repository root'

def test_readme_image_answer_is_the_picture():
    "The scripted answer describes samples/puppy.jpg (a brown cartoon puppy, red collar, grass, sun), and says it is scripted"
    txt = (ROOT/'README.md').read_text()
    sec = txt.split('### Images and other media')[1].split('\n## ')[0]
    assert 'scripted' in sec.split('```python')[0]
    answer = sec.split('```\n')[1].split('<details')[0].lower()
    assert all(w in answer for w in ('cartoon', 'brown', 'red collar', 'grass', 'sun')) and 'black-and-white' not in answer, answer
