"README.md and the docs site are built from the notebooks by `tools/build_docs.py`: the README must be current, and every notebook must get a page."
import html, json, os, re, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT/'tools'/'build_docs.py'
ENV = {**os.environ, 'LITELLM_LOCAL_MODEL_COST_MAP': 'True'}

def _run(args, **kw):
    # A subprocess, since building runs notebook code (what `show_doc` needs) in an in-process IPython shell
    r = subprocess.run([sys.executable, *args], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=900, **kw)
    if r.returncode: pytest.fail(f'{" ".join(map(str, args))} failed:\n{r.stderr[-3000:]}', pytrace=False)
    return r

def test_readme_current(tmp_path):
    out = tmp_path/'README.md'
    code = f"import sys; sys.path.insert(0, {str(BUILD.parent)!r}); import build_docs; open({str(out)!r}, 'w').write(build_docs.readme_text())"
    _run(['-c', code])
    want = out.read_text()
    assert want, 'readme_text() is empty: is nbs/index.ipynb missing?'
    got = (ROOT/'README.md').read_text() if (ROOT/'README.md').exists() else ''
    assert got == want, 'README.md is stale against nbs/index.ipynb: run `python tools/build_docs.py readme` and commit README.md'

def _nb_title(fn):
    "The title nbdev gives the notebook: front matter `title`, else its first `# heading`, else the file stem"
    cells = json.loads(fn.read_text()).get('cells', [])
    for c in cells:
        src = ''.join(c.get('source', ''))
        if c.get('cell_type') == 'raw' and (m := re.search(r'^title:\s*["\']?(.*?)["\']?\s*$', src, re.M)): return m[1]
        if c.get('cell_type') == 'markdown' and (m := re.match(r'\s*#\s+(.+)', src)): return m[1].strip()
    return fn.stem

def test_site_has_every_notebook(tmp_path):
    dest = tmp_path/'site'
    _run([BUILD, 'site', dest])
    nbs = [f for f in sorted((ROOT/'nbs').glob('*.ipynb')) if not f.name.startswith(('_', '.'))]
    assert nbs, 'no notebooks in nbs/'
    assert (dest/'style.css').exists()
    for fn in nbs:
        page = dest/('index.html' if fn.stem == 'index' else re.sub(r'^\d+[a-zA-Z0-9]*_', '', fn.stem.lower()) + '.html')
        assert page.exists(), f'{fn.name}: no page {page.name} in the built site'
        txt, title = page.read_text(), html.escape(_nb_title(fn))
        assert f'<h1 class="title">{title}</h1>' in txt, f'{page.name}: title {title!r} missing'
        assert all(f'href="{p.name}"' in txt for p in dest.glob('*.html')), f'{page.name}: sidebar does not link every page'
