#!/usr/bin/env python3
"""Usage: host-restore.py BEFORE NOW (outputs of host-state.sh; node-restore.sh runs it)

Puts back the sysctls that differ from BEFORE (the kubelet sets vm.overcommit_memory, kernel.panic
and kernel.panic_on_oops; the bridge plugin net.ipv4.ip_forward) and removes the paths under the
directories host-state.sh watches that were not there BEFORE (the kubelet's /var/lib/kubelet and
/var/log/pods, containerd's /run/containerd, …). Everything else that differs is left for the
comparison to report.
"""
import os
import shutil
import sys


def sections(path):
    result, name = {}, None
    for line in open(path).read().splitlines():
        if line.startswith("== "):
            name = line[3:]
            result[name] = []
        elif name:
            result[name].append(line)
    return result


def sysctls(lines):
    return dict(line.split(" = ", 1) if " = " in line else (line.rstrip(" ="), "") for line in lines)


before, now = sections(sys.argv[1]), sections(sys.argv[2])
now_sysctls = sysctls(now["sysctl"])
for key, value in sysctls(before["sysctl"]).items():
    if key in now_sysctls and now_sysctls[key] != value:
        try:
            with open("/proc/sys/" + key.replace(".", "/"), "w") as f:
                f.write(value)
        except OSError as error:
            print(f"could not put back {key} = {value}: {error}", file=sys.stderr)

for path in sorted(set(now["paths"]) - set(before["paths"]), key=len):  # parents first
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)
