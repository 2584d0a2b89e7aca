"""oneflow.distributed.process_identity.discover on fake environments: each launcher's variables,
the order in which they are tried, Slurm node lists, and the errors for inconsistent values."""
import pytest

from oneflow.distributed.process_identity import ProcessIdentity, discover, first_host

pytestmark = pytest.mark.timeout(60)


def identity(rank, world_size, local_rank, master_addr, master_port, source):
    return ProcessIdentity(rank=rank, world_size=world_size, local_rank=local_rank,
                           master_addr=master_addr, master_port=master_port, source=source)


LAUNCHER = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
            "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "1234"}
OPEN_MPI = {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8",
            "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "8"}
PMI = {"PMI_RANK": "2", "PMI_SIZE": "3", "MPI_LOCALRANKID": "2"}
SLURM = {"SLURM_PROCID": "6", "SLURM_NTASKS": "8", "SLURM_LOCALID": "2",
         "SLURM_JOB_NODELIST": "gpu[07-08]", "SLURM_NODELIST": "other"}


def test_single_process():
    assert discover({}) == identity(0, 1, 0, "127.0.0.1", 29500, "single process")


def test_launcher_variables():
    assert discover(LAUNCHER) == identity(3, 4, 1, "10.0.0.1", 1234, "launcher (RANK, WORLD_SIZE)")


def test_launcher_defaults():
    found = discover({"RANK": "1", "WORLD_SIZE": "2"})
    # Without LOCAL_RANK the job is taken to run on one machine.
    assert found == identity(1, 2, 1, "127.0.0.1", 29500, "launcher (RANK, WORLD_SIZE)")


def test_open_mpi():
    assert discover(OPEN_MPI) == identity(5, 8, 1, "127.0.0.1", 29500, "Open MPI")


def test_open_mpi_on_several_machines_needs_master_addr():
    several = dict(OPEN_MPI, OMPI_COMM_WORLD_LOCAL_SIZE="4")
    with pytest.raises(ValueError, match="set MASTER_ADDR"):
        discover(several)
    found = discover(dict(several, MASTER_ADDR="node0", MASTER_PORT="4000"))
    assert (found.master_addr, found.master_port, found.rank) == ("node0", 4000, 5)


def test_pmi():
    assert discover(PMI) == identity(2, 3, 2, "127.0.0.1", 29500, "MPICH/Intel MPI (PMI)")
    assert discover({"PMI_RANK": "1", "PMI_SIZE": "2"}).local_rank == 1


def test_slurm():
    assert discover(SLURM) == identity(6, 8, 2, "gpu07", 29500, "Slurm")
    without_job_nodelist = {k: v for k, v in SLURM.items() if k != "SLURM_JOB_NODELIST"}
    assert discover(without_job_nodelist).master_addr == "other"
    assert discover(dict(SLURM, MASTER_ADDR="head", MASTER_PORT="7")).master_addr == "head"


def test_slurm_without_node_list():
    with pytest.raises(ValueError, match="SLURM_JOB_NODELIST.*MASTER_ADDR"):
        discover({"SLURM_PROCID": "0", "SLURM_NTASKS": "2"})


def test_sources_are_tried_in_order():
    everything = {**SLURM, **PMI, **OPEN_MPI, **LAUNCHER}
    assert discover(everything).source == "launcher (RANK, WORLD_SIZE)"
    del everything["RANK"]
    assert discover(everything).source == "Open MPI"
    del everything["OMPI_COMM_WORLD_RANK"]
    assert discover(everything).source == "MPICH/Intel MPI (PMI)"
    del everything["PMI_RANK"]
    assert discover(everything).source == "Slurm"


@pytest.mark.parametrize("nodelist, host", [
    ("node[01-04]", "node01"),
    ("a,b", "a"),
    ("single", "single"),
    ("node[3,5-7]", "node3"),
    ("gpu[10-11],cpu[1-2]", "gpu10"),
    ("rack[2-3]-node[001-004]", "rack2-node001"),
    (" host.example.org ", "host.example.org"),
])
def test_first_host(nodelist, host):
    assert first_host(nodelist) == host


@pytest.mark.parametrize("nodelist", ["node[a-b]", "node[01-04", "", "[]"])
def test_first_host_rejects_what_it_cannot_read(nodelist):
    with pytest.raises(ValueError, match="SLURM_JOB_NODELIST"):
        first_host(nodelist)


@pytest.mark.parametrize("environ, message", [
    ({"RANK": "x", "WORLD_SIZE": "2"}, "RANK='x' is not an integer"),
    ({"RANK": "1.5", "WORLD_SIZE": "2"}, "RANK='1.5' is not an integer"),
    ({"RANK": "-1", "WORLD_SIZE": "2"}, "RANK='-1' must not be negative"),
    ({"RANK": "2", "WORLD_SIZE": "2"}, "RANK='2' must be less than WORLD_SIZE='2'"),
    ({"RANK": "0", "WORLD_SIZE": "0"}, "WORLD_SIZE='0' must be at least 1"),
    ({"RANK": "0"}, "RANK is set .* but WORLD_SIZE is not"),
    ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "2"}, "LOCAL_RANK='2' must be less than"),
    ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_PORT": "0"}, "MASTER_PORT='0' must be a TCP port"),
    ({"MASTER_PORT": "http"}, "MASTER_PORT='http' is not an integer"),
    ({"OMPI_COMM_WORLD_RANK": "4", "OMPI_COMM_WORLD_SIZE": "4"},
     "OMPI_COMM_WORLD_RANK='4' must be less than OMPI_COMM_WORLD_SIZE='4'"),
    ({"PMI_RANK": "0", "PMI_SIZE": "two"}, "PMI_SIZE='two' is not an integer"),
    ({"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "-3", "SLURM_NODELIST": "a"},
     "SLURM_LOCALID='-3' must not be negative"),
])
def test_inconsistent_values_name_the_variable(environ, message):
    with pytest.raises(ValueError, match=message):
        discover(environ)
