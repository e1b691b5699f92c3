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

@pytest.fixture(autouse=True)
def _sigint_left_alone():
    "A test that leaves Ctrl-C handled otherwise than Python's default (a handler, or SIGINT blocked) fails, and the default comes back"
    # (twice a full run failed every real-SIGINT test of test_interrupt.py and then hung where a test waits for one: this names the culprit)
    yield
    handler, blocked = signal.getsignal(signal.SIGINT), signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    if handler is signal.default_int_handler and not blocked: return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if blocked: signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    pytest.fail(f"this test left SIGINT {'blocked' if blocked else f'handled by {handler!r}'}: Ctrl-C would no longer interrupt")
