"Property tests for lisette.history: random valid conversations, single mutations, repair, start=k, resuming tool calls"
import copy, pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from lisette.messages import mk_msgs, mk_msg, MessageFormatError, remove_cache_ckpts, _add_cache_control
from lisette.tools import mk_tc, mk_tc_req, mk_tc_result
from lisette.history import *
from lisette.history import _role, _get, _tc_id, _srv, _ckpts, _fields

settings.register_profile('hist', max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile('hist')

_n = iter(range(10**9))
def _id(srv=False): return f"{'srvtoolu' if srv else 'toolu'}_{next(_n):08d}"

@st.composite
def conversations(draw):
    "A valid history: text turns and parallel tool rounds (some server-side calls), tool calls as dicts or Messages"
    h = []
    for t in range(draw(st.integers(1, 5))):
        h.append({'role': 'user', 'content': draw(st.sampled_from(['hi', 'What is 2+2?', 'more please']))})
        for r in range(draw(st.integers(0, 2))):
            srv = draw(st.booleans())
            tcs = [mk_tc('add', tcid=_id(), a=k, b=1) for k in range(draw(st.integers(1, 3)))]
            if srv: tcs.append(mk_tc('web_search', tcid=_id(True), query='x'))
            content = draw(st.sampled_from(['', None, 'Let me use tools']))
            h.append(mk_tc_req(content, tcs) if draw(st.booleans()) else {'role': 'assistant', 'content': content, 'tool_calls': tcs})
            res = [mk_tc_result(tc, str(k)) for k,tc in enumerate(tcs) if not _srv(_tc_id(tc))]
            h += draw(st.permutations(res))
        h.append({'role': 'assistant', 'content': draw(st.sampled_from(['4', 'Done.', 'ok']))})
    nontool = [i for i,m in enumerate(h) if _role(m)!='tool']
    for i in draw(st.lists(st.sampled_from(nontool), max_size=4, unique=True)): h[i] = _add_cache_control(h[i])
    return h

def _err(h, **kw):
    try: check_hist(h, **kw)
    except (HistoryError, MessageFormatError) as e: return e.index, getattr(e, 'kind', 'shape')

@given(conversations())
def test_valid_pass(h):
    assert check_hist(h) is None
    for k in range(len(h)+1): assert check_hist(h, start=k) is None
    assert check_hist(mk_msgs(h)) is None   # mk_msgs keeps it valid (it moves checkpoints)
    fixed, report = repair_hist(h)
    assert report == [] and len(fixed) == len(h)

def _tool_idxs(h): return [i for i,m in enumerate(h) if _role(m)=='tool']
def _text_idxs(h): return [i for i,m in enumerate(h) if _role(m) in ('user', 'assistant') and not _get(m, 'tool_calls')]

def mutate(h, kind, data):
    "(mutated copy, index the error must name, expected kind)"
    h = copy.deepcopy(h)
    if kind in ('drop', 'dup'):
        i = data.draw(st.sampled_from(_tool_idxs(h)))
        tid = h[i]['tool_call_id']
        if kind=='dup': return h[:i+1] + [dict(h[i])] + h[i+1:], i+1, 'duplicate'
        call = max(j for j in range(i) if any(_tc_id(tc)==tid for tc in (_get(h[j], 'tool_calls') or [])))
        return h[:i] + h[i+1:], call, 'dangling'
    if kind=='orphan':
        i = data.draw(st.integers(1, len(h)))
        return h[:i] + [{'role': 'tool', 'tool_call_id': 'toolu_orphan', 'name': 'add', 'content': '1'}] + h[i:], i, 'orphan'
    if kind=='blank':
        i = data.draw(st.sampled_from(_text_idxs(h)))
        h[i] = dict(h[i]) if isinstance(h[i], dict) else h[i]
        c = h[i]['content']
        h[i]['content'] = [{'type': 'text', 'text': ' '}] if isinstance(c, list) else ''
        return h, i, 'empty'
    if kind=='cache':
        for m in h: remove_cache_ckpts(m)
        nt = [i for i,m in enumerate(h) if _role(m)!='tool']
        for i in nt[:4]: h[i] = _add_cache_control(h[i])
        i = data.draw(st.sampled_from(nt[4:]))
        h[i] = _add_cache_control(h[i])
        return h, i, 'cache'
    if kind=='role':
        i = data.draw(st.integers(0, len(h)-1))
        h[i] = dict(h[i]) if isinstance(h[i], dict) else h[i]
        h[i]['role'] = 'usr'
        return h, i, 'shape'

kinds = ['drop', 'dup', 'orphan', 'blank', 'cache', 'role']

@pytest.mark.parametrize('kind', kinds)
@given(h=conversations(), data=st.data())
def test_mutation_fails_at_index(kind, h, data):
    if kind in ('drop', 'dup') and not _tool_idxs(h): return
    if kind=='cache' and sum(_role(m)!='tool' for m in h)<5: return
    bad, idx, k = mutate(h, kind, data)
    assert _err(bad) == (idx, k)
    # start=k agrees with the full check while the prefix is untouched (checkpoints before k are not counted)
    for s in range(0, min(idx, len(bad))+1):
        if kind=='cache' and s>0: break
        assert _err(bad, start=s) == (idx, k), s
    if kind=='role':
        with pytest.raises(HistoryError, match='cannot repair'): repair_hist(bad)
        return
    before = copy.deepcopy(bad)
    fixed, report = repair_hist(bad)
    assert check_hist(fixed) is None and report
    assert repr(bad) == repr(before)   # input untouched

@given(conversations(), st.data())
def test_unresolved_and_add(h, data):
    rounds = [i for i,m in enumerate(h) if [tc for tc in (_get(m, 'tool_calls') or []) if not _srv(_tc_id(tc))]]
    if not rounds: return
    i = data.draw(st.sampled_from(rounds))
    n = data.draw(st.integers(0, sum(1 for j in range(i+1, len(h)) if _role(h[j])=='tool' and all(_role(o)=='tool' for o in h[i+1:j+1]))))
    cut = h[:i+1+n]
    calls = [tc for tc in _get(h[i], 'tool_calls') if not _srv(_tc_id(tc))]
    un = unresolved_tool_calls(cut)
    answered = {m['tool_call_id'] for m in cut[i+1:]}
    assert [_tc_id(tc) for tc in un] == [_tc_id(tc) for tc in calls if _tc_id(tc) not in answered]
    assert check_hist(cut, pending_ok=True) is None
    if not un:
        with pytest.raises(ValueError, match='no unresolved'): add_tool_results(cut, [])
        return
    _err_pending = _err(cut)
    assert _err_pending == (i, 'dangling')
    with pytest.raises(ValueError, match='unresolved tool calls'): add_tool_results(cut, ['x']*(len(un)+1))
    with pytest.raises(ValueError, match='not unresolved'): add_tool_results(cut, {'toolu_nope': 1})
    res = add_tool_results(cut, {_tc_id(tc): f'r{k}' for k,tc in enumerate(un)} if data.draw(st.booleans()) else [f'r{k}' for k in range(len(un))])
    assert res is cut and unresolved_tool_calls(cut) == [] and check_hist(cut) is None
    assert cut[-1]['content'] == f'r{len(un)-1}'

def test_unresolved_needs_trailing_results():
    tcq = mk_tc_req('', [mk_tc('add', a=1, b=2)])
    assert unresolved_tool_calls(mk_msgs(['hi', tcq])) == tcq.tool_calls
    assert unresolved_tool_calls(mk_msgs(['hi', tcq, {'role': 'user', 'content': 'wait'}])) == []
    assert unresolved_tool_calls([]) == []

def test_fast_shape_agrees_with_check_msg():
    "`_shape_ok` never accepts what `check_msg` rejects"
    from lisette.history import _shape_ok
    from lisette.messages import check_msg
    cases = [{'role': 'user', 'content': 'x'}, {'role': 'usr', 'content': 'x'}, {'role': 'tool', 'content': 'x'},
             {'role': 'tool', 'tool_call_id': '', 'content': 'x'}, {'role': 'user', 'content': None}, {'role': 'user', 'content': 3},
             {'role': 'user', 'content': ['x']}, {'role': 'user', 'content': [{'type': 'text', 'text': 3}]},
             {'role': 'user', 'content': 'x', 'tool_calls': [mk_tc('f')]}, {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 1}]},
             mk_tc_req(None, [mk_tc('f')]), 'hello', {'role': 'assistant', 'content': None},
             {'role': 'assistant', 'content': 'x', 'function_call': ''}, {'role': 'assistant', 'content': 'x', 'function_call': {}},
             {'role': 'assistant', 'content': None, 'tool_calls': [{**mk_tc('f'), 'provider_specific_fields': {'thought_signature': [1]}}]},
             {'role': 'assistant', 'content': None, 'tool_calls': [{**mk_tc('f'), 'provider_specific_fields': 'sig'}]}]
    for m in cases:
        ok = _shape_ok(m, *_fields(m)) if isinstance(m, dict) or not isinstance(m, str) else False
        try: check_msg(m, 0); valid = True
        except MessageFormatError: valid = False
        assert not ok or valid, m

