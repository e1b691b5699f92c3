"Property tests for message building, cache checkpoints and transcripts."
import copy, json
from hypothesis import given, settings, strategies as st
from lisette.messages import mk_msgs, mk_msg, remove_cache_ckpts, fmt2hist, _has_cache, _role
from lisette.stream import mk_tr_details, StreamFormatter
from litellm import ModelResponse

texts = st.text(min_size=1, max_size=20).filter(lambda s: s.strip() and '<details' not in s)

@given(st.lists(texts, min_size=1, max_size=30))
def test_roles_alternate(msgs):
    res = mk_msgs(msgs)
    assert [m['role'] for m in res] == [('user', 'assistant')[i%2] for i in range(len(msgs))]

@given(st.lists(texts, min_size=1, max_size=30), st.lists(st.integers(-40, 40), max_size=8))
def test_checkpoints_placed_and_removed(msgs, idxs):
    orig = mk_msgs(msgs)
    res = mk_msgs(copy.deepcopy(msgs), cache=True, cache_idxs=idxs)
    n = len(msgs)
    want = {i % n for i in idxs if -n <= i < n}
    got = {i for i,m in enumerate(res) if _has_cache(m)}
    assert len(got) <= 4
    assert got <= want and len(got) == min(len(want), 4)
    for m in res: remove_cache_ckpts(m)
    assert [m['content'] if isinstance(m['content'], str) else m['content'][0]['text'] for m in res] == [m['content'] for m in orig]

@given(st.lists(st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), min_size=1, max_size=3), min_size=1, max_size=4))
def test_fmt2hist_roundtrip(rounds):
    "A formatted multi-round tool loop turns back into the same calls and results, parallel calls kept together"
    fmt, k = StreamFormatter(), 0
    for rnd in rounds:
        tcs = []
        for a,b in rnd:
            k += 1
            tcs.append(dict(id=f'toolu_{k}', type='function', function=dict(name='add', arguments=json.dumps({'a': a, 'b': b}))))
        r = ModelResponse(choices=[dict(message=dict(role='assistant', content='', tool_calls=tcs), finish_reason='tool_calls')])
        fmt.format_item(r)
        for tc,(a,b) in zip(tcs, rnd): fmt.format_item({'tool_call_id': tc['id'], 'role': 'tool', 'name': 'add', 'content': str(a+b)})
    h = fmt2hist(fmt.outp + 'Done.')
    asst = [m for m in h if _role(m)=='assistant' and m.tool_calls]
    assert [len(m.tool_calls) for m in asst] == [len(r) for r in rounds]
    res = [m['content'] for m in h if _role(m)=='tool']
    assert res == [str(a+b) for rnd in rounds for a,b in rnd]
    assert h[-1].content == 'Done.'

def test_unknown_bytes_error():
    import pytest
    with pytest.raises(ValueError, match='Accepted: images'): mk_msg([b'\x01\x02\x03 not media'])
    with pytest.raises(TypeError, match='object'): mk_msg(object())
