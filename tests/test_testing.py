"The fake provider speaks all four wire protocols well enough for litellm's real request building, HTTP and parsers, and rejects what the real services reject."
import asyncio, base64, json, socket, subprocess, sys, time
import httpx, litellm, pytest
from lisette.testing import FakeProvider, Reply, Recorded, scripted_model, fake_provider

litellm.suppress_debug_info = True
OA, AN, GM, RS = 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5', 'gemini/gemini-3-flash-preview', 'openai/responses/gpt-5.4'
MODELS = [OA, AN, GM, RS]
TOOLS = [{'type': 'function', 'function': {'name': 'add', 'description': 'Add two numbers', 'parameters': {
    'type': 'object', 'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer'}}, 'required': ['a', 'b']}}}]
HI = [{'role': 'user', 'content': 'hi'}]

def base(fp, m):
    b = {OA: fp.openai_base, AN: fp.anthropic_base, GM: fp.gemini_base, RS: fp.responses_base}.get(m) or (fp.openai_base if m.startswith('openai') else fp.anthropic_base)
    return dict(api_base=b, api_key='fake', num_retries=0)

def call(fp, m, stream=False, msgs=HI, **kw):
    "litellm.completion against `fp`, streamed chunks rebuilt into one response"
    r = litellm.completion(m, msgs, stream=stream, **base(fp, m), **kw)
    return litellm.stream_chunk_builder(list(r)) if stream else r

async def acall(fp, m, stream=False, msgs=HI, **kw):
    r = await litellm.acompletion(m, msgs, stream=stream, **base(fp, m), **kw)
    return litellm.stream_chunk_builder([c async for c in r]) if stream else r

def free_port():
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

both = pytest.mark.parametrize('m', MODELS, ids=['openai', 'anthropic', 'gemini', 'responses'])
modes = pytest.mark.parametrize('stream,aio', [(False, False), (True, False), (False, True), (True, True)],
                                ids=['json', 'sse', 'async-json', 'async-sse'])

async def run(fp, m, stream, aio, **kw): return await acall(fp, m, stream, **kw) if aio else call(fp, m, stream, **kw)

# ---- content through litellm, both protocols, sync/async, JSON/SSE

@both
@modes
async def test_text(fake_provider, m, stream, aio):
    fake_provider.queue("Hello there, this is a longer answer in several deltas.")
    r = await run(fake_provider, m, stream, aio)
    assert r.choices[0].message.content == "Hello there, this is a longer answer in several deltas."
    assert r.choices[0].finish_reason == 'stop'
    gm = '/v1beta/models/gemini-3-flash-preview:' + ('streamGenerateContent' if stream else 'generateContent')
    assert fake_provider.requests[-1].path == {OA: '/v1/chat/completions', AN: '/v1/messages', GM: gm, RS: '/v1/responses'}[m]
    if m!=GM: assert fake_provider.last['stream'] is True if stream else not fake_provider.last.get('stream')  # Gemini: in the path

@both
@modes
async def test_parallel_tool_calls(fake_provider, m, stream, aio):
    fake_provider.queue(Reply("Adding both.", tool_calls=[('add', {'a': 1, 'b': 2}), {'name': 'add', 'arguments': '{"a": 3, "b": 4}'}]))
    r = await run(fake_provider, m, stream, aio, tools=TOOLS)
    msg = r.choices[0].message
    assert msg.content == 'Adding both.' and r.choices[0].finish_reason == 'tool_calls'
    assert [(t.function.name, json.loads(t.function.arguments)) for t in msg.tool_calls] == [('add', {'a': 1, 'b': 2}), ('add', {'a': 3, 'b': 4})]
    # Gemini 3 sends no call ids (litellm makes call_...); litellm takes a Responses function_call item's id (fc_...)
    assert all(t.id.startswith({AN: 'toolu_', RS: 'fc_'}.get(m, 'call_')) for t in msg.tool_calls) and len({t.id for t in msg.tool_calls}) == 2
    assert fake_provider.views[-1]['tools'] == ['add']  # litellm sent the tools in the provider's format

def test_tool_only_and_explicit_ids(fake_provider):
    for m in (OA, AN):  # Gemini 3 returns no ids; litellm names Responses calls by item id (see test_parallel_tool_calls)
        for stream in (False, True):
            fake_provider.queue(Reply(tool_calls=[dict(name='add', arguments={'a': 5}, id='my-id')]))
            msg = call(fake_provider, m, stream, tools=TOOLS).choices[0].message
            assert not msg.content and [(t.id, t.function.arguments) for t in msg.tool_calls] == [('my-id', '{"a": 5}')]

@pytest.mark.parametrize('stream', [False, True])
def test_scripted_reply_on_groq(fake_provider, stream):
    "A scripted reply read by litellm's Groq route: its reader fails on a reply without `service_tier` (1.106.2 to 1.110.2), which OpenAI's and Groq's replies carry (helper-44 finding 7)"
    fake_provider.queue(Reply('Hi there.', tool_calls=[('add', {'a': 1, 'b': 2})]))
    msg = call(fake_provider, 'groq/openai/gpt-oss-120b', stream, tools=TOOLS).choices[0].message
    assert msg.content == 'Hi there.' and msg.tool_calls[0].function.name == 'add'

