"""Benchmarks for Chat against raw litellm on the same fake provider, in the same run. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_chat.py
"""
import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
import asyncio, statistics, time
import litellm
from litellm import ModelResponse
from lisette import Chat, AsyncChat, mk_msgs
from lisette.testing import FakeProvider, Reply

M = 'openai/gpt-4o-mini'
def med(f, n=15):
    ts = []
    for _ in range(n): t = time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return statistics.median(ts)

def per_turn(fp, kw):
    fp.respond_with(lambda b,p: 'ok')
    msgs = [{'role': 'user', 'content': 'hi'}]
    raw = med(lambda: litellm.completion(M, msgs, **kw))
    chat = Chat(M, **kw)
    def turn(): chat.hist = []; chat('hi')
    ours = med(turn)
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

def stream_5000(fp, kw):
    "End to end through the fake provider (noisy: ~1 ms/chunk is litellm + HTTP), then our own cost on canned chunks"
    # varied letters: litellm aborts a stream that repeats one chunk 100+ times in a row
    text, msgs = ''.join(chr(97+i%26) for i in range(5000)), [{'role': 'user', 'content': 'hi'}]
    def raw():
        fp.queue(Reply(text, chunks=5000))
        for _ in litellm.completion(M, msgs, stream=True, **kw): pass
    def ours():
        fp.queue(Reply(text, chunks=5000))
        for _ in Chat(M, **kw)('hi', stream=True): pass
    rs, os_ = [], []
    for _ in range(5): rs.append(med(raw, 1)); os_.append(med(ours, 1))  # interleaved, so drift hits both
    r, o = statistics.median(rs), statistics.median(os_)
    print(f"5,000-chunk stream via HTTP: raw litellm {r*1e3:.0f} ms, Chat(stream=True) {o*1e3:.0f} ms, ratio {o/r:.3f} (target <= 1.05)")
    fp.queue(Reply(text, chunks=5000))
    chunks = list(litellm.completion(M, msgs, stream=True, **kw))
    builder = med(lambda: litellm.stream_chunk_builder(chunks), 5)
    chat = Chat(M, completefunc=lambda **k: iter(chunks))
    def turn(): chat.hist = []; [_ for _ in chat('hi', stream=True)]
    t = med(turn, 5)
    print(f"own cost on 5,000 canned chunks: {(t-builder)/5000*1e6:.1f} µs/chunk beyond litellm's stream_chunk_builder "
          f"({builder*1e3:.0f} ms for the whole stream) (target <= 20)")

if __name__ == '__main__':
    with FakeProvider() as fp:
        kw = dict(api_base=fp.openai_base, api_key='k')
        per_turn(fp, kw); fp.respond_with(None)
        own_time_big_hist()
        parallel_round(fp, kw)
        async_rounds(fp, kw)
        stream_5000(fp, kw)
