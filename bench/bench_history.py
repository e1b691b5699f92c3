"Benchmark lisette.history.check_hist: full check of a 10,000-message history with tool rounds, and the per-request tail check"
import os; os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'
import timeit
from lisette.messages import mk_msgs
from lisette.tools import mk_tc, mk_tc_req, mk_tc_results
from lisette.history import check_hist

def mk_hist(n=10_000):
    "user, assistant requesting 2 parallel tools (a litellm Message), 2 results, assistant answer: repeated to `n` messages"
    h = []
    while len(h)<n:
        q = mk_tc_req('Let me add those', [mk_tc('add', a=1, b=2), mk_tc('add', a=3, b=4)])
        h += ['What are 1+2 and 3+4?', q, *mk_tc_results(q, ['3', '7']), '3 and 7']
    return mk_msgs(h[:n])

def bench(f, n):
    return min(timeit.repeat(f, number=n, repeat=5))/n

if __name__=='__main__':
    h = mk_hist()
    base = bench(lambda: [m.get('role') if m.__class__ is dict else m.role for m in h], 20)
    full = bench(lambda: check_hist(h), 20)
    tail = bench(lambda: check_hist(h, start=len(h)-3), 20_000)
    print(f"history: {len(h)} messages")
    print(f"check_hist(h):                  {full*1e3:8.2f} ms   (target <= 10 ms)")
    print(f"check_hist(h, start=len(h)-3):  {tail*1e6:8.2f} us   (target <= 50 us)")
    print(f"machine calibration: reading the role of each message takes {base*1e3:.2f} ms (full check = {full/base:.0f}x that)")
