"""How streams are shown: markdown parity with the original (thinking, details, tool summaries), the terminal renderers
(rich and plain), the demo on the command line, and the linear-time fixes for long replies."""
from lisette.messages import _get
import io, json, os, subprocess, sys
import pytest
import litellm
from litellm import ModelResponse
from litellm.types.utils import Usage
from lisette import Chat, AsyncChat, StreamFormatter, AsyncStreamFormatter, display_stream, adisplay_stream, fmt2hist, mk_msgs
from lisette import stream as lstream
from lisette.stream import print_stream, aprint_stream, TerminalStream, mk_tr_details
from lisette.testing import Reply

THINK = 'The user wants 1000 integers sorted. Timsort it is.'
ANSWER = '## Sorting 1000 integers\n\n- use `sorted(xs)`\n- O(n log n)'


def _args(m):
    "Arguments of the first tool call of `m` (litellm's Gemini request building turns the stored calls into dicts in place)"
    return _get(_get(m, 'tool_calls')[0], 'function', 'arguments')

def simple_add(a:int, b:int=0)->int:
    "Add two numbers"
    return a+b

def quote_tool(who:str)->str:
    "Greet someone"
    return f"It's '{who}'"

class _Recorder:
    "Stands in for IPython's display: records the markdown of every display and update"
    def __init__(self): self.shown = []
    def display(self, md, display_id=False):
        self.shown.append(md.data)
        return self if display_id else None
    def update(self, md): self.shown.append(md.data)
    def Markdown(self, s):
        from IPython.display import Markdown
        return Markdown(s)

@pytest.fixture
def notebook(monkeypatch):
    "Make display_stream believe it runs in a notebook, and record what it displays"
    rec = _Recorder()
    monkeypatch.setattr(lstream, '_in_notebook', lambda: True)
    monkeypatch.setattr(lstream, 'IN_JUPYTER', True)  # a live kernel: one display, updated in place
    monkeypatch.setattr(lstream, '_ipy_display', lambda: (rec.display, rec.Markdown))
    return rec

def _n_think_chunks(fp):
    "How many reasoning deltas the fake provider sent for THINK (it splits text into a few words each)"
    from lisette.testing import _split_text
    return len(_split_text(THINK))

# ---- 1. thinking then answer: a blank line between them, on both protocols, through every display path

def _check_think_md(outp, showthink=False):
    head, sep, rest = outp.partition('\n\n')
    assert sep and rest.startswith('## Sorting 1000 integers'), f'the answer must start after a blank line: {outp[:120]!r}'
    if showthink: assert head==THINK, head
    else: assert head and set(head)=={'🧠'}, head
    assert rest==ANSWER

def test_think_formatter(proto):
    fp, model, kw = proto
    fp.queue(Reply(ANSWER, thinking=THINK))
    chat = Chat(model, **kw)
    fmt = StreamFormatter()
    for _ in fmt.format_stream(chat('Sort 1000 ints', stream=True)): pass
    _check_think_md(fmt.outp)
    assert chat.hist[-1].content==ANSWER

def test_think_showthink(proto):
    fp, model, kw = proto
    fp.queue(Reply(ANSWER, thinking=THINK))
    fmt = StreamFormatter(showthink=True)
    for _ in fmt.format_stream(Chat(model, **kw)('Sort 1000 ints', stream=True)): pass
    _check_think_md(fmt.outp, showthink=True)

def test_think_display_stream(proto, notebook):
    fp, model, kw = proto
    fp.queue(Reply(ANSWER, thinking=THINK))
    fmt = display_stream(Chat(model, **kw)('Sort 1000 ints', stream=True))
    _check_think_md(fmt.outp)
    assert notebook.shown[-1]==fmt.outp, 'the display ends showing the whole markdown'

async def test_think_adisplay_stream(proto, notebook):
    fp, model, kw = proto
    fp.queue(Reply(ANSWER, thinking=THINK))
    fmt = await adisplay_stream(await AsyncChat(model, **kw)('Sort 1000 ints', stream=True))
    _check_think_md(fmt.outp)
    assert notebook.shown[-1]==fmt.outp

def test_think_resumes_after_text():
    "Thinking that resumes after text gets a blank line before its 🧠"
    from lisette import mk_stream_chunk
    fmt = StreamFormatter()
    for o in [mk_stream_chunk(content='First.'), mk_stream_chunk(reasoning_content='more'), mk_stream_chunk(content='Then.')]: fmt.format_item(o)
    assert fmt.outp=='First.\n\n🧠\n\nThen.'

def test_display_in_notebook_is_one_display(proto, notebook):
    "Jupyter experience unchanged: one display, updated in place, tool calls shown at once"
    fp, model, kw = proto
    fp.queue(Reply("Adding.", tool_calls=[('simple_add', {'a': 5, 'b': 7})]), "12.")
    display_stream(Chat(model, tools=[simple_add], **kw)('5+7?', stream=True))
    assert any('⏳' in s and '<details' not in s for s in notebook.shown), 'the pending line is shown before the result arrives'
    assert '→12</code></summary>' in notebook.shown[-1]

# ---- 2. details block

