"Benchmark: `mk_msgs` on 10,000 alternating messages with cache=True (target < 20 ms)."
import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
import time, statistics
from lisette.messages import mk_msgs

def bench(n=10_000, reps=7):
    msgs = [f'message {i}' for i in range(n)]
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); mk_msgs(msgs, cache=True, cache_idxs=[0, -2, -1]); ts.append(time.perf_counter()-t)
    return statistics.median(ts)

if __name__ == '__main__':
    print(f"mk_msgs: 10,000 messages, cache=True: {bench()*1e3:.1f} ms (median of 7; target < 20 ms)")
