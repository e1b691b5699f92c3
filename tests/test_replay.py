"""Record/replay with lisette.replay (cachy underneath): sessions recorded against the fake provider on a fixed port replay
identically with the server stopped and no key; misses name the request; recordings hold no secrets."""
import asyncio, json, os, shutil, socket, subprocess, sys, time
from pathlib import Path
import httpx, pytest
from cachy import enable_cachy, disable_cachy
from lisette import *
from lisette.replay import *
from lisette.replay import key_vars, placeholder_key
from lisette.testing import FakeProvider, Reply
from litellm import ModelResponseStream

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT/'tests'/'fixtures'/'replay_session.ipynb'
SECRET = 'sk-secret-XYZ'
MODELS = {'openai': ('openai/gpt-4o-mini', '/v1'), 'anthropic': ('anthropic/claude-sonnet-4-5', '')}

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

def free_port():
    "A port that is free now; the tests then use it as a fixed port for both record and replay"
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

@pytest.fixture
def port(): return free_port()

@pytest.fixture(autouse=True)
def clean_state(monkeypatch):
    # no provider key and no mode from the environment unless a test sets one; always leave httpx unpatched
    for k in key_vars + ('LISETTE_REPLAY',): monkeypatch.delenv(k, raising=False)
    yield
    disable_replay()

@pytest.fixture
def cache(tmp_path):
    "An empty recording (mode 'replay' reads one; the others would create it)"
    (p := tmp_path/'cachy.jsonl').touch()
    return p

def queue_session(fp):
    fp.queue("Hi Rens!", Reply(tool_calls=[('add', {'a': 40, 'b': 2})], usage={'input': 30, 'output': 7}), "40+2 is 42.",
             Reply(text="One, two, three.", usage={'input': 50, 'output': 6}), "Async works too.")

def session(model, base, api_key=None):
    "Text turn, tool loop, streamed turn, async turn: everything a notebook would show"
    kw = dict(api_base=base, api_key=api_key)
    chat = Chat(model, tools=[add], **kw)
    outs = [chat("Hi, I'm Rens"), chat("What is 40+2?")]
    chunks = list(chat("Count to three", stream=True))
    outs.append(chunks[-1])
    achat = AsyncChat(model, **kw)
    outs.append(asyncio.run(achat("And async?")))
    return dict(outs=[o.model_dump() for o in outs], contents=[contents(o).content for o in outs],
                stream_text=''.join(getattr(c.choices[0].delta, 'content', None) or '' for c in chunks if isinstance(c, ModelResponseStream)),
                hist=[m if isinstance(m, dict) else m.model_dump() for m in chat.hist], use=(repr(chat.use), repr(achat.use)))

def port_open(port):
    with socket.socket() as s: return s.connect_ex(('127.0.0.1', port))==0

@pytest.mark.parametrize('proto', MODELS)
def test_session_replays_identically_offline(proto, port, cache):
    model, suffix = MODELS[proto]
    url = f'http://127.0.0.1:{port}'
    with FakeProvider(port=port) as fp:
        queue_session(fp)
        with replaying(cache, mode='record', doms=(url,)):
            rec = session(model, url+suffix, api_key=SECRET)
        assert len(fp.requests) == 5 and fp.pending == 0
    assert not port_open(port)
    assert rec['contents'] == ['Hi Rens!', '40+2 is 42.', 'One, two, three.', 'Async works too.']
    assert rec['stream_text'] == 'One, two, three.'
    # the server is gone and there is no key at all: replay must answer every request from the file
    with replaying(cache, mode='replay', doms=(url,)):
        rep = session(model, url+suffix)
    assert rep == rec
    assert len(cache.read_text().splitlines()) == 5

def test_replay_key_does_not_depend_on_api_key(port, cache):
    url = f'http://127.0.0.1:{port}'
    with FakeProvider(port=port) as fp:
        fp.queue("recorded")
        with replaying(cache, mode='record', doms=(url,)):
            Chat('anthropic/claude-sonnet-4-5', api_base=url, api_key=SECRET)("hi")
    for key in ('another-key', None):
        with replaying(cache, mode='replay', doms=(url,)):
            assert contents(Chat('anthropic/claude-sonnet-4-5', api_base=url, api_key=key)("hi")).content == 'recorded'

