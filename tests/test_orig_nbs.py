"""Regressions found by replaying the original lisette's notebooks against ours (`tools/orig_nbs.py`): places where the
original's saved outputs (the documented behaviour) and ours differed. Each runs the public API through the fake provider."""
import os, subprocess, sys, tempfile, textwrap
import pytest
from lisette.testing import Reply

def run_py(code):
    "stdout of `code` in a fresh interpreter (for global patches such as `patch_litellm`, which must not leak into other tests)"
    with tempfile.NamedTemporaryFile('w', suffix='.py', delete=False) as f: f.write(textwrap.dedent(code))  # a file: tool schemas read the source
    try: r = subprocess.run([sys.executable, f.name], capture_output=True, text=True, timeout=300, env=os.environ | {'LITELLM_LOCAL_MODEL_COST_MAP': 'True'})
    finally: os.unlink(f.name)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout

def test_patch_litellm_pins_every_provider_id(fake_provider):
    "The original pins every response id; ours kept the Responses API's `resp_…` and Gemini's own ids (notebook cells 15, 108, 218)"
    fp = fake_provider
    protos = {'openai/gpt-4o-mini': fp.openai_base, 'openai/responses/gpt-5.4': fp.responses_base,
              'gemini/gemini-3-flash-preview': fp.gemini_base, 'anthropic/claude-sonnet-4-5': fp.anthropic_base}
    fp.queue(*[Reply('hi') for _ in protos])
    out = run_py(f'''
        from lisette import Chat, patch_litellm
        patch_litellm()
        for model, base in {protos!r}.items():
            r = Chat(model, api_base=base, api_key='k')('hey')
            print(model, r.id, r.created, r._repr_markdown_().count('- id: `chatcmpl-xxx`'))''')
    got = dict(l.split(' ', 1) for l in out.strip().splitlines())
    assert got == {m: 'chatcmpl-xxx 1000000000 1' for m in protos}, got

def test_print_hist_separates_messages(fake_provider, capsys):
    "`print_hist` prints a blank line after each message, as the original's saved outputs show (notebook cells 174, 182, 191)"
    from lisette import Chat
    fp = fake_provider
    fp.queue(Reply('Hi Rens'))
    chat = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k')
    chat('Hey my name is Rens')
    capsys.readouterr()
    chat.print_hist()
    out = capsys.readouterr().out
    assert out == ''.join(f'{m}\n\n' for m in chat.hist)
    assert out.count('\n\n') == len(chat.hist) == 2

def test_marked_tool_result_shown_whole(fake_provider):
    "A tool result wrapped in 𝍁…𝍁 is displayed whole, without the marks (the original's `_trunc_str`, notebook cell 121)"
    from lisette import Chat
    from lisette.stream import _trunc_str, StreamFormatter
    assert _trunc_str('𝍁xxxxxxxxxx𝍁', mx=5) == 'xxxxxxxxxx'
    assert _trunc_str('𝍁xxxxxxxxxx', mx=5, skip=0) == '<TRUNCATED>𝍁xxxx…</TRUNCATED>'  # marked at one end only: truncated as usual
    long = 'line of output ' * 300
    def report() -> str:
        "Return a long report"
        return '𝍁' + long + '𝍁'
    def plain() -> str:
        "Return a long unmarked report"
        return long
    fp = fake_provider
    fp.queue(Reply(tool_calls=[('report', {}), ('plain', {})]), Reply('done'))
    chat = Chat('openai/gpt-4o-mini', tools=[report, plain], api_base=fp.openai_base, api_key='k')
    out = ''.join(StreamFormatter().format_stream(chat('report', stream=True)))
    trs = [m for m in chat.hist if isinstance(m, dict) and m.get('role') == 'tool']
    assert [tr['content'] for tr in trs] == [report(), plain()]  # the model gets each result as the tool returned it
    assert out.count(long.rstrip()) == 1 and '𝍁' not in out       # displayed: the marked one whole, without its marks
    assert out.count('<TRUNCATED>') == 1                            # and the unmarked one truncated

