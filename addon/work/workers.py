"""Large requests read and translated in a separate process, so the proxy's interpreter lock is
never held for long while other flows wait.

A worker thread shares the proxy's lock: one long C call keeps it (orjson of a 10 MB body, a
pydantic dump of the translation), and even pure Python, which hands it back every 5 ms (the
interpreter's switch interval), makes the event loop wait up to that long for it after each
socket call, several times per callback (docs/design.md "Limits"). A worker process has a lock of
its own. What crosses is flat, and the large parts through private files: the client's body in,
the upstream body and the turn's new input items out, and a few small objects through the pool's
pipe. The proxy never holds a large body as parsed objects (whose pickling, like their parse or
their collection, costs as much), nor pickles a large byte string: the pool's pipe copies it
three times with the lock held (12-17 ms for 20 MB, a stall of every stream), while a file is
written and read back in one system call each, with the lock released.

The processes are addon/work/offload.py's pool (`in_process`: spawned on the first large request,
ended with the proxy; docs/concurrency.md); this module is what crosses and how.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any

from addon.routes.plugins import load_extra
from addon.serve import bodies
from addon.serve.translate import Asked, translate_turn
from addon.state import stored_items
from addon.work import offload
from translators import Translation
from translators import client_dialects as client_registry
from translators import dialect as registry
from translators.features import compaction
from translators.wire import wirejson


@dataclass(frozen=True, slots=True)
class Spilled:
    """A body in a private file (0600, in a 0700 folder of the proxy's own, on `/dev/shm` where
    it has room, `_spill_root`): how a large body crosses between the proxy and a worker."""

    path: str
    size: int


SPILL_ROOM = 1 << 30
"""Free bytes `/dev/shm` must have to hold the hand-off files: a container's is often 64 MB, less
than one large request's three files (its body, the upstream body, its new items)."""
_spill_dir: str | None = None


def _spill_root() -> str | None:
    """`/dev/shm` (memory) when it is writable and roomy, else the temporary folder."""
    try:
        shm = os.statvfs("/dev/shm")
    except OSError:
        return None
    roomy = shm.f_bavail * shm.f_frsize >= SPILL_ROOM
    return "/dev/shm" if roomy and os.access("/dev/shm", os.W_OK) else None


_SPILL_PREFIX = "gateway-bodies-"
_SETUP_PREFIX = ".gateway-setup-"
_OWNER = ".owner"
"""A file in each proxy's folder that the proxy holds an exclusive `flock` on while it lives: the
kernel lets go of it when the process dies, however it dies, and in any PID namespace."""
_owner_fd: int | None = None
_lock = threading.Lock()


def _directory() -> str:
    global _spill_dir, _owner_fd
    with _lock:
        if _spill_dir is None or not os.path.isdir(_spill_dir):
            root = _spill_root() or tempfile.gettempdir()
            _sweep(root)
            if _owner_fd is not None:
                os.close(_owner_fd)
            _spill_dir, _owner_fd = _own_folder(root)
        return _spill_dir


