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

# ---- the quick readers of tool rounds (`_plain_calls`, `_plain_bytes`, `check_hist`) against frozen copies of them as they were
# before they were made faster: on odd messages too, the same answers, the same side effects, the same errors
# (a reference for the fast paths, not a spec: a fix that changes what check_hist accepts changes the copy with it)

from litellm import Message as _Msg
from litellm.types.utils import ChatCompletionMessageToolCall as _TC, Function as _Fn
from lisette.messages import check_msg, max_cache_ckpts, _cc
from lisette.history import (_has_thinking, _signature, _signatures, _holds_more, _text_reply, _ckpt_text, _nbytes, _open_block, _unran_srv,
    _sys_roles, _shape_ok, _tc_name, _dangling, _thinking_problem, _text_problem, _spoken, _compacted_only, _result_keys, _plain_calls, _plain_bytes)
from litellm import Message
from litellm.types.utils import ChatCompletionMessageToolCall, Function

def _old_plain_calls(m):
    "({id: name}, the strings of its text, ids, names and arguments or None) if `m` is a litellm `Message` asking for client tools with nothing else to check (text or no content; no thinking, checkpoints or server calls), else None"
    # `type(x)`, not `x.__class__`: pydantic models answer attribute reads through their `__getattr__` hook, 3x slower
    if type(m) is not Message: return None
    d = m.__dict__
    if d.get('role')!='assistant' or type(tcs := d.get('tool_calls')) is not list or not tcs or _has_thinking(d): return None
    if (x := m.__pydantic_extra__) and (_has_thinking(x) or 'cache_control' in x): return None
    if (c := d.get('content')) is None: t = []
    elif type(c) is str: t = [c]
    else: return None
    if d.get('name') is not None or d.get('function_call') is not None: return None  # what `check_msg` reads: ask it
    res = {}
    for tc in tcs:
        if type(tc) is not ChatCompletionMessageToolCall: return None
        if (tx := tc.__pydantic_extra__) is None or tc.__dict__: tx = {**(tx or {}), **tc.__dict__}  # litellm keeps a call's fields in either (mostly the extras)
        if type(tid := tx.get('id')) is not str or tid in res or 'cache_control' in tx or (f := tx.get('function')) is None \
           or tid.startswith('srvtoolu_') or (ty := tx.get('type'))!='function' and ty is not None: return None
        if (p := tx.get('provider_specific_fields')) is not None:  # nothing, or Gemini's signature of the call (counted with its text)
            if p=={}: pass
            elif (sig := _signature(p)) is None: return None  # (anything else, or malformed: `check_msg` says)
            else: t.append(sig)
        fd = f.__dict__ if type(f) is Function else {'name': _get(f, 'name'), 'arguments': _get(f, 'arguments')}
        if type(nm := fd.get('name')) is not str or not nm or type(a := fd.get('arguments')) is not str: return None
        res[tid] = nm
        t += tid, nm, a
    # anything else it carries (reasoning text, audio...) counts towards a request's size: None, don't guess
    if psf := d.get('provider_specific_fields'):
        if (ss := _signatures(psf)) is not None: t += ss  # Gemini's signatures, counted with the text
        elif type(psf) is not dict or any(v is not None for v in psf.values()) or 'lisette_provider_calls' in psf: t = None  # (lisette's mark, even null: `load_chat` checks it)
    if t is not None and (x or len(d)>5) and _holds_more(d, x): t = None  # (the test `_holds_more` starts with, inline: one call less a message)
    return res, t

