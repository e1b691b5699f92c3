"""litellm routes users point a chat at beyond the four main protocols, each through litellm's real request building
against a local server: Azure OpenAI (the fake provider at Azure's deployment path, serving Azure's bodies), Ollama's
own API (`ollama_chat/`) and its generate route (`ollama/`), vLLM and LM Studio (OpenAI-compatible), and Bedrock's
Converse API. Each: a plain turn, a tool round, streaming where the route has it, usage and cost (or a note that
litellm knows no price), and a move to Claude and Gemini mid-chat"""
import asyncio, json, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import pytest, litellm
import lisette.testing as T
from lisette import Chat, AsyncChat
from lisette.testing import Reply

def add(a:int, b:int) -> int:
    "Add two numbers"
    return a + b

def _run(chat, prompt, stream=False, aio=False, **kw):
    "A turn of `chat` run to its end, sync or async, streamed or not"
    async def arun():
        r = await chat(prompt, stream=stream, **kw)
        return [o async for o in r] if stream else r
    if aio: return asyncio.run(arun())
    r = chat(prompt, stream=stream, **kw)
    return list(r) if stream else r

def _switch_to_claude_and_gemini(chat, fp, aio=False):
    "Move `chat` to Claude, then Gemini (the fake provider), a tool round on each: the strict fake accepts every request"
    for m, base in [('anthropic/claude-sonnet-4-5', fp.anthropic_base), ('gemini/gemini-2.5-flash', fp.gemini_base)]:
        fp.queue(Reply(tool_calls=[('add', {'a': 5, 'b': 6})]), f'On {m}.')
        chat.model, chat.api_base, chat.api_key = m, base, 'k'
        _run(chat, 'Once more', aio=aio)
        assert chat.hist[-1].content == f'On {m}.' and chat.hist[-2]['content'] == '11'

def _roles(chat): return [m['role'] for m in chat.hist]

class LocalServer:
    "A local HTTP server answering each POST with the next queued (content type, body), or a fixed one for its path; it records (path, body)"
    def __init__(self, fixed=None): self.replies, self.requests, self.fixed = [], [], fixed or {}
    def __enter__(self):
        srv = self
        class H(BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get('Content-Length') or 0))
                srv.requests.append((self.path, json.loads(raw or b'{}')))
                ct, data = srv.fixed.get(self.path) or (srv.replies.pop(0) if srv.replies else ('application/json', b'{"error": "no reply queued"}'))
                self.send_response(200 if data[:9]!=b'{"error":' else 500)
                self.send_header('Content-Type', ct); self.send_header('Content-Length', str(len(data))); self.end_headers()
                self.wfile.write(data)
        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f'http://127.0.0.1:{self.httpd.server_port}'
        return self
    def __exit__(self, *a): self.httpd.shutdown(); self.httpd.server_close()
    def paths(self): return [p for p,_ in self.requests]

@pytest.fixture
def local():
    with LocalServer() as s: yield s

# --- Azure OpenAI: the deployment path, Azure's content-filter fields, its stream's preamble

_cf = {k: {'filtered': False, 'severity': 'safe'} for k in ('hate', 'self_harm', 'sexual', 'violence')}
_pf = [{'prompt_index': 0, 'content_filter_results': {**_cf, 'jailbreak': {'filtered': False, 'detected': False}}}]
_az_model = 'gpt-4o-2024-11-20'  # what Azure names the model behind a deployment in its replies

def _az_usage(i, o): return {'completion_tokens': o, 'completion_tokens_details': {'accepted_prediction_tokens': 0, 'audio_tokens': 0, 'reasoning_tokens': 0, 'rejected_prediction_tokens': 0},
                             'prompt_tokens': i, 'prompt_tokens_details': {'audio_tokens': 0, 'cached_tokens': 0}, 'total_tokens': i+o}

def _az_body(msg, finish, i, o):
    "An Azure OpenAI chat completion"
    return Reply(raw=json.dumps({'choices': [{'content_filter_results': _cf, 'finish_reason': finish, 'index': 0, 'logprobs': None,
                                              'message': {'annotations': [], 'refusal': None, 'role': 'assistant', **msg}}],
                                 'created': 1756749680, 'id': 'chatcmpl-CB38CGNFrrplmi6y7Sw64xcY6QqIm', 'model': _az_model, 'object': 'chat.completion',
                                 'prompt_filter_results': _pf, 'system_fingerprint': 'fp_ee1d74bde0', 'usage': _az_usage(i, o)}).encode())

