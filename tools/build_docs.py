#!/usr/bin/env python
"""Build README.md and a static docs site in `_docs/` from `nbs/*.ipynb`, without Quarto.

    python tools/build_docs.py readme   # README.md from nbs/index.ipynb (what `nbdev-readme` makes)
    python tools/build_docs.py site     # _docs/*.html, one page per notebook (a plain stand-in for `nbdev-docs`)
    python tools/build_docs.py site DIR # the site into DIR instead of `doc_path`
    python tools/build_docs.py          # both

Notebooks go through nbdev's own doc processors (front matter, directives, `show_doc` for exported names, executing
what `show_doc` needs, doc links), as `nbdev-docs` does; only the last step differs: the processed cells are rendered
here, to GitHub markdown for the README and to HTML (nbconvert's mistune markdown) for the site.
Differences from nbdev's docs, on purpose: exported source is shown (folded) under its `show_doc`, and each `show_doc`
gets a docments table of its parameters."""
import html, inspect, os, re, shutil, sys, traceback, warnings
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')  # litellm would otherwise try to fetch prices on import

from fastcore.basics import AttrDict
from fastcore.xtras import working_directory
from fastcore.nbio import read_nb
from fastcore.docments import _type_str, _fmt_default
from nbdev.config import get_config, nbpath2html
from nbdev.process import NBProcessor
from nbdev import processors as P
from nbdev.showdoc import BasicMarkdownRenderer
from nbconvert.filters.markdown_mistune import markdown2html_mistune

def cfg(): return get_config(ROOT)

def doc_nbs():
    "Notebooks that get a page, index first (nbdev skips names starting with `_` or `.`)"
    fns = [f for f in sorted(cfg().nbs_path.glob('*.ipynb')) if not f.name.startswith(('_', '.'))]
    return sorted(fns, key=lambda f: f.name!='index.ipynb')

def page_name(fn): return nbpath2html(fn).name

# ---- show_doc: add the docments table of parameters
def _code(s): return f'<code>{html.escape(str(s))}</code>'

def _short(s, n=40):
    "A long default (the signature above shows it whole) cut to `n` chars, whole on hover"
    s = str(s)
    return _code(s) if len(s)<=n else f'<code title="{html.escape(s)}">{html.escape(s[:n-1])}…</code>'

def params_table(r):
    """HTML table of `r`'s parameters (type, default, docment) when any of them is documented. HTML rather than a
    markdown table: type unions hold `|`, which markdown tables can't carry inside code spans"""
    dm = getattr(getattr(r, 'dm', None), 'dm', None) or {}
    if not any(v.get('docment') for v in dm.values()): return ''
    emp = inspect.Parameter.empty
    def row(k, v):
        nm = '<strong>Returns</strong>' if k=='return' else _code(k)
        typ = '' if v.get('anno', emp) is emp else _code(_type_str(v['anno']))
        dflt = '' if v.get('default', emp) is emp else _short(_fmt_default(v['default']))
        return f'<tr><td>{nm}</td><td>{typ}</td><td>{dflt}</td><td>{inline_md(v.get("docment") or "")}</td></tr>'
    rows = [row(k,v) for k,v in dm.items() if k!='return' or v.get('docment') or v.get('anno', emp) is not emp]
    head = '<thead><tr><th></th><th>Type</th><th>Default</th><th>Details</th></tr></thead>'
    return f'\n\n<table class="params">{head}<tbody>{"".join(rows)}</tbody></table>\n'

_sd_md = BasicMarkdownRenderer._repr_markdown_
# `show_doc` runs in an in-process shell, so patching the renderer class here reaches every notebook
_re_sd_head = re.compile(r'^(#+ )(.+)$', re.M)

def _sd_markdown(self):
    "nbdev's markdown with the heading's `_` escaped (`Chat.__call__` is not `Chat.**call**`), then the parameters table"
    md = _re_sd_head.sub(lambda m: m[1] + m[2].replace('_', r'\_'), _sd_md(self), count=1)
    return md + params_table(self)
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

def cells(nb):
    "Processed cells as (cell, directives, source) to render, skipping hidden and front matter cells"
    for c in nb.cells:
        if c.cell_type=='raw': continue
        d,src = split_dirs(c.source) if c.cell_type=='code' else ({}, c.source)
        if d.get('include')=='false': continue
        yield c,d,src

