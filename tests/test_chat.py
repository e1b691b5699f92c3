"Chat and AsyncChat through litellm against the fake provider, for both wire protocols: what the provider received, loops, interruption."
import asyncio, json, threading, time
import pytest
from lisette import *
from lisette.chat import _final_prompt, _interrupted, MissingApiKeyError, CostLimitError
import litellm
from lisette.messages import _role
from lisette.testing import Reply

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

def slow(x:int):
    "Sleep 0.2 s then echo"
    time.sleep(0.2); return x

def sent_tool_results(fp):
    "Tool results in the last request, in any protocol"
    return [r for t in fp.views[-1]['turns'] for _,r in t['results']]

def test_system_temp_and_history(proto):
    fp, m, kw = proto
    fp.queue("Hi Rens", "Your name is Rens.")
    chat = Chat(m, sp='Be brief.', temp=0.4, **kw)
    chat("I'm Rens"); r = chat("Name?")
    assert contents(r).content == 'Your name is Rens.'
    v = fp.views[-1]
    assert v['temperature'] == (None if m.startswith('openai/responses/') else 0.4)  # gpt-5.4 takes none: adapt_request drops it
    assert v['system'] == 'Be brief.'
    assert len(chat.hist) == 4
    assert chat.use.total_tokens == 30 and chat.last_use.total_tokens == 15

def test_parallel_tool_loop(proto):
    fp, m, kw = proto
    # every call waits for all six to have started: run one after another, the first would time out the barrier
    barrier = threading.Barrier(6, timeout=10)
    def together(x:int):
        "Wait for the others, then echo"
        barrier.wait(); return x
    fp.queue(Reply(tool_calls=[('together', {'x': i}) for i in range(6)]), "done")
    chat = Chat(m, tools=[together], **kw)
    chat("go")
    assert sent_tool_results(fp) == [str(i) for i in range(6)]
    assert fp.views[-1]['tools'] == ['together']

@pytest.mark.parametrize('aio', [False, True])
def test_tools_set_after_construction_run(proto, aio):
    "Tools given by setting `chat.tools` are offered and run (their functions were missing from the namespace: 'Tool not found in namespace')"
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 2, 'b': 3})]), 'Five.')
    chat = (AsyncChat if aio else Chat)(m, **kw)
    chat.tools = [add]
    r = asyncio.run(chat('Add 2 and 3')) if aio else chat('Add 2 and 3')
    assert contents(r).content == 'Five.'
    res = [mm for mm in chat.hist if _role(mm)=='tool']
    assert len(res)==1 and res[0]['content']=='5'

def test_tools_set_keep_a_namespace_given(fake_provider):
    "A namespace the user gave (a sandboxed implementation) stays theirs when `chat.tools` is set (helper-43 finding 2)"
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('add', {'a': 2, 'b': 3})]), 'Done.')
    chat = Chat('openai/gpt-4o-mini', tools=[add], ns={'add': lambda a, b=0: 'sandboxed'}, api_base=fp.openai_base, api_key='k')
    chat.tools = [add]
    chat('Add 2 and 3')
    assert [m['content'] for m in chat.hist if _role(m)=='tool'] == ['sandboxed']

def test_max_steps_final_prompt(proto):
    fp, m, kw = proto
    fp.queue(*[Reply(tool_calls=[('add', {'a': i, 'b': 1})]) for i in range(2)], "summary")
    chat = Chat(m, tools=[add], **kw)
    res = chat("add", max_steps=2, return_all=True)
    assert chat.hist[-2] == _final_prompt
    assert [r['content'] for r in res if isinstance(r, dict)] == ['1', '2']
    assert fp.views[-1]['tool_choice'] == 'none'

def test_undeclared_and_bad_args(proto):
    fp, m, kw = proto
    bad = '{"a": 1,' if m.startswith('openai') else '[1]'  # Anthropic always sends JSON objects
    fp.queue(Reply(tool_calls=[('os_system', {'cmd': 'rm'}), dict(name='add', arguments=bad)]), "ok")
    chat = Chat(m, tools=[add], **kw)
    chat("go")
    assert chat.hist[2]['content'] == 'Tool not defined in tool_schemas: os_system'
    if m.startswith('openai'): assert chat.hist[3]['content'].startswith('Failed to parse arguments for tool add')

