"""The language server over raw JSON-RPC: every request gets exactly one response, whatever
comes before it (malformed headers, bodies, batches and params, lifecycle misuse), and the
server keeps no memory per notification."""
from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import sys
import threading
from collections import Counter

import pytest

SERVER = [sys.executable, "-m", "gradguard", "lsp"]
TIMEOUT = 30


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(message: dict) -> bytes:
    return frame(json.dumps(message).encode())


class RawClient:
    """Bytes in, parsed messages out; every response is kept to count them per id."""

    def __init__(self):
        self.proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.messages: queue.Queue = queue.Queue()
        self.responses: list[dict] = []
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.messages.put(json.loads(out.read(length)))

    def send_bytes(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_bytes(encode(message))

    def request(self, method: str, params=None, **extra) -> int:
        self._next += 1
        message = {"jsonrpc": "2.0", "id": self._next, "method": method, **extra}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self._next

    def notify(self, method: str, params=None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    def response(self, msg_id) -> dict:
        """The next response with this id (responses with other ids are kept for counting)."""
        while True:
            message = self.messages.get(timeout=TIMEOUT)
            if "method" in message:
                if "id" in message:  # a request from the server: decline it
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            self.responses.append(message)
            if message.get("id") == msg_id:
                return message

    def error_code(self, msg_id) -> int:
        return self.response(msg_id)["error"]["code"]

    def still_answers(self) -> None:
        """A plain request after the abuse: answered, with a result."""
        answer = self.response(self.request("textDocument/hover", HOVER))
        assert "result" in answer and answer["result"] is None, answer

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)


HOVER = {"textDocument": {"uri": "file:///nowhere/x.py"}, "position": {"line": 0, "character": 0}}
INIT = {"processId": None, "rootUri": None, "capabilities": {}}


@pytest.fixture
def raw():
    client = RawClient()
    yield client
    client.close()


def initialized(client: RawClient) -> None:
    answer = client.response(client.request("initialize", INIT))
    assert "capabilities" in answer["result"]
    client.notify("initialized", {})


def test_lifecycle(raw):
    assert raw.error_code(raw.request("textDocument/hover", HOVER)) == -32002
    raw.notify("textDocument/didOpen", {"textDocument": {  # dropped before initialize
        "uri": "file:///nowhere/x.py", "languageId": "python", "version": 1, "text": "x = 1\n"}})
    initialized(raw)
    assert raw.error_code(raw.request("initialize", INIT)) == -32600
    raw.still_answers()
    assert raw.response(raw.request("shutdown"))["result"] is None
    assert raw.error_code(raw.request("textDocument/hover", HOVER)) == -32600
    assert raw.error_code(raw.request("shutdown")) == -32600
    raw.notify("exit")
    assert raw.proc.wait(timeout=TIMEOUT) == 0
    counts = Counter(r.get("id") for r in raw.responses)
    assert all(n == 1 for n in counts.values()), counts


@pytest.mark.parametrize("params", [
    {"textDocument": {"uri": "file:///nowhere/x.py"}, "position": {"line": -1, "character": 0}},
    {"textDocument": {"uri": "file:///nowhere/x.py"}, "position": "start"},
    {"textDocument": "x.py", "position": {"line": 0, "character": 0}},
    None,
    [1, 2],
])
def test_invalid_params(raw, params):
    initialized(raw)
    message = {"jsonrpc": "2.0", "id": "bad", "method": "textDocument/hover"}
    if params is not None:
        message["params"] = params
    raw.send(message)
    answer = raw.response("bad")
    assert answer["error"]["code"] == -32602 and "textDocument/hover" in answer["error"]["message"]
    raw.still_answers()


def test_methods_that_are_not_requests(raw):
    initialized(raw)
    assert raw.error_code(raw.request("$/cancelRequest", {"id": 1})) == -32601
    assert raw.error_code(raw.request("$/somethingNew", {})) == -32601
    assert raw.error_code(raw.request("textDocument/didSave", {"textDocument": {"uri": "file:///x.py"}})) == -32601
    assert raw.error_code(raw.request("gradguard/unknown", {})) == -32601
    raw.notify("$/setTrace", {"value": "off"})
    raw.notify("$/somethingNew", {})
    raw.still_answers()


@pytest.mark.parametrize("garbage", [
    b"Content-Length: 7\r\n\r\nnotjson",                             # body is not JSON
    frame(b'{"jsonrpc": "2.0", "id": 1, "method": "x"'),              # truncated JSON
    frame(b"[]"),                                                      # empty batch
    frame(b"42"),                                                      # not an object
    frame(b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}'),  # id of the wrong type
    frame(b'{"jsonrpc": "2.0", "id": 1}'),                             # neither kind of message
    frame(b'{"jsonrpc": "2.0", "id": 1, "method": "x"'[:10]),          # cut mid-token
    frame(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x", "params": [[[[[]]]]] * 1}).encode()[:-1]),
])
def test_malformed_bodies_get_a_parse_or_request_error(raw, garbage):
    initialized(raw)
    raw.send_bytes(garbage)
    answer = raw.response(None)
    assert answer["error"]["code"] in (-32700, -32600)
    raw.still_answers()


@pytest.mark.parametrize("message,code", [
    ({"id": "v1", "method": "textDocument/hover", "params": HOVER}, -32600),                     # no jsonrpc
    ({"jsonrpc": "1.0", "id": "v1", "method": "textDocument/hover", "params": HOVER}, -32600),   # old version
    ({"jsonrpc": "2.0", "id": "v1", "method": 12}, -32600),                                      # method not a string
])
def test_invalid_requests_are_answered_with_their_id(raw, message, code):
    initialized(raw)
    raw.send(message)
    assert raw.error_code("v1") == code
    raw.still_answers()


def test_batches_refuse_each_request(raw):
    initialized(raw)
    raw.send_bytes(frame(json.dumps([
        {"jsonrpc": "2.0", "id": "b1", "method": "textDocument/hover", "params": HOVER},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": "b2", "method": "shutdown"},
    ]).encode()))
    assert raw.error_code("b1") == -32600
    assert raw.error_code("b2") == -32600
    raw.still_answers()  # shutdown in the batch did not run


@pytest.mark.parametrize("garbage", [
    b"X-Nonsense\r\n\r\n",                                             # a header line that is not one
    b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}",             # no Content-Length: body unread
    b"Content-Length: twelve\r\n\r\n",                                 # a length that is not a number
    b"\r\n\r\n",                                                       # blank lines alone
    b"Content-Length: 2\r\n\r\n{}}}}}}",                               # trailing bytes after a body
    b"Content-Length: 5\r\n\r\n[1, 2, 3, 4]",                          # a length too small
    b"x" * 300_000 + b"\r\n",                                          # a huge line of garbage
])
def test_malformed_headers_lose_nothing_after_them(raw, garbage):
    initialized(raw)
    raw.send_bytes(garbage)
    raw.still_answers()


def test_lower_case_header_and_extra_headers(raw):
    initialized(raw)
    body = json.dumps({"jsonrpc": "2.0", "id": "lc", "method": "textDocument/hover", "params": HOVER}).encode()
    raw.send_bytes(b"content-length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
                   % len(body) + body)
    assert raw.response("lc")["result"] is None


def test_code_action_resolve_refuses_foreign_data(raw, tmp_path):
    initialized(raw)
    path = tmp_path / "x.py"
    path.write_text("x = 1\n")
    raw.notify("textDocument/didOpen", {"textDocument": {
        "uri": path.as_uri(), "languageId": "python", "version": 1, "text": "x = 1\n"}})
    foreign = [
        None,
        {"someone": "else"},
        {"uri": path.as_uri(), "version": 1},
        {"uri": path.as_uri(), "version": 1, "fix": {"kind": "detach"}},
        {"uri": path.as_uri(), "version": 1, "fix": {"kind": "detach", "title": "t",
                                                     "targets": [["expr", {"path": "p", "line": "one"}]]}},
        {"uri": path.as_uri(), "version": "1", "fixAll": True},
        {"uri": path.as_uri(), "version": 1, "suppress": {"code": 3}},
    ]
    for data in foreign:
        action = {"title": "something", **({"data": data} if data is not None else {})}
        answer = raw.response(raw.request("codeAction/resolve", action))
        assert answer["error"]["code"] == -32602, answer
        assert "not a GradGuard code action" in answer["error"]["message"]
    raw.still_answers()


def test_notifications_leave_no_future_behind():
    """pygls 2.1 keeps a Future per notification in ``_request_futures``: the adapter drops them."""
    from gradguard.lsp.server import GradGuardServer

    class Sink:
        def write(self, data: bytes) -> None:
            pass

        def close(self) -> None:
            pass

    async def drive() -> int:
        ls = GradGuardServer()
        ls.protocol.set_writer(Sink(), include_headers=False)
        ls.protocol.receive(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                        "params": INIT}).encode())
        uri = "file:///nowhere/leak.py"
        ls.protocol.receive(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}}}).encode())
        for version in range(2, 502):
            ls.protocol.receive(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": f"x = {version}\n"}]}}).encode())
        await asyncio.sleep(0.1)
        left = len(ls.protocol._request_futures)
        ls.shutdown_work()
        ls.analyser.stop()
        return left

    assert asyncio.run(drive()) < 5