def test_ids_are_deterministic(fake_provider):
    ids = []
    for _ in range(2):
        fake_provider.reset()
        fake_provider.queue(Reply(tool_calls=[('add', {'a': 1})]))
        ids.append(call(fake_provider, AN).choices[0].message.tool_calls[0].id)
    assert ids[0] == ids[1] == 'toolu_000000000000000000000002'  # message id 1, tool id 2

@pytest.mark.parametrize('stream', [False, True])
def test_thinking(fake_provider, stream):
    fake_provider.queue(Reply("Answer.", thinking='Let me think step by step.', signature='sig-123'))
    m = call(fake_provider, AN, stream).choices[0].message
    assert m.content == 'Answer.' and m.reasoning_content == 'Let me think step by step.'
    assert [(b['thinking'], b['signature']) for b in m.thinking_blocks] == [('Let me think step by step.', 'sig-123')]
    fake_provider.queue(Reply("Answer.", thinking='Reasoned.', usage={'reasoning': 3}))
    r = call(fake_provider, OA, stream, stream_options={'include_usage': True} if stream else None)
    assert (r.choices[0].message.reasoning_content, r.usage.completion_tokens_details.reasoning_tokens) == ('Reasoned.', 3)

@both
@pytest.mark.parametrize('stream', [False, True])
def test_usage(fake_provider, m, stream):
    fake_provider.queue(Reply("ok", usage=dict(input=100, output=7, cache_read=80, cache_creation=20)))
    u = call(fake_provider, m, stream, stream_options={'include_usage': True} if stream and m==OA else None).usage
    assert u.completion_tokens == 7 and u.prompt_tokens_details.cached_tokens == 80
    if m==AN:  # Anthropic input_tokens excludes the cache; litellm adds reads and writes back into prompt_tokens
        assert (u.prompt_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens) == (200, 20, 80)
    else: assert u.prompt_tokens == 100
    fake_provider.queue("defaults")
    u = call(fake_provider, m, stream, stream_options={'include_usage': True} if stream and m==OA else None).usage
    assert (u.prompt_tokens, u.completion_tokens) == (10, 5)

STOPS = [('max_tokens', 'length', 'max_tokens', 'length'), ('length', 'length', 'max_tokens', 'length'),
         ('refusal', 'content_filter', 'refusal', 'content_filter'), ('content_filter', 'content_filter', 'refusal', 'content_filter'),
         ('pause_turn', 'stop', 'pause_turn', 'stop'), ('stop_sequence', 'stop', 'stop_sequence', 'stop'), ('stop', 'stop', 'end_turn', 'stop')]

@pytest.mark.parametrize('stop,oa_wire,an_wire,want', STOPS, ids=[s[0] for s in STOPS])
def test_stop_reasons(fake_provider, stop, oa_wire, an_wire, want):
    fp = fake_provider
    from litellm.litellm_core_utils.core_helpers import _FINISH_REASON_MAP
    for m in MODELS:
        # litellm 1.110 reads Anthropic's pause_turn as 'length' (1.106: 'stop'); OpenAI's wire says 'stop'
        w = _FINISH_REASON_MAP.get('pause_turn', want) if stop=='pause_turn' and m==AN else want
        for stream in (False, True):
            fp.queue(Reply("x", stop=stop))
            assert call(fp, m, stream).choices[0].finish_reason == w
    fp.queue(Reply("x", stop=stop), Reply("x", stop=stop))
    assert httpx.post(fp.openai_base+'/chat/completions', json={'model': 'm', 'messages': HI}).json()['choices'][0]['finish_reason'] == oa_wire
    assert httpx.post(fp.url+'/v1/messages', json={'model': 'm', 'messages': HI}).json()['stop_reason'] == an_wire

def test_bad_reply_fails_at_construction():
    with pytest.raises(ValueError, match='unknown stop'): Reply('x', stop='finished')
    with pytest.raises(ValueError, match='a tool call is'): Reply(tool_calls=['add'])

@pytest.mark.parametrize('stream', [False, True])
def test_web_search(fake_provider, stream):
    fake_provider.queue(Reply("Otters are mammals.", web_search=[{'query': 'otters', 'url': 'https://example.com/otters',
                                                                  'title': 'Otters', 'cited_text': 'Otters are mammals.'}]))
    r = call(fake_provider, AN, stream)
    m, psf = r.choices[0].message, r.choices[0].message.provider_specific_fields
    assert m.content == 'Otters are mammals.'
    # litellm exposes the server tool use as a `web_search` tool call (among tool_calls up to 1.106, in
    # provider_specific_fields['server_tool_calls'] from 1.110), results and citations in provider_specific_fields
    (tc,) = [dict(o) if isinstance(o, dict) else o.model_dump() for o in m.tool_calls or psf['server_tool_calls']]
    assert tc['id'].startswith('srvtoolu_') and (tc['function']['name'], json.loads(tc['function']['arguments'])) == ('web_search', {'query': 'otters'})
    assert psf['web_search_results'][0]['content'][0]['url'] == 'https://example.com/otters'
    (cite,) = psf['citations'][0]
    assert (cite['type'], cite['url'], cite['cited_text']) == ('web_search_result_location', 'https://example.com/otters', 'Otters are mammals.')
    assert r.usage.server_tool_use.web_search_requests == 1

# ---- errors and faults

@both
@pytest.mark.parametrize('status,exc', [(429, litellm.RateLimitError), (400, litellm.BadRequestError),
                                        (401, litellm.AuthenticationError), (500, litellm.InternalServerError)])
