#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generates the MPI wrappers from adapters/mpi/functions.txt.

Usage: generate.py functions.txt out.cpp [fortran_out.cpp]

Every wrapper has the same shape:

    extern "C" int MPI_X(params) {
      prof::mpi::Call call(prof::mpi::kFn_MPI_X);
      using S = prof::mpi::sem::<Semantics>;
      S::pre(call, args...);
      const int rc = S::call(&PMPI_X, args...);
      S::post(call, rc, args...);
      return rc;
    }

Parameters declared as arrays ("T name[]", "int ranges[][3]") become the pointers C adjusts them to,
so the semantics receive every argument as an lvalue they may replace (an ignored status by an
internal one, a request array by a copy).

With fortran_out.cpp it also writes the Fortran wrappers (Open MPI; adapters/mpi/fortran.hpp): for
every row, mpi_x_ (and mpi_x__, mpi_x, MPI_X) for mpif.h and `use mpi`, and mpi_x_f08_ for
`use mpi_f08`. Each has the Fortran binding's parameters (every C parameter by reference, then
ierror, then a hidden length per CHARACTER argument), records the call like the C wrapper of the
same row, and forwards its arguments unchanged to the MPI library's definition of the symbol:

    template <int kF08> void fortran_MPI_X(fortran params) {
      real = next definition of mpi_x_ / mpi_x_f08_;
      prof::mpi::Call call(<row>);
      C views of the arguments the semantics read (handles by MPI_*_f2c, sentinels, statuses);
      S::pre(call, views...);
      rc = S::call(<calls real with the Fortran arguments>, views...);
      views that the call changed, again (statuses, new handles, 1-based indices);
      S::post(call, rc, views...);
    }

A row's optional third field says where the Fortran binding differs from that rule:
  fortran=a,b  the Fortran binding has only these C parameters (MPI_Init: none, so "fortran=");
  f08=c        mpi_f08 binds the C function itself (MPI_Wtime): no _f08 wrapper, the C one records.
