"MCP tools in Chat and AsyncChat: real MCP servers (tests/mcp_server.py, written with the `mcp` SDK) over stdio and streamable HTTP, the model scripted by the fake provider."
import asyncio, json, os, signal, socket, subprocess, sys, threading, time, warnings
from pathlib import Path
import pytest
from lisette import *
from lisette.history import check_hist
from lisette.testing import Reply
from lisette.mcp import mcp_tools, MCPTools, MCPTool, sent_name

SERVER = str(Path(__file__).with_name('mcp_server.py'))
STDIO = [sys.executable, SERVER]

def add(a:int, b:int) -> int:
    "Add two integers, in Python"
    return a + b

def free_port():
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

@pytest.fixture(scope='module')
def http_url():
    "The test server over streamable HTTP, in a subprocess on a free local port"
    port = free_port()
    p = subprocess.Popen([sys.executable, SERVER, '--http', str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic()+60
        while True:
            try: socket.create_connection(('127.0.0.1', port), 0.2).close(); break
            except OSError:
                if p.poll() is not None or time.monotonic()>end: pytest.fail(f"the HTTP MCP server did not start (exit code {p.poll()})")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        p.terminate(); p.wait(10)

def results(chat):
    "The tool messages of `chat`'s history"
    return [m for m in chat.hist if isinstance(m, dict) and m.get('role')=='tool']

def sent_tools(fp):
    "(name, description, parameters) of each tool the model was offered in the last request, in any protocol"
    def one(t):
        if 'function' in t: return [(t['function']['name'], t['function'].get('description'), t['function']['parameters'])]
        if 'input_schema' in t: return [(t['name'], t.get('description'), t['input_schema'])]
        if t.get('type')=='function': return [(t['name'], t.get('description'), t.get('parameters'))]  # Responses
        return [(f['name'], f.get('description'), f.get('parameters')) for f in t.get('functionDeclarations') or t.get('function_declarations') or []]
    return [o for t in fp.last['tools'] for o in one(t)]

def test_schema_and_arguments_unchanged(proto):
    "The model gets each tool's name, description and input schema as the server states them; the server gets the model's arguments as sent"
    fp, m, kw = proto
    args = {'item-id': 'X-1', 'tags': ['a', 'b'], 'opts': {'depth': [1, {'k': None}]}, 'note': '[1, 2]'}
    fp.queue(Reply(tool_calls=[('record', args)]), "Recorded.")
    with warnings.catch_warnings(), mcp_tools(STDIO) as tools:  # (the warning of `notes.read`'s name: see test_tool_name_providers_refuse)
        warnings.simplefilter('ignore')
        listed = {t.name: t for t in tools}
        chat = Chat(m, tools=tools, **kw)
        chat("Record X-1")
    assert chat.tool_schemas == [{'type': 'function', 'function': {'name': t.__name__, 'description': t.description, 'parameters': t.input_schema}} for t in tools]
    assert [t.__name__ for t in tools] == [sent_name(t.name) for t in tools]  # (the server's names, unless a provider refuses them)
    sent = sent_tools(fp)
    if m.startswith('gemini'):  # litellm rewrites schemas into Gemini's OpenAPI subset: names and descriptions arrive as stated
        assert [o[:2] for o in sent] == [(t.__name__, t.description) for t in tools]
    elif m.startswith('openai'): assert sent == [(t.__name__, t.description, t.input_schema) for t in tools]
    # litellm's Anthropic adapter drops the schema's top-level `title`: the rest arrives as the server stated it
    else: assert sent == [(t.__name__, t.description, {k:v for k,v in t.input_schema.items() if k!='title'}) for t in tools]
    assert 'item-id' in listed['record'].input_schema['properties']
    assert json.loads(results(chat)[0]['content']) == args  # 'item-id' not renamed, '[1, 2]' still a string
    check_hist(chat.hist)

def test_text_image_and_error_results(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('add', {'a': 2, 'b': 40}), ('picture', {'caption': 'a dot'}), ('fail', {'why': 'testing'})]), "Done.")
    with mcp_tools(STDIO) as tools:
        chat = Chat(m, tools=tools, **kw)
        chat("go")
    r_add, r_pic, r_fail = [o['content'] for o in results(chat)]
    assert r_add == '42'
    assert [p['type'] for p in r_pic] == ['text', 'image_url'] and r_pic[0]['text'] == 'a dot'
    assert r_pic[1]['image_url']['url'].startswith('data:image/png;base64,iVBORw0KGgo')
    assert r_fail == 'Error executing tool fail: failed on purpose: testing'  # isError: the server's text (it says it is an error)
    # the provider received the image as an image, not as text
    assert 'iVBORw0KGgo' in json.dumps(fp.last)
    if 'messages' in fp.last:  # Chat Completions and Anthropic: an image block (Gemini and Responses carry it in their own part types)
        assert "data:image/png;base64,iVBORw0KGgo" not in json.dumps(fp.last['messages'][0])
        imgs = [b for msg in fp.last['messages'] if isinstance(msg.get('content'), list) for b in msg['content']
                for b in ([b] + (b.get('content') if isinstance(b.get('content'), list) else [])) if b.get('type') in ('image', 'image_url')]
        assert imgs, "no image block in the request"
    check_hist(chat.hist)