def test_error_statuses(fake_provider, m, status, exc):
    # litellm classifies OpenAI errors by message as well as status: a real 401 says "Incorrect API key provided"
    msg = f'Incorrect API key provided: provider says {status}' if status == 401 else f'provider says {status}'
    fake_provider.queue(Reply(status=status, error=msg, headers={'retry-after': '0'}))
    t = time.perf_counter()
    with pytest.raises(exc, match=f'provider says {status}'): call(fake_provider, m, max_retries=0)
    assert time.perf_counter()-t < 10 and len(fake_provider.requests) == 1  # not retried

@both
@pytest.mark.parametrize('stream', [False, True])
def test_nothing_queued_fails_fast(fake_provider, m, stream):
    t = time.perf_counter()
    with pytest.raises(litellm.BadRequestError, match=r'no reply queued for POST /v1.* \(request 1\)'): call(fake_provider, m, stream)
    assert time.perf_counter()-t < 10  # a hang or a retry loop would take far longer

def test_responder_raises(fake_provider):
    fake_provider.respond_with(lambda body, path: 1/0)
    with pytest.raises(litellm.BadRequestError, match='responder raised ZeroDivisionError'): call(fake_provider, OA)

def test_http_errors(fake_provider):
    fp = fake_provider
    for path in ('/v1/chat/completions', '/v1/messages'):
        r = httpx.post(fp.url+path, content=b'{not json', headers={'content-type': 'application/json'})
        assert r.status_code == 400 and 'not valid JSON' in json.dumps(r.json())
        assert httpx.post(fp.url+path, json=[1, 2]).status_code == 400
    r = httpx.post(fp.url+'/v1/completions', json={})
    assert r.status_code == 404 and '/v1/completions' in r.json()['error']['message'] and '/v1/messages' in r.json()['error']['message']
    assert httpx.get(fp.url+'/nope').status_code == 404
    assert httpx.get(fp.url+'/health').json() == {'ok': True}
    assert fp.requests == []  # bad requests are not recorded

def test_chunked_request_body(fake_provider):
    fake_provider.queue('ok')
    r = httpx.post(fake_provider.openai_base+'/chat/completions', content=iter([b'{"model": "m", ', b'"messages": []}']))
    assert r.json()['choices'][0]['message']['content'] == 'ok' and fake_provider.last == {'model': 'm', 'messages': []}

def test_faults(fake_provider):
    fp = fake_provider
    fp.queue(Reply("a b c d e f g h i j k l", truncate_after=3))
    with pytest.raises(Exception): call(fp, AN, stream=True)
    fp.queue(Reply("a b c d e f g h i j k l", truncate_after=3))
    with pytest.raises(Exception): call(fp, OA, stream=True)
    fp.queue(Reply(raw=b'{"this is": "not a completion"'))
    with pytest.raises(Exception): call(fp, OA)
    fp.queue(Reply(raw=b'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"raw!"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'))
    assert call(fp, OA, stream=True).choices[0].message.content == 'raw!'
    fp.queue(Reply('slow', delay=0.3))
    t = time.perf_counter(); call(fp, OA)
    assert time.perf_counter()-t >= 0.3
    fp.queue(Reply('one two three four five six', chunks=3, chunk_delay=0.05))
    t = time.perf_counter(); assert call(fp, AN, stream=True).choices[0].message.content == 'one two three four five six'
    assert time.perf_counter()-t >= 0.2

def test_many_chunks_are_fast(fake_provider):
    # distinct chunks: litellm aborts a stream that repeats the same chunk 100+ times
    text = ''.join(f'{i:05d}' for i in range(1000))
    fake_provider.queue(Reply(text, chunks=5000))
    t = time.perf_counter()
    with httpx.stream('POST', fake_provider.openai_base+'/chat/completions', json={'model': 'm', 'stream': True, 'messages': HI}) as r:
        events = [l for l in r.iter_lines() if l.startswith('data: ')]
    # role, 5000 deltas, finish, [DONE]; a Nagle-delayed server would need minutes, not seconds
    assert len(events) == 5000+3 and time.perf_counter()-t < 30
    fake_provider.queue(Reply(text, chunks=1000))
    assert call(fake_provider, AN, stream=True).choices[0].message.content == text

# ---- recording, scripting, lifecycle

def test_recording_masks_secrets(fake_provider):
    fp = fake_provider
    fp.queue('ok', 'ok')
    litellm.completion(AN, HI, api_base=fp.anthropic_base, api_key='sk-ant-secret-123')
    litellm.completion(OA, HI, api_base=fp.openai_base, api_key='sk-oai-secret-456')
    an, oa = fp.requests
    assert isinstance(an, Recorded) and an.headers['x-api-key'] == '***' and oa.headers['authorization'] == '***'
    assert 'secret' not in repr(fp.requests) and 'anthropic-version' in an.headers
    assert an.body['messages'] == [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]}] and oa.body['messages'] == HI
    assert fp.bodies == [an.body, oa.body] and fp.last is oa.body
    fp.queue('unused'); fp.respond_with(scripted_model); fp.reset()
    assert (fp.requests, fp.pending, fp.last) == ([], 0, None)
    with pytest.raises(litellm.BadRequestError, match='no reply queued'): call(fp, OA)  # reset also removed the responder

def test_queue_before_responder(fake_provider):
    fake_provider.queue('queued').respond_with(lambda body, path: Reply('from fn'))
    assert [call(fake_provider, OA).choices[0].message.content for _ in range(3)] == ['queued', 'from fn', 'from fn']

