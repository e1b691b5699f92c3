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
