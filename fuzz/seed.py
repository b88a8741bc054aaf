#!/usr/bin/env python3
"""Seed inputs for the fuzz targets, taken from the project's own tests,
examples and docs (fuzz/README.md). Writes OUT/<target>/<sha1> files; run.sh
merges them into fuzz/corpus/<target>/ with libFuzzer's -merge=1, which keeps
only the inputs that add coverage."""

import hashlib
import json
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "seeds")

RAW = re.compile(r'R"([^(\s]*)\((.*?)\)\1"', re.S)
LIT = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def read(p):
    return (root / p).read_text(encoding="utf-8", errors="replace")


def raw_strings(p):
    return [m.group(2) for m in RAW.finditer(read(p))]


def c_literals(p):
    text = RAW.sub("", read(p))
    out = []
    for m in LIT.finditer(text):
        try:
            out.append(m.group(1).encode("latin-1", "backslashreplace")
                       .decode("unicode_escape"))
        except UnicodeDecodeError:
            pass
    return out


def is_json(s):
    try:
        json.loads(s)
        return True
    except ValueError:
        return False


def fenced(p, lang):
    return re.findall(r"```" + lang + r"\n(.*?)```", read(p), re.S)


def inline_json(p):
    return [s for s in re.findall(r"`(\{.*?\})`", read(p)) if s]


def write(target, items):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    n = 0
    for s in items:
        b = s.encode("utf-8") if isinstance(s, str) else s
        if not b or len(b) > 8192:
            continue
        (d / hashlib.sha1(b).hexdigest()).write_bytes(b)
        n += 1
    print(f"{target}: {n} seed(s)")


tests = root / "tests" / "unit"
jsonish = lambda s: s.lstrip()[:1] in ("{", "[")

# JSON-RPC frames: every JSON text in the Reflection V2 and API tests.
rpc_files = ["jsonrpc_test.cpp", "connection_test.cpp", "api_session_test.cpp",
             "manager_link_test.cpp", "directory_test.cpp"]
frames = []
for f in rpc_files:
    frames += [s for s in raw_strings(f"tests/unit/{f}") if jsonish(s)]
    frames += [s for s in c_literals(f"tests/unit/{f}") if jsonish(s)]
frames += inline_json("docs/API.md")
write("jsonrpc", frames)
write("reflection_v2", [s for s in frames if '"method"' in s or '"result"' in s
                        or '"id"' in s or '"pid"' in s])

# iii frames.
iii = []
for f in ["iii_protocol_test.cpp", "iii_engine_test.cpp", "worker_test.cpp", "channel_test.cpp"]:
    iii += [s for s in raw_strings(f"tests/unit/{f}") + c_literals(f"tests/unit/{f}")
            if jsonish(s) or s.startswith("/") or s.startswith("genkit::")]
iii += inline_json("docs/API.md")
write("iii", iii)

# Schemas alone, and schema NUL instance pairs.
schemas, instances = [], []
for f in ["tests/unit/schema_test.cpp", "tests/unit/demo_actions_test.cpp",
          "tests/unit/program_action_test.cpp", "tests/unit/runtime_config_test.cpp",
          "actions/demo_actions.cpp"]:
    for s in raw_strings(f) + c_literals(f):
        if not jsonish(s) or not is_json(s):
            continue
        v = json.loads(s)
        if isinstance(v, dict) and ("type" in v or "$schema" in v or "properties" in v
                                    or "anyOf" in v or "oneOf" in v):
            schemas.append(s)
        else:
            instances.append(s)
pairs = [s + "\0" + i for s in schemas[:12] for i in instances[:12]]
write("schema", schemas + pairs)

# HTTP request heads for the routes in docs/API.md, plain and as upgrades.
routes = sorted(set(re.findall(r"`(GET|POST) (/[^ `\[]*)", read("docs/API.md"))))
heads = []
for method, path in routes:
    body = '{"key":"/flow/echo","input":"hi"}' if method == "POST" else ""
    h = (f"{method} {path}?runtimeId=demo&x=%41+b HTTP/1.1\r\nHost: 127.0.0.1:4100\r\n"
         "Origin: http://localhost:4000\r\nContent-Type: application/json\r\n")
    heads.append(h + f"Content-Length: {len(body)}\r\n\r\n{body}")
    heads.append(h + f"Transfer-Encoding: chunked\r\n\r\n{len(body):x}\r\n{body}\r\n0\r\n\r\n")
for path in ["/api/ws", "/", "/?token=abc&runtime=1", "/ws/channels/abc?key=k%20v"]:
    heads.append(f"GET {path} HTTP/1.1\r\nHost: localhost:3100\r\nUpgrade: websocket\r\n"
                 "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer t0k3n\r\n\r\n")
heads.append("GET /healthz HTTP/1.0\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
write("http_head", heads)

# YAML host and runtime configs.
yaml = [read(p) for p in ["deploy/host.yaml", "examples/runtime.yaml",
                          "tests/interop/runtime-test.yaml"]]
for p in ["docs/HOST_CONFIG.md", "docs/PROGRAM_ACTIONS.md", "deploy/README.md"]:
    yaml += fenced(p, "yaml")
for f in ["host_config_test.cpp", "runtime_config_test.cpp"]:
    yaml += [s for s in raw_strings(f"tests/unit/{f}") + c_literals(f"tests/unit/{f}")
             if ":" in s and ("\n" in s or s.startswith("{"))]
write("host_config", yaml)