async def test_concurrency(fake_provider):
    def text(c): return c if isinstance(c, str) else ''.join(b.get('text', '') for b in c)  # Anthropic sends blocks
    fp = fake_provider.respond_with(lambda body, path: f"echo {text(body['messages'][-1]['content'])}")
    async def one(i):
        m = MODELS[i%2]
        r = await litellm.acompletion(m, [{'role': 'user', 'content': str(i)}], stream=i%4>1, **base(fp, m))
        if i%4>1: r = litellm.stream_chunk_builder([c async for c in r])
        return r.choices[0].message.content
    assert await asyncio.gather(*map(one, range(60))) == [f'echo {i}' for i in range(60)]
    assert len(fp.requests) == 60

def test_scripted_model_tool_loop(fake_provider):
    fake_provider.respond_with(scripted_model)
    for m in MODELS:
        msgs = [{'role': 'user', 'content': 'What is 2+3?'}]
        r = call(fake_provider, m, msgs=msgs, tools=TOOLS)
        (tc,) = r.choices[0].message.tool_calls
        assert (tc.function.name, json.loads(tc.function.arguments)) == ('add', {'a': 2, 'b': 3})
        msgs += [r.choices[0].message.model_dump(), {'role': 'tool', 'tool_call_id': tc.id, 'content': '5'}]
        r = call(fake_provider, m, stream=True, msgs=msgs, tools=TOOLS)
        assert r.choices[0].message.content == '(scripted local model, not a real LLM) The tool returned 5.'
        assert 'You said: plain' in call(fake_provider, m, msgs=[{'role': 'user', 'content': 'plain'}]).choices[0].message.content

def test_lifecycle():
    port = free_port()
    with FakeProvider(port=port) as fp:
        assert (fp.url, fp.openai_base, fp.anthropic_base) == (f'http://127.0.0.1:{port}', f'http://127.0.0.1:{port}/v1', f'http://127.0.0.1:{port}')
        fp.queue(Reply('slow', delay=30))
        with httpx.Client() as c:
            assert c.get(fp.url+'/health').status_code == 200  # a kept-alive connection
            err = []
            def slow():
                try: c.post(fp.openai_base+'/chat/completions', json={'model': 'm', 'messages': HI}, timeout=10)
                except httpx.HTTPError as e: err.append(e)
            import threading
            th = threading.Thread(target=slow); th.start(); time.sleep(0.1)
            t = time.perf_counter(); fp.stop()
            assert time.perf_counter()-t < 10  # not the 30 s the reply would take
            th.join(10); assert not th.is_alive() and err  # the in-flight request is cut off, not left hanging
        with pytest.raises(httpx.ConnectError): httpx.get(fp.url+'/health')
    fp.stop()  # stopping twice is harmless
    assert fake_provider.__name__ == 'fake_provider'

