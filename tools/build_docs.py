#!/usr/bin/env python
"""Build the docs from `nbs/*.ipynb` without Quarto: README.md, and a static site in `_docs/` with search.

    python tools/build_docs.py              # README.md and the site: the one docs command
    python tools/build_docs.py readme       # README.md from nbs/index.ipynb (what `nbdev-readme` makes)
    python tools/build_docs.py site [DIR]   # the site into DIR (default: `doc_path`, i.e. `_docs/`)
    python tools/build_docs.py check [DIR]  # check the internal links of a built site

Notebooks go through nbdev's own doc processors (front matter, directives, `show_doc` for exported names, executing
what `show_doc` needs, doc links), as `nbdev-docs` does. The processed notebooks become markdown pages, which
mkdocs-material turns into the site (navigation, previous/next links, an offline search index); the same markdown is
written next to each page as `NAME.html.md`, with an `llms.txt` listing them, as nbdev's Quarto build does.
Where Quarto is installed, `nbdev-docs` builds the Quarto site from `nbs/_quarto.yml` instead.

Links follow `[project.urls]` in pyproject.toml: with no `Documentation` address (nothing publishes the site yet)
README links point at the notebooks in this repository and the site links relatively; with no `Repository`, the site
has no "source" links (each exported name's source is on its page, folded).
Differences from nbdev's Quarto docs, on purpose: exported source is shown, folded, under its `show_doc`."""
import html, inspect, json, os, re, shutil, sys, tempfile, time, traceback, warnings
from contextlib import contextmanager
from pathlib import Path
from base64 import b64decode
from dataclasses import is_dataclass

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')  # litellm would otherwise try to fetch prices on import

from fastcore.basics import AttrDict
from fastcore.xtras import working_directory
from fastcore.nbio import read_nb
from fastcore.docments import DocmentText
from nbdev.config import get_config, nbpath2html
from nbdev.process import NBProcessor
from nbdev import processors as P
from nbdev.doclinks import NbdevLookup
from nbdev.showdoc import BasicMarkdownRenderer

def cfg(): return get_config(ROOT)
def doc_url(): return (cfg().get('doc_url') or '').rstrip('/')
def git_url(): return (cfg().get('git_url') or '').rstrip('/')

def doc_nbs():
    "Notebooks that get a page, index first (nbdev skips names starting with `_` or `.`)"
    fns = [f for f in sorted(cfg().nbs_path.glob('*.ipynb')) if not f.name.startswith(('_', '.'))]
    return sorted(fns, key=lambda f: f.name!='index.ipynb')

def page_name(fn): return nbpath2html(fn).name

# ---- show_doc: nbdev's markdown, with a signature that fits the page and a source link only to a real repository
_maxline,_max_delegated = 64,8  # 64: about what an API card shows of a code line without wrapping

def _fn(sym):
    f = sym.__init__ if inspect.isclass(sym) else sym
    return getattr(f, '__func__', f)

def _tidy_params(sym, dm):
    """Drop the types docments guesses from defaults (`stop:NoneType=None`), and fold the parameters `@delegates` copied
    from the function `**kwargs` goes to into `**kwargs` when there are many (`structured` would list ~40 of litellm's)"""
    try: sig = inspect.signature(sym)
    except (TypeError, ValueError): return dm
    emp = inspect.Parameter.empty
    for k,v in dm.dm.items():
        p = sig.parameters.get(k)
        if p is not None and p.annotation is emp and v.get('default', emp) is not emp: v['anno'] = emp
    f = _fn(sym)
    if (to := getattr(f, '__delwrap__', None)) and (code := getattr(f, '__code__', None)):
        own = set(code.co_varnames[:code.co_argcount+code.co_kwonlyargcount])
        extra = [k for k,v in dm.dm.items() if k not in own and k!='return' and v.get('kind')!=inspect.Parameter.VAR_KEYWORD]
        if len(extra)>_max_delegated:
            ret = dm.dm.pop('return', None)
            for k in extra: del dm.dm[k]
            nm = f'{(getattr(to, "__module__", None) or "").split(".")[0]}.{getattr(to, "__qualname__", to)}'.lstrip('.')
            dm.dm['kwargs'] = AttrDict(docment=f'passed on to {nm} ({len(extra)} more parameters)', anno=emp,
                                       default=emp, kind=inspect.Parameter.VAR_KEYWORD)
            if ret is not None: dm.dm['return'] = ret
    return dm

