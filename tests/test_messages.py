"Message building, cache checkpoints and transcripts: property tests, bad input, and what providers receive through litellm."
import base64, copy, io, json
from pathlib import Path
import pytest, litellm
from hypothesis import given, example, strategies as st
from litellm import ModelResponse, Message
from PIL import Image
from lisette.messages import (mk_msgs, mk_msg, remove_cache_ckpts, fmt2hist, sniff_mime, split_tools, tool_dtls_tag,
                              _has_cache, _role, max_cache_ckpts)
from lisette.stream import mk_tr_details, StreamFormatter

SAMPLES = Path(__file__).resolve().parent.parent/'samples'
def sample(nm): return (SAMPLES/nm).read_bytes()

def img_bytes(fmt):
    b = io.BytesIO(); Image.new('RGB', (4, 4), (10, 200, 30)).save(b, fmt); return b.getvalue()

# ---- content kinds

KINDS = {  # name: (bytes, expected MIME, expected part type)
    'jpeg': (lambda: sample('puppy.jpg'), 'image/jpeg', 'image_url'),
    'png': (lambda: img_bytes('PNG'), 'image/png', 'image_url'),
    'gif': (lambda: img_bytes('GIF'), 'image/gif', 'image_url'),
    'webp': (lambda: img_bytes('WEBP'), 'image/webp', 'image_url'),
    'pdf': (lambda: sample('solveit.pdf'), 'application/pdf', 'file'),
    'wav': (lambda: sample('alloy.wav'), 'audio/wav', 'file'),
    'mp3': (lambda: sample('sample.mp3'), 'audio/mp3', 'file'),
    'mp3-id3': (lambda: b'ID3\x04\x00\x00' + bytes(20), 'audio/mp3', 'file'),
    'ogg': (lambda: b'OggS\x00\x02' + bytes(22), 'audio/ogg', 'file'),
    'flac': (lambda: b'fLaC\x00\x00\x00\x22' + bytes(34), 'audio/flac', 'file'),
    'm4a': (lambda: b'\x00\x00\x00\x1cftypM4A \x00\x00\x00\x00M4A isommp42', 'audio/mp4', 'file'),
    'mp4': (lambda: sample('clip.mp4'), 'video/mp4', 'file'),
    'webm': (lambda: b'\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01' + bytes(8), 'video/webm', 'file'),
    'mov': (lambda: b'\x00\x00\x00\x14ftypqt  \x00\x00\x00\x00qt  ', 'video/quicktime', 'file'),
    'mov-old': (lambda: b'\x00\x00\x00\x08wide\x00\x00\x10\x00mdat', 'video/quicktime', 'file'),
}

@pytest.mark.parametrize('kind', KINDS)
def test_bytes_kinds(kind):
    mk, mime, typ = KINDS[kind]
    data = mk()
    assert sniff_mime(data) == mime
    part = mk_msg(['look', data])['content'][1]
    assert part['type'] == typ
    url = part['image_url'] if typ=='image_url' else part['file']['file_data']
    assert url == f"data:{mime};base64,{base64.b64encode(data).decode()}"

@pytest.mark.parametrize('data,detected', [
    (b'just some text', "UTF-8 text 'just some text'"),
    (img_bytes('BMP'), 'image/bmp, which is not accepted'),
    (img_bytes('TIFF'), 'image/tiff, which is not accepted'),
    (b'\x00\x01\x02\x03\xfe\xff', "an unknown kind (first bytes b'\\x00\\x01\\x02\\x03\\xfe\\xff')"),
    (b'', "an unknown kind (first bytes b'')"),
])
def test_unknown_bytes_error(data, detected):
    with pytest.raises(ValueError) as e: mk_msg(['hi', data])
    assert f'detected {detected}' in str(e.value)
    assert 'Accepted: images (JPEG, PNG, GIF, WebP), PDF, audio (wav, mp3, ogg, flac, m4a' in str(e.value)

@pytest.mark.parametrize('obj,name', [(object(), 'object'), (3.5, 'float'), ({'a'}, 'set'), (('a', 'b'), 'tuple')])
def test_unsupported_object_error(obj, name):
    with pytest.raises(TypeError, match=f'type {name}'): mk_msg(obj)
    with pytest.raises(TypeError, match=f'from {name}'): mk_msg(['text', obj])

