"""The table's data: where the scenarios and the real tunnels are, the
JSON files loaded, a column merged over its tunnel's defaults and relay
(columns.json), a setup's physical limit for a column (setups.json), and
whether a column can run here (its executables built or installed) or is
n/a, with the reason.
"""

import json
import os
import subprocess

from respool_bench.template import (TemplateError, resolve_exe, subst_argv,
                                    subst_str)

# scenarios/ (setups.json, columns.json, gates.json) and the repository.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)
# Where the real dnstt and MasterDnsVPN are looked for when neither
# --real-tunnels nor RP_REAL_TUNNELS names a folder (bin/, dnstt/ and
# masterdnsvpn/ inside, as ../shared/real-tunnels/README.md describes).
DEFAULT_REAL_TUNNELS = os.path.normpath(
    os.path.join(ROOT, "..", "shared", "real-tunnels"))


def load_json(path):
    with open(path) as f:
        return json.load(f)


def column_def(cols_data, col):
    """The column merged over its tunnel's defaults (and relay)."""
    tun = cols_data["tunnels"].get(col.get("tunnel"), {})
    d = dict(tun)
    d.update(col)
    d.setdefault("kind", col.get("tunnel", "generic"))
    if d.get("relay"):
        rel = cols_data.get("relays", {}).get(d["relay"])
        if rel is None:
            raise TemplateError("column %s: unknown relay %s" %
                                (col["name"], d["relay"]))
        r = dict(rel)
        r.update(d.get("relay_override", {}))
        d["relay_def"] = r
    return d


def physical_limit_kbps(setup, col):
    qps = setup.get("answered_qps")
    pb = col.get("payload_bytes")
    if not setup.get("rate_limited") or not qps or not pb:
        return None
    return qps * pb * 8 / 1000.0


def check_available(cd, ctx_static):
    """Returns None when the column can run, else a reason (n/a)."""
    ctx = dict(ctx_static)
    # Dummy values: only the executables matter here.
    for k in ("server_port", "client_port", "aux_port", "relay_port",
              "relay_addr", "resolver_first", "upload_bytes",
              "resolver_first_ip", "resolver_first_port", "resolvers_csv",
              "resolvers_space", "resolvers_file", "bytes", "seconds",
              "serve_bytes", "workdir", "server_addr", "round", "setup",
              "client_limit"):
        ctx.setdefault(k, "0")
    ctx.setdefault("transfer", [])
    ctx.setdefault("mode_args", [])
    ctx.setdefault("resolvers_all_args", [])
    ctx["kind"] = cd.get("kind", "")
    ctx["column"] = cd["name"]
    if cd.get("real") and "real_tunnels" not in ctx:
        return ("the real tunnels were not found (looked in %s; give "
                "--real-tunnels DIR or set RP_REAL_TUNNELS)" %
                DEFAULT_REAL_TUNNELS)
    need = [("server", cd.get("server")), ("client", cd.get("client"))]
    if cd.get("relay_def"):
        need.append(("relay", cd["relay_def"].get("cmd")))
    for what, tmpl in need:
        if not tmpl:
            return "no %s command" % what
        try:
            argv = subst_argv(tmpl, ctx)
        except TemplateError as e:
            return str(e)
        if not argv or resolve_exe(argv[0]) is None:
            return "%s %s not built/installed" % (
                what, os.path.basename(argv[0]) if argv else "?")
    for exe in cd.get("requires", []):
        try:
            path = subst_str(exe, ctx)
        except TemplateError as e:
            return str(e)
        if resolve_exe(path) is None:
            return "%s missing" % path
    words = cd.get("requires_help")
    if words:
        argv = subst_argv(cd["client"], ctx)
        try:
            h = subprocess.run([argv[0], "--help"], capture_output=True,
                               timeout=5, stdin=subprocess.DEVNULL)
            text = (h.stdout + h.stderr).decode("utf-8", "replace")
        except (OSError, subprocess.TimeoutExpired):
            text = ""
        for w in words:
            if w not in text:
                return "client has no %s yet" % w
    return None
