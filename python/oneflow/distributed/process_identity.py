"""Who this process is in a multi-process job: its rank, the world size, its rank on this
machine, and where rank 0 listens (the rendezvous address).

The values come from the environment that the process was started in, whichever launcher that
was. `discover` tries, in order:

1. RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT, set by
   `python -m oneflow.distributed.launch`, PyTorch's launcher and torchrun;
2. Open MPI's mpirun: OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK / _LOCAL_SIZE;
3. MPICH's and Intel MPI's PMI: PMI_RANK / PMI_SIZE (local rank from MPI_LOCALRANKID);
4. Slurm's srun: SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID, rank 0's machine being the first
   host of SLURM_JOB_NODELIST (or SLURM_NODELIST);
5. none of these: a single process (rank 0 of 1).

MASTER_ADDR and MASTER_PORT, when set, override the address and port for every source.
Pure Python: the launcher and the C++ environment layer both use it without a build.
"""
import dataclasses
import os
import re
from typing import Mapping, Optional

DEFAULT_MASTER_ADDR = "127.0.0.1"
DEFAULT_MASTER_PORT = 29500

SOURCE_LAUNCHER = "launcher (RANK, WORLD_SIZE)"
SOURCE_OPEN_MPI = "Open MPI"
SOURCE_PMI = "MPICH/Intel MPI (PMI)"
SOURCE_SLURM = "Slurm"
SOURCE_SINGLE_PROCESS = "single process"


@dataclasses.dataclass(frozen=True)
class ProcessIdentity:
    """This process's place in the job. `rank` is in [0, world_size); `local_rank` numbers the
    processes of one machine (it picks the device); `source` says which launcher's variables
    these values came from (one of the SOURCE_* strings)."""

    rank: int
    world_size: int
    local_rank: int
    master_addr: str
    master_port: int
    source: str


def discover(environ: Mapping[str, str] = os.environ) -> ProcessIdentity:
    """The identity described by `environ` (see the module docstring for the order of sources).
    Raises ValueError naming the variable when a value is not an integer, is negative, or does
    not fit the others (a rank not below the world size, a rank set without a world size)."""
    for find in (_from_launcher, _from_open_mpi, _from_pmi, _from_slurm):
        identity = find(environ)
        if identity is not None:
            return identity
    return ProcessIdentity(
        rank=0,
        world_size=1,
        local_rank=0,
        master_addr=environ.get("MASTER_ADDR") or DEFAULT_MASTER_ADDR,
        master_port=_master_port(environ),
        source=SOURCE_SINGLE_PROCESS,
    )


def _from_launcher(environ):
    # LOCAL_RANK is optional (PyTorch's env:// rendezvous does not need it); without it the job
    # is taken to run on one machine, so the local rank is the rank.
    return _from_variables(environ, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                           SOURCE_LAUNCHER)


def _from_open_mpi(environ):
    return _from_variables(environ, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                           "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
                           SOURCE_OPEN_MPI)


def _from_pmi(environ):
    # MPICH's Hydra and Intel MPI export the local rank as MPI_LOCALRANKID.
    return _from_variables(environ, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
                           SOURCE_PMI)


def _from_slurm(environ):
    if "SLURM_PROCID" not in environ:
        return None
    master_addr = environ.get("MASTER_ADDR")
    if not master_addr:
        for name in ("SLURM_JOB_NODELIST", "SLURM_NODELIST"):
            if environ.get(name):
                master_addr = first_host(environ[name], name)
                break
        else:
            raise ValueError("SLURM_PROCID is set but neither SLURM_JOB_NODELIST nor "
                             "SLURM_NODELIST is: cannot tell which machine runs rank 0; "
                             "set MASTER_ADDR")
    return _from_variables(environ, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", None,
                           SOURCE_SLURM, master_addr=master_addr)


