#!/usr/bin/env python3
"""Program action: counts words, streaming each one as a chunk.

Input (one JSON line on stdin): {"text": "..."}
Chunks: {"word": "..."}   Result: {"words": N}
"""
import json
import sys


def emit(**message):
    # One JSON object per line; flush so that chunks reach the caller now,
    # not when the buffer fills.
    print(json.dumps(message), flush=True)


def main():
    request = json.loads(sys.stdin.readline() or "null")
    if not isinstance(request, dict) or not isinstance(request.get("text"), str):
        emit(error={"status": "INVALID_ARGUMENT", "message": "expected {\"text\": string}"})
        return
    words = request["text"].split()
    for word in words:
        emit(chunk={"word": word})
    emit(result={"words": len(words)})


if __name__ == "__main__":
    main()
