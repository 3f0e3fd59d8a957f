"""PNG plots of a run (matplotlib, Agg backend; Debian's python3-matplotlib)."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {"Classic": ("tab:red", "-"), "Wheel": ("tab:green", "-"),
         "Asio": ("tab:blue", "--"), "TBB": ("tab:purple", "--"),
         "Condvar": ("tab:orange", "--"), "Libevent": ("tab:brown", "--"),
         "PingPong": ("grey", ":")}


def _items_per_second(row):
    return row.items_per_second


def _cpu_per_item(row):
    return row.counters.get("cpu_ns_per_item")


def _series(rows, scenario, select, x_of, also=(), metric=_items_per_second):
    series = {}
    for r in rows:
        if ((r.scenario == scenario and select(r)) or r.scenario in also) and metric(r):
            series.setdefault(r.impl, {})[x_of(r)] = metric(r)
    return series


def _draw(ax, series, title, xlabel, ylabel, logx_base=None):
    for impl, points in series.items():
        xs = sorted(points)
        color, ls = STYLE.get(impl, (None, "-"))
        ax.plot(xs, [points[x] for x in xs], marker="o", color=color, linestyle=ls, label=impl)
    if logx_base:
        ax.set_xscale("log", base=logx_base)
    ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_threads(rows, outdir, scenario, filename, ylabel, metric=_items_per_second):
    values = sorted({r.value for r in rows if r.scenario == scenario})
    if not values:
        return None
    fig, axes = plt.subplots(1, len(values), figsize=(6 * len(values), 4.5), squeeze=False)
    for ax, v in zip(axes[0], values):
        series = _series(rows, scenario, lambda r, v=v: r.value == v, lambda r: r.threads,
                         also=("PingPong",), metric=metric)
        title = scenario + ("" if not v else " (Tasks:%d)" % v)
        _draw(ax, series, title, "benchmark threads", ylabel, logx_base=2)
        ax.set_xticks([1, 2, 4, 8, 16], ["1", "2", "4", "8", "16"])
    return _save(fig, os.path.join(outdir, filename))


def plot_timeouts(rows, outdir):
    present = sorted({r.threads for r in rows if r.scenario == "TimeoutAddCancel"})
    threads = [t for t in present if t in (1, 4, 16)] or present[:1]
    if not threads:
        return None
    fig, axes = plt.subplots(1, len(threads), figsize=(6 * len(threads), 4.5), squeeze=False)
    for ax, t in zip(axes[0], threads):
        series = _series(rows, "TimeoutAddCancel", lambda r, t=t: r.threads == t,
                         lambda r: r.value)
        _draw(ax, series, "TimeoutAddCancel (threads:%d)" % t, "timeouts in flight",
              "re-arms/s", logx_base=10)
    return _save(fig, os.path.join(outdir, "timeout_add_cancel.png"))


def plot_all(rows, outdir):
    paths = [plot_threads(rows, outdir, "OneShotScheduleRun", "one_shot.png", "round trips/s"),
             plot_threads(rows, outdir, "LongLivedScheduleRun", "long_lived.png", "wakes/s"),
             plot_threads(rows, outdir, "OneShotScheduleRun", "one_shot_cpu.png",
                          "CPU ns per round trip (process)", metric=_cpu_per_item),
             plot_threads(rows, outdir, "LongLivedScheduleRun", "long_lived_cpu.png",
                          "CPU ns per wake (process)", metric=_cpu_per_item),
             plot_timeouts(rows, outdir)]
    return [p for p in paths if p]
