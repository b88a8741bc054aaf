#!/usr/bin/env python3
"""Which source folders include which (issue 34: folders as libraries).

Reads every .cpp/.hpp under the project's source folders, maps each
`#include "folder/..."` to its folder (a folder is a directory; detail/
subfolders count as their parent), and prints the folder graph, one line
per folder with the folders it includes and how many includes make each
edge. Then the cycles (strongly connected components with more than one
folder). With --check it exits 1 when there is a cycle, for the build to run
once the layering is clean.

    scripts/folder_deps.py [--check] [--edges FROM TO]
"""
import argparse
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = {"tests", "bench", "fuzz", "build", "node_modules", "scripts", "docs", "deploy", "examples"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(path):
    """A file's folder is its directory, with detail/ counted as its parent's
    (net/detail/x.hpp is net's): one folder, one library (cmake/layers.cmake)."""
    folder = os.path.dirname(path)
    if not folder:
        return None
    if os.path.basename(folder) == "detail":
        folder = os.path.dirname(folder)
    return folder


def scan():
    edges = defaultdict(lambda: defaultdict(list))  # from -> to -> [file]
    folders = set()
    for top in sorted(os.listdir(ROOT)):
        if top in SKIP or top.startswith(".") or not os.path.isdir(os.path.join(ROOT, top)):
            continue
        for base, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.relpath(os.path.join(base, name), ROOT)
                src = folder_of(path)
                if src is None:
                    continue
                folders.add(src)
                with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
                    for line in f:
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        dst = folder_of(m.group(1))
                        if dst and dst != src and os.path.exists(os.path.join(ROOT, m.group(1))):
                            edges[src][dst].append(path)
    return folders, edges


def cycles(folders, edges):
    """Tarjan's strongly connected components, iteratively (no recursion)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(folders):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, {})))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when folders form a cycle")
    parser.add_argument("--edges", nargs=2, metavar=("FROM", "TO"),
                        help="list the files of FROM that include TO")
    args = parser.parse_args()
    folders, edges = scan()
    if args.edges:
        for path in sorted(set(edges[args.edges[0]][args.edges[1]])):
            print(path)
        return 0
    for src in sorted(folders):
        deps = edges.get(src, {})
        listed = ", ".join(f"{dst} ({len(files)})" for dst, files in sorted(deps.items()))
        print(f"{src:20} -> {listed or '-'}")
    found = cycles(folders, edges)
    print()
    if not found:
        print("no cycle between folders")
        return 0
    for component in found:
        print("cycle: " + " <-> ".join(component))
    return 1 if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