def test_details_block_as_documented():
    "The details list: id, model, finish reason and litellm's `Usage(...)` repr, as the documented outputs show them"
    r = ModelResponse(model='claude-sonnet-4-5', usage=Usage(prompt_tokens=30, completion_tokens=12, total_tokens=42),
                      choices=[dict(finish_reason='stop', message=dict(role='assistant', content='Hi!'))])
    md = r._repr_markdown_()
    assert md == f'Hi!\n\n<details markdown="1">\n\n- id: `{r.id}`\n- model: `claude-sonnet-4-5`\n- finish_reason: `stop`\n- usage: `{r.usage}`\n\n</details>'
    assert '- usage: `Usage(completion_tokens=12, prompt_tokens=30, total_tokens=42' in md

def test_chat_response_details(proto):
    fp, model, kw = proto
    fp.queue("Hi!")
    r = Chat(model, **kw)('Hi')
    md = r._repr_markdown_()
    assert '<details markdown="1">' in md and f'- usage: `{r.usage}`' in md and 'completion_tokens=5, prompt_tokens=10, total_tokens=15' in md, md

# ---- 3. tool summaries: quotes escaped; arguments keep their JSON values; fmt2hist rebuilds the exact call

def test_tool_summary_escapes_quotes_and_roundtrips(proto):
    fp, model, kw = proto
    fp.queue(Reply("Greeting.", tool_calls=[('quote_tool', {'who': "O'Brien"})]), "Done.")
    chat = Chat(model, tools=[quote_tool], **kw)
    fmt = StreamFormatter()
    for _ in fmt.format_stream(chat('Greet', stream=True)): pass
    assert '<summary><code>quote_tool(who=&quot;O&#x27;Brien&quot;)→&quot;It&#x27;s &#x27;O&#x27;Brien&#x27;&quot;</code></summary>' in fmt.outp  # (text quoted, as the original shows it)
    assert "<code>quote_tool(who=&quot;O&#x27;Brien&quot;)</code> ⏳" in fmt.outp
    h = fmt2hist(fmt.outp)
    assert h[0].tool_calls[0].function.arguments==_args(chat.hist[1])
    assert h[1]['content']==chat.hist[2]['content']=="It's 'O'Brien'"

def test_tool_args_keep_json_values(proto):
    fp, model, kw = proto
    fp.queue(Reply("Adding.", tool_calls=[('simple_add', {'a': 1234, 'b': 5678})]), "6912.")
    chat = Chat(model, tools=[simple_add], **kw)
    fmt = StreamFormatter()
    for _ in fmt.format_stream(chat('1234+5678?', stream=True)): pass
    js = json.loads(fmt.outp.split('```json\n')[1].split('\n```')[0])
    assert js['call']['arguments']=={'a': 1234, 'b': 5678}
    sent = _args(chat.hist[1])
    assert fmt2hist(fmt.outp)[0].tool_calls[0].function.arguments==sent, 'fmt2hist must rebuild the call the model made'
    # the rebuilt history sends the same tool call the model made
    assert mk_msgs(['1234+5678?', *fmt2hist(fmt.outp)])[1]['tool_calls'][0]['function']['arguments']==sent

def test_tool_args_truncate_only_long_strings():
    long = 'x'*5000
    tc = dict(id='t1', type='function', function=dict(name='f', arguments=json.dumps({'n': 7, 'f': 1.5, 'ok': True, 'none': None,
                                                                                     's': 'short', 'long': long, 'nested': [long, 3]})))
    d = mk_tr_details({'tool_call_id': 't1', 'role': 'tool', 'content': 'r'}, tc, mx=100)
    args = json.loads(d.split('```json\n')[1].split('\n```')[0])['call']['arguments']
    assert {k: args[k] for k in ('n', 'f', 'ok', 'none', 's')}=={'n': 7, 'f': 1.5, 'ok': True, 'none': None, 's': 'short'}
    assert args['long'].startswith('<TRUNCATED>') and len(args['long'])<200
    assert args['nested'][1]==3 and args['nested'][0].startswith('<TRUNCATED>')

# ---- 4. fmt2hist of plain text

def test_fmt2hist_plain_text_is_the_string():
    assert fmt2hist('Just an answer.')==['Just an answer.']
    assert mk_msgs(['Hi', *fmt2hist('Hello!')])==[{'role': 'user', 'content': 'Hi'}, {'role': 'assistant', 'content': 'Hello!'}]

# ---- 5. terminal rendering

class TTY(io.StringIO):
    def isatty(self): return True

def _tool_turn(fp):
    fp.queue(Reply("Let me add.", tool_calls=[('simple_add', {'a': 5, 'b': 7}), ('simple_add', {'a': 1, 'b': 2})], thinking='Two sums.'),
             Reply("5 + 7 = **12**, 1 + 2 = **3**.", thinking='Report.'))

EXPECTED_FILE = ("🧠 thinking…\n\nLet me add.\n\n🔧 simple_add(a=5, b=7) → 12\n🔧 simple_add(a=1, b=2) → 3\n\n"
                 "🧠 thinking…\n\n5 + 7 = **12**, 1 + 2 = **3**.\n")

@pytest.fixture
def no_rich(monkeypatch):
    "Hide rich, as when lisette is installed without the `cli` extra"
    for m in [m for m in sys.modules if m=='rich' or m.startswith('rich.')]: monkeypatch.delitem(sys.modules, m)
    for m in ('rich', 'rich.live', 'rich.console', 'rich.text'): monkeypatch.setitem(sys.modules, m, None)