def _az_stream(deltas, finish, i, o):
    "An Azure OpenAI stream: its prompt-filter preamble (no choices, no id or model), the deltas, the finish, then the usage chunk"
    base = dict(created=1772304649, id='chatcmpl-DEJgnNRPyTQCzYVeB8duG7wiB4McG', model=_az_model, object='chat.completion.chunk', system_fingerprint='fp_ee1d74bde0')
    ch = lambda d, f=None, cf=_cf: {'choices': [{'content_filter_results': cf, 'delta': d, 'finish_reason': f, 'index': 0, 'logprobs': None}], 'obfuscation': 'wC83yD3e', 'usage': None, **base}
    evs = [{'choices': [], 'created': 0, 'id': '', 'model': '', 'object': '', 'prompt_filter_results': _pf},
           ch({'content': '', 'refusal': None, 'role': 'assistant'}, cf={}), *map(ch, deltas), ch({}, finish, {}), {'choices': [], 'usage': _az_usage(i, o), **base}]
    return Reply(raw=b''.join(b'data: ' + json.dumps(e).encode() + b'\n\n' for e in evs) + b'data: [DONE]\n\n')

_az_calls = [{'id': 'call_Ab12', 'type': 'function', 'function': {'name': 'add', 'arguments': '{"a": 1, "b": 2}'}},
             {'id': 'call_Cd34', 'type': 'function', 'function': {'name': 'add', 'arguments': '{"a": 3, "b": 4}'}}]
_az_call_deltas = [{'tool_calls': [{'index': 0, 'id': 'call_Ab12', 'type': 'function', 'function': {'name': 'add', 'arguments': ''}}]},
                   {'tool_calls': [{'index': 0, 'function': {'arguments': '{"a": 1, "b": 2}'}}]},
                   {'tool_calls': [{'index': 1, 'id': 'call_Cd34', 'type': 'function', 'function': {'name': 'add', 'arguments': ''}}]},
                   {'tool_calls': [{'index': 1, 'function': {'arguments': '{"a": 3,'}}]}, {'tool_calls': [{'index': 1, 'function': {'arguments': ' "b": 4}'}}]}]

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('dep', ['gpt-4o', 'my-dep'])
def test_azure(fake_provider, monkeypatch, dep, stream, aio):
    """`azure/<deployment>`: Azure's path and api-version, its content-filter fields and stream preamble; two parallel
    calls and their results go back with Azure's ids; the cost is the reply's model's (a deployment named as a model, or
    not: then litellm knows nothing of it, which is said, yet prices the reply by the model Azure names)"""
    fp = fake_provider
    monkeypatch.setitem(T._paths, f'/openai/deployments/{dep}/chat/completions', 'openai')
    if stream: fp.queue(_az_stream([{'content': 'Hi'}, {'content': ' there'}], 'stop', 10, 3), _az_stream(_az_call_deltas, 'tool_calls', 20, 10), _az_stream([{'content': '3 and 7'}], 'stop', 30, 5))
    else: fp.queue(_az_body({'content': 'Hi there'}, 'stop', 10, 3), _az_body({'content': None, 'tool_calls': _az_calls}, 'tool_calls', 20, 10), _az_body({'content': '3 and 7'}, 'stop', 30, 5))
    chat = (AsyncChat if aio else Chat)(f'azure/{dep}', tools=[add], api_base=fp.url, api_key='dummy', callkw=dict(api_version='2024-10-21'))
    _run(chat, 'Hi', stream, aio)
    assert chat.hist[-1].content == 'Hi there' and (chat.use.prompt_tokens, chat.use.completion_tokens) == (10, 3) and chat.use.cost > 0
    unknown = [a.detail for a in chat.adjustments if a.kind=='unknown_model']
    assert unknown == ([] if dep=='gpt-4o' else ['litellm has no information on azure/my-dep: no max_tokens, context window or prefill from it; '
                                                 'its cost is litellm\'s price of the model Azure names in each reply (0 if litellm does not know that one either; litellm.register_model describes a model)'])
    assert chat.use.cost == pytest.approx(sum(litellm.cost_per_token(model=f'azure/{_az_model}', prompt_tokens=10, completion_tokens=3)))  # (as the note says)
    _run(chat, 'Add 1+2 and 3+4', stream, aio)
    assert _roles(chat) == ['user', 'assistant', 'user', 'assistant', 'tool', 'tool', 'assistant'] and chat.hist[-1].content == '3 and 7'
    assert [r.path for r in fp.requests] == [f'/openai/deployments/{dep}/chat/completions']*3
    assert all((r.body.get('stream_options') == {'include_usage': True}) == stream for r in fp.requests)
    sent = fp.last['messages']
    assert [tc['id'] for tc in sent[3]['tool_calls']] == ['call_Ab12', 'call_Cd34'] and [(m['tool_call_id'], m['content']) for m in sent[4:6]] == [('call_Ab12', '3'), ('call_Cd34', '7')]
    assert (chat.use.prompt_tokens, chat.use.completion_tokens) == (60, 18) and not [a for a in chat.adjustments if a.kind not in ('unknown_model', 'max_tokens')]
    _switch_to_claude_and_gemini(chat, fp, aio)