Rows without semantics get no views: Call, then forward.
"""
import re
import sys

ROLES = {"fn": "Function", "p2p": "Point2Point", "barrier": "Barrier", "one2all": "CollOne2All",
         "all2one": "CollAll2One", "all2all": "CollAll2All", "other": "CollOther"}
GROUPS = {"cg", "coll", "env", "err", "ext", "io", "misc", "p2p", "rma", "spawn", "topo", "type"}


def split_params(text):
    text = text.strip()
    if text == "void" or not text:
        return []
    parts, depth, cur = [], 0, ""
    for c in text:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    parts.append(cur.strip())
    return parts


def param_decl(p, index):
    """(declaration as a pointer, argument name)."""
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*((?:\[\s*\w*\s*\])*)$", p)
    if not m:
        raise SystemExit("cannot parse parameter '%s'" % p)
    base, name, dims = m.group(1).strip(), m.group(2), re.findall(r"\[\s*(\w*)\s*\]", m.group(3))
    if not base:  # "MPI_Comm" alone would be a type without a name: never in mpi.h
        raise SystemExit("parameter without a name: '%s'" % p)
    if not dims:
        return "%s %s" % (base, name), name
    if len(dims) == 1:
        return "%s* %s" % (base, name), name
    # int ranges[][3] -> int (*ranges)[3]
    return "%s (*%s)%s" % (base, name, "".join("[%s]" % d for d in dims[1:])), name


# ---- Fortran wrappers (Open MPI) ----
HANDLE_F2C = {"MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Op": "Op", "MPI_Group": "Group", "MPI_Info": "Info",
              "MPI_Errhandler": "Errhandler", "MPI_Request": "Request", "MPI_Message": "Message"}
SCALARS = {"MPI_Aint", "MPI_Count", "MPI_Offset"}


def parse_fortran_note(src, lineno, note, names):
    """(the C parameters the Fortran binding has, whether mpi_f08 binds the C function itself)."""
    fortran, f08_c = list(names), False
    for token in note.split():
        key, eq, value = token.partition("=")
        if key == "fortran" and eq:
            fortran = [v for v in value.split(",") if v]
            unknown = [v for v in fortran if v not in names]
            if unknown:
                raise SystemExit("%s:%d: fortran= names no parameter %s" % (src, lineno, ", ".join(unknown)))
        elif key == "f08" and value == "c":
            f08_c = True
        else:
            raise SystemExit("%s:%d: unknown Fortran note '%s' (fortran=a,b or f08=c)" % (src, lineno, token))
    return fortran, f08_c


def classify(p):
    """(kind, core type, name) of one C parameter, for its Fortran form and its C view."""
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*((?:\[\s*\w*\s*\])*)$", p)
    base, name, dims = m.group(1), m.group(2), re.findall(r"\[", m.group(3))
    stars = base.count("*") + len(dims)
    core = " ".join(w for w in base.replace("*", " ").split() if w != "const")
    if core == "char":
        return "char", core, name
    if stars == 0:
        if core == "int":
            return "int", core, name
        if core in HANDLE_F2C:
            return "handle", core, name
        if core in SCALARS:
            return "scalar", core, name
        return "opaque", core, name
    if stars == 1:
        if core == "void":
            return "buffer", core, name
        if core == "int":
            return {"index": "index1", "array_of_indices": "indices1"}.get(name, "intptr"), core, name
        if core == "MPI_Status":
            return ("statuses" if name.startswith("array_of_statuses") else "status"), core, name
        if core == "MPI_Request":
            return ("requests" if dims else "handle_ptr"), core, name
        if core in HANDLE_F2C:
            return ("handle_array" if dims or "const" in base else "handle_ptr"), core, name
        if core in SCALARS:
            return "scalarptr", core, name
    return "opaque", core, name


def fortran_type(kind, core):
    if kind in ("int", "handle", "intptr", "index1", "indices1", "status", "statuses", "requests", "handle_ptr",
                "handle_array"):
        return "MPI_Fint*"
    if kind in ("scalar", "scalarptr"):
        return core + "*"
    if kind == "char":
        return "char*"
    return "void*"


def fortran_signature(row, note, raw, suffix):
    """The Fortran binding's parameters: [(declaration, name)], the CHARACTER ones, the result type."""
    sem, ret, name = row[2], row[3], row[4]
    params = {n: (k, c) for k, c, n in (classify(p) for p in raw)}
    fortran = note[0]
    sig = [("%s %s%s" % (fortran_type(*params[n]), n, suffix), n + suffix) for n in fortran]
    chars = [n for n in fortran if params[n][0] == "char"]
    if ret == "double":
        if sem != "None" or fortran:
            raise SystemExit("generate.py: %s: a Fortran function result is supported for Enter/Leave only" % name)
    else:
        sig.append(("MPI_Fint* ierror", "ierror"))
    sig += [("std::size_t %s_len" % n, "%s_len" % n) for n in chars]
    return sig, chars, "double" if ret == "double" else "void"


