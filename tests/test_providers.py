"Provider compatibility (nbs/04_providers.ipynb): one reproducer per item of the table at the top of the notebook."
import asyncio, base64, copy, json, os, subprocess, sys, time, warnings
import pytest, litellm
from litellm import stream_chunk_builder, completion_cost, ModelResponse
from litellm.types.utils import Usage, ServerToolUse
from lisette import *
from lisette.providers import adapt_request, codex_auth, CodexAuthError, _use_codex_auth, _ds_fills_itself, _litellm_version
from lisette.testing import Reply
from lisette.messages import _get

user = [{'role': 'user', 'content': 'Hi'}]
def an(fp): return dict(api_base=fp.anthropic_base, api_key='fake')
def oa(fp): return dict(api_base=fp.openai_base, api_key='fake')
search = [dict(query='otters', url='https://example.com/otters', title='Otters', cited_text='Otters swim.')]

# --- unknown models, OpenAI-compatible servers

@pytest.mark.parametrize('think,eff', [('h', 'xhigh'), ('x', 'max')])
def test_opus47_think_efforts(fake_provider, think, eff):
    "think='x' on Opus 4.7 is its `max` effort, as the original sends it (it went as 'x', and litellm refused the request)"
    fp = fake_provider
    fp.queue('ok')
    Chat('anthropic/' + opus, **an(fp))('Hi', think=think)
    assert fp.last['output_config'] == {'effort': eff} and fp.last['thinking']['type'] == 'adaptive'

@pytest.mark.parametrize('stream', [False, True])
def test_unknown_model_chat(fake_provider, stream):
    fp = fake_provider
    fp.queue(Reply('Hello from a local model', usage=dict(input=7, output=3)))
    c = Chat('openai/my-local-model-xyz', api_base=fp.openai_base, api_key='local-key')
    r = c('Hi', stream=stream)
    if stream: r = list(r)[-1]
    assert contents(r).content == 'Hello from a local model'
    assert fp.last['model'] == 'my-local-model-xyz' and fp.requests[-1].headers['authorization'] == '***'
    assert (c.use.prompt_tokens, c.use.completion_tokens, c.use.cost) == (7, 3, 0)

# --- what importing lisette changes in litellm

def test_import_changes_only_listed():
    code = '''
import os, json, copy; os.environ['LITELLM_LOCAL_MODEL_COST_MAP']='True'
import litellm
from litellm.litellm_core_utils.core_helpers import _FINISH_REASON_MAP as fr
from litellm.llms.chatgpt.authenticator import Authenticator
before, fr0, auth0 = copy.deepcopy(litellm.model_cost), dict(fr), (Authenticator.get_access_token, Authenticator.get_account_id)
import lisette
from lisette.providers import registered_models
print(json.dumps(dict(added=sorted(set(litellm.model_cost)-set(before)), removed=sorted(set(before)-set(litellm.model_cost)),
    changed=sorted(k for k in before if k in litellm.model_cost and litellm.model_cost[k]!=before[k]),
    fr={k:v for k,v in fr.items() if fr0.get(k)!=v}, auth_same=auth0==(Authenticator.get_access_token, Authenticator.get_account_id),
    registered=sorted(registered_models))))
'''
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
    d = json.loads(out.strip().splitlines()[-1])
    # qwen3p6p, and the GPT-5.4 routes litellm lacks (copies of the models they route to, as the original lisette registers)
    assert d['registered'] == [qwen3p6p] and set(d['added']) - {qwen3p6p} <= {gpt54, gpt54m, codex54m}
    assert d['removed'] == [] and d['changed'] == []
    assert d['fr'] == {}
    assert d['auth_same'] is True

def test_registered_qwen():
    i = model_info(qwen3p6p)
    assert i['supports_vision'] and i['supports_reasoning'] and i['max_input_tokens'] == 1_000_000
    assert 'reasoning_effort' in litellm.get_supported_openai_params(qwen3p6p)

# --- GPT-5.4 family and web search

def test_gpt54_web_search(fake_provider):
    fp = fake_provider
    m = 'openai/' + gpt54
    fp.respond_with(lambda b,p: Reply('Otters are mammals.'))
    if 'web_search_options' not in supported_params(m):  # the problem, while litellm has it
        with pytest.raises(litellm.UnsupportedParamsError): litellm.completion(m, user, web_search_options={}, **oa(fp))
    assert has_search(gpt54) and has_search(m) and has_search(gpt54m) and has_search(codex55)
    c = Chat(m, search='l', **oa(fp))
    assert 'Otters' in contents(c('Search otters')).content
    assert fp.last['web_search_options'] == {'search_context_size': 'low'}
    Chat('openai/' + gpt54m, search='h', **oa(fp))('Search otters')
    assert fp.last['web_search_options'] == {'search_context_size': 'high'}

def test_adapt_request_leaves_others_alone():
    kw = dict(model='openai/gpt-4o-mini', messages=user, web_search_options={}, tools=[{}])
    assert adapt_request(kw) is kw
    kw = dict(model=sonn46, messages=user + [{'role': 'assistant', 'content': 'x'}])
    assert adapt_request(kw) is kw

# --- Anthropic

def test_opus47_temperature(fake_provider):
    fp = fake_provider
    fp.respond_with(lambda b,p: Reply('Hi'))
    with pytest.raises(litellm.UnsupportedParamsError): litellm.completion('anthropic/' + opus, user, temperature=0, **an(fp))  # the problem
    c = Chat('anthropic/' + opus, **an(fp))
    assert contents(c('Hi')).content == 'Hi' and 'temperature' not in fp.last
    Chat('anthropic/' + sonn46, **an(fp))('Hi')
    assert 'temperature' not in fp.last  # temp=None by default: nothing sent
    Chat('anthropic/' + sonn46, temp=0, **an(fp))('Hi')
    assert fp.last['temperature'] == 0

@pytest.mark.parametrize('stream', [False, True])
def test_anthropic_refusal(fake_provider, stream):
    fp = fake_provider
    fp.queue(Reply('I can\'t help with that.', stop='refusal'))
    c = Chat('anthropic/' + opus, **an(fp))
    r = c('Something harmful', stream=stream)
    if stream: r = list(r)[-1]
    assert stop_reason(r) == 'content_filter'
    assert 'content filter' in contents(r).content

_an_refusal = {"model": "claude-fable-5", "id": "msg_01RefusalExampleAbcdefghijk", "type": "message", "role": "assistant", "content": [],
               "stop_reason": "refusal", "stop_details": {"type": "refusal", "category": "cyber", "recommended_model": "claude-fable-5",
               "explanation": "This request triggered restrictions on violative cyber content and was blocked under Anthropic's Usage Policy."},
               "stop_sequence": None, "usage": {"input_tokens": 18, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 5}}  # (vercel/ai's recorded refusal)

def test_anthropic_refusal_explained_no_switch_note(fake_provider):
    "A refusal with Anthropic's explanation, then a next turn on the same model: no 'switch' note (its words are in the text already; 1.110 copies them to `refusal` too)"
    fp = fake_provider
    fp.queue(Reply(raw=json.dumps(_an_refusal).encode()), 'Sure.')
    c = Chat('anthropic/' + sonn45, **an(fp))
    c('do bad thing'); c('ok, something else then')
    assert 'violative cyber content' in json.dumps(fp.last['messages'][1]) and not [a for a in c.adjustments if a.kind=='switch']

def _an_stream_of(msg):
    "Anthropic's stream events for message `msg` with text content (its stop reason and details on `message_delta`)"
    evs = [{'type': 'message_start', 'message': {**msg, 'content': [], 'stop_reason': None, 'stop_details': None}}]
    for i,b in enumerate(msg['content']):
        evs += [{'type': 'content_block_start', 'index': i, 'content_block': {'type': 'text', 'text': ''}},
                {'type': 'content_block_delta', 'index': i, 'delta': {'type': 'text_delta', 'text': b['text']}}, {'type': 'content_block_stop', 'index': i}]
    evs += [{'type': 'message_delta', 'delta': {'stop_reason': msg['stop_reason'], 'stop_sequence': None, **({'stop_details': msg['stop_details']} if msg.get('stop_details') else {})},
             'usage': {'output_tokens': 5}}, {'type': 'message_stop'}]
    return Reply(raw=b''.join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in evs), headers={'content-type': 'text/event-stream'})

@pytest.mark.parametrize('stream', [False, True])
def test_anthropic_stops_litellm_106_lost(fake_provider, stream):
    """Two stops litellm 1.106 lost: `model_context_window_exceeded` was a 'stop' (a cut-off answer looked complete, no
    warning) and a refusal's explanation was dropped (the reply said only that a filter applied). Both as on 1.110 now"""
    fp = fake_provider
    cut = {**_an_refusal, 'content': [{'type': 'text', 'text': 'Every morning at exactly 7:03, Unit 7'}], 'stop_reason': 'model_context_window_exceeded', 'stop_details': None}
    rep = (lambda m: _an_stream_of(m)) if stream else (lambda m: Reply(raw=json.dumps(m).encode()))
    fp.queue(rep(cut), rep(_an_refusal))
    c = Chat('anthropic/' + sonn45, **an(fp))
    last = lambda r: list(r)[-1] if stream else r
    r = last(c('Write a story', stream=stream))
    assert stop_reason(r) == 'length' and 'cut off' in contents(r).content
    r = last(c('do bad thing', stream=stream))
    assert stop_reason(r) == 'content_filter' and 'violative cyber content' in contents(r).content

def test_anthropic_effort(fake_provider):
    fp = fake_provider
    fp.respond_with(lambda b,p: Reply('12231', thinking='27*453'))
    for e in ['low', 'xhigh', 'max']:
        Chat('anthropic/' + opus, **an(fp))('27*453?', think=e)
        assert fp.last['thinking']['type'] == 'adaptive' and fp.last['output_config'] == {'effort': e}
    Chat('anthropic/' + sonn46, **an(fp))('27*453?', think='h')
    assert fp.last['thinking']['type'] == 'adaptive' and fp.last['output_config'] == {'effort': 'high'}
    with pytest.raises(litellm.BadRequestError, match='xhigh'): Chat('anthropic/' + sonn46, **an(fp))('x', think='xhigh')
    Chat('anthropic/' + sonn45, **an(fp))('27*453?', think='l')
    assert fp.last['thinking'] == {'type': 'enabled', 'budget_tokens': 1024}
    litellm.completion('anthropic/' + opus, user, thinking={'type': 'adaptive', 'display': 'summarized'}, output_config={'effort': 'low'}, **an(fp))
    assert fp.last['output_config'] == {'effort': 'low'} and fp.last['thinking'] == {'type': 'adaptive', 'display': 'summarized'}

def pause_reply(): return Reply('Let me search.', web_search=search, stop='pause_turn')

@pytest.mark.parametrize('stream', [False, True])
def test_pause_turn_reproducer(fake_provider, stream):
    """litellm up to 1.106 reports a paused turn as finished and keeps no raw stop reason (lisette's _keep_anthropic_pause
    marks it); from 1.110 it says 'length' and keeps `stop_reason: pause_turn` itself (when this fails, litellm changed: revisit)"""
    from lisette.providers import _litellm_keeps_pause
    fp = fake_provider
    fp.queue(pause_reply())
    r = litellm.completion('anthropic/' + sonn45, user, web_search_options={}, stream=stream, **an(fp))
    if stream: r = stream_chunk_builder(list(r))
    if _litellm_keeps_pause():
        assert (r.choices[0].finish_reason, r.choices[0].message.provider_specific_fields['stop_reason']) == ('length', 'pause_turn')
    else: assert r.choices[0].finish_reason == 'stop' and not (r._hidden_params or {}).get('original_response')

@pytest.mark.parametrize('stream', [False, True])
def test_pause_turn_chat_continues(fake_provider, stream):
    fp = fake_provider
    fp.queue(pause_reply(), Reply('Otters swim.', web_search=search))
    c = Chat('anthropic/' + sonn45, search='l', **an(fp))
    r = c('Search otters', stream=stream)
    if stream: list(r)
    assert len(fp.requests) == 2 and fp.last['messages'][-1]['role'] == 'assistant'
    assert [m['role'] if isinstance(m, dict) else m.role for m in c.hist] == ['user', 'assistant', 'assistant']
    assert c.hist[-1].content.endswith('Otters swim.')  # streamed: citation footnotes first
    assert 'cut off' not in str(fp.last['messages']) + str(c.hist)  # (litellm 1.110 says 'length' for a pause: no truncation warning)

def _pending_search_pause():
    "A paused reply whose search the provider has not run yet: a `srvtoolu_` call without its result (the contract's mk_pause_web_search)"
    from litellm.types.utils import Choices
    tc = mk_tc("web_search", query="Solveit Answer.AI", tcid=random_tool_id().replace('toolu_', 'srvtoolu_'))
    return litellm.ModelResponse(choices=[Choices.model_construct(finish_reason="pause_turn", index=0, message=mk_tc_req("Let me search:", [tc]))])

@pytest.mark.parametrize('aio', [False, True])
def test_pause_with_pending_search_is_continued_not_run(fake_provider, aio):
    "A pause before the provider ran its search: the call is the provider's, never run here as a client tool (no made-up result, no tool round used)"
    fp, calls = fake_provider, []
    def sync_cf(**kw):
        calls.append(kw['messages'])
        return _pending_search_pause() if len(calls)<3 else litellm.completion(**kw)
    async def async_cf(**kw):
        calls.append(kw['messages'])
        return _pending_search_pause() if len(calls)<3 else await litellm.acompletion(**kw)
    fp.queue("Solveit is a course.", "You asked about Solveit.")
    c = (AsyncChat if aio else Chat)('anthropic/' + sonn45, search='l', completefunc=async_cf if aio else sync_cf, **an(fp))
    run = (lambda m: asyncio.run(c(m))) if aio else c
    assert contents(run("Search Solveit")).content == "Solveit is a course."
    assert len(calls) == 3 and len(c.hist) == 4 and not any(_get(m, 'role')=='tool' for m in c.hist)
    assert [a.kind for a in c.adjustments if not a.quiet] == ['usage']  # no stall, no final prompt (the made-up pauses have no token counts)
    assert [m['role'] for m in fp.last['messages']] == ['user', 'assistant']  # (litellm merges the two paused replies)
    blocks = [b['type'] for b in fp.last['messages'][1]['content']]
    assert 'tool_use' not in blocks and 'tool_result' not in str(fp.last)
    assert contents(run("What did I ask?")).content == "You asked about Solveit."  # the history goes on being valid