def test_azure_deployment_naming_a_model_unknown_too(fake_provider, monkeypatch):
    "An unknown deployment whose replies name a model litellm does not know either: no cost, as the note says"
    fp = fake_provider
    monkeypatch.setitem(T._paths, '/openai/deployments/my-dep/chat/completions', 'openai')
    monkeypatch.setitem(globals(), '_az_model', 'mystery-model-9')
    fp.queue(_az_body({'content': 'Hi there'}, 'stop', 10, 3))
    chat = Chat('azure/my-dep', api_base=fp.url, api_key='dummy', callkw=dict(api_version='2024-10-21'))
    with pytest.warns(UserWarning, match="0 if litellm does not know that one either"): chat('Hi')
    assert (chat.use.prompt_tokens, chat.use.cost) == (10, 0)

# --- Ollama's own API (`ollama_chat/`): NDJSON, tool calls with object arguments, without ids (or with, as newer Ollama sends)

_ol_show = {'/api/show': ('application/json', json.dumps({'license': 'LLAMA 3.2 COMMUNITY LICENSE AGREEMENT', 'modelfile': '# Modelfile generated by "ollama show"',
    'parameters': 'stop "<|eot_id|>"', 'template': '{{- if .Tools }}When you receive a tool call response ...{{ end }}',
    'details': {'parent_model': '', 'format': 'gguf', 'family': 'llama', 'families': ['llama'], 'parameter_size': '3.2B', 'quantization_level': 'Q4_K_M'},
    'model_info': {'general.architecture': 'llama', 'llama.context_length': 131072}, 'capabilities': ['completion', 'tools']}).encode())}
_ol_end = {'done_reason': 'stop', 'done': True, 'total_duration': 2347998750, 'load_duration': 19605625, 'prompt_eval_count': 155,
           'prompt_eval_duration': 321024542, 'eval_count': 81, 'eval_duration': 2005950875}
_ol_head = {'model': 'llama3.2', 'created_at': '2025-04-11T18:18:52.293545Z'}

def _ol_chat(msgs, stream):
    "Ollama's /api/chat reply with assistant messages `msgs`: one JSON object, or NDJSON lines (a line each, then the done line)"
    if not stream:
        m = {'role': 'assistant', 'content': ''.join(m['content'] for m in msgs), **({'tool_calls': tcs} if (tcs := [t for m in msgs for t in m.get('tool_calls', [])]) else {})}
        return 'application/json', json.dumps({**_ol_head, 'message': m, **_ol_end}).encode()
    lines = [{**_ol_head, 'message': m, 'done': False} for m in msgs] + [{**_ol_head, 'message': {'role': 'assistant', 'content': ''}, **_ol_end}]
    return 'application/x-ndjson', b''.join(json.dumps(o).encode() + b'\n' for o in lines)

