#!/usr/bin/env python3
"""Usage: host-restore.py BEFORE (the node's host-before.txt; node-restore.sh runs this as its last step)

Puts back what the node's programs change on the machine outside their own directories, once they
have stopped, touching nothing that was there before the node started (another engine's rules, a
developer's sysctls):
- iptables and ip6tables: the kubelet's and kube-proxy's KUBE-* chains and the rules that jump to them;
- nftables: the chains and tables iptables-nft created for them, now empty, that BEFORE did not have;
- nfacct: the named packet counters kube-proxy made;
- sysctls that differ from BEFORE (the kubelet sets vm.overcommit_memory, kernel.panic and
  kernel.panic_on_oops; the bridge plugin net.ipv4.ip_forward);
- paths the programs hard-code (/var/lib/kubelet, /var/log/pods, /run/containerd, …) not in BEFORE.
What still differs afterwards is for the comparison (host-state.sh before and after) to report.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys


def sections(text):
    result, name = {}, None
    for line in text.splitlines():
        if line.startswith("== "):
            name = line[3:]
            result[name] = []
        elif name:
            result[name].append(line)
    return result


def run(*command):
    return subprocess.run(command, capture_output=True, text=True).stdout


def remove_kube_chains():
    for tool in ("iptables", "ip6tables"):
        for table in ("filter", "nat", "mangle", "raw", "security"):
            rules = run(f"{tool}-save", "-t", table).splitlines()
            chains = [line[1:].split()[0] for line in rules if line.startswith(":KUBE-")]
            for line in rules:
                chain = line.split()[1] if line.startswith("-A ") else ""
                if chain and not chain.startswith("KUBE-") and re.search(r" -[jg] KUBE-", line):
                    subprocess.run([tool, "-w", "-t", table, "-D", *shlex.split(line)[1:]], check=False)
            for flag in ("-F", "-X"):  # emptied first: KUBE chains jump to each other
                for chain in chains:
                    subprocess.run([tool, "-w", "-t", table, flag, chain], check=False)


def remove_new_nft_leftovers(before_lines):
    before, table = set(), None
    for line in before_lines:
        if m := re.match(r"table (\S+) (\S+) \{", line):
            table = (m[1], m[2])
            before.add(table)
        elif (m := re.match(r"\s+chain (\S+) \{", line)) and table:
            before.add((*table, m[1]))
    ruleset = json.loads(run("nft", "-j", "list", "ruleset") or '{"nftables": []}')["nftables"]
    rules = {(r["rule"]["family"], r["rule"]["table"], r["rule"]["chain"]) for r in ruleset if "rule" in r}
    chains = [(c["chain"]["family"], c["chain"]["table"], c["chain"]["name"]) for c in ruleset if "chain" in c]
    for chain in chains:
        if chain not in before and chain not in rules:
            subprocess.run(["nft", "delete", "chain", *chain], check=False)
    for family, name in [(t["table"]["family"], t["table"]["name"]) for t in ruleset if "table" in t]:
        if (family, name) not in before and not any(c[:2] == (family, name) for c in chains if c in before or c in rules):
            subprocess.run(["nft", "delete", "table", family, name], check=False)


def remove_new_nfacct_counters(before_lines):
    for name in re.findall(r"= (\S+);", run("nfacct", "list")):
        if name not in before_lines:
            subprocess.run(["nfacct", "del", name], check=False)


def put_back_sysctls(before_lines, now_lines):
    def parse(lines):
        return dict(line.split(" = ", 1) if " = " in line else (line.rstrip(" ="), "") for line in lines)

    now = parse(now_lines)
    for key, value in parse(before_lines).items():
        if key in now and now[key] != value:
            try:
                with open("/proc/sys/" + key.replace(".", "/"), "w") as f:
                    f.write(value)
            except OSError as error:
                print(f"could not put back {key} = {value}: {error}", file=sys.stderr)


def remove_new_paths(before_lines, now_lines):
    for path in sorted(set(now_lines) - set(before_lines), key=len):  # parents first
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)


here = os.path.dirname(os.path.abspath(__file__))
before = sections(open(sys.argv[1]).read())
remove_kube_chains()
if shutil.which("nfacct"):
    remove_new_nfacct_counters(before.get("nfacct", []))
if shutil.which("nft"):
    remove_new_nft_leftovers(before.get("nftables", []))
now = sections(run("bash", os.path.join(here, "host-state.sh")))
put_back_sysctls(before["sysctl"], now["sysctl"])
remove_new_paths(before["paths"], now["paths"])