@pytest.mark.parametrize('stream', [False, True])
def test_thinking_with_search_roundtrip(fake_provider, stream):
    "litellm#23047: thinking blocks must survive next to server tool blocks in the next request"
    fp = fake_provider
    fp.queue(Reply('Found: otters swim.', thinking='I should search.', web_search=search), Reply('ok'))
    c = Chat('anthropic/' + sonn45, search='l', **an(fp))
    r = c('Search otters', think='l', stream=stream)
    if stream: list(r)
    c('And now?', think='l')
    a = fp.last['messages'][1]
    assert [b['type'] for b in a['content']] == ['thinking', 'server_tool_use', 'web_search_tool_result', 'text']
    assert a['content'][0]['signature'] == 'fake-signature-1'  # (the first reply's own)

def test_search_cost_dict():
    "Web-search cost when usage carries server_tool_use as a plain dict"
    def cost(stu):
        u = Usage(prompt_tokens=1000, completion_tokens=100, total_tokens=1100)
        u.server_tool_use = stu
        return completion_cost(completion_response=ModelResponse(model=sonn45, usage=u), model='anthropic/' + sonn45)
    i = model_info(sonn45)
    expect = 1000*i['input_cost_per_token'] + 100*i['output_cost_per_token'] + 2*i['search_context_cost_per_query']['search_context_size_low']
    assert cost({'web_search_requests': 2}) == pytest.approx(expect) == cost(ServerToolUse(web_search_requests=2))

# --- DeepSeek

def test_deepseek_reasoning_content(fake_provider):
    fp = fake_provider
    fp.respond_with(lambda b,p: Reply('8+9 is 17.'))
    tc = {'id': 'call_1', 'type': 'function', 'function': {'name': 'add', 'arguments': '{"a":5,"b":7}'}}
    hist = [{'role': 'user', 'content': "What's 5+7?"}, {'role': 'assistant', 'content': "I'll add.", 'tool_calls': [tc]},
            {'role': 'tool', 'tool_call_id': 'call_1', 'name': 'add', 'content': '12'}, {'role': 'assistant', 'content': '5+7 is 12.'}]
    # Reproducer: DeepSeek V4 thinks by default, but without an explicit thinking param litellm sends no reasoning_content
    litellm.completion(dsf, hist + [{'role': 'user', 'content': 'And 8+9?'}], **oa(fp))
    sent = [m.get('reasoning_content') for m in fp.last['messages'] if m['role']=='assistant']
    if not _ds_fills_itself(): assert sent == [None, None]
    c = Chat(dsf, hist=hist, **oa(fp))
    assert contents(c('And 8+9?')).content == '8+9 is 17.'
    assert [m.get('reasoning_content') for m in fp.last['messages'] if m['role']=='assistant'] == ['', '']  # as the original sends
    assert all('reasoning_content' not in m for m in hist)
    c('And 1+1?', think='l')
    assert all(m.get('reasoning_content') for m in fp.last['messages'] if m['role']=='assistant')
    c('Once more', think='none')  # thinking off: messages go as they are
    assert fp.last['thinking'] == {'type': 'disabled'}

# --- Fireworks, Kimi

def test_fireworks_cached_cost(fake_provider):
    fp = fake_provider
    fp.queue(Reply('Hi there!', usage=dict(input=1000, output=100, cache_read=900)), Reply('Hi!', usage=dict(input=1000, output=100)))
    i = model_info(kimi)
    c = Chat(kimi, **oa(fp))
    c('Hi')
    assert c.last_use.cached_tokens == 900
    assert c.last_use.cost == pytest.approx(100*i['input_cost_per_token'] + 900*i['cache_read_input_token_cost'] + 100*i['output_cost_per_token'])
    c('Hi')
    assert c.last_use.cost == pytest.approx(1000*i['input_cost_per_token'] + 100*i['output_cost_per_token'])

def test_kimi_caps(fake_provider):
    fp = fake_provider
    i = model_info(kimi)
    assert i['supports_vision'] and i['supports_reasoning'] and i['supports_function_calling']
    fp.queue(Reply('Hi', thinking='The user greets.'))
    Chat(kimi, **oa(fp))('Hi', think='l')
    assert fp.last['reasoning_effort'] == 'low'

# --- Gemini (litellm's transformation functions: the fake provider has no Gemini endpoint)

def gemini_body(kw):
    "The Gemini generateContent body litellm builds for the kwargs `kw`"
    from litellm.llms.gemini.chat.transformation import GoogleAIStudioGeminiConfig
    from litellm.llms.vertex_ai.gemini.transformation import _transform_request_body
    m = kw['model'].split('/')[-1]
    nd = {k: kw[k] for k in ('tools', 'web_search_options', 'include_server_side_tool_invocations') if k in kw}
    op = GoogleAIStudioGeminiConfig().map_openai_params(nd, {}, m, False)
    if kw.get('include_server_side_tool_invocations'): op['include_server_side_tool_invocations'] = True
    return _transform_request_body(kw['messages'], m, op, 'gemini', {}, None)

def test_gemini_search_with_tools():
    def add(a:int, b:int=0)->int:
        "Add"
        return a+b
    t = lite_mk_func(add)
    kw = dict(model='gemini/gemini-3-flash-preview', messages=user, tools=[t], web_search_options={'search_context_size': 'low'})
    has_search_tool = lambda body: any('googleSearch' in o for o in body['tools'])
    from lisette.providers import _gemini_drops_search
    if _gemini_drops_search(): assert not has_search_tool(gemini_body(kw))  # the problem
    body = gemini_body(adapt_request(kw))
    assert has_search_tool(body) and any('function_declarations' in o for o in body['tools'])
    assert body['toolConfig']['includeServerSideToolInvocations'] is True
    kw2 = dict(model='gemini/gemini-2.5-flash', messages=user, tools=[t], web_search_options={})
    assert adapt_request(kw2)['include_server_side_tool_invocations'] is True  # every Gemini search request, as the original sends it
    kw3 = dict(model='gemini/gemini-2.5-flash', messages=user, tools=[t])
    assert adapt_request(kw3) is kw3  # no search: untouched

def test_gemini_thought_signature_roundtrip():
    "A thought signature litellm folded into a tool-call id goes back to Gemini as the part's thoughtSignature"
    from litellm.litellm_core_utils.prompt_templates.factory import encode_tool_call_id_with_signature
    tcid = encode_tool_call_id_with_signature('call_1', 'c2lnbmF0dXJl')
    assert tcid != 'call_1'
    msgs = [user[0], {'role': 'assistant', 'content': None, 'tool_calls': [{'id': tcid, 'type': 'function', 'function': {'name': 'add', 'arguments': '{"a":1}'}}]},
            {'role': 'tool', 'tool_call_id': tcid, 'name': 'add', 'content': '2'}]
    body = gemini_body(dict(model='gemini/gemini-3-flash-preview', messages=msgs))
    parts = [p for c in body['contents'] for p in c['parts']]
    fc = next(p for p in parts if 'function_call' in p or 'functionCall' in p)
    assert fc.get('thoughtSignature') == 'c2lnbmF0dXJl'
    fr = next(p for p in parts if 'function_response' in p or 'functionResponse' in p)
    assert '__thought__' not in json.dumps(fr)

# --- ChatGPT/Codex subscription route (chatgpt.com itself is not reachable offline)

def jwt(**claims):
    enc = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip('=')
    return f"{enc({'alg': 'none'})}.{enc(claims)}.sig"

@pytest.fixture
def codex_home(tmp_path, monkeypatch):
    monkeypatch.delenv('LISETTE_CODEX_TOKEN', raising=False)
    monkeypatch.setenv('CODEX_HOME', str(tmp_path))
    return tmp_path

def test_codex_auth_file(codex_home):
    tok = jwt(exp=time.time()+3600)
    (codex_home/'auth.json').write_text(json.dumps({'OPENAI_API_KEY': None, 'tokens': {'access_token': tok, 'account_id': 'acct-1'}}))
    assert codex_auth() == {'access_token': tok, 'account_id': 'acct-1'}

def test_codex_auth_env_overrides(codex_home, monkeypatch):
    tok = jwt(exp=time.time()+3600, **{'https://api.openai.com/auth': {'chatgpt_account_id': 'acct-env'}})
    monkeypatch.setenv('LISETTE_CODEX_TOKEN', tok)
    assert codex_auth() == {'access_token': tok, 'account_id': 'acct-env'}

def test_codex_auth_errors(codex_home):
    with pytest.raises(CodexAuthError, match='codex login'): codex_auth()
    (codex_home/'auth.json').write_text(json.dumps({'OPENAI_API_KEY': 'sk-x', 'tokens': None}))
    with pytest.raises(CodexAuthError, match='no ChatGPT token'): codex_auth()
    (codex_home/'auth.json').write_text(json.dumps({'tokens': {'access_token': jwt(exp=time.time()-10)}}))
    with pytest.raises(CodexAuthError, match='expired'): codex_auth()

def test_codex_route_uses_codex_token(codex_home, fake_provider, monkeypatch):
    "A chatgpt/ request takes the Codex token and never starts litellm's device-code login"
    from litellm.llms.chatgpt.authenticator import Authenticator
    for k in ('get_access_token', 'get_account_id'): monkeypatch.setattr(Authenticator, k, getattr(Authenticator, k))
    monkeypatch.setattr(Authenticator, '_lisette', False, raising=False)
    monkeypatch.setattr(Authenticator, '_login_device_code', lambda self: pytest.fail('interactive login started'))
    monkeypatch.setenv('CHATGPT_TOKEN_DIR', str(codex_home/'litellm'))
    monkeypatch.setenv('CHATGPT_API_BASE', fake_provider.url)
    c = Chat(codex55)
    with pytest.raises((litellm.AuthenticationError, litellm.BadRequestError), match='codex login'): list(c('Hi', stream=True))
    (codex_home/'auth.json').write_text(json.dumps({'tokens': {'access_token': jwt(exp=time.time()+3600), 'account_id': 'acct-1'}}))
    assert Authenticator().get_access_token() == codex_auth()['access_token']
    # The request goes out (default temp=0 left out, no login) and the fake provider answers on its Responses endpoint
    fake_provider.queue('Hi back')
    assert [o for o in c('Hi', stream=True)][-1].choices[0].message.content == 'Hi back'
    assert fake_provider.requests[-1].path == '/responses' and fake_provider.requests[-1].headers['chatgpt-account-id'] == 'acct-1'


# ---- Gemini server-side tool calls in a streamed reply (litellm#25869) ----

def _gm_event(parts, finish=None):
    c = {'content': {'role': 'model', 'parts': parts}, 'index': 0}
    if finish: c.update(finishReason=finish)
    d = {'candidates': [c]}
    if finish: d['usageMetadata'] = {'promptTokenCount': 5, 'candidatesTokenCount': 4, 'totalTokenCount': 9}
    return d

_ss_parts = [{'toolCall': {'toolType': 'GOOGLE_SEARCH_WEB', 'id': 'ss1', 'args': {'queries': ['x']}}, 'thoughtSignature': 'sigA'},
             {'toolResponse': {'toolType': 'GOOGLE_SEARCH_WEB', 'id': 'ss1', 'response': {'ok': 1}}, 'thoughtSignature': 'sigB'},
             {'text': 'The answer is 42.', 'thoughtSignature': 'sigC'}]

def test_gemini_stream_server_side_calls():
    "A search call and its response streamed in separate chunks go back in the next request as they would after a JSON reply, sync and async"
    import asyncio
    from lisette.testing import FakeProvider
    sse = ''.join(f"data: {json.dumps(_gm_event([p], 'STOP' if i==2 else None))}\r\n\r\n" for i,p in enumerate(_ss_parts)).encode()
    sent = {}
    with FakeProvider(strict=False) as fp:  # made-up signatures
        kw = dict(api_base=fp.gemini_base, api_key='k')
        for how in ('json', 'sync', 'async'):
            fp.queue(Reply(raw=json.dumps(_gm_event(_ss_parts, 'STOP')).encode(), headers={'content-type': 'application/json'}) if how=='json'
                     else Reply(raw=sse, headers={'content-type': 'text/event-stream'}), 'next')
            if how=='async':
                chat = AsyncChat('gemini/gemini-3-flash-preview', **kw)
                async def run(): [o async for o in await chat('q', stream=True)]; await chat('follow-up')
                asyncio.run(run())
            else:
                chat = Chat('gemini/gemini-3-flash-preview', **kw)
                r = chat('q', stream=how=='sync')
                if how=='sync': list(r)
                chat('follow-up')
            sent[how] = fp.requests[-1].body['contents'][1]
    assert sent['json']['parts'][1] == {'toolCall': {'toolType': 'GOOGLE_SEARCH_WEB', 'id': 'ss1', 'args': {'queries': ['x']}}, 'thoughtSignature': 'sigA'}
    assert sent['sync'] == sent['async'] == sent['json']

