"""A chat through a local LiteLLM Proxy (nbs/06c_limits.ipynb, "Scaling out"): the proxy runs as a subprocess (the
`litellm` CLI of this venv) in front of a FakeProvider, and `Chat('openai/<proxy model name>', api_base=<proxy>,
api_key=<master key>)` talks to it as to any OpenAI-compatible server: plain, streamed and tool-loop turns, usage,
AsyncChat, and the proxy's key check.

The proxy is litellm's `[proxy]` extra, not a lisette dependency: without it this module is skipped, unless
LISETTE_REQUIRE_PROXY=1 (CI sets it, in `.venv-proxy`), where that is a failure. CI installs it on the oldest litellm
lisette supports, because the newest release's extra needs a `litellm-proxy` package PyPI does not have (see .ci/run)."""
import importlib.metadata, json, os, secrets, socket, subprocess, sys, time
from pathlib import Path
import httpx, pytest, litellm
from lisette import *
from lisette.history import check_hist
from lisette.testing import FakeProvider, Reply

START_TIMEOUT = 180  # seconds for the proxy to answer its liveliness probe (about 7 s on an idle 2-core machine)

def _proxy_missing():
    "What keeps the LiteLLM Proxy from running here: the `litellm` CLI next to this Python, and the requirements of litellm's `proxy` extra"
    # read from the installed packages' metadata, not by importing litellm.proxy.proxy_server (4-7 s in every full run);
    # a proxy installed but unable to start fails the fixture below, with its output
    from packaging.requirements import Requirement
    res = [] if (Path(sys.executable).parent/'litellm').exists() else [f"the `litellm` command next to {sys.executable}"]
    for s in importlib.metadata.requires('litellm') or []:
        r = Requirement(s)
        if not r.marker or not r.marker.evaluate({'extra': 'proxy'}) or r.marker.evaluate({'extra': ''}): continue
        try: v = importlib.metadata.version(r.name)
        except importlib.metadata.PackageNotFoundError: res.append(r.name); continue
        if not r.specifier.contains(v, prereleases=True): res.append(f"{r.name}{r.specifier} (has {v})")
    return res

if missing := _proxy_missing():
    v = importlib.metadata.version('litellm')
    why = (f"the LiteLLM Proxy (litellm's [proxy] extra, not a lisette dependency) is not installed with litellm {v}; missing: "
           f"{', '.join(missing[:6])}{f' and {len(missing)-6} more' if len(missing)>6 else ''}. CI runs this module in .venv-proxy (see .ci/run)")
    if os.environ.get('LISETTE_REQUIRE_PROXY') == '1': pytest.fail(f"LISETTE_REQUIRE_PROXY=1 but {why}", pytrace=False)
    pytest.skip(why, allow_module_level=True)

# every chat here names the proxy's model ('openai/mini'), which litellm's price map does not know: lisette warns once per chat
pytestmark = pytest.mark.filterwarnings('ignore::lisette.chat.AdjustmentWarning')

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

def _output(log):
    "The proxy's output so far (its end)"
    txt = log.read_text(errors='replace') if log.exists() else ''
    return txt[-6000:] or '(no output)'

