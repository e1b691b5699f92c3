import os
os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
from lisette.testing import fake_provider  # noqa: F401  (pytest fixture)
