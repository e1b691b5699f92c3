"History interop: round trips through the Anthropic and OpenAI forms, save/load, token budget, and both checked against the fake provider."
import json, math, tempfile, warnings
from pathlib import Path
import httpx, litellm, pytest
from hypothesis import given, settings, assume, strategies as st, HealthCheck
from litellm import Message
from litellm.types.utils import ChatCompletionMessageToolCall, Function
from lisette import Chat, AsyncChat, contents, mk_msgs
from lisette.chat import AdjustmentWarning
from lisette.messages import check_msg, MessageFormatError
from lisette.tools import mk_tc, mk_tc_req, mk_tc_result
from lisette.usage import UsageStats
from lisette.interop import *
from lisette.history import norm_msg, norm_hist, norm_reasoning, interrupted_result
from lisette.context import *
from lisette.testing import Reply

# ---- strategies: histories in the shapes Chat keeps (dicts, Messages, tool-call objects, cache_control, thinking) ----
texts = st.text(min_size=1, max_size=30).filter(lambda s: s.strip())
cc = st.sampled_from([None, {'type': 'ephemeral'}, {'type': 'ephemeral', 'ttl': '1h'}])
b64 = st.binary(min_size=1, max_size=12).map(lambda b: __import__('base64').b64encode(b).decode())
json_vals = st.recursive(st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=10),
                         lambda ch: st.lists(ch, max_size=3) | st.dictionaries(st.text(max_size=5), ch, max_size=3), max_leaves=6)

def _with_cc(p, c): return {**p, 'cache_control': c} if c else p

@st.composite
def parts(draw, images=True):
    kinds = ['text', 'img_data', 'img_url', 'pdf'] if images else ['text']
    res = []
    for k in draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=3)):
        if k=='text': p = {'type': 'text', 'text': draw(texts)}
        elif k=='img_data':
            mt = draw(st.sampled_from(['image/png', 'image/jpeg', 'image/webp']))
            url = f"data:{mt};base64,{draw(b64)}"
            p = {'type': 'image_url', 'image_url': draw(st.sampled_from([url, {'url': url}]))}  # lisette's bare-string form too
        elif k=='img_url': p = {'type': 'image_url', 'image_url': {'url': 'https://example.com/' + draw(st.from_regex(r'[a-z]{1,8}\.png', fullmatch=True))}}
        else: p = {'type': 'file', 'file': {'file_data': f"data:application/pdf;base64,{draw(b64)}"}}
        res.append(p)
    res[-1] = _with_cc(res[-1], draw(cc))
    return res

def content(images=True): return texts | parts(images)

@st.composite
def tool_call(draw, i):
    tid, name = f"toolu_{i}", draw(st.sampled_from(['add', 'read', 'search']))
    args = json.dumps(draw(st.dictionaries(st.text(min_size=1, max_size=5), json_vals, max_size=3)))
    if draw(st.booleans()): return {'index': i, 'id': tid, 'type': 'function', 'function': {'name': name, 'arguments': args}}
    return ChatCompletionMessageToolCall(function=Function(name=name, arguments=args), id=tid, type='function')

@st.composite
def assistant(draw, start):
    tcs = draw(st.lists(tool_call(start), max_size=0)) or [draw(tool_call(start+j)) for j in range(draw(st.integers(0, 3)))]
    if tcs and (c := draw(cc)):
        if isinstance(tcs[-1], dict): tcs[-1]['cache_control'] = c
        else: tcs[-1].cache_control = c
    txt = draw(st.none() | texts | parts(images=False)) if tcs else draw(content(images=False))
    tb = draw(st.lists(st.one_of(st.builds(lambda t,s: {'type': 'thinking', 'thinking': t, 'signature': s}, texts, texts),
                                 st.builds(lambda d: {'type': 'redacted_thinking', 'data': d}, texts)), max_size=2,
                       unique_by=lambda b: b.get('signature', b.get('data'))))  # a provider signs each block anew (litellm 1.110 drops a block whose signature repeats)
    kw = dict(content=txt, role='assistant')
    if tcs: kw['tool_calls'] = tcs
    if tb: kw |= dict(thinking_blocks=tb, reasoning_content=''.join(b.get('thinking', '') for b in tb))
    m = Message(**kw) if not isinstance(txt, list) and draw(st.booleans()) else kw  # a Message holds text content only
    return m, tcs

@st.composite
def histories(draw):
    hist, n = [], 0
    for _ in range(draw(st.integers(1, 4))):
        hist.append({'role': 'user', 'content': draw(content())})
        m, tcs = draw(assistant(n)); n += 4
        hist.append(m)
        for tc in tcs:
            res = draw(texts | parts())
            hist.append(mk_tc_result(tc, res))
        if tcs and draw(st.booleans()): hist.append({'role': 'user', 'content': draw(content())})
        if tcs: hist.append({'role': 'assistant', 'content': draw(texts)})
    return hist

sps = st.sampled_from(['', 'Be brief.'])
prop = settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---- Anthropic ----
@prop
@given(histories(), sps)
def test_anthropic_round_trip(hist, sp):
    last = norm_hist(hist)[-1] if hist else {}
    c = last.get('content')
    txts = [c] if isinstance(c, str) else [p.get('text') for p in c or [] if p.get('type')=='text']
    assume(not (last.get('role')=='assistant' and any(t!=t.rstrip() for t in txts)))  # stripped, and reported (test_final_assistant_whitespace_stripped)
    rep = []
    system, msgs = to_anthropic(hist, sp, report=rep)
    assert rep == []  # nothing in these histories is beyond Anthropic
    back = from_anthropic(msgs, system, report=rep)
    assert rep == []
    assert back == ([{'role': 'system', 'content': sp}] if sp else []) + norm_hist(hist)
    # and the other way: Anthropic -> ours -> Anthropic gives the same messages
    assert to_anthropic(back) == (system, msgs)
    json.dumps(msgs)  # a native request body

@prop
@given(histories())
def test_anthropic_shape(hist):
    "Every tool_use is answered in the very next (user) message, results first; roles alternate"
    _, msgs = to_anthropic(hist)
    for a,b in zip(msgs, msgs[1:]): assert a['role'] != b['role']
    for k,m in enumerate(msgs):
        ids = [o['id'] for o in m['content'] if o['type']=='tool_use']
        if not ids: continue
        nxt = msgs[k+1]['content']
        assert [o['tool_use_id'] for o in nxt[:len(ids)]] == ids
        assert all(isinstance(o['input'], dict) for o in m['content'] if o['type']=='tool_use')

def test_anthropic_reports_what_it_cannot_hold():
    hist = [{'role': 'user', 'name': 'ann', 'content': [{'type': 'text', 'text': 'hi'}, {'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,AA==', 'detail': 'high'}},
                                                       {'type': 'file', 'file': {'file_data': 'data:audio/wav;base64,AA=='}}]},
            {'role': 'assistant', 'content': 'x', 'reasoning_content': 'unsigned'},
            {'role': 'user', 'content': 'again'},
            {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 't1', 'type': 'function', 'function': {'name': 'f', 'arguments': '[1]'}}]},
            {'role': 'tool', 'tool_call_id': 't1', 'name': 'other', 'content': 'r'}]
    with pytest.warns(LossyConversionWarning) as w: to_anthropic(hist)
    assert len(w) == 1  # one warning, listing them all
    msg = str(w[0].message)
    for s in ["user name 'ann'", "detail='high'", 'audio/wav', 'without a signature', "not a JSON object ('[1]')", "name 'other'"]: assert s in msg
    rep = []
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        to_anthropic(hist, report=rep)  # with a report list there is no warning
    assert len(rep) == 6

def test_anthropic_export_of_deep_arguments():
    "A tool call whose arguments nest ~100,000 deep goes to Anthropic as `{}`, said, as arguments that are no JSON object do (it raised a RecursionError)"
    deep = '{"n": ' + '['*100_000 + ']'*100_000 + '}'
    h = [{'role': 'user', 'content': 'go'}, {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'toolu_d', 'type': 'function', 'function': {'name': 'f', 'arguments': deep}}]},
         {'role': 'tool', 'tool_call_id': 'toolu_d', 'name': 'f', 'content': 'not called'}]
    notes = []
    _, msgs = to_anthropic(h, report=notes)
    assert msgs[1]['content'] == [{'type': 'tool_use', 'id': 'toolu_d', 'name': 'f', 'input': {}}]
    assert any("'toolu_d'" in n and 'nested too deeply' in n and 'sent as {}' in n for n in map(str, notes)), notes

