"""Every figure of the performance issue in one run: lisette against raw litellm on the same local servers, in the same
process, interleaved. Prints each figure as it is measured, then a summary table. Asserts nothing.

    .venv/bin/python bench/run_all.py            # about 4 minutes on 2 cores
    .venv/bin/python bench/run_all.py --quick    # fewer trials, 200 concurrent chats instead of 1,000

The ratios carry raw litellm's own time, which swings from run to run (its Python work per request is several ms,
the local server's answer ~1 ms); lisette's own time outside litellm.completion (`own_time_live`) and the opcode count
of a canned tool round (`opcodes`) show changes of 0.1 ms that the ratios cannot.

Run it on a quiet machine: the ratios hold under load better than the milliseconds, but both move.
"""
import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
import asyncio, gc, importlib.metadata, inspect, json, pathlib, platform, statistics, subprocess, sys, tempfile, time, tracemalloc
sys.path.insert(0, str(pathlib.Path(__file__).parent))
import httpx, litellm
from lisette import Chat, mk_msgs, contents
import bench_chat, bench_many, bench_messages, bench_history

M = bench_chat.M
QUICK = '--quick' in sys.argv
rows = []  # (path, target, figure)
def row(path, target, figure): rows.append((path, target, figure)); print(f"  -> {path}: {figure} (target {target})", flush=True)

# One server process for the turn, stream and tool-round comparisons: 'ok' for a plain turn, 5,000 chunks for
# 'stream please', two parallel tool calls for 'tools please' and 'done' once their results come back.
_SERVER = """
import sys, time
from lisette.testing import FakeProvider, Reply
text = ''.join(chr(97+i%26) for i in range(5000))
def answer(body, path):
    last = body['messages'][-1]
    if last.get('role') == 'tool': return 'done'
    if last.get('content') == 'tools please': return Reply(tool_calls=[('add', {'a': 1, 'b': 2}), ('add', {'a': 3, 'b': 4})])
    return Reply(text, chunks=5000) if body.get('stream') and last.get('content') == 'stream please' else 'ok'
fp = FakeProvider(port=int(sys.argv[1])).start().respond_with(answer)
print('ready', flush=True)
while True: time.sleep(3600)
"""

def add(a:int, b:int) -> int:
    "Add two numbers"
    return a+b

_schema = [{'type': 'function', 'function': {'name': 'add', 'description': 'Add two numbers', 'parameters': {
    'type': 'object', 'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer'}}, 'required': ['a', 'b']}}}]

def tool_round(kw):
    "A prompt -> two parallel tool calls -> answer, through Chat and through raw litellm (the same two requests), interleaved"
    def raw():
        msgs = [{'role': 'user', 'content': 'tools please'}]
        m = litellm.completion(M, msgs, tools=_schema, **kw).choices[0].message
        msgs += [m.model_dump(exclude_none=True)] + [{'role': 'tool', 'tool_call_id': tc.id, 'name': 'add',
                 'content': str(add(**json.loads(tc.function.arguments)))} for tc in m.tool_calls]
        assert litellm.completion(M, msgs, tools=_schema, **kw).choices[0].message.content == 'done'
    chat = Chat(M, tools=[add], **kw)
    def ours(): chat.hist = []; assert contents(chat('tools please')).content == 'done'  # as per_turn: one chat, turn after turn
    for _ in range(3): raw(); ours()
    rs, os_ = [], []
    for _ in range(15 if QUICK else 41): rs.append(bench_chat.med(raw, 1)); os_.append(bench_chat.med(ours, 1))
    r, o = statistics.median(rs), statistics.median(os_)
    print(f"tool round (2 requests, 2 parallel calls): raw litellm {r*1e3:.2f} ms, Chat {o*1e3:.2f} ms, ratio {o/r:.3f}")
    return o/r

class _TimedStream(httpx.SyncByteStream):
    "A response body whose reads add their time to `acc[0]`"
    def __init__(self, inner, acc): self.inner, self.acc = inner, acc
    def __iter__(self):
        it = iter(self.inner)
        while True:
            t = time.perf_counter()
            try: b = next(it)
            except StopIteration: return
            finally: self.acc[0] += time.perf_counter()-t
            yield b
    def close(self): self.inner.close()

class _TimedTransport(httpx.HTTPTransport):
    "httpx's transport, adding the time from sending a request to its body's last byte (the HTTP wait) to `acc[0]`"
    def __init__(self, acc, **kw): super().__init__(**kw); self.acc = acc
    def handle_request(self, request):
        t = time.perf_counter()
        try: r = super().handle_request(request)
        finally: self.acc[0] += time.perf_counter()-t
        r.stream = _TimedStream(r.stream, self.acc)
        return r

