"""Write a benchmark scenario with N memory cgroups (issue 34: what a tree of cgroups costs the
engine), or the same workloads with none (`--flat`), to stdout.

N workloads of 24 MiB each (Zipf, alpha 0.9, 2 us of their own work between two accesses, 10 s)
on a 2 GiB host with 2 GiB of swap: together 1.2 times the RAM, so global reclaim walks the
whole tree (`shrink_node_memcgs`) all along. With cgroups: N/10 parents ("team<k>") of 10
leaves each ("job<i>"); every fourth leaf has memory.low = 16M, every tenth memory.max = 20M
(limit reclaim and protection on the paths as well). The PSI groups follow the tree.

    python benches/memcg-many.py 100 > /tmp/memcg-100.toml
    python benches/memcg-many.py 100 --flat > /tmp/memcg-100-flat.toml
    target/release/reclaimlab-bench --repeat 3 /tmp/memcg-100.toml /tmp/memcg-100-flat.toml
"""

from __future__ import annotations

import argparse


def scenario(n: int, flat: bool) -> str:
    out = [f'name = "memcg-{n}{"-flat" if flat else ""}"', "", "[sim]", "seed = 1", "",
           "[host]", 'ram = "2GiB"', "cpus = 2", "", "[swap]", 'size = "2GiB"', ""]
    if not flat:
        for t in range(max(1, n // 10)):
            out += ["[[cgroup]]", f'name = "team{t}"', ""]
        for i in range(n):
            out += ["[[cgroup]]", f'name = "job{i}"', f'parent = "team{min(i // 10, max(1, n // 10) - 1)}"']
            if i % 4 == 0:
                out.append('memory.low = "16M"')
            if i % 10 == 0:
                out.append('memory.max = "20M"')
            out.append("")
    for i in range(n):
        out += ["[[workload]]", f'name = "w{i}"', 'duration = "10s"']
        if not flat:
            out.append(f'cgroup = "job{i}"')
        out += ["[workload.anon]", 'size = "24MiB"', 'pattern = "zipf"', "zipf_alpha = 0.9",
                "passes = 100000", 'think = "2us"', ""]
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("n", type=int, help="cgroups (leaves) and workloads")
    p.add_argument("--flat", action="store_true", help="the same workloads without cgroups")
    a = p.parse_args()
    print(scenario(a.n, a.flat))


if __name__ == "__main__":
    main()
