#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Keeps the README a first page and the documentation's links whole (issue 31).

Checks README.md and docs/*.md: every relative link names a file or folder that exists, and every
#anchor (in the same file or in another .md file) is a heading of its target, with GitHub's slugs
(lower case, punctuation dropped, each blank a '-', repeats suffixed -1, -2, ...). README.md also
starts with the two commands `bash .ci/demo` and `bash .ci/test` and stays under MAX_README lines.
Usage: docs_links.py [source dir]  (default: the folder above this script's)."""
import os
import re
import sys

MAX_README = 250
HEAD = ["# prof", "", "```sh", "bash .ci/demo ", "bash .ci/test "]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slugs(path):
    """The anchors GitHub makes for the headings of a Markdown file."""
    seen, out, fence = {}, set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
                continue
            m = None if fence else re.match(r"#{1,6} +(.*?)\s*#*\s*$", line)
            if not m:
                continue
            s = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def links(path):
    """(line number, target) of every Markdown link outside code blocks and code spans."""
    fence = False
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            if line.startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            for m in LINK.finditer(re.sub(r"`[^`]*`", "``", line)):
                yield no, m.group(1)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    docs = os.path.join(root, "docs")
    files = [os.path.join(root, "README.md")] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    errors, cache, count = [], {}, 0
    for path in files:
        rel = os.path.relpath(path, root)
        for no, target in links(path):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            count += 1
            name, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
            if not os.path.exists(dest):
                errors.append(f"{rel}:{no}: {target}: no file {os.path.relpath(dest, root)}")
                continue
            if anchor and dest.endswith(".md"):
                if dest not in cache:
                    cache[dest] = slugs(dest)
                if anchor not in cache[dest]:
                    errors.append(f"{rel}:{no}: {target}: no heading #{anchor} in {os.path.relpath(dest, root)}")
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read().split("\n")
    for i, want in enumerate(HEAD):
        if not readme[i].startswith(want) or (want == "" and readme[i] != ""):
            errors.append(f"README.md:{i + 1}: expected a line starting with {want!r} (the two commands first)")
            break
    if len(readme) - 1 > MAX_README:
        errors.append(f"README.md: {len(readme) - 1} lines; a first page stays under {MAX_README}: "
                      "move the reference into docs/")
    for e in errors:
        print(e)
    print(f"docs_links: {len(files)} files, {count} relative links, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
