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

@pytest.mark.parametrize('think', ['l', 'h'])
def test_think_on_magistral_is_a_system_prompt(fake_provider, think):
    """litellm sends Magistral (Mistral's API) no `reasoning_effort`: any level becomes its reasoning system prompt, put
    before the chat's own. It went without a word, as if the effort were sent; it is reported (Mistral Large: said to take none)"""
    fp = fake_provider
    fp.queue("ok", "ok")
    chat = Chat('mistral/magistral-medium-latest', sp='Be brief.', api_base=fp.openai_base, api_key='k')
    chat('hi', think=think)
    sys_ = fp.last['messages'][0]
    assert 'reasoning_effort' not in fp.last and sys_['role']=='system' and sys_['content'].endswith('Be brief.') and '<think>' in sys_['content']
    assert [a.detail for a in chat.adjustments if a.kind=='think'] == [f"think={think!r} sent as litellm's reasoning system prompt (before the chat's own, if any), "
                                                                     "not as an effort: mistral/magistral-medium-latest takes no effort level, so every level is the same request"]
    fp.queue("ok")
    other = Chat('mistral/magistral-medium-latest', sp='Be brief.', api_base=fp.openai_base, api_key='k')
    other('hi', think='h' if think=='l' else 'l')
    assert fp.requests[-1].body == fp.requests[-2].body  # the other level: the same request, as the note says
    large = Chat('mistral/mistral-large-latest', api_base=fp.openai_base, api_key='k')
    large('hi', think=think)
    assert 'reasoning_effort' not in fp.last and [a.detail for a in large.adjustments if a.kind=='think'] == [f"think={think!r} ignored: litellm says mistral/mistral-large-latest does not reason"]

def test_tools_for_a_model_without_tools(fake_provider, monkeypatch):
    """Perplexity takes no tools: litellm refused the request with an UnsupportedParamsError from deep inside, or, with
    drop_params, sent it without them, without a word. Now a clear error before the request; with drop_params, reported"""
    fp = fake_provider
    chat = Chat('perplexity/sonar', tools=[add], api_base=fp.openai_base, api_key='k')
    with pytest.raises(ValueError, match=r"perplexity/sonar takes no tools .*Make the chat without tools=.*litellm.drop_params=True"): chat('hi')
    assert fp.requests == []
    monkeypatch.setattr(litellm, 'drop_params', True)
    fp.queue('ok')
    chat = Chat('perplexity/sonar', tools=[add], api_base=fp.openai_base, api_key='k')
    chat('hi')
    assert 'tools' not in fp.last
    assert [a.detail for a in chat.adjustments if a.kind=='tools'] == ["tools left out: litellm says perplexity/sonar takes none, and drop_params is set (the model answers without them)"]

def test_refused_tools_leave_the_chat_as_it_was(fake_provider):
    """A turn refused for tools the model takes none of is never sent: it left its adjustments (prefill dropped, think
    ignored, max_tokens filled in) in `chat.adjustments`, warned of them before the ValueError. Now the chat is as it was"""
    fp = fake_provider
    fp.queue('ok', 'ok')
    chat = Chat('perplexity/sonar', api_base=fp.openai_base, api_key='k')
    chat('hi')
    before, hist = list(chat.adjustments), list(chat.hist)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        with pytest.raises(ValueError, match='perplexity/sonar takes no tools'): chat('again', tools=[add], think='l', prefill='Sure')
    assert [str(w.message) for w in ws] == []
    assert (chat.adjustments, chat.hist, len(fp.requests)) == (before, hist, 1)
    chat('again')
    assert [m['content'] for m in fp.last['messages']] == ['hi', 'ok', 'again'] and not {'prefill', 'think'} & set(kinds(chat))  # (the refused turn's are gone)

