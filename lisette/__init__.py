__version__ = "0.1.0"
from .messages import *
from .tools import *
from .usage import *
from .providers import *
from .stream import *
from .chat import *