def test_export_leaves_out_provider_calls_and_compaction_pause():
    """A provider's call the chat marked its own (no result came: litellm 1.106 drops some) and Anthropic's pause after
    compacting (only the compaction block) are left out of an export, noted: a request carries neither"""
    srv = {'id': 'srvtoolu_01', 'type': 'function', 'function': {'name': 'web_search', 'arguments': '{"query": "q"}'}}
    own = {'id': 'toolu_01', 'type': 'function', 'function': {'name': 'add', 'arguments': '{"a": 2, "b": 2}'}}
    comp = {'compaction_blocks': [{'type': 'compaction', 'content': 'Summary.'}], 'stop_reason': 'compaction'}
    hist = [{'role': 'user', 'content': '2+2, and the weather?'},
            {'role': 'assistant', 'content': None, 'tool_calls': [srv, own], 'provider_specific_fields': {'lisette_provider_calls': ['srvtoolu_01']}},
            {'role': 'tool', 'tool_call_id': 'toolu_01', 'name': 'add', 'content': '4'},
            {'role': 'assistant', 'content': None, 'provider_specific_fields': comp}, {'role': 'assistant', 'content': 'It is 4.'}]
    for conv in (to_openai, to_anthropic):
        rep = []
        out = conv(hist, report=rep)
        msgs = out[1] if conv is to_anthropic else out
        assert 'srvtoolu_01' not in json.dumps(msgs) and 'toolu_01' in json.dumps(msgs) and len(msgs) == 4, conv
        assert len(rep) == 2 and any("provider's own tool call" in str(r) for r in rep) and any('compacted' in str(r) for r in rep), rep

def test_from_anthropic_reports():
    msgs = [{'role': 'user', 'content': 'q'},
            {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 't1', 'name': 'f', 'input': {}}, {'type': 'text', 'text': 'after'},
                                              {'type': 'server_tool_use', 'id': 's', 'name': 'web_search', 'input': {}}]},
            {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 't1', 'content': 'bad', 'is_error': True}]}]
    rep = []
    h = from_anthropic(msgs, report=rep)
    assert [m['role'] for m in h] == ['user', 'assistant', 'tool']
    assert h[2]['name'] == 'f' and h[1]['content'] == 'after'
    assert any('is_error' in o for o in rep) and any('server_tool_use' in o for o in rep) and any('text after a tool_use' in o for o in rep)

def test_from_anthropic_sdk_objects():
    "SDK objects (anything with model_dump) are read like dicts"
    class Blk:
        def __init__(self, **kw): self.kw = kw
        def model_dump(self, exclude_none=False): return self.kw
    h = from_anthropic([Blk(role='assistant', content=[Blk(type='thinking', thinking='t', signature='s'), Blk(type='text', text='hi')])])
    assert h == [{'role': 'assistant', 'content': 'hi', 'thinking_blocks': [{'type': 'thinking', 'thinking': 't', 'signature': 's'}], 'reasoning_content': 't'}]

# ---- OpenAI ----
def _openai_view(m):
    "What the OpenAI form expresses of one normalised message: no cache_control, no thinking"
    m = json.loads(json.dumps(m))
    m.pop('thinking_blocks', None); m.pop('reasoning_content', None)
    for tc in m.get('tool_calls') or []: tc.pop('cache_control', None)
    if isinstance(m['content'], list):
        for p in m['content']: p.pop('cache_control', None)
    return norm_msg(m)

@prop
@given(histories(), sps)
def test_openai_round_trip(hist, sp):
    rep = []
    msgs = to_openai(hist, sp, report=rep)
    back = from_openai(msgs)
    assert back == ([{'role': 'system', 'content': sp}] if sp else []) + [_openai_view(m) for m in norm_hist(hist)]
    had = any(_openai_view(m) != m for m in norm_hist(hist))
    assert bool(rep) == had  # what was dropped was reported, and only that
    assert to_openai(back) == msgs
    for m in msgs:
        assert '"cache_control":' not in json.dumps(m) and 'thinking_blocks' not in m  # as a key (texts may say it)
        check_msg(m)

@prop
@given(st.lists(st.sampled_from(['reasoning_content', 'reasoning', 'reasoning_details', 'thinking_blocks', 'psf']), min_size=1, max_size=1), texts, texts)
def test_reasoning_one_representation(shape, txt, sig):
    "Every reasoning shape ends up as thinking_blocks (when signed) + reasoning_content"
    shape = shape[0]
    m = {'role': 'assistant', 'content': 'a'}
    signed = shape in ('reasoning_details', 'thinking_blocks', 'psf')
    if shape=='reasoning_content': m['reasoning_content'] = txt
    elif shape=='reasoning': m['reasoning'] = txt
    elif shape=='reasoning_details': m['reasoning_details'] = [{'type': 'reasoning.text', 'text': txt, 'signature': sig}]
    elif shape=='thinking_blocks': m['thinking_blocks'] = [{'type': 'thinking', 'thinking': txt, 'signature': sig}]
    else: m['provider_specific_fields'] = {'thinking_blocks': [{'type': 'thinking', 'thinking': txt, 'signature': sig}]}
    h = from_openai([m])[0]
    assert h['reasoning_content'] == txt
    assert h.get('thinking_blocks') == ([{'type': 'thinking', 'thinking': txt, 'signature': sig}] if signed else None)
    rep = []
    _, am = to_anthropic([h], report=rep)
    assert (am[0]['content'][0]['type'] == 'thinking') == signed
    assert bool(rep) != signed  # unsigned reasoning is reported, not silently dropped

# ---- what check_msg refuses but a lossy conversion leaves out: legacy 'function' messages, unknown part types ----

_legacy = [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': None, 'function_call': {'name': 'f', 'arguments': '{}'}},
           {'role': 'function', 'name': 'f', 'content': '42'}, {'role': 'user', 'content': 'ok'}]

@pytest.mark.parametrize('conv', ['to_openai', 'to_anthropic'])
def test_to_converters_leave_out_legacy_function_messages_with_a_note(conv):
    "check_msg refuses OpenAI's legacy 'function' role (and the converters check first): they raised MessageFormatError, now they leave it out and say so"
    rep = []
    out = to_openai(_legacy, report=rep) if conv=='to_openai' else to_anthropic(_legacy, report=rep)[1]
    assert [m['role'] for m in out] == ['user', 'user']  # the assistant message held only the function_call
    assert [m['content'] for m in out if m['role']=='user'] == (['q', 'ok'] if conv=='to_openai' else [[{'type': 'text', 'text': 'q'}], [{'type': 'text', 'text': 'ok'}]])
    assert rep == ["message 1: legacy function_call dropped (use tool_calls)",
                   "message 1: assistant message left empty, dropped (no provider takes an empty assistant message)",
                   "message 2: legacy 'function' message dropped (use 'tool' messages)"]
    with pytest.warns(LossyConversionWarning, match="message 2: legacy 'function' message dropped"):
        to_openai(_legacy) if conv=='to_openai' else to_anthropic(_legacy)

