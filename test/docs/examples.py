"""examples.py -- run every fenced block of README.md and doc/*.md as written.

    /usr/bin/python3 test/docs/examples.py [DOC ...]

Run by test/docs/run.sh, which starts the servers and sets the environment:
PGHOST/PGPORT/PGUSER of a PostgreSQL server with the extension installed and
pg_cron preloaded (cron.database_name = postgres), DOCS_TMP (a scratch
folder), DOCS_NATS (host:port of a NATS server, when a block needs one).
Prints one "ok - " or "not ok - " line per block.

How each kind runs (the marker is described in blocks.py):

  sqlite          sqlite3 on app.db in a fresh scratch folder in which
                  ./sqlite/anarchon is the built extension
  psql            psql -X -At -v ON_ERROR_STOP=1 on a fresh database with
                  CREATE EXTENSION anarchon already done (unless the block
                  does it).  :slot and :token are a slot of this minute (ms)
                  and the token that won it, for the job the block passes
                  with :slot
  psql-transcript statements, each followed by what psql prints for it
                  (ERROR:, DETAIL:, HINT: lines): the same lines must come out
  pgcron          as psql, in database postgres, with pg_cron and anarchon
                  created afresh (unless the block creates them); pg_cron is
                  dropped afterwards, so no scheduled job stays behind
  python-sqlite   /usr/bin/python3 in a fresh scratch folder, after prelude.py
  python-pg       /usr/bin/python3 after prelude.py, with database app
                  created afresh.  After a Python block that claims, its
                  database must hold a run, and every run must have
                  succeeded: the example won its claim and took the won
                  path to the finish
  c               compiled with -Wall -Wextra -Werror against core/ and
                  stores/ and net/ after prelude.h; a line that is only "..." is code
                  left to the reader.  Options: "body" wraps the block in a
                  function of an_store *st; "same-as=TYPE" compiles the block
                  under another name and checks it member by member against
                  the header's TYPE
  excerpt FILE    each line of the block (comments and blank lines aside) is
                  a line of FILE, in the same order; "..." skips
  make            read by GNU make in the repository: it must parse
  none — REASON   not run

Options of the SQL and Python kinds: "nats=HOST:PORT" says the block's
HOST:PORT stands for a NATS server; it is replaced by the suite's own
(127.0.0.1) before the block runs.  Nothing else is substituted.  A block
may name any host in CREATE SERVER (only the URL is checked there), but one
that makes its session use a store outside 127.0.0.0/8 is refused, not run.

Where a SQL statement's comment states its answer ("-- 'won'", a list of
"--  won -> ..." lines, "-- none | running | ..."), its output is checked,
statement by statement, in order.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True          # nothing written beside the sources
import blocks  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.join(ROOT, "test", "docs")
TMP = os.environ.get("DOCS_TMP") or tempfile.mkdtemp(prefix="anarchon-docs.")
PYTHON = "/usr/bin/python3"
CC = os.environ.get("CC", "cc")
TIMEOUT = 60
MARK = "@@anarchon-doc-statement"

failed = 0
counter = 0


def ok(name):
    print("ok - " + name, flush=True)


def not_ok(name, detail=""):
    global failed
    failed += 1
    print("not ok - " + name, flush=True)
    for line in detail.rstrip("\n").split("\n")[-25:]:
        if line:
            print("#   " + line, flush=True)


class Failure(Exception):
    pass


def run(argv, cwd=None, stdin=None, env=None, timeout=TIMEOUT):
    """(status, stdout, stderr) of a command; never raises on failure."""
    try:
        p = subprocess.run(argv, cwd=cwd, input=stdin, env=env, capture_output=True,
                           text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return -1, "", "timed out after %d s" % timeout


def scratch(name):
    """A fresh folder in which ./sqlite/anarchon is the built extension."""
    global counter
    counter += 1
    d = os.path.join(TMP, "%02d-%s" % (counter, name))
    os.makedirs(d)
    os.symlink(os.path.join(ROOT, "sqlite"), os.path.join(d, "sqlite"))
    return d


def away_from_minute_end():
    """Examples claim this minute's slot twice; keep both in one minute."""
    s = time.time() % 60
    if s > 57:
        time.sleep(60.2 - s)


def substitute(b, text):
    """Replace the stand-in addresses a block's options name (nats=...).

    Then refuse to run a block that would connect outside 127.0.0.0/8."""
    for option, env in (("nats", "DOCS_NATS"),):
        if option in b.options:
            if not os.environ.get(env):
                raise Failure("the block needs a %s server and the suite started none" % option)
            text = text.replace(b.options[option], os.environ[env])
    host = host_used_outside_loopback(text)
    if host:
        raise Failure("the block would connect to %s: only 127.0.0.0/8 may be used here; give the"
                      " marker HOST:PORT of a server the suite starts (nats=...), or mark it none"
                      % host)
    return text


