"Building the complete response from merged text runs gives exactly what litellm builds from every chunk."
import litellm, pytest
from lisette import Chat, AsyncChat
from hypothesis import given, settings, HealthCheck, strategies as st
from lisette.stream import _merge_text_runs, stream_chunk_builder
from lisette.testing import Reply
from lisette.providers import close_stream

_words = st.text(st.characters(whitelist_categories=('L', 'N', 'Zs', 'P')), min_size=0, max_size=60)
_reply = st.builds(lambda text, n, tcs, think, search, stop: Reply(text, chunks=n, thinking=think or None, stop=stop,
                        tool_calls=[('add', {'a': i}) for i in range(tcs)],
                        web_search=[dict(query='q', url='https://example.com', title='T', cited_text='c')] if search else None),
                   _words, st.integers(1, 40), st.integers(0, 2), _words, st.booleans(), st.sampled_from([None, 'max_tokens']))

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rep=_reply, anthropic=st.booleans(), usage=st.booleans())
def test_merged_build_equals_full_build(fake_provider, rep, anthropic, usage):
    fp = fake_provider
    fp.reset(); fp.queue(rep)
    m, base = ('anthropic/claude-sonnet-4-5', fp.anthropic_base) if anthropic else ('openai/gpt-4o-mini', fp.openai_base)
    r = litellm.completion(m, [{'role': 'user', 'content': 'hi'}], stream=True, api_base=base, api_key='k',
                           **({'stream_options': {'include_usage': True}} if usage else {}))
    chunks = list(r); close_stream(r)  # litellm leaves Anthropic's line iterator open at the end (see `fake_provider`)
    before = [c.model_dump() for c in chunks]
    full, merged = stream_chunk_builder(chunks).model_dump(), stream_chunk_builder(_merge_text_runs(chunks)).model_dump()
    for d in (full, merged): d.pop('created', None)
    assert merged == full
    assert [c.model_dump() for c in chunks] == before  # the caller's chunks are untouched

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rep=_reply, anthropic=st.booleans(), usage=st.booleans())
def test_litellm_built_equals_ours(fake_provider, rep, anthropic, usage):
    "The response litellm built at the stream's end (which Chat takes, see `keep_built`) is the one we would build from the chunks"
    from lisette.providers import keep_built, built_response
    from lisette.stream import _build
    fp = fake_provider
    fp.reset(); fp.queue(rep)
    m, base = ('anthropic/claude-sonnet-4-5', fp.anthropic_base) if anthropic else ('openai/gpt-4o-mini', fp.openai_base)
    r = keep_built(litellm.completion(m, [{'role': 'user', 'content': 'hi'}], stream=True, api_base=base, api_key='k',
                                      **({'stream_options': {'include_usage': True}} if usage else {})))
    chunks = list(r); close_stream(r)
    got = built_response(r)
    assert got is not None
    want = _build(chunks)
    g, w = got.model_dump(), want.model_dump()
    for d in (g, w): d.pop('created', None)
    assert g == w
    from lisette.usage import UsageStats
    assert UsageStats.from_response(got) == UsageStats.from_response(want)  # tokens and cost (litellm leaves a cost it did not price unset)