def _sd_markdown(self):
    "`show_doc` markdown: source link (when a repository is set), heading with `_` escaped, signature, docstring"
    dm = self.dm
    if isinstance(dm, DocmentText):
        dm = _tidy_params(self.sym, DocmentText(self.sym, maxline=_maxline, docstring=False))
    src = NbdevLookup().code(self.fn) if git_url() else None
    src = f'<a class="source-link" href="{src.replace("#LNone", "")}">source</a>\n\n' if src else ''
    nm = self.nm.replace('_', r'\_')  # `Chat.__call__` is not `Chat.**call**`
    doc = f'{src}{"#"*self.title_level} {nm}\n\n```python\n{dm}\n```'
    docs = self.docs
    if docs and is_dataclass(self.sym) and docs.startswith(f'{self.sym.__name__}('): docs = ''  # the generated one repeats the signature
    return doc + (f'\n\n{docs}' if docs else '')
# `show_doc` runs in an in-process shell, so patching the renderer class here reaches every notebook
BasicMarkdownRenderer._repr_markdown_ = _sd_markdown

# ---- processing
_src_dirs = {'export', 'exports', 'exporti'}

def keep_exports(cell):
    "Replaces nbdev's `rm_export`: drop `default_exp`/`hide` cells, but keep exported source, marked for folding"
    d = cell.directives_ if cell.cell_type=='code' else None
    if not d: return
    if d.keys() & _src_dirs and 'hide' not in d: cell.exported_ = True
    elif d.keys() & {'hide', 'default_exp'}: del cell['source']

class docs_first(P.Processor):
    "Like nbdev's `mv_exports`, for all exported cells: the `show_doc`s added after one go before its source"
    def begin(self):
        res = []
        for c in self.nb.cells:
            if c.get('has_sd') and res and res[-1].get('exported_'):
                res.insert(len(res)-1, c)
                res[-1].documented_ = True
            else: res.append(c)
        self.nb.cells = res

class exec_show_docs_lenient(P.exec_show_docs):
    """nbdev's `exec_show_docs`, except that a failing cell which is neither exported nor a `show_doc` (nbdev also runs
    every cell with an import) is skipped, keeping its saved outputs, instead of costing the page all its signatures"""
    def __call__(self, cell):
        saved = cell.get('outputs'), cell.get('execution_count')
        try: super().__call__(cell)
        except Exception as e:
            if cell.directives_.keys() & _src_dirs or _is_showdoc(cell.source): raise
            self.k.exc = None  # else the next cell would report this error again
            cell.outputs,cell.execution_count = saved
            if not hasattr(self.nb, 'skipped_'): self.nb.skipped_ = []
            self.nb.skipped_.append(str(e))

def doc_procs(exec_docs=True):
    "nbdev's doc processors, with `keep_exports` for `rm_export`, `docs_first` for `mv_exports`, and no `add_fold` (folding is done when rendering)"
    swap = {P.rm_export: keep_exports, P.mv_exports: docs_first, P.exec_show_docs: exec_show_docs_lenient}
    skip = {P.add_fold} | (set() if exec_docs else {P.exec_show_docs})
    return [swap.get(p, p) for p in P.FilterDefaults().procs() if p not in skip]

def proc_nb(fn):
    "Read and process notebook `fn` for docs; if the code `show_doc` needs fails, process it again without running it"
    err = None
    for exec_docs in (True, False):
        nb = read_nb(fn)
        try:
            with _nbdev_env(), warnings.catch_warnings():
                warnings.simplefilter('ignore')  # nbdev warns about import cells mixed with code: not ours to fix here
                NBProcessor(nb=nb, procs=doc_procs(exec_docs), rm_directives='quarto').process()
        except Exception as e:
            if not exec_docs: raise
            err = f'{type(e).__name__}: {e}'
            print(f'warning: {fn.name}: running the cells show_doc needs failed, so signatures are missing:\n{err}', file=sys.stderr)
            continue
        for o in getattr(nb, 'skipped_', []):
            print(f'warning: {fn.name}: a cell failed while running code for the docs; skipped, its saved outputs kept:\n{o}', file=sys.stderr)
        nb.build_error_ = err
        return nb

@contextmanager
def _nbdev_env():
    "cwd at the project root and `IN_TEST` set, as nbdev's docs workers run notebooks"
    old = os.environ.get('IN_TEST')
    os.environ['IN_TEST'] = '1'
    try:
        with working_directory(cfg().config_path): yield
    finally:
        if old is None: os.environ.pop('IN_TEST', None)
        else: os.environ['IN_TEST'] = old

