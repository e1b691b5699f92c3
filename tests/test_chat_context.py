"A context-window error inside a tool loop: long tool results cut, the model asked to finish, the history valid."
import pytest
from lisette import *
from lisette.chat import _cwe_msg
from lisette.history import check_hist
from lisette.testing import Reply

def add(a:int, b:int=0) -> int:
    "Add two numbers"
    return a + b

# ---- context window exceeded inside a tool loop

def test_context_window_error_mid_loop(fake_provider):
    fp = fake_provider
    big = 'line of log\n' * 5000
    def read_log() -> str:
        "Read the log"
        return big
    fp.queue(Reply(tool_calls=[('read_log', {})]),
             Reply(status=400, error="This model's maximum context length is 128000 tokens. However, your messages resulted in 200000 tokens."),
             "The log was too long; here is what I saw.")
    chat = Chat('openai/gpt-4o-mini', tools=[read_log], api_base=fp.openai_base, api_key='k')
    r = chat("read the log")
    assert contents(r).content.startswith('The log was too long')
    tr = chat.hist[2]['content']
    assert tr.startswith(_cwe_msg) and len(tr) < 2000
    assert fp.last['tool_choice'] == 'none'
    check_hist(chat.hist)