@pytest.mark.parametrize('index', [0, None])
@pytest.mark.parametrize('aio', [False, True])
def test_streamed_calls_sharing_an_index_stay_apart(fake_provider, index, aio):
    "Ollama's /v1 streams each tool call whole, all with index 0 (or none): two calls, two tools run (helper-19 finding 1)"
    import asyncio, json
    from lisette.testing import Reply
    fp, ran = fake_provider, []
    def run_command(command:str) -> str:
        "Run a shell command"
        ran.append(command); return f"output of {command}"
    def chunk(delta, fr=None):
        return {'id': 'chatcmpl-18', 'object': 'chat.completion.chunk', 'created': 1744446075, 'model': 'qwen2.5-coder', 'system_fingerprint': 'fp_ollama',
                'choices': [{'index': 0, 'delta': delta, 'finish_reason': fr}]}
    def call(cid, cmd):
        return {'id': cid, 'type': 'function', 'function': {'name': 'run_command', 'arguments': json.dumps({'command': cmd})}, **({} if index is None else {'index': index})}
    evs = [chunk({'role': 'assistant', 'content': '', 'tool_calls': [call('call_a', 'ls')]}),
           chunk({'role': 'assistant', 'content': '', 'tool_calls': [call('call_b', 'ls -l')]}), chunk({'role': 'assistant', 'content': ''}, 'tool_calls')]
    fp.queue(Reply(raw=''.join(f"data: {json.dumps(e)}\n\n" for e in evs).encode() + b"data: [DONE]\n\n"), 'Done.')
    chat = (AsyncChat if aio else Chat)('openai/qwen2.5-coder', tools=[run_command], api_base=fp.openai_base, api_key='k')
    async def consume(): return [o async for o in await chat('list files', stream=True)]
    asyncio.run(consume()) if aio else list(chat('list files', stream=True))
    assert sorted(ran) == ['ls', 'ls -l']
    assert [(t['id'], json.loads(t['function']['arguments'])) for t in fp.last['messages'][1]['tool_calls']] == [('call_a', {'command': 'ls'}), ('call_b', {'command': 'ls -l'})]

def test_odd_reasoning_details_in_a_stream():
    "A delta's `reasoning_details` that is no list (a provider's slip): a number is left out, one detail kept; the build does not fail (it raised TypeError)"
    from litellm import ModelResponseStream
    from lisette.providers import _details_lost
    ch = lambda **d: ModelResponseStream(choices=[dict(delta=dict(role='assistant', **d))])
    for bad, want in [(5, []), ({'type': 'reasoning.text', 'text': 'x'}, [{'type': 'reasoning.text', 'text': 'x'}])]:
        m = stream_chunk_builder([ch(content='', reasoning_details=bad), ch(content='hi')]).choices[0].message
        assert m.content == 'hi'
        if _details_lost(): assert (m.provider_specific_fields or {}).get('reasoning_details', []) == want

def _raw_openai(*deltas, finish='stop'):
    "An OpenAI stream body of `deltas`, then an empty delta with `finish`"
    import json
    ch = lambda d, fr=None: {'id': 'c1', 'object': 'chat.completion.chunk', 'created': 1, 'model': 'gpt-4o-mini', 'choices': [{'index': 0, 'delta': d, 'finish_reason': fr}]}
    return ''.join(f"data: {json.dumps(e)}\n\n" for e in [ch(d) for d in deltas] + [ch({}, finish)]).encode() + b"data: [DONE]\n\n"

_bad_call = {'index': 'x', 'id': 'call_1', 'type': 'function', 'function': {'name': 'add', 'arguments': '{"a": 1, "b": 2}'}}

@pytest.mark.parametrize('case', ['call_alone', 'call_after_text', 'int_text'])
def test_stream_parts_litellm_could_not_read_are_said(fake_provider, case):
    """A streamed delta with a field of the wrong JSON type is lost in litellm (a tool call delta with `index: "x"`,
    text `content: 5`): the chat said the model 'replied with no text', or nothing at all when text came before the
    lost call. It now says what was lost, and the history stays one the next request can send"""
    import warnings
    from lisette.providers import quiet_litellm
    fp, ran = fake_provider, []
    def add(a:int, b:int)->int:
        "Add a and b"
        ran.append((a, b)); return a+b
    deltas, finish = {'call_alone': ([{'role': 'assistant', 'content': None, 'tool_calls': [_bad_call]}], 'tool_calls'),
                      'call_after_text': ([{'role': 'assistant', 'content': 'Adding.'}, {'tool_calls': [_bad_call]}], 'tool_calls'),
                      'int_text': ([{'role': 'assistant', 'content': 5}], 'stop')}[case]
    fp.queue(Reply(raw=_raw_openai(*deltas, finish=finish)), 'Done.')
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings(), quiet_litellm():
        warnings.simplefilter('ignore')
        list(chat('add 1 and 2', stream=True))
    adj = {a.kind: a.detail for a in chat.adjustments}
    assert ran == []
    if case=='int_text': assert "were no string (the first: 5, of type int): litellm left them out" in adj['reply']
    else: assert "finish reason 'tool_calls'), yet no tool call came through" in adj['tool_call']
    if case=='call_after_text': assert chat.hist[-1].content == 'Adding.'
    else:
        assert 'replied with no text' not in adj['empty_reply'] and "held no text that litellm could read" in adj['empty_reply']
        assert chat.hist[-1].content == '.'
    assert chat('again').choices[0].message.content == 'Done.'  # the history is still valid

