"""The process's `ruff server` lays modules out byte for byte as a `ruff format` process does, from threads, in a
forked child, and after it died (the CLI takes over)."""

import json
import os
import threading
import warnings

import pytest

from transpile.codegen import formatting, ruff_server

pytestmark = pytest.mark.skipif(formatting.ruff_binary() is None, reason="the `ruff` package is not installed")

LONG_NAMES = ", ".join(f"argument_number_{i}" for i in range(12))

MODULES = [
    "",
    "\n\n\n",
    "x = 1\n",
    "x=1",
    "x = 1\r\ny = 2\r\n",
    "import numpy as np\nimport runtime as rt\ndef f(x):\n  return np.sum(x)\n",
    f"result = some_function({LONG_NAMES})\n",
    f"def f({LONG_NAMES}):\n    return g({LONG_NAMES})[0]\n",
    "values = [1, 2, 3,]\nt = (a,)\nd = {'a': 1, 'b': 2,}\ncall(x, y,)\n",
    "x = f(g(h(i(j(k(aaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbb), ccccccccccccccccccccccc), dddd), e)))\n",
    "y = [[1, 2], [3, [4, [5, 6, [7, 8, [9, 10, [11, 12, [13, 14, [15, 16, 17, 18, 19, 20, 21, 22, 23, 24]]]]]]]]]\n",
    "# x² → y\nz = x ** 2  # x² → y\n",
    "def f(x):\n    # 𝑥 ↦ 𝑥² (astral plane: two UTF-16 units each)\n    return x*x  # 😀 ünïcödé\n",
    "s = 'naïve' + \"Ω\" + '''three\n   quoted'''\n",
    'def f(x):\n    """One line docstring."""\n    return x\n',
    'def f(x):\n    """\n    A docstring\n\n      indented  oddly   \n    """\n    return x\n',
    "'''Module docstring.'''\nimport os\n",
    "@decorator\n@other(arg=1,)\ndef f(): pass\n",
    "class A(Base, metaclass=Meta):\n    x: int=1\n    def m(self): return self.x\n\n\n\n\nclass B: ...\n",
    "if x:\n    pass\nelif y:\n  pass\nelse:\n        pass\n",
    "for i in range(10): print(i)\nwhile False: break\n",
    "try:\n    f()\nexcept (ValueError, TypeError) as e:\n    raise RuntimeError('x') from e\nfinally:\n    g()\n",
    "with open('a') as f, open('b') as g:\n    pass\n",
    "lambda_ = lambda x, y=2, *a, **k: (x, y, a, k)\n",
    "x = a if b else c\ny = not a and b or c\nz = -a ** -b\n",
    "match cmd:\n    case [x, y, *rest]:\n        pass\n    case {'k': v}:\n        pass\n    case _:\n        ...\n",
    "async def f():\n    async with a as b:\n        await c\n    async for i in d:\n        yield i\n",
    "x = f'{a!r:>{width}} {b:.3f}'\n",
    "x = (  # comment after the bracket\n    1 +  # a comment\n    2\n)\n",
    "def f(\n    a,  # first\n    b,\n):\n    return a\n",
    "x = 1 ;  y = 2\n",
    "numbers = [1.0E5, 0XFF, 1_000, 0o17, 1J]\n",
    "u = U'text'\nb = B'bytes'\nr = R'raw'\n",
    "assert isinstance(x, int), 'a message long enough to need wrapping when combined with a long condition here'\n",
    "def f(x: 'np.ndarray[tuple[int, ...], np.dtype[np.float64]]', y: dict[str, list[tuple[int, float]]]) -> None:\n"
    "    ...\n",
    "x = a[1:2, ::3, ..., None]\ny = a[lower + offset : upper + offset]\n",
    "global_value = 0\ndef f():\n    global global_value\n    global_value += 1\n",
    "print('no newline at the end')",
    "\tx = 1\n",  # an indented first statement: not Python
    "def f(:\n    pass\n",  # a syntax error
]


@pytest.fixture
def fresh_servers():
    """Servers started anew for the test and shut down after it (the test may have broken or killed one)."""
    ruff_server.shut_down_all()
    yield
    ruff_server.shut_down_all()


@pytest.fixture
def warned(monkeypatch):
    monkeypatch.setattr(formatting, "_warned", [])


def by_server(text):
    return ruff_server.format_text(
        formatting.ruff_binary(), text, formatting._CONFIGURATION, formatting._HERE, formatting._TIMEOUT_S
    )


@pytest.mark.parametrize("text", MODULES, ids=range(len(MODULES)))
def test_the_server_lays_out_as_the_cli_does(text, warned):
    with warnings.catch_warnings(record=True) as record:  # a text ruff cannot parse warns, and is used as it is
        warnings.simplefilter("always")
        expected = formatting.format_text_by_cli(text)
        failed = bool(formatting._warned)
        formatting._warned.clear()
        assert formatting.format_text(text) == expected
    assert [type(w.message) for w in record] == [formatting.FormatWarning] * (2 if failed else 0)
    assert failed == (text in MODULES[-2:])
    assert by_server(text) == (None if failed else expected)  # None: not Python, the CLI says why


def test_the_server_answers_for_text_laid_out_already():
    laid_out = [formatting.format_text_by_cli(text) for text in MODULES[:-2]]
    assert all(by_server(text) == text for text in laid_out)