@pytest.mark.parametrize('stream', [False, True])
def test_pause_turn_limit_warns(fake_provider, stream):
    "A turn the provider keeps pausing is continued `max_pauses` times; the last reply then says the turn may be unfinished"
    from lisette.chat import max_pauses
    fp = fake_provider
    fp.queue(*[pause_reply() for _ in range(max_pauses+1)])
    c = Chat('anthropic/' + sonn45, search='l', **an(fp))
    r = c('Search otters', stream=stream)
    if stream: r = [o for o in r if isinstance(o, litellm.ModelResponse)][-1]
    assert len(fp.requests) == max_pauses+1
    assert f'<warning>The provider paused this turn {max_pauses} times' in contents(r).content and 'cut off' not in contents(r).content

def test_failed_continuation_of_a_paused_search_leaves_it_unanswered(fake_provider):
    "A turn that fails after a pause with a pending search: no made-up result for the provider's search, and the chat goes on (both litellm versions)"
    fp, calls = fake_provider, []
    def cf(**kw):
        calls.append(kw)
        if len(calls)==1: return _pending_search_pause()
        if len(calls)==2: raise KeyboardInterrupt  # the continuation is interrupted
        return litellm.completion(**kw)
    c = Chat('anthropic/' + sonn45, search='l', completefunc=cf, **an(fp))
    with pytest.raises(KeyboardInterrupt): c("Search Solveit")
    assert [_get(m, 'role') for m in c.hist] == ['user', 'assistant']
    fp.queue("Solveit is a course.")
    assert contents(c("go on")).content == "Solveit is a course."
    assert 'tool_result' not in json.dumps(fp.last['messages'])

@pytest.mark.parametrize('stream', [False, True])
def test_paused_search_without_text_is_no_empty_reply(fake_provider, stream):
    "A paused reply that only searched said something (its search): stored, but not reported as an empty reply"
    fp = fake_provider
    fp.queue(Reply('', web_search=search, stop='pause_turn'), Reply('Otters swim.', web_search=search))
    c = Chat('anthropic/' + sonn45, search='l', **an(fp))
    r = c('Search otters', stream=stream)
    if stream: list(r)
    assert 'empty_reply' not in [a.kind for a in c.adjustments] and len(fp.requests) == 2

@pytest.mark.parametrize('think', [None, 'l'])
def test_streamed_call_without_text_sends_no_made_up_text(fake_provider, think):
    "A streamed reply that only calls a tool (stored with content '') goes back to Anthropic as its tool_use alone: litellm 1.106 added a placeholder text block of its own"
    from lisette import Chat
    def add(a:int, b:int) -> int:
        "Add"
        return a + b
    fp = fake_provider
    fp.queue(Reply("", thinking="hmm" if think else None, tool_calls=[('add', {'a': 2, 'b': 2})]), "4")
    chat = Chat('anthropic/claude-sonnet-4-5', tools=[add], api_base=fp.anthropic_base, api_key='k')
    list(chat("What is 2+2?", think=think, stream=True))
    sent = fp.requests[1].body['messages'][1]['content']
    assert [b['type'] for b in sent] == (['thinking'] if think else []) + ['tool_use'], sent
    assert chat.hist[1].content == '' and chat.hist[-1].content == '4'  # (the history keeps what the stream built)

@pytest.mark.parametrize('aio', [False, True])
def test_streamed_responses_reasoning_goes_back(fake_provider, aio, tmp_path):
    "A streamed Responses reply that reasoned, then called a tool: its reasoning item goes back before the call, as after a non-streamed one (litellm 1.106's builder dropped it), also after save and load"
    from lisette import Chat, AsyncChat, save_chat, load_chat
    def add(a:int, b:int) -> int:
        "Add"
        return a + b
    fp = fake_provider
    fp.queue(Reply("", thinking="Let me think", tool_calls=[('add', {'a': 2, 'b': 2})]), "4", "ok")
    chat = (AsyncChat if aio else Chat)('openai/responses/gpt-5.4', tools=[add], api_base=fp.responses_base, api_key='k')
    async def arun(): return [o async for o in await chat("What is 2+2?", think='l', stream=True)]
    asyncio.run(arun()) if aio else list(chat("What is 2+2?", think='l', stream=True))
    kinds = lambda body: [i.get('type') for i in body['input']]
    assert kinds(fp.requests[1].body)[:4] == ['message', 'reasoning', 'function_call', 'function_call_output']
    save_chat(chat, tmp_path/'c.json')
    chat2 = load_chat(tmp_path/'c.json', api_base=fp.responses_base, api_key='k', tools=[add], cls=type(chat))
    asyncio.run(chat2("and?")) if aio else chat2("and?")
    assert kinds(fp.last)[:4] == ['message', 'reasoning', 'function_call', 'function_call_output']

def test_register_model_change_is_seen(fake_provider):
    "A register_model that changes a model litellm already knows (the map keeps its length) is seen by the next request: lisette's per-model caches start afresh"
    from lisette import Chat
    fp, m = fake_provider, 'openai/lisette-test-registered'
    fp.queue("one", "two")
    try:
        litellm.register_model({m: {'max_output_tokens': 1000, 'max_input_tokens': 8000, 'litellm_provider': 'openai', 'mode': 'chat'}})
        chat = Chat(m, api_base=fp.openai_base, api_key='k')
        chat("hi")
        assert fp.last['max_tokens'] == 1000
        litellm.register_model({m: {'max_output_tokens': 500, 'max_input_tokens': 8000, 'litellm_provider': 'openai', 'mode': 'chat'}})
        chat("again")
        assert fp.last['max_tokens'] == 500
    finally:
        litellm.model_cost.pop(m, None)
        litellm.register_model({})  # (the map as it was: caches start afresh)

# --- httpcore's pool lock and the garbage collector (encode/httpcore#990)

_GC_IN_POOL_LOCK = '''
import os, sys, gc, threading; os.environ['LITELLM_LOCAL_MODEL_COST_MAP']='True'
import httpx
from httpcore._synchronization import ThreadLock
from lisette.testing import FakeProvider, Reply
from lisette import providers
release = ThreadLock.__exit__.__code__  # httpcore's own
if sys.argv[1]=='mend': providers._pool_closes_later()
fp = FakeProvider().start()
fp.queue(Reply("a long answer " * 50), Reply("x"))
cli, body = httpx.Client(), {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]}
gc.disable()
r = cli.send(cli.build_request('POST', fp.openai_base+'/chat/completions', json=body|{'stream': True}), stream=True)
lines = r.iter_lines(); next(lines)
cycle = [lines]; cycle.append(cycle); del r, lines, cycle   # only the cyclic collector will close it
pool = cli._transport._pool
if sys.argv[2]=='assign':  # the collector runs inside the pool's locked region
    assign = pool._assign_requests_to_connections
    pool._assign_requests_to_connections = lambda: (gc.collect(), assign())[1]
def at_release(frame, ev, arg):  # ... or as the lock is let go
    if ev=='call' and frame.f_code is release: sys.setprofile(None); gc.collect()
done = []
def send():
    if sys.argv[2]=='release': sys.setprofile(at_release)
    done.append(cli.post(fp.openai_base+'/chat/completions', json=body).status_code)
t = threading.Thread(target=send, daemon=True)
t.start(); t.join(10)
print('hung' if t.is_alive() else f'{done} {len(pool._requests)}', flush=True)
os._exit(0)
'''

def _gc_in_pool_lock(*args):
    return subprocess.run([sys.executable, '-c', _GC_IN_POOL_LOCK, *args], capture_output=True, text=True, timeout=120).stdout.strip()

def test_gc_close_in_pool_lock():
    "A stream the collector closes inside httpcore's pool lock hangs the thread (httpcore 1.0.9); `_pool_closes_later` closes it after the lock is let go"
    from lisette.providers import _pool_lock_blocks_reentry
    assert _gc_in_pool_lock('plain', 'assign') == ('hung' if _pool_lock_blocks_reentry() else '[200] 0')  # the guard tells the truth
    assert _gc_in_pool_lock('mend', 'assign') == '[200] 0'  # answered, and the first stream's request left the pool
    assert _gc_in_pool_lock('mend', 'release') == '[200] 0'  # no gap as the lock is let go

def test_pool_lock_mend_unchanged_use(fake_provider):
    "With the mend, the pool lock still excludes other threads and the chat's streams still give their connection back"
    from httpcore._synchronization import ThreadLock
    from lisette.providers import _pool_closes_later
    import threading
    _pool_closes_later()
    lock, got = ThreadLock(), []
    with lock:
        t = threading.Thread(target=lambda: got.append(lock._lock.acquire(timeout=0.2))); t.start(); t.join()
    assert got == [False] and lock._lock.acquire(timeout=0.2)
    lock._lock.release()
    fake_provider.queue(*[Reply('hi ' * 30)] * 3, Reply('the end'))
    c = Chat('openai/gpt-4o-mini', **oa(fake_provider))
    for _ in range(3):
        for x in c('Hi', stream=True): break   # abandoned half-read
    assert contents(c('Hi')).content == 'the end'

async def test_module_client_outlives_its_cache_entry(fake_provider, monkeypatch):
    """litellm's module-level async client, which every Anthropic request goes through, stays litellm's after its entry in
    litellm's client cache goes (the 201st client; 1 h): the closer of evicted clients closed it 15 min later, and the
    requests being connected through it then failed, "Connector is closed" (1.106.2 and 1.110.2; the project's CI once)"""
    from litellm.caching.evicted_client_closer import EvictedClientCloser
    fp = fake_provider
    fp.respond_with(lambda body, path: 'ok')
    await AsyncChat('anthropic/' + sonn45, **an(fp))('Hi')  # the first request: litellm makes its module-level client
    h = litellm.module_level_aclient
    assert fp.requests[-1].path.endswith('/messages')
    # its entry evicted and the 15 minutes of grace gone by: litellm marked the client its own as it cached it
    closer = EvictedClientCloser(grace_seconds=0)
    monkeypatch.setattr(litellm.in_memory_llm_clients_cache, 'evicted_client_closer', closer)
    closer.mark_owned(h)
    closer.schedule(h)  # what evicting the entry does (`LLMClientCache._remove_key`)
    # requests on Anthropic (through that client) and OpenAI (whose client lookups run the closer) at once
    async def one(i):
        c = AsyncChat(['anthropic/' + sonn45, 'openai/gpt-4o-mini'][i%2], retries=0, **[an, oa][i%2](fp))
        r = await c('Hi', stream=i%4>1)
        if i%4>1: r = [x async for x in r][-1]
        return contents(r).content
    res = await asyncio.gather(*map(one, range(40)), return_exceptions=True)
    assert [r for r in res if r!='ok'] == []
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler
    other = AsyncHTTPHandler()  # any other client litellm evicts is still closed
    closer.mark_owned(other); closer.schedule(other); closer.reap()
    for _ in range(3): await asyncio.sleep(0)  # (the close runs as a task)
    assert other._client.is_closed and not h._client.is_closed

def test_module_client_kept_from_import():
    """The closer of evicted clients leaves litellm's module-level client alone from `import lisette` on: a process that
    calls litellm itself before any chat (or only ever) was not covered, as the mend came with a chat's first request.
    Importing lisette makes no client (litellm's would be made then, with the timeout of that moment)"""
    code = '''
import os, asyncio, json; os.environ['LITELLM_LOCAL_MODEL_COST_MAP']='True'
import litellm
import lisette
from lisette import providers
from lisette.testing import FakeProvider
from litellm.caching.evicted_client_closer import EvictedClientCloser
made_at_import = 'module_level_aclient' in litellm.__dict__
with FakeProvider() as fp:
    fp.respond_with(lambda body, path: 'ok')
    r = asyncio.run(litellm.acompletion('anthropic/claude-sonnet-4-5', [{'role': 'user', 'content': 'hi'}], api_base=fp.anthropic_base, api_key='k'))
h = litellm.module_level_aclient
closer = EvictedClientCloser(grace_seconds=0)
closer.mark_owned(h); closer.schedule(h)
print(json.dumps(dict(made_at_import=made_at_import, answer=r.choices[0].message.content, pending=closer.pending_count,
                      no_chat_request=bool(providers._on_first_request))))
'''
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
    d = json.loads(out.strip().splitlines()[-1])
    assert d == dict(made_at_import=False, answer='ok', pending=0, no_chat_request=True), d

@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('cache', [False, True])
def test_paused_turn_with_thinking_continues_with_its_thinking(fake_provider, stream, cache):
    "A paused turn that thought, with a search not run yet, goes back starting with its thinking block (litellm 1.110 dropped it: helper-17 finding 1; with a checkpoint on it, helper-18)"
    fp = fake_provider
    assert fp.strict
    fp.queue(Reply('Let me search.', thinking='I should search.', web_search=[*search, dict(query='more otters', pending=True)], stop='pause_turn'),
             Reply('Otters swim.', web_search=search))
    c = Chat('anthropic/' + sonn45, search='l', cache=cache, **an(fp))
    r = c('Search otters', think='l', stream=stream)
    if stream: list(r)
    assert len(fp.requests) == 2  # the strict fake provider took the continuation (it refuses one without the thinking block first)
    last = fp.requests[1].body['messages'][-1]
    assert last['role'] == 'assistant' and last['content'][0] == {'type': 'thinking', 'thinking': 'I should search.', 'signature': _get(c.hist[1], 'thinking_blocks')[0]['signature']}
    assert c.hist[-1].content.endswith('Otters swim.')

# --- Anthropic pauses after compacting the context; server tools given in callkw

_compaction = {'id': 'msg_c', 'type': 'message', 'role': 'assistant', 'model': 'claude-opus-4-6', 'stop_reason': 'compaction', 'stop_sequence': None,
               'content': [{'type': 'compaction', 'content': 'Summary of the session.'}], 'context_management': {'applied_edits': []},
               'usage': {'input_tokens': 0, 'output_tokens': 0, 'iterations': [{'type': 'compaction', 'input_tokens': 54453, 'output_tokens': 883}]}}