def test_mixed_list_nothing_dropped():
    parts = ['a', img_bytes('PNG'), {'type': 'text', 'text': 'b'}, sample('solveit.pdf'), '', bytearray(sample('alloy.wav'))]
    c = mk_msg(parts, role='user')['content']
    assert [p['type'] for p in c] == ['text', 'image_url', 'text', 'file', 'text', 'file']
    assert [p.get('text') for p in c] == ['a', None, 'b', None, '.', None]

def test_passthrough():
    d, m = {'role': 'user', 'content': 'x'}, Message(role='assistant', content='y')
    r = ModelResponse(choices=[dict(message=dict(role='assistant', content='z'), finish_reason='stop')])
    assert mk_msg(d) is d and mk_msg(m) is m and mk_msg(r) is r.choices[0].message
    assert mk_msg('hey') == mk_msg(['hey']) == {'role': 'user', 'content': 'hey'}

# ---- random conversations

def tool_msg(i): return {'role': 'tool', 'tool_call_id': f'call_{i}', 'name': 'f', 'content': f'result {i}'}
def asst_tc_msg(i, as_obj):
    tc = dict(id=f'call_{i}', type='function', function=dict(name='f', arguments='{}'))
    tcs = [tc, dict(tc, id=f'call_{i}b')]
    if as_obj: return Message(role='assistant', content='', tool_calls=tcs)
    return {'role': 'assistant', 'content': '', 'tool_calls': tcs}

texts = st.text(min_size=1, max_size=20).filter(lambda s: s.strip() and tool_dtls_tag not in s)
items = st.one_of(texts, texts.map(lambda s: ('text', s)), st.integers(0, 999).map(lambda i: ('tool', i)),
                  st.tuples(st.just('tc'), st.integers(0, 999), st.booleans()))

def build(spec):
    "Turn a hypothesis spec into mk_msgs input: plain strings, tool results, assistant tool-call messages, [str] lists"
    out = []
    for o in spec:
        if isinstance(o, str): out.append(o)
        elif o[0]=='text': out.append([o[1]])
        elif o[0]=='tool': out.append(tool_msg(o[1]))
        else: out.append(asst_tc_msg(o[1], o[2]))
    return out

def expected_roles(msgs):
    "Reference model: given roles are kept; inferred ones alternate, and follow an assistant after a tool result"
    res, nxt = [], 'user'
    for m in msgs:
        r = m['role'] if isinstance(m, dict) else getattr(m, 'role', None) or nxt
        res.append(r)
        nxt = 'assistant' if r in ('user', 'tool') else 'user'
    return res

def n_ckpts(m):
    "Count every cache_control in message `m` (content parts and tool calls)"
    tcs = (m.get('tool_calls') if isinstance(m, dict) else m.tool_calls) or []
    c = m.get('content') if isinstance(m, dict) else m.content
    return (sum(1 for tc in tcs if (tc.get('cache_control') if isinstance(tc, dict) else getattr(tc, 'cache_control', None)))
            + (sum('cache_control' in p for p in c if isinstance(p, dict)) if isinstance(c, list) else 0))

def norm(m):
    "Role, text and tool-call ids of `m`, with string content and a one-text-part list counted the same"
    c = m.get('content') if isinstance(m, dict) else m.content
    if isinstance(c, list) and len(c)==1 and c[0].get('type')=='text': c = c[0]['text']
    tcs = (m.get('tool_calls') if isinstance(m, dict) else m.tool_calls) or []
    return _role(m), c, [tc['id'] if isinstance(tc, dict) else tc.id for tc in tcs]

@given(st.lists(items, min_size=1, max_size=30))
def test_roles_alternate(spec):
    msgs = build(spec)
    assert [_role(m) for m in mk_msgs(msgs)] == expected_roles(msgs)

