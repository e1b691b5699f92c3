"""Request bodies equal the original lisette's: recorded provider traffic (cachy) is keyed on the exact JSON body.

`tests/fixtures/upstream_bodies.json` holds what the ORIGINAL lisette sent for each scenario of `tools/parity.py` on
each protocol of the fake provider (recorded with `tools/parity.py --orig-venv ... --save`). Here the same scenarios run
through ours, in process, and every body must equal the recorded one, except the deviations `tools/parity.py` declares."""
import asyncio, importlib.util, json, sys, textwrap, warnings
from pathlib import Path
import pytest
from lisette.testing import FakeProvider, Reply

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = json.loads((ROOT/'tests'/'fixtures'/'upstream_bodies.json').read_text())
_spec = importlib.util.spec_from_file_location('parity', ROOT/'tools'/'parity.py')
parity = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(parity)
CASES = sorted(k for k in FIXTURE if not parity.deviation(*k.split('/')))

@pytest.fixture(scope='module')
def tools_ns(tmp_path_factory):
    d = tmp_path_factory.mktemp('parity_tools')
    (d/'parity_tools.py').write_text(parity.TOOLS)
    sys.path.insert(0, str(d))
    try:
        import parity_tools
        ns = {}
        exec('from lisette import *', ns)
        ns.update({k:v for k,v in vars(parity_tools).items() if not k.startswith('_')})
        yield ns
    finally: sys.path.remove(str(d)); sys.modules.pop('parity_tools', None)

def _run(code, ns):
    if 'await ' in code:
        exec(compile('async def _main():\n' + textwrap.indent(code, '    '), '<scenario>', 'exec'), ns)
        asyncio.run(ns['_main']())
    else: exec(compile(code, '<scenario>', 'exec'), ns)

def test_fixture_covers_the_scenarios():
    "The fixture was recorded for every protocol and every scenario (a stale fixture fails here, not silently)"
    protos = {k.split('/')[0] for k in FIXTURE}
    assert protos == {'openai', 'anthropic', 'gemini', 'responses'}
    for n, (_, _, *only) in parity.SCENARIOS.items():
        for p in (only[0] if only else protos): assert f'{p}/{n}' in FIXTURE, f'{p}/{n} missing: re-record the fixture'

@pytest.mark.parametrize('case', CASES)
def test_body_equals_original(case, tools_ns):
    pname, n = case.split('/')
    replies, code, *_ = parity.SCENARIOS[n]
    with FakeProvider() as fp:
        model, kw = next((m, k) for p, m, k in parity._protos(fp) if p==pname)
        fp.queue(*[r if isinstance(r, Reply) else Reply(r) for r in replies])
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            _run(code, {**tools_ns, 'MODEL': model, 'KW': kw})
        got = parity.normalize(pname, [r.body for r in fp.requests])
    assert got == parity.normalize(pname, FIXTURE[case])  # the fixture was recorded under an older litellm