def outputs(c, d):
    if c.cell_type!='code' or d.get('output')=='false': return []
    return c.get('outputs', [])

# ---- README
def out_md(o):
    "An output as GitHub markdown: markdown and html inline, text fenced; images are left out"
    t = o.get('output_type')
    if t=='stream': return _fence(_txt(o.text))
    if t=='error': return _fence(_re_ansi.sub('', '\n'.join(o.get('traceback', []))) or f"{o.ename}: {o.evalue}")
    data = o.get('data', {})
    if 'text/markdown' in data: return plain_md(_txt(data['text/markdown']))
    if 'text/html' in data: return _txt(data['text/html'])
    if 'text/plain' in data: return _fence(_txt(data['text/plain']))
    return ''

def _fence(s, lang=''):
    s = s.rstrip()
    f = '`' * max(3, 1+max(map(len, re.findall('`+', s)), default=0))  # outlast any backtick run inside
    return f'{f}{lang}\n{s}\n{f}' if s else ''

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

def readme_text():
    "The README.md content built from the readme notebook (`nbs/index.ipynb`)"
    fn = cfg().nbs_path/cfg().readme_nb
    return nb2md(proc_nb(fn)) if fn.exists() else ''

def write_readme():
    txt = readme_text()
    if not txt: return print(f'No {cfg().readme_nb}: README.md left as it is')
    (ROOT/'README.md').write_text(txt)
    print(f'Wrote README.md ({len(txt):,} chars)')

# ---- site
def md2html(md):
    # Doc links point at the hosted site: make them relative so the local site works offline
    base = (cfg().get('doc_host') or '') + (cfg().get('doc_baseurl') or '')
    res = markdown2html_mistune(plain_md(md)).replace('#LNone"', '"')  # nbdev's source link when it found no line
    return res.replace(f'href="{base.rstrip("/")}/', 'href="') if base else res

def inline_md(s):
    "Markdown `s` (a title or description) as inline HTML, without the paragraph around it"
    res = md2html(s).strip()
    return res[3:-4] if res.startswith('<p>') and res.endswith('</p>') and res.count('<p>')==1 else res

def _esc_pre(s, cls): return f'<pre class="{cls}">{html.escape(s.rstrip())}</pre>' if s.strip() else ''

_img_mimes = ('image/png', 'image/jpeg', 'image/gif')

def out_html(o):
    "An output as HTML: markdown rendered, HTML and SVG as-is, images inline, plain text escaped"
    t = o.get('output_type')
    if t=='stream': return _esc_pre(_re_ansi.sub('', _txt(o.text)), f'out {o.get("name", "stdout")}')
    if t=='error': return _esc_pre(_re_ansi.sub('', '\n'.join(o.get('traceback', []))) or f"{o.ename}: {o.evalue}", 'out error')
    data = o.get('data', {})
    if 'text/html' in data: return f'<div class="out html">{_txt(data["text/html"])}</div>'
    if 'text/markdown' in data: return f'<div class="out md">{md2html(_txt(data["text/markdown"]))}</div>'
    if 'image/svg+xml' in data: return f'<div class="out img">{_txt(data["image/svg+xml"])}</div>'
    for mt in _img_mimes:
        if mt in data: return f'<div class="out img"><img src="data:{mt};base64,{_txt(data[mt]).strip()}"></div>'
    if 'text/plain' in data: return _esc_pre(_txt(data['text/plain']), 'out')
    return ''

def _is_showdoc(src): return src.lstrip().startswith('show_doc(')

def cell_html(c, d, src):
    if c.cell_type=='markdown': return md2html(src)
    if c.cell_type!='code': return ''
    res = []
    if src.strip() and d.get('echo')!='false':
        code = md2html(f'```python\n{src}\n```')
        if ex := c.get('exported_'):
            # open under a `show_doc`; imports and private helpers start folded
            code = f'<details class="exported"{" open" if c.get("documented_") else ""}><summary>Exported source</summary>{code}</details>'
        res.append(f'<div class="src">{code}</div>')
    outs = ''.join(out_html(o) for o in outputs(c, d))
    if outs: res.append(f'<div class="{"doc" if _is_showdoc(src) else "outs"}">{outs}</div>')
    return f'<div class="cell">{"".join(res)}</div>' if res else ''

def _strip_tags(s): return html.unescape(re.sub(r'<[^>]+>', '', s))
def slug(s): return re.sub(r'[^\w.\-]', '', re.sub(r'\s+', '-', s.strip().lower()))

