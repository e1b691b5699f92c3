"""Loop control through the fake provider: stall detection, steering a running turn (interject, stop) from another
thread or task, and paged tool results read back with `read_result`. Rendezvous inside tools and responders use
events, never sleeps, so each interjection or stop lands at a known point.
Stalls and pages are adjustments: the first of each kind warns (`AdjustmentWarning`), all are in `chat.adjustments`."""
import asyncio, json, random, re, threading, warnings
import pytest, litellm
from lisette import Chat, AsyncChat, contents, mk_msg
from lisette.history import check_hist
from lisette.chat import AdjustmentWarning
from lisette.context import ContextWindowWarning, context_window
from lisette.loop import stall_note, stopped_result, page_note
from lisette.messages import _role, _get
from lisette.tools import _tc_id
from lisette.testing import Reply, request_view, _proto_of

pytestmark = pytest.mark.filterwarnings('ignore::lisette.chat.AdjustmentWarning')  # asserted where it matters

# Requests read the same way in every protocol: a recorded request's `view`, or a responder's (body, path)
def view(b, path=''): return b if 'turns' in b else request_view(b, _proto_of(b, path))
def results_of(b, path=''): return [txt for t in view(b, path)['turns'] for _,txt in t['results']]
def tool_names(b, path=''): return view(b, path)['tools']
def tools_off(b, path=''): return view(b, path)['tool_choice']=='none' or not tool_names(b, path)
def last_text(b, path=''): return next(t['text'] for t in reversed(view(b, path)['turns']) if t['text'])
def user_texts(b, path=''): return [t['text'] for t in view(b, path)['turns'] if t['role']=='user' and t['text']]
def roles(chat): return [_role(m) for m in chat.hist]
def adjusted(chat, kind): return [a.detail for a in chat.adjustments if a.kind==kind]
def texts(chat): return [m.get('content') if isinstance(m, dict) else m.content for m in chat.hist]

def get_page(n:int) -> str:
    "Get page `n` of the report"
    return f"page {n}: nothing new"

# ---- stall detection ----
def looper(body, path):
    "A model stuck in a loop: asks for page 1 again and again, until tools are off"
    return "I give up: page 1 says nothing new." if tools_off(body, path) else Reply(tool_calls=[('get_page', {'n': 1})])

def test_stall_stops_a_looping_model(proto):
    fp, m, kw = proto
    fp.respond_with(looper)
    chat = Chat(m, tools=[get_page], **kw)
    with pytest.warns(AdjustmentWarning, match='stall: tool round 2: repeated get_page'): r = chat("Read the report.", max_steps=10)
    assert contents(r).content == "I give up: page 1 says nothing new."
    bs = fp.views
    assert len(bs) == 4  # call, repeat (noted), repeat again (loop ends), final answer: far below max_steps
    note = stall_note.format(why='repeated get_page({"n": 1})')
    assert not any(note in r for r in results_of(bs[1]))
    assert note in results_of(bs[2])[-1]
    assert tools_off(bs[3]) and 'You have used all your tool calls' in last_text(bs[3])
    assert not any(stall_note[:30] in str(c) for c in texts(chat))  # the note was never stored
    assert len(adjusted(chat, 'stall')) == 2 and 'the loop ends' in adjusted(chat, 'stall')[-1]
    check_hist(chat.hist)

def test_stall_off_and_per_call(proto):
    fp, m, kw = proto
    fp.respond_with(looper)
    chat = Chat(m, tools=[get_page], stall=None, **kw)
    chat("Read the report.", max_steps=4)
    assert len(fp.views) == 5 and adjusted(chat, 'stall') == []  # only max_steps ended it
    fp.reset(); fp.respond_with(looper)
    chat("Read it again.", max_steps=10, stall=3)  # per call: two notes, then the end
    assert len(fp.views) == 5 and len(adjusted(chat, 'stall')) == 3
    fp.reset(); fp.respond_with(looper)
    Chat(m, tools=[get_page], stall=3, **kw)("Read.", max_steps=10, stall=None)
    assert len(fp.views) == 11
    with pytest.raises(ValueError, match='positive number of rounds'): Chat(m, stall=0)

