# As compute-sanitizer's target (in place of judge --exec-as): execve a static printer with this process's
# environment plus 47 variables: empty GRADING_PAD_<n>=, empty A<n>=, or non-empty GRADING_PAD_<n>=x.
import os, sys
env = dict(os.environ)
kind = sys.argv[1]
for n in range(47):
    env[{'pad': 'GRADING_PAD_%d', 'plain': 'A%d', 'nonempty': 'GRADING_PAD_%d'}[kind] % n] = 'x' if kind == 'nonempty' else ''
print('before execve:', len(env), 'variables', flush=True)
os.execve('/tmp/r16/probe/penv', ['penv'], env)
