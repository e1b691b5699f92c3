"A context-window error inside a tool loop: long tool results cut, the model asked to finish, the history valid."
import pytest
from lisette import *
from lisette.chat import _cwe_msg
from lisette.history import check_hist
from lisette.testing import Reply

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

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

# ---- the context check's cost: a bound, an estimate, and exact counts only of what is new

from unittest import mock
import litellm
from litellm import ModelResponse
from lisette.context import _bytes_bound, estimate_tokens, count_tokens

def _canned(**kw):
    return ModelResponse(model='gpt-4o-mini', choices=[dict(message=dict(role='assistant', content='ok'), finish_reason='stop')])

def _counted(chat, msg):
    "Run a turn; the sizes of the message lists litellm's tokenizer was given"
    with mock.patch.object(litellm, 'token_counter', wraps=litellm.token_counter) as tc:
        chat(msg)
    return [len(c.kwargs['messages']) for c in tc.call_args_list]

def test_long_history_first_turn_does_not_tokenize():
    hist = mk_msgs([f'message {i}' for i in range(5000)])
    chat = Chat('openai/gpt-4o-mini', hist=hist, completefunc=_canned)
    assert _counted(chat, 'next') == []  # the byte bound settles it

def test_estimate_settles_what_the_bound_cannot():
    "A history whose byte bound is over the window but whose estimate is far below it is not counted either"
    hist = mk_msgs([('word ' * 40) for i in range(800)])  # 160k bytes, 35k tokens
    chat = Chat('openai/gpt-4o-mini', hist=hist, completefunc=_canned, max_tokens=1000)
    assert _bytes_bound(hist) > 128_000 - 1000 and estimate_tokens(hist) < (128_000-1000)/2
    assert _counted(chat, 'next') == []

def test_trusted_estimate_is_not_repeated_every_turn():
    "Once an estimate settles a long history, later turns add only their new messages to it (not a pass over all 5,000)"
    import lisette.chat as lc
    hist = mk_msgs([('word ' * 40) for i in range(800)])
    chat = Chat('openai/gpt-4o-mini', hist=hist, completefunc=_canned, max_tokens=1000)
    sizes = []
    def spy(h, *a, **kw): sizes.append(len(h)); return _bytes_bound(h, *a, **kw)
    with mock.patch.object(lc, '_bytes_bound', spy): chat('next')
    assert max(sizes) >= len(hist)  # the first turn bounds (and estimates) the whole history
    sizes.clear()
    with mock.patch.object(lc, '_bytes_bound', spy): chat('and again')
    assert sizes and max(sizes) <= 3  # the next one only what is new since
    assert _counted(chat, 'once more') == []

def test_near_the_window_counts_once_then_only_new_messages():
    hist = mk_msgs([('word ' * 40) for i in range(800)])
    chat = Chat('openai/gpt-4o-mini', hist=hist, completefunc=_canned, fit_context=True, max_tokens=1000)
    first = _counted(chat, 'next')
    assert first == [len(hist)+1]  # fit_context: counted exactly, the whole request once
    again = _counted(chat, 'and again')
    assert again == [] or max(again) <= 3  # then the bound from the exact count settles it, or only the new messages are counted
    assert count_tokens(chat.hist, 'openai/gpt-4o-mini') < 128_000

