"Switching models mid-chat: a conversation with tools, thinking and web search moves Anthropic -> Gemini -> OpenAI Responses -> OpenAI Chat Completions -> Anthropic, every request accepted by the strict fake provider, every change reported."
import copy, json, re, warnings
import pytest
from lisette import Chat, AsyncChat, contents
from lisette.testing import Reply
from lisette.switch import fit_history
from lisette.tools import _tc_id

def lookup(key:str) -> str:
    "Look up a key"
    return f"value of {key}"

LEGS = [('anthropic/claude-sonnet-4-5', 'anthropic_base'), ('gemini/gemini-3-flash-preview', 'gemini_base'),
        ('openai/responses/gpt-5.4', 'responses_base'), ('openai/gpt-5-mini', 'openai_base'), ('anthropic/claude-sonnet-4-5', 'anthropic_base')]

def test_scripted_switch_round_trip(fake_provider):
    fp = fake_provider
    assert fp.strict
    chat = Chat(LEGS[0][0], tools=[lookup], api_base=fp.anthropic_base, api_key='k', cache=True)
    reports = []
    for k,(m,base) in enumerate(LEGS):
        chat.model, chat.api_base = m, getattr(fp, base)
        ws = [dict(query='lisette', url='https://example.org', title='Ex', cited_text='lisette is a library')] if k==0 else None
        fp.queue(Reply(f'Step {k}.', tool_calls=[('lookup', {'key': f'k{k}'})], thinking=f'think {k}', signature=f'sig{k}', web_search=ws),
                 Reply(f'Done {k}.', thinking=f'more {k}', signature=f'sigb{k}'))
        n, adj0 = len(fp.requests), getattr(chat, 'adjustments', None)
        n0 = len(adj0) if adj0 is not None else 0
        before = copy.deepcopy([json.dumps(h if isinstance(h, dict) else h.model_dump(), sort_keys=True, default=str) for h in chat.hist])
        r = chat(f'Question {k}', think='m')
        assert r.choices[0].message.content == f'Done {k}.', (k, m)
        assert [q.proto for q in fp.requests[n:]] == [fp.requests[n].proto]*2 and len(fp.requests)==n+2, (k, m)
        now = [json.dumps(h if isinstance(h, dict) else h.model_dump(), sort_keys=True, default=str) for h in chat.hist[:len(before)]]
        # the history the user holds keeps every part (only cache checkpoints move, as on any Anthropic turn)
        strip = lambda s: s.replace(', "cache_control": {"type": "ephemeral"}', '')
        assert [strip(o) for o in now] == [strip(o) for o in before] or k in (0, 4)
        adj = getattr(chat, 'adjustments', [])
        reports.append([d for kd,d in (adj[n0:] if adj is adj0 else adj) if kd=='switch'])  # this turn's (a new list per turn, or one list)
    an, gm, rs, oa, back = reports
    assert an == []
    # Anthropic -> Gemini: the signed thinking, the server-side search call and the cache checkpoints of message 1
    assert "message 1: thinking from Anthropic left out (Gemini cannot verify it)" in gm
    assert any(d.startswith('message 1: server-side web_search call srvtoolu_') for d in gm)
    assert any('cache checkpoints left out' in d for d in gm)
    # -> OpenAI Responses: Anthropic's and Gemini's thinking left out, Gemini's thought signature out of its tool-call id
    assert any(d.startswith('message 5: thinking from Gemini left out') for d in rs)
    assert any('__thought__' in d and 'sent as call_' in d for d in rs)
    assert any(d.startswith('message 1: thinking from Anthropic left out') for d in rs)
    # -> OpenAI Chat Completions: the Responses reasoning items left out as well
    assert any('thinking from OpenAI Responses left out' in d for d in oa)
    # back on Anthropic: its own thinking goes again; the others' reasoning is left out
    assert not any(d.startswith('message 1: thinking') for d in back)
    assert any('thinking from Gemini left out (Anthropic' in d for d in back)
    sent = fp.requests[-1].body['messages']
    assert sent[1]['content'][0] == {'type': 'thinking', 'thinking': 'think 0', 'signature': 'sig0'}
    assert any(b.get('type')=='server_tool_use' for b in sent[1]['content'])  # Anthropic gets its search back

def test_without_switch_requests_fail(fake_provider):
    """The server-side search call of an Anthropic turn is what Gemini, Responses and Chat Completions reject without the
    switch, where litellm lists it among the tool calls (up to 1.106; from 1.110 it keeps it in provider_specific_fields)"""
    fp = fake_provider
    chat = Chat(LEGS[0][0], tools=[lookup], api_base=fp.anthropic_base, api_key='k')
    fp.queue(Reply('Searching.', tool_calls=[('lookup', {'key': 'a'})], web_search=[dict(query='q', url='https://x.org', title='X', cited_text='x')]), 'ok')
    chat('Go')
    from litellm import completion
    listed = [_tc_id(tc) for tc in chat.hist[1]['tool_calls'] if _tc_id(tc).startswith('srvtoolu_')]
    assert listed or chat.hist[1]['provider_specific_fields']['server_tool_calls']
    for m, base in LEGS[1:4]:
        fp.queue('fine')
        if listed:
            with pytest.raises(Exception): completion(model=m, messages=chat.hist+[{'role': 'user', 'content': 'Next'}], api_base=getattr(fp, base), api_key='k')
        msgs, notes = fit_history(chat.hist+[{'role': 'user', 'content': 'Next'}], m)
        fp.reset(); fp.queue('fine')
        completion(model=m, messages=msgs, api_base=getattr(fp, base), api_key='k')  # accepted once fitted
        assert any('server-side web_search' in d for _,d in notes)

def test_same_provider_untouched(fake_provider):
    fp = fake_provider
    chat = Chat(LEGS[0][0], tools=[lookup], api_base=fp.anthropic_base, api_key='k', cache=True)
    fp.queue(Reply('s', tool_calls=[('lookup', {'key': 'a'})], thinking='t', signature='s1'), Reply('d', thinking='u', signature='s2'))
    chat('Go', think='m')
    msgs = chat._prep_msg(None)
    out, notes = fit_history(msgs, chat.model)
    assert notes == [] and all(a is b for a,b in zip(out, msgs))
    assert not [a for a in chat.__dict__.get('adjustments', []) if a[0]=='switch']

def test_gemini_ids_to_openai(fake_provider):
    "Gemini's tool-call ids carry its thought signature: on OpenAI the call and its result get the same short id, the history keeps Gemini's"
    fp = fake_provider
    chat = Chat(LEGS[1][0], tools=[lookup], api_base=fp.gemini_base, api_key='k')
    fp.queue(Reply('Looking.', tool_calls=[('lookup', {'key': 'a'})], thinking='plan'), 'Found.')
    chat('Look it up', think='m')
    tc_id = _tc_id(chat.hist[1]['tool_calls'][0])
    assert '__thought__' in tc_id
    chat.model, chat.api_base = 'openai/gpt-5-mini', fp.openai_base
    fp.queue('done')
    chat('And now?')
    body = fp.requests[-1].body['messages']
    ids = [tc['id'] for m in body for tc in m.get('tool_calls') or []] + [m['tool_call_id'] for m in body if m['role']=='tool']
    assert len(ids)==2 and len(set(ids))==1 and '__thought__' not in ids[0] and len(ids[0])<=40
    assert _tc_id(chat.hist[1]['tool_calls'][0]) == tc_id  # the history keeps Gemini's id
    assert any(d.startswith('message 1: tool call id') for k,d in chat.adjustments if k=='switch')