@pytest.mark.parametrize('conv', ['to_openai', 'to_anthropic', 'from_openai'])
@pytest.mark.parametrize('fc', ['', {}])
def test_converters_leave_out_any_legacy_function_call(conv, fc):
    "A `function_call` litellm sends as a call though it is empty ('' or {}), which `check_msg` refuses: left out with a note, as a full one is"
    h, rep = [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': 'a', 'function_call': fc}], []
    out = to_anthropic(h, report=rep)[1] if conv=='to_anthropic' else globals()[conv](h, report=rep)
    assert len(out) == 2 and 'function_call' not in out[1] and rep == ["message 1: legacy function_call dropped (use tool_calls)"]

@pytest.mark.parametrize('conv', ['to_openai', 'to_anthropic'])
def test_to_converters_leave_out_unknown_part_types_with_a_note(conv):
    "A content part of a type no provider takes is left out, noted, in any role's content; the known parts stay"
    f = (lambda h, **kw: to_openai(h, **kw)) if conv=='to_openai' else (lambda h, **kw: to_anthropic(h, **kw)[1])
    tc = mk_tc('add', tcid='call_1', a=1)
    hist = [{'role': 'user', 'content': [{'type': 'text', 'text': 'q'}, {'type': 'video_blob', 'data': 'x'}]}, mk_tc_req('', [tc]),
            {'role': 'tool', 'tool_call_id': 'call_1', 'content': [{'type': 'hologram', 'data': 'f'}, {'type': 'text', 'text': '1'}]},
            {'role': 'user', 'content': [{'type': 'search_result', 'source': 'x'}]}]
    rep = []
    out = f(hist, report=rep)
    assert 'video_blob' not in json.dumps(out) and 'hologram' not in json.dumps(out) and 'search_result' not in json.dumps(out)
    assert '"q"' in json.dumps(out) and '"1"' in json.dumps(out)
    for i,t in [(0, 'video_blob'), (2, 'hologram'), (3, 'search_result')]: assert f"message {i}: {t!r} part dropped (no provider takes it)" in rep

@pytest.mark.parametrize('conv', ['to_openai', 'to_anthropic'])
@pytest.mark.parametrize('bad', [{'role': 'bot', 'content': 'x'}, {'role': 'user', 'content': [{'type': 'text', 'text': 5}]},
                                 {'role': 'user', 'content': ['x']}, {'role': 'user', 'content': 'x', 'tool_calls': 'nope'},
                                 {'role': 'assistant', 'content': [{'type': 'refusal', 'refusal': None}]}])
def test_to_converters_still_refuse_wrong_shapes(conv, bad):
    with pytest.raises(MessageFormatError, match='message 1'):
        (to_openai if conv=='to_openai' else to_anthropic)([{'role': 'user', 'content': 'q'}, bad], report=[])

_refusal = [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': [{'type': 'refusal', 'refusal': 'I cannot help with that.'}]},
            {'role': 'user', 'content': 'why?'}]

def test_refusal_parts():
    "OpenAI's refusal part (valid in its API) raised MessageFormatError in all three converters: from_openai and to_openai keep it, to_anthropic makes it text, noted"
    rep = []
    h = from_openai(_refusal, report=rep)
    assert h[1] == _refusal[1] and rep == []
    assert Chat('anthropic/claude-sonnet-4-5', hist=h).hist[1] == _refusal[1]  # a history Chat takes (and fits to each provider)
    rep = []
    _, am = to_anthropic(_refusal, report=rep)
    assert am[1] == {'role': 'assistant', 'content': [{'type': 'text', 'text': 'I cannot help with that.'}]}
    assert rep == ["message 1: refusal part made a text part (Anthropic has no refusal block)"]
    rep = []
    assert to_openai(_refusal, report=rep)[1] == _refusal[1] and rep == []

def test_from_openai_leaves_out_unknown_part_types_with_a_note():
    rep = []
    h = from_openai([{'role': 'user', 'content': [{'type': 'text', 'text': 'q'}, {'type': 'video_blob'}]}], report=rep)
    assert h == [{'role': 'user', 'content': 'q'}] and rep == ["message 0: 'video_blob' part dropped (no provider takes it)"]

def test_openai_from_sdk_shapes():
    rep = []
    h = from_openai([{'role': 'user', 'content': 'x'}, {'role': 'function', 'name': 'f', 'content': '1'},
                     Message(content='y', role='assistant', reasoning_details=[{'type': 'reasoning.encrypted', 'data': 'E'}])], report=rep)
    assert len(h) == 2 and h[1]['thinking_blocks'] == [{'type': 'redacted_thinking', 'data': 'E'}]
    assert len(rep) == 1 and "'function'" in rep[0]

# ---- through the fake provider ----
def _hist():
    t1 = mk_tc('add', tcid='toolu_1', a=1, b=2); t1['cache_control'] = {'type': 'ephemeral'}
    t2 = ChatCompletionMessageToolCall(function=Function(name='add', arguments='{"a": 3, "b": 4}'), id='toolu_2', type='function')
    return [{'role': 'user', 'content': [{'type': 'text', 'text': 'Add, and look.'}, {'type': 'image_url', 'image_url': 'data:image/png;base64,iVBORw0KGgo='},
                                         {'type': 'image_url', 'image_url': {'url': 'https://example.com/a.png'}},
                                         {'type': 'file', 'file': {'file_data': 'data:application/pdf;base64,JVBERi0xLjQ='}}]},
            Message(content='Adding.', role='assistant', tool_calls=[t1, t2], reasoning_content='Use the tool.',
                    thinking_blocks=[{'type': 'thinking', 'thinking': 'Use the tool.', 'signature': 'sig1'}]),
            mk_tc_result(t1, '3'), mk_tc_result(t2, [{'type': 'text', 'text': '7'}]),
            {'role': 'user', 'content': 'And?'},
            {'role': 'assistant', 'content': '3 and 7.'},
            {'role': 'user', 'content': [{'type': 'text', 'text': 'Thanks', 'cache_control': {'type': 'ephemeral'}}]}]

def test_final_assistant_whitespace_stripped():
    rep = []
    _, msgs = to_anthropic([{'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': 'Sure. \n'}], report=rep)
    assert msgs[-1]['content'] == [{'type': 'text', 'text': 'Sure.'}]
    assert rep == ['message 1: trailing whitespace removed from the final assistant text (Anthropic rejects it)']

def test_native_anthropic_request(fake_provider):
    fp = fake_provider
    fp.strict = False  # the history's thinking signatures are made up here: the provider never issued them
    hist = _hist()
    system, msgs = to_anthropic(hist, 'Be brief.')
    fp.queue(Reply('Welcome. Let me add more.', thinking='more', signature='sig2', tool_calls=[('add', {'a': 5})]))
    body = {'model': 'claude-sonnet-4-5', 'max_tokens': 1024, 'system': system, 'messages': msgs}
    r = httpx.post(fp.anthropic_base + '/v1/messages', json=body, headers={'x-api-key': 'fake', 'anthropic-version': '2023-06-01'})
    assert r.status_code == 200, r.text
    assert fp.last == body
    reply = r.json()
    new = from_anthropic([*msgs, {'role': reply['role'], 'content': reply['content']}], system)
    sp, cont = split_system(new)
    assert sp == 'Be brief.' and cont[:-1] == norm_hist(hist)
    last = cont[-1]
    assert last['content'] == 'Welcome. Let me add more.'
    assert last['thinking_blocks'] == [{'type': 'thinking', 'thinking': 'more', 'signature': 'sig2'}]
    assert json.loads(last['tool_calls'][0]['function']['arguments']) == {'a': 5}
    for i,m in enumerate(cont): check_msg(m, i)
    # the continuation goes on through litellm: the tool result is answered and the provider gets the whole history
    def add(a:int, b:int=0) -> int:
        "Add"
        return a + b
    fp.queue("Done.")
    tc = cont[-1]['tool_calls'][0]
    chat = Chat('anthropic/claude-sonnet-4-5', sp=sp, hist=cont + [mk_tc_result(tc, str(add(**json.loads(tc['function']['arguments']))))],
                tools=[add], api_base=fp.anthropic_base, api_key='fake')
    r2 = chat()
    assert contents(r2).content == 'Done.'
    sent = fp.last['messages']
    assert sent[-1]['content'][0] == {'type': 'tool_result', 'tool_use_id': cont[-1]['tool_calls'][0]['id'], 'content': '5'}
    assert sent[-2]['content'][0] == {'type': 'thinking', 'thinking': 'more', 'signature': 'sig2'}

def _blocks_view(system, msgs):
    "Anthropic request on what both litellm and to_anthropic produce: system as blocks, one-text tool results as str"
    system = [{'type': 'text', 'text': system}] if isinstance(system, str) else system or []
    res = []
    for m in msgs:
        c = [{'type': 'text', 'text': m['content']}] if isinstance(m['content'], str) else m['content']
        bs = []
        for b in c:
            b = dict(b)
            if b['type']=='tool_result' and isinstance(b.get('content'), list) and len(b['content'])==1 and set(b['content'][0])=={'type', 'text'}:
                b['content'] = b['content'][0]['text']
            bs.append(b)
        res.append({'role': m['role'], 'content': bs})
    return [{k:v for k,v in b.items()} for b in system], res

def test_litellm_agrees_with_to_anthropic(fake_provider):
    fp = fake_provider
    fp.strict = False  # the history's thinking signatures are made up here: the provider never issued them
    hist = _hist()
    fp.queue('ok')
    litellm.completion(model='anthropic/claude-sonnet-4-5', messages=[{'role': 'system', 'content': 'Be brief.'}, *hist],
                       api_base=fp.anthropic_base, api_key='fake')
    got = _blocks_view(fp.last.get('system'), fp.last['messages'])
    assert got == _blocks_view(*to_anthropic(hist, 'Be brief.'))

@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(hist=histories())
def test_litellm_agrees_property(fake_provider, hist):
    "For generated histories, litellm's Anthropic request equals to_anthropic's on the blocks both produce"
    fp = fake_provider
    fp.strict = False  # generated histories carry made-up thinking signatures
    fp.queue('ok')
    litellm.completion(model='anthropic/claude-sonnet-4-5', messages=[{'role': 'system', 'content': 'S'}, *hist],
                       api_base=fp.anthropic_base, api_key='fake')
    assert _blocks_view(fp.last.get('system'), fp.last['messages']) == _blocks_view(*to_anthropic(hist, 'S'))

# ---- save / load ----
def _types(h): return [type(m).__name__ + ':' + ','.join(type(tc).__name__ for tc in ((m.get('tool_calls') if isinstance(m, dict) else m.tool_calls) or [])) for m in h]

def _at_most_4_ckpts(h):
    from lisette.history import check_hist, HistoryError
    try: check_hist(h, pending_ok=True); return True
    except HistoryError as e: return 'cache checkpoint' not in str(e)

@prop
@given(histories(), sps, st.dictionaries(st.text(min_size=1, max_size=6), json_vals, max_size=3),
       st.fixed_dictionaries({'temp': st.sampled_from([0, 0.5, None]), 'search': st.sampled_from([False, 'l', 'h']), 'cache': st.booleans(),
                              'cache_idxs': st.sampled_from([[-1], [0, -1], [-2, -1]]), 'ttl': st.sampled_from([None, '1h']),
                              'max_tokens': st.sampled_from([None, 100]), 'tc_refs': st.booleans(), 'markup': st.sampled_from([0, 0.5]),
                              'tool_reminder': st.sampled_from([None, 'Remember.'])}))
def test_save_load_round_trip(hist, sp, tc_res, kw):
    if not kw['cache']: assume(_at_most_4_ckpts(hist))  # (a chat that moves none holds at most 4)
    chat = Chat('anthropic/claude-sonnet-4-5', sp=sp, api_key='sk-very-secret', **kw)
    chat._hist = hist  # as Chat keeps it, cache checkpoints included
    if chat.tc_res is not None: chat.tc_res.update(tc_res)
    chat.use, chat.last_use = UsageStats(1, 2, 3, 4, 5, 6, 7, 0.25), UsageStats(prompt_tokens=9, cost=0.5)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d)/'c.json'
        chat.save(p)
        assert 'sk-very-secret' not in p.read_text()
        c2 = Chat.load(p)
    assert c2.hist == hist and _types(c2.hist) == _types(hist)
    assert (c2.model, c2.sp, c2.tc_res, c2.use, c2.last_use) == (chat.model, chat.sp, chat.tc_res, chat.use, chat.last_use)
    for k in ('temp', 'search', 'cache', 'cache_idxs', 'ttl', 'max_tokens', 'markup', 'tool_reminder'): assert getattr(c2, k) == getattr(chat, k), k
    assert c2.api_key is None

