"""One long-lived `ruff server` per process lays modules out over LSP: a format costs far less than a `ruff format`."""

from __future__ import annotations

import atexit
import itertools
import json
import os
import re
import select
import subprocess
import threading
import time

from runtime import syntax

# Documents live in this directory, which does not exist: no configuration file or files to index there, and no
# ancestor that ruff excludes by default (site-packages, .venv, build: where transpile itself may be installed).
WORKSPACE = "/transpile-generated"

_CODECS = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}  # codec, bytes a unit
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # LSP's line breaks (str.splitlines knows more)


class ServerError(Exception):
    """The server answered in a way this client cannot read, or not at all."""


class ErrorResponse(ServerError):
    """The server answered a request with an error (and can go on)."""


class Server:
    """A `ruff server` process started by this process, initialized with ruff settings (`configuration`, a
    ruff.toml's options as a dict) that override every configuration file."""

    def __init__(self, binary: str, configuration: dict, cwd: str, timeout_s: float):
        self.owner = os.getpid()
        self.timeout_s = timeout_s
        self.process = subprocess.Popen(
            [binary, "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            start_new_session=True,  # a Ctrl-C in the terminal interrupts this process, not its server
        )
        self.unsent = bytearray()
        self.received = bytearray()
        self.ids = itertools.count(1)
        self.documents = itertools.count(1)
        try:
            os.set_blocking(self.process.stdin.fileno(), False)
            capabilities = self.call("initialize", _initialize_params(configuration))["capabilities"]
            self.codec = _CODECS[capabilities.get("positionEncoding", "utf-16")]
            self.notify("initialized", {})
        except BaseException:
            self.kill()
            raise

    def format(self, text: str) -> str | None:
        """`text` laid out; None where the server cannot (`text` does not parse: the CLI says why)."""
        document = {"uri": f"file://{WORKSPACE}/module_{next(self.documents)}.py"}
        opened = {**document, "languageId": "python", "version": 1, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": opened})
        options = {"tabSize": 4, "insertSpaces": True}  # required by LSP; ruff follows its configuration
        request = self.request("textDocument/formatting", {"textDocument": document, "options": options})
        self.notify("textDocument/didClose", {"textDocument": document})
        edits = self.response(request)
        if edits:
            return apply_edits(text, edits, self.codec)
        return text if _parses(text) else None  # the server answers alike for both

    def shut_down(self) -> None:
        """Ask the server to exit (`shutdown`, `exit`); kill it if it does not, and reap it."""
        try:
            if self.owner == os.getpid() and self.process.poll() is None:
                self.timeout_s = min(self.timeout_s, 2)
                self.call("shutdown", None)
                self.notify("exit", None)
                self.flush()
                self.process.wait(self.timeout_s)
        except (OSError, ValueError, ServerError, subprocess.TimeoutExpired):
            pass
        finally:
            self.kill()

    def kill(self) -> None:
        if self.owner == os.getpid() and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.forget()

    def forget(self) -> None:
        """Close this process's ends of the pipes (in a forked child: the parent's server is not touched)."""
        self.process.stdin.close()
        self.process.stdout.close()

    def call(self, method: str, params) -> object:
        return self.response(self.request(method, params))

    def request(self, method: str, params) -> int:
        request_id = next(self.ids)
        self._queue({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def notify(self, method: str, params) -> None:
        self._queue({"jsonrpc": "2.0", "method": method, "params": params})

    def response(self, request_id: int) -> object:
        """The result of request `request_id`, writing what is queued meanwhile; the server's own requests are
        answered with null, its notifications (diagnostics, logs) dropped."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            for message in self._messages():
                if "method" not in message and message.get("id") == request_id:
                    if "error" in message:
                        raise ErrorResponse(f"ruff server: {message['error'].get('message')}")
                    return message.get("result")
                if "method" in message and "id" in message:
                    self._queue({"jsonrpc": "2.0", "id": message["id"], "result": None})
            self._transfer(deadline)

    def flush(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        while self.unsent:
            self._transfer(deadline)

    def _queue(self, message: dict) -> None:
        body = json.dumps(message, ensure_ascii=False).encode()
        self.unsent += b"Content-Length: %d\r\n\r\n" % len(body) + body

    def _transfer(self, deadline: float) -> None:
        """Write what the pipe to the server takes and read what the server wrote, waiting for either."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise ServerError(f"ruff server: no answer within {self.timeout_s} s")
        stdin, stdout = self.process.stdin.fileno(), self.process.stdout.fileno()
        poller = select.poll()  # not select.select: it takes no descriptor above 1023
        poller.register(stdout, select.POLLIN)
        if self.unsent:
            poller.register(stdin, select.POLLOUT)
        ready = dict(poller.poll(left * 1000))
        if stdin in ready:
            del self.unsent[: os.write(stdin, self.unsent)]
        if stdout in ready:
            chunk = os.read(stdout, 1 << 16)
            if not chunk:
                raise ServerError("ruff server exited")
            self.received += chunk

    def _messages(self):
        """The messages received whole, taken out of the buffer one by one."""
        while (header_end := self.received.find(b"\r\n\r\n")) >= 0:
            length = _content_length(bytes(self.received[:header_end]))
            end = header_end + 4 + length
            if len(self.received) < end:
                return
            body = bytes(self.received[header_end + 4 : end])
            del self.received[:end]
            yield json.loads(body)


def _initialize_params(configuration: dict) -> dict:
    settings = {
        "configuration": configuration,
        "configurationPreference": "editorOnly",  # no pyproject.toml or ruff.toml counts, as with `--isolated`
        "lint": {"enable": False},
    }
    return {
        "processId": os.getpid(),
        "rootUri": None,
        "workspaceFolders": [{"uri": f"file://{WORKSPACE}", "name": "generated"}],
        "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]}},
        "initializationOptions": {"settings": settings},
    }


def _parses(text: str) -> bool:
    try:
        syntax.parse(text)  # under the parsing lock (runtime/syntax.py)
    except (SyntaxError, ValueError):
        return False
    return True


def _content_length(header: bytes) -> int:
    for line in header.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    raise ServerError(f"ruff server: a message without Content-Length: {header!r}")


def apply_edits(text: str, edits: list[dict], codec: tuple[str, int]) -> str:
    """`text` with LSP TextEdits applied (positions refer to `text`; inserts at one place in their order), last
    first; `codec` names how positions count characters: ("utf-16-le", 2) counts UTF-16 code units."""
    starts = [0, *(match.end() for match in _LINE_BREAK.finditer(text))]
    spans = [
        (_offset(text, starts, edit["range"]["start"], codec), i, _offset(text, starts, edit["range"]["end"], codec))
        for i, edit in enumerate(edits)
    ]
    for start, i, end in sorted(spans, reverse=True):
        text = text[:start] + edits[i]["newText"] + text[end:]
    return text


def _offset(text: str, starts: list[int], position: dict, codec: tuple[str, int]) -> int:
    """The index in `text` of an LSP position (past the end: the end; past a line's end: that end)."""
    line, character = position["line"], position["character"]
    if line >= len(starts):
        return len(text)
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    content = text[starts[line] : end].rstrip("\r\n")
    if content.isascii():
        return starts[line] + min(character, len(content))
    name, width = codec
    return starts[line] + len(content.encode(name)[: character * width].decode(name, errors="ignore"))


_lock = threading.Lock()
_servers: dict[str, Server | None] = {}  # by binary; None: it could not start, or failed: the CLI formats


def format_text(binary: str, text: str, configuration: dict, cwd: str, timeout_s: float) -> str | None:
    """`text` laid out by this process's server of `binary` (started on the first call); None where `text` does not
    parse, or the server cannot run or failed (then for the rest of the process): the caller runs the CLI."""
    if not hasattr(select, "poll"):  # Windows
        return None
    with _lock:
        server = _servers.get(binary)
        if server is not None and server.owner != os.getpid():
            _forget_all()  # forked: the parent's server is the parent's
            server = None
        if server is None and binary not in _servers:
            server = _servers[binary] = _started(binary, configuration, cwd, timeout_s)
        if server is None:
            return None
        try:
            return server.format(text)
        except ErrorResponse:
            return None
        except BaseException as exc:
            _servers[binary] = None
            server.kill()
            if not isinstance(exc, Exception):
                raise
            return None


def _started(binary, configuration, cwd, timeout_s) -> Server | None:
    try:
        return Server(binary, configuration, cwd, timeout_s)
    except Exception:
        return None


def running_server(binary: str) -> Server | None:
    """This process's server of `binary`, if one runs."""
    server = _servers.get(binary)
    return server if server is not None and server.owner == os.getpid() else None


def shut_down_all() -> None:
    """Shut down this process's servers; a later format starts a new one."""
    with _lock:
        for server in _servers.values():
            if server is not None:
                server.shut_down()
        _servers.clear()


def _forget_all() -> None:
    for server in _servers.values():
        if server is not None:
            server.forget()
    _servers.clear()


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()  # another thread of the parent may have held it
    _forget_all()


atexit.register(shut_down_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
