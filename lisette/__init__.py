__version__ = "0.1.0"
import os as _os, sys as _sys
# lisette's own command-line tools (`python -m lisette.demo`, `python -m lisette.testing`, `lisette-demo`) run
# offline-first: otherwise litellm spends seconds trying to download its price map before anything happens. Code that
# imports lisette keeps litellm's default.
_argv = getattr(_sys, 'orig_argv', [])
if (_argv[_argv.index('-m')+1:_argv.index('-m')+2] if '-m' in _argv else []) in (['lisette.demo'], ['lisette.testing']) \
   or _os.path.basename(_sys.argv[0] if _sys.argv else '')=='lisette-demo':
    _os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
from . import messages, history, tools, usage, providers, stream, chat, interop
from .messages import *
from .history import *
from .tools import *
from .usage import *
from .providers import *
from .stream import *
from .chat import *
from .interop import *
# `from lisette import *` gives these names only (not the submodules, whose names would shadow e.g. `chat`)
__all__ = [n for m in (messages, history, tools, usage, providers, stream, chat, interop) for n in m.__all__]
