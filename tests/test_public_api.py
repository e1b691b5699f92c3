"""The public API of the original lisette, as its rendered docs show it (the contract: ../shared/seeds/003_*.txt).

`from lisette import *` and `lisette.core` (the original's one module) must provide every documented name, and the
signatures the docs show must still accept the same calls: the same parameters in the same order with the same
defaults. New parameters may follow the documented ones, with defaults, so calls written for the original still work."""
import inspect
import types
from lisette.testing import Reply
import pytest
import lisette, lisette.core
from litellm import completion
from fastcore.basics import noop

# Names the contract documents: a `show_doc` signature, or used in its examples as lisette names
DOCUMENTED = '''patch_litellm stop_reason contents remove_cache_ckpts mk_msg mk_msgs split_tools fmt2hist re_tools re_token
    stream_with_complete astream_with_complete delta_text mk_stream_chunk lite_mk_func ToolResponse StopResponse structured
    cite_footnote cite_footnotes search_count UsageStats Chat AsyncChat add_warning random_tool_id mk_tc mk_tc_req
    mk_tc_result mk_tc_results mk_tr_details trunc_param StreamFormatter AsyncStreamFormatter display_stream adisplay_stream
    haik45 sonn sonn46 opus gpt54 gpt54m codex55 codex53spark qwen3p6p dsf stream_chunk_builder'''.split()
# Public in the original lisette though the rendered docs never show them by name
ORIGINAL_TOO = 'tool_dtls_tag token_dtls_tag FullResponse sonn45 opus46 kimi dsp codex54 codex54m'.split()
PUBLIC = DOCUMENTED + ORIGINAL_TOO

def _star():
    ns = {}
    exec('from lisette import *', ns)
    return ns

STAR = _star()

@pytest.mark.parametrize('name', PUBLIC)
def test_star_import_exports(name):
    assert name in STAR, f'`from lisette import *` does not export {name!r}'

@pytest.mark.parametrize('name', PUBLIC)
def test_core_provides(name):
    assert hasattr(lisette.core, name), f'lisette.core has no {name!r} (notebooks written against the original import it from there)'
    if name in STAR: assert getattr(lisette.core, name) is STAR[name], f'lisette.core.{name} is not the object `from lisette import *` gives'

def test_star_import_exports_no_modules():
    "Submodules are not API names: `from lisette import *` must not bind `chat`, `stream`, `tools`... to modules"
    mods = sorted(k for k,v in STAR.items() if isinstance(v, types.ModuleType))
    assert not mods, f'`from lisette import *` exports submodules {mods}: give lisette/__init__.py an `__all__` built from the submodules\' `__all__`'

def test_version():
    assert isinstance(lisette.__version__, str) and lisette.__version__[0].isdigit(), f'bad lisette.__version__ {lisette.__version__!r}'

# ---- signatures: (parameter, default) in order, as the docs show them; `E` marks "no default"
E = inspect.Parameter.empty
_final_prompt = {'role': 'user', 'content': 'You have used all your tool calls for this turn. Please summarize your findings. '
    'If you did not complete your goal, tell the user what further work is needed. You may use tools again on the next user message.'}
# One documented default deliberately differs (issue 16): `temp` is None, not 0. The original never sent a temperature
# (litellm dropped it), so None, "the provider's default", is what its `temp=0` really did; ours sends a temp only when set.
DEVIATING_DEFAULTS = {('Chat', 'temp'): (0, None), ('AsyncChat', 'temp'): (0, None)}
_chat_init = [('model', E), ('sp', ''), ('temp', 0), ('search', False), ('tools', None), ('hist', None), ('ns', None),
    ('cache', False), ('cache_idxs', [-1]), ('ttl', None), ('api_base', None), ('api_key', None), ('extra_headers', None),
    ('tc_refs', False), ('tc_res_eval', False), ('markup', 0), ('tool_reminder', None), ('max_tokens', None),
    ('completefunc', None), ('stream', False), ('callkw', None)]
_chat_call = [('msg', None), ('prefill', None), ('temp', None), ('think', None), ('search', None), ('stream', None),
    ('max_steps', 2), ('final_prompt', _final_prompt), ('return_all', False), ('step', 1), ('tool_choice', None), ('max_tokens', None)]
_fmt = [('mx', 2000), ('debug', False), ('showthink', False)]