def test_image_no_provider_takes_is_left_out(proto):
    "An MCP tool's SVG image: left out of the result, the model and the user told, so every later request is not refused for it"
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('diagram', {'caption': 'the flow'})]), "Done.", "Next.")
    with mcp_tools(STDIO) as tools:
        chat = Chat(m, tools=tools, **kw)
        chat("draw it")
    assert 'svg' not in json.dumps(results(chat)) and 'the flow' in json.dumps(results(chat)) and 'left out' in json.dumps(results(chat))
    assert any(a.kind=='tool_result' and 'image/svg+xml' in a.detail for a in chat.adjustments)
    assert contents(chat("and then?")).content == "Next." and 'svg' not in json.dumps(fp.last)

def test_tool_name_providers_refuse(proto):
    "A tool named `notes.read` (MCP allows it, OpenAI refuses it): shown to the model as `notes_read`, said when the tools are listed; the call reaches the server by its own name"
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('notes_read', {'topic': 'otters'})]), "Done.")
    with pytest.warns(UserWarning, match="'notes.read' as 'notes_read'"), mcp_tools(STDIO) as tools:
        chat = Chat(m, tools=tools, **kw)
        chat("read the otter notes")
    assert 'notes_read' in [t[0] for t in sent_tools(fp)] and 'notes.read' not in json.dumps(fp.requests[0].body)
    assert results(chat)[0]['content'] == 'notes on otters'

def test_cancelled_async_turn_cancels_the_call_on_the_server(fake_provider, tmp_path):
    "An AsyncChat turn cancelled while an MCP tool runs cancels the call on the server (it ran on a worker thread through the sync call, and went on until the tool's timeout)"
    fp, marker = fake_provider, tmp_path/'nap'
    fp.queue(Reply(tool_calls=[('nap', {'marker': str(marker)})]), 'done')
    async def go(tools):
        chat = AsyncChat('openai/gpt-4o-mini', tools=tools, api_base=fp.openai_base, api_key='k')
        with pytest.raises(asyncio.TimeoutError): await asyncio.wait_for(chat('nap'), 3)
        return chat
    with warnings.catch_warnings(), mcp_tools(STDIO) as tools:
        warnings.simplefilter('ignore')
        chat = asyncio.run(go(tools))
        wait_file(marker, 10)
        assert any(marker.read_text()=='cancelled' or time.sleep(0.1) for _ in range(50)), marker.read_text()
    check_hist(chat.hist)

def test_sync_chat_runs_parallel_calls_concurrently(fake_provider):
    "Each `meet` call returns only once all 4 are in progress on the server: calls run one after another would fail"
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('meet', {'n': 4, 'i': i}) for i in range(4)]), "All met.")
    with mcp_tools(STDIO) as tools:
        chat = Chat('openai/gpt-4o-mini', tools=tools, api_base=fp.openai_base, api_key='k')
        chat("meet")
    assert [o['content'] for o in results(chat)] == [f'met {i}' for i in range(4)]

def test_async_chat_over_http(fake_provider, http_url):
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('meet', {'n': 3, 'i': i}) for i in range(3)] + [('add', {'a': 1, 'b': 2})]), "ok")
    async def go():
        async with mcp_tools(http_url) as tools:
            chat = AsyncChat('anthropic/claude-sonnet-4-5', tools=tools, api_base=fp.anthropic_base, api_key='k')
            await chat("meet and add")
            return chat
    chat = asyncio.run(go())
    assert [o['content'] for o in results(chat)] == ['met 0', 'met 1', 'met 2', '3']
    check_hist(chat.hist)

def test_sync_chat_over_http_with_headers(fake_provider, http_url):
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('header', {'name': 'x-team'})]), "ok")
    with mcp_tools(http_url, headers={'X-Team': 'lisette'}) as tools:
        chat = Chat('openai/gpt-4o-mini', tools=tools, api_base=fp.openai_base, api_key='k')
        chat("which team?")
    assert results(chat)[0]['content'] == 'lisette'