_re_dir = re.compile(r'^\s*#\|\s*([\w-]+)\s*:?\s*(.*?)\s*$')

def split_dirs(src):
    "Quarto-style `#| key: value` lines leading `src` as a dict, and the rest of the source"
    lines,d = (src or '').splitlines(),{}
    while lines and (m := _re_dir.match(lines[0])):
        d[m[1].lower()] = m[2].lower() or 'true'
        lines.pop(0)
    return d, '\n'.join(lines).strip('\n')

def frontmatter(nb):
    fm = getattr(nb, 'frontmatter_', None) or {}
    return AttrDict(title=str(fm.get('title') or ''), description=str(fm.get('description') or ''))

def _txt(o): return ''.join(o) if isinstance(o, list) else (o or '')

_re_ansi = re.compile(r'\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])')
_re_qattr = re.compile(r'(\]\([^)\s]*\))\{[^}\n]*\}')   # quarto's `[txt](url){target=...}` link attributes
_re_fdiv = re.compile(r'^:::.*$\n?', re.MULTILINE)      # quarto fenced-div markers

def plain_md(md): return _re_fdiv.sub('', _re_qattr.sub(r'\1', md))

_re_item = re.compile(r'\s{0,3}(?:[-*+]|\d+[.)])\s')

def cm_lists(md):
    "A blank line before a list that follows a paragraph line: CommonMark (Jupyter, GitHub) needs none, python-markdown does"
    res,fence,prev = [],None,''
    for l in md.splitlines():
        if (m := _re_fence.match(l.strip())):
            fence = m[1] if fence is None else (None if l.strip().startswith(fence) else fence)
        elif fence is None and _re_item.match(l) and prev.strip() and not _re_item.match(prev) and not prev.startswith((' ', '\t', '#', '<', '|', '>')):
            res.append('')
        res.append(l)
        prev = l
    return '\n'.join(res)

def cells(nb):
    "Processed cells as (cell, directives, source) to render, skipping raw (front matter) and `include: false` cells"
    for c in nb.cells:
        if c.cell_type=='raw': continue
        d,src = split_dirs(c.source) if c.cell_type=='code' else ({}, c.source)
        if d.get('include')=='false': continue
        yield c,d,src

def outputs(c, d):
    if c.cell_type!='code' or d.get('output')=='false': return []
    return c.get('outputs', [])

def _fence(s, lang=''):
    s = s.rstrip()
    f = '`' * max(3, 1+max(map(len, re.findall('`+', s)), default=0))  # outlast any backtick run inside
    return f'{f}{lang}\n{s}\n{f}' if s else ''

def _is_showdoc(src): return src.lstrip().startswith('show_doc(')

# ---- links
# nbdev's doc links are `{doc_url}/page.html#anchor`, or `/page.html#anchor` when no `Documentation` is set
_re_link = re.compile(r'\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)')

def _page_link(url, pages):
    "(page, anchor) when `url` is a doc link to one of `pages`, else None"
    base = doc_url()
    if base and url.startswith(base+'/'): url = url[len(base):]
    m = re.fullmatch(r'/?([\w.-]+\.html)(?:#(.*))?', url)
    return (m[1], m[2] or '') if m and m[1] in pages else None

def relink(md, pages, to, anchors=None):
    """Rewrite doc links in `md` to pages in `pages` with `to(page, anchor)`; a link to an anchor its page lacks
    (`anchors`: page -> ids; e.g. a private name nbdev knows but never documents) becomes plain text"""
    def f(m):
        pl = _page_link(m[2], pages)
        if not pl: return m[0]
        page,anc = pl
        if anc and anchors is not None and anc not in anchors.get(page, ()): return m[1]
        return f'[{m[1]}]({to(page, anc)})'
    return _re_link.sub(f, md)

_re_fence = re.compile(r'^(`{3,}|~{3,})')