@pytest.mark.parametrize('stream', [False, True])
def test_readable_replies_are_not_said_lost(fake_provider, stream):
    "No false alarm: a streamed call that came through, and a reply read whole that says 'tool_calls' with text and no call (some OpenAI-compatible servers do), say nothing was lost"
    import json, warnings
    fp = fake_provider
    def add(a:int, b:int)->int:
        "Add a and b"
        return a+b
    whole = {'id': 'c1', 'object': 'chat.completion', 'created': 1, 'model': 'gpt-4o-mini', 'choices': [{'index': 0, 'finish_reason': 'tool_calls',
             'message': {'role': 'assistant', 'content': 'The answer is 3.'}}], 'usage': {'prompt_tokens': 5, 'completion_tokens': 5, 'total_tokens': 10}}
    first = Reply(tool_calls=[('add', {'a': 1, 'b': 2})]) if stream else Reply(raw=json.dumps(whole).encode())
    fp.queue(first, 'Done.')
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        r = chat('add 1 and 2', stream=stream)
        if stream: list(r)
    assert not [a for a in chat.adjustments if a.kind in ('tool_call', 'reply', 'empty_reply')], chat.adjustments

_seen_replies = {'text': Reply('hello there, world', chunks=6), 'thinking': Reply('x', thinking='hmm'),
                 'calls': Reply(tool_calls=[('add', {'a': 1}), ('mul', {'a': 2})]), 'nameless': Reply(tool_calls=[dict(name='', arguments={'a': 1}, id='c1')]),
                 'search': Reply('cited', web_search=[dict(query='q', url='https://example.com', title='T', cited_text='c')])}

@pytest.mark.parametrize('rep', list(_seen_replies))
def test_seen_fast_path_skips_only_what_its_steps_leave(proto, rep):
    "`_Seen` passes a plain chunk on unread by its steps: on every protocol's chunks it does what running all its steps on each does (citations, ids, names, odd text)"
    import copy
    from lisette.chat import _Seen
    from lisette.stream import cite_footnote
    from lisette.providers import mend_chunk, _odd_delta_text, adapt_request
    fp, model, kw = proto
    fp.queue(_seen_replies[rep])
    r = litellm.completion(**adapt_request(dict(model=model, messages=[{'role': 'user', 'content': 'hi'}], stream=True, stream_options={'include_usage': True}, **kw)))
    chunks = list(r); close_stream(r)
    fast, full, cites = _Seen(model), _Seen(model), 0
    for c in chunks:
        a, b = copy.deepcopy(c), copy.deepcopy(c)
        fast(a)
        full.n += 1; cite_footnote(b); full.made += mend_chunk(b, full.known, model, full.nameless)
        if (t := _odd_delta_text(b)) is not None: full.odd.append(t)
        assert a.model_dump() == b.model_dump(), c
        cites += '[*](' in str(a.model_dump())
    assert (fast.n, fast.known, fast.made, list(fast.nameless), fast.odd) == (full.n, full.known, full.made, list(full.nameless), full.odd)
    if rep=='search' and proto[1].startswith('anthropic'): assert cites == 1  # (the citation chunk did reach `cite_footnote`)

@pytest.mark.parametrize('delta', [{'content': 5}, {'content': 'a', 'provider_specific_fields': {'citation': {'url': 'https://e.com', 'title': 't'}}},
                                   {'tool_calls': [{'index': 0, 'id': '', 'type': 'function', 'function': {'name': 'f', 'arguments': '{}'}}]}])
