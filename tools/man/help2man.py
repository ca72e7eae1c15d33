#!/usr/bin/env python3
"""A man page (roff, section 1) from a program's --help and --version.

    help2man.py --program EXE --name "one line" --output PAGE.1
                [--see-also 'clreduce-bench(1)' ...] [--datadir DIR]

Run at build time by doc/meson.build (help2man itself is not required).
The help text is read as clreduce's commands write it:

  - the first block: 'Usage: ...' lines (SYNOPSIS), then the description;
  - a block of indented '-x, --opt=VALUE   text' lines under a heading
    ending with ':' (one .SS of OPTIONS; each option a .TP); the text
    starts at one column (found from the option lines); lines indented
    past it (lists, tables) stay as written (.nf);
  - free paragraphs: 'Example:' (EXAMPLES), 'Exit status:' (EXIT STATUS,
    one .TP per code), 'Options ...' (the end of OPTIONS), others
    (DESCRIPTION).

ENVIRONMENT is the library's (src/lib: getenv), the same for every
program; tests/test_man.py checks that it names every CLREDUCE_ variable
the sources read.  The date of .TH is $SOURCE_DATE_EPOCH's when set, else
none, so that the page depends on the program alone.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import time

# ---- roff escaping


def esc(text):
    """Plain text for a roff text line or a macro's quoted argument:
    backslashes, hyphen-minus, and anything past ASCII escaped."""
    out = []
    for c in text:
        if c == "\\":
            out.append("\\e")
        elif c == "-":
            out.append("\\-")
        elif c == '"':
            out.append("\\(dq")
        elif ord(c) > 126 or (ord(c) < 32 and c != "\t"):
            out.append("\\[u%04X]" % ord(c))
        else:
            out.append(c)
    return "".join(out)


def line(text):
    """One text line: a leading '.' or "'" would be read as a request."""
    if text[:1] in (".", "'"):
        return "\\&" + text
    return text


def quoted(text):
    return '"' + esc(text) + '"'


# Options (bold) and upper-case placeholders (italic) in a synopsis or an
# option's tag; everything else plain.
TOKEN = re.compile(r"(?P<opt>(?<![\w-])--?[A-Za-z0-9][\w-]*)"
                   r"|(?P<var>(?<![\w-])[A-Z][A-Z0-9_]*(?![\w-]))")


def styled(text, bold_words=()):
    out, pos = [], 0
    words = set(bold_words)
    for m in TOKEN.finditer(text):
        out.append(esc(text[pos:m.start()]))
        font = "B" if m.group("opt") else "I"
        out.append("\\f%s%s\\fR" % (font, esc(m.group(0))))
        pos = m.end()
    out.append(esc(text[pos:]))
    s = "".join(out)
    for w in words:  # the program names of a synopsis
        e = esc(w)
        s = re.sub(r"(?<![\w\\-])%s(?![\w\\-])" % re.escape(e),
                   lambda _m: "\\fB%s\\fR" % e, s)
    return s


# ---- reading the help text


def blocks(text):
    """Paragraphs: runs of non-blank lines."""
    cur = []
    for ln in text.expandtabs().splitlines():
        if ln.strip():
            cur.append(ln.rstrip())
        elif cur:
            yield cur
            cur = []
    if cur:
        yield cur


def indent(ln):
    return len(ln) - len(ln.lstrip())


OPTION_LINE = re.compile(r"^(\s+)(-\S*(?:, -\S*)*)( {2,})\S")


def text_column(help_blocks):
    """The column where the options' text starts: the commonest one."""
    cols = collections.Counter()
    for b in help_blocks:
        for ln in b:
            m = OPTION_LINE.match(ln)
            if m:
                cols[m.end() - 1] += 1
    return cols.most_common(1)[0][0] if cols else 0


# A line of an option's text that opens a clause of its own
# ('scan: kogge-stone, ...', '(default ...)'): kept on a line of its own.
CLAUSE = re.compile(r"^([a-z][\w-]*: |\(default)")


def option_entries(lines, col):
    """[(tag, [text lines as written, indent relative to col])]."""
    entries = []
    for ln in lines:
        ind = indent(ln)
        s = ln.strip()
        if ind < col and s.startswith("-"):
            if len(ln) > col and ln[col - 1] == " " and ln[col] != " ":
                entries.append([ln[:col].strip(), [(0, ln[col:].strip())]])
            else:
                entries.append([s, []])
        elif entries:
            entries[-1][1].append((max(0, ind - col), s))
        else:  # text before any option: a line of the heading's text
            entries.append([None, [(0, s)]])
    return entries


