"""The one way text from outside (names, paths, source lines, static values) enters generated source.

Generated modules are Python that runs: a file name, a function's `__qualname__`, a static argument
or a line of the user's file copied into a comment must never end a docstring or a comment early and
become code.  Each kind of place has its function here:

- `line(text)`: one line of printable characters (comments, docstrings, messages);
- `comment(text, indent)`: a `# ...` comment;
- `docstring(value, indent)`: a triple-quoted literal whose value is `value`;
- `literal(value)`: source for plain data (numbers, strings, None, tuples, lists, dicts), or None;
- `identifier(name)`: a Python identifier that is not a keyword;
- `file_stem(name)`: a short, portable part of a file name.
"""

from __future__ import annotations

import keyword
import math
import re
import unicodedata

FILE_STEM_LENGTH = 64


def _escaped(char: str) -> str:
    """`char` as Python writes it inside a string literal (`\\n`, `\\x00`, `\\u2028`)."""
    return repr(char)[1:-1]


def line(text) -> str:
    """`text` as one line of printable characters: line breaks of every kind (`\\n`, `\\r`, U+2028, U+0085 ...),
    NUL and other control characters are written as their Python escapes; everything else is kept."""
    return "".join(c if c.isprintable() else _escaped(c) for c in str.__str__(text))


def comment(text, indent: str = "") -> str:
    """A comment line that says `text` and cannot end before the line does."""
    return f"{indent}# " + line(text)


def raw_docstring_can_hold(value: str) -> bool:
    """Whether an `r\"\"\"...\"\"\"` literal can spell `value` as it is (no escapes are possible in it)."""
    printable = all(c == "\n" or c.isprintable() for c in value)
    return printable and '""' not in value and not value.endswith(("\\", '"'))


def docstring_body(value: str) -> str:
    """What stands between `\"\"\"` and `\"\"\"` of a literal whose value is `value`: backslashes doubled, a quote
    escaped where it could close the string (before another quote, or last), control characters escaped; the
    line breaks of `value` stay line breaks."""
    out = []
    for i, char in enumerate(value):
        if char == "\\":
            out.append("\\\\")
        elif char == '"' and (i + 1 == len(value) or value[i + 1] == '"'):
            out.append('\\"')
        elif char == "\n" or char.isprintable():
            out.append(char)
        else:
            out.append(_escaped(char))
    return "".join(out)


def docstring(value: str, indent: str = "", raw: bool = False) -> str:
    """A triple-quoted literal whose value is `value`, each line indented by `indent` (blank lines stay empty);
    one line fits between its quotes, more put the closing quotes on their own line.  raw: an `r` literal,
    when one can spell `value` (a shell command's `\\` continuations read as they are)."""
    raw = raw and raw_docstring_can_hold(value)
    body = value.strip("\n") if raw else docstring_body(value.strip("\n"))
    prefix = "r" if raw else ""
    lines = body.split("\n")
    if len(lines) == 1:
        return f'{indent}{prefix}"""{body}"""'
    out = [f'{indent}{prefix}"""{lines[0]}']
    out += [indent + text if text else "" for text in lines[1:]]
    out.append(f'{indent}"""')
    return "\n".join(out)


def literal(value):
    """Source text for plain data: None, booleans, ints, finite floats and strings, in tuples, lists and dicts;
    None for anything else, subclasses included (such a value must reach generated code as a value, not as
    text: its `repr` is not the built-in one, and the text would not rebuild its type)."""
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return repr(value)
    if kind is float:
        return repr(value) if math.isfinite(value) else None
    if kind in (tuple, list):
        items = [literal(v) for v in value]
        if any(i is None for i in items):
            return None
        if kind is tuple:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    if kind is dict:
        items = [(literal(k), literal(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in items):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    return None


def identifier(name) -> str:
    """`name` as a Python identifier that is not a keyword (NFKC-normalized as Python reads identifiers;
    other characters become `_`, a leading digit gets a `_` before it, a keyword one after it)."""
    text = unicodedata.normalize("NFKC", str.__str__(name))
    text = "".join(c if ("_" + c).isidentifier() else "_" for c in text) or "_"
    if not text.isidentifier():
        text = "_" + text
    return text + "_" if keyword.iskeyword(text) else text


def is_dotted_name(name) -> bool:
    """Whether `name` can follow `import` or `from`: identifiers, none a keyword, joined by dots."""
    return isinstance(name, str) and all(identifier(part) == part for part in name.split("."))


def file_stem(name) -> str:
    """A part of a file name made from `name`: ASCII letters, digits and `_` only, at most FILE_STEM_LENGTH long
    (a key beside it keeps files apart)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", str.__str__(name))[:FILE_STEM_LENGTH]
