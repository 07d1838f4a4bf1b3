"""Reports the world torchrun's elastic agents formed, each time they form
one, and keeps it busy until any process finds /tmp/done in its pod.

Every second the processes all-reduce a flag: when a node leaves, the
all-reduce fails and the agents form a new world from the nodes left; when
one joins, the agents restart their processes into a larger world.
"""

import datetime
import os
import socket
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
os.write(1, f"host={socket.gethostname()} rank={rank} world={world} restart={restart}\n".encode())
while True:
    done = torch.tensor([1.0 if os.path.exists("/tmp/done") else 0.0])
    dist.all_reduce(done)
    if done.item() > 0:
        break
    time.sleep(1)
dist.destroy_process_group()
