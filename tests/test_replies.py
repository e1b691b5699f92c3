"""Replies a provider sends that would make the history invalid (reused, missing or odd tool-call ids, `tool_calls: []`,
no choices, a call cut off mid-arguments), and requests litellm cannot build: through the fake provider."""
import json, time, warnings
import pytest, litellm
import lisette.chat
from lisette import *
from lisette.chat import EmptyReplyError
from lisette.history import check_hist
from lisette.messages import _role
from lisette.testing import Reply

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

def _call_ids(hist): return [tc.id for m in hist if _role(m)=='assistant' and m.tool_calls for tc in m.tool_calls]

def _quiet(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return f(*args, **kw)

@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('name', ['openai', 'anthropic'])  # (Gemini's calls carry no id litellm keeps; Responses' litellm takes from the item)
def test_reused_call_ids_get_their_own(fake_provider, name, stream):
    "A provider that numbers its calls afresh each reply ('call_0' twice): the second call gets a new id before its tool runs; the turn and the next one work"
    fp = fake_provider
    m, kw = {'openai': 'openai/gpt-4o-mini', 'anthropic': 'anthropic/claude-sonnet-4-5'}[name], dict(api_base=getattr(fp, name+'_base'), api_key='k')
    fp.queue(Reply(tool_calls=[dict(name='add', arguments={'a': 1, 'b': 2}, id='call_0')]),
             Reply(tool_calls=[dict(name='add', arguments={'a': 3, 'b': 4}, id='call_0')]), 'done', 'again')
    chat = Chat(m, tools=[add], **kw)
    r = _quiet(chat, 'go', max_steps=5, stream=stream)
    if stream: list(r)
    ids = _call_ids(chat.hist)
    assert ids[0]=='call_0' and len(set(ids))==2, ids
    assert [tr['tool_call_id'] for tr in chat.hist if _role(tr)=='tool'] == ids
    assert check_hist(chat.hist) is None
    assert [a for a in chat.adjustments if a.kind=='tool_call_id'][0].detail.startswith("the reply's add call: its id 'call_0' is already used")
    assert contents(_quiet(chat, 'and now?')).content == 'again'  # the provider took the history
    assert Chat(m, hist=chat.hist).hist == chat.hist  # and the history is valid as a whole (it was not, before)

def test_reused_call_ids_across_turns(fake_provider, tmp_path):
    "Ids reused in a later turn are renamed too, so the chat saves and loads again"
    fp = fake_provider
    fp.queue(Reply(tool_calls=[dict(name='add', arguments={'a': 1}, id='call_0')]), 'one',
             Reply(tool_calls=[dict(name='add', arguments={'a': 2}, id='call_0')]), 'two')
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    _quiet(chat, 'first'); _quiet(chat, 'second')
    assert len(set(_call_ids(chat.hist))) == 2
    assert load_chat(chat.save(tmp_path/'c.json')).hist == chat.hist

def _oa_body(msg, finish='tool_calls', choices=None):
    return json.dumps({'id': 'chatcmpl-x', 'object': 'chat.completion', 'created': 1, 'model': 'gpt-4o-mini',
                       'choices': [{'index': 0, 'message': msg, 'finish_reason': finish}] if choices is None else choices,
                       'usage': {'prompt_tokens': 7, 'completion_tokens': 3, 'total_tokens': 10}}).encode()

@pytest.mark.parametrize('tid', ['', 5])
def test_missing_or_odd_call_id(fake_provider, tid):
    "A call with an empty or non-string id gets one, before its tool runs: its result answers it, and OpenAI takes the history"
    fp = fake_provider
    fp.queue(Reply(raw=_oa_body({'role': 'assistant', 'content': None, 'tool_calls': [
        {'id': tid, 'type': 'function', 'function': {'name': 'add', 'arguments': '{"a": 1, "b": 2}'}}]})), 'three')
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    assert contents(_quiet(chat, 'go')).content == 'three'
    new = _call_ids(chat.hist)[0]
    assert isinstance(new, str) and new.startswith('call_') and chat.hist[2]['tool_call_id'] == new and chat.hist[2]['content'] == '3'
    assert fp.last['messages'][1]['tool_calls'][0]['id'] == new
    assert [a.kind for a in chat.adjustments if a.kind=='tool_call_id'] == ['tool_call_id']

def test_empty_tool_calls_list_not_sent_back(fake_provider):
    "A reply with `tool_calls: []` (some OpenAI-compatible servers) is stored without it: OpenAI rejects the empty list in a request"
    fp = fake_provider
    fp.queue(Reply(raw=_oa_body({'role': 'assistant', 'content': 'Hello', 'tool_calls': []}, 'stop')), 'fine')
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    _quiet(chat, 'hi')
    assert not chat.hist[1].tool_calls
    assert contents(_quiet(chat, 'more')).content == 'fine'
    assert 'tool_calls' not in fp.last['messages'][1]

def test_no_choices(fake_provider):
    "A 200 reply with `choices: []`: EmptyReplyError, sent once, its usage counted, the history as it was"
    fp = fake_provider
    fp.queue(Reply(raw=_oa_body(None, choices=[])), 'never sent')
    chat = Chat('openai/gpt-4o-mini', retries=3, api_base=fp.openai_base, api_key='k')
    with pytest.raises(EmptyReplyError, match='answered with no choices'): _quiet(chat, 'hi')
    assert (len(fp.requests), chat.hist, chat.use.prompt_tokens) == (1, [], 7)

def _cut_off_stream():
    "An Anthropic stream whose tool call is cut off by max_tokens in the middle of its arguments"
    ev = lambda e, d: f"event: {e}\ndata: {json.dumps(d)}\n\n"
    return ''.join([
        ev('message_start', {'type': 'message_start', 'message': {'id': 'msg_1', 'type': 'message', 'role': 'assistant', 'model': 'claude-sonnet-4-5',
            'content': [], 'stop_reason': None, 'stop_sequence': None, 'usage': {'input_tokens': 10, 'output_tokens': 1}}}),
        ev('content_block_start', {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'tool_use', 'id': 'toolu_01', 'name': 'add', 'input': {}}}),
        ev('content_block_delta', {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': '{"a": 1, "b'}}),
        ev('content_block_stop', {'type': 'content_block_stop', 'index': 0}),
        ev('message_delta', {'type': 'message_delta', 'delta': {'stop_reason': 'max_tokens', 'stop_sequence': None}, 'usage': {'output_tokens': 5}}),
        ev('message_stop', {'type': 'message_stop'})]).encode()

def test_cut_off_call_does_not_wedge_the_chat(fake_provider):
    "A call cut off mid-arguments stays in the history as sent; Anthropic gets `{}` for it (litellm cannot convert it), said in adjustments"
    fp = fake_provider
    fp.queue(Reply(raw=_cut_off_stream()), 'after the cut', 'and again', 'and more')
    chat = Chat('anthropic/claude-sonnet-4-5', tools=[add], api_base=fp.anthropic_base, api_key='k')
    _quiet(lambda: list(chat('add 1 and 2', stream=True)))
    assert chat.hist[1].tool_calls[0].function.arguments == '{"a": 1, "b'
    for q in ('next', 'more'): _quiet(chat, q)  # every later turn works
    sent = fp.last['messages'][1]['content']
    assert [b['input'] for b in sent if b['type']=='tool_use'] == [{}]
    # (reported as 'switch' before, though the chat never left Anthropic: the call was cut off where it was made)
    assert any(a.kind=='tool_args' and 'not a JSON object' in a.detail for a in chat.adjustments)
    assert not [a for a in chat.adjustments if a.kind=='switch']

def test_non_object_arguments_after_a_switch_are_a_switch_note(fake_provider):
    "Arguments OpenAI took as they are (`[1, 2]`), sent to Anthropic as `{}` after a switch: the switch caused it, so a 'switch' note"
    fp = fake_provider
    fp.queue(Reply('', tool_calls=[dict(name='add', arguments='[1, 2]')]), 'done', 'next')
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    _quiet(chat, 'add')
    chat.model, chat.api_base = 'anthropic/claude-sonnet-4-5', fp.anthropic_base
    _quiet(chat, 'more')
    assert [b['input'] for b in fp.last['messages'][1]['content'] if b['type']=='tool_use'] == [{}]
    assert any(a.kind=='switch' and 'not a JSON object' in a.detail for a in chat.adjustments)
    assert not [a for a in chat.adjustments if a.kind=='tool_args']

@pytest.mark.parametrize('stream', [False, True])
def test_responses_call_cut_off_after_reasoning_keeps_the_order(fake_provider, stream):
    """A Responses reply [reasoning, function_call] cut off at max_output_tokens: the cut-off warning is not written into
    the reply, where litellm would send it between the reasoning item and its call (OpenAI refuses that on every later
    request); it is reported instead, and the loop and later turns go on"""
    fp = fake_provider
    fp.queue(Reply(thinking='Planning', tool_calls=[('add', {'a': 1, 'b': 2})], stop='length'), 'ok', 'fine')
    chat = Chat('openai/responses/gpt-5.4', tools=[add], api_base=fp.responses_base, api_key='k')
    r = _quiet(chat, 'add 1 and 2', think='l', stream=stream)
    if stream: r = list(r)[-1]
    assert any(a.kind=='reply' and a.detail.startswith('Response was cut off at token limit.') for a in chat.adjustments)
    assert contents(r).content == 'ok' and contents(_quiet(chat, 'next')).content == 'fine'
    assert [it.get('type') for it in fp.requests[1].body['input']] == ['message', 'reasoning', 'function_call', 'function_call_output']

@pytest.mark.parametrize('model,base', [('openai/gpt-4o-mini', 'openai_base'), ('openai/responses/gpt-5.4', 'responses_base'),
                                        ('gemini/gemini-3-flash-preview', 'gemini_base')])
def test_unbuildable_request_not_retried(fake_provider, model, base, monkeypatch):
    "A request litellm cannot build (a lone surrogate in the system prompt): raised at once, nothing sent, no backoff"
    fp = fake_provider
    chat = Chat(model, sp='Be \ud800 brief', retries=3, api_base=getattr(fp, base), api_key='k')
    delays, orig = [], lisette.chat._retry_delay
    monkeypatch.setattr(lisette.chat, '_retry_delay', lambda *a: delays.append(orig(*a)) or delays[-1])
    with pytest.raises(Exception, match='surrogates not allowed'): _quiet(chat, 'hi')
    assert (len(fp.requests), chat.hist, delays) == (0, [], [None])  # asked once, and no backoff: given up at once

def _oa_sse(*deltas):
    base = {'id': 'chatcmpl-x', 'object': 'chat.completion.chunk', 'created': 1, 'model': 'gpt-4o-mini'}
    return (''.join(f"data: {json.dumps({**base, 'choices': [{'index': 0, 'delta': d, 'finish_reason': f}]})}\n\n" for d,f in deltas)
            + "data: [DONE]\n\n").encode()

@pytest.mark.parametrize('cls', [Chat, AsyncChat])
async def test_streamed_call_without_id(fake_provider, cls):
    "A streamed tool call that starts with `\"id\": \"\"` (LM Studio and others): litellm dropped it, losing the call; now it gets an id, runs, and is reported"
    fp = fake_provider
    fp.queue(Reply(raw=_oa_sse(({'role': 'assistant', 'tool_calls': [{'index': 0, 'id': '', 'type': 'function', 'function': {'name': 'add', 'arguments': ''}}]}, None),
                               ({'tool_calls': [{'index': 0, 'function': {'arguments': '{"a": 1, "b": 2}'}}]}, None), ({}, 'tool_calls'))), 'three')
    chat = cls('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        r = chat('add', stream=True)
        if cls is AsyncChat: [o async for o in await r]
        else: list(r)
    tid = _call_ids(chat.hist)[0]
    assert tid.startswith('call_') and len(tid) == 29  # OpenAI's style, as the stream is an OpenAI-compatible server's (not Anthropic's `toolu_`)
    assert chat.hist[2] == {'tool_call_id': tid, 'role': 'tool', 'name': 'add', 'content': '3'}
    assert any(a.kind=='tool_call_id' and 'came without an id' in a.detail for a in chat.adjustments)
    assert fp.last['messages'][1]['tool_calls'][0]['id'] == tid

@pytest.mark.parametrize('model,prefix', [('openai/gpt-4o-mini', 'call_'), ('openai/claude-sonnet-4-5', 'toolu_')])
def test_stream_with_complete_call_id_style(fake_provider, model, prefix):
    "`stream_with_complete` on a raw litellm stream (no model passed): an id-less call gets an id in the style of the model its chunks name"
    fp = fake_provider
    fp.queue(Reply(raw=_oa_sse(({'role': 'assistant', 'tool_calls': [{'index': 0, 'id': '', 'type': 'function', 'function': {'name': 'add', 'arguments': '{}'}}]}, None),
                               ({}, 'tool_calls'))))
    g = stream_with_complete(litellm.completion(model, [{'role': 'user', 'content': 'add'}], stream=True, api_base=fp.openai_base, api_key='k'))
    try:
        while True: next(g)
    except StopIteration as e: r = e.value
    assert r.choices[0].message.tool_calls[0].id.startswith(prefix)

@pytest.mark.parametrize('finish', ['MALFORMED_FUNCTION_CALL', 'MODEL_ARMOR'])
@pytest.mark.parametrize('stream', [False, True])
def test_gemini_malformed_call_warns(fake_provider, stream, finish):
    """Gemini's MALFORMED_FUNCTION_CALL (litellm says 'stop'): the reply carries a warning saying no tool was called, not a
    bare '.'; streamed too (litellm's chunks carry no native reason: it is read from Gemini's events), as real ones come, with a `finishMessage`"""
    fp = fake_provider
    ev = {'candidates': [{'finishReason': finish, 'finishMessage': "Malformed function call: print(default_api.add(a=1, b=2)", 'index': 0}],
          'modelVersion': 'gemini-3-flash-preview', 'usageMetadata': {'promptTokenCount': 5, 'candidatesTokenCount': 1, 'totalTokenCount': 6}}
    fp.queue(Reply(raw=b'data: '+json.dumps(ev).encode()+b'\r\n\r\n', headers={'content-type': 'text/event-stream'}) if stream else Reply(raw=json.dumps(ev).encode()))
    chat = Chat('gemini/gemini-3-flash-preview', tools=[add], api_base=fp.gemini_base, api_key='k')
    r = _quiet(chat, 'add 1 and 2', stream=stream)
    if stream: r = _quiet(list, r)[-1]
    elif not (r.choices[0].provider_specific_fields or {}).get('native_finish_reason'): pytest.skip("this litellm keeps no native finish reason")
    assert f'({finish})' in contents(r).content and check_hist(chat.hist) is None  # (MODEL_ARMOR: a real Vertex reply's finish)

def test_reply_call_without_name(fake_provider):
    "A reply's call with an empty tool name: named 'unnamed_tool', answered as an unknown tool, and the next request is one OpenAI takes"
    fp = fake_provider
    fp.queue(Reply(raw=_oa_body({'role': 'assistant', 'content': None, 'tool_calls': [
        {'id': 'call_1', 'type': 'function', 'function': {'name': '', 'arguments': '{}'}}]})), 'sorry', 'fine')
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    _quiet(chat, 'go')
    assert any(a.kind=='tool_call' for a in chat.adjustments)
    _quiet(chat, 'again')
    assert chat.hist[1].tool_calls[0].function.name == 'unnamed_tool' and chat.hist[2]['tool_call_id'] == 'call_1'
    assert fp.last['messages'][1]['tool_calls'][0]['function']['name'] == 'unnamed_tool' and check_hist(chat.hist) is None

@pytest.mark.parametrize('mode', ['plain', 'stream', 'astream'])
def test_call_without_name_on_every_route(proto, mode):
    "A call with an empty name, streamed or not, on every protocol: kept as 'unnamed_tool' and answered (litellm's stream builder dropped it, a lost request)"
    import asyncio
    fp, m, kw = proto
    fp.queue(Reply("I'll call it", tool_calls=[dict(name='', arguments='{"a": 1, "b": 2}')]), "ok")
    chat = (AsyncChat if mode=='astream' else Chat)(m, tools=[add], **kw)
    async def arun(): return [o async for o in await chat("go", stream=True)]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        if mode=='astream': asyncio.run(arun())
        elif mode=='stream': list(chat("go", stream=True))
        else: chat("go")
    tc = chat.hist[1].tool_calls[0]
    assert tc.function.name == 'unnamed_tool' and json.loads(tc.function.arguments) == {'a': 1, 'b': 2} and len(fp.requests) == 2
    assert chat.hist[2]['tool_call_id'] == tc.id and 'not' in chat.hist[2]['content'].lower() and chat.hist[-1].content == 'ok'
    assert [a.kind for a in chat.adjustments if a.kind=='tool_call'] == ['tool_call'] and check_hist(chat.hist) is None

def test_streamed_call_named_in_a_later_delta(fake_provider):
    "A streamed call whose first delta has its id but no name, the name coming next: the call keeps its name and runs"
    import itertools
    from lisette.testing import _oa_sse
    fp = fake_provider
    evs = _oa_sse(Reply(tool_calls=[('add', {'a': 1, 'b': 2})]), {'model': 'gpt-4o-mini'}, 1, [('call_1', 'add', '{"a": 1, "b": 2}')])
    evs = [e.replace(b'"name": "add"', b'"name": null') if b'"id": "call_1"' in e else e for e in evs]
    late = b'data: ' + json.dumps({'id': 'chatcmpl-fake1', 'object': 'chat.completion.chunk', 'created': 1, 'model': 'gpt-4o-mini', 'choices': [
        {'index': 0, 'delta': {'tool_calls': [{'index': 0, 'function': {'name': 'add'}}]}, 'finish_reason': None}]}).encode() + b'\n\n'
    first = next(i for i,e in enumerate(evs) if b'"id": "call_1"' in e)
    fp.queue(Reply(raw=b''.join(evs[:first+1] + [late] + evs[first+1:]), headers={'content-type': 'text/event-stream'}), "3")
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    list(chat("add", stream=True))
    assert chat.hist[1].tool_calls[0].function.name == 'add' and chat.hist[2]['content'] == '3'
    assert not any(a.kind=='tool_call' for a in chat.adjustments)

def test_server_error_saying_timed_out_is_retried(fake_provider):
    "A 500 whose message is 'timed out' is the provider's error, retried as any 500 (not taken for the chat's own time limit)"
    fp = fake_provider
    fp.queue(Reply(status=500, error='timed out'), "fine")
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k', retries=2)
    assert contents(_quiet(chat, "hi")).content == "fine" and len(fp.requests) == 2

def test_first_request_bound_counts_reasoning(fake_provider):
    "A loaded history whose tool-call message carries long reasoning text is bounded with it: the context warning still comes before sending"
    from litellm import Message
    from lisette.tools import mk_tc, mk_tc_results
    from lisette.context import ContextWindowWarning
    q = Message(content='Adding.', role='assistant', reasoning_content='Let me think. '*50_000, tool_calls=[mk_tc(add, a=1, b=2)])
    hist = mk_msgs(['Add 1 and 2', q, *mk_tc_results(q, ['3']), 'It is 3.'])  # dicts and a `Message`: the shapes Chat takes in one pass
    chat = Chat('deepseek/deepseek-chat', hist=hist, api_base=fake_provider.openai_base, api_key='k')
    fake_provider.queue('ok')
    with pytest.warns(ContextWindowWarning, match='takes'): _quiet_except_context(chat, 'next')

def _quiet_except_context(chat, msg):
    from lisette.chat import AdjustmentWarning
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', AdjustmentWarning)
        return chat(msg)

@pytest.mark.parametrize('name', ['openai', 'anthropic'])
def test_bad_gateway_is_retried(fake_provider, name):
    "A 502 from the provider (or a proxy in front of it) is retried like a 500 or 503"
    fp = fake_provider
    m = {'openai': 'openai/gpt-4o-mini', 'anthropic': 'anthropic/claude-sonnet-4-5'}[name]
    fp.queue(Reply(status=502, error='bad gateway'), 'ok')
    chat = Chat(m, retries=2, api_base=getattr(fp, name+'_base'), api_key='k')
    assert contents(_quiet(chat, 'hi')).content == 'ok' and len(fp.requests) == 2

def test_call_ids_follow_history_edits(fake_provider):
    "The ids a reply's calls are checked against follow the history as it is now: after the round with 'call_0' is removed, 'call_0' is free again"
    fp = fake_provider
    fp.queue(Reply(tool_calls=[dict(name='add', arguments={'a': 1}, id='call_0')]), 'one',
             Reply(tool_calls=[dict(name='add', arguments={'a': 2}, id='call_0')]), 'two')
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    _quiet(chat, 'first')
    chat.hist = chat.hist[:0]
    _quiet(chat, 'second')
    assert _call_ids(chat.hist) == ['call_0'] and not [a for a in chat.adjustments if a.kind=='tool_call_id']

_absurd = [('openai', 10**400), ('openai', -5), ('openai', 10**13), ('anthropic', 10**400), ('anthropic', 1e308)]  # (litellm refuses a float count from OpenAI itself)

@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('name,bad', _absurd, ids=lambda o: o if isinstance(o, str) else '10**400' if o==10**400 else repr(o))
def test_impossible_usage_does_not_break_later_turns(fake_provider, name, bad, stream):
    "A reply whose usage holds an impossible prompt token count: counted as unknown (no tokens, no cost), reported once, and the next turns work"
    from lisette.chat import AdjustmentWarning
    fp = fake_provider
    m = {'openai': 'openai/gpt-4o-mini', 'anthropic': 'anthropic/claude-sonnet-4-5'}[name]
    fp.queue(Reply('one', usage={'input': bad, 'output': 5}), 'two', 'three')
    chat = Chat(m, max_cost=1, api_base=getattr(fp, name+'_base'), api_key='k')
    def ask(msg):
        r = chat(msg, stream=stream)
        return contents(list(r)[-1] if stream else r).content
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        assert [ask('hi'), ask('again'), ask('more')] == ['one', 'two', 'three']  # (10**400 broke the second turn: OverflowError)
    assert 5 < chat.use.prompt_tokens < 100 and 0 < chat.use.cost < 0.01  # the impossible count added neither tokens nor cost
    assert not [a for a in chat.adjustments if a.kind=='cost_limit'] and chat._ctx[0] == len(chat.hist)  # the provider's counts bound the context again
    usage = [str(w.message) for w in ws if issubclass(w.category, AdjustmentWarning) and 'usage' in str(w.message)]
    assert len(usage) == 1 and 'reported impossible usage (prompt_tokens=' in usage[0] and 'the context bound keeps its own estimate' in usage[0]

# ---- OpenAI's refusal: content null, the words in `refusal` (streamed as `delta.refusal`, which litellm dropped)

@pytest.mark.parametrize('use_async', [False, True])
@pytest.mark.parametrize('stream', [False, True])
def test_openai_refusal(fake_provider, stream, use_async):
    "The refusal's words are the reply (not '.'), show while streaming, go back to OpenAI as the refusal they are and to Claude as text"
    import asyncio
    fp = fake_provider
    fp.queue(Reply(refusal="I can't help with that.", chunks=3), 'Because it could cause harm.', 'Still no.')
    kw = dict(api_base=fp.openai_base, api_key='k')
    if use_async:
        async def go():
            chat = AsyncChat('openai/gpt-4o-mini', **kw)
            if stream: items = [o async for o in await chat('Do a bad thing', stream=True)]
            else: items = [await chat('Do a bad thing')]
            return chat, items
        chat, items = asyncio.run(go())
    else:
        chat = Chat('openai/gpt-4o-mini', **kw)
        items = list(chat('Do a bad thing', stream=True)) if stream else [chat('Do a bad thing')]
    if stream: assert ''.join(StreamFormatter().format_stream(items)).startswith("I can't help with that.")
    r = items[-1]
    assert contents(r).content == "I can't help with that." and chat.hist[1].content == "I can't help with that."
    assert "I can't help with that." in r._repr_markdown_()
    ask = (lambda q: asyncio.run(chat(q))) if use_async else chat
    ask('Why not?')
    assert fp.last['messages'][1] == {'role': 'assistant', 'content': "I can't help with that.", 'refusal': "I can't help with that."}
    chat.model, chat.api_base = 'anthropic/claude-sonnet-4-5', fp.anthropic_base
    ask('And now?')
    assert fp.last['messages'][1] == {'role': 'assistant', 'content': [{'type': 'text', 'text': "I can't help with that."}]}
    check_hist(chat.hist)

def test_refusal_stream_reproducer_matches_litellm():
    "The guard's reproducer says what the installed litellm does (it drops refusal-only chunks in 1.106 and 1.110)"
    from lisette.providers import _refusal_stream_drops
    assert _refusal_stream_drops() is True

def _sends_refusal_echo():
    "Does the installed litellm put `refusal: None` in each OpenAI reply's `provider_specific_fields` (1.106: yes, 1.110: no)?"
    from litellm import ModelResponse
    from litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response import convert_to_model_response_object
    r = convert_to_model_response_object({'id': 'x', 'object': 'chat.completion', 'created': 1, 'model': 'gpt-4o-mini', 'choices': [
        {'index': 0, 'finish_reason': 'stop', 'message': {'role': 'assistant', 'content': 'hi', 'refusal': None}}]}, ModelResponse())
    return 'refusal' in (r.choices[0].message.provider_specific_fields or {})

@pytest.mark.parametrize('where', ['openai', 'openai api_base', 'mistral'])
def test_provider_fields_sent_back(fake_provider, monkeypatch, where):
    """litellm 1.106 keeps `refusal: None` in each OpenAI reply's `provider_specific_fields` and sends it back with the
    history. OpenAI gets it back as the original lisette sends it (OpenAI takes it: the original's recorded traffic holds
    it, and a replay of that traffic matches it). A server that may not be OpenAI (an `openai/` model with an `api_base`:
    vLLM, LM Studio, ...; Mistral) gets none: servers speaking OpenAI's protocol that check their input (e.g. Fireworks)
    reject the field. A refusal's words go back in the `refusal` field to OpenAI only."""
    fp = fake_provider
    fp.queue('hello', Reply(refusal='No.'), 'ok')
    if where=='openai':  # a chat whose requests go to OpenAI itself (here the fake stands in for it)
        monkeypatch.setattr(Chat, '_to_openai', property(lambda self: True))
    chat = Chat('mistral/mistral-small-latest' if where=='mistral' else 'openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    chat('hi'); chat('bad'); chat('why')
    sent = [m for m in fp.last['messages'] if m['role']=='assistant']
    assert [m.get('provider_specific_fields') for m in sent] == [{'refusal': None} if where=='openai' and _sends_refusal_echo() else None, None]  # (a refusal's words: in its field)
    assert [m.get('refusal') for m in sent] == ([None, 'No.'] if where.startswith('openai') else [None, None])
    assert sent[1]['content'] == 'No.'

def test_to_openai(monkeypatch):
    "Which chats send their requests to OpenAI itself: an OpenAI model, no other server named in the chat, in litellm or in OpenAI's environment variables"
    for v in ('OPENAI_BASE_URL', 'OPENAI_API_BASE'): monkeypatch.delenv(v, raising=False)
    assert Chat('openai/gpt-4o-mini')._to_openai and Chat('gpt-4o-mini')._to_openai
    assert not Chat('openai/gpt-4o-mini', api_base='http://localhost:8000/v1')._to_openai and not Chat('mistral/mistral-small-latest')._to_openai
    assert not Chat('openai/gpt-4o-mini', callkw={'base_url': 'http://localhost:8000/v1'})._to_openai
    monkeypatch.setenv('OPENAI_BASE_URL', 'https://api.openai.com/v1'); assert Chat('openai/gpt-4o-mini')._to_openai
    monkeypatch.setenv('OPENAI_BASE_URL', 'http://localhost:8000/v1'); assert not Chat('openai/gpt-4o-mini')._to_openai
    monkeypatch.delenv('OPENAI_BASE_URL'); monkeypatch.setattr(litellm, 'api_base', 'http://localhost:8000/v1')
    assert not Chat('openai/gpt-4o-mini')._to_openai

def test_refusal_echo_left_out_when_the_server_changes(fake_provider, monkeypatch):
    "A history made with OpenAI keeps the echo; once the chat's requests go elsewhere (here another api_base) it is left out at send time"
    fp = fake_provider
    fp.queue('hello', 'ok')
    monkeypatch.setattr(Chat, '_to_openai', property(lambda self: self.api_base is None))
    chat = Chat('openai/gpt-4o-mini', completefunc=lambda **kw: litellm.completion(**(kw | dict(api_base=fp.openai_base, api_key='k'))))
    chat('hi')
    if not _sends_refusal_echo(): return  # (litellm 1.110 puts none there)
    assert chat.hist[-1].provider_specific_fields == {'refusal': None}
    chat.api_base = fp.openai_base
    chat('more')
    assert [m.get('provider_specific_fields') for m in fp.last['messages'] if m['role']=='assistant'] == [None]

def test_no_refusal_echo_to_router_fallback():
    "A Router chat whose OpenAI deployment fails over to Mistral: the Mistral deployment gets no `refusal: None` echo"
    from litellm import Router
    from lisette.testing import FakeProvider
    a, b = FakeProvider().start(), FakeProvider().start()
    try:
        ml = [dict(model_name='m', litellm_params=dict(model='openai/gpt-4o-mini', api_base=a.openai_base, api_key='k')),
              dict(model_name='m-b', litellm_params=dict(model='mistral/mistral-small-latest', api_base=b.openai_base, api_key='k'))]
        r = Router(model_list=ml, fallbacks=[{'m': ['m-b']}], num_retries=0)
        a.queue('hello', Reply(status=500, error='down')); b.queue('ok')
        chat = Chat('m', completefunc=r.completion)
        chat('hi'); chat('more')
        assert len(b.requests) == 1 and chat.hist[-1].content == 'ok'
        assert [m.get('provider_specific_fields') for m in b.last['messages'] if m['role']=='assistant'] == [None]
    finally: a.stop(); b.stop()

@pytest.mark.parametrize('stream', [False, True])
def test_responses_refusal(fake_provider, stream):
    "A Responses refusal part (streamed as response.refusal.delta): litellm dropped it and the reply was empty ('.')"
    fp = fake_provider
    fp.queue(Reply(refusal="I can't help with that.", chunks=3), 'ok')
    chat = Chat('openai/responses/gpt-5.4', api_base=fp.responses_base, api_key='k')
    r = _last(chat('Do a bad thing', stream=True)) if stream else chat('Do a bad thing')
    assert contents(r).content == "I can't help with that." and chat.hist[1].content == "I can't help with that."
    chat('Why not?')
    sent = [m for m in fp.last['input'] if m.get('role')=='assistant']
    assert sent and "I can't help with that." in json.dumps(sent[0])

def _last(g):
    *_, r = g
    return r

@pytest.mark.parametrize('name', ['anthropic', 'gemini'])
def test_other_protocols_refuse_in_text(fake_provider, name):
    "`Reply(refusal=)` on protocols without a refusal field is plain text (as those providers refuse)"
    fp = fake_provider
    m = {'anthropic': 'anthropic/claude-sonnet-4-5', 'gemini': 'gemini/gemini-3-flash-preview'}[name]
    fp.queue(Reply(refusal='No.'))
    assert contents(Chat(m, api_base=getattr(fp, name+'_base'), api_key='k')('bad')).content == 'No.'

@pytest.mark.parametrize('stream', [False, True])
def test_refusal_of_a_model_litellm_sends_to_responses(fake_provider, stream):
    "litellm sends models whose mode is 'responses' (gpt-5.2-pro) to the Responses API: their refusals keep their words too, in a fresh process"
    import subprocess, sys, textwrap
    fp = fake_provider
    fp.queue(Reply(refusal="I can't help with that.", chunks=3))
    code = textwrap.dedent(f'''
        import os; os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'
        from lisette import Chat, contents
        chat = Chat('openai/gpt-5.2-pro', api_base={fp.openai_base!r}, api_key='k')
        r = chat('Do a bad thing', stream={stream})
        if {stream}: *_, r = r
        print(contents(r).content)''')
    p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert fp.requests[-1].path.endswith('/responses') and p.stdout.strip() == "I can't help with that."

@pytest.mark.parametrize('origin', ['openai', 'responses'])
def test_refusal_field_only_to_openai(fake_provider, origin):
    "After a refusal, a provider that speaks OpenAI's protocol but is not OpenAI (Mistral, DeepSeek) gets its words as text, no `refusal` field"
    fp = fake_provider
    m, base = {'openai': ('openai/gpt-4o-mini', fp.openai_base), 'responses': ('openai/responses/gpt-5.4', fp.responses_base)}[origin]
    fp.queue(Reply(refusal='No way.'), 'fine', 'ok')
    chat = Chat(m, api_base=base, api_key='k')
    chat('go')
    chat.model, chat.api_base = 'mistral/mistral-small-latest', fp.openai_base
    chat('next')
    assert fp.last['messages'][1] == {'role': 'assistant', 'content': 'No way.'}
    assert not any(k=='switch' for k,_ in chat.adjustments)  # nothing lost: the words are the text
    chat.model = 'openai/gpt-4o-mini'
    chat('and OpenAI?')
    assert fp.last['messages'][1]['refusal'] == 'No way.'

def test_refusal_beside_tool_calls_is_noted_when_left_out(fake_provider):
    "A refusal whose words are not the text (a message with tool calls) is left out for providers without the field, and noted"
    from lisette.switch import fit_history
    msgs = [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': None, 'refusal': 'Partly no.',
             'tool_calls': [{'id': 'call_1', 'type': 'function', 'function': {'name': 'add', 'arguments': '{}'}}]},
            {'role': 'tool', 'tool_call_id': 'call_1', 'content': '0'}]
    out, notes = fit_history(msgs, 'anthropic/claude-sonnet-4-5')
    assert 'refusal' not in out[1] and notes == [(1, "refusal 'Partly no.' left out (Anthropic takes no refusal field)")]
    assert fit_history(msgs, 'openai/gpt-4o-mini') == (msgs, [])

def test_streamed_refusal_beside_text_keeps_its_field():
    "litellm 1.106's builder merges no refusals: keep_refusal puts them on the built message even when it has text"
    from litellm import stream_chunk_builder
    from lisette.providers import keep_refusal, _refusal_chunk
    chunks = [mk_stream_chunk(content='Hello'), _refusal_chunk('No.', 'stop')]
    r = keep_refusal(stream_chunk_builder(chunks), chunks)
    assert r.choices[0].message.content == 'Hello' and r.choices[0].message.refusal == 'No.'

def test_stream_with_complete_keeps_a_refusal_without_chat(fake_provider):
    "litellm called directly, streamed through stream_with_complete in a fresh process (no Chat request installed the mends first)"
    import subprocess, sys, textwrap
    fp = fake_provider
    fp.queue(Reply(refusal="I can't help with that.", chunks=3))
    code = textwrap.dedent(f'''
        import os; os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'
        import litellm
        from lisette import stream_with_complete
        r = litellm.completion('openai/gpt-4o-mini', [{{'role': 'user', 'content': 'bad'}}], stream=True, api_base={fp.openai_base!r}, api_key='k')
        g = stream_with_complete(r)
        while True:
            try: next(g)
            except StopIteration as e: print(e.value.choices[0].message.refusal); break''')
    p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "I can't help with that.", p.stdout

def test_openai_itself_by_name():
    from lisette.providers import _openai_itself
    assert [_openai_itself(m) for m in ('openai/gpt-4o-mini', 'gpt-4o', 'ft:gpt-4o-mini-2024-07-18:org::abc', 'mistral/mistral-small-latest',
                                         'azure/gpt-4o', 'chatgpt/gpt-5.5', 'deepseek/deepseek-chat')] == [True, True, True, False, False, False, False]

def test_reply_refusal_of_a_dict():
    from lisette.providers import reply_refusal
    d = {'role': 'assistant', 'content': None, 'provider_specific_fields': {'refusal': 'No.'}}
    assert reply_refusal(d) == 'No.' and d == {'role': 'assistant', 'content': None, 'provider_specific_fields': None, 'refusal': 'No.'}

def _anthropic_idless(stream):
    "An Anthropic reply (body or event stream) whose tool_use block has no `id` key"
    msg = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "tool_use", "stop_sequence": None,
           "content": [{"type": "text", "text": "Let me add."}, {"type": "tool_use", "name": "add", "input": {"a": 1, "b": 2}}],
           "usage": {"input_tokens": 10, "output_tokens": 5}}
    if not stream: return json.dumps(msg).encode()
    ev = [("message_start", {"type": "message_start", "message": {**msg, "content": [], "stop_reason": None}}),
          ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "name": "add", "input": {}}}),
          ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"a\":1,\"b\":2}"}}),
          ("content_block_stop", {"type": "content_block_stop", "index": 0}),
          ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 5}}),
          ("message_stop", {"type": "message_stop"})]
    return ''.join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e,d in ev).encode()