def test_tools_dropped_by_other_means_are_sent_without_them(fake_provider):
    "litellm drops tools it is told to drop per call (additional_drop_params), and a Router's deployment by its own drop_params: sent, not refused (the first reported)"
    fp = fake_provider
    fp.queue('ok')
    chat = Chat('perplexity/sonar', tools=[add], api_base=fp.openai_base, api_key='k')
    chat('hi', additional_drop_params=['tools'])
    assert 'tools' not in fp.last and [a.kind for a in chat.adjustments if a.kind=='tools'] == ['tools']
    fp.queue('ok')
    r = litellm.Router(model_list=[{'model_name': 'g', 'litellm_params': {'model': 'perplexity/sonar', 'api_base': fp.openai_base, 'api_key': 'k', 'drop_params': True}}])
    chat = Chat('g', tools=[add], completefunc=r.completion)
    assert contents(chat('hi')).content == 'ok' and 'tools' not in fp.last

def test_unknown_model(fake_provider):
    fp = fake_provider
    fp.queue("ok")
    chat = Chat('openai/my-local-model', api_base=fp.openai_base, api_key='k')
    chat('hi')
    assert 'max_tokens' not in fp.last and 'unknown_model' in kinds(chat)

@pytest.mark.parametrize('model', ['fireworks_ai/accounts/fireworks/routers/auto', 'gemini/gemini-3-pro-preview'])
def test_placeholder_model_entry_is_reported(fake_provider, model):
    "A model litellm lists as a placeholder (no price, no token limit) is said to be one: its replies count $0 and no window comes from it, which the user must know"
    from lisette.providers import placeholder_info, model_info
    if not placeholder_info(model_info(model)): pytest.skip(f"{model} is no placeholder on this litellm")
    fp = fake_provider
    fp.queue("ok")
    base = fp.gemini_base if model.startswith('gemini/') else fp.openai_base
    chat = Chat(model, api_base=base, api_key='k')
    with pytest.warns(UserWarning, match='placeholder'): chat('hi')
    assert [a for a in chat.adjustments if a.kind=='unknown_model' and 'no price' in a.detail] and chat.use.cost == 0

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

# ---- usage the provider did not send

def _sse(*evs): return b''.join(b'data: '+json.dumps(e).encode()+b'\n\n' for e in evs)+b'data: [DONE]\n\n'
def _chunk(delta, fin=None): return {'id': 'c1', 'object': 'chat.completion.chunk', 'created': 1, 'model': 'gpt-4o',
                                     'choices': [{'index': 0, 'delta': delta, 'finish_reason': fin}]}
_no_usage_stream = Reply(raw=_sse(_chunk({'role': 'assistant', 'content': 'Hello there, friend'}), _chunk({}, 'stop')),
                         headers={'content-type': 'text/event-stream'})
_no_usage_reply = Reply(raw=json.dumps({'id': 'c1', 'object': 'chat.completion', 'created': 1, 'model': 'gpt-4o', 'choices': [
    {'index': 0, 'message': {'role': 'assistant', 'content': 'Hello there'}, 'finish_reason': 'stop'}]}).encode(), headers={'content-type': 'application/json'})

def _usage_notes(chat): return [a.detail for a in chat.adjustments if a.kind=='usage']

@pytest.mark.parametrize('asyn', [False, True])
def test_streamed_usage_estimated_by_litellm_is_reported(fake_provider, asyn):
    "A server that ignores `stream_options` streams no usage: litellm's made-up counts are kept, and said to be an estimate"
    import asyncio
    fp = fake_provider
    fp.queue(_no_usage_stream)
    kw = dict(api_base=fp.openai_base, api_key='k')
    if asyn:
        chat = AsyncChat('openai/gpt-4o', **kw)
        async def run(): return [o async for o in await chat('hi', stream=True)]
        asyncio.run(run())
    else: chat = Chat('openai/gpt-4o', **kw); list(chat('hi', stream=True))
    assert chat.hist[-1]['content'] == 'Hello there, friend'
    assert chat.use.prompt_tokens > 0 and chat.use.completion_tokens > 0  # (litellm's estimate, kept: better than nothing)
    notes = _usage_notes(chat)
    assert len(notes)==1 and "streamed no token counts" in notes[0] and "litellm's estimate" in notes[0], chat.adjustments

