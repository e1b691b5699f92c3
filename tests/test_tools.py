"Tool calls through the fake provider: bad arguments go back to the model, tool-call references, provider-run calls."
import json, re
from pathlib import Path
from decimal import Decimal
from uuid import UUID
import litellm, pytest
from lisette import Chat, AsyncChat, ToolResponse
from lisette.testing import Reply
from lisette.tools import ToolResults, _filter_srvtools, _tc_id
from lisette.messages import _get, contents

calls = []

def f_str(s:str):
    "Echo a string"
    calls.append(('f_str', s)); return s

def f_int(n:int):
    "Double an integer"
    calls.append(('f_int', n)); return n*2

def f_dec(d:Decimal):
    "Echo a decimal"
    calls.append(('f_dec', d)); return str(d)

def f_bytes(b:bytes):
    "Length of some bytes"
    calls.append(('f_bytes', len(b))); return len(b)

def f_uuid(u:UUID):
    "Echo a uuid"
    calls.append(('f_uuid', u)); return str(u)

def f_list(xs:list[int]):
    "Sum a list"
    calls.append(('f_list', xs)); return sum(xs)

def tool_results(chat): return [m['content'] for m in chat.hist if isinstance(m, dict) and m.get('role')=='tool']

def run_tool(proto, fn, args, stream=False):
    "One turn in which the model calls `fn` with `args` (a dict, or a raw JSON string), then answers 'ok'"
    fp, model, kw = proto
    calls.clear()
    fp.queue(Reply(tool_calls=[dict(name=fn.__name__, arguments=args)]), Reply('ok'))
    chat = Chat(model, tools=[fn], **kw)
    r = chat('go', stream=stream)
    if stream: r = list(r)[-1]
    assert chat.hist[-1].content == 'ok'
    res = tool_results(chat)
    assert len(res)==1
    return res[0]

# Arguments that fastcore's coercion crashes on, or silently changes: (tool, arguments, words the result must contain)
BAD = [(f_str, {'s': {'a': 1}}, ['f_str', '`s`', 'string', 'object']),
       (f_int, {'n': {}}, ['f_int', '`n`', 'integer', 'object']),
       (f_int, {'n': [1]}, ['f_int', '`n`', 'integer', 'array']),
       (f_int, {'n': True}, ['f_int', '`n`', 'integer', 'boolean']),
       (f_dec, {'d': 'abc'}, ['f_dec', '`d`', 'decimal', "'abc'"]),
       (f_dec, {'d': {'x': 1}}, ['f_dec', '`d`', 'object']),
       (f_bytes, {'b': 50_000_000}, ['f_bytes', '`b`', 'string', 'integer']),
       (f_uuid, {'u': 'not-a-uuid'}, ['f_uuid', '`u`', 'UUID']),
       (f_list, {'xs': {'a': 1}}, ['f_list', '`xs`', 'array', 'object']),
       (f_int, {}, ['f_int', 'missing', '`n`']),
       (f_int, {'n': 1, 'zzz': 2}, ['f_int', 'unknown', '`zzz`'])]

@pytest.mark.parametrize('fn,args,words', BAD, ids=[f"{f.__name__}-{json.dumps(a)[:20]}" for f,a,_ in BAD])
def test_bad_arguments_go_back_to_the_model(proto, fn, args, words):
    res = run_tool(proto, fn, args)
    assert calls==[], f"{fn.__name__} ran with {calls}"  # e.g. `bytes(50_000_000)` was never made
    for w in words: assert w in res, (w, res)

# Raw argument strings only the OpenAI protocol carries as they are (Anthropic's are JSON objects)
DEEP = '{"n": ' + '['*100_000 + ']'*100_000 + '}'
BIG = '{"n": 1' + '0'*5000 + '}'

# Non-streamed, litellm itself failed on DEEP and BIG while building the response (it catches only JSONDecodeError in
# `handle_invalid_parallel_tool_calls`), before lisette saw the call: providers' `_read_unparsed_calls` mends it.
RAW = [(a, w, s) for a,w in [(DEEP, ['f_int', 'nest']), (BIG, ['f_int', 'digits'])] for s in (True, False)] + [
       (a, w, s) for a,w in [('{"n": ' + '['*500 + ']'*500 + '}', ['f_int', 'nest']), ('[1]', ['f_int', 'JSON object'])] for s in (False, True)]

@pytest.mark.parametrize('args,words,stream', RAW, ids=['deep-stream', 'deep', 'digits-stream', 'digits', 'nest500', 'nest500-stream', 'array', 'array-stream'])
def test_unparseable_arguments_go_back_to_the_model(fake_provider, args, words, stream):
    fp = fake_provider
    res = run_tool((fp, 'openai/gpt-4o-mini', dict(api_base=fp.openai_base, api_key='k')), f_int, args, stream=stream)
    assert calls==[]
    for w in words: assert w in res, (w, res[:300])
    assert len(res) < 1000

# ---- Arguments nested ~100,000 deep as the model's own reply: every reader of arguments (the history's, the next request's
# fitting, the display) must take them as it takes broken JSON; Python's `json.loads` raises a RecursionError on them

import itertools
from conftest import PROTOS
from lisette.history import check_hist
from lisette.testing import _oa_sse, _an_sse

def deep_reply(p, name='f_int'):
    "A reply of protocol `p` calling tool `name` with DEEP arguments: streamed in one piece by OpenAI and Anthropic (the fake provider's eighths would be 25,000 events; OpenAI's unstreamed reply: see RAW above), sent whole by Responses. Gemini sends arguments as JSON objects, which no request body can nest this deep"
    deep = json.dumps(DEEP)[1:-1].encode()  # (as it is inside a JSON string)
    if p=='responses': return Reply(tool_calls=[dict(name=name, arguments=DEEP, id='call_deep')])
    if p=='openai':
        body = b''.join(_oa_sse(Reply(tool_calls=[(name, {})]), {'model': 'gpt-4o-mini'}, 1, [('call_deep', name, 'ARGS')]))
        return Reply(raw=body.replace(b'"arguments": "ARGS"', b'"arguments": "' + deep + b'"'))
    body = b''.join(_an_sse(Reply(tool_calls=[(name, {})]), {'model': 'claude-sonnet-4-5'}, 1, [('toolu_deep', name, '{"n": "ARGS"}')], itertools.count()))
    return Reply(raw=body.replace(b'{\\"n\\": \\"ARGS\\"}', deep))

def deep_chat(fp, p, **kw):
    "A chat of protocol `p` whose model called `f_int` with DEEP arguments, its turn done"
    model, base = PROTOS[p]
    fp.queue(deep_reply(p), Reply('ok'))
    chat = Chat(model, tools=[f_int], api_base=getattr(fp, base), api_key='k', **kw)
    r = chat('go', stream=p!='responses')
    if p!='responses': r = list(r)[-1]
    return chat

@pytest.mark.parametrize('p', ['openai', 'anthropic', 'responses'])
def test_deep_arguments_answered_and_the_chat_goes_on(fake_provider, p):
    "The deep call is answered 'nest too deeply' (not called) and the turn ends; the history stays valid and the next turn works (on Anthropic the request after the tool result, and every later turn, failed with a RecursionError fitting the history)"
    fp = fake_provider
    calls.clear()
    chat = deep_chat(fp, p)
    assert calls==[] and chat.hist[-1].content=='ok'
    [res] = tool_results(chat)
    assert 'f_int' in res and 'nest' in res
    check_hist(chat.hist)
    fp.queue('again')
    assert chat('and now?').choices[0].message.content=='again'
    if p=='anthropic':  # Anthropic takes arguments as a JSON object only: sent as `{}`, and said
        assert [b['input'] for m in fp.last['messages'] for b in m['content'] if isinstance(m['content'], list) and b['type']=='tool_use']==[{}]
        assert any('toolu_deep' in a.detail and 'nested too deeply' in a.detail and 'sent as {}' in a.detail for a in chat.adjustments)

def test_deep_arguments_displayed(fake_provider):
    "A stream's display shows the deep call (its arguments as text, cut short); it raised a RecursionError"
    from lisette.stream import StreamFormatter
    fp = fake_provider
    fp.queue(deep_reply('openai'), Reply('ok'))
    chat = Chat('openai/gpt-4o-mini', tools=[f_int], api_base=fp.openai_base, api_key='k')
    fmt = StreamFormatter()
    for _ in fmt.format_stream(chat('go', stream=True)): pass
    assert 'f_int(arguments=' in fmt.outp and len(fmt.outp) < 10_000
    check_hist(chat.hist)