STORE_SET = re.compile(r"SET\s+(?:LOCAL\s+)?anarchon\.store\s*(?:=|TO)\s*'([^']*)'", re.I)
STORE_CONFIG = re.compile(r"anarchon_config\(\s*'store'\s*,\s*'([^']*)'")
SERVER_URL = re.compile(r"CREATE\s+SERVER\s+(\w+)\s[^;]*?\burl\s+'([^']*)'", re.I | re.S)


def host_used_outside_loopback(text):
    """The host of a store the block makes its session use, when not loopback.

    CREATE SERVER, ALTER ROLE/DATABASE ... SET only record a URL; a SET of
    anarchon.store (or anarchon_config('store', ...)) makes the next calls
    connect to it."""
    servers = {name.lower(): url for name, url in SERVER_URL.findall(text)}
    urls = STORE_CONFIG.findall(text)
    for m in STORE_SET.finditer(text):
        line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        if "alter" not in line.lower():
            urls.append(servers.get(m.group(1).lower(), m.group(1)))
    for url in urls:
        m = re.match(r"^[a-z]+://(?:[^@/]*@)?(\[[^]]*\]|[^:/?]*)", url)
        host = m.group(1).strip("[]") if m else ""
        if host and not (host.startswith("127.") or host in ("localhost", "::1")):
            return host
    return None


# ---------------------------------------------------------------- SQL

def statements(b):
    stmts = blocks.split_sql(substitute(b, b.text))
    if not stmts:
        raise Failure("no statement in the block")
    return stmts


def check_answers(stmts, out):
    """Compare each statement's output with what its comments promise."""
    parts = {}
    current = None
    for line in out.split("\n"):
        if line.startswith(MARK):
            current = int(line.split()[1])
            parts[current] = []
        elif current is not None and line != "":
            parts[current].append(line)
    checked = 0
    for k, (sql, comments) in enumerate(stmts):
        want = blocks.expected(comments)
        if want is None:
            continue
        got = parts.get(k, [])
        first = sql.split("\n")[0]
        if "exact" in want and got != [want["exact"]]:
            raise Failure("%s\n  answered %r, the text says %r" % (first, got, want["exact"]))
        if "one_of" in want and (len(got) != 1 or got[0] not in want["one_of"]):
            raise Failure("%s\n  answered %r, the text says one of %s" % (first, got, want["one_of"]))
        checked += 1
    return "%d %s as the text says" % (checked, "answer" if checked == 1 else "answers") if checked else ""


def script(stmts, echo):
    return "".join("%s %s %d\n%s\n" % (echo, MARK, k, sql) for k, (sql, _) in enumerate(stmts))


def run_sqlite(b):
    stmts = statements(b)
    d = scratch("sqlite")
    away_from_minute_end()
    rc, out, err = run(["sqlite3", "-bail", "app.db"], cwd=d, stdin=script(stmts, ".print"))
    if rc != 0 or err:
        raise Failure(err or out)
    return check_answers(stmts, out)


def psql(db, text, extra=(), stop=True):
    argv = ["psql", "-X", "-At", "-q", "-d", db]
    if stop:
        argv += ["-v", "ON_ERROR_STOP=1"]
    return run(argv + list(extra), stdin=text)


def sql_ok(db, text):
    rc, out, err = psql(db, text)
    if rc != 0:
        raise Failure("harness: %s\n%s" % (text.strip(), err))
    return out.strip()


def fresh_database(name, extension=True):
    """A new database; with the extension, a copy of one where it was created."""
    template = "doc_template_anarchon" if extension else "template1"
    if extension and not fresh_database.template_ready:
        sql_ok("postgres", "CREATE DATABASE %s;\n" % template)
        sql_ok(template, "CREATE EXTENSION anarchon;\n")
        fresh_database.template_ready = True
    sql_ok("postgres", "DROP DATABASE IF EXISTS %s;\nCREATE DATABASE %s TEMPLATE %s;\n"
           % (name, name, template))


fresh_database.template_ready = False


def creates(ext, text):
    """Does the block create the extension itself?"""
    return re.search(r"CREATE\s+EXTENSION\s+(IF\s+NOT\s+EXISTS\s+)?%s\b" % ext, text, re.I) is not None


def claimed_vars(db, text):
    """psql variables :slot and :token: this minute's slot and its winner."""
    if ":slot" not in text and ":token" not in text and ":'token'" not in text:
        return []
    m = re.search(r"anarchon_\w+\(\s*'([^']+)'\s*,\s*:slot", text)
    if not m:
        raise Failure("the block uses :slot or :token but passes no job with :slot")
    slot = int(time.time()) // 60 * 60000
    token = sql_ok(db, "SELECT anarchon_token();")
    won = sql_ok(db, "SELECT anarchon_claim('%s', %d, '%s');" % (m.group(1), slot, token))
    if won != "won":
        raise Failure("harness: the claim that sets :slot and :token answered %s" % won)
    return ["-v", "slot=%d" % slot, "-v", "token='%s'" % token]


