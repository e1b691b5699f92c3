__version__ = "0.1.0"
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