GOOD = [(f_str, {'s': 'hi'}, ('f_str', 'hi')), (f_int, {'n': 3}, ('f_int', 3)), (f_dec, {'d': '1.10'}, ('f_dec', Decimal('1.10'))),
        (f_dec, {'d': 2}, ('f_dec', Decimal(2))), (f_bytes, {'b': 'héllo'}, ('f_bytes', 6)),
        (f_uuid, {'u': '12345678-1234-5678-1234-567812345678'}, ('f_uuid', UUID('12345678-1234-5678-1234-567812345678'))),
        (f_list, {'xs': [1, 2]}, ('f_list', [1, 2])), (f_list, {'xs': '[1, 2]'}, ('f_list', [1, 2])), (f_list, {'xs': {}}, ('f_list', []))]

@pytest.mark.parametrize('fn,args,call', GOOD, ids=[f"{f.__name__}-{json.dumps(a)}" for f,a,_ in GOOD])
def test_good_arguments_still_work(proto, fn, args, call):
    run_tool(proto, fn, args)
    assert calls==[call]

def test_bad_arguments_async(fake_provider):
    import asyncio
    fp = fake_provider
    calls.clear()
    fp.queue(Reply(tool_calls=[dict(name='f_int', arguments={'n': {}}), dict(name='f_bytes', arguments={'b': 10**9})]), Reply('ok'))
    chat = AsyncChat('openai/gpt-4o-mini', tools=[f_int, f_bytes], api_base=fp.openai_base, api_key='k')
    asyncio.run(chat('go'))
    res = tool_results(chat)
    assert calls==[] and len(res)==2 and '`n`' in res[0] and '`b`' in res[1]


# --- Stored results and references (tc_refs) ---

seen = {}

def view_img(fn:str):
    "View an image"
    return ToolResponse([{'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,iVBORw0KGgo='}}])

def get_img_size(image_content:list) -> dict:
    "Size of an image from ToolResponse content"
    seen['image_content'] = image_content
    return {'parts': len(image_content), 'url': image_content[0]['image_url']['url'][:10]}

def test_tool_response_is_stored_as_its_content(proto):
    "Issue 16: a later tool receiving $`id` of a ToolResponse gets its content parts (the seed's get_img_size example)"
    fp, model, kw = proto
    seen.clear()
    def responder(body, path):  # the model names the call by the id our history holds (litellm makes Gemini's up)
        ids = [_tc_id(tc) for m in chat.hist for tc in (_get(m, 'tool_calls') or [])]
        if not ids: return Reply(tool_calls=[dict(name='view_img', arguments={'fn': 'puppy.jpg'}, id='toolu_view')])
        if len(ids)==1: return Reply(tool_calls=[dict(name='get_img_size', arguments={'image_content': f'$`{ids[0]}`'}, id='toolu_size')])
        return Reply('done')
    fp.respond_with(responder)
    chat = Chat(model, tools=[view_img, get_img_size], tc_refs=True, **kw)
    chat('describe then measure', max_steps=5)
    parts = view_img('x').content
    assert list(chat.tc_res.values()) == [parts, {'parts': 1, 'url': 'data:image'}] and seen['image_content'] == parts

def get_text():
    "Text that looks like a Python literal"
    return "{'object':'x'}"

def get_set():
    "Text that evaluates to a set"
    return "{1,2,3}"

def use_str(s:str):
    "Takes text"
    seen.setdefault('use_str', []).append(s); return 'ok'

def use_any(s:str|dict):
    "Takes text or an object"
    seen.setdefault('use_any', []).append(s); return 'ok'

def use_dict(d:dict):
    "Takes a dict"
    seen.setdefault('use_dict', []).append(d); return 'ok'

def _eval_turn(proto, explicit):
    "get_text and get_set, then four calls referencing their results by id (read from the results, as Gemini sends no ids)"
    fp, model, kw = proto
    seen.clear()
    def responder(body, path):
        ids = re.findall(r'\[tool_call_id: ([^\]]+)\]', ' '.join(r for t in fp.views[-1]['turns'] for _,r in t['results']))
        if not ids: return Reply(tool_calls=[dict(name='get_text', id='toolu_t'), dict(name='get_set', id='toolu_s')])
        if len(ids)==2:
            t, s = (f'$`{i}`' for i in ids)
            return Reply(tool_calls=[dict(name='use_str', arguments={'s': t}), dict(name='use_str', arguments={'s': s}),
                                     dict(name='use_any', arguments={'s': s}), dict(name='use_dict', arguments={'d': t})])
        return Reply('done')
    fp.respond_with(responder)
    chat = Chat(model, tools=[get_text, get_set, use_str, use_any, use_dict], tc_refs=True, tc_res_eval=True, **kw)
    if explicit: chat.tc_res = ToolResults()
    chat('chain them', max_steps=5)
    return chat

@pytest.mark.parametrize('explicit', [True, False])
def test_tc_res_eval_only_for_parameters_that_ask_for_objects(proto, explicit):
    "Issue 18 item 12: a str parameter gets the text the tool returned; a dict parameter the evaluated object"
    chat = _eval_turn(proto, explicit)
    assert list(chat.tc_res.values())[:2] == [{'object': 'x'}, {1, 2, 3}]  # stored evaluated (the seed's contract)
    seen['use_str'].sort()  # the two calls ran at once: either may append first
    assert seen == {'use_str': ["{'object':'x'}", "{1,2,3}"], 'use_any': ["{1,2,3}"], 'use_dict': [{'object': 'x'}]}


# --- Calls the provider ran, and calls that only look like it ---

def f_add(a:int, b:int=0):
    "Add"
    calls.append(('f_add', a, b)); return a+b

def test_provider_ran_calls_are_told_apart_by_their_result(fake_provider):
    "Issue 18 item 11: a `srvtoolu_` id alone does not make a call provider-run; its result in the message does"
    fp = fake_provider
    fp.queue(Reply(tool_calls=[dict(name='f_add', arguments={'a': 1}, id='srvtoolu_abc')]),
             Reply('found', web_search=[dict(query='otters', url='https://example.com', title='Otters')]))
    m1 = litellm.completion('openai/gpt-4o-mini', [{'role': 'user', 'content': 'go'}], api_base=fp.openai_base, api_key='k').choices[0].message
    m2 = litellm.completion('anthropic/claude-sonnet-4-5', [{'role': 'user', 'content': 'search'}], api_base=fp.anthropic_base, api_key='k',
                            web_search_options={}).choices[0].message
    assert [tc.id for tc in m1.tool_calls] == ['srvtoolu_abc'] and [tc.id for tc in _filter_srvtools(m1)] == ['srvtoolu_abc']
    srv = m2.tool_calls or m2.provider_specific_fields['server_tool_calls']  # litellm up to 1.106 lists it among tool_calls; 1.110 apart
    assert _tc_id(srv[0]).startswith('srvtoolu_') and _filter_srvtools(m2) == []

def test_stray_srvtoolu_call_is_answered(fake_provider):
    fp = fake_provider
    calls.clear()
    fp.queue(Reply(tool_calls=[dict(name='f_add', arguments={'a': 1, 'b': 2}, id='srvtoolu_abc')]), Reply('3'), Reply('again'))
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k', tools=[f_add])
    chat('go')
    assert calls == [('f_add', 1, 2)] and tool_results(chat) == ['3']
    chat('and again')
    assert [m['role'] for m in fp.requests[-1].body['messages']] == ['user', 'assistant', 'tool', 'assistant', 'user']


# --- The pool sync tool calls share ---

def test_tool_pool_after_fork():
    "A forked child (multiprocessing's default on Linux) has none of the parent's pool threads: it gets its own pool"
    import os, threading
    from lisette.tools import run_parallel, tool_pool
    tool_pool()
    r, w = os.pipe()
    if (pid := os.fork())==0:
        try:
            b = threading.Barrier(3, timeout=5)  # passes only if the three calls run at once
            os.write(w, b'ok' if run_parallel(lambda x: (b.wait(), x)[1], [1, 2, 3])==[1, 2, 3] else b'bad')
        except BaseException as e: os.write(w, repr(e).encode()[:200])
        finally: os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(r, 200)==b'ok'

