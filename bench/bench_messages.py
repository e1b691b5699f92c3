"Benchmark: `mk_msgs` on 10,000 alternating messages with cache=True (target < 20 ms; the original lisette takes 70-100 ms)."
import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
import gc, time, statistics
from lisette.messages import mk_msgs

def bench(msgs, reps=15, **kw):
    "Median and best seconds of `reps` runs of `mk_msgs(msgs, **kw)`"
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); mk_msgs(msgs, **kw); ts.append(time.perf_counter()-t)
    return statistics.median(ts), min(ts)

if __name__ == '__main__':
    n = 10_000
    strs = [f'message {i}' for i in range(n)]
    dicts = [{'role': ('user', 'assistant')[i%2], 'content': f'message {i}'} for i in range(n)]
    for nm, msgs, kw in [('strings, cache=True, cache_idxs=[0,-2,-1]', strs, dict(cache=True, cache_idxs=[0, -2, -1])),
                         ('strings, cache=True (default cache_idxs)', strs, dict(cache=True)),
                         ('text dicts, cache=True', dicts, dict(cache=True))]:
        med, best = bench(msgs, **kw)
        print(f"mk_msgs, {n:,} {nm}: median {med*1e3:.1f} ms, best {best*1e3:.1f} ms (15 runs; target < 20 ms)")