_oa_idless = json.dumps({"id": "x", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
        "tool_calls": [{"type": "function", "function": {"name": "add", "arguments": "{\"a\":1,\"b\":2}"}}]}}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()

@pytest.mark.parametrize('case', ['openai', 'anthropic', 'anthropic-stream'])
@pytest.mark.parametrize('cls', [Chat, AsyncChat])
async def test_reply_call_without_id_key(fake_provider, case, cls):
    "A call with no `id` at all: OpenAI's (litellm quietly made up a uuid4) and Anthropic's (litellm failed on `['id']`) get an id in the provider's style, run, and are reported"
    fp = fake_provider
    stream = case.endswith('stream')
    m, base, raw = (('openai/gpt-4o-mini', fp.openai_base, _oa_idless) if case=='openai' else
                    ('anthropic/claude-sonnet-4-5', fp.anthropic_base, _anthropic_idless(stream)))
    fp.queue(Reply(raw=raw), 'It is 3')
    chat = cls(m, tools=[add], api_base=base, api_key='k')
    r = chat('add 1 and 2', stream=stream)
    if cls is AsyncChat: r = await r
    if stream: [o async for o in r] if cls is AsyncChat else list(r)
    tid = chat.hist[1].tool_calls[0].id
    assert tid.startswith('call_' if case=='openai' else 'toolu_') and chat.hist[2]['tool_call_id'] == tid and chat.hist[2]['content'] == '3'
    assert [a.detail for a in chat.adjustments if a.kind=='tool_call_id'] == [f"the reply's add call came without an id: given the id {tid!r}"]
    assert chat.hist[-1].content == "It is 3" and check_hist(chat.hist) is None and len(fp.requests) == 2


