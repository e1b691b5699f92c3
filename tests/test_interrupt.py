"""Interruption at every point of a turn leaves `hist` valid (`check_hist` passes) and the next call works.

Points: during the HTTP call (a real SIGINT while the provider is slow; task cancellation for `AsyncChat`), inside a
tool, between parallel tools, mid-stream (consumer stops, provider drops the connection, SIGINT), and any exception
from the provider in the middle of a tool loop. Both wire protocols."""
import asyncio, os, signal, threading, time
import pytest
from lisette import Chat, AsyncChat, contents
from lisette.history import check_hist
from lisette.testing import Reply

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

def sigint_when(cond, delay=0.2, timeout=30):
    "Deliver a real SIGINT to this process (pytest runs tests in the main thread) `delay` s after `cond()` holds"
    def run():
        t0 = time.monotonic()
        while not cond() and time.monotonic()-t0<timeout: time.sleep(0.01)
        time.sleep(delay); os.kill(os.getpid(), signal.SIGINT)
    t = threading.Thread(target=run); t.start(); return t

def still_works(fp, chat):
    "The history is valid, and the chat goes on"
    check_hist(chat.hist)
    fp.reset()  # forget replies the interrupted turn never asked for
    fp.queue("still here")
    assert contents(chat("are you there?")).content == 'still here'
    check_hist(chat.hist)

def test_sigint_during_http_call(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})]), Reply("slow answer", delay=3))
    chat = Chat(m, tools=[add], **kw)
    t = sigint_when(lambda: len(fp.requests)>=2)  # the second request is at the (slow) provider
    with pytest.raises(KeyboardInterrupt): chat("add then answer slowly")
    t.join()
    assert [m_['role'] if isinstance(m_, dict) else m_.role for m_ in chat.hist] == ['user', 'assistant', 'tool']
    still_works(fp, chat)

def test_cancel_async_during_http_call(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})]), Reply("slow answer", delay=3))
    chat = AsyncChat(m, tools=[add], **kw)
    async def main():
        task = asyncio.create_task(chat("add then answer slowly"))
        while len(fp.requests)<2: await asyncio.sleep(0.01)
        await asyncio.sleep(0.2); task.cancel()
        with pytest.raises(asyncio.CancelledError): await task
    asyncio.run(main())
    assert [m_['role'] if isinstance(m_, dict) else m_.role for m_ in chat.hist] == ['user', 'assistant', 'tool']
    check_hist(chat.hist)
    fp.reset(); fp.queue("still here")
    assert contents(asyncio.run(chat("are you there?"))).content == 'still here'

def test_interrupt_inside_tool(proto):
    fp, m, kw = proto
    def halt():
        "Interrupted by the user"
        raise KeyboardInterrupt
    fp.queue(Reply(tool_calls=[('halt', {})]))
    chat = Chat(m, tools=[halt], **kw)
    with pytest.raises(KeyboardInterrupt): chat("go")
    still_works(fp, chat)

def test_interrupt_between_parallel_tools(proto):
    fp, m, kw = proto
    first_done = threading.Event()
    def quick(x:int):
        "Returns at once"
        first_done.set(); return x
    def slow(x:int):
        "Takes a while"
        time.sleep(2); return x
    fp.queue(Reply(tool_calls=[('quick', {'x': 1}), ('slow', {'x': 2}), ('slow', {'x': 3})]))
    chat = Chat(m, tools=[quick, slow], **kw)
    t = sigint_when(first_done.is_set)
    with pytest.raises(KeyboardInterrupt): chat("go")
    t.join()
    results = [x for x in chat.hist if isinstance(x, dict) and x.get('role')=='tool']
    assert len(results) == 3  # every call answered, if only with "interrupted"
    still_works(fp, chat)

def test_consumer_stops_stream_midway(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})]), Reply("a long story " * 30))
    chat = Chat(m, tools=[add], **kw)
    g = chat("add then tell a story", stream=True)
    for i, o in enumerate(g):
        if isinstance(o, dict): break  # the tool result of round one: stop while round two is pending
    g.close()
    still_works(fp, chat)

def test_provider_drops_stream(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})]), Reply("one two three four five six seven", chunks=20, truncate_after=6))  # cut mid-text in every protocol
    chat = Chat(m, tools=[add], **kw)
    with pytest.raises(Exception): list(chat("go", stream=True))
    still_works(fp, chat)

