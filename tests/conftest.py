import os
os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
from lisette.testing import fake_provider  # noqa: F401  (pytest fixture)
import pytest

@pytest.fixture(params=['openai', 'anthropic'])
def proto(request, fake_provider):
    "(fake provider, model, Chat kwargs) for each wire protocol"
    fp = fake_provider
    if request.param=='openai': return fp, 'openai/gpt-4o-mini', dict(api_base=fp.openai_base, api_key='k')
    return fp, 'anthropic/claude-sonnet-4-5', dict(api_base=fp.anthropic_base, api_key='k')
