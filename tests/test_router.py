"Scale-out on litellm's Router: `Chat(model_group, completefunc=router.completion)` with two fake providers as two deployments."
import asyncio, json
import litellm, pytest
from litellm import Router
from lisette import *
from lisette.history import check_hist
from lisette.testing import FakeProvider, Reply

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

@pytest.fixture
def two():
    "Two fake providers, each one deployment"
    a, b = FakeProvider().start(), FakeProvider().start()
    yield a, b
    a.stop(); b.stop()

def mk_router(a, b, fallback=True, same_group=False, **kw):
    "A Router over `a` (group 'm') and `b` (group 'm', or 'm-b' with a fallback from 'm')"
    dep = lambda fp: dict(model='openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    ml = [dict(model_name='m', litellm_params=dep(a)), dict(model_name='m' if same_group else 'm-b', litellm_params=dep(b))]
    return Router(model_list=ml, fallbacks=[{'m': ['m-b']}] if fallback and not same_group else [], num_retries=0, **kw)

def failing(fp, status=500):
    fp.respond_with(lambda body, path: Reply(status=status, error='deployment down'))

def test_fallback_tool_loop(two):
    a, b = two
    failing(a)
    b.queue(Reply(tool_calls=[('add', dict(a=2, b=3))]), "2+3 is 5.")
    chat = Chat('m', tools=[add], completefunc=mk_router(a, b).completion)
    r = chat("What is 2+3?")
    assert contents(r).content == "2+3 is 5."
    assert len(a.requests) >= 1 and len(b.requests) == 2        # every failed call on `a` fell back to `b`
    tr = [m for m in b.last['messages'] if m.get('role') == 'tool']
    assert tr and tr[0]['content'] == '5'
    check_hist(chat.hist)
    assert chat.use.total_tokens == 30 and chat.use.cost > 0    # usage and cost of the two successful calls

def test_load_balanced_group(two):
    a, b = two
    for fp in two: fp.respond_with(lambda body, path: "ok")
    chat = Chat('m', completefunc=mk_router(a, b, same_group=True, routing_strategy='simple-shuffle').completion)
    for i in range(12): chat(f"turn {i}")
    assert len(a.requests) + len(b.requests) == 12
    assert a.requests and b.requests                            # both deployments served (p(miss) = 2 * 0.5**12)
    check_hist(chat.hist)

def test_stream_through_router(two):
    a, b = two
    failing(a)
    b.queue(Reply(tool_calls=[('add', dict(a=1, b=1))]), Reply(text="It is 2.", chunks=4))
    chat = Chat('m', tools=[add], completefunc=mk_router(a, b).completion)
    items = list(chat("1+1?", stream=True))
    assert contents(items[-1]).content == "It is 2."
    assert b.last['stream'] is True
    check_hist(chat.hist)
    assert chat.use.total_tokens == 30

async def test_async_router(two):
    a, b = two
    failing(a, status=429)
    b.respond_with(lambda body, path: Reply(tool_calls=[('add', dict(a=4, b=4))]) if not any(
        m.get('role') == 'tool' for m in body['messages']) else "8")
    router = mk_router(a, b)
    chats = [AsyncChat('m', tools=[add], completefunc=router.acompletion) for _ in range(5)]
    rs = await asyncio.gather(*(c("4+4?") for c in chats))
    assert [contents(r).content for r in rs] == ['8']*5
    for c in chats: check_hist(c.hist)
    res = [o async for o in await chats[0]("again", stream=True)]
    assert contents(res[-1]).content == '8' and b.last['stream'] is True
    check_hist(chats[0].hist)

# What the chat knows of a Router model group comes from its deployments (litellm's map does not know the group's name)

def claude_router(fp, *extra, name='claude', **kw):
    "A Router whose group `name` is Claude Sonnet 4.5 on `fp` (+ `extra` deployments)"
    dep = dict(model_name=name, litellm_params=dict(model='anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k'), **kw)
    return Router(model_list=[dep, *extra], num_retries=0)

@pytest.fixture
def fp():
    p = FakeProvider().start()
    yield p
    p.stop()

def test_group_known_through_its_deployment(fp):
    fp.respond_with(lambda body, path: "ok")
    chat = Chat('claude', sp='Be brief.', cache=True, cache_idxs=[0, -1], completefunc=claude_router(fp).completion)
    chat("hi")
    kinds = [a.kind for a in chat.adjustments]
    assert 'unknown_model' not in kinds and 'max_tokens' in kinds
    body = fp.last
    assert body['max_tokens'] == 64000                                  # Sonnet 4.5's maximum output, filled in by lisette
    assert body['system'][0].get('cache_control') and body['messages'][-1]['content'][-1].get('cache_control')
    r = chat("go on", prefill="Sure:")                                  # Claude takes a prefill: kept
    assert contents(r).content.startswith("Sure:") and 'prefill' not in [a.kind for a in chat.adjustments]

def test_mixed_group_takes_what_all_deployments_agree_on(fp):
    fp.respond_with(lambda body, path: "ok")
    gpt = dict(model_name='claude', litellm_params=dict(model='openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k'))
    chat = Chat('claude', completefunc=claude_router(fp, gpt).completion)
    chat("hi", prefill="Sure:")
    adj = {a.kind: a.detail for a in chat.adjustments}
    assert "openai/gpt-4o-mini (deployed in Router group claude) takes no assistant prefill" in adj["prefill"]  # so the group takes none
    assert "smallest maximum output of Router group claude's deployments" in adj['max_tokens']
    assert fp.last['max_tokens'] == 16384                               # GPT-4o mini's, the smaller
    assert not any(m['role'] == 'assistant' for m in fp.last['messages'])

def test_unknown_deployment_named(fp):
    fp.respond_with(lambda body, path: "ok")
    odd = dict(model_name='claude', litellm_params=dict(model='openai/my-finetune', api_base=fp.openai_base, api_key='k'))
    chat = Chat('claude', completefunc=claude_router(fp, odd).completion)
    with pytest.warns(AdjustmentWarning, match=r"openai/my-finetune \(deployed in Router group claude\)"): chat("hi")
    assert 'max_tokens' not in [a.kind for a in chat.adjustments]      # nothing filled in from a half-known group

@pytest.fixture
def own_model_map():
    "litellm 1.106's Router writes a deployment's model_info into litellm's global map (Sonnet's window stayed 3,000 for later tests): put a fresh copy back"
    saved = {k: dict(v) if isinstance(v, dict) else v for k,v in litellm.model_cost.items()}
    yield
    litellm.model_cost = saved
    for clear in (getattr(litellm.get_model_info, 'cache_clear', None), getattr(litellm.utils, '_invalidate_model_cost_lowercase_map', None)):
        if clear: clear()  # (litellm's own caches of the map)
    litellm.register_model({})  # (lisette's per-model caches start afresh after a register_model)

def test_deployment_window_bounds_the_chat(fp, own_model_map):
    "A context window set on the deployment (model_info) is the chat's: a request that cannot fit is shortened before it is sent"
    fp.respond_with(lambda body, path: "done")
    chat = Chat('claude', tools=[add], fit_context=True, max_tokens=100,
                completefunc=claude_router(fp, model_info=dict(max_input_tokens=3000)).completion)
    big = "word " * 4000
    chat.hist = [{'role': 'user', 'content': 'add'},
                 {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'toolu_1', 'type': 'function', 'function': {'name': 'add', 'arguments': '{"a":1}'}}]},
                 {'role': 'tool', 'tool_call_id': 'toolu_1', 'content': big}]
    chat("and now?")
    assert 'context' in [a.kind for a in chat.adjustments]
    assert len(fp.requests) == 1 and len(json.dumps(fp.last)) < 12000    # sent shortened (the result alone was 20,000 chars)