def test_reply_without_usage_is_reported(fake_provider):
    "A reply with no usage at all counts as 0 tokens and $0, and says so"
    fp = fake_provider
    fp.queue(_no_usage_reply)
    chat = Chat('openai/gpt-4o', api_base=fp.openai_base, api_key='k')
    chat('hi')
    assert (chat.use.prompt_tokens, chat.use.cost) == (0, 0)
    notes = _usage_notes(chat)
    assert len(notes)==1 and "sent no token counts" in notes[0] and "unknown" in notes[0], chat.adjustments

@pytest.mark.parametrize('stream', [False, True])
def test_usage_sent_is_not_reported(proto, stream):
    "Replies that carry usage (every protocol, streamed or not) make no usage adjustment"
    fp, model, kw = proto
    fp.queue(Reply('Hello there', usage=dict(input=7, output=2)))
    chat = Chat(model, **kw)
    r = chat('hi', stream=stream)
    if stream: list(r)
    assert (chat.use.prompt_tokens, chat.use.completion_tokens, _usage_notes(chat)) == (7, 2, [])

# ---- message fields a server refuses

_groq_words = ("'messages.{i}' : for 'role:assistant' the following must be satisfied[('messages.{i}' : property "
               "'reasoning_content' is unsupported)]")  # Groq's words, as clients replaying a reasoning turn report them

def _like_groq(body, path):
    "A server that refuses `reasoning_content` on assistant messages, as Groq's OpenAI-compatible endpoint does"
    bad = [i for i,m in enumerate(body.get('messages') or []) if m.get('role')=='assistant' and 'reasoning_content' in m]
    return Reply(status=400, error=_groq_words.format(i=bad[0])) if bad else Reply('ok')

@pytest.fixture
def refusals(monkeypatch):
    "Start with no server known to refuse a field (what `learn_refusal` learns lasts the process)"
    import lisette.providers as P
    monkeypatch.setattr(P, '_refused', {})
    return P._refused

def _assistants(body): return [m for m in body['messages'] if m['role']=='assistant']

@pytest.mark.parametrize('stream', [False, True])
def test_refused_reasoning_is_left_out_and_the_request_sent_again(fake_provider, refusals, stream):
    "A server that refuses `reasoning_content` gets the request again without it, this turn and later ones, and the history keeps it"
    fp = fake_provider
    fp.queue(Reply('Four', thinking='Two and two make four.'))
    fp.respond_with(_like_groq)
    chat = Chat('openai/qwen/qwen3-32b', api_base=fp.openai_base, api_key='k')
    for q in ('2+2?', 'Thanks', 'Bye'):
        r = chat(q, stream=stream)
        if stream: list(r)
    assert len(fp.requests) == 4 and 'reasoning_content' in _assistants(fp.requests[1].body)[0]  # the refused one, then its re-send
    assert all('reasoning_content' not in m for m in _assistants(fp.requests[-1].body)) and len(_assistants(fp.requests[-1].body)) == 2
    assert chat.hist[1].reasoning_content == 'Two and two make four.' and chat.hist[-1].content == 'ok'
    notes = [a.detail for a in chat.adjustments if a.kind=='refused']
    assert len(notes) == 1 and '`reasoning_content` left out' in notes[0] and 'is unsupported' in notes[0]

def test_refusal_learnt_by_another_chat_meanwhile(fake_provider, refusals):
    "Two chats on the same server get the 400 at once: the one whose request went before the other learnt the field sends again too, instead of raising"
    import asyncio, time
    fp = fake_provider
    fp.respond_with(lambda body, path: (time.sleep(0.2), _like_groq(body, path))[1])  # (both requests in flight at once)
    hist = [{'role': 'user', 'content': '2+2?'}, {'role': 'assistant', 'content': 'Four', 'reasoning_content': 'Two and two make four.'}]
    chats = [AsyncChat('openai/qwen/qwen3-32b', hist=[dict(m) for m in hist], api_base=fp.openai_base, api_key='k') for _ in range(2)]
    async def both(): return await asyncio.gather(*(c('Thanks') for c in chats))
    with warnings.catch_warnings(): warnings.simplefilter('ignore'); res = asyncio.run(both())
    assert [contents(r).content for r in res] == ['ok', 'ok'] and len(fp.requests) == 4

