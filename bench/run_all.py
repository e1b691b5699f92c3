"""Every figure of the performance issue in one run: lisette against raw litellm on the same local servers, in the same
process, interleaved. Prints each figure as it is measured, then a summary table. Asserts nothing.

    .venv/bin/python bench/run_all.py            # about 4 minutes on 2 cores
    .venv/bin/python bench/run_all.py --quick    # fewer trials, 200 concurrent chats instead of 1,000

Run it on a quiet machine: the ratios hold under load better than the milliseconds, but both move.
"""
import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
import asyncio, gc, importlib.metadata, json, pathlib, platform, statistics, subprocess, sys, tempfile, time, tracemalloc
sys.path.insert(0, str(pathlib.Path(__file__).parent))
import litellm
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