def test_stream_matches_nonstream(proto):
    fp, m, kw = proto
    script = [Reply("Let me add.", tool_calls=[('add', {'a': 2, 'b': 3})]), "It is 5."]
    fp.queue(*script)
    c1 = Chat(m, tools=[add], **kw); c1("2+3?")
    fp.queue(*script)
    c2 = Chat(m, tools=[add], **kw)
    items = list(c2("2+3?", stream=True))
    assert [_role(x) for x in c1.hist] == [_role(x) for x in c2.hist]
    assert [getattr(x, 'content', None) or x.get('content') for x in c1.hist[1:]] == [getattr(x, 'content', None) or x.get('content') for x in c2.hist[1:]]
    kinds = [type(o).__name__ for o in items]
    assert 'ModelResponseStream' in kinds and kinds.count('ModelResponse') == 2 and kinds.count('dict') == 1

def test_cache_checkpoints_reach_anthropic(fake_provider):
    fp = fake_provider
    fp.queue("a", "b", "c")
    chat = Chat('anthropic/claude-sonnet-4-5', sp='sys', cache=True, cache_idxs=[0, -1], api_base=fp.anthropic_base, api_key='k')
    chat("one"); chat("two"); chat("three")
    b = fp.last
    assert b['system'][0]['cache_control'] == {'type': 'ephemeral'}
    marked = [i for i,m in enumerate(b['messages']) if isinstance(m['content'], list) and any('cache_control' in p for p in m['content'])]
    assert marked == [len(b['messages'])-1]

def test_cache_off_sends_no_checkpoints(fake_provider):
    "Caching turned off after cached turns: the checkpoints placed before are not sent (the history loses them, on copies)"
    fp = fake_provider
    fp.queue("a", "b", "c")
    chat = Chat('anthropic/claude-sonnet-4-5', cache=True, api_base=fp.anthropic_base, api_key='k')
    chat("one"); chat("two")
    chat.cache = False
    chat("three")
    assert 'cache_control' not in json.dumps(fp.last['messages'])
    assert chat._ckpts == [] and 'cache_control' not in repr(chat.hist)

def test_images_and_pdf_as_native_blocks(fake_provider):
    fp = fake_provider
    fp.queue("a puppy")
    chat = Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')
    chat(['What is this?', open('samples/puppy.jpg', 'rb').read(), open('samples/solveit.pdf', 'rb').read()])
    types = [p['type'] for p in fp.last['messages'][0]['content']]
    assert types == ['text', 'image', 'document']

def test_abandoned_stream_rolls_back(proto):
    fp, m, kw = proto
    fp.queue(Reply("word " * 50))
    chat = Chat(m, **kw)
    g = chat("story", stream=True)
    next(g); next(g); g.close()
    assert chat.hist == []
    fp.queue("fine")
    chat("again"); assert len(chat.hist) == 2

def test_provider_error_midloop_leaves_valid_hist(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 1})]), Reply(status=400, error='boom'))
    chat = Chat(m, tools=[add], **kw)
    with pytest.raises(Exception, match='boom'): chat("go", num_retries=0)
    assert [_role(x) for x in chat.hist] == ['user', 'assistant', 'tool']
    fp.queue("continued")
    chat()  # continue the interrupted loop
    assert chat.hist[-1].content == 'continued'