def _from_variables(environ, rank_name, size_name, local_rank_name, local_size_name, source,
                    master_addr=None) -> Optional[ProcessIdentity]:
    """The identity from one launcher's variables, or None when `rank_name` is not set."""
    if rank_name not in environ:
        return None
    if size_name not in environ:
        raise ValueError("%s is set (%r) but %s is not"
                         % (rank_name, environ[rank_name], size_name))
    rank = _integer(environ, rank_name)
    world_size = _integer(environ, size_name)
    if world_size < 1:
        raise ValueError("%s=%r must be at least 1" % (size_name, environ[size_name]))
    if rank >= world_size:
        raise ValueError("%s=%r must be less than %s=%r"
                         % (rank_name, environ[rank_name], size_name, environ[size_name]))
    local_rank = rank
    if local_rank_name in environ:
        local_rank = _integer(environ, local_rank_name)
        if local_rank >= world_size:
            raise ValueError("%s=%r must be less than %s=%r"
                             % (local_rank_name, environ[local_rank_name], size_name,
                                environ[size_name]))
    local_size = world_size
    if local_size_name is not None and local_size_name in environ:
        local_size = _integer(environ, local_size_name)
        if local_rank >= local_size:
            raise ValueError("%s=%r must be less than %s=%r"
                             % (local_rank_name, environ.get(local_rank_name), local_size_name,
                                environ[local_size_name]))
    if master_addr is None:
        master_addr = environ.get("MASTER_ADDR")
        if not master_addr:
            if local_size < world_size:
                # Processes on other machines cannot reach rank 0 at 127.0.0.1.
                raise ValueError("%s=%r processes run on several machines (%s=%r): set "
                                 "MASTER_ADDR to the address of the machine running rank 0"
                                 % (size_name, environ[size_name], local_size_name,
                                    environ[local_size_name]))
            master_addr = DEFAULT_MASTER_ADDR
    return ProcessIdentity(rank=rank, world_size=world_size, local_rank=local_rank,
                           master_addr=master_addr, master_port=_master_port(environ),
                           source=source)


def _integer(environ, name) -> int:
    """environ[name] as a non-negative integer, or ValueError naming the variable."""
    text = environ[name]
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError("%s=%r is not an integer" % (name, text)) from None
    if value < 0:
        raise ValueError("%s=%r must not be negative" % (name, text))
    return value


def _master_port(environ) -> int:
    if "MASTER_PORT" not in environ:
        return DEFAULT_MASTER_PORT
    port = _integer(environ, "MASTER_PORT")
    if not 1 <= port <= 65535:
        raise ValueError("MASTER_PORT=%r must be a TCP port in 1..65535 (0, 'any free port', "
                         "cannot work: every process must know the port in advance)"
                         % environ["MASTER_PORT"])
    return port


_BRACKET = re.compile(r"\[([^\]]*)\]")


def first_host(nodelist: str, name: str = "SLURM_JOB_NODELIST") -> str:
    """The first host of a Slurm node list: "node[01-04,07]" -> "node01", "a,b" -> "a",
    "rack[1-2]-gpu[3-4]" -> "rack1-gpu3". `name` is the variable named in a ValueError."""
    text = nodelist.strip()
    # The first host is the first comma-separated item outside brackets, with each bracketed
    # range replaced by its first number (kept as written: "01" stays zero-padded).
    depth = 0
    end = len(text)
    for index, character in enumerate(text):
        if character == "[":
            depth += 1
        elif character == "]":
            depth -= 1
        elif character == "," and depth == 0:
            end = index
            break
    item = text[:end]

    def first_number(match):
        first = re.split(r"[,-]", match.group(1), maxsplit=1)[0].strip()
        if not first.isdigit():
            raise ValueError("%s=%r: cannot read the host range [%s]"
                             % (name, nodelist, match.group(1)))
        return first

    host = _BRACKET.sub(first_number, item)
    if not host or depth != 0 or "[" in host or "]" in host:
        raise ValueError("%s=%r is not a Slurm node list such as 'node[01-04]' or 'a,b'"
                         % (name, nodelist))
    return host