@pytest.mark.parametrize('target', ['openai/gpt-5-mini', 'deepseek/deepseek-chat', 'anthropic/claude-sonnet-4-5'])
def test_gemini_call_signature_not_sent_elsewhere(fake_provider, target):
    "A Gemini 3 tool call's thought signature, which litellm also keeps in the call's provider fields, goes to no other provider (strict servers refuse the unknown field); the history keeps it (helper-37 B1)"
    fp = fake_provider
    chat = Chat('gemini/gemini-3-flash-preview', tools=[lookup], api_base=fp.gemini_base, api_key='k')
    fp.queue(Reply(tool_calls=[('lookup', {'key': 'a'})]), 'Found.')
    chat('Look it up')
    held = chat.hist[1]['tool_calls'][0] if isinstance(chat.hist[1], dict) else chat.hist[1].tool_calls[0]
    sig = (held['provider_specific_fields'] if isinstance(held, dict) else held.provider_specific_fields)['thought_signature']
    chat.model, chat.api_base = target, fp.anthropic_base if target.startswith('anthropic') else fp.openai_base
    fp.queue('done')
    chat('And now?')
    sent = json.dumps(fp.requests[-1].body)
    assert sig not in sent
    chat.model, chat.api_base = 'gemini/gemini-3-flash-preview', fp.gemini_base
    fp.queue('back')
    chat('Back?')
    assert sig in json.dumps(fp.requests[-1].body)  # Gemini gets it again

def test_long_plain_history_switch_strips_checkpoints(fake_provider):
    "A long plain-text history cached on Claude, then sent to OpenAI: the checkpoints Chat placed (on copies) are found and left out"
    fp = fake_provider
    hist = [{'role': ('user', 'assistant')[i%2], 'content': f'message {i}'} for i in range(2000)]
    kept = copy.deepcopy(hist)
    chat = Chat('anthropic/claude-sonnet-4-5', hist=hist, api_base=fp.anthropic_base, api_key='k', cache=True, cache_idxs=[0, -2, -1])
    fp.queue('one', 'two', 'three')
    chat('a'); chat('b')
    assert hist == kept  # the messages passed in keep their form: checkpoints go on copies
    assert sum('cache_control' in json.dumps(m if isinstance(m, dict) else m.model_dump()) for m in chat.hist) == 3
    chat.model, chat.api_base = 'openai/gpt-5-mini', fp.openai_base
    chat('c')
    assert 'cache_control' not in json.dumps(fp.requests[-1].body)
    assert any(k == 'switch' and 'cache checkpoints left out' in d for k,d in chat.adjustments)

def test_replaced_message_is_read_again(fake_provider):
    "A message of a long history replaced between turns is looked at again (paging and fitting read only new or replaced messages)"
    fp = fake_provider
    hist = [{'role': ('user', 'assistant')[i%2], 'content': f'message {i}'} for i in range(1000)]
    chat = Chat('anthropic/claude-sonnet-4-5', hist=hist, api_base=fp.anthropic_base, api_key='k')
    fp.queue('one', 'two')
    chat('a')
    # an assistant message with Anthropic's signed thinking, put in place of a plain one: OpenAI cannot take the thinking
    chat.hist[501] = {'role': 'assistant', 'content': 'message 501', 'thinking_blocks': [{'type': 'thinking', 'thinking': 'hmm', 'signature': 'sig'}]}
    chat.model, chat.api_base = 'openai/gpt-5-mini', fp.openai_base
    chat('b')
    assert 'thinking' not in json.dumps(fp.requests[-1].body['messages'][501])
    assert any(k == 'switch' and d.startswith('message 501: thinking from Anthropic') for k,d in chat.adjustments)

def test_refusal_reaches_every_protocol(proto):
    "An OpenAI refusal in the history: sent as is to OpenAI, as text (reported) elsewhere, where litellm would drop the whole message"
    fp, model, kw = proto
    chat = Chat(model, hist=[{'role': 'user', 'content': 'Do the bad thing'},
                             {'role': 'assistant', 'content': [{'type': 'refusal', 'refusal': "I can't help with that."}]}], **kw)
    fp.queue('Sure.')
    chat('Something else, then')
    assert "I can't help with that." in json.dumps(fp.last)                   # the assistant's turn was sent
    switched = [d for k,d in chat.adjustments if k=='switch']
    assert bool(switched) == (model.split('/')[0] not in ('openai',)), switched
    assert chat.hist[1]['content'][0]['type'] == 'refusal'                    # the history keeps what the model sent

def _spoken_reply(transcript, expires_at):
    "An OpenAI Chat Completions reply with audio output and no text, as OpenAI sends it"
    return Reply(raw=json.dumps({'id': 'chatcmpl-a1', 'object': 'chat.completion', 'created': 1, 'model': 'gpt-4o-audio-preview',
        'choices': [{'index': 0, 'finish_reason': 'stop', 'message': {'role': 'assistant', 'content': None, 'refusal': None,
            'audio': {'id': 'audio_abc', 'data': 'UklGRg==', 'expires_at': expires_at, 'transcript': transcript}}}],
        'usage': {'prompt_tokens': 10, 'completion_tokens': 20, 'total_tokens': 30}}).encode())

def test_spoken_reply_round_trip(fake_provider):
    "An audio reply is kept (not made '.'), goes back to OpenAI as a reference to its audio, and to Anthropic as its transcript"
    import time
    fp = fake_provider
    chat = Chat('openai/gpt-4o-audio-preview', api_base=fp.openai_base, api_key='k')
    fp.queue(_spoken_reply('Hello there!', int(time.time())+3600), 'fine', 'also fine')
    r = chat('Say hi', modalities=['text', 'audio'], audio={'voice': 'alloy', 'format': 'wav'})
    assert chat.hist[-1].content is None and chat.hist[-1].audio.transcript == 'Hello there!'
    assert '🔊 Hello there!' in r._repr_markdown_()
    chat('Again')
    assert fp.last['messages'][1] == {'role': 'assistant', 'audio': {'id': 'audio_abc'}}   # OpenAI's own reference, without the data
    chat.model, chat.api_base = 'anthropic/claude-sonnet-4-5', fp.anthropic_base
    chat('And now?')
    assert fp.last['messages'][1] == {'role': 'assistant', 'content': [{'type': 'text', 'text': 'Hello there!'}]}
    assert any('audio reply sent as its transcript (Anthropic takes no audio replies)' in d for k,d in chat.adjustments if k=='switch')
    assert chat.hist[1].audio.data == 'UklGRg=='                                               # the history keeps the audio

def test_expired_spoken_reply_goes_as_text(fake_provider):
    fp = fake_provider
    chat = Chat('openai/gpt-4o-audio-preview', api_base=fp.openai_base, api_key='k')
    fp.queue(_spoken_reply('Old news.', 1), 'ok')
    chat('Say something')
    chat('Go on')
    assert fp.last['messages'][1] == {'role': 'assistant', 'content': 'Old news.'}
    assert any('OpenAI no longer keeps it' in d for k,d in chat.adjustments if k=='switch')

def test_spoken_reply_with_checkpoint_keeps_its_words(fake_provider):
    "A cache checkpoint on a spoken reply (content None) puts its transcript in the text part, not '.'"
    import time
    fp = fake_provider
    chat = Chat('openai/gpt-4o-audio-preview', api_base=fp.openai_base, api_key='k')
    fp.queue(_spoken_reply('Hello there!', int(time.time())+3600), 'ok')
    chat('Say hi')
    chat.model, chat.api_base, chat.cache, chat.cache_idxs = 'anthropic/claude-sonnet-4-5', fp.anthropic_base, True, [-1, -2]
    chat('And now?')
    assert fp.last['messages'][1]['content'][0]['text'] == 'Hello there!'