@pytest.mark.parametrize('proto', MODELS)
def test_no_secrets_in_recording(proto, port, cache):
    model, suffix = MODELS[proto]
    url = f'http://127.0.0.1:{port}'
    with FakeProvider(port=port) as fp:
        queue_session(fp)
        with replaying(cache, mode='record', doms=(url,), hdrs=None):  # hdrs=None: keep every response header
            session(model, url+suffix, api_key=SECRET)
        sent = fp.requests[0].headers
    # the key did go out (so the test would notice if the recording kept request headers) ...
    assert sent.get('authorization' if proto=='openai' else 'x-api-key') == '***'  # masked by the fake provider
    text = cache.read_text()
    # ... but the file has none of it
    assert 'sk-secret' not in text
    for h in ('authorization', 'x-api-key', 'bearer'): assert h not in text.lower()
    assert recording_secrets(cache) == []

def test_default_recording_keeps_only_content_type(port, cache):
    url = f'http://127.0.0.1:{port}'
    with FakeProvider(port=port) as fp:
        fp.queue("a")
        with replaying(cache, mode='record', doms=(url,)): Chat('openai/gpt-4o-mini', api_base=url+'/v1', api_key=SECRET)("hi")
    recs = [json.loads(l) for l in cache.read_text().splitlines()]
    assert [set(r['headers']) for r in recs] == [{'content-type'}]
    assert set(recs[0]) == {'key', 'response', 'headers', 'status_code', 'binary'}  # responses only, never the request

def test_recording_secrets_finds_planted_secrets(cache, monkeypatch):
    monkeypatch.setenv('OPENAI_API_KEY', 'my-very-own-key-123')
    cache.write_text(json.dumps(dict(key='1', response='{"echo": "sk-abcdefghijklmnop"}', headers={'Authorization': 'x'}))+'\n'
                     + json.dumps(dict(key='2', response='token my-very-own-key-123', headers={}))+'\n')
    found = recording_secrets(cache)
    assert (1, 'header authorization') in found and (2, 'value of $OPENAI_API_KEY') in found
    assert any(i==1 and d.startswith('key-like string sk-abc') for i,d in found)

@pytest.mark.parametrize('kind', ['sync', 'stream', 'async'])
def test_miss_raises_and_names_request(kind, port, cache):
    url = f'http://127.0.0.1:{port}'
    with FakeProvider(port=port) as fp:  # running, so a request that slipped through would be seen here
        fp.queue("never sent")
        with replaying(cache, mode='replay', doms=(url,)):
            chat = AsyncChat if kind=='async' else Chat
            c = chat('openai/gpt-4o-mini', api_base=url+'/v1', api_key='k')
            with pytest.raises(ReplayMiss) as ei:
                if kind=='async': asyncio.run(c("unrecorded question"))
                else:
                    r = c("unrecorded question", stream=kind=='stream')
                    if kind=='stream': list(r)
        assert fp.requests == []
    e = ei.value
    assert (e.method, e.url, e.path) == ('POST', url+'/v1/chat/completions', str(cache))
    msg = str(e)
    for part in ('POST', url+'/v1/chat/completions', e.digest, e.key, str(cache)): assert part in msg
    assert len(e.digest) == 12
    assert c.hist == []  # the failed turn left no half-written history

def test_miss_digest_distinguishes_requests(port, cache):
    url = f'http://127.0.0.1:{port}'
    digests = []
    with replaying(cache, mode='replay', doms=(url,)):
        for q in ("one", "two", "one"):
            with pytest.raises(ReplayMiss) as ei: Chat('openai/gpt-4o-mini', api_base=url+'/v1', api_key='k')(q)
            digests.append(ei.value.digest)
    assert digests[0] == digests[2] != digests[1]

def test_other_hosts_pass_through(port, cache):
    "Only `doms` are recorded and refused; other hosts are not ours to block"
    with FakeProvider(port=port) as fp:
        fp.queue("live")
        with replaying(cache, mode='replay', doms=('api.openai.com',)):
            r = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')("hi")
        assert contents(r).content == 'live' and len(fp.requests) == 1
    assert cache.read_text() == ''

