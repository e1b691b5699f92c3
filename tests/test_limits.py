"A `Limiter` shared by many chats: concurrency cap (sync, async, streams), a shared pause after a 429, cancellation."
import asyncio, threading, time
from concurrent.futures import ThreadPoolExecutor
import pytest
from lisette import Chat, AsyncChat, contents
from lisette.limits import Limiter, retry_after
from lisette.testing import Reply

M = 'openai/gpt-4o-mini'

class Peak:
    "A `respond_with` function that records the most requests the provider was serving at once"
    def __init__(self, reply=lambda: Reply('ok', delay=0.05)):
        self.now = self.peak = 0; self.lk = threading.Lock(); self.reply = reply
    def __call__(self, body, path):
        with self.lk: self.now += 1; self.peak = max(self.peak, self.now)
        try:
            time.sleep(0.05)
            return self.reply()
        finally:
            with self.lk: self.now -= 1

def test_bad_arguments():
    with pytest.raises(ValueError, match='max_concurrent'): Limiter(max_concurrent=0)
    with pytest.raises(ValueError, match='rpm'): Limiter(rpm=0)

def test_async_chats_never_exceed_the_cap(fake_provider):
    fp, lim = fake_provider, Limiter(max_concurrent=3)
    fp.respond_with(peak := Peak(lambda: Reply('ok')))
    async def main():
        chats = [AsyncChat(M, api_base=fp.openai_base, api_key='k', limiter=lim) for _ in range(12)]
        return await asyncio.gather(*(c('hi') for c in chats))
    res = asyncio.run(main())
    assert [contents(r).content for r in res] == ['ok']*12
    assert peak.peak <= 3 and lim.requests == 12 and lim.inflight == 0

def test_sync_chats_in_threads_share_the_cap(fake_provider):
    fp, lim = fake_provider, Limiter(max_concurrent=2)
    fp.respond_with(peak := Peak(lambda: Reply('ok')))
    def one(_): return contents(Chat(M, api_base=fp.openai_base, api_key='k', limiter=lim)('hi')).content
    with ThreadPoolExecutor(6) as ex: assert list(ex.map(one, range(6))) == ['ok']*6
    assert peak.peak <= 2 and lim.inflight == 0

def test_stream_holds_its_slot_until_it_ends(fake_provider):
    fp, lim = fake_provider, Limiter(max_concurrent=1)
    fp.queue(Reply('one two three', chunks=3))
    chat = Chat(M, api_base=fp.openai_base, api_key='k', limiter=lim)
    it = iter(chat('hi', stream=True))
    next(it)
    assert lim.inflight == 1  # streaming: the request is still in flight
    for _ in it: pass
    assert lim.inflight == 0 and chat.hist[-1].content == 'one two three'

def test_abandoned_stream_gives_its_slot_back(fake_provider):
    fp, lim = fake_provider, Limiter(max_concurrent=1)
    fp.queue(Reply('one two three four', chunks=4))
    g = Chat(M, api_base=fp.openai_base, api_key='k', limiter=lim)('hi', stream=True)
    next(iter(g)); g.close()
    assert lim.inflight == 0

def test_429_pauses_every_chat_on_the_limiter(fake_provider):
    "One chat's 429 with retry-after makes the limiter pause: the other chats' requests wait for it too"
    fp, lim = fake_provider, Limiter(jitter=0.0)
    fp.queue(Reply(status=429, error='slow down', headers={'retry-after': '0.3'}))
    fp.respond_with(lambda body, path: Reply('ok'))
    c1 = Chat(M, api_base=fp.openai_base, api_key='k', limiter=lim)
    assert contents(c1('hi')).content == 'ok'  # retried after the pause
    assert lim.pauses == 1 and lim.paused_until > 0
    assert retry_after(type('E', (), {'litellm_response_headers': {'retry-after': '2'}})()) == 2.0
    # a request that starts during a pause waits at least until its end (checked on the reservation, not a clock)
    lim.backoff(secs=5)
    assert lim._start_in() >= 4.5

def test_cancelled_waiter_passes_its_slot_on():
    lim = Limiter(max_concurrent=1)
    async def main():
        await lim.aacquire()
        t = asyncio.create_task(lim.aacquire())
        await asyncio.sleep(0.01)
        t.cancel()
        with pytest.raises(asyncio.CancelledError): await t
        lim.release()
        assert lim.inflight == 0
        await asyncio.wait_for(lim.aacquire(), 1)  # the slot was not lost
        lim.release()
    asyncio.run(main())

def test_interrupted_sync_waiter_leaves_no_slot_behind():
    "Ctrl-C while a sync chat waits for a slot: the waiter leaves the queue, so the next release frees the slot (it was lost for good)"
    import signal
    lim = Limiter(max_concurrent=1)
    lim.acquire()
    ctrl_c = threading.Timer(0.2, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))  # (the user's Ctrl-C, while the main thread waits)
    ctrl_c.start()
    with pytest.raises(KeyboardInterrupt): lim.acquire()
    assert len(lim._waiters) == 0
    lim.release()
    assert lim.inflight == 0
    t = threading.Thread(target=lim.acquire, daemon=True)
    t.start(); t.join(2)
    assert not t.is_alive()  # the slot was there to take

@pytest.mark.parametrize('aio', [False, True])
def test_429_read_from_a_stream_pauses_the_limiter(proto, aio):
    "A 429 that surfaces only when the stream is read (Gemini's, raised lazily by litellm) pauses the limiter, as on every other route"
    fp, m, kw = proto
    lim = Limiter(max_concurrent=2, jitter=0.0)
    fp.queue(Reply(status=429, error='slow down', headers={'retry-after': '0.2'}), Reply('ok'))
    chat = (AsyncChat if aio else Chat)(m, limiter=lim, **kw)
    async def arun(): return [o async for o in await chat('hi', stream=True)]
    asyncio.run(arun()) if aio else list(chat('hi', stream=True))
    assert chat.hist[-1].content == 'ok' and lim.pauses == 1 and lim.inflight == 0 and len(fp.requests) == 2

def test_limiter_is_not_saved(tmp_path):
    from lisette.interop import save_chat, load_chat
    c = Chat(M, limiter=Limiter(max_concurrent=2))
    c2 = load_chat(save_chat(c, tmp_path/'c.json'))
    assert c2.limiter is None

@pytest.mark.parametrize('aio', [False, True])
@pytest.mark.parametrize('stream', [False, True])
def test_wait_for_a_slot_is_not_the_requests_time(fake_provider, aio, stream):
    "A chat that waits out the limiter's pause (another chat's 429) gets its whole `timeout` for the request itself"
    fp = fake_provider
    lim = Limiter(max_concurrent=2, jitter=0.0)
    lim.backoff(secs=1.5)  # as after a 429 with retry-after: 1.5
    fp.queue(Reply("ok", delay=0.3))
    chat = (AsyncChat if aio else Chat)('openai/gpt-4o-mini', limiter=lim, timeout=1, api_base=fp.openai_base, api_key='k')
    async def arun():
        r = await chat('hi', stream=stream)
        return [o async for o in r] if stream else r
    t0 = time.monotonic()
    asyncio.run(arun()) if aio else (list(chat('hi', stream=True)) if stream else chat('hi'))
    assert time.monotonic()-t0 >= 1.5 and chat.hist[-1].content == 'ok' and len(fp.requests) == 1