def test_run_parallel_interrupted_runs_no_more_calls():
    "A round interrupted in the caller's own call: the calls the pool has not started never run"
    import threading, time
    from lisette.tools import run_parallel
    started, ran, gate = [], [], threading.Event()
    def f(x):
        if x==0: raise KeyboardInterrupt
        started.append(x); gate.wait(5); ran.append(x)
    with pytest.raises(KeyboardInterrupt): run_parallel(f, list(range(200)))
    gate.set()
    end = time.monotonic()+10
    while len(ran)<len(started) and time.monotonic()<end: time.sleep(0.01)
    n = len(started); time.sleep(0.2)  # time for a call that was not cancelled to start
    assert len(started)==n==len(ran) and n<=64, (n, len(ran))


# --- A ToolResponse no provider would take ---

def odd_parts(kind:str):
    "Return content parts of some kind"
    if kind=='unknown': return ToolResponse([{'type': 'text', 'text': 'found it'}, {'type': 'video_blob', 'data': 'AAAA'}])
    if kind=='tool_reference': return ToolResponse([{'type': 'text', 'text': 'found it'}, {'type': 'tool_reference', 'tool_name': 'add'}])
    return ToolResponse([{'type': 'text', 'text': 'found it'}, 'not a part'])

@pytest.mark.parametrize('kind', ['unknown', 'shape'])
def test_unsendable_tool_response_part_left_out(proto, kind):
    "A tool's ToolResponse part of an unknown type or the wrong shape is left out: the model is told, the good parts go, the turn goes on, the chat reports it"
    fp, model, kw = proto
    fp.queue(Reply(tool_calls=[dict(name='odd_parts', arguments={'kind': kind})]), 'ok')
    chat = Chat(model, tools=[odd_parts], **kw)
    assert chat('call it').choices[0].message.content == 'ok'
    res = tool_results(chat)
    assert len(res)==1 and res[0][0] == {'type': 'text', 'text': 'found it'} and 'left out' in res[0][1]['text'] and len(res[0])==2
    adj = [a.detail for a in chat.adjustments if a.kind=='tool_result']
    assert len(adj)==1 and 'content[1]' in adj[0] and ('video_blob' if kind=='unknown' else 'not a part') in adj[0]
    assert len(fp.requests)==2 and 'found it' in json.dumps(fp.last)  # the good part went to the provider
    from lisette.history import check_hist
    check_hist(chat.hist)

_png = {'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,iVBORw0KGgo='}}

def chart_cached() -> ToolResponse:
    "A chart, its image marked for caching with a checkpoint of a form no provider takes"
    return ToolResponse([{'type': 'text', 'text': 'a chart'}, {**_png, 'cache_control': {'type': 'ephemeral', 'ttl': 300}}])

def test_tool_response_part_with_a_bad_checkpoint_kept_without_it(proto):
    """A ToolResponse part whose only fault is its cache checkpoint's form goes without the checkpoint (the image is kept),
    and the chat says so; it was left out whole (and before, sent as it was, for Anthropic to refuse)"""
    fp, model, kw = proto
    fp.queue(Reply(tool_calls=[dict(name='chart_cached', arguments={})]), 'ok')
    chat = Chat(model, tools=[chart_cached], **kw)
    assert chat('chart').choices[0].message.content == 'ok'
    assert tool_results(chat) == [[{'type': 'text', 'text': 'a chart'}, _png]]
    adj = [a.detail for a in chat.adjustments if a.kind=='tool_result']
    assert len(adj)==1 and "cache checkpoint(s) left out: content[1].cache_control has 'ttl' 300" in adj[0], adj
    from lisette.history import check_hist
    check_hist(chat.hist)

def test_tool_reference_part_kept(fake_provider):
    "litellm's `tool_reference` part (Anthropic's tool search) is a part litellm sends: kept as the tool returned it"
    fp = fake_provider
    fp.queue(Reply(tool_calls=[dict(name='odd_parts', arguments={'kind': 'tool_reference'})]), 'ok')
    chat = Chat('anthropic/claude-sonnet-4-5', tools=[odd_parts], api_base=fp.anthropic_base, api_key='k')
    chat('call it')
    assert tool_results(chat)[0] == odd_parts('tool_reference').content and not [a for a in chat.adjustments if a.kind=='tool_result']

def test_async_tool_in_sync_chat(proto):
    "An `async def` tool in a sync Chat is run: the model gets its value (not a coroutine's repr), its error as a traceback, on every protocol"
    import asyncio, warnings
    async def async_add(a:int, b:int) -> int:
        "Add two numbers"
        await asyncio.sleep(0)
        return a + b
    async def async_fail() -> int:
        "Fail"
        raise ValueError("nope")
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('async_add', {'a': 1, 'b': 2}), ('async_fail', {})]), "3")
    chat = Chat(m, tools=[async_add, async_fail], **kw)
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)  # 'coroutine was never awaited' would fail the test
        chat("1+2?")
    res = [o['content'] for o in chat.hist if isinstance(o, dict) and o.get('role') == 'tool']
    assert res[0] == '3' and 'ValueError: nope' in res[1] and 'coroutine' not in ''.join(res)

def test_sub_agent_tools_never_wait_for_a_full_pool(fake_provider, monkeypatch):
    "An AsyncChat's sync tool that runs a sub-agent (an AsyncChat with sync tools of its own, on its own loop): with every "
    "pool thread running such a tool, the sub-agents' tools used to wait for a pool thread for ever; they use the next pool"
    import asyncio, threading
    import lisette.tools as lt
    from lisette.testing import scripted_model
    monkeypatch.setattr(lt, 'tool_threads', 2); monkeypatch.setattr(lt, '_pools', (None, {}))  # pools of 2, made afresh
    fp = fake_provider.respond_with(scripted_model)
    kw, threads = dict(api_base=fp.openai_base, api_key='k'), set()
    def lookup(q:str)->str:
        "Look `q` up"
        threads.add(threading.current_thread().name); return 'found '+q
    def delegate(task:str)->str:
        "Hand `task` to a sub-agent"
        return asyncio.run(AsyncChat('openai/gpt-4o-mini', tools=[lookup], **kw)(task)).choices[0].message.content
    async def main():
        outer = [AsyncChat('openai/gpt-4o-mini', tools=[delegate], **kw) for _ in range(2)]
        return await asyncio.wait_for(asyncio.gather(*(c("go") for c in outer)), 20)
    try:
        assert all(r.choices[0].message.content for r in asyncio.run(main()))
        assert {n.rsplit('_', 1)[0] for n in threads} == {'lisette-tool-1'} and lt.tool_pool(1)._max_workers == 2
    finally:  # (a regression leaves pool threads waiting for ever: let them go, so the test run can end)
        for p in lt._pools[1].values(): p.shutdown(wait=False, cancel_futures=True)


# --- Schemas and calls of parameter types fastcore's get_schema gets wrong (helper-45's probe) ---

import dataclasses, enum
from typing import Literal, Optional, TypedDict
from pydantic import BaseModel
from lisette.tools import lite_mk_func
from lisette.testing import _functions

_json_types = {'string', 'integer', 'number', 'boolean', 'object', 'array', 'null'}

def check_schema(s, root=None):
    "Every `type` in schema `s` is a JSON Schema type, every `$ref` resolves from the root, `$defs` only at the root"
    root = s if root is None else root
    if isinstance(s, list):
        for v in s: check_schema(v, root)
    if not isinstance(s, dict): return
    if isinstance(t := s.get('type'), str): assert t in _json_types, s
    if isinstance(r := s.get('$ref'), str):
        assert r.startswith('#/$defs/') and r[8:] in root.get('$defs', {}), (r, list(root.get('$defs', {})))
    if s is not root: assert '$defs' not in s, s
    for k,v in s.items():
        if k!='enum': check_schema(v, root)

def params(f): return lite_mk_func(f)['function']['parameters']

def one_call(proto, fn, args):
    "The tool result of one turn in which the model calls `fn` with `args`, and the parameters schema the request sent"
    fp, model, kw = proto
    calls.clear()
    fp.queue(Reply(tool_calls=[dict(name=fn.__name__, arguments=args)]), Reply('ok'))
    chat, n = Chat(model, tools=[fn], **kw), len(fp.requests)
    chat('go')
    sent = dict(_functions(fp.requests[n].body))[fn.__name__]
    return tool_results(chat)[0], sent

def f_mode(mode:Literal['a', 'b'], n:Literal[1, 2]=1, opt:Optional[Literal['x', 'y']]=None, modes:list[Literal['a', 'b']]=None):
    "Pick modes"
    calls.append(('f_mode', mode, n, opt, modes)); return 'ok'

