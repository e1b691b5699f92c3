"""Replay the ORIGINAL lisette's own notebooks against a lisette package, answering every provider request from the
original's recorded traffic (`cachy.jsonl`), and compare cell by cell with the outputs saved in those notebooks.

    .venv/bin/python tools/orig_nbs.py                      # ours and the original, 00_core, at the mirror's HEAD
    .venv/bin/python tools/orig_nbs.py --lib ours -v        # ours only, printing each differing cell
    .venv/bin/python tools/orig_nbs.py --nbs 00_core 01_usage --out /tmp/orignbs
    .venv/bin/python tools/orig_nbs.py --cell 198 -v        # one cell (its index among code cells), with what it needs run first

How it works:
- The notebooks, `nbs/samples/` and the original's `lisette/` source come from the bare mirror
  (`/work/.mirror/AnswerDotAI+lisette/repo`, `--rev`). The mirror lacks the newest `cachy.jsonl` blobs (large files are
  absent), so the recording used is the union of every `cachy.jsonl` version the mirror has (newest first). Requests
  that only later notebook versions make therefore miss for both libraries; compare with the original's run.
- Each library runs in its own process (ours: this venv; the original: `--orig-python`, a venv with the original's
  dependencies: `pip install lisette==0.1.37 litellm==1.106.2 pycachy ipython execnb fastlite mcp 'toolslm==0.3.46'`
  (0.3.47 dropped `toolslm.funccall`); its source at `--rev` is put first on sys.path so it matches the notebook).
- Results and what they showed: `tools/orig_nbs.md`.
  Cells run in order in one execnb `CaptureShell`, like `nbdev-test`. `#| eval: false` / `#| notest` cells are skipped.
- `#| export` cells define the library in the original notebook: they are NOT run. Their imports run, and each name they
  define (functions, classes, constants, `@patch`ed methods) is bound from the library under test; names the library
  lacks are reported (`missing`), and later cells that use them fail with NameError.
- cachy runs replay-only: a request not in the recording never reaches the network (nor is anything written): it gets a
  400 "REPLAY MISS" answer at once, and the cell is reported as a miss with model and URL. All API keys are fake.
- Outputs are compared with the ones saved in the original notebook after normalising ids, usage lines and addresses.

Results go to `--out` (default /tmp/orig_nbs): `<lib>-<nb>.jsonl` (one record a cell, with the bodies of the requests it
sent) and a summary on stdout.
"""
import os, sys, json, re, ast, hashlib, argparse, subprocess, tempfile, difflib
from pathlib import Path

MIRROR = '/work/.mirror/AnswerDotAI+lisette/repo'
ROOT = Path(__file__).resolve().parent.parent
KEYS = 'ANTHROPIC OPENAI GEMINI DEEPSEEK FIREWORKS_AI FIREWORKS OPENROUTER GROQ TOGETHER TOGETHERAI MISTRAL XAI MOONSHOT'.split()

def git(*a, binary=False):
    r = subprocess.run(['git', '-C', MIRROR, *a], capture_output=True)
    if r.returncode: return None
    return r.stdout if binary else r.stdout.decode()

# ---------------------------------------------------------------------------------------------------------- prepare
def prepare(rev, nbs, work):
    "Notebooks, samples, the original's source and the merged recording of `rev` into `work`; returns notes"
    work = Path(work); (work/'nbs'/'samples').mkdir(parents=True, exist_ok=True); notes = []
    for nb in nbs: (work/'nbs'/f'{nb}.ipynb').write_bytes(git('show', f'{rev}:nbs/{nb}.ipynb', binary=True))
    for f in git('ls-tree', '--name-only', f'{rev}:nbs/samples').split():
        if (b := git('show', f'{rev}:nbs/samples/{f}', binary=True)) is not None: (work/'nbs'/'samples'/f).write_bytes(b)
    src = work/'orig_src'/'lisette'; src.mkdir(parents=True, exist_ok=True)
    for f in git('ls-tree', '--name-only', f'{rev}:lisette').split(): (src/f).write_bytes(git('show', f'{rev}:lisette/{f}', binary=True))
    recs, used = {}, []
    for h in git('log', '--format=%h', rev, '--', 'cachy.jsonl').split():
        if (b := git('show', f'{h}:cachy.jsonl', binary=True)) is None: continue
        used.append(h)
        for l in b.decode().splitlines():
            if l.strip(): recs.setdefault(json.loads(l)['key'], l)
    (work/'cachy.jsonl').write_text('\n'.join(recs.values())+'\n')
    newest = git('log', '-1', '--format=%h', rev, '--', 'cachy.jsonl').strip()
    notes.append(f"recording: {len(recs)} responses from {len(used)} cachy.jsonl versions (newest readable {used[0] if used else None}; "
                 f"{rev}'s own {newest} {'read' if newest in used else 'absent from the mirror'})")
    return notes