def test_plain_file(proto, no_rich):
    "Plain fallback into a file: no escapes, no HTML, finished tool lines only; the formatter still has the markdown"
    fp, model, kw = proto
    _tool_turn(fp)
    buf = io.StringIO()
    fmt = print_stream(Chat(model, tools=[simple_add], **kw)('5+7 and 1+2?', stream=True), file=buf)
    assert isinstance(TerminalStream(io.StringIO()).out, lstream._PlainTerm), 'without rich the plain renderer is used'
    assert buf.getvalue()==EXPECTED_FILE
    assert '<details' in fmt.outp and len(fmt2hist(fmt.outp))==4

def test_plain_tty_redraws_pending_lines(proto, no_rich):
    "On a terminal each call shows as pending, then its line turns into `name(args) → result` in place"
    fp, model, kw = proto
    _tool_turn(fp)
    tty = TTY()
    print_stream(Chat(model, tools=[simple_add], **kw)('5+7 and 1+2?', stream=True), file=tty)
    out = tty.getvalue()
    i_pend, i_up = out.index('⏳ simple_add(a=5, b=7)'), out.index('\x1b[2F\x1b[J')
    assert i_pend < i_up < out.index('🔧 simple_add(a=5, b=7) → 12'), out
    assert '\x1b[2m🧠 thinking…\x1b[0m' in out and '<' not in out.replace('\x1b[', '')
    final = out[out.rindex('\x1b[2F\x1b[J'):]
    assert '⏳' not in final, 'after the last result no pending line is left'

def test_rich_file(proto):
    pytest.importorskip('rich')
    fp, model, kw = proto
    _tool_turn(fp)
    buf = io.StringIO()
    print_stream(Chat(model, tools=[simple_add], **kw)('5+7 and 1+2?', stream=True), file=buf, use_rich=True)
    assert buf.getvalue()==EXPECTED_FILE, 'rich into a file: the same text as the plain renderer, no escapes, no pending lines'

def test_rich_terminal(proto, monkeypatch):
    "rich on a terminal: pending lines drawn live, then replaced by the finished lines"
    pytest.importorskip('rich')
    monkeypatch.setenv('FORCE_COLOR', '1'); monkeypatch.delenv('NO_COLOR', raising=False); monkeypatch.setenv('TERM', 'xterm-256color')
    fp, model, kw = proto
    _tool_turn(fp)
    tty = TTY()
    term = TerminalStream(tty, use_rich=True)
    assert term.out.con.is_terminal
    for o in Chat(model, tools=[simple_add], **kw)('5+7 and 1+2?', stream=True): term.add(o)
    term.close()
    out = tty.getvalue()
    assert out.index('⏳ simple_add(a=5, b=7)') < out.rindex('🔧 simple_add(a=5, b=7)') and '→ 12' in out and '→ 3' in out
    assert out.rindex('5 + 7 = **12**') > out.rindex('→ 3')

async def test_async_terminal(proto, no_rich):
    fp, model, kw = proto
    _tool_turn(fp)
    buf = io.StringIO()
    fmt = await aprint_stream(await AsyncChat(model, tools=[simple_add], **kw)('5+7 and 1+2?', stream=True), file=buf)
    assert buf.getvalue()==EXPECTED_FILE and '<details' in fmt.outp

def test_display_stream_outside_notebook_prints_for_terminal(proto, capsys, no_rich):
    "Outside a notebook display_stream and adisplay_stream print for the terminal, never markup"
    fp, model, kw = proto
    _tool_turn(fp)
    fmt = display_stream(Chat(model, tools=[simple_add], **kw)('5+7 and 1+2?', stream=True))
    assert capsys.readouterr().out==EXPECTED_FILE and '<details' in fmt.outp
    assert not lstream._in_notebook()

async def test_adisplay_stream_outside_notebook(proto, capsys, no_rich):
    fp, model, kw = proto
    _tool_turn(fp)
    await adisplay_stream(await AsyncChat(model, tools=[simple_add], **kw)('5+7 and 1+2?', stream=True))
    assert capsys.readouterr().out==EXPECTED_FILE

def test_terminal_showthink(proto, no_rich):
    fp, model, kw = proto
    fp.queue(Reply(ANSWER, thinking=THINK))
    buf = io.StringIO()
    print_stream(Chat(model, **kw)('Sort', stream=True), file=buf, showthink=True)
    assert buf.getvalue()==f"{THINK}\n\n{ANSWER}\n"

def test_terminal_long_tool_line_is_one_line(no_rich):
    "A tool line never wraps on a terminal (the in-place redraw counts lines)"
    tty = TTY()
    term = TerminalStream(tty)
    tc = dict(id='t1', type='function', function=dict(name='f', arguments=json.dumps({'s': 'x'*500})))
    term.add(ModelResponse(choices=[dict(finish_reason='tool_calls', message=dict(role='assistant', content=None, tool_calls=[tc]))]))
    term.add({'tool_call_id': 't1', 'role': 'tool', 'name': 'f', 'content': 'y\n'*300})
    term.close()
    for l in tty.getvalue().replace('\x1b[1F\x1b[J', '\n').splitlines(): assert len(l) < 200, l