def test_literal_schema_is_an_enum():
    "A `Literal` was `{'type': 'object[object, object]'}`, which providers refuse"
    ps = params(f_mode)['properties']
    assert ps['mode'] == {'description': '', 'type': 'string', 'enum': ['a', 'b']}
    assert ps['n'] == {'description': '', 'default': 1, 'type': 'integer', 'enum': [1, 2]}
    assert ps['opt'] == {'description': '', 'default': None, 'anyOf': [{'type': 'string', 'enum': ['x', 'y']}, {'type': 'null'}]}
    assert ps['modes'] == {'description': '', 'default': None, 'type': 'array', 'items': {'type': 'string', 'enum': ['a', 'b']}}
    def mixed(v:Literal['a', 1]): "Mixed"
    assert params(mixed)['properties']['v'] == {'description': '', 'anyOf': [{'type': 'string', 'enum': ['a']}, {'type': 'integer', 'enum': [1]}]}
    def nullable(v:Literal['a', 'b', None]=None): "Or none"
    assert params(nullable)['properties']['v'] == {'description': '', 'default': None, 'anyOf': [{'type': 'string', 'enum': ['a', 'b']}, {'type': 'null'}]}  # (helper-50: an untyped enum, which Gemini made an object)
    check_schema(params(f_mode))

def test_literal_call_checks_the_value(proto):
    res, sent = one_call(proto, f_mode, {'mode': 'b', 'n': '2', 'opt': 'x', 'modes': ['a', 'b']})
    assert calls == [('f_mode', 'b', 2, 'x', ['a', 'b'])] and res == 'ok'
    check_schema(sent)
    res, _ = one_call(proto, f_mode, {'mode': 'c'})
    assert calls == [] and '`mode`' in res and "one of 'a', 'b'" in res and "'c'" in res
    res, _ = one_call(proto, f_mode, {'mode': 'a', 'modes': ['a', 'z']})
    assert calls == [] and '`modes` item 1' in res

class Tag(BaseModel):
    name: str

class Item(BaseModel):
    "An item"
    title: str
    tags: list[Tag] = []

def f_item(item:Item, more:list[Item]=None):
    "Store an item"
    calls.append(('f_item', item, more)); return 'stored'

def test_pydantic_parameter_schema_is_the_models_own():
    "The `$defs` entry described `BaseModel.__init__(**data)` (`{'data': {'type': 'object'}}`): a model following it failed"
    s = params(f_item)
    own = Item.model_json_schema()
    assert s['$defs'] == {'Tag': own['$defs']['Tag'], 'Item': {k:v for k,v in own.items() if k!='$defs'}}
    assert s['properties']['item'] == {'description': '', '$ref': '#/$defs/Item'}
    check_schema(s)

def test_pydantic_parameter_call_gets_instances(proto):
    res, sent = one_call(proto, f_item, {'item': {'title': 'a', 'tags': [{'name': 't'}]}, 'more': [{'title': 'b'}]})
    assert res == 'stored' and calls == [('f_item', Item(title='a', tags=[Tag(name='t')]), [Item(title='b')])]
    check_schema(sent)
    res, _ = one_call(proto, f_item, {'item': {'data': {'title': 'a'}}})
    assert calls == [] and '`item`' in res and 'title' in res

class Color(enum.Enum):
    RED = 'red'
    GREEN = 'green'

class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2

class Address(TypedDict):
    street: str
    number: int

def f_paint(c:Color, lvl:Level=Level.LOW, addr:Optional[Address]=None):
    "Paint"
    calls.append(('f_paint', c, lvl, addr)); return 'painted'

def test_enum_and_typeddict_schemas(proto):
    "`Chat(m, tools=[f_paint])` raised `TypeError: Parameter 'c': Parameter 'args': Missing type annotation`"
    fp, model, kw = proto
    Chat(model, tools=[f_paint], **kw)
    s = params(f_paint)
    assert s['properties']['c'] == {'description': '', 'type': 'string', 'enum': ['red', 'green']}
    assert s['properties']['lvl'] == {'description': '', 'default': 1, 'type': 'integer', 'enum': [1, 2]}
    assert s['$defs']['Address'] == {'type': 'object', 'properties': {'street': {'description': '', 'type': 'string'}, 'number': {'description': '', 'type': 'integer'}},
                                     'title': 'Address', 'required': ['street', 'number']}
    check_schema(s)

def test_enum_and_typeddict_calls(proto):
    res, _ = one_call(proto, f_paint, {'c': 'green', 'lvl': 2, 'addr': {'street': 'Main', 'number': '5'}})
    assert res == 'painted' and calls == [('f_paint', Color.GREEN, Level.HIGH, {'street': 'Main', 'number': 5})]
    assert type(calls[0][1]) is Color and type(calls[0][2]) is Level
    res, _ = one_call(proto, f_paint, {'c': 'blue'})
    assert calls == [] and "one of 'red', 'green'" in res
    res, _ = one_call(proto, f_paint, {'c': 'red', 'addr': {'street': 'Main'}})
    assert calls == [] and '`number`' in res

def test_type_without_schema_names_tool_parameter_and_type():
    def f_obj(a:int, x:object):
        "Takes anything"
    def f_untyped(a, b=2):
        "Untyped"
    with pytest.raises(TypeError) as e: lite_mk_func(f_obj)
    assert all(w in str(e.value) for w in ('`f_obj`', "'x'", 'object', 'schema dict')), e.value
    with pytest.raises(TypeError) as e: Chat('openai/gpt-4o-mini', tools=[f_untyped])
    assert all(w in str(e.value) for w in ('`f_untyped`', "'a'", 'Missing type annotation')), e.value

def f_posonly(a:int, /, b:int, c:int=10):
    "Positional-only a"
    calls.append(('f_posonly', a, b, c)); return a+b+c

def f_star(first:str, *nums:int, scale:int=1):
    "Sum numbers"
    calls.append(('f_star', first, nums, scale)); return sum(nums)*scale

def f_kw(a:int, **opts:float):
    "Options"
    calls.append(('f_kw', a, opts)); return 'ok'

def f_kw_any(a:int, **opts):
    "Any options"
    calls.append(('f_kw_any', a, opts)); return 'ok'

def test_positional_and_variadic_schemas():
    assert params(f_posonly)['required'] == ['a', 'b']
    s = params(f_star)
    assert s['properties']['nums'] == {'description': '', 'type': 'array', 'items': {'type': 'integer'}} and s['required'] == ['first']
    assert params(f_kw) == {'type': 'object', 'properties': {'a': {'description': '', 'type': 'integer'}}, 'required': ['a'], 'additionalProperties': {'type': 'number'}}
    assert params(f_kw_any)['additionalProperties'] is True

@pytest.mark.parametrize('fn,args,call', [
    (f_posonly, {'a': 1, 'b': 2}, ('f_posonly', 1, 2, 10)),
    (f_star, {'first': 'x', 'nums': [1, '2', 3], 'scale': 2}, ('f_star', 'x', (1, 2, 3), 2)),
    (f_star, {'first': 'x'}, ('f_star', 'x', (), 1)),
    (f_star, {'first': 'x', 'nums': []}, ('f_star', 'x', (), 1)),
    (f_kw, {'a': 1, 'x': '1.5', 'y': 2}, ('f_kw', 1, {'x': 1.5, 'y': 2})),
    (f_kw_any, {'a': 1, 'x': [1]}, ('f_kw_any', 1, {'x': [1]}))], ids=['posonly', 'star', 'star-none', 'star-empty', 'kwargs', 'kwargs-any'])
def test_positional_and_variadic_calls(proto, fn, args, call):
    "Positional-only parameters and `*args` were in the schema, but every call was answered 'unknown parameter'"
    res, sent = one_call(proto, fn, args)
    assert calls == [call], res
    check_schema(sent)

def test_bad_variadic_arguments_go_back_to_the_model(proto):
    res, _ = one_call(proto, f_star, {'first': 'x', 'nums': 3})
    assert calls == [] and '`nums` expects an array' in res
    res, _ = one_call(proto, f_kw, {'a': 1, 'x': 'big'})
    assert calls == [] and '`x`' in res and 'number' in res

