"""lisette: litellm made pleasant. `from lisette import *` gives what a user writes; tuning knobs, tables and the
provider seam stay importable from their modules (e.g. `lisette.chat.max_pauses`, `lisette.usage.SCHEMA_VERSION`)."""
__version__ = "0.1.0"
import os as _os, sys as _sys
# lisette's own command-line tools (`python -m lisette.demo`, `python -m lisette.testing`, `lisette-demo`) run
# offline-first: otherwise litellm spends seconds trying to download its price map before anything happens. They cannot
# set it themselves: `python -m lisette.x` imports this package, and so litellm, before `lisette.x` runs.
_argv = getattr(_sys, 'orig_argv', [])
if (_argv[_argv.index('-m')+1:_argv.index('-m')+2] if '-m' in _argv else []) in (['lisette.demo'], ['lisette.testing']) \
   or _os.path.basename(_sys.argv[0] if _sys.argv else '')=='lisette-demo':
    _os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
from . import messages, history, tools, usage, providers, stream, context, chat, interop
from .messages import *
from .history import *
from .tools import *
from .usage import *
from .providers import *
from .stream import *
from .context import *
from .chat import *
from .interop import *

_modules = (messages, history, tools, usage, providers, stream, context, chat, interop)
# Public in their modules, but settings, tables and plumbing rather than what a user writes
_not_star = {'SCHEMA_VERSION', 'quiet_litellm', 'max_cache_ckpts', 'media_kinds', 'registered_models', 'capability_fixes',
             'tc_refs_sp', 'interrupted_result', 'chat_format', 'chat_format_version', 'shorten_marker', 'effort',
             'supports_cache_ckpts', 'missing_keys', 'without_sdk_retries', 'close_stream', 'aclose_stream', 'think_kw',
             'tool_threads', 'tool_pool', 'run_parallel', 'merge_stream_fields', 'mend_chunk', 'failed_locally', 'native_stop_warning', 'unnamed_tool',
             'reply_refusal', 'keep_refusal', 'openrouter_details', 'install_mends', 'provider_kind', 'litellm_split_from'}
# `from lisette import *` gives these names only (not the submodules, whose names would shadow e.g. `chat`)
__all__ = [n for m in _modules for n in m.__all__ if n not in _not_star]
