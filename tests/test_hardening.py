"Issue 18, hardening: hostile providers, shared chats, time limits, retries, tool budgets (through the fake provider)."
import asyncio, itertools, json, threading, time, warnings
import pytest, litellm
from lisette import *
from lisette.interop import SavedChatError
from lisette.chat import ChatBusyError, ChatTimeout, IncompleteStreamError, _not_run
from lisette.history import check_hist
from lisette.messages import _role
from lisette.testing import Reply, FakeProvider, _oa_sse, _an_sse, _gm_sse, _rs_sse

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

def _stream(chat, msg, **kw): return list(chat(msg, stream=True, **kw))

def _partial_sse(proto, n):
    "The first `n` events of a streamed 'one two three four five six', ending cleanly (no finish reason)"
    rep = Reply("one two three four five six")
    if proto=='openai': return b''.join(_oa_sse(rep, {'model': 'm'}, 1, [])[:n])
    return b''.join(_an_sse(rep, {'model': 'm'}, 1, [], itertools.count())[:n])

# ---- item 4: a failed stream raises, names what it received, is not retried, adds nothing
# (on every wire protocol: on Gemini and Responses litellm raises its own MidStreamFallbackError before any chunk, which
# Chat tells apart with providers.stream_replied: a 2xx that was no answer is never re-sent, an error status is retried)

@pytest.fixture(params=['openai', 'anthropic'])
def proto2(request, fake_provider):
    fp = fake_provider
    if request.param=='openai': return fp, 'openai/gpt-4o-mini', dict(api_base=fp.openai_base, api_key='k')
    return fp, 'anthropic/claude-sonnet-4-5', dict(api_base=fp.anthropic_base, api_key='k')

_bad_bodies = [b'<html><body>502 Bad Gateway</body></html>', b'{"error": {"message": "upstream failed"}}', b'null']

@pytest.mark.parametrize('raw', _bad_bodies)
def test_failed_stream_stores_nothing(proto, raw):
    "A 200 stream that is not an answer raises, is sent once (even with retries left), and leaves the history as it was"
    fp, m, kw = proto
    fp.queue(Reply(raw=raw), "never sent", "never sent")
    chat = Chat(m, retries=2, **kw)
    with pytest.raises(IncompleteStreamError): _stream(chat, "hi")
    assert len(fp.requests) == 1 and chat.hist == []

def _raises_incomplete(fp, m, kw, reply, what):
    "A stream answered `reply` raises IncompleteStreamError naming `what` arrived, is sent once, and the chat goes on"
    fp.queue(reply, "never sent")
    chat = Chat(m, **kw)
    with pytest.raises(IncompleteStreamError) as ei: _stream(chat, "hi")
    msg = str(ei.value)
    assert ('before the provider finished' in msg or msg.startswith('litellm could not read the whole stream')) and 'Nothing was added to the history' in msg and what in msg
    assert len(fp.requests) == 1 and chat.hist == []  # not retried, nothing stored
    fp.reset(); fp.queue("fine")
    assert contents(chat("again")).content == 'fine' and check_hist(chat.hist) is None

@pytest.mark.parametrize('raw', _bad_bodies)
def test_failed_stream_raises(proto, raw): _raises_incomplete(*proto, Reply(raw=raw), 'no answer at all')

def test_partial_stream_raises(proto2):
    "Events that end cleanly before a finish reason (built here in the OpenAI and Anthropic formats)"
    fp, m, kw = proto2
    pr = 'openai' if m.startswith('openai') else 'anthropic'
    _raises_incomplete(fp, m, kw, Reply(raw=_partial_sse(pr, 3 if pr=='openai' else 4)), "characters of text ('one two three")

@pytest.mark.parametrize('aio', [False, True])
def test_partial_gemini_stream_raises(fake_provider, aio):
    "Gemini events that end cleanly before Gemini's finishReason: litellm gives each chunk a 'stop' of its own, which is no finish"
    fp, m = fake_provider, 'gemini/gemini-3-flash-preview'
    evs = _gm_sse(Reply("one two three four five six seven eight", chunks=4), 'gemini-3-flash-preview', 1, [])
    assert len(evs) == 4 and b'finishReason' in evs[-1] and not any(b'finishReason' in e for e in evs[:-1])
    for cut, ok in ((2, False), (4, True)):
        fp.reset(); fp.queue(Reply(raw=b''.join(evs[:cut]), headers={'content-type': 'text/event-stream'}), "never sent")
        chat = (AsyncChat if aio else Chat)(m, api_base=fp.gemini_base, api_key='k', retries=2)
        async def arun(): return [o async for o in await chat("hi", stream=True)]
        run = lambda: asyncio.run(arun()) if aio else _stream(chat, "hi")
        if ok: assert contents(final_of(run())).content == "one two three four five six seven eight" and len(chat.hist) == 2
        else:
            with pytest.raises(IncompleteStreamError, match=r"no finish reason.*20 characters of text \('one two three four f'"): run()
            assert chat.hist == [] and len(fp.requests) == 1

@pytest.mark.parametrize('aio', [False, True])
def test_unreadable_responses_event_raises(fake_provider, aio):
    "A Responses event that is not JSON is skipped by litellm without a word: the answer it would give misses that text, so the chat refuses it"
    fp, m = fake_provider, 'openai/responses/gpt-5.4'
    evs = _rs_sse(Reply("fish bird frog newt wolf", chunks=5), {'model': 'gpt-5.4', 'input': []}, 1, [])
    assert b'"delta": "bird "' in evs[5]
    for bad, whole in ((evs[:5] + [evs[5].replace(b'"delta"', b'"delta')] + evs[6:], False), (evs, True)):
        fp.reset(); fp.queue(Reply(raw=b''.join(bad)), "never sent")
        chat = (AsyncChat if aio else Chat)(m, api_base=fp.responses_base, api_key='k', retries=2)
        async def arun(): return [o async for o in await chat("hi", stream=True)]
        run = lambda: asyncio.run(arun()) if aio else _stream(chat, "hi")
        if whole: assert contents(final_of(run())).content == "fish bird frog newt wolf" and len(chat.hist) == 2
        else:
            with pytest.raises(IncompleteStreamError, match=r"^litellm could not read the whole stream \(it skipped 1 event that was not JSON, "
                               r"beginning '\{\"type\": \"response.output_text.delta\".*19 characters of text \('fish frog newt wolf'\)"): run()
            assert chat.hist == [] and len(fp.requests) == 1

def _events(proto, rep):
    "The fake provider's own stream events of `rep` on `proto`"
    b = {'model': 'm', 'stream_options': {'include_usage': True}, 'input': []}
    return {'openai': lambda: _oa_sse(rep, b, 1, []), 'anthropic': lambda: _an_sse(rep, b, 1, [], itertools.count(5)),
            'gemini': lambda: _gm_sse(rep, 'm', 1, []), 'responses': lambda: _rs_sse(rep, b, 1, [])}[proto]()