def _spoken_stream(parts, expires_at):
    "An OpenAI Chat Completions stream of a spoken reply: transcript deltas, the audio data, then its id and expiry"
    base = {'id': 'chatcmpl-s1', 'object': 'chat.completion.chunk', 'created': 1, 'model': 'gpt-4o-audio-preview'}
    ch = lambda delta, fr=None: {**base, 'choices': [{'index': 0, 'delta': delta, 'finish_reason': fr}]}
    cs = [ch({'role': 'assistant', 'content': None, 'refusal': None, 'audio': {'id': 'audio_s1', 'transcript': ''}})]
    cs += [ch({'audio': {'transcript': t}}) for t in parts] + [ch({'audio': {'data': 'UklGRg=='}}), ch({'audio': {'id': 'audio_s1', 'expires_at': expires_at}})]
    cs += [ch({}, 'stop'), {**base, 'choices': [], 'usage': {'prompt_tokens': 10, 'completion_tokens': 20, 'total_tokens': 30}}]
    return Reply(raw=b''.join(b'data: ' + json.dumps(c).encode() + b'\n\n' for c in cs) + b'data: [DONE]\n\n')

@pytest.mark.parametrize('use_async', [False, True])
def test_streamed_spoken_reply(fake_provider, use_async):
    "A streamed spoken reply builds (litellm 1.110 failed at the end of the stream) and goes back as OpenAI's reference"
    import asyncio, time
    fp = fake_provider
    kw = dict(api_base=fp.openai_base, api_key='k')
    fp.queue(_spoken_stream(['Hello', ' there!'], int(time.time())+3600), 'ok')
    audio = dict(modalities=['text', 'audio'], audio={'voice': 'alloy', 'format': 'pcm16'})
    if use_async:
        async def go():
            chat = AsyncChat('openai/gpt-4o-audio-preview', **kw)
            items = [o async for o in await chat('Say hi', stream=True, **audio)]
            await chat('Again')
            return chat, items
        chat, items = asyncio.run(go())
    else:
        chat = Chat('openai/gpt-4o-audio-preview', **kw)
        items = list(chat('Say hi', stream=True, **audio))
        chat('Again')
    assert chat.hist[1].audio.transcript == 'Hello there!' and not chat.hist[1].content
    assert fp.last['messages'][1] == {'role': 'assistant', 'audio': {'id': 'audio_s1'}}

_PROBE_VS_STREAM = """
import os, sys, time; os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'; sys.path.insert(0, sys.argv[1])
import litellm
from test_switch import _spoken_stream
from lisette.testing import FakeProvider
from lisette.providers import _audio_stream_breaks
with FakeProvider() as fp:
    fp.queue(_spoken_stream(['Hello', ' there!'], int(time.time())+3600))
    chunks = list(litellm.completion('openai/gpt-4o-audio-preview', [{'role': 'user', 'content': 'Say hi'}], api_base=fp.openai_base, api_key='k',
                                     stream=True, modalities=['text', 'audio'], audio={'voice': 'alloy', 'format': 'pcm16'}))
try: fails = litellm.stream_chunk_builder(chunks).choices[0].message.audio.transcript != 'Hello there!'
except Exception: fails = True
print(_audio_stream_breaks(), fails)
"""