def run_psql_in(b, db):
    stmts = statements(b)
    away_from_minute_end()
    extra = claimed_vars(db, b.text)
    rc, out, err = psql(db, script(stmts, "\\echo"), extra)
    if rc != 0:
        raise Failure(err or out)
    return check_answers(stmts, out)


def run_psql(b):
    global counter
    counter += 1
    db = "doc_%02d" % counter
    fresh_database(db, extension=not creates("anarchon", b.text))
    return run_psql_in(b, db)


def run_pgcron(b):
    sql_ok("postgres", "DROP EXTENSION IF EXISTS pg_cron;\nDROP EXTENSION IF EXISTS anarchon CASCADE;\n")
    for ext in ("anarchon", "pg_cron"):
        if not creates(ext, b.text):
            sql_ok("postgres", "CREATE EXTENSION %s;\n" % ext)
    try:
        return run_psql_in(b, "postgres")
    finally:
        sql_ok("postgres", "DROP EXTENSION IF EXISTS pg_cron;\n")


SEVERITY = re.compile(r"^(ERROR|DETAIL|HINT|WARNING|NOTICE):")


def run_psql_transcript(b):
    """Input lines, then the lines psql prints for them; compare the latter."""
    text = substitute(b, b.text)
    lines = text.rstrip("\n").split("\n")
    want = [l.strip() for l in lines if SEVERITY.match(l.strip())]
    sql = "\n".join(l for l in lines if not SEVERITY.match(l.strip())) + "\n"
    if not want:
        raise Failure("a transcript shows what psql prints (ERROR:, DETAIL:, HINT: lines); this one shows none")
    global counter
    counter += 1
    db = "doc_%02d" % counter
    fresh_database(db)
    rc, out, err = psql(db, sql, stop=False)
    got = []
    for l in err.split("\n"):
        l = re.sub(r"^psql:[^:]*:\d+:\s*", "", l).strip()
        if SEVERITY.match(l):
            got.append(l)
    if got != want:
        raise Failure("psql printed:\n  " + "\n  ".join(got) + "\nthe text shows:\n  " + "\n  ".join(want))
    return "psql printed the %d lines shown" % len(want)


# ---------------------------------------------------------------- Python

def run_python(b, cwd, env):
    with open(os.path.join(HERE, "prelude.py"), encoding="utf-8") as f:
        prelude = f.read()
    src = os.path.join(cwd, "example.py")
    with open(src, "w", encoding="utf-8") as f:
        f.write(prelude + "\n# ---- %s\n" % b.where + substitute(b, b.text))
    away_from_minute_end()
    rc, out, err = run([PYTHON, src], cwd=cwd, env=env)
    if rc != 0:
        raise Failure(err or out)


# What the database holds after a Python example: its runs, and how many ended well.
RUNS_SQL = "SELECT count(*) || ' ' || count(*) FILTER (WHERE state = 'succeeded') FROM %s;"


def runs_finished(counts):
    """The example won its claim and took the won path to its finish."""
    total, succeeded = counts.split()
    if total == "0" or total != succeeded:
        raise Failure("afterwards the database holds %s runs, %s of them succeeded: the example"
                      " should have won its claim and finished the run" % (total, succeeded))
    return "its claim won and its run succeeded"


def run_python_sqlite(b):
    d = scratch("python")
    run_python(b, d, dict(os.environ, DOCS_PRELUDE="sqlite"))
    if "anarchon_claim" not in b.text:
        return ""
    sql = (RUNS_SQL % "anarchon_runs").replace("count(*) FILTER (WHERE state = 'succeeded')",
                                              "sum(state = 'succeeded')")
    rc, out, err = run(["sqlite3", "app.db", sql], cwd=d)
    if "no such table" in err:
        raise Failure("afterwards app.db has no anarchon_runs: the example made no claim")
    if rc != 0:
        raise Failure(err)
    return runs_finished(out.strip().replace("|", " "))


def run_python_pg(b):
    fresh_database("app")
    run_python(b, scratch("python"), dict(os.environ, DOCS_PRELUDE="pg"))
    if "anarchon_claim" not in b.text:
        return ""
    return runs_finished(sql_ok("app", RUNS_SQL % "anarchon.runs"))


# ---------------------------------------------------------------- C

def c_flags():
    flags = ["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
             "-I" + os.path.join(ROOT, "build"), "-I" + os.path.join(ROOT, "core"),
             ] + ["-I" + os.path.join(ROOT, d) for d in ("stores", "net", "stores/redis", "stores/nats", "stores/amqp")]
    return flags