def test_sigint_mid_stream(proto):
    fp, m, kw = proto
    fp.queue(Reply("word " * 40, chunk_delay=0.1))
    chat = Chat(m, **kw)
    t = sigint_when(lambda: len(fp.requests)>=1, delay=0.5)
    with pytest.raises(KeyboardInterrupt): list(chat("talk slowly", stream=True))
    t.join()
    still_works(fp, chat)

def test_provider_error_mid_loop(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2}), ('add', {'a': 3})]), Reply(status=400, error='bad second request'))
    chat = Chat(m, tools=[add], **kw)
    with pytest.raises(Exception, match='bad second request'): chat("go")
    still_works(fp, chat)

def test_malformed_replies(proto):
    "Invalid JSON, a truncated SSE stream, a reply missing its fields: a clear error, and the history stays valid"
    fp, m, kw = proto
    for rep, stream in [(Reply(raw=b'{"not json'), False), (Reply(raw=b'{}'), False),
                        (Reply("cut short here please", chunks=20, truncate_after=6), True)]:
        fp.queue(rep)
        chat = Chat(m, retries=0, **kw)
        with pytest.raises(Exception) as ei:
            r = chat("hi", stream=stream)
            if stream: list(r)
        assert str(ei.value)
        still_works(fp, chat)

@pytest.mark.parametrize('aio', [False, True])
def test_interrupted_round_keeps_finished_results(proto, aio):
    "Calls of a parallel round that finished before the interruption keep their results; only the unfinished one is marked interrupted"
    fp, m, kw = proto
    started, ran = threading.Event(), []
    def quick(x:int) -> int:
        "Quick"
        ran.append(x); return x*100
    def slow(x:int) -> int:
        "Slow"
        started.set(); time.sleep(1); return x
    fp.queue(Reply(tool_calls=[('quick', {'x': 1}), ('slow', {'x': 2}), ('quick', {'x': 3})]))
    chat = (AsyncChat if aio else Chat)(m, tools=[quick, slow], **kw)
    if aio:
        async def main():
            t = asyncio.create_task(chat("go"))
            while not (started.is_set() and len(chat.__dict__.get('_finished', ()))==2): await asyncio.sleep(0.01)
            t.cancel()
            with pytest.raises(asyncio.CancelledError): await t
        asyncio.run(main())
    else:
        t = sigint_when(lambda: started.is_set() and len(chat.__dict__.get('_finished', ()))==2, delay=0.1)
        with pytest.raises(KeyboardInterrupt): chat("go")
        t.join()
    assert [o['content'] for o in chat.hist[2:]] == ['100', "Tool call interrupted: the turn was cancelled before this tool returned a result.", '300']
    time.sleep(1)  # (the slow call's thread ends: its late result is not added)
    if not aio: return still_works(fp, chat)
    check_hist(chat.hist); fp.reset(); fp.queue("still here")
    assert contents(asyncio.run(chat("are you there?"))).content == 'still here'
    check_hist(chat.hist)

def test_cancelled_async_round_keeps_sync_results_made_on_their_threads(fake_provider):
    "A sync tool's result is kept on its worker thread: cancelled before the event loop saw it, the result is kept all the same"
    fp = fake_provider
    gate, slow_started = threading.Event(), threading.Event()
    def quick(x:int) -> int:
        "Quick"
        return x*100
    def slow(x:int) -> int:
        "Slow"
        slow_started.set(); gate.wait(5); return x
    fp.queue(Reply(tool_calls=[('quick', {'x': 1}), ('slow', {'x': 2})]))
    chat = AsyncChat('openai/gpt-4o-mini', tools=[quick, slow], api_base=fp.openai_base, api_key='k')
    async def main():
        t = asyncio.create_task(chat("go"))
        while not slow_started.is_set(): await asyncio.sleep(0.001)  # the round is running
        t0 = time.monotonic()
        while len(chat.__dict__.get('_finished', ())) < 1 and time.monotonic()-t0 < 5: time.sleep(0.001)  # (not awaiting: the task cannot see quick's result yet)
        t.cancel()
        with pytest.raises(asyncio.CancelledError): await t
    asyncio.run(main())
    gate.set()
    assert [o['content'] for o in chat.hist[2:]] == ['100', "Tool call interrupted: the turn was cancelled before this tool returned a result."]