def own_time_live(url, n=None):
    """Time outside the call each side cannot avoid, per live turn and per live tool round, interleaved: lisette's own
    (a turn's time outside its `completefunc`, here `litellm.completion` wrapped in a timer: nothing patched globally) and
    raw litellm's own (a call's time outside the HTTP wait, timed in httpx's transport). These stay put when the server's
    answers swing from 8 to 30 ms, as the ratios do not."""
    n = n or (60 if QUICK else 200)
    http, inlit = [0.], [0.]
    # litellm builds an OpenAI client (on `litellm.client_session`, when set) for each new api_key and set of client options
    # once, and caches it: a key of its own makes those clients the timed transport's, here only
    kw = dict(api_base=url+'/v1', api_key='k-timed')
    def completion(**k):  # Chat's `completefunc`: litellm's, timed
        t = time.perf_counter()
        try: return litellm.completion(**k)
        finally: inlit[0] += time.perf_counter()-t
    # (any other completefunc than litellm's leaves out Chat's `max_retries=0`, ~1 µs: sent here, inside the timed call)
    timed = lambda f: (lambda **k: f(**(k | dict(max_retries=0))))
    old, litellm.client_session = litellm.client_session, httpx.Client(transport=_TimedTransport(http), follow_redirects=True)
    try: return _own_time_live(n, kw, http, inlit, completion, timed)
    finally: litellm.client_session = old

def _own_time_live(n, kw, http, inlit, completion, timed):
    def raw_turn(): litellm.completion(M, [{'role': 'user', 'content': 'hi'}], max_retries=0, **kw)
    def raw_round():
        msgs = [{'role': 'user', 'content': 'tools please'}]
        m = litellm.completion(M, msgs, tools=_schema, max_retries=0, **kw).choices[0].message
        msgs += [m.model_dump(exclude_none=True)] + [{'role': 'tool', 'tool_call_id': tc.id, 'name': 'add',
                 'content': str(add(**json.loads(tc.function.arguments)))} for tc in m.tool_calls]
        assert litellm.completion(M, msgs, tools=_schema, max_retries=0, **kw).choices[0].message.content == 'done'
    chat, tchat = Chat(M, completefunc=timed(completion), **kw), Chat(M, tools=[add], completefunc=timed(completion), **kw)
    def turn(): chat.hist = []; chat('hi')
    def round_(): tchat.hist = []; assert contents(tchat('tools please')).content == 'done'
    fs = dict(raw_turn=raw_turn, chat_turn=turn, raw_round=raw_round, chat_round=round_)
    tot, out, lit = ({k: [] for k in fs} for _ in range(3))
    for i in range(n+5):
        for k,f in fs.items():
            http[0] = inlit[0] = 0.
            t = time.perf_counter(); f(); d = time.perf_counter()-t
            if i<5: continue  # warm-up
            tot[k].append(d)
            out[k].append(d-http[0] if k.startswith('raw') else d-inlit[0])  # raw: outside HTTP; Chat: outside litellm
            lit[k].append(inlit[0]-http[0])  # (Chat: litellm's time on Chat's requests outside HTTP)
    md = lambda l: statistics.median(l)*1e6
    r = {k: md(out[k]) for k in fs} | {'lit_turn': md(lit['chat_turn']), 'lit_round': md(lit['chat_round']),
         'total_raw_turn': md(tot['raw_turn']), 'total_raw_round': md(tot['raw_round'])}
    print(f"own time outside the unavoidable call, median of {n} interleaved live trials:\n"
          f"  one turn: lisette {r['chat_turn']:.0f} µs outside litellm.completion; raw litellm {r['raw_turn']:.0f} µs outside the HTTP wait "
          f"(litellm on Chat's request {r['lit_turn']:.0f} µs); raw total {r['total_raw_turn']/1e3:.2f} ms\n"
          f"  tool round (2 requests, 2 parallel calls): lisette {r['chat_round']:.0f} µs; raw litellm {r['raw_round']:.0f} µs "
          f"(litellm on Chat's requests {r['lit_round']:.0f} µs); raw total {r['total_raw_round']/1e3:.2f} ms", flush=True)
    return r

