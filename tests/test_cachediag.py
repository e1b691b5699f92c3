"Prompt-cache report (`chat.cache_report()`) through the fake provider's simulated Anthropic cache: each kind of miss is diagnosed at the place that changed, and a tool loop keeps hitting the cache."
import pytest
from lisette import Chat
from lisette.testing import Reply

M = 'anthropic/claude-sonnet-4-5'
SP = 'You are a careful assistant who answers briefly. ' * 40

def lookup(key:str) -> str:
    "Look up a key"
    return f"value of {key}"

def clock(tz:str) -> str:
    "Current time in a time zone"
    return '10:00'

@pytest.fixture
def fp(fake_provider):
    fake_provider.simulate_cache, fake_provider.cache_min_tokens = True, 200
    return fake_provider

def mk(fp, **kw): return Chat(M, cache=True, api_base=fp.anthropic_base, api_key='k', **({'sp': SP} | kw))

def two_turns(fp, chat, change):
    "Run a turn, apply `change`, run another: the second turn's report"
    fp.queue('First answer.', 'Second answer.')
    chat('First question, with some context to cache. ' * 20)
    change(chat)
    r = chat('Second question')
    return r, chat.cache_report()

def test_no_change_no_miss(fp):
    chat = mk(fp)
    r, rep = two_turns(fp, chat, lambda c: None)
    assert rep.misses == [] and rep[0].read > 0
    assert 'cache miss' not in r._repr_markdown_()

def test_early_message_changed(fp):
    chat = mk(fp)
    fp.queue('First answer.', 'Second answer.', 'Third answer.')
    chat('First question, with some context to cache. ' * 20)
    chat('Second question')
    chat.hist[1]['content'] = 'An edited first answer.'
    r = chat('Third question')
    (i, cr), = chat.cache_report().misses
    assert cr.miss[0] == (1, 'content[0]')  # message 1 (the assistant's first answer), its text
    assert any('An edited first answer.' in l for l in cr.miss[2]) and any('First answer.' in l for l in cr.miss[2])
    assert 0 < cr.read < cr.expected  # still reads the entry written at message 0, before the change
    assert 'cache miss' in r._repr_markdown_() and 'message 1 content[0]' in r._repr_markdown_()

def test_system_prompt_changed(fp):
    chat = mk(fp, cache_idxs=[0, -1])
    r, rep = two_turns(fp, chat, lambda c: setattr(c, 'sp', c.sp + 'Use metric units.'))
    (i, cr), = rep.misses
    assert cr.miss[0] == ('system', 0) and 'system prompt' in cr.miss_line()
    assert any('metric' in l for l in cr.miss[2])

def test_tool_list_changed(fp):
    chat = mk(fp, tools=[lookup])
    r, rep = two_turns(fp, chat, lambda c: setattr(c, 'tools', [lookup, clock]))
    (i, cr), = rep.misses
    assert cr.miss[0] == ('tools', 1)  # the tools come first in the cached prefix: the new one breaks it all
    assert 'tool 1 (clock)' in cr.miss_line() and cr.read == 0

def test_timestamp_in_prompt(fp):
    "A system prompt that carries the time: a miss on every turn, the diff pointing at the timestamp"
    chat = mk(fp, sp=SP + 'Current time: 2026-11-23 10:00:00.', cache_idxs=[0, -1])
    r, rep = two_turns(fp, chat, lambda c: setattr(c, 'sp', c.sp.replace('10:00:00', '10:04:31')))
    (i, cr), = rep.misses
    assert cr.miss[0] == ('system', 0)
    assert any(l.startswith('-') and '10:00:00' in l for l in cr.miss[2]) and any(l.startswith('+') and '10:04:31' in l for l in cr.miss[2])

def test_expired_entry_no_prefix_change(fp):
    "Nothing changed, but the cache entry expired: the report says the prefix is unchanged"
    t = [1000.]
    fp.now = lambda: t[0]
    chat = mk(fp)
    def change(c): t[0] += 600  # past the 5-minute TTL
    r, rep = two_turns(fp, chat, change)
    (i, cr), = rep.misses
    assert cr.miss is None and 'prefix is unchanged' in cr.miss_line()

def test_tool_loop_hits_cache_every_request(fp):
    "A tool loop of 10 rounds with cache=True: every request after the first reads what the previous one wrote"
    chat = mk(fp, tools=[lookup])
    fp.queue(*[Reply(f'Looking up k{i}.', tool_calls=[('lookup', {'key': f'k{i}'})]) for i in range(10)], 'All done.')
    chat('Look up ten keys, one at a time. ' * 10, max_steps=11)
    rep = chat.cache_report()
    assert len(rep) == 11 and len(fp.requests) == 11
    assert rep.misses == [], str(rep)
    assert all(cr.read > 0 for cr in rep[1:]), str(rep)
    assert all(cr.read >= prev.read + prev.written for prev, cr in zip(rep, rep[1:]))
    assert all(len(cr.ckpts) >= 1 for cr in rep)

def test_report_of_last_turn_only(fp):
    chat = mk(fp, tools=[lookup])
    fp.queue(Reply(tool_calls=[('lookup', {'key': 'a'})]), 'done', 'plain')
    chat('Use the tool. ' * 30)
    assert len(chat.cache_report()) == 2
    chat('Thanks')
    assert len(chat.cache_report()) == 1
    assert 'request 1:' in str(chat.cache_report())

def test_no_requests_yet(fp):
    assert str(mk(fp).cache_report()) == 'No requests recorded yet.'

def test_wide_tool_round_hits_cache(fp):
    "A round of 12 parallel tool calls puts 25 blocks between two checkpoints, past Anthropic's 20-block lookback"
    chat = mk(fp, tools=[lookup])
    fp.queue(Reply('Looking up.', tool_calls=[('lookup', {'key': f'k{i}'}) for i in range(12)]), 'All done.')
    chat('Look up twelve keys at once. ' * 10)
    rep = chat.cache_report()
    assert rep.misses == [], str(rep)

@pytest.mark.parametrize('opts', [dict(think='m'), dict(tool_reminder='Be brief. '*5), dict(stream=True)], ids=['think', 'reminder', 'stream'])
def test_tool_loop_variants_hit_cache(fp, opts):
    "The 10-round loop keeps hitting the cache with thinking on, with a transient tool reminder, and streamed"
    rem = opts.pop('tool_reminder', None)
    chat = mk(fp, tools=[lookup], tool_reminder=rem)
    fp.queue(*[Reply(f'Looking up k{i}.', tool_calls=[('lookup', {'key': f'k{i}'})], thinking=f't{i}', signature=f's{i}') for i in range(10)],
             Reply('All done.', thinking='end', signature='s-end'))
    res = chat('Look up ten keys, one at a time. ' * 10, max_steps=11, **opts)
    if opts.get('stream'): list(res)
    rep = chat.cache_report()
    assert len(rep) == 11 and rep.misses == [], str(rep)
    assert all(cr.read > 0 for cr in rep[1:]), str(rep)