@pytest.mark.parametrize('aio', [False, True])
def test_event_not_json_is_said_on_every_protocol(proto, aio, request):
    "An event that is not JSON mid-stream, on every protocol: 'litellm could not read the whole stream', not a missing finish reason (Gemini, Anthropic: litellm read no event after it) nor a connection error (OpenAI); nothing stored, not re-sent"
    fp, m, kw = proto
    name = request.node.callspec.params['proto']
    evs = _events(name, Reply("fish bird frog newt wolf", chunks=5))
    i = next(i for i,e in enumerate(evs) if b'bird' in e)
    head, sep, data = evs[i].partition(b'data: ')
    evs[i] = head + sep + data[:len(data)//2].rstrip() + b'\n\n'  # the event cut in half: not JSON
    fp.queue(Reply(raw=b''.join(evs)), "never sent")
    chat = (AsyncChat if aio else Chat)(m, retries=2, **kw)
    async def arun(): return [o async for o in await chat("hi", stream=True)]
    with pytest.raises(IncompleteStreamError, match=r"^litellm could not read the whole stream \((it skipped 1 event|an event was not JSON)"):
        asyncio.run(arun()) if aio else _stream(chat, "hi")
    assert chat.hist == [] and len(fp.requests) == 1

@pytest.mark.parametrize('event, said', [(b'event: ping\n\n', 'it had no data (as an `event:` line on its own'),
                                         (b'event: ping\ndata: ping\n\n', "its data beginning 'ping'")])
def test_openai_event_without_json_data_is_named(fake_provider, event, said):
    "An OpenAI stream with an event whose data is no JSON (a server's `event: ping` alone): the error said only 'an event was not JSON (Expecting value: line 1 column 1 (char 0))', not which"
    fp = fake_provider
    evs = _events('openai', Reply("fish bird frog", chunks=3))
    fp.queue(Reply(raw=b''.join(evs[:1] + [event] + evs[1:])))
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    with pytest.raises(IncompleteStreamError, match=r"^litellm could not read the whole stream \(an event was not JSON") as ei: _stream(chat, "hi")
    assert said in str(ei.value) and chat.hist == [] and len(fp.requests) == 1

@pytest.mark.parametrize('tail', [b'data: [DONE]\r\n\r\n', b': keep-alive\r\n\r\n'])
def test_gemini_line_after_finish_is_harmless(fake_provider, tail):
    "A gateway's `[DONE]` or comment after Gemini's finish: litellm's reader buffers it unread, but nothing of the answer is lost, so it is kept"
    fp = fake_provider
    fp.queue(Reply(raw=b''.join(_gm_sse(Reply("one two three", chunks=3), 'm', 1, []) + [tail])))
    chat = Chat('gemini/gemini-3-flash-preview', api_base=fp.gemini_base, api_key='k')
    _stream(chat, "hi")
    assert chat.hist[-1].content == "one two three" and len(fp.requests) == 1

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('name,finish', [('openai', b'"finish_reason": "stop"'), ('anthropic', b'message_delta')])
def test_drop_after_finish_keeps_answer(fake_provider, name, finish, aio):
    "The connection drops after the provider's finish reason, before the stream's end (OpenAI: usage and [DONE]; Anthropic: message_stop): the complete answer is kept and the drop reported, sync and async alike"
    fp = fake_provider
    m = {'openai': 'openai/gpt-4o-mini', 'anthropic': 'anthropic/claude-sonnet-4-5'}[name]
    rep = Reply("one two three", chunks=3)
    evs = _events(name, rep)
    rep.truncate_after = next(i for i,e in enumerate(evs) if finish in e) + 1
    fp.queue(rep, "never sent")
    chat = (AsyncChat if aio else Chat)(m, api_base=getattr(fp, name+'_base'), api_key='k', retries=2)
    async def arun(): return [o async for o in await chat("hi", stream=True)]
    asyncio.run(arun()) if aio else _stream(chat, "hi")
    assert chat.hist[-1].content == "one two three" and len(fp.requests) == 1 and check_hist(chat.hist) is None
    notes = [a.detail for a in chat.adjustments if a.kind=='stream']
    assert len(notes) <= 1 and all('failed after' in n and 'finished its answer' in n and 'was kept' in n for n in notes)  # (a transport that read it all sees no drop)
    if notes and name=='openai':  # (its usage would have come after the finish)
        assert any(a.detail.startswith("the stream broke before openai/gpt-4o-mini's token counts came") and "litellm's estimate" in a.detail
                   for a in chat.adjustments if a.kind=='usage'), chat.adjustments

_error_events = {'gemini': b'data: {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}\r\n\r\n',
                 'anthropic': b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n',
                 'openai': b'data: {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}\n\n'}
_finish_marks = {'gemini': b'finishReason', 'anthropic': b'message_delta', 'openai': b'"finish_reason": "stop"'}

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('name', list(_error_events))
def test_error_event_after_finish_keeps_answer(fake_provider, name, aio):
    "The provider's error event after its finish reason (Gemini has sent a 500 there): the complete answer is kept, and the error reported, not lost with the turn"
    fp = fake_provider
    m = {'openai': 'openai/gpt-4o-mini', 'anthropic': 'anthropic/claude-sonnet-4-5', 'gemini': 'gemini/gemini-3-flash-preview'}[name]
    evs = _events(name, Reply("one two three", chunks=3))
    i = max(i for i,e in enumerate(evs) if _finish_marks[name] in e)+1
    ctype = {'content-type': 'text/event-stream'}
    fp.queue(Reply(raw=b''.join(evs[:i]) + _error_events[name], headers=ctype), "never sent")
    chat = (AsyncChat if aio else Chat)(m, api_base=getattr(fp, name+'_base'), api_key='k', retries=2)
    async def arun(): return [o async for o in await chat("hi", stream=True)]
    asyncio.run(arun()) if aio else _stream(chat, "hi")
    assert chat.hist[-1].content == "one two three" and len(fp.requests) == 1 and check_hist(chat.hist) is None
    notes = [a.detail for a in chat.adjustments if a.kind=='stream']
    assert len(notes) <= 1 and all('finished its answer' in n and 'was kept' in n for n in notes)  # (litellm may read no error after the finish)
    if name=='gemini': assert notes and 'Internal error encountered' in notes[0]  # (litellm raises Gemini's: said, with the provider's words)

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('raw', _bad_bodies)
def test_unreadable_reply_noted_not_resent(proto, raw, aio):
    "A 2xx reply litellm cannot read, on any protocol: raised with a note saying what it was, sent once (retries left), nothing stored"
    fp, m, kw = proto
    fp.queue(Reply(raw=raw), "never sent", "never sent")
    chat = (AsyncChat if aio else Chat)(m, retries=2, **kw)
    async def arun(): return await chat("hi")
    run = lambda: asyncio.run(arun()) if aio else chat("hi")
    if raw == b'{"error": {"message": "upstream failed"}}' and m.startswith('anthropic'):  # Anthropic's own error body: its error, not an answer
        assert contents(run()).content == "never sent" and len(fp.requests) == 2 and len(chat.hist) == 2
        return
    with pytest.raises(Exception) as ei: run()
    if raw == b'{"error": {"message": "upstream failed"}}' and m.startswith('gemini'): assert 'upstream failed' in str(ei.value)  # Gemini's own
    else: assert any('answered (status 2xx) with a reply litellm could not read' in n for n in getattr(ei.value, '__notes__', [])), (type(ei.value), str(ei.value)[:300])
    assert len(fp.requests) == 1 and chat.hist == []

def test_responses_output_null_noted(fake_provider):
    "A Responses reply whose `output` is null fails inside litellm's reader (a TypeError it reports as a connection error): noted, not re-sent"
    from lisette.testing import _rs_json
    fp = fake_provider
    rs = _rs_json(Reply('Hi!'), {'model': 'gpt-5.4', 'input': []}, 1, [])
    fp.queue(Reply(raw=json.dumps(rs | {'output': None}).encode()), "never sent")
    chat = Chat('openai/responses/gpt-5.4', api_base=fp.responses_base, api_key='k', retries=2)
    with pytest.raises(litellm.APIConnectionError) as ei: chat("hi")
    assert 'could not read' in ' '.join(ei.value.__notes__) and len(fp.requests) == 1 and chat.hist == []

def test_failed_stream_raises_async(proto):
    fp, m, kw = proto
    fp.queue(Reply(raw=b'{"error": {"message": "upstream failed"}}'), "never sent")
    chat = AsyncChat(m, **kw)
    async def main(): return [o async for o in await chat("hi", stream=True)]
    with pytest.raises(IncompleteStreamError, match='no answer at all'): asyncio.run(main())
    assert chat.hist == [] and len(fp.requests) == 1

@pytest.mark.parametrize('aio', [False, True])
def test_stream_error_status_retried(proto, aio):
    "An error status on a stream follows `retries` on every route (Gemini raises it when the stream is first read, wrapped by litellm)"
    fp, m, kw = proto
    async def arun(chat): return [o async for o in await chat("hi", stream=True)]
    run = (lambda chat: asyncio.run(arun(chat))) if aio else (lambda chat: _stream(chat, "hi"))
    fp.queue(Reply(status=429, error='slow down', headers={'retry-after': '0'}), Reply(status=503, error='overloaded'), "made it")
    chat = (AsyncChat if aio else Chat)(m, retries=2, **kw)
    assert contents(final_of(run(chat))).content == 'made it' and len(fp.requests) == 3
    fp.reset(); fp.queue(Reply(status=429, error='slow down'), "never sent")
    chat = (AsyncChat if aio else Chat)(m, retries=0, **kw)
    with pytest.raises(litellm.RateLimitError) as ei: run(chat)
    assert type(ei.value) is litellm.RateLimitError and len(fp.requests) == 1 and chat.hist == []  # the provider's error, as raised on every route

def final_of(res): return [o for o in res if isinstance(o, litellm.ModelResponse)][-1]

def test_failed_stream_in_tool_loop_keeps_valid_hist(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})]), Reply(raw=b'null'))
    chat = Chat(m, tools=[add], **kw)
    with pytest.raises(IncompleteStreamError): _stream(chat, "add")
    assert [_role(o) for o in chat.hist] == ['user', 'assistant', 'tool'] and check_hist(chat.hist) is None

# ---- item 6: time limits, enforced by both drivers, naming the limit

def test_request_timeout_sync(proto):
    fp, m, kw = proto
    fp.queue(Reply("late", delay=3))
    chat = Chat(m, timeout=0.5, **kw)
    t0 = time.monotonic()
    with pytest.raises(ChatTimeout, match=r'no response .* within 0.5 s, the request time limit'): chat("hi")
    assert time.monotonic()-t0 < 2.5 and len(fp.requests) == 1 and chat.hist == []  # not retried

def test_request_timeout_reaches_a_wrapping_completefunc(fake_provider):
    "A completefunc taking **kw (a wrapper that logs, then calls litellm) is given the timeout, so the request stops; one that takes none is said to be unstoppable"
    fp = fake_provider
    fp.queue(Reply("late", delay=3))
    seen = []
    def logged(**kw): seen.append(kw.get('timeout')); return litellm.completion(max_retries=0, **kw)  # (the SDK's own retries off, as Chat does for litellm)
    chat = Chat('openai/gpt-4o-mini', completefunc=logged, timeout=0.5, api_base=fp.openai_base, api_key='k')
    t0 = time.monotonic()
    with pytest.raises(ChatTimeout): chat("hi")
    assert time.monotonic()-t0 < 2.5 and seen == [0.5]
    from litellm import ModelResponse
    def fixed(model, messages, max_tokens=None, stream=False, stream_options=None):
        return ModelResponse(model='gpt-4o-mini', choices=[dict(message=dict(role='assistant', content='ok'), finish_reason='stop')])
    chat = Chat('openai/gpt-4o-mini', completefunc=fixed, timeout=5)
    chat("hi")
    assert any(a.kind=='timeout' and 'cannot stop a request' in a.detail for a in chat.adjustments)
    quiet = Chat('openai/gpt-4o-mini', completefunc=fixed); quiet("hi")
    assert not any(a.kind=='timeout' for a in quiet.adjustments)  # no note without a timeout of the user's
    # the answer is remembered per chat, and asked again when the chat is given another completefunc
    seen.clear(); chat.completefunc = lambda **kw: (seen.append(kw.get('timeout')), fixed(kw['model'], kw['messages']))[1]
    chat("hi"); assert seen == [5]
    assert 'timeout' not in [a.kind for a in chat.adjustments]
    chat.completefunc = fixed
    chat("hi"); assert 'timeout' in [a.kind for a in chat.adjustments]  # (the last turn's; and 'usage': `fixed` reports no token counts)

