#!/usr/bin/env python3
"""Checks a page of triton-conformance: well-formed HTML (every element that is
opened is closed, in order), no external resource (no src/href to another
document, no <link>, no <script src>), and prints one line per landmark the
lit test then matches: the header rows, the tables' heads and rows, the
skip groups, the filter box, the sections and every case's title.

Usage: check_html.py PAGE.html
       check_html.py --shown DOM.html   (a page as a browser left it, e.g. after
           its filter ran: one line per element of class "filterable" that is
           not hidden, "shown: TAG: its first words", and the filter's count)
"""
import re
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.lines = []
        self.text = None  # collecting the text of the current landmark
        self.text_tag = None
        self.row = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "link" or (tag == "script" and "src" in a):
            self.errors.append(f"external resource: <{tag} {attrs}>")
        for key in ("src", "href"):
            if key in a and not (a[key] or "").startswith("#"):
                self.errors.append(f"external resource: {key}={a[key]}")
        if tag == "input":
            self.lines.append(f"input id={a.get('id')} type={a.get('type')} "
                              f"oninput={a.get('oninput')}")
        if tag not in VOID:
            self.stack.append(tag)
        if tag in ("h1", "h2", "h3", "summary", "li") and self.text is None:
            self.text, self.text_tag = [], tag
        if tag == "tr":
            self.row = []
        if tag in ("td", "th") and self.row is not None:
            self.row.append([])

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>"
                               f" at line {self.getpos()[0]}")
            return
        self.stack.pop()
        if tag == self.text_tag:
            self.lines.append(f"{tag}: " + " ".join("".join(self.text).split()))
            self.text, self.text_tag = None, None
        if tag == "tr" and self.row is not None:
            self.lines.append("row: " + " | ".join(" ".join("".join(c).split()) for c in self.row))
            self.row = None

    def handle_data(self, data):
        if self.text is not None:
            self.text.append(data)
        if self.row:
            self.row[-1].append(data)


class Shown(HTMLParser):
    """The elements of class "filterable" without display: none, and the count."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.open = []  # [tag, shown, text parts] of filterable elements being read
        self.depth = []  # tags, to know which end tag closes a filterable element
        self.lines = []
        self.count = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in VOID:
            return
        filterable = "filterable" in (a.get("class") or "").split()
        hidden = "none" in (a.get("style") or "")
        self.depth.append((tag, filterable, a.get("id") == "tc-filter-count"))
        if filterable:
            self.open.append([tag, not hidden, []])
        if a.get("id") == "tc-filter-count":
            self.count = ""

    def handle_endtag(self, tag):
        if tag in VOID or not self.depth:
            return
        _, filterable, _ = self.depth.pop()
        if filterable:
            t, shown, text = self.open.pop()
            if shown:
                words = " ".join("".join(text).split())
                self.lines.append(f"shown: {t}: {words[:60]}")

    def handle_data(self, data):
        for entry in self.open:
            entry[2].append(data)
        if self.depth and self.depth[-1][2]:
            self.count += data


def main():
    if sys.argv[1] == "--shown":
        s = Shown()
        s.feed(open(sys.argv[2], encoding="utf-8").read())
        for line in s.lines:
            print(line)
        print(f"count: {s.count}")
        return 0
    page = open(sys.argv[1], encoding="utf-8").read()
    c = Checker()
    c.feed(page)
    c.close()
    if c.stack:
        c.errors.append("not closed: " + " ".join(c.stack))
    if not page.startswith("<!DOCTYPE html>"):
        c.errors.append("no <!DOCTYPE html>")
    for line in c.lines:
        print(line)
    for e in c.errors:
        print("ERROR:", e)
    print("well-formed" if not c.errors else f"{len(c.errors)} errors")
    return 1 if c.errors else 0


if __name__ == "__main__":
    sys.exit(main())
