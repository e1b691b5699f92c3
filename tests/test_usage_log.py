"SQLite usage log through litellm's callbacks and the fake provider: one row per call of each kind, values, concurrency, failures, schema upgrade, queries."
import asyncio, contextvars, logging, re, sqlite3, threading, time, warnings
import pytest, litellm
from litellm import ModelResponse
from litellm.types.utils import Usage
from lisette import Chat, AsyncChat, contents
from lisette.testing import Reply
from lisette.usage import (LisetteUsageLogger, total_cost, usage_by_model, usage_by_day, costliest_calls, usage_row,
                           UsageTable, UsageLogError, SCHEMA_VERSION, _cols, _schema_cols, _APP_ID)

MSGS = [{'role': 'user', 'content': 'Hi'}]
VALUE_COLS = ['model', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cached_tokens', 'cache_read_tokens',
              'cache_creation_tokens', 'reasoning_tokens', 'web_search_requests', 'response_cost', 'search_fee', 'cost']

# What the provider reports, and what litellm makes of it (Anthropic's input_tokens excludes the cache, litellm adds it back)
PROTOS = {
    'openai': dict(model='openai/gpt-4o-mini', usage=dict(input=100, output=20, cache_read=30, reasoning=5),
                   expect=dict(model='gpt-4o-mini', prompt_tokens=100, completion_tokens=20, total_tokens=120, cached_tokens=30,
                               cache_read_tokens=0, cache_creation_tokens=0, reasoning_tokens=5, web_search_requests=0)),
    'anthropic': dict(model='anthropic/claude-sonnet-4-5', usage=dict(input=100, output=20, cache_read=30, cache_creation=10, web_search_requests=2),
                      expect=dict(model='claude-sonnet-4-5', prompt_tokens=140, completion_tokens=20, total_tokens=160, cached_tokens=30,
                                  cache_read_tokens=30, cache_creation_tokens=10, reasoning_tokens=0, web_search_requests=2))}

def kw_for(fp, proto):
    return dict(model=PROTOS[proto]['model'], api_base=fp.openai_base if proto=='openai' else fp.anthropic_base, api_key='fake')

def rows(db, order='timestamp, id'):
    c = sqlite3.connect(db); c.row_factory = sqlite3.Row
    try: return [dict(o) for o in c.execute(f'SELECT * FROM usage ORDER BY {order}')]
    finally: c.close()

def count(db):
    c = sqlite3.connect(db)
    try: return c.execute('SELECT count(*) FROM usage').fetchone()[0]
    finally: c.close()

def wait_until(cond, timeout=30):
    "Poll `cond` until true or `timeout` seconds: litellm runs sync success callbacks in its own threads"
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end: return False
        time.sleep(0.02)
    return True

async def await_until(cond, timeout=30):
    "`wait_until` inside an event loop, so litellm's async callback tasks can run"
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end: return False
        await asyncio.sleep(0.02)
    return True

@pytest.fixture
def usage_log(tmp_path):
    "A logger on a fresh database, registered with litellm for the test only"
    made = []
    # earlier tests' async calls can still have success callbacks queued in litellm: run them before our logger exists
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER
    asyncio.run(GLOBAL_LOGGING_WORKER.flush())
    def make(db=None, **kw):
        lg = LisetteUsageLogger(db or tmp_path/'usage.db', **kw).install()
        made.append(lg)
        return lg
    try: yield make
    finally:
        for lg in made: lg.uninstall(); lg.close()
        cb_lists = [litellm.callbacks, litellm.input_callback, litellm.success_callback, litellm._async_success_callback]
        assert not any(o is lg for lg in made for lst in cb_lists for o in lst)

def lisette_errors(caplog): return [r for r in caplog.records if r.name=='lisette.usage' and r.levelno>=logging.ERROR]

# ---- one row per call, with the provider's numbers ----

def _calls(kind, fp, proto, replies, db, n):
    """Make one call of `kind` per reply, then wait until `db` has `n` rows (inside the loop for async calls: litellm runs
    async success callbacks as tasks on the caller's event loop)"""
    kw = kw_for(fp, proto)
    if proto=='openai' and kind in ('stream', 'astream'): kw['stream_options'] = {'include_usage': True}
    if kind in ('sync', 'stream'):
        for rep in replies:
            fp.queue(rep)
            if kind=='sync': litellm.completion(messages=MSGS, **kw)
            else:
                for _ in litellm.completion(messages=MSGS, stream=True, **kw): pass
        return wait_until(lambda: count(db) >= n)
    async def go():
        for rep in replies:
            fp.queue(rep)
            if kind=='async': await litellm.acompletion(messages=MSGS, **kw)
            else:
                async for _ in await litellm.acompletion(messages=MSGS, stream=True, **kw): pass
        return await await_until(lambda: count(db) >= n)
    return asyncio.run(go())

@pytest.mark.parametrize('proto', ['openai', 'anthropic'])
@pytest.mark.parametrize('kind', ['sync', 'stream', 'async', 'astream'])
def test_one_row_per_call_with_reported_usage(fake_provider, usage_log, tmp_path, proto, kind):
    fp, p = fake_provider, PROTOS[proto]
    lg = usage_log(user_id_fn=lambda: 'alice')
    # a plain sync call first, as the reference for cost; then three calls of the kind under test, streamed in many chunks
    fp.queue(Reply('reference', usage=p['usage']))
    ref = litellm.completion(messages=MSGS, **kw_for(fp, proto))
    assert _calls(kind, fp, proto, [Reply(f'answer {i} ' + 'word '*30, usage=p['usage'], chunks=15) for i in range(3)], tmp_path/'usage.db', 4)
    # a last sync call: once its row is in, any extra (per-chunk) row of the earlier calls would have had time to land too
    fp.queue(Reply('sentinel', usage=dict(input=1, output=1)))
    litellm.completion(messages=MSGS, **kw_for(fp, proto))
    assert wait_until(lambda: any(r['prompt_tokens']==1 for r in rows(tmp_path/'usage.db')))
    rs = rows(tmp_path/'usage.db')
    assert len(rs) == 5 and len({r['call_id'] for r in rs}) == 5
    main = [r for r in rs if r['prompt_tokens']!=1]
    for r in main:
        assert {k: r[k] for k in p['expect']} == p['expect']
        assert r['user_id'] == 'alice' and r['provider'] == proto
        assert r['cost'] == pytest.approx(total_cost(ref))
    assert [r['stream'] for r in main] == [0] + [int(kind in ('stream', 'astream'))]*3
    assert lg.errors == 0
    if proto=='anthropic':  # litellm 1.106.2 prices Anthropic's searches itself: no fee added, yet the cost has the $0.02
        assert all(r['search_fee'] == 0 and r['cost'] > 0.02 for r in main)

