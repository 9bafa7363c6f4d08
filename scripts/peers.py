#!/usr/bin/env python3
"""torch.sum and cupy.sum of n int32 and float32, timed the way grid_layout_probe times (issue 31).

    python3 scripts/peers.py [--n 2^26 --n 2^30] [--runs 100] [--warmup 20] > peers.csv

Two methods, as the probe's:
  flushed       before each run, a read of a buffer 2 x the L2 size (so the input comes
                from DRAM, not from the cache the previous run left), then one CUDA event
                pair around the sum; 20 warm-ups, 100 timed: median, min, max.
  back-to-back  one batch of R = 100 sums to warm up, then 10 batches of R back to back
                with one event pair each: median, min, max of the per-sum time.
Each library sums int32 (torch.sum and cupy.sum return int64 for int32 input: the sum is
exact) and float32 (accumulated as the library does, in float32 for cupy, and checked
against the exact sum within a rounding bound). Values are small whole numbers from a
fixed seed (int 1..15, float 1 or 2), and every result is checked against the exact sum;
a failed check prints one line and exits 1. CSV columns as grid_layout_probe's; the layout
column names the call. Exits 0 with one line when neither torch nor cupy is installed.
"""
import argparse
import datetime
import statistics
import sys


def parse_count(text):
    if text.startswith("2^"):
        return 1 << int(text[2:])
    return int(text)


def peak_gbps(props_clock_khz, bus_bits):
    # As common/peak_bandwidth.h: DDR moves data on both clock edges.
    if not props_clock_khz or not bus_bits:
        return None
    return props_clock_khz * 1e3 * 2 * (bus_bits / 8) / 1e9