def _old_check_hist(
    msgs:list, # The history: dicts or litellm `Message`s
    start:int=0, # Check only `msgs[start:]` (`msgs[:start]` is assumed valid and only tells which tool calls are open)
    pending_ok:bool=False, # May the last assistant tool-call message still wait for some of its results?
    max_ckpts:int=max_cache_ckpts, # Cache checkpoints allowed (Anthropic: 4, counting any on the system prompt)
    user_first:bool=False, # Require the first non-system message to be from the user (some providers do)
):
    "Raise `HistoryError` (or `MessageFormatError`) for the first problem a provider would reject; return None when valid"
    blk, open_, done = _open_block(msgs, start) if start else (None, {}, {})
    calls = dict.fromkeys(open_, blk) | dict.fromkeys(done, blk)
    soft = _unran_srv(msgs[blk], done) if blk is not None else {}  # `srvtoolu_` calls the provider did not run: may be answered
    nonsys, nck = start>0 and _role(msgs[start-1]) not in _sys_roles, 0
    for i in range(start, len(msgs)):
        m = msgs[i]
        # the common case, kept to a few lookups: a plain text user/assistant dict outside a tool round
        if m.__class__ is dict and len(m)==2 and not open_ and (c := m.get('content')).__class__ is str and c and not c.isspace() \
           and ((role := m.get('role'))=='user' or role=='assistant') and (nonsys or role=='user' or not user_first):
            nonsys, blk = True, None
            continue
        # the next most common: a text result answering an open call (half of a tool-heavy history)
        if m.__class__ is dict and m.keys()<=_result_keys and (tid := m.get('tool_call_id')).__class__ is str and tid in open_ and tid and m.get('role')=='tool' \
           and m.get('content').__class__ is str and m.get('name').__class__ in (str, type(None)):  # (fixed since: a name or an id no `str`)
            done[tid] = i; del open_[tid]
            continue
        # and the assistant message asking for those calls, with new ids
        if not open_ and (nonsys or not user_first) and (pc := _old_plain_calls(m)) and calls.keys().isdisjoint(pc := pc[0]):
            calls |= dict.fromkeys(pc, i); open_ = pc
            nonsys, blk, soft = True, i, {}
            continue
        role, c, tcs = _fields(m)
        if not _shape_ok(m, role, c, tcs): check_msg(m, i)
        if role=='tool':
            tid = m.get('tool_call_id') if m.__class__ is dict else _get(m, 'tool_call_id')
            if tid in open_: done[tid] = i; del open_[tid]
            elif tid in soft: done[tid] = i; del soft[tid]
            elif tid in done:
                raise HistoryError(i, f"second tool result for call {tid!r}, already answered by message {done[tid]}",
                                   "each call is answered exactly once: remove one, or repair the history", 'duplicate')
            elif tid in calls and _srv(tid):
                raise HistoryError(i, f"tool result for server-side call {tid!r} (message {calls[tid]}), which the provider already ran",
                                   "remove it, or repair the history", 'orphan')
            elif tid in calls:
                raise HistoryError(i, f"tool result for call {tid!r} (message {calls[tid]}) is out of place",
                                   "results must come right after their assistant message, before any other message: move it there, or repair the history", 'order')
            else: raise HistoryError(i, f"tool result for call {tid!r} has no matching tool call before it (orphan result)",
                                     "remove it, or repair the history", 'orphan')
        else:
            if open_: raise _dangling(blk, open_, i)
            blk, soft = None, {}
            if role in _sys_roles:
                if nonsys: raise HistoryError(i, f"{role} message after the conversation started",
                    "system messages are only allowed at the start: move its text into the system prompt", 'system')
            elif not nonsys:
                if role!='user' and user_first: raise HistoryError(i, f"the conversation starts with an {role} message",
                    "this provider needs a user message first: put one before it, or repair the history (pads a '.' user message)", 'first')
                nonsys = True
            if tcs:
                blk = i
                for tc in tcs:
                    tid = _tc_id(tc)
                    if tid in calls: raise HistoryError(i, f"tool call id {tid!r} is used again (first at message {calls[tid]})",
                                                        "tool call ids must be unique: give this call a new id", 'duplicate_call')
                    calls[tid] = i
                    if not _srv(tid): open_[tid] = _tc_name(tc)
                soft = _unran_srv(m)
            if (m.__class__ is not dict or 'thinking_blocks' in m) and (p := _thinking_problem(m, role)): raise HistoryError(i, p, "keep thinking blocks unmodified, or drop that message", 'thinking')
        if (p := _text_problem(role, c, tcs)) and not _spoken(m, role, c) and not _compacted_only(m, role, c):
            raise HistoryError(i, p, "providers reject empty text: put text in it (e.g. '.'), or repair the history", 'empty')
        if c.__class__ is list or tcs or (m.__class__ is dict and 'cache_control' in m) or (m.__class__ is not dict and _get(m, 'cache_control')): nck += _ckpts(m, c, tcs)
        if nck>max_ckpts:
            raise HistoryError(i, f"cache checkpoint number {nck} (at most {max_ckpts} allowed)",
                               "remove the extra ones with remove_cache_ckpts, or repair the history (keeps the last ones)", 'cache')
    if open_ and not pending_ok: raise _dangling(blk, open_)

