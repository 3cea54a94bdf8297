#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""
Make the C of every layer from schema/records.py (what it makes: there).

  schema/gen.py [--root DIR] [--check]

--root   the tree to write into (default: this one)
--check  write nothing; list each file that differs from what would be
         made, exit 1 if one does

Each output is either a whole file or a region of a hand-written one,
between a "schema/gen.py: WHAT" line and a "schema/gen.py: end" line.
Bad schema: a message naming the entry, exit 2, nothing written.
"""
import argparse
import importlib.util
import os
import re
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
NOTICE = "made by schema/gen.py from schema/records.py: edit that, then `make schema`"
CTYPES = {"__u8": 1, "__u16": 2, "__u32": 4, "__u64": 8,
          "__s8": 1, "__s16": 2, "__s32": 4, "__s64": 8}
SHOWS = "UIXSHFC"
HDR_SIZE = 32


class SchemaError(Exception):
    pass


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def lengths(uapi):
    """The RDT_*_LEN constants an array's size may name."""
    return {m.group(1): int(m.group(2)) for m in
            re.finditer(r"^#define\s+(RDT_\w+)\s+(\d+)\b", uapi, re.M)}


class Field:
    def __init__(self, layout, t, consts, structs):
        if not isinstance(t, tuple) or len(t) not in (5, 6):
            raise SchemaError(f"layout {layout}: a field is not (ctype, member, show, key, note[, when]): {t!r}")
        self.ctype, self.member, self.show, self.key, self.note = t[:5]
        self.when = t[5] if len(t) == 6 else None
        where = f"layout {layout}, field {self.member}"
        if self.when is not None and not re.fullmatch(r"[$.\w\s|&!=<>()]+", str(self.when)):
            raise SchemaError(f"{where}: when {self.when!r} is not an expression of $.members, numbers and RDT_* names")
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", str(self.member)):
            raise SchemaError(f"{where}: not a C member name")
        self.namer = None
        m = re.fullmatch(r"E:(rdt_[a-z0-9_]+_name)", str(self.show))
        if m:
            self.show, self.namer = "E", m.group(1)
        elif self.show not in SHOWS or len(self.show) != 1:
            raise SchemaError(f"{where}: show {self.show!r} is none of {', '.join(SHOWS)}, E:rdt_..._name")
        self.sub = None
        m = re.fullmatch(r"(char|__u8)\[(\w+)\]", self.ctype)
        sm = re.fullmatch(r"struct (rdt_\w+)", self.ctype)
        if m:
            n = m.group(2)
            self.dim = n
            self.count = int(n) if n.isdigit() else consts.get(n)
            if not self.count:
                raise SchemaError(f"{where}: array size {n} is not a number or an RDT_* number of rdmatrace.h")
            self.base, self.size, self.align = m.group(1), self.count, 1
            if self.show not in ("SHC" if m.group(1) == "char" else "HC"):
                raise SchemaError(f"{where}: a char array is shown S, H or C, a __u8 array H or C, not {self.show}")
        elif sm:
            self.sub = structs.get(sm.group(1))
            if not self.sub:
                raise SchemaError(f"{where}: {self.ctype} is not in STRUCTS")
            self.dim, self.base = None, self.ctype
            self.size, self.align = self.sub.size, 8
            if self.show not in "FC":
                raise SchemaError(f"{where}: a struct is shown F (its fields in its place) or C, not {self.show}")
        elif self.ctype in CTYPES:
            self.dim = None
            self.base, self.size = self.ctype, CTYPES[self.ctype]
            self.align = self.size
            if self.show in "SF":
                raise SchemaError(f"{where}: {self.show} is for {'char arrays' if self.show == 'S' else 'structs'}")
        else:
            raise SchemaError(f"{where}: ctype {self.ctype!r} is not __u8..__u64, __s8..__s64 or char[N]")
        if self.show in "HF" or (self.show == "C" and self.sub):
            if self.key is not None:
                raise SchemaError(f"{where}: a hidden or F field has no key")
        elif not re.fullmatch(r"[a-z_][a-z0-9_]*", str(self.key)):
            raise SchemaError(f"{where}: key {self.key!r} is not a lower-case name")

    def decl(self):
        return f"{self.member}[{self.dim}]" if self.dim else self.member