def test_audio_probe_says_what_litellm_does():
    """lisette's probe (does litellm's builder fail on a streamed spoken reply?) answers as litellm does on a real one, bare
    litellm in a process of its own (no mend installed). With litellm 1.106.2 its OpenAI SDK has no `ChoiceDeltaAudio`:
    the probe failed to build its chunks and said litellm fails, which it does not"""
    import os, subprocess, sys
    p = subprocess.run([sys.executable, '-c', _PROBE_VS_STREAM, os.path.dirname(__file__)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    probe, fails = p.stdout.split()
    assert probe == fails, (probe, fails)

# A call's `model=`: one turn on another model, the chat's own model back afterwards

@pytest.mark.parametrize('m,base', LEGS[1:4])
def test_per_call_model_is_that_models_turn(fake_provider, m, base):
    "A Claude chat with signed thinking asks one question of another provider: fitted history, that model's max_tokens and price"
    fp = fake_provider
    chat = Chat(LEGS[0][0], tools=[lookup], api_base=fp.anthropic_base, api_key='k')
    fp.queue(Reply('s', tool_calls=[('lookup', {'key': 'a'})], thinking='t', signature='s1'), Reply('d', thinking='u', signature='s2'))
    chat('Go', think='m')
    fp.queue(Reply('Looking.', tool_calls=[('lookup', {'key': 'b'})]), Reply('Other.', usage=dict(input=100, output=20)))
    rs = chat('And you?', model=m, api_base=getattr(fp, base), return_all=True)
    assert contents(rs[-1]).content == 'Other.' and chat.model == LEGS[0][0]
    other = Chat(m)
    assert [q.proto for q in fp.requests[-2:]] == [fp.requests[-1].proto]*2 != ['anthropic']*2  # both of the loop's requests
    b = fp.requests[-1].body
    sent = b.get('max_tokens') or b.get('max_completion_tokens') or b.get('max_output_tokens') or b['generationConfig']['max_output_tokens']
    assert sent == other._max_out(other._info)[0] != 64_000  # that model's maximum output, not Claude's
    assert any(k=='switch' and 'thinking from Anthropic left out' in d for k,d in chat.adjustments)
    priced = sum(other._count_use(r)[0].cost for r in rs if hasattr(r, 'usage'))  # what the replies cost on their own model
    assert chat.last_use.cost == pytest.approx(priced) and chat.last_use.cost > 0
    fp.queue('Back.')
    chat('Back to you')
    assert fp.requests[-1].proto == 'anthropic'
    assert fp.requests[-1].body['messages'][1]['content'][0] == {'type': 'thinking', 'thinking': 't', 'signature': 's1'}

def test_per_call_model_set_back_after_failure_and_closed_stream(fake_provider):
    fp = fake_provider
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k', retries=0)
    fp.queue(Reply(error='boom', status=400))
    with pytest.raises(Exception): chat('Hi', model='openai/gpt-4.1-nano')
    assert chat.model == 'openai/gpt-4o-mini' and fp.last['model'] == 'gpt-4.1-nano'
    fp.queue(Reply('a long answer', chunks=5))
    g = chat('Hi', model='openai/gpt-4.1-nano', stream=True)
    next(g)
    assert chat.model == 'openai/gpt-4.1-nano'  # the turn's, while it runs
    g.close()
    assert chat.model == 'openai/gpt-4o-mini'

def test_per_call_model_async_stream(fake_provider):
    import asyncio
    fp = fake_provider
    chat = AsyncChat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')
    fp.queue(Reply('Streamed from Gemini.', chunks=3))
    async def go(): return [o async for o in await chat('Hi', model='gemini/gemini-3-flash-preview', api_base=fp.gemini_base, stream=True)]
    asyncio.run(go())
    assert fp.requests[-1].proto == 'gemini' and chat.model == 'anthropic/claude-sonnet-4-5'
    g = Chat('gemini/gemini-3-flash-preview')
    assert fp.last['generationConfig']['max_output_tokens'] == g._max_out(g._info)[0] != 64_000  # Gemini's, not Claude's
    assert chat.hist[-1].content == 'Streamed from Gemini.'

def test_per_call_model_decided_when_the_turn_runs(fake_provider):
    "A stream made while another `model=` turn runs (chat.model already the call's) still runs as that model's turn"
    fp = fake_provider
    chat = Chat('anthropic/claude-sonnet-4-5', api_key='k')
    kw = dict(model='openai/gpt-4o-mini', api_base=fp.openai_base, stream=True)
    fp.queue(Reply('one two three', chunks=3), Reply('four five', chunks=2))
    g1 = chat('first', **kw); next(g1)
    g2 = chat('second', **kw)
    for _ in g1: pass
    during = {chat.model for _ in g2}
    assert during == {'openai/gpt-4o-mini'} and chat.model == 'anthropic/claude-sonnet-4-5'
    assert [q.body['max_tokens'] for q in fp.requests] == [16384]*2

def test_tool_moving_the_model_in_a_per_call_turn(fake_provider):
    "A tool that sets chat.model during a `model=` turn moves the turn's later requests there, and the chat keeps it"
    fp = fake_provider
    chat = None
    def switch() -> str:
        "Switch model"
        chat.model = 'openai/gpt-4o'; return 'switched'
    chat = Chat('openai/gpt-4o-mini', tools=[switch], api_base=fp.openai_base, api_key='k')
    fp.queue(Reply('', tool_calls=[('switch', {})]), 'done')
    chat('go', model='openai/gpt-4.1-nano')
    assert [q.body['model'] for q in fp.requests] == ['gpt-4.1-nano', 'gpt-4o'] and chat.model == 'openai/gpt-4o'
    assert fp.requests[1].body['max_tokens'] == 16384  # gpt-4o's

def test_model_none_is_the_chats(fake_provider):
    fp = fake_provider
    fp.queue('hi')
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    chat('Hi', model=None)
    assert fp.last['model'] == 'gpt-4o-mini'

def test_plain_calls_shortcut_agrees_with_the_full_test():
    "`_needs` reads plain client-call messages in a shortcut: for every provider it must answer as `_needs_fit` does"
    import itertools
    from litellm import Message
    from lisette.switch import _needs, _needs_fit, _memo
    from lisette.history import _plain_calls
    from lisette.tools import mk_tc_req, mk_tc
    ids = ['toolu_01abc', 'call_' + 'x'*40, 'a.b:c', 'fc1__thought__c2lnbmF0dXJl', 'srvtoolu_1']
    args = ['{"a": 1}', '[1, 2]', '{bad', '', '"s"']
    msgs = []
    for tid, a in itertools.product(ids, args):
        m = mk_tc_req('Let me look', [mk_tc('lookup', key='k')])
        m.tool_calls[0].id, m.tool_calls[0].function.arguments = tid, a
        msgs.append(m)
        m2 = Message(**{**m.model_dump(), 'provider_specific_fields': {'refusal': None}})  # litellm 1.106's echo
        msgs.append(m2)
    assert sum(_plain_calls(m) is not None and _plain_calls(m)[1] is not None for m in msgs) > len(msgs)//2  # the shortcut is taken
    for m, kind, cache, refusals, echo in itertools.product(msgs, ['anthropic', 'gemini', 'responses', 'openai', 'deepseek', 'text'],
                                                             [True, False], [True, False], [True, False]):
        assert _needs(m, 'assistant', kind, cache, (), {}, refusals, echo) == _needs_fit(m, kind, cache, (), refusals, echo), (m, kind, cache, echo)

# Anthropic's compaction of the context, then another provider

_compaction_pause = {'id': 'msg_c', 'type': 'message', 'role': 'assistant', 'model': 'claude-opus-4-6', 'stop_reason': 'compaction', 'stop_sequence': None,
                     'content': [{'type': 'compaction', 'content': 'Summary of the session.'}],
                     'usage': {'input_tokens': 0, 'output_tokens': 0, 'iterations': [{'type': 'compaction', 'input_tokens': 5000, 'output_tokens': 80}]}}

@pytest.mark.parametrize('m,base', LEGS[1:4])
def test_compaction_pause_left_out_for_another_provider(fake_provider, m, base):
    """A Claude turn paused after compacting (`pause_after_compaction`) holds only the compaction block, which litellm
    keeps in the provider fields. Another provider is sent the whole history: the pause is left out, and said so
    (Chat Completions refuses an assistant message without content; Responses got an empty text, Gemini nothing)"""
    fp = fake_provider
    fp.queue(Reply(raw=json.dumps(_compaction_pause).encode()), 'The answer.', 'On the other model.')
    chat = Chat('anthropic/claude-opus-4-6', api_base=fp.anthropic_base, api_key='k',
                callkw={'context_management': {'edits': [{'type': 'compact_20260112', 'pause_after_compaction': True}]}})
    chat('Hello')
    chat.model, chat.api_base, chat.callkw = m, getattr(fp, base), {}
    assert contents(chat('And now?')).content == 'On the other model.'
    assert [d for k,d in chat.adjustments if k=='switch'] == \
           [f"message 1: the pause after Anthropic compacted the context left out: it holds only the compaction ({ {'gemini': 'Gemini', 'responses': 'OpenAI Responses'}.get(fp.requests[-1].proto, 'OpenAI Chat Completions') } is sent the whole history before it)"]
    assert 'Summary of the session' not in json.dumps(fp.requests[-1].body)
    assert 'compaction_blocks' in str(chat.hist[1])  # the history keeps it, for Claude

def test_empty_text_beside_calls_to_gemini(fake_provider):
    "An OpenAI-compatible reply with `content: ''` beside its tool call, continued on Gemini: sent as no text (Gemini refuses an empty text part on every later request)"
    fp = fake_provider
    fp.queue(Reply(raw=json.dumps({'id': 'c1', 'object': 'chat.completion', 'created': 1, 'model': 'gpt-4.1', 'choices': [{'index': 0, 'finish_reason': 'tool_calls',
              'message': {'role': 'assistant', 'content': '', 'tool_calls': [{'id': 'call_1', 'type': 'function', 'function': {'name': 'lookup', 'arguments': '{"key": "a"}'}}]}}],
              'usage': {'prompt_tokens': 5, 'completion_tokens': 5, 'total_tokens': 10}}).encode()), 'Found.', 'On Gemini.')
    chat = Chat('openai/gpt-4.1', tools=[lookup], api_base=fp.openai_base, api_key='k')
    chat('Find a')
    chat.model, chat.api_base = 'gemini/gemini-2.5-flash', fp.gemini_base
    assert contents(chat('And now?')).content == 'On Gemini.'
    assert [list(p) for p in fp.last['contents'][1]['parts']] == [['function_call']]

@pytest.mark.parametrize('m,base', [LEGS[0], LEGS[3]])
def test_streamed_gemini_thinking_reported_on_a_switch(fake_provider, m, base):
    "A streamed Gemini reply keeps its thought summary as reasoning_content only (no thinking blocks): moved to another provider, it is left out and said so, as the same reply not streamed"
    fp = fake_provider
    fp.queue(Reply('Cross at the lights.', thinking='Think about safety.'), 'ok')
    chat = Chat('gemini/gemini-3-flash-preview', api_base=fp.gemini_base, api_key='k')
    list(chat('How do I cross the street?', think='l', stream=True))
    assert chat.hist[1].reasoning_content and not getattr(chat.hist[1], 'thinking_blocks', None)
    chat.model, chat.api_base = m, getattr(fp, base)
    chat('And a river?')
    assert any(d.startswith('message 1: thinking from Gemini left out') for k,d in chat.adjustments if k=='switch'), chat.adjustments
    assert 'Think about safety' not in json.dumps(fp.last) and 'thought_signatures' not in json.dumps(fp.last)

def test_image_a_model_made_reported_on_a_switch(fake_provider):
    "An image Gemini made (litellm's `images`) is left out for a provider that takes none in a reply, and said so; it was sent to OpenAI as an unknown field, or dropped for Claude without a word"
    import litellm
    fp = fake_provider
    img = [{'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,iVBORw0KGgo='}, 'index': 0}]
    hist = [{'role': 'user', 'content': 'Draw an axolotl'}, litellm.Message(role='assistant', content='Here it is.', images=img)]
    for m, base in (LEGS[0], LEGS[3]):
        fp.queue('ok')
        chat = Chat(m, hist=list(hist), api_base=getattr(fp, base), api_key='k')
        chat('What color is it?')
        assert [d for k,d in chat.adjustments if k=='switch'] == [f"message 1: 1 image the model made left out ({'Anthropic' if 'claude' in m else m} takes no images in a reply; kept in the history)"]
        assert 'iVBORw0KGgo' not in json.dumps(fp.last)
    fp.queue('ok')
    chat = Chat('gemini/gemini-2.5-flash-image', hist=list(hist), api_base=fp.gemini_base, api_key='k')
    chat('And now?')
    assert 'iVBORw0KGgo' in json.dumps(fp.last) and not [a for a in chat.adjustments if a.kind=='switch']

def test_loop_begun_without_thinking_continued_on_claude_with_thinking(fake_provider):
    """A tool loop Gemini began, stopped after its round, continued on Claude with think=: Anthropic refuses thinking
    when the calls it answers came without its thinking (a turn runs in one thinking mode). Thinking is left out of
    that request, and said so; the next turn thinks"""
    fp = fake_provider
    holder = {}
    def topic() -> str:
        "A topic"
        holder['c'].stop(now=True); return 'cats'
    fp.queue(Reply(tool_calls=[('topic', {})]))
    c = holder['c'] = Chat('gemini/gemini-3-flash-preview', tools=[topic], api_base=fp.gemini_base, api_key='k')
    c('Make a topic')
    c.model, c.api_base = 'anthropic/claude-sonnet-4-5', fp.anthropic_base
    fp.queue(Reply('Cats it is.'), Reply('Dogs next.', thinking='hmm'))
    assert contents(c(think='l')).content == 'Cats it is.' and 'thinking' not in fp.last
    assert any(a.kind=='think' and a.detail.startswith('thinking left out of this request') for a in c.adjustments)
    c('Another?', think='l')
    assert fp.last['thinking']['type'] == 'enabled'

def _sent_ids(body):
    "The tool-call ids of a Chat Completions request: its calls', then its results'"
    ms = body['messages']
    return [tc['id'] for m in ms for tc in m.get('tool_calls') or []] + [m['tool_call_id'] for m in ms if m['role']=='tool']

def _mistral_form(tid): return bool(re.fullmatch(r'[a-zA-Z0-9]{9}', tid))

@pytest.mark.parametrize('target', ['mistral/mistral-small-latest', 'openai/mistral-small-latest', 'hosted_vllm/magistral-small-2509'])
@pytest.mark.parametrize('stream', [False, True])
def test_openai_tool_round_sent_to_mistral(fake_provider, stream, target):
    """A gpt-4o tool round, then the chat moves to Mistral, which takes only tool-call ids of 9 letters and digits (it
    answered 400 "Tool call id was call_… but must be a-z, A-Z, 0-9, with a length of 9."): the call and its result go
    with one id of that form, said; the history keeps OpenAI's. The same for a Mistral model on an OpenAI-compatible
    route (Mistral's URL as `api_base`, or vLLM with Mistral's tokenizer: helper-37 M5)"""
    fp = fake_provider
    oid = 'call_NZa7xqfefoaMI2YYHowVXVlU'
    fp.queue(Reply('Looking.', tool_calls=[dict(name='lookup', arguments={'key': 'a'}, id=oid)]), 'Found.')
    chat = Chat('openai/gpt-4o', tools=[lookup], api_base=fp.openai_base, api_key='k')
    r = chat('Look it up', stream=stream)
    if stream: list(r)
    chat.model = target
    fp.queue('Still found.')
    assert contents(chat('And now?')).content == 'Still found.'
    ids = _sent_ids(fp.last)
    assert len(ids)==2 and len(set(ids))==1 and _mistral_form(ids[0]), ids
    assert _tc_id(chat.hist[1]['tool_calls'][0]) == oid
    assert [d for k,d in chat.adjustments if k=='switch'] == [f"message 1: tool call id {oid} sent as {ids[0]}"]
    chat.model = 'openai/gpt-4o'; fp.queue('Back.')
    chat('And on OpenAI?')
    assert _sent_ids(fp.last) == [oid]*2  # OpenAI gets its own id back

@pytest.mark.parametrize('stream', [False, True])
def test_ids_lisette_makes_for_mistral(fake_provider, stream):
    """A Mistral reply's call whose id another call of the chat has is given a new one: of Mistral's form (9 letters and
    digits), not OpenAI's `call_…` of 29 characters, which Mistral refuses on the next request"""
    fp = fake_provider
    fp.queue(*[Reply(tool_calls=[dict(name='lookup', arguments={'key': k}, id='D681PevKs')]) for k in 'ab'], 'Done.')
    chat = Chat('mistral/mistral-small-latest', tools=[lookup], api_base=fp.openai_base, api_key='k')
    r = chat('Look both up', stream=stream)
    if stream: list(r)
    new = _tc_id(chat.hist[3]['tool_calls'][0])
    assert new != 'D681PevKs' and _mistral_form(new), new
    assert any(k=='tool_call_id' and repr(new) in d for k,d in chat.adjustments)
    assert not [a for a in chat.adjustments if a.kind=='switch']  # sent as it is
    assert _sent_ids(fp.last) == ['D681PevKs', new, 'D681PevKs', new]

# A Magistral reply, recorded: vercel/ai packages/mistral/src/__fixtures__/mistral-reasoning.chunks.txt (streamed) and .json
_mg_base = {'id': 'a4e29c5b82f94d67b23e108a7c9df6e1', 'created': 1769088912, 'model': 'magistral-medium-2507'}
_mg_think = [{'type': 'thinking', 'thinking': [{'type': 'text', 'text': 'The user is asking'}]}], [{'type': 'thinking', 'thinking': [{'type': 'text', 'text': ' for 2+2. This is basic arithmetic. 2+2=4.'}]}]
MAGISTRAL_CHUNKS = [{**_mg_base, 'object': 'chat.completion.chunk', 'choices': [{'index': 0, 'delta': d, 'finish_reason': f}], **x} for d,f,x in (
    ({'role': 'assistant', 'content': _mg_think[0]}, None, {}), ({'content': _mg_think[1]}, None, {}), ({'content': [{'type': 'text', 'text': '2 + 2 = 4'}]}, None, {}),
    ({'content': ''}, 'stop', {'usage': {'prompt_tokens': 10, 'total_tokens': 56, 'completion_tokens': 46}}))]
MAGISTRAL_JSON = {**_mg_base, 'usage': {'prompt_tokens': 10, 'total_tokens': 56, 'completion_tokens': 46}, 'object': 'chat.completion', 'choices': [{'index': 0, 'finish_reason': 'stop',
    'message': {'role': 'assistant', 'content': [{'type': 'thinking', 'thinking': [{'type': 'text', 'text': 'The user is asking for 2+2. This is basic arithmetic. 2+2=4.'}]}, {'type': 'text', 'text': '2 + 2 = 4'}]}}]}

def _magistral(stream):
    if not stream: return Reply(raw=json.dumps(MAGISTRAL_JSON).encode())
    return Reply(raw=b''.join(b'data: ' + json.dumps(c).encode() + b'\n\n' for c in MAGISTRAL_CHUNKS) + b'data: [DONE]\n\n')

def test_streamed_magistral_thinking(fake_provider):
    """A streamed Magistral reply: litellm gives its thinking as thinking blocks marked `signature: 'mistral'`, which
    lisette took for Anthropic's, so the next request to the same model left the thinking out and warned "switch:
    message 1: thinking from Anthropic left out". It is Mistral's: it goes back as the same reply not streamed does,
    nothing said; a real switch away sends the text as `reasoning_content` (as for the reply not streamed), said"""
    fp = fake_provider
    sent = {}
    for stream in (False, True):
        fp.queue(_magistral(stream), 'Still 4.')
        chat = Chat('mistral/magistral-medium-2507', api_base=fp.openai_base, api_key='k')
        r = chat('2+2?', stream=stream)
        if stream: list(r)
        chat('Sure?')
        sent[stream] = fp.last['messages'][1]
        assert not [a for a in chat.adjustments if a.kind=='switch'], chat.adjustments
    assert chat.hist[1].thinking_blocks[0]['signature'] == 'mistral'  # (litellm's mark on the streamed reply)
    assert sent[True] == sent[False]
    chat.model, chat.api_base = 'anthropic/claude-sonnet-4-5', fp.anthropic_base
    fp.queue('Yes.')
    chat('Really?')
    # Anthropic takes no reasoning text back (litellm drops it): the note says it is left out, not kept (it said "kept as reasoning_content")
    assert [d for k,d in chat.adjustments if k=='switch'] == ["message 1: thinking from Mistral left out (Anthropic takes no reasoning text back, and its thinking blocks are Mistral's)"]
    assert fp.last['messages'][1]['content'] == [{'type': 'text', 'text': '2 + 2 = 4'}]  # (no thinking block signed 'mistral': Anthropic would refuse it)
    chat.model, chat.api_base = 'openai/gpt-5-mini', fp.openai_base
    fp.queue('Yes.')
    chat('And you?')
    assert "message 1: thinking from Mistral kept as reasoning_content text only, as a reply not streamed has it (its thinking blocks are Mistral's)" in [d for k,d in chat.adjustments if k=='switch']
    assert fp.last['messages'][1].get('reasoning_content') == 'The user is asking for 2+2. This is basic arithmetic. 2+2=4.' and 'thinking_blocks' not in fp.last['messages'][1]

@pytest.mark.parametrize('stream', [False, True])
def test_openrouter_reasoning_details_stay_on_openrouter(fake_provider, stream):
    """OpenRouter's reasoning details (here Gemini 3's thought signature) go to OpenRouter only: moved to another
    provider, they are left out and said so; back on OpenRouter, they go again"""
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('lookup', {'key': 'a'})]), 'Found it.', 'On OpenAI.', 'Back.')
    chat = Chat('openrouter/google/gemini-3-flash-preview', tools=[lookup], api_base=fp.openai_base, api_key='k')
    r = chat('Look up a', stream=stream)
    if stream: list(r)
    assert fp.requests[1].body['messages'][1]['reasoning_details']
    chat.model = 'openai/gpt-5-mini'
    chat('And now?')
    assert 'reasoning_details' not in json.dumps(fp.last)
    assert [d for k,d in chat.adjustments if k=='switch'] == ["message 1: OpenRouter's reasoning details left out (openai/gpt-5-mini is not on OpenRouter, which alone reads them; kept in the history)"]
    chat.model = 'openrouter/google/gemini-3-flash-preview'
    chat('And back?')
    assert fp.last['messages'][1]['reasoning_details'] == fp.requests[1].body['messages'][1]['reasoning_details']

