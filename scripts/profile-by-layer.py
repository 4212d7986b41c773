#!/usr/bin/env python3
"""A perf profile of the server, told by layer: each sample goes to the layer of the nearest frame, from
the leaf up, that belongs to one (Swift's runtime, libc and the allocator belong to none, so their time
goes to the code that called them; a sample whose leaf is in the kernel is the kernel's).

    perf record -F 999 -g -p PID -o perf.data -- sleep 10
    perf script -i perf.data -F ip,sym,dso | swift demangle | scripts/profile-by-layer.py
"""
import collections
import re
import sys

# A frame's function belongs to the module that names it: the conforming type's for a protocol witness,
# the extension's for a member added by an extension, else the first module-qualified name.
OWNER = [re.compile(r" in conformance (\w+)\."), re.compile(r"\(extension in (\w+)\):"), re.compile(r"\b([A-Za-z_]\w*)\.")]
# Frames of the server's own statement layer between the stores and the databases' libraries.
ADAPTER = re.compile(r"CountersignServer\.(SQLiteExecutor|PostgresExecutor|TimedExecutor|DatabaseRow|BoundStatement|SQLValue|RowCursor)\b")
LOG = re.compile(r"CountersignServer\.\w*Log\w*\b")
C_CRYPTO = re.compile(r"CCryptoBoringSSL|ecp_nistz|ecdsa|^bn_|sha256_block|aes_|gcm_")
MODULES = {
    "HTTP (Hummingbird, SwiftNIO)": {"Hummingbird", "HummingbirdCore", "HTTPTypes", "NIOHTTPTypes", "NIOHTTPTypesHTTP1",
                                     "NIOCore", "NIOPosix", "NIOHTTP1", "NIOHTTP2", "NIOExtras", "NIOConcurrencyHelpers",
                                     "NIOTLS", "NIOSSL", "NIOFoundationCompat", "ServiceLifecycle", "AsyncAlgorithms"},
    "statements: GRDB, PostgresNIO and the executors": {"GRDB", "PostgresNIO", "PostgresKit", "AsyncKit"},
    "crypto": {"Crypto", "_CryptoExtras", "JWTKit", "CryptoKit"},
    "logging": {"Logging"},
    "journey interpreter": {"Journeys"},
    "the server's services and wire types": {"CountersignServer", "CountersignCore"},
}
LAYER_OF_MODULE = {module: layer for layer, modules in MODULES.items() for module in modules}


def layer(symbol, dso):
    if "libsqlite3" in dso:
        return "SQLite"
    if "libswift_Concurrency" in dso or "libdispatch" in dso or "libswiftDispatch" in dso:
        return "Swift concurrency and Dispatch"
    if C_CRYPTO.search(symbol):
        return "crypto"
    if "c_nio_llhttp" in symbol:
        return "HTTP (Hummingbird, SwiftNIO)"
    if ADAPTER.search(symbol):
        return "statements: GRDB, PostgresNIO and the executors"
    if LOG.search(symbol):
        return "logging"
    for pattern in OWNER:
        match = pattern.search(symbol)
        if match:
            module = match.group(1)
            if module in ("FoundationEssentials", "Foundation"):
                return "Foundation's JSON coders" if "JSON" in symbol else "Foundation, other"
            return LAYER_OF_MODULE.get(module)
    return None


def frames(sample):
    for line in sample.strip().split("\n"):
        match = re.match(r"\s*[0-9a-f]+ (.*) \(([^()]*)\)$", line)
        if match:
            yield match.group(1), match.group(2)


counts = collections.Counter()
for sample in sys.stdin.read().split("\n\n"):
    stack = list(frames(sample))
    if not stack:
        continue
    if "kernel" in stack[0][1]:
        counts["kernel"] += 1
        continue
    counts[next((found for found in (layer(s, d) for s, d in stack) if found), "none found (cut stacks)")] += 1

total = sum(counts.values())
for name, count in counts.most_common():
    print(f"{count / total * 100:5.1f} %  {name}")
print(f"({total} samples)")