@given(st.lists(items, min_size=1, max_size=30), st.lists(st.integers(-12, 12), max_size=10), st.sampled_from([None, '5m', '1h']))
@example(['a']*8, [0, 1, 2, 3, -1, -2], None)
def test_checkpoints_placed_and_removed(spec, idxs, ttl):
    plain = mk_msgs(build(spec))
    before = [norm(m) for m in plain]
    res = mk_msgs(build(spec), cache=True, cache_idxs=idxs, ttl=ttl)
    # reference: the first (at most 4) distinct non-tool messages that `idxs` name, skipping ones out of range
    nt = [i for i,m in enumerate(plain) if _role(m)!='tool']
    want = []
    for k in idxs:
        if -len(nt) <= k < len(nt) and nt[k] not in want: want.append(nt[k])
        if len(want)==max_cache_ckpts: break
    got = [i for i,m in enumerate(res) if n_ckpts(m)]
    assert got == sorted(want)
    assert sum(map(n_ckpts, res)) == len(want) <= 4
    cc = {'type': 'ephemeral', **({'ttl': ttl} if ttl else {})}
    for i in got:
        m = res[i]
        if tcs := m.get('tool_calls'):
            tc = tcs[-1]
            assert (tc.get('cache_control') if isinstance(tc, dict) else tc.cache_control) == cc
        else: assert m['content'][-1]['cache_control'] == cc
    for m in res: remove_cache_ckpts(m)
    assert sum(map(n_ckpts, res)) == 0
    assert [norm(m) for m in res] == before

@given(st.lists(items, min_size=1, max_size=12))
def test_existing_checkpoints_stripped(spec):
    "Messages that already carry checkpoints lose them: only those cache_idxs asks for are sent"
    msgs = [m if _role(m)=='tool' else mk_msg(m, cache=True) if isinstance(m, (dict, Message)) else mk_msg(m, role='assistant', cache=True)
            for m in build(spec)]
    assert sum(map(n_ckpts, msgs)) == sum(_role(m)!='tool' for m in msgs)
    res = mk_msgs(msgs, cache=True, cache_idxs=[])
    assert sum(map(n_ckpts, res)) == 0

@given(st.lists(items, min_size=1, max_size=12))
def test_given_messages_keep_their_checkpoints(spec):
    "The checkpoints are removed from copies: the caller's messages (and their parts) are left as they were"
    msgs = [m if _role(m)=='tool' else mk_msg(m, cache=True) if isinstance(m, (dict, Message)) else mk_msg(m, role='assistant', cache=True)
            for m in build(spec)]
    before = copy.deepcopy(msgs)
    res = mk_msgs(msgs, cache=True, cache_idxs=[])
    assert sum(map(n_ckpts, res)) == 0
    assert msgs == before and sum(map(n_ckpts, msgs)) == sum(_role(m)!='tool' for m in msgs)

def test_chat_leaves_given_checkpoints_alone():
    "A history or prompt given to a chat with checkpoints of its own keeps them; the chat's copies lose them"
    from lisette import Chat
    hist = [{'role': 'user', 'content': 'hi', 'cache_control': {'type': 'ephemeral'}},
            mk_msg(Message(role='assistant', content=None, tool_calls=[dict(id='c1', type='function', function=dict(name='f', arguments='{}'))]), cache=True),
            {'role': 'tool', 'tool_call_id': 'c1', 'content': 'ok'}]
    prompt = {'role': 'user', 'content': [{'type': 'text', 'text': 'more', 'cache_control': {'type': 'ephemeral'}}]}
    before = copy.deepcopy(hist + [prompt])
    chat = Chat('claude-sonnet-4-5', hist=hist)
    chat.hist = hist
    chat.hist += [prompt]
    assert hist + [prompt] == before
    assert sum(map(n_ckpts, chat.hist)) == 0

def test_cache_idxs_must_be_ints():
    with pytest.raises(TypeError, match='not str'): mk_msgs(['a', 'b'], cache=True, cache_idxs=['-1'])

def test_bad_ttl():
    with pytest.raises(ValueError, match="'5m' or '1h'"): mk_msgs(['a'], cache=True, ttl=3600)

# ---- transcripts

results = st.one_of(st.text(max_size=60), st.integers(-10**6, 10**6).map(str))
args = st.dictionaries(st.from_regex(r'[a-z_]{1,8}', fullmatch=True), st.one_of(st.text(max_size=30), st.integers()), max_size=3)
calls = st.tuples(st.from_regex(r'[a-z_]{1,10}', fullmatch=True), args, results)

def _tc(i, nm, a): return dict(id=f'toolu_{i:04d}', type='function', function=dict(name=nm, arguments=json.dumps(a)))
def _args_sent(a): return a  # the transcript keeps the JSON values the model sent (only long strings are shortened)

