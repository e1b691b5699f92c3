"""Request parity with the original lisette: run the same scenarios through the original (the `lisette` package from
PyPI, installed in its own venv) and through ours, against our fake provider with the same scripted replies, and diff
the request bodies each one sends. Recorded provider traffic is keyed on the request body, so every difference here is
either a bug of ours or a deliberate deviation, which `DEVIATIONS` names.

    .venv/bin/python tools/parity.py                 # all scenarios on every protocol the fake provider speaks
    .venv/bin/python tools/parity.py tool_loop -v    # one scenario, printing both bodies
    .venv/bin/python tools/parity.py --save tests/fixtures/upstream_bodies.json   # what the original sends, for tests

The original is installed on first use into `.parity-venv` (`pip install lisette==ORIG_VERSION litellm==<ours>`).
"""
import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
import argparse, difflib, json, subprocess, sys, tempfile, textwrap
from pathlib import Path
import litellm
from lisette.testing import FakeProvider, Reply

ORIG_VERSION = '0.1.37'
ROOT = Path(__file__).resolve().parent.parent

# Tools, in a real file so docments can read their comments (as in the original's notebook)
TOOLS = '''
import asyncio
def simple_add(
    a: int,   # first operand
    b: int=0  # second operand
) -> int:
    "Add two numbers together"
    return a + b

def multiply(a: int, b: int) -> int:
    "Multiply two numbers"
    return a * b

async def async_add(a: int, b: int) -> int:
    "Add two numbers asynchronously"
    return a + b
'''

CLIENT = '''
import os, sys, json, asyncio, textwrap, traceback
os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'
sys.path.insert(0, sys.argv[3])
from lisette import *
from parity_tools import *
MODEL, KW = sys.argv[1], json.loads(sys.argv[2])
print(json.dumps({'ready': True}), flush=True)
for line in sys.stdin:  # one scenario a line: run it, say how it went
    src = json.loads(line)['code']
    try:
        if 'await ' in src:
            exec(compile('async def _main():\\n' + textwrap.indent(src, '    '), '<scenario>', 'exec'))
            asyncio.run(_main())
        else: exec(compile(src, '<scenario>', 'exec'))
        print(json.dumps({'ok': True}), flush=True)
    except BaseException as e: print(json.dumps({'ok': False, 'err': f'{type(e).__name__}: {e}'[:400]}), flush=True)
'''

class Client:
    "A client process of one library (its venv's python) for one protocol: imports once, then runs scenarios on request"
    def __init__(self, py, model, kw, tooldir):
        # cwd: not our checkout, whose lisette/ would shadow the original's
        self.p = subprocess.Popen([str(py), '-c', CLIENT, model, json.dumps(kw), tooldir], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tooldir)
        self._read()
    def _read(self):
        for line in self.p.stdout:
            if line.startswith('{'): return json.loads(line)
        raise RuntimeError(f"parity client exited ({self.p.wait()})")
    def run(self, code):
        self.p.stdin.write(json.dumps({'code': code})+'\n'); self.p.stdin.flush()
        r = self._read()
        return None if r['ok'] else r['err']
    def close(self): self.p.kill()

def _protos(fp):
    "(name, model, Chat kwargs) per protocol the fake provider speaks"
    res = [('openai', 'openai/gpt-4o-mini', dict(api_base=fp.openai_base, api_key='k')),
           ('anthropic', 'anthropic/claude-sonnet-4-5', dict(api_base=fp.anthropic_base, api_key='k'))]
    if hasattr(fp, 'gemini_base'): res.append(('gemini', 'gemini/gemini-3-flash-preview', dict(api_base=fp.gemini_base, api_key='k')))
    if hasattr(fp, 'responses_base'): res.append(('responses', 'openai/responses/gpt-5.4', dict(api_base=fp.openai_base, api_key='k')))
    return res

R = lambda *a, **k: Reply(*a, **k)
tc = lambda *calls: R(tool_calls=list(calls))