def test_responses_replay_field_not_sent_elsewhere(fake_provider):
    "litellm 1.110 keeps a Responses reply's items in `provider_specific_fields.openai_responses_replay`: after a switch to Chat Completions it is not sent (strict servers refuse unknown message fields: helper-38 finding 10); Responses gets it again"
    fp = fake_provider
    chat = Chat('openai/responses/gpt-5-mini', api_base=fp.responses_base, api_key='k')
    fp.queue(Reply('Four.', thinking='2+2'), 'ok', 'back')
    chat('2+2?', think='h')
    chat.model, chat.api_base = 'openai/gpt-5-mini', fp.openai_base
    chat('next')
    assert 'openai_responses_replay' not in json.dumps(fp.requests[-1].body)
    chat.model, chat.api_base = 'openai/responses/gpt-5-mini', fp.responses_base
    chat('and back')
    assert fp.requests[-1].body['input']

def test_file_citations_not_sent_elsewhere(fake_provider):
    "A Responses reply citing a file keeps its file citations in the provider fields: after a switch to Chat Completions they are not sent (helper-43 finding 3); recorded reply: vercel/ai openai-file-search-tool.2.json"
    import pathlib
    fp = fake_provider
    body = (pathlib.Path(__file__).parent/'fixtures'/'openai_responses'/'openai-file-search-tool.2.json').read_bytes()
    fp.queue(Reply(raw=body), 'ok')
    chat = Chat('openai/responses/gpt-5-mini', api_base=fp.responses_base, api_key='k')
    chat('What does the file say?')
    chat.model, chat.api_base = 'openai/gpt-5-mini', fp.openai_base
    chat('next')
    sent = json.dumps(fp.last)
    assert 'file_citation' not in sent and 'provider_specific_fields' not in sent