def test_tool_call_messages_fast_path_keeps_every_rule():
    "litellm `Message`s asking for tools take a shortcut in `check_hist`; each rule it could skip still holds"
    q = lambda *ids, c='Let me add': mk_tc_req(c, [mk_tc('add', tcid=i, a=1) for i in ids])
    res = lambda *ids: [mk_tc_result(mk_tc('add', tcid=i), '1') for i in ids]
    ok = ['hi', q('toolu_a', 'toolu_b'), *res('toolu_a', 'toolu_b'), 'done']
    assert check_hist(mk_msgs(ok)) is None
    assert _err(mk_msgs(['hi', q('toolu_a', 'toolu_a'), *res('toolu_a'), 'x'])) == (1, 'duplicate_call')   # same id twice in one message
    assert _err(mk_msgs([*ok, 'again', q('toolu_b'), *res('toolu_b'), 'x'])) == (6, 'duplicate_call')       # an id used before
    assert _err(mk_msgs(['hi', q('toolu_a'), 'no result', 'x'])) == (1, 'dangling')
    assert _err(mk_msgs(['hi', q('toolu_a'), q('toolu_b'), *res('toolu_a', 'toolu_b')])) == (1, 'dangling')  # asked again before answering
    assert _err([q('toolu_a'), *res('toolu_a')], user_first=True) == (0, 'first')
    cc = q('toolu_a'); cc.tool_calls[0].cache_control = {'type': 'ephemeral'}
    assert _err([mk_msg('hi'), cc, *res('toolu_a'), mk_msg('x', role='assistant')], max_ckpts=0) == (1, 'cache')  # a checkpoint on a call counts
    tb = q('toolu_a'); tb.thinking_blocks = [{'type': 'thinking', 'thinking': 'hm'}, {'type': 'nope'}]
    assert _err([mk_msg('hi'), tb, *res('toolu_a'), mk_msg('x', role='assistant')]) == (1, 'thinking')
    assert check_hist([mk_msg('hi'), q('toolu_a', c=None), *res('toolu_a'), mk_msg('x', role='assistant')]) is None                           # no text: fine with calls

