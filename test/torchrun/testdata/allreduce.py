"""Sums rank + 1 over every process of the job with gloo, and says so.

Started by torchrun, it reads the variables torchrun sets for it; started on
its own, the ones training-operator's contract sets for the pod. In an
elastic job it keeps the group busy until every node the job may have has
joined: the agents restart it each time one does.
"""

import os
import socket
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
total = torch.tensor([float(rank + 1)])
dist.all_reduce(total)
# One write a line: the processes of one pod share its output, and print's
# text and newline, written apart, interleave with another process's.
os.write(1, f"host={socket.gethostname()} rank={rank} world={world} sum={total.item():g}\n".encode())

_, elastic, most = os.environ.get("PET_NNODES", "").partition(":")
if elastic and world < int(most):
    time.sleep(600)
    sys.exit(1)
dist.destroy_process_group()
