"""Running one job as several processes.

- `python -m oneflow.distributed.launch --nproc_per_node N script.py ...` starts the processes of
  one machine (launch.py);
- `process_identity.discover()` tells a process its rank, the world size and rank 0's address,
  whichever launcher (ours, torchrun, mpirun, srun) started it.

Pure Python: nothing here needs the C++ extension.
"""
from oneflow.distributed.process_identity import ProcessIdentity, discover  # noqa: F401