def opcodes():
    """Python opcodes one canned tool round runs (prompt -> two calls -> answer, replies made beforehand, sequential tools:
    one thread), lisette's and the rest: a figure no machine noise moves, for changes too small to time"""
    from litellm import ModelResponse
    def reply(**m):
        r = ModelResponse(model='gpt-4o-mini', choices=[dict(message=dict(role='assistant', **m), finish_reason='tool_calls' if 'tool_calls' in m else 'stop')],
                          usage=dict(prompt_tokens=50, completion_tokens=10, total_tokens=60))
        r._hidden_params = {'response_cost': 4.5e-06}; return r  # (as litellm sets it on a live reply)
    calls = lambda: reply(content=None, tool_calls=[dict(id=f'call_{i}abcdefghijklmnopqrstuvw', type='function',
                          function=dict(name='add', arguments=f'{{"a": {i}, "b": 2}}')) for i in range(2)])
    pool = []
    chat = Chat('gpt-4o-mini', tools=[add], api_base='http://127.0.0.1:9/v1', api_key='k', completefunc=lambda **kw: pool.pop(), parallel_tools=False)
    def one(): pool[:] = [reply(content='done'), calls()]; chat.hist = []; assert contents(chat('tools please')).content == 'done'
    for _ in range(5): one()
    lis_dir, cnt = str(pathlib.Path(inspect.getfile(Chat)).parent), [0, 0]
    def tr(frame, event, arg):
        frame.f_trace_opcodes, i = True, int(frame.f_code.co_filename.startswith(lis_dir))
        def op(f, e, a):
            if e == 'opcode': cnt[i] += 1
            return op
        return op
    pool[:] = [reply(content='done'), calls()]; chat.hist = []
    sys.settrace(tr)
    try: chat('tools please')
    finally: sys.settrace(None)
    print(f"canned tool round: {sum(cnt):,} Python opcodes, {cnt[1]:,} of them in lisette")
    return cnt[1], sum(cnt)

def memory(kw, n=100):
    "Memory kept per finished one-turn conversation: a Chat, against raw litellm's messages plus its response"
    def held(f):
        gc.collect(); tracemalloc.start()
        keep = [f() for _ in range(n)]
        gc.collect(); cur, _ = tracemalloc.get_traced_memory(); tracemalloc.stop()
        return cur/n, keep
    def raw():
        msgs = [{'role': 'user', 'content': 'hi'}]
        return msgs + [litellm.completion(M, msgs, **kw)]
    def ours():
        c = Chat(M, **kw); c('hi'); return c
    raw(); ours()
    r, _ = held(raw); o, _ = held(ours)
    print(f"memory per finished one-turn conversation: raw litellm {r/1024:.1f} KiB, Chat {o/1024:.1f} KiB, ratio {o/r:.2f}")
    return o/r, o

def import_time(n=7):
    "Milliseconds `import lisette` adds after `import litellm`, in fresh interpreters (the best of `n`: load only adds)"
    env = {k:v for k,v in os.environ.items() if k!='PYTHONDONTWRITEBYTECODE'}  # as users import: from cached bytecode
    # timed inside one interpreter, after litellm: litellm's own import varies by ±100 ms from run to run, more than lisette adds
    code = "import time, litellm; t=time.perf_counter(); import lisette; print(time.perf_counter()-t)"
    t = lambda: float(subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env=env, check=True).stdout)
    t()  # writes the bytecode caches
    m = min(t() for _ in range(n))
    print(f"import: lisette after litellm +{m*1e3:.0f} ms")
    return m

