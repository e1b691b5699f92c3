"""Honest requests (issue 16): upstream-faithful defaults checked on the exact body the fake provider received, for
every protocol it speaks, and a test per adjustment kind that triggers it and reads `chat.adjustments`."""
import json, warnings
from pathlib import Path
import pytest, litellm
from lisette import *
from lisette.chat import Adjustment, AdjustmentWarning, _final_prompt
from lisette.providers import model_info
from lisette.testing import Reply

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

def view(b):
    "(temperature, max output tokens) of request body `b`, in any of the four protocols"
    gc = b.get('generationConfig') or {}
    return (b.get('temperature', gc.get('temperature')),
            b.get('max_output_tokens', b.get('max_tokens', gc.get('maxOutputTokens', gc.get('max_output_tokens')))))

def kinds(chat): return [a.kind for a in chat.adjustments]

@pytest.fixture(autouse=True)
def _no_adjustment_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', AdjustmentWarning)
        yield

# ---- request defaults, on every protocol

def _litellm_default_temp(m):
    "The temperature litellm itself sends when none is given: Gemini 3's recommended 1.0 up to litellm 1.106, none since"
    if not m.startswith('gemini/'): return None
    return litellm.GoogleAIStudioGeminiConfig().map_openai_params({}, {}, m.split('/', 1)[1], False).get('temperature')

def test_no_temperature_by_default(proto):
    fp, m, kw = proto
    fp.queue("hi")
    chat = Chat(m, **kw)
    assert chat.temp is None
    chat("hi")
    assert view(fp.last)[0] == _litellm_default_temp(m)
    assert 'temperature' not in kinds(chat)

def test_explicit_temp_is_sent(proto):
    fp, m, kw = proto
    fp.queue("a", "b")
    chat = Chat(m, temp=0.5, **kw)
    if 'gpt-5' in m:  # litellm: GPT-5 takes only the default temperature; left out, and reported
        chat("hi"); assert view(fp.last)[0] is None and 'temperature' in kinds(chat)
        return
    chat("hi"); assert view(fp.last)[0] == 0.5 and 'temperature' not in kinds(chat)
    chat("hi", temp=0.2); assert view(fp.last)[0] == 0.2

def test_max_tokens_model_max_by_default(proto):
    fp, m, kw = proto
    mx = model_info(m)['max_output_tokens']
    fp.queue("a", "b", "c")
    chat = Chat(m, **kw)
    chat("hi"); assert view(fp.last)[1] == mx
    assert Adjustment('max_tokens', chat.adjustments[-1].detail) in chat.adjustments and str(mx) in chat.adjustments[-1].detail
    chat.max_tokens = 300; chat("hi"); assert view(fp.last)[1] == 300 and 'max_tokens' not in kinds(chat)
    chat("hi", max_tokens=40); assert view(fp.last)[1] == 40

def test_thinking_not_capped(fake_provider):
    "The bug: think='l' on Sonnet 4.5 sent max_tokens 5,120 (litellm's budget + 4,096); the model's 64,000 is sent"
    fp = fake_provider
    fp.queue(Reply("ok", thinking="hmm"))
    chat = Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')
    chat('hi', think='l')
    assert fp.last['max_tokens'] == 64_000 and fp.last['thinking']['type'] == 'enabled'

# ---- adjustment kinds

def test_temperature_dropped_with_thinking(fake_provider):
    fp = fake_provider
    fp.queue(Reply("ok", thinking="hmm"))
    chat = Chat('anthropic/claude-sonnet-4-5', temp=0.5, api_base=fp.anthropic_base, api_key='k')
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        chat('hi', think='l')
    assert 'temperature' not in fp.last and 'temperature' in kinds(chat)
    assert 'thinking' in chat.adjustments[kinds(chat).index('temperature')].detail
    assert [w.category for w in ws if w.category is AdjustmentWarning] == [AdjustmentWarning]