def test_stdio_env(fake_provider):
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('getenv', {'name': 'LISETTE_MCP_TEST'})]), "ok")
    with mcp_tools(STDIO, env={'LISETTE_MCP_TEST': 'from env'}) as tools:
        chat = Chat('openai/gpt-4o-mini', tools=tools, api_base=fp.openai_base, api_key='k')
        chat("env?")
    assert results(chat)[0]['content'] == 'from env'

def test_per_call_tools_and_mixing_sources(fake_provider, http_url):
    "Tools of two servers and a Python function in one chat; MCP tools passed per call"
    fp = fake_provider
    def shout(text:str) -> str:
        "Upper-case `text`"
        return text.upper()
    with mcp_tools(STDIO, name='stdio') as st, mcp_tools(http_url, name='http') as ht:
        fp.queue(Reply(tool_calls=[('picture', {'caption': 'c'}), ('getenv', {'name': 'X'}), ('shout', {'text': 'hi'})]), "ok")
        chat = Chat('openai/gpt-4o-mini', tools=[shout], api_base=fp.openai_base, api_key='k')
        chat("go", tools=[*[t for t in st if t.name=='picture'], *[t for t in ht if t.name=='getenv'], shout])
    c = [o['content'] for o in results(chat)]
    assert c[0][0]['text'] == 'c' and c[1] == '<unset>' and c[2] == 'HI'
    assert [t[0] for t in sent_tools(fp)] == ['picture', 'getenv', 'shout']

def test_name_clash_names_both_sources(http_url):
    with mcp_tools(STDIO) as st, mcp_tools(http_url) as ht:
        with pytest.raises(ValueError, match=r"Two tools are named `add`: MCP server `python\S* \S+mcp_server.py` and MCP server `http://127.0.0.1:\d+/mcp`"):
            Chat('openai/gpt-4o-mini', tools=[*st, *ht])
        with pytest.raises(ValueError, match=r"Two tools are named `add`: Python function test_mcp.add and MCP server `python"):
            Chat('openai/gpt-4o-mini', tools=[add, *st])
        chat = Chat('openai/gpt-4o-mini', tools=[t for t in st if t.name!='add'] + [add])  # no clash: fine
        with pytest.raises(ValueError, match="Two tools are named `add`"): chat("hi", tools=[add, *ht])

def test_server_killed_mid_call(proto, tmp_path):
    "The server process dies while a call is in flight: the model gets an error result, later calls say why, the history stays valid"
    fp, m, kw = proto
    marker = tmp_path/'pid'
    def killer():
        end = time.monotonic()+30
        while time.monotonic()<end:
            if marker.exists() and (pid := marker.read_text()): os.kill(int(pid), signal.SIGKILL); return
            time.sleep(0.02)
    fp.queue(Reply(tool_calls=[('block', {'marker': str(marker)}), ('add', {'a': 1, 'b': 1})]),
             Reply(tool_calls=[('add', {'a': 2, 'b': 2})]), "The server died.")
    with mcp_tools(STDIO, timeout=120) as tools:  # a timeout would give another message than the one asserted below
        chat = Chat(m, tools=tools, parallel_tools=False, **kw)
        k = threading.Thread(target=killer); k.start()
        chat("block", max_steps=3)
        k.join()
    c = [o['content'] for o in results(chat)]
    assert 'closed the connection during `block`' in c[0], c[0]
    assert all('is not connected' in o and 'closed the connection' in o for o in c[1:]), c
    assert chat.hist[-1].content == 'The server died.'
    check_hist(chat.hist)

def test_hanging_call_times_out(fake_provider, tmp_path):
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('block', {'marker': str(tmp_path/'pid')}), ('add', {'a': 1, 'b': 2})]), "It hung.")
    with mcp_tools(STDIO, timeout=1) as tools:
        chat = Chat('openai/gpt-4o-mini', tools=tools, api_base=fp.openai_base, api_key='k')
        chat("block")
        c = [o['content'] for o in results(chat)]
        assert tools[0](a=5, b=5) == '10'  # the session survives a timed-out call
    assert 'did not answer within 1 s' in c[0] and c[1] == '3'
    check_hist(chat.hist)

def test_async_hanging_call_times_out(fake_provider, tmp_path):
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('block', {'marker': str(tmp_path/'pid')})]), "It hung.")
    async def go():
        async with mcp_tools(STDIO, timeout=1) as tools:
            chat = AsyncChat('openai/gpt-4o-mini', tools=tools, api_base=fp.openai_base, api_key='k')
            await chat("block")
            return chat
    chat = asyncio.run(go())
    assert 'did not answer within 1 s' in results(chat)[0]['content']
    check_hist(chat.hist)

