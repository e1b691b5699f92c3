"""Benchmarks for Chat against raw litellm on the same fake provider, in the same run. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_chat.py
"""
import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
import asyncio, socket, statistics, subprocess, sys, time
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

def server_process():
    with socket.socket() as so: so.bind(('127.0.0.1', 0)); port = so.getsockname()[1]
    p = subprocess.Popen([sys.executable, '-c', _SERVER, str(port)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == 'ready'
    return p, f'http://127.0.0.1:{port}'
def med(f, n=15):
    ts = []
    for _ in range(n): t = time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return statistics.median(ts)

def per_turn(kw):
    msgs = [{'role': 'user', 'content': 'hi'}]
    raw = med(lambda: litellm.completion(M, msgs, **kw), 31)
    chat = Chat(M, **kw)
    def turn(): chat.hist = []; chat('hi')
    ours = med(turn, 31)
    print(f"per-turn: raw litellm {raw*1e3:.2f} ms, Chat {ours*1e3:.2f} ms, ratio {ours/raw:.3f} (target <= 1.03)")

def own_time_big_hist():
    canned = ModelResponse(model='gpt-4o-mini', choices=[dict(message=dict(role='assistant', content='ok'), finish_reason='stop')])
    hist = mk_msgs([f'message {i}' for i in range(5000)])
    chat = Chat('claude-sonnet-4-5', hist=hist, cache=True, cache_idxs=[0, -2, -1], completefunc=lambda **kw: canned)
    def turn(): chat('next'); del chat.hist[-2:]
    t = med(turn, 51)
    print(f"library's own time, one turn on a 5,000-message history (cache on): {t*1e3:.3f} ms (target <= 2 ms)")

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

if __name__ == '__main__':
    p, url = server_process()
    try:
        skw = dict(api_base=url+'/v1', api_key='k')
        per_turn(skw)
        stream_5000(skw)
    finally: p.kill()
    own_time_big_hist()
    with FakeProvider() as fp:
        kw = dict(api_base=fp.openai_base, api_key='k')
        parallel_round(fp, kw)
        async_rounds(fp, kw)