def test_temperature_dropped_unsupported(fake_provider):
    "Claude Opus 4.7 takes no temperature: an explicit temp is left out, and reported"
    fp = fake_provider
    fp.queue("ok")
    chat = Chat('anthropic/' + opus, temp=0.5, api_base=fp.anthropic_base, api_key='k')
    chat('hi')
    assert 'temperature' not in fp.last and 'temperature' in kinds(chat)

def test_prefill_dropped(fake_provider):
    fp = fake_provider
    fp.queue("Rens")
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    chat('Spell my name', prefill='Your name is R')
    assert fp.last['messages'][-1]['role'] == 'user' and 'prefill' in kinds(chat)

@pytest.mark.parametrize('model', ['openai/gpt-4.1-nano', 'openai/gpt-5.4'])
def test_search_ignored(fake_provider, model):
    "litellm says gpt-4.1-nano has no web search; OpenAI takes web_search_options on Chat Completions only from its search models, so gpt-5.4 there has none either (the documented `_has_search('openai/gpt-5.4')` is False)"
    fp = fake_provider
    fp.queue("ok")
    chat = Chat(model, api_base=fp.openai_base, api_key='k')
    chat('otters?', search='l')
    assert 'web_search_options' not in fp.last and 'search' in kinds(chat)

def test_effort_mapped(fake_provider):
    "think='x' is xhigh where the model has it, else high (Sonnet 4.5), reported"
    fp = fake_provider
    fp.queue(Reply("ok", thinking="hmm"))
    chat = Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')
    chat('hi', think='x')
    assert fp.last['thinking']['type'] == 'enabled'
    assert Adjustment('effort', "think='x' sent as effort 'high'") in chat.adjustments

def test_think_ignored_without_reasoning(fake_provider):
    fp = fake_provider
    fp.queue("ok")
    chat = Chat('anthropic/claude-3-haiku-20240307', api_base=fp.anthropic_base, api_key='k')  # litellm: no reasoning
    chat('hi', think='l')
    assert 'thinking' not in fp.last and 'think' in kinds(chat)

def test_unknown_model(fake_provider):
    fp = fake_provider
    fp.queue("ok")
    chat = Chat('openai/my-local-model', api_base=fp.openai_base, api_key='k')
    chat('hi')
    assert 'max_tokens' not in fp.last and 'unknown_model' in kinds(chat)

def test_history_repaired(fake_provider):
    fp = fake_provider
    tcq = mk_tc_req("Adding.", [mk_tc(add, a=1, b=2)])
    bad = ["What is 1+2?", tcq, "and now?"]  # a tool call without its result
    chat = Chat('openai/gpt-4o-mini', hist=bad, repair=True, tools=[add], api_base=fp.openai_base, api_key='k')
    assert kinds(chat) == ['history']
    fp.queue("3")
    chat()
    assert 'history' in kinds(chat)  # reported by the turn that sent the repaired history too
    fp.queue("ok"); chat("again")
    assert 'history' not in kinds(chat)

def test_context_shortened(fake_provider):
    fp = fake_provider
    big = ' '.join(map(str, range(200_000)))
    def read_log() -> str:
        "Read the (huge) server log"
        return big
    fp.queue(Reply(tool_calls=[('read_log', {})]), "The log counts up.")
    chat = Chat('openai/gpt-4o-mini', tools=[read_log], fit_context=True, page_results=None, api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        chat("What's in the log?")
    assert 'context' in kinds(chat) and 'shortened' in chat.adjustments[kinds(chat).index('context')].detail

def test_context_window_error_truncates(fake_provider):
    fp = fake_provider
    def read_log() -> str:
        "Read the log"
        return 'line of log\n' * 5000
    fp.queue(Reply(tool_calls=[('read_log', {})]),
             Reply(status=400, error="This model's maximum context length is 128000 tokens. However, your messages resulted in 200000 tokens."),
             "The log was too long.")
    chat = Chat('openai/gpt-4o-mini', tools=[read_log], api_base=fp.openai_base, api_key='k')
    chat("read the log")
    assert 'context' in kinds(chat) and 'exceeded' in chat.adjustments[kinds(chat).index('context')].detail

def test_blank_prompt(proto):
    fp, m, kw = proto
    fp.queue("ok")
    chat = Chat(m, **kw)
    chat('   ')
    assert chat.hist[0]['content'] == '.' and 'blank_prompt' in kinds(chat)

def test_final_prompt(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})]), "3")
    chat = Chat(m, tools=[add], **kw)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        chat('1+2?', max_steps=1)
    assert chat.hist[-2] == _final_prompt and 'final_prompt' in kinds(chat)
    assert not [w for w in ws if w.category is AdjustmentWarning]  # a quiet kind: reported, not warned