# ---- demo

def _demo(*args, hide_rich=False, env=None):
    code = ("import sys; sys.modules['rich']=None; sys.modules['rich.live']=None; sys.modules['rich.console']=None\n" if hide_rich else '') + \
           "from lisette.demo import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, '-c', 'import sys\n'+code, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, 'LITELLM_LOCAL_MODEL_COST_MAP': 'True', **(env or {})})

@pytest.mark.parametrize('hide_rich', [False, True])
def test_demo_terminal_output(hide_rich):
    r = _demo(hide_rich=hide_rich)
    assert r.returncode==0, r.stderr
    assert '🔧 simple_add(a=1234, b=5678) → 6912' in r.stdout and '⏳' not in r.stdout, r.stdout
    assert '<' not in r.stdout.replace('<TRUNCATED>', ''), 'no HTML in the terminal'
    assert 'The tool says the sum is **6912**.' in r.stdout

def test_demo_scripted_model_known():
    "The scripted model is registered with litellm: no 'unknown_model' warning as the demo's first output, and it is free"
    r = _demo()
    assert r.returncode==0 and 'unknown_model' not in r.stderr and 'Warning' not in r.stderr, r.stderr
    assert '(the scripted local model is free)' in r.stdout.splitlines()[-1], r.stdout

def test_demo_fake_priced_as_model():
    "With --fake, a real model's name prices the usage: the line says so, and that nothing was spent"
    r = _demo('--model', 'claude-sonnet-4-5', '--fake')
    assert r.returncode==0, r.stderr
    assert '(priced as claude-sonnet-4-5; the scripted local model answered, so nothing was spent)' in r.stdout.splitlines()[-1], r.stdout

@pytest.mark.parametrize('fake', [True, False])
def test_demo_model_typo(fake):
    "A model name litellm cannot route: one line naming it with the closest names litellm knows, not litellm's traceback"
    r = _demo('--model', 'gpt-4o-mni', *(['--fake'] if fake else []), env={'OPENAI_API_KEY': 'k'})
    assert r.returncode!=0 and r.stdout=='' and r.stderr.count('\n')==1, (r.returncode, r.stdout, r.stderr)
    assert "'gpt-4o-mni'" in r.stderr and 'did you mean gpt-4o-mini' in r.stderr and 'Traceback' not in r.stderr

def test_demo_missing_key():
    env = {k: '' for k in ('ANTHROPIC_API_KEY',)}
    r = subprocess.run([sys.executable, '-m', 'lisette.demo', '--model', 'anthropic/claude-sonnet-4-5'], capture_output=True, text=True,
                       timeout=120, env={**{k:v for k,v in os.environ.items() if k!='ANTHROPIC_API_KEY'}, 'LITELLM_LOCAL_MODEL_COST_MAP': 'True'})
    assert r.returncode!=0 and r.stdout=='' and r.stderr.count('\n')==1, (r.returncode, r.stdout, r.stderr)
    assert 'ANTHROPIC_API_KEY' in r.stderr and 'Traceback' not in r.stderr

def test_demo_rejected_key(fake_provider, monkeypatch, capsys):
    "A key the provider rejects: one line, non-zero exit"
    from lisette import demo
    fake_provider.queue(Reply(status=401, error='invalid x-api-key'))
    monkeypatch.setenv('ANTHROPIC_API_KEY', 'bad'); monkeypatch.setenv('ANTHROPIC_API_BASE', fake_provider.anthropic_base)
    orig = demo.Chat
    monkeypatch.setattr(demo, 'Chat', lambda m, **kw: orig(m, api_base=fake_provider.anthropic_base, retries=0, **kw))
    with pytest.raises(SystemExit) as e: demo.main(['--model', 'anthropic/claude-sonnet-4-5'])
    assert isinstance(e.value.code, str) and 'rejected the API key' in e.value.code and '\n' not in e.value.code

# ---- linear time for long replies

def test_stream_text_linear(proto):
    "litellm's text-so-far is appended to, not copied for every chunk, and still reads as the whole text"
    from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper
    fp, model, kw = proto
    text = ''.join(f'word{i} ' for i in range(3000))
    fp.queue(Reply(text, chunks=1000))
    chat = Chat(model, **kw)
    wrappers = []
    orig = chat.completefunc
    def spy(**k):
        r = orig(**k); wrappers.append(r); return r
    chat.completefunc = spy
    fmt = StreamFormatter()
    for o in chat('Long', stream=True): fmt.format_item(o)
    assert isinstance(vars(CustomStreamWrapper).get('response_uptil_now'), property)
    w = wrappers[0]
    assert len(w.__dict__['_lisette_text']) > 900, 'each delta appended as a piece, never joined during the stream'
    assert w.response_uptil_now==text.rstrip() or w.response_uptil_now==text
    assert len(fmt._parts) > 900 and fmt.outp==chat.hist[-1].content

