"""OneFlow 0.3's internal path of flow.distribute (0.3-era layer code imports
`oneflow.python.framework.distribute as distribute_util`)."""
from oneflow.distribute import (  # noqa: F401
    AutoDistribute, BroadcastDistribute, Distribute, SplitDistribute, assert_is_valid_distribute,
    auto, broadcast, split,
)