def test_deepseek_history_body_as_original(fake_provider):
    """The original notebook's DeepSeek cell (324): a hand-built history goes out with `reasoning_content: ''` on each
    assistant message, byte for byte what the original sent (and its recording holds)"""
    from lisette import Chat, mk_tc, mk_tc_req, mk_tc_results, dsf
    def simple_add(a: int, b: int=0) -> int:
        "Add two numbers together"
        return a + b
    fp = fake_provider
    fp.queue(Reply('8+9 is **17**.'))
    tc = mk_tc(simple_add, a=5, b=7)
    tcq = mk_tc_req("I'll calculate 5+7.", [tc])
    tcr = mk_tc_results(tcq, ['12'])
    chat = Chat(dsf, tools=[simple_add], hist=["What's 5+7?", tcq, tcr[0], "5+7 is 12."], api_base=fp.openai_base, api_key='k')
    chat("And what's 8+9?")
    sent = fp.requests[-1].body['messages']
    assert [m.get('reasoning_content') for m in sent if m['role'] == 'assistant'] == ['', '']
    assert not any(isinstance(m, dict) and 'reasoning_content' in m for m in chat.hist)  # the history itself is not changed

def test_gemini_tool_ids_leave_random_alone(fake_provider):
    """Ids lisette makes up for Gemini's id-less tool calls are repeatable after `patch_litellm(seed)` but are not drawn
    from `random`: the tool ids `random_tool_id` makes afterwards are the ones the original makes (its recording of the
    notebook's later cells, 181/185/190, holds them)"""
    fp = fake_provider
    fp.queue(*[r for _ in range(2) for r in (Reply(tool_calls=[('simple_add', {'a': 1, 'b': 2})]), Reply('3'))])
    out = run_py(f'''
        from lisette import Chat, patch_litellm, random_tool_id
        def simple_add(a: int, b: int=0) -> int:
            "Add two numbers"
            return a + b
        def tc_ids(hist):
            tcs = [tc for m in hist for tc in ((m.get('tool_calls') if isinstance(m, dict) else getattr(m, 'tool_calls', None)) or [])]
            return [tc['id'] if isinstance(tc, dict) else tc.id for tc in tcs]
        patch_litellm(0); expected = random_tool_id()
        ids = []
        for _ in range(2):
            patch_litellm(0)
            chat = Chat('gemini/gemini-3-flash-preview', tools=[simple_add], api_base={fp.gemini_base!r}, api_key='k')
            chat('1+2?')
            ids.append([i.split('__thought__')[0] for i in tc_ids(chat.hist)])  # the fake's thought signatures count up
            print('next tool id as without the Gemini call:', random_tool_id() == expected)
        print('Gemini ids repeat after the same seed:', ids[0] == ids[1] and len(ids[0]) == 1 and ids[0][0].startswith('call_'))''')
    assert out.splitlines() == ['next tool id as without the Gemini call: True']*2 + ['Gemini ids repeat after the same seed: True'], out

def test_core_star_import():
    "`from lisette.core import *` (how code written against the original imports it) brings the whole public API"
    import lisette
    ns = {}
    exec('from lisette.core import *', ns)
    assert set(lisette.__all__) <= set(ns)
    # the names of the original's `lisette.core.__all__` (0.1.36) that the documented API has
    orig = '''haik45 sonn45 sonn sonn46 opus46 opus gpt54 gpt54m tool_dtls_tag re_tools token_dtls_tag re_token
              codex54m codex54 codex55 codex53spark effort kimi qwen3p6p dsf dsp patch_litellm remove_cache_ckpts contents
              stop_reason mk_msg split_tools fmt2hist mk_msgs stream_with_complete lite_mk_func ToolResponse cite_footnote
              cite_footnotes Chat add_warning random_tool_id mk_tc mk_tc_req mk_tc_result mk_tc_results astream_with_complete
              AsyncChat mk_tr_details StreamFormatter AsyncStreamFormatter display_stream adisplay_stream stream_chunk_builder'''.split()
    assert [n for n in orig if n not in ns] == []