SIGS = {
    'patch_litellm': [('seed', 0)],
    'stop_reason': [('r', E)], 'contents': [('r', E)], 'remove_cache_ckpts': [('msg', E)],
    'mk_msg': [('content', E), ('role', 'user'), ('cache', False), ('ttl', None)],
    'mk_msgs': [('msgs', E), ('cache', False), ('cache_idxs', [-1]), ('ttl', None)],
    'split_tools': [('s', E)], 'fmt2hist': [('outp', E)],
    'stream_with_complete': [('gen', E), ('postproc', noop)], 'astream_with_complete': [('agen', E), ('postproc', noop)],
    'delta_text': [('msg', E)], 'lite_mk_func': [('f', E)],
    'structured': [('m', E), ('msgs', E), ('tool', E), ('completefunc', completion)],
    'cite_footnotes': [('stream_list', E)], 'cite_footnote': [('msg', E)], 'search_count': [('r', E)],
    'UsageStats': [('prompt_tokens', 0), ('completion_tokens', 0), ('total_tokens', 0), ('cached_tokens', 0),
                   ('cache_creation_tokens', 0), ('reasoning_tokens', 0), ('web_search_requests', 0), ('cost', 0.0)],
    'Chat': _chat_init, 'AsyncChat': _chat_init,
    'Chat.__call__': _chat_call, 'AsyncChat.__call__': _chat_call,
    'Chat.print_hist': [],
    'add_warning': [('r', E), ('msg', E)], 'random_tool_id': [],
    'mk_tc': [('func', E), ('tcid', None), ('idx', 1)], 'mk_tc_req': [('content', E), ('tcs', E)],
    'mk_tc_result': [('tc', E), ('result', E)], 'mk_tc_results': [('tcq', E), ('results', E)],
    'mk_tr_details': [('tr', E), ('tc', E), ('mx', 2000)], 'trunc_param': [('v', E), ('mx', 40)],
    'StreamFormatter': _fmt, 'AsyncStreamFormatter': _fmt,
    'display_stream': [('rs', E)] + _fmt, 'adisplay_stream': [('rs', E)] + _fmt,
}
_POS = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)

def _resolve(name):
    o = STAR[name.split('.')[0]]
    for a in name.split('.')[1:]: o = getattr(o, a)
    return o

def _params(f):
    ps = list(inspect.signature(f).parameters.values())
    return ps[1:] if ps and ps[0].name=='self' else ps