@given(st.lists(st.tuples(st.text(max_size=40), st.lists(calls, min_size=1, max_size=3)), min_size=1, max_size=4), st.text(max_size=40))
def test_fmt2hist_roundtrip_streamformatter(rounds, final):
    "A tool loop formatted by StreamFormatter turns back into the same calls and results, parallel calls kept together"
    fmt, k, want = StreamFormatter(), 0, []
    for txt, rnd in rounds:
        fmt.outp += txt.replace('<details', '')
        tcs = []
        for nm, a, res in rnd:
            k += 1; tcs.append(_tc(k, nm, a)); want.append((f'toolu_{k:04d}', nm, _args_sent(a), res))
        fmt.format_item(ModelResponse(choices=[dict(message=dict(role='assistant', content='', tool_calls=tcs), finish_reason='tool_calls')]))
        for tc, (nm, a, res) in zip(tcs, rnd): fmt.format_item({'tool_call_id': tc['id'], 'role': 'tool', 'name': nm, 'content': res})
    h = fmt2hist(fmt.outp + final.replace('<details', ''))
    asst = [m for m in h if _role(m)=='assistant' and m.tool_calls]
    assert [len(m.tool_calls) for m in asst] == [len(r) for _,r in rounds]
    got_calls = [(tc.id, tc.function.name, json.loads(tc.function.arguments)) for m in asst for tc in m.tool_calls]
    assert got_calls == [w[:3] for w in want]
    tools = [m for m in h if _role(m)=='tool']
    assert [(m['tool_call_id'], m['name'], m['content']) for m in tools] == [(w[0], w[1], w[3]) for w in want]
    _assert_valid_history(h)
    assert h[-1].content == (final.replace('<details', '').strip() or '.')

@given(st.lists(calls, min_size=1, max_size=6), st.text(max_size=30))
def test_fmt2hist_roundtrip_mk_tr_details(cs, lead):
    "Blocks written by mk_tr_details alone (no ⏳ lines): one assistant message per call, each followed by its result"
    outp = lead.replace('<details', '') + ''.join(mk_tr_details({'tool_call_id': f'toolu_{i:04d}', 'content': res}, _tc(i, nm, a))
                                                  for i,(nm,a,res) in enumerate(cs))
    h = fmt2hist(outp)
    assert [_role(m) for m in h] == ['assistant', 'tool']*len(cs) + ['assistant']
    for i,(nm,a,res) in enumerate(cs):
        tc = h[2*i].tool_calls[0]
        assert (tc.id, tc.function.name, json.loads(tc.function.arguments)) == (f'toolu_{i:04d}', nm, _args_sent(a))
        assert h[2*i+1]['content'] == res and h[2*i+1]['tool_call_id'] == tc.id
    assert h[-1].content == '.'
    _assert_valid_history(h)

def _assert_valid_history(h):
    "Every tool call is answered right after its assistant message, and every result answers a call"
    i = 0
    while i < len(h):
        m = h[i]; i += 1
        assert _role(m) == 'assistant'
        ids = [tc.id for tc in (m.tool_calls or [])]
        got = [o['tool_call_id'] for o in h[i:i+len(ids)]]
        assert got == ids and all(_role(o)=='tool' for o in h[i:i+len(ids)])
        i += len(ids)

def test_fmt2hist_drops_token_blocks():
    blk = mk_tr_details({'tool_call_id': 'toolu_1', 'content': '3'}, _tc(1, 'add', {'a': 1}))
    tok = "<details class='token-usage-details' markdown='1'><summary>Tokens: 5</summary>\n\n`Usage(...)`\n\n</details>\n"
    h = fmt2hist('Sure.' + blk + tok)
    assert [_role(m) for m in h] == ['assistant', 'tool', 'assistant'] and h[-1].content == '.'
    assert 'token' not in json.dumps([str(m) for m in h])

@pytest.mark.parametrize('broken,where', [
    ('{\n  "id": "toolu_x",\n  "call": {"function": "f", "arguments": {}},\n  "result": 1,,\n}', "id 'toolu_x'"),
    ('{\n  "call": nope\n}', "first line '\"call\": nope'"),
    ('{\n  "id": "toolu_y",\n  "result": "1"\n}', "id 'toolu_y'"),
    ('[1, 2]', "first line '[1, 2]'"),
])
def test_fmt2hist_malformed_block(broken, where):
    outp = f"Text\n\n{tool_dtls_tag}\n\n```json\n{broken}\n```\n\n</details>\n\nmore"
    with pytest.raises(ValueError, match='Malformed tool-usage block') as e: fmt2hist(outp)
    assert f'({where})' in str(e.value)