async def test_async_group_info(fp):
    "AsyncChat knows the group the same way"
    fp.queue(Reply(tool_calls=[('add', dict(a=2, b=2))]), "4")
    chat = AsyncChat('claude', tools=[add], completefunc=claude_router(fp).acompletion)
    r = await chat("2+2?")
    assert contents(r).content == "4" and 'unknown_model' not in [a.kind for a in chat.adjustments]
    assert fp.last['max_tokens'] == 64000
    check_hist(chat.hist)

def test_group_named_like_a_model_is_no_missing_key(fp, monkeypatch):
    "A group named like a model ('gpt-4o-mini') with the key in its deployment: a server error stays one, not a missing OPENAI_API_KEY"
    monkeypatch.delenv('OPENAI_API_KEY', raising=False)
    failing(fp)
    dep = dict(model_name='gpt-4o-mini', litellm_params=dict(model='openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k'))
    chat = Chat('gpt-4o-mini', completefunc=Router(model_list=[dep], num_retries=0).completion, retries=0)
    with pytest.raises(litellm.InternalServerError, match='deployment down'): chat("hi")
    check_hist(chat.hist)

# Mixed groups, changed deployments, subclasses, and the cost of streamed replies

def test_mixed_group_sends_only_generic_params(fp):
    "A group of different models: no provider's own parameters go to the others (thinking as reasoning_effort, litellm maps it per deployment)"
    fp.respond_with(lambda body, path: "ok")
    opus = dict(model_name='g', litellm_params=dict(model='anthropic/claude-opus-4-7', api_base=fp.anthropic_base, api_key='k'))
    gpt = dict(model_name='g', litellm_params=dict(model='openai/gpt-5.4', api_base=fp.openai_base, api_key='k'))
    chat = Chat('g', completefunc=Router(model_list=[opus, gpt], num_retries=0).completion)
    for i in range(20): chat(f"turn {i}", think='l')
    for r in fp.requests:
        assert ('thinking' in r.body) == (r.path == '/v1/messages'), (r.path, r.body.get('thinking'))
    assert {r.path for r in fp.requests} == {'/v1/messages', '/v1/chat/completions'}  # both served (p(miss) = 2 * 0.5**20: litellm picks a deployment at random)