def test_stream_total_limit_both_drivers(proto):
    "A chunk every 0.4 s never trips a per-read limit of 1 s; the whole-request limit stops it"
    fp, m, kw = proto
    fp.queue(Reply("a b c d e f g h i j k l", chunks=12, chunk_delay=0.4), Reply("a b c d e f g h i j k l", chunks=12, chunk_delay=0.4))
    chat = Chat(m, timeout=1, **kw)
    t0 = time.monotonic()
    with pytest.raises(ChatTimeout, match=r'ran past 1 s, the request time limit'): _stream(chat, "talk")
    assert time.monotonic()-t0 < 3 and chat.hist == []
    achat = AsyncChat(m, timeout=1, **kw)
    async def main(): return [o async for o in await achat("talk", stream=True)]
    t0 = time.monotonic()
    with pytest.raises(ChatTimeout, match='ran past 1 s'): asyncio.run(main())
    assert time.monotonic()-t0 < 3 and achat.hist == []

def test_stream_idle_limit(proto):
    fp, m, kw = proto
    fp.queue(Reply("a b c d", chunks=4, chunk_delay=1.5), Reply("a b c d", chunks=4, chunk_delay=1.5))
    with pytest.raises(ChatTimeout, match=r'sent nothing for 0.5 s, its idle limit'): _stream(Chat(m, timeout=(None, 0.5), **kw), "talk")
    achat = AsyncChat(m, timeout=(None, 0.5), **kw)
    async def main(): return [o async for o in await achat("talk", stream=True)]
    with pytest.raises(ChatTimeout, match='sent nothing for 0.5 s'): asyncio.run(main())

def test_async_stream_limits_and_the_callers_cancellation(proto):
    "An async stream's limits are one timer per stream: a limit gives `ChatTimeout` and leaves the task uncancelled; "
    "the caller's own cancellation is not taken for the limit"
    fp, m, kw = proto
    fp.queue(Reply("a b c d", chunks=4, chunk_delay=1.5))
    achat = AsyncChat(m, timeout=(None, 0.5), **kw)
    async def timed_out():
        with pytest.raises(ChatTimeout, match='sent nothing for 0.5 s'): [o async for o in await achat("talk", stream=True)]
        await asyncio.sleep(0.01)  # the task was not left cancelled
        return getattr(asyncio.current_task(), 'cancelling', int)()  # (Python 3.11+ counts cancellations)
    assert asyncio.run(timed_out()) == 0 and achat.hist == []
    fp.queue(Reply("a b c d", chunks=4, chunk_delay=1))
    achat = AsyncChat(m, **kw)
    async def cancelled():
        async def read(): return [o async for o in await achat("talk", stream=True)]
        task = asyncio.create_task(read())
        await asyncio.sleep(1.2); task.cancel()
        with pytest.raises(asyncio.CancelledError): await task
    asyncio.run(cancelled())
    check_hist(achat.hist)

def test_async_stream_idle_limit_counts_only_waits():
    "The idle limit is time spent waiting for the provider: the caller's own work between events does not count"
    from lisette.chat import _atimed, _Limits
    async def events(delays):
        for i,d in enumerate(delays): await asyncio.sleep(d); yield i
    async def read(delays, work):
        res = []
        async for o in _atimed(events(delays), _Limits((None, 0.5), True, 'm')): res.append(o); await asyncio.sleep(work)
        return res
    assert asyncio.run(read([0, 0, 0], work=0.8)) == [0, 1, 2]  # 0.8 s between events, all of it the caller's
    async def idle():
        with pytest.raises(ChatTimeout, match='sent nothing for 0.5 s'): await read([0, 1.0], work=0)
        await asyncio.sleep(0.01)
        return getattr(asyncio.current_task(), 'cancelling', int)()  # (Python 3.11+ counts cancellations)  # the limit's cancellation was taken back
    assert asyncio.run(idle()) == 0
    async def cancelled(after):
        t = asyncio.create_task(read([0, 10], work=0))
        await asyncio.sleep(after); t.cancel()
        with pytest.raises(asyncio.CancelledError): await t
    asyncio.run(cancelled(0.3))  # the caller's cancellation stays one
    if hasattr(asyncio.Task, 'uncancel'): asyncio.run(cancelled(0.5))  # even as the limit is reached (3.11+: cancellations are counted)
    async def total():
        with pytest.raises(ChatTimeout, match='ran past 1 s'):
            async for o in _atimed(events([0.3]*10), _Limits((1, None), True, 'm')): pass
    asyncio.run(total())

def test_async_request_timeout(proto):
    fp, m, kw = proto
    fp.queue(Reply("late", delay=3))
    chat = AsyncChat(m, timeout=0.5, **kw)
    with pytest.raises(ChatTimeout, match='within 0.5 s'): asyncio.run(chat("hi"))
    assert chat.hist == []

def test_default_limits_reach_litellm(proto):
    from lisette.chat import request_timeout, stream_idle_timeout
    fp, m, kw = proto
    chat = Chat(m, **kw)
    assert chat._limits({'model': m}, False)[1]['timeout'] == request_timeout == 600
    assert chat._limits({'model': m}, True)[1]['timeout'] == stream_idle_timeout
    with pytest.raises(ValueError, match='timeout=-1'): Chat(m, timeout=-1, **kw)._limits({}, False)

# ---- item 7: one turn at a time; the history is never corrupted

def test_threads_sharing_a_chat(proto):
    fp, m, kw = proto
    fp.respond_with(lambda body, path: Reply("ok", delay=0.05))
    chat = Chat(m, **kw)
    done, busy, other = [], [], []
    def worker(i):
        for j in range(3):
            try: chat(f"{i}-{j}"); done.append(1)
            except ChatBusyError as e: busy.append(str(e))
            except Exception as e: other.append(repr(e))
    ts = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert not other and len(done)+len(busy) == 24 and busy and done
    assert 'busy' in busy[0]
    assert check_hist(chat.hist) is None and len(chat.hist) == 2*len(done) == 2*len(fp.requests)
    assert [_role(o) for o in chat.hist] == ['user', 'assistant']*len(done)

@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('delay', [0, 0.05])
def test_async_tasks_sharing_a_chat(proto, delay, stream):
    """Six turns at once on one AsyncChat: the first runs, the others are busy at once, whatever the provider's latency (which decided how many ran, and in what order);
    streamed turns too (a turn that streams waits only for one left at an item by `break`, not for one running)"""
    fp, m, kw = proto
    fp.respond_with(lambda body, path: Reply("ok", delay=delay))
    chat = AsyncChat(m, **kw)
    async def turn(q):
        if not stream: return await chat(q)
        async for o in await chat(q, stream=True): pass
        return o
    async def main(): return await asyncio.gather(*(turn(f"q{i}") for i in range(6)), return_exceptions=True)
    res = asyncio.run(main())
    ok = [r for r in res if not isinstance(r, Exception)]
    assert all(isinstance(r, ChatBusyError) for r in res[1:]) and not isinstance(res[0], Exception) and len(ok) == 1
    assert check_hist(chat.hist) is None and [_role(o) for o in chat.hist] == ['user', 'assistant']*len(ok)  # each answer after its question

def test_half_read_stream_makes_chat_busy_until_closed(proto):
    fp, m, kw = proto
    fp.queue(Reply("one two three four five six seven"), "second")
    chat = Chat(m, **kw)
    g = chat("count", stream=True)
    next(g)
    with pytest.raises(ChatBusyError, match='stream'): chat("meanwhile")
    g.close()
    assert contents(chat("now")).content == 'second' and check_hist(chat.hist) is None

def test_async_stream_left_by_break_frees_the_chat(proto, monkeypatch):
    "`break` out of an AsyncChat stream, then the next turn at once: the loop closes the stream a few turns later, and the "
    "turn waits for that (it raised ChatBusyError), however long closing its connection takes; a stream still held, unread, "
    "keeps the chat busy, and says so at once"
    import lisette.chat as lc
    fp, m, kw = proto
    fp.queue(Reply("one two three four five six seven", chunks=7), "second", Reply("a b c d e f", chunks=6), "fourth")
    close = lc.aclose_stream
    async def slow_close(r): await asyncio.sleep(0.2); await close(r)  # (longer than a busy chat is waited for)
    monkeypatch.setattr(lc, 'aclose_stream', slow_close)
    chat = AsyncChat(m, **kw)
    async def main():
        async for o in await chat("count", stream=True): break
        assert contents(await chat("now")).content == 'second' and '_ending' not in chat.__dict__
        g = await chat("more", stream=True); await g.__anext__()
        t0 = time.monotonic()
        with pytest.raises(ChatBusyError, match='stream'): await chat("meanwhile")
        assert time.monotonic()-t0 < 0.5
        await g.aclose()
        assert contents(await chat("last")).content == 'fourth' and '_ending' not in chat.__dict__
    asyncio.run(main())
    assert check_hist(chat.hist) is None and [x.content for x in chat.hist if _role(x)=='assistant'] == ['second', 'fourth']

# ---- item 8: a negative or garbage retry-after is ignored

@pytest.mark.parametrize('ra', ['-5', 'soon', 'nan', 'inf'])
def test_bad_retry_after_ignored(proto, ra):
    fp, m, kw = proto
    fp.queue(Reply(status=429, error='slow down', headers={'retry-after': ra}), "ok")
    assert contents(Chat(m, **kw)("hi")).content == 'ok' and len(fp.requests) == 2

@pytest.mark.parametrize('aio', [False, True])
def test_retry_after_longer_than_lisette_waits_is_said(proto, aio):
    "A 429 asking for a longer wait than lisette's limit (Anthropic and OpenAI may say 60 s): raised at once, as before, and the error now says why it was not retried"
    fp, m, kw = proto
    fp.queue(Reply(status=429, error='slow down', headers={'retry-after': '60'}), "never sent")
    chat = (AsyncChat if aio else Chat)(m, **kw)
    with pytest.raises(litellm.RateLimitError) as ei: asyncio.run(chat("hi")) if aio else chat("hi")
    assert len(fp.requests) == 1 and chat.hist == []
    assert any(f"not retried: {m} asked to wait 60 s" in n and 'lisette.chat.retry_max_wait' in n for n in getattr(ei.value, '__notes__', []))