def test_save_non_json_tc_res(tmp_path):
    chat = Chat('openai/gpt-4o-mini', tc_refs=True)
    chat.tc_res |= {'a': 1, 'b': {1, 2}, 'c': (1, 2)}
    with pytest.warns(LossyConversionWarning, match='b, c'): chat.save(tmp_path/'c.json')
    d = json.loads((tmp_path/'c.json').read_text())
    assert d['tc_res_repr'] == ['b', 'c'] and d['tc_res']['c'] == '(1, 2)'
    with pytest.warns(AdjustmentWarning, match='saved as their repr'): c2 = Chat.load(tmp_path/'c.json')
    assert c2.tc_res == {'a': 1, 'b': '{1, 2}', 'c': '(1, 2)'}

def test_load_errors(tmp_path):
    p = tmp_path/'x.json'
    p.write_text('{"format": "other"}')
    with pytest.raises(ValueError, match='not a saved lisette chat'): load_chat(p)
    p.write_text(json.dumps({'format': 'lisette.chat', 'version': 99}))
    with pytest.raises(ValueError, match='version 99'): load_chat(p)
    p.write_text('{oops')
    with pytest.raises(ValueError, match='invalid JSON'): load_chat(p)
    chat = Chat('openai/gpt-4o-mini', hist=['hi'])
    chat.save(p)
    d = json.loads(p.read_text()); d['hist'][0]['role'] = 'robot'; p.write_text(json.dumps(d))
    with pytest.raises(ValueError, match="message 0: 'role'"): load_chat(p)

@pytest.mark.parametrize('proto', ['openai', 'anthropic'])
def test_loaded_chat_continues(fake_provider, tmp_path, proto):
    fp = fake_provider
    m, base = ('openai/gpt-4o-mini', fp.openai_base) if proto=='openai' else ('anthropic/claude-sonnet-4-5', fp.anthropic_base)
    def add(a:int, b:int=0) -> int:
        "Add two numbers"
        return a + b
    fp.queue(Reply('Adding.', thinking='t', tool_calls=[('add', {'a': 1, 'b': 2})]), 'It is 3.')
    chat = Chat(m, sp='Be brief.', tools=[add], cache=True, tc_refs=True, api_base=base, api_key='fake-key-123')
    chat('1+2?')
    before = fp.last['messages']
    chat.save(tmp_path/'c.json')
    assert 'fake-key-123' not in (tmp_path/'c.json').read_text()
    c2 = Chat.load(tmp_path/'c.json', tools=[add], api_base=base, api_key='fake')  # where requests go: the caller's choice
    assert c2.sp == chat.sp and c2.sp.count('$`tool_call_id`') == 1
    fp.queue('You asked about 1+2.')
    r = c2('What did I ask?')
    assert contents(r).content == 'You asked about 1+2.'
    sent = fp.last['messages']
    # the new request carries the whole previous conversation (plus the answer and the new question)
    strip = lambda o: json.loads(json.dumps(o).replace(', "cache_control": {"type": "ephemeral"}', ''))
    assert strip(sent[:len(before)]) == strip(before)
    assert len(sent) == len(before) + (2 if proto=='openai' else 2)
    assert c2.use.total_tokens == chat.use.total_tokens + 15

async def _acall(c, msg): return await c(msg)

def test_load_async(fake_provider, tmp_path):
    import asyncio
    fp = fake_provider
    fp.queue('hi', 'again')
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    chat('hello')
    chat.save(tmp_path/'c.json')
    c2 = AsyncChat.load(tmp_path/'c.json', api_base=fp.openai_base, api_key='k')
    assert isinstance(c2, AsyncChat)
    asyncio.run(_acall(c2, 'more'))
    assert [o['content'] for o in fp.last['messages']] == ['hello', 'hi', 'more']

# ---- token budget ----
def test_count_tokens_grows_with_content_tools_images():
    m = 'openai/gpt-4o-mini'
    base = count_tokens([{'role': 'user', 'content': 'hi'}], m)
    assert count_tokens([{'role': 'user', 'content': 'hi ' * 100}], m) > base + 50
    tool = {'type': 'function', 'function': {'name': 'add', 'description': 'Add two numbers', 'parameters': {'type': 'object', 'properties': {'a': {'type': 'integer'}}}}}
    assert count_tokens([{'role': 'user', 'content': 'hi'}], m, tools=[tool]) > base
    img = [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}, {'type': 'image_url', 'image_url': {'url': 'https://example.com/x.png'}}]}]
    assert count_tokens(img, m) > base
    assert count_tokens([{'role': 'user', 'content': 'hi'}], m, sp='You are a careful assistant.') > base
    assert count_tokens(_hist(), 'anthropic/claude-sonnet-4-5') > 0  # Messages, tool-call objects, thinking

def test_context_window():
    assert context_window('openai/gpt-4o-mini') == 128000
    assert context_window('no-such/model') is None

@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 3000), min_size=1, max_size=5), st.integers(50, 3000))
def test_shorten_oldest_first(sizes, budget):
    m = 'openai/gpt-4o-mini'
    hist = [{'role': 'user', 'content': 'go'}]
    for i,n in enumerate(sizes):
        tc = mk_tc('read', tcid=f'toolu_{i}', i=i)
        hist += [mk_tc_req('', [tc]), mk_tc_result(tc, 'word ' * n)]
    orig = json.dumps(norm_hist(hist))
    new, done = shorten_tool_results(hist, budget, m, keep=50)
    assert json.dumps(norm_hist(hist)) == orig  # input untouched
    idx = [o['index'] for o in done]
    trs = [i for i,o in enumerate(hist) if isinstance(o, dict) and o.get('role')=='tool']
    assert idx == sorted(idx)
    for i in idx:
        assert new[i]['content'].startswith(hist[i]['content'][:50]) and 'chars removed to fit the context window]' in new[i]['content']
        assert len(new[i]['content']) < len(hist[i]['content'])
    small = 50 + len(shorten_marker) + 10  # results this short are not worth shortening
    if count_tokens(new, m) > budget:  # did not fit: then every result that could be shortened was
        assert all(i in idx or len(hist[i]['content']) <= small for i in trs)
    elif done:  # fit: and shortening stopped as soon as it did (oldest first)
        before_last = list(new); before_last[idx[-1]] = hist[idx[-1]]
        assert count_tokens(before_last, m) > budget
        assert all(i in idx or len(hist[i]['content']) <= small for i in trs if i < idx[-1])

@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_bytes_bound_is_an_upper_bound(hist):
    "check_context skips counting when this bound fits, so it must never be below litellm's count"
    from lisette.context import _bytes_bound
    for m in ('openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5'): assert _bytes_bound(hist, sp='S') >= count_tokens(hist, m, sp='S')

def test_check_context_warns_and_shortens():
    m = 'openai/gpt-4o-mini'
    tc = mk_tc('read', tcid='toolu_x')
    hist = [{'role': 'user', 'content': 'go'}, mk_tc_req('', [tc]), mk_tc_result(tc, 'word ' * 2000)]
    n = count_tokens(hist, m)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert check_context(hist, m) == (hist, [])  # fits in 128k: silent
    with pytest.warns(ContextWindowWarning, match='likely reject'): check_context(hist, m, window=n - 10)
    with pytest.warns(ContextWindowWarning, match=r'Shortened 1 tool result\(s\).*read \(toolu_x'):
        h2, done = check_context(hist, m, window=n, max_tokens=100, shorten=True)
    assert len(done) == 1 and count_tokens(h2, m) <= n - 100