def test_shell():
    port = free_port()
    p = subprocess.Popen([sys.executable, '-m', 'lisette.testing', '--port', str(port)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        base = f'http://127.0.0.1:{port}'
        for _ in range(300):
            try:
                if httpx.get(base+'/health').status_code == 200: break
            except httpx.HTTPError: time.sleep(0.05)
        else: pytest.fail('fake provider did not start')
        msgs = [{'role': 'user', 'content': 'hi'}]
        r = httpx.post(base+'/v1/chat/completions', json={'model': 'm', 'messages': msgs}).json()
        assert r['object'] == 'chat.completion' and r['choices'][0]['message']['content'] == '(scripted local model, not a real LLM) You said: hi'
        r = httpx.post(base+'/v1/messages', json={'model': 'm', 'max_tokens': 10, 'messages': msgs, 'tools': [
            {'name': 'add', 'input_schema': {'type': 'object', 'properties': {'a': {'type': 'integer'}}}}]}).json()
        assert r['stop_reason'] == 'tool_use' and r['content'][-1]['input'] == {'a': 2}
        body = httpx.post(base+'/v1/chat/completions', json={'model': 'm', 'stream': True, 'messages': msgs}).text
        assert body.startswith('data: {') and body.rstrip().endswith('data: [DONE]')
        deltas = [json.loads(l[6:])['choices'][0]['delta'].get('content') or '' for l in body.splitlines()
                  if l.startswith('data: {')]
        assert ''.join(deltas).endswith('You said: hi')
        body = httpx.post(base+'/v1/messages', json={'model': 'm', 'stream': True, 'messages': msgs}).text
        assert body.startswith('event: message_start') and body.rstrip().endswith('data: {"type": "message_stop"}')
    finally:
        p.terminate(); out = p.communicate(timeout=5)[0]
    assert f'{base}/v1' in out and 'curl' in out and 'scripted local model' in out


def test_bad_bodies_get_4xx_not_hangs(fake_provider):
    "A body shorter than its Content-Length, or without `messages`, gets a clear 400 (never a hang)"
    import lisette.testing as lt
    fp, old = fake_provider, lt.body_timeout
    lt.body_timeout = 0.5
    try:
        with socket.create_connection((fp.host, fp.port), timeout=10) as s:
            s.sendall(b'POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{}')
            reply = b''
            while chunk := s.recv(4096): reply += chunk  # headers and body may come in separate segments; the server closes
            reply = reply.decode()
        assert reply.startswith('HTTP/1.1 400') and 'did not arrive in full' in reply
    finally: lt.body_timeout = old
    r = httpx.post(fp.openai_base+'/chat/completions', json={'model': 'm'})
    assert r.status_code == 400 and 'no `messages` list' in r.text
    assert len(fp.requests) == 0

# ---- the fake provider rejects what the real services reject

from lisette.testing import validate_request, conversation, request_view

def post(fp, path, body):
    r = httpx.post(fp.url+path, json=body)
    return r.status_code, r.json()

GM_PATH = '/v1beta/models/gemini-3-flash-preview:generateContent'
FC = lambda name='add', **kw: {'functionCall': {'name': name, 'args': {'a': 1}}, **kw}
FR = lambda name='add': {'functionResponse': {'name': name, 'response': {'content': '2'}}}

def test_unanswered_and_orphan_tool_calls(fake_provider):
    fp = fake_provider.queue(*['ok']*8)
    oa_call = {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'c1', 'type': 'function', 'function': {'name': 'add', 'arguments': '{}'}}]}
    st, e = post(fp, '/v1/chat/completions', {'model': 'm', 'messages': HI + [oa_call, {'role': 'user', 'content': 'and?'}]})
    assert st == 400 and "did not have response messages: c1" in e['error']['message'] and e['error']['type'] == 'invalid_request_error'
    st, e = post(fp, '/v1/chat/completions', {'model': 'm', 'messages': HI + [{'role': 'tool', 'tool_call_id': 'c9', 'content': '1'}]})
    assert st == 400 and "must be a response to a preceeding message with 'tool_calls'" in e['error']['message']
    an_call = {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'toolu_1', 'name': 'add', 'input': {}}]}
    st, e = post(fp, '/v1/messages', {'model': 'm', 'max_tokens': 5, 'messages': HI + [an_call, {'role': 'user', 'content': 'and?'}]})
    assert st == 400 and e['type'] == 'error' and 'ids were found without `tool_result` blocks immediately after: toolu_1' in e['error']['message']
    st, e = post(fp, GM_PATH, {'contents': [{'role': 'user', 'parts': [{'text': 'hi'}]}, {'role': 'model', 'parts': [FC(thoughtSignature='skip_thought_signature_validator'), FC(name='mul')]},
                                             {'role': 'user', 'parts': [FR()]}]})
    assert st == 400 and e['error']['status'] == 'INVALID_ARGUMENT' and 'number of function response parts is equal to the number of function call parts' in e['error']['message']
    st, e = post(fp, '/v1/responses', {'model': 'm', 'input': [{'role': 'user', 'content': 'hi'}, {'type': 'function_call', 'call_id': 'call_1', 'name': 'add', 'arguments': '{}'}]})
    assert st == 400 and e['error']['message'] == 'No tool output found for function call call_1.'
    st, e = post(fp, '/v1/responses', {'model': 'm', 'input': [{'role': 'user', 'content': 'hi'}, {'type': 'function_call_output', 'call_id': 'call_7', 'output': '1'}]})
    assert st == 400 and 'No tool call found for function call output with call_id call_7' in e['error']['message']
    assert fp.pending == 8  # rejected requests consume no reply

def test_tool_call_without_id_gets_the_providers_400(fake_provider):
    "A call or result without its id is refused as the provider refuses it (the validator raised, and the client saw 'Server disconnected')"
    fp = fake_provider.queue('ok')
    call_ = {'role': 'assistant', 'content': None, 'tool_calls': [{'type': 'function', 'function': {'name': 'add', 'arguments': '{}'}}]}
    st, e = post(fp, '/v1/chat/completions', {'model': 'm', 'messages': HI + [call_, {'role': 'tool', 'tool_call_id': 'x', 'content': '1'}]})
    assert st == 400 and e['error']['message'] == "Missing required parameter: 'messages[1].tool_calls[0].id'."
    call_['tool_calls'][0]['id'] = 'c1'
    st, e = post(fp, '/v1/chat/completions', {'model': 'm', 'messages': HI + [call_, {'role': 'tool', 'content': '1'}]})
    assert st == 400 and e['error']['message'] == "Missing required parameter: 'messages[2].tool_call_id'."
    an = {'role': 'assistant', 'content': [{'type': 'tool_use', 'name': 'add', 'input': {}}]}
    st, e = post(fp, '/v1/messages', {'model': 'm', 'max_tokens': 5, 'messages': HI + [an, {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'x', 'content': '1'}]}]})
    assert st == 400 and e['error']['message'] == 'messages.1.content.0.tool_use.id: Field required'
    assert fp.pending == 1