@pytest.fixture(scope='module')
def proxy(tmp_path_factory):
    "(fake provider, proxy url, master key): a LiteLLM Proxy on localhost serving model 'mini' from a FakeProvider"
    d = tmp_path_factory.mktemp('proxy')
    fp = FakeProvider().start()
    cfg, log, port = d/'proxy.yaml', d/'proxy.log', _free_port()
    cfg.write_text("model_list:\n  - model_name: mini\n    litellm_params: "
                   + json.dumps(dict(model='openai/gpt-4o-mini', api_base=fp.openai_base, api_key='fake')) + "\n")
    key = 'sk-' + secrets.token_urlsafe(32)
    env = {**os.environ, 'LITELLM_MASTER_KEY': key, 'LITELLM_LOCAL_MODEL_COST_MAP': 'True', 'PYTHONUNBUFFERED': '1'}
    env.pop('DATABASE_URL', None)  # no database: the proxy must not try to use one the environment happens to name
    url, t0 = f'http://127.0.0.1:{port}', time.monotonic()
    with open(log, 'wb') as out:
        proc = subprocess.Popen([str(Path(sys.executable).parent/'litellm'), '--config', str(cfg), '--host', '127.0.0.1', '--port', str(port)],
                                cwd=d, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the LiteLLM Proxy exited (code {proc.returncode}) before answering {url}/health/liveliness; its output:\n{_output(log)}", pytrace=False)
            try:
                if httpx.get(f'{url}/health/liveliness', timeout=2).status_code == 200: break
            except httpx.HTTPError: pass
            if time.monotonic()-t0 > START_TIMEOUT:
                pytest.fail(f"the LiteLLM Proxy did not answer {url}/health/liveliness within {START_TIMEOUT} s; its output:\n{_output(log)}", pytrace=False)
            time.sleep(0.25)
        print(f"\nLiteLLM Proxy {importlib.metadata.version('litellm')} up at {url} in {time.monotonic()-t0:.1f} s")
        yield fp, url, key
    finally:
        proc.terminate()
        try: proc.wait(20)
        except subprocess.TimeoutExpired: proc.kill(); proc.wait()
        fp.stop()

@pytest.fixture
def px(proxy):
    "The module's proxy, its FakeProvider reset for this test"
    fp, url, key = proxy
    fp.reset()
    return fp, dict(api_base=url, api_key=key)

def test_plain_turn(px):
    fp, kw = px
    fp.queue(Reply('hello through the proxy', usage=dict(input=7, output=3)))
    chat = Chat('openai/mini', **kw)
    r = chat('hi')
    assert contents(r).content == 'hello through the proxy'
    assert len(fp.requests) == 1 and fp.requests[0].path == '/v1/chat/completions'
    assert fp.last['model'] == 'gpt-4o-mini'                    # the proxy mapped its 'mini' to the deployment's model
    assert fp.last['messages'][-1] == {'role': 'user', 'content': 'hi'}
    assert (chat.use.prompt_tokens, chat.use.completion_tokens, chat.use.total_tokens) == (7, 3, 10)
    # the reply names the proxy's model ('mini', which litellm's price map does not know), and its cost is the proxy's:
    # litellm takes the x-litellm-response-cost header, the deployment model's price (the same local price map here)
    assert r.model == 'mini'
    p = litellm.model_cost['gpt-4o-mini']
    assert chat.use.cost == pytest.approx(7*p['input_cost_per_token'] + 3*p['output_cost_per_token']) and chat.use.cost > 0
    check_hist(chat.hist)
    assert len(chat.hist) == 2

def test_streamed_turn(px):
    fp, kw = px
    fp.queue(Reply('streamed through the proxy, in pieces', chunks=5, usage=dict(input=11, output=6)))
    chat = Chat('openai/mini', **kw)
    items = list(chat('stream please', stream=True))
    assert contents(items[-1]).content == 'streamed through the proxy, in pieces'
    deltas = [o.choices[0].delta.content for o in items[:-1] if isinstance(o, litellm.ModelResponseStream) and o.choices and o.choices[0].delta.content]
    assert len(deltas) >= 5 and ''.join(deltas) == 'streamed through the proxy, in pieces'  # arrived in pieces, not at once
    assert fp.last['stream'] is True
    assert (chat.use.prompt_tokens, chat.use.completion_tokens) == (11, 6) and chat.use.cost > 0
    check_hist(chat.hist)

@pytest.mark.parametrize('stream', [False, True])
def test_tool_loop(px, stream):
    fp, kw = px
    fp.queue(Reply(tool_calls=[('add', dict(a=2, b=3))], usage=dict(input=50, output=10)),
             Reply('2+3 is 5.', usage=dict(input=70, output=11)))
    chat = Chat('openai/mini', tools=[add], **kw)
    r = chat('What is 2+3?', stream=stream)
    if stream: r = list(r)[-1]
    assert contents(r).content == '2+3 is 5.'
    assert len(fp.requests) == 2 and all(bool(b.get('stream')) is stream for b in fp.bodies)
    assert [t['function']['name'] for t in fp.bodies[0]['tools']] == ['add']  # the proxy passed the tool schema on
    call = fp.bodies[1]['messages'][-2]['tool_calls'][0]
    tr = fp.bodies[1]['messages'][-1]
    assert tr['role'] == 'tool' and tr['content'] == '5' and tr['tool_call_id'] == call['id']  # the tool ran; its result went back through the proxy
    assert json.loads(call['function']['arguments']) == dict(a=2, b=3)
    check_hist(chat.hist)
    assert [m['role'] if isinstance(m, dict) else m.role for m in chat.hist] == ['user', 'assistant', 'tool', 'assistant']
    assert (chat.use.prompt_tokens, chat.use.completion_tokens, chat.use.total_tokens) == (120, 21, 141)

async def test_async_turn(px):
    fp, kw = px
    fp.queue(Reply('async through the proxy', usage=dict(input=9, output=4)))
    chat = AsyncChat('openai/mini', **kw)
    r = await chat('hi async')
    assert contents(r).content == 'async through the proxy'
    assert fp.last['messages'][-1]['content'] == 'hi async'
    assert (chat.use.prompt_tokens, chat.use.completion_tokens) == (9, 4)
    check_hist(chat.hist)

def test_wrong_key_refused(px):
    "The proxy checks the key: a wrong one never reaches the provider"
    fp, kw = px
    chat = Chat('openai/mini', **{**kw, 'api_key': 'sk-not-the-master-key'})
    # without a database (so without virtual keys) the proxy answers any key but the master key with 400 "No connected db."
    with pytest.raises((litellm.AuthenticationError, litellm.BadRequestError)) as e: chat('hi')
    assert isinstance(e.value, litellm.AuthenticationError) or 'No connected db' in str(e.value), e.value  # not some other 400
    assert fp.requests == []
