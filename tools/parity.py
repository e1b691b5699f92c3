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
import argparse, difflib, json, re, subprocess, sys, tempfile, textwrap
from concurrent.futures import ThreadPoolExecutor
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
        env = {k:v for k,v in os.environ.items() if k!='PYTHONPATH'} if Path(py)!=Path(sys.executable) else None  # PYTHONPATH may name our checkout
        self.p = subprocess.Popen([str(py), '-c', CLIENT, model, json.dumps(kw), tooldir], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tooldir, env=env)
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
    if hasattr(fp, 'responses_base'): res.append(('responses', 'openai/responses/gpt-5.4', dict(api_base=fp.responses_base, api_key='k')))
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
    'think_x':      ([R("ok", thinking="hmm")], "Chat(MODEL, **KW)('hi', think='x')"),
    'think_temp':   ([R("ok", thinking="hmm")], "Chat(MODEL, temp=0.5, **KW)('hi', think='m')"),
    'tools_search': (["ok"], "Chat(MODEL, tools=[simple_add], **KW)('otters?', search='m')"),
    'blank':        (["ok"], "Chat(MODEL, **KW)('   ')"),
    # the model constants, each on the protocol it speaks
    'gpt54':        (["ok"], "assert MODEL == gpt54; Chat(gpt54, **KW)('hi', search='l')", {'responses'}),
    'gpt54m':       (["ok"], "Chat(gpt54m, **KW)('hi')", {'responses'}),
    'direct_gpt54': (["ok"], "import litellm; litellm.completion(gpt54, [{'role': 'user', 'content': 'otters?'}], tools=[lite_mk_func(simple_add)], web_search_options={}, **KW)", {'responses'}),
    'sonn45':       (["ok"], "Chat(sonn45, **KW)('hi')", {'anthropic'}),
}

# Differences we make on purpose (issue 16); shown, but not counted as regressions. The original never sends a
# temperature (it adds `temperature` to litellm's `additional_drop_params`); ours sends an explicit `temp`.
# Keys: a scenario, or 'protocol/scenario'.
DEVIATIONS = {'temp': 'an explicit temp is sent (the original drops every temperature)',
              'blank': "a blank prompt is sent as '.' (Anthropic and Gemini reject blank text; the original sends it as is), "
                       "reported as a 'blank_prompt' adjustment",
              'async': "the original's AsyncChat nests the tool results in its history (OpenAI gets a malformed message, "
                       "Anthropic fails); ours sends the history Chat sends"}
_no_reasoning = ("the original fails (litellm rejects reasoning_effort for gpt-4o-mini); ours sends the request without "
                 "thinking and reports a 'think' adjustment")
DEVIATIONS |= {f'openai/{n}': _no_reasoning for n in ('think', 'think_x', 'think_temp')}

def deviation(pname, n): return DEVIATIONS.get(f'{pname}/{n}', DEVIATIONS.get(n))

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

_re_gemini_id = re.compile(r'"call_[0-9a-f]{28}"')

_EMPTY_TEXT = "[System: Empty message content sanitised to satisfy protocol]"  # litellm's, for a blank Anthropic text block

def _litellm_drift(pname, b):
    """Undo, in place, what litellm <= 1.106 put in request body `b` and 1.110 no longer does, so a body recorded under
    either equals one sent under the other. Each is litellm's alone: the bare `litellm.completion` does the same."""
    if pname=='gemini' and (b.get('generationConfig') or {}).get('temperature')==1.0:
        del b['generationConfig']['temperature']  # Gemini 3's default temperature 1.0, sent by litellm when none is given
    for m in b.get('messages') or []:
        if m.get('provider_specific_fields')=={'refusal': None}: del m['provider_specific_fields']  # OpenAI's refusal=None echoed back
        c = m.get('content')
        if pname=='anthropic' and isinstance(c, list) and any(x.get('type')=='tool_use' for x in c):
            m['content'] = [x for x in c if not (x.get('type')=='text' and x.get('text')==_EMPTY_TEXT)]  # blank text of a tool-call turn
    if pname=='responses' and not b.get('instructions'):  # the system prompt, as a leading system input item
        inp, sys_ = b.get('input') or [], []
        while inp and isinstance(inp, list) and inp[0].get('type', 'message')=='message' and inp[0].get('role')=='system' \
              and all(p.get('type')=='input_text' for p in inp[0].get('content') or [{}]):
            sys_.append(' '.join(p['text'] for p in inp.pop(0)['content']))
        if sys_: b['instructions'] = ' '.join(sys_)
    return b