def test_seen_fast_path_odd_chunks(delta):
    "Chunks the fast path must not skip: odd content, a citation, a call without an id"
    from litellm import ModelResponseStream
    from lisette.chat import _Seen
    from lisette.providers import _idless_calls_dropped
    s, c = _Seen('openai/gpt-4o-mini'), ModelResponseStream(choices=[dict(delta=delta)])
    s(c)
    if 'tool_calls' in delta: assert s.made == ([c.choices[0].delta.tool_calls[0].id] if _idless_calls_dropped() else [])
    elif 'provider_specific_fields' in delta: assert c.choices[0].delta.content == '[*](https://e.com "t") '
    else: assert s.odd == [5]

def _mangled_call_stream(proto, model, text):
    "A stream body, in `proto`'s protocol, of a reply (`text`, then a call of add) whose call litellm cannot read, and whose finish reason is not 'tool_calls'"
    import itertools, json
    from lisette.testing import _norm_tcs, _oa_events, _an_events, _gm_events, _rs_events
    rep, ids = Reply(text, tool_calls=[('add', {'a': 1, 'b': 2})]), itertools.count(1)
    tcs, body = _norm_tcs(rep, 'toolu_' if proto=='anthropic' else 'call_', ids), {'model': model.split('/')[-1]}
    if proto=='openai':  # (a server that says 'stop' with its calls, as Gemini's OpenAI-compatible endpoint does; the call's `index` no integer)
        evs = list(_oa_events(rep, body, 1, tcs))
        for e in evs:
            for tc in e['choices'][0]['delta'].get('tool_calls', []): tc['index'] = 'x'
            if e['choices'][0]['finish_reason']: e['choices'][0]['finish_reason'] = 'stop'
        return b''.join(f"data: {json.dumps(e)}\n\n".encode() for e in evs) + b'data: [DONE]\n\n'
    if proto=='anthropic':  # (ends its turn, the call's input pieces no text)
        evs = list(_an_events(rep, body, 1, tcs, ids))
        for t,d in evs:
            if d.get('delta', {}).get('type')=='input_json_delta': d['delta']['partial_json'] = 5
            if t=='message_delta': d['delta']['stop_reason'] = 'end_turn'
        return b''.join(f"event: {t}\ndata: {json.dumps(d)}\n\n".encode() for t,d in evs)
    if proto=='gemini':  # (Gemini says STOP for calls too; the call has no name)
        evs = list(_gm_events(rep, model.split('/')[-1], 1, tcs, 'c2lnIzE='))
        for e in evs:
            for p in e['candidates'][0]['content']['parts']:
                if 'functionCall' in p: del p['functionCall']['name']
        return b''.join(f"data: {json.dumps(e)}\r\n\r\n".encode() for e in evs)
    evs = _rs_events(rep, body, 1, tcs)  # Responses: the call's name no text
    for e in evs:
        if e.get('item', {}).get('type')=='function_call': e['item']['name'] = 5
    return b''.join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in evs)

@pytest.mark.parametrize('text', [None, 'Adding.'])
def test_lost_streamed_call_said_whatever_the_finish_reason(proto, text):
    """A streamed tool call litellm cannot read is never passed over in silence, whatever finish reason the reply has.
    On an OpenAI-compatible stream litellm drops the call's deltas without a word (only its log says so); a server
    that says 'stop' with its calls (Gemini's OpenAI-compatible endpoint does) then gave a reply the chat took for a
    finished answer: the text alone and nothing said, or 'replied with no text'. The other protocols' readers raise"""
    import warnings
    from lisette.providers import quiet_litellm
    from lisette.chat import IncompleteStreamError
    fp, model, kw = proto
    ran = []
    def add(a:int, b:int)->int:
        "Add a and b"
        ran.append((a, b)); return a+b
    fp.queue(Reply(raw=_mangled_call_stream(_proto_of(model), model, text)), 'Done.')
    chat = Chat(model, tools=[add], **kw)
    with warnings.catch_warnings(), quiet_litellm():
        warnings.simplefilter('ignore')
        try: list(chat('add 1 and 2', stream=True))
        except IncompleteStreamError:  # said: the turn failed, naming what litellm could not read (the other protocols' readers raise)
            assert _proto_of(model)!='openai' and ran == [], model; return
    assert _proto_of(model)=='openai', f"{model}: its reader raised on such a call, and now passed it"
    adj = {a.kind: a.detail for a in chat.adjustments}
    assert ran == [] and 'tool_call' in adj, chat.adjustments
    assert "no tool call came through" in adj['tool_call'] and "finish reason 'stop'" in adj['tool_call']
    if text: assert chat.hist[-1].content == text
    else: assert "held no text that litellm could read (a tool call)" in adj['empty_reply']
    assert chat('again').choices[0].message.content == 'Done.'  # the history is still valid