# ---- item 9: retries=0 is one request; a 200 is never re-sent

def test_retries_zero_is_one_request(proto):
    fp, m, kw = proto
    fp.queue(*[Reply(status=503, error='overloaded')]*3, "ok")
    with pytest.raises(litellm.ServiceUnavailableError): Chat(m, retries=0, **kw)("hi")
    assert len(fp.requests) == 1
    async def main(): return await AsyncChat(m, retries=0, **kw)("hi")
    fp.reset(); fp.queue(*[Reply(status=503, error='overloaded')]*3, "ok")
    with pytest.raises(litellm.ServiceUnavailableError): asyncio.run(main())
    assert len(fp.requests) == 1

@pytest.mark.parametrize('aio', [False, True])
def test_stream_answered_204_sent_once_and_said(proto, aio):
    """A streamed request answered HTTP 204 (No Content) is sent once: litellm raises Anthropic's and Gemini's as an
    `APIConnectionError`, which lisette sent again (4 requests with retries=3) and raised with nothing said"""
    fp, m, kw = proto
    fp.queue(*[Reply(status=204, raw=b'')]*4)
    chat = (AsyncChat if aio else Chat)(m, retries=3, **kw)
    async def arun(): return [o async for o in await chat("hi", stream=True)]
    with pytest.raises(Exception) as ei: asyncio.run(arun()) if aio else _stream(chat, "hi")
    assert len(fp.requests) == 1 and chat.hist == []
    notes = ' '.join(getattr(ei.value, '__notes__', []))
    said = 'answered HTTP 204 (No Content)'  # (litellm's async Gemini route fails reading it, the 204 kept only in its frames: the note said 2xx)
    assert isinstance(ei.value, IncompleteStreamError) and 'sent no answer at all' in str(ei.value) or said in notes, (type(ei.value), str(ei.value)[:300], notes)
    if m.startswith('anthropic') and not aio: assert said in notes  # (async, litellm ends the stream with no error: lisette's IncompleteStreamError)

@pytest.mark.parametrize('aio', [False, True])
def test_204_read_whole_sent_once_and_said(proto, aio):
    """A request answered HTTP 204 is sent once, and the note says 204 on every protocol (OpenAI's status only in its message:
    the note said the reply may have been billed; litellm's Gemini route raises it as its own 422, and the note said 2xx)"""
    fp, m, kw = proto
    fp.queue(*[Reply(status=204, raw=b'')]*4)
    chat = (AsyncChat if aio else Chat)(m, retries=3, **kw)
    with pytest.raises(Exception) as ei: asyncio.run(chat("hi")) if aio else chat("hi")
    assert len(fp.requests) == 1 and chat.hist == []
    notes = ' '.join(getattr(ei.value, '__notes__', []))
    assert 'answered HTTP 204 (No Content)' in notes, notes

@pytest.mark.parametrize('raw', [b'<html>oops</html>', b'{"not json', b'null', b'{"x": 1}'])
def test_unreadable_200_not_resent(proto, raw):
    fp, m, kw = proto
    fp.queue(*[Reply(raw=raw)]*4)
    chat = Chat(m, retries=3, **kw)
    with pytest.raises(Exception): chat("hi")
    assert len(fp.requests) == 1 and chat.hist == []

# ---- item 10: tools run at most max_steps rounds, whatever the model does

@pytest.mark.parametrize('max_steps', [1, 2, 3])
def test_tools_run_at_most_max_steps_rounds(proto, max_steps):
    fp, m, kw = proto
    ran = []
    def tick() -> str:
        "Count a call"
        ran.append(1); return f"tick {len(ran)}"
    fp.respond_with(lambda body, path: Reply(tool_calls=[('tick', {})]))  # ignores tool_choice='none'
    chat = Chat(m, tools=[tick], **kw)
    chat("go", max_steps=max_steps)
    assert len(ran) == max_steps
    assert chat.hist[-1]['content'] == _not_run and check_hist(chat.hist) is None
    fp.respond_with(None); fp.queue("done")
    assert contents(chat("and now?")).content == 'done'

# ---- item 1: a saved chat is data: where requests go comes from the caller

def _saved(tmp_path, fp, **settings):
    "A chat saved to a file, its settings then edited as an attacker would"
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    p = chat.save(tmp_path/'shared.json')
    d = json.loads(p.read_text()); d['settings'] |= settings; p.write_text(json.dumps(d))
    return p

def test_saved_api_base_not_used(fake_provider, tmp_path, monkeypatch):
    fp = fake_provider
    with FakeProviderPair() as evil:
        monkeypatch.setenv('OPENAI_API_KEY', 'sk-users-own-key')
        p = _saved(tmp_path, fp, api_base=evil.openai_base)
        fp.queue("from the server you chose")
        c = load_chat(p, api_base=fp.openai_base)  # the caller's api_base is used, whatever the file says
        # without an api_base of the caller's, the file's is still not used (warned), so nothing reaches `evil`
        with pytest.warns(UserWarning, match=r"not used.*api_base='http://127.0.0.1:\d+/v1'.*trusted=True"): c2 = load_chat(p)
        assert c2.api_base is None and c.api_base == fp.openai_base
        c("continue")
        assert len(fp.requests) == 1 and evil.requests == []
        evil.queue("trusted")
        assert contents(load_chat(p, trusted=True)("continue")).content == 'trusted' and len(evil.requests) == 1

def test_untrusted_load_and_save_keeps_the_files_api_base(fake_provider, tmp_path):
    "A chat loaded without trusted=True (its api_base not used) and saved again keeps the file's api_base: it was written as null, so a later trusted load sent to the provider's default server"
    fp = fake_provider
    p = Chat('openai/gpt-4o-mini', hist=['hi', 'hello'], api_base=fp.openai_base).save(tmp_path/'c.json')
    with pytest.warns(UserWarning, match='not used'): c = load_chat(p, api_key='k')
    assert c.api_base is None
    c.save(p)
    assert json.loads(p.read_text())['settings']['api_base'] == fp.openai_base
    fp.queue('from the saved server')
    assert contents(load_chat(p, trusted=True, api_key='k')('go on')).content == 'from the saved server' and len(fp.requests) == 1
    c.api_base = 'http://127.0.0.1:1/v1'; c.save(p)  # one set since is the chat's, and is saved
    assert json.loads(p.read_text())['settings']['api_base'] == 'http://127.0.0.1:1/v1'

class FakeProviderPair:
    "A second fake provider (the attacker's server)"
    def __enter__(self):
        from lisette.testing import FakeProvider
        self.fp = FakeProvider().start(); return self.fp
    def __exit__(self, *a): self.fp.stop()

@pytest.mark.parametrize('field,value,problem', [
    ('callkw', {'api_base': 'http://evil'}, 'not used'), ('extra_headers', {'X-Leak': '1'}, 'not used'),
    ('retries', -1, 'settings.retries: expected a non-negative integer, got -1'),
    ('markup', -1, 'settings.markup: expected a non-negative number, got -1'),
    ('temp', 'hot', 'settings.temp: expected a non-negative number or null, got "hot"'),
    ('temp', -1, 'settings.temp: expected a non-negative number or null, got -1'),  # (it loaded, then every turn was refused: no provider takes a temperature below 0)
    ('completefunc', 'os.system', 'settings.completefunc: not a setting lisette loads from a file'),
    ('api_key', 'sk-x', 'settings.api_key: not a setting'), ('max_tokens', True, 'settings.max_tokens: expected a positive integer'),
    ('timeout', [-1, 5], 'settings.timeout: expected null, a positive number'), ('api_base', 'file:///etc/passwd', 'settings.api_base: expected an http(s) URL'),
    ('stall', 0, 'settings.stall: expected a positive integer or null'), ('page_results', 'all', 'settings.page_results: expected a non-negative integer'),
    ('max_tokens', 10**30, 'settings.max_tokens: expected a positive integer or null, got 1000000000000000000000000000000'),
    ('page_results', 10**30, 'settings.page_results: expected a non-negative integer or null'), ('cache_idxs', [10**30], 'settings.cache_idxs: expected a list of integers'),
    ('search', ['l'], 'settings.search: expected false, true or one of')])
def test_saved_settings_checked(fake_provider, tmp_path, field, value, problem):
    p = _saved(tmp_path, fake_provider, **{field: value})
    if problem == 'not used':
        with pytest.warns(UserWarning, match=f'not used.*{field}='): c = load_chat(p)
        assert getattr(c, field) in (None, {})
    else:
        with pytest.raises(SavedChatError) as ei: load_chat(p)
        assert str(ei.value).startswith(f"{p}: ") and problem in str(ei.value) and ei.value.field.startswith('settings.')

def test_every_saved_setting_has_a_check():
    from lisette.interop import _settings, _setting_checks, _routing
    assert set(_settings) <= set(_setting_checks) and set(_routing) - {'completefunc'} <= set(_setting_checks)

# ---- item 13: malformed saved chats name the file, the field and the problem