def _with(m, **kw):
    "A copy of litellm `Message` `m` with fields `kw` set as a loaded file sets them (past pydantic's checks)"
    m = m.model_copy(deep=True)
    for k,v in kw.items(): setattr(m, k, v)
    return m

@pytest.mark.parametrize('fc', ['', {}, {'name': 'add'}])
def test_legacy_function_call_refused(fc):
    """A `function_call` that is no OpenAI legacy call (a reply to `functions=` has a name and arguments): litellm sends it to Anthropic as a tool call without a result,
    so every later request was a 400. Refused, naming the message and the field, on dicts and `Message`s (whose fast path skipped it)"""
    from litellm.types.utils import FunctionCall
    q = mk_tc_req('Let me add', [mk_tc('add', tcid='toolu_a', a=1)])
    res = mk_tc_result(mk_tc('add', tcid='toolu_a'), '1')
    assert check_hist([mk_msg('hi'), q, res, mk_msg('x', role='assistant')]) is None  # a `Message` carries `function_call=None`: fine
    for m in [{'role': 'assistant', 'content': 'yo', 'function_call': fc}, {'role': 'assistant', 'content': 'yo', 'tool_calls': q.tool_calls, 'function_call': fc},
              _with(q, function_call=FunctionCall(name='', arguments='{}') if isinstance(fc, dict) and fc else fc)]:
        h = [mk_msg('hi'), m] + ([res] if _get(m, 'tool_calls') else []) + [mk_msg('x', role='user')]
        with pytest.raises(MessageFormatError, match=r"message 1: 'function_call' is no OpenAI legacy function call.*tool_calls") as e: check_hist(h)
        assert (e.value.index, e.value.field) == (1, 'function_call')
        with pytest.raises(HistoryError, match="cannot repair"): repair_hist(h)