def _old_plain_bytes(
    msgs:list, # The history: dicts or litellm `Message`s
    pending_ok:bool=False, # May the last assistant tool-call message still wait for some of its results?
    rounds:list=None, # If given, the indices of the tool calls and results, and of the text messages with a checkpoint, are appended to it
    read:dict=None, # If given, each tool-call message `m` read is kept in it as `{id(m): (m, _old_plain_calls(m))}`, so a later pass need not read it again
    max_ckpts:int=max_cache_ckpts, # Text messages with a cache checkpoint allowed (0: what it accepts, `mk_msgs` keeps as it is)
)->int|None:
    "UTF-8 bytes of `msgs` (with framing) if they hold only text messages (a few with a cache checkpoint), client tool calls and their text results, and are valid; else None"
    # one pass over the messages, counting nothing per message: the text is joined and measured at the end, and the
    # framing comes from how many messages of each kind there were (the UTF-8 bytes of joined strings add up)
    open_, calls, s, tx, ct, rt = {}, {}, [], [], [], []  # `s`: the strings of the tool rounds, `tx`: the text messages', `ct`: those with a checkpoint, `rt`: text replies (`Message`s)
    at = [] if rounds is None else rounds
    for i,m in enumerate(msgs):
        if type(m) is not dict:
            if open_: return None
            if (pc := _old_plain_calls(m)) is None:
                if (c := _text_reply(m)) is None: return None
                rt.append(c); at.append(i); continue
            if (t := pc[1]) is None or not calls.keys().isdisjoint(pc[0]): return None
            open_ = dict(pc[0]); calls |= open_; s += t; at.append(i)  # an assistant message asking for client tools (its calls, answered below: a copy)
            if read is not None: read[id(m)] = m, pc
        elif type(c := m.get('content')) is not str:
            if open_ or (c := _ckpt_text(m)) is None: return None
            ct.append(c); at.append(i)
        elif (k := len(m))==2:  # a text message
            if open_ or not c or c.isspace() or not ((r := m.get('role'))=='user' or r=='assistant'): return None
            tx.append(c)
        # the result of an open call: role, tool_call_id, content and perhaps a `str` name (`_result_keys`)
        elif type(tid := m.get('tool_call_id')) is str and tid and open_.pop(tid, None) and m.get('role')=='tool' and \
             (k==3 or k==4 and ((nm := m.get('name')) is None or type(nm) is str) and 'name' in m):  # (fixed since: an id no `str` does not hash)
            s += c, tid, (nm or '') if k==4 else ''
            at.append(i)
        else: return None
    if open_ and not pending_ok or len(ct)>max_ckpts: return None
    nc, nr = len(calls), len(calls)-len(open_)  # calls made, and answered (each answered once, by one result)
    n = 17*(len(at)-nr-len(ct)-len(rt)) + 26*nc + 12*nr + 8*len(tx)
    if ct: n += 40*len(ct) + _nbytes(''.join(ct))  # (a part and its checkpoint: 32 bytes more than a text message)
    if rt: n += 8*len(rt) + _nbytes(''.join(rt))
    if (j := ''.join(tx)).isascii(): n += len(j)
    else: n += sum(len(c) if c.isascii() else _nbytes(c)+len(m['role']) for m in msgs if type(m) is dict and len(m)==2 and type(c := m['content']) is str and c)  # (a role counts only with other text)
    return n + _nbytes(''.join(s))
_IDS = ['call_a', 'call_b', 'toolu_c', 'srvtoolu_d', 'srvtoolux', 'toolu_srvtoolu_e', '', 5, None, ['l']]
_TEXTS = ['hi', '', ' ', 'héllo', 'x\ud800', None, 5, [{'type': 'text', 'text': 'part'}], [{'type': 'text', 'text': 'p', 'cache_control': _cc()}]]