# ---- thinking whose text is empty

def _get_country() -> str:
    "The user's country"
    return 'France'

@pytest.mark.parametrize('stream', [False, True])
def test_thinking_with_omitted_text(fake_provider, stream):
    """Claude with `thinking={'display': 'omitted'}` (Opus 4.7's default) sends thinking blocks whose text is empty, with a
    signature: they go back as they came, in the tool loop and in later turns (the history check took them for malformed)"""
    fp = fake_provider
    fp.queue(Reply(thinking='', tool_calls=[('_get_country', {})]), 'France.', 'Hello.')
    chat = Chat('anthropic/claude-opus-4-7', tools=[_get_country], api_base=fp.anthropic_base, api_key='k',
                callkw=dict(thinking={'type': 'adaptive', 'display': 'omitted'}))
    for q in ('Where am I?', 'Hello again'):
        r = _quiet(chat, q, stream=stream)
        if stream: list(r)
    sent = [b for m in fp.last['messages'] if m['role']=='assistant' for b in m['content'] if isinstance(m['content'], list)]
    assert sent[0] == {'type': 'thinking', 'thinking': '', 'signature': 'fake-signature-1'}, sent
    assert len(fp.requests) == 3 and check_hist(chat.hist) is None and chat.hist[-1].content == 'Hello.'

