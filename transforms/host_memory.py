"""How many bytes this process can still allocate: the smallest of three limits.

- the system's free memory (Linux's ``MemAvailable``: free memory plus caches it can drop);
- the room left under the process's address-space limit (``RLIMIT_AS``, as ``ulimit -v`` sets it),
  which counts every mapping the process has, not only the memory it touched;
- the room left in its control group (cgroup v2 ``memory.max`` less ``memory.current``, or v1
  ``memory.limit_in_bytes`` less ``memory.usage_in_bytes``, at each level up to the root), where a
  container or a systemd unit sets one; reclaimable page cache is counted as free.

Checking against only the first lets a file that fits the machine kill a process that a limit
holds to less (``MemoryError`` or the kernel's OOM killer).
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import resource
except ImportError:  # Windows: no address-space limit to read
    resource = None

_CGROUP_ROOT = Path("/sys/fs/cgroup")
_NO_LIMIT = 2**62
"""cgroup v1 writes 'no limit' as a huge number; anything above this is taken as none."""


def available_memory() -> int | None:
    """Bytes a new allocation can take now, or None where nothing says."""
    limits = [
        room
        for room in (system_available(), address_space_room(), cgroup_room())
        if room is not None
    ]
    return max(0, min(limits)) if limits else None


def system_available() -> int | None:
    """Linux's ``MemAvailable``, else ``os.sysconf``'s free pages."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def address_space_room() -> int | None:
    """``RLIMIT_AS`` less the address space already mapped (``VmSize``); None without a limit."""
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    mapped = _status_bytes("VmSize:")
    return None if mapped is None else soft - mapped


def cgroup_room() -> int | None:
    """The least room left at any level of this process's memory control group; None if unlimited."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    rooms = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # cgroup v2
            rooms += _rooms(_CGROUP_ROOT, path, "memory.max", "memory.current", "inactive_file")
        elif "memory" in controllers.split(","):
            rooms += _rooms(
                _CGROUP_ROOT / "memory",
                path,
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
                "total_inactive_file",
            )
    return min(rooms) if rooms else None


def _rooms(mount: Path, path: str, limit_name: str, usage_name: str, cache_key: str) -> list[int]:
    """``limit - (usage - reclaimable cache)`` of the group at ``path`` and each of its parents."""
    rooms = []
    folder = mount / path.lstrip("/")
    while True:
        limit = _read_number(folder / limit_name)
        if limit is not None and limit < _NO_LIMIT:
            usage = _read_number(folder / usage_name) or 0
            rooms.append(limit - usage + _stat_value(folder / "memory.stat", cache_key))
        if folder == mount or mount not in folder.parents:
            return rooms
        folder = folder.parent


def _read_number(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None  # cgroup v2 writes 'max' for no limit


def _stat_value(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key and value.isdigit():
                return int(value)
    except OSError:
        pass
    return 0


def _status_bytes(key: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None