def test_post_call_rules_still_see_text(fake_provider):
    from lisette.providers import _linear_stream_text
    _linear_stream_text()
    seen = []
    litellm.post_call_rules = [lambda s: seen.append(s) or True]
    try:
        fake_provider.queue(Reply('one two three four five six', chunks=3))
        list(litellm.completion('openai/gpt-4o-mini', [{'role': 'user', 'content': 'c'}], stream=True,
                                api_base=fake_provider.openai_base, api_key='k'))
    finally: litellm.post_call_rules = []
    assert seen[-1]=='one two three four five six' and all(seen[-1].startswith(s) for s in seen)

# ---- a spoken reply (OpenAI audio output): its words arrive as audio transcript deltas, and show live

def _spoken(fp):
    import time
    from test_switch import _spoken_stream
    fp.queue(_spoken_stream(['Hello', ' there!'], int(time.time())+3600))
    return dict(modalities=['text', 'audio'], audio={'voice': 'alloy', 'format': 'pcm16'})

def test_spoken_reply_shows_live(fake_provider, notebook):
    fp = fake_provider
    chat = Chat('openai/gpt-4o-audio-preview', api_base=fp.openai_base, api_key='k')
    fmt = display_stream(chat('Say hi', stream=True, **_spoken(fp)))
    assert fmt.outp == '🔊 Hello there!' and notebook.shown[-1] == fmt.outp

def test_spoken_reply_in_terminal(fake_provider, no_rich):
    fp = fake_provider
    buf = io.StringIO()
    print_stream(Chat('openai/gpt-4o-audio-preview', api_base=fp.openai_base, api_key='k')('Say hi', stream=True, **_spoken(fp)), file=buf)
    assert buf.getvalue() == '🔊 Hello there!\n'

def test_first_spoken_stream_is_quiet():
    "lisette's probe of litellm's stream builder (does it fail on audio?) logs nothing: litellm's error log is off while it runs"
    code = ("import os; os.environ['LITELLM_LOCAL_MODEL_COST_MAP']='True'\n"
            "from lisette.providers import _audio_stream_breaks\nprint(_audio_stream_breaks())")
    p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() in ('True', 'False'), p.stderr
    assert 'LiteLLM' not in p.stderr and 'Traceback' not in p.stderr, p.stderr


@pytest.mark.parametrize('stream', [False, True])
def test_provider_search_shown_as_call(fake_provider, stream):
    """Anthropic's own web search shows as a call, as the documented outputs show it (`🔧 web_search({...})` under the reply,
    `- ⏳ web_search(...) ⏳` in the stream's markdown), and as run in a terminal. litellm 1.106 lists it among the
    `tool_calls`, 1.110 only in `provider_specific_fields['server_tool_calls']`, where nothing showed it."""
    fp = fake_provider
    fp.queue(Reply('Otters hold hands.', web_search=[dict(query='otters', url='https://example.com/o', title='Otters', cited_text='hold hands')]))
    chat = Chat('anthropic/claude-sonnet-4-5', search='l', api_base=fp.anthropic_base, api_key='k')
    r = chat('otters?', stream=stream)
    if stream:
        buf, items = io.StringIO(), list(r)
        md = StreamFormatter().format_stream(iter(items))
        assert "- ⏳ <code>web_search(query=&#x27;otters&#x27;)</code> ⏳" in (md := ''.join(md))
        print_stream(iter(items), file=buf, use_rich=False)
        assert "🔧 web_search(" in buf.getvalue() and '→ run by the provider' in buf.getvalue() and '⏳' not in buf.getvalue()
        r = items[-1]
    body = r._repr_markdown_().split('<details')[0]
    assert body.count('🔧 web_search(') == 1, body
    if not stream: assert '"query": "otters"' in body  # (1.106's stream builder loses a server call's arguments)
    assert [m['role'] for m in chat.hist if isinstance(m, dict)] == ['user'] and len(chat.hist) == 2  # nothing for lisette to answer


def test_provider_search_then_tool_round_transcript(fake_provider):
    """A streamed turn that searches (the provider runs it) and calls a client tool: the markdown transcript keeps each
    call's line on its own (as the documented output shows them), `fmt2hist` rebuilds a valid history with no call for the search and no markup in the text,
    and the terminal shows the search as run and the tool with its result"""
    from lisette.history import check_hist
    fp = fake_provider
    fp.queue(Reply('Let me add.', web_search=[dict(query='otters', url='https://example.com/o', title='Otters', cited_text='x')],
                   tool_calls=[('simple_add', {'a': 1, 'b': 2})]), Reply('It is 3.'))
    chat = Chat('anthropic/claude-sonnet-4-5', search='l', tools=[simple_add], api_base=fp.anthropic_base, api_key='k')
    items = list(chat('otters and 1+2?', stream=True))
    md = ''.join(StreamFormatter().format_stream(iter(items)))
    assert "⏳ <code>web_search(query=&#x27;otters&#x27;)</code> ⏳" in md and "⏳ <code>simple_add(a=1, b=2)</code> ⏳" in md
    h = fmt2hist(md)
    check_hist(h)
    assert [c.function.name for m in h if not isinstance(m, dict) and m.tool_calls for c in m.tool_calls] == ['simple_add']
    assert '⏳' not in ''.join(m.content or '' for m in h if not isinstance(m, dict)) and h[-1].content.endswith('It is 3.')
    buf = io.StringIO()
    print_stream(iter(items), file=buf, use_rich=False)
    lines = [l for l in buf.getvalue().splitlines() if l.startswith('🔧')]
    assert lines == ["🔧 web_search(query='otters') → run by the provider", '🔧 simple_add(a=1, b=2) → 3'], lines

