# python3 gdb-in-sanitizer-env.py ENV0 WORKER GDBSCRIPT: gdb runs the worker in the environment that
# compute-sanitizer gave its target (ENV0: NUL-separated, written by a static target), with
# LD_LIBRARY_PATH's front and LD_PRELOAD's libraries moved to a folder that does not exist
# (the real collection library crashes against this host's stub libcuda; the loader then
# ignores the preload and the variable's text is unchanged but for the folder).
import subprocess, sys
env0, worker, script = sys.argv[1:4]
env = {}
for item in open(env0, "rb").read().split(b"\0"):
    if item:
        k, _, v = item.decode().partition("=")
        env[k] = v.replace("/tmp/r6san/y/nvidia/cu13/compute-sanitizer", "/nonexistent/compute-sanitizer")
env["LD_LIBRARY_PATH"] = "/tmp/cudastub"
print("[launcher] the inferior's environment names:", sorted(env), flush=True)
print("[launcher] LD_PRELOAD=" + env.get("LD_PRELOAD", ""), flush=True)
subprocess.run(["gdb", "-q", "-batch", "-x", script, "--args", worker, "--socket", "3"], env=env)