def _ol_call(i, a, b, ids):
    f = {'name': 'add', 'arguments': {'a': a, 'b': b}}
    return {'id': f'call_ol{i}', 'function': {'index': i, **f}} if ids else {'function': f}

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('ids', [False, True])
@pytest.mark.parametrize('stream', [False, True])
def test_ollama_chat(fake_provider, local, stream, ids, aio):
    """`ollama_chat/`: a plain turn and a round of two calls (streamed: each in a line of its own), usage from Ollama's
    counts, no price (a local model costs nothing), and every call without an id given one, said"""
    local.fixed = _ol_show
    local.replies += [_ol_chat([{'role': 'assistant', 'content': 'Hi'}, {'role': 'assistant', 'content': ' there'}], stream),
                      _ol_chat([{'role': 'assistant', 'content': '', 'tool_calls': [_ol_call(0, 1, 2, ids)]}, {'role': 'assistant', 'content': '', 'tool_calls': [_ol_call(1, 3, 4, ids)]}], stream),
                      _ol_chat([{'role': 'assistant', 'content': '3 and 7'}], stream)]
    chat = (AsyncChat if aio else Chat)('ollama_chat/llama3.2', tools=[add], api_base=local.url)
    _run(chat, 'Hi', stream, aio)
    assert chat.hist[-1].content == 'Hi there' and (chat.use.prompt_tokens, chat.use.completion_tokens, chat.use.cost) == (155, 81, 0) and not chat.adjustments
    _run(chat, 'Add 1+2 and 3+4', stream, aio)
    assert _roles(chat) == ['user', 'assistant', 'user', 'assistant', 'tool', 'tool', 'assistant'] and chat.hist[-1].content == '3 and 7'
    tids = [tc.id for tc in chat.hist[3].tool_calls]
    assert len(set(tids))==2 and (tids == ['call_ol0', 'call_ol1'] if ids else all(t.startswith('call_') for t in tids))
    assert [a.detail for a in chat.adjustments] == ([] if ids else [f"the reply's add call came without an id: given the id {t!r}" for t in tids])
    sent = [b for p,b in local.requests if p=='/api/chat'][-1]['messages']
    # (litellm 1.106 sends Ollama its calls without ids; 1.110 with them)
    assert [tc.get('id', t) for tc,t in zip(sent[3]['tool_calls'], tids)] == tids and [tc['function']['arguments'] for tc in sent[3]['tool_calls']] == [{'a': 1, 'b': 2}, {'a': 3, 'b': 4}]
    assert [(m['tool_call_id'], m['content']) for m in sent[4:6]] == list(zip(tids, ['3', '7']))
    assert chat.use.total_tokens == 3*236
    _switch_to_claude_and_gemini(chat, fake_provider, aio)

# --- litellm's `ollama/` route (/api/generate): a prompt, the tool call read from the model's JSON

def _ol_gen(texts, stream):
    "Ollama's /api/generate reply of `texts`"
    end = {**_ol_end, 'context': [128006, 882, 128007], 'prompt_eval_count': 26, 'eval_count': 12}
    if not stream: return 'application/json', json.dumps({**_ol_head, 'response': ''.join(texts), **end}).encode()
    lines = [{**_ol_head, 'response': t, 'done': False} for t in texts] + [{**_ol_head, 'response': '', **end}]
    return 'application/x-ndjson', b''.join(json.dumps(o).encode() + b'\n' for o in lines)

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('stream', [False, True])
def test_ollama_generate(fake_provider, local, stream, aio):
    """`ollama/`: litellm writes the history as one prompt and reads a call from the model's JSON, one a reply, giving
    it an id of 41 characters that Ollama never sees; it goes as it is, with no note of a model switch (there was none:
    it was shortened for OpenAI's 40, and each tool round reported a switch)"""
    local.fixed = _ol_show
    local.replies += [_ol_gen(['Hi', ' there'], stream), _ol_gen(['{"name": "add", ', '"arguments": {"a": 1, "b": 2}}'], stream), _ol_gen(['It is 3.'], stream)]
    chat = (AsyncChat if aio else Chat)('ollama/llama3.2', tools=[add], api_base=local.url)
    _run(chat, 'Hi', stream, aio)
    assert chat.hist[-1].content == 'Hi there' and (chat.use.prompt_tokens, chat.use.completion_tokens, chat.use.cost) == (26, 12, 0)
    _run(chat, 'Add 1+2', stream, aio)
    assert _roles(chat) == ['user', 'assistant', 'user', 'assistant', 'tool', 'assistant'] and chat.hist[-1].content == 'It is 3.' and chat.hist[-2]['content'] == '3'
    assert not chat.adjustments
    gen = [b for p,b in local.requests if p=='/api/generate']
    assert len(gen)==3 and gen[-1]['format']=='json' and '{"name": "add", "arguments": {"a": 1, "b": 2}}' in gen[-1]['prompt']
    _switch_to_claude_and_gemini(chat, fake_provider, aio)

