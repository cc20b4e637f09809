# SPDX-License-Identifier: MIT
"""What every section of the report shares: reading CSVs, formatting numbers, markdown tables,
verdicts, the run's bookkeeping (plan.csv, experiments.csv, allocators.csv) and plot styles.

One rule for every table: a cell that was not measured shows DASH ("—"), never 0 or 0.0 and never
an empty cell; tables wider than MAX_COLS columns are split into several (the leading label
columns repeated) so that each stays readable.
"""
import csv
import os

DASH = "—"
MAX_COLS = 8
# Cells that mean "nothing measured here", whatever a section wrote.
_UNMEASURED = {None, "", "n/a", "-", "nan", "None"}


def read_csv(path):
    """(header comment lines without '# ', rows as dicts) or (None, None) when absent."""
    if not os.path.exists(path):
        return None, None
    meta = []
    body = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                meta.append(line[1:].strip())
            else:
                body.append(line)
    return meta, list(csv.DictReader(body))


def num(x, default=None):
    """float of x, or default when x is empty or not a number."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return default


def fmt(x, nd=0):
    """x with nd decimals (0: an integer); DASH when x is not a number."""
    v = num(x)
    if v is None:
        return DASH
    return f"{v:.{nd}f}" if nd else f"{v:.0f}"


def fmt_int(x):
    """x as an integer with thousands separators; DASH when not a number."""
    v = num(x)
    return DASH if v is None else f"{v:,.0f}"


def to_int(x):
    """int of x (through float: "12.0" is 12), or None."""
    v = num(x)
    return None if v is None else int(v)


def fmt_sep(x, nd=0):
    """x with thousands separators and nd decimals; DASH when not a number."""
    v = num(x)
    return DASH if v is None else f"{v:,.{nd}f}"


def fmt_rate(x):
    """A rate: 1.23M, 45.6k, 789; DASH when not a number."""
    v = num(x)
    if v is None:
        return DASH
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def cell(x):
    """A table cell: DASH for what was not measured."""
    if x is None:
        return DASH
    s = str(x).strip()
    return DASH if s in _UNMEASURED else s


def verdict(ok):
    return "met" if ok else "**not met**"


NOISY = "noisy -- rerun on an idle machine"

# Series a plot shows, at most PLOT_SERIES: the ones the plot is about, then ours and the best
# peers in this order; the rest stay in the tables (each plot's caption says so).
PLOT_SERIES = 6
_PLOT_PRIORITY = ["tlsf", "tlsfq", "glibc", "jemalloc", "mimalloc", "wfc", "halffit", "buddy", "fma", "wf_hint",
                  "seglist", "bsd44", "tlsf32", "firstfit", "bestfit", "wf"]


def plot_series(names, must=()):
    """At most PLOT_SERIES of names: `must` first (those present), then by _PLOT_PRIORITY, then the
    rest in their order."""
    names = list(dict.fromkeys(names))
    out = [n for n in must if n in names]
    for n in _PLOT_PRIORITY + names:
        if len(out) >= PLOT_SERIES:
            break
        if n in names and n not in out:
            out.append(n)
    return out[:PLOT_SERIES]


def load_of(meta):
    """(1-minute load average, CPUs) from a CSV's "load average at start" line, or None."""
    for line in meta or []:
        if line.startswith("load average at start") and " on " in line:
            try:
                head, cpus = line.rsplit(" on ", 1)
                return float(head.split(":", 1)[1].split()[0]), int(cpus.split()[0])
            except (ValueError, IndexError):
                return None
    return None


def noisy(meta):
    """Why the timings of a CSV are not to be judged, or None: the machine was busier than its CPUs
    at the start (more runnable threads than CPUs: each timed run shared its CPU). The benchmark's
    own process counts one, so a quiet 2-CPU machine reads about 1."""
    lo = load_of(meta)
    if lo is not None and lo[0] > lo[1]:
        return f"{NOISY} (load {lo[0]:.2f} on {lo[1]} CPUs at the start)"
    return None


def timed_verdict(ok, meta):
    """A verdict that rests on a clock: `verdict(ok)`, or the noise mark when the run was loaded."""
    why = noisy(meta)
    return why if why else verdict(ok)