# name: (replies, code). `MODEL` and `KW` (api_base, api_key) are given; tools come from TOOLS.
SCENARIOS = {
    'plain':        (["Hi Rens"], "Chat(MODEL, **KW)('Hey my name is Rens')"),
    'two_turns':    (["Hi", "Rens"], "c = Chat(MODEL, **KW); c('Hey my name is Rens'); c('Whats my name')"),
    'system':       (["ok"], "Chat(MODEL, sp='Be brief.', **KW)('hi')"),
    'max_tokens':   (["Once"], "Chat(MODEL, **KW)('Write a short story about a robot and a dog', max_tokens=40)"),
    'temp':         (["ok"], "Chat(MODEL, temp=0.5, **KW)('hi')"),
    'prefill':      (["ok"], "Chat(MODEL, **KW)('Spell my name', prefill='Your name is R')"),
    'tool_loop':    ([tc(('simple_add', dict(a=604542, b=6458932))), "7063474"],
                     "Chat(MODEL, tools=[simple_add], **KW)('What is 604542+6458932?')"),
    'parallel':     ([tc(('simple_add', dict(a=10, b=5)), ('simple_add', dict(a=2, b=1))), tc(('multiply', dict(a=15, b=3))), "done"],
                     "Chat(MODEL, tools=[simple_add, multiply], **KW)('((10+5)*3)/(2+1)', max_steps=3)"),
    'max_steps':    ([tc(('simple_add', dict(a=1, b=2))), tc(('simple_add', dict(a=3, b=3))), "summary"],
                     "Chat(MODEL, tools=[simple_add], **KW)('add things', max_steps=1)"),
    'stream':       (["Hello there"], "list(Chat(MODEL, **KW)('hi', stream=True))"),
    'stream_tools': ([tc(('simple_add', dict(a=1, b=2))), "3"], "list(Chat(MODEL, tools=[simple_add], **KW)('1+2?', stream=True))"),
    'think':        ([R("ok", thinking="hmm")], "Chat(MODEL, **KW)('hi', think='l')"),
    'search':       (["ok"], "Chat(MODEL, **KW)('otters?', search='l')"),
    'cache':        (["a", "b"], "c = Chat(MODEL, cache=True, **KW); c('hi'); c('again')"),
    'cache_idxs':   (["a", "b"], "c = Chat(MODEL, cache=True, cache_idxs=[-2,-1], **KW); c('hi'); c('again')"),
    'images':       (["a puppy"], "Chat(MODEL, **KW)([open(%r,'rb').read(), 'What is this?'])" % str(ROOT/'samples'/'puppy.jpg')),
    'hist':         (["Rens"], "Chat(MODEL, hist=['Hey my name is Rens', 'Hi Rens'], **KW)('Whats my name')"),
    'tool_choice':  ([tc(('simple_add', dict(a=1, b=2))), "3"], "Chat(MODEL, tools=[simple_add], **KW)('1+2?', tool_choice='required', max_steps=1)"),
    'async':        ([tc(('async_add', dict(a=1, b=2))), "3"], "await AsyncChat(MODEL, tools=[async_add], **KW)('1+2?')"),
    'async_stream': (["Hello"], "[o async for o in await AsyncChat(MODEL, **KW)('hi', stream=True)]"),
}

# Differences we make on purpose (see the honest-requests issue); shown, but not counted as regressions
DEVIATIONS = {}

def _venv(path):
    py = Path(path)/'bin'/'python'
    if not py.exists():
        print(f"installing the original lisette {ORIG_VERSION} into {path} ...", file=sys.stderr)
        subprocess.run([sys.executable, '-m', 'venv', str(path)], check=True)
        subprocess.run([str(py), '-m', 'pip', 'install', '-q', f'lisette=={ORIG_VERSION}', f'litellm=={litellm.__version__}'], check=True)
    return py

def run(client, fp, replies, code):
    "Bodies `fp` receives when `client` runs `code`, and the client's error if any"
    fp.reset(); fp.queue(*[r if isinstance(r, Reply) else Reply(r) for r in replies])
    err = client.run(code)
    return [r.body for r in fp.requests], err

def _dump(o): return json.dumps(o, indent=1, sort_keys=True, default=str).splitlines()

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('names', nargs='*'); ap.add_argument('-v', action='store_true', help='print diffs in full')
    ap.add_argument('--orig-venv', default=str(ROOT/'.parity-venv')); ap.add_argument('--save')
    ap.add_argument('--proto', action='append')
    a = ap.parse_args()
    orig, ours = _venv(a.orig_venv), Path(sys.executable)
    names = a.names or list(SCENARIOS)
    saved, same, diff = {}, 0, 0
    with tempfile.TemporaryDirectory() as td, FakeProvider() as fp:
        (Path(td)/'parity_tools.py').write_text(TOOLS)
        for pname, model, kw in _protos(fp):
            if a.proto and pname not in a.proto: continue
            oc, wc = Client(orig, model, kw, td), Client(ours, model, kw, td)
            try:
                for n in names:
                    replies, code = SCENARIOS[n]
                    ob, oerr = run(oc, fp, replies, code)
                    wb, werr = run(wc, fp, replies, code)
                    saved[f'{pname}/{n}'] = ob
                    if oerr or werr: print(f"{pname:9} {n:13} ERROR original={oerr} ours={werr}")
                    d = list(difflib.unified_diff(_dump(ob), _dump(wb), 'original', 'ours', n=2, lineterm=''))
                    if not d: same += 1; print(f"{pname:9} {n:13} same ({len(ob)} requests)"); continue
                    diff += 1
                    print(f"{pname:9} {n:13} DIFFERENT ({len(ob)} vs {len(wb)} requests)" + (f"  [deviation: {DEVIATIONS[n]}]" if n in DEVIATIONS else ''))
                    print(textwrap.indent('\n'.join(d if a.v else d[:40]), '    '))
            finally: oc.close(); wc.close()
    print(f"\n{same} same, {diff} different")
    if a.save: Path(a.save).write_text(json.dumps(saved, indent=1, sort_keys=True, default=str))

if __name__ == '__main__': main()