@pytest.mark.parametrize('target', ['openai/gpt-4o-mini', 'deepseek/deepseek-v4-flash', 'openrouter/moonshotai/kimi-k2.6', 'xai/grok-4.3', 'cerebras/gpt-oss-120b', 'groq/openai/gpt-oss-120b', 'mistral/mistral-small-latest'])
def test_anthropic_thinking_not_sent_in_provider_fields(fake_provider, target):
    """Anthropic's signed thinking is also kept in the message's `provider_specific_fields.thinking_blocks`: after a switch
    it is left out there too, as the note says (litellm sends the field as it is to most servers, and strict ones refuse
    it: helper-44 finding 3); the history keeps it and Anthropic gets it back"""
    fp = fake_provider
    fp.queue(Reply('Checking.', tool_calls=[('lookup', {'key': 'a'})], thinking='I should look', signature='sigA'), Reply('Found.', thinking='done', signature='sigB'))
    chat = Chat('anthropic/claude-sonnet-4-5', tools=[lookup], api_base=fp.anthropic_base, api_key='k')
    chat('Look up a', think='l')
    chat.model, chat.api_base = target, fp.openai_base
    fp.queue('Other.')
    chat('And now?')
    sent = json.dumps(fp.last['messages'])
    assert 'sigA' not in sent and 'sigB' not in sent and 'provider_specific_fields' not in sent
    assert "message 1: thinking from Anthropic" in ' '.join(d for k,d in chat.adjustments if k=='switch')
    chat.model, chat.api_base = 'anthropic/claude-sonnet-4-5', fp.anthropic_base
    fp.queue('Back.')
    chat('And back?')
    assert fp.last['messages'][1]['content'][0] == {'type': 'thinking', 'thinking': 'I should look', 'signature': 'sigA'}

@pytest.mark.parametrize('target,base', [('anthropic/claude-sonnet-4-5', 'anthropic_base'), ('openai/responses/gpt-5-mini', 'responses_base')])
def test_reasoning_text_left_out_is_reported(fake_provider, target, base):
    """DeepSeek-style reasoning text (`reasoning_content` alone) has nowhere to go on Anthropic or the Responses API:
    litellm dropped it without a word while every other kind of reasoning got a note (helper-44 minor finding); now it is
    left out and said so, and the history keeps it"""
    fp = fake_provider
    fp.queue(Reply('Four.', thinking='SECRETREASON'), 'ok')
    chat = Chat('deepseek/deepseek-v4-flash', api_base=fp.openai_base, api_key='k')
    chat('2+2?')
    chat.model, chat.api_base = target, getattr(fp, base)
    chat('next')
    assert 'SECRETREASON' not in json.dumps(fp.last)
    name = 'Anthropic' if target.startswith('anthropic') else 'OpenAI Responses'
    assert [d for k,d in chat.adjustments if k=='switch'] == [f"message 1: reasoning text from a Chat Completions provider left out ({name} takes no reasoning text back)"]
    assert chat.hist[1].reasoning_content == 'SECRETREASON'

@pytest.mark.parametrize('first,then', [(('anthropic/claude-sonnet-4-5', 'anthropic_base'), ('openai/gpt-4o-mini', 'openai_base')),
                                        (('anthropic/claude-sonnet-4-5', 'anthropic_base'), ('deepseek/deepseek-chat', 'openai_base'))])