def test_direct_calls_and_closed_session():
    conn = mcp_tools(STDIO)
    tools = {t.name: t for t in conn.open()}
    assert repr(tools['add']) == f"MCPTool('add', server={conn.label!r})"
    assert tools['add'](a=2, b=3) == '5'
    assert asyncio.run(tools['add'].acall(a=2, b=5)) == '7'
    conn.close()
    assert 'is closed' in tools['add'](a=1, b=1)
    assert 'is closed' in asyncio.run(tools['add'].acall(a=1, b=1))
    conn.close()  # closing twice is fine

def test_bad_servers():
    with pytest.raises(ValueError, match="command list"): mcp_tools('python server.py')
    with pytest.raises(ValueError, match="non-empty list"): mcp_tools([])
    with pytest.raises(ValueError, match="`headers` are for http"): mcp_tools(STDIO, headers={'a': 'b'})
    with pytest.raises(ValueError, match="`env` and `cwd` are for stdio"): mcp_tools('http://localhost:1/mcp', env={'a': 'b'})
    with pytest.raises(ConnectionError, match="Could not connect to MCP server `no-such-mcp-server`"):
        with mcp_tools(['no-such-mcp-server']): pass
    with pytest.raises(ConnectionError, match=r"Could not connect to MCP server `http://127.0.0.1:\d+/mcp`"):
        with mcp_tools(f'http://127.0.0.1:{free_port()}/mcp', connect_timeout=20): pass
    # a process that is no MCP server (exits at once)
    with pytest.raises((ConnectionError, TimeoutError), match=r"MCP server `python\S* -c pass`"):
        with mcp_tools([sys.executable, '-c', 'pass'], connect_timeout=20): pass

def wait_file(p, secs=60):
    end = time.monotonic()+secs
    while not (p.exists() and p.read_text()):
        if time.monotonic()>end: pytest.fail(f"{p} never appeared")
        time.sleep(0.02)

def test_close_during_call(tmp_path):
    "Closing the connection while another thread waits for a call: that call gets an error result at once, not after `timeout`"
    marker, res = tmp_path/'pid', []
    conn = mcp_tools(STDIO, timeout=600)
    block = {t.name: t for t in conn.open()}['block']
    th = threading.Thread(target=lambda: res.append(block(marker=str(marker))))
    th.start()
    wait_file(marker)
    conn.close()
    th.join(60)
    assert not th.is_alive() and 'was closed while `block` ran' in res[0], res

def test_acall_cancelled_by_caller(tmp_path):
    "A caller's timeout cancels its call (the cancellation reaches the caller as such) and the session stays usable"
    with mcp_tools(STDIO, timeout=600) as tools:
        t = {o.name: o for o in tools}
        async def go():
            with pytest.raises(asyncio.TimeoutError): await asyncio.wait_for(t['block'].acall(marker=str(tmp_path/'pid')), 1)
            return await t['add'].acall(a=1, b=2)
        assert asyncio.run(go()) == '3'

@pytest.mark.parametrize('n', [1, 2])
def test_interrupted_sync_turn_cancels_the_call_on_the_server(fake_provider, tmp_path, n):
    """Ctrl-C in a sync Chat while MCP tools run cancels their calls on the server, as AsyncChat does (helper-45 finding 7:
    the call went on until the tool's timeout): the one running in the caller's thread, and those on the pool's threads"""
    fp, markers = fake_provider, [tmp_path/f'nap{i}' for i in range(n)]
    fp.queue(Reply(tool_calls=[('nap', {'marker': str(m)}) for m in markers]), 'done')
    with warnings.catch_warnings(), mcp_tools(STDIO, timeout=60) as tools:
        warnings.simplefilter('ignore')
        chat = Chat('openai/gpt-4o-mini', tools=tools, api_base=fp.openai_base, api_key='k')
        def ctrl_c():
            for m in markers: wait_file(m, 20)
            time.sleep(0.2); os.kill(os.getpid(), signal.SIGINT)  # (a real one: it wakes the wait for the call's result)
        threading.Thread(target=ctrl_c, daemon=True).start()
        with pytest.raises(KeyboardInterrupt): chat('nap')
        t0 = time.monotonic()
        for m in markers: assert any(m.read_text()=='cancelled' or time.sleep(0.1) for _ in range(50)), (m, m.read_text())
        assert time.monotonic()-t0 < 30  # cancelled by the interrupt, not by the 60 s timeout
    check_hist(chat.hist)
