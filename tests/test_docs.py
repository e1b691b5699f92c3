"The docs site `python tools/build_docs.py` builds: a page (HTML and `.html.md`) per notebook, search, llms.txt, and no broken internal link."
import json, os, re, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT/'tools'
ENV = {**os.environ, 'LITELLM_LOCAL_MODEL_COST_MAP': 'True'}
NBS = [f for f in sorted((ROOT/'nbs').glob('*.ipynb')) if not f.name.startswith(('_', '.'))]

def _page(fn): return 'index.html' if fn.stem=='index' else re.sub(r'^\d+[a-zA-Z0-9]*_', '', fn.stem.lower()) + '.html'

@pytest.fixture(scope='module')
def site(tmp_path_factory):
    # A subprocess, since building runs notebook code (what `show_doc` needs) in an in-process IPython shell
    dest = tmp_path_factory.mktemp('docs')/'site'
    r = subprocess.run([sys.executable, TOOLS/'build_docs.py', 'site', dest], cwd=ROOT, env=ENV, capture_output=True,
                       text=True, timeout=900)
    if r.returncode: pytest.fail(f'building the site failed (exit {r.returncode}):\n{r.stdout[-1500:]}\n{r.stderr[-3000:]}', pytrace=False)
    return dest

def test_no_broken_internal_links(site):
    sys.path.insert(0, str(TOOLS))
    try: import build_docs
    finally: sys.path.remove(str(TOOLS))
    bad = build_docs.broken_links(site)
    assert not bad, f'{len(bad)} broken internal link(s):\n' + '\n'.join(bad[:40])

def test_every_notebook_has_a_page(site):
    assert NBS, 'no notebooks in nbs/'
    for fn in NBS:
        page = site/_page(fn)
        assert page.exists(), f'{fn.name}: no page {page.name} in the built site'
        md = site/f'{page.name}.md'
        assert md.exists(), f'{fn.name}: no markdown page {md.name}'
        assert md.read_text().startswith('---\ntitle: '), f'{md.name}: no front matter title'
        txt = page.read_text()
        assert all(f'href="{_page(o)}"' in txt for o in NBS), f'{page.name}: the navigation does not link every page'
    llms = (site/'llms.txt').read_text()
    assert all(f'({_page(fn)}.md)' in llms for fn in NBS), 'llms.txt does not list every markdown page'

def test_search_index(site):
    docs = json.loads((site/'search'/'search_index.json').read_text())['docs']
    assert any(d['location'].startswith('chat.html#') and d['title']=='AsyncChat' for d in docs), 'AsyncChat is not in the search index'

def test_api_pages(site):
    chat = (site/'chat.html').read_text()
    assert 'id="chat.__call__"' in chat and 'id="asyncchat"' in chat, 'API entries lack the anchors nbdev links to'
    # exported source is there, folded
    assert '<details class="exported">' in chat and '<details class="exported" open' not in chat
    assert 'NoneType' not in chat, 'a signature shows a type guessed from a None default'
    assert 'md-footer__link--next' in chat, 'no previous/next links'

def test_no_outside_requests(site):
    "The pages load nothing from elsewhere (no web fonts, no CDN scripts), and link no invented host"
    for fn in site.glob('*.html'):
        txt = fn.read_text()
        assert not re.search(r'<(?:script|link)[^>]+(?:src|href)="(?:https?:)?//', txt), f'{fn.name} loads something from outside'
        assert 'lisette-dev' not in txt, f'{fn.name} links the invented lisette-dev host'