@pytest.mark.parametrize('edit,field,problem', [
    (lambda d: d.pop('hist'), 'hist', 'missing'), (lambda d: d.update(hist={'a': 1}), 'hist', 'expected a list'),
    (lambda d: d['hist'].append({'__lisette__': 'Message', 'fields': {'role': 'assistant', 'content': 'x', 'tool_calls': 5}}), 'hist[2]', 'not a message'),
    (lambda d: d['hist'].append({'__lisette__': 'ToolCall', 'fields': {}}), 'hist[2]', 'not a message'),
    (lambda d: d['hist'].append({'role': 'robot', 'content': 'x'}), 'hist[2].role', "'role'"),
    (lambda d: d.update(model=None), 'model', 'expected a model name'), (lambda d: d.update(sp=3), 'sp', 'expected a string'),
    (lambda d: d.update(model='  '), 'model', 'expected a model name (a string that is not blank)'),  # (was Chat's TypeError, naming neither the file nor the field)
    (lambda d: d['use'].update(cost='lots'), 'use.cost', 'non-negative number'), (lambda d: d['use'].update(evil=1), 'use.evil', 'not a usage field'),
    (lambda d: d.update(settings=[1]), 'settings', 'expected an object'), (lambda d: d.update(tc_res=[1]), 'tc_res', 'expected an object'),
    (lambda d: d.update(version='1'), 'version', 'format version'),
    (lambda d: d.update(version=True), 'version', 'format version true is not an integer'),  # (true and 1.0 equal 1: they loaded as version 1)
    (lambda d: d.update(version=1.0), 'version', 'format version 1.0 is not an integer'),
    (lambda d: d.update(version=2), 'version', 'format version 2; this lisette reads version 1. Upgrade lisette'),
    (lambda d: d['hist'].append({'role': 'user', 'content': [{'type': 'video_blob', 'data': 'x'}]}), 'hist[2].content[0].type', "message 2: 'content[0].type' is 'video_blob'"),
    (lambda d: d['hist'].append({'role': 'function', 'name': 'f', 'content': '42'}), 'hist[2].role', "message 2: 'role' is 'function', OpenAI's legacy"),
    (lambda d: d['hist'].append({'role': 'user', 'content': [{'type': 'image_url', 'image_url': {'url': 'x'}}]}), 'hist[2].content[0].image_url', "'content[0].image_url' is 'x', not a URL"),
    (lambda d: d['hist'].append({'role': 'user', 'content': [{'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,%%%'}}]}), 'hist[2].content[0].image_url', "not base64"),
    (lambda d: d['hist'].append({'role': 'assistant', 'content': 'x', 'provider_specific_fields': {'thought_signatures': [[1]]}}), 'hist[2].provider_specific_fields', "not a string"),
    # a cache checkpoint of no form a provider takes (it was loaded, then sent as it was: Anthropic refuses it on every turn)
    (lambda d: d['hist'].append({'role': 'user', 'content': [{'type': 'text', 'text': 'x', 'cache_control': 'x'}]}), 'hist[2].content[0].cache_control', "'content[0].cache_control' is str 'x'"),
    (lambda d: d['hist'].append({'role': 'user', 'content': 'x', 'cache_control': {'type': 'persistent'}}), 'hist[2].cache_control', "'cache_control' has 'type' 'persistent'")])
def test_malformed_saved_chat_named(tmp_path, edit, field, problem):
    chat = Chat('openai/gpt-4o-mini', hist=['hi', 'hello'])
    p = chat.save(tmp_path/'c.json')
    d = json.loads(p.read_text()); edit(d); p.write_text(json.dumps(d))
    with pytest.raises(SavedChatError) as ei: load_chat(p)
    assert (ei.value.source, ei.value.field) == (str(p), field) and problem in str(ei.value), str(ei.value)

def test_given_history_checkpoints_of_any_form_taken_away():
    """`Chat(hist=...)` takes a given history's cache checkpoints away (the chat places its own): one of a form no provider
    takes is taken away too, not refused, as before checkpoints' form was checked (a saved chat's, which stay, are)"""
    odd = [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi', 'cache_control': {'type': 'persistent'}}]},
           {'role': 'assistant', 'content': 'hello', 'cache_control': {'type': 'ephemeral', 'ttl': 300}}]
    for repair in (False, True):
        chat = Chat('openai/gpt-4o-mini', hist=odd, repair=repair)
        assert chat.hist == [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]}, {'role': 'assistant', 'content': 'hello'}]
    assert odd[0]['content'][0]['cache_control'] == {'type': 'persistent'}  # (the caller's messages keep theirs)
    with pytest.raises(MessageFormatError, match="'cache_control' has 'ttl' 300"): check_hist(odd[1:])

_unknown_part = {'role': 'user', 'content': [{'type': 'text', 'text': 'see'}, {'type': 'video_blob', 'data': 'x'}]}
_legacy_fn = {'role': 'function', 'name': 'lookup', 'content': '42'}

@pytest.mark.parametrize('bad,field,problem', [(_unknown_part, 'content[1].type', "is 'video_blob', a content part litellm does not send"),
                                               (_legacy_fn, 'role', "is 'function', OpenAI's legacy function result")])
def test_unsendable_saved_message_refused_at_load(fake_provider, tmp_path, bad, field, problem):
    "A part type no provider takes, or a legacy `function` message: refused when loading (naming the message and what to do), not on the next turn inside litellm"
    fp = fake_provider
    p = Chat('openai/gpt-4o-mini', hist=['hi', 'hello']).save(tmp_path/'c.json')
    d = json.loads(p.read_text()); d['hist'].append(bad); p.write_text(json.dumps(d))
    with pytest.raises(SavedChatError) as ei: load_chat(p, api_base=fp.openai_base, api_key='k')
    assert ei.value.field == f'hist[2].{field}' and f"message 2: {field!r} {problem}" in str(ei.value) and ('drop it' in str(ei.value))
    with pytest.raises(MessageFormatError) as ei: Chat('openai/gpt-4o-mini', hist=['hi', 'hello', bad])  # and so does `Chat(hist=)`
    assert (ei.value.index, ei.value.field) == (2, field) and problem in str(ei.value)
    assert fp.requests == []

def _edited_save(tmp_path, fp, proto, edit):
    "A chat with a tool round (and Claude's thinking) saved, then its assistant message (or that message's call) edited by `edit(message, call)`"
    model, base = {'anthropic': ('anthropic/claude-sonnet-4-5', fp.anthropic_base), 'gemini': ('gemini/gemini-3-flash-preview', fp.gemini_base)}[proto]
    fp.queue(Reply('Adding.', thinking='hm' if proto=='anthropic' else None, tool_calls=[('add', {'a': 1, 'b': 2})]), 'Three.')
    c = Chat(model, tools=[add], cache=True, api_base=base, api_key='k')
    c('1+2?', think='l' if proto=='anthropic' else None)
    p = c.save(tmp_path/'c.json'); d = json.loads(p.read_text())
    m = d['hist'][1]; m = m.get('fields', m)
    tc = m['tool_calls'][0]; edit(m, tc.get('fields', tc))
    p.write_text(json.dumps(d))
    return p, dict(tools=[add], api_base=base, api_key='k')

def _set_sig(tc, v): tc.setdefault('provider_specific_fields', {})['thought_signature'] = v

@pytest.mark.parametrize('proto,edit,field,problem', [
    *[pytest.param('anthropic', lambda m,tc,v=v: m.update(function_call=v), 'hist[1].function_call', "'function_call' is no OpenAI legacy function call", id=f'function_call={v!r}')
      for v in ['', {}, {'name': 'add'}]],
    pytest.param('anthropic', lambda m,tc: m.update(thinking_blocks=0), 'hist[1]', "thinking_blocks is a int, not a list", id='thinking_blocks=0'),
    # a field no thinking block has: litellm sends the block as it is, and Anthropic refuses it ("Extra inputs are not permitted") on every turn
    pytest.param('anthropic', lambda m,tc: m['thinking_blocks'][0].update(note='mine'), 'hist[1]', "thinking_blocks[0] (thinking) has field(s) 'note' no thinking block has", id='thinking_blocks[0].note'),
    *[pytest.param('gemini', lambda m,tc,v=v: _set_sig(tc, v), 'hist[1].tool_calls[0].provider_specific_fields.thought_signature', f"is a {type(v).__name__}", id=f'thought_signature={v!r}')
      for v in [[1], {'a': 1}, 5]],
    pytest.param('anthropic', lambda m,tc: tc.update(cache_control={'type': 'ephemeral', 'ttl': 300}), 'hist[1].tool_calls[0].cache_control', "has 'ttl' 300", id='cache_control.ttl=300')])
def test_saved_message_that_breaks_the_next_turn_refused_at_load(fake_provider, tmp_path, proto, edit, field, problem):
    """Saved messages that loaded, then failed every later turn: a legacy `function_call` (Anthropic's 400: a tool call
    without its result), `thinking_blocks: 0` ("'int' object is not iterable"), a Gemini call's thought signature that
    is no str ("unhashable type", or Gemini's 400). Refused when loading, naming the file and the field; nothing is sent"""
    fp = fake_provider
    p, kw = _edited_save(tmp_path, fp, proto, edit)
    n = len(fp.requests)
    with pytest.raises(SavedChatError) as ei: load_chat(p, **kw)
    assert (ei.value.source, ei.value.field) == (str(p), field) and problem in str(ei.value), str(ei.value)
    assert len(fp.requests) == n

def test_legacy_function_call_in_chat_hist_refused(fake_provider):
    "`Chat(hist=...)` with a legacy `function_call` (even {}): refused up front, not a 400 from Anthropic on every turn"
    fp = fake_provider
    for fc in ['', {}, {'name': 'add'}]:
        with pytest.raises(MessageFormatError, match="message 1: 'function_call' is no OpenAI legacy function call") as ei:
            Chat('anthropic/claude-sonnet-4-5', hist=[{'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': 'yo', 'function_call': fc}],
                 api_base=fp.anthropic_base, api_key='k')
        assert (ei.value.index, ei.value.field) == (1, 'function_call')
    assert fp.requests == []