@pytest.mark.parametrize('name', SIGS)
def test_signature(name):
    want, got = SIGS[name], _params(_resolve(name))
    named = [p for p in got if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert [p.name for p in named[:len(want)]] == [n for n,_ in want], \
        f'{name}: documented parameters {[n for n,_ in want]}, but it takes {[p.name for p in named]}'
    for p,(n,dflt) in zip(named, want):
        dflt = DEVIATING_DEFAULTS.get((name, n), (None, dflt))[1]
        assert p.kind in _POS, f'{name}: parameter {n!r} is {p.kind.description}, documented as positional-or-keyword'
        assert p.default is dflt or p.default == dflt, f'{name}: default of {n!r} is {p.default!r}, documented as {dflt!r}'
    extra = [p.name for p in named[len(want):] if p.default is E and p.kind is not p.KEYWORD_ONLY]
    assert not extra, f'{name}: parameters {extra} come after the documented ones without a default, so documented calls break'

def test_async_call_signature_is_the_sync_one():
    "`AsyncChat.__call__` shows `Chat.__call__`'s signature, annotations and `**kwargs` (which go to litellm) included, as documented (helper-46: `@delegates` took both away)"
    assert _params(STAR['AsyncChat'].__call__) == _params(STAR['Chat'].__call__)

def test_async_call_is_async():
    assert inspect.iscoroutinefunction(STAR['AsyncChat'].__call__), 'AsyncChat.__call__ is documented as `async def`'
    assert inspect.iscoroutinefunction(STAR['adisplay_stream']), 'adisplay_stream is documented as `async def`'

def test_stream_with_complete_as_documented(fake_provider):
    "As the original: the sync one's `postproc` gets the whole list at the end and it returns the response; the async one is iterated for the chunks only (each to `postproc`) and keeps the response in `.value`; `stream_chunk_builder` is exported"
    import asyncio, litellm
    from fastcore.xtras import SaveReturn
    fp, kw = fake_provider, dict(api_base=fake_provider.openai_base, api_key='k')
    fp.queue(Reply("Hey there", chunks=2), Reply("Hey there", chunks=2))
    got = []
    r2 = SaveReturn(STAR['stream_with_complete'](litellm.completion('openai/gpt-4o-mini', [{'role': 'user', 'content': 'Hey'}], stream=True, **kw), postproc=got.append))
    chunks = list(r2)
    assert got == [chunks] and STAR['contents'](r2.value).content == 'Hey there'
    assert STAR['contents'](STAR['stream_chunk_builder'](chunks)).content == 'Hey there'
    async def arun():
        seen, r = [], STAR['astream_with_complete'](await litellm.acompletion('openai/gpt-4o-mini', [{'role': 'user', 'content': 'Hey'}], stream=True, **kw), postproc=lambda o: seen.append(o))
        return seen, [o async for o in r], r.value
    seen, items, value = asyncio.run(arun())
    assert seen == items and all(hasattr(o.choices[0], 'delta') for o in items) and STAR['contents'](value).content == 'Hey there'

def test_mk_stream_chunk_takes_kwargs():
    ps = _params(STAR['mk_stream_chunk'])
    assert [p.kind for p in ps] == [inspect.Parameter.VAR_KEYWORD], f'mk_stream_chunk is documented as (**kwargs), it takes {ps}'

def test_mk_tc_takes_kwargs():
    assert any(p.kind is p.VAR_KEYWORD for p in _params(STAR['mk_tc'])), 'mk_tc is documented with **kw for the tool arguments'

def test_structured_forwards_completion_params():
    "structured is `@delegates(completion)`: its signature offers completion's keyword parameters"
    got = {p.name for p in _params(STAR['structured'])}
    missing = {'messages', 'temperature', 'max_tokens', 'tool_choice', 'base_url', 'api_key'} - got
    assert not missing, f'structured does not offer completion parameters {sorted(missing)}'

def test_usage_stats_fields():
    u = STAR['UsageStats']()
    for n,d in SIGS['UsageStats']:
        assert getattr(u, n) == d, f'UsageStats().{n} is {getattr(u, n)!r}, documented default {d!r}'

def test_model_constants():
    "Model names are strings litellm can route; those the docs' outputs name are pinned"
    for n in [n for n in PUBLIC if n in 'haik45 sonn45 sonn sonn46 opus46 opus gpt54 gpt54m codex55 codex53spark kimi qwen3p6p dsf dsp'.split()]:
        assert isinstance(STAR[n], str) and STAR[n], f'{n} should be a model name string, is {STAR[n]!r}'
    # what the docs' outputs name as the model that answered each constant
    answered = dict(sonn='claude-sonnet-4-6', opus='claude-opus-4-7', gpt54m='gpt-5.4-mini', haik45='claude-haiku-4-5',
                    dsf='deepseek-v4-flash', codex55='gpt-5.5', qwen3p6p='fireworks_ai/accounts/fireworks/models/qwen3p6-plus')
    for n,m in answered.items(): assert STAR[n].endswith(m), f'{n} is {STAR[n]!r}; the docs show it answered by {m}'

def test_knobs_importable_not_star_exported():
    "Tuning knobs and plumbing stay in their modules: `from lisette import *` gives what a user writes"
    import lisette.chat, lisette.usage, lisette.providers
    for n in ('max_pauses', 'retry_backoff', 'retry_max_wait', 'SCHEMA_VERSION', 'quiet_litellm', 'missing_keys', 'close_stream', 'tool_threads', 'tool_pool',
              'provider_kind', 'litellm_split_from'):  # (`litellm_split_from` reads an entry once: a user's call would take the chat's report)
        assert n not in STAR, f'{n!r} is a knob or plumbing, yet `from lisette import *` exports it'
    assert lisette.chat.max_pauses == 5 and lisette.chat.retry_max_wait == 30. and isinstance(lisette.usage.SCHEMA_VERSION, int)
    assert callable(lisette.providers.missing_keys)

def test_chat_keeps_its_settings_as_attributes():
    "Every parameter of `Chat` is an attribute of the chat, as the original's `store_attr()` made them (`chat.tc_refs` was missing)"
    c = STAR['Chat']('claude-sonnet-4-5', tc_refs=True)
    assert [p for p in inspect.signature(STAR['Chat'].__init__).parameters if p!='self' and not hasattr(c, p)] == []
    assert c.tc_refs is True and STAR['Chat']('claude-sonnet-4-5').tc_refs is False