def md_headings(md):
    "Texts of the markdown headings in `md`, outside code fences"
    res,fence = [],None
    for l in md.splitlines():
        if (m := _re_fence.match(l.strip())):
            if fence is None: fence = m[1]
            elif l.strip().startswith(fence): fence = None
            continue
        if fence is None and (m := re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', l)): res.append(m[1])
    return res

def _heading_text(s): return html.unescape(re.sub(r'<[^>]+>', '', re.sub(r'\\(.)', r'\1', re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', s)))).replace('`', '').replace('*', '')

def slug(s):
    "Heading ids as Quarto (and so nbdev's doc links) make them: lower case, spaces to `-`, keeping `.`, `_`, `-`"
    return re.sub(r'[^\w.\-]', '', re.sub(r'\s+', '-', s.strip().lower()))

# ---- README
def out_md(o):
    "An output as GitHub markdown: markdown and html inline, text fenced; images are left out"
    t = o.get('output_type')
    if t=='stream': return _fence(_re_ansi.sub('', _txt(o.text)))
    if t=='error': return _fence(_re_ansi.sub('', '\n'.join(o.get('traceback', []))) or f"{o.ename}: {o.evalue}")
    data = o.get('data', {})
    if 'text/markdown' in data: return plain_md(_txt(data['text/markdown']))
    if 'text/html' in data: return _txt(data['text/html'])
    if 'text/plain' in data: return _fence(_txt(data['text/plain']))
    return ''

def nb2md(nb):
    "Render processed notebook `nb` as GitHub markdown"
    fm,res = frontmatter(nb),[]
    if fm.title: res.append(f'# {fm.title}')
    if fm.description: res.append(f'> {fm.description}')
    for c,d,src in cells(nb):
        if c.cell_type=='markdown': res.append(plain_md(src).strip())
        elif c.cell_type=='code':
            if src.strip() and d.get('echo')!='false' and not c.get('exported_'): res.append(_fence(src, 'python'))
            res += [out_md(o).strip() for o in outputs(c, d)]
    return '\n\n'.join(o for o in res if o) + '\n'

def readme_links(md):
    """Doc links in the README: to the site when `Documentation` is set, else to the notebook the page is built from,
    which resolves wherever the repository is read"""
    if doc_url(): return md
    nbs = {page_name(fn): fn.relative_to(ROOT).as_posix() for fn in doc_nbs()}
    return relink(md, nbs, lambda page, anc: nbs[page])

def readme_text():
    "The README.md content built from the readme notebook (`nbs/index.ipynb`)"
    fn = cfg().nbs_path/cfg().readme_nb
    return readme_links(nb2md(proc_nb(fn))) if fn.exists() else ''

def write_readme():
    txt = readme_text()
    if not txt: return print(f'No {cfg().readme_nb}: README.md left as it is')
    (ROOT/'README.md').write_text(txt)
    print(f'Wrote README.md ({len(txt):,} chars)')

# ---- site pages: one markdown page per notebook
_img_mimes = {'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif'}

class Page:
    "A notebook's page: its processed notebook rendered as markdown, and the images its outputs hold"
    def __init__(self, fn, nb):
        self.fn,self.nb,self.name = fn,nb,page_name(fn)
        self.stem = self.name.removesuffix('.html')
        fm = frontmatter(nb)
        self.title,self.description = fm.title or fn.stem, fm.description
        self.images = {}  # file name -> bytes
        self.md = self.render()
        self.anchors = {slug(_heading_text(h)) for h in md_headings(self.md)}

    def image(self, mime, data):
        nm = f'{self.stem}_files/output-{len(self.images)+1}.{_img_mimes[mime]}'
        self.images[nm] = b64decode(_txt(data).strip())
        return f'![]({nm})'

    def out(self, o):
        "An output as markdown for the site: markdown as is (with `<details>` open to markdown), html as is, images as files"
        t = o.get('output_type')
        if t=='stream': return _fence(_re_ansi.sub('', _txt(o.text)))
        if t=='error': return _fence(_re_ansi.sub('', '\n'.join(o.get('traceback', []))) or f"{o.ename}: {o.evalue}")
        data = o.get('data', {})
        if 'text/markdown' in data: return re.sub(r'<details(?![^>]*markdown)', '<details markdown="1"', cm_lists(plain_md(_txt(data['text/markdown']))))
        if 'text/html' in data: return _txt(data['text/html'])
        if 'image/svg+xml' in data: return _txt(data['image/svg+xml'])
        for mt in _img_mimes:
            if mt in data: return self.image(mt, data[mt])
        if 'text/plain' in data: return _fence(_txt(data['text/plain']))
        return ''

    def cell(self, c, d, src):
        if c.cell_type=='markdown': return cm_lists(plain_md(src)).strip()
        if c.cell_type!='code': return ''
        res = []
        if src.strip() and d.get('echo')!='false':
            code = _fence(src, 'python')
            if c.get('exported_'): code = f'<details class="exported" markdown="1"><summary>Exported source</summary>\n\n{code}\n\n</details>'
            res.append(code)
        outs = [s.strip() for o in outputs(c, d) if (s := self.out(o)).strip()]
        if outs:
            cls = 'doc' if _is_showdoc(src) else 'cell-output'
            res.append(f'<div class="{cls}" markdown="1">\n\n' + '\n\n'.join(outs) + '\n\n</div>')
        return '\n\n'.join(res)

    def render(self):
        # the title as front matter, as Quarto's `.html.md` pages have it: the theme shows it as the page's heading,
        # so no `<h1 id="chat">` takes the anchor nbdev's links give the `Chat` entry
        fm = '\n'.join(f'{k}: {json.dumps(v)}' for k,v in dict(title=self.title, description=self.description).items() if v)
        res = [f'---\n{fm}\n---']
        if self.description: res.append(f'> {self.description}')
        if err := getattr(self.nb, 'build_error_', None):
            res.append(f'!!! warning "Signatures are missing: running this notebook\'s exported code failed"\n\n    {err}')
        res += [self.cell(*o) for o in cells(self.nb)]
        return '\n\n'.join(o for o in res if o) + '\n'

def _error_nb(fn, e):
    "A stand-in for a notebook that can't be read or processed, so the page still exists and says why"
    nb = AttrDict(cells=[], frontmatter_={'title': fn.stem}, build_error_=None)
    nb.cells = [AttrDict(cell_type='markdown', source=f'**This notebook could not be processed:**\n\n```\n{e}\n```')]
    return nb

def make_pages():
    res = []
    for fn in doc_nbs():
        try: nb = proc_nb(fn)
        except Exception as e:
            print(f'warning: {fn.name} could not be processed:\n{traceback.format_exc()}', file=sys.stderr)
            nb = _error_nb(fn, f'{type(e).__name__}: {e}')
        res.append(Page(fn, nb))
    anchors = {p.name: p.anchors for p in res}
    for p in res: p.md = relink(p.md, anchors, lambda page, anc: page.replace('.html', '.md') + (f'#{anc}' if anc else ''), anchors)
    return res

# ---- site: mkdocs-material over the pages
def mkdocs_config(pages, docs_dir, site_dir):
    c = cfg()
    return dict(
        site_name=c.get('title') or c.lib_name, site_description=c.get('description') or '',
        site_url=(doc_url()+'/') if doc_url() else None, repo_url=git_url() or None, edit_uri='',
        docs_dir=str(docs_dir), site_dir=str(site_dir), use_directory_urls=False,  # pages open from the file system too
        nav=[{p.title: f'{p.stem}.md'} for p in pages], extra_css=['styles.css'],
        theme=dict(name='material', font=False,  # no web fonts: the site makes no request outside itself
                   features=['navigation.footer', 'navigation.top', 'navigation.tracking', 'toc.follow',
                             'search.highlight', 'content.code.copy'],
                   palette=dict(primary='blue grey', accent='deep orange')),
        # a static search index (search/search_index.json), searched in the browser: it needs the site served (browsers
        # run no workers from file://), e.g. `python -m http.server -d _docs`; material's `offline` plugin would make
        # it work from files too, but loads a script from a CDN, and the site makes no outside request
        plugins=['search'],
        markdown_extensions=['admonition', 'attr_list', 'md_in_html', 'tables', 'footnotes', 'pymdownx.details',
            {'pymdownx.highlight': dict(use_pygments=True)}, 'pymdownx.superfences', 'pymdownx.inlinehilite',
            {'toc': dict(permalink='#', toc_depth=3)}],
        validation=dict(links=dict(anchors='warn', not_found='warn', absolute_links='info', unrecognized_links='info')))

def run_mkdocs(pages, site_dir):
    "Write the pages, their images and the CSS to a temporary docs dir, and build the site from it"
    import logging
    from mkdocs.config import load_config
    from mkdocs.commands.build import build
    import yaml
    with tempfile.TemporaryDirectory() as td:
        docs_dir = Path(td)/'docs'
        docs_dir.mkdir()
        for p in pages:
            (docs_dir/f'{p.stem}.md').write_text(p.md)
            for nm,b in p.images.items():
                (docs_dir/nm).parent.mkdir(exist_ok=True)
                (docs_dir/nm).write_bytes(b)
        shutil.copy(cfg().nbs_path/'styles.css', docs_dir/'styles.css')
        (Path(td)/'mkdocs.yml').write_text(yaml.safe_dump(mkdocs_config(pages, docs_dir, site_dir), sort_keys=False))
        conf = load_config(str(Path(td)/'mkdocs.yml'))
        conf.mdx_configs['toc']['slugify'] = lambda s, sep: slug(s)  # the ids nbdev's doc links use
        logging.getLogger('mkdocs').setLevel(logging.ERROR)  # its link warnings are checked below, on the output
        build(conf)

def md_page(p):
    "A page's markdown as served next to it (`chat.html.md`), links pointing at the other `.html.md` pages"
    return re.sub(r'\]\(([\w.-]+)\.md(#[^)]*)?\)', r'](\1.html.md\2)', p.md)

def llms_txt(pages):
    "An index of the markdown pages for language models (llmstxt.org), relative unless `Documentation` is set"
    c,base = cfg(),(doc_url()+'/' if doc_url() else '')
    res = [f'# {c.get("title") or c.lib_name}', f'> {c.get("description") or ""}', '## Docs']
    res.append('\n'.join(f'- [{p.title}]({base}{p.name}.md)' + (f': {p.description}' if p.description else '') for p in pages))
    return '\n\n'.join(res) + '\n'

def build_site(dest=None):
    "The site in `dest` (default: `doc_path`): an HTML page and a `.html.md` page per notebook, `llms.txt`, search"
    dest = Path(dest or cfg().doc_path).absolute()
    t0 = time.perf_counter()
    pages = make_pages()
    t1 = time.perf_counter()
    shutil.rmtree(dest, ignore_errors=True)
    run_mkdocs(pages, dest)
    if not doc_url(): (dest/'404.html').unlink(missing_ok=True)  # only a web server at a known address uses it
    for p in pages: (dest/f'{p.name}.md').write_text(md_page(p))
    (dest/'llms.txt').write_text(llms_txt(pages))
    t2 = time.perf_counter()
    print(f'Wrote {len(pages)} page(s) to {dest} in {t2-t0:.1f}s (notebooks {t1-t0:.1f}s, mkdocs {t2-t1:.1f}s): '
          + ', '.join(p.name for p in pages))
    return dest

# ---- link check
class _Links(__import__('html.parser').parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids,self.links = set(),[]
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get('id'): self.ids.add(a['id'])
        if tag=='a' and a.get('name'): self.ids.add(a['name'])
        for k in ('href', 'src'):
            if a.get(k) is not None and not (tag=='link' and a.get('rel')=='preconnect'): self.links.append(a[k])

def _parse(fn):
    p = _Links()
    p.feed(fn.read_text(errors='replace'))
    return p

def broken_links(site):
    """Every internal link in the built site's HTML pages that points at a missing file or a missing anchor, as
    'page: link' strings; external links (with a scheme or `//`) are not followed"""
    site,res,parsed = Path(site),[],{}
    def get(fn):
        if fn not in parsed: parsed[fn] = _parse(fn)
        return parsed[fn]
    for fn in sorted(site.rglob('*.html')):
        for l in get(fn).links:
            if not l or re.match(r'[a-z][\w+.-]*:|//', l, re.I): continue
            path,_,anc = l.partition('#')
            path = path.split('?')[0]
            tgt = (fn.parent/path).resolve() if path else fn
            rel = fn.relative_to(site)
            if path and (tgt.is_dir() and not (tgt/'index.html').exists() or not tgt.exists()): res.append(f'{rel}: {l} (no such file)')
            elif anc and tgt.suffix=='.html' and anc not in get(tgt if tgt.is_file() else tgt/'index.html').ids:
                res.append(f'{rel}: {l} (no such anchor)')
    return res

def check_site(site):
    bad = broken_links(site)
    for o in bad: print(f'broken link: {o}', file=sys.stderr)
    print(f'{len(bad)} broken internal link(s) in {site}')
    return not bad

def main(what=None, dest=None):
    if what not in (None, 'readme', 'site', 'check') or (dest and what not in ('site', 'check')): sys.exit(__doc__)
    if what in (None, 'readme'): write_readme()
    if what in (None, 'site'): dest = build_site(dest)
    if what in (None, 'site', 'check') and not check_site(dest or cfg().doc_path): sys.exit(1)

if __name__ == '__main__': main(*sys.argv[1:3])