def test_cost_matches_litellm_and_search_fee_not_doubled(fake_provider, usage_log, tmp_path):
    fp = fake_provider
    usage_log()
    fp.queue(Reply('no search', usage=dict(input=1000, output=100)), Reply('searched', usage=dict(input=1000, output=100, web_search_requests=3)))
    r0 = litellm.completion(messages=MSGS, **kw_for(fp, 'anthropic'))
    r3 = litellm.completion(messages=MSGS, **kw_for(fp, 'anthropic'))
    assert wait_until(lambda: count(tmp_path/'usage.db') == 2)
    a, b = rows(tmp_path/'usage.db', 'web_search_requests')
    assert a['cost'] == pytest.approx(r0._hidden_params['response_cost'])
    assert b['cost'] - a['cost'] == pytest.approx(0.03)  # $10 per 1,000 searches, counted once
    assert total_cost([a, b]) == pytest.approx(total_cost(r0) + total_cost(r3))

def test_missing_search_fee_added_for_unpriced_search():
    r = ModelResponse(model='my-own-model', usage=Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15,
                                                        server_tool_use={'web_search_requests': 4}))
    row = usage_row(r, {})
    assert row['search_fee'] == pytest.approx(0.04) and row['cost'] == pytest.approx(0.04)
    assert total_cost(r, search_fee=0.02) == pytest.approx(0.08)

# ---- impossible usage: the log, total_cost and chat.use agree ----

def _ids(o): return o if isinstance(o, str) else '-'.join(f"{k}={'10**400' if v==10**400 else v}" for k,v in o.items())

# a main count (prompt, completion, total) no provider could mean: counted as 0, and the cost litellm made from it too
_main_bad = [('openai', {'input': 10**13}), ('openai', {'input': -5}), ('openai', {'input': 10**400}), ('anthropic', {'input': 10**400}),
             ('anthropic', {'cache_creation': 10**13})]  # (litellm adds Anthropic's cache tokens into prompt_tokens)