def test_switch_sends_no_empty_provider_fields(fake_provider, first, then):
    "An Anthropic reply without thinking carries litellm's provider fields of Nones: a server speaking OpenAI's protocol is not sent them (strict ones refuse the unknown field); the history keeps them"
    fp = fake_provider
    chat = Chat(first[0], tools=[lookup], api_base=getattr(fp, first[1]), api_key='k')
    fp.queue(Reply('Looking.', tool_calls=[('lookup', {'key': 'a'})]), 'Found.')
    chat('Go')
    psfs = [h.provider_specific_fields for h in chat.hist if not isinstance(h, dict) and h.role=='assistant']
    assert psfs and all(p and not any(p.values()) for p in psfs)  # (litellm's {citations: None, thinking_blocks: None})
    chat.model, chat.api_base = then[0], getattr(fp, then[1])
    fp.queue('Again.')
    chat('More')
    sent = [m for m in fp.requests[-1].body['messages'] if m['role']=='assistant']
    assert len(sent)==2 and not any('provider_specific_fields' in m for m in sent), sent
    assert [h.provider_specific_fields for h in chat.hist[:len(psfs)*2+1] if not isinstance(h, dict) and h.role=='assistant'][:len(psfs)] == psfs
    assert not any('provider' in d for _,d in chat.adjustments)  # nothing in them: no note

def test_switch_to_groq_says_once_that_reasoning_text_goes(fake_provider):
    """litellm 1.110 sends Groq no `reasoning_content` (Groq refuses it): after a switch from DeepSeek, DeepSeek's reasoning
    went without a word. It is said once, on the first request after the switch, not on every turn; the history keeps it"""
    fp = fake_provider
    chat = Chat('deepseek/deepseek-reasoner', api_base=fp.openai_base, api_key='k')
    fp.queue(Reply('One.', thinking='Deep thought.')); chat('Hi')
    chat.model = 'groq/qwen/qwen3-32b'
    fp.queue(Reply('Two.', thinking='Groq thought.')); chat('Again')
    dropped = 'reasoning_content' not in fp.last['messages'][1]  # (litellm 1.110 leaves it out; 1.106 sends it)
    said = [d for k,d in chat.adjustments if k=='switch' and d.startswith('reasoning text')]
    assert said == (["reasoning text of 1 earlier message left out: litellm sends groq/qwen/qwen3-32b none (Groq takes none back), "
                     "from now on without a further note; the history keeps it"] if dropped else [])
    fp.queue('Three.'); chat('More')
    assert not [d for k,d in chat.adjustments if k=='switch']  # not every turn (Groq's own reasoning is not wanted back)
    assert chat.hist[1].reasoning_content == 'Deep thought.'

def test_groq_chat_on_a_history_with_reasoning_says_it_once(fake_provider):
    "A history given to a Groq chat (or loaded) with another provider's reasoning: litellm 1.110 leaves it out, said on the first request only"
    fp = fake_provider
    hist = ['Hi', {'role': 'assistant', 'content': 'One.', 'reasoning_content': 'Deep thought.'}]
    chat = Chat('groq/qwen/qwen3-32b', hist=hist, api_base=fp.openai_base, api_key='k')
    fp.queue('Two.'); chat('Again')
    dropped = 'reasoning_content' not in fp.last['messages'][1]  # (litellm 1.110 leaves it out; 1.106 sends it)
    said = [d for k,d in chat.adjustments if k=='switch']
    assert said == (["reasoning text of 1 earlier message left out: litellm sends groq/qwen/qwen3-32b none (Groq takes none back), "
                     "from now on without a further note; the history keeps it"] if dropped else [])
    fp.queue('Three.'); chat('More')
    assert not [d for k,d in chat.adjustments if k=='switch']

_vllm_ids = ['chatcmpl-tool-0e9c6b4ef47d4f0c8d1a7f3e5b2a9c61', 'chatcmpl-tool-5d2f1a7b9c3e4d6f8a0b1c2d3e4f5a6b']  # vLLM's own form: 46 characters

@pytest.mark.parametrize('stream', [False, True])
def test_vllm_long_ids_go_back_to_vllm(fake_provider, stream):
    """vLLM names its tool calls `chatcmpl-tool-` and 32 hex digits (46 characters). They went back to vLLM itself
    shortened to OpenAI's 40, and every tool round reported a model switch where there was none: they go as vLLM made
    them. Sent to OpenAI, they are shortened, call and result alike, with a note"""
    fp = fake_provider
    fp.queue(Reply(tool_calls=[dict(name='lookup', arguments={'key': k}, id=t) for k,t in zip('ab', _vllm_ids)]), 'Found both.')
    chat = Chat('hosted_vllm/Qwen/Qwen3-8B', tools=[lookup], api_base=fp.openai_base, api_key='none')
    r = chat('Look up a and b', stream=stream)
    if stream: list(r)
    assert _sent_ids(fp.last) == _vllm_ids*2
    assert not [a for a in chat.adjustments if a.kind=='switch']
    chat.model = 'openai/gpt-4o'; fp.queue('Still found.')
    chat('Sure?')
    new = _sent_ids(fp.last)
    assert all(len(t)<=40 for t in new) and new[:2]==new[2:] and [tc.id for tc in chat.hist[1].tool_calls] == _vllm_ids
    assert [d for k,d in chat.adjustments if k=='switch'] == [f"message 1: tool call id {t} sent as {n}" for t,n in zip(_vllm_ids, new)]

# the quick reads of a long history's first request (`_args_object`, `_ids_fit`) against the rules they stand for
from lisette.switch import fit_id, _ids_fit, _args_object
import itertools

_ARGS = ['{"a": 1}', ' {"a": 1} ', '{"a": 1}\n', '{"a": 1} x', '{"a": 1}{"b": 2}', '[1]', '', ' ', '{"a":', 'NaN', '{"a": NaN}',
         '"{}"', '{}', '{"a": "\\ud800"}', 'null', '{"a": [1, {"b": 2}]}', '{"a": 1,}', "{'a': 1}", None, 7]

def test_args_object_reads_as_json_loads():
    "Arguments are a JSON object exactly when `json.loads` makes a dict of them, odd forms included (surrounding space, two values, NaN)"
    def ref(a):
        if not isinstance(a, str): return False
        try: return isinstance(json.loads(a), dict)
        except ValueError: return False
    assert [_args_object(a) for a in _ARGS] == [ref(a) for a in _ARGS]
    assert _args_object('{"a": ' + '['*100_000 + ']'*100_000 + '}') is False  # (too deep for Python to read: not an object it can send; `json.loads` raises a RecursionError)

@pytest.mark.parametrize('to', ['anthropic', 'gemini', 'responses', 'openai'])
def test_switching_a_chat_holding_deep_arguments(fake_provider, to):
    "An OpenAI chat whose model called a tool with arguments nested ~100,000 deep, moved to another provider: the call goes as `{}` where a provider takes only objects, said; the turn and the next work (fitting the history raised a RecursionError, every turn)"
    from test_tools import deep_chat, PROTOS
    from lisette.history import check_hist
    fp = fake_provider
    chat = deep_chat(fp, 'openai')
    chat.model, chat.api_base = PROTOS[to][0], getattr(fp, PROTOS[to][1])
    fp.queue('switched', 'again')
    assert contents(chat('next')).content == 'switched' and contents(chat('and again')).content == 'again'
    check_hist(chat.hist)
    if to in ('anthropic', 'gemini'):
        assert any('call_deep' in a.detail and 'nested too deeply' in a.detail and 'sent as {}' in a.detail for a in chat.adjustments), chat.adjustments

_IDS = ['toolu_01A', 'call_abc', 'a b', 'x__thought__sig', 'c'*41, 'c'*40, 'toolu_1\n', 'é', 'tooluse_x-y', '']

