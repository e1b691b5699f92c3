"Random provider replies fuzzed through the tool loop: the history stays valid whatever comes back."
import pytest
from hypothesis import given, settings, HealthCheck, strategies as st
from lisette import *
from lisette.history import check_hist
from lisette.testing import Reply

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

# ---- random provider replies through the loop

_text = st.text(st.characters(blacklist_categories=('Cs',)), max_size=30)
_call = st.tuples(st.sampled_from(['add', 'nope']), st.fixed_dictionaries({'a': st.integers(-5, 5)}, optional={'b': st.integers(-5, 5)}))
_reply = st.one_of(
    st.builds(lambda t: Reply(t or 'ok'), _text),
    st.builds(lambda t, tcs: Reply(t, tool_calls=tcs), _text, st.lists(_call, min_size=1, max_size=3)),
    st.builds(lambda t: Reply(t or 'cut', stop='max_tokens'), _text),
    st.builds(lambda t: Reply(t or 'no', stop='refusal'), _text),
    st.builds(lambda s: Reply(status=s, error=f'error {s}'), st.sampled_from([400, 404, 422])))

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(replies=st.lists(_reply, min_size=1, max_size=5), stream=st.booleans(), anthropic=st.booleans())
def test_random_replies_keep_history_valid(fake_provider, replies, stream, anthropic):
    fp = fake_provider
    fp.reset()
    m, kw = (('anthropic/claude-sonnet-4-5', dict(api_base=fp.anthropic_base, api_key='k')) if anthropic
             else ('openai/gpt-4o-mini', dict(api_base=fp.openai_base, api_key='k')))
    chat = Chat(m, tools=[add], retries=0, **kw)
    fp.queue(*replies)
    for turn in range(2):
        try:
            r = chat(f"turn {turn}", max_steps=3, stream=stream)
            if stream: list(r)
        except Exception as e:
            assert str(e)  # a clear error, never a silent one
        check_hist(chat.hist)  # whatever happened, the history stays valid
        if not fp.pending: break
