"What a Chat sends: tools given to one call, API keys never leaking, tool_reminder, markup, temp vs think, blank messages."
import io, json, logging, warnings
from contextlib import redirect_stdout
import pytest
from lisette import *
from lisette.history import check_hist
from lisette.testing import Reply

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

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

def test_tool_choice_names_a_tool(proto):
    """`tool_choice='mul'` (a tool's name) makes the model call that tool, on every protocol: litellm sent the bare name to
    OpenAI as is (a 400 there) and left it out for Anthropic, without a word (helper-46). A name the chat has no tool for is
    refused before the turn, and the history is untouched"""
    fp, m, kw = proto
    def mul(a:int, b:int) -> int:
        "Multiply"
        return a*b
    fp.queue(Reply(tool_calls=[('mul', {'a': 3, 'b': 4})]), "12")
    chat = Chat(m, tools=[add, mul], **kw)
    chat("3*4?", tool_choice='mul')
    sent = fp.requests[0].body
    want = {'openai': {'type': 'function', 'function': {'name': 'mul'}}, 'anthropic': {'type': 'tool', 'name': 'mul'}}
    got = sent.get('tool_choice') or sent.get('toolConfig')
    if m.startswith('gemini/'): assert got['functionCallingConfig'] == {'mode': 'ANY', 'allowed_function_names': ['mul']}, got
    elif m.startswith('openai/responses/'): assert got in ({'type': 'function', 'name': 'mul'}, {'type': 'function', 'function': {'name': 'mul'}}), got
    else: assert got == want['openai' if m.startswith('openai/') else 'anthropic'], got
    n = len(chat.hist)
    with pytest.raises(ValueError, match=r"tool_choice='div': give 'auto', 'none', 'required' \(Anthropic's 'any'\), the name of one of the chat's tools \(add, mul\)"):
        chat("8/2?", tool_choice='div')
    assert len(chat.hist) == n

def test_named_tool_choice_is_forced_once(fake_provider):
    """A named tool_choice forces the first request; once the model called that tool, the turn's later requests send 'auto'
    (reported quietly): forced every round, the model had to call it again, until the stall detector and max_steps ended
    the loop (helper-50)"""
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})]), 'It is 3.')
    chat = Chat('openai/gpt-4o-mini', tools=[add], api_base=fp.openai_base, api_key='k')
    assert contents(chat('1+2?', tool_choice='add', max_steps=5)).content == 'It is 3.'
    assert [r.body.get('tool_choice') for r in fp.requests] == [{'type': 'function', 'function': {'name': 'add'}}, 'auto']
    assert [a.kind for a in chat.adjustments if a.kind.startswith('tool_choice')] == ['tool_choice_reset']

def test_tool_choice_without_tools_is_reported(fake_provider):
    fp = fake_provider
    fp.queue("hi")
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings(record=True): chat("hello", tool_choice='required')
    assert 'tool_choice' not in fp.requests[0].body
    assert [a.detail for a in chat.adjustments if a.kind=='tool_choice'] == ["tool_choice='required' not sent: the turn has no tools"]

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
    with pytest.warns(UserWarning, match="empty_reply: .* replied with no text: stored as '.'"): chat("")  # blank prompt: sent as '.'
    assert chat.hist[0]['content'] == '.' and chat.hist[1].content == '.'  # empty reply stored as '.'
    assert [a.kind for a in chat.adjustments if a.kind!='max_tokens'] == ['blank_prompt', 'empty_reply']  # both said
    check_hist(chat.hist)
    assert contents(chat("and now?")).content == 'still talking'