def test_gemini_signed_empty_thought(fake_provider):
    "A Gemini reply whose signature is on an empty thought part (non-streamed, as the parts of a stream are kept whole): the next turn goes"
    fp = fake_provider
    sig = 'CtcBAdHtimSIG1abc=='
    ev = {'candidates': [{'content': {'role': 'model', 'parts': [{'text': '**Plan**', 'thought': True}, {'text': '', 'thought': True, 'thoughtSignature': sig},
                                                                 {'text': 'It is 4.'}]}, 'finishReason': 'STOP', 'index': 0}],
          'usageMetadata': {'promptTokenCount': 10, 'candidatesTokenCount': 5, 'totalTokenCount': 18, 'thoughtsTokenCount': 3}, 'modelVersion': 'gemini-2.5-flash'}
    fp._signatures.add(sig)
    fp.queue(Reply(raw=json.dumps(ev).encode()), 'ok')
    chat = Chat('gemini/gemini-2.5-flash', api_base=fp.gemini_base, api_key='k')
    _quiet(chat, '2+2?', think='l'); _quiet(chat, 'thanks', think='l')
    assert len(fp.requests) == 2 and chat.hist[-1].content == 'ok'
    assert sig in json.dumps(fp.last['contents'][1])  # its signature went back

def test_gemini_signed_thought_summary_is_not_a_switch(fake_provider):
    "A Gemini thought summary Gemini signed is Gemini's own reasoning: no 'switch' adjustment, and it is not left out of a Gemini chat's next request"
    fp = fake_provider
    sig = 'CtcBAdHtimSIG1abc=='
    ev = {'candidates': [{'content': {'role': 'model', 'parts': [{'text': '**Plan**\nthink', 'thought': True, 'thoughtSignature': sig}, {'text': 'It is 4.'}]},
                          'finishReason': 'STOP', 'index': 0}],
          'usageMetadata': {'promptTokenCount': 10, 'candidatesTokenCount': 5, 'totalTokenCount': 18, 'thoughtsTokenCount': 3}, 'modelVersion': 'gemini-2.5-flash'}
    fp._signatures.add(sig)
    fp.queue(Reply(raw=json.dumps(ev).encode()), 'ok')
    chat = Chat('gemini/gemini-2.5-flash', api_base=fp.gemini_base, api_key='k')
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        chat('2+2?', think='l'); chat('thanks', think='l')
    assert 'switch' not in [a.kind for a in chat.adjustments] and not [w for w in ws if 'switch' in str(w.message)]
    assert sig in json.dumps(fp.last['contents'][1]) and chat.hist[-1].content == 'ok'