def test_saved_settings_follow_chat_signature(tmp_path):
    "Every `Chat` argument but the model, prompt, history, code and secrets is saved, so a new one cannot be forgotten"
    import inspect
    from lisette.interop import _settings, _not_saved
    assert set(_settings) | (_not_saved - {'self'}) == set(inspect.signature(Chat.__init__).parameters) - {'self'}
    c = Chat('openai/gpt-4o-mini', retries=1, max_cost=2.5, repair=True, fit_context=True)
    c2 = load_chat(save_chat(c, tmp_path/'c.json'))
    assert (c2.retries, c2.max_cost, c2.repair, c2.fit_context) == (1, 2.5, True, True)

def _broken_save(tmp_path, drop):
    "A saved chat of one tool round, with the messages at `drop` removed from its file"
    q = mk_tc_req('Adding.', [mk_tc('add', a=1, b=2), mk_tc('add', a=3, b=4)])
    chat = Chat('anthropic/claude-sonnet-4-5', hist=['Add 1+2 and 3+4', q, mk_tc_result(q.tool_calls[0], '3'), mk_tc_result(q.tool_calls[1], '7'), '3 and 7'])
    p = chat.save(tmp_path/'c.json')
    d = json.loads(p.read_text())
    d['hist'] = [m for i,m in enumerate(d['hist']) if i not in drop]
    p.write_text(json.dumps(d))
    return p, q

@pytest.mark.parametrize('cls', [Chat, AsyncChat])
def test_load_refuses_a_broken_history(tmp_path, cls):
    "A saved chat whose tool call lost its result is refused, naming the message, as Chat(hist=...) refuses it; nothing is sent"
    p, q = _broken_save(tmp_path, {3})
    with pytest.raises(SavedChatError, match=r"hist\[1\]: message 1: tool call '.*' \(add\) has no result before message 3.*repair=True") as e:
        load_chat(p, cls=cls)
    assert e.value.field == 'hist[1]'
    p, _ = _broken_save(tmp_path, {1})  # the results lost their call
    with pytest.raises(SavedChatError, match=r"hist\[1\]: .*orphan|hist\[1\]: .*no matching tool call"): load_chat(p, cls=cls)

def test_load_names_the_first_bad_message(tmp_path):
    "A file with several bad messages names the first, whatever is wrong with it (its shape, or a message that does not decode), as message by message it did"
    p, _ = _broken_save(tmp_path, set())
    d = json.loads(p.read_text())
    d['hist'][0]['role'] = 'narrator'  # a shape check_msg refuses
    d['hist'][1]['fields'] = 5  # no message at all
    p.write_text(json.dumps(d))
    with pytest.raises(SavedChatError, match=r"hist\[0\].*narrator") as e: load_chat(p)
    assert e.value.field.startswith('hist[0]')
    d['hist'][0]['role'] = 'user'
    p.write_text(json.dumps(d))
    with pytest.raises(SavedChatError, match=r"hist\[1\]: not a message"): load_chat(p)
    del d['hist'][1]  # a whole history in the quick form but one tool result's id: its own message is named (not the quick pass's verdict)
    d['hist'][1]['tool_call_id'] = 7
    p.write_text(json.dumps(d))
    with pytest.raises(SavedChatError, match=r"hist\[1\].*tool_call_id' is 7, of type int, not a str"): load_chat(p)  # (not "is missing")

@pytest.mark.parametrize('own', [None, 'srvtoolu_01', [3]])
def test_load_checks_provider_fields_on_both_paths(tmp_path, own):
    """A call message whose `lisette_provider_calls` is no list of ids is refused naming its field, whether the history is
    in the quick form (text and client tool rounds, one pass) or not (each message checked): the quick pass took a null"""
    p, _ = _broken_save(tmp_path, set())
    d = json.loads(p.read_text())
    d['hist'][1]['fields']['provider_specific_fields'] = {'lisette_provider_calls': own}
    for slow in (False, True):
        if slow: d['hist'][0] = {'role': 'user', 'content': [{'type': 'text', 'text': 'Add 1+2 and 3+4'}]}  # (a list of parts: not the quick form)
        p.write_text(json.dumps(d))
        with pytest.raises(SavedChatError, match=r"hist\[1\]\.provider_specific_fields: lisette_provider_calls is not a list of call ids") as e: load_chat(p)
        assert e.value.field == 'hist[1].provider_specific_fields'

def test_loaded_plain_history_bound_holds_after_mending(tmp_path):
    "A plain history (text, client tool rounds) is bounded before its lone surrogates are mended: the bound is the mended history's, and it has no cache checkpoints"
    from lisette.history import _plain_bytes
    q = mk_tc_req('Adding ü.', [mk_tc('add', a=1, b=2), mk_tc('add', a=3, b=4)])
    chat = Chat('anthropic/claude-sonnet-4-5', hist=['Add 1+2 and 3+4', q, mk_tc_result(q.tool_calls[0], '3'), mk_tc_result(q.tool_calls[1], '7'), '3 and 7 \ud800'])
    c = load_chat(chat.save(tmp_path/'c.json'))
    assert c.hist[-1]['content'] == '3 and 7 \ufffd' and c._ckpts == []
    assert c._hist_bound == (5, _plain_bytes(c.hist, pending_ok=True))

async def test_load_repairs_a_broken_history_and_says_so(tmp_path, fake_provider):
    "With repair=True the history is repaired (the lost result answered as interrupted), reported, and the provider takes it"
    fp = fake_provider
    p, q = _broken_save(tmp_path, {3})
    for cls in (Chat, AsyncChat):
        with pytest.warns(UserWarning, match='repaired'):
            chat = load_chat(p, cls=cls, repair=True, api_base=fp.anthropic_base, api_key='k')
        assert [m.get('content') for m in chat.hist[2:4]] == ['3', interrupted_result]
        assert [a.kind for a in chat.adjustments] == ['history']
        fp.queue('ok')
        r = chat('next')
        if cls is AsyncChat: r = await r
        assert contents(r).content == 'ok'
        assert fp.last['messages'][2]['content'][1]['content'] == interrupted_result  # sent as the tool_result of the lost call

def test_load_rejects_non_json_constants(tmp_path):
    "NaN or Infinity in a saved chat (Python's json writes them, no provider reads them): SavedChatError, not a 500 on the next turn"
    chat = Chat('openai/gpt-4o-mini', hist=['hi', 'hello'])
    p = chat.save(tmp_path/'c.json')
    p.write_text(p.read_text().replace('"content": "hello"', '"content": "hello", "x": NaN'))
    with pytest.raises(SavedChatError, match='NaN is not a JSON value'): load_chat(p)

def test_load_rejects_tool_call_fields_that_replace_methods(tmp_path):
    "A saved tool call whose fields name a method (model_dump) or a private name: SavedChatError, not a chat that loads and then cannot be saved"
    chat = Chat('openai/gpt-4o-mini', hist=['add', mk_tc_req('', [mk_tc('add', tcid='call_1', a=1)]), {'role': 'tool', 'tool_call_id': 'call_1', 'content': '1'}, 'ok'])
    p = chat.save(tmp_path/'c.json')
    good = p.read_text()
    assert load_chat(p).hist[1].tool_calls[0].id == 'call_1'
    for k in ('model_dump', '_secret'):
        p.write_text(good.replace('"id": "call_1"', f'"id": "call_1", "{k}": "not a method"', 1))
        with pytest.raises(SavedChatError, match=rf"hist\[1\].*{k}.*not a field"): load_chat(p)

def test_to_anthropic_keeps_tool_reference():
    "A tool result's `tool_reference` part (Anthropic's tool search) is an Anthropic block: to_anthropic passes it on, as litellm does"
    tc = mk_tc('add', tcid='call_1', a=1)
    hist = ['find a tool', mk_tc_req('', [tc]), {'role': 'tool', 'tool_call_id': 'call_1', 'content': [{'type': 'tool_reference', 'tool_name': 'add'}]}]
    rep = []
    _, msgs = to_anthropic(mk_msgs(hist), report=rep)
    assert {'type': 'tool_reference', 'tool_name': 'add'} in msgs[-1]['content'][0]['content'] and not rep

def test_from_openai_keeps_refusals_and_spoken_replies_for_chat(fake_provider):
    "What from_openai reads keeps OpenAI's refusal and spoken reply: a Chat sends them back to OpenAI as they are, to Anthropic as text"
    import time
    fp = fake_provider
    audio = {'id': 'audio_9', 'data': 'UklGRg==', 'expires_at': int(time.time())+3600, 'transcript': 'Hello there.'}
    oa = [*_refusal, {'role': 'assistant', 'content': None, 'audio': audio}, {'role': 'user', 'content': 'And?'},
          {'role': 'assistant', 'content': 'Words too.', 'audio': {**audio, 'id': 'audio_10'}}]
    h = from_openai(oa, report=(rep := []))
    assert h[3]['audio'] == audio and h[5]['audio']['id'] == 'audio_10' and rep == []
    fp.queue('ok', 'fine')
    chat = Chat('openai/gpt-4o-audio-preview', hist=h, api_base=fp.openai_base, api_key='k')
    chat('Go on')
    sent = fp.last['messages']
    assert sent[1] == _refusal[1] and sent[3] == {'role': 'assistant', 'audio': {'id': 'audio_9'}}
    assert sent[5]['audio'] == {'id': 'audio_10'} and sent[5]['content'] == 'Words too.'
    chat.model, chat.api_base = 'anthropic/claude-sonnet-4-5', fp.anthropic_base
    chat('And now?')
    sent = fp.last['messages']
    assert sent[1]['content'][0]['text'] == 'I cannot help with that.' and sent[3]['content'][0]['text'] == 'Hello there.'