def test_known_part_types_still_load(fake_provider, tmp_path):
    "The part types lisette makes or passes on (text, image_url, file, input_audio, Anthropic's image) load and are sent"
    fp = fake_provider
    parts = [{'type': 'text', 'text': 'look'}, {'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,iVBORw0KGgo='}},
             {'type': 'file', 'file': {'file_data': 'data:application/pdf;base64,JVBERi0='}},
             {'type': 'input_audio', 'input_audio': {'data': 'AAAA', 'format': 'wav'}}]
    hist = [{'role': 'user', 'content': parts}, {'role': 'assistant', 'content': 'seen'}]
    c = load_chat(Chat('openai/gpt-4o-mini', hist=hist).save(tmp_path/'c.json'), api_base=fp.openai_base, api_key='k')
    fp.queue('ok')
    assert contents(c('and?')).content == 'ok' and [o['type'] for o in fp.last['messages'][0]['content']] == ['text', 'image_url', 'file', 'input_audio']
    Chat('anthropic/claude-sonnet-4-5', hist=[{'role': 'user', 'content': [{'type': 'image', 'source': {'type': 'url', 'url': 'https://x.org/a.png'}}]}])

def test_deep_and_binary_files_named(tmp_path):
    p = tmp_path/'deep.json'
    p.write_text('[' * 100_000 + ']' * 100_000)
    with pytest.raises(SavedChatError, match=f'{p}: file: .*nests too deeply'): load_chat(p)
    p.write_bytes(b'\xff\xfe\x00garbage')
    with pytest.raises(SavedChatError, match=f'{p}: file: not a saved chat'): load_chat(p)
    d = json.loads(Chat('openai/gpt-4o-mini', hist=['hi']).save(tmp_path/'c.json').read_text())
    d['hist'].append({'role': 'assistant', 'content': 'ok', 'extra': 'DEEP'})
    (tmp_path/'c.json').write_text(json.dumps(d).replace('"DEEP"', '[' * 800 + ']' * 800))  # json reads it; decoding it recurses
    with pytest.raises(SavedChatError, match=r'hist\[1\]: nests too deeply'): load_chat(tmp_path/'c.json')

def test_unreadable_reply_error_is_short(fake_provider):
    "An OpenAI reply litellm cannot read (`tool_calls` a string) beside 300 KB of text: the error says so in a few KB (litellm's message echoes the whole reply), keeps the whole message, and the history stays as it was"
    fp = fake_provider
    body = {'id': 'x', 'object': 'chat.completion', 'created': 1, 'model': 'gpt-4o-mini', 'usage': {'prompt_tokens': 1, 'completion_tokens': 1, 'total_tokens': 2},
            'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': 'x'*300_000, 'tool_calls': 'bad'}, 'finish_reason': 'tool_calls'}]}
    fp.queue(Reply(raw=json.dumps(body).encode()))
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    with pytest.raises(litellm.InternalServerError) as ei: chat('go')
    e = ei.value
    assert len(str(e)) < 5000 and 'Invalid response object' in str(e) and len(e.lisette_full_message) > 300_000
    assert any('could not read' in n for n in e.__notes__) and chat.hist == [] and len(fp.requests) == 1

@pytest.mark.parametrize('fn', [5, 'x', None, []], ids=['int', 'str', 'none', 'list'])
def test_call_whose_function_is_no_object(fake_provider, fn):
    "A reply read whole whose tool call's `function` is no object: the chat crashed ('int' object has no attribute 'name'), or the next request failed its history check; the call is now answered as one of no tool, said, and the turn goes on"
    import warnings
    from lisette.providers import unnamed_tool
    fp = fake_provider
    msg = {'role': 'assistant', 'content': 'hi', 'tool_calls': [{'id': 'call_f', 'type': 'function', 'function': fn}]}
    body = {'id': 'x', 'object': 'chat.completion', 'created': 1, 'model': 'gpt-4o-mini', 'usage': {'prompt_tokens': 1, 'completion_tokens': 1, 'total_tokens': 2},
            'choices': [{'index': 0, 'message': msg, 'finish_reason': 'tool_calls'}]}
    fp.queue(Reply(raw=json.dumps(body).encode()), 'done')
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        assert contents(chat('go')).content == 'done'
    sent = fp.last['messages']
    assert sent[1]['tool_calls'][0]['function']['name'] == unnamed_tool and sent[2]['role'] == 'tool' and sent[2]['tool_call_id'] == sent[1]['tool_calls'][0]['id']
    assert check_hist(chat.hist) is None
    assert any(a.kind=='tool_call' and 'as its function, not an object' in a.detail for a in chat.adjustments)

def test_saved_chat_with_deep_tool_arguments_loads_and_goes_on(fake_provider, tmp_path):
    "A saved chat holding a tool call whose arguments (a JSON string) nest ~100,000 deep loads, and its next turns work, on OpenAI and after a switch to Anthropic (`{}` sent for them); loading raised a RecursionError"
    fp = fake_provider
    deep = '{"n": ' + '['*100_000 + ']'*100_000 + '}'
    hist = [{'role': 'user', 'content': 'go'}, {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'call_d', 'type': 'function', 'function': {'name': 'f', 'arguments': deep}}]},
            {'role': 'tool', 'tool_call_id': 'call_d', 'name': 'f', 'content': 'not called'}, {'role': 'assistant', 'content': 'ok'}]
    p = tmp_path/'c.json'
    p.write_text(json.dumps({**json.loads(Chat('openai/gpt-4o-mini').save(p).read_text()), 'hist': hist}))  # (a file made elsewhere: `Chat(hist=)` did not read it)
    c = load_chat(p, api_base=fp.openai_base, api_key='k')
    fp.queue('a', 'b')
    assert contents(c('next')).content == 'a' and fp.last['messages'][1]['tool_calls'][0]['function']['arguments'] == deep
    c.model, c.api_base = 'anthropic/claude-sonnet-4-5', fp.anthropic_base
    assert contents(c('more')).content == 'b'
    check_hist(c.hist)

# ---- item 5: lone surrogates replaced when storing (reported), repaired on load

def test_lone_surrogate_reply_does_not_break_the_chat(proto):
    fp, m, kw = proto
    fp.queue(Reply('bad \ud800 char'), 'next')
    chat = Chat(m, **kw)
    with pytest.warns(UserWarning, match='lone surrogates'): chat("hi")
    assert chat.hist[-1].content == 'bad \ufffd char' and 'surrogates' in [a.kind for a in chat.adjustments]
    assert contents(chat("again")).content == 'next' and len(fp.requests) == 2

def test_lone_surrogate_tool_result(proto):
    fp, m, kw = proto
    def read() -> str:
        "Read a badly decoded file"
        return 'abc\udcff'
    fp.queue(Reply(tool_calls=[('read', {})]), 'done', 'more')
    chat = Chat(m, tools=[read], **kw)
    with pytest.warns(UserWarning, match="result of tool call"): chat("read it")
    assert chat.hist[2]['content'] == 'abc\ufffd' and contents(chat("more")).content == 'more'

def test_lone_surrogate_repaired_on_load(fake_provider, tmp_path):
    fp = fake_provider
    chat = Chat('openai/gpt-4o-mini', hist=['hi', 'bad \ud800'], api_base=fp.openai_base, api_key='k')
    p = chat.save(tmp_path/'c.json')  # json escapes it: the file is valid, the text is not
    with pytest.warns(UserWarning, match=r'lone surrogates .* in 1 string'): c2 = load_chat(p, api_base=fp.openai_base, api_key='k')
    assert c2.hist[1]['content'] == 'bad \ufffd'
    fp.queue('ok')
    assert contents(c2('go on')).content == 'ok'

@pytest.mark.parametrize('edit', ['as saved', 'upper-case escape', 'beside an emoji', 'raw emoji, no escape'])
def test_load_looks_for_lone_surrogates_only_where_json_can_hold_one(tmp_path, edit):
    "load_chat skips the search for lone surrogates when the file's text has no \\udXXX escape (UTF-8 text cannot hold one): any escape a writer may use is still found, and an emoji (a pair) is kept"
    first = 'hi 😀' if 'emoji' in edit else 'hi'  # (json escapes an emoji as a pair of surrogates)
    chat = Chat('openai/gpt-4o-mini', hist=[first, 'bad \ud800' if edit!='raw emoji, no escape' else 'fine'])
    p = chat.save(tmp_path/'c.json'); text = p.read_text()
    if edit=='upper-case escape': text = text.replace('\\ud800', '\\uD800')
    if edit=='beside an emoji': text = text.replace('bad \\ud800', 'bad \\ud83d\\ude00\\udc00')
    if edit=='raw emoji, no escape': text = json.dumps(json.loads(text), ensure_ascii=False)
    p.write_text(text, encoding='utf-8')
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        c2 = load_chat(p)
    assert c2.hist[0]['content'] == first
    want = {'as saved': 'bad \ufffd', 'upper-case escape': 'bad \ufffd', 'beside an emoji': 'bad 😀\ufffd', 'raw emoji, no escape': 'fine'}[edit]
    assert c2.hist[1]['content'] == want
    assert any('lone surrogates' in str(w.message) for w in ws) == (edit!='raw emoji, no escape')

# ---- item 11 (engine side): every call the library does not run is still answered

def test_srvtoolu_id_from_other_provider_is_answered(fake_provider):
    fp = fake_provider
    fp.queue(Reply(tool_calls=[dict(name='add', arguments={'a': 1, 'b': 2}, id='srvtoolu_fake1')]), "It is 3.", "Next.")
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    assert contents(chat("1+2?")).content == 'It is 3.'
    assert chat.hist[2]['tool_call_id'] == 'srvtoolu_fake1' and chat.hist[2]['content'] == '3'
    assert check_hist(chat.hist) is None and contents(chat("more")).content == 'Next.'

def test_srvtoolu_id_answered_after_interruption(fake_provider):
    fp = fake_provider
    fp.queue(Reply(tool_calls=[dict(name='add', arguments={'a': 1}, id='srvtoolu_fake2')]), Reply(status=400, error='bad'), "ok")
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    with pytest.raises(litellm.BadRequestError): chat("go")
    assert check_hist(chat.hist) is None and contents(chat("again")).content == 'ok'