# Headers that only make sense after the column they follow ("malloc median", "p99", "max"):
# when a table is split, they are named after that column.
_GENERIC = {"p99", "p99.9", "p999", "max", "min", "mean", "median", "worst", "sd", "c_v", ".data", ".bss", ".text",
            "calls", "stride"}


def _full_headers(header):
    out = []
    prefix = ""
    for h in header:
        hs = str(h)
        if hs in _GENERIC and prefix:
            out.append(f"{prefix} {hs}")
        else:
            out.append(hs)
            words = hs.split(" ")
            prefix = " ".join(words[:-1]) if len(words) > 1 else ""
    return out


def _one_table(header, rows, align):
    out = ["| " + " | ".join(str(h) for h in header) + " |",
           "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    for r in rows:
        out.append("| " + " | ".join(cell(c) for c in r) + " |")
    return "\n".join(out)


def table(header, rows, align=None, max_cols=MAX_COLS, keys=None):
    """A markdown table. Wider than max_cols: split into tables that repeat the leading label
    columns (keys of them, default: the leading left-aligned ones, at most 3), generic headers
    ("p99", "max") named after the column they follow."""
    align = list(align or ["l"] + ["r"] * (len(header) - 1))
    rows = [list(r) for r in rows]
    if len(header) <= max_cols:
        return _one_table(header, rows, align)
    if keys is None:
        keys = 0
        while keys < min(3, len(header) - 1) and align[keys] == "l":
            keys += 1
        keys = max(keys, 1)
    full = _full_headers(header)
    rest = len(header) - keys
    parts_n = -(-rest // max(1, max_cols - keys))
    per = -(-rest // parts_n)  # balanced: 9 columns make 5 + 5 (keys repeated), not 8 + 2
    parts = []
    for start in range(keys, len(header), per):
        cols = list(range(keys)) + list(range(start, min(start + per, len(header))))
        parts.append(_one_table([full[c] if c >= keys else header[c] for c in cols],
                                [[r[c] if c < len(r) else None for c in cols] for r in rows],
                                [align[c] for c in cols]))
    return "\n\n".join(parts)


def meta_value(meta, key):
    for m in meta or []:
        if m.startswith(key + ":"):
            return m.split(":", 1)[1].strip()
    return None


# --- the run's bookkeeping -------------------------------------------------------------------------

class Run:
    """What rtbench and bench.sh say about the run in a results directory.

    plan.csv (step,experiment,scale): the experiments rtbench was to run; experiments.csv
    (experiment,status,scale,seconds): appended after each one, status complete|interrupted;
    allocators.csv (name,family,thread_safe,malloc_bound,free_bound,alignment,ours);
    run.csv (key,value: bench.sh's command, commit, dates, scale, status).
    Without plan.csv (old directories, fixtures) every CSV present counts as complete at scale
    "unknown". Without allocators.csv no allocator is known to be ours or of a family: nothing is
    guessed from names."""

    def __init__(self, d):
        self.d = d
        _, plan = read_csv(os.path.join(d, "plan.csv"))
        _, done = read_csv(os.path.join(d, "experiments.csv"))
        _, allocs = read_csv(os.path.join(d, "allocators.csv"))
        _, run = read_csv(os.path.join(d, "run.csv"))
        self.plan = None if plan is None else {r["experiment"]: r for r in plan}
        self.done = {r["experiment"]: r for r in done or []}
        self.allocs = {r["name"]: r for r in allocs or []}
        self.run = {r["key"]: r["value"] for r in run or []}
        self.scale = self.run.get("scale") or next((r.get("scale") for r in (plan or [])), None) or "unknown"

    def status(self, experiment, present=True):
        """('complete' | 'interrupted' | 'not run' | 'absent', scale) of one experiment."""
        if self.plan is None:
            return ("complete" if present else "absent"), "unknown"
        d = self.done.get(experiment)
        if d is not None and d.get("status") == "complete":
            return "complete", d.get("scale") or self.scale
        if experiment in self.plan:
            return "interrupted", self.plan[experiment].get("scale") or self.scale
        return "not run", self.scale

    def step_status(self, step, present):
        """The same for a bench.sh step (footprint, target) from run.csv."""
        if not self.run:
            return ("complete" if present else "absent"), "unknown"
        planned = self.run.get("steps_planned")
        if planned is not None and step not in planned.split():
            return "not run", self.scale
        if present:
            return "complete", self.scale
        steps = (self.run.get("steps_done") or "").split()
        if step in steps:
            return "absent", self.scale
        if self.run.get("status", "").startswith("partial") or self.run.get("status") == "running":
            return "interrupted", self.scale
        return "not run", self.scale

    def partial(self):
        """The reason this run is partial, or None."""
        st = self.run.get("status")
        if st and st != "complete":
            return st
        if self.plan is not None:
            missing = [e for e in self.plan if self.done.get(e, {}).get("status") != "complete"]
            if missing:
                return "rtbench did not complete: " + ", ".join(missing)
        return None

    def ours(self, name):
        return self.allocs.get(name, {}).get("ours") in ("1", "yes", "true")

    def family(self, name):
        return self.allocs.get(name, {}).get("family")


NOTE = {"interrupted": "interrupted — not measured in this run",
        "not run": "not run at this scale (./bench.sh --full)"}


# --- plots -------------------------------------------------------------------------------------------

# Ours: saturated colours, thick lines; peers: muted, thin. With ~20 allocators colour alone does
# not tell them apart, so line style and marker cycle with coprime periods (4, 7).
OUR_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
              "#bcbd22", "#4b0082", "#006400", "#b8860b", "#00008b", "#ff1493", "#2f4f4f", "#808000", "#ff00ff",
              "#8b0000"]
PEER_COLORS = ["#7f7f7f", "#a0522d", "#708090", "#9a8c73", "#5f7f5f", "#8f6f8f"]
LINESTYLES = ["-", (0, (6, 2)), (0, (2, 1.5)), (0, (6, 2, 1.5, 2))]
MARKERS = ["o", "s", "^", "v", "D", "x", "+"]


class Styler:
    """One style per allocator name, the same in every plot of a report."""

    def __init__(self, run=None):
        self.run = run
        self.assigned = {}
        self.n_ours = 0
        self.n_peers = 0

    def is_ours(self, name):
        return bool(self.run and self.run.ours(name))

    def __call__(self, name, i=None, markevery=None):
        if name in self.assigned:
            st = dict(self.assigned[name])
        else:
            if name == "noop":
                st = {"color": "black", "linestyle": ":", "linewidth": 1.0, "marker": None, "zorder": 1}
            elif self.is_ours(name) or not (self.run and self.run.allocs):
                k = self.n_ours
                self.n_ours += 1
                st = {"color": OUR_COLORS[k % len(OUR_COLORS)], "linestyle": LINESTYLES[k % len(LINESTYLES)],
                      "marker": MARKERS[k % len(MARKERS)], "linewidth": 2.2, "zorder": 3}
            else:
                k = self.n_peers
                self.n_peers += 1
                st = {"color": PEER_COLORS[k % len(PEER_COLORS)], "linestyle": LINESTYLES[(k + 1) % len(LINESTYLES)],
                      "marker": MARKERS[(k + 3) % len(MARKERS)], "linewidth": 1.0, "alpha": 0.8, "zorder": 2}
            st["markersize"] = 4
            self.assigned[name] = st
            st = dict(st)
        if st.get("marker") is not None:
            st["markevery"] = markevery or 0.1
        else:
            st.pop("marker", None)
        return st


def legend_outside(fig, ax_or_axes, fontsize=7):
    """One legend for the figure, right of the axes (never over a curve or a title)."""
    axes = ax_or_axes if isinstance(ax_or_axes, (list, tuple)) else [ax_or_axes]
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:
        ncol = 1 if len(labels) <= 16 else 2
        # matplotlib 3.6 (Debian 12) has no loc="outside ...": anchor right of the figure and let
        # save() crop with bbox_inches="tight".
        fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=fontsize, ncol=ncol,
                   frameon=False)


def save(fig, path, dpi=110):
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