def body(texts):
    """An option's text: flowing lines filled, deeper ones as written."""
    out, nofill = [], False
    for rel, s in texts:
        if rel > 0:
            if not nofill:
                out.append(".nf")
                nofill = True
            out.append(line(esc(" " * rel + s)))
            continue
        if nofill:
            out.append(".fi")
            nofill = False
        elif out and CLAUSE.match(s):
            out.append(".br")
        out.append(line(esc(s)))
    if nofill:
        out.append(".fi")
    return out


def paragraph(lines):
    return [".PP"] + [line(esc(ln.strip())) for ln in lines]


def exit_status(text):
    """'0 success, 1 ..., 2 usage error (or ..., or ...), 3 ...': one
    (code, meaning) per code, cut at the commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    i = 0
    while i < len(text):
        c = text[i]
        depth += (c == "(") - (c == ")")
        if (c == "," and depth == 0
                and re.match(r",\s+\d+\s", text[i:])):
            parts.append(cur)
            cur = ""
            i += 1
            continue
        cur += c
        i += 1
    parts.append(cur)
    codes = []
    for p in parts:
        m = re.match(r"^\s*(\d+)\s+(.*?)\.?\s*$", p, re.S)
        if not m:
            return None
        codes.append((m.group(1), " ".join(m.group(2).split())))
    return codes


# 'Example: ...', 'Exit status, the same on every rank: 0 success, ...'
LABEL = re.compile(r"^(Examples?|Exit status)\b([^:]*):\s*(.*)$")


def segments(bl):
    """(block number, lines at column 0, the indented lines after them):
    a heading may follow the options of the one before without a blank
    line."""
    for n, b in enumerate(bl):
        i = 0
        while i < len(b):
            head, rest = [], []
            while i < len(b) and indent(b[i]) == 0:
                head.append(b[i])
                i += 1
            while i < len(b) and indent(b[i]) > 0:
                rest.append(b[i])
                i += 1
            yield n, head, rest


def parse(help_text):
    bl = list(blocks(help_text))
    col = text_column(bl)
    page = {"usage": [], "description": [], "options": [], "options_tail": [],
            "examples": [], "exit": []}
    seen_options = False
    for n, head, b in segments(bl):
        if b:  # indented lines: a heading and its options
            seen_options = True
            title = " ".join(h.strip() for h in head).rstrip(":")
            page["options"].append((title, option_entries(b, col)))
            continue
        # a free paragraph, cut at its labelled lines
        groups = []
        for h in head:
            m = LABEL.match(h)
            if m or not groups:
                groups.append([h])
            else:
                groups[-1].append(h)
        for g in groups:
            m = LABEL.match(g[0])
            if n == 0 and re.match(r"^usage:", g[0], re.I):
                page["usage"] = [re.sub(r"^usage:\s*", "", g[0], flags=re.I)]
                # further 'Usage:' lines, then the description
                rest = g[1:]
                while rest and re.match(r"^(usage|\s*or):", rest[0], re.I):
                    page["usage"].append(
                        re.sub(r"^\s*(usage|or):\s*", "", rest.pop(0),
                               flags=re.I))
                if rest:
                    page["description"].append(rest)
            elif m and m.group(1).startswith("Example"):
                page["examples"] += ([m.group(3)] if m.group(3) else []) + \
                    [x.strip() for x in g[1:]]
            elif m:
                page["exit"].append((m.group(2).strip(" ,"), " ".join(
                    [m.group(3)] + [x.strip() for x in g[1:]])))
            elif seen_options and g[0].startswith("Options "):
                page["options_tail"].append(g)
            else:
                page["description"].append(g)
    return page


# ---- the page

ENVIRONMENT = [
    ("CLREDUCE_KERNEL_DIR",
     "The directory of the OpenCL kernel sources (*.cl).  Default: the "
     "kernels built into the library, if it was built with them "
     "(-Dembed_kernels), else those installed with it ({datadir}/clreduce/cl, "
     "found also when the installed prefix has moved)."),
    ("CLREDUCE_CACHE_DIR",
     "The directory of the on-disk cache of built kernel binaries, and of "
     "the tuning files that clreduce-bench --autotune writes "
     "(tuning/DEVICE.txt in it).  Set and empty: no cache.  Default: "
     "$XDG_CACHE_HOME/clreduce, else $HOME/.cache/clreduce."),
    ("CLREDUCE_CACHE_MAX_BYTES",
     "The cache's size cap: a byte count, with an optional K, M or G after "
     "it (powers of 1024); 0 for no cap.  Past the cap the least recently "
     "used binaries are removed.  Default: 256M.  A value that is no such "
     "count is ignored (and said so in the library's log, -v)."),
    ("CLREDUCE_TUNING_DIR",
     "The directory of the shipped per-device tuning files (*.txt; the most "
     "specific match of the device's name wins).  Default: the files built "
     "into the library, if any, else those installed with it "
     "({datadir}/clreduce/tuning).  The user's file in the cache directory "
     "overrides the shipped one."),
]


def render(prog, name, version, help_text, see_also, datadir, date):
    p = parse(help_text)
    out = [
        '.\\" Generated by tools/man/help2man.py from %s --help; '
        'do not edit.' % prog,
        ".TH %s 1 %s %s %s" % (quoted(prog.upper()), quoted(date),
                               quoted(version), quoted("User Commands")),
        ".nh",  # no hyphenation: option names and paths stay whole
        ".ad l",  # nor stretched spaces
        ".SH NAME",
        line("%s \\- %s" % (esc(prog), esc(name))),
        ".SH SYNOPSIS",
    ]
    for i, u in enumerate(p["usage"] or ["%s [OPTION]..." % prog]):
        if i:
            out.append(".br")
        out.append(line(styled(u, bold_words=[prog, "mpirun"])))
    out.append(".SH DESCRIPTION")
    for g in p["description"]:
        out += paragraph(g)
    out.append(".SH OPTIONS")
    for title, entries in p["options"]:
        if title and title.lower() != "options":
            out.append(".SS %s" % quoted(title))
        listed = []  # options named without a text: one paragraph
        for i, (tag, texts) in enumerate(entries):
            if tag is not None and not texts:
                listed.append(line(styled(tag)))
                if i + 1 < len(entries) and entries[i + 1][0] is not None \
                        and not entries[i + 1][1]:
                    continue
                out += [".PP"] + listed
                listed = []
            elif tag is None:
                out += [".PP"] + body(texts)
            else:
                out += [".TP", line(styled(tag))] + body(texts)
    for g in p["options_tail"]:
        out += paragraph(g)
    out.append(".SH \"EXIT STATUS\"")
    for qualifier, text in p["exit"]:
        if qualifier:  # 'the same on every rank'
            out += [".PP", line(esc(qualifier[0].upper() + qualifier[1:] +
                                    ":"))]
        codes = exit_status(text)
        if codes:
            for code, meaning in codes:
                out += [".TP", ".B %s" % code, line(esc(meaning))]
        else:
            out += [".PP", line(esc(text))]
    out.append(".SH ENVIRONMENT")
    for var, text in ENVIRONMENT:
        out += [".TP", ".B %s" % var,
                line(esc(text.format(datadir=datadir)))]
    if p["examples"]:
        out += [".SH EXAMPLES", ".PP", ".nf"]
        out += [line(esc(x)) for x in p["examples"]]
        out.append(".fi")
    if see_also:
        out.append(".SH \"SEE ALSO\"")
        for i, ref in enumerate(see_also):
            m = re.match(r"^(.*)\((\w+)\)$", ref)
            sep = "," if i + 1 < len(see_also) else ""
            if m:
                out.append(".BR %s (%s)%s" %
                           (esc(m.group(1)), m.group(2), sep))
            else:
                out.append(line(esc(ref) + sep))
    out += [".SH VERSION", line(esc(version))]
    return "\n".join(out) + "\n"


def capture(exe, arg):
    r = subprocess.run([exe, arg], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    if r.returncode != 0 or not r.stdout.strip():
        sys.exit("help2man.py: '%s %s' failed (exit %d): %s" %
                 (exe, arg, r.returncode,
                  r.stderr.decode("utf-8", "replace").strip()))
    return r.stdout.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", required=True, help="the built program")
    ap.add_argument("--name", required=True,
                    help="NAME's one line (what the program does)")
    ap.add_argument("--output", required=True)
    ap.add_argument("--see-also", action="append", default=[])
    ap.add_argument("--datadir", default="/usr/local/share")
    a = ap.parse_args()
    prog = os.path.basename(a.program)
    help_text = capture(a.program, "--help")
    version = capture(a.program, "--version").splitlines()[0].strip()
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    date = time.strftime("%Y-%m-%d", time.gmtime(int(epoch))) if epoch else ""
    page = render(prog, a.name, version, help_text,
                  a.see_also, a.datadir, date)
    tmp = a.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(tmp, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