def search(q:str) -> str:
    "Search the docs"
    return "No results."

def test_stall_on_repeated_results(proto):
    "New calls that only ever get results already seen make no progress either"
    fp, m, kw = proto
    qs = iter(['cats', 'felines', 'kittens', 'tabby', 'moggy'])
    fp.respond_with(lambda body, path: "Nothing found." if tools_off(body, path) else Reply(tool_calls=[('search', {'q': next(qs)})]))
    chat = Chat(m, tools=[search], **kw)
    chat("Find cats.", max_steps=10)
    assert len(fp.views) == 4
    assert stall_note.format(why='every result repeats an earlier one') in results_of(fp.views[2])[-1]

def test_repeated_call_with_new_results_is_progress(proto):
    "A tool without arguments asked for several times in a round, each time with something new (as a recorded Gemini 3 run does): no stall note, the loop goes on (helper-37 B3)"
    fp, m, kw = proto
    topics = iter(['penguins', 'cars', 'pirates', 'volcanoes', 'robots', 'rivers'])
    def generate_topic() -> str:
        "A new random topic"
        return next(topics)
    script = iter([Reply(tool_calls=[('generate_topic', {})]*3), Reply(tool_calls=[('generate_topic', {})]), Reply(tool_calls=[('generate_topic', {})]), 'Six topics.'])
    fp.respond_with(lambda body, path: next(script))
    chat = Chat(m, tools=[generate_topic], **kw)
    r = chat("Go", max_steps=10)
    assert contents(r).content == 'Six topics.' and adjusted(chat, 'stall') == []
    assert not any(stall_note[:30] in t for v in fp.views for t in results_of(v))
    check_hist(chat.hist)

def test_progress_resets_the_streak(proto):
    fp, m, kw = proto
    script = [1, 1, 2, 2, 3]  # each repeat is followed by progress: a note each time, never the end
    fp.respond_with(lambda body, path: Reply(tool_calls=[('get_page', {'n': script.pop(0)})]) if script else "Done.")
    chat = Chat(m, tools=[get_page], **kw)
    assert contents(chat("Read.", max_steps=10)).content == "Done."
    assert len(fp.views) == 6 and not any(tools_off(b) for b in fp.views)

# ---- steering: interject and stop ----
class Rendezvous:
    "A tool that signals when it runs and waits until released (from the test thread)"
    def __init__(self):
        self.started, self.go, self.ran = threading.Event(), threading.Event(), 0
        def wait_tool(x:int) -> int:
            "Wait for the test to release it, then echo"
            self.ran += 1; self.started.set()
            assert self.go.wait(10), 'the test never released the tool'
            self.go.clear()  # the next call waits again
            return x
        self.tool = wait_tool

def run_in_thread(f):
    "Run `f` in a thread: (thread, dict that gets 'res' or 'exc')"
    out = {}
    def run():
        try: out['res'] = f()
        except BaseException as e: out['exc'] = e
    t = threading.Thread(target=run); t.start()
    return t, out

def drive(chat, msg, stream, **kw):
    "Run a turn to the end, streaming or not; the last ModelResponse"
    if not stream: return chat(msg, **kw)
    return [o for o in chat(msg, stream=True, **kw)][-1]

def adrive(chat, msg, stream, **kw):
    async def go():
        if not stream: return await chat(msg, **kw)
        return [o async for o in await chat(msg, stream=True, **kw)][-1]
    return go()

def answer_tools(body, path):
    "A model that calls wait_tool once, then answers naming the last user text it got"
    if not results_of(body, path): return Reply(tool_calls=[('wait_tool', {'x': 7})])
    return f"Answer after: {last_text(body, path)}"