def test_request_parameters_get_the_services_400(fake_provider):
    """Anthropic refuses a temperature that is not a number from 0 to 1 and a top-level field it does not know; OpenAI a
    temperature outside 0..2 and a tool_choice string other than none/auto/required (the fake provider answered 200)"""
    fp = fake_provider.queue('ok', 'ok', 'ok')
    an = {'model': 'm', 'max_tokens': 5, 'messages': HI}
    for extra, msg in [({'temperature': 1.5}, 'temperature: range: 0..1'), ({'temperature': -0.1}, 'temperature: range: 0..1'),
                       ({'temperature': 'hot'}, 'temperature: Input should be a valid number'), ({'foo': 1}, 'foo: Extra inputs are not permitted')]:
        st, e = post(fp, '/v1/messages', an | extra)
        assert (st, e) == (400, {'type': 'error', 'error': {'type': 'invalid_request_error', 'message': msg}}), extra
    assert post(fp, '/v1/messages', an | {'temperature': 1, 'top_k': 5, 'metadata': {'user_id': 'u'}})[0] == 200
    oa = {'model': 'm', 'messages': HI}
    for extra, code, param in [({'temperature': 2.5}, 'decimal_above_max_value', 'temperature'), ({'temperature': -1}, 'decimal_below_min_value', 'temperature'),
                               ({'temperature': 'hot'}, 'invalid_type', 'temperature'), ({'tool_choice': 'add'}, 'invalid_value', 'tool_choice'),
                               ({'tool_choice': 'any'}, 'invalid_value', 'tool_choice')]:
        st, e = post(fp, '/v1/chat/completions', oa | extra)
        assert st==400 and (e['error']['type'], e['error']['code'], e['error']['param'])==('invalid_request_error', code, param), (extra, e)
    assert e['error']['message'] == "Invalid value: 'any'. Supported values are: 'none', 'auto', and 'required'."
    st, e = post(fp, '/v1/responses', {'model': 'm', 'input': 'hi', 'temperature': 3})
    assert st==400 and e['error']['code']=='decimal_above_max_value'
    assert post(fp, '/v1/chat/completions', oa | {'temperature': 2, 'tool_choice': {'type': 'function', 'function': {'name': 'add'}}})[0] == 200
    assert post(fp, '/v1/chat/completions', oa | {'tool_choice': 'required'})[0] == 200
    assert fp.pending == 0

def test_validator_failure_is_answered(fake_provider, monkeypatch):
    "A bug in the validator is answered as the fake provider's, never a dropped connection"
    import lisette.testing as lt
    monkeypatch.setattr(lt, 'validate_request', lambda *a: 1/0)
    st, e = post(fake_provider, '/v1/chat/completions', {'model': 'm', 'messages': HI})
    assert st == 400 and 'validating request 1 raised ZeroDivisionError' in e['error']['message']

def test_empty_text_and_roles(fake_provider):
    fp = fake_provider
    st, e = post(fp, '/v1/messages', {'model': 'm', 'max_tokens': 5, 'messages': [{'role': 'user', 'content': [{'type': 'text', 'text': ''}]}]})
    assert st == 400 and 'text content blocks must be non-empty' in e['error']['message']
    st, e = post(fp, '/v1/messages', {'model': 'm', 'max_tokens': 5, 'messages': [{'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': ''}, {'role': 'user', 'content': 'x'}]})
    assert st == 400 and 'must have non-empty content except for the optional final assistant message' in e['error']['message']
    fp.queue('ok')  # an assistant-first history is answered, as Anthropic answers the seed's `Chat(sonn, hist=fmt2hist(...))`
    st, e = post(fp, '/v1/messages', {'model': 'm', 'max_tokens': 5, 'messages': [{'role': 'assistant', 'content': 'hi'}, {'role': 'user', 'content': 'go on'}]})
    assert st == 200 and e['content'][0]['text'] == 'ok'
    st, e = post(fp, '/v1/messages', {'model': 'm', 'max_tokens': 5, 'messages': [{'role': 'system', 'content': 'hi'}]})
    assert st == 400 and e['error']['type'] == 'invalid_request_error'
    st, e = post(fp, GM_PATH, {'contents': [{'role': 'user', 'parts': [{'text': ''}]}]})
    assert st == 400 and 'empty text parameter' in e['error']['message']
    st, e = post(fp, GM_PATH, {'contents': [{'role': 'assistant', 'parts': [{'text': 'hi'}]}]})
    assert st == 400 and 'valid role: user, model' in e['error']['message']
    st, e = post(fp, GM_PATH, {'contents': [{'role': 'user', 'parts': [{'text': 'hi'}]}, {'role': 'model', 'parts': [{'text': 'a'}]},
                                             {'role': 'model', 'parts': [FC(thoughtSignature='skip_thought_signature_validator')]}, {'role': 'user', 'parts': [FR()]}]})
    assert st == 400 and 'function call turn comes immediately after a user turn or after a function response turn' in e['error']['message']

def test_cache_checkpoint_limit(fake_provider):
    fp = fake_provider.queue('ok')
    blk = lambda t: {'type': 'text', 'text': t, 'cache_control': {'type': 'ephemeral'}}
    msgs = lambda n: [{'role': 'user', 'content': [blk(f'part {i}') for i in range(n)]}]
    st, e = post(fp, '/v1/messages', {'model': 'm', 'max_tokens': 5, 'system': [blk('sys')], 'messages': msgs(4)})
    assert st == 400 and e['error']['message'] == 'A maximum of 4 blocks with cache_control may be provided. Found 5.'
    assert post(fp, '/v1/messages', {'model': 'm', 'max_tokens': 5, 'system': [blk('sys')], 'messages': msgs(3)})[0] == 200

