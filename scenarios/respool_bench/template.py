"""Templating of the column commands (columns.json): {placeholder}
expansion of strings and argv templates (a list placeholder spliced in as
whole arguments), executables looked up, and the generated files (a
relay's or a tunnel's config, a resolver list) written from templates.
Pure but for write_files and resolve_exe.
"""

import os
import re
import shlex
import shutil

PH = re.compile(r"\{([a-z][a-z0-9_]*)\}")


class TemplateError(Exception):
    pass


def subst_str(s, ctx):
    def rep(m):
        k = m.group(1)
        if k not in ctx:
            raise TemplateError("unknown placeholder {%s} in %r" % (k, s))
        v = ctx[k]
        if isinstance(v, list):
            raise TemplateError("list placeholder {%s} must be a whole "
                                "argument" % k)
        return str(v)
    return PH.sub(rep, s)


def subst_argv(tmpl, ctx, depth=0):
    """Expands an argv template (a list, or a string split like a shell
    would): placeholders are replaced; an element that is exactly a list
    placeholder is spliced in (and expanded in turn)."""
    if isinstance(tmpl, str):
        tmpl = shlex.split(tmpl)
    if depth > 5:
        raise TemplateError("placeholders nest too deep")
    out = []
    for el in tmpl:
        m = PH.fullmatch(el)
        if m and isinstance(ctx.get(m.group(1)), list):
            out.extend(subst_argv(ctx[m.group(1)], ctx, depth + 1))
        else:
            out.append(subst_str(el, ctx))
    return out


def resolve_exe(argv0):
    if os.sep in argv0:
        return argv0 if os.access(argv0, os.X_OK) else None
    return shutil.which(argv0)


def write_files(files, ctx, resolvers, wd):
    """Writes generated files (config of a relay or a tunnel) into wd:
    each is {"lines": [...], "per_resolver": "line with {addr} {ip} {port}
    {name} {index}"}; per-resolver lines follow the fixed ones unless the
    fixed lines hold a line that is exactly "{per_resolver}"."""
    for fname, spec in (files or {}).items():
        per = []
        if spec.get("per_resolver"):
            for i, r in enumerate(resolvers):
                c2 = dict(ctx)
                ip, _, port = r["udp"].rpartition(":")
                c2.update({"addr": r["udp"], "name": r["name"], "ip": ip,
                           "port": port, "index": i})
                per.append(subst_str(spec["per_resolver"], c2))
        lines = []
        placed = False
        for l in spec.get("lines", []):
            if l == "{per_resolver}":
                lines.extend(per)
                placed = True
            else:
                lines.append(subst_str(l, ctx))
        if not placed:
            lines.extend(per)
        path = os.path.join(wd, subst_str(fname, ctx))
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
