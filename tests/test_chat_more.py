"""More Chat behaviour through litellm and the fake provider: structured outputs, the context-window error inside a
loop, per-call tools, API keys never leaking, and random provider replies fuzzed through the loop."""
import io, json, logging, warnings
from contextlib import redirect_stdout
from dataclasses import dataclass
import pytest
from hypothesis import given, settings, HealthCheck, strategies as st
from pydantic import BaseModel
from lisette import *
from lisette.chat import _cwe_msg
from lisette.history import check_hist
from lisette.testing import Reply

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

# ---- structured outputs: docments classes, dataclasses, pydantic models

class Pet(BaseModel):
    "A pet"
    name: str
    age: int

@dataclass
class City:
    "A city"
    name: str
    population: int

class President:
    "Information about a president"
    def __init__(self, first:str, # first name
                 last:str): # last name
        self.first, self.last = first, last

@pytest.mark.parametrize('cls,args,check', [
    (Pet, {'name': 'Rex', 'age': 3}, lambda o: isinstance(o, Pet) and o.age == 3),
    (City, {'name': 'Brisbane', 'population': 2600000}, lambda o: isinstance(o, City) and o.population == 2600000),
    (President, {'first': 'Thomas', 'last': 'Jefferson'}, lambda o: isinstance(o, President) and o.last == 'Jefferson')])
def test_structured(proto, cls, args, check):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[(cls.__name__, args)]))
    o = structured(m, [mk_msg("Tell me")], cls, **kw)
    assert check(o)
    v = fp.views[-1]
    assert v['tools'] == [cls.__name__] and v['tool_choice'] == cls.__name__  # the call was forced

def test_structured_without_call_is_clear(proto):
    fp, m, kw = proto
    fp.queue("I'd rather chat.")
    with pytest.raises(ValueError, match='without calling `Pet`'): structured(m, [mk_msg("Tell me")], Pet, **kw)

# ---- context window exceeded inside a tool loop

def test_context_window_error_mid_loop(fake_provider):
    fp = fake_provider
    big = 'line of log\n' * 5000
    def read_log() -> str:
        "Read the log"
        return big
    fp.queue(Reply(tool_calls=[('read_log', {})]),
             Reply(status=400, error="This model's maximum context length is 128000 tokens. However, your messages resulted in 200000 tokens."),
             "The log was too long; here is what I saw.")
    chat = Chat('openai/gpt-4o-mini', tools=[read_log], api_base=fp.openai_base, api_key='k')
    r = chat("read the log")
    assert contents(r).content.startswith('The log was too long')
    tr = chat.hist[2]['content']
    assert tr.startswith(_cwe_msg) and len(tr) < 2000
    assert fp.last['tool_choice'] == 'none'
    check_hist(chat.hist)

# ---- tools given to one call

def test_tools_for_one_call(proto):
    fp, m, kw = proto
    def mul(a:int, b:int) -> int:
        "Multiply"
        return a*b
    fp.queue(Reply(tool_calls=[('mul', {'a': 3, 'b': 4})]), "12", "plain")
    chat = Chat(m, tools=[add], **kw)
    chat("3*4?", tools=[mul])
    assert chat.hist[2]['content'] == '12'
    assert fp.views[0]['tools'] == ['mul']
    chat("again")
    assert fp.views[-1]['tools'] == ['add']  # the chat's own tools are back

# ---- API keys never leak

def test_api_key_never_shown(proto, caplog):
    fp, m, kw = proto
    secret = 'sk-live-SECRET-1234567890'
    kw = {**kw, 'api_key': secret}
    fp.queue(Reply("Adding.", tool_calls=[('add', {'a': 1, 'b': 2})]), "3", Reply(status=401, error='Incorrect API key provided: nope'))
    caplog.set_level(logging.DEBUG)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        chat = Chat(m, tools=[add], **kw)
        fmt = StreamFormatter()
        for o in chat("add", stream=True): fmt.format_item(o)
        try: chat("again")
        except Exception as e: err = f"{e!r} {e}"
    buf = io.StringIO()
    with redirect_stdout(buf): chat.print_hist()
    shown = [repr(chat), str(chat.__dict__.get('hist')), buf.getvalue(), fmt.outp, err, caplog.text, *[str(w.message) for w in ws],
             repr(chat.use), chat.use.fmt()]
    assert all(secret not in s for s in shown)
    assert all(secret not in json.dumps(r.headers) for r in fp.requests)  # the fake provider's record masks it too

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

# ---- tool_reminder (transient), markup, temp vs think

def test_tool_reminder_is_sent_never_stored(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2}), ('add', {'a': 3})]), "done")
    chat = Chat(m, tools=[add], tool_reminder='Remember: be brief.', **kw)
    chat("add twice")
    sent = json.dumps(fp.last)
    assert sent.count('Remember: be brief.') == 1  # on the first trailing tool result only
    assert 'Remember' not in json.dumps([x if isinstance(x, dict) else x.model_dump() for x in chat.hist])

def test_markup_on_cost(proto):
    fp, m, kw = proto
    fp.queue(Reply("a", usage={'input': 1000, 'output': 100}), Reply("a", usage={'input': 1000, 'output': 100}))
    plain, marked = Chat(m, **kw), Chat(m, markup=0.5, **kw)
    plain("hi"); marked("hi")
    assert plain.use.cost > 0 and abs(marked.use.cost - 1.5*plain.use.cost) < 1e-12

def test_temp_sent_unless_thinking(fake_provider):
    fp = fake_provider
    fp.queue("a", "b", "c")
    chat = Chat('anthropic/claude-sonnet-4-5', temp=0.3, api_base=fp.anthropic_base, api_key='k')
    chat("hi"); assert fp.last['temperature'] == 0.3
    chat("hi", temp=0.7); assert fp.last['temperature'] == 0.7
    chat("think", think='l'); assert 'thinking' in fp.last and fp.last.get('temperature', 1) == 1

# ---- blank messages never make the history invalid

def test_blank_user_message_and_empty_reply(proto):
    fp, m, kw = proto
    fp.queue(Reply(""), "still talking")
    chat = Chat(m, **kw)
    chat("")                      # blank prompt: sent as '.'
    assert chat.hist[0]['content'] == '.' and chat.hist[1].content == '.'  # empty reply stored as '.'
    check_hist(chat.hist)
    assert contents(chat("and now?")).content == 'still talking'