def test_fmt2hist_deep_block():
    "A tool-usage block nested ~100,000 deep is malformed, said so (it raised a RecursionError)"
    deep = '{"id": "toolu_d", "call": {"function": "f", "arguments": ' + '['*100_000 + ']'*100_000 + '}}'
    with pytest.raises(ValueError, match=r"Malformed tool-usage block \(id 'toolu_d'\): JSON nested too deeply"): fmt2hist(f"{tool_dtls_tag}\n\n```json\n{deep}\n```\n\n</details>")

def test_loads_reads_deep_json_as_unreadable():
    "`_loads`, the one reader of tool-call arguments: JSON Python cannot read for its nesting raises a `json.JSONDecodeError` (a `ValueError`), as broken JSON does"
    from lisette.messages import _loads
    with pytest.raises(json.JSONDecodeError, match='nested too deeply'): _loads('{"a": ' + '['*100_000 + ']'*100_000 + '}')
    assert _loads('{"a": [1]}') == {'a': [1]}

# ---- through litellm to the fake provider

AN = 'anthropic/claude-sonnet-4-5'
FMT = ("Let me add.\n\n- ⏳ <code>add(a=1, b=2)</code> ⏳\n\n- ⏳ <code>add(a=3, b=4)</code> ⏳\n"
       + mk_tr_details({'tool_call_id': 'toolu_a', 'content': '3'}, _tc(0, 'add', {'a': 1, 'b': 2}) | {'id': 'toolu_a'})
       + mk_tr_details({'tool_call_id': 'toolu_b', 'content': '7'}, _tc(0, 'add', {'a': 3, 'b': 4}) | {'id': 'toolu_b'})
       + "Both added.")

def an(fp, msgs):
    fp.queue('ok')
    litellm.completion(AN, msgs, api_base=fp.anthropic_base, api_key='fake', max_tokens=100)
    return fp.last

def cached_blocks(body):
    "(where, block type, text or id) of every block carrying cache_control in an Anthropic request body"
    res = [('system', b['type'], b.get('text')) for b in body.get('system', []) if 'cache_control' in b]
    for i,m in enumerate(body['messages']):
        for b in m['content'] if isinstance(m['content'], list) else []:
            if 'cache_control' in b: res.append((f"{i}:{m['role']}", b['type'], b.get('text') or b.get('id') or b.get('tool_use_id')))
    return res

def test_anthropic_cache_control_where_asked(fake_provider):
    msgs = mk_msgs([{'role': 'system', 'content': 'Be brief.'}, 'Hello!', 'Hi!', 'Add some numbers', FMT, 'Thanks'],
                   cache=True, cache_idxs=[0, -2, -3, -1, 1])
    body = an(fake_provider, msgs)
    # non-tool messages: system, Hello!, Hi!, Add.., the tool-call message, 'Both added.', Thanks: idxs 0,-2,-3,-1 win
    assert [m['role'] for m in body['messages']] == ['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']
    assert cached_blocks(body) == [('system', 'text', 'Be brief.'), ('3:assistant', 'tool_use', 'toolu_b'),
                                   ('5:assistant', 'text', 'Both added.'), ('6:user', 'text', 'Thanks')]
    assert json.dumps(body).count('cache_control') == 4
    assert [b['type'] for b in body['messages'][3]['content']] == ['text', 'tool_use', 'tool_use']
    assert [(b['tool_use_id'], b['content']) for b in body['messages'][4]['content']] == [('toolu_a', '3'), ('toolu_b', '7')]

def test_anthropic_cache_ttl(fake_provider):
    body = an(fake_provider, mk_msgs(['a', 'b', 'c'], cache=True, ttl='1h'))
    assert body['messages'][-1]['content'][-1]['cache_control'] == {'type': 'ephemeral', 'ttl': '1h'}
    assert json.dumps(body).count('cache_control') == 1