def test_openai_refusal_field_round_trip():
    "from_openai reads the refusal field, to_openai writes it back; an audio that is not a dict is left out with a note"
    api = [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': None, 'refusal': 'No.'}]
    h = from_openai(api, report=[])
    assert h[1] == {'role': 'assistant', 'content': 'No.', 'refusal': 'No.'}
    assert to_openai(h, report=(rep := []))[1] == h[1] and rep == []
    h = from_openai([{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': 'Hi', 'audio': 'not audio'}], report=(rep := []))
    assert h[1] == {'role': 'assistant', 'content': 'Hi'} and len(rep) == 1 and rep[0].startswith('message 1: audio left out')

def test_tc_res_repr_survives_a_second_save(tmp_path):
    "A value saved as its repr stays marked as one through load and save again, and loading says it is text now"
    chat = Chat('openai/gpt-4o-mini', tc_refs=True)
    chat.tc_res |= {'a': 1, 'b': {1, 2}}
    with pytest.warns(LossyConversionWarning): chat.save(tmp_path/'c.json')
    with pytest.warns(AdjustmentWarning): c2 = Chat.load(tmp_path/'c.json')
    assert [a.kind for a in c2.adjustments] == ['tc_res'] and "'b'" not in c2.adjustments[0].detail and "b were saved" in c2.adjustments[0].detail
    with warnings.catch_warnings(): warnings.simplefilter('error'); c2.save(tmp_path/'c2.json')  # no second warning: it was text already
    assert json.loads((tmp_path/'c2.json').read_text())['tc_res_repr'] == ['b']
    c2.tc_res['b'] = 'a real string now'  # changed after loading: a value again
    c2.save(tmp_path/'c3.json')
    assert json.loads((tmp_path/'c3.json').read_text())['tc_res_repr'] == []

def test_failed_save_keeps_the_previous_file(tmp_path):
    "A save that fails while writing (here: the file-size limit of a full disk) leaves the last good file whole, and no temporary file"
    import resource, subprocess, sys, textwrap
    p = tmp_path/'c.json'
    Chat('openai/gpt-4o-mini', hist=['hi', 'hello']).save(p)
    before = p.read_text()
    code = textwrap.dedent(f"""
        import os, resource, signal; os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'
        from lisette import Chat
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        chat = Chat('openai/gpt-4o-mini', hist=['x'*100_000, 'y'])
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try: chat.save({str(p)!r})
        except OSError as e: print('failed', e.errno)
    """)
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert 'failed 27' in out.stdout, out
    assert p.read_text() == before and sorted(o.name for o in tmp_path.iterdir()) == ['c.json']

def test_save_refuses_non_finite_numbers(tmp_path):
    p = tmp_path/'c.json'
    chat = Chat('openai/gpt-4o-mini', hist=['hi', 'hello'], timeout=(math.inf, 30))
    chat.save(p)
    assert json.loads(p.read_text())['settings']['timeout'] == [None, 30]
    assert Chat.load(p).timeout == (None, 30)
    chat.use.cost = math.nan
    with pytest.raises(ValueError, match=r"use\.cost is not a finite number.*was not written"): chat.save(tmp_path/'d.json')
    assert not (tmp_path/'d.json').exists()
    p.write_text(p.read_text().replace('"stream": false', '"stream": NaN'))
    with pytest.raises(SavedChatError, match="NaN is not a JSON value") as e: load_chat(p)
    assert 'provider' not in str(e.value)

def test_save_keeps_mode_and_links(tmp_path):
    "A save replaces the file a link points to (the link stays), keeps the permissions of the file it replaces, and names a missing directory"
    import os, stat
    p, target = tmp_path/'link.json', tmp_path/'real.json'
    chat = Chat('openai/gpt-4o-mini', hist=['hi', 'hello'])
    chat.save(target); os.chmod(target, 0o600); p.symlink_to(target)
    chat.hist.append({'role': 'user', 'content': 'more'}); chat.save(p)
    assert p.is_symlink() and len(Chat.load(target).hist) == 3 and stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert sorted(o.name for o in tmp_path.iterdir()) == ['link.json', 'real.json']
    with pytest.raises(FileNotFoundError, match=r"directory .*nodir does not exist; .*nodir/c.json was not written"): chat.save(tmp_path/'nodir'/'c.json')
    chat.timeout = [math.inf, 30]; chat.save(p)  # (a list, as Chat takes it, as well as a tuple)
    assert json.loads(target.read_text())['settings']['timeout'] == [None, 30]
    chat.use.prompt_tokens = 10**5000  # JSON's other failures are raised as they are
    with pytest.raises(ValueError, match='integer string conversion'): chat.save(p)

def _save_as_user(paths):
    """Save a chat to each of `paths` ({name: path}) as a user whom file modes bind: root may write anything, so tests
    run as root save as uid 65534, in a forked child; {name: 'saved' or [error type, message]}"""
    import os
    chat, (r, w) = Chat('openai/gpt-4o-mini', hist=['hi', 'hello']), os.pipe()
    if (pid := os.fork())==0:
        try:
            if os.geteuid()==0: os.setgroups([]); os.setgid(65534); os.setuid(65534)
            res = {}
            for name,p in paths.items():
                try: chat.save(p); res[name] = 'saved'
                except OSError as e: res[name] = [type(e).__name__, str(e)]
            os.write(w, json.dumps(res).encode())
        finally: os._exit(0)
    os.close(w)
    with open(r) as f: out = f.read()
    os.waitpid(pid, 0)
    assert out, "the child saving as another user failed"
    return json.loads(out)

@pytest.fixture
def shared_dir():
    "A directory anyone may write in (so that uid 65534 can), removed afterwards"
    import os, shutil
    d = Path(tempfile.mkdtemp()); os.chmod(d, 0o777)
    yield d
    for p in [d, *d.rglob('*')]:
        if p.is_dir(): os.chmod(p, 0o777)
    shutil.rmtree(d)

def test_save_refuses_a_read_only_file(shared_dir):
    """A chat file its owner made read-only (chmod 444) in a directory they may write in: the save replaced it by a rename
    (which needs only the directory writable), passing over the protection. Now a PermissionError names it; it is as it was"""
    import os
    p = Chat('openai/gpt-4o-mini', hist=['kept']).save(shared_dir/'c.json')
    os.chmod(p, 0o444); before = p.read_text()
    res = _save_as_user({'ro': p})['ro']
    assert res[0] == 'PermissionError' and f"{p} is read-only; it was left as it is" in res[1] and 'chmod u+w' in res[1], res
    assert p.read_text() == before and oct(os.stat(p).st_mode & 0o777) == '0o444' and [o.name for o in shared_dir.iterdir()] == ['c.json']

def test_failed_save_names_the_file_not_the_temporary_one(shared_dir):
    "A save into a read-only directory, or to a path that is a directory, said it could not write `.c.json.XXXX.tmp`: it names the file asked for"
    import os
    ro = shared_dir/'ro'; ro.mkdir(); Chat('openai/gpt-4o-mini', hist=['kept']).save(ro/'c.json'); os.chmod(ro/'c.json', 0o666); os.chmod(ro, 0o555)
    res = _save_as_user({'old': ro/'c.json', 'new': ro/'d.json'})
    for k,p in [('old', ro/'c.json'), ('new', ro/'d.json')]:
        assert res[k][0] == 'PermissionError' and f"save_chat: {p} was not written: could not create a file in {ro} (Permission denied)" in res[k][1] and '.tmp' not in res[k][1], res
    assert res['old'][1].endswith("; the file is as it was") and sorted(o.name for o in ro.iterdir()) == ['c.json']
    (shared_dir/'adir').mkdir()
    with pytest.raises(IsADirectoryError) as e: Chat('openai/gpt-4o-mini', hist=['x']).save(shared_dir/'adir')
    assert f"save_chat: {shared_dir/'adir'} is a directory" in str(e.value) and '.tmp' not in str(e.value)
    assert sorted(o.name for o in shared_dir.iterdir()) == ['adir', 'ro'] and not any((shared_dir/'adir').iterdir())

@pytest.mark.parametrize('conv', ['openai', 'anthropic'])
def test_export_leaves_out_the_providers_own_search(fake_provider, conv):
    "A Claude reply that searched the web and called a client tool: the export carries the client's call only (litellm 1.106 kept the srvtoolu call among them, which OpenAI and Anthropic reject unanswered), and says so"
    from lisette.interop import to_openai, to_anthropic
    def lookup(key:str) -> str:
        "Look up a key"
        return key.upper()
    fp = fake_provider
    fp.queue(Reply('Looking.', tool_calls=[('lookup', {'key': 'a'})], web_search=[dict(query='q', url='https://x.org', title='X', cited_text='x')]), 'Done.')
    chat = Chat('anthropic/claude-sonnet-4-5', tools=[lookup], api_base=fp.anthropic_base, api_key='k')
    chat('Search, then look up a.')
    rep = []
    if conv == 'openai':
        msgs = to_openai(chat.hist, report=rep)
        assert [tc['function']['name'] for tc in msgs[1]['tool_calls']] == ['lookup']
        fp.queue('ok')
        r = httpx.post(fp.openai_base+'/chat/completions', json=dict(model='gpt-4o-mini', messages=msgs+[{'role': 'user', 'content': 'next'}]))
    else:
        _, msgs = to_anthropic(chat.hist, report=rep)
        assert [b['type'] for b in msgs[1]['content']] == ['text', 'tool_use']
        fp.queue('ok')
        r = httpx.post(fp.url+'/v1/messages', json=dict(model='claude-sonnet-4-5', max_tokens=100, messages=msgs+[{'role': 'user', 'content': 'next'}]))
    assert r.status_code == 200, r.text
    assert sum("the provider's own tool call(s) left out (web_search" in n for n in rep) == 1

def test_saved_count_spares_the_first_turn_a_recount(fake_provider, tmp_path, monkeypatch):
    "A long chat near the window, saved after a turn: the first turn after loading it does not count the history again"
    import lisette.chat
    fp, m = fake_provider, 'anthropic/claude-sonnet-4-5'
    hist = mk_msgs([('word ' * 9000 + str(i)) for i in range(50)])  # ~450k letters: the estimate is past half the budget
    fp.queue(Reply('ok', usage=dict(input=100000, output=1)))
    chat = Chat(m, hist=hist, max_tokens=64000, api_base=fp.anthropic_base, api_key='k')
    chat('next')  # counted exactly once, before this request
    assert chat._ctx == (52, 100001)
    chat.save(tmp_path/'c.json')
    counted = []
    real = lisette.chat.count_tokens
    monkeypatch.setattr(lisette.chat, 'count_tokens', lambda *a, **k: counted.append(1) or real(*a, **k))
    c2 = Chat.load(tmp_path/'c.json', max_tokens=64000, api_base=fp.anthropic_base, api_key='k')
    fp.queue(Reply('fine', usage=dict(input=100010, output=1)))
    assert contents(c2('and now?')).content == 'fine'
    assert counted == []  # the saved count covered the history: only the new prompt was bounded
    d = json.loads((tmp_path/'c.json').read_text())
    d['hist'][3]['content'] += ' more'; (tmp_path/'c.json').write_text(json.dumps(d))
    c3 = Chat.load(tmp_path/'c.json', max_tokens=64000, api_base=fp.anthropic_base, api_key='k')
    fp.queue('fine')
    c3('and now?')
    assert counted == [1]  # an edited history: its count no longer holds, so it was counted anew

def test_saved_count_round_trips_on_every_protocol(proto, tmp_path):
    "The provider's count of the last request is saved with a tool round's history and restored by a load with the same tools"
    fp, m, kw = proto
    def add(a:int, b:int=0) -> int:
        "Add two numbers"
        return a + b
    fp.queue(Reply('Adding.', tool_calls=[('add', {'a': 1, 'b': 2})]), 'It is 3.')
    chat = Chat(m, sp='Be brief.', tools=[add], **kw)
    chat('1+2?')
    n, t = chat._ctx[:2]
    assert n == len(chat.hist) and t > 0
    chat.save(tmp_path/'c.json')
    assert json.loads((tmp_path/'c.json').read_text())['context']['tokens'] == t
    assert Chat.load(tmp_path/'c.json', tools=[add], **kw)._ctx == (n, t)
    assert Chat.load(tmp_path/'c.json', **kw)._ctx == (None, 0)  # without its tools, the request it counted is not the one sent next
    assert Chat.load(tmp_path/'c.json', tools=[add], page_results=None, **kw)._ctx == (None, 0)  # nor with results paged otherwise (helper-18)

@pytest.mark.parametrize('bad, problem', [([1], 'expected an object'), ({'messages': 1, 'tokens': 'x', 'hist_bytes': 1, 'fixed_bytes': 1}, 'context.tokens'),
                                          ({'messages': 1, 'tokens': 1, 'hist_bytes': True, 'fixed_bytes': 1}, 'context.hist_bytes'),
                                          ({'messages': 1, 'tokens': 10**30, 'hist_bytes': 1, 'fixed_bytes': 1}, 'context.tokens'),
                                          ({'messages': 1, 'tokens': 1, 'hist_bytes': 1, 'fixed_bytes': 1, 'page_results': '9'}, 'context.page_results')])
def test_bad_saved_count_named(tmp_path, bad, problem):
    Chat('openai/gpt-4o-mini', hist=['hi', 'hello']).save(tmp_path/'c.json')
    d = json.loads((tmp_path/'c.json').read_text()); d['context'] = bad
    (tmp_path/'c.json').write_text(json.dumps(d))
    with pytest.raises(SavedChatError, match=problem): Chat.load(tmp_path/'c.json')

@pytest.mark.parametrize('k,v', [('retries', 20), ('cache_idxs', [0, -1, -2, -3, -4]), ('markup', 1.5), ('markup', 150), ('max_tokens', 2**31),
                                 ('page_results', 0), ('stall', 10**10), ('search', 'low')])
def test_saved_settings_load_back(tmp_path, k, v):
    "Every setting a `Chat` takes and `save_chat` writes loads back: the user's own file is never refused"
    p = save_chat(Chat('anthropic/claude-sonnet-4-5', hist=['hi', 'hello'], **{k: v}), tmp_path/'c.json')
    assert getattr(load_chat(p), k) == v

def test_search_that_is_no_size_refused():
    "search='x' (or 'max') is no search context size: refused when the chat is made or the call asks, not sent as litellm's cryptic KeyError"
    for s in ('x', 'max', 'huge'):
        with pytest.raises(ValueError, match=r"give True, False, or 'l', 'm', 'h'"): Chat('openai/gpt-4o-mini', search=s)
    c = Chat('openai/gpt-4o-mini', completefunc=lambda **kw: pytest.fail('sent'))
    with pytest.raises(ValueError, match='search='): c('hi', search='x')
    assert c.hist == []

def test_load_chat_file_forms(tmp_path):
    "A byte-order mark (an editor's re-save) loads; `model=` continues on another model; a directory, a device or a list for `search` get a clear SavedChatError"
    p = save_chat(Chat('anthropic/claude-sonnet-4-5', hist=['hi', 'hello']), tmp_path/'c.json')
    bom = tmp_path/'bom.json'; bom.write_bytes(b'\xef\xbb\xbf' + p.read_bytes())
    assert load_chat(bom).hist[-1]['content'] == 'hello'
    assert load_chat(p, model='openai/gpt-4o-mini').model == 'openai/gpt-4o-mini'
    for bad in (tmp_path, Path('/dev/zero')):
        with pytest.raises(SavedChatError, match='not a regular file'): load_chat(bad)
    d = json.loads(p.read_text()); d['settings']['search'] = ['l']; p.write_text(json.dumps(d))
    with pytest.raises(SavedChatError) as e: load_chat(p)
    assert e.value.field == 'settings.search'

def test_images_litellm_routes_still_taken():
    "Image parts litellm reads are taken as before: image/jpg, a PDF or audio in `image_url` (sent as a document), base64 broken into lines or URL-safe, Gemini's files/… path"
    import base64
    from lisette.messages import check_msg
    png = base64.encodebytes(b'\x89PNG\r\n\x1a\n' + b'0'*200).decode()
    for u in ('data:image/jpg;base64,AAAA', 'data:application/pdf;base64,JVBERi0=', 'data:audio/wav;base64,UklGRg==', f'data:image/png;base64,{png}',
              'data:image/png;base64,ab-_', 'DATA:IMAGE/PNG;BASE64,AAAA', 'files/abc123', 'gs://bucket/x.png', 'https://example.com/x.png'):
        check_msg({'role': 'user', 'content': [{'type': 'image_url', 'image_url': {'url': u}}]})
    p = Chat('gemini/gemini-2.5-flash', search=1)
    assert load_chat(save_chat(p, Path(tempfile.mkdtemp())/'c.json')).search == 1  # (a number, as Chat takes it)

def test_loaded_checkpointed_chat_sends_what_a_full_lookup_sends(fake_provider, tmp_path):
    "A chat saved with its cache checkpoints (not the quick form) notes, as it loads, where its non-text messages are and how its tool calls read: its first request is the one a chat that looks them all up again sends"
    from lisette.chat import _not_plain
    fp = fake_provider
    def add(a:int, b:int=0) -> int:
        "Add two numbers"
        return a + b
    h = []
    for k in range(4):
        q = mk_tc_req('Adding.', [mk_tc('add', a=k, b=2), mk_tc('add', a=3, b=k)])
        h += [f'{k}+2 and 3+{k}?', q, *[mk_tc_result(tc, str(k+2+i)) for i,tc in enumerate(q.tool_calls)], f'It is {k+2} and {k+3}.']
    chat = Chat('anthropic/claude-sonnet-4-5', hist=h, tools=[add], cache=True, api_base=fp.anthropic_base, api_key='k')
    fp.queue('Done.'); chat('Thanks')  # (its checkpoints now on the last messages)
    p = chat.save(tmp_path/'c.json')
    sent = []
    for full in (False, True):
        c = load_chat(p, tools=[add], api_base=fp.anthropic_base, api_key='k')
        assert c._ckpts and c._scan[1] == _not_plain(c.hist, range(len(c.hist)))  # (a checkpointed file: the field-by-field path)
        if full: c._scan, c._read_calls = ([], []), None
        else: assert len(c._read_calls) == 4  # (every tool-call message: the checkpoints are on the last turn)
        fp.queue('ok'); c('next'); sent.append(fp.last)
    assert sent[0] == sent[1]

@pytest.mark.parametrize('model', ['anthropic/claude-sonnet-4-5', 'gpt-4.1'])
def test_loaded_chat_goes_on_as_the_chat_saved(tmp_path, model):
    "A chat saved after turns with tool rounds, text replies (`Message`s) and a cache checkpoint on its last prompt is read in one pass on load; the loaded chat then sends what the chat it was saved from sends, turn after turn"
    from litellm import ModelResponse
    def add(a:int, b:int) -> int:
        "Add"
        return a+b
    def replies(sent):
        def complete(**kw):
            sent.append(json.dumps([m if isinstance(m, dict) else m.model_dump() for m in kw['messages']], sort_keys=True, default=str))
            last = kw['messages'][-1]
            tc = [dict(id=f"toolu_{len(sent)}", type='function', function=dict(name='add', arguments='{"a": 1, "b": 2}'))] if (last.get('role') if isinstance(last, dict) else last.role)=='user' and len(sent)%2 else None
            return ModelResponse(model=model, choices=[dict(message=dict(role='assistant', content='Adding.' if tc else 'Done.', tool_calls=tc), finish_reason='tool_calls' if tc else 'stop')],
                                 usage=dict(prompt_tokens=1000+len(sent), completion_tokens=5, total_tokens=1005+len(sent)))
        return complete
    a, b = [], []
    chat = Chat(model, sp='Be brief.', tools=[add], cache=True, completefunc=replies(a))
    for q in ['one', 'two', 'three']: chat(q)
    p = chat.save(tmp_path/'c.json')
    loaded = load_chat(p, tools=[add], completefunc=replies(b))
    b += a  # (the same count of requests so far: the same replies next)
    for q in ['four', 'five']: chat(q); loaded(q)
    assert b[len(a)-4:] == a[-4:] and len(a)==len(b)
    assert json.loads(p.read_text())['hist'] == json.loads(save_chat(load_chat(p), tmp_path/'again.json').read_text())['hist']

@pytest.mark.parametrize('bad', ['x', {'type': 'persistent'}])
@pytest.mark.parametrize('where', ['part', 'call', 'msg'])
def test_load_repair_takes_away_checkpoints_of_no_form(tmp_path, bad, where):
    """A saved history holding a cache checkpoint of no form a provider takes (on a part, a call or a message) is refused
    naming it, and with repair=True (given, or saved in the file's settings) loaded without it, the repair said: it was
    refused either way, though repair_hist takes such checkpoints away"""
    p, _ = _broken_save(tmp_path, set())
    d = json.loads(p.read_text())
    if where=='part': d['hist'][0], field = {'role': 'user', 'content': [{'type': 'text', 'text': 'Add 1+2 and 3+4', 'cache_control': bad}]}, 'hist[0].content[0].cache_control'
    elif where=='call': d['hist'][1]['fields']['tool_calls'][1]['fields']['cache_control'], field = bad, 'hist[1].tool_calls[1].cache_control'
    else: d['hist'][4]['cache_control'], field = bad, 'hist[4].cache_control'
    p.write_text(json.dumps(d))
    with pytest.raises(SavedChatError, match=r"a cache checkpoint is \{'type': 'ephemeral'\}.*or remove it") as e: load_chat(p)
    assert e.value.field == field
    (r := tmp_path/'r.json').write_text(json.dumps({**d, 'settings': {**d['settings'], 'repair': True}}))
    for c in (load_chat(p, repair=True), load_chat(r)):
        assert [a.kind for a in c.adjustments] == ['history']
        assert 'removed a cache checkpoint of no form a provider takes' in c.adjustments[0].detail and f"message {field[5]}" in c.adjustments[0].detail
        assert '"cache_control"' not in json.dumps(chat_state(c)['hist']) and len(c.hist) == 5

@pytest.mark.parametrize('emptied', ['', None])
def test_load_refuses_responses_text_its_reasoning_needs_gone(fake_provider, tmp_path, emptied):
    """A Responses reply that reasoned, said something and called a tool, saved with its text emptied: litellm sends its
    reasoning item followed by the call, not by the message that followed it, which OpenAI refuses on every later turn
    ('... without its required following item'). Loading refuses it naming the message; repair=True puts '.' back, said"""
    fp = fake_provider
    def add(a:int, b:int=0) -> int:
        "Add two numbers"
        return a + b
    kw = dict(tools=[add], api_base=fp.responses_base, api_key='k')
    fp.queue(Reply('Adding.', thinking='t', tool_calls=[('add', {'a': 1, 'b': 2})]), Reply('It is 3.', thinking='u'))
    chat = Chat('openai/responses/gpt-5.4', **kw)
    chat('1+2?', think='l')
    d = json.loads(chat.save(tmp_path/'c.json').read_text())
    f = d['hist'][1]['fields']
    rec = {'version': 1, 'items': [{'type': 'reasoning', 'index': 0}, {'type': 'message', 'parts': [7]}, {'type': 'function_call', 'index': 0}], 'checksum': 'x'}
    f['provider_specific_fields'] = {'openai_responses_replay': rec} | (f.get('provider_specific_fields') or {})  # (as litellm 1.110 writes it; 1.106 keeps none)
    assert f['provider_specific_fields']['openai_responses_replay']['items'] == rec['items']
    f['content'] = emptied
    (p := tmp_path/'e.json').write_text(json.dumps(d))
    with pytest.raises(SavedChatError, match=r"hist\[1\]\.content: message 1: .*reasoning item 'rs_fake1'.*required following item.*repair=True") as e: load_chat(p, **kw)
    assert e.value.field == 'hist[1].content'
    c = load_chat(p, repair=True, **kw)
    assert c.hist[1].content == '.' and [a.kind for a in c.adjustments] == ['history'] and "message 1: replaced emptied text with '.'" in c.adjustments[0].detail
    fp.queue('You asked 1+2.')
    assert contents(c('What did I ask?')).content == 'You asked 1+2.'
    assert [it.get('type') for it in fp.last['input']][1:3] == ['reasoning', 'message']
    fp.queue(Reply('', thinking='t', tool_calls=[('add', {'a': 1, 'b': 2})]), Reply('It is 3.', thinking='u'))  # a reply with no text to begin with loads as it is
    chat = Chat('openai/responses/gpt-5.4', **kw)
    chat('1+2?', think='l')
    assert chat.hist[1].content in ('', None) and load_chat(chat.save(tmp_path/'n.json'), **kw).hist[1].content == chat.hist[1].content

def test_load_refuses_an_empty_list_tool_result(tmp_path):
    "A saved tool result whose content is an empty list (OpenAI refuses it on every later turn) is refused naming it; repair=True loads it with '.', said"
    p, _ = _broken_save(tmp_path, set())
    d = json.loads(p.read_text())
    d['hist'][2]['content'] = []
    p.write_text(json.dumps(d))
    with pytest.raises(SavedChatError, match=r"hist\[2\]: message 2: has an empty content list.*repair=True") as e: load_chat(p)
    assert e.value.field == 'hist[2]'
    c = load_chat(p, repair=True)
    assert c.hist[2]['content'] == '.' and "message 2: replaced empty text with '.'" in c.adjustments[0].detail

def test_load_by_a_class_that_makes_no_repair_refuses_a_bad_checkpoint_as_a_saved_chat_error(tmp_path):
    "The file says repair, so the checkpoint's form is left to the repair; a `cls` whose chats never repair gets the `SavedChatError` naming the field, not a bare MessageFormatError"
    class Strict(Chat):
        def __init__(self, *a, **kw): kw['repair'] = False; super().__init__(*a, **kw)
    p, _ = _broken_save(tmp_path, set())
    d = json.loads(p.read_text())
    d['hist'][4]['cache_control'], d['settings']['repair'] = 'x', True
    p.write_text(json.dumps(d))
    with pytest.raises(SavedChatError, match=r"a cache checkpoint is \{'type': 'ephemeral'\}.*or load it with repair=True") as e: Strict.load(p)
    assert e.value.field == 'hist[4].cache_control'