@pytest.mark.parametrize('args', ['[1, 2]', 'null', '"x"', '3'])
def test_display_of_arguments_that_are_not_an_object(fake_provider, args):
    "A provider's tool call whose arguments are JSON but not an object: answered with an error for the model, and shown as sent (the displays raised AttributeError)"
    import asyncio, warnings
    fp = fake_provider
    def add(a:int, b:int) -> int:
        "Add"
        return a+b
    for aio in (False, True):
        fp.queue(Reply(tool_calls=[dict(name='add', arguments=args, id='call_1')]), Reply('done'))
        chat = (AsyncChat if aio else Chat)('openai/gpt-4.1', tools=[add], api_base=fp.openai_base, api_key='x')
        out = io.StringIO()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            if aio:
                async def go(): await aprint_stream(await chat('go', stream=True), file=out, use_rich=False)
                asyncio.run(go())
            else: print_stream(chat('go', stream=True), file=out, use_rich=False)
        assert 'done' in out.getvalue() and f"arguments={args!r}" in out.getvalue(), out.getvalue()
        assert 'expected a JSON object' in chat.hist[2]['content']

# ---- a reply the chat adds a warning to (cut off, filtered): the stream's display ends with it, as the reply shows it

CUT = '<warning>Response was cut off at token limit.</warning>'

@pytest.mark.parametrize('stop,warning', [('max_tokens', CUT),
                                          ('refusal', '<warning>AI server provider content filter was applied to this request.</warning>')])
def test_stream_shows_stop_warning(proto, notebook, stop, warning):
    "The warning the chat appends to a cut-off or filtered reply came in no chunk: the live display ended without it"
    fp, model, kw = proto
    fp.queue(Reply("Every morning the robot", stop=stop))
    chat = Chat(model, **kw)
    fmt = display_stream(chat('A story', stream=True))
    assert chat.hist[-1].content == f"Every morning the robot\n\n{warning}"
    assert fmt.outp == chat.hist[-1].content and notebook.shown[-1] == fmt.outp
    assert fmt2hist(fmt.outp) == [chat.hist[-1].content]

def test_stream_warning_after_thinking_only(fake_provider, notebook):
    "A reply cut off while it thought (no text): the warning alone, after a blank line"
    fp = fake_provider
    fp.queue(Reply(thinking='Let me think about', stop='max_tokens'))
    chat = Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')
    fmt = display_stream(chat('Think', stream=True, think='l'))
    assert chat.hist[-1].content == CUT and fmt.outp.endswith(f"🧠\n\n{CUT}") and notebook.shown[-1] == fmt.outp

def test_stream_warning_in_terminal(proto, no_rich):
    "In a terminal the warning ends the output too, as text (no markup)"
    fp, model, kw = proto
    fp.queue(Reply("Every morning the robot", stop='max_tokens'))
    buf = io.StringIO()
    print_stream(Chat(model, **kw)('A story', stream=True), file=buf)
    assert buf.getvalue() == "Every morning the robot\n\n⚠ Response was cut off at token limit.\n"

async def test_async_stream_shows_warning(proto, notebook):
    fp, model, kw = proto
    fp.queue(Reply("Every morning the robot", stop='max_tokens'))
    chat = AsyncChat(model, **kw)
    fmt = await adisplay_stream(await chat('A story', stream=True))
    assert fmt.outp == chat.hist[-1].content == f"Every morning the robot\n\n{CUT}" and notebook.shown[-1] == fmt.outp

def test_ordinary_stream_unchanged(proto, notebook):
    "A reply that finished: no warning, the markdown is its text, as before"
    fp, model, kw = proto
    fp.queue(Reply("All done."))
    fmt = display_stream(Chat(model, **kw)('Hi', stream=True))
    assert fmt.outp == 'All done.' and notebook.shown[-1] == 'All done.'

# ---- text the live display held back (within 50 ms of its last update) shows during a pause, not only at the next chunk

import threading, time as _time
from lisette import mk_stream_chunk

def _display_threads(): return [t for t in threading.enumerate() if t.name.startswith('lisette-display') and t.is_alive()]

def _seen_in_pause(notebook, want, wait=3.):
    "What the display shows after up to `wait` seconds of a pause in the stream (as soon as it shows `want`)"
    end = _time.monotonic()+wait
    while notebook.shown[-1]!=want and _time.monotonic()<end: _time.sleep(0.01)
    return notebook.shown[-1]

def test_held_back_text_shows_in_a_pause(notebook):
    "The last words before a pause (a server-side search, a slow model) stayed invisible until the next chunk"
    seen = []
    def gen():
        yield mk_stream_chunk(content='First words. ')
        yield mk_stream_chunk(content='Then a sentence before a long pause.')  # within 50 ms of the first: held back
        seen.append(_seen_in_pause(notebook, 'First words. Then a sentence before a long pause.'))
        yield mk_stream_chunk(content=' After it.')
    fmt = display_stream(gen())
    assert seen == ['First words. Then a sentence before a long pause.']
    assert notebook.shown[-1] == fmt.outp == 'First words. Then a sentence before a long pause. After it.'
    assert not _display_threads(), 'nothing left running after the stream'