def fortran_wrapper(index, row, note, raw):
    sem, ret, name, decls = row[2:]
    fortran = note[0]
    params = [classify(p) for p in raw]
    by_name = {n: (k, c) for k, c, n in params}
    fparams = [(by_name[n][0], by_name[n][1], n) for n in fortran]
    lower = name.lower()
    sig, chars, fret = fortran_signature(row, note, raw, "_f")
    sig = [d for d, _ in sig]
    o = []
    o.append("// %s" % name)
    o.append("template <int kF08>")
    o.append("%s fortran_%s(%s) {" % (fret, name, ", ".join(sig) or "void"))
    o.append("  using Real = %s (*)(%s);" % (fret, ", ".join(s.rsplit(" ", 1)[0] for s in sig) or "void"))
    o.append("  static std::atomic<void*> real_fn{nullptr};")
    o.append('  const Real real = F::next<Real>(real_fn, kF08 ? "%s_f08_" : "%s_", kF08 ? "p%s_f08_" : "p%s_");'
             % (lower, lower, lower, lower))
    o.append("  prof::mpi::Call call(%d);" % index)
    fargs = ["%s_f" % n for k, c, n in fparams]
    if sem == "None":
        hidden = ["%s_len" % n for n in chars]
        if ret == "double":
            o.append("  return real();")
        else:
            o.append("  real(%s);" % ", ".join(fargs + ["ierror"] + hidden))
        o.append("}")
        return o
    # The C views, in the order of the C parameters; scalars first, as array sizes need them.
    count = next((n for k, c, n in params if k == "int" and n in ("count", "incount")), None)
    views, arrays, after = {}, {}, []
    type_slot = 0
    for (k, c, n), (decl, _) in zip(params, decls):
        f = n + "_f"
        if n not in fortran:
            views[n] = "  %s{};" % decl
            continue
        if k == "int" or k == "scalar":
            views[n] = "  %s = *%s;" % (decl, f)
        elif k == "handle":
            views[n] = "  %s = PMPI_%s_f2c(*%s);" % (decl, HANDLE_F2C[c], f)
        elif k == "buffer":
            views[n] = "  %s = F::buffer(%s);" % (decl, f)
        elif k in ("intptr", "scalarptr"):
            views[n] = "  %s = %s;" % (decl, f)
        elif k == "index1":
            views[n] = "  int %s_c = MPI_UNDEFINED;\n  %s = &%s_c;" % (n, decl, n)
            after.append("  %s_c = F::zero_based(*%s);" % (n, f))
        elif k == "status":
            views[n] = ("  MPI_Fint %s_own[F::kStatusSize] = {};\n  MPI_Fint* const %s_x = F::status_or(%s, %s_own);\n"
                        "  MPI_Status %s_c{};\n  %s = &%s_c;" % (n, n, f, n, n, decl, n))
            after.append("  PMPI_Status_f2c(%s_x, &%s_c);" % (n, n))
            fargs[fortran.index(n)] = n + "_x"
        elif k == "handle_ptr":
            views[n] = "  %s %s_c = PMPI_%s_f2c(*%s);\n  %s = &%s_c;" % (c, n, HANDLE_F2C[c], f, decl, n)
            after.append("  %s_c = PMPI_%s_f2c(*%s);" % (n, HANDLE_F2C[c], f))
        elif k in ("requests", "statuses", "indices1"):
            if count is None:
                raise SystemExit("generate.py: %s: the array %s has no count parameter" % (name, n))
            if k == "requests":
                arrays[n] = "  %s = F::requests(fr, %s, %s);" % (decl, f, count)
            elif k == "statuses":
                arrays[n] = ("  MPI_Fint* const %s_x = F::statuses_or(fr, %s, %s);\n  %s = F::c_statuses(fr, %s);"
                             % (n, f, count, decl, count))
                after.append("  F::to_c(%s_x, %s, %s);" % (n, n, count))
                fargs[fortran.index(n)] = n + "_x"
            else:
                arrays[n] = "  %s = F::c_indices(fr, %s);" % (decl, count)
                after.append("  F::zero_based(%s, %s, %s);" % (f, n, count))
        elif k == "handle_array" and c == "MPI_Datatype" and "comm" in by_name:
            arrays[n] = "  %s = F::types(fr.types[%d], %s, F::peers(comm));" % (decl, type_slot, f)
            type_slot += 1
        else:
            raise SystemExit("generate.py: %s: no Fortran view for parameter '%s' (kind %s); give the row no "
                             "semantics or teach generate.py the conversion" % (name, n, k))
    if arrays:
        o.append("  F::Frame& fr = F::frame();")
    o += [views[n] for k, c, n in params if n in views]
    o += [arrays[n] for k, c, n in params if n in arrays]
    args = [n for _, n in decls]
    comma_args = "".join(", " + a for a in args)
    o.append("  using S = prof::mpi::sem::%s;" % sem)
    o.append("  S::pre(call%s);" % comma_args)
    o.append("  MPI_Fint ierror_own = MPI_SUCCESS;  // mpi_f08's ierror is optional")
    o.append("  MPI_Fint* const ierr = ierror ? ierror : &ierror_own;")
    fwd = ", ".join(fargs + ["ierr"] + ["%s_len" % n for n in chars])
    o.append("  const int rc = S::call([&](auto&...) { real(%s); return static_cast<int>(*ierr); }%s);" % (fwd, comma_args))
    o.append("  *ierr = rc;  // where the semantics answer without the real call (MPI_Finalize)")
    o += after
    o.append("  S::post(call, rc%s);" % comma_args)
    o.append("}")
    return o