@pytest.mark.parametrize('tb', [0, False, '', {}])
def test_falsy_thinking_blocks_that_are_no_list_refused(tb):
    "`thinking_blocks: 0` passed as if absent (the next turn raised \"'int' object is not iterable\" inside litellm): refused as 'x' and True are"
    q = mk_tc_req('Let me add', [mk_tc('add', tcid='toolu_a', a=1)])
    res = mk_tc_result(mk_tc('add', tcid='toolu_a'), '1')
    for m in [{'role': 'assistant', 'content': 'yo', 'thinking_blocks': tb}, _with(q, thinking_blocks=tb)]:
        h = [mk_msg('hi'), m] + ([res] if _get(m, 'tool_calls') else []) + [mk_msg('x', role='user')]
        with pytest.raises(HistoryError, match=f"message 1: thinking_blocks is a {type(tb).__name__}, not a list") as e: check_hist(h)
        assert e.value.kind == 'thinking'
    assert check_hist([mk_msg('hi'), {'role': 'assistant', 'content': 'yo', 'thinking_blocks': []}]) is None  # (none)

@pytest.mark.parametrize('sig', [[1], {'a': 1}, 5])
def test_tool_call_thought_signature_must_be_a_string(sig):
    """A Gemini tool call's `provider_specific_fields.thought_signature` that is no str: litellm raised "unhashable type"
    (a list, an object) or Gemini a 400 on the next turn. Refused, naming the call and the field; a str passes"""
    from litellm.types.utils import ChatCompletionMessageToolCall, Function
    def tc(s): return ChatCompletionMessageToolCall(function=Function(name='add', arguments='{"a": 1}'), id='call_a', type='function', provider_specific_fields={'thought_signature': s})
    res = mk_tc_result(mk_tc('add', tcid='call_a'), '1')
    ok = mk_tc_req('Let me add', [tc('c2lnbmF0dXJl')])
    assert check_hist([mk_msg('hi'), ok, res]) is None
    for m in [mk_tc_req('Let me add', [tc(sig)]), {'role': 'assistant', 'content': None, 'tool_calls': [{**mk_tc('add', tcid='call_a'), 'provider_specific_fields': {'thought_signature': sig}}]}]:
        with pytest.raises(MessageFormatError, match=r"message 1: 'tool_calls\[0\].provider_specific_fields.thought_signature' is a") as e: check_hist([mk_msg('hi'), m, res])
        assert e.value.field == 'tool_calls[0].provider_specific_fields.thought_signature'
    for psf in (['s'], []):  # (no object: an empty one too, which litellm's fast path would pass)
        with pytest.raises(MessageFormatError, match=r"'tool_calls\[0\].provider_specific_fields' is a list"): check_hist([mk_msg('hi'), mk_tc_req('x', [_with(tc('s'), provider_specific_fields=psf)]), res])

def test_message_level_checkpoints_on_tool_call_messages_count():
    """A checkpoint set on a litellm `Message` asking for tools (`m.cache_control = ...`, kept in its extras) counts: the
    fast path for such messages skipped it, so five passed `check_hist` and Anthropic refused the request (at most 4)"""
    h = []
    for i in range(5):
        q = mk_tc_req('Let me add', [mk_tc('add', tcid=f'toolu_{i}', a=1)]); q.cache_control = {'type': 'ephemeral'}
        h += [mk_msg('hi'), q, mk_tc_result(mk_tc('add', tcid=f'toolu_{i}'), '1'), mk_msg('x', role='assistant')]
    assert check_hist(h[:16]) is None  # four: fine
    with pytest.raises(HistoryError, match="cache checkpoint number 5") as e: check_hist(h)
    assert e.value.index == 17
    fixed, notes = repair_hist(h)
    assert check_hist(fixed) is None and [_get(m, 'cache_control') is not None for m in fixed[1::4]] == [False, True, True, True, True]
    assert _get(h[1], 'cache_control') is not None  # (the history given is left as it was)
    assert _get(remove_cache_ckpts(h[1]), 'cache_control') is None