@pytest.mark.parametrize('stream', [False, True])
def test_interject_from_thread_during_tool_round(proto, stream):
    fp, m, kw = proto
    rv = Rendezvous()
    fp.respond_with(answer_tools)
    chat = Chat(m, tools=[rv.tool], **kw)
    t, out = run_in_thread(lambda: drive(chat, "Wait, then answer.", stream))
    assert rv.started.wait(10)
    chat.interject("Also: answer in French.")
    rv.go.set(); t.join(10)
    assert 'exc' not in out, out
    assert roles(chat) == ['user', 'assistant', 'tool', 'user', 'assistant']
    assert chat.hist[3] == {'role': 'user', 'content': 'Also: answer in French.'}
    check_hist(chat.hist)
    assert results_of(fp.views[1]) == ['7'] and last_text(fp.views[1]) == 'Also: answer in French.'
    assert contents(out['res']).content == 'Answer after: Also: answer in French.'
    assert len(fp.views) == 2

def test_interject_shares_anthropic_user_message(fake_provider):
    "In Anthropic's form the tool_result blocks and the interjected text travel in one user message, results first"
    fp = fake_provider
    rv = Rendezvous()
    fp.respond_with(answer_tools)
    chat = Chat('anthropic/claude-sonnet-4-5', tools=[rv.tool], api_base=fp.anthropic_base, api_key='k')
    t, out = run_in_thread(lambda: chat("Wait."))
    assert rv.started.wait(10)
    chat.interject("Hurry.")
    rv.go.set(); t.join(10)
    last = fp.bodies[1]['messages'][-1]
    assert last['role'] == 'user' and [b['type'] for b in last['content']] == ['tool_result', 'text']
    assert [m['role'] for m in fp.bodies[1]['messages']] == ['user', 'assistant', 'user']

@pytest.mark.parametrize('stream', [False, True])
def test_interject_during_final_answer_gets_answered(proto, stream):
    "An interjection that arrives while the model writes its answer gets one more request"
    fp, m, kw = proto
    in_req, go = threading.Event(), threading.Event()
    def responder(body, path):
        if len(fp.requests)==1: in_req.set(); assert go.wait(10)
        return f"You said: {last_text(body, path)}"
    fp.respond_with(responder)
    chat = Chat(m, **kw)
    t, out = run_in_thread(lambda: drive(chat, "Hello.", stream))
    assert in_req.wait(10)
    chat.interject("And goodbye.")
    go.set(); t.join(10)
    assert roles(chat) == ['user', 'assistant', 'user', 'assistant']
    assert texts(chat)[1:] == ['You said: Hello.', 'And goodbye.', 'You said: And goodbye.']
    check_hist(chat.hist)

def test_interject_between_turns_goes_with_the_next(proto):
    fp, m, kw = proto
    fp.respond_with(lambda body, path: f"Got: {' '.join(user_texts(body, path))}")
    chat = Chat(m, **kw)
    assert chat.stop() is False  # nothing to stop
    chat.interject("Be brief.")
    got = contents(chat("Hi.")).content  # some protocols send the two as one user message
    assert got.index('Be brief.') < got.index('Hi.')
    assert [m['content'] for m in chat.hist[:2]] == ['Be brief.', 'Hi.']
    check_hist(chat.hist)
    with pytest.raises(ValueError, match='empty'): chat.interject('  ')

@pytest.mark.parametrize('stream', [False, True])
@pytest.mark.parametrize('now', [False, True])
def test_stop_during_tool_round(proto, stream, now):
    fp, m, kw = proto
    rv = Rendezvous()
    fp.respond_with(lambda body, path: "Summary: waited for 7." if tools_off(body, path) else Reply(tool_calls=[('wait_tool', {'x': 7})]))
    chat = Chat(m, tools=[rv.tool], **kw)
    t, out = run_in_thread(lambda: drive(chat, "Wait forever.", stream, max_steps=50))
    assert rv.started.wait(10)
    assert chat.stop(now=now) is True
    rv.go.set(); t.join(10)
    assert 'exc' not in out, out
    assert rv.ran == 1  # the running round finished, no other started
    check_hist(chat.hist)
    if now:
        assert len(fp.views) == 1 and roles(chat) == ['user', 'assistant', 'tool']
        assert chat.hist[-1]['content'] == '7'
    else:
        assert len(fp.views) == 2 and tools_off(fp.views[1])
        assert roles(chat) == ['user', 'assistant', 'tool', 'user', 'assistant']
        assert texts(chat)[-1] == "Summary: waited for 7."
    assert chat.stop() is False  # the turn is over
    fp.reset(); fp.queue("Still here.")
    assert contents(chat("Hello?")).content == "Still here."
    check_hist(chat.hist)