def test_auto_mode_records_misses_then_serves_hits(port, cache):
    url = f'http://127.0.0.1:{port}'
    with FakeProvider(port=port) as fp:
        fp.queue("first", "second")
        with replaying(cache, doms=(url,)):  # mode defaults to 'auto'
            a = Chat('openai/gpt-4o-mini', api_base=url+'/v1', api_key='k')("q")
            b = Chat('openai/gpt-4o-mini', api_base=url+'/v1', api_key='k')("q")
        assert len(fp.requests) == 1 and fp.pending == 1
    assert contents(a).content == contents(b).content == 'first'

def test_record_mode_refreshes_once_per_session(port, cache):
    url = f'http://127.0.0.1:{port}'
    ask = lambda: contents(Chat('openai/gpt-4o-mini', api_base=url+'/v1', api_key='k')("q")).content
    with FakeProvider(port=port) as fp:
        fp.queue("old", "new", "unused")
        with replaying(cache, mode='record', doms=(url,)): assert ask() == 'old'
        with replaying(cache, mode='record', doms=(url,)):
            assert ask() == 'new'
            assert ask() == 'new'  # the same request twice in one session is recorded once, so replay matches
        assert len(fp.requests) == 2
    with replaying(cache, mode='replay', doms=(url,)): assert ask() == 'new'
    assert len(cache.read_text().splitlines()) == 1

def test_mode_from_environment_and_bad_mode(cache, monkeypatch):
    monkeypatch.setenv('LISETTE_REPLAY', 'replay')
    assert enable_replay(cache).mode == 'replay'
    monkeypatch.setenv('LISETTE_REPLAY', 'replay-only')
    with pytest.raises(ValueError, match=r"Unknown replay mode 'replay-only'.*LISETTE_REPLAY.*'auto', 'replay', 'record'"): enable_replay(cache)

@pytest.mark.parametrize('how', ['argument', 'environment'])
def test_replay_mode_needs_an_existing_recording(tmp_path, monkeypatch, how):
    """mode='replay' given a recording that does not exist (a typo, the notebook run from another directory) created it,
    empty, with its directory, and the first request raised a ReplayMiss blaming the request. Replay only reads: it
    creates nothing, and says the recording is missing and how to make one; the other modes create it, as before"""
    import lisette.replay as R
    orig_send, path = httpx.Client.send, tmp_path/'notebooks'/'cachy.jsonl'
    if how=='environment': monkeypatch.setenv('LISETTE_REPLAY', 'replay')
    with pytest.raises(FileNotFoundError) as e: enable_replay(path, mode='replay' if how=='argument' else None)
    assert f"Replay recording {path} does not exist" in str(e.value) and "mode='auto' or 'record'" in str(e.value)
    assert list(tmp_path.iterdir()) == [] and R._state is None and httpx.Client.send is orig_send  # nothing made, nothing patched
    for mode in ('auto', 'record'):
        enable_replay(path, mode=mode); disable_replay()
        assert path.read_text() == ''
        path.unlink()
    with pytest.raises(IsADirectoryError, match=f"Replay recording {tmp_path} is a directory"): enable_replay(tmp_path, mode='auto')
    enable_replay(path, mode='auto')  # a replay on: a refused path leaves it on (it was switched off: helper-43 finding 7)
    try:
        on = R._state
        with pytest.raises(FileNotFoundError): enable_replay(tmp_path/'typo.jsonl', mode='replay')
        assert R._state is on and httpx.Client.send is not orig_send
    finally: disable_replay()

def test_disable_restores_clients_and_keys(cache, monkeypatch):
    orig_send, orig_asend = httpx.Client.send, httpx.AsyncClient.send
    monkeypatch.setenv('ANTHROPIC_API_KEY', 'mine')
    enable_replay(cache, mode='replay')
    assert httpx.Client.send is not orig_send
    assert os.environ['OPENAI_API_KEY'] == placeholder_key and os.environ['ANTHROPIC_API_KEY'] == 'mine'
    disable_replay()
    assert httpx.Client.send is orig_send and httpx.AsyncClient.send is orig_asend
    assert 'OPENAI_API_KEY' not in os.environ and os.environ['ANTHROPIC_API_KEY'] == 'mine'