@st.composite
def _odd_call(draw, tid, rate):
    "A tool call with id `tid` (a litellm object, mostly), now and then odd in one or more ways"
    odd = lambda: rate>0 and draw(st.integers(0, rate))==0
    tc = _TC(function=_Fn(name='add', arguments='{"a": 1}'), id='x', type='function', **({'index': 0} if draw(st.booleans()) else {}))
    tx = tc.__pydantic_extra__
    tx['id'] = draw(st.sampled_from(_IDS)) if odd() else tid
    f = tx['function']
    if odd(): f.__dict__['name'] = draw(st.sampled_from(['', None, 5, 'sub']))
    if odd(): f.__dict__['arguments'] = draw(st.sampled_from([5, None, '', 'é']))
    if odd(): tx['function'] = draw(st.sampled_from([None, {'name': 'add', 'arguments': '{}'}, {'name': 5, 'arguments': '{}'}, {'name': 'add'}]))
    if odd(): tx['type'] = draw(st.sampled_from([None, 'custom', 'function']))
    if odd(): del tx['type']
    if odd(): tx['cache_control'] = _cc()
    if odd(): tx['provider_specific_fields'] = draw(st.sampled_from([None, {}, {'thought_signature': 'c2ln'}, {'thought_signature': 5}, {'thought_signature': 's', 'x': 1}, 'sig', []]))
    if odd(): tc.__dict__.update({k: tx.pop(k) for k in draw(st.sets(st.sampled_from(['id', 'function', 'type']))) if k in tx})  # (as some litellm versions keep them)
    if odd(): object.__setattr__(tc, '__pydantic_extra__', None)
    if odd(): return {'id': tid, 'type': 'function', 'function': {'name': 'add', 'arguments': '{}'}}  # a dict in a Message
    return tc

@st.composite
def _odd_calls_msg(draw, ids, rate):
    "A litellm `Message` asking for calls `ids`, now and then odd"
    odd = lambda: rate>0 and draw(st.integers(0, rate))==0
    m = Message(role='assistant', content='Let me add')
    d = m.__dict__
    d['tool_calls'] = [draw(_odd_call(i, rate)) for i in ids]
    d['content'] = draw(st.sampled_from(_TEXTS)) if odd() else draw(st.sampled_from([None, 'Let me add']))
    if odd(): d['role'] = 'user'
    if odd(): d['tool_calls'] = draw(st.sampled_from([[], None, tuple(d['tool_calls'])]))
    if odd(): d['name'] = draw(st.sampled_from(['bob', None]))
    if odd(): d['function_call'] = {'name': 'add', 'arguments': '{}'}
    if odd(): d['thinking_blocks'] = draw(st.sampled_from([[], [{'type': 'thinking', 'thinking': 'hm', 'signature': 's'}], 0, None]))
    if odd(): d['provider_specific_fields'] = draw(st.sampled_from([None, {}, {'thought_signatures': ['c2ln']}, {'thought_signatures': [5]},
                                                                    {'x': None}, {'x': 1}, {'lisette_provider_calls': None}, 'psf']))
    if odd(): m.__pydantic_extra__.update(draw(st.sampled_from([{'cache_control': _cc()}, {'reasoning_content': 'r'}, {'reasoning_content': None},
                                                                {'thinking_blocks': [{'type': 'thinking', 'thinking': 'x'}]}, {'images': []}, {'audio': {'id': 'a'}}])))
    if odd(): d['reasoning_content'] = draw(st.sampled_from(['why', None, []]))
    if odd(): del d[draw(st.sampled_from(['function_call', 'provider_specific_fields', 'content']))]
    return m

@st.composite
def _odd_result(draw, tid, rate):
    "A tool result dict answering `tid`, now and then odd"
    odd = lambda: rate>0 and draw(st.integers(0, rate))==0
    r = {'tool_call_id': draw(st.sampled_from(_IDS)) if odd() else tid, 'role': 'tool', 'name': 'add', 'content': '3'}
    if draw(st.booleans()): del r['name']
    if odd(): r['name'] = draw(st.sampled_from([None, 5, '']))
    if odd(): r['content'] = draw(st.sampled_from(_TEXTS))
    if odd(): r['role'] = draw(st.sampled_from(['user', None]))
    if odd(): del r[draw(st.sampled_from(['role', 'content', 'tool_call_id']))]
    if odd(): r['x'] = 1
    return r