def _compaction_sse():
    "The same reply streamed (shape of Anthropic's compaction docs: a `compaction_delta`, stop_reason in `message_delta`)"
    evs = [('message_start', {'type': 'message_start', 'message': {**_compaction, 'content': [], 'stop_reason': None, 'usage': {'input_tokens': 0, 'output_tokens': 0}}}),
           ('content_block_start', {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'compaction', 'content': None}}),
           ('content_block_delta', {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'compaction_delta', 'content': 'Summary of the session.'}}),
           ('content_block_stop', {'type': 'content_block_stop', 'index': 0}),
           ('message_delta', {'type': 'message_delta', 'delta': {'stop_reason': 'compaction', 'stop_sequence': None}, 'usage': {'output_tokens': 0}}),
           ('message_stop', {'type': 'message_stop'})]
    return b''.join(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e,d in evs)

@pytest.mark.parametrize('stream', [False, True])
def test_compaction_pause_is_continued(fake_provider, stream, tmp_path):
    """`pause_after_compaction`: the reply is the compaction block alone, `stop_reason: compaction` (litellm: 'length').
    The turn goes on with the compaction sent back; no 'cut off' warning goes into the history, or to the model"""
    fp = fake_provider
    fp.queue(Reply(raw=_compaction_sse(), headers={'content-type': 'text/event-stream'}) if stream else Reply(raw=json.dumps(_compaction).encode()), 'The answer.', 'Next.')
    c = Chat('anthropic/claude-opus-4-6', callkw={'context_management': {'edits': [{'type': 'compact_20260112', 'pause_after_compaction': True}]}}, **an(fp))
    r = c('Hello', stream=stream)
    if stream: r = list(r)[-1]
    assert contents(r).content == 'The answer.' and len(fp.requests) == 2
    assert 'cut off' not in str(c.hist) + str(fp.last['messages'])
    assert fp.last['messages'][-1]['content'] == [{'type': 'compaction', 'content': 'Summary of the session.'}]  # (alone: no made-up text after it; litellm 1.106 built the streamed block without its summary)
    c2 = load_chat(c.save(tmp_path/'c.json'), api_base=fp.anthropic_base, api_key='fake')  # (a valid history: saved, loaded, sent on)
    assert contents(c2('And then?')).content == 'Next.' and check_hist(c2.hist) is None

def test_cut_thinking_after_compaction_is_not_a_pause(fake_provider):
    "A reply cut off at max_tokens while thinking, after Anthropic compacted the context (no text, litellm: 'length'), is a cut-off reply: not continued as a pause"
    fp = fake_provider
    fp.strict = False  # (its thinking is cut off: no valid signature to send back)
    msg = {**_compaction, 'stop_reason': 'max_tokens',
           'content': [*_compaction['content'], {'type': 'thinking', 'thinking': 'Let me think about this at great len', 'signature': 'sig1'}]}
    fp.queue(*[Reply(raw=json.dumps(msg).encode())]*3)
    c = Chat('anthropic/claude-opus-4-6', max_tokens=100, callkw={'context_management': {'edits': [{'type': 'compact_20260112'}]}}, **an(fp))
    with warnings.catch_warnings(): warnings.simplefilter('ignore'); r = c('Hello', think='h')  # (the cut-off warning)
    assert len(fp.requests) == 1 and contents(r).content == '<warning>Response was cut off at token limit.</warning>'

def test_callkw_server_tools_sent_with_the_chats_tools(fake_provider):
    "A provider's own tool given in `callkw` (e.g. Anthropic's web fetch) goes with the chat's tools, not replaced by them"
    fp = fake_provider
    def add(a:int, b:int) -> int:
        "Add two numbers"
        return a+b
    fp.queue('ok')
    c = Chat('anthropic/claude-sonnet-4-5', tools=[add], callkw={'tools': [{'type': 'web_fetch_20250910', 'name': 'web_fetch', 'max_uses': 2}]}, **an(fp))
    c('fetch https://example.com')
    assert [t['name'] for t in fp.last['tools']] == ['add', 'web_fetch']

@pytest.mark.parametrize('layout', ['openai', 'anthropic'])
def test_callkw_tool_named_as_a_chat_tool_sent_once(fake_provider, layout):
    "A function tool given both in `tools=` and in `callkw` goes once (Anthropic refuses 'tool names must be unique'): the chat's, and said"
    fp = fake_provider
    def add(a:int, b:int) -> int:
        "Add two numbers"
        return a+b
    dup = ({'type': 'function', 'function': {'name': 'add', 'parameters': {'type': 'object', 'properties': {}}}} if layout=='openai'
           else {'name': 'add', 'input_schema': {'type': 'object', 'properties': {}}})
    fp.queue('ok')
    c = Chat('anthropic/claude-sonnet-4-5', tools=[add], callkw={'tools': [dup, {'type': 'web_fetch_20250910', 'name': 'web_fetch'}]}, **an(fp))
    with warnings.catch_warnings(record=True) as w: warnings.simplefilter('always'); c('add 1 and 2')
    assert [t['name'] for t in fp.last['tools']] == ['add', 'web_fetch']
    assert fp.last['tools'][0]['input_schema']['properties'].keys() == {'a', 'b'}  # the chat's own
    assert [a.kind for a in c.adjustments if a.kind=='tools'] == ['tools'] and "'add'" in c.adjustments[0].detail and w

def test_callkw_provider_tool_named_as_a_chat_tool_refused(fake_provider):
    "A provider's tool in `callkw` named as one of the chat's functions (Anthropic's bash beside a Python `bash`) is refused with the fix named, not sent twice; odd tool dicts and a generator of them pass as given"
    fp = fake_provider
    def bash(command:str) -> str:
        "Run a command"
        return ''
    c = Chat('anthropic/claude-sonnet-4-5', tools=[bash], callkw={'tools': [{'type': 'bash_20250124', 'name': 'bash'}]}, **an(fp))
    with pytest.raises(ValueError, match="'bash'.*rename the function"): c('list files')
    assert not fp.requests and c.hist == []
    odd = [{'type': 'function', 'function': 'x'}, {'name': ['a']}]
    assert Chat('m', tools=[bash], callkw={'tools': odd})._with_callkw_tools(['s']) == ['s', *odd]
    assert Chat('m', tools=[bash], callkw={'tools': (t for t in odd)})._with_callkw_tools(['s']) == ['s', *odd]

def _an_sse(msg):
    "Anthropic stream events of message `msg` (its server and client tool calls, text, and the container on `message_delta`)"
    evs = [('message_start', {'type': 'message_start', 'message': {**msg, 'content': [], 'stop_reason': None}})]
    for i,b in enumerate(msg['content']):
        if b['type'] in ('server_tool_use', 'tool_use'):
            evs += [('content_block_start', {'type': 'content_block_start', 'index': i, 'content_block': {**b, 'input': {}}}),
                    ('content_block_delta', {'type': 'content_block_delta', 'index': i, 'delta': {'type': 'input_json_delta', 'partial_json': json.dumps(b['input'])}})]
        elif b['type']=='text':
            evs += [('content_block_start', {'type': 'content_block_start', 'index': i, 'content_block': {'type': 'text', 'text': ''}}),
                    ('content_block_delta', {'type': 'content_block_delta', 'index': i, 'delta': {'type': 'text_delta', 'text': b['text']}})]
        else: evs.append(('content_block_start', {'type': 'content_block_start', 'index': i, 'content_block': b}))
        evs.append(('content_block_stop', {'type': 'content_block_stop', 'index': i}))
    evs += [('message_delta', {'type': 'message_delta', 'delta': {'stop_reason': msg['stop_reason'], 'stop_sequence': None, 'container': msg.get('container')},
                               'usage': {'output_tokens': 1}}), ('message_stop', {'type': 'message_stop'})]
    return b''.join(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e,d in evs)

@pytest.mark.parametrize('stream', [False, True])
def test_code_execution_container_sent_back(fake_provider, stream):
    """A reply with a code execution still pending beside a client tool call (shape of inspect_ai's test of this case):
    Anthropic answers 400 'container_id is required when there are pending tool uses generated by code execution with
    tools' to a tool round without the reply's `container`. It is sent, in that round and in later turns, and noted (quietly)"""
    fp = fake_provider
    cid = 'container_0123456789'
    head = {'id': 'msg_x', 'type': 'message', 'role': 'assistant', 'model': 'claude-opus-4-6', 'stop_reason': 'tool_use', 'stop_sequence': None,
            'content': [{'type': 'server_tool_use', 'id': 'srvtoolu_ce1', 'name': 'code_execution', 'input': {'code': "print('hi')"}},
                        {'type': 'tool_use', 'id': 'toolu_client1', 'name': 'lookup_constant', 'input': {'name': 'alpha'}}],
            'container': {'id': cid, 'expires_at': '2999-01-01T00:00:00Z'}, 'usage': {'input_tokens': 1, 'output_tokens': 1}}
    tail = {'id': 'msg_y', 'type': 'message', 'role': 'assistant', 'model': 'claude-opus-4-6', 'stop_reason': 'end_turn', 'stop_sequence': None,
            'content': [{'type': 'code_execution_tool_result', 'tool_use_id': 'srvtoolu_ce1', 'content': {'type': 'code_execution_result', 'stdout': 'hi\n', 'stderr': '', 'return_code': 0, 'content': []}},
                        {'type': 'text', 'text': 'done'}], 'usage': {'input_tokens': 1, 'output_tokens': 1}}
    rep = lambda m: Reply(raw=_an_sse(m), headers={'content-type': 'text/event-stream'}) if stream else Reply(raw=json.dumps(m).encode())
    fp.strict = False  # (the pending server call's handling differs by litellm version; what is checked here is the container)
    fp.queue(rep(head), rep(tail), 'later')
    def lookup_constant(name:str) -> str:
        "Look up a named constant."
        return '42'
    c = Chat('anthropic/claude-opus-4-6', tools=[lookup_constant, {'type': 'code_execution_20250825', 'name': 'code_execution'}], **an(fp))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        r = c('go', stream=stream)
        if stream: list(r)
        c('and later?')
    assert [q.body.get('container') for q in fp.requests] == [None, cid, cid]
    assert 'container' in [a.kind for a in c.adjustments] and all(a.quiet for a in c.adjustments if a.kind=='container')


@pytest.mark.parametrize('tool,call', [({'type': 'web_search_20250305', 'name': 'web_search'}, 'web_search'),
                                       ({'type': 'tool_search_tool_bm25_20251119', 'name': 'tool_search_tool_bm25'}, 'tool_search_tool_bm25'),
                                       ({'type': 'code_execution_20250825', 'name': 'code_execution'}, 'bash_code_execution')])  # (code execution calls its own two tools)
def test_provider_call_without_its_result_is_not_run(fake_provider, tool, call):
    """A reply with a provider tool's call still running (or whose result litellm 1.106 drops, as tool search's) beside a
    client tool call (shape of pydantic-ai's recorded in-flight search): only the client call runs and is answered; the
    provider's is never run here as a tool of the chat ("Tool not found"), in either litellm version"""
    fp = fake_provider
    fp.strict = False  # (litellm 1.110 sends the provider's call back; 1.106 cannot, and leaves it out)
    head = {'id': 'msg_h', 'type': 'message', 'role': 'assistant', 'model': 'claude-sonnet-4-5', 'stop_reason': 'tool_use', 'stop_sequence': None,
            'content': [{'type': 'server_tool_use', 'id': 'srvtoolu_01', 'name': call, 'input': {'query': 'weather'}},
                        {'type': 'tool_use', 'id': 'toolu_01', 'name': 'add', 'input': {'a': 2, 'b': 2}}], 'usage': {'input_tokens': 10, 'output_tokens': 5}}
    fp.queue(Reply(raw=json.dumps(head).encode()), 'It is 4.')
    ran = []
    def add(a:int, b:int) -> int:
        "Add two numbers"
        ran.append((a, b)); return a+b
    c = Chat('anthropic/claude-sonnet-4-5', tools=[add, tool], **an(fp))
    c('2+2, and the weather?')
    tool_msgs = [m for m in c.hist if _get(m, 'role')=='tool']
    assert ran == [(2, 2)] and [m['tool_call_id'] for m in tool_msgs] == ['toolu_01'] and check_hist(c.hist) is None
    assert 'srvtoolu_01' not in [b.get('tool_use_id') for m in fp.last['messages'] for b in (m['content'] if isinstance(m['content'], list) else []) if b.get('type')=='tool_result']

def test_provider_call_marked_before_the_reply_goes_out(fake_provider):
    "The user stops reading the stream at the reply (break, close): the interrupted turn answers the client call only, the provider's stays the provider's (litellm 1.106 lists it among the tool calls)"
    fp = fake_provider
    fp.strict = False
    head = {'id': 'msg_h', 'type': 'message', 'role': 'assistant', 'model': 'claude-sonnet-4-5', 'stop_reason': 'tool_use', 'stop_sequence': None,
            'content': [{'type': 'server_tool_use', 'id': 'srvtoolu_01', 'name': 'web_search', 'input': {'query': 'weather'}},
                        {'type': 'tool_use', 'id': 'toolu_01', 'name': 'add', 'input': {'a': 2, 'b': 2}}], 'usage': {'input_tokens': 10, 'output_tokens': 5}}
    fp.queue(Reply(raw=_an_sse(head), headers={'content-type': 'text/event-stream'}))
    def add(a:int, b:int) -> int:
        "Add two numbers"
        return a+b
    c = Chat('anthropic/claude-sonnet-4-5', tools=[add, {'type': 'web_search_20250305', 'name': 'web_search'}], **an(fp))
    g = c('2+2, and the weather?', stream=True)
    for o in g:
        if isinstance(o, litellm.ModelResponse): break
    g.close()
    assert [m['tool_call_id'] for m in c.hist if _get(m, 'role')=='tool'] == ['toolu_01'] and check_hist(c.hist) is None