# ------------------------------------------------------------------------------------------------------------- child
def _directives(src): return {l[2:].strip().split(':')[0].strip() for l in src.splitlines() if l.startswith('#|')}

def _skip(src):
    s = src.replace(' ', '')
    if '#|eval:false' in s or '#|notest' in s: return 'eval: false'
    if 'nbdev_export' in src or 'importlib.reload' in src: return 'tooling'
    if all(not l.strip() or l.lstrip().startswith('#') for l in src.splitlines()): return 'comment'

def child(a):
    for k in KEYS: os.environ[f'{k}_API_KEY'] = 'sk-fake-replay'
    for k in [k for k in os.environ if re.search(r'(API_KEY|_TOKEN|_SECRET)$', k) and not k.endswith('_API_KEY')]: del os.environ[k]
    os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'
    work = Path(a.work)
    if a.lib == 'orig': sys.path.insert(0, str(work/'orig_src'))
    import httpx, requests, cachy, cachy.core as cc
    try: import httpx2
    except ImportError: httpx2 = None
    reqs = []
    _check = cc._check
    def check(request, doms, cfp, is_stream, debug, mk_resp=None):
        key, res = _check(request, doms, cfp, is_stream, debug, mk_resp)
        body = request.content.decode('utf-8', 'replace')
        try: model = json.loads(body).get('model')
        except Exception: model = None
        if not model and (m := re.search(r'models/([^:/?]+)', str(request.url))): model = m.group(1)
        reqs.append(dict(key=key, url=str(request.url.copy_remove_param('key')), model=model, stream=bool(is_stream),
                         hit=res is not None, drift=drift.get(key), body=cc._normalize(body)[:200000]))
        return key, res
    cc._check = check
    known, drift = {json.loads(l)['key'] for l in open(work/'cachy.jsonl')}, {}
    def variants(raw):
        "The body as sent, then as older litellm versions sent it (drift both libraries share): another default output limit"
        yield None, raw
        try: o = json.loads(raw)
        except Exception: return
        if not isinstance(o, dict): return
        for path in (('max_tokens',), ('generationConfig', 'max_output_tokens')):  # Anthropic/OpenAI-style, Gemini
            d = o
            for p in path[:-1]: d = d.get(p) if isinstance(d, dict) else None
            if not isinstance(d, dict) or not isinstance(d.get(path[-1]), int): continue
            cur = d[path[-1]]
            for mt in (64000, 65535, 65536, 32000, 32768, 16384, 8192, 4096):
                if mt == cur: continue
                d[path[-1]] = mt
                yield f"{'.'.join(path)} {cur}->{mt}", json.dumps(o, sort_keys=True).encode()
            d[path[-1]] = cur
    def key(r, is_stream=False):
        "The recording was made by several pycachy versions, whose keys differ: the first scheme whose key was recorded"
        for why, raw in variants(cc._norm_content(r)):
            bodies = [cc._normalize(raw.decode('utf-8', 'surrogateescape')).encode('utf-8', 'surrogateescape'), raw]
            for u in (cc._url(r), str(r.url.copy_remove_param('key'))):
                for acc in (r.headers.get('accept', ''), ''):
                    for b in bodies:
                        k = hashlib.sha256(f'{u}{is_stream}{acc}'.encode('utf-8', 'surrogateescape') + b).hexdigest()[:8]
                        if k in known:
                            if why: drift[k] = why
                            return k
        return _key(r, is_stream)
    _key = cc._key
    cc._key = key
    cc._write_cache = lambda *a, **k: None  # replay only: nothing is ever recorded
    cc.enable_cachy(cache_dir=str(work))
    miss = lambda request: json.dumps({'error': {'type': 'invalid_request_error', 'message': f'REPLAY MISS {request.url}'}})
    def send(self, request, **kw): return httpx.Response(400, content=miss(request), headers={'content-type': 'application/json'}, request=request)
    async def asend(self, request, **kw): return send(self, request)
    def rsend(self, request, **kw):
        r = requests.Response(); r.status_code, r._content, r.url, r.request = 400, miss(request).encode(), request.url, request
        r.headers['content-type'] = 'application/json'; return r
    for cls, f in [(httpx.Client, send), (httpx.AsyncClient, asend), (requests.adapters.HTTPAdapter, rsend)] + \
                  ([(httpx2.Client, lambda s, r, **k: httpx2.Response(400, content=miss(r), headers={'content-type': 'application/json'}, request=r)),
                    (httpx2.AsyncClient, None)] if httpx2 else []):
        if f is None:
            async def f(self, request, **kw): return httpx2.Response(400, content=miss(request), headers={'content-type': 'application/json'}, request=request)
        cls._orig_send = f   # what cachy calls on a miss (or for a domain it does not record): never the network
    cachy.enable_cachy = cc.enable_cachy = cachy.disable_cachy = cc.disable_cachy = lambda *a, **k: None  # the notebook's own calls

    from IPython.core import displaypub
    def publish(self, data, metadata=None, source=None, *, transient=None, update=False):
        did = (transient or {}).get('display_id')
        if update and did:  # as Jupyter does: the update replaces the output with that display_id
            for o in self.outputs:
                if (o.get('transient') or {}).get('display_id') == did: o['data'] = data; return
        self.outputs.append(dict(data=data, metadata=metadata, transient=transient, update=update))
    displaypub.CapturingDisplayPublisher.publish = publish
    from execnb.shell import CaptureShell
    import importlib, pkgutil, lisette
    lib = {}
    mods = [lisette] + [importlib.import_module(f'lisette.{m.name}') for m in pkgutil.iter_modules(lisette.__path__)]
    for m in mods:
        for k, v in vars(m).items():
            if not k.startswith('__'): lib.setdefault(k, v)
    sh = CaptureShell(mpl_format=None)
    os.chdir(work/'nbs')
    sh.run('import os; from lisette import *')
    ns = sh.user_ns
    nb = json.loads((work/'nbs'/f'{a.nb}.ipynb').read_text())
    cells = [c for c in nb['cells'] if c['cell_type'] == 'code']
    out = open(a.res, 'w')
    upto = a.cell if a.cell is not None else len(cells)-1
    for i, c in enumerate(cells[:upto+1]):
        src = ''.join(c['source'])
        rec = dict(i=i, src=src[:400])
        if (why := _skip(src)): rec.update(status='skip', why=why)
        elif 'export' in _directives(src):
            rec.update(status='export', missing=bind_export(src, ns, lib))
        else:
            reqs.clear()
            outs = sh.run(src, timeout=a.timeout)
            rec['reqs'] = list({r['key']: r for r in reqs}.values())
            err = next((o for o in outs if o['output_type'] == 'error'), None)
            rec['outputs'] = [o for o in outs if o['output_type'] != 'error']
            misses = [r for r in rec['reqs'] if not r['hit']]
            if err: rec['error'] = f"{err['ename']}: {(err['evalue'] or '').splitlines()[0][:300] if err['evalue'] else ''}"
            rec['status'] = 'miss' if misses else 'error' if err else 'ok'
        out.write(json.dumps(rec, default=str)+'\n'); out.flush()
    sh.close()