def test_gemini_tool_rounds_take_the_fast_path():
    """A Gemini tool-call message (a thought signature on a call, the message's list of them, empty `images` and
    `thinking_blocks`) is read in the one pass `Chat(hist=)` makes, its signatures counted in the size bound (it took the
    full check and the full token count: the review's finding); anything else in the call's provider fields still does not"""
    from litellm.types.utils import ChatCompletionMessageToolCall, Function, Message
    from lisette.history import _plain_bytes
    def gem(i, psf):
        tc = ChatCompletionMessageToolCall(function=Function(name='add', arguments='{"a": 1}'), id=f'call_{i}', type='function', provider_specific_fields=psf)
        return Message(role='assistant', content=None, tool_calls=[tc], provider_specific_fields={'thought_signatures': ['c2ln'*25]}, images=[], thinking_blocks=[])
    h = [x for i in range(3) for x in (mk_msg('hi'), gem(i, {'thought_signature': 'c2ln'*25}), mk_tc_result(mk_tc('add', tcid=f'call_{i}'), '1'), mk_msg('x', role='assistant'))]
    assert check_hist(h) is None
    b = _plain_bytes(h)
    assert b is not None and b >= sum(len(m.tool_calls[0].provider_specific_fields['thought_signature'])*2 for m in h[1::4])
    h[1] = gem(0, {'thought_signature': 'c2ln', 'other': 1})
    assert _plain_bytes(h) is None and check_hist(h) is None  # (valid, but more than a signature: the full check and bound)

def test_tool_calls_read_at_construction_stay_as_read():
    "What `Chat(hist=)` keeps of its tool-call messages for the first request (`_read_calls`) is what reading them again gives: checking the history (which answers each call) must not change it"
    from lisette import Chat
    from lisette.history import _plain_calls
    from lisette.tools import mk_tc, mk_tc_req, mk_tc_result
    h = []
    for k in range(3):
        q = mk_tc_req('Adding.', [mk_tc('add', a=k, b=2), mk_tc('add', a=3, b=k)])
        h += [f'{k}+2 and 3+{k}?', q, *[mk_tc_result(tc, '5') for tc in q.tool_calls], 'Done.']
    chat = Chat('openai/gpt-4.1', hist=mk_msgs(h))  # (as a history given as messages: checked in the one quick pass)
    assert len(chat._read_calls) == 3
    for m, pc in chat._read_calls.values(): assert pc == _plain_calls(m) and len(pc[0]) == 2

# ---- a tool call whose arguments nest ~100,000 deep (Python's `json.loads` raises a RecursionError on them)

DEEP = '{"n": ' + '['*100_000 + ']'*100_000 + '}'
def deep_hist(tid='call_deep'):
    "A history holding a tool call with DEEP arguments, answered"
    return [{'role': 'user', 'content': 'go'}, {'role': 'assistant', 'content': None, 'tool_calls': [{'id': tid, 'type': 'function', 'function': {'name': 'f', 'arguments': DEEP}}]},
            {'role': 'tool', 'tool_call_id': tid, 'name': 'f', 'content': 'Tool f was not called: its arguments nest too deeply.'}, {'role': 'assistant', 'content': 'ok'}]

def test_deep_arguments_in_a_given_history(proto):
    "`Chat(hist=)` holding the deep call, then a turn: the arguments are kept as text (sent so where a provider takes text, as `{}` where it takes only an object, said); it raised a RecursionError"
    from lisette import Chat, contents
    fp, model, kw = proto
    fp.queue('fine', 'again')
    chat = Chat(model, hist=deep_hist(), **kw)
    assert _get(_get(chat.hist[1], 'tool_calls')[0], 'function', 'arguments') == DEEP
    assert contents(chat('next')).content == 'fine' and contents(chat('more')).content == 'again'
    check_hist(chat.hist)
    assert norm_hist(deep_hist())[1]['tool_calls'][0]['function']['arguments'] == DEEP