@pytest.mark.parametrize('stream', [False, True])
def test_context_after_compaction_is_what_the_provider_holds(fake_provider, stream):
    """After Anthropic compacted the context, it reads on from the compaction block: the chat's context count is the
    answer's iteration (40 in, 8 out), not litellm's sum over iterations (2,640 in), so the next turn's max_tokens is not
    lowered as if the window were nearly full (a 3,000-token window, registered for this test's model)"""
    fp = fake_provider
    m = 'anthropic/claude-compaction-test'
    litellm.register_model({m: {**litellm.get_model_info('anthropic/claude-sonnet-4-5'), 'max_input_tokens': 3000, 'litellm_provider': 'anthropic', 'mode': 'chat'}})
    its = [{'type': 'compaction', 'input_tokens': 2600, 'output_tokens': 30}, {'type': 'message', 'input_tokens': 40, 'output_tokens': 8}]
    msg = {'id': 'm1', 'type': 'message', 'role': 'assistant', 'model': 'claude-compaction-test', 'stop_reason': 'end_turn', 'stop_sequence': None,
           'content': [{'type': 'compaction', 'content': 'Summary: filler, then a greeting.'}, {'type': 'text', 'text': 'Hello!'}],
           'context_management': {'applied_edits': []}, 'usage': {'input_tokens': 40, 'output_tokens': 8, 'iterations': its}}
    evs = [('message_start', {'type': 'message_start', 'message': {**msg, 'content': [], 'stop_reason': None, 'usage': {'input_tokens': 40, 'output_tokens': 1}}}),
           ('content_block_start', {'type': 'content_block_start', 'index': 0, 'content_block': msg['content'][0]}),
           ('content_block_stop', {'type': 'content_block_stop', 'index': 0}),
           ('content_block_start', {'type': 'content_block_start', 'index': 1, 'content_block': {'type': 'text', 'text': ''}}),
           ('content_block_delta', {'type': 'content_block_delta', 'index': 1, 'delta': {'type': 'text_delta', 'text': 'Hello!'}}),
           ('content_block_stop', {'type': 'content_block_stop', 'index': 1}),
           ('message_delta', {'type': 'message_delta', 'delta': {'stop_reason': 'end_turn', 'stop_sequence': None}, 'usage': {'output_tokens': 8, 'iterations': its}}),
           ('message_stop', {'type': 'message_stop'})]
    sse = b''.join(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e,d in evs)
    fp.strict = False
    fp.queue(Reply(raw=sse, headers={'content-type': 'text/event-stream'}) if stream else Reply(raw=json.dumps(msg).encode()), 'Hi again.')
    c = Chat(m, callkw={'context_management': {'edits': [{'type': 'compact_20260112', 'trigger': {'type': 'input_tokens', 'value': 2000}}]}}, **an(fp))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        r = c('The quick brown fox jumps over the lazy dog. ' * 250 + 'Now say hello.', stream=stream)
        if stream: list(r)
        assert c._ctx == (2, 48)
        c('And again?')
    assert fp.last['max_tokens'] > 2900  # (the window, less the ~60 tokens the provider holds; counted from the sum, ~300)

@pytest.mark.parametrize('model', ['gemini/gemini-2.5-flash', 'gemini/gemini-3-flash-preview'])
def test_gemini_tool_result_texts_kept_apart(fake_provider, model):
    """litellm joins a Gemini tool result's text parts with nothing between: the chat's reminder and the `tc_refs` header
    ran into the result ('Be brief.[tool_call_id: call_…__thought__<1 KB signature>]Mexico'). They go apart, and the header
    names the id the model knows"""
    fp = fake_provider
    def country() -> str:
        "The user's country"
        return 'Mexico'
    fp.queue(Reply(tool_calls=[('country', {})], thinking='plan'), 'Mexico City.')
    c = Chat(model, tools=[country], tc_refs=True, tool_reminder='Be brief.', api_base=fp.gemini_base, api_key='k')
    c('Capital of my country?')
    fr = [p['function_response'] for m in fp.last['contents'] for p in m['parts'] if 'function_response' in p][0]
    assert fr['response']['content'] == f"Be brief.\n\n[tool_call_id: {c.hist[1].tool_calls[0].id.split('__thought__')[0]}]\n\nMexico"

@pytest.mark.parametrize('msg', [{'role': 'assistant', 'content': 'Hello.', 'reasoning_content': ''},
                                 litellm.Message(role='assistant', content='Hello.', reasoning_content='')], ids=['dict', 'Message'])
@pytest.mark.parametrize('stream', [False, True])
def test_gemini_empty_reasoning_content_sent_as_none(fake_provider, msg, stream):
    """An assistant message with `reasoning_content: ''` (as some OpenAI-compatible servers reply): litellm sent Gemini an
    empty thought part, which Gemini refuses on every later turn ('empty text parameter'). It goes as none; the history keeps it"""
    fp = fake_provider
    fp.queue('Fine.')
    c = Chat('gemini/gemini-3-flash-preview', hist=['Hi', msg], api_base=fp.gemini_base, api_key='k')
    r = c('And now?', stream=stream)
    if stream: list(r)
    assert c.hist[-1].content == 'Fine.' and _get(c.hist[1], 'reasoning_content') == ''
    assert fp.last['contents'][1] == {'role': 'model', 'parts': [{'text': 'Hello.'}]}

def test_thinking_loop_whose_later_step_did_not_think_keeps_thinking(fake_provider):
    """Claude thinks at a tool loop's start, and its second call comes without thinking (Claude 4 thinks once a turn
    without interleaved thinking): the third request keeps thinking on (Anthropic refuses turning it off with thinking
    blocks in the turn), with no note"""
    fp = fake_provider
    def lookup(key:str) -> str:
        "Look up a key"
        return f"value of {key}"
    fp.queue(Reply('Let me look.', tool_calls=[('lookup', {'key': 'a'})], thinking='plan', signature='sig1'),
             Reply(tool_calls=[('lookup', {'key': 'b'})]), Reply('Done.'))
    c = Chat('anthropic/claude-sonnet-4-5', tools=[lookup], **an(fp))
    assert contents(c('Look up a then b', think='m', max_steps=5)).content == 'Done.'
    assert all(q.body['thinking']['type'] == 'enabled' for q in fp.requests) and not any(a.kind=='think' for a in c.adjustments)

def _ol_lookup(key:str) -> str:
    "Look up a key"
    return f"value of {key}"

@pytest.mark.parametrize('stream', [False, True])
def test_ollama_native_call_ids(fake_provider, monkeypatch, stream):
    """Ollama's own API (`ollama_chat/`, its docs' "Chat request (with tools)" reply) gives tool calls no ids. A reply not
    streamed had each call given an id in OpenAI's style, reported; streamed, the uuid4 litellm's parser sets stayed,
    unreported. Both now go the same way"""
    import lisette.testing as T
    fp = fake_provider
    monkeypatch.setitem(T._paths, '/api/chat', 'openai'); fp.strict = False  # (Ollama's own wire format: no rule of the fake's applies)
    msg = {'role': 'assistant', 'content': '', 'tool_calls': [{'function': {'name': '_ol_lookup', 'arguments': {'key': 'a'}}}]}
    end = {'model': 'llama3.2', 'created_at': '2024-07-22T20:33:28Z', 'done_reason': 'stop', 'done': True, 'prompt_eval_count': 122, 'eval_count': 33}
    def nd(m): return Reply(raw=b''.join(json.dumps(o).encode() + b'\n' for o in ([{**end, 'done': False, 'message': m}, {**end, 'message': {'role': 'assistant', 'content': ''}}] if stream else [{**end, 'message': m}])))
    fp.queue(nd(msg), nd({'role': 'assistant', 'content': 'It is a.'}))
    chat = Chat('ollama_chat/llama3.2', tools=[_ol_lookup], api_base=fp.url, api_key='k')
    r = chat('Look up a', stream=stream)
    if stream: list(r)
    tid = chat.hist[1].tool_calls[0].id
    assert tid.startswith('call_') and len(tid)==29, tid
    assert [a.detail for a in chat.adjustments if a.kind=='tool_call_id'] == [f"the reply's _ol_lookup call came without an id: given the id {tid!r}"]
    assert chat.hist[2]['tool_call_id'] == tid

def test_ollama_stream_keeps_ollama_ids(fake_provider, monkeypatch):
    """Newer Ollama gives its tool calls ids (`call_…`). litellm's Ollama stream parser replaced each with a uuid4 of its
    own (a reply not streamed keeps Ollama's), unreported: the calls keep Ollama's ids, and their results go with them"""
    import lisette.testing as T
    fp = fake_provider
    monkeypatch.setitem(T._paths, '/api/chat', 'openai'); fp.strict = False  # (Ollama's own wire format: no rule of the fake's applies)
    end = {'model': 'llama3.2', 'created_at': '2025-10-22T20:33:28Z', 'done_reason': 'stop', 'done': True, 'prompt_eval_count': 122, 'eval_count': 33}
    calls = [{'id': f'call_{k}x7qpl2m', 'function': {'index': i, 'name': '_ol_lookup', 'arguments': {'key': k}}} for i,k in enumerate('ab')]
    def nd(*ms): return Reply(raw=b''.join(json.dumps(o).encode() + b'\n' for o in [*({**end, 'done': False, 'message': m} for m in ms), {**end, 'message': {'role': 'assistant', 'content': ''}}]))
    fp.queue(nd(*({'role': 'assistant', 'content': '', 'tool_calls': [c]} for c in calls)), nd({'role': 'assistant', 'content': 'Both found.'}))
    chat = Chat('ollama_chat/llama3.2', tools=[_ol_lookup], api_base=fp.url, api_key='k')
    list(chat('Look up a and b', stream=True))
    assert [tc.id for tc in chat.hist[1].tool_calls] == ['call_ax7qpl2m', 'call_bx7qpl2m'] and not chat.adjustments
    assert [m['tool_call_id'] for m in fp.last['messages'][2:4]] == ['call_ax7qpl2m', 'call_bx7qpl2m']

# --- Gemini's OpenAI-compatible endpoint

def _turn(chat, aio, stream, prompt):
    "Run a turn of `chat` to its end, sync or async, streamed or not"
    async def arun():
        r = await chat(prompt, stream=stream)
        return [o async for o in r] if stream else r
    if aio: return asyncio.run(arun())
    r = chat(prompt, stream=stream)
    return list(r) if stream else r

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('n', [1, 3])
def test_gemini_openai_call_signature_goes_back(fake_provider, stream, aio, n, tmp_path):
    """Gemini 3 through its OpenAI-compatible endpoint gives the first tool call its thought signature in `extra_content`:
    it goes back on the call, streamed as not (litellm's stream builder dropped it, and Gemini refused every tool loop:
    'Function call is missing a thought_signature'), also after save and load"""
    fp = fake_provider
    def add(a:int, b:int=0) -> int:
        "Add"
        return a + b
    fp.queue(Reply(tool_calls=[('add', {'a': i}) for i in range(n)]), 'done', Reply(tool_calls=[('add', {'a': 9})]), 'again')
    chat = (AsyncChat if aio else Chat)('openai/gemini-3-flash-preview', tools=[add], **oa(fp))
    _turn(chat, aio, stream, 'go')
    sent = fp.requests[1].body['messages'][1]['tool_calls']
    assert sent[0]['extra_content']['google']['thought_signature'] in fp._signatures
    assert all('extra_content' not in tc for tc in sent[1:])  # (Gemini signs a step's first call only)
    save_chat(chat, tmp_path/'c.json')
    chat2 = load_chat(tmp_path/'c.json', tools=[add], cls=type(chat), **oa(fp))
    _turn(chat2, aio, stream, 'more')
    assert chat2.hist[-1].content == 'again'
    loops = [m['tool_calls'][0] for m in fp.last['messages'] if m.get('tool_calls')]
    assert len(loops) == 2 and all(tc['extra_content']['google']['thought_signature'] in fp._signatures for tc in loops)

# --- OpenRouter's reasoning details

_or = json.load(open(os.path.join(os.path.dirname(__file__), 'fixtures', 'openrouter_reasoning.json')))

def _or_reply(key): return Reply(raw=_or[key].encode() if isinstance(_or[key], str) else json.dumps(_or[key]).encode())

def _or_details(key):
    "The reasoning_details OpenRouter sent in fixture `key`, as one message has them (a stream's pieces joined)"
    if key=='claude_json': return _or[key]['choices'][0]['message']['reasoning_details']
    evs = [json.loads(l[6:]) for l in _or[key].split('\n') if l.startswith('data: {')]
    pieces = [d for e in evs if e['choices'] for d in e['choices'][0]['delta'].get('reasoning_details') or []]
    if key=='o3_sse': return pieces  # (one encrypted item)
    sig = next(d['signature'] for d in pieces if d.get('signature'))
    return [{'type': 'reasoning.text', 'text': 'This is a simple arithmetic question. 2+2 equals 4.', 'signature': sig, 'format': 'anthropic-claude-v1', 'index': 0}]

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('key,model', [('claude_json', 'openrouter/anthropic/claude-sonnet-4.5'), ('claude_sse', 'openrouter/anthropic/claude-sonnet-4.5'),
                                       ('o3_sse', 'openrouter/openai/o3')])