def test_tool_without_source(proto):
    "A tool defined where Python keeps no source (a plain REPL, `exec`, `python -c`): `OSError: Could not locate source`"
    ns = {'__name__': 'repl'}
    exec('import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int\n'
         'def add(a: int, p: P, b: int = 0) -> int:\n    "Add two numbers"\n    return a + p.x + b\n', ns)
    f = ns['add']
    assert lite_mk_func(f)['function'] == {'name': 'add', 'description': 'Add two numbers\n\nReturns:\n- type: integer', 'parameters': {
        'type': 'object', 'properties': {'a': {'description': '', 'type': 'integer'}, 'p': {'description': '', '$ref': '#/$defs/P'}, 'b': {'description': '', 'default': 0, 'type': 'integer'}},
        'required': ['a', 'p'], '$defs': {'P': {'type': 'object', 'properties': {'x': {'description': '', 'type': 'integer'}}, 'title': 'P', 'required': ['x']}}}}
    fp, model, kw = proto
    fp.queue(Reply(tool_calls=[dict(name='add', arguments={'a': 1, 'p': {'x': 2}})]), Reply('ok'))
    chat = Chat(model, tools=[f], **kw)
    chat('go')
    assert tool_results(chat) == ['3']

@dataclasses.dataclass
class Inner:
    v: int

@dataclasses.dataclass
class Outer:
    inner: Inner
    items: list[Inner] = dataclasses.field(default_factory=list)
    name: str = ''

def f_outer(o:Outer):
    "Nested dataclass"
    calls.append(('f_outer', o)); return 'ok'

def test_nested_dataclass_schema():
    "`#/$defs/Inner` was nested under `$defs/Outer/$defs`, unresolvable from the root"
    s = params(f_outer)
    assert list(s['$defs']) == ['Outer', 'Inner'] and s['$defs']['Outer']['properties']['inner']['$ref'] == '#/$defs/Inner'
    check_schema(s)

def test_nested_dataclass_call(proto):
    "The tool got `Outer(inner={'v': 1})`: the nested dataclass is built too"
    res, sent = one_call(proto, f_outer, {'o': {'inner': {'v': '1'}, 'items': [{'v': 2}], 'name': 'x'}})
    assert calls == [('f_outer', Outer(Inner(1), [Inner(2)], 'x'))]
    check_schema(sent)
    res, _ = one_call(proto, f_outer, {'o': {'inner': {'v': 'one'}}})
    assert calls == [] and '`o` field `inner` field `v` expects an integer' in res

def test_same_class_name_twice():
    "Two classes of one name get two `$defs` entries, each `$ref` to its own"
    def mk():
        @dataclasses.dataclass
        class Inner:
            w: str
        return Inner
    Other = mk()
    def f_two(a:Inner, b:Other):
        "Two Inners"
    s = params(f_two)
    assert s['properties']['a']['$ref'] == '#/$defs/Inner' and s['properties']['b']['$ref'] == '#/$defs/Inner2'
    assert s['$defs']['Inner2']['properties'] == {'w': {'description': '', 'type': 'string'}}

def test_python_tool_names_providers_refuse():
    "A function name over 64 characters, or with characters outside [a-zA-Z0-9_-] (`café`), was sent as it is"
    def café(x:int):
        "Non-ASCII name"
    def long_name(x:int):
        "Long name"
    long_name.__name__ = 'f'*65
    for f in (café, long_name):
        with pytest.raises(ValueError) as e: Chat('openai/gpt-4o-mini', tools=[f])
        assert f.__name__ in str(e.value) and '^[a-zA-Z0-9_-]{1,64}$' in str(e.value)
    long_name.__name__ = 'f'*64
    Chat('openai/gpt-4o-mini', tools=[long_name])

def test_ordinary_schemas_unchanged():
    "Functions fastcore's `get_schema` handles get its schema byte for byte"
    from pathlib import Path
    from typing import Annotated, Union
    from fastcore.funccall import get_schema
    @dataclasses.dataclass
    class Pt:
        "A point"
        x: int # x coordinate
        y: int = 0
    def f1(a:int, b:str='x', c:float=1.5, d:bool=False) -> int:
        "Doc"
    def f2(
        a: int, # first
        b: list[int]=None, # second
        *, k: dict[str, int]|None = None, # keyword
    ) -> str: # returned
        "Doc"
    def f3(p:Pt, r:Optional[Pt]=None, s:list[Pt]=[], t:dict[str, list[Pt]]=None):
        "Classes"
    def f4(a:Path, b:bytes, c:Decimal, d:UUID, e:tuple[int,str], f:tuple[int,...], g:set[str], h:dict, i:list, j:tuple):
        "Custom types"
    def f5(a:Annotated[int, 'an int'], b:Union[int,str,None]=None, c=3, d='s', e:'int'=1):
        "Annotated"
    for f in (f1, f2, f3, f4, f5, Pt):
        assert json.dumps(lite_mk_func(f)['function']) == json.dumps(get_schema(f, pname='parameters')), f

def test_structured_gets_the_bound_arguments(fake_provider):
    "`structured` called its tool through fastcore's `call_func`: an Enum parameter got the bare value, a positional-only one failed"
    from lisette import structured
    fp = fake_provider
    def pick(c:Color, n:int, /)->tuple:
        "Pick a color"
        return c, n
    fp.queue(Reply(tool_calls=[dict(name='pick', arguments={'c': 'red', 'n': '2'})]))
    assert structured('openai/gpt-4o-mini', ['go'], pick, api_base=fp.openai_base, api_key='k') == (Color.RED, 2)

class TreeNode(BaseModel):
    "A tree"
    v: int
    kids: list['TreeNode'] = []

def test_pydantic_model_as_tool():
    "A pydantic model given as a tool has its own schema (it had `{'data': {'type': 'object'}}`), one that refers to itself too"
    s = params(TreeNode)
    assert s['properties']['kids']['items'] == {'$ref': '#/$defs/TreeNode'} and s['required'] == ['v']
    check_schema(s)
    json.dumps(s)

def test_image_result_reaches_the_model_as_an_image(proto):
    """A Python tool that returns a PIL image or an image's bytes: the model gets the image, on every protocol (it got
    `<PIL.Image.Image image mode=RGB size=2x2 at 0x…>`, or the bytes' repr, as text: helper-45)"""
    import json
    from PIL import Image
    from lisette.history import check_hist
    fp, m, kw = proto
    def draw(color:str):
        "Draw a small square"
        return Image.new('RGB', (2, 2), color)
    def photo():
        "A photo"
        return (Path(__file__).parent.parent/'samples'/'puppy.jpg').read_bytes()
    fp.queue(Reply(tool_calls=[('draw', {'color': 'red'}), ('photo', {})]), "A red square and a puppy.")
    chat = Chat(m, tools=[draw, photo], **kw)
    chat("draw")
    res = [o['content'] for o in chat.hist if isinstance(o, dict) and o.get('role')=='tool']
    assert [r[0]['image_url']['url'][:23] for r in res] == ['data:image/png;base64,i', 'data:image/jpeg;base64,']
    sent = json.dumps(fp.last)
    assert res[0][0]['image_url']['url'][22:80] in sent and 'PIL.Image' not in sent
    check_hist(chat.hist)

# --- String annotations: `from __future__ import annotations`, quoted ones ---

_future_src = '''
from typing import Literal, Optional, TypedDict, Annotated
import dataclasses, enum
from pydantic import BaseModel

class Color(enum.Enum):
    RED = 'red'
    GREEN = 'green'

class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2

class Address(TypedDict):
    street: str
    number: int

@dataclasses.dataclass
class Spot:
    x: int
    c: Color

class Tag(BaseModel):
    name: str

calls = []

def f_typed(mode: Literal['a', 'b'],  # the mode
            c: Color, spot: Spot, tag: Tag, lvl: Level = Level.LOW, addr: Optional[Address] = None,
            ns: list[Literal[1, 2]] = None, k: Annotated[int, 'how many'] = 1, *more: int, **weights: float) -> str:
    "A tool of many types"
    calls.append((mode, c, spot, tag, lvl, addr, ns, k, more, weights)); return 'done'
'''

@pytest.fixture
def typed_mods(tmp_path, monkeypatch):
    "The same tool module twice: with `from __future__ import annotations` (every annotation a string), and without"
    import importlib
    (tmp_path/'lisette_fut_tool.py').write_text('from __future__ import annotations\n' + _future_src)
    (tmp_path/'lisette_plain_tool.py').write_text('\n' + _future_src)  # (one line shorter header: same line numbers)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module('lisette_fut_tool'), importlib.import_module('lisette_plain_tool')
    import sys
    for m in ('lisette_fut_tool', 'lisette_plain_tool'): sys.modules.pop(m, None)