def test_async_parallel_and_stream(proto):
    fp, m, kw = proto
    async def main():
        # concurrency shown by rendezvous, not by timing: each call waits until all have started
        started, n = asyncio.Event(), [0]
        async def meet(x:int):
            "Wait until all eight calls have started, then echo"
            n[0] += 1
            if n[0]==8: started.set()
            await asyncio.wait_for(started.wait(), 10); return x
        fp.queue(Reply(tool_calls=[('meet', {'x': i}) for i in range(8)]), "done")
        chat = AsyncChat(m, tools=[meet], **kw)
        r = await chat("go")
        assert contents(r).content == 'done' and sent_tool_results(fp) == [str(i) for i in range(8)]
        barrier = threading.Barrier(4, timeout=10)  # sync tools: each in its own worker thread, never on the loop
        def together(x:int):
            "Wait for the other three threads, then echo"
            barrier.wait(); return x
        fp.queue(Reply(tool_calls=[('together', {'x': i}) for i in range(4)]), "done2")
        chat = AsyncChat(m, tools=[together], **kw)
        assert contents(await chat("go")).content == 'done2'
        async def aslow(x:int):
            "Async sleep then echo"
            await asyncio.sleep(0.01); return x
        fp.queue(Reply("hi there", tool_calls=[('aslow', {'x': 1})]), "bye")
        chat = AsyncChat(m, tools=[aslow], **kw)
        items = [o async for o in await chat("go", stream=True)]
        assert [_role(x) for x in chat.hist] == ['user', 'assistant', 'tool', 'assistant']
        assert any(isinstance(o, dict) for o in items)
    asyncio.run(main())

def test_many_async_conversations_no_crosstalk(fake_provider):
    fp = fake_provider
    def responder(body, path):
        msgs = body['messages']
        if msgs[-1].get('role')=='tool': return f"result {msgs[-1]['content']}"
        return Reply(tool_calls=[('add', {'a': int(msgs[-1]['content']), 'b': 1000})])
    fp.respond_with(responder)
    async def one(i):
        chat = AsyncChat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
        r = await chat(str(i))
        return chat, contents(r).content
    async def main(): return await asyncio.gather(*(one(i) for i in range(50)))
    res = asyncio.run(main())
    for i,(chat,txt) in enumerate(res):
        assert txt == f'result {i+1000}'
        assert chat.hist[0]['content'] == str(i) and len(chat.hist) == 4

def test_threads_each_with_own_chat(fake_provider):
    fp = fake_provider
    fp.respond_with(lambda body, path: f"echo {body['messages'][-1]['content']}")
    out, errs = {}, []
    def run(i):
        try:
            c = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
            for j in range(3): c(f"{i}-{j}")
            out[i] = [x['content'] if isinstance(x, dict) else x.content for x in c.hist]
        except Exception as e: errs.append(e)
    ts = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert not errs
    for i,h in out.items(): assert h == [s for j in range(3) for s in (f"{i}-{j}", f"echo {i}-{j}")]

# ---- provider errors: retries with backoff, client errors raised, missing keys named

def test_rate_limit_and_5xx_retried(proto):
    fp, m, kw = proto
    for stream in (False, True):
        fp.reset()
        fp.queue(Reply(status=429, error='slow down', headers={'retry-after': '0'}),
                 Reply(status=500, error='oops', headers={'retry-after': '0'}), "made it")
        chat = Chat(m, **kw)
        r = chat("hi", stream=stream)
        if stream: r = [o for o in r if isinstance(o, litellm.ModelResponse)][-1]
        assert contents(r).content == 'made it' and len(fp.requests) == 3
        assert [_role(x) for x in chat.hist] == ['user', 'assistant']

def test_async_retry(proto):
    fp, m, kw = proto
    fp.queue(Reply(status=503, error='overloaded', headers={'retry-after': '0'}), "ok")
    async def main(): return await AsyncChat(m, **kw)("hi")
    assert contents(asyncio.run(main())).content == 'ok' and len(fp.requests) == 2

def test_client_error_not_retried_and_retries_bounded(proto):
    fp, m, kw = proto
    fp.queue(Reply(status=400, error='your request is bad'))
    chat = Chat(m, **kw)
    with pytest.raises(litellm.BadRequestError, match='your request is bad'): chat("hi")
    assert len(fp.requests) == 1 and chat.hist == []
    fp.reset()
    fp.queue(*[Reply(status=503, error='still overloaded', headers={'retry-after': '0'})]*3)
    with pytest.raises(litellm.ServiceUnavailableError, match='still overloaded'): Chat(m, retries=2, **kw)("hi")
    assert len(fp.requests) == 3  # first try + 2 retries