def test_thinking_signatures(fake_provider):
    "Anthropic: a thinking block must come back exactly as issued; with thinking on, the tool-loop turn must keep it"
    fp = fake_provider
    fp.queue(Reply('Adding.', thinking='I add.', signature='sig-1', tool_calls=[('add', {'a': 1, 'b': 2})]))
    r = call(fp, AN, tools=TOOLS, thinking={'type': 'enabled', 'budget_tokens': 1024}, max_tokens=2000)
    msg = r.choices[0].message.model_dump()
    tr = {'role': 'tool', 'tool_call_id': msg['tool_calls'][0]['id'], 'content': '3'}
    kw = dict(tools=TOOLS, thinking={'type': 'enabled', 'budget_tokens': 1024}, max_tokens=2000)
    fp.queue(*['ok']*3)
    assert call(fp, AN, msgs=HI + [msg, tr], **kw).choices[0].message.content == 'ok'
    bad = {**msg, 'thinking_blocks': [{**msg['thinking_blocks'][0], 'thinking': 'I subtract.'}]}
    with pytest.raises(litellm.BadRequestError, match='Invalid `signature` in `thinking` block'): call(fp, AN, msgs=HI + [bad, tr], **kw)
    dropped = {k:v for k,v in msg.items() if k not in ('thinking_blocks', 'reasoning_content')}
    with pytest.raises(litellm.BadRequestError, match='a final `assistant` message must start with a thinking block'): call(fp, AN, msgs=HI + [dropped, tr], **kw)
    # without thinking in the request, earlier turns need not keep their thinking
    assert call(fp, AN, msgs=HI + [dropped, tr], tools=TOOLS).choices[0].message.content == 'ok'

def test_gemini_thought_signatures(fake_provider):
    "Gemini 3: the first function call of each step of the current turn carries its signature, unmodified"
    fp = fake_provider
    user, resp = {'role': 'user', 'parts': [{'text': 'add'}]}, {'role': 'user', 'parts': [FR()]}
    st, e = post(fp, GM_PATH, {'contents': [user, {'role': 'model', 'parts': [FC()]}, resp]})
    assert st == 400 and 'Function call is missing a thought_signature in functionCall parts' in e['error']['message'] and '`default_api:add`, position 1' in e['error']['message']
    st, e = post(fp, GM_PATH, {'contents': [user, {'role': 'model', 'parts': [FC(thoughtSignature='bm90LWlzc3VlZA==')]}, resp]})
    assert st == 400 and e['error']['message'] == 'Corrupted thought signature.'
    # Google's documented dummy signatures pass, as do the server's own; older models and earlier turns are not checked
    fp.queue(*['ok']*4)
    for sig in ('skip_thought_signature_validator', base64.b64encode(b'context_engineering_is_the_way_to_go').decode()):
        assert post(fp, GM_PATH, {'contents': [user, {'role': 'model', 'parts': [FC(thoughtSignature=sig)]}, resp]})[0] == 200
    assert post(fp, '/v1beta/models/gemini-2.5-flash:generateContent', {'contents': [user, {'role': 'model', 'parts': [FC()]}, resp]})[0] == 200
    assert post(fp, GM_PATH, {'contents': [user, {'role': 'model', 'parts': [FC()]}, resp, {'role': 'model', 'parts': [{'text': 'done'}]},
                                            {'role': 'user', 'parts': [{'text': 'thanks'}]}]})[0] == 200
    # through litellm: the signature it received goes back, and the strict server accepts the tool loop
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2}), ('add', {'a': 3, 'b': 4})]), 'done')
    msg = call(fp, GM, tools=TOOLS).choices[0].message.model_dump()
    trs = [{'role': 'tool', 'tool_call_id': t['id'], 'content': str(i)} for i,t in enumerate(msg['tool_calls'])]
    assert call(fp, GM, msgs=HI + [msg] + trs, tools=TOOLS).choices[0].message.content == 'done'
    sent = fp.last['contents'][1]['parts']
    assert [('thoughtSignature' in p) for p in sent] == [True, False]  # only the first of parallel calls is signed

def test_strict_off(fake_provider):
    fp = fake_provider.queue('ok')
    fp.strict = False
    assert post(fp, '/v1/responses', {'model': 'm', 'input': [{'type': 'function_call', 'call_id': 'c', 'name': 'f', 'arguments': '{}'}]})[0] == 200

def test_conversation_and_view_agree_across_protocols(fake_provider):
    "The same Chat-like exchange, read back from each protocol's request, gives the same turns"
    fp = fake_provider
    views = []
    for m in MODELS:
        fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})]), 'done')
        msgs = [{'role': 'system', 'content': 'Be brief.'}] + HI
        msg = call(fp, m, msgs=msgs, tools=TOOLS).choices[0].message.model_dump()
        call(fp, m, msgs=msgs + [msg, {'role': 'tool', 'tool_call_id': msg['tool_calls'][0]['id'], 'content': '3'}], tools=TOOLS)
        v = fp.views[-1]
        views.append((v['system'], v['tools'], [(t['role'] if not t['results'] else 'tool', t['text'], [n for _,n in t['calls']], [r for _,r in t['results']])
                                                for t in v['turns'] if t['role']!='system']))
    assert views == [('Be brief.', ['add'], [('user', 'hi', [], []), ('assistant', '', ['add'], []), ('tool', '', [], ['3'])])]*4

@both
def test_scripted_model_every_protocol(fake_provider, m):
    fake_provider.respond_with(scripted_model)
    msg = call(fake_provider, m, tools=TOOLS).choices[0].message
    assert json.loads(msg.tool_calls[0].function.arguments) == {'a': 2, 'b': 3}
    r = call(fake_provider, m, msgs=HI + [msg.model_dump(), {'role': 'tool', 'tool_call_id': msg.tool_calls[0].id, 'content': '5'}], tools=TOOLS)
    assert r.choices[0].message.content == '(scripted local model, not a real LLM) The tool returned 5.'
    assert call(fake_provider, m).choices[0].message.content == '(scripted local model, not a real LLM) You said: hi'