def test_future_annotations_give_the_same_schema(typed_mods):
    "With `from __future__ import annotations` every parameter was `{'type': 'object'}` (the annotation a string fastcore could not read)"
    fut, plain = typed_mods
    assert isinstance(fut.f_typed.__annotations__['mode'], str)
    s = params(fut.f_typed)
    assert s == params(plain.f_typed)
    assert s['properties']['mode'] == {'description': 'the mode', 'type': 'string', 'enum': ['a', 'b']}
    assert s['properties']['k'] == {'description': 'how many', 'default': 1, 'type': 'integer'}
    assert set(s['$defs']) == {'Spot', 'Tag', 'Address'}
    assert lite_mk_func(fut.f_typed)['function']['description'] == lite_mk_func(plain.f_typed)['function']['description']
    check_schema(s)

def test_future_annotations_calls_are_coerced(proto, typed_mods):
    fut, plain = typed_mods
    args = {'mode': 'b', 'c': 'green', 'spot': {'x': '3', 'c': 'red'}, 'tag': {'name': 't'}, 'lvl': 2,
            'addr': {'street': 'Main', 'number': '5'}, 'ns': ['1', 2], 'k': '4', 'more': [1, '2'], 'w': '0.5'}
    got = []
    for m in (fut, plain):
        m.calls.clear()
        res, sent = one_call(proto, m.f_typed, args)
        assert res == 'done', res
        got.append(m.calls[0])
    a, b = got
    assert repr(a) == repr(b).replace('lisette_plain_tool', 'lisette_fut_tool')
    assert a[1] is fut.Color.GREEN and a[2] == fut.Spot(3, fut.Color.RED) and a[4] is fut.Level.HIGH and a[6:] == ([1, 2], 4, (1, 2), {'w': 0.5})

def test_string_annotation_with_none_default_is_as_written():
    "`x: 'int' = None` is an integer, as `x: int = None` is (before Python 3.11, `get_type_hints(f)` makes it `Optional[int]`)"
    def f_none(x:'int'=None, y:int=None):
        "Defaults of None"
    ps = params(f_none)['properties']
    assert ps['x'] == ps['y'] == {'description': '', 'default': None, 'type': 'integer'}

def test_unresolvable_string_annotation_names_tool_and_parameter():
    "A string annotation naming nothing the module defines was taken as `{'type': 'object'}`"
    def f_fwd(a:'int', b:'Nowhere'=None):
        "Takes a type nobody defines"
    with pytest.raises(TypeError) as e: lite_mk_func(f_fwd)
    assert all(w in str(e.value) for w in ('`f_fwd`', "'b'", "'Nowhere'")) and "'a'" not in str(e.value), e.value

# --- Gemini takes only strings for an `enum` ---

class Stars(BaseModel):
    n: Literal[1, 2, 3]

def f_rate(n:Literal[1, 2, 3], lvl:Level=Level.LOW, stars:Optional[Stars]=None, sure:Literal[True, 'maybe']=True):
    "Rate"
    calls.append(('f_rate', n, lvl, stars, sure)); return 'rated'

def test_gemini_integer_enum_sent_as_strings(fake_provider):
    """A `Literal[1, 2, 3]` or `IntEnum` parameter reached Gemini as an `integer` property with the values as strings
    (litellm 1.110: Gemini refuses an `enum` on another type than STRING) or without its values (1.106: the model never saw them)"""
    fp = fake_provider
    calls.clear()
    fp.queue(Reply(tool_calls=[dict(name='f_rate', arguments={'n': '2', 'lvl': '2', 'stars': {'n': '3'}, 'sure': 'true'})]), Reply('ok'))
    chat = Chat('gemini/gemini-3-flash-preview', tools=[f_rate], api_base=fp.gemini_base, api_key='k')
    chat('go')
    decl = fp.requests[0].body['tools'][0]['function_declarations'][0]['parameters']
    assert decl['properties']['n'] == {'description': '', 'type': 'string', 'enum': ['1', '2', '3']}
    assert decl['properties']['lvl'] == {'description': '', 'default': '1', 'type': 'string', 'enum': ['1', '2']}
    assert calls == [('f_rate', 2, Level.HIGH, Stars(n=3), True)] and type(calls[0][2]) is Level
    assert chat.hist[-1].content == 'ok'
    notes = [a.detail for a in chat.adjustments if a.kind=='schema']
    assert any('integer `enum` values sent as strings' in n for n in notes), notes
    # other providers get the integer enum as it is
    n = len(fp.requests)
    fp.queue(Reply('ok'))
    Chat('openai/gpt-4o-mini', tools=[f_rate], api_base=fp.openai_base, api_key='k')('go')
    assert dict(_functions(fp.requests[n].body))['f_rate']['properties']['n']['enum'] == [1, 2, 3]

def test_enum_values_sent_as_strings_reach_a_schema_tool_as_declared(fake_provider):
    "A tool with its own schema (an MCP tool) gets the arguments as sent: an `integer` `enum` value Gemini sent as '2' is 2 again"
    got = []
    class Rate:
        __name__ = 'rate'
        __tool_schema__ = {'type': 'function', 'function': {'name': 'rate', 'description': 'Rate', 'parameters': {'type': 'object', 'properties': {
            'n': {'type': 'integer', 'enum': [1, 2]}, 'tags': {'type': 'array', 'items': {'type': 'string', 'enum': ['1', 'b']}}, 'text': {'type': 'string'}}}}}
        def __call__(self, **kw): got.append(kw); return 'rated'
    fp = fake_provider
    fp.queue(Reply(tool_calls=[dict(name='rate', arguments={'n': '2', 'tags': ['1'], 'text': '2'})]), Reply('ok'))
    chat = Chat('gemini/gemini-3-flash-preview', tools=[Rate()], api_base=fp.gemini_base, api_key='k')
    chat('go')
    assert got == [{'n': 2, 'tags': ['1'], 'text': '2'}]

# --- An image a tool returns, to a model that sees none ---

@pytest.mark.parametrize('model', ['openai/o3-mini', 'o3-mini'])
def test_tool_image_to_a_model_without_vision(fake_provider, model):
    """An image a tool returned went to a model that takes no images as an image part, which the provider refuses
    (on every later request of the chat too): now a text saying so goes in its place, reported; the history keeps the image"""
    from PIL import Image
    fp = fake_provider
    def draw(color:str):
        "Draw a small square"
        return Image.new('RGB', (2, 2), color)
    def mcp_like():
        "An MCP tool's image result"
        return ToolResponse([{'type': 'text', 'text': 'a chart'}, {'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,iVBORw0KGgo='}}])
    fp.queue(Reply(tool_calls=[('draw', {'color': 'red'}), ('mcp_like', {})]), 'Drawn.')
    chat = Chat(model, tools=[draw, mcp_like], api_base=fp.openai_base, api_key='k')
    chat('draw')
    sent = fp.last['messages']
    results = [m for m in sent if m['role']=='tool']
    assert 'image_url' not in json.dumps(sent) and len(results)==2
    assert all('cannot see images' in json.dumps(m['content']) for m in results) and 'a chart' in json.dumps(results[1]['content'])
    assert [a.detail for a in chat.adjustments if a.kind=='tool_image'] == [
        f"2 images a tool returned sent to {model} as a text saying so: litellm says {model} cannot see images (it would refuse the request); the history keeps them"]
    assert sum(isinstance(m, dict) and m.get('role')=='tool' and 'image_url' in json.dumps(m['content']) for m in chat.hist) == 2

@pytest.mark.parametrize('model', ['openai/some-unknown-model', 'openai/gpt-3.5-turbo', 'openrouter/openai/gpt-4o'])
def test_tool_image_to_a_model_unknown_or_not_said_is_sent(fake_provider, model):
    "A model litellm does not know, or whose entry does not say (OpenRouter's gpt-4o sees images), may see images: it gets the image, unreported"
    from PIL import Image
    fp = fake_provider
    def draw(color:str):
        "Draw a small square"
        return Image.new('RGB', (2, 2), color)
    fp.queue(Reply(tool_calls=[('draw', {'color': 'red'})]), 'Drawn.')
    chat = Chat(model, tools=[draw], api_base=fp.openai_base, api_key='k')
    chat('draw')
    assert 'image_url' in json.dumps(fp.last['messages']) and not [a for a in chat.adjustments if a.kind=='tool_image']


# --- OpenAI's `multi_tool_use.parallel`: one call of a tool nobody declared, bundling parallel calls. litellm splits it in a
# reply it reads whole, not in a stream: there it was answered "Tool not defined" and the model lost a round

import asyncio, warnings
from lisette import StopResponse

ran = []
def m_add(a:int, b:int=0) -> int:
    "Add two numbers"
    ran.append(('m_add', a, b)); return a + b

def m_mul(a:int, b:int) -> int:
    "Multiply two numbers"
    ran.append(('m_mul', a, b)); return a * b