@pytest.mark.parametrize('proto,bad', _main_bad, ids=_ids)
def test_impossible_main_count_is_logged_as_zero_with_no_cost(fake_provider, usage_log, tmp_path, caplog, proto, bad):
    "Before, 10**13 input tokens were logged as such with litellm's $1.5M, -5 as -5 with a cost, and 10**400 lost the row (OverflowError)"
    fp = fake_provider
    lg = usage_log()
    fp.queue(Reply('one', usage={'output': 5, **bad}))
    kw = kw_for(fp, proto); m = kw.pop('model')
    chat = Chat(m, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the chat's own 'usage' adjustment
        r = chat('hi')
    assert wait_until(lambda: count(tmp_path/'usage.db') == 1)
    (row,) = rows(tmp_path/'usage.db')
    assert (row['prompt_tokens'], row['completion_tokens'], row['response_cost'], row['search_fee'], row['cost']) == (0, 5, 0., 0., 0.)
    assert chat.use.cost == total_cost(r) == total_cost([row]) == 0 and chat.use.prompt_tokens == 0
    assert lg.errors == 0 and not lisette_errors(caplog)
    notes = [o.getMessage() for o in caplog.records if o.name=='lisette.usage' and o.levelno==logging.WARNING]
    assert len(notes) == 1 and 'impossible usage (prompt_tokens=' in notes[0] and 'recorded as 0' in notes[0] and 'no cost' in notes[0]

# an auxiliary count (cache, reasoning, searches) no provider could mean: counted as 0, and the call priced without it
_aux_bad = [('openai', {'reasoning': 10**13}, 'reasoning_tokens'), ('openai', {'cache_read': -5}, 'cached_tokens'),
            ('anthropic', {'web_search_requests': 10**400}, 'web_search_requests')]

@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('proto,bad,col', _aux_bad, ids=_ids)
def test_impossible_auxiliary_count_is_logged_as_zero_and_priced_without_it(fake_provider, usage_log, tmp_path, caplog, proto, bad, col, stream):
    "Before, the chat dropped the whole cost while the log kept litellm's (reasoning 10**13: $6M), or lost the row (10**400 searches)"
    fp = fake_provider
    kw = kw_for(fp, proto); m = kw.pop('model')
    fp.queue(Reply('ref', usage={'input': 100, 'output': 5}))
    ref = total_cost(litellm.completion(messages=MSGS, model=m, **kw))  # the same call without the impossible count
    lg = usage_log()
    fp.queue(Reply('one', usage={'input': 100, 'output': 5, **bad}))
    chat = Chat(m, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        r = chat('hi', stream=stream)
        if stream: r = list(r)[-1]
    assert wait_until(lambda: count(tmp_path/'usage.db') == 1)
    (row,) = rows(tmp_path/'usage.db')
    assert (row['prompt_tokens'], row['completion_tokens'], row[col], row['stream']) == (100, 5, 0, int(stream))
    assert ref > 0 and row['cost'] == pytest.approx(ref) and chat.use.cost == pytest.approx(ref) and total_cost(r) == pytest.approx(ref)
    assert lg.errors == 0 and not lisette_errors(caplog)
    notes = [o.getMessage() for o in caplog.records if o.name=='lisette.usage' and o.levelno==logging.WARNING]
    assert len(notes) == 1 and 'impossible usage' in notes[0] and 'no cost' not in notes[0]

def test_impossible_cost_is_logged_as_zero():
    "litellm's cost as the callback gets it, when negative, infinite or NaN, is no cost: 0, like chat.use"
    r = ModelResponse(model='gpt-4o-mini', usage=Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15))
    for c in (-1.0, float('inf'), float('nan')):
        row = usage_row(r, {'standard_logging_object': {'response_cost': c}})
        assert (row['response_cost'], row['cost'], row['prompt_tokens']) == (0., 0., 10)
    assert usage_row(r, {'standard_logging_object': {'response_cost': 0.5}})['cost'] == 0.5

# ---- through Chat and AsyncChat ----

@pytest.mark.parametrize('proto', ['openai', 'anthropic'])
@pytest.mark.parametrize('stream', [False, True])
def test_chat_tool_loop_one_row_per_model_call(fake_provider, usage_log, tmp_path, proto, stream):
    fp = fake_provider
    usage_log()
    def add(a:int, b:int=0) -> int:
        "Add two numbers"
        return a + b
    fp.queue(Reply(tool_calls=[('add', {'a': 1, 'b': 2})], usage=dict(input=50, output=10)),
             Reply(tool_calls=[('add', {'a': 3, 'b': 4})], usage=dict(input=70, output=11)),
             Reply('The sums are 3 and 7.', usage=dict(input=90, output=12)))
    kw = kw_for(fp, proto); m = kw.pop('model')
    chat = Chat(m, tools=[add], **kw)
    res = chat('add', max_steps=5, stream=stream)
    if stream: list(res)
    assert wait_until(lambda: count(tmp_path/'usage.db') >= 3)
    rs = rows(tmp_path/'usage.db')
    assert len(rs) == 3 and len(fp.requests) == 3
    assert [(r['prompt_tokens'], r['completion_tokens']) for r in rs] == [(50, 10), (70, 11), (90, 12)]
    assert sum(r['total_tokens'] for r in rs) == chat.use.total_tokens

@pytest.mark.parametrize('proto', ['openai', 'anthropic'])
@pytest.mark.parametrize('stream', [False, True])
def test_asyncchat_tool_loop_one_row_per_model_call(fake_provider, usage_log, tmp_path, proto, stream):
    fp = fake_provider
    usage_log()
    async def aadd(a:int, b:int=0) -> int:
        "Add two numbers"
        return a + b
    fp.queue(Reply(tool_calls=[('aadd', {'a': 1, 'b': 2})], usage=dict(input=50, output=10)),
             Reply('The sum is 3.', usage=dict(input=90, output=12)))
    kw = kw_for(fp, proto); m = kw.pop('model')
    async def main():
        chat = AsyncChat(m, tools=[aadd], **kw)
        r = await chat('add', stream=stream)
        if stream: [o async for o in r]
        assert await await_until(lambda: count(tmp_path/'usage.db') >= 2)
        return chat
    chat = asyncio.run(main())
    rs = rows(tmp_path/'usage.db')
    assert [(r['prompt_tokens'], r['completion_tokens']) for r in rs] == [(50, 10), (90, 12)]
    assert sum(r['total_tokens'] for r in rs) == chat.use.total_tokens

# ---- user ids ----

def test_user_id_is_taken_in_the_calling_thread(fake_provider, usage_log, tmp_path):
    "Sync streamed calls run their callback in litellm's pool; the user id still comes from the caller's context"
    fp = fake_provider
    current = contextvars.ContextVar('current_user', default=None)
    usage_log(user_id_fn=current.get, require_user=True)
    fp.respond_with(lambda body, path: Reply('hi ' + 'x '*20, usage=dict(input=3, output=4)))
    def run(name):
        current.set(name)
        for _ in litellm.completion(messages=MSGS, stream=True, **kw_for(fp, 'anthropic')): pass
    ts = [threading.Thread(target=run, args=(f'user{i}',)) for i in range(4)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert wait_until(lambda: count(tmp_path/'usage.db') == 4)
    assert sorted(r['user_id'] for r in rows(tmp_path/'usage.db')) == [f'user{i}' for i in range(4)]

def test_required_user_missing_logs_error_and_keeps_row(fake_provider, usage_log, tmp_path, caplog):
    fp = fake_provider
    lg = usage_log(require_user=True)
    fp.queue('no user', 'with user')
    r = litellm.completion(messages=MSGS, **kw_for(fp, 'openai'))
    assert r.choices[0].message.content == 'no user'
    assert wait_until(lambda: count(tmp_path/'usage.db') == 1)
    errs = lisette_errors(caplog)
    assert len(errs) == 1 and 'no user id' in errs[0].getMessage() and 'gpt-4o-mini' in errs[0].getMessage()
    litellm.completion(messages=MSGS, user='bob', **kw_for(fp, 'openai'))
    assert wait_until(lambda: count(tmp_path/'usage.db') == 2)
    assert [r['user_id'] for r in rows(tmp_path/'usage.db')] == [None, 'bob']
    assert len(lisette_errors(caplog)) == 1 and lg.errors == 0

def test_failing_user_id_fn_never_breaks_the_call(fake_provider, usage_log, tmp_path, caplog):
    fp = fake_provider
    def who(): raise RuntimeError('no session')
    usage_log(user_id_fn=who)
    fp.queue('fine')
    assert litellm.completion(messages=MSGS, **kw_for(fp, 'openai')).choices[0].message.content == 'fine'
    assert wait_until(lambda: count(tmp_path/'usage.db') == 1)
    assert any('no session' in r.getMessage() for r in lisette_errors(caplog))

# ---- concurrency ----

def test_threads_lose_no_row(fake_provider, usage_log, tmp_path):
    fp = fake_provider
    usage_log()
    fp.respond_with(lambda body, path: Reply('ok', usage=dict(input=5, output=5)))
    errs = []
    def run():
        try:
            for _ in range(5): litellm.completion(messages=MSGS, **kw_for(fp, 'openai'))
        except Exception as e: errs.append(e)
    ts = [threading.Thread(target=run) for _ in range(8)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert not errs
    assert wait_until(lambda: count(tmp_path/'usage.db') >= 40)
    assert count(tmp_path/'usage.db') == 40

def test_fifty_concurrent_async_calls_lose_no_row(fake_provider, usage_log, tmp_path):
    fp = fake_provider
    lg = usage_log()
    # every request waits until all fifty are in flight, so the calls and their callbacks really overlap
    barrier = threading.Barrier(50, timeout=30)
    def respond(body, path):
        barrier.wait(); return Reply('ok', usage=dict(input=int(body['messages'][-1]['content']), output=1))
    fp.respond_with(respond)
    async def main():
        await asyncio.gather(*(litellm.acompletion(messages=[{'role': 'user', 'content': str(i+1)}], **kw_for(fp, 'openai')) for i in range(50)))
        assert await await_until(lambda: count(tmp_path/'usage.db') >= 50)
    asyncio.run(main())
    assert sorted(r['prompt_tokens'] for r in rows(tmp_path/'usage.db')) == list(range(1, 51))
    assert lg.errors == 0

def test_two_loggers_on_one_file_hammered_from_threads(tmp_path):
    "Separate connections (as from two processes) writing at once: WAL and the busy timeout keep every row"
    db = tmp_path/'usage.db'
    lgs = [LisetteUsageLogger(db), LisetteUsageLogger(db)]
    start = threading.Barrier(8)
    def run(t):
        start.wait()
        for i in range(100): lgs[t%2].record(dict(model='m', prompt_tokens=1, cost=0.001, call_id=f'{t}-{i}'))
    ts = [threading.Thread(target=run, args=(t,)) for t in range(8)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert count(db) == 800 and all(lg.errors == 0 for lg in lgs)
    assert sqlite3.connect(db).execute('PRAGMA journal_mode').fetchone()[0] == 'wal'
    for lg in lgs: lg.close()

def test_same_call_id_recorded_once(tmp_path):
    lg = LisetteUsageLogger(tmp_path/'usage.db')
    for _ in range(3): lg.record(dict(model='m', call_id='same'))
    assert count(tmp_path/'usage.db') == 1
    lg.close()

def _call_index(db):
    "(name, unique, columns) of each index of `db`'s usage table"
    c = sqlite3.connect(db)
    try: return [(n, u, [o[0] for o in c.execute('SELECT name FROM pragma_index_info(?)', (n,))])
                 for n,u in c.execute('SELECT name, "unique" FROM pragma_index_list(?)', ('usage',))]
    finally: c.close()

def test_missing_call_id_index_is_recreated_or_refused(tmp_path, caplog):
    "A shared log whose unique index on call_id was dropped (by a copy or merge script): `record`'s INSERT OR IGNORE kept every repeat of a call"
    db = _lisette_db(tmp_path/'u.db')
    assert _call_index(db) == [('usage_call_id', 1, ['call_id'])]
    for then, made in (((), 'usage_call_id'), (("CREATE INDEX usage_call_id ON usage(call_id)",), 'usage_call_id_unique')):  # gone, or no longer unique (the user's: kept)
        _sql_db(db, "DROP INDEX usage_call_id", *then)
        lg = LisetteUsageLogger(db)
        for _ in range(3): assert lg.record(dict(model='m', call_id='same'))
        lg.close()
        assert sorted(_call_index(db)) == sorted([(made, 1, ['call_id']), *[('usage_call_id', 0, ['call_id'])]*bool(then)]) and lg.errors == 0
        assert rows(db, 'id')[-1]['call_id'] == 'same' and count(db) == 2  # recorded once
        _sql_db(db, "DELETE FROM usage WHERE call_id='same'")
    _sql_db(db, "DROP INDEX usage_call_id_unique", "DROP INDEX usage_call_id", "CREATE UNIQUE INDEX usage_call_id ON usage(call_id)")
    # a call on two rows already (the index gone, a log merged twice): no index can be made; said how to fix, the rows kept, and recording goes on
    _sql_db(db, "DROP INDEX usage_call_id", *["INSERT INTO usage (model, cost, call_id) VALUES ('m', 1.0, 'twice')"]*2)
    with caplog.at_level(logging.WARNING, logger='lisette.usage'), pytest.warns(UserWarning, match="is on more than one row"): lg = LisetteUsageLogger(db)
    assert lg.record(dict(model='m', call_id='new')) and lg.errors == 0 and count(db) == 4  # (refusing would record nothing more)
    lg.close()
    msg = [r.getMessage() for r in caplog.records if r.name=='lisette.usage' and r.levelno==logging.WARNING][0]
    assert "1 call id (e.g. 'twice') is on more than one row" in msg and 'goes on recording' in msg and 'DELETE FROM usage' in msg and str(db) in msg
    assert _call_index(db) == []
    with pytest.warns(UserWarning, match=r"1 call id \(e\.g\. 'twice'\) is on more than one row .* the totals count each row"):
        assert usage_by_model(db)[0]['cost'] == 3.0
    # the fix it gives: the index comes back and the log keeps each call once again
    _sql_db(db, re.search(r'"(DELETE FROM usage[^"]*)"', msg)[1])
    lg = LisetteUsageLogger(db)
    assert lg.record(dict(model='m', call_id='twice')) and count(db) == 3 and lg.errors == 0
    lg.close()
    assert _call_index(db) == [('usage_call_id', 1, ['call_id'])]

def test_index_of_the_users_own_name_is_kept(tmp_path):
    "An index of the user's holding the name `usage_call_id` (not unique on call_id alone) stays; lisette's unique index takes another name"
    db = _lisette_db(tmp_path/'u.db')
    _sql_db(db, "DROP INDEX usage_call_id", "CREATE UNIQUE INDEX usage_call_id ON usage(call_id, user_id)")
    lg = LisetteUsageLogger(db)
    for _ in range(2): assert lg.record(dict(model='m', call_id='same', user_id='u'))
    lg.close()
    assert sorted(_call_index(db)) == [('usage_call_id', 1, ['call_id', 'user_id']), ('usage_call_id_unique', 1, ['call_id'])] and count(db) == 2  # (the file's one row, and this call once)
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT sql FROM sqlite_master WHERE name='usage_call_id'").fetchone()[0] == "CREATE UNIQUE INDEX usage_call_id ON usage(call_id, user_id)"

# ---- a database that cannot be written ----

def _three_calls_then_one_error(fp, lg, caplog):
    for i in range(3):
        fp.queue(f'answer {i}')
        chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='fake')
        assert contents(chat('hi')).content == f'answer {i}'
    assert wait_until(lambda: lg.errors >= 3)
    errs = lisette_errors(caplog)
    assert len(errs) == 1, [r.getMessage() for r in errs]
    assert str(lg.db_path) in errs[0].getMessage()
    return errs[0].getMessage()

def test_locked_database(fake_provider, usage_log, tmp_path, caplog):
    fp, db = fake_provider, tmp_path/'usage.db'
    lg = usage_log(busy_timeout=0.2)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute('BEGIN EXCLUSIVE')
    try: assert 'locked' in _three_calls_then_one_error(fp, lg, caplog)
    finally: holder.execute('ROLLBACK'); holder.close()
    # once the lock is gone, rows are written again, and a new outage would be reported again
    fp.queue('back')
    litellm.completion(messages=MSGS, **kw_for(fp, 'openai'))
    assert wait_until(lambda: count(db) == 1)
    assert lg.errors == 3 and not lg._failing

def test_read_only_database(fake_provider, usage_log, tmp_path, caplog):
    fp, db = fake_provider, tmp_path/'usage.db'
    LisetteUsageLogger(db).close()
    lg = usage_log(db=f'{db.as_uri()}?mode=ro')
    assert 'readonly' in _three_calls_then_one_error(fp, lg, caplog)
    assert count(db) == 0

def test_corrupt_database(fake_provider, usage_log, tmp_path, caplog):
    fp, db = fake_provider, tmp_path/'usage.db'
    db.write_bytes(b'not a database at all ' * 500)
    lg = usage_log(db=db)
    assert 'not a database' in _three_calls_then_one_error(fp, lg, caplog)
    assert db.read_bytes().startswith(b'not a database')  # left as it was

def test_newer_schema_is_refused_without_breaking_calls(fake_provider, usage_log, tmp_path, caplog):
    fp, db = fake_provider, tmp_path/'usage.db'
    # a newer lisette's database carries lisette's application id, as every database lisette creates does
    c = sqlite3.connect(db); c.execute('CREATE TABLE usage (id INTEGER PRIMARY KEY, x TEXT)'); c.execute('PRAGMA user_version=99')
    c.execute(f'PRAGMA application_id={_APP_ID}'); c.commit(); c.close()
    lg = usage_log(db=db)
    assert 'upgrade lisette to use it. The call itself went ahead' in _three_calls_then_one_error(fp, lg, caplog)  # (one sentence ended, then the next: it lacked its period)

# ---- schema upgrade ----

def test_upgrade_from_v1_keeps_rows(fake_provider, usage_log, tmp_path):
    fp, db = fake_provider, tmp_path/'usage.db'
    v1 = [(n,t) for n,t,v in _cols if v==1]
    c = sqlite3.connect(db)
    c.execute(f"CREATE TABLE usage (id INTEGER PRIMARY KEY, {', '.join(f'{n} {t}' for n,t in v1)})")
    c.executemany("INSERT INTO usage (timestamp, model, user_id, prompt_tokens, completion_tokens, total_tokens, web_search_requests, response_cost) VALUES (?,?,?,?,?,?,?,?)",
                  [(1.7e9+i, 'old-model', f'u{i}', 10*i, 5, 10*i+5, i, 0.1*i) for i in range(3)])
    c.commit(); c.close()
    assert sqlite3.connect(db).execute('PRAGMA user_version').fetchone()[0] == 0
    usage_log(db=db)
    c = sqlite3.connect(db)
    assert c.execute('PRAGMA user_version').fetchone()[0] == SCHEMA_VERSION
    assert {o[1] for o in c.execute('PRAGMA table_info(usage)')} == {'id'} | {n for n,_,_ in _cols}
    c.close()
    old = rows(db)
    assert [(r['model'], r['user_id'], r['prompt_tokens'], r['web_search_requests']) for r in old] == [('old-model', f'u{i}', 10*i, i) for i in range(3)]
    assert [r['cost'] for r in old] == pytest.approx([0, 0.1, 0.2])  # filled from litellm's cost of the time
    fp.queue(Reply('new', usage=dict(input=1, output=2)))
    litellm.completion(messages=MSGS, **kw_for(fp, 'openai'))
    assert wait_until(lambda: count(db) == 4)
    assert rows(db)[-1]['completion_tokens'] == 2
    # opening again changes nothing
    LisetteUsageLogger(db).close()
    assert count(db) == 4

# ---- queries ----

@pytest.fixture
def filled(tmp_path):
    lg = LisetteUsageLogger(tmp_path/'usage.db')
    day1, day2 = 1_767_225_600, 1_767_312_000  # 2026-01-01 and 2026-01-02, 00:00 UTC
    data = [(day1+10, 'a', 'ann', 100, 0.5, 0), (day1+20, 'b', 'bob', 200, 2.0, 1), (day2+30, 'a', 'ann', 300, 1.0, 2), (day2+40, 'a', 'bob', 50, 0.25, 0)]
    for i,(ts, m, u, pt, cost, s) in enumerate(data):
        lg.record(dict(timestamp=ts, model=m, user_id=u, prompt_tokens=pt, completion_tokens=1, total_tokens=pt+1,
                       cached_tokens=0, web_search_requests=s, cost=cost, call_id=str(i)))
    yield lg
    lg.close()

def test_usage_by_model(filled):
    t = usage_by_model(filled)
    assert isinstance(t, UsageTable) and isinstance(t, list)
    assert [(r['model'], r['calls'], r['prompt_tokens'], r['searches'], r['cost']) for r in t] == [('a', 3, 450, 2, 1.75), ('b', 1, 200, 1, 2.0)][::-1]
    assert [(r['model'], r['cost']) for r in usage_by_model(filled.db_path, user_id='ann')] == [('a', 1.5)]
    md = t._repr_markdown_()
    assert md.splitlines()[0] == '| model | calls | prompt_tokens | completion_tokens | cached_tokens | searches | cost |'
    assert '| b | 1 | 200 | 1 | 0 | 1 | $2.0000 |' in md

def test_usage_by_day(filled):
    t = usage_by_day(filled)
    assert [(r['day'], r['calls'], r['cost']) for r in t] == [('2026-01-01', 2, 2.5), ('2026-01-02', 2, 1.25)]
    assert [r['day'] for r in usage_by_day(filled, since=1_767_312_000)] == ['2026-01-02']

def test_since_zero_is_the_epoch(filled):
    "since=0 is 1970, every call: it meant 'from now on' (no rows)"
    assert [r['calls'] for r in usage_by_model(filled, since=0)] == [r['calls'] for r in usage_by_model(filled)]
    assert len(costliest_calls(filled, since=0)) == 4

def test_table_created_by_another_process_meanwhile(tmp_path):
    "Another process creates the usage table while this one reads the schema: its reads are one snapshot, not 'not a lisette usage database'"
    import lisette.usage as U
    db = str(tmp_path/'race.db')
    class Conn:
        def __init__(self, c): self.c, self.t = c, None
        def execute(self, sql, *a):
            if 'sqlite_master' in sql and self.t is None:  # the other process, between the reads of the schema
                self.t = threading.Thread(target=lambda: LisetteUsageLogger(db).close()); self.t.start(); time.sleep(0.3)
            return self.c.execute(sql, *a)
    w = Conn(sqlite3.connect(db, isolation_level=None, timeout=5, check_same_thread=False))
    U._migrate(w, db)
    w.t.join()
    assert U._lisette_version(w.c, db) == SCHEMA_VERSION

def test_missing_directory_said(tmp_path, caplog):
    "A log in a directory that does not exist: the error says so (it said to check the file is no other program's locked database)"
    with caplog.at_level(logging.ERROR, logger='lisette.usage'): lg = LisetteUsageLogger(tmp_path/'nope'/'u.db')
    assert lg.errors == 1 and f"its directory {tmp_path/'nope'} does not exist" in caplog.text

def test_directory_given_for_the_database_said(tmp_path, caplog):
    "A directory passed as the database: logging and the queries say so (they said to check it is a database no other program keeps locked, or 'disk I/O error')"
    with caplog.at_level(logging.ERROR, logger='lisette.usage'): lg = LisetteUsageLogger(tmp_path)
    assert lg.errors == 1 and f"{tmp_path} is a directory" in caplog.text and str(tmp_path/'usage.db') in caplog.text
    for q in (usage_by_model, usage_by_day, costliest_calls):
        with pytest.raises(UsageLogError, match=f"{tmp_path} is a directory"): q(tmp_path)

def test_totals_warn_about_text_where_numbers_belong(filled):
    "A shared or edited log with a cost or count that is not a number: SQLite adds it as 0, so the totals say so (and are right without it)"
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        usage_by_model(filled); usage_by_day(filled)  # a sound log: no warning
    c = sqlite3.connect(filled.db_path); c.execute("UPDATE usage SET cost='lots' WHERE call_id='1'"); c.commit(); c.close()
    for q in (usage_by_model, usage_by_day):
        with pytest.warns(UserWarning, match=r"1 call\(s\) in the usage log .* not a number .* add them as 0"): t = q(filled)
    assert sum(r["cost"] for r in t) == pytest.approx(0.5+1.0+0.25)  # everything but the call whose cost is text
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        usage_by_model(filled, user_id='ann')  # that row is bob's: not in these totals, no warning

BAD_VALUES = { # name: (SQL damaging call '1' (bob's, model b, cost 2.0, 200 prompt tokens), by_model's (cost, prompt_tokens) of model b)
    'numeric-prefix-text': ("UPDATE usage SET cost='12abc' WHERE call_id='1'", (0, 200)),  # SQLite added it as 12
    'negative-cost': ("UPDATE usage SET cost=-5 WHERE call_id='1'", (0, 200)),
    'infinite-cost': ("UPDATE usage SET cost=9e999 WHERE call_id='1'", (0, 200)),
    'negative-tokens': ("UPDATE usage SET prompt_tokens=-100 WHERE call_id='1'", (2.0, 0)),
    'impossible-tokens': ("UPDATE usage SET prompt_tokens=9223372036854775807 WHERE call_id='1'", (2.0, 0)),
    'blob-tokens': ("UPDATE usage SET prompt_tokens=x'0102' WHERE call_id='1'", (2.0, 0))}

@pytest.mark.parametrize('name', BAD_VALUES)
def test_totals_leave_out_values_no_call_has(filled, name):
    "Text SQLite reads a number from, negative or impossibly large values: the totals were silently wrong (14.0, -3.0, inf, -80 ...), now they leave them out and say so"
    sql, (cost_b, tokens_b) = BAD_VALUES[name]
    c = sqlite3.connect(filled.db_path); c.execute(sql); c.commit(); c.close()
    with pytest.warns(UserWarning, match=r"1 call\(s\) in the usage log .* add them as 0"): t = usage_by_model(filled)
    assert {r['model']: (r['cost'], r['prompt_tokens']) for r in t} == {'a': (1.75, 450), 'b': (cost_b, tokens_b)}
    with pytest.warns(UserWarning, match=r"1 call\(s\)"): t = usage_by_day(filled)
    assert sum(r['cost'] for r in t) == pytest.approx(1.75+cost_b)

def test_total_cost_of_rows_with_a_cost_that_is_no_cost(filled):
    "Rows from a shared log: text or a negative cost raised a raw ValueError (could not convert string to float) or lowered the sum"
    c = sqlite3.connect(filled.db_path)
    c.execute("UPDATE usage SET cost='lots' WHERE call_id='1'"); c.execute("UPDATE usage SET cost=-1 WHERE call_id='2'"); c.commit(); c.close()
    top = costliest_calls(filled, 10)
    assert [r['cost'] for r in top][:2] == [0.5, 0.25]  # ranked by the costs that are numbers; the others after them
    with pytest.warns(UserWarning, match=r"2 usage-log row\(s\) hold a cost that is not a number from 0 to 10\^12 \('lots', -1\.0; an edited or damaged file\?\): the total leaves them out"):
        assert total_cost(top) == pytest.approx(0.75)
    with pytest.warns(UserWarning, match=r"1 usage-log row"): assert total_cost({'cost': b'\x01'}) == 0
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert total_cost([{'cost': 1}, {'cost': None}, {}, {'cost': 0.5}]) == 1.5  # no cost recorded: 0, as before

def test_costs_no_call_has_never_overflow_the_totals(filled):
    "Two finite costs of 1e308 (from a shared or edited file) summed to inf in the totals and total_cost, silently: a cost over $10^12 is no call's, left out and said"
    c = sqlite3.connect(filled.db_path)
    c.execute("UPDATE usage SET cost=1e308 WHERE call_id IN ('0', '2')"); c.execute("UPDATE usage SET cost=1e13 WHERE call_id='3'"); c.commit(); c.close()
    with pytest.warns(UserWarning, match=r"3 call\(s\) in the usage log .*a cost over \$10\^12.* add them as 0"): t = usage_by_model(filled)
    assert {r['model']: r['cost'] for r in t} == {'a': 0, 'b': 2.0}
    with pytest.warns(UserWarning, match=r"3 call\(s\)"): t = usage_by_day(filled)
    assert [r['cost'] for r in t] == [2.0, 0]
    top = costliest_calls(filled, 10)
    assert [r['cost'] for r in top][0] == 2.0  # ranked as 0, after every cost a call can have
    with pytest.warns(UserWarning, match=r"3 usage-log row\(s\) hold a cost that is not a number from 0 to 10\^12 \(1e\+308, 1e\+308, 10000000000000\.0;"):
        assert total_cost(top) == 2.0
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert total_cost([{'cost': 1e12}, {'cost': 1e12}]) == 2e12  # the bound itself is a cost
    # a provider's or litellm's cost over the bound is none either, as an infinite one: 0, said, and never summed into chat.use
    r = ModelResponse(model='gpt-4o-mini', usage=Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15))
    assert usage_row(r, {'standard_logging_object': {'response_cost': 1e308}})['cost'] == 0.
    r.usage.cost = 1e308
    assert total_cost(r) < 1e-4 and total_cost([r, r]) < 1e-4  # 0 (litellm 1.110 takes the stated cost as its own), or the tokens' list price (1.106)

def test_per_day_totals_read_iso_times_and_say_which_calls_they_leave_out(filled):
    "Text timestamps (not the unix seconds lisette writes) grouped under day None, silently, and `since` let every one through (text sorts after numbers)"
    c = sqlite3.connect(filled.db_path)
    for i,(ts, cost) in enumerate([('2026-01-02T10:00:00Z', 4.0), ('2026-01-01 23:30:00-02:00', 8.0),  # ISO 8601: read (the second is 01:30 UTC on the 2nd)
                                   ('yesterday', 16.0), (None, 32.0), (1e308, 64.0), (-86400, 128.0)]):  # no time a call has
        c.execute("INSERT INTO usage (timestamp, model, user_id, cost, call_id) VALUES (?, 'a', 'ann', ?, ?)", (ts, cost, f'x{i}'))
    c.commit(); c.close()
    msg = r"4 call\(s\) in the usage log .* have no time lisette can read .*: this table leaves them out"
    with pytest.warns(UserWarning, match=msg): t = usage_by_day(filled)
    assert [(r['day'], r['calls'], r['cost']) for r in t] == [('2026-01-01', 2, 2.5), ('2026-01-02', 4, 1.25+4+8)]
    with pytest.warns(UserWarning, match=msg): t = usage_by_model(filled, since=1_767_312_000)
    assert [(r['model'], r['calls'], r['cost']) for r in t] == [('a', 4, 1.25+4+8)]
    with pytest.warns(UserWarning, match=msg): t = costliest_calls(filled, 3, since=1_767_312_000)
    assert [(r['time'], r['cost']) for r in t] == [('2026-01-02 01:30:00', 8.0), ('2026-01-02 10:00:00', 4.0), ('2026-01-02 00:00:30', 1.0)]
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        usage_by_day(filled, user_id='bob')  # those calls are ann's: not in these totals, no warning
        usage_by_model(filled); costliest_calls(filled)  # no time asked for: every call, no warning
    assert [r['time'] for r in costliest_calls(filled, 10) if r['cost']==16.0] == ['yesterday']  # a call's row shows its text as it is

def test_costliest_calls(filled):
    t = costliest_calls(filled, 3)
    assert [(r['model'], r['user_id'], r['cost']) for r in t] == [('b', 'bob', 2.0), ('a', 'ann', 1.0), ('a', 'ann', 0.5)]
    assert t[0]['time'] == '2026-01-01 00:00:20'
    assert total_cost(costliest_calls(filled, 10)) == pytest.approx(3.75)

def test_empty_and_missing(tmp_path, filled):
    assert usage_by_model(filled, user_id='nobody')._repr_markdown_() == '*no usage recorded*'
    with pytest.raises(FileNotFoundError, match='No usage database'): usage_by_model(tmp_path/'nope.db')
    assert not (tmp_path/'nope.db').exists()

# ---- registration ----

def test_two_loggers_both_record_and_uninstall_stops(fake_provider, usage_log, tmp_path):
    "litellm skips a logger that looks like one it already has; loggers on different files must both be called"
    fp = fake_provider
    a, b = usage_log(db=tmp_path/'a.db'), usage_log(db=tmp_path/'b.db')
    fp.queue('one', 'two')
    litellm.completion(messages=MSGS, **kw_for(fp, 'openai'))
    assert wait_until(lambda: count(tmp_path/'a.db') == 1 and count(tmp_path/'b.db') == 1)
    b.uninstall()
    litellm.completion(messages=MSGS, **kw_for(fp, 'openai'))
    assert wait_until(lambda: count(tmp_path/'a.db') == 2)
    assert count(tmp_path/'b.db') == 1  # a's row for the same call is in, and b's callback would have run beside it

def test_aflush_writes_async_rows_before_the_loop_ends(fake_provider, usage_log, tmp_path):
    fp = fake_provider
    lg = usage_log()
    fp.respond_with(lambda body, path: Reply('ok', usage=dict(input=2, output=3)))
    async def main():
        await asyncio.gather(*(litellm.acompletion(messages=MSGS, **kw_for(fp, 'anthropic')) for _ in range(10)))
        await lg.aflush()
        return count(tmp_path/'usage.db')
    assert asyncio.run(main()) == 10

# ---- leaving a `with` block (issue 18 item 3) ----

@pytest.mark.parametrize('stream', [False, True])
def test_with_block_keeps_the_last_calls_row(fake_provider, usage_log, tmp_path, stream):
    "litellm runs sync success callbacks in a thread after the call returns: leaving the block waits for them"
    usage_log(db=tmp_path/'warm.db')  # drains earlier tests' queued callbacks (the fixture), then stays out of the way
    fp, db = fake_provider, tmp_path/'with.db'
    for i in range(3):
        fp.queue(Reply(f'answer {i}', usage=dict(input=7, output=3)))
        with LisetteUsageLogger(db) as lg:
            r = Chat(**kw_for(fp, 'anthropic'))('hi', stream=stream)
            if stream: list(r)
        assert count(db) == i+1, f"call {i}: its row was lost when the block ended"
        assert not any(o is lg for o in litellm.callbacks)
    assert [(o['prompt_tokens'], o['completion_tokens']) for o in rows(db)] == [(7, 3)]*3

def test_async_with_block_keeps_the_last_calls_row(fake_provider, usage_log, tmp_path):
    usage_log(db=tmp_path/'warm.db')
    fp, db = fake_provider, tmp_path/'with.db'
    async def main():
        for i in range(3):
            fp.queue(Reply(f'answer {i}', usage=dict(input=7, output=3)))
            async with LisetteUsageLogger(db):
                await AsyncChat(**kw_for(fp, 'openai'))('hi')
            assert count(db) == i+1, f"call {i}: its row was lost when the block ended"
    asyncio.run(main())

def test_flush_is_bounded(tmp_path):
    "A callback that never finishes cannot hold the block open: `flush` gives up after `timeout` and says so"
    from litellm.litellm_core_utils.thread_pool_executor import executor
    ev = threading.Event()
    executor.submit(ev.wait, 10)
    try:
        lg = LisetteUsageLogger(tmp_path/'u.db')
        t = time.monotonic()
        assert lg.flush(timeout=0.3) is False
        assert time.monotonic()-t < 3
    finally: ev.set()
    assert lg.flush(timeout=5) is True

# ---- logger.usage(...): the original's row query (issue 16) ----

def test_usage_query_like_the_original(fake_provider, usage_log, tmp_path):
    fp = fake_provider
    lg = usage_log(user_id_fn=lambda: 'user-123')
    for i in range(3):
        fp.queue(Reply(f'a{i}', usage=dict(input=10*(i+1), output=2)))
        Chat(**kw_for(fp, 'openai'))('hi')
    assert wait_until(lambda: count(tmp_path/'usage.db') == 3)
    slc = 'id,model,user_id,prompt_tokens,completion_tokens,total_tokens,cached_tokens,cache_creation_tokens,cache_read_tokens,web_search_requests,response_cost'
    u = lg.usage(select=slc)[-1]
    assert (u.model, u.user_id, u.prompt_tokens, u.completion_tokens) == ('gpt-4o-mini', 'user-123', 30, 2)
    assert list(u) == slc.split(',') and u.response_cost == u['response_cost'] > 0
    assert len(lg.usage()) == 3 and sum(o.response_cost for o in lg.usage()) == pytest.approx(sum(o['response_cost'] for o in rows(tmp_path/'usage.db')))
    assert [o.prompt_tokens for o in lg.usage(select='prompt_tokens', where='prompt_tokens >= ?', where_args=[20], order_by='prompt_tokens DESC')] == [30, 20]
    assert [o.prompt_tokens for o in lg.usage(select='prompt_tokens', where={'user_id': 'user-123'}, order_by='prompt_tokens', limit=1, offset=1)] == [20]  # (not by id: litellm logs sync calls from a pool of threads, so rows may be written out of order)
    assert lg.usage(where={'model': "x' OR '1'='1"}) == []  # values are parameters

@pytest.mark.parametrize('kw,msg', [(dict(select='model, (SELECT 1)'), 'unknown column'), (dict(select='model FROM usage; DROP TABLE usage --'), 'unknown column'),
    (dict(where="model='a' OR 1=1"), 'where_args'), (dict(where='model = ? ; DROP TABLE usage', where_args=['a']), 'unexpected'),
    (dict(where='sqlite_version() = ?', where_args=['3']), 'unknown column'), (dict(where='model = ?'), '1 `?` but 0 where_args'),
    (dict(where={'1=1 OR model': 'a'}), 'unknown column'), (dict(order_by='id; DROP TABLE usage'), 'column names'),
    (dict(order_by='(SELECT 1)'), 'column names'), (dict(limit='1; DROP TABLE usage'), 'whole number'), (dict(limit=-1), 'whole number')])
def test_usage_query_is_injection_safe(filled, kw, msg):
    with pytest.raises(ValueError, match=re.escape(msg)): filled.usage(**kw)
    assert len(filled.usage()) == 4

def test_usage_default_order_is_when_calls_finished(tmp_path):
    "litellm logs sync calls from a pool of threads, so a later call can be written first: `usage()` sorts by finish time"
    with LisetteUsageLogger(tmp_path/'u.db') as lg:
        for i, ts in enumerate([100.0, 300.0, 200.0]):
            lg.record(dict(timestamp=ts, model='m', prompt_tokens=i, call_id=f'c{i}'))
        assert [o.prompt_tokens for o in lg.usage()] == [0, 2, 1]
        assert [o.prompt_tokens for o in lg.usage(order_by='id')] == [0, 1, 2]

# ---- databases that are not lisette's: a shared file is untrusted input ----

def _sql_db(p, *sql):
    "A database at `p` made by running `sql`, as another program would"
    c = sqlite3.connect(p)
    for o in sql: c.execute(o)
    c.commit(); c.close()
    return p

def _lisette_db(p):
    lg = LisetteUsageLogger(p); lg.record(dict(model='m', cost=1.0, timestamp=1.0)); lg.close()
    return p

def _cut(p, n=None):
    b = _lisette_db(p).read_bytes(); p.write_bytes(b[:n or len(b)//2])

_v2_table = f"CREATE TABLE usage ({', '.join(_schema_cols(SCHEMA_VERSION))})"
NOT_LISETTES = { # name: (make the file at p, what the UsageLogError says besides the path)
    'text': (lambda p: p.write_text('hello, not a database\n'*10), 'is not a SQLite database'),
    'truncated': (_cut, 'is damaged'),
    'header_only': (lambda p: _cut(p, 100), 'is damaged'),
    'other_app': (lambda p: _sql_db(p, 'CREATE TABLE notes (x)'), 'has tables (notes) but no `usage` table'),
    'their_usage_table': (lambda p: _sql_db(p, 'CREATE TABLE usage (id INTEGER PRIMARY KEY, model TEXT)', "INSERT INTO usage (model) VALUES ('m')"),
                          'it lacks timestamp, user_id, prompt_tokens and 7 more'),
    'their_usage_table_v2': (lambda p: _sql_db(p, 'CREATE TABLE usage (id INTEGER PRIMARY KEY, model TEXT)', 'PRAGMA user_version=2'), 'it lacks timestamp'),
    'extra_column': (lambda p: _sql_db(p, _v2_table, 'ALTER TABLE usage ADD COLUMN note TEXT', 'PRAGMA user_version=2'), 'it has note'),
    'usage_view': (lambda p: _sql_db(p, 'CREATE VIEW usage AS SELECT 1 AS id'), 'its `usage` is a view, not a table'),
    'only_views': (lambda p: _sql_db(p, 'CREATE VIEW totals AS SELECT 1 AS n'), 'it has views (totals) but no tables'),
    'no_table_v2': (lambda p: _sql_db(p, 'PRAGMA user_version=2'), 'it has no tables, yet its user_version is 2'),
    'unknown_version': (lambda p: _sql_db(p, _v2_table, 'PRAGMA user_version=7'), 'its user_version 7 is no lisette schema version'),
    'other_app_id': (lambda p: _sql_db(p, _v2_table, 'PRAGMA user_version=2', 'PRAGMA application_id=1196444487'), "application_id 0x47504b47 is another program's")}

@pytest.fixture(params=list(NOT_LISETTES))
def not_lisettes(request, tmp_path):
    "(path, expected words) of a file that is not a usable lisette usage database"
    make, words = NOT_LISETTES[request.param]
    p = tmp_path/f'{request.param}.db'
    make(p)
    return p, words

def _files(d): return {o.name: o.read_bytes() for o in d.iterdir()}

@pytest.mark.parametrize('query', [usage_by_model, usage_by_day, costliest_calls])
def test_queries_on_a_database_that_is_not_lisettes(not_lisettes, query):
    p, words = not_lisettes
    with pytest.raises(UsageLogError) as e: query(p)
    assert str(p) in str(e.value) and words in str(e.value)
    assert 'LisetteUsageLogger' in str(e.value) or 'backup' in str(e.value)  # says what to do

def test_queries_on_an_empty_or_older_database(tmp_path):
    (tmp_path/'empty.db').touch()
    with pytest.raises(UsageLogError, match='is an empty database'): usage_by_model(tmp_path/'empty.db')
    old = _sql_db(tmp_path/'v1.db', f"CREATE TABLE usage ({', '.join(_schema_cols(1))})")
    with pytest.raises(UsageLogError, match='written by an older lisette .*open it once with LisetteUsageLogger'): costliest_calls(old)

def test_logger_leaves_a_database_that_is_not_lisettes_as_it_was(not_lisettes, tmp_path):
    p, words = not_lisettes
    before = _files(tmp_path)
    lg = LisetteUsageLogger(p)  # reports, does not raise: see test_logger_on_a_database_that_is_not_lisettes_keeps_the_turn
    assert lg.record(dict(model='m', cost=1.0)) is False and lg.errors == 2
    lg.close()
    assert _files(tmp_path) == before  # not a byte changed, no journal or WAL file left
    with pytest.raises(UsageLogError) as e: lg.usage()
    assert str(p) in str(e.value) and words in str(e.value)

@pytest.mark.parametrize('case', ['other_app', 'their_usage_table', 'text'])
def test_logger_on_a_database_that_is_not_lisettes_keeps_the_turn(fake_provider, usage_log, tmp_path, caplog, case):
    fp, db = fake_provider, tmp_path/'theirs.db'
    NOT_LISETTES[case][0](db)
    before = db.read_bytes()
    lg = usage_log(db=db)
    msg = _three_calls_then_one_error(fp, lg, caplog)
    assert NOT_LISETTES[case][1] in msg and 'The call itself went ahead' in msg
    assert db.read_bytes() == before

def test_lisettes_databases_are_marked_and_older_ones_still_load(tmp_path):
    app_id = lambda p: sqlite3.connect(p).execute('PRAGMA application_id').fetchone()[0]
    assert app_id(_lisette_db(tmp_path/'new.db')) == _APP_ID
    # written before lisette marked its databases: known by its exact table, read, written, and left unmarked
    pre = _sql_db(tmp_path/'pre.db', _v2_table.replace('id,', 'id INTEGER PRIMARY KEY,', 1), 'PRAGMA user_version=2',
                  "INSERT INTO usage (model, cost, call_id) VALUES ('old', 2.0, 'a')")
    lg = LisetteUsageLogger(pre)
    assert lg.record(dict(model='new', cost=1.0, call_id='b')) and lg.errors == 0
    assert [(o.model, o.cost) for o in usage_by_model(lg)] == [('old', 2.0), ('new', 1.0)]
    lg.close()
    assert app_id(pre) == 0
    # the first lisette's table (fastlite's types, no version), beside an app's own tables: upgraded in place
    v1 = _sql_db(tmp_path/'v1.db', 'CREATE TABLE todos (x)', "CREATE TABLE usage ([id] INTEGER PRIMARY KEY, " +
                 ', '.join(f'[{n}] {dict(REAL="FLOAT").get(t, t)}' for n,t,v in _cols if v==1) + ')')
    LisetteUsageLogger(v1).close()
    assert usage_by_model(v1) == [] and sqlite3.connect(v1).execute('PRAGMA user_version').fetchone()[0] == SCHEMA_VERSION

def test_a_query_leaves_no_files_beside_a_closed_log(tmp_path):
    "A query opened the log read-only (mode=ro), which in WAL mode leaves -wal and -shm files it cannot clean up (in a shared folder, in a repo)"
    db = _lisette_db(tmp_path/'u.db')
    before = _files(tmp_path)
    assert list(before) == ['u.db']
    lg = LisetteUsageLogger(db); lg.close()
    for q in (usage_by_model, usage_by_day, costliest_calls, lambda db: lg.usage()): q(db)
    assert _files(tmp_path) == before  # not a byte changed, no file added
    # a logger still writing: its rows not yet checkpointed into the file are seen, and its files are left to it
    lg = LisetteUsageLogger(db); lg.record(dict(model='m', cost=2.0, timestamp=2.0, call_id='b'))
    assert [r['calls'] for r in usage_by_model(db)] == [2] and {'u.db-wal', 'u.db-shm'} <= set(_files(tmp_path))
    lg.close()
    assert list(_files(tmp_path)) == ['u.db']
    from lisette.usage import _read
    with pytest.raises(UsageLogError, match='readonly'): _read(db, "DELETE FROM usage")  # the queries' connection cannot write
    assert count(db) == 2

def test_query_table_shows_text_where_numbers_belong(tmp_path):
    "A shared file can hold anything in its columns: the table still shows"
    db = _lisette_db(tmp_path/'u.db')
    _sql_db(db, "INSERT INTO usage (timestamp, model, cost, prompt_tokens) VALUES ('yesterday', 5, 'lots', 'x')")
    md = costliest_calls(db)._repr_markdown_()
    assert '| lots |' in md and '$1.0000' in md