# ---- document citations, streamed

def test_streamed_document_citations_keep_the_text_clean(fake_provider):
    "Claude's citations of a document the user sent have no address: a streamed reply's text is the same as a reply not streamed"
    fp = fake_provider
    cite = {'type': 'char_location', 'cited_text': 'The grass is green. ', 'document_index': 0, 'document_title': 'My Document', 'start_char_index': 0, 'end_char_index': 20}
    blocks = [('According to the document, ', None), ('the grass is green', cite), ('.', None)]
    evs = [{'type': 'message_start', 'message': {'id': 'msg_1', 'type': 'message', 'role': 'assistant', 'model': 'claude-sonnet-4-5', 'content': [],
                                                 'stop_reason': None, 'stop_sequence': None, 'usage': {'input_tokens': 610, 'output_tokens': 1}}}]
    for i,(t,c) in enumerate(blocks):
        evs.append({'type': 'content_block_start', 'index': i, 'content_block': {'type': 'text', 'text': ''}})
        if c: evs.append({'type': 'content_block_delta', 'index': i, 'delta': {'type': 'citations_delta', 'citation': c}})
        evs += [{'type': 'content_block_delta', 'index': i, 'delta': {'type': 'text_delta', 'text': t}}, {'type': 'content_block_stop', 'index': i}]
    evs += [{'type': 'message_delta', 'delta': {'stop_reason': 'end_turn', 'stop_sequence': None}, 'usage': {'output_tokens': 12}}, {'type': 'message_stop'}]
    fp.queue(Reply(raw=b''.join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in evs), headers={'content-type': 'text/event-stream'}))
    doc = {'role': 'user', 'content': [{'type': 'document', 'source': {'type': 'text', 'media_type': 'text/plain', 'data': 'The grass is green.'},
                                        'title': 'My Document', 'citations': {'enabled': True}}, {'type': 'text', 'text': 'What colour is the grass?'}]}
    chat = Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')
    list(chat(doc, stream=True))
    assert chat.hist[-1].content == 'According to the document, the grass is green.'