async def test_held_back_text_shows_in_a_pause_async(notebook):
    import asyncio
    seen = []
    async def agen():
        yield mk_stream_chunk(content='First words. ')
        yield mk_stream_chunk(content='Then a pause.')
        end = _time.monotonic()+3
        while notebook.shown[-1]!='First words. Then a pause.' and _time.monotonic()<end: await asyncio.sleep(0.01)
        seen.append(notebook.shown[-1])
        yield mk_stream_chunk(content=' After it.')
    fmt = await adisplay_stream(agen())
    assert seen == ['First words. Then a pause.'] and notebook.shown[-1] == fmt.outp
    assert not _display_threads()

def test_live_trailing_update_with_a_fake_clock(monkeypatch):
    "`_Live` driven directly: a held-back chunk shows once `every` has passed on its clock, once; closing stops its thread"
    rec, now = _Recorder(), [100.]
    monkeypatch.setattr(lstream, 'IN_JUPYTER', True)
    monkeypatch.setattr(lstream, '_ipy_display', lambda: (rec.display, rec.Markdown))
    live = lstream._Live(StreamFormatter(), every=0.5, clock=lambda: now[0])
    live.add(mk_stream_chunk(content='a'))
    now[0] += 0.01
    live.add(mk_stream_chunk(content='b'))
    assert rec.shown[-1] == 'a'
    now[0] += 1  # the interval passes: the thread, asleep for what was left of it (0.49 s), then shows 'ab'
    end = _time.monotonic()+3
    while rec.shown[-1]!='ab' and _time.monotonic()<end: _time.sleep(0.01)
    assert rec.shown[-1] == 'ab'
    _time.sleep(0.1)
    assert rec.shown.count('ab') == 1, 'shown once, not again and again'
    live.close()
    assert not _display_threads()

def test_failed_stream_leaves_no_thread(notebook):
    "A stream that fails after text was held back: the display shows that text, and no thread is left running"
    def gen():
        yield mk_stream_chunk(content='Some ')
        yield mk_stream_chunk(content='words')
        raise RuntimeError('connection lost')
    with pytest.raises(RuntimeError, match='connection lost'): display_stream(gen())
    assert notebook.shown[-1] == 'Some words' and not _display_threads()

# ---- print_stream inside a Jupyter kernel: the plain renderer (rich there makes one output per write, with raw ANSI codes)

def test_print_stream_in_a_kernel_is_plain(proto, monkeypatch):
    pytest.importorskip('rich')
    monkeypatch.setattr(lstream, '_in_notebook', lambda: True)
    assert isinstance(TerminalStream(io.StringIO()).out, lstream._PlainTerm), 'in a kernel the plain renderer is the default'
    assert isinstance(TerminalStream(io.StringIO(), use_rich=True).out, lstream._RichTerm), 'rich when asked for'
    fp, model, kw = proto
    _tool_turn(fp)
    buf = io.StringIO()
    print_stream(Chat(model, tools=[simple_add], **kw)('5+7 and 1+2?', stream=True), file=buf)
    assert buf.getvalue()==EXPECTED_FILE

def test_print_stream_in_a_terminal_uses_rich():
    "Outside a kernel nothing changes: rich when installed"
    pytest.importorskip('rich')
    assert not lstream._in_notebook() and isinstance(TerminalStream(io.StringIO()).out, lstream._RichTerm)

# ---- a call the provider ran (Anthropic's web_search): in the notebook's markdown as the documented output shows it (`- ⏳ web_search(query='weather in NYC today') ⏳`)

def test_provider_ran_search_in_notebook_as_documented(fake_provider, notebook):
    "The search's line ends the streamed markdown as the contract's NYC weather example shows it, and `fmt2hist` leaves it out"
    fp = fake_provider
    fp.queue(Reply('Otters hold hands.', web_search=[dict(query='otters', url='https://example.com/o', title='Otters', cited_text='hold hands')]))
    chat = Chat('anthropic/claude-sonnet-4-5', search='l', api_base=fp.anthropic_base, api_key='k')
    fmt = display_stream(chat('otters?', stream=True))
    assert fmt.outp.endswith("\n- ⏳ <code>web_search(query=&#x27;otters&#x27;)</code> ⏳"), fmt.outp
    assert notebook.shown[-1] == fmt.outp
    h = fmt2hist(fmt.outp)
    assert len(h)==1 and h[0].endswith('Otters hold hands.') and '🔧' not in h[0], ('no call to rebuild, no markup left in the text', h)

def test_provider_not_yet_run_stays_pending():
    "A search the provider has not run yet (a paused turn: no result in the reply) shows as one it ran, as documented; text after it starts a paragraph"
    srv = dict(id='srvtoolu_1', type='function', function=dict(name='web_search', arguments='{"query": "nyc"}'))
    mk = lambda **psf: ModelResponse(choices=[dict(finish_reason='stop', message=dict(role='assistant', content='Hm.', provider_specific_fields=dict(server_tool_calls=[srv], **psf)))])
    assert StreamFormatter().format_item(mk()) == "\n- ⏳ <code>web_search(query=&#x27;nyc&#x27;)</code> ⏳"
    ran = mk(web_search_results=[dict(type='web_search_tool_result', tool_use_id='srvtoolu_1', content=[])])
    sf = StreamFormatter()
    for o in (ran, lstream.mk_stream_chunk(content='Then text.')): sf.format_item(o)
    assert sf.outp == "\n- ⏳ <code>web_search(query=&#x27;nyc&#x27;)</code> ⏳\n\nThen text." and fmt2hist(sf.outp) == ['Then text.']