def test_refused_reasoning_in_a_tool_loop(fake_provider, refusals):
    "The refusal comes mid-turn, on the request with the tool results: the turn goes on, every call answered"
    fp = fake_provider
    fp.queue(Reply(thinking='I should add.', tool_calls=[('add', {'a': 2, 'b': 3})]))
    fp.respond_with(lambda body, path: _like_groq(body, path) if any('reasoning_content' in m for m in _assistants(body)) else Reply('5'))
    chat = Chat('openai/qwen/qwen3-32b', tools=[add], api_base=fp.openai_base, api_key='k')
    chat('2+3?')
    assert len(fp.requests) == 3 and chat.hist[-1].content == '5' and check_hist(chat.hist) is None
    assert _assistants(fp.requests[-1].body)[0]['tool_calls'][0]['function']['name'] == 'add'
    assert 'refused' in kinds(chat)

@pytest.mark.parametrize('words', ["The reasoning_content in the thinking mode must be passed back to the API.",  # DeepSeek: wants it, does not refuse it
                                   "property 'tool_choice' is unsupported"])  # not a message field we may leave out
def test_other_400s_are_not_taken_for_a_refusal(fake_provider, refusals, words):
    fp = fake_provider
    fp.queue(Reply('Four', thinking='Two and two.'), Reply(status=400, error=words), 'never sent')
    chat = Chat('openai/qwen/qwen3-32b', api_base=fp.openai_base, api_key='k')
    chat('2+2?')
    with pytest.raises(litellm.BadRequestError): chat('Thanks')
    assert len(fp.requests) == 2 and len(chat.hist) == 2 and refusals == {}

def test_refusal_is_learnt_for_that_model_only(fake_provider, refusals):
    "Another model behind the same server (a gateway) may want the field: what one model's refusal taught is not applied to it"
    fp = fake_provider
    fp.queue(Reply('Four', thinking='Two and two.'))
    fp.respond_with(_like_groq)
    chat = Chat('openai/qwen/qwen3-32b', api_base=fp.openai_base, api_key='k')
    chat('2+2?'); chat('Thanks')
    other = Chat('openai/deepseek-reasoner', hist=chat.hist[:2], api_base=fp.openai_base, api_key='k')
    fp.respond_with(None); fp.queue('ok')
    other('Thanks')
    assert _assistants(fp.last)[0]['reasoning_content'] == 'Two and two.' and 'refused' not in kinds(other)

def test_refusal_forgotten_when_the_resend_fails_too(fake_provider, refusals):
    "Sent again without the field, the request fails all the same: the field was not the cause, and is not left out of later requests"
    fp = fake_provider
    fp.queue(Reply('Four', thinking='Two and two.'), Reply(status=400, error=_groq_words.format(i=1)),
             Reply(status=400, error="max_tokens is too large: 999999999. This model supports at most 40960 completion tokens"), 'ok')
    chat = Chat('openai/qwen/qwen3-32b', api_base=fp.openai_base, api_key='k')
    chat('2+2?')
    with pytest.raises(litellm.BadRequestError, match='max_tokens is too large'): chat('Thanks', max_tokens=999999999)
    assert len(fp.requests) == 3 and not any(refusals.values())
    chat('Thanks')
    assert 'reasoning_content' in _assistants(fp.last)[0]

def test_prefill_streamed_once_when_the_request_is_sent_again(fake_provider, refusals):
    "A streamed turn with a prefill whose first request is refused: the request goes again, the prefill is shown once"
    fp = fake_provider
    fp.queue(Reply('Four', thinking='Two and two.'))
    fp.respond_with(_like_groq)
    chat = Chat('deepseek/deepseek-chat', api_base=fp.openai_base, api_key='k')  # (a model litellm says takes a prefill)
    chat('2+2?')
    from litellm import ModelResponseStream
    out = ''.join(o.choices[0].delta.content or '' for o in chat('And 3+3?', stream=True, prefill='Six, ') if isinstance(o, ModelResponseStream) and o.choices)
    assert len(fp.requests) == 3 and out.count('Six, ') == 1, out
