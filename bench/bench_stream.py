"""Benchmark streaming a long reply through `Chat(stream=True)` and `StreamFormatter` (the fake provider, OpenAI protocol).

Prints seconds and MB/s for each size, with lisette's linear-time fix for litellm's text-so-far and without it; time
per MB should stay flat as the reply grows. `python bench/bench_stream.py [MB ...]` (default: 5 10 20)."""
import os, sys, time
os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'
from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper
from lisette import Chat, StreamFormatter
from lisette import providers
from lisette.providers import _linear_stream_text as _install
from lisette.testing import FakeProvider, Reply

CHUNK = 8192  # characters per streamed text delta

def run(fp, mb):
    n = int(mb*1e6)
    text = ('lorem ipsum dolor sit amet ' * (n//27+1))[:n]
    fp.queue(Reply(text, chunks=max(1, n//CHUNK)))
    chat, fmt = Chat('openai/gpt-4o-mini', api_base=fp.openai_base, api_key='k'), StreamFormatter()
    t = time.perf_counter()
    for o in chat('Long please', stream=True): fmt.format_item(o)
    dt = time.perf_counter()-t
    assert chat.hist[-1].content==text and fmt.outp==text
    return dt

def fixed(on):
    "Install lisette's fix, or remove it and keep `adapt_request` from installing it again (litellm as it is)"
    providers._linear_stream_text = _install if on else (lambda: None)
    if on: _install()
    elif isinstance(vars(CustomStreamWrapper).get('response_uptil_now'), property): del CustomStreamWrapper.response_uptil_now

def n_chunks(mb): return max(1, int(mb*1e6)//CHUNK)

if __name__=='__main__':
    sizes = [float(a) for a in sys.argv[1:]] or [5, 10, 20]
    with FakeProvider() as fp:
        run(fp, 0.1)  # warm up imports and litellm's caches
        for on in (True, False):
            fixed(on)
            print('with the fix' if on else 'without it (litellm as it is)')
            for mb in sizes:
                dt = run(fp, mb)
                print(f"  {mb:6.1f} MB in {n_chunks(mb)} chunks: {dt:7.2f} s   {mb/dt:6.2f} MB/s   {dt/mb:6.3f} s/MB")
        fixed(True)