@pytest.mark.parametrize('kind', ['anthropic', 'gemini', 'openai', 'responses', 'deepseek', 'mistral', 'text'])
def test_ids_fit_agrees_with_fit_id(kind):
    "`_ids_fit` says ids fit only when `fit_id` leaves each as it is; for ids of the usual forms it says so whenever that is true"
    usual = {'toolu_01A', 'call_abc', 'c'*41, 'c'*40, 'tooluse_x-y', 'x__thought__sig', 'a b', 'é'}
    for long_ids in (False, True):
        for n in (1, 2, 3):
            for ids in itertools.product(_IDS, repeat=n):
                same = all(fit_id(t, kind, long_ids)==t for t in ids)
                if _ids_fit(list(ids), kind, long_ids): assert same, (ids, kind, long_ids)
                elif set(ids) <= usual: assert not same, (ids, kind, long_ids)

def test_anthropic_id_with_a_final_newline_is_fitted():
    "Anthropic takes ids of letters, digits, `_` and `-` only: a final newline (which a `$` pattern lets through) is replaced too"
    assert fit_id('toolu_1\n', 'anthropic') == 'toolu_1_'

def _dumped(msgs): return [json.dumps(m if isinstance(m, dict) else m.model_dump(), sort_keys=True, default=str) for m in msgs]

@pytest.mark.parametrize('seed', [7, 8, 9, 10])
def test_later_requests_send_what_a_whole_pass_sends(seed):
    "A later request looks again only at what changed since the last (paging and fitting remember the rest): after replacing, appending and removing messages, switching models and paging limits, every request equals the first request of a new chat on the same history"
    import random
    from litellm import ModelResponse
    from lisette.tools import mk_tc, mk_tc_req, mk_tc_results
    from lisette.messages import mk_msgs, _get
    def reply(**kw): return ModelResponse(model='m', choices=[dict(message=dict(role='assistant', content='ok'), finish_reason='stop')])
    def rnd(i, long=False, odd_id=False):
        q = mk_tc_req(f'step {i}', [mk_tc('lookup', key=f'k{i}')])
        if odd_id: q.tool_calls[0].id = f'call.{i}/x'  # (an id Anthropic refuses: changed, with its result's)
        return [f'question {i}', q, *mk_tc_results(q, ['v'*300 if long else f'value {i}']), f'answer {i}']
    thinking = {'role': 'assistant', 'content': 'Thought.', 'thinking_blocks': [{'type': 'thinking', 'thinking': 'hmm', 'signature': 'sig'}]}
    models = ['gpt-4.1', 'anthropic/claude-sonnet-4-5', 'gemini/gemini-2.5-flash', 'openai/gpt-5-mini']
    rng = random.Random(seed)
    h = mk_msgs([o for i in range(12) for o in rnd(i, long=i%4==0, odd_id=i%5==0)])
    sent = []
    chat = Chat(models[0], sp='Be brief.', hist=h, page_results=200, cache=seed%2==0, completefunc=lambda **kw: (sent.append(kw['messages']), reply())[1])
    for step in range(60):
        act = rng.choice(['turn', 'turn', 'replace', 'append', 'cut', 'model', 'page', 'sp', 'reminder', 'rehist'])
        if act=='replace':  # a message in the middle, by one that needs fitting for some providers (or back)
            i = rng.randrange(len(chat.hist)-1)
            if chat.hist[i].__class__ is dict and chat.hist[i].get('role')=='assistant' and 'tool_calls' not in chat.hist[i]: chat.hist[i] = dict(thinking)
        elif act=='append': chat.hist += mk_msgs(rnd(100+step, long=rng.random()<.5, odd_id=rng.random()<.5))
        elif act=='cut' and len(chat.hist)>30:
            del chat.hist[-5:]
            while _get(chat.hist[-1], 'role')=='tool' or _get(chat.hist[-1], 'tool_calls'): chat.hist.pop()  # (whole rounds only)
        elif act=='model': chat.model = rng.choice(models)
        elif act=='page': chat.page_results = rng.choice([100, 200, 5000, None])
        elif act=='sp': chat.sp = rng.choice(['', 'Be brief.', 'Be long.'])
        elif act=='reminder': chat.tool_reminder = rng.choice([None, 'Remember.'])
        elif act=='rehist': chat.hist = list(chat.hist)  # (the same messages in a new list: their checkpoints go, as from any history given)
        fresh_sent = []
        fresh = Chat(chat.model, sp=chat.sp, hist=list(chat.hist), page_results=chat.page_results, cache=chat.cache, tool_reminder=chat.tool_reminder, completefunc=lambda **kw: (fresh_sent.append(kw['messages']), reply())[1])
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            fresh(f'turn {step}'); chat(f'turn {step}')
        assert _dumped(sent[-1])==_dumped(fresh_sent[-1]), (step, act, chat.model)

def _turns_on(model, h, **kw):
    from litellm import ModelResponse
    sent = []
    reply = lambda **k: (sent.append(k['messages']), ModelResponse(model='m', choices=[dict(message=dict(role='assistant', content='ok'), finish_reason='stop')]))[1]
    return Chat(model, hist=h, completefunc=reply, **kw), sent

def _rounds(n):
    from lisette.tools import mk_tc, mk_tc_req, mk_tc_results
    from lisette.messages import mk_msgs
    def rnd(i):
        q = mk_tc_req(f'step {i}', [mk_tc('lookup', key=f'k{i}')])
        return [f'question {i}', q, *mk_tc_results(q, [f'value {i}']), f'answer {i}']
    return mk_msgs([o for i in range(n) for o in rnd(i)])

@pytest.mark.parametrize('model', ['gemini/gemini-2.5-flash', 'gpt-4.1', 'anthropic/claude-sonnet-4-5'])
def test_field_set_in_place_is_sent(model):
    "A field of a history `Message` set anew in place (`m.content = ...`) is sent as it now is, on every provider (Gemini's requests remember the copies they send: the copy is made again)"
    chat, sent = _turns_on(model, _rounds(8))
    chat('first')
    chat.hist[1].content = 'EDITED step 0'
    chat('second')
    assert 'EDITED step 0' in json.dumps([m if isinstance(m, dict) else m.model_dump() for m in sent[-1]], default=str)

def test_replaced_message_whose_values_cannot_be_compared():
    "A message replaced by another whose values `==` cannot answer for (an array's) is read again, not a failed turn"
    class Arr(list):
        def __eq__(self, o):
            class R:
                def __bool__(s): raise ValueError("The truth value of an array is ambiguous")
            return R()
        __hash__ = None
    chat, sent = _turns_on('gpt-4.1', _rounds(3))
    chat.hist[0] = {'role': 'user', 'content': 'question 0', 'metadata': Arr([1, 2])}
    chat('first')
    chat.hist[0] = {'role': 'user', 'content': 'question 0', 'metadata': Arr([1, 2])}  # (an equal-looking copy: compared down to its array)
    chat('second')
    assert sent[-1][0] is chat.hist[0]

def test_what_requests_remembered_is_freed():
    "The memos of a chat's requests let go of messages no longer sent: a switch away from Gemini, paging off, and replaced messages"
    chat, sent = _turns_on('gemini/gemini-2.5-flash', _rounds(8), page_results=10)
    chat('first'); chat('second')
    assert chat._adapt_memo and chat._page_memo
    big = chat.hist[2]
    for i in range(2, 32, 3): chat.hist[i] = dict(chat.hist[i])  # replaced: the old objects are no longer sent (forgotten when more than a few)
    chat('third'); chat('fourth')
    assert not any(o is big for o in chat._adapt_memo['gemini'][0].values())
    chat.model = 'gpt-4.1'; chat.page_results = None; chat('next')
    assert chat._adapt_memo == {} and chat._page_memo == {}