class Layout:
    def __init__(self, name, spec, consts, structs=None, base=HDR_SIZE):
        self.name = name
        if not isinstance(spec, tuple) or len(spec) not in (2, 3):
            raise SchemaError(f"layout {name}: not (note, fields[, order])")
        self.note, fields = spec[:2]
        self.fields = [Field(name, f, consts, structs or {}) for f in fields]
        # C: shown by lib/fields.inc's code: the layout's struct is made
        # here, its showing is not
        self.coded = any(f.show == "C" for f in self.fields)
        if self.coded and any(f.show not in "HC" for f in self.fields):
            raise SchemaError(f"layout {name}: fields shown C (by code) and by the schema both: all C, or none")
        shown = [f.key if f.sub is None else "*" + f.member
                 for f in self.fields if f.show != "H"]
        order = list(spec[2]) if len(spec) == 3 else shown
        if sorted(order) != sorted(shown):
            raise SchemaError(f"layout {name}: order {order} is not its shown keys {shown} in some order")
        by_key = {(f.key if f.sub is None else "*" + f.member): f for f in self.fields}
        self.shown = [by_key[k] for k in order]
        off = base
        seen, keys = set(), set()
        for f in self.fields:
            if off % f.align:
                raise SchemaError(f"layout {name}: {f.member} at offset {off} is not {f.align}-aligned: add padding (a hidden field) before it")
            f.offset = off
            off += f.size
            if f.member in seen or f.member == "hdr":
                raise SchemaError(f"layout {name}: member {f.member} twice")
            seen.add(f.member)
            fkeys = [f.key] if f.key else [g.key for g in f.sub.fields if g.key] if f.sub else []
            for k in fkeys:
                if k in keys:
                    raise SchemaError(f"layout {name}: key {k} twice")
                keys.add(k)
        if off % 8:
            raise SchemaError(f"layout {name}: {off} bytes is not a multiple of 8: add padding (a hidden field) at its end")
        self.size = off

    def member_offset(self, member):
        for f in self.fields:
            if f.member == member:
                return f.offset
        return None


# A tracepoint field's type as TP_STRUCT__entry names it: the kernel's
# u8 .. u64, and int for __s32 (what the format files said before the
# schema made them; a reader that parses "field:int ret" must not change).
TP_CTYPES = {"__u8": "u8", "__u16": "u16", "__u32": "u32", "__u64": "u64",
             "__s8": "s8", "__s16": "s16", "__s32": "int", "__s64": "s64"}
# TP_printk's conversion of a show, by the field's size (bytes > 4: 64-bit)
TP_FORMATS = {"U": ("%u", "%llu"), "I": ("%d", "%lld"), "X": ("0x%x", "0x%llx")}


class TpField:
    """One field of a tracepoint: member, type, conversion and argument."""
    def __init__(self, member, ctype, fmt, arg):
        self.member, self.ctype, self.fmt, self.arg = member, ctype, fmt, arg


class Tracepoint:
    """A TRACEPOINTS entry: its fields with their types from the layout."""
    def __init__(self, name, spec, layouts):
        self.name = name
        where = f"tracepoint {name}"
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", str(name)):
            raise SchemaError(f"{where}: not a C name")
        if not isinstance(spec, tuple) or len(spec) not in (2, 3):
            raise SchemaError(f"{where}: not (layout, fields[, print])")
        lay, fields = spec[:2]
        if lay not in layouts:
            raise SchemaError(f"{where}: layout {lay} is not in LAYOUTS")
        by_member = {f.member: f for f in layouts[lay].fields}
        # dev is the header's, a parameter of every event (not in a body)
        self.fields = [TpField("dev", "u32", "%u", "__entry->dev")]
        for spec_f in fields:
            member, _, how = str(spec_f).partition(":")
            f = by_member.get(member)
            fw = f"{where}, field {member}"
            if f is None or member == "dev":
                raise SchemaError(f"{fw}: not a member of layout {lay}")
            if f.ctype not in TP_CTYPES:
                raise SchemaError(f"{fw}: {f.ctype} is not a number")
            if not how:
                # as the layout shows it; hidden or coded: the entry says
                if f.show == "E":
                    how = f.namer.replace("rdt_", "rdt_show_", 1)[:-len("_name")]
                elif f.show in TP_FORMATS:
                    how = f.show
                else:
                    raise SchemaError(f"{fw}: layout {lay} shows it {f.show}: say how (:U, :I, :X, :rdt_show_...)")
            wide = f.size > 4
            if how in TP_FORMATS:
                fmt, arg = TP_FORMATS[how][wide], f"__entry->{member}"
            elif re.fullmatch(r"rdt_show_[a-z0-9_]+", how):
                fmt, arg = "%s", f"{how}(__entry->{member})"
            else:
                raise SchemaError(f"{fw}: how {how!r} is none of U, I, X, rdt_show_...")
            self.fields.append(TpField(member, TP_CTYPES[f.ctype], fmt, arg))
        members = [f.member for f in self.fields]
        if len(set(members)) != len(members):
            raise SchemaError(f"{where}: a member twice in {members}")
        order = ["dev"] + list(spec[2]) if len(spec) == 3 else members
        if sorted(order) != sorted(members):
            raise SchemaError(f"{where}: print {order[1:]} is not its fields {members[1:]} in some order")
        by_tp = {f.member: f for f in self.fields}
        self.printed = [by_tp[m] for m in order]
        # RDT_TP_<NAME>_*: a class's rdt_ dropped (rdt_cq: RDT_TP_CQ_ENTRY)
        self.macro = "RDT_TP_" + re.sub(r"^rdt_", "", name).upper()