def test_threads_formatting_at_once_get_their_own_texts():
    texts = [f"value_{i} = [{i},]\n" + text for i, text in enumerate(MODULES[:-2])]
    expected = [formatting.format_text_by_cli(text) for text in texts]
    results, failures = {}, []

    def work(start):
        try:
            for k in range(len(texts)):
                i = (start + k) % len(texts)
                results[start, i] = formatting.format_text(texts[i])
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(start,)) for start in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert all(results[start, i] == expected[i] for start, i in results) and len(results) == 8 * len(texts)
    assert ruff_server.running_server(formatting.ruff_binary()) is not None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_a_forked_child_starts_its_own_server_and_leaves_the_parents_alone():
    text, expected = MODULES[6], formatting.format_text_by_cli(MODULES[6])
    assert formatting.format_text(text) == expected
    parent_server = ruff_server.running_server(formatting.ruff_binary())
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read_end)
            result = formatting.format_text(text)
            server = ruff_server.running_server(formatting.ruff_binary())
            report = {"result": result, "server": server.process.pid if server else None}
            os.write(write_end, json.dumps(report).encode())
            ruff_server.shut_down_all()
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = json.loads(pipe.read() or b"{}")
    _, status = os.waitpid(child, 0)
    assert status == 0
    assert report["result"] == expected
    assert report["server"] not in (None, parent_server.process.pid)
    assert ruff_server.running_server(formatting.ruff_binary()) is parent_server
    assert parent_server.process.poll() is None
    assert by_server(MODULES[7]) == formatting.format_text_by_cli(MODULES[7])


def test_a_killed_server_leaves_the_cli_to_format(fresh_servers):
    binary = formatting.ruff_binary()
    expected = [formatting.format_text_by_cli(text) for text in MODULES[6:9]]
    assert formatting.format_text(MODULES[6]) == expected[0]
    server = ruff_server.running_server(binary)
    server.process.kill()
    server.process.wait()
    assert formatting.format_text(MODULES[7]) == expected[1]
    assert ruff_server.running_server(binary) is None and server.process.returncode is not None
    assert formatting.format_text(MODULES[8]) == expected[2]  # by the CLI, for the rest of the process


def test_an_error_answered_leaves_that_text_to_the_cli_and_keeps_the_server(monkeypatch):
    formatting.format_text(MODULES[6])
    server = ruff_server.running_server(formatting.ruff_binary())

    def answer_with_an_error(text):
        raise ruff_server.ErrorResponse("ruff server: cannot format")

    monkeypatch.setattr(server, "format", answer_with_an_error)
    assert formatting.format_text(MODULES[7]) == formatting.format_text_by_cli(MODULES[7])
    monkeypatch.undo()
    assert ruff_server.running_server(formatting.ruff_binary()) is server
    assert by_server(MODULES[8]) == formatting.format_text_by_cli(MODULES[8])


def test_a_server_that_cannot_start_leaves_the_cli_to_format(fresh_servers, warned):
    assert ruff_server.format_text("/nonexistent/ruff", MODULES[6], {}, formatting._HERE, 5) is None
    assert ruff_server.format_text("false", MODULES[6], {}, formatting._HERE, 5) is None
    assert formatting.format_text(MODULES[6]) == formatting.format_text_by_cli(MODULES[6])


def test_shutting_down_reaps_the_server(fresh_servers):
    formatting.format_text(MODULES[6])
    server = ruff_server.running_server(formatting.ruff_binary())
    ruff_server.shut_down_all()
    assert server.process.returncode == 0  # it exited when asked (`shutdown`, then `exit`), and was waited for


def test_configuration_files_do_not_change_the_servers_output(tmp_path, monkeypatch):
    config = 'line-length = 30\n[format]\nquote-style = "single"\nindent-style = "tab"\n'
    (tmp_path / "ruff.toml").write_text(config)
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n" + config.replace("[format]", "[tool.ruff.format]"))
    (tmp_path / "ruff").mkdir()
    (tmp_path / "ruff" / "ruff.toml").write_text(config)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # the user's own ruff configuration
    server = ruff_server.Server(formatting.ruff_binary(), formatting._CONFIGURATION, str(tmp_path), 60)
    try:
        for text in MODULES[5:12]:
            assert server.format(text) == formatting.format_text_by_cli(text)
    finally:
        server.shut_down()


@pytest.mark.parametrize("codec", ["utf-8", "utf-16", "utf-32"])
def test_edits_count_characters_in_the_negotiated_encoding(codec):
    text = "a = '𝑥²'  # é\nb = 1\n"
    name, width = ruff_server._CODECS[codec]
    x, e, end = (len(prefix.encode(name)) // width for prefix in ("a = '𝑥", "a = '𝑥²'  # ", "a = '𝑥²'  # é"))
    edits = [
        {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 9, "character": 0}}, "newText": "b = 2\n"},
        {"range": {"start": {"line": 0, "character": e}, "end": {"line": 0, "character": end}}, "newText": "è"},
        {"range": {"start": {"line": 0, "character": x}, "end": {"line": 0, "character": x}}, "newText": "["},
        {"range": {"start": {"line": 0, "character": x}, "end": {"line": 0, "character": x}}, "newText": "]"},
    ]
    assert ruff_server.apply_edits(text, edits, (name, width)) == "a = '𝑥[]²'  # è\nb = 2\n"