def test_openrouter_reasoning_details_go_back(fake_provider, key, model, aio, tmp_path):
    """OpenRouter's `reasoning_details` (Claude's signed thinking, OpenAI's encrypted reasoning) go back on the assistant
    message, where OpenRouter reads them, streamed as not, also after save and load: litellm kept them inside
    `provider_specific_fields` (not streamed) or dropped them (streamed)"""
    fp = fake_provider.queue(_or_reply(key), 'second', 'third')
    chat = (AsyncChat if aio else Chat)(model, **oa(fp))
    _turn(chat, aio, key.endswith('_sse'), 'hi')
    _turn(chat, aio, False, 'next')
    sent = fp.requests[1].body['messages'][1]
    assert sent['reasoning_details'] == _or_details(key)
    assert 'reasoning_details' not in (sent.get('provider_specific_fields') or {})  # (sent once)
    save_chat(chat, tmp_path/'c.json')
    _turn(load_chat(tmp_path/'c.json', cls=type(chat), **oa(fp)), aio, False, 'again')
    assert fp.last['messages'][1]['reasoning_details'] == _or_details(key)

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('n', [1, 3])
def test_openrouter_gemini_tool_loop(fake_provider, stream, aio, n):
    """Gemini 3 through OpenRouter: each step of a tool loop goes back with the `reasoning_details` OpenRouter gave it (its
    thought signature); OpenRouter refused every loop at its second request ('Gemini models require OpenRouter reasoning
    details to be preserved in each request')"""
    fp = fake_provider
    def add(a:int, b:int=0) -> int:
        "Add"
        return a + b
    fp.queue(Reply(tool_calls=[('add', {'a': i}) for i in range(n)]), Reply(tool_calls=[('add', {'a': 9})]), 'done')
    chat = (AsyncChat if aio else Chat)('openrouter/google/gemini-3-flash-preview', tools=[add], **oa(fp))
    _turn(chat, aio, stream, 'go')
    assert chat.hist[-1].content == 'done'
    steps = [m for m in fp.last['messages'] if m.get('tool_calls')]
    assert [m['reasoning_details'][0]['id'] for m in steps] == [m['tool_calls'][0]['id'] for m in steps]

def test_odd_anthropic_stop_details(fake_provider):
    "A refusal whose `stop_details` (or a `message_delta` whose `delta`) is no object: the reply still reads (litellm 1.106's mends raised AttributeError)"
    fp = fake_provider
    fp.queue(Reply(raw=json.dumps({**_an_refusal, 'stop_details': 'oops'}).encode()), _an_stream_of({**_an_refusal, 'stop_details': ['x']}))
    c = Chat('anthropic/' + sonn45, **an(fp))
    assert stop_reason(c('do bad thing')) == 'content_filter'
    assert stop_reason(list(c('again', stream=True))[-1]) == 'content_filter'

def test_callkw_tools_generator_kept_for_every_request(fake_provider):
    "Provider tools given in `callkw` as a generator go with every request of a tool loop, not only the first"
    fp = fake_provider
    def add(a:int, b:int) -> int:
        "Add two numbers"
        return a+b
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})]), 'Three.')
    c = Chat('anthropic/claude-sonnet-4-5', tools=[add], callkw={'tools': (t for t in [{'type': 'web_fetch_20250910', 'name': 'web_fetch'}])}, **an(fp))
    c('add 1 and 2')
    assert [[t['name'] for t in r.body['tools']] for r in fp.requests] == [['add', 'web_fetch']]*2

@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('think', [None, 'l'])
def test_paused_search_goes_back_with_its_result(fake_provider, stream, think):
    "A search the pause left pending, run in the continuation: later requests send it beside its result (both were left out: litellm pairs them only within one message)"
    fp = fake_provider
    fp.queue(Reply('Let me search.', thinking=think and 'I should search.', web_search=[dict(query='otters', pending=True)], stop='pause_turn'),
             Reply('Otters swim.', web_search=[dict(query='otters', url='https://ex.com/o', title='Otters', cited_text='Otters swim.', resumes=True)]),
             Reply('Sure.'))
    c = Chat('anthropic/' + sonn45, search='l', **an(fp))
    r = c('Search otters', stream=stream, think=think)
    if stream: list(r)
    c('And?', think=think)
    blocks = fp.requests[2].body['messages'][1]['content']
    kinds = [b['type'] for b in blocks]
    assert ('server_tool_use' in kinds and 'web_search_tool_result' in kinds), kinds
    call, res = blocks[kinds.index('server_tool_use')], blocks[kinds.index('web_search_tool_result')]
    assert res['tool_use_id'] == call['id'] and kinds.index('web_search_tool_result') == kinds.index('server_tool_use')+1
    assert c.hist[-1].content == 'Sure.'

# --- Responses with store=False (OpenAI keeps no item: a reasoning item by id only is a 404)

def _add(a:int, b:int) -> int:
    "Add"
    return a + b

@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('how', ['callkw', 'call'])
def test_responses_store_false_reasoning_goes_back_whole(fake_provider, stream, how):
    "store=False with thinking: the request asks for the reasoning's encrypted content, so the tool loop and the next turn go (its reasoning item came back by id only, and OpenAI answered every later request 404)"
    fp = fake_provider
    fp.queue(Reply("", thinking="Add them.", tool_calls=[('_add', {'a': 2, 'b': 2})]), "4", "ok")
    chat = Chat('openai/responses/gpt-5.4', tools=[_add], api_base=fp.responses_base, api_key='k', callkw=dict(store=False) if how=='callkw' else None)
    kw = dict(store=False) if how=='call' else {}
    r = chat("What is 2+2?", think='h', stream=stream, **kw)
    if stream: list(r)
    assert chat('and?', **kw).choices[0].message.content == 'ok'
    assert [b.body.get('include') for b in fp.requests] == [['reasoning.encrypted_content']]*3
    sent = [o for o in fp.requests[1].body['input'] if o.get('type')=='reasoning']
    assert len(sent) == 1 and sent[0]['encrypted_content'] and 'include' in [a.kind for a in chat.adjustments]

def test_responses_store_false_include_merged(fake_provider):
    "The user's own `include` is kept, the encrypted content added to it (once)"
    fp = fake_provider
    fp.queue("a", "b")
    chat = Chat('openai/responses/gpt-5.4', api_base=fp.responses_base, api_key='k', callkw=dict(store=False, include=['message.output_text.logprobs']))
    chat('hi'); chat('again')
    assert [b.body['include'] for b in fp.requests] == [['message.output_text.logprobs', 'reasoning.encrypted_content']]*2
    assert chat.callkw['include'] == ['message.output_text.logprobs']  # (the chat's own setting unchanged)

def test_responses_store_false_history_by_id_only(fake_provider):
    "A history holding a reasoning item by id only (a reply while store was on) gets it left out under store=False, said so, the history keeps it: the chat no longer fails for good"
    fp = fake_provider
    fp.queue(Reply("", thinking="Add them.", tool_calls=[('_add', {'a': 2, 'b': 2})]), "4", "ok", "ok again")
    chat = Chat('openai/responses/gpt-5.4', tools=[_add], api_base=fp.responses_base, api_key='k')
    chat("What is 2+2?", think='h')
    for m in chat.hist:  # (as OpenAI gives them without `include`)
        for ri in _get(m, 'reasoning_items') or []: ri.pop('encrypted_content', None)
    chat.callkw['store'] = False
    with pytest.warns(AdjustmentWarning, match='reasoning item'): assert chat('and?').choices[0].message.content == 'ok'
    assert not [o for o in fp.last['input'] if o.get('type')=='reasoning']
    assert [a.kind for a in chat.adjustments if a.kind=='store'] == ['store']
    assert chat.hist[1].reasoning_items[0]['id'] == 'rs_fake1'  # (the history keeps it)
    assert chat('more').choices[0].message.content == 'ok again'

# --- Responses replies that cite files (recorded: tests/fixtures/openai_responses, see its SOURCE.md)

_RS_FX = os.path.join(os.path.dirname(__file__), 'fixtures', 'openai_responses')
def _rs_fx(name): return open(os.path.join(_RS_FX, name), 'rb').read()
def _rs_sse(name):
    "A recorded stream (one event a line) as the server-sent events OpenAI sends"
    return b''.join(f"event: {json.loads(l)['type']}\ndata: {l}\n\n".encode() for l in _rs_fx(name).decode().splitlines() if l.strip())

@pytest.mark.parametrize('name,kind', [('openai-file-search-tool.2', 'file_citation'), ('openai-code-interpreter-tool.1', 'container_file_citation')])
def test_responses_reply_citing_a_file(fake_provider, name, kind):
    "A reply whose text cites a file (file search) or a file the code interpreter made is delivered, the citation kept in provider_specific_fields: litellm's Message refused it, and the turn failed with APIConnectionError (the answer lost, not sent again)"
    fp = fake_provider
    body = json.loads(_rs_fx(f'{name}.json'))
    text = next(c['text'] for o in body['output'] if o['type']=='message' for c in o['content'])
    fp.queue(Reply(raw=json.dumps(body).encode()), "ok")
    chat = Chat('openai/responses/gpt-5-mini', api_base=fp.responses_base, api_key='k')
    m = chat('what does the file say?').choices[0].message
    assert m.content == text and [a['type'] for a in m.provider_specific_fields['annotations']] == [kind]
    assert not [a for a in getattr(m, 'annotations', None) or [] if a['type']!='url_citation']
    assert chat('thanks').choices[0].message.content == 'ok'  # (the message goes back)

def test_responses_stream_citing_a_file(fake_provider):
    "Streamed, the same kind of reply keeps its file citation too (litellm 1.110's builder: in provider_specific_fields; 1.106's: in annotations)"
    fp = fake_provider
    fp.queue(Reply(raw=_rs_sse('openai-file-search-tool.2.chunks.txt')), "ok")
    chat = Chat('openai/responses/gpt-5-mini', api_base=fp.responses_base, api_key='k')
    r = [o for o in chat('what does the file say?', stream=True) if isinstance(o, litellm.ModelResponse)][-1]
    m = r.choices[0].message
    anns = (m.provider_specific_fields or {}).get('annotations') or getattr(m, 'annotations', None) or []
    assert m.content.startswith('The document defines an embedding model') and [a['type'] for a in anns] == ['file_citation']
    assert chat('thanks').choices[0].message.content == 'ok'

# --- think= with a `reasoning` dict given (litellm sends it in place of reasoning_effort)

@pytest.mark.parametrize('how', ['callkw', 'call'])
def test_responses_think_with_reasoning_given(fake_provider, how):
    "think='h' with reasoning={'summary': 'auto'} given sends both the effort and the summary: the effort was lost without a word (litellm sends an explicit `reasoning` in place of `reasoning_effort`)"
    fp = fake_provider
    fp.queue(Reply('ok', thinking='because'))
    r = {'reasoning': {'summary': 'auto'}}
    chat = Chat('openai/responses/gpt-5.4', api_base=fp.responses_base, api_key='k', callkw=r if how=='callkw' else None)
    chat('hi', think='h', **({} if how=='callkw' else r))
    assert fp.last['reasoning'] == {'summary': 'auto', 'effort': 'high'}
    assert 'think' not in [a.kind for a in chat.adjustments]
    if how=='callkw': assert chat.callkw == r  # (the chat's own setting unchanged)

def test_responses_think_with_reasoning_effort_given(fake_provider):
    "A `reasoning` that sets its own effort is sent as given, and the chat says think= was not applied (it was dropped without a word)"
    fp = fake_provider
    fp.queue(Reply('ok', thinking='because'))
    chat = Chat('openai/responses/gpt-5.4', api_base=fp.responses_base, api_key='k', callkw=dict(reasoning={'effort': 'low', 'summary': 'auto'}))
    with pytest.warns(AdjustmentWarning, match="think='h' not applied"): chat('hi', think='h')
    assert fp.last['reasoning'] == {'effort': 'low', 'summary': 'auto'}

# --- OpenAI's insufficient_quota: a 429 that no retry can cure

_QUOTA = ("You exceeded your current quota, please check your plan and billing details. For more information on this error, "
          "read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.")

@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('model,base', [('openai/responses/gpt-5-nano', 'responses_base'), ('openai/gpt-4o-mini', 'openai_base')])
def test_quota_exhausted_not_retried(fake_provider, monkeypatch, model, base, stream):
    "OpenAI's insufficient_quota 429 is raised at once, with OpenAI's words: it was retried until retries ran out (credit does not come back by waiting)"
    import lisette.chat
    monkeypatch.setattr(lisette.chat, 'retry_backoff', 0.01)
    fp = fake_provider
    fp.queue(*[Reply(status=429, error=_QUOTA, headers={'retry-after': '0'})]*4)
    chat = Chat(model, api_base=getattr(fp, base), api_key='k', retries=3)
    with pytest.raises(litellm.RateLimitError, match='exceeded your current quota') as ei:
        r = chat('hi', stream=stream)
        if stream: list(r)
    assert len(fp.requests) == 1 and chat.hist == []
    if sys.version_info >= (3, 11): assert 'quota' in ' '.join(ei.value.__notes__)  # (lisette says why it was not retried)

def test_quota_exhausted_in_stream_not_retried(fake_provider, monkeypatch):
    "The same in a 2xx Responses stream (a recorded `error` event and `response.failed`): raised at once, not retried"
    import lisette.chat
    monkeypatch.setattr(lisette.chat, 'retry_backoff', 0.01)
    fp = fake_provider
    fp.queue(*[Reply(raw=_rs_sse('openai-error.1.chunks.txt'))]*4)
    chat = Chat('openai/responses/gpt-5-nano', api_base=fp.responses_base, api_key='k', retries=3)
    with pytest.raises(litellm.RateLimitError, match='exceeded your current quota'): list(chat('hi', stream=True))
    assert len(fp.requests) == 1 and chat.hist == []

def test_rate_limit_still_retried(fake_provider, monkeypatch):
    "An OpenAI rate limit (not the quota) is still retried"
    import lisette.chat
    monkeypatch.setattr(lisette.chat, 'retry_backoff', 0.01)
    fp = fake_provider
    fp.queue(Reply(status=429, error='Rate limit reached for gpt-5-nano in organization org-1 on tokens per min (TPM): Limit 200000, Used 199000. '
                                     'Please try again in 20ms. Visit https://platform.openai.com/account/rate-limits to learn more.'), 'ok')
    chat = Chat('openai/responses/gpt-5-nano', api_base=fp.responses_base, api_key='k')
    assert chat('hi').choices[0].message.content == 'ok' and len(fp.requests) == 2

