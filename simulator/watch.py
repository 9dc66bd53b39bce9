"""Watch streams: newline-delimited JSON events, as kube-apiserver serves `?watch=true`."""

import asyncio
import json
import time

from aiohttp import web

from .errors import ApiError
from .app import LOG_ENTRY, LOGGED
from .selectors import Selector
from . import tables

_CLOSE = object()


def _line(event_type, obj):
    return (json.dumps({"type": event_type, "object": obj}, separators=(",", ":")) + "\n").encode()


def _translate(ev, sel):
    """Event type as seen through a selector (an object leaving the selection is DELETED for the watcher)."""
    if not sel:
        return ev.type
    now = sel.matches(ev.obj)
    if ev.type == "ADDED":
        return "ADDED" if now else None
    if ev.type == "DELETED":
        return "DELETED" if now else None
    before = ev.old is not None and sel.matches(ev.old)
    if now and before:
        return "MODIFIED"
    if now:
        return "ADDED"
    if before:
        return "DELETED"
    return None


async def serve_watch(server, request, rtype, info):
    q = request.query
    sel = Selector(q.get("labelSelector"), q.get("fieldSelector"), rtype.group, rtype.plural)
    sim = server.sim
    timeout = float(q.get("timeoutSeconds") or sim.config.get("watch_default_timeout_s", 1800))
    bookmarks = q.get("allowWatchBookmarks") in ("1", "true", "True")
    bookmark_every = float(sim.config.get("watch_bookmark_interval_s", 5))
    drop = sim.faults.watch_drop({"group": info.group, "plural": info.plural, "namespace": info.namespace,
                                  "name": info.name})
    drop_events, drop_seconds = drop if drop else (None, None)
    table_wanted = tables.wants_table(request.headers.get("Accept")) is not None
    field_name = info.name  # /watch on an item is not used by clients; name narrows like fieldSelector
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    def on_event(ev):
        try:
            loop.call_soon_threadsafe(queue.put_nowait, ev)
        except RuntimeError:  # loop already closed at shutdown
            pass

    gone = None
    try:
        lid, backlog = server.store.watch(rtype, info.namespace, q.get("resourceVersion"), on_event)
    except ApiError as err:
        if err.code != 410:
            raise
        lid, backlog, gone = None, [], err

    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                       "Cache-Control": "no-cache, private"})
    response.enable_chunked_encoding()
    entry = request[LOG_ENTRY]
    entry["code"] = 200
    request[LOGGED] = True
    sim.requests.append(entry)
    server.watch_queues.add(queue)
    sent = 0
    try:
        await response.prepare(request)
        if gone is not None:
            await response.write(_line("ERROR", gone.to_status()))
            return response
        deadline = time.monotonic() + timeout
        if drop_seconds is not None:
            deadline = min(deadline, time.monotonic() + drop_seconds)
        last_rv = None

        async def send(ev):
            nonlocal sent, last_rv
            if field_name and ev.obj["metadata"].get("name") != field_name:
                return True
            etype = _translate(ev, sel)
            last_rv = ev.obj["metadata"].get("resourceVersion")
            if etype is None:
                return True
            obj = server.store.output(rtype, ev.obj)
            if table_wanted:
                # handlers/watch.go: each event's object is a one-row Table; the column definitions come with the
                # first event only (the encoder sets NoHeaders after it).
                obj = server.table(request, rtype, [obj], {"resourceVersion": last_rv}, headers=sent == 0)
            await response.write(_line(etype, obj))
            sent += 1
            return drop_events is None or sent < drop_events

        for ev in backlog:
            if not await send(ev):
                return response
        next_bookmark = time.monotonic() + bookmark_every
        while True:
            now = time.monotonic()
            if now >= deadline or server.shutting_down:
                break
            wait = deadline - now
            if bookmarks:
                wait = min(wait, max(0.0, next_bookmark - now))
            try:
                ev = await asyncio.wait_for(queue.get(), timeout=wait)
            except asyncio.TimeoutError:
                if bookmarks and time.monotonic() >= next_bookmark:
                    rv = last_rv or server.store.current_resource_version
                    await response.write(_line("BOOKMARK", {"kind": rtype.kind, "apiVersion": rtype.api_version,
                                                            "metadata": {"resourceVersion": rv}}))
                    next_bookmark = time.monotonic() + bookmark_every
                continue
            if ev is _CLOSE:
                break
            if not await send(ev):
                break
    except ConnectionResetError:
        pass
    finally:
        server.watch_queues.discard(queue)
        if lid is not None:
            server.store.unwatch(lid)
    return response


def close_all(server):
    """Wake every watch so it ends its stream (server shutdown)."""
    for queue in list(server.watch_queues):
        queue.put_nowait(_CLOSE)