def fortran_source(rows, notes):
    o = []
    o.append("// Generated by adapters/mpi/generate.py from adapters/mpi/functions.txt. Do not edit.")
    o.append("// The Fortran bindings of Open MPI (mpif.h, use mpi, use mpi_f08): see adapters/mpi/fortran.hpp.")
    o.append('#include "adapters/mpi/fortran.hpp"')
    o.append('#include "adapters/mpi/semantics.hpp"')
    o.append("")
    o.append("#include <cstddef>")
    o.append("")
    o.append("#if defined(OPEN_MPI)")
    o.append("namespace {")
    o.append("namespace F = prof::mpi::fortran;")
    o.append("")
    exports = []
    for i, (row, (note, raw)) in enumerate(zip(rows, notes)):
        o += fortran_wrapper(i, row, note, raw)
        o.append("")
        name = row[4]
        sig, _, fret = fortran_signature(row, note, raw, "")
        lower = name.lower()
        symbols = [(s, 0) for s in (lower + "_", lower + "__", lower, name.upper())]
        if not note[1]:
            symbols.append((lower + "_f08_", 1))
        for sym, f08 in symbols:
            exports.append('PROF_MPI_API %s %s(%s) { %sfortran_%s<%d>(%s); }'
                           % (fret, sym, ", ".join(d for d, _ in sig) or "void", "return " if fret == "double" else "",
                              name, f08, ", ".join(a for _, a in sig)))
    o.append("}  // namespace")
    o.append("")
    o.append('extern "C" {')
    o += exports
    o.append('}  // extern "C"')
    o.append("#endif  // OPEN_MPI")
    o.append("")
    return "\n".join(o)


def main():
    src, out = sys.argv[1], sys.argv[2]
    rows, notes = [], []
    for lineno, line in enumerate(open(src), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        head, _, rest = line.partition("|")
        proto, _, fortran_note = rest.partition("|")
        fields = head.split()
        if len(fields) != 3 or not proto:
            raise SystemExit("%s:%d: expected 'group role semantics | prototype'" % (src, lineno))
        group, role, sem = fields
        if group not in GROUPS or role not in ROLES:
            raise SystemExit("%s:%d: unknown group '%s' or role '%s'" % (src, lineno, group, role))
        m = re.match(r"^\s*(int|double)\s+(MPI_\w+)\s*\((.*)\)\s*$", proto)
        if not m:
            raise SystemExit("%s:%d: cannot parse the prototype" % (src, lineno))
        ret, name, params = m.group(1), m.group(2), split_params(m.group(3))
        decls = [param_decl(p, i) for i, p in enumerate(params)]
        rows.append((group, role, "None" if sem == "-" else sem, ret, name, decls))
        notes.append((parse_fortran_note(src, lineno, fortran_note, [n for _, n in decls]), params))
    names = [r[4] for r in rows]
    if len(set(names)) != len(names):
        raise SystemExit("%s: a function is listed twice" % src)

    o = []
    o.append("// Generated by adapters/mpi/generate.py from adapters/mpi/functions.txt. Do not edit.")
    o.append('#include "adapters/mpi/semantics.hpp"')
    o.append("")
    o.append("namespace prof::mpi {")
    o.append("const FnInfo kFunctions[] = {")
    for group, role, sem, ret, name, decls in rows:
        o.append('    {"%s", config::kMpi%s, regions::Role::%s},' % (name, group.capitalize() if group != "p2p" else "P2p", ROLES[role]))
    o.append("};")
    o.append("const int kFunctionCount = %d;" % len(rows))
    o.append("}  // namespace prof::mpi")
    o.append("")
    for i, (group, role, sem, ret, name, decls) in enumerate(rows):
        params = ", ".join(d for d, _ in decls) or "void"
        args = ", ".join(n for _, n in decls)
        comma_args = (", " + args) if args else ""
        o.append('extern "C" PROF_MPI_API %s %s(%s) {' % (ret, name, params))
        o.append("  prof::mpi::Call call(%d);  // %s" % (i, name))
        o.append("  using S = prof::mpi::sem::%s;" % sem)
        o.append("  S::pre(call%s);" % comma_args)
        o.append("  const %s rc = S::call(&P%s%s);" % (ret, name, comma_args))
        o.append("  S::post(call, rc%s);" % comma_args)
        o.append("  return rc;")
        o.append("}")
        o.append("")
    with open(out, "w") as f:
        f.write("\n".join(o))
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w") as f:
            f.write(fortran_source(rows, notes))


if __name__ == "__main__":
    main()
