"The fake provider speaks both wire protocols well enough for litellm's real parsers, streamed and not."
import json, socket, subprocess, sys, time, asyncio
import httpx, litellm, pytest
from lisette.testing import FakeProvider, Reply

def models(fp):
    return [('openai/gpt-4o-mini', dict(api_base=fp.openai_base, api_key='k')),
            ('anthropic/claude-sonnet-4-5', dict(api_base=fp.anthropic_base, api_key='k'))]

def call(fp, m, kw, stream, **extra):
    r = litellm.completion(m, [{'role': 'user', 'content': 'hi'}], stream=stream, num_retries=0, **kw, **extra)
    return litellm.stream_chunk_builder(list(r)) if stream else r

@pytest.mark.parametrize('stream', [False, True])
def test_text_tools_thinking_usage(fake_provider, stream):
    for m,kw in models(fake_provider):
        fake_provider.queue(Reply("Adding.", tool_calls=[('add', {'a': 1}), ('add', {'a': 2})], thinking='hmm',
                                  usage=dict(input=50, output=9, cache_read=20)))
        r = call(fake_provider, m, kw, stream, stream_options={'include_usage': True} if stream else None)
        msg = r.choices[0].message
        assert msg.content == 'Adding.'
        assert [json.loads(t.function.arguments) for t in msg.tool_calls] == [{'a': 1}, {'a': 2}]
        assert r.choices[0].finish_reason == 'tool_calls'
        assert msg.reasoning_content == 'hmm'
        # Anthropic's input_tokens excludes cache reads (as the real API); litellm adds them back into prompt_tokens
        assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (70 if m.startswith('anthropic') else 50, 9)
        assert r.usage.prompt_tokens_details.cached_tokens == 20

@pytest.mark.parametrize('stop,want', [('max_tokens', 'length'), ('refusal', 'content_filter'), ('end_turn', 'stop')])
def test_stop_reasons(fake_provider, stop, want):
    for m,kw in models(fake_provider):
        for stream in (False, True):
            fake_provider.queue(Reply("x", stop=stop))
            assert call(fake_provider, m, kw, stream).choices[0].finish_reason == want

def test_anthropic_thinking_blocks_and_search(fake_provider):
    fp = fake_provider
    fp.queue(Reply("Otters are mammals.", thinking='think', signature='sig1',
                   web_search=[{'query': 'otters', 'url': 'https://example.com/o', 'title': 'Otters', 'cited_text': 'mammals'}]))
    r = call(fp, 'anthropic/claude-sonnet-4-5', dict(api_base=fp.anthropic_base, api_key='k'), False)
    m = r.choices[0].message
    assert m.thinking_blocks[0]['signature'] == 'sig1'
    assert any(tc.id.startswith('srvtoolu_') for tc in m.tool_calls or [])
    assert r.usage.server_tool_use.web_search_requests == 1

def test_errors(fake_provider):
    fp = fake_provider
    for m,kw in models(fp):
        fp.queue(Reply(status=429, error='slow down'))
        with pytest.raises(litellm.RateLimitError, match='slow down'): call(fp, m, kw, False)
        fp.queue(Reply(status=400, error='bad thing'))
        with pytest.raises(litellm.BadRequestError, match='bad thing'): call(fp, m, kw, False)
        with pytest.raises(litellm.BadRequestError, match='no reply queued'): call(fp, m, kw, False)
    r = httpx.post(fp.url+'/v1/chat/completions', content=b'{not json')
    assert r.status_code == 400 and 'not valid JSON' in r.text
    r = httpx.post(fp.url+'/nope', json={})
    assert r.status_code == 404 and '/v1/messages' in r.text

def test_recording_hides_secrets(fake_provider):
    fp = fake_provider
    fp.queue('ok')
    call(fp, 'anthropic/claude-sonnet-4-5', dict(api_base=fp.anthropic_base, api_key='sk-secret-123'), False)
    rec = fp.requests[-1]
    assert rec.path == '/v1/messages' and rec.body['messages'][0]['content'][0]['text'] == 'hi'
    assert 'sk-secret-123' not in repr(rec.headers)

def test_concurrency(fake_provider):
    fp = fake_provider.respond_with(lambda body, path: f"echo {body['messages'][-1]['content']}")
    async def main():
        rs = await asyncio.gather(*(litellm.acompletion('openai/gpt-4o-mini', [{'role': 'user', 'content': str(i)}],
                                                        api_base=fp.openai_base, api_key='k') for i in range(30)))
        return [r.choices[0].message.content for r in rs]
    assert asyncio.run(main()) == [f'echo {i}' for i in range(30)]

def test_truncated_stream_raises(fake_provider):
    fp = fake_provider
    fp.queue(Reply("a b c d e f g h", truncate_after=3))
    with pytest.raises(Exception): call(fp, 'anthropic/claude-sonnet-4-5', dict(api_base=fp.anthropic_base, api_key='k'), True)

def test_shell(tmp_path):
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]
    p = subprocess.Popen([sys.executable, '-m', 'lisette.testing', '--port', str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        base = f'http://127.0.0.1:{port}'
        for _ in range(100):
            try:
                if httpx.get(base+'/health').status_code == 200: break
            except httpx.HTTPError: time.sleep(0.05)
        r = httpx.post(base+'/v1/chat/completions', json={'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]}).json()
        assert 'scripted local model' in r['choices'][0]['message']['content']
        r = httpx.post(base+'/v1/messages', json={'model': 'm', 'max_tokens': 10, 'messages': [{'role': 'user', 'content': 'hi'}]}).json()
        assert r['content'][0]['type'] == 'text' and r['stop_reason'] == 'end_turn'
        body = httpx.post(base+'/v1/chat/completions', json={'model': 'm', 'stream': True, 'messages': [{'role': 'user', 'content': 'hi'}]}).text
        assert body.rstrip().endswith('data: [DONE]')
        body = httpx.post(base+'/v1/messages', json={'model': 'm', 'stream': True, 'messages': [{'role': 'user', 'content': 'hi'}]}).text
        assert 'event: message_stop' in body
    finally: p.terminate(); p.wait(5)
