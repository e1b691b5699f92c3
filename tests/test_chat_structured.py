"Structured outputs through litellm and the fake provider: docments classes, dataclasses, pydantic models."
import json
from dataclasses import dataclass
import pytest
from pydantic import BaseModel
from lisette import *
from lisette.testing import Reply

# ---- structured outputs: docments classes, dataclasses, pydantic models

class Pet(BaseModel):
    "A pet"
    name: str
    age: int

@dataclass
class City:
    "A city"
    name: str
    population: int

class President:
    "Information about a president"
    def __init__(self, first:str, # first name
                 last:str): # last name
        self.first, self.last = first, last

@pytest.mark.parametrize('cls,args,check', [
    (Pet, {'name': 'Rex', 'age': 3}, lambda o: isinstance(o, Pet) and o.age == 3),
    (City, {'name': 'Brisbane', 'population': 2600000}, lambda o: isinstance(o, City) and o.population == 2600000),
    (President, {'first': 'Thomas', 'last': 'Jefferson'}, lambda o: isinstance(o, President) and o.last == 'Jefferson')])
def test_structured(proto, cls, args, check):
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[(cls.__name__, args)]))
    o = structured(m, [mk_msg("Tell me")], cls, **kw)
    assert check(o)
    v = fp.views[-1]
    assert v['tools'] == [cls.__name__] and v['tool_choice'] == cls.__name__  # the call was forced

def test_structured_without_call_is_clear(proto):
    fp, m, kw = proto
    fp.queue("I'd rather chat.")
    with pytest.raises(ValueError, match='without calling `Pet`'): structured(m, [mk_msg("Tell me")], Pet, **kw)

def test_structured_bad_arguments_are_clear(proto):
    "Arguments cut off (or not JSON) or missing what the class needs: a ValueError naming the tool and the problem, on every protocol"
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[dict(name='President', arguments='{"first": "Tho')], stop='length'))
    with pytest.raises(ValueError, match=r"^structured: the model called `President` with arguments (that cannot be read|`President` does not take \(missing required parameter `first`, `last`)"):
        structured(m, [mk_msg("Tell me")], President, **kw)
    fp.queue(Reply(tool_calls=[('President', {'first': 'Thomas', 'middle': 'J'})]))
    with pytest.raises(ValueError, match=r"^structured: the model called `President` with arguments `President` does not take \(unknown parameter `middle`"):
        structured(m, [mk_msg("Tell me")], President, **kw)

def test_astructured(proto):
    "Async structured output on every protocol; an async completefunc given to the sync `structured` is a clear TypeError, nothing sent"
    import asyncio
    from litellm import acompletion
    fp, m, kw = proto
    fp.queue(Reply(tool_calls=[('Pet', {'name': 'Rex', 'age': 3})]))
    o = asyncio.run(astructured(m, ["Tell me"], Pet, **kw))
    assert isinstance(o, Pet) and o.age == 3 and fp.views[-1]['tool_choice'] == 'Pet'
    n = len(fp.requests)
    with pytest.raises(TypeError, match='astructured'): structured(m, ["Tell me"], Pet, completefunc=acompletion, **kw)
    assert len(fp.requests) == n

# ---- known third-party noise stays out of the test output (pyproject.toml's filterwarnings)

def test_readonly_typeddict_warnings_filtered():
    """The first structured call per protocol has pydantic build schemas of litellm's TypedDicts, which warn of their
    `ReadOnly` items: 'Item 'a' ... is using' and, for several, 'Items 'a', 'b' ... are using' (the filter missed those)"""
    import warnings
    from typing_extensions import ReadOnly, TypedDict
    from pydantic import TypeAdapter
    class _One(TypedDict): a: ReadOnly[int]
    class _Two(TypedDict): a: ReadOnly[int]; b: ReadOnly[str]
    with warnings.catch_warnings(record=True) as ws:  # pytest's filters stay
        for td in (_One, _Two): TypeAdapter(td)
    assert [str(w.message) for w in ws] == []

# ---- structured() on Gemini: its schema adapted as a chat's tools are

from typing import Literal
from lisette.chat import AdjustmentWarning

class Rating(BaseModel):
    "A rating"
    stars: Literal[1, 2, 3]
    word: str

def rate(stars:Literal[1, 2, 3], word:str='ok'):
    "Rate"
    return (stars, word)

@pytest.mark.parametrize('tool,want', [(Rating, Rating(stars=2, word='good')), (rate, (2, 'good'))])
async def test_structured_on_gemini_adapts_its_schema(fake_provider, tool, want):
    """structured() sent Gemini an integer `enum` as it is (Gemini refuses an `enum` on another type than STRING; litellm
    1.106 dropped the values) and read the string Gemini answers with as it came. Now its schema goes as a chat's tools
    go (the values as strings, said), and the answer is mapped back to the integer"""
    fp = fake_provider
    kw = dict(api_base=fp.gemini_base, api_key='k')
    for f in (structured, astructured):
        fp.queue(Reply(tool_calls=[(tool.__name__, {'stars': '2', 'word': 'good'})]))
        with pytest.warns(AdjustmentWarning, match=r'integer `enum` values sent as strings'):
            o = f('gemini/gemini-3-flash-preview', [mk_msg('Rate it')], tool, **kw)
            if f is astructured: o = await o
        assert o == want
        decl = fp.requests[-1].body['tools'][0]['function_declarations'][0]['parameters']
        assert decl['properties']['stars']['enum'] == ['1', '2', '3']
    fp.queue(Reply(tool_calls=[(tool.__name__, {'stars': 2, 'word': 'good'})]))  # other providers: the schema as it is
    assert structured('openai/gpt-4o-mini', [mk_msg('Rate it')], tool, api_base=fp.openai_base, api_key='k') == want
    assert [t['function']['parameters']['properties']['stars']['enum'] for t in fp.last['tools']] == [[1, 2, 3]]
