"""Unit tests of the SLURM side of ``measure --executor slurm`` without a cluster: the parsers of
``sinfo`` / ``scontrol`` text (hand-written outputs in SLURM 22.05's formats), the resources a
job asks for (flags over ``[runner.slurm]`` over the partition's defaults), the one-line error of
a request no node holds, and the watcher (``repro.runner.slurm.wait``) on a fake queue: a job
that pends for a reason no wait resolves cancels the run, a cancelled job is reported as such.
The same on a real one-node SLURM: tests/cluster."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from repro.base.config_check import Slurm
from repro.base.errors import ConfigError
from repro.runner.jobs import Job
from repro.runner.slurm import Watch, wait
from repro.runner.slurm_resources import (
    Resources,
    never_runs,
    parse_gpus,
    parse_partitions,
    parse_time_min,
    requested,
    resolve,
)

pytestmark = pytest.mark.unit

# this machine's one-node cluster (tests/cluster/slurm-up.sh), as SLURM 22.05 prints it
SINFO_ONE = "debug*|vm|2|24105|(null)|idle\n"
SCONTROL_ONE = (
    "PartitionName=debug AllowGroups=ALL Default=YES DefaultTime=NONE MaxNodes=UNLIMITED "
    "MaxTime=UNLIMITED MaxCPUsPerNode=UNLIMITED Nodes=vm State=UP TotalCPUs=2 "
    "MaxMemPerNode=UNLIMITED\n"
)
# a GPU cluster: a default CPU partition and a GPU partition of two node sizes, with limits
SINFO_GPU = (
    "cpu*|c1|32|128000|(null)|idle\n"
    "gpu|g1|64|512000|gpu:a100:4(S:0-1)|mixed\n"
    "gpu|g2|32|256000|gpu:a100:2|idle\n"
)
SCONTROL_GPU = (
    "PartitionName=cpu Default=YES DefaultTime=01:00:00 MaxTime=1-00:00:00 State=UP\n"
    "PartitionName=gpu Default=NO DefaultTime=NONE MaxTime=2-00:00:00 MaxCPUsPerNode=48 "
    "MaxMemPerNode=400000 State=UP\n"
)


def _resolve(sinfo=SINFO_ONE, scontrol=SCONTROL_ONE, device="cpu", **asked):
    return resolve(requested(asked), parse_partitions(sinfo, scontrol), device)


@pytest.mark.parametrize(
    "text, minutes",
    [
        ("30", 30),
        ("1:30", 2),
        ("2:00:00", 120),
        ("1-00:00:00", 1440),
        ("1-2", 1560),
        ("2-03:04", 3064),
        ("0:0:59", 1),
        ("UNLIMITED", None),
        ("infinite", None),
        ("NONE", None),
    ],
)
def test_slurm_times_in_whole_minutes_rounded_up(text, minutes):
    assert parse_time_min(text) == minutes


def test_a_time_slurm_does_not_write_is_one_line():
    with pytest.raises(
        ConfigError, match=r"SLURM time '1h': expected \[days-\]hours:minutes:seconds"
    ):
        parse_time_min("1h")


@pytest.mark.parametrize(
    "gres, gpus",
    [
        ("(null)", 0),
        ("gpu:4", 4),
        ("gpu:a100:8(S:0-1)", 8),
        ("gpu:a100:2,gpu:v100:2", 4),
        ("shard:8", 0),
        ("gpu:a100:2(S:0),shard:16", 2),
        ("gpu", 1),
    ],
)
def test_gpus_of_a_node_from_gres(gres, gpus):
    assert parse_gpus(gres) == gpus


def test_partitions_join_sinfo_nodes_and_scontrol_limits():
    cpu, gpu = parse_partitions(SINFO_GPU, SCONTROL_GPU)
    assert (cpu.name, cpu.default, cpu.max_time_min, cpu.default_time_min) == (
        "cpu",
        True,
        1440,
        60,
    )
    assert (
        gpu.name,
        gpu.default,
        gpu.max_time_min,
        gpu.max_cpus_per_node,
        gpu.max_mem_per_node_mb,
    ) == ("gpu", False, 2880, 48, 400000)
    assert [(n.name, n.cpus, n.mem_mb, n.gpus) for n in gpu.nodes] == [
        ("g1", 64, 512000, 4),
        ("g2", 32, 256000, 2),
    ]


def test_defaults_are_what_the_partition_offers():
    # the one-node cluster: all of its 2 CPUs and their memory, no GPU, no time limit set -> one day
    assert _resolve() == Resources("debug", 2, 24105, 0, 1440, "cpu")
    # the default partition's DefaultTime (60 min) and a node's share capped at 8
    # CPUs: 128000 * 8 // 32 MB
    assert _resolve(SINFO_GPU, SCONTROL_GPU) == Resources("cpu", 8, 32000, 0, 60, "cpu")
    # the GPU partition on CUDA: 1 GPU and the CPUs that go with it on the smaller node (32 / 2 =
    # 16, capped at 8), their memory on the node with the least per CPU (256000 * 8 // 32), and no
    # default time -> one day, within MaxTime
    assert _resolve(SINFO_GPU, SCONTROL_GPU, "cuda", partition="gpu") == Resources(
        "gpu", 8, 64000, 1, 1440, "cuda"
    )
    # auto on a GPU partition: CUDA
    assert _resolve(SINFO_GPU, SCONTROL_GPU, None, partition="gpu").device == "cuda"


def test_flags_override_the_table_which_overrides_the_partition():
    table = Slurm(partition="gpu", cpus_per_task=4, mem_gb=10.0, gpus=2, timeout_min=90)
    req = requested({"cpus_per_task": 16, "gpus": None}, table, "/x/repro.toml")
    assert (req.partition, req.cpus_per_task, req.mem_gb, req.gpus, req.timeout_min) == (
        "gpu",
        16,
        10.0,
        2,
        90,
    )
    assert req.said("cpus_per_task") == "--slurm-cpus-per-task 16"
    assert req.said("gpus") == "[runner.slurm] gpus = 2 (/x/repro.toml)"
    res = resolve(req, parse_partitions(SINFO_GPU, SCONTROL_GPU), "cuda")
    assert res == Resources("gpu", 16, 10240, 2, 90, "cuda")
    assert res.submitit_parameters() == {
        "slurm_partition": "gpu",
        "cpus_per_task": 16,
        "mem_gb": 10.0,
        "timeout_min": 90,
        "nodes": 1,
        "tasks_per_node": 1,
        "gpus_per_node": 2,
    }
    assert (
        "gpus_per_node" not in _resolve().submitit_parameters()
    )  # a cluster without GRES refuses even 0


@pytest.mark.parametrize(
    "asked, message",
    [
        (
            {"cpus_per_task": 64},
            "--slurm-cpus-per-task 64 asks for 64 CPUs per job, but its largest node has "
            "2 (sinfo); "
            "ask for at most 2 CPUs",
        ),
        (
            {"mem_gb": 100.0},
            "--slurm-mem-gb 100 asks for 100.0 GB per job, but its largest node has 23.5 "
            "GB (24105 MB, "
            "sinfo); ask for at most 23.5 GB",
        ),
        (
            {"gpus": 1},
            "--slurm-gpus 1 asks for 1 GPU per job, but no node of it has a GPU (sinfo "
            "GRES); ask for at "
            "most 0 GPUs",
        ),
    ],
)
def test_a_request_no_node_holds_is_one_line_naming_the_resource(asked, message):
    with pytest.raises(ConfigError) as err:
        _resolve(device=None, **asked)
    assert (
        str(err.value)
        == f"cannot be scheduled on partition 'debug': {message} (or another partition)"
    )


def test_partition_limits_are_checked_too():
    with pytest.raises(
        ConfigError,
        match=r"--slurm-cpus-per-task 56 asks for 56 CPUs per job, but its "
        r"MaxCPUsPerNode is 48 \(scontrol show partition\)",
    ):
        _resolve(SINFO_GPU, SCONTROL_GPU, "cuda", partition="gpu", cpus_per_task=56)
    with pytest.raises(
        ConfigError,
        match=r"--timeout-min 1500 asks for 1500 min per job, but its MaxTime is "
        r"1440 min",
    ):
        _resolve(SINFO_GPU, SCONTROL_GPU, timeout_min=1500)
    with pytest.raises(
        ConfigError, match=r"--device cuda asks for 1 GPU per job, but no node of it has a GPU"
    ):
        _resolve(SINFO_GPU, SCONTROL_GPU, "cuda")
    with pytest.raises(
        ConfigError,
        match=(
            r"--slurm-partition gpus: no such partition; did you mean 'gpu'\? \(sinfo lists: "
            r"cpu, gpu\)"
        ),
    ):
        _resolve(SINFO_GPU, SCONTROL_GPU, partition="gpus")


def test_a_toml_request_is_named_by_its_key_and_file():
    req = requested({}, Slurm(cpus_per_task=64), "/x/repro.toml")
    with pytest.raises(
        ConfigError, match=r"\[runner.slurm\] cpus_per_task = 64 \(/x/repro.toml\) asks for 64 CPUs"
    ):
        resolve(req, parse_partitions(SINFO_ONE, SCONTROL_ONE), "cpu")


@pytest.mark.parametrize(
    "reason, never",
    [
        ("PartitionConfig", True),
        ("PartitionTimeLimit", True),
        ("QOSMaxCpuPerJobLimit", True),
        ("AssocMaxJobsLimit", False),
        ("Resources", False),
        ("Priority", False),
        ("ReqNodeNotAvail", False),
        ("BeginTime", False),
        ("Dependency", False),
    ],
)
def test_pending_reasons_that_no_wait_resolves(reason, never):
    assert never_runs(reason) is never


# --------------------------------------------------------------------- the watcher on a fake queue
class FakeQueue:
    """squeue answers from a script of states per poll; the clock advances one second a pause."""

    def __init__(self, polls):
        self.polls, self.cancelled, self.now = list(polls), [], 0.0

    def watch(self):
        return Watch(
            states=self.states,
            cancel=self.cancelled.extend,
            final_state=lambda _id: None,
            pause=self.pause,
            clock=lambda: self.now,
        )

    def states(self, ids):
        return self.polls.pop(0) if len(self.polls) > 1 else self.polls[0]

    def pause(self, seconds):
        self.now += seconds


def _futures(tmp_path, ids, done=()):
    out = []
    for i in ids:
        result = tmp_path / f"{i}_0_result.pkl"
        if i in done:
            result.write_text("")
        out.append(
            SimpleNamespace(
                job_id=i,
                paths=SimpleNamespace(result_pickle=result),
                result=lambda i=i: {
                    "model": "m",
                    "measurement": i,
                    "ran": True,
                    "busy": False,
                    "status": "ok",
                },
            )
        )
    return out


JOBS = [Job("tiny_random_a", "imagenet"), Job("tiny_random_a", "shape_bias")]


def test_a_job_pending_for_partition_config_cancels_the_run_at_once(tmp_path):
    queue = FakeQueue([{"7": ("RUNNING", "None"), "8": ("PENDING", "PartitionConfig")}])
    with pytest.raises(
        ConfigError,
        match=r"SLURM job 8 \(.*shape_bias.*\) pends with reason PartitionConfig, which "
        r"no wait resolves.*cancelled the 2 job\(s\) of this run still queued",
    ):
        wait(JOBS, _futures(tmp_path, ["7", "8"]), watch=queue.watch())
    assert queue.cancelled == ["7", "8"]
    assert queue.now == 0.0  # on the first poll, not after a wait


def test_a_job_pending_for_resources_is_waited_for_and_a_cancelled_one_reported(tmp_path):
    futures = _futures(tmp_path, ["7", "8"])
    queue = FakeQueue(
        [
            {"7": ("PENDING", "Resources"), "8": ("PENDING", "Priority")},
            {"7": ("RUNNING", "None"), "8": ("CANCELLED", "None")},
        ]
    )
    orig = queue.pause

    def pause(seconds):  # job 7 writes its result once it runs
        orig(seconds)
        if not queue.polls[1:]:
            futures[0].paths.result_pickle.write_text("")

    queue.pause = pause
    results = wait(JOBS, futures, watch=queue.watch())
    assert results[0]["status"] == "ok" and results[0]["ran"]
    assert (results[1]["slurm_state"], results[1]["job_id"], results[1]["ran"]) == (
        "CANCELLED",
        "8",
        False,
    )
    assert queue.cancelled == []


def test_a_job_that_left_the_queue_without_a_result_gets_a_grace_then_is_reported(tmp_path):
    from repro.runner.slurm import RESULT_GRACE_S

    queue = FakeQueue([{}])  # not listed at all (finished and purged), no accounting
    results = wait(JOBS[:1], _futures(tmp_path, ["7"]), watch=queue.watch())
    assert results[0]["slurm_state"] == "left the queue"
    assert (
        queue.now >= RESULT_GRACE_S
    )  # not declared lost before the grace a shared file system needs
