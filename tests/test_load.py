"""Load: 50 concurrent `AsyncChat` conversations and 8 threads each running a sync `Chat`, all at once, all with parallel
tool rounds, against the fake provider (OpenAI protocol for the async ones, Anthropic for the threads).
Every conversation must complete and no history may receive another's messages.

`python tests/test_load.py` prints the figures (conversations, requests, wall time, errors)."""
import asyncio, re, threading, time
from lisette import Chat, AsyncChat, contents
from lisette.testing import FakeProvider, Reply

N_ASYNC, N_THREADS, TURNS = 50, 8, 3

def tag(x:str) -> str:
    "Tag a conversation id"
    return f"tagged {x}"

def _text(c): return c if isinstance(c, str) else ' '.join(b.get('text') or _text(b.get('content') or '') for b in c or [] if isinstance(b, dict))

def _trailing_results(msgs):
    "Tool results at the end of the request, in either protocol"
    res = []
    for m in reversed(msgs):
        if m.get('role')=='tool': res.insert(0, _text(m['content'])); continue
        blocks = [b for b in m['content'] if b.get('type')=='tool_result'] if isinstance(m.get('content'), list) else []
        res = [_text(b['content']) for b in blocks] + res
        break
    return res

def responder(body, path):
    "Two parallel tool calls carrying the conversation id from the user message, then a reply quoting the results"
    msgs = body['messages']
    if res := _trailing_results(msgs): return f"done: {' | '.join(res)}"
    conv = re.search(r'conv-\d+-turn-\d+', _text(msgs[-1]['content']))[0]
    return Reply("Tagging.", tool_calls=[('tag', {'x': f'{conv}/a'}), ('tag', {'x': f'{conv}/b'})])

def _check(chat, cid, turns):
    "Every message of `chat` belongs to conversation `cid`; each turn has its own two tool results"
    txt = [_text(m['content'] if isinstance(m, dict) else m.content) for m in chat.hist]
    assert len(chat.hist) == 5*turns, len(chat.hist)
    assert all(f'conv-{cid}-' in t for t in txt if 'conv-' in t), txt
    for j in range(turns):
        assert txt[5*j+4] == f"done: tagged conv-{cid}-turn-{j}/a | tagged conv-{cid}-turn-{j}/b"

def run_load(fp):
    "Run the whole load; returns figures"
    errors, t0 = [], time.perf_counter()
    def sync_conv(i):
        try:
            c = Chat('anthropic/claude-sonnet-4-5', tools=[tag], api_base=fp.anthropic_base, api_key='k')
            for j in range(TURNS): c(f"conv-{i}-turn-{j}: tag me")
            _check(c, i, TURNS)
        except Exception as e: errors.append(e)
    async def async_conv(i):
        c = AsyncChat('openai/gpt-4o-mini', tools=[tag], api_base=fp.openai_base, api_key='k')
        await c(f"conv-{i}-turn-0: tag me")
        _check(c, i, 1)
    async def all_async():
        for r in await asyncio.gather(*(async_conv(i) for i in range(100, 100+N_ASYNC)), return_exceptions=True):
            if isinstance(r, BaseException): errors.append(r)
    ts = [threading.Thread(target=sync_conv, args=(i,)) for i in range(N_THREADS)]
    for t in ts: t.start()
    asyncio.run(all_async())
    for t in ts: t.join()
    return dict(conversations=N_ASYNC+N_THREADS, requests=len(fp.requests), seconds=time.perf_counter()-t0, errors=errors)

def test_load_async_and_threads_together(fake_provider):
    fake_provider.respond_with(responder)
    res = run_load(fake_provider)
    assert res['errors'] == [], res['errors'][:3]
    assert res['requests'] == 2*N_ASYNC + 2*TURNS*N_THREADS

if __name__ == '__main__':
    import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
    with FakeProvider() as fp:
        fp.respond_with(responder)
        r = run_load(fp)
    print(f"load: {r['conversations']} conversations ({N_ASYNC} AsyncChat + {N_THREADS} threads x {TURNS} turns of sync Chat), "
          f"{r['requests']} requests, {r['seconds']:.2f} s, errors: {len(r['errors'])}")