def main():
    print(f"lisette bench, {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}, litellm {importlib.metadata.version('litellm')}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start", flush=True)
    p, url = bench_chat.server_process(_SERVER)
    try:
        kw = dict(api_base=url+'/v1', api_key='k')
        turn = bench_chat.per_turn(kw)
        row("one Chat turn vs litellm.completion", "<= 1.02x", f"{turn['ratio']:.3f}x ({turn['extra_us']:+.0f} µs/turn: litellm on Chat's options {turn['options_us']:+.0f}, lisette {turn['own_us']:+.0f})")
        ow = bench_chat.own_work_after_idle()
        row("lisette's own work per turn, canned reply: warm / after 5 ms idle / after cache thrash", "(explains the live extra)",
            f"{ow['warm']*1e6:.0f} / {ow['idle']*1e6:.0f} / {ow['thrash']*1e6:.0f} µs")
        fi = bench_chat.first_item(kw)
        row("time to first streamed item vs raw (sync / async)", "<= 1.05x", f"{fi['sync_first']:.3f}x / {fi['async_first']:.3f}x")
        row("AsyncChat streamed turn vs raw acompletion iteration", "<= 1.03x", f"{fi['async_whole']:.3f}x")
        row("sync streamed turn vs raw", "hold (0.99x)", f"{fi['sync_whole']:.3f}x")
        st = bench_chat.stream_5000(kw)
        row("5,000-chunk stream via HTTP vs raw", "<= 1.05x", f"{st['ratio']:.3f}x; own cost {st['us_per_chunk']:.1f} µs/chunk")
        row("tool round vs raw (2 requests)", "hold (1.01x)", f"{tool_round(kw):.3f}x")
        o = own_time_live(url)
        row("lisette's own time per live turn, outside litellm.completion (raw litellm's own, outside the HTTP wait)", "(robust: no server time)",
            f"{o['chat_turn']:.0f} µs ({o['raw_turn']:.0f} µs)")
        row("lisette's own time per live tool round, 2 requests, outside litellm.completion (raw litellm's own, outside the HTTP wait)", "(robust: no server time)",
            f"{o['chat_round']:.0f} µs ({o['raw_round']:.0f} µs)")
        mr, mb = memory(kw)
        row("memory per one-turn conversation vs raw", "hold (1.03x)", f"{mr:.2f}x ({mb/1024:.1f} KiB)")
    finally: p.kill()
    with tempfile.TemporaryDirectory() as td: lh = bench_chat.loaded_history(pathlib.Path(td))
    for name, d in lh.items():
        row(f"Chat(hist=<5,000 msgs>) construction, {name}", "<= 2 ms", f"{d['ctor']*1e3:.2f} ms")
        row(f"first turn on a freshly loaded 5,000-message history, {name} (Chat(hist=) / load_chat / load_chat of a chat saved after a turn)", "<= 2 ms",
            f"{d['first']*1e3:.2f} / {d['first_loaded']*1e3:.2f} / {d['first_used']*1e3:.2f} ms" +
            (" (near the window: counted exactly unless the file keeps the provider's count, by design)" if d.get('counted') else ''))
        row(f"load_chat of that history's file, {name}", "(vs json.loads of it)", f"{d['load']*1e3:.1f} ms = {d['load']/d['load_json']:.1f}x json.loads ({d['load_json']*1e3:.1f} ms)")
    row("one more turn on a 5,000-message history (library time): text, Claude cache on / tool rounds, gpt-4.1 / Gemini", "<= 2 ms",
        f"{bench_chat.own_time_big_hist()*1e3:.2f} / {bench_chat.own_time_big_hist(True, 'gpt-4.1')*1e3:.2f} / {bench_chat.own_time_big_hist(True, 'gemini/gemini-2.5-flash')*1e3:.2f} ms")
    lo, to = opcodes()
    row("Python opcodes of a canned tool round (2 sequential calls): lisette / all", "(noise-free)", f"{lo:,} / {to:,}")
    n = 10_000
    med, _ = bench_messages.bench([f'message {i}' for i in range(n)], cache=True, cache_idxs=[0, -2, -1])
    print(f"mk_msgs, {n:,} strings, cache=True: {med*1e3:.1f} ms")
    row("mk_msgs 10k", "hold (3.8 ms)", f"{med*1e3:.1f} ms")
    h = bench_history.mk_hist()
    full = bench_history.bench(lambda: bench_history.check_hist(h), 5)
    row("check_hist, 10,000 messages with tool rounds", "<= 10 ms", f"{full*1e3:.1f} ms")
    row("import lisette over litellm", "hold (+58 ms)", f"+{import_time()*1e3:.0f} ms")
    few = asyncio.run(bench_many.main(50))
    row(f"50 concurrent AsyncChats, 50 ms a request (ideal {few['ideal']:.2f} s)", "(where the ideal is in reach)",
        f"{few['chat']:.2f} s = {few['chat']/few['ideal']:.1f}x ideal, {few['chat']/few['raw']:.2f}x raw litellm ({few['raw']:.2f} s), {few['errors']} errors")
    many = asyncio.run(bench_many.main(200 if QUICK else 1000))
    row(f"{many['n']:,} concurrent AsyncChats, 50 ms a request (ideal {many['ideal']:.2f} s)", "<= 1.5x ideal, 0 errors",
        f"{many['chat']:.2f} s = {many['chat']/many['ideal']:.1f}x ideal, {many['chat']/many['raw']:.2f}x raw litellm ({many['raw']:.2f} s), "
        f"{many['errors']} errors, {many['kib']:.0f} KiB per conversation")
    row(f"the same, full garbage collections rarer (`gc.set_threshold{many['gc_threshold']}`)", "-",
        f"{many['chat_gc']:.2f} s = {many['chat_gc']/many['ideal']:.1f}x ideal, {many['chat_gc']/many['raw_gc']:.2f}x raw litellm ({many['raw_gc']:.2f} s), {many['gc_errors']} errors")
    print("\n| path | target | now |\n|---|---|---|")
    for r in rows: print(f"| {r[0]} | {r[1]} | {r[2]} |")

if __name__ == '__main__': main()
