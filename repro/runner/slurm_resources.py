"""Runner, SLURM resources: what each ``measure --executor slurm`` job asks for.

The request comes from the ``--slurm-*`` flags, else ``[runner.slurm]`` in repro.toml, else
what the partition offers: the cluster's default partition; one GPU per job on CUDA, none on the
CPU; a node's share of CPUs (its CPUs, or its CPUs per GPU times the GPUs asked for), at most
:data:`DEFAULT_MAX_CPUS`; the memory of those CPUs (the node's memory per CPU); the partition's
default time limit, else :data:`DEFAULT_TIMEOUT_MIN` (at most its ``MaxTime``). The partition is
read from ``sinfo`` (its nodes: CPUs, memory, GPUs) and ``scontrol show partition`` (its limits).

Whether the partition can ever give it: a request that no node of the partition can hold (more CPUs,
memory or GPUs than its largest node, a time above ``MaxTime``) is a ConfigError naming the resource
before anything is submitted: SLURM would otherwise keep such a job pending forever (reason
``PartitionConfig``). The parsers are pure functions of the commands' text, tested without a cluster
(``tests/unit/test_slurm_resources.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from repro.base.errors import ConfigError
from repro.base.schema import did_you_mean

#: a job's CPUs when not asked for: the node's share, at most this many (decode workers)
DEFAULT_MAX_CPUS = 8
#: a job's time limit when not asked for and the partition sets no default (at most its MaxTime)
DEFAULT_TIMEOUT_MIN = 24 * 60

#: the ``sinfo`` call whose output :func:`parse_sinfo` reads: one line per (node, partition)
SINFO = ("sinfo", "--noheader", "--Node", "--format=%P|%N|%c|%m|%G|%T")
#: the ``scontrol`` call whose output :func:`parse_partitions` reads: one line per partition
SCONTROL = ("scontrol", "--oneliner", "show", "partition")

FIELDS = ("partition", "cpus_per_task", "mem_gb", "gpus", "timeout_min")
FLAGS = {
    "partition": "--slurm-partition",
    "cpus_per_task": "--slurm-cpus-per-task",
    "mem_gb": "--slurm-mem-gb",
    "gpus": "--slurm-gpus",
    "timeout_min": "--timeout-min",
}


@dataclass(frozen=True)
class Node:
    name: str
    cpus: int
    mem_mb: int  # sinfo's MB: MiB, as SLURM's --mem counts them
    gpus: int
    state: str = ""

    def line(self) -> str:
        return f"{self.name}: {self.cpus} CPUs, {gb(self.mem_mb)}, {self.gpus} GPUs"


@dataclass(frozen=True)
class Partition:
    name: str
    nodes: tuple[Node, ...]
    default: bool = False
    max_time_min: int | None = None  # None: unlimited
    default_time_min: int | None = None
    max_cpus_per_node: int | None = None
    max_mem_per_node_mb: int | None = None
    state: str = "UP"


@dataclass(frozen=True)
class Requested:
    """What the user asked for (None: the partition's default) and where each value came from."""

    partition: str | None = None
    cpus_per_task: int | None = None
    mem_gb: float | None = None
    gpus: int | None = None
    timeout_min: int | None = None
    origin: Mapping[str, str] = field(
        default_factory=dict
    )  # field -> "--slurm-gpus 2", "[runner.slurm] gpus = 2 (file)"

    def said(self, name: str) -> str:
        return self.origin.get(name) or f"{FLAGS[name]} {_text(getattr(self, name))}"


@dataclass(frozen=True)
class Resources:
    """What each job of the run asks SLURM for."""

    partition: str
    cpus_per_task: int
    mem_mb: int
    gpus: int
    timeout_min: int
    device: str = "cpu"  # the jobs' torch device

    def submitit_parameters(self) -> dict[str, Any]:
        """The parameters of ``submitit.AutoExecutor(cluster="slurm").update_parameters``."""
        out = {
            "slurm_partition": self.partition,
            "cpus_per_task": self.cpus_per_task,
            "mem_gb": self.mem_mb / 1024,  # submitit writes --mem=<MB>MB, exactly these MiB
            "timeout_min": self.timeout_min,
            "nodes": 1,
            "tasks_per_node": 1,
        }
        if self.gpus:  # no --gpus-per-node at all otherwise (a cluster without GRES refuses even 0)
            out["gpus_per_node"] = self.gpus
        return out

    def line(self) -> str:
        return (
            f"partition {self.partition}: {self.cpus_per_task} CPUs, {gb(self.mem_mb)}, "
            f"{self.gpus} GPUs, {self.timeout_min} min per job, device {self.device}"
        )


def gb(mem_mb: float) -> str:
    return f"{mem_mb / 1024:.1f} GB"


def _text(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def requested(flags: Mapping[str, Any], table: Any = None, origin: str = "repro.toml") -> Requested:
    """The request: each flag given (not None), else the ``[runner.slurm]`` key, else None.

    The key is read from ``table``, a ``repro.base.config_check.Slurm``.
    """
    values: dict[str, Any] = {}
    said: dict[str, str] = {}
    for name in FIELDS:
        if flags.get(name) is not None:
            values[name] = flags[name]
            said[name] = f"{FLAGS[name]} {_text(flags[name])}"
        elif table is not None and getattr(table, name, None) is not None:
            values[name] = getattr(table, name)
            said[name] = f"[runner.slurm] {name} = {values[name]!r} ({origin})"
    return Requested(**values, origin=said)


# --------------------------------------------------------------------------- parsing
def parse_time_min(text: str) -> int | None:
    """A SLURM time (``MaxTime``, ``DefaultTime``) in whole minutes, rounded up.

    None for ``UNLIMITED``/``infinite``/``NONE``. Formats: ``M``, ``M:S``, ``H:M:S``, ``D-H``,
    ``D-H:M``, ``D-H:M:S``.
    """
    text = text.strip()
    if text.upper() in ("UNLIMITED", "INFINITE", "NONE", "N/A", ""):
        return None
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", text)
    if not m:
        raise ConfigError(
            f"SLURM time {text!r}: expected [days-]hours:minutes:seconds or minutes (scontrol)"
        )
    days, a, b, c = (int(g) if g is not None else None for g in m.groups())
    if days is not None:  # D-H, D-H:M, D-H:M:S
        h, mi, s = a, b or 0, c or 0
    elif c is not None:  # H:M:S
        days, h, mi, s = 0, a, b, c
    elif b is not None:  # M:S
        days, h, mi, s = 0, 0, a, b
    else:  # M
        days, h, mi, s = 0, 0, a, 0
    seconds = ((days * 24 + (h or 0)) * 60 + (mi or 0)) * 60 + (s or 0)
    return -(-seconds // 60)


def parse_gpus(gres: str) -> int:
    """The GPUs of a node from sinfo's GRES (``%G``).

    E.g. ``gpu:4``, ``gpu:a100:8(S:0-1)``, ``gpu:a100:2,gpu:v100:2``; ``(null)``: none. Other
    resources (``shard:8``) are not GPUs.
    """
    total = 0
    for part in re.split(r",(?![^()]*\))", gres.strip()):
        part = re.sub(r"\(.*\)$", "", part.strip())
        if not part.startswith("gpu"):
            continue
        count = part.split(":")[-1]
        total += int(count) if count.isdigit() else 1
    return total


def _int(text: str, what: str) -> int:
    digits = re.match(r"\d+", text.strip())
    if not digits:
        raise ConfigError(f"sinfo: {what} {text!r}: expected a number (sinfo --format=%c/%m)")
    return int(digits.group())


def parse_sinfo(text: str) -> dict[str, tuple[bool, list[Node]]]:
    """Partition -> (is the default partition, its nodes), from ``sinfo``'s output.

    The output of ``sinfo --noheader --Node --format=%P|%N|%c|%m|%G|%T``.
    """
    out: dict[str, tuple[bool, list[Node]]] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split("|")
        if len(parts) != 6:
            raise ConfigError(
                f"sinfo: line {line!r}: expected partition|node|cpus|memory|gres|state"
            )
        part, name, cpus, mem, gres, state = (p.strip() for p in parts)
        default = part.endswith("*")
        part = part.rstrip("*")
        node = Node(name, _int(cpus, "CPUs"), _int(mem, "memory"), parse_gpus(gres), state)
        was_default, nodes = out.get(part, (False, []))
        nodes.append(node)
        out[part] = (was_default or default, nodes)
    return out


def _limit(text: str | None) -> int | None:
    if text is None or text.strip().upper() in ("UNLIMITED", "NONE", "N/A", "0", ""):
        return None
    digits = re.match(r"\d+", text.strip())
    return int(digits.group()) if digits else None


def parse_partitions(sinfo_text: str, scontrol_text: str = "") -> list[Partition]:
    """The partitions: nodes from ``sinfo`` (:data:`SINFO`), limits from ``scontrol``.

    The limits are read from ``scontrol --oneliner show partition`` (:data:`SCONTROL`; ``MaxTime``,
    ``DefaultTime``, ``MaxCPUsPerNode``, ``MaxMemPerNode``, ``State``).
    """
    limits: dict[str, dict[str, str]] = {}
    for line in scontrol_text.splitlines():
        pairs = dict(tok.split("=", 1) for tok in line.split() if "=" in tok)
        if "PartitionName" in pairs:
            limits[pairs["PartitionName"]] = pairs
    out = []
    for name, (default, nodes) in parse_sinfo(sinfo_text).items():
        lim = limits.get(name, {})
        out.append(
            Partition(
                name=name,
                nodes=tuple(nodes),
                default=default or lim.get("Default") == "YES",
                max_time_min=parse_time_min(lim.get("MaxTime", "UNLIMITED")),
                default_time_min=parse_time_min(lim.get("DefaultTime", "NONE")),
                max_cpus_per_node=_limit(lim.get("MaxCPUsPerNode")),
                max_mem_per_node_mb=_limit(lim.get("MaxMemPerNode")),
                state=lim.get("State", "UP"),
            )
        )
    return out


# --------------------------------------------------------------------------- resolving
def pick_partition(req: Requested, partitions: Sequence[Partition]) -> Partition:
    if not partitions:
        raise ConfigError(
            "sinfo lists no partition: --executor slurm needs a cluster with at least one "
            "partition (is slurmctld up? tests/cluster/slurm-up.sh starts a one-node one)"
        )
    names = [p.name for p in partitions]
    if req.partition is not None:
        for p in partitions:
            if p.name == req.partition:
                return p

        raise ConfigError(
            f"{req.said('partition')}: no such partition{did_you_mean(req.partition, names)} "
            f"(sinfo lists: {', '.join(names)})"
        )
    defaults = [p for p in partitions if p.default]
    if len(defaults) == 1:
        return defaults[0]
    if len(partitions) == 1:
        return partitions[0]
    raise ConfigError(
        f"the cluster has no default partition: pass --slurm-partition NAME or set [runner.slurm] "
        f"partition (sinfo lists: {', '.join(names)})"
    )


def _unschedulable(
    req: Requested, name: str, asked: str, part: Partition, limit: str, at_most: str
) -> ConfigError:
    return ConfigError(
        f"cannot be scheduled on partition {part.name!r}: {req.said(name)} asks for {asked} per "
        f"job, but {limit}; ask for at most {at_most} (or another partition)"
    )


def resolve(
    req: Requested, partitions: Sequence[Partition], device: str | None = None
) -> Resources:
    """The resources of each job (see the module docstring).

    A ConfigError naming the resource when no node of the partition can ever hold the request.
    ``device`` None (or ``auto``): CUDA when the jobs get GPUs (asked for, or by default when the
    partition's nodes have them).
    """
    part = pick_partition(req, partitions)
    nodes = list(part.nodes)
    if not nodes:
        raise ConfigError(f"partition {part.name!r} has no nodes (sinfo)")
    most_gpus = max(n.gpus for n in nodes)
    if device in (None, "auto"):
        device = "cuda" if (req.gpus if req.gpus is not None else most_gpus) > 0 else "cpu"
    cuda = str(device).startswith("cuda")
    gpus = req.gpus if req.gpus is not None else (1 if cuda else 0)
    if cuda and gpus == 0:
        raise ConfigError(
            f"--device {device} with {req.said('gpus')}: the jobs would see no GPU; ask for one "
            "(--slurm-gpus 1) or use --device cpu"
        )
    if gpus > most_gpus:
        if req.gpus is None:
            raise ConfigError(
                f"cannot be scheduled on partition {part.name!r}: --device {device} asks for 1 GPU "
                "per job, but no node of it has a GPU (sinfo GRES); pick a GPU partition "
                "(--slurm-partition) or --device cpu"
            )
        raise _unschedulable(
            req,
            "gpus",
            f"{gpus} GPU{'' if gpus == 1 else 's'}",
            part,
            f"its largest node has {most_gpus} (sinfo GRES)"
            if most_gpus
            else "no node of it has a GPU (sinfo GRES)",
            f"{most_gpus} GPUs",
        )
    fit = [n for n in nodes if n.gpus >= gpus]
    with_gpus = " with those GPUs" if gpus else ""

    def share(n: Node) -> int:  # the CPUs that go with the GPUs asked for
        return n.cpus if gpus == 0 or n.gpus == 0 else max(1, n.cpus * gpus // n.gpus)

    cpu_cap = part.max_cpus_per_node
    if req.cpus_per_task is not None:
        cpus = req.cpus_per_task
        most = max(n.cpus for n in fit)
        if cpus > most:
            raise _unschedulable(
                req,
                "cpus_per_task",
                f"{cpus} CPUs",
                part,
                f"its largest node{with_gpus} has {most} (sinfo)",
                f"{most} CPUs",
            )
        if cpu_cap is not None and cpus > cpu_cap:
            raise _unschedulable(
                req,
                "cpus_per_task",
                f"{cpus} CPUs",
                part,
                f"its MaxCPUsPerNode is {cpu_cap} (scontrol show partition)",
                f"{cpu_cap} CPUs",
            )
        fit = [n for n in fit if n.cpus >= cpus]
    else:
        cpus = min(DEFAULT_MAX_CPUS, min(share(n) for n in fit), cpu_cap or DEFAULT_MAX_CPUS)
    mem_cap = part.max_mem_per_node_mb
    if req.mem_gb is not None:
        mem_mb = int(round(req.mem_gb * 1024))
        most_mb = max(n.mem_mb for n in fit)
        if mem_mb > most_mb:
            which = (
                f" with {cpus} CPUs"
                if req.cpus_per_task is not None and len(fit) < len(nodes)
                else with_gpus
            )
            raise _unschedulable(
                req,
                "mem_gb",
                gb(mem_mb),
                part,
                f"its largest node{which} has {gb(most_mb)} ({most_mb} MB, sinfo)",
                gb(most_mb),
            )
        if mem_cap is not None and mem_mb > mem_cap:
            raise _unschedulable(
                req,
                "mem_gb",
                gb(mem_mb),
                part,
                f"its MaxMemPerNode is {gb(mem_cap)} (scontrol show partition)",
                gb(mem_cap),
            )
    else:
        mem_mb = min(n.mem_mb * cpus // n.cpus for n in fit)
        if mem_cap is not None:
            mem_mb = min(mem_mb, mem_cap)
    if req.timeout_min is not None:
        minutes = req.timeout_min
        if part.max_time_min is not None and minutes > part.max_time_min:
            raise _unschedulable(
                req,
                "timeout_min",
                f"{minutes} min",
                part,
                f"its MaxTime is {part.max_time_min} min (scontrol show partition)",
                f"{part.max_time_min} min",
            )
    else:
        minutes = part.default_time_min or DEFAULT_TIMEOUT_MIN
        if part.max_time_min is not None:
            minutes = min(minutes, part.max_time_min)
    return Resources(part.name, cpus, mem_mb, gpus, minutes, str(device))


#: pending reasons of a job that no wait will start (its request exceeds what the partition,
#: the account or the QOS allows); any other pending reason (Resources, Priority, a node down)
#: passes
NEVER_RUNS = re.compile(
    r"PartitionConfig|PartitionTimeLimit|BadConstraints|InvalidAccount|InvalidQOS"
    r"|(QOS|Assoc)Max\w*PerJob\w*|(QOS|Assoc)Min\w*"
)


def never_runs(reason: str) -> bool:
    """True for a pending reason that means the job will never start (:data:`NEVER_RUNS`)."""
    return bool(NEVER_RUNS.fullmatch(reason.strip()))