def test_plain_cachy_still_works_and_shares_the_format(port, tmp_path):
    "The seed's `enable_cachy(debug=...)` / `disable_cachy()` usage is untouched, and its file replays under `enable_replay`"
    url = f'http://127.0.0.1:{port}'
    with FakeProvider(port=port) as fp:
        fp.queue("via cachy", "not used")
        enable_cachy(cache_dir=tmp_path, doms=(url,), debug=False)
        try:
            a = Chat('openai/gpt-4o-mini', api_base=url+'/v1', api_key='k')("hi")
            b = Chat('openai/gpt-4o-mini', api_base=url+'/v1', api_key='k')("hi")
        finally: disable_cachy()
        assert len(fp.requests) == 1
    assert contents(a).content == contents(b).content == 'via cachy'
    with replaying(tmp_path/'cachy.jsonl', mode='replay', doms=(url,)):
        assert contents(Chat('openai/gpt-4o-mini', api_base=url+'/v1')("hi")).content == 'via cachy'

_RUN_NB = """
import sys
from pathlib import Path
from nbdev.test import test_nb
ok, secs = test_nb(Path(sys.argv[1]), save=True)
sys.exit(0 if ok else 1)
"""

def run_fixture(nb, port, cache, mode, api_key=None):
    env = {k: v for k,v in os.environ.items() if k not in key_vars}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP='True', REPLAY_PORT=str(port), REPLAY_FILE=str(cache), LISETTE_REPLAY=mode,
               PYTHONPATH=str(ROOT))
    env.pop('FIXTURE_API_KEY', None)
    if api_key: env['FIXTURE_API_KEY'] = api_key
    r = subprocess.run([sys.executable, '-c', _RUN_NB, str(nb)], cwd=nb.parent, env=env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=600)
    assert r.returncode == 0, f"{mode} run of {nb.name} failed:\n{(r.stderr or r.stdout)[-3000:]}"
    return [c.get('outputs', []) for c in json.loads(nb.read_text())['cells'] if c['cell_type']=='code']

def test_notebook_outputs_identical_on_replay(port, tmp_path):
    cache = tmp_path/'cachy.jsonl'
    (tmp_path/'rec').mkdir(); (tmp_path/'rep').mkdir()
    rec_nb, rep_nb = shutil.copy(FIXTURE, tmp_path/'rec'), shutil.copy(FIXTURE, tmp_path/'rep')
    rec = run_fixture(Path(rec_nb), port, cache, 'record', api_key=SECRET)
    assert not port_open(port)  # the record run's server died with its process
    rep = run_fixture(Path(rep_nb), port, cache, 'replay')
    text = json.dumps(rec)
    for s in ('Hi Rens!', '40+2 is 42.', 'One, two, three.', 'Async works too.', 'chatcmpl-xxx'): assert s in text
    assert sum(map(len, rec)) >= 6
    assert rep == rec
    assert SECRET not in cache.read_text() and recording_secrets(cache) == []


# ---- a damaged recording names the file and line (issue 18 item 13) ----

def _record_two(port, cache):
    url = f'http://127.0.0.1:{port}'
    with FakeProvider(port=port) as fp:
        fp.queue("one", "two")
        with replaying(cache, mode='record', doms=(url,)):
            c = Chat('openai/gpt-4o-mini', api_base=url+'/v1', api_key='k')
            c("first"); c("second")
    assert len(cache.read_text().splitlines()) == 2
    return url

