# python3 run-under-sanitizer.py SANITIZER WORKER GDBSCRIPT: the worker as compute-sanitizer's target,
# fd 3 one end of a socketpair (the judge's end stays silent); gdb attaches to the worker once it waits.
import os, socket, subprocess, sys, time
san, worker, script = sys.argv[1:4]
a, b = socket.socketpair()
os.dup2(b.fileno(), 3); os.set_inheritable(3, True)
env = {"HOME": "/tmp", "LC_ALL": "C", "PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/tmp/cudastub"}
p = subprocess.Popen([san, "--tool", "racecheck", "--target-processes", "all", worker, "--socket", "3"],
                     env=env, pass_fds=(3,))
os.close(3); b.close()
pid = None
for _ in range(200):
    time.sleep(0.1)
    out = subprocess.run(["pgrep", "-f", "-x", worker + " --socket 3"], capture_output=True, text=True).stdout.split()
    if out:
        pid = out[0]; break
print("worker pid", pid, flush=True)
time.sleep(1.0)
environ = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
print("the worker's environment (/proc/PID/environ, names only):", [e.split(b"=")[0].decode() for e in environ if e], flush=True)
print("its LD_PRELOAD:", [e.decode() for e in environ if e.startswith(b"LD_PRELOAD=")], flush=True)
subprocess.run(["gdb", "-q", "-batch", "-p", pid, "-x", script], env={"HOME": "/tmp", "PATH": "/usr/bin:/bin"})
a.close()
p.wait(timeout=120)
print("compute-sanitizer exit", p.returncode, flush=True)
