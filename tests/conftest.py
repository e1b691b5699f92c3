import os
os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
from lisette.testing import fake_provider  # noqa: F401  (pytest fixture)
import pytest

# The four wire protocols lisette users meet, each as (model, api_base attribute of the FakeProvider)
PROTOS = {'openai': ('openai/gpt-4o-mini', 'openai_base'), 'anthropic': ('anthropic/claude-sonnet-4-5', 'anthropic_base'),
          'gemini': ('gemini/gemini-3-flash-preview', 'gemini_base'), 'responses': ('openai/responses/gpt-5.4', 'responses_base')}

@pytest.fixture(params=list(PROTOS))
def proto(request, fake_provider):
    "(fake provider, model, Chat kwargs) for each wire protocol"
    fp, (model, base) = fake_provider, PROTOS[request.param]
    return fp, model, dict(api_base=getattr(fp, base), api_key='k')

import signal

def pytest_configure(config):
    # a job a shell starts in the background (without job control) has SIGINT ignored, and Python leaves it so: then no
    # test that presses Ctrl-C would see a KeyboardInterrupt (they all failed, and one waited for ever). They need Python's default
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN: signal.signal(signal.SIGINT, signal.default_int_handler)

def _sigint_state():
    "(SIGINT's handler, is it blocked in this thread?)"
    blocked = hasattr(signal, 'pthread_sigmask') and signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    return signal.getsignal(signal.SIGINT), blocked

@pytest.fixture(autouse=True)
def _sigint_left_alone():
    "A test that changes how Ctrl-C is handled (its handler, or SIGINT blocked) and does not put it back fails, and it is put back"
    # (twice a full run failed every real-SIGINT test of test_interrupt.py and then hung where a test waits for one: this names the culprit)
    before = _sigint_state()
    yield
    if (after := _sigint_state()) == before: return
    signal.signal(signal.SIGINT, before[0])
    if hasattr(signal, 'pthread_sigmask'): signal.pthread_sigmask(signal.SIG_BLOCK if before[1] else signal.SIG_UNBLOCK, [signal.SIGINT])
    pytest.fail(f"this test changed SIGINT's handling from (handler {before[0]!r}, blocked {before[1]}) to (handler {after[0]!r}, blocked {after[1]}) and left it so")