DAMAGE = [(lambda ls: [ls[0], ls[1][:len(ls[1])//2]], 2, 'not valid JSON'),
          (lambda ls: [ls[0], '{"key": 1, "response": "x"}'], 2, "'key' is int"),
          (lambda ls: ['{"response": "x"}', ls[1]], 1, "no 'key' field"),
          (lambda ls: [ls[0], json.dumps({**json.loads(ls[1]), 'binary': True, 'response': '%%%'})], 2, 'not valid base64'),
          (lambda ls: [ls[0], json.dumps({**json.loads(ls[1]), 'status_code': 'ok'})], 2, "'status_code' is 'ok'")]

@pytest.mark.parametrize('damage,line,problem', DAMAGE, ids=['truncated', 'key-type', 'no-key', 'bad-base64', 'status'])
def test_damaged_recording_names_file_and_line(port, cache, damage, line, problem):
    from lisette.replay import ReplayFileError
    url = _record_two(port, cache)
    cache.write_text('\n'.join(damage(cache.read_text().splitlines())) + '\n')
    with pytest.raises(ReplayFileError) as ei: enable_replay(cache, mode='replay', doms=(url,))
    assert (ei.value.path, ei.value.line) == (str(cache), line) and problem in str(ei.value) and str(cache) in str(ei.value)

@pytest.mark.parametrize('kind', ['sync', 'stream', 'async'])
def test_recording_damaged_while_replaying_is_not_a_connection_error(port, cache, kind):
    from lisette.replay import ReplayFileError
    url = _record_two(port, cache)
    with FakeProvider(port=port) as fp:
        with replaying(cache, mode='replay', doms=(url,)):
            ls = cache.read_text().splitlines()
            cache.write_bytes(b'\xff\xfe garbage\n' + '\n'.join(ls).encode() + b'\n')  # first, so every lookup reads it
            c = (AsyncChat if kind=='async' else Chat)('openai/gpt-4o-mini', api_base=url+'/v1', api_key='k')
            with pytest.raises(ReplayFileError, match=r'line 1: not UTF-8 text') as ei:
                if kind=='async': asyncio.run(c("second"))
                else:
                    r = c("second", stream=kind=='stream')
                    if kind=='stream': list(r)
        assert fp.requests == []
    assert ei.value.path == str(cache) and c.hist == []


# ---- a recording is untrusted input: every field replay uses is checked when the file is read ----

def _edit(**kw):
    "Damage: line 2 with fields `kw` changed (written as ASCII JSON, as cachy writes)"
    return lambda ls: [ls[0], json.dumps({**json.loads(ls[1]), **kw})]

def _cut_body(ls):
    "The second recording with its response cut inside its reply's text (not at its midpoint, which moves with the body's fields)"
    d = json.loads(ls[1])
    r = d['response']
    return [ls[0], json.dumps({**d, 'response': r[:r.index('"content": "')+len('"content": "t')]})]

FIELD_DAMAGE = {
    'header-int': (_edit(headers={'content-type': 5}), "header 'content-type' is int, not a string"),
    'header-null-value': (_edit(headers={'content-type': None}), "header 'content-type' is NoneType, not a string"),
    'header-not-ascii': (_edit(headers={'content-type': 'application/json; é'}), "header 'content-type' is 'application/json; é', not ASCII"),
    'header-name-not-ascii': (_edit(headers={'é': 'x'}), "header name 'é' is not ASCII"),
    'content-encoding': (_edit(headers={'content-type': 'application/json', 'content-encoding': 'gzip'}), "stored decoded"),
    'headers-falsy': (_edit(headers=0), "'headers' is int, not an object"),
    'status-500': (_edit(status_code=500), "'status_code' is 500, which cachy never records"),
    'status-429': (_edit(status_code=429), "'status_code' is 429, which cachy never records"),
    'status-301': (_edit(status_code=301), "'status_code' is 301, which cachy never records"),
    'binary-str': (_edit(binary='yes'), "'binary' is str, not true or false"),
    'lone-surrogate': (_edit(response='{"x": "\ud800"}'), "'response' has a lone surrogate ('\\ud800' at character 8)"),
    'json-body-cut': (_cut_body, "'response' is not valid JSON (Unterminated string"),
    'json-body-empty': (_edit(response=''), "'response' is not valid JSON (Expecting value at character 1)"),
    'json-body-binary-garbage': (_edit(binary=True, response='AAAA'), "'response' is not valid JSON"),
    'json-body-null': (_edit(response='null'), "'response' is null, not a JSON object (as every provider replies)"),
    'json-body-array-of-numbers': (_edit(response='[1, 2]'), "'response' is an array holding a number, not a JSON object (as every provider replies)"),
    'huge-integer': (lambda ls: [ls[0], ls[1][:-1] + ', "n": 1' + '0'*5000 + '}'], "JSON Python cannot read (Exceeds the limit (4300 digits)"),
    'cr-between-tokens': (lambda ls: [ls[0], ls[1].replace(', "response"', ',\r"response"', 1)], "a line break '\\r' inside the line"),
    'u2028-in-string': (lambda ls: [ls[0], json.dumps({**json.loads(ls[1]), 'note': 'a\u2028b'}, ensure_ascii=False)],
                        "a line break '\\u2028' inside the line"),
}

@pytest.mark.parametrize('name', FIELD_DAMAGE)
def test_damaged_field_is_reported_when_the_file_is_read(port, cache, name):
    "Each of these passed the old check and failed only when the response was rebuilt (or, for line breaks, when cachy rewrote the file)"
    damage, problem = FIELD_DAMAGE[name]
    url = _record_two(port, cache)
    assert json.loads(cache.read_text().splitlines()[1])['headers'] == {'content-type': 'application/json'}
    cache.write_bytes(('\n'.join(damage(cache.read_text().splitlines())) + '\n').encode('utf-8'))
    with pytest.raises(ReplayFileError) as ei: enable_replay(cache, mode='replay', doms=(url,))
    assert (ei.value.path, ei.value.line) == (str(cache), 2) and problem in ei.value.problem

@pytest.mark.parametrize('kind', ['sync', 'stream', 'async'])
def test_bad_header_while_replaying_is_named_at_once(port, cache, kind):
    "The reviewer's case: a non-string header value used to surface as a retried InternalServerError after ~3.7 s"
    url = _record_two(port, cache)
    with replaying(cache, mode='replay', doms=(url,)):
        cache.write_text(''.join(json.dumps({**json.loads(l), 'headers': {'content-type': 5}})+'\n' for l in cache.read_text().splitlines()))
        c = (AsyncChat if kind=='async' else Chat)('openai/gpt-4o-mini', api_base=url+'/v1', api_key='k')
        t0 = time.monotonic()
        with pytest.raises(ReplayFileError, match=r"line 1: header 'content-type' is int") as ei:
            if kind=='async': asyncio.run(c("first"))
            else:
                r = c("first", stream=kind=='stream')
                if kind=='stream': list(r)
    assert time.monotonic()-t0 < 1 and ei.value.path == str(cache) and c.hist == []

SHAPES = { # body of the second recorded reply: (openai's problem, anthropic's problem), each said when that line is served
    'no-list': ('{"unexpected": true}', ("'response' has no 'choices', which a reply to POST /v1/chat/completions holds (a list of objects)",
                                         "'response' has no 'content', which a reply to POST /v1/messages holds (a list of objects)")),
    'not-a-list': ('{"choices": 5, "content": "hi"}', ("'response' has 'choices' as a number, where a reply to POST /v1/chat/completions holds a list of objects",
                                                       "'response' has 'content' as a string, where a reply to POST /v1/messages holds a list of objects")),
    'not-objects': ('{"choices": [{}, 1], "content": [{}, null]}', ("'response' has 'choices' holding a number (item 2), where a reply to POST /v1/chat/completions holds a list of objects",
                                                                    "'response' has 'content' holding null (item 2), where a reply to POST /v1/messages holds a list of objects")),
    'array': ('[{"choices": []}]', ("'response' is an array, not the JSON object a reply to POST /v1/chat/completions is",
                                   "'response' is an array, not the JSON object a reply to POST /v1/messages is"))}

@pytest.mark.parametrize('kind', ['sync', 'async'])
@pytest.mark.parametrize('proto', MODELS)
@pytest.mark.parametrize('shape', SHAPES)
def test_reply_of_the_wrong_shape_is_named_when_served(port, cache, proto, kind, shape):
    "Valid JSON that is no reply of the request's endpoint surfaced later as litellm's own error (an InternalServerError, an APIConnectionError 'content'), naming no line"
    model, suffix = MODELS[proto]
    url = f'http://127.0.0.1:{port}'
    with FakeProvider(port=port) as fp:
        fp.queue("one", "two")
        with replaying(cache, mode='record', doms=(url,)):
            c = Chat(model, api_base=url+suffix, api_key='k'); c("first"); c("second")
    body, problems = SHAPES[shape]
    ls = cache.read_text().splitlines()
    cache.write_text('\n'.join([ls[0], json.dumps({**json.loads(ls[1]), 'response': body})]) + '\n')
    with replaying(cache, mode='replay', doms=(url,)):  # the file reads well: the shape a reply needs is known once the request is
        c = (AsyncChat if kind=='async' else Chat)(model, api_base=url+suffix, api_key='k')
        (asyncio.run(c("first")) if kind=='async' else c("first"))
        with pytest.raises(ReplayFileError) as ei: asyncio.run(c("second")) if kind=='async' else c("second")
    assert (ei.value.path, ei.value.line, ei.value.problem) == (str(cache), 2, problems[proto=='anthropic'])
    assert len(c.hist) == 2  # the failed turn left the history as it was

@pytest.mark.parametrize('proto', MODELS)
def test_an_error_sent_with_a_success_status_is_replayed_as_recorded(port, cache, proto):
    "Some providers send their error with a 200 (OpenRouter, Anthropic's overloaded): that is a recording as it was, for litellm to report, not a damaged line"
    model, suffix = MODELS[proto]
    url = f'http://127.0.0.1:{port}'
    with FakeProvider(port=port) as fp:
        fp.queue("one")
        with replaying(cache, mode='record', doms=(url,)): Chat(model, api_base=url+suffix, api_key='k')("first")
    err = {'type': 'error', 'error': {'type': 'overloaded_error', 'message': 'Overloaded'}}
    cache.write_text(json.dumps({**json.loads(cache.read_text()), 'response': json.dumps(err)}) + '\n')
    with replaying(cache, mode='replay', doms=(url,)):
        with pytest.raises(Exception) as ei: Chat(model, api_base=url+suffix, api_key='k', retries=0)("first")
    assert not isinstance(ei.value, ReplayFileError)

def test_key_on_two_lines_with_different_records(port, cache):
    "As a merge can leave it: replay served the first line, and recording any new call (cachy rewrites the file, keeping the last) silently switched it to the other"
    url = _record_two(port, cache)
    ls = cache.read_text().splitlines()
    d = json.loads(ls[0])
    other = json.dumps({**d, 'response': d['response'].replace('"id": "chatcmpl-', '"id": "merged-')})
    assert other != ls[0]
    cache.write_text('\n'.join(ls + [ls[0]]) + '\n')  # the same record twice: harmless
    enable_replay(cache, mode='replay', doms=(url,)); disable_replay()
    cache.write_text('\n'.join(ls + [other]) + '\n')
    before = cache.read_bytes()
    for mode in ('replay', 'auto'):
        with pytest.raises(ReplayFileError) as ei: enable_replay(cache, mode=mode, doms=(url,))
        assert (ei.value.line, ei.value.problem) == (3, f"key {d['key']!r} is also on line 1, with another record: "
                                                        "replay serves line 1, but recording any new call would keep only this one")
    assert cache.read_bytes() == before

SECRETS_DAMAGE = {'array': (b'[1, 2]', 'expected a JSON object, got list'), 'cut': (b'{"key": "b", "response": "y"', 'not valid JSON'),
                  'headers-list': (b'{"key": "b", "response": "y", "headers": [1]}', "'headers' is list, not an object"),
                  'not-utf8': (b'\xff', 'not UTF-8 text (byte 1)'),
                  'u2028': ('{"key": "b", "response": "y\u2028z"}'.encode(), "a line break '\\u2028'")}

@pytest.mark.parametrize('name', SECRETS_DAMAGE)
def test_recording_secrets_names_a_damaged_line(cache, name):
    "It used to raise a raw AttributeError, JSONDecodeError or UnicodeDecodeError"
    line, problem = SECRETS_DAMAGE[name]
    cache.write_bytes(b'{"key": "a", "response": "x"}\n' + line + b'\n')
    with pytest.raises(ReplayFileError) as ei: recording_secrets(cache)
    assert (ei.value.path, ei.value.line) == (str(cache), 2) and problem in ei.value.problem