# --- OpenAI-compatible local servers: vLLM and LM Studio

_vllm_ids = ['chatcmpl-tool-0e9c6b4ef47d4f0c8d1a7f3e5b2a9c61', 'chatcmpl-tool-5d2f1a7b9c3e4d6f8a0b1c2d3e4f5a6b']  # vLLM's own form: 46 characters
_lms_ids = ['365174485', '711292341']  # LM Studio's

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('model,ids', [('hosted_vllm/Qwen/Qwen3-8B', _vllm_ids), ('lm_studio/qwen2.5-7b-instruct', _lms_ids)])
def test_openai_compatible_local(fake_provider, model, ids, stream, aio):
    """vLLM and LM Studio at `api_base` + /v1: a plain turn and a round of two calls, whose ids go back as the server
    made them (vLLM's are longer than OpenAI's 40 characters); litellm knows neither model, which is said once a turn,
    warned once a chat, and no cost is made up; then the chat moves to Claude and Gemini"""
    fp = fake_provider
    fp.queue(Reply('Hi there', usage=dict(input=10, output=3)), Reply(tool_calls=[dict(name='add', arguments={'a': 1, 'b': 2}, id=ids[0]), dict(name='add', arguments={'a': 3, 'b': 4}, id=ids[1])]),
             Reply('3 and 7'))
    chat = (AsyncChat if aio else Chat)(model, tools=[add], api_base=fp.openai_base, api_key='none')
    note = f"litellm has no information on {model}: no max_tokens, context window or prefill from it, and a cost only if the reply reports one (litellm.register_model describes a model)"
    with pytest.warns(UserWarning, match='unknown_model') as w: _run(chat, 'Hi', stream, aio)
    assert chat.hist[-1].content == 'Hi there' and (chat.use.prompt_tokens, chat.use.completion_tokens, chat.use.cost) == (10, 3, 0)
    assert [a.detail for a in chat.adjustments] == [note]
    _run(chat, 'Add 1+2 and 3+4', stream, aio)
    assert [a.detail for a in chat.adjustments] == [note]  # (no switch: the server gets its own ids back)
    assert sum('unknown_model' in str(x.message) for x in w) == 1
    assert _roles(chat) == ['user', 'assistant', 'user', 'assistant', 'tool', 'tool', 'assistant'] and chat.hist[-1].content == '3 and 7'
    sent = fp.last['messages']
    assert [tc['id'] for tc in sent[3]['tool_calls']] == ids and [m['tool_call_id'] for m in sent[4:6]] == ids
    assert all((r.body.get('stream_options') == {'include_usage': True}) == stream for r in fp.requests)
    _switch_to_claude_and_gemini(chat, fp, aio)

def _lms_stream(deltas, finish):
    "An LM Studio stream: no usage chunk (it sends none)"
    base = {'id': 'chatcmpl-4f2w3jcd1qz9lq8ewq7h4r', 'object': 'chat.completion.chunk', 'created': 1744446075, 'model': 'qwen2.5-7b-instruct', 'system_fingerprint': 'qwen2.5-7b-instruct'}
    evs = [{**base, 'choices': [{'index': 0, 'delta': d, 'logprobs': None, 'finish_reason': None}]} for d in deltas] + [{**base, 'choices': [{'index': 0, 'delta': {}, 'logprobs': None, 'finish_reason': finish}]}]
    return Reply(raw=b''.join(b'data: ' + json.dumps(e).encode() + b'\n\n' for e in evs) + b'data: [DONE]\n\n')