_re_h = re.compile(r'<h([1-6]) id="([^"]*)">(.*?)(?:<a class="anchor-link" href="#[^"]*">&#182;</a>)?</h\1>', re.S)

def fix_headings(body):
    "Quarto-style heading ids (lower case, as nbdev's doc links expect), unique in the page, with a hover anchor"
    seen,toc = set(),[]
    def f(m):
        lvl,inner = m[1],m[3]
        base = slug(_strip_tags(inner)) or 'section'
        i,n = base,1
        while i in seen: i,n = f'{base}-{n}',n+1
        seen.add(i)
        if lvl in '23': toc.append((int(lvl), i, _strip_tags(inner)))
        return f'<h{lvl} id="{i}">{inner}<a class="anchor" href="#{i}">#</a></h{lvl}>'
    return _re_h.sub(f, body), toc

def nb2html(nb):
    "Processed notebook `nb` as page body HTML, and its table of contents"
    body = ''.join(cell_html(*o) for o in cells(nb))
    if err := getattr(nb, 'build_error_', None):
        body = f'<div class="warn">Signatures are missing: running this notebook\'s exported code failed.<pre>{html.escape(err)}</pre></div>' + body
    return fix_headings(body)

_page = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title_txt} – {site}</title><meta name="description" content="{desc}"><link rel="stylesheet" href="style.css"></head>
<body><nav class="sidebar"><a class="brand" href="index.html">{site}</a><ul>{nav}</ul></nav>
<main><header><h1 class="title">{title}</h1>{desc_p}</header>
{body}
<footer>Built from <code>nbs/{nb}</code> by <code>tools/build_docs.py</code>.</footer></main></body></html>
"""

def nav_html(pages, cur, toc):
    def item(p):
        if p.name!=cur: return f'<li><a href="{p.name}">{html.escape(p.title)}</a></li>'
        sub = ''.join(f'<li class="toc{lvl}"><a href="#{i}">{html.escape(t)}</a></li>' for lvl,i,t in toc)
        return f'<li class="active"><a href="{p.name}">{html.escape(p.title)}</a>' + (f'<ul class="toc">{sub}</ul>' if sub else '') + '</li>'
    return ''.join(map(item, pages))

def _error_nb(fn, e):
    "A stand-in for a notebook that can't be read or processed, so the page still exists and says why"
    nb = AttrDict(cells=[], frontmatter_={'title': fn.stem}, build_error_=None)
    nb.cells = [AttrDict(cell_type='markdown', source=f'**This notebook could not be processed:**\n\n```\n{e}\n```')]
    return nb

def build_site(dest=None):
    "Write one HTML page per notebook, a sidebar linking them all, and the CSS into `dest` (default: `doc_path`)"
    dest = Path(dest or cfg().doc_path)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    site = cfg().get('title') or cfg().lib_name
    nbs = {}
    for fn in doc_nbs():
        try: nbs[fn] = proc_nb(fn)
        except Exception as e:
            print(f'warning: {fn.name} could not be processed:\n{traceback.format_exc()}', file=sys.stderr)
            nbs[fn] = _error_nb(fn, f'{type(e).__name__}: {e}')
    pages = [AttrDict(fn=fn, name=page_name(fn), title=frontmatter(nb).title or fn.stem) for fn,nb in nbs.items()]
    for p in pages:
        nb = nbs[p.fn]
        body,toc = nb2html(nb)
        desc = frontmatter(nb).description
        (dest/p.name).write_text(_page.format(
            title=html.escape(p.title), title_txt=html.escape(_strip_tags(inline_md(p.title))), site=html.escape(site),
            desc=html.escape(_strip_tags(inline_md(desc))), nb=p.fn.name, body=body, nav=nav_html(pages, p.name, toc),
            desc_p=f'<p class="description">{inline_md(desc)}</p>' if desc else ''))
    (dest/'style.css').write_text(css())
    print(f'Wrote {len(pages)} page(s) to {dest}: ' + ', '.join(p.name for p in pages))
    return dest

def css():
    from pygments.formatters import HtmlFormatter
    return _css + HtmlFormatter(style='friendly').get_style_defs('.highlight')

_css = """
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg2:#f6f8fa; --accent:#2f6fb3; }
* { box-sizing: border-box; }
body { margin:0; display:flex; font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); }
.sidebar { position:sticky; top:0; height:100vh; overflow:auto; flex:0 0 240px; padding:1.2rem 1rem; background:var(--bg2); border-right:1px solid var(--line); }
.sidebar .brand { display:block; font-weight:700; font-size:1.3rem; color:var(--fg); text-decoration:none; margin-bottom:1rem; }
.sidebar ul { list-style:none; margin:0; padding:0; }
.sidebar li a { display:block; padding:.2rem .5rem; border-radius:4px; color:var(--fg); text-decoration:none; }
.sidebar li a:hover { background:#e6eaef; }
.sidebar li.active > a { background:var(--accent); color:#fff; }
.sidebar ul.toc { margin:.2rem 0 .4rem .6rem; font-size:.88rem; border-left:2px solid var(--line); }
.sidebar ul.toc li.toc3 { padding-left:.8rem; }
.sidebar ul.toc a { color:var(--muted); padding:.1rem .5rem; }
main { flex:1; min-width:0; max-width:980px; padding:1.5rem 2.5rem 4rem; }
header { margin-bottom:1.5rem; border-bottom:1px solid var(--line); }
h1.title { margin:.2rem 0 .3rem; font-size:2.2rem; }
.description { color:var(--muted); font-size:1.15rem; margin-top:0; }
h2 { margin-top:2.2rem; border-bottom:1px solid var(--line); padding-bottom:.2rem; }
h1 a.anchor, h2 a.anchor, h3 a.anchor, h4 a.anchor { visibility:hidden; margin-left:.4rem; color:var(--muted); text-decoration:none; font-weight:400; }
h1:hover a.anchor, h2:hover a.anchor, h3:hover a.anchor, h4:hover a.anchor { visibility:visible; }
a { color:var(--accent); }
code { background:var(--bg2); padding:.1em .3em; border-radius:4px; font-size:.9em; }
pre code, .highlight code { background:none; padding:0; }
pre, .highlight pre { overflow:auto; font:13.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; margin:0; }
.cell { margin:1rem 0; }
.highlight { background:var(--bg2); border:1px solid var(--line); border-radius:6px; padding:.6rem .8rem; margin:.6rem 0; }
.src .highlight { margin:0; }
.outs { margin:.2rem 0 0 .8rem; border-left:3px solid #f0b090; padding:.2rem 0 .2rem .8rem; overflow:auto; }
pre.out { white-space:pre-wrap; word-break:break-word; }
pre.stderr { color:#8a5a00; }
pre.error { color:#b42318; }
.doc { border:1px solid var(--line); border-radius:8px; padding:.2rem 1.2rem .6rem; box-shadow:0 1px 3px rgba(0,0,0,.06); }
.doc hr { display:none; }
.doc h3 { margin:.6rem 0; font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; }
.doc a[href*="github.com"] { float:right; font-size:.85rem; }
.doc .highlight { border:none; padding:.5rem .8rem; }
details.exported { margin-top:.3rem; }
details.exported summary { cursor:pointer; color:var(--muted); font-size:.9rem; }
table { border-collapse:collapse; margin:.6rem 0; font-size:.92rem; display:block; max-width:100%; overflow-x:auto; }
table.params { display:table; width:100%; table-layout:fixed; }
table.params th:first-child { width:22%; } table.params th:nth-child(2) { width:26%; } table.params th:nth-child(3) { width:14%; }
table.params td { overflow-wrap:anywhere; }
table.params code { background:none; padding:0; }
th, td { border:1px solid var(--line); padding:.3rem .6rem; text-align:left; vertical-align:top; }
th { background:var(--bg2); }
blockquote { margin:0; padding:.1rem 1rem; color:var(--muted); border-left:4px solid var(--line); }
img { max-width:100%; }
.warn { background:#fff5e6; border:1px solid #f0c070; border-radius:6px; padding:.5rem 1rem; }
footer { margin-top:3rem; color:var(--muted); font-size:.85rem; }
@media (max-width:800px) { body { display:block; } .sidebar { position:static; height:auto; } main { padding:1rem; } }
"""

def main(what=None, dest=None):
    if what not in (None, 'readme', 'site') or (dest and what!='site'): sys.exit(__doc__)
    if what in (None, 'readme'): write_readme()
    if what in (None, 'site'): build_site(dest)

if __name__ == '__main__': main(*sys.argv[1:3])