def test_anthropic_message_level_cache_control(fake_provider):
    "litellm's message-level `cache_control` form is a checkpoint too: it arrives, and mk_msgs strips it like the others"
    m = lambda: {'role': 'user', 'content': 'old', 'cache_control': {'type': 'ephemeral'}}
    body = an(fake_provider, [m()])
    assert body['messages'][0]['content'][-1]['cache_control'] == {'type': 'ephemeral'}
    body = an(fake_provider, mk_msgs([x for _ in range(3) for x in (m(), 'reply')] + ['new'], cache=True, cache_idxs=[0, -1]))
    assert cached_blocks(body) == [('0:user', 'text', 'old'), ('6:user', 'text', 'new')]

def test_anthropic_no_checkpoints_without_cache(fake_provider):
    msgs = [mk_msg('old', cache=True), 'reply', {'role': 'user', 'content': 'new', 'cache_control': {'type': 'ephemeral'}}]
    body = an(fake_provider, mk_msgs(msgs))
    assert 'cache_control' not in json.dumps(body)

def test_anthropic_image_and_pdf_blocks(fake_provider):
    img, pdf = sample('puppy.jpg'), sample('solveit.pdf')
    body = an(fake_provider, mk_msgs([['What are these?', img, pdf]]))
    c = body['messages'][0]['content']
    assert [b['type'] for b in c] == ['text', 'image', 'document']
    assert c[1]['source'] == {'type': 'base64', 'media_type': 'image/jpeg', 'data': base64.b64encode(img).decode()}
    assert c[2]['source'] == {'type': 'base64', 'media_type': 'application/pdf', 'data': base64.b64encode(pdf).decode()}

@pytest.mark.parametrize('fmt,mime', [('PNG', 'image/png'), ('GIF', 'image/gif'), ('WEBP', 'image/webp')])
def test_anthropic_other_images(fake_provider, fmt, mime):
    data = img_bytes(fmt)
    c = an(fake_provider, mk_msgs([['Describe', data]]))['messages'][0]['content']
    assert c[1] == {'type': 'image', 'source': {'type': 'base64', 'media_type': mime, 'data': base64.b64encode(data).decode()}}

def test_openai_image_and_pdf_parts(fake_provider):
    fp = fake_provider
    img, pdf = sample('puppy.jpg'), sample('solveit.pdf')
    fp.queue('ok')
    litellm.completion('openai/gpt-4o-mini', mk_msgs([['What are these?', img, pdf]]), api_base=fp.openai_base, api_key='fake')
    c = fp.last['messages'][0]['content']
    assert [p['type'] for p in c] == ['text', 'image_url', 'file']
    assert c[1]['image_url']['url'] == 'data:image/jpeg;base64,' + base64.b64encode(img).decode()
    assert c[2]['file']['file_data'] == 'data:application/pdf;base64,' + base64.b64encode(pdf).decode()

@pytest.mark.parametrize('kind', ['pdf', 'wav', 'mp3', 'ogg', 'flac', 'm4a', 'mp4', 'webm', 'mov', 'png'])
def test_gemini_inline_data(kind):
    "litellm's Gemini transformation turns each of our parts into inline_data with the sniffed MIME type (no network)"
    from litellm.llms.vertex_ai.gemini.transformation import _gemini_convert_messages_with_history
    mk, mime, _ = KINDS[kind]
    data = mk()
    parts = _gemini_convert_messages_with_history(mk_msgs([['What is this?', data]]), model='gemini-2.5-flash')[0]['parts']
    assert parts[1] == {'inline_data': {'data': base64.b64encode(data).decode(), 'mime_type': mime}}

def test_chat_accepts_fmt2hist(fake_provider):
    "A transcript turned back into history can seed a new Chat, and is sent as a valid tool loop"
    from lisette.chat import Chat
    fp = fake_provider
    fp.queue('The sums were 3 and 7.')
    chat = Chat(AN, hist=['Add 1+2 and 3+4'] + fmt2hist(FMT), api_base=fp.anthropic_base, api_key='fake')
    chat('What were the sums?')
    ms = fp.last['messages']
    assert [m['role'] for m in ms] == ['user', 'assistant', 'user', 'assistant', 'user']
    assert [b['id'] for b in ms[1]['content'] if b['type']=='tool_use'] == ['toolu_a', 'toolu_b']
    assert [b['tool_use_id'] for b in ms[2]['content'] if b['type']=='tool_result'] == ['toolu_a', 'toolu_b']