def test_cost_limit(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})], usage={'input': 400_000, 'output': 100}), "wrapped up")
    chat = Chat(m, tools=[add], max_cost=0.01, **kw)
    chat("add forever", max_steps=10)
    assert 'cost_limit' in kinds(chat) and 'final_prompt' not in kinds(chat)

def test_adjustments_are_per_turn_and_warned_once(fake_provider):
    fp = fake_provider
    fp.queue("a", "b", "c")
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        chat('hi', prefill='x'); chat('hi', prefill='y')
        assert 'prefill' in kinds(chat)
        chat('hi')
    assert 'prefill' not in kinds(chat)
    assert len([w for w in ws if w.category is AdjustmentWarning]) == 1

# ---- model constants and registrations (parity with the original)

def test_model_constants():
    assert (gpt54, gpt54m) == ('openai/responses/gpt-5.4', 'openai/responses/gpt-5.4-mini')
    assert (codex54, codex54m, codex55, codex53spark) == ('chatgpt/gpt-5.4', 'chatgpt/gpt-5.4-mini', 'chatgpt/gpt-5.5', 'chatgpt/gpt-5.3-codex-spark')

def test_registrations_at_import():
    "After `import lisette`, litellm itself knows the GPT-5.4 routes and accepts search on them (direct litellm calls)"
    for m in (gpt54, gpt54m, codex54, codex54m):
        i = litellm.get_model_info(m)
        assert i['max_output_tokens'] and model_info(m)['supports_web_search'], m
    assert litellm.get_model_info(gpt54)['supports_web_search']
    assert 'web_search_options' in litellm.get_supported_openai_params(model=gpt54)
    assert 'web_search_options' in litellm.get_supported_openai_params(model='gpt-5.4', custom_llm_provider='openai')

def test_temp_default_documented_deviation():
    import inspect
    assert inspect.signature(Chat).parameters['temp'].default is None

def test_adjustments_shown_under_the_response(fake_provider):
    "Adjustments that warn are listed in the response's markdown details; quiet ones (max_tokens filled in) are not"
    fp = fake_provider
    fp.queue('ok', 'ok2')
    chat = Chat('anthropic/claude-sonnet-4-5', temp=0.5, api_base=fp.anthropic_base, api_key='k')
    with warnings.catch_warnings(): warnings.simplefilter('ignore'); r = chat('hi', think='l')
    md = r._repr_markdown_()
    assert "- adjusted: temperature: temp=0.5 not sent" in md and 'max_tokens=' not in md
    assert [a.kind for a in chat.adjustments] == ['temperature', 'max_tokens']
    assert '- adjusted:' not in Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')('hi')._repr_markdown_()

# ---- where the warning points

@pytest.mark.parametrize('stream', [False, True])
def test_adjustment_warning_points_at_the_callers_line(fake_provider, stream):
    "Adjustments are made at different depths of the turn engine (here `_new_turn` and `_request`): each warning names the user's line"
    import inspect
    fp = fake_provider
    fp.queue("ok")
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        at = inspect.currentframe().f_lineno + 1
        r = chat('hi', stream=stream, prefill='Sure', think='l')  # prefill: dropped as the turn starts; think: as the request is built
        if stream: list(r)  # (a stream's turn runs as it is read: its warnings come from here)
    ws = [o for o in w if issubclass(o.category, AdjustmentWarning)]
    assert {str(o.message).split(':')[0] for o in ws} == {'prefill', 'think'}
    assert {(o.filename, o.lineno) for o in ws} == {(__file__, at+1 if stream else at)}