class Schema:
    def __init__(self, recs, uapi):
        consts = lengths(uapi)
        types = list(recs.TYPES)
        lay_specs = dict(recs.LAYOUTS)
        self.members = dict(getattr(recs, "MEMBERS", {}))
        self.union_size = recs.UNION_SIZE
        self.structs = {}
        for n, spec in getattr(recs, "STRUCTS", {}).items():
            self.structs[n] = Layout(n, spec, consts, self.structs, base=0)
        self.layouts = {n: Layout(n, s, consts, self.structs) for n, s in lay_specs.items()}
        for L in self.layouts.values():
            if L.size > self.union_size:
                raise SchemaError(f"layout {L.name}: {L.size} bytes is more than union rdt_record's {self.union_size} (UNION_SIZE: librdmatrace0's ABI)")
        self.items = types
        self.types = []
        nums, enums, names = {}, {}, {}
        for t in self.items:
            if isinstance(t, str):
                continue
            if not isinstance(t, tuple) or len(t) not in (5, 6):
                raise SchemaError(f"type {t!r}: not (number, ENUM, name, layout, older[, note])")
            num, enum, name, lay, older = t[:5]
            where = f"type {enum}"
            if not isinstance(num, int) or not 1 <= num <= 254:
                raise SchemaError(f"{where}: number {num!r} is not 1..254")
            if not re.fullmatch(r"[A-Z][A-Z0-9_]*", str(enum)):
                raise SchemaError(f"{where}: ENUM is not an upper-case name")
            if not re.fullmatch(r"[a-z][a-z0-9_]*", str(name)):
                raise SchemaError(f"{where}: name {name!r} is not a lower-case name")
            for seen, v, what in ((nums, num, "number"), (enums, enum, "ENUM"), (names, name, "name")):
                if v in seen:
                    raise SchemaError(f"{where}: {what} {v} is type {seen[v]}'s too")
                seen[v] = enum
            if self.types and num <= self.types[-1]["num"]:
                raise SchemaError(f"{where}: number {num} comes after {self.types[-1]['num']}: TYPES is in number order")
            if lay not in self.layouts:
                raise SchemaError(f"{where}: layout {lay} is not in LAYOUTS")
            L = self.layouts[lay]
            if older is not None and L.member_offset(older) is None:
                raise SchemaError(f"{where}: older {older} is not a member of layout {lay}")
            self.types.append(dict(num=num, enum=enum, name=name, layout=lay,
                                   older=older, note=t[5] if len(t) == 6 else None))
        self.tracepoints = [Tracepoint(n, spec, self.layouts)
                            for n, spec in getattr(recs, "TRACEPOINTS", {}).items()]

    def member(self, layout):
        return self.members.get(layout, layout)

    def shown(self):
        """(name, Layout) of each layout the schema also shows (not by code)."""
        return [(n, L) for n, L in self.layouts.items() if not L.coded]