@pytest.mark.parametrize('now', [False, True])
def test_stop_during_request_skips_its_tool_calls(proto, now):
    fp, m, kw = proto
    in_req, go, ran = threading.Event(), threading.Event(), []
    def never(x:int) -> int:
        "Must not run: the user stopped the loop before"
        ran.append(x); return x
    def responder(body, path):
        if tools_off(body, path): return "Stopped before running anything."
        in_req.set(); assert go.wait(10)
        return Reply(tool_calls=[('never', {'x': 1}), ('never', {'x': 2})])
    fp.respond_with(responder)
    chat = Chat(m, tools=[never], **kw)
    t, out = run_in_thread(lambda: chat("Go.", max_steps=10))
    assert in_req.wait(10)
    chat.stop(now=now)
    go.set(); t.join(10)
    assert 'exc' not in out, out
    assert ran == [] and texts(chat)[2:4] == [stopped_result]*2
    check_hist(chat.hist)
    assert len(fp.views) == (1 if now else 2)

# ---- the same from asyncio: AsyncChat, from another task and from another thread ----
@pytest.mark.parametrize('stream', [False, True])
def test_async_interject_and_stop_from_task(proto, stream):
    fp, m, kw = proto
    fp.respond_with(lambda body, path: "Wrapped up." if tools_off(body, path) else answer_tools(body, path))
    async def main():
        started, go = asyncio.Event(), asyncio.Event()
        async def wait_tool(x:int) -> int:
            "Wait for the test task, then echo"
            started.set(); await go.wait(); return x
        chat = AsyncChat(m, tools=[wait_tool], **kw)
        task = asyncio.create_task(adrive(chat, "Wait.", stream))
        await started.wait()
        chat.interject("Note this.")
        go.set()
        r = await task
        assert roles(chat) == ['user', 'assistant', 'tool', 'user', 'assistant']
        assert contents(r).content == 'Answer after: Note this.'
        check_hist(chat.hist)
        # stop, now from a task: the round finishes, then the final request
        started.clear(); go.clear(); n0 = len(fp.requests)
        fp.respond_with(lambda body, path: "Wrapped up." if tools_off(body, path) else Reply(tool_calls=[('wait_tool', {'x': 1})]))
        task = asyncio.create_task(adrive(chat, "Loop.", stream, max_steps=50))
        await started.wait()
        assert chat.stop()
        go.set()
        r = await task
        assert contents(r).content == 'Wrapped up.' and len(fp.views)-n0 == 2 and tools_off(fp.views[-1])
        check_hist(chat.hist)
    asyncio.run(main())

@pytest.mark.parametrize('stream', [False, True])
def test_async_steered_from_thread(proto, stream):
    "AsyncChat runs in its event loop; a plain thread interjects, then stops it"
    fp, m, kw = proto
    rv = Rendezvous()
    fp.respond_with(lambda body, path: "Done." if tools_off(body, path) else Reply(tool_calls=[('wait_tool', {'x': len(fp.requests)})]))
    chat = AsyncChat(m, tools=[rv.tool], **kw)
    def steer():
        assert rv.started.wait(10); rv.started.clear()
        chat.interject("First round done?"); rv.go.set()
        assert rv.started.wait(10)
        chat.stop(now=True); rv.go.set()
    t = threading.Thread(target=steer); t.start()
    asyncio.run(adrive(chat, "Loop.", stream, max_steps=50))
    t.join(10)
    assert roles(chat) == ['user', 'assistant', 'tool', 'user', 'assistant', 'tool']
    assert chat.hist[3]['content'] == "First round done?" and len(fp.views) == 2
    check_hist(chat.hist)

