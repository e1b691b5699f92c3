"""Benchmarks for Chat against raw litellm on the same fake provider, in the same run. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_chat.py
"""
import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
import asyncio, json, socket, statistics, subprocess, sys, time
import httpx
import litellm
from litellm import ModelResponse
from lisette import Chat, AsyncChat, mk_msgs
from lisette.testing import FakeProvider, Reply

M = 'openai/gpt-4o-mini'

# The HTTP comparisons talk to a fake provider in its own process, so the server does not share the GIL with the
# client being measured (in-process, thread scheduling alone moves the ratios by several percent).
_SERVER = """
import sys, time
from lisette.testing import FakeProvider, Reply
text = ''.join(chr(97+i%26) for i in range(5000))
def answer(body, path):
    return Reply(text, chunks=5000) if body.get('stream') and body['messages'][-1]['content']=='stream please' else 'ok'
fp = FakeProvider(port=int(sys.argv[1])).start().respond_with(answer)
print('ready', flush=True)
while True: time.sleep(3600)
"""

def server_process(script=_SERVER):
    "A fake provider running `script` in its own process: (process, base URL)"
    with socket.socket() as so: so.bind(('127.0.0.1', 0)); port = so.getsockname()[1]
    p = subprocess.Popen([sys.executable, '-c', script, str(port)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == 'ready'
    return p, f'http://127.0.0.1:{port}'
def med(f, n=15):
    ts = []
    for _ in range(n): t = time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return statistics.median(ts)

def per_turn(kw):
    msgs = [{'role': 'user', 'content': 'hi'}]
    chat = Chat(M, **kw)
    def turn(): chat.hist = []; chat('hi')
    _, sent = chat._limits(chat._request(chat._prep_msg('hi')), False)  # what a turn asks litellm for: the same call, with the options Chat adds
    sent = {k: v for k,v in sent.items() if k!='messages'}
    rs, ss, os_ = [], [], []
    for _ in range(61):  # interleaved
        rs.append(med(lambda: litellm.completion(M, msgs, **kw), 1))
        ss.append(med(lambda: litellm.completion(messages=list(msgs), **sent), 1))
        os_.append(med(turn, 1))
    raw, same, ours = statistics.median(rs[5:]), statistics.median(ss[5:]), statistics.median(os_[5:])
    print(f"per-turn: raw litellm {raw*1e3:.2f} ms, Chat {ours*1e3:.2f} ms, ratio {ours/raw:.3f} (target <= 1.02)")
    print(f"  of that: litellm handling the options Chat sends ({', '.join(k for k in sent if k not in kw and k!='model')}) "
          f"{(same-raw)*1e6:+.0f} µs, lisette's own work {(ours-same)*1e6:+.0f} µs")
    return dict(ratio=ours/raw, extra_us=(ours-raw)*1e6, options_us=(same-raw)*1e6, own_us=(ours-same)*1e6)

def own_work_after_idle():
    "lisette's own work in one turn (a canned reply, no HTTP): warm in a loop, right after 5 ms idle (as after a network wait), after 5 ms of cache thrash"
    canned = ModelResponse(model='gpt-4o-mini', choices=[dict(message=dict(role='assistant', content='ok'), finish_reason='stop')],
                           usage=dict(prompt_tokens=5, completion_tokens=1, total_tokens=6))
    canned._hidden_params = {'response_cost': 4.5e-06}  # as litellm sets it on a live reply (else the cost is computed here)
    chat = Chat(M, completefunc=lambda **kw: canned)
    junk = bytearray(8<<20)
    def turns(before):
        ts = []
        for _ in range(300):
            before()
            t = time.perf_counter(); chat.hist = []; chat('hi'); ts.append(time.perf_counter()-t)
        return statistics.median(ts[20:])
    def thrash(): junk[::64] = bytes(len(junk[::64]))
    warm, idle, cold = turns(lambda: None), turns(lambda: time.sleep(0.005)), turns(thrash)
    print(f"lisette's own work per turn (canned reply): warm {warm*1e6:.0f} µs, after 5 ms idle {idle*1e6:.0f} µs, "
          f"after 8 MiB of cache thrash {cold*1e6:.0f} µs (the same code runs slower right after a wait: a live turn pays about the idle figure)")
    return dict(warm=warm, idle=idle, thrash=cold)

def own_time_big_hist(tools=False, model='claude-sonnet-4-5'):
    "Library time of one more turn on a 5,000-message history: text (Claude, cache on), or tool rounds (`tools`, `model`)"
    # (tool rounds: a reply that reports its tokens, as providers do; the text case as measured before, without)
    usage = dict(usage=dict(prompt_tokens=100_000, completion_tokens=1, total_tokens=100_001)) if tools else {}
    canned = ModelResponse(model='gpt-4o-mini', choices=[dict(message=dict(role='assistant', content='ok'), finish_reason='stop')], **usage)
    hist = _tool_hist(5000) if tools else mk_msgs([f'message {i}' for i in range(5000)])
    kw = {} if tools else dict(cache=True, cache_idxs=[0, -2, -1])
    chat = Chat(model, hist=hist, completefunc=lambda **kw: canned, **kw)
    chat('first')  # (the first turn reads the whole history: measured by `loaded_history`)
    def turn(): chat('next')  # the history grows as in use (5,000 -> 5,102 messages): deleting would defeat what a chat remembers between turns
    t = med(turn, 51)
    print(f"library's own time, one more turn on a 5,000-message history ({'tool rounds, '+model if tools else 'text, cache on'}): {t*1e3:.3f} ms (target <= 2 ms)")
    return t

def _tool_hist(n):
    "A realistic long history: user, assistant asking for 2 tools (a litellm Message), 2 results, answer; repeated"
    from lisette.tools import mk_tc, mk_tc_req, mk_tc_results
    h, i = [], 0
    while len(h)<n:
        q = mk_tc_req('Let me add those', [mk_tc('add', a=i, b=2), mk_tc('add', a=3, b=i)])
        h += [f'What are {i}+2 and 3+{i}? ' + 'Some more words. '*5, q, *mk_tc_results(q, ['3', '7']), 'Here you go: 3 and 7.']
        i += 1
    return mk_msgs(h[:n])

def loaded_history(tmp):
    "Construction and the first turn on a 5,000-message history: Chat(hist=...) and load_chat, library-only time"
    from lisette import load_chat, save_chat
    from lisette.context import count_tokens
    canned = ModelResponse(model='claude-sonnet-4-5', choices=[dict(message=dict(role='assistant', content='ok'), finish_reason='stop')])
    res = {}
    for name, hist in (('text', mk_msgs([f'message {i}' for i in range(5000)])), ('tool rounds', _tool_hist(5000))):
        ctor = med(lambda: Chat('claude-sonnet-4-5', hist=hist), 21)
        calib = med(lambda: [m.get('role') if m.__class__ is dict else m.role for m in hist], 21)
        print(f"  (machine calibration: reading the role of each of its messages takes {calib*1e3:.2f} ms; Chat(hist=) = {ctor/calib:.0f}x that)")
        def first(mk):
            chat = mk()
            t = time.perf_counter(); chat('next'); return time.perf_counter()-t
        mk = lambda: Chat('claude-sonnet-4-5', hist=list(hist), cache=True, max_tokens=64000, completefunc=lambda **kw: canned)
        ft = statistics.median(first(mk) for _ in range(11))
        path = save_chat(Chat('claude-sonnet-4-5', hist=hist, cache=True, max_tokens=64000), tmp/'big.json')
        fl = statistics.median(first(lambda: load_chat(path, completefunc=lambda **kw: canned)) for _ in range(5))
        lt, jt = med(lambda: load_chat(path), 7), med(lambda: json.loads(path.read_text()), 7)  # loading itself, against reading its JSON
        c = mk(); c('next'); counted = c._ctx[2] if len(c._ctx)>2 else False  # near the window, the first turn counts exactly
        # the usual file: saved after a turn, whose reply carried the provider's count of the request (kept in the file)
        used = ModelResponse(model='claude-sonnet-4-5', choices=[dict(message=dict(role='assistant', content='ok'), finish_reason='stop')],
                             usage=dict(prompt_tokens=count_tokens(hist, 'claude-sonnet-4-5'), completion_tokens=1, total_tokens=1))
        c = Chat('claude-sonnet-4-5', hist=list(hist), cache=True, max_tokens=64000, completefunc=lambda **kw: used); c('next')
        path = save_chat(c, tmp/'used.json')
        fu = statistics.median(first(lambda: load_chat(path, completefunc=lambda **kw: canned)) for _ in range(11))
        print(f"5,000-message history ({name}): Chat(hist=) {ctor*1e3:.2f} ms (target <= 2), first turn after Chat(hist=) "
              f"{ft*1e3:.2f} ms, after load_chat {fl*1e3:.2f} ms, after load_chat of a chat saved after a turn {fu*1e3:.2f} ms "
              "(target <= 2; max_tokens=64,000 of Sonnet 4.5's 200k)" + ("; counted exactly: the estimate is over half the budget" if counted else ''))
        print(f"  load_chat of that file: {lt*1e3:.1f} ms ({lt/jt:.1f}x json.loads of it, {jt*1e3:.1f} ms)")
        res[name] = dict(ctor=ctor, first=ft, first_loaded=fl, first_used=fu, counted=counted, load=lt, load_json=jt)
    return res

def first_item(kw):
    "Time to the first streamed item and the whole streamed turn, sync and async, against raw litellm (interleaved)"
    msgs = [{'role': 'user', 'content': 'hi'}]
    def timed(mk):
        t, first = time.perf_counter(), None
        for _ in mk():
            if first is None: first = time.perf_counter()-t
        return first, time.perf_counter()-t
    async def atimed(mk):
        t, first = time.perf_counter(), None
        async for _ in await mk():
            if first is None: first = time.perf_counter()-t
        return first, time.perf_counter()-t
    sraw = lambda: timed(lambda: litellm.completion(M, msgs, stream=True, stream_options={'include_usage': True}, **kw))
    sours = lambda: timed(lambda: Chat(M, **kw)('hi', stream=True))
    araw = lambda: atimed(lambda: litellm.acompletion(M, msgs, stream=True, stream_options={'include_usage': True}, **kw))
    aours = lambda: atimed(lambda: AsyncChat(M, **kw)('hi', stream=True))
    async def arun():
        for _ in range(3): await araw(); await aours()
        res = [], []
        for _ in range(41): res[0].append(await araw()); res[1].append(await aours())
        return res
    for _ in range(3): sraw(); sours()
    sr, so = [], []
    for _ in range(41): sr.append(sraw()); so.append(sours())
    ar, ao = asyncio.run(arun())
    m = lambda xs, i: statistics.median(x[i] for x in xs)
    print(f"sync stream:  first item raw {m(sr,0)*1e3:.2f} ms, Chat {m(so,0)*1e3:.2f} ms ({m(so,0)/m(sr,0):.3f}x); whole turn {m(so,1)/m(sr,1):.3f}x")
    print(f"async stream: first item raw {m(ar,0)*1e3:.2f} ms, AsyncChat {m(ao,0)*1e3:.2f} ms ({m(ao,0)/m(ar,0):.3f}x, target <= 1.05); "
          f"whole turn raw {m(ar,1)*1e3:.2f} ms, AsyncChat {m(ao,1)*1e3:.2f} ms ({m(ao,1)/m(ar,1):.3f}x, target <= 1.03)")
    return dict(sync_first=m(so,0)/m(sr,0), sync_whole=m(so,1)/m(sr,1), async_first=m(ao,0)/m(ar,0), async_whole=m(ao,1)/m(ar,1))

def parallel_round(fp, kw):
    def slow(x:int):
        "Sleep 0.2 s"
        time.sleep(0.2); return x
    fp.queue(Reply(tool_calls=[('slow', {'x': 0})]), 'warm-up'); Chat(M, tools=[slow], **kw)('go')  # first tools= call imports mcp
    fp.queue(Reply(tool_calls=[('slow', {'x': i}) for i in range(8)]), 'done')
    t = time.perf_counter(); Chat(M, tools=[slow], **kw)('go'); el = time.perf_counter()-t
    print(f"8 parallel calls to a 0.2 s sync tool + final answer: {el:.3f} s (target <= 0.35 s)")

def async_rounds(fp, kw):
    async def aslow(x:int):
        "Sleep 0.2 s"
        await asyncio.sleep(0.2); return x
    def slow(x:int):
        "Sleep 0.2 s"
        time.sleep(0.2); return x
    async def run(tool):
        fp.queue(Reply(tool_calls=[(tool.__name__, {'x': i}) for i in range(8)]), 'done')
        t = time.perf_counter(); await AsyncChat(M, tools=[tool], **kw)('go'); return time.perf_counter()-t
    a, s = asyncio.run(run(aslow)), asyncio.run(run(slow))
    print(f"AsyncChat, 8 parallel calls: async tool {a:.3f} s (target <= 0.30), sync tool {s:.3f} s (target <= 0.35)")

def stream_5000(kw):
    "End to end against the server process, then our own whole cost on canned chunks"
    msgs = [{'role': 'user', 'content': 'stream please'}]
    def raw():
        for _ in litellm.completion(M, msgs, stream=True, stream_options={'include_usage': True}, **kw): pass
    def ours():
        for _ in Chat(M, **kw)('stream please', stream=True): pass
    rs, os_ = [], []
    for _ in range(5): rs.append(med(raw, 1)); os_.append(med(ours, 1))  # interleaved, so drift hits both
    r, o = statistics.median(rs), statistics.median(os_)
    print(f"5,000-chunk stream via HTTP: raw litellm {r*1e3:.0f} ms, Chat(stream=True) {o*1e3:.0f} ms, ratio {o/r:.3f} (target <= 1.05)")
    chunks = list(litellm.completion(M, msgs, stream=True, stream_options={'include_usage': True}, **kw))
    builder = med(lambda: litellm.stream_chunk_builder(chunks), 5)
    chat = Chat(M, completefunc=lambda **k: iter(chunks))
    def turn(): chat.hist = []; [_ for _ in chat('hi', stream=True)]
    t = med(turn, 5)
    print(f"lisette's whole cost on 5,000 canned chunks (passing them on, footnotes, building the response): "
          f"{t/5000*1e6:.1f} µs/chunk (target <= 20; litellm's stream_chunk_builder on all of them alone: {builder/5000*1e6:.0f} µs/chunk)")
    return dict(ratio=o/r, us_per_chunk=t/5000*1e6)

if __name__ == '__main__':
    p, url = server_process()
    try:
        skw = dict(api_base=url+'/v1', api_key='k')
        per_turn(skw)
        own_work_after_idle()
        first_item(skw)
        stream_5000(skw)
    finally: p.kill()
    own_time_big_hist(); own_time_big_hist(True, 'gpt-4.1'); own_time_big_hist(True, 'gemini/gemini-2.5-flash')
    import tempfile, pathlib
    with tempfile.TemporaryDirectory() as td: loaded_history(pathlib.Path(td))
    with FakeProvider() as fp:
        kw = dict(api_base=fp.openai_base, api_key='k')
        parallel_round(fp, kw)
        async_rounds(fp, kw)
