"""Many chats at once (evaluation / RL rollouts): N concurrent `AsyncChat` conversations, each prompt -> two parallel
tool calls -> answer, against a fake provider in its own process answering every request after 50 ms. Prints wall time
against the latency-bound ideal and against raw `litellm.acompletion` doing the same requests, errors, and memory per
conversation. Asserts nothing.

    .venv/bin/python bench/bench_many.py [N=1000]
"""
import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
import asyncio, gc, json, logging, resource, socket, subprocess, sys, time, tracemalloc
import litellm
from litellm._logging import verbose_logger
from lisette import AsyncChat, contents

M, LATENCY = 'openai/gpt-4o-mini', 0.05
GC_FULL_EVERY = 1000  # a full collection every 1,000 second-generation ones (Python's default: 10)
_SERVER = """
import sys, time, json
from lisette.testing import FakeProvider, Reply
def answer(body, path):
    msgs = body['messages']
    if msgs[-1].get('role') == 'tool': return Reply('done', delay=%r)
    return Reply(tool_calls=[('tag', {'x': 'a'}), ('tag', {'x': 'b'})], delay=%r)
FakeProvider(port=int(sys.argv[1])).start().respond_with(answer)
print('ready', flush=True)
while True: time.sleep(3600)
""" % (LATENCY, LATENCY)

def tag(x:str) -> str:
    "Tag a value"
    return f"tagged {x}"

def server_process():
    with socket.socket() as so: so.bind(('127.0.0.1', 0)); port = so.getsockname()[1]
    p = subprocess.Popen([sys.executable, '-c', _SERVER, str(port)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == 'ready'
    return p, f'http://127.0.0.1:{port}/v1'

async def one_chat(base, i):
    chat = AsyncChat(M, tools=[tag], api_base=base, api_key='k')
    r = await chat(f"conversation {i}: tag a and b")
    assert contents(r).content == 'done' and len(chat.hist) == 5, chat.hist
    return chat

async def one_raw(base, i):
    "The same two requests with raw litellm (tools run inline, no history object)"
    tools = [{'type': 'function', 'function': {'name': 'tag', 'description': 'Tag a value',
              'parameters': {'type': 'object', 'properties': {'x': {'type': 'string'}}, 'required': ['x']}}}]
    msgs = [{'role': 'user', 'content': f"conversation {i}: tag a and b"}]
    r = await litellm.acompletion(M, msgs, tools=tools, api_base=base, api_key='k', max_retries=0)
    m = r.choices[0].message
    msgs += [m.model_dump(exclude_none=True)] + [{'role': 'tool', 'tool_call_id': tc.id, 'content': tag(**json.loads(tc.function.arguments))}
                                                 for tc in m.tool_calls]
    r = await litellm.acompletion(M, msgs, tools=tools, api_base=base, api_key='k', max_retries=0)
    assert r.choices[0].message.content == 'done'

class _PoolWaits(logging.Filter):
    "Counts (and keeps out of the output) litellm's warnings that its aiohttp pool (500 connections per host) made a request wait"
    n = 0
    def filter(self, rec):
        if not rec.pathname.endswith('aiohttp_pool_diagnostics.py'): return True
        _PoolWaits.n += 1; return False

async def run(f, base, n):
    t = time.perf_counter()
    res = await asyncio.gather(*(f(base, i) for i in range(n)), return_exceptions=True)
    return time.perf_counter()-t, [o for o in res if isinstance(o, BaseException)], res

async def main(n):
    p, base = server_process()
    verbose_logger.addFilter(_PoolWaits())
    try:
        await run(one_raw, base, 20); await run(one_chat, base, 20)  # warm-up: imports, connection pool
        raw_t, raw_err, _ = await run(one_raw, base, n)
        chat_t, chat_err, _ = await run(one_chat, base, n)
        # the cyclic collector's full passes walk every object alive (litellm's model map alone is ~400k): rarer ones
        # (run after the default runs; in our trials later runs in one process were slower, so this does not flatter them)
        th = gc.get_threshold(); gc.set_threshold(th[0], th[1], GC_FULL_EVERY)
        try: raw_gc, _, _ = await run(one_raw, base, n); chat_gc, gc_err, _ = await run(one_chat, base, n)
        finally: gc.set_threshold(*th)
        m = min(n, 200)  # memory on a smaller run: tracemalloc slows everything down several times
        tracemalloc.start()
        _, _, chats = await run(one_chat, base, m)
        cur, peak = tracemalloc.get_traced_memory(); tracemalloc.stop()
        ideal = 2*LATENCY
        print(f"{n} concurrent AsyncChat conversations (prompt -> 2 parallel tool calls -> answer), {LATENCY*1e3:.0f} ms per request")
        print(f"  latency-bound ideal:   {ideal:.2f} s")
        print(f"  raw litellm.acompletion: {raw_t:.2f} s ({raw_t/ideal:.1f}x ideal), errors: {len(raw_err)}")
        print(f"  AsyncChat:             {chat_t:.2f} s ({chat_t/ideal:.1f}x ideal, {chat_t/raw_t:.2f}x raw), errors: {len(chat_err)}")
        if chat_err: print('  first error:', repr(chat_err[0])[:300])
        print(f"  with gc.set_threshold({th[0]}, {th[1]}, {GC_FULL_EVERY}): raw {raw_gc:.2f} s, AsyncChat {chat_gc:.2f} s ({chat_gc/ideal:.1f}x ideal, "
              f"{chat_gc/raw_gc:.2f}x raw), errors: {len(gc_err)}")
        print(f"  memory held by {m} finished chats: {cur/m/1024:.1f} KiB per conversation (peak during the run {peak/m/1024:.1f} KiB)")
        if _PoolWaits.n: print(f"  litellm warned {_PoolWaits.n} times that a request waited for a connection of its aiohttp pool (500 per host), in both runs")
        print(f"  process max RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MiB")
        return dict(n=n, ideal=ideal, raw=raw_t, chat=chat_t, errors=len(chat_err), kib=cur/m/1024, raw_gc=raw_gc, chat_gc=chat_gc, gc_errors=len(gc_err), gc_threshold=(th[0], th[1], GC_FULL_EVERY))
    finally: p.kill()

if __name__ == '__main__': asyncio.run(main(int(sys.argv[1]) if len(sys.argv)>1 else 1000))