def test_lm_studio_stream_without_usage(fake_provider):
    "A stream without token counts (LM Studio's): the two calls run, and each reply's usage is said to be litellm's estimate"
    fp = fake_provider
    calls = [{'role': 'assistant', 'content': None, 'tool_calls': [{'index': 0, 'id': _lms_ids[0], 'type': 'function', 'function': {'name': 'add', 'arguments': ''}}]},
             {'tool_calls': [{'index': 0, 'type': 'function', 'function': {'arguments': '{"a":1,"b":2}'}}]},
             {'tool_calls': [{'index': 1, 'id': _lms_ids[1], 'type': 'function', 'function': {'name': 'add', 'arguments': ''}}]},
             {'tool_calls': [{'index': 1, 'type': 'function', 'function': {'arguments': '{"a":3,"b":4}'}}]}]
    fp.queue(_lms_stream(calls, 'tool_calls'), _lms_stream([{'role': 'assistant', 'content': '3 and 7'}], 'stop'))
    chat = Chat('lm_studio/qwen2.5-7b-instruct', tools=[add], api_base=fp.openai_base)
    with pytest.warns(UserWarning): _run(chat, 'Add 1+2 and 3+4', stream=True)
    assert _roles(chat) == ['user', 'assistant', 'tool', 'tool', 'assistant'] and [m['tool_call_id'] for m in fp.last['messages'][2:4]] == _lms_ids
    est = [a.detail for a in chat.adjustments if a.kind=='usage']
    assert len(est)==2 and all(d.startswith("lm_studio/qwen2.5-7b-instruct streamed no token counts: this reply's usage (") and d.endswith("and cost are litellm's estimate") for d in est)
    assert chat.use.total_tokens > 0 and chat.use.cost == 0

# --- Bedrock's Converse API, with dummy AWS credentials, at a local endpoint

def _converse(content, stop, i, o):
    "A Bedrock Converse reply"
    return 'application/json', json.dumps({'output': {'message': {'role': 'assistant', 'content': content}}, 'stopReason': stop,
                                           'usage': {'inputTokens': i, 'outputTokens': o, 'totalTokens': i+o}, 'metrics': {'latencyMs': 1218}}).encode()

@pytest.mark.parametrize('aio', [False, True])
def test_bedrock_converse(fake_provider, local, monkeypatch, aio):
    """`bedrock/converse/` Claude at a local endpoint (`api_base`), signed with dummy credentials: a plain turn, a round
    of two `toolUse` blocks whose `toolResult`s go back in one user message with their ids, the cost of Bedrock's price"""
    for k,v in dict(AWS_ACCESS_KEY_ID='AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY='wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', AWS_REGION_NAME='us-east-1').items(): monkeypatch.setenv(k, v)
    ids = ['tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', 'tooluse_Qh3Rv0nS2d6GwZzCJ3o1sA']
    local.replies += [_converse([{'text': 'Hi there'}], 'end_turn', 10, 3),
                      _converse([{'text': 'Adding.'}, *({'toolUse': {'toolUseId': t, 'name': 'add', 'input': {'a': a, 'b': b}}} for t,(a,b) in zip(ids, [(1, 2), (3, 4)]))], 'tool_use', 20, 10),
                      _converse([{'text': '3 and 7'}], 'end_turn', 30, 5)]
    model = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
    chat = (AsyncChat if aio else Chat)(f'bedrock/converse/{model}', tools=[add], api_base=local.url)
    _run(chat, 'Hi', aio=aio)
    assert chat.hist[-1].content == 'Hi there' and chat.use.cost > 0
    _run(chat, 'Add 1+2 and 3+4', aio=aio)
    assert _roles(chat) == ['user', 'assistant', 'user', 'assistant', 'tool', 'tool', 'assistant'] and chat.hist[-1].content == '3 and 7'
    assert local.paths() == [f"/model/{model.replace(':', '%3A')}/converse"]*3
    last = local.requests[-1][1]['messages']
    assert [b['toolUse']['toolUseId'] for b in last[3]['content'] if 'toolUse' in b] == ids
    assert last[4] == {'role': 'user', 'content': [{'toolResult': {'content': [{'text': r}], 'toolUseId': t}} for t,r in zip(ids, ['3', '7'])]}
    assert (chat.use.prompt_tokens, chat.use.completion_tokens) == (60, 18) and not [a for a in chat.adjustments if a.kind!='max_tokens']
    _switch_to_claude_and_gemini(chat, fake_provider, aio)