def normalize(pname, bodies):
    """Bodies as JSON-able data; Gemini tool-call ids (random: Gemini sends none, litellm makes them up) numbered in order;
    what only litellm's version changes, undone (`_litellm_drift`)"""
    s, ids = json.dumps(bodies, sort_keys=True, default=str), {}
    if pname=='gemini': s = _re_gemini_id.sub(lambda m: ids.setdefault(m[0], f'"call_gemini_{len(ids)}"'), s)
    return [_litellm_drift(pname, b) if isinstance(b, dict) else b for b in json.loads(s)]

def _dump(o): return json.dumps(o, indent=1, sort_keys=True, default=str).splitlines()

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('names', nargs='*'); ap.add_argument('-v', action='store_true', help='print diffs in full')
    ap.add_argument('--orig-venv', default=str(ROOT/'.parity-venv')); ap.add_argument('--save')
    ap.add_argument('--proto', action='append')
    a = ap.parse_args()
    orig, ours = _venv(a.orig_venv), Path(sys.executable)
    names = a.names or list(SCENARIOS)
    saved, same, diff, dev, err = {}, 0, 0, 0, 0
    with tempfile.TemporaryDirectory() as td, FakeProvider() as fp, FakeProvider() as fp2, ThreadPoolExecutor(2) as ex:
        (Path(td)/'parity_tools.py').write_text(TOOLS)
        for (pname, model, kw), (_, _, kw2) in zip(_protos(fp), _protos(fp2)):  # the original talks to fp, ours to fp2, at once
            if a.proto and pname not in a.proto: continue
            oc, wc = ex.submit(Client, orig, model, kw, td), ex.submit(Client, ours, model, kw2, td)
            oc, wc = oc.result(), wc.result()
            try:
                for n in names:
                    replies, code, *only = SCENARIOS[n]
                    if only and pname not in only[0]: continue
                    fo, fw = ex.submit(run, oc, fp, replies, code), ex.submit(run, wc, fp2, replies, code)
                    (ob, oerr), (wb, werr) = fo.result(), fw.result()
                    ob, wb = normalize(pname, ob), normalize(pname, wb)
                    saved[f'{pname}/{n}'] = ob
                    if oerr or werr: err += 1; print(f"{pname:9} {n:13} ERROR original={oerr} ours={werr}")
                    d = list(difflib.unified_diff(_dump(ob), _dump(wb), 'original', 'ours', n=2, lineterm=''))
                    if not d and not (oerr or werr): same += 1; print(f"{pname:9} {n:13} same ({len(ob)} requests)"); continue
                    if not d: continue
                    if why := deviation(pname, n): dev += 1
                    else: diff += 1
                    print(f"{pname:9} {n:13} DIFFERENT ({len(ob)} vs {len(wb)} requests)" + (f"  [deviation: {why}]" if why else ''))
                    print(textwrap.indent('\n'.join(d if a.v else d[:40]), '    '))
            finally: oc.close(); wc.close()
    print(f"\n{same} same, {diff} different, {dev} deliberate deviations, {err} with errors")
    if a.save: Path(a.save).write_text(json.dumps(saved, indent=1, sort_keys=True, default=str))

if __name__ == '__main__': main()
