"""Which layer broke it: the same smoke through a gateway and straight to vLLM, compared scenario by scenario.

Seed reports lost weeks to gateways and proxies that change the tool-calling exchange on the way: tool-call ids
rewritten (so the client's `tool_call_id` no longer matches what vLLM issued), the `role: tool` message dropped,
arguments re-serialised, `content: null` turned into "" (or the reverse), streams buffered into one JSON body. With
greedy decoding (temperature 0) the same backend answers the same request the same way, so what differs between the
two runs is the gateway's doing. Ids are random per request: their *shape* is compared (prefix and length), not the
value. Pure functions of two `SmokeFacts`.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.smoke.arguments import decoded
from ascend_doctor.smoke.client import Exchange


class Difference(Model):
    """One way the gateway's answer differs from vLLM's own."""

    scenario: str
    aspect: str = Field(description="status | tool_calls | call_names | call_id_shape | arguments | "
                                    "arguments_bytes | content | finish_reason | stream | transport")
    gateway: str
    direct: str
    gateway_bytes: str = ""
    direct_bytes: str = ""
    serious: bool = Field(True, description="False for differences a client does not notice (bytes of equal JSON)")


def id_shape(call_id: Optional[str]) -> str:
    """`chatcmpl-tool-<16 hex>` → 'chatcmpl-tool-' + 16 [0-9a-f]: the prefix kept, the random part classified."""
    if not call_id:
        return "(none)"
    m = re.match(r"^(.*?[-_])?([0-9A-Za-z]+)$", call_id)
    if not m:
        return f"{len(call_id)} chars"
    prefix, rand = m.group(1) or "", m.group(2)
    kind = "hex" if re.fullmatch(r"[0-9a-f]+", rand) else "alnum"
    return f"{prefix}<{len(rand)} {kind}>"


def _bytes(x: Exchange, limit: int = 600) -> str:
    return (x.body_text or x.error or "")[:limit]


def _calls(x: Exchange) -> list:
    return list(x.reply.tool_calls) if x.reply is not None else []


def compare_exchange(name: str, gw: Exchange, direct: Exchange) -> list[Difference]:
    out: list[Difference] = []

    def diff(aspect: str, a: Any, b: Any, serious: bool = True) -> None:
        out.append(Difference(scenario=name, aspect=aspect, gateway=str(a), direct=str(b), gateway_bytes=_bytes(gw),
                              direct_bytes=_bytes(direct), serious=serious))

    if (gw.error is None) != (direct.error is None):
        diff("transport", gw.error_kind and f"{gw.error_kind}: {gw.error}" or f"HTTP {gw.status}",
             direct.error_kind and f"{direct.error_kind}: {direct.error}" or f"HTTP {direct.status}")
        return out
    if gw.error is not None:
        return out  # both failed at the transport level: nothing the gateway alone did
    if gw.status != direct.status:
        diff("status", f"HTTP {gw.status}", f"HTTP {direct.status}")
        return out
    if (gw.stream is None) != (direct.stream is None):
        diff("stream", "SSE stream" if gw.stream is not None else f"one body ({gw.content_type or '?'})",
             "SSE stream" if direct.stream is not None else f"one body ({direct.content_type or '?'})")
    a, b = gw.reply, direct.reply
    if a is None or b is None:
        return out
    ca, cb = _calls(gw), _calls(direct)
    if len(ca) != len(cb):
        diff("tool_calls", f"{len(ca)} call(s)", f"{len(cb)} call(s)")
    else:
        names_a, names_b = [c.name for c in ca], [c.name for c in cb]
        if names_a != names_b:
            diff("call_names", names_a, names_b)
        shapes_a, shapes_b = [id_shape(c.id) for c in ca], [id_shape(c.id) for c in cb]
        if shapes_a != shapes_b:
            diff("call_id_shape", ", ".join(f"{c.id!r} ({s})" for c, s in zip(ca, shapes_a)),
                 ", ".join(f"{c.id!r} ({s})" for c, s in zip(cb, shapes_b)))
        for x, y in zip(ca, cb):
            if x.arguments == y.arguments:
                continue
            dx, dy = decoded(x.arguments), decoded(y.arguments)
            if dx is not None and dx == dy:
                diff("arguments_bytes", json.dumps(x.arguments), json.dumps(y.arguments), serious=False)
            else:
                diff("arguments", json.dumps(x.arguments), json.dumps(y.arguments))
    if (a.content is None) != (b.content is None) or (ca and cb and a.content != b.content):
        diff("content", repr(a.content), repr(b.content), serious=not (ca and {a.content, b.content} <= {None, ""}))
    elif not ca and not cb and (a.content or "").strip() != (b.content or "").strip():
        diff("content", repr((a.content or "")[:200]), repr((b.content or "")[:200]))
    if a.finish_reason != b.finish_reason:
        diff("finish_reason", repr(a.finish_reason), repr(b.finish_reason))
    return out


def compare_runs(gateway: Any, direct: Any) -> list[Difference]:
    """Every difference between two smoke runs (`SmokeFacts`), scenario by scenario, in the smoke's order."""
    out: list[Difference] = []
    for name, gx in gateway.exchanges.items():
        dx = direct.exchanges.get(name)
        if dx is None:  # not run directly (e.g. the compat round trip only one side needed)
            continue
        out.extend(compare_exchange(name, gx, dx))
    for name, dx in direct.exchanges.items():
        if name not in gateway.exchanges and name in gateway.not_run:
            out.append(Difference(scenario=name, aspect="transport", gateway=f"not run: {gateway.not_run[name]}",
                                  direct=f"HTTP {dx.status}" if dx.error is None else f"{dx.error_kind}",
                                  direct_bytes=_bytes(dx)))
    return out