@st.composite
def _odd_text(draw, rate):
    "A text message (a dict, or a litellm reply), now and then odd"
    odd = lambda: rate>0 and draw(st.integers(0, rate))==0
    if draw(st.integers(0, 5))==0:
        m = Message(role='assistant', content=draw(st.sampled_from(['Sure.', '', ' ', None])) if odd() else 'Sure.')
        if odd(): m.__pydantic_extra__['reasoning_content'] = 'r'
        return m
    m = {'role': draw(st.sampled_from(['user', 'assistant'])), 'content': draw(st.sampled_from(['hi', 'héllo', 'x\ud800']))}
    if odd(): m['content'] = draw(st.sampled_from(_TEXTS))
    if odd(): m['role'] = draw(st.sampled_from(['system', 'tool', None, ['user']]))
    if odd(): m['cache_control'] = _cc()
    return m

@st.composite
def _odd_hists(draw):
    "Tool rounds (1-3 calls, answered in any order, sometimes not, twice, or by another id), text between them; odd messages in some histories (`rate`: about one in so many fields)"
    h, n, rate = [], iter(range(100)), draw(st.sampled_from([0, 0, 40, 12, 5]))
    odd = lambda: rate>0 and draw(st.integers(0, rate))==0
    for _ in range(draw(st.integers(1, 4))):
        h.append(draw(_odd_text(rate)))
        ids = [draw(st.sampled_from(['call_0', 'srvtoolu_z', ''])) if odd() else f'call_{next(n)}' for _ in range(draw(st.integers(1, 3)))]
        h.append(draw(_odd_calls_msg(ids, rate)))
        res = [draw(_odd_result(i, rate)) for i in ids if not odd()]
        h += draw(st.permutations(res + ([res[0]] if res and odd() else [])))
        if draw(st.booleans()): h.append(draw(_odd_text(rate)))
    return h

def _outcome(f, *a, **kw):
    "What `f` returns, or the error it raises (type and message)"
    try: return 'ok', f(*a, **kw)
    except Exception as e: return type(e).__name__, str(e), getattr(e, 'index', None), getattr(e, 'kind', None)

@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(_odd_hists(), st.booleans(), st.sampled_from([0, 4]), st.booleans())
def test_quick_readers_agree_with_the_code_before(h, pending_ok, max_ckpts, user_first):
    for m in h: assert _outcome(_plain_calls, m) == _outcome(_old_plain_calls, m), m
    (r1, a1, d1), (r2, a2, d2) = [(_outcome(f, h, pending_ok, a, d, max_ckpts=max_ckpts), a, d) for f in (_plain_bytes, _old_plain_bytes) for a,d in [([], {})]]
    assert (r1, a1) == (r2, a2) and d1.keys()==d2.keys() and all(d1[k][0] is d2[k][0] and d1[k][1]==d2[k][1] for k in d1)  # (rounds and read too)
    for k in range(len(h)+1):
        assert _outcome(check_hist, h, start=k, pending_ok=pending_ok, max_ckpts=max_ckpts, user_first=user_first) == \
               _outcome(_old_check_hist, h, start=k, pending_ok=pending_ok, max_ckpts=max_ckpts, user_first=user_first)

def test_quick_readers_agree_on_odd_results():
    "Results that the quick paths must leave to the full check as before (an id that is no str, keys beyond `_result_keys`): the same answer or error"
    q = mk_tc_req('Let me add', [mk_tc('add', tcid='call_a', a=1)])
    odd = [{'tool_call_id': ['x'], 'role': 'user', 'content': 'hi'}, {'tool_call_id': ['x'], 'role': 'tool', 'content': 'hi', 'name': 'add'},
           {'tool_call_id': ['x'], 'a': 1, 'b': 2}, {'tool_call_id': 'call_a', 'role': 'tool', 'content': '1', 'x': 1},
           {'tool_call_id': 'call_a', 'role': 'tool', 'name': 'add', 'x': 1}, {'tool_call_id': 'call_a', 'role': 'tool', 'content': 5}]
    for r in odd:
        for h in ([mk_msg('hi'), q, r], [mk_msg('hi'), r], [mk_msg('hi'), q, mk_tc_result(mk_tc('add', tcid='call_a'), '1'), r]):
            assert _outcome(check_hist, h, pending_ok=True) == _outcome(_old_check_hist, h, pending_ok=True), h
            assert _outcome(_plain_bytes, h, True) == _outcome(_old_plain_bytes, h, True), h