# ---- misuse: a clear error naming the problem and the fix, before any output

def test_display_stream_of_a_finished_reply(fake_provider, notebook, capsys):
    "A finished reply (no `stream=True`) showed an empty output, silently"
    fp = fake_provider
    fp.queue('Hi.')
    r = Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')('x')
    with pytest.raises(TypeError, match=r"finished reply \(a ModelResponse\).*stream=True"): display_stream(r)
    assert notebook.shown == [], 'no empty output left behind'
    with pytest.raises(TypeError, match=r"finished reply.*stream=True"): print_stream(r)
    assert capsys.readouterr().out == ''

async def test_adisplay_stream_of_a_finished_reply(fake_provider, notebook):
    fp = fake_provider
    fp.queue('Hi.')
    r = await AsyncChat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')('x')
    with pytest.raises(TypeError, match=r"adisplay_stream .*finished reply.*stream=True"): await adisplay_stream(r)
    assert notebook.shown == []

async def test_display_stream_of_an_async_stream(fake_provider, notebook):
    "An AsyncChat's stream given to display_stream raised `'async_generator' object is not iterable`"
    fp = fake_provider
    chat = AsyncChat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')
    rs = await chat('x', stream=True)
    with pytest.raises(TypeError, match=r"async stream.*await adisplay_stream"): display_stream(rs)
    with pytest.raises(TypeError, match=r"async stream.*aprint_stream"): print_stream(rs)
    assert notebook.shown == [] and chat.hist == []
    await rs.aclose()

async def test_adisplay_stream_of_a_sync_stream(fake_provider, notebook):
    "A Chat's stream given to adisplay_stream raised `'async for' requires an object with __aiter__ method, got generator`"
    fp = fake_provider
    chat = Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')
    rs = chat('x', stream=True)
    with pytest.raises(TypeError, match=r"sync stream.*display_stream\("): await adisplay_stream(rs)
    with pytest.raises(TypeError, match=r"sync stream.*print_stream\("): await aprint_stream(rs)
    assert notebook.shown == [] and chat.hist == []
    fp.queue('Still fine.')
    assert display_stream(rs).outp == 'Still fine.', 'the stream is untouched: it shows where it belongs'

def test_display_stream_of_an_unawaited_stream(fake_provider, notebook):
    "`AsyncChat(...)(stream=True)` not awaited: a coroutine, not a stream"
    chat = AsyncChat('anthropic/claude-sonnet-4-5', api_base=fake_provider.anthropic_base, api_key='k')
    co = chat('x', stream=True)
    try:
        with pytest.raises(TypeError, match=r"coroutine.*await"): display_stream(co)
    finally: co.close()
    assert notebook.shown == []

def test_display_stream_twice(fake_provider, notebook):
    "A stream read to its end shows nothing a second time: said, rather than an empty output"
    fp = fake_provider
    fp.queue('Once.')
    rs = Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k')('x', stream=True)
    assert display_stream(rs).outp == 'Once.'
    n = len(notebook.shown)
    with pytest.raises(ValueError, match=r"already been read.*fmt\.outp"): display_stream(rs)
    assert len(notebook.shown) == n

# ---- a stream that fails before any text leaves no empty output behind

@pytest.mark.parametrize('live', [True, False])
def test_failed_stream_before_text_leaves_no_output(notebook, monkeypatch, live):
    "The display was made up front with an empty markdown, which stayed above the error"
    monkeypatch.setattr(lstream, 'IN_JUPYTER', live)  # (False: a notebook runner, shown once at the end)
    def gen():
        raise RuntimeError('overloaded')
        yield
    with pytest.raises(RuntimeError, match='overloaded'): display_stream(gen())
    assert notebook.shown == []

def test_provider_error_before_text_leaves_no_output(fake_provider, notebook):
    fp = fake_provider
    fp.queue(Reply(error='Overloaded', status=529))
    chat = Chat('anthropic/claude-sonnet-4-5', api_base=fp.anthropic_base, api_key='k', retries=0)
    with pytest.raises(litellm.InternalServerError): display_stream(chat('x', stream=True))
    assert notebook.shown == []

def test_stream_shows_its_first_text_in_one_display(notebook):
    "The display is made with the first text, then updated in place"
    display_stream(iter([mk_stream_chunk(content='Hi'), mk_stream_chunk(content=' there')]))
    assert notebook.shown[0] == 'Hi' and notebook.shown[-1] == 'Hi there'

def test_display_stream_of_astream_with_complete_names_the_async_one():
    "`astream_with_complete`'s object iterates both ways (fastcore's asave_iter): display_stream still names adisplay_stream (it raised a raw TypeError)"
    from lisette import astream_with_complete, mk_stream_chunk
    async def agen(): yield mk_stream_chunk(content='x')
    with pytest.raises(TypeError, match='adisplay_stream'): display_stream(astream_with_complete(agen()))