def test_replaced_deployment_noticed(fp):
    "A deployment deleted and another added (the count unchanged): the chat learns the new model"
    fp.respond_with(lambda body, path: "ok")
    r = Router(model_list=[dict(model_name='h', litellm_params=dict(model='openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k'), model_info=dict(id='d1'))], num_retries=0)
    chat = Chat('h', completefunc=r.completion)
    chat('hi')
    r.delete_deployment('d1')
    r.add_deployment(litellm.types.router.Deployment(model_name='h', model_info=dict(id='d2'),
                     litellm_params=dict(model='anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')))
    chat('hi', prefill='Sure')
    assert chat._targets == ['anthropic/claude-sonnet-4-5'] and fp.last['max_tokens'] == 64000
    assert 'prefill' not in [a.kind for a in chat.adjustments]

def test_router_subclass_is_a_router(fp):
    "Up to litellm 1.106 a Router can be subclassed (1.110 forbids it): its methods are still a Router's"
    try:
        class MyRouter(Router): pass
    except TypeError as e:  # litellm 1.110+: nothing to recognise (this test's subclass case runs in CI's litellm 1.106 step)
        assert 'cannot be subclassed' in str(e)
        return
    fp.respond_with(lambda body, path: "ok")
    r = MyRouter(model_list=[dict(model_name='claude', litellm_params=dict(model='anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k'))])
    chat = Chat('claude', completefunc=r.completion)
    chat('hi')
    assert 'unknown_model' not in [a.kind for a in chat.adjustments] and fp.last['max_tokens'] == 64000

def test_streamed_reply_priced_by_deployment(fp):
    "A deployment priced in its model_info: a streamed reply costs what the same reply costs unstreamed"
    fp.respond_with(lambda body, path: Reply(text="ok", usage=dict(input=1000, output=100)))
    priced = dict(model_name='g', litellm_params=dict(model='openai/my-ft', api_base=fp.openai_base, api_key='k'),
                  model_info=dict(input_cost_per_token=1e-6, output_cost_per_token=2e-6, max_input_tokens=8000, max_output_tokens=1000))
    chat = Chat('g', completefunc=Router(model_list=[priced], num_retries=0).completion, max_tokens=10)
    chat("hi")
    plain = chat.last_use.cost
    list(chat("hi", stream=True))
    assert plain == pytest.approx(1000*1e-6 + 100*2e-6) and chat.last_use.cost == pytest.approx(plain)

def test_max_tokens_fits_the_fallbacks(fp):
    "max_tokens filled in from a Claude group fits its GPT-4o mini fallback too: the fallback answers instead of rejecting it"
    fp.respond_with(lambda body, path: Reply(status=500, error='down') if path == '/v1/messages' else
                    (Reply(status=400, error='max_tokens is too large') if body.get('max_tokens', 0) > 16384 else "from the fallback"))
    mini = dict(model_name='mini', litellm_params=dict(model='openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k'))
    r = Router(model_list=[dict(model_name='claude', litellm_params=dict(model='anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')), mini],
               fallbacks=[{'claude': ['mini']}], num_retries=0)
    chat = Chat('claude', completefunc=r.completion, retries=0)
    assert contents(chat("hi")).content == "from the fallback"
    assert fp.last['max_tokens'] == 16384
    assert "smallest maximum output of Router group claude's deployments and fallbacks" in dict(chat.adjustments)['max_tokens']

@pytest.mark.parametrize('stream', [False, True])
def test_sync_timeout_through_router(stream):
    "Chat(timeout=) holds for a sync chat on router.completion: the limit goes to the Router, which passes it to its deployment (it waited for the late answer)"
    from lisette.chat import ChatTimeout
    with FakeProvider() as fp:
        fp.queue(Reply('late answer', delay=3) if not stream else Reply('a b c d e f', chunks=3, chunk_delay=3))
        router = Router(model_list=[dict(model_name='g', litellm_params=dict(model='openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k'))], num_retries=0)
        chat = Chat('g', completefunc=router.completion, timeout=1, retries=0)
        with pytest.raises(ChatTimeout): list(chat('hi', stream=True)) if stream else chat('hi')
        assert chat.hist == []
