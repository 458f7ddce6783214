# SPDX-License-Identifier: BSD-3-Clause
"""One section of docs/PERFORMANCE.md, between "<!-- NAME:begin" and "<!-- NAME:end -->" (the
bench scripts' reports): put_section replaces it, or appends it when the file has none."""


def put_section(doc, name, text):
    """Writes `text` (its own markers included) as the section `name` of the file `doc`; "-" writes nothing."""
    if doc == "-":
        return
    try:
        s = open(doc).read()
    except FileNotFoundError:
        s = ""
    begin, end = s.find("<!-- %s:begin" % name), s.find("<!-- %s:end -->" % name)
    if begin >= 0 and end >= 0:
        s = s[:begin] + text + s[end + len("<!-- %s:end -->" % name):]
    else:
        s = s.rstrip("\n") + "\n\n" + text + "\n"
    open(doc, "w").write(s)