def _custom_sse(tools_field):
    "An OpenAI stream whose delta's `tool_calls` is `tools_field`, then a finish"
    ch = lambda delta, fin=None: {'id': 'c', 'object': 'chat.completion.chunk', 'created': 1, 'model': 'gpt-4o-mini', 'choices': [{'index': 0, 'delta': delta, 'finish_reason': fin}]}
    evs = [ch({'role': 'assistant', 'tool_calls': tools_field}), ch({}, 'tool_calls')]
    return Reply(raw=b''.join(b'data: ' + json.dumps(e).encode() + b'\n\n' for e in evs) + b'data: [DONE]\n\n', headers={'content-type': 'text/event-stream'})

_custom_call = {'id': 'call_c1', 'type': 'custom', 'custom': {'name': 'add', 'input': '1 and 2'}}

@pytest.mark.parametrize('mode', ['plain', 'stream', 'astream'])
def test_free_form_custom_call_does_not_wedge_the_chat(fake_provider, mode):
    """An OpenAI free-form call (`type: custom`, as a custom tool in callkw['tools'] gets): kept as a function call with its
    text as `input`, answered, and said; it stayed litellm's `ChatCompletionMessageCustomToolCall`, answered for a tool
    named None, and every later request failed with a MessageFormatError (streamed: an AttributeError in `mend_chunk`)"""
    import asyncio
    fp = fake_provider
    first = Reply(raw=_oa_body({'role': 'assistant', 'content': None, 'tool_calls': [_custom_call]})) if mode=='plain' else _custom_sse([{**_custom_call, 'index': 0}])
    fp.queue(first, 'sorry', 'fine')
    chat = (AsyncChat if mode=='astream' else Chat)('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    async def arun(msg): return [o async for o in await chat(msg, stream=True)]
    run = lambda msg: asyncio.run(arun(msg)) if mode=='astream' else _quiet(list, chat(msg, stream=True)) if mode=='stream' else _quiet(chat, msg)
    run('go')
    tc = chat.hist[1].tool_calls[0]
    assert (tc.id, tc.function.name, json.loads(tc.function.arguments)) == ('call_c1', 'add', {'input': '1 and 2'})
    assert chat.hist[2]['tool_call_id'] == 'call_c1' and 'add was not called' in chat.hist[2]['content'] and chat.hist[-1].content == 'sorry'
    assert any(a.kind=='tool_call' and 'free-form (custom)' in a.detail for a in chat.adjustments) and check_hist(chat.hist) is None
    run('again')
    assert chat.hist[-1].content == 'fine' and len(fp.requests) == 3

@pytest.mark.parametrize('cls', [Chat, AsyncChat])
def test_streamed_tool_calls_that_are_no_list(fake_provider, cls):
    "A streamed delta whose `tool_calls` is an object, not a list: the text-less reply is kept as litellm builds it (no calls), not an AttributeError from `mend_chunk`"
    import asyncio
    fp = fake_provider
    fp.queue(_custom_sse({'index': 0}), 'fine')
    chat = cls('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    async def arun(msg): return [o async for o in await chat(msg, stream=True)]
    run = lambda msg: asyncio.run(arun(msg)) if cls is AsyncChat else _quiet(list, chat(msg, stream=True))
    run('go')
    assert check_hist(chat.hist) is None and not chat.hist[1].tool_calls
    run('again')
    assert chat.hist[-1].content == 'fine'