def tabs_to(text, col):
    """Tabs after @text (starting at column 0) up to column @col."""
    width = len(text.expandtabs(8))
    n = max(1, (col - width + 7) // 8) if width < col else 1
    return text + "\t" * n


def comment_block(text, indent):
    one = f"{indent}/* {text} */"
    if len(one.expandtabs(8)) <= 80:
        return [one]
    width = 80 - len(indent.expandtabs(8)) - 3
    return ([f"{indent}/*"] + [f"{indent} * {line}" for line in textwrap.wrap(text, width)] +
            [f"{indent} */"])


def gen_enum(s):
    out = ["/*",
           " * Record types.  Numbers are stable across minor versions: new types are",
           " * only ever appended within a range.",
           " */",
           "enum rdt_type {"]
    types = iter(s.types)
    for it in s.items:
        if isinstance(it, str):
            out += [""] if it == "" else comment_block(it, "\t")
            continue
        t = next(types)
        line = tabs_to(f"\tRDT_EV_{t['enum']}", 32) + f"= {t['num']},"
        if t["note"]:
            c = tabs_to(line, 40) + f"/* {t['note']} */"
            if len(c.expandtabs(8)) <= 100:
                line = c
            else:
                out += comment_block(t["note"], "\t")
        out.append(line)
    # the blank line: checkpatch wants one after a declaration
    out += ["", tabs_to("\tRDT_EV_MAX", 32) + "= 255,", "};", ""]
    return out


def gen_struct(L, tag=None):
    """struct rdt_ev_<layout> (a header first), or struct <tag> (none)."""
    head = f"struct {tag or 'rdt_ev_' + L.name} {{"
    out = [head]
    if L.note:
        c = tabs_to(head, 40) + f"/* {L.note} */"
        out = [c] if len(c.expandtabs(8)) <= 100 else comment_block(L.note, "") + [head]
    if not tag:
        out.append("\tstruct rdt_hdr hdr;")
    for f in L.fields:
        line = f"\t{f.base}\t{f.decl()};" if not f.sub else f"\t{f.base} {f.decl()};"
        if f.note:
            c = tabs_to(line, 40) + f"/* {f.note} */"
            if len(c.expandtabs(8)) <= 100:
                line = c
            else:
                out += comment_block(f.note, "\t")
        out.append(line)
    out += ["};", ""]
    return out


def gen_union(s):
    out = ["union rdt_record {", tabs_to("\tstruct rdt_hdr", 40) + "hdr;"]
    for n in s.layouts:
        out.append(tabs_to(f"\tstruct rdt_ev_{n}", 40) + f"{s.member(n)};")
    out.append("\t/* Its size is the ABI: a new type fits in it (schema/records.py). */")
    out.append(tabs_to("\tuint8_t", 40) + f"raw[{s.union_size}];")
    out.append("};")
    return out


def inc_head(what):
    """The first lines of a lib/*.inc that gen.py makes."""
    return ["/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */",
            f"/* {NOTICE}. */", f"/* {what} */"]


def gen_types_inc(s):
    out = inc_head("The rows of rdt_types[] (decode.c): name, size, older size.")
    for t in s.types:
        st = f"struct rdt_ev_{t['layout']}"
        older = f"offsetof({st}, {t['older']})" if t["older"] else "0"
        out.append(f"[RDT_EV_{t['enum']}] = {{ \"{t['name']}\", sizeof({st}), {older} }},")
    return out


def show_lines(fields, prefix):
    """fields.inc's macro calls that show @fields of the record at @prefix."""
    out = []
    for f in fields:
        v = prefix + f.member
        if f.sub:
            out += show_lines(f.sub.shown, v + ".")
            continue
        if f.show == "E":
            line = f"E(\"{f.key}\", {f.namer}({v}));"
        else:
            line = f"{f.show}(\"{f.key}\", {v});"
        if f.when:
            out += [f"\tif ({f.when.replace('$.', prefix)})", f"\t\t{line}"]
        else:
            out.append(f"\t{line}")
    return out


def flat(fields, off=0):
    """(field, offset) of each shown field, a struct's in its place."""
    out = []
    for f in fields:
        if f.sub:
            out += flat(f.sub.shown, off + f.offset)
        else:
            out.append((f, off + f.offset))
    return out


def gen_fields_inc(s):
    out = inc_head("The cases of fields.inc's switch for the layouts the schema describes.")
    for n, L in s.shown():
        ts = [t for t in s.types if t["layout"] == n]
        if not ts:
            continue
        for t in ts:
            out.append(f"case RDT_EV_{t['enum']}:")
        out += show_lines(L.shown, f"r->{s.member(n)}.")
        out.append("\tbreak;")
    return out


def namers(fields):
    """The namers (rdt_..._name) of @fields, their structs' included."""
    out = []
    for f in fields:
        if f.sub:
            out += namers(f.sub.shown)
        elif f.show == "E":
            out.append(f.namer)
    return out


def gen_namers_inc(s):
    out = inc_head("Every namer of an E field: RDT_NAMER(fn), for tests/lib/names-plain.")
    seen = set()
    for n, L in s.shown():
        for fn in namers(L.shown):
            if fn not in seen:
                seen.add(fn)
                out.append(f"RDT_NAMER({fn})")
    return out


def layout_asserts(st, L):
    """The compiler's check of @st against the offsets and sizes gen.py computed."""
    out = [f"_Static_assert(sizeof({st}) == {L.size}, \"{st}: schema/gen.py's size\");"]
    for f in L.fields:
        out.append(f"_Static_assert(offsetof({st}, {f.member}) == {f.offset} && "
                   f"sizeof(((({st} *)0)->{f.member})) == {f.size}, "
                   f"\"{st}.{f.member}: schema/gen.py's place\");")
    return out


def gen_schema_fields(s):
    out = inc_head("The fields of the described layouts, as data (schema.c).")
    for n, L in s.structs.items():
        out += layout_asserts(f"struct {n}", L)
    for n, L in s.layouts.items():
        st = f"struct rdt_ev_{n}"
        out += layout_asserts(st, L)
        if L.coded:
            continue
        out.append(f"static const struct rdt_schema_field sf_{n}[] = {{")
        for f, off in flat(L.shown):
            out.append(f"\t{{ \"{f.key}\", '{f.show}', {off}, {f.size} }},")
        out.append("};")
    out.append(f"_Static_assert(sizeof(union rdt_record) == {s.union_size}, "
               "\"union rdt_record: a layout outgrew UNION_SIZE (librdmatrace0's ABI)\");")
    out.append("static const struct rdt_schema_layout schema_of[RDT_EV_MAX + 1] = {")
    for t in s.types:
        L = s.layouts[t["layout"]]
        if not L.coded:
            out.append(f"\t[RDT_EV_{t['enum']}] = {{ sf_{L.name}, "
                       f"sizeof(sf_{L.name}) / sizeof(sf_{L.name}[0]) }},")
    out.append("};")
    return out


def macro(name, first, rest, indent):
    """#define @name as @first and @rest (each on a line of its own, the
    rest under @indent), the backslashes at column 72 as the kernel's."""
    lines = [f"#define {name}", "\t" + first] + [indent + r for r in rest]
    out = [tabs_to(line, 72) + "\\" for line in lines[:-1]]
    return out + [lines[-1], ""]


def wrap_args(args, indent):
    """@args joined by ", " in lines that leave the backslash its column.
    A line break is white space as ", " is: TP_printk's arguments are
    stringified into the format file's print fmt, where each run of white
    space becomes one space, so the file does not change with the wrap."""
    lines, cur = [], ""
    for i, a in enumerate(args):
        piece = a + ("," if i < len(args) - 1 else ")")
        cand = f"{cur} {piece}" if cur else piece
        if cur and len((indent + cand).expandtabs(8)) > 70:
            lines.append(cur)
            cand = piece
        cur = cand
    return lines + [cur]


def gen_trace_fields(s):
    """kmod/rdmatrace_trace_fields.h: each tracepoint's entry, assign and
    printk as macros rdmatrace_trace.h's events expand.  Macros, not whole
    events: the trace header is read once per stage of trace_events.h,
    with TP_STRUCT__entry, __field, TP_fast_assign, TP_printk and __entry
    defined anew each time, and a macro's body is expanded where it is
    used, in the stage that uses it."""
    out = ["/* SPDX-License-Identifier: GPL-2.0 */",
           f"/* {NOTICE}. */",
           "/*",
           " * The fields of kmod/rdmatrace_trace.h's events, from schema/records.py's",
           " * TRACEPOINTS: RDT_TP_<NAME>_ENTRY, _ASSIGN and _PRINTK, one event's",
           " * TP_STRUCT__entry, TP_fast_assign and TP_printk each (_FMT: the",
           " * printk's format).",
           " */",
           "#ifndef _RDMATRACE_TRACE_FIELDS_H",
           "#define _RDMATRACE_TRACE_FIELDS_H",
           ""]
    for tp in s.tracepoints:
        n = len(tp.fields)
        ent = [f"__field({f.ctype}, {f.member})" + (")" if i == n - 1 else "")
               for i, f in enumerate(tp.fields)]
        out += macro(tp.macro + "_ENTRY", "TP_STRUCT__entry(" + ent[0], ent[1:], "\t\t\t ")
        asg = [f"__entry->{f.member} = {'ev->' if f.member != 'dev' else ''}{f.member};" +
               (")" if i == n - 1 else "") for i, f in enumerate(tp.fields)]
        out += macro(tp.macro + "_ASSIGN", "TP_fast_assign(" + asg[0], asg[1:], "\t\t       ")
        # the format alone on the macro's last line, where checkpatch
        # lets a string run past 100 columns (a string is not split)
        fmt = " ".join(f"{f.member}={f.fmt}" for f in tp.printed)
        out += [tabs_to(f"#define {tp.macro}_FMT", 72) + "\\", f'\t"{fmt}"', ""]
        args = wrap_args([f.arg for f in tp.printed], "\t\t  ")
        out += macro(tp.macro + "_PRINTK", f"TP_printk({tp.macro}_FMT,", args, "\t\t  ")
    out += ["#endif /* _RDMATRACE_TRACE_FIELDS_H */"]
    return out


def replace_region(text, what, lines, path, optional=False):
    """@text with its region @what holding @lines; None if it has none and
    that is @optional."""
    begin = f"/* schema/gen.py: {what} */"
    end = "/* schema/gen.py: end */"
    i = text.find(begin)
    if i < 0:
        if optional:
            return None
        raise SchemaError(f"{path}: no '{begin}' region")
    j = text.find(end, i)
    if j < 0:
        raise SchemaError(f"{path}: region '{what}' has no end line")
    body = "".join(line + "\n" for line in lines)
    return text[:i] + begin + "\n" + body + text[j:]


def outputs(s, root, uapi):
    res = {}
    up = "include/rdmatrace/wire.h"
    t = replace_region(uapi, "enum rdt_type", gen_enum(s), up)
    for n, L in s.structs.items():
        t = replace_region(t, f"struct {n}", gen_struct(L, n), up)
    # a new layout's struct goes to "other layouts" until it is given a
    # region in its section
    homeless = []
    for n, L in s.layouts.items():
        r = replace_region(t, f"struct rdt_ev_{n}", gen_struct(L), up, optional=True)
        if r is None:
            homeless += gen_struct(L)
        else:
            t = r
    res[up] = replace_region(t, "other layouts", homeless, up)
    lp = "lib/include/rdmatrace/rdmatrace.h"
    with open(os.path.join(root, lp)) as fh:
        lib = fh.read()
    res[lp] = replace_region(lib, "union rdt_record", gen_union(s), lp)
    res["lib/types.inc"] = "\n".join(gen_types_inc(s)) + "\n"
    res["lib/fields_schema.inc"] = "\n".join(gen_fields_inc(s)) + "\n"
    res["lib/namers.inc"] = "\n".join(gen_namers_inc(s)) + "\n"
    res["lib/schema_fields.inc"] = "\n".join(gen_schema_fields(s)) + "\n"
    res["kmod/rdmatrace_trace_fields.h"] = "\n".join(gen_trace_fields(s)) + "\n"
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(HERE))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    try:
        with open(os.path.join(a.root, "include/rdmatrace/wire.h")) as fh:
            uapi = fh.read()
        recs = load(os.path.join(a.root, "schema/records.py"), "rdt_records")
        s = Schema(recs, uapi)
        res = outputs(s, a.root, uapi)
    except (SchemaError, OSError, SyntaxError, AttributeError, TypeError, ValueError) as e:
        print(f"schema/gen.py: {e}", file=sys.stderr)
        return 2
    differ = []
    for rel, text in res.items():
        p = os.path.join(a.root, rel)
        try:
            with open(p) as fh:
                old = fh.read()
        except FileNotFoundError:
            old = None
        if old == text:
            continue
        differ.append(rel)
        if not a.check:
            with open(p + ".tmp", "w") as fh:
                fh.write(text)
            os.replace(p + ".tmp", p)
    if a.check:
        for rel in differ:
            print(f"schema/gen.py: {rel} is not what schema/records.py makes (run `make schema`)",
                  file=sys.stderr)
        return 1 if differ else 0
    for rel in differ:
        print(f"schema/gen.py: wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