# --- Gemini: tool schemas with oneOf / const (helper-45 finding 8)

_zod = {'type': 'function', 'function': {'name': 'pick', 'description': 'Pick a target', 'parameters': {'type': 'object', 'properties': {
    'target': {'oneOf': [{'type': 'string'}, {'type': 'object', 'properties': {'id': {'type': 'integer'}}}]},
    'mode': {'type': 'string', 'const': 'fast'}}, 'required': ['target']}}}

@pytest.mark.parametrize('stream', [False, True])
def test_gemini_tool_with_one_of_is_taken(fake_provider, stream):
    """A tool whose parameter is `oneOf` alternatives (as MCP servers written with zod give): litellm left the property
    with neither type nor alternatives, which Gemini refuses (the fake provider too, with Gemini's message); it goes as
    `anyOf`, its `const` as a one-value enum, and the chat says so"""
    fp = fake_provider
    fp.queue(Reply('ok', chunks=2 if stream else None))
    chat = Chat('gemini/gemini-2.5-flash', api_base=fp.gemini_base, api_key='k', callkw=dict(tools=[_zod]))
    with warnings.catch_warnings(record=True): r = chat('pick one', stream=stream)
    if stream: r = list(r)[-1]
    t = fp.last['tools'][0]
    props = (t.get('functionDeclarations') or t['function_declarations'])[0]['parameters']['properties']
    assert [o.get('type') for o in props['target']['anyOf']] == ['string', 'object'] and props['mode']['enum'] == ['fast']
    assert [a.kind for a in chat.adjustments if a.kind=='schema'] == ['schema', 'schema'], chat.adjustments
    assert _zod['function']['parameters']['properties']['target'].get('oneOf')  # (the tool given is left as it was)

def test_fake_gemini_refuses_a_typeless_property(fake_provider):
    "What the test above relies on: a property with neither type nor alternatives (what litellm makes of `oneOf`) is Gemini's 400, as Gemini says it"
    fp = fake_provider
    fp.queue('ok')
    with pytest.raises(litellm.BadRequestError, match=r"properties\[target\]\.type: must be specified when not using one_of, any_of or all_of fields"):
        litellm.completion('gemini/gemini-2.5-flash', user, tools=[_zod], api_base=fp.gemini_base, api_key='k')

# --- Perplexity's citations (helper-44 finding 5)

def _pplx_reply(stream):
    "Perplexity's recorded sonar reply citing 7 sources (vercel/ai packages/perplexity/src/__fixtures__/perplexity-citations.*, copied to tests/fixtures/vercel-ai_perplexity-citations.*)"
    from pathlib import Path
    d = Path(__file__).parent/'fixtures'
    if not stream: return Reply(raw=(d/'vercel-ai_perplexity-citations.json').read_bytes())
    lines = [l for l in (d/'vercel-ai_perplexity-citations.chunks.txt').read_text().splitlines() if l.strip()]
    return Reply(raw=b''.join(b'data: ' + l.encode() + b'\n\n' for l in lines) + b'data: [DONE]\n\n')

@pytest.mark.parametrize('stream', [False, True])
def test_perplexity_citations_link_their_sources(fake_provider, tmp_path, stream):
    """The `[2][3]` markers of Perplexity's reply link to the URLs it lists in `citations` (litellm keeps them beside the
    message, and not at all when streamed): shown, kept in the history and a saved chat; reported quietly"""
    fp = fake_provider
    fp.queue(_pplx_reply(stream), 'ok')
    chat = Chat('perplexity/sonar', api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        r = chat('SF population?', stream=stream)
        if stream: r = [o for o in r if hasattr(o, 'choices')][-1]
    text = chat.hist[-1].content
    assert '[[2]](https://en.wikipedia.org/wiki/San_Francisco)' in text and '[2]' not in text.replace('[[2]]', '')
    assert stream or '[[7]](https://worldpopulationreview.com/us-counties/california/san-francisco-county)' in text  # (the recorded stream ends sooner)
    assert '[[2]](https://en.wikipedia.org/wiki/San_Francisco)' in r._repr_markdown_()
    assert [a.kind for a in chat.adjustments if a.kind=='citations'] == ['citations']
    assert '[[2]](https://en.wikipedia.org' in Chat.load(chat.save(tmp_path/'c.json')).hist[-1].content
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        chat('And LA?')
    assert 'https://en.wikipedia.org/wiki/San_Francisco' in json.dumps(fp.last['messages'])  # the next request holds the sources too

_PPLX_COST = {'input_tokens_cost': 0.00001, 'output_tokens_cost': 0.000251, 'request_cost': 0.005, 'total_cost': 0.005261}

def test_perplexity_cost_breakdown_without_serializer_warning(fake_provider):
    """Perplexity's usage states its cost as a breakdown (a dict); litellm's reader left it in `Usage.cost`, a float field,
    and pydantic printed "Expected `float`" as litellm dumped the reply. Now no warning, and the cost is Perplexity's total
    (a reply not streamed: litellm's stream reader is generic, and still keeps a streamed reply's dict)"""
    from pathlib import Path
    fp = fake_provider
    b = json.loads((Path(__file__).parent/'fixtures'/'vercel-ai_perplexity-citations.json').read_text())
    b['usage'] |= {'cost': _PPLX_COST}
    fp.queue(Reply(raw=json.dumps(b).encode()))
    chat = Chat('perplexity/sonar', api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        r = chat('SF population?')
    assert not [w for w in ws if 'serializer' in str(w.message)], [str(w.message)[:200] for w in ws if 'serializer' in str(w.message)]
    assert chat.use.cost == pytest.approx(_PPLX_COST['total_cost'])
    assert (r.usage.cost, r.usage.cost_breakdown) == (_PPLX_COST['total_cost'], _PPLX_COST)

def test_perplexity_streamed_cost_breakdown_without_serializer_warning(fake_provider):
    """A streamed Perplexity reply whose chunks' usage states the cost breakdown (the shape Perplexity documents for its
    usage, in the recorded stream's chunks): litellm's generic stream reader kept the dict in `Usage.cost`, and pydantic
    printed "Expected `float`" for every chunk. Now quiet, and the cost is Perplexity's total, as not streamed"""
    fp = fake_provider
    lines = [json.loads(l) for l in _pplx_reply(True).raw.decode().split('\n\n') if l.startswith('data: {') for l in [l[6:]]]
    for c in lines: c['usage'] |= {'cost': _PPLX_COST}
    fp.queue(Reply(raw=b''.join(b'data: ' + json.dumps(c).encode() + b'\n\n' for c in lines) + b'data: [DONE]\n\n'))
    chat = Chat('perplexity/sonar', api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        r = [o for o in chat('SF population?', stream=True) if hasattr(o, 'choices')][-1]
    assert not [w for w in ws if 'serializ' in str(w.message)], [str(w.message)[:200] for w in ws if 'serializ' in str(w.message)]
    assert chat.use.cost == pytest.approx(_PPLX_COST['total_cost'])
    assert r.usage.cost == _PPLX_COST['total_cost']  # (litellm builds a stream's usage from declared fields: no breakdown)

# --- Groq replies not streamed (recorded: tests/fixtures/groq, see its SOURCE.md)

_GQ_FX = os.path.join(os.path.dirname(__file__), 'fixtures', 'groq')
def _gq_fx(name): return open(os.path.join(_GQ_FX, name), 'rb').read()

def test_groq_reply_without_service_tier(fake_provider):
    "A Groq reply without `service_tier` (recorded by pydantic-ai) is read: litellm's Groq reader failed on it with `'ModelResponse' object has no attribute 'service_tier'` (1.106.2 and 1.110.2), and the answer was lost (helper-44 finding 7)"
    fp = fake_provider
    body = json.loads(_gq_fx('pydantic-ai_test_groq_model_thinking_part.json'))
    assert 'service_tier' not in body
    fp.queue(Reply(raw=json.dumps(body).encode()))
    r = Chat('groq/deepseek-r1-distill-llama-70b', **oa(fp))('I want a recipe to cook Uruguayan alfajores.')
    assert r.choices[0].message.content == body['choices'][0]['message']['content']

def test_groq_reasoning_not_streamed(fake_provider):
    """A Groq reply not streamed (recorded by vercel/ai) has its reasoning in `message.reasoning`: litellm left it there
    (1.106.2 and 1.110.2), so the reply showed no reasoning and the field went back to Groq on the next request, where a
    streamed reply has it in `reasoning_content` (helper-44 finding 6). Now it is read as the stream reads it"""
    fp = fake_provider
    body = json.loads(_gq_fx('vercel-ai_groq-reasoning.json'))
    said = body['choices'][0]['message']['reasoning']
    fp.queue(Reply(raw=json.dumps(body).encode()), Reply('Yes.', thinking='It is.'))
    chat = Chat('groq/qwen/qwen3-32b', **oa(fp))
    m = chat('How many r in strawberry?').choices[0].message
    assert m.reasoning_content == said and 'reasoning' not in m.model_dump()
    streamed = list(chat('Sure?', stream=True))[-1].choices[0].message
    assert streamed.reasoning_content == 'It is.' and 'reasoning' not in streamed.model_dump()
    assert 'reasoning' not in fp.last['messages'][1]  # (litellm leaves reasoning_content out for Groq, as after a streamed reply)

# --- prefill on Mistral and DeepSeek

@pytest.mark.parametrize('model', ['mistral/mistral-small-latest', 'deepseek/deepseek-chat', 'deepseek/deepseek-v4-flash'])
@pytest.mark.parametrize('stream', [False, True])
def test_prefill_marked_for_mistral_and_deepseek(fake_provider, model, stream):
    """A prefill goes to Mistral and DeepSeek marked `prefix: true`, as their APIs want: it went unmarked, and Mistral
    answered 400 "Expected last role User or Tool (or Assistant with prefix True)" (helper-44 finding 1; the fake
    provider applies Mistral's rule). The reply starts with the prefill"""
    fp = fake_provider
    fp.queue(' 1}')
    r = Chat(model, **oa(fp))('Write JSON', prefill='{"a":', stream=stream)
    if stream: r = list(r)[-1]
    last = fp.last['messages'][-1]
    assert {k: last[k] for k in ('role', 'content', 'prefix') if k in last} == {'role': 'assistant', 'content': '{"a":', 'prefix': True}  # (DeepSeek V4, thinking: with `reasoning_content: ''` too)
    assert r.choices[0].message.content == '{"a": 1}'

def test_prefill_unmarked_elsewhere(fake_provider):
    "Anthropic's prefill goes as it was (litellm drops the mark there); other OpenAI-protocol routes get no `prefix` (a strict server would refuse an unknown field)"
    from lisette.providers import prefill_msg
    fp = fake_provider
    fp.queue(' 1}')
    Chat('anthropic/claude-sonnet-4-5', **an(fp))('Write JSON', prefill='{"a":')
    assert fp.last['messages'][-1]['content'] == [{'type': 'text', 'text': '{"a":'}]
    assert 'prefix' not in prefill_msg('openai/gpt-4o-mini', '{') and 'prefix' not in prefill_msg('fireworks_ai/accounts/fireworks/models/kimi-k2p6', '{')

# --- Mistral: no user message right after tool results

def _weather(location:str) -> str:
    "Get the weather for a location"
    return f"Sunny in {location}"

@pytest.mark.parametrize('stream', [False, True])
def test_mistral_final_prompt_after_tool_results(fake_provider, stream):
    """A Mistral tool loop that uses up `max_steps`: the final prompt went as a user message right after the tool result,
    which Mistral refuses ("Unexpected role 'user' after role 'tool'", datapizza-ai#98; helper-44 finding 2; the fake
    provider applies Mistral's rule), on that request and every later one. It goes at the end of the last result, reported"""
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('_weather', {'location': 'SF'})]), 'Sunny in SF.', 'Paris too.')
    chat = Chat('mistral/mistral-small-latest', tools=[_weather], **oa(fp))
    r = chat('Weather in SF?', max_steps=1, stream=stream)
    if stream: r = list(r)[-1]
    assert r.choices[0].message.content == 'Sunny in SF.'
    sent = fp.last['messages']
    assert [m['role'] for m in sent] == ['user', 'assistant', 'tool']
    assert sent[2]['content'].startswith('Sunny in SF\n\n') and sent[2]['content'].endswith(chat.hist[3]['content'])
    assert [a.detail for a in chat.adjustments if a.kind=='prompt_joined'] == ["1 prompt right after tool results sent at the end of the last result: mistral/mistral-small-latest refuses a user message after a tool message; the history keeps it"]
    assert [m['role'] if isinstance(m, dict) else m.role for m in chat.hist] == ['user', 'assistant', 'tool', 'user', 'assistant']
    chat('And Paris?')  # (the history's tool result, prompt: joined again)
    assert [m['role'] for m in fp.last['messages']] == ['user', 'assistant', 'tool', 'assistant', 'user']

# --- Kimi's reasoning_content on tool calls

@pytest.mark.parametrize('target', [kimi, 'openrouter/moonshotai/kimi-k2.6'])
def test_kimi_tool_calls_get_reasoning(fake_provider, target):
    """An Anthropic tool loop, then `chat.model` = a thinking Kimi model off `moonshot/`: the tool-call message went without
    `reasoning_content`, which Kimi refuses ("thinking is enabled but reasoning_content is missing in assistant tool call
    message"; helper-44 finding 4). It gets a space, as litellm gives it on `moonshot/`, reported; the history is unchanged"""
    fp = fake_provider
    fp.queue(Reply('Checking.', tool_calls=[('_weather', {'location': 'SF'})]), 'Sunny.', 'Paris too.')
    chat = Chat('anthropic/claude-sonnet-4-5', tools=[_weather], **an(fp))
    chat('Weather in SF?')
    chat.model, chat.api_base = target, fp.openai_base
    chat('And Paris?')
    calls = [m for m in fp.last['messages'] if m['role']=='assistant' and m.get('tool_calls')]
    assert calls and all(m.get('reasoning_content')==' ' for m in calls)
    assert [a.detail for a in chat.adjustments if a.kind=='reasoning'] == [f"1 tool-call message without reasoning_content sent with it (their provider fields' reasoning, or a space): {target} thinks, and refuses tool calls without it; the history is unchanged"]
    assert not getattr(chat.hist[1], 'reasoning_content', None)