class Torch:
    name = "torch"

    def __init__(self):
        import torch
        self.t = torch
        self.device = torch.device("cuda")

    def info(self):
        p = self.t.cuda.get_device_properties(0)
        return p.name, getattr(p, "L2_cache_size", 50 << 20), "torch " + self.t.__version__ + ", CUDA " + str(self.t.version.cuda)

    def memory_attributes(self):
        return None, None

    def make(self, n, kind, seed):
        g = self.t.Generator(device="cuda").manual_seed(seed)
        if kind == "int":
            return self.t.randint(1, 16, (n,), dtype=self.t.int32, device=self.device, generator=g)
        return self.t.randint(1, 3, (n,), dtype=self.t.int32, device=self.device, generator=g).to(self.t.float32)

    def exact(self, x):
        return int(x.to(self.t.int64).sum().item())

    def flush_buffer(self, nbytes):
        return self.t.zeros(nbytes // 4, dtype=self.t.int32, device=self.device)

    def flush(self, buf):
        buf.max()  # reads every word: evicts the input from L2

    def event(self):
        return self.t.cuda.Event(enable_timing=True)

    def elapsed(self, a, b):
        b.synchronize()
        return a.elapsed_time(b)

    def sum(self, x):
        return self.t.sum(x)

    def value(self, r):
        return r.item()


class Cupy:
    name = "cupy"

    def __init__(self):
        import cupy
        self.cp = cupy

    def info(self):
        dev = self.cp.cuda.Device(0)
        props = self.cp.cuda.runtime.getDeviceProperties(0)
        return props["name"].decode(), props.get("l2CacheSize", 50 << 20), "cupy " + self.cp.__version__ + ", CUDA runtime " + str(self.cp.cuda.runtime.runtimeGetVersion())

    def memory_attributes(self):
        rt = self.cp.cuda.runtime
        try:
            return rt.deviceGetAttribute(rt.cudaDevAttrMemoryClockRate, 0), rt.deviceGetAttribute(rt.cudaDevAttrGlobalMemoryBusWidth, 0)
        except Exception:
            return None, None

    def make(self, n, kind, seed):
        rs = self.cp.random.RandomState(seed)
        if kind == "int":
            return rs.randint(1, 16, size=n, dtype=self.cp.int32)
        return rs.randint(1, 3, size=n, dtype=self.cp.int32).astype(self.cp.float32)

    def exact(self, x):
        return int(x.astype(self.cp.int64).sum().get())

    def flush_buffer(self, nbytes):
        return self.cp.zeros(nbytes // 4, dtype=self.cp.int32)

    def flush(self, buf):
        buf.max()

    def event(self):
        return self.cp.cuda.Event()

    def elapsed(self, a, b):
        b.synchronize()
        return self.cp.cuda.get_elapsed_time(a, b)

    def sum(self, x):
        return self.cp.sum(x)

    def value(self, r):
        return r.item()


def check(lib, kind, n, result, exact, runs_label):
    got = lib.value(result)
    if kind == "int":
        ok = int(got) == exact
    else:
        # float32 accumulation: pairwise or tree sums stay well within n * 2^-24 relative.
        ok = abs(float(got) - exact) <= max(1.0, exact * n * 2.0 ** -24 / 64)
    if not ok:
        print(f"peers.py: check failed: {lib.name}.sum {kind} n={n} ({runs_label}): {got}, expected {exact}", file=sys.stderr)
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", action="append", type=parse_count)
    ap.add_argument("--type", action="append", choices=["int", "float"])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--peak-gbps", type=float, help="peak to report percentages against (default: from cupy's memory attributes)")
    a = ap.parse_args()
    sizes = a.n or [1 << 26, 1 << 28, 1 << 30]
    kinds = a.type or ["int", "float"]

    libs = []
    for cls in (Torch, Cupy):
        try:
            libs.append(cls())
        except ImportError:
            pass
        except Exception as e:  # installed but unusable (no GPU, wrong CUDA): say so, go on
            print(f"peers.py: {cls.name} is installed but cannot run: {e}", file=sys.stderr)
    if not libs:
        print("peers.py: neither torch nor cupy is installed; nothing to time")
        return 0

    name, l2, _ = libs[0].info()
    clock = bus = None
    for lib in libs:
        c, b = lib.memory_attributes()
        if c:
            clock, bus = c, b
    peak = a.peak_gbps or peak_gbps(clock, bus)
    print(f"# peers.py on {name}")
    for lib in libs:
        print(f"# {lib.info()[2]}")
    print(f"# peak: {peak:.0f} GB/s from the memory clock and bus width" if peak else "# peak: unknown (pass --peak-gbps; torch does not report the memory clock)")
    print(f"# date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}")
    print(f"# flushed: {a.warmup} warm-ups, {a.runs} timed, L2 flushed (2 x {l2 >> 20} MiB read) before each; back-to-back: 1 + {a.batches} batches of {a.batch}")
    print("type,n,layout,method,blocks,threads,runs,median_ms,min_ms,max_ms,gbps,pct_peak,verified")
    for lib in libs:
        flush_buf = lib.flush_buffer(max(2 * l2, 8 << 20))
        for kind in kinds:
            for n in sizes:
                x = lib.make(n, kind, a.seed)
                exact = lib.exact(x)
                label = f"{lib.name}.sum"
                rows = []
                if a.runs > 0:
                    times = []
                    for i in range(1 + a.warmup + a.runs):
                        lib.flush(flush_buf)
                        s, e = lib.event(), lib.event()
                        s.record()
                        r = lib.sum(x)
                        e.record()
                        ms = lib.elapsed(s, e)
                        check(lib, kind, n, r, exact, "flushed")
                        if i >= 1 + a.warmup:
                            times.append(ms)
                    rows.append(("flushed", times))
                if a.batches > 0:
                    times = []
                    for b in range(1 + a.batches):
                        s, e = lib.event(), lib.event()
                        s.record()
                        for _ in range(a.batch):
                            r = lib.sum(x)
                        e.record()
                        ms = lib.elapsed(s, e)
                        check(lib, kind, n, r, exact, "back-to-back")
                        if b >= 1:
                            times.append(ms / a.batch)
                    rows.append(("back-to-back", times))
                for method, times in rows:
                    med = statistics.median(times)
                    gbps = n * 4 / (med * 1e-3) / 1e9
                    pct = f"{100 * gbps / peak:.1f}" if peak else ""
                    print(f"{kind},{n},{label},{method},,,{len(times)},{med:.5f},{min(times):.5f},{max(times):.5f},{gbps:.1f},{pct},yes", flush=True)
                del x
    return 0


if __name__ == "__main__":
    sys.exit(main())