def test_stream_failing_midway_not_retried(proto):
    fp, m, kw = proto
    fp.queue(Reply("one two three four five six seven eight nine ten", chunks=20, truncate_after=6), "never sent")  # cut mid-text in every protocol
    chat = Chat(m, **kw)
    with pytest.raises(Exception): list(chat("count", stream=True))
    assert len(fp.requests) == 1 and chat.hist == []
    fp.reset(); fp.queue("fine")
    assert contents(chat("again")).content == 'fine'

_key_vars = ('OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'GEMINI_API_KEY', 'GOOGLE_API_KEY')

@pytest.mark.parametrize('stream', [False, True])
def test_missing_key_named(proto, monkeypatch, stream):
    "No key: the error names the variable, and nothing is sent (litellm's Responses route would send `Bearer None`: providers._refuse_keyless_responses)"
    fp, m, kw = proto
    for k in _key_vars: monkeypatch.delenv(k, raising=False)
    var = 'OPENAI_API_KEY' if m.startswith('openai') else 'GOOGLE_API_KEY or GEMINI_API_KEY' if m.startswith('gemini') else 'ANTHROPIC_API_KEY'
    chat = Chat(m, api_base=kw['api_base'])
    with pytest.raises(MissingApiKeyError, match=f'set {var}.* or pass api_key='): chat("hi") if not stream else list(chat("hi", stream=True))
    assert len(fp.requests) == 0 and chat.hist == []
    fp.queue("hello")
    chat = Chat(m, api_base=kw['api_base'], api_key='k')  # an explicit key: sent as before
    assert contents(chat("hi")).content == 'hello' and len(fp.requests) == 1

def test_missing_key_responses_env_base(fake_provider, monkeypatch):
    "`Chat('openai/responses/gpt-5.4')('hi')` with no OPENAI_API_KEY (the base from $OPENAI_BASE_URL, so nothing can reach OpenAI)"
    fp = fake_provider
    for k in _key_vars: monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv('OPENAI_BASE_URL', fp.responses_base)
    with pytest.raises(MissingApiKeyError, match='No API key for openai/responses/gpt-5.4: set OPENAI_API_KEY'): Chat('openai/responses/gpt-5.4')('hi')
    assert fp.requests == []
    fp.queue("hello")
    assert contents(Chat('openai/responses/gpt-5.4', api_key='k')('hi')).content == 'hello' and len(fp.requests) == 1

# ---- spending limit

def test_max_cost(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})], usage={'input': 400_000, 'output': 100}), "wrapped up")
    chat = Chat(m, tools=[add], max_cost=0.01, **kw)
    r = chat("add forever", max_steps=10)
    assert 'Spending limit reached' in contents(r).content and chat.hist[-2] == _final_prompt
    assert fp.views[-1]['tool_choice'] == 'none'
    assert chat.use.cost >= 0.01
    n = len(fp.requests)
    with pytest.raises(CostLimitError, match='max_cost'): chat("more")
    assert len(fp.requests) == n and chat.hist[-1].content.startswith('wrapped up')
    chat.max_cost = None; fp.queue("ok again")
    assert contents(chat("more")).content == 'ok again'

# ---- context window

def test_context_window_warning_and_fit(fake_provider):
    import warnings
    from lisette.context import ContextWindowWarning
    fp = fake_provider
    big = ' '.join(map(str, range(200_000)))
    def read_log() -> str:
        "Read the huge log"
        return big
    for fit in (False, True):
        fp.reset(); fp.queue(Reply(tool_calls=[('read_log', {})]), "done")
        chat = Chat('openai/gpt-4o-mini', tools=[read_log], fit_context=fit, page_results=None, api_base=fp.openai_base, api_key='k')
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter('always')
            chat("read it")
        msgs = [str(w.message) for w in ws if issubclass(w.category, ContextWindowWarning)]
        if fit: assert len(msgs) == 1 and msgs[0].startswith('Shortened 1 tool result') and len(fp.last['messages'][-1]['content']) < 5000
        else: assert len(msgs) == 1 and 'the provider will likely reject it' in msgs[0] and fp.last['messages'][-1]['content'] == big
    fp.reset(); fp.queue("small")
    with warnings.catch_warnings():
        warnings.simplefilter('error', ContextWindowWarning)  # an ordinary turn never warns
        Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')("hi")