def m_boom() -> int:
    "Fail"
    ran.append(('m_boom',)); raise ValueError('boom')

def m_stop() -> str:
    "End the loop"
    ran.append(('m_stop',)); return StopResponse('stopped')

def _multi(args, tools=(m_add, m_mul), cls=Chat, fp=None, replies=('done',), **kw):
    "A streamed turn (`cls`) whose first reply is one `multi_tool_use.parallel` call with `args` (a dict, or raw JSON text): the chat"
    ran.clear()
    fp.queue(Reply(tool_calls=[dict(name='multi_tool_use.parallel', arguments=args, id='call_p1')]), *replies)
    chat = cls('openai/gpt-4o-mini', tools=list(tools), api_base=fp.openai_base, api_key='k')
    async def arun(): return [o async for o in await chat('go', stream=True, **kw)]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        asyncio.run(arun()) if cls is AsyncChat else list(chat('go', stream=True, **kw))
    return chat

def _uses(*calls): return {'tool_uses': [{'recipient_name': n, 'parameters': p} for n,p in calls]}

NAME_OK = re.compile(r'^[a-zA-Z0-9_-]+$')  # the tool names OpenAI takes in a request

def _sent_ok(fp, chat):
    "Every request's tool-call names are ones OpenAI takes, every call answered once; the history valid"
    for r in fp.requests:
        for m in r.body['messages']:
            assert all(NAME_OK.match(tc['function']['name']) for tc in m.get('tool_calls') or ()), m
    assert check_hist(chat.hist) is None

def _answers(fp, i=1):
    "(tool_call_id, content) of the tool messages of request `i`"
    return [(m['tool_call_id'], m['content']) for m in fp.requests[i].body['messages'] if m['role']=='tool']

@pytest.mark.parametrize('cls', [Chat, AsyncChat])
def test_multi_tool_use_parallel_split_into_its_calls(fake_provider, cls):
    "A streamed bundle is split into its calls (a `functions.` prefix or none), as litellm splits one it reads whole: each runs and is answered as any call; the chat says so; no request carries the dotted name"
    fp = fake_provider
    chat = _multi(_uses(('functions.m_add', {'a': 1, 'b': 2}), ('m_mul', {'a': 3, 'b': 4})), cls=cls, fp=fp)
    assert sorted(ran) == [('m_add', 1, 2), ('m_mul', 3, 4)]
    assert [(tc['id'], tc['function']['name']) for tc in fp.requests[1].body['messages'][1]['tool_calls']] == [('call_p1_0', 'm_add'), ('call_p1_1', 'm_mul')]
    assert _answers(fp) == [('call_p1_0', '3'), ('call_p1_1', '12')]
    assert chat.hist[-1].content == 'done' and len(fp.requests) == 2
    _sent_ok(fp, chat)
    [a] = [a for a in chat.adjustments if a.kind=='tool_call']
    assert "'call_p1'" in a.detail and 'split into its 2 calls (m_add, m_mul)' in a.detail

@pytest.mark.parametrize('cls', [Chat, AsyncChat])
def test_multi_tool_use_parallel_failing_tool(fake_provider, cls):
    "A bundled call whose tool raises gets its traceback as any call does; the others run"
    fp = fake_provider
    chat = _multi(_uses(('functions.m_boom', {}), ('functions.m_add', {'a': 1})), tools=(m_add, m_boom), cls=cls, fp=fp)
    (i0, r0), (i1, r1) = _answers(fp)
    assert (i0, i1) == ('call_p1_0', 'call_p1_1') and 'ValueError: boom' in r0 and r1 == '1'
    _sent_ok(fp, chat)

BAD_MULTI = [(_uses(('functions.m_add', {'a': 1}), ('functions.nope', {})), "there is no tool named 'nope'"),
             (_uses(('functions.m_add', {'a': 1}), ('functions.multi_tool_use.parallel', {})), "there is no tool named 'multi_tool_use.parallel'"),
             ({'tool_uses': 'x'}, '`tool_uses` must be a non-empty array'), ({}, '`tool_uses` must be a non-empty array'),
             ({'tool_uses': [{'recipient_name': 'functions.m_add', 'parameters': []}]}, '`tool_uses[0]` is not an object'),
             ({'tool_uses': [{'parameters': {'a': 1}}]}, '`tool_uses[0]` is not an object'),
             ('{"tool_uses": [', 'Expecting value: line 1 column 16 (char 15). Arguments must be a JSON object. Make each'), ('[1]', 'expected a JSON object')]

@pytest.mark.parametrize('cls', [Chat, AsyncChat])
@pytest.mark.parametrize('args,words', BAD_MULTI, ids=['unknown', 'nested', 'not-a-list', 'missing', 'params-not-object', 'no-recipient', 'broken-json', 'not-an-object'])
def test_multi_tool_use_parallel_unknown_recipient_or_bad_arguments(fake_provider, cls, args, words):
    "None of its calls run; the call, renamed so OpenAI takes it back, is answered once with an error naming the problem; the turn goes on"
    fp = fake_provider
    chat = _multi(args, cls=cls, fp=fp)
    [(tid, res)] = _answers(fp)
    assert tid == 'call_p1' and fp.requests[1].body['messages'][1]['tool_calls'][0]['function']['name'] == 'multi_tool_use_parallel'
    assert ran == [] and res.startswith('Tool multi_tool_use.parallel was not run') and words in res, res
    assert chat.hist[-1].content == 'done'
    _sent_ok(fp, chat)
    assert any(a.kind=='tool_call' and 'renamed' in a.detail for a in chat.adjustments)

def test_multi_tool_use_parallel_stop_response_ends_the_loop(fake_provider):
    "A bundled tool's `StopResponse` ends the loop as any tool's does: the next request is the final one (tools off)"
    chat = _multi(_uses(('functions.m_stop', {}), ('functions.m_add', {'a': 1})), tools=(m_add, m_stop), fp=fake_provider)
    assert sorted(ran) == [('m_add', 1, 0), ('m_stop',)] and fake_provider.requests[1].body.get('tool_choice') == 'none'
    _sent_ok(fake_provider, chat)

def test_multi_tool_use_parallel_declared_by_the_user_is_theirs(fake_provider):
    "A tool the user declared under that name (a schema dict) is called as any tool, not split"
    got = []
    class Multi:
        __tool_schema__ = {'type': 'function', 'function': {'name': 'multi_tool_use.parallel', 'description': 'mine', 'parameters': {'type': 'object', 'properties': {}}}}
        __name__ = 'multi_tool_use.parallel'
        def __call__(self, **kw): got.append(kw); return 'mine'
    chat = _multi(_uses(('functions.m_add', {'a': 1}),), tools=(m_add, Multi()), fp=fake_provider)
    assert ran == [] and len(got) == 1 and _answers(fake_provider) == [('call_p1', 'mine')]

def _oa_reply(*tcs):
    msg = {'role': 'assistant', 'content': None, 'tool_calls': list(tcs)}
    return Reply(raw=json.dumps({'id': 'chatcmpl-x', 'object': 'chat.completion', 'created': 1, 'model': 'gpt-4o-mini',
        'choices': [{'index': 0, 'message': msg, 'finish_reason': 'tool_calls'}], 'usage': {'prompt_tokens': 7, 'completion_tokens': 3, 'total_tokens': 10}}).encode())

def _mcall(tid, *calls): return {'id': tid, 'type': 'function', 'function': {'name': 'multi_tool_use.parallel', 'arguments': json.dumps(_uses(*calls))}}