# ---- paged tool results ----
big = ''.join(random.Random(0).choice('abcdefghij \n\u00e9\u4e2d"\\{}') for _ in range(200_000))

def dump() -> str:
    "Dump the whole database"
    return big

def pager(got):
    "A model that calls dump, then reads the whole result page by page with read_result, keeping what it read in `got`"
    def respond(body, path):
        res = results_of(body, path)
        if 'read_result' not in tool_names(body, path) and not res: return Reply(tool_calls=[('dump', {})])
        first, reads = res[0], res[1:]
        h, k = re.search(r"read_result\(handle='([^']+)', offset=(\d+)\)\]$", first).groups()  # as the note says
        text = first[:int(k)] + ''.join(r.rsplit('\n\n[lisette: characters ', 1)[0] for r in reads)
        if len(text) < len(big): return Reply(tool_calls=[('read_result', {'handle': h, 'offset': len(text)})])
        got.append(text); return f"Read {len(text):,} characters."
    return respond

def test_paged_result_read_back_completely(proto):
    fp, m, kw = proto
    got = []
    fp.respond_with(pager(got))
    chat = Chat(m, tools=[dump], **kw)
    r = chat("Read the whole database.", max_steps=10)
    assert got == [big], 'the model did not read back exactly the whole result'
    assert contents(r).content == "Read 200,000 characters."
    bs = fp.views
    assert 'read_result' not in tool_names(bs[0]) and all('read_result' in tool_names(b) for b in bs[1:])
    assert max(len(r) for b in bs for r in results_of(b)) < 40_000 + 300  # no request carried a result much over a page
    assert chat.hist[2]['content'] == big  # the history keeps it whole
    assert len(adjusted(chat, 'paged')) == 1
    check_hist(chat.hist)

def count_chars(text:str) -> int:
    "Count the characters of a text"
    return len(text)

def test_paged_result_whole_for_refs_saving_and_display(proto, tmp_path):
    "tc_refs pass the whole result on, a saved chat keeps it whole, the stream shows it whole; the model only got a page"
    fp, m, kw = proto
    def respond(body, path):
        "Dump, then count what the dump returned by reference (the id as the result's header says)"
        res = results_of(body, path)
        if not res: return Reply(tool_calls=[('dump', {})])
        tid = re.match(r'\[tool_call_id: ([^\]]+)\]', res[0])[1]
        if len(res)==1: return Reply(tool_calls=[('count_chars', {'text': f"$`{tid}`"})])
        return "Counted."
    fp.respond_with(respond)
    chat = Chat(m, tools=[dump, count_chars], tc_refs=True, **kw)
    outs = list(chat("Dump, then count it.", max_steps=5, stream=True))
    dump_id, count_id = [_tc_id(tc) for o in chat.hist if _role(o)=='assistant' for tc in _get(o, 'tool_calls') or []]
    assert chat.tc_res[dump_id] == big and chat.tc_res[count_id] == 200_000
    shown = [o for o in outs if isinstance(o, dict) and o.get('tool_call_id')==dump_id][0]
    assert big in shown['content'][-1]['text']  # what the caller (and display) gets is whole
    sent = results_of(fp.views[1])[0]
    assert len(sent) < 40_500 and f"read_result(handle='{dump_id.split('__thought__')[0]}', offset=40000)" in sent  # (Gemini's: the id the model sees)
    chat.save(tmp_path/'c.json')
    c2 = Chat.load(tmp_path/'c.json')
    assert c2.hist[2]['content'][-1]['text'] == big and c2.page_results == 40_000 and c2.stall == 2
    check_hist(c2.hist)