def bind_export(src, ns, lib):
    "Run the imports of an `#| export` cell, bind the names it defines from the library `lib`; the names missing there"
    missing = []
    try: tree = ast.parse(src)
    except SyntaxError as e: return [f'<syntax: {e}>']
    def run(node):
        try: exec(compile(ast.Module([node], []), '<export>', 'exec'), ns)
        except Exception as e: missing.append(f'<import failed: {type(e).__name__}: {e}>')
    def bind(n):
        if n in lib: ns[n] = lib[n]
        elif n not in ns: missing.append(n)
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)): run(node)
        elif isinstance(node, ast.Try) and all(isinstance(o, (ast.Import, ast.ImportFrom)) for o in node.body): run(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            decs = [d.func if isinstance(d, ast.Call) else d for d in node.decorator_list]
            if any(isinstance(d, ast.Name) and d.id == 'patch' for d in decs) and node.args.args and node.args.args[0].annotation:
                ann = node.args.args[0].annotation
                try: clss = eval(compile(ast.Expression(ann), '<ann>', 'eval'), ns)
                except Exception: missing.append(f'{ast.unparse(ann)}.{node.name}'); continue
                for cls in (clss if isinstance(clss, tuple) else (clss,)):
                    if not hasattr(cls, node.name): missing.append(f'{cls.__name__}.{node.name}')
            else: bind(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                for n in ast.walk(t):
                    if isinstance(n, ast.Name): bind(n.id)
    return missing

# ----------------------------------------------------------------------------------------------------------- compare
_NORM = [(r'<div class="prose" markdown="1">\n*|\n*</div>(?=\n|$)', ''),  # the notebook viewer's wrapper, not lisette's
         (r'\b(chatcmpl|toolu|srvtoolu|call|msg|resp|fc|rs|ws|gen|req)[-_][A-Za-z0-9_-]{6,}', r'\1-ID'),
         (r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', 'UUID'),
         (r'0x[0-9a-fA-F]{6,}', '0xMEM'), (r'created=\d+', 'created=N'),
         # the usage line: litellm's Usage repr (varies by litellm version) or our compact form (deliberate): tokens only
         (r'- usage: `Usage\(completion_tokens=(\d+), prompt_tokens=(\d+), total_tokens=(\d+)[^`]*`', r'- usage: total=\3 in=\2 out=\1'),
         (r'- usage: `total=([\d,]+) \| in=([\d,]+) \| out=([\d,]+)[^`]*`', lambda m: f"- usage: total={m[1].replace(',','')} in={m[2].replace(',','')} out={m[3].replace(',','')}"),
         (r'(/tmp/)tmp\w+', r'\1tmpX'), (r'[ \t]+\n', '\n'),
         (r'\n{3,}', '\n\n')]  # runs of blank lines render as one in markdown

def norm(s):
    for p, r in _NORM: s = re.sub(p, r, s)
    return s.strip()

def out_text(o):
    "The text of one output, as a reader sees it: markdown if there is one, else plain text"
    if o['output_type'] == 'stream': return ''.join(o['text']) if isinstance(o['text'], list) else o['text']
    d = o.get('data', {})
    if any(k.startswith('image/') for k in d): return '<image>'
    for k in ('text/markdown', 'text/plain'):
        if k in d: return ''.join(d[k]) if isinstance(d[k], list) else d[k]
    return '<' + ','.join(sorted(d)) + '>'

def outs_text(outs):
    "Outputs joined; consecutive streams merge, as Jupyter shows them"
    return norm('\n'.join(out_text(o) for o in outs if o['output_type'] != 'stream' or o.get('name') == 'stdout'))

def compare(res, nb):
    "Records of `res` (a child's jsonl) with `differs` set where saved outputs exist and disagree"
    cells = [c for c in nb['cells'] if c['cell_type'] == 'code']
    recs = [json.loads(l) for l in open(res)]
    for r in recs:
        saved = [o for o in cells[r['i']].get('outputs', []) if o['output_type'] != 'error']
        if r['status'] in ('skip', 'export') or not saved: continue
        a, b = outs_text(saved), outs_text(r.get('outputs', []))
        if a != b:
            r['differs'] = True
            r['diff'] = '\n'.join(list(difflib.unified_diff(a.splitlines(), b.splitlines(), 'saved', r['lib'] if 'lib' in r else 'run', lineterm='', n=1))[:40])
    return recs

def summary(recs):
    from collections import Counter
    c = Counter(r['status'] for r in recs)
    c['output differs'] = sum(1 for r in recs if r.get('differs'))
    c['missing names'] = sum(len(r.get('missing', [])) for r in recs)
    return c

def label(r):
    if r is None: return '-'
    s = r['status']
    if s == 'miss': m = [x for x in r['reqs'] if not x['hit']][0]; s += f" {m['model']}"
    if s == 'error': s += f" {r['error'][:90]}"
    if s == 'export' and r.get('missing'): s += f" missing {r['missing']}"
    if r.get('differs'): s += ' [output differs]'
    return s

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--rev', default='HEAD'); p.add_argument('--nbs', nargs='+', default=['00_core'])
    p.add_argument('--lib', choices=['ours', 'orig', 'both'], default='both')
    p.add_argument('--orig-python', default=next((str(q) for q in [ROOT/'.parity-venv/bin/python', Path('/work/main/.parity-venv/bin/python'),
                                                  Path('/tmp/origvenv/bin/python')] if q.exists()), None))
    p.add_argument('--out', default='/tmp/orig_nbs'); p.add_argument('--cell', type=int); p.add_argument('--timeout', type=int, default=120)
    p.add_argument('-v', action='store_true'); p.add_argument('--reuse', action='store_true', help='compare the records of the last run again, without running')
    p.add_argument('--child', action='store_true', help=argparse.SUPPRESS); p.add_argument('--work'); p.add_argument('--nb'); p.add_argument('--res')
    a = p.parse_args()
    if a.child: return child(a)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix='orig_nbs_'))
    for n in prepare(a.rev, a.nbs, work): print(n)
    libs = ['ours', 'orig'] if a.lib == 'both' else [a.lib]
    for nb in a.nbs:
        procs = {}
        for lib in ([] if a.reuse else libs):
            py = sys.executable if lib == 'ours' else a.orig_python
            if not py: sys.exit("no venv with the original's dependencies: see tools/parity.py, or pass --orig-python")
            env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
            cmd = [py, str(Path(__file__).resolve()), '--child', '--lib', lib, '--work', str(work), '--nb', nb,
                   '--res', str(out/f'{lib}-{nb}.jsonl'), '--timeout', str(a.timeout)] + (['--cell', str(a.cell)] if a.cell is not None else [])
            procs[lib] = subprocess.Popen(cmd, env=env, cwd=str(work), stdout=open(out/f'{lib}-{nb}.log', 'w'), stderr=subprocess.STDOUT)
        for lib, pr in procs.items():
            if pr.wait(): print(f'{lib} {nb}: child exited {pr.returncode}, see {out}/{lib}-{nb}.log')
        nbj = json.loads((work/'nbs'/f'{nb}.ipynb').read_text())
        res = {lib: {r['i']: r for r in compare(out/f'{lib}-{nb}.jsonl', nbj)} for lib in libs}
        print(f'\n## {nb}')
        for lib in libs: print(f'{lib:5}', dict(summary(list(res[lib].values()))))
        if len(libs) == 2:
            o, g = res['ours'], res['orig']
            worse = [i for i in o if (g.get(i) or {}).get('status') == 'ok' and (o[i]['status'] != 'ok' or (o[i].get('differs') and not g[i].get('differs')))]
            worse += [i for i in o if o[i]['status'] == 'export' and set(o[i].get('missing', [])) - set((g.get(i) or {}).get('missing', []))]
            print(f'cells where the original runs and hits the recording but ours does not (or prints differently): {len(worse)}')
            for i in sorted(set(worse)):
                print(f"[{i}] ours: {label(o[i])}\n      orig: {label(g.get(i))}\n      {o[i]['src'][:150]!r}")
                if a.v and o[i].get('diff'): print('      ' + o[i]['diff'].replace('\n', '\n      '))
        else:
            for r in res[libs[0]].values():
                if r['status'] not in ('ok', 'skip', 'export') or r.get('differs') or r.get('missing'):
                    print(f"[{r['i']}] {label(r)}\n      {r['src'][:150]!r}")
                    if a.v and r.get('diff'): print('      ' + r['diff'].replace('\n', '\n      '))
    print(f'\nrecords: {out}/<lib>-<nb>.jsonl; work dir: {work}')

if __name__ == '__main__': main()
