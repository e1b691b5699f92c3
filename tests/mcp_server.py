"An MCP server written with the `mcp` SDK for tests/test_mcp.py: `python mcp_server.py` (stdio) or `python mcp_server.py --http PORT`."
import asyncio, inspect, json, os, sys
from typing import Annotated
from pydantic import Field
from mcp.server.mcpserver import MCPServer, Context, Image
from mcp.server.mcpserver.exceptions import ToolError

mcp = MCPServer("lisette-test")
PNG = bytes.fromhex('89504e470d0a1a0a0000000d4948445200000001000000010806000000'
                    '1f15c4890000000d49444154789c63f8cfc0f01f0005000201e22133c60000000049454e44ae426082')

@mcp.tool()
def add(a: int, b: int) -> int:
    "Add two integers"
    return a + b

def record(**kwargs) -> str:
    "Echo the arguments received, as JSON"
    return json.dumps(kwargs)
# an argument named `item-id` (no Python identifier): the SDK takes the schema from the signature, then calls with the alias
record.__signature__ = inspect.signature(lambda item_id, tags, opts, note='': None).replace(parameters=[
    inspect.Parameter('item_id', inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[str, Field(alias='item-id', description='Id of the item')]),
    inspect.Parameter('tags', inspect.Parameter.KEYWORD_ONLY, annotation=list[str]),
    inspect.Parameter('opts', inspect.Parameter.KEYWORD_ONLY, annotation=dict),
    inspect.Parameter('note', inspect.Parameter.KEYWORD_ONLY, annotation=str, default='')])
mcp.tool()(record)

@mcp.tool()
def picture(caption: str) -> list:
    "A caption and a one-pixel PNG"
    return [caption, Image(data=PNG, format='png')]

@mcp.tool(name='notes.read')
def notes_read(topic: str) -> str:
    "Read the notes on a topic (a dotted name, as MCP allows and OpenAI refuses)"
    return f"notes on {topic}"

@mcp.tool()
def diagram(caption: str) -> list:
    "A caption and an SVG drawing (as diagram servers return them; no provider takes SVG as an image)"
    return [caption, Image(data=b'<svg xmlns="http://www.w3.org/2000/svg"/>', format='svg+xml')]

@mcp.tool()
def fail(why: str) -> str:
    "Always fails"
    raise ToolError(f"failed on purpose: {why}")

class _Barrier:
    "All `n` waiters go on together, then the next `n` (`asyncio.Barrier` is Python 3.11+)"
    def __init__(self, n): self.n, self.waiting, self.ev = n, 0, asyncio.Event()
    async def wait(self):
        ev = self.ev; self.waiting += 1
        if self.waiting==self.n: self.waiting, self.ev = 0, asyncio.Event(); ev.set()
        await ev.wait()

_barriers = {}
@mcp.tool()
async def meet(n: int, i: int) -> str:
    "Return only once `n` calls are in progress at the same time (calls run one after another would time out)"
    b = _barriers.setdefault(n, asyncio.Barrier(n) if hasattr(asyncio, 'Barrier') else _Barrier(n))
    try: await asyncio.wait_for(b.wait(), 30)
    except (TimeoutError, asyncio.TimeoutError): raise ToolError(f"call {i} met nobody: calls are not concurrent")
    return f"met {i}"

@mcp.tool()
async def block(marker: str) -> str:
    "Write this process's pid to file `marker`, then never answer"
    with open(marker, 'w') as f: f.write(str(os.getpid()))
    await asyncio.sleep(3600)
    return 'woke'

@mcp.tool()
async def nap(marker: str) -> str:
    "Write 'started' to file `marker`, sleep; write 'cancelled' there if the call is cancelled"
    with open(marker, 'w') as f: f.write('started')
    try: await asyncio.sleep(3600)
    except asyncio.CancelledError:
        with open(marker, 'w') as f: f.write('cancelled')
        raise
    return 'woke'

@mcp.tool()
def getenv(name: str) -> str:
    "The value of environment variable `name` in the server"
    return os.environ.get(name, '<unset>')

@mcp.tool()
def header(name: str, ctx: Context) -> str:
    "The value of HTTP request header `name`"
    return (ctx.headers or {}).get(name, '<none>')

if __name__ == '__main__':
    if sys.argv[1:2]==['--http']: mcp.run('streamable-http', host='127.0.0.1', port=int(sys.argv[2]))
    else: mcp.run()