def test_appended_message_checked(fake_provider):
    "A message appended to chat.hist between turns is checked like the rest: a clear error, not litellm's bare Exception"
    from lisette.messages import MessageFormatError
    fp = fake_provider
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    fp.queue('a', 'b')
    chat('hi')
    chat.hist.append({'role': 'user', 'content': [{'type': 'refusal', 'refusal': 'no'}]})
    with pytest.raises(MessageFormatError, match="message 2: 'content\\[0\\].type' is 'refusal' in a 'user' message"): chat()
    assert len(fp.requests) == 1

def test_quiet_litellm_across_threads():
    "quiet_litellm from many threads at once (every reply's price runs in it) leaves litellm's log and banner as they were"
    import logging, litellm
    from concurrent.futures import ThreadPoolExecutor
    from lisette.usage import quiet_litellm
    lg, banner = logging.getLogger('LiteLLM'), litellm.suppress_debug_info
    def work(_):
        for _ in range(200):
            with quiet_litellm(): assert litellm.suppress_debug_info
    with ThreadPoolExecutor(8) as ex: list(ex.map(work, range(8)))
    assert not lg.disabled and litellm.suppress_debug_info == banner
    class Catch(logging.Handler):
        def __init__(self): super().__init__(); self.got = []
        def emit(self, rec): self.got.append(rec.getMessage())
    h = Catch(); lg.addHandler(h)
    try:
        with quiet_litellm(): lg.error('hidden')
        with ThreadPoolExecutor(1) as ex:
            with quiet_litellm(): ex.submit(lg.error, 'another thread').result()  # not this thread's: shown
        lg.error('shown')
    finally: lg.removeHandler(h)
    assert h.got == ['another thread', 'shown']


def test_no_litellm_banners_in_output(fake_provider, capfd):
    """litellm's red banners ('Give Feedback / Get Help' before an error it raises, 'Provider List' when its capability
    checks meet a codex model name) printed to stdout, into the notebook cell; lisette turns them off, as the original"""
    fp = fake_provider
    fp.queue(Reply(status=400, error='Invalid request: bad thing'))
    with pytest.raises(Exception, match='bad thing'): Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')('hi')
    out = capfd.readouterr()
    assert 'Give Feedback' not in out.out + out.err and 'Provider List' not in out.out + out.err

def test_repeated_chunks_name_litellms_guard(proto, monkeypatch):
    "A streamed text whose deltas repeat (a separator line) trips litellm's loop guard: the error says it was litellm, and how to let it through"
    fp, m, kw = proto
    fp.queue(Reply('=' * 1000, chunks=200), "never sent")
    chat = Chat(m, **kw)
    with pytest.raises(IncompleteStreamError, match=r"^litellm stopped reading the stream .*the same chunk came 100 times.*REPEATED_STREAMING_CHUNK_LIMIT") as ei:
        _stream(chat, "draw a line")
    assert 'Nothing was added to the history' in str(ei.value) and chat.hist == [] and len(fp.requests) == 1
    monkeypatch.setattr(litellm, 'REPEATED_STREAMING_CHUNK_LIMIT', 1000)
    fp.reset(); fp.queue(Reply('=' * 1000, chunks=200))
    assert contents(final_of(_stream(chat, "draw a line"))).content.startswith('=' * 1000)

def test_gemini_stream_cut_after_a_continuation_hop(fake_provider):
    "litellm 1.110 goes on past a long Gemini answer's cap in a second request (a hop): only the last hop's finish says the answer is whole"
    from litellm.llms.vertex_ai.gemini.vertex_and_google_ai_studio_gemini import ModelResponseIterator
    if not hasattr(ModelResponseIterator, '_start_hop'): pytest.skip("this litellm does not continue Gemini answers in hops")
    fp = fake_provider
    ev = lambda d: f"data: {json.dumps(d)}\r\n\r\n".encode()
    cand = lambda t, **k: {'candidates': [{'content': {'role': 'model', 'parts': [{'text': t}]}, 'index': 0, **k}]}
    hop1 = ev(cand("Part one, ")) + ev({**cand("still part one. ", finishReason='CONTINUATION', continuationToken='tok1'),
                                       'usageMetadata': {'promptTokenCount': 5, 'candidatesTokenCount': 8, 'totalTokenCount': 13}})
    H = {'content-type': 'text/event-stream'}
    for hop2, whole in ((ev(cand("Part two, cut")), False), (ev(cand("Part two.", finishReason='STOP')), True)):
        fp.reset(); fp.queue(Reply(raw=hop1, headers=H), Reply(raw=hop2, headers=H), "never sent")
        chat = Chat('gemini/gemini-3-flash-preview', api_base=fp.gemini_base, api_key='k', max_tokens=1000)
        if whole: assert contents(final_of(_stream(chat, "a long essay"))).content.endswith("Part two.") and len(fp.requests) == 2
        else:
            with pytest.raises(IncompleteStreamError, match='no finish reason'): _stream(chat, "a long essay")
            assert chat.hist == [] and len(fp.requests) == 2

# ---- every way a streamed turn ends gives its connection back at once (not to the garbage collector)

@pytest.fixture
def open_streams(monkeypatch):
    "A function giving (responses made, still open) since it was last called: httpcore's for sync requests, aiohttp's for async ones"
    import weakref, aiohttp
    from httpcore._sync.connection_pool import PoolByteStream
    made = []
    for C in (PoolByteStream, aiohttp.ClientResponse):
        def __init__(self, *a, _init=C.__init__, **k): _init(self, *a, **k); made.append(weakref.ref(self))
        monkeypatch.setattr(C, '__init__', __init__)
    def count():
        live = [o for w in made if (o := w()) is not None]
        res = len(made), sum(1 for o in live if not (o._closed if isinstance(o, PoolByteStream) else o.closed))
        made.clear(); return res
    return count

def test_streams_closed_however_the_turn_ends(proto, open_streams):
    "A stream left open would be closed by the cycle collector, which can hang httpx's pool (litellm's Responses streams were: `close_stream` did not reach them)"
    import gc
    fp, m, kw = proto
    slow = lambda: Reply("a b c d e f g h i j k l", chunks=12, chunk_delay=0.2)
    chats = []  # kept, as a user keeps them: a chat must not hold its finished turn's stream open
    def chat(cls=Chat, **k): chats.append(c := cls(m, **kw, **k)); return c
    gc.disable()  # what is still open is what the chat left open
    try:
        fp.queue(slow())
        with pytest.raises(Exception, match='ran past'): list(chat(timeout=0.5)('hi', stream=True))
        fp.queue(slow())
        for x in chat()('hi', stream=True): break
        fp.queue(slow())
        g = chat()('hi', stream=True); next(g); g.close()
        fp.queue(Reply("hello " * 20, chunks=5))
        list(chat()('hi', stream=True))
        assert open_streams() == (4, 0)
        async def main():
            fp.queue(slow())
            async for x in await chat(AsyncChat)('hi', stream=True): break
            await asyncio.sleep(0.1)  # (the loop closes an async generator left unfinished on its next turns)
            fp.queue(slow())
            g = await chat(AsyncChat)('hi', stream=True); await g.__anext__(); await g.aclose()
            await asyncio.sleep(0.1)
            assert open_streams() == (2, 0)  # (counted while the loop runs: its shutdown closes what is left)
            fp.queue(slow())
            with pytest.raises(Exception, match='ran past'): [o async for o in await chat(AsyncChat, timeout=0.5)('hi', stream=True)]
            fp.queue(Reply("hello " * 20, chunks=5))
            [o async for o in await chat(AsyncChat)('hi', stream=True)]
        asyncio.run(main())
        assert open_streams() == (2, 0)
    finally: gc.enable()

def test_saved_history_with_too_many_checkpoints(fake_provider, tmp_path):
    "A file whose history has 6 cache checkpoints: with cache=True the chat moves them (4 sent); without, it is refused at load, saying how to load it (Anthropic would refuse every turn)"
    fp = fake_provider
    cc, hist = {'type': 'ephemeral'}, []
    for i in range(6): hist += [{'role': 'user', 'content': [{'type': 'text', 'text': f'q{i}', 'cache_control': cc}]}, {'role': 'assistant', 'content': f'a{i}'}]
    p = tmp_path/'c.json'
    p.write_text(json.dumps({'format': 'lisette.chat', 'version': 1, 'model': 'anthropic/claude-sonnet-4-5', 'sp': '', 'hist': hist,
                             'tc_res': None, 'use': {}, 'last_use': {}, 'settings': {}}))
    with pytest.raises(SavedChatError, match='cache=True'): load_chat(p, api_base=fp.anthropic_base, api_key='k')
    fp.queue('ok', 'ok')
    c = load_chat(p, api_base=fp.anthropic_base, api_key='k', cache=True)
    c('next')
    assert json.dumps(fp.last).count('cache_control') <= 4
    c = load_chat(p, api_base=fp.anthropic_base, api_key='k', repair=True)
    c('next')
    assert json.dumps(fp.last).count('cache_control') <= 4 and any(a.kind=='history' for a in c.adjustments)

# the provider's own refusal in a 2xx stream, before any answer (Responses: `response.failed`, an `error` event; payloads as openai/codex's tests record them)
_rs_failed = {"type": "response.failed", "sequence_number": 3, "response": {"id": "resp_1", "object": "response", "created_at": 1755041560, "status": "failed",
              "error": {"code": "rate_limit_exceeded", "message": "Rate limit reached for gpt-5.1 in organization org-AAA on tokens per min (TPM): Limit 30000, "
                        "Used 22999, Requested 12528. Please try again in 0.01s. Visit https://platform.openai.com/account/rate-limits to learn more."}, "usage": None, "metadata": {}}}