def test_citation_markers_in_code_stay():
    "`xs[1]` in code (inline or fenced) is no citation: left as it is, while the marker after it is linked"
    from lisette.providers import link_citations
    m = litellm.Message(role='assistant', content='Index with `xs[1]`, as `a[2]` does.[2]\n```python\nys[1] = 0\n```\nSee [1].')
    assert link_citations(m, ['https://a.org/1', 'https://b.org/2']) == 2
    assert m.content == 'Index with `xs[1]`, as `a[2]` does.[[2]](https://b.org/2)\n```python\nys[1] = 0\n```\nSee [[1]](https://a.org/1).'

def test_gemini_tools_converted_once_per_schema():
    "A chat sends its tools in a new list each request: the same schema objects are converted once (the memo was keyed on the list, so it never hit; helper-50)"
    from lisette.providers import gemini_tools
    a, n = gemini_tools([_zod], 'gemini/gemini-2.5-flash')
    b, m = gemini_tools([_zod], 'gemini/gemini-2.5-flash')
    assert a[0] is b[0] and n == m and len(n) == 2

# --- Gemini: what a chat remembers of the messages it sent

_png = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==')

def _gm_dump(m):
    "Message `m` as it is, its tool calls' classes too (litellm's validation made them dicts)"
    if not hasattr(m, 'model_dump'): return json.loads(json.dumps(m))
    with warnings.catch_warnings(): warnings.simplefilter('ignore'); return m.model_dump(), [type(tc).__name__ for tc in m.tool_calls or ()]

@pytest.mark.parametrize('stream', [False, True])
def test_gemini_requests_leave_hist_alone_and_match_a_new_chat(fake_provider, stream):
    """A long Gemini chat's requests are those a new chat on a copy of its history sends (what it remembers of the
    messages it sent before changes no byte, and a message replaced in `chat.hist` is sent as it now is), and no
    request changes the history: tool calls with thought signatures, texts with them, an image, results with text parts"""
    fp = fake_provider
    def add(a:int, b:int=0) -> int:
        "Add"
        return a+b
    kw = dict(tools=[add], tool_reminder='Be brief.', api_base=fp.gemini_base, api_key='k')
    chat = Chat('gemini/gemini-2.5-flash', **kw)
    for i in range(5):  # 5 turns of 6 messages: the history outgrows what is read whole (20)
        fp.queue(Reply('Adding.', tool_calls=[('add', {'a': i, 'b': 2}), ('add', {'a': 3})], thinking='Two sums'), Reply(f'{i+2} and 3.', thinking='Done'))
        before = [_gm_dump(m) for m in chat.hist]
        r = chat([_png, f'What is this? And {i}+2, 3+0?'] if i==1 else f'And {i}+2, 3+0?', stream=stream)
        if stream: list(r)
        assert [_gm_dump(m) for m in chat.hist[:len(before)]] == before
    assert any(isinstance(m, litellm.Message) and m.tool_calls and m.tool_calls[0].provider_specific_fields for m in chat.hist)  # (signed calls)
    chat.hist[6] = chat.hist[6].model_copy(update={'content': 'Adding, again.'})  # replaced: sent as it now is
    h = copy.deepcopy(chat.hist)
    fp.queue('Bye.', 'Bye.')
    before = [_gm_dump(m) for m in chat.hist]
    r = chat('Thanks', stream=stream); list(r) if stream else r
    assert [_gm_dump(m) for m in chat.hist[:len(before)]] == before
    sent = fp.requests[-1].body
    r = Chat('gemini/gemini-2.5-flash', hist=h, **kw)('Thanks', stream=stream); list(r) if stream else r
    assert fp.requests[-1].body == sent
    assert 'Adding, again.' in json.dumps(sent)

_https_png = 'https://example.com/cat.png'

@pytest.fixture
def offline_fetch(monkeypatch):
    "litellm's URL fetchers answer `_png` as a data URL for any URL, and note it (no network; only they are replaced)"
    from litellm.litellm_core_utils.prompt_templates import factory, image_handling
    import litellm.llms.gemini.chat.transformation as ai_studio
    data, fetched = 'data:image/png;base64,' + base64.b64encode(_png).decode(), []
    def fetch(url, timeout=None): fetched.append(url); return data
    async def afetch(url, timeout=None): return fetch(url)
    monkeypatch.setattr(factory, 'convert_url_to_base64', fetch)  # (an image, AI Studio's sync path)
    monkeypatch.setattr(ai_studio, 'convert_url_to_base64', fetch)  # (a file)
    monkeypatch.setattr(image_handling, 'async_convert_url_to_base64', afetch)  # (both, the async path)
    return fetched

@pytest.mark.parametrize('aio', [False, True], ids=['sync', 'async'])
@pytest.mark.parametrize('stream', [False, True], ids=['plain', 'stream'])
@pytest.mark.parametrize('prior', [0, 20], ids=['new', 'long'])  # (a long history: the chat's memo of the messages it sent is used)
def test_gemini_turn_leaves_image_urls_in_hist(fake_provider, offline_fetch, aio, stream, prior):
    """An AI Studio (`gemini/`) turn keeps an `https` image or file in the history as its URL: litellm's sync path
    (`GoogleAIStudioGeminiConfig._transform_messages`, 1.106.2 and 1.110.2) fetches it and writes the data into the very
    part it was given, so the user's message, a tool's `ToolResponse` parts and `chat.hist` held base64 blobs after a
    turn (its async path copies first: the `async` cases pass without the fix too). litellm's URL fetchers are replaced
    by `offline_fetch` (no network), not `litellm.completion`: the request body is what litellm builds from the URL"""
    fp = fake_provider
    parts = [{'type': 'text', 'text': 'A cat.'}, {'type': 'image_url', 'image_url': {'url': _https_png}}]
    def pic() -> ToolResponse:
        "The picture"
        return ToolResponse(parts)
    user = {'role': 'user', 'content': [{'type': 'text', 'text': 'What is this? And show me the picture.'}, {'type': 'image_url', 'image_url': _https_png},
                                        {'type': 'file', 'file': {'file_id': 'https://example.com/cat.png', 'format': 'image/png'}}]}
    given = copy.deepcopy([user, parts])
    hist = [{'role': ('user', 'assistant')[i%2], 'content': f'Message {i}.'} for i in range(prior)]
    chat = (AsyncChat if aio else Chat)('gemini/gemini-2.5-flash', hist=hist, tools=[pic], api_base=fp.gemini_base, api_key='k')
    fp.queue(Reply('Looking.', tool_calls=[('pic', {})]), 'A cat, twice.', 'Yes.')
    _turn(chat, aio, stream, user)
    before, n = [_gm_dump(m) for m in chat.hist], len(offline_fetch)
    _turn(chat, aio, stream, 'Sure?')
    assert [user, parts] == given  # the user's own objects
    assert [_gm_dump(m) for m in chat.hist[:len(before)]] == before
    assert json.dumps(before).count(_https_png) == 3 and 'base64' not in json.dumps(before)
    blob = base64.b64encode(_png).decode()
    assert json.dumps(fp.requests[-1].body).count(blob) == 3  # (sent as litellm sends it: the fetched data, inline)
    assert _https_png in offline_fetch[n:]  # (fetched again on the second turn: the history still held the URL)

_code_parts = [{'text': 'Let me compute.'}, {'executableCode': {'language': 'PYTHON', 'code': 'print(2**10)'}},
               {'codeExecutionResult': {'outcome': 'OUTCOME_OK', 'output': '1024\n'}}, {'text': 'The answer is 1024.'}]

@pytest.mark.parametrize('stream', [False, True])
def test_gemini_code_execution_parts_kept(fake_provider, stream):
    "Gemini's code execution parts (the code it ran, what it printed) reach the reply's text and the history the next turn sends, streamed or not: litellm left them out"
    fp = fake_provider
    usage = {'promptTokenCount': 10, 'candidatesTokenCount': 20, 'totalTokenCount': 30}
    if stream:  # each part in an event of its own, as Gemini streams them
        evs = [{'candidates': [{'content': {'role': 'model', 'parts': [p]}, 'index': 0}]} for p in _code_parts]
        evs[-1]['candidates'][0]['finishReason'], evs[-1]['usageMetadata'] = 'STOP', usage
        rep = Reply(raw=b''.join(f"data: {json.dumps(e)}\r\n\r\n".encode() for e in evs), headers={'content-type': 'text/event-stream'})
    else: rep = Reply(raw=json.dumps({'candidates': [{'content': {'role': 'model', 'parts': _code_parts}, 'finishReason': 'STOP', 'index': 0}], 'usageMetadata': usage}).encode())
    fp.queue(rep, 'thanks')
    chat = Chat('gemini/gemini-2.5-flash', api_base=fp.gemini_base, api_key='k')
    r = chat('compute 2**10', stream=stream)
    if stream: r = [o for o in r][-1]
    text = 'Let me compute.\n\n```python\nprint(2**10)\n```\n\nOutput:\n```\n1024\n```\n\nThe answer is 1024.'
    assert contents(r).content == text
    chat('thanks')
    assert fp.last['contents'][1]['parts'][0]['text'] == text

def _gm_round(i):
    "A tool round as a chat keeps it: the question, a `Message` calling a tool (which a Gemini request copies), its result, the answer"
    call = litellm.Message(role='assistant', content=f'Looking {i} up.', tool_calls=[dict(id=f'c{i}', type='function', function=dict(name='lookup', arguments=f'{{"k": {i}}}'))])
    return [{'role': 'user', 'content': f'question {i}'}, call, {'role': 'tool', 'tool_call_id': f'c{i}', 'name': 'lookup', 'content': f'value {i}'},
            litellm.Message(role='assistant', content=f'answer {i}')]

def _gm_opcodes(f):
    "Python opcodes run by `f()`"
    n = 0
    def tr(frame, event, arg):
        nonlocal n
        frame.f_trace_opcodes = True
        if event=='opcode': n += 1
        return tr
    sys.settrace(tr)
    try: f()
    finally: sys.settrace(None)
    return n

def test_gemini_later_request_compares_copies_at_c_speed():
    """A later request of a long Gemini chat looks again only at the places where the last one held other messages,
    and compares the fields of the copies it sends again all at once: on 1,000 tool rounds it compared each copy in a
    Python loop (~29,000 opcodes a request, a third of the turn's)"""
    from lisette.providers import _gemini_messages
    h, memo = [o for i in range(1000) for o in _gm_round(i)], {}
    ask = lambda: _gemini_messages(dict(model='gemini/gemini-2.5-flash', messages=[{'role': 'system', 'content': 'Be brief.'}, *h]), memo)
    first = ask()['messages']
    h += [{'role': 'user', 'content': 'next'}]
    n = _gm_opcodes(lambda: ask())
    again = ask()['messages']
    assert all(again[i] is first[i] for i in range(1, 4001))  # (the copies sent before, sent again)
    assert n < 2000, n

def test_gemini_memo_sees_every_change():
    """What a Gemini request sends with the memo of the requests before it is what it sends without one, whatever
    changed in between: a message edited in place or replaced, messages swapped, cut, inserted (near the end: found
    from the last request's places; near the front: looked up by id), a user message with an image by URL (copied
    anew each request: litellm writes the fetched data into the copy)"""
    import random
    from litellm.utils import validate_and_fix_openai_messages
    from lisette.providers import _gemini_messages
    rng, memo, reused = random.Random(7), {}, 0
    h = [o for i in range(30) for o in _gm_round(i)]
    sent = lambda **k: _gemini_messages(dict(model='gemini/gemini-2.5-flash', messages=list(h)), **k)['messages']
    last = sent(memo=memo)
    for step in range(300):
        i, act = rng.randrange(len(h)), rng.choice(['edit', 'replace', 'swap', 'cut', 'insert', 'url', 'none'])
        if act=='edit':
            if isinstance(h[i], dict): h[i]['content'] = f'edited {step}'
            else: h[i].content = f'edited {step}'
        elif act=='replace': h[i] = h[i].model_copy(update={'content': f'new {step}'}) if isinstance(h[i], litellm.Message) else {**h[i], 'content': f'new {step}'}
        elif act=='swap': j = rng.randrange(len(h)); h[i], h[j] = h[j], h[i]
        elif act=='cut': del h[i]
        elif act=='insert': h[i:i] = _gm_round(100+step)
        elif act=='url': h[i] = {'role': 'user', 'content': [{'type': 'text', 'text': f'see {step}'}, {'type': 'image_url', 'image_url': {'url': 'https://example.com/cat.png'}}]}
        got, want = sent(memo=memo), sent()
        assert [o is not m for o, m in zip(got, h)] == [o is not m for o, m in zip(want, h)], (step, act, i)  # (copied where a new request copies)
        assert not any(o is p for o, m in zip(got, h) if isinstance(m, dict) and isinstance(m['content'], list) for p in last), (step, act, i)  # (an image's copy is made anew)
        reused += sum(o is p and o is not m for o, p, m in zip(got, last, h))
        with warnings.catch_warnings():  # what litellm makes of them (it changes the copies it is given in place, as it would in a request)
            warnings.simplefilter('ignore')
            assert validate_and_fix_openai_messages(got) == validate_and_fix_openai_messages(want), (step, act, i)
        last = got
    assert reused > 1000  # (the memo was used: most copies were sent again)