def test_near_the_window_with_deep_tool_arguments():
    "The exact count near the window (and `count_tokens`) of a history holding a tool call whose arguments nest ~100,000 deep: counted as text; it raised a RecursionError"
    deep = '{"n": ' + '['*100_000 + ']'*100_000 + '}'
    call = [{'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'call_d', 'type': 'function', 'function': {'name': 'f', 'arguments': deep}}]},
            {'role': 'tool', 'tool_call_id': 'call_d', 'name': 'f', 'content': 'not called'}]
    hist = mk_msgs(['go']) + call + mk_msgs([('word ' * 40) for i in range(99)])  # (the deep arguments count 100,000 tokens)
    chat = Chat('openai/gpt-4o-mini', hist=hist, completefunc=_canned, fit_context=True, max_tokens=1000)
    assert _counted(chat, 'next') == [len(hist)+1]  # counted exactly, once
    assert count_tokens(call, 'openai/gpt-4o-mini') > 100_000
    check_hist(chat.hist)

@pytest.mark.parametrize('model,base,words,window', [('openai/gpt-4o-mini', 'openai_base', 118_000, 128_000),
                                                     ('anthropic/claude-sonnet-4-5', 'anthropic_base', 150_000, 200_000)])
def test_filled_max_tokens_fits_the_window(fake_provider, model, base, words, window):
    "A prompt that fits, with less room left than the model's maximum output: the filled-in max_tokens is lowered so that both fit (providers reject the sum), and said so"
    import warnings
    fp = fake_provider
    fp.queue("ok", "ok", "ok")
    chat = Chat(model, api_base=getattr(fp, base), api_key='k')
    prompt = ' '.join(['word'] * words)
    from lisette.context import ContextWindowWarning
    with warnings.catch_warnings():
        warnings.simplefilter('error', ContextWindowWarning)  # it fits: no context warning
        chat(prompt)
    n, mt = count_tokens(mk_msgs([prompt]), model), fp.last['max_tokens']
    assert 0 < mt < (model_info(model)['max_output_tokens']) and n + mt <= window
    assert any(a.kind=='max_tokens' and 'lowered to what the context window leaves' in a.detail for a in chat.adjustments)
    chat2 = Chat(model, api_base=getattr(fp, base), api_key='k', max_tokens=2000)  # the user's own max_tokens: sent as asked
    chat2(prompt)
    assert fp.last['max_tokens'] == 2000
    chat3 = Chat(model, api_base=getattr(fp, base), api_key='k')  # a short prompt: the model's maximum output, as before
    chat3("hi")
    assert fp.last['max_tokens'] == model_info(model)['max_output_tokens']

@pytest.mark.parametrize('words,kept', [(194_000, True), (197_500, False)])
def test_lowered_max_tokens_keeps_claude_thinking_valid(fake_provider, words, kept):
    "The filled-in max_tokens lowered under Claude's thinking budget: the budget is lowered with it, or thinking left out (Anthropic rejects max_tokens <= budget_tokens); both said"
    fp = fake_provider
    fp.queue("ok")
    chat = Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')
    chat(' '.join(['word'] * words), think='h')
    b, mt = fp.last, fp.last['max_tokens']
    assert mt < 4096  # lowered under litellm's budget for 'high'
    notes = [a.detail for a in chat.adjustments if a.kind=='think']
    if kept:
        assert 1024 <= b['thinking']['budget_tokens'] < mt and 'thinking budget' in notes[0]
    else:
        assert 'thinking' not in b and 'left out' in notes[0]


@pytest.mark.parametrize('how', ['callkw', 'call_thinking', 'call_effort'])
def test_lowered_max_tokens_fits_thinking_however_asked(fake_provider, how):
    "Thinking asked for in the chat's callkw or the call's own kwargs (not `think=`) is fitted under a lowered max_tokens too, and said"
    fp = fake_provider
    fp.queue("ok")
    th = {'type': 'enabled', 'budget_tokens': 8000}
    chat = Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k', callkw={'thinking': th} if how=='callkw' else None)
    chat(' '.join(['word'] * 194_000), **({'thinking': th} if how=='call_thinking' else {'reasoning_effort': 'high'} if how=='call_effort' else {}))
    b = fp.last
    assert 1024 <= b['thinking']['budget_tokens'] < b['max_tokens'] < 4096
    assert any(a.kind=='think' and 'thinking budget' in a.detail for a in chat.adjustments)

def test_number_heavy_history_over_the_window_is_warned():
    "Tool results of JSON numbers make a token of 1-2 characters: the estimate weighs them so, and a request over the window is counted and warned, not waved through"
    import json, random, warnings
    from lisette.context import ContextWindowWarning
    random.seed(0)
    hist = mk_msgs([', '.join(str(random.randint(0, 9)) for _ in range(15_000)) for _ in range(4)])  # 180k tokens, 180k characters
    assert count_tokens(hist, 'openai/gpt-4o-mini') > 128_000
    chat = Chat('openai/gpt-4o-mini', hist=hist, completefunc=_canned, max_tokens=1000)
    with pytest.warns(ContextWindowWarning, match='takes 128,000'): chat('next')

def test_context_window_retry_sends_the_cut_result_when_results_are_paged():
    "After a context-window error the turn's long results are cut and the request sent again: with paging on, the page of the whole result must not be sent again (it was, from the page memo, while the cut edited the result in place)"
    def big() -> str:
        "A long result"
        return 'x'*100_000
    sizes = []
    def complete(**kw):
        tool = [m for m in kw['messages'] if (m.get('role') if isinstance(m, dict) else m.role)=='tool']
        sizes.append(size := sum(len(str(m['content'])) for m in tool))
        if not tool: return ModelResponse(model='m', choices=[dict(message=dict(role='assistant', content='', tool_calls=[dict(id='call_1', type='function', function=dict(name='big', arguments='{}'))]), finish_reason='tool_calls')])
        if size>10_000: raise litellm.ContextWindowExceededError(message='too long', model='gpt-4.1', llm_provider='openai')
        return ModelResponse(model='m', choices=[dict(message=dict(role='assistant', content='ok'), finish_reason='stop')])
    chat = Chat('gpt-4.1', tools=[big], page_results=20_000, completefunc=complete)
    with pytest.warns(UserWarning, match='context window'): r = chat('go')
    assert contents(r).content == 'ok' and sizes[1] > 20_000 > 10_000 > sizes[2]
    assert chat.hist[2]['content'].startswith(_cwe_msg) and check_hist(chat.hist) is None