def elide(text):
    return "\n".join(l for l in text.split("\n") if l.strip() != "...") + "\n"


def same_as(name, text, here):
    """The block under another name, then checks against the header's type."""
    doc = "doc_" + name
    members = []
    body = text[text.find("{") + 1:text.rfind("}")]
    for line in re.sub(r"/\*.*?\*/", "", body, flags=re.S).split(";"):
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)", line) or re.search(r"(\w+)\s*$", line.strip())
        if m and line.strip():
            members.append(m.group(1))
    if not members:
        raise Failure("no member found in the block")
    out = ['#include "store.h"', re.sub(r"\b%s\b" % name, doc, text), here]
    out.append("_Static_assert(sizeof(%s) == sizeof(%s), \"%s: the size differs from the header's\");"
               % (doc, name, name))
    for m in members:
        out.append("_Static_assert(__builtin_offsetof(%s, %s) == __builtin_offsetof(%s, %s) && "
                   "__builtin_types_compatible_p(__typeof__(((%s *) 0)->%s), __typeof__(((%s *) 0)->%s)),"
                   " \"%s.%s differs from the header's\");" % (doc, m, name, m, doc, m, name, m, name, m))
    return "\n".join(out) + "\n", "%d members as in the header" % len(members)


def run_c(b):
    text = elide(b.text)
    checked = ""
    here = '#line %d "%s"\n' % (b.line + 1, b.path)
    if "same-as" in b.options:
        text, checked = same_as(b.options["same-as"], here + text, here)
    elif "body" in b.args:
        text = "int doc_example(an_store *st);\nint doc_example(an_store *st)\n{\n%s%s}\n" % (here, text)
    else:
        text = here + text
    d = scratch("c")
    src = os.path.join(d, "example.c")
    with open(src, "w", encoding="utf-8") as f:
        f.write('#include "%s"\n%s' % (os.path.join(HERE, "prelude.h"), text))
    rc, out, err = run([CC] + c_flags() + [src])
    if rc != 0:
        raise Failure(err or out)
    return checked


# ---------------------------------------------------------------- excerpt, make

def normal(line, comment):
    line = re.sub(r"\s+%s.*$" % re.escape(comment), "", line) if comment else line
    return " ".join(line.split())


def run_excerpt(b):
    if len(b.args) != 1:
        raise Failure("an excerpt names its file: <!-- example: excerpt FILE -->")
    path = os.path.join(ROOT, b.args[0])
    comment = "#" if path.endswith(".py") else "--" if path.endswith(".sql") else None
    with open(path, encoding="utf-8") as f:
        source = [normal(l, comment) for l in f.read().split("\n")]
    pos = 0
    n = 0
    for line in b.text.split("\n"):
        want = normal(line, comment)
        if not want or want == "...":
            continue
        try:
            pos = source.index(want, pos) + 1
        except ValueError:
            raise Failure("%r is not in %s (after line %d)" % (line.strip(), b.args[0], pos))
        n += 1
    return "%d lines found in %s, in order" % (n, b.args[0])


def run_make(b):
    d = scratch("make")
    mk = os.path.join(d, "example.mk")
    with open(mk, "w", encoding="utf-8") as f:
        f.write(b.text + "\ndoc-example-read: ; @:\n")
    rc, out, err = run(["make", "-s", "-C", ROOT, "-f", mk, "PKG_CONFIG=pkg-config", "doc-example-read"])
    if rc != 0:
        raise Failure(err or out)
    return ""


RUNNERS = {
    "sqlite": run_sqlite,
    "psql": run_psql,
    "psql-transcript": run_psql_transcript,
    "pgcron": run_pgcron,
    "python-sqlite": run_python_sqlite,
    "python-pg": run_python_pg,
    "c": run_c,
    "excerpt": run_excerpt,
    "make": run_make,
}


def documents(args):
    if args:
        return args
    docs = ["README.md"] + sorted("doc/" + f for f in os.listdir(os.path.join(ROOT, "doc"))
                                  if f.endswith(".md"))
    return docs


def main():
    os.chdir(ROOT)
    total = 0
    for doc in documents(sys.argv[1:]):
        for b in blocks.read_blocks(ROOT, doc):
            total += 1
            name = "%s (%s)" % (b.where, b.kind or "no marker")
            if b.error:
                not_ok(name, b.error)
                continue
            if b.kind == "none":
                ok("%s is not run: %s" % (b.where, b.reason))
                continue
            t0 = time.time()
            try:
                said = RUNNERS[b.kind](b)
            except Failure as e:
                not_ok(name + " runs as written", str(e))
                continue
            ok(name + " runs as written" + (": " + said if said else ""))
            if os.environ.get("DOCS_TIMES"):
                print("# %.2f s" % (time.time() - t0), flush=True)
    if total == 0:
        not_ok("no fenced block found")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
