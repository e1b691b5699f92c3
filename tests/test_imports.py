"The package's modules import each other one way: no cycle, counting imports inside functions too."
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent/'lisette'

def _imports(path):
    "Names of the lisette modules that module `path` imports, anywhere in it"
    mods = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level==1 and node.module: mods.add(node.module.split('.')[0])
            elif node.level==1: mods.update(a.name for a in node.names)
            elif node.level==0 and (node.module or '').startswith('lisette.'): mods.add(node.module.split('.')[1])
            elif node.level==0 and node.module=='lisette': mods.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            mods.update(a.name.split('.')[1] for a in node.names if a.name.startswith('lisette.'))
    return mods

def import_graph():
    "{module: modules it imports} over lisette's own modules (the package `__init__` and `_modidx` aside)"
    names = {p.stem for p in PKG.glob('*.py')} - {'__init__', '_modidx'}
    return {n: _imports(PKG/f'{n}.py') & names - {n} for n in names}

def find_cycle(g):
    "A list of modules forming an import cycle in graph `g`, or None"
    state, stack = {}, []
    def visit(n):
        state[n] = 'open'; stack.append(n)
        for m in sorted(g[n]):
            if state.get(m)=='open': return stack[stack.index(m):] + [m]
            if m not in state and (c := visit(m)): return c
        state[n] = 'done'; stack.pop()
    for n in sorted(g):
        if n not in state and (c := visit(n)): return c

def test_finds_a_cycle():
    assert find_cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == ['a', 'b', 'c', 'a']
    assert find_cycle({'a': {'b'}, 'b': set()}) is None

def test_no_import_cycle():
    g = import_graph()
    assert {'messages', 'chat', 'context', 'interop'} <= set(g)
    assert (c := find_cycle(g)) is None, f"import cycle: {' -> '.join(c)}"

def test_layers():
    "Lower layers never import higher ones: context below chat, chat below interop"
    g = import_graph()
    assert 'chat' not in g['context'] and 'interop' not in g['context']
    assert 'interop' not in g['chat']
    assert not g['messages'] - {'messages'}, f"messages is the bottom layer but imports {g['messages']}"

def test_is_num_defined_once():
    "`_is_num` (a number, not a bool) is defined once, in the bottom layer: the chat's argument checks and the fake provider's import it (two copies could drift apart)"
    defs = sorted(p.stem for p in PKG.glob('*.py') for n in ast.parse(p.read_text()).body if isinstance(n, ast.FunctionDef) and n.name=='_is_num')
    assert defs == ['messages'], defs
    from lisette import messages, chat, testing
    assert chat._is_num is testing._is_num is messages._is_num
