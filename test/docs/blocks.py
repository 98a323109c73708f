"""blocks.py -- the fenced code blocks of the documentation, and how each runs.

Every fenced block of README.md and doc/*.md carries, on the line right
before its opening fence, a marker saying how the docs suite runs it:

    <!-- example: KIND [OPTION ...] -->
    <!-- example: none — REASON -->

A block without a marker, with an unknown kind, or marked none without a
reason is reported as a failure: a new example cannot slip in untested.

This module only reads: it finds the blocks, parses their markers, splits
SQL into statements and reads the results the text promises in comments.
examples.py runs them.
"""
import os
import re

KINDS = {
    "sqlite",           # sqlite3 CLI in a scratch folder, ./sqlite/anarchon loadable
    "psql",             # psql on a fresh database with the extension
    "psql-transcript",  # statements followed by the ERROR/DETAIL/HINT psql prints
    "pgcron",           # psql in the database where pg_cron lives
    "python-sqlite",    # Debian's python3 in a scratch folder
    "python-pg",        # Debian's python3 with psycopg2, database "app"
    "c",                # compiled against the headers (see examples.py)
    "excerpt",          # lines of a file in the repository, in order
    "make",             # read by GNU make
    "none",
}

MARKER = re.compile(r"^\s*<!--\s*example:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")


class Block:
    def __init__(self, path, line, lang, text, marker):
        self.path = path          # the document, relative to the repository
        self.line = line          # line number of the opening fence
        self.lang = lang          # the fence's info string
        self.text = text          # the content, fence indentation removed
        self.marker = marker      # the marker's text after "example:", or None
        self.kind = None
        self.options = {}         # OPTION=VALUE words of the marker
        self.args = []            # other words of the marker
        self.reason = ""          # for kind none
        self.error = None         # what is wrong with the marker
        self._parse_marker()

    @property
    def where(self):
        return "%s:%d" % (self.path, self.line)

    def _parse_marker(self):
        if self.marker is None:
            self.error = ("no <!-- example: KIND --> marker on the line before the fence: "
                          "say how the block runs (test/docs/examples.py lists the kinds)")
            return
        words = self.marker.split()
        self.kind = words[0] if words else ""
        if self.kind not in KINDS:
            self.error = "unknown kind %r in the marker (kinds: %s)" % (
                self.kind, ", ".join(sorted(KINDS)))
            return
        if self.kind == "none":
            self.reason = re.sub(r"^none\s*[—–-]*\s*", "", self.marker).strip()
            if not self.reason:
                self.error = "marked none without a reason (<!-- example: none — REASON -->)"
            return
        for w in words[1:]:
            if "=" in w:
                k, v = w.split("=", 1)
                self.options[k] = v
            else:
                self.args.append(w)


def read_blocks(root, path):
    """The fenced blocks of one document, in order."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
        start = i
        body = []
        i += 1
        while i < len(lines):
            c = FENCE.match(lines[i])
            if c and c.group(2).startswith(fence[0] * len(fence)) and not c.group(3).strip():
                break
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i].lstrip())
            i += 1
        prev = lines[start - 1] if start > 0 else ""
        mk = MARKER.match(prev)
        blocks.append(Block(path, start + 1, info, "\n".join(body) + "\n",
                            mk.group(1) if mk else None))
        i += 1
    return blocks


# ---------------------------------------------------------------- SQL

def split_sql(text):
    """Statements of a SQL block, each as (sql, comments after it).

    A statement ends at a ';' outside quotes, dollar quotes and comments; a
    psql backslash command or a sqlite3 dot command is one line.  The
    comments are those on the statement's last line and on the comment
    lines that follow it, up to the next statement: where a block states
    what a statement answers.
    """
    stmts = []
    cur = []            # characters of the statement being read
    comments = []       # comments seen since the last statement ended
    i, n = 0, len(text)
    at_line_start = True

    def flush():
        sql = "".join(cur).strip()
        if sql:
            stmts.append([sql, []])
        cur.clear()

    while i < n:
        ch = text[i]
        if at_line_start and not "".join(cur).strip():
            j = i
            while j < n and text[j] in " \t":
                j += 1
            if j < n and text[j] in "\\.":
                end = text.find("\n", j)
                end = n if end < 0 else end
                cur.clear()
                cur.append(text[j:end])
                flush()
                i = end
                continue
        at_line_start = False
        if ch == "\n":
            at_line_start = True
            cur.append(ch)
            i += 1
        elif text.startswith("--", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            comment = text[i + 2:end].strip()
            if stmts and not "".join(cur).strip():
                stmts[-1][1].append(comment)
            else:
                comments.append(comment)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            cur.append(text[i:end])
            i = end
        elif ch == "'":
            end = i + 1
            while end < n:
                if text[end] == "'" and text.startswith("''", end):
                    end += 2
                elif text[end] == "'":
                    break
                else:
                    end += 1
            cur.append(text[i:end + 1])
            i = end + 1
        elif ch == "$" and re.match(r"\$[A-Za-z_]*\$", text[i:]):
            tag = re.match(r"\$[A-Za-z_]*\$", text[i:]).group(0)
            end = text.find(tag, i + len(tag))
            end = n if end < 0 else end + len(tag)
            cur.append(text[i:end])
            i = end
        elif ch == ";":
            cur.append(ch)
            flush()
            i += 1
            # the rest of this line's comment belongs to the statement
        else:
            cur.append(ch)
            i += 1
    flush()
    return [(s, c) for s, c in stmts]


QUOTED = re.compile(r"^'([^']*)'")
LEGEND = re.compile(r"^([A-Za-z_]+)\s+->")
ALTERNATIVES = re.compile(r"^[A-Za-z_]+(\s*\|\s*[A-Za-z_]+)+$")


def expected(comments):
    """What a statement's comments say it answers, or None.

    - "-- 'won'": exactly that (a quoted value first in the comment);
    - "--  won  -> ..." lines: one of the values listed this way;
    - "-- none | running | ...": one of these values.
    Any other comment is prose and states nothing.
    """
    legend = []
    for c in comments:
        m = QUOTED.match(c)
        if m:
            return {"exact": m.group(1)}
        m = LEGEND.match(c)
        if m:
            legend.append(m.group(1))
            continue
        if ALTERNATIVES.match(c):
            return {"one_of": [w.strip() for w in c.split("|")]}
    if legend:
        return {"one_of": legend}
    return None