# ---- simulated Anthropic prompt caching

def test_simulated_prompt_caching_through_chat(fake_provider):
    "Chat's moving checkpoint: turn 2 reads what turn 1 wrote; an hour later (past the 5-minute TTL) nothing is read"
    from lisette import Chat
    fp = fake_provider
    fp.simulate_cache, clock = True, [1000.]
    fp.now = lambda: clock[0]
    fp.queue(*['Noted.']*3)
    chat = Chat(AN, sp='You are a careful assistant. ' * 300, cache=True, api_base=fp.anthropic_base, api_key='k')
    chat('Remember the number 7.'); u1 = chat.last_use
    chat('And 8.'); u2 = chat.last_use
    assert (u1.cached_tokens, u2.cached_tokens) == (0, u1.cache_creation_tokens) and u1.cache_creation_tokens > 1024
    assert u2.cache_creation_tokens > 0  # the new turn's prefix is written too
    clock[0] += 3600
    chat('And 9.')
    assert chat.last_use.cached_tokens == 0 and chat.last_use.cache_creation_tokens > u1.cache_creation_tokens
    fp.queue(Reply('set', usage=dict(input=5, cache_read=3)))
    chat('explicit'); assert chat.last_use.cached_tokens == 3  # a Reply's own cache numbers win

def test_short_prefix_not_cached(fake_provider):
    fp = fake_provider
    fp.simulate_cache = True
    fp.queue('a', 'b')
    msgs = [{'role': 'user', 'content': [{'type': 'text', 'text': 'short', 'cache_control': {'type': 'ephemeral'}}]}]
    for _ in range(2):
        u = call(fp, AN, msgs=msgs).usage
        assert (u.cache_creation_input_tokens, u.cache_read_input_tokens) == (0, 0)  # below the 1024-token minimum

@pytest.mark.parametrize('stream', [False, True])
def test_mistral_tool_call_ids(fake_provider, stream):
    """Mistral's API takes only tool-call ids of 9 letters and digits ("Tool call id was call_… but must be a-z, A-Z, 0-9,
    with a length of 9."): a request to a Mistral model (by its name) with another id is refused, its replies' calls get
    ids of that form; any other model's requests and ids are as before"""
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})]), Reply(tool_calls=[('add', {'a': 1, 'b': 2})]))
    ids = [call(fp, m, stream, tools=TOOLS).choices[0].message.tool_calls[0].id for m in ('mistral/mistral-small-latest', OA)]
    assert len(ids[0])==9 and ids[0].isalnum() and ids[1].startswith('call_') and len(ids[1])==29, ids
    def round_(tid): return HI + [{'role': 'assistant', 'content': None, 'tool_calls': [{'id': tid, 'type': 'function', 'function': {'name': 'add', 'arguments': '{"a": 1, "b": 2}'}}]},
                                  {'role': 'tool', 'tool_call_id': tid, 'content': '3'}]
    fp.queue('ok', 'ok', 'ok')
    with pytest.raises(litellm.BadRequestError, match='Tool call id was call_NZa7xqfefoaMI2YYHowVXVlU but must be a-z, A-Z, 0-9, with a length of 9'):
        call(fp, 'mistral/mistral-small-latest', stream, msgs=round_('call_NZa7xqfefoaMI2YYHowVXVlU'), tools=TOOLS)
    assert call(fp, 'mistral/mistral-small-latest', stream, msgs=round_('D681PevKs'), tools=TOOLS).choices[0].message.content == 'ok'
    assert call(fp, OA, stream, msgs=round_('call_NZa7xqfefoaMI2YYHowVXVlU'), tools=TOOLS).choices[0].message.content == 'ok'


def test_mistral_takes_tool_choice_any(fake_provider):
    "Mistral's API takes tool_choice 'any' (litellm sends it for 'required'): the fake provider's OpenAI rule for tool_choice strings is not Mistral's (helper-50)"
    fp = fake_provider
    fp.queue('ok')
    tool = {'type': 'function', 'function': {'name': 'f', 'parameters': {'type': 'object', 'properties': {}}}}
    litellm.completion('mistral/mistral-small-latest', [{'role': 'user', 'content': 'hi'}], tools=[tool], tool_choice='required', api_base=fp.openai_base+'', api_key='k')
    assert fp.last['tool_choice'] == 'any'

def test_gemini_refuses_an_enum_other_than_strings():
    "Gemini takes an `enum` only on a STRING property, of strings: the fake provider refuses what Gemini refuses"
    from lisette.testing import validate_request
    def body(p): return {'contents': [{'role': 'user', 'parts': [{'text': 'hi'}]}],
                         'tools': [{'function_declarations': [{'name': 'f', 'parameters': {'type': 'object', 'properties': {'n': p}}}]}]}
    assert 'enum only allowed for STRING' in validate_request(body({'type': 'integer', 'enum': ['1', '2']}), 'gemini', model='gemini-2.5-flash')
    assert 'enum only allowed for STRING' in validate_request(body({'type': 'array', 'items': {'type': 'string', 'enum': [1]}}), 'gemini', model='gemini-2.5-flash')
    assert validate_request(body({'type': 'string', 'enum': ['1', '2']}), 'gemini', model='gemini-2.5-flash') is None
