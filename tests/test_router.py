"Scale-out on litellm's Router: `Chat(model_group, completefunc=router.completion)` with two fake providers as two deployments."
import asyncio
import pytest
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