@pytest.mark.parametrize('bad', ['x', '', {'type': 'persistent'}, {'type': 'ephemeral', 'ttl': 300}])
def test_repair_takes_away_checkpoints_of_no_form(bad):
    """repair_hist refused a history with a cache checkpoint of no form a provider takes ('cannot repair: ... fix this
    message by hand'); it takes it away and says so, as it does the extra ones, on a message part, a message and a call"""
    call = _TC(id='call_1', type='function', function=_Fn(name='f', arguments='{}'))
    call.cache_control = bad
    h = [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi', 'cache_control': bad}]},
         _Msg(role='assistant', content=None, tool_calls=[call]), {'role': 'tool', 'tool_call_id': 'call_1', 'content': '1'},
         {'role': 'assistant', 'content': 'done', 'cache_control': bad}]
    fixed, report = repair_hist(h)
    assert check_hist(fixed) is None and [r.split(':')[0] for r in report] == ['message 0', 'message 1', 'message 3']
    assert all('removed a cache checkpoint of no form a provider takes' in r for r in report)
    assert 'cache_control' not in fixed[0]['content'][0] and _get(fixed[1].tool_calls[0], 'cache_control') is None and 'cache_control' not in fixed[3]
    assert h[0]['content'][0]['cache_control'] == bad and h[3]['cache_control'] == bad  # (the input is unchanged)

def test_tool_result_of_an_odd_name_or_id_gets_the_full_check():
    """A tool result whose `name` is no `str` passed `check_hist` (its quick path did not look at the name, which `check_msg`
    refuses), and one whose `tool_call_id` is a list raised a bare TypeError ('unhashable type') from `check_hist` and
    `Chat(hist=)`: now both get `check_msg`'s error, naming the message and the field"""
    from lisette import Chat
    q = mk_tc_req('Let me add', [mk_tc('add', tcid='call_a', a=1)])
    for r, field in (({'tool_call_id': 'call_a', 'role': 'tool', 'name': 5, 'content': '3'}, 'name'),
                     ({'tool_call_id': ['call_a'], 'role': 'tool', 'name': 'add', 'content': '3'}, 'tool_call_id'),
                     ({'tool_call_id': ['call_a'], 'role': 'tool', 'content': '3'}, 'tool_call_id')):
        h = [mk_msg('hi'), q, r, mk_msg('3', role='assistant')]
        for f in (check_hist, lambda h: Chat('gpt-4o', hist=h)):
            with pytest.raises(MessageFormatError) as e: f(h)
            assert e.value.index == 2 and e.value.field == field, e.value
    assert _plain_bytes([mk_msg('hi'), q, {'tool_call_id': ['call_a'], 'role': 'tool', 'content': '3'}], True) is None  # (no TypeError)

@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_odd_hists(), st.booleans(), st.booleans())
def test_quick_paths_accept_only_what_check_msg_accepts(h, pending_ok, user_first):
    "The quick paths of `check_hist` and `_plain_bytes` pass a history only if `check_msg` passes each of its messages, as the full path asks"
    passed = _outcome(check_hist, h, pending_ok=pending_ok, user_first=user_first)[0]=='ok' or _outcome(_plain_bytes, h, pending_ok)[1:] not in ((None,), ())
    if passed:
        for i,m in enumerate(h): check_msg(m, i)

def test_tool_result_of_an_empty_list_is_empty_text():
    """A tool result whose content is an empty list of parts: OpenAI's Chat Completions refuses it (its reference: the
    array has `minItems: 1`; litellm sends it as it is), on every later turn. check_hist refuses it as it does an empty
    text part, naming the message; repair_hist puts '.' in its place and says so"""
    tc = mk_tc('add', a=1, b=2)
    h = [mk_msg('Add'), mk_tc_req(None, [tc]), mk_tc_result(tc, []), mk_msg('3', role='assistant')]
    with pytest.raises(HistoryError, match=r"message 2: has an empty content list.*repair the history") as e: check_hist(h)
    assert e.value.index == 2
    fixed, report = repair_hist(h)
    assert fixed[2]['content'] == '.' and report == ["message 2: replaced empty text with '.'"] and h[2]['content'] == []
    assert check_hist([*h[:2], mk_tc_result(tc, ''), h[3]]) is None  # (an empty text result goes, as before)