def test_paging_off_and_small_results(proto):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('dump', {})]), "Whole.", Reply(tool_calls=[('count_chars', {'text': 'abc'})]), "Small.")
    chat = Chat(m, tools=[dump, count_chars], page_results=None, **kw)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        chat("Dump.")  # 200k characters, ~200k tokens: more than fits, unless the window is far larger
    assert any(issubclass(w.category, ContextWindowWarning) for w in ws) == ((context_window(m) or 10**9) < 500_000)
    assert big in results_of(fp.views[1]) and 'read_result' not in tool_names(fp.views[1])
    chat.page_results = 40_000
    with warnings.catch_warnings():
        warnings.simplefilter('error', ContextWindowWarning)
        chat("Count abc.")  # the dump from before is paged from now on (so it fits), and read_result offered
    assert 'read_result' in tool_names(fp.views[3]) and results_of(fp.views[3])[-1] == '3'
    assert all(len(r) < 40_500 for r in results_of(fp.views[3]))

def test_gemini_handles_are_the_ids_the_model_sees(fake_provider):
    "On Gemini litellm's call ids carry the thought signature; the page note gives the id the model sees on the wire, and read_result and tc_refs take it"
    import re, warnings
    def big(n:int) -> str:
        "A big result"
        return ''.join(f'{i:07d}\n' for i in range(n))
    def person() -> dict:
        "Get a person"
        return {'name': 'Alice'}
    def greet(p:dict) -> str:
        "Greet a person"
        return f"Hello {p['name']}!" if isinstance(p, dict) else f"got {p!r}"
    fp, seen = fake_provider, {}
    wire = lambda body: [p['function_response'] for ct in body['contents'] for p in ct['parts'] if 'function_response' in p]
    def answer(body, path):
        n = len(fp.requests)
        if n==1: return Reply('calling', tool_calls=[('big', {'n': 500})], thinking='plan')
        if n==2:
            fr = wire(body)[0]
            seen['wire'], seen['handle'] = fr.get('id'), re.search(r"handle='([^']*)'", str(fr['response']))[1]
            return Reply('reading', tool_calls=[('read_result', {'handle': seen['wire'], 'offset': 1000, 'length': 16})])
        if n==3:
            seen['read'] = str(wire(body)[-1]['response'])
            return Reply('getting', tool_calls=[('person', {})], thinking='plan')
        if n==4: return Reply('greeting', tool_calls=[('greet', {'p': f"$`{wire(body)[-1].get('id')}`"})])
        seen['greet'] = str(wire(body)[-1]['response'])
        return Reply('done')
    fp.respond_with(answer)
    chat = Chat('gemini/gemini-3-flash-preview', tools=[big, person, greet], tc_refs=True, page_results=1000, api_base=fp.gemini_base, api_key='k')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        chat('go', think='l', max_steps=6)
    assert '__thought__' not in seen['wire'] and seen['handle'] == seen['wire']
    assert 'characters 1,000-1,016 of' in seen['read'] and 'no tool result has handle' not in seen['read']
    assert 'Hello Alice!' in seen['greet']

def test_interjection_given_back_when_its_request_fails(fake_provider):
    "A message interjected during a tool round whose next request fails is not lost with the failed turn: it goes with the next turn's request"
    fp = fake_provider
    holder = {}
    def slow(x:int) -> int:
        "Return x"
        holder['c'].interject('ALSO: use metric units'); return x
    fp.queue(Reply(tool_calls=[('slow', {'x': 1})]), Reply(status=500, error='boom'), 'ok')
    c = holder['c'] = Chat('openai/gpt-4o-mini', tools=[slow], api_base=fp.openai_base, api_key='k', retries=0)
    with pytest.raises(litellm.InternalServerError): c('go')
    assert 'metric' in json.dumps(fp.requests[1].body) and not any('metric' in str(m) for m in c.hist)
    c('next question')
    assert 'metric' in json.dumps(fp.last['messages']) and check_hist(c.hist) is None