_rs_flagged = {"type": "error", "sequence_number": 2, "error": {"code": "invalid_prompt", "param": None, "type": "invalid_request_error",
               "message": "Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt."}}

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('ev', ['failed', 'flagged'])
def test_provider_refusal_in_a_stream_before_any_answer(fake_provider, ev, aio):
    """A rate limit sent as `response.failed` before any answer is retried like a 429 (nothing was generated); a flagged
    prompt's `error` event raises the provider's ContentPolicyViolationError, as the same reply not streamed does. Both
    were an IncompleteStreamError saying the provider may have billed it"""
    fp = fake_provider
    head = _events('responses', Reply('x'))[:2]  # response.created, response.in_progress
    d = {'failed': _rs_failed, 'flagged': _rs_flagged}[ev]
    fp.queue(Reply(raw=b''.join(head) + f"event: {d['type']}\ndata: {json.dumps(d)}\n\n".encode(), headers={'content-type': 'text/event-stream'}), 'Paris.')
    chat = (AsyncChat if aio else Chat)('openai/responses/gpt-5', api_base=fp.responses_base, api_key='k', retries=2)
    async def arun(): return [o async for o in await chat("Capital of France?", stream=True)]
    run = lambda: asyncio.run(arun()) if aio else _stream(chat, "Capital of France?")
    if ev=='failed':
        run()
        assert chat.hist[-1].content == 'Paris.' and len(fp.requests) == 2
    else:
        with pytest.raises(litellm.ContentPolicyViolationError, match='flagged'): run()
        assert chat.hist == [] and len(fp.requests) == 1

_an_overloaded = b'event: error\ndata: {"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}              }\n\n'  # (as Helicone's PR #4678 records it)
_an_start = ('event: message_start\ndata: ' + json.dumps({"type": "message_start", "message": {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
             "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}) + '\n\nevent: ping\ndata: {"type": "ping"}\n\n').encode()

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('started', [False, True])
def test_anthropic_overload_in_a_stream_retried(fake_provider, started, aio):
    "Anthropic's `overloaded_error` event in a 2xx stream before any answer is the overload its 529 is: retried (it was an IncompleteStreamError saying it may have been billed)"
    fp = fake_provider
    fp.queue(Reply(raw=(_an_start if started else b'') + _an_overloaded, headers={'content-type': 'text/event-stream'}), 'Paris.')
    chat = (AsyncChat if aio else Chat)('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k', retries=2)
    async def arun(): return [o async for o in await chat("Capital of France?", stream=True)]
    asyncio.run(arun()) if aio else _stream(chat, "Capital of France?")
    assert chat.hist[-1].content == 'Paris.' and len(fp.requests) == 2

def test_reply_to_legacy_functions_keeps_the_chat_going(fake_provider):
    "A reply to OpenAI's legacy `functions=` (a `function_call` with a name and arguments) is recorded and the next turn goes out (it was refused there: helper-43 finding 1)"
    fp = fake_provider
    body = {"id": "x", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}, "finish_reason": "function_call"}]}
    fp.queue(Reply(raw=json.dumps(body).encode()), 'ok')
    c = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    c('hi', functions=[{"name": "f", "parameters": {"type": "object", "properties": {}}}])
    assert contents(c('again')).content == 'ok'

# ---- arguments of the wrong kind (helper-46): refused where given, naming the argument

@pytest.mark.parametrize('kw, msg', [
    (dict(model=123), "model=123: give a litellm model name"), (dict(model=None), "model=None: give a litellm model name"),
    (dict(sp=123), "sp=123: the system prompt is a str"), (dict(temp='hot'), "temp='hot': a temperature is a number"),
    (dict(cache_idxs=5), "cache_idxs=5: give a list of message indices"), (dict(ns='x'), "ns='x': give a dict"),
    (dict(retries=-1), "retries=-1: give how many times to retry"), (dict(max_cost=-1), "max_cost=-1: give a spending limit"),
    (dict(temp=-0.5), "temp=-0.5: no provider takes a temperature below 0"), (dict(temp=float('nan')), "temp=nan: no provider takes")])
def test_chat_arguments_of_the_wrong_kind(kw, msg):
    "Each was accepted: dropped on the way (sp), sent as is (temp), or failed in the first turn with a message naming neither (cache_idxs, model)"
    with pytest.raises((TypeError, ValueError), match=msg.replace('(', r'\(').replace(')', r'\)')): Chat(**{'model': 'openai/gpt-4o-mini', **kw})

_set_wrong = [('temp', -1, ValueError, "temp=-1: no provider takes a temperature below 0"), ('temp', float('nan'), ValueError, "temp=nan: no provider takes"),
              ('temp', float('inf'), ValueError, "temp=inf: no provider takes"), ('temp', 'hot', TypeError, "temp='hot': a temperature is a number"),
              ('model', 123, TypeError, "model=123: give a litellm model name"), ('model', '', TypeError, "model='': give a litellm model name"),
              ('sp', 123, TypeError, "sp=123: the system prompt is a str"), ('cache_idxs', 5, TypeError, "cache_idxs=5: give a list of message indices"),
              ('retries', -1, ValueError, "retries=-1: give how many times to retry"), ('retries', 1.5, ValueError, "retries=1.5: give how many times to retry"),
              ('max_cost', -1, ValueError, "max_cost=-1: give a spending limit"), ('max_cost', 'x', ValueError, "max_cost='x': give a spending limit"),
              ('stall', 0, ValueError, "stall must be a positive number of rounds"), ('search', 'hard', ValueError, "search='hard': give True, False")]

@pytest.mark.parametrize('name, v, err, msg', _set_wrong)
def test_settings_set_later_checked_as_given(fake_provider, name, v, err, msg):
    """A setting assigned to a chat (`chat.temp = -1`) is checked as `Chat(temp=-1)` checks it: it was taken, and every later
    turn was sent with it and refused (temp), failed naming neither (model, cache_idxs), or went on wrongly (retries, max_cost).
    The chat keeps its setting, and its next turn goes as before (no protocol matters here: the value is refused before any request)"""
    fp = fake_provider
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    before = getattr(chat, name)
    with pytest.raises(err, match=msg.replace('(', r'\(').replace(')', r'\)')): setattr(chat, name, v)
    assert getattr(chat, name) == before
    fp.queue('ok')
    assert contents(chat('hi')).content == 'ok' and len(fp.requests) == 1

def test_settings_set_later_that_work(proto):
    "Values `Chat(...)` takes are taken when assigned too, and the next turn sends them"
    fp, model, kw = proto
    chat = Chat(model, **kw)
    chat.temp, chat.retries, chat.max_cost, chat.sp, chat.cache_idxs, chat.stall, chat.search = 0.5, 0, 1.0, 'Be brief.', [0, -1], None, False
    chat.temp = 1; chat.max_cost = None; chat.stall = 3
    assert (chat.temp, chat.retries, chat.max_cost, chat.sp, chat.cache_idxs, chat.stall) == (1, 0, None, 'Be brief.', [0, -1], 3)
    fp.queue('ok')
    assert contents(chat('hi')).content == 'ok'
    assert 'Be brief.' in json.dumps(fp.last)

def test_turn_arguments_of_the_wrong_kind(fake_provider):
    fp = fake_provider
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    for kw, msg in [(dict(think='hard'), "think='hard': give True, False, or 'l', 'm', 'h', 'x'"), (dict(temp='hot'), "temp='hot': a temperature is a number"),
                    (dict(max_steps='3'), "max_steps='3': give how many tool rounds"), (dict(temp=-1), "temp=-1: no provider takes a temperature below 0")]:
        with pytest.raises((TypeError, ValueError), match=msg): chat('hi', **kw)
    assert chat.hist == [] and fp.requests == []
    with pytest.raises(ValueError, match="Nothing to send: give a message"): chat()
    assert chat.hist == [] and fp.requests == []
    fp.queue('ok')
    assert contents(chat('hi', think='low')).content == 'ok'  # (effort names are fine too)

def test_arguments_that_worked_still_do(fake_provider):
    """The checks above refuse only what could not work (helper-50's review: they refused values that did): a namespace
    `mk_ns` takes, a falsy think= (off) or a number (medium), 'disable', max_steps=math.inf, cache_idxs as a range, and
    chat() on a chat with only a system prompt"""
    import math, types, collections
    from fastcore.foundation import L
    fp = fake_provider
    kw = dict(api_base=fp.openai_base, api_key='k')
    for ns in (collections.ChainMap({'add': add}), types.MappingProxyType({'add': add}), add, L([add]), {add}):
        Chat('openai/gpt-4o-mini', tools=[add], ns=ns, **kw)
    Chat('openai/gpt-4o-mini', cache_idxs=range(-2, 0), **kw)
    chat = Chat('openai/gpt-4o-mini', sp='Greet the user first.', **kw)
    fp.queue('Hello!', *['ok']*7)
    assert contents(chat()).content == 'Hello!'
    for think in (0, '', None, False, 1, 'disable'): chat('hi', think=think)
    chat('hi', max_steps=math.inf)

def test_model_litellm_cannot_place_gets_a_suggestion():
    "A mistyped model name: litellm's 'LLM Provider NOT provided' error gets a note with the close names it knows"
    import warnings
    with warnings.catch_warnings(), pytest.raises(litellm.BadRequestError) as e:
        warnings.simplefilter('ignore')
        Chat('gpt-4o-mni', api_key='k')('hi')
    assert "Did you mean 'gpt-4o-mini'" in '\n'.join(getattr(e.value, '__notes__', []))

def test_small_spending_limit_shows_its_digits(fake_provider):
    fp = fake_provider
    fp.queue(Reply('a', usage=dict(prompt_tokens=100, completion_tokens=10)))
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k', max_cost=0.00001)
    chat('hi')
    with pytest.raises(CostLimitError, match=r"max_cost=\$0\.00001\."): chat('again')

def test_checked_settings_delete_as_attributes_do():
    "A checked setting (a data descriptor on `Chat`) is deleted as any attribute is: gone from the chat, and a second `del` an AttributeError"
    chat = Chat('openai/gpt-4o-mini')
    del chat.temp
    assert 'temp' not in chat.__dict__
    with pytest.raises(AttributeError, match="'Chat' object has no attribute 'temp'"): del chat.temp
    chat.temp = 0.3
    assert chat.temp == 0.3
