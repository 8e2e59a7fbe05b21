"""JSON-RPC framing and dispatch that answer every request exactly once, whatever arrives.

pygls 2.1 reads messages in ``pygls.io_.run_async`` and hands them to ``JsonRPCProtocol``; on
its own it
  * keeps a Future per notification in ``_request_futures`` forever (memory grows per edit);
  * answers nothing to a request whose params do not fit the method's type, to any request
    after ``shutdown``, to a ``$/`` method sent as a request, or to a batch;
  * answers -32603 (not -32002) before ``initialize`` and accepts a second ``initialize``;
  * loses the messages after a malformed header, since it only recognises a header that
    fills a whole line.
:class:`Protocol` and :func:`read_messages` close these gaps as the LSP 3.17 specification
("Base Protocol", "Lifecycle Messages") and JSON-RPC 2.0 ask.
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
from functools import partial
from typing import Any, Optional

from lsprotocol import types as lsp
from pygls.io_ import StdinAsyncReader
from pygls.protocol import LanguageServerProtocol, lsp_method

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002

# A header found anywhere on a line: after a body shorter than its Content-Length said, the
# rest of that body and the next header share a line, and the next message must still be read.
_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)", re.IGNORECASE)
MAX_BODY = 256 * 1024 * 1024  # larger bodies are skipped unread (a 10 MB file escaped is < 64 MB)
_SKIP_CHUNK = 1024 * 1024
MAX_HEADER_LINE = 64 * 1024  # a longer "header" line is read in pieces of this size


def _is_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


class Protocol(LanguageServerProtocol):
    def __init__(self, server, converter):
        super().__init__(server, converter)
        self.initialize_received = False

    # --- the pygls leak: a Future per handler run, removed only for answered requests -------
    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(partial(self._forget, msg_id))

    def _forget(self, msg_id, future) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    @lsp_method(lsp.SHUTDOWN)
    def lsp_shutdown(self, *args):
        """pygls's, cancelling from a copy: a cancelled Future runs ``_forget`` at once."""
        if (user_handler := self.fm.features.get(lsp.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True

    # --- dispatch ----------------------------------------------------------------------------
    def error(self, msg_id: Optional[Any], code: int, message: str) -> None:
        self._send_response(msg_id, error=lsp.ResponseError(code=code, message=message))

    def receive(self, body: bytes) -> None:
        """One message body off the wire."""
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:
            self.error(None, PARSE_ERROR, f"Parse error: {exc}")
            return
        if isinstance(data, list):
            self._batch(data)
        elif not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            msg_id = data.get("id") if isinstance(data, dict) and _is_id(data.get("id")) else None
            self.error(msg_id, INVALID_REQUEST, 'Invalid request: not a JSON-RPC 2.0 message object')
        elif "method" in data and "id" in data:
            self._request(data)
        elif "method" in data:
            self._notification(data)
        elif "id" in data and ("result" in data or "error" in data):
            self._dispatch(data)  # the client answering one of our requests
        else:
            self.error(None, INVALID_REQUEST, "Invalid request: neither a request, a notification nor a response")

    def _batch(self, items: list) -> None:
        """LSP has no batches (JSON-RPC 2.0 does): each request in one is refused on its own."""
        requests = [item["id"] for item in items
                    if isinstance(item, dict) and "method" in item and _is_id(item.get("id"))]
        if not requests:
            self.error(None, INVALID_REQUEST, "Invalid request: batches are not supported")
        for msg_id in requests:
            self.error(msg_id, INVALID_REQUEST, "Invalid request: batches are not supported")

    def _request(self, data: dict) -> None:
        msg_id, method = data["id"], data["method"]
        if not _is_id(msg_id):
            self.error(None, INVALID_REQUEST, "Invalid request: the id must be a string or an integer")
            return
        if not isinstance(method, str):
            self.error(msg_id, INVALID_REQUEST, "Invalid request: the method must be a string")
            return
        if self._shutdown:
            self.error(msg_id, INVALID_REQUEST, f"{method}: the server is shut down")
            return
        if method == lsp.INITIALIZE:
            if self.initialize_received:
                self.error(msg_id, INVALID_REQUEST, "initialize: the server is already initialized")
                return
        elif not self.initialize_received:
            self.error(msg_id, SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized")
            return
        if method.startswith("$/"):
            self.error(msg_id, METHOD_NOT_FOUND, f"{method}: $/ methods are notifications, not requests")
            return
        known = lsp.METHOD_TO_TYPES.get(method)
        if known is not None and known[1] is None and method != lsp.SHUTDOWN:
            self.error(msg_id, METHOD_NOT_FOUND, f"{method}: a notification, not a request")
            return
        message = self._structure(data, msg_id)
        if message is None:
            return
        if method == lsp.INITIALIZE:
            self.initialize_received = True
        self.handle_message(message)

    def _notification(self, data: dict) -> None:
        method = data["method"]
        if not isinstance(method, str):
            return
        if not self.initialize_received and method != lsp.EXIT:
            log.warning("dropped %s: not initialized", method)  # the specification says drop it
            return
        self._dispatch(data)

    def _dispatch(self, data: dict) -> None:
        message = self._structure(data, None)
        if message is not None:
            self.handle_message(message)

    def _structure(self, data: dict, msg_id: Optional[Any]):
        try:
            return self.structure_message(data)
        except Exception as exc:  # whatever cattrs says of params that do not fit the type
            cause = exc.__cause__ or exc
            log.warning("message not understood: %s", cause)
            if msg_id is not None:
                self.error(msg_id, INVALID_PARAMS, f"{data['method']}: invalid params ({_first_line(cause)})")
            return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class StdinReader(StdinAsyncReader):
    """pygls's stdin reader, whose ``readline`` would take a gigabyte without a newline whole."""

    def readline(self):
        return self.loop.run_in_executor(self.executor, self.stdin.readline, MAX_HEADER_LINE)


async def read_messages(stop_event, reader, protocol: Protocol) -> None:
    """The base protocol: header lines, a blank line, then Content-Length bytes of body."""
    length: Optional[int] = None
    while not stop_event.is_set():
        line = await reader.readline()
        if not line:
            break
        if line.strip():
            if match := _CONTENT_LENGTH.search(line):
                length = int(match.group(1))
            continue
        if length is None:
            continue  # a blank line without a header before it: nothing to read
        size, length = length, None
        if size > MAX_BODY:
            log.error("skipping a %d-byte message (over %d)", size, MAX_BODY)
            while size > 0:
                chunk = await reader.readexactly(min(size, _SKIP_CHUNK))
                if not chunk:
                    return
                size -= len(chunk)
            continue
        try:
            body = await reader.readexactly(size)
        except asyncio.IncompleteReadError:
            break  # end of input mid-body (a socket; stdin returns what it has)
        if len(body) < size:
            break
        try:
            protocol.receive(body)
        except Exception:  # one bad message must not stop the server
            log.exception("failed to handle a message")