def _read_whole(fp, *calls, model='openai/gpt-4o-mini'):
    "A turn whose first reply, read whole, holds tool calls `calls` (then 'done'): (the chat, its response)"
    ran.clear()
    fp.queue(_oa_reply(*calls), 'done')
    chat = Chat(model, tools=[m_add, m_mul], api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return chat, chat('go')

def test_multi_tool_use_parallel_split_by_litellm_each_in_its_place(fake_provider):
    """Two bundles and a call in a reply litellm reads whole: litellm's splitter put the second bundle's calls in the wrong
    place (its `shift` counts the calls added, not those replaced), so that bundle stayed in (its calls ran twice) and the
    call after it was lost; each bundle's calls now take its place, and every call runs once"""
    fp = fake_provider
    chat, _ = _read_whole(fp, _mcall('call_p1', ('functions.m_add', {'a': 1}), ('functions.m_add', {'a': 2})),
                          _mcall('call_p2', ('functions.m_add', {'a': 3}), ('functions.m_mul', {'a': 4, 'b': 5})),
                          {'id': 'call_x', 'type': 'function', 'function': {'name': 'm_mul', 'arguments': '{"a": 6, "b": 7}'}})
    assert sorted(ran) == [('m_add', 1, 0), ('m_add', 2, 0), ('m_add', 3, 0), ('m_mul', 4, 5), ('m_mul', 6, 7)]
    ids = [tc.id for tc in chat.hist[1].tool_calls]
    assert ids == ['call_p1_0', 'call_p1_1', 'call_p2_0', 'call_p2_1', 'call_x']
    assert [i for i,_ in _answers(fp)] == ids
    _sent_ok(fp, chat)
    said = [a.detail for a in chat.adjustments if a.kind=='tool_call']
    assert [d.split("'")[4] for d in said] == ['call_p1', 'call_p2'] and 'split by litellm into its 2 calls (m_add, m_mul)' in said[1], said

def test_multi_tool_use_parallel_bad_arguments_read_whole(fake_provider):
    "A bundle of the wrong shape in a reply litellm reads whole: litellm's splitter raised on it and the reply was lost (InternalServerError); now the call is answered with what is wrong, and the turn goes on"
    fp = fake_provider
    chat, r = _read_whole(fp, {'id': 'call_p1', 'type': 'function', 'function': {'name': 'multi_tool_use.parallel', 'arguments': '{"tool_uses": "x"}'}})
    assert contents(r).content == 'done'
    [(tid, res)] = _answers(fp)
    assert ran == [] and tid == 'call_p1' and res.startswith('Tool multi_tool_use.parallel was not run') and '`tool_uses` must be a non-empty array' in res, res
    _sent_ok(fp, chat)

def test_multi_tool_use_parallel_split_by_litellm_plain(fake_provider):
    "One such call in a reply litellm reads whole: litellm's split calls run as any calls (nothing for lisette to do)"
    fp = fake_provider
    chat, _ = _read_whole(fp, _mcall('call_p1', ('functions.m_add', {'a': 1}), ('functions.m_mul', {'a': 2, 'b': 3})))
    assert sorted(ran) == [('m_add', 1, 0), ('m_mul', 2, 3)]  # (run at once: in any order)
    assert _answers(fp) == [('call_p1_0', '1'), ('call_p1_1', '6')]
    _sent_ok(fp, chat)
    [a] = [a for a in chat.adjustments if a.kind=='tool_call']  # (litellm changed what the model sent: said, as a streamed split is)
    assert "'call_p1' (OpenAI's bundle of parallel calls) was split by litellm into its 2 calls (m_add, m_mul)" in a.detail

def test_multi_tool_use_parallel_split_said_once(fake_provider):
    "A reply read whole whose split calls' ids come again later (a replayed reply, another chat): the split is said for the reply it was made in only"
    fp = fake_provider
    fp.queue(_oa_reply(_mcall('call_q', ('functions.m_add', {'a': 1}),)), 'done', Reply(tool_calls=[dict(name='m_add', arguments={'a': 2}, id='call_q_0')]), 'done')
    chat = Chat('openai/gpt-4o-mini', tools=[m_add, m_mul], api_base=fp.openai_base, api_key='k')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        chat('go'); chat2 = Chat('openai/gpt-4o-mini', tools=[m_add], api_base=fp.openai_base, api_key='k'); chat2('again')
    assert [a.detail.split(' was ')[1] for a in chat.adjustments if 'split by litellm' in a.detail] == ['split by litellm into its 1 call (m_add)']
    assert not [a for a in chat2.adjustments if 'split by litellm' in a.detail]

def test_multi_tool_use_parallel_litellm_split_not_kept_is_not_said(fake_provider):
    """litellm's Databricks reader runs the splitter on a reply read whole, then builds the message from the calls as sent:
    the bundle reaches the chat whole, and the chat splits it (into the same ids). The split is the chat's, said once as
    such; it was also said as litellm's, which it was not (helper-73)"""
    fp = fake_provider
    chat, _ = _read_whole(fp, _mcall('call_d', ('functions.m_add', {'a': 1}), ('m_mul', {'a': 2, 'b': 3})), model='databricks/dbrx-x')
    assert sorted(ran) == [('m_add', 1, 0), ('m_mul', 2, 3)] and _answers(fp) == [('call_d_0', '1'), ('call_d_1', '6')]
    [a] = [a.detail for a in chat.adjustments if a.kind=='tool_call']
    assert "'call_d' (OpenAI's bundle of parallel calls) split into its 2 calls (m_add, m_mul), as litellm splits" in a, a
    from lisette.providers import _split_from
    assert 'call_d_0' not in _split_from and 'call_d_1' not in _split_from  # (nothing left to be said by a later chat)

def test_multi_tool_use_parallel_without_id_split_by_litellm(fake_provider):
    """A bundle without an id in a reply read whole: litellm gives it a uuid4 of its own and its calls that id plus `_0`, `_1`;
    the calls came without ids, so they get ids in the provider's style and the chat says so, as for any call litellm
    gives an id; the split is said without naming litellm's id, which the model never sent (helper-73)"""
    fp = fake_provider
    b = _mcall(None, ('functions.m_add', {'a': 1}), ('m_mul', {'a': 2, 'b': 3})); del b['id']
    chat, _ = _read_whole(fp, b)
    ids = [tc.id for tc in chat.hist[1].tool_calls]
    assert sorted(ran) == [('m_add', 1, 0), ('m_mul', 2, 3)] and [i for i,_ in _answers(fp)] == ids
    assert all(re.fullmatch(r'call_[A-Za-z0-9]{24}', i) for i in ids), ids
    said = [a.detail for a in chat.adjustments if a.kind in ('tool_call', 'tool_call_id')]
    assert said[0] == "the reply's 'multi_tool_use.parallel' call without an id (OpenAI's bundle of parallel calls) was split by litellm into its 2 calls (m_add, m_mul)", said
    assert [d.split(': given the id ')[1] for d in said[1:]] == [repr(i) for i in ids] and all('came without an id' in d for d in said[1:]), said
    _sent_ok(fp, chat)

def test_tool_call_fields_read_as_get_reads_them():
    "_tc_id/_tc_name/_tc_args read litellm's call and function objects and dicts directly (the hot path of a tool round): the same values `_get` reads, whichever of a pydantic object's `__dict__` or extras holds a field"
    from litellm.types.utils import ChatCompletionMessageToolCall as T, Function as F
    from litellm import Message
    from lisette.tools import _tc_name, _tc_args
    class D(dict): pass
    renamed = T(id='x', function=F(name='a', arguments='b')); renamed.function.name = 'renamed'
    cases = [T(id='a', type='function', function=F(name='n', arguments='{}')), T(function={'name': 'x', 'arguments': '1'}),
             T(id='b', function=dict(name='y', arguments='{}')), {'id': 'c', 'function': {'name': 'z', 'arguments': '{}'}}, {'id': 'c'},
             {'function': None}, D(id='d', function=D(name='w')), {'function': F(name='q', arguments='2')}, renamed,
             Message(role='assistant', content=None, tool_calls=[{'id': 'e', 'type': 'function', 'function': {'name': 'm', 'arguments': '{}'}}]).tool_calls[0],
             5, 'text', None]
    for tc in cases:
        assert (_tc_id(tc), _tc_name(tc), _tc_args(tc)) == (_get(tc, 'id'), _get(tc, 'function', 'name'), _get(tc, 'function', 'arguments')), tc
    assert (_tc_id(cases[0]), _tc_name(cases[0]), _tc_args(cases[0]), _tc_name(renamed)) == ('a', 'n', '{}', 'renamed')

def test_tool_response_of_no_parts_sent_as_a_dot(fake_provider):
    """A tool returning ToolResponse([]): its result was sent as an empty list, which OpenAI refuses (its reference gives
    the array `minItems: 1`) on that request and every later one. It goes as '.', said as a tool_result adjustment"""
    from lisette.testing import Reply
    from lisette.tools import ToolResponse
    fp = fake_provider
    def f() -> str:
        "F"
        return ToolResponse([])
    fp.queue(Reply('', tool_calls=[('f', {})]), 'done')
    c = Chat('openai/gpt-4o-mini', tools=[f], api_base=fp.openai_base, api_key='k')
    c('go', max_steps=3)
    assert fp.last['messages'][-1]['content'] == '.' and c.hist[2]['content'] == '.'
    assert [a.detail for a in c.adjustments if a.kind=='tool_result'] == [f"the result of tool call {c.hist[2]['tool_call_id']!r}: no parts (an empty list, which OpenAI refuses), sent as '.'"]
