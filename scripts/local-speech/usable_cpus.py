"""The CPUs the local speech server may use, to size its thread pools (docs/voice.md, the speech server).

os.cpu_count() counts the machine's CPUs. A server held to fewer (taskset, a container's cpuset) or
given a CPU quota (`docker run --cpus`, a Kubernetes CPU limit) that sized its pools by it would run
more model calls at once than it has CPUs, each of them slower, instead of queueing the rest.
"""

import math
import os
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")
SELF_CGROUP = Path("/proc/self/cgroup")


def usable_cpus(cgroup: Path = CGROUP, self_cgroup: Path = SELF_CGROUP) -> int:
    """The CPUs of this process's affinity, at most its cgroup's CPU quota (rounded up); at least 1."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = cgroup_quota(cgroup, self_cgroup)
    return max(1, cpus if quota is None else min(cpus, quota))


def cgroup_quota(cgroup: Path, self_cgroup: Path) -> int | None:
    """The CPU quota in whole CPUs, rounded up: the least of cgroup v2's cpu.max from this process's
    cgroup up to the root (a container sees its own as the root), else cgroup v1's cfs quota; None
    when there is none."""
    quotas = [q for q in (v2_quota(limit) for limit in v2_limits(cgroup, self_cgroup)) if q is not None]
    if quotas:
        return min(quotas)
    try:
        quota = int((cgroup / "cpu" / "cpu.cfs_quota_us").read_text())
        period = int((cgroup / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return math.ceil(quota / period) if quota > 0 and period > 0 else None


def v2_limits(cgroup: Path, self_cgroup: Path) -> list[Path]:
    """cpu.max of this process's cgroup (/proc/self/cgroup's "0::/path") and of each above it."""
    own = Path("/")
    try:
        for line in self_cgroup.read_text().splitlines():
            if line.startswith("0::"):
                own = Path(line[3:] or "/")
    except OSError:
        pass
    return [cgroup / folder.relative_to("/") / "cpu.max" for folder in (own, *own.parents)]


def v2_quota(limit: Path) -> int | None:
    """One cpu.max ("150000 100000": 1.5 CPUs, 2 rounded up; "max 100000": none)."""
    try:
        quota, period = limit.read_text().split()
        return None if quota == "max" or int(period) <= 0 else math.ceil(int(quota) / int(period))
    except (OSError, ValueError):
        return None