def _proto_of(model): return 'responses' if '/responses/' in model else model.split('/')[0]

def test_streamed_replies_said_lost_only_when_lost(proto):
    "No false alarm on any protocol: streamed text, a call that came through, and (OpenAI) a call with finish reason 'stop' or deltas with an empty list of calls say nothing was lost"
    import json, warnings
    fp, model, kw = proto
    def add(a:int, b:int)->int:
        "Add a and b"
        return a+b
    reps = [Reply('Just text.'), Reply('Adding.', tool_calls=[('add', {'a': 1, 'b': 2})]), 'Done.']
    if _proto_of(model)=='openai':
        ch = lambda d, fr=None: {'id': 'c1', 'object': 'chat.completion.chunk', 'created': 1, 'model': 'gpt-4o-mini', 'choices': [{'index': 0, 'delta': d, 'finish_reason': fr}]}
        empty = [ch({'role': 'assistant', 'content': '', 'tool_calls': []}), ch({'content': 'Hi', 'tool_calls': []}), ch({'tool_calls': []}, 'stop')]
        reps += [Reply(tool_calls=[('add', {'a': 1, 'b': 2})], stop='stop'), 'Done.',
                 Reply(raw=''.join(f"data: {json.dumps(e)}\n\n" for e in empty).encode() + b"data: [DONE]\n\n")]
    fp.queue(*reps)
    chat = Chat(model, tools=[add], **kw)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        while fp.pending: list(chat('go', stream=True))
    assert len(fp.requests) == len(reps) and chat.hist[-1].content == ('Hi' if _proto_of(model)=='openai' else 'Done.')
    assert not [a for a in chat.adjustments if a.kind in ('tool_call', 'reply', 'empty_reply')], chat.adjustments

def test_streamed_call_pieces_dropped_beside_calls_said(fake_provider):
    "A streamed reply of two calls whose second litellm cannot read (OpenAI: its deltas dropped without a word): the first runs, and the chat says a piece of the calls was left out"
    import itertools, json, warnings
    from lisette.testing import _norm_tcs, _oa_events
    from lisette.providers import quiet_litellm
    fp, ran = fake_provider, []
    def add(a:int, b:int)->int:
        "Add a and b"
        ran.append((a, b)); return a+b
    rep = Reply(tool_calls=[('add', {'a': 1, 'b': 2}), ('add', {'a': 3, 'b': 4})])
    evs = list(_oa_events(rep, {'model': 'gpt-4o-mini'}, 1, _norm_tcs(rep, 'call_', itertools.count(1))))
    for e in evs:
        for tc in e['choices'][0]['delta'].get('tool_calls', []):
            if tc['index']==1: tc['index'] = 'x'
    fp.queue(Reply(raw=b''.join(f"data: {json.dumps(e)}\n\n".encode() for e in evs) + b'data: [DONE]\n\n'), 'Done.')
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings(), quiet_litellm():
        warnings.simplefilter('ignore')
        list(chat('add', stream=True))
    adj = {a.kind: a.detail for a in chat.adjustments}
    assert ran == [(1, 2)]
    assert "litellm left out 3 streamed piece(s) of the reply's tool calls" in adj['tool_call'], chat.adjustments