def _own_folder(root: str) -> tuple[str, int]:
    """A new 0700 folder and the descriptor of its locked owner file. It is made under another
    name and renamed once locked, so `_sweep` never finds it unlocked."""
    setup = tempfile.mkdtemp(prefix=_SETUP_PREFIX, dir=root)
    fd = os.open(os.path.join(setup, _OWNER), os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    folder = os.path.join(root, _SPILL_PREFIX + os.path.basename(setup).removeprefix(_SETUP_PREFIX))
    os.rename(setup, folder)
    return folder, fd


def _sweep(root: str) -> None:
    """Remove the folders this user's proxies left when they died without `shutdown` (SIGKILL, an
    out-of-memory kill): their files are conversations, and on `/dev/shm` they hold memory until
    the machine restarts. A folder whose owner file can be locked has no live proxy; one without
    an owner file is left alone."""
    with contextlib.suppress(OSError), os.scandir(root) as entries:
        for entry in entries:
            if not entry.name.startswith(_SPILL_PREFIX) or not entry.is_dir(follow_symlinks=False):
                continue
            if entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            try:
                fd = os.open(os.path.join(entry.path, _OWNER), os.O_RDWR)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its proxy runs
            else:
                shutil.rmtree(entry.path, ignore_errors=True)
            finally:
                os.close(fd)


def spill(data: bytes, directory: str | None = None) -> Spilled:
    """`data` written to a new private file (in `directory`, else the proxy's folder)."""
    fd, path = tempfile.mkstemp(dir=directory or _directory())
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return Spilled(path, len(data))


def read(spilled: Spilled) -> bytes:
    """The file's bytes, read into a new byte string by one system call, the interpreter lock
    released (`os.read`)."""
    fd = os.open(spilled.path, os.O_RDONLY)
    try:
        parts = [os.read(fd, spilled.size)]
        while (got := sum(map(len, parts))) < spilled.size and parts[-1]:
            parts.append(os.read(fd, spilled.size - got))
    finally:
        os.close(fd)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def discard(*spilled: Spilled | None) -> None:
    for each in spilled:
        if each is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(each.path)


HEAD_MEMBER_BYTES = 4096
"""Top-level members of a large body written at most this long come back in `Head.fields`."""


@dataclass(frozen=True, slots=True)
class Head:
    """What the proxy reads of a large body before it is translated (routing, the store's
    lookup): its short top-level members (never `input`), and where the decoded body is."""

    fields: dict[str, Any]
    """Empty when the body is not a JSON object."""
    trigger: bool
    """The last input item is `compaction_trigger` (translators/features/compaction.py)."""
    body: Spilled
    """The decoded body, for `run_translate`; the caller `discard`s it."""
    client_text: str
    """The body's text for the saved flow, cut at the kept bound (`bodies.kept_text`)."""
    references: list[str] = field(default_factory=list)
    """The ids its `input` names by `item_reference` (`stored_items.references`)."""


def _read_head(source: Spilled, encoding: str | None, limit: int, kept: int) -> Head:
    """In the worker: the body read as the proxy reads a small one (`bodies.read`, raising
    what it raises, for the proxy's 413 and 400), and its `Head`."""
    raw = read(source)
    data, body, client_text = bodies.read(raw, encoding, limit, kept)
    fields = {k: v for k, v in body.items() if k != "input" and len(wirejson.dumps(v)) <= HEAD_MEMBER_BYTES} \
        if isinstance(body, dict) else {}
    decoded = source if data is raw else spill(data, os.path.dirname(source.path))
    refs = stored_items.references(body.get("input")) if isinstance(body, dict) else []
    return Head(fields, compaction.is_trigger(body), decoded, client_text, refs)


async def read_head(raw: bytes, encoding: str | None, limit: int, kept: int) -> Head:
    """A large body as the client sent it (`encoding`: its Content-Encoding), read in a worker:
    its `Head`, whose `body` the caller `discard`s once translated."""
    source = await offload.in_thread(spill, raw)
    head = None
    try:
        head = await offload.in_process(_read_head, source, encoding, limit, kept)
        return head
    finally:
        if head is None or head.body != source:
            discard(source)


@dataclass(frozen=True, slots=True)
class Translated[Body]:
    """What a worker gives back: the translation (its `body` a stand-in, see `_translate`) and
    the upstream body written, with its metadata copy already dumped. `Body`: `Spilled` as the
    worker returns it, `bytes` as `run_translate` does."""

    translation: Translation
    content: Body
    saved: dict[str, Any]
    """`translation.model_dump(mode="json", exclude={"body"})`, for `flow.metadata`."""
    new_items: Body
    """The turn's new input items as the store keeps them, one JSON array (`stored_items.expand`)."""
    count: int = 0


def _translate(source: Spilled, asked: Asked, past: list[dict[str, Any]] | tuple[str, Spilled] | None,
               found: dict[str, dict[str, Any]] | None = None) -> Translated[Spilled]:
    """In the worker: the translate step (addon/serve/translate.py) of the JSON body in `source`,
    with the stored history `past` in its input when the turn reads state (a long one as its kind
    and the file of its stored JSON, `stored_items.Stored`), written with `wirejson.dumps`. The
    translation comes back without the upstream body (the proxy never reads it again: it is the
    flow's request); in its place `{"sha1": …}` of the written body, which is all the Gemini
    decoder reads of it (a seed for made-up call ids, fixed by the request, new on every turn).
    The upstream body and the new items come back spilled. A `TranslatorError` crosses as itself
    (it pickles)."""
    if asked.dialect not in registry.names() or asked.client not in client_registry.names():
        load_extra()  # a dialect of `$GATEWAY_DIALECTS`: a spawned worker starts with the shipped ones only
    body = wirejson.loads(read(source))
    if isinstance(past, tuple):
        kind, stored = past
        past = stored_items.past_items(kind, wirejson.loads(read(stored)))
    translation, new_items = translate_turn(body, past, asked, found)
    content = wirejson.dumps(translation.body)
    saved = translation.model_dump(mode="json", exclude={"body"})
    translation.body = {"sha1": hashlib.sha1(content, usedforsecurity=False).hexdigest()}
    folder = os.path.dirname(source.path)
    return Translated(translation, spill(content, folder), saved, spill(wirejson.dumps(new_items), folder),
                      len(new_items))


async def run_translate(body: Spilled, asked: Asked,
                        past: list[dict[str, Any]] | stored_items.Stored | None = None,
                        found: dict[str, dict[str, Any]] | None = None) -> Translated[bytes]:
    """The body in `body` translated in a worker (`_translate`), its upstream body and new items
    read back off the event loop; a long stored history `past` crosses as a file too."""
    stored: Spilled | None = None
    sent: list[dict[str, Any]] | tuple[str, Spilled] | None = None
    if isinstance(past, stored_items.Stored):
        stored = await offload.in_thread(spill, past.json())
        sent = (past.kind, stored)
    else:
        sent = past
    try:
        done = await offload.in_process(_translate, body, asked, sent, found)
    finally:
        discard(stored)
    try:
        content, new_items = await offload.in_thread(lambda: (read(done.content), read(done.new_items)))
    finally:
        discard(done.content, done.new_items)
    return Translated(done.translation, content, done.saved, new_items, done.count)


def shutdown() -> None:
    """The pool ended (`offload.shutdown_pool`) and the proxy's folder removed with what is left in
    it (the addon's `done`); the next large request starts both again."""
    global _spill_dir, _owner_fd
    offload.shutdown_pool()
    with _lock:
        folder, _spill_dir = _spill_dir, None
        owner, _owner_fd = _owner_fd, None
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    if owner is not None:
        os.close(owner)
